//! Reading `empirical(file=...)` data files and `trace(file=...)`
//! timestamp files.
//!
//! Why this module exists: an empirical law is only as trustworthy as the
//! file behind it, so reading it (path resolution, comments, the checks on
//! every line and their one-line messages) is kept apart from the law's
//! arithmetic. The values are rounded to f32 here, once, so that the exact
//! moments computed elsewhere describe what the engines actually sample.

use std::path::Path;

use super::{DistError, Role};

/// Where `file=` points: as given when absolute, else beside the spec.
pub(super) fn resolve(file: &str, base_dir: &Path) -> std::path::PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base_dir.join(path)
    }
}

/// The text of a data file, or its one-line refusal (`what` names the law).
fn read_data(what: &str, file: &str, base_dir: &Path) -> Result<String, DistError> {
    let full = resolve(file, base_dir);
    let fail = |msg: String| DistError(format!("{what} file '{file}' {msg}"));
    // A FIFO would block the read forever (issue 25).
    if let Some(kind) = crate::files::special(&full) {
        return Err(fail(format!(
            "is {kind} (looked at {}); expected a regular text file",
            full.display()
        )));
    }
    let content = std::fs::read_to_string(&full).map_err(|e| {
        fail(format!(
            "cannot be read ({e}; looked at {}); expected a readable text file",
            full.display()
        ))
    })?;
    Ok(match content.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => content,
    })
}

/// Read a trace file: one timestamp per line, in nondecreasing order (any
/// unit: the load rescales the trace to the point's rate); blank lines and
/// lines starting with '#' skipped. Returns the gaps between consecutive
/// timestamps in file order, computed in f64 (so absolute timestamps such
/// as Unix epoch seconds keep their sub-millisecond differences) and then
/// rounded to f32, the precision the engines replay them at.
pub(super) fn load_trace(file: &str, base_dir: &Path) -> Result<Vec<f64>, DistError> {
    let content = read_data("arrival: trace", file, base_dir)?;
    let fail = |msg: String| DistError(format!("arrival: trace file '{file}' {msg}"));
    let mut gaps = Vec::new();
    let mut last: Option<(f64, usize)> = None;
    for (i, line) in content.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let lineno = i + 1;
        let t: f64 = line.parse().map_err(|_| {
            fail(format!(
                "line {lineno}: '{line}' is not a number; expected one timestamp per line \
                 ('#' starts a comment line)"
            ))
        })?;
        if !t.is_finite() {
            return Err(fail(format!(
                "line {lineno}: '{line}' is not a finite number; expected one timestamp per line"
            )));
        }
        if let Some((prev, prev_line)) = last {
            if t < prev {
                return Err(fail(format!(
                    "line {lineno}: timestamp {line} is before line {prev_line}'s; expected \
                     timestamps in nondecreasing order (sort the log first)"
                )));
            }
            let gap = t - prev;
            if !gap.is_finite() {
                return Err(fail(format!(
                    "line {lineno}: the gap after line {prev_line} is {gap:e}, beyond f64; \
                     expected timestamps of moderate size"
                )));
            }
            gaps.push((gap, lineno, prev_line));
        }
        last = Some((t, lineno));
    }
    if gaps.is_empty() {
        return Err(fail(
            "has fewer than two timestamps; expected one timestamp per line, at least two".into(),
        ));
    }
    if gaps.iter().all(|&(g, ..)| g == 0.0) {
        return Err(fail(
            "has all its timestamps equal; expected timestamps that advance".into(),
        ));
    }
    // Any unit will do, as the load rescales the trace to the point's rate;
    // but a unit far from the gaps' own (1e-39 between timestamps) left them
    // subnormal in f32 and the rescale factor infinite: mean wait 0 at rho
    // 0.8, silently (issue 40). Such a trace is first brought near 1 by a
    // power of two, exact in binary floating point. A trace whose mean gap
    // is within 2^±60 is kept as it is, so its results do not change.
    let mean = gaps
        .iter()
        .map(|&(g, ..)| g / gaps.len() as f64)
        .sum::<f64>();
    let unit = if (2f64.powi(-60)..=2f64.powi(60)).contains(&mean) {
        1.0
    } else {
        2f64.powi(-(mean.log2().round() as i32))
    };
    gaps.into_iter()
        .map(|(gap, lineno, prev_line)| {
            let g = gap * unit;
            if !(g as f32).is_finite() {
                return Err(fail(format!(
                    "line {lineno}: the gap after line {prev_line} is {gap:e}, {:e} times the \
                     mean gap, beyond f32; expected timestamps of moderate spread",
                    gap / mean
                )));
            }
            Ok(f64::from(g as f32))
        })
        .collect()
}

/// Read an empirical file: one nonnegative number per line; blank lines and
/// lines starting with '#' skipped. Returns the values sorted, rounded to f32
/// (the precision of the engines' table, so moments describe what is sampled).
pub(super) fn load_empirical(
    role: Role,
    file: &str,
    base_dir: &Path,
) -> Result<Vec<f64>, DistError> {
    let content = read_data(&format!("{role}: empirical"), file, base_dir)?;
    let fail = |msg: String| DistError(format!("{role}: empirical file '{file}' {msg}"));
    let mut values = Vec::new();
    for (i, line) in content.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let lineno = i + 1;
        let v: f64 = line
            .parse()
            .map_err(|_| fail(format!("line {lineno}: '{line}' is not a number; expected one nonnegative number per line ('#' starts a comment line)")))?;
        if !v.is_finite() || !(v as f32).is_finite() {
            return Err(fail(format!(
                "line {lineno}: '{line}' is not a finite number; expected one nonnegative number per line"
            )));
        }
        if v < 0.0 {
            return Err(fail(format!(
                "line {lineno}: negative value {line}; expected nonnegative numbers"
            )));
        }
        values.push(f64::from(v as f32) + 0.0); // + 0.0 turns -0 into +0
    }
    if values.is_empty() {
        return Err(fail(
            "is empty; expected one nonnegative number per line".into(),
        ));
    }
    if values.iter().all(|&v| v == 0.0) {
        return Err(fail(
            "has only zero values; expected some positive value".into(),
        ));
    }
    values.sort_by(f64::total_cmp);
    Ok(values)
}
