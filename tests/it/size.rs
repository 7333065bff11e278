//! `qsweep size` end to end: exact answers against formulas written out
//! here (not the library's), a simulated search against the exact answer,
//! and its refusals.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

fn qsweep(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("qsweep runs")
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The rows of `qsweep size … -o sizes.json`.
fn sizes(dir: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let _ = std::fs::remove_file(dir.join("sizes.json"));
    let mut all = vec!["size"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "sizes.json", "-q"]);
    let o = qsweep(dir, &all);
    assert!(o.status.success(), "{}", show(&o));
    let text = std::fs::read_to_string(dir.join("sizes.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// Erlang C: P(wait) in M/M/c with offered load a = λ/μ (Kleinrock 1975,
/// eq. 3.40), by the Erlang B recursion B(k) = a·B(k−1)/(k + a·B(k−1)).
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (f64::from(k) + a * b);
    }
    let rho = a / f64::from(c);
    b / (1.0 - rho + rho * b)
}

/// M/M/c mean wait C/(cμ − λ).
fn mmc_mean_wait(c: u32, lambda: f64, mu: f64) -> f64 {
    erlang_c(c, lambda / mu) / (f64::from(c) * mu - lambda)
}

/// The p99 wait of an M/M/1 queue at rate λ: P(W > t) = ρ e^{−(μ−λ)t}.
fn mm1_p99(lambda: f64, mu: f64) -> f64 {
    let rho = lambda / mu;
    if rho <= 0.01 {
        0.0
    } else {
        (rho / 0.01).ln() / (mu - lambda)
    }
}

/// The p99 wait of M/M/c: P(W > t) = C e^{−(cμ−λ)t} (Kleinrock 1975, §3.5).
fn mmc_p99(c: u32, lambda: f64, mu: f64) -> f64 {
    let p = erlang_c(c, lambda / mu);
    if p <= 0.01 {
        0.0
    } else {
        (p / 0.01).ln() / (f64::from(c) * mu - lambda)
    }
}

/// The smallest stable n with f(n) <= bound, by scanning.
fn smallest(first: u32, bound: f64, f: impl Fn(u32) -> f64) -> u32 {
    (first..).find(|&n| f(n) <= bound).unwrap()
}

const BASE: [&str; 6] = [
    "--lambda",
    "150",
    "--service",
    "exp(rate=3)",
    "--backend",
    "cpu",
];

#[test]
fn exact_answers_agree_with_the_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = sizes(
        d,
        &[
            &BASE[..],
            &[
                "--routing",
                "central,random",
                "--target",
                "mean_wait<=0.01,p99_wait<=0.1",
            ],
        ]
        .concat(),
    );
    assert_eq!(rows.len(), 4);
    let central_mean = smallest(51, 0.01, |c| mmc_mean_wait(c, 150.0, 3.0));
    let central_p99 = smallest(51, 0.1, |c| mmc_p99(c, 150.0, 3.0));
    let random_mean = smallest(51, 0.01, |r| {
        let l = 150.0 / f64::from(r);
        l / 3.0 / (3.0 - l)
    });
    let random_p99 = smallest(51, 0.1, |r| mm1_p99(150.0 / f64::from(r), 3.0));
    for (row, (routing, target, want, method)) in rows.iter().zip([
        ("central", "mean_wait<=0.01", central_mean, "exact:erlang_c"),
        ("central", "p99_wait<=0.1", central_p99, "exact:erlang_c"),
        ("random", "mean_wait<=0.01", random_mean, "exact:mm1"),
        ("random", "p99_wait<=0.1", random_p99, "exact:mm1"),
    ]) {
        assert_eq!(row["routing"], routing);
        assert_eq!(row["target"], target);
        assert_eq!(row["method"], method);
        assert_eq!(row["resolved"], "exact");
        assert_eq!(row["answer"], want, "{row}");
        assert_eq!(row["neighbour"], row["answer"].as_u64().unwrap() - 1);
        assert!(row["metric_at_answer"].as_f64().unwrap() <= 0.1);
    }
    // The searches are the few evaluations of stepping and bisection.
    assert!(rows
        .iter()
        .all(|r| r["evaluations"].as_u64().unwrap() <= 30));
    assert_eq!(
        (central_mean, central_p99, random_mean, random_p99),
        (58, 60, 1717, 3720)
    );
}

#[test]
fn a_simulated_search_finds_the_exact_answer_when_its_cis_resolve_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = sizes(
        d,
        &[
            &BASE[..],
            &[
                "--routing",
                "central",
                "--target",
                "mean_wait<=0.01",
                "--simulate",
                "--reps",
                "32",
                "--customers",
                "20000",
                "--warmup",
                "2000",
            ],
        ]
        .concat(),
    );
    let row = &rows[0];
    assert_eq!(row["method"], "simulated");
    let answer = row["answer"].as_u64().unwrap() as u32;
    // Each simulated value covers the exact one (95% CIs, a fixed seed).
    for (n, v, ci) in [
        (answer, "metric_at_answer", "metric_at_answer_ci95"),
        (
            answer - 1,
            "metric_at_neighbour",
            "metric_at_neighbour_ci95",
        ),
    ] {
        let exact = mmc_mean_wait(n, 150.0, 3.0);
        let (v, ci) = (row[v].as_f64().unwrap(), row[ci].as_f64().unwrap());
        assert!(
            (v - exact).abs() <= ci,
            "R={n}: {v} ± {ci} vs exact {exact}"
        );
    }
    if row["resolved"] == "yes" {
        assert_eq!(answer, 58, "{row}");
    } else {
        assert!((57..=59).contains(&answer), "{row}");
    }
}

#[test]
fn bad_size_requests_are_refused() {
    let d = Path::new(".");
    let err = |args: &[&str], names: &[&str]| {
        let o = qsweep(d, &[&["size"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(e.lines().count(), 1, "{}", show(&o));
        for n in names {
            assert!(e.contains(n), "'{n}' not named: {}", show(&o));
        }
    };
    err(
        &["--target", "p99_wait<=0.1", "--rho", "0.9"],
        &["rho", "--lambda"],
    );
    err(
        &["--target", "p98_wait<=0.1"],
        &["--target", "p98_wait", "p99_wait"],
    );
    err(&["--target", "p99_wait"], &["--target", "no <= or <"]);
    err(
        &["--target", "p99_wait<=0.1", "--speeds", "3x1,2x2"],
        &["speeds", "mixed fleets"],
    );
    err(
        &[
            "--target",
            "p99_wait<=1",
            "--routing",
            "jsq",
            "--over",
            "workers",
            "--servers",
            "60",
        ],
        &["--over workers", "jsq"],
    );
    err(
        &["--target", "p99_wait<=1", "--over", "dynos"],
        &["--over", "dynos"],
    );
    err(&["--target", "p99_wait<=1", "-o", "s.xlsx"], &[".xlsx"]);
    let o = qsweep(d, &["size"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--target is required: {}",
        show(&o)
    );
}

/// An overnight search (issue 26): each evaluation is saved as it is made,
/// Ctrl-C says how to resume, `--resume` simulates only what is missing and
/// answers as the uninterrupted search did; `--dry-run` says what it would
/// do and writes nothing; `--then-run` simulates the answers' rows.
#[test]
fn a_search_saves_each_evaluation_resumes_and_runs_its_answers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = [
        "--routing",
        "random,central",
        "--lambda",
        "4",
        "--service",
        "exp(mean=1)",
        "--reps",
        "64",
        "--customers",
        "400000",
        "--warmup",
        "1000",
        "--backend",
        "cpu",
        "--threads",
        "2",
        "--simulate",
        "--target",
        "p99_wait<=1",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut all = vec!["size".to_string()];
        all.extend(args.iter().map(|s| s.to_string()));
        all.extend(extra.iter().map(|s| s.to_string()));
        all
    };
    // --dry-run: the plan, nothing written.
    let o = qsweep(
        d,
        &with(&["--dry-run", "-o", "dry.csv"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", show(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("nothing simulated") && plan.contains("routing=central"),
        "{plan}"
    );
    assert!(plan.contains("estimated time"), "{plan}");
    assert!(!d.join("dry.csv").exists() && !d.join("dry.journal.csv").exists());

    // The whole search, uninterrupted: the reference.
    let o = qsweep(
        d,
        &with(&["-o", "full.csv", "-q"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", show(&o));
    let full = std::fs::read_to_string(d.join("full.csv")).unwrap();
    assert!(
        !d.join("full.journal.csv").exists(),
        "the journal goes once complete"
    );

    // Stopped once a few evaluations are saved.
    let journal = d.join("part.journal.csv");
    let child = Command::new(BIN)
        .args(with(&["-o", "part.csv"]))
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    loop {
        let rows = std::fs::read_to_string(&journal)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if rows >= 4 || t0.elapsed().as_secs() > 120 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    if o.status.success() {
        // The machine was fast enough to finish first: nothing to resume.
        eprintln!("the search finished before it was stopped; resume not checked");
        return;
    }
    assert_eq!(o.status.code(), Some(130), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("To resume:") && err.contains("--resume"),
        "{err}"
    );
    let saved = std::fs::read_to_string(&journal).unwrap().lines().count() - 1;
    assert!(saved >= 3, "{saved} evaluations saved");
    // Without --resume the journal is not overwritten.
    let o = qsweep(
        d,
        &with(&["-o", "part.csv"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume"));
    // Resumed: the saved evaluations are not simulated again, and the
    // answers are the uninterrupted search's, digit for digit.
    let o = qsweep(
        d,
        &with(&["-o", "part.csv", "--resume", "--then-run", "answers.csv"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("saved evaluation(s) read from"), "{err}");
    assert!(err.matches("saved before").count() >= saved.min(3), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("part.csv")).unwrap(), full);
    assert!(!journal.exists());
    // --then-run: one row per answer, at its fleet.
    let answers = std::fs::read_to_string(d.join("answers.csv")).unwrap();
    let lines: Vec<&str> = answers.lines().collect();
    assert_eq!(lines.len(), 3, "{answers}");
    assert!(lines[0].starts_with("point,routing,servers,"));
    let sized: Vec<&str> = full
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(10).unwrap())
        .collect();
    for (line, servers) in lines[1..].iter().zip(&sized) {
        assert_eq!(line.split(',').nth(2), Some(*servers), "{line}");
    }
}

/// `--then-run` keeps what is written (issue 40): it must be a `.csv` file
/// name other than `-o`'s and `--hist`'s (the run's rows overwrote the
/// answers), and a stop while it simulates resumes with `--resume` (once
/// refused: `-o` already existed and the journal was gone).
#[test]
fn then_run_paths_are_checked_and_a_stopped_then_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "size",
            "--routing",
            "central",
            "--target",
            "mean_wait<=0.05",
        ]
        .iter()
        .chain(&BASE)
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        qsweep(d, &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (extra, says) in [
        (
            &["-o", "t.csv", "--then-run", "t.csv"][..],
            "--then-run: 't.csv' is also -o",
        ),
        (&["-o", "t.csv", "--then-run", "./t.csv"][..], "is also -o"),
        (
            &["--then-run", "r.csv", "--hist", "r.csv"][..],
            "--hist: 'r.csv' is also --then-run",
        ),
        (
            &["--then-run", "r.json"][..],
            "--then-run: 'r.json' is not a .csv file name",
        ),
        (
            &["--then-run", "r.meta.json"][..],
            "is not a .csv file name",
        ),
        (
            &["--then-run", "-"][..],
            "--then-run: '-' is not a .csv file name",
        ),
    ] {
        let o = run(extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{extra:?}: {err}");
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "{extra:?} wrote");
    }
    // The answer is exact (Erlang C), so the then-run's simulation is the
    // slow part: large enough to be stopped in the middle.
    let sim = ["--reps", "1024", "--customers", "100000", "-j", "1"];
    let full: Vec<&str> = ["-o", "a.csv", "--then-run", "rows.csv"]
        .into_iter()
        .chain(sim)
        .collect();
    let a = args(&full);
    let child = Command::new(BIN)
        .args(&a)
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the answers' file, then stop the then-run.
    let started = std::time::Instant::now();
    while !d.join("a.csv").exists() {
        assert!(started.elapsed().as_secs() < 60, "no answers written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        !out.status.success(),
        "the then-run finished before SIGTERM"
    );
    assert!(
        !d.join("rows.csv").exists(),
        "a half-written --then-run CSV"
    );
    let answers = std::fs::read_to_string(d.join("a.csv")).unwrap();
    let mut resumed = full.clone();
    resumed.push("--resume");
    let o = run(&resumed);
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(std::fs::read_to_string(d.join("a.csv")).unwrap(), answers);
    let rows = std::fs::read_to_string(d.join("rows.csv")).unwrap();
    assert_eq!(rows.lines().count(), 2, "{rows}");
    assert!(!d.join("a.journal.csv").exists());
    // Without --resume or --force, existing outputs are refused.
    let o = run(&full);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
}

/// A capacity K bounds a central queue's fleet (issue 40: `size --capacity
/// 10` grew central past K, then failed with "capacity: 10 is below the
/// queue's 12 servers" and dropped random's answer). The search stops at
/// K, and a case that cannot be met within it says why.
#[test]
fn a_capacity_bounds_the_search_and_keeps_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args: Vec<&str> = [
        "size",
        "--routing",
        "random,central",
        "--capacity",
        "10",
        "--target",
        "p_wait<=0.001",
        "--reps",
        "64",
        "--customers",
        "4000",
        "--warmup",
        "0",
        "-o",
        "k.csv",
    ]
    .into_iter()
    .chain(BASE)
    .collect();
    let o = qsweep(d, &args);
    assert!(o.status.success(), "{}", show(&o));
    let text = std::fs::read_to_string(d.join("k.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "{text}");
    for row in &rows {
        let answer = &row[col("answer")];
        match &row[col("routing")] {
            // Every dyno its own queue of K: any fleet is allowed.
            "random" => assert!(!answer.is_empty(), "{text}"),
            // M/M/R/10 at λ = 150, µ = 3 needs R ≥ 51 to keep waits rare,
            // more than a capacity of 10 can hold in service.
            _ => {
                assert!(
                    answer.is_empty() || answer.parse::<u32>().unwrap() <= 10,
                    "{text}"
                );
            }
        }
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("is below the queue's"), "{err}");
}
