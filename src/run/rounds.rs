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
//! # Engine calls, cut by time
//! The points in flight form a window (grid order); each engine call takes
//! the next replications of the window's rounds, in grid order, until its
//! work reaches what the engine does in [`CALL_SECONDS`] (or
//! [`STREAMING_CALL_SECONDS`] for an engine that hands tiles over as they
//! finish, see [`Engine::streams`]) at the rate measured on the calls so
//! far, or [`CHUNK_REPS`] replications. Work is counted in the kernels'
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

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result};

use super::point::{check_overflow, failed_on, PointResult, PreparedPoint};
use super::precision::{converged, next_total, MAX_REPS, MIN_FIRST_ROUND};
use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{RepResult, Tile, HIST_BINS, TILE_REPS};
use crate::engine::schedule::{batch_start, hist_batches};
use crate::engine::{Batch, Cancelled, Engine, TileDone, Watch};
use crate::progress;
use crate::stats::{point_stats, PointStats};

/// Replications in one engine call, at most (the call's results are held
/// in memory).
pub const CHUNK_REPS: u64 = 1 << 16;
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
/// Most a call's measured rate may raise the next call's size.
const MAX_RATE_GROWTH: f64 = 4.0;
/// Memory the points in flight may hold (their histograms and
/// replication results), beyond the first point.
pub const WINDOW_BYTES: u64 = 256 << 20;

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
    /// The current round's replications not yet given to a call:
    /// (section, first replication, count).
    next: VecDeque<(u32, u32, u32)>,
    /// The current round: its first replication, its results so far (in
    /// replication order) and how many are still to come.
    round_start: u32,
    round: Vec<RepResult>,
    round_left: u32,
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
        let mut st = State {
            sections,
            reps: Vec::with_capacity(reps0 as usize),
            hist: vec![vec![0; per_slot]; sections as usize],
            n: reps0,
            seconds: 0.0,
            stats: PointStats::default(),
            done: None,
            overflow: None,
            next,
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

    /// Replications handed to calls but not finished, or not yet handed.
    fn pending_reps(&self) -> u64 {
        self.next.iter().map(|x| u64::from(x.2)).sum()
    }

    /// Bytes it holds (histograms and results), roughly.
    fn bytes(&self) -> u64 {
        let rep = std::mem::size_of::<RepResult>() as u64;
        u64::from(self.sections) * u64::from(HIST_BINS) * 8
            + (self.reps.capacity() + self.round.len()) as u64 * rep
    }
}

/// Finishes a round of point `p`: its replications join the point's (or
/// the point fails if any overflowed the dispatch kernel), its statistics
/// are taken, and its next round is planned.
fn finish_round(p: &PreparedPoint, st: &mut State) {
    let round = std::mem::take(&mut st.round);
    if let Err(e) = check_overflow(p, &round) {
        st.overflow = Some(e);
        st.done = Some(false);
        return;
    }
    st.reps.extend_from_slice(&round);
    let batches: Vec<&[u64]> = st.hist.iter().map(Vec::as_slice).collect();
    let service = &p.grid.service;
    st.stats = point_stats(&st.reps, &batches, p.scale, &|x| service.cdf(x));
    st.plan(p);
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
}

/// One engine call: its points' parameters and tiles, and for each tile
/// the point (index into `points`) and section it belongs to.
struct Call {
    params: Vec<crate::contract::PointParams>,
    tiles: Vec<Tile>,
    owner: Vec<(usize, u32)>,
    slots: u32,
    work: f64,
    /// The points of the call, first and last.
    span: (usize, usize),
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
                && (work >= budget || reps >= CHUNK_REPS || bytes >= WINDOW_BYTES)
            {
                return;
            }
            let p = &self.points[next];
            let st = State::new(first_round(p, self.reps));
            work += f64::from(st.n) * rep_work(p);
            reps += u64::from(st.n);
            bytes += st.bytes();
            self.states.push_back(st);
        }
    }

    /// The next call: the window's pending replications in grid order, up
    /// to `budget` work and [`CHUNK_REPS`] replications (at least one).
    fn next_call(&mut self, budget: f64) -> Call {
        let mut call = Call {
            params: Vec::new(),
            tiles: Vec::new(),
            owner: Vec::new(),
            slots: 0,
            work: 0.0,
            span: (self.first, self.first),
        };
        let mut reps = 0u64;
        for i in 0..self.states.len() {
            let point = self.first + i;
            let p = &self.points[point];
            let cost = rep_work(p);
            let mut param_index = None;
            while let Some(&(section, rep_start, count)) = self.states[i].next.front() {
                let room_work = ((budget - call.work) / cost).floor().max(0.0) as u64;
                let room = room_work.min(CHUNK_REPS - reps);
                let mut take = u64::from(count).min(room) as u32;
                if take == 0 {
                    if reps > 0 {
                        return call;
                    }
                    take = 1;
                }
                let st = &mut self.states[i];
                if take == count {
                    st.next.pop_front();
                } else {
                    st.next[0] = (section, rep_start + take, count - take);
                }
                let param_index = *param_index.get_or_insert_with(|| {
                    call.params.push(p.params);
                    call.params.len() as u32 - 1
                });
                let slot = call.slots;
                call.slots += 1;
                let mut r = rep_start;
                while r < rep_start + take {
                    let n = (rep_start + take - r).min(TILE_REPS);
                    call.tiles.push(Tile {
                        param_index,
                        hist_slot: slot,
                        rep_start: r,
                        rep_count: n,
                    });
                    call.owner.push((point, section));
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
    fn tile_done(
        &mut self,
        call: &Call,
        t: &TileDone<'_>,
        on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    ) -> Result<()> {
        let tile = &call.tiles[t.tile];
        let (point, section) = call.owner[t.tile];
        let p = &self.points[point];
        let st = self.state(point);
        let at = (tile.rep_start - st.round_start) as usize;
        st.round[at..at + t.reps.len()].copy_from_slice(t.reps);
        if !t.hist.is_empty() {
            for (dst, &src) in st.hist[section as usize].iter_mut().zip(t.hist) {
                *dst += src;
            }
        }
        st.seconds += t.seconds;
        st.round_left -= tile.rep_count;
        progress::customers_done(f64::from(tile.rep_count) * rep_customers(p));
        if st.round_left == 0 {
            finish_round(p, st);
        }
        self.report_ready(on_point)
    }

    /// Reports finished points at the front of the window, in grid order.
    fn report_ready(
        &mut self,
        on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    ) -> Result<()> {
        while let Some(st) = self.states.front_mut() {
            let Some(ok) = st.done else { break };
            if let Some(e) = st.overflow.take() {
                return Err(e);
            }
            let p = &self.points[self.first];
            let result = PointResult {
                point: p,
                stats: std::mem::take(&mut st.stats),
                seconds: st.seconds,
                converged: p.precision.map(|_| ok),
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
    /// the engine streams (a short call's rate is noisy).
    fn measured(&mut self, work: f64, seconds: f64) {
        if work > 0.0 && seconds > 0.0 {
            let rate = work / seconds;
            self.rate = if self.streams || !self.rate_known {
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
pub fn run_points_until<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
) -> Result<()> {
    run_points_at(points, table, reps, engine, on_point, stop, None)
}

/// [`run_points_until`] with the engine's work rate already measured (loop
/// iterations per second, e.g. by [`super::estimate`]), which sizes the
/// first call.
pub fn run_points_at<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
    rate: Option<f64>,
) -> Result<()> {
    run_loop(points, table, reps, engine, on_point, stop, rate, None)
}

/// The run loop; `fixed_budget` pins every call's work (tests).
#[allow(clippy::too_many_arguments)]
fn run_loop<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
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
    let mut window = Window {
        points,
        reps,
        first: 0,
        states: VecDeque::new(),
        rate: rate.unwrap_or(INITIAL_RATE),
        rate_known: rate.is_some(),
        streams: engine.streams(),
    };
    let watch = Watch {
        stop,
        customers: progress::live_counter(),
    };
    while !window.finished() {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
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
        let batch = Batch {
            params: &call.params,
            tiles: &call.tiles,
            table,
            slots: call.slots,
        };
        let mut delivered = 0usize;
        let mut inner_error = false;
        let started = Instant::now();
        let result = engine.run_watched(&batch, watch, &mut |t| {
            delivered += 1;
            window
                .tile_done(&call, &t, on_point)
                .inspect_err(|_| inner_error = true)
        });
        match result {
            Ok(()) => {}
            // A point's own failure or on_point's: as it is.
            Err(e) if inner_error => return Err(e),
            Err(e) if e.is::<Cancelled>() => return Err(Interrupted.into()),
            Err(e) => {
                let (a, b) = call.span;
                return Err(e).with_context(|| failed_on(engine, &points[a].grid, &points[b].grid));
            }
        }
        if delivered != call.tiles.len() {
            let (a, b) = call.span;
            return Err(anyhow::anyhow!(
                "the engine returned {delivered} of {} tiles",
                call.tiles.len()
            ))
            .with_context(|| failed_on(engine, &points[a].grid, &points[b].grid));
        }
        window.measured(call.work, started.elapsed().as_secs_f64());
        // Points with nothing left to run (a precision point at its budget
        // after a round finished in this call) are reported now.
        window.report_ready(on_point)?;
    }
    Ok(())
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
            routing: vec!["random,central,jsq".into()],
            servers: vec!["1,3".into()],
            rho: vec!["0.7".into()],
            service: vec!["exp(mean=1)".into()],
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
        run_loop(
            &points,
            &table,
            spec.run.reps,
            engine,
            &mut |r| {
                got.push((r.point.grid.index, r.stats));
                Ok(())
            },
            &AtomicBool::new(false),
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

    #[test]
    fn a_stop_during_a_call_drops_the_unfinished_points() {
        let s = spec(|a| {
            a.routing = vec!["random".into()];
            a.servers = vec!["1,2,3,4".into()];
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
            Some(1e15),
        );
        assert!(r.unwrap_err().is::<Interrupted>());
        assert_eq!(got, [0]);
        // A point takes about a second; the stop far less.
        let took = stopped.unwrap().elapsed().as_secs_f64();
        assert!(took < 0.2, "{took} s");
    }
}
