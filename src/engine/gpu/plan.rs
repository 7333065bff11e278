//! Planning a batch: which points the GPU can take, the order its tiles run
//! in, how they are cut into dispatches and passes, and the buffer sizes
//! that follows.
//!
//! A batch's tiles are grouped by pipeline and queue size, then cut into
//! dispatches of consecutive tiles sized from each kernel's measured
//! throughput ([`KernelRates`]) so that one pass takes about
//! [`TARGET_DISPATCH_SECONDS`] (far from any OS watchdog), within the
//! adapter's buffer limits and 65535 workgroups per dimension. Each
//! dispatch runs in passes of at most [`pass_customers`] customers, which
//! keeps every invocation under [`LOOP_BUDGET`].

use anyhow::{bail, Result};

use super::layout::LANE_STATE_BYTES;
use super::Specialization;
use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{dispatch, Kernel, PointParams, RepResult, Tile, HIST_BINS, TILE_REPS};
use crate::engine::Batch;

/// Servers in one Kiefer–Wolfowitz queue on the GPU, at most (its heap
/// loops run over all servers; the CPU engine has no such limit).
pub const MAX_GPU_SERVERS: u32 = 65_535;

/// Wall time one dispatch should take.
pub const TARGET_DISPATCH_SECONDS: f64 = 0.1;
/// Throughput assumed before the first measurement (customers/s).
const INITIAL_RATE: f64 = 2e7;
pub(super) const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Loop iterations one invocation may spend per pass. llvmpipe/lavapipe
/// (Mesa's `LP_MAX_TGSI_LOOP_ITERATIONS`) silently ends every loop once an
/// invocation has run 65535 iterations in total, so replications are run in
/// passes of a bounded number of customers, their state saved in between.
/// Short passes also keep every dispatch far from OS GPU watchdogs.
pub const LOOP_BUDGET: u64 = 48_000;

/// Customers per pass for a point: within [`LOOP_BUDGET`] after the first
/// pass's set-up loops (stream, histogram, heap initialisation).
pub fn pass_customers(p: &PointParams) -> u32 {
    let setup = 200
        + if p.kernel() == Kernel::KieferWolfowitz {
            u64::from(p.servers)
        } else {
            0
        };
    let budget = LOOP_BUDGET.saturating_sub(setup).max(1);
    (budget / loop_cost_per_customer(p)).clamp(1, u64::from(u32::MAX)) as u32
}

/// Refuse the points the GPU kernels cannot run (the CPU engine can).
pub(super) fn check_gpu_limits(params: &[PointParams]) -> Result<()> {
    for p in params {
        if p.kernel() == Kernel::Dispatch && loop_cost_per_customer(p) + 200 > LOOP_BUDGET {
            bail!(
                "grid point {}: one customer of dispatch policy {} with {} servers takes more \
                 loop iterations than a GPU pass allows (use --backend cpu)",
                p.point_index,
                p.route_n,
                p.servers
            );
        }
        if p.kernel() == Kernel::KieferWolfowitz && p.servers > MAX_GPU_SERVERS {
            bail!(
                "grid point {}: {} servers in one queue exceeds the GPU kernels' {MAX_GPU_SERVERS} (use --backend cpu)",
                p.point_index,
                p.servers
            );
        }
    }
    Ok(())
}

/// Measured throughput of each kernel on this device (customers/s), which
/// sizes later dispatches.
pub(super) struct KernelRates([f64; Kernel::ALL.len()]);

impl KernelRates {
    pub fn new() -> Self {
        Self([INITIAL_RATE; Kernel::ALL.len()])
    }

    fn of(&self, kernel: Kernel) -> f64 {
        self.0[kernel as usize]
    }

    /// Account for a pass of `kernel` that simulated `work` customers in
    /// `seconds`: track the measured rate, never growing more than 4x at once.
    pub fn record(&mut self, kernel: Kernel, work: f64, seconds: f64) {
        if seconds > 0.0 {
            let r = &mut self.0[kernel as usize];
            *r = (work / seconds).min(*r * 4.0);
        }
    }
}

/// Tiles of one kernel and queue size that run together, pass by pass.
pub(super) struct DispatchPlan {
    pub spec: Specialization,
    pub tile_offset: u32,
    pub tiles: u32,
    /// Largest queue size among the tiles (heap rows, Kiefer–Wolfowitz only).
    pub max_servers: u32,
    /// Largest per-replication state among the tiles (words, dispatch only).
    pub max_words: u64,
    /// Customers per pass (the smallest over the tiles' points).
    pub pass: u32,
    /// Longest replication (warm-up included) among the tiles.
    pub max_total: u32,
}

/// Bytes of binding 6 for `lanes` replications of `kernel`: the
/// Kiefer–Wolfowitz heaps (`servers` rows) or the dispatch kernel's state
/// (`words` per replication).
fn heap_bytes(kernel: Kernel, lanes: u64, servers: u32, words: u64) -> u64 {
    match kernel {
        Kernel::KieferWolfowitz => lanes * u64::from(servers) * 4,
        Kernel::Dispatch => lanes * words * 4,
        Kernel::Lindley => 0,
    }
}

impl DispatchPlan {
    /// Replications in the dispatch.
    pub fn lanes(&self) -> u64 {
        u64::from(self.tiles) * u64::from(TILE_REPS)
    }

    /// Bytes of binding 6 the dispatch uses.
    pub fn heap_bytes(&self) -> u64 {
        heap_bytes(
            self.spec.kernel,
            self.lanes(),
            self.max_servers,
            self.max_words,
        )
    }

    /// Workgroups along x and y: one per tile, at most 65535 along x.
    pub fn workgroups(&self) -> (u32, u32) {
        let groups_x = self.tiles.min(MAX_GROUPS_PER_DIM);
        (groups_x, self.tiles.div_ceil(groups_x))
    }
}

/// How a batch runs on the device, and the sizes of the buffers it needs.
pub(super) struct BatchPlan {
    /// `order[pos]`: the index in `batch.tiles` of the tile run at `pos`.
    pub order: Vec<usize>,
    /// The batch's tiles in that order.
    pub tiles: Vec<Tile>,
    pub dispatches: Vec<DispatchPlan>,
    /// Bytes of the results: one [`RepResult`] per lane of every tile.
    pub results_bytes: u64,
    /// Words of the histograms: `slots × HIST_BINS`.
    pub hist_words: u64,
    /// Bytes of binding 6, enough for any dispatch (at least 4).
    pub heap_bytes: u64,
    /// Replications in the largest dispatch (rows of the lane state).
    pub max_lanes: u64,
}

impl BatchPlan {
    pub fn new(batch: &Batch, limits: &wgpu::Limits, rates: &KernelRates) -> Result<Self> {
        // Group tiles by pipeline, then by queue size, so each dispatch is uniform.
        let mut order: Vec<usize> = (0..batch.tiles.len()).collect();
        let key = |i: usize| {
            let p = &batch.params[batch.tiles[i].param_index as usize];
            (Specialization::of(p), p.servers)
        };
        order.sort_by_key(|&i| key(i));
        let tiles: Vec<_> = order.iter().map(|&i| batch.tiles[i]).collect();

        let results_bytes =
            (tiles.len() as u64) * u64::from(TILE_REPS) * std::mem::size_of::<RepResult>() as u64;
        let hist_words = u64::from(batch.slots) * u64::from(HIST_BINS);
        let max_binding = limits.max_storage_buffer_binding_size;
        if results_bytes > max_binding || hist_words * 4 > max_binding {
            bail!("batch too large for one binding ({results_bytes} bytes of results)");
        }
        let mem_budget = max_binding.min(limits.max_buffer_size).min(1 << 30);
        let dispatches = plan_dispatches(batch.params, &tiles, mem_budget, rates)?;
        let max_lanes = dispatches
            .iter()
            .map(DispatchPlan::lanes)
            .max()
            .unwrap_or(1);
        let heap_bytes = dispatches
            .iter()
            .map(DispatchPlan::heap_bytes)
            .max()
            .unwrap_or(4)
            .max(4);
        Ok(Self {
            order,
            tiles,
            dispatches,
            results_bytes,
            hist_words,
            heap_bytes,
            max_lanes,
        })
    }
}

/// Cut `tiles` (grouped by pipeline) into dispatches of consecutive tiles
/// of one pipeline, within `mem_budget` bytes per buffer and sized so that
/// one pass takes about [`TARGET_DISPATCH_SECONDS`].
fn plan_dispatches(
    params: &[PointParams],
    tiles: &[Tile],
    mem_budget: u64,
    rates: &KernelRates,
) -> Result<Vec<DispatchPlan>> {
    let mut plans: Vec<DispatchPlan> = Vec::new();
    let mut i = 0usize;
    while i < tiles.len() {
        let spec = Specialization::of(&params[tiles[i].param_index as usize]);
        let k = spec.kernel;
        let target = rates.of(k) * TARGET_DISPATCH_SECONDS;
        let mut plan = DispatchPlan {
            spec,
            tile_offset: i as u32,
            tiles: 0,
            max_servers: 0,
            max_words: 0,
            pass: u32::MAX,
            max_total: 0,
        };
        while i < tiles.len() {
            let p = &params[tiles[i].param_index as usize];
            if Specialization::of(p) != spec {
                break;
            }
            let servers = plan.max_servers.max(p.servers);
            let pass = plan.pass.min(pass_customers(p));
            let lanes = u64::from(plan.tiles + 1) * u64::from(TILE_REPS);
            let words = if k == Kernel::Dispatch {
                plan.max_words.max(dispatch::state_words(p))
            } else {
                0
            };
            let heap_bytes = heap_bytes(k, lanes, servers, words);
            let pass_work = lanes as f64 * f64::from(pass);
            if plan.tiles > 0
                && (pass_work > target
                    || heap_bytes > mem_budget
                    || lanes * LANE_STATE_BYTES > mem_budget
                    || plan.tiles + 1 > MAX_GROUPS_PER_DIM * MAX_GROUPS_PER_DIM)
            {
                break;
            }
            if heap_bytes > mem_budget && k == Kernel::Dispatch {
                bail!(
                    "grid point {}: {} servers and {} routers need {heap_bytes} bytes of \
                     dispatch state per tile, over the adapter's {mem_budget} (use --backend cpu)",
                    p.point_index,
                    p.servers,
                    p.routers.max(1)
                );
            }
            if heap_bytes > mem_budget {
                bail!(
                    "grid point {}: a central queue of {} servers needs {heap_bytes} bytes of heap per tile, over the adapter's {mem_budget}",
                    p.point_index,
                    p.servers
                );
            }
            plan.tiles += 1;
            plan.max_servers = servers;
            plan.max_words = words;
            plan.pass = pass;
            plan.max_total = plan.max_total.max(p.warmup + p.customers);
            i += 1;
        }
        plans.push(plan);
    }
    Ok(plans)
}
