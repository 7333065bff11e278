//! Device time of passes, from timestamp queries written at each pass's
//! start and end, where the adapter has them (`GpuEngine::timestamps`).
//! Shared by the simulation passes (`submit`) and the peak-rate dispatches
//! (`peak`).
//!
//! Each pass writes its pair of queries into the next of
//! [`PASSES_PER_READ`] slots; the pass that fills the last slot (or a final
//! command after a run's last pass) resolves them all and copies them to one
//! staging buffer, read with one map: one map per [`PASSES_PER_READ`]
//! passes rather than one per pass.

use anyhow::{anyhow, Result};

/// Simulation passes queued on the device at once. The device starts the
/// next as soon as one ends instead of idling while the host retires the
/// last one and encodes the next (the queue runs them in order, so a
/// replication's passes still follow one another).
pub(super) const PASSES_IN_FLIGHT: usize = 2;

/// Passes whose timestamps are read back with one map of the staging buffer.
/// More than [`PASSES_IN_FLIGHT`], so the staging buffer is never written by
/// a queued pass while the host has it mapped: it is read when the pass that
/// filled it retires, and the next pass to write it is submitted later.
pub(super) const PASSES_PER_READ: usize = 16;
const _: () = assert!(PASSES_PER_READ > PASSES_IN_FLIGHT);

/// Bytes of one pass's two resolved timestamps.
const PAIR_BYTES: u64 = 16;

/// Timestamp queries around passes, [`PASSES_PER_READ`] slots of two.
pub(super) struct PassTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    /// Nanoseconds per tick.
    period: f64,
}

impl PassTimer {
    pub fn new(dev: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let bytes = PAIR_BYTES * PASSES_PER_READ as u64;
        Self {
            set: dev.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timer"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * PASSES_PER_READ as u32,
            }),
            resolve: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("pass timer"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            staging: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("pass timer readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period: f64::from(queue.get_timestamp_period()),
        }
    }

    /// The timestamp writes of a pass timed in `slot` (below
    /// [`PASSES_PER_READ`]).
    pub fn writes(&self, slot: usize) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * slot as u32),
            end_of_pass_write_index: Some(2 * slot as u32 + 1),
        }
    }

    /// Encode, after the pass in slot `count - 1`, the copy of slots
    /// `0..count` to the staging buffer.
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder, count: usize) {
        enc.resolve_query_set(&self.set, 0..2 * count as u32, &self.resolve, 0);
        let bytes = PAIR_BYTES * count as u64;
        enc.copy_buffer_to_buffer(&self.resolve, 0, &self.staging, 0, bytes);
    }

    /// Device seconds of the passes in slots `0..count`, resolved by
    /// submission `index`, once it is done (without waiting for later ones).
    pub fn read(
        &self,
        dev: &wgpu::Device,
        count: usize,
        index: wgpu::SubmissionIndex,
    ) -> Result<Vec<f64>> {
        let slice = self.staging.slice(..PAIR_BYTES * count as u64);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        dev.poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
        .map_err(|e| anyhow!("pass timer: {e}"))?;
        let mapped = match rx.try_recv() {
            Ok(r) => r,
            // Not delivered by that poll: wait for everything queued.
            Err(_) => {
                dev.poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| anyhow!("pass timer: {e}"))?;
                rx.recv()
                    .map_err(|_| anyhow!("pass timer: map callback never ran"))?
            }
        };
        mapped.map_err(|e| anyhow!("pass timer: {e}"))?;
        let ticks: Vec<u64> = {
            let data = slice
                .get_mapped_range()
                .map_err(|e| anyhow!("pass timer: {e:?}"))?;
            bytemuck::cast_slice::<u8, u64>(&data).to_vec()
        };
        self.staging.unmap();
        Ok(ticks
            .chunks_exact(2)
            .map(|t| t[1].saturating_sub(t[0]) as f64 * self.period * 1e-9)
            .collect())
    }
}
