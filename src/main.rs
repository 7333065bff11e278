//! The `qsweep` command line: a thin layer over the library modules.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

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
    Run {
        #[command(flatten)]
        sweep: SweepArgs,
        /// No progress output (errors and the final summary line only)
        #[arg(long, short)]
        quiet: bool,
    },
    /// Analytic baselines of a sweep's grid, instantly (no simulation)
    Analytic {
        #[command(flatten)]
        sweep: SweepArgs,
    },
    /// List every GPU adapter wgpu can see
    Adapters,
    /// Draw a results CSV as an SVG or PNG figure
    Plot(commands::PlotArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<()> = match cli.command {
        Command::Run { sweep, quiet } => commands::run(&sweep, quiet),
        Command::Analytic { sweep } => commands::analytic(&sweep),
        Command::Adapters => commands::adapters(),
        Command::Plot(args) => commands::plot(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let usage =
                e.downcast_ref::<UsageError>().is_some() || e.downcast_ref::<SpecError>().is_some();
            eprintln!("qsweep: error: {e:#}");
            if usage {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
