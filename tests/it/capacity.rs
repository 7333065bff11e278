//! Capacity (the `capacity` axis, K: at most K requests in a dyno or the
//! central queue, arrivals beyond refused): exact theory on both engines
//! (M/M/1/K, M/M/c/K, Erlang B at K = c), an independent event-by-event
//! reference where no formula exists (M/D/c/K), GPU against CPU replication
//! by replication in every heap placement and thinning, and the CLI
//! (columns, refusals, byte-identical CSVs without a capacity).
//!
//! Tolerances come from the run's own CI: |sim − exact| ≤ 1.5 × the 95%
//! Student t half-width over replications (≈ 2.9 standard errors), with the
//! half-width itself at most a stated fraction of the exact value, so a
//! test cannot pass by being noisy.

use std::process::Command;

use crate::common::{assert_mean_matches, describe, simulate};
use qsweep_core::contract::{Kernel, LawKind, PointParams, Thinning};
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::schedule::tiles_for_points;
use qsweep_core::engine::{Batch, Engine};
use qsweep_core::spec::GridPoint;
use qsweep_core::stats::PointStats;

/// A spec with one value per axis but `servers` and `capacity`.
#[allow(clippy::too_many_arguments)]
fn spec(
    routing: &str,
    servers: &str,
    rho: f64,
    service: &str,
    capacity: &str,
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
         capacity = [{capacity}]\n\
         \n\
         [run]\n\
         reps = {reps}\n\
         customers = {customers}\n\
         warmup = 2000\n\
         seed = {seed}\n"
    )
}

fn assert_block_matches(g: &GridPoint, s: &PointStats, exact: f64, frac: f64) {
    let sim = s.p_lost;
    let ci = s.p_lost_ci95.expect("a CI over replications");
    let what = format!(
        "{} K={:?}: P(block) sim {sim:.6} ± {ci:.6} exact {exact:.6} (z ≈ {:.2})",
        describe(g),
        g.capacity,
        (sim - exact) / (ci / 1.96)
    );
    eprintln!("{what}");
    assert!(ci <= frac * exact, "CI too wide to test: {what}");
    assert!((sim - exact).abs() <= 1.5 * ci, "{what}");
}

/// Simulates `toml`; each point's baseline must be `method`'s, and its
/// P(block) and admitted requests' mean wait (or, at K = c, no wait at all)
/// must match it.
fn check(toml: &str, engine: &mut dyn Engine, method: &str, frac: f64) {
    for (g, s, b) in simulate(toml, engine) {
        assert_eq!(b.method, method, "{}", describe(&g));
        assert_block_matches(&g, &s, b.p_lost.expect("an exact P(block)"), frac);
        let exact_mean = b.mean_wait.expect("an exact mean");
        if exact_mean == 0.0 {
            assert_eq!(
                s.mean_wait,
                0.0,
                "{}: a loss system never queues",
                describe(&g)
            );
            assert_eq!(s.p_wait, 0.0, "{}", describe(&g));
        } else {
            assert_mean_matches(&g, &s, exact_mean, frac);
        }
        crate::common::assert_clean(&g, &s, s.reps, 1);
    }
}

fn cpu() -> CpuEngine {
    CpuEngine::new(0)
}

// ---------------------------------------------------------------------------
// Exact theory on the CPU

/// M/M/1/K: one dyno alone and one of four (random routing thins the
/// stream to Poisson λ/R), below and above ρ = 1 (a capacity keeps any load
/// stable).
#[test]
fn mm1k_matches_exact_on_cpu() {
    for (rho, k) in [(0.8, "5, 20"), (1.5, "3")] {
        let toml = spec("random", "1, 4", rho, "exp(mean=1)", k, 64, 40_000, 31);
        check(&toml, &mut cpu(), "exact:mm1k", 0.1);
    }
}

/// M/M/c/K: a central queue of 10 servers, room for 5 more waiting, at
/// ρ = 0.95; and Erlang's loss system M/M/10/10 at ρ = 0.8.
#[test]
fn mmck_and_erlang_b_match_exact_on_cpu() {
    let toml = spec("central", "10", 0.95, "exp(mean=1)", "15", 64, 40_000, 32);
    check(&toml, &mut cpu(), "exact:mmck", 0.1);
    let toml = spec("central", "10", 0.8, "exp(mean=1)", "10", 64, 40_000, 33);
    check(&toml, &mut cpu(), "exact:erlang_b", 0.1);
}

/// Multi-worker dynos under random routing: each dyno is M/M/w/K.
#[test]
fn random_routing_to_multi_worker_dynos_is_mmck_per_dyno() {
    let toml = spec("random", "8", 0.9, "exp(mean=1)", "6", 64, 40_000, 34)
        .replace("[run]", "workers = [4]\n[run]");
    check(&toml, &mut cpu(), "exact:mmck", 0.1);
}

// ---------------------------------------------------------------------------
// An independent reference where no formula exists: M/D/c/K

/// FCFS c servers with at most `k` in system, Poisson arrivals at `lambda`,
/// deterministic service `d`, in f64, event by event: the departure times
/// of the requests in the system are kept and those before each arrival
/// removed, so the number in system is counted, not inferred. Returns
/// P(block) over `n` arrivals after `warmup`.
fn md_c_k_reference(lambda: f64, d: f64, c: usize, k: usize, n: u64, seed: u64) -> f64 {
    let mut rng = seed | 1;
    let mut uniform = || {
        // xorshift64*: independent of qsweep's streams.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        ((rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let warmup = 20_000;
    let mut t = 0.0f64;
    let mut in_system: Vec<f64> = Vec::new(); // departure times
    let mut free_at = vec![0.0f64; c];
    let (mut blocked, mut counted) = (0u64, 0u64);
    for i in 0..warmup + n {
        t += -uniform().ln() / lambda;
        in_system.retain(|&dep| dep > t);
        let full = in_system.len() >= k;
        if i >= warmup {
            counted += 1;
            blocked += u64::from(full);
        }
        if full {
            continue;
        }
        let (s, _) = free_at
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        let start = t.max(free_at[s]);
        free_at[s] = start + d;
        in_system.push(start + d);
    }
    blocked as f64 / counted as f64
}

/// M/D/3/6 at ρ = 0.9 and M/D/1/4 at ρ = 1.2 against the reference (run
/// long enough that its own error is a small part of qsweep's CI).
#[test]
fn deterministic_service_matches_an_event_by_event_reference() {
    for (routing, servers, rho, k, c) in [("central", 3, 0.9, 6, 3), ("random", 1, 1.2, 4, 1)] {
        let toml = spec(
            routing,
            &servers.to_string(),
            rho,
            "det(value=1)",
            &k.to_string(),
            64,
            20_000,
            35,
        );
        let (g, s, b) = simulate(&toml, &mut cpu()).remove(0);
        assert_eq!(b.method, "none");
        let reference = md_c_k_reference(g.lambda, 1.0, c, k, 20_000_000, 99);
        assert_block_matches(&g, &s, reference, 0.1);
    }
}

// ---------------------------------------------------------------------------
// The GPU engine against the same theory

#[test]
fn gpu_capacity_matches_exact_theory() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_capacity_matches_exact_theory") else {
        return;
    };
    let mm1k = spec("random", "1, 4", 0.9, "exp(mean=1)", "8", 64, 20_000, 41);
    check(&mm1k, &mut gpu, "exact:mm1k", 0.12);
    let mmck = spec("central", "10", 0.95, "exp(mean=1)", "15", 64, 20_000, 42);
    check(&mmck, &mut gpu, "exact:mmck", 0.12);
    let erlang_b = spec("central", "10", 0.8, "exp(mean=1)", "10", 64, 20_000, 43);
    check(&erlang_b, &mut gpu, "exact:erlang_b", 0.12);
}

// ---------------------------------------------------------------------------
// GPU = CPU, replication by replication

fn point(index: u32, servers: u32, route_n: u32, thinning: Thinning, k: u32) -> PointParams {
    // ρ = 0.95 at the queue: a thinned stream brings it 1/route_n of the
    // arrivals.
    let service_mean = 0.95 * servers as f32 * route_n.max(1) as f32;
    PointParams {
        arrival: crate::common::law(LawKind::Exp, 0, [1.0, 0.0, 0.0, 0.0]),
        service: crate::common::law(LawKind::Exp, 0, [service_mean, 0.0, 0.0, 0.0]),
        kernel: Kernel::KieferWolfowitz.code(),
        thinning: thinning.code(),
        servers,
        route_n,
        customers: 3000,
        warmup: 300,
        seed_lo: 91,
        seed_hi: 7,
        point_index: index,
        inv_hist_scale: 1.0 / service_mean,
        slo: [0.0, 0.5 * service_mean, service_mean, 3.0 * service_mean],
        system_limit: k,
        ..PointParams::default()
    }
    .with_ln_keep()
}

/// Every limited queue refuses the same requests and computes the same
/// waits on both engines: one dyno of a random and a round-robin stream,
/// central queues with small (fast) and large (storage) heaps, rings long
/// enough to be rebased many times, and loss systems (K = c); each over
/// several passes.
#[test]
fn gpu_refuses_the_requests_the_cpu_refuses() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_refuses_the_requests_the_cpu_refuses")
    else {
        return;
    };
    let params = [
        point(0, 1, 1, Thinning::None, 3),
        point(1, 1, 4, Thinning::Random, 6),
        point(2, 1, 4, Thinning::EveryNth, 6),
        point(3, 4, 1, Thinning::None, 4),
        point(4, 4, 1, Thinning::None, 12),
        point(5, 100, 1, Thinning::None, 140),
        point(6, 1, 1, Thinning::None, 300),
    ];
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
    let gpu_out = gpu.run(&batch).unwrap();
    let mut offset = 0;
    for t in &tiles {
        let p = &params[t.param_index as usize];
        let mut lost = 0u64;
        for k in 0..t.rep_count as usize {
            let (c, g) = (cpu_out.reps[offset + k], gpu_out.reps[offset + k]);
            let what = format!("point {} rep {k}: cpu {c:?} gpu {g:?}", t.param_index);
            assert_eq!(c.customers, g.customers, "{what}");
            assert_eq!(c.customers, p.customers, "{what}");
            assert_eq!(c.lost, g.lost, "{what}");
            assert_eq!(c.exceed, g.exceed, "{what}");
            let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.abs().max(1e-3);
            assert!(close(c.mean_wait, g.mean_wait), "{what}");
            assert!(close(c.p_wait, g.p_wait), "{what}");
            lost += u64::from(c.lost);
        }
        // The long ring (K = 300 at ρ = 0.95) may refuse none.
        if p.system_limit < 100 {
            assert!(lost > 0, "point {}: requests are refused", t.param_index);
        }
        offset += t.rep_count as usize;
    }
}

/// A capacity no queue reaches changes no wait: K = 32 at ρ = 0.5 (32 in
/// a 4-server queue has probability about 10⁻⁹) gives the unlimited
/// central queue's replications to the bit (the waits depend only on the
/// free-at times, which the ring never touches; K = 32 keeps the rebase
/// period, `rebase_period`, and so the f32 rounding, the same).
#[test]
fn an_unreachable_capacity_is_the_plain_queue() {
    let limited = PointParams {
        service: crate::common::law(LawKind::Exp, 0, [2.0, 0.0, 0.0, 0.0]),
        ..point(0, 4, 1, Thinning::None, 32)
    };
    let plain = PointParams {
        system_limit: 0,
        ..limited
    };
    let (tiles, slots) = tiles_for_points(1, 8);
    let table = vec![0.0f32];
    let run = |p: PointParams| {
        let params = [p];
        let batch = Batch {
            params: &params,
            tiles: &tiles,
            table: &table,
            slots,
        };
        CpuEngine::new(1).run(&batch).unwrap().reps
    };
    let (a, b) = (run(limited), run(plain));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.lost, 0);
        assert_eq!(x.mean_wait.to_bits(), y.mean_wait.to_bits());
        assert_eq!(x.exceed, y.exceed);
    }
}

// ---------------------------------------------------------------------------
// The CLI

fn qsweep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_qsweep"))
}

fn small_spec(dir: &std::path::Path, extra_sweep: &str) -> std::path::PathBuf {
    let path = dir.join("s.toml");
    let text = format!(
        "[sweep]\nrouting = [\"random\", \"central\"]\nservers = [4]\narrival = [\"exp\"]\n\
         rho = [0.8]\nservice = [\"exp(mean=1)\"]\n{extra_sweep}\n[run]\nreps = 8\n\
         customers = 5000\nwarmup = 500\nseed = 3\nbackend = \"cpu\"\n"
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

/// `capacity = ["none"]` is a spec without a capacity: the same CSV, byte
/// for byte but the timing columns, and no capacity columns.
#[test]
fn no_capacity_leaves_the_csv_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let plain = small_spec(dir.path(), "");
    let none = dir.path().join("none.toml");
    std::fs::write(
        &none,
        std::fs::read_to_string(&plain)
            .unwrap()
            .replace("[run]", "capacity = [\"none\"]\n[run]"),
    )
    .unwrap();
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    run_ok(&plain, &a, &[]);
    run_ok(&none, &b, &[]);
    let (h0, r0) = header_and_rows(&a);
    let (h1, r1) = header_and_rows(&b);
    assert_eq!(h0, h1);
    assert!(!h0.iter().any(|h| h == "capacity"));
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

/// With a capacity the row says K and what was refused, beside the exact
/// value; `--capacity` sets the axis from the command line.
#[test]
fn capacity_appends_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), "capacity = [\"none\", 6]\n");
    let out = dir.path().join("k.csv");
    run_ok(&spec, &out, &[]);
    let (h, rows) = header_and_rows(&out);
    assert_eq!(
        &h[h.len() - 4..],
        ["capacity", "p_block", "p_block_ci95", "analytic_p_block"]
    );
    assert_eq!(rows.len(), 4, "two routings × two capacities");
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    for r in &rows {
        let p: f64 = r[col("p_block")].parse().unwrap();
        if r[col("capacity")] == "none" {
            assert_eq!(p, 0.0, "{r:?}");
            assert_eq!(r[col("analytic_p_block")], "", "{r:?}");
        } else {
            assert_eq!(r[col("capacity")], "6");
            assert!(p > 0.0, "{r:?}");
            let exact: f64 = r[col("analytic_p_block")].parse().unwrap();
            assert!(exact > 0.0 && exact < 1.0, "{r:?}");
            let method = if r[col("routing")] == "central" {
                "exact:mmck"
            } else {
                "exact:mm1k"
            };
            assert_eq!(r[col("analytic_method")], method);
        }
    }
    let flag = dir.path().join("f.csv");
    run_ok(
        &small_spec(dir.path(), ""),
        &flag,
        &["--capacity", "none,6"],
    );
    let (h2, rows2) = header_and_rows(&flag);
    assert_eq!(h, h2);
    assert_eq!(rows2.len(), 4);
}

/// Bad capacity input: one line naming the field, exit 2, nothing written.
#[test]
fn bad_capacity_input_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path(), "");
    let out = dir.path().join("never.csv");
    for (args, field, says) in [
        (
            vec!["--capacity", "0"],
            "--capacity",
            "expected integers from 1",
        ),
        (
            vec!["--capacity", "lots"],
            "--capacity",
            "expected integers from 1",
        ),
        (vec!["--capacity", "70000"], "--capacity", "at most 65535"),
        (
            vec!["--capacity", "3", "--routing", "central"],
            "capacity",
            "expected a capacity >= 4",
        ),
        (
            vec!["--capacity", "5", "--routing", "lwl"],
            "capacity",
            "lwl",
        ),
        (
            vec!["--capacity", "5", "--routing", "central", "--routers", "2"],
            "capacity",
            "routers > 1",
        ),
        (
            vec!["--capacity", "5", "--patience", "exp(mean=1)"],
            "capacity",
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
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(field) && err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {out:?}");
    }
}

/// `qsweep size --target 'p_block<=…'`: the smallest fleet whose dynos
/// (random routing: M/M/1/K at λ/R) refuse at most the bound, against
/// P(block) = (1 − ρ) ρ^K / (1 − ρ^{K+1}) written out here; and the target
/// refused, naming what the spec lacks, without a capacity.
#[test]
fn size_finds_the_fleet_for_a_blocking_target() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "size",
        "--lambda",
        "150",
        "--service",
        "exp(rate=3)",
        "--routing",
        "random",
        "--backend",
        "cpu",
        "-q",
    ];
    let o = qsweep()
        .args(base)
        .args(["--capacity", "10", "--target", "p_block<=0.001"])
        .args(["-o", "sizes.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.path().join("sizes.json")).unwrap();
    let rows: serde_json::Value = serde_json::from_str(&text).unwrap();
    let row = &rows[0];
    let p_block = |r: u32| {
        let rho = 150.0 / f64::from(r) / 3.0;
        if (rho - 1.0f64).abs() < 1e-12 {
            1.0 / 11.0
        } else {
            (1.0 - rho) * rho.powi(10) / (1.0 - rho.powi(11))
        }
    };
    let want = (1..).find(|&r| p_block(r) <= 0.001).unwrap();
    assert_eq!(row["method"], "exact:mm1k", "{row}");
    assert_eq!(row["answer"], want, "{row}");
    let o = qsweep()
        .args(base)
        .args(["--target", "p_block<=0.001"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("p_block") && err.contains("capacity"), "{err}");
}
