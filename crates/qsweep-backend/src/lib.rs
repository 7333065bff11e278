//! qsweep-backend: what chooses and measures engines, above both of them.
//!
//! - [`backend`]: `--backend auto|gpu|cpu` and `--adapter`: opens the engine
//!   a run asks for ([`backend::choose_for`]), `auto` calibrating a hardware
//!   GPU against the CPU engine on the sweep's own points;
//! - [`bench`]: `qsweep bench` and the criterion suites' standard cases:
//!   each engine's customers per second and fraction of peak.
//!
//! A crate of its own because both jobs know both engines: the CPU engine
//! (`qsweep-core`) and the GPU engine (`qsweep-gpu`, which depends on core).
//! Core's run loop takes the chooser as an argument
//! ([`Session::choose_engine`](qsweep_core::run::session::Session::choose_engine)),
//! so it needs neither this crate nor the GPU stack (issue 43).

pub mod backend;
pub mod bench;
#[cfg(test)]
mod opcount_tests;
