//! Compute pipelines: what one is specialised for ([`Specialization`]), the
//! WGSL it is compiled from, and compiling and caching them per device.
//!
//! Each kernel's source is the contract's generated constants
//! (`contract::wgsl`), this pipeline's specialization constants, then
//! `shaders/common.wgsl`, `rng.wgsl`, `sampling.wgsl` and the kernel's own
//! file, so the sampling code exists once.

use std::collections::HashMap;

use anyhow::{bail, Result};

use qsweep_core::contract::{
    Kernel, LawKind, PointParams, Reneging, Thinning, HIST_BINS, TILE_REPS,
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
    /// What a request's patience does, as the WGSL constant `RENEGING`:
    /// without patience the kernels compile to the plain queue (the
    /// patience law itself is read at run time, `draw` in sampling.wgsl: one
    /// more law per request is not worth a pipeline per patience law).
    pub reneging: Reneging,
    /// Kiefer–Wolfowitz under a capacity (`PointParams::system_limit`), as
    /// the WGSL constant `LIMITED`: arrivals that find the queue full are
    /// refused; without, the kernel compiles to the unlimited queue.
    pub limited: bool,
    /// Kiefer–Wolfowitz: the servers a queue's heap may have to be held in
    /// fast memory during a pass (a power of two from 8 to
    /// [`FAST_HEAP_MAX_SERVERS`], so a few pipelines serve every small queue
    /// and none reserves more than it needs); a larger queue's heap stays
    /// in storage memory, chosen per workgroup in the same pipeline. 0: no
    /// fast heap.
    pub fast_heap: u32,
}

/// Workgroup memory of kiefer_wolfowitz.wgsl's cooperative scan: its four
/// u32 atomics (`coop`) and the tile's choice (`tile_cooperative`), each
/// rounded up to 16 bytes.
const COOPERATIVE_WORKGROUP_BYTES: u64 = 32;

/// Largest queue whose heap a kernel keeps in fast memory during a pass.
pub const FAST_HEAP_MAX_SERVERS: u32 = 64;

/// Servers from which a central queue's replication may be run by a whole
/// workgroup (`run_cooperative` in kiefer_wolfowitz.wgsl): the queues
/// whose heap no fast memory holds, so that one invocation's sift walks
/// storage memory, a dependent load per level.
pub const COOPERATIVE_MIN_SERVERS: u32 = FAST_HEAP_MAX_SERVERS + 1;

/// Where a pipeline keeps its fast heap during a pass.
///
/// On a hardware GPU but AMD's, in workgroup memory laid out
/// `[server][lane]` where the adapter has room beside the tile's
/// histogram: a private array indexed by data (the heap's sift) is not
/// kept in registers, and NVIDIA spills it to local memory, a cache line
/// per invocation and level, while in workgroup memory the 64 lanes of one
/// level are 64 consecutive words, one per bank. AMD's compiler keeps it in
/// registers ([`HeapMemory::preferred_for`]). On a software adapter
/// (lavapipe) both are plain memory and the private array is the faster
/// (central M/M/51 on lavapipe: 4.2–4.6e7 customers/s private, 4.0–4.1e7
/// in workgroup memory), so it keeps that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapMemory {
    Workgroup,
    Private,
}

/// AMD's PCI vendor ID.
const AMD_VENDOR: u32 = 0x1002;

impl HeapMemory {
    /// Where `adapter` keeps small heaps unless a test says otherwise:
    /// private memory on a software adapter and on AMD, workgroup memory on
    /// other hardware. On AMD, ACO keeps a private heap of up to 64 servers
    /// in registers (indexed, no scratch: 72–136 VGPRs, 3–4 wave64 per
    /// SIMD), while the same heap in workgroup memory takes 9.7–24 KB of
    /// LDS beside the tile's histogram and caps a SIMD at 3 down to 1.25
    /// waves (Mesa 22.3's ACO for RDNA2 and RDNA3, `scripts/aco-report.sh`,
    /// `data/aco/`); NVIDIA spills such a private array to local memory.
    pub fn preferred_for(adapter: &super::AdapterDesc) -> Self {
        match adapter.class {
            super::AdapterClass::Software => HeapMemory::Private,
            super::AdapterClass::Hardware if adapter.vendor == AMD_VENDOR => HeapMemory::Private,
            super::AdapterClass::Hardware => HeapMemory::Workgroup,
        }
    }

    /// Where `servers` heap slots per lane go on an adapter with
    /// `workgroup_bytes` of workgroup memory (the tile's histogram takes
    /// [`HIST_BINS`] words of it), given the adapter's `preferred` place.
    pub fn for_adapter(servers: u32, workgroup_bytes: u32, preferred: HeapMemory) -> Self {
        // Each workgroup array counts rounded up to 16 bytes (WebGPU's rule).
        let heap = (u64::from(servers) * u64::from(TILE_REPS) * 4).next_multiple_of(16);
        let hist = (u64::from(HIST_BINS) * 4).next_multiple_of(16);
        let fits = heap + hist + COOPERATIVE_WORKGROUP_BYTES <= u64::from(workgroup_bytes);
        if preferred == HeapMemory::Workgroup && fits {
            HeapMemory::Workgroup
        } else {
            HeapMemory::Private
        }
    }
}

const COMMON_WGSL: &str = include_str!("../../../shaders/common.wgsl");
const RNG_WGSL: &str = include_str!("../../../shaders/rng.wgsl");
const SAMPLING_WGSL: &str = include_str!("../../../shaders/sampling.wgsl");
pub const LINDLEY_WGSL: &str = include_str!("../../../shaders/lindley.wgsl");
pub const KIEFER_WOLFOWITZ_WGSL: &str = include_str!("../../../shaders/kiefer_wolfowitz.wgsl");
pub const DISPATCH_WGSL: &str = include_str!("../../../shaders/dispatch.wgsl");

impl Specialization {
    pub fn of(p: &PointParams) -> Self {
        Self {
            kernel: p.kernel(),
            arrival: p.arrival.kind(),
            service: p.service.kind(),
            thinning: p.effective_thinning(),
            reneging: p.reneging(),
            limited: p.limited(),
            fast_heap: if p.kernel() == Kernel::KieferWolfowitz
                && p.servers <= FAST_HEAP_MAX_SERVERS
            {
                p.servers.max(8).next_power_of_two()
            } else {
                0
            },
        }
    }

    /// The plainest pipeline of `kernel`: exponential laws, no thinning.
    pub(super) fn plain(kernel: Kernel) -> Self {
        Self {
            kernel,
            arrival: LawKind::Exp,
            service: LawKind::Exp,
            thinning: Thinning::None,
            reneging: Reneging::None,
            limited: false,
            fast_heap: 0,
        }
    }

    /// The kernel's file name in `shaders/`, without `.wgsl`.
    pub(super) fn name(&self) -> &'static str {
        match self.kernel {
            Kernel::Lindley => "lindley",
            Kernel::KieferWolfowitz => "kiefer_wolfowitz",
            Kernel::Dispatch => "dispatch",
        }
    }

    /// The full WGSL source of this pipeline, its fast heap (if any) in
    /// `memory`.
    pub fn source(&self, memory: HeapMemory) -> String {
        let body = match self.kernel {
            Kernel::Lindley => LINDLEY_WGSL,
            Kernel::KieferWolfowitz => KIEFER_WOLFOWITZ_WGSL,
            Kernel::Dispatch => DISPATCH_WGSL,
        };
        format!(
            "{contract}\
             const ARRIVAL_KIND: u32 = {arrival}u;\n\
             const SERVICE_KIND: u32 = {service}u;\n\
             const THINNING: u32 = {thinning}u;\n\
             const RENEGING: u32 = {reneging}u;\n\
             const LIMITED: bool = {limited};\n\
             const FAST_HEAP: bool = {fast};\n\
             const FAST_HEAP_SERVERS: u32 = {fast_servers}u;\n\
             const FAST_HEAP_IN_WORKGROUP: bool = {in_workgroup};\n\
             const PRIVATE_HEAP_LEN: u32 = {private_len}u;\n\
             const WORKGROUP_HEAP_LEN: u32 = {workgroup_len}u;\n\
             const COOPERATIVE_MIN_SERVERS: u32 = {cooperative}u;\n\
             {COMMON_WGSL}\n{RNG_WGSL}\n{SAMPLING_WGSL}\n\n{body}",
            contract = qsweep_core::contract::wgsl::constants(),
            arrival = self.arrival.code(),
            service = self.service.code(),
            thinning = self.thinning.code(),
            reneging = self.reneging.code(),
            limited = self.limited,
            fast = self.fast_heap > 0,
            fast_servers = self.fast_heap,
            cooperative = COOPERATIVE_MIN_SERVERS,
            in_workgroup = memory == HeapMemory::Workgroup,
            // Arrays of one element where unused: WGSL has no empty array.
            private_len = match memory {
                HeapMemory::Private => self.fast_heap.max(1),
                HeapMemory::Workgroup => 1,
            },
            workgroup_len = match memory {
                HeapMemory::Workgroup => (self.fast_heap * TILE_REPS).max(1),
                HeapMemory::Private => 1,
            },
        )
    }
}

/// Compile `source`'s entry point `main`; `name` labels it in errors.
pub(super) fn compile(
    device: &wgpu::Device,
    name: &str,
    source: &str,
) -> Result<wgpu::ComputePipeline> {
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

/// The pipelines compiled so far on one device, by specialization.
pub(super) struct PipelineCache {
    compiled: HashMap<Specialization, wgpu::ComputePipeline>,
    /// The device's workgroup memory and preferred place of a fast heap,
    /// which decide where each heap goes ([`HeapMemory::for_adapter`]).
    workgroup_bytes: u32,
    preferred: HeapMemory,
    /// Test hook ([`Self::map_sources`]): rewrites each source before it is
    /// compiled. `None` in every real run.
    source_map: Option<SourceMap>,
}

/// A rewrite of a pipeline's WGSL source, applied before compiling it: for
/// tests only (tests/it/contraction.rs compiles the kernels with every
/// multiply-add fused, as a contracting driver would).
pub type SourceMap = std::sync::Arc<dyn Fn(&str) -> String + Send + Sync>;

impl PipelineCache {
    pub fn new(limits: &wgpu::Limits, preferred: HeapMemory) -> Self {
        Self {
            compiled: HashMap::new(),
            workgroup_bytes: limits.max_compute_workgroup_storage_size,
            preferred,
            source_map: None,
        }
    }

    /// Test hook: compile later pipelines from `map` applied to their
    /// source (`None`: the source as it is); pipelines compiled before are
    /// dropped.
    pub fn map_sources(&mut self, map: Option<SourceMap>) {
        self.source_map = map;
        self.compiled.clear();
    }

    /// Compile later pipelines with fast heaps `preferred` (tests run both
    /// places on one adapter); pipelines compiled before are dropped.
    pub fn prefer(&mut self, preferred: HeapMemory) {
        if preferred != self.preferred {
            self.preferred = preferred;
            self.compiled.clear();
        }
    }

    /// The pipeline for `spec`, compiled on first use.
    pub fn get_or_compile(
        &mut self,
        device: &wgpu::Device,
        spec: Specialization,
    ) -> Result<wgpu::ComputePipeline> {
        if let Some(p) = self.compiled.get(&spec) {
            return Ok(p.clone());
        }
        let mut source = self.source(&spec);
        if let Some(map) = &self.source_map {
            source = map(&source);
        }
        let p = compile(device, spec.name(), &source)?;
        self.compiled.insert(spec, p.clone());
        Ok(p)
    }

    /// The source [`Self::get_or_compile`] compiles for `spec` on this
    /// device: its fast heap where [`HeapMemory::for_adapter`] puts it.
    pub fn source(&self, spec: &Specialization) -> String {
        let memory = HeapMemory::for_adapter(spec.fast_heap, self.workgroup_bytes, self.preferred);
        spec.source(memory)
    }

    /// A pipeline [`Self::get_or_compile`] has compiled.
    pub fn compiled(&self, spec: &Specialization) -> &wgpu::ComputePipeline {
        &self.compiled[spec]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_heap_goes_to_workgroup_memory_where_preferred_and_it_fits() {
        use HeapMemory::{Private, Workgroup};
        // WebGPU's guaranteed 16 KiB: the histogram (7 KiB) leaves room for
        // 8 or 32 servers per lane, not 64.
        let webgpu = 16_384;
        assert_eq!(HeapMemory::for_adapter(8, webgpu, Workgroup), Workgroup);
        assert_eq!(HeapMemory::for_adapter(32, webgpu, Workgroup), Workgroup);
        assert_eq!(HeapMemory::for_adapter(64, webgpu, Workgroup), Private);
        // NVIDIA's 48 KiB per workgroup (Vulkan maxComputeSharedMemorySize).
        assert_eq!(HeapMemory::for_adapter(64, 49_152, Workgroup), Workgroup);
        // A software adapter keeps the private array whatever fits.
        assert_eq!(HeapMemory::for_adapter(8, 65_536, Private), Private);
    }

    #[test]
    fn amd_and_software_adapters_keep_small_heaps_private() {
        use super::super::{AdapterClass, AdapterDesc};
        let adapter = |vendor, class| AdapterDesc {
            name: String::new(),
            backend: "vulkan".into(),
            device_type: String::new(),
            driver: String::new(),
            vendor,
            is_software: class == AdapterClass::Software,
            class,
        };
        let (amd, nvidia) = (0x1002, 0x10de);
        use HeapMemory::{Private, Workgroup};
        assert_eq!(
            HeapMemory::preferred_for(&adapter(amd, AdapterClass::Hardware)),
            Private
        );
        assert_eq!(
            HeapMemory::preferred_for(&adapter(nvidia, AdapterClass::Hardware)),
            Workgroup
        );
        assert_eq!(
            HeapMemory::preferred_for(&adapter(nvidia, AdapterClass::Software)),
            Private
        );
    }

    #[test]
    fn small_queues_share_a_few_heap_sizes() {
        let kw = |servers| {
            let p = PointParams {
                kernel: Kernel::KieferWolfowitz.code(),
                servers,
                ..PointParams::default()
            };
            Specialization::of(&p).fast_heap
        };
        assert_eq!([kw(1), kw(8), kw(9), kw(51), kw(64)], [8, 8, 16, 64, 64]);
        assert_eq!(kw(FAST_HEAP_MAX_SERVERS + 1), 0);
    }
}
