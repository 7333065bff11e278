//! The binary's outputs beyond the results CSV (issue 17): `-o -`, other
//! formats by extension, `qsweep export`, `--quantiles`, `--hist`, axis
//! ranges on the command line, completions, the manual page and `help`.
//!
//! Every simulation is tiny (16 replications of 2000 customers, CPU engine).

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_qsweep");

const TINY: [&str; 10] = [
    "--reps",
    "16",
    "--customers",
    "2000",
    "--warmup",
    "200",
    "--backend",
    "cpu",
    "--threads",
    "2",
];

/// A small grid: 2 policies × 2 server counts.
const GRID: [&str; 6] = [
    "--routing",
    "random,central",
    "--servers",
    "2,3",
    "--rho",
    "0.7",
];

fn qsweep(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("qsweep runs")
}

/// `qsweep run -q` + `args` + [`GRID`] + [`TINY`].
fn run(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "-q"];
    all.extend_from_slice(args);
    all.extend_from_slice(&GRID);
    all.extend_from_slice(&TINY);
    qsweep(dir, &all)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

fn assert_ok(o: &Output) {
    assert!(o.status.success(), "{}", show(o));
}

/// Exit 2 with one `qsweep: error:` line naming every one of `names`.
fn assert_usage(o: &Output, names: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "{}", show(o));
    let err = text(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("qsweep: backend"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", show(o));
    assert!(lines[0].starts_with("qsweep: error: "), "{}", show(o));
    for n in names {
        assert!(lines[0].contains(n), "'{n}' not named: {}", show(o));
    }
}

/// A CSV's header and rows, without the timing columns (which differ
/// between runs).
fn rows_of(csv: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let timing: Vec<usize> = ["seconds", "customers_per_s"]
        .iter()
        .map(|c| header.iter().position(|h| h == c).unwrap())
        .collect();
    let header = header
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !timing.contains(i))
        .map(|(_, h)| h)
        .collect();
    let rows = r
        .records()
        .map(|rec| {
            rec.unwrap()
                .iter()
                .enumerate()
                .filter(|(i, _)| !timing.contains(i))
                .map(|(_, v)| v.to_string())
                .collect()
        })
        .collect();
    (header, rows)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"))
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn dash_streams_the_csv_to_stdout_and_the_summary_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let piped = run(d, &["-o", "-"]);
    assert_ok(&piped);
    let file = run(d, &["-o", "r.csv"]);
    assert_ok(&file);
    // The same rows as a file run, byte for byte apart from timing.
    assert_eq!(
        rows_of(&text(&piped.stdout)),
        rows_of(&read(&d.join("r.csv")))
    );
    assert!(
        text(&piped.stderr).contains("mean_wait_ci95"),
        "{}",
        show(&piped)
    );
    // The file run's summary stays on stdout; nothing else was left behind.
    assert!(text(&file.stdout).starts_with("point  routing"));
    assert_eq!(files(d), ["r.csv", "r.meta.json"]);
    assert_usage(&run(d, &["-o", "-", "--resume"]), &["--resume", "stdout"]);
}

#[test]
fn other_formats_convert_the_csv_written_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for ext in ["json", "md", "parquet"] {
        let out = format!("r.{ext}");
        assert_ok(&run(d, &["-o", &out, "--force"]));
        assert!(d.join(&out).metadata().unwrap().len() > 100);
    }
    // The CSV beside is the record (resumable): rerunning to the JSON with
    // --resume has nothing left to run and writes the JSON again.
    let again = run(d, &["-o", "r.json", "--resume"]);
    assert_ok(&again);
    assert!(
        text(&again.stderr).contains("nothing left to run"),
        "{}",
        show(&again)
    );
    let json: serde_json::Value = serde_json::from_str(&read(&d.join("r.json"))).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3]["routing"], "central");
    assert_eq!(rows[3]["servers"], 3);
    assert_eq!(rows[0]["stable"], true);
    assert!(rows[0]["mean_wait"].as_f64().unwrap() > 0.0);
    assert_eq!(rows[0]["converged"], serde_json::Value::Null);
    // CIs beside their estimates.
    let json_text = read(&d.join("r.json"));
    let keys: Vec<&str> = json_text
        .lines()
        .nth(1)
        .unwrap()
        .split("\": ")
        .map(|k| k.rsplit('"').next().unwrap())
        .collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert_eq!(at("p50_wait_ci95"), at("p50_wait") + 1);
    assert_eq!(at("p99_wait_ci95"), at("p99_wait") + 1);
    let md = read(&d.join("r.md"));
    assert_eq!(md.lines().count(), 6);
    assert!(md.starts_with("| point | routing |"));
    assert_eq!(&std::fs::read(d.join("r.parquet")).unwrap()[..4], b"PAR1");
    // An unknown extension is refused before anything runs or is written.
    let before = files(d);
    assert_usage(
        &run(d, &["-o", "r.xlsx"]),
        &["r.xlsx", ".csv, .json, .md or .parquet"],
    );
    assert_usage(&run(d, &["-o", "r.json"]), &["r.json", "already exists"]);
    assert_eq!(files(d), before);
}

#[test]
fn export_converts_an_existing_csv() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_ok(&run(d, &["-o", "r.csv"]));
    let o = qsweep(
        d,
        &[
            "export",
            "r.csv",
            "r.md",
            "--columns",
            "point,routing,mean_wait",
        ],
    );
    assert_ok(&o);
    let md = read(&d.join("r.md"));
    assert_eq!(md.lines().nth(1), Some("|---:|---|---:|"));
    let o = qsweep(d, &["export", "r.csv", "-", "--format", "json"]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 4);
    // CSV to CSV keeps the column order: the same bytes.
    assert_ok(&qsweep(d, &["export", "r.csv", "copy.csv"]));
    assert_eq!(read(&d.join("copy.csv")), read(&d.join("r.csv")));
    assert_usage(
        &qsweep(d, &["export", "r.csv", "r.md"]),
        &["already exists"],
    );
    assert_usage(&qsweep(d, &["export", "r.csv", "r.txt"]), &[".txt"]);
    assert_usage(&qsweep(d, &["export", "r.csv", "out"]), &["no extension"]);
    assert_usage(&qsweep(d, &["export", "nope.csv", "n.json"]), &["nope.csv"]);
    assert_usage(
        &qsweep(d, &["export", "r.csv", "x.json", "--columns", "bogus"]),
        &["--columns", "bogus"],
    );
}

#[test]
fn quantiles_add_columns_by_the_same_percentile_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let q = "0.5,0.99,0.9999";
    assert_ok(&run(
        d,
        &["-o", "q.csv", "--quantiles", q, "--hist", "h.csv"],
    ));
    assert_ok(&run(d, &["-o", "plain.csv"]));
    let (qh, qrows) = rows_of(&read(&d.join("q.csv")));
    let (ph, prows) = rows_of(&read(&d.join("plain.csv")));
    // The standard columns unchanged, the new ones appended.
    assert_eq!(qh[..ph.len()], ph[..]);
    assert_eq!(
        qh[ph.len()..],
        [
            "q0.5_wait",
            "q0.5_wait_ci95",
            "q0.99_wait",
            "q0.99_wait_ci95",
            "q0.9999_wait",
            "q0.9999_wait_ci95"
        ]
    );
    let col = |h: &[String], r: &[String], name: &str| {
        r[h.iter().position(|c| c == name).unwrap()].clone()
    };
    for (qr, pr) in qrows.iter().zip(&prows) {
        assert_eq!(qr[..pr.len()], pr[..]);
        // The same code as the built-in percentiles gives the same digits.
        for (ours, builtin) in [("q0.5", "p50"), ("q0.99", "p99")] {
            for suffix in ["_wait", "_wait_ci95"] {
                assert_eq!(
                    col(&qh, qr, &format!("{ours}{suffix}")),
                    col(&qh, qr, &format!("{builtin}{suffix}"))
                );
            }
        }
        let p9999: f64 = col(&qh, qr, "q0.9999_wait").parse().unwrap();
        let p999: f64 = col(&qh, qr, "p999_wait").parse().unwrap();
        let max: f64 = col(&qh, qr, "max_wait").parse().unwrap();
        assert!(p999 <= p9999 && p9999 <= max, "{qr:?}");
    }
    // The histogram: every point, counts summing to all recorded waits,
    // and a CCDF that starts at P(wait > 0) and falls to 0.
    let hist = read(&d.join("h.csv"));
    let mut lines = hist.lines();
    assert_eq!(lines.next(), Some("point,bin_lower,bin_upper,count,ccdf"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    for (p, qr) in qrows.iter().enumerate() {
        let mine: Vec<&Vec<f64>> = rows.iter().filter(|r| r[0] == p as f64).collect();
        let total: f64 = mine.iter().map(|r| r[3]).sum();
        assert_eq!(total, 16.0 * 2000.0);
        let p_wait: f64 = col(&qh, qr, "p_wait").parse().unwrap();
        let zero = mine.iter().find(|r| r[2] == 0.0).map_or(1.0, |r| r[4]);
        assert!((zero - p_wait).abs() < 1e-6, "{zero} vs {p_wait}");
        assert!(mine
            .windows(2)
            .all(|w| w[1][4] <= w[0][4] && w[1][1] >= w[0][2]));
        assert_eq!(mine.last().unwrap()[4], 0.0);
    }
    // Resuming keeps the columns (a cut file continues to the same bytes).
    let full = read(&d.join("q.csv"));
    let cut: String = full.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(d.join("q.csv"), cut).unwrap();
    assert_ok(&run(d, &["-o", "q.csv", "--quantiles", q, "--resume"]));
    assert_eq!(rows_of(&read(&d.join("q.csv"))), rows_of(&full));
    assert_usage(
        &run(d, &["-o", "q.csv", "--resume"]),
        &["--resume", "different spec"],
    );
    assert_usage(
        &run(d, &["-o", "x.csv", "--quantiles", "1.5"]),
        &["--quantiles", "1.5"],
    );
    assert_usage(
        &run(d, &["-o", "y.csv", "--hist", "h.csv"]),
        &["--hist", "h.csv"],
    );
}

#[test]
fn ranges_expand_on_the_command_line_and_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = qsweep(
        d,
        &[
            "run",
            "--routing",
            "random",
            "--servers",
            "1:3",
            "--rho",
            "0.5:0.7:0.1",
            "-o",
            "r.csv",
            "--reps",
            "8",
            "--customers",
            "500",
            "--warmup",
            "0",
            "--backend",
            "cpu",
        ],
    );
    assert_ok(&o);
    let err = text(&o.stderr);
    assert!(err.contains("servers 1:3 = 1, 2, 3 (3 values)"), "{err}");
    assert!(
        err.contains("rho 0.5:0.7:0.1 = 0.5, 0.6, 0.7 (3 values)"),
        "{err}"
    );
    let (h, rows) = rows_of(&read(&d.join("r.csv")));
    let rho = h.iter().position(|c| c == "rho").unwrap();
    let got: Vec<&str> = rows.iter().map(|r| r[rho].as_str()).collect();
    assert_eq!(
        got,
        ["0.5", "0.6", "0.7", "0.5", "0.6", "0.7", "0.5", "0.6", "0.7"]
    );
    // The meta records the expanded lists.
    let meta = read(&d.join("r.meta.json"));
    assert!(meta.contains("rho = [0.5, 0.6, 0.7]"), "{meta}");
    assert!(meta.contains("servers = [1, 2, 3]"), "{meta}");
    assert_usage(
        &qsweep(d, &["analytic", "--rho", "0.9:0.1:0.1"]),
        &["--rho", "stop is below start"],
    );
}

#[test]
fn completions_man_and_help_come_from_the_cli_definition() {
    let d = Path::new(".");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = qsweep(d, &["completions", shell]);
        assert_ok(&o);
        let script = text(&o.stdout);
        for word in ["quantiles", "precision", "export", "analytic"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    assert_eq!(qsweep(d, &["completions", "tcsh"]).status.code(), Some(2));
    let man = qsweep(d, &["man"]);
    assert_ok(&man);
    let page = text(&man.stdout);
    assert!(
        page.starts_with(".ie \\n(.g") && page.contains(".TH qsweep 1"),
        "{page}"
    );
    assert!(page.contains("qsweep\\-run(1)"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    assert_ok(&qsweep(d, &["man", "--dir", dir.path().to_str().unwrap()]));
    assert!(files(dir.path()).contains(&"qsweep-run.1".to_string()));
    // `help` takes --help like every subcommand, and says what -h says.
    assert_ok(&qsweep(d, &["help", "--help"]));
    let via_help = qsweep(d, &["help", "export"]);
    let via_flag = qsweep(d, &["export", "--help"]);
    assert_ok(&via_help);
    assert_eq!(text(&via_help.stdout), text(&via_flag.stdout));
    assert_usage(&qsweep(d, &["help", "bogus"]), &["bogus", "run, analytic"]);
}

#[test]
fn bash_completes_policies_and_laws_not_file_names() {
    // Issue 26: `--routing <TAB>` offered file names. Each option's case in
    // the bash script is `--flag)` followed by its COMPREPLY line.
    let d = Path::new(".");
    let o = qsweep(d, &["completions", "bash"]);
    assert_ok(&o);
    let script = text(&o.stdout);
    let reply = |flag: &str| -> String {
        let at = script
            .find(&format!("{flag})"))
            .unwrap_or_else(|| panic!("no case for {flag}"));
        let rest = &script[at..];
        let line = rest.lines().find(|l| l.contains("COMPREPLY")).unwrap();
        line.to_string()
    };
    let routing = reply("--routing");
    for word in [
        "random",
        "round_robin",
        "central",
        "jsq",
        "pod",
        "jiq",
        "lwl",
    ] {
        assert!(routing.contains(word), "--routing: {routing}");
    }
    for flag in ["--service", "--arrival", "--patience"] {
        let laws = reply(flag);
        for word in ["exp", "weibull", "lognormal", "empirical"] {
            assert!(laws.contains(word), "{flag}: {laws}");
        }
    }
    assert!(reply("--patience").contains("none"));
    assert!(reply("--backend").contains("auto gpu cpu"));
    assert!(reply("--reneging").contains("abandon timeout"));
    // Numbers: no file names.
    for flag in ["--servers", "--rho", "--reps", "--customers", "--seed"] {
        assert!(
            !reply(flag).contains("compgen -f"),
            "{flag}: {}",
            reply(flag)
        );
    }
    // The help text still lists the policies once, in its own words.
    let help = text(&qsweep(d, &["run", "--help"]).stdout);
    assert!(!help.contains("[possible values"), "{help}");
}

#[test]
fn analytic_help_lists_only_the_flags_it_reads_and_shares_runs_words() {
    let d = Path::new(".");
    let analytic = text(&qsweep(d, &["analytic", "--help"]).stdout);
    let run = text(&qsweep(d, &["run", "--help"]).stdout);
    for run_only in [
        "--reps",
        "--customers",
        "--warmup",
        "--precision",
        "--seed",
        "--backend",
        "--threads",
    ] {
        assert!(
            !analytic.contains(run_only),
            "analytic --help lists {run_only}"
        );
        assert!(run.contains(run_only));
    }
    // Each axis flag's help line is run's, word for word.
    for flag in [
        "--routing",
        "--choices",
        "--routers",
        "--servers",
        "--workers",
        "--arrival",
        "--lambda",
        "--rho",
        "--service",
    ] {
        let line = |h: &str| {
            h.lines()
                .find(|l| l.trim_start().starts_with(flag))
                .unwrap_or_else(|| panic!("{flag} missing"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(line(&analytic), line(&run), "{flag}");
    }
    let o = qsweep(d, &["analytic", "--reps", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
}

#[test]
fn analytic_writes_other_formats_and_csv_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = [
        "analytic",
        "--routing",
        "random,central",
        "--servers",
        "2:4",
        "--rho",
        "0.5",
    ];
    let o = qsweep(d, &[&args[..], &["-o", "-"]].concat());
    assert_ok(&o);
    let csv = text(&o.stdout);
    assert!(
        csv.starts_with("point,routing,servers,workers,choices,routers,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 7);
    assert_ok(&qsweep(d, &[&args[..], &["-o", "a.json"]].concat()));
    let v: serde_json::Value = serde_json::from_str(&read(&d.join("a.json"))).unwrap();
    assert_eq!(v[5]["analytic_method"], "exact:erlang_c");
    assert!(v[5]["analytic_mean_wait"].as_f64().unwrap() > 0.0);
    assert_usage(
        &qsweep(d, &[&args[..], &["-o", "a.xlsx"]].concat()),
        &[".xlsx"],
    );
}

#[test]
fn units_are_recorded_in_the_meta_and_label_the_plot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_ok(&run(d, &["-o", "r.csv", "--units", "ms"]));
    assert!(read(&d.join("r.meta.json")).contains("units = \\\"ms\\\""));
    assert_ok(&qsweep(d, &["plot", "r.csv", "-o", "r.svg"]));
    let svg = read(&d.join("r.svg"));
    assert!(svg.contains("mean wait (ms)"), "no unit in the axis title");
    // --time-unit still wins.
    assert_ok(&qsweep(
        d,
        &["plot", "r.csv", "-o", "s.svg", "--time-unit", "s"],
    ));
    assert!(read(&d.join("s.svg")).contains("mean wait (s)"));
    assert_ok(&run(d, &["-o", "plain.csv"]));
    assert_ok(&qsweep(d, &["plot", "plain.csv", "-o", "p.svg"]));
    assert!(read(&d.join("p.svg")).contains("mean wait (time units)"));
}

/// Parquet's column types come from the column, never from the cells: a run
/// of random routing (no `choices`, no `max_in_system`: every cell empty)
/// and one of pod (both filled) write the same schema, so their files
/// concatenate (issue 26: `max_in_system` was text in one, integer in the
/// other).
#[test]
fn parquet_of_different_runs_have_one_schema_and_concatenate() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, routing) in [("a.parquet", "random"), ("b.parquet", "pod")] {
        let mut args = vec![
            "run",
            "-q",
            "--routing",
            routing,
            "--servers",
            "3",
            "--rho",
            "0.7",
            "-o",
            name,
        ];
        args.extend_from_slice(&TINY);
        assert_ok(&qsweep(d, &args));
    }
    let open =
        |name: &str| SerializedFileReader::new(std::fs::File::open(d.join(name)).unwrap()).unwrap();
    let (a, b) = (open("a.parquet"), open("b.parquet"));
    let schema = |r: &SerializedFileReader<std::fs::File>| {
        r.metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| {
                (
                    c.name().to_string(),
                    c.physical_type(),
                    c.logical_type_ref().cloned(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (sa, sb) = (schema(&a), schema(&b));
    assert_eq!(sa, sb, "the two runs' Parquet schemas differ");
    let kind_of = |name: &str| sa.iter().find(|c| c.0 == name).unwrap().1;
    assert_eq!(kind_of("max_in_system"), parquet::basic::Type::INT64);
    assert_eq!(kind_of("choices"), parquet::basic::Type::INT64);
    assert_eq!(kind_of("waited"), parquet::basic::Type::INT64);
    assert_eq!(kind_of("error"), parquet::basic::Type::BYTE_ARRAY);
    // Concatenated: every row of both, each field of its column's type.
    let rows: Vec<_> = [a, b]
        .iter()
        .flat_map(|r| r.get_row_iter(None).unwrap().map(|row| row.unwrap()))
        .collect();
    assert_eq!(rows.len(), 2);
    let field = |r: usize, name: &str| {
        rows[r]
            .get_column_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f.clone())
            .unwrap()
    };
    assert_eq!(field(0, "max_in_system"), parquet::record::Field::Null);
    assert!(matches!(field(1, "max_in_system"), parquet::record::Field::Long(n) if n > 0));
    assert_eq!(field(1, "choices"), parquet::record::Field::Long(2));
}
