//! Every pipeline variant the engine can compile, and what each asks of a
//! device, read from its IR.
//!
//! Why this module exists: qsweep's kernels run on compilers it is never
//! tested on here (NVIDIA's, AMD's, Apple's, DXC, Chrome's Tint), so every
//! source [`PipelineCache`](super::pipelines::PipelineCache) could hand a
//! driver must be checkable elsewhere. [`every_variant`] enumerates them
//! from the same [`Specialization::source`] the engine compiles from,
//! `qsweep kernels --out DIR` writes them with a `manifest.tsv`, and CI
//! feeds them to naga's other back ends, `spirv-val`, `glslangValidator`
//! and Tint (`.ci/tint/`). [`ResourceNeeds`] is what `GpuEngine::open`
//! checks an adapter's limits against.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{anyhow, Context, Result};

use super::pipelines::{HeapMemory, Specialization, FAST_HEAP_MAX_SERVERS};
use qsweep_core::contract::{Kernel, LawKind, Reneging, Thinning};

/// What one kernel source binds and reserves, from its entry point `main`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceNeeds {
    pub workgroup_size: [u32; 3],
    /// Bytes of `var<workgroup>` the entry point uses.
    pub workgroup_bytes: u32,
    /// Storage buffers the entry point binds (one stage: compute).
    pub storage_buffers: u32,
    pub uniform_buffers: u32,
}

impl ResourceNeeds {
    /// Invocations per workgroup.
    pub fn invocations(&self) -> u32 {
        self.workgroup_size.iter().product()
    }

    /// What `limits` lacks for these needs, one phrase each naming the
    /// limit (empty when they fit).
    pub fn shortfalls(&self, limits: &wgpu::Limits) -> Vec<String> {
        let mut short = Vec::new();
        let mut check = |need: u32, have: u32, what: &str, field: &str| {
            if need > have {
                short.push(format!("{need} {what} (the adapter's {field} is {have})"));
            }
        };
        check(
            self.storage_buffers,
            limits.max_storage_buffers_per_shader_stage,
            "storage buffers per shader stage",
            "max_storage_buffers_per_shader_stage",
        );
        check(
            self.uniform_buffers,
            limits.max_uniform_buffers_per_shader_stage,
            "uniform buffers per shader stage",
            "max_uniform_buffers_per_shader_stage",
        );
        check(
            self.workgroup_bytes,
            limits.max_compute_workgroup_storage_size,
            "bytes of workgroup memory",
            "max_compute_workgroup_storage_size",
        );
        check(
            self.invocations(),
            limits.max_compute_invocations_per_workgroup,
            "invocations per workgroup",
            "max_compute_invocations_per_workgroup",
        );
        check(
            self.workgroup_size[0],
            limits.max_compute_workgroup_size_x,
            "invocations along x",
            "max_compute_workgroup_size_x",
        );
        short
    }
}

/// The needs of `source`'s entry point `main`, from naga's IR: the globals
/// the entry point actually uses, so a binding declared in `common.wgsl`
/// but unused by a kernel is not counted (drivers count what the pipeline
/// layout holds, and `layout: None` derives it from use).
pub fn resource_needs(source: &str) -> Result<ResourceNeeds> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| anyhow!("does not parse: {}", e.emit_to_string(source)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| anyhow!("does not validate: {}", e.emit_to_string(source)))?;
    let (index, entry) = module
        .entry_points
        .iter()
        .enumerate()
        .find(|(_, e)| e.name == "main")
        .context("no entry point main")?;
    let uses = info.get_entry_point(index);
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| anyhow!("type layout: {e}"))?;
    let mut needs = ResourceNeeds {
        workgroup_size: entry.workgroup_size,
        ..ResourceNeeds::default()
    };
    for (handle, var) in module.global_variables.iter() {
        match var.space {
            // Every workgroup variable the module declares, used or not:
            // naga's use analysis misses one read only through
            // `workgroupUniformLoad` (lindley.wgsl's `tile_segments`), and
            // counting one too many is the safe side of a limit. WebGPU
            // counts each rounded up to 16 bytes (maxComputeWorkgroupStorageSize;
            // Dawn enforces it, wgpu 30 does not).
            naga::AddressSpace::WorkGroup => {
                needs.workgroup_bytes += layouter[var.ty].size.next_multiple_of(16)
            }
            // Bindings only where the entry point uses them: the pipeline
            // layout wgpu derives (`layout: None`) holds just those.
            naga::AddressSpace::Storage { .. } if !uses[handle].is_empty() => {
                needs.storage_buffers += 1
            }
            naga::AddressSpace::Uniform if !uses[handle].is_empty() => needs.uniform_buffers += 1,
            _ => {}
        }
    }
    Ok(needs)
}

/// One source the engine can hand a driver.
#[derive(Clone, Debug)]
pub struct KernelVariant {
    /// File name under `qsweep kernels --out`, unique per variant.
    pub file: String,
    /// The pipeline, `None` for the peak-rate kernel (`shaders/peak.wgsl`).
    pub spec: Option<Specialization>,
    /// Where a small central queue's heap lives (meaningful when
    /// `spec.fast_heap > 0`).
    pub memory: HeapMemory,
    pub source: String,
}

impl KernelVariant {
    fn of(spec: Specialization, memory: HeapMemory) -> Self {
        let mut file = format!(
            "{}-{}-{}",
            spec.name(),
            law_name(spec.arrival),
            law_name(spec.service)
        );
        // Limited central queues also run one dyno of a thinned stream.
        if spec.kernel == Kernel::Lindley
            || (spec.limited && spec.kernel == Kernel::KieferWolfowitz)
        {
            let _ = write!(file, "-thin_{}", thinning_name(spec.thinning));
        }
        if spec.limited {
            file.push_str("-capacity");
        }
        if spec.reneging != Reneging::None {
            let mode = spec.reneging.wgsl_name().trim_start_matches("RENEGING_");
            let _ = write!(file, "-reneging_{}", mode.to_ascii_lowercase());
        }
        if spec.fast_heap > 0 {
            let place = match memory {
                HeapMemory::Workgroup => "workgroup",
                HeapMemory::Private => "private",
            };
            let _ = write!(file, "-heap{}_{place}", spec.fast_heap);
        }
        file.push_str(".wgsl");
        Self {
            file,
            spec: Some(spec),
            memory,
            source: spec.source(memory),
        }
    }

    /// The kernel's name: a file of `shaders/`, without `.wgsl`.
    pub fn kernel_name(&self) -> &'static str {
        self.spec.as_ref().map_or("peak", Specialization::name)
    }
}

fn law_name(law: LawKind) -> String {
    law.wgsl_name()
        .trim_start_matches("LAW_")
        .to_ascii_lowercase()
}

fn thinning_name(thinning: Thinning) -> String {
    thinning
        .wgsl_name()
        .trim_start_matches("THIN_")
        .to_ascii_lowercase()
}

/// The small-queue heap sizes [`Specialization::of`] produces: powers of
/// two from 8 to [`FAST_HEAP_MAX_SERVERS`], and 0 (the heap in storage).
fn fast_heap_sizes() -> Vec<u32> {
    let mut sizes = vec![0];
    let mut s = 8;
    while s <= FAST_HEAP_MAX_SERVERS {
        sizes.push(s);
        s *= 2;
    }
    sizes
}

/// Every source the engine can compile, in a fixed order: each kernel ×
/// arrival law × service law (every law but MMPP, an arrival process); the one-server kernel (Lindley) also × every
/// thinning (random and round-robin routing thin its arrivals; the other
/// kernels' points never thin: `PointParams::effective_thinning`); the
/// central queue (Kiefer–Wolfowitz) also × every small-heap size, each in
/// both places it may live ([`HeapMemory::for_adapter`] picks one per
/// adapter); then, for patience, each reneging mode of every kernel with
/// exponential laws, in every thinning and heap placement (the mode is the
/// one constant patience adds: the patience law is drawn through the
/// run-time `draw`, which holds every law); then, for a capacity, the
/// central-queue kernel with exponential laws in every thinning and heap
/// placement (it runs limited one-server queues of thinned streams too) and
/// the dispatch kernel (a limit per server); then the peak-rate kernel.
/// The two layouts (`SegmentLayout`: one-server segments, and a large
/// central queue's cooperative scan) are chosen per pass by the dispatch's
/// uniform and per workgroup, so one source serves both.
pub fn every_variant() -> Vec<KernelVariant> {
    let mut out = Vec::new();
    for &kernel in Kernel::ALL {
        for &arrival in LawKind::ALL {
            // A stateful law (MMPP) is an arrival process, never a service
            // law (`dist` refuses it there).
            for &service in LawKind::ALL.iter().filter(|k| !k.is_stateful()) {
                let base = Specialization {
                    arrival,
                    service,
                    ..Specialization::plain(kernel)
                };
                match kernel {
                    Kernel::Lindley => {
                        for &thinning in Thinning::ALL {
                            let spec = Specialization { thinning, ..base };
                            out.push(KernelVariant::of(spec, HeapMemory::Private));
                        }
                    }
                    Kernel::KieferWolfowitz => {
                        for fast_heap in fast_heap_sizes() {
                            let spec = Specialization { fast_heap, ..base };
                            if fast_heap == 0 {
                                out.push(KernelVariant::of(spec, HeapMemory::Private));
                            } else {
                                for memory in [HeapMemory::Workgroup, HeapMemory::Private] {
                                    out.push(KernelVariant::of(spec, memory));
                                }
                            }
                        }
                    }
                    Kernel::Dispatch => out.push(KernelVariant::of(base, HeapMemory::Private)),
                }
            }
        }
    }
    for reneging in [Reneging::Timeout, Reneging::Abandon] {
        let lindley = Specialization {
            reneging,
            ..Specialization::plain(Kernel::Lindley)
        };
        for &thinning in Thinning::ALL {
            let spec = Specialization {
                thinning,
                ..lindley
            };
            out.push(KernelVariant::of(spec, HeapMemory::Private));
        }
        for fast_heap in fast_heap_sizes() {
            let spec = Specialization {
                reneging,
                fast_heap,
                ..Specialization::plain(Kernel::KieferWolfowitz)
            };
            if fast_heap == 0 {
                out.push(KernelVariant::of(spec, HeapMemory::Private));
            } else {
                for memory in [HeapMemory::Workgroup, HeapMemory::Private] {
                    out.push(KernelVariant::of(spec, memory));
                }
            }
        }
        let dispatch = Specialization {
            reneging,
            ..Specialization::plain(Kernel::Dispatch)
        };
        out.push(KernelVariant::of(dispatch, HeapMemory::Private));
    }
    // A capacity: the Kiefer–Wolfowitz kernel (which runs limited one-server
    // queues too, of thinned streams) in every thinning and heap placement.
    for &thinning in Thinning::ALL {
        for fast_heap in fast_heap_sizes() {
            let spec = Specialization {
                thinning,
                limited: true,
                fast_heap,
                ..Specialization::plain(Kernel::KieferWolfowitz)
            };
            if fast_heap == 0 {
                out.push(KernelVariant::of(spec, HeapMemory::Private));
            } else {
                for memory in [HeapMemory::Workgroup, HeapMemory::Private] {
                    out.push(KernelVariant::of(spec, memory));
                }
            }
        }
    }
    let dispatch = Specialization {
        limited: true,
        ..Specialization::plain(Kernel::Dispatch)
    };
    out.push(KernelVariant::of(dispatch, HeapMemory::Private));
    out.push(KernelVariant {
        file: "peak.wgsl".to_string(),
        spec: None,
        memory: HeapMemory::Private,
        source: super::peak_source(),
    });
    out
}

/// The largest needs among the sources an engine on an adapter with
/// `workgroup_bytes` and `preferred` heap memory compiles (each small heap
/// where [`HeapMemory::for_adapter`] puts it), and the file of the variant
/// that sets each maximum: what `GpuEngine::open` checks the adapter's
/// limits against before compiling anything.
pub fn largest_needs(
    workgroup_bytes: u32,
    preferred: HeapMemory,
) -> Result<Vec<(ResourceNeeds, String)>> {
    // Laws and thinning change no binding and no workgroup array: one
    // variant per kernel and heap size stands for all of its laws.
    let mut worst = Vec::new();
    for v in every_variant() {
        let representative = v.spec.is_none_or(|s| {
            s.arrival == LawKind::Exp && s.service == LawKind::Exp && s.thinning == Thinning::None
        });
        let compiled_here = v.spec.is_none_or(|s| {
            HeapMemory::for_adapter(s.fast_heap, workgroup_bytes, preferred) == v.memory
        });
        if representative && compiled_here {
            let needs = resource_needs(&v.source).with_context(|| v.file.clone())?;
            worst.push((needs, v.file));
        }
    }
    Ok(worst)
}

/// Write every variant into `dir` (created if absent), one `.wgsl` file
/// each, and `manifest.tsv`: file, kernel, laws, thinning, heap, entry
/// point, workgroup size, workgroup-memory bytes, storage and uniform
/// buffers, and the segment layouts a source serves. Returns how many.
pub fn write_kernels(dir: &Path) -> Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let variants = every_variant();
    let mut manifest = String::from(
        "file\tkernel\tarrival\tservice\tthinning\tfast_heap\theap_memory\tentry_point\t\
         workgroup_size\tworkgroup_bytes\tstorage_buffers\tuniform_buffers\tsegment_layouts\n",
    );
    for v in &variants {
        let needs = resource_needs(&v.source).with_context(|| v.file.clone())?;
        let (arrival, service, thinning, fast_heap, memory, layouts) = match v.spec {
            Some(s) => (
                law_name(s.arrival),
                law_name(s.service),
                thinning_name(s.thinning),
                s.fast_heap.to_string(),
                if s.fast_heap == 0 {
                    "storage"
                } else if v.memory == HeapMemory::Workgroup {
                    "workgroup"
                } else {
                    "private"
                },
                if s.kernel == Kernel::Lindley
                    || (s.kernel == Kernel::KieferWolfowitz && !s.limited)
                {
                    "in-turn,side-by-side"
                } else {
                    "-"
                },
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-", "-"),
        };
        let [x, y, z] = needs.workgroup_size;
        let _ = writeln!(
            manifest,
            "{}\t{}\t{arrival}\t{service}\t{thinning}\t{fast_heap}\t{memory}\tmain\t{x},{y},{z}\t{}\t{}\t{}\t{layouts}",
            v.file,
            v.kernel_name(),
            needs.workgroup_bytes,
            needs.storage_buffers,
            needs.uniform_buffers,
        );
        let path = dir.join(&v.file);
        std::fs::write(&path, &v.source).with_context(|| format!("writing {}", path.display()))?;
    }
    let path = dir.join("manifest.tsv");
    std::fs::write(&path, manifest).with_context(|| format!("writing {}", path.display()))?;
    Ok(variants.len())
}

/// Compiles every variant whose file name contains `filter` with the
/// driver of the adapter `choice` names (its own compiler, beyond naga's
/// validation: `examples/compile_kernels.rs`), skipping the
/// variants whose resources exceed the adapter's limits. `before` sees each
/// variant before it compiles (a driver's own log follows it). Returns the
/// number compiled and skipped.
pub fn compile_variants(
    choice: &super::AdapterChoice,
    filter: &str,
    before: &mut dyn FnMut(&KernelVariant),
) -> Result<(usize, usize)> {
    let adapter = super::adapter::choose(&super::adapter::instance(), choice)?;
    let limits = adapter.limits();
    let (device, _queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("qsweep kernels"),
        required_limits: limits.clone(),
        ..Default::default()
    }))
    .context("cannot open a device to compile on")?;
    let (mut compiled, mut skipped) = (0, 0);
    for v in every_variant().iter().filter(|v| v.file.contains(filter)) {
        if !resource_needs(&v.source)?.shortfalls(&limits).is_empty() {
            skipped += 1;
            continue;
        }
        before(v);
        super::pipelines::compile(&device, &v.file, &v.source)?;
        compiled += 1;
    }
    Ok((compiled, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_have_unique_files_and_cover_every_law_and_heap() {
        let variants = every_variant();
        let mut files: Vec<&str> = variants.iter().map(|v| v.file.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        assert_eq!(files.len(), variants.len(), "duplicate file names");
        let laws = LawKind::ALL.len();
        let services = laws - LawKind::ALL.iter().filter(|k| k.is_stateful()).count();
        let heaps = fast_heap_sizes().len();
        let expected = laws * services * Thinning::ALL.len()
            + laws * services * (1 + 2 * (heaps - 1))
            + laws * services
            // Each reneging mode: Lindley per thinning, every central
            // heap, the dispatch kernel.
            + 2 * (Thinning::ALL.len() + 1 + 2 * (heaps - 1) + 1)
            // A capacity: every thinning, every central heap; dispatch.
            + Thinning::ALL.len() * (1 + 2 * (heaps - 1))
            + 1
            + 1;
        assert_eq!(variants.len(), expected);
    }

    #[test]
    fn needs_are_read_from_what_the_entry_point_uses() {
        let needs = resource_needs(&super::super::peak_source()).unwrap();
        assert_eq!(needs.storage_buffers, 1);
        assert_eq!(needs.workgroup_bytes, 0);
        assert_eq!(needs.invocations(), 64);
        let lindley =
            resource_needs(&Specialization::plain(Kernel::Lindley).source(HeapMemory::Private))
                .unwrap();
        assert!(lindley.workgroup_bytes >= qsweep_core::contract::HIST_BINS * 4);
        // The histogram and what side-by-side segments exchange (a map,
        // sums, counts, maxima and --slo counts per lane, and the tile's
        // segment count), each rounded up to 16 bytes as WebGPU counts them.
        let segments = qsweep_core::contract::TILE_REPS * (8 + 16 + 16 + 8 + 16) + 16;
        let hist = (qsweep_core::contract::HIST_BINS * 4).next_multiple_of(16);
        assert_eq!(lindley.workgroup_bytes, hist + segments);
        let mut small = wgpu::Limits::downlevel_defaults();
        small.max_storage_buffers_per_shader_stage = lindley.storage_buffers - 1;
        let short = lindley.shortfalls(&small);
        assert!(
            short
                .iter()
                .any(|s| s.contains("max_storage_buffers_per_shader_stage")),
            "{short:?}"
        );
        assert!(lindley.shortfalls(&wgpu::Limits::default()).is_empty());
    }
}
