// The dispatch kernel: all R single-worker FIFO servers of a replication
// behind routers that decide on what they know (jsq, pod, jiq, lwl, and
// central with several routers). Twin of src/engine/cpu/dispatch.rs: read its
// doc comment for the model, the data structures and the order in which
// random words are drawn; this file follows it step for step.
//
// A replication's system lives in `dstate`, interleaved across invocations
// (word i of lane L at i * info.lanes + L), laid out as documented at
// contract::dispatch::state_words. The host zeroes the buffer before a
// replication's first pass, and all-zero words are the empty system: the
// permutation and its inverse are stored XOR their index (0: identity) and
// the block starts as R - start[c] (0: start[c] = R for c >= 1; start[0] = 0
// is never stored), so no initialisation loop runs (llvmpipe caps loop
// iterations per invocation; see crates/qsweep-gpu/src/plan.rs).
//
// Passes: each pass runs until `info.end` requests have been dispatched
// (warm-up included); the heap size, that count, a "cut short" flag, the
// most requests held so far and the requests waiting at routers are kept in the state's header between passes,
// the stream, recorder, time and rebase counter in lane_state.
//
// The capacity (heap slots, and slots of each router queue) is the point's
// (`dispatch_capacity`); a replication that outgrows it stops with
// STATUS_QUEUE_OVERFLOW and the host re-runs it with more room.
//
// Patience (RENEGING) and a per-server limit (LIMITED, `system_limit`) as
// in the CPU twin's "Patience and capacity": the patience is drawn after
// the policy's words, a request waiting at a router keeps it in a fourth
// word of its queue slot, and a late request is dropped where DROPS_LATE.

@group(0) @binding(6) var<storage, read_write> dstate: array<u32>;

const NO_SERVER: u32 = 0xffffffffu;

// The epoch-relative time and the arrivals since the last rebase.
struct Clock {
    t: f32,
    since: u32,
}
const FLAG_CUT: u32 = 1u;

var<private> d_lane: u32;
var<private> d_stride: u32;
// The system's shape.
var<private> d_r: u32;
var<private> d_k: u32;
var<private> d_h: u32;
var<private> d_policy: u32;
var<private> d_buckets: bool;
// Offsets (in words) of the state's parts.
var<private> o_free: u32;
var<private> o_ht: u32;
var<private> o_hg: u32;
var<private> o_routers: u32;
var<private> o_router_words: u32;
var<private> o_queues: u32;
var<private> o_qmeta: u32;
// A mixed fleet's per-class sums (Kahan sum, carry, count per class).
var<private> o_class: u32;
// Words per router-queue slot: arrival, service, interarrival (, patience).
var<private> d_qw: u32;
// Heap size, requests dispatched so far, requests waiting at the routers
// (central) and the most requests held at once.
var<private> hp_n: u32;
var<private> done: u32;
var<private> queued: u32;
var<private> peak: u32;

fn ld(i: u32) -> u32 {
    return dstate[i * d_stride + d_lane];
}

fn st(i: u32, v: u32) {
    dstate[i * d_stride + d_lane] = v;
}

fn ldf(i: u32) -> f32 {
    return bitcast<f32>(ld(i));
}

fn stf(i: u32, v: f32) {
    st(i, bitcast<u32>(v));
}

// Uniform integer in [0, m) from one word: (word * m) >> 32.
fn below(word: u32, m: u32) -> u32 {
    return mul_hi_lo(word, m).x;
}

// Twin of `PointParams::dispatch_capacity`.
fn dispatch_capacity(p: PointParams) -> u32 {
    return select(p.capacity, 2u * max(p.servers, 1u) + DISPATCH_CAPACITY_SLACK, p.capacity == 0u);
}

// Twin of `contract::dispatch::rebase_due`.
fn rebase_due(since: u32, period: u32, in_system: u32) -> bool {
    let threshold = 2u * d_r + DISPATCH_REBASE_SLACK;
    return since >= max(period, select(0u, in_system - threshold, in_system > threshold));
}

fn effective_choices(p: PointParams) -> u32 {
    return min(clamp(p.choices, 1u, MAX_CHOICES), max(p.servers, 1u));
}

// Router k's words: counts, then (unless pod) permutation, inverse, starts.
fn cnt_at(k: u32, s: u32) -> u32 {
    return o_routers + k * o_router_words + s;
}

fn perm_get(k: u32, i: u32) -> u32 {
    return ld(o_routers + k * o_router_words + d_r + i) ^ i;
}

fn perm_set(k: u32, i: u32, v: u32) {
    st(o_routers + k * o_router_words + d_r + i, v ^ i);
}

fn pos_get(k: u32, s: u32) -> u32 {
    return ld(o_routers + k * o_router_words + 2u * d_r + s) ^ s;
}

fn pos_set(k: u32, s: u32, v: u32) {
    st(o_routers + k * o_router_words + 2u * d_r + s, v ^ s);
}

// start[c] for c >= 1: first permutation index of a server with count >= c.
fn start_get(k: u32, c: u32) -> u32 {
    return d_r - ld(o_routers + k * o_router_words + 3u * d_r + c);
}

fn start_set(k: u32, c: u32, v: u32) {
    st(o_routers + k * o_router_words + 3u * d_r + c, d_r - v);
}

fn swap_perm(k: u32, i: u32, j: u32) {
    let a = perm_get(k, i);
    let b = perm_get(k, j);
    perm_set(k, i, b);
    perm_set(k, j, a);
    pos_set(k, b, i);
    pos_set(k, a, j);
}

// Router k has one more request at server s.
fn inc(k: u32, s: u32) {
    let c = ld(cnt_at(k, s));
    if (d_buckets) {
        let j = start_get(k, c + 1u) - 1u;
        swap_perm(k, pos_get(k, s), j);
        start_set(k, c + 1u, j);
    }
    st(cnt_at(k, s), c + 1u);
}

// Router k has one request fewer at server s.
fn dec(k: u32, s: u32) {
    let c = ld(cnt_at(k, s));
    if (d_buckets) {
        let j = start_get(k, c);
        swap_perm(k, pos_get(k, s), j);
        start_set(k, c, j + 1u);
    }
    st(cnt_at(k, s), c - 1u);
}

// Place (x, tag) at hole i of the departure heap and sift it up.
fn hp_sift_up(hole: u32, x: f32, tag: u32) {
    var i = hole;
    loop {
        if (i == 0u) {
            break;
        }
        let parent = (i - 1u) / 2u;
        let hp = ldf(o_ht + parent);
        if (hp <= x) {
            break;
        }
        stf(o_ht + i, hp);
        st(o_hg + i, ld(o_hg + parent));
        i = parent;
    }
    stf(o_ht + i, x);
    st(o_hg + i, tag);
}

// Insert a departure (sift up).
fn hp_push(x: f32, tag: u32) {
    let i = hp_n;
    hp_n += 1u;
    hp_sift_up(i, x, tag);
}

// Remove the earliest departure: (time bits, tag). Floyd's way, as the CPU.
fn hp_pop() -> vec2<u32> {
    let top = vec2<u32>(ld(o_ht), ld(o_hg));
    hp_n -= 1u;
    let n = hp_n;
    let xt = ldf(o_ht + n);
    let xg = ld(o_hg + n);
    var i = 0u;
    loop {
        let l = 2u * i + 1u;
        if (l >= n) {
            break;
        }
        var m = l;
        var hm = ldf(o_ht + l);
        if (l + 1u < n) {
            let hr = ldf(o_ht + l + 1u);
            if (hr < hm) {
                m = l + 1u;
                hm = hr;
            }
        }
        stf(o_ht + i, hm);
        st(o_hg + i, ld(o_hg + m));
        i = m;
    }
    hp_sift_up(i, xt, xg);
    return top;
}

// Shift every stored time by -t.
fn rebase(t: f32) {
    for (var s = 0u; s < d_r; s++) {
        stf(o_free + s, max(ldf(o_free + s) - t, 0.0));
    }
    for (var i = 0u; i < hp_n; i++) {
        stf(o_ht + i, ldf(o_ht + i) - t);
    }
    if (d_policy == DISPATCH_CENTRAL) {
        for (var k = 0u; k < d_k; k++) {
            let head = ld(o_qmeta + 2u * k);
            let len = ld(o_qmeta + 2u * k + 1u);
            for (var j = 0u; j < len; j++) {
                let slot = o_queues + d_qw * (k * d_h + (head + j) % d_h);
                stf(slot, ldf(slot) - t);
            }
        }
    }
}

// Router k's server for a request arriving now, or NO_SERVER (central: it
// waits at the router). Draws the policy's words.
fn choose(p: PointParams, k: u32) -> u32 {
    var chosen = NO_SERVER;
    if (d_policy == DISPATCH_JSQ) {
        let w = next_u32();
        let c0 = ld(cnt_at(k, perm_get(k, 0u)));
        chosen = perm_get(k, below(w, start_get(k, c0 + 1u)));
    } else if (d_policy == DISPATCH_JIQ) {
        let w = next_u32();
        let idle = start_get(k, 1u);
        if (idle > 0u) {
            chosen = perm_get(k, below(w, idle));
        } else {
            chosen = below(w, d_r);
        }
    } else if (d_policy == DISPATCH_POD) {
        let d = effective_choices(p);
        var cand: array<u32, MAX_CHOICES>;
        var taken = 0u;
        for (var j = d_r - d; j < d_r; j++) {
            var x = below(next_u32(), j + 1u);
            for (var q = 0u; q < taken; q++) {
                if (cand[q] == x) {
                    x = j;
                }
            }
            cand[taken] = x;
            taken += 1u;
        }
        var best = 0xffffffffu;
        var ties = 0u;
        for (var q = 0u; q < d; q++) {
            let n = ld(cnt_at(k, cand[q]));
            if (n < best) {
                best = n;
                ties = 1u;
            } else if (n == best) {
                ties += 1u;
            }
        }
        var pick = below(next_u32(), ties);
        chosen = cand[0];
        for (var q = 0u; q < d; q++) {
            if (ld(cnt_at(k, cand[q])) == best) {
                if (pick == 0u) {
                    chosen = cand[q];
                    break;
                }
                pick -= 1u;
            }
        }
    } else {
        // central with several routers.
        let idle = start_get(k, 1u);
        if (idle > 0u) {
            chosen = perm_get(k, below(next_u32(), idle));
        }
    }
    return chosen;
}

// A request's fate: recorded (or counted, or dropped when `late`) past the
// warm-up. Twin of the CPU's `record` closures.
fn record(p: PointParams, wait: f32, service: f32, gap: f32, late: bool) {
    if (done >= p.warmup) {
        rec_request(wait, service, gap, late);
    }
    done += 1u;
}

// A request's patience, drawn after the policy's words; none without
// reneging (never compared). Twin of `Sampler::patience`.
fn draw_patience(p: PointParams) -> f32 {
    if (RENEGING == RENEGING_NONE) {
        return 0.0;
    }
    return draw(p.patience);
}

// Whether a request dispatched to server s, waiting `wait`, is late: s
// holds `system_limit` requests (every router's), or it is out of
// patience. Twin of `System::late`.
fn dispatch_late(p: PointParams, s: u32, wait: f32, patience: f32) -> bool {
    if (LIMITED) {
        var held = 0u;
        for (var k = 0u; k < d_k; k++) {
            held += ld(cnt_at(k, s));
        }
        return held >= p.system_limit;
    }
    if (RENEGING != RENEGING_NONE) {
        return wait > patience;
    }
    return false;
}

// The class of server s of a fleet (0 without one). Twin of
// `PointParams::fleet_class`.
fn fleet_class(p: PointParams, s: u32) -> u32 {
    var c = 0u;
    loop {
        if (c + 1u >= p.fleet_classes || s < p.fleet_end[c]) {
            break;
        }
        c += 1u;
    }
    return c;
}

// The service time at server s of a request of size `size` (scaled by the
// server's class under a fleet). Twin of `service_at`.
fn service_at(p: PointParams, s: u32, size: f32) -> f32 {
    if (p.fleet_classes > 0u) {
        // Pinned: the product feeds the server's free-at sum and the
        // recorder's, which a contracting compiler could fuse it into.
        return pinned(size * p.fleet_time[fleet_class(p, s)]);
    }
    return size;
}

// weighted: a server with probability proportional to its speed, from two
// words. Twin of `weighted_server`.
fn weighted_server(p: PointParams, class_word: u32, server_word: u32) -> u32 {
    var c = 0u;
    loop {
        if (c + 1u >= p.fleet_classes || class_word < p.fleet_pick[c]) {
            break;
        }
        c += 1u;
    }
    var first = 0u;
    if (c > 0u) {
        first = p.fleet_end[c - 1u];
    }
    return first + below(server_word, p.fleet_end[c] - first);
}

// A recorded, served request's wait into its class's sum (fleets only).
// Twin of `ClassSums::add`.
fn class_add(p: PointParams, s: u32, wait: f32) {
    if (p.fleet_classes == 0u) {
        return;
    }
    let at = o_class + 3u * fleet_class(p, s);
    let sum = ldf(at);
    let y = wait - ldf(at + 1u);
    let t = (sum + y) * opaque_one;
    stf(at + 1u, (t - sum) - y);
    stf(at, t);
    st(at + 2u, ld(at + 2u) + 1u);
}

// A request's fate, as `record`, and under a fleet its class's sum when it
// was served.
fn record_at(p: PointParams, s: u32, wait: f32, service: f32, gap: f32, late: bool) {
    if (done >= p.warmup && !(DROPS_LATE && late)) {
        class_add(p, s, wait);
    }
    record(p, wait, service, gap, late);
}

// The policies that need only the servers' free-at times: lwl (least work
// left: the Kiefer-Wolfowitz recursion by linear scan) and, for fleets,
// first_free (the scan keyed by max(free, t)), random and weighted. Twin of
// `free_times`.
fn run_free_times(p: PointParams, end: u32, clock: Clock) -> Clock {
    var t = clock.t;
    var since = clock.since;
    let period = rebase_period(p.servers);
    loop {
        if (done >= end) {
            break;
        }
        let a = draw_arrival(p.arrival);
        t += a;
        since += 1u;
        if (since == period) {
            for (var s = 0u; s < d_r; s++) {
                stf(o_free + s, max(ldf(o_free + s) - t, 0.0));
            }
            t = 0.0;
            since = 0u;
        }
        let size = draw_service(p.service);
        var best = 0u;
        if (d_policy == DISPATCH_LWL && p.fleet_classes == 0u) {
            var bv = ldf(o_free);
            for (var s = 1u; s < d_r; s++) {
                let f = ldf(o_free + s);
                if (f < bv) {
                    best = s;
                    bv = f;
                }
            }
        } else if (d_policy == DISPATCH_FIRST_FREE || d_policy == DISPATCH_LWL) {
            // On a fleet lwl scans as first_free: ties to the fastest idle.
            var key = max(ldf(o_free), t);
            for (var s = 1u; s < d_r; s++) {
                let f = max(ldf(o_free + s), t);
                if (f < key) {
                    best = s;
                    key = f;
                }
            }
        } else if (d_policy == DISPATCH_RANDOM) {
            best = below(next_u32(), d_r);
        } else {
            let class_word = next_u32();
            let server_word = next_u32();
            best = weighted_server(p, class_word, server_word);
        }
        let wait = max(ldf(o_free + best) - t, 0.0);
        let service = service_at(p, best, size);
        let late = patience_late(p, wait);
        // An abandoning request takes no server.
        if (!(DROPS_LATE && late)) {
            stf(o_free + best, (t + wait) * opaque_one + service);
        }
        record_at(p, best, wait, service, a, late);
    }
    return Clock(t, since);
}

fn run_system(p: PointParams, end: u32, total: u32, clock: Clock) -> Clock {
    var t = clock.t;
    var since = clock.since;
    let period = rebase_period(p.servers);
    loop {
        if (done >= end) {
            break;
        }
        let a = draw_arrival(p.arrival);
        t += a;
        // Departures up to now, in time order (before a rebase: see the CPU twin).
        var finished = false;
        loop {
            if (hp_n == 0u) {
                break;
            }
            if (ldf(o_ht) > t) {
                break;
            }
            let e = hp_pop();
            let dt = bitcast<f32>(e.x);
            let tag = e.y;
            var k = 0u;
            var s = tag;
            if (d_k > 1u) {
                k = tag / d_r;
                s = tag % d_r;
            }
            dec(k, s);
            if (d_policy == DISPATCH_CENTRAL) {
                // The router's oldest waiting request goes where this one
                // was; those out of patience by now left unseen (abandon),
                // and the next one goes.
                loop {
                    let len = ld(o_qmeta + 2u * k + 1u);
                    if (len == 0u) {
                        break;
                    }
                    let head = ld(o_qmeta + 2u * k);
                    let slot = o_queues + d_qw * (k * d_h + head);
                    let arrived = ldf(slot);
                    let service = ldf(slot + 1u);
                    let gap = ldf(slot + 2u);
                    st(o_qmeta + 2u * k, (head + 1u) % d_h);
                    st(o_qmeta + 2u * k + 1u, len - 1u);
                    queued -= 1u;
                    let at_server = max(ldf(o_free + s) - dt, 0.0);
                    let wait = (dt - arrived) + at_server;
                    var late = false;
                    if (RENEGING != RENEGING_NONE) {
                        late = wait > ldf(slot + 3u);
                    }
                    let joins = !(DROPS_LATE && late);
                    if (joins) {
                        let leaves = (dt + at_server) * opaque_one + service;
                        stf(o_free + s, leaves);
                        hp_push(leaves, tag);
                        inc(k, s);
                    }
                    record(p, wait, service, gap, late);
                    if (done == total) {
                        finished = true;
                        break;
                    }
                    if (joins) {
                        break;
                    }
                }
                if (finished) {
                    break;
                }
            }
        }
        if (finished) {
            break;
        }
        since += 1u;
        if (rebase_due(since, period, hp_n + queued)) {
            rebase(t);
            t = 0.0;
            since = 0u;
        }
        let service = draw_service(p.service);
        var k = 0u;
        if (d_k > 1u) {
            k = below(next_u32(), d_k);
        }
        let s = choose(p, k);
        let patience = draw_patience(p);
        if (s != NO_SERVER) {
            let wait = max(ldf(o_free + s) - t, 0.0);
            let at_server = service_at(p, s, service);
            let late = dispatch_late(p, s, wait, patience);
            if (!(DROPS_LATE && late)) {
                if (hp_n == d_h) {
                    rng_status |= STATUS_QUEUE_OVERFLOW;
                    break;
                }
                let leaves = (t + wait) * opaque_one + at_server;
                stf(o_free + s, leaves);
                hp_push(leaves, k * d_r + s);
                inc(k, s);
            }
            record_at(p, s, wait, at_server, a, late);
        } else {
            let head = ld(o_qmeta + 2u * k);
            let len = ld(o_qmeta + 2u * k + 1u);
            if (len == d_h) {
                rng_status |= STATUS_QUEUE_OVERFLOW;
                break;
            }
            let slot = o_queues + d_qw * (k * d_h + (head + len) % d_h);
            stf(slot, t);
            stf(slot + 1u, service);
            stf(slot + 2u, a);
            if (RENEGING != RENEGING_NONE) {
                stf(slot + 3u, patience);
            }
            st(o_qmeta + 2u * k + 1u, len + 1u);
            queued += 1u;
        }
        peak = max(peak, hp_n + queued);
    }
    return Clock(t, since);
}

fn simulate(p: PointParams, rep: u32, slot_lane: u32, result_index: u32) {
    let total = p.warmup + p.customers;
    if (info.begin >= total) {
        return;
    }
    d_lane = slot_lane;
    d_stride = info.lanes;
    d_r = max(p.servers, 1u);
    d_k = max(p.routers, 1u);
    d_h = dispatch_capacity(p);
    d_policy = p.route_n;
    d_buckets = d_policy != DISPATCH_POD;
    o_free = DISPATCH_HEADER_WORDS;
    o_ht = o_free + d_r;
    o_hg = o_ht + d_h;
    o_routers = o_hg + d_h;
    o_router_words = d_r;
    if (d_buckets) {
        o_router_words = 3u * d_r + d_h + 2u;
    }
    o_queues = o_routers + d_k * o_router_words;
    d_qw = select(3u, 4u, RENEGING != RENEGING_NONE);
    o_qmeta = o_queues + d_qw * d_k * d_h;
    let free_times_only = d_policy == DISPATCH_LWL || d_policy == DISPATCH_RANDOM
        || d_policy == DISPATCH_WEIGHTED || d_policy == DISPATCH_FIRST_FREE;
    // After free[] for the free-time policies; after the routers' words
    // otherwise (fleets never have central's router queues).
    o_class = select(o_queues, o_free + d_r, free_times_only);

    var clock = Clock(0.0, 0u);
    var flags = 0u;
    if (info.begin == 0u) {
        replication_start(p, rep);
        hp_n = 0u;
        done = 0u;
        peak = 0u;
        queued = 0u;
    } else {
        let saved = state_load(slot_lane, p.inv_hist_scale, p.slo);
        clock = Clock(saved.x, saved.since_rebase);
        hp_n = ld(0u);
        done = ld(1u);
        flags = ld(2u);
        peak = ld(3u);
        queued = ld(4u);
    }
    let end = min(info.end, total);
    if (flags == 0u && (rng_status & STATUS_QUEUE_OVERFLOW) == 0u) {
        if (free_times_only) {
            clock = run_free_times(p, end, clock);
        } else {
            clock = run_system(p, end, total, clock);
        }
        if (done < end && (rng_status & STATUS_QUEUE_OVERFLOW) == 0u) {
            // A driver limit ended the loops early: stop here, so the
            // replication reports fewer customers than asked and the host
            // refuses it.
            flags = FLAG_CUT;
        }
    }
    if (end == total) {
        var r = rec_finish(p.customers);
        if (!free_times_only) {
            r.max_in_system = peak;
        }
        if (p.fleet_classes > 0u) {
            for (var c = 0u; c < 4u; c++) {
                let n = ld(o_class + 3u * c + 2u);
                r.class_served[c] = n;
                r.class_wait[c] = select(0.0, ldf(o_class + 3u * c) / f32(n), n > 0u);
            }
        }
        results[result_index] = r;
    } else {
        state_store(slot_lane, clock.t, 0.0, clock.since);
        st(0u, hp_n);
        st(1u, done);
        st(2u, flags);
        st(3u, peak);
        st(4u, queued);
    }
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    run_tile(wg, lane);
}
