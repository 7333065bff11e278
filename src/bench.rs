//! Throughput measurement shared by `qsweep bench` and the criterion suites
//! in `benches/`: the same standard cases on every engine.

use std::time::Instant;

use anyhow::Result;

use crate::contract::{DispatchPolicy, Kernel, Law, LawKind, PointParams, Thinning, Tile};
use crate::engine::schedule::tiles_for_point;
use crate::engine::{Batch, Engine};

/// A standard benchmark point.
#[derive(Clone, Debug)]
pub struct BenchCase {
    pub name: &'static str,
    pub params: PointParams,
    pub table: Vec<f32>,
}

fn law(kind: LawKind, p: [f32; 4]) -> Law {
    Law::unclamped(kind, p)
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
        arrival: law(LawKind::Exp, [arrival_mean, 0.0, 0.0, 0.0]),
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
/// empirical service, all at rho = 0.9 except M/M/51 at 0.98; the dynamic
/// policies (whole system simulated) with 100 servers.
pub fn standard_cases() -> Vec<BenchCase> {
    let exp = |m: f32| law(LawKind::Exp, [m, 0.0, 0.0, 0.0]);
    // Clamped Weibull(0.46) of the study, mean ≈ 0.264: lambda/R such that rho = 0.9.
    let weibull = Law {
        lo: 0.01,
        hi: 30.0,
        ..law(LawKind::Weibull, [0.110_917_89, 1.0 / 0.46, 0.0, 0.0])
    };
    let table: Vec<f32> = (1..=64).map(|i| 0.05 * i as f32).collect(); // mean 1.625
    let empirical = Law {
        n: 64,
        ..law(LawKind::Empirical, [0.0; 4])
    };
    vec![
        BenchCase {
            name: "random M/M/1",
            params: point(
                Kernel::Lindley.code(),
                Thinning::Random.code(),
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
                Kernel::Lindley.code(),
                Thinning::Random.code(),
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
                Kernel::Lindley.code(),
                Thinning::Random.code(),
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
                Kernel::Lindley.code(),
                Thinning::EveryNth.code(),
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
                Kernel::KieferWolfowitz.code(),
                Thinning::None.code(),
                51,
                1,
                exp(51.0 * 0.98),
                1.0,
            ),
            table: vec![0.0],
        },
        dynamic("jsq R=100", DispatchPolicy::Jsq.code(), 1, 1),
        dynamic("pod(d=2) R=100", DispatchPolicy::Pod.code(), 2, 1),
        dynamic("jiq R=100", DispatchPolicy::Jiq.code(), 1, 1),
        dynamic("lwl R=100", DispatchPolicy::Lwl.code(), 1, 1),
        dynamic(
            "central R=100, 4 routers",
            DispatchPolicy::Central.code(),
            1,
            4,
        ),
        BenchCase {
            name: "central M/M/1000",
            params: point(
                Kernel::KieferWolfowitz.code(),
                Thinning::None.code(),
                1000,
                1,
                exp(900.0),
                1.0,
            ),
            table: vec![0.0],
        },
    ]
}

/// A dynamic policy on 100 exponential servers of mean 1 at rho = 0.9.
fn dynamic(name: &'static str, policy: u32, choices: u32, routers: u32) -> BenchCase {
    let mut params = point(
        Kernel::Dispatch.code(),
        Thinning::None.code(),
        100,
        policy,
        law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]),
        1.0 / (0.9 * 100.0),
    );
    params.choices = choices;
    params.routers = routers;
    BenchCase {
        name,
        params,
        table: vec![0.0],
    }
}

impl BenchCase {
    /// This case as a one-point batch: parameters, tiles and histogram slots
    /// for `reps` replications of `customers` each.
    pub fn parts(&self, reps: u32, customers: u32) -> ([PointParams; 1], Vec<Tile>, u32) {
        let mut params = self.params;
        params.customers = customers;
        let (tiles, slots) = tiles_for_point(0, reps, 0);
        ([params], tiles, slots)
    }
}

/// One measured (case, backend) pair.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub case: &'static str,
    pub backend: String,
    pub adapter: String,
    pub driver: String,
    pub customers: f64,
    pub wall_seconds: f64,
    /// Time the device spent on the dispatches (GPU only): the sum of the
    /// waits for each pass, excluding upload, compilation and readback.
    pub device_seconds: Option<f64>,
    pub customers_per_s: f64,
    /// customers/s of this backend over the CPU engine's, same case and run.
    pub ratio_to_cpu: Option<f64>,
    /// Estimated f32 operations per customer (`engine::opcount`).
    pub ops_per_customer: Option<f64>,
    /// The backend's measured peak f32 operations/s (`peak.wgsl` on a GPU,
    /// `cpu::peak_ops_per_second` on the CPU).
    pub peak_ops_per_s: Option<f64>,
}

impl BenchRow {
    /// Achieved operations/s over the peak: how much of the backend's
    /// arithmetic the kernel uses (timed on the device where it can be).
    pub fn fraction_of_peak(&self) -> Option<f64> {
        let secs = self.device_seconds.unwrap_or(self.wall_seconds);
        let achieved = self.ops_per_customer? * self.customers / secs;
        Some(achieved / self.peak_ops_per_s?)
    }
}

/// CSV header of [`BenchRow`]s, as `qsweep bench --out` writes them.
pub const BENCH_COLUMNS: [&str; 12] = [
    "case",
    "backend",
    "adapter",
    "driver",
    "customers",
    "wall_seconds",
    "device_seconds",
    "customers_per_s",
    "ratio_to_cpu",
    "ops_per_customer",
    "peak_ops_per_s",
    "fraction_of_peak",
];

impl BenchRow {
    pub fn fields(&self) -> Vec<String> {
        use crate::output::num;
        vec![
            self.case.to_string(),
            self.backend.clone(),
            self.adapter.clone(),
            self.driver.clone(),
            num(self.customers),
            num(self.wall_seconds),
            self.device_seconds.map(num).unwrap_or_default(),
            num(self.customers_per_s),
            self.ratio_to_cpu.map(num).unwrap_or_default(),
            self.ops_per_customer.map(num).unwrap_or_default(),
            self.peak_ops_per_s.map(num).unwrap_or_default(),
            self.fraction_of_peak().map(num).unwrap_or_default(),
        ]
    }
}

/// Run every standard case for about `seconds` each on `engine`: the size
/// is grown from a probe until one timed call takes at least that long.
pub fn measure_for(engine: &mut dyn Engine, case: &BenchCase, seconds: f64) -> Result<(f64, f64)> {
    let reps = 1024;
    // Small first: the dynamic policies on a software adapter run at 10^5/s.
    let mut customers = 500u32;
    loop {
        let (params, tiles, slots) = case.parts(reps, customers);
        let batch = Batch {
            params: &params,
            tiles: &tiles,
            table: &case.table,
            slots,
        };
        let t = Instant::now();
        engine.run(&batch)?;
        let secs = t.elapsed().as_secs_f64();
        let done = f64::from(reps) * f64::from(customers);
        if secs >= seconds || customers >= 1 << 24 {
            return Ok((done, secs));
        }
        // Aim a little past the target so the next call is the timed one.
        let grow = (1.3 * seconds / secs.max(1e-3)).clamp(2.0, 64.0);
        customers = ((f64::from(customers) * grow) as u32).min(1 << 24);
    }
}
