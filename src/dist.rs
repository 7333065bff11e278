//! Interarrival and service-time laws: parsing, exact moments, and encoding
//! for the engines.
//!
//! Why this module exists: every part of `qsweep` that talks about a
//! distribution (the command line, spec files, the CSV columns, the analytic
//! baselines, both engines) must agree on what `weibull(shape=0.46,median=0.05)`
//! means. So there is exactly one parser for every law, written
//! `name(key=value,...)` (or just `name`), one place that turns the user's
//! keys into absolute parameters, one place that computes the law's true
//! moments, and one encoder into the flat [`Law`] record of
//! [`crate::contract`] that the CPU and WGSL samplers read.
//!
//! Moments are the moments of the law *as sampled*, clamps included: a draw
//! is `clamp(scale * base, lo, hi)`, so `mean()` is `E[clamp(X, lo, hi)]`.
//! Where a clamp cuts the support the moments come from closed-form partial
//! moments (regularized incomplete gamma for the gamma family and Weibull,
//! the normal CDF for the lognormal, exact per-segment integrals for
//! empirical tables), accurate to about 1e-13 relative; the test module checks
//! them against brute-force quadrature.
//!
//! The same parser serves both axes of a study, with one difference:
//! - a **service** law fixes its own scale (`mean=`, `rate=`, `value=`,
//!   `scale=`, `median=`, the support of `pareto`/`uniform`, or the values of
//!   an `empirical` file) and may carry `min=`/`max=` clamps;
//! - an **arrival** law is written by its shape only (`exp`, `erlang(k=4)`,
//!   `hyperexp(scv=4)`, `pareto(alpha=1.5,min=1,max=100)`, ...), because its
//!   mean is set by the load (lambda or rho). Scale keys and clamps are
//!   rejected with a one-line error rather than silently ignored. As parsed,
//!   an arrival law has mean 1; [`Dist::with_mean`] rescales it.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::contract::{Law, LawKind};

/// Every law name, in the order error messages list them.
pub const LAW_NAMES: [&str; 10] = [
    "exp",
    "det",
    "erlang",
    "gamma",
    "hyperexp",
    "lognormal",
    "weibull",
    "pareto",
    "uniform",
    "empirical",
];

/// Keys each law accepts (service role), in the order error messages list them.
fn law_keys(law: &str) -> &'static [&'static str] {
    match law {
        "exp" => &["mean", "rate", "min", "max"],
        "det" => &["value", "mean", "min", "max"],
        "erlang" => &["k", "mean", "rate", "min", "max"],
        "gamma" => &["shape", "mean", "scale", "min", "max"],
        "hyperexp" => &["scv", "mean", "min", "max"],
        "lognormal" => &["scv", "sigma", "mean", "median", "min", "max"],
        "weibull" => &["shape", "scale", "mean", "median", "min", "max"],
        "pareto" => &["alpha", "min", "max"],
        "uniform" => &["min", "max"],
        "empirical" => &["file", "min", "max"],
        _ => &[],
    }
}

/// Keys that fix a law's scale; arrival laws may not use them.
const SCALE_KEYS: [&str; 5] = ["mean", "rate", "value", "scale", "median"];

/// Laws whose `min=`/`max=` are their support rather than clamps.
fn min_max_is_support(law: &str) -> bool {
    matches!(law, "pareto" | "uniform")
}

/// A parse or validation failure: one line, `"<role>: <what is wrong>; expected <what>"`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct DistError(pub String);

/// Which axis a law is for; see the module docs for how they differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Arrival,
    Service,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Arrival => "arrival",
            Role::Service => "service",
        })
    }
}

/// The unclamped base law, with absolute parameters.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Exp {
        mean: f64,
    },
    Det {
        value: f64,
    },
    Erlang {
        k: u32,
        phase_mean: f64,
    },
    Gamma {
        shape: f64,
        scale: f64,
    },
    /// With probability `p1` exponential of mean `mean1`, else of mean `mean2`.
    HyperExp {
        p1: f64,
        mean1: f64,
        mean2: f64,
    },
    /// `exp(mu + sigma Z)`.
    LogNormal {
        mu: f64,
        sigma: f64,
    },
    /// `scale * E^(1/shape)`, `E` standard exponential.
    Weibull {
        scale: f64,
        shape: f64,
    },
    /// Bounded Pareto on `[lo, hi]`.
    Pareto {
        alpha: f64,
        lo: f64,
        hi: f64,
    },
    Uniform {
        min: f64,
        width: f64,
    },
    /// Piecewise-linear inverse CDF through the sorted `values` (already
    /// rounded to f32, as the engines see them), times `scale`.
    Empirical {
        values: Arc<[f64]>,
        scale: f64,
    },
}

/// A parsed law: what the user wrote, its absolute parameters and its clamps.
#[derive(Clone, Debug, PartialEq)]
pub struct Dist {
    text: String,
    role: Role,
    shape: Shape,
    /// Clamps: a draw is `clamp(base, lo, hi)`; `lo = 0`, `hi = inf` when absent.
    lo: f64,
    hi: f64,
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Dist {
    /// Parse `name(key=value,...)` or `name` for `role`. Relative
    /// `empirical(file=...)` paths resolve against `base_dir` (the spec
    /// file's directory, or the current directory for command-line flags).
    ///
    /// An arrival law comes back with mean 1; see [`Dist::with_mean`].
    pub fn parse(text: &str, role: Role, base_dir: &Path) -> Result<Dist, DistError> {
        let text = text.trim();
        let fail = |msg: String| DistError(format!("{role}: {msg}"));
        if text.is_empty() {
            return Err(fail(
                "empty distribution; expected a law such as exp(mean=1)".into(),
            ));
        }
        let (name, inner) = match text.find('(') {
            Some(open) => {
                let rest = &text[open + 1..];
                let Some(inner) = rest.strip_suffix(')') else {
                    let what = if rest.contains(')') {
                        "has text after ')'"
                    } else {
                        "is missing ')'"
                    };
                    return Err(fail(format!(
                        "'{text}' {what}; expected name(key=value,...)"
                    )));
                };
                if inner.contains('(') || inner.contains(')') {
                    return Err(fail(format!(
                        "'{text}' has unbalanced parentheses; expected name(key=value,...)"
                    )));
                }
                (text[..open].trim(), Some(inner))
            }
            None if text.contains(')') => {
                return Err(fail(format!(
                    "'{text}' has unbalanced parentheses; expected name(key=value,...)"
                )));
            }
            None => (text, None),
        };
        let Some(&law) = LAW_NAMES.iter().find(|&&n| n == name) else {
            return Err(fail(format!(
                "unknown law '{name}'; expected one of {}",
                LAW_NAMES.join(", ")
            )));
        };
        let args = Args::parse(role, law, inner.unwrap_or(""))?;
        let (shape, lo, hi) = args.resolve(base_dir)?;
        let mut dist = Dist {
            text: text.to_string(),
            role,
            shape,
            lo,
            hi,
        };
        if role == Role::Arrival && matches!(law, "pareto" | "uniform" | "empirical") {
            // Laws scaled by their support or data: normalize like the others.
            dist = dist.with_mean(1.0);
        }
        let (m1, m2) = (dist.mean(), dist.second_moment());
        if !(m1 > 0.0 && (m1 as f32).is_finite() && (m1 as f32) > 0.0 && m2.is_finite()) {
            return Err(args.err(format!(
                "the law's moments (mean {m1:e}, second moment {m2:e}) are outside the \
                 range the f32 engines support; expected parameters of moderate size"
            )));
        }
        Ok(dist)
    }

    /// The text as the user wrote it, trimmed (used in CSV columns).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The role this law was parsed for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The law's name: "exp", "weibull", ...
    pub fn name(&self) -> &'static str {
        match self.shape {
            Shape::Exp { .. } => "exp",
            Shape::Det { .. } => "det",
            Shape::Erlang { .. } => "erlang",
            Shape::Gamma { .. } => "gamma",
            Shape::HyperExp { .. } => "hyperexp",
            Shape::LogNormal { .. } => "lognormal",
            Shape::Weibull { .. } => "weibull",
            Shape::Pareto { .. } => "pareto",
            Shape::Uniform { .. } => "uniform",
            Shape::Empirical { .. } => "empirical",
        }
    }

    /// The clamps `(lo, hi)` applied to every draw: `(0, inf)` when absent.
    pub fn clamps(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

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

    /// Whether the clamps actually cut the support (change the law).
    pub fn is_clamped(&self) -> bool {
        let (smin, smax) = self.support();
        self.lo > smin || self.hi < smax
    }

    /// The law of `c X` for `c = mean / self.mean()`: the same shape (scv),
    /// with the requested mean. Used for arrival laws, whose mean is set by
    /// the load. Clamps, which only service laws have, scale with the law
    /// (`c clamp(X, lo, hi) = clamp(c X, c lo, c hi)`), so the shape is kept
    /// for them too. Panics unless `mean` is positive and finite.
    pub fn with_mean(&self, mean: f64) -> Dist {
        assert!(
            mean.is_finite() && mean > 0.0,
            "with_mean needs a positive finite mean, got {mean}"
        );
        self.scaled(mean / self.mean())
    }

    /// The law of `c X` (clamps scaled too). Panics unless `c` is positive and finite.
    pub fn scaled(&self, c: f64) -> Dist {
        assert!(
            c.is_finite() && c > 0.0,
            "scaled needs a positive finite factor, got {c}"
        );
        let shape = match &self.shape {
            Shape::Exp { mean } => Shape::Exp { mean: mean * c },
            Shape::Det { value } => Shape::Det { value: value * c },
            Shape::Erlang { k, phase_mean } => Shape::Erlang {
                k: *k,
                phase_mean: phase_mean * c,
            },
            Shape::Gamma { shape, scale } => Shape::Gamma {
                shape: *shape,
                scale: scale * c,
            },
            Shape::HyperExp { p1, mean1, mean2 } => Shape::HyperExp {
                p1: *p1,
                mean1: mean1 * c,
                mean2: mean2 * c,
            },
            Shape::LogNormal { mu, sigma } => Shape::LogNormal {
                mu: mu + c.ln(),
                sigma: *sigma,
            },
            Shape::Weibull { scale, shape } => Shape::Weibull {
                scale: scale * c,
                shape: *shape,
            },
            Shape::Pareto { alpha, lo, hi } => Shape::Pareto {
                alpha: *alpha,
                lo: lo * c,
                hi: hi * c,
            },
            Shape::Uniform { min, width } => Shape::Uniform {
                min: min * c,
                width: width * c,
            },
            Shape::Empirical { values, scale } => Shape::Empirical {
                values: values.clone(),
                scale: scale * c,
            },
        };
        Dist {
            text: self.text.clone(),
            role: self.role,
            shape,
            lo: self.lo * c,
            hi: self.hi * c,
        }
    }

    /// The f32 record the engines sample from (see [`Law`]). Empirical laws
    /// append their sorted values to `table` and point at them.
    pub fn to_law(&self, table: &mut Vec<f32>) -> Law {
        let mut law = Law {
            scale: 1.0,
            lo: self.lo as f32,
            hi: if self.hi >= f64::from(f32::MAX) {
                f32::MAX
            } else {
                self.hi as f32
            },
            ..Law::default()
        };
        let f = |x: f64| x as f32;
        match &self.shape {
            Shape::Exp { mean } => {
                law.kind = LawKind::Exp.code();
                law.p[0] = f(*mean);
            }
            Shape::Det { value } => {
                law.kind = LawKind::Det.code();
                law.p[0] = f(*value);
            }
            Shape::Erlang { k, phase_mean } => {
                law.kind = LawKind::Erlang.code();
                law.n = *k;
                law.p[0] = f(*phase_mean);
            }
            Shape::Gamma { shape, scale } => {
                law.kind = LawKind::Gamma.code();
                law.p[0] = f(*shape);
                law.p[1] = f(*scale);
            }
            Shape::HyperExp { p1, mean1, mean2 } => {
                law.kind = LawKind::HyperExp.code();
                law.p[0] = f(*p1);
                law.p[1] = f(*mean1);
                law.p[2] = f(*mean2);
            }
            Shape::LogNormal { mu, sigma } => {
                law.kind = LawKind::LogNormal.code();
                law.p[0] = f(*mu);
                law.p[1] = f(*sigma);
            }
            Shape::Weibull { scale, shape } => {
                law.kind = LawKind::Weibull.code();
                law.p[0] = f(*scale);
                law.p[1] = f(1.0 / shape);
            }
            Shape::Pareto { alpha, lo, hi } => {
                law.kind = LawKind::Pareto.code();
                law.p[0] = f(*alpha);
                law.p[1] = f(*lo);
                law.p[2] = f(*hi);
            }
            Shape::Uniform { min, width } => {
                law.kind = LawKind::Uniform.code();
                law.p[0] = f(*min);
                law.p[1] = f(*width);
            }
            Shape::Empirical { values, scale } => {
                law.kind = LawKind::Empirical.code();
                law.n = values.len() as u32;
                law.offset = table.len() as u32;
                law.scale = f(*scale);
                table.extend(values.iter().map(|&v| v as f32));
            }
        }
        law
    }

    /// `Some(k)` for erlang, `Some(1)` for exp: laws that are a sum of `k`
    /// exponential phases.
    pub fn erlang_k(&self) -> Option<u32> {
        match self.shape {
            Shape::Exp { .. } => Some(1),
            Shape::Erlang { k, .. } => Some(k),
            _ => None,
        }
    }

    /// The gamma shape of gamma, erlang (`k`) and exp (1): the sum of `n`
    /// i.i.d. draws is then gamma with shape `n * shape` and the same scale.
    pub fn gamma_shape(&self) -> Option<f64> {
        match self.shape {
            Shape::Exp { .. } => Some(1.0),
            Shape::Erlang { k, .. } => Some(f64::from(k)),
            Shape::Gamma { shape, .. } => Some(shape),
            _ => None,
        }
    }

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

    // ----- internals -----

    /// Support `[min, max]` of the unclamped base law.
    fn support(&self) -> (f64, f64) {
        match &self.shape {
            Shape::Det { value } => (*value, *value),
            Shape::Pareto { lo, hi, .. } => (*lo, *hi),
            Shape::Uniform { min, width } => (*min, min + width),
            Shape::Empirical { values, scale } => {
                (values[0] * scale, values[values.len() - 1] * scale)
            }
            _ => (0.0, f64::INFINITY),
        }
    }

    /// `E[clamp(X)^j]` for `j` in 1..=2.
    fn moment(&self, j: i32) -> f64 {
        match &self.shape {
            Shape::Det { value } => value.clamp(self.lo, self.hi).powi(j),
            Shape::Empirical { values, scale } => {
                empirical_moment(values, *scale, self.lo, self.hi, j)
            }
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
    fn raw_moment(&self, j: i32) -> f64 {
        let jf = f64::from(j);
        match &self.shape {
            Shape::Exp { mean } => gamma_raw_moment(1.0, *mean, j),
            Shape::Det { value } => value.powi(j),
            Shape::Erlang { k, phase_mean } => gamma_raw_moment(f64::from(*k), *phase_mean, j),
            Shape::Gamma { shape, scale } => gamma_raw_moment(*shape, *scale, j),
            Shape::HyperExp { p1, mean1, mean2 } => {
                p1 * gamma_raw_moment(1.0, *mean1, j)
                    + (1.0 - p1) * gamma_raw_moment(1.0, *mean2, j)
            }
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
            Shape::Empirical { values, scale } => {
                empirical_moment(values, *scale, 0.0, f64::INFINITY, j)
            }
        }
    }

    /// `(E[X^j; X <= x], E[X^j; X > x])` of the unclamped base law, each
    /// computed directly (not as a difference) so both keep full relative
    /// accuracy. Only for the laws supported on `(0, inf)`.
    fn partial(&self, j: i32, x: f64) -> (f64, f64) {
        let jf = f64::from(j);
        match &self.shape {
            Shape::Exp { mean } => gamma_partial(1.0, *mean, j, x),
            Shape::Erlang { k, phase_mean } => gamma_partial(f64::from(*k), *phase_mean, j, x),
            Shape::Gamma { shape, scale } => gamma_partial(*shape, *scale, j, x),
            Shape::HyperExp { p1, mean1, mean2 } => {
                let (a, b) = gamma_partial(1.0, *mean1, j, x);
                let (c, d) = gamma_partial(1.0, *mean2, j, x);
                let p2 = 1.0 - p1;
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
            _ => unreachable!("partial moments are only used for laws on (0, inf)"),
        }
    }

    /// CDF of the unclamped base law.
    fn base_cdf(&self, x: f64) -> f64 {
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
            Shape::Empirical { values, scale } => {
                let n = values.len();
                if n == 1 {
                    return if x >= values[0] * scale { 1.0 } else { 0.0 };
                }
                let sum: f64 = values
                    .windows(2)
                    .map(|w| {
                        let (a, b) = (w[0] * scale, w[1] * scale);
                        if x >= b {
                            1.0
                        } else if x < a {
                            0.0
                        } else {
                            (x - a) / (b - a)
                        }
                    })
                    .sum();
                sum / (n - 1) as f64
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
            Shape::Empirical { values, scale } => {
                let n = values.len();
                if n == 1 {
                    return values[0] * scale;
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

/// Key=value arguments of one law being parsed.
struct Args<'a> {
    role: Role,
    law: &'static str,
    items: Vec<(&'a str, &'a str)>,
}

impl<'a> Args<'a> {
    /// Split `inner` (between the parentheses) into checked key=value pairs.
    fn parse(role: Role, law: &'static str, inner: &'a str) -> Result<Self, DistError> {
        let mut args = Args {
            role,
            law,
            items: Vec::new(),
        };
        if inner.trim().is_empty() {
            return Ok(args);
        }
        let allowed: Vec<&str> = law_keys(law)
            .iter()
            .copied()
            .filter(|k| role == Role::Service || args.arrival_allows(k))
            .collect();
        for item in inner.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(args.err("empty item; expected key=value pairs separated by commas"));
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(args.err(format!("'{item}' is not key=value; expected e.g. mean=1")));
            };
            let (key, value) = (key.trim(), value.trim());
            if value.is_empty() {
                return Err(args.err(format!("{key}= has no value; expected {key}=<value>")));
            }
            if !law_keys(law).contains(&key) {
                let expected = if allowed.is_empty() {
                    format!("no keys (write just {law})")
                } else {
                    allowed.join(", ")
                };
                return Err(args.err(format!("unknown key '{key}'; expected {expected}")));
            }
            if args.items.iter().any(|(k, _)| *k == key) {
                return Err(args.err(format!("duplicate key '{key}'; expected each key once")));
            }
            if role == Role::Arrival && !args.arrival_allows(key) {
                if key == "min" || key == "max" {
                    return Err(DistError(
                        "arrival: min/max clamps are not supported for arrival laws \
                         (the arrival mean is set by lambda or rho)"
                            .to_string(),
                    ));
                }
                return Err(args.err(format!(
                    "{key}= is not allowed for arrival laws (the arrival mean is set by \
                     lambda or rho); expected the shape only, e.g. {}",
                    arrival_example(law)
                )));
            }
            args.items.push((key, value));
        }
        Ok(args)
    }

    fn arrival_allows(&self, key: &str) -> bool {
        if SCALE_KEYS.contains(&key) {
            return false;
        }
        !matches!(key, "min" | "max") || min_max_is_support(self.law)
    }

    fn err(&self, msg: impl fmt::Display) -> DistError {
        DistError(format!("{}: {}: {}", self.role, self.law, msg))
    }

    fn needs(&self, what: &str) -> DistError {
        DistError(format!("{}: {} needs {}", self.role, self.law, what))
    }

    fn raw(&self, key: &str) -> Option<&'a str> {
        self.items.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// A number `> 0` (or `>= 0` when `allow_zero`), finite.
    fn number(&self, key: &str, allow_zero: bool) -> Result<Option<f64>, DistError> {
        let Some(raw) = self.raw(key) else {
            return Ok(None);
        };
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && (v > 0.0 || (allow_zero && v == 0.0)) => Ok(Some(v)),
            _ => Err(self.err(format!(
                "{key} must be a {} finite number, got '{raw}'",
                if allow_zero {
                    "nonnegative"
                } else {
                    "positive"
                }
            ))),
        }
    }

    fn positive(&self, key: &str) -> Result<Option<f64>, DistError> {
        self.number(key, false)
    }

    fn required(&self, key: &str) -> Result<f64, DistError> {
        self.positive(key)?
            .ok_or_else(|| self.needs(&format!("{key}=")))
    }

    /// At most one of `keys` (positive numbers); error when several are given.
    fn one_of(&self, keys: &[&'static str]) -> Result<Option<(&'static str, f64)>, DistError> {
        let given: Vec<&'static str> = keys
            .iter()
            .copied()
            .filter(|k| self.raw(k).is_some())
            .collect();
        if given.len() > 1 {
            return Err(self.err(format!(
                "{}= and {}= contradict; expected only one of {}",
                given[0],
                given[1],
                or_list(keys)
            )));
        }
        match given.first() {
            Some(&k) => Ok(Some((k, self.positive(k)?.expect("key is present")))),
            None => Ok(None),
        }
    }

    /// The scale key of a parametric law: required for service laws; for
    /// arrival laws (which may not give one) a unit mean.
    fn scale(&self, keys: &[&'static str]) -> Result<(&'static str, f64), DistError> {
        match self.one_of(keys)? {
            Some(kv) => Ok(kv),
            None if self.role == Role::Arrival => Ok(("mean", 1.0)),
            None => Err(self.needs(&or_list(keys))),
        }
    }

    /// `(shape, lo, hi)` from the checked keys.
    fn resolve(&self, base_dir: &Path) -> Result<(Shape, f64, f64), DistError> {
        let shape = match self.law {
            "exp" => {
                let (key, v) = self.scale(&["mean", "rate"])?;
                Shape::Exp {
                    mean: if key == "rate" { 1.0 / v } else { v },
                }
            }
            "det" => Shape::Det {
                value: self.scale(&["value", "mean"])?.1,
            },
            "erlang" => {
                let k = self.integer("k")?;
                let (key, v) = self.scale(&["mean", "rate"])?;
                let mean = if key == "rate" { 1.0 / v } else { v };
                Shape::Erlang {
                    k,
                    phase_mean: mean / f64::from(k),
                }
            }
            "gamma" => {
                let shape = self.required("shape")?;
                let (key, v) = self.scale(&["mean", "scale"])?;
                Shape::Gamma {
                    shape,
                    scale: if key == "scale" { v } else { v / shape },
                }
            }
            "hyperexp" => {
                let scv = self.required("scv")?;
                if scv <= 1.0 {
                    return Err(self.err(format!(
                        "scv must be > 1, got {scv}; expected scv > 1 (use exp for scv = 1, \
                         erlang or gamma below 1)"
                    )));
                }
                let (_, mean) = self.scale(&["mean"])?;
                // Balanced means (Whitt 1982, "Approximating a point process by a
                // renewal process, I: two basic methods", Oper. Res. 30(1)): p1 = (1 + r)/2 with
                // r = sqrt((scv-1)/(scv+1)), mean_i = mean / (2 p_i). The small
                // probability p2 = (1 - r)/2 = 1/((scv+1)(1+r)) is formed without
                // cancellation, and p1 = 1 - p2 so that 1 - p1 recovers it exactly.
                let r = ((scv - 1.0) / (scv + 1.0)).sqrt();
                let p2 = 1.0 / ((scv + 1.0) * (1.0 + r));
                let p1 = 1.0 - p2;
                Shape::HyperExp {
                    p1,
                    mean1: mean / (2.0 * p1),
                    mean2: mean / (2.0 * p2),
                }
            }
            "lognormal" => {
                let sigma = match self.one_of(&["scv", "sigma"])? {
                    // scv = e^(sigma^2) - 1 (JKB vol. 1, ch. 14).
                    Some(("scv", scv)) => scv.ln_1p().sqrt(),
                    Some((_, sigma)) => sigma,
                    None => return Err(self.needs("scv= or sigma=")),
                };
                let mu = match self.scale(&["mean", "median"])? {
                    ("median", median) => median.ln(),
                    // mean = e^(mu + sigma^2/2).
                    (_, mean) => mean.ln() - sigma * sigma / 2.0,
                };
                Shape::LogNormal { mu, sigma }
            }
            "weibull" => {
                let k = self.required("shape")?;
                let scale = match self.scale(&["scale", "mean", "median"])? {
                    ("scale", s) => s,
                    // median = lambda (ln 2)^(1/k) (JKB vol. 1, ch. 21).
                    ("median", m) => m / std::f64::consts::LN_2.powf(1.0 / k),
                    // mean = lambda Gamma(1 + 1/k).
                    (_, m) => m / gamma_fn(1.0 + 1.0 / k),
                };
                Shape::Weibull { scale, shape: k }
            }
            "pareto" => {
                let alpha = self.required("alpha")?;
                let (lo, hi) = self.min_max(false)?;
                Shape::Pareto { alpha, lo, hi }
            }
            "uniform" => {
                let (min, max) = self.min_max(true)?;
                Shape::Uniform {
                    min,
                    width: max - min,
                }
            }
            "empirical" => {
                let file = self.raw("file").ok_or_else(|| self.needs("file="))?;
                Shape::Empirical {
                    values: load_empirical(self.role, file, base_dir)?.into(),
                    scale: 1.0,
                }
            }
            other => unreachable!("law '{other}' has no resolver"),
        };
        if min_max_is_support(self.law) {
            return Ok((shape, 0.0, f64::INFINITY));
        }
        let lo = self.number("min", true)?.unwrap_or(0.0);
        let hi = self.positive("max")?.unwrap_or(f64::INFINITY);
        if hi <= lo {
            return Err(self.max_le_min());
        }
        Ok((shape, lo, hi))
    }

    /// Both `min=` and `max=` (the support of pareto/uniform), `max > min`.
    fn min_max(&self, allow_zero_min: bool) -> Result<(f64, f64), DistError> {
        let lo = self.number("min", allow_zero_min)?;
        let hi = self.positive("max")?;
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(self.needs("min= and max="));
        };
        if hi <= lo {
            return Err(self.max_le_min());
        }
        Ok((lo, hi))
    }

    fn max_le_min(&self) -> DistError {
        self.err(format!(
            "max={} is not greater than min={}; expected max > min",
            self.raw("max").unwrap_or("?"),
            self.raw("min").unwrap_or("0")
        ))
    }

    fn integer(&self, key: &str) -> Result<u32, DistError> {
        let raw = self
            .raw(key)
            .ok_or_else(|| self.needs(&format!("{key}=")))?;
        match raw.parse::<u32>() {
            Ok(k) if k >= 1 => Ok(k),
            _ => Err(self.err(format!("{key} must be an integer >= 1, got '{raw}'"))),
        }
    }
}

/// "a=", "a= or b=", "a=, b= or c=".
fn or_list(keys: &[&str]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| format!("{k}=")).collect();
    match keys.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

fn arrival_example(law: &str) -> &'static str {
    match law {
        "exp" => "exp",
        "det" => "det",
        "erlang" => "erlang(k=4)",
        "gamma" => "gamma(shape=0.5)",
        "hyperexp" => "hyperexp(scv=4)",
        "lognormal" => "lognormal(scv=2)",
        "weibull" => "weibull(shape=0.5)",
        "pareto" => "pareto(alpha=1.5,min=1,max=100)",
        "uniform" => "uniform(min=1,max=3)",
        _ => "empirical(file=times.txt)",
    }
}

/// Read an empirical file: one nonnegative number per line; blank lines and
/// lines starting with '#' skipped. Returns the values sorted, rounded to f32
/// (the precision of the engines' table, so moments describe what is sampled).
fn load_empirical(role: Role, file: &str, base_dir: &Path) -> Result<Vec<f64>, DistError> {
    let path = Path::new(file);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base_dir.join(path)
    };
    let fail = |msg: String| DistError(format!("{role}: empirical file '{file}' {msg}"));
    let content = std::fs::read_to_string(&full).map_err(|e| {
        fail(format!(
            "cannot be read ({e}; looked at {}); expected a readable text file",
            full.display()
        ))
    })?;
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

/// `E[clamp(s V)^j]` for the piecewise-linear inverse-CDF law through the
/// sorted `values`: each of the `n - 1` segments `[a, b]` carries probability
/// `1/(n-1)` spread uniformly, so the moments are exact averages of
/// per-segment uniform moments (`(a+b)/2`, `(a^2+ab+b^2)/3` unclamped).
fn empirical_moment(values: &[f64], s: f64, lo: f64, hi: f64, j: i32) -> f64 {
    if values.len() == 1 {
        return (values[0] * s).clamp(lo, hi).powi(j);
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
    // Integral of x^j over [c, d], in factored form.
    let inner = match j {
        1 => (d - c) * (d + c) / 2.0,
        _ => (d - c) * (d * d + d * c + c * c) / 3.0,
    };
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

/// `(Phi(z), 1 - Phi(z))` of the standard normal, each with full relative
/// accuracy: `Phi(z) = erfc(-z/sqrt 2)/2` and `erfc(y) = Q(1/2, y^2)` for
/// `y >= 0` (Abramowitz & Stegun, "Handbook of Mathematical Functions", 6.5 and 7.1).
fn normal_cdf_pair(z: f64) -> (f64, f64) {
    let (p, q) = gamma_pq(0.5, z * z / 2.0);
    let tail = 0.5 * q;
    let body = 0.5 + 0.5 * p;
    if z < 0.0 {
        (tail, body)
    } else {
        (body, tail)
    }
}

/// `ln Gamma(x)` for `x > 0`: Lanczos approximation with `g = 7`, 9 terms
/// (Lanczos 1964, SIAM J. Numer. Anal. B 1; these widely reproduced
/// coefficients are P. Godfrey's), relative error of `Gamma` about 1e-15;
/// reflection `Gamma(x) Gamma(1-x) = pi / sin(pi x)` below 1/2.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// `Gamma(x)` for `x > 0`.
pub fn gamma_fn(x: f64) -> f64 {
    ln_gamma(x).exp()
}

/// Regularized incomplete gamma functions `(P(a, x), Q(a, x))`, `a > 0`:
/// the power series for `x < a + 1` and the continued fraction (modified
/// Lentz) otherwise, each giving the smaller-or-comparable of the two with
/// full relative accuracy (Press et al., "Numerical Recipes", 3rd ed., 6.2;
/// A&S 6.5.29, 6.5.31).
pub fn gamma_pq(a: f64, x: f64) -> (f64, f64) {
    if x <= 0.0 {
        return (0.0, 1.0);
    }
    if x.is_infinite() {
        return (1.0, 0.0);
    }
    let prefactor = (a * x.ln() - x - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut ap, mut del) = (a, 1.0 / a);
        let mut sum = del;
        for _ in 0..100_000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        let p = (sum * prefactor).min(1.0);
        (p, 1.0 - p)
    } else {
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..100_000 {
            let an = -f64::from(i) * (f64::from(i) - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-17 {
                break;
            }
        }
        let q = (prefactor * h).min(1.0);
        (1.0 - q, q)
    }
}

/// Split a comma-separated list where commas inside parentheses belong to the item:
/// `"exp(mean=1),weibull(shape=0.5,mean=2)"` -> `["exp(mean=1)", "weibull(shape=0.5,mean=2)"]`.
/// Items are trimmed. Errors on unbalanced parentheses or empty items.
pub fn split_list(text: &str) -> Result<Vec<String>, String> {
    if text.trim().is_empty() {
        return Err("empty list; expected one or more comma-separated items".into());
    }
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    let push = |current: &mut String, items: &mut Vec<String>| {
        let item = current.trim().to_string();
        current.clear();
        if item.is_empty() {
            return Err(format!(
                "item {} of '{text}' is empty; expected comma-separated items such as exp(mean=1),det(value=2)",
                items.len() + 1
            ));
        }
        items.push(item);
        Ok(())
    };
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    format!("unbalanced ')' in '{text}'; expected matching parentheses")
                })?;
            }
            ',' if depth == 0 => {
                push(&mut current, &mut items)?;
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    if depth != 0 {
        return Err(format!(
            "unbalanced '(' in '{text}'; expected matching parentheses"
        ));
    }
    push(&mut current, &mut items)?;
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn here() -> &'static Path {
        Path::new(".")
    }

    fn svc(text: &str) -> Dist {
        Dist::parse(text, Role::Service, here())
            .unwrap_or_else(|e| panic!("service '{text}' should parse: {e}"))
    }

    fn arr(text: &str) -> Dist {
        Dist::parse(text, Role::Arrival, here())
            .unwrap_or_else(|e| panic!("arrival '{text}' should parse: {e}"))
    }

    fn err_in(role: Role, text: &str, base: &Path) -> String {
        match Dist::parse(text, role, base) {
            Ok(d) => panic!("'{text}' as {role} should fail, parsed as {d:?}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "error is not one line: {msg}");
                assert!(
                    msg.starts_with(&format!("{role}: ")),
                    "no role prefix: {msg}"
                );
                msg
            }
        }
    }

    fn svc_err(text: &str) -> String {
        err_in(Role::Service, text, here())
    }

    fn arr_err(text: &str) -> String {
        err_in(Role::Arrival, text, here())
    }

    #[track_caller]
    fn close(got: f64, want: f64, rel: f64) {
        let err = (got - want).abs() / want.abs().max(1e-300);
        assert!(
            err <= rel || got == want,
            "got {got:.17e}, want {want:.17e} (rel err {err:.2e} > {rel:.0e})"
        );
    }

    /// A fresh file under a per-process temporary directory.
    fn temp_file(name: &str, content: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("qsweep-dist-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    fn empirical(name: &str, content: &str, extra: &str) -> Dist {
        let path = temp_file(name, content);
        svc(&format!("empirical(file={}{extra})", path.display()))
    }

    /// Composite Simpson rule with `n` (rounded up to even) intervals,
    /// Kahan-summed so rounding stays far below the tolerances tested.
    fn simpson(f: &dyn Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
        if b <= a {
            return 0.0;
        }
        let n = n + n % 2;
        let h = (b - a) / n as f64;
        let (mut s, mut comp) = (0.0f64, 0.0f64);
        for i in 0..=n {
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            let y = w * f(a + i as f64 * h) - comp;
            let t = s + y;
            comp = (t - s) - y;
            s = t;
        }
        s * h / 3.0
    }

    /// Brute force `E[clamp(X, lo, hi)^j]` from the density alone:
    /// `integral of clamp(x)^j f(x) dx` with `x = e^t`, i.e. of
    /// `clamp(e^t)^j * xf(e^t) dt` where `xf(x) = x f(x)`, over `[tmin, tmax]`,
    /// split at the clamps so every piece is smooth.
    fn brute_moment(
        xf: &dyn Fn(f64) -> f64,
        lo: f64,
        hi: f64,
        j: i32,
        tmin: f64,
        tmax: f64,
    ) -> f64 {
        let g = |t: f64| {
            let x = t.exp();
            x.clamp(lo, hi).powi(j) * xf(x)
        };
        let mut cuts = vec![tmin];
        for c in [lo.ln(), hi.ln()] {
            if c.is_finite() && c > tmin && c < tmax {
                cuts.push(c);
            }
        }
        cuts.push(tmax);
        cuts.windows(2)
            .map(|w| simpson(&g, w[0], w[1], 400_000))
            .sum()
    }

    /// `x f(x)` and a safe integration range in `t = ln x` for the
    /// continuous laws, written from the textbook densities (not from the
    /// partial-moment code under test).
    fn density(d: &Dist) -> (Box<dyn Fn(f64) -> f64>, f64, f64) {
        match d.shape.clone() {
            Shape::Exp { mean } => (
                Box::new(move |x| x / mean * (-x / mean).exp()),
                mean.ln() - 60.0,
                mean.ln() + 800f64.ln(),
            ),
            Shape::Erlang { k, phase_mean } => density(&Dist {
                shape: Shape::Gamma {
                    shape: f64::from(k),
                    scale: phase_mean,
                },
                ..d.clone()
            }),
            Shape::Gamma { shape, scale } => (
                Box::new(move |x| (shape * (x / scale).ln() - x / scale - ln_gamma(shape)).exp()),
                scale.ln() - 60.0 / shape,
                scale.ln() + (800.0 + 10.0 * shape).ln(),
            ),
            Shape::HyperExp { p1, mean1, mean2 } => (
                Box::new(move |x| {
                    p1 * x / mean1 * (-x / mean1).exp()
                        + (1.0 - p1) * x / mean2 * (-x / mean2).exp()
                }),
                mean1.min(mean2).ln() - 60.0,
                mean1.max(mean2).ln() + 800f64.ln(),
            ),
            Shape::LogNormal { mu, sigma } => (
                Box::new(move |x| {
                    let z = (x.ln() - mu) / sigma;
                    (-z * z / 2.0).exp() / (sigma * (2.0 * std::f64::consts::PI).sqrt())
                }),
                mu - 40.0 * sigma,
                mu + 2.0 * sigma * sigma + 40.0 * sigma,
            ),
            Shape::Weibull { scale, shape } => (
                Box::new(move |x| {
                    let u = (x / scale).powf(shape);
                    shape * u * (-u).exp()
                }),
                scale.ln() - 60.0 / shape,
                scale.ln() + 800f64.ln() / shape,
            ),
            Shape::Pareto { alpha, lo, hi } => (
                // Range [ln L, ln H] exactly: no bounds test, which would drop
                // the endpoint when e^(ln H) rounds above H.
                Box::new(move |x| alpha * (lo / x).powf(alpha) / (1.0 - (lo / hi).powf(alpha))),
                lo.ln(),
                hi.ln(),
            ),
            other => panic!("no density for {other:?}"),
        }
    }

    fn brute(d: &Dist, j: i32) -> f64 {
        let (xf, tmin, tmax) = density(d);
        brute_moment(&*xf, d.lo, d.hi, j, tmin, tmax)
    }

    #[test]
    fn parses_every_law_and_key_combination() {
        let e = std::f64::consts::E;
        let pi = std::f64::consts::PI;
        let lam = 1.0 / std::f64::consts::LN_2.powi(2);
        // (text, name, mean, scv)
        let cases: Vec<(&str, &str, f64, f64)> = vec![
            ("exp(mean=0.5)", "exp", 0.5, 1.0),
            ("exp(rate=4)", "exp", 0.25, 1.0),
            (" exp( rate = 4 ) ", "exp", 0.25, 1.0),
            ("det(value=2)", "det", 2.0, 0.0),
            ("det(mean=2.5)", "det", 2.5, 0.0),
            ("erlang(k=4,mean=2)", "erlang", 2.0, 0.25),
            ("erlang(k=3,rate=0.5)", "erlang", 2.0, 1.0 / 3.0),
            ("erlang(k=1,mean=3)", "erlang", 3.0, 1.0),
            ("gamma(shape=0.5,mean=2)", "gamma", 2.0, 2.0),
            ("gamma(shape=2,scale=3)", "gamma", 6.0, 0.5),
            ("hyperexp(scv=4,mean=2)", "hyperexp", 2.0, 4.0),
            ("hyperexp(scv=1000,mean=0.1)", "hyperexp", 0.1, 1000.0),
            ("lognormal(scv=2,mean=3)", "lognormal", 3.0, 2.0),
            (
                "lognormal(sigma=1,median=2)",
                "lognormal",
                2.0 * e.sqrt(),
                e - 1.0,
            ),
            ("lognormal(scv=1,median=1)", "lognormal", 2f64.sqrt(), 1.0),
            (
                "lognormal(sigma=0.5,mean=1)",
                "lognormal",
                1.0,
                0.25f64.exp_m1(),
            ),
            (
                "weibull(shape=2,scale=1)",
                "weibull",
                pi.sqrt() / 2.0,
                4.0 / pi - 1.0,
            ),
            ("weibull(shape=1,mean=3)", "weibull", 3.0, 1.0),
            // lambda = 1/(ln 2)^2, mean = lambda Gamma(3), scv = Gamma(5)/Gamma(3)^2 - 1.
            ("weibull(shape=0.5,median=1)", "weibull", 2.0 * lam, 5.0),
            ("uniform(min=1,max=3)", "uniform", 2.0, 1.0 / 12.0),
            ("uniform(min=0,max=1)", "uniform", 0.5, 1.0 / 3.0),
            // alpha = 1: E[X] = L ln(H/L)/(1 - L/H), E[X^2] = L H.
            (
                "pareto(alpha=1,min=1,max=100)",
                "pareto",
                100f64.ln() / 0.99,
                100.0 * 0.99 * 0.99 / 100f64.ln().powi(2) - 1.0,
            ),
            // alpha = 2: E[X] = 2 L (1 - L/H)/(1 - (L/H)^2), E[X^2] = 2 L^2 ln(H/L)/(1 - (L/H)^2).
            (
                "pareto(alpha=2,min=1,max=10)",
                "pareto",
                2.0 * 0.9 / 0.99,
                2.0 * 10f64.ln() / 0.99 / (1.8f64 / 0.99).powi(2) - 1.0,
            ),
        ];
        for (text, name, mean, scv) in cases {
            let d = svc(text);
            assert_eq!(d.name(), name, "{text}");
            assert_eq!(d.text(), text.trim());
            assert_eq!(d.role(), Role::Service);
            assert!(!d.is_clamped(), "{text}");
            close(d.mean(), mean, 1e-13);
            close(d.scv(), scv, 1e-12);
            close(d.second_moment(), mean * mean * (1.0 + scv), 1e-12);
        }
        // Generic bounded Pareto, alpha = 1.5, from the textbook formula.
        let (a, l, h) = (1.5f64, 1.0f64, 100.0f64);
        let c = a * l.powf(a) / (1.0 - (l / h).powf(a));
        let m1 = c * (h.powf(1.0 - a) - l.powf(1.0 - a)) / (1.0 - a);
        let m2 = c * (h.powf(2.0 - a) - l.powf(2.0 - a)) / (2.0 - a);
        let d = svc("pareto(alpha=1.5,min=1,max=100)");
        close(d.mean(), m1, 1e-13);
        close(d.second_moment(), m2, 1e-13);
        // Hyperexp phases are balanced: p1 mean1 = p2 mean2 = mean/2.
        let Shape::HyperExp { p1, mean1, mean2 } = svc("hyperexp(scv=4,mean=2)").shape else {
            panic!()
        };
        close(p1, (1.0 + (3.0f64 / 5.0).sqrt()) / 2.0, 1e-15);
        close(p1 * mean1, 1.0, 1e-15);
        close((1.0 - p1) * mean2, 1.0, 1e-14);
        // Clamps parse on every non-support law.
        for text in [
            "exp(mean=1,min=0.1,max=5)",
            "det(value=1,min=0.5,max=2)",
            "erlang(k=2,mean=1,min=0.1,max=5)",
            "gamma(shape=0.5,scale=1,min=0.1,max=5)",
            "hyperexp(scv=3,mean=1,min=0.1,max=5)",
            "lognormal(sigma=1,median=1,min=0.1,max=5)",
            "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
        ] {
            let d = svc(text);
            assert_eq!(
                d.clamps(),
                (
                    if text.starts_with("weibull") {
                        0.01
                    } else if text.starts_with("det") {
                        0.5
                    } else {
                        0.1
                    },
                    if text.starts_with("weibull") {
                        30.0
                    } else if text.starts_with("det") {
                        2.0
                    } else {
                        5.0
                    }
                )
            );
        }
        let d = svc("exp(mean=1,max=5)");
        assert_eq!(d.clamps(), (0.0, 5.0));
        let d = svc("exp(mean=1,min=0)");
        assert_eq!(d.clamps(), (0.0, f64::INFINITY));
    }

    #[test]
    fn accessors() {
        let d = svc("  erlang(k=3,mean=1.5)  ");
        assert_eq!(d.text(), "erlang(k=3,mean=1.5)");
        assert_eq!(d.to_string(), "erlang(k=3,mean=1.5)");
        assert_eq!(d.erlang_k(), Some(3));
        assert_eq!(d.gamma_shape(), Some(3.0));
        assert_eq!(svc("exp(mean=1)").erlang_k(), Some(1));
        assert_eq!(svc("exp(mean=1)").gamma_shape(), Some(1.0));
        assert_eq!(svc("gamma(shape=0.3,mean=1)").gamma_shape(), Some(0.3));
        assert_eq!(svc("gamma(shape=0.3,mean=1)").erlang_k(), None);
        assert_eq!(svc("weibull(shape=2,scale=1)").erlang_k(), None);
        assert_eq!(svc("weibull(shape=2,scale=1)").gamma_shape(), None);
        assert_eq!(arr("exp").role(), Role::Arrival);
        assert_eq!(Role::Arrival.to_string(), "arrival");
        assert_eq!(Role::Service.to_string(), "service");
    }

    #[test]
    fn to_law_encodes_per_contract() {
        let mut table = vec![9.0f32];
        let law = |text: &str, table: &mut Vec<f32>| svc(text).to_law(table);
        let l = law("exp(mean=0.5)", &mut table);
        assert_eq!(
            (l.kind, l.p[0], l.scale, l.lo, l.hi),
            (LawKind::Exp.code(), 0.5, 1.0, 0.0, f32::MAX)
        );
        let l = law("det(value=2,min=1,max=3)", &mut table);
        assert_eq!(
            (l.kind, l.p[0], l.lo, l.hi),
            (LawKind::Det.code(), 2.0, 1.0, 3.0)
        );
        let l = law("erlang(k=4,mean=2)", &mut table);
        assert_eq!((l.kind, l.n, l.p[0]), (LawKind::Erlang.code(), 4, 0.5));
        let l = law("gamma(shape=0.5,mean=2)", &mut table);
        assert_eq!((l.kind, l.p[0], l.p[1]), (LawKind::Gamma.code(), 0.5, 4.0));
        let l = law("hyperexp(scv=4,mean=2)", &mut table);
        let p1 = (1.0 + (0.6f64).sqrt()) / 2.0;
        assert_eq!(l.kind, LawKind::HyperExp.code());
        assert_eq!(
            l.p[..3],
            [p1 as f32, (1.0 / p1) as f32, (1.0 / (1.0 - p1)) as f32]
        );
        let l = law("lognormal(sigma=0.5,median=2)", &mut table);
        assert_eq!(
            (l.kind, l.p[0], l.p[1]),
            (LawKind::LogNormal.code(), 2f64.ln() as f32, 0.5)
        );
        let l = law("weibull(shape=0.5,scale=3,min=0.01,max=30)", &mut table);
        assert_eq!(
            (l.kind, l.p[0], l.p[1], l.lo, l.hi),
            (LawKind::Weibull.code(), 3.0, 2.0, 0.01, 30.0)
        );
        let l = law("pareto(alpha=1.5,min=1,max=100)", &mut table);
        assert_eq!(
            (l.kind, l.p[..3].to_vec(), l.lo, l.hi),
            (LawKind::Pareto.code(), vec![1.5, 1.0, 100.0], 0.0, f32::MAX)
        );
        let l = law("uniform(min=1,max=3)", &mut table);
        assert_eq!(
            (l.kind, l.p[0], l.p[1], l.lo, l.hi),
            (LawKind::Uniform.code(), 1.0, 2.0, 0.0, f32::MAX)
        );
        for l in [
            law("exp(rate=2)", &mut table),
            law("weibull(shape=2,mean=1)", &mut table),
        ] {
            assert_eq!(
                (l.n, l.offset, l.p[3], l._pad0, l._pad1),
                (0, 0, 0.0, 0, 0.0)
            );
        }
        // Empirical: values appended sorted, offset points at them, scale 1 for service.
        assert_eq!(table, vec![9.0]);
        let d = empirical("law-a.txt", "4\n1\n2\n", "");
        let l = d.to_law(&mut table);
        assert_eq!(
            (l.kind, l.n, l.offset, l.scale),
            (LawKind::Empirical.code(), 3, 1, 1.0)
        );
        let l2 = empirical("law-b.txt", "0.5\n0.25\n", ",max=0.4").to_law(&mut table);
        assert_eq!((l2.n, l2.offset, l2.scale, l2.hi), (2, 4, 1.0, 0.4));
        assert_eq!(table, vec![9.0, 1.0, 2.0, 4.0, 0.25, 0.5]);
        // An arrival empirical law rescales through `scale`, not the table.
        let path = temp_file("law-c.txt", "1\n2\n4\n");
        let a = arr(&format!("empirical(file={})", path.display())).with_mean(4.5);
        let mut t2 = Vec::new();
        let l = a.to_law(&mut t2);
        assert_eq!((t2, l.scale), (vec![1.0, 2.0, 4.0], 2.0));
        // Arrival parametric laws carry absolute parameters with scale 1.
        let l = arr("weibull(shape=0.5)")
            .with_mean(2.0)
            .to_law(&mut Vec::new());
        assert_eq!(
            (l.kind, l.scale, l.p[1]),
            (LawKind::Weibull.code(), 1.0, 2.0)
        );
        assert!(
            (f64::from(l.p[0]) - 1.0).abs() < 1e-6,
            "2 = lambda Gamma(3)"
        );
    }

    #[test]
    fn arrival_laws_take_shape_only_and_have_mean_one() {
        let emp = temp_file("arrivals.txt", "# gaps\n1\n2\n4\n");
        let emp_text = format!("empirical(file={})", emp.display());
        let pareto_svc = svc("pareto(alpha=1.5,min=1,max=100)");
        let cases: Vec<(&str, f64)> = vec![
            ("exp", 1.0),
            ("exp()", 1.0),
            ("det", 0.0),
            ("erlang(k=4)", 0.25),
            ("hyperexp(scv=4)", 4.0),
            ("lognormal(scv=2)", 2.0),
            ("lognormal(sigma=1)", 1f64.exp_m1()),
            ("weibull(shape=0.5)", 5.0),
            ("gamma(shape=0.5)", 2.0),
            ("pareto(alpha=1.5,min=1,max=100)", pareto_svc.scv()),
            ("uniform(min=1,max=3)", 1.0 / 12.0),
            (&emp_text, 35.0 / 6.0 / 2.25 / 2.25 - 1.0),
        ];
        for (text, scv) in cases {
            let d = arr(text);
            close(d.mean(), 1.0, 1e-14);
            close(d.scv(), scv, 1e-12);
            assert!(!d.is_clamped());
            let e = d.with_mean(0.3333);
            close(e.mean(), 0.3333, 1e-14);
            close(e.scv(), scv, 1e-12);
            assert_eq!(e.text(), text);
        }
    }

    #[test]
    fn arrival_laws_reject_clamps_and_scale_keys() {
        let clamp_msg = "arrival: min/max clamps are not supported for arrival laws \
                         (the arrival mean is set by lambda or rho)";
        for text in [
            "exp(min=1)",
            "weibull(shape=0.5,max=3)",
            "erlang(k=2,min=0.1,max=3)",
        ] {
            assert_eq!(arr_err(text), clamp_msg, "{text}");
        }
        let path = temp_file("arr-clamp.txt", "1\n2\n");
        assert_eq!(
            arr_err(&format!("empirical(file={},max=1.5)", path.display())),
            clamp_msg
        );
        assert_eq!(
            arr_err("exp(mean=2)"),
            "arrival: exp: mean= is not allowed for arrival laws (the arrival mean is set by \
             lambda or rho); expected the shape only, e.g. exp"
        );
        for (text, key) in [
            ("exp(rate=2)", "rate"),
            ("det(value=1)", "value"),
            ("erlang(k=2,mean=1)", "mean"),
            ("gamma(shape=2,scale=1)", "scale"),
            ("hyperexp(scv=2,mean=1)", "mean"),
            ("lognormal(scv=2,median=1)", "median"),
            ("weibull(shape=0.5,median=1)", "median"),
        ] {
            let msg = arr_err(text);
            assert!(
                msg.contains(&format!("{key}= is not allowed for arrival laws")),
                "{msg}"
            );
        }
        assert_eq!(
            arr_err("exp(foo=1)"),
            "arrival: exp: unknown key 'foo'; expected no keys (write just exp)"
        );
        assert_eq!(
            arr_err("weibull(shape=1,medain=2)"),
            "arrival: weibull: unknown key 'medain'; expected shape"
        );
        assert_eq!(arr_err("erlang"), "arrival: erlang needs k=");
        assert_eq!(
            arr_err("pareto(alpha=2)"),
            "arrival: pareto needs min= and max="
        );
    }

    #[test]
    fn every_error_class_has_its_own_message() {
        let exact = [
            ("expo", "service: unknown law 'expo'; expected one of exp, det, erlang, gamma, hyperexp, lognormal, weibull, pareto, uniform, empirical"),
            ("Exp(mean=1)", "service: unknown law 'Exp'; expected one of exp, det, erlang, gamma, hyperexp, lognormal, weibull, pareto, uniform, empirical"),
            ("weibull(shape=0.46,medain=0.05)", "service: weibull: unknown key 'medain'; expected shape, scale, mean, median, min, max"),
            ("exp", "service: exp needs mean= or rate="),
            ("exp()", "service: exp needs mean= or rate="),
            ("det", "service: det needs value= or mean="),
            ("erlang(mean=1)", "service: erlang needs k="),
            ("erlang(k=2)", "service: erlang needs mean= or rate="),
            ("gamma(mean=1)", "service: gamma needs shape="),
            ("gamma(shape=1)", "service: gamma needs mean= or scale="),
            ("hyperexp(mean=1)", "service: hyperexp needs scv="),
            ("hyperexp(scv=2)", "service: hyperexp needs mean="),
            ("lognormal(mean=1)", "service: lognormal needs scv= or sigma="),
            ("lognormal(scv=1)", "service: lognormal needs mean= or median="),
            ("weibull(shape=1)", "service: weibull needs scale=, mean= or median="),
            ("weibull(mean=1)", "service: weibull needs shape="),
            ("pareto(min=1,max=2)", "service: pareto needs alpha="),
            ("pareto(alpha=1.5,min=1)", "service: pareto needs min= and max="),
            ("uniform(max=2)", "service: uniform needs min= and max="),
            ("empirical", "service: empirical needs file="),
            ("exp(mean=1,mean=2)", "service: exp: duplicate key 'mean'; expected each key once"),
            ("exp(mean=1,rate=2)", "service: exp: mean= and rate= contradict; expected only one of mean= or rate="),
            ("det(value=1,mean=1)", "service: det: value= and mean= contradict; expected only one of value= or mean="),
            ("lognormal(scv=1,sigma=1,mean=1)", "service: lognormal: scv= and sigma= contradict; expected only one of scv= or sigma="),
            ("lognormal(scv=1,mean=1,median=1)", "service: lognormal: mean= and median= contradict; expected only one of mean= or median="),
            ("weibull(shape=1,mean=1,median=1)", "service: weibull: mean= and median= contradict; expected only one of scale=, mean= or median="),
            ("gamma(shape=1,mean=1,scale=1)", "service: gamma: mean= and scale= contradict; expected only one of mean= or scale="),
            ("erlang(k=2.5,mean=1)", "service: erlang: k must be an integer >= 1, got '2.5'"),
            ("erlang(k=0,mean=1)", "service: erlang: k must be an integer >= 1, got '0'"),
            ("erlang(k=-2,mean=1)", "service: erlang: k must be an integer >= 1, got '-2'"),
            ("hyperexp(scv=1,mean=1)", "service: hyperexp: scv must be > 1, got 1; expected scv > 1 (use exp for scv = 1, erlang or gamma below 1)"),
            ("exp(mean=1,min=2,max=1)", "service: exp: max=1 is not greater than min=2; expected max > min"),
            ("weibull(shape=1,mean=1,min=2,max=2)", "service: weibull: max=2 is not greater than min=2; expected max > min"),
            ("pareto(alpha=1,min=2,max=2)", "service: pareto: max=2 is not greater than min=2; expected max > min"),
            ("uniform(min=3,max=1)", "service: uniform: max=1 is not greater than min=3; expected max > min"),
            ("exp(mean=0)", "service: exp: mean must be a positive finite number, got '0'"),
            ("exp(mean=-1)", "service: exp: mean must be a positive finite number, got '-1'"),
            ("exp(mean=NaN)", "service: exp: mean must be a positive finite number, got 'NaN'"),
            ("exp(mean=inf)", "service: exp: mean must be a positive finite number, got 'inf'"),
            ("exp(mean=abc)", "service: exp: mean must be a positive finite number, got 'abc'"),
            ("exp(rate=0)", "service: exp: rate must be a positive finite number, got '0'"),
            ("gamma(shape=0,mean=1)", "service: gamma: shape must be a positive finite number, got '0'"),
            ("weibull(shape=-1,mean=1)", "service: weibull: shape must be a positive finite number, got '-1'"),
            ("pareto(alpha=1,min=0,max=2)", "service: pareto: min must be a positive finite number, got '0'"),
            ("uniform(min=-1,max=2)", "service: uniform: min must be a nonnegative finite number, got '-1'"),
            ("exp(mean=1,min=-1)", "service: exp: min must be a nonnegative finite number, got '-1'"),
            ("exp(mean=1,max=0)", "service: exp: max must be a positive finite number, got '0'"),
            ("", "service: empty distribution; expected a law such as exp(mean=1)"),
            ("   ", "service: empty distribution; expected a law such as exp(mean=1)"),
            ("exp(mean=1", "service: 'exp(mean=1' is missing ')'; expected name(key=value,...)"),
            ("exp(mean=1)x", "service: 'exp(mean=1)x' has text after ')'; expected name(key=value,...)"),
            ("exp((mean=1))", "service: 'exp((mean=1))' has unbalanced parentheses; expected name(key=value,...)"),
            ("exp)", "service: 'exp)' has unbalanced parentheses; expected name(key=value,...)"),
            ("exp(mean)", "service: exp: 'mean' is not key=value; expected e.g. mean=1"),
            ("exp(mean=)", "service: exp: mean= has no value; expected mean=<value>"),
            ("exp(mean=1,)", "service: exp: empty item; expected key=value pairs separated by commas"),
        ];
        for (text, want) in exact {
            assert_eq!(svc_err(text), want, "{text:?}");
        }
        // Out of the engines' f32 range.
        assert!(svc_err("exp(mean=1e300)").contains("outside the range the f32 engines support"));
        assert!(svc_err("weibull(shape=0.001,scale=1)").contains("outside the range"));
        // Messages are specific: no two error classes share one.
        let mut all: Vec<&str> = exact.iter().map(|(_, m)| *m).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), exact.len() - 2); // "exp"/"exp()" and ""/"   " share one
    }

    #[test]
    fn empirical_files() {
        // Exact moments of the piecewise-linear law through 1, 2, 4:
        // segments [1,2] and [2,4]: E[X] = (1.5 + 3)/2, E[X^2] = (7/3 + 28/3)/2.
        let d = empirical("tiny.txt", "# a comment\n\n4\n  1  \n2\r\n", "");
        assert_eq!(d.name(), "empirical");
        assert_eq!(d.mean(), 2.25);
        close(d.second_moment(), 35.0 / 6.0, 1e-15);
        close(d.scv(), 35.0 / 6.0 / 2.25f64.powi(2) - 1.0, 1e-14);
        assert!(!d.is_clamped());
        for (p, x) in [(0.0, 1.0), (0.25, 1.5), (0.5, 2.0), (0.75, 3.0), (1.0, 4.0)] {
            assert_eq!(d.quantile(p), x, "p = {p}");
            assert_eq!(d.cdf(x), p, "x = {x}");
        }
        // Clamped to [1.5, 3]: segment 1 gives (0.5 * 1.5 + (2^2 - 1.5^2)/2) = 1.625,
        // segment 2 gives ((3^2 - 2^2)/2 + 1 * 3)/2 = 2.75.
        let c = empirical("tiny-c.txt", "1\n2\n4\n", ",min=1.5,max=3");
        assert!(c.is_clamped());
        close(c.mean(), (1.625 + 2.75) / 2.0, 1e-15);
        // Brute force over the quantile function (midpoint rule in p).
        for dd in [&d, &c] {
            let n = 2_000_000;
            let (mut s1, mut s2) = (0.0, 0.0);
            for i in 0..n {
                let x = dd.quantile((i as f64 + 0.5) / n as f64);
                s1 += x;
                s2 += x * x;
            }
            close(dd.mean(), s1 / n as f64, 1e-10);
            close(dd.second_moment(), s2 / n as f64, 1e-10);
        }
        // Clamps outside the data do not cut.
        assert!(!empirical("tiny-d.txt", "1\n2\n4\n", ",min=0.5,max=4").is_clamped());
        // One value: always that value.
        let one = empirical("one.txt", "3\n", "");
        assert_eq!((one.mean(), one.scv(), one.quantile(0.3)), (3.0, 0.0, 3.0));
        // Zeros are allowed alongside positive values.
        assert_eq!(empirical("zeros.txt", "0\n0\n2\n", "").mean(), 0.5);
        // Relative paths resolve against the base directory.
        let path = temp_file("rel.txt", "1\n3\n");
        let dir = path.parent().unwrap();
        let rel = Dist::parse("empirical(file=rel.txt)", Role::Service, dir).unwrap();
        assert_eq!(rel.mean(), 2.0);
        assert_eq!(rel.text(), "empirical(file=rel.txt)");
        // Values are stored at f32 precision, as the engines sample them.
        let f = empirical("f32.txt", "0.1\n", "");
        assert_eq!(f.mean(), f64::from(0.1f32));
    }

    #[test]
    fn empirical_file_errors() {
        let dir = temp_file("probe.txt", "1\n")
            .parent()
            .unwrap()
            .to_path_buf();
        let err = |name: &str, content: Option<&str>| {
            if let Some(c) = content {
                temp_file(name, c);
            }
            err_in(Role::Service, &format!("empirical(file={name})"), &dir)
        };
        let missing = err("no-such-file.txt", None);
        assert!(
            missing.starts_with("service: empirical file 'no-such-file.txt' cannot be read ("),
            "{missing}"
        );
        assert!(
            missing.contains(&dir.join("no-such-file.txt").display().to_string()),
            "{missing}"
        );
        assert_eq!(
            err("empty.txt", Some("# only comments\n\n   \n")),
            "service: empirical file 'empty.txt' is empty; expected one nonnegative number per line"
        );
        assert_eq!(err("empty2.txt", Some("")), "service: empirical file 'empty2.txt' is empty; expected one nonnegative number per line");
        assert!(err("x.txt", Some("1\n2\nabc\n4\n")).starts_with(
            "service: empirical file 'x.txt' line 3: 'abc' is not a number; expected"
        ));
        assert!(err("header.txt", Some("seconds\n1\n2\n"))
            .starts_with("service: empirical file 'header.txt' line 1: 'seconds' is not a number"));
        assert!(err("trailing.txt", Some("1\n2 # two\n")).starts_with(
            "service: empirical file 'trailing.txt' line 2: '2 # two' is not a number"
        ));
        assert_eq!(
            err("neg.txt", Some("1\n-1\n")),
            "service: empirical file 'neg.txt' line 2: negative value -1; expected nonnegative numbers"
        );
        assert!(err("inf.txt", Some("1\ninf\n"))
            .starts_with("service: empirical file 'inf.txt' line 2: 'inf' is not a finite number"));
        assert!(err("nan.txt", Some("NaN\n"))
            .starts_with("service: empirical file 'nan.txt' line 1: 'NaN' is not a finite number"));
        assert!(err("big.txt", Some("1e39\n")).starts_with(
            "service: empirical file 'big.txt' line 1: '1e39' is not a finite number"
        ));
        assert_eq!(
            err("allzero.txt", Some("0\n0.0\n")),
            "service: empirical file 'allzero.txt' has only zero values; expected some positive value"
        );
        // The same checks hold for arrival laws.
        temp_file("neg2.txt", "-3\n");
        assert!(err_in(Role::Arrival, "empirical(file=neg2.txt)", &dir)
            .starts_with("arrival: empirical file 'neg2.txt' line 1: negative value -3"));
    }

    #[test]
    fn example_data_file_parses() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let d = Dist::parse(
            "empirical(file=example-service-times.txt)",
            Role::Service,
            &data,
        )
        .unwrap();
        let Shape::Empirical { values, .. } = &d.shape else {
            panic!()
        };
        assert!(
            (400..=600).contains(&values.len()),
            "{} values",
            values.len()
        );
        assert!(values[0] >= 0.0099 && values[values.len() - 1] <= 30.0);
        // Drawn from the study Weibull (mean 0.264, scv 6.24): loose sanity bounds.
        assert!(d.mean() > 0.1 && d.mean() < 0.6, "mean {}", d.mean());
        let text = std::fs::read_to_string(data.join("example-service-times.txt")).unwrap();
        assert!(text.starts_with('#'));
    }

    #[test]
    fn study_weibull_moments_are_exact() {
        // The best-known study's service law. Reference values from mpmath at
        // 40 digits: lo F(lo) + lambda Gamma(1+1/k) [P(.., (hi/lambda)^k) - P(.., (lo/lambda)^k)]
        // + hi (1 - F(hi)), cross-checked by mpmath.quad.
        let d = svc("weibull(shape=0.46,median=0.05,min=0.01,max=30)");
        assert!(d.is_clamped());
        let Shape::Weibull { scale, .. } = d.shape else {
            panic!()
        };
        close(scale, 0.110_917_892_910_083_04, 1e-14);
        close(d.mean(), 0.263_971_574_559_670_46, 1e-12);
        close(d.second_moment(), 0.504_388_566_908_970_7, 1e-12);
        close(d.scv(), 6.238_538_820_436_465, 1e-12);
        close(d.cdf(0.01), 0.281_505_527_812_509_6, 1e-13);
        close(1.0 - d.cdf(29.999_999), 1.954_380_597_559_335_6e-6, 1e-6);
        // Unclamped: mean lambda Gamma(1 + 1/k), scv Gamma(1+2/k)/Gamma(1+1/k)^2 - 1.
        let u = svc("weibull(shape=0.46,median=0.05)");
        close(u.mean(), 0.261_978_758_341_889, 1e-13);
        close(u.scv(), 6.359_801_129_389_285, 1e-12);
        println!(
            "study weibull(shape=0.46,median=0.05,min=0.01,max=30): mean {:.15} E[X^2] {:.15} scv {:.15}",
            d.mean(),
            d.second_moment(),
            d.scv()
        );
    }

    #[test]
    fn clamped_and_unclamped_moments_match_brute_force() {
        let texts = [
            "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
            "weibull(shape=0.46,median=0.05)",
            "weibull(shape=0.46,median=0.05,max=30)",
            "weibull(shape=2,scale=1,min=0.3,max=1.5)",
            "weibull(shape=5,mean=1,min=0.95)",
            "lognormal(sigma=1.5,median=1,min=0.2,max=20)",
            "lognormal(sigma=1.5,median=1)",
            "lognormal(scv=20,mean=1,max=3)",
            "lognormal(sigma=0.1,mean=1,min=1.05)",
            "gamma(shape=0.3,mean=1,min=0.01,max=5)",
            "gamma(shape=0.3,mean=1)",
            "gamma(shape=40,mean=1,min=0.9,max=1.2)",
            "erlang(k=3,mean=1,max=2)",
            "erlang(k=50,mean=1,min=1.1)",
            "exp(mean=1,min=0.5,max=3)",
            "exp(mean=2)",
            "hyperexp(scv=10,mean=1,min=0.05,max=8)",
            "hyperexp(scv=10,mean=1)",
            "pareto(alpha=1.5,min=1,max=100)",
            "pareto(alpha=1,min=0.5,max=50)",
            "pareto(alpha=2,min=0.5,max=50)",
            "pareto(alpha=0.3,min=0.5,max=5000)",
        ];
        for text in texts {
            let d = svc(text);
            for j in 1..=2 {
                let want = brute(&d, j);
                let got = if j == 1 { d.mean() } else { d.second_moment() };
                assert!(
                    (got - want).abs() <= 1e-12 * want,
                    "{text} E[X^{j}]: closed form {got:.17e}, brute force {want:.17e}"
                );
            }
        }
        // Exponential clamped above at h: E[min(X,h)] = m (1 - e^(-h/m)),
        // E[min(X,h)^2] = 2 m^2 (1 - e^(-h/m)(1 + h/m)).
        let d = svc("exp(mean=1,max=2)");
        close(d.mean(), 1.0 - (-2f64).exp(), 1e-14);
        close(d.second_moment(), 2.0 * (1.0 - 3.0 * (-2f64).exp()), 1e-14);
        // Det clamps are exact.
        assert_eq!(svc("det(value=2,max=1.5)").mean(), 1.5);
        assert_eq!(svc("det(value=2,min=2.5)").second_moment(), 6.25);
        assert_eq!(svc("det(value=2,min=2.5)").scv(), 0.0);
    }

    #[test]
    fn bounded_pareto_special_cases_are_continuous() {
        for alpha in [1.0f64, 2.0] {
            let at = svc(&format!("pareto(alpha={alpha},min=1,max=1000)"));
            for eps in [1e-12, -1e-12, 1e-7, -1e-7] {
                let near = svc(&format!("pareto(alpha={},min=1,max=1000)", alpha + eps));
                close(near.mean(), at.mean(), 1e-5 * eps.abs().max(1e-10) / 1e-7);
                close(
                    near.second_moment(),
                    at.second_moment(),
                    1e-5 * eps.abs().max(1e-10) / 1e-7,
                );
            }
        }
        // alpha = 1: E[X^2] = L H exactly.
        close(
            svc("pareto(alpha=1,min=2,max=30)").second_moment(),
            60.0,
            1e-14,
        );
    }

    #[test]
    fn with_mean_keeps_the_shape() {
        let path = temp_file("wm.txt", "0.5\n1\n7\n");
        let emp = format!("empirical(file={},min=0.8,max=5)", path.display());
        for text in [
            "exp(mean=1)",
            "det(value=3)",
            "erlang(k=5,mean=2)",
            "gamma(shape=0.2,scale=4)",
            "hyperexp(scv=9,mean=0.5)",
            "lognormal(scv=3,median=2)",
            "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
            "weibull(shape=3,scale=2)",
            "pareto(alpha=1.2,min=1,max=1000)",
            "uniform(min=2,max=5)",
            "gamma(shape=2,mean=1,min=0.5,max=3)",
            emp.as_str(),
        ] {
            let d = svc(text);
            for m in [1e-3, 0.3333, 7.5, 1e3] {
                let e = d.with_mean(m);
                close(e.mean(), m, 1e-13);
                close(e.scv(), d.scv(), 1e-11);
                assert_eq!(e.is_clamped(), d.is_clamped());
                assert_eq!(
                    (e.text(), e.name(), e.role()),
                    (d.text(), d.name(), d.role())
                );
                let c = m / d.mean();
                close(e.quantile(0.9), c * d.quantile(0.9), 1e-12);
            }
        }
        let e = svc("weibull(shape=0.46,median=0.05,min=0.01,max=30)").with_mean(2.0);
        let k = 2.0 / 0.263_971_574_559_670_46;
        close(e.clamps().0, 0.01 * k, 1e-12);
        close(e.clamps().1, 30.0 * k, 1e-12);
    }

    #[test]
    fn quantile_inverts_cdf() {
        let path = temp_file("q.txt", "0.5\n1\n7\n");
        let emp = format!("empirical(file={})", path.display());
        for text in [
            "exp(mean=2)",
            "erlang(k=4,mean=2)",
            "gamma(shape=0.3,scale=2)",
            "gamma(shape=30,scale=2)",
            "hyperexp(scv=20,mean=1)",
            "lognormal(sigma=2,median=3)",
            "weibull(shape=0.46,median=0.05)",
            "weibull(shape=4,scale=1)",
            "pareto(alpha=1.5,min=1,max=100)",
            "uniform(min=1,max=3)",
            emp.as_str(),
        ] {
            let d = svc(text);
            for p in [1e-9, 1e-4, 0.01, 0.3, 0.5, 0.77, 0.99, 1.0 - 1e-6] {
                let x = d.quantile(p);
                // Relative 1e-9, plus the rounding of x itself where the
                // support starts above 0 (pareto, uniform, empirical at p -> 0).
                let tol = 1e-9 * p + 1e-15;
                assert!(
                    (d.cdf(x) - p).abs() <= tol,
                    "{text}: cdf(quantile({p})) = {}",
                    d.cdf(x)
                );
                close(d.quantile(d.cdf(x)), x, 1e-9);
            }
        }
        let d = svc("weibull(shape=0.46,median=0.05,min=0.01,max=30)");
        close(d.quantile(0.5), 0.05, 1e-14);
        assert_eq!(
            (d.quantile(0.0), d.quantile(0.1), d.quantile(1.0)),
            (0.01, 0.01, 30.0)
        );
        assert_eq!((d.cdf(0.009), d.cdf(30.0)), (0.0, 1.0));
        close(svc("lognormal(sigma=2,median=3)").quantile(0.5), 3.0, 1e-14);
        assert_eq!(svc("exp(mean=1)").quantile(1.0), f64::INFINITY);
        assert_eq!(svc("exp(mean=1)").quantile(0.0), 0.0);
        assert_eq!(svc("det(value=2)").quantile(0.4), 2.0);
        assert_eq!(svc("pareto(alpha=1.5,min=1,max=100)").quantile(1.0), 100.0);
    }

    #[test]
    fn is_clamped_only_when_the_clamps_cut() {
        assert!(!svc("exp(mean=1)").is_clamped());
        assert!(!svc("exp(mean=1,min=0)").is_clamped());
        assert!(svc("exp(mean=1,max=5)").is_clamped());
        assert!(svc("exp(mean=1,min=0.1)").is_clamped());
        assert!(!svc("det(value=2,min=1,max=5)").is_clamped());
        assert!(svc("det(value=2,max=1)").is_clamped());
        assert!(!svc("pareto(alpha=1,min=1,max=5)").is_clamped());
        assert!(!svc("uniform(min=1,max=5)").is_clamped());
        // The closed-form scv of an unclamped law and the general one agree.
        let d = svc("weibull(shape=0.46,median=0.05,min=0.0000001,max=1e30)");
        assert!(d.is_clamped());
        close(d.scv(), svc("weibull(shape=0.46,median=0.05)").scv(), 1e-8);
    }

    #[test]
    fn special_functions_match_known_values() {
        let pi = std::f64::consts::PI;
        close(gamma_fn(0.5), pi.sqrt(), 1e-14);
        close(gamma_fn(1.0), 1.0, 1e-14);
        close(gamma_fn(5.0), 24.0, 1e-14);
        close(gamma_fn(10.0), 362_880.0, 1e-14);
        close(gamma_fn(1.0 / 3.0), 2.678_938_534_707_747_6, 1e-14);
        close(gamma_fn(0.01), 99.432_585_119_150_6, 1e-13);
        close(ln_gamma(100.0), 359.134_205_369_575_4, 1e-15);
        // P(1, x) = 1 - e^-x; P(2, x) = 1 - e^-x (1 + x).
        for x in [1e-8f64, 0.3, 1.0, 2.5, 40.0] {
            let (p, q) = gamma_pq(1.0, x);
            close(p, -(-x).exp_m1(), 1e-14);
            close(q, (-x).exp(), 1e-14);
            close(gamma_pq(2.0, x).1, (-x).exp() * (1.0 + x), 1e-14);
        }
        // Q(k, x) = Poisson(x) CDF at k - 1, both branches.
        for x in [5.0f64, 20.0] {
            let mut term = (-x).exp();
            let mut sum = term;
            for i in 1..10 {
                term *= x / f64::from(i);
                sum += term;
            }
            close(gamma_pq(10.0, x).1, sum, 1e-13);
        }
        // erf(1), erfc(2), Phi(-10).
        close(gamma_pq(0.5, 1.0).0, 0.842_700_792_949_714_9, 1e-15);
        close(gamma_pq(0.5, 4.0).1, 0.004_677_734_981_047_266, 1e-14);
        close(normal_cdf_pair(-10.0).0, 7.619_853_024_160_527e-24, 1e-13);
        close(normal_cdf_pair(10.0).1, 7.619_853_024_160_527e-24, 1e-13);
        close(normal_cdf_pair(1.0).0, 0.841_344_746_068_542_9, 1e-15);
        assert_eq!(normal_cdf_pair(0.0), (0.5, 0.5));
    }

    #[test]
    fn split_list_cases() {
        assert_eq!(
            split_list("exp(mean=1),weibull(shape=0.5,mean=2)").unwrap(),
            vec!["exp(mean=1)", "weibull(shape=0.5,mean=2)"]
        );
        assert_eq!(split_list("exp").unwrap(), vec!["exp"]);
        assert_eq!(
            split_list(" exp , det(value=1) ,erlang(k=2)").unwrap(),
            vec!["exp", "det(value=1)", "erlang(k=2)"]
        );
        assert_eq!(
            split_list("0.5,0.7,0.9").unwrap(),
            vec!["0.5", "0.7", "0.9"]
        );
        assert!(split_list("").unwrap_err().starts_with("empty list"));
        assert!(split_list("exp,,det")
            .unwrap_err()
            .starts_with("item 2 of 'exp,,det' is empty"));
        assert!(split_list("exp,")
            .unwrap_err()
            .starts_with("item 2 of 'exp,' is empty"));
        assert!(split_list(",exp")
            .unwrap_err()
            .starts_with("item 1 of ',exp' is empty"));
        assert!(split_list("exp(mean=1")
            .unwrap_err()
            .starts_with("unbalanced '('"));
        assert!(split_list("exp(mean=1)),det")
            .unwrap_err()
            .starts_with("unbalanced ')'"));
        assert!(split_list("exp)(")
            .unwrap_err()
            .starts_with("unbalanced ')'"));
        // Every item of a split list parses on its own.
        for item in split_list("exp(mean=1),weibull(shape=0.5,mean=2)").unwrap() {
            svc(&item);
        }
    }
}
