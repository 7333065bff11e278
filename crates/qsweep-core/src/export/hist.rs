//! `qsweep run --hist FILE`: each point's wait histogram as tidy CSV, one
//! row per non-empty bin, written as the point finishes:
//!
//! `point,bin_lower,bin_upper,count,ccdf`
//!
//! - `point` joins the results CSV's `point` column;
//! - `bin_lower`, `bin_upper`: the bin's edges in the spec's time unit (the
//!   exact-zero bin is `0,0`; the first bin above it starts at 0; the
//!   overflow bin ends at the largest wait observed). Bins are the run's own
//!   histogram: 64 log-linear bins per octave, the same counts the
//!   percentile columns are read from;
//! - `count`: waits in the bin, pooled over every replication (warm-up
//!   excluded);
//! - `ccdf`: the fraction of all waits above `bin_upper`, i.e. P(W > t) at
//!   t = `bin_upper` (at the zero bin, P(W > 0), the `p_wait` of the pooled
//!   customers). Plotting `ccdf` against `bin_upper` on log axes gives the
//!   tail.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::contract::{hist_bin_edges, HIST_BINS, HIST_OVERFLOW_BIN};
use crate::output::num;
use crate::UsageError;

/// The header of a histogram CSV.
pub const HIST_COLUMNS: [&str; 5] = ["point", "bin_lower", "bin_upper", "count", "ccdf"];

/// One point's pooled histogram as tidy rows.
pub fn hist_rows(point: u32, sections: &[Vec<u64>], scale: f64, max_wait: f64) -> Vec<[String; 5]> {
    let bins = HIST_BINS as usize;
    let mut pooled = vec![0u64; bins];
    for s in sections {
        for (p, &c) in pooled.iter_mut().zip(s.iter()) {
            *p += c;
        }
    }
    let total: u64 = pooled.iter().sum();
    let mut above = total;
    let mut rows = Vec::new();
    for (bin, &count) in pooled.iter().enumerate() {
        if count == 0 {
            continue;
        }
        above -= count;
        let (lo, hi) = hist_bin_edges(bin as u32);
        let hi = if bin as u32 == HIST_OVERFLOW_BIN {
            (max_wait / scale).max(lo)
        } else {
            hi
        };
        rows.push([
            point.to_string(),
            num(lo * scale),
            num(hi * scale),
            count.to_string(),
            num(above as f64 / total as f64),
        ]);
    }
    rows
}

/// A histogram CSV being written, flushed after each point.
pub struct HistSink {
    path: PathBuf,
    writer: csv::Writer<File>,
}

impl HistSink {
    /// Creates `path` (an existing file is refused unless `force`), or with
    /// `append` adds to it (`--resume`: the points this invocation runs).
    pub fn open(path: &Path, force: bool, append: bool) -> Result<HistSink> {
        let exists = path.symlink_metadata().is_ok();
        let file = if append && exists {
            OpenOptions::new().append(true).open(path)
        } else {
            if exists && !force {
                return Err(UsageError(format!(
                    "--hist: '{}' already exists; expected a new file (pass --force to \
                     overwrite it)",
                    path.display()
                ))
                .into());
            }
            File::create(path)
        }
        .map_err(|e| UsageError(format!("--hist: cannot open '{}': {e}", path.display())))?;
        // Every I/O error names the file (issue 25).
        let named = || format!("writing {}", path.display());
        let empty = file.metadata().with_context(named)?.len() == 0;
        let mut writer = csv::Writer::from_writer(file);
        if empty {
            writer.write_record(HIST_COLUMNS).with_context(named)?;
            writer.flush().with_context(named)?;
        }
        Ok(HistSink {
            path: path.to_path_buf(),
            writer,
        })
    }

    /// Writes one point's rows.
    pub fn write(
        &mut self,
        point: u32,
        sections: &[Vec<u64>],
        scale: f64,
        max_wait: f64,
    ) -> Result<()> {
        for row in hist_rows(point, sections, scale, max_wait) {
            self.writer
                .write_record(&row)
                .with_context(|| format!("writing {}", self.path.display()))?;
        }
        self.writer
            .flush()
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::hist_bin;

    #[test]
    fn rows_are_the_non_empty_bins_with_their_tail_fraction() {
        let mut h = vec![0u64; HIST_BINS as usize];
        h[0] = 6;
        h[hist_bin(1.0) as usize] += 3;
        h[hist_bin(4.0) as usize] += 1;
        let sections = vec![h.clone(), h];
        let rows = hist_rows(7, &sections, 0.5, 2.0);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0], ["7", "0", "0", "12", "0.4"].map(String::from));
        // Scaled bins: the value 1.0 (scaled) is a wait of 0.5.
        let lo: f64 = rows[1][1].parse().unwrap();
        let hi: f64 = rows[1][2].parse().unwrap();
        assert!(
            lo <= 0.5 && 0.5 < hi && hi / lo < 1.0 + 1.0 / 64.0 + 1e-9,
            "{rows:?}"
        );
        assert_eq!((rows[1][3].as_str(), rows[1][4].as_str()), ("6", "0.1"));
        assert_eq!((rows[2][3].as_str(), rows[2][4].as_str()), ("2", "0"));
    }
}
