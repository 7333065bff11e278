//! The CDF and quantile function of a law as sampled.
//!
//! Why this module exists: percentiles are what the study reports, so the
//! exact `P(clamp(X) <= x)` and its inverse are needed to check the
//! simulated tails and to describe the laws. Closed forms where they exist
//! (exp, Weibull, bounded Pareto, uniform, empirical tables: a step function
//! when resampled, piecewise linear when smoothed), else bisection on the CDF
//! to full double precision.

use super::{Dist, Shape, Smoothing};

impl Dist {
    /// `P(clamp(X) <= x)`: the CDF of the law as sampled.
    pub fn cdf(&self, x: f64) -> f64 {
        if x < self.lo {
            0.0
        } else if x >= self.hi {
            1.0
        } else {
            self.base_cdf(x)
        }
    }

    /// The inverse CDF of the law as sampled, `clamp(Q(p), lo, hi)`, where
    /// `Q(p) = inf{x : F(x) >= p}` (`Q(0)` is the bottom of the support,
    /// `Q(1)` its top, possibly infinite). Closed form where one exists,
    /// else bisection on the CDF to full double precision. Panics unless
    /// `0 <= p <= 1`.
    pub fn quantile(&self, p: f64) -> f64 {
        assert!(
            (0.0..=1.0).contains(&p),
            "quantile needs 0 <= p <= 1, got {p}"
        );
        self.base_quantile(p).clamp(self.lo, self.hi)
    }

    /// CDF of the unclamped base law.
    pub(super) fn base_cdf(&self, x: f64) -> f64 {
        match &self.shape {
            Shape::Det { value } => {
                if x >= *value {
                    1.0
                } else {
                    0.0
                }
            }
            Shape::Pareto { alpha, lo, hi } => {
                if x < *lo {
                    0.0
                } else if x >= *hi {
                    1.0
                } else {
                    // F(x) = (1 - (L/x)^a) / (1 - (L/H)^a)
                    (alpha * (lo / x).ln()).exp_m1() / (alpha * (lo / hi).ln()).exp_m1()
                }
            }
            Shape::Uniform { min, width } => ((x - min) / width).clamp(0.0, 1.0),
            Shape::Empirical {
                values,
                scale,
                smooth,
                ..
            } => {
                // Binary search, so the sojourn bisection stays fast for
                // tables of millions of values.
                let n = values.len();
                let k = values.partition_point(|&v| v * scale <= x);
                if n == 1 || *smooth == Smoothing::None {
                    // Resampled: a step of 1/n at each value.
                    return k as f64 / n as f64;
                }
                // Piecewise linear through (v_i, i / (n − 1)): the segments
                // wholly at or below x, plus the fraction of the one that
                // holds x.
                let passed = k.saturating_sub(1);
                let within = if (1..n).contains(&k) {
                    let (a, b) = (values[k - 1] * scale, values[k] * scale);
                    (x - a) / (b - a)
                } else {
                    0.0
                };
                (passed as f64 + within) / (n - 1) as f64
            }
            _ => {
                if x <= 0.0 {
                    0.0
                } else {
                    self.partial(0, x).0
                }
            }
        }
    }

    /// Inverse CDF of the unclamped base law.
    fn base_quantile(&self, p: f64) -> f64 {
        let (smin, smax) = self.support();
        if p <= 0.0 {
            return smin;
        }
        if p >= 1.0 {
            return smax;
        }
        match &self.shape {
            Shape::Exp { mean } => -mean * (-p).ln_1p(),
            Shape::Det { value } => *value,
            Shape::Weibull { scale, shape } => scale * (-(-p).ln_1p()).powf(1.0 / shape),
            Shape::Pareto { alpha, lo, hi } => {
                // Invert F above: x = L (1 - p (1 - (L/H)^a))^(-1/a).
                let c = -(alpha * (lo / hi).ln()).exp_m1();
                (lo * (1.0 - p * c).powf(-1.0 / alpha)).clamp(*lo, *hi)
            }
            Shape::Uniform { min, width } => min + p * width,
            Shape::Empirical {
                values,
                scale,
                smooth,
                ..
            } => {
                let n = values.len();
                if n == 1 || *smooth == Smoothing::None {
                    // The k-th smallest value for the least k with
                    // k / n >= p, k / n as `base_cdf` computes it: ceil(p n)
                    // corrected by a step where p n rounded across an
                    // integer (0.3 · 10 = 3.0000000000000004).
                    let cdf = |k: usize| k as f64 / n as f64;
                    let mut k = ((p * n as f64).ceil() as usize).clamp(1, n);
                    while k > 1 && cdf(k - 1) >= p {
                        k -= 1;
                    }
                    while k < n && cdf(k) < p {
                        k += 1;
                    }
                    return values[k - 1] * scale;
                }
                let pos = p * (n - 1) as f64;
                let i = (pos.floor() as usize).min(n - 2);
                let t = pos - i as f64;
                (values[i] + t * (values[i + 1] - values[i])) * scale
            }
            _ => self.bisect_quantile(p),
        }
    }

    /// Quantile of a law on `(0, inf)` by bisection in log space on the CDF
    /// (on the survival function above the median, for precision).
    fn bisect_quantile(&self, p: f64) -> f64 {
        // g(x) < 0 below the quantile, >= 0 at and above it.
        let g = |x: f64| {
            let (lower, upper) = self.partial(0, x);
            if p <= 0.5 {
                lower - p
            } else {
                (1.0 - p) - upper
            }
        };
        let start = self.raw_moment(1);
        let (mut a, mut b) = (start, start);
        while g(a) >= 0.0 {
            a /= 2.0;
            if a < f64::MIN_POSITIVE {
                return 0.0;
            }
        }
        while g(b) < 0.0 {
            b *= 2.0;
            if b > f64::MAX / 2.0 {
                return f64::INFINITY;
            }
        }
        for _ in 0..200 {
            let mid = (a * b).sqrt();
            if !(mid > a && mid < b) {
                break;
            }
            if g(mid) >= 0.0 {
                b = mid;
            } else {
                a = mid;
            }
            if b / a - 1.0 < 1e-15 {
                break;
            }
        }
        b
    }
}
