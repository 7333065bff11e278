//! Statistics of a point from what an engine returns: one path for both
//! engines.
//!
//! - Means (wait, sojourn, P(wait > 0)) average the replication means; their
//!   95% CIs are Student t intervals over the independent replications.
//! - Percentiles come from the pooled log-spaced histogram, interpolated
//!   linearly inside the bin (bins span ≤ 1/64 of an octave, so the binning
//!   error is < 0.8%).
//! - Percentile CIs use sectioning (Asmussen & Glynn, "Stochastic
//!   Simulation", 2007, §III.5): the same percentile in each of the
//!   independent replication batches gives a Student t interval, centred on
//!   the pooled estimate.

use crate::contract::{hist_bin_edges, RepResult, HIST_BINS, HIST_OVERFLOW_BIN, HIST_ZERO_BIN};

pub use crate::dist::ln_gamma;

/// Regularized incomplete beta I_x(a, b) by Lentz's continued fraction
/// (Numerical Recipes, §6.4).
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..500 {
        let m = f64::from(m);
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        for step in [
            num,
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + step * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + step / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            f *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    ln_front.exp() * f / a
}

/// P(T ≤ t) for Student's t with `dof` degrees of freedom.
pub fn student_t_cdf(t: f64, dof: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(dof / (dof + t * t), dof / 2.0, 0.5);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p` quantile (p ≥ 0.5) of Student's t, by bisection on the CDF.
pub fn student_t_quantile(p: f64, dof: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_cdf(hi, dof) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, dof) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Half-width of the 95% Student t CI of the mean of `xs`; None for n < 2.
pub fn ci95_half_width(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    Some(student_t_quantile(0.975, (n - 1) as f64) * (var / n as f64).sqrt())
}

/// The `q` quantile of a histogram of scaled times, in unscaled units.
/// `max` (unscaled) closes the overflow bin. None for an empty histogram.
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
        if (below + c) as f64 >= rank {
            let bin = bin as u32;
            if bin == HIST_ZERO_BIN {
                return Some(0.0);
            }
            let (lo, mut hi) = hist_bin_edges(bin);
            let (lo, hi) = if bin == HIST_OVERFLOW_BIN {
                hi = (max / scale).max(lo);
                (lo, hi)
            } else {
                (lo, hi.min((max / scale).max(lo)))
            };
            let frac = ((rank - below as f64) / c as f64).clamp(0.0, 1.0);
            return Some((lo + frac * (hi - lo)) * scale);
        }
        below += c;
    }
    Some(max)
}

/// Index of each reported percentile in [`PointStats::wait_pct`] (and
/// [`WAIT_PERCENTILES`]).
pub const P50: usize = 0;
pub const P90: usize = 1;
pub const P95: usize = 2;
pub const P99: usize = 3;
pub const P999: usize = 4;

/// Percentiles reported for waits, as (column stem, q), at indices
/// [`P50`] … [`P999`].
pub const WAIT_PERCENTILES: [(&str, f64); 5] = [
    ("p50", 0.50),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
];

/// Everything the CSV reports about one point's simulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointStats {
    pub reps: usize,
    pub mean_wait: f64,
    pub mean_wait_ci95: Option<f64>,
    pub p_wait: f64,
    /// Wait percentiles in the order of [`WAIT_PERCENTILES`] (index with
    /// [`P50`] … [`P999`]), with CIs.
    pub wait_pct: [f64; 5],
    pub wait_pct_ci95: [Option<f64>; 5],
    pub max_wait: f64,
    pub mean_sojourn: f64,
    pub mean_sojourn_ci95: Option<f64>,
    pub p99_sojourn: f64,
    /// Mean service time actually drawn (a check on the samplers).
    pub mean_service: f64,
    /// Replications whose sampler reported trouble.
    pub failed_reps: usize,
}

/// The `q` quantile of W + S for independent W, whose histogram (scaled
/// units, `scale`) is `wait_counts`, and S with CDF `service_cdf`: the
/// bisection root of F(t) = Σ_b P(W in b) F_S(t − w_b), each bin at its
/// midpoint (within 0.8% of any wait in it). `hi` bounds the quantile from
/// above (the largest sojourn observed). None for an empty histogram.
pub fn convolved_quantile(
    wait_counts: &[u64],
    q: f64,
    scale: f64,
    max_wait: f64,
    service_cdf: &dyn Fn(f64) -> f64,
    hi: f64,
) -> Option<f64> {
    let total: u64 = wait_counts.iter().sum();
    if total == 0 {
        return None;
    }
    let atoms: Vec<(f64, f64)> = wait_counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(bin, &c)| {
            let (lo, hi) = hist_bin_edges(bin as u32);
            let hi = if bin as u32 == HIST_OVERFLOW_BIN {
                (max_wait / scale).max(lo)
            } else {
                hi
            };
            (0.5 * (lo + hi) * scale, c as f64 / total as f64)
        })
        .collect();
    let cdf = |t: f64| -> f64 { atoms.iter().map(|&(w, p)| p * service_cdf(t - w)).sum() };
    let (mut lo, mut hi) = (0.0f64, hi.max(f64::MIN_POSITIVE));
    if cdf(hi) < q {
        // The observed maximum is below the quantile only for tiny samples.
        return Some(hi);
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < q {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-9 * hi {
            break;
        }
    }
    Some(hi)
}

/// The `q` quantile of the wait and its 95% CI half-width, from the pooled
/// histogram `pooled` and the per-section histograms `batches` (sectioning,
/// see the module notes): the one percentile path, for the built-in
/// percentile columns and for `--quantiles`. `scale` and `max_wait` as in
/// [`hist_quantile`]; 0 for an empty histogram.
pub fn wait_percentile(
    pooled: &[u64],
    batches: &[&[u64]],
    q: f64,
    scale: f64,
    max_wait: f64,
) -> (f64, Option<f64>) {
    let bins = HIST_BINS as usize;
    let estimate = hist_quantile(&pooled[..bins], q, scale, max_wait).unwrap_or(0.0);
    let per_batch: Vec<f64> = batches
        .iter()
        .filter_map(|b| hist_quantile(&b[..bins], q, scale, max_wait))
        .collect();
    (estimate, ci95_half_width(&per_batch))
}

/// Statistics from one point's replications and its histogram batches
/// (`batches` slices of `HIST_BINS` wait counts). `scale` is
/// the histogram scale (1 / `inv_hist_scale`); `service_cdf` is the service
/// law's CDF, for sojourn percentiles.
pub fn point_stats(
    reps: &[RepResult],
    batches: &[&[u64]],
    scale: f64,
    service_cdf: &dyn Fn(f64) -> f64,
) -> PointStats {
    let n = reps.len();
    let col =
        |f: fn(&RepResult) -> f32| -> Vec<f64> { reps.iter().map(|r| f64::from(f(r))).collect() };
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let waits = col(|r| r.mean_wait);
    let sojourns = col(|r| r.mean_sojourn);
    let max_wait = reps
        .iter()
        .map(|r| f64::from(r.max_wait))
        .fold(0.0, f64::max);
    let bins = HIST_BINS as usize;
    let per_slot = HIST_BINS as usize;
    let mut pooled = vec![0u64; per_slot];
    for b in batches {
        for (p, &c) in pooled.iter_mut().zip(b.iter()) {
            *p += c;
        }
    }
    let mut wait_pct = [0.0; 5];
    let mut wait_pct_ci95 = [None; 5];
    for (k, &(_, q)) in WAIT_PERCENTILES.iter().enumerate() {
        (wait_pct[k], wait_pct_ci95[k]) =
            wait_percentile(&pooled[..bins], batches, q, scale, max_wait);
    }
    let max_sojourn = reps
        .iter()
        .map(|r| f64::from(r.max_sojourn))
        .fold(0.0, f64::max);
    PointStats {
        reps: n,
        mean_wait: mean(&waits),
        mean_wait_ci95: ci95_half_width(&waits),
        p_wait: mean(&col(|r| r.p_wait)),
        wait_pct,
        wait_pct_ci95,
        max_wait,
        mean_sojourn: mean(&sojourns),
        mean_sojourn_ci95: ci95_half_width(&sojourns),
        p99_sojourn: convolved_quantile(
            &pooled[..bins],
            0.99,
            scale,
            max_wait,
            service_cdf,
            max_sojourn,
        )
        .unwrap_or(0.0),
        mean_service: mean(&col(|r| r.mean_service)),
        failed_reps: reps.iter().filter(|r| r.status != 0).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::hist_bin;

    #[test]
    fn t_quantiles_match_tables() {
        // Values from standard t tables (e.g. Abramowitz & Stegun, Table 26.10).
        for (dof, t) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (5.0, 2.570_582),
            (15.0, 2.131_450),
            (30.0, 2.042_272),
            (1000.0, 1.962_339),
        ] {
            let q = student_t_quantile(0.975, dof);
            assert!((q - t).abs() < 1e-5, "dof {dof}: {q} vs {t}");
        }
    }

    #[test]
    fn ln_gamma_known_values() {
        assert!((ln_gamma(1.0)).abs() < 1e-14);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-13);
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn histogram_quantiles_of_a_known_sample() {
        // 1000 values 0.001, 0.002, ..., 1.0 plus 1000 zeros: the 0.75
        // quantile is ~0.5, the 0.5 quantile is 0.
        let mut h = vec![0u64; HIST_BINS as usize];
        h[0] = 1000;
        for i in 1..=1000 {
            h[hist_bin(i as f32 / 1000.0) as usize] += 1;
        }
        assert_eq!(hist_quantile(&h, 0.5, 1.0, 1.0), Some(0.0));
        let q = hist_quantile(&h, 0.75, 1.0, 1.0).unwrap();
        assert!((q - 0.5).abs() < 0.5 * 0.01, "{q}");
        // scale
        let q2 = hist_quantile(&h, 0.75, 3.0, 3.0).unwrap();
        assert!((q2 - 3.0 * q).abs() < 1e-12);
        let q = hist_quantile(&h, 0.999, 1.0, 1.0).unwrap();
        assert!((q - 0.998).abs() < 0.998 * 0.01, "{q}");
    }

    #[test]
    fn sojourn_quantile_by_convolution_matches_mm1() {
        // M/M/1, lambda 0.8, mu 1: P(W = 0) = 0.2, W | W > 0 ~ Exp(0.2), and
        // the sojourn is Exp(0.2) (Kleinrock 1975, §3.2): p99 = ln(100)/0.2.
        let (lambda, mu) = (0.8f64, 1.0f64);
        let n = 2_000_000u64;
        let mut h = vec![0u64; HIST_BINS as usize];
        h[0] = (n as f64 * (1.0 - lambda / mu)) as u64;
        // Waiting customers at evenly spaced quantiles of Exp(mu - lambda).
        let waiting = n - h[0];
        for i in 0..waiting {
            let u = (i as f64 + 0.5) / waiting as f64;
            let w = -(1.0 - u).ln() / (mu - lambda);
            h[hist_bin(w as f32) as usize] += 1;
        }
        let cdf = |x: f64| if x <= 0.0 { 0.0 } else { 1.0 - (-mu * x).exp() };
        let p99 = convolved_quantile(&h, 0.99, 1.0, 80.0, &cdf, 200.0).unwrap();
        let exact = 100f64.ln() / (mu - lambda);
        assert!((p99 - exact).abs() < 0.005 * exact, "{p99} vs {exact}");
    }

    #[test]
    fn ci_of_constant_is_zero_and_of_one_value_is_none() {
        assert_eq!(ci95_half_width(&[2.0, 2.0, 2.0]), Some(0.0));
        assert_eq!(ci95_half_width(&[2.0]), None);
        // n = 2: t(0.975, 1) * s / sqrt(2), s = sqrt(2) for {0, 2}.
        let h = ci95_half_width(&[0.0, 2.0]).unwrap();
        assert!((h - 12.706_205).abs() < 1e-5);
    }
}
