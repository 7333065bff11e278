//! The CPU engine: the reference every GPU kernel is tested against, and the
//! fallback where no adapter exists.
//!
//! Each file here is the twin of the WGSL file of the same name in
//! `shaders/` (as in vello's `shader/X.wgsl` and `src/cpu/X.rs`): both
//! consume the same random words in the same order and do the same f32
//! operations, so a change to one belongs in the other, and the GPU is
//! tested against this side (`tests/gpu_matches_cpu.rs`).
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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{Batch, BatchOutput, Engine};
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
) -> [RepResult; N] {
    struct Group<'a, const N: usize> {
        p: &'a PointParams,
        reps: [u32; N],
        active: usize,
        table: &'a [f32],
        hist: &'a mut [u32],
        heap: &'a mut Vec<f32>,
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
            } = self;
            let no_trace = &mut |_, _: &[f32; N]| {};
            match p.kernel() {
                Kernel::Lindley => {
                    lindley::lindley_loop::<N, A, T, S, _>(p, reps, active, table, hist, no_trace)
                }
                Kernel::KieferWolfowitz => {
                    kiefer_wolfowitz::kiefer_wolfowitz_loop::<N, A, T, S, _>(
                        p, reps, active, table, hist, heap, no_trace,
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
    };
    with_laws(p, group)
}

/// Simulate one tile's replications, `LANES` at a time.
#[inline(always)]
fn run_tile(
    p: &PointParams,
    tile: &Tile,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    out: &mut Vec<RepResult>,
) {
    let mut r = tile.rep_start;
    let end = tile.rep_start + tile.rep_count;
    if p.kernel() == Kernel::Dispatch {
        // The whole system per replication: one at a time (`dispatch`).
        out.extend((r..end).map(|rep| dispatch::simulate(p, rep, table, hist)));
        return;
    }
    while r < end {
        let active = ((end - r) as usize).min(LANES);
        // Pad a partial group with copies of its last replication.
        let reps: [u32; LANES] = std::array::from_fn(|l| r + (l.min(active - 1)) as u32);
        let res = simulate_lanes::<LANES>(p, reps, active, table, hist, heap);
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
) {
    run_tile(p, tile, table, hist, heap, out)
}

fn run_tile_best(
    p: &PointParams,
    tile: &Tile,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    out: &mut Vec<RepResult>,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { run_tile_avx2(p, tile, table, hist, heap, out) };
    }
    run_tile(p, tile, table, hist, heap, out)
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
        let per_slot = HIST_BINS as usize;
        // Where each tile's results start in the output.
        let mut starts = Vec::with_capacity(batch.tiles.len());
        let mut total = 0usize;
        for t in batch.tiles {
            starts.push(total);
            total += t.rep_count as usize;
        }
        let reps = Mutex::new(vec![RepResult::default(); total]);
        let hist = Mutex::new(vec![0u64; super::hist_len(batch.slots)]);
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..self.threads.min(batch.tiles.len()).max(1) {
                scope.spawn(|| {
                    let mut tile_hist = vec![0u32; per_slot];
                    let mut tile_reps = Vec::new();
                    let mut heap = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(tile) = batch.tiles.get(i) else {
                            break;
                        };
                        let p = &batch.params[tile.param_index as usize];
                        tile_hist.fill(0);
                        tile_reps.clear();
                        run_tile_best(
                            p,
                            tile,
                            batch.table,
                            &mut tile_hist,
                            &mut heap,
                            &mut tile_reps,
                        );
                        reps.lock().unwrap()[starts[i]..starts[i] + tile_reps.len()]
                            .copy_from_slice(&tile_reps);
                        let mut h = hist.lock().unwrap();
                        let base = tile.hist_slot as usize * per_slot;
                        for (dst, &src) in h[base..base + per_slot].iter_mut().zip(&tile_hist) {
                            *dst += u64::from(src);
                        }
                    }
                });
            }
        });
        Ok(BatchOutput {
            reps: reps.into_inner().unwrap(),
            hist: hist.into_inner().unwrap(),
        })
    }
}

/// Peak f32 arithmetic rate of this CPU on `threads` threads (operations/s,
/// a multiply-add counting two, as in `engine::opcount`), measured with
/// the engine's code generation for about `seconds`: the CPU's side of
/// `qsweep bench`'s fraction of peak.
pub fn peak_ops_per_second(threads: usize, seconds: f64) -> f64 {
    peak::ops_per_second::<LANES>(CpuEngine::new(threads).threads, seconds)
}
