//! Outputs written whole or not at all (issue 40): `plot`, `export` and
//! `merge` with `--force` on a full disk once truncated the old figure,
//! table or merged CSV and then failed, and `ulimit -f` killed qsweep with
//! SIGXFSZ and no message. A file-size limit (`ulimit -f`, which needs no
//! root, unlike a small tmpfs) stands in for the full disk: a write past it
//! fails with EFBIG as one past a full disk fails with ENOSPC.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{listing, succeed_in as ok, BIN};

/// `qsweep ARGS` with writes limited to 1 KiB per file (`ulimit -f 2`: two
/// 512-byte blocks).
fn qsweep_limited(dir: &Path, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 2 && exec \"$0\" \"$@\"")
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run sh")
}

#[test]
fn a_failed_write_keeps_the_old_output_and_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = [
        "--backend",
        "cpu",
        "--routing",
        "random,central",
        "--servers",
        "1,2,3,4,5,6",
        "--rho",
        "0.5",
        "--reps",
        "32",
        "--customers",
        "500",
        "--warmup",
        "0",
        "-q",
    ];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = ["run"].iter().chain(&spec).chain(extra).copied().collect();
        ok(d, &args);
    };
    run(&["-o", "r.csv"]);
    run(&["--shard", "0/2", "-o", "s0.csv"]);
    run(&["--shard", "1/2", "-o", "s1.csv"]);
    let cases: &[(&[&str], &[&str])] = &[
        (&["plot", "r.csv", "-o", "fig.svg"], &["fig.svg"]),
        (&["plot", "r.csv", "-o", "fig.png"], &["fig.png"]),
        (&["plot", "r.csv", "-o", "fig.pdf"], &["fig.pdf"]),
        (&["export", "r.csv", "r.json"], &["r.json"]),
        (&["export", "r.csv", "r.parquet"], &["r.parquet"]),
        (
            &["merge", "m.csv", "s0.csv", "s1.csv"],
            &["m.csv", "m.meta.json"],
        ),
    ];
    for (args, outputs) in cases {
        ok(d, args);
        let before: Vec<Vec<u8>> = outputs
            .iter()
            .map(|o| std::fs::read(d.join(o)).unwrap())
            .collect();
        assert!(
            before[0].len() > 1024,
            "{args:?}: {} bytes fit under the limit",
            before[0].len()
        );
        let files = listing(d);
        let forced: Vec<&str> = args.iter().copied().chain(["--force"]).collect();
        let out = qsweep_limited(d, &forced);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{forced:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{forced:?}: {err}");
        assert!(
            err.contains("File too large") && err.contains("nothing was written"),
            "{forced:?}: {err}"
        );
        for (o, old) in outputs.iter().zip(&before) {
            assert!(
                std::fs::read(d.join(o)).unwrap() == *old,
                "{forced:?}: {o} changed"
            );
        }
        assert_eq!(listing(d), files, "{forced:?}: a temporary file was left");
    }
}
