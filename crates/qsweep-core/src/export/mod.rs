//! Results in other formats than CSV: JSON, Markdown and Parquet, by the
//! output's extension (`-o results.parquet`, `qsweep export`), and each
//! point's wait histogram as tidy CSV (`run --hist`, [`hist`]).
//!
//! The CSV stays the record of a run: it is written and flushed row by row
//! as points finish, `--resume` continues it and `merge` joins it. The other
//! formats are whole-file formats (a Parquet footer, a JSON array), so a run
//! asked for one writes the CSV beside it (`results.parquet` →
//! `results.csv` + `results.meta.json`) and converts it once the run is
//! complete; `qsweep export IN.csv OUT` converts any results CSV.
//!
//! In these formats every `X_ci95` column stands right after `X` (the CSV
//! keeps its historical order, where columns are only ever appended), and
//! values are typed (see [`Kind`]): numbers as numbers, `true`/`false` as
//! booleans, empty fields as null.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::files::Unwritten;
use crate::UsageError;

pub mod hist;
mod json;
mod markdown;
mod parquet;

/// A results file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    Markdown,
    Parquet,
}

impl Format {
    /// What an output name may end with, for messages.
    pub const EXPECTED: &'static str = ".csv, .json, .md or .parquet";

    /// The format a path's extension names. No extension is CSV (as before
    /// formats existed), and so is `.partial` (the CSV a `--force` run
    /// writes until it completes, which its resume command names).
    pub fn of_path(path: &Path) -> Result<Format, UsageError> {
        if path.to_string_lossy().ends_with(".meta.json") {
            // Another run's provenance must never be overwritten by an export.
            return Err(UsageError(format!(
                "out: '{}' is a .meta.json name; expected a results file (its .meta.json is \
                 written beside it)",
                path.display()
            )));
        }
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            None | Some("csv") | Some("partial") => Ok(Format::Csv),
            Some(other) => Format::from_name(other).map_err(|_| {
                UsageError(format!(
                    "out: '{}' has the unknown extension '.{other}'; expected {} (or - for CSV \
                     on stdout)",
                    path.display(),
                    Format::EXPECTED
                ))
            }),
        }
    }

    /// A format by name (`--format`): csv, json, md (markdown) or parquet.
    pub fn from_name(name: &str) -> Result<Format, UsageError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "md" | "markdown" => Ok(Format::Markdown),
            "parquet" => Ok(Format::Parquet),
            other => Err(UsageError(format!(
                "--format: '{other}' is not a valid value; expected csv, json, md or parquet"
            ))),
        }
    }

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Markdown => "md",
            Format::Parquet => "parquet",
        }
    }
}

/// The CSV a run asked for `out` writes (and resumes): `out` itself for
/// CSV, else `out` with the extension `.csv`.
pub fn csv_beside(out: &Path, format: Format) -> PathBuf {
    match format {
        Format::Csv => out.to_path_buf(),
        _ => out.with_extension("csv"),
    }
}

/// A results table: a header and rows of text fields, as in the CSV.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads a CSV with a header row (a results CSV of `qsweep run`,
    /// `merge` or `analytic -o`). Every row must have the header's width.
    pub fn read_csv(path: &Path) -> Result<Table> {
        crate::files::regular_input(path, "input")?;
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(|e| {
                UsageError(format!(
                    "cannot read '{}': {e}; expected a results CSV",
                    path.display()
                ))
            })?;
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| UsageError(format!("'{}': {e}", path.display())))?
            .iter()
            .map(str::to_string)
            .collect();
        let mut rows = Vec::new();
        for (i, rec) in rdr.records().enumerate() {
            // Line numbers count the header.
            let rec = rec.map_err(|e| {
                UsageError(format!(
                    "'{}': line {}: {e}; expected every row as wide as the header",
                    path.display(),
                    i + 2
                ))
            })?;
            rows.push(rec.iter().map(str::to_string).collect());
        }
        Ok(Table { header, rows })
    }

    /// Only `columns`, in that order; each must exist, once (a JSON object
    /// with a key twice is read differently by every parser; issue 40).
    pub fn select(&self, columns: &[String]) -> Result<Table, UsageError> {
        if let Some((_, c)) = columns
            .iter()
            .enumerate()
            .find(|(i, c)| columns[..*i].contains(c))
        {
            return Err(UsageError(format!(
                "--columns: '{c}' is given twice; expected each column once"
            )));
        }
        let idx: Vec<usize> = columns
            .iter()
            .map(|c| {
                self.header.iter().position(|h| h == c).ok_or_else(|| {
                    UsageError(format!(
                        "--columns: '{c}' is not a column of this CSV; expected some of {}",
                        self.header.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(self.pick(&idx))
    }

    /// The same columns with every `X_ci95` moved right after `X` (where an
    /// `X` exists; others keep their place).
    pub fn ci_beside_estimates(&self) -> Table {
        let mut order: Vec<usize> = Vec::with_capacity(self.header.len());
        let has_estimate = |h: &str| {
            h.strip_suffix("_ci95")
                .is_some_and(|x| self.header.iter().any(|o| o == x))
        };
        for (i, h) in self.header.iter().enumerate() {
            if has_estimate(h) {
                continue;
            }
            order.push(i);
            let ci = format!("{h}_ci95");
            if let Some(j) = self.header.iter().position(|o| *o == ci) {
                order.push(j);
            }
        }
        self.pick(&order)
    }

    fn pick(&self, idx: &[usize]) -> Table {
        Table {
            header: idx.iter().map(|&i| self.header[i].clone()).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| idx.iter().map(|&i| r[i].clone()).collect())
                .collect(),
        }
    }

    /// Each column's type: from its name for every column qsweep writes, so
    /// that files of different runs have the same schema whatever their
    /// cells (an all-empty `max_in_system` is still an integer column); only
    /// a column qsweep does not write is typed by its values (see [`Kind`]).
    /// A cell that is not a value of its column's type is refused, naming
    /// the column and the line.
    pub fn kinds(&self) -> Result<Vec<Kind>, UsageError> {
        (0..self.header.len())
            .map(|c| {
                let name = &self.header[c];
                let Some(kind) = Kind::known(name) else {
                    return Ok(Kind::of_values(|| self.rows.iter().map(|r| r[c].as_str())));
                };
                match self
                    .rows
                    .iter()
                    .enumerate()
                    .find(|(_, r)| !r[c].is_empty() && !kind.accepts(&r[c]))
                {
                    None => Ok(kind),
                    Some((i, r)) => Err(UsageError(format!(
                        "column '{name}', line {}: '{}' is not {}; expected every value of \
                         '{name}' to be one (or empty)",
                        i + 2,
                        r[c],
                        kind.described()
                    ))),
                }
            })
            .collect()
    }

    /// The table in `format`.
    pub fn encode(&self, format: Format) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        match format {
            Format::Csv => {
                let mut w = csv::Writer::from_writer(&mut buf);
                w.write_record(&self.header)?;
                for r in &self.rows {
                    w.write_record(r)?;
                }
                w.flush()?;
            }
            Format::Json => json::write(self, &self.kinds()?, &mut buf)?,
            Format::Markdown => markdown::write(self, &self.kinds()?, &mut buf)?,
            Format::Parquet => buf = parquet::encode(self, &self.kinds()?)?,
        }
        Ok(buf)
    }
}

/// The type of a column in the typed formats: from the column's name for
/// every column qsweep writes ([`Kind::known`]), never from its cells, so
/// that the files of different runs concatenate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Signed 64-bit integers (`point`, `servers`, `reps`, …).
    Int,
    /// Unsigned 64-bit integers (`seed`, which may exceed 2^63).
    UInt,
    /// 64-bit floats (estimates, CIs, rates).
    Float,
    /// `true` / `false` (`stable`, `converged`).
    Bool,
    /// Text (`routing`, `service`, `analytic_method`, …).
    Text,
}

impl Kind {
    /// The type of a column qsweep does not write: the narrowest of
    /// integer, float, boolean and text that fits every non-empty value (all
    /// empty: text).
    pub fn of_values<'a, I: Iterator<Item = &'a str>>(values: impl Fn() -> I) -> Kind {
        let fits = |k: Kind| values().filter(|v| !v.is_empty()).all(|v| k.accepts(v));
        if values().all(str::is_empty) {
            return Kind::Text;
        }
        [Kind::Int, Kind::UInt, Kind::Float, Kind::Bool]
            .into_iter()
            .find(|&k| fits(k))
            .unwrap_or(Kind::Text)
    }

    /// The type of a column qsweep writes, by name: the results CSV's
    /// (`output::TABLE`, and the `qQ_wait` quantile columns), `analytic
    /// -o`'s and the histogram CSV's (`run --hist`). `None` for any other
    /// name. A test checks that every column of `output::TABLE` has one.
    pub fn known(name: &str) -> Option<Kind> {
        Some(match name {
            // The patience law and the capacity K are "none" where a point
            // has none: text, whatever the cells. A fleet (`speeds`) is text,
            // and so are its per-class columns: one number per class,
            // `;`-separated (`output::fleet_columns`).
            "routing"
            | "arrival"
            | "service"
            | "backend"
            | "analytic_method"
            | "error"
            | "patience"
            | "capacity"
            | "mean_wait_flag"
            | "speeds"
            | "class_mean_wait"
            | "class_mean_wait_ci95"
            | "analytic_class_mean_wait" => Kind::Text,
            "stable" | "converged" => Kind::Bool,
            "point" | "servers" | "workers" | "reps" | "customers" | "warmup" | "choices"
            | "routers" | "waited" | "max_in_system" | "warmup_truncation" | "count" => Kind::Int,
            "seed" => Kind::UInt,
            "lambda" | "rho" | "seconds" | "customers_per_s" | "bin_lower" | "bin_upper"
            | "ccdf" | "p_abandon" | "p_timeout" | "p_block" | "arrival_dispersion" => Kind::Float,
            _ if name.ends_with("_wait")
                || name.ends_with("_ci95")
                || name.ends_with("_upper95")
                || name.ends_with("_sojourn")
                || name.starts_with("service_")
                || name.starts_with("analytic_")
                || name.starts_with("rel_err_")
                || name.starts_with("z_")
                || name.starts_with("p_wait_gt_") =>
            {
                Kind::Float
            }
            _ => return None,
        })
    }

    /// The type as messages name it: "an integer", "a number", …
    pub fn described(self) -> &'static str {
        match self {
            Kind::Int => "an integer",
            Kind::UInt => "a non-negative integer",
            Kind::Float => "a number",
            Kind::Bool => "true or false",
            Kind::Text => "text",
        }
    }

    /// The name Python's loader types a column by (`qsweep._qsweep.column_kind`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::UInt => "uint",
            Kind::Float => "float",
            Kind::Bool => "bool",
            Kind::Text => "text",
        }
    }

    /// Whether a non-empty field is a value of this type.
    pub fn accepts(self, v: &str) -> bool {
        match self {
            Kind::Int => v.parse::<i64>().is_ok(),
            Kind::UInt => v.parse::<u64>().is_ok(),
            Kind::Float => v.parse::<f64>().is_ok(),
            Kind::Bool => v == "true" || v == "false",
            Kind::Text => true,
        }
    }
}

/// Writes `bytes` to `out` (an existing file is refused unless `force`), or
/// to stdout for `-`. Whole or not at all ([`crate::files::Staged`]): a
/// failed write leaves an old `out` as it was.
pub fn write_output(out: &Path, bytes: &[u8], force: bool) -> Result<()> {
    if out == Path::new("-") {
        return crate::output::to_stdout(bytes);
    }
    check_new(out, force)?;
    crate::files::write_whole(out, bytes, force).map_err(|e| match e {
        Unwritten::Create(e) => {
            UsageError(format!("out: cannot create '{}': {e}", out.display())).into()
        }
        Unwritten::Write(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            already_exists(out).into()
        }
        Unwritten::Write(e) => anyhow::Error::from(e).context(format!(
            "writing {} (nothing was written; an existing file is as it was)",
            out.display()
        )),
    })
}

fn already_exists(out: &Path) -> UsageError {
    UsageError(format!(
        "out: '{}' already exists; expected a new file (pass --force to overwrite it)",
        out.display()
    ))
}

/// Refuses an existing `out` (unless `force`) before a run that ends by
/// writing it.
pub fn check_new(out: &Path, force: bool) -> Result<(), UsageError> {
    crate::files::regular_output(out, "out")?;
    if !force && out.symlink_metadata().is_ok() {
        return Err(already_exists(out));
    }
    Ok(())
}

/// `qsweep export`: `input` (a results CSV) as `format` in `out`, with CI
/// columns beside their estimates (CSV keeps its order), optionally only
/// `columns`. Returns the rows written.
pub fn export(
    input: &Path,
    out: &Path,
    format: Format,
    columns: Option<&[String]>,
    force: bool,
) -> Result<usize> {
    let mut table = Table::read_csv(input)?;
    if let Some(cols) = columns {
        table = table.select(cols)?;
    } else if format != Format::Csv {
        table = table.ci_beside_estimates();
    }
    let bytes = table.encode(format)?;
    write_output(out, &bytes, force)?;
    Ok(table.rows.len())
}

#[cfg(test)]
mod tests;
