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
        facet: vec!["service".into()],
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
        find(&s, "mean_wait | service=det", "JSQ").points,
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
        by: vec!["policy".into()],
        ..Default::default()
    };
    let msg = load_series(&csv, &opts).unwrap_err().to_string();
    assert!(msg.contains("no column 'policy'"), "{msg}");
    // A stray quote in the header makes the reader take the rows into one
    // header: still one line, each name cut (found by the property tests).
    let broken = HEADER.replacen(',', ",\"", 1);
    let csv = write_csv(dir.path(), "quoted.csv", &broken, SMALL);
    let msg = load_series(&csv, &PlotOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(msg.contains('…'), "{msg}");
}

#[test]
fn bad_output_extension_and_missing_input_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let out = dir.path().join("fig.jpg");
    let msg = plot_csv(&csv, &out, &PlotOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(
            "fig.jpg: unsupported output format '.jpg' (use a .svg, .png or .pdf file name)"
        ),
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
        by: vec!["servers".into()],
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
            by: vec!["tag".into()],
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
    let t = log_ticks(-1.2, 2.1, 8, 8);
    let labels: Vec<&str> = t.major.iter().map(|m| m.1.as_str()).collect();
    assert_eq!(labels, ["0.1", "1", "10", "100"]);
    assert!(t.minor.len() > 20);
    // Many decades: powers of ten everywhere, thinned to the target.
    let t = log_ticks(-22.0, 3.0, 6, 6);
    assert!(t.major.len() <= 6);
    assert!(
        t.major.iter().all(|m| m.1.starts_with("10")),
        "{:?}",
        t.major
    );
    assert!(t.major.iter().any(|m| m.1 == "10⁰"));
    // Less than a decade: 1-2-5 or 1..9.
    let t = log_ticks(0.5f64.log10(), 30f64.log10(), 8, 8);
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
    assert_eq!(o.x, "", "x: the axis that varies");
    assert_eq!(o.y, ["mean_wait", "p99_wait"]);
    assert_eq!(o.by, ["routing"]);
    assert!(o.log_y && !o.log_x && !o.analytic && o.facet.is_empty() && !o.shared_y);
}

/// The header of `qsweep run`'s CSV, trimmed to what these tests use.
const RUN_HEADER: &str = "routing,servers,workers,lambda,service,rho,stable,mean_wait,mean_wait_ci95,p99_wait,analytic_mean_wait,analytic_p99_wait,analytic_method,choices,routers";

#[test]
fn x_defaults_to_the_axis_that_varies() {
    let dir = tempfile::tempdir().unwrap();
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    // A ρ sweep at a fixed fleet: ρ and λ vary together, servers does not.
    let rho_sweep = write_csv(
        dir.path(),
        "rho.csv",
        RUN_HEADER,
        "random,4,1,2,exp(rate=1),0.5,true,1,0.1,5,1,5,exact:mm1,,1\n\
         random,4,1,2.8,exp(rate=1),0.7,true,2.3,0.1,9,2.3,9,exact:mm1,,1\n\
         random,4,1,3.6,exp(rate=1),0.9,true,9,0.1,40,9,40,exact:mm1,,1\n",
    );
    let s = load_series(&rho_sweep, &opts).unwrap();
    assert_eq!(s.x_column, "rho");
    assert_eq!(s.x_label, "utilisation ρ");
    assert_eq!(s.series[0].points.len(), 3);
    assert_eq!(s.x_range, (0.5, 0.9));
    assert!(
        s.notes.iter().any(|n| n.contains("x axis: rho")),
        "{:?}",
        s.notes
    );
    // --x still decides.
    let s = load_series(
        &rho_sweep,
        &PlotOptions {
            x: "servers".into(),
            ..opts.clone()
        },
    )
    .unwrap();
    assert_eq!(s.x_column, "servers");
    assert!(s.notes.iter().any(|n| n.contains("repeated x")));

    // The default study: servers listed at a fixed λ, so ρ = λ/(servers·μ)
    // moves one to one with servers; servers is the axis the spec listed.
    let seed = write_csv(
        dir.path(),
        "seed.csv",
        RUN_HEADER,
        "random,51,1,150,exp(rate=3),0.9803922,true,16,0.3,75,16,77,exact:mm1,,1\n\
         random,60,1,150,exp(rate=3),0.8333333,true,1.6,0.01,8.8,1.6,8.8,exact:mm1,,1\n\
         central,51,1,150,exp(rate=3),0.9803922,true,0.28,0.01,1.5,0.28,1.5,exact:erlang_c,,1\n\
         central,60,1,150,exp(rate=3),0.8333333,true,0.004,0.001,0.08,0.004,0.08,exact:erlang_c,,1\n",
    );
    let s = load_series(&seed, &opts).unwrap();
    assert_eq!(s.x_column, "servers");
    assert!(s.notes.is_empty(), "{:?}", s.notes);

    // The Weibull study: ρ listed for several fleets, λ derived from both.
    // Faceted by servers, x is ρ; without the facet ρ still wins (4 values
    // against 3) and λ, derived, is never chosen.
    let mut body = String::new();
    for servers in [1, 10, 51] {
        for rho in [0.5, 0.7, 0.9, 0.95] {
            let lambda = rho * servers as f64 / 0.26;
            body.push_str(&format!(
                "random,{servers},1,{lambda},weibull,{rho},true,1,0.1,5,,,none,,1\n"
            ));
        }
    }
    let weibull = write_csv(dir.path(), "w.csv", RUN_HEADER, &body);
    let faceted = PlotOptions {
        facet: vec!["servers".into()],
        ..opts.clone()
    };
    assert_eq!(load_series(&weibull, &faceted).unwrap().x_column, "rho");
    assert_eq!(load_series(&weibull, &opts).unwrap().x_column, "rho");

    // A λ sweep for two fleets: λ has the fewer distinct values, so it is the
    // axis the spec listed (ρ is derived from it).
    let mut body = String::new();
    for servers in [2, 4] {
        for lambda in [0.5, 1.0, 1.5] {
            let rho = lambda / servers as f64;
            body.push_str(&format!(
                "random,{servers},1,{lambda},exp(rate=1),{rho},true,1,0.1,5,,,none,,1\n"
            ));
        }
    }
    let lambda_sweep = write_csv(dir.path(), "l.csv", RUN_HEADER, &body);
    assert_eq!(
        load_series(&lambda_sweep, &faceted).unwrap().x_column,
        "lambda"
    );

    // Nothing varies: servers, as before this choice existed.
    let single = write_csv(
        dir.path(),
        "one.csv",
        RUN_HEADER,
        "random,4,1,2,exp(rate=1),0.5,true,1,0.1,5,1,5,exact:mm1,,1\n",
    );
    assert_eq!(load_series(&single, &opts).unwrap().x_column, "servers");
    // No axis column at all: say so, and how to choose one.
    let other = write_csv(
        dir.path(),
        "bench.csv",
        "backend,customers,mean_wait",
        "cpu,1,1\ncpu,2,2\n",
    );
    let msg = load_series(
        &other,
        &PlotOptions {
            by: vec![],
            ..opts.clone()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("no axis column to put on x") && msg.contains("--x"),
        "{msg}"
    );
}

#[test]
fn several_by_columns_and_pods_d_in_the_legend() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::new();
    for (routing, choices) in [("pod", "2"), ("pod", "3"), ("jsq", ""), ("round_robin", "")] {
        for (servers, rho) in [(4, 0.5), (4, 0.9), (8, 0.5), (8, 0.9)] {
            body.push_str(&format!(
                "{routing},{servers},1,1,exp(rate=1),{rho},true,1,0.1,5,,,none,{choices},1\n"
            ));
        }
    }
    let csv = write_csv(dir.path(), "pod.csv", RUN_HEADER, &body);
    let base = PlotOptions {
        y: vec!["mean_wait".into()],
        x: "rho".into(),
        ..Default::default()
    };
    let labels =
        |s: &PlotSummary| -> Vec<String> { s.series.iter().map(|x| x.label.clone()).collect() };
    // routing carries pod's d: two pod series, never merged.
    let s = load_series(
        &csv,
        &PlotOptions {
            facet: vec!["servers".into()],
            ..base.clone()
        },
    )
    .unwrap();
    assert_eq!(
        labels(&s)[..4],
        ["pod (d=2)", "pod (d=3)", "JSQ", "round robin"]
    );
    assert!(
        !s.notes.iter().any(|n| n.contains("repeated x")),
        "{:?}",
        s.notes
    );
    // Naming choices beside routing changes nothing.
    let s2 = load_series(
        &csv,
        &PlotOptions {
            by: vec!["routing".into(), "choices".into()],
            facet: vec!["servers".into()],
            ..base.clone()
        },
    )
    .unwrap();
    assert_eq!(labels(&s2), labels(&s));
    // Several columns: one series per combination, named readably.
    let s = load_series(
        &csv,
        &PlotOptions {
            by: vec!["routing".into(), "servers".into()],
            ..base.clone()
        },
    )
    .unwrap();
    assert_eq!(s.series.len(), 8);
    assert_eq!(
        labels(&s)[..3],
        [
            "pod (d=2, servers=4)",
            "pod (d=2, servers=8)",
            "pod (d=3, servers=4)"
        ]
    );
    assert_eq!(find(&s, "mean_wait", "JSQ (servers=8)").points.len(), 2);
    // Ordinary columns only: symbol=value parts.
    let s = load_series(
        &csv,
        &PlotOptions {
            by: vec!["servers".into(), "choices".into()],
            x: "rho".into(),
            ..base.clone()
        },
    )
    .unwrap();
    assert_eq!(labels(&s)[0], "servers=4, d=2");
    // The legend title names the columns; the SVG shows the labels.
    let out = dir.path().join("pod.svg");
    let opts = PlotOptions {
        by: vec!["routing".into(), "servers".into()],
        ..base
    };
    plot_csv(&csv, &out, &opts).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    for text in [
        "routing, servers:",
        "pod (d=3, servers=8)",
        "round robin (servers=4)",
    ] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }
}

#[test]
fn facet_titles_are_readable_and_several_columns_facet() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::new();
    for rho in [0.5, 0.9] {
        for service in ["exp(rate=1)", "\"weibull(shape=0.5,median=1)\""] {
            for servers in [1, 2] {
                body.push_str(&format!(
                    "random,{servers},1,1,{service},{rho},true,1,0.1,5,,,none,,1\n"
                ));
            }
        }
    }
    let csv = write_csv(dir.path(), "f.csv", RUN_HEADER, &body);
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        facet: vec!["rho".into(), "service".into()],
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    let panels: Vec<&str> = s.y_ranges.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(panels.len(), 4);
    assert_eq!(panels[0], "mean_wait | rho=0.5, service=exp(rate=1)");
    assert_eq!(s.x_column, "servers");
    let out = dir.path().join("f.svg");
    plot_csv(&csv, &out, &opts).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains("ρ = 0.9, service = weibull(shape=0.5, median=1)"),
        "{svg}"
    );
}

/// A Weibull-like study: servers = 1 is M/G/1 (Pollaczek–Khinchine, exact),
/// servers = 10 is M/G/c (Allen–Cunneen, approximate).
fn baselines_csv(dir: &Path) -> PathBuf {
    let mut body = String::new();
    for (servers, method) in [
        (1, "exact:pollaczek_khinchine"),
        (10, "approx:allen_cunneen"),
    ] {
        for (k, rho) in [0.5, 0.7, 0.9].iter().enumerate() {
            let w = (k + 1) as f64 / servers as f64;
            body.push_str(&format!(
                "central,{servers},1,1,weibull,{rho},true,{w},0.01,{},{},{},{method},,1\n",
                w * 5.0,
                w * 1.3,
                w * 6.0
            ));
        }
    }
    write_csv(dir, "b.csv", RUN_HEADER, &body)
}

#[test]
fn exact_and_approximate_baselines_are_drawn_and_named_apart() {
    let dir = tempfile::tempdir().unwrap();
    let csv = baselines_csv(dir.path());
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        facet: vec!["servers".into()],
        analytic: true,
        ..Default::default()
    };
    let s = load_series(&csv, &opts).unwrap();
    assert_eq!(s.x_column, "rho");
    let exact = find(
        &s,
        "mean_wait | servers=1",
        "central (exact: Pollaczek–Khinchine)",
    );
    assert!(!exact.dashed);
    assert_eq!(exact.baseline.as_deref(), Some("exact:pollaczek_khinchine"));
    assert_eq!(exact.points.len(), 3);
    let approx = find(
        &s,
        "mean_wait | servers=10",
        "central (approx: Allen–Cunneen)",
    );
    assert!(approx.dashed);
    assert_eq!(approx.baseline.as_deref(), Some("approx:allen_cunneen"));
    assert!(s
        .series
        .iter()
        .filter(|x| x.baseline.is_none())
        .all(|x| !x.dashed));

    let out = dir.path().join("b.svg");
    let (_, stats) = plot_with_stats(&csv, &out, &opts).unwrap();
    assert_eq!((stats.exact_segments, stats.dashed_segments), (1, 1));
    let svg = std::fs::read_to_string(&out).unwrap();
    for text in ["exact: Pollaczek–Khinchine", "approx: Allen–Cunneen"] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }
    assert!(!svg.contains(">\nanalytic\n<"), "no unnamed analytic entry");

    // One series whose method changes along x (x = servers, one row per ρ):
    // two baseline series; the exact part solid, the approximate part and the
    // step between them dashed.
    let along = PlotOptions {
        x: "servers".into(),
        facet: vec!["rho".into()],
        ..opts.clone()
    };
    let (s, stats) = plot_with_stats(&csv, &out, &along).unwrap();
    let in_first: Vec<&Series> = s
        .series
        .iter()
        .filter(|x| x.panel == "mean_wait | rho=0.5" && x.baseline.is_some())
        .collect();
    assert_eq!(in_first.len(), 2);
    // Each panel: two points (1 and 10 servers) of different methods: one
    // dashed step, no solid run.
    assert_eq!((stats.exact_segments, stats.dashed_segments), (0, 3));

    // Without an analytic_method column: dashed and "analytic", as before.
    let old = write_csv(dir.path(), "old.csv", HEADER, SMALL);
    let s = load_series(
        &old,
        &PlotOptions {
            analytic: true,
            ..Default::default()
        },
    )
    .unwrap();
    let a = find(&s, "mean_wait", "random (analytic)");
    assert!(a.dashed);
    assert_eq!(a.baseline.as_deref(), Some(""));
}

#[test]
fn facet_rows_have_their_own_y_range_unless_shared() {
    let dir = tempfile::tempdir().unwrap();
    let csv = baselines_csv(dir.path());
    let opts = PlotOptions {
        y: vec!["mean_wait".into(), "p99_wait".into()],
        facet: vec!["servers".into()],
        ..Default::default()
    };
    let out = dir.path().join("s.svg");
    let (_, shared) = plot_with_stats(
        &csv,
        &out,
        &PlotOptions {
            shared_y: true,
            ..opts.clone()
        },
    )
    .unwrap();
    // Panels: (servers=1: mean, p99), (servers=10: mean, p99).
    assert_eq!(shared.y_limits.len(), 4, "{:?}", shared.y_limits);
    assert_eq!(
        shared.y_limits[0], shared.y_limits[2],
        "mean wait panels share"
    );
    assert_eq!(shared.y_limits[1], shared.y_limits[3], "p99 panels share");
    assert_ne!(shared.y_limits[0], shared.y_limits[1], "columns differ");
    let (_, free) = plot_with_stats(&csv, &out, &opts).unwrap();
    // Waits at 10 servers are 10× smaller: their own range sits lower.
    assert!(
        free.y_limits[2].1 < free.y_limits[0].1 - 0.5,
        "{:?}",
        free.y_limits
    );
    // ... and the 1-server panel's range no longer reaches down to theirs.
    assert!(
        free.y_limits[0].0 > shared.y_limits[0].0 + 0.5,
        "{:?}",
        free.y_limits
    );
}

/// The objects of a PDF file by number, checked against its cross-reference
/// table: every xref offset must point at "N 0 obj", startxref at "xref", and
/// every stream's /Length must be the bytes between "stream\n" and "\nendstream".
fn check_pdf_structure(pdf: &[u8]) -> Vec<(usize, Vec<u8>)> {
    assert!(pdf.starts_with(b"%PDF-1."), "header");
    assert!(pdf.ends_with(b"%%EOF\n"), "trailer end");
    let sx = pdf
        .windows(10)
        .rposition(|w| w == b"startxref\n")
        .expect("startxref");
    let tail = std::str::from_utf8(&pdf[sx + 10..]).unwrap();
    let xref_at: usize = tail.lines().next().unwrap().parse().unwrap();
    // Everything from the xref table on is ASCII.
    let text = std::str::from_utf8(&pdf[xref_at..]).expect("ASCII xref and trailer");
    assert!(text.starts_with("xref\n0 "), "startxref points at xref");
    let mut lines = text.lines().skip(1);
    let header: Vec<usize> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    let n = header[1];
    assert!(text.contains(&format!("/Size {n}")), "trailer /Size");
    let mut objects = Vec::new();
    for (i, line) in lines.take(n).enumerate() {
        // 20-byte entries: 10-digit offset, 5-digit generation, n/f.
        assert_eq!(line.len(), 19, "xref entry {i}: {line:?}");
        if i == 0 {
            assert!(line.ends_with(" f "), "{line:?}");
            continue;
        }
        assert!(line.ends_with(" n "), "{line:?}");
        let off: usize = line[..10].parse().unwrap();
        let head = format!("{i} 0 obj\n");
        assert!(
            pdf[off..].starts_with(head.as_bytes()),
            "object {i} not at {off}"
        );
        let body_start = off + head.len();
        let end = body_start
            + pdf[body_start..]
                .windows(7)
                .position(|w| w == b"endobj\n")
                .expect("endobj");
        let body = pdf[body_start..end].to_vec();
        if let Some(p) = find_bytes(&body, b">>\nstream\n") {
            let dict = String::from_utf8_lossy(&body[..p]);
            let len: usize = dict
                .split("/Length ")
                .nth(1)
                .unwrap()
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let data = &body[p + 10..];
            assert!(
                data[len..].starts_with(b"\nendstream"),
                "object {i}: /Length {len} does not end the stream"
            );
        }
        objects.push((i, body));
    }
    objects
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The decompressed data of the stream in `body`.
fn inflate(body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let p = find_bytes(body, b">>\nstream\n").expect("a stream");
    let end = find_bytes(body, b"\nendstream").unwrap();
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&body[p + 10..end])
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn pdf_is_a_valid_document_with_an_embedded_subset_font() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let out = dir.path().join("fig.pdf");
    // Sized in pixels, a PDF is the SVG's size at 0.75 pt per pixel.
    let opts = PlotOptions {
        analytic: true,
        title: Some("ρ sweep (λ, 10⁻³)".into()),
        width: 960,
        ..Default::default()
    };
    // Given no size, a PDF is a page's text width: 7 in, 504 pt.
    let default_pdf = dir.path().join("default.pdf");
    plot_csv(
        &csv,
        &default_pdf,
        &PlotOptions {
            width: 0,
            ..opts.clone()
        },
    )
    .unwrap();
    let bytes = std::fs::read(&default_pdf).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("/MediaBox [0 0 504 "), "{}", &text[..400]);
    let (_, stats) = plot_with_stats(&csv, &out, &opts).unwrap();
    let (_, svg_stats) = plot_with_stats(&csv, &dir.path().join("fig.svg"), &opts).unwrap();
    assert_eq!(stats, svg_stats, "the PDF draws what the SVG draws");
    let pdf = std::fs::read(&out).unwrap();
    let objects = check_pdf_structure(&pdf);
    assert_eq!(objects.len(), 10);
    let dict = |i: usize| String::from_utf8_lossy(&objects[i - 1].1).to_string();
    assert!(dict(1).contains("/Type /Catalog"));
    // The page is the SVG's size at 0.75 pt per pixel.
    let svg = std::fs::read_to_string(dir.path().join("fig.svg")).unwrap();
    let w: f64 = svg
        .split("width=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let h: f64 = svg
        .split("height=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        dict(3).contains(&format!("/MediaBox [0 0 {} {}]", w * 0.75, h * 0.75)),
        "{}",
        dict(3)
    );
    let content = String::from_utf8(inflate(&objects[3].1)).unwrap();
    assert!(
        content.starts_with("0.75 0 0 -0.75 0 "),
        "y-down pixel space"
    );
    assert!(content.contains(" TJ ET"), "text drawn");
    assert!(content.contains(" re f"), "background filled");
    assert!(content.contains(" c\n"), "circles as Béziers");
    assert!(dict(5).contains("/Subtype /Type0") && dict(5).contains("/Identity-H"));
    assert!(dict(6).contains("/CIDFontType2") && dict(6).contains("/W ["));
    // The font program: a TrueType subset far smaller than DejaVu Sans, with
    // the title's glyphs (ρ, λ, superscripts) drawn from it.
    let program = inflate(&objects[7].1);
    assert_eq!(&program[..4], &[0, 1, 0, 0], "TrueType");
    assert!(program.len() < 120_000, "subset is {} bytes", program.len());
    let (glyphs, outlined) = super::pdf::tests_api::glyph_counts(&program).expect("subset parses");
    let (all, _) = super::pdf::tests_api::glyph_counts(super::style::FONT_BYTES).unwrap();
    assert_eq!(glyphs, all, "glyph ids kept");
    assert!((20..200).contains(&outlined), "{outlined} outlines kept");
    let cmap = String::from_utf8(inflate(&objects[8].1)).unwrap();
    for ch in ['ρ', 'λ', '⁻', '³', 'm'] {
        let code = format!("<{:04X}>", ch as u32);
        assert!(cmap.contains(&code), "ToUnicode lacks {ch}");
    }
    // Same figure, same bytes.
    plot_csv(&csv, &out, &opts).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), pdf);
}

/// Renders the PDF with poppler's `pdftoppm` (Debian: poppler-utils) and compares
/// it with our own PNG of the same figure: same size, same ink in the same places.
/// Skips, saying so, where pdftoppm is not installed.
#[test]
fn pdf_renders_like_the_png_with_poppler() {
    let has = |tool: &str| std::process::Command::new(tool).arg("-v").output().is_ok();
    if !has("pdftoppm") {
        // CI installs poppler-utils and sets this, so the test cannot skip there.
        assert!(
            std::env::var_os("QSWEEP_REQUIRE_POPPLER").is_none(),
            "QSWEEP_REQUIRE_POPPLER is set but pdftoppm is not installed"
        );
        eprintln!("skipped: pdftoppm (poppler-utils) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "results.csv", HEADER, SMALL);
    let opts = PlotOptions {
        analytic: true,
        width: 640,
        height: 400,
        title: Some("ρ sweep".into()),
        ..Default::default()
    };
    plot_csv(&csv, &dir.path().join("fig.pdf"), &opts).unwrap();
    plot_csv(&csv, &dir.path().join("fig.png"), &opts).unwrap();
    // 192 dpi = 2 device pixels per logical pixel, as our PNG.
    let status = std::process::Command::new("pdftoppm")
        .args(["-r", "192", "-png", "-singlefile"])
        .arg(dir.path().join("fig.pdf"))
        .arg(dir.path().join("poppler"))
        .status()
        .unwrap();
    assert!(status.success());
    let read = |p: PathBuf| {
        let mut r = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap()))
            .read_info()
            .unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        let ch = info.color_type.samples();
        let px: Vec<[u8; 3]> = buf[..info.buffer_size()]
            .chunks(ch)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        (info.width as usize, info.height as usize, px)
    };
    let (w, h, ours) = read(dir.path().join("fig.png"));
    let (pw, ph, theirs) = read(dir.path().join("poppler.png"));
    assert_eq!((pw, ph), (w, h), "page size");
    // Ink (darkness) per 16×16 block: the two renderings must put it in the
    // same places (a flipped axis or misplaced text would not correlate).
    let blocks = |px: &[[u8; 3]]| -> Vec<f64> {
        let (bw, bh) = (w / 16, h / 16);
        let mut ink = vec![0.0; bw * bh];
        for y in 0..bh * 16 {
            for x in 0..bw * 16 {
                let p = px[y * w + x];
                let dark = 765.0 - (p[0] as f64 + p[1] as f64 + p[2] as f64);
                ink[(y / 16) * bw + x / 16] += dark;
            }
        }
        ink
    };
    let (a, b) = (blocks(&ours), blocks(&theirs));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let corr = |a: &[f64], b: &[f64]| {
        let (ma, mb) = (mean(a), mean(b));
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let var = |v: &[f64], m: f64| v.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
        cov / (var(a, ma) * var(b, mb)).sqrt()
    };
    let r = corr(&a, &b);
    // Measured: 0.92 (our PNG sets text ~6% larger than the SVG, which the
    // PDF follows, and anti-aliases differently); the same PDF page upside
    // down gives 0.16, without its dark grey text 0.63.
    assert!(r > 0.85, "ink correlation {r}");
    let (ma, mb) = (mean(&a), mean(&b));
    assert!((ma / mb - 1.0).abs() < 0.25, "total ink {ma} vs {mb}");
    // The first series' colour is there.
    let blue = |p: &&[u8; 3]| {
        (p[0] as i32).abs() < 30 && (p[1] as i32 - 114).abs() < 30 && (p[2] as i32 - 178).abs() < 30
    };
    assert!(theirs.iter().filter(blue).count() > 200);
    // And the text comes back out of it.
    if let Ok(o) = std::process::Command::new("pdftotext")
        .arg(dir.path().join("fig.pdf"))
        .arg("-")
        .output()
    {
        let text = String::from_utf8_lossy(&o.stdout);
        for t in ["ρ sweep", "mean wait (time units)", "random", "95% CI"] {
            assert!(text.contains(t), "pdftotext lacks {t:?}: {text}");
        }
    }
}

/// The text elements of an SVG: (x, y, font size in user units, text).
fn svg_texts(svg: &str) -> Vec<(f64, f64, f64, String)> {
    let attr = |tag: &str, name: &str| -> Option<f64> {
        let key = format!(" {name}=\"");
        let start = tag.find(&key)? + key.len();
        tag[start..].split('"').next()?.parse().ok()
    };
    let mut out = Vec::new();
    for part in svg.split("<text").skip(1) {
        let Some(end) = part.find('>') else { continue };
        let tag = &part[..end];
        let text = part[end + 1..].split("</text>").next().unwrap_or("").trim();
        let text = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        if let (Some(x), Some(y), Some(size)) =
            (attr(tag, "x"), attr(tag, "y"), attr(tag, "font-size"))
        {
            out.push((x, y, size, text));
        }
    }
    out
}

/// Decade exponent of a power-of-ten label ("10⁻³" → -3), or of a plain
/// decimal power of ten ("0.001" → -3, "100" → 2).
fn decade_of(label: &str) -> Option<(i32, bool)> {
    if let Some(sup) = label.strip_prefix("10") {
        if sup.is_empty() {
            return Some((1, false));
        }
        let digits: String = sup
            .chars()
            .map(|c| match c {
                '⁻' => '-',
                c => "⁰¹²³⁴⁵⁶⁷⁸⁹"
                    .chars()
                    .position(|d| d == c)
                    .map_or('?', |d| (b'0' + d as u8) as char),
            })
            .collect();
        if let Ok(k) = digits.parse() {
            return Some((k, true));
        }
    }
    let v: f64 = label.parse().ok()?;
    let k = v.log10().round();
    ((v.log10() - k).abs() < 1e-9).then_some((k as i32, false))
}

/// A paper figure, read back from its SVG: sized in inches with its text at
/// 8–11 pt, every decade of every log y axis labelled, one notation for all
/// of them, the fleet's largest point labelled, the theory drawn over the
/// simulation, and axis titles in words.
#[test]
fn paper_figures_label_every_decade_in_one_notation_at_print_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/seed-results.csv");
    for (name, width_in) in [("page.svg", 7.0), ("column.svg", 3.5)] {
        let out = dir.path().join(name);
        let opts = PlotOptions {
            log_x: true,
            analytic: true,
            width_in,
            y: if width_in < 5.0 {
                vec!["mean_wait".into()]
            } else {
                vec!["mean_wait".into(), "p99_wait".into()]
            },
            time_unit: Some("s".into()),
            ..Default::default()
        };
        plot_csv(&seed, &out, &opts).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        let head = &svg[..svg.find('>').unwrap()];
        assert!(head.contains(&format!("width=\"{width_in}in\"")), "{head}");
        let view_w: f64 = head
            .split("viewBox=\"0 0 ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let pt_per_unit = width_in * 72.0 / view_w;
        let texts = svg_texts(&svg);
        for (_, _, size, text) in &texts {
            let pt = size * pt_per_unit;
            assert!(
                (7.5..=12.0).contains(&pt),
                "{text:?} at {pt:.1} pt in {name}"
            );
        }
        let tick_labels: Vec<&(f64, f64, f64, String)> = texts
            .iter()
            .filter(|t| decade_of(&t.3).is_some() || t.3 == "0")
            .collect();
        // Per panel (the y labels of a panel share their x), the decades:
        // consecutive, none skipped.
        let mut by_x: std::collections::BTreeMap<i64, Vec<(f64, i32, bool)>> = Default::default();
        for (x, y, _, t) in &tick_labels {
            if let Some((k, sup)) = decade_of(t) {
                by_x.entry(*x as i64).or_default().push((*y, k, sup));
            }
        }
        let y_axes: Vec<&Vec<(f64, i32, bool)>> = by_x.values().filter(|v| v.len() >= 3).collect();
        assert_eq!(y_axes.len(), opts.y.len(), "{name}: {by_x:?}");
        let mut notations = std::collections::HashSet::new();
        for axis in y_axes {
            let mut ks: Vec<i32> = axis.iter().map(|a| a.1).collect();
            ks.sort();
            assert!(
                ks.windows(2).all(|w| w[1] == w[0] + 1),
                "{name}: decades {ks:?}"
            );
            notations.extend(axis.iter().map(|a| a.2));
        }
        assert_eq!(notations.len(), 1, "{name}: one notation on every y axis");
        // Both ends of the fleet are labelled.
        for end in ["51", "4000"] {
            assert!(texts.iter().any(|t| t.3 == end), "{name}: no x label {end}");
        }
        assert!(svg.contains("mean wait (s)"));
        // The exact baselines are drawn after (over) the simulated line: the
        // random series' line, then the theory in its darker shade.
        let series_line = svg.find("stroke=\"#0072B2\" stroke-width=\"2\"").unwrap();
        let theory = svg.find("stroke=\"#002E47\"").expect("the theory's shade");
        assert!(theory > series_line, "{name}: theory under the simulation");
    }
}

#[test]
fn axis_titles_name_columns_in_words() {
    use super::labels::axis_label;
    let s = Some("s");
    assert_eq!(axis_label("q0.9999_wait", s), "p99.99 wait (s)");
    assert_eq!(axis_label("q0.5_wait", s), "median wait (s)");
    assert_eq!(axis_label("p999_wait", s), "p99.9 wait (s)");
    assert_eq!(axis_label("mean_wait_ci95", s), "95% CI of mean wait (s)");
    assert_eq!(axis_label("q0.99_wait_ci95", s), "95% CI of p99 wait (s)");
    assert_eq!(
        axis_label("p_wait_upper95", s),
        "95% upper bound of P(wait > 0)"
    );
    assert_eq!(axis_label("waited", s), "customers who waited");
    assert_eq!(axis_label("ccdf", s), "P(wait > t)");
    assert_eq!(axis_label("bin_upper", s), "wait t (s)");
    assert_eq!(
        axis_label("analytic_p99_wait", None),
        "analytic p99 wait (time units)"
    );
    assert_eq!(axis_label("z_mean_wait", s), "z-score of mean wait");
    assert_eq!(axis_label("something_else", s), "something_else");
}

const HIST: &str = "\
0,0,0,50,0.5
0,0.5,1,30,0.2
0,1,2,15,0.05
0,2,4,5,0
1,0,0,90,0.1
1,0.25,0.5,9,0.01
1,0.5,1,1,0
";

/// `qsweep plot run.csv hist.csv`: each point's tail on log axes, named by
/// the results rows of its point; the zero bin and the empty tail left out.
#[test]
fn histograms_are_drawn_as_tails_named_by_their_results_rows() {
    let dir = tempfile::tempdir().unwrap();
    let results = write_csv(
        dir.path(),
        "run.csv",
        HEADER,
        "0,random,8,0.9,true,1,0.1,2,0.1,,\n1,central,8,0.9,true,0.1,0.01,0.5,0.05,,\n",
    );
    let hist = write_csv(
        dir.path(),
        "run-hist.csv",
        "point,bin_lower,bin_upper,count,ccdf",
        HIST,
    );
    let out = dir.path().join("tail.svg");
    let (s, stats) =
        plot_files_with_stats(&[&results, &hist], &out, &PlotOptions::default()).unwrap();
    assert_eq!(s.x_column, "bin_upper");
    assert_eq!(s.y_labels, ["P(wait > t) "].map(|l| l.trim().to_string()));
    let labels: Vec<&str> = s.series.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(labels, ["random", "central"]);
    assert_eq!(s.series[0].points, [(1.0, 0.2, None), (2.0, 0.05, None)]);
    assert_eq!(s.series[1].points, [(0.5, 0.01, None)]);
    assert_eq!(s.dropped_zero, 0);
    assert_eq!(stats.markers, 0, "tails are lines");
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("wait t (time units)") && svg.contains("P(wait &gt; t)"));
    // Alone, a histogram's curves are named by point, and the note says how
    // to name them by policy.
    let alone = load_files(&[&hist], &PlotOptions::default()).unwrap();
    let labels: Vec<&str> = alone.series.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(labels, ["0", "1"]);
    assert!(
        alone
            .notes
            .iter()
            .any(|n| n.contains("qsweep plot run.csv")),
        "{:?}",
        alone.notes
    );
    // Two runs' histograms (each after its results) in one figure: the
    // curves are named by what differs between them.
    let results2 = write_csv(
        dir.path(),
        "big.csv",
        HEADER,
        "0,random,64,0.9,true,1,0.1,2,0.1,,\n",
    );
    let hist2 = write_csv(
        dir.path(),
        "big-hist.csv",
        "point,bin_lower,bin_upper,count,ccdf",
        "0,1,2,10,0.3\n0,2,4,5,0.1\n0,4,8,1,0\n",
    );
    let both = load_files(
        &[&results, &hist, &results2, &hist2],
        &PlotOptions::default(),
    )
    .unwrap();
    let labels: Vec<&str> = both.series.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "random (servers=8)",
            "random (servers=64)",
            "central (servers=8)"
        ]
    );
}

/// `qsweep plot a.csv b.csv`: rows of different specs (other columns, other
/// fleets) in one figure, with a `file` column to tell them apart.
#[test]
fn several_results_csvs_share_one_figure() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_csv(
        dir.path(),
        "a.csv",
        "point,routing,servers,mean_wait,mean_wait_ci95",
        "0,random,3145,0.05,0.001\n1,random,3000,0.06,0.001\n",
    );
    let b = write_csv(
        dir.path(),
        "b.csv",
        "point,routing,servers,choices,mean_wait",
        "0,pod,352,2,0.04\n1,pod,300,2,0.08\n",
    );
    let opts = PlotOptions {
        y: vec!["mean_wait".into()],
        ..Default::default()
    };
    let s = load_files(&[&a, &b], &opts).unwrap();
    let labels: Vec<&str> = s.series.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(labels, ["random", "pod (d=2)"]);
    assert_eq!(s.series[0].points[0], (3000.0, 0.06, Some(0.001)));
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("a.csv has no column choices")),
        "{:?}",
        s.notes
    );
    // By file.
    let by_file = load_files(
        &[&a, &b],
        &PlotOptions {
            by: vec!["file".into()],
            ..opts.clone()
        },
    )
    .unwrap();
    let labels: Vec<&str> = by_file.series.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(labels, ["a", "b"]);
    // A bad cell names its own file and line.
    let c = write_csv(
        dir.path(),
        "c.csv",
        "point,routing,servers,mean_wait",
        "0,jsq,53,x\n",
    );
    let e = load_files(&[&a, &c], &opts).unwrap_err().to_string();
    assert!(e.contains("c.csv line 2") && e.contains("mean_wait"), "{e}");
}
