//! `qsweep plot`: turn a results CSV written by `qsweep run` into a chart (SVG or PNG).
//!
//! Why this module exists: a sweep produces one CSV row per grid point, and the
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
//! * dashed lines of the same colour = `analytic_<y>` (with `analytic = true`);
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

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Options of `qsweep plot`.  Use `PlotOptions { y: ..., ..Default::default() }`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Column on the x axis (default `servers`).
    pub x: String,
    /// Columns on the y axes, one panel per column (default `mean_wait`, `p99_wait`).
    pub y: Vec<String>,
    /// One line (series) per distinct value of this column (default `routing`).
    /// An empty string puts all rows of a panel in a single series.
    pub by: String,
    /// One row of panels per distinct value of this column.
    pub facet: Option<String>,
    /// Logarithmic x axis (all x values must then be > 0).
    pub log_x: bool,
    /// Logarithmic y axis; values ≤ 0 are clamped to the bottom edge (see module docs).
    pub log_y: bool,
    /// Also draw `analytic_<y>` (where such a column exists) as dashed lines.
    pub analytic: bool,
    /// Figure width in logical pixels (SVG px; PNG is rendered at 2×). 0 = automatic.
    pub width: u32,
    /// Figure height in logical pixels (SVG px; PNG is rendered at 2×). 0 = automatic.
    pub height: u32,
    /// Figure title drawn above the panels (none by default).
    pub title: Option<String>,
    /// Unit of the time columns (waits, sojourn times) for the axis labels, e.g. `s`
    /// or `ms`.  The CSV carries no unit; `None` labels them "(time units)".
    pub time_unit: Option<String>,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            x: "servers".to_string(),
            y: vec!["mean_wait".to_string(), "p99_wait".to_string()],
            by: "routing".to_string(),
            facet: None,
            log_x: false,
            log_y: true,
            analytic: false,
            width: 0,
            height: 0,
            title: None,
            time_unit: None,
        }
    }
}

/// One line of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label: the `--by` value; analytic series get the suffix ` (analytic)`.
    pub label: String,
    /// Name of the panel the series is drawn in: the y column, or
    /// `"<y> | <facet>=<value>"` when faceting (same names as in [`PlotSummary::y_ranges`]).
    pub panel: String,
    /// `(x, y, 95 % CI half-width)`, sorted by x.  Values ≤ 0 are kept as they are
    /// (on a log y axis they are drawn clamped and counted in `dropped_zero`).
    pub points: Vec<(f64, f64, Option<f64>)>,
    /// `true` for analytic baselines (drawn dashed, never with error bars).
    pub dashed: bool,
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
    /// The CSV could not be opened/read or the figure could not be written.
    #[error("{file}: {cause}")]
    Io { file: String, cause: std::io::Error },
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
    /// The output file name has an extension other than `.svg` / `.png`.
    #[error("{file}: unsupported output format '{ext}' (use a .svg or .png file name)")]
    UnsupportedFormat { file: String, ext: String },
    /// The drawing library failed.
    #[error("{file}: drawing failed: {message}")]
    Draw { file: String, message: String },
}

/// Parse `csv_path` and group it into series as [`plot_csv`] would draw them
/// (no drawing, no output file).
pub fn load_series(csv_path: &Path, opts: &PlotOptions) -> Result<PlotSummary, PlotError> {
    Ok(load(csv_path, opts)?.summary)
}

/// Parse `csv_path` and draw it to `out`; the format follows the extension of `out`
/// (`.svg` or `.png`, case-insensitive).  Returns what [`load_series`] returns.
pub fn plot_csv(csv_path: &Path, out: &Path, opts: &PlotOptions) -> Result<PlotSummary, PlotError> {
    Ok(plot_with_stats(csv_path, out, opts)?.0)
}

// ---------------------------------------------------------------------------------
// Loading and grouping
// ---------------------------------------------------------------------------------

/// A panel of the figure: one y column for one facet value.
#[derive(Debug, Clone)]
struct PanelInfo {
    name: String,
    title: Option<String>,
    y_index: usize,
}

/// Drawing-only facts about a series (parallel to `PlotSummary::series`).
#[derive(Debug, Clone)]
struct SeriesMeta {
    panel: usize,
    group: usize,
    /// Per point (parallel to `points`): `false` for rows with `stable=false`.
    stable: Vec<bool>,
}

#[derive(Debug)]
struct Loaded {
    summary: PlotSummary,
    panels: Vec<PanelInfo>,
    rows: usize,
    cols: usize,
    groups: Vec<String>,
    group_title: String,
    meta: Vec<SeriesMeta>,
}

struct Row {
    x: f64,
    group: usize,
    facet: usize,
    stable: bool,
    /// Per y: (value, ci, analytic)
    values: Vec<(Option<f64>, Option<f64>, Option<f64>)>,
}

fn load(csv_path: &Path, opts: &PlotOptions) -> Result<Loaded, PlotError> {
    let file = csv_path.display().to_string();
    let ys: Vec<String> = opts
        .y
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if ys.is_empty() {
        return Err(PlotError::Data {
            file,
            message: "no y column given".to_string(),
        });
    }
    let data = std::fs::read(csv_path).map_err(|e| PlotError::Io {
        file: file.clone(),
        cause: e,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(&data[..]);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(&file, &data, e))?
        .iter()
        .map(|h| h.to_string())
        .collect();
    let find = |name: &str| headers.iter().position(|h| h == name);
    let require = |name: &str| -> Result<usize, PlotError> {
        find(name).ok_or_else(|| no_column(&file, name, &headers))
    };

    let x_col = require(opts.x.trim())?;
    let by_col = if opts.by.trim().is_empty() {
        None
    } else {
        Some(require(opts.by.trim())?)
    };
    let facet_col = match &opts.facet {
        Some(f) if !f.trim().is_empty() => Some(require(f.trim())?),
        _ => None,
    };
    let mut notes = Vec::new();
    let mut y_cols = Vec::new();
    for y in &ys {
        let yc = require(y)?;
        let ci = find(&format!("{y}_ci95"));
        let an = if opts.analytic {
            let c = find(&format!("analytic_{y}"));
            if c.is_none() {
                notes.push(format!(
                    "no column 'analytic_{y}': no analytic curve for {y}"
                ));
            }
            c
        } else {
            None
        };
        y_cols.push((yc, ci, an));
    }
    let stable_col = find("stable");

    let mut rows: Vec<Row> = Vec::new();
    let mut records: Vec<csv::StringRecord> = Vec::new();
    let mut group_names: Vec<String> = Vec::new();
    let mut group_index: HashMap<String, usize> = HashMap::new();
    let mut facet_names: Vec<String> = Vec::new();
    let mut facet_index: HashMap<String, usize> = HashMap::new();
    let mut no_x = 0usize;
    let mut missing_y = vec![0usize; ys.len()];
    let mut non_finite = 0usize;

    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| csv_error(&file, &data, e))?;
        let line = rec
            .position()
            .map(|p| line_at(&data, p.byte()))
            .unwrap_or(i as u64 + 2);
        let cell = |c: usize| rec.get(c).unwrap_or("");
        let number = |c: usize| -> Result<Option<f64>, PlotError> {
            let s = cell(c);
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<f64>()
                .map(Some)
                .map_err(|_| PlotError::NotANumber {
                    file: file.clone(),
                    line,
                    column: headers[c].clone(),
                    value: s.to_string(),
                })
        };
        let x = match number(x_col)? {
            None => {
                no_x += 1;
                continue;
            }
            Some(x) if !x.is_finite() => {
                return Err(PlotError::NotANumber {
                    file,
                    line,
                    column: headers[x_col].clone(),
                    value: cell(x_col).to_string(),
                })
            }
            Some(x) => x,
        };
        if opts.log_x && x <= 0.0 {
            return Err(PlotError::Data {
                file,
                message: format!(
                    "line {line}: column '{}' is {x}, which has no place on a log x axis (plot without log x)",
                    headers[x_col]
                ),
            });
        }
        let intern = |names: &mut Vec<String>, index: &mut HashMap<String, usize>, v: &str| {
            *index.entry(v.to_string()).or_insert_with(|| {
                names.push(v.to_string());
                names.len() - 1
            })
        };
        let group = match by_col {
            Some(c) => intern(&mut group_names, &mut group_index, cell(c)),
            None => intern(&mut group_names, &mut group_index, ""),
        };
        let facet = match facet_col {
            Some(c) => intern(&mut facet_names, &mut facet_index, cell(c)),
            None => intern(&mut facet_names, &mut facet_index, ""),
        };
        let stable = stable_col.is_none_or(|c| {
            !matches!(
                cell(c).to_ascii_lowercase().as_str(),
                "false" | "0" | "no" | "f"
            )
        });
        let mut values = Vec::with_capacity(ys.len());
        for (k, &(yc, ci, an)) in y_cols.iter().enumerate() {
            let mut finite = |v: Option<f64>| match v {
                Some(v) if !v.is_finite() => {
                    non_finite += 1;
                    None
                }
                v => v,
            };
            let y = finite(number(yc)?);
            if y.is_none() {
                missing_y[k] += 1;
            }
            let ci = match ci {
                Some(c) => finite(number(c)?).map(f64::abs),
                None => None,
            };
            let an = match an {
                Some(c) => finite(number(c)?),
                None => None,
            };
            values.push((y, ci, an));
        }
        rows.push(Row {
            x,
            group,
            facet,
            stable,
            values,
        });
        records.push(rec);
    }
    if rows.is_empty() {
        return Err(PlotError::Data {
            file,
            message: if no_x > 0 {
                format!("no row has a value in column '{}'", opts.x)
            } else {
                "no data rows".to_string()
            },
        });
    }
    if no_x > 0 {
        notes.push(format!(
            "{no_x} row(s) without a value in '{}' left out",
            opts.x
        ));
    }
    for (k, y) in ys.iter().enumerate() {
        if missing_y[k] > 0 && missing_y[k] < rows.len() {
            notes.push(format!(
                "{} row(s) without a value in '{y}' left out of its panel",
                missing_y[k]
            ));
        }
    }
    if non_finite > 0 {
        notes.push(format!(
            "{non_finite} non-finite cell(s) (inf/NaN) treated as no value"
        ));
    }

    // Legend / facet order: numeric when every value is a number, else first appearance.
    let group_order = display_order(&group_names);
    let facet_order = display_order(&facet_names);
    let mut group_rank = vec![0usize; group_names.len()];
    for (rank, &g) in group_order.iter().enumerate() {
        group_rank[g] = rank;
    }
    let groups: Vec<String> = group_order
        .iter()
        .map(|&g| group_names[g].clone())
        .collect();

    let x_label = axis_label(&headers[x_col], opts.time_unit.as_deref());
    let y_labels: Vec<String> = ys
        .iter()
        .map(|y| axis_label(y, opts.time_unit.as_deref()))
        .collect();

    // Panels: facets (rows) x ys (columns).
    let mut panels = Vec::new();
    for &f in &facet_order {
        for (k, y) in ys.iter().enumerate() {
            let (name, title) = match facet_col {
                Some(c) => {
                    let v = &facet_names[f];
                    (
                        format!("{y} | {}={v}", headers[c]),
                        Some(format!("{} = {}", headers[c], display_value(v))),
                    )
                }
                None => (y.clone(), None),
            };
            panels.push((
                f,
                PanelInfo {
                    name,
                    title,
                    y_index: k,
                },
            ));
        }
    }
    let (n_rows, n_cols) = if facet_col.is_some() {
        (facet_order.len(), ys.len())
    } else {
        let cols = ys.len().min(3);
        (ys.len().div_ceil(cols), cols)
    };

    let mut series = Vec::new();
    let mut meta = Vec::new();
    let mut dropped_zero = 0usize;
    let mut unstable_points = 0usize;
    let mut y_ranges = Vec::new();
    let mut duplicated = 0usize;
    for (p, (f, info)) in panels.iter().enumerate() {
        let k = info.y_index;
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for analytic in [false, true] {
            if analytic && y_cols[k].2.is_none() {
                continue;
            }
            for (rank, &g) in group_order.iter().enumerate() {
                let mut pts: Vec<(f64, f64, Option<f64>, bool)> = rows
                    .iter()
                    .filter(|r| r.facet == *f && r.group == g)
                    .filter_map(|r| {
                        let (y, ci, an) = r.values[k];
                        if analytic {
                            an.map(|a| (r.x, a, None, true))
                        } else {
                            y.map(|y| (r.x, y, ci, r.stable))
                        }
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                if !analytic {
                    duplicated += pts.windows(2).filter(|w| w[0].0 == w[1].0).count();
                    unstable_points += pts.iter().filter(|p| !p.3).count();
                }
                for pt in &pts {
                    lo = lo.min(pt.1);
                    hi = hi.max(pt.1);
                    if opts.log_y && pt.1 <= 0.0 {
                        dropped_zero += 1;
                    }
                }
                let base = if by_col.is_some() {
                    display_value(&groups[rank])
                } else {
                    y_labels[k].clone()
                };
                series.push(Series {
                    label: if analytic {
                        format!("{base} (analytic)")
                    } else {
                        base
                    },
                    panel: info.name.clone(),
                    points: pts.iter().map(|p| (p.0, p.1, p.2)).collect(),
                    dashed: analytic,
                });
                meta.push(SeriesMeta {
                    panel: p,
                    group: rank,
                    stable: pts.iter().map(|p| p.3).collect(),
                });
            }
        }
        if lo > hi {
            notes.push(format!("panel '{}' has no data", info.name));
            lo = f64::NAN;
            hi = f64::NAN;
        }
        y_ranges.push((info.name.clone(), lo, hi));
    }
    if series.is_empty() {
        return Err(PlotError::Data {
            file,
            message: format!("no values to plot in column(s) {}", ys.join(", ")),
        });
    }
    let panels: Vec<PanelInfo> = panels.into_iter().map(|(_, p)| p).collect();

    if dropped_zero > 0 {
        notes.push(format!(
            "{dropped_zero} point(s) with y = 0 cannot be placed on the log y axis: drawn as ▼ on the bottom edge of their panel"
        ));
    }
    if unstable_points > 0 {
        notes.push(format!(
            "{unstable_points} point(s) from rows with stable=false (ρ ≥ 1) drawn with hollow markers: their waits grow with the run length"
        ));
    }
    if duplicated > 0 {
        let differing = differing_columns(&rows, &records, &headers, &[x_col], by_col, facet_col);
        let what = if differing.is_empty() {
            String::new()
        } else {
            format!(" (rows differ in: {})", differing.join(", "))
        };
        notes.push(format!(
            "{duplicated} repeated x value(s) within a series{what}: use --by or --facet to separate them"
        ));
    }

    let (mut xmin, mut xmax) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in &series {
        for p in &s.points {
            xmin = xmin.min(p.0);
            xmax = xmax.max(p.0);
        }
    }
    let group_title = by_col.map(|c| headers[c].clone()).unwrap_or_default();

    Ok(Loaded {
        summary: PlotSummary {
            series,
            x_range: (xmin, xmax),
            y_ranges,
            x_label,
            y_labels,
            dropped_zero,
            notes,
        },
        panels,
        rows: n_rows,
        cols: n_cols,
        groups: if by_col.is_some() {
            groups.iter().map(|g| display_value(g)).collect()
        } else {
            vec![]
        },
        group_title,
        meta,
    })
}

fn csv_error(file: &str, data: &[u8], e: csv::Error) -> PlotError {
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos: Some(pos),
            expected_len,
            len,
        } => format!(
            "line {}: {len} field(s) where the header has {expected_len}",
            line_at(data, pos.byte())
        ),
        csv::ErrorKind::Utf8 { pos: Some(pos), .. } => {
            format!("line {}: invalid UTF-8", line_at(data, pos.byte()))
        }
        _ => e.to_string(),
    };
    PlotError::Csv {
        file: file.to_string(),
        message,
    }
}

/// 1-based line number of the record starting at `byte` (the csv crate's own line
/// count is one short for CRLF files).
fn line_at(data: &[u8], byte: u64) -> u64 {
    let mut b = (byte as usize).min(data.len());
    while b < data.len() && (data[b] == b'\r' || data[b] == b'\n') {
        b += 1;
    }
    1 + data[..b].iter().filter(|&&c| c == b'\n').count() as u64
}

fn no_column(file: &str, name: &str, headers: &[String]) -> PlotError {
    let best = headers
        .iter()
        .map(|h| (edit_distance(name, h), h))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, h)| *d <= 2.max(h.len() / 4));
    PlotError::NoColumn {
        file: file.to_string(),
        column: name.to_string(),
        available: headers.join(", "),
        hint: best
            .map(|(_, h)| format!("; did you mean '{h}'?"))
            .unwrap_or_default(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Indices of `names` in display order: numeric order when all parse as numbers,
/// else order of first appearance.
fn display_order(names: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    let nums: Option<Vec<f64>> = names.iter().map(|n| n.parse::<f64>().ok()).collect();
    if let Some(nums) = nums {
        order.sort_by(|&a, &b| nums[a].total_cmp(&nums[b]));
    }
    order
}

fn display_value(v: &str) -> String {
    if v.is_empty() {
        "(empty)".to_string()
    } else {
        v.to_string()
    }
}

/// Output columns never explain why two rows share an x (they are results).
fn is_result_column(name: &str) -> bool {
    matches!(
        name,
        "point" | "stable" | "backend" | "seconds" | "customers_per_s" | "p_wait"
    ) || name.ends_with("_ci95")
        || name.starts_with("analytic_")
        || name.starts_with("rel_err_")
        || name.ends_with("_wait")
        || name.ends_with("_sojourn")
}

/// Input columns whose values differ between rows that share (facet, group, x).
fn differing_columns(
    rows: &[Row],
    records: &[csv::StringRecord],
    headers: &[String],
    skip: &[usize],
    by_col: Option<usize>,
    facet_col: Option<usize>,
) -> Vec<String> {
    let mut first: HashMap<(usize, usize, u64), usize> = HashMap::new();
    let mut differ = vec![false; headers.len()];
    for (i, r) in rows.iter().enumerate() {
        let key = (r.facet, r.group, r.x.to_bits());
        match first.get(&key) {
            None => {
                first.insert(key, i);
            }
            Some(&j) => {
                for (c, d) in differ.iter_mut().enumerate() {
                    if records[i].get(c) != records[j].get(c) {
                        *d = true;
                    }
                }
            }
        }
    }
    headers
        .iter()
        .enumerate()
        .filter(|(c, h)| {
            differ[*c]
                && !skip.contains(c)
                && Some(*c) != by_col
                && Some(*c) != facet_col
                && !is_result_column(h)
        })
        .map(|(_, h)| h.clone())
        .collect()
}

/// Human axis label for a CSV column, with the unit where one is known.
fn axis_label(col: &str, time_unit: Option<&str>) -> String {
    let tu = time_unit.unwrap_or("time units");
    let time = |what: &str| format!("{what} ({tu})");
    match col {
        "servers" => "servers".to_string(),
        "workers" => "workers per server".to_string(),
        "lambda" => match time_unit {
            Some(u) => format!("arrival rate λ (1/{u})"),
            None => "arrival rate λ (per time unit)".to_string(),
        },
        "rho" => "utilisation ρ".to_string(),
        "service_mean" => time("mean service time"),
        "service_scv" => "service-time SCV c²".to_string(),
        "choices" => "choices d".to_string(),
        "routers" => "routers".to_string(),
        "reps" => "replications".to_string(),
        "customers" => "customers per replication".to_string(),
        "mean_wait" => time("mean wait"),
        "p50_wait" => time("median wait"),
        "p999_wait" => time("p99.9 wait"),
        "max_wait" => time("max wait"),
        "p_wait" => "P(wait > 0)".to_string(),
        "mean_sojourn" => time("mean sojourn time"),
        "p99_sojourn" => time("p99 sojourn time"),
        "seconds" => "wall-clock time (s)".to_string(),
        "customers_per_s" => "throughput (customers/s)".to_string(),
        "analytic_mean_wait" => time("analytic mean wait"),
        "analytic_p99_wait" => time("analytic p99 wait"),
        "rel_err_mean_wait" => "relative error of mean wait".to_string(),
        c => {
            if let Some(stem) = c.strip_suffix("_wait") {
                if let Some(q) = stem.strip_prefix('p') {
                    if q.chars().all(|ch| ch.is_ascii_digit()) {
                        return time(&format!("p{q} wait"));
                    }
                }
                time(&c.replace('_', " "))
            } else if c.ends_with("_sojourn") {
                time(&c.replace('_', " "))
            } else {
                c.to_string()
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Axis scaling and ticks
// ---------------------------------------------------------------------------------

/// Axis mapping: data value -> drawing coordinate (log10 for log axes).
#[derive(Clone, Copy, Debug)]
struct Scale {
    log: bool,
}

impl Scale {
    fn fwd(self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }
}

/// Ticks of one axis, in drawing coordinates, with their labels.
#[derive(Debug, Clone, PartialEq)]
struct Ticks {
    major: Vec<(f64, String)>,
    minor: Vec<f64>,
}

const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

fn superscript(e: i32) -> String {
    let mut s = String::new();
    if e < 0 {
        s.push('⁻');
    }
    for d in e.unsigned_abs().to_string().bytes() {
        s.push(SUPERSCRIPT[(d - b'0') as usize]);
    }
    s
}

/// Label for a tick value `v`, knowing the tick spacing `step` (for decimals).
fn format_tick(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-4..1e6).contains(&a) {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        let m_str = trim_decimals(&format!("{m:.2}"));
        return if m_str == "1" {
            format!("10{}", superscript(e))
        } else if m_str == "-1" {
            format!("−10{}", superscript(e))
        } else {
            format!("{}×10{}", m_str.replace('-', "−"), superscript(e))
        };
    }
    let mut d = 0usize;
    while d < 10 {
        let scaled = step.abs() * 10f64.powi(d as i32);
        if (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0) {
            break;
        }
        d += 1;
    }
    format!("{v:.d$}").replace('-', "−")
}

fn trim_decimals(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// Nice linear ticks (1, 2, 2.5, 5 × 10^k steps) in `[lo, hi]`, about `target` of them.
fn linear_ticks(lo: f64, hi: f64, target: usize, integer: bool) -> Ticks {
    let raw = (hi - lo) / target.max(1) as f64;
    let e = raw.log10().floor();
    let f = raw / 10f64.powf(e);
    // Nearest nice mantissa (the tick count may end up a little above `target`).
    let m = if f < 1.5 {
        1.0
    } else if f < 2.25 {
        2.0
    } else if f < 3.5 && !(integer && e == 0.0) {
        2.5
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    };
    let mut step = m * 10f64.powf(e);
    if integer {
        step = step.max(1.0);
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let major = (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            (v, format_tick(v, step))
        })
        .collect();
    Ticks {
        major,
        minor: vec![],
    }
}

/// Ticks for a log10 axis spanning `[lo, hi]` (log10 units): decades (every n-th
/// when there are many), else 1-2-5, else 1..9 per decade, else nice linear ticks;
/// light grid lines at the remaining 1..9 × 10^k (or skipped decades).
fn log_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let target = target.max(2);
    let kmin = lo.floor() as i32;
    let kmax = hi.ceil() as i32;
    let inside = |t: f64| t >= lo - 1e-9 && t <= hi + 1e-9;
    // (position, mantissa, exponent)
    let set = |mults: &[u32], every: i32| -> Vec<(f64, u32, i32)> {
        let mut out = Vec::new();
        for k in kmin..=kmax {
            if k.rem_euclid(every) != 0 {
                continue;
            }
            for &m in mults {
                let t = f64::from(m).log10() + k as f64;
                if inside(t) {
                    out.push((t, m, k));
                }
            }
        }
        out
    };
    let decades = set(&[1], 1);
    let mut every = 1;
    let mut major = decades.clone();
    if decades.len() > target {
        every = (decades.len() as f64 / target as f64).ceil() as i32;
        major = set(&[1], every);
    }
    if major.len() < 3 {
        let s125 = set(&[1, 2, 5], 1);
        if s125.len() <= target && s125.len() > major.len() {
            major = s125;
        }
    }
    if major.len() < 2 {
        let all = set(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1);
        if all.len() >= 2 && all.len() <= target.max(4) {
            major = all;
        } else {
            // Very narrow range: plain nice ticks in data space.
            let lin = linear_ticks(10f64.powf(lo), 10f64.powf(hi), target.min(4), false);
            let major: Vec<(f64, String)> = lin
                .major
                .into_iter()
                .filter(|(v, _)| *v > 0.0)
                .map(|(v, l)| (v.log10(), l))
                .collect();
            return Ticks {
                major,
                minor: vec![],
            };
        }
    }
    let is_major = |t: f64| major.iter().any(|(mt, _, _)| (mt - t).abs() < 1e-9);
    let mut minor = Vec::new();
    if every > 1 {
        minor = decades
            .iter()
            .map(|d| d.0)
            .filter(|&t| !is_major(t))
            .collect();
    } else if hi - lo <= 8.0 {
        minor = set(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1)
            .into_iter()
            .map(|d| d.0)
            .filter(|&t| !is_major(t))
            .collect();
    }
    // One notation for the whole axis: decimals when all ticks are short, else powers of 10.
    let plain = major.iter().all(|&(_, _, k)| (-4..=5).contains(&k));
    let major = major
        .into_iter()
        .map(|(t, m, k)| (t, log_label(m, k, plain)))
        .collect();
    Ticks { major, minor }
}

fn log_label(m: u32, k: i32, plain: bool) -> String {
    if plain {
        let v = f64::from(m) * 10f64.powi(k);
        format!("{v:.d$}", d = (-k).max(0) as usize)
    } else if m == 1 {
        format!("10{}", superscript(k))
    } else {
        format!("{m}×10{}", superscript(k))
    }
}

/// Axis limits (drawing coordinates) around data values `vals` (values ≤ 0 are
/// ignored on log axes), padded; `anchor_zero` starts a linear axis at 0 when all
/// data are ≥ 0.
fn axis_limits(vals: &[f64], scale: Scale, anchor_zero: bool) -> (f64, f64) {
    let t: Vec<f64> = vals
        .iter()
        .filter(|v| v.is_finite() && (!scale.log || **v > 0.0))
        .map(|&v| scale.fwd(v))
        .collect();
    if t.is_empty() {
        return if scale.log { (-1.0, 1.0) } else { (0.0, 1.0) };
    }
    let mut lo = t.iter().cloned().fold(f64::INFINITY, f64::min);
    let mut hi = t.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if scale.log {
        let min_span = 0.3;
        if hi - lo < min_span {
            let mid = (hi + lo) / 2.0;
            lo = mid - min_span / 2.0;
            hi = mid + min_span / 2.0;
        }
        let span = hi - lo;
        (lo - 0.06 * span, hi + 0.06 * span)
    } else {
        if anchor_zero && lo >= 0.0 {
            lo = 0.0;
        }
        if hi - lo <= 0.0 {
            let d = if hi.abs() > 0.0 { hi.abs() * 0.1 } else { 1.0 };
            lo -= d;
            hi += d;
        }
        let span = hi - lo;
        let lo = if anchor_zero && lo == 0.0 {
            0.0
        } else {
            lo - 0.05 * span
        };
        (lo, hi + 0.05 * span)
    }
}

// ---------------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------------

const FONT_FAMILY: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../data/fonts/DejaVuSans.ttf");

fn ensure_font() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES).is_ok()
    })
}

/// Okabe–Ito colour-blind-safe palette (yellow replaced by wine, readable on white).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(136, 34, 85),
];
/// Marker "radius" in logical pixels.
const MARKER_R: f64 = 4.2;
const META_GREY: RGBColor = RGBColor(80, 80, 80);
const TEXT: RGBColor = RGBColor(20, 20, 20);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
    Plus,
    Pentagon,
    /// Reserved for values clamped to the bottom of a log axis.
    Down,
}

const SHAPES: [Shape; 7] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
    Shape::Cross,
    Shape::Plus,
    Shape::Pentagon,
];

fn group_color(g: usize) -> RGBColor {
    PALETTE[g % PALETTE.len()]
}

fn group_shape(g: usize) -> Shape {
    // Shapes advance with colours but on a different cycle length so that
    // (colour, shape) pairs stay unique for 56 groups.
    SHAPES[(g + g / PALETTE.len()) % SHAPES.len()]
}

/// Counts of what was drawn; used by tests to check error bars / clamped markers.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct DrawStats {
    ci_bars: usize,
    markers: usize,
    hollow_markers: usize,
    clamped_markers: usize,
    dashed_segments: usize,
}

/// Geometry in logical pixels, multiplied by `s` when drawing.
struct Geom {
    s: f64,
}

impl Geom {
    fn px(&self, v: f64) -> i32 {
        (v * self.s).round() as i32
    }
    fn w(&self, v: f64) -> u32 {
        ((v * self.s).round() as u32).max(1)
    }
    fn font(&self, size: f64) -> TextStyle<'static> {
        TextStyle::from((FONT_FAMILY, size * self.s).into_font()).color(&TEXT)
    }
}

fn text_size<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> (i32, i32) {
    area.estimate_text_size(text, style)
        .map(|(w, h)| (w as i32, h as i32))
        .unwrap_or((text.chars().count() as i32 * 8, 14))
}

fn plot_with_stats(
    csv_path: &Path,
    out: &Path,
    opts: &PlotOptions,
) -> Result<(PlotSummary, DrawStats), PlotError> {
    let out_file = out.display().to_string();
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    if ext != "svg" && ext != "png" {
        return Err(PlotError::UnsupportedFormat {
            file: out_file,
            ext: if ext.is_empty() {
                "(none)".to_string()
            } else {
                format!(".{ext}")
            },
        });
    }
    let loaded = load(csv_path, opts)?;
    if !ensure_font() {
        return Err(PlotError::Draw {
            file: out_file,
            message: "embedded font could not be loaded".to_string(),
        });
    }
    let (w, h) = figure_size(&loaded, opts);
    let draw_err = |e: String| PlotError::Draw {
        file: out_file.clone(),
        message: e,
    };
    let stats;
    if ext == "svg" {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
            stats = render(&root, &loaded, opts, &Geom { s: 1.0 })
                .map_err(|e| draw_err(e.to_string()))?;
            root.present().map_err(|e| draw_err(e.to_string()))?;
        }
        std::fs::write(out, svg).map_err(|e| PlotError::Io {
            file: out_file.clone(),
            cause: e,
        })?;
    } else {
        let s = 2.0;
        let (pw, ph) = ((w as f64 * s) as u32, (h as f64 * s) as u32);
        let mut buf = vec![0u8; pw as usize * ph as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (pw, ph)).into_drawing_area();
            stats =
                render(&root, &loaded, opts, &Geom { s }).map_err(|e| draw_err(e.to_string()))?;
            root.present().map_err(|e| draw_err(e.to_string()))?;
        }
        write_png(out, &buf, pw, ph, s).map_err(|e| match e {
            png::EncodingError::IoError(io) => PlotError::Io {
                file: out_file.clone(),
                cause: io,
            },
            other => draw_err(other.to_string()),
        })?;
    }
    Ok((loaded.summary, stats))
}

fn write_png(
    path: &Path,
    rgb: &[u8],
    w: u32,
    h: u32,
    scale: f64,
) -> Result<(), png::EncodingError> {
    let file = std::fs::File::create(path)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // 96 dpi × scale, so that the physical size matches the logical (SVG) size.
    let ppm = (96.0 * scale / 0.0254).round() as u32;
    enc.set_pixel_dims(Some(png::PixelDimensions {
        xppu: ppm,
        yppu: ppm,
        unit: png::Unit::Meter,
    }));
    let mut writer = enc.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

const PANEL_W: u32 = 470;
const PANEL_H: u32 = 360;

fn figure_size(l: &Loaded, opts: &PlotOptions) -> (u32, u32) {
    let w = if opts.width > 0 {
        opts.width
    } else {
        (l.cols as u32 * PANEL_W + 20).max(560)
    };
    let h = if opts.height > 0 {
        opts.height
    } else {
        let legend = 34 + 26 * (legend_len(l) as u32 * 150 / w.max(1));
        let title = if opts.title.is_some() { 36 } else { 0 };
        l.rows as u32 * PANEL_H + legend + title + 10
    };
    (w.max(200), h.max(150))
}

fn legend_len(l: &Loaded) -> usize {
    l.groups.len() + 4
}

enum LegendKind {
    Group(usize),
    Analytic,
    Ci,
    Zero,
    Unstable,
}

fn render<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    l: &Loaded,
    opts: &PlotOptions,
    g: &Geom,
) -> Result<DrawStats, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let mut stats = DrawStats::default();
    let (w, _h) = root.dim_in_pixel();
    let mut area = root.margin(g.px(6.0), g.px(4.0), g.px(6.0), g.px(6.0));

    if let Some(t) = &opts.title {
        let style = g.font(21.0).pos(Pos::new(HPos::Center, VPos::Top));
        let (_, th) = text_size(root, t, &style);
        area.draw_text(t, &style, ((w as i32) / 2 - g.px(6.0), g.px(4.0)))?;
        area = area.split_vertically(th + g.px(14.0)).1;
    }

    // ---- legend (bottom strip, shared by all panels) ----
    let any_ci = l
        .summary
        .series
        .iter()
        .any(|s| s.points.iter().any(|p| p.2.is_some()));
    let any_analytic = l.summary.series.iter().any(|s| s.dashed);
    let any_unstable = l.meta.iter().any(|m| m.stable.iter().any(|s| !s));
    let mut entries: Vec<(LegendKind, String)> = Vec::new();
    for (i, name) in l.groups.iter().enumerate() {
        entries.push((LegendKind::Group(i), name.clone()));
    }
    if any_analytic {
        entries.push((LegendKind::Analytic, "analytic".to_string()));
    }
    if any_ci {
        entries.push((LegendKind::Ci, "95% CI".to_string()));
    }
    if l.summary.dropped_zero > 0 {
        entries.push((LegendKind::Zero, "y = 0 (off log axis)".to_string()));
    }
    if any_unstable {
        entries.push((LegendKind::Unstable, "unstable (ρ ≥ 1)".to_string()));
    }
    let legend_font = g.font(16.0);
    let title_text = if l.group_title.is_empty() {
        String::new()
    } else {
        format!("{}:", l.group_title)
    };
    let sample_w = g.px(30.0);
    let gap = g.px(7.0);
    let spacing = g.px(20.0);
    let avail = area.dim_in_pixel().0 as i32 - g.px(10.0);
    // Lay out entries into rows.
    let mut rows_layout: Vec<Vec<(usize, i32)>> = vec![vec![]];
    let mut row_w = vec![0i32];
    let title_w = if title_text.is_empty() {
        0
    } else {
        text_size(root, &title_text, &legend_font).0 + gap * 2
    };
    row_w[0] = title_w;
    for (i, (_, label)) in entries.iter().enumerate() {
        let ew = sample_w + gap + text_size(root, label, &legend_font).0;
        let cur = row_w.len() - 1;
        let need = if rows_layout[cur].is_empty() {
            ew
        } else {
            ew + spacing
        };
        if row_w[cur] + need > avail && !rows_layout[cur].is_empty() {
            rows_layout.push(vec![(i, ew)]);
            row_w.push(ew);
        } else {
            rows_layout[cur].push((i, ew));
            row_w[cur] += need;
        }
    }
    let row_h = g.px(26.0);
    let legend_h = if entries.is_empty() {
        0
    } else {
        row_h * rows_layout.len() as i32 + g.px(10.0)
    };
    let area_h = area.dim_in_pixel().1 as i32;
    let (panels_area, legend_area) = area.split_vertically(area_h - legend_h);
    {
        let (lw, _) = legend_area.dim_in_pixel();
        for (r, row) in rows_layout.iter().enumerate() {
            let mut x = (lw as i32 - row_w[r]) / 2;
            let cy = g.px(8.0) + row_h * r as i32 + row_h / 2;
            if r == 0 && !title_text.is_empty() && !entries.is_empty() {
                legend_area.draw_text(
                    &title_text,
                    &legend_font.pos(Pos::new(HPos::Left, VPos::Center)),
                    (x, cy),
                )?;
                x += title_w;
            }
            for (k, &(i, ew)) in row.iter().enumerate() {
                if k > 0 {
                    x += spacing;
                }
                let (kind, label) = &entries[i];
                let (ox, oy) = (
                    legend_area.get_base_pixel().0,
                    legend_area.get_base_pixel().1,
                );
                let (sx0, sx1, sy) = (ox + x, ox + x + sample_w, oy + cy);
                let mid = (sx0 + sx1) / 2;
                match kind {
                    LegendKind::Group(gi) => {
                        let c = group_color(*gi);
                        root.draw(&PathElement::new(
                            vec![(sx0, sy), (sx1, sy)],
                            c.stroke_width(g.w(2.0)),
                        ))?;
                        draw_marker(root, g, (mid, sy), group_shape(*gi), c, true)?;
                    }
                    LegendKind::Analytic => {
                        root.draw(&DashedPathElement::new(
                            vec![(sx0, sy), (sx1, sy)],
                            g.px(6.0),
                            g.px(4.0),
                            META_GREY.stroke_width(g.w(2.0)),
                        ))?;
                    }
                    LegendKind::Ci => {
                        draw_error_bar(
                            root,
                            g,
                            mid,
                            sy - g.px(8.0),
                            sy + g.px(8.0),
                            META_GREY,
                            true,
                            true,
                        )?;
                        draw_marker(root, g, (mid, sy), Shape::Circle, META_GREY, true)?;
                    }
                    LegendKind::Zero => {
                        draw_marker(root, g, (mid, sy + g.px(5.0)), Shape::Down, META_GREY, true)?;
                        root.draw(&PathElement::new(
                            vec![
                                (sx0 + g.px(4.0), sy + g.px(6.0)),
                                (sx1 - g.px(4.0), sy + g.px(6.0)),
                            ],
                            META_GREY.stroke_width(g.w(1.0)),
                        ))?;
                    }
                    LegendKind::Unstable => {
                        draw_marker(root, g, (mid, sy), Shape::Circle, META_GREY, false)?;
                    }
                }
                legend_area.draw_text(
                    label,
                    &legend_font.pos(Pos::new(HPos::Left, VPos::Center)),
                    (x + sample_w + gap, cy),
                )?;
                x += ew;
            }
        }
    }

    // ---- panels ----
    let cells = panels_area.split_evenly((l.rows, l.cols));
    let xscale = Scale { log: opts.log_x };
    let yscale = Scale { log: opts.log_y };
    // Shared x limits across panels (same x column everywhere).
    let xs: Vec<f64> = l
        .summary
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let (x0, x1) = {
        // Data range plus 4 % on both sides so that end markers are not cut.
        let (a, b) = (
            xscale.fwd(l.summary.x_range.0),
            xscale.fwd(l.summary.x_range.1),
        );
        if b > a {
            (a - 0.04 * (b - a), b + 0.04 * (b - a))
        } else {
            let half = if xscale.log {
                0.15
            } else {
                (a.abs() * 0.1).max(0.5)
            };
            (a - half, a + half)
        }
    };
    let mut distinct_x: Vec<f64> = xs.clone();
    distinct_x.sort_by(f64::total_cmp);
    distinct_x.dedup();
    let x_integer = xs.iter().all(|x| x.fract() == 0.0);

    let tick_font = g.font(15.0);
    let desc_font = g.font(17.0);
    let caption_font = g.font(17.0);

    for (p, info) in l.panels.iter().enumerate() {
        let Some(cell) = cells.get(p) else { break };
        let (cw, chh) = cell.dim_in_pixel();
        let members: Vec<usize> = (0..l.summary.series.len())
            .filter(|&i| l.meta[i].panel == p)
            .collect();

        // y limits from values, CI ends and analytic values
        let mut yvals = Vec::new();
        let mut clamped_here = false;
        // On a log axis, analytic values far below every simulated one (an
        // Erlang C wait of 1e-60 s, say) would squash the data into a line:
        // they are left off the limits (and clipped by the frame).
        let simulated_min = members
            .iter()
            .filter(|&&i| !l.summary.series[i].dashed)
            .flat_map(|&i| l.summary.series[i].points.iter().map(|p| p.1))
            .filter(|&y| y > 0.0)
            .fold(f64::INFINITY, f64::min);
        for &i in &members {
            if yscale.log && l.summary.series[i].dashed && simulated_min.is_finite() {
                for &(_, y, _) in &l.summary.series[i].points {
                    if y >= simulated_min / 100.0 {
                        yvals.push(y);
                    }
                }
                continue;
            }
            for &(_, y, ci) in &l.summary.series[i].points {
                if yscale.log && y <= 0.0 {
                    clamped_here = true;
                }
                yvals.push(y);
                if let Some(c) = ci {
                    yvals.push(y + c);
                    if !yscale.log || y - c > 0.0 {
                        yvals.push(y - c);
                    }
                }
            }
        }
        let (mut y0, y1) = axis_limits(&yvals, yscale, true);
        let data_lo = y0;

        // Tick density from the available pixels.
        let caption_h = if info.title.is_some() {
            g.px(30.0)
        } else {
            g.px(12.0)
        };
        let tick_len = g.px(5.0);
        let label_dist = tick_len * 2;
        let (_, desc_h) = text_size(root, "Mg", &desc_font);
        let (_, tick_h) = text_size(root, "0123456789", &tick_font);
        let x_area = label_dist + tick_h + g.px(8.0) + desc_h + g.px(4.0);
        let plot_h = chh as i32 - caption_h - x_area - g.px(6.0);
        let y_target = ((plot_h as f64 / (g.s * 48.0)).floor() as usize).clamp(3, 9);
        let mut y_ticks = if yscale.log {
            log_ticks(y0, y1, y_target)
        } else {
            linear_ticks(y0, y1, y_target, false)
        };
        // Log axis with zeros: a band below the data, its bottom edge labelled 0 and
        // separated by axis-break marks, holds the ▼ markers of the zero values.
        let zero_band = yscale.log && clamped_here;
        if zero_band {
            let band_px = 24.0 * g.s;
            y0 -= (y1 - y0) * band_px / (plot_h as f64 - band_px).max(1.0);
            y_ticks.major.insert(0, (y0, "0".to_string()));
        }
        let y_label_w = y_ticks
            .major
            .iter()
            .map(|(_, t)| text_size(root, t, &tick_font).0)
            .max()
            .unwrap_or(0);
        let y_area = label_dist + y_label_w + g.px(10.0) + desc_h + g.px(4.0);
        let right_margin = g.px(16.0);
        let plot_w = cw as i32 - y_area - right_margin - g.px(8.0);
        let x_ticks = choose_x_ticks(
            root,
            &tick_font,
            xscale,
            (x0, x1),
            &distinct_x,
            x_integer,
            plot_w,
            g,
        );

        let y_label = &l.summary.y_labels[info.y_index];
        let mut builder = ChartBuilder::on(cell);
        builder
            .margin_left(g.px(8.0))
            .margin_right(right_margin)
            .margin_top(caption_h)
            .margin_bottom(g.px(6.0))
            .x_label_area_size(x_area)
            .y_label_area_size(y_area);
        let mut chart = builder.build_cartesian_2d(
            TickedAxis::new(x0, x1, &x_ticks),
            TickedAxis::new(y0, y1, &y_ticks),
        )?;
        let xfmt = |v: &f64| lookup_label(&x_ticks, *v);
        let yfmt = |v: &f64| lookup_label(&y_ticks, *v);
        chart
            .configure_mesh()
            .x_desc(l.summary.x_label.clone())
            .y_desc(y_label.clone())
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .label_style(tick_font.clone())
            .axis_desc_style(desc_font.clone())
            .bold_line_style(RGBColor(225, 225, 225).stroke_width(g.w(1.0)))
            .light_line_style(RGBColor(243, 243, 243).stroke_width(g.w(1.0)))
            .axis_style(RGBColor(40, 40, 40).stroke_width(g.w(1.0)))
            .set_all_tick_mark_size(tick_len)
            .draw()?;
        let (prx, pry) = chart.plotting_area().get_pixel_range();
        if let Some(t) = &info.title {
            // Centred over the plotting area (not the whole cell with its label area).
            root.draw_text(
                t,
                &caption_font.pos(Pos::new(HPos::Center, VPos::Bottom)),
                ((prx.start + prx.end) / 2, pry.start - g.px(7.0)),
            )?;
        }
        // Frame around the plotting area.
        root.draw(&PathElement::new(
            vec![
                (prx.start, pry.start),
                (prx.end - 1, pry.start),
                (prx.end - 1, pry.end - 1),
                (prx.start, pry.end - 1),
                (prx.start, pry.start),
            ],
            RGBColor(40, 40, 40).stroke_width(g.w(1.0)),
        ))?;
        if zero_band {
            let yb = chart.backend_coord(&(x0, data_lo)).1 + g.px(6.0);
            for x in [prx.start, prx.end - 1] {
                draw_axis_break(root, g, x, yb)?;
            }
        }
        if members.is_empty() {
            root.draw_text(
                "no data",
                &g.font(16.0)
                    .color(&META_GREY)
                    .pos(Pos::new(HPos::Center, VPos::Center)),
                ((prx.start + prx.end) / 2, (pry.start + pry.end) / 2),
            )?;
            continue;
        }
        let bottom = pry.end - 1 - g.px(1.0);
        let to_px = |x: f64, y: f64| -> Option<(i32, i32)> {
            if yscale.log && y <= 0.0 {
                None
            } else {
                Some(chart.backend_coord(&(xscale.fwd(x), yscale.fwd(y))))
            }
        };
        let x_px = |x: f64| chart.backend_coord(&(xscale.fwd(x), y0)).0;

        // Zero values on the log axis, drawn last (see below).
        let mut clamps: Vec<Clamp> = Vec::new();
        // Analytic first (underneath), then measured series.
        let mut order: Vec<usize> = members.clone();
        order.sort_by_key(|&i| !l.summary.series[i].dashed);
        for &i in &order {
            let s = &l.summary.series[i];
            let m = &l.meta[i];
            let color = group_color(m.group);
            // Line, broken at clamped points.
            let mut segments: Vec<Vec<(i32, i32)>> = vec![vec![]];
            for &(x, y, _) in &s.points {
                // Analytic values below the axis (left off its limits) are
                // clipped: the dashed line stops at the last visible point.
                let below_axis = s.dashed && y > 0.0 && yscale.fwd(y) < data_lo;
                match to_px(x, y).filter(|_| !below_axis) {
                    Some(pt) => segments.last_mut().unwrap().push(pt),
                    None => segments.push(vec![]),
                }
            }
            for seg in segments.into_iter().filter(|s| s.len() >= 2) {
                if s.dashed {
                    root.draw(&DashedPathElement::new(
                        seg,
                        g.px(7.0),
                        g.px(4.0),
                        color.stroke_width(g.w(2.0)),
                    ))?;
                    stats.dashed_segments += 1;
                } else {
                    root.draw(&PathElement::new(seg, color.stroke_width(g.w(2.0))))?;
                }
            }
            if s.dashed {
                for &(x, y, _) in &s.points {
                    if yscale.log && y <= 0.0 {
                        clamps.push(Clamp {
                            x: x_px(x),
                            group: m.group,
                            filled: false,
                            analytic: true,
                        });
                    }
                }
                continue;
            }
            // Error bars, then markers on top.
            for &(x, y, ci) in &s.points {
                let Some(c) = ci else { continue };
                if c <= 0.0 || (yscale.log && y <= 0.0) {
                    continue;
                }
                let top = chart
                    .backend_coord(&(xscale.fwd(x), yscale.fwd(y + c).min(y1)))
                    .1;
                let (low, capped) = if yscale.log && y - c <= 0.0 {
                    (bottom, false)
                } else {
                    (
                        chart
                            .backend_coord(&(xscale.fwd(x), yscale.fwd(y - c).max(y0)))
                            .1,
                        true,
                    )
                };
                draw_error_bar(root, g, x_px(x), top, low, color, true, capped)?;
                stats.ci_bars += 1;
            }
            for (k, &(x, y, _)) in s.points.iter().enumerate() {
                let stable = m.stable.get(k).copied().unwrap_or(true);
                match to_px(x, y) {
                    Some(pt) => {
                        draw_marker(root, g, pt, group_shape(m.group), color, stable)?;
                        stats.markers += 1;
                    }
                    None => clamps.push(Clamp {
                        x: x_px(x),
                        group: m.group,
                        filled: stable,
                        analytic: false,
                    }),
                }
                if !stable {
                    stats.hollow_markers += 1;
                }
            }
        }
        stats.clamped_markers += clamps.len();
        draw_clamped(root, g, &clamps, bottom, (prx.start, prx.end))?;
    }
    Ok(stats)
}

/// A value ≤ 0 on a log y axis, to be drawn as ▼ on the bottom edge.
struct Clamp {
    x: i32,
    group: usize,
    filled: bool,
    analytic: bool,
}

/// Draw the ▼ markers of zero values side by side (dodged) where several series
/// have one at the same x; an analytic zero is hollow and omitted where the
/// measured series of the same group is zero there too.
fn draw_clamped<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    clamps: &[Clamp],
    bottom: i32,
    (left, right): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let shown: Vec<&Clamp> = clamps
        .iter()
        .filter(|c| {
            !c.analytic
                || !clamps
                    .iter()
                    .any(|d| !d.analytic && d.group == c.group && d.x == c.x)
        })
        .collect();
    let mut xs: Vec<i32> = shown.iter().map(|c| c.x).collect();
    xs.sort_unstable();
    xs.dedup();
    let step = 2.5 * MARKER_R * g.s;
    for x in xs {
        let mut here: Vec<&Clamp> = shown.iter().copied().filter(|c| c.x == x).collect();
        here.sort_by_key(|c| (c.group, c.analytic));
        let n = here.len() as f64;
        // Keep the whole row inside the frame.
        let half = (n - 1.0) / 2.0 * step + 1.3 * MARKER_R * g.s;
        let centre = (x as f64).max(left as f64 + half).min(right as f64 - half);
        for (j, c) in here.iter().enumerate() {
            let px = (centre + (j as f64 - (n - 1.0) / 2.0) * step).round() as i32;
            draw_marker(
                root,
                g,
                (px, bottom),
                Shape::Down,
                group_color(c.group),
                c.filled,
            )?;
        }
    }
    Ok(())
}

/// A linear axis in drawing coordinates with exactly the given ticks
/// (plotters' own numeric axes choose their ticks themselves).
struct TickedAxis {
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl TickedAxis {
    fn new(lo: f64, hi: f64, ticks: &Ticks) -> Self {
        TickedAxis {
            lo,
            hi,
            major: ticks.major.iter().map(|t| t.0).collect(),
            minor: ticks.minor.clone(),
        }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

fn lookup_label(t: &Ticks, v: f64) -> String {
    t.major
        .iter()
        .find(|(p, _)| (p - v).abs() <= 1e-9 * p.abs().max(1.0))
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| format_tick(v, v))
}

/// x ticks: the distinct data x values when there are few and their labels fit
/// (sweeps are usually read at their grid points), else nice ticks.
#[allow(clippy::too_many_arguments)]
fn choose_x_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    font: &TextStyle,
    scale: Scale,
    (x0, x1): (f64, f64),
    distinct: &[f64],
    integer: bool,
    plot_w: i32,
    g: &Geom,
) -> Ticks {
    let to_px = |t: f64| (t - x0) / (x1 - x0) * plot_w as f64;
    let fits = |ticks: &Ticks| -> bool {
        let mut prev_right = f64::NEG_INFINITY;
        for (t, label) in &ticks.major {
            let w = text_size(root, label, font).0 as f64;
            let c = to_px(*t);
            if c - w / 2.0 < prev_right + g.s * 10.0 {
                return false;
            }
            prev_right = c + w / 2.0;
        }
        true
    };
    let roundish = distinct
        .iter()
        .all(|v| (v * 100.0 - (v * 100.0).round()).abs() < 1e-9 && v.abs() < 1e6);
    if distinct.len() >= 2 && distinct.len() <= 12 && roundish {
        let step = if integer { 1.0 } else { 0.01 };
        let major: Vec<(f64, String)> = distinct
            .iter()
            .map(|&v| (scale.fwd(v), trim_decimals(&format_tick(v, step))))
            .collect();
        let ticks = Ticks {
            major,
            minor: if scale.log {
                log_ticks(x0, x1, 2).minor
            } else {
                vec![]
            },
        };
        if fits(&ticks) {
            return ticks;
        }
    }
    let mut target = ((plot_w as f64 / (g.s * 60.0)).floor() as usize).clamp(2, 10);
    loop {
        let ticks = if scale.log {
            log_ticks(x0, x1, target)
        } else {
            linear_ticks(x0, x1, target, integer)
        };
        if fits(&ticks) || target <= 2 {
            return ticks;
        }
        target -= 1;
    }
}

/// Two short slanted strokes across a vertical axis line at `(x, y)`, with the axis
/// interrupted between them: the conventional "broken axis" mark.
fn draw_axis_break<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    x: i32,
    y: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (dx, dy, gap) = (g.px(6.0), g.px(3.0), g.px(2.5));
    root.draw(&Polygon::new(
        vec![
            (x - dx, y - gap + dy),
            (x + dx, y - gap - dy),
            (x + dx, y + gap - dy),
            (x - dx, y + gap + dy),
        ],
        WHITE.filled(),
    ))?;
    let style = RGBColor(40, 40, 40).stroke_width(g.w(1.0));
    for off in [-gap, gap] {
        root.draw(&PathElement::new(
            vec![(x - dx, y + off + dy), (x + dx, y + off - dy)],
            style,
        ))?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn draw_error_bar<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    x: i32,
    top: i32,
    low: i32,
    color: RGBColor,
    cap_top: bool,
    cap_low: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = color.stroke_width(g.w(1.2));
    let cap = g.px(3.5);
    root.draw(&PathElement::new(vec![(x, top), (x, low)], style))?;
    if cap_top {
        root.draw(&PathElement::new(
            vec![(x - cap, top), (x + cap, top)],
            style,
        ))?;
    }
    if cap_low {
        root.draw(&PathElement::new(
            vec![(x - cap, low), (x + cap, low)],
            style,
        ))?;
    }
    Ok(())
}

fn draw_marker<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    (x, y): (i32, i32),
    shape: Shape,
    color: RGBColor,
    filled: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let r = MARKER_R * g.s;
    let (xf, yf) = (x as f64, y as f64);
    let poly = |pts: &[(f64, f64)]| -> Vec<(i32, i32)> {
        pts.iter()
            .map(|(dx, dy)| ((xf + dx * r).round() as i32, (yf + dy * r).round() as i32))
            .collect()
    };
    let outline = color.stroke_width(g.w(1.5));
    let lines = |segs: &[[(f64, f64); 2]]| -> Vec<PathElement<(i32, i32)>> {
        segs.iter()
            .map(|s| PathElement::new(poly(s), color.stroke_width(g.w(2.0))))
            .collect()
    };
    let pts: Vec<(i32, i32)> = match shape {
        Shape::Circle => {
            if filled {
                root.draw(&Circle::new((x, y), r.round() as i32, color.filled()))?;
            } else {
                root.draw(&Circle::new((x, y), r.round() as i32, WHITE.filled()))?;
                root.draw(&Circle::new((x, y), r.round() as i32, outline))?;
            }
            return Ok(());
        }
        Shape::Cross => {
            for e in lines(&[[(-0.9, -0.9), (0.9, 0.9)], [(-0.9, 0.9), (0.9, -0.9)]]) {
                root.draw(&e)?;
            }
            return Ok(());
        }
        Shape::Plus => {
            for e in lines(&[[(-1.1, 0.0), (1.1, 0.0)], [(0.0, -1.1), (0.0, 1.1)]]) {
                root.draw(&e)?;
            }
            return Ok(());
        }
        Shape::Square => poly(&[(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)]),
        Shape::Triangle => poly(&[(0.0, -1.2), (1.1, 0.75), (-1.1, 0.75)]),
        Shape::Diamond => poly(&[(0.0, -1.25), (1.05, 0.0), (0.0, 1.25), (-1.05, 0.0)]),
        Shape::Pentagon => {
            let v: Vec<(f64, f64)> = (0..5)
                .map(|i| {
                    let a =
                        -std::f64::consts::FRAC_PI_2 + i as f64 * 2.0 * std::f64::consts::PI / 5.0;
                    (1.1 * a.cos(), 1.1 * a.sin())
                })
                .collect();
            poly(&v)
        }
        // Tip on (x, y): the marker sits above the point it marks.
        Shape::Down => poly(&[(-1.1, -1.9), (1.1, -1.9), (0.0, 0.0)]),
    };
    if filled {
        root.draw(&Polygon::new(pts.clone(), color.filled()))?;
    } else {
        root.draw(&Polygon::new(pts.clone(), WHITE.filled()))?;
    }
    let mut closed = pts;
    closed.push(closed[0]);
    root.draw(&PathElement::new(closed, outline))?;
    Ok(())
}

#[cfg(test)]
mod tests {
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
        let body = "random,8,exp,1\nrandom,16,exp,0.5\nrandom,8,det,0.6\nrandom,16,det,0.3\njsq,8,det,0.1\n";
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
}
