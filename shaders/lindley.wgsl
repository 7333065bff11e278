// One FIFO server per replication: Lindley's recursion W' = max(0, W + S - A).
// Twin of `lindley` in src/engine/cpu.rs. One replication per invocation,
// all state in registers; one workgroup per tile.

fn simulate(p: PointParams, rep: u32) -> RepResult {
    rng_init(p.seed_lo, p.seed_hi, p.point_index, rep);
    rng_status = 0u;
    rec_init(p.inv_hist_scale);
    let lk = ln_keep(p);
    var wait = 0.0;
    var prev_service = 0.0;
    for (var i = 0u; i < p.warmup; i++) {
        let a = next_interarrival(p, lk);
        wait = max(wait + prev_service - a, 0.0);
        prev_service = draw(p.service);
    }
    for (var i = 0u; i < p.customers; i++) {
        let a = next_interarrival(p, lk);
        wait = max(wait + prev_service - a, 0.0);
        prev_service = draw(p.service);
        rec_record(wait, prev_service, a);
    }
    return rec_finish(p.customers);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let local_tile = wg.x + wg.y * info.groups_x;
    hist_clear(lane);
    workgroupBarrier();
    let active_tile = local_tile < info.tiles;
    var slot = 0u;
    if (active_tile) {
        let tile = tiles[info.tile_offset + local_tile];
        slot = tile.hist_slot;
        if (lane < tile.rep_count) {
            let p = params[tile.param_index];
            results[(info.tile_offset + local_tile) * TILE_REPS + lane] = simulate(p, tile.rep_start + lane);
        }
    }
    workgroupBarrier();
    if (active_tile) {
        hist_flush(lane, slot);
    }
}
