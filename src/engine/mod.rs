//! Engines: the CPU reference (`cpu`, each file the twin of a kernel in
//! `shaders/`) and the WGSL kernels on wgpu (`gpu`).
//!
//! Both implement [`Engine`]: a [`Batch`] of points and tiles in, a
//! [`BatchOutput`] of per-replication results and one wait histogram per
//! slot out.
//! `schedule` turns grid points into tiles; `stats` reads the output;
//! `opcount` estimates a kernel's operations per customer for `qsweep bench`.

pub mod cpu;
pub mod gpu;
pub mod opcount;
pub mod schedule;

use crate::contract::{PointParams, RepResult, Tile, HIST_BINS};

/// Longest a single measured engine call or dispatch should take (`qsweep
/// bench`, the peak measurement): far below OS GPU watchdogs (about 2 s on
/// Windows), long enough to amortise a call's set-up.
pub const MAX_CALL_SECONDS: f64 = 0.25;

/// Work for one engine call.
pub struct Batch<'a> {
    pub params: &'a [PointParams],
    pub tiles: &'a [Tile],
    /// Shared table of empirical-law values (at least one element).
    pub table: &'a [f32],
    /// Number of histogram slots the tiles refer to.
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

/// A simulation backend.
pub trait Engine {
    /// What the CSV's `backend` column says (e.g. `cpu`, `vulkan:llvmpipe (LLVM 15.0.7, 256 bits)`).
    fn label(&self) -> String;
    fn run(&mut self, batch: &Batch) -> anyhow::Result<BatchOutput>;
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
}
