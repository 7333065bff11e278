//! Seeded property tests over the surfaces of issue 25 (laws, specs, flags,
//! plot CSVs, merge pieces): whatever the input, qsweep exits 0, 2 or 3,
//! never panics or dies of a signal, says a refusal (exit 2) in at most three
//! lines, and finishes within a bound. Bounded: a few hundred tiny commands
//! (no simulation beyond a few hundred customers), a fixed seed, so a
//! failure names the case and reproduces.
//!
//! Beyond the fixed cases: with `QSWEEP_PROP_SECONDS=S` each test keeps
//! drawing cases for S more seconds (CI does, with `QSWEEP_PROP_SEED` from
//! the source tree, so every change of the code explores new cases), and a
//! failure says which `QSWEEP_PROP_SEED` and `QSWEEP_PROP_CASES` replay it.

use std::cell::RefCell;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::Rng;

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

const SPEC: &str = "[sweep]\nrouting = [\"random\", \"central\"]\nservers = [2]\nrho = [0.5]\n\
                    service = [\"exp(mean=1)\"]\n\n[run]\nreps = 2\ncustomers = 100\n\
                    warmup = 10\nbackend = \"cpu\"\nthreads = 1\n";

/// The seed of a test, mixed with `QSWEEP_PROP_SEED` when set (to explore
/// beyond the fixed cases CI runs).
fn seed(base: u64) -> u64 {
    let extra: u64 = std::env::var("QSWEEP_PROP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (base ^ extra.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1
}

fn env_number(name: &str) -> Option<f64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

thread_local! {
    /// The case a test is on, for failure messages (tests run on threads of
    /// their own).
    static CASE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The case being checked, as failure messages name it.
fn case() -> String {
    CASE.with(|c| c.borrow().clone())
}

/// A test's case numbers: `0..fixed`, then, with `QSWEEP_PROP_SECONDS`,
/// more until that many seconds have passed since the test began;
/// `QSWEEP_PROP_CASES=N` runs exactly N (to replay a failure: the cases
/// draw from one stream, so case i needs the i before it).
fn cases(test: &'static str, fixed: usize) -> impl Iterator<Item = usize> {
    let exact = env_number("QSWEEP_PROP_CASES").map(|n| n as usize);
    let extra = env_number("QSWEEP_PROP_SECONDS")
        .unwrap_or(0.0)
        .clamp(0.0, 3600.0);
    let until = Instant::now() + Duration::from_secs_f64(extra);
    let seed = std::env::var("QSWEEP_PROP_SEED").unwrap_or_else(|_| "0".into());
    (0..)
        .take_while(move |&i| match exact {
            Some(n) => i < n,
            None => i < fixed || Instant::now() < until,
        })
        .inspect(move |&i| {
            CASE.with(|c| {
                *c.borrow_mut() = format!(
                    "{test}, case {i} (replay: QSWEEP_PROP_SEED={seed} QSWEEP_PROP_CASES={} \
                     cargo test --test hostile_props {test})",
                    i + 1
                )
            });
        })
}

const NUMBERS: [&str; 20] = [
    "1",
    "0.5",
    "2",
    "0",
    "-1",
    "1e308",
    "1e-308",
    "nan",
    "inf",
    "-inf",
    "",
    "x",
    "3.5",
    "1e9",
    "4294967296",
    "0x10",
    "1,2",
    "(",
    "[1,2]",
    "[0.1",
];

const LAWS: [&str; 12] = [
    "exp",
    "det",
    "erlang",
    "gamma",
    "hyperexp",
    "lognormal",
    "weibull",
    "pareto",
    "uniform",
    "empirical",
    "mmpp",
    "trace",
];

const KEYS: [&str; 18] = [
    "mean", "rate", "value", "k", "shape", "scale", "scv", "sigma", "median", "alpha", "min",
    "max", "file", "bogus", "", "mean=1", "rates", "switch",
];

fn law(rng: &mut Rng) -> String {
    let name = rng.pick(&LAWS);
    let n = rng.below(4);
    let args: Vec<String> = (0..n)
        .map(|_| {
            let key = rng.pick(&KEYS);
            let value = if key == "file" {
                rng.pick(&["data.txt", "missing.txt", "fifo", ".", ""])
            } else {
                rng.pick(&NUMBERS)
            };
            format!("{key}={value}")
        })
        .collect();
    match rng.below(8) {
        0 => name.to_string(),
        1 => format!("{name}({}", args.join(",")),
        _ => format!("{name}({})", args.join(",")),
    }
}

/// Runs `args` in `dir` within `secs`; checks the contract; returns the output.
fn check(dir: &Path, args: &[String], secs: u64) -> Output {
    check_under(dir, args, secs, None)
}

/// [`check`], with every file limited to `blocks` of 512 bytes when given
/// (`ulimit -f`: a full disk without root), where exit 1 (a write error)
/// is also the contract.
fn check_under(dir: &Path, args: &[String], secs: u64, blocks: Option<u64>) -> Output {
    let mut command = match blocks {
        Some(b) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -f {b} && exec \"$0\" \"$@\""))
                .arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    let mut child = command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qsweep starts");
    let start = Instant::now();
    // Drain stdout/stderr on threads so a chatty command cannot block.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).ok();
        v
    });
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "qsweep {args:?} did not finish within {secs} s [{}]",
                case()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let out = Output {
        status,
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
    };
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let shown = format!(
        "qsweep {args:?}: exit {:?} [{}]\n{err}",
        out.status.code(),
        case()
    );
    assert!(!err.contains("panicked"), "panic: {shown}");
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {shown}"));
    let full_disk = blocks.is_some() && code == 1;
    assert!(
        matches!(code, 0 | 2 | 3) || full_disk,
        "exit {code}: {shown}"
    );
    if full_disk {
        let lines = err
            .lines()
            .filter(|l| l.starts_with("qsweep: error"))
            .count();
        assert_eq!(lines, 1, "a write error in {lines} error lines: {shown}");
    }
    // (clap's own errors, for a flag it does not know or a value that looks
    // like a flag, come with its usage block: the contract is about ours.)
    if code == 2 && !err.starts_with("error: ") {
        let lines = err
            .lines()
            .filter(|l| !l.starts_with("qsweep: note") && !l.starts_with("qsweep: backend"))
            .count();
        assert!(lines <= 3, "a refusal in {lines} lines: {shown}");
    }
    out
}

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SPEC).unwrap();
    std::fs::write(d.join("data.txt"), "0.5\n1\n# c\n2\n\n4\n").unwrap();
    let st = Command::new("mkfifo").arg(d.join("fifo")).status().unwrap();
    assert!(st.success());
    dir
}

#[test]
fn any_law_string_is_answered_or_refused() {
    let dir = setup();
    let d = dir.path();
    let mut rng = Rng(seed(0x9e37_79b9_7f4a_7c15));
    for i in cases("any_law_string_is_answered_or_refused", 120) {
        let service = law(&mut rng);
        let arrival = if rng.below(3) == 0 {
            law(&mut rng)
        } else {
            "exp".to_string()
        };
        let mut args = strings(&["analytic", "s.toml", "--service", &service]);
        args.extend(strings(&["--arrival", &arrival]));
        let out = check(d, &args, 30);
        // Every fourth law that is accepted also runs (tiny).
        if out.status.success() && i % 4 == 0 {
            let csv = format!("r{i}.csv");
            let mut run = strings(&["run", "s.toml", "-q", "-o", &csv, "--service", &service]);
            run.extend(strings(&["--arrival", &arrival]));
            check(d, &run, 60);
        }
    }
}

#[test]
fn any_axis_flag_value_is_answered_or_refused() {
    let dir = setup();
    let d = dir.path();
    let mut rng = Rng(seed(0x0123_4567_89ab_cdef));
    let flags = [
        "--servers",
        "--rho",
        "--lambda",
        "--workers",
        "--choices",
        "--routers",
        "--routing",
        "--arrival",
        "--speeds",
    ];
    for _ in cases("any_axis_flag_value_is_answered_or_refused", 120) {
        let mut args = strings(&["analytic", "s.toml"]);
        for _ in 0..1 + rng.below(2) {
            let flag = rng.pick(&flags);
            let value = match flag {
                "--routing" => rng
                    .pick(&[
                        "random", "central", "jsq", "pod", "jiq", "rr", "weighted", "x", "",
                    ])
                    .to_string(),
                // Fleets: counts and speeds from the hostile numbers, one
                // to five classes, sometimes two fleets.
                "--speeds" => {
                    let fleet = |rng: &mut Rng| {
                        (0..1 + rng.below(5))
                            .map(|_| format!("{}x{}", rng.pick(&NUMBERS), rng.pick(&NUMBERS)))
                            .collect::<Vec<_>>()
                            .join(",")
                    };
                    let first = fleet(&mut rng);
                    if rng.below(3) == 0 {
                        format!("{first};{}", fleet(&mut rng))
                    } else {
                        first
                    }
                }
                "--arrival" => law(&mut rng),
                _ => {
                    let a = rng.pick(&NUMBERS);
                    if rng.below(4) == 0 {
                        format!("{a},{}", rng.pick(&NUMBERS))
                    } else {
                        a.to_string()
                    }
                }
            };
            args.push(flag.to_string());
            args.push(value);
        }
        check(d, &args, 30);
    }
}

#[test]
fn any_edit_of_a_spec_is_answered_or_refused() {
    let dir = setup();
    let d = dir.path();
    let mut rng = Rng(seed(0xdead_beef_cafe_f00d));
    let junk = [
        "=", "[", "]", "\"", ",", "\n", "0", "-", "servers", "#", "\u{0}", "é",
    ];
    for i in cases("any_edit_of_a_spec_is_answered_or_refused", 120) {
        let mut text: Vec<char> = SPEC.chars().collect();
        for _ in 0..1 + rng.below(3) {
            if text.is_empty() {
                break;
            }
            let at = rng.below(text.len());
            match rng.below(3) {
                0 => {
                    text.remove(at);
                }
                1 => {
                    let j = rng.pick(&junk);
                    for (k, c) in j.chars().enumerate() {
                        text.insert(at + k, c);
                    }
                }
                _ => text.truncate(at),
            }
        }
        let name = format!("e{i}.toml");
        std::fs::write(d.join(&name), text.into_iter().collect::<String>()).unwrap();
        check(d, &strings(&["analytic", &name]), 30);
    }
}

#[test]
fn any_edit_of_a_results_csv_is_plotted_exported_or_refused() {
    let dir = setup();
    let d = dir.path();
    check(d, &strings(&["run", "s.toml", "-q", "-o", "r.csv"]), 60);
    let csv = std::fs::read_to_string(d.join("r.csv")).unwrap();
    let mut rng = Rng(seed(0x1357_9bdf_2468_ace0));
    let junk = [
        "", "x", "nan", "-inf", "1e309", "\"", ",", "\n", "\u{1}", "|", "0",
    ];
    for i in cases(
        "any_edit_of_a_results_csv_is_plotted_exported_or_refused",
        60,
    ) {
        let mut text = csv.clone();
        for _ in 0..1 + rng.below(3) {
            if text.is_empty() {
                break;
            }
            let at = rng.below(text.len());
            let at = (0..=at).rev().find(|&k| text.is_char_boundary(k)).unwrap();
            match rng.below(3) {
                0 => text.insert_str(at, rng.pick(&junk)),
                1 => text.truncate(at),
                _ => {
                    let end = (at + 1 + rng.below(8)).min(text.len());
                    let end = (end..=text.len())
                        .find(|&k| text.is_char_boundary(k))
                        .unwrap();
                    text.replace_range(at..end, rng.pick(&junk));
                }
            }
        }
        let name = format!("m{i}.csv");
        std::fs::write(d.join(&name), &text).unwrap();
        let fig = format!("m{i}.svg");
        check(d, &strings(&["plot", &name, "-o", &fig]), 60);
        let md = format!("m{i}.md");
        check(d, &strings(&["export", &name, &md]), 30);
    }
}

#[test]
fn any_edit_of_a_merge_piece_is_merged_or_refused() {
    let dir = setup();
    let d = dir.path();
    for k in 0..2 {
        let shard = format!("{k}/2");
        let out = format!("p{k}.csv");
        check(
            d,
            &strings(&["run", "s.toml", "-q", "--shard", &shard, "-o", &out]),
            60,
        );
    }
    let metas: Vec<String> = (0..2)
        .map(|k| std::fs::read_to_string(d.join(format!("p{k}.meta.json"))).unwrap())
        .collect();
    let csvs: Vec<String> = (0..2)
        .map(|k| std::fs::read_to_string(d.join(format!("p{k}.csv"))).unwrap())
        .collect();
    let mut rng = Rng(seed(0xfeed_face_0bad_f00d));
    let fields = [
        "points_total",
        "points",
        "points_done",
        "shard",
        "seed",
        "csv",
        "spec_hash",
    ];
    let values = [
        "0",
        "1",
        "3",
        "4294967296",
        "-1",
        "null",
        "\"0/2\"",
        "\"x\"",
        "1e3",
    ];
    for i in cases("any_edit_of_a_merge_piece_is_merged_or_refused", 40) {
        let k = rng.below(2);
        let mut meta: serde_json::Value = serde_json::from_str(&metas[k]).unwrap();
        let mut csv = csvs[k].clone();
        if rng.below(2) == 0 {
            let f = rng.pick(&fields);
            meta[f] = serde_json::from_str(rng.pick(&values)).unwrap();
        }
        if rng.below(2) == 0 {
            let last = csv.lines().last().unwrap().to_string();
            let point = rng.pick(&["0", "1", "2", "3", "99", "x", "-1"]);
            let comma = last.find(',').unwrap();
            csv.push_str(&format!("{point}{}\n", &last[comma..]));
        }
        let dir_i = d.join(format!("m{i}"));
        std::fs::create_dir(&dir_i).unwrap();
        for j in 0..2 {
            let (m, c) = if j == k {
                (serde_json::to_string(&meta).unwrap(), csv.clone())
            } else {
                (metas[j].clone(), csvs[j].clone())
            };
            std::fs::write(dir_i.join(format!("p{j}.meta.json")), m).unwrap();
            std::fs::write(dir_i.join(format!("p{j}.csv")), c).unwrap();
        }
        check(
            &dir_i,
            &strings(&["merge", "all.csv", "p0.csv", "p1.csv"]),
            30,
        );
    }
}

#[test]
fn any_empirical_file_is_answered_or_refused() {
    let dir = setup();
    let d = dir.path();
    let mut rng = Rng(seed(0x2468_1357_aaaa_5555));
    let lines = [
        "1",
        "0.5",
        "2e-3",
        "-1",
        "0",
        "nan",
        "inf",
        "1e39",
        "1e-46",
        "",
        "# note",
        "x",
        "1 2",
        "\u{feff}1",
        "1\r",
        "\u{0}",
        "3,4",
        "  7  ",
    ];
    for i in cases("any_empirical_file_is_answered_or_refused", 80) {
        let n = rng.below(12);
        let text: Vec<&str> = (0..n).map(|_| rng.pick(&lines)).collect();
        let name = format!("e{i}.txt");
        std::fs::write(d.join(&name), text.join("\n")).unwrap();
        let law = format!("empirical(file={name})");
        let args = strings(&["analytic", "s.toml", "--service", &law]);
        let out = check(d, &args, 30);
        if out.status.success() && i % 4 == 0 {
            let csv = format!("r{i}.csv");
            check(
                d,
                &strings(&["run", "s.toml", "-q", "-o", &csv, "--service", &law]),
                60,
            );
        }
    }
}

/// Trace files of any spread (issue 40: gaps of 1e-39 ran to a mean wait
/// of 0): each is refused in one line, or runs to a positive, finite mean
/// wait (exponential service at rho 0.5: some request waits).
#[test]
fn any_trace_file_is_answered_or_refused() {
    let dir = setup();
    let d = dir.path();
    let mut rng = Rng(seed(0x7777_1111_3333_9999));
    let units = [
        "1", "1e-39", "1e-45", "1e-30", "1e30", "1e38", "1e300", "1e-300", "3600", "0",
    ];
    for i in cases("any_trace_file_is_answered_or_refused", 40) {
        let unit: f64 = rng.pick(&units).parse().unwrap();
        let start: f64 = *[0.0, 1.7e9, 1e300].get(rng.below(3)).unwrap();
        let n = 2 + rng.below(30);
        let mut t = start;
        let mut lines = Vec::new();
        for _ in 0..n {
            lines.push(format!("{t:e}"));
            // Gaps of 0 to 3 units, some repeated timestamps.
            t += unit * rng.below(4) as f64;
        }
        let name = format!("t{i}.txt");
        std::fs::write(d.join(&name), lines.join("\n")).unwrap();
        let law = format!("trace(file={name})");
        let csv = format!("t{i}.csv");
        let args = strings(&["run", "s.toml", "-q", "-o", &csv, "--arrival", &law]);
        let out = check(d, &args, 60);
        if out.status.success() {
            let text = std::fs::read_to_string(d.join(&csv)).unwrap();
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let col = r
                .headers()
                .unwrap()
                .iter()
                .position(|h| h == "mean_wait")
                .unwrap();
            for rec in r.records() {
                let w: f64 = rec.unwrap()[col].parse().unwrap();
                assert!(
                    w.is_finite() && w > 0.0,
                    "{law} ({lines:?}): mean wait {w} [{}]",
                    case()
                );
            }
        }
    }
}

/// Every file in `dir` (not below it) with its bytes, or its kind.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let t = e.file_type().unwrap();
            let bytes = if t.is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                format!("{t:?}").into_bytes()
            };
            (name, bytes)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn no_output_path_loses_an_existing_file() {
    let dir = setup();
    let d = dir.path();
    check(d, &strings(&["run", "s.toml", "-q", "-o", "r.csv"]), 60);
    check(d, &strings(&["run", "s.toml", "-q", "-o", "plain"]), 60);
    for k in 0..2 {
        let shard = format!("{k}/2");
        let out = format!("p{k}.csv");
        check(
            d,
            &strings(&["run", "s.toml", "-q", "--shard", &shard, "-o", &out]),
            60,
        );
    }
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("x.meta.json"), "not ours").unwrap();
    let names = [
        "r.csv",
        "plain",
        "new.csv",
        "new",
        "x.csv",
        "r.meta.json",
        "p0.meta.json",
        "p0",
        "s.toml",
        "data.txt",
        "fifo",
        "sub",
        "sub/",
        "missing/x.csv",
        ".",
        "r.json",
        "r.JSON",
        "new.md",
        "new.parquet",
        "r.csv.partial",
        "new.xlsx",
        "",
    ];
    let mut rng = Rng(seed(0x5555_aaaa_1234_4321));
    for _ in cases("no_output_path_loses_an_existing_file", 60) {
        let out = rng.pick(&names);
        let force = rng.below(2) == 0;
        let mut args = match rng.below(7) {
            0 | 1 => strings(&["run", "s.toml", "-q", "-o", out]),
            2 => strings(&["analytic", "s.toml", "-o", out]),
            3 => strings(&["merge", out, "p0.csv", "p1.csv"]),
            4 => strings(&["plot", "r.csv", "-o", out]),
            5 => {
                // Sizing, its answers' rows (and histograms) on any path.
                let mut a = strings(&["size", "s.toml", "-q", "--target", "mean_wait<=5"]);
                a.extend(strings(&["--then-run", out]));
                if rng.below(2) == 0 {
                    a.extend(strings(&["--hist", rng.pick(&names)]));
                }
                if rng.below(2) == 0 {
                    a.extend(strings(&["-o", rng.pick(&names)]));
                }
                a
            }
            _ => strings(&["export", "r.csv", out]),
        };
        if force {
            args.push("--force".into());
        }
        // A full disk, sometimes: nothing may be lost then either.
        let blocks = (rng.below(4) == 0).then(|| 1 + rng.below(6) as u64);
        let before = snapshot(d);
        let o = check_under(d, &args, 60, blocks);
        let after = snapshot(d);
        let code = o.status.code();
        for (name, bytes) in &before {
            let now = after.iter().find(|(n, _)| n == name);
            let changed = now.is_none_or(|(_, b)| b != bytes);
            // Only a forced command that succeeded may replace a file, and
            // only its output or that output's meta.
            let allowed = force
                && code == Some(0)
                && (out.trim_end_matches('/') == name
                    || name.ends_with(".meta.json")
                    || name.ends_with(".csv"));
            // A forced `run -o r.json` completes its CSV (r.csv, and its
            // meta) before it converts it: a full disk may then stop the
            // conversion, and the completed CSV, whole, stays.
            let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
            let completed_first = force
                && args[0] == "run"
                && blocks.is_some()
                && code == Some(1)
                && now.is_some_and(|(_, b)| {
                    if name.ends_with(".meta.json") {
                        serde_json::from_slice::<serde_json::Value>(b).is_ok()
                    } else {
                        name.ends_with(".csv") && lines(b) == lines(bytes) && b.ends_with(b"\n")
                    }
                });
            let allowed = allowed || completed_first;
            assert!(
                !changed || allowed,
                "qsweep {args:?} (exit {code:?}) changed or removed '{name}' [{}]",
                case()
            );
        }
        // Undo what the case wrote, so the next case starts the same.
        for (name, _) in &after {
            if !before.iter().any(|(n, _)| n == name) {
                let p = d.join(name);
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).unwrap();
                } else {
                    std::fs::remove_file(&p).unwrap();
                }
            }
        }
        for (name, bytes) in &before {
            let p = d.join(name);
            if p.is_file() {
                std::fs::write(&p, bytes).unwrap();
            }
        }
    }
}
