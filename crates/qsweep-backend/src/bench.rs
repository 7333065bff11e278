//! Throughput measurement shared by `qsweep bench` and the criterion suites
//! in `benches/`: the same standard cases on every engine.

use std::time::Instant;

use anyhow::Result;

use qsweep_core::contract::{
    DispatchPolicy, Kernel, Law, LawKind, PointParams, Reneging, Thinning, Tile,
};
use qsweep_core::engine::schedule::tiles_for_point;
use qsweep_core::engine::{Batch, Engine};

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
    k: Kernel,
    thin: Thinning,
    servers: u32,
    route_n: u32,
    service: Law,
    arrival_mean: f32,
) -> PointParams {
    PointParams {
        arrival: law(LawKind::Exp, [arrival_mean, 0.0, 0.0, 0.0]),
        service,
        kernel: k.code(),
        thinning: thin.code(),
        servers,
        route_n,
        customers: 0,
        warmup: 0,
        seed_lo: 1,
        point_index: 0,
        inv_hist_scale: 1.0,
        ..PointParams::default()
    }
    .with_ln_keep()
}

/// The standard cases: each policy, and `random` with exp, Weibull and
/// empirical service, all at rho = 0.9 except M/M/51 at 0.98; MMPP/M/1
/// (bursty arrivals); the dynamic policies (whole system simulated) with
/// 100 servers.
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
                Kernel::Lindley,
                Thinning::Random,
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
                Kernel::Lindley,
                Thinning::Random,
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
                Kernel::Lindley,
                Thinning::Random,
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
                Kernel::Lindley,
                Thinning::EveryNth,
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
                Kernel::KieferWolfowitz,
                Thinning::None,
                51,
                1,
                exp(51.0 * 0.98),
                1.0,
            ),
            table: vec![0.0],
        },
        dynamic("jsq R=100", DispatchPolicy::Jsq, 1, 1),
        dynamic("pod(d=2) R=100", DispatchPolicy::Pod, 2, 1),
        dynamic("jiq R=100", DispatchPolicy::Jiq, 1, 1),
        dynamic("lwl R=100", DispatchPolicy::Lwl, 1, 1),
        dynamic("central R=100, 4 routers", DispatchPolicy::Central, 1, 4),
        BenchCase {
            name: "central M/M/1000",
            params: point(
                Kernel::KieferWolfowitz,
                Thinning::None,
                1000,
                1,
                exp(900.0),
                1.0,
            ),
            table: vec![0.0],
        },
        // Patience (abandonment), against the plain cases above: Erlang A
        // with patience of mean two service times, one dyno of 51 and the
        // central queue of 51.
        BenchCase {
            name: "random Erlang A (M/M/1+M)",
            params: abandoning(
                point(
                    Kernel::Lindley,
                    Thinning::Random,
                    1,
                    51,
                    exp(0.9),
                    1.0 / 51.0,
                ),
                1.8,
            ),
            table: vec![0.0],
        },
        BenchCase {
            name: "central Erlang A (M/M/51+M)",
            params: abandoning(
                point(
                    Kernel::KieferWolfowitz,
                    Thinning::None,
                    51,
                    1,
                    exp(51.0 * 0.98),
                    1.0,
                ),
                2.0 * 51.0 * 0.98,
            ),
            table: vec![0.0],
        },
        // A capacity: one random-routed dyno of 51 with room for 20
        // (M/M/1/20: the Kiefer–Wolfowitz kernel with c = 1 and its ring),
        // and the central queue of 51 with 20 waiting places (M/M/51/71).
        BenchCase {
            name: "random finite M/M/1/20",
            params: PointParams {
                system_limit: 20,
                ..point(
                    Kernel::KieferWolfowitz,
                    Thinning::Random,
                    1,
                    51,
                    exp(0.9),
                    1.0 / 51.0,
                )
            },
            table: vec![0.0],
        },
        BenchCase {
            name: "central finite M/M/51/71",
            params: PointParams {
                system_limit: 71,
                ..point(
                    Kernel::KieferWolfowitz,
                    Thinning::None,
                    51,
                    1,
                    exp(51.0 * 0.98),
                    1.0,
                )
            },
            table: vec![0.0],
        },
        // Bursty arrivals: MMPP/M/1 (index of dispersion 2, bursts at 1.35
        // times the service rate) at rho = 0.9, one stateful draw per customer.
        BenchCase {
            name: "MMPP/M/1 (dispersion 2)",
            params: PointParams {
                arrival: qsweep_core::dist::Dist::parse(
                    "mmpp(rates=[1,3],switch=[0.5,0.5])",
                    qsweep_core::dist::Role::Arrival,
                    std::path::Path::new("."),
                )
                .expect("a valid law")
                .to_law(&mut Vec::new()),
                ..point(Kernel::Lindley, Thinning::None, 1, 1, exp(0.9), 1.0)
            },
            table: vec![0.0],
        },
        // A mixed fleet, against "jsq R=100": 80 dynos of speed 1 and 20 of
        // speed 2 (capacity 120) at rho = 0.9, each service scaled by its
        // dyno's class and each wait summed per class.
        BenchCase {
            name: "jsq fleet 80x1,20x2",
            params: PointParams {
                fleet_classes: 2,
                fleet_end: [20, 100, 100, 100],
                fleet_time: [0.5, 1.0, 1.0, 1.0],
                fleet_pick: [u32::MAX / 3, u32::MAX, u32::MAX, u32::MAX],
                ..point(
                    Kernel::Dispatch,
                    Thinning::None,
                    100,
                    DispatchPolicy::Jsq.code(),
                    law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]),
                    1.0 / (0.9 * 120.0),
                )
            },
            table: vec![0.0],
        },
        // The dispatch kernel's limits, against "jsq R=100": a backlog of 5
        // per dyno, and patience of mean two service times.
        BenchCase {
            name: "jsq R=100 backlog 5",
            params: PointParams {
                system_limit: 5,
                ..dynamic("", DispatchPolicy::Jsq, 1, 1).params
            },
            table: vec![0.0],
        },
        BenchCase {
            name: "jsq R=100 abandon (mean patience 2)",
            params: abandoning(dynamic("", DispatchPolicy::Jsq, 1, 1).params, 2.0),
            table: vec![0.0],
        },
    ]
}

/// `p` whose requests abandon after an exponential patience of mean
/// `patience_mean`.
fn abandoning(p: PointParams, patience_mean: f32) -> PointParams {
    PointParams {
        reneging: Reneging::Abandon.code(),
        patience: law(LawKind::Exp, [patience_mean, 0.0, 0.0, 0.0]),
        ..p
    }
}

/// A dynamic policy on 100 exponential servers of mean 1 at rho = 0.9.
fn dynamic(name: &'static str, policy: DispatchPolicy, choices: u32, routers: u32) -> BenchCase {
    let mut params = point(
        Kernel::Dispatch,
        Thinning::None,
        100,
        policy.code(),
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
    /// Estimated f32 operations per customer (`qsweep_gpu::opcount`).
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
        use qsweep_core::output::num;
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

pub use qsweep_core::engine::MAX_CALL_SECONDS;
/// Replications a measurement grows to before it lengthens them: enough
/// invocations to fill a large GPU (an H200 holds about 270,000 threads).
pub const MAX_BENCH_REPS: u32 = 1 << 18;
// Customers grow (past one segment) only at MAX_BENCH_REPS, where a GPU runs
// one-server segments in turn, as the op counts assume.
const _: () = assert!(MAX_BENCH_REPS as u64 >= qsweep_gpu::SIDE_BY_SIDE_BELOW_REPS);

/// Customers `engine` simulates of `case` in about `seconds`: the call is
/// grown from a small probe — replications first (to fill a wide device),
/// then customers — until one call takes about [`MAX_CALL_SECONDS`], then
/// repeated until `seconds` have passed.
pub fn measure_for(engine: &mut dyn Engine, case: &BenchCase, seconds: f64) -> Result<Measured> {
    let target = MAX_CALL_SECONDS.min(seconds) * 0.8;
    let mut reps = 1024u32;
    // Small first: the dynamic policies on a software adapter run at 10^5/s.
    let mut customers = 500u32;
    let mut call = |reps: u32, customers: u32| -> Result<(f64, Option<f64>)> {
        let (params, tiles, slots) = case.parts(reps, customers);
        let batch = Batch {
            params: &params,
            tiles: &tiles,
            table: &case.table,
            slots,
        };
        let t = Instant::now();
        engine.run(&batch)?;
        Ok((t.elapsed().as_secs_f64(), engine.device_seconds()))
    };
    // A warm-up call, not timed: it compiles the case's pipeline, which on
    // a software adapter can take longer than a full-sized call, and would
    // otherwise end the sizing at its first, tiny probe.
    call(reps, customers)?;
    let mut m = Measured::default();
    loop {
        let (secs, device) = call(reps, customers)?;
        if secs >= target || (reps >= MAX_BENCH_REPS && customers >= 1 << 24) {
            // Full-sized: this call counts (a slow engine is not run twice).
            m.add(f64::from(reps) * f64::from(customers), secs, device);
            break;
        }
        let grow = (target / secs.max(1e-4)).clamp(1.0, 64.0);
        if reps < MAX_BENCH_REPS {
            reps = ((f64::from(reps) * grow) as u32).clamp(reps + 1, MAX_BENCH_REPS);
        } else {
            customers = ((f64::from(customers) * grow) as u32).clamp(customers + 1, 1 << 24);
        }
    }
    while m.wall_seconds < seconds {
        let (secs, device) = call(reps, customers)?;
        m.add(f64::from(reps) * f64::from(customers), secs, device);
    }
    m.reps = reps;
    Ok(m)
}

/// What [`measure_for`] measured over its full-sized calls (the probes that
/// sized them are not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    pub customers: f64,
    pub wall_seconds: f64,
    /// Summed over the calls, where the engine reports device time.
    pub device_seconds: Option<f64>,
    /// Replications per call.
    pub reps: u32,
}

impl Measured {
    fn add(&mut self, customers: f64, wall: f64, device: Option<f64>) {
        self.customers += customers;
        self.wall_seconds += wall;
        self.device_seconds = device.map(|d| d + self.device_seconds.unwrap_or(0.0));
    }
}

/// What `qsweep bench` measures.
pub struct BenchOptions {
    /// `auto` (the CPU and the GPU when one opens), `gpu` or `cpu`.
    pub backend: qsweep_core::spec::Backend,
    /// Only the GPU adapter whose name contains this.
    pub adapter: Option<String>,
    /// Seconds each timed measurement should last, at least.
    pub seconds: f64,
    /// CPU engine threads (0 = all cores).
    pub threads: usize,
    /// Only cases whose name contains this.
    pub only: Option<String>,
}

/// The longest `--seconds` accepted. Why (issue 25): `--seconds 1e300`
/// was accepted and measured forever; an hour per measurement is far
/// beyond any useful benchmark.
pub const MAX_SECONDS: f64 = 3600.0;

impl BenchOptions {
    /// Refuses bad options with one line naming the flag.
    pub fn check(&self) -> Result<(), qsweep_core::UsageError> {
        if !(self.seconds > 0.0 && self.seconds.is_finite()) {
            return Err(qsweep_core::UsageError(format!(
                "--seconds: '{}' is not valid; expected a positive number",
                self.seconds
            )));
        }
        if self.seconds > MAX_SECONDS {
            return Err(qsweep_core::UsageError(format!(
                "--seconds: '{}' is too long; expected at most {MAX_SECONDS} (an hour per \
                 measurement)",
                self.seconds
            )));
        }
        if let Some(only) = &self.only {
            let cases = standard_cases();
            if !cases.iter().any(|c| c.name.contains(only.as_str())) {
                let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
                return Err(qsweep_core::UsageError(format!(
                    "--only: '{only}' matches no case; expected part of one of: {}",
                    names.join("; ")
                )));
            }
        }
        Ok(())
    }
}

/// Every measured row, with the backends' peaks.
pub struct BenchReport {
    pub rows: Vec<BenchRow>,
    pub cpu_peak: Option<f64>,
    pub gpu_peak: Option<f64>,
    /// Whether the GPU's device seconds come from timestamp queries (None:
    /// no GPU measured).
    pub gpu_timestamps: Option<bool>,
}

/// Measures every standard case (or those `only` names) on the chosen
/// backends, each for about `seconds`; `on_case` hears of each finished
/// case's last row.
pub fn run(opts: &BenchOptions, on_case: &mut dyn FnMut(&BenchRow)) -> Result<BenchReport> {
    use qsweep_core::engine::cpu::{peak_ops_per_second, CpuEngine};
    use qsweep_gpu::{AdapterChoice, GpuEngine, HeapMemory, Specialization};
    opts.check()?;
    let mut gpu = None;
    use qsweep_core::spec::Backend;
    if opts.backend != Backend::Cpu {
        match GpuEngine::open(&AdapterChoice {
            name: opts.adapter.clone(),
        }) {
            Ok(g) => gpu = Some(g),
            Err(e) if opts.backend == Backend::Gpu => return Err(e),
            Err(e) => eprintln!("qsweep: bench: no GPU engine ({e:#}); measuring the CPU only"),
        }
    }
    let mut cpu = (opts.backend != Backend::Gpu).then(|| CpuEngine::new(opts.threads));
    // Each backend's peak arithmetic rate, for the fraction of peak.
    let peak_seconds = opts.seconds.min(1.0);
    let cpu_peak = cpu
        .as_ref()
        .map(|c| peak_ops_per_second(c.threads, peak_seconds));
    let gpu_peak = match gpu.as_mut() {
        Some(g) => Some(g.peak_ops_per_second(peak_seconds)?),
        None => None,
    };
    let mut rows = Vec::new();
    for case in standard_cases() {
        if opts.only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        // The CPU engine is the kernels' twin: the same operations as the
        // kernel with its heap in private memory (the CPU's sift runs on a
        // stack array); the GPU's count is of the source it compiled (its
        // heap where the adapter keeps it). Measurements grow replications
        // past SIDE_BY_SIDE_BELOW_REPS before lengthening them, so one-server
        // segments run in turn, as counted.
        let ops_per_customer =
            |source: &str| qsweep_gpu::opcount::ops_per_customer(source, &case.params);
        let cpu_ops =
            ops_per_customer(&Specialization::of(&case.params).source(HeapMemory::Private));
        let mut cpu_rate = None;
        if let Some(cpu) = cpu.as_mut() {
            let Measured {
                customers,
                wall_seconds: wall,
                ..
            } = measure_for(cpu, &case, opts.seconds)?;
            let rate = customers / wall;
            cpu_rate = Some(rate);
            rows.push(BenchRow {
                case: case.name,
                backend: "cpu".into(),
                adapter: format!("{} threads", cpu.threads),
                driver: String::new(),
                customers,
                wall_seconds: wall,
                device_seconds: None,
                customers_per_s: rate,
                ratio_to_cpu: Some(1.0),
                ops_per_customer: cpu_ops,
                peak_ops_per_s: cpu_peak,
            });
        }
        if let Some(gpu) = gpu.as_mut() {
            let Measured {
                customers,
                wall_seconds: wall,
                device_seconds,
                ..
            } = measure_for(gpu, &case, opts.seconds)?;
            let rate = customers / wall;
            let desc = gpu.adapter().clone();
            rows.push(BenchRow {
                case: case.name,
                backend: desc.backend.clone(),
                adapter: desc.name.clone(),
                driver: desc.driver.clone(),
                customers,
                wall_seconds: wall,
                device_seconds,
                customers_per_s: rate,
                ratio_to_cpu: cpu_rate.map(|c| rate / c),
                ops_per_customer: ops_per_customer(&gpu.kernel_source(&case.params)),
                peak_ops_per_s: gpu_peak,
            });
        }
        if let Some(last) = rows.last() {
            on_case(last);
        }
    }
    Ok(BenchReport {
        rows,
        cpu_peak,
        gpu_peak,
        gpu_timestamps: gpu.as_ref().map(|g| g.timestamps),
    })
}

impl BenchReport {
    /// The report as `qsweep bench` prints it: the aligned table, then the
    /// peaks and what the columns mean.
    pub fn table(&self) -> String {
        let header = [
            "case",
            "backend",
            "adapter",
            "customers/s",
            "wall s",
            "device s",
            "vs cpu",
            "ops/cust",
            "of peak",
        ];
        let table: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.case.to_string(),
                    r.backend.clone(),
                    r.adapter.clone(),
                    format!("{:.3e}", r.customers_per_s),
                    format!("{:.2}", r.wall_seconds),
                    r.device_seconds
                        .map(|d| format!("{d:.2}"))
                        .unwrap_or_default(),
                    r.ratio_to_cpu
                        .map(|x| format!("{x:.2}x"))
                        .unwrap_or_default(),
                    r.ops_per_customer
                        .map(|x| format!("{x:.0}"))
                        .unwrap_or_default(),
                    r.fraction_of_peak()
                        .map(|x| format!("{:.1}%", 100.0 * x))
                        .unwrap_or_default(),
                ]
            })
            .collect();
        let mut out = qsweep_core::output::align(&header, &table);
        for (name, peak) in [("cpu", self.cpu_peak), ("gpu", self.gpu_peak)] {
            if let Some(peak) = peak {
                out.push_str(&format!(
                    "peak {name}: {peak:.3e} f32 operations/s (measured; a multiply-add is two)\n"
                ));
            }
        }
        out.push_str(
            "of peak: customers/s x ops/cust (counted from the kernel's IR, an estimate) over \
             the peak\n",
        );
        if let Some(timestamps) = self.gpu_timestamps {
            out.push_str(&format!(
                "device s: {}\n",
                if timestamps {
                    "GPU timestamp queries around each pass"
                } else {
                    "host-side wait for each pass (the adapter has no timestamp queries)"
                }
            ));
        }
        out
    }
}
