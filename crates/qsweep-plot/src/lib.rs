//! qsweep-plot, `qsweep plot`: turn a results CSV written by `qsweep run` into
//! a chart (SVG, PNG or PDF).
//!
//! A crate of its own so that plotters, the PNG encoder and the PDF writer
//! compile only here, and a change to a figure recompiles this crate and the
//! binary, never the engines (it takes nothing from `qsweep-core` but the
//! file checks and the memory limit).
//!
//! Why this crate exists: a sweep produces one CSV row per grid point, and the
//! question it answers ("how does the mean / p99 wait of each routing policy scale
//! with the number of servers, and how close is it to the analytic baseline?") is
//! read off a figure, not a table.  Doing the plotting inside `qsweep` keeps the
//! figure reproducible from the CSV alone, with no Python/gnuplot toolchain, and
//! encodes the conventions of the CSV once (95 % CI half-widths in `<y>_ci95`,
//! analytic baselines in `analytic_<y>`, `stable=false` rows, empty cells = no
//! value).
//!
//! The work is split in two so that it can be tested without looking at pixels:
//! [`load_series`] parses and groups the CSV into [`Series`] (one per value of
//! `--by`, per panel; panels = `--facet` values × `--y` columns) and reports axis
//! ranges; [`plot_csv`] additionally draws them with `plotters`.
//!
//! Drawing conventions (documented for the figure's caption):
//! * one colour *and* one marker shape per `--by` value (readable in greyscale,
//!   Okabe–Ito colour-blind-safe palette), one shared legend below the panels so
//!   it never covers data;
//! * vertical error bars with caps = 95 % CI (`y ± <y>_ci95`) when that column exists;
//! * `analytic_<y>` (with `analytic = true`) drawn over the simulated series in a
//!   darker shade of its colour, so that a theory that agrees with the simulation
//!   shows along it: dotted where `analytic_method` says `exact:…`, dashed where
//!   it says `approx:…` (or where the CSV has no such column); the legend names
//!   the methods ("exact: Erlang C", "approx: Allen–Cunneen"), so that an
//!   approximation that misses the simulation is not read as the simulation
//!   missing the theory;
//! * series whose markers would cover each other at the same x (a one-server
//!   queue is the same under every policy) are set a few pixels apart;
//! * x is the input axis that varies along a series unless `--x` names one:
//!   a ρ sweep is drawn against ρ, a fleet-size sweep against servers (see [`xaxis`]);
//! * series (`--by`) and facet rows (`--facet`) are keyed by one or several
//!   columns; `routing` carries pod's d and the router count ("pod (d=2)"), and
//!   legends and facet titles name values readably ("JSQ", "ρ = 0.9");
//! * each panel has its own y range (`shared_y` lets the facet rows of a y column
//!   share one); log axes label every decade where the labels fit, in one
//!   notation for the whole figure (decimals where every axis' fit, else powers
//!   of ten); grid-point x ticks that do not all fit are thinned, keeping both ends;
//! * several CSVs draw in one figure: their rows under the union of their columns,
//!   with a `file` column (the file's stem) to tell them apart ([`inputs`]);
//!   histogram CSVs of `qsweep run --hist` are drawn as each point's tail
//!   P(wait > t) against t on log axes, lines without markers, named by the
//!   results rows of their points (the results CSV given before them);
//! * a figure sized in inches (`width_in`, the `column` and `page` presets; a
//!   PDF by default) is laid out at [`PX_PER_INCH`] so that its text prints at
//!   8–11 pt ([`paper`]);
//! * on a log y axis a value ≤ 0 cannot be placed: such points are drawn as a
//!   downward triangle (▼) sitting on the bottom edge of the panel, the line is
//!   broken there, a legend entry explains the marker and they are counted in
//!   [`PlotSummary::dropped_zero`] — never silently dropped;
//! * rows with `stable=false` (ρ ≥ 1) are drawn with hollow markers and a legend
//!   entry: their waits grow with the run length and are not steady-state values;
//! * empty cells are "no value" (the point is left out); non-numeric cells are errors.
//!
//! Text is rendered with DejaVu Sans embedded in the binary (`data/fonts/`) through
//! `ab_glyph`, so no system font library (fontconfig/freetype) is needed.  SVG text
//! names the font family `DejaVu Sans, Helvetica, Arial, sans-serif`.  PNG output is
//! rasterised at 2× the logical size (`width`×`height`) so that it stays sharp in print.
//! PDF output is vector, drawn by our own backend ([`pdf`]) with the same layout as
//! the SVG and the same font, embedded (subset) so that it prints as it looks.
//!
//! Where things are:
//! * this file: the public API and the overall flow (check the output name, load,
//!   size the figure, draw, write);
//! * [`inputs`]: reading the CSVs and combining them into one table (histograms joined
//!   to their results rows);
//! * [`load`]: validating the rows, grouping them into series and panels;
//! * [`paper`]: printed sizes (inches, cm, presets);
//! * [`keys`]: the `--by` / `--facet` columns and how their values are named;
//! * [`xaxis`]: the x column when `--x` is not given;
//! * [`labels`]: axis titles for CSV columns, policy and method names;
//! * [`ticks`]: axis scales, limits, tick choice and tick labels;
//! * [`render`]: figure size and layout (title, legend strip, panel grid);
//! * [`legend`] and [`panel`]: drawing the legend and one panel;
//! * [`markers`]: colours, marker shapes, error bars, ▼ markers of clamped zeros;
//! * [`style`]: the embedded font, greys, logical-to-device pixel scaling;
//! * [`output`]: SVG / PNG / PDF backends and files;
//! * [`pdf`]: the PDF drawing backend and document writer (with its font subset).

use std::path::Path;

mod format;
mod inputs;
mod keys;
mod labels;
mod legend;
mod lines;
mod load;
mod markers;
mod output;
mod panel;
mod paper;
mod pdf;
mod render;
mod style;
mod ticks;
mod xaxis;

#[cfg(test)]
mod tests;

use format::Format;
use load::load;
use output::write_figure;
use panel::DrawStats;
pub use paper::{parse_length, Length, PAPER_SIZES, PX_PER_INCH};
use render::figure_size;
use style::ensure_font;

/// Options of `qsweep plot`.  Use `PlotOptions { y: ..., ..Default::default() }`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Column on the x axis; empty (the default) chooses the axis that varies
    /// along a series (see the module docs).
    pub x: String,
    /// Columns on the y axes, one panel per column (default `mean_wait`, `p99_wait`).
    pub y: Vec<String>,
    /// One line (series) per distinct combination of these columns' values
    /// (default `routing`, which carries pod's `choices` and the `routers`
    /// count along).  Empty puts all rows of a panel in a single series.
    pub by: Vec<String>,
    /// One row of panels per distinct combination of these columns' values
    /// (empty: no facets).
    pub facet: Vec<String>,
    /// Let the facet rows of one y column share their y range (compare at a
    /// glance); by default each panel has its own, so that no panel is left
    /// nearly empty by another's range.
    pub shared_y: bool,
    /// Logarithmic x axis (all x values must then be > 0).
    pub log_x: bool,
    /// Logarithmic y axis; values ≤ 0 are clamped to the bottom edge (see module docs).
    pub log_y: bool,
    /// Also draw `analytic_<y>` (where such a column exists): exact baselines as
    /// thin solid lines, approximations (and baselines of unknown method) dashed.
    pub analytic: bool,
    /// Figure width in logical pixels (SVG px; PNG is rendered at 2×). 0 = automatic.
    pub width: u32,
    /// Figure height in logical pixels (SVG px; PNG is rendered at 2×). 0 = automatic.
    pub height: u32,
    /// Figure width in inches for print (`--width 3.5in`, `8.8cm`, `--size
    /// column`); 0 = none. A printed figure is laid out at
    /// [`PX_PER_INCH`] logical pixels per inch, so that its text comes out at
    /// 8–11 pt whatever its size; it overrides `width`.
    pub width_in: f64,
    /// Figure height in inches (0: from the width and the panel grid).
    pub height_in: f64,
    /// Figure title drawn above the panels (none by default).
    pub title: Option<String>,
    /// Unit of the time columns (waits, sojourn times) for the axis labels, e.g. `s`
    /// or `ms`.  The CSV carries no unit; `None` labels them "(time units)".
    pub time_unit: Option<String>,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            x: String::new(),
            y: vec!["mean_wait".to_string(), "p99_wait".to_string()],
            by: vec!["routing".to_string()],
            facet: vec![],
            shared_y: false,
            log_x: false,
            log_y: true,
            analytic: false,
            width: 0,
            height: 0,
            width_in: 0.0,
            height_in: 0.0,
            title: None,
            time_unit: None,
        }
    }
}

/// One line of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label: the `--by` value(s), readably named ("pod (d=2)"); analytic
    /// series get their method appended ("central (exact: Erlang C)"), or
    /// ` (analytic)` when the CSV has no `analytic_method` column.
    pub label: String,
    /// Name of the panel the series is drawn in: the y column, or
    /// `"<y> | <facet>=<value>"` when faceting (same names as in [`PlotSummary::y_ranges`]).
    pub panel: String,
    /// `(x, y, 95 % CI half-width)`, sorted by x.  Values ≤ 0 are kept as they are
    /// (on a log y axis they are drawn clamped and counted in `dropped_zero`).
    pub points: Vec<(f64, f64, Option<f64>)>,
    /// `true` for analytic baselines drawn dashed: approximations, and
    /// baselines whose method the CSV does not name.
    pub dashed: bool,
    /// Analytic baselines: the `analytic_method` cell of their rows
    /// (`exact:erlang_c`, `approx:allen_cunneen`, "" without that column);
    /// `None` for measured series.  One series per group and method.
    pub baseline: Option<String>,
}

/// What [`load_series`] / [`plot_csv`] found in the CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSummary {
    /// All series, panel by panel; within a panel measured series (in legend order)
    /// precede analytic ones.
    pub series: Vec<Series>,
    /// Smallest and largest x over all series (data values, not padded axis limits).
    pub x_range: (f64, f64),
    /// Per panel, in drawing order (row-major): `(panel name, min y, max y)` over the
    /// series' y values, measured and analytic, without CI and without padding
    /// (zeros included even on a log axis).  `(NaN, NaN)` for a panel without data.
    pub y_ranges: Vec<(String, f64, f64)>,
    /// The column on the x axis (`--x`, or the one chosen without it).
    pub x_column: String,
    /// x axis label as drawn, e.g. `servers`.
    pub x_label: String,
    /// y axis labels as drawn, one per `PlotOptions::y` entry, e.g. `mean wait (s)`.
    pub y_labels: Vec<String>,
    /// Number of points (measured and analytic) with y ≤ 0 on a log y axis; they are
    /// drawn as ▼ on the bottom edge instead of at their value.  Always 0 on a linear axis.
    pub dropped_zero: usize,
    /// Human-readable caveats worth printing (clamped zeros, unstable rows, missing
    /// analytic columns, repeated x values, cells without value ...).
    pub notes: Vec<String>,
}

/// Errors of `qsweep plot`; every message is one line naming the file (and column).
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The CSV could not be opened or read.
    #[error("{file}: {cause}")]
    Io { file: String, cause: std::io::Error },
    /// The figure could not be written (a full disk): nothing was, and an
    /// older figure under that name is as it was. Not bad input: exit 1.
    #[error("{file}: cannot write the figure: {cause} (nothing was written; an existing file is as it was)")]
    Write { file: String, cause: std::io::Error },
    /// The CSV is malformed (ragged rows, invalid UTF-8, ...).
    #[error("{file}: malformed CSV: {message}")]
    Csv { file: String, message: String },
    /// A requested column is not in the header.
    #[error("{file}: no column '{column}' (columns: {available}){hint}")]
    NoColumn {
        file: String,
        column: String,
        available: String,
        hint: String,
    },
    /// A cell that must be numeric is not.
    #[error("{file} line {line}: column '{column}' is not a number: '{value}'")]
    NotANumber {
        file: String,
        line: u64,
        column: String,
        value: String,
    },
    /// The data cannot be plotted as asked (no rows, no values, x ≤ 0 on a log axis ...).
    #[error("{file}: {message}")]
    Data { file: String, message: String },
    /// The output file name has an extension other than `.svg` / `.png` / `.pdf`.
    #[error("{file}: unsupported output format '{ext}' (use a .svg, .png or .pdf file name)")]
    UnsupportedFormat { file: String, ext: String },
    /// The drawing library failed.
    #[error("{file}: drawing failed: {message}")]
    Draw { file: String, message: String },
}

/// Parse `csv_path` and group it into series as [`plot_csv`] would draw them
/// (no drawing, no output file).
pub fn load_series(csv_path: &Path, opts: &PlotOptions) -> Result<PlotSummary, PlotError> {
    load_files(&[csv_path], opts)
}

/// [`load_series`] of several CSVs drawn in one figure: results CSVs (their
/// rows together, with a `file` column telling them apart) or histogram
/// CSVs of `qsweep run --hist` (each point's tail; see the module docs).
pub fn load_files(paths: &[&Path], opts: &PlotOptions) -> Result<PlotSummary, PlotError> {
    Ok(load(paths, opts)?.summary)
}

/// Parse `csv_path` and draw it to `out`; the format follows the extension of `out`
/// (`.svg`, `.png` or `.pdf`, case-insensitive).  Returns what [`load_series`] returns.
pub fn plot_csv(csv_path: &Path, out: &Path, opts: &PlotOptions) -> Result<PlotSummary, PlotError> {
    plot_files(&[csv_path], out, opts)
}

/// [`plot_csv`] of several CSVs in one figure (see [`load_files`]).
pub fn plot_files(
    paths: &[&Path],
    out: &Path,
    opts: &PlotOptions,
) -> Result<PlotSummary, PlotError> {
    Ok(plot_files_with_stats(paths, out, opts)?.0)
}

/// A PNG's pixels are held in memory (RGB, at `PNG_SCALE`× the logical
/// size) before encoding: refused (a one-line error, exit 2) beyond the
/// memory limit rather than aborting on the allocation. An SVG's size costs
/// nothing.
fn check_memory(out: &Path, format: Format, (w, h): (u32, u32)) -> Result<(), PlotError> {
    if format != Format::Png {
        return Ok(());
    }
    let s = output::PNG_SCALE;
    let (pw, ph) = ((f64::from(w) * s) as u64, (f64::from(h) * s) as u64);
    let bytes = pw.saturating_mul(ph).saturating_mul(3);
    let data = |message: String| PlotError::Data {
        file: out.display().to_string(),
        message,
    };
    let limit = qsweep_core::memory::limit().map_err(|e| data(e.0))?;
    if bytes <= limit.bytes {
        return Ok(());
    }
    let most = ((limit.bytes / 3) as f64).sqrt() / s;
    Err(data(
        qsweep_core::memory::refusal(
            "--width/--height",
            &format!("a {w}×{h} figure ({pw}×{ph} pixels as PNG)"),
            bytes,
            &format!("at most about {most:.0}×{most:.0} (or an .svg file)"),
            &limit,
        )
        .0,
    ))
}

/// [`plot_csv`], also returning the counts of what was drawn (for tests).
#[cfg(test)]
fn plot_with_stats(
    csv_path: &Path,
    out: &Path,
    opts: &PlotOptions,
) -> Result<(PlotSummary, DrawStats), PlotError> {
    plot_files_with_stats(&[csv_path], out, opts)
}

/// [`plot_files`], also returning the counts of what was drawn (for tests).
fn plot_files_with_stats(
    paths: &[&Path],
    out: &Path,
    opts: &PlotOptions,
) -> Result<(PlotSummary, DrawStats), PlotError> {
    let format = Format::of(out)?;
    let opts = &paper::default_for(format, opts);
    // A FIFO or device as the figure would block or be written through
    // (issue 25).
    qsweep_core::files::regular_output(out, "out").map_err(|e| PlotError::Data {
        file: out.display().to_string(),
        message: e.0,
    })?;
    let loaded = load(paths, opts)?;
    if !ensure_font() {
        return Err(PlotError::Draw {
            file: out.display().to_string(),
            message: "embedded font could not be loaded".to_string(),
        });
    }
    let opts = &loaded.opts;
    let size = figure_size(&loaded, opts);
    check_memory(out, format, size.px)?;
    let stats = write_figure(out, format, &loaded, opts, size)?;
    Ok((loaded.summary, stats))
}
