//! The `qsweep` command line: a thin layer over the library modules.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use qsweep::run::{Interrupted, PointsFailed};
use qsweep::spec::{SpecError, SweepArgs};
use qsweep::UsageError;

mod commands;

#[derive(Parser)]
#[command(
    name = "qsweep",
    version,
    about = "GPU-accelerated Monte Carlo sweeps of queueing systems: random vs central routing, tail percentiles, CIs and analytic baselines"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a sweep (with no arguments: the built-in default study, data/seed.toml)
    Run(commands::RunArgs),
    /// Analytic baselines of a sweep's grid, instantly (no simulation), to stdout; -o also writes them as CSV
    Analytic {
        #[command(flatten)]
        sweep: SweepArgs,
    },
    /// List every GPU adapter wgpu can see
    Adapters,
    /// Draw a results CSV as an SVG, PNG or PDF figure
    Plot(commands::PlotArgs),
    /// Join the CSVs of a sharded sweep (run --shard K/N) into one, sorted by point
    Merge(commands::MergeArgs),
    /// Measure customers/s of every policy on every backend, side by side
    Bench(commands::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<()> = match cli.command {
        Command::Run(args) => commands::run(&args),
        Command::Analytic { sweep } => commands::analytic(&sweep),
        Command::Adapters => commands::adapters(),
        Command::Plot(args) => commands::plot(&args),
        Command::Merge(args) => commands::merge(&args),
        Command::Bench(args) => commands::bench(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The run has said how to resume.
        Err(e) if e.is::<Interrupted>() => ExitCode::from(130),
        // Every point has its row; some rows carry an error.
        Err(e) if e.is::<PointsFailed>() => {
            eprintln!("qsweep: {e:#}; --resume runs them again");
            ExitCode::from(3)
        }
        Err(e) => {
            // Bad input (spec, flags, a results CSV or figure name) is exit 2;
            // failures while simulating or drawing are exit 1.
            let bad_plot_input = e
                .downcast_ref::<qsweep::plot::PlotError>()
                .is_some_and(|p| !matches!(p, qsweep::plot::PlotError::Draw { .. }));
            let usage = e.downcast_ref::<UsageError>().is_some()
                || e.downcast_ref::<SpecError>().is_some()
                || bad_plot_input;
            eprintln!("qsweep: error: {e:#}");
            if usage {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
