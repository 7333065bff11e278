//! `qsweep size`: the inverse question. A sweep answers "how long do
//! requests wait with R servers?"; an engineer sizing a fleet asks "how few
//! servers keep the p99 wait under 100 ms?". For each policy (each case:
//! the grid without the searched axis) this finds the smallest R (or number
//! of workers per server) at which a target such as `p99_wait<=0.1` holds
//! at the given arrival rate and laws.
//!
//! - **Exact where theory is exact.** If the analytic baseline of the queue
//!   at R is exact (`exact:mm1`, `exact:erlang_c`, `exact:md1`, …; see
//!   `analytic`) and gives the metric (`mean_wait`, `p99_wait`), R is
//!   judged by the formula: no simulation, no CI.
//! - **Otherwise a search with simulations.** The metric is taken as
//!   non-increasing in R (true in distribution for these FCFS policies: one
//!   more server never makes anyone wait longer, on a common arrival and
//!   service sequence). The search starts at the smallest stable R
//!   (ρ = λ·E\[S\]/(R·workers) < 1), steps up by 1, 2, 4, … until the
//!   target is met, then bisects between the last R that failed and the
//!   first that met it: about 2·log2(R) evaluations. Each evaluation is one
//!   point simulated as `qsweep run` would (same seed, same point index 0,
//!   so every R draws the same arrival and service streams: common random
//!   numbers make neighbouring R comparable), with the run's `--reps`,
//!   `--customers`, `--warmup` and `--precision`.
//! - **Is the answer resolved?** The decision at each R uses the point
//!   estimate. The answer R* is *resolved* when the 95% CI at R* lies within
//!   the target and the CI at R*−1 lies outside it (or R*−1 is unstable);
//!   otherwise the CI cannot tell R* from R*−1 (or R*+1) and the output says
//!   so: more replications or customers (or `--precision`) narrow it.
//!   Metrics without a CI (`p_wait`, `p99_sojourn`) are never resolved.
//!
//! This module holds the question (targets, metrics, cases) and the search;
//! [`evaluate`] judges one R (by formula or by simulation) and keeps the
//! journal that `--resume` reads back.

use std::fmt;
use std::str::FromStr;

use anyhow::Result;

use crate::analytic::Baseline;

pub mod evaluate;

use crate::spec::{Load, Ranges, Spec, SpecError, DEFAULT_CHOICES, DEFAULT_ROUTERS};
use crate::stats::{PointStats, TailModel, WAIT_PERCENTILES};

/// The axis searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    Servers,
    Workers,
}

impl Over {
    pub fn name(self) -> &'static str {
        match self {
            Over::Servers => "servers",
            Over::Workers => "workers",
        }
    }
}

impl FromStr for Over {
    type Err = String;
    fn from_str(s: &str) -> Result<Over, String> {
        match s.trim() {
            "servers" => Ok(Over::Servers),
            "workers" => Ok(Over::Workers),
            other => Err(format!(
                "--over: '{other}' is not a valid value; expected servers or workers"
            )),
        }
    }
}

/// What a target bounds: a column of the results CSV.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    MeanWait,
    /// P(wait > 0): no CI.
    PWait,
    /// One of the built-in percentile columns (index into
    /// [`WAIT_PERCENTILES`]).
    WaitPct(usize),
    /// Any wait quantile, as `--quantiles` names it (`q0.9999_wait`).
    WaitQuantile(f64),
    MeanSojourn,
    /// No CI.
    P99Sojourn,
    /// P(wait > t), as `--slo` counts it (`p_wait_gt_30`): the point is
    /// simulated with `t` as its one threshold.
    PWaitGt(f64),
    /// The fraction of requests lost: `p_abandon`, `p_timeout` (patience)
    /// or `p_block` (a capacity); the spec must have what loses them.
    PLost(Lost),
}

/// What [`Metric::PLost`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    Abandon,
    Timeout,
    Block,
}

impl Lost {
    fn column(self) -> &'static str {
        match self {
            Lost::Abandon => "p_abandon",
            Lost::Timeout => "p_timeout",
            Lost::Block => "p_block",
        }
    }

    /// Whether `point` loses requests this way, and if not what the spec
    /// lacks.
    fn check(self, point: &crate::spec::GridPoint) -> std::result::Result<(), &'static str> {
        use crate::contract::Reneging;
        let (ok, needs) = match self {
            Lost::Abandon => (
                point.reneging == Reneging::Abandon,
                "a patience with reneging = \"abandon\"",
            ),
            Lost::Timeout => (
                point.reneging == Reneging::Timeout,
                "a patience with reneging = \"timeout\"",
            ),
            Lost::Block => (point.capacity.is_some(), "a capacity"),
        };
        if ok {
            Ok(())
        } else {
            Err(needs)
        }
    }
}

impl Metric {
    /// The metrics a target may name, for messages.
    pub const EXPECTED: &'static str = "mean_wait, p_wait, p50_wait, p90_wait, p95_wait, \
                                        p99_wait, p999_wait, qQ_wait (any quantile Q, e.g. \
                                        q0.9999_wait), mean_sojourn, p99_sojourn, p_wait_gt_T \
                                        (P(wait > T), e.g. p_wait_gt_30), p_abandon, p_timeout \
                                        or p_block";

    pub fn parse(name: &str) -> Option<Metric> {
        let name = name.trim();
        match name {
            "mean_wait" => return Some(Metric::MeanWait),
            "p_wait" => return Some(Metric::PWait),
            "mean_sojourn" => return Some(Metric::MeanSojourn),
            "p99_sojourn" => return Some(Metric::P99Sojourn),
            "p_abandon" => return Some(Metric::PLost(Lost::Abandon)),
            "p_timeout" => return Some(Metric::PLost(Lost::Timeout)),
            "p_block" => return Some(Metric::PLost(Lost::Block)),
            _ => {}
        }
        if let Some(t) = name.strip_prefix("p_wait_gt_") {
            let t: f64 = t.parse().ok()?;
            return (t.is_finite() && t >= 0.0 && t <= f64::from(f32::MAX))
                .then_some(Metric::PWaitGt(t));
        }
        if let Some(k) = WAIT_PERCENTILES
            .iter()
            .position(|(stem, _)| name == format!("{stem}_wait"))
        {
            return Some(Metric::WaitPct(k));
        }
        let q: f64 = name
            .strip_prefix('q')?
            .strip_suffix("_wait")?
            .parse()
            .ok()?;
        (q > 0.0 && q < 1.0).then_some(Metric::WaitQuantile(q))
    }

    /// The column name.
    pub fn name(self) -> String {
        match self {
            Metric::MeanWait => "mean_wait".into(),
            Metric::PWait => "p_wait".into(),
            Metric::WaitPct(k) => format!("{}_wait", WAIT_PERCENTILES[k].0),
            Metric::WaitQuantile(q) => format!("q{q}_wait"),
            Metric::MeanSojourn => "mean_sojourn".into(),
            Metric::P99Sojourn => "p99_sojourn".into(),
            Metric::PWaitGt(t) => format!("p_wait_gt_{t}"),
            Metric::PLost(l) => l.column().into(),
        }
    }

    /// The `--slo` thresholds a point must be simulated with for this
    /// metric (its value is then `PointStats::p_wait_gt[0]`).
    pub fn slo(self) -> Option<f64> {
        match self {
            Metric::PWaitGt(t) => Some(t),
            _ => None,
        }
    }

    /// The simulated value and its 95% CI half-width, as the CSV would
    /// report them, from a point's statistics and section histograms
    /// (scaled by `scale`).
    pub fn simulated(
        self,
        s: &PointStats,
        hist: &[Vec<u64>],
        scale: f64,
        tail: TailModel,
    ) -> (f64, Option<f64>) {
        match self {
            Metric::MeanWait => (s.mean_wait, s.mean_wait_ci95),
            Metric::PWait => (s.p_wait, None),
            Metric::WaitPct(k) => (s.wait_pct[k], s.wait_pct_ci95[k]),
            Metric::WaitQuantile(q) => {
                let fields = crate::output::quantile_fields(&[q], hist, scale, s.max_wait, tail);
                (
                    fields[0].parse().unwrap_or(f64::NAN),
                    fields[1].parse().ok(),
                )
            }
            Metric::MeanSojourn => (s.mean_sojourn, s.mean_sojourn_ci95),
            Metric::P99Sojourn => (s.p99_sojourn, None),
            // As the CSV: no CI where nobody waited longer than t.
            Metric::PWaitGt(_) => (
                s.p_wait_gt[0],
                s.p_wait_gt_ci95[0].filter(|_| s.exceeded[0] > 0),
            ),
            // As the CSV: no CI where no request was lost.
            Metric::PLost(_) => (s.p_lost, s.p_lost_ci95.filter(|_| s.lost > 0)),
        }
    }

    /// The exact value, where the baseline is exact and gives this metric.
    pub fn exact(self, b: &Baseline) -> Option<f64> {
        if !b.method.starts_with("exact:") {
            return None;
        }
        match self {
            Metric::MeanWait => b.mean_wait,
            Metric::WaitPct(k) if WAIT_PERCENTILES[k].1 == 0.99 => b.p99_wait,
            Metric::PWaitGt(t) => b.p_wait_gt(t),
            Metric::PLost(_) => b.p_lost,
            _ => None,
        }
    }
}

/// `METRIC<=BOUND` (or `<`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    pub metric: Metric,
    pub bound: f64,
    /// `<` rather than `<=`.
    pub strict: bool,
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        let bad = |why: &str| {
            format!(
                "--target: '{}' is not a valid target ({why}); expected METRIC<=BOUND such as \
                 p99_wait<=0.1, METRIC one of {}",
                s.trim(),
                Metric::EXPECTED
            )
        };
        let (name, bound, strict) = if let Some((a, b)) = s.split_once("<=") {
            (a, b, false)
        } else if let Some((a, b)) = s.split_once('<') {
            (a, b, true)
        } else {
            return Err(bad("no <= or <"));
        };
        let metric = Metric::parse(name).ok_or_else(|| bad("unknown metric"))?;
        let bound: f64 = bound
            .trim()
            .parse()
            .ok()
            .filter(|b: &f64| b.is_finite() && *b >= 0.0)
            .ok_or_else(|| bad("the bound is not a number >= 0"))?;
        if metric == Metric::MeanSojourn && bound == 0.0 {
            // A sojourn includes its own service (mean > 0): no fleet meets
            // it, and the search would simulate up to its limit (issue 25).
            return Err(bad(
                "no fleet meets it: a sojourn includes its service, whose mean is > 0",
            ));
        }
        Ok(Target {
            metric,
            bound,
            strict,
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.strict { "<" } else { "<=" };
        write!(f, "{}{op}{}", self.metric.name(), self.bound)
    }
}

impl Target {
    fn holds(&self, x: f64) -> bool {
        if self.strict {
            x < self.bound
        } else {
            x <= self.bound
        }
    }
}

/// How one R was judged.
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    /// By the exact formula (the baseline's method).
    Exact(String),
    Simulated,
    /// ρ >= 1: waits grow without bound.
    Unstable,
    /// The requests in the system outgrew the dispatch kernel in some
    /// replication: the queue was growing far beyond any target.
    Overflow,
}

impl fmt::Display for How {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            How::Exact(m) => f.write_str(m),
            How::Simulated => f.write_str("simulated"),
            How::Unstable => f.write_str("unstable"),
            How::Overflow => f.write_str("overflow"),
        }
    }
}

/// The metric at one R.
#[derive(Clone, Debug, PartialEq)]
pub struct Eval {
    pub n: u32,
    pub value: f64,
    pub ci95: Option<f64>,
    pub how: How,
    /// Seconds spent simulating (0 when exact or reused).
    pub seconds: f64,
    /// The simulation was done before, for another target of the case.
    pub reused: bool,
    /// Read from the journal of an earlier, interrupted search (`--resume`).
    pub from_journal: bool,
}

impl Eval {
    pub fn unstable(n: u32) -> Eval {
        Eval {
            n,
            value: f64::INFINITY,
            ci95: None,
            how: How::Unstable,
            seconds: 0.0,
            reused: false,
            from_journal: false,
        }
    }

    /// Whether the point estimate meets the target.
    pub fn meets(&self, t: &Target) -> bool {
        !matches!(self.how, How::Unstable | How::Overflow) && t.holds(self.value)
    }

    /// `0.0123 ± 0.0004`, `0.0123 (exact)`, `unstable`.
    pub fn shown(&self) -> String {
        let num = crate::output::num;
        match (&self.how, self.ci95) {
            (How::Unstable | How::Overflow, _) => self.how.to_string(),
            (How::Exact(_), _) => format!("{} (exact)", num(self.value)),
            (How::Simulated, Some(ci)) => format!("{} ± {}", num(self.value), num(ci)),
            (How::Simulated, None) => format!("{} (no CI)", num(self.value)),
        }
    }
}

/// Whether the answer is certain.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Both R* and R*−1 were judged exactly (or R*−1 is unstable).
    Exact,
    /// The CIs put R* inside the target and R*−1 outside it.
    Resolved,
    /// The CIs cannot separate R* from its neighbours: why.
    Unresolved(String),
    /// Not met up to the search's limit.
    NotFound,
    /// Not met up to a limit the case itself sets (its capacity), which
    /// says why.
    NotFoundWithin(String),
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Exact => f.write_str("exact"),
            Verdict::Resolved => f.write_str("yes"),
            Verdict::Unresolved(why) => write!(f, "no: {why}"),
            Verdict::NotFound => f.write_str("not met"),
            Verdict::NotFoundWithin(why) => write!(f, "not met: {why}"),
        }
    }
}

/// What the search found.
#[derive(Clone, Debug)]
pub struct Sizing {
    /// The smallest R meeting the target (None: not up to the limit).
    pub answer: Option<Eval>,
    /// R*−1 (None when R* is 1).
    pub neighbour: Option<Eval>,
    pub verdict: Verdict,
    /// Every R judged, in the order judged.
    pub evaluations: Vec<Eval>,
}

/// The smallest `n` in `first..=max` whose evaluation meets `target`, by
/// stepping up (1, 2, 4, … past the last failure) then bisecting; `first`
/// is the smallest stable `n` (so `first − 1` counts as failing). Assumes
/// the metric does not increase with `n`.
pub fn search(
    first: u32,
    max: u32,
    target: &Target,
    eval: &mut dyn FnMut(u32) -> Result<Eval>,
) -> Result<Sizing> {
    let mut done: Vec<Eval> = Vec::new();
    let mut judge = |n: u32, done: &mut Vec<Eval>| -> Result<bool> {
        let e = eval(n)?;
        let ok = e.meets(target);
        done.push(e);
        Ok(ok)
    };
    let not_found = |done: Vec<Eval>| Sizing {
        answer: None,
        neighbour: None,
        verdict: Verdict::NotFound,
        evaluations: done,
    };
    if first > max {
        return Ok(not_found(done));
    }
    // Stepping up: `fail` failed (or is unstable), `ok` met the target.
    let mut fail = first - 1;
    let mut step = 1u64;
    let ok = loop {
        let n = (u64::from(fail) + step).min(u64::from(max)) as u32;
        if judge(n, &mut done)? {
            break n;
        }
        if n == max {
            return Ok(not_found(done));
        }
        fail = n;
        step *= 2;
    };
    let mut ok = ok;
    while ok - fail > 1 {
        let mid = fail + (ok - fail) / 2;
        if judge(mid, &mut done)? {
            ok = mid;
        } else {
            fail = mid;
        }
    }
    let find = |n: u32| done.iter().rev().find(|e| e.n == n).cloned();
    let answer = find(ok).expect("judged");
    let neighbour = match ok {
        1 => None,
        n if n == first => Some(Eval::unstable(n - 1)),
        n => Some(find(n - 1).expect("bisection judged n - 1")),
    };
    let verdict = verdict(target, &answer, neighbour.as_ref());
    Ok(Sizing {
        answer: Some(answer),
        neighbour,
        verdict,
        evaluations: done,
    })
}

/// Whether the CIs separate the answer from its neighbour.
fn verdict(t: &Target, answer: &Eval, neighbour: Option<&Eval>) -> Verdict {
    let exact = |e: &Eval| matches!(e.how, How::Exact(_) | How::Unstable | How::Overflow);
    if exact(answer) && neighbour.is_none_or(exact) {
        return Verdict::Exact;
    }
    let mut why = Vec::new();
    let ci_of = |e: &Eval| e.ci95.filter(|_| e.how == How::Simulated);
    if !exact(answer) {
        match ci_of(answer) {
            None => why.push(format!("{} has no CI", t.metric.name())),
            Some(ci) if !t.holds(answer.value + ci) => why.push(format!(
                "the CI at {} reaches above {}",
                answer.n,
                crate::output::num(t.bound)
            )),
            Some(_) => {}
        }
    }
    if let Some(nb) = neighbour.filter(|e| !exact(e)) {
        match ci_of(nb) {
            None => why.push(format!("no CI at {}", nb.n)),
            Some(ci) if t.holds(nb.value - ci) => why.push(format!(
                "the CI at {} reaches below {}",
                nb.n,
                crate::output::num(t.bound)
            )),
            Some(_) => {}
        }
    }
    if why.is_empty() {
        Verdict::Resolved
    } else {
        Verdict::Unresolved(why.join("; "))
    }
}

/// One sizing question: the spec narrowed to one value on every axis but
/// the searched one.
#[derive(Clone, Debug)]
pub struct Case {
    /// Every axis a single value; the searched axis is set by [`Case::at`].
    pub spec: Spec,
    pub over: Over,
    /// The smallest stable value of the searched axis.
    pub first: u32,
}

impl Case {
    /// The one-point spec with the searched axis at `n`.
    pub fn at(&self, n: u32) -> Spec {
        let mut s = self.spec.clone();
        match self.over {
            Over::Servers => s.servers = vec![n],
            Over::Workers => s.workers = vec![n],
        }
        s
    }

    /// The largest value of the searched axis, up to `max`, this case can
    /// take, and why when it is less than `max`: a capacity K holds the
    /// requests in service, so a queue of more than K servers (a central
    /// queue's whole fleet, a dyno's workers) cannot have it (issue 40:
    /// `size --capacity 10` grew central past K and then failed, dropping
    /// the answers already found).
    pub fn most(&self, max: u32) -> (u32, Option<String>) {
        let Some(k) = self.spec.capacity[0] else {
            return (max, None);
        };
        let s = &self.spec;
        let (routing, routers) = (s.routing[0], s.routers[0]);
        let queue = |n: u32| -> u64 {
            if routing.is_dynamic(routers) {
                return 1;
            }
            let (servers, workers) = match self.over {
                Over::Servers => (n, s.workers[0]),
                Over::Workers => (s.servers[0], n),
            };
            // A central queue's is the whole fleet (`Routing::shape`), in
            // u64: servers × workers may pass u32 at the search's limit.
            if routing == crate::routing::Routing::Central {
                return u64::from(servers) * u64::from(workers);
            }
            u64::from(routing.shape(servers, workers, routers).servers)
        };
        let k64 = u64::from(k);
        if queue(max) <= k64 {
            return (max, None);
        }
        // The queue grows with n: the largest n whose queue fits under K.
        let (mut lo, mut hi) = (0u32, max);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if queue(mid) <= k64 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let why = format!(
            "a capacity of {k} holds at most {k} requests in service, so at most {lo} {}",
            self.over.name()
        );
        (lo, Some(why))
    }

    /// `routing=pod choices=2 lambda=150` (and whatever else the spec
    /// varies), for messages.
    pub fn describe(&self, full: &Spec) -> String {
        let s = &self.spec;
        let mut parts = vec![format!("routing={}", s.routing[0])];
        if s.routing[0].takes_choices() {
            parts.push(format!("choices={}", s.choices[0]));
        }
        if s.routers[0] != DEFAULT_ROUTERS {
            parts.push(format!("routers={}", s.routers[0]));
        }
        match self.over {
            Over::Servers if full.workers.len() > 1 || s.workers[0] != 1 => {
                parts.push(format!("workers={}", s.workers[0]))
            }
            Over::Workers => parts.push(format!("servers={}", s.servers[0])),
            _ => {}
        }
        if full.arrival.len() > 1 {
            parts.push(format!("arrival={}", s.arrival[0].text()));
        }
        if full.load.len() > 1 {
            parts.push(format!("lambda={}", s.load[0].value()));
        }
        if full.service.len() > 1 {
            parts.push(format!("service={}", s.service[0].text()));
        }
        parts.join(" ")
    }
}

/// The cases of a spec: its grid without the searched axis, in grid order.
/// The load must be an arrival rate (a `rho` grows with the servers, so
/// there is nothing to size).
pub fn cases(spec: &Spec, over: Over) -> Result<Vec<Case>, SpecError> {
    if spec.has_fleet() {
        return Err(SpecError(
            "size: speeds: searching over mixed fleets is not supported yet; expected a spec \
             with servers (identical dynos)"
                .into(),
        ));
    }
    if spec.load.iter().any(|l| matches!(l, Load::Rho(_))) {
        return Err(SpecError(
            "size: the load is given as rho, which scales with the servers; expected --lambda \
             (the arrival rate the fleet must serve)"
                .into(),
        ));
    }
    let fixed = match over {
        Over::Servers => &spec.workers,
        Over::Workers => &spec.servers,
    };
    let mut out = Vec::new();
    for &routing in &spec.routing {
        let choices = if routing.takes_choices() {
            spec.choices.clone()
        } else {
            vec![DEFAULT_CHOICES]
        };
        let routers = if routing.takes_routers() {
            spec.routers.clone()
        } else {
            vec![DEFAULT_ROUTERS]
        };
        for &d in &choices {
            for &k in &routers {
                for &other in fixed {
                    for arrival in &spec.arrival {
                        for &load in &spec.load {
                            for service in &spec.service {
                                let mut s = spec.clone();
                                s.routing = vec![routing];
                                s.choices = vec![d];
                                s.routers = vec![k];
                                s.arrival = vec![arrival.clone()];
                                s.load = vec![load];
                                s.service = vec![service.clone()];
                                s.ranges = Ranges::default();
                                let (servers, workers) = match over {
                                    Over::Servers => (1, other),
                                    Over::Workers => (other, 1),
                                };
                                s.servers = vec![servers];
                                s.workers = vec![workers];
                                // Stable once n·other > λ·E[S].
                                let offered = load.value() * service.mean() / f64::from(other);
                                if !(offered.is_finite() && offered < f64::from(u32::MAX) - 1.0) {
                                    return Err(SpecError(format!(
                                        "size: routing={routing} lambda={}: the offered load \
                                         {offered:e} is too large; expected fewer than {} \
                                         busy {}",
                                        load.value(),
                                        u32::MAX,
                                        over.name()
                                    )));
                                }
                                let first = offered.floor() as u32 + 1;
                                if over == Over::Workers && routing.is_dynamic(k) {
                                    return Err(SpecError(format!(
                                        "size: --over workers with routing={routing}: it \
                                         dispatches to single-worker servers; expected \
                                         --over servers"
                                    )));
                                }
                                out.push(Case {
                                    spec: s,
                                    over,
                                    first,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(s: &str) -> Target {
        s.parse().unwrap()
    }

    /// A decreasing metric 100/n with a CI of `ci`.
    fn curve(ci: f64) -> impl FnMut(u32) -> Result<Eval> {
        move |n| {
            Ok(Eval {
                n,
                value: 100.0 / f64::from(n),
                ci95: Some(ci),
                how: How::Simulated,
                seconds: 0.0,
                reused: false,
                from_journal: false,
            })
        }
    }

    #[test]
    fn targets_parse_and_print() {
        let t = target(" p99_wait <= 0.1 ");
        assert_eq!(t.metric, Metric::WaitPct(3));
        assert_eq!((t.bound, t.strict), (0.1, false));
        assert_eq!(t.to_string(), "p99_wait<=0.1");
        assert_eq!(target("mean_wait<2").to_string(), "mean_wait<2");
        assert_eq!(
            target("q0.9999_wait<=1").metric,
            Metric::WaitQuantile(0.9999)
        );
        assert_eq!(target("p999_wait<=1").metric.name(), "p999_wait");
        let slo = target("p_wait_gt_30<=0.001");
        assert_eq!(slo.metric, Metric::PWaitGt(30.0));
        assert_eq!(slo.to_string(), "p_wait_gt_30<=0.001");
        assert_eq!(slo.metric.slo(), Some(30.0));
        for bad in [
            "p99_wait",
            "mean_sojourn<=0",
            "p98_wait<=1",
            "mean_wait<=-1",
            "mean_wait<=x",
            "q1_wait<=1",
            "p_wait_gt_x<=1",
            "p_wait_gt_-1<=0.1",
        ] {
            let e = bad.parse::<Target>().unwrap_err();
            assert!(
                e.starts_with(&format!("--target: '{bad}' is not a valid target")),
                "{e}"
            );
        }
    }

    #[test]
    fn the_search_finds_the_smallest_n_in_few_evaluations() {
        // 100/n <= 0.7 first at n = 143.
        let t = target("mean_wait<=0.7");
        let s = search(3, 100_000, &t, &mut curve(0.0)).unwrap();
        assert_eq!(s.answer.as_ref().unwrap().n, 143);
        assert_eq!(s.neighbour.as_ref().unwrap().n, 142);
        assert_eq!(s.verdict, Verdict::Resolved);
        assert!(s.evaluations.len() <= 2 * 8 + 2, "{}", s.evaluations.len());
        // Met at the first stable n: the neighbour is unstable.
        let s = search(200, 1000, &t, &mut curve(0.0)).unwrap();
        assert_eq!(s.answer.unwrap().n, 200);
        assert_eq!(s.neighbour.unwrap().how, How::Unstable);
        assert_eq!(s.evaluations.len(), 1);
        // Never met below the limit.
        let s = search(3, 120, &t, &mut curve(0.0)).unwrap();
        assert_eq!((s.answer, s.verdict), (None, Verdict::NotFound));
        // n = 1 meets: no neighbour at all.
        let s = search(1, 10, &target("mean_wait<=1000"), &mut curve(0.0)).unwrap();
        assert_eq!((s.answer.unwrap().n, s.neighbour), (1, None));
    }

    #[test]
    fn wide_cis_leave_the_answer_unresolved() {
        let t = target("mean_wait<=0.7");
        let s = search(3, 100_000, &t, &mut curve(0.01)).unwrap();
        assert_eq!(s.answer.unwrap().n, 143);
        // 100/143 = 0.6993 + 0.01 > 0.7; 100/142 = 0.7042 - 0.01 < 0.7.
        assert_eq!(
            s.verdict,
            Verdict::Unresolved(
                "the CI at 143 reaches above 0.7; the CI at 142 reaches below 0.7".into()
            )
        );
        let exact = |n: u32| {
            Ok(Eval {
                n,
                value: 100.0 / f64::from(n),
                ci95: None,
                how: How::Exact("exact:mm1".into()),
                seconds: 0.0,
                reused: false,
                from_journal: false,
            })
        };
        let s = search(3, 100_000, &t, &mut { exact }).unwrap();
        assert_eq!(s.verdict, Verdict::Exact);
    }
}
