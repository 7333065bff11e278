//! Analytic baselines for the simulated queues.
//!
//! Why this module exists: a Monte Carlo sweep is only believable when it
//! agrees with theory wherever theory is exact, and it is only interpretable
//! when the reader can see how far a configuration sits from the nearest
//! classical model. So every simulated row gets, beside it, the closed-form
//! mean and 99th-percentile waiting time (wait = arrival to start of service,
//! in the time unit of the inputs) of the queue that was actually simulated,
//! together with a `method` label that says whether the number is exact
//! (`exact:...`), a named approximation (`approx:...`), missing (`none`) or
//! whether the system is overloaded (`unstable`). Exact rows are a regression
//! test for the simulator; approximate rows are a sanity check only.
//!
//! The module also reproduces the published table of the analysis that started
//! the project (lambda = 150/s, mu = 3/s, "dumb" vs "smart" routing) and shows
//! that its "smart routing" column is `1/(R mu - lambda)`, i.e. the Erlang C
//! mean wait with the probability of waiting forced to 1, which badly
//! overstates the waits of a central queue at large R.
//!
//! std only. References, cited at each formula:
//! - \[Kleinrock\] L. Kleinrock, *Queueing Systems, Vol. 1: Theory*, Wiley, 1975.
//! - \[GH\] D. Gross, C. M. Harris, *Fundamentals of Queueing Theory*, 3rd ed.,
//!   Wiley, 1998.
//! - \[Allen\] A. O. Allen, *Probability, Statistics, and Queueing Theory with
//!   Computer Science Applications*, 2nd ed., Academic Press, 1990
//!   (the Allen–Cunneen approximation).
//! - \[KLB\] W. Krämer, M. Langenbach-Belz, "Approximate formulae for the delay
//!   in the queueing system GI/G/1", Proc. 8th Int. Teletraffic Congress,
//!   Melbourne, 1976.
//! - \[Whitt93\] W. Whitt, "Approximations for the GI/G/m queue", Production and
//!   Operations Management 2(2), 1993, 114–161.
//! - \[Tijms\] H. C. Tijms, *A First Course in Stochastic Models*, Wiley, 2003
//!   (M/G/1 embedded chain and its level-crossing recursion).
//! - \[Crommelin\] C. D. Crommelin, "Delay probability formulae when the holding
//!   times are constant", P.O. Elec. Engrs. J. 25, 1932, 41–50.
//! - \[Franx\] G. J. Franx, "A simple solution for the M/D/c waiting time
//!   distribution", Operations Research Letters 29, 2001, 221–229.
//! - \[HW81\] S. Halfin, W. Whitt, "Heavy-traffic limits for queues with many
//!   exponential servers", Operations Research 29, 1981, 567–588 (used in a
//!   test only).
//!
//! - \[Mitz01\] M. Mitzenmacher, "The power of two choices in randomized load
//!   balancing", IEEE Trans. Parallel and Distributed Systems 12(10), 2001,
//!   1094–1104; \[VDK96\] N. D. Vvedenskaya, R. L. Dobrushin, F. I.
//!   Karpelevich, "Queueing system with selection of the shortest of two
//!   queues: an asymptotic approach", Problems of Information Transmission
//!   32(1), 1996, 15–27 (the power-of-d mean-field limit).
//!
//! The dynamic policies (`jsq`, `pod`, `jiq`, `lwl`, several routers) have
//! exact results only where they reduce to a classical queue: one server
//! (every policy sends everything to it: M/M/1 and friends), `pod` with one
//! choice (random routing), and `lwl`, whose waits are the central queue's.
//! Power of d ≥ 2 choices with one router, Poisson arrivals and exponential
//! service gets the mean-field (R → ∞) limit, `approx:mean_field_pod`; the
//! rest get `none`.
//!
//! Where to find what:
//! - `mod.rs` (this file): the inputs ([`QueueInput`], [`Policy`],
//!   [`LawMoments`]), the result ([`Baseline`]) and the decision tree
//!   [`baseline`] that picks the formula for the queue actually simulated;
//! - `stream.rs`: the per-queue arrival stream derived from the total one
//!   (random thinning, round robin) and its Laplace–Stieltjes transform;
//! - `erlang.rs`: Erlang B and C, M/M/c mean and quantile;
//! - `mg1.rs`: Pollaczek–Khinchine and the exact M/D/1 distribution;
//! - `gi_m_1.rs`: GI/M/1 and E_R/M/1;
//! - `mmpp_m_1.rs`: MMPP/M/1 by the matrix-geometric method (MMPP arrivals
//!   are not renewal: every other formula here is refused for them);
//! - `approximations.rs`: Krämer–Langenbach-Belz, Allen–Cunneen, the
//!   exponential-tail p99 and the power-of-d mean-field limit;
//! - `seed.rs`: the published seed figures and their exact counterparts;
//! - `tests.rs`: unit tests.

mod approximations;
pub mod capacity;
mod erlang;
pub mod finite;
pub mod fleet;
mod gi_m_1;
pub mod impatience;
mod mg1;
pub mod mmpp_m_1;
pub mod patience;
mod seed;
mod stream;
#[cfg(test)]
mod tests;

pub use approximations::{
    allen_cunneen_mean_wait, exp_tail_quantile, kraemer_langenbach_belz_mean_wait, mean_field_pod,
    MeanFieldPod,
};
pub use erlang::{erlang_b, erlang_c, mmc_mean_wait, mmc_wait_quantile};
pub use gi_m_1::{er_m_1, GiM1};
pub use mg1::{md1_wait_cdf, md1_wait_quantile, pollaczek_khinchine_mean_wait};
pub use seed::{
    seed_comparison_rows, PublishedSeedFigure, SeedComparisonRow, PUBLISHED_SEED_FIGURES,
    SEED_LAMBDA, SEED_MU,
};

use gi_m_1::gi_m_1;
use stream::{KnownLst, Split};

/// Routing policy of the load balancer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Each request goes to a dyno chosen uniformly at random (Bernoulli(1/R) thinning).
    Random,
    /// Request i goes to dyno i mod R.
    RoundRobin,
    /// One FCFS queue in front of all `servers * workers` workers.
    Central,
    /// Join the shortest queue; `routers` routers each see only their own requests.
    Jsq { routers: u32 },
    /// Power of `d` choices (`d` already at most `servers`).
    Pod { d: u32, routers: u32 },
    /// Join the idle queue.
    Jiq { routers: u32 },
    /// Least work left: the central queue's waits.
    Lwl,
    /// `routers` > 1 routers, each with its own central queue.
    CentralRouters { routers: u32 },
}

impl Policy {
    /// Whether the dispatch kernel simulates it (single-worker servers only).
    fn is_dynamic(self) -> bool {
        !matches!(self, Policy::Random | Policy::RoundRobin | Policy::Central)
    }
}

/// Family of a distribution, as far as the formulas care.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Family {
    Exp,
    Det,
    Erlang {
        k: u32,
    },
    Gamma {
        shape: f64,
    },
    HyperExp,
    Lognormal,
    Weibull,
    Pareto,
    Uniform,
    Empirical,
    /// A replayed trace: its gaps' marginal law is known (empirical), but
    /// consecutive gaps keep the trace's correlations, so no formula for
    /// renewal input applies and no baseline exists.
    Trace,
    /// A two-phase MMPP (the arrival stream, rescaled to the row's rate):
    /// not a renewal process, so no formula for renewal input applies;
    /// `mmpp_m_1` is its exact one-server baseline.
    Mmpp(crate::dist::Mmpp),
}

/// The parts of a distribution the formulas use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LawMoments {
    pub family: Family,
    /// True mean (including the effect of min/max clamps).
    pub mean: f64,
    /// Squared coefficient of variation Var/mean^2 (true, clamps included).
    pub scv: f64,
    /// True when min=/max= clamps are active: the family's exact shape formulas
    /// no longer apply, but `mean` and `scv` are still exact.
    pub clamped: bool,
}

/// The configuration of one simulated row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueInput {
    pub policy: Policy,
    /// R, number of dynos (>= 1).
    pub servers: u32,
    /// Servers per dyno (>= 1).
    pub workers: u32,
    /// Total arrival rate to the whole system.
    pub lambda: f64,
    /// Interarrival law of the total arrival stream (mean = 1/lambda).
    pub arrival: LawMoments,
    pub service: LawMoments,
}

/// Analytic baseline for one row.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    pub mean_wait: Option<f64>,
    pub p99_wait: Option<f64>,
    /// One of "exact:mm1", "exact:erlang_c", "exact:pollaczek_khinchine",
    /// "exact:md1", "exact:er_m_1", "exact:gi_m_1", "exact:mmpp_m_1",
    /// "exact:mg1_by_class" (a mixed fleet routed at random: `fleet`),
    /// "exact:erlang_a", "exact:mm1_det_patience", "exact:mmc_det_patience",
    /// "exact:mg1_det_patience" (abandonment: `patience`),
    /// "exact:mm1k", "exact:mmck", "exact:erlang_b" (a capacity: `capacity`),
    /// "approx:kraemer_langenbach_belz", "approx:allen_cunneen",
    /// "approx:mean_field_pod", "none",
    /// "unstable". An `approx:` label covers both numbers (the p99 then comes
    /// from an exponential-tail fit to the approximate mean).
    pub method: String,
    /// The wait's exact tail P(W > t), where the baseline is exact and the
    /// formula gives the whole law (not Pollaczek–Khinchine's mean alone):
    /// `--slo`'s `analytic_p_wait_gt_{t}` columns.
    pub wait_tail: Option<WaitTail>,
    /// With patience (`patience::with_patience`): the exact fraction of
    /// requests lost to it (abandoned, or timed out); None without patience
    /// or where no formula is known.
    pub p_lost: Option<f64>,
    /// Under abandonment, where exact: the queue's law (`impatience`), whose
    /// served requests' wait tail answers [`Baseline::p_wait_gt`].
    pub served: Option<Box<impatience::Impatience>>,
    /// Under a capacity, where exact: the finite queue's law (`finite`),
    /// whose admitted requests' wait tail answers [`Baseline::p_wait_gt`];
    /// its blocking probability is `p_lost`.
    pub limited: Option<Box<finite::Finite>>,
    /// A mixed fleet, where exact (`fleet`): each speed class's mean wait,
    /// in the fleet's written order.
    pub class_mean_wait: Option<Vec<f64>>,
}

/// An exact law of the FCFS wait's tail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitTail {
    /// P(W > t) = `p_wait` · exp(−`decay` · t): M/M/c, with P(W > 0) the
    /// Erlang C probability and decay c μ − λ (\[GH\] ch. 2), and GI/M/1,
    /// with σ and μ (1 − σ) (\[Kleinrock\] ch. 6; \[GH\] ch. 5).
    Exponential { p_wait: f64, decay: f64 },
    /// M/D/1: one minus the exact CDF of `md1_wait_cdf` (\[Crommelin\];
    /// \[Franx\]), arrival rate `lambda`, service time `d`.
    Md1 { lambda: f64, d: f64 },
}

impl WaitTail {
    /// P(W > t); None where the formula cannot say (M/D/1 beyond its table).
    pub fn p_wait_gt(&self, t: f64) -> Option<f64> {
        match *self {
            WaitTail::Exponential { p_wait, decay } => Some(p_wait * (-decay * t.max(0.0)).exp()),
            WaitTail::Md1 { lambda, d } => md1_wait_cdf(lambda, d, t).map(|c| (1.0 - c).max(0.0)),
        }
    }
}

impl Baseline {
    fn new(method: &str, mean_wait: Option<f64>, p99_wait: Option<f64>) -> Self {
        Baseline {
            mean_wait,
            p99_wait,
            method: method.to_string(),
            wait_tail: None,
            p_lost: None,
            served: None,
            limited: None,
            class_mean_wait: None,
        }
    }

    fn with_tail(self, wait_tail: WaitTail) -> Self {
        Baseline {
            wait_tail: Some(wait_tail),
            ..self
        }
    }

    /// The exact P(W > t), where the baseline knows the wait's law (under
    /// abandonment, the served requests' wait).
    pub fn p_wait_gt(&self, t: f64) -> Option<f64> {
        match (&self.served, &self.limited) {
            (Some(r), _) => r.p_served_wait_gt(t),
            (None, Some(f)) => f.p_wait_gt(t),
            (None, None) => self.wait_tail.and_then(|w| w.p_wait_gt(t)),
        }
    }

    fn none() -> Self {
        Self::new("none", None, None)
    }

    fn unstable() -> Self {
        Self::new("unstable", None, None)
    }
}

/// The percentile reported in `Baseline::p99_wait`.
const P99: f64 = 0.99;

fn pos_finite(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

fn nonneg_finite(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// `a` and `b` agree to a relative 1e-6 (absolute 1e-9 near zero).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 + 1e-6 * a.abs().max(b.abs())
}

/// Poisson arrivals / exponential service: family Exp, not clamped, and an scv
/// consistent with it (a defensive check; an inconsistent law is treated as general).
fn is_exponential(law: &LawMoments) -> bool {
    law.family == Family::Exp && !law.clamped && close(law.scv, 1.0)
}

// ---------------------------------------------------------------------------
// Which queue is simulated, and the decision tree.
// ---------------------------------------------------------------------------

/// Analytic baseline (mean and p99 of the FCFS wait) for one configuration.
///
/// The queue actually simulated:
/// - Central: one FCFS queue, c = servers * workers, the total arrival stream.
/// - Random: each dyno gets a Bernoulli(1/R) thinning of the stream (Poisson
///   stays Poisson(lambda/R); a renewal stream with scv s stays renewal with
///   scv 1 + (s-1)/R), c = workers.
/// - RoundRobin: each dyno gets every R-th arrival (interarrival = sum of R
///   interarrivals: Erlang-R for Poisson input, scv s/R in general), c = workers.
///
/// - Lwl: the central queue's waits; Pod with d = 1: random routing; Jsq,
///   Pod and Jiq with R = 1: the one server's queue; Pod with 2 <= d < R, one
///   router, Poisson arrivals and exponential service: the mean-field limit
///   ([`mean_field_pod`]); every other dynamic configuration: none.
///
/// Then, with rho = lambda E\[S\] / (R * workers):
/// rho >= 1 (or NaN) gives "unstable"; Poisson input with exponential service
/// gives M/M/1 or Erlang C; a single-server queue with exponential service and
/// a renewal input whose transform is known gives GI/M/1 (E_R/M/1 for round
/// robin over Poisson); Poisson input to a single server with general service
/// gives Pollaczek–Khinchine (plus the exact M/D/1 percentile for
/// deterministic service); everything else gets Krämer–Langenbach-Belz (one
/// server) or Allen–Cunneen (several servers). MMPP arrivals, which are not
/// renewal, get none of these: [`mmpp_baseline`]; a replayed trace gets none
/// at all.
pub fn baseline(q: &QueueInput) -> Baseline {
    let s = q.service;
    // NaN or non-positive rates/means: nothing to say. Infinite ones fall
    // through to rho = inf, i.e. "unstable".
    let bad = |x: f64| x.is_nan() || x <= 0.0;
    if q.servers == 0 || q.workers == 0 || bad(q.lambda) || bad(s.mean) {
        return Baseline::none();
    }
    let rho = q.lambda * s.mean / (f64::from(q.servers) * f64::from(q.workers));
    if rho.is_nan() || rho >= 1.0 {
        return Baseline::unstable();
    }
    if !nonneg_finite(s.scv) {
        // E.g. Pareto with infinite variance: the exact M/G/1 mean is infinite,
        // the approximations are meaningless.
        return Baseline::none();
    }
    if q.arrival.family == Family::Trace {
        // A replayed trace is no renewal process and no MMPP: no formula.
        return Baseline::none();
    }

    let r = q.servers;
    if q.policy.is_dynamic() && q.workers != 1 {
        return Baseline::none();
    }
    let policy = match q.policy {
        Policy::Lwl => Policy::Central,
        Policy::Pod { d: 1, .. } => Policy::Random,
        p => p,
    };
    let (c, lam, split) = match policy {
        Policy::Central => match r.checked_mul(q.workers) {
            Some(c) => (c, q.lambda, Split::Identity),
            None => return Baseline::none(),
        },
        Policy::CentralRouters { .. } => return Baseline::none(),
        _ if r == 1 => (q.workers, q.lambda, Split::Identity),
        Policy::Random => (
            q.workers,
            q.lambda / f64::from(r),
            Split::Thin(1.0 / f64::from(r)),
        ),
        Policy::RoundRobin => (q.workers, q.lambda / f64::from(r), Split::Sum(r)),
        Policy::Pod { d, routers: 1 }
            if d < r && is_exponential(&q.arrival) && is_exponential(&s) =>
        {
            let m = mean_field_pod(d, rho, s.mean);
            return Baseline::new("approx:mean_field_pod", Some(m.mean_wait), Some(m.p99_wait));
        }
        _ => return Baseline::none(),
    };
    let mu = 1.0 / s.mean;
    if let Family::Mmpp(m) = q.arrival.family {
        return mmpp_baseline(&m, q.lambda, r, c, &split, &s);
    }
    let arrival_poisson = is_exponential(&q.arrival);
    // Thinning a Poisson process gives a Poisson process; round robin does not.
    let stream_poisson = arrival_poisson && !matches!(split, Split::Sum(_));

    if is_exponential(&s) {
        if stream_poisson {
            // [Kleinrock] ch. 3 (M/M/1, M/M/m); [GH] ch. 2 (M/M/1, M/M/c):
            // P(W > t) = C(c, a) exp(-(c mu - lambda) t), E[W] = C / (c mu - lambda),
            // with C(1, a) = rho.
            let method = if c == 1 {
                "exact:mm1"
            } else {
                "exact:erlang_c"
            };
            return Baseline::new(
                method,
                Some(mmc_mean_wait(c, lam, mu)),
                Some(mmc_wait_quantile(c, lam, mu, P99)),
            )
            .with_tail(WaitTail::Exponential {
                p_wait: erlang_c(c, lam / mu),
                decay: f64::from(c) * mu - lam,
            });
        }
        if c == 1 {
            if let Some(base) = KnownLst::from_law(&q.arrival, q.lambda) {
                let sol = gi_m_1(mu, |x| split.one_minus_lst(base.one_minus_lst(x)));
                if let Some(sol) = sol {
                    let method = if arrival_poisson && matches!(split, Split::Sum(_)) {
                        "exact:er_m_1"
                    } else {
                        "exact:gi_m_1"
                    };
                    return Baseline::new(
                        method,
                        Some(sol.mean_wait()),
                        Some(sol.wait_quantile(P99)),
                    )
                    .with_tail(WaitTail::Exponential {
                        p_wait: sol.sigma,
                        decay: sol.decay,
                    });
                }
            }
        }
    } else if stream_poisson && c == 1 {
        // M/G/1: Pollaczek–Khinchine is exact for any service law with finite
        // second moment, clamped or not, since mean and scv are exact.
        let mean = pollaczek_khinchine_mean_wait(lam, s.mean, s.scv);
        if s.scv <= 0.0 {
            // Deterministic service (Det, or any law with zero variance).
            return Baseline::new("exact:md1", Some(mean), md1_wait_quantile(lam, s.mean, P99))
                .with_tail(WaitTail::Md1 {
                    lambda: lam,
                    d: s.mean,
                });
        }
        return Baseline::new("exact:pollaczek_khinchine", Some(mean), None);
    }

    // Approximations.
    let ca2 = if arrival_poisson {
        split.scv(1.0)
    } else {
        split.scv(q.arrival.scv)
    };
    if !nonneg_finite(ca2) {
        return Baseline::none();
    }
    let cs2 = s.scv;
    if c == 1 {
        let mean = kraemer_langenbach_belz_mean_wait(lam, s.mean, ca2, cs2);
        // P(W > 0) ~ rho (exact for Poisson input), exponential tail fitted to
        // the mean (the exponential-tail heuristic discussed in [Whitt93]).
        let p99 = exp_tail_quantile(lam * s.mean, mean, P99);
        Baseline::new("approx:kraemer_langenbach_belz", Some(mean), Some(p99))
    } else {
        let mean = allen_cunneen_mean_wait(c, lam, s.mean, ca2, cs2);
        // P(W > 0) ~ Erlang C (the M/M/c value), exponential tail fitted to the mean.
        let p99 = exp_tail_quantile(erlang_c(c, lam * s.mean), mean, P99);
        Baseline::new("approx:allen_cunneen", Some(mean), Some(p99))
    }
}

/// The baseline of a queue fed by an MMPP (`arrival`, the whole stream at
/// rate `lambda`), split by `split` over `r` dynos, the queue having `c` servers of exponential or
/// other `service`: the exact MMPP/M/1 mean wait (`exact:mmpp_m_1`,
/// [`mmpp_m_1`], no percentile) for one exponential server seeing the whole
/// stream or a random share of it (the MMPP with rates r/R,
/// [`Mmpp::thinned`](crate::dist::Mmpp::thinned)), else `none`: the
/// stream is not renewal, so no renewal formula (GI/M/1, E_R/M/1, Erlang C,
/// Pollaczek–Khinchine, Krämer–Langenbach-Belz, Allen–Cunneen) holds, and
/// round robin's every R-th arrival of an MMPP is not an MMPP.
fn mmpp_baseline(
    arrival: &crate::dist::Mmpp,
    lambda: f64,
    r: u32,
    c: u32,
    split: &Split,
    service: &LawMoments,
) -> Baseline {
    if c != 1 || !is_exponential(service) {
        return Baseline::none();
    }
    // The stream as the row's rate has it (the law is already scaled to
    // it; rescaling again guards the formula against any drift).
    let stream = arrival.scaled(arrival.mean_rate() / lambda);
    let queue = match *split {
        Split::Identity => stream,
        Split::Thin(_) => stream.thinned(r),
        Split::Sum(_) => return Baseline::none(),
    };
    match mmpp_m_1::MmppM1::solve(&queue, 1.0 / service.mean) {
        Some(sol) => Baseline::new("exact:mmpp_m_1", Some(sol.mean_wait()), None),
        None => Baseline::none(),
    }
}
