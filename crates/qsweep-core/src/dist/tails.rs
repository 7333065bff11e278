//! Tail moments and the integrated CDF of a law as sampled.
//!
//! Why this module exists: two questions about a run need more than a
//! law's mean and CDF.
//! - How much of `E[S^2]` (which sets the mean wait of a queue, by
//!   Pollaczek–Khinchine) lies beyond the largest draw a run of `N`
//!   customers can expect to see? That is a tail moment,
//!   `E[S^j; S > x]` ([`Dist::tail_moment`]), read by `crate::horizon`.
//! - The sojourn `W + S` of a wait spread uniformly over a histogram bin
//!   `[a, b]` has CDF `(G(t − a) − G(t − b)) / (b − a)`, where
//!   `G(x) = ∫_0^x F(u) du = E[(x − S)^+]` ([`Dist::integrated_cdf`]):
//!   exact for any law, atoms included (a deterministic service gives the
//!   wait's quantile plus `D`, not a bin midpoint plus `D`), read by
//!   `stats::convolved_quantile`.
//!
//! Both are closed forms for every law, clamps included, from the partial
//! moments of `moments.rs` (incomplete gamma, normal CDF) and exact sums
//! over an empirical table (prefix sums, so a lookup is a binary search).
//! The tests check them against quadrature.

use super::moments::power_integral;
use super::{Dist, Shape, Smoothing};

impl Dist {
    /// Whether the law's family has an exponential moment, E[e^(sX)] < ∞
    /// for some s > 0: then a queue's wait tail is asymptotically
    /// exponential (`stats::TailModel`). Exponential, deterministic,
    /// Erlang, gamma, hyperexponential, uniform and Weibull of shape ≥ 1
    /// do. Lognormal, Pareto and Weibull of shape < 1 are heavy-tailed; a
    /// clamp or a bounded Pareto's upper end makes them bounded, but the
    /// exponential regime of the wait then begins beyond the clamp's
    /// scale, far past any percentile a run resolves, so they count as
    /// heavy. Empirical tables count as unknown (the values may be a
    /// heavy-tailed sample), and so does an arrival-only MMPP.
    pub fn light_tailed(&self) -> bool {
        match &self.shape {
            Shape::Exp { .. }
            | Shape::Det { .. }
            | Shape::Erlang { .. }
            | Shape::Gamma { .. }
            | Shape::HyperExp { .. }
            | Shape::Uniform { .. } => true,
            Shape::Weibull { shape, .. } => *shape >= 1.0,
            Shape::LogNormal { .. }
            | Shape::Pareto { .. }
            | Shape::Empirical { .. }
            | Shape::Mmpp(_) => false,
        }
    }

    /// `E[Y^j; Y > x]` for the law as sampled, `Y = clamp(X, lo, hi)`, and
    /// `j` in `0..=2` (`j = 0`: the survival function `P(Y > x)`).
    pub fn tail_moment(&self, j: i32, x: f64) -> f64 {
        assert!((0..=2).contains(&j), "tail moments of order 0..=2, got {j}");
        if x < self.lo {
            return if j == 0 { 1.0 } else { self.moment(j) };
        }
        if x >= self.hi {
            return 0.0;
        }
        // lo <= x < hi: Y > x exactly when X > x; there Y = min(X, hi):
        // X's tail up to hi, and the atom hi^j P(X > hi).
        if !self.hi.is_finite() {
            return self.base_tail_moment(j, x);
        }
        let within = self.base_tail_moment(j, x) - self.base_tail_moment(j, self.hi);
        within.max(0.0) + self.hi.powi(j) * self.base_tail_moment(0, self.hi)
    }

    /// `G(x) = ∫_0^x P(Y <= u) du = E[(x − Y)^+]` for the law as sampled
    /// (0 for `x <= 0`): the integrated CDF, whose divided differences are
    /// the CDF of `Y` plus a uniform variable.
    pub fn integrated_cdf(&self, x: f64) -> f64 {
        if x <= self.lo {
            // F = 0 below lo (G(lo) = 0 as well: Y >= lo).
            return 0.0;
        }
        // Y = clamp(X): F_Y = F_X on [lo, hi), 1 from hi on.
        let top = x.min(self.hi);
        let inside = self.base_integrated_cdf(top) - self.base_integrated_cdf(self.lo);
        inside.max(0.0) + (x - top)
    }

    /// `E[X^j; X > x]` of the unclamped base law.
    fn base_tail_moment(&self, j: i32, x: f64) -> f64 {
        let (smin, smax) = self.support();
        if x < smin {
            return if j == 0 { 1.0 } else { self.raw_moment(j) };
        }
        if x >= smax {
            return 0.0;
        }
        let jf = f64::from(j);
        match &self.shape {
            Shape::Det { .. } => unreachable!("a point support is handled above"),
            Shape::Pareto { alpha, lo, hi } => {
                // ∫_x^H t^j α L^α t^(-α-1) dt / (1 − (L/H)^α)
                //   = α (L/x)^α x^j expm1((j − α) ln(H/x)) / (j − α) / C,
                // the same expm1 form as `bounded_pareto_moment`.
                let ell = (hi / x).ln();
                let d = jf - alpha;
                let ratio = if d == 0.0 {
                    ell
                } else {
                    (d * ell).exp_m1() / d
                };
                let c = -(-alpha * (hi / lo).ln()).exp_m1();
                // (For j = 0, α · ratio = 1 − (x/H)^α: the survival function.)
                alpha * (lo / x).powf(*alpha) * x.powi(j) * ratio / c
            }
            Shape::Uniform { min, width } => power_integral(x, min + width, j) / width,
            Shape::Empirical {
                values,
                scale,
                smooth,
                ..
            } => {
                let n = values.len();
                // The values above x: the tail of the sorted table.
                let k = values.partition_point(|&v| v * scale <= x);
                if n == 1 || *smooth == Smoothing::None {
                    let sum: f64 = values[k..].iter().map(|v| (v * scale).powi(j)).sum();
                    return sum / n as f64;
                }
                // Segments [v_i, v_{i+1}] each of probability 1/(n − 1),
                // uniform: those wholly above x, and the part above x of the
                // one that holds it.
                let mut sum = 0.0;
                for i in k.max(1)..n {
                    let (a, b) = (values[i - 1] * scale, values[i] * scale);
                    if b > a {
                        sum += power_integral(a.max(x), b, j) / (b - a);
                    } else if a > x {
                        // A repeated value: an atom of the segment's mass.
                        sum += a.powi(j);
                    }
                }
                sum / (n - 1) as f64
            }
            _ => self.partial(j, x).1,
        }
    }

    /// `∫_0^x F_X(u) du` of the unclamped base law.
    fn base_integrated_cdf(&self, x: f64) -> f64 {
        let (smin, smax) = self.support();
        if x <= smin {
            return 0.0;
        }
        if x >= smax {
            return x - self.raw_moment(1);
        }
        match &self.shape {
            Shape::Det { .. } => unreachable!("a point support is handled above"),
            // x F(x) − E[X; X <= x]; for the Pareto E[X; X <= x] is
            // E[X] − E[X; X > x] (both closed forms; X >= L > 0 keeps the
            // difference away from cancellation for x > L).
            Shape::Pareto { .. } => {
                x * self.base_cdf(x) - (self.raw_moment(1) - self.base_tail_moment(1, x))
            }
            Shape::Uniform { min, width } => (x - min) * (x - min) / (2.0 * width),
            Shape::Empirical {
                values,
                scale,
                smooth,
                prefix,
                ..
            } => {
                let n = values.len();
                let k = values.partition_point(|&v| v * scale <= x);
                if n == 1 || *smooth == Smoothing::None {
                    // Σ_{v s <= x} (x − v s) / n.
                    return (k as f64 * x - scale * prefix[k]) / n as f64;
                }
                // Segments wholly at or below x: E[(x − U)^+] = x − (a + b)/2;
                // the one holding x: (x − a)^2 / (2 (b − a)). Σ_{i < m}
                // (v_i + v_{i+1}) = prefix[m] + prefix[m + 1] − v_0.
                let m = k.saturating_sub(1); // segments [v_i, v_{i+1}] with i < m
                let below = if m > 0 {
                    m as f64 * x - scale * (prefix[m] + prefix[m + 1] - values[0]) / 2.0
                } else {
                    0.0
                };
                let within = if (1..n).contains(&k) {
                    let (a, b) = (values[k - 1] * scale, values[k] * scale);
                    (x - a) * (x - a) / (2.0 * (b - a))
                } else {
                    0.0
                };
                (below + within) / (n - 1) as f64
            }
            // Laws on (0, inf): x F(x) − E[X; X <= x], both lower partial
            // moments computed directly (no cancellation for small x).
            _ => x * self.partial(0, x).0 - self.partial(1, x).0,
        }
    }
}

/// `prefix[k] = Σ_{i < k} values[i]` (`n + 1` entries), for
/// [`Dist::integrated_cdf`] of an empirical table in one binary search.
pub(super) fn prefix_sums(values: &[f64]) -> std::sync::Arc<[f64]> {
    let mut sums = Vec::with_capacity(values.len() + 1);
    let mut total = 0.0f64;
    sums.push(0.0);
    for &v in values {
        total += v;
        sums.push(total);
    }
    sums.into()
}
