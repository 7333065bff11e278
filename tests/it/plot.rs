//! `qsweep plot` end to end on a CSV that `qsweep run` wrote: the x axis chosen
//! from the axis that varies, pod's d in the legend, exact and approximate
//! baselines named apart, several `--by` columns, PDF output, and one-line
//! errors.  The simulation is tiny (16 replications of 2000 customers, CPU).

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

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", show(out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_rho_sweep_of_pod_jsq_and_central_plots_as_it_should() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A ρ sweep at a fixed fleet: pod with d = 2 and 3 (mean-field baseline,
    // an approximation), JSQ (no baseline), central (Erlang C, exact).
    ok(&qsweep(
        d,
        &[
            "run",
            "--routing",
            "pod,jsq,central",
            "--choices",
            "2,3",
            "--servers",
            "4",
            "--rho",
            "0.5,0.8",
            "--service",
            "exp(mean=1)",
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
            "-q",
            "-o",
            "r.csv",
        ],
    ));

    // No --x: ρ varies, servers does not, so x is ρ (and the note says so).
    let err = ok(&qsweep(
        d,
        &["plot", "r.csv", "--analytic", "-o", "fig.svg"],
    ));
    assert!(err.contains("x axis: rho"), "{err}");
    assert!(!err.contains("repeated x"), "{err}");
    let svg = std::fs::read_to_string(d.join("fig.svg")).unwrap();
    for text in [
        "utilisation ρ",
        "pod (d=2)",
        "pod (d=3)",
        "JSQ",
        "exact: Erlang C",
        "approx: mean-field pod",
    ] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }

    // --x still decides; several --by columns are accepted.
    ok(&qsweep(
        d,
        &[
            "plot",
            "r.csv",
            "--x",
            "servers",
            "--by",
            "routing,choices",
            "-o",
            "x.svg",
        ],
    ));

    // PDF: a document, written with the same notes.
    let err = ok(&qsweep(
        d,
        &[
            "plot",
            "r.csv",
            "--analytic",
            "--facet",
            "routing",
            "-o",
            "fig.pdf",
        ],
    ));
    assert!(err.contains("wrote fig.pdf"), "{err}");
    let pdf = std::fs::read(d.join("fig.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-1.4\n"));
    assert!(pdf.ends_with(b"%%EOF\n"));

    // An unknown extension: one line, exit 2, nothing written.
    let out = qsweep(d, &["plot", "r.csv", "-o", "fig.jpg"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(".svg, .png or .pdf"), "{err}");
    assert!(!d.join("fig.jpg").exists());
}

/// The seed's tail question in one figure: two runs of different specs (one
/// fleet size each), their rows together and their histograms as tails, and
/// a printed size.
#[test]
fn runs_of_different_specs_and_their_tails_in_one_figure() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let common = [
        "--lambda",
        "4",
        "--service",
        "exp(mean=1)",
        "--reps",
        "8",
        "--customers",
        "4000",
        "--warmup",
        "200",
        "--backend",
        "cpu",
        "--threads",
        "2",
        "-q",
    ];
    for (name, routing, servers) in [("a", "random", "8"), ("b", "central", "5")] {
        let mut args = vec!["run", "--routing", routing, "--servers", servers];
        args.extend(common);
        let csv = format!("{name}.csv");
        let hist = format!("{name}-hist.csv");
        args.extend(["-o", &csv, "--hist", &hist]);
        ok(&qsweep(d, &args));
    }
    // Rows of both runs: one series per policy, each at its own fleet size.
    let err = ok(&qsweep(
        d,
        &[
            "plot",
            "a.csv",
            "b.csv",
            "--y",
            "mean_wait",
            "-o",
            "rows.svg",
        ],
    ));
    assert!(err.contains("wrote rows.svg (2 series)"), "{err}");
    // Their tails, each named from the results CSV before it.
    let err = ok(&qsweep(
        d,
        &[
            "plot",
            "a.csv",
            "a-hist.csv",
            "b.csv",
            "b-hist.csv",
            "--size",
            "column",
            "-o",
            "tails.svg",
        ],
    ));
    assert!(err.contains("wrote tails.svg (2 series)"), "{err}");
    let svg = std::fs::read_to_string(d.join("tails.svg")).unwrap();
    assert!(svg.starts_with("<svg width=\"3.5in\""), "{}", &svg[..80]);
    for text in [
        "P(wait &gt; t)",
        "wait t",
        "random (servers=8)",
        "central (servers=5)",
    ] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }
    // A width in centimetres; a bad length is one line, exit 2.
    ok(&qsweep(
        d,
        &["plot", "a.csv", "--width", "8.9cm", "-o", "cm.pdf"],
    ));
    let out = qsweep(
        d,
        &["plot", "a.csv", "--width", "3 furlongs", "-o", "x.svg"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a length"));
    // Too small a figure is refused, not widened silently (issue 40: `--width
    // 1` drew 200 × 23,624 px, `--width 0` the default size).
    for (flag, value) in [
        ("--width", "1"),
        ("--width", "0"),
        ("--width", "1in"),
        ("--width", "199"),
        ("--height", "0"),
        ("--height", "1cm"),
    ] {
        let out = qsweep(d, &["plot", "a.csv", flag, value, "-o", "small.svg"]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{flag}: below the smallest figure, ")),
            "{flag} {value}: {err}"
        );
        assert!(!d.join("small.svg").exists());
    }
    ok(&qsweep(
        d,
        &["plot", "a.csv", "--width", "200", "-o", "w200.svg"],
    ));
    ok(&qsweep(
        d,
        &["plot", "a.csv", "--width", "2in", "-o", "w2in.svg"],
    ));
}
