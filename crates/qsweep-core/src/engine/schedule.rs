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

/// Fewest recorded customers in a histogram section cut from within a
/// replication: sections this long are many busy periods apart at the
/// loads where a few replications are run.
pub const MIN_SECTION_CUSTOMERS: u32 = 8192;

/// Relaxation times a section cut from within a replication spans at
/// least ([`min_section_customers`]).
pub const SECTION_RELAXATIONS: f64 = 100.0;

/// Sections each replication's recorded customers are cut into
/// (`PointParams::rep_sections`) when `reps` replications give fewer than
/// [`MAX_HIST_BATCHES`] sections: as many as make up [`MAX_HIST_BATCHES`]
/// in all, each at least `min_section` customers long; 1 with enough
/// replications, or too short ones.
///
/// Consecutive sections of one replication are nearly independent only
/// when they are long against the queue's relaxation time (batch means:
/// Law & Kelton, "Simulation Modeling and Analysis", 3rd ed., 2000, §9.5.3):
/// then a run of 4 long replications gets 16 sections (15 degrees of
/// freedom) instead of 4 (3), and its percentile CIs the width its data
/// support (issue 27: 4 × 200,000 M/M/1 customers at ρ 0.9 gave a p99 CI
/// 1.95× the seeds' spread).
pub fn sections_per_rep(reps: u32, customers: u32, min_section: u32) -> u32 {
    if reps >= MAX_HIST_BATCHES {
        return 1;
    }
    let wanted = MAX_HIST_BATCHES / reps.max(1);
    wanted
        .min(customers / min_section.max(MIN_SECTION_CUSTOMERS))
        .max(1)
}

/// Customers a section cut from within a replication needs at least
/// ([`sections_per_rep`]): [`SECTION_RELAXATIONS`] times the heavy-traffic
/// time scale (c_a² + c_s²) / (2 (1 − ρ)²) of a one-server queue at the
/// point's utilisation `rho`, in customers (Whitt, "Planning queueing
/// simulations", Management Science 35, 1989: the reflected Brownian
/// motion approximation, whose relaxation time grows as 1/(1 − ρ)²), never
/// under [`MIN_SECTION_CUSTOMERS`]. For M/M/1 at ρ 0.9 that is 10,000
/// customers; at ρ 0.99, 10^6. A queue of many servers at the same ρ
/// relaxes faster, so this errs toward fewer sections. None (one section)
/// where the scale is unbounded: ρ ≥ 1 or an infinite variance.
pub fn min_section_customers(rho: f64, scv_arrival: f64, scv_service: f64) -> Option<u32> {
    let scale = (scv_arrival + scv_service) / (2.0 * (1.0 - rho).powi(2));
    let need = SECTION_RELAXATIONS * scale;
    (rho < 1.0 && need.is_finite() && need < f64::from(u32::MAX))
        .then(|| (need.ceil() as u32).max(MIN_SECTION_CUSTOMERS))
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
    tiles_for_point_spanning(param_index, reps, first_slot, 1)
}

/// [`tiles_for_point`] for a point whose replications are cut into `span`
/// histogram sections each (`PointParams::rep_sections`): every batch owns
/// `span` consecutive slots.
pub fn tiles_for_point_spanning(
    param_index: u32,
    reps: u32,
    first_slot: u32,
    span: u32,
) -> (Vec<Tile>, u32) {
    let span = span.max(1);
    let n = hist_batches(reps);
    let mut tiles = Vec::new();
    for b in 0..n {
        let (start, end) = (batch_start(reps, n, b), batch_start(reps, n, b + 1));
        let mut r = start;
        while r < end {
            let count = (end - r).min(TILE_REPS);
            tiles.push(Tile {
                param_index,
                hist_slot: first_slot + b * span,
                rep_start: r,
                rep_count: count,
            });
            r += count;
        }
    }
    (tiles, n * span)
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

    #[test]
    fn few_long_replications_are_cut_into_sections() {
        // 4 replications of 200,000 M/M/1 customers at ρ 0.9: 16 sections.
        let min = min_section_customers(0.9, 1.0, 1.0).expect("bounded");
        assert!((10_000..=10_001).contains(&min), "{min}");
        assert_eq!(sections_per_rep(4, 200_000, min), 4);
        assert_eq!(sections_per_rep(1, 200_000, min), 16);
        assert_eq!(sections_per_rep(5, 200_000, min), 3);
        // Enough replications, or too short ones: one section each.
        assert_eq!(sections_per_rep(16, 200_000, min), 1);
        assert_eq!(sections_per_rep(4, 15_000, min), 1);
        // Slow relaxation: at ρ 0.99 a section needs 10^6 customers.
        let slow = min_section_customers(0.99, 1.0, 1.0).expect("bounded");
        assert_eq!(sections_per_rep(4, 200_000, slow), 1);
        assert_eq!(min_section_customers(1.0, 1.0, 1.0), None);
        assert_eq!(min_section_customers(0.5, 1.0, f64::INFINITY), None);
        // A spanning point's batches own consecutive slots.
        let (tiles, slots) = tiles_for_point_spanning(0, 4, 3, 4);
        assert_eq!(slots, 16);
        let firsts: Vec<u32> = tiles.iter().map(|t| t.hist_slot).collect();
        assert_eq!(firsts, [3, 7, 11, 15]);
    }
}
