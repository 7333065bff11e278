//! qsweep-core: the library under the `qsweep` binary and the Python module:
//! GPU-accelerated Monte Carlo sweeps of queueing systems, from the sweep
//! spec to the results CSV.
//!
//! Why one crate still: the spec, the engine contract, the CPU engine, the
//! statistics and the run loop were tied by import circles; those are cut
//! (issue 43: the modules' imports now form a DAG), and the modules are the
//! next crates. What already builds apart: the figures (`qsweep-plot`,
//! plotters), the GPU engine (`qsweep-gpu`: wgpu, naga and pollster compile
//! only there; it implements [`engine::Engine`] like the CPU engine) and
//! what chooses and measures engines (`qsweep-backend`: `--backend` and
//! `qsweep bench`, above both engines). The run loop gets its engine from a
//! chooser the front end passes in ([`run::calibrate::Choose`]), so nothing
//! here names the GPU engine. Parquet is next.
//!
//! Data flow: `spec` (TOML + flags) → grid points → `run` builds
//! [`contract::PointParams`] and tiles → an engine (`engine::cpu` or
//! `qsweep_gpu`) → `stats` → `output` (CSV row per point, beside `analytic`
//! baselines). See ARCHITECTURE.md for where each piece lives.

pub mod analytic;
pub mod contract;
pub mod dist;
pub mod engine;
pub mod export;
pub mod files;
pub mod fleet;
pub mod horizon;
pub mod memory;
pub mod merge;
pub mod number;
pub mod output;
pub mod progress;
pub mod provenance;
pub mod rng;
pub mod routing;
pub mod run;
pub mod sampling;
pub mod size;
pub mod spec;
pub mod stats;

/// Bad input from the user: reported as one line, exit code 2.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A [`UsageError`] as an `anyhow::Error`, for the functions that return
/// `anyhow::Result` (one line, exit code 2 all the same).
pub fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}
