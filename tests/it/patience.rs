//! Patience (the `patience` axis, `reneging = "abandon" | "timeout"`):
//! exact theory on both engines (Erlang A, M/M/1+D, M/G/1+D for
//! abandonment; P(W > τ) of the plain queue for timeouts), GPU against CPU
//! replication by replication in every kernel and layout that models it,
//! the CI's coverage, and the CLI (columns, refusals, byte-identical CSVs
//! without patience).
//!
//! Tolerances come from the run's own CI: |sim − exact| ≤ 1.5 × the 95%
//! Student t half-width over replications (≈ 2.9 standard errors), with the
//! half-width itself at most a stated fraction of the exact value, so a
//! test cannot pass by being noisy.

use std::process::Command;

use crate::common::{assert_mean_matches, describe, simulate};
use qsweep_core::contract::{Kernel, LawKind, PointParams, Reneging, Thinning};
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::schedule::tiles_for_points;
use qsweep_core::engine::{Batch, Engine};
use qsweep_core::spec::GridPoint;
use qsweep_core::stats::PointStats;

/// A spec with one value per axis but `servers`, and a patience law.
#[allow(clippy::too_many_arguments)]
fn spec(
    routing: &str,
    servers: &str,
    rho: f64,
    service: &str,
    patience: &str,
    reneging: &str,
    reps: u32,
    customers: u32,
    seed: u64,
) -> String {
    format!(
        "[sweep]\n\
         routing = [\"{routing}\"]\n\
         servers = [{servers}]\n\
         arrival = [\"exp\"]\n\
         rho = [{rho:?}]\n\
         service = [\"{service}\"]\n\
         patience = [\"{patience}\"]\n\
         \n\
         [run]\n\
         reps = {reps}\n\
         customers = {customers}\n\
         warmup = 2000\n\
         seed = {seed}\n\
         reneging = \"{reneging}\"\n"
    )
}

fn assert_lost_matches(g: &GridPoint, s: &PointStats, exact: f64, frac: f64) {
    let sim = s.p_lost;
    let ci = s.p_lost_ci95.expect("a CI over replications");
    let what = format!(
        "{}: P(lost) sim {sim:.6} ± {ci:.6} exact {exact:.6} (z ≈ {:.2})",
        describe(g),
        (sim - exact) / (ci / 1.96)
    );
    eprintln!("{what}");
    assert!(ci <= frac * exact, "CI too wide to test: {what}");
    assert!((sim - exact).abs() <= 1.5 * ci, "{what}");
}

/// Simulates `toml`; each point's baseline must be `method`'s, and its
/// P(lost) (and, under abandonment, the served requests' mean wait) must
/// match it.
fn check(toml: &str, engine: &mut dyn Engine, method: &str, frac: f64, mean: bool) {
    for (g, s, b) in simulate(toml, engine) {
        assert_eq!(b.method, method, "{}", describe(&g));
        let exact = b.p_lost.expect("an exact P(lost)");
        assert_lost_matches(&g, &s, exact, frac);
        if mean {
            assert_mean_matches(&g, &s, b.mean_wait.expect("an exact mean"), frac);
        }
        crate::common::assert_clean(&g, &s, s.reps, 1);
    }
}

fn cpu() -> CpuEngine {
    CpuEngine::new(0)
}

// ---------------------------------------------------------------------------
// Abandonment, exact theory on the CPU

/// M/M/1+M (Erlang A with one server), one dyno and four (random routing
/// thins the stream), below and above ρ = 1: abandonment keeps the queue
/// stable at any load.
#[test]
fn erlang_a_one_server_matches_exact_on_cpu() {
    for rho in [0.8, 1.3] {
        let toml = spec(
            "random",
            "1, 4",
            rho,
            "exp(mean=1)",
            "exp(mean=2)",
            "abandon",
            64,
            40_000,
            11,
        );
        check(&toml, &mut cpu(), "exact:erlang_a", 0.1, true);
    }
}

/// M/M/10+M: one central queue of 10 servers at ρ = 0.95, patience of mean
/// 5 service times.
#[test]
fn erlang_a_central_matches_exact_on_cpu() {
    let toml = spec(
        "central",
        "10",
        0.95,
        "exp(mean=1)",
        "exp(mean=5)",
        "abandon",
        64,
        40_000,
        12,
    );
    check(&toml, &mut cpu(), "exact:erlang_a", 0.1, true);
}

/// M/M/1+D: deterministic patience, the virtual wait's two-piece density.
#[test]
fn mm1_deterministic_patience_matches_exact_on_cpu() {
    let toml = spec(
        "random",
        "1",
        0.9,
        "exp(mean=1)",
        "det(value=3)",
        "abandon",
        64,
        40_000,
        13,
    );
    check(&toml, &mut cpu(), "exact:mm1_det_patience", 0.1, true);
}

/// M/G/1+D: deterministic patience with deterministic and heavier-tailed
/// (gamma of shape 1/4, SCV 4) service, solved from the virtual wait's Volterra equation.
#[test]
fn mg1_deterministic_patience_matches_exact_on_cpu() {
    for service in ["det(value=1)", "gamma(shape=0.25,mean=1)"] {
        let toml = spec(
            "random",
            "1",
            0.95,
            service,
            "det(value=4)",
            "abandon",
            64,
            40_000,
            14,
        );
        check(&toml, &mut cpu(), "exact:mg1_det_patience", 0.1, true);
    }
}

// ---------------------------------------------------------------------------
// Timeouts, exact theory on the CPU: the plain queue's P(W > τ)

/// A router's timeout changes no wait: P(timeout) = P(W > θ) for a fixed θ
/// (Erlang C's C e^{−(cμ − λ)θ}), and C r / (r + cμ − λ) for exponential
/// patience of rate r; the mean wait stays Erlang C's.
#[test]
fn timeouts_match_the_plain_queues_tail_on_cpu() {
    for patience in ["det(value=0.5)", "exp(mean=1)"] {
        let toml = spec(
            "central",
            "10",
            0.9,
            "exp(mean=1)",
            patience,
            "timeout",
            64,
            40_000,
            15,
        );
        check(&toml, &mut cpu(), "exact:erlang_c", 0.1, true);
    }
    // One dyno of ten under random routing, M/M/1 per dyno.
    let toml = spec(
        "random",
        "10",
        0.8,
        "exp(mean=1)",
        "det(value=4)",
        "timeout",
        64,
        40_000,
        16,
    );
    check(&toml, &mut cpu(), "exact:mm1", 0.1, true);
}

// ---------------------------------------------------------------------------
// The GPU engine against the same theory

#[test]
fn gpu_patience_matches_exact_theory() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_patience_matches_exact_theory") else {
        return;
    };
    let mm1m = spec(
        "random",
        "1",
        1.2,
        "exp(mean=1)",
        "exp(mean=2)",
        "abandon",
        64,
        20_000,
        21,
    );
    check(&mm1m, &mut gpu, "exact:erlang_a", 0.12, true);
    let mmcm = spec(
        "central",
        "10",
        0.95,
        "exp(mean=1)",
        "exp(mean=5)",
        "abandon",
        64,
        20_000,
        22,
    );
    check(&mmcm, &mut gpu, "exact:erlang_a", 0.12, true);
    let timeout = spec(
        "central",
        "10",
        0.9,
        "exp(mean=1)",
        "det(value=0.5)",
        "timeout",
        64,
        20_000,
        23,
    );
    check(&timeout, &mut gpu, "exact:erlang_c", 0.12, true);
}

// ---------------------------------------------------------------------------
// GPU = CPU, replication by replication

fn point(
    index: u32,
    kernel: Kernel,
    servers: u32,
    route_n: u32,
    reneging: Reneging,
) -> PointParams {
    let service_mean = 0.9 * servers as f32 / route_n.max(1) as f32;
    PointParams {
        arrival: crate::common::law(LawKind::Exp, 0, [1.0, 0.0, 0.0, 0.0]),
        service: crate::common::law(LawKind::Exp, 0, [service_mean, 0.0, 0.0, 0.0]),
        kernel: kernel.code(),
        thinning: if route_n > 1 && kernel == Kernel::Lindley {
            Thinning::Random.code()
        } else {
            Thinning::None.code()
        },
        servers,
        route_n,
        customers: 3000,
        warmup: 300,
        seed_lo: 77,
        seed_hi: 5,
        point_index: index,
        inv_hist_scale: 1.0 / service_mean,
        slo: [0.0, 0.5 * service_mean, service_mean, 3.0 * service_mean],
        reneging: reneging.code(),
        // Patience of about two service times (one for the central queues,
        // whose waits are shorter): a fair share of requests is lost.
        patience: crate::common::law(
            LawKind::Exp,
            0,
            [2.0 * service_mean / servers as f32, 0.0, 0.0, 0.0],
        ),
        ..PointParams::default()
    }
    .with_ln_keep()
}

/// Every kernel that models patience loses the same requests and computes
/// the same waits on both engines: Lindley in turn (abandonment runs one
/// segment) and side by side (timeouts keep the segments), Kiefer–Wolfowitz
/// with small and large heaps, each under both modes.
#[test]
fn gpu_loses_the_requests_the_cpu_loses() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_loses_the_requests_the_cpu_loses") else {
        return;
    };
    let mut params = Vec::new();
    for reneging in [Reneging::Abandon, Reneging::Timeout] {
        let i = params.len() as u32;
        params.push(point(i, Kernel::Lindley, 1, 1, reneging));
        params.push(point(i + 1, Kernel::Lindley, 1, 4, reneging));
        params.push(point(i + 2, Kernel::KieferWolfowitz, 4, 1, reneging));
        params.push(point(i + 3, Kernel::KieferWolfowitz, 100, 1, reneging));
        // Long enough to be cut into 4 segments (timeouts only).
        params.push(PointParams {
            customers: 20_000,
            warmup: 1000,
            ..point(i + 4, Kernel::Lindley, 1, 1, reneging)
        });
    }
    assert_eq!(params[4].segments().count, 1, "abandonment: one segment");
    assert_eq!(params[9].segments().count, 4, "timeouts: segments");
    let reps = 24;
    let (tiles, slots) = tiles_for_points(params.len() as u32, reps);
    let table = vec![0.0f32];
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &table,
        slots,
    };
    let cpu_out = CpuEngine::new(2).run(&batch).unwrap();
    for layout in [
        qsweep_gpu::SegmentLayout::InTurn,
        qsweep_gpu::SegmentLayout::SideBySide,
    ] {
        gpu.force_segment_layout(layout);
        let gpu_out = gpu.run(&batch).unwrap();
        let mut offset = 0;
        let mut lost = [0u64; 2];
        for t in &tiles {
            let p = &params[t.param_index as usize];
            for k in 0..t.rep_count as usize {
                let (c, g) = (cpu_out.reps[offset + k], gpu_out.reps[offset + k]);
                let what = format!(
                    "point {} rep {k} ({layout:?}): cpu {c:?} gpu {g:?}",
                    t.param_index
                );
                assert_eq!(c.customers, g.customers, "{what}");
                assert_eq!(c.customers, p.customers, "{what}");
                assert_eq!(c.lost, g.lost, "{what}");
                assert_eq!(c.exceed, g.exceed, "{what}");
                let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.abs().max(1e-3);
                assert!(close(c.mean_wait, g.mean_wait), "{what}");
                assert!(close(c.p_wait, g.p_wait), "{what}");
                lost[usize::from(p.reneging() == Reneging::Timeout)] += u64::from(c.lost);
            }
            offset += t.rep_count as usize;
        }
        assert!(lost.iter().all(|&n| n > 0), "requests are lost: {lost:?}");
    }
}

/// Without patience nothing is drawn and nothing changes: a point with
/// `reneging` none gives the plain kernels' replications to the bit.
#[test]
fn no_patience_is_the_plain_queue() {
    let plain = PointParams {
        reneging: Reneging::None.code(),
        patience: Default::default(),
        ..point(0, Kernel::Lindley, 1, 1, Reneging::None)
    };
    let mut with_law = plain;
    // A patience law is ignored when reneging is none.
    with_law.patience = crate::common::law(LawKind::Exp, 0, [0.1, 0.0, 0.0, 0.0]);
    let params = [
        plain,
        PointParams {
            point_index: 0,
            ..with_law
        },
    ];
    let (tiles, slots) = tiles_for_points(2, 8);
    let table = vec![0.0f32];
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &table,
        slots,
    };
    let out = CpuEngine::new(1).run(&batch).unwrap();
    assert_eq!(out.reps[..8], out.reps[8..]);
    assert!(out.reps.iter().all(|r| r.lost == 0));
}

// ---------------------------------------------------------------------------
// Coverage of the CI

/// The Student t CI of P(abandon) over replications covers Erlang A's exact
/// value in 95% of runs: 300 seeds of 16 replications, against the binomial
/// band (± 3 standard deviations of 300 Bernoulli(0.95) trials: 0.913 ..=
/// 0.987).
#[test]
fn p_abandon_ci_covers_the_exact_value() {
    let seeds = 300;
    let mut covered = 0u32;
    for seed in 0..seeds {
        let toml = spec(
            "random",
            "1",
            0.9,
            "exp(mean=1)",
            "exp(mean=4)",
            "abandon",
            16,
            4_000,
            2000 + seed,
        );
        let (_, s, b) = simulate(&toml, &mut cpu()).remove(0);
        let exact = b.p_lost.unwrap();
        covered += u32::from((s.p_lost - exact).abs() <= s.p_lost_ci95.unwrap());
    }
    let rate = f64::from(covered) / seeds as f64;
    eprintln!("P(abandon): CI covered {covered}/{seeds} = {rate:.3}");
    assert!((0.913..=0.987).contains(&rate), "coverage {rate}");
}

// ---------------------------------------------------------------------------
// The CLI

fn qsweep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_qsweep"))
}

fn small_spec(dir: &std::path::Path, extra_sweep: &str, extra_run: &str) -> std::path::PathBuf {
    let path = dir.join("s.toml");
    let text = format!(
        "[sweep]\nrouting = [\"random\", \"central\"]\nservers = [4]\narrival = [\"exp\"]\n\
         rho = [0.8]\nservice = [\"exp(mean=1)\"]\n{extra_sweep}\n[run]\nreps = 8\n\
         customers = 5000\nwarmup = 500\nseed = 3\nbackend = \"cpu\"\n{extra_run}"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn run_ok(spec: &std::path::Path, out: &std::path::Path, args: &[&str]) {
    let ok = qsweep()
        .arg("run")
        .arg(spec)
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

fn header_and_rows(csv: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

/// `patience = ["none"]` is a spec without patience: the same CSV, byte
/// for byte but the timing columns, and no patience columns.
#[test]
fn no_patience_leaves_the_csv_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let plain = small_spec(dir.path(), "", "");
    let none = dir.path().join("none.toml");
    std::fs::write(
        &none,
        std::fs::read_to_string(&plain)
            .unwrap()
            .replace("[run]", "patience = [\"none\"]\n[run]"),
    )
    .unwrap();
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    run_ok(&plain, &a, &[]);
    run_ok(&none, &b, &[]);
    let (h0, r0) = header_and_rows(&a);
    let (h1, r1) = header_and_rows(&b);
    assert_eq!(h0, h1);
    assert!(!h0.iter().any(|h| h == "patience"));
    let timing: Vec<usize> = ["seconds", "customers_per_s"]
        .iter()
        .map(|c| h0.iter().position(|h| h == c).unwrap())
        .collect();
    for (x, y) in r0.iter().zip(&r1) {
        for (i, (u, v)) in x.iter().zip(y).enumerate() {
            if !timing.contains(&i) {
                assert_eq!(u, v, "column {}", h0[i]);
            }
        }
    }
}

/// With patience the row says which law it had and what was lost, beside
/// the exact value; `--reneging timeout` names the column p_timeout.
#[test]
fn patience_appends_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), "patience = [\"none\", \"exp(mean=2)\"]\n", "");
    let out = dir.path().join("p.csv");
    run_ok(&spec, &out, &[]);
    let (h, rows) = header_and_rows(&out);
    let tail = &h[h.len() - 4..];
    assert_eq!(
        tail,
        [
            "patience",
            "p_abandon",
            "p_abandon_ci95",
            "analytic_p_abandon"
        ]
    );
    assert_eq!(rows.len(), 4, "two routings × two patience values");
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    for r in &rows {
        let law = &r[col("patience")];
        let p: f64 = r[col("p_abandon")].parse().unwrap();
        if law == "none" {
            assert_eq!(p, 0.0, "{r:?}");
        } else {
            assert_eq!(law, "exp(mean=2)");
            assert!(p > 0.0, "{r:?}");
            let exact: f64 = r[col("analytic_p_abandon")].parse().unwrap();
            assert!(exact > 0.0 && exact < 1.0, "{r:?}");
            assert_eq!(&r[col("analytic_method")], "exact:erlang_a");
        }
    }
    let timeout = dir.path().join("t.csv");
    run_ok(&spec, &timeout, &["--reneging", "timeout"]);
    let (h, _) = header_and_rows(&timeout);
    assert_eq!(
        &h[h.len() - 4..],
        [
            "patience",
            "p_timeout",
            "p_timeout_ci95",
            "analytic_p_timeout"
        ]
    );
}

/// Bad patience input: one line naming the field, exit 2, nothing written.
#[test]
fn bad_patience_input_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), "", "");
    let out = dir.path().join("never.csv");
    for (args, field) in [
        (vec!["--patience", "exp(mean=-1)"], "--patience"),
        (vec!["--patience", "sometimes"], "--patience"),
        (
            vec!["--patience", "exp(mean=1)", "--reneging", "later"],
            "--reneging",
        ),
        (
            vec!["--patience", "exp(mean=1)", "--capacity", "4"],
            "patience",
        ),
    ] {
        let o = qsweep()
            .arg("run")
            .arg(&spec)
            .args(&args)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(field), "{args:?}: {err}");
        // A patience law's error names patience, not the service law its
        // text is read as (issue 40).
        assert!(!err.contains("service:"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}");
    }
}
