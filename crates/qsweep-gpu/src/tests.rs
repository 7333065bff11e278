//! The GPU engine's plans (no device needed) and, on whatever adapter opens
//! (lavapipe in CI), that pass cutting never changes results and that the
//! u64 histogram bins carry past 2^32.

use std::path::Path;

use super::buffers::BatchBuffers;
use super::pass_rates::{PassLength, PassRates, TARGET_PASS_SECONDS};
use super::plan::{BatchPlan, SegmentLayout};
use super::*;
use qsweep_core::contract::{Kernel, PointParams, Tile, HIST_WORDS_PER_BIN, TILE_REPS};
use qsweep_core::engine::schedule::tiles_for_points;

/// A spec's points as one batch: parameters, tiles, table, slots.
struct OwnedBatch {
    params: Vec<PointParams>,
    tiles: Vec<Tile>,
    table: Vec<f32>,
    slots: u32,
}

impl OwnedBatch {
    fn from_toml(toml: &str) -> Self {
        let spec = qsweep_core::spec::Spec::from_toml_str(toml, "test", Path::new(".")).unwrap();
        let (prepared, table) = qsweep_core::run::prepare(&spec, spec.points());
        let params: Vec<PointParams> = prepared.iter().map(|p| p.params).collect();
        let (tiles, slots) = tiles_for_points(params.len() as u32, spec.run.reps);
        Self {
            params,
            tiles,
            table,
            slots,
        }
    }

    fn batch(&self) -> Batch<'_> {
        Batch {
            params: &self.params,
            tiles: &self.tiles,
            table: &self.table,
            slots: self.slots,
        }
    }
}

/// Limits like a large discrete GPU's (an H200 under Vulkan reports about
/// these): bindings up to 2^31 - 1 bytes, buffers up to its memory.
fn large_gpu_limits() -> wgpu::Limits {
    wgpu::Limits {
        max_storage_buffer_binding_size: (1 << 31) - 1,
        max_buffer_size: 1 << 40,
        ..wgpu::Limits::default()
    }
}

#[test]
fn the_default_study_runs_each_pipeline_in_one_dispatch_on_a_large_gpu() {
    let owned = OwnedBatch::from_toml(qsweep_core::spec::SEED_TOML);
    // A hardware adapter runs the default study's one-server segments side
    // by side (5120 replications leave a large GPU idle otherwise).
    let layout = SegmentLayout::for_batch(&owned.batch(), false, &large_gpu_limits());
    assert_eq!(layout, SegmentLayout::SideBySide);
    // Software adapters run segments in turn, and so does an adapter whose
    // bindings cannot hold the split tiles' results (32 × 5120 × 40 bytes).
    assert_eq!(
        SegmentLayout::for_batch(&owned.batch(), true, &large_gpu_limits()),
        SegmentLayout::InTurn
    );
    let small = wgpu::Limits {
        max_storage_buffer_binding_size: 4 << 20,
        ..large_gpu_limits()
    };
    assert_eq!(
        SegmentLayout::for_batch(&owned.batch(), false, &small),
        SegmentLayout::InTurn
    );
    // Its central queues beyond the fast heap's 64 servers (4096
    // replications: COOPERATIVE_MAX_REPS) a workgroup each.
    let layouts = Layouts::for_batch(&owned.batch(), false, &large_gpu_limits());
    assert_eq!(
        layouts,
        Layouts {
            segments: SegmentLayout::SideBySide,
            central: SegmentLayout::SideBySide
        }
    );
    assert_eq!(
        Layouts::for_batch(&owned.batch(), true, &large_gpu_limits()),
        SegmentLayout::InTurn.into()
    );
    let plan = BatchPlan::new(&owned.batch(), &large_gpu_limits(), layouts).unwrap();
    let batch_specs = Specialization::for_batch(&owned.params, layouts.central);
    let mut specs = batch_specs.clone();
    specs.sort();
    specs.dedup();
    // One dispatch per pipeline group, holding all of its tiles: every
    // replication of the group in flight at once. Two groups: the
    // one-server points, and every central queue (R = 51 and 60 with their
    // heaps in fast memory, R = 75 to 4000 in storage memory) side by side.
    assert_eq!(specs.len(), 2, "{specs:?}");
    assert_eq!(plan.dispatches.len(), specs.len());
    let reps = |tiles: &mut dyn Iterator<Item = &Tile>| -> u64 {
        tiles.map(|t| u64::from(t.rep_count)).sum()
    };
    for (d, spec) in plan.dispatches.iter().zip(&specs) {
        assert_eq!(d.spec, *spec);
        let in_group = |t: &&Tile| batch_specs[t.param_index as usize] == *spec;
        let group_reps = reps(&mut owned.tiles.iter().filter(in_group));
        let first = d.tile_offset as usize;
        let dispatch_tiles = &plan.tiles[first..first + d.tiles as usize];
        assert_eq!(reps(&mut dispatch_tiles.iter()), group_reps, "{spec:?}");
        // One-server points: a workgroup per two replications' 32
        // segments, every invocation busy.
        if spec.kernel == Kernel::Lindley {
            let segments = owned.params[dispatch_tiles[0].param_index as usize]
                .segments()
                .count;
            assert_eq!(segments, 32);
            assert_eq!(d.invocations(), group_reps * u64::from(segments));
        }
        // Central queues: R = 75 to 4000 a workgroup per replication, R = 51
        // and 60 sixty-four replications a workgroup; the cooperative
        // queues' shares of servers (63 rows at R = 4000) in the fast heap.
        if spec.kernel == Kernel::KieferWolfowitz {
            let cooperative: Vec<&Tile> = dispatch_tiles
                .iter()
                .filter(|t| cooperative_candidate(&owned.params[t.param_index as usize]))
                .collect();
            assert!(!cooperative.is_empty());
            assert!(cooperative.iter().all(|t| t.rep_count == 1));
            assert_eq!(spec.fast_heap, 64);
            assert_eq!(d.max_servers, 4000u32.div_ceil(TILE_REPS));
        }
    }
    assert_eq!(
        plan.dispatches
            .iter()
            .map(|d| d.tiles as usize)
            .sum::<usize>(),
        plan.tiles.len()
    );

    // Passes: lavapipe's loop budget against a hardware adapter measured at
    // 1e10 customers/s on each dispatch.
    let budget = plan.passes(&PassRates::new(PassLength::LoopBudget));
    let mut hardware = 0;
    for d in &plan.dispatches {
        let mut rates = PassRates::new(PassLength::Timed { loop_capped: false });
        rates.assume(d, 1e10);
        // Each full pass takes about the target at that rate.
        let first = rates.pass_end(d, 0);
        if first < d.max_total {
            let seconds = d.lanes() as f64 * f64::from(first) / 1e10;
            assert!(
                (seconds - TARGET_PASS_SECONDS).abs() < 0.01 * TARGET_PASS_SECONDS,
                "{seconds}"
            );
        }
        hardware += d.passes(&rates);
    }
    eprintln!(
        "default study, one batch: {} tiles, {} dispatches; passes: {budget} under \
         LOOP_BUDGET, {hardware} timed at 1e10 customers/s",
        owned.tiles.len(),
        plan.dispatches.len()
    );
    assert!(hardware * 10 <= budget, "{hardware} vs {budget}");
}

/// An H200 as the run loop sees it (plan-and-replay): the GPU engine's
/// call sizing on hardware with an H200's limits and a modelled rate, each
/// call recorded and answered by the CPU engine on a few customers per
/// replication (only the calls' shapes are under test, not the numbers).
struct ReplayedH200 {
    calls: Vec<(Vec<PointParams>, Vec<Tile>, u32)>,
    cpu: qsweep_core::engine::cpu::CpuEngine,
}

/// The modelled H200's rate in loop iterations per second: its resident
/// threads (132 SMs × 2048) each running a loop iteration (a customer's
/// draws and a recursion step, a few hundred instructions) every 200 cycles
/// at 1.98 GHz.
const H200_LOOPS_PER_SECOND: f64 = 132.0 * 2048.0 * 1.98e9 / 200.0;

impl qsweep_core::engine::Engine for ReplayedH200 {
    fn label(&self) -> String {
        "replayed H200".to_string()
    }

    fn call_sizing(&self) -> qsweep_core::engine::CallSizing {
        // The GPU engine's own sizing on hardware with an H200's limits.
        super::call_sizing_for(&large_gpu_limits(), true, Some(H200_LOOPS_PER_SECOND))
    }

    fn run(&mut self, batch: &Batch) -> anyhow::Result<qsweep_core::engine::BatchOutput> {
        self.calls
            .push((batch.params.to_vec(), batch.tiles.to_vec(), batch.slots));
        let short: Vec<PointParams> = batch
            .params
            .iter()
            .map(|p| PointParams {
                customers: 64,
                warmup: 0,
                ..*p
            })
            .collect();
        self.cpu.run(&Batch {
            params: &short,
            ..*batch
        })
    }
}

#[test]
fn the_run_loop_gives_an_h200_the_default_study_in_device_sized_calls() {
    let spec = qsweep_core::spec::Spec::from_toml_str(
        qsweep_core::spec::SEED_TOML,
        "seed",
        Path::new("."),
    )
    .unwrap();
    let (points, table) = qsweep_core::run::prepare(&spec, spec.points());
    let mut engine = ReplayedH200 {
        calls: Vec::new(),
        cpu: qsweep_core::engine::cpu::CpuEngine::new(2),
    };
    let mut rows = 0;
    qsweep_core::run::run_points(&points, &table, spec.run.reps, &mut engine, &mut |_| {
        rows += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(rows, points.len());
    let params: Vec<PointParams> = points.iter().map(|p| p.params).collect();
    let mut groups = Specialization::for_batch(&params, SegmentLayout::InTurn);
    groups.sort();
    groups.dedup();
    eprintln!(
        "default study on a replayed H200: {} engine calls of {:?} replications, {} pipeline groups",
        engine.calls.len(),
        engine
            .calls
            .iter()
            .map(|c| c.1.iter().map(|t| t.rep_count).sum::<u32>())
            .collect::<Vec<_>>(),
        groups.len()
    );
    // At most one call per pipeline group (here: one call in all) ...
    assert!(
        engine.calls.len() <= groups.len(),
        "{} calls",
        engine.calls.len()
    );
    let total: u64 = points.len() as u64 * u64::from(spec.run.reps);
    let called: u64 = engine
        .calls
        .iter()
        .flat_map(|c| c.1.iter())
        .map(|t| u64::from(t.rep_count))
        .sum();
    assert_eq!(called, total, "every replication run once");
    // ... each planned on the H200 as one dispatch per pipeline group in
    // the call, with every replication in flight at once.
    for (params, tiles, slots) in &engine.calls {
        let batch = Batch {
            params,
            tiles,
            table: &table,
            slots: *slots,
        };
        let layouts = Layouts::for_batch(&batch, false, &large_gpu_limits());
        let plan = BatchPlan::new(&batch, &large_gpu_limits(), layouts).unwrap();
        let mut in_call = Specialization::for_batch(params, layouts.central);
        in_call.sort();
        in_call.dedup();
        assert_eq!(plan.dispatches.len(), in_call.len());
        let reps: u64 = tiles.iter().map(|t| u64::from(t.rep_count)).sum();
        let lanes: u64 = plan.dispatches.iter().map(|d| d.lanes()).sum();
        assert!(lanes >= reps, "{lanes} lanes for {reps} replications");
    }
}

/// A window too big for one binding's histograms: the run loop cuts its
/// calls before they are made (each within the engine's slots), never by
/// an engine's refusal and a point-by-point retry.
#[test]
fn calls_are_cut_to_what_one_binding_holds_before_they_are_made() {
    struct Small {
        calls: Vec<(u32, usize)>,
        cpu: qsweep_core::engine::cpu::CpuEngine,
    }
    impl qsweep_core::engine::Engine for Small {
        fn label(&self) -> String {
            "small".to_string()
        }
        fn call_sizing(&self) -> qsweep_core::engine::CallSizing {
            qsweep_core::engine::CallSizing {
                max_slots: 7,
                max_tiles: 9,
                ..Default::default()
            }
        }
        fn run(&mut self, batch: &Batch) -> anyhow::Result<qsweep_core::engine::BatchOutput> {
            self.calls.push((batch.slots, batch.tiles.len()));
            if batch.slots > 7 || batch.tiles.len() > 9 {
                anyhow::bail!(
                    "{} slots, {} tiles: over the binding",
                    batch.slots,
                    batch.tiles.len()
                );
            }
            self.cpu.run(batch)
        }
    }
    let spec = qsweep_core::spec::Spec::from_toml_str(
        "[sweep]\nrouting = [\"random\", \"jsq\"]\nservers = [2, 3, 4, 5, 6]\nrho = [0.5]\n\
         service = [\"exp(mean=1)\"]\n[run]\nreps = 200\ncustomers = 500\nwarmup = 0\n",
        "small",
        Path::new("."),
    )
    .unwrap();
    let (points, table) = qsweep_core::run::prepare(&spec, spec.points());
    let mut engine = Small {
        calls: Vec::new(),
        cpu: qsweep_core::engine::cpu::CpuEngine::new(1),
    };
    let mut errors = 0;
    qsweep_core::run::run_points(&points, &table, spec.run.reps, &mut engine, &mut |r| {
        errors += usize::from(r.error.is_some());
        Ok(())
    })
    .unwrap();
    assert_eq!(errors, 0);
    assert!(engine.calls.len() > 1);
    assert!(
        engine.calls.iter().all(|&(s, t)| s <= 7 && t <= 9),
        "{:?}",
        engine.calls
    );
}

#[test]
fn only_memory_splits_a_pipeline_group() {
    let owned = OwnedBatch::from_toml(qsweep_core::spec::SEED_TOML);
    let small = wgpu::Limits {
        max_storage_buffer_binding_size: 32 << 20,
        ..large_gpu_limits()
    };
    let layout = SegmentLayout::InTurn;
    let plan = BatchPlan::new(&owned.batch(), &small, layout).unwrap();
    let large = BatchPlan::new(&owned.batch(), &large_gpu_limits(), layout).unwrap();
    assert!(plan.dispatches.len() > large.dispatches.len());
    let mut next = 0;
    for d in &plan.dispatches {
        assert_eq!(d.tile_offset, next, "dispatches cover the tiles in order");
        next += d.tiles;
        assert!(d.heap_bytes() <= 32 << 20);
    }
    assert_eq!(next as usize, plan.tiles.len());
    // Split only where the next tile would not fit.
    for pair in plan.dispatches.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.spec == b.spec {
            let servers = a
                .max_servers
                .max(owned.params[plan.tiles[b.tile_offset as usize].param_index as usize].servers);
            let lanes = (a.lanes() + u64::from(qsweep_core::contract::TILE_REPS)) as f64;
            assert!(lanes * f64::from(servers) * 4.0 > f64::from(32u32 << 20));
        }
    }
}

#[test]
fn timed_passes_start_conservatively_adapt_and_stop_at_the_end() {
    let owned = OwnedBatch::from_toml(qsweep_core::spec::SEED_TOML);
    let layout = SegmentLayout::InTurn;
    let plan = BatchPlan::new(&owned.batch(), &large_gpu_limits(), layout).unwrap();
    let d = &plan.dispatches[0];
    let mut rates = PassRates::new(PassLength::Timed { loop_capped: false });
    let first = rates.pass_end(d, 0);
    assert!(first >= 1 && first < d.max_total, "{first}");
    // A pass 1000x faster than predicted lengthens the next 8x at most
    // (the model is not trusted far beyond the passes it was fitted on).
    rates.record(d, first, TARGET_PASS_SECONDS / 1000.0);
    let second = rates.pass_end(d, 0);
    assert!(second > first && second <= 8 * first, "{first} → {second}");
    // A slow pass shortens the next at once.
    rates.record(d, second, 10.0 * TARGET_PASS_SECONDS);
    let third = rates.pass_end(d, 0);
    assert!(third * 4 <= second, "{second} → {third}");
    // Never past the longest replication, however fast.
    for _ in 0..40 {
        let len = rates.pass_end(d, 0);
        rates.record(d, len, 1e-9);
    }
    assert_eq!(rates.pass_end(d, 0), d.max_total);
    assert_eq!(rates.pass_end(d, d.max_total - 3), d.max_total);
    // And under the tile histograms' u32 bins on a long replication.
    let long = super::plan::DispatchPlan {
        max_total: u32::MAX,
        ..*d
    };
    for _ in 0..40 {
        let len = rates.pass_end(&long, 0);
        rates.record(&long, len, 1e-9);
    }
    assert_eq!(rates.pass_end(&long, 0), MAX_PASS_CUSTOMERS);
}

/// A device whose pass over a dispatch takes `fixed` seconds plus its loop
/// iterations at `loops_per_second` over all its lanes, driven through the
/// pass-sizing loop with its own clock: the (customers, seconds) of every
/// pass until the dispatch ends.
fn fake_clock_passes(
    rates: &mut PassRates,
    d: &super::plan::DispatchPlan,
    loops_per_second: f64,
    fixed: f64,
) -> Vec<(u32, f64)> {
    let mut begin = 0;
    let mut passes = Vec::new();
    while begin < d.max_total {
        let end = rates.pass_end(d, begin);
        let customers = end - begin;
        let s = fixed + f64::from(customers) * d.cost as f64 * d.lanes() as f64 / loops_per_second;
        rates.record(d, customers, s);
        passes.push((customers, s));
        begin = end;
    }
    passes
}

fn timed() -> PassRates {
    PassRates::new(PassLength::Timed { loop_capped: false })
}

/// One long dispatch: 4096 M/M/1 replications of 10^8 customers.
fn long_dispatch() -> (OwnedBatch, BatchPlan) {
    let owned = OwnedBatch::from_toml(
        "[sweep]\nrouting = [\"central\"]\nservers = [1]\nrho = [0.9]\n\
         service = [\"exp(mean=1)\"]\n[run]\nreps = 4096\ncustomers = 100000000\nwarmup = 0\n",
    );
    let plan = BatchPlan::new(&owned.batch(), &large_gpu_limits(), SegmentLayout::InTurn).unwrap();
    (owned, plan)
}

#[test]
fn pass_sizing_reaches_its_target_fast_and_never_runs_long_on_a_fake_clock() {
    let (_owned, plan) = long_dispatch();
    let d = &plan.dispatches[0];
    let guess = super::pass_rates::START_LOOPS_PER_SECOND;
    // 1000x faster than the first guess: passes reach half their target
    // within a few passes (each launch costs tens of microseconds), then
    // stay there.
    let fast: Vec<f64> = fake_clock_passes(&mut timed(), d, 1000.0 * guess, 0.0)
        .iter()
        .map(|p| p.1)
        .collect();
    let reached = fast
        .iter()
        .position(|&s| s >= 0.5 * TARGET_PASS_SECONDS)
        .expect("passes never reached their target");
    eprintln!(
        "1000x faster: {} passes to reach the target: {:?}",
        reached + 1,
        &fast[..=reached]
    );
    assert!(reached < 6, "{:?}", &fast[..=reached]);
    let steady = &fast[reached..fast.len() - 1];
    assert!(
        steady
            .iter()
            .all(|&s| (0.5 * TARGET_PASS_SECONDS..=1.5 * TARGET_PASS_SECONDS).contains(&s)),
        "{steady:?}"
    );
    // 100x slower: no pass, the first included, comes near Windows' 2 s
    // watchdog (TDR). (One customer of all 4096 replications takes longer
    // than the target there, so later passes are one customer each.)
    let short = super::plan::DispatchPlan {
        max_total: 2_000,
        ..*d
    };
    let slow = fake_clock_passes(&mut timed(), &short, guess / 100.0, 0.0);
    let longest = slow.iter().map(|p| p.1).fold(0.0, f64::max);
    eprintln!("100x slower: longest pass {longest:.3} s of {}", slow.len());
    assert!(longest <= 1.0, "a pass of {longest} s");
    // 10x slower: after the first pass, passes keep to their target.
    let slower = fake_clock_passes(&mut timed(), &short, guess / 10.0, 0.0);
    assert!(
        slower[1..slower.len() - 1]
            .iter()
            .all(|p| p.1 <= 1.5 * TARGET_PASS_SECONDS),
        "{slower:?}"
    );
}

#[test]
fn a_fixed_cost_per_pass_is_fitted_and_never_collapses_the_passes() {
    // A software adapter's pass costs about 20 ms whatever it holds
    // (lavapipe), near the 30 ms target: a model of the loops' time alone
    // read such passes as a slow kernel and shrank them to a few customers.
    let (_owned, plan) = long_dispatch();
    let d = super::plan::DispatchPlan {
        max_total: 50_000_000,
        ..plan.dispatches[0]
    };
    let speed = 1e11;
    for fixed in [0.0, 0.005, 0.02, 0.1] {
        let mut rates = timed();
        let passes = fake_clock_passes(&mut rates, &d, speed, fixed);
        let steady = &passes[passes.len() / 2..passes.len() - 1];
        let (a, b) = rates.model(&d).unwrap();
        eprintln!(
            "fixed {fixed}: {} passes, steady {:?}, fitted a = {a:.4}, b = {b:.3e}",
            passes.len(),
            &steady[..2.min(steady.len())]
        );
        // The fit finds the device: its fixed cost and its loop time.
        assert!((a - fixed).abs() <= 1e-3 + 0.05 * fixed, "{a} vs {fixed}");
        let true_b = d.lanes() as f64 / speed;
        assert!((b / true_b - 1.0).abs() < 0.05, "{b} vs {true_b}");
        // Steady passes: the variable part at the target, or at least the
        // fixed cost where that is larger, so a pass is never mostly
        // overhead.
        for &(customers, seconds) in steady {
            let variable = seconds - fixed;
            assert!(
                variable >= 0.9 * fixed,
                "{customers} customers in {seconds} s"
            );
            assert!(
                variable >= 0.9 * (TARGET_PASS_SECONDS - fixed).max(fixed)
                    && variable <= 1.1 * (TARGET_PASS_SECONDS - fixed).max(fixed),
                "fixed {fixed}: {customers} customers in {seconds} s"
            );
        }
    }
}

#[test]
fn one_odd_pass_does_not_reset_the_model_and_each_pipeline_has_its_own() {
    let owned = OwnedBatch::from_toml(qsweep_core::spec::SEED_TOML);
    let plan = BatchPlan::new(&owned.batch(), &large_gpu_limits(), SegmentLayout::InTurn).unwrap();
    let (lindley, central) = (&plan.dispatches[0], plan.dispatches.last().unwrap());
    assert_ne!(lindley.spec, central.spec);
    let speed = 1e11;
    let mut rates = timed();
    let time = |d: &super::plan::DispatchPlan, n: u32| {
        0.002 + f64::from(n) * d.cost as f64 * d.lanes() as f64 / speed
    };
    // Settle on the one-server pipeline.
    let mut n = 0;
    for _ in 0..12 {
        n = rates.pass_end(lindley, 0);
        rates.record(lindley, n, time(lindley, n));
    }
    // One pass of one customer (a dispatch's last), and one timer glitch
    // a hundred times too long: the next pass is about as long as before.
    rates.record(lindley, 1, time(lindley, 1));
    let after_short = rates.pass_end(lindley, 0);
    rates.record(lindley, n, 100.0 * time(lindley, n));
    let after_glitch = rates.pass_end(lindley, 0);
    for m in [after_short, after_glitch] {
        assert!(
            (f64::from(m) / f64::from(n) - 1.0).abs() < 0.1,
            "{n} → {m} customers a pass"
        );
    }
    // The central queue's pipeline is unmeasured: it starts from the
    // conservative first guess, not from the one-server pipeline's rate.
    let fresh = timed();
    assert_eq!(rates.pass_end(central, 0), fresh.pass_end(central, 0));
}

/// The GPU engine, or `None` (the test skipped) when no adapter opens,
/// unless `QSWEEP_REQUIRE_GPU=1`.
fn gpu_or_skip(test: &str) -> Option<GpuEngine> {
    match GpuEngine::open(&AdapterChoice::default()) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("QSWEEP_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("{test}: QSWEEP_REQUIRE_GPU=1 but no GPU engine: {e:#}")
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: no GPU adapter ({e:#})");
            None
        }
    }
}

/// `GpuEngine::run`'s steps, with the histogram buffer pre-filled with
/// `hist` (words, as the kernels lay them out) before the first pass.
fn run_prefilled(gpu: &mut GpuEngine, batch: &Batch, hist: &[u32]) -> BatchOutput {
    let plan = BatchPlan::new(batch, &gpu.limits, gpu.layout_for(batch)).unwrap();
    for d in &plan.dispatches {
        gpu.pipelines
            .get_or_compile(&gpu.gpu.device, d.spec)
            .unwrap();
    }
    let buffers = BatchBuffers::create(&gpu.gpu, batch, &plan).unwrap();
    gpu.gpu
        .queue
        .write_buffer(&buffers.hist, 0, bytemuck::cast_slice(hist));
    submit::run_passes(
        &gpu.gpu,
        &gpu.pipelines,
        &plan,
        batch.params,
        &buffers,
        &mut gpu.rates,
        gpu.timestamps,
        qsweep_core::engine::Watch::none(),
    )
    .unwrap();
    readback::batch_output(&gpu.gpu, batch, &plan, &buffers).unwrap()
}

const MIXED: &str = "[sweep]\nrouting = [\"random\", \"central\", \"jsq\"]\nservers = [4, 100]\n\
                     rho = [0.8]\nservice = [\"exp(mean=1)\"]\n\n[run]\nreps = 80\n\
                     customers = 3000\nwarmup = 500\nseed = 7\n";

#[test]
fn pass_cutting_never_changes_results() {
    let Some(mut gpu) = gpu_or_skip("pass_cutting_never_changes_results") else {
        return;
    };
    eprintln!(
        "adapter {:?}: max_storage_buffer_binding_size {}, max_buffer_size {}, timestamps {}",
        gpu.adapter(),
        gpu.limits.max_storage_buffer_binding_size,
        gpu.limits.max_buffer_size,
        gpu.timestamps
    );
    let owned = OwnedBatch::from_toml(MIXED);
    let batch = owned.batch();
    // Every kernel, Kiefer–Wolfowitz with a fast and a storage heap side
    // by side in one pipeline.
    let specs: std::collections::BTreeSet<_> =
        Specialization::for_batch(&owned.params, SegmentLayout::InTurn)
            .into_iter()
            .collect();
    assert!(specs.len() >= 3, "{specs:?}");
    let shortest = owned.params.iter().map(pass_customers).min().unwrap();
    let mut outputs = Vec::new();
    for length in [
        PassLength::for_adapter(gpu.adapter()),
        PassLength::Fixed(97),
        PassLength::Fixed(shortest / 3 + 1),
    ] {
        gpu.rates.pass_length = length;
        let before = gpu.device_report().unwrap();
        let out = gpu.run(&batch).unwrap();
        let after = gpu.device_report().unwrap();
        eprintln!(
            "{length:?}: {} dispatches, {} passes, {} device seconds",
            after.dispatches - before.dispatches,
            after.passes - before.passes,
            after.device_seconds - before.device_seconds
        );
        assert_eq!(after.dispatches - before.dispatches, specs.len() as u64);
        outputs.push((length, out));
    }
    let (first_length, first) = &outputs[0];
    assert!(first.hist.iter().sum::<u64>() > 0);
    // And the CPU engine's, to the bit: the central queue of 4 (its heap in
    // fast memory) beside the one of 100 (in storage memory) in one
    // dispatch changes nothing.
    let cpu = qsweep_core::engine::cpu::CpuEngine::new(2)
        .run(&batch)
        .unwrap();
    assert_eq!(
        bytemuck::cast_slice::<_, u32>(&cpu.reps),
        bytemuck::cast_slice::<_, u32>(&first.reps),
        "cpu vs {first_length:?}"
    );
    assert_eq!(cpu.hist, first.hist, "cpu vs {first_length:?}");
    for (length, out) in &outputs[1..] {
        // Bit for bit: RepResult's f32s compared as bits.
        assert_eq!(
            bytemuck::cast_slice::<_, u32>(&first.reps),
            bytemuck::cast_slice::<_, u32>(&out.reps),
            "{first_length:?} vs {length:?}"
        );
        assert_eq!(first.hist, out.hist, "{first_length:?} vs {length:?}");
    }
}

#[test]
fn histogram_bins_carry_past_2_to_the_32() {
    let Some(mut gpu) = gpu_or_skip("histogram_bins_carry_past_2_to_the_32") else {
        return;
    };
    // 1024 replications of one queue: 16 sections of 64, so each slot's
    // bins get adds from several passes (97 customers each) of its tile.
    let owned = OwnedBatch::from_toml(
        "[sweep]\nrouting = [\"random\"]\nservers = [1]\nrho = [0.9]\n\
         service = [\"exp(mean=1)\"]\n\n[run]\nreps = 1024\ncustomers = 2000\nwarmup = 0\n",
    );
    let batch = owned.batch();
    gpu.rates.pass_length = PassLength::Fixed(97);
    let plain = gpu.run(&batch).unwrap();
    // Every bin starts at 3 × 2^32 + 2^32 - 16: 16 more customers carry.
    let (lo, hi) = (u32::MAX - 15, 3u32);
    let words = qsweep_core::engine::hist_len(batch.slots) * HIST_WORDS_PER_BIN as usize;
    let prefill: Vec<u32> = (0..words)
        .map(|w| if w % 2 == 0 { lo } else { hi })
        .collect();
    let filled = run_prefilled(&mut gpu, &batch, &prefill);
    let start = u64::from(hi) << 32 | u64::from(lo);
    let expected: Vec<u64> = plain.hist.iter().map(|&c| c + start).collect();
    assert_eq!(filled.hist, expected);
    assert_eq!(filled.reps, plain.reps);
    let carried = plain.hist.iter().filter(|&&c| c >= 16).count();
    assert!(carried > 100, "only {carried} bins carried");
}

#[test]
fn the_device_report_counts_dispatches_passes_and_lanes() {
    let Some(mut gpu) = gpu_or_skip("the_device_report_counts_dispatches_passes_and_lanes") else {
        return;
    };
    let owned = OwnedBatch::from_toml(MIXED);
    let plan = BatchPlan::new(&owned.batch(), &gpu.limits, gpu.layout_for(&owned.batch())).unwrap();
    // Each pass ends at its dispatch's loop cap at the latest, so at least
    // this many (the pass-time model may cut them shorter, by a rate that
    // follows the machine's load, so not a fixed count).
    let fewest_passes: u64 = plan
        .dispatches
        .iter()
        .map(|d| u64::from(d.max_total.div_ceil(d.loop_budget_pass.max(1))))
        .sum();
    gpu.run(&owned.batch()).unwrap();
    let report = gpu.device_report().unwrap();
    assert_eq!(report.dispatches, plan.dispatches.len() as u64);
    if gpu.rates.pass_length == PassLength::LoopBudget {
        // The loop budget bounds a pass; a software pass is also cut to
        // SOFTWARE_PASS_SECONDS by its fitted time, so there may be more.
        assert!(report.passes >= fewest_passes, "{report:?}");
    } else {
        // Timed: as many as the measurements made them.
        assert!(report.passes >= report.dispatches);
    }
    assert_eq!(
        report.max_invocations_per_dispatch,
        plan.dispatches
            .iter()
            .map(|d| d.invocations())
            .max()
            .unwrap()
    );
    assert!(report.device_seconds > 0.0);
    assert_eq!(report.adapter, gpu.label());
}

/// One-server points long enough for segments (4 of 5250 customers, the
/// warm-up ending inside the first), with reps that leave partial tiles.
const SEGMENTED: &str = "[sweep]\nrouting = [\"random\", \"round_robin\"]\nservers = [4]\n\
                         rho = [0.9]\nservice = [\"exp(mean=1)\", \"weibull(shape=0.5, mean=1)\"]\n\n\
                         [run]\nreps = 37\ncustomers = 20000\nwarmup = 1000\nseed = 11\n";

#[test]
fn segment_layouts_and_pass_cutting_agree_to_the_bit() {
    let Some(mut gpu) = gpu_or_skip("segment_layouts_and_pass_cutting_agree_to_the_bit") else {
        return;
    };
    let owned = OwnedBatch::from_toml(SEGMENTED);
    let batch = owned.batch();
    let segments = owned.params[0].segments();
    assert_eq!((segments.count, segments.length), (4, 5250));
    // Within lavapipe's loop budget for every point.
    let shortest = owned.params.iter().map(pass_customers).min().unwrap();
    assert!(shortest >= 1999, "{shortest}");
    let mut outputs = Vec::new();
    for (layout, length) in [
        (
            SegmentLayout::InTurn,
            PassLength::for_adapter(gpu.adapter()),
        ),
        (
            SegmentLayout::SideBySide,
            PassLength::for_adapter(gpu.adapter()),
        ),
        // Passes ending on a segment's end (in turn), on the scan's step
        // (5250) and the sums' (10500) side by side, and passes straddling
        // them.
        (SegmentLayout::InTurn, PassLength::Fixed(1750)),
        (SegmentLayout::SideBySide, PassLength::Fixed(1750)),
        (SegmentLayout::SideBySide, PassLength::Fixed(1050)),
        (SegmentLayout::SideBySide, PassLength::Fixed(1999)),
    ] {
        gpu.force_segment_layout(layout);
        gpu.rates.pass_length = length;
        outputs.push((layout, length, gpu.run(&batch).unwrap()));
    }
    let (l0, p0, first) = &outputs[0];
    assert_eq!(first.reps.len(), 4 * 37);
    assert!(first.reps.iter().all(|r| r.customers == 20_000));
    for (layout, length, out) in &outputs[1..] {
        assert_eq!(
            bytemuck::cast_slice::<_, u32>(&first.reps),
            bytemuck::cast_slice::<_, u32>(&out.reps),
            "{l0:?} {p0:?} vs {layout:?} {length:?}"
        );
        assert_eq!(
            first.hist, out.hist,
            "{l0:?} {p0:?} vs {layout:?} {length:?}"
        );
    }
}

#[test]
fn only_a_software_adapter_refuses_a_customer_over_its_loop_cap() {
    // lwl over 60000 servers: one customer scans them all, past lavapipe's
    // LOOP_BUDGET; a hardware adapter's timed passes take it.
    let owned = OwnedBatch::from_toml(
        "[sweep]\nrouting = [\"lwl\"]\nservers = [60000]\nrho = [0.5]\n\
         service = [\"exp(mean=1)\"]\n\n[run]\nreps = 4\ncustomers = 10\nwarmup = 0\n",
    );
    assert!(qsweep_core::contract::costs::loop_cost_per_customer(&owned.params[0]) > LOOP_BUDGET);
    let err = super::plan::check_gpu_limits(&owned.params, true).unwrap_err();
    assert!(err.to_string().contains("--backend cpu"), "{err}");
    super::plan::check_gpu_limits(&owned.params, false).unwrap();
}

/// Central queues beside and beyond the fast heap (R = 8 and 65 to 1000),
/// light- and heavy-tailed service, then abandonment and timeouts: a
/// workgroup per replication (the cooperative scan) and one invocation per
/// replication give the CPU engine's numbers to the bit, whatever the
/// passes.
#[test]
fn cooperative_central_queues_agree_with_one_invocation_and_the_cpu_to_the_bit() {
    let Some(mut gpu) =
        gpu_or_skip("cooperative_central_queues_agree_with_one_invocation_and_the_cpu_to_the_bit")
    else {
        return;
    };
    let plain = "[sweep]\nrouting = [\"central\"]\nservers = [8, 65, 1000]\nrho = [0.9]\n\
                 service = [\"exp(mean=1)\", \"weibull(shape=0.5, mean=1)\"]\n\n\
                 [run]\nreps = 5\ncustomers = 3000\nwarmup = 500\nseed = 5\n"
        .to_string();
    let patient = |reneging: &str| {
        format!(
            "[sweep]\nrouting = [\"central\"]\nservers = [100]\nrho = [0.98]\n\
             service = [\"exp(mean=1)\"]\npatience = [\"exp(mean=0.2)\"]\n\n\
             [run]\nreps = 3\ncustomers = 3000\nwarmup = 500\nseed = 9\n\
             reneging = \"{reneging}\"\n"
        )
    };
    for toml in [plain, patient("abandon"), patient("timeout")] {
        let owned = OwnedBatch::from_toml(&toml);
        let batch = owned.batch();
        // Side by side, each large queue's replication is a tile of its own.
        let plan = BatchPlan::new(&batch, &gpu.limits, SegmentLayout::SideBySide).unwrap();
        let large: u32 = owned
            .tiles
            .iter()
            .filter(|t| cooperative_candidate(&owned.params[t.param_index as usize]))
            .map(|t| t.rep_count)
            .sum();
        assert!(large > 0);
        let single = plan.tiles.iter().filter(|t| t.rep_count == 1).count();
        assert!(
            single >= large as usize,
            "{single} tiles of one for {large}"
        );
        let cpu = qsweep_core::engine::cpu::CpuEngine::new(2)
            .run(&batch)
            .unwrap();
        assert!(cpu.hist.iter().sum::<u64>() > 0);
        if toml.contains("patience") {
            assert!(cpu.reps.iter().all(|r| r.lost > 0), "{toml}");
        }
        for (layout, length) in [
            (
                SegmentLayout::InTurn,
                PassLength::for_adapter(gpu.adapter()),
            ),
            (
                SegmentLayout::SideBySide,
                PassLength::for_adapter(gpu.adapter()),
            ),
            (SegmentLayout::SideBySide, PassLength::Fixed(97)),
            (SegmentLayout::SideBySide, PassLength::Fixed(1001)),
        ] {
            gpu.force_segment_layout(layout);
            gpu.rates.pass_length = length;
            let out = gpu.run(&batch).unwrap();
            assert_eq!(
                bytemuck::cast_slice::<_, u32>(&cpu.reps),
                bytemuck::cast_slice::<_, u32>(&out.reps),
                "cpu vs {layout:?} {length:?}\n{toml}"
            );
            assert_eq!(cpu.hist, out.hist, "cpu vs {layout:?} {length:?}\n{toml}");
        }
    }
}
