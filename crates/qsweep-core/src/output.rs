//! The results CSV: one row per grid point, written and flushed as each point
//! completes, and the summary table printed after a run.
//!
//! Each column is declared once, name and formatter together, in [`TABLE`].

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::analytic::Baseline;
use crate::contract::Reneging;
use crate::spec::GridPoint;
use crate::stats::{PointStats, P50, P90, P95, P99, P999};
use crate::UsageError;

pub use crate::number::num;

/// One CSV column: its name and how a [`Row`] fills it, declared together so
/// the two cannot drift apart. Column names are the product's interface:
/// never rename one; new columns go at the end of [`TABLE`].
pub struct Column {
    pub name: &'static str,
    pub value: Value,
}

/// How a column is filled: from the grid point alone (the axes, which
/// `--resume` and `merge` check kept rows against), or from the results.
#[derive(Clone, Copy)]
pub enum Value {
    Axis(fn(&GridPoint) -> String),
    Result(fn(&Row) -> String),
}

/// Every column, in order: adding a column is one entry here.
pub const TABLE: &[Column] = &[
    axis("point", |p| p.index.to_string()),
    axis("routing", |p| p.routing.to_string()),
    axis("servers", |p| p.servers.to_string()),
    axis("workers", |p| p.workers.to_string()),
    axis("arrival", |p| p.arrival_text.clone()),
    axis("lambda", |p| num(p.lambda)),
    axis("service", |p| p.service.text().to_string()),
    axis("service_mean", |p| num(p.service.mean())),
    axis("service_scv", |p| num(p.service.scv())),
    axis("rho", |p| num(p.rho)),
    axis("stable", |p| p.stable.to_string()),
    col("reps", |r| r.reps.to_string()),
    col("customers", |r| r.customers.to_string()),
    col("warmup", |r| r.warmup.to_string()),
    col("seed", |r| r.seed.to_string()),
    col("mean_wait", |r| num(r.stats.mean_wait)),
    col("mean_wait_ci95", |r| opt(r.stats.mean_wait_ci95)),
    col("p_wait", |r| num(r.stats.p_wait)),
    col("p50_wait", |r| num(r.stats.wait_pct[P50])),
    col("p90_wait", |r| num(r.stats.wait_pct[P90])),
    col("p95_wait", |r| num(r.stats.wait_pct[P95])),
    col("p99_wait", |r| num(r.stats.wait_pct[P99])),
    col("p99_wait_ci95", |r| opt(r.stats.wait_pct_ci95[P99])),
    col("p999_wait", |r| num(r.stats.wait_pct[P999])),
    col("max_wait", |r| num(r.stats.max_wait)),
    col("mean_sojourn", |r| num(r.stats.mean_sojourn)),
    col("p99_sojourn", |r| num(r.stats.p99_sojourn)),
    col("backend", |r| r.backend.to_string()),
    col("seconds", |r| format!("{:.3}", r.seconds)),
    col("customers_per_s", |r| num(r.customers_per_s())),
    // Analytic baselines (see `analytic`).
    col("analytic_mean_wait", |r| opt(r.analytic.mean_wait)),
    col("analytic_p99_wait", |r| opt(r.analytic.p99_wait)),
    col("analytic_method", |r| r.analytic.method.clone()),
    col("rel_err_mean_wait", |r| opt(r.rel_err_mean_wait())),
    // Sectioning CIs of the other percentiles, and of the mean sojourn.
    col("p50_wait_ci95", |r| opt(r.stats.wait_pct_ci95[P50])),
    col("p90_wait_ci95", |r| opt(r.stats.wait_pct_ci95[P90])),
    col("p95_wait_ci95", |r| opt(r.stats.wait_pct_ci95[P95])),
    col("p999_wait_ci95", |r| opt(r.stats.wait_pct_ci95[P999])),
    col("mean_sojourn_ci95", |r| opt(r.stats.mean_sojourn_ci95)),
    // `--precision`: whether the CIs reached it (empty without it).
    col("converged", |r| {
        r.converged.map(|c| c.to_string()).unwrap_or_default()
    }),
    // Dynamic dispatch (see `routing`): `pod`'s d (empty for the other
    // policies) and the number of routers (1 where the axis does not apply).
    axis("choices", |p| {
        p.choices.map(|d| d.to_string()).unwrap_or_default()
    }),
    axis("routers", |p| p.routers.to_string()),
    // Student t CI of P(wait > 0) over the replications; the percentile CI
    // of the sojourn p99 (`stats::percentile_ci`, as the wait percentiles).
    col("p_wait_ci95", |r| {
        // Where nobody waited, 0 ± 0 would exclude any positive truth:
        // `p_wait_upper95` holds what the run can say.
        opt(r.stats.p_wait_ci95.filter(|_| r.stats.waited > 0))
    }),
    col("p99_sojourn_ci95", |r| opt(r.stats.p99_sojourn_ci95)),
    // What a row can resolve (see `Resolution`): customers who waited, the
    // one-sided 95% upper bounds where none did, and the standardised
    // error against an exact baseline.
    col("waited", |r| r.stats.waited.to_string()),
    col("p_wait_upper95", |r| opt(r.resolution().p_wait_upper95)),
    col("mean_wait_upper95", |r| {
        opt(r.resolution().mean_wait_upper95)
    }),
    col("z_mean_wait", |r| opt(r.resolution().z_mean_wait)),
    // `--warmup auto`: MSER's truncation before rounding (empty for a fixed
    // warm-up; `warmup` holds what ran).
    col("warmup_truncation", |r| {
        r.truncation.map(|t| t.to_string()).unwrap_or_default()
    }),
    // Dispatch policies with per-request state (jsq, pod, jiq, central with
    // routers > 1): the most requests one replication held at once, which
    // shows how far an unstable point's queue grew (empty for the others).
    col("max_in_system", |r| {
        r.max_in_system.map(|n| n.to_string()).unwrap_or_default()
    }),
    // Why the point has no statistics (empty when it has them): see
    // `Row::fields`.
    col("error", |r| r.error.unwrap_or_default().to_string()),
    // Whether the mean wait's CI can be trusted (`horizon`): empty, or
    // `horizon` (the service law's tail is beyond what the run can see),
    // `skewed` (a few replications carry the mean), or both.
    col("mean_wait_flag", |r| {
        crate::horizon::row_flag(r.point, r.customers, r.stats).to_string()
    }),
];

/// The result columns a row keeps when its point failed (`Row::error`):
/// what was asked and how long it ran, the analytic baseline, how far the
/// queue grew and the error. The statistics (every other result column,
/// including any added later) are left empty.
const KEPT_ON_ERROR: &[&str] = &[
    "reps",
    "customers",
    "warmup",
    "seed",
    "backend",
    "seconds",
    "analytic_mean_wait",
    "analytic_p99_wait",
    "analytic_method",
    "max_in_system",
    "error",
];

const fn col(name: &'static str, value: fn(&Row) -> String) -> Column {
    Column {
        name,
        value: Value::Result(value),
    }
}

const fn axis(name: &'static str, value: fn(&GridPoint) -> String) -> Column {
    Column {
        name,
        value: Value::Axis(value),
    }
}

/// Every column name, in order (the CSV header).
pub const COLUMNS: [&str; TABLE.len()] = {
    let mut names = [""; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// The axis columns of a grid point: (column index, value), as a row of
/// that point holds them.
pub fn axis_fields(p: &GridPoint) -> Vec<(usize, String)> {
    TABLE
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c.value {
            Value::Axis(f) => Some((i, f(p))),
            Value::Result(_) => None,
        })
        .collect()
}

/// The columns `--quantiles` appends after [`COLUMNS`], in the order given:
/// `q{q}_wait` and its `q{q}_wait_ci95` for each `q`, `q` written as the
/// shortest decimal that reads back to it (`0.9999` → `q0.9999_wait`).
/// Distinct from the built-in `p99_wait` names, so `--quantiles 0.99`
/// never clashes with them.
pub fn quantile_columns(quantiles: &[f64]) -> Vec<String> {
    quantiles
        .iter()
        .flat_map(|q| [format!("q{q}_wait"), format!("q{q}_wait_ci95")])
        .collect()
}

/// The values of [`quantile_columns`] for one point, from its per-section
/// wait histograms (`PointResult::hist`), by the same code as `p99_wait`
/// and its CI ([`crate::stats::wait_percentile`]).
pub fn quantile_fields(
    quantiles: &[f64],
    sections: &[Vec<u64>],
    scale: f64,
    max_wait: f64,
    tail: crate::stats::TailModel,
) -> Vec<String> {
    if quantiles.is_empty() {
        return Vec::new();
    }
    let bins = crate::contract::HIST_BINS as usize;
    let mut pooled = vec![0u64; bins];
    for s in sections {
        for (p, &c) in pooled.iter_mut().zip(s.iter()) {
            *p += c;
        }
    }
    let batches: Vec<&[u64]> = sections.iter().map(Vec::as_slice).collect();
    quantiles
        .iter()
        .flat_map(|&q| {
            let (estimate, ci) =
                crate::stats::wait_percentile(&pooled, &batches, q, scale, max_wait, tail);
            [num(estimate), opt(ci)]
        })
        .collect()
}

/// The columns `--slo` appends after [`quantile_columns`], in the order
/// given: for each threshold `t`, `p_wait_gt_{t}` (P(wait > t), the mean of
/// the replications' exact fractions), its `_ci95` (Student t over
/// replications, as `p_wait_ci95`) and `analytic_p_wait_gt_{t}` (the exact
/// tail, empty where no exact baseline gives the wait's law), `t` written as
/// the shortest decimal that reads back to it (`0.1` → `p_wait_gt_0.1`).
pub fn slo_columns(thresholds: &[f64]) -> Vec<String> {
    thresholds
        .iter()
        .flat_map(|t| {
            [
                format!("p_wait_gt_{t}"),
                format!("p_wait_gt_{t}_ci95"),
                format!("analytic_p_wait_gt_{t}"),
            ]
        })
        .collect()
}

/// The values of [`slo_columns`] for one point. As `p_wait_ci95`, a CI is
/// left empty where no customer waited longer than its threshold (0 ± 0
/// would exclude any positive truth); the statistics are empty for a failed
/// point, the baseline is kept.
pub fn slo_fields(
    thresholds: &[f64],
    stats: &PointStats,
    analytic: &Baseline,
    failed: bool,
) -> Vec<String> {
    thresholds
        .iter()
        .enumerate()
        .flat_map(|(k, &t)| {
            let exact = opt(analytic.p_wait_gt(t));
            if failed {
                return [String::new(), String::new(), exact];
            }
            let ci = stats.p_wait_gt_ci95[k].filter(|_| stats.exceeded[k] > 0);
            [num(stats.p_wait_gt[k]), opt(ci), exact]
        })
        .collect()
}

/// The columns of a spec with patience (`reneging` its mode): the point's
/// patience law (`none` where it has none), then the fraction of requests
/// lost to it, `p_abandon` or `p_timeout`, with its CI and its exact
/// baseline. None without patience: the CSV is as it always was.
pub fn patience_columns(reneging: Option<Reneging>) -> Vec<String> {
    let Some(mode) = reneging else {
        return Vec::new();
    };
    let p = lost_column(mode);
    vec![
        "patience".to_string(),
        p.to_string(),
        format!("{p}_ci95"),
        format!("analytic_{p}"),
    ]
}

/// `p_abandon` or `p_timeout`: what a request lost to its patience is.
fn lost_column(mode: Reneging) -> &'static str {
    match mode {
        Reneging::Timeout => "p_timeout",
        Reneging::Abandon | Reneging::None => "p_abandon",
    }
}

/// The values of [`patience_columns`] for one point. As `p_wait_ci95`, the
/// CI is left empty where no request was lost; the statistics are empty for
/// a failed point, the baseline is kept.
pub fn patience_fields(
    reneging: Option<Reneging>,
    point: &GridPoint,
    stats: &PointStats,
    analytic: &Baseline,
    failed: bool,
) -> Vec<String> {
    if reneging.is_none() {
        return Vec::new();
    }
    let law = point
        .patience
        .as_ref()
        .map_or("none", |d| d.text())
        .to_string();
    let exact = opt(analytic.p_lost);
    if failed {
        return vec![law, String::new(), String::new(), exact];
    }
    let ci = stats.p_lost_ci95.filter(|_| stats.lost > 0);
    vec![law, num(stats.p_lost), opt(ci), exact]
}

/// The columns of a spec with a capacity (`capacity`: some point has
/// one): the point's capacity K (`none` where it has none), then the
/// fraction of requests refused, with its CI and its exact baseline. None
/// without a capacity: the CSV is as it always was.
pub fn capacity_columns(capacity: bool) -> Vec<String> {
    if !capacity {
        return Vec::new();
    }
    ["capacity", "p_block", "p_block_ci95", "analytic_p_block"]
        .map(String::from)
        .to_vec()
}

/// The values of [`capacity_columns`] for one point, as
/// [`patience_fields`]'s.
pub fn capacity_fields(
    capacity: bool,
    point: &GridPoint,
    stats: &PointStats,
    analytic: &Baseline,
    failed: bool,
) -> Vec<String> {
    if !capacity {
        return Vec::new();
    }
    let k = point
        .capacity
        .map_or_else(|| "none".to_string(), |k| k.to_string());
    let exact = opt(analytic.p_lost.filter(|_| point.capacity.is_some()));
    if failed {
        return vec![k, String::new(), String::new(), exact];
    }
    let ci = stats.p_lost_ci95.filter(|_| stats.lost > 0);
    vec![k, num(stats.p_lost), opt(ci), exact]
}

/// The column of a spec with a non-renewal arrival law (MMPP, trace) at
/// some point: the arrival stream's index of dispersion for counts,
/// Var N(t)/E N(t) ([`Dist::dispersion`](crate::dist::Dist::dispersion)).
/// None otherwise: the CSV is as it always was.
pub fn dispersion_columns(non_renewal: bool) -> Vec<String> {
    if !non_renewal {
        return Vec::new();
    }
    vec!["arrival_dispersion".to_string()]
}

/// The value of [`dispersion_columns`] for one point (known before the
/// run, so kept for a failed point): an MMPP's closed form, a renewal
/// stream's interarrival scv (its asymptotic index), a trace's estimate at
/// windows of √n mean gaps.
pub fn dispersion_fields(non_renewal: bool, point: &GridPoint) -> Vec<String> {
    if !non_renewal {
        return Vec::new();
    }
    vec![num(point.arrival.dispersion())]
}

/// The columns of a spec with the `speeds` axis: the point's fleet, then
/// each class's mean wait, its CI and its exact baseline, the classes in the
/// fleet's order, `;`-separated (`0.81;0.12`). None without a fleet: the
/// CSV is as it always was.
pub fn fleet_columns(fleet: bool) -> Vec<String> {
    if !fleet {
        return Vec::new();
    }
    [
        "speeds",
        "class_mean_wait",
        "class_mean_wait_ci95",
        "analytic_class_mean_wait",
    ]
    .map(String::from)
    .to_vec()
}

/// The values of [`fleet_columns`] for one point, as [`patience_fields`]'s
/// (the per-class baseline is `Baseline::class_mean_wait`). A fleet of
/// speed-1 dynos runs as the `servers` axis's identical dynos, whose classes
/// are alike (every policy treats the dynos symmetrically): each class then
/// reports the row's mean wait, and its exact mean where the row has one.
pub fn fleet_fields(
    fleet: bool,
    point: &GridPoint,
    stats: &PointStats,
    analytic: &Baseline,
    failed: bool,
) -> Vec<String> {
    if !fleet {
        return Vec::new();
    }
    let Some(f) = &point.fleet else {
        return vec![String::new(); 4];
    };
    let n = f.classes.len();
    let join = |xs: Vec<String>| xs.join(";");
    let class_exact = if f.is_plain() {
        let exact = analytic.method.starts_with("exact:");
        analytic.mean_wait.filter(|_| exact).map(|w| vec![w; n])
    } else {
        analytic.class_mean_wait.clone()
    };
    let exact = class_exact.map_or_else(String::new, |xs| join(xs.into_iter().map(num).collect()));
    if failed {
        return vec![f.to_string(), String::new(), String::new(), exact];
    }
    let (means, cis): (Vec<Option<f64>>, Vec<Option<f64>>) = if f.is_plain() {
        (
            vec![Some(stats.mean_wait); n],
            vec![stats.mean_wait_ci95; n],
        )
    } else {
        (
            f.user_order(&stats.class_mean_wait[..n]),
            f.user_order(&stats.class_mean_wait_ci95[..n]),
        )
    };
    vec![
        f.to_string(),
        join(means.into_iter().map(opt).collect()),
        join(cis.into_iter().map(opt).collect()),
        exact,
    ]
}

/// Whether `name` is one of the columns [`extra_columns`] makes (the shape
/// `--resume` and `merge` accept after the standard header).
pub fn is_extra_column(name: &str) -> bool {
    (name.starts_with('q') && name.contains("_wait"))
        || name.starts_with("p_wait_gt_")
        || name.starts_with("analytic_p_wait_gt_")
        || matches!(
            name,
            "patience"
                | "p_abandon"
                | "p_abandon_ci95"
                | "analytic_p_abandon"
                | "p_timeout"
                | "p_timeout_ci95"
                | "analytic_p_timeout"
                | "capacity"
                | "p_block"
                | "p_block_ci95"
                | "analytic_p_block"
                | "arrival_dispersion"
                | "speeds"
                | "class_mean_wait"
                | "class_mean_wait_ci95"
                | "analytic_class_mean_wait"
        )
}

/// The columns after [`COLUMNS`]: `--quantiles`', then `--slo`'s, then the
/// patience axis's (`reneging`: the spec's mode where it has patience),
/// then the capacity axis's (`capacity`: some point has one), then the
/// arrival stream's dispersion (`non_renewal`: some point has MMPP or trace
/// arrivals), then the fleet's (`fleet`: the spec has the `speeds` axis).
pub fn extra_columns(
    quantiles: &[f64],
    slo: &[f64],
    reneging: Option<Reneging>,
    capacity: bool,
    non_renewal: bool,
    fleet: bool,
) -> Vec<String> {
    let mut columns = quantile_columns(quantiles);
    columns.extend(slo_columns(slo));
    columns.extend(patience_columns(reneging));
    columns.extend(capacity_columns(capacity));
    columns.extend(dispersion_columns(non_renewal));
    columns.extend(fleet_columns(fleet));
    columns
}

/// Index of the column `name` in [`COLUMNS`].
pub fn column_index(name: &str) -> Option<usize> {
    COLUMNS.iter().position(|c| *c == name)
}

/// The points of `rows` (CSV rows, fields in [`COLUMNS`] order) whose
/// `error` column is set, in increasing order.
pub fn failed_points(rows: &[Vec<String>]) -> Vec<u32> {
    let (point, error) = (
        column_index("point").expect("a column"),
        column_index("error").expect("a column"),
    );
    let mut failed: Vec<u32> = rows
        .iter()
        .filter(|r| r.get(error).is_some_and(|e| !e.is_empty()))
        .filter_map(|r| r.get(point)?.parse().ok())
        .collect();
    failed.sort_unstable();
    failed
}

/// Columns whose values depend on the machine, not the spec and seed.
pub const TIMING_COLUMNS: &[&str] = &["backend", "seconds", "customers_per_s"];

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

/// Everything known about one finished point.
pub struct Row<'a> {
    pub point: &'a GridPoint,
    pub reps: u32,
    pub customers: u32,
    pub warmup: u32,
    pub seed: u64,
    pub stats: &'a PointStats,
    pub analytic: &'a Baseline,
    pub backend: &'a str,
    pub seconds: f64,
    /// `--precision` only: whether the point's CIs reached it.
    pub converged: Option<bool>,
    /// `--warmup auto` only: the truncation the pilot's MSER chose.
    pub truncation: Option<u32>,
    /// See [`crate::run::PointResult::max_in_system`].
    pub max_in_system: Option<u32>,
    /// Why the point failed: its statistics columns are empty.
    pub error: Option<&'a str>,
}

impl Row<'_> {
    /// The row's fields, in [`COLUMNS`] order.
    pub fn fields(&self) -> Vec<String> {
        TABLE
            .iter()
            .map(|c| match c.value {
                Value::Axis(f) => f(self.point),
                Value::Result(_) if self.error.is_some() && !KEPT_ON_ERROR.contains(&c.name) => {
                    String::new()
                }
                Value::Result(f) => f(self),
            })
            .collect()
    }

    /// Customers simulated (warm-up included) per second of engine time.
    fn customers_per_s(&self) -> f64 {
        let simulated = f64::from(self.reps) * (f64::from(self.customers) + f64::from(self.warmup));
        if self.seconds > 0.0 {
            simulated / self.seconds
        } else {
            0.0
        }
    }

    /// (simulated − analytic) / analytic mean wait, where the baseline is
    /// > 0 and the simulation resolves the mean (see [`Resolution`]).
    fn rel_err_mean_wait(&self) -> Option<f64> {
        if !resolves_mean_wait(self.stats) {
            return None;
        }
        self.analytic
            .mean_wait
            .filter(|&m| m > 0.0)
            .map(|m| (self.stats.mean_wait - m) / m)
    }

    fn resolution(&self) -> Resolution {
        Resolution::of(self.point, self.stats, self.analytic)
    }
}

/// Whether a run resolves its mean wait: someone waited and the 95% CI of
/// the mean stops short of 0. When nobody waited the mean is 0 ± 0, a CI
/// that excludes any positive truth; when the CI reaches 0 the run cannot
/// tell the mean from 0, so a relative error says nothing.
pub fn resolves_mean_wait(s: &PointStats) -> bool {
    s.waited > 0
        && s.mean_wait_ci95
            .is_some_and(|hw| hw > 0.0 && hw < s.mean_wait)
}

/// The standard error behind a 95% Student t half-width over `reps`
/// replications.
pub fn standard_error(half_width: f64, reps: usize) -> Option<f64> {
    (reps >= 2).then(|| half_width / crate::stats::student_t_quantile(0.975, (reps - 1) as f64))
}

/// What a row can say about its mean wait against the baseline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Resolution {
    /// Where nobody waited: the one-sided 95% Clopper–Pearson bound on
    /// P(wait > 0), treating the recorded customers as independent trials
    /// (where waits are this rare they come singly or in short bursts, so
    /// strictly it bounds the rate of such bursts).
    pub p_wait_upper95: Option<f64>,
    /// Where nobody waited and the baseline is exact: that bound times the
    /// exact mean wait of those who wait, E[W | W > 0] (see
    /// [`conditional_mean_wait`]), since E[W] = P(W > 0) E[W | W > 0].
    pub mean_wait_upper95: Option<f64>,
    /// (simulated − exact) / standard error of the simulated mean, where
    /// the baseline is exact (`exact:` methods) and the standard error is
    /// positive.
    pub z_mean_wait: Option<f64>,
}

impl Resolution {
    pub fn of(point: &GridPoint, s: &PointStats, b: &Baseline) -> Resolution {
        let exact = b.method.starts_with("exact:");
        let p_wait_upper95 = if s.waited == 0 {
            crate::stats::binomial_upper_bound(0, s.recorded, 0.95)
        } else {
            None
        };
        let mean_wait_upper95 = p_wait_upper95
            .zip(conditional_mean_wait(point, b))
            .map(|(p, w)| p * w);
        let z_mean_wait = match (exact, b.mean_wait, s.mean_wait_ci95) {
            (true, Some(m), Some(hw)) if s.waited > 0 && hw > 0.0 => {
                standard_error(hw, s.reps).map(|se| (s.mean_wait - m) / se)
            }
            _ => None,
        };
        Resolution {
            p_wait_upper95,
            mean_wait_upper95,
            z_mean_wait,
        }
    }
}

/// E[W | W > 0] of the queue simulated, where its baseline is exact and
/// says it: with Poisson arrivals and exponential service on c servers the
/// wait of those who wait is exponential with rate cμ − λ, mean
/// E[S] / (c (1 − ρ)) (Kleinrock 1975, §3.6; Gross and Harris 1998, §2.3);
/// for M/G/1 P(W > 0) = ρ (PASTA), so E[W | W > 0] = E[W] / ρ (Kleinrock
/// 1975, §5.6). None for the other methods.
pub fn conditional_mean_wait(point: &GridPoint, b: &Baseline) -> Option<f64> {
    use crate::routing::Routing;
    let rho = point.rho;
    if !(rho > 0.0 && rho < 1.0) {
        return None;
    }
    match b.method.as_str() {
        "exact:mm1" | "exact:erlang_c" => {
            // c: the servers of the one queue a customer joins (the whole
            // pool for central and lwl, a dyno's workers otherwise).
            let c = match point.routing {
                Routing::Central | Routing::Lwl => {
                    f64::from(point.servers) * f64::from(point.workers)
                }
                _ => f64::from(point.workers),
            };
            Some(point.service.mean() / (c * (1.0 - rho)))
        }
        "exact:pollaczek_khinchine" | "exact:md1" => b.mean_wait.map(|m| m / rho),
        _ => None,
    }
}

/// A CSV being written: header first, each row flushed as it arrives.
pub struct CsvSink {
    path: PathBuf,
    writer: csv::Writer<File>,
    /// Last `sync_data`.
    synced: Instant,
}

/// Longest time a written row may stay only in the page cache.
const SYNC_EVERY: Duration = Duration::from_secs(1);

impl Drop for CsvSink {
    fn drop(&mut self) {
        let _ = self.writer.flush();
        let _ = self.writer.get_ref().sync_data();
    }
}

impl CsvSink {
    /// Create `path`. An existing file is refused unless `force`, so no
    /// earlier result is ever overwritten silently.
    pub fn create(path: &Path, force: bool) -> Result<Self> {
        Self::create_with(path, force, &[])
    }

    /// [`CsvSink::create`] with `extra` columns after [`COLUMNS`] in the
    /// header (`--quantiles`).
    pub fn create_with(path: &Path, force: bool, extra: &[String]) -> Result<Self> {
        // A FIFO would block the open; a device would be written through.
        crate::files::regular_output(path, "out")?;
        let mut opts = OpenOptions::new();
        opts.write(true);
        if force {
            // Truncated only once locked: a second run cannot empty a file
            // the first is writing.
            opts.create(true);
        } else {
            opts.create_new(true);
        }
        let file = match opts.open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(UsageError(format!(
                    "out: '{}' already exists; expected a new file (pass --force to overwrite it)",
                    path.display()
                ))
                .into())
            }
            Err(e) => {
                return Err(
                    UsageError(format!("out: cannot create '{}': {e}", path.display())).into(),
                )
            }
        };
        if let Err(std::fs::TryLockError::WouldBlock) = file.try_lock() {
            return Err(UsageError(format!(
                "out: '{}' is being written by another qsweep run; expected a different --out \
                 for each run at the same time",
                path.display()
            ))
            .into());
        }
        if force {
            file.set_len(0)
                .with_context(|| format!("truncating {}", path.display()))?;
        }
        Self::from_file(path, file, Some(extra))
    }

    /// Open an existing CSV to add rows after its last one (`--resume`). An
    /// empty file gets the header first. The caller has checked the file
    /// (see `resume::scan_csv`): its rows are whole and its header is ours.
    pub fn append(path: &Path) -> Result<Self> {
        Self::append_with(path, &[])
    }

    /// [`CsvSink::append`] to a CSV with `extra` columns (`--quantiles`).
    pub fn append_with(path: &Path, extra: &[String]) -> Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| UsageError(format!("out: cannot open '{}': {e}", path.display())))?;
        let empty = file
            .metadata()
            .with_context(|| format!("reading {}", path.display()))?
            .len()
            == 0;
        Self::from_file(path, file, empty.then_some(extra))
    }

    /// A sink writing to `file`, starting with the header (with `extra`
    /// columns) when `header` is given.
    fn from_file(path: &Path, file: File, header: Option<&[String]>) -> Result<Self> {
        let mut writer = csv::Writer::from_writer(file);
        if let Some(extra) = header {
            let names = COLUMNS
                .iter()
                .copied()
                .chain(extra.iter().map(String::as_str));
            // Every I/O error names the file (issue 25).
            writer
                .write_record(names)
                .and_then(|()| writer.flush().map_err(csv::Error::from))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            writer,
            synced: Instant::now(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the rows written so far durable (also done by drop).
    pub fn sync(&mut self) -> Result<()> {
        self.writer
            .get_ref()
            .sync_data()
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.synced = Instant::now();
        Ok(())
    }

    pub fn write(&mut self, fields: &[String]) -> Result<()> {
        self.writer
            .write_record(fields)
            .and_then(|_| self.writer.flush().map_err(csv::Error::from))
            .with_context(|| format!("writing {}", self.path.display()))?;
        // On disk, not just in the page cache, within a second: rows that
        // survive a power cut need not be simulated again (at most one sync a
        // second, so thousands of quick rows do not wait on the disk).
        if self.synced.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }
}

/// The aligned table printed after a run: the columns a reader checks first,
/// and every other axis whose values vary between the rows (choices,
/// routers, workers, arrival, lambda, service), so no two rows look alike.
pub fn summary_table(rows: &[Vec<String>]) -> String {
    const FIRST: [&str; 3] = ["point", "routing", "servers"];
    /// Shown only when their values vary, in grid order.
    const VARYING: [&str; 6] = [
        "choices", "routers", "workers", "arrival", "lambda", "service",
    ];
    const LAST: [&str; 7] = [
        "rho",
        "mean_wait",
        "mean_wait_ci95",
        "p99_wait",
        "p999_wait",
        "analytic_mean_wait",
        "rel_err_mean_wait",
    ];
    let varies = |name: &str| {
        let i = column_index(name).expect("known column");
        let mut values = rows.iter().map(|r| r.get(i));
        let first = values.next();
        values.any(|v| v != first.flatten())
    };
    let shown: Vec<&str> = FIRST
        .iter()
        .copied()
        .chain(VARYING.iter().copied().filter(|c| varies(c)))
        .chain(LAST)
        .collect();
    // Text columns read best left-aligned (the first three as always).
    let left = |c: usize| c < FIRST.len() || matches!(shown[c], "arrival" | "service");
    let idx: Vec<usize> = shown
        .iter()
        .map(|c| column_index(c).expect("known column"))
        .collect();
    let mut table: Vec<Vec<String>> = vec![shown.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        table.push(
            idx.iter()
                .map(|&i| r.get(i).cloned().unwrap_or_default())
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..shown.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in &table {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if left(c) {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Columns of `qsweep analytic`: the grid's axes and its baselines.
pub const ANALYTIC_COLUMNS: [&str; 13] = [
    "point",
    "routing",
    "servers",
    "workers",
    "choices",
    "routers",
    "arrival",
    "lambda",
    "service",
    "rho",
    "analytic_mean_wait",
    "analytic_p99_wait",
    "analytic_method",
];

/// One `qsweep analytic` row: a grid point and its baseline.
pub fn analytic_fields(p: &GridPoint, b: &Baseline) -> Vec<String> {
    vec![
        p.index.to_string(),
        p.routing.to_string(),
        p.servers.to_string(),
        p.workers.to_string(),
        p.choices.map(|c| c.to_string()).unwrap_or_default(),
        p.routers.to_string(),
        p.arrival_text.clone(),
        num(p.lambda),
        p.service.text().to_string(),
        num(p.rho),
        b.mean_wait.map(num).unwrap_or_default(),
        b.p99_wait.map(num).unwrap_or_default(),
        b.method.clone(),
    ]
}

/// Creates a new output file for a table (`qsweep analytic -o`, `qsweep
/// bench -o`): an existing file is refused unless `force`.
pub fn create_file(path: &Path, force: bool, hint: &str) -> Result<File, UsageError> {
    // A FIFO would block the open; a device would be written through.
    crate::files::regular_output(path, "out")?;
    OpenOptions::new()
        .write(true)
        .create(force)
        .truncate(force)
        .create_new(!force)
        .open(path)
        .map_err(|e| {
            UsageError(format!(
                "out: cannot create '{}': {e}{hint}",
                path.display()
            ))
        })
}

/// A text table with right-aligned columns, two spaces apart.
pub fn align(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut all = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    all.extend(rows.iter().cloned());
    let widths: Vec<usize> = (0..header.len())
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| format!("{v:>w$}", w = widths[c]))
            .collect();
        out.push_str(&line.join("  "));
        out.push('\n');
    }
    out
}

/// Flush stdout, ignoring a closed pipe.
pub fn flush_stdout() {
    let _ = std::io::stdout().flush();
}

/// Stdout was closed by its reader (`qsweep analytic | head -1`): the
/// binary exits quietly with 141, as a process killed by SIGPIPE would.
#[derive(Debug, thiserror::Error)]
#[error("stdout is closed (broken pipe)")]
pub struct StdoutClosed;

/// Writes `bytes` to stdout and flushes. Why (issue 25): `print!` panics
/// when stdout is a closed pipe or a full disk; here a closed pipe is
/// [`StdoutClosed`] and any other failure an error naming stdout, one line.
pub fn to_stdout(bytes: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    stdout_result(out.write_all(bytes.as_ref()).and_then(|()| out.flush()))
}

/// The result of a write to stdout, as [`to_stdout`] reports it.
pub fn stdout_result(r: std::io::Result<()>) -> Result<()> {
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
    }
}

/// Whether `e` comes from writing to a closed pipe (anywhere in its chain,
/// also inside a `csv::Error`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<StdoutClosed>()
            || c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<csv::Error>().is_some_and(|e| {
                matches!(e.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compact_and_precise() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(16.666666666), "16.66667");
        assert_eq!(num(0.000123456789), "0.0001234568");
        assert_eq!(num(150.0), "150");
        assert_eq!(num(2.5e-9), "2.500000e-9");
        assert_eq!(num(f64::NAN), "");
    }

    #[test]
    fn the_summary_shows_every_axis_that_varies() {
        let row = |point: &str, workers: &str, service: &str| {
            let mut r = vec![String::new(); COLUMNS.len()];
            for (name, v) in [
                ("point", point),
                ("routing", "random"),
                ("servers", "4"),
                ("workers", workers),
                ("lambda", "2"),
                ("service", service),
                ("mean_wait", "0.5"),
            ] {
                r[column_index(name).unwrap()] = v.to_string();
            }
            r
        };
        let same = summary_table(&[row("0", "1", "exp"), row("1", "1", "exp")]);
        let header = same.lines().next().unwrap();
        assert!(
            header.starts_with("point  routing  servers  rho  mean_wait"),
            "{same}"
        );
        let varied = summary_table(&[row("0", "1", "exp"), row("1", "2", "det(value=1)")]);
        let header: Vec<&str> = varied.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(
            header[..6],
            ["point", "routing", "servers", "workers", "service", "rho"],
            "{varied}"
        );
        assert!(
            varied.lines().nth(2).unwrap().contains("det(value=1)"),
            "{varied}"
        );
    }

    #[test]
    fn quantile_columns_are_named_by_their_probability() {
        assert_eq!(
            quantile_columns(&[0.5, 0.9999]),
            [
                "q0.5_wait",
                "q0.5_wait_ci95",
                "q0.9999_wait",
                "q0.9999_wait_ci95"
            ]
        );
        assert!(quantile_fields(&[], &[], 1.0, 1.0, crate::stats::TailModel::Unknown).is_empty());
    }

    #[test]
    fn issue_columns_come_first_in_order() {
        let fixed = "point,routing,servers,workers,arrival,lambda,service,service_mean,service_scv,rho,stable,reps,customers,warmup,seed,mean_wait,mean_wait_ci95,p_wait,p50_wait,p90_wait,p95_wait,p99_wait,p99_wait_ci95,p999_wait,max_wait,mean_sojourn,p99_sojourn,backend,seconds,customers_per_s";
        assert!(COLUMNS.join(",").starts_with(fixed));
    }
}
