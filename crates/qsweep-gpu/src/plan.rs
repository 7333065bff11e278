//! Planning a batch: which points the GPU can take, the order its tiles run
//! in, how they are cut into dispatches and passes, and the buffer sizes
//! that follow.
//!
//! Dispatches are sized by memory alone: a batch's tiles are grouped by
//! pipeline ([`Specialization`]) and, within it, by queue size, and every
//! tile of a group runs in ONE dispatch whenever its buffers fit the
//! adapter's limits (`max_storage_buffer_binding_size`, `max_buffer_size`,
//! at most [`MAX_BINDING_BYTES`]) and 65535 × 65535 workgroups; only memory
//! splits a group. So all of a group's replications are in flight at once,
//! which is what fills a large GPU (an H200 holds 132 SMs × 2048 threads).
//!
//! Each dispatch runs in passes of customers `[begin, end)` (the kernels save
//! a replication's state between passes, so the numbers do not depend on how
//! passes are cut; where one-server segments run side by side, of steps:
//! [`SegmentLayout`]). [`PassLength`] says how long a pass is: on a software
//! adapter (lavapipe) [`pass_customers`], which keeps every invocation under
//! [`LOOP_BUDGET`]; on hardware about [`TARGET_PASS_SECONDS`] of device time,
//! from the pipeline's fitted pass times ([`PassRates`]).
//!
//! [`TARGET_PASS_SECONDS`]: super::pass_rates::TARGET_PASS_SECONDS
//! [`PassLength`]: super::pass_rates::PassLength
//! [`PassRates`]: super::pass_rates::PassRates

use anyhow::{bail, Result};

use super::layout::LANE_STATE_BYTES;
#[cfg(test)]
use super::pass_rates::PassRates;
use super::pipelines::{Specialization, COOPERATIVE_MIN_SERVERS, FAST_HEAP_MAX_SERVERS};
use qsweep_core::contract::costs::{cooperative_loop_cost_per_customer, loop_cost_per_customer};
use qsweep_core::contract::{
    dispatch, Kernel, PointParams, RepResult, Tile, HIST_BINS, HIST_WORDS_PER_BIN, TILE_REPS,
};
use qsweep_core::engine::Batch;
use qsweep_core::engine::HARDWARE_CALL_REPS;

/// Servers in one Kiefer–Wolfowitz queue on the GPU, at most (its heap
/// loops run over all servers; the CPU engine has no such limit).
pub const MAX_GPU_SERVERS: u32 = 65_535;

pub(super) const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Largest buffer one batch binds, whatever the adapter allows: the
/// adapter's `max_storage_buffer_binding_size` up to 4 GiB (what Vulkan's
/// `maxStorageBufferRange` reaches on discrete GPUs; the kernels index
/// words with u32, 16 GiB). Adapters with a large `max_buffer_size` (a
/// discrete GPU reports its whole memory) would otherwise let one batch of
/// wide Kiefer–Wolfowitz queues take it all (65535 servers × 65536
/// replications is 17 GB of heaps). It was 1 GiB, which held the dispatch
/// kernel (jsq, pod, jiq, lwl, routers) to a fraction of a large GPU, in
/// many dispatches one after another.
pub const MAX_BINDING_BYTES: u64 = u32::MAX as u64;

/// Loop iterations one invocation may spend per pass. llvmpipe/lavapipe
/// (Mesa's `LP_MAX_TGSI_LOOP_ITERATIONS`) silently ends every loop once an
/// invocation has run 65535 iterations in total, so replications are run in
/// passes of a bounded number of customers, their state saved in between.
/// Only software adapters cut passes this way ([`PassLength::LoopBudget`]).
pub const LOOP_BUDGET: u64 = 48_000;

/// Customers per pass for a point run one invocation per replication:
/// within [`LOOP_BUDGET`] after the first pass's set-up loops (stream,
/// histogram, heap initialisation). [`SegmentLayout::pass_customers`] is
/// the same for any layout.
pub fn pass_customers(p: &PointParams) -> u32 {
    SegmentLayout::InTurn.pass_customers(p)
}

/// Replications of large central queues in a batch up to which a hardware
/// adapter runs each over a whole workgroup rather than one invocation: a
/// sixty-fourth of [`HARDWARE_CALL_REPS`] (about the threads an H200 keeps
/// resident), so the cooperative layout's [`TILE_REPS`] invocations per
/// replication (each drawing the replication's stream, so they agree
/// without talking) stay within what the device holds at once. The default
/// study's 4096 (8 queues of 75 to 4000 servers × 512) fill an H200 so,
/// each replication's share of servers in workgroup memory, where one
/// invocation each would occupy 2% of it, sifting 16 MB of heaps in storage memory.
pub const COOPERATIVE_MAX_REPS: u64 = HARDWARE_CALL_REPS / TILE_REPS as u64;

/// Whether `p` is a central queue that a workgroup may run cooperatively:
/// at least [`COOPERATIVE_MIN_SERVERS`] servers, and no capacity (a limited
/// queue's ring of start times stays with the one-invocation kernel).
pub fn cooperative_candidate(p: &PointParams) -> bool {
    p.kernel() == Kernel::KieferWolfowitz && !p.limited() && p.servers >= COOPERATIVE_MIN_SERVERS
}

/// Refuse the points the GPU kernels cannot run (the CPU engine can): on a
/// software adapter, whose loop cap ([`LOOP_BUDGET`]) a pass cannot exceed,
/// a dispatch policy whose one customer loops more than that (a hardware
/// adapter has no such cap: its passes are timed, one customer at least).
pub(super) fn check_gpu_limits(params: &[PointParams], software: bool) -> Result<()> {
    for p in params {
        if software
            && p.kernel() == Kernel::Dispatch
            && loop_cost_per_customer(p) + 200 > LOOP_BUDGET
        {
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

/// Customers per replication in one pass, at most: a workgroup's tile
/// histogram (`tile_hist` in common.wgsl) holds a pass's counts of its
/// [`TILE_REPS`] replications in u32 bins, so a pass stays under 2^32 / 64
/// customers per replication.
pub const MAX_PASS_CUSTOMERS: u32 = u32::MAX / TILE_REPS;

/// Replications of one-server points in a batch from which a hardware
/// adapter runs their segments in turn rather than side by side: a quarter
/// of the threads an H200 keeps resident (132 SMs × 2048), so a batch this
/// large fills most GPUs without the side-by-side layout's second set of
/// draws, and a smaller one gains up to [`MAX_SEGMENTS`] times the
/// invocations for it.
///
/// [`MAX_SEGMENTS`]: qsweep_core::contract::MAX_SEGMENTS
pub const SIDE_BY_SIDE_BELOW_REPS: u64 = 1 << 16;

/// How replications that can spread over several invocations run on the
/// device: a one-server replication's segments ([`Segments`]), a large
/// central queue's servers ([`cooperative_candidate`]). The numbers are the
/// same to the bit either way.
///
/// [`Segments`]: qsweep_core::contract::Segments
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentLayout {
    /// One invocation per replication, its segments in turn, its heap
    /// sifted alone: no extra work, the parallelism of the replications
    /// alone. What a software adapter runs (its few cores are full with any
    /// batch).
    InTurn,
    /// Side by side: one invocation per segment, scanned in workgroup
    /// memory (twice the draws, a replication's time divided by its
    /// segments, workgroups full of a few replications' segments); a large
    /// central queue's servers dealt to a workgroup's [`TILE_REPS`] lanes,
    /// which find the earliest free one together (every lane draws the
    /// stream, one records). What a hardware adapter runs for batches
    /// below [`SIDE_BY_SIDE_BELOW_REPS`] one-server replications and
    /// up to [`COOPERATIVE_MAX_REPS`] large central queues' replications.
    SideBySide,
}

impl SegmentLayout {
    /// The layout of `batch`'s one-server segments on an adapter with
    /// `limits`: side by side on hardware while the batch's one-server
    /// replications leave the device mostly idle, and while the split
    /// tiles' results (a workgroup's [`TILE_REPS`] slots for its few
    /// replications) fit one binding.
    pub fn for_batch(batch: &Batch, software: bool, limits: &wgpu::Limits) -> Self {
        let one_server_reps = reps_where(batch, |p| p.segments().count > 1);
        if software || one_server_reps >= SIDE_BY_SIDE_BELOW_REPS {
            return Self::InTurn;
        }
        let side_by_side = Layouts {
            segments: Self::SideBySide,
            central: Self::InTurn,
        };
        if side_by_side.results_bytes(batch) > limits.max_storage_buffer_binding_size {
            Self::InTurn
        } else {
            Self::SideBySide
        }
    }

    /// Invocations one replication of `p` runs on in this layout.
    pub fn invocations_per_rep(self, p: &PointParams) -> u32 {
        match (self, p.kernel()) {
            (Self::InTurn, _) => 1,
            (Self::SideBySide, Kernel::Lindley) => p.segments().count.max(1),
            (Self::SideBySide, Kernel::KieferWolfowitz) if cooperative_candidate(p) => TILE_REPS,
            (Self::SideBySide, _) => 1,
        }
    }

    /// Whether `p` is a central queue whose replications each run on a
    /// whole workgroup in this layout.
    pub fn cooperative(self, p: &PointParams) -> bool {
        self == Self::SideBySide && cooperative_candidate(p)
    }

    /// Whether `p`'s replications spread over several invocations in this
    /// layout.
    pub fn side_by_side(self, p: &PointParams) -> bool {
        self.invocations_per_rep(p) > 1
    }

    /// Steps of one invocation over a replication of `p` (the unit of a
    /// pass's `[begin, end)`): its customers, or for one-server segments
    /// side by side twice a segment (the map, then the replay).
    pub fn steps(self, p: &PointParams) -> u32 {
        if self.side_by_side(p) && p.kernel() == Kernel::Lindley {
            p.segments().length.saturating_mul(2)
        } else {
            p.warmup.saturating_add(p.customers)
        }
    }

    /// Replications of `p` one workgroup holds: all the invocations of
    /// each.
    pub fn reps_per_tile(self, p: &PointParams) -> u32 {
        TILE_REPS / self.invocations_per_rep(p)
    }

    /// Rows of `p`'s replications in binding 6 (Kiefer–Wolfowitz): a
    /// replication's heap slots ([`PointParams::heap_slots`]), or, run
    /// cooperatively, one lane's share of its servers.
    pub fn heap_rows(self, p: &PointParams) -> u32 {
        if self.cooperative(p) {
            p.servers.div_ceil(TILE_REPS)
        } else {
            p.heap_slots()
        }
    }

    /// Loop iterations per customer of `p`'s invocations in this layout.
    pub fn loop_cost(self, p: &PointParams) -> u64 {
        if self.cooperative(p) {
            cooperative_loop_cost_per_customer(p)
        } else {
            loop_cost_per_customer(p)
        }
    }

    /// Customers per pass for `p` in this layout: within [`LOOP_BUDGET`]
    /// after the first pass's set-up loops (stream, histogram, heap
    /// initialisation).
    pub fn pass_customers(self, p: &PointParams) -> u32 {
        let setup = 200
            + if p.kernel() == Kernel::KieferWolfowitz {
                u64::from(p.heap_slots())
            } else {
                0
            };
        let budget = LOOP_BUDGET.saturating_sub(setup).max(1);
        (budget / self.loop_cost(p)).clamp(1, u64::from(u32::MAX)) as u32
    }
}

/// Replications of `batch`'s tiles whose point `pred` holds for.
fn reps_where(batch: &Batch, pred: impl Fn(&PointParams) -> bool) -> u64 {
    batch
        .tiles
        .iter()
        .filter(|t| pred(&batch.params[t.param_index as usize]))
        .map(|t| u64::from(t.rep_count))
        .sum()
}

// Which pipelines a batch needs is planning (it follows the batch's
// layout), so it lives here; `pipelines` knows one pipeline and imports
// nothing of the plan.
impl Specialization {
    /// Each of `params`' pipeline in one batch ([`Self::of`] for each, but
    /// one Kiefer–Wolfowitz pipeline per laws and thinning, whose fast heap
    /// holds the batch's largest small queue, or where its large queues run
    /// cooperatively (`central`), the largest lane's share of one): the
    /// batch's central queues, small and large, then run side by side in
    /// one dispatch rather than one after another, a dispatch per heap size.
    pub fn for_batch(params: &[PointParams], central: SegmentLayout) -> Vec<Self> {
        let own: Vec<Self> = params
            .iter()
            .map(|p| {
                let rows = central.heap_rows(p);
                if central.cooperative(p) && rows <= FAST_HEAP_MAX_SERVERS {
                    Self {
                        fast_heap: rows.max(8).next_power_of_two(),
                        ..Self::of(p)
                    }
                } else {
                    Self::of(p)
                }
            })
            .collect();
        let mut largest = std::collections::BTreeMap::new();
        for s in &own {
            let f = largest.entry(Self { fast_heap: 0, ..*s }).or_insert(0);
            *f = (*f).max(s.fast_heap);
        }
        own.iter()
            .map(|s| match s.kernel {
                Kernel::KieferWolfowitz => Self {
                    fast_heap: largest[&Self { fast_heap: 0, ..*s }],
                    ..*s
                },
                _ => *s,
            })
            .collect()
    }
}

/// A batch's layouts: of its one-server segments and of its large central
/// queues, each chosen for what it leaves idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layouts {
    pub segments: SegmentLayout,
    pub central: SegmentLayout,
}

impl From<SegmentLayout> for Layouts {
    /// Both kinds in `layout`: what tests and `QSWEEP_SEGMENT_LAYOUT` force.
    fn from(layout: SegmentLayout) -> Self {
        Self {
            segments: layout,
            central: layout,
        }
    }
}

impl Layouts {
    /// The layouts for `batch` on an adapter with `limits`: one-server
    /// segments as [`SegmentLayout::for_batch`] says; large central queues
    /// cooperative on hardware while the batch has at most
    /// [`COOPERATIVE_MAX_REPS`] of their replications, and while every
    /// split tile's results fit one binding.
    pub fn for_batch(batch: &Batch, software: bool, limits: &wgpu::Limits) -> Self {
        let segments = SegmentLayout::for_batch(batch, software, limits);
        let large_central_reps = reps_where(batch, cooperative_candidate);
        let cooperative = Self {
            segments,
            central: SegmentLayout::SideBySide,
        };
        let central = if !software
            && large_central_reps > 0
            && large_central_reps <= COOPERATIVE_MAX_REPS
            && cooperative.results_bytes(batch) <= limits.max_storage_buffer_binding_size
        {
            SegmentLayout::SideBySide
        } else {
            SegmentLayout::InTurn
        };
        Self { segments, central }
    }

    /// The layout of `kernel`'s replications.
    pub fn of(self, kernel: Kernel) -> SegmentLayout {
        match kernel {
            Kernel::Lindley => self.segments,
            Kernel::KieferWolfowitz => self.central,
            Kernel::Dispatch => SegmentLayout::InTurn,
        }
    }

    /// The layout of `p`'s replications.
    pub fn for_point(self, p: &PointParams) -> SegmentLayout {
        self.of(p.kernel())
    }

    /// Bytes of `batch`'s results with its tiles split as these layouts
    /// say: a workgroup's [`TILE_REPS`] slots for each split tile.
    fn results_bytes(self, batch: &Batch) -> u64 {
        let split_tiles: u64 = batch
            .tiles
            .iter()
            .map(|t| {
                let p = &batch.params[t.param_index as usize];
                u64::from(t.rep_count.div_ceil(self.for_point(p).reps_per_tile(p)))
            })
            .sum();
        split_tiles * u64::from(TILE_REPS) * std::mem::size_of::<RepResult>() as u64
    }
}

/// Tiles of one pipeline that run together, pass by pass.
pub(super) struct DispatchPlan {
    pub spec: Specialization,
    pub tile_offset: u32,
    pub tiles: u32,
    /// Largest queue size among the tiles (heap rows, Kiefer–Wolfowitz only).
    pub max_servers: u32,
    /// Largest per-replication state among the tiles (words, dispatch only).
    pub max_words: u64,
    /// Customers per pass under [`LOOP_BUDGET`] (the smallest
    /// [`pass_customers`] over the tiles' points).
    pub loop_budget_pass: u32,
    /// Loop iterations per customer (the largest
    /// [`loop_cost_per_customer`] over the tiles' points), which scales the
    /// pipeline's fitted pass time to this dispatch.
    pub cost: u64,
    /// Most steps among the tiles' replications ([`SegmentLayout::steps`]:
    /// customers, warm-up included, unless segments run side by side).
    pub max_total: u32,
    /// How the tiles' replications run (their kernel's layout: segments
    /// or servers side by side, or one invocation each).
    pub layout: SegmentLayout,
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

    /// Invocations the dispatch launches (whole workgroups of `TILE_REPS`).
    pub fn invocations(&self) -> u64 {
        let (x, y) = self.workgroups();
        u64::from(x) * u64::from(y) * u64::from(TILE_REPS)
    }
}

/// How a batch runs on the device, and the sizes of the buffers it needs.
pub(super) struct BatchPlan {
    /// `order[pos]`: the index in `batch.tiles` of the tile run at `pos`
    /// (several consecutive positions where the layout splits a tile so
    /// that a workgroup holds all of its replications' segments).
    pub order: Vec<usize>,
    /// The batch's tiles in that order, split where `order` says.
    pub tiles: Vec<Tile>,
    pub dispatches: Vec<DispatchPlan>,
    /// Bytes of the results: one [`RepResult`] per lane of every tile.
    pub results_bytes: u64,
    /// Words of the histograms: `slots × HIST_BINS × HIST_WORDS_PER_BIN`.
    pub hist_words: u64,
    /// Bytes of binding 6, enough for any dispatch (at least 4).
    pub heap_bytes: u64,
    /// Replications in the largest dispatch (rows of the lane state).
    pub max_lanes: u64,
}

impl BatchPlan {
    pub fn new(batch: &Batch, limits: &wgpu::Limits, layouts: impl Into<Layouts>) -> Result<Self> {
        let layouts = layouts.into();
        // Group tiles by pipeline, then by queue size, so each dispatch is
        // uniform and a split by memory falls between queue sizes.
        let specs = Specialization::for_batch(batch.params, layouts.central);
        let mut sorted: Vec<usize> = (0..batch.tiles.len()).collect();
        let key = |i: usize| {
            let index = batch.tiles[i].param_index as usize;
            (specs[index], batch.params[index].servers)
        };
        sorted.sort_by_key(|&i| key(i));
        let (mut order, mut tiles) = (Vec::new(), Vec::new());
        for i in sorted {
            let tile = batch.tiles[i];
            let p = &batch.params[tile.param_index as usize];
            let per_tile = layouts.for_point(p).reps_per_tile(p);
            let mut start = 0;
            while start < tile.rep_count {
                let count = per_tile.min(tile.rep_count - start);
                order.push(i);
                tiles.push(Tile {
                    rep_start: tile.rep_start + start,
                    rep_count: count,
                    ..tile
                });
                start += count;
            }
        }

        let results_bytes =
            (tiles.len() as u64) * u64::from(TILE_REPS) * std::mem::size_of::<RepResult>() as u64;
        let hist_words =
            u64::from(batch.slots) * u64::from(HIST_BINS) * u64::from(HIST_WORDS_PER_BIN);
        let max_binding = limits.max_storage_buffer_binding_size;
        if results_bytes > max_binding || hist_words * 4 > max_binding {
            bail!("batch too large for one binding ({results_bytes} bytes of results)");
        }
        let mem_budget = max_binding
            .min(limits.max_buffer_size)
            .min(MAX_BINDING_BYTES);
        let dispatches = plan_dispatches(batch.params, &specs, &tiles, mem_budget, layouts)?;
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

    /// Passes the plan takes with `rates` held fixed (no new measurement).
    #[cfg(test)]
    pub fn passes(&self, rates: &PassRates) -> u64 {
        self.dispatches.iter().map(|d| d.passes(rates)).sum()
    }
}

impl DispatchPlan {
    /// Passes the dispatch takes with `rates` held fixed.
    #[cfg(test)]
    pub fn passes(&self, rates: &PassRates) -> u64 {
        let (mut begin, mut n) = (0, 0);
        while begin < self.max_total {
            begin = rates.pass_end(self, begin);
            n += 1;
        }
        n
    }
}

/// Cut `tiles` (grouped by pipeline) into dispatches: all the consecutive
/// tiles of one pipeline in one, unless their heaps or lane states would
/// exceed `mem_budget` bytes (or the workgroup grid would exceed 65535 ×
/// 65535), which starts another.
fn plan_dispatches(
    params: &[PointParams],
    specs: &[Specialization],
    tiles: &[Tile],
    mem_budget: u64,
    layouts: Layouts,
) -> Result<Vec<DispatchPlan>> {
    let mut plans: Vec<DispatchPlan> = Vec::new();
    let mut i = 0usize;
    while i < tiles.len() {
        let spec = specs[tiles[i].param_index as usize];
        let k = spec.kernel;
        let layout = layouts.of(k);
        let mut plan = DispatchPlan {
            spec,
            tile_offset: i as u32,
            tiles: 0,
            max_servers: 0,
            max_words: 0,
            loop_budget_pass: u32::MAX,
            cost: 1,
            max_total: 0,
            layout,
        };
        while i < tiles.len() {
            let p = &params[tiles[i].param_index as usize];
            if specs[tiles[i].param_index as usize] != spec {
                break;
            }
            // Heap rows: the servers' free-at times and, under a capacity,
            // the ring of start times (`PointParams::heap_slots`), or a
            // lane's share of a cooperative queue's servers.
            let servers = plan.max_servers.max(if k == Kernel::KieferWolfowitz {
                layout.heap_rows(p)
            } else {
                p.servers
            });
            let lanes = u64::from(plan.tiles + 1) * u64::from(TILE_REPS);
            let words = if k == Kernel::Dispatch {
                plan.max_words.max(dispatch::state_words(p))
            } else {
                0
            };
            let heap_bytes = heap_bytes(k, lanes, servers, words);
            if plan.tiles > 0
                && (heap_bytes > mem_budget
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
            plan.loop_budget_pass = plan.loop_budget_pass.min(layout.pass_customers(p));
            plan.cost = plan.cost.max(layout.loop_cost(p));
            plan.max_total = plan.max_total.max(layout.steps(p));
            i += 1;
        }
        plans.push(plan);
    }
    Ok(plans)
}
