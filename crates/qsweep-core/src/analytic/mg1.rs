//! M/G/1: the Pollaczek–Khinchine mean and the exact M/D/1 distribution.
//!
//! Why this module exists: Poisson input to one server is exact for any
//! service law with a finite second moment (Pollaczek–Khinchine), and for
//! deterministic service the whole waiting-time distribution is known, so
//! the p99 is exact too. The M/D/1 tables are built from positive terms only
//! (no cancellation), which is the subtle part and gets its own file.
//!
//! The references (\[Kleinrock\], \[GH\], ...) are listed in the docs of
//! [`crate::analytic`].

use super::pos_finite;

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
pub(super) struct Md1Table {
    rho: f64,
    /// Abar_m = P(Poisson(rho) >= m), m = 0..; truncated where it drops below 1e-30.
    abar: Vec<f64>,
    /// p_j = P(L = j).
    pub(super) prob: Vec<f64>,
    /// Q_j = P(L <= j).
    pub(super) cum: Vec<f64>,
}

impl Md1Table {
    pub(super) fn new(rho: f64) -> Self {
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
    pub(super) fn extend_to(&mut self, k: usize) -> bool {
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
