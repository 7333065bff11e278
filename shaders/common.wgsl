// Declarations shared by every kernel: the engine contract (src/contract.rs,
// field for field), the bindings, and the per-replication recorder (the twin
// of `Recorders` in src/engine/cpu/record.rs). Prepended, with rng.wgsl and
// sampling.wgsl, to each kernel file by src/engine/gpu.rs.

struct Law {
    kind: u32,
    n: u32,
    offset: u32,
    _pad0: u32,
    p: vec4<f32>,
    scale: f32,
    lo: f32,
    hi: f32,
    _pad1: f32,
}

struct PointParams {
    arrival: Law,
    service: Law,
    kernel: u32,
    thinning: u32,
    servers: u32,
    route_n: u32,
    customers: u32,
    warmup: u32,
    seed_lo: u32,
    seed_hi: u32,
    point_index: u32,
    inv_hist_scale: f32,
    choices: u32,
    routers: u32,
}

struct Tile {
    param_index: u32,
    hist_slot: u32,
    rep_start: u32,
    rep_count: u32,
}

struct RepResult {
    mean_wait: f32,
    mean_sojourn: f32,
    p_wait: f32,
    max_wait: f32,
    max_sojourn: f32,
    mean_service: f32,
    mean_interarrival: f32,
    customers: u32,
    status: u32,
}

// Which part of the batch this dispatch covers.
struct DispatchInfo {
    tile_offset: u32,
    tiles: u32,
    groups_x: u32,
    lanes: u32,
    // This pass simulates customers [begin, end) of each replication.
    begin: u32,
    end: u32,
    _pad0: u32,
    _pad1: u32,
}

// A replication's state between passes (see src/engine/gpu.rs: passes keep
// every dispatch short, and under llvmpipe's cap of 65535 loop iterations
// per invocation).
struct LaneState {
    rng: vec4<u32>,
    sums: vec4<f32>,
    carry: vec4<f32>,
    block: vec4<f32>,
    // Kernel variables: Lindley (wait, previous service); Kiefer-Wolfowitz
    // (time since the epoch, customers since the last rebase).
    x: f32,
    y: f32,
    since_rebase: u32,
    status: u32,
    in_block: u32,
    waited: u32,
    recorded: u32,
    max_wait: f32,
    max_sojourn: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// The contract's constants (law kinds, thinning modes, TILE_REPS, SUM_BLOCK,
// the histogram layout) are generated from src/contract.rs and prepended by
// src/engine/gpu.rs, so they cannot drift from the CPU side.

@group(0) @binding(0) var<storage, read> params: array<PointParams>;
@group(0) @binding(1) var<storage, read> tiles: array<Tile>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read_write> results: array<RepResult>;
@group(0) @binding(4) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> info: DispatchInfo;
@group(0) @binding(7) var<storage, read_write> lane_state: array<LaneState>;

// The tile's histograms (waits, then sojourns), merged into `hist` at the end.
var<workgroup> tile_hist: array<atomic<u32>, HIST_SLOT_WORDS>;

// Twin of `contract::hist_bin`. Selects, not early returns: Mesa turns
// each return into masked control flow, which costs more than the whole
// computation.
fn hist_bin(v: f32) -> u32 {
    let bits = bitcast<u32>(v);
    let e = i32((bits >> 23u) & 0xffu) - 127;
    let octave = u32(clamp(e - HIST_MIN_EXP, 0, i32(HIST_OCTAVES) - 1));
    var bin = 2u + octave * HIST_SUB + ((bits >> (23u - HIST_SUB_BITS)) & (HIST_SUB - 1u));
    bin = select(bin, 1u, e < HIST_MIN_EXP);
    bin = select(bin, HIST_OVERFLOW_BIN, e >= HIST_MIN_EXP + i32(HIST_OCTAVES));
    // Also catches -0.0 and negative values; NaN has exponent 128: overflow.
    return select(bin, 0u, v <= 0.0);
}

fn hist_clear(lane: u32) {
    for (var i = lane; i < HIST_SLOT_WORDS; i += TILE_REPS) {
        atomicStore(&tile_hist[i], 0u);
    }
}

fn hist_flush(lane: u32, slot: u32) {
    for (var i = lane; i < HIST_SLOT_WORDS; i += TILE_REPS) {
        let v = atomicLoad(&tile_hist[i]);
        if (v != 0u) {
            atomicAdd(&hist[slot * HIST_SLOT_WORDS + i], v);
        }
    }
}

// Customers between rebases of a queue's free-at times to the current
// arrival (twin of `cpu::rebase_period`; used by the Kiefer-Wolfowitz and
// dispatch kernels).
fn rebase_period(servers: u32) -> u32 {
    return max(servers, 32u);
}

// Per-replication accumulators: f32 block sums folded into Kahan sums.
struct Recorder {
    wait: vec4<f32>,   // Kahan sums: wait, sojourn, service, interarrival
    carry: vec4<f32>,  // their compensations
    block: vec4<f32>,
    in_block: u32,
    waited: u32,
    recorded: u32,
    max_wait: f32,
    max_sojourn: f32,
    inv_scale: f32,
}

var<private> rec: Recorder;

// Zero waits recorded by this invocation in this pass (see rec_record);
// private variables start at zero in every dispatch.
var<private> pass_zeros: u32;

fn rec_init(inv_scale: f32) {
    rec.wait = vec4<f32>(0.0);
    rec.carry = vec4<f32>(0.0);
    rec.block = vec4<f32>(0.0);
    rec.in_block = 0u;
    rec.waited = 0u;
    rec.recorded = 0u;
    rec.max_wait = 0.0;
    rec.max_sojourn = 0.0;
    rec.inv_scale = inv_scale;
}

fn rec_flush() {
    let y = rec.block - rec.carry;
    let t = rec.wait + y;
    rec.carry = (t - rec.wait) - y;
    rec.wait = t;
    rec.block = vec4<f32>(0.0);
    rec.in_block = 0u;
}

fn rec_record(wait: f32, service: f32, interarrival: f32) {
    let sojourn = wait + service;
    rec.block += vec4<f32>(wait, sojourn, service, interarrival);
    rec.waited += select(0u, 1u, wait > 0.0);
    rec.max_wait = max(rec.max_wait, wait);
    rec.max_sojourn = max(rec.max_sojourn, sojourn);
    // Customers who did not wait (often the largest bin) are counted in a
    // register and added to the zero bin once per pass (`run_tile`): an
    // atomic per customer is the kernels' largest cost on a CPU adapter.
    let bin = hist_bin(wait * rec.inv_scale);
    if (bin == 0u) {
        pass_zeros += 1u;
    } else {
        atomicAdd(&tile_hist[bin], 1u);
    }
    rec.recorded += 1u;
    rec.in_block += 1u;
    if (rec.in_block == SUM_BLOCK) {
        rec_flush();
    }
}

fn rec_finish(customers: u32) -> RepResult {
    rec_flush();
    let n = f32(max(customers, 1u));
    var r: RepResult;
    r.mean_wait = rec.wait.x / n;
    r.mean_sojourn = rec.wait.y / n;
    r.p_wait = f32(rec.waited) / n;
    r.max_wait = rec.max_wait;
    r.max_sojourn = rec.max_sojourn;
    r.mean_service = rec.wait.z / n;
    r.mean_interarrival = rec.wait.w / n;
    // What was actually recorded, so the host can check that no replication
    // was cut short.
    r.customers = rec.recorded;
    r.status = rng_status;
    return r;
}

// Save or restore the stream, the recorder and the kernel variables x, y,
// since_rebase of the invocation's replication between passes.
fn state_store(slot: u32, x: f32, y: f32, since_rebase: u32) {
    var st: LaneState;
    st.rng = rng_s;
    st.sums = rec.wait;
    st.carry = rec.carry;
    st.block = rec.block;
    st.x = x;
    st.y = y;
    st.since_rebase = since_rebase;
    st.status = rng_status;
    st.in_block = rec.in_block;
    st.waited = rec.waited;
    st.recorded = rec.recorded;
    st.max_wait = rec.max_wait;
    st.max_sojourn = rec.max_sojourn;
    lane_state[slot] = st;
}

fn state_load(slot: u32, inv_scale: f32) -> LaneState {
    let st = lane_state[slot];
    rng_s = st.rng;
    rng_status = st.status;
    rec.wait = st.sums;
    rec.carry = st.carry;
    rec.block = st.block;
    rec.in_block = st.in_block;
    rec.waited = st.waited;
    rec.recorded = st.recorded;
    rec.max_wait = st.max_wait;
    rec.max_sojourn = st.max_sojourn;
    rec.inv_scale = inv_scale;
    return st;
}

// The body of every kernel's entry point: one workgroup runs one tile, one
// invocation one replication (through the kernel's own `simulate`), and the
// tile's histograms are merged into the slot's at the end of the pass.
fn run_tile(wg: vec3<u32>, lane: u32) {
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
            let global = (info.tile_offset + local_tile) * TILE_REPS + lane;
            simulate(p, tile.rep_start + lane, local_tile * TILE_REPS + lane, global);
            if (pass_zeros > 0u) {
                atomicAdd(&tile_hist[0], pass_zeros);
            }
        }
    }
    workgroupBarrier();
    if (active_tile) {
        hist_flush(lane, slot);
    }
}
