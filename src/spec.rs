//! Sweep specs: what `qsweep run` simulates, read from a TOML file and flags.
//!
//! A study is a grid (routing × servers × workers × arrival × load × service)
//! plus run settings. This module exists so that everything a user can get
//! wrong is caught here, once, with a message that says where and what is
//! expected (`spec.toml:3: [sweep] servers: 0 is not a valid value; expected
//! integers >= 1`), before any engine starts a simulation that could run for
//! hours. The engines, statistics and CSV writer only ever see a validated
//! [`Spec`] and its [`GridPoint`]s.
//!
//! Sources, lowest priority first: the built-in default study
//! (`data/seed.toml`, used when no spec file is given), or a spec file; then
//! the flags of [`SweepArgs`], each of which replaces a whole axis or setting.
//! [`Spec::to_toml`] writes the fully resolved spec back out, for provenance
//! and hashing; [`Spec::from_toml_str`] reads it back to an equal `Spec`.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::dist::{split_list, Dist, Role};
use crate::routing::Routing;

/// The default study, run by `qsweep run` without a spec file.
pub const SEED_TOML: &str = include_str!("../data/seed.toml");
/// [`Spec::source`] of the default study.
pub const SEED_SOURCE: &str = "data/seed.toml (built in)";

/// Keys of the `[sweep]` table, in grid nesting order (outermost first;
/// `lambda` and `rho` are the two spellings of the load axis).
pub const SWEEP_KEYS: [&str; 9] = [
    "routing", "choices", "routers", "servers", "workers", "arrival", "lambda", "rho", "service",
];
/// Default of the `choices` axis (power of two choices).
pub const DEFAULT_CHOICES: u32 = 2;
/// Default of the `routers` axis.
pub const DEFAULT_ROUTERS: u32 = 1;
/// Keys of the `[run]` table.
pub const RUN_KEYS: [&str; 11] = [
    "reps",
    "customers",
    "warmup",
    "seed",
    "out",
    "threads",
    "allow_unstable",
    "backend",
    "adapter",
    "precision",
    "max_customers",
];
/// Default of `max_customers`: the most customers (warm-up included) one
/// point may simulate under `precision`.
pub const DEFAULT_MAX_CUSTOMERS: u64 = 10_000_000_000;
/// Arrival rates a point may have (per second): the engines work in f32, so
/// the mean interarrival time 1/lambda must be a normal f32 with room to spare.
pub const LAMBDA_RANGE: (f64, f64) = (1e-30, 1e30);
/// Accepted values of `backend`.
pub const BACKENDS: [&str; 3] = ["auto", "gpu", "cpu"];

const EXPECT_ROUTING: &str = "one of random, round_robin, central, jsq, pod, jiq, lwl";
const EXPECT_CHOICES: &str = "integers from 1 to 32 (servers sampled per request by pod)";
const EXPECT_ROUTERS: &str =
    "integers from 1 to 1024 (routers that each see only their own requests)";
const EXPECT_COUNT: &str = "integers >= 1";
const EXPECT_RATE: &str = "finite numbers > 0 (arrival rates, requests per second)";
const EXPECT_RHO: &str = "finite numbers > 0 (target utilisation per server)";
const EXPECT_REPS: &str = "an integer >= 1";
const EXPECT_CUSTOMERS: &str = "an integer >= 1";
const EXPECT_WARMUP: &str = "an integer >= 0, or \"auto\" (chosen per point by MSER-5)";
const EXPECT_PRECISION: &str =
    "a number > 0 and < 1 (target 95% CI half-width relative to the estimate, e.g. 0.01)";
const EXPECT_MAX_CUSTOMERS: &str = "an integer >= 1 (customers per point, e.g. 1e10)";
const EXPECT_SEED: &str =
    "an integer from 0 to 18446744073709551615 (a string for values above 9223372036854775807)";
const EXPECT_OUT: &str = "a non-empty path";
const EXPECT_THREADS: &str = "an integer >= 0 (0 = all cores)";
const EXPECT_BOOL: &str = "true or false";
const EXPECT_BACKEND: &str = "one of auto, gpu, cpu";
const EXPECT_ADAPTER: &str = "a non-empty string (part of the GPU adapter's name)";

/// A bad spec, flag or grid point: one line, naming the field and what is
/// expected, prefixed by `PATH:LINE:` when it comes from a spec file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// One value of the load axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// The whole system's arrival rate λ (requests per second).
    Lambda(f64),
    /// Target utilisation per server: λ = rho · servers · workers / E[S].
    Rho(f64),
}

impl Load {
    /// The TOML key (and flag name) of this kind of load.
    pub fn key(self) -> &'static str {
        match self {
            Load::Lambda(_) => "lambda",
            Load::Rho(_) => "rho",
        }
    }

    pub fn value(self) -> f64 {
        match self {
            Load::Lambda(v) | Load::Rho(v) => v,
        }
    }
}

/// The `[run]` table: how much to simulate and where results go.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    /// Independent replications per grid point.
    pub reps: u32,
    /// Customers recorded per replication (after `warmup`).
    pub customers: u32,
    /// Customers discarded at the start of each replication (with
    /// `warmup_auto`: unused, each point's pilot chooses; see `warmup`).
    pub warmup: u32,
    /// `warmup = "auto"`: MSER-5 on a pilot run chooses each point's warm-up.
    pub warmup_auto: bool,
    /// Add replications in rounds until the 95% CIs of the mean and p99
    /// wait are within this fraction of their estimates (see `precision`).
    pub precision: Option<f64>,
    /// With `precision`: the most customers (warm-up included) per point.
    pub max_customers: u64,
    pub seed: u64,
    /// CSV output, relative to the current directory; `None`: see
    /// [`default_out_path`].
    pub out: Option<PathBuf>,
    /// Worker threads for the CPU engine; 0 = all cores.
    pub threads: usize,
    /// Simulate points with rho >= 1 instead of refusing them.
    pub allow_unstable: bool,
    /// Overwrite an existing output file (flag only: it is about this
    /// invocation, not the study, so [`Spec::to_toml`] leaves it out).
    pub force: bool,
    /// `auto`, `gpu` or `cpu`.
    pub backend: String,
    /// Substring of the GPU adapter name to use.
    pub adapter: Option<String>,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            reps: 1024,
            customers: 100_000,
            warmup: 10_000,
            warmup_auto: false,
            precision: None,
            max_customers: DEFAULT_MAX_CUSTOMERS,
            seed: 1,
            out: None,
            threads: 0,
            allow_unstable: false,
            force: false,
            backend: "auto".to_string(),
            adapter: None,
        }
    }
}

/// A fully resolved and validated sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub routing: Vec<Routing>,
    /// Servers `pod` samples per request (the axis applies to `pod` only).
    pub choices: Vec<u32>,
    /// Routers the arrivals are split over, each seeing only its own
    /// requests (applies to `central`, `jsq`, `pod`, `jiq`).
    pub routers: Vec<u32>,
    pub servers: Vec<u32>,
    pub workers: Vec<u32>,
    /// Interarrival laws as written; each point rescales them to mean 1/λ.
    pub arrival: Vec<Dist>,
    /// All `Lambda` or all `Rho`.
    pub load: Vec<Load>,
    pub service: Vec<Dist>,
    pub run: RunSettings,
    /// [`SEED_SOURCE`] or the spec file's path.
    pub source: String,
}

/// One point of the grid, with its load resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct GridPoint {
    /// Position in the grid (0-based, in nesting order).
    pub index: u32,
    pub routing: Routing,
    /// `pod`'s d (`None` for the other policies).
    pub choices: Option<u32>,
    /// Routers (1 for the policies the axis does not apply to).
    pub routers: u32,
    pub servers: u32,
    pub workers: u32,
    /// The interarrival law of the whole system, rescaled to mean 1/`lambda`.
    pub arrival: Dist,
    /// The arrival law as the user wrote it.
    pub arrival_text: String,
    pub lambda: f64,
    pub service: Dist,
    /// λ·E\[S\] / (servers·workers).
    pub rho: f64,
    /// `rho < 1`.
    pub stable: bool,
}

/// Flags of `qsweep run`: one per axis and setting, each overriding the spec
/// file (or the built-in default study).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct SweepArgs {
    /// Sweep spec (TOML). Without it the built-in default study
    /// (data/seed.toml) runs, with any flags applied on top.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// Routing policies: random, round_robin, central, jsq, pod, jiq, lwl [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub routing: Vec<String>,
    /// Servers sampled per request by pod (power of d choices) [list of 1..=32; default 2]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub choices: Vec<String>,
    /// Routers, each seeing only its own requests (central, jsq, pod, jiq) [list of 1..=1024; default 1]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub routers: Vec<String>,
    /// Dynos (servers) behind the load balancer [list of integers >= 1]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub servers: Vec<String>,
    /// Workers per dyno [list of integers >= 1; default 1]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub workers: Vec<String>,
    /// Interarrival laws, rescaled to mean 1/lambda at each point [list; default exp]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub arrival: Vec<String>,
    /// Arrival rates, requests/s (replaces the spec's lambda or rho) [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub lambda: Vec<String>,
    /// Target utilisations: lambda = rho·servers·workers/E[S] (replaces the spec's lambda or rho) [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub rho: Vec<String>,
    /// Service-time laws, e.g. 'weibull(shape=0.46,median=0.05,min=0.01,max=30)' [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub service: Vec<String>,
    /// Replications per point [overrides the spec; 1024 if it has none]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub reps: Option<String>,
    /// Customers recorded per replication [overrides the spec; 100000 if it has none]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub customers: Option<String>,
    /// Customers discarded first in each replication, or auto (MSER-5 on a pilot run, per point) [overrides the spec; 10000 if it has none]
    #[arg(long, value_name = "N|auto", allow_hyphen_values = true)]
    pub warmup: Option<String>,
    /// Add replications in rounds until the 95% CIs of mean and p99 wait are within P × the estimate (e.g. 0.01) [--reps is the first round]
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub precision: Option<String>,
    /// With --precision: stop adding replications at this many customers per point, warm-up included [default 1e10]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_customers: Option<String>,
    /// Master random seed [overrides the spec; 1 if it has none]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub seed: Option<String>,
    /// CSV output path [default: qsweep-results.csv, or -2, -3 ... if taken]
    #[arg(long, short = 'o', value_name = "CSV")]
    pub out: Option<PathBuf>,
    /// CPU threads, 0 = all cores [default 0]
    #[arg(long, short = 'j', value_name = "N", allow_hyphen_values = true)]
    pub threads: Option<String>,
    /// Simulate points with rho >= 1 instead of refusing them
    #[arg(long)]
    pub allow_unstable: bool,
    /// Overwrite the output file if it exists
    #[arg(long)]
    pub force: bool,
    /// Engine: auto, gpu or cpu [default auto]
    #[arg(long, value_name = "auto|gpu|cpu")]
    pub backend: Option<String>,
    /// Use the GPU adapter whose name contains this
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
}

impl Spec {
    /// Reads `args.spec` (or the built-in default study), applies the flags
    /// and validates everything, grid points included.
    pub fn load(args: &SweepArgs) -> Result<Spec, SpecError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Spec::load_in(args, &cwd)
    }

    /// [`Spec::load`] with relative `file=` paths of flag values resolved
    /// against `cwd`.
    fn load_in(args: &SweepArgs, cwd: &Path) -> Result<Spec, SpecError> {
        let (mut raw, source) = match &args.spec {
            Some(path) => {
                let source = path.display().to_string();
                let text = std::fs::read_to_string(path).map_err(|e| {
                    SpecError(format!(
                        "{source}: cannot read spec file: {e}; expected a readable TOML file"
                    ))
                })?;
                let base_dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                (Raw::from_file(&text, &source, &base_dir)?, source)
            }
            None => (
                Raw::from_file(SEED_TOML, SEED_SOURCE, cwd)?,
                SEED_SOURCE.to_string(),
            ),
        };
        raw.apply_flags(args, cwd)?;
        let spec = raw.finish(source)?;
        spec.validate()?;
        Ok(spec)
    }

    /// Parses and validates a spec file's text. `source` names it in errors
    /// (and becomes [`Spec::source`]); relative `file=` paths in
    /// distributions resolve against `base_dir`.
    pub fn from_toml_str(text: &str, source: &str, base_dir: &Path) -> Result<Spec, SpecError> {
        let spec = Raw::from_file(text, source, base_dir)?.finish(source.to_string())?;
        spec.validate()?;
        Ok(spec)
    }

    /// Number of grid points (saturating).
    pub fn point_count(&self) -> u64 {
        let per_routing = self.routing.iter().fold(0u64, |n, r| {
            let choices = if r.takes_choices() {
                self.choices.len()
            } else {
                1
            };
            let routers = if r.takes_routers() {
                self.routers.len()
            } else {
                1
            };
            n.saturating_add((choices as u64).saturating_mul(routers as u64))
        });
        [
            self.servers.len(),
            self.workers.len(),
            self.arrival.len(),
            self.load.len(),
            self.service.len(),
        ]
        .iter()
        .fold(per_routing, |n, &len| n.saturating_mul(len as u64))
    }

    /// The grid in nesting order: routing (outermost), choices, routers,
    /// servers, workers, arrival, load, service (innermost). `choices` only
    /// multiplies `pod` points and `routers` only `central`, `jsq`, `pod` and
    /// `jiq` points; for the other policies those axes collapse to one point
    /// (choices `None`, routers 1). Call it on a validated spec (as
    /// [`Spec::load`] returns): rescaling the arrival law needs a sane lambda.
    pub fn points(&self) -> Vec<GridPoint> {
        self.cells()
            .into_iter()
            .map(|c| GridPoint {
                index: c.index,
                routing: c.routing,
                choices: c.choices,
                routers: c.routers,
                servers: c.servers,
                workers: c.workers,
                arrival: c.arrival.with_mean(1.0 / c.lambda),
                arrival_text: c.arrival.text().to_string(),
                lambda: c.lambda,
                service: c.service.clone(),
                rho: c.rho,
                stable: c.rho < 1.0,
            })
            .collect()
    }

    /// The grid with each point's lambda and rho, arrival laws not rescaled.
    fn cells(&self) -> Vec<Cell<'_>> {
        let mut cells = Vec::new();
        let one_routers = [DEFAULT_ROUTERS];
        for &routing in &self.routing {
            let choices: Vec<Option<u32>> = if routing.takes_choices() {
                self.choices.iter().map(|&d| Some(d)).collect()
            } else {
                vec![None]
            };
            let routers: &[u32] = if routing.takes_routers() {
                &self.routers
            } else {
                &one_routers
            };
            for (&choices, &routers) in choices
                .iter()
                .flat_map(|c| routers.iter().map(move |k| (c, k)))
            {
                for &servers in &self.servers {
                    for &workers in &self.workers {
                        for arrival in &self.arrival {
                            for &load in &self.load {
                                for service in &self.service {
                                    let capacity = f64::from(servers) * f64::from(workers);
                                    let mean_service = service.mean();
                                    let (lambda, rho) = match load {
                                        Load::Lambda(l) => (l, l * mean_service / capacity),
                                        Load::Rho(r) => (r * capacity / mean_service, r),
                                    };
                                    cells.push(Cell {
                                        index: cells.len() as u32,
                                        routing,
                                        choices,
                                        routers,
                                        servers,
                                        workers,
                                        arrival,
                                        service,
                                        lambda,
                                        rho,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        cells
    }

    /// Refuses points with rho >= 1 unless `allow_unstable`, points whose
    /// arrival rate is outside [`LAMBDA_RANGE`] (a rho can imply one), and
    /// points whose central queue would have more than `u32::MAX` servers.
    pub fn validate_points(&self) -> Result<(), SpecError> {
        for &s in &self.servers {
            for &w in &self.workers {
                if s.checked_mul(w).is_none() {
                    return Err(SpecError(format!(
                        "[sweep] servers × workers = {s} × {w} is too large; expected a product \
                         <= {}",
                        u32::MAX
                    )));
                }
            }
        }
        let (lo, hi) = LAMBDA_RANGE;
        for c in self.cells() {
            let what = || {
                self.describe_parts(
                    c.routing,
                    c.choices,
                    c.routers,
                    c.servers,
                    c.workers,
                    c.arrival.text(),
                    c.lambda,
                    c.service.text(),
                )
            };
            if c.workers > 1 && c.routing.is_dynamic(c.routers) {
                let which = if c.routing == Routing::Central {
                    "central with routers > 1".to_string()
                } else {
                    c.routing.to_string()
                };
                return Err(SpecError(format!(
                    "point {} ({}): {which} dispatches to single-worker FIFO servers; expected \
                     workers = 1 with jsq, pod, jiq, lwl and central with routers > 1 (model \
                     a dyno of w workers as w servers)",
                    c.index,
                    what()
                )));
            }
            if !(lo..=hi).contains(&c.lambda) {
                return Err(SpecError(format!(
                    "point {} ({}): lambda is out of range; expected arrival rates from {lo:e} \
                     to {hi:e} per second",
                    c.index,
                    what()
                )));
            }
            if c.rho >= 1.0 && !self.run.allow_unstable {
                return Err(SpecError(format!(
                    "point {} ({}): unstable, rho = {:.3} >= 1; lower lambda or rho, add \
                     servers, or pass --allow-unstable",
                    c.index,
                    what(),
                    c.rho
                )));
            }
        }
        Ok(())
    }

    /// `routing=random servers=51 lambda=160`, plus workers, arrival and
    /// service where they vary: names a point in messages.
    pub fn describe(&self, p: &GridPoint) -> String {
        self.describe_parts(
            p.routing,
            p.choices,
            p.routers,
            p.servers,
            p.workers,
            &p.arrival_text,
            p.lambda,
            p.service.text(),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn describe_parts(
        &self,
        routing: Routing,
        choices: Option<u32>,
        routers: u32,
        servers: u32,
        workers: u32,
        arrival: &str,
        lambda: f64,
        service: &str,
    ) -> String {
        let mut s = format!("routing={routing}");
        if let Some(d) = choices {
            let _ = write!(s, " choices={d}");
        }
        if routers != 1 {
            let _ = write!(s, " routers={routers}");
        }
        let _ = write!(s, " servers={servers}");
        if self.workers.len() > 1 || workers != 1 {
            let _ = write!(s, " workers={workers}");
        }
        if self.arrival.len() > 1 {
            let _ = write!(s, " arrival={arrival}");
        }
        if (1e-4..1e15).contains(&lambda) {
            let _ = write!(s, " lambda={lambda}");
        } else {
            let _ = write!(s, " lambda={lambda:e}");
        }
        if self.service.len() > 1 {
            let _ = write!(s, " service={service}");
        }
        s
    }

    /// Everything that needs the whole spec.
    fn validate(&self) -> Result<(), SpecError> {
        let n = self.point_count();
        if n > u64::from(u32::MAX) {
            return Err(SpecError(format!(
                "[sweep]: the grid has {n} points; expected at most {}",
                u32::MAX
            )));
        }
        let per_rep = u64::from(self.run.customers) + u64::from(self.run.warmup);
        if per_rep > u64::from(u32::MAX) {
            return Err(SpecError(format!(
                "[run] customers + warmup = {per_rep} is too large; expected at most {}",
                u32::MAX
            )));
        }
        self.validate_points()
    }

    /// The fully resolved spec as canonical TOML (flags applied, defaults
    /// written out, `force` left out). [`Spec::from_toml_str`] reads it back
    /// to an equal `Spec` given the same `source` and `base_dir`.
    pub fn to_toml(&self) -> String {
        let list = |items: Vec<String>| format!("[{}]", items.join(", "));
        let mut t = String::new();
        let _ = writeln!(t, "[sweep]");
        let _ = writeln!(
            t,
            "routing = {}",
            list(self.routing.iter().map(|r| toml_str(r.name())).collect())
        );
        // Written only when not the default, so specs that never mention
        // them keep their canonical text (and hash).
        if self.choices != [DEFAULT_CHOICES] {
            let _ = writeln!(
                t,
                "choices = {}",
                list(self.choices.iter().map(u32::to_string).collect())
            );
        }
        if self.routers != [DEFAULT_ROUTERS] {
            let _ = writeln!(
                t,
                "routers = {}",
                list(self.routers.iter().map(u32::to_string).collect())
            );
        }
        let _ = writeln!(
            t,
            "servers = {}",
            list(self.servers.iter().map(u32::to_string).collect())
        );
        let _ = writeln!(
            t,
            "workers = {}",
            list(self.workers.iter().map(u32::to_string).collect())
        );
        let _ = writeln!(
            t,
            "arrival = {}",
            list(self.arrival.iter().map(|d| toml_str(d.text())).collect())
        );
        let key = self.load.first().map_or("lambda", |l| l.key());
        let _ = writeln!(
            t,
            "{key} = {}",
            list(self.load.iter().map(|l| toml_float(l.value())).collect())
        );
        let _ = writeln!(
            t,
            "service = {}",
            list(self.service.iter().map(|d| toml_str(d.text())).collect())
        );
        let r = &self.run;
        let _ = writeln!(t, "\n[run]");
        let _ = writeln!(t, "reps = {}", r.reps);
        let _ = writeln!(t, "customers = {}", r.customers);
        if r.warmup_auto {
            let _ = writeln!(t, "warmup = \"auto\"");
        } else {
            let _ = writeln!(t, "warmup = {}", r.warmup);
        }
        // Written only when set, so specs without them keep their hash.
        if let Some(p) = r.precision {
            let _ = writeln!(t, "precision = {}", toml_float(p));
        }
        if r.max_customers != DEFAULT_MAX_CUSTOMERS {
            let _ = writeln!(t, "max_customers = {}", r.max_customers);
        }
        if r.seed <= i64::MAX as u64 {
            let _ = writeln!(t, "seed = {}", r.seed);
        } else {
            let _ = writeln!(t, "seed = {}", toml_str(&r.seed.to_string()));
        }
        if let Some(out) = &r.out {
            let _ = writeln!(t, "out = {}", toml_str(&out.to_string_lossy()));
        }
        let _ = writeln!(t, "threads = {}", r.threads);
        let _ = writeln!(t, "allow_unstable = {}", r.allow_unstable);
        let _ = writeln!(t, "backend = {}", toml_str(&r.backend));
        if let Some(adapter) = &r.adapter {
            let _ = writeln!(t, "adapter = {}", toml_str(adapter));
        }
        t
    }
}

/// The first of `qsweep-results.csv`, `qsweep-results-2.csv`, `-3` ... in
/// `dir` that does not exist (nor does its `.partial` twin, which a run in
/// progress writes), so a default output never clobbers earlier results.
/// Whoever creates the file should still open it with `create_new`.
pub fn default_out_path(dir: &Path) -> PathBuf {
    let taken = |p: &Path| {
        let partial = PathBuf::from(format!("{}.partial", p.display()));
        exists(p) || exists(&partial)
    };
    let first = dir.join("qsweep-results.csv");
    if !taken(&first) {
        return first;
    }
    (2u64..)
        .map(|n| dir.join(format!("qsweep-results-{n}.csv")))
        .find(|p| !taken(p))
        .expect("some numbered name is free")
}

/// Whether anything (even a dangling link) sits at `p`; unknown counts as yes.
fn exists(p: &Path) -> bool {
    match p.symlink_metadata() {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Shortest text that parses back to the same `f64`, always a TOML float.
fn toml_float(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) || !x.is_finite() {
        s
    } else {
        format!("{s}.0")
    }
}

// ---------------------------------------------------------------------------
// Parsing: spec file and flags into `Raw`, then `Raw` into `Spec`.

/// A grid point before its arrival law is rescaled (see [`Spec::points`]).
struct Cell<'a> {
    index: u32,
    routing: Routing,
    choices: Option<u32>,
    routers: u32,
    servers: u32,
    workers: u32,
    arrival: &'a Dist,
    service: &'a Dist,
    lambda: f64,
    rho: f64,
}

/// Where a value came from, for error messages.
#[derive(Clone, Debug)]
enum Loc {
    File {
        source: String,
        line: usize,
        table: &'static str,
        key: String,
    },
    Flag(&'static str),
}

impl Loc {
    /// `spec.toml:3: [sweep] servers: {problem}` or `--servers: {problem}`.
    fn err(&self, problem: impl std::fmt::Display) -> SpecError {
        match self {
            Loc::File {
                source,
                line,
                table,
                key,
            } => SpecError(format!("{source}:{line}: [{table}] {key}: {problem}")),
            Loc::Flag(flag) => SpecError(format!("--{flag}: {problem}")),
        }
    }

    /// A `Dist::parse` error, which already starts with `arrival: ` or
    /// `service: `.
    fn dist_err(&self, msg: &str) -> SpecError {
        match self {
            Loc::File {
                source,
                line,
                table,
                key,
            } => {
                if msg.starts_with(&format!("{key}:")) {
                    SpecError(format!("{source}:{line}: [{table}] {msg}"))
                } else {
                    self.err(msg)
                }
            }
            Loc::Flag(flag) => {
                let rest = msg
                    .strip_prefix(&format!("{flag}:"))
                    .map_or(msg, str::trim_start);
                self.err(rest)
            }
        }
    }
}

/// Values parsed from one source, before defaults and cross-checks.
#[derive(Default)]
struct Raw {
    routing: Option<Vec<Routing>>,
    choices: Option<Vec<u32>>,
    routers: Option<Vec<u32>>,
    servers: Option<Vec<u32>>,
    workers: Option<Vec<u32>>,
    arrival: Option<Vec<Dist>>,
    load: Option<Vec<Load>>,
    service: Option<Vec<Dist>>,
    reps: Option<u32>,
    customers: Option<u32>,
    warmup: Option<u32>,
    warmup_auto: Option<bool>,
    precision: Option<f64>,
    max_customers: Option<u64>,
    seed: Option<u64>,
    out: Option<PathBuf>,
    threads: Option<usize>,
    allow_unstable: Option<bool>,
    force: bool,
    backend: Option<String>,
    adapter: Option<String>,
    /// `spec.toml:1: [sweep]`: where a missing axis is reported.
    sweep_at: String,
    /// Base directory for the default arrival law.
    base_dir: PathBuf,
}

/// The spec file being read.
struct FileCtx<'a> {
    text: &'a str,
    source: &'a str,
    base_dir: &'a Path,
}

impl FileCtx<'_> {
    fn line(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn loc(&self, span: Range<usize>, table: &'static str, key: &str) -> Loc {
        Loc::File {
            source: self.source.to_string(),
            line: self.line(span),
            table,
            key: key.to_string(),
        }
    }

    /// An error not tied to a `[table] key`.
    fn err(&self, span: Range<usize>, msg: impl std::fmt::Display) -> SpecError {
        SpecError(format!("{}:{}: {msg}", self.source, self.line(span)))
    }
}

type Entry<'a, 'i> = (
    &'a Spanned<std::borrow::Cow<'i, str>>,
    &'a Spanned<DeValue<'i>>,
);

/// A table's entries in the order they appear in the file.
fn entries_in_order<'a, 'i>(table: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// A TOML value as it would be written, for error messages.
fn show(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => toml_str(s),
        DeValue::Integer(i) => i.to_string(),
        DeValue::Float(f) => f.as_str().to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(_) => "an array".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

fn invalid(shown: &str, expected: &str) -> String {
    format!("{shown} is not a valid value; expected {expected}")
}

/// Integer of a TOML value; integral floats (`2e5`) count.
fn de_int(v: &DeValue<'_>) -> Option<i128> {
    match v {
        DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
        DeValue::Float(f) => float_int(f.as_str().parse().ok()?),
        _ => None,
    }
}

fn de_float(v: &DeValue<'_>) -> Option<f64> {
    match v {
        DeValue::Integer(_) => de_int(v).map(|i| i as f64),
        DeValue::Float(f) => f.as_str().parse().ok(),
        _ => None,
    }
}

fn float_int(x: f64) -> Option<i128> {
    (x.is_finite() && x.fract() == 0.0 && x.abs() < 1e30).then_some(x as i128)
}

/// Integer of a flag value; integral floats (`2e5`) count.
fn str_int(s: &str) -> Option<i128> {
    let s = s.trim();
    s.parse::<i128>()
        .ok()
        .or_else(|| float_int(s.parse().ok()?))
}

fn count(i: i128) -> Option<u32> {
    u32::try_from(i).ok().filter(|&n| n >= 1)
}

fn choices_value(i: i128) -> Option<u32> {
    count(i).filter(|&n| n <= crate::contract::dispatch::MAX_CHOICES)
}

fn routers_value(i: i128) -> Option<u32> {
    count(i).filter(|&n| n <= crate::contract::dispatch::MAX_ROUTERS)
}

fn precision_value(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0 && x < 1.0).then_some(x)
}

fn positive(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

fn backend(s: &str) -> Option<String> {
    BACKENDS.contains(&s).then(|| s.to_string())
}

fn nonempty(s: &str) -> Option<String> {
    (!s.trim().is_empty()).then(|| s.to_string())
}

/// The elements of an axis: a list, or a scalar meaning a one-element list.
fn axis_items<'a, 'i>(
    v: &'a Spanned<DeValue<'i>>,
    loc: &Loc,
    expected: &str,
) -> Result<Vec<&'a Spanned<DeValue<'i>>>, SpecError> {
    match v.get_ref() {
        DeValue::Array(items) if items.is_empty() => {
            Err(loc.err(format!("empty list; expected at least one of {expected}")))
        }
        DeValue::Array(items) => Ok(items.iter().collect()),
        _ => Ok(vec![v]),
    }
}

impl Raw {
    fn from_file(text: &str, source: &str, base_dir: &Path) -> Result<Raw, SpecError> {
        let ctx = FileCtx {
            text,
            source,
            base_dir,
        };
        let doc = DeTable::parse(text).map_err(|e| {
            let line = e.span().map_or(1, |s| ctx.line(s));
            let mut msg = e.message().trim().replace('\n', " ");
            if msg == "duplicate key" {
                let key = e.span().and_then(|s| text.get(s)).unwrap_or("").trim();
                msg = if key.is_empty() || key.contains('\n') {
                    "duplicate key or table; expected each key and table once".to_string()
                } else {
                    format!("duplicate key '{key}'; expected each key and table once")
                };
            }
            if msg.contains("expected") {
                SpecError(format!("{source}:{line}: invalid TOML: {msg}"))
            } else {
                SpecError(format!(
                    "{source}:{line}: invalid TOML: {msg}; expected a TOML document with [sweep] \
                     and [run] tables"
                ))
            }
        })?;
        let mut raw = Raw {
            sweep_at: format!("{source}: [sweep]"),
            base_dir: base_dir.to_path_buf(),
            ..Raw::default()
        };
        for (k, v) in entries_in_order(doc.get_ref()) {
            let name: &str = k.get_ref();
            let table = match (name, v.get_ref()) {
                ("sweep" | "run", DeValue::Table(t)) => t,
                ("sweep" | "run", other) => {
                    return Err(ctx.err(
                        k.span(),
                        format!(
                            "{name}: {} is not valid here; expected a table [{name}]",
                            show(other)
                        ),
                    ))
                }
                (_, DeValue::Table(_)) => {
                    return Err(ctx.err(
                        k.span(),
                        format!("[{name}]: unknown table; expected [sweep] and [run]"),
                    ))
                }
                _ => {
                    let hint = if SWEEP_KEYS.contains(&name) {
                        " (it belongs in [sweep])"
                    } else if RUN_KEYS.contains(&name) {
                        " (it belongs in [run])"
                    } else {
                        ""
                    };
                    return Err(ctx.err(
                        k.span(),
                        format!(
                            "unknown top-level key '{name}'; expected tables [sweep] and [run]{hint}"
                        ),
                    ));
                }
            };
            if name == "sweep" {
                raw.sweep_at = format!("{source}:{}: [sweep]", ctx.line(k.span()));
                raw.read_sweep(&ctx, table)?;
            } else {
                raw.read_run(&ctx, table)?;
            }
        }
        Ok(raw)
    }

    fn read_sweep(&mut self, ctx: &FileCtx<'_>, table: &DeTable<'_>) -> Result<(), SpecError> {
        let mut load_key: Option<(&'static str, usize)> = None;
        for (k, v) in entries_in_order(table) {
            let key: &str = k.get_ref();
            let loc = ctx.loc(k.span(), "sweep", key);
            let elem_loc = |e: &Spanned<DeValue<'_>>| ctx.loc(e.span(), "sweep", key);
            match key {
                "routing" => {
                    let mut out = Vec::new();
                    for e in axis_items(v, &loc, EXPECT_ROUTING)? {
                        let r = match e.get_ref() {
                            DeValue::String(s) => s.parse::<Routing>(),
                            other => Err(invalid(&show(other), EXPECT_ROUTING)),
                        };
                        out.push(r.map_err(|m| elem_loc(e).err(m))?);
                    }
                    self.routing = Some(out);
                }
                "servers" | "workers" => {
                    let mut out = Vec::new();
                    for e in axis_items(v, &loc, EXPECT_COUNT)? {
                        let n = de_int(e.get_ref()).and_then(count).ok_or_else(|| {
                            elem_loc(e).err(invalid(&show(e.get_ref()), EXPECT_COUNT))
                        })?;
                        out.push(n);
                    }
                    if key == "servers" {
                        self.servers = Some(out);
                    } else {
                        self.workers = Some(out);
                    }
                }
                "choices" | "routers" => {
                    let (expected, parse): (_, fn(i128) -> Option<u32>) = if key == "choices" {
                        (EXPECT_CHOICES, choices_value)
                    } else {
                        (EXPECT_ROUTERS, routers_value)
                    };
                    let mut out = Vec::new();
                    for e in axis_items(v, &loc, expected)? {
                        let n = de_int(e.get_ref()).and_then(parse).ok_or_else(|| {
                            elem_loc(e).err(invalid(&show(e.get_ref()), expected))
                        })?;
                        out.push(n);
                    }
                    if key == "choices" {
                        self.choices = Some(out);
                    } else {
                        self.routers = Some(out);
                    }
                }
                "lambda" | "rho" => {
                    let (name, expected): (&'static str, _) = if key == "lambda" {
                        ("lambda", EXPECT_RATE)
                    } else {
                        ("rho", EXPECT_RHO)
                    };
                    if let Some((other, line)) = load_key {
                        return Err(loc.err(format!(
                            "given together with {other} (line {line}); expected exactly one of \
                             lambda or rho"
                        )));
                    }
                    load_key = Some((name, ctx.line(k.span())));
                    let mut out = Vec::new();
                    for e in axis_items(v, &loc, expected)? {
                        let x = de_float(e.get_ref()).and_then(positive).ok_or_else(|| {
                            elem_loc(e).err(invalid(&show(e.get_ref()), expected))
                        })?;
                        out.push(if name == "lambda" {
                            Load::Lambda(x)
                        } else {
                            Load::Rho(x)
                        });
                    }
                    self.load = Some(out);
                }
                "arrival" | "service" => {
                    let role = if key == "arrival" {
                        Role::Arrival
                    } else {
                        Role::Service
                    };
                    let expected = "distribution strings such as \"exp\" or \
                                    \"weibull(shape=0.46,median=0.05)\"";
                    let mut out = Vec::new();
                    for e in axis_items(v, &loc, expected)? {
                        let d = match e.get_ref() {
                            DeValue::String(s) => Dist::parse(s, role, ctx.base_dir)
                                .map_err(|err| elem_loc(e).dist_err(&err.to_string()))?,
                            other => return Err(elem_loc(e).err(invalid(&show(other), expected))),
                        };
                        out.push(d);
                    }
                    if role == Role::Arrival {
                        self.arrival = Some(out);
                    } else {
                        self.service = Some(out);
                    }
                }
                _ => {
                    let hint = if RUN_KEYS.contains(&key) {
                        format!(" ({key} belongs in [run])")
                    } else {
                        String::new()
                    };
                    return Err(ctx.err(
                        k.span(),
                        format!(
                            "[sweep] unknown key '{key}'; expected one of {}{hint}",
                            SWEEP_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn read_run(&mut self, ctx: &FileCtx<'_>, table: &DeTable<'_>) -> Result<(), SpecError> {
        for (k, v) in entries_in_order(table) {
            let key: &str = k.get_ref();
            let loc = ctx.loc(v.span(), "run", key);
            let value = v.get_ref();
            let bad = |expected: &str| loc.err(invalid(&show(value), expected));
            let int = de_int(value);
            let string = value.as_str();
            match key {
                "reps" => self.reps = Some(int.and_then(count).ok_or_else(|| bad(EXPECT_REPS))?),
                "customers" => {
                    self.customers = Some(int.and_then(count).ok_or_else(|| bad(EXPECT_CUSTOMERS))?)
                }
                "warmup" => {
                    if string.is_some_and(|s| s.trim() == "auto") {
                        self.warmup = None;
                        self.warmup_auto = Some(true);
                    } else {
                        self.warmup = Some(
                            int.and_then(|i| u32::try_from(i).ok())
                                .ok_or_else(|| bad(EXPECT_WARMUP))?,
                        );
                        self.warmup_auto = Some(false);
                    }
                }
                "precision" => {
                    self.precision = Some(
                        de_float(value)
                            .and_then(precision_value)
                            .ok_or_else(|| bad(EXPECT_PRECISION))?,
                    )
                }
                "max_customers" => {
                    self.max_customers = Some(
                        int.and_then(|i| u64::try_from(i).ok())
                            .filter(|&n| n >= 1)
                            .ok_or_else(|| bad(EXPECT_MAX_CUSTOMERS))?,
                    )
                }
                "seed" => {
                    let seed = match value {
                        DeValue::Integer(_) => int.and_then(|i| u64::try_from(i).ok()),
                        DeValue::String(s) => s.trim().parse::<u64>().ok(),
                        _ => None,
                    };
                    self.seed = Some(seed.ok_or_else(|| bad(EXPECT_SEED))?);
                }
                "out" => {
                    self.out = Some(
                        string
                            .and_then(nonempty)
                            .map(PathBuf::from)
                            .ok_or_else(|| bad(EXPECT_OUT))?,
                    )
                }
                "threads" => {
                    self.threads = Some(
                        int.and_then(|i| usize::try_from(i).ok())
                            .ok_or_else(|| bad(EXPECT_THREADS))?,
                    )
                }
                "allow_unstable" => {
                    self.allow_unstable = Some(value.as_bool().ok_or_else(|| bad(EXPECT_BOOL))?)
                }
                "backend" => {
                    self.backend = Some(
                        string
                            .and_then(backend)
                            .ok_or_else(|| bad(EXPECT_BACKEND))?,
                    )
                }
                "adapter" => {
                    self.adapter = Some(
                        string
                            .and_then(nonempty)
                            .ok_or_else(|| bad(EXPECT_ADAPTER))?,
                    )
                }
                _ => {
                    let hint = if SWEEP_KEYS.contains(&key) {
                        format!(" ({key} belongs in [sweep])")
                    } else if key == "force" {
                        " (force is a flag only: --force)".to_string()
                    } else {
                        String::new()
                    };
                    return Err(ctx.err(
                        k.span(),
                        format!(
                            "[run] unknown key '{key}'; expected one of {}{hint}",
                            RUN_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Flags replace whole axes and settings; relative `file=` paths in flag
    /// values resolve against `cwd`.
    fn apply_flags(&mut self, a: &SweepArgs, cwd: &Path) -> Result<(), SpecError> {
        if let Some(v) = flag_list("routing", &a.routing, EXPECT_ROUTING, |s| s.parse())? {
            self.routing = Some(v);
        }
        let counts = |s: &str| {
            str_int(s)
                .and_then(count)
                .ok_or_else(|| invalid(&quote(s), EXPECT_COUNT))
        };
        if let Some(v) = flag_list("servers", &a.servers, EXPECT_COUNT, counts)? {
            self.servers = Some(v);
        }
        if let Some(v) = flag_list("workers", &a.workers, EXPECT_COUNT, counts)? {
            self.workers = Some(v);
        }
        let choices = |s: &str| {
            str_int(s)
                .and_then(choices_value)
                .ok_or_else(|| invalid(&quote(s), EXPECT_CHOICES))
        };
        if let Some(v) = flag_list("choices", &a.choices, EXPECT_CHOICES, choices)? {
            self.choices = Some(v);
        }
        let routers = |s: &str| {
            str_int(s)
                .and_then(routers_value)
                .ok_or_else(|| invalid(&quote(s), EXPECT_ROUTERS))
        };
        if let Some(v) = flag_list("routers", &a.routers, EXPECT_ROUTERS, routers)? {
            self.routers = Some(v);
        }
        let dist_expected = "distribution strings such as exp or weibull(shape=0.46,median=0.05)";
        for (flag, role, values) in [
            ("arrival", Role::Arrival, &a.arrival),
            ("service", Role::Service, &a.service),
        ] {
            let Some(items) = split_flag(flag, values, dist_expected)? else {
                continue;
            };
            let mut out = Vec::new();
            for s in items {
                out.push(
                    Dist::parse(&s, role, cwd)
                        .map_err(|e| Loc::Flag(flag).dist_err(&e.to_string()))?,
                );
            }
            if role == Role::Arrival {
                self.arrival = Some(out);
            } else {
                self.service = Some(out);
            }
        }
        let lambda = flag_list("lambda", &a.lambda, EXPECT_RATE, |s| {
            parse_positive(s, EXPECT_RATE).map(Load::Lambda)
        })?;
        let rho = flag_list("rho", &a.rho, EXPECT_RHO, |s| {
            parse_positive(s, EXPECT_RHO).map(Load::Rho)
        })?;
        match (lambda, rho) {
            (Some(_), Some(_)) => {
                return Err(Loc::Flag("rho").err(
                    "given together with --lambda; expected exactly one of --lambda or --rho",
                ))
            }
            (Some(v), None) | (None, Some(v)) => self.load = Some(v),
            (None, None) => {}
        }

        let u32_of = |s: &str| str_int(s).and_then(|i| u32::try_from(i).ok());
        let usize_of = |s: &str| str_int(s).and_then(|i| usize::try_from(i).ok());
        if let Some(v) = flag_scalar("reps", &a.reps, EXPECT_REPS, |s| str_int(s).and_then(count))?
        {
            self.reps = Some(v);
        }
        if let Some(v) = flag_scalar("customers", &a.customers, EXPECT_CUSTOMERS, |s| {
            str_int(s).and_then(count)
        })? {
            self.customers = Some(v);
        }
        if let Some(w) = &a.warmup {
            if w.trim() == "auto" {
                self.warmup = None;
                self.warmup_auto = Some(true);
            } else if let Some(v) = flag_scalar("warmup", &a.warmup, EXPECT_WARMUP, u32_of)? {
                self.warmup = Some(v);
                self.warmup_auto = Some(false);
            }
        }
        if let Some(v) = flag_scalar("precision", &a.precision, EXPECT_PRECISION, |s| {
            s.trim().parse::<f64>().ok().and_then(precision_value)
        })? {
            self.precision = Some(v);
        }
        if let Some(v) = flag_scalar(
            "max-customers",
            &a.max_customers,
            EXPECT_MAX_CUSTOMERS,
            |s| {
                str_int(s)
                    .and_then(|i| u64::try_from(i).ok())
                    .filter(|&n| n >= 1)
            },
        )? {
            self.max_customers = Some(v);
        }
        if let Some(v) = flag_scalar("seed", &a.seed, EXPECT_SEED, |s| {
            s.trim().parse::<u64>().ok()
        })? {
            self.seed = Some(v);
        }
        if let Some(v) = flag_scalar("threads", &a.threads, EXPECT_THREADS, usize_of)? {
            self.threads = Some(v);
        }
        if let Some(v) = flag_scalar("backend", &a.backend, EXPECT_BACKEND, |s| backend(s.trim()))?
        {
            self.backend = Some(v);
        }
        if let Some(v) = flag_scalar("adapter", &a.adapter, EXPECT_ADAPTER, nonempty)? {
            self.adapter = Some(v);
        }
        if let Some(out) = &a.out {
            if out.as_os_str().is_empty() {
                return Err(Loc::Flag("out").err(invalid("''", EXPECT_OUT)));
            }
            self.out = Some(out.clone());
        }
        if a.allow_unstable {
            self.allow_unstable = Some(true);
        }
        self.force |= a.force;
        Ok(())
    }

    /// Fills defaults and insists on the axes that have none.
    fn finish(self, source: String) -> Result<Spec, SpecError> {
        let at = &self.sweep_at;
        let missing = |key: &str, what: &str| {
            SpecError(format!(
                "{at} {key}: missing; expected {what} (or pass --{key})"
            ))
        };
        let routing = self.routing.ok_or_else(|| {
            missing(
                "routing",
                "a list of random, round_robin, central, jsq, pod, jiq, lwl",
            )
        })?;
        let servers = self
            .servers
            .ok_or_else(|| missing("servers", "a list of integers >= 1"))?;
        let load = self.load.ok_or_else(|| {
            SpecError(format!(
                "{at} lambda/rho: missing; expected exactly one of lambda (arrival rates) or rho \
                 (target utilisations) (or pass --lambda or --rho)"
            ))
        })?;
        let service = self
            .service
            .ok_or_else(|| missing("service", "a list of service-time distributions"))?;
        let arrival = match self.arrival {
            Some(a) => a,
            None => vec![Dist::parse("exp", Role::Arrival, &self.base_dir)
                .map_err(|e| SpecError(format!("{at} arrival: default 'exp': {e}")))?],
        };
        let d = RunSettings::default();
        Ok(Spec {
            routing,
            choices: self.choices.unwrap_or_else(|| vec![DEFAULT_CHOICES]),
            routers: self.routers.unwrap_or_else(|| vec![DEFAULT_ROUTERS]),
            servers,
            workers: self.workers.unwrap_or_else(|| vec![1]),
            arrival,
            load,
            service,
            run: RunSettings {
                reps: self.reps.unwrap_or(d.reps),
                customers: self.customers.unwrap_or(d.customers),
                // `auto`: each point's pilot chooses (see `warmup`).
                warmup: if self.warmup_auto == Some(true) {
                    0
                } else {
                    self.warmup.unwrap_or(d.warmup)
                },
                warmup_auto: self.warmup_auto.unwrap_or(d.warmup_auto),
                precision: self.precision,
                max_customers: self.max_customers.unwrap_or(d.max_customers),
                seed: self.seed.unwrap_or(d.seed),
                out: self.out,
                threads: self.threads.unwrap_or(d.threads),
                allow_unstable: self.allow_unstable.unwrap_or(d.allow_unstable),
                force: self.force,
                backend: self.backend.unwrap_or(d.backend),
                adapter: self.adapter,
            },
            source,
        })
    }
}

fn quote(s: &str) -> String {
    format!("'{s}'")
}

fn parse_positive(s: &str, expected: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .and_then(positive)
        .ok_or_else(|| invalid(&quote(s), expected))
}

/// All items of a repeatable, comma-separated list flag (`None`: not given).
fn split_flag(
    flag: &'static str,
    values: &[String],
    expected: &str,
) -> Result<Option<Vec<String>>, SpecError> {
    if values.is_empty() {
        return Ok(None);
    }
    let mut items = Vec::new();
    for v in values {
        // split_list's messages already say what is expected.
        let parts = split_list(v).map_err(|e| Loc::Flag(flag).err(e))?;
        for p in parts {
            let p = p.trim();
            if p.is_empty() {
                return Err(Loc::Flag(flag).err(format!(
                    "empty item in '{v}'; expected a comma-separated list of {expected}"
                )));
            }
            items.push(p.to_string());
        }
    }
    if items.is_empty() {
        return Err(Loc::Flag(flag).err(format!("empty list; expected at least one of {expected}")));
    }
    Ok(Some(items))
}

/// A single-valued flag (`None`: not given).
fn flag_scalar<T>(
    flag: &'static str,
    value: &Option<String>,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, SpecError> {
    match value {
        None => Ok(None),
        Some(s) => parse(s)
            .map(Some)
            .ok_or_else(|| Loc::Flag(flag).err(invalid(&quote(s), expected))),
    }
}

/// A repeatable, comma-separated list flag, each item parsed (`None`: not given).
fn flag_list<T>(
    flag: &'static str,
    values: &[String],
    expected: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<Vec<T>>, SpecError> {
    let Some(items) = split_flag(flag, values, expected)? else {
        return Ok(None);
    };
    items
        .iter()
        .map(|s| parse(s).map_err(|m| Loc::Flag(flag).err(m)))
        .collect::<Result<Vec<T>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A spec file's text with `[sweep]` on line 1 and these axis lines after it.
    fn sweep(lines: &str) -> String {
        format!("[sweep]\n{lines}")
    }

    /// Routing, servers, lambda and service on lines 2-5.
    const MINI: &str = "[sweep]\nrouting = [\"random\"]\nservers = [10]\nlambda = [5]\n\
                        service = [\"exp(mean=1)\"]\n";

    fn parse(text: &str) -> Result<Spec, SpecError> {
        Spec::from_toml_str(text, "spec.toml", Path::new("."))
    }

    fn file_err(text: &str) -> String {
        parse(text).expect_err("spec should be refused").0
    }

    fn flags(argv: &[&str]) -> SweepArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: SweepArgs,
        }
        let argv = std::iter::once("qsweep-run").chain(argv.iter().copied());
        Cli::try_parse_from(argv).expect("flags should parse").args
    }

    fn load(argv: &[&str]) -> Result<Spec, SpecError> {
        Spec::load_in(&flags(argv), Path::new("."))
    }

    fn flag_err(argv: &[&str]) -> String {
        load(argv).expect_err("flags should be refused").0
    }

    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().expect("temp dir")
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: SweepArgs,
        }
        Cli::command().debug_assert();
    }

    #[test]
    fn built_in_seed_loads_with_20_points_in_documented_order() {
        let spec = Spec::load(&SweepArgs::default()).unwrap();
        assert_eq!(spec.source, SEED_SOURCE);
        assert_eq!(spec.routing, [Routing::Random, Routing::Central]);
        assert_eq!(spec.load, [Load::Lambda(150.0)]);
        let r = &spec.run;
        assert_eq!(
            (r.reps, r.customers, r.warmup, r.seed),
            (512, 200_000, 50_000, 1)
        );
        assert_eq!((r.threads, r.allow_unstable, r.force), (0, false, false));
        assert_eq!(
            (r.backend.as_str(), &r.out, &r.adapter),
            ("auto", &None, &None)
        );
        let servers = [51, 60, 75, 100, 150, 200, 500, 1000, 2000, 4000];
        let points = spec.points();
        assert_eq!(points.len(), 20);
        for (i, p) in points.iter().enumerate() {
            assert_eq!(p.index as usize, i);
            let routing = if i < 10 {
                Routing::Random
            } else {
                Routing::Central
            };
            assert_eq!(
                (p.routing, p.servers, p.workers),
                (routing, servers[i % 10], 1)
            );
            assert_eq!(p.lambda, 150.0);
            assert!((p.service.mean() - 1.0 / 3.0).abs() < 1e-15);
            assert!((p.arrival.mean() - 1.0 / 150.0).abs() < 1e-15);
            assert_eq!(p.arrival_text, "exp");
            assert!(p.stable);
        }
        // R = 51 is the study's heaviest point: rho = 150 / (3 * 51) = 0.98.
        assert!((points[0].rho - 150.0 / 153.0).abs() < 1e-12);
        assert!((points[10].rho - 150.0 / 153.0).abs() < 1e-12);
    }

    #[test]
    fn weibull_study_uses_rho_for_every_point() {
        let spec = parse(include_str!("../data/weibull.toml")).unwrap();
        let points = spec.points();
        assert_eq!(points.len(), 2 * 3 * 4);
        let mean = spec.service[0].mean();
        assert!(mean > 0.2 && mean < 0.3, "E[S] = {mean}");
        for p in &points {
            let rho = [0.5, 0.7, 0.9, 0.95][p.index as usize % 4];
            assert_eq!(p.rho, rho);
            let lambda = rho * f64::from(p.servers) / mean;
            assert!((p.lambda - lambda).abs() <= 1e-12 * lambda);
        }
    }

    #[test]
    fn flags_override_axes_and_settings() {
        let spec = load(&[
            "--routing=round_robin",
            "--servers=3",
            "--workers=2",
            "--arrival=erlang(k=4)",
            "--lambda=2.5",
            "--service=det(value=1)",
            "--reps=7",
            "--customers=2e5",
            "--warmup=0",
            "--seed=18446744073709551615",
            "-o",
            "out.csv",
            "-j",
            "3",
            "--allow-unstable",
            "--force",
            "--backend=cpu",
            "--adapter=H200",
        ])
        .unwrap();
        assert_eq!(spec.routing, [Routing::RoundRobin]);
        assert_eq!(
            (spec.servers.as_slice(), spec.workers.as_slice()),
            (&[3][..], &[2][..])
        );
        assert_eq!(spec.arrival[0].text(), "erlang(k=4)");
        assert_eq!(spec.load, [Load::Lambda(2.5)]);
        assert_eq!(spec.service[0].text(), "det(value=1)");
        let expected = RunSettings {
            reps: 7,
            customers: 200_000,
            warmup: 0,
            warmup_auto: false,
            precision: None,
            max_customers: DEFAULT_MAX_CUSTOMERS,
            seed: u64::MAX,
            out: Some(PathBuf::from("out.csv")),
            threads: 3,
            allow_unstable: true,
            force: true,
            backend: "cpu".into(),
            adapter: Some("H200".into()),
        };
        assert_eq!(spec.run, expected);
        assert_eq!(spec.source, SEED_SOURCE);
    }

    #[test]
    fn flags_override_a_spec_file() {
        let dir = tempdir();
        let path = dir.path().join("study.toml");
        std::fs::write(&path, format!("{MINI}[run]\nreps = 3\nseed = 9\n")).unwrap();
        let mut args = flags(&["--servers", "20,30", "--reps", "4"]);
        args.spec = Some(path.clone());
        let spec = Spec::load(&args).unwrap();
        assert_eq!(spec.source, path.display().to_string());
        assert_eq!(spec.servers, [20, 30]); // whole axis replaced
        assert_eq!(spec.routing, [Routing::Random]); // from the file
        assert_eq!((spec.run.reps, spec.run.seed), (4, 9));
        assert_eq!(spec.run.customers, RunSettings::default().customers);
    }

    #[test]
    fn repeated_list_flags_accumulate() {
        let spec = load(&[
            "--routing",
            "random",
            "--routing",
            "central,round_robin",
            "--servers",
            "1",
            "--servers",
            "2,3",
            "--servers",
            "4",
            "--lambda",
            "0.5",
            "--lambda",
            "0.25",
        ])
        .unwrap();
        let r = [Routing::Random, Routing::Central, Routing::RoundRobin];
        assert_eq!(spec.routing, r);
        assert_eq!(spec.servers, [1, 2, 3, 4]);
        assert_eq!(spec.load, [Load::Lambda(0.5), Load::Lambda(0.25)]);
        assert_eq!(spec.points().len(), 3 * 4 * 2);
    }

    #[test]
    fn list_flags_keep_commas_inside_parentheses() {
        let spec = load(&[
            "--routing",
            "random,central",
            "--servers",
            "51,60",
            "--lambda",
            "150",
            "--service",
            "weibull(shape=0.46,median=0.05,min=0.01,max=30), exp(rate=3)",
            "--arrival",
            "hyperexp(scv=4),exp",
        ])
        .unwrap();
        let texts: Vec<&str> = spec.service.iter().map(Dist::text).collect();
        assert_eq!(
            texts,
            [
                "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
                "exp(rate=3)"
            ]
        );
        let texts: Vec<&str> = spec.arrival.iter().map(Dist::text).collect();
        assert_eq!(texts, ["hyperexp(scv=4)", "exp"]);
        assert_eq!(spec.points().len(), 2 * 2 * 2 * 2);
    }

    #[test]
    fn load_flags_replace_the_files_lambda_or_rho() {
        // The seed has lambda: --rho replaces it.
        let spec = load(&["--rho", "0.5,0.9"]).unwrap();
        assert_eq!(spec.load, [Load::Rho(0.5), Load::Rho(0.9)]);
        // A file with rho: --lambda replaces it.
        let text =
            sweep("routing = [\"random\"]\nservers = [4]\nrho = [0.5]\nservice = [\"exp\"]\n");
        let text = text.replace("\"exp\"", "\"exp(mean=1)\"");
        let dir = tempdir();
        let path = dir.path().join("rho.toml");
        std::fs::write(&path, text).unwrap();
        let mut args = flags(&["--lambda", "2"]);
        args.spec = Some(path);
        let spec = Spec::load(&args).unwrap();
        assert_eq!(spec.load, [Load::Lambda(2.0)]);
        assert_eq!(spec.points()[0].rho, 0.5);
    }

    #[test]
    fn lambda_and_rho_flags_together_are_refused() {
        let e = flag_err(&["--lambda", "1", "--rho", "0.5"]);
        assert_eq!(
            e,
            "--rho: given together with --lambda; expected exactly one of --lambda or --rho"
        );
    }

    #[test]
    fn lambda_and_rho_in_one_file_are_refused() {
        let e = file_err(&format!("{MINI}rho = [0.5]\n"));
        assert!(
            e.starts_with("spec.toml:6: [sweep] rho: given together with lambda (line 4)"),
            "{e}"
        );
        assert!(e.contains("expected exactly one of lambda or rho"), "{e}");
        // Key order in the file does not matter: the later one is blamed.
        let text = "[sweep]\nrho = 0.5\nrouting = \"random\"\nservers = 1\nlambda = 1\nservice = \"exp(mean=1)\"\n";
        assert!(file_err(text)
            .starts_with("spec.toml:5: [sweep] lambda: given together with rho (line 2)"));
    }

    #[test]
    fn missing_lambda_and_rho_is_refused() {
        let e = file_err(&MINI.replace("lambda = [5]\n", ""));
        assert!(
            e.starts_with(
                "spec.toml:1: [sweep] lambda/rho: missing; expected exactly one of lambda"
            ),
            "{e}"
        );
    }

    #[test]
    fn missing_axis_is_refused_and_defaults_fill_the_rest() {
        let e = file_err(&MINI.replace("service = [\"exp(mean=1)\"]\n", ""));
        assert!(
            e.starts_with("spec.toml:1: [sweep] service: missing; expected"),
            "{e}"
        );
        assert!(e.contains("--service"), "{e}");
        let e = file_err("");
        assert!(e.starts_with("spec.toml: [sweep] routing: missing"), "{e}");
        let spec = parse(MINI).unwrap();
        assert_eq!(spec.workers, [1]);
        assert_eq!(spec.arrival.len(), 1);
        assert_eq!(spec.arrival[0].text(), "exp");
        let mut run = RunSettings::default();
        assert_eq!(spec.run, run);
        run.reps = 1;
        assert_ne!(spec.run, run);
    }

    #[test]
    fn rho_sets_lambda_at_each_point() {
        let text = sweep(
            "routing = [\"random\", \"central\"]\nservers = [2, 4]\nworkers = [3]\n\
             rho = [0.5, 0.8]\nservice = [\"exp(mean=0.5)\", \"det(value=2)\"]\n",
        );
        let spec = parse(&text).unwrap();
        let points = spec.points();
        assert_eq!(points.len(), 2 * 2 * 2 * 2);
        for p in &points {
            let cap = f64::from(p.servers * p.workers);
            let lambda = p.rho * cap / p.service.mean();
            assert!((p.lambda - lambda).abs() < 1e-12 * lambda, "{p:?}");
            assert!((p.arrival.mean() - 1.0 / p.lambda).abs() < 1e-12 / p.lambda);
        }
        // Innermost axis is service, then load, then workers, servers, routing.
        assert_eq!(points[0].lambda, 0.5 * 6.0 / 0.5);
        assert_eq!(points[1].lambda, 0.5 * 6.0 / 2.0);
        assert_eq!(points[2].lambda, 0.8 * 6.0 / 0.5);
        assert_eq!(points[4].lambda, 0.5 * 12.0 / 0.5);
        assert_eq!(points[8].routing, Routing::Central);
    }

    #[test]
    fn scalar_axes_mean_one_element_lists() {
        let text =
            sweep("routing = \"central\"\nservers = 51\nlambda = 150\nservice = \"exp(rate=3)\"\n");
        let spec = parse(&text).unwrap();
        assert_eq!(spec.routing, [Routing::Central]);
        assert_eq!(spec.servers, [51]);
        assert_eq!(spec.load, [Load::Lambda(150.0)]);
        assert_eq!(spec.points().len(), 1);
    }

    #[test]
    fn unstable_points_are_refused_unless_allowed() {
        let e = load(&["--servers", "51", "--routing", "random", "--lambda", "160"]).unwrap_err();
        assert_eq!(
            e.0,
            "point 0 (routing=random servers=51 lambda=160): unstable, rho = 1.046 >= 1; \
             lower lambda or rho, add servers, or pass --allow-unstable"
        );
        // Found wherever it is in the grid; rho = 1 exactly is unstable too.
        let e = load(&["--servers", "100,50", "--lambda", "150"]).unwrap_err();
        assert!(
            e.0.starts_with(
                "point 1 (routing=random servers=50 lambda=150): unstable, rho = 1.000"
            ),
            "{e}"
        );
        let spec = load(&["--servers", "100,50", "--lambda", "150", "--allow-unstable"]).unwrap();
        let stable: Vec<bool> = spec.points().iter().map(|p| p.stable).collect();
        assert_eq!(stable, [true, false, true, false]);
        let e = file_err(&MINI.replace("lambda = [5]", "lambda = [5, 9, 11]"));
        assert!(
            e.starts_with("point 2 (routing=random servers=10 lambda=11): unstable, rho = 1.100"),
            "{e}"
        );
        let allowed = format!(
            "{}[run]\nallow_unstable = true\n",
            MINI.replace("[5]", "[11]")
        );
        assert!(!parse(&allowed).unwrap().points()[0].stable);
    }

    #[test]
    fn default_out_path_never_returns_an_existing_file() {
        let dir = tempdir();
        let d = dir.path();
        let first = default_out_path(d);
        assert_eq!(first, d.join("qsweep-results.csv"));
        std::fs::write(&first, "x").unwrap();
        let second = default_out_path(d);
        assert_eq!(second, d.join("qsweep-results-2.csv"));
        std::fs::create_dir(&second).unwrap(); // anything at the path counts
        std::fs::write(d.join("qsweep-results-3.csv.partial"), "").unwrap(); // a run in progress
        assert_eq!(default_out_path(d), d.join("qsweep-results-4.csv"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("nowhere"), d.join("qsweep-results-4.csv")).unwrap();
            assert_eq!(default_out_path(d), d.join("qsweep-results-5.csv"));
        }
        for _ in 0..5 {
            let p = default_out_path(d);
            assert!(p.symlink_metadata().is_err(), "{} exists", p.display());
            std::fs::write(&p, "").unwrap();
        }
    }

    #[test]
    fn to_toml_round_trips() {
        let seed = Spec::load(&SweepArgs::default()).unwrap();
        let back = Spec::from_toml_str(&seed.to_toml(), SEED_SOURCE, Path::new(".")).unwrap();
        assert_eq!(back, seed);

        let spec = load(&[
            "--routing",
            "central,random,round_robin",
            "--servers",
            "1,7",
            "--workers",
            "2,3",
            "--arrival",
            "exp,hyperexp(scv=4),erlang(k=3)",
            "--rho",
            "0.1,0.30000000000000004,0.3333333333333333,1e-7,0.95",
            "--service",
            "weibull(shape=0.46,median=0.05,min=0.01,max=30),det(value=0.1)",
            "--seed",
            "18446744073709551000",
            "--reps",
            "3",
            "--customers",
            "10",
            "--warmup",
            "0",
            "-j",
            "5",
            "--backend",
            "gpu",
            "--adapter",
            "Nvidia \"H200\"",
            "-o",
            "dir with 'quotes'\\out.csv",
        ])
        .unwrap();
        let text = spec.to_toml();
        let back = Spec::from_toml_str(&text, SEED_SOURCE, Path::new(".")).unwrap();
        assert_eq!(back, spec, "{text}");
        assert_eq!(back.to_toml(), text);
        // lambda, large and tiny values, allow_unstable.
        let spec = load(&["--lambda", "1e30,1e-30,150,1e-5", "--allow-unstable"]).unwrap();
        let back = Spec::from_toml_str(&spec.to_toml(), SEED_SOURCE, Path::new(".")).unwrap();
        assert_eq!(back, spec);
        assert_eq!(back.points(), spec.points());
        // `force` is about the invocation, not the study.
        let forced = load(&["--force"]).unwrap();
        assert!(!forced.to_toml().contains("force"));
    }

    #[test]
    fn relative_empirical_paths_resolve_against_spec_dir_or_cwd() {
        let dir = tempdir();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("times.txt"), "0.1\n0.2\n0.6\n").unwrap();
        let path = sub.join("spec.toml");
        std::fs::write(
            &path,
            MINI.replace("exp(mean=1)", "empirical(file=times.txt)"),
        )
        .unwrap();
        // From the file: against the file's directory, whatever the cwd.
        let args = SweepArgs {
            spec: Some(path.clone()),
            ..SweepArgs::default()
        };
        let spec = Spec::load_in(&args, dir.path()).unwrap();
        assert!((spec.service[0].mean() - 0.275).abs() < 1e-6);
        // From a flag: against the current directory.
        let mut args = flags(&["--service", "empirical(file=times.txt)"]);
        args.spec = Some(path);
        assert!(Spec::load_in(&args, &sub).is_ok());
        let e = Spec::load_in(&args, dir.path()).unwrap_err().0;
        assert!(
            e.starts_with("--service: empirical file 'times.txt' cannot be read"),
            "{e}"
        );
    }

    // ----- one test per class of bad input -----

    #[test]
    fn zero_or_negative_rates_are_refused() {
        let e = file_err(&MINI.replace("lambda = [5]", "lambda = [5,\n  0]"));
        assert_eq!(
            e,
            "spec.toml:5: [sweep] lambda: 0 is not a valid value; \
             expected finite numbers > 0 (arrival rates, requests per second)"
        );
        let e = file_err(&MINI.replace("lambda = [5]", "rho = -0.5"));
        assert!(
            e.starts_with(
                "spec.toml:4: [sweep] rho: -0.5 is not a valid value; expected finite numbers > 0"
            ),
            "{e}"
        );
        let e = file_err(&MINI.replace("lambda = [5]", "lambda = nan"));
        assert!(
            e.starts_with("spec.toml:4: [sweep] lambda: nan is not a valid value"),
            "{e}"
        );
        let e = flag_err(&["--lambda", "-5"]);
        assert!(
            e.starts_with("--lambda: '-5' is not a valid value; expected finite numbers > 0"),
            "{e}"
        );
        let e = flag_err(&["--rho", "0.5,0"]);
        assert!(
            e.starts_with("--rho: '0' is not a valid value; expected finite numbers > 0"),
            "{e}"
        );
        let e = flag_err(&["--lambda", "inf"]);
        assert!(e.starts_with("--lambda: 'inf' is not a valid value"), "{e}");
    }

    #[test]
    fn rates_the_engines_cannot_represent_are_refused() {
        // A huge rho implies a huge lambda; refused before points() could panic.
        let e = flag_err(&["--rho", "1e300", "--allow-unstable", "--routing", "central"]);
        assert!(
            e.starts_with("point 0 (routing=central servers=51 lambda=1.53e302): lambda is out of range; expected arrival rates from 1e-30 to 1e30"),
            "{e}"
        );
        let e = flag_err(&[
            "--lambda",
            "5e-324",
            "--servers",
            "1",
            "--routing",
            "random",
        ]);
        assert!(
            e.starts_with(
                "point 0 (routing=random servers=1 lambda=5e-324): lambda is out of range"
            ),
            "{e}"
        );
        let e = flag_err(&["--servers", "65536", "--workers", "65536"]);
        assert!(
            e.starts_with("[sweep] servers × workers = 65536 × 65536 is too large"),
            "{e}"
        );
    }

    #[test]
    fn zero_servers_are_refused() {
        let e = file_err(&MINI.replace("servers = [10]", "servers = [10, 0]"));
        assert_eq!(
            e,
            "spec.toml:3: [sweep] servers: 0 is not a valid value; expected integers >= 1"
        );
        assert_eq!(
            flag_err(&["--servers", "0"]),
            "--servers: '0' is not a valid value; expected integers >= 1"
        );
        let e = flag_err(&["--workers", "1.5"]);
        assert_eq!(
            e,
            "--workers: '1.5' is not a valid value; expected integers >= 1"
        );
        let e = file_err(&format!("{MINI}workers = -2\n"));
        assert_eq!(
            e,
            "spec.toml:6: [sweep] workers: -2 is not a valid value; expected integers >= 1"
        );
    }

    #[test]
    fn unknown_laws_are_refused() {
        let e = file_err(&MINI.replace("exp(mean=1)", "expo"));
        assert!(
            e.starts_with("spec.toml:5: [sweep] service: unknown law 'expo'; expected one of exp"),
            "{e}"
        );
        let e = file_err(&format!("{MINI}arrival = [\"exp\",\n\"gauss\"]\n"));
        assert!(
            e.starts_with("spec.toml:7: [sweep] arrival: unknown law 'gauss'"),
            "{e}"
        );
        let e = flag_err(&["--service", "expo(mean=1)"]);
        assert!(
            e.starts_with("--service: unknown law 'expo'; expected one of exp"),
            "{e}"
        );
    }

    #[test]
    fn unknown_law_keys_are_refused() {
        let e = file_err(&MINI.replace("exp(mean=1)", "exp(meen=1)"));
        assert!(
            e.starts_with("spec.toml:5: [sweep] service: exp: unknown key 'meen'; expected mean"),
            "{e}"
        );
        // Arrival laws take their mean from the load.
        let e = flag_err(&["--arrival", "exp(mean=2)"]);
        assert!(
            e.starts_with("--arrival: exp: mean= is not allowed for arrival laws"),
            "{e}"
        );
    }

    #[test]
    fn missing_or_malformed_empirical_files_are_refused() {
        let dir = tempdir();
        let e = Spec::from_toml_str(
            &MINI.replace("exp(mean=1)", "empirical(file=none.txt)"),
            "spec.toml",
            dir.path(),
        )
        .unwrap_err()
        .0;
        assert!(
            e.starts_with("spec.toml:5: [sweep] service: empirical file 'none.txt' cannot be read"),
            "{e}"
        );
        std::fs::write(dir.path().join("bad.txt"), "0.1\nfast\n").unwrap();
        let e = Spec::from_toml_str(
            &MINI.replace("exp(mean=1)", "empirical(file=bad.txt)"),
            "spec.toml",
            dir.path(),
        )
        .unwrap_err()
        .0;
        assert!(e.starts_with("spec.toml:5: [sweep] service: empirical file 'bad.txt' line 2: 'fast' is not a number"), "{e}");
    }

    #[test]
    fn zero_customers_or_reps_are_refused() {
        let e = file_err(&format!("{MINI}[run]\nreps = 4\ncustomers = 0\n"));
        assert_eq!(
            e,
            "spec.toml:8: [run] customers: 0 is not a valid value; expected an integer >= 1"
        );
        let e = file_err(&format!("{MINI}[run]\nreps = 0\n"));
        assert_eq!(
            e,
            "spec.toml:7: [run] reps: 0 is not a valid value; expected an integer >= 1"
        );
        assert_eq!(
            flag_err(&["--reps", "0"]),
            "--reps: '0' is not a valid value; expected an integer >= 1"
        );
        let e = flag_err(&["--customers", "0"]);
        assert_eq!(
            e,
            "--customers: '0' is not a valid value; expected an integer >= 1"
        );
        let e = flag_err(&["--warmup", "-1"]);
        assert_eq!(
            e,
            "--warmup: '-1' is not a valid value; expected an integer >= 0, or \"auto\" \
             (chosen per point by MSER-5)"
        );
        let e = flag_err(&["--customers", "4294967295", "--warmup", "1"]);
        assert!(
            e.starts_with("[run] customers + warmup = 4294967296 is too large"),
            "{e}"
        );
    }

    #[test]
    fn empty_axes_are_refused() {
        let e = file_err(&MINI.replace("servers = [10]", "servers = []"));
        assert_eq!(
            e,
            "spec.toml:3: [sweep] servers: empty list; expected at least one of integers >= 1"
        );
        let e = file_err(&MINI.replace("[\"exp(mean=1)\"]", "[ ]"));
        assert!(
            e.starts_with("spec.toml:5: [sweep] service: empty list"),
            "{e}"
        );
        let e = flag_err(&["--servers", ""]);
        assert!(e.starts_with("--servers: empty list"), "{e}");
        let e = flag_err(&["--servers", "1,,2"]);
        assert!(e.starts_with("--servers: item 2 of '1,,2' is empty"), "{e}");
    }

    #[test]
    fn unknown_routing_is_refused() {
        let e = file_err(&MINI.replace("[\"random\"]", "[\"random\", \"smart\"]"));
        assert_eq!(
            e,
            "spec.toml:2: [sweep] routing: unknown routing 'smart'; \
             expected one of random, round_robin, central, jsq, pod, jiq, lwl"
        );
        let e = flag_err(&["--routing", "random,smart"]);
        assert_eq!(
            e,
            "--routing: unknown routing 'smart'; expected one of random, round_robin, central, \
             jsq, pod, jiq, lwl"
        );
        let e = file_err(&MINI.replace("[\"random\"]", "[1]"));
        assert_eq!(e, "spec.toml:2: [sweep] routing: 1 is not a valid value; expected one of random, round_robin, central, jsq, pod, jiq, lwl");
    }

    #[test]
    fn wrong_toml_types_are_refused() {
        let e = file_err(&MINI.replace("servers = [10]", "servers = \"many\""));
        assert_eq!(
            e,
            "spec.toml:3: [sweep] servers: \"many\" is not a valid value; expected integers >= 1"
        );
        let e = file_err(&MINI.replace("[\"exp(mean=1)\"]", "[[\"exp\"]]"));
        assert!(
            e.starts_with("spec.toml:5: [sweep] service: an array is not a valid value"),
            "{e}"
        );
        let e = file_err(&format!("{MINI}[run]\nallow_unstable = \"yes\"\n"));
        assert_eq!(e, "spec.toml:7: [run] allow_unstable: \"yes\" is not a valid value; expected true or false");
        let e = file_err(&format!("{MINI}[run]\nbackend = \"tpu\"\n"));
        assert_eq!(e, "spec.toml:7: [run] backend: \"tpu\" is not a valid value; expected one of auto, gpu, cpu");
        let e = file_err(&format!("{MINI}[run]\nseed = -1\n"));
        assert!(
            e.starts_with(
                "spec.toml:7: [run] seed: -1 is not a valid value; expected an integer from 0"
            ),
            "{e}"
        );
        let e = file_err("sweep = 5\n");
        assert_eq!(
            e,
            "spec.toml:1: sweep: 5 is not valid here; expected a table [sweep]"
        );
        assert!(
            flag_err(&["--backend", "tpu"]).starts_with("--backend: 'tpu' is not a valid value")
        );
        assert!(flag_err(&["--seed", "-1"]).starts_with("--seed: '-1' is not a valid value"));
    }

    #[test]
    fn toml_syntax_errors_are_refused_with_their_line() {
        let e = file_err(&MINI.replace("lambda = [5]", "lambda = = 5"));
        assert!(e.starts_with("spec.toml:4: invalid TOML: "), "{e}");
        // An unclosed list is noticed where the parser gives up.
        let e = file_err(&MINI.replace("lambda = [5]", "lambda = [5"));
        assert!(e.starts_with("spec.toml:5: invalid TOML: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = file_err(&format!("{MINI}servers = [3]\n"));
        assert_eq!(
            e,
            "spec.toml:6: invalid TOML: duplicate key 'servers'; expected each key and table once"
        );
    }

    #[test]
    fn unknown_tables_and_keys_are_refused() {
        let e = file_err("[sweep]\nrouting = [\"random\"]\nsever = [1]\n");
        assert_eq!(
            e,
            "spec.toml:3: [sweep] unknown key 'sever'; expected one of routing, choices, \
             routers, servers, workers, arrival, lambda, rho, service"
        );
        let e = file_err(&format!("{MINI}[run]\nreps = 2\nthread = 4\n"));
        assert!(
            e.starts_with(
                "spec.toml:8: [run] unknown key 'thread'; expected one of reps, customers"
            ),
            "{e}"
        );
        let e = file_err(&format!("{MINI}\n[runn]\nreps = 2\n"));
        assert_eq!(
            e,
            "spec.toml:7: [runn]: unknown table; expected [sweep] and [run]"
        );
        let e = file_err(&format!("reps = 2\n{MINI}"));
        assert!(
            e.starts_with("spec.toml:1: unknown top-level key 'reps'"),
            "{e}"
        );
        assert!(e.contains("belongs in [run]"), "{e}");
        let e = file_err(&format!("{MINI}reps = 2\n"));
        assert!(
            e.starts_with("spec.toml:6: [sweep] unknown key 'reps'")
                && e.contains("belongs in [run]"),
            "{e}"
        );
    }

    #[test]
    fn unreadable_spec_files_are_refused() {
        let dir = tempdir();
        let path = dir.path().join("missing.toml");
        let args = SweepArgs {
            spec: Some(path.clone()),
            ..SweepArgs::default()
        };
        let e = Spec::load(&args).unwrap_err().0;
        assert!(
            e.starts_with(&format!("{}: cannot read spec file: ", path.display())),
            "{e}"
        );
        assert!(e.ends_with("expected a readable TOML file"), "{e}");
        let args = SweepArgs {
            spec: Some(dir.path().to_path_buf()),
            ..SweepArgs::default()
        };
        assert!(Spec::load(&args)
            .unwrap_err()
            .0
            .contains("cannot read spec file"));
    }

    #[test]
    fn choices_and_routers_multiply_only_the_policies_they_apply_to() {
        let spec = load(&[
            "--routing",
            "random,pod,jsq,lwl",
            "--choices",
            "2,3",
            "--routers",
            "1,4",
            "--servers",
            "10,20",
            "--lambda",
            "5",
        ])
        .unwrap();
        let points = spec.points();
        // random 1, pod 2 × 2, jsq 2, lwl 1; times 2 servers.
        assert_eq!(points.len(), 16);
        assert_eq!(spec.point_count(), 16);
        let cells: Vec<(&str, Option<u32>, u32, u32)> = points
            .iter()
            .map(|p| (p.routing.name(), p.choices, p.routers, p.servers))
            .collect();
        assert_eq!(
            cells,
            [
                ("random", None, 1, 10),
                ("random", None, 1, 20),
                ("pod", Some(2), 1, 10),
                ("pod", Some(2), 1, 20),
                ("pod", Some(2), 4, 10),
                ("pod", Some(2), 4, 20),
                ("pod", Some(3), 1, 10),
                ("pod", Some(3), 1, 20),
                ("pod", Some(3), 4, 10),
                ("pod", Some(3), 4, 20),
                ("jsq", None, 1, 10),
                ("jsq", None, 1, 20),
                ("jsq", None, 4, 10),
                ("jsq", None, 4, 20),
                ("lwl", None, 1, 10),
                ("lwl", None, 1, 20),
            ]
        );
        for (i, p) in points.iter().enumerate() {
            assert_eq!(p.index as usize, i);
        }
        assert_eq!(
            spec.describe(&points[5]),
            "routing=pod choices=2 routers=4 servers=20 lambda=5"
        );
        // Defaults: choices 2, routers 1, and neither changes other points.
        let spec = parse(&MINI.replace("\"random\"", "\"pod\"")).unwrap();
        assert_eq!(
            (spec.choices.as_slice(), spec.routers.as_slice()),
            (&[2][..], &[1][..])
        );
        assert_eq!(spec.points()[0].choices, Some(2));
        assert_eq!(parse(MINI).unwrap().points()[0].choices, None);
    }

    #[test]
    fn choices_and_routers_are_validated() {
        let e = file_err(&sweep("routing = \"pod\"\nchoices = [2, 0]\nservers = 4\nlambda = 1\nservice = \"exp(mean=1)\"\n"));
        assert_eq!(
            e,
            "spec.toml:3: [sweep] choices: 0 is not a valid value; expected integers from 1 to 32 \
             (servers sampled per request by pod)"
        );
        let e = flag_err(&["--choices", "33"]);
        assert!(
            e.starts_with("--choices: '33' is not a valid value; expected integers from 1 to 32"),
            "{e}"
        );
        let e = flag_err(&["--routers", "0"]);
        assert!(
            e.starts_with("--routers: '0' is not a valid value; expected integers from 1 to 1024"),
            "{e}"
        );
        assert!(flag_err(&["--routers", "1025"]).starts_with("--routers: '1025'"));
        let e = file_err(&sweep("routing = \"jsq\"\nrouters = [\"many\"]\nservers = 4\nlambda = 1\nservice = \"exp(mean=1)\"\n"));
        assert!(
            e.starts_with("spec.toml:3: [sweep] routers: \"many\" is not a valid value"),
            "{e}"
        );
        // Dynamic policies dispatch to single-worker servers.
        let e = flag_err(&[
            "--routing",
            "random,jsq",
            "--workers",
            "2",
            "--servers",
            "100",
        ]);
        assert!(
            e.starts_with("point 1 (routing=jsq servers=100 workers=2 lambda=150): jsq dispatches to single-worker FIFO servers; expected workers = 1"),
            "{e}"
        );
        let e = flag_err(&[
            "--routing",
            "central",
            "--routers",
            "1,2",
            "--workers",
            "2",
            "--servers",
            "100",
        ]);
        assert!(
            e.starts_with("point 1 (routing=central routers=2 servers=100 workers=2 lambda=150): central with routers > 1 dispatches"),
            "{e}"
        );
        assert!(load(&[
            "--routing",
            "central",
            "--routers",
            "1",
            "--workers",
            "2",
            "--servers",
            "100"
        ])
        .is_ok());
    }

    #[test]
    fn choices_and_routers_round_trip_and_stay_out_of_default_specs() {
        let seed = Spec::load(&SweepArgs::default()).unwrap();
        assert!(!seed.to_toml().contains("choices") && !seed.to_toml().contains("routers"));
        let spec = load(&[
            "--routing",
            "pod,central,jiq",
            "--choices",
            "3,5",
            "--routers",
            "2,8",
        ])
        .unwrap();
        let text = spec.to_toml();
        assert!(
            text.contains("choices = [3, 5]\nrouters = [2, 8]\n"),
            "{text}"
        );
        let back = Spec::from_toml_str(&text, SEED_SOURCE, Path::new(".")).unwrap();
        assert_eq!(back, spec);
        assert_eq!(back.points(), spec.points());
    }

    #[test]
    fn errors_from_a_spec_file_name_the_file_given() {
        let dir = tempdir();
        let path = dir.path().join("study.toml");
        std::fs::write(&path, MINI.replace("servers = [10]", "servers = [0]")).unwrap();
        let args = SweepArgs {
            spec: Some(path.clone()),
            ..SweepArgs::default()
        };
        let e = Spec::load(&args).unwrap_err().0;
        assert_eq!(
            e,
            format!(
                "{}:3: [sweep] servers: 0 is not a valid value; expected integers >= 1",
                path.display()
            )
        );
    }
}
