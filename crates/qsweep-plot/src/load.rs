//! Reading a results CSV into the series of the figure.
//!
//! Why this module exists: the conventions of `qsweep run`'s CSV (95 % CI
//! half-widths in `<y>_ci95`, analytic baselines in `analytic_<y>`, `stable=false`
//! rows, empty cells = no value) are decoded here once, and every problem with the
//! file is reported — with file, line and column — before anything is drawn.  The
//! steps: find the requested columns, read the rows, order the `--by` and `--facet`
//! values, lay out the panels, cut the rows into series, note what was left out.

use std::collections::HashMap;
use std::path::Path;

use super::keys::{display_order, Interner, KeyColumns};
use super::labels::{axis_label, baseline_method, baseline_text, BaselineKind};
use super::xaxis::{choose_x, X_AXES};
use super::{PlotError, PlotOptions, PlotSummary, Series};

/// A panel of the figure: one y column for one facet value.
#[derive(Debug, Clone)]
pub(super) struct PanelInfo {
    /// Name as in [`PlotSummary::y_ranges`] and [`Series::panel`].
    pub(super) name: String,
    /// Caption drawn above the panel (`<facet> = <value>`), when faceting.
    pub(super) title: Option<String>,
    /// Index of the panel's column in `PlotOptions::y`.
    pub(super) y_index: usize,
}

/// Drawing-only facts about a series (parallel to `PlotSummary::series`).
#[derive(Debug, Clone)]
pub(super) struct SeriesMeta {
    /// Index into `Loaded::panels`.
    pub(super) panel: usize,
    /// Rank of the series' `--by` value in legend order (its colour and shape).
    pub(super) group: usize,
    /// Per point (parallel to `points`): `false` for rows with `stable=false`.
    pub(super) stable: Vec<bool>,
    /// Analytic series: what kind of baseline it is (`None` for measured series).
    pub(super) baseline: Option<BaselineKind>,
}

/// The CSV as the figure needs it: the public summary plus the panel grid and legend.
#[derive(Debug)]
pub(super) struct Loaded {
    pub(super) summary: PlotSummary,
    /// Panels in drawing order (row-major).
    pub(super) panels: Vec<PanelInfo>,
    /// Rows of the panel grid.
    pub(super) rows: usize,
    /// Columns of the panel grid.
    pub(super) cols: usize,
    /// `--by` values in legend order, as labelled (empty without `--by`).
    pub(super) groups: Vec<String>,
    /// Names of the `--by` columns (legend title), empty without `--by`.
    pub(super) group_title: String,
    pub(super) meta: Vec<SeriesMeta>,
    /// Whether panels are rows of `--facet` values (their y axes are then shared
    /// down each column unless `--free-y`).
    pub(super) faceted: bool,
    /// The analytic methods drawn, per kind, in order of first appearance
    /// (human names, e.g. "Erlang C"), for the legend.
    pub(super) baselines: Vec<(BaselineKind, Vec<String>)>,
    /// Curves without markers or error bars (histogram tails: hundreds of bins).
    pub(super) lines_only: bool,
    /// The options the figure is drawn with (a histogram's: log axes, x
    /// `bin_upper`, y `ccdf`; see [`super::inputs::Table::adjust`]).
    pub(super) opts: PlotOptions,
}

/// Parse `paths` and group their rows into series and panels as asked by
/// `opts` (histogram CSVs: see [`super::inputs`]).
pub(super) fn load(paths: &[&Path], opts: &PlotOptions) -> Result<Loaded, PlotError> {
    let first = paths
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    requested_ys(&first, opts)?;
    let mut table = super::inputs::read_all(paths)?;
    let opts = &table.adjust(opts);
    let ys = requested_ys(&table.label, opts)?;
    let records = std::mem::take(&mut table.records);
    let malformed = table.malformed.take();
    let mut notes = std::mem::take(&mut table.notes);
    let src = Source {
        file: &table.label,
        headers: &table.headers,
        table: &table,
    };
    if table.hist {
        notes.push(format!(
            "the tail P(wait > t) of each point's wait histogram, on log axes (x {}, y {}); \
             the zero bin and the last bin (P = 0) have no place on them",
            opts.x,
            ys.join(", ")
        ));
    }
    let cols = Columns::find(&src, &ys, opts, &records, &mut notes)?;
    let read = read_rows(records, &src, &cols, opts)?;
    if let Some(e) = malformed {
        return Err(e);
    }
    if read.rows.is_empty() {
        return Err(read.nothing_to_plot(&table.label, &table.headers[cols.x]));
    }
    notes.extend(read.left_out_notes(&ys, &table.headers[cols.x]));
    let mut loaded = arrange(&src, &ys, &cols, &read, opts, notes)?;
    loaded.lines_only = table.hist;
    Ok(loaded)
}

/// Order the `--by` and `--facet` values, label the axes, lay out the panels and
/// cut the rows into series.
fn arrange(
    src: &Source,
    ys: &[String],
    cols: &Columns,
    read: &ReadRows,
    opts: &PlotOptions,
    mut notes: Vec<String>,
) -> Result<Loaded, PlotError> {
    let headers = src.headers;
    // Legend / facet order: numeric when every value is a number, else first appearance.
    let group_order = display_order(&read.groups.names);
    let facet_order = display_order(&read.facets.names);
    let groups: Vec<String> = group_order
        .iter()
        .map(|&g| cols.by.label(&read.groups.names[g]))
        .collect();

    let x_label = axis_label(&headers[cols.x], opts.time_unit.as_deref());
    let y_labels: Vec<String> = ys
        .iter()
        .map(|y| axis_label(y, opts.time_unit.as_deref()))
        .collect();

    let facet = (!cols.facet.is_empty()).then_some(&cols.facet);
    let panels = layout_panels(&facet_order, &read.facets.names, facet, ys);
    let (n_rows, n_cols) = grid_shape(facet.is_some(), facet_order.len(), ys.len());

    let set = SeriesSource {
        rows: &read.rows,
        y_cols: &cols.ys,
        group_order: &group_order,
        group_names: (!cols.by.is_empty()).then_some(groups.as_slice()),
        methods: &read.methods.names,
        y_labels: &y_labels,
        log_y: opts.log_y,
    }
    .collect(&panels, &mut notes);
    if set.series.is_empty() {
        return Err(PlotError::Data {
            file: src.file.to_string(),
            message: format!("no values to plot in column(s) {}", ys.join(", ")),
        });
    }
    notes.extend(set.caveats());
    if set.duplicated > 0 {
        notes.push(repeated_x_note(set.duplicated, read, src, cols));
    }

    let x_range = x_range(&set.series);
    let baselines = baselines_drawn(&set.series);
    Ok(Loaded {
        summary: PlotSummary {
            series: set.series,
            x_range,
            y_ranges: set.y_ranges,
            x_column: headers[cols.x].clone(),
            x_label,
            y_labels,
            dropped_zero: set.dropped_zero,
            notes,
        },
        panels: panels.into_iter().map(|(_, p)| p).collect(),
        rows: n_rows,
        cols: n_cols,
        groups: if cols.by.is_empty() { vec![] } else { groups },
        group_title: cols.by.names.join(", "),
        meta: set.meta,
        faceted: facet.is_some(),
        baselines,
        lines_only: false,
        opts: opts.clone(),
    })
}

/// The analytic methods among `series`, per kind (exact first), each kind's
/// names in order of first appearance.
fn baselines_drawn(series: &[Series]) -> Vec<(BaselineKind, Vec<String>)> {
    let mut out: Vec<(BaselineKind, Vec<String>)> = Vec::new();
    for s in series {
        let Some(method) = &s.baseline else { continue };
        let (kind, name) = baseline_method(method);
        match out.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, names)) => {
                if !name.is_empty() && !names.contains(&name) {
                    names.push(name);
                }
            }
            None => out.push((kind, if name.is_empty() { vec![] } else { vec![name] })),
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// The y columns asked for (blank entries dropped); at least one.
fn requested_ys(file: &str, opts: &PlotOptions) -> Result<Vec<String>, PlotError> {
    let ys: Vec<String> = opts
        .y
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if ys.is_empty() {
        return Err(PlotError::Data {
            file: file.to_string(),
            message: "no y column given".to_string(),
        });
    }
    Ok(ys)
}

// ---------------------------------------------------------------------------------
// Columns and rows
// ---------------------------------------------------------------------------------

/// The CSVs being read, as their error messages need them.
struct Source<'a> {
    /// The file name (or names) for messages about the whole figure.
    file: &'a str,
    headers: &'a [String],
    /// Each record's file and line.
    table: &'a super::inputs::Table,
}

/// Where the requested columns are in the header.
struct Columns {
    x: usize,
    /// The `--by` columns (empty: one series per panel).
    by: KeyColumns,
    /// The `--facet` columns (empty: no facet rows).
    facet: KeyColumns,
    /// One per requested y, in order.
    ys: Vec<YColumns>,
    stable: Option<usize>,
    /// `analytic_method`, where present and analytic curves are asked for.
    method: Option<usize>,
    /// Histogram bins: the zero bin (x = 0) and values of 0 have no place on
    /// the log axes of a tail and are left out without a note each.
    hist: bool,
}

/// The columns behind one y: its values, their CI half-widths, the analytic baseline.
struct YColumns {
    value: usize,
    /// `<y>_ci95`, where present.
    ci: Option<usize>,
    /// `analytic_<y>`, where present and asked for.
    analytic: Option<usize>,
}

impl Columns {
    /// Find the columns `opts` names (an error names the file and suggests a
    /// close match); a missing analytic column is only a note.  Without `--x`
    /// the x column is chosen from `records` (see [`choose_x`]).
    fn find(
        src: &Source,
        ys: &[String],
        opts: &PlotOptions,
        records: &[csv::StringRecord],
        notes: &mut Vec<String>,
    ) -> Result<Columns, PlotError> {
        let find = |name: &str| src.headers.iter().position(|h| h == name);
        let require = |name: &str| -> Result<usize, PlotError> {
            find(name).ok_or_else(|| no_column(src.file, name, src.headers))
        };
        let x_named = (!opts.x.trim().is_empty())
            .then(|| require(opts.x.trim()))
            .transpose()?;
        let names = |list: &[String]| -> Vec<String> {
            list.iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let (by_names, facet_names) = (names(&opts.by), names(&opts.facet));
        let by_cols = by_names
            .iter()
            .map(|n| require(n))
            .collect::<Result<Vec<_>, _>>()?;
        let facet_cols = facet_names
            .iter()
            .map(|n| require(n))
            .collect::<Result<Vec<_>, _>>()?;
        let taken: Vec<&str> = by_names
            .iter()
            .chain(&facet_names)
            .map(String::as_str)
            .collect();
        let by = KeyColumns::new(&by_names, &by_cols, src.headers, &taken);
        let facet = KeyColumns::new(&facet_names, &facet_cols, src.headers, &taken);
        let x = match x_named {
            Some(x) => x,
            None => {
                let key_cells: Vec<usize> =
                    by.cells.iter().chain(&facet.cells).map(|c| c.0).collect();
                let x =
                    choose_x(src.headers, records, &key_cells).ok_or_else(|| PlotError::Data {
                        file: src.file.to_string(),
                        message: format!(
                            "no axis column to put on x (none of {}): name one with --x",
                            X_AXES.join(", ")
                        ),
                    })?;
                if src.headers[x] != "servers" {
                    notes.push(format!(
                        "x axis: {}, the axis that varies along a series (--x chooses another)",
                        src.headers[x]
                    ));
                }
                x
            }
        };
        let mut y_cols = Vec::new();
        for y in ys {
            let value = require(y)?;
            let ci = find(&format!("{y}_ci95"));
            let analytic = if opts.analytic {
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
            y_cols.push(YColumns {
                value,
                ci,
                analytic,
            });
        }
        Ok(Columns {
            x,
            by,
            facet,
            ys: y_cols,
            stable: find("stable"),
            method: if opts.analytic {
                find("analytic_method")
            } else {
                None
            },
            hist: src.table.hist,
        })
    }
}

/// One data row with an x value.
struct Row {
    x: f64,
    /// Index into `ReadRows::groups` (order of first appearance).
    group: usize,
    /// Index into `ReadRows::facets` (order of first appearance).
    facet: usize,
    /// Index into `ReadRows::methods` (its `analytic_method` cell).
    method: usize,
    stable: bool,
    /// Per y: (value, ci, analytic)
    values: Vec<(Option<f64>, Option<f64>, Option<f64>)>,
}

/// The rows of the CSV, with counts of what was left out of them.
#[derive(Default)]
struct ReadRows {
    rows: Vec<Row>,
    /// The record of each row (to say which columns differ between repeated x).
    records: Vec<csv::StringRecord>,
    /// `--by` values (a single empty key without `--by`).
    groups: Interner,
    /// `--facet` values (a single empty key without `--facet`).
    facets: Interner,
    /// `analytic_method` cells (a single "" without that column).
    methods: Interner,
    /// Rows without an x value (left out).
    no_x: usize,
    /// Per y: rows without a value.
    missing_y: Vec<usize>,
    /// inf/NaN cells (treated as no value).
    non_finite: usize,
}

/// Parse every record into a [`Row`]; the first bad number is an error.
fn read_rows(
    records: Vec<csv::StringRecord>,
    src: &Source,
    cols: &Columns,
    opts: &PlotOptions,
) -> Result<ReadRows, PlotError> {
    let mut read = ReadRows {
        missing_y: vec![0; cols.ys.len()],
        ..Default::default()
    };
    for (i, rec) in records.into_iter().enumerate() {
        let (file, line) = src.table.origin[i];
        let record = Record {
            cells: &rec,
            line,
            file: &src.table.files[file],
            src,
        };
        if let Some(row) = read.parse_row(&record, cols, opts)? {
            read.rows.push(row);
            read.records.push(rec);
        }
    }
    Ok(read)
}

impl ReadRows {
    /// The row of `record`, or `None` (counted) when it has no x value.
    fn parse_row(
        &mut self,
        record: &Record,
        cols: &Columns,
        opts: &PlotOptions,
    ) -> Result<Option<Row>, PlotError> {
        if cols.hist && record.number(cols.x)?.is_some_and(|x| x <= 0.0) {
            return Ok(None);
        }
        let Some(x) = record.x(cols.x, opts.log_x)? else {
            self.no_x += 1;
            return Ok(None);
        };
        let group = self.groups.intern(cols.by.values(record.cells));
        let facet = self.facets.intern(cols.facet.values(record.cells));
        let method = self
            .methods
            .intern(vec![cols.method.map_or("", |c| record.cell(c)).to_string()]);
        let stable = cols.stable.is_none_or(|c| is_stable(record.cell(c)));
        let mut values = Vec::with_capacity(cols.ys.len());
        for (k, y) in cols.ys.iter().enumerate() {
            let value = self
                .finite(record.number(y.value)?)
                .filter(|v| !(cols.hist && *v <= 0.0));
            if value.is_none() && !cols.hist {
                self.missing_y[k] += 1;
            }
            let ci = match y.ci {
                Some(c) => self.finite(record.number(c)?).map(f64::abs),
                None => None,
            };
            let analytic = match y.analytic {
                Some(c) => self.finite(record.number(c)?),
                None => None,
            };
            values.push((value, ci, analytic));
        }
        Ok(Some(Row {
            x,
            group,
            facet,
            method,
            stable,
            values,
        }))
    }

    /// inf/NaN is no value (counted for a note).
    fn finite(&mut self, v: Option<f64>) -> Option<f64> {
        match v {
            Some(v) if !v.is_finite() => {
                self.non_finite += 1;
                None
            }
            v => v,
        }
    }

    /// The error when no row has an x value.
    fn nothing_to_plot(&self, file: &str, x: &str) -> PlotError {
        PlotError::Data {
            file: file.to_string(),
            message: if self.no_x > 0 {
                format!("no row has a value in column '{x}'")
            } else {
                "no data rows".to_string()
            },
        }
    }

    /// Notes on rows and cells left out.
    fn left_out_notes(&self, ys: &[String], x: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if self.no_x > 0 {
            notes.push(format!(
                "{} row(s) without a value in '{x}' left out",
                self.no_x
            ));
        }
        for (k, y) in ys.iter().enumerate() {
            let missing = self.missing_y[k];
            if missing > 0 && missing < self.rows.len() {
                notes.push(format!(
                    "{missing} row(s) without a value in '{y}' left out of its panel"
                ));
            }
        }
        if self.non_finite > 0 {
            notes.push(format!(
                "{} non-finite cell(s) (inf/NaN) treated as no value",
                self.non_finite
            ));
        }
        notes
    }
}

/// One CSV record, with its file and line number for messages.
struct Record<'a> {
    cells: &'a csv::StringRecord,
    line: u64,
    file: &'a str,
    src: &'a Source<'a>,
}

impl Record<'_> {
    fn cell(&self, c: usize) -> &str {
        self.cells.get(c).unwrap_or("")
    }

    /// The number in column `c`, `None` when the cell is empty.
    fn number(&self, c: usize) -> Result<Option<f64>, PlotError> {
        let s = self.cell(c);
        if s.is_empty() {
            return Ok(None);
        }
        s.parse::<f64>()
            .map(Some)
            .map_err(|_| PlotError::NotANumber {
                file: self.file.to_string(),
                line: self.line,
                column: self.src.headers[c].clone(),
                value: s.to_string(),
            })
    }

    /// The x value in column `c`: `None` when empty; it must be finite, and > 0
    /// on a log x axis.
    fn x(&self, c: usize, log_x: bool) -> Result<Option<f64>, PlotError> {
        let x = match self.number(c)? {
            None => return Ok(None),
            Some(x) if !x.is_finite() => {
                return Err(PlotError::NotANumber {
                    file: self.file.to_string(),
                    line: self.line,
                    column: self.src.headers[c].clone(),
                    value: self.cell(c).to_string(),
                })
            }
            Some(x) => x,
        };
        if log_x && x <= 0.0 {
            return Err(PlotError::Data {
                file: self.file.to_string(),
                message: format!(
                    "line {}: column '{}' is {x}, which has no place on a log x axis (plot without log x)",
                    self.line, self.src.headers[c]
                ),
            });
        }
        Ok(Some(x))
    }
}

/// `stable` cells that mark a row as unstable: false, 0, no, f (any case).
fn is_stable(cell: &str) -> bool {
    !matches!(
        cell.to_ascii_lowercase().as_str(),
        "false" | "0" | "no" | "f"
    )
}

// ---------------------------------------------------------------------------------
// Panels and series
// ---------------------------------------------------------------------------------

/// Panels in drawing order: facet values (rows, in display order) × ys (columns);
/// each with the index of its facet value.
fn layout_panels(
    facet_order: &[usize],
    facet_names: &[Vec<String>],
    facet: Option<&KeyColumns>,
    ys: &[String],
) -> Vec<(usize, PanelInfo)> {
    let mut panels = Vec::new();
    for &f in facet_order {
        for (k, y) in ys.iter().enumerate() {
            let (name, title) = match facet {
                Some(keys) => {
                    let v = &facet_names[f];
                    (format!("{y} | {}", keys.raw(v)), Some(keys.title(v)))
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
    panels
}

/// Rows and columns of the panel grid: one row per facet value, else up to
/// three ys side by side.
fn grid_shape(faceted: bool, n_facets: usize, n_ys: usize) -> (usize, usize) {
    if faceted {
        (n_facets, n_ys)
    } else {
        let cols = n_ys.min(3);
        (n_ys.div_ceil(cols), cols)
    }
}

/// A point while grouping: (x, y, CI half-width, stable, method index).
type Point = (f64, f64, Option<f64>, bool, usize);

/// What the series of every panel are cut from.
struct SeriesSource<'a> {
    rows: &'a [Row],
    y_cols: &'a [YColumns],
    /// Group indices in legend order.
    group_order: &'a [usize],
    /// `--by` values in legend order, as labelled; `None` without `--by`
    /// (series are then labelled by their y axis label).
    group_names: Option<&'a [String]>,
    /// `analytic_method` cells by index.
    methods: &'a [Vec<String>],
    y_labels: &'a [String],
    log_y: bool,
}

/// The series of all panels, with what the notes say about them.
struct SeriesSet {
    series: Vec<Series>,
    meta: Vec<SeriesMeta>,
    y_ranges: Vec<(String, f64, f64)>,
    dropped_zero: usize,
    unstable_points: usize,
    /// Points sharing their x with the previous point of the same series.
    duplicated: usize,
}

impl SeriesSource<'_> {
    /// Cut the rows into series, panel by panel: in each, the measured series in
    /// legend order, then the analytic ones (one per group and method, methods
    /// in order of x).
    fn collect(&self, panels: &[(usize, PanelInfo)], notes: &mut Vec<String>) -> SeriesSet {
        let mut set = SeriesSet {
            series: Vec::new(),
            meta: Vec::new(),
            y_ranges: Vec::new(),
            dropped_zero: 0,
            unstable_points: 0,
            duplicated: 0,
        };
        for (p, (f, info)) in panels.iter().enumerate() {
            let k = info.y_index;
            let mut lo = f64::INFINITY;
            let mut hi = f64::NEG_INFINITY;
            for analytic in [false, true] {
                if analytic && self.y_cols[k].analytic.is_none() {
                    continue;
                }
                for (rank, &g) in self.group_order.iter().enumerate() {
                    let all = self.points(*f, g, k, analytic);
                    if all.is_empty() {
                        continue;
                    }
                    if !analytic {
                        set.duplicated += all.windows(2).filter(|w| w[0].0 == w[1].0).count();
                        set.unstable_points += all.iter().filter(|p| !p.3).count();
                    }
                    for pt in &all {
                        lo = lo.min(pt.1);
                        hi = hi.max(pt.1);
                        if self.log_y && pt.1 <= 0.0 {
                            set.dropped_zero += 1;
                        }
                    }
                    // Measured: one series; analytic: one per method.
                    let mut methods: Vec<Option<usize>> = vec![];
                    for pt in &all {
                        let m = analytic.then_some(pt.4);
                        if !methods.contains(&m) {
                            methods.push(m);
                        }
                    }
                    for m in methods {
                        let pts: Vec<&Point> = all
                            .iter()
                            .filter(|pt| m.is_none_or(|m| pt.4 == m))
                            .collect();
                        let method = m.map(|m| self.methods[m][0].clone());
                        let kind = method.as_deref().map(|c| baseline_method(c).0);
                        set.series.push(Series {
                            label: self.label(rank, k, method.as_deref()),
                            panel: info.name.clone(),
                            points: pts.iter().map(|p| (p.0, p.1, p.2)).collect(),
                            dashed: kind.is_some_and(|k| k != BaselineKind::Exact),
                            baseline: method,
                        });
                        set.meta.push(SeriesMeta {
                            panel: p,
                            group: rank,
                            stable: pts.iter().map(|p| p.3).collect(),
                            baseline: kind,
                        });
                    }
                }
            }
            if lo > hi {
                notes.push(format!("panel '{}' has no data", info.name));
                lo = f64::NAN;
                hi = f64::NAN;
            }
            set.y_ranges.push((info.name.clone(), lo, hi));
        }
        set
    }

    /// The points of facet `f`, group `g`, y number `k` (measured or analytic), sorted by x.
    fn points(&self, f: usize, g: usize, k: usize, analytic: bool) -> Vec<Point> {
        let mut pts: Vec<Point> = self
            .rows
            .iter()
            .filter(|r| r.facet == f && r.group == g)
            .filter_map(|r| {
                let (y, ci, an) = r.values[k];
                if analytic {
                    an.map(|a| (r.x, a, None, true, r.method))
                } else {
                    y.map(|y| (r.x, y, ci, r.stable, r.method))
                }
            })
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    }

    /// Legend label of a series: its `--by` value (or y label), with the
    /// analytic method appended to a baseline: "central (exact: Erlang C)",
    /// or "(analytic)" where the CSV does not name the method.
    fn label(&self, rank: usize, k: usize, method: Option<&str>) -> String {
        let base = match self.group_names {
            Some(names) => names[rank].clone(),
            None => self.y_labels[k].clone(),
        };
        match method {
            None => base,
            Some(cell) => {
                let (kind, name) = baseline_method(cell);
                format!("{base} ({})", baseline_text(kind, &[name]))
            }
        }
    }
}

impl SeriesSet {
    /// Notes on points drawn other than as plain markers.
    fn caveats(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.dropped_zero > 0 {
            notes.push(format!(
                "{} point(s) with y = 0 cannot be placed on the log y axis: drawn as ▼ on the bottom edge of their panel",
                self.dropped_zero
            ));
        }
        if self.unstable_points > 0 {
            notes.push(format!(
                "{} point(s) from rows with stable=false (ρ ≥ 1) drawn with hollow markers: their waits grow with the run length",
                self.unstable_points
            ));
        }
        notes
    }
}

/// The note on repeated x values within a series, naming the input columns that
/// tell the rows apart.
fn repeated_x_note(duplicated: usize, read: &ReadRows, src: &Source, cols: &Columns) -> String {
    let keys: Vec<usize> = cols
        .by
        .cells
        .iter()
        .chain(&cols.facet.cells)
        .map(|c| c.0)
        .collect();
    let differing = differing_columns(&read.rows, &read.records, src.headers, cols.x, &keys);
    let what = if differing.is_empty() {
        String::new()
    } else {
        format!(" (rows differ in: {})", differing.join(", "))
    };
    format!(
        "{duplicated} repeated x value(s) within a series{what}: use --by or --facet to separate them"
    )
}

/// Smallest and largest x over all series.
fn x_range(series: &[Series]) -> (f64, f64) {
    let (mut xmin, mut xmax) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in series {
        for p in &s.points {
            xmin = xmin.min(p.0);
            xmax = xmax.max(p.0);
        }
    }
    (xmin, xmax)
}

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

fn no_column(file: &str, name: &str, headers: &[String]) -> PlotError {
    let best = headers
        .iter()
        .map(|h| (edit_distance(name, h), h))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, h)| *d <= 2.max(h.len() / 4));
    PlotError::NoColumn {
        file: file.to_string(),
        column: shown_name(name),
        available: headers
            .iter()
            .map(|h| shown_name(h))
            .collect::<Vec<_>>()
            .join(", "),
        hint: best
            .map(|(_, h)| format!("; did you mean '{}'?", shown_name(h)))
            .unwrap_or_default(),
    }
}

/// A column name as a one-line message shows it: control characters
/// escaped and a long name cut (a stray quote in a header line makes the
/// CSV reader take the following rows as one header, newlines and all).
fn shown_name(h: &str) -> String {
    const MOST: usize = 40;
    let escaped: String = h.escape_debug().collect();
    match escaped.char_indices().nth(MOST) {
        Some((cut, _)) => format!("{}…", &escaped[..cut]),
        None => escaped,
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

/// Input columns (other than x and the `--by`/`--facet` keys) whose values
/// differ between rows that share (facet, group, x).
fn differing_columns(
    rows: &[Row],
    records: &[csv::StringRecord],
    headers: &[String],
    x: usize,
    keys: &[usize],
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
        .filter(|(c, h)| differ[*c] && *c != x && !keys.contains(c) && !is_result_column(h))
        .map(|(_, h)| h.clone())
        .collect()
}
