//! Special functions and interval bounds that the statistics rest on: the
//! incomplete beta and Student t, beta and gamma quantiles, and the
//! Clopper–Pearson bounds on a proportion. Each cites its source; none
//! knows of histograms or replications.

pub use crate::dist::ln_gamma;

/// Regularized incomplete beta I_x(a, b) by Lentz's continued fraction
/// (Numerical Recipes, §6.4).
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..500 {
        let m = f64::from(m);
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        for step in [
            num,
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + step * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + step / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            f *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    ln_front.exp() * f / a
}

/// P(T ≤ t) for Student's t with `dof` degrees of freedom.
pub fn student_t_cdf(t: f64, dof: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(dof / (dof + t * t), dof / 2.0, 0.5);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p` quantile (p ≥ 0.5) of Student's t, by bisection on the CDF.
pub fn student_t_quantile(p: f64, dof: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_cdf(hi, dof) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, dof) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The standard normal 0.975 quantile.
pub(super) const Z975: f64 = 1.959_963_984_540_054;

/// Effective sample counts above which the Clopper–Pearson bounds are
/// replaced by the normal approximation (they agree to < 1% of the
/// half-width there, and the incomplete beta's continued fraction slows
/// down as its parameters grow).
pub(super) const NORMAL_ABOVE: f64 = 1e4;

/// The `p` quantile of the Beta(a, b) law, by bisection on its CDF.
pub fn beta_quantile(p: f64, a: f64, b: f64) -> f64 {
    invert_cdf(p, 1.0, &|x| incomplete_beta(x, a, b))
}

/// The `p` quantile of a law on `[0, hi]` with CDF `cdf`, by bisection to
/// a relative 1e-12.
pub(super) fn invert_cdf(p: f64, hi: f64, cdf: &dyn Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, hi);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Two-sided 95% Clopper–Pearson interval of a binomial proportion from
/// `x` successes in `n` trials, both real (an effective sample,
/// Korn & Graubard 1998). Beyond [`NORMAL_ABOVE`] successes and failures,
/// the normal approximation.
pub fn clopper_pearson(x: f64, n: f64) -> (f64, f64) {
    let p = (x / n).clamp(0.0, 1.0);
    if x.min(n - x) > NORMAL_ABOVE {
        let d = Z975 * (p * (1.0 - p) / n).sqrt();
        return ((p - d).max(0.0), (p + d).min(1.0));
    }
    let lo = if x <= 0.0 {
        0.0
    } else {
        beta_quantile(0.025, x, n - x + 1.0)
    };
    let hi = if n - x <= 0.0 {
        1.0
    } else {
        beta_quantile(0.975, x + 1.0, n - x)
    };
    (lo, hi)
}

/// The `p` quantile (small `p`) of the Gamma(`shape`, 1) law, by bisection
/// on its regularised incomplete gamma function: half the χ² quantile on
/// 2·`shape` degrees of freedom.
pub(super) fn gamma_quantile(p: f64, shape: f64) -> f64 {
    let hi = shape + 10.0 * shape.sqrt() + 10.0;
    invert_cdf(p, hi, &|x| crate::dist::gamma_pq(shape, x).0)
}

/// One-sided upper confidence bound (level `conf`) on a binomial
/// probability from `x` successes in `n` trials: Clopper and Pearson, "The
/// use of confidence or fiducial limits illustrated in the case of the
/// binomial", Biometrika 26(4), 1934 — the p with P(Bin(n, p) ≤ x) = 1 −
/// conf. For x = 0 that is 1 − (1 − conf)^(1/n), about 3/n at 95% (the
/// "rule of three": Hanley and Lippman-Hand, JAMA 249(13), 1983). None
/// for n = 0; 1 for x = n.
pub fn binomial_upper_bound(x: u64, n: u64, conf: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    if x >= n {
        return Some(1.0);
    }
    let alpha = 1.0 - conf;
    if x == 0 {
        return Some(-(alpha.ln() / n as f64).exp_m1());
    }
    // P(Bin(n, p) ≤ x) = 1 − I_p(x + 1, n − x), decreasing in p: bisection.
    let (a, b) = ((x + 1) as f64, (n - x) as f64);
    let (mut lo, mut hi) = (x as f64 / n as f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 1.0 - incomplete_beta(mid, a, b) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    Some(hi)
}
