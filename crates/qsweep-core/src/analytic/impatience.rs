//! Queues with impatient customers (abandonment): Erlang A (M/M/c+M),
//! M/M/c+D and M/G/1+D.
//!
//! Why this module exists: with a patience law the simulated queue is always
//! stable, and a sweep reports the fraction who abandon beside the waits of
//! those served; these are the exact values of the same quantities.
//!
//! The model (FCFS, "abandon" semantics): each arrival has a patience τ drawn
//! i.i.d.; its offered wait V is the time it would wait for a server given
//! only the work of those ahead who are actually served. If V > τ it abandons
//! (takes no service and never affects later customers), else it is served
//! after waiting V. Every function returns, for the stationary regime seen by
//! an arrival (PASTA):
//! - `p_abandon` = P(V > τ);
//! - `mean_wait_served` = E\[V | V ≤ τ\];
//! - `mean_wait_all` = E\[min(V, τ)\] (time in queue over all arrivals,
//!   abandoners counted until they leave);
//! - `p_wait_served` = P(V > 0 | V ≤ τ), `p_delay` = P(V > 0);
//! - the tail P(V > t | V ≤ τ) through [`Impatience::p_served_wait_gt`].
//!
//! References:
//! - \[Palm\] C. Palm, "Intensitätsschwankungen im Fernsprechverkehr",
//!   Ericsson Technics 44, 1943 (M/M/c with exponential patience).
//! - \[GMR\] O. Garnett, A. Mandelbaum, M. Reiman, "Designing a call center
//!   with impatient customers", Manufacturing & Service Operations Management
//!   4(3), 2002, 208–227 (Erlang A: the birth–death chain, the offered wait).
//! - \[MZ\] A. Mandelbaum, S. Zeltyn, "Service engineering in action: the
//!   Palm/Erlang-A queue, with applications to call centers", in *Advances in
//!   Services Innovations*, Springer, 2007, 17–45 (Erlang A's performance
//!   measures, the served wait's law through incomplete gamma functions).
//! - \[BBH\] F. Baccelli, P. Boyer, G. Hébuterne, "Single-server queues with
//!   impatient customers", Advances in Applied Probability 16(4), 1984,
//!   887–905 (the virtual-wait integral equation of M/G/1+G and the offered
//!   wait's density of M/M/c+G, f(x) = λ π_{c−1} exp(λ ∫_0^x Ḡ − c μ x)).
//! - \[Kleinrock\], \[GH\] as in [`crate::analytic`] (Erlang B and C, the
//!   M/G/1 workload equation of Takács).

use super::erlang::{erlang_b, erlang_c, mmc_mean_wait};
use super::pos_finite;
use crate::dist::gamma_pq;

/// The stationary performance of a queue with abandonment (see the module
/// docs for the model). Waits are in the time unit of the inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Impatience {
    /// P(V > τ): the fraction of arrivals who abandon.
    pub p_abandon: f64,
    /// E\[V | V ≤ τ\]: the mean wait of those served.
    pub mean_wait_served: f64,
    /// E\[min(V, τ)\]: the mean time in queue over all arrivals.
    pub mean_wait_all: f64,
    /// P(V > 0 | V ≤ τ): the fraction of those served who wait at all.
    pub p_wait_served: f64,
    /// P(V > 0): the fraction of all arrivals who find every server busy.
    pub p_delay: f64,
    /// E\[number waiting\] = λ `mean_wait_all` (Little's law; for Erlang A
    /// summed over the chain on its own).
    pub mean_queue: f64,
    /// The law of the served wait, for [`Impatience::p_served_wait_gt`].
    pub served_tail: ServedTail,
}

/// The law of the wait of served customers, P(V > t | V ≤ τ).
#[derive(Clone, Debug, PartialEq)]
pub enum ServedTail {
    /// `p_wait` · exp(−`decay` t): no patience (Erlang C, \[GH\] ch. 2).
    Exponential { p_wait: f64, decay: f64 },
    /// Deterministic patience `d` with exponential service (M/M/c+D): given
    /// V > 0 and served, V has the density ∝ exp(−`beta` x) on (0, d]
    /// (beta = c μ − λ, of either sign; \[BBH\]), so the tail is
    /// `p_wait` · ∫_t^d e^{−βx} dx / ∫_0^d e^{−βx} dx.
    Truncated { p_wait: f64, beta: f64, d: f64 },
    /// Erlang A: given V > 0 and served, V has the density
    /// ∝ exp(y (1 − e^{−θx}) − (c μ + θ) x), y = λ/θ (\[BBH\]'s density
    /// times the probability e^{−θx} of being served), so with
    /// z = y e^{−θx} the tail is `p_wait` · P(s, y e^{−θt}) / P(s, y), P the
    /// regularised lower incomplete gamma function and s = c μ/θ + 1
    /// (\[MZ\]). `rate` is c μ.
    ErlangA {
        p_wait: f64,
        theta: f64,
        rate: f64,
        y: f64,
    },
    /// Tabulated (M/G/1+D): `tail[i]` = P(V > i · `step` | V ≤ d),
    /// quadratic between the points, 0 from the last one (at d) on.
    Table { step: f64, tail: Vec<f64> },
}

impl Impatience {
    /// P(V > t | V ≤ τ), the tail of the served customers' wait; t below 0
    /// counts as 0 (as [`super::WaitTail::p_wait_gt`]). None for NaN t or
    /// where the formula cannot say (an incomplete-gamma series that does not
    /// converge within its cap).
    pub fn p_served_wait_gt(&self, t: f64) -> Option<f64> {
        if t.is_nan() {
            return None;
        }
        let t = t.max(0.0);
        match self.served_tail {
            ServedTail::Exponential { p_wait, decay } => Some(p_wait * (-decay * t).exp()),
            ServedTail::Truncated { p_wait, beta, d } => Some(p_wait * truncated_ratio(beta, d, t)),
            ServedTail::ErlangA {
                p_wait,
                theta,
                rate,
                y,
            } => {
                if p_wait == 0.0 || t == 0.0 {
                    return Some(p_wait);
                }
                erlang_a_ratio(theta, rate, y, t).map(|r| p_wait * r)
            }
            ServedTail::Table { step, ref tail } => {
                if step <= 0.0 || tail.len() < 3 {
                    return Some(0.0);
                }
                let x = t / step;
                let i = x.floor();
                if i + 1.0 >= tail.len() as f64 {
                    return Some(0.0);
                }
                // Quadratic through three neighbouring points (the last
                // cell uses the two before it).
                let i = (i as usize).min(tail.len().saturating_sub(3));
                let u = x - i as f64;
                let (a, b, c) = (tail[i], tail[i + 1], tail[i + 2]);
                let p = a + u * (b - a) + 0.5 * u * (u - 1.0) * (c - 2.0 * b + a);
                Some(p.clamp(0.0, 1.0))
            }
        }
    }

    /// The p-quantile of the served customers' wait (e.g. p = 0.99 for
    /// their p99), from [`Impatience::p_served_wait_gt`] by bisection; 0
    /// where at most 1 − p of them wait. None for p outside \[0, 1) or where
    /// the tail cannot be evaluated.
    pub fn served_wait_quantile(&self, p: f64) -> Option<f64> {
        tail_quantile(|t| self.p_served_wait_gt(t), p, self.mean_wait_served)
    }
}

/// The p-quantile of a wait whose tail P(W > t) is `tail` (non-increasing,
/// right-continuous): 0 where P(W > 0) ≤ 1 − p, else the smallest t with
/// P(W > t) ≤ 1 − p, by doubling from `scale` (a typical wait) and bisection
/// to a relative 1e-13. None for p outside \[0, 1), a tail that cannot be
/// evaluated, or one that stays above 1 − p beyond 2^200 · scale.
pub(super) fn tail_quantile(tail: impl Fn(f64) -> Option<f64>, p: f64, scale: f64) -> Option<f64> {
    if !(0.0..1.0).contains(&p) {
        return None;
    }
    let target = 1.0 - p;
    if tail(0.0)? <= target {
        return Some(0.0);
    }
    let mut hi = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let mut lo = 0.0;
    let mut doublings = 0;
    while tail(hi)? > target {
        lo = hi;
        hi *= 2.0;
        doublings += 1;
        if doublings > 200 || !hi.is_finite() {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-13 * hi {
            break;
        }
        if tail(mid)? > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

/// φ0(u) = ∫_0^1 e^{−us} ds = (1 − e^{−u})/u, 1 at u = 0.
fn phi0(u: f64) -> f64 {
    if u == 0.0 {
        1.0
    } else {
        -(-u).exp_m1() / u
    }
}

/// φ1(u) = ∫_0^1 s e^{−us} ds = (1 − e^{−u}(1 + u))/u², by its series
/// Σ (−u)^k / (k! (k + 2)) near 0 (no cancellation there).
fn phi1(u: f64) -> f64 {
    if u.abs() < 0.5 {
        let (mut term, mut sum) = (1.0, 0.5);
        for k in 1..40 {
            term *= -u / f64::from(k);
            let add = term / f64::from(k + 2);
            sum += add;
            if add.abs() < 1e-18 * sum.abs() {
                break;
            }
        }
        sum
    } else {
        (1.0 - (-u).exp() * (1.0 + u)) / (u * u)
    }
}

/// ∫_t^d e^{−βx} dx / ∫_0^d e^{−βx} dx for 0 ≤ t, written with positive
/// exponents only (for β < 0 both integrals are measured from d).
fn truncated_ratio(beta: f64, d: f64, t: f64) -> f64 {
    if t >= d {
        return 0.0;
    }
    let r = d - t;
    if beta >= 0.0 {
        (-beta * t).exp() * r * phi0(beta * r) / (d * phi0(beta * d))
    } else {
        let b = -beta;
        r * phi0(b * r) / (d * phi0(b * d))
    }
}

/// Most terms the Erlang-A tail's incomplete-gamma series may take.
const GAMMA_SERIES_CAP: usize = 2_000_000;

/// Σ_{k≥0} x^k / (s (s+1) ... (s+k)): P(s, x) = x^s e^{−x}/Γ(s) times this
/// (\[Kleinrock\]-era standard series, Abramowitz & Stegun 6.5.29).
fn gamma_series(s: f64, x: f64) -> Option<f64> {
    let mut term = 1.0 / s;
    let mut sum = term;
    for k in 1..GAMMA_SERIES_CAP {
        term *= x / (s + k as f64);
        sum += term;
        if term < 1e-17 * sum {
            return Some(sum);
        }
    }
    None
}

/// P(s, y e^{−θt}) / P(s, y), s = rate/θ + 1: Erlang A's served-wait tail
/// given V > 0. Where y < s + 1 (the series converges without growing) the
/// prefactors are divided out analytically:
/// ratio = exp(−(rate + θ) t − y expm1(−θt)) · S(y e^{−θt}) / S(y),
/// so nothing underflows; otherwise P(s, y) ≥ ~1/2 and the ratio is taken
/// directly.
fn erlang_a_ratio(theta: f64, rate: f64, y: f64, t: f64) -> Option<f64> {
    let s = rate / theta + 1.0;
    let yt = y * (-theta * t).exp();
    if y < s + 1.0 {
        let num = gamma_series(s, yt)?;
        let den = gamma_series(s, y)?;
        let log_pre = -(rate + theta) * t - y * (-theta * t).exp_m1();
        Some((log_pre.exp() * num / den).clamp(0.0, 1.0))
    } else {
        let den = gamma_pq(s, y).0;
        if den <= 0.0 {
            return None;
        }
        Some((gamma_pq(s, yt).0 / den).clamp(0.0, 1.0))
    }
}

/// M/M/c without patience, as an [`Impatience`]: Erlang C (\[GH\] ch. 2).
fn no_patience(servers: u32, lambda: f64, mu: f64) -> Option<Impatience> {
    let cmu = f64::from(servers) * mu;
    if lambda >= cmu {
        return None;
    }
    let p_wait = erlang_c(servers, lambda / mu);
    let mean = mmc_mean_wait(servers, lambda, mu);
    Some(Impatience {
        p_abandon: 0.0,
        mean_wait_served: mean,
        mean_wait_all: mean,
        p_wait_served: p_wait,
        p_delay: p_wait,
        mean_queue: lambda * mean,
        served_tail: ServedTail::Exponential {
            p_wait,
            decay: cmu - lambda,
        },
    })
}

/// Most states above c the Erlang-A sum may visit before giving up.
const ERLANG_A_MAX_TERMS: u64 = 50_000_000;

/// The sums of [`erlang_a`] over the states, each scaled by the same
/// e^{−scale}; the tests check Little's law for abandonment on them.
struct ErlangASums {
    /// Σ_{n<c} π_n (served at once), scaled.
    lower: f64,
    /// Σ_{n≥c} π_n.
    delay: f64,
    /// Σ_{n≥c} π_n (1 − L_n): abandons.
    abandon: f64,
    /// Σ_{n≥c} π_n L_n: waits and is served.
    served_wait: f64,
    /// Σ_{n≥c} π_n E\[V 1(V ≤ τ) | n\].
    served_wait_time: f64,
    /// Σ_{n≥c} π_n (n − c): the mean queue length, unnormalised.
    queue: f64,
}

/// The birth–death chain of Erlang A (\[Palm\]; \[GMR\]): birth λ, death
/// min(n, c) μ + (n − c)^+ θ, π_n ∝ Π_{j≤n} λ / death_j. The states below c
/// are summed at once, Σ_{n≤c} π_n / π_c = 1/B(c, λ/μ) (Erlang B); above c
/// term by term in log space (a running maximum rescales the sums, so no
/// weight overflows for c and λ/μ up to 10^4 and beyond), until the rest,
/// bounded by a geometric series once the ratios λ/death fall below 1, is
/// below 1e-18 of the sums.
///
/// An arrival finding n = c + k has k ahead in queue; its offered wait is
/// the sum of independent exponentials of rates r_j = c μ + j θ,
/// j = k, ..., 0 (service completions and abandonments of those ahead), so
/// P(served | n) = E e^{−θV} = L_k = Π_j r_j/(r_j + θ) and
/// E\[V e^{−θV} | n\] = L_k Σ_j 1/(r_j + θ) (\[GMR\]; \[MZ\]).
fn erlang_a_sums(lambda: f64, mu: f64, theta: f64, servers: u32) -> Option<ErlangASums> {
    let cmu = f64::from(servers) * mu;
    let b = erlang_b(servers, lambda / mu);
    let ln_lambda = lambda.ln();
    // State c + k: log weight ell (relative to pi_c), ln L_k, S_k.
    let mut ell = 0.0_f64;
    let mut ln_l = -(theta / cmu).ln_1p();
    let mut s = 1.0 / (cmu + theta);
    let mut scale = 0.0_f64;
    let (mut delay, mut abandon, mut served_wait, mut served_wait_time, mut queue) =
        (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
    let mut k: u64 = 0;
    loop {
        if ell > scale {
            let f = (scale - ell).exp();
            delay *= f;
            abandon *= f;
            served_wait *= f;
            served_wait_time *= f;
            queue *= f;
            scale = ell;
        }
        let w = (ell - scale).exp();
        let l = ln_l.exp();
        let kf = k as f64;
        delay += w;
        abandon += w * -ln_l.exp_m1();
        served_wait += w * l;
        served_wait_time += w * l * s;
        queue += w * kf;
        let next_rate = cmu + (kf + 1.0) * theta;
        let ratio = lambda / next_rate;
        if ratio < 1.0 {
            let geo = ratio / (1.0 - ratio);
            let rest = w * geo;
            let rest_queue = rest * (kf + 1.0 + 1.0 / (1.0 - ratio));
            if rest <= 1e-18 * delay && rest_queue <= 1e-18 * queue {
                break;
            }
        }
        k += 1;
        if k > ERLANG_A_MAX_TERMS {
            return None;
        }
        ell += ln_lambda - next_rate.ln();
        ln_l -= (theta / next_rate).ln_1p();
        s += 1.0 / (next_rate + theta);
    }
    // Sum_{n<c} pi_n / pi_c = 1/B - 1, scaled like the rest.
    let lower = ((1.0 - b) / b) * (-scale).exp();
    Some(ErlangASums {
        lower,
        delay,
        abandon,
        served_wait,
        served_wait_time,
        queue,
    })
}

/// Erlang A, M/M/c+M (\[Palm\]; \[GMR\]; \[MZ\]): Poisson arrivals of rate
/// `lambda`, `servers` exponential servers of rate `mu`, exponential
/// patience of rate `theta`. Stable for any λ when θ > 0; θ = 0 is Erlang C
/// and needs λ < c μ. None for invalid inputs (λ, μ not positive and finite,
/// θ negative or not finite, no servers), for θ = 0 with λ ≥ c μ, and where
/// the chain needs more than 5·10^7 states above c (θ tiny beside λ − c μ).
///
/// From the sums of `erlang_a_sums`, with Z their total:
/// p_abandon = Σ π_n (1 − L_n) / Z, E\[min(V, τ)\] = p_abandon/θ (since
/// E\[min(V, τ) | V\] = (1 − e^{−θV})/θ), and the served quantities over the
/// served mass Σ_{n<c} π_n + Σ_{n≥c} π_n L_n.
pub fn erlang_a(lambda: f64, mu: f64, theta: f64, servers: u32) -> Option<Impatience> {
    if !(pos_finite(lambda) && pos_finite(mu) && theta.is_finite() && theta >= 0.0) || servers == 0
    {
        return None;
    }
    if theta == 0.0 {
        return no_patience(servers, lambda, mu);
    }
    let cmu = f64::from(servers) * mu;
    let tail = |p_wait| ServedTail::ErlangA {
        p_wait,
        theta,
        rate: cmu,
        y: lambda / theta,
    };
    if erlang_b(servers, lambda / mu) == 0.0 {
        // All servers are never all busy (to f64 precision).
        return Some(Impatience {
            p_abandon: 0.0,
            mean_wait_served: 0.0,
            mean_wait_all: 0.0,
            p_wait_served: 0.0,
            p_delay: 0.0,
            mean_queue: 0.0,
            served_tail: tail(0.0),
        });
    }
    let sums = erlang_a_sums(lambda, mu, theta, servers)?;
    let total = sums.lower + sums.delay;
    let served = sums.lower + sums.served_wait;
    let p_abandon = sums.abandon / total;
    let p_wait_served = sums.served_wait / served;
    Some(Impatience {
        p_abandon,
        mean_wait_served: sums.served_wait_time / served,
        mean_wait_all: p_abandon / theta,
        p_wait_served,
        p_delay: sums.delay / total,
        mean_queue: sums.queue / total,
        served_tail: tail(p_wait_served),
    })
}

/// The two-piece offered-wait law of M/M/c+D (\[BBH\]): an atom P(V = 0) =
/// p / B(c−1, λ/μ) and the density f(x) = λ p e^{−βx} on (0, d],
/// λ p e^{−βd} e^{−cμ(x−d)} above d, p = π_{c−1}, β = c μ − λ. For β < 0
/// every mass is scaled by e^{−|β|d} so that only negative exponents appear.
fn two_piece(lambda: f64, mu: f64, servers: u32, d: f64) -> Impatience {
    let cmu = f64::from(servers) * mu;
    let beta = cmu - lambda;
    let b_prev = erlang_b(servers - 1, lambda / mu);
    let (w0, wb, mb1, wt) = if beta >= 0.0 {
        let u = beta * d;
        (
            1.0 / b_prev,
            lambda * d * phi0(u),
            lambda * d * d * phi1(u),
            lambda * (-u).exp() / cmu,
        )
    } else {
        let u = -beta * d;
        (
            (-u).exp() / b_prev,
            lambda * d * phi0(u),
            lambda * d * d * (phi0(u) - phi1(u)),
            lambda / cmu,
        )
    };
    let total = w0 + wb + wt;
    let served = w0 + wb;
    let p_wait_served = wb / served;
    let mean_wait_all = (mb1 + d * wt) / total;
    Impatience {
        p_abandon: wt / total,
        mean_wait_served: mb1 / served,
        mean_wait_all,
        p_wait_served,
        p_delay: (wb + wt) / total,
        mean_queue: lambda * mean_wait_all,
        served_tail: ServedTail::Truncated {
            p_wait: p_wait_served,
            beta,
            d,
        },
    }
}

/// M/M/1+D: Poisson arrivals `lambda`, exponential service `mu`,
/// deterministic patience `d` (\[BBH\]), in closed form. With β = μ − λ the
/// virtual wait has the atom P0 at 0 and the density f(x) = P0 λ e^{−βx} for
/// 0 < x ≤ d, f(x) = P0 λ e^{−βd} e^{−μ(x−d)} for x > d (the workload
/// decreases at rate 1 and jumps by an Exp(μ) service only when V ≤ d), so
/// normalising, P0 = μ (μ − λ) / (μ² − λ² e^{−(μ−λ)d}) (P0 = 1/(2 + μd) at
/// λ = μ), and P(V > d) = P0 (λ/μ) e^{−βd}. Any λ > 0 (the queue is stable
/// with patience); d = ∞ is M/M/1 and needs λ < μ. None for invalid inputs.
pub fn mm1_det_patience(lambda: f64, mu: f64, d: f64) -> Option<Impatience> {
    mmc_det_patience(lambda, mu, 1, d)
}

/// M/M/c+D: Poisson arrivals `lambda`, `servers` exponential servers of rate
/// `mu`, deterministic patience `d`. The offered wait's density of M/M/c+G,
/// f(x) = λ π_{c−1} exp(λ ∫_0^x Ḡ(u) du − c μ x) for x > 0 (\[BBH\]; the
/// states below c are those of M/M/c, so P(V = 0) = Σ_{n<c} π_n =
/// π_{c−1}/B(c−1, λ/μ)), with Ḡ = 1 on \[0, d): rate c μ − λ below d and
/// c μ above (while the offered wait is at most d the c-server workload
/// behaves as in M/M/c; above d nobody joins). d = 0 gives Erlang B's
/// blocking B(c, λ/μ) as `p_abandon`; d = ∞ is Erlang C and needs λ < c μ.
/// None for invalid inputs.
pub fn mmc_det_patience(lambda: f64, mu: f64, servers: u32, d: f64) -> Option<Impatience> {
    if !(pos_finite(lambda) && pos_finite(mu)) || servers == 0 || d.is_nan() || d < 0.0 {
        return None;
    }
    if d.is_infinite() {
        return no_patience(servers, lambda, mu);
    }
    if !(f64::from(servers) * mu).is_finite() {
        return None;
    }
    Some(two_piece(lambda, mu, servers, d))
}

/// Grid cells of [`mg1_det_patience`]'s coarse solve: at least this many...
const MG1_MIN_CELLS: usize = 1024;
/// ... at least this many per mean service time and per mean interarrival ...
const MG1_CELLS_PER_TIME: f64 = 64.0;
/// ... and at most this many (the solve is O(cells²)).
const MG1_MAX_CELLS: usize = 6144;

/// ∫_lo^hi g by Gauss–Legendre (5 points), halving adaptively until the two
/// halves agree with the whole to `tol` (so that the jumps of a service
/// survival function, e.g. deterministic service, cost accuracy nowhere).
fn adaptive_gl(g: &dyn Fn(f64) -> f64, lo: f64, hi: f64, tol: f64, depth: u32) -> f64 {
    let whole = gl5(g, lo, hi);
    adaptive_gl_rec(g, lo, hi, whole, tol, depth)
}

fn adaptive_gl_rec(
    g: &dyn Fn(f64) -> f64,
    lo: f64,
    hi: f64,
    whole: f64,
    tol: f64,
    depth: u32,
) -> f64 {
    let mid = 0.5 * (lo + hi);
    let left = gl5(g, lo, mid);
    let right = gl5(g, mid, hi);
    if depth == 0 || (left + right - whole).abs() <= tol {
        return left + right;
    }
    adaptive_gl_rec(g, lo, mid, left, 0.5 * tol, depth - 1)
        + adaptive_gl_rec(g, mid, hi, right, 0.5 * tol, depth - 1)
}

fn gl5(g: &dyn Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    const X: [f64; 5] = [
        0.0,
        0.538_469_310_105_683_1,
        -0.538_469_310_105_683_1,
        0.906_179_845_938_664,
        -0.906_179_845_938_664,
    ];
    const W: [f64; 5] = [
        0.568_888_888_888_888_9,
        0.478_628_670_499_366_5,
        0.478_628_670_499_366_5,
        0.236_926_885_056_189_1,
        0.236_926_885_056_189_1,
    ];
    let (c, h) = (0.5 * (lo + hi), 0.5 * (hi - lo));
    X.iter().zip(W).map(|(x, w)| w * g(c + h * x)).sum::<f64>() * h
}

/// U(x_i) = W(x_i)/P0 on the grid x_i = i h, i = 0..=n (h = d/n), from
/// Takács' equation for the workload found by arrivals, cut at d:
/// W(x) = P0 + λ ∫_0^x W(y) B̄(x − y) dy for 0 ≤ x ≤ d (\[BBH\]; for d = ∞
/// this is M/G/1's, \[Kleinrock\] ch. 5). Product integration: W linear on
/// each cell, the kernel's cell moments A\[m\], C\[m\] integrated adaptively,
/// so the jumps of B̄ lose no order. Rescaled as it grows (`one` is the
/// constant term): returns (U, one). None if λ h is too coarse.
fn takacs_grid(
    lambda: f64,
    surv: &dyn Fn(f64) -> f64,
    d: f64,
    n: usize,
) -> Option<(Vec<f64>, f64)> {
    let h = d / n as f64;
    // a[m] = (1/h) ∫_{(m-1)h}^{mh} (u - (m-1)h) Bbar(u) du, c[m] = (1/h) ∫ (mh - u) Bbar(u) du.
    let mut a = vec![0.0; n + 1];
    let mut c = vec![0.0; n + 1];
    for m in 1..=n {
        let lo = (m - 1) as f64 * h;
        let hi = m as f64 * h;
        let tol = 1e-15 * h;
        a[m] = adaptive_gl(&|u: f64| (u - lo) * surv(u), lo, hi, tol * h, 48) / h;
        c[m] = adaptive_gl(&|u: f64| (hi - u) * surv(u), lo, hi, tol * h, 48) / h;
    }
    let diag = 1.0 - lambda * c[1];
    if diag <= 0.25 {
        return None;
    }
    let mut u = vec![0.0; n + 1];
    let mut one = 1.0_f64;
    u[0] = 1.0;
    for i in 1..=n {
        // sum_{m=1..i} u[i-m] a[m] + sum_{m=2..i} u[i-m+1] c[m]
        let mut acc = 0.0;
        for m in 1..=i {
            acc += u[i - m] * a[m];
        }
        for m in 2..=i {
            acc += u[i - m + 1] * c[m];
        }
        u[i] = (one + lambda * acc) / diag;
        if u[i] > 1e200 {
            for v in u.iter_mut().take(i + 1) {
                *v *= 1e-200;
            }
            one *= 1e-200;
        }
        if !u[i].is_finite() {
            return None;
        }
    }
    Some((u, one))
}

/// The M/G/1+D quantities from a grid of U = W/P0 (see [`takacs_grid`]):
/// (p_abandon, E\[V | V ≤ d\], E\[min(V, d)\], P(V > 0 | V ≤ d), P(V > 0)),
/// and the CDF W on the grid.
fn mg1_det_from_grid(u: &[f64], one: f64, rho: f64, h: f64) -> ([f64; 5], Vec<f64>) {
    let n = u.len() - 1;
    // Work balance: 1 - P0 = rho W(d), so P0 = one / (one + rho U(d)).
    let denom = one + rho * u[n];
    let w: Vec<f64> = u.iter().map(|x| x / denom).collect();
    let wd = w[n];
    let p0 = w[0];
    // Trapezoid = the exact integral of the piecewise-linear W.
    let trap = |f: &dyn Fn(f64) -> f64| -> f64 {
        let mut s = 0.5 * (f(w[0]) + f(w[n]));
        for x in &w[1..n] {
            s += f(*x);
        }
        s * h
    };
    let served_excess = trap(&|x| wd - x);
    let all = trap(&|x| 1.0 - x);
    (
        [1.0 - wd, served_excess / wd, all, (wd - p0) / wd, 1.0 - p0],
        w,
    )
}

/// M/G/1+D: Poisson arrivals `lambda`, one server with service survival
/// function B̄ = `service_survival` (P(S > x)) and mean `mean_service`,
/// deterministic patience `d` (\[BBH\]). The virtual wait V (the workload
/// found by arrivals, PASTA) has an atom P0 at 0 and a density f with
/// f(x) = λ P0 B̄(x) + λ ∫_0^{min(x,d)} f(y) B̄(x−y) dy (work enters only
/// when V ≤ d). Integrated once, its CDF W satisfies Takács' equation
/// W(x) = P0 + λ ∫_0^x W(y) B̄(x−y) dy on \[0, d\], solved on a grid (see
/// `takacs_grid`) at two resolutions and Richardson-extrapolated; the work
/// balance 1 − P0 = λ E\[S\] W(d) (the server is busy exactly when V > 0,
/// and work arrives at rate λ E\[S\] P(V ≤ d)) fixes P0 without the density
/// above d. Then p_abandon = 1 − W(d), E\[V 1(V ≤ d)\] = ∫_0^d (W(d) − W) and
/// E\[min(V, d)\] = ∫_0^d (1 − W).
///
/// Any λ > 0 (stable with patience). Tested to 1e-6 relative (exponential
/// service against [`mm1_det_patience`], deterministic service against
/// Pollaczek–Khinchine and the exact M/D/1 law). Costs O(n²) with n ≤ 12288
/// grid cells: at least 64 per mean service and per mean interarrival time
/// over \[0, d\], so beyond d ≈ 96 max(E\[S\], 1/λ) the grid coarsens and
/// the accuracy degrades (as h²). p_abandon is 1 − W(d) (absolute, not
/// relative, accuracy when it is tiny). None for invalid inputs (λ, E\[S\]
/// not positive and finite, d negative or not finite) or when λ h is too
/// large for the grid cap.
pub fn mg1_det_patience(
    lambda: f64,
    service_survival: impl Fn(f64) -> f64,
    mean_service: f64,
    d: f64,
) -> Option<Impatience> {
    if !(pos_finite(lambda) && pos_finite(mean_service) && d.is_finite() && d >= 0.0) {
        return None;
    }
    let rho = lambda * mean_service;
    if d == 0.0 {
        // Served only when the server is idle: M/G/1/1, P0 = 1/(1 + rho).
        let p0 = 1.0 / (1.0 + rho);
        return Some(Impatience {
            p_abandon: 1.0 - p0,
            mean_wait_served: 0.0,
            mean_wait_all: 0.0,
            p_wait_served: 0.0,
            p_delay: 1.0 - p0,
            mean_queue: 0.0,
            served_tail: ServedTail::Table {
                step: 0.0,
                tail: vec![0.0],
            },
        });
    }
    let per_time = MG1_CELLS_PER_TIME * d * (1.0 / mean_service).max(lambda);
    let n = (per_time.ceil().max(MG1_MIN_CELLS as f64)).min(MG1_MAX_CELLS as f64) as usize;
    let surv = |x: f64| service_survival(x);
    let (u1, one1) = takacs_grid(lambda, &surv, d, n)?;
    let (u2, one2) = takacs_grid(lambda, &surv, d, 2 * n)?;
    let h = d / n as f64;
    let (q1, w1) = mg1_det_from_grid(&u1, one1, rho, h);
    let (q2, w2) = mg1_det_from_grid(&u2, one2, rho, 0.5 * h);
    let ext = |a: f64, b: f64| (4.0 * b - a) / 3.0;
    let q: Vec<f64> = q1.iter().zip(q2).map(|(a, b)| ext(*a, b)).collect();
    let wd = 1.0 - q[0];
    let tail: Vec<f64> = (0..=n)
        .map(|i| {
            let w = ext(w1[i], w2[2 * i]);
            ((wd - w) / wd).clamp(0.0, 1.0)
        })
        .collect();
    let nonneg = |x: f64| x.max(0.0);
    Some(Impatience {
        p_abandon: nonneg(q[0]),
        mean_wait_served: nonneg(q[1]),
        mean_wait_all: nonneg(q[2]),
        p_wait_served: q[3].clamp(0.0, 1.0),
        p_delay: q[4].clamp(0.0, 1.0),
        mean_queue: lambda * nonneg(q[2]),
        served_tail: ServedTail::Table { step: h, tail },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{md1_wait_cdf, mmc_wait_quantile, pollaczek_khinchine_mean_wait};

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / a.abs().max(b.abs()).max(1e-300)
    }

    fn assert_rel(what: &str, a: f64, b: f64, tol: f64) {
        assert!(rel(a, b) <= tol, "{what}: {a} vs {b} (rel {})", rel(a, b));
    }

    fn assert_valid(i: &Impatience) {
        for p in [i.p_abandon, i.p_wait_served, i.p_delay] {
            assert!((0.0..=1.0).contains(&p), "{i:?}");
        }
        for m in [i.mean_wait_served, i.mean_wait_all] {
            assert!(m.is_finite() && m >= 0.0, "{i:?}");
        }
    }

    /// splitmix64: a fixed-seed generator for the in-test simulations.
    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn exp(&mut self, rate: f64) -> f64 {
            -self.uniform().ln() / rate
        }
    }

    /// What the simulation measures: (p_abandon, E[V | served], E[min(V, tau)],
    /// P(V > 0 | served), P(V > t | served)).
    struct Sim {
        p_abandon: f64,
        mean_wait_served: f64,
        mean_wait_all: f64,
        p_wait_served: f64,
        p_gt: f64,
    }

    /// FCFS c-server queue with abandonment (Kiefer–Wolfowitz: the next
    /// served customer takes the earliest free server; abandoners take
    /// nothing), Poisson arrivals, the given service and patience draws.
    fn simulate(
        lambda: f64,
        servers: usize,
        customers: usize,
        t_gt: f64,
        mut service: impl FnMut(&mut Rng) -> f64,
        mut patience: impl FnMut(&mut Rng) -> f64,
    ) -> Sim {
        let mut rng = Rng(12345);
        let mut free = vec![0.0_f64; servers];
        let mut now = 0.0;
        let warm = customers / 10;
        let (mut ab, mut served, mut w_served, mut w_all, mut delayed, mut gt) =
            (0usize, 0usize, 0.0, 0.0, 0usize, 0usize);
        for n in 0..customers + warm {
            now += rng.exp(lambda);
            let (idx, first) =
                free.iter().enumerate().fold(
                    (0, f64::INFINITY),
                    |b, (i, &f)| if f < b.1 { (i, f) } else { b },
                );
            let v = (first - now).max(0.0);
            let tau = patience(&mut rng);
            let s = service(&mut rng);
            let count = n >= warm;
            if v <= tau {
                free[idx] = first.max(now) + s;
                if count {
                    served += 1;
                    w_served += v;
                    w_all += v;
                    delayed += usize::from(v > 0.0);
                    gt += usize::from(v > t_gt);
                }
            } else if count {
                ab += 1;
                w_all += tau;
            }
        }
        let total = customers as f64;
        Sim {
            p_abandon: ab as f64 / total,
            mean_wait_served: w_served / served as f64,
            mean_wait_all: w_all / total,
            p_wait_served: delayed as f64 / served as f64,
            p_gt: gt as f64 / served as f64,
        }
    }

    fn assert_sim(i: &Impatience, s: &Sim, t_gt: f64, tol: f64) {
        assert_rel("p_abandon", i.p_abandon, s.p_abandon, tol);
        assert_rel(
            "mean_wait_served",
            i.mean_wait_served,
            s.mean_wait_served,
            tol,
        );
        assert_rel("mean_wait_all", i.mean_wait_all, s.mean_wait_all, tol);
        assert_rel("p_wait_served", i.p_wait_served, s.p_wait_served, tol);
        let p = i.p_served_wait_gt(t_gt).unwrap();
        assert_rel("p_served_wait_gt", p, s.p_gt, 2.0 * tol);
    }

    const ERLANG_A_CASES: [(f64, f64, f64, u32); 7] = [
        (0.9, 1.0, 0.5, 1),
        (12.0, 1.0, 0.3, 10),
        (95.0, 1.0, 2.0, 100),
        (1.0e4, 1.0, 1.0, 10_000),
        (1.02e4, 1.0, 0.1, 10_000),
        (9.0e3, 1.0, 0.05, 10_000),
        (1.0e4, 1.0, 10.0, 1),
    ];

    /// Little's law for those who abandon: the abandonment rate λ p_abandon
    /// equals θ E[queue length] (each of those waiting leaves at rate θ). The
    /// two sides come from different sums (the products L_n against the
    /// queue lengths n − c), so this checks the offered-wait formulas against
    /// the chain itself; c and λ/μ up to 10^4 and an overloaded single server
    /// stay finite.
    #[test]
    fn erlang_a_little_law_for_abandonment() {
        let clock = std::time::Instant::now();
        for (lambda, mu, theta, c) in ERLANG_A_CASES {
            let s = erlang_a_sums(lambda, mu, theta, c).unwrap();
            assert_rel(
                &format!("{lambda} {mu} {theta} {c}"),
                lambda * s.abandon,
                theta * s.queue,
                1e-10,
            );
            let i = erlang_a(lambda, mu, theta, c).unwrap();
            assert_valid(&i);
            // E[min(V, tau)] = E[Q] / lambda (Little on the queue).
            let total = s.lower + s.delay;
            assert_rel("Little", i.mean_wait_all, s.queue / total / lambda, 1e-10);
            assert_rel("E[Q]", i.mean_queue, lambda * i.mean_wait_all, 1e-10);
            // Served + abandoned = all.
            let served = (s.lower + s.served_wait) / total;
            assert_rel("mass", served + i.p_abandon, 1.0, 1e-12);
        }
        assert!(clock.elapsed().as_secs_f64() < 2.0);
    }

    /// The served wait's quantile inverts its tail, and is Erlang C's
    /// (erlang.rs) without patience.
    #[test]
    fn served_wait_quantiles() {
        let cases = [
            erlang_a(4.0, 1.0, 0.5, 3).unwrap(),
            mmc_det_patience(3.3, 1.0, 3, 0.8).unwrap(),
            mg1_det_patience(1.5, |x| (-x).exp(), 1.0, 2.0).unwrap(),
            erlang_a(8.0, 1.0, 0.0, 10).unwrap(),
        ];
        for i in &cases {
            for p in [0.5, 0.9, 0.99] {
                let q = i.served_wait_quantile(p).unwrap();
                if i.p_wait_served <= 1.0 - p {
                    assert_eq!(q, 0.0);
                    continue;
                }
                let tail = i.p_served_wait_gt(q).unwrap();
                assert!((tail - (1.0 - p)).abs() < 1e-9, "{p}: {q} {tail} {i:?}");
            }
            assert_eq!(i.served_wait_quantile(1.0), None);
        }
        let q = cases[3].served_wait_quantile(0.99).unwrap();
        assert_rel(
            "Erlang C p99",
            q,
            mmc_wait_quantile(10, 8.0, 1.0, 0.99),
            1e-12,
        );
    }

    /// θ → 0 is Erlang C (erlang.rs): P(wait), its mean and tail.
    #[test]
    fn erlang_a_small_theta_is_erlang_c() {
        for (lambda, mu, c) in [(0.7, 1.0, 1), (8.0, 1.0, 10), (90.0, 1.0, 100)] {
            let a = erlang_a(lambda, mu, 1e-9, c).unwrap();
            let pc = erlang_c(c, lambda / mu);
            let wc = mmc_mean_wait(c, lambda, mu);
            assert_rel("p_delay", a.p_delay, pc, 1e-6);
            assert_rel("p_wait_served", a.p_wait_served, pc, 1e-6);
            assert_rel("mean_wait_served", a.mean_wait_served, wc, 1e-6);
            assert_rel("mean_wait_all", a.mean_wait_all, wc, 1e-6);
            assert!(a.p_abandon < 1e-6);
            let decay = f64::from(c) * mu - lambda;
            for t in [0.5 / decay, 2.0 / decay] {
                let p = a.p_served_wait_gt(t).unwrap();
                assert_rel("tail", p, pc * (-decay * t).exp(), 1e-5);
            }
            // theta = 0 exactly: Erlang C itself; unstable without patience.
            let z = erlang_a(lambda, mu, 0.0, c).unwrap();
            assert_eq!(z.p_delay, pc);
            assert_eq!(z.mean_wait_served, wc);
            assert!(erlang_a(f64::from(c) * mu, mu, 0.0, c).is_none());
        }
    }

    /// Simpson's rule on [lo, hi] with n (even) intervals.
    fn simpson(f: impl Fn(f64) -> f64, lo: f64, hi: f64, n: usize) -> f64 {
        let h = (hi - lo) / n as f64;
        let mut s = f(lo) + f(hi);
        for i in 1..n {
            let w = if i % 2 == 1 { 4.0 } else { 2.0 };
            s += w * f(lo + i as f64 * h);
        }
        s * h / 3.0
    }

    /// Independent of the chain: the offered wait's density of M/M/c+G,
    /// f(x) = λ π_{c−1} exp(λ ∫_0^x Ḡ − c μ x) with Ḡ(u) = e^{−θu}
    /// ([BBH]), normalised with the atom π_{c−1}/B(c−1, λ/μ) and integrated
    /// numerically; both branches of the incomplete-gamma tail.
    #[test]
    fn erlang_a_matches_offered_wait_density() {
        for (lambda, mu, theta, c) in [(0.8, 1.0, 0.2, 1), (4.0, 1.0, 0.5, 3), (40.0, 1.0, 0.5, 3)]
        {
            let cmu = f64::from(c) * mu;
            let y = lambda / theta;
            let g = |x: f64| (y * (1.0 - (-theta * x).exp()) - cmu * x).exp();
            let hi = 80.0 / cmu + 2.0 * (lambda / cmu).ln().max(0.0) / theta + 10.0;
            let n = 400_000;
            let j = simpson(g, 0.0, hi, n);
            let p = 1.0 / (1.0 / erlang_b(c - 1, lambda / mu) + lambda * j);
            let ab = lambda * p * simpson(|x| g(x) * -(-theta * x).exp_m1(), 0.0, hi, n);
            let served = 1.0 - ab;
            let wsv = lambda * p * simpson(|x| x * g(x) * (-theta * x).exp(), 0.0, hi, n);
            let a = erlang_a(lambda, mu, theta, c).unwrap();
            let what = format!("{lambda} {mu} {theta} {c}");
            assert_rel(&what, a.p_abandon, ab, 1e-9);
            assert_rel(&what, a.p_delay, lambda * p * j, 1e-9);
            assert_rel(&what, a.mean_wait_served, wsv / served, 1e-9);
            for t in [0.1, 0.7, 2.5] {
                let tail = lambda * p * simpson(|x| g(x) * (-theta * x).exp(), t, hi, n) / served;
                assert_rel(&what, a.p_served_wait_gt(t).unwrap(), tail, 1e-8);
            }
        }
    }

    /// A small fixed-seed simulation of M/M/c+M (and an overloaded one).
    #[test]
    fn erlang_a_monte_carlo() {
        for (lambda, mu, theta, c) in [(2.5, 1.0, 0.5, 2), (3.0, 1.0, 1.0, 1)] {
            let t = 0.5;
            let s = simulate(lambda, c, 400_000, t, |r| r.exp(mu), |r| r.exp(theta));
            let a = erlang_a(lambda, mu, theta, c as u32).unwrap();
            assert_sim(&a, &s, t, 0.02);
        }
    }

    #[test]
    fn mm1_det_patience_closed_form() {
        for (lambda, mu, d) in [
            (0.5, 1.0, 1.0),
            (0.9, 1.0, 3.0),
            (2.0, 1.0, 1.5),
            (1.0, 1.0, 2.0),
        ] {
            let m = mm1_det_patience(lambda, mu, d).unwrap();
            assert_valid(&m);
            let e = (-(mu - lambda) * d).exp();
            let p0 = if lambda == mu {
                1.0 / (2.0 + mu * d)
            } else {
                mu * (mu - lambda) / (mu * mu - lambda * lambda * e)
            };
            assert_rel("P0", 1.0 - m.p_delay, p0, 1e-13);
            assert_rel("p_abandon", m.p_abandon, p0 * lambda / mu * e, 1e-13);
            // Work balance: the server is busy (V > 0) as often as the
            // admitted load lambda E[S] P(V <= d).
            assert_rel("work", m.p_delay, lambda / mu * (1.0 - m.p_abandon), 1e-13);
        }
        // d = 0: blocked when busy, Erlang B(1, a); d = inf: M/M/1.
        let z = mm1_det_patience(0.5, 1.0, 0.0).unwrap();
        assert_rel("d = 0", z.p_abandon, erlang_b(1, 0.5), 1e-15);
        let inf = mm1_det_patience(0.5, 1.0, f64::INFINITY).unwrap();
        assert_rel("d = inf", inf.mean_wait_served, 1.0, 1e-15);
        assert!(mm1_det_patience(1.0, 1.0, f64::INFINITY).is_none());
        for bad in [
            (0.0, 1.0, 1.0),
            (1.0, -1.0, 1.0),
            (1.0, 1.0, -1.0),
            (1.0, 1.0, f64::NAN),
        ] {
            assert!(mm1_det_patience(bad.0, bad.1, bad.2).is_none());
        }
    }

    /// Every field agrees to `tol` relative (1e-30 absolute).
    fn assert_same(what: &str, a: &Impatience, b: &Impatience, tol: f64) {
        let pairs = [
            (a.p_abandon, b.p_abandon),
            (a.mean_wait_served, b.mean_wait_served),
            (a.mean_wait_all, b.mean_wait_all),
            (a.p_wait_served, b.p_wait_served),
            (a.p_delay, b.p_delay),
        ];
        for (x, y) in pairs {
            let ok = (x - y).abs() <= tol * x.abs().max(y.abs()) + 1e-30;
            assert!(ok, "{what}: {x} vs {y}\n{a:?}\n{b:?}");
        }
    }

    /// The numerical M/G/1+D with exponential service against the closed
    /// form, under, at and above λ = μ; the served tail at a few points.
    #[test]
    fn mg1_det_patience_exponential_matches_mm1() {
        for (lambda, mu, d) in [
            (0.8, 1.0, 2.0),
            (1.5, 1.0, 1.0),
            (0.3, 2.0, 0.7),
            (1.0, 1.0, 3.0),
        ] {
            let g = mg1_det_patience(lambda, |x| (-mu * x).exp(), 1.0 / mu, d).unwrap();
            let m = mm1_det_patience(lambda, mu, d).unwrap();
            let what = format!("{lambda} {mu} {d}");
            assert_valid(&g);
            assert_same(&what, &g, &m, 1e-6);
            for t in [0.0, 0.1 * d, 0.5 * d, 0.93 * d] {
                let (pg, pm) = (
                    g.p_served_wait_gt(t).unwrap(),
                    m.p_served_wait_gt(t).unwrap(),
                );
                assert!(
                    (pg - pm).abs() <= 1e-6 * pm + 1e-9,
                    "{what} t {t}: {pg} vs {pm}"
                );
            }
            assert_eq!(g.p_served_wait_gt(1.01 * d), Some(0.0));
            assert_eq!(m.p_served_wait_gt(1.01 * d), Some(0.0));
        }
    }

    /// Large d: Pollaczek–Khinchine's mean (mg1.rs) for M/M/1 and M/D/1, and
    /// the exact M/D/1 distribution for the served tail.
    #[test]
    fn mg1_det_patience_large_d_is_pollaczek_khinchine() {
        let lambda = 0.5;
        let m = mg1_det_patience(lambda, |x| (-x).exp(), 1.0, 40.0).unwrap();
        let pk = pollaczek_khinchine_mean_wait(lambda, 1.0, 1.0);
        assert_rel("M/M/1", m.mean_wait_served, pk, 1e-6);
        assert_rel("M/M/1 all", m.mean_wait_all, pk, 1e-6);
        assert!(m.p_abandon < 1e-8);
        let det = |x: f64| if x < 1.0 { 1.0 } else { 0.0 };
        let d = mg1_det_patience(lambda, det, 1.0, 40.0).unwrap();
        let pk = pollaczek_khinchine_mean_wait(lambda, 1.0, 0.0);
        assert_rel("M/D/1", d.mean_wait_served, pk, 1e-6);
        assert_rel("M/D/1 P(W>0)", d.p_wait_served, lambda, 1e-6);
        for t in [0.5, 1.0, 1.5, 3.2] {
            let exact = 1.0 - md1_wait_cdf(lambda, 1.0, t).unwrap();
            let p = d.p_served_wait_gt(t).unwrap();
            assert!((p - exact).abs() < 1e-6, "t {t}: {p} vs {exact}");
        }
    }

    /// λ ≥ 1/E[S] still has an answer (stable with patience), here
    /// deterministic service against a simulation of V ↦ max(0, V + S·1(V ≤ d) − A).
    #[test]
    fn mg1_det_patience_overloaded_is_valid() {
        let det = |x: f64| if x < 1.0 { 1.0 } else { 0.0 };
        for (lambda, d) in [(1.0, 2.0), (1.5, 1.5), (4.0, 0.6)] {
            let g = mg1_det_patience(lambda, det, 1.0, d).unwrap();
            assert_valid(&g);
            let t = 0.5 * d;
            let s = simulate(lambda, 1, 400_000, t, |_| 1.0, |_| d);
            assert_sim(&g, &s, t, 0.02);
        }
        // d = 0: M/G/1/1.
        let z = mg1_det_patience(2.0, det, 1.0, 0.0).unwrap();
        assert_rel("d = 0", z.p_abandon, 2.0 / 3.0, 1e-15);
        assert_eq!(z.p_served_wait_gt(0.0), Some(0.0));
        for bad in [
            (0.0, 1.0, 1.0),
            (1.0, 0.0, 1.0),
            (1.0, 1.0, f64::INFINITY),
            (1.0, 1.0, -1.0),
        ] {
            assert!(mg1_det_patience(bad.0, det, bad.1, bad.2).is_none());
        }
    }

    /// M/M/c+D: d = 0 is Erlang B, d = ∞ (and large d) Erlang C, and a
    /// fixed-seed simulation in between, below and above c μ.
    #[test]
    fn mmc_det_patience_limits_and_monte_carlo() {
        let (mu, c) = (1.0, 3);
        for lambda in [2.4, 3.3] {
            let z = mmc_det_patience(lambda, mu, c, 0.0).unwrap();
            assert_rel("Erlang B", z.p_abandon, erlang_b(c, lambda / mu), 1e-13);
            let d = 0.8;
            let m = mmc_det_patience(lambda, mu, c, d).unwrap();
            assert_valid(&m);
            let t = 0.3;
            let s = simulate(lambda, c as usize, 400_000, t, |r| r.exp(mu), |_| d);
            assert_sim(&m, &s, t, 0.02);
        }
        let big = mmc_det_patience(2.4, mu, c, 200.0).unwrap();
        let inf = mmc_det_patience(2.4, mu, c, f64::INFINITY).unwrap();
        assert_same("large d", &big, &inf, 1e-12);
        assert_rel("Erlang C", inf.p_delay, erlang_c(c, 2.4), 1e-15);
        // Many servers, heavy overload: finite.
        let h = mmc_det_patience(2.0e4, 1.0, 10_000, 5.0).unwrap();
        assert_valid(&h);
        assert!(h.p_abandon > 0.4 && h.p_abandon < 0.6, "{h:?}");
    }
}
