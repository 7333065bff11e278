//! The subcommands, one module each: its clap flags and the glue from them
//! to the library crates. Each is thin: what a subcommand computes lives in
//! a library crate (the run itself in `qsweep_core::run::driver`, shared
//! with the Python module), what it shows and writes lives here.

mod adapters;
mod analytic;
mod bench;
mod completions;
mod export;
mod help;
mod kernels;
mod man;
mod merge;
mod plot;
mod run;
mod size;
mod spec;

pub use adapters::adapters;
pub use analytic::analytic;
pub use bench::{bench, BenchArgs};
pub use completions::{completions, CompletionsArgs};
pub use export::{export, ExportArgs};
pub use help::{help, HelpArgs};
pub use kernels::{kernels, KernelsArgs};
pub use man::{man, ManArgs};
pub use merge::{merge, MergeArgs};
pub use plot::{plot, PlotArgs};
pub use run::{run_command, RunArgs};
pub use size::{size, SizeArgs};
