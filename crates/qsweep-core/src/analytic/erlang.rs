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
/// O(c), no factorials or powers; for huge loads O(√a) (see
/// [`SKIP_FROM`]), and it stops once B underflows to 0 (every later step
/// keeps 0). From [`SKIP_FROM`] servers it also stops once B is subnormal:
/// there a step can round B back to the smallest subnormal forever (when
/// a/k > 1/2), which made the loop run to c.
pub fn erlang_b(c: u32, offered_load: f64) -> f64 {
    let a = offered_load;
    let (start, mut b) = skip_ahead(c, a);
    let huge = c >= SKIP_FROM;
    for k in start..=c {
        if b == 0.0 || (huge && b < f64::MIN_POSITIVE) {
            break;
        }
        let ab = a * b;
        b = ab / (f64::from(k) + ab);
    }
    b
}

/// Below this many servers the recurrence always starts at B(0) = 1, so
/// every baseline of a fleet up to a million servers is computed exactly
/// as before, to the bit.
pub const SKIP_FROM: u32 = 1_000_000;

/// Where [`erlang_b`]'s recurrence starts: (k0 + 1, an approximation of
/// B(k0)). Why (issue 25): the recurrence is linear in c, so `qsweep
/// analytic --servers 4e9` ran for minutes. For k well below the load a,
/// B(k, a) ≈ 1 − k/a, and the recurrence contracts errors by about k/a a
/// step (by a/k above a), so starting at k0 = a − 40√a from that value
/// leaves an error below e^-800 by the time it matters: only loads (and
/// fleets) of more than [`SKIP_FROM`] skip anything.
fn skip_ahead(c: u32, a: f64) -> (u32, f64) {
    if c < SKIP_FROM || !(a.is_finite() && a > 0.0) {
        return (1, 1.0);
    }
    let k0 = (a - 40.0 * a.sqrt()).floor();
    if k0 < f64::from(SKIP_FROM) || k0 >= f64::from(c) {
        return (1, 1.0);
    }
    let k0 = k0 as u32;
    (k0 + 1, 1.0 - f64::from(k0) / a)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The recurrence from B(0) = 1 all the way, as before the skip.
    fn erlang_b_full(c: u32, a: f64) -> f64 {
        let mut b = 1.0;
        for k in 1..=c {
            let ab = a * b;
            b = ab / (f64::from(k) + ab);
        }
        b
    }

    #[test]
    fn skipping_ahead_keeps_erlang_b_and_small_fleets_are_unchanged() {
        for (c, a) in [
            (2_000_000, 1_990_000.0),
            (2_000_000, 1_999_000.0),
            (3_000_000, 2_000_000.0),
        ] {
            let (full, fast) = (erlang_b_full(c, a), erlang_b(c, a));
            assert!(
                (fast - full).abs() <= 1e-9 * full.abs() + 1e-300,
                "c {c} a {a}: {fast} vs {full}"
            );
        }
        for (c, a) in [(100_000, 99_000.0), (999_999, 990_000.0), (50, 40.0)] {
            assert_eq!(erlang_b(c, a).to_bits(), erlang_b_full(c, a).to_bits());
        }
    }

    #[test]
    fn four_billion_servers_take_no_time() {
        let t = std::time::Instant::now();
        let c = erlang_c(4_000_000_000, 3.6e9);
        assert!((0.0..1e-100).contains(&c), "{c}");
        let c = erlang_c(4_000_000_000, 3.999_9e9);
        assert!(c > 0.0 && c < 1.0, "{c}");
        assert!(t.elapsed().as_secs_f64() < 5.0);
    }
}
