//! The two-phase Markov-modulated Poisson process (`mmpp(rates=[r1,r2],
//! switch=[s1,s2])`): its stationary phase law, mean rate, interarrival law
//! and index of dispersion, in closed form.
//!
//! Why this module exists: MMPP is the one arrival law that is not a
//! renewal process (consecutive interarrivals are correlated through the
//! phase), so what the rest of `qsweep` asks of an arrival law means
//! something specific here, said once:
//! - its **mean rate** λ = π·r, with π = (s2, s1)/(s1 + s2) the stationary
//!   phase law; the load rescales the process (rates and switching rates
//!   together, i.e. time) so that λ is the point's;
//! - its **interarrival law** (the moments, CDF and `arrival_scv` of a row)
//!   is the stationary (Palm) one: the time from an arrival to the next is
//!   phase-type PH(φ, D0), with φ = π diag(r)/λ the phase seen by an arrival
//!   and D0 = Q − diag(r) (Neuts, "Matrix-Geometric Solutions in Stochastic
//!   Models", 1981, ch. 2; Fischer and Meier-Hellstern, "The Markov-modulated
//!   Poisson process (MMPP) cookbook", Performance Evaluation 18, 1993). A
//!   2×2 D0 has two distinct real eigenvalues −θ1, −θ2, so the law is a
//!   combination of two exponentials, w1 Exp(1/θ1) + w2 Exp(1/θ2) with
//!   w1 + w2 = 1 (one weight may be negative), and every moment and partial
//!   moment is the same combination of exponential ones;
//! - random routing over R queues thins it to the MMPP with rates r/R and
//!   the same switching ([`Mmpp::thinned`]): each phase's Poisson stream is
//!   thinned independently of the phase process;
//! - its burstiness is the asymptotic index of dispersion for counts,
//!   lim Var N(t) / E N(t) ([`Mmpp::dispersion`]).

/// A two-phase MMPP: phase `i` emits arrivals at rate `rates[i]` and leaves
/// for the other phase at rate `switch[i]`. Rates are nonnegative and not
/// both zero; switching rates are positive (the phase process is
/// irreducible).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mmpp {
    pub rates: [f64; 2],
    pub switch: [f64; 2],
}

impl Mmpp {
    /// The stationary phase law π = (s2, s1)/(s1 + s2).
    pub fn stationary(&self) -> [f64; 2] {
        let [s1, s2] = self.switch;
        [s2 / (s1 + s2), s1 / (s1 + s2)]
    }

    /// The long-run arrival rate λ = π·r.
    pub fn mean_rate(&self) -> f64 {
        let pi = self.stationary();
        pi[0] * self.rates[0] + pi[1] * self.rates[1]
    }

    /// The same process with time stretched by `c` (every rate divided by
    /// `c`): what the load does to it.
    pub fn scaled(&self, c: f64) -> Mmpp {
        Mmpp {
            rates: self.rates.map(|r| r / c),
            switch: self.switch.map(|s| s / c),
        }
    }

    /// What one of `r` queues sees when each arrival joins one of them
    /// uniformly at random: the MMPP with rates r_i/R and the same
    /// switching rates (in each phase a Poisson stream thinned at random
    /// stays Poisson, and the phase process is untouched).
    pub fn thinned(&self, r: u32) -> Mmpp {
        let r = f64::from(r);
        Mmpp {
            rates: self.rates.map(|x| x / r),
            switch: self.switch,
        }
    }

    /// The stationary interarrival law as `[(w1, mean1), (w2, mean2)]`:
    /// density Σ w_k e^{−x/mean_k}/mean_k, with w1 + w2 = 1 (module docs).
    /// From the spectral decomposition of D0: with −θ_k its eigenvalues,
    /// e^{D0 x} = Σ e^{−θ_k x} P_k, P1 = (D0 + θ2 I)/(θ2 − θ1), P2 = (D0 +
    /// θ1 I)/(θ1 − θ2), the density φ e^{D0 x} t (t = −D0 1 = r) has
    /// coefficients c_k = φ P_k r, and w_k = c_k/θ_k.
    pub fn interarrival_mix(&self) -> [(f64, f64); 2] {
        let [r1, r2] = self.rates;
        let [s1, s2] = self.switch;
        let (q1, q2) = (r1 + s1, r2 + s2);
        let lambda = self.mean_rate();
        let pi = self.stationary();
        let phi = [pi[0] * r1 / lambda, pi[1] * r2 / lambda];
        // θ1 θ2 = det(−D0) > 0, θ1 + θ2 = q1 + q2: the larger root directly,
        // the smaller as the quotient (no cancellation).
        let disc = ((q1 - q2) * (q1 - q2) + 4.0 * s1 * s2).sqrt();
        let theta2 = (q1 + q2 + disc) / 2.0;
        let det = q1 * q2 - s1 * s2;
        let theta1 = det / theta2;
        // D0 r = (−q1 r1 + s1 r2, s2 r1 − q2 r2).
        let d0r = [-q1 * r1 + s1 * r2, s2 * r1 - q2 * r2];
        let c = |theta_other: f64, theta_own: f64| {
            let v = [d0r[0] + theta_other * r1, d0r[1] + theta_other * r2];
            (phi[0] * v[0] + phi[1] * v[1]) / (theta_other - theta_own)
        };
        let c1 = c(theta2, theta1);
        let c2 = c(theta1, theta2);
        [(c1 / theta1, 1.0 / theta1), (c2 / theta2, 1.0 / theta2)]
    }

    /// The asymptotic index of dispersion for counts, lim Var N(t)/E N(t):
    /// I = 1 + 2 (r1 − r2)² s1 s2 / ((s1 + s2)² (r1 s2 + r2 s1)) (Heffes and
    /// Lucantoni, "A Markov modulated characterization of packetized voice
    /// and data traffic and related statistical multiplexer performance",
    /// IEEE J. Sel. Areas Commun. 4(6), 1986). 1 for a Poisson stream (r1 =
    /// r2); unchanged by the load (time scaling); thinning moves it towards
    /// 1.
    pub fn dispersion(&self) -> f64 {
        let [r1, r2] = self.rates;
        let [s1, s2] = self.switch;
        let d = r1 - r2;
        1.0 + 2.0 * d * d * s1 * s2 / ((s1 + s2) * (s1 + s2) * (r1 * s2 + r2 * s1))
    }

    /// The probability that a cycle through both phases (one sojourn in
    /// each) brings at least one arrival: 1 − Π s_i/(r_i + s_i). The
    /// samplers loop over sojourns, so this bounds their loop (see
    /// `contract::MMPP_MIN_CYCLE_ARRIVAL`).
    pub fn cycle_arrival(&self) -> f64 {
        let [r1, r2] = self.rates;
        let [s1, s2] = self.switch;
        1.0 - (s1 / (r1 + s1)) * (s2 / (r2 + s2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2×2 matrices for the checks below.
    type M = [[f64; 2]; 2];
    fn mul(a: M, b: M) -> M {
        std::array::from_fn(|i| std::array::from_fn(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j]))
    }
    fn inv(a: M) -> M {
        let d = a[0][0] * a[1][1] - a[0][1] * a[1][0];
        [[a[1][1] / d, -a[0][1] / d], [-a[1][0] / d, a[0][0] / d]]
    }

    const CASES: [Mmpp; 4] = [
        Mmpp {
            rates: [0.3, 2.7],
            switch: [0.05, 0.2],
        },
        Mmpp {
            rates: [1.0, 9.0],
            switch: [0.1, 0.1],
        },
        Mmpp {
            rates: [0.0, 4.0],
            switch: [1.0, 3.0],
        },
        Mmpp {
            rates: [2.0, 2.0],
            switch: [0.5, 7.0],
        },
    ];

    /// The closed form against the general MAP formula (Neuts 1979; see
    /// Heffes and Lucantoni 1986): I = 1 − 2λ + (2/λ) π D1 (eπ − D)^{-1} D1 e,
    /// D = D0 + D1 the phase generator, D1 = diag(r).
    #[test]
    fn dispersion_matches_the_map_formula() {
        for m in CASES {
            let [s1, s2] = m.switch;
            let pi = m.stationary();
            let lambda = m.mean_rate();
            let a: M = [[pi[0] + s1, pi[1] - s1], [pi[0] - s2, pi[1] + s2]];
            let x = inv(a);
            let d1x = mul(
                mul([[m.rates[0], 0.0], [0.0, m.rates[1]]], x),
                [[m.rates[0], 0.0], [0.0, m.rates[1]]],
            );
            let quad: f64 = (0..2).map(|i| pi[i] * (d1x[i][0] + d1x[i][1])).sum();
            let general = 1.0 - 2.0 * lambda + 2.0 / lambda * quad;
            assert!(
                (general - m.dispersion()).abs() < 1e-12 * general,
                "{m:?}: {general} vs {}",
                m.dispersion()
            );
        }
        assert_eq!(CASES[3].dispersion(), 1.0);
    }

    /// The interarrival law's weights sum to 1, its mean is 1/λ, and its
    /// second moment is 2 φ (−D0)^{-2} 1.
    #[test]
    fn interarrival_mix_is_the_palm_phase_type_law() {
        for m in CASES {
            let mix = m.interarrival_mix();
            let [r1, r2] = m.rates;
            let [s1, s2] = m.switch;
            let lambda = m.mean_rate();
            let pi = m.stationary();
            let phi = [pi[0] * r1 / lambda, pi[1] * r2 / lambda];
            let n = inv([[r1 + s1, -s1], [-s2, r2 + s2]]);
            let n2 = mul(n, n);
            let m2: f64 = 2.0 * (0..2).map(|i| phi[i] * (n2[i][0] + n2[i][1])).sum::<f64>();
            let w: f64 = mix.iter().map(|(w, _)| w).sum();
            let m1: f64 = mix.iter().map(|(w, a)| w * a).sum();
            let mix2: f64 = mix.iter().map(|(w, a)| 2.0 * w * a * a).sum();
            assert!((w - 1.0).abs() < 1e-12, "{m:?}: weights {w}");
            assert!((m1 * lambda - 1.0).abs() < 1e-12, "{m:?}: mean {m1}");
            assert!((mix2 / m2 - 1.0).abs() < 1e-12, "{m:?}: {mix2} vs {m2}");
        }
    }
}
