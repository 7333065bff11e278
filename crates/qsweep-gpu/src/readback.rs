//! Reading a batch's results back: buffers copied to the host, then turned
//! into a [`BatchOutput`] in the caller's tile order, with a check that no
//! replication was cut short by a driver.

use anyhow::{anyhow, bail, Result};

use super::buffers::BatchBuffers;
use super::plan::BatchPlan;
use super::OpenDevice;
use qsweep_core::contract::{rep_status, RepResult, HIST_WORDS_PER_BIN, TILE_REPS};
use qsweep_core::engine::{Batch, BatchOutput};

/// The batch's output, once every pass has been retired.
pub(super) fn batch_output(
    gpu: &OpenDevice,
    batch: &Batch,
    plan: &BatchPlan,
    buffers: &BatchBuffers,
) -> Result<BatchOutput> {
    let raw_results: Vec<RepResult> = read_buffer(gpu, &buffers.results, plan.results_bytes)?;
    let raw_hist: Vec<u32> = read_buffer(gpu, &buffers.hist, plan.hist_words * 4)?;
    if gpu.is_lost() {
        bail!("device lost on {} while reading results", gpu.desc.name);
    }
    // Undo the reordering (and the splitting of tiles whose replications'
    // segments run side by side): results in the caller's tile order.
    let mut positions = vec![Vec::new(); batch.tiles.len()];
    for (pos, &orig) in plan.order.iter().enumerate() {
        positions[orig].push(pos);
    }
    let mut out = BatchOutput::empty(batch.slots, batch.total_reps());
    for (orig, tile) in batch.tiles.iter().enumerate() {
        let start = out.reps.len();
        for &pos in &positions[orig] {
            let base = pos * TILE_REPS as usize;
            out.reps
                .extend_from_slice(&raw_results[base..base + plan.tiles[pos].rep_count as usize]);
        }
        let reps = &out.reps[start..];
        debug_assert_eq!(reps.len(), tile.rep_count as usize);
        let p = &batch.params[tile.param_index as usize];
        // (A dispatch replication whose queues overflowed stops early on
        // purpose: `sweep` reports it.)
        let short = |r: &&RepResult| {
            r.customers != p.customers && r.status & rep_status::QUEUE_OVERFLOW == 0
        };
        if let Some(r) = reps.iter().find(short) {
            bail!(
                "grid point {}: the {} adapter recorded {} of {} customers in a replication (a driver limit cut the kernel short)",
                p.point_index,
                gpu.desc.name,
                r.customers,
                p.customers
            );
        }
    }
    // Each bin is a u64 as (low, high) words (`hist_flush` in common.wgsl).
    for (dst, words) in out
        .hist
        .iter_mut()
        .zip(raw_hist.chunks_exact(HIST_WORDS_PER_BIN as usize))
    {
        *dst = u64::from(words[0]) | u64::from(words[1]) << 32;
    }
    Ok(out)
}

/// The first `size` bytes of `src`, copied through a staging buffer.
pub(super) fn read_buffer<T: bytemuck::Pod>(
    gpu: &OpenDevice,
    src: &wgpu::Buffer,
    size: u64,
) -> Result<Vec<T>> {
    let dev = &gpu.device;
    let staging = dev.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = dev.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(src, 0, &staging, 0, size);
    gpu.queue.submit([enc.finish()]);
    let slice = staging.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    dev.poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| anyhow!("readback: {e}"))?;
    rx.recv()
        .map_err(|_| anyhow!("readback: map callback never ran"))?
        .map_err(|e| anyhow!("readback: {e}"))?;
    let data = slice
        .get_mapped_range()
        .map_err(|e| anyhow!("readback: {e:?}"))?;
    let v = bytemuck::cast_slice::<u8, T>(&data).to_vec();
    drop(data);
    staging.unmap();
    Ok(v)
}
