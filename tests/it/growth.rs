//! Sweeps that keep going: dispatch queues grow instead of aborting the
//! sweep (issue 15, item 4), and a point that fails gets a row with an
//! error while the others are written, the run exiting with code 3 at the
//! end; `--resume` then runs only the failed points again.
//!
//! The library tests inject a failure with an engine that fails every call
//! holding one chosen point; the CLI tests run the real binary on the
//! issue's exact command (at a size that runs in about a second), on an
//! unstable jsq point under `--allow-unstable`, and on a point whose queue
//! outgrows the memory limit.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::{Batch, BatchOutput, Engine};
use qsweep_core::output::{column_index, COLUMNS};
use qsweep_core::provenance::{Meta, Status};
use qsweep_core::run::session::{Request, Session};
use qsweep_core::run::{self, resume, PointResult};
use qsweep_core::spec::{Spec, SweepArgs};

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

/// The CPU engine, failing every call that holds point `bad`.
struct FailOne {
    inner: CpuEngine,
    bad: u32,
    calls: usize,
}

impl Engine for FailOne {
    fn label(&self) -> String {
        "failone".into()
    }
    fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
        self.calls += 1;
        if batch.params.iter().any(|p| p.point_index == self.bad) {
            anyhow::bail!("injected failure");
        }
        self.inner.run(batch)
    }
}

fn sweep_args(out: Option<&Path>) -> SweepArgs {
    SweepArgs {
        axes: qsweep_core::spec::AxisArgs {
            routing: vec!["random,jsq".into()],
            servers: vec!["2,3".into()],
            rho: vec!["0.7".into()],
            service: vec!["exp(mean=1)".into()],
            ..qsweep_core::spec::AxisArgs::default()
        },
        reps: Some("16".into()),
        customers: Some("2000".into()),
        warmup: Some("200".into()),
        backend: Some("cpu".into()),
        out: out.map(Path::to_path_buf),
        ..SweepArgs::default()
    }
}

/// (point, mean wait, error) of every point reported by `run_points`.
fn reported(engine: &mut dyn Engine) -> Vec<(u32, f64, Option<String>)> {
    let spec = Spec::load(&sweep_args(None)).unwrap();
    let (prepared, table) = run::prepare(&spec, spec.points());
    let mut got = Vec::new();
    run::run_points(
        &prepared,
        &table,
        spec.run.reps,
        engine,
        &mut |r: PointResult| {
            got.push((r.point.grid.index, r.stats.mean_wait, r.error.clone()));
            Ok(())
        },
    )
    .unwrap();
    got
}

#[test]
fn an_engine_failing_one_point_fails_that_point_alone() {
    let clean = reported(&mut CpuEngine::new(1));
    assert_eq!(clean.len(), 4);
    let mut failing = FailOne {
        inner: CpuEngine::new(1),
        bad: 2,
        calls: 0,
    };
    let got = reported(&mut failing);
    // One call for all four points fails; each point then runs alone.
    assert_eq!(failing.calls, 5);
    assert_eq!(got.len(), 4);
    for (g, c) in got.iter().zip(&clean) {
        assert_eq!(g.0, c.0);
        if g.0 == 2 {
            let e = g.2.as_deref().expect("point 2 failed");
            assert!(
                e.starts_with("failone failed on grid points 2..=2 (first: routing=jsq servers=2")
                    && e.ends_with("injected failure"),
                "{e}"
            );
        } else {
            // The others, as if nothing had failed.
            assert_eq!((g.1, &g.2), (c.1, &None));
        }
    }
}

/// Runs a session of `args` on `engine` to its end; the session's result
/// and the points it reports as failed.
fn session_run(args: &SweepArgs, resume: bool, engine: Box<dyn Engine>) -> (Result<()>, Vec<u32>) {
    let mut session = Session::open(&Request {
        sweep: args,
        resume,
        shard: None,
        from_meta: None,
    })
    .unwrap();
    let mut engine = engine;
    let todo = session.begin(&engine.label(), &|_| {}).unwrap();
    let table = session.table.clone();
    let reps = session.spec.run.reps;
    let result = resume::run_surviving(
        todo,
        &table,
        reps,
        &mut engine,
        None,
        &mut |r: PointResult<'_>, label: &str| session.write(&r, label).map(|_| ()),
        &AtomicBool::new(false),
    );
    let result = session.finish(result, &|m| eprintln!("{m}"));
    (result, session.failed_points())
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn field(line: &str, name: &str) -> String {
    let rec = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap();
    rec[column_index(name).unwrap()].to_string()
}

#[test]
fn a_failed_point_gets_a_row_and_resume_runs_only_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let args = sweep_args(Some(&out));
    let failing = FailOne {
        inner: CpuEngine::new(1),
        bad: 1,
        calls: 0,
    };
    let (result, failed) = session_run(&args, false, Box::new(failing));
    result.unwrap();
    assert_eq!(failed, [1]);
    let first = lines(&out);
    assert_eq!(first.len(), 5, "a header and four rows");
    assert_eq!(first[0], COLUMNS.join(","));
    let row1 = &first[2];
    assert_eq!(field(row1, "point"), "1");
    assert!(field(row1, "error").ends_with("injected failure"));
    // No statistics for it; its axes, baseline and timing stay.
    for stat in [
        "mean_wait",
        "mean_wait_ci95",
        "p_wait",
        "p99_wait",
        "max_wait",
    ] {
        assert_eq!(field(row1, stat), "", "{stat}");
    }
    assert_eq!(field(row1, "rho"), "0.7");
    assert_eq!(
        field(row1, "analytic_method"),
        field(&first[1], "analytic_method")
    );
    for row in [&first[1], &first[3], &first[4]] {
        assert_eq!(field(row, "error"), "");
        assert!(!field(row, "mean_wait").is_empty());
    }
    // jsq rows say how far the queue grew; random rows cannot.
    assert_eq!(field(&first[1], "max_in_system"), "");
    assert!(field(&first[3], "max_in_system").parse::<u32>().unwrap() > 0);
    let meta = Meta::read(&qsweep_core::provenance::meta_path(&out)).unwrap();
    assert_eq!(meta.run.status, Status::Complete);
    assert_eq!((meta.points_done, meta.failed_points.clone()), (4, vec![1]));

    // --resume runs point 1 alone; the other rows stay as they were.
    let (result, failed) = session_run(&args, true, Box::new(CpuEngine::new(1)));
    result.unwrap();
    assert!(failed.is_empty());
    let second = lines(&out);
    assert_eq!(second.len(), 5);
    assert_eq!(
        [&second[1], &second[2], &second[3]],
        [&first[1], &first[3], &first[4]]
    );
    assert_eq!(field(&second[4], "point"), "1");
    assert_eq!(field(&second[4], "error"), "");
    let meta = Meta::read(&qsweep_core::provenance::meta_path(&out)).unwrap();
    assert_eq!((meta.run.points_run, meta.points_done), (1, 4));
    assert!(meta.failed_points.is_empty());
    // The rerun row is the row a clean run writes for point 1.
    let once = dir.path().join("once.csv");
    let (result, _) = session_run(&sweep_args(Some(&once)), false, Box::new(CpuEngine::new(1)));
    result.unwrap();
    let timing = ["seconds", "customers_per_s"].map(|c| column_index(c).unwrap());
    let strip = |line: &str| -> Vec<String> {
        let rec = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap();
        rec.iter()
            .enumerate()
            .filter(|(i, _)| !timing.contains(i))
            .map(|(_, f)| f.to_string())
            .collect()
    };
    assert_eq!(strip(&second[4]), strip(&lines(&once)[2]));
}

// ---------------------------------------------------------------------------
// The binary.

fn qsweep(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("run")
        .args(args)
        .args(["--backend", "cpu", "--threads", "2"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("qsweep runs")
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The CSV's rows as maps of column → value.
fn rows(p: &Path) -> Vec<std::collections::HashMap<String, String>> {
    csv::Reader::from_path(p)
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

/// The issue's command, which stopped at point 3 ("outgrew the dispatch
/// kernel's capacity of 2052"), at 150000 customers and 16 replications:
/// point 3's queue passes 2052 requests and grows; every row is written.
#[test]
fn the_issue_command_runs_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--routing",
        "central,jsq,random",
        "--servers",
        "2",
        "--rho",
        "0.9,0.99",
        "--service",
        "hyperexp(scv=10,mean=1)",
        "--customers",
        "150000",
        "--reps",
        "16",
        "--warmup",
        "5000",
        "-o",
        "r.csv",
    ];
    let out = qsweep(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = rows(&dir.path().join("r.csv"));
    assert_eq!(r.len(), 6);
    for row in &r {
        assert_eq!(row["error"], "", "point {}", row["point"]);
        assert!(!row["mean_wait"].is_empty());
        let dynamic = row["routing"] == "jsq";
        assert_eq!(row["max_in_system"].is_empty(), !dynamic, "{row:?}");
    }
    let peak: u32 = r[3]["max_in_system"].parse().unwrap();
    assert!(
        peak > 2052,
        "point 3 held at most {peak}: no growth was needed"
    );
    // Nothing left for --resume.
    let args: Vec<&str> = args.iter().copied().chain(["--resume"]).collect();
    let again = qsweep(dir.path(), &args);
    assert_eq!(again.status.code(), Some(0), "{}", show(&again));
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing left to run"));
}

/// An unstable jsq point under --allow-unstable: its row reports how far the
/// queue grew, about 20000 (1 − 1/1.2) = 3333 requests, past the first
/// capacity (2 R + 512) and the rebase threshold (2 R + 2048 = 2052).
#[test]
fn an_unstable_jsq_point_reports_its_growth() {
    let dir = tempfile::tempdir().unwrap();
    let out = qsweep(
        dir.path(),
        &[
            "--routing",
            "jsq",
            "--servers",
            "2",
            "--rho",
            "0.5,1.2",
            "--allow-unstable",
            "--customers",
            "20000",
            "--reps",
            "8",
            "--warmup",
            "0",
            "-o",
            "u.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = rows(&dir.path().join("u.csv"));
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0]["stable"].as_str(), r[1]["stable"].as_str()),
        ("true", "false")
    );
    let peak: Vec<f64> = r
        .iter()
        .map(|x| x["max_in_system"].parse().unwrap())
        .collect();
    assert!(peak[0] < 100.0, "{peak:?}");
    // Arrivals minus departures after n arrivals: mean n (1 − 1/rho),
    // standard deviation sqrt(n (1 + 1/rho)) = 190; the peak over 8
    // replications is within a few of them.
    let (n, rho): (f64, f64) = (20000.0, 1.2);
    let sd = (n * (1.0 + 1.0 / rho)).sqrt();
    assert!(
        (peak[1] - n * (1.0 - 1.0 / rho)).abs() < 5.0 * sd,
        "{peak:?}"
    );
    assert_eq!(r[1]["error"], "");
    assert!(r[1]["mean_wait"].parse::<f64>().unwrap() > 100.0);
}

/// A point whose queue outgrows the memory limit (central with 600 routers
/// and 512 servers starts above 16 MiB of state, so it cannot grow, and at
/// rho 2 overflows at once) gets a row with the error; the stable point
/// beside it is written; the run exits with 3 and the meta lists the
/// failed point. --resume runs only that point again (and fails again).
#[test]
fn a_point_over_the_memory_limit_exits_3_with_every_row_written() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--routing",
        "central",
        "--routers",
        "600",
        "--servers",
        "512",
        "--rho",
        "0.5,2",
        "--allow-unstable",
        "--customers",
        "20000",
        "--reps",
        "2",
        "--warmup",
        "0",
        "-o",
        "m.csv",
    ];
    let out = qsweep(dir.path(), &args);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("qsweep: point 1 failed: grid point 1 (routing=central servers=512")
            && stderr.contains("outgrew the memory limit of 17.6 MiB of dispatch state")
            && stderr.contains("1 of 2 points failed")
            && stderr.contains("--resume runs them again"),
        "{stderr}"
    );
    let csv = dir.path().join("m.csv");
    let before = std::fs::read_to_string(&csv).unwrap();
    let r = rows(&csv);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["error"], "");
    assert!(!r[0]["mean_wait"].is_empty());
    assert!(r[1]["error"].contains("a capacity of 1536 requests) in 2 of 2 replications"));
    assert_eq!(
        (r[1]["mean_wait"].as_str(), r[1]["p99_wait"].as_str()),
        ("", "")
    );
    assert_eq!(r[1]["max_in_system"], "1536");
    let meta = Meta::read(&dir.path().join("m.meta.json")).unwrap();
    assert_eq!(meta.failed_points, [1]);
    assert_eq!(meta.run.status, Status::Complete);

    let args: Vec<&str> = args.iter().copied().chain(["--resume"]).collect();
    let again = qsweep(dir.path(), &args);
    assert_eq!(again.status.code(), Some(3), "{}", show(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr)
            .contains("resume: running the failed points again (1)"),
        "{}",
        show(&again)
    );
    let after = std::fs::read_to_string(&csv).unwrap();
    // Point 0's row untouched, point 1's written again, the same.
    assert_eq!(after.lines().nth(1), before.lines().nth(1));
    let strip = |s: &str| -> String {
        let rec = rows_of(s);
        rec["error"].clone()
    };
    assert_eq!(
        strip(after.lines().nth(2).unwrap()),
        strip(before.lines().nth(2).unwrap())
    );
    let meta = Meta::read(&dir.path().join("m.meta.json")).unwrap();
    assert_eq!(
        (meta.run.points_run, meta.failed_points.clone()),
        (1, vec![1])
    );
    assert_eq!(meta.previous_runs.len(), 1);
}

/// One CSV line (without the header) as column → value.
fn rows_of(line: &str) -> std::collections::HashMap<String, String> {
    let rec = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap();
    COLUMNS
        .iter()
        .zip(rec.iter())
        .map(|(c, v)| (c.to_string(), v.to_string()))
        .collect()
}
