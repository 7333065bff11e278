//! Compute pipelines: what one is specialised for ([`Specialization`]), the
//! WGSL it is compiled from, and compiling and caching them per device.
//!
//! Each kernel's source is the contract's generated constants
//! (`contract::wgsl`), this pipeline's specialization constants, then
//! `shaders/common.wgsl`, `rng.wgsl`, `sampling.wgsl` and the kernel's own
//! file, so the sampling code exists once.

use std::collections::HashMap;

use anyhow::{bail, Result};

use crate::contract::{Kernel, LawKind, PointParams, Thinning};

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
            private_heap: p.kernel() == Kernel::KieferWolfowitz && p.servers <= PRIVATE_HEAP_SIZE,
        }
    }

    /// The plainest pipeline of `kernel`: exponential laws, no thinning.
    pub(super) fn plain(kernel: Kernel) -> Self {
        Self {
            kernel,
            arrival: LawKind::Exp,
            service: LawKind::Exp,
            thinning: Thinning::None,
            private_heap: false,
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

    /// The full WGSL source of this pipeline.
    pub fn source(&self) -> String {
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
             const PRIVATE_HEAP: bool = {private_heap};\n\
             const PRIVATE_HEAP_SIZE: u32 = {PRIVATE_HEAP_SIZE}u;\n\
             {COMMON_WGSL}\n{RNG_WGSL}\n{SAMPLING_WGSL}\n\n{body}",
            contract = crate::contract::wgsl::constants(),
            arrival = self.arrival.code(),
            service = self.service.code(),
            thinning = self.thinning.code(),
            private_heap = self.private_heap,
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
#[derive(Default)]
pub(super) struct PipelineCache(HashMap<Specialization, wgpu::ComputePipeline>);

impl PipelineCache {
    /// The pipeline for `spec`, compiled on first use.
    pub fn get_or_compile(
        &mut self,
        device: &wgpu::Device,
        spec: Specialization,
    ) -> Result<wgpu::ComputePipeline> {
        if let Some(p) = self.0.get(&spec) {
            return Ok(p.clone());
        }
        let p = compile(device, spec.name(), &spec.source())?;
        self.0.insert(spec, p.clone());
        Ok(p)
    }

    /// A pipeline [`Self::get_or_compile`] has compiled.
    pub fn compiled(&self, spec: &Specialization) -> &wgpu::ComputePipeline {
        &self.0[spec]
    }
}
