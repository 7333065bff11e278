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
//! - Histogram range: when a point's reported percentiles (or their CI
//!   bounds) fall in the histogram's overflow or underflow bin, every
//!   replication so far is simulated again, dealt to the same sections, with
//!   the range [`stats::rescaled`] picks (a power-of-two multiple of the
//!   service mean): the streams do not depend on the range, so the same
//!   customers are binned where they are resolved.
//!
//! # Chunks and engine calls
//! Points are packed into chunks (many points per engine call, so a GPU has
//! thousands of replications in flight) within [`CHUNK_REPS`] and
//! [`CHUNK_CUSTOMERS`]; each round of a chunk packs the next round of every
//! unfinished point into engine calls within the same caps.
//!
//! # Growing dispatch queues
//! A dispatch replication that outgrows its point's capacity stops with
//! `QUEUE_OVERFLOW`; [`run_growing`] re-runs exactly those replications at
//! twice the capacity until they fit or reach the memory limit
//! (`contract::dispatch`). Their streams are keyed by seed, point and
//! replication and the capacity changes nothing else, so a re-run gives the
//! sample path of an unbounded queue: the results do not depend on the
//! capacity a point started with. A point keeps its grown capacity for its
//! later calls and rounds.
//!
//! # Failing points
//! A point fails, alone, when its replications still overflow at the limit
//! or (with `isolate`) when the engine fails on it: it is reported with an
//! error and no statistics ([`PointResult::error`]), and the sweep goes on.
//! An engine call that fails is retried point by point, so the other points
//! of the call are unaffected.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};

use super::point::{failed_on, overflow_error, PointResult, PreparedPoint};
use super::precision::{converged, next_total, MAX_REPS, MIN_FIRST_ROUND};
use crate::contract::{dispatch, rep_status, PointParams, RepResult, Tile, HIST_BINS, TILE_REPS};
use crate::engine::schedule::{batch_start, hist_batches};
use crate::engine::{Batch, BatchOutput, Engine};
use crate::stats::{self, point_stats, PointStats};

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
/// in grid order. A point the engine fails on is reported with its error
/// (see [`run_points_until`] with `isolate`).
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
        true,
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
    /// Why the point failed (reported with no statistics when its turn
    /// comes).
    error: Option<String>,
    /// Dispatch capacity for the point's next calls (0: the first).
    capacity: u32,
    /// The most requests any replication held at once.
    max_in_system: u32,
    /// The next round: (section, first replication, count).
    next: Vec<(u32, u32, u32)>,
    /// Every (section, first replication, count) dealt so far, to simulate
    /// again with a wider histogram range.
    dealt: Vec<(u32, u32, u32)>,
    /// The point's engine record, with its current histogram scale.
    params: PointParams,
    /// The histogram scale (1 / `params.inv_hist_scale`).
    scale: f64,
}

impl State {
    fn new(p: &PreparedPoint, reps0: u32) -> State {
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
            .collect::<Vec<_>>();
        State {
            sections,
            reps: Vec::with_capacity(reps0 as usize),
            hist: vec![vec![0; per_slot]; sections as usize],
            n: reps0,
            seconds: 0.0,
            stats: PointStats::default(),
            done: None,
            dealt: next.clone(),
            error: None,
            capacity: 0,
            max_in_system: 0,
            next,
            params: p.params,
            scale: p.scale,
        }
    }

    /// After a round whose reported numbers the histogram did not resolve:
    /// plan every replication so far again with a wider range. False when
    /// no range helps.
    fn rescale(&mut self, p: &PreparedPoint) -> bool {
        let Some(new) = stats::rescaled(
            self.stats.hist_range,
            self.stats.max_wait,
            self.scale,
            p.scale,
        ) else {
            return false;
        };
        // p.scale is exactly 1 / p.params.inv_hist_scale, so the new inverse
        // is that f32 times a power of two: binning stays exact.
        let inv = p.params.inv_hist_scale * (p.scale / new) as f32;
        if !inv.is_normal() {
            return false;
        }
        self.params.inv_hist_scale = inv;
        self.scale = 1.0 / f64::from(inv);
        self.reps.clear();
        for h in &mut self.hist {
            h.fill(0);
        }
        self.next = self.dealt.clone();
        true
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
        self.dealt.extend_from_slice(&self.next);
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
///
/// `isolate`: an engine failure is the failing point's alone (it is reported
/// with the error, the others go on). Without it the failure ends the run,
/// so that [`super::resume::run_surviving`] can hand the rest to another
/// engine.
pub fn run_points_until<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
    isolate: bool,
) -> Result<()> {
    if let Some(p) = points.iter().find(|p| p.warmup_auto && p.pilot.is_none()) {
        anyhow::bail!(
            "grid point {}: warmup = \"auto\" but no pilot has chosen its warm-up (call \
             warmup::resolve before running the points)",
            p.grid.index
        );
    }
    let per_rep = |p: &PreparedPoint| f64::from(p.params.customers) + f64::from(p.params.warmup);
    let mut start = 0;
    while start < points.len() {
        // A chunk: as many points as the first rounds' budget allows.
        let end = chunk_end(points, start, |p| first_round(p, reps));
        let chunk = &points[start..end];
        let mut states: Vec<State> = chunk
            .iter()
            .map(|p| State::new(p, first_round(p, reps)))
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
                let started = Instant::now();
                let outputs = run_call(engine, chunk, &mut states, pieces, table, isolate)?;
                let seconds = started.elapsed().as_secs_f64();
                let work: f64 = pieces
                    .iter()
                    .map(|p| f64::from(p.count) * per_rep(&chunk[p.point]))
                    .sum();
                for (piece, out) in pieces.iter().zip(outputs) {
                    let st = &mut states[piece.point];
                    st.seconds += seconds * f64::from(piece.count) * per_rep(&chunk[piece.point])
                        / work.max(1e-300);
                    let Some(out) = out.filter(|_| st.error.is_none()) else {
                        continue;
                    };
                    round_reps[piece.point].extend_from_slice(&out.reps);
                    for (dst, &src) in st.hist[piece.section as usize].iter_mut().zip(&out.hist) {
                        *dst += src;
                    }
                }
            }
            for (i, st) in states.iter_mut().enumerate() {
                if st.done.is_some() || round_reps[i].is_empty() {
                    continue;
                }
                let peak = round_reps[i].iter().map(|r| r.max_in_system).max();
                st.max_in_system = st.max_in_system.max(peak.unwrap_or(0));
                if let Some(e) = overflow_error(&chunk[i], &round_reps[i], st.capacity) {
                    st.error = Some(e);
                    st.done = Some(false);
                    continue;
                }
                st.reps.append(&mut round_reps[i]);
                let batches: Vec<&[u64]> = st.hist.iter().map(Vec::as_slice).collect();
                let service = &chunk[i].grid.service;
                st.stats = point_stats(&st.reps, &batches, st.scale, &|x| service.cdf(x));
                if !st.rescale(&chunk[i]) {
                    st.plan(&chunk[i]);
                }
            }
            while reported < chunk.len() {
                let st = &mut states[reported];
                let Some(ok) = st.done else { break };
                let p = &chunk[reported];
                let error = st.error.take();
                on_point(PointResult {
                    point: p,
                    stats: std::mem::take(&mut st.stats),
                    hist: std::mem::take(&mut st.hist),
                    seconds: st.seconds,
                    converged: p.precision.filter(|_| error.is_none()).map(|_| ok),
                    max_in_system: dispatch::can_overflow(&p.params).then_some(st.max_in_system),
                    error,
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

/// What one engine call returned for one of its pieces.
struct PieceOutput {
    reps: Vec<RepResult>,
    /// The piece's wait histogram (`HIST_BINS` counts).
    hist: Vec<u64>,
}

/// One engine call of `pieces` (each piece its own histogram slot), with
/// overflowed dispatch replications re-run by [`run_growing`]; each point's
/// capacity is carried in `states`. A failing call ends the run unless
/// `isolate`: then it is retried point by point, and a point that fails
/// alone is marked failed in `states` (its pieces get None).
fn run_call(
    engine: &mut dyn Engine,
    chunk: &[PreparedPoint],
    states: &mut [State],
    pieces: &[Piece],
    table: &[f32],
    isolate: bool,
) -> Result<Vec<Option<PieceOutput>>> {
    let err = match call_pieces(engine, chunk, states, pieces, table) {
        Ok(out) => return Ok(out.into_iter().map(Some).collect()),
        Err(e) if !isolate => return Err(e),
        Err(e) => e,
    };
    let first = pieces[0].point;
    if pieces.iter().all(|p| p.point == first) {
        let st = &mut states[first];
        st.error = Some(format!("{err:#}").replace('\n', " "));
        st.done = Some(false);
        return Ok(pieces.iter().map(|_| None).collect());
    }
    let mut outputs: Vec<Option<PieceOutput>> = Vec::with_capacity(pieces.len());
    // Pieces of a point are adjacent.
    for one in pieces.chunk_by(|a, b| a.point == b.point) {
        outputs.extend(run_call(engine, chunk, states, one, table, true)?);
    }
    Ok(outputs)
}

/// [`run_call`] without the retries: one engine call (and its re-runs).
fn call_pieces(
    engine: &mut dyn Engine,
    chunk: &[PreparedPoint],
    states: &mut [State],
    pieces: &[Piece],
    table: &[f32],
) -> Result<Vec<PieceOutput>> {
    // The call's points only (pieces of a point are adjacent).
    let mut params = Vec::new();
    let mut point_of = Vec::new();
    let mut tiles = Vec::new();
    for (slot, piece) in pieces.iter().enumerate() {
        if slot == 0 || pieces[slot - 1].point != piece.point {
            // The state's record: its histogram scale may have been widened.
            let mut p = states[piece.point].params;
            p.capacity = p.capacity.max(states[piece.point].capacity);
            params.push(p);
            point_of.push(piece.point);
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
    let (out, capacities) = run_growing(engine, &batch).with_context(|| {
        failed_on(
            engine,
            &chunk[pieces[0].point].grid,
            &chunk[pieces[pieces.len() - 1].point].grid,
        )
    })?;
    for (&point, &c) in point_of.iter().zip(&capacities) {
        states[point].capacity = states[point].capacity.max(c);
    }
    let per_slot = HIST_BINS as usize;
    let mut offset = 0;
    Ok(pieces
        .iter()
        .enumerate()
        .map(|(slot, piece)| {
            let n = piece.count as usize;
            offset += n;
            PieceOutput {
                reps: out.reps[offset - n..offset].to_vec(),
                hist: out.hist[slot * per_slot..(slot + 1) * per_slot].to_vec(),
            }
        })
        .collect())
}

/// `engine.run(batch)`, with every dispatch replication that overflowed
/// its capacity re-run at twice the capacity (`dispatch::grow`) until it
/// fits or the memory limit is reached (it then keeps `QUEUE_OVERFLOW`).
/// Returns the output as if every replication had run at the capacity it
/// fits in, and each parameter's final capacity.
///
/// An overflowed replication has already added the waits it recorded to its
/// slot's histogram. Where at least half a slot's replications overflowed,
/// the whole slot is re-run and its histogram replaced; otherwise the
/// overflowed replications are re-run twice, at the old capacity (which
/// reproduces exactly what they added: the engines are deterministic) into
/// a slot that is subtracted, and at the new one into a slot that is added.
/// Histograms are exact either way. Assumes, as the run loop's calls do,
/// that the replications of one slot are those of one parameter.
pub fn run_growing(engine: &mut dyn Engine, batch: &Batch) -> Result<(BatchOutput, Vec<u32>)> {
    let mut out = engine.run(batch)?;
    let mut capacities: Vec<u32> = batch.params.iter().map(|p| p.dispatch_capacity()).collect();
    // Where each tile's results start in `out.reps`.
    let starts: Vec<usize> = batch
        .tiles
        .iter()
        .scan(0usize, |at, t| {
            let s = *at;
            *at += t.rep_count as usize;
            Some(s)
        })
        .collect();
    let per_slot = HIST_BINS as usize;
    loop {
        // The capacity each parameter with overflowed replications grows to.
        let mut grown: Vec<Option<u32>> = vec![None; batch.params.len()];
        // Per slot: replications, and the overflowed ones that can grow as
        // (tile, lane).
        let mut in_slot = vec![0u32; batch.slots as usize];
        let mut rerun: Vec<Vec<(usize, u32)>> = vec![Vec::new(); batch.slots as usize];
        for (t, tile) in batch.tiles.iter().enumerate() {
            let i = tile.param_index as usize;
            let p = &batch.params[i];
            in_slot[tile.hist_slot as usize] += tile.rep_count;
            if !dispatch::can_overflow(p) {
                continue;
            }
            for lane in 0..tile.rep_count {
                let r = &out.reps[starts[t] + lane as usize];
                if r.status & rep_status::QUEUE_OVERFLOW == 0 {
                    continue;
                }
                let Some(c) = grown[i].or_else(|| dispatch::grow(p, capacities[i])) else {
                    continue;
                };
                grown[i] = Some(c);
                rerun[tile.hist_slot as usize].push((t, lane));
            }
        }
        if rerun.iter().all(Vec::is_empty) {
            return Ok((out, capacities));
        }
        // The re-runs: per parameter one record at the new capacity and,
        // when needed, one at the old.
        let mut params: Vec<PointParams> = Vec::new();
        let mut at_new: Vec<Option<u32>> = vec![None; batch.params.len()];
        let mut at_old: Vec<Option<u32>> = vec![None; batch.params.len()];
        let mut index = |table: &mut Vec<Option<u32>>, i: usize, capacity: u32| {
            *table[i].get_or_insert_with(|| {
                let mut p = batch.params[i];
                p.capacity = capacity;
                params.push(p);
                params.len() as u32 - 1
            })
        };
        let mut tiles: Vec<Tile> = Vec::new();
        // Per re-run tile: where its results go in `out.reps` (None: the
        // subtracted copy).
        let mut dest: Vec<Option<usize>> = Vec::new();
        // Per slot of `out`: (slot of the new copy, slot to subtract or None
        // when the whole slot is re-run).
        let mut slot_map: Vec<(usize, u32, Option<u32>)> = Vec::new();
        let mut slots = 0u32;
        for (s, list) in rerun.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let whole = 2 * list.len() as u32 >= in_slot[s]
                && batch
                    .tiles
                    .iter()
                    .filter(|t| t.hist_slot as usize == s)
                    .all(|t| grown[t.param_index as usize].is_some());
            let new_slot = slots;
            let old_slot = (!whole).then_some(slots + 1);
            slots += if whole { 1 } else { 2 };
            slot_map.push((s, new_slot, old_slot));
            // The replications to re-run, as (tile, first lane, count) runs.
            let mut runs: Vec<(usize, u32, u32)> = Vec::new();
            let mut add = |t: usize, lane: u32| match runs.last_mut() {
                Some((lt, first, n)) if *lt == t && *first + *n == lane && *n < TILE_REPS => {
                    *n += 1
                }
                _ => runs.push((t, lane, 1)),
            };
            if whole {
                for (t, tile) in batch.tiles.iter().enumerate() {
                    if tile.hist_slot as usize == s {
                        (0..tile.rep_count).for_each(|lane| add(t, lane));
                    }
                }
            } else {
                list.iter().for_each(|&(t, lane)| add(t, lane));
            }
            for (t, first, n) in runs {
                let tile = &batch.tiles[t];
                let i = tile.param_index as usize;
                let new = index(&mut at_new, i, grown[i].unwrap_or(capacities[i]));
                tiles.push(Tile {
                    param_index: new,
                    hist_slot: new_slot,
                    rep_start: tile.rep_start + first,
                    rep_count: n,
                });
                dest.push(Some(starts[t] + first as usize));
                if let Some(old_slot) = old_slot {
                    let old = index(&mut at_old, i, capacities[i]);
                    tiles.push(Tile {
                        param_index: old,
                        hist_slot: old_slot,
                        rep_start: tile.rep_start + first,
                        rep_count: n,
                    });
                    dest.push(None);
                }
            }
        }
        let again = engine.run(&Batch {
            params: &params,
            tiles: &tiles,
            table: batch.table,
            slots,
        })?;
        let mut at = 0;
        for (tile, d) in tiles.iter().zip(&dest) {
            let n = tile.rep_count as usize;
            if let Some(d) = d {
                out.reps[*d..*d + n].copy_from_slice(&again.reps[at..at + n]);
            }
            at += n;
        }
        let slot =
            |h: &[u64], s: u32| h[s as usize * per_slot..(s as usize + 1) * per_slot].to_vec();
        for (s, new_slot, old_slot) in slot_map {
            let dst = &mut out.hist[s * per_slot..(s + 1) * per_slot];
            let new = slot(&again.hist, new_slot);
            match old_slot {
                None => dst.copy_from_slice(&new),
                Some(old_slot) => {
                    let old = slot(&again.hist, old_slot);
                    for ((d, o), n) in dst.iter_mut().zip(old).zip(new) {
                        *d = d.checked_sub(o).with_context(|| {
                            format!(
                                "re-running overflowed replications at the same capacity did \
                                 not reproduce their waits (the {} engine is not \
                                 deterministic)",
                                engine.label()
                            )
                        })? + n;
                    }
                }
            }
        }
        for (c, g) in capacities.iter_mut().zip(&grown) {
            if let Some(g) = g {
                *c = *g;
            }
        }
    }
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
