//! Exact moments of a law as sampled, clamps included.
//!
//! Why this module exists: the analytic baselines and the CSV columns
//! (`arrival_scv`, `service_scv`, rho) are only as good as `E[X]` and
//! `E[X^2]`, and a clamp `clamp(X, lo, hi)` changes both. So the moments are
//! computed in one place, in closed form: raw moments of the base law, and
//! where a clamp cuts the support, partial moments from the regularized
//! incomplete gamma function (gamma family, Weibull), the normal CDF
//! (lognormal) or exact sums over an empirical table's values (resampled)
//! or segments (`smooth=linear`). The tests check them against brute-force
//! quadrature.

use crate::analytic::{Family, LawMoments};

use super::special::{gamma_fn, gamma_pq, normal_cdf_pair};
use super::{Dist, Shape, Smoothing};

impl Dist {
    /// `E[X]` of the law as sampled, clamps included.
    pub fn mean(&self) -> f64 {
        self.moment(1)
    }

    /// `E[X^2]` of the law as sampled, clamps included.
    pub fn second_moment(&self) -> f64 {
        self.moment(2)
    }

    /// Squared coefficient of variation `Var[X] / E[X]^2`, clamps included.
    pub fn scv(&self) -> f64 {
        if !self.is_clamped() {
            // Closed forms that avoid the cancellation in E[X^2]/E[X]^2 - 1.
            match self.shape {
                Shape::Exp { .. } => return 1.0,
                Shape::Det { .. } => return 0.0,
                Shape::Erlang { k, .. } => return 1.0 / f64::from(k),
                Shape::Gamma { shape, .. } => return 1.0 / shape,
                Shape::LogNormal { sigma, .. } => return (sigma * sigma).exp_m1(),
                Shape::Uniform { min, width } => {
                    let m = min + width / 2.0;
                    return width * width / (12.0 * m * m);
                }
                _ => {}
            }
        }
        let m = self.mean();
        (self.second_moment() / (m * m) - 1.0).max(0.0)
    }

    /// The law as the analytic baselines see it: its family (with the
    /// Erlang phase count or gamma shape the formulas use) and its exact
    /// mean and scv, clamps included.
    pub fn law_moments(&self) -> LawMoments {
        let family = match self.shape {
            Shape::Exp { .. } => Family::Exp,
            Shape::Det { .. } => Family::Det,
            Shape::Erlang { k, .. } => Family::Erlang { k },
            Shape::Gamma { shape, .. } => Family::Gamma { shape },
            Shape::HyperExp { .. } => Family::HyperExp,
            Shape::LogNormal { .. } => Family::Lognormal,
            Shape::Weibull { .. } => Family::Weibull,
            Shape::Pareto { .. } => Family::Pareto,
            Shape::Uniform { .. } => Family::Uniform,
            Shape::Empirical { replay: None, .. } => Family::Empirical,
            Shape::Empirical {
                replay: Some(_), ..
            } => Family::Trace,
            Shape::Mmpp(m) => Family::Mmpp(m),
        };
        LawMoments {
            family,
            mean: self.mean(),
            scv: self.scv(),
            clamped: self.is_clamped(),
        }
    }

    /// `E[clamp(X)^j]` for `j` in 1..=2.
    pub(super) fn moment(&self, j: i32) -> f64 {
        match &self.shape {
            Shape::Det { value } => value.clamp(self.lo, self.hi).powi(j),
            Shape::Empirical {
                values,
                scale,
                smooth,
                ..
            } => empirical_moment(values, *scale, *smooth, self.lo, self.hi, j),
            _ if !self.is_clamped() => self.raw_moment(j),
            _ => {
                // E[clamp(X)^j] = lo^j F(lo) + E[X^j; lo < X <= hi] + hi^j (1 - F(hi)).
                let (lo, hi) = (self.lo, self.hi);
                let below = if lo > 0.0 {
                    lo.powi(j) * self.partial(0, lo).0
                } else {
                    0.0
                };
                let above = if hi.is_finite() {
                    hi.powi(j) * self.partial(0, hi).1
                } else {
                    0.0
                };
                // E[X^j; X <= lo] <= lo^j F(lo) <= result, so differencing the
                // lower partial moments errs by a few ulps of the result.
                let middle = self.partial(j, hi).0 - self.partial(j, lo).0;
                below + middle.max(0.0) + above
            }
        }
    }

    /// `E[X^j]` of the unclamped base law (closed forms).
    pub(super) fn raw_moment(&self, j: i32) -> f64 {
        let jf = f64::from(j);
        match &self.shape {
            Shape::Exp { mean } => gamma_raw_moment(1.0, *mean, j),
            Shape::Det { value } => value.powi(j),
            Shape::Erlang { k, phase_mean } => gamma_raw_moment(f64::from(*k), *phase_mean, j),
            Shape::Gamma { shape, scale } => gamma_raw_moment(*shape, *scale, j),
            Shape::HyperExp {
                p1,
                p2,
                mean1,
                mean2,
            } => p1 * gamma_raw_moment(1.0, *mean1, j) + p2 * gamma_raw_moment(1.0, *mean2, j),
            // E[X^j] = exp(j mu + j^2 sigma^2 / 2) (Johnson, Kotz & Balakrishnan,
            // "Continuous Univariate Distributions" vol. 1, ch. 14).
            Shape::LogNormal { mu, sigma } => (jf * mu + jf * jf * sigma * sigma / 2.0).exp(),
            // E[X^j] = lambda^j Gamma(1 + j/k) (JKB vol. 1, ch. 21).
            Shape::Weibull { scale, shape } => scale.powi(j) * gamma_fn(1.0 + jf / shape),
            Shape::Pareto { alpha, lo, hi } => bounded_pareto_moment(*alpha, *lo, *hi, j),
            Shape::Uniform { min, width } => match j {
                1 => min + width / 2.0,
                _ => min * min + min * width + width * width / 3.0,
            },
            Shape::Empirical {
                values,
                scale,
                smooth,
                ..
            } => empirical_moment(values, *scale, *smooth, 0.0, f64::INFINITY, j),
            // The stationary interarrival, w1 Exp(m1) + w2 Exp(m2) (mmpp.rs).
            Shape::Mmpp(m) => m
                .interarrival_mix()
                .iter()
                .map(|&(w, mean)| w * gamma_raw_moment(1.0, mean, j))
                .sum(),
        }
    }

    /// `(E[X^j; X <= x], E[X^j; X > x])` of the unclamped base law, each
    /// computed directly (not as a difference) so both keep full relative
    /// accuracy. Only for the laws supported on `(0, inf)`.
    pub(super) fn partial(&self, j: i32, x: f64) -> (f64, f64) {
        let jf = f64::from(j);
        match &self.shape {
            Shape::Exp { mean } => gamma_partial(1.0, *mean, j, x),
            Shape::Erlang { k, phase_mean } => gamma_partial(f64::from(*k), *phase_mean, j, x),
            Shape::Gamma { shape, scale } => gamma_partial(*shape, *scale, j, x),
            Shape::HyperExp {
                p1,
                p2,
                mean1,
                mean2,
            } => {
                let (a, b) = gamma_partial(1.0, *mean1, j, x);
                let (c, d) = gamma_partial(1.0, *mean2, j, x);
                (p1 * a + p2 * c, p1 * b + p2 * d)
            }
            Shape::LogNormal { mu, sigma } => {
                // E[X^j; X <= x] = e^(j mu + j^2 sigma^2/2) Phi((ln x - mu - j sigma^2)/sigma)
                // (JKB vol. 1, ch. 14, incomplete moments).
                let m = (jf * mu + jf * jf * sigma * sigma / 2.0).exp();
                if x <= 0.0 {
                    return (0.0, m);
                }
                if x.is_infinite() {
                    return (m, 0.0);
                }
                let z = (x.ln() - mu - jf * sigma * sigma) / sigma;
                let (lower, upper) = normal_cdf_pair(z);
                (m * lower, m * upper)
            }
            Shape::Weibull { scale, shape } => {
                // X = lambda E^(1/k): E[X^j; X <= x] = lambda^j Gamma(1+j/k) P(1+j/k, (x/lambda)^k).
                let t = (x / scale).powf(*shape);
                if j == 0 {
                    return (-(-t).exp_m1(), (-t).exp());
                }
                let a = 1.0 + jf / shape;
                let g = scale.powi(j) * gamma_fn(a);
                let (p, q) = gamma_pq(a, t);
                (g * p, g * q)
            }
            Shape::Mmpp(m) => {
                let [(w1, m1), (w2, m2)] = m.interarrival_mix();
                let (a, b) = gamma_partial(1.0, m1, j, x);
                let (c, d) = gamma_partial(1.0, m2, j, x);
                (w1 * a + w2 * c, w1 * b + w2 * d)
            }
            _ => unreachable!("partial moments are only used for laws on (0, inf)"),
        }
    }
}

/// `E[clamp(s V)^j]` for the law of the sorted `values`. Resampled, each
/// value has probability `1/n` (the engines' index is within `2^-32` of it,
/// see `sampling::resample_index`): the sample moments of the clamped values.
/// Smoothed (`smooth=linear`, the piecewise-linear inverse CDF), each of the
/// `n - 1` segments `[a, b]` carries probability `1/(n-1)` spread uniformly,
/// so the moments are exact averages of per-segment uniform moments
/// (`(a+b)/2`, `(a^2+ab+b^2)/3` unclamped).
fn empirical_moment(values: &[f64], s: f64, smooth: Smoothing, lo: f64, hi: f64, j: i32) -> f64 {
    if values.len() == 1 || smooth == Smoothing::None {
        let sum: f64 = values.iter().map(|v| (v * s).clamp(lo, hi).powi(j)).sum();
        return sum / values.len() as f64;
    }
    let sum: f64 = values
        .windows(2)
        .map(|w| segment_moment(w[0] * s, w[1] * s, lo, hi, j))
        .sum();
    sum / (values.len() - 1) as f64
}

/// `E[clamp(U, lo, hi)^j]` for `U` uniform on `[a, b]`, `j` in 1..=2.
fn segment_moment(a: f64, b: f64, lo: f64, hi: f64, j: i32) -> f64 {
    if b <= lo {
        return lo.powi(j);
    }
    if a >= hi {
        return hi.powi(j);
    }
    if a == b {
        return a.powi(j);
    }
    let (c, d) = (a.max(lo), b.min(hi));
    let inner = power_integral(c, d, j);
    if c == a && d == b {
        return inner / (b - a);
    }
    let mut total = inner;
    if c > a {
        total += lo.powi(j) * (c - a);
    }
    if d < b {
        total += hi.powi(j) * (b - d);
    }
    total / (b - a)
}

/// `∫_a^b t^j dt` for `j` in 0..=2, in factored form (exact for `a = b`,
/// no cancellation between `b^(j+1)` and `a^(j+1)`).
pub(super) fn power_integral(a: f64, b: f64, j: i32) -> f64 {
    match j {
        0 => b - a,
        1 => (b - a) * (b + a) / 2.0,
        _ => (b - a) * (b * b + b * a + a * a) / 3.0,
    }
}

/// `E[X^j]` of a gamma law with shape `s`, scale `theta`: `theta^j s (s+1)...(s+j-1)`.
fn gamma_raw_moment(s: f64, theta: f64, j: i32) -> f64 {
    match j {
        0 => 1.0,
        1 => s * theta,
        _ => s * (s + 1.0) * theta * theta,
    }
}

/// `(E[X^j; X <= x], E[X^j; X > x])` for a gamma law (shape `s`, scale
/// `theta`): `x^j f(x; s, theta) = theta^j (s)_j f(x; s + j, theta)`, so the
/// partial moments are `E[X^j] P(s + j, x/theta)` and `E[X^j] Q(s + j, x/theta)`
/// (JKB vol. 1, ch. 17).
fn gamma_partial(s: f64, theta: f64, j: i32, x: f64) -> (f64, f64) {
    let g = gamma_raw_moment(s, theta, j);
    let (p, q) = gamma_pq(s + f64::from(j), x / theta);
    (g * p, g * q)
}

/// `E[X^j]` of the bounded Pareto law on `[L, H]` with index `alpha`
/// (Harchol-Balter, "Performance Modeling and Design of Computer Systems",
/// 2013, ch. 20; JKB vol. 1, ch. 20):
/// `E[X^j] = alpha L^alpha (H^(j-alpha) - L^(j-alpha)) / ((j - alpha)(1 - (L/H)^alpha))`,
/// `= alpha L^alpha ln(H/L) / (1 - (L/H)^alpha)` when `alpha = j`. Written with
/// `expm1` in `ln(H/L)`, so `alpha` near `j` (1 for the mean, 2 for the second
/// moment) keeps full precision and the special case is the continuous limit.
fn bounded_pareto_moment(alpha: f64, lo: f64, hi: f64, j: i32) -> f64 {
    let ell = (hi / lo).ln();
    let d = f64::from(j) - alpha;
    // (H/L)^(j - alpha) - 1 over (j - alpha), i.e. expm1(d ell)/d -> ell as d -> 0.
    let ratio = if d == 0.0 {
        ell
    } else {
        (d * ell).exp_m1() / d
    };
    alpha * lo.powi(j) * ratio / -(-alpha * ell).exp_m1()
}
