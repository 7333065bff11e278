//! The exact mean wait of the MMPP/M/1 queue, by the matrix-geometric
//! method.
//!
//! Why this module exists: MMPP arrivals are not a renewal process, so
//! none of the renewal formulas (GI/M/1, Pollaczek–Khinchine,
//! Krämer–Langenbach-Belz, Allen–Cunneen) applies to them, and a simulated
//! bursty queue still needs an exact check. One FCFS server with
//! exponential service fed by a two-phase MMPP is a quasi-birth-death
//! process (\[Neuts81\] ch. 3): the level is the number in system, the phase
//! the MMPP's. With D1 = diag(r) the arrival rates, Q the phase generator
//! and μ the service rate, its blocks are A0 = D1 (up), A1 = Q − D1 − μI
//! (local, level ≥ 1), A2 = μI (down) and B1 = Q − D1 (local, level 0).
//! The stationary law is π_n = π_0 R^n (n ≥ 1), R the minimal nonnegative
//! solution of A0 + R A1 + R² A2 = 0, with π_0 (B1 + R A2) = 0 and π_0
//! (I − R)^{-1} 1 = 1. R comes from G, the minimal solution of A2 + A1 G +
//! A0 G² = 0, computed by logarithmic reduction (\[LR93\], quadratic
//! convergence at any load), as R = A0 (−(A1 + A0 G))^{-1} (\[LR99\] thm.
//! 6.4.1). Then E\[N_q\] = Σ (n − 1) π_n 1 = π_0 R² (I − R)^{-2} 1 and,
//! by Little's law, E\[W\] = E\[N_q\]/λ with λ = π·r.
//!
//! - \[Neuts81\] M. F. Neuts, *Matrix-Geometric Solutions in Stochastic
//!   Models: An Algorithmic Approach*, Johns Hopkins University Press, 1981.
//! - \[LR93\] G. Latouche, V. Ramaswami, "A logarithmic reduction algorithm
//!   for quasi-birth-death processes", J. Appl. Probab. 30(3), 1993, 650–674.
//! - \[LR99\] G. Latouche, V. Ramaswami, *Introduction to Matrix Analytic
//!   Methods in Stochastic Modeling*, SIAM, 1999.

use crate::dist::Mmpp;

type M2 = [[f64; 2]; 2];

const I2: M2 = [[1.0, 0.0], [0.0, 1.0]];

fn mul(a: M2, b: M2) -> M2 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j]))
}

fn add(a: M2, b: M2) -> M2 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][j] + b[i][j]))
}

fn sub(a: M2, b: M2) -> M2 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][j] - b[i][j]))
}

fn neg(a: M2) -> M2 {
    a.map(|row| row.map(|x| -x))
}

fn inv(a: M2) -> M2 {
    let d = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    [[a[1][1] / d, -a[0][1] / d], [-a[1][0] / d, a[0][0] / d]]
}

/// `v a` for a row vector `v`.
fn row(v: [f64; 2], a: M2) -> [f64; 2] {
    [
        v[0] * a[0][0] + v[1] * a[1][0],
        v[0] * a[0][1] + v[1] * a[1][1],
    ]
}

/// The QBD's solution: the rate matrix and the empty system's row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MmppM1 {
    /// R, the minimal solution of A0 + R A1 + R² A2 = 0.
    pub r: [[f64; 2]; 2],
    /// π_0: the probabilities of an empty system in each phase.
    pub pi0: [f64; 2],
    /// The arrival rate λ = π·r.
    pub lambda: f64,
}

impl MmppM1 {
    /// The stationary MMPP/M/1 queue with arrivals `m` and service rate
    /// `mu`; None unless it is stable (λ < μ) and the reduction converges.
    pub fn solve(m: &Mmpp, mu: f64) -> Option<MmppM1> {
        let lambda = m.mean_rate();
        if !(lambda > 0.0 && mu.is_finite() && lambda < mu) {
            return None;
        }
        let [s1, s2] = m.switch;
        let q: M2 = [[-s1, s1], [s2, -s2]];
        let a0: M2 = [[m.rates[0], 0.0], [0.0, m.rates[1]]];
        let a2: M2 = [[mu, 0.0], [0.0, mu]];
        let a1 = sub(sub(q, a0), a2);
        // Logarithmic reduction [LR93]: H, L the up and down one-step
        // matrices of the censored chain, doubled each iteration.
        let na1 = inv(neg(a1));
        let mut h = mul(na1, a0);
        let mut l = mul(na1, a2);
        let mut g = l;
        let mut t = h;
        let mut converged = false;
        for _ in 0..64 {
            let u = add(mul(h, l), mul(l, h));
            let w = inv(sub(I2, u));
            let h2 = mul(w, mul(h, h));
            let l2 = mul(w, mul(l, l));
            h = h2;
            l = l2;
            g = add(g, mul(t, l));
            t = mul(t, h);
            // Done when what is left to add (T, whose entries bound the
            // next terms) is below rounding; G is then stochastic for a
            // positive recurrent QBD (to a few ulps per iteration: 3e-14
            // at ρ = 0.99).
            if t.iter().flatten().all(|x| x.abs() < 1e-18) {
                let gap = (1.0 - g[0][0] - g[0][1])
                    .abs()
                    .max((1.0 - g[1][0] - g[1][1]).abs());
                converged = gap < 1e-10;
                break;
            }
        }
        if !converged {
            return None;
        }
        let r = mul(a0, inv(neg(add(a1, mul(a0, g)))));
        // π_0 (B1 + R A2) = 0: a 2×2 matrix of rank 1; π_0 is orthogonal to
        // its larger column.
        let b = add(sub(q, a0), mul(r, a2));
        let j = if b[0][0].abs() + b[1][0].abs() >= b[0][1].abs() + b[1][1].abs() {
            0
        } else {
            1
        };
        let mut pi0 = [b[1][j].abs(), b[0][j].abs()];
        let ir = inv(sub(I2, r));
        let total: f64 = row(pi0, ir).iter().sum();
        pi0 = pi0.map(|x| x / total);
        // R is nonnegative but for rounding (an entry that is exactly 0
        // may come out as −1e-18).
        let ok = pi0.iter().all(|x| x.is_finite() && *x >= 0.0)
            && r.iter().flatten().all(|x| x.is_finite() && *x >= -1e-12);
        ok.then_some(MmppM1 { r, pi0, lambda })
    }

    /// E\[N_q\] = π_0 R² (I − R)^{-2} 1 (module docs).
    pub fn mean_queue(&self) -> f64 {
        let ir = inv(sub(I2, self.r));
        let v = row(row(row(row(self.pi0, self.r), self.r), ir), ir);
        v[0] + v[1]
    }

    /// E\[W\] = E\[N_q\]/λ (Little's law).
    pub fn mean_wait(&self) -> f64 {
        self.mean_queue() / self.lambda
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With equal rates the stream is Poisson: M/M/1, E[W] = ρ/(μ − λ).
    #[test]
    fn equal_rates_are_m_m_1() {
        for (lambda, mu) in [(0.5, 1.0), (0.9, 1.0), (0.99, 1.0), (3.0, 7.0)] {
            let m = Mmpp {
                rates: [lambda, lambda],
                switch: [0.3, 1.7],
            };
            let got = MmppM1::solve(&m, mu).unwrap().mean_wait();
            let exact = lambda / mu / (mu - lambda);
            assert!(
                (got / exact - 1.0).abs() < 1e-10,
                "{lambda}/{mu}: {got} vs {exact}"
            );
        }
    }

    /// The truncated CTMC on levels 0..=LEVELS solved by Gauss–Seidel
    /// sweeps of the balance equations, against the matrix-geometric
    /// solution (mass beyond the truncation is below 1e-15 here).
    fn brute_force_mean_wait(m: &Mmpp, mu: f64) -> f64 {
        const LEVELS: usize = 600;
        let [r1, r2] = m.rates;
        let [s1, s2] = m.switch;
        let rates = [r1, r2];
        let sw = [s1, s2];
        let mut p = vec![[1.0f64; 2]; LEVELS + 1];
        for _ in 0..20_000 {
            let mut change = 0.0f64;
            for n in 0..=LEVELS {
                for i in 0..2 {
                    let out = if n < LEVELS { rates[i] } else { 0.0 }
                        + sw[i]
                        + if n > 0 { mu } else { 0.0 };
                    let mut inflow = sw[1 - i] * p[n][1 - i];
                    if n > 0 {
                        inflow += rates[i] * p[n - 1][i];
                    }
                    if n < LEVELS {
                        inflow += mu * p[n + 1][i];
                    }
                    let new = inflow / out;
                    change = change.max((new - p[n][i]).abs() / new.max(1e-300));
                    p[n][i] = new;
                }
            }
            let total: f64 = p.iter().map(|x| x[0] + x[1]).sum();
            for x in &mut p {
                x[0] /= total;
                x[1] /= total;
            }
            if change < 1e-13 {
                break;
            }
        }
        let nq: f64 = p
            .iter()
            .enumerate()
            .skip(1)
            .map(|(n, x)| (n - 1) as f64 * (x[0] + x[1]))
            .sum();
        nq / m.mean_rate()
    }

    #[test]
    fn matches_a_brute_force_ctmc_solve() {
        for (m, mu) in [
            (
                Mmpp {
                    rates: [0.2, 1.8],
                    switch: [0.1, 0.1],
                },
                1.5,
            ),
            (
                Mmpp {
                    rates: [0.0, 2.0],
                    switch: [0.5, 0.5],
                },
                1.4,
            ),
            (
                Mmpp {
                    rates: [0.5, 3.0],
                    switch: [2.0, 1.0],
                },
                2.5,
            ),
        ] {
            let exact = MmppM1::solve(&m, mu).unwrap().mean_wait();
            let brute = brute_force_mean_wait(&m, mu);
            assert!(
                (exact / brute - 1.0).abs() < 1e-7,
                "{m:?} mu {mu}: {exact} vs {brute}"
            );
        }
    }

    #[test]
    fn refuses_unstable_queues() {
        let m = Mmpp {
            rates: [0.5, 1.5],
            switch: [1.0, 1.0],
        };
        assert!(MmppM1::solve(&m, 1.0).is_none());
        assert!(MmppM1::solve(&m, 1.01).is_some());
    }
}
