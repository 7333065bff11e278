//! The `qsweep` binary end to end: output files, determinism, and one-line
//! errors with exit code 2 for every class of bad input.
//!
//! Every simulation here is tiny (16 replications of 2000 customers, CPU
//! engine) except where a test needs several engine calls; none runs the
//! built-in default study at its own size.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

/// Settings added to every `qsweep run` unless the test gives its own.
const TINY: [(&str, &str); 5] = [
    ("--reps", "16"),
    ("--customers", "2000"),
    ("--warmup", "200"),
    ("--backend", "cpu"),
    ("--threads", "2"),
];

/// `qsweep <args>` in `dir`.
fn qsweep(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("qsweep runs")
}

/// `qsweep run <args>` plus whichever of [`TINY`] the args do not set (a flag
/// given twice would be a clap error, which would hide the error under test).
fn run_args(args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = vec!["run".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    for (flag, value) in TINY {
        if !args.contains(&flag) {
            all.push(flag.into());
            all.push(value.into());
        }
    }
    all
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let all = run_args(args);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    qsweep(dir, &refs)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn assert_ok(out: &Output) {
    assert!(out.status.success(), "{}", show(out));
}

/// Stderr without the engine-choice line.
fn error_lines(out: &Output) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("qsweep: backend"))
        .map(str::to_string)
        .collect()
}

/// Names of the files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Exit code 2, exactly one line on stderr that contains every one of
/// `names`, and nothing new in `dir` (no CSV, no partial output).
fn assert_usage_error(dir: &Path, args: &[&str], names: &[&str]) -> String {
    let before = files(dir);
    let out = run(dir, args);
    let what = format!("qsweep {:?}\n{}", run_args(args), show(&out));
    assert_eq!(out.status.code(), Some(2), "{what}");
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "one line on stderr expected: {what}");
    let line = &lines[0];
    assert!(line.starts_with("qsweep: error: "), "{what}");
    for name in names {
        assert!(line.contains(name), "error does not name '{name}': {what}");
    }
    assert_eq!(files(dir), before, "files created by a failed run: {what}");
    line.clone()
}

fn tempdir() -> TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

/// The CSV as a header and rows, with the machine-dependent columns
/// (`backend`, `seconds`, `customers_per_s`) blanked by name.
fn csv_without_timing(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let timing: Vec<usize> = ["backend", "seconds", "customers_per_s"]
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .unwrap_or_else(|| panic!("no column {c} in {path:?}"))
        })
        .collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            rec.iter()
                .enumerate()
                .map(|(i, v)| {
                    if timing.contains(&i) {
                        String::new()
                    } else {
                        v.to_string()
                    }
                })
                .collect()
        })
        .collect();
    (header, rows)
}

fn column<'a>(header: &[String], row: &'a [String], name: &str) -> &'a str {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    &row[i]
}

const TWO_POLICY_SPEC: &str = r#"# determinism check
[sweep]
routing = ["random", "central"]
servers = [1, 3, 8]
workers = [1]
arrival = ["exp"]
rho = [0.7]
service = ["exp(mean=0.5)", "weibull(shape=0.46,median=0.05,min=0.01,max=30)"]

[run]
reps = 16
customers = 2000
warmup = 200
seed = 42
"#;

// ---------------------------------------------------------------------------
// Output

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let dir = tempdir();
    let d = dir.path();
    write(d, "spec.toml", TWO_POLICY_SPEC);
    // The spec sets reps/customers/warmup itself; only pass engine flags.
    for (threads, out) in [("1", "one.csv"), ("2", "two.csv")] {
        let o = qsweep(
            d,
            &[
                "run",
                "spec.toml",
                "--backend",
                "cpu",
                "--threads",
                threads,
                "-o",
                out,
            ],
        );
        assert_ok(&o);
    }
    let (h1, r1) = csv_without_timing(&d.join("one.csv"));
    let (h2, r2) = csv_without_timing(&d.join("two.csv"));
    assert_eq!(h1, h2);
    assert_eq!(r1.len(), 2 * 3 * 2);
    for (a, b) in r1.iter().zip(&r2) {
        assert_eq!(a, b, "rows differ between --threads 1 and --threads 2");
    }
    assert_eq!(r1, r2);
    for r in &r1 {
        assert_eq!(column(&h1, r, "reps"), "16");
        assert_eq!(column(&h1, r, "seed"), "42");
        assert_eq!(column(&h1, r, "stable"), "true");
    }
}

#[test]
fn run_writes_rows_as_points_finish_and_prints_a_summary() {
    let dir = tempdir();
    let d = dir.path();
    // A chunk holds at most CHUNK_REPS replications, so with that many per
    // point each point is its own engine call and its row must reach the
    // file before the next point starts.
    let reps = qsweep_core::run::CHUNK_REPS.to_string();
    let points = 6;
    let all = run_args(&[
        "--routing",
        "random,central",
        "--servers",
        "1,2,4",
        "--rho",
        "0.5",
        "--service",
        "exp(mean=1)",
        "--reps",
        &reps,
        "--customers",
        "150",
        "--warmup",
        "0",
        "-o",
        "rows.csv",
    ]);
    let csv = d.join("rows.csv");
    let mut child = Command::new(BIN)
        .args(&all)
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Complete data lines seen while the run was still going.
    let mut seen_partial = None;
    let started = Instant::now();
    loop {
        let content = std::fs::read_to_string(&csv).unwrap_or_default();
        let complete = content.matches('\n').count();
        let running = child.try_wait().unwrap().is_none();
        if !running {
            break;
        }
        if (2..=points).contains(&complete) {
            seen_partial.get_or_insert(complete - 1);
        }
        assert!(started.elapsed() < Duration::from_secs(300), "run hangs");
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    assert_ok(&out);
    let rows = seen_partial.unwrap_or_else(|| {
        panic!(
            "never saw the CSV with some but not all rows while the run was going\n{}",
            show(&out)
        )
    });
    assert!((1..points).contains(&rows), "{rows}");

    let (header, rows) = csv_without_timing(&csv);
    assert_eq!(header[..3], ["point", "routing", "servers"]);
    assert_eq!(rows.len(), points);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(column(&header, r, "point"), i.to_string());
    }
    // The summary table on stdout: a header and one line per point.
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("point") && l.contains("mean_wait") && l.contains("p99_wait"))
        .unwrap_or_else(|| panic!("no summary table header:\n{stdout}"));
    let body = &lines[head + 1..];
    assert!(body.len() >= points, "{stdout}");
    for (i, l) in body.iter().take(points).enumerate() {
        assert!(l.starts_with(&i.to_string()), "summary line {i}: {l}");
    }
}

#[test]
fn existing_out_is_refused_untouched_unless_forced() {
    let dir = tempdir();
    let d = dir.path();
    let precious = "an earlier result\n";
    write(d, "taken.csv", precious);
    let args = ["--servers", "2", "--lambda", "3", "-o", "taken.csv"];
    let line = assert_usage_error(d, &args, &["out"]);
    assert!(line.contains("taken.csv"), "{line}");
    assert_eq!(
        std::fs::read_to_string(d.join("taken.csv")).unwrap(),
        precious
    );

    let out = run(d, &[&args[..], &["--force"]].concat());
    assert_ok(&out);
    let (header, rows) = csv_without_timing(&d.join("taken.csv"));
    assert_eq!(header[0], "point");
    assert_eq!(rows.len(), 2, "random and central at servers = 2");
}

#[test]
fn default_out_names_never_clobber_earlier_results() {
    let dir = tempdir();
    let d = dir.path();
    let args = ["--servers", "2", "--lambda", "3"];
    assert_ok(&run(d, &args));
    let first = d.join("qsweep-results.csv");
    let content = std::fs::read(&first).expect("qsweep-results.csv written");
    assert_ok(&run(d, &args));
    let second = d.join("qsweep-results-2.csv");
    assert!(second.exists(), "{:?}", files(d));
    assert_eq!(std::fs::read(&first).unwrap(), content, "first CSV changed");
    // Same spec and seed: the same numbers.
    assert_eq!(csv_without_timing(&first), csv_without_timing(&second));
}

// ---------------------------------------------------------------------------
// Bad input: exit 2, one line naming the field, nothing written

#[test]
fn zero_lambda_is_refused() {
    let d = tempdir();
    assert_usage_error(d.path(), &["--lambda", "0"], &["--lambda", "'0'"]);
}

#[test]
fn negative_lambda_is_refused() {
    let d = tempdir();
    assert_usage_error(d.path(), &["--lambda", "-5"], &["--lambda", "'-5'"]);
}

#[test]
fn zero_servers_is_refused() {
    let d = tempdir();
    assert_usage_error(d.path(), &["--servers", "0"], &["--servers", "'0'"]);
}

#[test]
fn unknown_law_is_refused() {
    let d = tempdir();
    assert_usage_error(
        d.path(),
        &["--service", "expo(mean=1)"],
        &["--service", "expo"],
    );
}

#[test]
fn unknown_law_key_is_refused() {
    let d = tempdir();
    assert_usage_error(
        d.path(),
        &["--service", "exp(mena=1)"],
        &["--service", "mena"],
    );
}

#[test]
fn missing_empirical_file_is_refused() {
    let d = tempdir();
    assert_usage_error(
        d.path(),
        &["--service", "empirical(file=missing.txt)"],
        &["--service", "missing.txt"],
    );
}

#[test]
fn empirical_file_with_a_non_number_is_refused() {
    let d = tempdir();
    write(d.path(), "times.txt", "0.1\n0.2\nabc\n");
    assert_usage_error(
        d.path(),
        &["--service", "empirical(file=times.txt)"],
        &["--service", "times.txt", "line 3", "abc"],
    );
}

#[test]
fn empirical_file_with_a_negative_value_is_refused() {
    let d = tempdir();
    write(d.path(), "times.txt", "0.1\n-0.2\n");
    assert_usage_error(
        d.path(),
        &["--service", "empirical(file=times.txt)"],
        &["--service", "times.txt", "line 2"],
    );
}

#[test]
fn empty_empirical_file_is_refused() {
    let d = tempdir();
    write(d.path(), "times.txt", "");
    assert_usage_error(
        d.path(),
        &["--service", "empirical(file=times.txt)"],
        &["--service", "times.txt", "empty"],
    );
}

#[test]
fn zero_customers_is_refused() {
    let d = tempdir();
    assert_usage_error(d.path(), &["--customers", "0"], &["--customers"]);
}

#[test]
fn empty_axis_in_a_spec_file_is_refused_with_path_and_line() {
    let d = tempdir();
    write(
        d.path(),
        "spec.toml",
        "[sweep]\nrouting = [\"random\"]\nservers = []\nlambda = [1]\nservice = [\"exp(mean=0.5)\"]\n",
    );
    let line = assert_usage_error(d.path(), &["spec.toml"], &["servers"]);
    assert!(line.starts_with("qsweep: error: spec.toml:3: "), "{line}");
}

#[test]
fn lambda_and_rho_together_in_a_spec_file_are_refused() {
    let d = tempdir();
    write(
        d.path(),
        "spec.toml",
        "[sweep]\nrouting = [\"random\"]\nservers = [2]\nlambda = [1]\nrho = [0.5]\nservice = [\"exp(mean=0.5)\"]\n",
    );
    let line = assert_usage_error(d.path(), &["spec.toml"], &["lambda", "rho"]);
    assert!(line.starts_with("qsweep: error: spec.toml:5: "), "{line}");
}

#[test]
fn lambda_and_rho_flags_together_are_refused() {
    let d = tempdir();
    assert_usage_error(
        d.path(),
        &["--lambda", "1", "--rho", "0.5"],
        &["--lambda", "--rho"],
    );
}

#[test]
fn spec_file_errors_carry_path_and_line() {
    let d = tempdir();
    let sub = d.path().join("studies");
    std::fs::create_dir(&sub).unwrap();
    let cases: [(&str, &str, &str); 4] = [
        // (file text, expected "PATH:LINE:" prefix, a word the message names)
        (
            "[sweep]\nrouting = [\"random\"]\nservers = [2, 0]\nlambda = [1]\n",
            "studies/s.toml:3: ",
            "servers",
        ),
        (
            "[sweep]\nservers = [2]\nlambda = [1]\nservice = [\"exp(mena=1)\"]\n",
            "studies/s.toml:4: ",
            "mena",
        ),
        (
            "[sweep]\nservers = [2]\nlambda = [1]\n\n[run]\nreps = 16\ncustomers = 0\n",
            "studies/s.toml:7: ",
            "customers",
        ),
        (
            "[sweep]\nservers = [2]\nlambda = [1]\nspeed = [3]\n",
            "studies/s.toml:4: ",
            "speed",
        ),
    ];
    for (toml, prefix, word) in cases {
        std::fs::write(sub.join("s.toml"), toml).unwrap();
        let line = assert_usage_error(d.path(), &["studies/s.toml"], &[word]);
        assert!(
            line.starts_with(&format!("qsweep: error: {prefix}")),
            "expected '{prefix}' first: {line}\n{toml}"
        );
    }
}

#[test]
fn unstable_point_is_refused_then_runs_with_allow_unstable() {
    let d = tempdir();
    let args = [
        "--lambda",
        "160",
        "--servers",
        "51",
        "--service",
        "exp(rate=3)",
        "--routing",
        "central",
    ];
    assert_usage_error(d.path(), &args, &["unstable", "rho", "--allow-unstable"]);

    let mut allowed = args.to_vec();
    allowed.extend(["--allow-unstable", "-o", "unstable.csv"]);
    let out = run(d.path(), &allowed);
    assert_ok(&out);
    let (header, rows) = csv_without_timing(&d.path().join("unstable.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(column(&header, &rows[0], "stable"), "false");
    assert_eq!(column(&header, &rows[0], "analytic_method"), "unstable");
    let rho: f64 = column(&header, &rows[0], "rho").parse().unwrap();
    assert!((rho - 160.0 / 153.0).abs() < 1e-6, "{rho}");
}

// ---------------------------------------------------------------------------
// Other subcommands

#[test]
fn analytic_prints_the_default_study_beside_erlang_c_quickly() {
    let d = tempdir();
    let started = Instant::now();
    let out = qsweep(d.path(), &["analytic"]);
    let secs = started.elapsed().as_secs_f64();
    assert_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("exact:erlang_c"), "{stdout}");
    assert!(stdout.contains("exact:mm1"), "{stdout}");
    assert!(stdout.contains("Erlang C M/M/R"), "{stdout}");
    assert!(stdout.contains("1/(Rμ−λ)"), "{stdout}");
    // The published table's R values all appear.
    for r in ["51", "60", "75", "100", "4000"] {
        assert!(stdout.lines().any(|l| l.trim_start().starts_with(r)), "{r}");
    }
    assert!(secs < 10.0, "qsweep analytic took {secs:.1} s");
    assert!(
        files(d.path()).is_empty(),
        "analytic wrote {:?}",
        files(d.path())
    );
}

#[test]
fn analytic_writes_to_stdout_and_leaves_the_specs_out_to_run() {
    let d = tempdir();
    write(
        d.path(),
        "s.toml",
        "[sweep]\nrouting = [\"random\", \"central\"]\nservers = [2]\nrho = [0.5]\nservice = [\"exp(mean=1)\"]\n\n[run]\nreps = 4\ncustomers = 200\nwarmup = 10\nout = \"r.csv\"\n",
    );
    let out = qsweep(d.path(), &["analytic", "s.toml"]);
    assert_ok(&out);
    assert!(text(&out.stdout).contains("exact:"), "{}", show(&out));
    assert_eq!(files(d.path()), ["s.toml"], "analytic took the spec's out");
    // -o writes the CSV, and refuses to overwrite without --force.
    let out = qsweep(d.path(), &["analytic", "s.toml", "-o", "a.csv"]);
    assert_ok(&out);
    let a = std::fs::read_to_string(d.path().join("a.csv")).unwrap();
    assert!(a.starts_with("point,routing,"), "{a}");
    let again = qsweep(d.path(), &["analytic", "s.toml", "-o", "a.csv"]);
    assert_eq!(again.status.code(), Some(2), "{}", show(&again));
    assert!(
        text(&again.stderr).contains("out: cannot create"),
        "{}",
        show(&again)
    );
    // The spec's out is still free for its simulation.
    let out = qsweep(d.path(), &["run", "-q", "--backend", "cpu", "s.toml"]);
    assert_ok(&out);
    assert!(d.path().join("r.csv").exists());
}

#[test]
fn adapters_lists_and_exits_zero() {
    let d = tempdir();
    let out = qsweep(d.path(), &["adapters"]);
    assert_ok(&out);
    assert!(!out.stdout.is_empty(), "{}", show(&out));
}

#[test]
fn plot_draws_an_svg_and_names_a_missing_column() {
    let dir = tempdir();
    let d = dir.path();
    assert_ok(&run(
        d,
        &["--servers", "1,2,4", "--rho", "0.7", "-o", "tiny.csv"],
    ));
    let out = qsweep(d, &["plot", "tiny.csv"]);
    assert_ok(&out);
    let svg = std::fs::read_to_string(d.join("tiny.svg")).expect("tiny.svg written");
    assert!(
        svg.contains("<svg"),
        "not an SVG: {}",
        &svg[..svg.len().min(200)]
    );

    let out = qsweep(d, &["plot", "tiny.csv", "--y", "nope", "-o", "nope.svg"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{}", show(&out));
    assert!(err.contains("nope"), "{}", show(&out));
    assert!(!d.join("nope.svg").exists());
}

#[test]
fn smaller_input_mistakes_are_named_clearly() {
    let d = tempdir();
    // A count above u32::MAX is too large, not "not an integer".
    let e = assert_usage_error(d.path(), &["--reps", "99999999999"], &["--reps"]);
    assert!(e.contains("too large; expected at most 4294967295"), "{e}");
    let e = assert_usage_error(d.path(), &["--servers", "5000000000"], &["--servers"]);
    assert!(e.contains("too large; expected at most 4294967295"), "{e}");
    // A byte-order mark at the start of a spec is not part of its text.
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(b"[sweep]\nrouting = [\"random\"]\nservers = [2]\nrho = [0.5]\nservice = [\"exp(mean=1)\"]\n");
    std::fs::write(d.path().join("bom.toml"), bom).unwrap();
    let out = run(d.path(), &["bom.toml", "-o", "bom.csv", "-q"]);
    assert_ok(&out);
    // bench --only that matches nothing, and plot over an existing figure.
    let b = qsweep(d.path(), &["bench", "--backend", "cpu", "--only", "nosuch"]);
    assert_eq!(b.status.code(), Some(2), "{}", show(&b));
    assert!(text(&b.stderr).contains("--only: 'nosuch' matches no case"));
    std::fs::write(d.path().join("fig.svg"), "mine").unwrap();
    let p = qsweep(d.path(), &["plot", "bom.csv", "-o", "fig.svg"]);
    assert_eq!(p.status.code(), Some(2), "{}", show(&p));
    assert_eq!(
        std::fs::read_to_string(d.path().join("fig.svg")).unwrap(),
        "mine"
    );
    assert_ok(&qsweep(
        d.path(),
        &["plot", "bom.csv", "-o", "fig.svg", "--force"],
    ));
}

#[test]
fn axes_that_do_not_apply_are_noted_and_pod_records_the_d_it_ran() {
    let d = tempdir();
    let out = qsweep(
        d.path(),
        &[
            "run",
            "--backend",
            "cpu",
            "--routing",
            "random,pod",
            "--servers",
            "2,4",
            "--choices",
            "3",
            "--routers",
            "1,2",
            "--rho",
            "0.5",
            "--reps",
            "4",
            "--customers",
            "100",
            "--warmup",
            "0",
            "-o",
            "r.csv",
        ],
    );
    assert_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "note: routers applies to central, jsq, pod and jiq; random run with one router"
        ),
        "{err}"
    );
    assert!(
        err.contains("note: pod with choices=3 samples every server when servers = 2"),
        "{err}"
    );
    let mut r = csv::Reader::from_path(d.path().join("r.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let at = |n: &str| h.iter().position(|c| c == n).unwrap();
    let pods: Vec<(String, String)> = r
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[at("routing")] == "pod")
        .map(|x| (x[at("servers")].to_string(), x[at("choices")].to_string()))
        .collect();
    assert!(pods.contains(&("2".into(), "2".into())), "{pods:?}");
    assert!(pods.contains(&("4".into(), "3".into())), "{pods:?}");
}

#[test]
fn an_unknown_adapter_is_a_usage_error() {
    if qsweep_gpu::list_adapters().is_empty() && std::env::var("QSWEEP_REQUIRE_GPU").is_err() {
        return;
    }
    let d = tempdir();
    let out = qsweep(
        d.path(),
        &[
            "run",
            "--backend",
            "gpu",
            "--adapter",
            "nosuch-adapter",
            "-o",
            "x.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(text(&out.stderr).contains("--adapter: no adapter matches 'nosuch-adapter'"));
    assert!(!d.path().join("x.csv").exists());
}

#[test]
fn a_gpu_run_records_what_the_device_did_in_its_meta() {
    if qsweep_gpu::list_adapters().is_empty() && std::env::var("QSWEEP_REQUIRE_GPU").is_err() {
        return;
    }
    let d = tempdir();
    write(d.path(), "s.toml", TWO_POLICY_SPEC);
    let out = qsweep(
        d.path(),
        &["run", "-q", "--backend", "gpu", "s.toml", "-o", "g.csv"],
    );
    assert_ok(&out);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("g.meta.json")).unwrap())
            .unwrap();
    let device = &meta["device"];
    let count = |k: &str| {
        device[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no device.{k} in {meta:#}"))
    };
    let (dispatches, passes, lanes) = (
        count("dispatches"),
        count("passes"),
        count("max_invocations_per_dispatch"),
    );
    assert!(passes >= dispatches && dispatches >= 1, "{device}");
    assert!(lanes >= 64 && lanes % 64 == 0, "{device}");
    assert!(device["device_seconds"].as_f64().unwrap() > 0.0, "{device}");
    assert_eq!(device["adapter"], meta["engine"], "{device}");

    // The CPU engine has no device to report.
    let out = qsweep(
        d.path(),
        &["run", "-q", "--backend", "cpu", "s.toml", "-o", "c.csv"],
    );
    assert_ok(&out);
    let meta = std::fs::read_to_string(d.path().join("c.meta.json")).unwrap();
    assert!(!meta.contains("\"device\""), "{meta}");
}

#[test]
fn auto_takes_the_cpu_at_once_when_the_only_adapter_is_software() {
    let adapters = qsweep_gpu::list_adapters();
    if adapters.is_empty()
        || adapters
            .iter()
            .any(|a| a.class == qsweep_gpu::AdapterClass::Hardware)
    {
        // Only meaningful beside a software adapter planned as one (CI has
        // lavapipe; QSWEEP_ADAPTER_CLASS=hardware plans it as hardware).
        return;
    }
    let d = tempdir();
    let out = run(d.path(), &["--backend", "auto", "-o", "a.csv"]);
    assert_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("qsweep: backend: cpu (") && err.contains("is software, on these same cores"),
        "{err}"
    );
}

/// Whether a GPU adapter is there for the small-device tests below; with
/// none they skip, unless `QSWEEP_REQUIRE_GPU=1` (CI) makes that a failure.
fn adapter_or_skip(test: &str) -> bool {
    if !qsweep_gpu::list_adapters().is_empty() {
        return true;
    }
    if std::env::var("QSWEEP_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("{test}: QSWEEP_REQUIRE_GPU=1 but no GPU adapter");
    }
    eprintln!("SKIPPED {test}: no GPU adapter");
    false
}

/// `qsweep run` of a small mixed grid on the GPU, with `env` set: one-server
/// replications of 10000 customers (two segments, side by side on a
/// hardware plan), a central queue of 12 (its heap in fast memory) and jsq.
fn run_gpu_with(dir: &Path, out: &str, backend: &str, env: &[(&str, &str)]) -> Output {
    run_small_with(dir, out, backend, env, &[])
}

/// [`run_gpu_with`] with `extra` flags after the others.
fn run_small_with(
    dir: &Path,
    out: &str,
    backend: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> Output {
    std::fs::write(
        dir.join("small.toml"),
        "[sweep]\nrouting = [\"random\", \"central\", \"jsq\"]\nservers = [1, 12]\n\
         rho = [0.8]\nservice = [\"exp(mean=1)\", \"erlang(k=2, mean=1)\"]\n\
         [run]\nreps = 16\ncustomers = 9000\nwarmup = 1000\nseed = 11\n",
    )
    .unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "small.toml", "--backend", backend, "-o", out])
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null());
    for var in [
        "QSWEEP_GPU_LIMITS",
        "QSWEEP_GPU_TIMESTAMPS",
        "QSWEEP_ADAPTER_CLASS",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("qsweep runs")
}

#[test]
fn small_device_limits_and_the_hardware_plan_give_the_adapters_numbers_to_the_bit() {
    if !adapter_or_skip(
        "small_device_limits_and_the_hardware_plan_give_the_adapters_numbers_to_the_bit",
    ) {
        return;
    }
    let d = tempdir();
    let reference = run_gpu_with(d.path(), "adapter.csv", "gpu", &[]);
    assert_ok(&reference);
    let variants: [(&str, &[(&str, &str)]); 3] = [
        // WebGPU's baseline: 16 KiB of workgroup memory (heaps move to
        // private memory), 128 MiB bindings; no timestamp queries.
        (
            "webgpu.csv",
            &[
                ("QSWEEP_GPU_LIMITS", "webgpu"),
                ("QSWEEP_GPU_TIMESTAMPS", "0"),
            ],
        ),
        // A software adapter planned as hardware: timed passes, heaps in
        // workgroup memory, one-server segments side by side.
        ("hardware.csv", &[("QSWEEP_ADAPTER_CLASS", "hardware")]),
        (
            "hardware-webgpu.csv",
            &[
                ("QSWEEP_ADAPTER_CLASS", "hardware"),
                ("QSWEEP_GPU_LIMITS", "webgpu"),
            ],
        ),
    ];
    for (out, env) in variants {
        let run = run_gpu_with(d.path(), out, "gpu", env);
        assert_ok(&run);
        assert_eq!(
            csv_without_timing(&d.path().join("adapter.csv")),
            csv_without_timing(&d.path().join(out)),
            "{out} ({env:?}) differs from the adapter's own plan"
        );
    }
    // The .meta.json says how the device was opened and planned.
    let meta = std::fs::read_to_string(d.path().join("hardware-webgpu.meta.json")).unwrap();
    assert!(meta.contains("\"planned_as\": \"hardware\""), "{meta}");
    assert!(meta.contains("\"from\": \"webgpu\""), "{meta}");
    let meta = std::fs::read_to_string(d.path().join("webgpu.meta.json")).unwrap();
    assert!(meta.contains("\"timestamps\": false"), "{meta}");
}

#[test]
fn a_device_with_four_storage_buffers_is_refused_naming_the_limit_and_auto_runs_the_cpu() {
    if !adapter_or_skip(
        "a_device_with_four_storage_buffers_is_refused_naming_the_limit_and_auto_runs_the_cpu",
    ) {
        return;
    }
    let d = tempdir();
    let downlevel = [("QSWEEP_GPU_LIMITS", "downlevel")];
    let out = run_gpu_with(d.path(), "gpu.csv", "gpu", &downlevel);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("max_storage_buffers_per_shader_stage is 4")
            && err.contains("storage buffers per shader stage")
            && err.contains("--backend cpu"),
        "{err}"
    );
    assert!(!d.path().join("gpu.csv").exists());
    // `auto`, planning the adapter as hardware so that it tries the GPU,
    // says why it took the CPU and runs there.
    let out = run_gpu_with(
        d.path(),
        "auto.csv",
        "auto",
        &[
            ("QSWEEP_GPU_LIMITS", "downlevel"),
            ("QSWEEP_ADAPTER_CLASS", "hardware"),
        ],
    );
    assert_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("backend: cpu (") && err.contains("max_storage_buffers_per_shader_stage"),
        "{err}"
    );
}

#[test]
fn the_gl_backend_gives_the_cpu_engines_csv_to_the_bit() {
    // wgpu's GL backend (llvmpipe through EGL in CI) runs the kernels about
    // 20 times slower than lavapipe, so CI runs this small grid there, not
    // the whole GPU suites: each kernel (one-server segments, a central
    // queue's fast heap, jsq) once, against the CPU engine.
    if std::env::var("QSWEEP_TEST_GL").as_deref() != Ok("1") {
        eprintln!("SKIPPED the_gl_backend_gives_the_cpu_engines_csv_to_the_bit: set QSWEEP_TEST_GL=1 (needs Mesa's EGL/GL)");
        return;
    }
    let d = tempdir();
    let small = ["--service", "exp(mean=1)", "--reps", "8"];
    let cpu = run_small_with(d.path(), "cpu.csv", "cpu", &[], &small);
    assert_ok(&cpu);
    let gl = run_small_with(d.path(), "gl.csv", "gpu", &[("WGPU_BACKEND", "gl")], &small);
    assert_ok(&gl);
    let meta = std::fs::read_to_string(d.path().join("gl.meta.json")).unwrap();
    assert!(meta.contains("\"adapter\": \"gl:"), "not on GL: {meta}");
    assert_eq!(
        csv_without_timing(&d.path().join("cpu.csv")),
        csv_without_timing(&d.path().join("gl.csv")),
        "the GL backend left the CPU engine's streams"
    );
}

/// Flags without a spec file start from the built-in study (issue 26): a
/// refusal names what came from it, and the published table is shown only
/// beside the grid it is about.
#[test]
fn analytic_says_what_it_took_from_the_built_in_study() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = qsweep(
        d,
        &["analytic", "--servers", "10", "--service", "exp(rate=1)"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("unstable") && err.contains("lambda = 150 came from the built-in study"),
        "{err}"
    );
    // Another question: no published table appended.
    let out = qsweep(
        d,
        &[
            "analytic",
            "--servers",
            "10",
            "--service",
            "exp(rate=1)",
            "--lambda",
            "5",
        ],
    );
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("published"));
    // The study's own question (other fleets too): the table stays.
    for args in [&["analytic"][..], &["analytic", "--servers", "60,80"]] {
        let out = qsweep(d, args);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("published analysis"));
    }
}

#[test]
fn heavy_tails_are_flagged_before_and_after_the_run() {
    // Issue 27: the audit's bounded Pareto (α 1.2 on [1, 1e7]) at ρ 0.5
    // cannot have its mean resolved by any short run; exp service can.
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let laws = ["--service", "pareto(alpha=1.2,min=1,max=1e7),exp(mean=1)"];
    let common = [
        laws[0],
        laws[1],
        "--routing",
        "random",
        "--servers",
        "1",
        "--rho",
        "0.5",
        "--reps",
        "16",
    ];
    let mut dry: Vec<&str> = common.to_vec();
    dry.push("--dry-run");
    let out = run(d, &dry);
    assert_ok(&out);
    let said = text(&out.stdout);
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("mean wait not resolved"))
        .collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].starts_with("mean wait not resolved: point 0: ")
            && lines[0].contains("of E[S^2] lies above the largest service time")
            && lines[0].contains("longer than a replication (2000)"),
        "{said}"
    );
    assert!(!d.join("qsweep-results.csv").exists());
    let mut real: Vec<&str> = common.to_vec();
    real.extend(["-o", "r.csv"]);
    let out = run(d, &real);
    assert_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("point 0 (") && err.contains("the run cannot resolve the mean wait"),
        "{err}"
    );
    let mut reader = csv::Reader::from_path(d.join("r.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let flag = header.iter().position(|h| h == "mean_wait_flag").unwrap();
    assert_eq!(flag, header.len() - 1, "a new column goes at the end");
    let flags: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[flag].to_string())
        .collect();
    assert!(flags[0].starts_with("horizon"), "{flags:?}");
    assert_eq!(flags[1], "", "{flags:?}");
}

/// `--arrival 'trace(file=...)'`: the shipped bursty log replayed from a
/// flag (the file beside the working directory), `none` as its baseline
/// (no formula holds for a replayed log) and its index of dispersion in
/// the row; a log out of order is refused in one line naming the line.
#[test]
fn trace_arrivals_run_from_flags_with_their_dispersion_column() {
    let dir = tempdir();
    let d = dir.path();
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/data/bursty-trace.txt");
    std::fs::copy(shipped, d.join("log.txt")).unwrap();
    let out = run(
        d,
        &[
            "--routing",
            "random,jsq",
            "--servers",
            "4",
            "--rho",
            "0.7",
            "--service",
            "exp(mean=1)",
            "--arrival",
            "trace(file=log.txt)",
            "--reps",
            "16",
            "--customers",
            "4000",
            "-o",
            "t.csv",
        ],
    );
    assert_ok(&out);
    let mut reader = csv::Reader::from_path(d.join("t.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header.last().unwrap(), "arrival_dispersion");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(&row[col("arrival")], "trace(file=log.txt)");
        assert_eq!(&row[col("analytic_method")], "none");
        let dispersion: f64 = row[col("arrival_dispersion")].parse().unwrap();
        assert!(dispersion > 4.0, "{dispersion}");
        let wait: f64 = row[col("mean_wait")].parse().unwrap();
        assert!(wait.is_finite() && wait > 0.0, "{wait}");
    }
    std::fs::write(d.join("late.txt"), "0.5\n1.5\n1.25\n").unwrap();
    let bad = run(d, &["--arrival", "trace(file=late.txt)", "-o", "bad.csv"]);
    assert_eq!(bad.status.code(), Some(2), "{}", show(&bad));
    let lines = error_lines(&bad);
    assert_eq!(lines.len(), 1, "{}", show(&bad));
    assert!(
        lines[0].contains("trace file 'late.txt' line 3: timestamp 1.25 is before line 2's"),
        "{}",
        show(&bad)
    );
    assert!(!d.join("bad.csv").exists());
}

/// `--arrival 'mmpp(rates=[...],switch=[...])'` (lists inside a law in a
/// comma-separated flag) runs: the rows carry the exact MMPP/M/1 baseline
/// on one dyno and `arrival_dispersion` (the MMPP's index of dispersion,
/// and 1 for the Poisson stream beside it), appended after the standard
/// columns; a bad list is one line, exit 2.
#[test]
fn mmpp_arrivals_run_from_flags_with_their_dispersion_column() {
    let dir = tempdir();
    let d = dir.path();
    let out = run(
        d,
        &[
            "--routing",
            "random",
            "--servers",
            "1",
            "--rho",
            "0.5",
            "--service",
            "exp(mean=1)",
            "--arrival",
            "mmpp(rates=[1,9],switch=[0.1,0.1]),exp",
            "-o",
            "m.csv",
        ],
    );
    assert_ok(&out);
    let mut reader = csv::Reader::from_path(d.join("m.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header.last().unwrap(), "arrival_dispersion");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    let mmpp = rows
        .iter()
        .find(|r| r[col("arrival")].starts_with("mmpp"))
        .unwrap();
    assert_eq!(&mmpp[col("analytic_method")], "exact:mmpp_m_1");
    // 1 + 2 · 64 · 0.01 / (0.04 · (0.1 + 0.9)) = 33.
    let dispersion: f64 = mmpp[col("arrival_dispersion")].parse().unwrap();
    assert!((dispersion - 33.0).abs() < 1e-9, "{dispersion}");
    let poisson = rows.iter().find(|r| &r[col("arrival")] == "exp").unwrap();
    assert_eq!(&poisson[col("arrival_dispersion")], "1");
    let bad = run(
        d,
        &[
            "--arrival",
            "mmpp(rates=[1,2,3],switch=[1,1,1])",
            "-o",
            "bad.csv",
        ],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", show(&bad));
    let lines = error_lines(&bad);
    assert_eq!(lines.len(), 1, "{}", show(&bad));
    assert!(
        lines[0].contains("rates has 3 values; expected 2"),
        "{}",
        show(&bad)
    );
}

/// `--speeds` (fleets separated by ';') runs every policy that takes a
/// fleet; the rows carry the fleet, each class's mean wait (the fleet's
/// order, `;`-separated) with its CI, and the exact per-class baseline for
/// random and weighted; a plain fleet ("5x1") is the servers axis's fleet;
/// bad fleets and unsupported combinations are one line, exit 2, no CSV.
#[test]
fn fleets_run_from_flags_with_their_class_columns() {
    let dir = tempdir();
    let d = dir.path();
    let out = run(
        d,
        &[
            "--routing",
            "random,weighted,central,jsq,lwl",
            "--speeds",
            "3x1,2x2;5x1",
            "--lambda",
            "2.4",
            "--service",
            "exp(mean=1)",
            "--reps",
            "16",
            "--customers",
            "4000",
            "-o",
            "f.csv",
        ],
    );
    assert_ok(&out);
    let mut reader = csv::Reader::from_path(d.join("f.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header[header.len() - 4..],
        [
            "speeds",
            "class_mean_wait",
            "class_mean_wait_ci95",
            "analytic_class_mean_wait"
        ]
    );
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 10);
    for row in &rows {
        let (routing, speeds) = (&row[col("routing")], &row[col("speeds")]);
        let mixed = speeds == "3x1,2x2";
        assert_eq!(&row[col("servers")], "5");
        // 2.4/s over a capacity of 7 (mixed) or 5 speed-1 dynos.
        let rho: f64 = row[col("rho")].parse().unwrap();
        let capacity = if mixed { 7.0 } else { 5.0 };
        assert!((rho - 2.4 / capacity).abs() < 1e-6, "{rho}");
        let classes: Vec<f64> = row[col("class_mean_wait")]
            .split(';')
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(
            classes.len(),
            if mixed { 2 } else { 1 },
            "{routing} {speeds}"
        );
        let exact = &row[col("analytic_class_mean_wait")];
        if matches!(routing, "random" | "weighted") {
            assert_eq!(
                exact.split(';').count(),
                classes.len(),
                "{routing} {speeds}"
            );
        }
        if mixed {
            // The fast class waits less where the router ignores speed or
            // counts only.
            if matches!(routing, "random" | "weighted" | "jsq") {
                assert!(classes[1] < classes[0], "{routing}: {classes:?}");
            }
            // No convolution: the service time depends on the dyno.
            assert!(row[col("p99_sojourn")].is_empty());
            let method = &row[col("analytic_method")];
            let expected = if matches!(routing, "random" | "weighted") {
                "exact:mg1_by_class"
            } else {
                "none"
            };
            assert_eq!(method, expected, "{routing}");
        }
    }
    for (args, expect) in [
        (
            &["--speeds", "3x1,2x0"][..],
            "--speeds: '3x1,2x0' has the speed '0'; expected a fleet such as",
        ),
        (
            &["--speeds", "3x1", "--servers", "3"][..],
            "--speeds: given together with --servers",
        ),
        (
            &[
                "--speeds",
                "3x1,2x2",
                "--routing",
                "round_robin",
                "--rho",
                "0.5",
            ][..],
            "speeds: round_robin does not model a mixed fleet yet",
        ),
    ] {
        let mut argv = args.to_vec();
        argv.extend(["-o", "bad.csv"]);
        let bad = run(d, &argv);
        assert_eq!(bad.status.code(), Some(2), "{}", show(&bad));
        let lines = error_lines(&bad);
        assert_eq!(lines.len(), 1, "{}", show(&bad));
        assert!(lines[0].contains(expect), "{}", show(&bad));
        assert!(!d.join("bad.csv").exists());
    }
}
