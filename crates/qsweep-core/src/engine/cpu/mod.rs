//! The CPU engine: the reference every GPU kernel is tested against, and the
//! fallback where no adapter exists.
//!
//! Each file here is the twin of the WGSL file of the same name in
//! `shaders/` (as in vello's `shader/X.wgsl` and `src/cpu/X.rs`): both
//! consume the same random words in the same order and do the same f32
//! operations, so a change to one belongs in the other, and the GPU is
//! tested against this side (`tests/it/gpu_matches_cpu.rs`).
//!
//! | here                  | twin in `shaders/`       | what it simulates or does            |
//! |-----------------------|--------------------------|--------------------------------------|
//! | `lindley.rs`          | `lindley.wgsl`           | one FIFO server                      |
//! | `kiefer_wolfowitz.rs` | `kiefer_wolfowitz.wgsl`  | c FCFS servers behind one queue      |
//! | `dispatch.rs`         | `dispatch.wgsl`          | R servers behind routers (jsq, ...)  |
//! | `record.rs`           | `common.wgsl` (`rec_*`)  | means, maxima and the wait histogram |
//! | `peak.rs`             | `peak.wgsl`              | peak arithmetic rate, for `bench`    |
//!
//! The samplers' twins are `crate::sampling` (`sampling.wgsl`) and
//! `crate::rng` (`rng.wgsl`). This file does what the GPU's host side does:
//! it hands tiles to threads through an atomic counter, and runs the
//! Lindley and Kiefer–Wolfowitz kernels on [`LANES`] replications in lock
//! step (each lane does exactly what one GPU invocation does), the dispatch
//! kernel one replication at a time. Each replication depends only on its
//! own stream and histogram counts add, so results do not depend on the
//! thread count or on how replications are grouped into lanes.
//!
//! Modules depend one way: `record` ← the kernels ← this file.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Batch, BatchOutput, Cancelled, Engine, TileDone, Watch};
use crate::contract::{Kernel, PointParams, RepResult, Tile, HIST_BINS};
use crate::sampling::{with_laws, LawsVisitor};

pub mod dispatch;
mod kiefer_wolfowitz;
mod lindley;
mod peak;
mod record;

pub use kiefer_wolfowitz::kiefer_wolfowitz_traced;
pub use lindley::lindley_traced;

/// Replications run in lock step per thread: wide enough to fill AVX2
/// registers and to give the out-of-order core independent work.
pub const LANES: usize = 8;

/// Simulate `N` replications of `p` in lock step, with the loop compiled
/// for the point's laws where they are common ones (see [`with_laws`]):
/// `lindley::lindley_loop` or `kiefer_wolfowitz::kiefer_wolfowitz_loop` by
/// the point's kernel.
#[inline(always)]
pub fn simulate_lanes<const N: usize>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    watch: Watch<'_>,
) -> [RepResult; N] {
    struct Group<'a, const N: usize> {
        p: &'a PointParams,
        reps: [u32; N],
        active: usize,
        table: &'a [f32],
        hist: &'a mut [u32],
        heap: &'a mut Vec<f32>,
        watch: Watch<'a>,
    }
    impl<const N: usize> LawsVisitor for Group<'_, N> {
        type Output = [RepResult; N];
        #[inline(always)]
        fn visit<const A: u32, const T: u32, const S: u32>(self) -> [RepResult; N] {
            let Self {
                p,
                reps,
                active,
                table,
                hist,
                heap,
                watch,
            } = self;
            let no_trace = &mut |_, _: &[f32; N]| {};
            match p.kernel() {
                Kernel::Lindley => lindley::lindley_loop::<N, A, T, S, _>(
                    p, reps, active, table, hist, no_trace, watch,
                ),
                Kernel::KieferWolfowitz => {
                    kiefer_wolfowitz::kiefer_wolfowitz_loop::<N, A, T, S, _>(
                        p, reps, active, table, hist, heap, no_trace, watch,
                    )
                }
                Kernel::Dispatch => unreachable!("dispatch points run one replication at a time"),
            }
        }
    }
    let group = Group {
        p,
        reps,
        active,
        table,
        hist,
        heap,
        watch,
    };
    with_laws(p, group)
}

/// Simulate one tile's replications, `LANES` at a time (until `watch`
/// says stop: the tile's results are then meaningless).
#[inline(always)]
fn run_tile(
    p: &PointParams,
    tile: &Tile,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    out: &mut Vec<RepResult>,
    watch: Watch<'_>,
) {
    let mut r = tile.rep_start;
    let end = tile.rep_start + tile.rep_count;
    if p.kernel() == Kernel::Dispatch {
        // The whole system per replication: one at a time (`dispatch`).
        while r < end && !watch.stopped() {
            out.push(dispatch::simulate_watched(p, r, table, hist, watch));
            r += 1;
        }
        return;
    }
    while r < end && !watch.stopped() {
        let active = ((end - r) as usize).min(LANES);
        // Pad a partial group with copies of its last replication.
        let reps: [u32; LANES] = std::array::from_fn(|l| r + (l.min(active - 1)) as u32);
        let res = simulate_lanes::<LANES>(p, reps, active, table, hist, heap, watch);
        out.extend_from_slice(&res[..active]);
        r += active as u32;
    }
}

/// [`run_tile`] compiled for AVX2: wider vectors, the same IEEE operations
/// (Rust never contracts a·b + c into an FMA), so the same results.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_tile_avx2(
    p: &PointParams,
    tile: &Tile,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    out: &mut Vec<RepResult>,
    watch: Watch<'_>,
) {
    run_tile(p, tile, table, hist, heap, out, watch)
}

fn run_tile_best(
    p: &PointParams,
    tile: &Tile,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    out: &mut Vec<RepResult>,
    watch: Watch<'_>,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { run_tile_avx2(p, tile, table, hist, heap, out, watch) };
    }
    run_tile(p, tile, table, hist, heap, out, watch)
}

/// A tile a worker thread finished, sent to the calling thread.
struct Finished {
    tile: usize,
    reps: Vec<RepResult>,
    hist: Vec<u64>,
    /// Thread seconds it took.
    seconds: f64,
}

/// The CPU engine on `threads` worker threads.
pub struct CpuEngine {
    pub threads: usize,
}

impl CpuEngine {
    pub fn new(threads: usize) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        Self { threads }
    }
}

impl Engine for CpuEngine {
    fn label(&self) -> String {
        "cpu".to_string()
    }

    fn run(&mut self, batch: &Batch) -> anyhow::Result<BatchOutput> {
        // Where each tile's results start in the output.
        let mut starts = Vec::with_capacity(batch.tiles.len());
        let mut total = 0usize;
        for t in batch.tiles {
            starts.push(total);
            total += t.rep_count as usize;
        }
        let mut out = BatchOutput {
            reps: vec![RepResult::default(); total],
            hist: vec![0u64; super::hist_len(batch.slots)],
        };
        let per_slot = HIST_BINS as usize;
        self.run_watched(batch, Watch::none(), &mut |t| {
            out.reps[starts[t.tile]..starts[t.tile] + t.reps.len()].copy_from_slice(t.reps);
            let tile = &batch.tiles[t.tile];
            let base = tile.hist_slot as usize * per_slot;
            let span = batch.params[tile.param_index as usize].hist_span() as usize;
            for (dst, &src) in out.hist[base..base + span * per_slot]
                .iter_mut()
                .zip(t.hist)
            {
                *dst += src;
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Worker threads take tiles in order from an atomic counter and send
    /// each finished one to this thread, which hands it to `done` at once
    /// and looks at `watch.stop` every few milliseconds; the kernels look
    /// at an inner flag every [`Watch::EVERY`] customers, which this thread
    /// sets on a stop or when `done` fails.
    fn run_watched(
        &mut self,
        batch: &Batch,
        watch: Watch<'_>,
        done: &mut dyn FnMut(TileDone<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if watch.stopped() {
            return Err(Cancelled.into());
        }
        let per_slot = HIST_BINS as usize;
        let threads = self.threads.min(batch.tiles.len()).max(1);
        let halt = AtomicBool::new(false);
        let inner = Watch {
            stop: &halt,
            customers: watch.customers,
        };
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<Finished>();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let tx = tx.clone();
                let (next, halt) = (&next, &halt);
                scope.spawn(move || {
                    let mut tile_hist = vec![0u32; per_slot];
                    let mut heap = Vec::new();
                    while !halt.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(tile) = batch.tiles.get(i) else {
                            break;
                        };
                        let p = &batch.params[tile.param_index as usize];
                        tile_hist.clear();
                        tile_hist.resize(per_slot * p.hist_span() as usize, 0);
                        let mut reps = Vec::with_capacity(tile.rep_count as usize);
                        let started = Instant::now();
                        run_tile_best(
                            p,
                            tile,
                            batch.table,
                            &mut tile_hist,
                            &mut heap,
                            &mut reps,
                            inner,
                        );
                        if halt.load(Ordering::Relaxed) {
                            // Perhaps cut short: dropped.
                            break;
                        }
                        let finished = Finished {
                            tile: i,
                            reps,
                            hist: tile_hist.iter().map(|&c| u64::from(c)).collect(),
                            seconds: started.elapsed().as_secs_f64(),
                        };
                        if tx.send(finished).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut result = Ok(());
            loop {
                match rx.recv_timeout(Duration::from_millis(5)) {
                    Ok(f) if result.is_ok() => {
                        // Per-tile thread time over the threads sharing the
                        // call: the tile's part of the call's wall time.
                        let tile = TileDone {
                            tile: f.tile,
                            reps: &f.reps,
                            hist: &f.hist,
                            seconds: f.seconds / threads as f64,
                        };
                        if let Err(e) = done(tile) {
                            result = Err(e);
                            halt.store(true, Ordering::Relaxed);
                        }
                    }
                    Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if result.is_ok() && watch.stopped() {
                    result = Err(Cancelled.into());
                    halt.store(true, Ordering::Relaxed);
                }
            }
            result
        })
    }

    fn streams(&self) -> bool {
        true
    }
}

/// Peak f32 arithmetic rate of this CPU on `threads` threads (operations/s,
/// a multiply-add counting two, as in `qsweep_gpu::opcount`), measured with
/// the engine's code generation for about `seconds`: the CPU's side of
/// `qsweep bench`'s fraction of peak.
pub fn peak_ops_per_second(threads: usize, seconds: f64) -> f64 {
    peak::ops_per_second::<LANES>(CpuEngine::new(threads).threads, seconds)
}
