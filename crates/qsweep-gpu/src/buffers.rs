//! The device buffers of one batch, allocated and uploaded once for all its
//! passes, and bound as `shaders/common.wgsl` declares them
//! (`@group(0) @binding(0..=7)`). Nothing is created per pass: each pass's
//! `DispatchInfo` (binding 5) is written into one of [`PASSES_IN_FLIGHT`]
//! uniform buffers, and each dispatch has one bind group per such slot.

use anyhow::Result;
use wgpu::util::DeviceExt;

use super::layout::{DispatchInfo, LANE_STATE_BYTES};
use super::plan::BatchPlan;
use super::timer::PASSES_IN_FLIGHT;
use super::OpenDevice;
use qsweep_core::contract::Kernel;
use qsweep_core::engine::Batch;

/// One batch's buffers, by binding.
pub(super) struct BatchBuffers {
    /// 0: `PointParams` per point.
    pub params: wgpu::Buffer,
    /// 1: `Tile`s, in the plan's order.
    pub tiles: wgpu::Buffer,
    /// 2: the shared table of empirical-law values.
    pub table: wgpu::Buffer,
    /// 3: a `RepResult` per lane of every tile.
    pub results: wgpu::Buffer,
    /// 4: the histograms, one slot after another, each bin a u64 as two
    /// words (`HIST_WORDS_PER_BIN`).
    pub hist: wgpu::Buffer,
    /// 5: a pass's `DispatchInfo`, one buffer per slot of the
    /// [`PASSES_IN_FLIGHT`] ring (a slot is rewritten only once the pass
    /// that last used it has retired).
    pub info: Vec<wgpu::Buffer>,
    /// 6: the Kiefer–Wolfowitz heaps or the dispatch kernel's state.
    pub heap: wgpu::Buffer,
    /// 7: a `LaneState` per lane of the largest dispatch.
    pub lane_state: wgpu::Buffer,
}

impl BatchBuffers {
    /// Allocate the buffers `plan` sizes and upload the batch's inputs.
    pub fn create(gpu: &OpenDevice, batch: &Batch, plan: &BatchPlan) -> Result<Self> {
        let dev = &gpu.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let storage = |label: &str, contents: &[u8]| {
            dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let params = storage("params", bytemuck::cast_slice(batch.params));
        let tiles = storage("tiles", bytemuck::cast_slice(&plan.tiles));
        let table: &[f32] = if batch.table.is_empty() {
            &[0.0]
        } else {
            batch.table
        };
        let table = storage("table", bytemuck::cast_slice(table));
        let results = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("results"),
            size: plan.results_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let hist = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("hist"),
            contents: &vec![0u8; (plan.hist_words * 4) as usize],
            // COPY_DST: the tests pre-fill counts near 2^32.
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        });
        let info = (0..PASSES_IN_FLIGHT)
            .map(|_| {
                dev.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("dispatch info"),
                    size: std::mem::size_of::<DispatchInfo>() as u64,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let heap = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heap"),
            size: plan.heap_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let lane_state = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("lane state"),
            size: plan.max_lanes * LANE_STATE_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        gpu.check_error(scope, "allocating buffers")?;
        Ok(Self {
            params,
            tiles,
            table,
            results,
            hist,
            info,
            heap,
            lane_state,
        })
    }

    /// A dispatch's bind groups for `pipeline` of `kernel`, one per ring
    /// slot (binding 5 the slot's `DispatchInfo`). Lindley has no binding 6.
    pub fn bind_groups(
        &self,
        gpu: &OpenDevice,
        pipeline: &wgpu::ComputePipeline,
        kernel: Kernel,
    ) -> Result<Vec<wgpu::BindGroup>> {
        let dev = &gpu.device;
        let layout = pipeline.get_bind_group_layout(0);
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let groups = self
            .info
            .iter()
            .map(|info| {
                let mut entries = vec![
                    entry(0, &self.params),
                    entry(1, &self.tiles),
                    entry(2, &self.table),
                    entry(3, &self.results),
                    entry(4, &self.hist),
                    entry(5, info),
                    entry(7, &self.lane_state),
                ];
                if kernel != Kernel::Lindley {
                    entries.push(entry(6, &self.heap));
                }
                dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &entries,
                })
            })
            .collect();
        gpu.check_error(scope, "binding a dispatch's buffers")?;
        Ok(groups)
    }
}

/// `buf`, whole, at `binding`.
pub(super) fn entry(binding: u32, buf: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buf.as_entire_binding(),
    }
}
