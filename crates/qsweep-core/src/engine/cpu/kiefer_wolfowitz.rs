//! `c` FCFS servers behind one queue per replication: the CPU twin of
//! `shaders/kiefer_wolfowitz.wgsl`, run on `N` replications in lock step
//! (each lane does exactly what one GPU invocation does).

use super::record::Recorders;
use crate::contract::{rebase_period, PointParams, RepResult};
use crate::engine::Watch;
use crate::sampling::{ln_keep, Sampler, ANY};

/// `servers` FCFS servers behind one queue, per lane: the Kiefer–Wolfowitz
/// recursion ("On the theory of queues with many servers", Trans. AMS 78,
/// 1955). The sorted workload vector is kept as a binary min-heap of the
/// times at which each server becomes free, so a customer costs O(log c):
/// it takes the earliest-free server (the root), waits max(0, free − t), and
/// the root becomes start + service, sifted down with a fixed trip count
/// (see `replace_roots`): no unpredictable branches on a CPU, no
/// divergence on a GPU. Times are relative to an epoch that moves to the
/// current arrival every `rebase_period` customers, keeping f32 precision
/// (subtracting a constant and clamping at 0 preserves heap order). `heap`
/// holds the lanes' heaps one after another.
///
/// Under a capacity K ([`PointParams::system_limit`], also for a limited
/// one-server queue) each lane also keeps a ring of the start times of its
/// last K − c admitted requests: FCFS starts never decrease, so K − c or
/// more of them after the arrival's time t (all servers busy, K in the
/// system) is exactly the ring's oldest start being after t, and the
/// arrival is refused (K = c: whenever it would wait; Erlang's loss
/// system). A refused request takes no server and is counted in `lost`,
/// not recorded, as in `shaders/kiefer_wolfowitz.wgsl`.
///
/// Hands every customer's wait (warm-up included) to `on_customer`, as
/// [`lindley_traced`](super::lindley_traced) does; reads the laws at run
/// time ([`simulate_lanes`](super::simulate_lanes) is the compiled-per-law
/// path the engine runs).
pub fn kiefer_wolfowitz_traced<const N: usize, F: FnMut(u32, &[f32; N])>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    heap: &mut Vec<f32>,
    on_customer: &mut F,
) -> [RepResult; N] {
    kiefer_wolfowitz_loop::<N, ANY, ANY, ANY, F>(
        p,
        reps,
        active,
        table,
        hist,
        heap,
        on_customer,
        Watch::none(),
    )
}

/// The Kiefer–Wolfowitz loop for arrival kind `A`, thinning `T` and service
/// kind `S` (each [`ANY`] or fixed, as in [`Sampler::draw_as`]). Stops
/// early, its results then meaningless, once `watch` says so (checked every
/// [`Watch::EVERY`] customers).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn kiefer_wolfowitz_loop<
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
    watch: Watch<'_>,
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
    let mut rec = Recorders::<N>::new(p);
    let period = rebase_period(p.heap_slots());
    let drops = p.drops_late();
    let limited = p.limited();
    // Lane l's ring is ring[l * ring_len..][..ring_len], its oldest slot
    // ring_head[l].
    let ring_len = (p.heap_slots() as usize).saturating_sub(c);
    let mut ring = vec![0.0f32; if limited { ring_len * N } else { 0 }];
    let mut ring_head = [0usize; N];
    let mut t = [0.0f32; N];
    let mut since_rebase = 0u32;
    let mut wait = [0.0f32; N];
    for n in 0..p.warmup + p.customers {
        if n % Watch::EVERY == Watch::EVERY - 1
            && watch.tick(u64::from(Watch::EVERY) * active as u64)
        {
            break;
        }
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
            if limited {
                for (l, lane_ring) in ring.chunks_exact_mut(ring_len.max(1)).enumerate() {
                    for s in lane_ring {
                        *s = (*s - t[l]).max(0.0);
                    }
                }
            }
            t = [0.0; N];
            since_rebase = 0;
        }
        for l in 0..N {
            wait[l] = (heap[l * stride] - t[l]).max(0.0);
        }
        let service = rng.draw_as::<S>(&p.service);
        let mut late = rng.late(p, &wait);
        if limited {
            for l in 0..N {
                late[l] = wait[l] > 0.0;
                if ring_len > 0 {
                    let oldest = &mut ring[l * ring_len + ring_head[l]];
                    late[l] = *oldest > t[l];
                    if !late[l] {
                        *oldest = t[l] + wait[l];
                        ring_head[l] = (ring_head[l] + 1) % ring_len;
                    }
                }
            }
        }
        // A request that abandons (or is refused) takes no server: its root
        // is "replaced" by its own free-at time, which the sift leaves in
        // place (the root is the smallest), as the shader does without a
        // branch.
        let free_at: [f32; N] = std::array::from_fn(|l| {
            if drops && late[l] {
                heap[l * stride]
            } else {
                t[l] + wait[l] + service[l]
            }
        });
        replace_roots(heap, stride, depth, &free_at);
        on_customer(n, &wait);
        if n >= p.warmup {
            rec.record_request(hist, active, &wait, &service, &a, &late);
        }
    }
    rec.finish(p.customers, rng.status)
}

/// Levels a heap of `c` entries has below its root: floor(log2 c).
fn heap_depth(servers: u32) -> u32 {
    31 - servers.max(1).leading_zeros()
}

/// Replace the root of every lane's heap (lane l's at
/// `heap[l * stride..]`, padded with `f32::MAX` to the complete tree of
/// `depth` levels) by `x[l]`, sifting it down. Twin of the sift in
/// `shaders/kiefer_wolfowitz.wgsl`.
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
