//! Helpers shared by the integration tests.
#![allow(dead_code)]

use qsweep::engine::gpu::{AdapterChoice, GpuEngine};

/// Opens the GPU engine, or reports the test skipped. With
/// `QSWEEP_REQUIRE_GPU=1` (as in CI) a missing adapter fails the test instead.
pub fn gpu_or_skip(test: &str) -> Option<GpuEngine> {
    match GpuEngine::open(&AdapterChoice::default()) {
        Ok(g) => Some(g),
        Err(e) => {
            if std::env::var("QSWEEP_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{test}: QSWEEP_REQUIRE_GPU=1 but no GPU engine: {e:#}");
            }
            eprintln!(
                "SKIPPED {test}: no GPU adapter ({e:#}); set QSWEEP_REQUIRE_GPU=1 to fail instead"
            );
            None
        }
    }
}
