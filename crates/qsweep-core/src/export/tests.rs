//! Unit tests of the formats: typing, column order, and every format read
//! back (Parquet with the `parquet` crate's own reader).

use super::*;

fn table() -> Table {
    let header = [
        "point",
        "routing",
        "seed",
        "mean_wait",
        "p99_wait",
        "stable",
        "mean_wait_ci95",
        "p99_wait_ci95",
        "converged",
        "odd",
    ];
    let rows = [
        [
            "0",
            "random",
            "18446744073709551615",
            "16.66667",
            "2.500000e-9",
            "true",
            "0.5",
            "",
            "",
            "a|b",
        ],
        [
            "1", "central", "1", "0", "inf", "false", "", "0.25", "", "x",
        ],
    ];
    Table {
        header: header.map(String::from).to_vec(),
        rows: rows.iter().map(|r| r.map(String::from).to_vec()).collect(),
    }
}

#[test]
fn formats_come_from_the_extension_and_unknown_ones_are_refused() {
    assert_eq!(
        Format::of_path(Path::new("a/r.json")).unwrap(),
        Format::Json
    );
    assert_eq!(
        Format::of_path(Path::new("r.MD")).unwrap(),
        Format::Markdown
    );
    assert_eq!(
        Format::of_path(Path::new("r.parquet")).unwrap(),
        Format::Parquet
    );
    assert_eq!(Format::of_path(Path::new("r")).unwrap(), Format::Csv);
    assert_eq!(
        Format::of_path(Path::new("r.csv.partial")).unwrap(),
        Format::Csv
    );
    assert_eq!(
        Format::of_path(Path::new("r.xlsx")).unwrap_err().0,
        "out: 'r.xlsx' has the unknown extension '.xlsx'; expected .csv, .json, .md or .parquet \
         (or - for CSV on stdout)"
    );
    assert_eq!(
        csv_beside(Path::new("d/r.parquet"), Format::Parquet),
        Path::new("d/r.csv")
    );
}

#[test]
fn kinds_come_from_the_column_not_its_cells() {
    let kinds = table().kinds().unwrap();
    use Kind::*;
    assert_eq!(
        kinds,
        [Int, Text, UInt, Float, Float, Bool, Float, Float, Bool, Text]
    );
    let v = |vals: &'static [&'static str]| move || vals.iter().copied();
    assert_eq!(Kind::known("q0.9_wait"), Some(Float));
    assert_eq!(Kind::known("q0.9999_wait_ci95"), Some(Float));
    // Columns qsweep writes that may be empty in every row of a run.
    for (name, kind) in [
        ("max_in_system", Int),
        ("waited", Int),
        ("warmup_truncation", Int),
        ("choices", Int),
        ("converged", Bool),
        ("error", Text),
        ("z_mean_wait", Float),
        ("mean_wait_upper95", Float),
    ] {
        let t = Table {
            header: vec![name.to_string()],
            rows: vec![vec![String::new()], vec![String::new()]],
        };
        assert_eq!(t.kinds().unwrap(), [kind], "{name}");
    }
    // Only columns qsweep does not write are typed by their values.
    assert_eq!(Kind::known("new"), None);
    assert_eq!(Kind::of_values(v(&["1", "", "2"])), Int);
    assert_eq!(Kind::of_values(v(&["1", "2.5"])), Float);
    assert_eq!(Kind::of_values(v(&["", ""])), Text);
    // A known column holding something else is refused, naming it.
    let t = Table {
        header: vec!["servers".into()],
        rows: vec![vec!["4".into()], vec!["many".into()]],
    };
    let e = t.kinds().unwrap_err().0;
    assert!(
        e.contains("'servers', line 3: 'many' is not an integer"),
        "{e}"
    );
}

/// Every column of the results CSV has its type by name.
#[test]
fn every_results_column_is_typed_by_name() {
    for c in crate::output::TABLE {
        assert!(
            Kind::known(c.name).is_some(),
            "column '{}' has no type: add it to Kind::known",
            c.name
        );
    }
    for c in crate::output::quantile_columns(&[0.5, 0.9999]) {
        assert_eq!(Kind::known(&c), Some(Kind::Float), "{c}");
    }
    for c in [
        "p_wait_gt_0.1",
        "p_wait_gt_0.1_ci95",
        "analytic_p_wait_gt_0.1",
    ] {
        assert_eq!(Kind::known(c), Some(Kind::Float), "{c}");
    }
    for c in hist::HIST_COLUMNS {
        assert!(Kind::known(c).is_some(), "{c}");
    }
}

#[test]
fn ci_columns_move_beside_their_estimates() {
    let t = table().ci_beside_estimates();
    assert_eq!(
        t.header,
        [
            "point",
            "routing",
            "seed",
            "mean_wait",
            "mean_wait_ci95",
            "p99_wait",
            "p99_wait_ci95",
            "stable",
            "converged",
            "odd"
        ]
    );
    assert_eq!(t.rows[1][6], "0.25");
    let picked = table()
        .select(&["p99_wait".into(), "point".into()])
        .unwrap();
    assert_eq!(picked.rows[0], ["2.500000e-9", "0"]);
    assert!(table()
        .select(&["nope".into()])
        .unwrap_err()
        .0
        .starts_with("--columns: 'nope'"));
    assert_eq!(
        table()
            .select(&["point".into(), "p99_wait".into(), "point".into()])
            .unwrap_err()
            .0,
        "--columns: 'point' is given twice; expected each column once"
    );
}

#[test]
fn json_is_an_array_of_typed_objects() {
    let text = String::from_utf8(table().encode(Format::Json).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["point"], 0);
    assert_eq!(rows[0]["seed"].as_u64(), Some(u64::MAX));
    assert_eq!(rows[0]["mean_wait"].as_f64(), Some(16.66667));
    assert_eq!(rows[0]["p99_wait"].as_f64(), Some(2.5e-9));
    assert_eq!(rows[0]["stable"], true);
    assert_eq!(rows[0]["p99_wait_ci95"], serde_json::Value::Null);
    assert_eq!(
        rows[1]["p99_wait"],
        serde_json::Value::Null,
        "inf has no JSON number"
    );
    assert_eq!(rows[0]["odd"], "a|b");
    // Keys in column order.
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("  {\"point\": 0, \"routing\": \"random\""));
}

#[test]
fn markdown_is_a_pipe_table() {
    let text = String::from_utf8(table().encode(Format::Markdown).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("| point | routing | seed |"));
    assert!(lines[1].starts_with("|---:|---|---:|---:|"));
    assert!(lines[2].ends_with("| a\\|b |"), "{}", lines[2]);
}

#[test]
fn parquet_reads_back_typed_with_nulls() {
    use ::parquet::file::reader::{FileReader, SerializedFileReader};
    use ::parquet::record::Field;
    let bytes = table().encode(Format::Parquet).unwrap();
    assert_eq!(&bytes[..4], b"PAR1");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    std::fs::write(&path, &bytes).unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(reader.metadata().file_metadata().num_rows(), 2);
    let rows: Vec<_> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let get = |r: usize, name: &str| {
        rows[r]
            .get_column_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f.clone())
            .unwrap()
    };
    assert_eq!(get(0, "point"), Field::Long(0));
    assert_eq!(get(0, "seed"), Field::ULong(u64::MAX));
    assert_eq!(get(0, "mean_wait"), Field::Double(16.66667));
    assert_eq!(get(1, "p99_wait"), Field::Double(f64::INFINITY));
    assert_eq!(get(0, "p99_wait_ci95"), Field::Null);
    assert_eq!(get(1, "stable"), Field::Bool(false));
    assert_eq!(get(1, "routing"), Field::Str("central".into()));
    assert_eq!(get(0, "converged"), Field::Null);
}
