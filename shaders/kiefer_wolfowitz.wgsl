// c FCFS servers behind one queue: the Kiefer-Wolfowitz recursion with a
// binary min-heap of free-at times. Twin of
// src/engine/cpu/kiefer_wolfowitz.rs (read the doc comment of its
// `kiefer_wolfowitz_traced` for the rebasing argument).
// The heap lives in storage memory, interleaved across invocations
// (element i of lane L at i * info.lanes + L) so that neighbouring lanes
// touch neighbouring words.
//
// Under a capacity K (LIMITED, `PointParams::system_limit`; also a limited
// one-server queue, c = 1, of a thinned stream) the row holds K slots: the
// c free-at times, then a ring of the start times of the last K - c
// admitted requests. FCFS starts never decrease, so the requests waiting at
// time t are the latest admitted whose start is after t; with K - c or more
// waiting (all c servers then busy) the system holds K and an arrival is
// refused: exactly when the ring's oldest start is after t (K = c: when the
// arrival would wait at all, Erlang's loss system). A refused request takes
// no server (as an abandoning one) and is counted, not recorded. One read
// and one write of the ring per customer, coalesced across lanes.

@group(0) @binding(6) var<storage, read_write> heap: array<f32>;

// For small queues (FAST_HEAP: a pipeline with room for FAST_HEAP_SERVERS
// servers, at most FAST_HEAP_MAX_SERVERS, generated with the array lengths
// by crates/qsweep-gpu/src/pipelines.rs) the heap lives in fast memory during a
// pass and in `heap` only between passes: workgroup memory laid out
// [server][lane] (FAST_HEAP_IN_WORKGROUP, where the adapter has room: the 64
// lanes of one level are 64 consecutive words, one per bank), else the
// invocation's private memory. The placement is chosen per workgroup
// (`fast_on`: its tile's queue fits), so one pipeline runs a call's small
// and large queues side by side in one dispatch; the floats are the same
// either way. The customer loop is called once per placement with `fast`
// a constant, so after inlining (every driver inlines) each copy's heap
// accesses are resolved at compile time, as if the pipeline had one
// placement only: no branch per heap access in the loop.
var<private> pheap: array<f32, PRIVATE_HEAP_LEN>;
var<workgroup> wheap: array<f32, WORKGROUP_HEAP_LEN>;

// Slot i of the fast heap of the invocation whose slot_lane is given.
fn fget(i: u32, slot_lane: u32) -> f32 {
    if (FAST_HEAP_IN_WORKGROUP) {
        return wheap[i * TILE_REPS + slot_lane % TILE_REPS];
    }
    return pheap[i];
}

fn fset(i: u32, v: f32, slot_lane: u32) {
    if (FAST_HEAP_IN_WORKGROUP) {
        wheap[i * TILE_REPS + slot_lane % TILE_REPS] = v;
    } else {
        pheap[i] = v;
    }
}

fn hget(i: u32, stride: u32, slot_lane: u32, fast: bool) -> f32 {
    if (FAST_HEAP && fast) {
        return fget(i, slot_lane);
    }
    return heap[i * stride + slot_lane];
}

fn hset(i: u32, v: f32, stride: u32, slot_lane: u32, fast: bool) {
    if (FAST_HEAP && fast) {
        fset(i, v, slot_lane);
    } else {
        heap[i * stride + slot_lane] = v;
    }
}

// A pass's fast heap: rows [0, rows) of `column` read from `heap` when the
// pass starts, written back when it ends.
fn fast_heap_load(rows: u32, stride: u32, column: u32) {
    for (var i = 0u; i < rows; i++) {
        fset(i, heap[i * stride + column], column);
    }
}

fn fast_heap_store(rows: u32, stride: u32, column: u32) {
    for (var i = 0u; i < rows; i++) {
        heap[i * stride + column] = fget(i, column);
    }
}

// Free-at times in rows [0, rows) of `column` moved to an epoch `t` later,
// clamped at 0 (a server free before the new epoch is free at it).
fn rebase_rows(rows: u32, t: f32, stride: u32, column: u32, fast: bool) {
    for (var i = 0u; i < rows; i++) {
        hset(i, max(hget(i, stride, column, fast) - t, 0.0), stride, column, fast);
    }
}

// Where a replication's customer loop stands: the time since the epoch and
// the arrivals since it moved.
struct KwClock {
    t: f32,
    since_rebase: u32,
}

// Customers [begin, end) of replication `p` with `c` servers (`depth` heap
// levels below the root), its heap in fast memory where `fast` (a constant
// at each call).
fn run_customers(p: PointParams, begin: u32, end: u32, start: KwClock, c: u32, depth: u32,
                 stride: u32, slot_lane: u32, fast: bool) -> KwClock {
    var t = start.t;
    var since_rebase = start.since_rebase;
    let lk = ln_keep(p);
    let slots = heap_slots(p);
    let period = rebase_period(slots);
    for (var n = begin; n < end; n++) {
        let a = next_interarrival(p, lk);
        t += a;
        since_rebase += 1u;
        if (since_rebase == period) {
            rebase_rows(c, t, stride, slot_lane, fast);
            if (LIMITED) {
                for (var i = c; i < slots; i++) {
                    heap[i * stride + slot_lane] = max(heap[i * stride + slot_lane] - t, 0.0);
                }
            }
            t = 0.0;
            since_rebase = 0u;
        }
        let free = hget(0u, stride, slot_lane, fast);
        let wait = max(free - t, 0.0);
        let service = draw_service(p.service);
        // Replace the root by the new free-at time, sifting it down through
        // all `depth` levels (twin of `replace_roots` in
        // src/engine/cpu/kiefer_wolfowitz.rs):
        // once x has found its place the hole stops moving, and what is
        // parked there meanwhile is overwritten by x. A trip count fixed
        // per point and selects instead of branches: no divergence.
        // A request that abandons (RENEGING_ABANDON, its wait beyond its
        // patience) takes no server: the root is "replaced" by its own
        // free-at time, which the sift below leaves where it is (the root is
        // the smallest), so the heap is unchanged without a branch.
        var late = patience_late(p, wait);
        let start = (t + wait) * opaque_one;
        var x = start + service;
        if (LIMITED) {
            late = wait > 0.0;
            let ring = slots - c;
            if (ring > 0u) {
                let oldest = (c + ring_head) * stride + slot_lane;
                let kept = heap[oldest];
                late = kept > t;
                heap[oldest] = select(start, kept, late);
                let next = ring_head + select(1u, 0u, late);
                ring_head = select(next, 0u, next == ring);
            }
        }
        if (DROPS_LATE) {
            x = select(x, free, late);
        }
        var i = 0u;
        for (var level = 0u; level < depth; level++) {
            let l = 2u * i + 1u;
            let r = l + 1u;
            // Children past the last server are empty (+inf); the index is
            // clamped so the discarded read stays in bounds.
            let hl = select(HEAP_EMPTY, hget(min(l, c - 1u), stride, slot_lane, fast), l < c);
            let hr = select(HEAP_EMPTY, hget(min(r, c - 1u), stride, slot_lane, fast), r < c);
            let right = hr < hl;
            let hm = select(hl, hr, right);
            hset(i, hm, stride, slot_lane, fast);
            i = select(i, select(l, r, right), hm < x);
        }
        hset(i, x, stride, slot_lane, fast);
        if (n >= p.warmup) {
            rec_request(wait, service, a, late);
        }
    }
    return KwClock(t, since_rebase);
}

// Slots of a replication's heap row: twin of `PointParams::heap_slots`.
fn heap_slots(p: PointParams) -> u32 {
    return max(max(p.servers, 1u), p.system_limit);
}

// An empty slot of the heap: larger than any free-at time; f32::MAX, the CPU
// twin's padding. Written in hex: the decimal 3.4028235e38 is an abstract
// float just above f32::MAX, which WGSL (and Tint) refuse as an f32 constant.
const HEAP_EMPTY: f32 = 0x1.fffffep+127f;

// Runs customers [info.begin, info.end) of replication `rep` (see
// lindley.wgsl); the heap stays in `heap` between passes.
fn simulate(p: PointParams, rep: u32, slot_lane: u32, result_index: u32) {
    let total = p.warmup + p.customers;
    if (info.begin >= total) {
        return;
    }
    let c = max(p.servers, 1u);
    // Uniform in the workgroup: its tile is one point's.
    let fast_on = FAST_HEAP && c <= FAST_HEAP_SERVERS;
    // Levels below the root: floor(log2 c).
    let depth = firstLeadingBit(c);
    let stride = info.lanes;
    var clock = KwClock(0.0, 0u);
    if (info.begin == 0u) {
        replication_start(p, rep);
        for (var i = 0u; i < c; i++) {
            hset(i, 0.0, stride, slot_lane, fast_on);
        }
        if (LIMITED) {
            for (var i = c; i < heap_slots(p); i++) {
                heap[i * stride + slot_lane] = 0.0;
            }
            ring_head = 0u;
        }
    } else {
        let st = state_load(slot_lane, p.inv_hist_scale, p.slo);
        clock = KwClock(st.x, st.since_rebase);
        if (fast_on) {
            fast_heap_load(c, stride, slot_lane);
        }
    }
    let end = min(info.end, total);
    if (fast_on) {
        clock = run_customers(p, info.begin, end, clock, c, depth, stride, slot_lane, true);
    } else {
        clock = run_customers(p, info.begin, end, clock, c, depth, stride, slot_lane, false);
    }
    if (end == total) {
        results[result_index] = rec_finish(p.customers);
    } else {
        state_store(slot_lane, clock.t, 0.0, clock.since_rebase);
        if (fast_on) {
            fast_heap_store(c, stride, slot_lane);
        }
    }
}

// A large queue run by a whole workgroup (DispatchInfo.side_by_side, and
// `cooperative`: at least COOPERATIVE_MIN_SERVERS servers, whose heap no
// fast memory holds, and no capacity; crates/qsweep-gpu/src/plan.rs,
// `cooperative_candidate`). One replication per tile: server s belongs to
// lane s % TILE_REPS, row s / TILE_REPS of the lane's column (in `heap`,
// or in fast memory where the pipeline's fast heap has the rows), and each
// lane keeps the earliest of its own free-at times. Per customer the lanes
// find the earliest of all with two workgroup atomics (free-at times are
// never negative, so their bits order as the floats do) and the lowest lane
// holding it replaces it and rescans its share: the same multiset of
// free-at times as the heap's, the same root at every customer, hence the
// same waits, sums and histograms to the bit as `run_customers`. Every lane
// draws the replication's stream (so each knows the arrival, the service
// and the patience without a word exchanged); lane 0 records.
fn cooperative(p: PointParams) -> bool {
    return !LIMITED && p.servers >= COOPERATIVE_MIN_SERVERS;
}

// Per customer n, pair n % 2: [0, 1] the earliest free-at time's bits,
// [2, 3] the lowest lane holding it. A pair is reset (to NO_LANE_KEY) by
// lane 0 during the next customer, once every lane has read it.
var<workgroup> coop: array<atomic<u32>, 4>;
const NO_LANE_KEY: u32 = 0xffffffffu;

// The earliest free-at time among one lane's `rows` rows (as bits, or
// NO_LANE_KEY for a lane without servers) and its row.
struct LaneMin {
    key: u32,
    row: u32,
}

fn lane_min(rows: u32, stride: u32, column: u32, fast: bool) -> LaneMin {
    var m = LaneMin(NO_LANE_KEY, 0u);
    for (var k = 0u; k < rows; k++) {
        let key = bitcast<u32>(hget(k, stride, column, fast));
        let less = key < m.key;
        m.key = select(m.key, key, less);
        m.row = select(m.row, k, less);
    }
    return m;
}

// Customers [begin, end) of the workgroup's replication: the twin of
// `run_customers`, step for step (the same draws in the same order, the
// same floats), with the root found together. `fast` is a constant at
// each call, as there. Every lane runs every iteration: the barriers are
// reached by the whole workgroup.
fn run_cooperative(p: PointParams, begin: u32, end: u32, start: KwClock, rows: u32,
                   stride: u32, lane: u32, column: u32, fast: bool) -> KwClock {
    var t = start.t;
    var since_rebase = start.since_rebase;
    let lk = ln_keep(p);
    let period = rebase_period(heap_slots(p));
    var own = lane_min(rows, stride, column, fast);
    for (var n = begin; n < end; n++) {
        let a = next_interarrival(p, lk);
        t += a;
        since_rebase += 1u;
        if (since_rebase == period) {
            rebase_rows(rows, t, stride, column, fast);
            own = lane_min(rows, stride, column, fast);
            t = 0.0;
            since_rebase = 0u;
        }
        let pair = n & 1u;
        atomicMin(&coop[pair], own.key);
        workgroupBarrier();
        let earliest = atomicLoad(&coop[pair]);
        if (own.key == earliest) {
            atomicMin(&coop[2u + pair], lane);
        }
        if (lane == 0u) {
            atomicStore(&coop[pair ^ 1u], NO_LANE_KEY);
            atomicStore(&coop[2u + (pair ^ 1u)], NO_LANE_KEY);
        }
        let free = bitcast<f32>(earliest);
        let wait = max(free - t, 0.0);
        let service = draw_service(p.service);
        let late = patience_late(p, wait);
        let start = (t + wait) * opaque_one;
        var x = start + service;
        if (DROPS_LATE) {
            x = select(x, free, late);
        }
        workgroupBarrier();
        if (lane == atomicLoad(&coop[2u + pair])) {
            hset(own.row, x, stride, column, fast);
            own = lane_min(rows, stride, column, fast);
        }
        if (lane == 0u && n >= p.warmup) {
            rec_request(wait, service, a, late);
        }
    }
    return KwClock(t, since_rebase);
}

// The workgroup's tile: one replication of a cooperative queue, its state
// between passes in lane 0's slot, its servers in every lane's column.
fn run_cooperative_tile(wg: vec3<u32>, lane: u32) {
    let local_tile = wg.x + wg.y * info.groups_x;
    hist_clear(lane);
    if (lane == 0u) {
        for (var i = 0u; i < 4u; i++) {
            atomicStore(&coop[i], NO_LANE_KEY);
        }
    }
    workgroupBarrier();
    let tile = tiles[info.tile_offset + local_tile];
    let p = params[tile.param_index];
    let total = p.warmup + p.customers;
    if (info.begin < total) {
        let c = max(p.servers, 1u);
        // Lane `lane`'s servers: lane, lane + TILE_REPS, ... below c.
        let rows = (c + TILE_REPS - 1u - lane) / TILE_REPS;
        // Uniform: the longest column's rows.
        let fast_on = FAST_HEAP && (c + TILE_REPS - 1u) / TILE_REPS <= FAST_HEAP_SERVERS;
        let stride = info.lanes;
        let column = local_tile * TILE_REPS + lane;
        let state_slot = local_tile * TILE_REPS;
        var clock = KwClock(0.0, 0u);
        rec_sections(p, tile.hist_slot, 0u);
        if (info.begin == 0u) {
            replication_start(p, tile.rep_start);
            for (var k = 0u; k < rows; k++) {
                hset(k, 0.0, stride, column, fast_on);
            }
        } else {
            let st = state_load(state_slot, p.inv_hist_scale, p.slo);
            clock = KwClock(st.x, st.since_rebase);
            if (fast_on) {
                fast_heap_load(rows, stride, column);
            }
        }
        let end = min(info.end, total);
        if (fast_on) {
            clock = run_cooperative(p, info.begin, end, clock, rows, stride, lane, column, true);
        } else {
            clock = run_cooperative(p, info.begin, end, clock, rows, stride, lane, column, false);
        }
        if (end == total) {
            if (lane == 0u) {
                results[(info.tile_offset + local_tile) * TILE_REPS] = rec_finish(p.customers);
            }
        } else {
            if (lane == 0u) {
                state_store(state_slot, clock.t, 0.0, clock.since_rebase);
            }
            if (fast_on) {
                fast_heap_store(rows, stride, column);
            }
        }
        if (pass_zeros > 0u) {
            atomicAdd(&tile_hist[0], pass_zeros);
        }
    }
    workgroupBarrier();
    hist_flush(lane, tile.hist_slot);
}

// Whether the workgroup runs a cooperative tile (set by lane 0, read by all
// through workgroupUniformLoad, so the branch is uniform).
var<workgroup> tile_cooperative: u32;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    opaque_one = f32(min(info.lanes, 1u));
    if (!LIMITED && lane == 0u) {
        var on = 0u;
        let local_tile = wg.x + wg.y * info.groups_x;
        if (info.side_by_side == 1u && local_tile < info.tiles) {
            on = select(0u, 1u, cooperative(params[tiles[info.tile_offset + local_tile].param_index]));
        }
        tile_cooperative = on;
    }
    // A limited pipeline never runs a queue cooperatively: the constant
    // leaves it the one-invocation kernel alone.
    if (!LIMITED && workgroupUniformLoad(&tile_cooperative) == 1u) {
        run_cooperative_tile(wg, lane);
    } else {
        run_tile(wg, lane);
    }
}
