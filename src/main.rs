//! The `qsweep` command line: a thin layer over the library modules.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use qsweep_core::run::{Interrupted, PointsFailed};
use qsweep_core::spec::SpecError;
use qsweep_core::UsageError;

mod commands;

#[derive(Parser)]
#[command(
    name = "qsweep",
    version,
    about = "GPU-accelerated Monte Carlo sweeps of queueing systems: random vs central routing, tail percentiles, CIs and analytic baselines",
    // Our own `help`, which takes `--help` like every other subcommand
    // (clap's built-in one refuses it).
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run a sweep (with no arguments: the built-in default study, data/seed.toml)
    Run(commands::RunArgs),
    /// Analytic baselines of a sweep's grid, instantly (no simulation), to stdout; -o also writes them as CSV
    Analytic(qsweep_core::spec::AnalyticArgs),
    /// List every GPU adapter wgpu can see
    Adapters,
    /// Write the WGSL of every GPU pipeline variant, and a manifest.tsv, into a folder (to check them with other compilers)
    Kernels(commands::KernelsArgs),
    /// Draw a results CSV as an SVG, PNG or PDF figure
    Plot(commands::PlotArgs),
    /// Join the CSVs of a sharded sweep (run --shard K/N) into one, sorted by point
    Merge(commands::MergeArgs),
    /// Measure customers/s of every policy on every backend, side by side
    Bench(commands::BenchArgs),
    /// The smallest number of servers (or workers) at which each policy meets a target such as p99_wait<=0.1, at a given arrival rate: exact where theory is, else a search with simulations
    Size(commands::SizeArgs),
    /// Convert a results CSV to JSON, Markdown or Parquet (or pick its columns)
    Export(commands::ExportArgs),
    /// Print a shell completion script for qsweep to stdout
    Completions(commands::CompletionsArgs),
    /// Print qsweep's manual page (roff) to stdout, or write one page per subcommand into a folder
    Man(commands::ManArgs),
    /// Print the help of qsweep or of a subcommand (`qsweep help run`)
    Help(commands::HelpArgs),
}

fn main() -> ExitCode {
    qsweep_core::provenance::set_git_revision(option_env!("QSWEEP_GIT_REVISION"));
    qsweep_core::files::report_file_size_limit();
    let cli = Cli::parse();
    let result: Result<()> = match cli.command {
        Command::Run(args) => commands::run_command(&args),
        Command::Analytic(args) => commands::analytic(&args),
        Command::Adapters => commands::adapters(),
        Command::Kernels(args) => commands::kernels(&args),
        Command::Plot(args) => commands::plot(&args),
        Command::Merge(args) => commands::merge(&args),
        Command::Bench(args) => commands::bench(&args),
        Command::Export(args) => commands::export(&args),
        Command::Size(args) => commands::size(&args),
        Command::Completions(args) => commands::completions::<Cli>(&args),
        Command::Man(args) => commands::man::<Cli>(&args),
        Command::Help(args) => commands::help::<Cli>(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`qsweep analytic | head -1`):
        // quietly, as a process killed by SIGPIPE (issue 25).
        Err(e) if qsweep_core::output::is_broken_pipe(&e) => ExitCode::from(141),
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
            let bad_plot_input = e.downcast_ref::<qsweep_plot::PlotError>().is_some_and(|p| {
                !matches!(
                    p,
                    qsweep_plot::PlotError::Draw { .. } | qsweep_plot::PlotError::Write { .. }
                )
            });
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
