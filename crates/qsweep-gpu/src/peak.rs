//! The adapter's peak f32 arithmetic rate, from `shaders/peak.wgsl`: the
//! denominator of `qsweep bench`'s "fraction of peak" (the CPU engine's twin
//! is `cpu::peak_ops_per_second`).

use std::time::Instant;

use anyhow::{anyhow, Result};

use super::buffers::entry;
use super::pipelines::compile;
use super::plan::MAX_GROUPS_PER_DIM;
use super::timer::PassTimer;
use super::GpuEngine;

pub const PEAK_WGSL: &str = include_str!("../../../shaders/peak.wgsl");

/// Loop iterations per invocation of the peak kernel (under lavapipe's
/// 65535, see [`LOOP_BUDGET`](super::LOOP_BUDGET)).
const PEAK_ITERATIONS: u32 = 16_384;

/// Operations one invocation of `peak.wgsl` does: per iteration, eight vec4
/// multiply-adds of two operations per component.
const PEAK_OPS_PER_INVOCATION: f64 = PEAK_ITERATIONS as f64 * 8.0 * 4.0 * 2.0;

/// The full source of the peak kernel.
pub fn peak_source() -> String {
    format!("const PEAK_ITERATIONS: u32 = {PEAK_ITERATIONS}u;\n{PEAK_WGSL}")
}

impl GpuEngine {
    /// The adapter's measured peak f32 arithmetic rate (operations/s, a
    /// multiply-add counting two), from `shaders/peak.wgsl` dispatched
    /// wider until one dispatch lasts `seconds`. Timed on the device where
    /// the adapter has timestamp queries.
    pub fn peak_ops_per_second(&mut self, seconds: f64) -> Result<f64> {
        let gpu = &self.gpu;
        let dev = &gpu.device;
        let pipeline = compile(dev, "peak", &peak_source())?;
        let sink = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("peak sink"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let bind_group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[entry(0, &sink)],
        });
        let timer = self.timestamps.then(|| PassTimer::new(dev, &gpu.queue));
        let max_groups = u64::from(MAX_GROUPS_PER_DIM) * 64;
        let mut groups = 16u64;
        loop {
            let groups_x = groups.min(u64::from(MAX_GROUPS_PER_DIM)) as u32;
            let groups_y = groups.div_ceil(u64::from(groups_x)) as u32;
            let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
            let mut enc = dev.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("peak"),
                    timestamp_writes: timer.as_ref().map(|t| t.writes(0)),
                });
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(groups_x, groups_y, 1);
            }
            if let Some(t) = &timer {
                t.resolve(&mut enc, 1);
            }
            let started = Instant::now();
            let index = gpu.queue.submit([enc.finish()]);
            dev.poll(wgpu::PollType::Wait {
                submission_index: Some(index.clone()),
                timeout: None,
            })
            .map_err(|e| anyhow!("waiting for {}: {e}", gpu.desc.name))?;
            let wall = started.elapsed().as_secs_f64();
            gpu.check_error(scope, "the peak-throughput dispatch")?;
            let secs = match &timer {
                Some(t) => t.read(dev, 1, index)?[0],
                None => wall,
            };
            let invocations = (u64::from(groups_x) * u64::from(groups_y) * 64) as f64;
            // One dispatch of about `target` (never near an OS watchdog,
            // whatever `seconds` asks) measures the peak.
            let target = seconds.min(qsweep_core::engine::MAX_CALL_SECONDS) * 0.8;
            if wall >= target || groups >= max_groups {
                return Ok(invocations * PEAK_OPS_PER_INVOCATION / secs.max(1e-9));
            }
            // Grow toward the target, at most 8x at once.
            let grow = (target / wall.max(1e-4)).clamp(1.1, 8.0);
            groups = ((groups as f64 * grow) as u64).min(max_groups);
        }
    }
}
