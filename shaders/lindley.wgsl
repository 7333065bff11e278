// One FIFO server per replication: Lindley's recursion W' = max(0, W + S - A).
// Twin of src/engine/cpu/lindley.rs. One replication per invocation,
// all state in registers within a pass; one workgroup per tile.

// Runs customers [info.begin, info.end) of replication `rep`; its state
// lives in lane_state[slot] between passes. Writes the result on the pass
// that finishes the replication.
fn simulate(p: PointParams, rep: u32, slot: u32, result_index: u32) {
    let total = p.warmup + p.customers;
    if (info.begin >= total) {
        return;
    }
    var wait = 0.0;
    var prev_service = 0.0;
    if (info.begin == 0u) {
        rng_init(p.seed_lo, p.seed_hi, p.point_index, rep);
        rng_status = 0u;
        rec_init(p.inv_hist_scale);
    } else {
        let st = state_load(slot, p.inv_hist_scale);
        wait = st.x;
        prev_service = st.y;
    }
    let lk = ln_keep(p);
    let end = min(info.end, total);
    // Warm-up customers, then recorded ones: no per-customer branch.
    let warm_end = clamp(p.warmup, info.begin, end);
    for (var i = info.begin; i < warm_end; i++) {
        let a = next_interarrival(p, lk);
        wait = max((wait + prev_service) * opaque_one - a, 0.0);
        prev_service = draw_service(p.service);
    }
    for (var i = warm_end; i < end; i++) {
        let a = next_interarrival(p, lk);
        wait = max((wait + prev_service) * opaque_one - a, 0.0);
        prev_service = draw_service(p.service);
        rec_record(wait, prev_service, a);
    }
    if (end == total) {
        results[result_index] = rec_finish(p.customers);
    } else {
        state_store(slot, wait, prev_service, 0u);
    }
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    run_tile(wg, lane);
}
