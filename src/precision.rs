//! `--precision P`: replications added in rounds until the 95% CIs of the
//! mean and the p99 wait are within `P` × their estimates, or the point has
//! simulated `--max-customers` customers (warm-up included).
//!
//! # Rounds
//! - Round 0 runs `--reps` replications (at least [`MIN_FIRST_ROUND`]), as a
//!   fixed run would: replications 0..n, cut into `hist_batches(n)` sections
//!   (`engine::schedule`).
//! - Each later round estimates the replications needed from the current
//!   CIs, n·max(hw/(P·estimate))² over the mean and the p99 (CI half-widths
//!   shrink as 1/√n), plus [`MARGIN`], growing at most [`MAX_GROWTH`]-fold
//!   per round and at least by one replication per section; it never goes
//!   past `max_customers` (nor [`MAX_REPS`]). When not even one more
//!   replication per section fits, the point stops unconverged.
//! - Replication numbers continue across rounds (round r simulates
//!   replications n_r..n_{r+1}); they are part of every stream's key, so
//!   each round's replications are new and independent, and a point's
//!   numbers depend only on the seed, never on chunking, threads or what
//!   other points do.
//! - Statistics combine every round: the per-replication results are
//!   concatenated (means and their Student t CIs over all replications),
//!   and each round's new replications are dealt evenly to the point's
//!   sections, whose histograms accumulate. Percentile CIs therefore stay
//!   sectioning over the same `hist_batches` sections of (nearly) equal
//!   size: adding each round's batches as extra sections instead would mix
//!   batch quantiles of different variances in one t interval.
//!
//! Engine calls pack the next round of every unfinished point of a chunk,
//! split to stay within `sweep::CHUNK_REPS` and `sweep::CHUNK_CUSTOMERS`; a
//! point's row is written as soon as it and every point before it are done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::contract::{RepResult, Tile, HIST_BINS, TILE_REPS};
use crate::engine::schedule::{batch_start, hist_batches};
use crate::engine::{Batch, Engine};
use crate::stats::{point_stats, PointStats};
use crate::sweep::{
    check_overflow, Interrupted, PointResult, PreparedPoint, CHUNK_CUSTOMERS, CHUNK_REPS,
};

/// A point's stopping rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Precision {
    /// Target 95% CI half-width relative to the estimate (mean and p99 wait).
    pub target: f64,
    /// Most customers (warm-up included) the point may simulate.
    pub max_customers: u64,
}

/// Largest growth of the replication count in one round.
pub const MAX_GROWTH: f64 = 4.0;
/// Aim this much past the estimated need (the CI estimate is itself noisy).
pub const MARGIN: f64 = 1.1;
/// Smallest first round under `precision` (16 sections of one replication).
pub const MIN_FIRST_ROUND: u32 = 16;
/// Most replications per point (their results are kept in memory).
pub const MAX_REPS: u64 = 1 << 24;

/// Half-width over estimate; 0 when both are 0, None without a CI.
fn relative(hw: Option<f64>, estimate: f64) -> Option<f64> {
    let hw = hw?;
    Some(if hw <= 0.0 {
        0.0
    } else if estimate > 0.0 {
        hw / estimate
    } else {
        f64::INFINITY
    })
}

/// Relative 95% CI half-widths of the mean and the p99 wait.
pub fn relative_half_widths(s: &PointStats) -> (Option<f64>, Option<f64>) {
    (
        relative(s.mean_wait_ci95, s.mean_wait),
        relative(s.wait_pct_ci95[3], s.wait_pct[3]),
    )
}

/// Both CIs within `target` of their estimates.
pub fn converged(s: &PointStats, target: f64) -> bool {
    matches!(relative_half_widths(s), (Some(m), Some(p)) if m <= target && p <= target)
}

/// Replications to have after the next round, from `n` now (before the
/// budget is applied).
pub fn next_total(n: u64, s: &PointStats, target: f64) -> u64 {
    let ratio = match relative_half_widths(s) {
        (Some(m), Some(p)) => (m / target).powi(2).max((p / target).powi(2)),
        _ => MAX_GROWTH,
    };
    let want = (n as f64 * ratio * MARGIN).ceil();
    let most = (n as f64 * MAX_GROWTH).ceil();
    (want.min(most) as u64).max(n + 1)
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

/// [`crate::sweep::run_points_until`] for points with a [`Precision`] (a
/// point without one runs a single round, as a fixed run would).
pub fn run_points_until<'p>(
    points: &'p [PreparedPoint],
    table: &[f32],
    reps: u32,
    engine: &mut dyn Engine,
    on_point: &mut dyn FnMut(PointResult<'p>) -> Result<()>,
    stop: &AtomicBool,
) -> Result<()> {
    let per_rep = |p: &PreparedPoint| f64::from(p.params.customers) + f64::from(p.params.warmup);
    let per_slot = HIST_BINS as usize;
    let mut start = 0;
    while start < points.len() {
        // A chunk: as many points as the first rounds' budget allows.
        let end = crate::sweep::chunk_end(points, start, |p| first_round(p, reps));
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
                    crate::sweep::failed_on(
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
                check_overflow(&chunk[i], &round_reps[i])?;
                st.reps.append(&mut round_reps[i]);
                let batches: Vec<&[u64]> = st.hist.iter().map(Vec::as_slice).collect();
                let service = &chunk[i].grid.service;
                st.stats = point_stats(&st.reps, &batches, chunk[i].scale, &|x| service.cdf(x));
                st.plan(&chunk[i]);
            }
            while reported < chunk.len() {
                let st = &mut states[reported];
                let Some(ok) = st.done else { break };
                let p = &chunk[reported];
                on_point(PointResult {
                    point: p,
                    stats: std::mem::take(&mut st.stats),
                    seconds: st.seconds,
                    converged: p.precision.map(|_| ok),
                })?;
                // Free the point's replications.
                st.reps = Vec::new();
                st.hist = Vec::new();
                reported += 1;
            }
        }
        start = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(mean: f64, hw: f64, p99: f64, p99_hw: f64) -> PointStats {
        let mut s = PointStats {
            mean_wait: mean,
            mean_wait_ci95: Some(hw),
            ..PointStats::default()
        };
        s.wait_pct[3] = p99;
        s.wait_pct_ci95[3] = Some(p99_hw);
        s
    }

    #[test]
    fn convergence_needs_both_cis() {
        assert!(converged(&stats(1.0, 0.01, 10.0, 0.1), 0.01));
        assert!(!converged(&stats(1.0, 0.011, 10.0, 0.1), 0.01));
        assert!(!converged(&stats(1.0, 0.01, 10.0, 0.2), 0.01));
        // No waiting at all: nothing left to estimate.
        assert!(converged(&stats(0.0, 0.0, 0.0, 0.0), 0.01));
        assert!(!converged(&PointStats::default(), 0.01));
    }

    #[test]
    fn growth_follows_the_ci_and_is_capped() {
        // Twice the target: 4× the replications wanted, 4.4× with margin,
        // capped at 4×.
        assert_eq!(next_total(100, &stats(1.0, 0.02, 1.0, 0.01), 0.01), 400);
        // 1.2× the target on the p99: 1.44 × 1.1 ≈ 1.584.
        assert_eq!(next_total(100, &stats(1.0, 0.005, 1.0, 0.012), 0.01), 159);
        // No CI: grow by the cap.
        assert_eq!(next_total(10, &PointStats::default(), 0.01), 40);
        // Always at least one more.
        assert_eq!(next_total(10, &stats(1.0, 0.0, 1.0, 0.0), 0.01), 11);
    }
}
