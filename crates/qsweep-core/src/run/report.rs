//! What a finished point says to whoever watches the run: its progress
//! line and its warnings (a CI too wide to trust, a disagreement with exact
//! theory, a tail estimate resting on few exceedances, a mean wait the run
//! cannot resolve, a thin warm-up pilot). The CLI's progress lines and the
//! Python module's reporter read the same text, built here once.

use super::point::{baseline, PointResult};
use crate::analytic::Baseline;
use crate::horizon::{self, Horizon};
use crate::output::{num, Resolution};
use crate::spec::Spec;
use crate::stats::{self, PointStats, P99, P999};

/// What a finished point says to whoever watches the run: the CLI's
/// progress lines and the Python module's reporter read the same text.
pub struct PointReport {
    /// Customers simulated, warm-up included (0 for a failed point).
    pub customers: f64,
    /// The point in one line: its axes, mean wait ± CI beside theory, p99.
    pub line: String,
    /// Warnings, each one line, in order; `always`: shown even when quiet
    /// (a failed point, a disagreement with exact theory: findings about
    /// the run, not progress).
    pub warnings: Vec<(String, bool)>,
    /// The mean-wait or p99 CI is too wide to trust ([`wide_ci`]).
    pub wide: bool,
}

impl PointReport {
    pub fn of(spec: &Spec, r: &PointResult<'_>) -> Self {
        let g = &r.point.grid;
        if let Some(e) = &r.error {
            return Self {
                customers: 0.0,
                line: format!("{} rho={}: failed", spec.describe(g), num(g.rho)),
                warnings: vec![(format!("qsweep: point {} failed: {e}", g.index), true)],
                wide: false,
            };
        }
        let base = baseline(g);
        let theory = base
            .mean_wait
            .map(|m| format!(" (theory {})", num(m)))
            .unwrap_or_default();
        let line = format!(
            "{} rho={}: mean wait {} ± {}{theory}, p99 {}",
            spec.describe(g),
            num(g.rho),
            num(r.stats.mean_wait),
            r.stats
                .mean_wait_ci95
                .map(num)
                .unwrap_or_else(|| "?".into()),
            num(r.stats.wait_pct[P99]),
        );
        let mut warnings = Vec::new();
        let wide = wide_ci(&r.stats);
        if let Some(why) = &wide {
            warnings.push((
                format!(
                    "qsweep: warning: point {} ({}): {why}; its digits are not to be trusted \
                     (more reps or customers, or precision)",
                    g.index,
                    spec.describe(g)
                ),
                false,
            ));
        }
        if let Some(why) = off_theory(g, &r.stats, &base) {
            warnings.push((
                format!(
                    "qsweep: warning: point {} ({}): {why}; the simulation does not agree with \
                     exact theory (a longer warm-up, or more customers)",
                    g.index,
                    spec.describe(g)
                ),
                true,
            ));
        }
        if let Some(why) = few_exceedances(&r.stats) {
            let what = match stats::TailModel::of(&g.service) {
                stats::TailModel::Exponential => {
                    "such an estimate is likely low, and its CI's upper end comes from the \
                     exponential tail fitted below it"
                }
                stats::TailModel::Unknown => "no CI from so few covers reliably",
            };
            warnings.push((
                format!(
                    "qsweep: warning: point {} ({}): {why}; {what} (more customers or \
                     replications)",
                    g.index,
                    spec.describe(g)
                ),
                false,
            ));
        }
        // Whether the mean wait's CI can be trusted at all (`horizon`):
        // findings about the run, shown even when quiet.
        let reps = u32::try_from(r.stats.reps).unwrap_or(u32::MAX);
        if let Some(why) =
            Horizon::of(g, reps, spec.run.customers).and_then(|h| h.concern(&g.service))
        {
            warnings.push((
                format!(
                    "qsweep: warning: point {} ({}): the run cannot resolve the mean wait: \
                     {why}; its CI is not to be trusted (mean_wait_flag: horizon)",
                    g.index,
                    spec.describe(g)
                ),
                true,
            ));
        }
        if let Some(why) = horizon::skewed(&r.stats) {
            warnings.push((
                format!(
                    "qsweep: warning: point {} ({}): {why}; the mean wait's CI is not to be \
                     trusted (mean_wait_flag: skewed; longer replications)",
                    g.index,
                    spec.describe(g)
                ),
                true,
            ));
        }
        if r.stats.failed_reps > 0 {
            warnings.push((
                format!(
                    "qsweep: warning: point {}: {} replications hit a sampler bound",
                    g.index, r.stats.failed_reps
                ),
                false,
            ));
        }
        Self {
            customers: simulated_customers(r, spec.run.customers),
            line,
            warnings,
            wide: wide.is_some(),
        }
    }
}

/// Customers simulated for a finished point, warm-up included.
pub fn simulated_customers(r: &PointResult<'_>, customers: u32) -> f64 {
    r.stats.reps as f64 * (f64::from(customers) + f64::from(r.point.params.warmup))
}

/// A CI half-width above this fraction of its estimate earns a warning.
pub const WIDE_CI: f64 = 0.10;

/// Why a point's mean-wait or p99 CI is too wide to trust (None: fine).
pub fn wide_ci(s: &PointStats) -> Option<String> {
    let mut why = Vec::new();
    for (name, est, hw) in [
        ("mean wait", s.mean_wait, s.mean_wait_ci95),
        ("p99 wait", s.wait_pct[P99], s.wait_pct_ci95[P99]),
    ] {
        match hw {
            None => why.push(format!("{name} has no CI ({} replication)", s.reps)),
            Some(hw) if hw > WIDE_CI * est => {
                why.push(format!("{name} {} ± {} (95%)", num(est), num(hw)))
            }
            Some(_) => {}
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// Which of the p99 and p99.9 waits rest on fewer than
/// [`stats::FEW_EXCEEDANCES`] effective exceedances (about that many
/// independent excursions past them in the whole sample), or None.
pub fn few_exceedances(s: &PointStats) -> Option<String> {
    let few: Vec<String> = [(P99, "p99"), (P999, "p99.9")]
        .into_iter()
        .filter_map(|(k, name)| {
            let e = s.wait_pct_exceedances[k]?;
            (e < stats::FEW_EXCEEDANCES && s.wait_pct[k] > 0.0)
                .then(|| format!("the {name} wait rests on about {e:.1} effective exceedances"))
        })
        .collect();
    (!few.is_empty()).then(|| few.join(" and "))
}

/// Standard errors beyond which a simulated mean is said to disagree with
/// an exact baseline: a correct run lands there with probability 6e-5
/// (normal), so across a large sweep a warning is a finding, not chance.
pub const OFF_THEORY_SE: f64 = 4.0;

/// Why a point's simulation disagrees with its exact baseline (None: it
/// agrees, or there is no exact value to check): the mean wait more than
/// [`OFF_THEORY_SE`] standard errors from it, or nobody waited while the
/// exact mean lies above the row's 95% upper bound.
pub fn off_theory(g: &crate::spec::GridPoint, s: &PointStats, b: &Baseline) -> Option<String> {
    if !b.method.starts_with("exact:") {
        return None;
    }
    let exact = b.mean_wait?;
    let r = Resolution::of(g, s, b);
    if let Some(z) = r.z_mean_wait.filter(|z| z.abs() > OFF_THEORY_SE) {
        return Some(format!(
            "mean wait {} ± {} (95%) is {z:.1} standard errors from the exact {} ({})",
            num(s.mean_wait),
            num(s.mean_wait_ci95.unwrap_or(0.0)),
            num(exact),
            b.method
        ));
    }
    match r.mean_wait_upper95 {
        Some(bound) if exact > bound => Some(format!(
            "nobody of {} customers waited, but the exact mean wait {} ({}) is above the 95% \
             upper bound {} that allows",
            s.recorded,
            num(exact),
            b.method,
            num(bound)
        )),
        _ => None,
    }
}

/// A pilot too small to hold the bias left by its truncation below the
/// run's own standard error: MSER leaves a bias of about a fraction of the
/// pilot's standard error, and the run's is √(run / pilot) times smaller
/// (see `warmup`). None when the pilot traced at least what the run records.
pub fn thin_pilot(pilot: &super::warmup::Pilot, run_reps: u32, customers: u32) -> Option<String> {
    if run_reps == u32::MAX || pilot.reps == 0 {
        return None;
    }
    let run = f64::from(run_reps) * f64::from(customers);
    let traced = f64::from(pilot.reps) * f64::from(pilot.customers);
    (traced < run).then(|| {
        format!(
            "the warm-up was judged on {} of the {run_reps} replications ({} customers each, \
             the pilot's budget); its bias may reach {:.1}× what a full pilot leaves",
            pilot.reps,
            pilot.customers,
            (run / traced).sqrt()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Row;
    use crate::spec::SweepArgs;

    #[test]
    fn wide_cis_are_named() {
        let mut s = PointStats {
            reps: 1,
            mean_wait: 1.0,
            ..PointStats::default()
        };
        assert!(wide_ci(&s)
            .unwrap()
            .contains("mean wait has no CI (1 replication)"));
        s.mean_wait_ci95 = Some(0.05);
        s.wait_pct[P99] = 10.0;
        s.wait_pct_ci95[P99] = Some(2.0);
        assert_eq!(wide_ci(&s).unwrap(), "p99 wait 10 ± 2 (95%)");
        s.wait_pct_ci95[P99] = Some(0.5);
        assert_eq!(wide_ci(&s), None);
    }

    /// The grid point and baseline of the default study's central queue
    /// at `servers` (λ 150, μ 3).
    fn central(servers: u32) -> (crate::spec::GridPoint, Baseline) {
        let a = SweepArgs {
            axes: crate::spec::AxisArgs {
                routing: vec!["central".into()],
                servers: vec![servers.to_string()],
                ..crate::spec::AxisArgs::default()
            },
            ..SweepArgs::default()
        };
        let g = Spec::load(&a).unwrap().points().remove(0);
        let b = baseline(&g);
        assert_eq!(b.method, "exact:erlang_c");
        (g, b)
    }

    #[test]
    fn runs_off_exact_theory_are_named() {
        // R = 60: exact mean wait 0.003910069; 512 replications.
        let (g, b) = central(60);
        let exact = b.mean_wait.unwrap();
        let t = crate::stats::student_t_quantile(0.975, 511.0);
        let at = |z: f64| PointStats {
            reps: 512,
            mean_wait: exact + z * 1e-5,
            mean_wait_ci95: Some(t * 1e-5),
            recorded: 1000,
            waited: 100,
            ..PointStats::default()
        };
        assert_eq!(off_theory(&g, &at(3.9), &b), None);
        assert_eq!(off_theory(&g, &at(-3.9), &b), None);
        let why = off_theory(&g, &at(-15.0), &b).unwrap();
        assert!(
            why.contains("is -15.0 standard errors from the exact 0.003910069"),
            "{why}"
        );
        let r = Resolution::of(&g, &at(2.5), &b);
        assert!((r.z_mean_wait.unwrap() - 2.5).abs() < 1e-6, "{r:?}");
        assert_eq!((r.p_wait_upper95, r.mean_wait_upper95), (None, None));
        // An approximate baseline is no reference.
        let approx = Baseline {
            method: "approx:allen_cunneen".into(),
            ..b.clone()
        };
        assert_eq!(off_theory(&g, &at(-15.0), &approx), None);
        assert_eq!(Resolution::of(&g, &at(-15.0), &approx).z_mean_wait, None);
    }

    #[test]
    fn rows_where_nobody_waited_get_upper_bounds_not_errors() {
        // R = 100: exact mean wait 2.2e-12; 10^8 customers, none waited.
        let (g, b) = central(100);
        let n = 100_000_000u64;
        let s = PointStats {
            reps: 512,
            mean_wait_ci95: Some(0.0),
            recorded: n,
            ..PointStats::default()
        };
        let r = Resolution::of(&g, &s, &b);
        let p = r.p_wait_upper95.unwrap();
        assert!((p * n as f64 - 2.995_732).abs() < 1e-5, "{p}");
        // W | W > 0 ~ Exp(Rμ − λ = 150): the bound is p / 150.
        let m = r.mean_wait_upper95.unwrap();
        assert!((m - p / 150.0).abs() < 1e-12 * m, "{m}");
        assert!(b.mean_wait.unwrap() < m);
        assert_eq!(r.z_mean_wait, None);
        assert_eq!(off_theory(&g, &s, &b), None);
        // The CSV: rel_err blank, the counts and bounds filled.
        let row = Row {
            point: &g,
            reps: 512,
            customers: 195_313,
            warmup: 100,
            seed: 1,
            stats: &s,
            analytic: &b,
            backend: "cpu",
            seconds: 1.0,
            converged: None,
            truncation: Some(57),
            max_in_system: None,
            error: None,
        };
        let fields = row.fields();
        let get = |c: &str| fields[crate::output::column_index(c).unwrap()].clone();
        assert_eq!(get("rel_err_mean_wait"), "");
        assert_eq!(get("waited"), "0");
        assert_eq!(get("p_wait_ci95"), "");
        assert_eq!(get("z_mean_wait"), "");
        assert_eq!(get("p_wait_upper95"), num(p));
        assert_eq!(get("warmup_truncation"), "57");
        // Too few customers to rule the exact value out: the bound says so.
        let few = PointStats {
            recorded: 10,
            ..s.clone()
        };
        let tiny = Baseline {
            mean_wait: Some(1.0),
            ..b.clone()
        };
        let why = off_theory(&g, &few, &tiny).unwrap();
        assert!(why.starts_with("nobody of 10 customers waited"), "{why}");
    }
}
