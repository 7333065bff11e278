//! Choosing an engine: `--backend auto|gpu|cpu` and `--adapter`.
//!
//! `auto` takes a hardware GPU when there is one. With only a software
//! adapter (lavapipe, WARP, SwiftShader) it measures both engines on a small
//! calibration batch and takes the faster; with none it uses the CPU. The
//! choice and its reason are reported in one line.

use std::time::Instant;

use anyhow::Result;

use crate::contract::{Kernel, Law, LawKind, PointParams, Thinning};
use crate::engine::cpu::CpuEngine;
use crate::engine::gpu::{list_adapters, AdapterChoice, GpuEngine};
use crate::engine::schedule::tiles_for_point;
use crate::engine::{Batch, Engine};
use crate::UsageError;

/// An opened engine and why it was chosen.
pub struct Chosen {
    pub engine: Box<dyn Engine>,
    pub reason: String,
}

/// Points `auto` calibrates on: the sweep's own (see [`calibration_sample`]),
/// or the built-in M/M/1 + M/M/8 pair when empty.
pub struct Sample<'a> {
    pub params: &'a [PointParams],
    pub table: &'a [f32],
}

/// Up to one point per distinct pipeline (kernel, laws, thinning) of a sweep,
/// shortened for calibration: 2000 customers per replication, no warm-up.
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
        q.customers = 2_000;
        q.warmup = 0;
        q.point_index = out.len() as u32;
        out.push(q);
    }
    out
}

/// Open the engine `backend` asks for.
pub fn choose(backend: &str, adapter: Option<&str>, threads: usize) -> Result<Chosen> {
    choose_for(
        backend,
        adapter,
        threads,
        &Sample {
            params: &[],
            table: &[0.0],
        },
    )
}

/// [`choose`], with `auto` measuring both engines on `sample` (the sweep's
/// own points) when only a software adapter exists.
pub fn choose_for(
    backend: &str,
    adapter: Option<&str>,
    threads: usize,
    sample: &Sample,
) -> Result<Chosen> {
    let choice = AdapterChoice {
        name: adapter.map(str::to_string),
    };
    match backend {
        "cpu" => Ok(Chosen {
            reason: format!(
                "cpu ({} threads; --backend cpu)",
                CpuEngine::new(threads).threads
            ),
            engine: Box::new(CpuEngine::new(threads)),
        }),
        "gpu" => {
            let gpu = GpuEngine::open(&choice)?;
            Ok(Chosen {
                reason: format!("gpu {} (--backend gpu)", gpu.label()),
                engine: Box::new(gpu),
            })
        }
        "auto" => auto(&choice, threads, sample),
        other => Err(UsageError(format!(
            "backend: '{other}' is not a backend; expected one of auto, gpu, cpu"
        ))
        .into()),
    }
}

fn auto(choice: &AdapterChoice, threads: usize, sample: &Sample) -> Result<Chosen> {
    let cpu = CpuEngine::new(threads);
    let adapters = list_adapters();
    if adapters.is_empty() {
        return Ok(Chosen {
            reason: format!("cpu ({} threads): no GPU adapter found", cpu.threads),
            engine: Box::new(cpu),
        });
    }
    let hardware = adapters.iter().any(|a| !a.is_software);
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
    if !gpu.adapter().is_software || (choice.name.is_some() && hardware) {
        return Ok(Chosen {
            reason: format!("gpu {}: hardware adapter", gpu.label()),
            engine: Box::new(gpu),
        });
    }
    // Only a software adapter: measure both.
    let mut cpu = cpu;
    let (cpu_rate, gpu_rate) = if sample.params.is_empty() {
        (calibrate(&mut cpu)?, calibrate(&mut gpu)?)
    } else {
        (
            calibrate_on(&mut cpu, sample)?,
            calibrate_on(&mut gpu, sample)?,
        )
    };
    let detail = format!(
        "software adapter '{}' measured {:.2e} customers/s, CPU engine ({} threads) {:.2e}",
        gpu.adapter().name,
        gpu_rate,
        cpu.threads,
        cpu_rate
    );
    if gpu_rate > cpu_rate {
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

/// Customers/s of `engine` on `sample` (128 replications of each point),
/// after a warm-up call.
pub fn calibrate_on(engine: &mut dyn Engine, sample: &Sample) -> Result<f64> {
    let reps = 128;
    let mut tiles = Vec::new();
    let mut slots = 0;
    for i in 0..sample.params.len() as u32 {
        let (t, n) = tiles_for_point(i, reps, slots);
        tiles.extend(t);
        slots += n;
    }
    let batch = Batch {
        params: sample.params,
        tiles: &tiles,
        table: sample.table,
        slots,
    };
    engine.run(&batch)?;
    let started = Instant::now();
    engine.run(&batch)?;
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let customers: f64 = sample
        .params
        .iter()
        .map(|p| f64::from(reps) * f64::from(p.customers))
        .sum();
    Ok(customers / secs)
}

/// Customers/s of `engine` on a small mixed batch (one M/M/1 point, one
/// M/M/8 point), after a warm-up call.
pub fn calibrate(engine: &mut dyn Engine) -> Result<f64> {
    let exp = |mean: f32| Law {
        kind: LawKind::Exp.code(),
        p: [mean, 0.0, 0.0, 0.0],
        scale: 1.0,
        lo: 0.0,
        hi: f32::MAX,
        ..Law::default()
    };
    let point = |index: u32, k: u32, servers: u32, service_mean: f32| PointParams {
        arrival: exp(1.0),
        service: exp(service_mean),
        kernel: k,
        thinning: Thinning::None.code(),
        servers,
        route_n: 1,
        customers: 20_000,
        warmup: 0,
        seed_lo: 1,
        point_index: index,
        inv_hist_scale: 1.0 / service_mean,
        ..PointParams::default()
    };
    let params = [
        point(0, Kernel::Lindley.code(), 1, 0.9),
        point(1, Kernel::KieferWolfowitz.code(), 8, 7.2),
    ];
    let reps = 256;
    let (mut tiles, s0) = tiles_for_point(0, reps, 0);
    let (t1, s1) = tiles_for_point(1, reps, s0);
    tiles.extend(t1);
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &[0.0],
        slots: s0 + s1,
    };
    engine.run(&batch)?;
    let started = Instant::now();
    engine.run(&batch)?;
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    Ok(2.0 * f64::from(reps) * 20_000.0 / secs)
}
