//! The error bars themselves: do the CSV's 95% CIs cover the truth as often
//! as they claim, does `--warmup auto` find transients, does `--precision`
//! stop where it says it does.
//!
//! - Coverage: many independent seeds of one point (M/M/1 and M/M/10 at
//!   ρ = 0.9), each a full statistics pipeline (replication means → Student t
//!   CI, per-section histograms → sectioning CI of the p99); the fraction of
//!   seeds whose CI holds the exact value (`analytic`, via `sweep::baseline`)
//!   must lie in [90%, 99%]. With 200 seeds a correct 95% procedure fails
//!   that with probability < 0.1% (binomial, sd 1.5%). All seeds run as the
//!   points of one engine batch through `sweep::run_points`. Warm-ups are
//!   ~6 relaxation times (1/(cμ(1 − √ρ)²) ≈ 380 and 38 time units, ≈ 340
//!   customers in both), so the start-empty bias is far below the CI.
//! - MSER-5 on synthetic series with a known transient.
//! - `--warmup auto` through the library and the binary.
//! - `--precision` converging (converged = true) and hitting
//!   `--max-customers` (false), through the binary.
//!
//! Everything runs on the CPU engine; the whole file takes a few seconds
//! on 2 cores.

use std::path::Path;
use std::process::Command;

use qsweep::engine::cpu::CpuEngine;
use qsweep::run::warmup::{self, mser5};
use qsweep::run::{self as sweep, PointResult, PreparedPoint};
use qsweep::spec::{Spec, SweepArgs};

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

fn spec_text(
    routing: &str,
    servers: u32,
    rho: f64,
    reps: u32,
    customers: u32,
    warmup: &str,
    seed: u64,
) -> String {
    format!(
        "[sweep]\n\
         routing = [\"{routing}\"]\n\
         servers = [{servers}]\n\
         rho = [{rho:?}]\n\
         service = [\"exp(mean=1)\"]\n\
         \n\
         [run]\n\
         reps = {reps}\n\
         customers = {customers}\n\
         warmup = {warmup}\n\
         seed = {seed}\n"
    )
}

fn spec(text: &str) -> Spec {
    Spec::from_toml_str(text, "test", Path::new(".")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Coverage of the mean and p99 CIs of one point over `seeds` seeds.
fn coverage(routing: &str, servers: u32, method: &str) {
    const SEEDS: u64 = 200;
    const REPS: u32 = 32;
    const CUSTOMERS: u32 = 20_000;
    let mut points: Vec<PreparedPoint> = Vec::new();
    let mut table = vec![0.0];
    for seed in 1..=SEEDS {
        let s = spec(&spec_text(
            routing,
            servers,
            0.9,
            REPS,
            CUSTOMERS,
            "2000",
            1000 + seed,
        ));
        let (p, t) = sweep::prepare(&s, s.points());
        table = t;
        points.extend(p);
    }
    let baseline = sweep::baseline(&points[0].grid);
    assert_eq!(baseline.method, method);
    let (exact_mean, exact_p99) = (baseline.mean_wait.unwrap(), baseline.p99_wait.unwrap());
    let (mut mean_in, mut p99_in, mut n) = (0u32, 0u32, 0u32);
    let (mut mean_rel, mut p99_rel) = (0.0, 0.0);
    sweep::run_points(
        &points,
        &table,
        REPS,
        &mut CpuEngine::new(0),
        &mut |r: PointResult| {
            let s = &r.stats;
            assert_eq!((s.reps, s.failed_reps), (REPS as usize, 0));
            let hw = s.mean_wait_ci95.expect("mean CI");
            let hw99 = s.wait_pct_ci95[3].expect("p99 CI");
            mean_in += u32::from((s.mean_wait - exact_mean).abs() <= hw);
            p99_in += u32::from((s.wait_pct[3] - exact_p99).abs() <= hw99);
            mean_rel += hw / exact_mean;
            p99_rel += hw99 / exact_p99;
            n += 1;
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(u64::from(n), SEEDS);
    let (cm, cp) = (
        f64::from(mean_in) / f64::from(n),
        f64::from(p99_in) / f64::from(n),
    );
    let what = format!(
        "{routing} servers={servers} rho=0.9 over {n} seeds: mean {exact_mean} covered {:.1}% \
         (CI ±{:.2}%), p99 {exact_p99} covered {:.1}% (CI ±{:.2}%)",
        100.0 * cm,
        100.0 * mean_rel / f64::from(n),
        100.0 * cp,
        100.0 * p99_rel / f64::from(n)
    );
    eprintln!("{what}");
    assert!((0.90..=0.99).contains(&cm), "mean CI coverage: {what}");
    assert!((0.90..=0.99).contains(&cp), "p99 CI coverage: {what}");
}

#[test]
fn mm1_cis_cover_the_exact_mean_and_p99_about_95_percent_of_the_time() {
    coverage("random", 1, "exact:mm1");
}

#[test]
fn mm10_cis_cover_the_exact_mean_and_p99_about_95_percent_of_the_time() {
    coverage("central", 10, "exact:erlang_c");
}

// ---------------------------------------------------------------------------
// MSER-5

/// xorshift64* uniforms and Box–Muller normals: a fixed, dependency-free
/// noise source.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

#[test]
fn mser5_finds_a_known_transient() {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    // A step: 1000 observations at mean 4, then 19000 at mean 0 (noise sd 1).
    let step: Vec<f64> = (0..20_000)
        .map(|i| if i < 1000 { 4.0 } else { 0.0 } + noise.normal())
        .collect();
    let (t, r) = mser5(&step).unwrap();
    eprintln!("step at 1000: MSER-5 truncates {t} ({r:?})");
    assert!((990..=1010).contains(&t), "{t}");
    assert!(!r.at_limit);
    // An exponential decay 10·e^(−i/200): the truncation must remove the
    // bulk of the bias (it is 10·e^(−2.5) ≈ 0.8 at 500) but not overshoot
    // to where it is far below the noise (≈ 0.0005 at 3000).
    let decay: Vec<f64> = (0..20_000)
        .map(|i| 10.0 * (-f64::from(i) / 200.0).exp() + noise.normal())
        .collect();
    let (t, _) = mser5(&decay).unwrap();
    eprintln!("decay with time constant 200: MSER-5 truncates {t}");
    assert!((500..=3000).contains(&t), "{t}");
    // A stationary series: next to nothing is cut.
    let flat: Vec<f64> = (0..20_000).map(|_| noise.normal()).collect();
    let (t, _) = mser5(&flat).unwrap();
    assert!(t < 2000, "{t}");
    // The transient past the searched first half: flagged.
    let late: Vec<f64> = (0..2000)
        .map(|i| if i < 1500 { 4.0 } else { 0.0 } + 0.1 * noise.normal())
        .collect();
    let (t, r) = mser5(&late).unwrap();
    assert!(r.at_limit && t <= 1000, "{t} {r:?}");
}

// ---------------------------------------------------------------------------
// --warmup auto

#[test]
fn warmup_auto_is_longer_near_saturation() {
    let args = SweepArgs {
        routing: vec!["random,central".into()],
        servers: vec!["1,10".into()],
        rho: vec!["0.5,0.98".into()],
        service: vec!["exp(mean=1)".into()],
        customers: Some("100000".into()),
        warmup: Some("auto".into()),
        seed: Some("7".into()),
        ..SweepArgs::default()
    };
    let s = Spec::load(&args).unwrap();
    assert!(s.run.warmup_auto);
    let (mut points, table) = sweep::prepare(&s, s.points());
    // Not chosen yet: running is refused rather than silently using 0.
    let err =
        sweep::run_points(&points, &table, 2, &mut CpuEngine::new(0), &mut |_| Ok(())).unwrap_err();
    assert!(format!("{err:#}").contains("warmup::resolve"), "{err:#}");
    warmup::resolve(&mut points, &table, s.run.reps, 0);
    for pair in points.chunks(2) {
        let (lo, hi) = (&pair[0], &pair[1]);
        assert_eq!((lo.grid.rho, hi.grid.rho), (0.5, 0.98));
        let (pl, ph) = (lo.pilot.unwrap(), hi.pilot.unwrap());
        eprintln!(
            "{} servers={}: rho 0.5 → {} (MSER {}), rho 0.98 → {} (MSER {})",
            lo.grid.routing, lo.grid.servers, pl.warmup, pl.truncation, ph.warmup, ph.truncation
        );
        assert_eq!(lo.params.warmup, pl.warmup);
        assert_eq!(hi.params.warmup, ph.warmup);
        assert!(pl.warmup >= warmup::WARMUP_FLOOR && pl.warmup >= pl.truncation);
        // Relaxation times: ~12 customers at rho 0.5, ~10^4 at rho 0.98.
        assert!(pl.warmup <= 1000, "{pl:?}");
        assert!(
            ph.warmup >= 1000 && ph.warmup > 4 * pl.warmup,
            "{ph:?} vs {pl:?}"
        );
        assert!(!pl.at_limit && !ph.at_limit);
    }
}

fn qsweep(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("qsweep runs");
    assert!(
        out.status.success(),
        "qsweep {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The CSV as rows of (column → value).
fn rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

fn f(row: &std::collections::HashMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = '{}' is not a number", row[col]))
}

#[test]
fn warmup_auto_is_recorded_in_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let common = [
        "run",
        "--backend",
        "cpu",
        "--routing",
        "random",
        "--servers",
        "1",
        "--service",
        "exp(mean=1)",
        "--reps",
        "8",
        "--customers",
        "20000",
        "--seed",
        "3",
    ];
    let out = qsweep(
        d,
        &[
            &common[..],
            &["--rho", "0.5,0.98", "--warmup", "auto", "-o", "auto.csv"],
        ]
        .concat(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warm-up auto: MSER-5"), "{err}");
    let auto = rows(&d.join("auto.csv"));
    let (w0, w1) = (f(&auto[0], "warmup"), f(&auto[1], "warmup"));
    assert!(
        w1 > w0 && w0 >= f64::from(warmup::WARMUP_FLOOR),
        "{w0} {w1}"
    );
    // The chosen warm-up is what ran: a fixed run with it gives the same
    // numbers (the point index, part of the stream key, is kept by listing
    // both loads and keeping the second row).
    let fixed = format!("{}", w1 as u32);
    qsweep(
        d,
        &[
            &common[..],
            &["--rho", "0.5,0.98", "--warmup", &fixed, "-o", "fixed.csv"],
        ]
        .concat(),
    );
    let fixed = rows(&d.join("fixed.csv"));
    for col in [
        "warmup",
        "reps",
        "mean_wait",
        "mean_wait_ci95",
        "p99_wait",
        "p99_wait_ci95",
    ] {
        assert_eq!(auto[1][col], fixed[1][col], "{col}");
    }
    assert_eq!(auto[1]["converged"], "");
}

// ---------------------------------------------------------------------------
// --precision

#[test]
fn precision_adds_rounds_until_the_cis_meet_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |extra: &[&str], out: &str| {
        let args = [
            &[
                "run",
                "--backend",
                "cpu",
                "--routing",
                "random,central",
                "--servers",
                "1,4",
                "--rho",
                "0.8",
                "--service",
                "exp(mean=1)",
                "--customers",
                "5000",
                "--warmup",
                "1000",
                "--seed",
                "11",
                "-o",
                out,
            ][..],
            extra,
        ]
        .concat();
        qsweep(d, &args);
        rows(&d.join(out))
    };
    let got = run(&["--reps", "16", "--precision", "0.02"], "p.csv");
    assert_eq!(got.len(), 4);
    for r in &got {
        let what = format!("{r:?}");
        assert_eq!(r["converged"], "true", "{what}");
        let reps = f(r, "reps");
        assert!(reps > 16.0, "converged in the first round? {what}");
        assert!(f(r, "mean_wait_ci95") <= 0.02 * f(r, "mean_wait"), "{what}");
        assert!(f(r, "p99_wait_ci95") <= 0.02 * f(r, "p99_wait"), "{what}");
        // The exact values agree (the CIs are honest).
        let exact = f(r, "analytic_mean_wait");
        assert!(
            (f(r, "mean_wait") - exact).abs() <= 1.5 * f(r, "mean_wait_ci95"),
            "{what}"
        );
    }
    // Rounds continue the replication numbers 0, 1, 2, ...: the same
    // replications as one fixed run of the final count, so the same mean and
    // mean CI (percentile sections are cut differently).
    let reps = got[0]["reps"].clone();
    let fixed = run(&["--reps", &reps, "--shard", "0/4"], "f.csv");
    for col in [
        "reps",
        "mean_wait",
        "mean_wait_ci95",
        "p_wait",
        "max_wait",
        "mean_sojourn",
    ] {
        assert_eq!(got[0][col], fixed[0][col], "{col}");
    }
    assert_eq!(fixed[0]["converged"], "");
    // A point's rounds depend on its own statistics only: alone (another
    // chunk, other engine calls, one thread) it gets the same row.
    let alone = run(
        &[
            "--reps",
            "16",
            "--precision",
            "0.02",
            "--shard",
            "0/4",
            "-j",
            "1",
        ],
        "alone.csv",
    );
    for (col, v) in &alone[0] {
        if !["seconds", "customers_per_s"].contains(&col.as_str()) {
            assert_eq!(&got[0][col], v, "{col}");
        }
    }
}

#[test]
fn precision_stops_at_max_customers_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = qsweep(
        d,
        &[
            "run",
            "--backend",
            "cpu",
            "--routing",
            "random",
            "--servers",
            "1",
            "--rho",
            "0.95",
            "--service",
            "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
            "--reps",
            "16",
            "--customers",
            "10000",
            "--warmup",
            "1000",
            "--seed",
            "5",
            "--precision",
            "0.001",
            "--max-customers",
            "3e6",
            "-o",
            "m.csv",
            "--quiet",
        ],
    );
    let got = rows(&d.join("m.csv"));
    let r = &got[0];
    assert_eq!(r["converged"], "false", "{r:?}");
    let reps = f(r, "reps");
    // Within the budget, and more than the first round.
    assert!(reps * 11_000.0 <= 3e6 && reps > 16.0, "{r:?}");
    assert!(f(r, "mean_wait_ci95") > 0.001 * f(r, "mean_wait"), "{r:?}");
    // A point this noisy gets the wide-CI warning, even with --quiet.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: 1 of 1 points have a mean-wait or p99 95% CI wider"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Settings

#[test]
fn statistics_settings_parse_round_trip_and_refuse_bad_values() {
    let text = spec_text("random", 1, 0.5, 4, 100, "\"auto\"", 1)
        + "precision = 0.01\nmax_customers = 2e9\n";
    let s = spec(&text);
    assert!(s.run.warmup_auto);
    assert_eq!(s.run.precision, Some(0.01));
    assert_eq!(s.run.max_customers, 2_000_000_000);
    let back = spec(&s.to_toml());
    assert_eq!(back, s, "{}", s.to_toml());
    // Without them the canonical text (and spec hash) is unchanged.
    let plain = spec(&spec_text("random", 1, 0.5, 4, 100, "10", 1));
    let toml = plain.to_toml();
    assert!(
        !toml.contains("precision") && !toml.contains("max_customers"),
        "{toml}"
    );
    assert!(toml.contains("warmup = 10\n"), "{toml}");
    for (bad, names) in [
        ("warmup = \"sometimes\"", "warmup"),
        ("precision = 0", "precision"),
        ("precision = 1.5", "precision"),
        ("max_customers = 0", "max_customers"),
    ] {
        let t =
            spec_text("random", 1, 0.5, 4, 100, "10", 1).replace("warmup = 10\n", "") + bad + "\n";
        let e = Spec::from_toml_str(&t, "test", Path::new("."))
            .unwrap_err()
            .0;
        assert!(e.contains(names) && e.contains("expected"), "{e}");
    }
    let flags = |warmup: &str, precision: &str, max: &str| SweepArgs {
        warmup: Some(warmup.into()),
        precision: Some(precision.into()),
        max_customers: Some(max.into()),
        ..SweepArgs::default()
    };
    let s = Spec::load(&flags("auto", "0.05", "1e8")).unwrap();
    assert!(s.run.warmup_auto && s.run.warmup == 0);
    assert_eq!(
        (s.run.precision, s.run.max_customers),
        (Some(0.05), 100_000_000)
    );
    let s = Spec::load(&flags("500", "0.05", "1e8")).unwrap();
    assert!(!s.run.warmup_auto && s.run.warmup == 500);
    let e = Spec::load(&flags("auto", "-1", "1e8")).unwrap_err().0;
    assert!(e.starts_with("--precision: "), "{e}");
    let e = Spec::load(&flags("auto", "0.1", "many")).unwrap_err().0;
    assert!(e.starts_with("--max-customers: "), "{e}");
}
