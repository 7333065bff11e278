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
//! [`Backend`] is the one place the three names are spelled: the spec's
//! `[run] backend`, `qsweep bench --backend` and `--from-meta` all parse them
//! here.

use std::fmt;
use std::str::FromStr;

use anyhow::Result;

use crate::contract::costs::loop_cost_per_customer;
use crate::contract::{PointParams, MIN_SEGMENT_CUSTOMERS};
use crate::engine::cpu::CpuEngine;
use crate::engine::gpu::{list_adapters, AdapterChoice, AdapterClass, GpuEngine};
use crate::engine::schedule::tiles_for_points;
use crate::engine::{Batch, Engine};

/// Which engine a run asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// A hardware GPU if there is one; otherwise the faster of the CPU and a
    /// software GPU adapter, measured; otherwise the CPU.
    #[default]
    Auto,
    /// The GPU engine, or an error if no adapter opens.
    Gpu,
    /// The CPU engine.
    Cpu,
}

impl Backend {
    /// Every backend, in the order messages list them.
    pub const ALL: [Backend; 3] = [Backend::Auto, Backend::Gpu, Backend::Cpu];
    /// What a valid backend is, for `expected ...` in messages (the names of
    /// [`Backend::ALL`]; a unit test keeps the two in step).
    pub const EXPECTED: &'static str = "one of auto, gpu, cpu";

    /// The name users write: `auto`, `gpu` or `cpu`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`Backend::ALL`] (names are exact: no case
/// folding, no trimming).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{0}' is not a backend; expected {exp}", exp = Backend::EXPECTED)]
pub struct UnknownBackend(pub String);

impl FromStr for Backend {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

/// An opened engine and why it was chosen.
pub struct Chosen {
    pub engine: Box<dyn Engine>,
    pub reason: String,
}

/// Points `auto` calibrates on: the sweep's own (see [`calibration_sample`]);
/// a sweep has at least one point, so the sample is never empty.
pub struct Sample<'a> {
    pub params: &'a [PointParams],
    pub table: &'a [f32],
}

/// Customers per replication of a calibration point: enough for four
/// one-server segments ([`MIN_SEGMENT_CUSTOMERS`] each), so that a GPU
/// runs them as it runs the sweep (side by side on hardware), and short
/// enough for a calibration to take a fraction of a second.
pub const CALIBRATION_CUSTOMERS: u32 = 4 * MIN_SEGMENT_CUSTOMERS;

/// Seconds a calibration's timed batch may run, at most, on each engine:
/// the watch stops it there (between a GPU's passes) and the customers so
/// far count.
pub const CALIBRATION_DEADLINE_SECONDS: f64 = 0.5;

/// Up to one point per distinct pipeline (kernel, laws, thinning) of a sweep,
/// shortened for calibration: [`CALIBRATION_CUSTOMERS`] per replication, no
/// warm-up.
pub fn calibration_sample(points: &[PointParams]) -> Vec<PointParams> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for p in points {
        let key = (
            p.kernel,
            p.arrival.kind,
            p.service.kind,
            p.thinning,
            p.route_n.min(2),
        );
        if seen.contains(&key) || out.len() >= 6 {
            continue;
        }
        seen.push(key);
        let mut q = *p;
        q.customers = CALIBRATION_CUSTOMERS;
        q.warmup = 0;
        q.point_index = out.len() as u32;
        out.push(q);
    }
    out
}

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
    let limit = crate::memory::address_space_bytes()?;
    (limit < GPU_ADDRESS_SPACE_BYTES).then(|| {
        format!(
            "the address-space limit (ulimit -v) of {} is below the {} a GPU driver needs to \
             start, so no driver was loaded",
            crate::memory::human(limit),
            crate::memory::human(GPU_ADDRESS_SPACE_BYTES)
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
    let wanted = |a: &&crate::engine::gpu::AdapterDesc| {
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

/// An engine's speed on a calibration sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub customers_per_second: f64,
    /// Loop iterations per second (customers weighted by
    /// `loop_cost_per_customer`): the run loop's unit of work.
    pub loops_per_second: f64,
}

/// The speed of `engine` on `sample`, after a warm-up call that compiles
/// its pipelines: one batch as wide as the engine fills
/// ([`CallSizing::fill_reps`] replications over the sample's points, at
/// least 128 of each: a GPU measured on a few hundred replications reads as
/// slow as its launch latency), timed until it ends or
/// [`CALIBRATION_DEADLINE_SECONDS`] pass.
///
/// [`CallSizing::fill_reps`]: crate::engine::CallSizing::fill_reps
pub fn calibrate_on(engine: &mut dyn Engine, sample: &Sample) -> Result<Measured> {
    let points = sample.params.len().max(1) as u64;
    let warm: Vec<PointParams> = sample
        .params
        .iter()
        .map(|p| PointParams {
            customers: 100,
            ..*p
        })
        .collect();
    let (tiles, slots) = tiles_for_points(warm.len() as u32, 64);
    engine.run(&Batch {
        params: &warm,
        tiles: &tiles,
        table: sample.table,
        slots,
    })?;
    let reps = engine
        .call_sizing()
        .fill_reps
        .div_ceil(points)
        .clamp(128, u64::from(u32::MAX)) as u32;
    let (tiles, slots) = tiles_for_points(sample.params.len() as u32, reps);
    let batch = Batch {
        params: sample.params,
        tiles: &tiles,
        table: sample.table,
        slots,
    };
    let (customers, seconds) =
        crate::run::estimate::timed_batch(engine, &batch, CALIBRATION_DEADLINE_SECONDS)?;
    let seconds = seconds.max(1e-9);
    // The sample's points all have the same customers and replications:
    // a customer costs their mean loop cost.
    let cost = sample
        .params
        .iter()
        .map(|p| loop_cost_per_customer(p) as f64)
        .sum::<f64>()
        / points as f64;
    Ok(Measured {
        customers_per_second: customers / seconds,
        loops_per_second: customers * cost / seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_expected_lists_them_all() {
        for b in Backend::ALL {
            assert_eq!(b.to_string().parse::<Backend>(), Ok(b));
        }
        let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
        assert_eq!(Backend::EXPECTED, format!("one of {}", names.join(", ")));
        assert_eq!(Backend::default(), Backend::Auto);
    }

    #[test]
    fn unknown_names_are_refused_exactly() {
        for bad in ["tpu", "GPU", " cpu", ""] {
            let e = bad.parse::<Backend>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("'{bad}' is not a backend; expected one of auto, gpu, cpu")
            );
        }
    }
}
