//! Engines: the CPU reference (`cpu`, each file the twin of a kernel in
//! `shaders/`) here, and the WGSL kernels on wgpu in their own crate
//! (`qsweep-gpu`, so that this crate builds without the GPU stack).
//!
//! Both implement [`Engine`]: a [`Batch`] of points and tiles in, a
//! [`BatchOutput`] of per-replication results and one wait histogram per
//! slot out.
//! `schedule` turns grid points into tiles; `stats` reads the output;
//! `qsweep_gpu::opcount` estimates a kernel's operations per customer for
//! `qsweep bench`.
//!
//! A call can be watched ([`Engine::run_watched`]): a [`Watch`] carries a
//! stop flag, which the CPU engine checks every [`Watch::EVERY`] customers
//! inside each replication and the GPU engine between passes, so even one
//! enormous replication stops within milliseconds (the call then fails with
//! [`Cancelled`] and its unfinished replications are dropped), and a counter
//! of customers simulated, which the progress display reads while the call
//! runs. Finished tiles are handed over as [`TileDone`]s: by the CPU engine
//! as each finishes, so a long call still writes rows as points complete.

pub mod cpu;
pub mod schedule;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{PointParams, RepResult, Tile, HIST_BINS};

/// Longest a single measured engine call or dispatch should take (`qsweep
/// bench`, the peak measurement): far below OS GPU watchdogs (about 2 s on
/// Windows), long enough to amortise a call's set-up.
pub const MAX_CALL_SECONDS: f64 = 0.25;

/// How the run loop (`run::rounds`) sizes an engine's calls: what the
/// engine knows of its own speed and of what one call can hold. The CPU
/// engine takes the defaults; a GPU says how many replications fill it and
/// what its bindings hold, so that calls are made device-sized and split
/// before they are made, never by an engine's refusal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallSizing {
    /// Work rate (loop iterations per second) the first call is sized by,
    /// before any call of this run is measured: a calibration's or an
    /// earlier run's on this engine. `None`: the run loop's deliberately
    /// low `INITIAL_RATE`.
    pub expected_rate: Option<f64>,
    /// Replications a call holds at least, where the window has them (and
    /// within `run::rounds::FILL_CALLS` calls' time): fewer leave a GPU
    /// partly idle, and its measured rate is then not the device's.
    pub fill_reps: u64,
    /// Replications a call holds at most (their results are held on the
    /// host).
    pub max_reps: u64,
    /// Tiles a call holds at most (a GPU's results in one binding).
    pub max_tiles: u64,
    /// Histogram slots a call holds at most (a GPU's histograms in one
    /// binding).
    pub max_slots: u64,
}

impl Default for CallSizing {
    fn default() -> Self {
        Self {
            expected_rate: None,
            fill_reps: 0,
            max_reps: DEFAULT_MAX_CALL_REPS,
            max_tiles: u64::MAX,
            max_slots: u64::MAX,
        }
    }
}

/// Replications in one engine call, at most, unless the engine says
/// otherwise ([`CallSizing::max_reps`]).
pub const DEFAULT_MAX_CALL_REPS: u64 = 1 << 16;

/// Replications a call to a hardware adapter holds at least, where a run
/// has them ([`CallSizing::fill_reps`]), and at most: about the threads a
/// large discrete GPU keeps resident (an H200: 132 SMs × 2048 = 270,336),
/// so that one call puts every replication of a pipeline group in flight
/// at once (one dispatch per group, see `qsweep_gpu`'s `plan`). Its
/// results on the host are 2^18 × 40 bytes (10 MiB), three times over.
pub const HARDWARE_CALL_REPS: u64 = 1 << 18;

/// Work for one engine call.
pub struct Batch<'a> {
    pub params: &'a [PointParams],
    pub tiles: &'a [Tile],
    /// Shared table of empirical-law values (at least one element).
    pub table: &'a [f32],
    /// Number of histogram slots the tiles refer to (a tile writes its
    /// point's `hist_span()` slots from its `hist_slot` on).
    pub slots: u32,
}

impl Batch<'_> {
    pub fn total_reps(&self) -> usize {
        self.tiles.iter().map(|t| t.rep_count as usize).sum()
    }
}

/// What an engine returns for a [`Batch`].
#[derive(Clone, Debug, PartialEq)]
pub struct BatchOutput {
    /// One result per replication, tile after tile, in tile order.
    pub reps: Vec<RepResult>,
    /// `slots × HIST_BINS` counts of waits.
    pub hist: Vec<u64>,
}

impl BatchOutput {
    pub fn empty(slots: u32, reps: usize) -> Self {
        Self {
            reps: Vec::with_capacity(reps),
            hist: vec![0; hist_len(slots)],
        }
    }
}

pub fn hist_len(slots: u32) -> usize {
    slots as usize * HIST_BINS as usize
}

/// What an engine call watches while it runs (see the module notes).
#[derive(Clone, Copy)]
pub struct Watch<'a> {
    /// Set to stop the call (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Customers simulated so far (warm-up included), added as the call
    /// goes; for progress only.
    pub customers: &'a AtomicU64,
}

impl Watch<'static> {
    /// A watch that never stops and whose count nobody reads.
    pub fn none() -> Watch<'static> {
        static NEVER: AtomicBool = AtomicBool::new(false);
        static COUNT: AtomicU64 = AtomicU64::new(0);
        Watch {
            stop: &NEVER,
            customers: &COUNT,
        }
    }
}

impl Watch<'_> {
    /// Customers a replication loop simulates between two checks of the
    /// flag: about a millisecond of work for the cheapest kernel, and one
    /// relaxed load and add per check, invisible beside the customers'
    /// random draws.
    pub const EVERY: u32 = 4096;

    /// Counts `customers` more simulated; whether to stop.
    #[inline]
    pub fn tick(&self, customers: u64) -> bool {
        self.customers.fetch_add(customers, Ordering::Relaxed);
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether the call was asked to stop.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// An engine call stopped by its [`Watch`]: its unfinished replications
/// are dropped (the tiles handed over before it stand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the engine call was stopped")]
pub struct Cancelled;

/// One finished tile of a watched call.
pub struct TileDone<'a> {
    /// Its index in `batch.tiles`.
    pub tile: usize,
    /// Its replications' results, in replication order.
    pub reps: &'a [RepResult],
    /// Wait counts to add to the tile's histogram slots (`HIST_BINS` for
    /// each of its point's `hist_span()` sections, one after the other), or
    /// empty: an engine that returns whole slots hands a slot's counts over
    /// with its first tile.
    pub hist: &'a [u64],
    /// Engine seconds spent on the tile: its share of the call's time,
    /// from the engine's own measurement where it has one.
    pub seconds: f64,
}

/// A simulation backend.
pub trait Engine {
    /// What the CSV's `backend` column says (e.g. `cpu`, `vulkan:llvmpipe (LLVM 15.0.7, 256 bits)`).
    fn label(&self) -> String;
    fn run(&mut self, batch: &Batch) -> anyhow::Result<BatchOutput>;

    /// [`Engine::run`], watched: hands each finished tile to `done` on the
    /// calling thread (all at the end unless [`Engine::streams`]), counts
    /// customers into `watch.customers`, and fails with [`Cancelled`] soon
    /// after `watch.stop` is set. An error from `done` ends the call and is
    /// returned as it is.
    fn run_watched(
        &mut self,
        batch: &Batch,
        watch: Watch<'_>,
        done: &mut dyn FnMut(TileDone<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if watch.stopped() {
            return Err(Cancelled.into());
        }
        let started = Instant::now();
        let out = self.run(batch)?;
        let weights: Vec<f64> = batch.tiles.iter().map(|t| tile_work(batch, t)).collect();
        hand_over(
            batch,
            &out,
            &weights,
            started.elapsed().as_secs_f64(),
            watch,
            done,
        )
    }

    /// Whether [`Engine::run_watched`] hands tiles over as they finish: a
    /// long call then still reports points as they complete.
    fn streams(&self) -> bool {
        false
    }

    /// How the run loop should size this engine's calls ([`CallSizing`]).
    fn call_sizing(&self) -> CallSizing {
        CallSizing::default()
    }

    /// Seconds the device spent on the last call's dispatches, where the
    /// engine can tell (a GPU's timestamp queries or pass waits).
    fn device_seconds(&self) -> Option<f64> {
        None
    }
    /// What the device did since the engine opened, for engines that run on
    /// one (the run's `.meta.json` records it).
    fn device_report(&self) -> Option<DeviceReport> {
        None
    }
}

/// What a GPU engine's device did over every call since it opened.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceReport {
    /// The adapter, as the CSV's `backend` column names it.
    pub adapter: String,
    /// Dispatches: one per pipeline group of each call, unless memory split it.
    pub dispatches: u64,
    /// Passes (each a `[begin, end)` range of customers of a dispatch).
    pub passes: u64,
    /// Invocations (replications, in whole workgroups of 64) of the widest
    /// dispatch.
    pub max_invocations_per_dispatch: u64,
    /// Device time of the passes: timestamp queries where the adapter has
    /// them, else the host's wait.
    pub device_seconds: f64,
    /// Whether `device_seconds` comes from timestamp queries (the GL
    /// backend and some drivers have none; `QSWEEP_GPU_TIMESTAMPS=0`).
    #[serde(default)]
    pub timestamps: bool,
    /// What the engine planned for: `hardware` (timed passes, small heaps
    /// in workgroup memory, segments side by side) or `software` (passes
    /// within the loop cap); `QSWEEP_ADAPTER_CLASS` may differ from the
    /// adapter's own type.
    #[serde(default)]
    pub planned_as: String,
    /// The device's limits that shape plans, as opened.
    #[serde(default)]
    pub limits: DeviceLimitsReport,
}

/// The limits a GPU device was opened with that bound qsweep's kernels and
/// plans (`.meta.json`), and where they came from.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceLimitsReport {
    /// `adapter` (all it offers), `webgpu` or `downlevel` (`QSWEEP_GPU_LIMITS`).
    pub from: String,
    pub max_storage_buffers_per_shader_stage: u32,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroup_storage_size: u32,
    pub max_compute_invocations_per_workgroup: u32,
}

/// A tile's cost in the kernels' loop iterations (customers, warm-up
/// included, times the loop cost per customer): the weight that shares a
/// call's time out when nothing finer was measured.
pub fn tile_work(batch: &Batch, t: &Tile) -> f64 {
    let p = &batch.params[t.param_index as usize];
    let per_rep = f64::from(p.customers) + f64::from(p.warmup);
    f64::from(t.rep_count) * per_rep * loop_cost_per_customer(p) as f64
}

/// Hands a whole call's output over tile by tile: `seconds` shared out in
/// proportion to `weights` (one per tile), each slot's histogram with the
/// slot's first tile, the customers counted into `watch`.
pub fn hand_over(
    batch: &Batch,
    out: &BatchOutput,
    weights: &[f64],
    seconds: f64,
    watch: Watch<'_>,
    done: &mut dyn FnMut(TileDone<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let total: f64 = weights.iter().sum();
    let per_slot = HIST_BINS as usize;
    let mut given = vec![false; batch.slots as usize];
    let mut offset = 0usize;
    for (i, t) in batch.tiles.iter().enumerate() {
        let n = t.rep_count as usize;
        let slot = t.hist_slot as usize;
        let p = &batch.params[t.param_index as usize];
        let span = p.hist_span() as usize;
        let hist: &[u64] = if std::mem::replace(&mut given[slot], true) {
            &[]
        } else {
            &out.hist[slot * per_slot..(slot + span) * per_slot]
        };
        watch.tick(n as u64 * (u64::from(p.customers) + u64::from(p.warmup)));
        done(TileDone {
            tile: i,
            reps: &out.reps[offset..offset + n],
            hist,
            seconds: if total > 0.0 {
                seconds * weights[i] / total
            } else {
                seconds / batch.tiles.len() as f64
            },
        })?;
        offset += n;
    }
    Ok(())
}
