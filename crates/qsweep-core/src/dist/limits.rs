//! The laws the f32 engines can sample and simulate honestly, and a one-line
//! refusal, at parse time, of the others.
//!
//! Why this module exists: a law beyond what the engines can represent does
//! not fail, it silently gives a wrong answer with a tight confidence
//! interval (`hyperexp(scv=1e8)` simulated W = 0.17 against an exact 5e7;
//! `gamma(shape=1e-30)` all-zero waits). So every law is checked once, when
//! it is parsed, against the limits below, each derived from how the
//! samplers (`src/sampling.rs`) and the queue recursions work in f32.
//!
//! The waits are driven by the law's second moment, so the limits concern
//! the draws that carry it: `x*`, the point below which 99.9% of `E[X^2]`
//! lies (the 0.999 quantile of the `x^2`-weighted law), clamps included.
//! - **Resolution**: `x* <= 2^24 E[X]`. The engines hold times in f32; a
//!   queue whose workload is `x*` moves in steps of about the mean, which f32
//!   resolves only while `x* / E[X]` stays below its 24-bit significand
//!   (beyond it, a busy period started by a large draw no longer drains: the
//!   steps round away). This is what refuses `hyperexp(scv=1e8)`, whose
//!   second moment lives in draws of 1e8-1e9 means.
//! - **Reach**: `P(X > x*) >= 2^-56`. The full-range uniform resolves tail
//!   probabilities to 2^-40 at full f32 precision and to 2^-56 with 8 bits
//!   left; a law whose second moment needs rarer draws than that cannot be
//!   sampled by inversion of it.
//! - **Family limits** where a sampler's f32 arithmetic breaks first: for
//!   `pareto`, `alpha` and `1 − (min/max)^alpha` normal f32 numbers (the
//!   sampler's parameters; with them it is exact down to the log-uniform
//!   limit, `alpha = 1e-30`); for `gamma` and `erlang`, shape up to 1e6
//!   (see [`MAX_GAMMA_SHAPE`]); for `empirical`, at most 2^24 + 1 values
//!   (with `smooth=linear` one 24-bit uniform per draw picks the segment;
//!   resampled, one 32-bit word picks the value, each with a probability
//!   within `n 2^-32 <= 2^-8` of `1/n` relative).
//!
//! Where the first two limits fall, family by family (unclamped; clamps
//! only move them out): hyperexp scv <= 1.49e6; lognormal scv <= 415
//! (sigma <= 2.456); weibull shape >= 0.1302; gamma shape >= 5.50e-7;
//! pareto max/min <= 3.4e7 at alpha = 2, 1.6e8 at 1.1, 3.3e8 at 1, and
//! more below (alpha = 0.5: 2.8e14).
//!
//! `tests.rs` checks that laws just inside each limit are sampled with
//! their mean and scv (the `service_mean`/`service_scv` a run reports), and
//! that the examples of the issue beyond them are refused.

use super::{Dist, Shape, Smoothing};

/// The fraction of `E[X^2]` that may come from draws above `x*`.
pub const SECOND_MOMENT_TAIL: f64 = 1e-3;
/// Largest `x* / E[X]`: the f32 significand, 2^24.
pub const MAX_SPREAD: f64 = 16_777_216.0;
/// Smallest `P(X > x*)` the full-range uniform reaches with 8 bits of
/// resolution: 2^-56.
pub const MIN_REACH: f64 = 1.0 / 72_057_594_037_927_936.0;
/// Largest gamma shape (and Erlang `k`): Marsaglia and Tsang's acceptance
/// test `d − d v^3 + d ln v^3` loses `d 2^-24` to cancellation in f32; the
/// sampled scv is within 1e-4 of `1/shape` at 1e6 and off by 1% at 1e7.
pub const MAX_GAMMA_SHAPE: f64 = 1e6;
/// Most values of an empirical table: 2^24 + 1 (2^24 segments when
/// smoothed; resampled, each value's probability within 2^-8 of `1/n`,
/// relative).
pub const MAX_EMPIRICAL_VALUES: usize = (1 << 24) + 1;

impl Dist {
    /// `Err` with one line naming the limit when the engines cannot sample
    /// and simulate this law as it claims (see the module docs).
    pub(super) fn check_limits(&self) -> Result<(), String> {
        match &self.shape {
            Shape::Pareto { alpha, lo, hi } => {
                let q = -(alpha * (lo / hi).ln()).exp_m1();
                if (*alpha as f32) < f32::MIN_POSITIVE || (q as f32) < f32::MIN_POSITIVE {
                    return Err(format!(
                        "alpha = {alpha:e} and 1 - (min/max)^alpha = {q:.3e} must both be at \
                         least {:e} (normal f32 numbers) for the sampler; expected a larger \
                         alpha",
                        f32::MIN_POSITIVE
                    ));
                }
            }
            Shape::Gamma { shape: a, .. } if *a > MAX_GAMMA_SHAPE => {
                return Err(format!(
                    "shape {a:e} is above {MAX_GAMMA_SHAPE:e}, where the f32 acceptance test of \
                     the gamma sampler cancels (its scv is off by 1% at 1e7); expected shape <= \
                     {MAX_GAMMA_SHAPE:e}"
                ));
            }
            Shape::Erlang { k, .. } if f64::from(*k) > MAX_GAMMA_SHAPE => {
                return Err(format!(
                    "k = {k} is above {MAX_GAMMA_SHAPE:e}, where the f32 acceptance test of the \
                     gamma sampler (which draws erlang above k = 16) cancels; expected k <= \
                     {MAX_GAMMA_SHAPE:e}"
                ));
            }
            Shape::Empirical {
                values,
                smooth,
                replay,
                ..
            } if values.len() > MAX_EMPIRICAL_VALUES => {
                let (what, why) = match (replay, smooth) {
                    (Some(_), _) => (
                        "gaps",
                        "one 32-bit word starts a replication at with each position's \
                         probability within 2^-8 of 1/n",
                    ),
                    (None, Smoothing::Linear) => {
                        ("values", "a 24-bit uniform resolves into segments")
                    }
                    (None, Smoothing::None) => (
                        "values",
                        "one 32-bit word resamples with each value's probability within 2^-8 \
                         of 1/n",
                    ),
                };
                return Err(format!(
                    "{} {what} is more than the 2^24 + 1 = {MAX_EMPIRICAL_VALUES} {why}; \
                     expected at most {MAX_EMPIRICAL_VALUES} {what}",
                    values.len()
                ));
            }
            _ => {}
        }
        let Some((spread, reach)) = self.second_moment_span() else {
            return Ok(());
        };
        if spread > MAX_SPREAD {
            return Err(format!(
                "99.9% of E[X^2] comes from draws up to {spread:.3e} x the mean, beyond the \
                 2^24 = {MAX_SPREAD:.3e} x the mean that f32 times resolve; expected a lighter \
                 tail{}",
                self.family_hint()
            ));
        }
        if reach < MIN_REACH {
            return Err(format!(
                "the draws that carry E[X^2] have probability {reach:.3e}, below the 2^-56 = \
                 {MIN_REACH:.3e} the samplers reach; expected a lighter tail{}",
                self.family_hint()
            ));
        }
        Ok(())
    }

    /// `(x* / E[X], P(X > x*))` with `x*` the 99.9% point of the
    /// `x^2`-weighted law, clamps included (`x*` capped at the upper clamp);
    /// `None` for bounded laws sampled from a 24-bit uniform (det, uniform,
    /// empirical), whose spread is bounded by their support.
    pub(super) fn second_moment_span(&self) -> Option<(f64, f64)> {
        if matches!(
            self.shape,
            Shape::Det { .. } | Shape::Uniform { .. } | Shape::Empirical { .. }
        ) {
            return None;
        }
        let m2 = self.raw_moment(2);
        let tail = |x: f64| self.upper_moment(2, x) / m2;
        // Bracket x* between the mean and a point whose tail is below the
        // target, then bisect in log space.
        let mean = self.raw_moment(1);
        let mut lo = mean * 1e-3;
        let mut hi = mean;
        while tail(hi) > SECOND_MOMENT_TAIL {
            lo = hi;
            hi *= 2.0;
            if !hi.is_finite() {
                return Some((f64::INFINITY, 0.0));
            }
        }
        for _ in 0..100 {
            let mid = (lo * hi).sqrt();
            if tail(mid) > SECOND_MOMENT_TAIL {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let x = hi.min(self.hi);
        Some((x / self.mean(), self.upper_moment(0, x)))
    }

    /// `E[X^j; X > x]` of the unclamped base law, `j` in 0..=2 (laws with
    /// an unbounded or Pareto support).
    fn upper_moment(&self, j: i32, x: f64) -> f64 {
        match &self.shape {
            Shape::Pareto { alpha, lo, hi } => {
                let x = x.clamp(*lo, *hi);
                // alpha L^alpha / (1 − (L/H)^alpha) times the integral of
                // t^(j − alpha − 1) over [x, H] (JKB vol. 1, ch. 20).
                let c = alpha / -(alpha * (lo / hi).ln()).exp_m1();
                let d = f64::from(j) - alpha;
                let ell = (hi / x).ln();
                let integral = if d == 0.0 {
                    ell
                } else {
                    x.powf(d) * (d * ell).exp_m1() / d
                };
                c * lo.powf(*alpha) * integral
            }
            _ => self.partial(j, x).1,
        }
    }

    /// Where this law's family crosses the limits, for the error message.
    fn family_hint(&self) -> &'static str {
        match self.shape {
            Shape::HyperExp { .. } => " (hyperexp: scv up to 1.49e6)",
            Shape::LogNormal { .. } => " (lognormal: scv up to 415, sigma up to 2.456)",
            Shape::Weibull { .. } => " (weibull: shape down to 0.1302)",
            Shape::Gamma { .. } => " (gamma: shape down to 5.50e-7)",
            Shape::Pareto { .. } => {
                " (pareto: max/min up to 3.4e7 at alpha = 2, 1.6e8 at 1.1, 3.3e8 at 1)"
            }
            _ => "",
        }
    }
}
