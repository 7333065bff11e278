//! The CPU engine: the reference every GPU kernel is tested against, and the
//! fallback where no adapter exists.
//!
//! `lindley_loop` and `kiefer_wolfowitz_loop` are twins of `shaders/lindley.wgsl`
//! and `shaders/kiefer_wolfowitz.wgsl`, run on [`LANES`] replications in lock
//! step (each lane does exactly what one GPU invocation does). Tiles are
//! handed to threads through an atomic counter; each replication depends only
//! on its own stream and histogram counts add, so results do not depend on
//! the thread count or on how replications are grouped into lanes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{Batch, BatchOutput, Engine};
use crate::contract::{
    hist_bin, rebase_period, Kernel, PointParams, RepResult, Tile, HIST_BINS, SUM_BLOCK,
};
use crate::sampling::{ln_keep, with_laws, LawsVisitor, Sampler, ANY};

/// Replications run in lock step per thread: wide enough to fill AVX2
/// registers and to give the out-of-order core independent work.
pub const LANES: usize = 8;

/// Classic Kahan summation (Kahan 1965), in f32 as on the GPU.
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

#[inline(always)]
fn add<const N: usize>(acc: &mut [f32; N], x: &[f32; N]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a += x;
    }
}

#[inline(always)]
fn max<const N: usize>(acc: &mut [f32; N], x: &[f32; N]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a = a.max(*x);
    }
}

/// Per-replication accumulators of `N` lanes (the twin of `Recorder` in
/// `shaders/common.wgsl`): f32 block sums folded into Kahan sums.
pub(super) struct Recorders<const N: usize> {
    inv_scale: f32,
    /// wait, sojourn, service, interarrival
    total: [[Kahan; 4]; N],
    block: [[f32; N]; 4],
    in_block: u32,
    block_waited: [f32; N],
    waited: [u32; N],
    max_wait: [f32; N],
    max_sojourn: [f32; N],
}

impl<const N: usize> Recorders<N> {
    pub(super) fn new(inv_scale: f32) -> Self {
        Self {
            inv_scale,
            total: [[Kahan::default(); 4]; N],
            block: [[0.0; N]; 4],
            in_block: 0,
            block_waited: [0.0; N],
            waited: [0; N],
            max_wait: [0.0; N],
            max_sojourn: [0.0; N],
        }
    }

    /// Record one customer per lane; only the first `active` lanes count in
    /// the histograms (the rest pad a partial group).
    #[inline(always)]
    pub(super) fn record(
        &mut self,
        hist: &mut [u32],
        active: usize,
        wait: &[f32; N],
        service: &[f32; N],
        interarrival: &[f32; N],
    ) {
        let mut sojourn = [0.0f32; N];
        for l in 0..N {
            sojourn[l] = wait[l] + service[l];
        }
        add(&mut self.block[0], wait);
        add(&mut self.block[1], &sojourn);
        add(&mut self.block[2], service);
        add(&mut self.block[3], interarrival);
        // Counted in f32 within a block (exact below 2^24), flushed to u32.
        for (n, w) in self.block_waited.iter_mut().zip(wait) {
            *n += if *w > 0.0 { 1.0 } else { 0.0 };
        }
        max(&mut self.max_wait, wait);
        max(&mut self.max_sojourn, &sojourn);
        let mut wait_bins = [0u32; N];
        for l in 0..N {
            wait_bins[l] = hist_bin(wait[l] * self.inv_scale);
        }
        for l in 0..active {
            hist[wait_bins[l] as usize] += 1;
        }
        self.in_block += 1;
        if self.in_block == SUM_BLOCK {
            self.flush();
        }
    }

    #[inline(always)]
    fn flush(&mut self) {
        for l in 0..N {
            for k in 0..4 {
                self.total[l][k].add(self.block[k][l]);
            }
            self.waited[l] += self.block_waited[l] as u32;
        }
        self.block = [[0.0; N]; 4];
        self.block_waited = [0.0; N];
        self.in_block = 0;
    }

    pub(super) fn finish(mut self, customers: u32, status: [u32; N]) -> [RepResult; N] {
        self.flush();
        let n = customers.max(1) as f32;
        std::array::from_fn(|l| RepResult {
            mean_wait: self.total[l][0].sum / n,
            mean_sojourn: self.total[l][1].sum / n,
            p_wait: self.waited[l] as f32 / n,
            max_wait: self.max_wait[l],
            max_sojourn: self.max_sojourn[l],
            mean_service: self.total[l][2].sum / n,
            mean_interarrival: self.total[l][3].sum / n,
            customers,
            status: status[l],
        })
    }
}

/// One FIFO server per lane: Lindley's recursion W' = max(0, W + S − A)
/// (Lindley, "The theory of queues with a single server", 1952), handing
/// every customer's wait (warm-up included) to `on_customer(index, waits of
/// the N lanes)`: the per-customer trace of a warm-up pilot (`warmup`).
/// Reads the laws at run time; [`simulate_lanes`] is the compiled-per-law
/// path the engine runs.
pub fn lindley_traced<const N: usize, F: FnMut(u32, &[f32; N])>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    on_customer: &mut F,
) -> [RepResult; N] {
    lindley_loop::<N, ANY, ANY, ANY, F>(p, reps, active, table, hist, on_customer)
}

/// The Lindley loop for arrival kind `A`, thinning `T` and service kind `S`
/// (each [`ANY`] or fixed, as in [`Sampler::draw_as`]).
#[inline(always)]
fn lindley_loop<
    const N: usize,
    const A: u32,
    const T: u32,
    const S: u32,
    F: FnMut(u32, &[f32; N]),
>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    on_customer: &mut F,
) -> [RepResult; N] {
    let mut rng = Sampler::<N>::new(p, reps, table);
    let lk = ln_keep(p);
    let mut rec = Recorders::<N>::new(p.inv_hist_scale);
    let mut wait = [0.0f32; N];
    let mut prev_service = [0.0f32; N];
    for i in 0..p.warmup + p.customers {
        let a = rng.next_interarrival_as::<A, T>(p, lk);
        for l in 0..N {
            wait[l] = (wait[l] + prev_service[l] - a[l]).max(0.0);
        }
        prev_service = rng.draw_as::<S>(&p.service);
        on_customer(i, &wait);
        if i >= p.warmup {
            rec.record(hist, active, &wait, &prev_service, &a);
        }
    }
    rec.finish(p.customers, rng.status)
}

/// `servers` FCFS servers behind one queue, per lane: the Kiefer–Wolfowitz
/// recursion ("On the theory of queues with many servers", Trans. AMS 78,
/// 1955). The sorted workload vector is kept as a binary min-heap of the
/// times at which each server becomes free, so a customer costs O(log c):
/// it takes the earliest-free server (the root), waits max(0, free − t), and
/// the root becomes start + service, sifted down with a fixed trip count
/// (see [`replace_roots`]): no unpredictable branches on a CPU, no
/// divergence on a GPU. Times are relative to an epoch that moves to the
/// current arrival every `rebase_period` customers, keeping f32 precision
/// (subtracting a constant and clamping at 0 preserves heap order). `heap`
/// holds the lanes' heaps one after another.
///
/// Hands every customer's wait (warm-up included) to `on_customer`, as
/// [`lindley_traced`] does; reads the laws at run time ([`simulate_lanes`]
/// is the compiled-per-law path the engine runs).
pub fn kiefer_wolfowitz_traced<const N: usize, F: FnMut(u32, &[f32; N])>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    on_customer: &mut F,
) -> [RepResult; N] {
    kiefer_wolfowitz_loop::<N, ANY, ANY, ANY, F>(p, reps, active, table, hist, heap, on_customer)
}

/// The Kiefer–Wolfowitz loop for arrival kind `A`, thinning `T` and service
/// kind `S` (each [`ANY`] or fixed, as in [`Sampler::draw_as`]).
#[inline(always)]
fn kiefer_wolfowitz_loop<
    const N: usize,
    const A: u32,
    const T: u32,
    const S: u32,
    F: FnMut(u32, &[f32; N]),
>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    on_customer: &mut F,
) -> [RepResult; N] {
    let c = p.servers.max(1) as usize;
    let depth = heap_depth(p.servers);
    // Lane l's heap is heap[l * stride..][..stride]: c free-at times, then
    // f32::MAX padding up to the complete tree the sift walks.
    let stride = (2usize << depth) - 1;
    heap.clear();
    heap.resize(stride * N, f32::MAX);
    for lane_heap in heap.chunks_exact_mut(stride) {
        lane_heap[..c].fill(0.0);
    }
    let mut rng = Sampler::<N>::new(p, reps, table);
    let lk = ln_keep(p);
    let mut rec = Recorders::<N>::new(p.inv_hist_scale);
    let period = rebase_period(p.servers);
    let mut t = [0.0f32; N];
    let mut since_rebase = 0u32;
    let mut wait = [0.0f32; N];
    for n in 0..p.warmup + p.customers {
        let a = rng.next_interarrival_as::<A, T>(p, lk);
        for l in 0..N {
            t[l] += a[l];
        }
        since_rebase += 1;
        if since_rebase == period {
            for (l, lane_heap) in heap.chunks_exact_mut(stride).enumerate() {
                for h in &mut lane_heap[..c] {
                    *h = (*h - t[l]).max(0.0);
                }
            }
            t = [0.0; N];
            since_rebase = 0;
        }
        for l in 0..N {
            wait[l] = (heap[l * stride] - t[l]).max(0.0);
        }
        let service = rng.draw_as::<S>(&p.service);
        let free_at: [f32; N] = std::array::from_fn(|l| t[l] + wait[l] + service[l]);
        replace_roots(heap, stride, depth, &free_at);
        on_customer(n, &wait);
        if n >= p.warmup {
            rec.record(hist, active, &wait, &service, &a);
        }
    }
    rec.finish(p.customers, rng.status)
}

/// Simulate `N` replications of `p` in lock step, with the loop compiled
/// for the point's laws where they are common ones (see [`with_laws`]):
/// [`lindley_loop`] or [`kiefer_wolfowitz_loop`] by the point's kernel.
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
                    lindley_loop::<N, A, T, S, _>(p, reps, active, table, hist, no_trace)
                }
                Kernel::KieferWolfowitz => kiefer_wolfowitz_loop::<N, A, T, S, _>(
                    p, reps, active, table, hist, heap, no_trace,
                ),
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

/// Levels a heap of `c` entries has below its root: floor(log2 c).
pub fn heap_depth(servers: u32) -> u32 {
    31 - servers.max(1).leading_zeros()
}

/// Replace the root of every lane's heap (lane l's at
/// `heap[l * stride..]`, padded with `f32::MAX` to the complete tree of
/// `depth` levels) by `x[l]`, sifting it down. Twin of the sift in
/// kiefer_wolfowitz.wgsl.
///
/// The sift always walks all `depth` levels: once `x` has found its place
/// the hole stops moving (its smaller child is then never below `x`), and
/// the value parked in the hole meanwhile is overwritten by `x` at the end.
/// A fixed trip count and selects instead of branches mean no mispredicted
/// exits, so the lanes' independent sifts, interleaved level by level,
/// overlap in the out-of-order core (and a GPU's invocations never
/// diverge). The waits depend only on the multiset of free-at times, which
/// any correct heap update keeps the same: the layout is free to choose.
#[inline(always)]
fn replace_roots<const N: usize>(heap: &mut [f32], stride: usize, depth: u32, x: &[f32; N]) {
    assert!(heap.len() >= N * stride && stride >= (2usize << depth) - 1);
    let mut hole = [0usize; N];
    for _ in 0..depth {
        for l in 0..N {
            let left = 2 * hole[l] + 1;
            // SAFETY: after k levels hole < 2^k − 1, so with k < depth both
            // children are below 2^(depth+1) − 1 ≤ stride (asserted above).
            unsafe {
                let h = heap.as_mut_ptr().add(l * stride);
                let (a, b) = (*h.add(left), *h.add(left + 1));
                // Arithmetic, not a branch: which child is smaller is a coin
                // toss, and a mispredicted branch per level costs more than
                // the whole level.
                let m = left + usize::from(b < a);
                let hm = if b < a { b } else { a };
                *h.add(hole[l]) = hm;
                hole[l] = if hm < x[l] { m } else { hole[l] };
            }
        }
    }
    for l in 0..N {
        heap[l * stride + hole[l]] = x[l];
    }
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
        // The whole system per replication: one at a time (engine::dispatch).
        out.extend((r..end).map(|rep| super::dispatch::simulate(p, rep, table, hist)));
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

/// Independent multiply-add chains of [`LANES`] lanes in the peak loop:
/// enough to cover the latency of the floating-point pipes.
const PEAK_CHAINS: usize = 12;

/// `rounds` of `x = x·k + m` on [`PEAK_CHAINS`] × [`LANES`] independent
/// f32 values; returns their sum so nothing is dead code.
#[inline(always)]
fn multiply_add_chains(rounds: u64) -> f32 {
    let k = std::hint::black_box(0.9999f32);
    let m = std::hint::black_box(0.0001f32);
    let mut acc: [[f32; LANES]; PEAK_CHAINS] =
        std::array::from_fn(|c| std::array::from_fn(|l| (c * LANES + l) as f32 * 1e-3));
    for _ in 0..rounds {
        for chain in acc.iter_mut() {
            for x in chain.iter_mut() {
                *x = *x * k + m;
            }
        }
    }
    acc.iter().flatten().sum()
}

/// [`multiply_add_chains`] compiled as the engine is (AVX2 where present).
fn multiply_add_chains_best(rounds: u64) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2(rounds: u64) -> f32 {
            multiply_add_chains(rounds)
        }
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { avx2(rounds) };
    }
    multiply_add_chains(rounds)
}

/// Peak f32 arithmetic rate of this CPU on `threads` threads (operations/s,
/// a multiply-add counting two, as in `engine::opcount`), measured with
/// the engine's code generation for about `seconds`: the CPU's side of
/// `qsweep bench`'s fraction of peak.
pub fn peak_ops_per_second(threads: usize, seconds: f64) -> f64 {
    let threads = CpuEngine::new(threads).threads;
    let ops_per_round = (PEAK_CHAINS * LANES * 2) as f64;
    let mut rounds = 1u64 << 16;
    loop {
        let started = std::time::Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| std::hint::black_box(multiply_add_chains_best(rounds)));
            }
        });
        let secs = started.elapsed().as_secs_f64();
        if secs >= seconds || rounds >= 1 << 40 {
            return threads as f64 * rounds as f64 * ops_per_round / secs;
        }
        let grow = (1.2 * seconds / secs.max(1e-6)).clamp(2.0, 64.0);
        rounds = (rounds as f64 * grow) as u64;
    }
}
