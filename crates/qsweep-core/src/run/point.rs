//! A grid point made ready for the engines: its flat [`PointParams`], its
//! analytic baseline, and what the run loop reports when it is done.

use super::precision::Precision;
use crate::analytic::{self, Baseline, Policy, QueueInput};
use crate::contract::{dispatch, rep_status, PointParams, RepResult};
use crate::engine::{schedule, Engine};
use crate::export::Table;
use crate::output;
use crate::routing::Routing;
use crate::spec::{GridPoint, Spec};
use crate::stats::PointStats;

/// A grid point with its engine parameters.
pub struct PreparedPoint {
    pub grid: GridPoint,
    pub params: PointParams,
    /// Histogram scale (the service mean): bins are relative to it.
    pub scale: f64,
    /// `warmup = "auto"`: `params.warmup` is chosen by a pilot run
    /// ([`super::warmup::resolve`], which must run before the engines).
    pub warmup_auto: bool,
    /// The pilot that chose `params.warmup` (`warmup_auto` only).
    pub pilot: Option<Pilot>,
    /// Add replications in rounds until this precision (see `precision`).
    pub precision: Option<Precision>,
}

impl PreparedPoint {
    /// Histogram sections each of `reps` replications is cut into
    /// (`PointParams::rep_sections`, by `engine::schedule::sections_per_rep`):
    /// one unless the replications are few and long against the queue's
    /// relaxation time, and never for a non-renewal arrival stream (an MMPP
    /// or a trace: its correlations outlast the renewal time scale).
    pub fn rep_sections(&self, reps: u32) -> u32 {
        if self.params.arrival.kind().is_stateful() {
            return 1;
        }
        let g = &self.grid;
        match schedule::min_section_customers(g.rho, g.arrival.scv(), g.service.scv()) {
            Some(min) => schedule::sections_per_rep(reps, self.params.customers, min),
            None => 1,
        }
    }
}

/// Engine parameters for every point, and the shared empirical table.
pub fn prepare(spec: &Spec, points: Vec<GridPoint>) -> (Vec<PreparedPoint>, Vec<f32>) {
    let mut table = Vec::new();
    let prepared = points
        .into_iter()
        .map(|g| {
            let params = point_params(spec, &g, &mut table);
            let scale = 1.0 / f64::from(params.inv_hist_scale);
            PreparedPoint {
                grid: g,
                params,
                scale,
                warmup_auto: spec.run.warmup_auto,
                pilot: None,
                precision: spec.run.precision.map(|target| Precision {
                    target,
                    max_customers: spec.run.max_customers,
                }),
            }
        })
        .collect();
    if table.is_empty() {
        table.push(0.0);
    }
    (prepared, table)
}

/// What the `--warmup auto` pilot of a point found (`super::warmup`).
#[derive(Clone, Copy, Debug, PartialEq)]
/// The outcome of one point's pilot.
pub struct Pilot {
    /// Customers per pilot replication (the last pilot, after doubling).
    pub customers: u32,
    /// Pilot replications.
    pub reps: u32,
    /// Customers per MSER batch.
    pub batch: u32,
    /// The truncation MSER chose, in customers.
    pub truncation: u32,
    /// The warm-up to use (rounded up, floored, capped).
    pub warmup: u32,
    /// See [`super::warmup::Mser::at_limit`]: even the longest pilot saw no end of the
    /// transient, so `warmup` may be too short.
    pub at_limit: bool,
}

/// The flat engine record of one grid point.
pub fn point_params(spec: &Spec, g: &GridPoint, table: &mut Vec<f32>) -> PointParams {
    match &g.fleet {
        Some(fleet) if !fleet.is_plain() => {
            // The whole system's stream, never a thinned one.
            with_fleet(point_params_plain(spec, g, table, false), g, fleet)
        }
        // A fleet of speed-1 dynos is the servers axis's fleet, to the bit.
        _ => point_params_plain(spec, g, table, true),
    }
}

/// A mixed fleet's record: every policy on the dispatch kernel
/// (`Routing::fleet_policy`, validated with the spec), the stream unthinned,
/// the classes fastest first.
fn with_fleet(plain: PointParams, g: &GridPoint, fleet: &crate::fleet::Fleet) -> PointParams {
    let policy = g
        .routing
        .fleet_policy(g.routers)
        .expect("validated: the spec refuses a fleet for this routing");
    let mut p = PointParams {
        arrival: plain.arrival,
        kernel: crate::contract::Kernel::Dispatch.code(),
        thinning: crate::contract::Thinning::None.code(),
        servers: fleet.servers(),
        route_n: policy.code(),
        fleet_classes: fleet.classes.len() as u32,
        ..plain
    };
    let total_speed = fleet.capacity();
    let (mut end, mut share) = (0u32, 0.0f64);
    for (slot, &c) in fleet.engine_order().iter().enumerate() {
        let class = fleet.classes[c];
        end += class.count;
        share += f64::from(class.count) * class.speed / total_speed;
        p.fleet_end[slot] = end;
        p.fleet_time[slot] = (1.0 / class.speed) as f32;
        p.fleet_pick[slot] = (share * 4_294_967_296.0).min(f64::from(u32::MAX)) as u32;
    }
    for slot in fleet.classes.len()..crate::contract::MAX_FLEET_CLASSES {
        p.fleet_end[slot] = end;
        p.fleet_pick[slot] = u32::MAX;
    }
    p.fleet_pick[fleet.classes.len() - 1] = u32::MAX;
    p.with_ln_keep()
}

/// The record of a point of identical dynos.
fn point_params_plain(spec: &Spec, g: &GridPoint, table: &mut Vec<f32>, thin: bool) -> PointParams {
    let shape = g.routing.shape(g.servers, g.workers, g.routers);
    let seed = spec.run.seed;
    // A capacity needs the number in system, which Lindley's recursion does
    // not know: a limited one-server queue runs on the Kiefer–Wolfowitz
    // kernel (c = 1), which keeps the ring of start times.
    let kernel = match (shape.kernel, g.capacity) {
        (crate::contract::Kernel::Lindley, Some(_)) => crate::contract::Kernel::KieferWolfowitz,
        (k, _) => k,
    };
    // An MMPP routed at random: each queue sees the MMPP with rates r/R
    // (`Dist::thinned_at_random`), drawn directly, one draw per customer,
    // instead of the stream thinned in the kernel.
    let (arrival, thinning) = match g.arrival.thinned_at_random(shape.route_n) {
        Some(thinned) if thin && shape.thinning == crate::contract::Thinning::Random => {
            (thinned, crate::contract::Thinning::None)
        }
        _ => (g.arrival.clone(), shape.thinning),
    };
    PointParams {
        arrival: arrival.to_law(table),
        service: g.service.to_law(table),
        kernel: kernel.code(),
        thinning: thinning.code(),
        servers: shape.servers,
        route_n: shape.route_n,
        customers: spec.run.customers,
        warmup: spec.run.warmup,
        seed_lo: seed as u32,
        seed_hi: (seed >> 32) as u32,
        point_index: g.index,
        inv_hist_scale: (1.0 / g.service.mean()) as f32,
        choices: g.choices.unwrap_or(0),
        routers: g.routers,
        // The first capacity; the run loop grows it where replications
        // overflow (see `rounds`, growing dispatch queues).
        capacity: 0,
        // `--slo`'s thresholds, rounded to the f32 the recorder compares
        // waits with (the unused slots count waits above 0, never read).
        slo: std::array::from_fn(|k| spec.run.slo.get(k).map_or(0.0, |&t| t as f32)),
        // Patience: its law, drawn per request after its service (none:
        // nothing is drawn, the plain queue).
        reneging: g.reneging.code(),
        patience: g
            .patience
            .as_ref()
            .map_or_else(crate::contract::Law::default, |d| d.to_law(table)),
        system_limit: g.capacity.unwrap_or(0),
        ..PointParams::default()
    }
    .with_ln_keep()
}

/// `qsweep analytic`'s table: each grid point's axes and analytic baseline
/// (the CLI prints or writes it, the Python module returns it as a frame).
pub fn analytic_table(spec: &Spec) -> Table {
    Table {
        header: output::ANALYTIC_COLUMNS.map(String::from).to_vec(),
        rows: spec
            .points()
            .iter()
            .map(|p| output::analytic_fields(p, &baseline(p)))
            .collect(),
    }
}

/// The analytic baseline of a grid point (with its patience, if any:
/// `analytic::patience`; with its capacity: `analytic::capacity`).
pub fn baseline(g: &GridPoint) -> Baseline {
    let q = queue_input(g);
    if let Some(fleet) = g.fleet.as_ref().filter(|f| !f.is_plain()) {
        return analytic::fleet::baseline(&q, g.routing, fleet);
    }
    if let Some(k) = g.capacity {
        return analytic::capacity::with_capacity(&q, k);
    }
    let plain = analytic::baseline(&q);
    match &g.patience {
        Some(patience) => analytic::patience::with_patience(
            &q,
            plain,
            &patience.law_moments(),
            g.reneging,
            &|x| 1.0 - g.service.cdf(x),
        ),
        None => plain,
    }
}

/// The queue the formulas see at a grid point.
fn queue_input(g: &GridPoint) -> QueueInput {
    QueueInput {
        policy: match g.routing {
            // Equal dynos: weighting by speed is choosing uniformly.
            Routing::Random | Routing::Weighted => Policy::Random,
            Routing::RoundRobin => Policy::RoundRobin,
            Routing::Central if g.routers > 1 => Policy::CentralRouters { routers: g.routers },
            Routing::Central => Policy::Central,
            Routing::Jsq => Policy::Jsq { routers: g.routers },
            Routing::Pod => Policy::Pod {
                d: g.choices
                    .unwrap_or(crate::spec::DEFAULT_CHOICES)
                    .clamp(1, g.servers.max(1)),
                routers: g.routers,
            },
            Routing::Jiq => Policy::Jiq { routers: g.routers },
            Routing::Lwl => Policy::Lwl,
        },
        servers: g.servers,
        workers: g.workers,
        lambda: g.lambda,
        arrival: g.arrival.law_moments(),
        service: g.service.law_moments(),
    }
}

/// One finished point.
pub struct PointResult<'a> {
    pub point: &'a PreparedPoint,
    pub stats: PointStats,
    /// The point's wait histograms, one per section (`HIST_BINS` counts
    /// each, scaled by `point.scale`): for `--quantiles` and `--hist`.
    pub hist: Vec<Vec<u64>>,
    pub seconds: f64,
    /// Under `precision`: whether the CIs reached it (false: the point hit
    /// `max_customers`). None for runs of fixed length.
    pub converged: Option<bool>,
    /// Dispatch policies that hold per-request state (all but `lwl`): the
    /// most requests any replication held at once, which shows how far an
    /// unstable point's queue grew. None for the other policies.
    pub max_in_system: Option<u32>,
    /// Why the point has no statistics (its row's `error` column; `stats`
    /// is then empty): the point failed, the sweep went on.
    pub error: Option<String>,
}

/// The end of a sweep in which some points failed: every point has its row,
/// and these rows carry an error instead of statistics (`qsweep run` exits
/// with code 3).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{} of {total} points failed (their rows have an error and no statistics): points {}{}",
    points.len(),
    points.iter().take(10).map(u32::to_string).collect::<Vec<_>>().join(", "),
    if points.len() > 10 { ", ..." } else { "" }
)]
pub struct PointsFailed {
    pub points: Vec<u32>,
    /// Points in the CSV.
    pub total: u64,
}

/// Why a point fails when some of its replications still overflowed at the
/// largest capacity the memory limit allows (their numbers are
/// meaningless), or None.
pub fn overflow_error(p: &PreparedPoint, reps: &[RepResult], capacity: u32) -> Option<String> {
    let n = reps.len();
    let overflowed = reps
        .iter()
        .filter(|r| r.status & rep_status::QUEUE_OVERFLOW != 0)
        .count();
    if overflowed == 0 {
        return None;
    }
    let g = &p.grid;
    let why = if g.stable {
        "lower the load, or simulate fewer customers per replication"
    } else {
        "the point is unstable (rho >= 1) and its queue grows without bound; simulate fewer \
         customers per replication"
    };
    Some(format!(
        "grid point {} (routing={} servers={} lambda={} rho={:.3}): the requests in the system \
         outgrew the memory limit of {} MiB of dispatch state per replication (a capacity of \
         {capacity} requests) in {overflowed} of {n} replications; {why}",
        g.index,
        g.routing,
        g.servers,
        g.lambda,
        g.rho,
        mib(dispatch::state_limit_bytes(&p.params)),
    ))
}

/// Bytes in MiB, to one decimal where not whole.
pub fn mib(bytes: u64) -> String {
    let m = bytes as f64 / f64::from(1 << 20);
    if m.fract() == 0.0 {
        format!("{m}")
    } else {
        format!("{m:.1}")
    }
}

/// The context of an engine error: the engine and the grid points of the
/// failing call, so the user knows which point to look at.
pub fn failed_on(engine: &dyn Engine, first: &GridPoint, last: &GridPoint) -> String {
    format!(
        "{} failed on grid points {}..={} (first: routing={} servers={} lambda={})",
        engine.label(),
        first.index,
        last.index,
        first.routing,
        first.servers,
        first.lambda
    )
}
