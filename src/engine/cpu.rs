//! The CPU engine: the reference every GPU kernel is tested against, and the
//! fallback where no adapter exists.
//!
//! `lindley` and `kiefer_wolfowitz` are line-for-line twins of
//! `shaders/lindley.wgsl` and `shaders/kiefer_wolfowitz.wgsl`. Tiles are
//! handed to threads through an atomic counter; each replication depends only
//! on its own stream and histogram counts add, so results do not depend on
//! the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{Batch, BatchOutput, Engine};
use crate::contract::{hist_bin, kernel, PointParams, RepResult, HISTS_PER_SLOT, HIST_BINS};
use crate::sampling::{ln_keep, Sampler};

/// Customers summed in plain f32 before the block sum joins the compensated
/// total (Kahan): bounds rounding error whatever the replication length.
pub const SUM_BLOCK: u32 = 256;

/// Per-replication accumulators and the tile's histograms.
struct Recorder<'h> {
    hist: &'h mut [u32],
    inv_scale: f32,
    wait: Kahan,
    sojourn: Kahan,
    service: Kahan,
    interarrival: Kahan,
    block: [f32; 4],
    in_block: u32,
    waited: u32,
    max_wait: f32,
    max_sojourn: f32,
}

/// Kahan–Babuška-free classic Kahan summation (Kahan 1965), in f32 as on the GPU.
#[derive(Clone, Copy, Default)]
struct Kahan {
    sum: f32,
    carry: f32,
}

impl Kahan {
    #[inline(always)]
    fn add(&mut self, x: f32) {
        let y = x - self.carry;
        let t = self.sum + y;
        self.carry = (t - self.sum) - y;
        self.sum = t;
    }
}

impl<'h> Recorder<'h> {
    fn new(hist: &'h mut [u32], inv_scale: f32) -> Self {
        Self {
            hist,
            inv_scale,
            wait: Kahan::default(),
            sojourn: Kahan::default(),
            service: Kahan::default(),
            interarrival: Kahan::default(),
            block: [0.0; 4],
            in_block: 0,
            waited: 0,
            max_wait: 0.0,
            max_sojourn: 0.0,
        }
    }

    #[inline(always)]
    fn record(&mut self, wait: f32, service: f32, interarrival: f32) {
        let sojourn = wait + service;
        self.block[0] += wait;
        self.block[1] += sojourn;
        self.block[2] += service;
        self.block[3] += interarrival;
        self.waited += u32::from(wait > 0.0);
        self.max_wait = self.max_wait.max(wait);
        self.max_sojourn = self.max_sojourn.max(sojourn);
        self.hist[hist_bin(wait * self.inv_scale) as usize] += 1;
        self.hist[(HIST_BINS + hist_bin(sojourn * self.inv_scale)) as usize] += 1;
        self.in_block += 1;
        if self.in_block == SUM_BLOCK {
            self.flush();
        }
    }

    #[inline(always)]
    fn flush(&mut self) {
        self.wait.add(self.block[0]);
        self.sojourn.add(self.block[1]);
        self.service.add(self.block[2]);
        self.interarrival.add(self.block[3]);
        self.block = [0.0; 4];
        self.in_block = 0;
    }

    fn finish(mut self, customers: u32, status: u32) -> RepResult {
        self.flush();
        let n = customers.max(1) as f32;
        RepResult {
            mean_wait: self.wait.sum / n,
            mean_sojourn: self.sojourn.sum / n,
            p_wait: self.waited as f32 / n,
            max_wait: self.max_wait,
            max_sojourn: self.max_sojourn,
            mean_service: self.service.sum / n,
            mean_interarrival: self.interarrival.sum / n,
            customers,
            status,
        }
    }
}

/// One FIFO server: Lindley's recursion W' = max(0, W + S − A)
/// (Lindley, "The theory of queues with a single server", 1952).
pub fn lindley(p: &PointParams, rep: u32, table: &[f32], hist: &mut [u32]) -> RepResult {
    let mut rng = Sampler::new(p, rep, table);
    let lk = ln_keep(p);
    let mut rec = Recorder::new(hist, p.inv_hist_scale);
    let mut wait = 0.0f32;
    let mut prev_service = 0.0f32;
    for _ in 0..p.warmup {
        let a = rng.next_interarrival(p, lk);
        wait = (wait + prev_service - a).max(0.0);
        prev_service = rng.draw(&p.service);
    }
    for _ in 0..p.customers {
        let a = rng.next_interarrival(p, lk);
        wait = (wait + prev_service - a).max(0.0);
        prev_service = rng.draw(&p.service);
        rec.record(wait, prev_service, a);
    }
    rec.finish(p.customers, rng.status)
}

/// Customers between rebases of the free-at times (see `kiefer_wolfowitz`).
pub fn rebase_period(servers: u32) -> u32 {
    servers.max(32)
}

/// `servers` FCFS servers behind one queue: the Kiefer–Wolfowitz recursion
/// ("On the theory of queues with many servers", Trans. AMS 78, 1955). The
/// sorted workload vector is kept as a binary min-heap of the times at which
/// each server becomes free, so a customer costs O(log c): it takes the
/// earliest-free server (the heap root), waits max(0, free − t), and the root
/// becomes start + service. Times are relative to an epoch that moves to the
/// current arrival every `rebase_period` customers, keeping f32 precision
/// (subtracting a constant and clamping at 0 preserves heap order).
pub fn kiefer_wolfowitz(
    p: &PointParams,
    rep: u32,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
) -> RepResult {
    let c = p.servers.max(1) as usize;
    heap.clear();
    heap.resize(c, 0.0);
    let mut rng = Sampler::new(p, rep, table);
    let lk = ln_keep(p);
    let mut rec = Recorder::new(hist, p.inv_hist_scale);
    let period = rebase_period(p.servers);
    let mut t = 0.0f32;
    let mut since_rebase = 0u32;
    for i in 0..p.warmup + p.customers {
        let a = rng.next_interarrival(p, lk);
        t += a;
        since_rebase += 1;
        if since_rebase == period {
            for h in heap.iter_mut() {
                *h = (*h - t).max(0.0);
            }
            t = 0.0;
            since_rebase = 0;
        }
        let free = heap[0];
        let wait = (free - t).max(0.0);
        let service = rng.draw(&p.service);
        sift_down_root(heap, t + wait + service);
        if i >= p.warmup {
            rec.record(wait, service, a);
        }
    }
    rec.finish(p.customers, rng.status)
}

/// Replace the heap's root by `x` and restore the min-heap property.
#[inline(always)]
fn sift_down_root(heap: &mut [f32], x: f32) {
    let c = heap.len();
    let mut i = 0;
    loop {
        let l = 2 * i + 1;
        if l >= c {
            break;
        }
        let r = l + 1;
        let m = if r < c && heap[r] < heap[l] { r } else { l };
        if heap[m] >= x {
            break;
        }
        heap[i] = heap[m];
        i = m;
    }
    heap[i] = x;
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
        let per_slot = (HISTS_PER_SLOT * HIST_BINS) as usize;
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
                        for rep in tile.rep_start..tile.rep_start + tile.rep_count {
                            let r = match p.kernel {
                                kernel::LINDLEY => lindley(p, rep, batch.table, &mut tile_hist),
                                _ => {
                                    kiefer_wolfowitz(p, rep, batch.table, &mut tile_hist, &mut heap)
                                }
                            };
                            tile_reps.push(r);
                        }
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
