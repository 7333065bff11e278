// One FIFO server per replication: Lindley's recursion W' = max(0, W + S - A),
// segment by segment (src/contract/mod.rs, `Segments`: each segment draws
// from its own stream and starts from the workload that composing the
// previous segments' maps V -> max(V + shift, from_empty) gives).
// Twin of src/engine/cpu/lindley.rs.
//
// Two layouts, the same numbers to the bit (`side_by_side` in the
// pass's uniform, chosen by crates/qsweep-gpu/src/plan.rs):
// - in turn: one invocation runs a replication's segments one after the
//   other (`simulate`, through `run_tile`), when replications alone fill the
//   device;
// - side by side: one invocation per segment (`run_segments_tile`), so a few
//   hundred replications of a long run fill a large GPU. Each invocation
//   first runs its segment from an empty queue for the segment's map, one
//   invocation per replication scans the maps in workgroup memory for every
//   segment's starting workload (Greenberg, Lubachevsky and Mitrani, 1990),
//   then each replays its segment from there, recording; one invocation per
//   replication adds the segments' sums up in order. Twice the draws, a
//   replication's time divided by its segments.

// Twin of `PointParams::segments`: the most segments (a power of two, at
// most MAX_SEGMENTS) of at least MIN_SEGMENT_CUSTOMERS customers, or one
// under abandonment, whose recursion V' = max(V + S 1[V <= patience] - A, 0)
// is no composition of maps V -> max(V + a, b).
fn lindley_segments(p: PointParams) -> u32 {
    let total = p.warmup + p.customers;
    var count = 1u;
    while (count < MAX_SEGMENTS && total / (2u * count) >= MIN_SEGMENT_CUSTOMERS) {
        count *= 2u;
    }
    // Abandonment, and a stateful arrival stream (MMPP, trace), whose state
    // a later segment could not start from: one segment
    // (PointParams::segments).
    return select(count, 1u, p.reneging == RENEGING_ABANDON || law_is_stateful(p.arrival.kind));
}

// A request that waited `wait` and needs `service`: the work it brings,
// none if it abandons (RENEGING_ABANDON and its wait exceeds its patience,
// drawn here). Sets `late` for the recorder.
var<private> late: bool;
fn work_brought(p: PointParams, wait: f32, service: f32) -> f32 {
    late = patience_late(p, wait);
    if (RENEGING == RENEGING_ABANDON) {
        return select(service, 0.0, late);
    }
    return service;
}

// Customers per segment (the last holds the rest): ceil(total / count).
fn segment_length(total: u32, count: u32) -> u32 {
    return max(total / count + select(0u, 1u, total % count != 0u), 1u);
}

// The workload a segment leaves, from the one it started with and its map
// (seg_map: start, shift, wait and previous service run from empty).
fn segment_exit(m: vec4<f32>) -> f32 {
    return max((m.x + m.y) * opaque_one, m.z + m.w);
}

// One step of the segment's map run: the recursion from an empty queue and
// the sum of S - A, for interarrival `a` and service `service`.
fn map_step(a: f32, service: f32) {
    seg_map.z = max((seg_map.z + seg_map.w) * opaque_one - a, 0.0);
    seg_map.y = (seg_map.y + (service - a)) * opaque_one;
    seg_map.w = service;
}

// Segment `segment` of replication `rep` at the start of a pass: on the
// first pass a fresh stream, recorder and map (an empty queue), else what
// the previous pass left in lane_state[slot]. Returns (wait, previous
// service).
fn lindley_resume(p: PointParams, rep: u32, segment: u32, slot: u32) -> vec2<f32> {
    if (info.begin == 0u) {
        rng_init_segment(p.seed_lo, p.seed_hi, p.point_index, rep, segment);
        if (segment == 0u) {
            arrival_start(p.arrival);
        }
        rng_status = 0u;
        rec_init(p.inv_hist_scale, p.slo);
        seg_map = vec4<f32>(0.0);
        return vec2<f32>(0.0);
    }
    let st = state_load(slot, p.inv_hist_scale, p.slo);
    return vec2<f32>(st.x, st.y);
}

// Runs customers [info.begin, info.end) of replication `rep`, its segments
// in turn; its state lives in lane_state[slot] between passes. Writes the
// result on the pass that finishes the replication.
fn simulate(p: PointParams, rep: u32, slot: u32, result_index: u32) {
    let total = p.warmup + p.customers;
    if (info.begin >= total) {
        return;
    }
    let length = segment_length(total, lindley_segments(p));
    // Segment 0 on the first pass; later passes resume the segment the last
    // one stopped in (each is keyed where it begins, below).
    let resumed = lindley_resume(p, rep, 0u, slot);
    var wait = resumed.x;
    var prev_service = resumed.y;
    let lk = ln_keep(p);
    let end = min(info.end, total);
    var i = info.begin;
    while (i < end) {
        let k = i / length;
        let offset = i - k * length;
        if (offset == 0u && k > 0u) {
            // Segment k starts: close k - 1, start from the workload its map
            // leaves.
            rec_end_segment();
            seg_map = vec4<f32>(segment_exit(seg_map), 0.0, 0.0, 0.0);
            rng_init_segment(p.seed_lo, p.seed_hi, p.point_index, rep, k);
            wait = 0.0;
            prev_service = seg_map.x;
        }
        let seg_end = i + min(length - offset, end - i);
        // Warm-up customers, then recorded ones: no per-customer branch.
        let warm_end = clamp(p.warmup, i, seg_end);
        for (; i < warm_end; i++) {
            let a = next_interarrival(p, lk);
            wait = max((wait + prev_service) * opaque_one - a, 0.0);
            prev_service = work_brought(p, wait, draw_service(p.service));
            map_step(a, prev_service);
        }
        for (; i < seg_end; i++) {
            let a = next_interarrival(p, lk);
            wait = max((wait + prev_service) * opaque_one - a, 0.0);
            let service = draw_service(p.service);
            prev_service = work_brought(p, wait, service);
            map_step(a, prev_service);
            rec_request(wait, service, a, late);
        }
    }
    if (end == total) {
        results[result_index] = rec_finish(p.customers);
    } else {
        state_store(slot, wait, prev_service, 0u);
    }
}

// Side by side: what the invocations of one replication exchange.
// Each segment's map (shift, from_empty), then its starting workload.
var<workgroup> seg_maps: array<vec2<f32>, TILE_REPS>;
// Each segment's sums, counts (waited, recorded, status) and maxima.
var<workgroup> seg_sums: array<vec4<f32>, TILE_REPS>;
var<workgroup> seg_counts: array<vec4<u32>, TILE_REPS>;
var<workgroup> seg_maxima: array<vec2<f32>, TILE_REPS>;
var<workgroup> seg_exceed: array<vec4<u32>, TILE_REPS>;
// Segments per replication in this workgroup's tile, read uniformly.
var<workgroup> tile_segments: u32;

// Side by side: invocation `lane` runs segment lane % count of the tile's
// replication lane / count. A lane's steps are [0, length) for its map and
// [length, 2 length) for the replay: `info.begin`/`info.end` count steps
// (crates/qsweep-gpu/src/plan.rs, `steps`). Every barrier is reached by the whole
// workgroup (`count` is uniform: read through workgroupUniformLoad).
fn run_segments_tile(wg: vec3<u32>, lane: u32, count: u32) {
    let local_tile = wg.x + wg.y * info.groups_x;
    hist_clear(lane);
    workgroupBarrier();
    let tile = tiles[info.tile_offset + local_tile];
    let p = params[tile.param_index];
    let total = p.warmup + p.customers;
    let length = segment_length(total, count);
    let seg = lane % count;
    let rep_in_tile = lane / count;
    let rep = tile.rep_start + rep_in_tile;
    let first = min(seg * length, total);
    let n = min(length, total - first);
    let slot = local_tile * TILE_REPS + lane;
    let in_tile = rep_in_tile < tile.rep_count;
    let all_done = info.begin >= 2u * length;
    let lk = ln_keep(p);
    // The requests of this replication recorded before the segment's first.
    rec_sections(p, tile.hist_slot, max(first, p.warmup) - p.warmup);

    // The map: the segment from an empty queue, nothing recorded.
    var wait = 0.0;
    var prev_service = 0.0;
    if (in_tile && !all_done) {
        let resumed = lindley_resume(p, rep, seg, slot);
        wait = resumed.x;
        prev_service = resumed.y;
        let map_end = min(min(info.end, length), n);
        for (var i = info.begin; i < map_end; i++) {
            let a = next_interarrival(p, lk);
            let service = draw_service(p.service);
            // The replay draws each request's patience: so does the map, to
            // stay in step with it (timeouts change no work).
            if (RENEGING != RENEGING_NONE) {
                _ = draw(p.patience);
            }
            map_step(a, service);
        }
    }

    // The scan, in the pass that reaches step `length`: segment k starts
    // from the workload maps 0 .. k - 1 leave, composed in order from an
    // empty queue (as `simulate` does in turn).
    let scan_pass = info.begin <= length && length < info.end;
    if (in_tile && scan_pass) {
        seg_maps[lane] = vec2<f32>(seg_map.y, seg_map.z + seg_map.w);
    }
    workgroupBarrier();
    if (in_tile && scan_pass && seg == 0u) {
        var v = 0.0;
        for (var k = 0u; k < count; k++) {
            let m = seg_maps[lane + k];
            seg_maps[lane + k] = vec2<f32>(v, 0.0);
            v = segment_exit(vec4<f32>(v, m.x, m.y, 0.0));
        }
    }
    workgroupBarrier();
    if (in_tile && scan_pass) {
        rng_init_segment(p.seed_lo, p.seed_hi, p.point_index, rep, seg);
        wait = 0.0;
        prev_service = seg_maps[lane].x;
    }

    // The replay: customers [first, first + n) from the true start,
    // recorded past the warm-up.
    if (in_tile && !all_done && info.end > length) {
        let begin = max(info.begin, length) - length;
        let end = min(info.end - length, n);
        let warm_end = clamp(max(p.warmup, first) - first, begin, max(begin, end));
        for (var i = begin; i < warm_end; i++) {
            let a = next_interarrival(p, lk);
            wait = max((wait + prev_service) * opaque_one - a, 0.0);
            prev_service = work_brought(p, wait, draw_service(p.service));
        }
        for (var i = warm_end; i < end; i++) {
            let a = next_interarrival(p, lk);
            wait = max((wait + prev_service) * opaque_one - a, 0.0);
            let service = draw_service(p.service);
            prev_service = work_brought(p, wait, service);
            rec_request(wait, service, a, late);
        }
    }

    // The sums, in the pass that reaches step 2 length: added up in
    // segment order (as `rec_end_segment` does in turn).
    let sum_pass = info.begin < 2u * length && 2u * length <= info.end;
    if (in_tile && sum_pass) {
        rec_end_segment();
        seg_sums[lane] = rec.done;
        seg_counts[lane] = vec4<u32>(rec.waited, rec.recorded, rng_status, rec.lost);
        seg_maxima[lane] = vec2<f32>(rec.max_wait, rec.max_sojourn);
        seg_exceed[lane] = rec.exceed;
    }
    workgroupBarrier();
    if (in_tile && sum_pass && seg == 0u) {
        var sums = vec4<f32>(0.0);
        var counts = vec4<u32>(0u);
        var maxima = vec2<f32>(0.0);
        var exceed = vec4<u32>(0u);
        for (var k = 0u; k < count; k++) {
            exceed += seg_exceed[lane + k];
            sums = (sums + seg_sums[lane + k]) * opaque_one;
            let c = seg_counts[lane + k];
            counts = vec4<u32>(counts.x + c.x, counts.y + c.y, counts.z | c.z, counts.w + c.w);
            maxima = max(maxima, seg_maxima[lane + k]);
        }
        let result_index = (info.tile_offset + local_tile) * TILE_REPS + rep_in_tile;
        results[result_index] = rec_result(sums, counts.x, counts.y, maxima.x, maxima.y,
                                           counts.z, p.customers, exceed, counts.w);
    } else if (in_tile && !all_done && !sum_pass) {
        state_store(slot, wait, prev_service, 0u);
    }
    if (pass_zeros > 0u) {
        atomicAdd(&tile_hist[0], pass_zeros);
    }
    workgroupBarrier();
    hist_flush(lane, tile.hist_slot);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    opaque_one = f32(min(info.lanes, 1u));
    if (lane == 0u) {
        var count = 1u;
        let local_tile = wg.x + wg.y * info.groups_x;
        if (info.side_by_side == 1u && local_tile < info.tiles) {
            let p = params[tiles[info.tile_offset + local_tile].param_index];
            count = lindley_segments(p);
        }
        tile_segments = count;
    }
    let count = workgroupUniformLoad(&tile_segments);
    if (count > 1u) {
        run_segments_tile(wg, lane, count);
    } else {
        run_tile(wg, lane);
    }
}
