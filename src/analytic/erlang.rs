//! Erlang B and C, and the M/M/c waiting time.
//!
//! Why this module exists: M/M/1 and M/M/c are the exact baselines for
//! Poisson arrivals with exponential service (central queue, random routing)
//! and the backbone of the Allen–Cunneen approximation and the seed table;
//! Erlang C is computed by the stable Erlang B recurrence so that it holds
//! for c up to 10^5 and more.
//!
//! The references (\[Kleinrock\], \[GH\], ...) are listed in the docs of
//! [`crate::analytic`].

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
