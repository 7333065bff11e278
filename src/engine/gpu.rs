//! The GPU engine: the WGSL kernels in `shaders/` run through wgpu on any
//! Vulkan, Metal, DX12 or GL adapter (lavapipe included).
//!
//! Each kernel is `common.wgsl` + `rng.wgsl` + `sampling.wgsl` + its own
//! file, so the sampling code exists once. A batch's tiles are grouped by
//! kernel and cut into dispatches sized from the measured throughput so each
//! stays near [`TARGET_DISPATCH_SECONDS`] (far from any OS watchdog), within
//! the adapter's buffer limits and 65535 workgroups per dimension.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use wgpu::util::DeviceExt;

use super::{Batch, BatchOutput, Engine};
use crate::contract::{kernel, RepResult, HISTS_PER_SLOT, HIST_BINS, TILE_REPS};

/// The shared WGSL prelude: contract declarations, random streams, samplers.
pub const PRELUDE_WGSL: &str = concat!(
    include_str!("../../shaders/common.wgsl"),
    "\n",
    include_str!("../../shaders/rng.wgsl"),
    "\n",
    include_str!("../../shaders/sampling.wgsl"),
    "\n"
);
pub const LINDLEY_WGSL: &str = include_str!("../../shaders/lindley.wgsl");
pub const KIEFER_WOLFOWITZ_WGSL: &str = include_str!("../../shaders/kiefer_wolfowitz.wgsl");

/// Full source of each kernel, as compiled.
pub fn kernel_sources() -> Vec<(&'static str, String)> {
    vec![
        ("lindley", format!("{PRELUDE_WGSL}{LINDLEY_WGSL}")),
        (
            "kiefer_wolfowitz",
            format!("{PRELUDE_WGSL}{KIEFER_WOLFOWITZ_WGSL}"),
        ),
    ]
}

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

struct Kernels {
    lindley: wgpu::ComputePipeline,
    kiefer_wolfowitz: wgpu::ComputePipeline,
}

/// An open device with compiled kernels.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    desc: AdapterDesc,
    limits: wgpu::Limits,
    kernels: Kernels,
    lost: Arc<AtomicBool>,
    /// Measured customers/s per kernel, for sizing dispatches.
    rate: [f64; 2],
    /// Seconds the device spent in the last `run` (wall time around waits).
    pub last_device_seconds: f64,
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
        let needed = HISTS_PER_SLOT * HIST_BINS * 4;
        if limits.max_compute_workgroup_storage_size < needed {
            bail!(
                "adapter {}: {} bytes of workgroup memory, the kernels need {needed}",
                desc.name,
                limits.max_compute_workgroup_storage_size
            );
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("qsweep"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .with_context(|| format!("adapter {}: cannot open a device", desc.name))?;
        let lost = Arc::new(AtomicBool::new(false));
        let lost_flag = lost.clone();
        device.set_device_lost_callback(move |_, _| lost_flag.store(true, Ordering::SeqCst));
        let kernels = Kernels {
            lindley: compile(&device, "lindley", LINDLEY_WGSL)?,
            kiefer_wolfowitz: compile(&device, "kiefer_wolfowitz", KIEFER_WOLFOWITZ_WGSL)?,
        };
        Ok(Self {
            device,
            queue,
            desc,
            limits,
            kernels,
            lost,
            rate: [INITIAL_RATE; 2],
            last_device_seconds: 0.0,
        })
    }

    pub fn adapter(&self) -> &AdapterDesc {
        &self.desc
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

fn compile(device: &wgpu::Device, name: &str, body: &str) -> Result<wgpu::ComputePipeline> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(format!("{PRELUDE_WGSL}{body}").into()),
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

/// A run of consecutive (reordered) tiles that one dispatch covers.
struct DispatchPlan {
    kernel: u32,
    tile_offset: u32,
    tiles: u32,
    /// Largest queue size among the tiles (heap rows, Kiefer–Wolfowitz only).
    max_servers: u32,
    customers: f64,
}

impl Engine for GpuEngine {
    fn label(&self) -> String {
        self.desc.label()
    }

    fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
        if batch.tiles.is_empty() {
            return Ok(BatchOutput::empty(batch.slots, 0));
        }
        // Group tiles by kernel, then by queue size, so each dispatch is uniform.
        let mut order: Vec<usize> = (0..batch.tiles.len()).collect();
        let key = |i: usize| {
            let p = &batch.params[batch.tiles[i].param_index as usize];
            (p.kernel, p.servers)
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
        let hist_words = u64::from(batch.slots) * u64::from(HISTS_PER_SLOT * HIST_BINS);
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

        // Plan dispatches.
        let heap_budget = max_binding.min(self.limits.max_buffer_size).min(1 << 30);
        let mut plans: Vec<DispatchPlan> = Vec::new();
        let mut i = 0usize;
        while i < tiles.len() {
            let p0 = &batch.params[tiles[i].param_index as usize];
            let k = p0.kernel;
            let target = self.rate[k as usize] * TARGET_DISPATCH_SECONDS;
            let mut plan = DispatchPlan {
                kernel: k,
                tile_offset: i as u32,
                tiles: 0,
                max_servers: 0,
                customers: 0.0,
            };
            while i < tiles.len() {
                let t = &tiles[i];
                let p = &batch.params[t.param_index as usize];
                if p.kernel != k {
                    break;
                }
                let work = f64::from(t.rep_count) * f64::from(p.warmup + p.customers);
                let servers = plan.max_servers.max(p.servers);
                let heap_bytes =
                    u64::from(plan.tiles + 1) * u64::from(TILE_REPS) * u64::from(servers) * 4;
                let too_big = plan.tiles > 0
                    && (plan.customers + work > target
                        || (k == kernel::KIEFER_WOLFOWITZ && heap_bytes > heap_budget)
                        || plan.tiles + 1 > MAX_GROUPS_PER_DIM * MAX_GROUPS_PER_DIM);
                if too_big {
                    break;
                }
                if k == kernel::KIEFER_WOLFOWITZ && heap_bytes > heap_budget {
                    bail!(
                        "central queue with {} servers needs {heap_bytes} bytes of heap per tile, over the adapter's {heap_budget}",
                        p.servers
                    );
                }
                plan.tiles += 1;
                plan.max_servers = servers;
                plan.customers += work;
                i += 1;
            }
            plans.push(plan);
        }
        let heap_size = plans
            .iter()
            .filter(|p| p.kernel == kernel::KIEFER_WOLFOWITZ)
            .map(|p| u64::from(p.tiles) * u64::from(TILE_REPS) * u64::from(p.max_servers) * 4)
            .max()
            .unwrap_or(4)
            .max(4);
        let heap_buf = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heap"),
            size: heap_size,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        self.check_error(scope, "allocating buffers")?;

        let mut device_seconds = 0.0;
        for plan in &plans {
            let groups_x = plan.tiles.min(MAX_GROUPS_PER_DIM);
            let groups_y = plan.tiles.div_ceil(groups_x);
            let info: [u32; 4] = [
                plan.tile_offset,
                plan.tiles,
                groups_x,
                plan.tiles * TILE_REPS,
            ];
            let info_buf = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("dispatch info"),
                contents: bytemuck::cast_slice(&info),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let pipeline = if plan.kernel == kernel::LINDLEY {
                &self.kernels.lindley
            } else {
                &self.kernels.kiefer_wolfowitz
            };
            let mut entries = vec![
                entry(0, &params_buf),
                entry(1, &tiles_buf),
                entry(2, &table_buf),
                entry(3, &results_buf),
                entry(4, &hist_buf),
                entry(5, &info_buf),
            ];
            if plan.kernel == kernel::KIEFER_WOLFOWITZ {
                entries.push(entry(6, &heap_buf));
            }
            let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
            let bind_group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
            let mut enc = dev.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(groups_x, groups_y, 1);
            }
            let started = Instant::now();
            self.queue.submit([enc.finish()]);
            dev.poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow!("waiting for {}: {e}", self.desc.name))?;
            let secs = started.elapsed().as_secs_f64();
            device_seconds += secs;
            self.check_error(scope, "a simulation dispatch")?;
            if secs > 0.0 && plan.customers > 0.0 {
                // Smooth towards the measured rate; never grow more than 4x at once.
                let measured = plan.customers / secs;
                let r = &mut self.rate[plan.kernel as usize];
                *r = measured.min(*r * 4.0);
            }
        }
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
            out.reps
                .extend_from_slice(&raw_results[base..base + tile.rep_count as usize]);
        }
        for (dst, &src) in out.hist.iter_mut().zip(&raw_hist) {
            *dst = u64::from(src);
        }
        Ok(out)
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
