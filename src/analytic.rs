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
    Erlang { k: u32 },
    Gamma { shape: f64 },
    HyperExp,
    Lognormal,
    Weibull,
    Pareto,
    Uniform,
    Empirical,
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
    /// "exact:md1", "exact:er_m_1", "exact:gi_m_1",
    /// "approx:kraemer_langenbach_belz", "approx:allen_cunneen",
    /// "approx:mean_field_pod", "none",
    /// "unstable". An `approx:` label covers both numbers (the p99 then comes
    /// from an exponential-tail fit to the approximate mean).
    pub method: String,
}

impl Baseline {
    fn new(method: &str, mean_wait: Option<f64>, p99_wait: Option<f64>) -> Self {
        Baseline {
            mean_wait,
            p99_wait,
            method: method.to_string(),
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

/// How the per-dyno arrival stream is obtained from the total stream.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Split {
    /// The queue sees the total stream (Central, or R = 1).
    Identity,
    /// Independent Bernoulli(keep) thinning (Random routing, keep = 1/R).
    Thin(f64),
    /// Every n-th arrival (round robin): interarrival = sum of n interarrivals.
    Sum(u32),
}

impl Split {
    /// Interarrival scv of the per-queue stream, given the total stream's scv `s`.
    fn scv(self, s: f64) -> f64 {
        match self {
            Split::Identity => s,
            // Thinned interarrival is a geometric(keep) random sum of the
            // original ones; law of total variance for a random sum:
            // Var = E[N] Var X + Var N (E X)^2 with E[N] = 1/keep,
            // Var N = (1 - keep)/keep^2, giving scv = 1 + keep (s - 1) = 1 + (s - 1)/R.
            Split::Thin(keep) => 1.0 + keep * (s - 1.0),
            // Sum of n i.i.d. interarrivals: mean n m, variance n Var X, scv s/n.
            Split::Sum(n) => s / f64::from(n),
        }
    }

    /// 1 - LST of the per-queue interarrival time, given 1 - LST of the
    /// total stream's interarrival time at the same argument. Written as
    /// "one minus" so that it stays accurate for small arguments.
    fn one_minus_lst(self, om: f64) -> f64 {
        match self {
            Split::Identity => om,
            // Geometric sum: A_t = keep A / (1 - (1-keep) A), hence
            // 1 - A_t = (1 - A) / (keep + (1 - keep)(1 - A)).
            Split::Thin(keep) => om / (keep + (1.0 - keep) * om),
            // Sum of n: A_n = A^n, 1 - A^n = -expm1(n ln(1 - (1 - A))).
            Split::Sum(n) => -(f64::from(n) * (-om).ln_1p()).exp_m1(),
        }
    }
}

/// Total-stream interarrival laws whose Laplace–Stieltjes transform is known
/// from (family, mean) alone.
#[derive(Clone, Copy, Debug, PartialEq)]
enum KnownLst {
    /// Gamma(shape, scale = mean/shape); Exp is shape 1, Erlang-k is shape k.
    /// LST (1 + s mean/shape)^(-shape).
    Gamma { shape: f64, mean: f64 },
    /// Constant `mean`; LST exp(-s mean).
    Det { mean: f64 },
}

impl KnownLst {
    fn from_law(law: &LawMoments, lambda: f64) -> Option<Self> {
        if law.clamped {
            return None;
        }
        let mean = 1.0 / lambda;
        let shape = match law.family {
            Family::Exp => 1.0,
            Family::Erlang { k } if k >= 1 => f64::from(k),
            Family::Gamma { shape } if pos_finite(shape) => shape,
            Family::Det => {
                return (law.scv.abs() <= 1e-12).then_some(KnownLst::Det { mean });
            }
            _ => return None,
        };
        close(law.scv, 1.0 / shape).then_some(KnownLst::Gamma { shape, mean })
    }

    /// 1 - LST(s), accurate for small s.
    fn one_minus_lst(self, s: f64) -> f64 {
        match self {
            KnownLst::Gamma { shape, mean } => -(-shape * (s * mean / shape).ln_1p()).exp_m1(),
            KnownLst::Det { mean } => -(-s * mean).exp_m1(),
        }
    }
}

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
/// server) or Allen–Cunneen (several servers).
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
            );
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
                    );
                }
            }
        }
    } else if stream_poisson && c == 1 {
        // M/G/1: Pollaczek–Khinchine is exact for any service law with finite
        // second moment, clamped or not, since mean and scv are exact.
        let mean = pollaczek_khinchine_mean_wait(lam, s.mean, s.scv);
        if s.scv <= 0.0 {
            // Deterministic service (Det, or any law with zero variance).
            return Baseline::new("exact:md1", Some(mean), md1_wait_quantile(lam, s.mean, P99));
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

/// Mean and p99 wait of the power-of-d-choices mean-field limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanFieldPod {
    pub mean_wait: f64,
    pub p99_wait: f64,
}

/// The R → ∞ limit of power of `d` choices (d >= 2) with Poisson arrivals at
/// `rho` per server and exponential service of mean `service_mean`
/// ([VDK96]; [Mitz01], Theorem 3.6 and its corollary).
///
/// In the limit the fraction of servers with at least i requests present is
/// s_i = rho^((d^i − 1)/(d − 1)) (so s_1 = rho, s_2 = rho^(d+1), ...). The mean
/// number present per server is Σ_{i≥1} s_i and, by Little's law with
/// per-server arrival rate λ = rho/E\[S\], the mean sojourn time is
///
///   T = E\[S\] · Σ_{i≥1} rho^((d^i − 1)/(d − 1) − 1) = E\[S\] · Σ_{i≥1} rho^((d^i − d)/(d − 1)),
///
/// (for d = 2, with E\[S\] = 1: T = 1 + rho^2 + rho^6 + rho^14 + ...; d = 1 would
/// give the M/M/1 value 1/(1 − rho)). The mean wait is T − E\[S\] (the i = 1
/// term is the service). For the tail: an arrival's d samples all have at
/// least k present with probability s_k^d = rho^((d^(k+1) − d)/(d − 1)), so it
/// joins a queue of exactly k with probability s_k^d − s_(k+1)^d and, FIFO
/// behind k exponential services, waits Erlang(k, 1/E\[S\]):
/// P(W > x) = Σ_{k≥1} (s_k^d − s_(k+1)^d) P(Erlang(k) > x), whose mean
/// Σ_k s_k^d E\[S\] is the same T − E\[S\]. The p99 solves P(W > x) = 0.01.
pub fn mean_field_pod(d: u32, rho: f64, service_mean: f64) -> MeanFieldPod {
    let df = f64::from(d.max(2));
    // s_k^d for k = 1, 2, ... while it matters: the exponents grow like d^k.
    let mut join_at_least = Vec::new();
    for k in 1..64 {
        let exponent = (df.powi(k + 1) - df) / (df - 1.0);
        let x = rho.powf(exponent);
        if x.is_nan() || x <= 1e-300 {
            break;
        }
        join_at_least.push(x);
    }
    let mean_wait = service_mean * join_at_least.iter().sum::<f64>();
    let mu = 1.0 / service_mean;
    let tail = |x: f64| {
        // Σ_k (s_k^d − s_(k+1)^d) P(Erlang(k, mu) > x), with
        // P(Erlang(k) > x) = e^(−mu x) Σ_{j<k} (mu x)^j / j!.
        let mut sum = 0.0;
        let mut term = (-mu * x).exp(); // j = 0 term of the Poisson sum
        let mut erlang_tail = 0.0;
        for (i, &a) in join_at_least.iter().enumerate() {
            let k = i + 1;
            erlang_tail += term;
            term *= mu * x / k as f64;
            let next = join_at_least.get(k).copied().unwrap_or(0.0);
            sum += (a - next) * erlang_tail;
        }
        sum
    };
    let p99_wait = if tail(0.0) <= 1.0 - P99 {
        0.0
    } else {
        let mut hi = service_mean.max(mean_wait);
        while tail(hi) > 1.0 - P99 && hi < 1e300 {
            hi *= 2.0;
        }
        let mut lo = 0.0;
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if tail(mid) > 1.0 - P99 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    MeanFieldPod {
        mean_wait,
        p99_wait,
    }
}

/// p-quantile of a wait with P(W > 0) = `p_wait` and an exponential
/// conditional wait whose mean makes E\[W\] = `mean_wait`:
/// P(W > t) = p_wait exp(-t p_wait / mean_wait).
pub fn exp_tail_quantile(p_wait: f64, mean_wait: f64, p: f64) -> f64 {
    let p_wait = p_wait.clamp(0.0, 1.0);
    let tail = 1.0 - p;
    if p_wait <= tail || mean_wait <= 0.0 {
        return 0.0;
    }
    if tail <= 0.0 {
        return f64::INFINITY;
    }
    mean_wait / p_wait * (p_wait / tail).ln()
}

// ---------------------------------------------------------------------------
// M/M/c
// ---------------------------------------------------------------------------

/// Erlang B (blocking probability of M/M/c/c) by the stable recurrence
/// B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)) (Erlang loss system, \[Kleinrock\] ch. 3; the
/// recurrence is the standard stable one, e.g. D. L. Jagerman, "Some properties
/// of the Erlang loss function", Bell Syst. Tech. J. 53, 1974).
/// O(c), no factorials or powers.
pub fn erlang_b(c: u32, offered_load: f64) -> f64 {
    let a = offered_load;
    let mut b = 1.0;
    for k in 1..=c {
        let ab = a * b;
        b = ab / (f64::from(k) + ab);
    }
    b
}

/// Probability of waiting in M/M/c, offered load a = lambda/mu (requires a < c;
/// returns 1 for a >= c or c = 0, 0 for a <= 0, NaN for NaN).
/// C = B / (1 - rho (1 - B)), rho = a/c, B = Erlang B (the identity between the
/// Erlang C and Erlang B formulas, \[GH\] ch. 2; \[Kleinrock\] ch. 3).
pub fn erlang_c(c: u32, offered_load: f64) -> f64 {
    let a = offered_load;
    if a.is_nan() {
        return f64::NAN;
    }
    if c == 0 || a >= f64::from(c) {
        return 1.0;
    }
    if a <= 0.0 {
        return 0.0;
    }
    let b = erlang_b(c, a);
    let rho = a / f64::from(c);
    b / (1.0 - rho * (1.0 - b))
}

/// Mean FCFS wait in M/M/c: C(c, a) / (c mu - lambda) (\[Kleinrock\] ch. 3;
/// \[GH\] ch. 2). Infinity when lambda >= c mu.
pub fn mmc_mean_wait(c: u32, lambda: f64, mu: f64) -> f64 {
    let spare = f64::from(c) * mu - lambda;
    if spare.is_nan() {
        return f64::NAN;
    }
    if spare <= 0.0 {
        return f64::INFINITY;
    }
    erlang_c(c, lambda / mu) / spare
}

/// p-quantile of the M/M/c FCFS wait: P(W > t) = C exp(-(c mu - lambda) t)
/// (\[GH\] ch. 2, M/M/c waiting-time distribution), so t = ln(C/(1-p)) / (c mu - lambda),
/// and 0 when P(W > 0) = C <= 1 - p. Infinity when lambda >= c mu.
pub fn mmc_wait_quantile(c: u32, lambda: f64, mu: f64, p: f64) -> f64 {
    let spare = f64::from(c) * mu - lambda;
    if spare.is_nan() || p.is_nan() {
        return f64::NAN;
    }
    if spare <= 0.0 {
        return f64::INFINITY;
    }
    let pw = erlang_c(c, lambda / mu);
    let tail = 1.0 - p;
    if pw <= tail {
        return 0.0;
    }
    if tail <= 0.0 {
        return f64::INFINITY;
    }
    (pw / tail).ln() / spare
}

// ---------------------------------------------------------------------------
// M/G/1
// ---------------------------------------------------------------------------

/// Pollaczek–Khinchine mean wait of M/G/1:
/// W = lambda E\[S^2\] / (2 (1 - rho)), E\[S^2\] = mean^2 (1 + scv)
/// (\[Kleinrock\] ch. 5; \[GH\] ch. 5). Infinity when rho >= 1.
pub fn pollaczek_khinchine_mean_wait(lambda: f64, service_mean: f64, service_scv: f64) -> f64 {
    let rho = lambda * service_mean;
    if rho >= 1.0 {
        return f64::INFINITY;
    }
    lambda * service_mean * service_mean * (1.0 + service_scv) / (2.0 * (1.0 - rho))
}

/// Largest number of integer steps (in units of the service time) the M/D/1
/// tables may grow to; beyond it (rho > ~0.999997 at p = 0.99) we give up.
const MD1_MAX_STEPS: usize = 1_000_000;

/// Exact M/D/1 FCFS waiting-time distribution, evaluated stably.
///
/// Time is measured in units of the service time D, rho = lambda D.
///
/// 1. Q_k = P(L <= k), L = number in system at an arbitrary time (= at a
///    departure, \[Kleinrock\] ch. 5). The departure-epoch chain
///    X' = max(X - 1, 0) + A, A ~ Poisson(rho), moves down by at most one, so
///    balancing the flow across the cut between {0..j} and {j+1..} gives the
///    M/G/1 level-crossing recursion (\[Tijms\]):
///    p_0 = 1 - rho,
///    p_{j+1} a_0 = p_0 Abar_{j+1} + sum_{i=1..j} p_i Abar_{j+2-i},
///    where a_n = P(A = n), Abar_m = P(A >= m). Only positive terms: no
///    cancellation (unlike the forward recursion of the embedded chain or the
///    alternating Erlang/Crommelin sum).
/// 2. W is the workload V found at arrival (FCFS, PASTA). With D = 1,
///    V = L - 1 + (residual service in (0, 1]) when L >= 1, so
///    P(W <= k) = Q_k for integer k. For t = k + u, 0 <= u < 1, write V at
///    time s in terms of V at s - (1 - u) and the number N of arrivals in
///    between (Poisson(rho (1 - u)), independent of the earlier V): by the
///    workload recursion V(s) = sup_h (N(s-h, s] - h)^+, V(s) <= k + u iff
///    V(s - (1 - u)) + N <= k + 1 and N <= k. Hence
///    P(W <= k + u) = sum_{n=0..k} P(N = n) Q_{k+1-n},
///    again only positive terms. This is the time-shift idea of \[Franx\]
///    (who treats M/D/c) applied to c = 1; the distribution itself goes back
///    to \[Crommelin\]. Check: for t in \[0, 1) it gives (1 - rho) e^{rho t},
///    Erlang's formula (tested).
struct Md1Table {
    rho: f64,
    /// Abar_m = P(Poisson(rho) >= m), m = 0..; truncated where it drops below 1e-30.
    abar: Vec<f64>,
    /// p_j = P(L = j).
    prob: Vec<f64>,
    /// Q_j = P(L <= j).
    cum: Vec<f64>,
}

impl Md1Table {
    fn new(rho: f64) -> Self {
        // Poisson(rho) pmf, rho < 1, until negligible.
        let mut pmf = vec![(-rho).exp()];
        while pmf.len() < 400 {
            let n = pmf.len();
            let next = pmf[n - 1] * rho / n as f64;
            if next < 1e-30 {
                break;
            }
            pmf.push(next);
        }
        // Tail sums from the small end up: positive terms only.
        let mut abar = vec![0.0; pmf.len() + 1];
        for m in (0..pmf.len()).rev() {
            abar[m] = abar[m + 1] + pmf[m];
        }
        abar[0] = 1.0;
        let p0 = 1.0 - rho;
        Md1Table {
            rho,
            abar,
            prob: vec![p0],
            cum: vec![p0],
        }
    }

    fn abar(&self, m: usize) -> f64 {
        self.abar.get(m).copied().unwrap_or(0.0)
    }

    /// Extend the tables so that `cum[k]` exists; false if that exceeds the cap.
    fn extend_to(&mut self, k: usize) -> bool {
        if k > MD1_MAX_STEPS {
            return false;
        }
        let inv_a0 = self.rho.exp();
        let width = self.abar.len();
        while self.prob.len() <= k {
            let j = self.prob.len() - 1; // computing p_{j+1}
            let mut acc = self.prob[0] * self.abar(j + 1);
            // i ranges over 1..=j with j + 2 - i < width.
            let i_lo = (j + 2).saturating_sub(width - 1).max(1);
            for i in i_lo..=j {
                acc += self.prob[i] * self.abar(j + 2 - i);
            }
            let p = acc * inv_a0;
            self.prob.push(p);
            let q = (self.cum[j] + p).min(1.0);
            self.cum.push(q);
        }
        true
    }

    /// P(W <= k + u) in service-time units, k integer, 0 <= u < 1.
    /// Requires `cum[k + 1]` to exist.
    fn cdf_split(&self, k: usize, u: f64) -> f64 {
        let x = self.rho * (1.0 - u);
        let mut w = (-x).exp();
        let mut acc = 0.0;
        for n in 0..=k {
            acc += w * self.cum[k + 1 - n];
            w *= x / (n + 1) as f64;
            if w < 1e-30 {
                break;
            }
        }
        acc.min(1.0)
    }
}

/// P(W <= t) for the M/D/1 FCFS wait (arrival rate `lambda`, service time `d`),
/// exact (see `Md1Table`); `None` if rho >= 1, inputs are invalid, or t/d is
/// beyond the table cap.
pub fn md1_wait_cdf(lambda: f64, d: f64, t: f64) -> Option<f64> {
    let rho = lambda * d;
    if !(pos_finite(lambda) && pos_finite(d) && rho < 1.0) || t.is_nan() {
        return None;
    }
    if t < 0.0 {
        return Some(0.0);
    }
    let x = t / d;
    if x >= MD1_MAX_STEPS as f64 {
        return None;
    }
    let k = x.floor() as usize;
    let u = x - k as f64;
    let mut table = Md1Table::new(rho);
    if !table.extend_to(k + 1) {
        return None;
    }
    Some(table.cdf_split(k, u))
}

/// p-quantile of the M/D/1 FCFS wait, exact up to floating point (bisection on
/// the stable distribution of `Md1Table`). `None` if rho >= 1, inputs are
/// invalid, p is not in \[0, 1), or the quantile lies beyond the table cap.
pub fn md1_wait_quantile(lambda: f64, d: f64, p: f64) -> Option<f64> {
    let rho = lambda * d;
    if !(pos_finite(lambda) && pos_finite(d) && rho < 1.0 && (0.0..1.0).contains(&p)) {
        return None;
    }
    // P(W = 0) = 1 - rho.
    if 1.0 - rho >= p {
        return Some(0.0);
    }
    let mut table = Md1Table::new(rho);
    // Smallest integer m >= 1 with Q_m = P(W <= m) >= p.
    let mut m = 1;
    loop {
        if !table.extend_to(m) {
            return None;
        }
        if table.cum[m] >= p {
            break;
        }
        m += 1;
    }
    // The quantile is in (m-1, m]: bisect u in [0, 1] on P(W <= m-1+u).
    let k = m - 1;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if table.cdf_split(k, mid) >= p {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(d * (k as f64 + hi))
}

// ---------------------------------------------------------------------------
// GI/M/1
// ---------------------------------------------------------------------------

/// GI/M/1 waiting time: P(W > t) = sigma exp(-decay t), decay = mu (1 - sigma)
/// (\[Kleinrock\] ch. 6, G/M/m with m = 1; \[GH\] ch. 5, G/M/1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GiM1 {
    /// P(W > 0): the root in (0, 1) of sigma = A*(mu (1 - sigma)).
    pub sigma: f64,
    /// mu (1 - sigma), computed without cancellation.
    pub decay: f64,
}

impl GiM1 {
    /// E\[W\] = sigma / (mu (1 - sigma)).
    pub fn mean_wait(&self) -> f64 {
        if self.sigma <= 0.0 {
            0.0
        } else {
            self.sigma / self.decay
        }
    }

    /// p-quantile: ln(sigma / (1 - p)) / decay, 0 when sigma <= 1 - p.
    pub fn wait_quantile(&self, p: f64) -> f64 {
        let tail = 1.0 - p;
        if self.sigma <= tail {
            0.0
        } else if tail <= 0.0 {
            f64::INFINITY
        } else {
            (self.sigma / tail).ln() / self.decay
        }
    }
}

/// Solve the GI/M/1 root equation sigma = A*(mu (1 - sigma)) for the
/// interarrival LST A*, given as `one_minus_lst(s) = 1 - A*(s)`.
///
/// With x = 1 - sigma the equation is g(x) = (1 - A*(mu x)) - x = 0. g is
/// concave, g(0) = 0, g'(0) = mu E\[A\] - 1 = 1/rho - 1 > 0 and g(1) <= 0, so
/// there is exactly one root in (0, 1] when rho < 1 (\[Kleinrock\] ch. 6);
/// bisection on x keeps full relative precision in 1 - sigma even for rho
/// near 1 (the "one minus" forms use ln_1p / exp_m1).
fn gi_m_1(mu: f64, one_minus_lst: impl Fn(f64) -> f64) -> Option<GiM1> {
    if !pos_finite(mu) {
        return None;
    }
    let g = |x: f64| one_minus_lst(mu * x) - x;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    if g(hi) > 0.0 {
        return None;
    }
    for _ in 0..2000 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-15 * hi {
            break;
        }
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if lo.is_nan() || lo <= 0.0 {
        // g was never positive: unstable (rho >= 1) or a broken transform.
        return None;
    }
    let x = 0.5 * (lo + hi);
    Some(GiM1 {
        sigma: (1.0 - x).max(0.0),
        decay: mu * x,
    })
}

/// E_R/M/1: interarrival = sum of `phases` exponential phases of rate
/// `phase_rate` (round robin over R dynos of a Poisson(lambda) stream:
/// phases = R, phase_rate = lambda), service rate `mu`.
/// sigma is the root in (0, 1) of
/// sigma = (phase_rate / (phase_rate + mu (1 - sigma)))^R
/// (\[Kleinrock\] ch. 4, E_r/M/1 by the method of stages, and ch. 6;
/// \[GH\] ch. 5). `None` if unstable (phase_rate / phases >= mu) or inputs
/// invalid.
pub fn er_m_1(phases: u32, phase_rate: f64, mu: f64) -> Option<GiM1> {
    if phases == 0 || !pos_finite(phase_rate) || !pos_finite(mu) {
        return None;
    }
    if phase_rate / f64::from(phases) >= mu {
        return None;
    }
    let r = f64::from(phases);
    // 1 - (1 + s/phase_rate)^(-R)
    gi_m_1(mu, |s| -(-r * (s / phase_rate).ln_1p()).exp_m1())
}

// ---------------------------------------------------------------------------
// Approximations
// ---------------------------------------------------------------------------

/// Krämer–Langenbach-Belz mean wait of GI/G/1 (\[KLB\]; as quoted in \[Whitt93\]):
/// W = rho E\[S\] / (1 - rho) * (ca2 + cs2)/2 * g, with
/// g = exp(-2 (1 - rho) (1 - ca2)^2 / (3 rho (ca2 + cs2))) for ca2 < 1,
/// g = exp(-(1 - rho) (ca2 - 1) / (ca2 + 4 cs2)) for ca2 >= 1.
/// Exact for M/M/1 and M/G/1 (ca2 = 1 gives g = 1, i.e. P-K).
pub fn kraemer_langenbach_belz_mean_wait(
    lambda: f64,
    service_mean: f64,
    ca2: f64,
    cs2: f64,
) -> f64 {
    let rho = lambda * service_mean;
    if rho >= 1.0 {
        return f64::INFINITY;
    }
    let sum = ca2 + cs2;
    if sum <= 0.0 || rho <= 0.0 {
        return 0.0;
    }
    let g = if ca2 < 1.0 {
        (-2.0 * (1.0 - rho) * (1.0 - ca2).powi(2) / (3.0 * rho * sum)).exp()
    } else {
        (-(1.0 - rho) * (ca2 - 1.0) / (ca2 + 4.0 * cs2)).exp()
    };
    rho * service_mean / (1.0 - rho) * sum / 2.0 * g
}

/// Allen–Cunneen mean wait of GI/G/c (\[Allen\]; also discussed in
/// \[Whitt93\]): W = C(c, a) / (c mu - lambda) * (ca2 + cs2)/2,
/// a = lambda E\[S\], i.e. the M/M/c wait scaled by the variability factor.
pub fn allen_cunneen_mean_wait(c: u32, lambda: f64, service_mean: f64, ca2: f64, cs2: f64) -> f64 {
    mmc_mean_wait(c, lambda, 1.0 / service_mean) * (ca2 + cs2) / 2.0
}

// ---------------------------------------------------------------------------
// The published seed analysis
// ---------------------------------------------------------------------------

/// Arrival rate of the published seed analysis, requests per second.
pub const SEED_LAMBDA: f64 = 150.0;
/// Service rate per dyno of the seed analysis (the text gives a mean service
/// time of 306 ms, mu ~= 3; its table is computed with mu = 3 exactly).
pub const SEED_MU: f64 = 3.0;

/// One row of the published seed table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublishedSeedFigure {
    /// R, number of dynos (one worker each).
    pub servers: u32,
    /// Published "dumb (random) routing" mean queue time, ms.
    pub dumb_ms: f64,
    /// Published "smart (central) routing" mean queue time, ms.
    pub smart_ms: f64,
}

const fn seed(servers: u32, dumb_ms: f64, smart_ms: f64) -> PublishedSeedFigure {
    PublishedSeedFigure {
        servers,
        dumb_ms,
        smart_ms,
    }
}

/// The published table of the analysis that started the project
/// (lambda = 150/s, mu = 3/s).
pub const PUBLISHED_SEED_FIGURES: [PublishedSeedFigure; 10] = [
    seed(51, 16667.0, 333.0),
    seed(60, 1667.0, 33.0),
    seed(75, 667.0, 13.0),
    seed(100, 333.0, 7.0),
    seed(150, 167.0, 3.0),
    seed(200, 111.0, 2.0),
    seed(500, 37.0, 1.0),
    seed(1000, 18.0, 0.0),
    seed(2000, 9.0, 0.0),
    seed(4000, 4.0, 0.0),
];

/// Published figures next to what the exact formulas give.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeedComparisonRow {
    pub servers: u32,
    /// Published "dumb routing" mean queue time, ms.
    pub published_dumb_ms: f64,
    /// Exact M/M/1 mean wait at lambda/R (random routing), ms.
    pub mm1_mean_wait_ms: f64,
    /// Published "smart routing" mean queue time, ms.
    pub published_smart_ms: f64,
    /// Exact Erlang C M/M/R mean wait (one central queue), ms.
    pub erlang_c_mean_wait_ms: f64,
    /// 1 / (R mu - lambda), ms: the Erlang C mean with P(wait) forced to 1,
    /// which is what the published "smart" column is.
    pub one_over_spare_capacity_ms: f64,
}

/// Per seed R: published dumb, exact M/M/1 at lambda/R, published smart,
/// exact Erlang C M/M/R, and 1/(R mu - lambda), all mean waits in ms.
pub fn seed_comparison_rows() -> Vec<SeedComparisonRow> {
    PUBLISHED_SEED_FIGURES
        .iter()
        .map(|f| {
            let r = f64::from(f.servers);
            SeedComparisonRow {
                servers: f.servers,
                published_dumb_ms: f.dumb_ms,
                mm1_mean_wait_ms: 1000.0 * mmc_mean_wait(1, SEED_LAMBDA / r, SEED_MU),
                published_smart_ms: f.smart_ms,
                erlang_c_mean_wait_ms: 1000.0 * mmc_mean_wait(f.servers, SEED_LAMBDA, SEED_MU),
                one_over_spare_capacity_ms: 1000.0 / (r * SEED_MU - SEED_LAMBDA),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(family: Family, mean: f64, scv: f64) -> LawMoments {
        LawMoments {
            family,
            mean,
            scv,
            clamped: false,
        }
    }

    fn exp_law(mean: f64) -> LawMoments {
        law(Family::Exp, mean, 1.0)
    }

    fn input(
        policy: Policy,
        servers: u32,
        workers: u32,
        lambda: f64,
        service: LawMoments,
    ) -> QueueInput {
        QueueInput {
            policy,
            servers,
            workers,
            lambda,
            arrival: exp_law(1.0 / lambda),
            service,
        }
    }

    fn rel_close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
    }

    /// Erlang C by the textbook direct sum (\[GH\] ch. 2; \[Kleinrock\] ch. 3):
    /// C = T_c c/(c-a) / (sum_{k<c} T_k + T_c c/(c-a)), T_k = a^k/k!,
    /// with T_k built by T_k = T_{k-1} a/k (independent of the Erlang B path).
    fn erlang_c_direct(c: u32, a: f64) -> f64 {
        let mut term = 1.0;
        let mut sum = 0.0;
        for k in 0..c {
            sum += term;
            term *= a / f64::from(k + 1);
        }
        let last = term * f64::from(c) / (f64::from(c) - a);
        last / (sum + last)
    }

    #[test]
    fn erlang_c_exact_rationals() {
        // Direct formula by hand: c=2, a=1: T = 1, 1, 1/2*2/(2-1) = 1 -> 1/3.
        assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-15);
        // c=3, a=2: T = 1, 2, 2, (8/6)*3/(3-2) = 4 -> 4/9.
        assert!((erlang_c(3, 2.0) - 4.0 / 9.0).abs() < 1e-15);
        // c=1: C = rho.
        assert!((erlang_c(1, 0.7) - 0.7).abs() < 1e-15);
        // Erlang B, c=2, a=1: (1/2) / (1 + 1 + 1/2) = 1/5.
        assert!((erlang_b(2, 1.0) - 0.2).abs() < 1e-15);
    }

    #[test]
    fn erlang_c_against_direct_sum() {
        // c=10, a=8: the commonly tabulated value is 0.409.
        let c10 = erlang_c(10, 8.0);
        assert!(rel_close(c10, erlang_c_direct(10, 8.0), 1e-12), "{c10}");
        assert!((c10 - 0.4092).abs() < 5e-4, "{c10}");
        for &(c, a) in &[
            (5, 4.5),
            (20, 15.0),
            (51, 50.0),
            (60, 50.0),
            (100, 50.0),
            (200, 190.0),
        ] {
            let x = erlang_c(c, a);
            let y = erlang_c_direct(c, a);
            assert!(rel_close(x, y, 1e-11), "c={c} a={a}: {x} vs {y}");
        }
        // Edge cases.
        assert_eq!(erlang_c(4, 4.0), 1.0);
        assert_eq!(erlang_c(4, 0.0), 0.0);
        assert_eq!(erlang_c(0, 1.0), 1.0);
    }

    /// Standard normal CDF via erfc (W. J. Cody-style rational approximation
    /// replaced by Abramowitz & Stegun 7.1.26, |error| < 1.5e-7) -- test only.
    fn normal_cdf(x: f64) -> f64 {
        let z = x.abs() / 2f64.sqrt();
        let t = 1.0 / (1.0 + 0.3275911 * z);
        let poly = t
            * (0.254829592
                + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
        let erfc = poly * (-z * z).exp();
        if x >= 0.0 {
            1.0 - 0.5 * erfc
        } else {
            0.5 * erfc
        }
    }

    #[test]
    fn erlang_c_huge_c_is_stable_and_monotone() {
        let c = 100_000;
        let a = 0.999 * f64::from(c);
        let x = erlang_c(c, a);
        assert!(x.is_finite() && x > 0.0 && x < 1.0, "{x}");
        // Halfin & Whitt (1981): C ~ 1 / (1 + beta Phi(beta)/phi(beta)),
        // beta = (1 - rho) sqrt(c); at beta = 0.316 the limit is ~0.658.
        let beta = 0.001 * f64::from(c).sqrt();
        let phi = (-0.5 * beta * beta).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let hw = 1.0 / (1.0 + beta * normal_cdf(beta) / phi);
        assert!((x - hw).abs() < 0.01, "{x} vs Halfin-Whitt {hw}");
        // Increasing in the load at fixed c.
        let mut prev = 0.0;
        for rho in [0.99, 0.995, 0.999, 0.9995, 0.9999] {
            let y = erlang_c(c, rho * f64::from(c));
            assert!(y > prev && y < 1.0, "rho={rho}: {y}");
            prev = y;
        }
        // Decreasing in c at fixed load.
        let mut prev = 1.0;
        for cc in [99_950, 99_990, 100_000, 100_100, 101_000] {
            let y = erlang_c(cc, a);
            assert!(y < prev && y > 0.0, "c={cc}: {y}");
            prev = y;
        }
        // Mean and quantile stay finite.
        let w = mmc_mean_wait(c, a, 1.0);
        assert!(w.is_finite() && w > 0.0);
        assert!(mmc_wait_quantile(c, a, 1.0, 0.99).is_finite());
    }

    #[test]
    fn mm1_mean_and_p99() {
        let (lambda, mu) = (2.0, 3.0);
        let rho: f64 = lambda / mu;
        let mean = rho / (mu - lambda);
        let p99 = (rho / 0.01).ln() / (mu - lambda);
        for q in [
            input(Policy::Central, 1, 1, lambda, exp_law(1.0 / mu)),
            input(Policy::Random, 1, 1, lambda, exp_law(1.0 / mu)),
            input(Policy::RoundRobin, 1, 1, lambda, exp_law(1.0 / mu)),
            // Random over 5 dynos = M/M/1 at lambda/5.
            input(Policy::Random, 5, 1, 5.0 * lambda, exp_law(1.0 / mu)),
        ] {
            let b = baseline(&q);
            assert_eq!(b.method, "exact:mm1", "{q:?}");
            assert!(rel_close(b.mean_wait.unwrap(), mean, 1e-13));
            assert!(rel_close(b.p99_wait.unwrap(), p99, 1e-13));
        }
        // P(W > 0) = rho <= 1 - p gives a zero quantile.
        assert_eq!(mmc_wait_quantile(1, 0.005, 1.0, 0.99), 0.0);
    }

    #[test]
    fn mmc_through_baseline() {
        // Central over 4 dynos x 2 workers = M/M/8.
        let q = input(Policy::Central, 4, 2, 6.0, exp_law(1.0));
        let b = baseline(&q);
        assert_eq!(b.method, "exact:erlang_c");
        let c = erlang_c_direct(8, 6.0);
        assert!(rel_close(b.mean_wait.unwrap(), c / (8.0 - 6.0), 1e-12));
        assert!(rel_close(b.p99_wait.unwrap(), (c / 0.01).ln() / 2.0, 1e-12));
        // Random over 4 dynos with 2 workers each: M/M/2 at lambda/4.
        let q = input(Policy::Random, 4, 2, 6.0, exp_law(1.0));
        let b = baseline(&q);
        assert_eq!(b.method, "exact:erlang_c");
        let c = erlang_c_direct(2, 1.5);
        assert!(rel_close(b.mean_wait.unwrap(), c / 0.5, 1e-12));
    }

    #[test]
    fn unstable_and_invalid() {
        for lambda in [3.0, 4.0, f64::INFINITY] {
            let b = baseline(&input(Policy::Central, 1, 1, lambda, exp_law(1.0 / 3.0)));
            assert_eq!(b.method, "unstable", "lambda={lambda}");
            assert_eq!((b.mean_wait, b.p99_wait), (None, None));
        }
        let b = baseline(&input(Policy::Random, 10, 2, 20.0, exp_law(1.0)));
        assert_eq!(b.method, "unstable");
        assert_eq!(b.mean_wait, None);
        let b = baseline(&input(Policy::Central, 0, 1, 1.0, exp_law(0.5)));
        assert_eq!(b.method, "none");
        let b = baseline(&input(Policy::Central, 1, 1, f64::NAN, exp_law(0.5)));
        assert_eq!(b.method, "none");
        // Infinite-variance service.
        let b = baseline(&input(
            Policy::Central,
            1,
            1,
            1.0,
            law(Family::Pareto, 0.5, f64::INFINITY),
        ));
        assert_eq!(b.method, "none");
        assert_eq!(mmc_mean_wait(2, 2.0, 1.0), f64::INFINITY);
        assert_eq!(er_m_1(2, 2.0, 1.0), None);
        assert_eq!(md1_wait_quantile(1.0, 1.0, 0.99), None);
    }

    #[test]
    fn md1_mean_is_pollaczek_khinchine() {
        for rho in [0.5, 0.9, 0.99] {
            // Service time d = 2, lambda = rho / d:
            // W = lambda d^2 / (2 (1 - rho)) = rho d / (2 (1 - rho)).
            let d = 2.0;
            let q = input(Policy::Central, 1, 1, rho / d, law(Family::Det, d, 0.0));
            let b = baseline(&q);
            assert_eq!(b.method, "exact:md1");
            assert!(rel_close(
                b.mean_wait.unwrap(),
                rho * d / (2.0 * (1.0 - rho)),
                1e-13
            ));
            let p99 = b.p99_wait.unwrap();
            assert!(rel_close(
                p99,
                md1_wait_quantile(rho / d, d, 0.99).unwrap(),
                1e-15
            ));
        }
    }

    /// Independent M/D/1 waiting-time CDF (D = 1) from the ladder-height
    /// (Beneš / Pollaczek–Khinchine) representation W = Y_1 + ... + Y_N,
    /// P(N = n) = (1 - rho) rho^n, Y_i ~ U(0, 1) (the equilibrium law of D = 1):
    /// F(t) = (1 - rho) + rho * int_{max(0, t-1)}^{t} F(s) ds,
    /// solved on a grid of step 1/m by the implicit trapezoid rule.
    /// Returns F at j/m, j = 0..=t_max*m.
    fn md1_cdf_volterra(rho: f64, m: usize, t_max: f64) -> Vec<f64> {
        let h = 1.0 / m as f64;
        let n = (t_max * m as f64).ceil() as usize + 1;
        let mut f = vec![0.0; n];
        let mut prefix = vec![0.0; n + 1]; // prefix[j] = sum_{i<j} f[i]
        f[0] = 1.0 - rho;
        prefix[1] = f[0];
        for j in 1..n {
            let lo = j.saturating_sub(m);
            let inner = prefix[j] - prefix[lo + 1]; // f[lo+1] + ... + f[j-1]
            f[j] = (1.0 - rho + rho * h * (0.5 * f[lo] + inner)) / (1.0 - 0.5 * rho * h);
            prefix[j + 1] = prefix[j] + f[j];
        }
        f
    }

    fn grid_quantile(f: &[f64], m: usize, p: f64) -> f64 {
        let j = f.iter().position(|&x| x >= p).expect("grid too short");
        if j == 0 {
            return 0.0;
        }
        let frac = (p - f[j - 1]) / (f[j] - f[j - 1]);
        (j as f64 - 1.0 + frac) / m as f64
    }

    #[test]
    fn md1_cdf_and_quantile_against_volterra() {
        for (rho, t_max) in [(0.5, 20.0), (0.9, 60.0), (0.99, 400.0)] {
            let m = 1000;
            let f = md1_cdf_volterra(rho, m, t_max);
            // CDF on a set of points, integer and not.
            for &t in &[
                0.0,
                0.25,
                1.0,
                1.5,
                2.0,
                3.7,
                7.0,
                12.3,
                t_max / 2.0,
                t_max - 1.0,
            ] {
                let j = (t * m as f64).round() as usize;
                let exact = md1_wait_cdf(rho, 1.0, t).unwrap();
                assert!(
                    (exact - f[j]).abs() < 1e-7,
                    "rho={rho} t={t}: {exact} vs {}",
                    f[j]
                );
            }
            let q = md1_wait_quantile(rho, 1.0, 0.99).unwrap();
            let q_ref = grid_quantile(&f, m, 0.99);
            assert!(
                (q - q_ref).abs() < 1e-5 * q_ref.max(1.0),
                "rho={rho}: {q} vs {q_ref}"
            );
            // The quantile is where the exact CDF crosses 0.99.
            assert!((md1_wait_cdf(rho, 1.0, q).unwrap() - 0.99).abs() < 1e-12);
            // Time scaling: service time d multiplies waits by d.
            let q3 = md1_wait_quantile(rho / 3.0, 3.0, 0.99).unwrap();
            assert!(rel_close(q3, 3.0 * q, 1e-9));
        }
    }

    #[test]
    fn md1_closed_form_on_first_interval() {
        // Erlang / Crommelin: P(W <= t) = (1 - rho) e^{rho t} for 0 <= t <= D.
        for rho in [0.3f64, 0.9, 0.99] {
            for t in [0.0, 0.1, 0.5, 0.99, 1.0] {
                let want = (1.0 - rho) * (rho * t).exp();
                let got = md1_wait_cdf(rho, 1.0, t).unwrap();
                assert!(
                    rel_close(got, want, 1e-13),
                    "rho={rho} t={t}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn md1_distribution_has_pk_mean_and_right_tail_rate() {
        // Integrate 1 - F by Simpson on [0, T]; must give the P-K mean rho/(2(1-rho)).
        let rho: f64 = 0.9;
        let (t_max, steps_per_unit) = (400usize, 64usize);
        let h = 1.0 / steps_per_unit as f64;
        let n = t_max * steps_per_unit;
        let g = |i: usize| 1.0 - md1_wait_cdf(rho, 1.0, i as f64 * h).unwrap();
        // Simpson per unit interval (F is smooth inside each [k, k+1]).
        let mut integral = 0.0;
        for i in (0..n).step_by(2) {
            integral += h / 3.0 * (g(i) + 4.0 * g(i + 1) + g(i + 2));
        }
        let pk = rho / (2.0 * (1.0 - rho));
        assert!(rel_close(integral, pk, 1e-7), "{integral} vs {pk}");
        // The tail decays like exp(-eta t), rho (e^eta - 1) = eta (Cramér root of
        // the M/D/1 workload, [Kleinrock] ch. 5); no blow-up at large t.
        let (mut lo, mut hi) = (1e-6, 10.0);
        for _ in 0..200 {
            let mid: f64 = 0.5 * (lo + hi);
            if rho * mid.exp_m1() < mid {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let eta = lo;
        let slope = ((1.0 - md1_wait_cdf(rho, 1.0, 100.0).unwrap()).ln()
            - (1.0 - md1_wait_cdf(rho, 1.0, 60.0).unwrap()).ln())
            / 40.0;
        assert!(rel_close(-slope, eta, 1e-4), "{slope} vs {eta}");
        // Monotone and bounded far out, where the alternating Erlang sum is garbage.
        let mut prev = 0.0;
        for t in (0..3000).map(|i| i as f64 * 0.7) {
            let f = md1_wait_cdf(0.99, 1.0, t).unwrap();
            assert!(f >= prev - 1e-15 && f <= 1.0, "t={t}: {f}");
            prev = f;
        }
        assert!(prev > 1.0 - 1e-6);
    }

    #[test]
    fn md1_quantile_heavy_load_is_finite() {
        let q = md1_wait_quantile(0.999, 1.0, 0.99).unwrap();
        // Heavy-traffic: W ~ exp with the P-K mean 499.5 -> p99 ~ 499.5 ln(100) ~ 2300.
        assert!(q > 2000.0 && q < 2600.0, "{q}");
        // Light load: P(W = 0) = 1 - rho >= 0.99.
        assert_eq!(md1_wait_quantile(0.005, 1.0, 0.99), Some(0.0));
    }

    #[test]
    fn gi_m_1_solver_edges() {
        // Exponential interarrivals of rate l: 1 - A*(s) = s / (l + s); sigma = rho.
        let sol = gi_m_1(1.0, |s| s / (0.5 + s)).unwrap();
        assert!(rel_close(sol.sigma, 0.5, 1e-13));
        assert!(rel_close(sol.decay, 0.5, 1e-13));
        // rho = 2: no root in (0, 1).
        assert_eq!(gi_m_1(1.0, |s| s / (2.0 + s)), None);
        // The M/D/1 queue-length law sums to one and Q is non-decreasing.
        let mut t = Md1Table::new(0.95);
        assert!(t.extend_to(5000));
        assert!((t.prob.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(t.cum.windows(2).all(|w| w[1] >= w[0]));
    }

    #[test]
    fn er_m_1_reduces_to_mm1() {
        for rho in [0.1, 0.5, 0.9, 0.999] {
            let sol = er_m_1(1, rho * 2.0, 2.0).unwrap();
            assert!(rel_close(sol.sigma, rho, 1e-12), "{rho}: {}", sol.sigma);
            assert!(rel_close(sol.mean_wait(), rho / (2.0 - 2.0 * rho), 1e-9));
        }
    }

    #[test]
    fn er_m_1_two_phases_matches_quadratic() {
        // R = 2, x = 1 - sigma, k = mu/lambda:
        // (1 - x)(1 + k x)^2 = 1  =>  k^2 x^2 - (k^2 - 2k) x - (2k - 1) = 0.
        let mu = 1.0;
        for rho in [0.3, 0.7, 0.95, 0.9999] {
            let lambda = 2.0 * rho * mu; // per-dyno rate lambda/2 = rho mu
            let k: f64 = mu / lambda;
            let b = k * k - 2.0 * k;
            let x = (b + (b * b + 4.0 * k * k * (2.0 * k - 1.0)).sqrt()) / (2.0 * k * k);
            let sol = er_m_1(2, lambda, mu).unwrap();
            assert!(rel_close(sol.sigma, 1.0 - x, 1e-10), "rho={rho}");
            assert!(
                rel_close(sol.decay, mu * x, 1e-7),
                "rho={rho}: {} vs {}",
                sol.decay,
                mu * x
            );
            // Through baseline: round robin over 2 dynos of a Poisson stream.
            let b = baseline(&input(Policy::RoundRobin, 2, 1, lambda, exp_law(1.0 / mu)));
            assert_eq!(b.method, "exact:er_m_1");
            assert!(rel_close(b.mean_wait.unwrap(), (1.0 - x) / (mu * x), 1e-7));
            assert!(rel_close(
                b.p99_wait.unwrap(),
                ((1.0 - x) / 0.01).ln() / (mu * x),
                1e-7
            ));
        }
    }

    #[test]
    fn er_m_1_many_phases() {
        // Seed setting, round robin: R up to 4000, lambda = 150, mu = 3.
        let mut prev = f64::INFINITY;
        for r in [51, 60, 100, 1000, 4000] {
            let sol = er_m_1(r, 150.0, 3.0).unwrap();
            let rho = 50.0 / f64::from(r);
            assert!(sol.sigma >= 0.0 && sol.sigma < rho, "R={r}: {}", sol.sigma);
            assert!(sol.mean_wait() <= prev);
            prev = sol.mean_wait();
        }
        // Heavy load with many phases approaches D/M/1: sigma = exp(-(1 - sigma)/rho).
        let r = 4000;
        let rho = 0.99;
        let sol = er_m_1(r, rho * f64::from(r), 1.0).unwrap();
        let mut s = 0.5;
        for _ in 0..100_000 {
            s = (-(1.0 - s) / rho).exp();
        }
        assert!(
            sol.sigma > 0.9 && (sol.sigma - s).abs() < 1e-3,
            "{} vs {s}",
            sol.sigma
        );
        assert!(sol.mean_wait() < mmc_mean_wait(1, rho, 1.0));
    }

    #[test]
    fn gi_m_1_deterministic_arrivals() {
        // D/M/1 at rho = 0.5: sigma = exp(-2 (1 - sigma)), by plain fixed-point iteration.
        let mut s: f64 = 0.0;
        for _ in 0..10_000 {
            s = (-2.0 * (1.0 - s)).exp();
        }
        assert!((s - 0.2032).abs() < 1e-4);
        let q = QueueInput {
            arrival: law(Family::Det, 1.0, 0.0),
            ..input(Policy::Central, 1, 1, 1.0, exp_law(0.5))
        };
        let b = baseline(&q);
        assert_eq!(b.method, "exact:gi_m_1");
        assert!(rel_close(b.mean_wait.unwrap(), s / (2.0 * (1.0 - s)), 1e-9));
        // Random routing of a deterministic stream over 2 dynos: the thinned
        // interarrival is D times a geometric(1/2) count; its LST is
        // (e^{-s}/2) / (1 - e^{-s}/2), so sigma = e^{-x}/(2 - e^{-x}), x = 2(1 - sigma)
        // (service mean 0.5 per dyno at rate 0.5: rho = 0.25).
        let mut s: f64 = 0.0;
        for _ in 0..10_000 {
            let e = (-2.0 * (1.0 - s)).exp();
            s = e / (2.0 - e);
        }
        let q = QueueInput {
            arrival: law(Family::Det, 1.0, 0.0),
            ..input(Policy::Random, 2, 1, 1.0, exp_law(0.5))
        };
        let b = baseline(&q);
        assert_eq!(b.method, "exact:gi_m_1");
        assert!(rel_close(b.mean_wait.unwrap(), s / (2.0 * (1.0 - s)), 1e-9));
    }

    #[test]
    fn approximations_are_labelled_and_reduce_correctly() {
        // KLB with ca2 = cs2 = 1 is M/M/1; Allen–Cunneen with ca2 = cs2 = 1 is M/M/c.
        assert!(rel_close(
            kraemer_langenbach_belz_mean_wait(0.8, 1.0, 1.0, 1.0),
            4.0,
            1e-14
        ));
        assert!(rel_close(
            allen_cunneen_mean_wait(5, 4.0, 1.0, 1.0, 1.0),
            mmc_mean_wait(5, 4.0, 1.0),
            1e-14
        ));
        // KLB by hand at rho = 0.8, ca2 = 0.5, cs2 = 0:
        // base = 0.8/0.2 * 0.25 = 1, g = exp(-2*0.2*0.25/(3*0.8*0.5)) = exp(-1/12).
        let w = kraemer_langenbach_belz_mean_wait(0.8, 1.0, 0.5, 0.0);
        assert!(rel_close(w, (-1.0f64 / 12.0).exp(), 1e-14), "{w}");
        // ca2 >= 1 branch, rho = 0.5, ca2 = 3, cs2 = 0.5: base = 1 * 1.75, g = exp(-0.5*2/5).
        let w = kraemer_langenbach_belz_mean_wait(0.5, 1.0, 3.0, 0.5);
        assert!(rel_close(w, 1.75 * (-0.2f64).exp(), 1e-14), "{w}");

        // M/D/4 is not exact here.
        let b = baseline(&input(
            Policy::Central,
            4,
            1,
            3.0,
            law(Family::Det, 1.0, 0.0),
        ));
        assert_eq!(b.method, "approx:allen_cunneen");
        assert!(rel_close(
            b.mean_wait.unwrap(),
            mmc_mean_wait(4, 3.0, 1.0) * 0.5,
            1e-14
        ));
        // Clamped exponential service: P-K stays exact for one server...
        let clamped = LawMoments {
            clamped: true,
            ..law(Family::Exp, 0.9, 0.8)
        };
        let b = baseline(&input(Policy::Central, 1, 1, 1.0, clamped));
        assert_eq!(b.method, "exact:pollaczek_khinchine");
        assert!(rel_close(b.mean_wait.unwrap(), 0.81 * 1.8 / 0.2, 1e-14));
        assert_eq!(b.p99_wait, None);
        // ...but is no longer M/M/c with several.
        let b = baseline(&input(Policy::Central, 2, 1, 1.0, clamped));
        assert_eq!(b.method, "approx:allen_cunneen");
        // Random routing of a hyperexponential stream (scv 4) to 10 single-worker
        // dynos with lognormal service: G/G/1 with ca2 = 1 + 3/10.
        let q = QueueInput {
            arrival: law(Family::HyperExp, 0.1, 4.0),
            ..input(
                Policy::Random,
                10,
                1,
                10.0,
                law(Family::Lognormal, 0.5, 2.0),
            )
        };
        let b = baseline(&q);
        assert_eq!(b.method, "approx:kraemer_langenbach_belz");
        let w = kraemer_langenbach_belz_mean_wait(1.0, 0.5, 1.3, 2.0);
        assert!(rel_close(b.mean_wait.unwrap(), w, 1e-14));
        assert!(rel_close(
            b.p99_wait.unwrap(),
            exp_tail_quantile(0.5, w, 0.99),
            1e-14
        ));
        // Round robin of a Poisson stream to dynos with 2 workers: E_R/M/2, approximate.
        let b = baseline(&input(Policy::RoundRobin, 3, 2, 3.0, exp_law(1.0)));
        assert_eq!(b.method, "approx:allen_cunneen");
        let w = allen_cunneen_mean_wait(2, 1.0, 1.0, 1.0 / 3.0, 1.0);
        assert!(rel_close(b.mean_wait.unwrap(), w, 1e-14));
        // Exponential tail: P(W > t) = 0.5 exp(-t 0.5 / 2) at mean 2.
        assert!(rel_close(
            exp_tail_quantile(0.5, 2.0, 0.99),
            4.0 * 50f64.ln(),
            1e-14
        ));
    }

    #[test]
    fn dynamic_policies() {
        let exp = exp_law(1.0);
        // One server: whatever the policy, M/M/1.
        for policy in [
            Policy::Jsq { routers: 1 },
            Policy::Jsq { routers: 3 },
            Policy::Pod { d: 1, routers: 1 },
            Policy::Jiq { routers: 2 },
            Policy::Lwl,
        ] {
            let b = baseline(&input(policy, 1, 1, 0.8, exp));
            assert_eq!(b.method, "exact:mm1", "{policy:?}");
            assert!(rel_close(b.mean_wait.unwrap(), 0.8 / 0.2, 1e-12));
        }
        // lwl is the central queue; pod with one choice is random routing.
        assert_eq!(
            baseline(&input(Policy::Lwl, 10, 1, 9.0, exp)),
            baseline(&input(Policy::Central, 10, 1, 9.0, exp))
        );
        assert_eq!(
            baseline(&input(Policy::Pod { d: 1, routers: 4 }, 10, 1, 9.0, exp)),
            baseline(&input(Policy::Random, 10, 1, 9.0, exp))
        );
        // Power of two: mean-field, T = 1 + rho^2 + rho^6 + rho^14 + ...
        let b = baseline(&input(
            Policy::Pod { d: 2, routers: 1 },
            1000,
            1,
            900.0,
            exp,
        ));
        assert_eq!(b.method, "approx:mean_field_pod");
        let t: f64 = (1..30).map(|i| 0.9f64.powi((1 << i) - 2)).sum();
        assert!(rel_close(b.mean_wait.unwrap(), t - 1.0, 1e-12), "{b:?}");
        // d = 3 at rho 0.5 in units of 2: T/2 = 1 + 0.5^3 + 0.5^12 + 0.5^39.
        let m = mean_field_pod(3, 0.5, 2.0);
        assert!(rel_close(
            m.mean_wait,
            2.0 * (0.125 + 0.5f64.powi(12) + 0.5f64.powi(39)),
            1e-12
        ));
        // The tail integrates to the mean: check P(W > p99) by the formula
        // for d = 2, rho = 0.9 against a direct numerical integral of it.
        let m = mean_field_pod(2, 0.9, 1.0);
        assert!(m.p99_wait > m.mean_wait && m.p99_wait < 20.0, "{m:?}");
        // A large d behaves like JSQ in the limit: P(W > 0) = rho^d.
        let m = mean_field_pod(32, 0.8, 1.0);
        assert!(
            m.mean_wait < 0.8f64.powi(32) * 1.01 && m.p99_wait == 0.0,
            "{m:?}"
        );
        // No exact or mean-field result: none. Dynamic policies need one worker.
        for q in [
            input(Policy::Jsq { routers: 1 }, 10, 1, 9.0, exp),
            input(Policy::Jiq { routers: 1 }, 10, 1, 9.0, exp),
            input(Policy::Pod { d: 2, routers: 2 }, 10, 1, 9.0, exp),
            input(Policy::Pod { d: 10, routers: 1 }, 10, 1, 9.0, exp),
            input(Policy::CentralRouters { routers: 2 }, 10, 1, 9.0, exp),
            input(Policy::CentralRouters { routers: 2 }, 1, 1, 0.5, exp),
            input(
                Policy::Pod { d: 2, routers: 1 },
                10,
                1,
                9.0,
                law(Family::Det, 1.0, 0.0),
            ),
            input(Policy::Jsq { routers: 1 }, 1, 2, 0.5, exp),
        ] {
            assert_eq!(baseline(&q).method, "none", "{q:?}");
        }
        assert_eq!(
            baseline(&input(Policy::Jsq { routers: 1 }, 10, 1, 11.0, exp)).method,
            "unstable"
        );
    }

    #[test]
    fn mean_field_pod_tail_matches_its_mean() {
        // E[W] = ∫ P(W > x) dx: integrate the tail the p99 is read from.
        for (d, rho) in [(2, 0.5), (2, 0.9), (3, 0.95)] {
            let m = mean_field_pod(d, rho, 1.0);
            // Rebuild the tail as in mean_field_pod and integrate it.
            let df = f64::from(d);
            let a: Vec<f64> = (1..40)
                .map(|k| rho.powf((df.powi(k + 1) - df) / (df - 1.0)))
                .collect();
            let tail = |x: f64| {
                let mut sum = 0.0;
                for k in 1..a.len() {
                    let erl: f64 = (0..k)
                        .map(|j| {
                            (-x).exp() * x.powi(j as i32)
                                / (1..=j).map(|i| i as f64).product::<f64>()
                        })
                        .sum();
                    sum += (a[k - 1] - a[k]) * erl;
                }
                sum
            };
            let (n, top) = (200_000, 80.0);
            let h = top / n as f64;
            let integral: f64 = (0..n).map(|i| tail((i as f64 + 0.5) * h) * h).sum();
            assert!(
                rel_close(integral, m.mean_wait, 1e-6),
                "d={d} rho={rho}: {integral} vs {}",
                m.mean_wait
            );
            assert!((tail(m.p99_wait) - 0.01).abs() < 1e-9, "d={d} rho={rho}");
        }
    }

    #[test]
    fn seed_rows() {
        let rows = seed_comparison_rows();
        assert_eq!(rows.len(), 10);
        let rs: Vec<u32> = rows.iter().map(|r| r.servers).collect();
        assert_eq!(rs, [51, 60, 75, 100, 150, 200, 500, 1000, 2000, 4000]);
        let r51 = rows[0];
        // Dumb: M/M/1 at lambda/R = 150/51, mu = 3: W = rho/(mu - lambda/R) = 50/3 s.
        assert!(
            (r51.mm1_mean_wait_ms - 16666.667).abs() < 1e-3,
            "{}",
            r51.mm1_mean_wait_ms
        );
        // 1/(51*3 - 150) = 1/3 s.
        assert!((r51.one_over_spare_capacity_ms - 333.333).abs() < 1e-3);
        // Erlang C M/M/51 with a = 50, by direct summation: C(51, 50) / 3 s.
        let want = 1000.0 * erlang_c_direct(51, 50.0) / 3.0;
        assert!(rel_close(r51.erlang_c_mean_wait_ms, want, 1e-11));
        assert!(
            (r51.erlang_c_mean_wait_ms - 279.91).abs() < 0.01,
            "{}",
            r51.erlang_c_mean_wait_ms
        );
        for (row, fig) in rows.iter().zip(PUBLISHED_SEED_FIGURES.iter()) {
            let r = row.servers;
            // The published dumb column is the exact M/M/1 mean rounded to ms
            // (e.g. R=1000: 17.54 -> 18).
            assert!((row.mm1_mean_wait_ms - fig.dumb_ms).abs() <= 0.5, "R={r}");
            // The published smart column is 1/(R mu - lambda) rounded to ms
            // (e.g. R=500: 0.74 -> 1).
            assert!(
                (row.one_over_spare_capacity_ms - fig.smart_ms).abs() <= 0.5,
                "R={r}"
            );
            // The real central-queue wait is C times that, C < 1.
            let c = erlang_c_direct(r.min(200), 50.0);
            assert!(row.erlang_c_mean_wait_ms < row.one_over_spare_capacity_ms);
            if r <= 200 {
                assert!(rel_close(
                    row.erlang_c_mean_wait_ms,
                    c * row.one_over_spare_capacity_ms,
                    1e-10
                ));
            }
        }
        // From R = 100 on the central queue practically never waits.
        assert!(rows[3].erlang_c_mean_wait_ms < 1e-6);
    }
}
