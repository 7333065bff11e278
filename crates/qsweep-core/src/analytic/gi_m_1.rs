//! GI/M/1 and E_R/M/1: renewal arrivals, exponential service, one server.
//!
//! Why this module exists: round robin over Poisson arrivals gives each
//! dyno Erlang-R interarrivals, and any renewal input with a known
//! transform gives an exact, exponential-tailed wait once the root sigma
//! of sigma = A*(mu (1 - sigma)) is found. The root is found here, with
//! full relative precision in 1 - sigma even near rho = 1.
//!
//! The references (\[Kleinrock\], \[GH\], ...) are listed in the docs of
//! [`crate::analytic`].

use super::pos_finite;

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
pub(super) fn gi_m_1(mu: f64, one_minus_lst: impl Fn(f64) -> f64) -> Option<GiM1> {
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
