//! Kill-and-resume and shard-and-merge for every kind of axis (issue 40):
//! a spec whose CSV has the patience, capacity, fleet, MMPP, `--slo` and
//! `--quantiles` columns must resume from any whole-row prefix, and its
//! shards must merge, into the rows of one uninterrupted run. The patience
//! law, a capacity and a fleet are text (`none` where a point has none);
//! `--resume` and `merge` once refused them as "not a number".

use std::path::Path;

use qsweep_core::output::TIMING_COLUMNS;

use crate::common::succeed_in as ok;

/// Small grids, each with the columns of one axis kind (and `none` among
/// its values where the axis has one).
const SPECS: &[(&str, &[&str])] = &[
    (
        "patience",
        &[
            "--routing",
            "random,central",
            "--servers",
            "2,3",
            "--rho",
            "0.9",
            "--patience",
            "none,det(value=2)",
        ],
    ),
    (
        "capacity",
        &[
            "--routing",
            "random,central",
            "--servers",
            "2,3",
            "--rho",
            "0.9",
            "--capacity",
            "none,4",
        ],
    ),
    (
        "fleet",
        &[
            "--routing",
            "jsq,central",
            "--speeds",
            "2x1,1x2;3x1",
            "--rho",
            "0.8",
        ],
    ),
    (
        "mmpp, slo and quantiles",
        &[
            "--routing",
            "random,central",
            "--servers",
            "2,3",
            "--rho",
            "0.8",
            "--arrival",
            "mmpp(rates=[1,9],switch=[0.1,0.1])",
            "--slo",
            "0.5",
            "--quantiles",
            "0.9",
        ],
    ),
];

/// Every run: the CPU engine, small but not trivial.
const COMMON: &[&str] = &[
    "--backend",
    "cpu",
    "--reps",
    "64",
    "--customers",
    "2000",
    "--warmup",
    "0",
    "-q",
];

fn run(dir: &Path, spec: &[&str], extra: &[&str]) {
    let args: Vec<&str> = ["run"]
        .iter()
        .chain(spec)
        .chain(COMMON)
        .chain(extra)
        .copied()
        .collect();
    ok(dir, &args);
}

/// The header and the rows, the timing columns blanked.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).expect("read csv");
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let timing: Vec<usize> = (0..header.len())
        .filter(|&i| TIMING_COLUMNS.contains(&header[i].as_str()))
        .collect();
    let rows = r
        .records()
        .map(|rec| {
            let mut f: Vec<String> = rec.unwrap().iter().map(String::from).collect();
            for &i in &timing {
                f[i].clear();
            }
            f
        })
        .collect();
    (header, rows)
}

#[test]
fn every_axis_kind_resumes_and_merges_into_one_run() {
    for (what, spec) in SPECS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        run(d, spec, &["-o", "one.csv"]);
        let reference = table(&d.join("one.csv"));
        let points = reference.1.len();
        assert!(points >= 4, "{what}: {points} rows");
        // A run stopped after some whole rows (as SIGKILL leaves it, minus
        // the torn line the torn-line test covers) resumes to the same rows.
        let text = std::fs::read_to_string(d.join("one.csv")).unwrap();
        for kept in [1, points - 1] {
            let prefix: String = text.split_inclusive('\n').take(1 + kept).collect();
            std::fs::write(d.join("cut.csv"), prefix).unwrap();
            std::fs::copy(d.join("one.meta.json"), d.join("cut.meta.json")).unwrap();
            run(d, spec, &["-o", "cut.csv", "--resume"]);
            assert_eq!(
                table(&d.join("cut.csv")),
                reference,
                "{what}: resumed after {kept} rows"
            );
        }
        // Two shards merge into the same rows.
        for k in 0..2 {
            run(
                d,
                spec,
                &["--shard", &format!("{k}/2"), "-o", &format!("s{k}.csv")],
            );
        }
        ok(d, &["merge", "merged.csv", "s1.csv", "s0.csv"]);
        assert_eq!(table(&d.join("merged.csv")), reference, "{what}: merged");
        // And the results export, as every other CSV does.
        ok(d, &["export", "one.csv", "one.json"]);
        ok(d, &["export", "one.csv", "one.parquet"]);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("one.json")).unwrap()).unwrap();
        assert_eq!(
            json.as_array().map(Vec::len),
            Some(points),
            "{what}: export"
        );
    }
}
