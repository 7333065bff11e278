//! Overnight sweeps that survive: kill and resume, torn lines, Ctrl-C,
//! sharding and merge, provenance, `--from-meta`. Each test drives the real
//! binary on the CPU engine with tiny sizes.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use qsweep_core::output::{COLUMNS, TIMING_COLUMNS};

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

/// 20 points, one per engine call (reps above half a chunk), ~20 ms each.
const SMALL: &[&str] = &[
    "--backend",
    "cpu",
    "-j",
    "2",
    "--routing",
    "random,central",
    "--servers",
    "1,2,3,4,5",
    "--lambda",
    "0.5,0.7",
    "--service",
    "exp(mean=0.1)",
    "--reps",
    "40000",
    "--customers",
    "5",
    "--warmup",
    "0",
];

/// 60 points of the same kind: long enough to be stopped mid-run.
const LONG: &[&str] = &[
    "--backend",
    "cpu",
    "-j",
    "2",
    "--routing",
    "random,central",
    "--servers",
    "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
    "--lambda",
    "0.5,0.7",
    "--service",
    "exp(mean=0.1)",
    "--reps",
    "40000",
    "--customers",
    "8",
    "--warmup",
    "0",
];

fn qsweep(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run qsweep")
}

/// `qsweep run SPEC... EXTRA...`, which must succeed.
fn run_ok(dir: &Path, spec: &[&str], extra: &[&str]) -> Output {
    let args: Vec<&str> = ["run"].iter().chain(spec).chain(extra).copied().collect();
    let out = qsweep(dir, &args);
    assert!(
        out.status.success(),
        "qsweep {args:?} failed: {}",
        stderr(&out)
    );
    out
}

/// `qsweep ARGS...`, which must fail with `code`; returns standard error.
fn fails(dir: &Path, args: &[&str], code: i32) -> String {
    let out = qsweep(dir, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "qsweep {args:?}: {}",
        stderr(&out)
    );
    stderr(&out)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run_args<'a>(spec: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    ["run"].iter().chain(spec).chain(extra).copied().collect()
}

/// The CSV's rows with the timing columns blanked.
fn rows(path: &Path) -> Vec<Vec<String>> {
    let timing: Vec<usize> = TIMING_COLUMNS
        .iter()
        .map(|c| COLUMNS.iter().position(|k| k == c).unwrap())
        .collect();
    let mut r = csv::Reader::from_path(path).expect("read csv");
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, COLUMNS);
    r.records()
        .map(|rec| {
            let mut f: Vec<String> = rec.unwrap().iter().map(String::from).collect();
            assert_eq!(f.len(), COLUMNS.len());
            for &i in &timing {
                f[i].clear();
            }
            f
        })
        .collect()
}

fn points(rows: &[Vec<String>]) -> Vec<u32> {
    rows.iter().map(|r| r[0].parse().unwrap()).collect()
}

fn meta(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("meta file");
    serde_json::from_str(&text).expect("meta json")
}

/// Whole data rows in the file so far.
fn data_rows(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count().saturating_sub(1))
        .unwrap_or(0)
}

/// Starts `qsweep ARGS` and waits until `csv` has a data row.
fn start_and_wait_for_a_row(dir: &Path, args: &[&str], csv: &Path) -> std::process::Child {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn qsweep");
    let deadline = Instant::now() + Duration::from_secs(60);
    while data_rows(csv) < 1 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("qsweep ended ({status}) before writing a row");
        }
        assert!(Instant::now() < deadline, "no row after 60 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to).expect("copy");
}

#[test]
fn sigkill_mid_sweep_then_resume_equals_an_uninterrupted_run() {
    let dir = tempdir();
    let d = dir.path();
    let (reference, csv) = killed_after_some_rows(d, LONG, 60, "mid-sweep");
    assert_eq!(meta(&d.join("killed.meta.json"))["status"], "running");

    let out = run_ok(d, LONG, &["-o", "killed.csv", "--resume"]);
    assert!(stderr(&out).contains("; resuming: "), "{}", stderr(&out));
    assert_eq!(rows(&csv), reference);
    let m = meta(&d.join("killed.meta.json"));
    assert_eq!(m["status"], "complete");
    assert_eq!(m["points_done"], 60);
    assert_eq!(m["previous_runs"].as_array().unwrap().len(), 1);
    assert_eq!(m["previous_runs"][0]["status"], "running");
}

/// Runs `spec` to the end into `ref.csv` (its `points` rows, the
/// reference), then again into `killed.csv`, SIGKILLed once a row is written
/// and before the last (`when` says where that falls). Returns the
/// reference rows and the killed CSV's path.
fn killed_after_some_rows(
    d: &Path,
    spec: &[&str],
    points: usize,
    when: &str,
) -> (Vec<Vec<String>>, std::path::PathBuf) {
    run_ok(d, spec, &["-o", "ref.csv"]);
    let reference = rows(&d.join("ref.csv"));
    assert_eq!(reference.len(), points);
    let csv = d.join("killed.csv");
    let mut child = start_and_wait_for_a_row(d, &run_args(spec, &["-o", "killed.csv"]), &csv);
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    let partial = rows_lenient(&csv);
    assert!(
        (1..points).contains(&partial),
        "killed after {partial} rows: expected {when}"
    );
    (reference, csv)
}

/// Whole rows in a CSV that may end in a torn line.
fn rows_lenient(path: &Path) -> usize {
    let text = std::fs::read(path).unwrap();
    let whole = text.iter().filter(|&&c| c == b'\n').count();
    whole.saturating_sub(1)
}

#[test]
fn a_torn_last_line_is_truncated_and_its_point_redone() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["-o", "a.csv"]);
    let reference = rows(&d.join("a.csv"));
    let text = std::fs::read_to_string(d.join("a.csv")).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Header and rows 0..=4, then row 5 cut inside its quoted service field.
    let row5 = lines[6];
    let cut = row5.find("exp(mean").unwrap() + 4;
    for (name, torn) in [
        ("cut.csv", &row5[..cut]),
        ("no-newline.csv", row5.trim_end_matches('\n')),
    ] {
        let mut t: String = lines[..6].concat();
        t.push_str(torn);
        std::fs::write(d.join(name), t).unwrap();
        copy(
            &d.join("a.meta.json"),
            &d.join(name.replace(".csv", ".meta.json")),
        );
        let out = run_ok(d, SMALL, &["-o", name, "--resume"]);
        assert!(
            stderr(&out).contains("cut-short last line") && stderr(&out).contains("line 7"),
            "{}",
            stderr(&out)
        );
        assert_eq!(rows(&d.join(name)), reference, "{name}");
    }
}

#[test]
fn ctrl_c_keeps_a_valid_csv_says_how_to_resume_and_exits_130() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, LONG, &["-o", "ref.csv"]);
    let reference = rows(&d.join("ref.csv"));

    let csv = d.join("int.csv");
    let child = start_and_wait_for_a_row(d, &run_args(LONG, &["-o", "int.csv"]), &csv);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let done = rows(&csv).len();
    assert!((1..60).contains(&done), "{done} rows: {err}");
    assert!(err.contains("interrupted"), "{err}");
    let m = meta(&d.join("int.meta.json"));
    assert_eq!(m["status"], "interrupted");
    assert_eq!(m["points_done"], done);
    // The printed command line resumes it.
    let hint = err
        .lines()
        .skip_while(|l| !l.contains("To resume:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no resume line: {err}"))
        .trim()
        .to_string();
    assert!(
        hint.ends_with("--resume") && hint.contains("-o int.csv"),
        "{hint}"
    );
    let resumed = Command::new("sh")
        .args(["-c", &hint])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(rows(&csv), reference);
}

#[test]
fn shards_merge_into_the_unsharded_run() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["-o", "full.csv"]);
    let reference = rows(&d.join("full.csv"));
    for k in 0..3 {
        let shard = format!("{k}/3");
        let out = format!("piece-{k}.csv");
        run_ok(d, SMALL, &["--shard", &shard, "-o", &out]);
        let got = points(&rows(&d.join(&out)));
        let want: Vec<u32> = (0..20).filter(|p| p % 3 == k).collect();
        assert_eq!(got, want);
        assert_eq!(
            meta(&d.join(format!("piece-{k}.meta.json")))["shard"],
            shard
        );
    }
    let merge = |extra: &[&str]| {
        let mut args = vec![
            "merge",
            "merged.csv",
            "piece-2.csv",
            "piece-0.csv",
            "piece-1.csv",
        ];
        args.extend(extra);
        qsweep(d, &args)
    };
    let out = merge(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&d.join("merged.csv")), reference);
    let m = meta(&d.join("merged.meta.json"));
    assert_eq!(m["status"], "complete");
    assert_eq!(m["points_done"], 20);
    assert_eq!(m["shard"], serde_json::Value::Null);
    assert_eq!(m["pieces"].as_array().unwrap().len(), 3);
    assert_eq!(m["spec_hash"], meta(&d.join("full.meta.json"))["spec_hash"]);
    // Not over an existing file, unless --force.
    let out = merge(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    assert!(merge(&["--force"]).status.success());
    assert_eq!(rows(&d.join("merged.csv")), reference);
}

#[test]
fn merge_refuses_missing_doubled_foreign_or_metaless_pieces() {
    let dir = tempdir();
    let d = dir.path();
    for k in 0..3 {
        let (shard, out) = (format!("{k}/3"), format!("p{k}.csv"));
        run_ok(d, SMALL, &["--shard", &shard, "-o", &out]);
    }
    run_ok(
        d,
        SMALL,
        &["--shard", "2/3", "--seed", "2", "-o", "seed2.csv"],
    );
    copy(&d.join("p0.csv"), &d.join("again.csv"));
    copy(&d.join("p0.meta.json"), &d.join("again.meta.json"));
    copy(&d.join("p1.csv"), &d.join("bare.csv"));

    let e = fails(d, &["merge", "m.csv", "p0.csv", "p1.csv"], 2);
    assert!(e.contains("6 of 20 points missing (points 2, 5, 8"), "{e}");
    let e = fails(
        d,
        &["merge", "m.csv", "p0.csv", "p1.csv", "p2.csv", "again.csv"],
        2,
    );
    assert!(
        e.contains("point 0 is in both 'p0.csv' and 'again.csv'"),
        "{e}"
    );
    let e = fails(d, &["merge", "m.csv", "p0.csv", "p1.csv", "seed2.csv"], 2);
    assert!(
        e.contains("'seed2.csv' comes from a different spec") && e.contains("seed 2 vs 1"),
        "{e}"
    );
    let e = fails(d, &["merge", "m.csv", "p0.csv", "bare.csv", "p2.csv"], 2);
    assert!(e.contains("'bare.csv' has no 'bare.meta.json'"), "{e}");
    assert!(!d.join("m.csv").exists(), "nothing written on refusal");
    // An unfinished piece is named.
    let text = std::fs::read_to_string(d.join("p1.csv")).unwrap();
    let cut: String = text.split_inclusive('\n').take(3).collect();
    std::fs::write(d.join("short.csv"), cut).unwrap();
    let mut m = meta(&d.join("p1.meta.json"));
    m["status"] = "interrupted".into();
    std::fs::write(d.join("short.meta.json"), m.to_string()).unwrap();
    let e = fails(d, &["merge", "m.csv", "p0.csv", "short.csv", "p2.csv"], 2);
    assert!(
        e.contains("unfinished: 'short.csv' (interrupted, 2 of 7 rows)"),
        "{e}"
    );
}

#[test]
fn resume_refuses_another_spec_seed_or_shard() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["-o", "a.csv"]);
    let before = std::fs::read(d.join("a.csv")).unwrap();
    let resume = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = run_args(SMALL, &["-o", "a.csv", "--resume"]);
        v.extend(extra);
        v
    };
    let e = fails(d, &resume(&["--seed", "2"]), 2);
    assert!(
        e.contains("different spec (seed 1, this run has seed 2)"),
        "{e}"
    );
    let e = fails(d, &resume(&["--workers", "2"]), 2);
    assert!(e.contains("different spec (spec hash sha256:"), "{e}");
    let e = fails(d, &resume(&["--shard", "0/2"]), 2);
    assert!(e.contains("holds shard none, this run is shard 0/2"), "{e}");
    let e = fails(d, &resume(&["--force"]), 2);
    assert!(e.contains("--resume: given together with --force"), "{e}");
    // Settings that do not change results may differ; a complete file stays as it is.
    let out = qsweep(d, &resume(&["--adapter", "no-such-gpu"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(d.join("a.csv")).unwrap(), before);
    // Without --resume or --force an existing CSV is refused.
    let e = fails(d, &run_args(SMALL, &["-o", "a.csv"]), 2);
    assert!(e.contains("'a.csv' already exists"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn bad_shards_are_one_line_usage_errors() {
    let dir = tempdir();
    for bad in ["3/3", "1/0", "x", "-1/2", "1"] {
        let e = fails(
            dir.path(),
            &run_args(SMALL, &["--shard", bad, "-o", "x.csv"]),
            2,
        );
        assert!(e.starts_with("qsweep: error: --shard: "), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert!(!dir.path().join("x.csv").exists());
}

#[test]
fn meta_json_records_the_provenance() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["--shard", "1/4", "-o", "r.csv"]);
    let m = meta(&d.join("r.meta.json"));
    for key in [
        "format",
        "status",
        "csv",
        "spec_hash",
        "seed",
        "spec_toml",
        "spec_source",
        "spec_dir",
        "points_total",
        "shard",
        "points",
        "points_done",
        "backend",
        "adapter",
        "command",
        "cwd",
        "host",
        "qsweep_version",
        "git_revision",
        "engine",
        "started",
        "ended",
        "first_started",
        "previous_runs",
    ] {
        assert!(m.get(key).is_some(), "no {key} in {m}");
    }
    assert_eq!(m["format"], "qsweep-meta/1");
    assert_eq!(m["status"], "complete");
    assert_eq!(m["csv"], "r.csv");
    assert_eq!(m["seed"], 1);
    assert_eq!(m["shard"], "1/4");
    assert_eq!(
        (m["points_total"].as_u64(), m["points"].as_u64()),
        (Some(20), Some(5))
    );
    assert_eq!(m["points_done"], 5);
    assert_eq!(m["qsweep_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        (m["backend"].as_str(), m["engine"].as_str()),
        (Some("cpu"), Some("cpu"))
    );
    assert!(!m["git_revision"].as_str().unwrap().is_empty());
    assert!(!m["host"].as_str().unwrap().is_empty());
    let hash = m["spec_hash"].as_str().unwrap();
    assert!(hash.starts_with("sha256:") && hash.len() == 71, "{hash}");
    assert!(m["spec_toml"]
        .as_str()
        .unwrap()
        .contains("servers = [1, 2, 3, 4, 5]"));
    for t in ["started", "ended", "first_started"] {
        let s = m[t].as_str().unwrap();
        let b = s.as_bytes();
        assert!(
            s.len() == 20 && b[4] == b'-' && b[10] == b'T' && s.ends_with('Z'),
            "{t}: {s}"
        );
    }
    let cmd: Vec<&str> = m["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(&cmd[1..4], ["run", "--backend", "cpu"]);
}

#[test]
fn from_meta_reruns_the_same_sweep() {
    let dir = tempdir();
    let d = dir.path();
    let sub = d.join("night");
    std::fs::create_dir(&sub).unwrap();
    run_ok(d, SMALL, &["--shard", "0/2", "-o", "night/a.csv"]);
    let reference = rows(&sub.join("a.csv"));
    // From another directory, with only the output changed.
    let out = qsweep(
        &sub,
        &[
            "run",
            "--from-meta",
            "a.meta.json",
            "-o",
            "b.csv",
            "-j",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&sub.join("b.csv")), reference);
    let (a, b) = (
        meta(&sub.join("a.meta.json")),
        meta(&sub.join("b.meta.json")),
    );
    assert_eq!(a["spec_hash"], b["spec_hash"]);
    assert_eq!(b["shard"], "0/2");
    // Its CSV is the default output, so it is not overwritten...
    let e = fails(&sub, &["run", "--from-meta", "a.meta.json"], 2);
    assert!(e.contains("'a.csv' already exists"), "{e}");
    // ...but resumable from the meta alone.
    assert!(
        qsweep(d, &["run", "--from-meta", "night/a.meta.json", "--resume"])
            .status
            .success()
    );
    // The spec is the recorded one: no axis flags.
    let e = fails(
        d,
        &["run", "--from-meta", "night/a.meta.json", "--servers", "3"],
        2,
    );
    assert!(e.contains("expected no --servers"), "{e}");
}

#[test]
fn sigterm_from_a_scheduler_stops_like_ctrl_c() {
    let dir = tempdir();
    let d = dir.path();
    let csv = d.join("term.csv");
    let child = start_and_wait_for_a_row(d, &run_args(LONG, &["-o", "term.csv"]), &csv);
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let done = rows(&csv).len();
    assert!((1..60).contains(&done), "{done} rows");
    let m = meta(&d.join("term.meta.json"));
    assert_eq!(
        (m["status"].as_str(), m["points_done"].as_u64()),
        (Some("interrupted"), Some(done as u64))
    );
}

#[test]
fn a_second_run_on_the_same_csv_is_refused_while_the_first_runs() {
    // A job array that forgot a per-task -o: both --resume the same CSV.
    let dir = tempdir();
    let d = dir.path();
    let csv = d.join("same.csv");
    let mut first = start_and_wait_for_a_row(d, &run_args(LONG, &["-o", "same.csv"]), &csv);
    let e = fails(d, &run_args(LONG, &["-o", "same.csv", "--resume"]), 2);
    assert!(e.contains("being written by another qsweep run"), "{e}");
    first.kill().unwrap();
    first.wait().unwrap();
    // Once the first has gone, the CSV resumes as usual.
    run_ok(d, LONG, &["-o", "same.csv", "--resume"]);
    assert_eq!(data_rows(&csv), 60);
}

#[test]
fn force_replaces_the_old_csv_only_when_the_new_run_completes() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["-o", "r.csv"]);
    let old = std::fs::read(d.join("r.csv")).unwrap();
    let old_meta = std::fs::read(d.join("r.meta.json")).unwrap();
    // Interrupted: the old CSV and its meta are untouched; the new rows
    // are in r.csv.partial, and the printed command finishes them.
    let partial = d.join("r.csv.partial");
    let child = start_and_wait_for_a_row(d, &run_args(LONG, &["-o", "r.csv", "--force"]), &partial);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(std::fs::read(d.join("r.csv")).unwrap(), old);
    assert_eq!(std::fs::read(d.join("r.meta.json")).unwrap(), old_meta);
    assert!(err.contains("r.csv is untouched"), "{err}");
    let hint = err
        .lines()
        .skip_while(|l| !l.contains("To resume:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no resume line: {err}"))
        .trim()
        .to_string();
    assert!(
        hint.contains("-o r.csv.partial") && !hint.contains("--force"),
        "{hint}"
    );
    // The resume command finishes what --force started: its rows replace
    // r.csv (issue 25: they stayed in r.csv.partial).
    run_ok(d, LONG, &["-o", "r.csv.partial", "--resume"]);
    assert_eq!(data_rows(&d.join("r.csv")), 60);
    assert!(!d.join("r.csv.partial").exists());
    assert!(!d.join("r.csv.meta.json").exists());
    let m = meta(&d.join("r.meta.json"));
    assert_eq!(
        (&m["status"], &m["csv"]),
        (&"complete".into(), &"r.csv".into())
    );
    assert!(m.get("replaces").is_none(), "{m}");
    // Completed: the new CSV takes the old one's place, with its meta.
    run_ok(d, LONG, &["-o", "r.csv", "--force"]);
    assert_eq!(data_rows(&d.join("r.csv")), 60);
    assert!(!d.join("r.csv.partial").exists());
    assert_eq!(meta(&d.join("r.meta.json"))["status"], "complete");
    assert_eq!(meta(&d.join("r.meta.json"))["csv"], "r.csv");
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = tempdir();
    // Inputs with a CSV name, so the output-extension check does not
    // answer first: the input check must.
    let d = dir.path();
    std::fs::write(d.join("times.csv"), "0.1\n0.2\n0.4\n").unwrap();
    std::fs::write(
        d.join("s.csv"),
        "[sweep]\nrouting = [\"random\"]\nservers = [2]\nrho = [0.5]\nservice = [\"empirical(file=times.csv)\"]\n\n[run]\nreps = 4\ncustomers = 100\nwarmup = 0\n",
    )
    .unwrap();
    let before = std::fs::read(d.join("s.csv")).unwrap();
    for (out, what) in [
        ("s.csv", "the spec"),
        ("times.csv", "an empirical data file"),
        ("x.meta.json", ".meta.json"),
    ] {
        let e = fails(
            d,
            &["run", "s.csv", "-o", out, "--force", "--backend", "cpu"],
            2,
        );
        assert!(e.contains(what), "{out}: {e}");
    }
    assert_eq!(std::fs::read(d.join("s.csv")).unwrap(), before);
    assert_eq!(
        std::fs::read(d.join("times.csv")).unwrap(),
        b"0.1\n0.2\n0.4\n"
    );
}

#[test]
fn resume_and_from_meta_check_rows_and_spec_against_the_recorded_spec() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["-o", "r.csv", "--shard", "0/2"]);
    // A row whose axis values are not the spec's, under an intact meta.
    let text = std::fs::read_to_string(d.join("r.csv")).unwrap();
    let edited = text.replacen("exp(mean=0.1)", "exp(mean=0.2)", 1);
    assert_ne!(edited, text);
    std::fs::write(d.join("r.csv"), &edited).unwrap();
    let e = fails(
        d,
        &run_args(SMALL, &["-o", "r.csv", "--shard", "0/2", "--resume"]),
        2,
    );
    assert!(e.contains("differs from the spec's 'exp(mean=0.1)'"), "{e}");
    std::fs::write(d.join("r.csv"), &text).unwrap();
    // An edited spec_toml no longer matches the hash it carries.
    let m = std::fs::read_to_string(d.join("r.meta.json")).unwrap();
    std::fs::write(
        d.join("r.meta.json"),
        m.replacen("reps = 40000", "reps = 40001", 1),
    )
    .unwrap();
    let e = fails(
        d,
        &["run", "--from-meta", "r.meta.json", "-o", "again.csv"],
        2,
    );
    assert!(e.contains("not to the spec_hash"), "{e}");
}

/// Standard error of `child`, line by line as it comes.
fn stderr_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let err = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The customers done a `qsweep: progress:` line reports.
fn progress_customers(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("qsweep: progress: ")?;
    let field = rest.split(" · ").nth(1)?;
    field.split(' ').next()?.parse().ok()
}

/// Issue 25: under `--precision` the progress line said about twice the
/// customers the CSV holds (1.93e10 of 2.00e10 planned while far less was
/// run): a median at the zero atom (M/M/1 at ρ = 0.5, P(wait > 0) = 1/2)
/// fell in the histogram's underflow bin, and the point was simulated again
/// whole, work the progress counted and the CSV does not show. No progress
/// line now says more customers, done or planned, than the CSV's
/// replications × customers.
#[test]
fn precision_progress_never_counts_more_customers_than_the_csv_holds() {
    let dir = tempdir();
    let d = dir.path();
    let mut child = Command::new(BIN)
        .args([
            "run",
            "--backend",
            "cpu",
            "-j",
            "2",
            "--routing",
            "random",
            "--servers",
            "1",
            "--rho",
            "0.5",
            "--service",
            "exp(mean=1)",
            "--reps",
            "16",
            "--customers",
            "200000",
            "--warmup",
            "0",
            "--seed",
            "10",
            "--precision",
            "0.002",
            "-o",
            "p.csv",
        ])
        .current_dir(d)
        .env("QSWEEP_PROGRESS_SECONDS", "0.02")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    assert!(child.wait().unwrap().success());
    let all: Vec<String> = lines.iter().collect();
    let r = rows(&d.join("p.csv"));
    let col = |name: &str| COLUMNS.iter().position(|h| *h == name).unwrap();
    let customers = |row: &Vec<String>| {
        let n: f64 = row[col("reps")].parse().unwrap();
        let c: f64 = row[col("customers")].parse().unwrap();
        let w: f64 = row[col("warmup")].parse().unwrap();
        n * (c + w)
    };
    let in_csv: f64 = r.iter().map(customers).sum();
    let mut seen = 0;
    for line in &all {
        let Some(rest) = line.strip_prefix("qsweep: progress: ") else {
            continue;
        };
        let field = rest.split(" · ").nth(1).unwrap();
        let words: Vec<&str> = field.split(' ').collect();
        let (done, planned): (f64, f64) = (words[0].parse().unwrap(), words[2].parse().unwrap());
        // Three significant digits.
        assert!(
            done <= in_csv * 1.005 && planned <= in_csv * 1.005,
            "{line}: the CSV holds {in_csv:e} customers\n{all:#?}"
        );
        seen += 1;
    }
    assert!(seen >= 3, "{all:#?}");
}

/// One point of 2 × (2^32 − 1) customers: hours of work in one replication
/// pair, hence in one engine call.
fn enormous(backend: &str, out: &str) -> Vec<String> {
    [
        "run",
        "--backend",
        backend,
        "-j",
        "2",
        "--routing",
        "random",
        "--servers",
        "1",
        "--rho",
        "0.5",
        "--service",
        "exp(mean=1)",
        "--reps",
        "2",
        "--customers",
        "4294967295",
        "--warmup",
        "0",
        "-o",
        out,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Sends SIGINT to `child`, then returns its exit code and how long it took
/// to end.
fn interrupt(child: &mut std::process::Child) -> (Option<i32>, f64) {
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(kill.success());
    let deadline = sent + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), sent.elapsed().as_secs_f64());
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("still running 30 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn ctrl_c_stops_one_enormous_point_within_two_seconds_and_its_progress_moves() {
    let dir = tempdir();
    let d = dir.path();
    let mut child = Command::new(BIN)
        .args(enormous("cpu", "huge.csv"))
        .current_dir(d)
        .env("QSWEEP_PROGRESS_SECONDS", "0.2")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    // The progress lines count customers inside the replications.
    let mut seen: Vec<f64> = Vec::new();
    let mut all = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < 4 {
        let line = lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no progress within 60 s: {all:#?}"));
        if let Some(c) = progress_customers(&line) {
            seen.push(c);
        }
        all.push(line);
    }
    assert!(
        seen.windows(2).all(|w| w[1] > w[0]) && seen[0] < 1e10,
        "progress did not move: {all:#?}"
    );
    // A run this long says so before it starts.
    assert!(
        all.iter().any(|l| l.contains("this run will take about")),
        "{all:#?}"
    );
    let (code, took) = interrupt(&mut child);
    let rest: Vec<String> = lines.try_iter().collect();
    assert_eq!(code, Some(130), "{rest:#?}");
    assert!(took < 2.0, "took {took} s to stop");
    assert!(rest.iter().any(|l| l.contains("To resume:")), "{rest:#?}");
    assert_eq!(data_rows(&d.join("huge.csv")), 0);
    let m = meta(&d.join("huge.meta.json"));
    assert_eq!(m["status"], "interrupted");
    assert_eq!(m["points_done"], 0);
}

#[test]
fn ctrl_c_stops_one_enormous_point_on_the_gpu_within_two_seconds() {
    let adapters = qsweep(Path::new("."), &["adapters"]);
    if String::from_utf8_lossy(&adapters.stdout).contains("no GPU adapters") {
        eprintln!("skipped: no GPU adapter");
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let mut child = Command::new(BIN)
        .args(enormous("gpu", "huge.csv"))
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    // Past the banner, the engine is in its first call.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("a banner within 60 s");
        if line.starts_with("qsweep: 1 points") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let (code, took) = interrupt(&mut child);
    let rest: Vec<String> = lines.try_iter().collect();
    assert_eq!(code, Some(130), "{rest:#?}");
    assert!(took < 2.0, "took {took} s to stop");
    assert_eq!(meta(&d.join("huge.meta.json"))["status"], "interrupted");
}

/// 30 points that fit one engine call on the CPU (1920 replications, about
/// 4e7 customers), a few seconds in all.
const ONE_CALL: &[&str] = &[
    "--backend",
    "cpu",
    "-j",
    "2",
    "--routing",
    "random,central",
    "--servers",
    "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
    "--rho",
    "0.8",
    "--service",
    "exp(mean=1)",
    "--reps",
    "64",
    "--customers",
    "20000",
    "--warmup",
    "0",
];

#[test]
fn rows_of_one_engine_call_come_as_its_points_finish_and_survive_sigkill() {
    let dir = tempdir();
    let d = dir.path();
    let (reference, csv) = killed_after_some_rows(d, ONE_CALL, 30, "mid-call");
    run_ok(d, ONE_CALL, &["-o", "killed.csv", "--resume"]);
    assert_eq!(rows(&csv), reference);
}

#[test]
fn dry_run_shows_grid_customers_memory_and_time_and_writes_nothing() {
    let dir = tempdir();
    let d = dir.path();
    let out = run_ok(d, LONG, &["-o", "dry.csv", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    for want in [
        "nothing simulated, nothing written",
        "grid: 60 points (varying: routing random, central × servers 1, 2, 3, ..., 15 (15 values) \
         × lambda 0.5, 0.7; fixed: ",
        "customers: 1.920e7 in all",
        "memory: ",
        "limit ",
        "backend: cpu",
        "time: about ",
    ] {
        assert!(text.contains(want), "no '{want}' in:\n{text}");
    }
    let names: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    assert!(names.is_empty(), "{names:?}");
    // A shard and a resumed CSV count only their own points.
    let out = run_ok(d, LONG, &["-o", "dry.csv", "--dry-run", "--shard", "1/4"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("to run: 15 of them (this shard)"), "{text}");
    assert!(text.contains("customers: 4.800e6 in all"), "{text}");
}

#[test]
fn each_rows_seconds_are_its_own_points_engine_time() {
    // Both points share one engine call; jsq runs its replications one at
    // a time through a dispatch heap, random routing eight in lock step
    // through Lindley's recursion: over ten times the work per customer
    // (the shared call's time once was split by customer counts alone).
    let dir = tempdir();
    let d = dir.path();
    let args = [
        "--backend",
        "cpu",
        "-j",
        "2",
        "--routing",
        "random,jsq",
        "--servers",
        "15",
        "--rho",
        "0.8",
        "--service",
        "exp(mean=1)",
        "--reps",
        "128",
        "--customers",
        "20000",
        "--warmup",
        "0",
    ];
    run_ok(d, &args, &["-o", "s.csv"]);
    let mut rdr = csv::Reader::from_path(d.join("s.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    let col = h.iter().position(|c| c == "seconds").unwrap();
    let seconds: Vec<f64> = rdr
        .records()
        .map(|r| r.unwrap()[col].parse().unwrap())
        .collect();
    assert!(
        seconds[1] > 3.0 * seconds[0],
        "jsq {} s, random {} s",
        seconds[1],
        seconds[0]
    );
}

/// Whether a GPU adapter opens for the GPU signal tests; with none they
/// skip, unless `QSWEEP_REQUIRE_GPU=1` (CI) makes that a failure.
fn gpu_or_skip(test: &str) -> bool {
    match qsweep_gpu::GpuEngine::open(&Default::default()) {
        Ok(_) => true,
        Err(e) if std::env::var("QSWEEP_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("{test}: QSWEEP_REQUIRE_GPU=1 but no GPU engine: {e:#}")
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: no GPU adapter ({e:#})");
            false
        }
    }
}

/// Five one-server points of 20,000 replications of 5,000 customers on the
/// GPU, about a second each on lavapipe: engine calls of thousands of
/// replications, each over several passes of the loop budget.
const WIDE_GPU: &[&str] = &[
    "run",
    "--backend",
    "gpu",
    "--routing",
    "random",
    "--servers",
    "1",
    "--rho",
    "0.5,0.6,0.7,0.8,0.9",
    "--service",
    "exp(mean=1)",
    "--reps",
    "20000",
    "--customers",
    "5000",
    "--warmup",
    "0",
    "-o",
    "wide.csv",
];

/// Issue 25: on lavapipe Ctrl-C took 2–5 s under load against the promised
/// second (4.3 s measured beside a build). A stop is seen between passes
/// and the passes in flight are waited for: the flag was looked at before
/// the wait for the oldest pass, so a signal during that wait (where the
/// host spends its time) let one more pass be submitted, and the stop
/// waited for two, each a whole loop budget over thousands of replications.
/// Now the flag is looked at after that wait (at most the one queued pass
/// is left, the debug line says so), and a software adapter's passes are
/// cut to `SOFTWARE_PASS_SECONDS` by their measured time. Idle, the run
/// ends within 0.4 s of the signal; the bound leaves room for a loaded
/// 2-core machine (`interrupt::STOP_GRACE` stops it at once after 1 s).
#[test]
fn ctrl_c_stops_a_wide_gpu_run_within_a_second_keeping_its_rows() {
    if !gpu_or_skip("ctrl_c_stops_a_wide_gpu_run_within_a_second_keeping_its_rows") {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let csv = d.join("wide.csv");
    let mut child = Command::new(BIN)
        .args(WIDE_GPU)
        .current_dir(d)
        .env("QSWEEP_DEBUG_STOP", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while data_rows(&csv) < 1 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("qsweep ended ({status}) before writing a row");
        }
        assert!(Instant::now() < deadline, "no row after 120 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    // Inside the next point's calls.
    std::thread::sleep(Duration::from_millis(300));
    let (code, took) = interrupt(&mut child);
    let rest: Vec<String> = lines.try_iter().collect();
    eprintln!("stopped {took:.3} s after SIGINT: {rest:#?}");
    assert_eq!(code, Some(130), "{rest:#?}");
    assert!(took < 3.0, "took {took} s to stop: {rest:#?}");
    // What the stop waited for: the pass queued behind the one that had
    // just ended, no more.
    for line in rest
        .iter()
        .filter(|l| l.starts_with("qsweep: debug: stopped"))
    {
        let n: u32 = line
            .strip_prefix("qsweep: debug: stopped with ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(n <= 1, "{rest:#?}");
    }
    assert!(rest.iter().any(|l| l.contains("To resume:")), "{rest:#?}");
    let done = rows(&csv).len();
    assert!((1..5).contains(&done), "{done} rows: {rest:#?}");
    let m = meta(&d.join("wide.meta.json"));
    assert_eq!(m["status"], "interrupted");
    assert_eq!(m["points_done"], done);
}

/// Whether process `pid` catches SIGTERM yet (its handler is installed).
#[cfg(target_os = "linux")]
fn catches_sigterm(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (15 - 1)) != 0)
}

/// Whether process `pid` has mapped a file whose path contains `name`.
#[cfg(target_os = "linux")]
fn maps(pid: u32, name: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.contains(name))
}

/// Issue 25: a SIGTERM early in start-up exited 143 (the default action)
/// instead of 130. Sent as soon as the handler is installed, once the
/// Vulkan loader is mapped, and once a driver is (the adapter opening):
/// each time exit 130 and nothing written.
#[cfg(target_os = "linux")]
#[test]
fn sigterm_while_a_gpu_run_starts_exits_130() {
    if !gpu_or_skip("sigterm_while_a_gpu_run_starts_exits_130") {
        return;
    }
    type Moment = fn(u32) -> bool;
    let moments: [(&str, Moment); 3] = [
        ("handler installed", catches_sigterm),
        ("Vulkan loader mapped", |pid| {
            catches_sigterm(pid) && maps(pid, "libvulkan")
        }),
        ("driver mapped", |pid| {
            catches_sigterm(pid) && maps(pid, "libvulkan_")
        }),
    ];
    for (moment, ready) in moments {
        let dir = tempdir();
        let d = dir.path();
        let mut child = Command::new(BIN)
            .args(WIDE_GPU)
            .current_dir(d)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(30);
        // Past the moment (the adapter opened first) is still start-up.
        while !ready(pid) && !d.join("wide.meta.json").exists() {
            assert!(child.try_wait().unwrap().is_none(), "{moment}: ended");
            assert!(Instant::now() < deadline, "{moment}: not reached in 30 s");
            std::thread::sleep(Duration::from_micros(200));
        }
        let sent = Instant::now();
        let kill = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill -TERM");
        assert!(kill.success());
        let out = child.wait_with_output().unwrap();
        let took = sent.elapsed().as_secs_f64();
        let err = stderr(&out);
        eprintln!("{moment}: exit {:?} {took:.3} s after SIGTERM", out.status);
        assert_eq!(out.status.code(), Some(130), "{moment}: {err}");
        assert!(took < 3.0, "{moment}: took {took} s: {err}");
        assert!(err.contains("stop"), "{moment}: {err}");
        assert_eq!(data_rows(&d.join("wide.csv")), 0, "{moment}: {err}");
    }
}

/// Issue 25: `--force` on an output without an extension, interrupted, left
/// `plain.meta.json` describing the partial run (`plain.partial` had the
/// meta of `plain` itself). The partial rows are in `plain.partial.csv`
/// with their own meta; `plain` and its meta are untouched.
#[test]
fn an_interrupted_force_on_an_output_without_extension_keeps_its_meta() {
    let dir = tempdir();
    let d = dir.path();
    run_ok(d, SMALL, &["-o", "plain"]);
    let old = std::fs::read(d.join("plain")).unwrap();
    let old_meta = std::fs::read(d.join("plain.meta.json")).unwrap();
    let partial = d.join("plain.partial.csv");
    let child = start_and_wait_for_a_row(d, &run_args(LONG, &["-o", "plain", "--force"]), &partial);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(std::fs::read(d.join("plain")).unwrap(), old);
    assert_eq!(std::fs::read(d.join("plain.meta.json")).unwrap(), old_meta);
    let m = meta(&d.join("plain.partial.meta.json"));
    assert_eq!(m["status"], "interrupted", "{m}");
    assert_eq!(m["points_done"], rows(&partial).len(), "{m}");
}
