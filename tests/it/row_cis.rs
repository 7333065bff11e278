//! Coverage of the CIs of `p_wait` and `p99_sojourn` (issue 16, item 6),
//! as `tests/it/statistics.rs` checks the mean and wait percentiles: many
//! independent seeds of one point, each a full statistics pipeline; the
//! fraction of seeds whose 95% CI holds the exact value must lie in
//! [90%, 99%] (with 200 seeds a correct procedure fails that with
//! probability < 0.1%: binomial sd 1.5%).
//!
//! The seeds are those of `tests/it/statistics.rs` (1001–1200), whose p99
//! wait CIs come from the same function (`stats::percentile_ci`):
//! sectioning covered the p99 sojourn 92.1% and the p99 wait 92.1% over
//! 800 seeds of the M/M/1 point, so the [90%, 99%] band is met with little
//! room until a better percentile CI lands (issue 16, item 2).
//!
//! Exact values: M/M/1 at ρ 0.9 (λ 0.9, μ 1): P(W > 0) = ρ (arrivals see
//! time averages, PASTA) and the sojourn is Exp(μ − λ), so its p99 is
//! ln(100)/(μ − λ) (Kleinrock 1975, §3.2). M/M/10 at ρ 0.9: P(W > 0) is
//! Erlang C (Kleinrock 1975, §3.5).

use std::path::Path;

use qsweep_core::analytic::erlang_c;
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::run::{self as sweep, PointResult};
use qsweep_core::spec::Spec;

const SEEDS: u64 = 200;
const REPS: u32 = 32;

/// What [`coverage`] measured over the seeds.
struct Covered {
    /// Fraction of seeds whose p_wait CI covers the exact value.
    p_wait: f64,
    /// The same for the p99 sojourn (0 when no exact value was given).
    p99_sojourn: f64,
    /// The p99 sojourn's mean CI half-width over 1.96 × the standard
    /// deviation of its estimates across seeds: 1 for a CI as wide as the
    /// estimator's spread says it should be.
    p99_sojourn_width: f64,
}

/// Coverage of one point over [`SEEDS`] seeds (`p99_sojourn`: its exact
/// value, where it is checked).
fn coverage(
    routing: &str,
    servers: u32,
    rho: f64,
    customers: u32,
    p_wait: f64,
    p99_sojourn: Option<f64>,
) -> Covered {
    let mut points = Vec::new();
    let mut table = vec![0.0];
    for seed in 1..=SEEDS {
        let text = format!(
            "[sweep]\nrouting = [\"{routing}\"]\nservers = [{servers}]\nrho = [{rho}]\n\
             service = [\"exp(mean=1)\"]\n\n[run]\nreps = {REPS}\ncustomers = {customers}\n\
             warmup = 2000\nseed = {}\n",
            1000 + seed
        );
        let s = Spec::from_toml_str(&text, "test", Path::new(".")).unwrap();
        let (p, t) = sweep::prepare(&s, s.points());
        table = t;
        points.extend(p);
    }
    let (mut p_in, mut s_in, mut n) = (0u32, 0u32, 0u32);
    let (mut p_rel, mut s_rel) = (0.0, 0.0);
    let mut sojourns = Vec::new();
    let mut half_widths = Vec::new();
    sweep::run_points(
        &points,
        &table,
        REPS,
        &mut CpuEngine::new(0),
        &mut |r: PointResult| {
            let s = &r.stats;
            let hw = s.p_wait_ci95.expect("p_wait CI");
            p_in += u32::from((s.p_wait - p_wait).abs() <= hw);
            p_rel += hw / p_wait;
            if let Some(exact) = p99_sojourn {
                let hw = s.p99_sojourn_ci95.expect("p99_sojourn CI");
                s_in += u32::from((s.p99_sojourn - exact).abs() <= hw);
                s_rel += hw / exact;
                sojourns.push(s.p99_sojourn);
                half_widths.push(hw);
            }
            n += 1;
            Ok(())
        },
    )
    .unwrap();
    let n = f64::from(n);
    let spread = |xs: &[f64]| {
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)).sqrt()
    };
    let width = if sojourns.len() > 1 {
        half_widths.iter().sum::<f64>() / half_widths.len() as f64 / (1.96 * spread(&sojourns))
    } else {
        0.0
    };
    eprintln!(
        "{routing} servers={servers} rho={rho} over {n} seeds: p_wait {p_wait:.6} covered {:.1}% \
         (CI ±{:.2}%), p99_sojourn {p99_sojourn:?} covered {:.1}% (CI ±{:.2}%, {width:.2}× the \
         seeds' spread)",
        100.0 * f64::from(p_in) / n,
        100.0 * p_rel / n,
        100.0 * f64::from(s_in) / n,
        100.0 * s_rel / n
    );
    Covered {
        p_wait: f64::from(p_in) / n,
        p99_sojourn: f64::from(s_in) / n,
        p99_sojourn_width: width,
    }
}

#[test]
fn mm1_p_wait_and_p99_sojourn_cis_cover_about_95_percent() {
    let (lambda, mu) = (0.9f64, 1.0f64);
    let c = coverage(
        "random",
        1,
        0.9,
        20_000,
        0.9,
        Some(100f64.ln() / (mu - lambda)),
    );
    assert!(
        (0.90..=0.99).contains(&c.p_wait),
        "p_wait coverage {}",
        c.p_wait
    );
    assert!(
        (0.90..=0.99).contains(&c.p99_sojourn),
        "p99_sojourn coverage {}",
        c.p99_sojourn
    );
}

#[test]
fn mm10_p_wait_ci_covers_erlang_c_about_95_percent() {
    let c = coverage("central", 10, 0.9, 5_000, erlang_c(10, 9.0), None);
    assert!(
        (0.90..=0.99).contains(&c.p_wait),
        "p_wait coverage {}",
        c.p_wait
    );
}

/// The exact p99 of the M/M/c FCFS sojourn (service rate 1, load `a =
/// λ`): W = 0 with probability 1 − C (Erlang C), else Exp(c − λ), plus an
/// independent Exp(1) service (Kleinrock 1975, §3.5), so
/// `P(T > t) = (1 − C) e^{−t} + C (θ e^{−t} − e^{−θ t}) / (θ − 1)`, `θ = c − λ`.
fn mmc_sojourn_p99(c: u32, lambda: f64) -> f64 {
    let erl = erlang_c(c, lambda);
    let theta = f64::from(c) - lambda;
    let tail = |t: f64| {
        (1.0 - erl) * (-t).exp() + erl * (theta * (-t).exp() - (-theta * t).exp()) / (theta - 1.0)
    };
    let (mut lo, mut hi) = (0.0f64, 100.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > 0.01 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[test]
fn multi_server_p99_sojourn_ci_is_as_wide_as_its_spread() {
    // Issue 27 item 3: where few customers wait, the sojourn p99 is mostly
    // the service law's (known exactly, convolved on the host), and its CI
    // must not be that of a sample of sojourns: capped at the customers'
    // binomial width it was 5–15× the seeds' spread.
    let (servers, rho) = (10, 0.7);
    let lambda = rho * f64::from(servers);
    let exact = mmc_sojourn_p99(servers, lambda);
    let c = coverage(
        "central",
        servers,
        rho,
        5_000,
        erlang_c(servers, lambda),
        Some(exact),
    );
    assert!(
        (0.90..=0.99).contains(&c.p99_sojourn),
        "p99_sojourn coverage {}",
        c.p99_sojourn
    );
    assert!(
        (0.75..=1.3).contains(&c.p99_sojourn_width),
        "p99_sojourn CI {}× the seeds' spread",
        c.p99_sojourn_width
    );
}
