//! `--warmup auto`: the warm-up of each point chosen by MSER-5 on the
//! run's own replications.
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
//! # Why the run's own replications
//! MSER on a series averaged over K replications removes the initial bias
//! down to about the noise of that series: the bias left is a fraction of
//! the pilot's own standard error, which scales as 1/√(K·L) for K
//! replications of L customers. The run's standard error scales as
//! 1/√(R·n) (R replications of n customers), so the bias it is left with,
//! in units of its own standard error, grows as √(R·n / (K·L)). A fixed
//! 32-replication pilot therefore under-truncates runs of many short
//! replications (M/M/1 at ρ 0.95, 4096 × 5000: warm-up 430, mean 2.7 CI
//! half-widths below the exact value, and warm-ups from 190 to 21 000 over
//! seeds). So the pilot now traces the run's own replications, K = R of
//! them (up to [`PILOT_BUDGET`] customers), for at least as many customers
//! as one replication of the run records: MSER then judges the transient
//! at the precision of the run's own mean (`tests/it/warmup.rs` measures the
//! bias left).
//!
//! # The pilot
//! Each point gets a pilot on the CPU reference engine, whatever backend
//! runs the point itself: replications 0..K of the run (the same streams:
//! a replication's first customers do not depend on its warm-up or length,
//! and the CPU engine draws what the GPU draws; a one-server replication's
//! first segment, at least 4096 customers, is the same whatever its length,
//! and past it the pilot's segments are cut for the pilot's own length, the
//! same process from other streams), started empty, every
//! customer's wait recorded (see `cpu::lindley_traced`), averaged over the
//! replications customer by customer; MSER-5 runs on that average.
//! - Length L: the run's customers per replication, clamped to
//!   [[`PILOT_MIN`], [`PILOT_START_MAX`]]. When the minimum lands in the last
//!   fifth of the searched half the pilot doubles (up to [`PILOT_MAX`]) and
//!   MSER runs again; if it still lands there the point is flagged
//!   ([`Pilot::at_limit`]) and `qsweep run` warns.
//! - Replications K: the run's R, unless K·L would exceed [`PILOT_BUDGET`]
//!   traced customers; then as many as fit (at least [`PILOT_MIN_REPS`]),
//!   and `qsweep run` says that the warm-up was judged on K of the R
//!   replications. Within the budget the pilot costs about what the run's
//!   recorded customers cost (on the CPU, whatever the backend).
//! - Deterministic: the replications are traced in fixed chunks and summed
//!   in order, so the choice depends on neither threads nor scheduling.
//! - Warm-up used: the truncation rounded up to two significant digits, at
//!   least [`WARMUP_FLOOR`] customers (and at most what keeps warm-up +
//!   customers within u32). The CSV's `warmup` column holds it and
//!   `warmup_truncation` MSER's truncation before rounding.
//!
//! Points simulated by the dispatch kernel (`jsq`, `pod`, `jiq`, `lwl`,
//! `central` with routers > 1) have no per-customer trace: their pilot runs
//! each replication to [`DISPATCH_SECTIONS`] checkpoints (a replication's
//! first m customers do not depend on how many follow) and takes the
//! section means from differences of the cumulative means, so MSER runs on
//! coarser batches (MSER-m, m = pilot / sections). That costs about
//! sections / 2 times the pilot, so it has at most
//! [`DISPATCH_PILOT_BUDGET`] simulated customers, of at most
//! [`DISPATCH_PILOT_START_MAX`] customers per replication (doubling up to
//! [`DISPATCH_PILOT_MAX`]), and it resolves transients only to a section
//! (customers / 40). A per-customer trace hook in `engine::cpu::dispatch` (as
//! `cpu::lindley_traced` has) would make it as sharp and as cheap as the
//! others.
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
/// Fewest pilot replications (when the run has at least as many).
pub const PILOT_MIN_REPS: u32 = 32;
/// Most traced customers (replications × customers) of one pilot pass.
pub const PILOT_BUDGET: u64 = 1 << 28;
/// Shortest pilot, in customers per replication.
pub const PILOT_MIN: u32 = 10_000;
/// Longest first pilot.
pub const PILOT_START_MAX: u32 = 1_000_000;
/// Longest pilot after doubling.
pub const PILOT_MAX: u32 = 4_000_000;
/// Replications traced by one task of the pilot's thread pool (a multiple
/// of the CPU engine's lanes).
const CHUNK_REPS: u32 = 8 * LANES as u32;
/// Smallest warm-up `auto` chooses.
pub const WARMUP_FLOOR: u32 = 100;
/// Checkpoints of a dispatch-kernel pilot.
pub const DISPATCH_SECTIONS: u32 = 40;
/// Fewest replications of a dispatch-kernel pilot (when the run has them).
pub const DISPATCH_PILOT_MIN_REPS: u32 = 16;
/// Most customers a dispatch-kernel pilot pass simulates (checkpoint
/// re-runs included): about what the 16-replication pilot cost before, as
/// the re-runs make each traced customer cost ~20.
pub const DISPATCH_PILOT_BUDGET: u64 = 1 << 24;
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

/// Replications of a pilot of `len` customers for a run of `run_reps`:
/// all of them within the budget, else as many as fit (a whole number of
/// lane groups), never fewer than the minimum (or the run's own count).
pub fn pilot_reps(p: &PointParams, len: u32, run_reps: u32) -> u32 {
    let run_reps = run_reps.max(1);
    let (fit, floor) = if p.kernel() == Kernel::Dispatch {
        // Checkpoint j re-runs j/sections of the replication: about
        // (sections + 1) / 2 replications' worth of customers in all.
        let per_rep = u64::from(len) * u64::from(DISPATCH_SECTIONS + 1) / 2;
        (
            DISPATCH_PILOT_BUDGET / per_rep.max(1),
            u64::from(DISPATCH_PILOT_MIN_REPS),
        )
    } else {
        let fit = PILOT_BUDGET / u64::from(len.max(1));
        (fit - fit % LANES as u64, u64::from(PILOT_MIN_REPS))
    };
    fit.max(floor).min(u64::from(run_reps)) as u32
}

/// The tasks of one pilot pass: (first replication, replications), in
/// replication order.
fn chunks(reps: u32, per: u32) -> Vec<(u32, u32)> {
    (0..reps.div_ceil(per))
        .map(|c| (c * per, per.min(reps - c * per)))
        .collect()
}

/// Batch sums of `MSER_BATCH` customers' waits over replications
/// `first..first + count` (their first `p.customers` customers), for the
/// Lindley and Kiefer–Wolfowitz kernels.
fn traced_batch_sums(p: &PointParams, table: &[f32], first: u32, count: u32) -> Vec<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { traced_batch_sums_avx2(p, table, first, count) };
    }
    traced_batch_sums_plain(p, table, first, count)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn traced_batch_sums_avx2(
    p: &PointParams,
    table: &[f32],
    first: u32,
    count: u32,
) -> Vec<f64> {
    traced_batch_sums_plain(p, table, first, count)
}

#[inline(always)]
fn traced_batch_sums_plain(p: &PointParams, table: &[f32], first: u32, count: u32) -> Vec<f64> {
    let n = p.customers as usize;
    let mut sums = vec![0.0f64; n / MSER_BATCH];
    let mut hist = vec![0u32; HIST_BINS as usize];
    let mut heap = Vec::new();
    let lanes = LANES as u32;
    for group in 0..count.div_ceil(lanes) {
        // The last group may be partial: its spare lanes run replications
        // past the pilot's, and are left out of the sums.
        let active = (count - group * lanes).min(lanes) as usize;
        let reps: [u32; LANES] =
            std::array::from_fn(|l| first.wrapping_add(group * lanes + l as u32));
        let mut on = |i: u32, w: &[f32; LANES]| {
            let b = i as usize / MSER_BATCH;
            if let Some(s) = sums.get_mut(b) {
                let mut lane_sum = 0.0f64;
                for &x in &w[..active] {
                    lane_sum += f64::from(x);
                }
                *s += lane_sum;
            }
        };
        if p.kernel() == Kernel::Lindley {
            lindley_traced::<LANES, _>(p, reps, active, table, &mut hist, &mut on);
        } else {
            kiefer_wolfowitz_traced::<LANES, _>(
                p, reps, active, table, &mut hist, &mut heap, &mut on,
            );
        }
        hist.fill(0);
    }
    sums
}

/// Section sums of a dispatch-kernel pilot over replications
/// `first..first + count`: each replication run to every checkpoint j·m
/// (j = 1..=sections), section j's mean from the difference of the
/// cumulative sums.
fn dispatch_section_sums(p: &PointParams, table: &[f32], first: u32, count: u32) -> Vec<f64> {
    let sections = DISPATCH_SECTIONS;
    let m = p.customers / sections;
    let mut hist = vec![0u32; HIST_BINS as usize];
    let mut sums = vec![0.0f64; sections as usize];
    let mut capacity = p.capacity;
    for r in first..first + count {
        let mut prev = 0.0f64;
        for j in 1..=sections {
            let mut q = PointParams {
                customers: j * m,
                capacity,
                ..*p
            };
            let mut res = dispatch::simulate(&q, r, table, &mut hist);
            // A queue that outgrew its room: again with more, as the run
            // loop does (see `rounds`), so the pilot sees the
            // unbounded queue's path.
            while res.status & rep_status::QUEUE_OVERFLOW != 0 {
                let Some(c) = contract::dispatch::grow(&q, q.dispatch_capacity()) else {
                    break;
                };
                q.capacity = c;
                res = dispatch::simulate(&q, r, table, &mut hist);
            }
            capacity = q.capacity;
            let cum = f64::from(res.mean_wait) * f64::from(j * m);
            sums[j as usize - 1] += (cum - prev) / f64::from(m);
            prev = cum;
        }
        hist.fill(0);
    }
    sums
}

/// One pass of one point's pilot: `len` customers of its first `reps`
/// replications, started empty.
#[derive(Clone, Copy)]
struct Pass {
    params: PointParams,
    reps: u32,
}

impl Pass {
    fn new(p: &PointParams, len: u32, reps: u32) -> Pass {
        Pass {
            params: PointParams {
                customers: len,
                warmup: 0,
                ..*p
            },
            reps,
        }
    }

    fn dispatch(&self) -> bool {
        self.params.kernel() == Kernel::Dispatch
    }

    /// Customers per MSER batch.
    fn batch(&self) -> u32 {
        if self.dispatch() {
            self.params.customers / DISPATCH_SECTIONS
        } else {
            MSER_BATCH as u32
        }
    }

    fn chunks(&self) -> Vec<(u32, u32)> {
        chunks(self.reps, if self.dispatch() { 1 } else { CHUNK_REPS })
    }

    fn sums(&self, table: &[f32], (first, count): (u32, u32)) -> Vec<f64> {
        if self.dispatch() {
            dispatch_section_sums(&self.params, table, first, count)
        } else {
            traced_batch_sums(&self.params, table, first, count)
        }
    }
}

/// The batch means of each pass, averaged over its replications: the
/// passes' chunks run on `threads` threads, and each pass's chunk sums are
/// added in chunk order (so the result does not depend on the threads).
/// Chunks run in waves, so that only a wave's sums are held at once.
fn run_passes(passes: &[Pass], table: &[f32], threads: usize) -> Vec<Vec<f64>> {
    let tasks: Vec<(usize, (u32, u32))> = passes
        .iter()
        .enumerate()
        .flat_map(|(i, pass)| pass.chunks().into_iter().map(move |c| (i, c)))
        .collect();
    let mut totals: Vec<Vec<f64>> = vec![Vec::new(); passes.len()];
    for wave in tasks.chunks(threads * 4) {
        let results: Vec<Mutex<Option<Vec<f64>>>> = wave.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads.min(wave.len()) {
                scope.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(i, chunk)) = wave.get(k) else {
                        break;
                    };
                    let sums = passes[i].sums(table, chunk);
                    *results[k].lock().unwrap() = Some(sums);
                });
            }
        });
        for (&(i, _), r) in wave.iter().zip(results) {
            let sums = r.into_inner().unwrap().expect("every chunk ran");
            let total = &mut totals[i];
            if total.is_empty() {
                *total = sums;
            } else {
                for (t, s) in total.iter_mut().zip(&sums) {
                    *t += s;
                }
            }
        }
    }
    for (total, pass) in totals.iter_mut().zip(passes) {
        let reps = f64::from(pass.reps.max(1));
        let per = if pass.dispatch() {
            reps
        } else {
            reps * MSER_BATCH as f64
        };
        for t in total.iter_mut() {
            *t /= per;
        }
    }
    totals
}

/// Pilots for `points` — (parameters, stable) pairs — of a run of
/// `run_reps` replications, on `threads` threads (0 = all cores), in order.
/// An unstable point gets no pilot (its transient never ends): the floor
/// warm-up, flagged `at_limit`.
pub fn pilots(
    points: &[(PointParams, bool)],
    table: &[f32],
    run_reps: u32,
    threads: usize,
) -> Vec<Pilot> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let mut done: Vec<Option<Pilot>> = points
        .iter()
        .map(|&(p, stable)| {
            (!stable).then_some(Pilot {
                customers: 0,
                reps: 0,
                batch: 0,
                truncation: 0,
                warmup: warmup_for(0, p.customers),
                at_limit: true,
            })
        })
        .collect();
    // Points still piloting, with the length of their next pass.
    let mut todo: Vec<(usize, u32)> = (0..points.len())
        .filter(|&i| done[i].is_none())
        .map(|i| (i, pilot_length(&points[i].0)))
        .collect();
    while !todo.is_empty() {
        let passes: Vec<Pass> = todo
            .iter()
            .map(|&(i, len)| {
                let p = &points[i].0;
                Pass::new(p, len, pilot_reps(p, len, run_reps))
            })
            .collect();
        let means = run_passes(&passes, table, threads);
        let mut again = Vec::new();
        for ((&(i, len), pass), z) in todo.iter().zip(&passes).zip(means) {
            let p = &points[i].0;
            let r = mser_batch_means(&z).unwrap_or(Mser {
                batches: 0,
                of: z.len(),
                statistic: 0.0,
                at_limit: false,
            });
            let (max, unit) = if pass.dispatch() {
                (DISPATCH_PILOT_MAX, DISPATCH_SECTIONS)
            } else {
                (PILOT_MAX, MSER_BATCH as u32)
            };
            let longer = len.saturating_mul(2).min(max);
            let longer = longer - longer % unit;
            if r.at_limit && longer > len {
                again.push((i, longer));
                continue;
            }
            let truncation = (r.batches as u64 * u64::from(pass.batch())) as u32;
            done[i] = Some(Pilot {
                customers: len,
                reps: pass.reps,
                batch: pass.batch(),
                truncation,
                warmup: warmup_for(u64::from(truncation), p.customers),
                at_limit: r.at_limit,
            });
        }
        todo = again;
    }
    done.into_iter()
        .map(|r| r.expect("every pilot ran"))
        .collect()
}

/// The pilot of one point of a run of `run_reps` replications (its
/// `customers` and `warmup` are the run's; the pilot sets its own).
pub fn pilot(p: &PointParams, table: &[f32], run_reps: u32) -> Pilot {
    pilots(&[(*p, true)], table, run_reps, 0)[0]
}

/// Runs the pilots of the points that asked for `auto` and have none yet
/// (a run of `run_reps` replications per point), on `threads` threads
/// (0 = all cores), and sets their warm-ups.
pub fn resolve(points: &mut [PreparedPoint], table: &[f32], run_reps: u32, threads: usize) {
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
    for (&i, r) in todo.iter().zip(pilots(&params, table, run_reps, threads)) {
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
