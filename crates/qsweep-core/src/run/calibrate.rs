//! What choosing an engine measures, engine-agnostic: the [`Chosen`] engine
//! and its reason, the [`Sample`] of a sweep's own points `--backend auto`
//! calibrates on ([`calibration_sample`]), and an engine's speed on it
//! ([`calibrate_on`]). Which engines are tried, and how the faster is
//! taken, is `qsweep_backend::backend` (crates/qsweep-backend), which knows
//! the GPU engine; the run loop takes its chooser as an argument
//! ([`Session::choose_engine`](crate::run::session::Session::choose_engine)).

use anyhow::Result;

use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{PointParams, MIN_SEGMENT_CUSTOMERS};
use crate::engine::schedule::tiles_for_points;
use crate::engine::{Batch, Engine};
use crate::spec::Backend;

/// An opened engine and why it was chosen.
pub struct Chosen {
    pub engine: Box<dyn Engine>,
    pub reason: String,
}

/// What opens the engine a run asks for, given its `--backend`,
/// `--adapter`, `--threads` and calibration sample:
/// `qsweep_backend::backend::choose_for`, passed in by each front end, so
/// that the run loop needs no engine but the one it is handed.
pub type Choose = dyn Fn(Backend, Option<&str>, usize, &Sample) -> Result<Chosen>;

/// Points `auto` calibrates on: the sweep's own (see [`calibration_sample`]);
/// a sweep has at least one point, so the sample is never empty.
pub struct Sample<'a> {
    pub params: &'a [PointParams],
    pub table: &'a [f32],
}

/// Customers per replication of a calibration point: enough for four
/// one-server segments ([`MIN_SEGMENT_CUSTOMERS`] each), so that a GPU
/// runs them as it runs the sweep (side by side on hardware), and short
/// enough for a calibration to take a fraction of a second.
pub const CALIBRATION_CUSTOMERS: u32 = 4 * MIN_SEGMENT_CUSTOMERS;

/// Seconds a calibration's timed batch may run, at most, on each engine:
/// the watch stops it there (between a GPU's passes) and the customers so
/// far count.
pub const CALIBRATION_DEADLINE_SECONDS: f64 = 0.5;

/// Up to one point per distinct pipeline (kernel, laws, thinning) of a sweep,
/// shortened for calibration: [`CALIBRATION_CUSTOMERS`] per replication, no
/// warm-up.
pub fn calibration_sample(points: &[PointParams]) -> Vec<PointParams> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for p in points {
        let key = (
            p.kernel,
            p.arrival.kind,
            p.service.kind,
            p.thinning,
            p.route_n.min(2),
        );
        if seen.contains(&key) || out.len() >= 6 {
            continue;
        }
        seen.push(key);
        let mut q = *p;
        q.customers = CALIBRATION_CUSTOMERS;
        q.warmup = 0;
        q.point_index = out.len() as u32;
        out.push(q);
    }
    out
}

/// An engine's speed on a calibration sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub customers_per_second: f64,
    /// Loop iterations per second (customers weighted by
    /// `loop_cost_per_customer`): the run loop's unit of work.
    pub loops_per_second: f64,
}

/// The speed of `engine` on `sample`, after a warm-up call that compiles
/// its pipelines: one batch as wide as the engine fills
/// ([`CallSizing::fill_reps`] replications over the sample's points, at
/// least 128 of each: a GPU measured on a few hundred replications reads as
/// slow as its launch latency), timed until it ends or
/// [`CALIBRATION_DEADLINE_SECONDS`] pass.
///
/// [`CallSizing::fill_reps`]: crate::engine::CallSizing::fill_reps
pub fn calibrate_on(engine: &mut dyn Engine, sample: &Sample) -> Result<Measured> {
    let points = sample.params.len().max(1) as u64;
    let warm: Vec<PointParams> = sample
        .params
        .iter()
        .map(|p| PointParams {
            customers: 100,
            ..*p
        })
        .collect();
    let (tiles, slots) = tiles_for_points(warm.len() as u32, 64);
    engine.run(&Batch {
        params: &warm,
        tiles: &tiles,
        table: sample.table,
        slots,
    })?;
    let reps = engine
        .call_sizing()
        .fill_reps
        .div_ceil(points)
        .clamp(128, u64::from(u32::MAX)) as u32;
    let (tiles, slots) = tiles_for_points(sample.params.len() as u32, reps);
    let batch = Batch {
        params: sample.params,
        tiles: &tiles,
        table: sample.table,
        slots,
    };
    let (customers, seconds) =
        super::estimate::timed_batch(engine, &batch, CALIBRATION_DEADLINE_SECONDS)?;
    let seconds = seconds.max(1e-9);
    // The sample's points all have the same customers and replications:
    // a customer costs their mean loop cost.
    let cost = sample
        .params
        .iter()
        .map(|p| loop_cost_per_customer(p) as f64)
        .sum::<f64>()
        / points as f64;
    Ok(Measured {
        customers_per_second: customers / seconds,
        loops_per_second: customers * cost / seconds,
    })
}
