//! What a run will cost before it runs: its memory, checked against the
//! limit of [`crate::memory`] before anything is allocated (a refusal names
//! the field), and its time, from a sub-second calibration on the chosen
//! engine (`qsweep run --dry-run`, and the estimate a long run prints
//! before it starts).
//!
//! # Memory (host)
//! The grid (every point's parameters and CSV row,
//! [`memory::GRID_POINT_BYTES`] each, checked by the spec before the grid
//! is expanded); each point in flight, its replications' results
//! ([`REP_BYTES`] each: the results, the round's buffer and the statistics'
//! copies) and its section histograms; the window of points in flight
//! (at most [`WINDOW_BYTES`] beyond the largest point); one engine call's
//! results (at most [`CHUNK_REPS`] replications, on a GPU
//! [`HARDWARE_CALL_REPS`](crate::engine::HARDWARE_CALL_REPS)) and
//! histograms; and the
//! CPU engine's per-thread queue state for the largest queue
//! (Kiefer–Wolfowitz heaps of [`LANES`] replications, or the dispatch
//! kernel's servers, heap, router counts and queues at their first
//! capacity), twice over for `Vec` growth. A dispatch queue that outgrows
//! its first capacity grows during the run, up to
//! `dispatch::state_limit_bytes` (16 MiB for all but the largest systems)
//! per thread; that is not counted here.
//!
//! # Memory (device)
//! One call's buffers: results, histograms, lane states, and the queue
//! state of the largest dispatch, which the GPU engine's plan caps at the
//! adapter's binding size (at most 1 GiB), refusing a point whose one tile
//! needs more.
//!
//! # Time
//! Each kind of point (kernel, laws, thinning) is timed on the engine with
//! short replications for about [`CALIBRATION_SECONDS`] in all, the call
//! stopped by its watch at the deadline and the customers it simulated
//! counted; a point's time is its work (customers × the kernel's loop cost
//! per customer) over its kind's measured rate.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::point::PreparedPoint;
use super::precision::MAX_REPS;
use super::rounds::{first_round, rep_customers, rep_work, CHUNK_REPS, WINDOW_BYTES};
use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{
    dispatch, DispatchPolicy, Kernel, PointParams, RepResult, HIST_BINS, HIST_WORDS_PER_BIN,
    TILE_REPS,
};
use crate::engine::cpu::LANES;
use crate::engine::schedule::{batch_start, hist_batches, tiles_for_point};
use crate::engine::{Batch, Cancelled, Engine, Watch};
use crate::memory::{self, human, Limit};
use crate::UsageError;

/// Host bytes per replication of a point in flight: its result, its copy
/// in the round's buffer, and the statistics' per-replication values.
pub const REP_BYTES: u64 = 4 * std::mem::size_of::<RepResult>() as u64;
/// The process itself: code, the engines' set-up, the runtime.
pub const BASE_BYTES: u64 = 64 << 20;
/// Seconds the time calibration takes, about.
pub const CALIBRATION_SECONDS: f64 = 0.5;
/// A run estimated to take longer says so before it starts.
pub const LONG_RUN_SECONDS: f64 = 60.0;
/// Work rates (loop iterations per second) no engine beats per CPU thread
/// (about 4× the fastest measured, 1e9 with AVX2), and on a GPU: a run
/// shorter than [`LONG_RUN_SECONDS`] at these is not calibrated.
pub const FASTEST_CPU_THREAD: f64 = 4e9;
pub const FASTEST_GPU: f64 = 1e12;

/// Replications a point may hold at once (its last round's total).
pub fn max_reps(p: &PreparedPoint, reps: u32) -> u64 {
    match p.precision {
        None => u64::from(reps),
        Some(pr) => {
            let per_rep = rep_customers(p).max(1.0) as u64;
            (pr.max_customers / per_rep)
                .min(MAX_REPS)
                .max(u64::from(first_round(p, reps)))
        }
    }
}

/// Histogram slots of one point in flight: its sections, each cut into
/// the replications' own sections (`PreparedPoint::rep_sections`).
fn point_slots(p: &PreparedPoint, reps: u32) -> u64 {
    let n = first_round(p, reps);
    u64::from(hist_batches(n)) * u64::from(p.rep_sections(n))
}

/// Host bytes of one point in flight: results and section histograms.
fn point_bytes(p: &PreparedPoint, reps: u32) -> u64 {
    max_reps(p, reps) * REP_BYTES + point_slots(p, reps) * u64::from(HIST_BINS) * 8
}

/// Bytes of the CPU engine's queue state for one thread running `p`.
pub fn cpu_queue_bytes(p: &PointParams) -> u64 {
    let r = u64::from(p.servers.max(1));
    match p.kernel() {
        Kernel::Lindley => 0,
        Kernel::KieferWolfowitz => {
            // LANES heaps of the complete tree over c leaves (f32).
            let depth = 63 - r.leading_zeros() as u64;
            (2u64 << depth) * LANES as u64 * 4
        }
        Kernel::Dispatch => {
            let policy = p.policy();
            if policy.free_times_only() {
                return r * 4;
            }
            // dispatch::capacity, in u64: a system of 2^32 − 1 servers is
            // refused here, not overflowed.
            let h = 2 * r + u64::from(dispatch::CAPACITY_SLACK);
            let k = u64::from(p.routers.max(1));
            // free, heap (time, tag), counts; perm, pos and block starts
            // unless pod; central's router queues.
            let mut words = r + 2 * h + k * r;
            if policy != DispatchPolicy::Pod {
                words += 2 * k * r + k * (h + 2);
            }
            if policy == DispatchPolicy::Central {
                words += 3 * k * h + 2 * k;
            }
            words * 4
        }
    }
}

/// What a run needs, host and device.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryNeed {
    pub host: u64,
    pub device: u64,
    /// The host's parts: (what, bytes), largest first.
    pub parts: Vec<(String, u64)>,
}

/// The field a queue's size comes from, for messages.
fn queue_field(p: &PreparedPoint) -> &'static str {
    let g = &p.grid;
    if p.params.kernel() == Kernel::Dispatch {
        if g.routers > 1 {
            "routers"
        } else {
            "servers"
        }
    } else if g.workers > 1 && g.servers > 1 && p.params.servers == g.servers * g.workers {
        "servers × workers"
    } else if g.workers > 1 {
        "workers"
    } else {
        "servers"
    }
}

/// Estimates what running `points` (`reps` replications each; CPU state
/// for `threads` threads when `cpu`) needs, and refuses it beyond `limit`
/// with one line naming the field that makes it too large. `total` is the
/// grid's point count (their rows are kept).
pub fn memory_need(
    points: &[PreparedPoint],
    total: u64,
    reps: u32,
    threads: usize,
    cpu: bool,
    limit: &Limit,
) -> Result<MemoryNeed, UsageError> {
    let threads = threads.max(1) as u64;
    let grid = total.saturating_mul(memory::GRID_POINT_BYTES);
    // The largest point in flight, and the window beside it.
    // (The first of equals, for messages.)
    let biggest = points.iter().rev().max_by_key(|p| point_bytes(p, reps));
    let one_point = biggest.map_or(0, |p| point_bytes(p, reps));
    let window_all: u64 = points
        .iter()
        .map(|p| {
            u64::from(first_round(p, reps)) * REP_BYTES
                + point_slots(p, reps) * u64::from(HIST_BINS) * 8
        })
        .fold(0u64, u64::saturating_add);
    let window = window_all.min(WINDOW_BYTES);
    let all_reps: u64 = points.iter().map(|p| u64::from(first_round(p, reps))).sum();
    // A GPU engine's call holds up to HARDWARE_CALL_REPS replications on a
    // hardware adapter (the CPU engine's, CHUNK_REPS).
    let call_reps = if cpu {
        CHUNK_REPS
    } else {
        CHUNK_REPS.max(crate::engine::HARDWARE_CALL_REPS)
    };
    let call = all_reps.min(call_reps) * 3 * std::mem::size_of::<RepResult>() as u64
        + call_slots(points, reps) * u64::from(HIST_BINS) * 8;
    let queue = points
        .iter()
        .rev()
        .filter(|_| cpu)
        .max_by_key(|p| cpu_queue_bytes(&p.params));
    let scratch = queue.map_or(0, |p| {
        2 * cpu_queue_bytes(&p.params).saturating_mul(threads)
    });
    let mut parts = vec![
        (format!("the grid's {total} points"), grid),
        ("the largest point's replications".to_string(), one_point),
        ("the points in flight".to_string(), window),
        ("one engine call's results".to_string(), call),
        (
            format!("the CPU engine's queue state on {threads} threads"),
            scratch,
        ),
        ("the process".to_string(), BASE_BYTES),
    ];
    let host = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    let need = MemoryNeed {
        host,
        device: device_bytes(points, reps),
        parts,
    };
    if host <= limit.bytes {
        return Ok(need);
    }
    // Name the field behind the largest part.
    let rest = host - scratch.max(one_point);
    if scratch >= one_point {
        let p = queue.expect("a queue");
        let field = queue_field(p);
        let room = limit.bytes.saturating_sub(rest);
        let most = memory::largest_within(room, u64::from(p.params.servers), |c| {
            let mut q = p.params;
            q.servers = c as u32;
            2 * cpu_queue_bytes(&q) * threads
        });
        let (on, fewer) = if threads > 1 {
            (
                format!("each of {threads} CPU threads"),
                " (or fewer --threads)",
            )
        } else {
            ("the CPU thread".to_string(), "")
        };
        return Err(memory::refusal(
            field,
            &format!(
                "point {} (routing={}, {} servers in one simulated system) keeps its queue state \
                 on {on}",
                p.grid.index, p.grid.routing, p.params.servers
            ),
            host,
            &format!("systems of at most {most} servers{fewer}"),
            limit,
        ));
    }
    let p = biggest.expect("a point");
    let (field, what) = match p.precision {
        Some(_) => (
            "max-customers",
            format!(
                "--precision may take point {} to {} replications, kept in memory until the \
                 point is done",
                p.grid.index,
                max_reps(p, reps)
            ),
        ),
        None => (
            "reps",
            format!(
                "{} replications of point {}, kept in memory until the point is done",
                max_reps(p, reps),
                p.grid.index
            ),
        ),
    };
    let room = limit.bytes.saturating_sub(rest);
    let most = room / REP_BYTES;
    Err(memory::refusal(
        field,
        &what,
        host,
        &format!("at most about {most} replications per point"),
        limit,
    ))
}

/// Histogram slots of one engine call, about: the sections of its points
/// and, where dispatch queues may grow, one per tile (see `rounds`).
fn call_slots(points: &[PreparedPoint], reps: u32) -> u64 {
    let sections = points.len().min(4096) as u64 * 16;
    let tiles = if points.iter().any(|p| dispatch::can_overflow(&p.params)) {
        let all_reps: u64 = points.iter().map(|p| u64::from(first_round(p, reps))).sum();
        all_reps.min(CHUNK_REPS).div_ceil(u64::from(TILE_REPS))
    } else {
        0
    };
    sections.max(tiles)
}

/// Device bytes of one engine call, about: the results and lane states of
/// [`CHUNK_REPS`] replications at most, the histograms of its sections, and
/// the queue state of the largest dispatch (the GPU plan caps it at 1 GiB
/// per buffer).
fn device_bytes(points: &[PreparedPoint], reps: u32) -> u64 {
    let all_reps: u64 = points.iter().map(|p| u64::from(first_round(p, reps))).sum();
    let lanes = all_reps.min(CHUNK_REPS).div_ceil(64) * 64;
    let per_lane = std::mem::size_of::<RepResult>() as u64 + 64;
    let state = points
        .iter()
        .map(|p| match p.params.kernel() {
            Kernel::Lindley => 0,
            Kernel::KieferWolfowitz => u64::from(p.params.servers) * 4,
            // The same structures as the CPU's (one replication's).
            Kernel::Dispatch => cpu_queue_bytes(&p.params),
        })
        .max()
        .unwrap_or(0);
    let hist = call_slots(points, reps) * u64::from(HIST_BINS) * u64::from(HIST_WORDS_PER_BIN) * 4;
    lanes * per_lane + hist + (lanes * state).min(1 << 30)
}

/// A kind of point, as far as its speed goes.
type Kind = (u32, u32, u32, u32, u32);

fn kind(p: &PointParams) -> Kind {
    (
        p.kernel,
        p.arrival.kind,
        p.service.kind,
        p.effective_thinning().code(),
        p.route_n.min(8),
    )
}

/// Measured work rates (loop iterations per second) by kind of point.
#[derive(Clone, Debug)]
pub struct Calibration {
    rates: Vec<(Kind, f64)>,
    /// Wall seconds the calibration took.
    pub seconds: f64,
}

impl Calibration {
    /// The rate for `p`'s kind (or the slowest measured).
    pub fn rate(&self, p: &PointParams) -> f64 {
        let k = kind(p);
        self.rates
            .iter()
            .find(|r| r.0 == k)
            .or_else(|| self.rates.iter().min_by(|a, b| a.1.total_cmp(&b.1)))
            .map_or(super::rounds::INITIAL_RATE, |r| r.1)
    }
}

/// Times `engine` on each kind of point in `points` (up to 8 kinds), about
/// [`CALIBRATION_SECONDS`] in all: short replications (2000 customers, no
/// warm-up), each call stopped at its deadline, its simulated customers
/// counted.
pub fn calibrate(
    engine: &mut dyn Engine,
    points: &[PreparedPoint],
    table: &[f32],
) -> Result<Calibration> {
    let started = Instant::now();
    let mut sample: Vec<PointParams> = Vec::new();
    for p in points {
        if sample.len() < 8 && !sample.iter().any(|q| kind(q) == kind(&p.params)) {
            let mut q = p.params;
            q.customers = 2000;
            q.warmup = 0;
            q.point_index = sample.len() as u32;
            sample.push(q);
        }
    }
    let share = CALIBRATION_SECONDS / sample.len().max(1) as f64;
    let mut rates = Vec::new();
    for q in &sample {
        // A first call compiles the GPU's pipeline (not timed).
        let mut warm = *q;
        warm.customers = 100;
        timed_call(engine, &warm, 64, table, share)?;
        // Calls of 4× more replications, until one fills its time or the
        // engine (a GPU needs tens of thousands in flight, the CPU a few
        // per thread); the deadline cuts a call short, and its customers
        // so far still count.
        let (mut reps, mut best) = (256u32, None);
        let started = Instant::now();
        loop {
            let left = share - started.elapsed().as_secs_f64();
            if left <= 0.0 {
                break;
            }
            let (customers, seconds) = timed_call(engine, q, reps, table, left)?;
            if customers > 0.0 && seconds > 0.0 {
                best = Some(customers * loop_cost_per_customer(q) as f64 / seconds);
            }
            if seconds >= left * 0.9 || u64::from(reps) >= CHUNK_REPS {
                break;
            }
            reps *= 4;
        }
        if let Some(rate) = best {
            rates.push((kind(q), rate));
        }
    }
    Ok(Calibration {
        rates,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Runs `reps` replications of `q` until done or `deadline` seconds have
/// passed: (customers simulated, seconds).
fn timed_call(
    engine: &mut dyn Engine,
    q: &PointParams,
    reps: u32,
    table: &[f32],
    deadline: f64,
) -> Result<(f64, f64)> {
    let (tiles, slots) = tiles_for_point(0, reps, 0);
    let params = [*q];
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table,
        slots,
    };
    timed_batch(engine, &batch, deadline)
}

/// Runs `batch` until done or `deadline` seconds have passed (the engine is
/// watched: the CPU stops inside replications, a GPU between passes):
/// (customers simulated, warm-up included, seconds).
pub fn timed_batch(engine: &mut dyn Engine, batch: &Batch, deadline: f64) -> Result<(f64, f64)> {
    let stop = AtomicBool::new(false);
    let counted = AtomicU64::new(0);
    let watch = Watch {
        stop: &stop,
        customers: &counted,
    };
    // Customers of the finished tiles, exact; the engine's count also has
    // those of unfinished replications, but only every `Watch::EVERY`.
    let per_rep = |tile: usize| {
        let p = &batch.params[batch.tiles[tile].param_index as usize];
        f64::from(p.customers) + f64::from(p.warmup)
    };
    let mut finished_customers = 0.0;
    let started = Instant::now();
    let finished = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let timer = scope.spawn(|| {
            let end = started + Duration::from_secs_f64(deadline);
            while !finished.load(Ordering::Relaxed) {
                if Instant::now() >= end {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let r = engine.run_watched(batch, watch, &mut |t| {
            finished_customers += t.reps.len() as f64 * per_rep(t.tile);
            Ok(())
        });
        finished.store(true, Ordering::Relaxed);
        let _ = timer.join();
        r
    });
    let seconds = started.elapsed().as_secs_f64();
    match result {
        Ok(()) => {}
        Err(e) if e.is::<Cancelled>() => {}
        Err(e) => return Err(e),
    }
    let counted = counted.load(Ordering::Relaxed) as f64;
    Ok((counted.max(finished_customers), seconds))
}

/// How an engine runs tiles, for the time estimate: replications run in
/// lock-step groups of `lanes` (a partial group costs a whole one), and
/// `workers` tiles at once (0: too many to matter).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub lanes: u32,
    pub workers: u32,
}

impl Shape {
    /// The CPU engine on `threads` threads.
    pub fn cpu(threads: usize) -> Shape {
        Shape {
            lanes: LANES as u32,
            workers: threads.max(1) as u32,
        }
    }

    /// A GPU, modelled as its measured rate alone: how many invocations
    /// run at once, and what idle ones cost, varies too much between
    /// adapters (a software one runs a few SIMD groups, an H200 thousands
    /// of warps) to model padding or the longest replication.
    pub fn gpu() -> Shape {
        Shape {
            lanes: 1,
            workers: 0,
        }
    }

    /// The engine `label` names (`cpu` or a GPU adapter).
    pub fn of(label: &str, threads: usize) -> Shape {
        if label == "cpu" {
            Shape::cpu(threads)
        } else {
            Shape::gpu()
        }
    }

    /// Replications `n` cost as run: sections cut into tiles of at most
    /// [`TILE_REPS`], each padded to whole lane groups (the CPU's dispatch
    /// kernel runs one replication at a time: no padding); and the largest
    /// tile's padded replications.
    fn padded(&self, p: &PointParams, n: u32) -> (f64, f64) {
        let lanes = if p.kernel() == Kernel::Dispatch {
            1
        } else {
            self.lanes.max(1)
        };
        let sections = hist_batches(n);
        let (mut all, mut largest) = (0u64, 0u64);
        for b in 0..sections {
            let size = batch_start(n, sections, b + 1) - batch_start(n, sections, b);
            let (full, rest) = (size / TILE_REPS, size % TILE_REPS);
            let pad = |k: u32| u64::from(k.div_ceil(lanes) * lanes);
            all += u64::from(full) * pad(TILE_REPS) + pad(rest);
            largest = largest.max(if full > 0 { pad(TILE_REPS) } else { pad(rest) });
        }
        (all as f64, largest as f64)
    }
}

/// Customers (warm-up included) and estimated seconds of running `points`:
/// their first rounds, and under `--precision` the most they may take.
pub struct TimeEstimate {
    pub customers: f64,
    pub seconds: f64,
    /// Under `--precision`: the most customers and seconds.
    pub most: Option<(f64, f64)>,
}

/// The time `points` take on an engine of `shape` whose work rate for a
/// point is `rate(point)` with all its workers busy: the padded work over
/// the rate, or the largest tile on one worker if that is longer.
pub fn time_estimate(
    points: &[PreparedPoint],
    reps: u32,
    shape: Shape,
    rate: &dyn Fn(&PointParams) -> f64,
) -> TimeEstimate {
    let (mut customers, mut seconds, mut longest_tile) = (0.0, 0.0, 0.0f64);
    let (mut most_c, mut most_s, mut precision) = (0.0, 0.0, false);
    let per_worker = f64::from(shape.workers);
    for p in points {
        let n = first_round(p, reps);
        let r = rate(&p.params).max(1e-9);
        let (padded, largest) = shape.padded(&p.params, n);
        customers += f64::from(n) * rep_customers(p);
        seconds += padded * rep_work(p) / r;
        if shape.workers > 0 {
            longest_tile = longest_tile.max(largest * rep_work(p) * per_worker / r);
        }
        let m = max_reps(p, reps).min(u64::from(u32::MAX)) as u32;
        precision |= p.precision.is_some();
        most_c += f64::from(m) * rep_customers(p);
        most_s += shape.padded(&p.params, m).0 * rep_work(p) / r;
    }
    TimeEstimate {
        customers,
        seconds: seconds.max(longest_tile),
        most: precision.then_some((most_c, most_s.max(longest_tile))),
    }
}

/// [`time_estimate`] at measured rates.
pub fn calibrated_estimate(
    points: &[PreparedPoint],
    reps: u32,
    shape: Shape,
    cal: &Calibration,
) -> TimeEstimate {
    time_estimate(points, reps, shape, &|p| cal.rate(p))
}

/// Whether `points` could take [`LONG_RUN_SECONDS`] even at the fastest
/// work rate an engine of `shape` reaches: only such runs are calibrated
/// before they start (to say how long they will take).
pub fn could_be_long(points: &[PreparedPoint], reps: u32, shape: Shape) -> bool {
    let fastest = if shape.workers > 0 {
        FASTEST_CPU_THREAD * f64::from(shape.workers)
    } else {
        FASTEST_GPU
    };
    time_estimate(points, reps, shape, &|_| fastest).seconds > LONG_RUN_SECONDS
}

/// `1.2 GiB host` for messages.
pub fn describe_memory(need: &MemoryNeed) -> String {
    format!(
        "{} host (largest parts: {}), about {} on a GPU per engine call",
        human(need.host),
        need.parts
            .iter()
            .take(2)
            .map(|(what, b)| format!("{what} {}", human(*b)))
            .collect::<Vec<_>>()
            .join(", "),
        human(need.device)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Spec, SweepArgs};

    fn prepared(args: SweepArgs) -> (Vec<PreparedPoint>, Vec<f32>, Spec) {
        let spec = Spec::load(&args).unwrap();
        let (p, t) = super::super::prepare(&spec, spec.points());
        (p, t, spec)
    }

    fn args(routing: &str, servers: &str) -> SweepArgs {
        SweepArgs {
            axes: crate::spec::AxisArgs {
                routing: vec![routing.into()],
                servers: vec![servers.into()],
                rho: vec!["0.5".into()],
                service: vec!["exp(mean=1)".into()],
                ..crate::spec::AxisArgs::default()
            },
            reps: Some("16".into()),
            customers: Some("1000".into()),
            warmup: Some("0".into()),
            ..SweepArgs::default()
        }
    }

    fn limit(bytes: u64) -> Limit {
        Limit {
            bytes,
            source: "test".into(),
        }
    }

    #[test]
    fn queue_state_grows_with_the_queue() {
        let (p, _, _) = prepared(args("central", "1000"));
        // A tree of 9 levels below its root (1023 slots, counted as 1024)
        // per lane, 8 lanes, f32.
        assert_eq!(cpu_queue_bytes(&p[0].params), 1024 * 8 * 4);
        let (p, _, _) = prepared(args("lwl", "1000"));
        assert_eq!(cpu_queue_bytes(&p[0].params), 4000);
        let (p, _, _) = prepared(args("jsq", "1000"));
        assert!(cpu_queue_bytes(&p[0].params) > 1000 * 4 * 4);
    }

    #[test]
    fn huge_queues_and_replication_counts_are_refused_by_name() {
        let (p, _, _) = prepared(args("central", "1000000000"));
        let e = memory_need(&p, 1, 16, 2, true, &limit(8 << 30)).unwrap_err();
        assert!(
            e.0.starts_with("servers: point 0 (routing=central, 1000000000 servers in one"),
            "{}",
            e.0
        );
        assert!(e.0.contains("expected systems of at most"), "{}", e.0);
        // The GPU alone keeps no CPU queue state.
        memory_need(&p, 1, 16, 2, false, &limit(8 << 30)).unwrap();
        let (p, _, _) = prepared(args("jsq", "300000000"));
        let e = memory_need(&p, 1, 16, 1, true, &limit(8 << 30)).unwrap_err();
        assert!(e.0.starts_with("servers: "), "{}", e.0);
        let (p, _, _) = prepared(args("random", "2"));
        let e = memory_need(&p, 1, u32::MAX, 1, true, &limit(8 << 30)).unwrap_err();
        assert!(
            e.0.starts_with("reps: 4294967295 replications of point 0"),
            "{}",
            e.0
        );
        let need = memory_need(&p, 1, 1000, 1, true, &limit(8 << 30)).unwrap();
        assert!(need.host >= BASE_BYTES && need.host < 1 << 30, "{need:?}");
    }

    #[test]
    fn a_calibration_estimates_within_a_factor_of_the_real_time() {
        let mut a = args("random,central", "1,8");
        a.customers = Some("60000".into());
        a.reps = Some("64".into());
        let (p, table, spec) = prepared(a);
        let mut engine = crate::engine::cpu::CpuEngine::new(1);
        let cal = calibrate(&mut engine, &p, &table).unwrap();
        assert!(cal.seconds < 4.0 * CALIBRATION_SECONDS, "{}", cal.seconds);
        let est = calibrated_estimate(&p, spec.run.reps, Shape::cpu(1), &cal);
        assert_eq!(est.customers, 4.0 * 64.0 * 60000.0);
        let started = Instant::now();
        super::super::run_points(&p, &table, spec.run.reps, &mut engine, &mut |_| Ok(())).unwrap();
        let real = started.elapsed().as_secs_f64();
        // (Other tests running beside this one skew both; a factor of 4
        // either way is still a usable estimate.)
        assert!(
            est.seconds < 4.0 * real && real < 4.0 * est.seconds,
            "estimated {} s, took {real} s",
            est.seconds
        );
    }
}
