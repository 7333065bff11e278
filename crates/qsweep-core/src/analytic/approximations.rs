//! Approximate baselines: Krämer–Langenbach-Belz, Allen–Cunneen, the
//! exponential-tail p99, and the power-of-d mean-field limit.
//!
//! Why this module exists: most simulated configurations have no exact
//! formula, but a named approximation still tells the reader roughly where
//! the number should sit. Everything here is labelled `approx:` in the CSV
//! and is a sanity check, not a regression test.
//!
//! The references (\[Kleinrock\], \[GH\], ...) are listed in the docs of
//! [`crate::analytic`].

use super::{mmc_mean_wait, P99};

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
