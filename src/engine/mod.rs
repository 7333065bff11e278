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
}
