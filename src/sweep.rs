//! Running a sweep: grid points → engine parameters → engine → statistics →
//! CSV rows, written as each point completes.
//!
//! Points are packed into chunks (many points per engine call, so a GPU has
//! thousands of replications in flight) but rows still appear in grid order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::analytic::{self, Baseline, Family, LawMoments, Policy, QueueInput};
use crate::contract::{rep_status, PointParams, HIST_BINS};
use crate::dist::Dist;
use crate::engine::schedule::tiles_for_point;
use crate::engine::{Batch, Engine};
use crate::routing::Routing;
use crate::spec::{GridPoint, Spec};
use crate::stats::{point_stats, PointStats};

/// Replications packed into one engine call, at most.
pub const CHUNK_REPS: u64 = 1 << 16;
/// Customers (warm-up included) packed into one engine call, at most: a
/// chunk's rows wait for the whole chunk, so this bounds that delay.
pub const CHUNK_CUSTOMERS: f64 = 4e9;

/// A grid point with its engine parameters.
pub struct PreparedPoint {
    pub grid: GridPoint,
    pub params: PointParams,
    /// Histogram scale (the service mean): bins are relative to it.
    pub scale: f64,
    /// `warmup = "auto"`: `params.warmup` is chosen by a pilot run
    /// ([`crate::warmup::resolve`], which must run before the engines).
    pub warmup_auto: bool,
    /// The pilot that chose `params.warmup` (`warmup_auto` only).
    pub pilot: Option<crate::warmup::Pilot>,
    /// Add replications in rounds until this precision (see `precision`).
    pub precision: Option<crate::precision::Precision>,
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
                precision: spec
                    .run
                    .precision
                    .map(|target| crate::precision::Precision {
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

fn moments(d: &Dist) -> LawMoments {
    let family = match d.name() {
        "exp" => Family::Exp,
        "det" => Family::Det,
        "erlang" => Family::Erlang {
            k: d.erlang_k().unwrap_or(1),
        },
        "gamma" => Family::Gamma {
            shape: d.gamma_shape().unwrap_or(1.0),
        },
        "hyperexp" => Family::HyperExp,
        "lognormal" => Family::Lognormal,
        "weibull" => Family::Weibull,
        "pareto" => Family::Pareto,
        "uniform" => Family::Uniform,
        _ => Family::Empirical,
    };
    LawMoments {
        family,
        mean: d.mean(),
        scv: d.scv(),
        clamped: d.is_clamped(),
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
        arrival: moments(&g.arrival),
        service: moments(&g.service),
    })
}

/// One finished point.
pub struct PointResult<'a> {
    pub point: &'a PreparedPoint,
    pub stats: PointStats,
    pub seconds: f64,
    /// Under `precision`: whether the CIs reached it (false: the point hit
    /// `max_customers`). None for runs of fixed length.
    pub converged: Option<bool>,
}

/// Simulate `points` on `engine`, calling `on_point` for each finished point
/// in grid order. Errors name the points of the failing chunk.
pub fn run_points<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
) -> Result<()> {
    run_points_until(
        points,
        table,
        reps,
        engine,
        on_point,
        &AtomicBool::new(false),
    )
}

/// A run stopped by [`run_points_until`]'s flag (Ctrl-C): every point
/// reported before it is complete.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// [`run_points`] that stops when `stop` is set: it is checked before each
/// chunk, so the chunk in flight still finishes and all of its points (already
/// simulated) are reported; then it returns an [`Interrupted`] error.
pub fn run_points_until<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
) -> Result<()> {
    if let Some(p) = points.iter().find(|p| p.warmup_auto && p.pilot.is_none()) {
        anyhow::bail!(
            "grid point {}: warmup = \"auto\" but no pilot has chosen its warm-up (call \
             warmup::resolve before running the points)",
            p.grid.index
        );
    }
    if points.iter().any(|p| p.precision.is_some()) {
        return crate::precision::run_points_until(points, table, reps, engine, on_point, stop);
    }
    let mut start = 0;
    while start < points.len() {
        if stop.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        let end = chunk_end(points, start, |_| reps);
        let chunk = &points[start..end];
        let params: Vec<PointParams> = chunk.iter().map(|p| p.params).collect();
        let mut tiles = Vec::new();
        let mut slot_ranges = Vec::new();
        let mut slots = 0;
        for i in 0..chunk.len() {
            let (t, n) = tiles_for_point(i as u32, reps, slots);
            tiles.extend(t);
            slot_ranges.push(slots..slots + n);
            slots += n;
        }
        let batch = Batch {
            params: &params,
            tiles: &tiles,
            table,
            slots,
        };
        let started = Instant::now();
        let out = engine
            .run(&batch)
            .with_context(|| failed_on(engine, &chunk[0].grid, &chunk[chunk.len() - 1].grid))?;
        let seconds = started.elapsed().as_secs_f64();
        let per_slot = HIST_BINS as usize;
        // Tiles of a point are contiguous, so are its results.
        let mut rep_offset = 0usize;
        let total: f64 = chunk
            .iter()
            .map(|p| f64::from(p.params.customers) + f64::from(p.params.warmup))
            .sum();
        for (i, p) in chunk.iter().enumerate() {
            let n = reps as usize;
            let rep_slice = &out.reps[rep_offset..rep_offset + n];
            rep_offset += n;
            let batches: Vec<&[u64]> = slot_ranges[i]
                .clone()
                .map(|s| &out.hist[s as usize * per_slot..(s as usize + 1) * per_slot])
                .collect();
            let stats = point_stats(rep_slice, &batches, p.scale, &|x| p.grid.service.cdf(x));
            check_overflow(p, rep_slice)?;
            // Time is shared by the chunk's points in proportion to their work.
            let share = (f64::from(p.params.customers) + f64::from(p.params.warmup)) / total;
            on_point(PointResult {
                point: p,
                stats,
                seconds: seconds * share,
                converged: None,
            })?;
        }
        start = end;
    }
    Ok(())
}

/// Fails when any of a point's replications overflowed the dispatch
/// kernel's capacity (their numbers are meaningless).
pub(crate) fn check_overflow(p: &PreparedPoint, reps: &[crate::contract::RepResult]) -> Result<()> {
    let n = reps.len();
    let overflowed = reps
        .iter()
        .filter(|r| r.status & rep_status::QUEUE_OVERFLOW != 0)
        .count();
    if overflowed > 0 {
        let g = &p.grid;
        anyhow::bail!(
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
        );
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

/// End of the chunk of points that starts at `start`: it grows while the
/// replications (`reps_of` each) and customers stay within [`CHUNK_REPS`] and
/// [`CHUNK_CUSTOMERS`], and always holds at least one point.
pub fn chunk_end(
    points: &[PreparedPoint],
    start: usize,
    reps_of: impl Fn(&PreparedPoint) -> u32,
) -> usize {
    let mut end = start;
    let (mut chunk_reps, mut chunk_customers) = (0u64, 0f64);
    while end < points.len() {
        let p = &points[end];
        let n = reps_of(p);
        let c = f64::from(n) * (f64::from(p.params.customers) + f64::from(p.params.warmup));
        if end > start
            && (chunk_reps + u64::from(n) > CHUNK_REPS || chunk_customers + c > CHUNK_CUSTOMERS)
        {
            break;
        }
        chunk_reps += u64::from(n);
        chunk_customers += c;
        end += 1;
    }
    end
}
