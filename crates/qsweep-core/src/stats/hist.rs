//! Reading the engines' log-spaced wait histograms: a quantile and the CDF,
//! each bin's waits spread linearly over it (see the binning error in the
//! module doc of [`super`]).

use crate::contract::{hist_bin_edges, HIST_OVERFLOW_BIN, HIST_ZERO_BIN};

/// The `q` quantile of a histogram of scaled times, in unscaled units,
/// interpolated linearly inside its bin. `max` (unscaled, the largest time
/// binned) closes the last bins. None for an empty histogram.
pub fn hist_quantile(counts: &[u64], q: f64, scale: f64, max: f64) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = q * total as f64;
    let mut below = 0u64;
    for (bin, &c) in counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let bin = bin as u32;
        if (below + c) as f64 >= rank {
            if bin == HIST_ZERO_BIN {
                return Some(0.0);
            }
            let (lo, hi) = bin_span(bin, scale, max);
            let frac = ((rank - below as f64) / c as f64).clamp(0.0, 1.0);
            return Some((lo + frac * (hi - lo)) * scale);
        }
        below += c;
    }
    Some(max)
}

/// The span (scaled units) over which [`hist_quantile`] spreads a bin's
/// counts: the bin, cut at the largest value `max` (unscaled).
pub(super) fn bin_span(bin: u32, scale: f64, max: f64) -> (f64, f64) {
    let (lo, hi) = hist_bin_edges(bin);
    let top = (max / scale).max(lo);
    (
        lo,
        if bin == HIST_OVERFLOW_BIN {
            top
        } else {
            hi.min(top)
        },
    )
}

/// The fraction of a histogram's counts at or below `t` (unscaled): the
/// inverse of [`hist_quantile`] (same linear interpolation inside a bin).
/// 0 for an empty histogram.
pub fn hist_cdf(counts: &[u64], t: f64, scale: f64, max: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 || t < 0.0 {
        return 0.0;
    }
    let x = t / scale;
    let mut below = 0.0;
    for (bin, &c) in counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let bin = bin as u32;
        if bin == HIST_ZERO_BIN {
            below += c as f64;
            continue;
        }
        let (lo, hi) = bin_span(bin, scale, max);
        if x >= hi {
            below += c as f64;
            continue;
        }
        if x > lo {
            below += c as f64 * (x - lo) / (hi - lo);
        }
        break;
    }
    below / total as f64
}
