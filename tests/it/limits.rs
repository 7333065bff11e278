//! Sizes that do not fit, on a real process with a memory rlimit: every one
//! is refused (exit 2, one line naming the field and the limit) before it
//! is allocated, and a seeded random walk over specs and flags only ever
//! ends in exit 0 or 2 (or 130 when the test stops a long run with Ctrl-C,
//! which must then take under two seconds): never a panic, never an abort
//! on an allocation, never more address space than the rlimit.
//!
//! Each child runs under `ulimit -v` ([`VM_KB`]); qsweep then takes half of
//! that as its memory limit, so anything it accepts must fit with the
//! rest to spare for thread stacks and allocator arenas.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Rng;

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");
/// Address space each child may map: 1 GiB.
const VM_KB: u64 = 1 << 20;
/// A run still going after this long is stopped with Ctrl-C.
const RUN_CAP: Duration = Duration::from_millis(1500);
/// ... and must end within this.
const STOP_CAP: Duration = Duration::from_secs(2);

/// What a child did.
struct Outcome {
    code: Option<i32>,
    stderr: String,
    /// It was stopped with Ctrl-C after [`RUN_CAP`]; it took this long.
    stopped: Option<Duration>,
}

/// Runs `qsweep ARGS` in `dir` under `ulimit -v VM_KB`, stopping a run
/// with SIGINT after [`RUN_CAP`] (`qsweep plot` has no Ctrl-C handling to
/// test: it is waited for).
fn run_limited(dir: &Path, args: &[String]) -> Outcome {
    let stoppable = args.first().is_some_and(|a| a == "run");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {VM_KB} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("QSWEEP_MEMORY_LIMIT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sh");
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let started = Instant::now();
    let mut stopped = None;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if stoppable && stopped.is_none() && started.elapsed() > RUN_CAP {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            stopped = Some(Instant::now());
        }
        let since = stopped.unwrap_or(started);
        if since.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("qsweep {args:?}: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Outcome {
        code: status.code(),
        stderr: reader.join().unwrap(),
        stopped: stopped.map(|at| at.elapsed()),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Runs a two-point sweep that writes `r.csv` in `dir` (an input for the
/// plot cases).
fn small_results_csv(dir: &Path) -> std::process::Output {
    Command::new(BIN)
        .args([
            "run",
            "-q",
            "--backend",
            "cpu",
            "--servers",
            "1,2",
            "--rho",
            "0.5",
        ])
        .args([
            "--reps",
            "4",
            "--customers",
            "100",
            "--warmup",
            "0",
            "-o",
            "r.csv",
        ])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The one error line of a refused command.
fn refused(dir: &Path, args: &[String]) -> String {
    let o = run_limited(dir, args);
    assert_eq!(o.code, Some(2), "qsweep {args:?}: {}", o.stderr);
    let errors: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("qsweep: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "qsweep {args:?}: {}", o.stderr);
    errors[0].to_string()
}

#[test]
fn memory_bombs_are_refused_by_name_before_they_are_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |extra: &[&str]| {
        let mut a = strings(&["run", "-q", "--backend", "cpu", "-o", "x.csv"]);
        a.extend(strings(extra));
        a
    };
    let limit = "within the memory limit of 512 MiB (half the address-space limit (ulimit -v)";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--servers", "1e9", "--routing", "central"],
            "servers: ",
        ),
        (
            vec!["--servers", "2", "--workers", "1e9", "--routing", "random"],
            "workers: ",
        ),
        (
            vec!["--servers", "2", "--workers", "1e9", "--routing", "central"],
            "servers × workers: ",
        ),
        (vec!["--servers", "1e9", "--routing", "jsq"], "servers: "),
        (vec!["--servers", "1e8", "--routing", "pod"], "servers: "),
        (vec!["--servers", "1e8", "--routing", "jiq"], "servers: "),
        (vec!["--servers", "1e9", "--routing", "lwl"], "servers: "),
        (
            vec![
                "--servers",
                "1e6",
                "--routing",
                "central",
                "--routers",
                "1024",
            ],
            "routers: ",
        ),
        (vec!["--reps", "4294967295", "--customers", "1"], "reps: "),
        (
            vec![
                "--precision",
                "0.001",
                "--max-customers",
                "1e15",
                "--customers",
                "1",
                "--warmup",
                "0",
            ],
            "max-customers: ",
        ),
    ];
    for (extra, field) in cases {
        let started = Instant::now();
        let e = refused(d, &run(&extra));
        assert!(
            e.starts_with(&format!("qsweep: error: {field}")) && e.contains(limit),
            "{extra:?}: {e}"
        );
        assert!(started.elapsed() < Duration::from_secs(10), "{extra:?}");
    }
    // A grid of 10^9 points is refused before it is expanded.
    let list = |n: usize, f: &dyn Fn(usize) -> String| (1..=n).map(f).collect::<Vec<_>>().join(",");
    let grid = run(&[
        "--routing",
        "random",
        "--servers",
        &list(1000, &|i| (i + 100).to_string()),
        "--rho",
        &list(1000, &|i| format!("{}", i as f64 / 1001.0)),
        "--service",
        &list(1000, &|i| format!("det(value={i})")),
    ]);
    let e = refused(d, &grid);
    assert!(
        e.starts_with("qsweep: error: [sweep]: a grid of 1000000000 points") && e.contains(limit),
        "{e}"
    );
    // Nothing was written.
    assert!(!d.join("x.csv").exists());
    // A figure's pixels, before they are allocated; an SVG costs nothing.
    let ok = small_results_csv(d);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let plot = |out: &str| {
        strings(&[
            "plot", "r.csv", "-o", out, "--width", "100000", "--height", "100000",
        ])
    };
    let e = refused(d, &plot("big.png"));
    assert!(
        e.starts_with("qsweep: error: big.png: --width/--height: a 100000×100000 figure"),
        "{e}"
    );
    let o = run_limited(d, &plot("big.svg"));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // The limit can be set, and a bad setting is a usage error.
    let o = Command::new(BIN)
        .args(["run", "-q", "--backend", "cpu", "--servers", "1e6"])
        .args(["--routing", "central", "-o", "y.csv"])
        .env("QSWEEP_MEMORY_LIMIT", "100M")
        .current_dir(d)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("within the memory limit of 100 MiB (QSWEEP_MEMORY_LIMIT=100M;"),
        "{e}"
    );
    let o = Command::new(BIN)
        .args(["run", "--dry-run", "--backend", "cpu"])
        .env("QSWEEP_MEMORY_LIMIT", "lots")
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("QSWEEP_MEMORY_LIMIT: 'lots' is not a size")
    );
}

/// One random `qsweep run` or `qsweep plot` command line: valid values,
/// mostly small, now and then enormous, and in one case in six one wrong
/// value.
fn random_case(rng: &mut Rng) -> Vec<String> {
    if rng.chance(12) {
        let ext = rng.pick(&["svg", "png"]);
        let sizes = ["0", "200", "5000", "100000", "4294967295", "x", "-1"];
        return strings(&[
            "plot",
            "r.csv",
            "-o",
            &format!("fig.{ext}"),
            "--width",
            rng.pick(&sizes),
            "--height",
            rng.pick(&sizes),
        ]);
    }
    let routing = [
        "random",
        "round_robin",
        "central",
        "jsq",
        "pod",
        "jiq",
        "lwl",
    ];
    let r1 = rng.pick(&routing);
    let routing_value = if rng.chance(30) {
        format!("{r1},{}", rng.pick(&routing))
    } else {
        r1.to_string()
    };
    let small = ["1", "2", "7", "64"];
    let servers = if rng.chance(75) {
        rng.pick(&small)
    } else {
        rng.pick(&["1000", "100000", "1e6", "1e8", "1e9", "4294967295"])
    };
    let mut flags: Vec<(&str, String)> = vec![
        ("routing", routing_value),
        ("servers", servers.to_string()),
        ("rho", rng.pick(&["0.1", "0.5", "0.8", "0.95"]).to_string()),
        (
            "service",
            rng.pick(&[
                "exp(mean=1)",
                "det(value=1)",
                "hyperexp(scv=4,mean=1)",
                "weibull(shape=0.5,mean=1)",
                "lognormal(scv=3,mean=1)",
                "pareto(alpha=2.5,min=1,max=1000)",
                "gamma(shape=0.5,mean=1)",
                "erlang(k=3,mean=1)",
            ])
            .to_string(),
        ),
        (
            "reps",
            if rng.chance(85) {
                rng.pick(&["1", "2", "16", "100"])
            } else {
                rng.pick(&["65536", "4294967295"])
            }
            .to_string(),
        ),
        (
            "customers",
            if rng.chance(85) {
                rng.pick(&["1", "10", "1000", "5000"])
            } else {
                rng.pick(&["4294967295", "1e7"])
            }
            .to_string(),
        ),
        ("threads", rng.pick(&["1", "2"]).to_string()),
        ("seed", (rng.next() % 1000).to_string()),
    ];
    if rng.chance(20) {
        let w = rng.pick(&["1", "2", "8", "1000000", "1e9"]);
        flags.push(("workers", w.to_string()));
    }
    if rng.chance(15) {
        let k = rng.pick(&["1", "2", "16", "1024"]);
        flags.push(("routers", k.to_string()));
    }
    if rng.chance(15) {
        flags.push(("choices", rng.pick(&["1", "2", "32"]).to_string()));
    }
    if rng.chance(15) {
        let law = rng.pick(&["exp", "det", "erlang(k=2)"]);
        flags.push(("arrival", law.to_string()));
    }
    // (The warm-up pilots of `auto` do not watch the stop flag; Ctrl-C
    // then exits at once, which is tested too.)
    flags.push(("warmup", rng.pick(&["0", "10", "1000", "auto"]).to_string()));
    if rng.chance(20) {
        flags.push(("precision", rng.pick(&["0.3", "0.05"]).to_string()));
        if rng.chance(50) {
            let m = rng.pick(&["100", "1e6", "1e12"]);
            flags.push(("max-customers", m.to_string()));
        }
    }
    if rng.chance(17) {
        let (name, bad) = [
            ("servers", "0"),
            ("servers", "x"),
            ("rho", "1.5"),
            ("rho", "-1"),
            ("reps", "0"),
            ("customers", "0"),
            ("choices", "99"),
            ("precision", "0"),
            ("service", "foo"),
            ("workers", "0"),
        ][rng.below(10)];
        flags.retain(|f| f.0 != name);
        flags.push((name, bad.to_string()));
    }
    let mut a = strings(&["run", "-q", "--backend", "cpu", "--force", "-o", "f.csv"]);
    for (name, value) in flags {
        a.push(format!("--{name}"));
        a.push(value);
    }
    a
}

#[test]
fn random_specs_and_flags_end_in_exit_0_or_2_within_their_memory() {
    let seed: u64 = std::env::var("QSWEEP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026);
    let cases: usize = std::env::var("QSWEEP_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ok = small_results_csv(d);
    assert!(ok.status.success());
    let mut rng = Rng(seed.wrapping_mul(2).wrapping_add(1));
    let mut seen = [0usize; 3];
    for case in 0..cases {
        let args = random_case(&mut rng);
        let o = run_limited(d, &args);
        let what = format!(
            "case {case} (QSWEEP_FUZZ_SEED={seed}): qsweep {}\n{}",
            args.join(" "),
            o.stderr
        );
        for bad in [
            "panicked",
            "memory allocation",
            "RUST_BACKTRACE",
            "overflow",
        ] {
            assert!(!o.stderr.contains(bad), "{what}");
        }
        if std::env::var_os("QSWEEP_FUZZ_SHOW").is_some() {
            eprintln!("{what}");
        }
        match (o.code, o.stopped) {
            (Some(0), _) => seen[0] += 1,
            (Some(2), _) => {
                seen[1] += 1;
                // (clap words its own: `error: invalid value ...`.)
                let errors = o
                    .stderr
                    .lines()
                    .filter(|l| l.starts_with("qsweep: error:") || l.starts_with("error:"))
                    .count();
                assert_eq!(errors, 1, "{what}");
            }
            (Some(130), Some(took)) => {
                seen[2] += 1;
                assert!(took < STOP_CAP, "stopped after {took:?}: {what}");
            }
            _ => panic!("exit {:?}: {what}", o.code),
        }
    }
    eprintln!(
        "{cases} cases: {} ran, {} refused, {} stopped by Ctrl-C",
        seen[0], seen[1], seen[2]
    );
    // The walk reaches all three.
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}
