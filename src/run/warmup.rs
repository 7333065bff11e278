//! `--warmup auto`: the warm-up of each point chosen by MSER-5 on a pilot run.
//!
//! # MSER-5
//! The marginal standard error rule (White, "An effective truncation
//! heuristic for bias reduction in simulation output", Simulation 69(6),
//! 1997; White, Cobb and Spratt, "A comparison of five steady-state
//! truncation heuristics for simulation", WSC 2000): cut the output series
//! into batches of 5 and take the batch means Z_1..Z_k; for each truncation
//! d (in batches) the remaining k − d batch means have the statistic
//!
//! ```text
//!   MSER(d) = Σ_{j>d} (Z_j − Z̄_d)² / (k − d)²
//! ```
//!
//! (their variance over the count left: a squared standard error). The
//! truncation is the d that minimises it, searched over the first half of
//! the series only (late minima are noise: few batches are left). A minimum
//! at the end of that half, or a lower statistic in the second half, means
//! the pilot saw no end of the transient.
//!
//! # The pilot
//! Each point to run gets a pilot on the CPU reference engine, whatever
//! backend runs the point itself: [`PILOT_REPS`] replications started empty,
//! every customer's wait recorded (see `cpu::lindley_traced`), averaged over
//! the replications customer by customer; MSER-5 runs on that average.
//! - Length: the run's customers per replication, clamped to
//!   [[`PILOT_MIN`], [`PILOT_START_MAX`]]. When the minimum lands in the last
//!   fifth of the searched half the pilot doubles (up to [`PILOT_MAX`]) and
//!   MSER runs again; if it still lands there the point is flagged
//!   ([`Pilot::at_limit`]) and `qsweep run` warns.
//! - Cost: at most `8 × 4·10⁶` customers per point, a fraction of a second
//!   to about a second on one core; points are piloted in parallel.
//! - Streams: the pilot uses replications [`PILOT_REP_BASE`].., which a
//!   run never reaches, so its data are independent of the run's and the
//!   choice is deterministic for a given seed.
//! - Warm-up used: the truncation rounded up to two significant digits, at
//!   least [`WARMUP_FLOOR`] customers (and at most what keeps warm-up +
//!   customers within u32).
//!
//! Points simulated by the dispatch kernel (`jsq`, `pod`, `jiq`, `lwl`,
//! `central` with routers > 1) have no per-customer trace: their pilot runs
//! each replication to [`DISPATCH_SECTIONS`] checkpoints (a replication's
//! first m customers do not depend on how many follow) and takes the
//! section means from differences of the cumulative means, so MSER runs on
//! coarser batches (MSER-m, m = pilot / sections). That costs about
//! sections / 2 times the pilot, so it has [`DISPATCH_PILOT_REPS`]
//! replications of at most [`DISPATCH_PILOT_START_MAX`] customers (doubling
//! up to [`DISPATCH_PILOT_MAX`]), and it resolves transients only to a
//! section (customers / 40). A per-customer trace hook in
//! `engine::cpu::dispatch` (as `cpu::lindley_traced` has) would make it as
//! sharp and as cheap as the others.
//!
//! Unstable points (ρ ≥ 1, `--allow-unstable`) have no steady state to warm
//! up to: they get no pilot, the floor, and [`Pilot::at_limit`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub use super::point::Pilot;
use super::point::PreparedPoint;
use crate::contract::{self, rep_status, Kernel, PointParams, HIST_BINS};
use crate::engine::cpu::dispatch;
use crate::engine::cpu::{kiefer_wolfowitz_traced, lindley_traced, LANES};

/// Customers per MSER batch.
pub const MSER_BATCH: usize = 5;
/// Pilot replications per point (one lock-step group of the CPU engine).
pub const PILOT_REPS: u32 = 32;
/// First replication number of the pilot's streams.
pub const PILOT_REP_BASE: u32 = 0xFFFF_F000;
/// Shortest pilot, in customers per replication.
pub const PILOT_MIN: u32 = 10_000;
/// Longest first pilot.
pub const PILOT_START_MAX: u32 = 1_000_000;
/// Longest pilot after doubling.
pub const PILOT_MAX: u32 = 4_000_000;
/// Smallest warm-up `auto` chooses.
pub const WARMUP_FLOOR: u32 = 100;
/// Checkpoints of a dispatch-kernel pilot.
pub const DISPATCH_SECTIONS: u32 = 40;
/// Replications of a dispatch-kernel pilot.
pub const DISPATCH_PILOT_REPS: u32 = 16;
/// Longest first dispatch-kernel pilot.
pub const DISPATCH_PILOT_START_MAX: u32 = 40_000;
/// Longest dispatch-kernel pilot after doubling.
pub const DISPATCH_PILOT_MAX: u32 = 160_000;

/// What MSER found on a series of batch means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mser {
    /// Batches to drop (d).
    pub batches: usize,
    /// Batches in the series (k).
    pub of: usize,
    /// The minimum statistic, MSER(d).
    pub statistic: f64,
    /// d fell in the last fifth of the searched half, or the statistic is
    /// lower somewhere in the second half (White et al.: the run is then too
    /// short): the transient may last longer than the series shows.
    pub at_limit: bool,
}

/// MSER on batch means `z` (see the module docs); None for fewer than 4.
pub fn mser_batch_means(z: &[f64]) -> Option<Mser> {
    let k = z.len();
    if k < 4 {
        return None;
    }
    // Backward pass: Welford mean and sum of squares of z[d..].
    let half = k / 2;
    let mut mean = 0.0f64;
    let mut m2 = 0.0f64;
    let mut stats = vec![0.0f64; k];
    for (i, &x) in z.iter().enumerate().rev() {
        let n = (k - i) as f64;
        let delta = x - mean;
        mean += delta / n;
        m2 += delta * (x - mean);
        stats[i] = m2 / (n * n);
    }
    let mut best = 0;
    for (d, &s) in stats.iter().enumerate().take(half + 1) {
        if s < stats[best] {
            best = d;
        }
    }
    // A lower statistic later in the series (with a tenth of it, at least
    // 10 batches, left) means the transient outlasts the first half.
    let last = k - (k / 10).max(10).min(k - half);
    let later = stats[half + 1..=last.max(half)]
        .iter()
        .any(|&s| s < stats[best]);
    Some(Mser {
        batches: best,
        of: k,
        statistic: stats[best],
        at_limit: best * 5 > half * 4 || later,
    })
}

/// MSER-`m` on a raw series: batch means of `m` (a trailing partial batch
/// is left out). Returns the truncation in observations and the MSER result.
pub fn mser(series: &[f64], m: usize) -> Option<(usize, Mser)> {
    let m = m.max(1);
    let z: Vec<f64> = series
        .chunks_exact(m)
        .map(|c| c.iter().sum::<f64>() / m as f64)
        .collect();
    mser_batch_means(&z).map(|r| (r.batches * m, r))
}

/// MSER-5 ([`mser`] with batches of [`MSER_BATCH`]).
pub fn mser5(series: &[f64]) -> Option<(usize, Mser)> {
    mser(series, MSER_BATCH)
}

/// `x` rounded up to two significant digits.
pub fn round_up_2sig(x: u64) -> u64 {
    if x < 100 {
        return x;
    }
    let mut unit = 1u64;
    while x / unit >= 100 {
        unit *= 10;
    }
    x.div_ceil(unit) * unit
}

/// The warm-up to use for a truncation of `truncation` customers, when
/// each replication records `customers`.
pub fn warmup_for(truncation: u64, customers: u32) -> u32 {
    let w = round_up_2sig(truncation).max(u64::from(WARMUP_FLOOR));
    w.min(u64::from(u32::MAX - customers)) as u32
}

/// First pilot length for a run of `customers` per replication.
pub fn pilot_length(p: &PointParams) -> u32 {
    if p.kernel() == Kernel::Dispatch {
        let m = p
            .customers
            .clamp(DISPATCH_SECTIONS * 100, DISPATCH_PILOT_START_MAX);
        m - m % DISPATCH_SECTIONS
    } else {
        let m = p.customers.clamp(PILOT_MIN, PILOT_START_MAX);
        m - m % MSER_BATCH as u32
    }
}

/// Batch sums of the pilot replications' waits, customer by customer
/// averaged over the replications, for the Lindley and Kiefer–Wolfowitz
/// kernels: batch means of `MSER_BATCH` customers.
fn traced_batch_means(p: &PointParams, table: &[f32]) -> Vec<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { traced_batch_means_avx2(p, table) };
    }
    traced_batch_means_plain(p, table)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn traced_batch_means_avx2(p: &PointParams, table: &[f32]) -> Vec<f64> {
    traced_batch_means_plain(p, table)
}

#[inline(always)]
fn traced_batch_means_plain(p: &PointParams, table: &[f32]) -> Vec<f64> {
    let n = p.customers as usize;
    let mut sums = vec![0.0f64; n / MSER_BATCH];
    let mut hist = vec![0u32; HIST_BINS as usize];
    let mut heap = Vec::new();
    for group in 0..PILOT_REPS / LANES as u32 {
        let reps: [u32; LANES] =
            std::array::from_fn(|l| PILOT_REP_BASE + group * LANES as u32 + l as u32);
        let mut on = |i: u32, w: &[f32; LANES]| {
            let b = i as usize / MSER_BATCH;
            if let Some(s) = sums.get_mut(b) {
                let mut lane_sum = 0.0f64;
                for &x in w {
                    lane_sum += f64::from(x);
                }
                *s += lane_sum;
            }
        };
        if p.kernel() == Kernel::Lindley {
            lindley_traced::<LANES, _>(p, reps, LANES, table, &mut hist, &mut on);
        } else {
            kiefer_wolfowitz_traced::<LANES, _>(
                p, reps, LANES, table, &mut hist, &mut heap, &mut on,
            );
        }
        hist.fill(0);
    }
    let per = MSER_BATCH as f64 * f64::from(PILOT_REPS);
    sums.iter().map(|s| s / per).collect()
}

/// Section means of a dispatch-kernel pilot: each replication run to every
/// checkpoint j·m (j = 1..=sections), section j's mean from the difference
/// of the cumulative sums; averaged over the pilot replications.
fn dispatch_section_means(p: &PointParams, table: &[f32]) -> Vec<f64> {
    let sections = DISPATCH_SECTIONS;
    let m = p.customers / sections;
    let mut hist = vec![0u32; HIST_BINS as usize];
    let mut means = vec![0.0f64; sections as usize];
    let mut capacity = p.capacity;
    for r in 0..DISPATCH_PILOT_REPS {
        let mut prev = 0.0f64;
        for j in 1..=sections {
            let mut q = PointParams {
                customers: j * m,
                capacity,
                ..*p
            };
            let mut res = dispatch::simulate(&q, PILOT_REP_BASE + r, table, &mut hist);
            // A queue that outgrew its room: again with more, as the run
            // loop does (`rounds::run_growing`), so the pilot sees the
            // unbounded queue's path.
            while res.status & rep_status::QUEUE_OVERFLOW != 0 {
                let Some(c) = contract::dispatch::grow(&q, q.dispatch_capacity()) else {
                    break;
                };
                q.capacity = c;
                res = dispatch::simulate(&q, PILOT_REP_BASE + r, table, &mut hist);
            }
            capacity = q.capacity;
            let cum = f64::from(res.mean_wait) * f64::from(j * m);
            means[j as usize - 1] += (cum - prev) / f64::from(m);
            prev = cum;
        }
        hist.fill(0);
    }
    means
        .iter()
        .map(|s| s / f64::from(DISPATCH_PILOT_REPS))
        .collect()
}

/// The pilot of one point (its `customers` and `warmup` are the run's; the
/// pilot sets its own).
pub fn pilot(p: &PointParams, table: &[f32]) -> Pilot {
    let dispatch_kernel = p.kernel() == Kernel::Dispatch;
    let max = if dispatch_kernel {
        DISPATCH_PILOT_MAX
    } else {
        PILOT_MAX
    };
    let mut len = pilot_length(p);
    loop {
        let q = PointParams {
            customers: len,
            warmup: 0,
            ..*p
        };
        let (z, batch) = if dispatch_kernel {
            (dispatch_section_means(&q, table), len / DISPATCH_SECTIONS)
        } else {
            (traced_batch_means(&q, table), MSER_BATCH as u32)
        };
        let r = mser_batch_means(&z).unwrap_or(Mser {
            batches: 0,
            of: z.len(),
            statistic: 0.0,
            at_limit: false,
        });
        let longer = len.saturating_mul(2).min(max);
        if r.at_limit && longer > len {
            len = longer
                - longer
                    % (if dispatch_kernel {
                        DISPATCH_SECTIONS
                    } else {
                        5
                    });
            continue;
        }
        let truncation = (r.batches as u64 * u64::from(batch)) as u32;
        return Pilot {
            customers: len,
            reps: if dispatch_kernel {
                DISPATCH_PILOT_REPS
            } else {
                PILOT_REPS
            },
            batch,
            truncation,
            warmup: warmup_for(u64::from(truncation), p.customers),
            at_limit: r.at_limit,
        };
    }
}

/// Pilots for `points` — (parameters, stable) pairs — on `threads` threads
/// (0 = all cores), in order. An unstable point gets no pilot (its transient
/// never ends): the floor warm-up, flagged `at_limit`.
fn pilots(points: &[(PointParams, bool)], table: &[f32], threads: usize) -> Vec<Pilot> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let results = Mutex::new(vec![None; points.len()]);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(points.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, stable)) = points.get(i) else {
                    break;
                };
                let r = if stable {
                    pilot(&p, table)
                } else {
                    Pilot {
                        customers: 0,
                        reps: 0,
                        batch: 0,
                        truncation: 0,
                        warmup: warmup_for(0, p.customers),
                        at_limit: true,
                    }
                };
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every pilot ran"))
        .collect()
}

/// Runs the pilots of the points that asked for `auto` and have none yet,
/// on `threads` threads (0 = all cores), and sets their warm-ups.
pub fn resolve(points: &mut [PreparedPoint], table: &[f32], threads: usize) {
    let todo: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].warmup_auto && points[i].pilot.is_none())
        .collect();
    if todo.is_empty() {
        return;
    }
    let params: Vec<(PointParams, bool)> = todo
        .iter()
        .map(|&i| (points[i].params, points[i].grid.stable))
        .collect();
    for (&i, r) in todo.iter().zip(pilots(&params, table, threads)) {
        points[i].params.warmup = r.warmup;
        points[i].pilot = Some(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_floor() {
        assert_eq!(round_up_2sig(0), 0);
        assert_eq!(round_up_2sig(99), 99);
        assert_eq!(round_up_2sig(100), 100);
        assert_eq!(round_up_2sig(101), 110);
        assert_eq!(round_up_2sig(12_345), 13_000);
        assert_eq!(round_up_2sig(990_001), 1_000_000);
        assert_eq!(warmup_for(0, 100), WARMUP_FLOOR);
        assert_eq!(warmup_for(57, 100), 100);
        assert_eq!(warmup_for(12_345, 100), 13_000);
        assert_eq!(warmup_for(1 << 40, u32::MAX - 5), 5);
    }

    #[test]
    fn mser_of_a_constant_series_truncates_nothing() {
        let (t, r) = mser5(&[2.0; 1000]).unwrap();
        assert_eq!((t, r.batches, r.of), (0, 0, 200));
        assert!(!r.at_limit);
        assert!(mser5(&[1.0; 19]).is_none());
    }
}
