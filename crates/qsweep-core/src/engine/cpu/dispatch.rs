//! The dispatch kernel: all R servers of a replication behind routers that
//! decide on what they know (`jsq`, `pod`, `jiq`, `lwl`, and `central` with
//! several routers; see `routing`). The CPU twin of `shaders/dispatch.wgsl`:
//! the two consume the same random words in the same order and do the same
//! f32 operations, so they take the same decisions wherever the samplers'
//! transcendental functions agree to the bit (and agree in distribution
//! everywhere).
//!
//! # The model
//! R single-worker FIFO servers. Each arrival's interarrival time and then
//! its service time are drawn (as every kernel does), then, with K > 1
//! routers, one word picks its router uniformly, then the policy draws its
//! words: `jsq` and `jiq` one (the tie-break, or the random server), `pod`
//! d + 1 (the sample, then the tie-break), `central` one when its router has
//! a server to choose from and none when the request waits at the router,
//! `lwl` none. A router sees only the requests it dispatched itself and learns of
//! each departure when it happens; with K = 1 that is the whole system. A
//! request dispatched at time `t` to server `s` waits `max(free[s] − t, 0)`,
//! where `free[s]` is the time the server's FIFO queue empties, and leaves
//! at `t + wait + service`.
//!
//! # Patience and capacity
//! With patience, each request's patience is drawn after the policy's words
//! (a request that waits at a `central` router draws it there and carries
//! it). FIFO servers know a request's wait when it is dispatched, so it is
//! late when that wait exceeds its patience: under `abandon` it never joins
//! (no server, no count: the routers count only the requests that joined),
//! under `timeout` it is served and counted. A request waiting at a router
//! is judged when the router dispatches it: its wait so far plus its wait at
//! the server; one that has run out of patience by then left unseen, and
//! the router takes the next. With a capacity K (`PointParams::
//! system_limit`; `jsq`, `pod`, `jiq`) a request whose chosen server holds
//! K (all routers' requests) is refused: dropped as an abandoning one. The
//! policies still choose as they do without a limit (a router does not
//! learn that a server is full), which is the model of a router that sends
//! to a dyno whose own backlog limit refuses it.
//!
//! # Data structures (per replication)
//! - `free[R]`: when each server's queue empties (f32).
//! - A binary min-heap of the departure times of the requests in the system,
//!   tagged `router · R + server`: before an arrival at `t`, every departure
//!   at or before `t` is popped and its router's count decremented. A
//!   replication holds at most [`PointParams::dispatch_capacity`] requests;
//!   beyond that it stops with [`rep_status::QUEUE_OVERFLOW`], and the run
//!   loop re-runs it with more room (the capacity changes nothing else; see
//!   [`dispatch`]). It reports the most requests it held at once
//!   (`RepResult::max_in_system`).
//! - Per router: `cnt[s]` (its requests at server s), and for `jsq`, `jiq`
//!   and `central` the servers in a permutation `perm` sorted by count with
//!   `pos` (its inverse) and block starts `start[c]` (first index of a server
//!   with count ≥ c). The minimum-count block is `perm[0 .. start[c0 + 1]]`,
//!   the idle block `perm[0 .. start[1]]`, and a count changes by ±1 with one
//!   swap and one boundary move: O(1) per event, whatever R (an array form of
//!   the frequency buckets of the O(1) LFU cache: Shah, Mitra and Matani,
//!   "An O(1) algorithm for implementing the LFU cache eviction scheme", 2010).
//! - `central` with K > 1: per router a FIFO ring of (arrival time, service,
//!   interarrival) of the requests waiting at the router.
//!
//! # Mixed fleets
//! With [`PointParams::fleet_classes`] > 0 the servers have speeds (classes
//! numbered fastest first): the service drawn is a size, and the chosen
//! server's class scales it (`service_at`, a product by `1 / speed`). The
//! fleet's own policies need only `free[R]`, as `lwl` does (`free_times`):
//! `random` (one word, a uniform server), `weighted` (two words: a class by
//! `fleet_pick`, a server of it) and `first_free`, the central queue (the
//! scan keyed by `max(free, t)`: the fastest idle server, else the first
//! to free up), which `lwl` on a fleet also is. Each class's recorded,
//! served waits go to a Kahan sum of their own (`ClassSums`).
//!
//! `lwl` needs only `free[R]`: each request joins the server that frees up
//! first, found by a linear scan (ties: the lowest index), and waits
//! `max(min free − t, 0)` — exactly the Kiefer–Wolfowitz recursion of the
//! central queue, by a different route, with the same words (interarrival,
//! service) and the same f32 operations, so `lwl` reproduces `central`
//! replication by replication.
//!
//! Times are f32 relative to an epoch that moves to the current arrival
//! every [`rebase_period`] arrivals (as in the Kiefer–Wolfowitz kernel),
//! or less often while the system holds more than its first capacity
//! ([`dispatch::rebase_due`]), once the departures up to it have been
//! handled: `free` is shifted and
//! clamped at 0 (a server free before now is idle, whenever it became so),
//! heap and router-queue times are shifted (subtraction is monotone, so the
//! heap stays a heap). The clamp is why the departures come first: one still
//! pending at a rebase would see its server's clamped free-at time lie after
//! it.
//!
//! Uniform integers below m come from one word as `(word · m) >> 32`
//! (Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1),
//! 2019, without the rejection step: bias below m / 2^32). `pod` samples its
//! d distinct servers with Floyd's algorithm (Bentley and Floyd, "Programming
//! pearls: a sample of brilliance", CACM 30(9), 1987): exactly d words.

use std::cell::RefCell;

use super::record::Recorders;
use crate::contract::{
    dispatch, rebase_period, rep_status, DispatchPolicy, PointParams, Reneging, RepResult,
};
use crate::engine::Watch;
use crate::sampling::Sampler;

/// Uniform integer in `[0, m)` from one random word.
#[inline(always)]
pub fn below(word: u32, m: u32) -> u32 {
    ((u64::from(word) * u64::from(m)) >> 32) as u32
}

/// Per-thread buffers, reused from replication to replication.
#[derive(Default)]
struct Scratch {
    free: Vec<f32>,
    /// The departure heap: (time, router · R + server).
    heap: Vec<(f32, u32)>,
    /// K × R each.
    cnt: Vec<u32>,
    perm: Vec<u32>,
    pos: Vec<u32>,
    /// K × (H + 2).
    start: Vec<u32>,
    /// Router queues: K × H each, then head and length per router.
    q_arr: Vec<f32>,
    q_svc: Vec<f32>,
    q_gap: Vec<f32>,
    /// The waiting requests' patience (with patience only).
    q_pat: Vec<f32>,
    q_head: Vec<u32>,
    q_len: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Simulate replication `rep` of a [`Kernel::Dispatch`](crate::contract::Kernel::Dispatch) point.
pub fn simulate(p: &PointParams, rep: u32, table: &[f32], hist: &mut [u32]) -> RepResult {
    simulate_watched(p, rep, table, hist, Watch::none())
}

/// [`simulate`] that stops early, its result then meaningless, once `watch`
/// says so (checked about every [`Watch::EVERY`] loop iterations).
pub fn simulate_watched(
    p: &PointParams,
    rep: u32,
    table: &[f32],
    hist: &mut [u32],
    watch: Watch<'_>,
) -> RepResult {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if p.policy().free_times_only() {
            free_times(p, rep, table, hist, &mut s.free, watch)
        } else {
            System::new(p, &mut s).run(p, rep, table, hist, watch)
        }
    })
}

/// Customers between two looks at the watch when each costs `per_customer`
/// loop iterations: about [`Watch::EVERY`] iterations (a power of two).
fn watch_every(per_customer: u32) -> u32 {
    (Watch::EVERY / per_customer.max(1))
        .max(1)
        .next_power_of_two()
}

/// A mixed fleet's per-class sums of the recorded served requests' waits:
/// an f32 Kahan sum and a count per class (the twin of the class words at
/// `o_class` in `shaders/dispatch.wgsl`, in the same order of operations).
#[derive(Default)]
struct ClassSums {
    sum: [f32; 4],
    carry: [f32; 4],
    served: [u32; 4],
}

impl ClassSums {
    #[inline(always)]
    fn add(&mut self, class: usize, wait: f32) {
        let y = wait - self.carry[class];
        let t = self.sum[class] + y;
        self.carry[class] = (t - self.sum[class]) - y;
        self.sum[class] = t;
        self.served[class] += 1;
    }

    /// Each class's mean wait into `res` (0 for a class that served none).
    fn finish(&self, res: &mut RepResult) {
        for c in 0..4 {
            let n = self.served[c];
            res.class_wait[c] = if n > 0 { self.sum[c] / n as f32 } else { 0.0 };
            res.class_served[c] = n;
        }
    }
}

/// The service time at server `srv` of a request of size `size`: scaled by
/// the server's class under a fleet, else the size itself.
#[inline(always)]
fn service_at(p: &PointParams, srv: u32, size: f32) -> f32 {
    if p.has_fleet() {
        size * p.fleet_time[p.fleet_class(srv)]
    } else {
        size
    }
}

/// `weighted`: a server drawn with probability proportional to its speed,
/// from two words (the class, then a server of it).
#[inline(always)]
fn weighted_server(p: &PointParams, class_word: u32, server_word: u32) -> u32 {
    let mut c = 0;
    while c + 1 < p.fleet_classes as usize && class_word >= p.fleet_pick[c] {
        c += 1;
    }
    let first = if c == 0 { 0 } else { p.fleet_end[c - 1] };
    first + below(server_word, p.fleet_end[c] - first)
}

/// The policies that need only each server's free-at time: `lwl` (least
/// work left: the Kiefer–Wolfowitz recursion by linear scan), and for
/// fleets `first_free` (the central queue: the scan keyed by
/// `max(free, t)`, so the lowest-numbered, fastest, idle server wins; `lwl`
/// on a fleet scans the same way), `random` and `weighted`.
fn free_times(
    p: &PointParams,
    rep: u32,
    table: &[f32],
    hist: &mut [u32],
    free: &mut Vec<f32>,
    watch: Watch<'_>,
) -> RepResult {
    let r = p.servers.max(1) as usize;
    let policy = p.policy();
    // The scan costs R per customer.
    let every = watch_every(p.servers);
    free.clear();
    free.resize(r, 0.0);
    let mut rng = Sampler::<1>::new(p, [rep], table);
    let mut rec = Recorders::<1>::new(p);
    let mut classes = ClassSums::default();
    let period = rebase_period(p.servers);
    let drops = p.drops_late();
    let mut t = 0.0f32;
    let mut since_rebase = 0u32;
    for n in 0..p.warmup + p.customers {
        if n % every == every - 1 && watch.tick(u64::from(every)) {
            break;
        }
        let a = rng.draw(&p.arrival)[0];
        t += a;
        since_rebase += 1;
        if since_rebase == period {
            for f in free.iter_mut() {
                *f = (*f - t).max(0.0);
            }
            t = 0.0;
            since_rebase = 0;
        }
        let size = rng.draw(&p.service)[0];
        let best = match policy {
            DispatchPolicy::Lwl if !p.has_fleet() => {
                let mut best = 0;
                for (i, &f) in free.iter().enumerate().skip(1) {
                    if f < free[best] {
                        best = i;
                    }
                }
                best
            }
            // On a fleet, least work left is the first free server too: an
            // idle server has none left, whenever it emptied, so ties go
            // to the fastest (rebases clamp the idle servers' free-at times
            // to the epoch, so "the longest idle" would not be well defined).
            DispatchPolicy::FirstFree | DispatchPolicy::Lwl => {
                let mut best = 0;
                let mut key = free[0].max(t);
                for (i, &f) in free.iter().enumerate().skip(1) {
                    if f.max(t) < key {
                        best = i;
                        key = f.max(t);
                    }
                }
                best
            }
            DispatchPolicy::Random => below(rng.streams.next_u32()[0], r as u32) as usize,
            DispatchPolicy::Weighted => {
                let class_word = rng.streams.next_u32()[0];
                let server_word = rng.streams.next_u32()[0];
                weighted_server(p, class_word, server_word) as usize
            }
            DispatchPolicy::Jsq
            | DispatchPolicy::Pod
            | DispatchPolicy::Jiq
            | DispatchPolicy::Central => unreachable!("{policy:?} keeps a departure heap"),
        };
        let wait = (free[best] - t).max(0.0);
        let service = service_at(p, best as u32, size);
        let late = rng.late(p, &[wait]);
        // An abandoning request takes no server.
        let joins = !(drops && late[0]);
        if joins {
            free[best] = t + wait + service;
        }
        if n >= p.warmup {
            rec.record_request(hist, 1, &[wait], &[service], &[a], &late);
            if joins && p.has_fleet() {
                classes.add(p.fleet_class(best as u32), wait);
            }
        }
    }
    let [mut res] = rec.finish(p.customers, rng.status);
    if p.has_fleet() {
        classes.finish(&mut res);
    }
    res
}

/// One replication's system state, in the thread's scratch buffers.
struct System<'s> {
    r: u32,
    k: u32,
    /// Capacity: heap size and router-queue length, at most.
    h: u32,
    policy: DispatchPolicy,
    /// Whether the routers keep the sorted permutation (all but `pod`).
    buckets: bool,
    /// The most requests a server may hold (0: no limit).
    limit: u32,
    /// Whether requests draw a patience, and whether late ones are dropped.
    patience: bool,
    drops: bool,
    s: &'s mut Scratch,
    heap_n: u32,
}

impl<'s> System<'s> {
    fn new(p: &PointParams, s: &'s mut Scratch) -> Self {
        let r = p.servers.max(1);
        let k = p.routers.max(1);
        let h = p.dispatch_capacity();
        let policy = p.policy();
        let buckets = policy != DispatchPolicy::Pod;
        let (ru, ku, hu) = (r as usize, k as usize, h as usize);
        s.free.clear();
        s.free.resize(ru, 0.0);
        s.heap.resize(hu, (0.0, 0));
        s.cnt.clear();
        s.cnt.resize(ku * ru, 0);
        if buckets {
            s.perm.clear();
            s.pos.clear();
            s.start.clear();
            for _ in 0..ku {
                s.perm.extend(0..r);
                s.pos.extend(0..r);
                // start[0] = 0, start[c] = R for c >= 1: every server idle.
                s.start.push(0);
                s.start.extend(std::iter::repeat_n(r, hu + 1));
            }
        }
        if policy == DispatchPolicy::Central {
            for q in [&mut s.q_arr, &mut s.q_svc, &mut s.q_gap, &mut s.q_pat] {
                q.resize(ku * hu, 0.0);
            }
            s.q_head.clear();
            s.q_head.resize(ku, 0);
            s.q_len.clear();
            s.q_len.resize(ku, 0);
        }
        System {
            r,
            k,
            h,
            policy,
            buckets,
            limit: p.system_limit,
            patience: p.reneging() != Reneging::None,
            drops: p.drops_late(),
            s,
            heap_n: 0,
        }
    }

    /// Insert a departure (sift up).
    #[inline(always)]
    fn push(&mut self, x: f32, tag: u32) {
        let heap = &mut self.s.heap[..=self.heap_n as usize];
        let mut i = self.heap_n as usize;
        self.heap_n += 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if heap[parent].0 <= x {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = (x, tag);
    }

    /// Remove the earliest departure (Floyd: the hole goes down along
    /// smaller children to a leaf, then the last element goes up from it).
    /// The vacated last slot holds +∞ meanwhile, standing in for a missing
    /// right child, so the smaller child is picked without a branch (the
    /// same choice as the GPU's explicit test).
    #[inline(always)]
    fn pop(&mut self) -> (f32, u32) {
        let heap = &mut self.s.heap[..self.heap_n as usize];
        let top = heap[0];
        self.heap_n -= 1;
        let n = self.heap_n as usize;
        let last = heap[n];
        heap[n].0 = f32::INFINITY;
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let m = l + usize::from(heap[l + 1].0 < heap[l].0);
            heap[i] = heap[m];
            i = m;
        }
        while i > 0 {
            let parent = (i - 1) / 2;
            if heap[parent].0 <= last.0 {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = last;
        top
    }

    /// Swap servers at permutation indices `i` and `j` of router `k`.
    #[inline(always)]
    fn swap(&mut self, k: usize, i: u32, j: u32) {
        let base = k * self.r as usize;
        let (a, b) = (
            self.s.perm[base + i as usize],
            self.s.perm[base + j as usize],
        );
        self.s.perm[base + i as usize] = b;
        self.s.perm[base + j as usize] = a;
        self.s.pos[base + b as usize] = i;
        self.s.pos[base + a as usize] = j;
    }

    /// Router `k` has one more request at server `srv`.
    #[inline(always)]
    fn inc(&mut self, k: u32, srv: u32) {
        let (ku, ci) = (k as usize, (k * self.r + srv) as usize);
        let c = self.s.cnt[ci];
        if self.buckets {
            // Move srv to the end of block c, then shrink block c by one.
            let sb = ku * (self.h as usize + 2) + c as usize + 1;
            let j = self.s.start[sb] - 1;
            let i = self.s.pos[ci];
            self.swap(ku, i, j);
            self.s.start[sb] = j;
        }
        self.s.cnt[ci] = c + 1;
    }

    /// Router `k` has one request fewer at server `srv`.
    #[inline(always)]
    fn dec(&mut self, k: u32, srv: u32) {
        let (ku, ci) = (k as usize, (k * self.r + srv) as usize);
        let c = self.s.cnt[ci];
        if self.buckets {
            // Move srv to the front of block c, then grow block c - 1 over it.
            let sb = ku * (self.h as usize + 2) + c as usize;
            let j = self.s.start[sb];
            let i = self.s.pos[ci];
            self.swap(ku, i, j);
            self.s.start[sb] = j + 1;
        }
        self.s.cnt[ci] = c - 1;
    }

    #[inline(always)]
    fn perm_at(&self, k: u32, i: u32) -> u32 {
        self.s.perm[(k * self.r + i) as usize]
    }

    /// Servers with count < c + 1 for router `k`, i.e. `start[c + 1]`.
    #[inline(always)]
    fn below_count(&self, k: u32, c: u32) -> u32 {
        self.s.start[k as usize * (self.h as usize + 2) + c as usize + 1]
    }

    /// Shift every stored time by −t (the epoch moves to the current arrival).
    fn rebase(&mut self, t: f32) {
        for f in &mut self.s.free {
            *f = (*f - t).max(0.0);
        }
        for e in &mut self.s.heap[..self.heap_n as usize] {
            e.0 -= t;
        }
        if self.policy == DispatchPolicy::Central {
            let h = self.h;
            for k in 0..self.k {
                let (head, len) = (self.s.q_head[k as usize], self.s.q_len[k as usize]);
                for j in 0..len {
                    let slot = (k * h + (head + j) % h) as usize;
                    self.s.q_arr[slot] -= t;
                }
            }
        }
    }

    /// Router `k`'s choice of server for a request arriving now, or `None`
    /// (central: it waits at the router). Takes the policy's random words
    /// from `word`, in stream order.
    #[inline(always)]
    fn choose(&mut self, p: &PointParams, k: u32, word: &mut impl FnMut() -> u32) -> Option<u32> {
        match self.policy {
            DispatchPolicy::Jsq => {
                let w = word();
                let c0 = self.s.cnt[(k * self.r + self.perm_at(k, 0)) as usize];
                let m = self.below_count(k, c0);
                Some(self.perm_at(k, below(w, m)))
            }
            DispatchPolicy::Jiq => {
                let w = word();
                let idle = self.below_count(k, 0);
                Some(if idle > 0 {
                    self.perm_at(k, below(w, idle))
                } else {
                    below(w, self.r)
                })
            }
            DispatchPolicy::Pod => {
                let d = p.effective_choices();
                let mut cand = [0u32; dispatch::MAX_CHOICES as usize];
                // Floyd: for j = R − d .. R − 1, take x uniform in [0, j], or
                // j itself if x is already taken.
                for (taken, j) in (self.r - d..self.r).enumerate() {
                    let mut x = below(word(), j + 1);
                    if cand[..taken].contains(&x) {
                        x = j;
                    }
                    cand[taken] = x;
                }
                let base = (k * self.r) as usize;
                let cand = &cand[..d as usize];
                let mut best = u32::MAX;
                let mut ties = 0;
                for &c in cand {
                    let n = self.s.cnt[base + c as usize];
                    if n < best {
                        best = n;
                        ties = 1;
                    } else if n == best {
                        ties += 1;
                    }
                }
                let mut pick = below(word(), ties);
                let mut chosen = cand[0];
                for &c in cand {
                    if self.s.cnt[base + c as usize] == best {
                        if pick == 0 {
                            chosen = c;
                            break;
                        }
                        pick -= 1;
                    }
                }
                Some(chosen)
            }
            DispatchPolicy::Lwl
            | DispatchPolicy::Random
            | DispatchPolicy::Weighted
            | DispatchPolicy::FirstFree => {
                unreachable!("{:?} needs only free-at times: `free_times`", self.policy)
            }
            DispatchPolicy::Central => {
                // central with several routers: a random server among those
                // with none of this router's requests, if any.
                let idle = self.below_count(k, 0);
                if idle > 0 {
                    Some(self.perm_at(k, below(word(), idle)))
                } else {
                    None
                }
            }
        }
    }

    /// Pop every departure at or before `t`, updating its router's counts
    /// (all policies but `central`, whose routers may then dispatch).
    #[inline(always)]
    fn depart_until(&mut self, t: f32) {
        while self.heap_n > 0 && self.s.heap[0].0 <= t {
            let (_, tag) = self.pop();
            let (k, srv) = if self.k > 1 {
                (tag / self.r, tag % self.r)
            } else {
                (0, tag)
            };
            self.dec(k, srv);
        }
    }

    /// The wait of a request dispatched to `srv` at `t`.
    #[inline(always)]
    fn wait_at(&self, t: f32, srv: u32) -> f32 {
        (self.s.free[srv as usize] - t).max(0.0)
    }

    /// Send a request arriving at `t` to `srv` via router `k`, where it
    /// waits `wait` (`wait_at`).
    #[inline(always)]
    fn dispatch_now(&mut self, t: f32, k: u32, srv: u32, wait: f32, service: f32) {
        let leaves = t + wait + service;
        self.s.free[srv as usize] = leaves;
        self.push(leaves, k * self.r + srv);
        self.inc(k, srv);
    }

    /// Whether `srv` holds the most requests it may (every router's).
    #[inline(always)]
    fn full(&self, srv: u32) -> bool {
        let held: u32 = (0..self.k)
            .map(|k| self.s.cnt[(k * self.r + srv) as usize])
            .sum();
        held >= self.limit
    }

    /// Whether a request dispatched to `srv`, waiting `wait` with the given
    /// patience, is late: refused by a full server, or out of patience.
    #[inline(always)]
    fn late(&self, srv: u32, wait: f32, patience: f32) -> bool {
        if self.limit > 0 {
            self.full(srv)
        } else {
            self.patience && wait > patience
        }
    }

    fn run(
        self,
        p: &PointParams,
        rep: u32,
        table: &[f32],
        hist: &mut [u32],
        watch: Watch<'_>,
    ) -> RepResult {
        let mut rng = Sampler::<1>::new(p, [rep], table);
        let mut rec = Recorders::<1>::new(p);
        let mut classes = ClassSums::default();
        let (status, peak) = if self.policy == DispatchPolicy::Central {
            self.run_central(p, &mut rng, &mut rec, hist, watch)
        } else {
            self.run_blocked(p, &mut rng, &mut rec, &mut classes, hist, watch)
        };
        let [mut res] = rec.finish(p.customers, [status]);
        res.status = status;
        res.max_in_system = peak;
        if p.has_fleet() {
            classes.finish(&mut res);
        }
        res
    }

    /// `jsq`, `pod`, `jiq`: every arrival is dispatched at once and draws a
    /// fixed sequence of words (interarrival, service, router, policy words),
    /// which do not depend on the system's state. So they are drawn for a
    /// block of arrivals ahead, in stream order, before the block is
    /// simulated: the samplers' long dependency chains then overlap each
    /// other instead of the heap's mispredicted branches. Same words, same
    /// order, same results as drawing them one arrival at a time.
    /// Returns the status and the most requests held at once.
    fn run_blocked(
        mut self,
        p: &PointParams,
        rng: &mut Sampler<'_, 1>,
        rec: &mut Recorders<1>,
        classes: &mut ClassSums,
        hist: &mut [u32],
        watch: Watch<'_>,
    ) -> (u32, u32) {
        const BLOCK: usize = 64;
        let total = p.warmup + p.customers;
        let period = rebase_period(p.servers);
        let words = if self.policy == DispatchPolicy::Pod {
            p.effective_choices() as usize + 1
        } else {
            1
        };
        let mut gaps = [0.0f32; BLOCK];
        let mut services = [0.0f32; BLOCK];
        let mut routers = [0u32; BLOCK];
        let mut statuses = [0u32; BLOCK];
        let mut policy_words = [0u32; BLOCK * (dispatch::MAX_CHOICES as usize + 1)];
        let mut patience = [f32::INFINITY; BLOCK];
        let mut t = 0.0f32;
        let mut since_rebase = 0u32;
        let mut done = 0u32;
        let watch_blocks = Watch::EVERY / BLOCK as u32;
        let mut blocks = 0u32;
        let mut peak = 0u32;
        while done < total {
            blocks += 1;
            if blocks.is_multiple_of(watch_blocks) && watch.tick(u64::from(Watch::EVERY)) {
                break;
            }
            let n = ((total - done) as usize).min(BLOCK);
            for j in 0..n {
                gaps[j] = rng.draw(&p.arrival)[0];
                services[j] = rng.draw(&p.service)[0];
                routers[j] = if self.k > 1 {
                    below(rng.streams.next_u32()[0], self.k)
                } else {
                    0
                };
                for w in &mut policy_words[j * words..(j + 1) * words] {
                    *w = rng.streams.next_u32()[0];
                }
                if self.patience {
                    patience[j] = rng.patience(p)[0];
                }
                statuses[j] = rng.status[0];
            }
            for j in 0..n {
                let a = gaps[j];
                t += a;
                self.depart_until(t);
                since_rebase += 1;
                if dispatch::rebase_due(since_rebase, period, self.heap_n, p.servers) {
                    self.rebase(t);
                    t = 0.0;
                    since_rebase = 0;
                }
                let k = routers[j];
                let mut next = j * words;
                let mut word = || {
                    next += 1;
                    policy_words[next - 1]
                };
                let srv = self.choose(p, k, &mut word).unwrap_or(0);
                let wait = self.wait_at(t, srv);
                let service = service_at(p, srv, services[j]);
                let late = self.late(srv, wait, patience[j]);
                let joins = !(self.drops && late);
                if joins {
                    if self.heap_n == self.h {
                        return (statuses[j] | rep_status::QUEUE_OVERFLOW, peak);
                    }
                    self.dispatch_now(t, k, srv, wait, service);
                }
                peak = peak.max(self.heap_n);
                if done >= p.warmup {
                    rec.record_request(hist, 1, &[wait], &[service], &[a], &[late]);
                    if joins && p.has_fleet() {
                        classes.add(p.fleet_class(srv), wait);
                    }
                }
                done += 1;
            }
        }
        (rng.status[0], peak)
    }

    /// `central` with several routers: a request may wait at its router and
    /// is dispatched when one of the router's requests leaves; the policy's
    /// word is drawn only when the router has a server to choose from.
    fn run_central(
        mut self,
        p: &PointParams,
        rng: &mut Sampler<'_, 1>,
        rec: &mut Recorders<1>,
        hist: &mut [u32],
        watch: Watch<'_>,
    ) -> (u32, u32) {
        let total = p.warmup + p.customers;
        let period = rebase_period(p.servers);
        let (r, h) = (self.r, self.h);
        let mut t = 0.0f32;
        let mut since_rebase = 0u32;
        // Requests dispatched so far (warm-up included).
        let mut done = 0u32;
        // Requests waiting at the routers, and the most held at once.
        let mut queued = 0u32;
        let mut peak = 0u32;
        let mut record = |done: &mut u32, wait: f32, service: f32, gap: f32, late: bool| {
            if *done >= p.warmup {
                rec.record_request(hist, 1, &[wait], &[service], &[gap], &[late]);
            }
            *done += 1;
        };
        let mut arrivals = 0u32;
        'arrivals: while done < total {
            arrivals = arrivals.wrapping_add(1);
            if arrivals.is_multiple_of(Watch::EVERY) && watch.tick(u64::from(Watch::EVERY)) {
                break;
            }
            let a = rng.draw(&p.arrival)[0];
            t += a;
            // Departures up to now, in time order (before a rebase, which
            // clamps the free-at times of idle servers to the new epoch).
            while self.heap_n > 0 && self.s.heap[0].0 <= t {
                let (dt, tag) = self.pop();
                let (k, srv) = if self.k > 1 {
                    (tag / r, tag % r)
                } else {
                    (0, tag)
                };
                self.dec(k, srv);
                let ku = k as usize;
                // The router's oldest waiting request goes where this one
                // was; those out of patience by now left unseen (abandon),
                // and the next one goes.
                while self.s.q_len[ku] > 0 {
                    let slot = (k * h + self.s.q_head[ku]) as usize;
                    let (arrived, service, gap) =
                        (self.s.q_arr[slot], self.s.q_svc[slot], self.s.q_gap[slot]);
                    self.s.q_head[ku] = (self.s.q_head[ku] + 1) % h;
                    self.s.q_len[ku] -= 1;
                    queued -= 1;
                    let at_server = (self.s.free[srv as usize] - dt).max(0.0);
                    let wait = (dt - arrived) + at_server;
                    let late = self.patience && wait > self.s.q_pat[slot];
                    let joins = !(self.drops && late);
                    if joins {
                        let leaves = dt + at_server + service;
                        self.s.free[srv as usize] = leaves;
                        self.push(leaves, tag);
                        self.inc(k, srv);
                    }
                    record(&mut done, wait, service, gap, late);
                    if done == total {
                        break 'arrivals;
                    }
                    if joins {
                        break;
                    }
                }
            }
            since_rebase += 1;
            if dispatch::rebase_due(since_rebase, period, self.heap_n + queued, p.servers) {
                self.rebase(t);
                t = 0.0;
                since_rebase = 0;
            }
            let service = rng.draw(&p.service)[0];
            let k = if self.k > 1 {
                below(rng.streams.next_u32()[0], self.k)
            } else {
                0
            };
            let chosen = self.choose(p, k, &mut || rng.streams.next_u32()[0]);
            let patience = if self.patience {
                rng.patience(p)[0]
            } else {
                f32::INFINITY
            };
            match chosen {
                Some(srv) => {
                    let wait = self.wait_at(t, srv);
                    let late = self.late(srv, wait, patience);
                    if !(self.drops && late) {
                        if self.heap_n == h {
                            return (rng.status[0] | rep_status::QUEUE_OVERFLOW, peak);
                        }
                        self.dispatch_now(t, k, srv, wait, service);
                    }
                    record(&mut done, wait, service, a, late);
                }
                None => {
                    let ku = k as usize;
                    if self.s.q_len[ku] == h {
                        return (rng.status[0] | rep_status::QUEUE_OVERFLOW, peak);
                    }
                    let slot = (k * h + (self.s.q_head[ku] + self.s.q_len[ku]) % h) as usize;
                    self.s.q_arr[slot] = t;
                    self.s.q_svc[slot] = service;
                    self.s.q_gap[slot] = a;
                    self.s.q_pat[slot] = patience;
                    self.s.q_len[ku] += 1;
                    queued += 1;
                }
            }
            peak = peak.max(self.heap_n + queued);
        }
        (rng.status[0], peak)
    }
}
