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

use std::collections::BTreeSet;
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

/// Keeps, in the histogram CSV at `path`, the header and the whole rows of
/// the points in `kept`, dropping the rest: the rows of a point whose
/// results row was never written (a stop or a full disk while its rows were
/// written: they come before its results row) and a torn last line. So a
/// resumed `--hist` has each point's rows once and whole (issue 40: a full
/// disk left torn 9-field rows and points missing bins, which `--resume`
/// kept). Rewritten whole ([`crate::files::Staged`]), only when something
/// is dropped.
pub fn keep_points(path: &Path, kept: &BTreeSet<u32>) -> Result<()> {
    let named = || format!("--hist: reading {}", path.display());
    let bytes = std::fs::read(path).with_context(named)?;
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut dropped = false;
    let mut lines = bytes.split_inclusive(|&b| b == b'\n');
    match lines.next() {
        Some(h) if h.ends_with(b"\n") => out.extend_from_slice(h),
        // Empty, or a torn header: started again by the sink.
        _ => dropped = !bytes.is_empty(),
    }
    for line in lines {
        let whole = line.ends_with(b"\n")
            && line.iter().filter(|&&b| b == b',').count() == HIST_COLUMNS.len() - 1;
        let point = line
            .split(|&b| b == b',')
            .next()
            .and_then(|p| std::str::from_utf8(p).ok()?.parse::<u32>().ok());
        match point {
            Some(p) if whole && kept.contains(&p) => out.extend_from_slice(line),
            _ => dropped = true,
        }
    }
    if dropped {
        crate::files::write_whole(path, &out, true)
            .with_context(|| format!("--hist: rewriting {}", path.display()))?;
    }
    Ok(())
}

/// A histogram CSV being written, flushed after each point.
pub struct HistSink {
    path: PathBuf,
    writer: csv::Writer<File>,
}

impl HistSink {
    /// Creates `path` (an existing file is refused unless `force`), or with
    /// `append` adds to it (`--resume`: the points this invocation runs),
    /// after keeping only the rows of the points in `kept` (those the
    /// results CSV holds; see [`keep_points`]).
    pub fn open(path: &Path, force: bool, append: Option<&BTreeSet<u32>>) -> Result<HistSink> {
        let exists = path.symlink_metadata().is_ok();
        let file = if let (Some(kept), true) = (append, exists) {
            keep_points(path, kept)?;
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
    fn a_resumed_histogram_keeps_the_whole_rows_of_the_kept_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.csv");
        let header = format!("{}\n", HIST_COLUMNS.join(","));
        // Point 0 whole, point 1 (no results row) cut short in a line.
        let text = format!("{header}0,0,1,5,0.5\n0,1,2,5,0\n1,0,1,3,0.7\n1,1,2");
        std::fs::write(&path, &text).unwrap();
        keep_points(&path, &BTreeSet::from([0])).unwrap();
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(kept, format!("{header}0,0,1,5,0.5\n0,1,2,5,0\n"));
        // Nothing to drop: the file is left as it is.
        keep_points(&path, &BTreeSet::from([0, 1])).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), kept);
        // Two rows run together (a torn line, then an append) are dropped.
        std::fs::write(&path, format!("{header}0,0,1,5,0.5\n0,1,20,0,1,5,0\n")).unwrap();
        keep_points(&path, &BTreeSet::from([0])).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{header}0,0,1,5,0.5\n")
        );
    }

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
