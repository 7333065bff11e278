//! The hostile-input findings of issue 25, one test each: bad input gets one
//! line and exit 2, nothing already written is lost or overwritten, no
//! panic, no hang. Every simulation is tiny (CPU engine, a few hundred
//! customers); a command that could block (a FIFO, a huge input) runs under
//! a timeout that fails the test instead of hanging the suite.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

const SPEC: &str = "[sweep]\nrouting = [\"random\"]\nservers = [2]\nrho = [0.5, 0.6]\n\
                    service = [\"exp(mean=1)\"]\n\n[run]\nreps = 4\ncustomers = 200\n\
                    warmup = 10\nbackend = \"cpu\"\nthreads = 1\n";

fn qsweep_in(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir).stdin(Stdio::null());
    c
}

/// `qsweep <args>` in `dir`, killed (and the test failed) after `secs`.
fn qsweep_timed(dir: &Path, args: &[&str], secs: u64) -> Output {
    let mut child = qsweep_in(dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qsweep starts");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "qsweep {args:?} did not finish within {secs} s (a hang)\n{}",
                show(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn qsweep(dir: &Path, args: &[&str]) -> Output {
    qsweep_timed(dir, args, 120)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", show(out));
}

/// Exit 2 with one `qsweep: error:` line that names every one of `names`.
fn usage_error(out: &Output, names: &[&str]) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", show(out));
    let lines: Vec<String> = text(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("qsweep: backend") && !l.starts_with("qsweep: note"))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 1, "one line expected: {}", show(out));
    assert!(lines[0].starts_with("qsweep: error: "), "{}", show(out));
    for n in names {
        assert!(lines[0].contains(n), "'{n}' not named: {}", show(out));
    }
    lines[0].clone()
}

fn no_panic(out: &Output) {
    let e = text(&out.stderr);
    assert!(!e.contains("panicked"), "{}", show(out));
    assert_ne!(out.status.code(), Some(101), "{}", show(out));
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, SPEC).unwrap();
    (dir, spec)
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn meta(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap()
}

// ---- data loss ----

#[test]
fn force_over_an_output_without_extension_keeps_its_meta() {
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(d, &["run", "s.toml", "-o", "plain", "-q"]));
    ok(&qsweep(
        d,
        &["run", "s.toml", "-o", "plain", "--force", "-q"],
    ));
    let m = d.join("plain.meta.json");
    assert!(m.exists(), "--force deleted plain.meta.json");
    let m = meta(&m);
    assert_eq!(m["csv"], "plain", "{m}");
    assert_eq!(m["status"], "complete", "{m}");
    assert!(!d.join("plain.partial").exists());
    assert!(!d.join("plain.partial.csv").exists());
}

#[test]
fn hist_is_never_the_spec_the_output_or_stdout() {
    let (dir, spec) = setup();
    let d = dir.path();
    let o = qsweep(
        d,
        &[
            "run", "s.toml", "-o", "r.csv", "--hist", "s.toml", "--force",
        ],
    );
    usage_error(&o, &["--hist", "s.toml", "spec"]);
    assert_eq!(read(&spec), SPEC, "the spec was overwritten");
    let o = qsweep(
        d,
        &["run", "s.toml", "-o", "r.csv", "--hist", "r.meta.json"],
    );
    usage_error(&o, &["--hist", "r.meta.json"]);
    let o = qsweep(d, &["run", "s.toml", "-o", "r.csv", "--hist", "-"]);
    usage_error(&o, &["--hist", "'-'"]);
    assert!(!d.join("-").exists(), "--hist - made a file named -");
    assert!(!d.join("r.csv").exists());
}

#[test]
fn hist_in_a_missing_folder_is_refused_before_simulating() {
    let (dir, _) = setup();
    let d = dir.path();
    let o = qsweep(
        d,
        &["run", "s.toml", "-o", "r.csv", "--hist", "no/such/h.csv"],
    );
    usage_error(&o, &["--hist", "no/such/h.csv"]);
    assert!(
        !d.join("r.csv").exists(),
        "simulated before refusing --hist"
    );
}

#[test]
fn a_fifo_or_a_folder_as_output_is_refused_and_kept() {
    let (dir, _) = setup();
    let d = dir.path();
    let fifo = d.join("f.csv");
    mkfifo(&fifo);
    let o = qsweep_timed(d, &["run", "s.toml", "-o", "f.csv", "--force", "-q"], 30);
    usage_error(&o, &["out", "f.csv", "FIFO"]);
    assert!(is_fifo(&fifo), "the FIFO was replaced");
    std::fs::create_dir(d.join("dir")).unwrap();
    let o = qsweep_timed(d, &["run", "s.toml", "-o", "dir", "--force"], 30);
    usage_error(&o, &["out", "dir", "directory"]);
    assert!(!d.join("dir.partial").exists(), "simulated before refusing");
    mkfifo(&d.join("g.svg"));
    ok(&qsweep(d, &["run", "s.toml", "-o", "r.csv", "-q"]));
    let o = qsweep_timed(d, &["plot", "r.csv", "-o", "g.svg", "--force"], 30);
    usage_error(&o, &["g.svg", "FIFO"]);
}

#[test]
fn a_meta_without_its_csv_is_not_overwritten_by_run_or_merge() {
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::write(d.join("r.meta.json"), "precious").unwrap();
    let o = qsweep(d, &["run", "s.toml", "-o", "r.csv", "-q"]);
    usage_error(&o, &["r.meta.json", "--force"]);
    assert_eq!(read(&d.join("r.meta.json")), "precious");
    assert!(!d.join("r.csv").exists());

    ok(&qsweep(d, &["run", "s.toml", "-o", "p.csv", "-q"]));
    std::fs::write(d.join("m.meta.json"), "precious").unwrap();
    let o = qsweep(d, &["merge", "m.csv", "p.csv"]);
    usage_error(&o, &["m.meta.json", "--force"]);
    assert_eq!(read(&d.join("m.meta.json")), "precious");
}

/// Two shards of [`SPEC`] as p0.csv and p1.csv.
fn pieces(d: &Path) {
    for k in 0..2 {
        let shard = format!("{k}/2");
        let out = format!("p{k}.csv");
        ok(&qsweep(
            d,
            &["run", "s.toml", "--shard", &shard, "-o", &out, "-q"],
        ));
    }
}

#[test]
fn merge_never_writes_into_a_meta_file_or_a_json_name() {
    let (dir, _) = setup();
    let d = dir.path();
    pieces(d);
    let before = read(&d.join("p0.meta.json"));
    let o = qsweep(d, &["merge", "p0.meta.json", "p0.csv", "p1.csv", "--force"]);
    usage_error(&o, &["p0.meta.json"]);
    assert_eq!(read(&d.join("p0.meta.json")), before);
    let o = qsweep(d, &["merge", "p0", "p0.csv", "p1.csv", "--force"]);
    usage_error(&o, &["p0.meta.json"]);
    assert_eq!(read(&d.join("p0.meta.json")), before);
    let o = qsweep(d, &["merge", "r.json", "p0.csv", "p1.csv"]);
    usage_error(&o, &["r.json", "CSV"]);
    assert!(!d.join("r.json").exists());
    ok(&qsweep(d, &["merge", "r.csv", "p0.csv", "p1.csv"]));
}

#[test]
fn from_meta_does_not_trust_an_edited_csv_field() {
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(d, &["run", "s.toml", "-o", "r.csv", "-q"]));
    std::fs::write(d.join("victim.txt"), "keep me").unwrap();
    let mp = d.join("r.meta.json");
    let mut m = meta(&mp);
    m["csv"] = "victim.txt".into();
    std::fs::write(&mp, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let o = qsweep(d, &["run", "--from-meta", "r.meta.json", "--force", "-q"]);
    usage_error(&o, &["--from-meta", "victim.txt"]);
    assert_eq!(read(&d.join("victim.txt")), "keep me");
}

// ---- panics ----

#[test]
fn merge_of_a_piece_claiming_more_points_than_its_grid_is_refused() {
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(d, &["run", "s.toml", "-o", "p.csv", "-q"]));
    let mp = d.join("p.meta.json");
    let mut m = meta(&mp);
    m["points_total"] = 3.into();
    m["points"] = 3.into();
    std::fs::write(&mp, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let csv = read(&d.join("p.csv"));
    let last = csv.lines().last().unwrap();
    let extra = format!("2{}", &last[last.find(',').unwrap()..]);
    std::fs::write(d.join("p.csv"), format!("{csv}{extra}\n")).unwrap();
    let o = qsweep(d, &["merge", "m.csv", "p.csv"]);
    no_panic(&o);
    usage_error(&o, &["p.meta.json", "3"]);
}

#[test]
fn a_closed_stdout_ends_quietly_without_a_panic() {
    let (dir, _) = setup();
    let d = dir.path();
    for args in [&["analytic"][..], &["completions", "bash"], &["man"]] {
        let mut child = qsweep_in(d, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        no_panic(&o);
        assert!(
            matches!(o.status.code(), Some(0) | Some(141)),
            "{args:?}: {}",
            show(&o)
        );
        let e = text(&o.stderr);
        assert!(!e.contains("error"), "{args:?}: {}", show(&o));
    }
}

#[test]
fn a_full_stdout_is_one_line_not_a_panic() {
    let (dir, _) = setup();
    let d = dir.path();
    for args in [
        &["completions", "bash"][..],
        &["analytic"],
        &["run", "s.toml", "-o", "r.csv", "-q"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = qsweep_in(d, args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        no_panic(&o);
        assert!(!o.status.success(), "{args:?}: {}", show(&o));
        let e = text(&o.stderr);
        let errors: Vec<&str> = e.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {}", show(&o));
        assert!(errors[0].contains("stdout"), "{args:?}: {}", show(&o));
    }
    // The CSV was complete before the summary failed.
    assert_eq!(meta(&d.join("r.meta.json"))["status"], "complete");
}

#[test]
fn a_stream_to_a_closed_stdout_gives_no_resume_hint_that_cannot_work() {
    let (dir, _) = setup();
    let d = dir.path();
    let mut child = qsweep_in(d, &["run", "s.toml", "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(141), "{}", show(&o));
    let e = text(&o.stderr);
    assert!(!e.contains("--resume"), "{}", show(&o));
    assert!(e.contains("-o FILE"), "{}", show(&o));
}

// ---- silently wrong ----

#[test]
fn a_target_only_an_infinite_fleet_meets_is_refused() {
    let (dir, _) = setup();
    let o = qsweep(
        dir.path(),
        &[
            "size",
            "--routing",
            "central",
            "--lambda",
            "1",
            "--target",
            "mean_wait<=0",
            "-q",
        ],
    );
    usage_error(&o, &["--target", "mean_wait<=0", "infinite"]);
}

#[test]
fn resume_refuses_rows_that_contradict_the_spec_or_hold_garbage() {
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(d, &["run", "s.toml", "-o", "r.csv", "-q"]));
    let csv = read(&d.join("r.csv"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for (column, value) in [
        ("customers", "5"),
        ("reps", "999"),
        ("mean_wait", "not-a-number"),
    ] {
        let c = header.iter().position(|h| *h == column).unwrap();
        let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
        // Only the first row (the second stays whole), and only its field c:
        // these rows have no quoted fields before the laws' column.
        let mut fields: Vec<String> = lines[1].split(',').map(str::to_string).collect();
        assert_eq!(fields.len(), header.len(), "unquoted test row expected");
        fields[c] = value.to_string();
        lines[1] = fields.join(",");
        std::fs::write(d.join("r.csv"), lines.join("\n") + "\n").unwrap();
        let o = qsweep(d, &["run", "s.toml", "-o", "r.csv", "--resume", "-q"]);
        usage_error(&o, &["r.csv", column, value]);
    }
}

#[test]
fn markdown_cells_keep_their_pipes_and_backslashes() {
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::write(d.join("m.csv"), "a,b\n\"x\\|y\",1\n").unwrap();
    ok(&qsweep(d, &["export", "m.csv", "m.md"]));
    let md = read(&d.join("m.md"));
    assert!(md.contains("| x\\\\\\|y | 1 |"), "{md}");
}

#[test]
fn control_characters_in_a_title_leave_the_svg_well_formed() {
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(d, &["run", "s.toml", "-o", "r.csv", "-q"]));
    ok(&qsweep(
        d,
        &[
            "plot",
            "r.csv",
            "-o",
            "f.svg",
            "--title",
            "a\u{1}b\u{1b}[31mc",
        ],
    ));
    let svg = read(&d.join("f.svg"));
    let bad: Vec<char> = svg
        .chars()
        .filter(|&c| c < ' ' && !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    assert!(bad.is_empty(), "XML-invalid characters {bad:?} in the SVG");
    assert!(svg.contains("ab[31mc"), "the title's text is kept");
}

// ---- hangs ----

#[test]
fn fifos_as_inputs_are_refused_not_waited_on() {
    let (dir, _) = setup();
    let d = dir.path();
    mkfifo(&d.join("fifo"));
    let o = qsweep_timed(d, &["run", "fifo", "-o", "r.csv"], 30);
    usage_error(&o, &["fifo", "FIFO"]);
    let o = qsweep_timed(d, &["plot", "fifo", "-o", "f.svg"], 30);
    usage_error(&o, &["fifo", "FIFO"]);
    let o = qsweep_timed(
        d,
        &[
            "run",
            "s.toml",
            "--service",
            "empirical(file=fifo)",
            "-o",
            "r.csv",
        ],
        30,
    );
    usage_error(&o, &["fifo", "FIFO"]);
    assert!(is_fifo(&d.join("fifo")));
}

#[test]
fn bench_refuses_seconds_it_cannot_finish() {
    let (dir, _) = setup();
    let o = qsweep_timed(
        dir.path(),
        &["bench", "--backend", "cpu", "--seconds", "1e300"],
        30,
    );
    usage_error(&o, &["--seconds", "3600"]);
}

#[test]
fn erlang_c_for_billions_of_servers_is_instant() {
    let (dir, _) = setup();
    let o = qsweep_timed(
        dir.path(),
        &[
            "analytic",
            "--routing",
            "central",
            "--servers",
            "4e9",
            "--rho",
            "0.99999",
        ],
        20,
    );
    ok(&o);
    assert!(text(&o.stdout).contains("exact:erlang_c"), "{}", show(&o));
}

#[test]
fn plot_reads_a_big_csv_in_linear_time() {
    // 20,000 rows: minutes when every row counted the lines before it.
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(d, &["run", "s.toml", "-o", "one.csv", "-q"]));
    let csv = read(&d.join("one.csv"));
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let row = lines.next().unwrap();
    let cols: Vec<&str> = header.split(',').collect();
    let (ip, ir) = (
        cols.iter().position(|c| *c == "point").unwrap(),
        cols.iter().position(|c| *c == "rho").unwrap(),
    );
    let mut big = format!("{header}\n");
    for i in 0..20_000 {
        let mut f: Vec<String> = row.split(',').map(str::to_string).collect();
        f[ip] = i.to_string();
        f[ir] = format!("{}", 0.01 + 0.98 * f64::from(i) / 20_000.0);
        big.push_str(&f.join(","));
        big.push('\n');
    }
    std::fs::write(d.join("big.csv"), big).unwrap();
    ok(&qsweep_timed(d, &["plot", "big.csv", "-o", "big.svg"], 120));
}

// ---- unclear ----

#[test]
fn a_write_that_fails_names_its_file() {
    // No file may grow (`ulimit -f 0`, SIGXFSZ ignored): the first write,
    // the CSV's header, fails with EFBIG.
    let (dir, _) = setup();
    let d = dir.path();
    let o = Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\""])
        .args([BIN, "run", "s.toml", "-o", "r.csv", "-q"])
        .current_dir(d)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let e = text(&o.stderr);
    let errors: Vec<&str> = e.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{}", show(&o));
    assert!(errors[0].contains("r.csv"), "{}", show(&o));
}

#[test]
fn sigterm_while_starting_exits_130() {
    // A spec that takes about a second to load (a 3-million-line empirical
    // file): SIGTERM arrives while it loads, long before any engine.
    let (dir, _) = setup();
    let d = dir.path();
    let mut data = String::with_capacity(30_000_000);
    for i in 0..3_000_000u32 {
        data.push_str(&format!("{}.{}\n", i % 7 + 1, i % 1000));
    }
    std::fs::write(d.join("big.txt"), data).unwrap();
    let child = qsweep_in(
        d,
        &[
            "run",
            "s.toml",
            "--service",
            "empirical(file=big.txt)",
            "-o",
            "r.csv",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(250));
    let pid = child.id().to_string();
    let st = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", show(&o));
    assert!(text(&o.stderr).contains("stopped"), "{}", show(&o));
    assert!(!d.join("r.csv").exists());
}

#[test]
fn resume_messages_have_no_runs_of_spaces() {
    let (dir, _) = setup();
    let d = dir.path();
    ok(&qsweep(
        d,
        &["run", "s.toml", "-o", "r.csv", "--quantiles", "0.5", "-q"],
    ));
    // Without the meta, the columns are what tells the runs apart.
    std::fs::remove_file(d.join("r.meta.json")).unwrap();
    let o = qsweep(d, &["run", "s.toml", "-o", "r.csv", "--resume", "-q"]);
    let line = usage_error(&o, &["--quantiles"]);
    assert!(!line.contains("  "), "{line}");
}

/// `qsweep <args>` under `ulimit -v <kb>` (through sh), in `dir`.
fn qsweep_under_ulimit(dir: &Path, kb: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("sh starts")
}

/// Under a small `ulimit -v`, Mesa's drivers crashed while they initialised
/// (`qsweep adapters`: SIGSEGV; `--backend gpu`: SIGABRT), taking the run
/// down: now no driver is loaded, `auto` runs on the CPU saying why in one
/// line, `gpu` fails with one line, and `adapters` says it did not probe.
#[test]
fn a_small_address_space_never_loads_a_gpu_driver() {
    let (dir, spec) = setup();
    let spec = spec.to_str().unwrap();
    let kb = 300_000;
    let out = qsweep_under_ulimit(dir.path(), kb, &["adapters"]);
    ok(&out);
    assert!(text(&out.stdout).contains("not probed"), "{}", show(&out));
    let out = qsweep_under_ulimit(
        dir.path(),
        kb,
        &["run", spec, "--backend", "auto", "-o", "auto.csv"],
    );
    ok(&out);
    assert!(
        text(&out.stderr).contains("backend: cpu") && text(&out.stderr).contains("ulimit -v"),
        "{}",
        show(&out)
    );
    let out = qsweep_under_ulimit(
        dir.path(),
        kb,
        &["run", spec, "--backend", "gpu", "-o", "gpu.csv"],
    );
    no_panic(&out);
    let code = out.status.code();
    assert!(code == Some(1) || code == Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("--backend gpu") && err.contains("ulimit -v"),
        "{}",
        show(&out)
    );
    assert!(err.lines().count() <= 3, "{}", show(&out));
}
