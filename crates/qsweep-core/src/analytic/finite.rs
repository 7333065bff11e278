//! Finite capacity: M/M/c/K (Erlang B at K = c, M/M/1/K at c = 1).
//!
//! Why this module exists: a bounded queue is always stable, so it is the
//! exact baseline of a sweep with a capacity limit; requests that find K in
//! the system are blocked (lost), the rest wait FCFS.
//!
//! References: \[Kleinrock\] ch. 3 (M/M/1/K, M/M/m/m and Erlang's loss
//! formula), \[GH\] ch. 2 (M/M/c/K: the truncated birth–death chain, the
//! waiting time of admitted customers), as listed in [`crate::analytic`].

use super::erlang::erlang_b;
use super::impatience::tail_quantile;
use super::pos_finite;

/// M/M/c/K stationary performance, as seen by arrivals (PASTA).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finite {
    /// P(an arrival finds K in the system and is lost) = π_K.
    pub p_block: f64,
    /// E\[W | admitted\]: the mean FCFS wait of admitted requests.
    pub mean_wait: f64,
    /// P(W > 0 | admitted).
    pub p_wait: f64,
    /// E\[N\]: the mean number in system (queue + service).
    pub mean_in_system: f64,
    /// E\[N_q\]: the mean number waiting.
    pub mean_queue: f64,
    /// The inputs, for [`Finite::p_wait_gt`].
    pub lambda: f64,
    pub mu: f64,
    pub servers: u32,
    pub capacity: u32,
}

/// Most waiting places K − c that the sums may visit without the terms
/// becoming negligible (ρ extremely close to 1 with a huge K).
const MAX_TERMS: u64 = 20_000_000;

/// ln Σ e^{a} + e^{b}.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let m = a.max(b);
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// Σ_{k=0}^{q−1} e^{k r} and Σ (k+1) e^{k r}, both scaled by e^{−scale}
/// (scale = the largest exponent, (q−1) r^+): (scale, sum0, sum1). Summed
/// from the largest term down, stopping when the rest (bounded by a
/// geometric series) is below 1e-18 of the sums. None past [`MAX_TERMS`].
fn geometric_sums(q: u64, r: f64) -> Option<(f64, f64, f64)> {
    if q == 0 {
        return Some((0.0, 0.0, 0.0));
    }
    let qf = q as f64;
    if r == 0.0 {
        return Some((0.0, qf, qf * (qf + 1.0) / 2.0));
    }
    let scale = if r > 0.0 { (qf - 1.0) * r } else { 0.0 };
    let ratio = (-r.abs()).exp();
    let (mut s0, mut s1) = (0.0, 0.0);
    for i in 0..q {
        if i > MAX_TERMS {
            return None;
        }
        let k = if r > 0.0 { q - 1 - i } else { i } as f64;
        let t = (k * r - scale).exp();
        s0 += t;
        s1 += (k + 1.0) * t;
        // The rest: at most t ratio / (1 - ratio) in sum0, and times at most
        // q in sum1.
        let rest = t * ratio / (1.0 - ratio);
        if rest <= 1e-18 * s0 && rest * qf <= 1e-18 * s1 {
            break;
        }
    }
    Some((scale, s0, s1))
}

/// M/M/c/K: Poisson arrivals `lambda`, `servers` = c exponential servers of
/// rate `mu`, at most `capacity` = K ≥ c requests in the system (queue and
/// service), FCFS (\[Kleinrock\] ch. 3; \[GH\] ch. 2). Stable for any λ > 0.
///
/// π_n ∝ a^n/n! for n ≤ c (a = λ/μ) and π_c ρ^{n−c} for c ≤ n ≤ K
/// (ρ = a/c). Everything is relative to π_c and in log space: the states up
/// to c sum to π_c / B(c, a) (Erlang B, by its stable recurrence), the
/// queue's to geometric sums, so c and K up to 10^5 and beyond neither
/// overflow nor lose the blocking probability. With q = K − c:
/// p_block = π_K / Z; p_wait = Σ_{k<q} π_{c+k} / (1 − π_K); an admitted
/// arrival finding c + k waits Erlang(k + 1, c μ), so
/// mean_wait = Σ_{k<q} (k+1) π_{c+k} / (c μ (1 − π_K)); E\[N_q\] =
/// λ (1 − p_block) mean_wait (Little) and E\[N\] = E\[N_q\] + λ (1 −
/// p_block)/μ (Little on the servers). K = c gives Erlang B and no wait.
///
/// None for invalid inputs (λ, μ not positive and finite, c = 0, K < c) or
/// when ρ is so close to 1 that the sums need more than 2·10^7 terms.
pub fn mmck(lambda: f64, mu: f64, servers: u32, capacity: u32) -> Option<Finite> {
    if !(pos_finite(lambda) && pos_finite(mu)) || servers == 0 || capacity < servers {
        return None;
    }
    let cmu = f64::from(servers) * mu;
    let a = lambda / mu;
    let q = u64::from(capacity - servers);
    let r = (lambda / cmu).ln();
    let b = erlang_b(servers, a);
    // ln of the states below c, relative to pi_c: ln((1 - B)/B).
    let ln_lower = if b == 0.0 {
        f64::INFINITY
    } else {
        (-b).ln_1p() - b.ln()
    };
    let (scale, s0, s1) = geometric_sums(q, r)?;
    // ln sum_{k<q} rho^k and ln sum_{k<q} (k+1) rho^k.
    let ln_g = if q == 0 {
        f64::NEG_INFINITY
    } else {
        scale + s0.ln()
    };
    let ln_m = if q == 0 {
        f64::NEG_INFINITY
    } else {
        scale + s1.ln()
    };
    let ln_block = q as f64 * r; // pi_K / pi_c
    let ln_admitted = log_add(ln_lower, ln_g); // sum_{n<K} pi_n / pi_c
    let ln_total = log_add(ln_admitted, ln_block);
    let base = Finite {
        p_block: 0.0,
        mean_wait: 0.0,
        p_wait: 0.0,
        mean_in_system: 0.0,
        mean_queue: 0.0,
        lambda,
        mu,
        servers,
        capacity,
    };
    if ln_lower == f64::INFINITY {
        // The servers are never all busy (to f64 precision).
        return Some(Finite {
            mean_in_system: a,
            ..base
        });
    }
    let p_block = (ln_block - ln_total).exp();
    let admitted = (ln_admitted - ln_total).exp();
    let p_wait = (ln_g - ln_admitted).exp();
    let mean_wait = (ln_m - ln_admitted).exp() / cmu;
    let throughput = lambda * admitted;
    let mean_queue = throughput * mean_wait;
    Some(Finite {
        p_block,
        mean_wait,
        p_wait,
        mean_in_system: mean_queue + throughput / mu,
        mean_queue,
        ..base
    })
}

impl Finite {
    /// The p-quantile of the admitted requests' wait (e.g. p = 0.99), from
    /// [`Finite::p_wait_gt`] by bisection; 0 where at most 1 − p of them
    /// wait. None for p outside \[0, 1).
    pub fn wait_quantile(&self, p: f64) -> Option<f64> {
        tail_quantile(|t| self.p_wait_gt(t), p, self.mean_wait)
    }

    /// P(W > t | admitted) (\[GH\] ch. 2): an admitted arrival finding c + k
    /// waits Erlang(k + 1, c μ), so with x = c μ t,
    /// P(W > t) = Σ_{k<q} w_k P(Poisson(x) ≤ k) = Σ_{j<q} P(Poisson(x) = j) T_j,
    /// T_j = Σ_{k=j}^{q−1} w_k = p_wait ρ^j (1 − ρ^{q−j})/((1 − ρ^q)), w_k the
    /// admitted arrival's probability of finding c + k. Positive terms only,
    /// each in log space; O(K − c). t below 0 counts as 0; None for NaN t.
    pub fn p_wait_gt(&self, t: f64) -> Option<f64> {
        if t.is_nan() {
            return None;
        }
        let t = t.max(0.0);
        let q = u64::from(self.capacity - self.servers);
        if t == 0.0 || self.p_wait == 0.0 || q == 0 {
            return Some(if q == 0 { 0.0 } else { self.p_wait });
        }
        let cmu = f64::from(self.servers) * self.mu;
        let x = cmu * t;
        if x.is_infinite() {
            return Some(0.0);
        }
        let r = (self.lambda / cmu).ln();
        let ln_x = x.ln();
        let qf = q as f64;
        // ln sum_{k=j}^{q-1} rho^k / sum_{k<q} rho^k = j r + ln G(q - j) - ln G(q).
        let ln_geo = |m: f64| -> f64 {
            if r == 0.0 {
                m.ln()
            } else if r < 0.0 {
                (-(m * r).exp_m1()).ln() - (-r.exp_m1()).ln()
            } else {
                (m - 1.0) * r + (-(-m * r).exp_m1()).ln() - (-(-r).exp_m1()).ln()
            }
        };
        let ln_gq = ln_geo(qf);
        let ln_pw = self.p_wait.ln();
        let (mut acc, mut scale) = (0.0_f64, f64::NEG_INFINITY);
        let mut ln_fact = 0.0_f64; // ln j!
        for j in 0..q {
            let jf = j as f64;
            if j > 0 {
                ln_fact += jf.ln();
            }
            let ln_term = jf * ln_x - x - ln_fact + jf * r + ln_geo(qf - jf) - ln_gq;
            if ln_term > scale {
                acc *= (scale - ln_term).exp();
                scale = ln_term;
            }
            acc += (ln_term - scale).exp();
            // Past the Poisson mode both factors fall (T_j decreases in j);
            // stop once the terms are negligible.
            if jf > x && ln_term - scale < -45.0 {
                break;
            }
        }
        Some((ln_pw + scale + acc.ln()).exp().min(self.p_wait))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{erlang_c, mmc_mean_wait, mmc_wait_quantile};

    fn assert_rel(what: &str, a: f64, b: f64, tol: f64) {
        let r = (a - b).abs() / a.abs().max(b.abs()).max(1e-300);
        assert!(r <= tol, "{what}: {a} vs {b} (rel {r})");
    }

    /// M/M/1/K in closed form (\[Kleinrock\] ch. 3): π_K = ρ^K (1 − ρ)/(1 −
    /// ρ^{K+1}) (1/(K+1) at ρ = 1) and E[N] = ρ/(1 − ρ) − (K+1) ρ^{K+1}/(1 −
    /// ρ^{K+1}) (K/2 at ρ = 1).
    #[test]
    fn mm1k_closed_form() {
        for (rho, k) in [(0.7, 10u32), (2.0, 5), (0.3, 1), (1.3, 40), (0.99, 1000)] {
            let f = mmck(rho, 1.0, 1, k).unwrap();
            let kf = f64::from(k);
            let pk = rho.powf(kf) * (1.0 - rho) / (1.0 - rho.powf(kf + 1.0));
            assert_rel("p_block", f.p_block, pk, 1e-12);
            let en =
                rho / (1.0 - rho) - (kf + 1.0) * rho.powf(kf + 1.0) / (1.0 - rho.powf(kf + 1.0));
            assert_rel("E[N]", f.mean_in_system, en, 1e-11);
            // Little's law on the admitted rate.
            assert_rel(
                "Little",
                f.mean_in_system,
                rho * (1.0 - f.p_block) * (f.mean_wait + 1.0),
                1e-12,
            );
        }
        for k in [1u32, 7, 1000] {
            let f = mmck(2.5, 2.5, 1, k).unwrap();
            let kf = f64::from(k);
            assert_rel("rho = 1", f.p_block, 1.0 / (kf + 1.0), 1e-13);
            assert_rel("rho = 1 E[N]", f.mean_in_system, kf / 2.0, 1e-12);
        }
    }

    /// K = c is Erlang B (its recurrence, and the published B(10, 5)).
    #[test]
    fn erlang_b_is_k_equal_c() {
        let f = mmck(5.0, 1.0, 10, 10).unwrap();
        assert!((f.p_block - 0.018_385).abs() < 5e-7, "{}", f.p_block);
        assert_eq!((f.mean_wait, f.p_wait, f.mean_queue), (0.0, 0.0, 0.0));
        assert_eq!(f.p_wait_gt(1.0), Some(0.0));
        assert_rel("E[N]", f.mean_in_system, 5.0 * (1.0 - f.p_block), 1e-14);
        for (c, a) in [(1, 0.5), (30, 25.0), (100, 140.0), (100_000, 99_000.0)] {
            let f = mmck(a, 1.0, c, c).unwrap();
            assert_rel("B", f.p_block, erlang_b(c, a), 1e-12);
        }
    }

    /// Large K is Erlang C (erlang.rs): P(wait), the mean wait and its tail.
    #[test]
    fn large_k_is_erlang_c() {
        for (lambda, c) in [(4.0, 5u32), (0.6, 1), (950.0, 1000)] {
            let f = mmck(lambda, 1.0, c, c + 100_000).unwrap();
            assert!(f.p_block < 1e-300, "{}", f.p_block);
            let pc = erlang_c(c, lambda);
            assert_rel("p_wait", f.p_wait, pc, 1e-10);
            assert_rel(
                "mean_wait",
                f.mean_wait,
                mmc_mean_wait(c, lambda, 1.0),
                1e-10,
            );
            let decay = f64::from(c) - lambda;
            for t in [0.0, 0.3 / decay, 3.0 / decay] {
                let p = f.p_wait_gt(t).unwrap();
                assert_rel("tail", p, pc * (-decay * t).exp(), 1e-9);
            }
        }
    }

    /// Against the chain summed directly (small c and K, plain arithmetic)
    /// and the admitted wait's tail as a mixture of Erlang tails.
    #[test]
    fn against_direct_sums() {
        for (lambda, mu, c, k) in [(2.5, 1.0, 3u32, 8u32), (7.0, 2.0, 2, 6), (0.4, 1.0, 4, 9)] {
            let n_max = k as usize;
            let mut pi = vec![1.0_f64; n_max + 1];
            for n in 1..=n_max {
                let death = f64::from((n as u32).min(c)) * mu;
                pi[n] = pi[n - 1] * lambda / death;
            }
            let z: f64 = pi.iter().sum();
            pi.iter_mut().for_each(|p| *p /= z);
            let f = mmck(lambda, mu, c, k).unwrap();
            let cmu = f64::from(c) * mu;
            let adm = 1.0 - pi[n_max];
            let c = c as usize;
            assert_rel("p_block", f.p_block, pi[n_max], 1e-13);
            let pw: f64 = pi[c..n_max].iter().sum::<f64>() / adm;
            assert_rel("p_wait", f.p_wait, pw, 1e-13);
            let mw: f64 = (c..n_max)
                .map(|n| pi[n] * (n - c + 1) as f64 / cmu)
                .sum::<f64>()
                / adm;
            assert_rel("mean_wait", f.mean_wait, mw, 1e-13);
            let en: f64 = (0..=n_max).map(|n| n as f64 * pi[n]).sum();
            assert_rel("E[N]", f.mean_in_system, en, 1e-13);
            let eq: f64 = (c..=n_max).map(|n| (n - c) as f64 * pi[n]).sum();
            assert_rel("E[Nq]", f.mean_queue, eq, 1e-13);
            for t in [0.2, 1.0, 3.0] {
                // P(Erlang(m, cmu) > t) = P(Poisson(cmu t) < m).
                let x = cmu * t;
                let erlang_tail = |m: usize| {
                    let (mut term, mut s) = ((-x).exp(), 0.0);
                    for j in 0..m {
                        s += term;
                        term *= x / (j + 1) as f64;
                    }
                    s
                };
                let tail: f64 = (c..n_max)
                    .map(|n| pi[n] * erlang_tail(n - c + 1))
                    .sum::<f64>()
                    / adm;
                assert_rel("p_wait_gt", f.p_wait_gt(t).unwrap(), tail, 1e-12);
            }
        }
    }

    /// The quantile inverts the tail, and large K gives Erlang C's.
    #[test]
    fn wait_quantiles() {
        let f = mmck(4.0, 1.0, 5, 5 + 100_000).unwrap();
        let q = f.wait_quantile(0.99).unwrap();
        assert_rel("p99", q, mmc_wait_quantile(5, 4.0, 1.0, 0.99), 1e-9);
        let f = mmck(2.5, 1.0, 3, 8).unwrap();
        for p in [0.6, 0.9, 0.999] {
            let q = f.wait_quantile(p).unwrap();
            assert!((f.p_wait_gt(q).unwrap() - (1.0 - p)).abs() < 1e-10, "{p}");
        }
        assert_eq!(f.wait_quantile(0.1), Some(0.0));
        assert_eq!(
            mmck(5.0, 1.0, 10, 10).unwrap().wait_quantile(0.99),
            Some(0.0)
        );
    }

    /// 10^5 servers and places, heavy overload and invalid inputs.
    #[test]
    fn large_and_invalid() {
        let clock = std::time::Instant::now();
        let f = mmck(1.01e5, 1.0, 100_000, 200_000).unwrap();
        assert!(f.p_block > 0.0 && f.p_block < 0.02, "{f:?}");
        assert!(f.p_wait > 0.9 && f.mean_wait.is_finite(), "{f:?}");
        assert!(f.p_wait_gt(1e-4).unwrap() <= f.p_wait);
        // Overload: throughput c mu, so p_block -> 1 - 1/rho; the queue is
        // nearly full.
        let f = mmck(20.0, 1.0, 10, 100_000).unwrap();
        // ln pi_K / pi_c is about 7e4 here: its rounding costs ~1e-11.
        assert_rel("overload", f.p_block, 0.5, 1e-10);
        assert_rel("full", f.mean_queue, 100_000.0 - 10.0 - 1.0, 1e-9);
        let t = f.mean_wait;
        let p = f.p_wait_gt(t).unwrap();
        assert!(p > 0.4 && p < 0.6, "{p}");
        assert!(clock.elapsed().as_secs_f64() < 2.0);
        assert!(mmck(1.0, 1.0, 2, 1).is_none());
        assert!(mmck(1.0, 1.0, 0, 1).is_none());
        assert!(mmck(0.0, 1.0, 1, 1).is_none());
        assert!(mmck(1.0, f64::NAN, 1, 1).is_none());
        assert_eq!(mmck(1.0, 1.0, 1, 3).unwrap().p_wait_gt(f64::NAN), None);
    }
}
