//! Unit tests of `qsweep plot`: grouping and validation checked on the loaded
//! series, drawing checked through the counts of what was drawn (`DrawStats`) and
//! the SVG text, tick choice checked on the helpers directly — no pixel comparisons.

use super::ticks::{format_tick, linear_ticks, log_ticks};
use super::*;
use std::path::PathBuf;

const HEADER: &str = "point,routing,servers,rho,stable,mean_wait,mean_wait_ci95,p99_wait,p99_wait_ci95,analytic_mean_wait,analytic_p99_wait";

/// Two routings × three servers, rows deliberately not sorted by servers.
const SMALL: &str = "\
0,random,32,0.9,true,1.5,0.1,7.0,0.4,1.45,6.9
1,central,16,0.9,true,0.2,0.01,1.1,0.05,0.21,1.0
2,random,8,0.9,true,3.0,0.2,14.0,0.8,3.1,13.8
3,random,16,0.9,true,2.0,0.1,9.0,0.5,,
4,central,8,0.9,true,0.5,0.02,2.5,0.1,0.52,2.4
5,central,32,0.9,true,0.1,0.005,0,0,0.09,0
";

fn write_csv(dir: &Path, name: &str, header: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{header}\n{body}")).unwrap();
    p
}

fn find<'a>(s: &'a PlotSummary, panel: &str, label: &str) -> &'a Series {
    s.series
        .iter()
        .find(|x| x.panel == panel && x.label == label)
        .unwrap_or_else(|| panic!("no series {label} in {panel}: {:?}", s.series))
}

#[test]
fn groups_series_by_routing_sorted_by_x() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let opts = PlotOptions {
        log_y: false,
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    // 2 panels (mean_wait, p99_wait) × 2 routings, no analytic without the option.
    assert_eq!(s.series.len(), 4);
    assert!(s.series.iter().all(|x| !x.dashed));
    let labels: Vec<(&str, &str)> = s
        .series
        .iter()
        .map(|x| (x.panel.as_str(), x.label.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            ("mean_wait", "random"),
            ("mean_wait", "central"),
            ("p99_wait", "random"),
            ("p99_wait", "central")
        ]
    );
    let r = find(&s, "mean_wait", "random");
    assert_eq!(
        r.points,
        vec![
            (8.0, 3.0, Some(0.2)),
            (16.0, 2.0, Some(0.1)),
            (32.0, 1.5, Some(0.1))
        ]
    );
    assert_eq!(s.x_range, (8.0, 32.0));
    assert_eq!(
        s.y_ranges,
        vec![
            ("mean_wait".to_string(), 0.1, 3.0),
            ("p99_wait".to_string(), 0.0, 14.0)
        ]
    );
    assert_eq!(s.x_label, "servers");
    assert_eq!(
        s.y_labels,
        ["mean wait (time units)", "p99 wait (time units)"]
    );
    assert_eq!(s.dropped_zero, 0, "linear axis: zeros are drawable");

    let with_unit = PlotOptions {
        time_unit: Some("s".into()),
        ..Default::default()
    };
    let s = load_series(&csv, &with_unit).unwrap();
    assert_eq!(s.y_labels, ["mean wait (s)", "p99 wait (s)"]);
}

#[test]
fn analytic_series_are_dashed_and_skip_empty_cells() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let opts = PlotOptions {
        analytic: true,
        y: vec!["mean_wait".into(), "p50_wait".into()],
        ..Default::default()
    };
    // p50_wait is not in this CSV.
    let err = load_series(&csv, &opts).unwrap_err().to_string();
    assert!(err.contains("no column 'p50_wait'"), "{err}");

    let opts = PlotOptions {
        analytic: true,
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    assert_eq!(s.series.len(), 8);
    let a = find(&s, "mean_wait", "random (analytic)");
    assert!(a.dashed);
    // The row with empty analytic cells (servers=16) has no analytic point.
    assert_eq!(a.points, vec![(8.0, 3.1, None), (32.0, 1.45, None)]);
    // p99 analytic zero for central at 32 plus measured p99 zero: both counted.
    assert_eq!(s.dropped_zero, 2);
}

#[test]
fn facets_make_one_panel_per_value_and_y() {
    let dir = tempfile::tempdir().unwrap();
    let header = "routing,servers,service,mean_wait";
    let body =
        "random,8,exp,1\nrandom,16,exp,0.5\nrandom,8,det,0.6\nrandom,16,det,0.3\njsq,8,det,0.1\n";
    let csv = write_csv(dir.path(), "f.csv", header, body);
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        facet: Some("service".into()),
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    let panels: Vec<&str> = s.y_ranges.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        panels,
        ["mean_wait | service=exp", "mean_wait | service=det"]
    );
    assert_eq!(s.series.len(), 3);
    assert_eq!(
        find(&s, "mean_wait | service=det", "jsq").points,
        vec![(8.0, 0.1, None)]
    );
    // Without the facet the two services collide at the same x: reported.
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("repeated x") && n.contains("service")),
        "{:?}",
        s.notes
    );
}

#[test]
fn svg_has_legend_labels_error_bars_and_analytic_lines() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let out = dir.path().join("fig.svg");
    let opts = PlotOptions {
        analytic: true,
        title: Some("Routing <study> & more".into()),
        ..Default::default()
    };
    let (summary, stats) = plot_with_stats(&csv, &out, &opts).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..50]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for text in [
        "routing:",
        "random",
        "central",
        "analytic",
        "95% CI",
        "servers",
        "mean wait (time units)",
        "p99 wait (time units)",
        "y = 0 (off log axis)",
    ] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }
    assert!(
        svg.contains("Routing &lt;study&gt; &amp; more"),
        "title escaped"
    );
    // Every measured point with a positive CI on the log axis gets an error bar:
    // 12 points, minus the p99 zero at central/32 (not drawable) = 11.
    assert_eq!(stats.ci_bars, 11);
    assert_eq!(stats.clamped_markers, summary.dropped_zero);
    assert!(stats.dashed_segments >= 3);
    assert_eq!(stats.markers, 11);
    assert_eq!(summary.dropped_zero, 2);
}

#[test]
fn no_error_bars_without_ci_columns() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "noci.csv",
        "routing,servers,mean_wait,p99_wait",
        "a,1,1,2\na,2,0.5,1\nb,1,2,3\nb,2,1,2\n",
    );
    let out = dir.path().join("noci.svg");
    let (s, stats) = plot_with_stats(&csv, &out, &PlotOptions::default()).unwrap();
    assert!(s
        .series
        .iter()
        .all(|x| x.points.iter().all(|p| p.2.is_none())));
    assert_eq!(stats.ci_bars, 0);
    assert_eq!(stats.markers, 8);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(!svg.contains("95% CI"));
}

#[test]
fn png_is_written_and_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let out = dir.path().join("fig.PNG");
    let opts = PlotOptions {
        width: 640,
        height: 400,
        ..Default::default()
    };
    plot_csv(&csv, &out, &opts).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        bytes.len() > 10_000,
        "suspiciously small PNG: {} bytes",
        bytes.len()
    );
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    // Rendered at 2× the logical size.
    assert_eq!((info.width, info.height), (1280, 800));
    // Not blank: a good share of non-white pixels, and some in a series colour.
    let px: Vec<&[u8]> = buf.chunks(3).collect();
    let non_white = px.iter().filter(|p| p != &&[255, 255, 255]).count();
    assert!(non_white > px.len() / 50, "{non_white} non-white pixels");
    assert!(
        px.iter().any(|p| p == &[0, 114, 178]),
        "no pixel in the first series colour"
    );
}

#[test]
fn zero_on_log_axis_is_counted_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "z.csv",
        "routing,servers,p99_wait",
        "central,8,1.5\ncentral,16,0\ncentral,32,0\nrandom,8,4\nrandom,16,2\nrandom,32,1\n",
    );
    let log = PlotOptions {
        y: vec!["p99_wait".into()],
        ..Default::default()
    };
    let s = load_series(&csv, &log).unwrap();
    assert_eq!(s.dropped_zero, 2);
    // The points are still in the series, with their true value.
    assert_eq!(
        find(&s, "p99_wait", "central").points,
        vec![(8.0, 1.5, None), (16.0, 0.0, None), (32.0, 0.0, None)]
    );
    assert!(s.notes.iter().any(|n| n.contains("y = 0")), "{:?}", s.notes);
    let out = dir.path().join("z.svg");
    let (_, stats) = plot_with_stats(&csv, &out, &log).unwrap();
    assert_eq!(stats.clamped_markers, 2);
    assert_eq!(stats.markers, 4);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("y = 0 (off log axis)"));

    let lin = PlotOptions {
        log_y: false,
        ..log
    };
    assert_eq!(load_series(&csv, &lin).unwrap().dropped_zero, 0);
    let (_, stats) = plot_with_stats(&csv, &out, &lin).unwrap();
    assert_eq!((stats.clamped_markers, stats.markers), (0, 6));
}

#[test]
fn unstable_rows_are_drawn_hollow_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "u.csv",
        "routing,servers,stable,mean_wait",
        "random,50,false,900\nrandom,51,true,16\nrandom,52,true,8\n",
    );
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    let out = dir.path().join("u.svg");
    let (s, stats) = plot_with_stats(&csv, &out, &opts).unwrap();
    assert_eq!(s.series[0].points.len(), 3);
    assert_eq!(stats.hollow_markers, 1);
    assert!(s.notes.iter().any(|n| n.contains("stable=false")));
    assert!(std::fs::read_to_string(&out).unwrap().contains("unstable"));
}

#[test]
fn non_number_in_x_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "results.csv",
        "routing,servers,mean_wait,p99_wait",
        "a,1,1,2\na,2,1,2\na,3,1,2\na,4,1,2\na,5,1,2\nb,abc,1,2\n",
    );
    let err = load_series(&csv, &PlotOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, PlotError::NotANumber { line: 7, .. }),
        "{err:?}"
    );
    assert!(
        msg.ends_with("results.csv line 7: column 'servers' is not a number: 'abc'"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
}

#[test]
fn non_number_in_y_is_an_error_but_empty_is_no_value() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "r.csv",
        "routing,servers,mean_wait,p99_wait",
        "a,1,1,\na,2,,2\na,3,n/a,2\n",
    );
    let msg = load_series(&csv, &PlotOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("r.csv line 4: column 'mean_wait' is not a number: 'n/a'"),
        "{msg}"
    );
    let csv = write_csv(
        dir.path(),
        "r2.csv",
        "routing,servers,mean_wait,p99_wait",
        "a,1,1,\na,2,,2\n",
    );
    let s = load_series(&csv, &PlotOptions::default()).unwrap();
    assert_eq!(s.series[0].points, vec![(1.0, 1.0, None)]);
    assert_eq!(s.series[1].points, vec![(2.0, 2.0, None)]);
}

#[test]
fn unknown_column_lists_columns_and_suggests() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let opts = PlotOptions {
        y: vec!["p99_wiat".into()],
        ..Default::default()
    };
    let msg = load_series(&csv, &opts).unwrap_err().to_string();
    assert!(
        msg.contains("results.csv: no column 'p99_wiat' (columns: point, routing, servers"),
        "{msg}"
    );
    assert!(msg.contains("did you mean 'p99_wait'?"), "{msg}");
    let opts = PlotOptions {
        by: "policy".into(),
        ..Default::default()
    };
    let msg = load_series(&csv, &opts).unwrap_err().to_string();
    assert!(msg.contains("no column 'policy'"), "{msg}");
}

#[test]
fn bad_output_extension_and_missing_input_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let out = dir.path().join("fig.pdf");
    let msg = plot_csv(&csv, &out, &PlotOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("fig.pdf: unsupported output format '.pdf'"),
        "{msg}"
    );
    assert!(!out.exists());
    let msg = plot_csv(&csv, &dir.path().join("fig"), &PlotOptions::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("'(none)'"), "{msg}");
    let missing = dir.path().join("nope.csv");
    let msg = load_series(&missing, &PlotOptions::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("nope.csv: "), "{msg}");
}

#[test]
fn log_x_rejects_non_positive_x() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "l.csv",
        "routing,servers,mean_wait",
        "a,0,1\na,2,1\n",
    );
    let opts = PlotOptions {
        log_x: true,
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    let msg = load_series(&csv, &opts).unwrap_err().to_string();
    assert!(
        msg.contains("l.csv: line 2: column 'servers' is 0"),
        "{msg}"
    );
}

#[test]
fn ragged_csv_and_crlf_line_numbers_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    let csv = write_csv(
        dir.path(),
        "bad.csv",
        "routing,servers,mean_wait",
        "a,1,1\na,2\n",
    );
    let msg = load_series(&csv, &opts).unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "{}: malformed CSV: line 3: 2 field(s) where the header has 3",
            csv.display()
        )
    );
    let crlf = dir.path().join("crlf.csv");
    std::fs::write(&crlf, "routing,servers,mean_wait\r\na,1,1\r\na,x,1\r\n").unwrap();
    let msg = load_series(&crlf, &opts).unwrap_err().to_string();
    assert!(msg.contains("crlf.csv line 3: column 'servers'"), "{msg}");
}

#[test]
fn numeric_groups_are_ordered_numerically_and_empty_labelled() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "n.csv",
        "servers,lambda,mean_wait,tag",
        "10,1,1,\n8,1,2,\n10,2,3,\n8,2,4,\n",
    );
    let opts = PlotOptions {
        x: "lambda".into(),
        by: "servers".into(),
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    let labels: Vec<&str> = s.series.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(labels, ["8", "10"]);
    assert_eq!(s.x_label, "arrival rate λ (per time unit)");
    let s = load_series(
        &csv,
        &PlotOptions {
            by: "tag".into(),
            ..opts
        },
    )
    .unwrap();
    assert_eq!(s.series.len(), 1);
    assert_eq!(s.series[0].label, "(empty)");
    // Rows for servers 8 and 10 share each lambda: reported with the culprit.
    assert!(
        s.notes.iter().any(|n| n.contains("servers")),
        "{:?}",
        s.notes
    );
}

#[test]
fn tick_helpers() {
    // Three decades: decade ticks with plain labels and 2..9 minor lines.
    let t = log_ticks(-1.2, 2.1, 8);
    let labels: Vec<&str> = t.major.iter().map(|m| m.1.as_str()).collect();
    assert_eq!(labels, ["0.1", "1", "10", "100"]);
    assert!(t.minor.len() > 20);
    // Many decades: powers of ten everywhere, thinned to the target.
    let t = log_ticks(-22.0, 3.0, 6);
    assert!(t.major.len() <= 6);
    assert!(
        t.major.iter().all(|m| m.1.starts_with("10")),
        "{:?}",
        t.major
    );
    assert!(t.major.iter().any(|m| m.1 == "10⁰"));
    // Less than a decade: 1-2-5 or 1..9.
    let t = log_ticks(0.5f64.log10(), 30f64.log10(), 8);
    let labels: Vec<&str> = t.major.iter().map(|m| m.1.as_str()).collect();
    assert_eq!(labels, ["0.5", "1", "2", "5", "10", "20"]);
    let t = linear_ticks(0.0, 3.2, 6, false);
    let labels: Vec<&str> = t.major.iter().map(|m| m.1.as_str()).collect();
    assert_eq!(labels, ["0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"]);
    let t = linear_ticks(-0.5, 130.0, 6, true);
    let labels: Vec<&str> = t.major.iter().map(|m| m.1.as_str()).collect();
    assert_eq!(labels, ["0", "20", "40", "60", "80", "100", "120"]);
    assert_eq!(format_tick(3.8e7, 1e7), "3.8×10⁷");
    assert_eq!(format_tick(-0.25, 0.25), "−0.25");
}

#[test]
fn options_default_matches_cli_defaults() {
    let o = PlotOptions::default();
    assert_eq!(o.x, "servers");
    assert_eq!(o.y, ["mean_wait", "p99_wait"]);
    assert_eq!(o.by, "routing");
    assert!(o.log_y && !o.log_x && !o.analytic && o.facet.is_none());
}
