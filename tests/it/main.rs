//! qsweep's integration tests, one binary (as ripgrep's and wgpu's
//! `tests/it`): one module per suite, so the test build links the library
//! and its GPU stack once instead of once per suite. Run one suite with
//! `cargo test --test it -- SUITE::`, e.g. `cargo test --test it --
//! gpu_matches_cpu::`.

mod bench;
mod capacity;
mod cli;
mod common;
mod contraction;
mod dynamic;
mod full_disk;
mod gpu_matches_cpu;
mod growth;
mod hostile;
mod hostile_props;
mod limits;
mod outputs;
mod overnight;
mod patience;
mod plot;
mod readme;
mod resume_axes;
mod row_cis;
mod samplers;
mod shaders;
mod size;
mod slo;
mod statistics;
mod theory;
mod warmup;
