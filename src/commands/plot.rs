//! `qsweep plot`: results or histogram CSVs drawn as an SVG, PNG or PDF figure.

use std::path::PathBuf;

use anyhow::Result;

use qsweep_plot::{plot_files, PlotOptions};

/// Flags of `qsweep plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Results CSVs written by `qsweep run` (several: their rows in one
    /// figure, told apart by a `file` column), or histogram CSVs of `run
    /// --hist` (drawn as each point's tail P(wait > t) on log axes, labelled
    /// from the results CSV given before them)
    #[arg(required = true, num_args = 1..)]
    pub csv: Vec<PathBuf>,
    /// Output figure, .svg, .png or .pdf (default: the first CSV's name with .svg)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Column on the x axis [default: the axis that varies along a series:
    /// servers, rho, lambda, workers, choices or routers; bin_upper for histograms]
    #[arg(long)]
    pub x: Option<String>,
    /// Columns on the y axis, one panel each (comma-separated) [histograms: ccdf]
    #[arg(long, default_value = "mean_wait,p99_wait", value_delimiter = ',')]
    pub y: Vec<String>,
    /// One line per distinct value of these columns (comma-separated; "" for one
    /// line per panel); routing carries pod's d and the router count along
    /// [histograms: one curve per point, named by the axes that differ]
    #[arg(long, default_value = "routing", value_delimiter = ',')]
    pub by: Vec<String>,
    /// One row of panels per distinct value of these columns (comma-separated)
    #[arg(long, value_delimiter = ',')]
    pub facet: Vec<String>,
    /// Let the facet rows of each y column share one y range (by default each
    /// panel has its own)
    #[arg(long, conflicts_with = "free_y")]
    pub shared_y: bool,
    /// Give each panel its own y range (the default)
    #[arg(long)]
    pub free_y: bool,
    /// Logarithmic x axis (always, for histograms)
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis (the default)
    #[arg(long, conflicts_with = "linear_y")]
    pub log_y: bool,
    /// Linear y axis
    #[arg(long)]
    pub linear_y: bool,
    /// Draw the analytic_* columns over the simulated ones: exact methods
    /// dotted, approximations dashed, both named in the legend
    #[arg(long)]
    pub analytic: bool,
    /// Time unit of the spec, for axis labels (e.g. s, ms) [default: the `units` recorded in the CSV's .meta.json]
    #[arg(long)]
    pub time_unit: Option<String>,
    /// Figure title
    #[arg(long)]
    pub title: Option<String>,
    /// Overwrite the figure if it exists
    #[arg(long)]
    pub force: bool,
    /// Figure width: pixels (600), or a printed width (3.5in, 8.8cm, 89mm,
    /// 252pt; text then prints at 8-11 pt), or column / page [default: from
    /// the panels; a PDF: page, 7 in]
    #[arg(long, value_parser = parse_plot_length)]
    pub width: Option<qsweep_plot::Length>,
    /// Figure height, as --width [default: from the width and the panels]
    #[arg(long, value_parser = parse_plot_length)]
    pub height: Option<qsweep_plot::Length>,
    /// A printed size by name: column (3.5 in, one column of a two-column
    /// paper) or page (7 in, its text width); --width overrides it
    #[arg(long, value_parser = ["column", "page"])]
    pub size: Option<String>,
}

fn parse_plot_length(s: &str) -> Result<qsweep_plot::Length, String> {
    qsweep_plot::parse_length(s)
}

/// `qsweep plot`: results or histogram CSVs as a figure.
pub fn plot(args: &PlotArgs) -> Result<()> {
    use qsweep_plot::Length;
    let first = &args.csv[0];
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| first.with_extension("svg"));
    let list =
        |v: &[String]| -> Vec<String> { v.iter().filter(|s| !s.is_empty()).cloned().collect() };
    let preset = args
        .size
        .as_deref()
        .and_then(|s| qsweep_plot::PAPER_SIZES.iter().find(|p| p.0 == s))
        .map_or(0.0, |p| p.1);
    // The smallest figure that holds a panel's axes and a legend (issue 40:
    // `--width 1` was widened to 200 px silently, its height computed for 1
    // px, and `--width 0` gave the default size).
    for (flag, given, min_px) in [
        ("--width", args.width, 200u32),
        ("--height", args.height, 150),
    ] {
        let min_in = f64::from(min_px) / qsweep_plot::PX_PER_INCH;
        let small = match given {
            Some(Length::Px(px)) => px < min_px,
            Some(Length::Inches(i)) => i * qsweep_plot::PX_PER_INCH < f64::from(min_px) - 0.5,
            None => false,
        };
        if small {
            return Err(qsweep_core::UsageError(format!(
                "{flag}: below the smallest figure, {min_px} px or {min_in:.2} in; expected at \
                 least that (e.g. 600 or 3.5in)"
            ))
            .into());
        }
    }
    let (mut width, mut width_in) = (0, preset);
    match args.width {
        Some(Length::Px(px)) => (width, width_in) = (px, 0.0),
        Some(Length::Inches(i)) => width_in = i,
        None => {}
    }
    let (mut height, mut height_in) = (0, 0.0);
    match args.height {
        Some(Length::Px(px)) => height = px,
        Some(Length::Inches(i)) => height_in = i,
        None => {}
    }
    if (width_in > 0.0 || height_in > 0.0) && (width > 0 || height > 0) {
        return Err(qsweep_core::UsageError(
            "--width/--height: one in pixels and one in inches (or --size); expected both in \
             the same kind of unit"
                .to_string(),
        )
        .into());
    }
    let opts = PlotOptions {
        x: args.x.clone().unwrap_or_default(),
        y: list(&args.y),
        by: list(&args.by),
        facet: list(&args.facet),
        shared_y: args.shared_y,
        log_x: args.log_x,
        log_y: !args.linear_y,
        analytic: args.analytic,
        width,
        height,
        width_in,
        height_in,
        title: args.title.clone(),
        // Else the unit the run's spec declared (`units`), from its meta.
        time_unit: args
            .time_unit
            .clone()
            .or_else(|| args.csv.iter().find_map(|c| recorded_units(c))),
    };
    if !args.force && out.symlink_metadata().is_ok() {
        return Err(qsweep_core::UsageError(format!(
            "--out: '{}' already exists; expected a new file (pass --force to overwrite it)",
            out.display()
        ))
        .into());
    }
    let paths: Vec<&std::path::Path> = args.csv.iter().map(PathBuf::as_path).collect();
    let summary = plot_files(&paths, &out, &opts)?;
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    eprintln!(
        "qsweep: wrote {} ({} series)",
        out.display(),
        summary.series.len()
    );
    Ok(())
}

/// The `units` recorded in the `.meta.json` beside a results CSV, if any.
fn recorded_units(csv: &std::path::Path) -> Option<String> {
    let meta =
        qsweep_core::provenance::Meta::read(&qsweep_core::provenance::meta_path(csv)).ok()?;
    qsweep_core::spec::units_in_toml(&meta.spec_toml)
}
