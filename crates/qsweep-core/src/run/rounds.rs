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
//! - Histogram range: when a point's reported percentiles (or their CI
//!   bounds) fall in the histogram's overflow or underflow bin (but not a
//!   percentile whose CI reaches 0, which no range resolves: see
//!   [`stats::RangeUse`]), every
//!   replication so far is simulated again, dealt to the same sections, with
//!   the range [`stats::rescaled`] picks (a power-of-two multiple of the
//!   service mean): the streams do not depend on the range, so the same
//!   customers are binned where they are resolved.
//!
//! # Engine calls, cut by time
//! The points in flight form a window (grid order); each engine call takes
//! the next replications of the window's rounds, in grid order, until its
//! work reaches what the engine does in [`CALL_SECONDS`] (or
//! [`STREAMING_CALL_SECONDS`] for an engine that hands tiles over as they
//! finish, see [`Engine::streams`]) at the rate measured on the calls so
//! far (before the first, the engine's calibrated rate, if it has one), or
//! the engine's most replications ([`CallSizing`]: [`CHUNK_REPS`] by
//! default). An engine that asks for `fill_reps` (a GPU, whose rate is only
//! its own once it is full) gets calls of at least that many, within
//! [`FILL_CALLS`] calls' work; and no call holds more tiles or histogram
//! slots than the engine can bind, so a call is never refused for its size
//! and retried point by point. Work is counted in the kernels'
//! loop iterations (customers × `loop_cost_per_customer`), so a call of
//! costly points holds fewer customers. A round may thus span calls, and a
//! call many points: results never depend on it (replications are keyed by
//! seed, point and replication number, and are put back in replication
//! order before any statistic is taken).
//!
//! Every finished tile is accounted for at once: a point whose round is
//! complete gets its statistics (and perhaps its next round), and finished
//! points are reported in grid order while the call still runs. The call
//! is watched ([`Watch`]): once `stop` is set the engine stops within
//! milliseconds, the replications of unfinished rounds are dropped, and the
//! run returns [`Interrupted`]; a point is reported whole or not at all.
//!
//! # Growing dispatch queues
//! A dispatch replication that outgrows its point's capacity stops with
//! `QUEUE_OVERFLOW`. Each tile of such a point has a histogram slot of its
//! own, so a finished tile with an overflowed replication is not accounted
//! for: the point's capacity doubles (`dispatch::grow`, up to the memory
//! limit of `contract::dispatch`) and the tile's replications go back to
//! the front of its round, to run again in the next call. Their streams are
//! keyed by seed, point and replication and the capacity changes nothing
//! else, so a re-run gives the sample path of an unbounded queue: the
//! results do not depend on the capacity a point started with. A point
//! keeps its grown capacity for its later calls and rounds. (Callers that
//! run whole batches outside the loop use [`super::growing::run_growing`], which does the
//! same for one batch.)
//!
//! # Failing points
//! A point fails, alone, when its replications still overflow at the limit
//! or (with `isolate`) when the engine fails on it: it is reported with an
//! error and no statistics ([`PointResult::error`]), and the sweep goes on.
//! The unfinished tiles of an engine call that fails are retried point by
//! point, so the other points of the call are unaffected.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result};

use super::point::{failed_on, overflow_error, PointResult, PreparedPoint};
use super::precision::{converged, next_total, MAX_REPS, MIN_FIRST_ROUND};
use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{dispatch, rep_status, PointParams, RepResult, Tile, HIST_BINS, TILE_REPS};
use crate::engine::schedule::{batch_start, hist_batches};
use crate::engine::{Batch, CallSizing, Cancelled, Engine, TileDone, Watch};
use crate::progress;
use crate::stats::{self, point_stats, PointStats};

/// Replications in one engine call, at most, unless the engine's
/// [`CallSizing`] says otherwise (the call's results are held in memory).
pub const CHUNK_REPS: u64 = crate::engine::DEFAULT_MAX_CALL_REPS;
/// Wall time one engine call aims at when the engine hands its results
/// over only at the end (the GPU): rows, progress and the stop flag then
/// move at least this often.
pub const CALL_SECONDS: f64 = 0.5;
/// Wall time one call aims at on an engine that hands tiles over as they
/// finish (the CPU): rows and progress move with each tile and the stop
/// flag is looked at inside the kernels, so only the idle threads at a
/// call's end cost anything, which longer calls make rarer.
pub const STREAMING_CALL_SECONDS: f64 = 10.0;
/// Work rate assumed before the first call is measured (loop iterations
/// per second: about 10^7 customers/s), deliberately low.
pub const INITIAL_RATE: f64 = 2e8;
/// The first call aims at this many seconds at [`INITIAL_RATE`].
const FIRST_CALL_SECONDS: f64 = 0.25;
/// Most a call's measured rate may raise the next call's size (unless the
/// call filled the device: its rate is then the device's, not a guess).
const MAX_RATE_GROWTH: f64 = 4.0;
/// A call grows to the engine's [`CallSizing::fill_reps`] replications
/// within this many calls' work at the rate ([`CALL_SECONDS`] each): a GPU
/// measured or calibrated at its full width runs the default study in one
/// call, while a slow device, or one not yet measured, still returns rows
/// and listens to Ctrl-C between passes of bounded calls.
pub const FILL_CALLS: f64 = 8.0;
/// Memory the points in flight may hold (their histograms and
/// replication results), beyond the first point.
pub const WINDOW_BYTES: u64 = 256 << 20;

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

/// Customers of one replication of `p`, warm-up included.
pub fn rep_customers(p: &PreparedPoint) -> f64 {
    f64::from(p.params.customers) + f64::from(p.params.warmup)
}

/// Work of one replication of `p`, in the kernels' loop iterations.
pub fn rep_work(p: &PreparedPoint) -> f64 {
    rep_customers(p) * loop_cost_per_customer(&p.params) as f64
}

/// One point's replications so far.
struct State {
    sections: u32,
    reps: Vec<RepResult>,
    /// Per section, `params.hist_span()` wait histograms of `HIST_BINS`
    /// counts, one after the other (the replications' first, second, …
    /// parts: [`slot_histograms`]).
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
    /// The current round's replications not yet given to a call:
    /// (section, first replication, count).
    next: VecDeque<(u32, u32, u32)>,
    /// Replications that overflowed, to run again at the capacity they ran
    /// at, so that what they added to their section's histogram is taken
    /// back: (section, first replication, count, capacity). They count in
    /// `round_left` until they are.
    undo: VecDeque<(u32, u32, u32, u32)>,
    /// Every (section, first replication, count) dealt so far, to simulate
    /// again with a wider histogram range.
    dealt: Vec<(u32, u32, u32)>,
    /// The point's engine record, with its current histogram scale.
    params: PointParams,
    /// The histogram scale (1 / `params.inv_hist_scale`).
    scale: f64,
    /// The current round: its first replication, its results so far (in
    /// replication order) and how many are still to come.
    round_start: u32,
    round: Vec<RepResult>,
    round_left: u32,
}

impl State {
    fn new(p: &PreparedPoint, reps0: u32) -> State {
        let sections = hist_batches(reps0);
        let span = p.rep_sections(reps0);
        let mut params = p.params;
        if span > 1 {
            params.rep_sections = span;
        }
        let per_section = HIST_BINS as usize * span as usize;
        let next = (0..sections)
            .map(|b| {
                let (s, e) = (
                    batch_start(reps0, sections, b),
                    batch_start(reps0, sections, b + 1),
                );
                (b, s, e - s)
            })
            .filter(|x| x.2 > 0)
            .collect::<VecDeque<_>>();
        let mut st = State {
            sections,
            reps: Vec::with_capacity(reps0 as usize),
            hist: vec![vec![0; per_section]; sections as usize],
            n: reps0,
            seconds: 0.0,
            stats: PointStats::default(),
            done: None,
            error: None,
            capacity: 0,
            max_in_system: 0,
            undo: VecDeque::new(),
            dealt: next.iter().copied().collect(),
            next,
            params,
            scale: p.scale,
            round_start: 0,
            round: Vec::new(),
            round_left: 0,
        };
        st.begin_round();
        st
    }

    /// Sets up the buffer of the round `next` holds: its replications form
    /// one range (whatever sections they are dealt to).
    fn begin_round(&mut self) {
        let start = self.next.iter().map(|x| x.1).min().unwrap_or(self.n);
        let end = self.next.iter().map(|x| x.1 + x.2).max().unwrap_or(self.n);
        let count: u32 = self.next.iter().map(|x| x.2).sum();
        debug_assert_eq!(end - start, count, "a round's replications are one range");
        self.round_start = start;
        self.round_left = count;
        self.round = vec![RepResult::default(); (end - start) as usize];
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
        self.next = self.dealt.iter().copied().collect();
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
        self.dealt.extend(self.next.iter().copied());
        self.n += per_section * self.sections;
    }

    /// Replications handed to calls but not finished, or not yet handed.
    fn pending_reps(&self) -> u64 {
        let undo: u64 = self.undo.iter().map(|x| u64::from(x.2)).sum();
        undo + self.next.iter().map(|x| u64::from(x.2)).sum::<u64>()
    }

    /// Bytes it holds (histograms and results), roughly.
    fn bytes(&self) -> u64 {
        let rep = std::mem::size_of::<RepResult>() as u64;
        u64::from(self.sections) * u64::from(self.params.hist_span()) * u64::from(HIST_BINS) * 8
            + (self.reps.capacity() + self.round.len()) as u64 * rep
    }

    /// The record its next calls run: its histogram scale (perhaps
    /// widened) and its dispatch capacity (perhaps grown).
    fn call_params(&self) -> PointParams {
        let mut p = self.params;
        p.capacity = p.capacity.max(self.capacity);
        p
    }
}

/// A point's histograms slot by slot (`HIST_BINS` counts each), from
/// [`State::hist`]'s sections of one or more slots: the sections the
/// statistics weigh.
fn slot_histograms(hist: &[Vec<u64>]) -> impl Iterator<Item = &[u64]> {
    hist.iter().flat_map(|h| h.chunks(HIST_BINS as usize))
}

/// Finishes a round of point `p`: its replications join the point's (or
/// the point fails if any still overflowed the dispatch kernel at its
/// largest capacity), its statistics are taken, and either every
/// replication so far is planned again with a wider histogram range or its
/// next round is planned.
fn finish_round(p: &PreparedPoint, st: &mut State) {
    let round = std::mem::take(&mut st.round);
    let peak = round.iter().map(|r| r.max_in_system).max();
    st.max_in_system = st.max_in_system.max(peak.unwrap_or(0));
    if let Some(e) = overflow_error(p, &round, st.call_params().dispatch_capacity()) {
        st.error = Some(e);
        st.done = Some(false);
        return;
    }
    st.reps.extend_from_slice(&round);
    let batches: Vec<&[u64]> = slot_histograms(&st.hist).collect();
    let service = &p.grid.service;
    st.stats = point_stats(&st.reps, &batches, st.scale, service, p.params.drops_late());
    if p.params.has_fleet() {
        // A fleet's service time depends on the server, and so on the
        // wait: the convolution with the service law does not hold.
        st.stats.p99_sojourn = f64::NAN;
        st.stats.p99_sojourn_ci95 = None;
    }
    if !st.rescale(p) {
        st.plan(p);
    }
    if st.done.is_none() {
        st.begin_round();
        progress::plan_more(f64::from(st.round_left) * rep_customers(p));
    }
}

/// The points in flight and how fast the engine goes.
struct Window<'p> {
    points: &'p [PreparedPoint],
    reps: u32,
    /// States of points `first..first + states.len()`.
    first: usize,
    states: VecDeque<State>,
    /// Work rate (loop iterations per second): measured, or given, or
    /// [`INITIAL_RATE`].
    rate: f64,
    /// Whether `rate` was measured or given.
    rate_known: bool,
    /// The engine hands tiles over as they finish ([`Engine::streams`]).
    streams: bool,
    /// What the engine's calls should and may hold.
    sizing: CallSizing,
}

/// Whose a tile of a call is.
#[derive(Clone, Copy)]
struct Owner {
    /// Index into `points`.
    point: usize,
    section: u32,
    /// The tile takes back from its section's histogram what its
    /// replications added when they overflowed (see [`State::undo`]).
    undo: bool,
}

/// One engine call: its points' parameters and tiles, and whose each tile
/// is.
struct Call {
    params: Vec<PointParams>,
    tiles: Vec<Tile>,
    owner: Vec<Owner>,
    slots: u32,
    work: f64,
    /// The points of the call, first and last.
    span: (usize, usize),
}

impl Call {
    fn empty(first: usize) -> Call {
        Call {
            params: Vec::new(),
            tiles: Vec::new(),
            owner: Vec::new(),
            slots: 0,
            work: 0.0,
            span: (first, first),
        }
    }

    /// The index of `params` in the call's records, added if new.
    fn record(&mut self, params: PointParams) -> u32 {
        match self.params.iter().position(|q| *q == params) {
            Some(i) => i as u32,
            None => {
                self.params.push(params);
                self.params.len() as u32 - 1
            }
        }
    }

    /// A call of `tiles` (indices into this call's, all of one point
    /// `point`), with their own parameter records and histogram slots.
    fn subset(&self, point: usize, tiles: &[usize], points: &[PreparedPoint]) -> Call {
        let mut call = Call::empty(point);
        let mut slots: Vec<(u32, u32)> = Vec::new();
        for &i in tiles {
            let t = &self.tiles[i];
            debug_assert_eq!(self.owner[i].point, point);
            let params = self.params[t.param_index as usize];
            let param_index = call.record(params);
            let slot = match slots.iter().find(|s| s.0 == t.hist_slot) {
                Some(s) => s.1,
                None => {
                    slots.push((t.hist_slot, call.slots));
                    call.slots += params.hist_span();
                    call.slots - params.hist_span()
                }
            };
            call.tiles.push(Tile {
                param_index,
                hist_slot: slot,
                ..*t
            });
            call.owner.push(self.owner[i]);
            call.work += f64::from(t.rep_count) * rep_work(&points[point]);
        }
        call
    }
}

impl<'p> Window<'p> {
    fn state(&mut self, point: usize) -> &mut State {
        &mut self.states[point - self.first]
    }

    fn finished(&self) -> bool {
        self.first == self.points.len() && self.states.is_empty()
    }

    /// Admits points until the window holds a call's worth of work (or
    /// [`CHUNK_REPS`] replications, or [`WINDOW_BYTES`]).
    fn admit(&mut self, budget: f64) {
        let (mut work, mut reps, mut bytes) = (0.0, 0u64, 0u64);
        for (i, st) in self.states.iter().enumerate() {
            let pending = st.pending_reps();
            work += pending as f64 * rep_work(&self.points[self.first + i]);
            reps += pending;
            bytes += st.bytes();
        }
        loop {
            let next = self.first + self.states.len();
            if next == self.points.len() {
                return;
            }
            if !self.states.is_empty()
                && ((work >= budget && reps >= self.sizing.fill_reps)
                    || work >= budget * FILL_CALLS
                    || reps >= self.sizing.max_reps
                    || bytes >= WINDOW_BYTES)
            {
                return;
            }
            let p = &self.points[next];
            let st = State::new(p, first_round(p, self.reps));
            work += f64::from(st.n) * rep_work(p);
            reps += u64::from(st.n);
            bytes += st.bytes();
            self.states.push_back(st);
        }
    }

    /// The next call: the window's pending replications in grid order, up
    /// to `budget` work (or the engine's `fill_reps` replications, within
    /// [`FILL_CALLS`] budgets) and within the engine's limits on
    /// replications, tiles and histogram slots (at least one replication):
    /// a call is cut to what the engine's bindings hold before it is made.
    /// Tiles of a point whose dispatch queues may overflow get a histogram
    /// slot each (so an overflowed tile can be accounted for, or not, on
    /// its own); the others one per piece of a section. A point's undo
    /// tiles come before its round's.
    fn next_call(&mut self, budget: f64) -> Call {
        let mut call = Call::empty(self.first);
        let mut reps = 0u64;
        for i in 0..self.states.len() {
            let point = self.first + i;
            let p = &self.points[point];
            let cost = rep_work(p);
            let params = self.states[i].call_params();
            let slot_per_tile = dispatch::can_overflow(&params);
            let span = params.hist_span();
            // The point's records in the call: (capacity, index).
            let mut records: Vec<(u32, u32)> = Vec::new();
            loop {
                let st = &self.states[i];
                let (undo, (section, rep_start, count), capacity) = match st.undo.front() {
                    Some(&(s, r, n, c)) => (true, (s, r, n), c),
                    None => match st.next.front() {
                        Some(&x) => (false, x, params.capacity),
                        None => break,
                    },
                };
                let sizing = &self.sizing;
                let room_work = ((budget - call.work) / cost).floor().max(0.0) as u64;
                let room_fill = sizing
                    .fill_reps
                    .saturating_sub(reps)
                    .min(((budget * FILL_CALLS - call.work) / cost).floor().max(0.0) as u64);
                // Tiles and slots: a tile per TILE_REPS replications, and a
                // slot per tile or one for the piece.
                let tiles_left = sizing.max_tiles.saturating_sub(call.tiles.len() as u64);
                let slots_left =
                    sizing.max_slots.saturating_sub(u64::from(call.slots)) / u64::from(span);
                let room_bindings = if slot_per_tile {
                    tiles_left.min(slots_left)
                } else if slots_left == 0 {
                    0
                } else {
                    tiles_left
                }
                .saturating_mul(u64::from(TILE_REPS));
                let room = room_work
                    .max(room_fill)
                    .min(sizing.max_reps.saturating_sub(reps))
                    .min(room_bindings);
                let mut take = u64::from(count).min(room) as u32;
                if take == 0 {
                    if reps > 0 {
                        return call;
                    }
                    take = 1;
                }
                let st = &mut self.states[i];
                match (undo, take == count) {
                    (true, true) => {
                        st.undo.pop_front();
                    }
                    (true, false) => {
                        st.undo[0] = (section, rep_start + take, count - take, capacity)
                    }
                    (false, true) => {
                        st.next.pop_front();
                    }
                    (false, false) => st.next[0] = (section, rep_start + take, count - take),
                }
                let param_index = match records.iter().find(|r| r.0 == capacity) {
                    Some(r) => r.1,
                    None => {
                        call.params.push(PointParams { capacity, ..params });
                        let index = call.params.len() as u32 - 1;
                        records.push((capacity, index));
                        index
                    }
                };
                let mut slot = None;
                let mut r = rep_start;
                while r < rep_start + take {
                    let n = (rep_start + take - r).min(TILE_REPS);
                    if slot.is_none() || slot_per_tile {
                        slot = Some(call.slots);
                        call.slots += span;
                    }
                    call.tiles.push(Tile {
                        param_index,
                        hist_slot: slot.expect("a slot"),
                        rep_start: r,
                        rep_count: n,
                    });
                    call.owner.push(Owner {
                        point,
                        section,
                        undo,
                    });
                    r += n;
                }
                reps += u64::from(take);
                call.work += f64::from(take) * cost;
                call.span.1 = point;
            }
        }
        call
    }

    /// Accounts for a finished tile of `call`; reports the points now done.
    ///
    /// A tile in which dispatch replications overflowed their capacity,
    /// while a larger one is within the limit, grows the point's capacity,
    /// and its overflowed replications run again at it (they go back to the
    /// front of the round). Where at least half the tile's replications
    /// overflowed, the tile is not accounted for at all and all of them run
    /// again; otherwise the others are accounted for, and the overflowed
    /// ones also run again at the capacity they overflowed, in undo tiles
    /// whose histograms are subtracted from their section's (the engines
    /// are deterministic, so that takes back exactly what they added). At
    /// the largest capacity the tile is accounted for as it is, and the
    /// point fails when its round is done.
    fn tile_done(
        &mut self,
        call: &Call,
        t: &TileDone<'_>,
        on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    ) -> Result<()> {
        let tile = &call.tiles[t.tile];
        let params = &call.params[tile.param_index as usize];
        let owner = call.owner[t.tile];
        let p = &self.points[owner.point];
        let st = self.state(owner.point);
        if st.done.is_some() {
            // A point that already failed: its other tiles are dropped.
            return Ok(());
        }
        st.seconds += t.seconds;
        let customers = f64::from(tile.rep_count) * rep_customers(p);
        progress::customers_done(customers);
        let hist = &mut st.hist[owner.section as usize];
        if owner.undo {
            for (dst, &src) in hist.iter_mut().zip(t.hist) {
                *dst = dst.checked_sub(src).context(
                    "re-running overflowed replications at the same capacity did not reproduce \
                     their waits (the engine is not deterministic)",
                )?;
            }
            st.round_left -= tile.rep_count;
        } else {
            let overflowed: Vec<u32> = if dispatch::can_overflow(params) {
                (0..t.reps.len() as u32)
                    .filter(|&l| t.reps[l as usize].status & rep_status::QUEUE_OVERFLOW != 0)
                    .collect()
            } else {
                Vec::new()
            };
            let grown = if overflowed.is_empty() {
                None
            } else {
                dispatch::grow(params, params.dispatch_capacity())
            };
            let mut again = 0;
            if let Some(c) = grown {
                st.capacity = st.capacity.max(c);
                if 2 * overflowed.len() >= t.reps.len() {
                    st.next
                        .push_front((owner.section, tile.rep_start, tile.rep_count));
                    progress::plan_more(customers);
                    return Ok(());
                }
                for run in overflowed.chunk_by(|a, b| a + 1 == *b) {
                    let (first, n) = (tile.rep_start + run[0], run.len() as u32);
                    st.undo
                        .push_back((owner.section, first, n, params.capacity));
                    st.next.push_front((owner.section, first, n));
                    progress::plan_more(2.0 * f64::from(n) * rep_customers(p));
                    again += n;
                }
            }
            let at = (tile.rep_start - st.round_start) as usize;
            st.round[at..at + t.reps.len()].copy_from_slice(t.reps);
            for (dst, &src) in hist.iter_mut().zip(t.hist) {
                *dst += src;
            }
            // The overflowed ones count twice until they are done: run
            // again, and undone.
            st.round_left = st.round_left - tile.rep_count + 2 * again;
        }
        if st.round_left == 0 {
            finish_round(p, st);
        }
        self.report_ready(on_point)
    }

    /// Point `point` fails with `e`: its unfinished replications are
    /// dropped and it is reported with the error when its turn comes.
    fn fail(&mut self, point: usize, e: &anyhow::Error) {
        let p = &self.points[point];
        let st = self.state(point);
        if st.done.is_some() {
            return;
        }
        // What it will not simulate counts as done for the progress.
        progress::customers_done(f64::from(st.round_left) * rep_customers(p));
        st.error = Some(format!("{e:#}").replace('\n', " "));
        st.done = Some(false);
        st.next.clear();
        st.undo.clear();
        st.round = Vec::new();
        st.round_left = 0;
    }

    /// Reports finished points at the front of the window, in grid order.
    fn report_ready(
        &mut self,
        on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    ) -> Result<()> {
        while let Some(st) = self.states.front_mut() {
            let Some(ok) = st.done else { break };
            let p = &self.points[self.first];
            let error = st.error.take();
            let result = PointResult {
                point: p,
                stats: std::mem::take(&mut st.stats),
                hist: slot_histograms(&std::mem::take(&mut st.hist))
                    .map(<[u64]>::to_vec)
                    .collect(),
                seconds: st.seconds,
                converged: p.precision.filter(|_| error.is_none()).map(|_| ok),
                max_in_system: dispatch::can_overflow(&p.params).then_some(st.max_in_system),
                error,
            };
            self.states.pop_front();
            self.first += 1;
            on_point(result)?;
        }
        Ok(())
    }

    /// What the next call may hold: its target seconds at the rate. An
    /// engine that returns results only at the end starts with a short
    /// call, until its rate is known; one that streams may overshoot
    /// harmlessly.
    fn budget(&self) -> f64 {
        if self.streams {
            self.rate * STREAMING_CALL_SECONDS
        } else if self.rate_known {
            self.rate * CALL_SECONDS
        } else {
            self.rate * FIRST_CALL_SECONDS
        }
    }

    /// Learns from a call of `work` that took `seconds`: a slower rate at
    /// once, a faster one at most [`MAX_RATE_GROWTH`]-fold per call unless
    /// the engine streams or the call `filled` the engine (a short call's
    /// rate is noisy; a device-filling one is the device's).
    fn measured(&mut self, work: f64, seconds: f64, filled: bool) {
        if work > 0.0 && seconds > 0.0 {
            let rate = work / seconds;
            self.rate = if self.streams || !self.rate_known || filled {
                rate
            } else {
                rate.min(self.rate * MAX_RATE_GROWTH)
            };
            self.rate_known = true;
        }
    }
}

/// [`run_points`] that stops when `stop` is set: the engine is watched, so
/// the call in flight stops within milliseconds; the points it completed
/// before are reported, the rest dropped, and an [`Interrupted`] error is
/// returned.
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
    run_points_at(points, table, reps, engine, on_point, stop, isolate, None)
}

/// [`run_points_until`] with the engine's work rate already measured (loop
/// iterations per second, e.g. by [`super::estimate`]), which sizes the
/// first call.
#[allow(clippy::too_many_arguments)]
pub fn run_points_at<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
    isolate: bool,
    rate: Option<f64>,
) -> Result<()> {
    let run = Run {
        table,
        watch: Watch {
            stop,
            customers: progress::live_counter(),
        },
        isolate,
    };
    run_loop(points, reps, engine, on_point, &run, rate, None)
}

/// What every call of a run shares.
struct Run<'a> {
    table: &'a [f32],
    watch: Watch<'a>,
    isolate: bool,
}

/// The run loop; `fixed_budget` pins every call's work (tests).
fn run_loop<'p>(
    points: &'p [PreparedPoint],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    run: &Run<'_>,
    rate: Option<f64>,
    fixed_budget: Option<f64>,
) -> Result<()> {
    if let Some(p) = points.iter().find(|p| p.warmup_auto && p.pilot.is_none()) {
        anyhow::bail!(
            "grid point {}: warmup = \"auto\" but no pilot has chosen its warm-up (call \
             warmup::resolve before running the points)",
            p.grid.index
        );
    }
    let sizing = engine.call_sizing();
    let mut window = Window {
        points,
        reps,
        first: 0,
        states: VecDeque::new(),
        rate: rate.or(sizing.expected_rate).unwrap_or(INITIAL_RATE),
        rate_known: rate.or(sizing.expected_rate).is_some(),
        streams: engine.streams(),
        sizing,
    };
    while !window.finished() {
        if run.watch.stopped() {
            return Err(Interrupted.into());
        }
        let budget = fixed_budget.unwrap_or_else(|| window.budget());
        window.admit(budget);
        let call = window.next_call(budget);
        anyhow::ensure!(
            !call.tiles.is_empty(),
            "the run loop found nothing to run with points {}.. unfinished",
            window.first
        );
        let started = Instant::now();
        match run_call(engine, &mut window, &call, run, on_point)? {
            Ok(()) => {
                let fill = window.sizing.fill_reps;
                let filled = fill > 0
                    && call
                        .tiles
                        .iter()
                        .map(|t| u64::from(t.rep_count))
                        .sum::<u64>()
                        >= fill;
                window.measured(call.work, started.elapsed().as_secs_f64(), filled)
            }
            Err((e, _)) if !run.isolate => return Err(e),
            Err((e, delivered)) => {
                // The tiles it did not finish, point by point: a point the
                // engine fails on alone fails; the others go on.
                let undone: Vec<usize> = (0..call.tiles.len()).filter(|&i| !delivered[i]).collect();
                let mut failing: Vec<usize> = undone.iter().map(|&i| call.owner[i].point).collect();
                failing.dedup();
                if call.span.0 == call.span.1 {
                    window.fail(call.span.0, &e);
                } else {
                    for point in failing {
                        let tiles: Vec<usize> = undone
                            .iter()
                            .copied()
                            .filter(|&i| call.owner[i].point == point)
                            .collect();
                        let alone = call.subset(point, &tiles, points);
                        if let Err((e, _)) = run_call(engine, &mut window, &alone, run, on_point)? {
                            window.fail(point, &e);
                        }
                    }
                }
            }
        }
        // Points with nothing left to run (a precision point at its budget
        // after a round finished in this call, a failed point) are reported
        // now.
        window.report_ready(on_point)?;
    }
    Ok(())
}

/// One watched engine call, its tiles accounted for as they finish. The
/// outer error ends the run (a stop: [`Interrupted`]; an error of a point's
/// own or of `on_point`); the inner one is the engine's, naming the call's
/// points, with which of the call's tiles were delivered before it.
#[allow(clippy::type_complexity)]
fn run_call<'p>(
    engine: &mut dyn Engine,
    window: &mut Window<'p>,
    call: &Call,
    run: &Run<'_>,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
) -> Result<Result<(), (anyhow::Error, Vec<bool>)>> {
    let batch = Batch {
        params: &call.params,
        tiles: &call.tiles,
        table: run.table,
        slots: call.slots,
    };
    let mut delivered = vec![false; call.tiles.len()];
    let mut inner_error = false;
    let result = engine.run_watched(&batch, run.watch, &mut |t| {
        delivered[t.tile] = true;
        window
            .tile_done(call, &t, on_point)
            .inspect_err(|_| inner_error = true)
    });
    let points = window.points;
    let (a, b) = call.span;
    let context = |engine: &dyn Engine| failed_on(engine, &points[a].grid, &points[b].grid);
    match result {
        Ok(()) => {}
        // A point's own failure or on_point's: as it is.
        Err(e) if inner_error => return Err(e),
        Err(e) if e.is::<Cancelled>() => return Err(Interrupted.into()),
        Err(e) => return Ok(Err((e.context(context(engine)), delivered))),
    }
    let n = delivered.iter().filter(|&&d| d).count();
    if n != call.tiles.len() {
        let e = anyhow::anyhow!("the engine returned {n} of {} tiles", call.tiles.len());
        return Ok(Err((e.context(context(engine)), delivered)));
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cpu::CpuEngine;
    use crate::engine::BatchOutput;
    use crate::spec::{Spec, SweepArgs};

    /// The CPU engine seen as one that hands results over only at the end
    /// (as the GPU does), recording the replications of each call.
    struct Whole {
        inner: CpuEngine,
        calls: Vec<usize>,
    }

    impl Whole {
        fn new(threads: usize) -> Whole {
            Whole {
                inner: CpuEngine::new(threads),
                calls: Vec::new(),
            }
        }
    }

    impl Engine for Whole {
        fn label(&self) -> String {
            "whole".into()
        }
        fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
            self.calls.push(batch.total_reps());
            self.inner.run(batch)
        }
    }

    fn spec(extra: impl FnOnce(&mut SweepArgs)) -> Spec {
        let mut a = SweepArgs {
            axes: crate::spec::AxisArgs {
                routing: vec!["random,central,jsq".into()],
                servers: vec!["1,3".into()],
                rho: vec!["0.7".into()],
                service: vec!["exp(mean=1)".into()],
                ..crate::spec::AxisArgs::default()
            },
            reps: Some("37".into()),
            customers: Some("300".into()),
            warmup: Some("20".into()),
            ..SweepArgs::default()
        };
        extra(&mut a);
        Spec::load(&a).unwrap()
    }

    fn run(spec: &Spec, engine: &mut dyn Engine, budget: Option<f64>) -> Vec<(u32, PointStats)> {
        let (points, table) = super::super::prepare(spec, spec.points());
        let mut got = Vec::new();
        let stop = AtomicBool::new(false);
        let run = Run {
            table: &table,
            watch: Watch {
                stop: &stop,
                customers: progress::live_counter(),
            },
            isolate: false,
        };
        run_loop(
            &points,
            spec.run.reps,
            engine,
            &mut |r| {
                got.push((r.point.grid.index, r.stats));
                Ok(())
            },
            &run,
            None,
            budget,
        )
        .unwrap();
        got
    }

    #[test]
    fn results_do_not_depend_on_how_work_is_cut() {
        for precision in [false, true] {
            let s = spec(|a| {
                if precision {
                    a.precision = Some("0.2".into());
                    a.max_customers = Some("200000".into());
                }
            });
            let reference = run(&s, &mut CpuEngine::new(2), None);
            assert_eq!(reference.len(), 6);
            assert!(reference.windows(2).all(|w| w[0].0 < w[1].0));
            // One replication a call: every round spans many calls.
            let mut tiny = Whole::new(1);
            assert_eq!(run(&s, &mut tiny, Some(1.0)), reference);
            assert!(tiny.calls.iter().all(|&n| n == 1));
            assert!(tiny.calls.len() >= 6 * 37, "{} calls", tiny.calls.len());
            // Everything at once (each round of every point in one call).
            let mut big = Whole::new(3);
            assert_eq!(run(&s, &mut big, Some(1e15)), reference);
            if !precision {
                assert_eq!(big.calls, [6 * 37]);
            }
        }
    }

    /// Issue 25: M/M/1 at ρ = 0.5 has P(wait > 0) = 1/2, so its median
    /// wait is 0 or, where a run has slightly more than half its customers
    /// wait, a tiny wait in the histogram's underflow bin, whose CI reaches
    /// 0. That simulated every replication of the point again (this seed:
    /// all 304 once more), twice the work the CSV row shows; the progress
    /// line counted it and said 2× what the CSV holds.
    /// No range resolves such a median: each replication runs once.
    #[test]
    fn a_median_at_the_zero_atom_does_not_simulate_the_point_again() {
        let s = spec(|a| {
            a.axes.routing = vec!["random".into()];
            a.axes.servers = vec!["1".into()];
            a.axes.rho = vec!["0.5".into()];
            a.reps = Some("16".into());
            a.customers = Some("200000".into());
            a.warmup = Some("0".into());
            a.seed = Some("10".into());
            a.precision = Some("0.002".into());
        });
        let mut e = Whole::new(2);
        let got = run(&s, &mut e, None);
        let stats = &got[0].1;
        assert!(stats.wait_pct[crate::stats::P50] < 1e-3, "{stats:?}");
        assert_eq!(
            e.calls.iter().sum::<usize>(),
            stats.reps,
            "replications simulated, in calls {:?}, against those reported",
            e.calls
        );
    }

    #[test]
    fn calls_start_short_grow_with_the_measured_rate_and_hold_chunk_reps_at_most() {
        let s = spec(|a| {
            a.reps = Some("30000".into());
            a.customers = Some("60".into());
            a.warmup = Some("0".into());
        });
        let mut e = Whole::new(2);
        run(&s, &mut e, None);
        let calls = &e.calls;
        assert_eq!(calls.iter().sum::<usize>(), 6 * 30000);
        assert!(calls.iter().all(|&n| n as u64 <= CHUNK_REPS), "{calls:?}");
        // The first call holds what the assumed rate does in a quarter of a
        // second, the later ones as much as CHUNK_REPS allows.
        let (points, _) = super::super::prepare(&s, s.points());
        let first = (INITIAL_RATE * FIRST_CALL_SECONDS / rep_work(&points[0])).ceil() as usize;
        assert!(calls[0] <= first, "{calls:?}");
        assert!(calls.iter().any(|&n| n as u64 == CHUNK_REPS), "{calls:?}");
    }

    /// What the run loop reports of each point: (point, stats, section
    /// histograms, max_in_system, error).
    type Full = Vec<(u32, PointStats, Vec<Vec<u64>>, Option<u32>, Option<String>)>;

    fn run_prepared(
        points: &[PreparedPoint],
        table: &[f32],
        reps: u32,
        engine: &mut dyn Engine,
        budget: Option<f64>,
    ) -> Full {
        let stop = AtomicBool::new(false);
        let run = Run {
            table,
            watch: Watch {
                stop: &stop,
                customers: progress::live_counter(),
            },
            isolate: true,
        };
        let mut got = Vec::new();
        run_loop(
            points,
            reps,
            engine,
            &mut |r| {
                let index = r.point.grid.index;
                got.push((index, r.stats, r.hist, r.max_in_system, r.error));
                Ok(())
            },
            &run,
            None,
            budget,
        )
        .unwrap();
        got
    }

    #[test]
    fn queues_grow_tile_by_tile_as_if_unbounded() {
        // An unstable point, every replication of which overflows, and a
        // heavy one, a few of whose replications do (so both ways of
        // running overflowed replications again are used).
        let unstable = |a: &mut SweepArgs| {
            a.axes.routing = vec!["jsq,random".into()];
            a.axes.servers = vec!["2".into()];
            a.axes.rho = vec!["0.7,1.3".into()];
            a.reps = Some("70".into());
            a.customers = Some("12000".into());
            a.warmup = Some("0".into());
            a.allow_unstable = true;
        };
        let heavy = |a: &mut SweepArgs| {
            a.axes.routing = vec!["jsq".into()];
            a.axes.servers = vec!["2".into()];
            a.axes.rho = vec!["0.99".into()];
            a.axes.service = vec!["hyperexp(scv=10,mean=1)".into()];
            a.reps = Some("64".into());
            a.customers = Some("150000".into());
            a.warmup = Some("0".into());
        };
        for s in [spec(unstable), spec(heavy)] {
            let (points, table) = super::super::prepare(&s, s.points());
            // The same points with room for their whole queues from the
            // start.
            let roomy: Vec<PreparedPoint> = points
                .iter()
                .map(|p| PreparedPoint {
                    grid: p.grid.clone(),
                    params: PointParams {
                        capacity: if dispatch::can_overflow(&p.params) {
                            dispatch::max_capacity(&p.params)
                        } else {
                            p.params.capacity
                        },
                        ..p.params
                    },
                    scale: p.scale,
                    warmup_auto: p.warmup_auto,
                    pilot: p.pilot,
                    precision: p.precision,
                })
                .collect();
            let reps = s.run.reps;
            let reference = run_prepared(&roomy, &table, reps, &mut CpuEngine::new(2), None);
            assert_eq!(reference.len(), points.len());
            // A point outgrows its first capacity.
            let grew = reference
                .iter()
                .find(|r| r.3.is_some_and(|m| m > dispatch::capacity(2)))
                .expect("a point whose queue grew");
            assert!(grew.4.is_none());
            let streamed = run_prepared(&points, &table, reps, &mut CpuEngine::new(2), None);
            assert_eq!(streamed, reference);
            // Whole calls (as the GPU hands them over): one replication a
            // call, and everything at once.
            let mut tiny = Whole::new(1);
            assert_eq!(
                run_prepared(&points, &table, reps, &mut tiny, Some(1.0)),
                reference
            );
            let mut big = Whole::new(2);
            assert_eq!(
                run_prepared(&points, &table, reps, &mut big, Some(1e15)),
                reference
            );
            // The first call held everything; the overflowed replications
            // ran again after.
            assert_eq!(big.calls[0], points.len() * reps as usize);
            assert!(big.calls.len() > 1, "{:?}", big.calls);
        }
    }

    /// An engine failing every call that holds point `bad`.
    struct FailOn {
        inner: CpuEngine,
        bad: u32,
        calls: usize,
    }

    impl Engine for FailOn {
        fn label(&self) -> String {
            "failon".into()
        }
        fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
            self.calls += 1;
            if batch.params.iter().any(|p| p.point_index == self.bad) {
                anyhow::bail!("injected");
            }
            self.inner.run(batch)
        }
    }

    #[test]
    fn a_failing_call_is_retried_point_by_point() {
        let s = spec(|_| {});
        let (points, table) = super::super::prepare(&s, s.points());
        let reference = run_prepared(&points, &table, s.run.reps, &mut CpuEngine::new(1), None);
        let mut failing = FailOn {
            inner: CpuEngine::new(1),
            bad: 3,
            calls: 0,
        };
        let got = run_prepared(&points, &table, s.run.reps, &mut failing, Some(1e15));
        // One call for all six points, then one for each alone.
        assert_eq!(failing.calls, 7);
        assert_eq!(got.len(), 6);
        for (g, r) in got.iter().zip(&reference) {
            if g.0 == 3 {
                let e = g.4.as_deref().expect("point 3 failed");
                assert!(
                    e.starts_with("failon failed on grid points 3..=3") && e.ends_with("injected"),
                    "{e}"
                );
            } else {
                assert_eq!(g, r);
            }
        }
    }

    #[test]
    fn a_stop_during_a_call_drops_the_unfinished_points() {
        let s = spec(|a| {
            a.axes.routing = vec!["random".into()];
            a.axes.servers = vec!["1,2,3,4".into()];
            a.reps = Some("8".into());
            a.customers = Some("3000000".into());
        });
        let (points, table) = super::super::prepare(&s, s.points());
        let stop = AtomicBool::new(false);
        let mut got = Vec::new();
        let mut stopped = None;
        let r = run_points_at(
            &points,
            &table,
            s.run.reps,
            &mut CpuEngine::new(1),
            &mut |r| {
                got.push(r.point.grid.index);
                // Stop once the first point is in: the engine is inside
                // its call (all four points are one call).
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                stopped = Some(Instant::now());
                Ok(())
            },
            &stop,
            false,
            Some(1e15),
        );
        assert!(r.unwrap_err().is::<Interrupted>());
        assert_eq!(got, [0]);
        // A point takes about a second; the stop far less.
        let took = stopped.unwrap().elapsed().as_secs_f64();
        assert!(took < 0.2, "{took} s");
    }
}
