//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;

use qsweep_core::analytic::Baseline;
use qsweep_core::engine::Engine;
use qsweep_core::run::{self, PointResult};
use qsweep_core::spec::{GridPoint, Spec};
use qsweep_core::stats::PointStats;
use qsweep_gpu::{AdapterChoice, GpuEngine};

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

/// Runs a spec (TOML text, as a spec file would hold it) through the real
/// path, `Spec::from_toml_str` → `points` → `run::prepare` →
/// `run::run_points`, and returns every grid point in grid order with its
/// statistics and its analytic baseline.
pub fn simulate(toml: &str, engine: &mut dyn Engine) -> Vec<(GridPoint, PointStats, Baseline)> {
    let spec = Spec::from_toml_str(toml, "test", Path::new("."))
        .unwrap_or_else(|e| panic!("test spec rejected: {e}\n{toml}"));
    let points = spec.points();
    let (prepared, table) = run::prepare(&spec, points);
    let mut out = Vec::new();
    run::run_points(
        &prepared,
        &table,
        spec.run.reps,
        engine,
        &mut |r: PointResult| {
            out.push((r.point.grid.clone(), r.stats, run::baseline(&r.point.grid)));
            Ok(())
        },
    )
    .unwrap_or_else(|e| panic!("{} failed: {e:#}", engine_label_hint(toml)));
    assert_eq!(out.len(), prepared.len(), "every point reported once");
    out
}

fn engine_label_hint(toml: &str) -> String {
    format!("simulation of\n{toml}\n")
}

/// A short description of a point for assertion messages.
pub fn describe(g: &GridPoint) -> String {
    format!(
        "point {} routing={} servers={} workers={} lambda={} rho={} service={}",
        g.index,
        g.routing,
        g.servers,
        g.workers,
        g.lambda,
        g.rho,
        g.service.text()
    )
}

/// Simulated mean wait agrees with an exact analytic mean:
/// |sim − exact| ≤ 1.5 × the run's own 95% CI half-width (about 2.9 standard
/// errors), and the CI is informative (≤ `max_ci_frac` of the exact value),
/// so a test cannot pass by being noisy.
pub fn assert_mean_matches(g: &GridPoint, s: &PointStats, exact: f64, max_ci_frac: f64) {
    let ci = s
        .mean_wait_ci95
        .unwrap_or_else(|| panic!("{}: no mean_wait CI", describe(g)));
    let what = format!(
        "{}: mean wait sim {} ± {ci} (95%), exact {exact}, rel err {:+.4}, CI/exact {:.4}",
        describe(g),
        s.mean_wait,
        (s.mean_wait - exact) / exact,
        ci / exact
    );
    eprintln!("{what}");
    assert!(exact > 0.0 && exact.is_finite(), "{what}");
    assert!(
        ci <= max_ci_frac * exact,
        "CI wider than {max_ci_frac} of exact: {what}"
    );
    assert!(
        (s.mean_wait - exact).abs() <= 1.5 * ci,
        "outside 1.5 × CI: {what}"
    );
}

/// Simulated p99 wait agrees with an exact analytic p99:
/// |sim − exact| ≤ 1.5 × the sectioning CI + 1% of exact (the histogram
/// interpolation error is < 0.8%), with the CI ≤ `max_ci_frac` of exact.
pub fn assert_p99_matches(g: &GridPoint, s: &PointStats, exact: f64, max_ci_frac: f64) {
    let ci = s.wait_pct_ci95[3].unwrap_or_else(|| panic!("{}: no p99 CI", describe(g)));
    let p99 = s.wait_pct[3];
    let what = format!(
        "{}: p99 wait sim {p99} ± {ci} (95%), exact {exact}, rel err {:+.4}, CI/exact {:.4}",
        describe(g),
        (p99 - exact) / exact,
        ci / exact
    );
    eprintln!("{what}");
    assert!(exact > 0.0 && exact.is_finite(), "{what}");
    assert!(
        ci <= max_ci_frac * exact,
        "CI wider than {max_ci_frac} of exact: {what}"
    );
    assert!(
        (p99 - exact).abs() <= 1.5 * ci + 0.01 * exact,
        "outside 1.5 × CI + 1%: {what}"
    );
}

/// Every replication ran to the end without a sampler failure: the right
/// number of replications, none flagged, and the mean service time actually
/// drawn matches the law's mean (within 1% + 5 standard errors), which it
/// cannot if replications stopped early or customers went unrecorded.
pub fn assert_clean(g: &GridPoint, s: &PointStats, reps: usize, customers: u32) {
    assert_eq!(s.reps, reps, "{}", describe(g));
    assert_eq!(s.failed_reps, 0, "{}: failed replications", describe(g));
    let mean = g.service.mean();
    let n = reps as f64 * f64::from(customers);
    let tol = mean * (0.01 + 5.0 * (g.service.scv() / n).sqrt());
    assert!(
        (s.mean_service - mean).abs() <= tol,
        "{}: mean service drawn {} vs the law's {mean}: replications incomplete?",
        describe(g),
        s.mean_service
    );
}

/// A law of `kind` with parameters `p` and `n` (phases, table entries),
/// unclamped: what the GPU-vs-CPU tests build their points from.
pub fn law(
    kind: qsweep_core::contract::LawKind,
    n: u32,
    p: [f32; 4],
) -> qsweep_core::contract::Law {
    qsweep_core::contract::Law {
        n,
        ..qsweep_core::contract::Law::unclamped(kind, p)
    }
}

/// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
/// generators, scrambled", ACM TOMS 42(2), 2016): the seeded, dependency-free
/// generator of the property tests (`limits.rs`, `hostile_props.rs`), so a
/// failing case replays from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The `qsweep` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

/// `qsweep ARGS` run in `dir`, stdin closed.
pub fn qsweep_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run qsweep")
}

/// `qsweep ARGS` in `dir`, which must succeed.
pub fn succeed_in(dir: &Path, args: &[&str]) {
    let out = qsweep_in(dir, args);
    assert!(
        out.status.success(),
        "qsweep {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
