//! The run loop: prepared points in, one [`PointResult`] per point out, in
//! grid order, reported as soon as the point and every point before it are
//! done.
//!
//! Every run is a sequence of rounds. A fixed-size run is the one-round case;
//! under `--precision` ([`super::precision`]) a point gets further rounds
//! until its CIs reach the target or its budget is spent.
//!
//! # Rounds
//! - Round 0 runs `--reps` replications (under `precision`, at least
//!   [`MIN_FIRST_ROUND`]): replications 0..n, cut into `hist_batches(n)`
//!   sections (`engine::schedule`), each with its own wait histogram, so
//!   percentile CIs come from sectioning.
//! - Replication numbers continue across rounds (round r simulates
//!   replications n_r..n_{r+1}); they are part of every stream's key, so
//!   each round's replications are new and independent, and a point's
//!   numbers depend only on the seed, never on chunking, threads or what
//!   other points do.
//! - Statistics combine every round: the per-replication results are
//!   concatenated (means and their Student t CIs over all replications),
//!   and each round's new replications are dealt evenly to the point's
//!   sections, whose histograms accumulate. Percentile CIs therefore stay
//!   sectioning over the same sections of (nearly) equal size: adding each
//!   round's batches as extra sections instead would mix batch quantiles of
//!   different variances in one t interval.
//!
//! # Chunks and engine calls
//! Points are packed into chunks (many points per engine call, so a GPU has
//! thousands of replications in flight) within [`CHUNK_REPS`] and
//! [`CHUNK_CUSTOMERS`]; each round of a chunk packs the next round of every
//! unfinished point into engine calls within the same caps.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};

use super::point::{check_overflow, failed_on, PointResult, PreparedPoint};
use super::precision::{converged, next_total, MAX_REPS, MIN_FIRST_ROUND};
use crate::contract::{RepResult, Tile, HIST_BINS, TILE_REPS};
use crate::engine::schedule::{batch_start, hist_batches};
use crate::engine::{Batch, Engine};
use crate::stats::{point_stats, PointStats};

/// Replications packed into one engine call, at most.
pub const CHUNK_REPS: u64 = 1 << 16;
/// Customers (warm-up included) packed into one engine call, at most: a
/// chunk's rows wait for the whole chunk, so this bounds that delay.
pub const CHUNK_CUSTOMERS: f64 = 4e9;

/// A run stopped by [`run_points_until`]'s flag (Ctrl-C): every point
/// reported before it is complete.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Simulate `points` on `engine`, calling `on_point` for each finished point
/// in grid order. Errors name the points of the failing engine call.
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

/// Replications (and sections) of a point's first round.
pub fn first_round(p: &PreparedPoint, reps: u32) -> u32 {
    match p.precision {
        None => reps,
        Some(pr) => {
            let per_rep = u64::from(p.params.customers) + u64::from(p.params.warmup);
            let allowed = (pr.max_customers / per_rep.max(1)).min(MAX_REPS);
            let n = u64::from(reps.max(MIN_FIRST_ROUND)).min(allowed.max(2));
            n as u32
        }
    }
}

/// One point's replications so far.
struct State {
    sections: u32,
    reps: Vec<RepResult>,
    /// One `HIST_BINS` wait histogram per section.
    hist: Vec<Vec<u64>>,
    n: u32,
    seconds: f64,
    stats: PointStats,
    /// Some(converged) once the point is finished.
    done: Option<bool>,
    /// Replications that overflowed the dispatch kernel: the point fails
    /// when its turn to be reported comes.
    overflow: Option<anyhow::Error>,
    /// The next round: (section, first replication, count).
    next: Vec<(u32, u32, u32)>,
}

impl State {
    fn new(reps0: u32) -> State {
        let sections = hist_batches(reps0);
        let per_slot = HIST_BINS as usize;
        let next = (0..sections)
            .map(|b| {
                let (s, e) = (
                    batch_start(reps0, sections, b),
                    batch_start(reps0, sections, b + 1),
                );
                (b, s, e - s)
            })
            .filter(|x| x.2 > 0)
            .collect();
        State {
            sections,
            reps: Vec::with_capacity(reps0 as usize),
            hist: vec![vec![0; per_slot]; sections as usize],
            n: reps0,
            seconds: 0.0,
            stats: PointStats::default(),
            done: None,
            overflow: None,
            next,
        }
    }

    /// After a round: finished, or the next round planned.
    fn plan(&mut self, p: &PreparedPoint) {
        let Some(pr) = p.precision else {
            self.done = Some(true);
            return;
        };
        if converged(&self.stats, pr.target) {
            self.done = Some(true);
            return;
        }
        let per_rep = u64::from(p.params.customers) + u64::from(p.params.warmup);
        let allowed = (pr.max_customers / per_rep.max(1)).min(MAX_REPS);
        let n = u64::from(self.n);
        let k = u64::from(self.sections);
        let want = next_total(n, &self.stats, pr.target).min(allowed);
        let per_section = want
            .saturating_sub(n)
            .div_ceil(k)
            .min(allowed.saturating_sub(n) / k);
        if per_section == 0 {
            self.done = Some(false);
            return;
        }
        let per_section = per_section as u32;
        self.next = (0..self.sections)
            .map(|b| (b, self.n + b * per_section, per_section))
            .collect();
        self.n += per_section * self.sections;
    }
}

/// A piece of a round in one engine call.
struct Piece {
    point: usize,
    section: u32,
    rep_start: u32,
    count: u32,
}

/// [`run_points`] that stops when `stop` is set: it is checked before each
/// round, so the round in flight still finishes and every point it completes
/// is reported; then it returns an [`Interrupted`] error.
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
    let per_rep = |p: &PreparedPoint| f64::from(p.params.customers) + f64::from(p.params.warmup);
    let per_slot = HIST_BINS as usize;
    let mut start = 0;
    while start < points.len() {
        // A chunk: as many points as the first rounds' budget allows.
        let end = chunk_end(points, start, |p| first_round(p, reps));
        let chunk = &points[start..end];
        let mut states: Vec<State> = chunk
            .iter()
            .map(|p| State::new(first_round(p, reps)))
            .collect();
        let mut reported = 0;
        while reported < chunk.len() {
            if stop.load(Ordering::SeqCst) {
                return Err(Interrupted.into());
            }
            // This round's pieces, packed into engine calls.
            let mut calls: Vec<Vec<Piece>> = vec![Vec::new()];
            let (mut call_reps, mut call_customers) = (0u64, 0f64);
            for (i, st) in states.iter_mut().enumerate() {
                let cost = per_rep(&chunk[i]);
                for (section, mut rep_start, mut left) in st.next.drain(..) {
                    while left > 0 {
                        let room_reps = CHUNK_REPS.saturating_sub(call_reps);
                        let room_customers =
                            ((CHUNK_CUSTOMERS - call_customers) / cost).floor().max(0.0) as u64;
                        let mut take = u64::from(left).min(room_reps).min(room_customers) as u32;
                        if take == 0 {
                            if calls.last().is_some_and(|c| !c.is_empty()) {
                                calls.push(Vec::new());
                                (call_reps, call_customers) = (0, 0.0);
                                continue;
                            }
                            take = 1;
                        }
                        calls.last_mut().expect("a call").push(Piece {
                            point: i,
                            section,
                            rep_start,
                            count: take,
                        });
                        call_reps += u64::from(take);
                        call_customers += f64::from(take) * cost;
                        rep_start += take;
                        left -= take;
                    }
                }
            }
            let mut round_reps: Vec<Vec<RepResult>> = vec![Vec::new(); chunk.len()];
            for pieces in calls.iter().filter(|c| !c.is_empty()) {
                // The call's points only (pieces of a point are adjacent).
                let mut params = Vec::new();
                let mut tiles = Vec::new();
                for (slot, piece) in pieces.iter().enumerate() {
                    if slot == 0 || pieces[slot - 1].point != piece.point {
                        params.push(chunk[piece.point].params);
                    }
                    let param_index = params.len() as u32 - 1;
                    let mut r = piece.rep_start;
                    let end = piece.rep_start + piece.count;
                    while r < end {
                        let count = (end - r).min(TILE_REPS);
                        tiles.push(Tile {
                            param_index,
                            hist_slot: slot as u32,
                            rep_start: r,
                            rep_count: count,
                        });
                        r += count;
                    }
                }
                let batch = Batch {
                    params: &params,
                    tiles: &tiles,
                    table,
                    slots: pieces.len() as u32,
                };
                let started = Instant::now();
                let out = engine.run(&batch).with_context(|| {
                    failed_on(
                        engine,
                        &chunk[pieces[0].point].grid,
                        &chunk[pieces[pieces.len() - 1].point].grid,
                    )
                })?;
                let seconds = started.elapsed().as_secs_f64();
                let work: f64 = pieces
                    .iter()
                    .map(|p| f64::from(p.count) * per_rep(&chunk[p.point]))
                    .sum();
                let mut offset = 0;
                for (slot, piece) in pieces.iter().enumerate() {
                    let n = piece.count as usize;
                    round_reps[piece.point].extend_from_slice(&out.reps[offset..offset + n]);
                    offset += n;
                    let st = &mut states[piece.point];
                    let h = &out.hist[slot * per_slot..(slot + 1) * per_slot];
                    for (dst, &src) in st.hist[piece.section as usize].iter_mut().zip(h) {
                        *dst += src;
                    }
                    st.seconds += seconds * f64::from(piece.count) * per_rep(&chunk[piece.point])
                        / work.max(1e-300);
                }
            }
            for (i, st) in states.iter_mut().enumerate() {
                if st.done.is_some() || round_reps[i].is_empty() {
                    continue;
                }
                if let Err(e) = check_overflow(&chunk[i], &round_reps[i]) {
                    st.overflow = Some(e);
                    st.done = Some(false);
                    continue;
                }
                st.reps.append(&mut round_reps[i]);
                let batches: Vec<&[u64]> = st.hist.iter().map(Vec::as_slice).collect();
                let service = &chunk[i].grid.service;
                st.stats = point_stats(&st.reps, &batches, chunk[i].scale, &|x| service.cdf(x));
                st.plan(&chunk[i]);
            }
            while reported < chunk.len() {
                let st = &mut states[reported];
                let Some(ok) = st.done else { break };
                if let Some(e) = st.overflow.take() {
                    return Err(e);
                }
                let p = &chunk[reported];
                on_point(PointResult {
                    point: p,
                    stats: std::mem::take(&mut st.stats),
                    hist: std::mem::take(&mut st.hist),
                    seconds: st.seconds,
                    converged: p.precision.map(|_| ok),
                })?;
                // Free the point's replications.
                st.reps = Vec::new();
                reported += 1;
            }
        }
        start = end;
    }
    Ok(())
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
