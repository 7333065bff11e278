//! Running a whole batch with queues that grow: a dispatch replication
//! that overflows its capacity is re-run at twice the capacity until it
//! fits. The run loop ([`super::rounds`]) grows tile by tile instead; this
//! is for callers that hand an engine whole batches (tests, `qsweep bench`).

use anyhow::{Context, Result};

use crate::contract::{dispatch, rep_status, PointParams, Tile, HIST_BINS, TILE_REPS};
use crate::engine::{Batch, BatchOutput, Engine};

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
/// Histograms are exact either way. Assumes that the replications of one
/// slot are those of one parameter. (The run loop grows tile by tile
/// instead, see the module notes; this serves callers that run whole
/// batches.)
pub fn run_growing(engine: &mut dyn Engine, batch: &Batch) -> Result<(BatchOutput, Vec<u32>)> {
    anyhow::ensure!(
        batch.params.iter().all(|p| p.hist_span() == 1),
        "run_growing takes tiles of one histogram slot each (no rep_sections)"
    );
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
