//! Running a planned batch: each dispatch's passes encoded and submitted in
//! order, [`PASSES_IN_FLIGHT`] deep, each cut by [`PassRates::pass_end`]
//! and retired with its time, which refits the pipeline's pass-time model.
//! Per pass only its `DispatchInfo` is written (into the slot's uniform
//! buffer); buffers and bind groups are made once per batch and dispatch.
//! Each retired pass's time is shared out over its tiles, and its customers
//! are counted into the [`Watch`]. The watch is looked at before each pass
//! is submitted, after the wait for the oldest (where a stop most likely
//! comes in): once it says stop, nothing more is submitted, the passes in
//! flight are waited for (a submitted pass cannot be taken back, and the
//! queue waits for it when it is dropped) and the call fails with
//! [`Cancelled`]. A stop thus waits for the running pass and the one queued
//! behind it, each of at most [`TARGET_PASS_SECONDS`] on hardware and
//! [`SOFTWARE_PASS_SECONDS`] on a software adapter (issue 25: on lavapipe
//! a stop waited for the running pass, the queued one and one more
//! submitted after the signal, each a whole loop budget over thousands of
//! replications: seconds under load).
//!
//! [`TARGET_PASS_SECONDS`]: super::pass_rates::TARGET_PASS_SECONDS
//! [`SOFTWARE_PASS_SECONDS`]: super::pass_rates::SOFTWARE_PASS_SECONDS

use std::collections::VecDeque;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};

use super::buffers::BatchBuffers;
use super::layout::DispatchInfo;
use super::pass_rates::PassRates;
use super::pipelines::PipelineCache;
use super::plan::{BatchPlan, DispatchPlan, SegmentLayout};
use super::timer::{PassTimer, PASSES_IN_FLIGHT, PASSES_PER_READ};
use super::OpenDevice;
use qsweep_core::contract::{Kernel, PointParams, TILE_REPS};
use qsweep_core::engine::{Cancelled, Watch};

/// What the device did for one batch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct PassTally {
    pub dispatches: u64,
    pub passes: u64,
    /// Invocations of the widest dispatch (whole workgroups).
    pub max_invocations: u64,
    /// Timestamp queries around each pass where the adapter has them, else
    /// the host's wait.
    pub device_seconds: f64,
}

/// Run every pass of `plan` on `buffers`, updating `rates`, until `watch`
/// says stop ([`Cancelled`]); returns what the device did, with its seconds
/// from timestamp queries when `timestamps`, else the host's wait, and
/// each tile's share of the passes' time (in the plan's tile order: a
/// pass's time split over its tiles by the customers each simulates in it).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_passes(
    gpu: &OpenDevice,
    pipelines: &PipelineCache,
    plan: &BatchPlan,
    params: &[PointParams],
    buffers: &BatchBuffers,
    rates: &mut PassRates,
    timestamps: bool,
    watch: Watch<'_>,
) -> Result<(PassTally, Vec<f64>)> {
    let timer = timestamps.then(|| PassTimer::new(&gpu.device, &gpu.queue));
    let mut tracker = PassTracker {
        tile_seconds: vec![0.0; plan.tiles.len()],
        ..PassTracker::default()
    };
    let shares = Shares {
        plan,
        params,
        watch,
    };
    for dispatch in &plan.dispatches {
        let pipeline = pipelines.compiled(&dispatch.spec);
        let bind_groups = buffers.bind_groups(gpu, pipeline, dispatch.spec.kernel)?;
        tracker.tally.dispatches += 1;
        tracker.tally.max_invocations = tracker.tally.max_invocations.max(dispatch.invocations());
        let mut begin = 0u32;
        while begin < dispatch.max_total {
            // The oldest pass leaves the queue before its slot is reused
            // (and its time sizes this pass).
            if tracker.in_flight.len() == PASSES_IN_FLIGHT {
                tracker.retire_oldest(gpu, rates, timer.as_ref(), &shares)?;
            }
            // Looked at after that wait, which a stop most likely came in:
            // nothing more is submitted, what is in flight is waited for.
            if watch.stopped() {
                let (in_flight, since) = (tracker.in_flight.len(), Instant::now());
                while !tracker.in_flight.is_empty() {
                    tracker.retire_oldest(gpu, rates, timer.as_ref(), &shares)?;
                }
                if std::env::var_os("QSWEEP_DEBUG_STOP").is_some() {
                    // What the stop waited for (tests/it/overnight.rs).
                    eprintln!(
                        "qsweep: debug: stopped with {in_flight} passes in flight, waited \
                         {:.3} s; longest pass {:.3} s",
                        since.elapsed().as_secs_f64(),
                        tracker.longest_pass
                    );
                }
                return Err(Cancelled.into());
            }
            let end = rates.pass_end(dispatch, begin);
            let pass = Pass {
                dispatch,
                pipeline,
                bind_groups: &bind_groups,
                begin,
                end,
            };
            tracker.submit(gpu, buffers, timer.as_ref(), &pass)?;
            begin = end;
        }
    }
    while !tracker.in_flight.is_empty() {
        tracker.retire_oldest(gpu, rates, timer.as_ref(), &shares)?;
    }
    if let Some(t) = &timer {
        tracker.read_remaining_times(gpu, t)?;
    }
    Ok((tracker.tally, tracker.tile_seconds))
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
        let (first, layout) = (dispatch.tile_offset as usize, dispatch.layout);
        (first..first + dispatch.tiles as usize).map(move |i| {
            let t = &self.plan.tiles[i];
            let p = &self.params[t.param_index as usize];
            // Steps stand for customers in proportion (side by side, a
            // replication's 2 × segment-length steps run all its customers).
            let total = p.warmup.saturating_add(p.customers);
            let steps = layout.steps(p).max(1);
            let n = end.min(steps).saturating_sub(begin);
            let customers = f64::from(n) * f64::from(total) / f64::from(steps);
            (i, customers * f64::from(t.rep_count))
        })
    }
}

/// One pass of a dispatch: customers `[begin, end)` of its replications.
struct Pass<'a, 'b> {
    dispatch: &'a DispatchPlan,
    pipeline: &'b wgpu::ComputePipeline,
    /// One per slot of the uniform ring.
    bind_groups: &'b [wgpu::BindGroup],
    begin: u32,
    end: u32,
}

impl Pass<'_, '_> {
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
            side_by_side: u32::from(d.layout == SegmentLayout::SideBySide),
            _pad1: 0,
        }
    }
}

/// A submitted pass, until it is retired.
struct SubmittedPass<'a> {
    index: wgpu::SubmissionIndex,
    dispatch: &'a DispatchPlan,
    /// Customers `[begin, end)` of its replications.
    begin: u32,
    end: u32,
    submitted: Instant,
    /// Whether it resolves the timer's slots (it fills the last one).
    reads_timer: bool,
}

/// The passes of a run in flight, and what those retired did.
#[derive(Default)]
struct PassTracker<'a> {
    in_flight: VecDeque<SubmittedPass<'a>>,
    /// When the previous pass was retired: with passes queued back to back,
    /// a pass's device time starts then, not at its own submission.
    last_retired: Option<Instant>,
    tally: PassTally,
    /// Per tile of the plan, its share of the passes' time.
    tile_seconds: Vec<f64>,
    /// The longest wall time of a retired pass.
    longest_pass: f64,
}

impl<'a> PassTracker<'a> {
    /// Encode and submit `pass` in the next slot of the uniform ring, timed
    /// in the next slot of `timer`.
    fn submit(
        &mut self,
        gpu: &OpenDevice,
        buffers: &BatchBuffers,
        timer: Option<&PassTimer>,
        pass: &Pass<'a, '_>,
    ) -> Result<()> {
        let dev = &gpu.device;
        let dispatch = pass.dispatch;
        let (groups_x, groups_y) = dispatch.workgroups();
        let n = self.tally.passes as usize;
        let slot = n % PASSES_IN_FLIGHT;
        let timer_slot = n % PASSES_PER_READ;
        // Staged now, copied before this submission's commands run; the
        // slot's previous pass has retired.
        gpu.queue
            .write_buffer(&buffers.info[slot], 0, bytemuck::bytes_of(&pass.info()));
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut enc = dev.create_command_encoder(&Default::default());
        if dispatch.spec.kernel == Kernel::Dispatch && pass.begin == 0 {
            // All-zero state is the empty system (see dispatch.wgsl).
            enc.clear_buffer(&buffers.heap, 0, Some(dispatch.heap_bytes()));
        }
        {
            let mut cpass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: timer.map(|t| t.writes(timer_slot)),
            });
            cpass.set_pipeline(pass.pipeline);
            cpass.set_bind_group(0, &pass.bind_groups[slot], &[]);
            cpass.dispatch_workgroups(groups_x, groups_y, 1);
        }
        let reads_timer = timer.is_some() && timer_slot == PASSES_PER_READ - 1;
        if let Some(t) = timer.filter(|_| reads_timer) {
            t.resolve(&mut enc, PASSES_PER_READ);
        }
        let index = gpu.queue.submit([enc.finish()]);
        // Validation errors surface at submission; device loss is checked
        // again when the pass is retired.
        gpu.check_error(scope, "a simulation dispatch")?;
        self.tally.passes += 1;
        self.in_flight.push_back(SubmittedPass {
            index,
            dispatch,
            begin: pass.begin,
            end: pass.end,
            submitted: Instant::now(),
            reads_timer,
        });
        Ok(())
    }

    /// Wait for the oldest pass in flight and update its kernel's measured
    /// rate in `rates` (which sizes later passes) from the host's clock: the
    /// time from the previous retirement (or its submission) to this one,
    /// known at once, where its timestamps are read only every
    /// [`PASSES_PER_READ`] passes. Its device time is added then. That host
    /// time is also shared out over the pass's tiles, and its customers
    /// are counted into the watch.
    fn retire_oldest(
        &mut self,
        gpu: &OpenDevice,
        rates: &mut PassRates,
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
        self.longest_pass = self.longest_pass.max(wall);
        rates.record(pass.dispatch, pass.end - pass.begin, wall);
        if debug_passes() {
            // How the pass-time model cuts passes (QSWEEP_DEBUG_PASSES=1).
            eprintln!(
                "qsweep: debug: pass {:?} lanes {} customers [{}, {}) took {wall:.4} s; model {:?}",
                pass.dispatch.spec.kernel,
                pass.dispatch.lanes(),
                pass.begin,
                pass.end,
                rates.fitted(pass.dispatch),
            );
        }
        let customers: Vec<(usize, f64)> = shares
            .tile_customers(pass.dispatch, pass.begin, pass.end)
            .collect();
        let sum: f64 = customers.iter().map(|c| c.1).sum();
        if sum > 0.0 {
            for (i, c) in customers {
                self.tile_seconds[i] += wall * c / sum;
            }
        }
        shares.watch.tick(sum as u64);
        match timer {
            Some(t) if pass.reads_timer => {
                self.tally.device_seconds += t
                    .read(&gpu.device, PASSES_PER_READ, pass.index)?
                    .iter()
                    .sum::<f64>();
            }
            Some(_) => {}
            None => self.tally.device_seconds += wall,
        }
        Ok(())
    }

    /// Once every pass has retired: the device time of the passes since the
    /// timer was last read.
    fn read_remaining_times(&mut self, gpu: &OpenDevice, timer: &PassTimer) -> Result<()> {
        let count = self.tally.passes as usize % PASSES_PER_READ;
        if count == 0 {
            return Ok(());
        }
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        timer.resolve(&mut enc, count);
        let index = gpu.queue.submit([enc.finish()]);
        self.tally.device_seconds += timer.read(&gpu.device, count, index)?.iter().sum::<f64>();
        Ok(())
    }
}

/// Add one batch's `tally` to what the device did since the engine opened.
pub(super) fn add_to_report(report: &mut qsweep_core::engine::DeviceReport, tally: &PassTally) {
    report.dispatches += tally.dispatches;
    report.passes += tally.passes;
    report.max_invocations_per_dispatch = report
        .max_invocations_per_dispatch
        .max(tally.max_invocations);
    report.device_seconds += tally.device_seconds;
}

/// `QSWEEP_DEBUG_PASSES` is set: each retired pass is printed with the
/// pass-time model it left (a diagnostic for planning on new adapters).
fn debug_passes() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("QSWEEP_DEBUG_PASSES").is_some())
}
