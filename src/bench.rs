//! Throughput measurement shared by `qsweep bench` and the criterion suites
//! in `benches/`: the same standard cases on every engine.

use std::time::Instant;

use anyhow::Result;

use crate::contract::{kernel, law_kind, thinning, Law, PointParams};
use crate::engine::schedule::tiles_for_point;
use crate::engine::{Batch, Engine};

/// A standard benchmark point.
#[derive(Clone, Debug)]
pub struct BenchCase {
    pub name: &'static str,
    pub params: PointParams,
    pub table: Vec<f32>,
}

fn law(kind: u32, p: [f32; 4]) -> Law {
    Law {
        kind,
        p,
        scale: 1.0,
        lo: 0.0,
        hi: f32::MAX,
        ..Law::default()
    }
}

fn point(
    k: u32,
    thin: u32,
    servers: u32,
    route_n: u32,
    service: Law,
    arrival_mean: f32,
) -> PointParams {
    PointParams {
        arrival: law(law_kind::EXP, [arrival_mean, 0.0, 0.0, 0.0]),
        service,
        kernel: k,
        thinning: thin,
        servers,
        route_n,
        customers: 0,
        warmup: 0,
        seed_lo: 1,
        point_index: 0,
        inv_hist_scale: 1.0,
        ..PointParams::default()
    }
}

/// The standard cases: each policy, and `random` with exp, Weibull and
/// empirical service, all at rho = 0.9 except M/M/51 at 0.98.
pub fn standard_cases() -> Vec<BenchCase> {
    let exp = |m: f32| law(law_kind::EXP, [m, 0.0, 0.0, 0.0]);
    // Clamped Weibull(0.46) of the study, mean ≈ 0.264: lambda/R such that rho = 0.9.
    let weibull = Law {
        lo: 0.01,
        hi: 30.0,
        ..law(law_kind::WEIBULL, [0.110_917_89, 1.0 / 0.46, 0.0, 0.0])
    };
    let table: Vec<f32> = (1..=64).map(|i| 0.05 * i as f32).collect(); // mean 1.625
    let empirical = Law {
        n: 64,
        ..law(law_kind::EMPIRICAL, [0.0; 4])
    };
    vec![
        BenchCase {
            name: "random M/M/1",
            params: point(
                kernel::LINDLEY,
                thinning::RANDOM,
                1,
                51,
                exp(0.9),
                1.0 / 51.0,
            ),
            table: vec![0.0],
        },
        BenchCase {
            name: "random M/G/1 weibull(0.46)",
            params: point(
                kernel::LINDLEY,
                thinning::RANDOM,
                1,
                51,
                weibull,
                0.264 / 0.9 / 51.0,
            ),
            table: vec![0.0],
        },
        BenchCase {
            name: "random M/G/1 empirical",
            params: point(
                kernel::LINDLEY,
                thinning::RANDOM,
                1,
                51,
                empirical,
                1.625 / 0.9 / 51.0,
            ),
            table,
        },
        BenchCase {
            name: "round_robin E51/M/1",
            params: point(
                kernel::LINDLEY,
                thinning::EVERY_NTH,
                1,
                51,
                exp(0.9),
                1.0 / 51.0,
            ),
            table: vec![0.0],
        },
        BenchCase {
            name: "central M/M/51",
            params: point(
                kernel::KIEFER_WOLFOWITZ,
                thinning::NONE,
                51,
                1,
                exp(51.0 * 0.98),
                1.0,
            ),
            table: vec![0.0],
        },
        BenchCase {
            name: "central M/M/1000",
            params: point(
                kernel::KIEFER_WOLFOWITZ,
                thinning::NONE,
                1000,
                1,
                exp(900.0),
                1.0,
            ),
            table: vec![0.0],
        },
    ]
}

/// Customers/s of `engine` on `case` with `reps` replications of `customers`
/// each: one untimed warm-up call, then the best of `repeats` timed calls.
pub fn measure(
    engine: &mut dyn Engine,
    case: &BenchCase,
    reps: u32,
    customers: u32,
    repeats: u32,
) -> Result<f64> {
    let mut params = case.params;
    params.customers = customers;
    let params = [params];
    let (tiles, slots) = tiles_for_point(0, reps, 0);
    let batch = Batch {
        params: &params,
        tiles: &tiles,
        table: &case.table,
        slots,
    };
    engine.run(&batch)?;
    let mut best = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        engine.run(&batch)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(f64::from(reps) * f64::from(customers) / best.max(1e-9))
}
