//! The GPU kernels reproduce the CPU reference stream for stream: for every
//! kernel, thinning mode and law, per-replication means agree to 1e-4
//! relative (only transcendental last bits differ) and histograms nearly
//! bin for bin.

use crate::common::law;

use qsweep_core::contract::{Kernel, Law, LawKind, PointParams, Thinning, HIST_BINS};
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::schedule::{tiles_for_point_spanning, tiles_for_points};
use qsweep_core::engine::{Batch, Engine};
use qsweep_gpu::{HeapMemory, SegmentLayout};

fn point(
    index: u32,
    arrival: Law,
    service: Law,
    k: u32,
    thin: u32,
    servers: u32,
    route_n: u32,
) -> PointParams {
    PointParams {
        arrival,
        service,
        kernel: k,
        thinning: thin,
        servers,
        route_n,
        customers: 2000,
        warmup: 200,
        seed_lo: 12345,
        seed_hi: 7,
        point_index: index,
        inv_hist_scale: 1.0,
        ..PointParams::default()
    }
    .with_ln_keep()
}

/// An MMPP arrival law as a spec gives it (parsed, rescaled to `mean`).
fn mmpp_law(text: &str, mean: f64) -> Law {
    qsweep_core::dist::Dist::parse(
        text,
        qsweep_core::dist::Role::Arrival,
        std::path::Path::new("."),
    )
    .unwrap()
    .with_mean(mean)
    .to_law(&mut Vec::new())
}

/// A one-server replication of 20,000 customers: cut into segments were
/// its arrivals renewal, it must run as one with a stateful law (MMPP,
/// trace), whose draws depend on the state the previous one left.
fn long_single_segment(index: u32, arrival: Law, service: Law) -> PointParams {
    let p = PointParams {
        customers: 20_000,
        warmup: 1000,
        ..point(
            index,
            arrival,
            service,
            Kernel::Lindley.code(),
            Thinning::None.code(),
            1,
            1,
        )
    };
    assert_eq!(p.segments().count, 1);
    p
}

fn close(a: f32, b: f32, rel: f32) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-3)
}

#[test]
fn every_kernel_and_law_matches_the_cpu_reference() {
    let Some(mut gpu) =
        crate::common::gpu_or_skip("every_kernel_and_law_matches_the_cpu_reference")
    else {
        return;
    };
    let table = vec![0.1f32, 0.2, 0.25, 0.4, 0.9, 2.0];
    let exp_arr = law(LawKind::Exp, 0, [1.0, 0.0, 0.0, 0.0]);
    let services = [
        law(LawKind::Exp, 0, [0.8, 0.0, 0.0, 0.0]),
        law(LawKind::Det, 0, [0.8, 0.0, 0.0, 0.0]),
        law(LawKind::Erlang, 3, [0.25, 0.0, 0.0, 0.0]),
        law(LawKind::Gamma, 0, [0.5, 1.6, 0.0, 0.0]),
        law(LawKind::HyperExp, 0, [0.9, 0.45, 4.0, 0.0]),
        law(LawKind::LogNormal, 0, [-0.5, 0.8, 0.0, 0.0]),
        Law {
            lo: 0.01,
            hi: 30.0,
            ..law(LawKind::Weibull, 0, [0.3, 1.0 / 0.46, 0.0, 0.0])
        },
        // alpha 1.5 on [0.3, 20]: p[2] = (0.3/20)^1.5, p[3] = 1 - p[2].
        law(LawKind::Pareto, 0, [1.5, 0.3, 1.837_117_3e-3, 0.998_162_9]),
        law(LawKind::Uniform, 0, [0.2, 1.2, 0.0, 0.0]),
        // Empirical, resampled (p[0] = 0, the default) and smoothed
        // (p[0] = 1, smooth=linear).
        Law {
            offset: 0,
            n: 6,
            ..law(LawKind::Empirical, 6, [0.0; 4])
        },
        Law {
            offset: 0,
            n: 6,
            ..law(LawKind::Empirical, 6, [1.0, 0.0, 0.0, 0.0])
        },
    ];
    let mut params = Vec::new();
    for s in services {
        params.push(point(
            params.len() as u32,
            exp_arr,
            s,
            Kernel::Lindley.code(),
            Thinning::None.code(),
            1,
            1,
        ));
    }
    // Arrival laws through each thinning mode, and the multi-server kernel.
    let arrivals = [
        exp_arr,
        law(LawKind::Uniform, 0, [0.0, 2.0, 0.0, 0.0]),
        law(LawKind::Erlang, 2, [0.5, 0.0, 0.0, 0.0]),
        law(LawKind::HyperExp, 0, [0.9, 0.55, 5.0, 0.0]),
    ];
    let svc = law(LawKind::Exp, 0, [3.0, 0.0, 0.0, 0.0]);
    for a in arrivals {
        params.push(point(
            params.len() as u32,
            a,
            law(LawKind::Exp, 0, [3.5, 0.0, 0.0, 0.0]),
            Kernel::Lindley.code(),
            Thinning::Random.code(),
            1,
            4,
        ));
        params.push(point(
            params.len() as u32,
            a,
            law(LawKind::Exp, 0, [3.5, 0.0, 0.0, 0.0]),
            Kernel::Lindley.code(),
            Thinning::EveryNth.code(),
            1,
            4,
        ));
        params.push(point(
            params.len() as u32,
            a,
            svc,
            Kernel::KieferWolfowitz.code(),
            Thinning::None.code(),
            4,
            1,
        ));
    }
    // MMPP arrivals (stateful: a phase per replication, kept across
    // passes): with exponential and lognormal service on one server; thinned
    // at random by the stream's own draws (a geometric number of
    // consecutive ones: the path `run::point` takes only when the thinned
    // law would loop too long) and every 4th (round robin); a central queue
    // of 4; and a one-server replication long enough to be cut into
    // segments if it were renewal, which must run as one.
    let bursty = mmpp_law("mmpp(rates=[1,3],switch=[0.5,0.5])", 1.0);
    let mmpp_start = params.len();
    for (service, kernel, thinning, servers, route_n) in [
        (services[0], Kernel::Lindley, Thinning::None, 1, 1),
        (services[5], Kernel::Lindley, Thinning::None, 1, 1),
        (svc, Kernel::Lindley, Thinning::Random, 1, 4),
        (svc, Kernel::Lindley, Thinning::EveryNth, 1, 4),
        (svc, Kernel::KieferWolfowitz, Thinning::None, 4, 1),
    ] {
        params.push(point(
            params.len() as u32,
            bursty,
            service,
            kernel.code(),
            thinning.code(),
            servers,
            route_n,
        ));
    }
    params.push(long_single_segment(
        params.len() as u32,
        bursty,
        services[0],
    ));
    // Its draws depend on the phase: different interarrival sequences from
    // a renewal law of the same mean (checked below on the CPU's output).
    let mmpp_points = mmpp_start..params.len();
    // A replayed trace (the table's six values as gaps in order, scaled to
    // mean 1; stateful: a position per replication, kept across passes),
    // through the same kernels and thinnings.
    let trace = Law {
        offset: 0,
        n: 6,
        scale: 6.0 / 3.85,
        ..law(LawKind::Trace, 6, [0.0; 4])
    };
    for (service, kernel, thinning, servers, route_n) in [
        (services[0], Kernel::Lindley, Thinning::None, 1, 1),
        (svc, Kernel::Lindley, Thinning::Random, 1, 4),
        (svc, Kernel::Lindley, Thinning::EveryNth, 1, 4),
        (svc, Kernel::KieferWolfowitz, Thinning::None, 4, 1),
    ] {
        params.push(point(
            params.len() as u32,
            trace,
            service,
            kernel.code(),
            thinning.code(),
            servers,
            route_n,
        ));
    }
    params.push(long_single_segment(params.len() as u32, trace, services[0]));
    params.push(point(
        params.len() as u32,
        exp_arr,
        law(LawKind::Exp, 0, [45.0, 0.0, 0.0, 0.0]),
        Kernel::KieferWolfowitz.code(),
        Thinning::None.code(),
        51,
        1,
    ));
    params.push(point(
        params.len() as u32,
        exp_arr,
        law(LawKind::Exp, 0, [7.0, 0.0, 0.0, 0.0]),
        Kernel::KieferWolfowitz.code(),
        Thinning::Random.code(),
        8,
        2,
    ));
    // Above FAST_HEAP_MAX_SERVERS servers the heap stays in storage memory.
    params.push(point(
        params.len() as u32,
        exp_arr,
        law(LawKind::Exp, 0, [98.0, 0.0, 0.0, 0.0]),
        Kernel::KieferWolfowitz.code(),
        Thinning::None.code(),
        100,
        1,
    ));
    // The largest central queue: R = 4000 (storage-memory heap,
    // 11 sift levels, several passes on lavapipe).
    params.push(point(
        params.len() as u32,
        exp_arr,
        law(LawKind::Exp, 0, [3600.0, 0.0, 0.0, 0.0]),
        Kernel::KieferWolfowitz.code(),
        Thinning::None.code(),
        4000,
        1,
    ));
    // The sift's edge cases: no level (1 server), a missing right child (2),
    // a full tree (3), a partial last level (6).
    for servers in [1, 2, 3, 6] {
        params.push(point(
            params.len() as u32,
            exp_arr,
            law(LawKind::Exp, 0, [0.9 * servers as f32, 0.0, 0.0, 0.0]),
            Kernel::KieferWolfowitz.code(),
            Thinning::None.code(),
            servers,
            1,
        ));
    }
    // A one-entry empirical table (the branch-free lookup's edge case), in
    // both modes.
    for smooth in [0.0, 1.0] {
        params.push(point(
            params.len() as u32,
            exp_arr,
            Law {
                offset: 4,
                n: 1,
                ..law(LawKind::Empirical, 1, [smooth, 0.0, 0.0, 0.0])
            },
            Kernel::Lindley.code(),
            Thinning::None.code(),
            1,
            1,
        ));
    }
    // One-server replications long enough to be cut into segments (4 of
    // 5250 customers), run in turn and side by side.
    for (service, thinning, route_n) in [
        (
            law(LawKind::Exp, 0, [0.9, 0.0, 0.0, 0.0]),
            Thinning::None,
            1,
        ),
        (
            law(LawKind::Exp, 0, [3.6, 0.0, 0.0, 0.0]),
            Thinning::Random,
            4,
        ),
        (services[6], Thinning::None, 1),
    ] {
        let p = point(
            params.len() as u32,
            exp_arr,
            service,
            Kernel::Lindley.code(),
            thinning.code(),
            1,
            route_n,
        );
        let long = PointParams {
            customers: 20_000,
            warmup: 1000,
            ..p
        };
        assert_eq!(long.segments().count, 4);
        params.push(long);
    }

    let reps = 40;
    let (tiles, slots) = tiles_for_points(params.len() as u32, reps);
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &table,
        slots,
    };
    let cpu_out = CpuEngine::new(2).run(&batch).unwrap();
    // The MMPP points' interarrivals have the stream's mean (1, or 4 behind
    // the thinnings) over their replications, to a few per cent.
    for (t, chunk) in tiles.iter().zip(cpu_out.reps.chunks(reps as usize)) {
        let i = t.param_index as usize;
        if mmpp_points.contains(&i) {
            let p = &params[i];
            let expect = if p.effective_thinning() == Thinning::None {
                1.0
            } else {
                f64::from(p.route_n)
            };
            let mean = chunk
                .iter()
                .map(|r| f64::from(r.mean_interarrival))
                .sum::<f64>()
                / chunk.len() as f64;
            assert!(
                (mean / expect - 1.0).abs() < 0.1,
                "MMPP point {i}: mean interarrival {mean}, expected {expect}"
            );
        }
    }
    // Small queues' heaps in private and in workgroup memory, one-server
    // segments in turn and side by side (the defaults on software and
    // hardware adapters respectively), on this adapter.
    for (memory, layout) in [
        (HeapMemory::Private, SegmentLayout::InTurn),
        (HeapMemory::Workgroup, SegmentLayout::SideBySide),
    ] {
        gpu.prefer_heap_memory(memory);
        gpu.force_segment_layout(layout);
        let gpu_out = gpu.run(&batch).unwrap();
        assert_eq!(cpu_out.reps.len(), gpu_out.reps.len());
        let mut worst = 0.0f32;
        let mut offset = 0;
        for t in &tiles {
            for k in 0..t.rep_count as usize {
                let (c, g) = (cpu_out.reps[offset + k], gpu_out.reps[offset + k]);
                let what = format!(
                    "point {} rep {}: cpu {c:?} gpu {g:?}",
                    t.param_index,
                    t.rep_start as usize + k
                );
                assert_eq!(c.customers, g.customers, "{what}");
                assert_eq!(c.status, 0, "{what}");
                assert_eq!(g.status, 0, "{what}");
                for (a, b) in [
                    (c.mean_wait, g.mean_wait),
                    (c.mean_sojourn, g.mean_sojourn),
                    (c.mean_service, g.mean_service),
                    (c.mean_interarrival, g.mean_interarrival),
                    (c.max_wait, g.max_wait),
                    (c.max_sojourn, g.max_sojourn),
                ] {
                    worst = worst.max((a - b).abs() / a.abs().max(b.abs()).max(1e-3));
                    assert!(close(a, b, 1e-4), "{what}");
                }
                assert!(
                    (c.p_wait - g.p_wait).abs() <= 2.0 / c.customers as f32,
                    "{what}"
                );
            }
            offset += t.rep_count as usize;
        }
        // Histograms: the same customers, binned from values that differ in the
        // last bits, so a count may cross a bin edge into the neighbouring bin,
        // but the distributions must agree: the largest gap between the two
        // cumulative counts (a Kolmogorov distance) stays below 1e-4 of all.
        let total: u64 = cpu_out.hist.iter().sum();
        assert_eq!(total, gpu_out.hist.iter().sum::<u64>());
        let (mut cum, mut gap) = (0i64, 0i64);
        for (a, b) in cpu_out.hist.iter().zip(&gpu_out.hist) {
            cum += *a as i64 - *b as i64;
            gap = gap.max(cum.abs());
        }
        assert!(
            gap as u64 * 10_000 <= total,
            "cumulative histogram counts differ by {gap} of {total}"
        );
        let moved: u64 = cpu_out
            .hist
            .iter()
            .zip(&gpu_out.hist)
            .map(|(a, b)| a.abs_diff(*b))
            .sum();
        eprintln!(
            "{memory:?} heap, segments {layout:?}: worst relative difference {worst:e}; histogram counts moved {moved}/{total}, largest cumulative gap {gap}"
        );
    }
}

/// Empirical laws draw no transcendental, so with a law of the same kind
/// for arrivals (no `ln` or `exp` anywhere) the GPU's replications are the
/// CPU's to the bit, histograms included: resampled (the default) and
/// smoothed (`smooth=linear`), from a table of 1000 irregular values, on
/// one server, behind thinning and at four servers.
#[test]
fn empirical_replications_are_the_cpus_to_the_bit() {
    let Some(mut gpu) =
        crate::common::gpu_or_skip("empirical_replications_are_the_cpus_to_the_bit")
    else {
        return;
    };
    // Services from 0.0005 to 0.5 (mean 0.2), scaled to load 0.8, after
    // arrival gaps of mean 1.25 (both tables sorted).
    let mut table: Vec<f32> = (0..1000u32)
        .map(|i| 0.5 * ((i * 7919 % 1000) as f32 / 1000.0 + 0.0005).powf(1.5))
        .collect();
    table.sort_by(f32::total_cmp);
    let gaps: Vec<f32> = (1..=1000u32).map(|i| 0.0025 * i as f32).collect();
    table.extend(gaps);
    let mut params = Vec::new();
    for smooth in [0.0, 1.0] {
        let service = Law {
            offset: 0,
            n: 1000,
            ..law(LawKind::Empirical, 1000, [smooth, 0.0, 0.0, 0.0])
        };
        let arrival = Law {
            offset: 1000,
            n: 1000,
            ..law(LawKind::Empirical, 1000, [smooth, 0.0, 0.0, 0.0])
        };
        for (kernel, thinning, servers, route_n, scale) in [
            (Kernel::Lindley, Thinning::None, 1, 1, 5.0),
            (Kernel::Lindley, Thinning::Random, 1, 3, 15.0),
            (Kernel::Lindley, Thinning::EveryNth, 1, 3, 15.0),
            (Kernel::KieferWolfowitz, Thinning::None, 4, 1, 20.0),
        ] {
            let service = Law { scale, ..service };
            params.push(point(
                params.len() as u32,
                arrival,
                service,
                kernel.code(),
                thinning.code(),
                servers,
                route_n,
            ));
        }
    }
    let reps = 16;
    let (tiles, slots) = tiles_for_points(params.len() as u32, reps);
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &table,
        slots,
    };
    let cpu = CpuEngine::new(2).run(&batch).unwrap();
    let gpu = gpu.run(&batch).unwrap();
    let mut offset = 0;
    for t in &tiles {
        for k in 0..t.rep_count as usize {
            let (c, g) = (cpu.reps[offset + k], gpu.reps[offset + k]);
            assert_eq!(c.status, 0);
            assert_eq!(
                bytemuck::bytes_of(&c),
                bytemuck::bytes_of(&g),
                "point {} rep {}:\n cpu {c:?}\n gpu {g:?}",
                t.param_index,
                t.rep_start as usize + k
            );
        }
        offset += t.rep_count as usize;
    }
    assert!(cpu.hist == gpu.hist, "histograms differ");
    // The queues did wait (the comparison covers the recursions).
    assert!(cpu.reps.iter().all(|r| r.p_wait > 0.2), "{:?}", cpu.reps[0]);
}

/// A run of few long replications cuts each into histogram sections
/// (`PointParams::rep_sections`): request j of a replication goes to
/// section j / (customers / sections), the dropped ones counted, in every
/// kernel and both segment layouts. The sections of a replication add up
/// to its unsectioned histogram, each holds its share of the requests,
/// and the GPU puts every request in the CPU's section.
#[test]
fn sections_within_replications_match_the_cpu() {
    let Some(mut gpu) = crate::common::gpu_or_skip("sections_within_replications_match_the_cpu")
    else {
        return;
    };
    const SECTIONS: u32 = 4;
    let (reps, customers) = (4u32, 20_000u32);
    let abandon = (
        "patience = [\"det(value=2)\"]\n",
        "reneging = \"abandon\"\n",
    );
    // One-server (segmented, then one segment under abandonment), central
    // queue, dispatch (with and without abandonment).
    let cases = [
        ("random", 1, ("", "")),
        ("central", 4, ("", "")),
        ("jsq", 4, ("", "")),
        ("random", 1, abandon),
        ("jsq", 4, abandon),
    ];
    let mut params = Vec::new();
    for (i, (routing, servers, (sweep, run))) in cases.into_iter().enumerate() {
        let text = format!(
            "[sweep]\nrouting = [\"{routing}\"]\nservers = [{servers}]\nrho = [0.95]\n\
             arrival = [\"uniform(min=0,max=2)\"]\nservice = [\"uniform(min=0,max=2)\"]\n{sweep}\n\
             [run]\nreps = {reps}\ncustomers = {customers}\nwarmup = 1000\nseed = 5\n{run}"
        );
        let spec = qsweep_core::spec::Spec::from_toml_str(&text, "test", std::path::Path::new("."))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let (prepared, _) = qsweep_core::run::prepare(&spec, spec.points());
        params.push(PointParams {
            point_index: i as u32,
            rep_sections: SECTIONS,
            ..prepared[0].params
        });
    }
    assert_eq!(
        params[0].segments().count,
        4,
        "the first point runs in segments"
    );
    let table = [0.0f32];
    let (mut tiles, mut slots) = (Vec::new(), 0);
    for i in 0..params.len() as u32 {
        let (t, n) = tiles_for_point_spanning(i, reps, slots, SECTIONS);
        tiles.extend(t);
        slots += n;
    }
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &table,
        slots,
    };
    let cpu = CpuEngine::new(2).run(&batch).unwrap();

    // The same replications, one section each.
    let plain_params: Vec<PointParams> = params
        .iter()
        .map(|p| PointParams {
            rep_sections: 0,
            ..*p
        })
        .collect();
    let (plain_tiles, plain_slots) = tiles_for_points(params.len() as u32, reps);
    let plain = CpuEngine::new(2)
        .run(&Batch {
            params: &plain_params,
            tiles: &plain_tiles,
            table: &table,
            slots: plain_slots,
        })
        .unwrap();
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&plain.reps),
        bytemuck::cast_slice::<_, u8>(&cpu.reps),
        "sections change no replication"
    );
    let bins = HIST_BINS as usize;
    let slot = |h: &[u64], s: usize| h[s * bins..(s + 1) * bins].to_vec();
    let total = |h: &[u64], s: usize| slot(h, s).iter().sum::<u64>();
    let length = customers / SECTIONS;
    let mut dropped_somewhere = false;
    for (i, p) in params.iter().enumerate() {
        for r in 0..reps as usize {
            let result = cpu.reps[i * reps as usize + r];
            assert_eq!(result.status, 0, "point {i} rep {r}: {result:?}");
            let first = (i * reps as usize + r) * SECTIONS as usize;
            let mut sum = vec![0u64; bins];
            let mut counts = Vec::new();
            for s in first..first + SECTIONS as usize {
                for (a, b) in sum.iter_mut().zip(slot(&cpu.hist, s)) {
                    *a += b;
                }
                counts.push(total(&cpu.hist, s));
            }
            assert_eq!(
                sum,
                slot(&plain.hist, i * reps as usize + r),
                "point {i} rep {r}"
            );
            if p.drops_late() {
                let lost = u64::from(result.lost);
                assert_eq!(counts.iter().sum::<u64>(), u64::from(customers) - lost);
                assert!(counts.iter().all(|&c| c <= u64::from(length)), "{counts:?}");
                dropped_somewhere |= lost > 0;
            } else {
                assert!(
                    counts.iter().all(|&c| c == u64::from(length)),
                    "point {i} rep {r}: {counts:?}"
                );
            }
        }
    }
    assert!(dropped_somewhere, "the abandonment points dropped requests");

    for layout in [SegmentLayout::InTurn, SegmentLayout::SideBySide] {
        gpu.force_segment_layout(layout);
        let g = gpu.run(&batch).unwrap();
        for (k, (c, r)) in cpu.reps.iter().zip(&g.reps).enumerate() {
            assert_eq!(c.customers, r.customers, "rep {k}");
            assert_eq!(c.lost, r.lost, "rep {k}");
            assert!(
                close(c.mean_wait, r.mean_wait, 1e-4),
                "rep {k}: {c:?} {r:?}"
            );
        }
        // Every request in the CPU's section; within a section, values
        // that differ in their last bits may cross a bin edge.
        for s in 0..slots as usize {
            assert_eq!(
                total(&cpu.hist, s),
                total(&g.hist, s),
                "{layout:?} slot {s}"
            );
        }
        let all: u64 = cpu.hist.iter().sum();
        let (mut cum, mut gap) = (0i64, 0i64);
        for (a, b) in cpu.hist.iter().zip(&g.hist) {
            cum += *a as i64 - *b as i64;
            gap = gap.max(cum.abs());
        }
        assert!(gap as u64 * 10_000 <= all, "{layout:?}: gap {gap} of {all}");
    }
}
