//! Coverage of the CIs of `p_wait` and `p99_sojourn` (issue 16, item 6),
//! as `tests/statistics.rs` checks the mean and wait percentiles: many
//! independent seeds of one point, each a full statistics pipeline; the
//! fraction of seeds whose 95% CI holds the exact value must lie in
//! [90%, 99%] (with 200 seeds a correct procedure fails that with
//! probability < 0.1%: binomial sd 1.5%).
//!
//! The seeds are those of `tests/statistics.rs` (1001–1200), whose p99
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

use qsweep::analytic::erlang_c;
use qsweep::engine::cpu::CpuEngine;
use qsweep::run::{self as sweep, PointResult};
use qsweep::spec::Spec;

const SEEDS: u64 = 200;
const REPS: u32 = 32;

/// (fraction of seeds whose p_wait CI covers `p_wait`, the same for the
/// p99 sojourn when `p99_sojourn` is given).
fn coverage(
    routing: &str,
    servers: u32,
    customers: u32,
    p_wait: f64,
    p99_sojourn: Option<f64>,
) -> (f64, f64) {
    let mut points = Vec::new();
    let mut table = vec![0.0];
    for seed in 1..=SEEDS {
        let text = format!(
            "[sweep]\nrouting = [\"{routing}\"]\nservers = [{servers}]\nrho = [0.9]\n\
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
            }
            n += 1;
            Ok(())
        },
    )
    .unwrap();
    let n = f64::from(n);
    eprintln!(
        "{routing} servers={servers} rho=0.9 over {n} seeds: p_wait {p_wait:.6} covered {:.1}% \
         (CI ±{:.2}%), p99_sojourn {p99_sojourn:?} covered {:.1}% (CI ±{:.2}%)",
        100.0 * f64::from(p_in) / n,
        100.0 * p_rel / n,
        100.0 * f64::from(s_in) / n,
        100.0 * s_rel / n
    );
    (f64::from(p_in) / n, f64::from(s_in) / n)
}

#[test]
fn mm1_p_wait_and_p99_sojourn_cis_cover_about_95_percent() {
    let (lambda, mu) = (0.9f64, 1.0f64);
    let (cp, cs) = coverage("random", 1, 20_000, 0.9, Some(100f64.ln() / (mu - lambda)));
    assert!((0.90..=0.99).contains(&cp), "p_wait coverage {cp}");
    assert!((0.90..=0.99).contains(&cs), "p99_sojourn coverage {cs}");
}

#[test]
fn mm10_p_wait_ci_covers_erlang_c_about_95_percent() {
    let (cp, _) = coverage("central", 10, 5_000, erlang_c(10, 9.0), None);
    assert!((0.90..=0.99).contains(&cp), "p_wait coverage {cp}");
}
