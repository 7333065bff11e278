//! Criterion suite: customers/s of every engine × policy pair on the
//! standard cases of `qsweep_backend::bench` (the same cases `qsweep bench` runs).
//! Sized to finish in minutes on 2 cores: `cargo bench --bench engines`.
//! Without a GPU adapter the GPU group is skipped with a note.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use qsweep_backend::bench::standard_cases;
use qsweep_core::contract::Kernel;
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::{Batch, Engine};
use qsweep_gpu::{AdapterChoice, GpuEngine, SegmentLayout};

const REPS: u32 = 256;
const CUSTOMERS: u32 = 20_000;

fn bench_engine(c: &mut Criterion, group_name: &str, engine: &mut dyn Engine) {
    let mut group = c.benchmark_group(group_name);
    group.sample_size(10);
    for case in standard_cases() {
        // The dynamic policies simulate all 100 servers per replication.
        let customers = if case.params.kernel() == Kernel::Dispatch {
            CUSTOMERS / 10
        } else {
            CUSTOMERS
        };
        let (params, tiles, slots) = case.parts(REPS, customers);
        let batch = Batch {
            params: &params,
            tiles: &tiles,
            table: &case.table,
            slots,
        };
        group.throughput(Throughput::Elements(u64::from(REPS) * u64::from(customers)));
        group.bench_function(case.name, |b| {
            b.iter(|| engine.run(&batch).expect("engine run"))
        });
    }
    group.finish();
}

/// A few replications of a large central queue, the case the cooperative
/// layout is for: one invocation per replication (its heap sifted in
/// storage memory) against a workgroup per replication. On hardware the
/// engine picks the second for up to `COOPERATIVE_MAX_REPS` replications;
/// on a software adapter (a correctness harness there) the first.
fn bench_central_layouts(c: &mut Criterion, group_name: &str, gpu: &mut GpuEngine) {
    const FEW_REPS: u32 = 64;
    let Some(case) = standard_cases()
        .into_iter()
        .find(|c| c.name == "central M/M/1000")
    else {
        return;
    };
    let (params, tiles, slots) = case.parts(FEW_REPS, CUSTOMERS);
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &case.table,
        slots,
    };
    let mut group = c.benchmark_group(group_name);
    group.sample_size(10);
    group.throughput(Throughput::Elements(
        u64::from(FEW_REPS) * u64::from(CUSTOMERS),
    ));
    for (name, layout) in [
        ("one invocation per replication", SegmentLayout::InTurn),
        ("a workgroup per replication", SegmentLayout::SideBySide),
    ] {
        gpu.force_segment_layout(layout);
        group.bench_function(name, |b| b.iter(|| gpu.run(&batch).expect("engine run")));
    }
    group.finish();
}

fn engines(c: &mut Criterion) {
    bench_engine(c, "cpu", &mut CpuEngine::new(0));
    match GpuEngine::open(&AdapterChoice::default()) {
        Ok(mut gpu) => {
            let name = format!("gpu {}", gpu.adapter().name);
            bench_engine(c, &name, &mut gpu);
            let name = format!(
                "gpu {}: central M/M/1000, 64 replications",
                gpu.adapter().name
            );
            bench_central_layouts(c, &name, &mut gpu);
        }
        Err(e) => eprintln!("gpu benchmarks skipped: {e:#}"),
    }
}

criterion_group!(benches, engines);
criterion_main!(benches);
