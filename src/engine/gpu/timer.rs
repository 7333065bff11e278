//! Device time of a pass, from timestamp queries written at its start and
//! end, where the adapter has them (`GpuEngine::timestamps`). Shared by the
//! simulation passes (`submit`) and the peak-rate dispatches (`peak`).

use anyhow::{anyhow, Result};

/// Simulation passes queued on the device at once. The device starts the
/// next as soon as one ends instead of idling while the host reads the last
/// one's timer and encodes the next (the queue runs them in order, so a
/// replication's passes still follow one another).
pub(super) const PASSES_IN_FLIGHT: usize = 2;

/// Timestamp queries around each pass, one slot per pass in flight, each
/// with its own staging buffer so reading one slot never waits for another.
pub(super) struct PassTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: Vec<wgpu::Buffer>,
    /// Nanoseconds per tick.
    period: f64,
}

impl PassTimer {
    pub fn new(dev: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let slots = PASSES_IN_FLIGHT as u64;
        Self {
            set: dev.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timer"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * PASSES_IN_FLIGHT as u32,
            }),
            resolve: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("pass timer"),
                size: wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT * slots,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            staging: (0..PASSES_IN_FLIGHT)
                .map(|_| {
                    dev.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("pass timer readback"),
                        size: 16,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                })
                .collect(),
            period: f64::from(queue.get_timestamp_period()),
        }
    }

    /// The timestamp writes of a pass timed in `slot`.
    pub fn writes(&self, slot: usize) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * slot as u32),
            end_of_pass_write_index: Some(2 * slot as u32 + 1),
        }
    }

    /// Encode, after the pass, the copy of `slot`'s timestamps to its staging
    /// buffer.
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder, slot: usize) {
        let first = 2 * slot as u32;
        let offset = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT * slot as u64;
        enc.resolve_query_set(&self.set, first..first + 2, &self.resolve, offset);
        enc.copy_buffer_to_buffer(&self.resolve, offset, &self.staging[slot], 0, 16);
    }

    /// Device seconds of the pass in `slot`, submitted as `index`, once
    /// that submission is done (without waiting for later ones).
    pub fn seconds(
        &self,
        dev: &wgpu::Device,
        slot: usize,
        index: wgpu::SubmissionIndex,
    ) -> Result<f64> {
        let slice = self.staging[slot].slice(..);
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
        self.staging[slot].unmap();
        Ok(ticks[1].saturating_sub(ticks[0]) as f64 * self.period * 1e-9)
    }
}
