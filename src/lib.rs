//! qsweep: GPU-accelerated Monte Carlo sweeps of queueing systems.
//!
//! Data flow: `spec` (TOML + flags) → grid points → `sweep` builds
//! [`contract::PointParams`] and tiles → an `engine` (CPU or GPU) → `stats`
//! → `output` (CSV row per point, beside `analytic` baselines).

pub mod contract;
pub mod engine;
pub mod rng;
pub mod routing;
pub mod sampling;
