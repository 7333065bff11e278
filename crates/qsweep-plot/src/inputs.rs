//! The files of one figure: read, classified and combined into one table.
//!
//! Why this module exists: a figure may draw the rows of several results CSVs
//! (`qsweep plot a.csv b.csv`: runs of different specs, such as one fleet size
//! per policy from `qsweep size`), or the wait histograms of `qsweep run --hist`
//! as tails (complementary CDFs). Everything after this module sees one table:
//! the union of the files' columns (a file without a column has empty cells
//! there), a `file` column naming each row's file when there are several, and
//! for every row the file and line it came from, for messages.
//!
//! A histogram CSV (`point,bin_lower,bin_upper,count,ccdf`) takes the columns
//! of a results CSV given with it (the nearest one before it on the command
//! line, else the nearest one after it), joined on `point`, so that its curves
//! can be labelled by policy, servers and the other axes; the results rows
//! themselves are then not drawn.

use std::collections::HashMap;
use std::path::Path;

use super::lines::{csv_error, LineCounter};
use super::PlotError;

/// The columns of a histogram CSV (`qsweep run --hist`).
const HIST_X: &str = "bin_upper";
const HIST_Y: &str = "ccdf";

/// Name of the column that tells the rows of several files apart.
pub(super) const FILE_COLUMN: &str = "file";

/// One file as read.
struct Input {
    file: String,
    /// The file's stem, for the `file` column.
    stem: String,
    headers: Vec<String>,
    records: Vec<csv::StringRecord>,
    lines: Vec<u64>,
    /// The first malformed record's error (the records before it are kept).
    malformed: Option<PlotError>,
}

impl Input {
    fn is_hist(&self) -> bool {
        let has = |c: &str| self.headers.iter().any(|h| h == c);
        has("point") && has(HIST_X) && has(HIST_Y)
    }
}

/// The rows of every file, under the union of their columns.
pub(super) struct Table {
    /// The file name, or the names joined by ", ": what whole-figure messages name.
    pub(super) label: String,
    pub(super) headers: Vec<String>,
    pub(super) records: Vec<csv::StringRecord>,
    /// Per record: the file it came from and its line there.
    pub(super) origin: Vec<(usize, u64)>,
    /// The files, by index of `origin`.
    pub(super) files: Vec<String>,
    /// The first malformed record of any file, reported once the rows before
    /// it are parsed (so that problems come out in file order).
    pub(super) malformed: Option<PlotError>,
    /// Histogram CSVs: the rows are bins, drawn as each point's tail.
    pub(super) hist: bool,
    /// What the notes should say about how the files were combined.
    pub(super) notes: Vec<String>,
}

/// Read `paths` and combine them (see the module docs).
pub(super) fn read_all(paths: &[&Path]) -> Result<Table, PlotError> {
    if paths.is_empty() {
        return Err(PlotError::Data {
            file: "plot".to_string(),
            message: "no CSV given".to_string(),
        });
    }
    let mut inputs = Vec::with_capacity(paths.len());
    for p in paths {
        let input = read_input(p)?;
        let stop = input.malformed.is_some();
        inputs.push(input);
        if stop {
            // Later files would come after the problem: they are not read.
            break;
        }
    }
    unique_stems(&mut inputs);
    if inputs.iter().any(Input::is_hist) {
        Ok(combine_hist(inputs))
    } else {
        Ok(combine_results(inputs))
    }
}

/// Each input's `stem`: the file stem, or the path as given where stems repeat.
fn unique_stems(inputs: &mut [Input]) {
    let mut count: HashMap<String, usize> = HashMap::new();
    for i in inputs.iter() {
        *count.entry(i.stem.clone()).or_default() += 1;
    }
    for i in inputs.iter_mut() {
        if count[&i.stem] > 1 {
            i.stem = i.file.clone();
        }
    }
}

fn read_input(path: &Path) -> Result<Input, PlotError> {
    let file = path.display().to_string();
    if let Some(kind) = qsweep_core::files::special(path) {
        // A FIFO would block the read forever (issue 25).
        return Err(PlotError::Io {
            file,
            cause: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("it is {kind}; expected a regular file (a results CSV)"),
            ),
        });
    }
    let data = std::fs::read(path).map_err(|e| PlotError::Io {
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
    let mut records = Vec::new();
    let mut lines = Vec::new();
    let mut malformed = None;
    let mut counter = LineCounter::default();
    for rec in reader.records() {
        match rec {
            Ok(r) => {
                let line = r
                    .position()
                    .map(|p| counter.at(&data, p.byte()))
                    .unwrap_or(records.len() as u64 + 2);
                lines.push(line);
                records.push(r);
            }
            Err(e) => {
                malformed = Some(csv_error(&file, &data, e));
                break;
            }
        }
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.clone());
    Ok(Input {
        file,
        stem,
        headers,
        records,
        lines,
        malformed,
    })
}

/// Headers in order of first appearance over `lists`.
fn union<'a>(lists: impl Iterator<Item = &'a [String]>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for list in lists {
        for h in list {
            if !out.contains(h) {
                out.push(h.clone());
            }
        }
    }
    out
}

/// Where each of `headers` is in `of` (None: the file lacks it).
fn mapping(headers: &[String], of: &[String]) -> Vec<Option<usize>> {
    headers
        .iter()
        .map(|h| of.iter().position(|o| o == h))
        .collect()
}

fn label_of(inputs: &[Input]) -> String {
    inputs
        .iter()
        .map(|i| i.file.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Results CSVs: their rows under the union of their columns (and `file`
/// when there are several).
fn combine_results(mut inputs: Vec<Input>) -> Table {
    let malformed = inputs.iter_mut().find_map(|i| i.malformed.take());
    let several = inputs.len() > 1;
    let mut headers = union(inputs.iter().map(|i| i.headers.as_slice()));
    if several && !headers.iter().any(|h| h == FILE_COLUMN) {
        headers.push(FILE_COLUMN.to_string());
    }
    let label = label_of(&inputs);
    let files: Vec<String> = inputs.iter().map(|i| i.file.clone()).collect();
    let mut records = Vec::new();
    let mut origin = Vec::new();
    let mut notes = Vec::new();
    for (k, input) in inputs.into_iter().enumerate() {
        let map = mapping(&headers, &input.headers);
        if several {
            let missing: Vec<&str> = headers
                .iter()
                .zip(&map)
                .filter(|(h, m)| m.is_none() && h.as_str() != FILE_COLUMN)
                .map(|(h, _)| h.as_str())
                .collect();
            if !missing.is_empty() && missing.len() <= 6 {
                notes.push(format!(
                    "{} has no column {}: its rows have no value there",
                    input.file,
                    missing.join(", ")
                ));
            }
        }
        for (rec, line) in input.records.iter().zip(&input.lines) {
            let cells: Vec<&str> = headers
                .iter()
                .zip(&map)
                .map(|(h, m)| match m {
                    Some(c) => rec.get(*c).unwrap_or(""),
                    None if h == FILE_COLUMN => input.stem.as_str(),
                    None => "",
                })
                .collect();
            records.push(csv::StringRecord::from(cells));
            origin.push((k, *line));
        }
    }
    Table {
        label,
        headers,
        records,
        origin,
        files,
        malformed,
        hist: false,
        notes,
    }
}

/// Histogram CSVs: their bins, each joined on `point` with the results CSV
/// given with it (the nearest before it, else the nearest after it).
fn combine_hist(mut inputs: Vec<Input>) -> Table {
    let malformed = inputs.iter_mut().find_map(|i| i.malformed.take());
    let is_hist: Vec<bool> = inputs.iter().map(Input::is_hist).collect();
    let partner = |i: usize| -> Option<usize> {
        (0..i)
            .rev()
            .find(|&j| !is_hist[j])
            .or_else(|| (i + 1..inputs.len()).find(|&j| !is_hist[j]))
    };
    let hists: Vec<usize> = (0..inputs.len()).filter(|&i| is_hist[i]).collect();
    let several = hists.len() > 1;
    let hist_headers = &inputs[hists[0]].headers;
    // The histogram's columns, then the joined results columns, then `file`.
    let partners: Vec<usize> = hists.iter().filter_map(|&i| partner(i)).collect();
    let mut headers = union(
        std::iter::once(hist_headers.as_slice())
            .chain(hists.iter().map(|&i| inputs[i].headers.as_slice()))
            .chain(partners.iter().map(|&j| inputs[j].headers.as_slice())),
    );
    if several && !headers.iter().any(|h| h == FILE_COLUMN) {
        headers.push(FILE_COLUMN.to_string());
    }
    let label = label_of(&inputs);
    let files: Vec<String> = inputs.iter().map(|i| i.file.clone()).collect();
    let mut records = Vec::new();
    let mut origin = Vec::new();
    let mut notes = Vec::new();
    for &h in &hists {
        let input = &inputs[h];
        let map = mapping(&headers, &input.headers);
        let joined = partner(h).map(|j| {
            let res = &inputs[j];
            let point = res.headers.iter().position(|c| c == "point");
            let by_point: HashMap<&str, &csv::StringRecord> = match point {
                Some(pc) => res
                    .records
                    .iter()
                    .map(|r| (r.get(pc).unwrap_or(""), r))
                    .collect(),
                None => HashMap::new(),
            };
            (mapping(&headers, &res.headers), by_point, res.file.as_str())
        });
        let hp = input.headers.iter().position(|c| c == "point");
        let mut unmatched = 0usize;
        for (rec, line) in input.records.iter().zip(&input.lines) {
            let point = hp.and_then(|c| rec.get(c)).unwrap_or("");
            let res_row = joined.as_ref().and_then(|(_, rows, _)| rows.get(point));
            if joined.is_some() && res_row.is_none() {
                unmatched += 1;
            }
            let cells: Vec<&str> = headers
                .iter()
                .enumerate()
                .map(|(c, name)| match map[c] {
                    Some(i) => rec.get(i).unwrap_or(""),
                    None if name == FILE_COLUMN => input.stem.as_str(),
                    None => match (&joined, res_row) {
                        (Some((rmap, _, _)), Some(r)) => {
                            rmap[c].and_then(|i| r.get(i)).unwrap_or("")
                        }
                        _ => "",
                    },
                })
                .collect();
            records.push(csv::StringRecord::from(cells));
            origin.push((h, *line));
        }
        match &joined {
            Some((_, _, res)) if unmatched > 0 => notes.push(format!(
                "{}: {unmatched} bin(s) of points that have no row in {res}",
                input.file
            )),
            Some(_) => {}
            None => notes.push(format!(
                "{}: no results CSV given with it, so its curves are named by point (give the \
                 run's CSV before it: qsweep plot run.csv {})",
                input.file, input.file
            )),
        }
    }
    Table {
        label,
        headers,
        records,
        origin,
        files,
        malformed,
        hist: true,
        notes,
    }
}

impl Table {
    /// The options a histogram figure is drawn with: x `bin_upper` and y
    /// `ccdf` (unless `--x`/`--y` name others), both axes logarithmic, and,
    /// unless `--by` names other columns than the default, one curve per
    /// point labelled by the axes that differ between the curves.
    pub(super) fn adjust(&self, opts: &super::PlotOptions) -> super::PlotOptions {
        let mut o = opts.clone();
        if !self.hist {
            return o;
        }
        let defaults = super::PlotOptions::default();
        if o.x.trim().is_empty() {
            o.x = HIST_X.to_string();
        }
        if o.y == defaults.y {
            o.y = vec![HIST_Y.to_string()];
        }
        o.log_x = true;
        o.analytic = false;
        if o.by == defaults.by {
            o.by = self.curve_keys(&o.facet);
        }
        o
    }

    /// The columns that tell the curves (one per file and point) apart: the
    /// axes whose values differ between them, with `point` (and `file`)
    /// where those do not tell every curve apart.
    fn curve_keys(&self, facet: &[String]) -> Vec<String> {
        const AXES: [&str; 9] = [
            "routing", "servers", "workers", "arrival", "lambda", "rho", "service", "choices",
            "routers",
        ];
        let col = |name: &str| self.headers.iter().position(|h| h == name);
        let (Some(point), file) = (col("point"), col(FILE_COLUMN)) else {
            return vec![];
        };
        // One record per curve.
        let mut curves: Vec<&csv::StringRecord> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in &self.records {
            let key = (
                file.and_then(|f| r.get(f)).unwrap_or(""),
                r.get(point).unwrap_or(""),
            );
            if seen.insert(key) {
                curves.push(r);
            }
        }
        let taken = |n: &str| facet.iter().any(|f| f == n);
        let mut keys: Vec<String> = Vec::new();
        for name in AXES {
            let Some(c) = col(name) else { continue };
            if taken(name) {
                continue;
            }
            let distinct: std::collections::HashSet<&str> =
                curves.iter().map(|r| r.get(c).unwrap_or("")).collect();
            if distinct.len() > 1 {
                keys.push(name.to_string());
            }
        }
        // ρ and λ are tied through servers, workers and the service law: of
        // the two, only the one the spec listed (fewer distinct values)
        // names the curves, and neither where the others vary already.
        let distinct = |name: &str| {
            col(name).map_or(0, |c| {
                curves
                    .iter()
                    .map(|r| r.get(c).unwrap_or(""))
                    .collect::<std::collections::HashSet<_>>()
                    .len()
            })
        };
        let has = |keys: &[String], k: &str| keys.iter().any(|x| x == k);
        if has(&keys, "rho") && has(&keys, "lambda") {
            let drop = if distinct("rho") < distinct("lambda") {
                "lambda"
            } else {
                "rho"
            };
            keys.retain(|k| k != drop);
        }
        // A load the other keys determine (ρ of a fleet at one λ) says nothing more.
        for load in ["rho", "lambda"] {
            let Some(lc) = col(load).filter(|_| has(&keys, load)) else {
                continue;
            };
            let others: Vec<usize> = keys
                .iter()
                .filter(|k| *k != "rho" && *k != "lambda")
                .filter_map(|k| col(k))
                .collect();
            if others.is_empty() {
                continue;
            }
            let mut seen: HashMap<Vec<&str>, &str> = HashMap::new();
            let determined = curves.iter().all(|r| {
                let key: Vec<&str> = others.iter().map(|&c| r.get(c).unwrap_or("")).collect();
                let v = r.get(lc).unwrap_or("");
                *seen.entry(key).or_insert(v) == v
            });
            if determined {
                keys.retain(|k| k != load);
            }
        }
        // `routing` already carries choices and routers along.
        if keys.iter().any(|k| k == "routing") {
            keys.retain(|k| k != "choices" && k != "routers");
        }
        let key_cols: Vec<usize> = keys.iter().chain(facet).filter_map(|k| col(k)).collect();
        let unique = {
            let mut s = std::collections::HashSet::new();
            curves.iter().all(|r| {
                s.insert(
                    key_cols
                        .iter()
                        .map(|&c| r.get(c).unwrap_or(""))
                        .collect::<Vec<_>>(),
                )
            })
        };
        if !unique || keys.is_empty() && curves.len() > 1 {
            if file.is_some() && !keys.iter().any(|k| k == FILE_COLUMN) {
                keys.push(FILE_COLUMN.to_string());
            }
            keys.push("point".to_string());
        }
        keys
    }
}
