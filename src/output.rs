//! The results CSV: one row per grid point, written and flushed as each point
//! completes, and the summary table printed after a run.
//!
//! Column names are the product's interface: never rename one; new columns go
//! at the end of [`COLUMNS`].

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::analytic::Baseline;
use crate::spec::GridPoint;
use crate::stats::PointStats;
use crate::UsageError;

/// Every column, in order.
pub const COLUMNS: &[&str] = &[
    "point",
    "routing",
    "servers",
    "workers",
    "arrival",
    "lambda",
    "service",
    "service_mean",
    "service_scv",
    "rho",
    "stable",
    "reps",
    "customers",
    "warmup",
    "seed",
    "mean_wait",
    "mean_wait_ci95",
    "p_wait",
    "p50_wait",
    "p90_wait",
    "p95_wait",
    "p99_wait",
    "p99_wait_ci95",
    "p999_wait",
    "max_wait",
    "mean_sojourn",
    "p99_sojourn",
    "backend",
    "seconds",
    "customers_per_s",
    // Analytic baselines (see `analytic`).
    "analytic_mean_wait",
    "analytic_p99_wait",
    "analytic_method",
    "rel_err_mean_wait",
    // Sectioning CIs of the other percentiles, and of the mean sojourn.
    "p50_wait_ci95",
    "p90_wait_ci95",
    "p95_wait_ci95",
    "p999_wait_ci95",
    "mean_sojourn_ci95",
    // `--precision`: whether the CIs reached it (empty without it).
    "converged",
    // Dynamic dispatch (see `routing`): `pod`'s d (empty for the other
    // policies) and the number of routers (1 where the axis does not apply).
    "choices",
    "routers",
];

/// Columns whose values depend on the machine, not the spec and seed.
pub const TIMING_COLUMNS: &[&str] = &["backend", "seconds", "customers_per_s"];

/// Numbers with 7 significant digits, plain decimals where readable.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            String::new()
        } else {
            format!("{x}")
        };
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let mag = x.abs().log10().floor() as i32;
    if (-5..=9).contains(&mag) {
        let decimals = (6 - mag).max(0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{x:.6e}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

/// Everything known about one finished point.
pub struct Row<'a> {
    pub point: &'a GridPoint,
    pub reps: u32,
    pub customers: u32,
    pub warmup: u32,
    pub seed: u64,
    pub stats: &'a PointStats,
    pub analytic: &'a Baseline,
    pub backend: &'a str,
    pub seconds: f64,
    /// `--precision` only: whether the point's CIs reached it.
    pub converged: Option<bool>,
}

impl Row<'_> {
    pub fn fields(&self) -> Vec<String> {
        let p = self.point;
        let s = self.stats;
        let a = self.analytic;
        let simulated = f64::from(self.reps) * (f64::from(self.customers) + f64::from(self.warmup));
        let rel_err = a
            .mean_wait
            .filter(|&m| m > 0.0)
            .map(|m| (s.mean_wait - m) / m);
        vec![
            p.index.to_string(),
            p.routing.to_string(),
            p.servers.to_string(),
            p.workers.to_string(),
            p.arrival_text.clone(),
            num(p.lambda),
            p.service.text().to_string(),
            num(p.service.mean()),
            num(p.service.scv()),
            num(p.rho),
            p.stable.to_string(),
            self.reps.to_string(),
            self.customers.to_string(),
            self.warmup.to_string(),
            self.seed.to_string(),
            num(s.mean_wait),
            opt(s.mean_wait_ci95),
            num(s.p_wait),
            num(s.wait_pct[0]),
            num(s.wait_pct[1]),
            num(s.wait_pct[2]),
            num(s.wait_pct[3]),
            opt(s.wait_pct_ci95[3]),
            num(s.wait_pct[4]),
            num(s.max_wait),
            num(s.mean_sojourn),
            num(s.p99_sojourn),
            self.backend.to_string(),
            format!("{:.3}", self.seconds),
            num(if self.seconds > 0.0 {
                simulated / self.seconds
            } else {
                0.0
            }),
            opt(a.mean_wait),
            opt(a.p99_wait),
            a.method.clone(),
            opt(rel_err),
            opt(s.wait_pct_ci95[0]),
            opt(s.wait_pct_ci95[1]),
            opt(s.wait_pct_ci95[2]),
            opt(s.wait_pct_ci95[4]),
            opt(s.mean_sojourn_ci95),
            self.converged.map(|c| c.to_string()).unwrap_or_default(),
            p.choices.map(|d| d.to_string()).unwrap_or_default(),
            p.routers.to_string(),
        ]
    }
}

/// A CSV being written: header first, each row flushed as it arrives.
pub struct CsvSink {
    path: PathBuf,
    writer: csv::Writer<File>,
    pub rows: usize,
    /// Last `sync_data`.
    synced: Instant,
}

/// Longest time a written row may stay only in the page cache.
const SYNC_EVERY: Duration = Duration::from_secs(1);

impl Drop for CsvSink {
    fn drop(&mut self) {
        let _ = self.writer.flush();
        let _ = self.writer.get_ref().sync_data();
    }
}

impl CsvSink {
    /// Create `path`. An existing file is refused unless `force`, so no
    /// earlier result is ever overwritten silently.
    pub fn create(path: &Path, force: bool) -> Result<Self> {
        let mut opts = OpenOptions::new();
        opts.write(true);
        if force {
            opts.create(true).truncate(true);
        } else {
            opts.create_new(true);
        }
        let file = match opts.open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(UsageError(format!(
                    "out: '{}' already exists; expected a new file (pass --force to overwrite it)",
                    path.display()
                ))
                .into())
            }
            Err(e) => {
                return Err(
                    UsageError(format!("out: cannot create '{}': {e}", path.display())).into(),
                )
            }
        };
        Self::from_file(path, file, true)
    }

    /// Open an existing CSV to add rows after its last one (`--resume`). An
    /// empty file gets the header first. The caller has checked the file
    /// (see `resume::scan_csv`): its rows are whole and its header is ours.
    pub fn append(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| UsageError(format!("out: cannot open '{}': {e}", path.display())))?;
        let empty = file.metadata()?.len() == 0;
        Self::from_file(path, file, empty)
    }

    /// A sink writing to `file`, starting with the header when `header`.
    fn from_file(path: &Path, file: File, header: bool) -> Result<Self> {
        let mut writer = csv::Writer::from_writer(file);
        if header {
            writer.write_record(COLUMNS)?;
            writer.flush()?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            writer,
            rows: 0,
            synced: Instant::now(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the rows written so far durable (also done by drop).
    pub fn sync(&mut self) -> Result<()> {
        self.writer
            .get_ref()
            .sync_data()
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.synced = Instant::now();
        Ok(())
    }

    pub fn write(&mut self, fields: &[String]) -> Result<()> {
        self.writer
            .write_record(fields)
            .and_then(|_| self.writer.flush().map_err(csv::Error::from))
            .with_context(|| format!("writing {}", self.path.display()))?;
        // On disk, not just in the page cache, within a second: rows that
        // survive a power cut need not be simulated again (at most one sync a
        // second, so thousands of quick rows do not wait on the disk).
        if self.synced.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        self.rows += 1;
        Ok(())
    }
}

/// The aligned table printed after a run: the columns a reader checks first.
pub fn summary_table(rows: &[Vec<String>]) -> String {
    const SHOWN: [&str; 10] = [
        "point",
        "routing",
        "servers",
        "rho",
        "mean_wait",
        "mean_wait_ci95",
        "p99_wait",
        "p999_wait",
        "analytic_mean_wait",
        "rel_err_mean_wait",
    ];
    let idx: Vec<usize> = SHOWN
        .iter()
        .map(|c| COLUMNS.iter().position(|k| k == c).expect("known column"))
        .collect();
    let mut table: Vec<Vec<String>> = vec![SHOWN.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        table.push(
            idx.iter()
                .map(|&i| r.get(i).cloned().unwrap_or_default())
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..SHOWN.len())
        .map(|c| table.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &table {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c < 3 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Flush stdout, ignoring a closed pipe.
pub fn flush_stdout() {
    let _ = std::io::stdout().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compact_and_precise() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(16.666666666), "16.66667");
        assert_eq!(num(0.000123456789), "0.0001234568");
        assert_eq!(num(150.0), "150");
        assert_eq!(num(2.5e-9), "2.500000e-9");
        assert_eq!(num(f64::NAN), "");
    }

    #[test]
    fn issue_columns_come_first_in_order() {
        let fixed = "point,routing,servers,workers,arrival,lambda,service,service_mean,service_scv,rho,stable,reps,customers,warmup,seed,mean_wait,mean_wait_ci95,p_wait,p50_wait,p90_wait,p95_wait,p99_wait,p99_wait_ci95,p999_wait,max_wait,mean_sojourn,p99_sojourn,backend,seconds,customers_per_s";
        assert!(COLUMNS.join(",").starts_with(fixed));
    }
}
