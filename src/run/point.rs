//! A grid point made ready for the engines: its flat [`PointParams`], its
//! analytic baseline, and what the run loop reports when it is done.

use anyhow::Result;

use super::precision::Precision;
use crate::analytic::{self, Baseline, Policy, QueueInput};
use crate::contract::{rep_status, PointParams};
use crate::engine::Engine;
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
    let shape = g.routing.shape(g.servers, g.workers, g.routers);
    let seed = spec.run.seed;
    PointParams {
        arrival: g.arrival.to_law(table),
        service: g.service.to_law(table),
        kernel: shape.kernel.code(),
        thinning: shape.thinning.code(),
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
    }
}

/// The analytic baseline of a grid point.
pub fn baseline(g: &GridPoint) -> Baseline {
    analytic::baseline(&QueueInput {
        policy: match g.routing {
            Routing::Random => Policy::Random,
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
    })
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
}

/// A point whose replications overflowed the dispatch kernel (see
/// [`check_overflow`]): typed so that `qsweep size` can tell "the queue
/// grew without bound here" from a failing engine.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct QueueOverflow(pub String);

/// Fails when any of a point's replications overflowed the dispatch
/// kernel's capacity (their numbers are meaningless).
pub fn check_overflow(p: &PreparedPoint, reps: &[crate::contract::RepResult]) -> Result<()> {
    let n = reps.len();
    let overflowed = reps
        .iter()
        .filter(|r| r.status & rep_status::QUEUE_OVERFLOW != 0)
        .count();
    if overflowed > 0 {
        let g = &p.grid;
        return Err(QueueOverflow(format!(
            "grid point {} (routing={} servers={} lambda={} rho={:.3}): the requests in \
             the system outgrew the dispatch kernel's capacity of {} in {overflowed} of \
             {n} replications; lower the load (or simulate fewer customers per \
             replication)",
            g.index,
            g.routing,
            g.servers,
            g.lambda,
            g.rho,
            crate::contract::dispatch::capacity(g.servers)
        ))
        .into());
    }
    Ok(())
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
