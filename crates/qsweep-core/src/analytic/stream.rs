//! The arrival stream one queue sees, derived from the total stream.
//!
//! Why this module exists: random routing thins the total arrival stream
//! and round robin sums R of its interarrivals, so the queue a dyno sees
//! has its own interarrival scv and Laplace–Stieltjes transform. The
//! decision tree in [`super::baseline`] needs both: the scv for the
//! approximations, the transform for the exact GI/M/1 root.
//!
//! The references (\[Kleinrock\], \[GH\], ...) are listed in the docs of
//! [`crate::analytic`].

use super::{close, pos_finite, Family, LawMoments};

/// How the per-dyno arrival stream is obtained from the total stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Split {
    /// The queue sees the total stream (Central, or R = 1).
    Identity,
    /// Independent Bernoulli(keep) thinning (Random routing, keep = 1/R).
    Thin(f64),
    /// Every n-th arrival (round robin): interarrival = sum of n interarrivals.
    Sum(u32),
}

impl Split {
    /// Interarrival scv of the per-queue stream, given the total stream's scv `s`.
    pub(super) fn scv(self, s: f64) -> f64 {
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
    pub(super) fn one_minus_lst(self, om: f64) -> f64 {
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
pub(super) enum KnownLst {
    /// Gamma(shape, scale = mean/shape); Exp is shape 1, Erlang-k is shape k.
    /// LST (1 + s mean/shape)^(-shape).
    Gamma { shape: f64, mean: f64 },
    /// Constant `mean`; LST exp(-s mean).
    Det { mean: f64 },
}

impl KnownLst {
    pub(super) fn from_law(law: &LawMoments, lambda: f64) -> Option<Self> {
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
    pub(super) fn one_minus_lst(self, s: f64) -> f64 {
        match self {
            KnownLst::Gamma { shape, mean } => -(-shape * (s * mean / shape).ln_1p()).exp_m1(),
            KnownLst::Det { mean } => -(-s * mean).exp_m1(),
        }
    }
}
