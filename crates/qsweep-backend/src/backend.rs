//! Choosing an engine: `--backend auto|gpu|cpu` and `--adapter`.
//!
//! `auto` measures a hardware GPU against the CPU engine on a
//! device-filling batch of the sweep's own points ([`calibrate_on`]) and
//! takes the faster; with only a software adapter (lavapipe, WARP,
//! SwiftShader) or none it uses the CPU. The choice and its reason are
//! reported in one line. A hardware GPU chosen by either `auto` or `gpu`
//! keeps its measured rate, which sizes the run's first engine call
//! ([`GpuEngine::expect_rate`]): a device-sized call from the start.
//!
//! [`Backend`] (the names themselves) is `qsweep_core::spec::Backend`.

use anyhow::Result;

use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::Engine;
use qsweep_core::run::calibrate::{calibrate_on, Chosen, Sample};
use qsweep_core::spec::Backend;
use qsweep_gpu::{list_adapters, AdapterChoice, AdapterClass, GpuEngine};

/// Address space a GPU driver needs to start, at least. Under a smaller
/// `ulimit -v` no driver is loaded at all, because one that runs out of
/// address space while it initialises takes the process down with it:
/// Mesa's lavapipe aborts (SIGABRT) opening a device below about 1 GB, and
/// its Vulkan and GL drivers loaded together crash (SIGSEGV) below about
/// 300 MB, before any error can be returned. (Hardware drivers map more.)
pub const GPU_ADDRESS_SPACE_BYTES: u64 = 2 << 30;

/// Why no GPU driver may be loaded in this process, if one may not: its
/// address-space limit is below [`GPU_ADDRESS_SPACE_BYTES`].
pub fn gpu_out_of_reach() -> Option<String> {
    let limit = qsweep_core::memory::address_space_bytes()?;
    (limit < GPU_ADDRESS_SPACE_BYTES).then(|| {
        format!(
            "the address-space limit (ulimit -v) of {} is below the {} a GPU driver needs to \
             start, so no driver was loaded",
            qsweep_core::memory::human(limit),
            qsweep_core::memory::human(GPU_ADDRESS_SPACE_BYTES)
        )
    })
}

/// Opens the engine `backend` asks for. `auto` takes the CPU engine when
/// there is no hardware adapter (deciding at once, without compiling a
/// pipeline), and otherwise measures both engines on `sample` (the sweep's
/// own points) and takes the faster.
pub fn choose_for(
    backend: Backend,
    adapter: Option<&str>,
    threads: usize,
    sample: &Sample,
) -> Result<Chosen> {
    let choice = AdapterChoice {
        name: adapter.map(str::to_string),
    };
    match backend {
        Backend::Cpu => Ok(Chosen {
            reason: format!(
                "cpu ({} threads; --backend cpu)",
                CpuEngine::new(threads).threads
            ),
            engine: Box::new(CpuEngine::new(threads)),
        }),
        Backend::Gpu => {
            if let Some(why) = gpu_out_of_reach() {
                anyhow::bail!("--backend gpu: {why}; raise it or use --backend cpu");
            }
            let mut gpu = GpuEngine::open(&choice)?;
            let measured = if gpu.adapter().class == AdapterClass::Hardware {
                let m = calibrate_on(&mut gpu, sample)?;
                gpu.expect_rate(m.loops_per_second);
                format!(", measured at {:.2e} customers/s", m.customers_per_second)
            } else {
                String::new()
            };
            Ok(Chosen {
                reason: format!("gpu {} (--backend gpu{measured})", gpu.label()),
                engine: Box::new(gpu),
            })
        }
        Backend::Auto => auto(&choice, threads, sample),
    }
}

fn auto(choice: &AdapterChoice, threads: usize, sample: &Sample) -> Result<Chosen> {
    let cpu = CpuEngine::new(threads);
    if let Some(why) = gpu_out_of_reach() {
        return Ok(Chosen {
            reason: format!("cpu ({} threads): {why}", cpu.threads),
            engine: Box::new(cpu),
        });
    }
    let adapters = list_adapters();
    if adapters.is_empty() {
        return Ok(Chosen {
            reason: format!("cpu ({} threads): no GPU adapter found", cpu.threads),
            engine: Box::new(cpu),
        });
    }
    let wanted = |a: &&qsweep_gpu::AdapterDesc| {
        choice
            .name
            .as_ref()
            .is_none_or(|n| a.name.to_lowercase().contains(&n.to_lowercase()))
    };
    if !adapters
        .iter()
        .filter(wanted)
        .any(|a| a.class == AdapterClass::Hardware)
    {
        // A software adapter (lavapipe) runs the kernels on these same
        // cores, and the CPU engine is faster on every standard case
        // (`qsweep bench`; docs/speed.md): decide without compiling a
        // pipeline, which costs seconds on a cold shader cache. (Under
        // QSWEEP_ADAPTER_CLASS=hardware, a software adapter takes the
        // hardware path below: measured against the CPU, as CI tests it.)
        let names: Vec<&str> = adapters.iter().map(|a| a.name.as_str()).collect();
        return Ok(Chosen {
            reason: format!(
                "cpu ({} threads): the only GPU adapter ({}) is software, on these same cores; \
                 --backend gpu runs it anyway",
                cpu.threads,
                names.join(", ")
            ),
            engine: Box::new(cpu),
        });
    }
    let mut gpu = match GpuEngine::open(choice) {
        Ok(g) => g,
        Err(e) => {
            return Ok(Chosen {
                reason: format!(
                    "cpu ({} threads): the GPU adapter failed to open ({e:#})",
                    cpu.threads
                ),
                engine: Box::new(cpu),
            })
        }
    };
    // A hardware adapter: measure both on the sweep's own points and take
    // the faster (a GPU loses on a tiny run), saying both rates.
    let mut cpu = cpu;
    let (cpu_rate, gpu_measured) = (
        calibrate_on(&mut cpu, sample)?.customers_per_second,
        calibrate_on(&mut gpu, sample)?,
    );
    let gpu_rate = gpu_measured.customers_per_second;
    gpu.expect_rate(gpu_measured.loops_per_second);
    let detail = format!(
        "measured {} at {:.2e} customers/s, the CPU engine ({} threads) at {:.2e}",
        gpu.adapter().name,
        gpu_rate,
        cpu.threads,
        cpu_rate
    );
    if gpu_rate >= cpu_rate {
        Ok(Chosen {
            reason: format!("gpu {}: {detail}", gpu.label()),
            engine: Box::new(gpu),
        })
    } else {
        Ok(Chosen {
            reason: format!("cpu: {detail}"),
            engine: Box::new(cpu),
        })
    }
}
