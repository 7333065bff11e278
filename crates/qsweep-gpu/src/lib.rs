//! qsweep-gpu, the GPU engine: the WGSL kernels in `shaders/` run through
//! wgpu on any Vulkan, Metal, DX12 or GL adapter (lavapipe included), and
//! [`opcount`], their operations per customer counted from naga's IR.
//!
//! A crate of its own so that the GPU stack (wgpu, naga, pollster) compiles
//! only here (issue 43): `qsweep-core` (spec, contract, the CPU engine,
//! statistics, the run loop) builds without it, and this crate implements
//! core's [`Engine`] trait like the CPU engine does. Choosing between the
//! two engines, and `qsweep bench`, is `qsweep-backend`, above both.
//!
//! [`GpuEngine::run`] takes a batch through four steps, one module each:
//! - `plan`: which points the GPU takes, the tiles' order, dispatches sized
//!   by memory, passes by the adapter (loop budget or measured time), buffer
//!   sizes;
//! - `buffers`: the batch's buffers and uniform ring, allocated once;
//! - `submit`: the passes encoded and queued, timed (`timer`) and retired;
//! - `readback`: the results copied back, in the caller's tile order.
//!
//! Around them: `adapter` finds and describes adapters, `pipelines` builds
//! each kernel's WGSL ([`Specialization`]) and compiles it, `layout` holds
//! the Rust twins of the WGSL structs only this engine fills, and `peak`
//! measures the adapter's peak rate with `shaders/peak.wgsl`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use qsweep_core::contract::Kernel;
use qsweep_core::engine::{
    hand_over, Batch, BatchOutput, CallSizing, Cancelled, DeviceReport, Engine, TileDone, Watch,
    HARDWARE_CALL_REPS,
};

mod adapter;
mod buffers;
mod layout;
pub mod opcount;
mod pass_rates;
mod peak;
mod pipelines;
mod plan;
mod readback;
mod submit;
#[cfg(test)]
mod tests;
mod timer;
mod variants;

pub use adapter::{list_adapters, AdapterChoice, AdapterClass, AdapterDesc, DeviceLimits};
pub use layout::{DispatchInfo, LaneState};
pub use peak::{peak_source, PEAK_WGSL};
pub use pipelines::{
    HeapMemory, Specialization, COOPERATIVE_MIN_SERVERS, DISPATCH_WGSL, FAST_HEAP_MAX_SERVERS,
    KIEFER_WOLFOWITZ_WGSL, LINDLEY_WGSL,
};
pub use plan::{
    cooperative_candidate, pass_customers, Layouts, SegmentLayout, COOPERATIVE_MAX_REPS,
    LOOP_BUDGET, MAX_GPU_SERVERS, MAX_PASS_CUSTOMERS, SIDE_BY_SIDE_BELOW_REPS,
};
pub use variants::{
    compile_variants, every_variant, resource_needs, write_kernels, KernelVariant, ResourceNeeds,
};

use buffers::BatchBuffers;
pub use pass_rates::TARGET_PASS_SECONDS;
use pass_rates::{PassLength, PassRates};
use pipelines::PipelineCache;
use plan::BatchPlan;

/// An open device: what every step submits to, and what its errors name.
struct OpenDevice {
    device: wgpu::Device,
    queue: wgpu::Queue,
    desc: AdapterDesc,
    /// Set by the device-lost callback.
    lost: Arc<AtomicBool>,
}

impl OpenDevice {
    fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Fail with what `scope` caught during `what`, or if the device is lost.
    fn check_error(&self, scope: wgpu::ErrorScopeGuard, what: &str) -> Result<()> {
        if let Some(err) = pollster::block_on(scope.pop()) {
            bail!("{} on {}: {err}", what, self.desc.name);
        }
        if self.is_lost() {
            bail!("device lost on {} during {what}", self.desc.name);
        }
        Ok(())
    }
}

/// An open device with compiled kernels.
pub struct GpuEngine {
    gpu: OpenDevice,
    limits: wgpu::Limits,
    pipelines: PipelineCache,
    /// How passes are cut, and each pipeline's fitted pass times.
    rates: PassRates,
    /// What the device did since the engine opened.
    report: DeviceReport,
    /// Seconds the device spent in the last `run`: summed timestamp queries
    /// around each pass where the adapter has them, else the host's wait.
    pub last_device_seconds: f64,
    /// Whether `last_device_seconds` comes from timestamp queries.
    pub timestamps: bool,
    /// One-server segments' and large central queues' layout, when not the
    /// adapter's choice ([`Layouts::for_batch`]): for tests.
    segment_layout: Option<SegmentLayout>,
    /// Loop iterations per second this engine is expected to run a call
    /// at: a calibration's ([`Self::expect_rate`]), or its own last
    /// device-filling call's. What sizes a run's first call
    /// ([`CallSizing::expected_rate`]). Software adapters keep none.
    expected_rate: Option<f64>,
}

impl GpuEngine {
    /// Open an adapter: the named one, or wgpu's high-performance choice
    /// (hardware before software).
    pub fn open(choice: &AdapterChoice) -> Result<Self> {
        let inst = adapter::instance();
        let adapter = adapter::choose(&inst, choice)?;
        Self::from_adapter(adapter)
    }

    fn from_adapter(adapter: wgpu::Adapter) -> Result<Self> {
        // A bad QSWEEP_ADAPTER_CLASS is an error here, not a silent default.
        AdapterClass::from_env()?;
        let desc = AdapterDesc::from_info(&adapter.get_info());
        // The limits the device is opened with: the adapter's own, or (to
        // test small devices on any adapter) WebGPU's baseline or wgpu's
        // downlevel set, clipped to what the adapter has. Everything below
        // plans from these, never from the adapter's.
        let limits_from = DeviceLimits::from_env()?;
        let limits = limits_from.limits(&adapter.limits());
        let preferred = HeapMemory::preferred_for(&desc);
        check_limits(&desc, &limits, preferred)?;
        // Timestamp queries, where the adapter has them (and
        // QSWEEP_GPU_TIMESTAMPS=0 does not turn them off), time each pass on
        // the device itself (`device_seconds`); without them the host's wait
        // does.
        let features = if timestamps_allowed()? {
            adapter.features() & wgpu::Features::TIMESTAMP_QUERY
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("qsweep"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .with_context(|| format!("adapter {}: cannot open a device", desc.name))?;
        let lost = Arc::new(AtomicBool::new(false));
        let lost_flag = lost.clone();
        device.set_device_lost_callback(move |_, _| lost_flag.store(true, Ordering::SeqCst));
        let pass_length = PassLength::for_adapter(&desc);
        let report = DeviceReport {
            adapter: desc.label(),
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            planned_as: match desc.class {
                AdapterClass::Software => "software",
                AdapterClass::Hardware => "hardware",
            }
            .to_string(),
            limits: qsweep_core::engine::DeviceLimitsReport {
                from: limits_from.name().to_string(),
                max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
                max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
                max_buffer_size: limits.max_buffer_size,
                max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
                max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            },
            ..Default::default()
        };
        let mut engine = Self {
            gpu: OpenDevice {
                device,
                queue,
                desc,
                lost,
            },
            pipelines: PipelineCache::new(&limits, preferred),
            limits,
            rates: PassRates::new(pass_length),
            report,
            last_device_seconds: 0.0,
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            segment_layout: segment_layout_from_env()?,
            expected_rate: None,
        };
        // Compile the commonest pipelines now, so a broken driver fails here.
        for kernel in [Kernel::Lindley, Kernel::KieferWolfowitz] {
            engine
                .pipelines
                .get_or_compile(&engine.gpu.device, Specialization::plain(kernel))?;
        }
        Ok(engine)
    }

    pub fn adapter(&self) -> &AdapterDesc {
        &self.gpu.desc
    }

    /// Size later runs' first calls for `loops_per_second` (a calibration
    /// on the sweep's own points:
    /// `qsweep_core::run::calibrate::calibrate_on`). Ignored on a software
    /// adapter, whose calls are sized as the CPU's.
    pub fn expect_rate(&mut self, loops_per_second: f64) {
        if self.hardware() && loops_per_second.is_finite() && loops_per_second > 0.0 {
            self.expected_rate = Some(loops_per_second);
        }
    }

    /// Whether the engine plans for a hardware GPU ([`AdapterClass`]).
    fn hardware(&self) -> bool {
        self.gpu.desc.class == AdapterClass::Hardware
    }

    /// Keep small queues' heaps in `memory` where they fit (by default
    /// workgroup memory on hardware, private memory on software adapters):
    /// for tests, which run both kernels on one adapter.
    pub fn prefer_heap_memory(&mut self, memory: HeapMemory) {
        self.pipelines.prefer(memory);
    }

    /// The WGSL this engine compiles for `p`'s pipeline (its fast heap
    /// where this adapter keeps it): what `qsweep bench` counts operations
    /// of.
    pub fn kernel_source(&self, p: &qsweep_core::contract::PointParams) -> String {
        self.pipelines.source(&Specialization::of(p))
    }

    /// Run one-server replications' segments and large central queues in
    /// `layout` whatever the adapter and batch: for tests, which run both
    /// layouts on one adapter.
    pub fn force_segment_layout(&mut self, layout: SegmentLayout) {
        self.segment_layout = Some(layout);
    }

    /// Test hook: compile every later pipeline from `map` applied to its
    /// WGSL source (`None`: back to the sources as they are). For
    /// tests/it/contraction.rs, which fuses every multiply-add in the IR, as a
    /// contracting driver may, and requires the CPU's streams all the same.
    #[doc(hidden)]
    pub fn map_sources(&mut self, map: Option<pipelines::SourceMap>) {
        self.pipelines.map_sources(map);
    }
}

impl Engine for GpuEngine {
    fn label(&self) -> String {
        self.gpu.desc.label()
    }

    fn device_seconds(&self) -> Option<f64> {
        Some(self.last_device_seconds)
    }

    fn device_report(&self) -> Option<DeviceReport> {
        Some(self.report.clone())
    }

    /// On hardware: calls of [`HARDWARE_CALL_REPS`] replications (the
    /// window permitting), the first sized by the expected rate. Always:
    /// no call with more results or histograms than one binding holds (the
    /// plan would refuse it; the run loop cuts it before).
    fn call_sizing(&self) -> CallSizing {
        call_sizing_for(&self.limits, self.hardware(), self.expected_rate)
    }

    fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
        Ok(self.run_timed(batch, Watch::none())?.0)
    }

    /// The call's passes stop at `watch`; its tiles are handed over at the
    /// end, each with its share of the call's wall time in proportion to the
    /// time of the passes it ran in (shared by customers).
    fn run_watched(
        &mut self,
        batch: &Batch,
        watch: Watch<'_>,
        done: &mut dyn FnMut(TileDone<'_>) -> Result<()>,
    ) -> Result<()> {
        if watch.stopped() {
            return Err(Cancelled.into());
        }
        let started = Instant::now();
        let (out, tile_seconds) = self.run_timed(batch, watch)?;
        self.learn_rate(batch, started.elapsed().as_secs_f64());
        // The passes counted the customers already.
        let counted = AtomicU64::new(0);
        let quiet = Watch {
            stop: watch.stop,
            customers: &counted,
        };
        let wall = started.elapsed().as_secs_f64();
        hand_over(batch, &out, &tile_seconds, wall, quiet, done)
    }
}

impl GpuEngine {
    /// After a call of `batch` that took `seconds`: on hardware, its rate
    /// becomes the expected one when the call filled the device (or beat
    /// the expectation: a partial call that is faster still says so).
    fn learn_rate(&mut self, batch: &Batch, seconds: f64) {
        if !self.hardware() || seconds <= 0.0 {
            return;
        }
        let work: f64 = batch
            .tiles
            .iter()
            .map(|t| qsweep_core::engine::tile_work(batch, t))
            .sum();
        let rate = work / seconds;
        let filled = batch.total_reps() as u64 >= HARDWARE_CALL_REPS;
        if filled || self.expected_rate.is_some_and(|r| rate > r) {
            self.expected_rate = Some(rate);
        }
    }

    /// How `batch`'s one-server segments and large central queues run: as
    /// forced, else as the adapter and the batch's size suit.
    fn layout_for(&self, batch: &Batch) -> Layouts {
        match self.segment_layout {
            Some(forced) => forced.into(),
            None => Layouts::for_batch(
                batch,
                self.gpu.desc.class == AdapterClass::Software,
                &self.limits,
            ),
        }
    }

    /// The batch's output and each tile's device seconds (in the batch's
    /// tile order).
    fn run_timed(&mut self, batch: &Batch, watch: Watch<'_>) -> Result<(BatchOutput, Vec<f64>)> {
        if batch.tiles.is_empty() {
            return Ok((BatchOutput::empty(batch.slots, 0), Vec::new()));
        }
        plan::check_gpu_limits(batch.params, self.gpu.desc.is_software)?;
        let plan = BatchPlan::new(batch, &self.limits, self.layout_for(batch))?;
        for d in &plan.dispatches {
            self.pipelines.get_or_compile(&self.gpu.device, d.spec)?;
        }
        let buffers = BatchBuffers::create(&self.gpu, batch, &plan)?;
        let (tally, times) = submit::run_passes(
            &self.gpu,
            &self.pipelines,
            &plan,
            batch.params,
            &buffers,
            &mut self.rates,
            self.timestamps,
            watch,
        )?;
        self.last_device_seconds = tally.device_seconds;
        submit::add_to_report(&mut self.report, &tally);
        let mut tile_seconds = vec![0.0; batch.tiles.len()];
        for (pos, &orig) in plan.order.iter().enumerate() {
            tile_seconds[orig] += times[pos];
        }
        let out = readback::batch_output(&self.gpu, batch, &plan, &buffers)?;
        Ok((out, tile_seconds))
    }
}

/// The [`CallSizing`] of a GPU engine on a device with `limits`, planned as
/// `hardware` or not, expecting `expected_rate`: the engine's own, and what
/// `tests.rs` replays an H200 with.
fn call_sizing_for(
    limits: &wgpu::Limits,
    hardware: bool,
    expected_rate: Option<f64>,
) -> CallSizing {
    let binding = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    let tile_bytes = u64::from(qsweep_core::contract::TILE_REPS)
        * std::mem::size_of::<qsweep_core::contract::RepResult>() as u64;
    let slot_bytes = u64::from(qsweep_core::contract::HIST_BINS)
        * u64::from(qsweep_core::contract::HIST_WORDS_PER_BIN)
        * 4;
    let (fill_reps, max_reps) = if hardware {
        (HARDWARE_CALL_REPS, HARDWARE_CALL_REPS)
    } else {
        (0, qsweep_core::engine::DEFAULT_MAX_CALL_REPS)
    };
    CallSizing {
        expected_rate,
        fill_reps,
        max_reps,
        max_tiles: (binding / tile_bytes).max(1),
        max_slots: (binding / slot_bytes).max(1),
    }
}

/// `QSWEEP_SEGMENT_LAYOUT` (`in-turn` or `side-by-side`), which forces the
/// one-server segments' and large central queues' layout on every batch
/// (side by side: cooperative): for the hardware check
/// (`scripts/gpu-check.sh`), which runs the default study both ways and
/// requires the same numbers. Unset: the adapter's and batch's choice.
fn segment_layout_from_env() -> Result<Option<SegmentLayout>> {
    adapter::env_choice(
        "QSWEEP_SEGMENT_LAYOUT",
        &[
            ("in-turn", SegmentLayout::InTurn),
            ("side-by-side", SegmentLayout::SideBySide),
        ],
    )
}

/// Refuse an adapter whose `limits` cannot hold the kernels this engine
/// would compile (their bindings, workgroup memory and size, read from
/// their IR: [`variants::largest_needs`]), naming each limit, before any
/// pipeline is compiled: a driver would refuse them one by one, mid-run.
fn check_limits(desc: &AdapterDesc, limits: &wgpu::Limits, preferred: HeapMemory) -> Result<()> {
    let mut short = Vec::new();
    for (needs, file) in
        variants::largest_needs(limits.max_compute_workgroup_storage_size, preferred)?
    {
        for s in needs.shortfalls(limits) {
            if !short.iter().any(|(have, _): &(String, String)| *have == s) {
                short.push((s, file.clone()));
            }
        }
    }
    if let Some((first, file)) = short.first() {
        bail!(
            "adapter {}: its limits cannot hold qsweep's kernels: {file} needs {first}{}; \
             --backend cpu runs without a GPU",
            desc.name,
            if short.len() > 1 {
                format!(" (and {} more shortfalls)", short.len() - 1)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// `QSWEEP_GPU_TIMESTAMPS`: `0` opens the device without timestamp queries
/// (as on adapters that lack them: GL, some Metal and DX12 drivers), to
/// test the host-timed path; unset or `1`: use them where the adapter has
/// them.
fn timestamps_allowed() -> Result<bool> {
    Ok(adapter::env_choice("QSWEEP_GPU_TIMESTAMPS", &[("0", false), ("1", true)])?.unwrap_or(true))
}

/// Every pipeline variant's (file name, WGSL source), for validation
/// ([`every_variant`]).
pub fn kernel_sources() -> Vec<(String, String)> {
    every_variant()
        .into_iter()
        .map(|v| (v.file, v.source))
        .collect()
}
