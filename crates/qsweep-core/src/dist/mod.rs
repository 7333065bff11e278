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
//! the normal CDF for the lognormal, exact sums over the values or the
//! segments of empirical tables), accurate to about 1e-13 relative; the
//! test module checks them against brute-force quadrature.
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
//!
//! Where to find what:
//! - `mod.rs` (this file): the types ([`Dist`], [`Role`], [`DistError`], the
//!   internal `Shape`), accessors, rescaling and the encoder [`Dist::to_law`];
//! - `law_name.rs`: the closed set of law names ([`LawName`]) and, per law,
//!   the keys it accepts;
//! - `parse.rs`: text to law ([`Dist::parse`], [`split_list`]), every key
//!   check and error message;
//! - `empirical.rs`: reading an `empirical(file=...)` data file;
//! - `moments.rs`: exact moments, clamps included ([`Dist::mean`],
//!   [`Dist::scv`], [`Dist::law_moments`]);
//! - `cdf.rs`: [`Dist::cdf`] and [`Dist::quantile`];
//! - `tails.rs`: tail moments [`Dist::tail_moment`] and the integrated CDF
//!   [`Dist::integrated_cdf`] (the horizon diagnostic, sojourn percentiles);
//! - `limits.rs`: the laws the f32 engines can sample and simulate, and the
//!   refusal of the others at parse time;
//! - `special.rs`: the special functions the moments need ([`ln_gamma`],
//!   [`gamma_fn`], [`gamma_pq`], the normal CDF);
//! - `tests.rs`: unit tests, including brute-force quadrature checks.

use std::fmt;
use std::sync::Arc;

use crate::contract::{Law, LawKind};

mod cdf;
mod empirical;
mod law_name;
mod limits;
mod mmpp;
mod moments;
mod parse;
mod special;
mod tails;
#[cfg(test)]
mod tests;

pub use law_name::{LawName, LAW_NAMES};
pub use mmpp::Mmpp;
pub use parse::split_list;
pub use special::{gamma_fn, gamma_pq, ln_gamma};

/// The index of dispersion for counts of a trace's gaps (file order): the
/// variance over mean of the arrivals counted in consecutive windows of
/// √n mean gaps (n gaps; about √n windows), the stream cut at its own
/// mean rate. Cut this way the estimate's bias (windows too short to see
/// slow bursts) and its noise (too few windows) shrink together. 1 for a
/// Poisson trace, near 0 for evenly spaced arrivals, larger for bursts.
pub fn trace_dispersion(gaps: &[f64]) -> f64 {
    let n = gaps.len();
    let total: f64 = gaps.iter().sum();
    let mean_gap = total / n as f64;
    let width = (n as f64).sqrt().max(1.0) * mean_gap;
    let windows = (total / width).floor() as usize;
    if windows < 2 || width.is_nan() || width <= 0.0 {
        return f64::NAN;
    }
    let mut counts = vec![0.0f64; windows];
    let mut t = 0.0;
    for &g in gaps {
        t += g;
        let w = (t / width) as usize;
        if w < windows {
            counts[w] += 1.0;
        }
    }
    let mean = counts.iter().sum::<f64>() / windows as f64;
    let var = counts.iter().map(|c| (c - mean) * (c - mean)).sum::<f64>() / (windows - 1) as f64;
    var / mean
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
    /// With probability `p1` exponential of mean `mean1`, else (probability
    /// `p2 = 1 − p1`, the small one, kept on its own so that it keeps its
    /// precision at any scv) of mean `mean2`.
    HyperExp {
        p1: f64,
        p2: f64,
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
    /// The sorted `values` (already rounded to f32, as the engines see
    /// them), times `scale`: resampled (each draw one of the `n` values,
    /// each with probability `1/n`), or with `smooth=linear` the
    /// piecewise-linear inverse CDF through them.
    Empirical {
        values: Arc<[f64]>,
        scale: f64,
        smooth: Smoothing,
        /// `prefix[k]` = the sum of the first `k` values (unscaled), so the
        /// integrated CDF is one binary search (`tails.rs`).
        prefix: Arc<[f64]>,
        /// A trace (`trace(file=...)`, an arrival law only): the same values
        /// in file order, the gaps between consecutive timestamps, which
        /// the engines replay in that order from a random start instead of
        /// resampling. Its moments, CDF and tails are those of the gaps'
        /// empirical law (`values`, resampled): the law of the gap at a
        /// uniformly random position, which is what one draw from a random
        /// start is. Consecutive gaps keep the trace's correlations, so it is
        /// not a renewal process.
        replay: Option<Arc<[f64]>>,
    },
    /// A two-phase Markov-modulated Poisson process (`mmpp.rs`), an
    /// arrival law only: its moments, CDF and scv are those of the
    /// stationary interarrival (a phase-type law), but consecutive draws
    /// are correlated through the phase the samplers keep.
    Mmpp(Mmpp),
}

/// How an `empirical(file=...)` law draws from its values (`smooth=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Smoothing {
    /// `smooth=none`, the default: the bootstrap. Each draw is one of the
    /// observed values, each with probability `1/n`, so the law's moments
    /// are the sample's.
    None,
    /// `smooth=linear`: the piecewise-linear inverse CDF through the sorted
    /// values (`n − 1` segments, each with probability `1/(n − 1)`, spread
    /// uniformly), a continuous law between the smallest and largest value.
    Linear,
}

impl Smoothing {
    /// The value of `smooth=` that names it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Smoothing::None => "none",
            Smoothing::Linear => "linear",
        }
    }
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
    /// The data file an empirical law was read from (resolved path).
    data_file: Option<std::path::PathBuf>,
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Dist {
    /// The text as the user wrote it, trimmed (used in CSV columns).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The file an empirical law's values come from (as resolved when it was
    /// read), so a run can refuse to write over its own input.
    pub fn data_file(&self) -> Option<&std::path::Path> {
        self.data_file.as_deref()
    }

    /// How an empirical law draws from its values (`smooth=`); `None` for
    /// the other laws.
    pub fn smoothing(&self) -> Option<Smoothing> {
        match self.shape {
            Shape::Empirical {
                smooth,
                replay: None,
                ..
            } => Some(smooth),
            _ => None,
        }
    }

    /// The role this law was parsed for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The law's name: "exp", "weibull", ...
    pub fn name(&self) -> &'static str {
        self.law_name().as_str()
    }

    /// The law's name as a [`LawName`].
    pub fn law_name(&self) -> LawName {
        match self.shape {
            Shape::Exp { .. } => LawName::Exp,
            Shape::Det { .. } => LawName::Det,
            Shape::Erlang { .. } => LawName::Erlang,
            Shape::Gamma { .. } => LawName::Gamma,
            Shape::HyperExp { .. } => LawName::HyperExp,
            Shape::LogNormal { .. } => LawName::LogNormal,
            Shape::Weibull { .. } => LawName::Weibull,
            Shape::Pareto { .. } => LawName::Pareto,
            Shape::Uniform { .. } => LawName::Uniform,
            Shape::Empirical { replay: None, .. } => LawName::Empirical,
            Shape::Empirical {
                replay: Some(_), ..
            } => LawName::Trace,
            Shape::Mmpp(_) => LawName::Mmpp,
        }
    }

    /// Whether consecutive draws depend on each other (an MMPP's phase, a
    /// trace's order): the stream is not a renewal process, so no renewal
    /// formula applies to it.
    pub fn is_renewal(&self) -> bool {
        !self.law_name().is_arrival_only()
    }

    /// The arrival stream's index of dispersion for counts, Var N(t)/E N(t)
    /// for long windows t: for an MMPP the closed form of
    /// [`Mmpp::dispersion`]; for a renewal stream its interarrival scv, the
    /// asymptotic index of every renewal process (Cox, *Renewal Theory*,
    /// Methuen, 1962, sec. 4.5: Var N(t) ~ c² t/μ), so 1 for Poisson; for
    /// a trace, which repeats (so its asymptotic index is 0), the index at
    /// windows of √n mean gaps ([`trace_dispersion`]).
    pub fn dispersion(&self) -> f64 {
        match &self.shape {
            Shape::Mmpp(m) => m.dispersion(),
            Shape::Empirical {
                replay: Some(gaps), ..
            } => trace_dispersion(gaps),
            _ => self.scv(),
        }
    }

    /// The MMPP this arrival law is (rescaled by the load as sampled), or
    /// None for the renewal laws.
    pub fn mmpp(&self) -> Option<Mmpp> {
        match self.shape {
            Shape::Mmpp(m) => Some(m),
            _ => None,
        }
    }

    /// What one of `r` queues sees of this arrival stream when each arrival
    /// joins one of them at random, where that is again a law of this
    /// module that the engines sample directly: for MMPP the MMPP with rates
    /// r_i/R ([`Mmpp::thinned`]), so a one-dyno simulation draws one
    /// interarrival per customer instead of summing a geometric number of
    /// the stream's. None for the renewal laws (the engines thin them:
    /// `Sampler::next_interarrival`), and for an MMPP whose thinned
    /// sampler would loop too long ([`Mmpp::cycle_arrival`] below
    /// `contract::MMPP_MIN_CYCLE_ARRIVAL`; the engines then sum the stream's
    /// own draws, which is exact too).
    pub fn thinned_at_random(&self, r: u32) -> Option<Dist> {
        let Shape::Mmpp(m) = self.shape else {
            return None;
        };
        let thin = m.thinned(r);
        (r > 1 && thin.cycle_arrival() >= crate::contract::MMPP_MIN_CYCLE_ARRIVAL).then(|| Dist {
            shape: Shape::Mmpp(thin),
            ..self.clone()
        })
    }

    /// The clamps `(lo, hi)` applied to every draw: `(0, inf)` when absent.
    pub fn clamps(&self) -> (f64, f64) {
        (self.lo, self.hi)
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
            Shape::HyperExp {
                p1,
                p2,
                mean1,
                mean2,
            } => Shape::HyperExp {
                p1: *p1,
                p2: *p2,
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
            Shape::Empirical {
                values,
                scale,
                smooth,
                prefix,
                replay,
            } => Shape::Empirical {
                values: values.clone(),
                scale: scale * c,
                smooth: *smooth,
                prefix: prefix.clone(),
                replay: replay.clone(),
            },
            Shape::Mmpp(m) => Shape::Mmpp(m.scaled(c)),
        };
        Dist {
            text: self.text.clone(),
            role: self.role,
            shape,
            lo: self.lo * c,
            hi: self.hi * c,
            data_file: self.data_file.clone(),
        }
    }

    /// The f32 record the engines sample from (see [`Law`]). Empirical laws
    /// append their sorted values to `table` and point at them, `p[0]`
    /// saying how they are drawn ([`Smoothing`]).
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
            Shape::HyperExp {
                p2, mean1, mean2, ..
            } => {
                // The rare branch first: the samplers compare a full-range
                // uniform with p[0], which resolves a small p2 exactly, where
                // 1 − p2 would round to 1 in f32 from scv ≈ 3e7 on.
                law.kind = LawKind::HyperExp.code();
                law.p[0] = f(*p2);
                law.p[1] = f(*mean2);
                law.p[2] = f(*mean1);
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
                // (L/H)^alpha and 1 − (L/H)^alpha in f64: in f32 on the
                // device, 1 − (L/H)^alpha cancels to 0 for tiny alpha.
                let ell = (lo / hi).ln();
                law.kind = LawKind::Pareto.code();
                law.p[0] = f(*alpha);
                law.p[1] = f(*lo);
                law.p[2] = f((alpha * ell).exp());
                law.p[3] = f(-(alpha * ell).exp_m1());
            }
            Shape::Uniform { min, width } => {
                law.kind = LawKind::Uniform.code();
                law.p[0] = f(*min);
                law.p[1] = f(*width);
            }
            Shape::Empirical {
                scale,
                replay: Some(gaps),
                ..
            } => {
                // The gaps in file order; `n` of them, position drawn in
                // [0, n) and wrapped at n by the samplers.
                law.kind = LawKind::Trace.code();
                law.n = gaps.len() as u32;
                law.offset = table.len() as u32;
                law.scale = f(*scale);
                table.extend(gaps.iter().map(|&v| v as f32));
            }
            Shape::Empirical {
                values,
                scale,
                smooth,
                replay: None,
                ..
            } => {
                law.kind = LawKind::Empirical.code();
                law.n = values.len() as u32;
                law.offset = table.len() as u32;
                law.scale = f(*scale);
                law.p[0] = match smooth {
                    Smoothing::None => 0.0,
                    Smoothing::Linear => 1.0,
                };
                table.extend(values.iter().map(|&v| v as f32));
            }
            Shape::Mmpp(m) => {
                // Sojourn means and arrival probabilities from f64 (see
                // `Law`); the start-phase probability as a 32-bit threshold.
                law.kind = LawKind::Mmpp.code();
                for i in 0..2 {
                    let q = m.rates[i] + m.switch[i];
                    law.p[i] = f(1.0 / q);
                    law.p[2 + i] = f(m.rates[i] / q);
                }
                let start1 = m.stationary()[1] * 4_294_967_296.0;
                law.n = start1.round().min(f64::from(u32::MAX)) as u32;
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

    /// Support `[min, max]` of the unclamped base law.
    fn support(&self) -> (f64, f64) {
        match &self.shape {
            Shape::Det { value } => (*value, *value),
            Shape::Pareto { lo, hi, .. } => (*lo, *hi),
            Shape::Uniform { min, width } => (*min, min + width),
            Shape::Empirical { values, scale, .. } => {
                (values[0] * scale, values[values.len() - 1] * scale)
            }
            _ => (0.0, f64::INFINITY),
        }
    }
}
