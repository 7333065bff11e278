//! Running a planned batch: each dispatch's passes encoded and submitted in
//! order, [`PASSES_IN_FLIGHT`] deep, each retired with its device time,
//! which updates the kernel's measured rate and is shared out over the
//! pass's tiles. The [`Watch`] is looked at before each pass: once it says
//! stop, the passes in flight are waited for and the call fails with
//! [`Cancelled`] (a pass takes about `TARGET_DISPATCH_SECONDS`).

use std::collections::VecDeque;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use wgpu::util::DeviceExt;

use super::buffers::BatchBuffers;
use super::layout::DispatchInfo;
use super::pipelines::PipelineCache;
use super::plan::{BatchPlan, DispatchPlan, KernelRates};
use super::timer::{PassTimer, PASSES_IN_FLIGHT};
use super::OpenDevice;
use crate::contract::{Kernel, PointParams, TILE_REPS};
use crate::engine::{Cancelled, Watch};

/// What [`run_passes`] measured.
pub(super) struct PassTimes {
    /// Device seconds of all passes (timestamp queries when the adapter
    /// has them, else the host's wait).
    pub device_seconds: f64,
    /// Each tile's share of them (in the plan's tile order): a pass's time
    /// split over its tiles by the customers each simulates in it.
    pub tile_seconds: Vec<f64>,
}

/// Run every pass of `plan` on `buffers`, updating `rates`, until `watch`
/// says stop ([`Cancelled`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_passes(
    gpu: &OpenDevice,
    pipelines: &PipelineCache,
    plan: &BatchPlan,
    params: &[PointParams],
    buffers: &BatchBuffers,
    rates: &mut KernelRates,
    timestamps: bool,
    watch: Watch<'_>,
) -> Result<PassTimes> {
    let timer = timestamps.then(|| PassTimer::new(&gpu.device, &gpu.queue));
    let mut tracker = PassTracker {
        tile_seconds: vec![0.0; plan.tiles.len()],
        ..PassTracker::default()
    };
    let ctx = Shares {
        plan,
        params,
        watch,
    };
    for (index, dispatch) in plan.dispatches.iter().enumerate() {
        let pipeline = pipelines.compiled(&dispatch.spec);
        let layout = pipeline.get_bind_group_layout(0);
        let mut begin = 0u32;
        while begin < dispatch.max_total {
            let end = begin.saturating_add(dispatch.pass);
            if watch.stopped() {
                while !tracker.in_flight.is_empty() {
                    tracker.retire_oldest(gpu, rates, timer.as_ref(), &ctx)?;
                }
                return Err(Cancelled.into());
            }
            // The oldest pass leaves the queue before its timer slot is reused.
            if tracker.in_flight.len() == PASSES_IN_FLIGHT {
                tracker.retire_oldest(gpu, rates, timer.as_ref(), &ctx)?;
            }
            let pass = Pass {
                dispatch,
                index,
                pipeline,
                layout: &layout,
                begin,
                end,
            };
            tracker.submit(gpu, buffers, timer.as_ref(), &pass)?;
            begin = end;
        }
    }
    while !tracker.in_flight.is_empty() {
        tracker.retire_oldest(gpu, rates, timer.as_ref(), &ctx)?;
    }
    Ok(PassTimes {
        device_seconds: tracker.device_seconds,
        tile_seconds: tracker.tile_seconds,
    })
}

/// What sharing a retired pass's time out over its tiles needs.
struct Shares<'a> {
    plan: &'a BatchPlan,
    params: &'a [PointParams],
    watch: Watch<'a>,
}

impl Shares<'_> {
    /// Customers each tile of `dispatch` simulates in customers
    /// `[begin, end)` of its replications: (plan tile index, customers).
    fn tile_customers(
        &self,
        dispatch: &DispatchPlan,
        begin: u32,
        end: u32,
    ) -> impl Iterator<Item = (usize, f64)> + '_ {
        let first = dispatch.tile_offset as usize;
        (first..first + dispatch.tiles as usize).map(move |i| {
            let t = &self.plan.tiles[i];
            let p = &self.params[t.param_index as usize];
            let total = p.warmup.saturating_add(p.customers);
            let n = end.min(total).saturating_sub(begin);
            (i, f64::from(n) * f64::from(t.rep_count))
        })
    }
}

/// One pass of a dispatch: customers `[begin, end)` of its replications.
struct Pass<'a> {
    dispatch: &'a DispatchPlan,
    /// The dispatch's index in the plan.
    index: usize,
    pipeline: &'a wgpu::ComputePipeline,
    layout: &'a wgpu::BindGroupLayout,
    begin: u32,
    end: u32,
}

impl Pass<'_> {
    /// The pass's uniform (binding 5).
    fn info(&self) -> DispatchInfo {
        let d = self.dispatch;
        DispatchInfo {
            tile_offset: d.tile_offset,
            tiles: d.tiles,
            groups_x: d.workgroups().0,
            lanes: d.tiles * TILE_REPS,
            begin: self.begin,
            end: self.end,
            _pad0: 0,
            _pad1: 0,
        }
    }

    /// Customers it simulates.
    fn work(&self) -> f64 {
        let d = self.dispatch;
        f64::from(d.tiles)
            * f64::from(TILE_REPS)
            * f64::from(self.end.min(d.max_total) - self.begin)
    }
}

/// A submitted pass, until it is retired.
struct SubmittedPass {
    index: wgpu::SubmissionIndex,
    /// Its slot in the [`PassTimer`].
    slot: usize,
    submitted: Instant,
    kernel: Kernel,
    /// Customers it simulates.
    work: f64,
    /// Its dispatch (index in the plan) and customers.
    dispatch: usize,
    begin: u32,
    end: u32,
}

/// The passes of a run in flight, and timing over those retired.
#[derive(Default)]
struct PassTracker {
    in_flight: VecDeque<SubmittedPass>,
    submitted: usize,
    /// When the previous pass was retired: with passes queued back to back,
    /// a pass's device time starts then, not at its own submission.
    last_retired: Option<Instant>,
    device_seconds: f64,
    /// Per tile of the plan, its share of the device seconds.
    tile_seconds: Vec<f64>,
}

impl PassTracker {
    /// Encode and submit `pass`, timed in the next slot of `timer`.
    fn submit(
        &mut self,
        gpu: &OpenDevice,
        buffers: &BatchBuffers,
        timer: Option<&PassTimer>,
        pass: &Pass,
    ) -> Result<()> {
        let dev = &gpu.device;
        let dispatch = pass.dispatch;
        let kernel = dispatch.spec.kernel;
        let (groups_x, groups_y) = dispatch.workgroups();
        let info = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("dispatch info"),
            contents: bytemuck::bytes_of(&pass.info()),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let entries = buffers.entries(&info, kernel);
        let slot = self.submitted % PASSES_IN_FLIGHT;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let bind_group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: pass.layout,
            entries: &entries,
        });
        let mut enc = dev.create_command_encoder(&Default::default());
        if kernel == Kernel::Dispatch && pass.begin == 0 {
            // All-zero state is the empty system (see dispatch.wgsl).
            enc.clear_buffer(&buffers.heap, 0, Some(dispatch.heap_bytes()));
        }
        {
            let mut cpass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: timer.map(|t| t.writes(slot)),
            });
            cpass.set_pipeline(pass.pipeline);
            cpass.set_bind_group(0, &bind_group, &[]);
            cpass.dispatch_workgroups(groups_x, groups_y, 1);
        }
        if let Some(t) = timer {
            t.resolve(&mut enc, slot);
        }
        let index = gpu.queue.submit([enc.finish()]);
        // Validation errors surface at submission; device loss is checked
        // again when the pass is retired.
        gpu.check_error(scope, "a simulation dispatch")?;
        self.submitted += 1;
        self.in_flight.push_back(SubmittedPass {
            index,
            slot,
            submitted: Instant::now(),
            kernel,
            work: pass.work(),
            dispatch: pass.index,
            begin: pass.begin,
            end: pass.end,
        });
        Ok(())
    }

    /// Wait for the oldest pass in flight, add its device time, and update
    /// its kernel's measured rate in `rates` (which sizes later dispatches).
    fn retire_oldest(
        &mut self,
        gpu: &OpenDevice,
        rates: &mut KernelRates,
        timer: Option<&PassTimer>,
        shares: &Shares<'_>,
    ) -> Result<()> {
        let pass = self.in_flight.pop_front().expect("a pass in flight");
        gpu.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(pass.index.clone()),
                timeout: None,
            })
            .map_err(|e| anyhow!("waiting for {}: {e}", gpu.desc.name))?;
        if gpu.is_lost() {
            bail!(
                "device lost on {} during a simulation dispatch",
                gpu.desc.name
            );
        }
        let now = Instant::now();
        let started = self
            .last_retired
            .map_or(pass.submitted, |t| t.max(pass.submitted));
        self.last_retired = Some(now);
        let wall = now.duration_since(started).as_secs_f64();
        let secs = match timer {
            Some(t) => t.seconds(&gpu.device, pass.slot, pass.index)?,
            None => wall,
        };
        self.device_seconds += secs;
        rates.record(pass.kernel, pass.work, secs);
        let dispatch = &shares.plan.dispatches[pass.dispatch];
        let customers: Vec<(usize, f64)> = shares
            .tile_customers(dispatch, pass.begin, pass.end)
            .collect();
        let sum: f64 = customers.iter().map(|c| c.1).sum();
        if sum > 0.0 {
            for (i, c) in customers {
                self.tile_seconds[i] += secs * c / sum;
            }
        }
        shares.watch.tick(sum as u64);
        Ok(())
    }
}
