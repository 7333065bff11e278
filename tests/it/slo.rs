//! `--slo`: P(wait > t), counted exactly per recorded customer in every
//! kernel, against exact theory on both engines, GPU against CPU
//! replication by replication, the CI's coverage, and the CLI's columns.
//!
//! Tolerances come from the run's own CI: |sim − exact| ≤ 1.5 × the 95%
//! Student t half-width over replications (≈ 2.9 standard errors), with the
//! half-width itself at most `max_ci_frac` of the exact value, so a test
//! cannot pass by being noisy.

use std::process::Command;

use crate::common::{describe, simulate};
use qsweep_core::contract::{DispatchPolicy, Kernel, LawKind, PointParams, Thinning};
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::schedule::tiles_for_points;
use qsweep_core::engine::{Batch, Engine};
use qsweep_core::spec::GridPoint;
use qsweep_core::stats::PointStats;

/// A spec with one value per axis but `servers`, and `--slo` thresholds.
#[allow(clippy::too_many_arguments)]
fn spec(
    routing: &str,
    servers: &str,
    arrival: &str,
    rho: f64,
    service: &str,
    slo: &[f64],
    reps: u32,
    customers: u32,
    warmup: u32,
    seed: u64,
) -> String {
    let slo: Vec<String> = slo.iter().map(|t| format!("{t:?}")).collect();
    format!(
        "[sweep]\n\
         routing = [\"{routing}\"]\n\
         servers = [{servers}]\n\
         arrival = [\"{arrival}\"]\n\
         rho = [{rho:?}]\n\
         service = [\"{service}\"]\n\
         \n\
         [run]\n\
         reps = {reps}\n\
         customers = {customers}\n\
         warmup = {warmup}\n\
         seed = {seed}\n\
         slo = [{}]\n",
        slo.join(", ")
    )
}

fn assert_tail_matches(g: &GridPoint, s: &PointStats, k: usize, t: f64, exact: f64, frac: f64) {
    let sim = s.p_wait_gt[k];
    let ci = s.p_wait_gt_ci95[k].expect("a CI over replications");
    let what = format!(
        "{}: P(W > {t}) sim {sim:.6} ± {ci:.6} exact {exact:.6} (z ≈ {:.2})",
        describe(g),
        (sim - exact) / (ci / 1.96)
    );
    eprintln!("{what}");
    assert!(ci <= frac * exact, "CI too wide to test: {what}");
    assert!((sim - exact).abs() <= 1.5 * ci, "{what}");
}

/// Simulates `toml` and checks P(W > t) at each of `slo` against the exact
/// tail the baseline carries (which must be `method`'s).
fn check_tails(toml: &str, slo: &[f64], engine: &mut dyn Engine, method: &str, frac: f64) {
    for (g, s, b) in simulate(toml, engine) {
        assert_eq!(b.method, method, "{}", describe(&g));
        for (k, &t) in slo.iter().enumerate() {
            let exact = b.p_wait_gt(t).expect("an exact tail");
            assert_tail_matches(&g, &s, k, t, exact, frac);
        }
    }
}

fn cpu() -> CpuEngine {
    CpuEngine::new(0)
}

// ---------------------------------------------------------------------------
// Exact theory, CPU engine

/// M/M/1 at ρ = 0.8, one dyno and ten (random routing thins the stream):
/// P(W > t) = ρ e^{−(μ − λ) t}.
#[test]
fn mm1_tail_matches_exact_on_cpu() {
    let slo = [0.5, 2.0, 8.0];
    let toml = spec(
        "random",
        "1, 10",
        "exp",
        0.8,
        "exp(mean=1)",
        &slo,
        64,
        50_000,
        2_000,
        7,
    );
    check_tails(&toml, &slo, &mut cpu(), "exact:mm1", 0.1);
}

/// Erlang C: one central queue of 10 servers at ρ = 0.9,
/// P(W > t) = C(c, a) e^{−(c μ − λ) t}.
#[test]
fn erlang_c_tail_matches_exact_on_cpu() {
    let slo = [0.1, 0.5, 1.5];
    let toml = spec(
        "central",
        "10",
        "exp",
        0.9,
        "exp(mean=1)",
        &slo,
        64,
        50_000,
        2_000,
        8,
    );
    check_tails(&toml, &slo, &mut cpu(), "exact:erlang_c", 0.1);
}

/// E_4/M/1: round robin over 4 dynos turns a Poisson stream into Erlang-4
/// interarrivals, P(W > t) = σ e^{−μ (1 − σ) t} (GI/M/1).
#[test]
fn er_m_1_tail_matches_exact_on_cpu() {
    let slo = [0.5, 2.0, 6.0];
    let toml = spec(
        "round_robin",
        "4",
        "exp",
        0.85,
        "exp(mean=1)",
        &slo,
        64,
        50_000,
        2_000,
        9,
    );
    check_tails(&toml, &slo, &mut cpu(), "exact:er_m_1", 0.1);
}

/// M/D/1 at ρ = 0.7: the exact (Crommelin) CDF, including a threshold
/// inside the first service time and ones past several.
#[test]
fn md1_tail_matches_exact_on_cpu() {
    let slo = [0.3, 1.0, 3.5];
    let toml = spec(
        "random",
        "1",
        "exp",
        0.7,
        "det(value=1)",
        &slo,
        64,
        50_000,
        2_000,
        10,
    );
    check_tails(&toml, &slo, &mut cpu(), "exact:md1", 0.1);
}

/// jsq and lwl with one server are the plain M/M/1 queue (the dispatch
/// kernel's recorder counts too).
#[test]
fn dispatch_kernel_tail_matches_exact_on_cpu() {
    let slo = [0.5, 3.0];
    for (routing, method) in [("jsq", "exact:mm1"), ("lwl", "exact:erlang_c")] {
        let servers = if routing == "lwl" { "4" } else { "1" };
        let toml = spec(
            routing,
            servers,
            "exp",
            0.8,
            "exp(mean=1)",
            &slo,
            32,
            40_000,
            2_000,
            11,
        );
        check_tails(&toml, &slo, &mut cpu(), method, 0.12);
    }
}

// ---------------------------------------------------------------------------
// Exact theory, GPU engine (short replications: lavapipe runs them on the CPU)

#[test]
fn gpu_tails_match_exact_theory() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_tails_match_exact_theory") else {
        return;
    };
    let slo = [0.5, 2.0];
    let mm1 = spec(
        "random",
        "1",
        "exp",
        0.7,
        "exp(mean=1)",
        &slo,
        512,
        4_000,
        500,
        12,
    );
    check_tails(&mm1, &slo, &mut gpu, "exact:mm1", 0.1);
    let slo = [0.1, 0.5];
    let mmc = spec(
        "central",
        "8",
        "exp",
        0.85,
        "exp(mean=1)",
        &slo,
        512,
        4_000,
        500,
        13,
    );
    check_tails(&mmc, &slo, &mut gpu, "exact:erlang_c", 0.1);
}

// ---------------------------------------------------------------------------
// GPU = CPU, replication by replication

fn point(index: u32, kernel: Kernel, servers: u32, route_n: u32, service_mean: f32) -> PointParams {
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
        seed_lo: 99,
        seed_hi: 3,
        point_index: index,
        inv_hist_scale: 1.0 / service_mean,
        slo: [0.0, 0.3 * service_mean, service_mean, 4.0 * service_mean],
        ..PointParams::default()
    }
    .with_ln_keep()
}

/// Every kernel counts the same customers above each threshold: Lindley in
/// turn and side by side (segments), Kiefer–Wolfowitz with small and large
/// heaps, and the dispatch kernel (jsq, lwl).
#[test]
fn gpu_counts_exceedances_as_the_cpu_does() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_counts_exceedances_as_the_cpu_does") else {
        return;
    };
    let mut params = vec![
        point(0, Kernel::Lindley, 1, 1, 0.85),
        point(1, Kernel::Lindley, 1, 4, 3.4),
        point(2, Kernel::KieferWolfowitz, 4, 1, 3.6),
        point(3, Kernel::KieferWolfowitz, 100, 1, 95.0),
        PointParams {
            route_n: DispatchPolicy::Jsq.code(),
            ..point(4, Kernel::Dispatch, 5, 1, 4.5)
        },
        PointParams {
            route_n: DispatchPolicy::Lwl.code(),
            ..point(5, Kernel::Dispatch, 3, 1, 2.7)
        },
    ];
    // Long enough to be cut into 4 segments.
    params.push(PointParams {
        customers: 20_000,
        warmup: 1000,
        ..point(6, Kernel::Lindley, 1, 1, 0.9)
    });
    assert_eq!(params[6].segments().count, 4);
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
        let mut above = [0u64; 4];
        for t in &tiles {
            for k in 0..t.rep_count as usize {
                let (c, g) = (cpu_out.reps[offset + k], gpu_out.reps[offset + k]);
                let what = format!(
                    "point {} rep {k} ({layout:?}): cpu {c:?} gpu {g:?}",
                    t.param_index
                );
                assert_eq!(c.customers, g.customers, "{what}");
                for ((n, a), b) in above.iter_mut().zip(c.exceed).zip(g.exceed) {
                    // Waits agree to the last bits; a count may differ only
                    // by a wait lying on a threshold.
                    assert!(a.abs_diff(b) <= 1, "{what}");
                    *n += u64::from(a);
                }
                // The zero threshold counts exactly the customers who waited.
                let waited = (c.p_wait * c.customers as f32).round() as u32;
                assert!(c.exceed[0].abs_diff(waited) <= 1, "{what}");
                assert!(c.exceed[0] >= c.exceed[1] && c.exceed[1] >= c.exceed[2]);
                assert!(c.exceed[2] >= c.exceed[3], "{what}");
            }
            offset += t.rep_count as usize;
        }
        assert!(
            above.iter().all(|&n| n > 0),
            "every threshold is crossed: {above:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Coverage of the CI

/// The Student t CI of P(W > t) over replications covers the exact M/M/1
/// tail in 95% of runs: 300 seeds of 16 replications, checked against the
/// binomial band (± 3 standard deviations of 300 Bernoulli(0.95) trials,
/// so 0.913 ..= 0.987).
#[test]
fn slo_ci_covers_the_exact_tail() {
    let slo = [1.0, 4.0];
    let seeds = 300;
    let mut covered = [0u32; 2];
    for seed in 0..seeds {
        let toml = spec(
            "random",
            "1",
            "exp",
            0.6,
            "exp(mean=1)",
            &slo,
            16,
            4_000,
            200,
            1000 + seed,
        );
        let (_, s, b) = simulate(&toml, &mut cpu()).remove(0);
        for (k, &t) in slo.iter().enumerate() {
            let exact = b.p_wait_gt(t).unwrap();
            let ci = s.p_wait_gt_ci95[k].unwrap();
            covered[k] += u32::from((s.p_wait_gt[k] - exact).abs() <= ci);
        }
    }
    for (k, &c) in covered.iter().enumerate() {
        let rate = f64::from(c) / seeds as f64;
        eprintln!("P(W > {}): CI covered {c}/{seeds} = {rate:.3}", slo[k]);
        assert!(
            (0.913..=0.987).contains(&rate),
            "coverage {rate} at t = {}",
            slo[k]
        );
    }
}

// ---------------------------------------------------------------------------
// The CLI

fn qsweep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_qsweep"))
}

fn small_spec(dir: &std::path::Path, slo: Option<&str>) -> std::path::PathBuf {
    let path = dir.join("s.toml");
    let mut text = String::from(
        "[sweep]\nrouting = [\"random\", \"central\"]\nservers = [4]\narrival = [\"exp\"]\n\
         rho = [0.8]\nservice = [\"exp(mean=1)\"]\n\n[run]\nreps = 8\ncustomers = 5000\n\
         warmup = 500\nseed = 3\nbackend = \"cpu\"\n",
    );
    if let Some(s) = slo {
        text.push_str(&format!("slo = {s}\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn header_and_rows(csv: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

#[test]
fn slo_flag_appends_three_columns_per_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), None);
    let plain = dir.path().join("plain.csv");
    let with = dir.path().join("slo.csv");
    let ok = qsweep()
        .arg("run")
        .arg(&spec)
        .arg("-o")
        .arg(&plain)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let ok = qsweep()
        .arg("run")
        .arg(&spec)
        .args(["--slo", "0.5,2"])
        .arg("-o")
        .arg(&with)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let (h0, r0) = header_and_rows(&plain);
    let (h1, r1) = header_and_rows(&with);
    assert_eq!(&h1[..h0.len()], &h0[..]);
    assert_eq!(
        &h1[h0.len()..],
        [
            "p_wait_gt_0.5",
            "p_wait_gt_0.5_ci95",
            "analytic_p_wait_gt_0.5",
            "p_wait_gt_2",
            "p_wait_gt_2_ci95",
            "analytic_p_wait_gt_2"
        ]
    );
    // Counting changes nothing else: the standard columns are the same
    // numbers (timing apart).
    let timing: Vec<usize> = ["backend", "seconds", "customers_per_s"]
        .iter()
        .map(|c| h0.iter().position(|h| h == c).unwrap())
        .collect();
    for (a, b) in r0.iter().zip(&r1) {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            if !timing.contains(&i) {
                assert_eq!(x, y, "column {}", h0[i]);
            }
        }
        let p: f64 = b[h0.len()].parse().unwrap();
        let exact: f64 = b[h0.len() + 2].parse().unwrap();
        assert!(p > 0.0 && p < 1.0 && exact > 0.0 && exact < 1.0);
        assert!(!b[h0.len() + 1].is_empty(), "a CI");
    }
}

#[test]
fn slo_in_the_spec_file_and_resume_keep_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), Some("[0.25, 1.5]"));
    let out = dir.path().join("r.csv");
    let ok = qsweep()
        .arg("run")
        .arg(&spec)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let (h, _) = header_and_rows(&out);
    assert!(h.iter().any(|c| c == "p_wait_gt_0.25"), "{h:?}");
    assert!(h.iter().any(|c| c == "analytic_p_wait_gt_1.5"), "{h:?}");
    // The thresholds are part of the study (its spec hash): resuming with
    // others is refused in one line.
    let bad = qsweep()
        .arg("run")
        .arg(&spec)
        .args(["--slo", "3", "--resume", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("different spec"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // Resuming the finished run with its own thresholds keeps the file.
    let before = std::fs::read(&out).unwrap();
    let again = qsweep()
        .arg("run")
        .arg(&spec)
        .args(["--resume", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

/// `--slo` and `--quantiles` may be repeated, as every flag may (issue 40:
/// "cannot be used multiple times"): the lists join.
#[test]
fn slo_and_quantile_flags_may_be_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), None);
    let run = |args: &[&str], out: &str| {
        let r = qsweep()
            .arg("run")
            .arg(&spec)
            .args(args)
            .args(["-q", "-o", out])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        header_and_rows(&dir.path().join(out))
    };
    let (h1, r1) = run(&["--slo", "0.5,2", "--quantiles", "0.9,0.999"], "one.csv");
    let (h2, r2) = run(
        &[
            "--slo",
            "0.5",
            "--quantiles",
            "0.9",
            "--slo",
            "2",
            "--quantiles",
            "0.999",
        ],
        "two.csv",
    );
    assert_eq!(h1, h2);
    assert!(h1.iter().any(|h| h == "p_wait_gt_2") && h1.iter().any(|h| h == "q0.999_wait"));
    let untimed = |rows: Vec<Vec<String>>, h: &[String]| -> Vec<Vec<String>> {
        let skip: Vec<usize> = ["backend", "seconds", "customers_per_s"]
            .iter()
            .filter_map(|c| h.iter().position(|x| x == c))
            .collect();
        rows.into_iter()
            .map(|r| {
                r.into_iter()
                    .enumerate()
                    .filter(|(i, _)| !skip.contains(i))
                    .map(|(_, v)| v)
                    .collect()
            })
            .collect()
    };
    assert_eq!(untimed(r1, &h1), untimed(r2, &h2));
}

#[test]
fn bad_slo_values_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), None);
    for bad in ["0.5,0.5", "-1", "x", "1,2,3,4,5", "inf", "", "1e300"] {
        let out = dir.path().join("never.csv");
        let r = qsweep()
            .arg("run")
            .arg(&spec)
            .args(["--slo", bad, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "--slo {bad:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("--slo") && err.contains("at most 4"), "{err}");
        // The range says why 1e300 is refused (issue 40).
        assert!(err.contains("from 0 to 3.4e38"), "{err}");
        assert!(!out.exists());
    }
}

// ---------------------------------------------------------------------------
// `qsweep size --target 'p_wait_gt_T<=B'`

/// The `sizes.json` rows of `qsweep size ARGS`.
fn sizes(dir: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    let out = dir.join("sizes.json");
    let _ = std::fs::remove_file(&out);
    let o = qsweep()
        .arg("size")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// Exact where the wait's law is known: the seed's λ = 150/s, μ = 3/s,
/// P(W > 0.1 s) ≤ 0.001, against C(c, a) e^{−(cμ−λ)t} and ρ e^{−(μ−λ/R)t}
/// computed here by scanning.
#[test]
fn size_answers_slo_targets_exactly_where_theory_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let rows = sizes(
        dir.path(),
        &[
            "--lambda",
            "150",
            "--service",
            "exp(rate=3)",
            "--backend",
            "cpu",
            "--routing",
            "central,random",
            "--target",
            "p_wait_gt_0.1<=0.001",
        ],
    );
    let erlang_c = |c: u32, a: f64| {
        let mut b = 1.0;
        for k in 1..=c {
            b = a * b / (f64::from(k) + a * b);
        }
        let rho = a / f64::from(c);
        b / (1.0 - rho + rho * b)
    };
    let central = (51..)
        .find(|&c| erlang_c(c, 50.0) * (-(3.0 * f64::from(c) - 150.0) * 0.1).exp() <= 0.001)
        .unwrap();
    let random = (51..)
        .find(|&r| {
            let l = 150.0 / f64::from(r);
            l / 3.0 * (-(3.0 - l) * 0.1).exp() <= 0.001
        })
        .unwrap();
    assert_eq!(rows.len(), 2);
    for (row, (routing, want, method)) in rows.iter().zip([
        ("central", central, "exact:erlang_c"),
        ("random", random, "exact:mm1"),
    ]) {
        assert_eq!(row["routing"], routing, "{row}");
        assert_eq!(row["target"], "p_wait_gt_0.1<=0.001", "{row}");
        assert_eq!(row["method"], method, "{row}");
        assert_eq!(row["answer"], want, "{row}");
    }
}

/// Simulated where no formula is exact (jsq): the answer's P(W > t) meets
/// the bound and its neighbour's does not, each as the run measured it.
#[test]
fn size_answers_slo_targets_by_simulation_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let rows = sizes(
        dir.path(),
        &[
            "--lambda",
            "8",
            "--service",
            "exp(mean=1)",
            "--routing",
            "jsq",
            "--backend",
            "cpu",
            "--reps",
            "16",
            "--customers",
            "20000",
            "--warmup",
            "2000",
            "--target",
            "p_wait_gt_1<=0.05",
        ],
    );
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["target"], "p_wait_gt_1<=0.05", "{row}");
    let at = row["metric_at_answer"].as_f64().unwrap();
    assert!(at <= 0.05 && at > 0.0, "{row}");
    let n = row["answer"].as_u64().unwrap();
    assert!((9..=16).contains(&n), "{row}");
}
