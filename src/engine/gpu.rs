//! The GPU engine: the WGSL kernels in `shaders/` run through wgpu on any
//! Vulkan, Metal, DX12 or GL adapter (lavapipe included).
//!
//! Each kernel is `common.wgsl` + `rng.wgsl` + `sampling.wgsl` + its own
//! file, so the sampling code exists once. A batch's tiles are grouped by
//! kernel and cut into dispatches sized from the measured throughput so each
//! stays near [`TARGET_DISPATCH_SECONDS`] (far from any OS watchdog), within
//! the adapter's buffer limits and 65535 workgroups per dimension.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use wgpu::util::DeviceExt;

use super::{Batch, BatchOutput, Engine};
use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{
    dispatch, rep_status, Kernel, LawKind, PointParams, RepResult, Thinning, HIST_BINS, TILE_REPS,
};

/// What a pipeline is compiled for: the kernel and, as WGSL constants, the
/// arrival law, service law and thinning of its points, so the compiler
/// keeps only the samplers a point uses (a run-time switch over ten laws
/// costs up to 4x on some drivers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Specialization {
    pub kernel: Kernel,
    pub arrival: LawKind,
    pub service: LawKind,
    pub thinning: Thinning,
    /// Kiefer–Wolfowitz with at most [`PRIVATE_HEAP_SIZE`] servers: the heap
    /// in private memory during a pass.
    pub private_heap: bool,
}

/// Largest queue whose heap a kernel keeps in private memory.
pub const PRIVATE_HEAP_SIZE: u32 = 64;

impl Specialization {
    pub fn of(p: &PointParams) -> Self {
        Self {
            kernel: p.kernel(),
            arrival: p.arrival.kind(),
            service: p.service.kind(),
            thinning: p.effective_thinning(),
            private_heap: p.kernel() == Kernel::KieferWolfowitz && p.servers <= PRIVATE_HEAP_SIZE,
        }
    }

    fn name(&self) -> &'static str {
        match self.kernel {
            Kernel::Lindley => "lindley",
            Kernel::KieferWolfowitz => "kiefer_wolfowitz",
            Kernel::Dispatch => "dispatch",
        }
    }

    /// The full WGSL source of this pipeline.
    pub fn source(&self) -> String {
        let body = match self.kernel {
            Kernel::Lindley => LINDLEY_WGSL,
            Kernel::KieferWolfowitz => KIEFER_WOLFOWITZ_WGSL,
            Kernel::Dispatch => DISPATCH_WGSL,
        };
        format!(
            "{}const ARRIVAL_KIND: u32 = {}u;\nconst SERVICE_KIND: u32 = {}u;\nconst THINNING: u32 = {}u;\nconst PRIVATE_HEAP: bool = {};\nconst PRIVATE_HEAP_SIZE: u32 = {PRIVATE_HEAP_SIZE}u;\n{}\n{}\n{}\n{}\n{body}",
            crate::contract::wgsl::constants(),
            self.arrival.code(),
            self.service.code(),
            self.thinning.code(),
            self.private_heap,
            include_str!("../../shaders/common.wgsl"),
            include_str!("../../shaders/rng.wgsl"),
            include_str!("../../shaders/sampling.wgsl"),
            "",
        )
    }
}

pub const LINDLEY_WGSL: &str = include_str!("../../shaders/lindley.wgsl");
pub const PEAK_WGSL: &str = include_str!("../../shaders/peak.wgsl");

/// Loop iterations per invocation of the peak kernel (under lavapipe's
/// 65535, see [`LOOP_BUDGET`]).
const PEAK_ITERATIONS: u32 = 16_384;

/// Operations one invocation of `peak.wgsl` does: per iteration, eight vec4
/// multiply-adds of two operations per component.
const PEAK_OPS_PER_INVOCATION: f64 = PEAK_ITERATIONS as f64 * 8.0 * 4.0 * 2.0;

/// The full source of the peak kernel.
pub fn peak_source() -> String {
    format!("const PEAK_ITERATIONS: u32 = {PEAK_ITERATIONS}u;\n{PEAK_WGSL}")
}
pub const KIEFER_WOLFOWITZ_WGSL: &str = include_str!("../../shaders/kiefer_wolfowitz.wgsl");
pub const DISPATCH_WGSL: &str = include_str!("../../shaders/dispatch.wgsl");

/// Sources of a representative set of pipelines, for validation: each
/// kernel with every service law, every arrival law and every thinning.
pub fn kernel_sources() -> Vec<(String, String)> {
    let mut specs = Vec::new();
    for &kernel in Kernel::ALL {
        for &law in LawKind::ALL {
            for &thinning in Thinning::ALL {
                specs.push(Specialization {
                    kernel,
                    arrival: law,
                    service: LawKind::Exp,
                    thinning,
                    private_heap: false,
                });
            }
            specs.push(Specialization {
                kernel,
                arrival: LawKind::Exp,
                service: law,
                thinning: Thinning::None,
                private_heap: false,
            });
        }
    }
    let peak = ("peak".to_string(), peak_source());
    specs
        .into_iter()
        .map(|s| {
            (
                format!(
                    "{}[arrival {} service {} thinning {}]",
                    s.name(),
                    s.arrival.code(),
                    s.service.code(),
                    s.thinning.code()
                ),
                s.source(),
            )
        })
        .chain(std::iter::once(peak))
        .collect()
}

/// Servers in one Kiefer–Wolfowitz queue on the GPU, at most (its heap
/// loops run over all servers; the CPU engine has no such limit).
pub const MAX_GPU_SERVERS: u32 = 65_535;

/// Wall time one dispatch should take.
pub const TARGET_DISPATCH_SECONDS: f64 = 0.1;
/// Throughput assumed before the first measurement (customers/s).
const INITIAL_RATE: f64 = 2e7;
const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Which adapter to use.
#[derive(Clone, Debug, Default)]
pub struct AdapterChoice {
    /// Case-insensitive substring of the adapter name.
    pub name: Option<String>,
}

/// Description of an adapter, for `qsweep adapters` and the CSV.
#[derive(Clone, Debug)]
pub struct AdapterDesc {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub is_software: bool,
}

impl AdapterDesc {
    fn from_info(info: &wgpu::AdapterInfo) -> Self {
        let driver = if info.driver_info.is_empty() {
            info.driver.clone()
        } else {
            format!("{} {}", info.driver, info.driver_info)
        };
        Self {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend).to_lowercase(),
            device_type: format!("{:?}", info.device_type),
            driver,
            is_software: info.device_type == wgpu::DeviceType::Cpu,
        }
    }

    /// `backend:name`, the CSV's `backend` column for GPU rows.
    pub fn label(&self) -> String {
        format!("{}:{}", self.backend, self.name)
    }
}

fn instance() -> wgpu::Instance {
    // Mesa's device-select layer probes Wayland/X11 for a display and prints
    // an error on headless machines; qsweep never presents, so skip it.
    static QUIET_MESA: std::sync::Once = std::sync::Once::new();
    QUIET_MESA.call_once(|| {
        if std::env::var_os("NODEVICE_SELECT").is_none() {
            std::env::set_var("NODEVICE_SELECT", "1");
        }
    });
    // Respects WGPU_BACKEND and the other WGPU_* variables.
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Adapters to consider: those of `WGPU_BACKEND` when set; otherwise the
/// primary backends (Vulkan, Metal, DX12), and GL only where none of them
/// has an adapter (probing GL without a display spams stderr on Linux).
fn enumerate(inst: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    if let Some(backends) = wgpu::Backends::from_env() {
        return pollster::block_on(inst.enumerate_adapters(backends));
    }
    let primary = pollster::block_on(inst.enumerate_adapters(wgpu::Backends::PRIMARY));
    if !primary.is_empty() {
        return primary;
    }
    pollster::block_on(inst.enumerate_adapters(wgpu::Backends::SECONDARY))
}

/// Every adapter qsweep can use, in enumeration order.
pub fn list_adapters() -> Vec<AdapterDesc> {
    enumerate(&instance())
        .iter()
        .map(|a| AdapterDesc::from_info(&a.get_info()))
        .collect()
}

/// An open device with compiled kernels.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    desc: AdapterDesc,
    limits: wgpu::Limits,
    /// Pipelines compiled so far, by specialization.
    pipelines: HashMap<Specialization, wgpu::ComputePipeline>,
    lost: Arc<AtomicBool>,
    /// Measured customers/s per kernel, for sizing dispatches.
    rate: [f64; 3],
    /// Seconds the device spent in the last `run`: summed timestamp queries
    /// around each pass where the adapter has them, else the host's wait.
    pub last_device_seconds: f64,
    /// Whether `last_device_seconds` comes from timestamp queries.
    pub timestamps: bool,
}

impl GpuEngine {
    /// Open an adapter: the named one, or wgpu's high-performance choice
    /// (hardware before software).
    pub fn open(choice: &AdapterChoice) -> Result<Self> {
        let inst = instance();
        let mut adapters = enumerate(&inst);
        let adapter = match &choice.name {
            Some(name) => {
                let needle = name.to_lowercase();
                adapters
                    .into_iter()
                    .find(|a| a.get_info().name.to_lowercase().contains(&needle))
                    .ok_or_else(|| {
                        anyhow!(
                            "--adapter: no adapter matches '{name}'; `qsweep adapters` lists them"
                        )
                    })?
            }
            None => {
                // Hardware first (discrete, integrated, virtual), then software.
                adapters.sort_by_key(|a| match a.get_info().device_type {
                    wgpu::DeviceType::DiscreteGpu => 0,
                    wgpu::DeviceType::IntegratedGpu => 1,
                    wgpu::DeviceType::VirtualGpu => 2,
                    wgpu::DeviceType::Other => 3,
                    wgpu::DeviceType::Cpu => 4,
                });
                adapters
                    .into_iter()
                    .next()
                    .ok_or_else(|| anyhow!("no GPU adapter found"))?
            }
        };
        Self::from_adapter(adapter)
    }

    fn from_adapter(adapter: wgpu::Adapter) -> Result<Self> {
        let desc = AdapterDesc::from_info(&adapter.get_info());
        let limits = adapter.limits();
        let needed = HIST_BINS * 4;
        if limits.max_compute_workgroup_storage_size < needed {
            bail!(
                "adapter {}: {} bytes of workgroup memory, the kernels need {needed}",
                desc.name,
                limits.max_compute_workgroup_storage_size
            );
        }
        // Timestamp queries, where the adapter has them, time each pass on
        // the device itself (`device_seconds`).
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
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
        let mut engine = Self {
            device,
            queue,
            desc,
            limits,
            pipelines: HashMap::new(),
            lost,
            rate: [INITIAL_RATE; 3],
            last_device_seconds: 0.0,
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
        };
        // Compile the commonest pipelines now, so a broken driver fails here.
        for kernel in [Kernel::Lindley, Kernel::KieferWolfowitz] {
            engine.pipeline(Specialization {
                kernel,
                arrival: LawKind::Exp,
                service: LawKind::Exp,
                thinning: Thinning::None,
                private_heap: false,
            })?;
        }
        Ok(engine)
    }

    /// The pipeline for `spec`, compiled on first use.
    fn pipeline(&mut self, spec: Specialization) -> Result<wgpu::ComputePipeline> {
        if let Some(p) = self.pipelines.get(&spec) {
            return Ok(p.clone());
        }
        let p = compile(&self.device, spec.name(), &spec.source())?;
        self.pipelines.insert(spec, p.clone());
        Ok(p)
    }

    pub fn adapter(&self) -> &AdapterDesc {
        &self.desc
    }

    /// The adapter's measured peak f32 arithmetic rate (operations/s, a
    /// multiply-add counting two), from `shaders/peak.wgsl` dispatched
    /// wider until one dispatch lasts `seconds`. Timed on the device where
    /// the adapter has timestamp queries.
    pub fn peak_ops_per_second(&mut self, seconds: f64) -> Result<f64> {
        let dev = &self.device;
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
        let timer = self.timestamps.then(|| PassTimer::new(dev, &self.queue));
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
                t.resolve(&mut enc, 0);
            }
            let started = Instant::now();
            let index = self.queue.submit([enc.finish()]);
            dev.poll(wgpu::PollType::Wait {
                submission_index: Some(index.clone()),
                timeout: None,
            })
            .map_err(|e| anyhow!("waiting for {}: {e}", self.desc.name))?;
            let wall = started.elapsed().as_secs_f64();
            self.check_error(scope, "the peak-throughput dispatch")?;
            let secs = match &timer {
                Some(t) => t.seconds(dev, 0, index)?,
                None => wall,
            };
            let invocations = (u64::from(groups_x) * u64::from(groups_y) * 64) as f64;
            if wall >= seconds || groups >= max_groups {
                return Ok(invocations * PEAK_OPS_PER_INVOCATION / secs.max(1e-9));
            }
            // Grow toward the target, at most 8x at once (watchdogs).
            let grow = (1.2 * seconds / wall.max(1e-4)).clamp(2.0, 8.0);
            groups = ((groups as f64 * grow) as u64).min(max_groups);
        }
    }

    fn check_error(&self, scope: wgpu::ErrorScopeGuard, what: &str) -> Result<()> {
        if let Some(err) = pollster::block_on(scope.pop()) {
            bail!("{} on {}: {err}", what, self.desc.name);
        }
        if self.lost.load(Ordering::SeqCst) {
            bail!("device lost on {} during {what}", self.desc.name);
        }
        Ok(())
    }
}

fn compile(device: &wgpu::Device, name: &str, source: &str) -> Result<wgpu::ComputePipeline> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(err) = pollster::block_on(scope.pop()) {
        bail!("shader {name}.wgsl failed to compile: {err}");
    }
    Ok(pipeline)
}

/// Loop iterations one invocation may spend per pass. llvmpipe/lavapipe
/// (Mesa's `LP_MAX_TGSI_LOOP_ITERATIONS`) silently ends every loop once an
/// invocation has run 65535 iterations in total, so replications are run in
/// passes of a bounded number of customers, their state saved in between.
/// Short passes also keep every dispatch far from OS GPU watchdogs.
pub const LOOP_BUDGET: u64 = 48_000;

/// Size of a replication's saved state (`LaneState` in common.wgsl).
const LANE_STATE_BYTES: u64 = 112;

/// Customers per pass for a point: within [`LOOP_BUDGET`] after the first
/// pass's set-up loops (stream, histogram, heap initialisation).
pub fn pass_customers(p: &PointParams) -> u32 {
    let setup = 200
        + if p.kernel() == Kernel::KieferWolfowitz {
            u64::from(p.servers)
        } else {
            0
        };
    let budget = LOOP_BUDGET.saturating_sub(setup).max(1);
    (budget / loop_cost_per_customer(p)).clamp(1, u64::from(u32::MAX)) as u32
}

/// Tiles of one kernel and queue size that run together, pass by pass.
struct DispatchPlan {
    spec: Specialization,
    tile_offset: u32,
    tiles: u32,
    /// Largest queue size among the tiles (heap rows, Kiefer–Wolfowitz only).
    max_servers: u32,
    /// Largest per-replication state among the tiles (words, dispatch only).
    max_words: u64,
    /// Customers per pass (the smallest over the tiles' points).
    pass: u32,
    /// Longest replication (warm-up included) among the tiles.
    max_total: u32,
}

impl Engine for GpuEngine {
    fn label(&self) -> String {
        self.desc.label()
    }

    fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
        if batch.tiles.is_empty() {
            return Ok(BatchOutput::empty(batch.slots, 0));
        }
        for p in batch.params {
            if p.kernel() == Kernel::Dispatch && loop_cost_per_customer(p) + 200 > LOOP_BUDGET {
                bail!(
                    "grid point {}: one customer of dispatch policy {} with {} servers takes more \
                     loop iterations than a GPU pass allows (use --backend cpu)",
                    p.point_index,
                    p.route_n,
                    p.servers
                );
            }
            if p.kernel() == Kernel::KieferWolfowitz && p.servers > MAX_GPU_SERVERS {
                bail!(
                    "grid point {}: {} servers in one queue exceeds the GPU kernels' {MAX_GPU_SERVERS} (use --backend cpu)",
                    p.point_index,
                    p.servers
                );
            }
        }
        for p in batch.params {
            self.pipeline(Specialization::of(p))?;
        }
        // Group tiles by pipeline, then by queue size, so each dispatch is uniform.
        let mut order: Vec<usize> = (0..batch.tiles.len()).collect();
        let key = |i: usize| {
            let p = &batch.params[batch.tiles[i].param_index as usize];
            (Specialization::of(p), p.servers)
        };
        order.sort_by_key(|&i| key(i));
        let tiles: Vec<_> = order.iter().map(|&i| batch.tiles[i]).collect();

        let dev = &self.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let storage = |label: &str, contents: &[u8]| {
            dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let params_buf = storage("params", bytemuck::cast_slice(batch.params));
        let tiles_buf = storage("tiles", bytemuck::cast_slice(&tiles));
        let table: &[f32] = if batch.table.is_empty() {
            &[0.0]
        } else {
            batch.table
        };
        let table_buf = storage("table", bytemuck::cast_slice(table));
        let results_size =
            (tiles.len() as u64) * u64::from(TILE_REPS) * std::mem::size_of::<RepResult>() as u64;
        let hist_words = u64::from(batch.slots) * u64::from(HIST_BINS);
        let max_binding = self.limits.max_storage_buffer_binding_size;
        if results_size > max_binding || hist_words * 4 > max_binding {
            bail!("batch too large for one binding ({results_size} bytes of results)");
        }
        let results_buf = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("results"),
            size: results_size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let hist_buf = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("hist"),
            contents: &vec![0u8; (hist_words * 4) as usize],
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });

        // Plan: consecutive tiles of one kernel, within memory limits and
        // sized so that one pass takes about TARGET_DISPATCH_SECONDS.
        let mem_budget = max_binding.min(self.limits.max_buffer_size).min(1 << 30);
        let mut plans: Vec<DispatchPlan> = Vec::new();
        let mut i = 0usize;
        while i < tiles.len() {
            let spec = Specialization::of(&batch.params[tiles[i].param_index as usize]);
            let k = spec.kernel;
            let target = self.rate[k as usize] * TARGET_DISPATCH_SECONDS;
            let mut plan = DispatchPlan {
                spec,
                tile_offset: i as u32,
                tiles: 0,
                max_servers: 0,
                max_words: 0,
                pass: u32::MAX,
                max_total: 0,
            };
            while i < tiles.len() {
                let p = &batch.params[tiles[i].param_index as usize];
                if Specialization::of(p) != spec {
                    break;
                }
                let servers = plan.max_servers.max(p.servers);
                let pass = plan.pass.min(pass_customers(p));
                let lanes = u64::from(plan.tiles + 1) * u64::from(TILE_REPS);
                let words = if k == Kernel::Dispatch {
                    plan.max_words.max(dispatch::state_words(p))
                } else {
                    0
                };
                let heap_bytes = match k {
                    Kernel::KieferWolfowitz => lanes * u64::from(servers) * 4,
                    Kernel::Dispatch => lanes * words * 4,
                    Kernel::Lindley => 0,
                };
                let pass_work = lanes as f64 * f64::from(pass);
                if plan.tiles > 0
                    && (pass_work > target
                        || heap_bytes > mem_budget
                        || lanes * LANE_STATE_BYTES > mem_budget
                        || plan.tiles + 1 > MAX_GROUPS_PER_DIM * MAX_GROUPS_PER_DIM)
                {
                    break;
                }
                if heap_bytes > mem_budget && k == Kernel::Dispatch {
                    bail!(
                        "grid point {}: {} servers and {} routers need {heap_bytes} bytes of \
                         dispatch state per tile, over the adapter's {mem_budget} (use --backend cpu)",
                        p.point_index,
                        p.servers,
                        p.routers.max(1)
                    );
                }
                if heap_bytes > mem_budget {
                    bail!(
                        "grid point {}: a central queue of {} servers needs {heap_bytes} bytes of heap per tile, over the adapter's {mem_budget}",
                        p.point_index,
                        p.servers
                    );
                }
                plan.tiles += 1;
                plan.max_servers = servers;
                plan.max_words = words;
                plan.pass = pass;
                plan.max_total = plan.max_total.max(p.warmup + p.customers);
                i += 1;
            }
            plans.push(plan);
        }
        let max_lanes = plans
            .iter()
            .map(|p| u64::from(p.tiles) * u64::from(TILE_REPS))
            .max()
            .unwrap_or(1);
        // Binding 6: the Kiefer–Wolfowitz heaps or the dispatch kernel's state.
        let heap_size = plans
            .iter()
            .map(|p| {
                let lanes = u64::from(p.tiles) * u64::from(TILE_REPS);
                match p.spec.kernel {
                    Kernel::KieferWolfowitz => lanes * u64::from(p.max_servers) * 4,
                    Kernel::Dispatch => lanes * p.max_words * 4,
                    Kernel::Lindley => 0,
                }
            })
            .max()
            .unwrap_or(4)
            .max(4);
        let heap_buf = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heap"),
            size: heap_size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let state_buf = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("lane state"),
            size: max_lanes * LANE_STATE_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        self.check_error(scope, "allocating buffers")?;

        // Passes are queued PASSES_IN_FLIGHT deep: the device starts the next
        // as soon as one ends instead of idling while the host reads the
        // last one's timer and encodes the next (the queue runs them in
        // order, so a replication's passes still follow one another).
        let timer = self.timestamps.then(|| PassTimer::new(dev, &self.queue));
        let mut tracker = PassTracker::default();
        for plan in &plans {
            let groups_x = plan.tiles.min(MAX_GROUPS_PER_DIM);
            let groups_y = plan.tiles.div_ceil(groups_x);
            let pipeline = &self.pipelines[&plan.spec];
            let layout = pipeline.get_bind_group_layout(0);
            let mut begin = 0u32;
            while begin < plan.max_total {
                let end = begin.saturating_add(plan.pass);
                let info: [u32; 8] = [
                    plan.tile_offset,
                    plan.tiles,
                    groups_x,
                    plan.tiles * TILE_REPS,
                    begin,
                    end,
                    0,
                    0,
                ];
                let info_buf = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("dispatch info"),
                    contents: bytemuck::cast_slice(&info),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let mut entries = vec![
                    entry(0, &params_buf),
                    entry(1, &tiles_buf),
                    entry(2, &table_buf),
                    entry(3, &results_buf),
                    entry(4, &hist_buf),
                    entry(5, &info_buf),
                    entry(7, &state_buf),
                ];
                if plan.spec.kernel != Kernel::Lindley {
                    entries.push(entry(6, &heap_buf));
                }
                // The oldest pass leaves the queue before its timer slot is reused.
                if tracker.in_flight.len() == PASSES_IN_FLIGHT {
                    let engine = (dev, &self.desc, &*self.lost);
                    tracker.retire_oldest(engine, &mut self.rate, timer.as_ref())?;
                }
                let slot = tracker.submitted % PASSES_IN_FLIGHT;
                let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
                let bind_group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &entries,
                });
                let mut enc = dev.create_command_encoder(&Default::default());
                if plan.spec.kernel == Kernel::Dispatch && begin == 0 {
                    // All-zero state is the empty system (see dispatch.wgsl).
                    let lanes = u64::from(plan.tiles) * u64::from(TILE_REPS);
                    enc.clear_buffer(&heap_buf, 0, Some(lanes * plan.max_words * 4));
                }
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: None,
                        timestamp_writes: timer.as_ref().map(|t| t.writes(slot)),
                    });
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, &bind_group, &[]);
                    pass.dispatch_workgroups(groups_x, groups_y, 1);
                }
                if let Some(t) = &timer {
                    t.resolve(&mut enc, slot);
                }
                let index = self.queue.submit([enc.finish()]);
                // Validation errors surface at submission; device loss is
                // checked again when the pass is retired.
                self.check_error(scope, "a simulation dispatch")?;
                tracker.submitted += 1;
                tracker.in_flight.push_back(SubmittedPass {
                    index,
                    slot,
                    submitted: Instant::now(),
                    kernel: plan.spec.kernel as usize,
                    work: f64::from(plan.tiles)
                        * f64::from(TILE_REPS)
                        * f64::from(end.min(plan.max_total) - begin),
                });
                begin = end;
            }
        }
        while !tracker.in_flight.is_empty() {
            let engine = (dev, &self.desc, &*self.lost);
            tracker.retire_oldest(engine, &mut self.rate, timer.as_ref())?;
        }
        let device_seconds = tracker.device_seconds;
        self.last_device_seconds = device_seconds;

        // Read back.
        let raw_results: Vec<RepResult> =
            read_buffer(dev, &self.queue, &results_buf, results_size)?;
        let raw_hist: Vec<u32> = read_buffer(dev, &self.queue, &hist_buf, hist_words * 4)?;
        if self.lost.load(Ordering::SeqCst) {
            bail!("device lost on {} while reading results", self.desc.name);
        }
        // Undo the reordering: results in the caller's tile order.
        let mut position = vec![0usize; tiles.len()];
        for (pos, &orig) in order.iter().enumerate() {
            position[orig] = pos;
        }
        let mut out = BatchOutput::empty(batch.slots, batch.total_reps());
        for (orig, tile) in batch.tiles.iter().enumerate() {
            let base = position[orig] * TILE_REPS as usize;
            let reps = &raw_results[base..base + tile.rep_count as usize];
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
                    self.desc.name,
                    r.customers,
                    p.customers
                );
            }
            out.reps.extend_from_slice(reps);
        }
        for (dst, &src) in out.hist.iter_mut().zip(&raw_hist) {
            *dst = u64::from(src);
        }
        Ok(out)
    }
}

/// Simulation passes queued on the device at once (see `GpuEngine::run`).
const PASSES_IN_FLIGHT: usize = 2;

/// A submitted pass, until it is retired.
struct SubmittedPass {
    index: wgpu::SubmissionIndex,
    /// Its slot in the [`PassTimer`].
    slot: usize,
    submitted: Instant,
    kernel: usize,
    /// Customers it simulates.
    work: f64,
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
}

/// Timestamp queries around each pass, one slot per pass in flight, each
/// with its own staging buffer so reading one slot never waits for another.
struct PassTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: Vec<wgpu::Buffer>,
    /// Nanoseconds per tick.
    period: f64,
}

impl PassTimer {
    fn new(dev: &wgpu::Device, queue: &wgpu::Queue) -> Self {
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

    fn writes(&self, slot: usize) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * slot as u32),
            end_of_pass_write_index: Some(2 * slot as u32 + 1),
        }
    }

    fn resolve(&self, enc: &mut wgpu::CommandEncoder, slot: usize) {
        let first = 2 * slot as u32;
        let offset = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT * slot as u64;
        enc.resolve_query_set(&self.set, first..first + 2, &self.resolve, offset);
        enc.copy_buffer_to_buffer(&self.resolve, offset, &self.staging[slot], 0, 16);
    }

    /// Device seconds of the pass in `slot`, submitted as `index`, once
    /// that submission is done (without waiting for later ones).
    fn seconds(
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

impl PassTracker {
    /// Wait for the oldest pass in flight, add its device time, and update
    /// its kernel's measured rate in `rate` (which sizes later dispatches).
    fn retire_oldest(
        &mut self,
        engine: (&wgpu::Device, &AdapterDesc, &AtomicBool),
        rate: &mut [f64; 3],
        timer: Option<&PassTimer>,
    ) -> Result<()> {
        let pass = self.in_flight.pop_front().expect("a pass in flight");
        let (device, desc, lost) = engine;
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(pass.index.clone()),
                timeout: None,
            })
            .map_err(|e| anyhow!("waiting for {}: {e}", desc.name))?;
        if lost.load(Ordering::SeqCst) {
            bail!("device lost on {} during a simulation dispatch", desc.name);
        }
        let now = Instant::now();
        let started = self
            .last_retired
            .map_or(pass.submitted, |t| t.max(pass.submitted));
        self.last_retired = Some(now);
        let wall = now.duration_since(started).as_secs_f64();
        let secs = match timer {
            Some(t) => t.seconds(device, pass.slot, pass.index)?,
            None => wall,
        };
        self.device_seconds += secs;
        if secs > 0.0 {
            // Track the measured rate; never grow more than 4x at once.
            let r = &mut rate[pass.kernel];
            *r = (pass.work / secs).min(*r * 4.0);
        }
        Ok(())
    }
}

fn entry(binding: u32, buf: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buf.as_entire_binding(),
    }
}

fn read_buffer<T: bytemuck::Pod>(
    dev: &wgpu::Device,
    queue: &wgpu::Queue,
    src: &wgpu::Buffer,
    size: u64,
) -> Result<Vec<T>> {
    let staging = dev.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = dev.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(src, 0, &staging, 0, size);
    queue.submit([enc.finish()]);
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
