//! A sojourn's percentiles without a sample of sojourns: the wait
//! histogram convolved with the exact service law (a wait and its own
//! service are independent in every queue here), so the sojourn's
//! quantiles carry the wait's binning error and nothing more.

use super::hist::bin_span;
use crate::dist::Dist;

/// What the sojourn convolution needs of a service law: its CDF `F` and
/// its integrated CDF `G(x) = ∫_0^x F(u) du = E[(x − S)^+]`. A wait spread
/// uniformly over `[a, b]` (as [`hist_quantile`] reads a bin) plus an
/// independent service has CDF `(G(t − a) − G(t − b)) / (b − a)` at `t`,
/// exactly, whatever the law (atoms included: a deterministic service `D`
/// gives the wait's interpolated quantile plus `D`).
pub trait ServiceCurve {
    fn cdf(&self, x: f64) -> f64;
    fn integrated_cdf(&self, x: f64) -> f64;
}

impl ServiceCurve for Dist {
    fn cdf(&self, x: f64) -> f64 {
        Dist::cdf(self, x)
    }
    fn integrated_cdf(&self, x: f64) -> f64 {
        Dist::integrated_cdf(self, x)
    }
}

/// The wait histogram's spans for convolution: (bin's lower edge, upper
/// edge, probability), in unscaled units, each bin cut at the largest wait
/// as [`hist_quantile`] cuts it (the zero bin is the atom at 0).
pub(super) fn wait_spans(wait_counts: &[u64], scale: f64, max_wait: f64) -> Vec<(f64, f64, f64)> {
    let total: u64 = wait_counts.iter().sum();
    wait_counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(bin, &c)| {
            let (lo, hi) = bin_span(bin as u32, scale, max_wait);
            (lo * scale, hi * scale, c as f64 / total as f64)
        })
        .collect()
}

/// `P(W + S <= t)` for `W` uniform on `[a, b]` and `S` of law `service`:
/// the divided difference of the integrated CDF. Where the span is too
/// narrow for the difference to keep its digits (below 1e-9 of `t`), the
/// service CDF at the span's midpoint, which is then as exact.
pub(super) fn spread_cdf(service: &dyn ServiceCurve, t: f64, a: f64, b: f64) -> f64 {
    let width = b - a;
    if width <= 1e-9 * t.abs().max(b) {
        return service.cdf(t - 0.5 * (a + b));
    }
    let g = service.integrated_cdf(t - a) - service.integrated_cdf(t - b);
    (g / width).clamp(0.0, 1.0)
}

/// `P(W + S <= t)` for the wait spans of one histogram.
pub(super) fn sojourn_cdf(spans: &[(f64, f64, f64)], service: &dyn ServiceCurve, t: f64) -> f64 {
    spans
        .iter()
        .map(|&(a, b, p)| p * spread_cdf(service, t, a, b))
        .sum()
}

/// The `q` quantile of W + S for independent W, whose histogram (scaled
/// units, `scale`) is `wait_counts`, and S of law `service`: the bisection
/// root of `F(t) = Σ_b P(W in b) P(U_b + S <= t)`, each bin's waits spread
/// uniformly over it ([`spread_cdf`]), as the wait percentiles read them.
/// `hi` bounds the quantile from above (the largest sojourn observed).
/// None for an empty histogram.
pub fn convolved_quantile(
    wait_counts: &[u64],
    q: f64,
    scale: f64,
    max_wait: f64,
    service: &dyn ServiceCurve,
    hi: f64,
) -> Option<f64> {
    let total: u64 = wait_counts.iter().sum();
    if total == 0 {
        return None;
    }
    let spans = wait_spans(wait_counts, scale, max_wait);
    let cdf = |t: f64| sojourn_cdf(&spans, service, t);
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

/// A service law's CDF tabulated at `CdfTable::POINTS` evenly spaced
/// points of [0, hi] and read by linear interpolation, with its integrated
/// CDF the exact integral of that interpolant (so the two agree as a law
/// does); beyond `hi` the law itself, its `G` shifted to join the table's.
pub(super) struct CdfTable<'a> {
    law: &'a Dist,
    step: f64,
    values: Vec<f64>,
    /// `integrals[i]` = ∫ of the interpolated CDF over `[0, i step]`.
    integrals: Vec<f64>,
    /// `G_table(hi) − G_law(hi)`, added beyond `hi`.
    join: f64,
}

impl<'a> CdfTable<'a> {
    const POINTS: usize = 2048;

    pub(super) fn new(law: &'a Dist, hi: f64) -> CdfTable<'a> {
        let step = hi / (Self::POINTS - 1) as f64;
        let values: Vec<f64> = (0..Self::POINTS)
            .map(|i| law.cdf(i as f64 * step))
            .collect();
        let mut integrals = Vec::with_capacity(Self::POINTS);
        let mut total = 0.0;
        integrals.push(0.0);
        for w in values.windows(2) {
            total += step * 0.5 * (w[0] + w[1]);
            integrals.push(total);
        }
        let join = total - law.integrated_cdf(hi);
        CdfTable {
            law,
            step,
            values,
            integrals,
            join,
        }
    }
}

impl ServiceCurve for CdfTable<'_> {
    fn cdf(&self, x: f64) -> f64 {
        if x < 0.0 {
            return 0.0;
        }
        let pos = x / self.step;
        let i = pos as usize;
        if i + 1 >= self.values.len() {
            return self.law.cdf(x);
        }
        let frac = pos - i as f64;
        self.values[i] + frac * (self.values[i + 1] - self.values[i])
    }

    fn integrated_cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        let pos = x / self.step;
        let i = pos as usize;
        if i + 1 >= self.values.len() {
            return self.law.integrated_cdf(x) + self.join;
        }
        let frac = pos - i as f64;
        let (f0, f1) = (self.values[i], self.values[i + 1]);
        self.integrals[i] + self.step * frac * (f0 + 0.5 * frac * (f1 - f0))
    }
}
