//! Outputs written whole or not at all (issue 40): `plot`, `export` and
//! `merge` with `--force` on a full disk once truncated the old figure,
//! table or merged CSV and then failed, and `ulimit -f` killed qsweep with
//! SIGXFSZ and no message. A file-size limit (`ulimit -f`, which needs no
//! root, unlike a small tmpfs) stands in for the full disk: a write past it
//! fails with EFBIG as one past a full disk fails with ENOSPC.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{listing, succeed_in as ok, BIN};

/// `qsweep ARGS` with writes limited to `blocks` of 512 bytes per file
/// (`ulimit -f`).
fn qsweep_limited<S: AsRef<std::ffi::OsStr>>(dir: &Path, blocks: u64, args: &[S]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -f {blocks} && exec \"$0\" \"$@\""))
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
        let out = qsweep_limited(d, 2, &forced);
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

/// `run --hist` stopped by a full disk, then resumed, gives the histogram
/// of one run (issue 40: the file kept torn rows and lacked bins). A
/// point's histogram rows are written before its results row, and a resume
/// keeps only the rows of the points the results CSV holds.
#[test]
fn a_histogram_cut_by_a_full_disk_resumes_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = [
        "run",
        "--backend",
        "cpu",
        "--routing",
        "random",
        "--servers",
        "1,2,3,4,5,6,7,8",
        "--rho",
        "0.9",
        "--reps",
        "32",
        "--customers",
        "4000",
        "--warmup",
        "0",
        "-q",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        spec.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let one = with(&["-o", "one.csv", "--hist", "one-hist.csv"]);
    ok(d, &refs(&one));
    let hist_size = std::fs::metadata(d.join("one-hist.csv")).unwrap().len();
    // The limit cuts the histogram after a few points, not the results.
    assert!(hist_size > 8 * 1024, "{hist_size} bytes");
    let cut = with(&["-o", "cut.csv", "--hist", "cut-hist.csv"]);
    let out = qsweep_limited(d, hist_size / 512 / 3, &cut);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("File too large"), "{err}");
    let mut resumed = cut.clone();
    resumed.push("--resume".into());
    ok(d, &refs(&resumed));
    let sorted = |name: &str| {
        let text = std::fs::read_to_string(d.join(name)).unwrap();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted("cut-hist.csv"), sorted("one-hist.csv"));
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A run stopped by a full disk says how to resume it, even when its
/// `.meta.json` cannot be updated either (issue 40: that file's error was
/// all it said), and the resumed CSV is one run's.
#[test]
fn a_run_stopped_by_a_full_disk_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec: Vec<String> = [
        "run",
        "--backend",
        "cpu",
        "--routing",
        "random,central",
        "--servers",
        "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
        "--rho",
        "0.5",
        "--reps",
        "32",
        "--customers",
        "500",
        "--warmup",
        "0",
        "-q",
    ]
    .map(String::from)
    .to_vec();
    let with = |extra: &[&str]| -> Vec<String> {
        spec.iter()
            .cloned()
            .chain(extra.iter().map(|s| s.to_string()))
            .collect()
    };
    ok(d, &refs(&with(&["-o", "one.csv"])));
    let size = std::fs::metadata(d.join("one.csv")).unwrap().len();
    let meta = std::fs::metadata(d.join("one.meta.json")).unwrap().len();
    // Room for the meta file and some rows, not for every row.
    let blocks = (size / 2).max(meta + 512) / 512;
    assert!(blocks * 512 < size, "{size} {meta}");
    let cut = with(&["-o", "cut.csv"]);
    let out = qsweep_limited(d, blocks, &cut);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("File too large"), "{err}");
    assert!(
        err.contains("After fixing the cause, resume with:") && err.contains("--resume"),
        "{err}"
    );
    let mut resumed = cut.clone();
    resumed.push("--resume".into());
    ok(d, &refs(&resumed));
    assert_eq!(untimed(&d.join("cut.csv")), untimed(&d.join("one.csv")));
}

/// The CSV's records with the timing columns blanked.
fn untimed(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            rec.unwrap()
                .iter()
                .zip(&header)
                .map(|(v, h)| {
                    if qsweep_core::output::TIMING_COLUMNS.contains(&h.as_str()) {
                        String::new()
                    } else {
                        v.to_string()
                    }
                })
                .collect()
        })
        .collect()
}
