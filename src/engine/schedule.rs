//! Turning grid points into tiles and histogram slots.
//!
//! Each point's replications are split into `hist_batches(reps)` contiguous
//! batches, each with its own histograms, so percentile CIs can be computed
//! by sectioning (batch percentiles are independent). A batch is cut into
//! tiles of at most [`TILE_REPS`] replications; a tile never spans two
//! batches, so a GPU workgroup can accumulate one histogram in shared memory.

use crate::contract::{Tile, TILE_REPS};

/// Sections per point for percentile CIs (Student t with 15 degrees of
/// freedom at 16): enough for a usable CI, few enough that each batch
/// percentile rests on thousands of customers.
pub const MAX_HIST_BATCHES: u32 = 16;

pub fn hist_batches(reps: u32) -> u32 {
    reps.clamp(1, MAX_HIST_BATCHES)
}

/// First replication of batch `b` of `n` over `reps` replications.
pub fn batch_start(reps: u32, n: u32, b: u32) -> u32 {
    (u64::from(reps) * u64::from(b) / u64::from(n)) as u32
}

/// Tiles for points `0..points` of a batch, `reps` replications each, their
/// histogram slots in point order: the tiles and the number of slots.
pub fn tiles_for_points(points: u32, reps: u32) -> (Vec<Tile>, u32) {
    let (mut tiles, mut slots) = (Vec::new(), 0);
    for i in 0..points {
        let (t, n) = tiles_for_point(i, reps, slots);
        tiles.extend(t);
        slots += n;
    }
    (tiles, slots)
}

/// Tiles for one point: `param_index` is the point's index in the batch's
/// parameter array and `first_slot` its first histogram slot. Returns the
/// tiles and the number of slots used (one per histogram batch).
pub fn tiles_for_point(param_index: u32, reps: u32, first_slot: u32) -> (Vec<Tile>, u32) {
    let n = hist_batches(reps);
    let mut tiles = Vec::new();
    for b in 0..n {
        let (start, end) = (batch_start(reps, n, b), batch_start(reps, n, b + 1));
        let mut r = start;
        while r < end {
            let count = (end - r).min(TILE_REPS);
            tiles.push(Tile {
                param_index,
                hist_slot: first_slot + b,
                rep_start: r,
                rep_count: count,
            });
            r += count;
        }
    }
    (tiles, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_every_rep_once_within_batches() {
        for reps in [1, 5, 16, 17, 100, 1024, 1500] {
            let (tiles, slots) = tiles_for_point(3, reps, 10);
            assert_eq!(slots, hist_batches(reps));
            let mut seen = vec![0u32; reps as usize];
            for t in &tiles {
                assert!(t.rep_count >= 1 && t.rep_count <= TILE_REPS);
                assert_eq!(t.param_index, 3);
                let b = t.hist_slot - 10;
                assert!(t.rep_start >= batch_start(reps, slots, b));
                assert!(t.rep_start + t.rep_count <= batch_start(reps, slots, b + 1));
                for r in t.rep_start..t.rep_start + t.rep_count {
                    seen[r as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "reps {reps}");
        }
    }
}
