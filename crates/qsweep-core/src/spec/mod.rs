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
//!
//! The module's parts, one job each: `sources.rs` reads the spec file's
//! tables and lays the flags over them; `axes.rs` checks the `[sweep]` axes,
//! `settings.rs` the `[run]` settings (one table entry per setting, see
//! there how to add one); `flags.rs` declares the flags; `values.rs` parses
//! single values and words the errors; `grid.rs` expands the axes into
//! points and checks them; `backend.rs` names the engines (`--backend`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::dist::Dist;
use crate::fleet::Fleet;
use crate::routing::Routing;

mod axes;
mod backend;
mod flags;
mod grid;
mod ranges;
mod settings;
mod sources;
#[cfg(test)]
mod tests;
mod values;

pub use axes::{DEFAULT_CHOICES, DEFAULT_ROUTERS, SWEEP_KEYS};
pub use backend::{Backend, UnknownBackend};
pub use flags::{AnalyticArgs, AxisArgs, SweepArgs, Words};
pub use grid::LAMBDA_RANGE;
pub use ranges::{Expansion, RANGE_FORMS};
pub use settings::{units_in_toml, RunSettings, DEFAULT_MAX_CUSTOMERS, TIME_UNITS};

use settings::write_run_table;
use sources::Raw;
use values::{toml_float, toml_str};

/// The default study, run by `qsweep run` without a spec file.
pub const SEED_TOML: &str = include_str!("../../../../data/seed.toml");
/// [`Spec::source`] of the default study.
pub const SEED_SOURCE: &str = "data/seed.toml (built in)";
/// [`Spec::source`] of a spec given as text ([`SweepArgs::spec_text`]).
pub const TEXT_SOURCE: &str = "<string>";

/// A bad spec, flag or grid point: one line, naming the field and what is
/// expected, prefixed by `PATH:LINE:` when it comes from a spec file.
///
/// A spec file's keys are each checked, so one run names every bad key at
/// once ([`SpecError::all`]): one line each, at most [`SHOWN_ERRORS`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// The most lines a spec's errors take: a refusal stays short enough to
/// read (the rest are counted on the last line).
pub const SHOWN_ERRORS: usize = 3;

impl SpecError {
    /// The errors of several keys as one error: each on its own line, in the
    /// order found; beyond [`SHOWN_ERRORS`] lines, the last shown says how
    /// many more there are. `None` when there are none.
    pub fn all(mut errors: Vec<SpecError>) -> Option<SpecError> {
        let total = errors.len();
        if total <= SHOWN_ERRORS {
            let lines: Vec<String> = errors.into_iter().map(|e| e.0).collect();
            return (!lines.is_empty()).then(|| SpecError(lines.join("\n")));
        }
        errors.truncate(SHOWN_ERRORS);
        let mut lines: Vec<String> = errors.into_iter().map(|e| e.0).collect();
        let more = total - SHOWN_ERRORS;
        let s = if more == 1 { "" } else { "s" };
        if let Some(last) = lines.last_mut() {
            last.push_str(&format!(" (and {more} more error{s})"));
        }
        Some(SpecError(lines.join("\n")))
    }

    /// `Ok` when `errors` is empty, else [`SpecError::all`] of them.
    pub fn none_of(errors: Vec<SpecError>) -> Result<(), SpecError> {
        SpecError::all(errors).map_or(Ok(()), Err)
    }
}

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
    /// Mixed fleets (the `speeds` axis), in place of `servers`: empty
    /// without; else one per element of `servers`, which holds their sizes.
    pub speeds: Vec<Fleet>,
    pub workers: Vec<u32>,
    /// Interarrival laws as written; each point rescales them to mean 1/λ.
    pub arrival: Vec<Dist>,
    /// All `Lambda` or all `Rho`.
    pub load: Vec<Load>,
    pub service: Vec<Dist>,
    /// Each request's patience, the innermost axis (`None`: no patience,
    /// the one element of a spec that does not mention it); what it does
    /// is `run.reneging`.
    pub patience: Vec<Option<Dist>>,
    /// Requests a queue (a dyno, or the central queue) may hold, waiting
    /// and in service, the innermost axis after patience (`None`: no
    /// limit, the one element of a spec that does not mention it).
    pub capacity: Vec<Option<u32>>,
    pub run: RunSettings,
    /// [`SEED_SOURCE`] or the spec file's path.
    pub source: String,
    /// The axis ranges it was written with (`rho = "0.5:0.95:0.05"`).
    pub ranges: Ranges,
}

/// How a spec's axes were written as ranges, for the notes a run shows.
/// Not part of a spec's identity: a range and the list it expands to are
/// the same spec (equal, with one canonical TOML and hash).
#[derive(Clone, Debug, Default)]
pub struct Ranges(pub Vec<Expansion>);

impl PartialEq for Ranges {
    fn eq(&self, _: &Ranges) -> bool {
        true
    }
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
    /// A mixed fleet of `servers` dynos (`None`: identical dynos of speed 1).
    pub fleet: Option<Fleet>,
    pub workers: u32,
    /// The interarrival law of the whole system, rescaled to mean 1/`lambda`.
    pub arrival: Dist,
    /// The arrival law as the user wrote it.
    pub arrival_text: String,
    pub lambda: f64,
    pub service: Dist,
    /// Each request's patience (`None`: none).
    pub patience: Option<Dist>,
    /// What the patience does (`Reneging::None` without patience).
    pub reneging: crate::contract::Reneging,
    /// At most this many requests in a dyno (or the central queue); an
    /// arrival that finds it full is refused (`None`: no limit).
    pub capacity: Option<u32>,
    /// λ·E\[S\] / (servers·workers), or over a fleet's capacity
    /// (`Fleet::capacity`, Σ count·speed).
    pub rho: f64,
    /// `rho < 1`.
    pub stable: bool,
}

impl Spec {
    /// Reads `args.spec_text`, `args.spec` or the built-in default study (the
    /// first given), applies the flags and validates everything, grid points
    /// included.
    pub fn load(args: &SweepArgs) -> Result<Spec, SpecError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Spec::load_in(args, &cwd)
    }

    /// [`Spec::load`] with relative `file=` paths of flag values resolved
    /// against `cwd`.
    fn load_in(args: &SweepArgs, cwd: &Path) -> Result<Spec, SpecError> {
        let (mut raw, source) = match (&args.spec_text, &args.spec) {
            (Some(text), _) => (
                Raw::from_file(text, TEXT_SOURCE, cwd)?,
                TEXT_SOURCE.to_string(),
            ),
            (None, Some(path)) => {
                let source = path.display().to_string();
                // A FIFO would block the read forever (issue 25).
                if let Some(kind) = crate::files::special(path) {
                    return Err(SpecError(format!(
                        "{source}: cannot read spec file: it is {kind}; expected a readable TOML \
                         file"
                    )));
                }
                let text = std::fs::read_to_string(path).map_err(|e| {
                    SpecError(format!(
                        "{source}: cannot read spec file: {e}; expected a readable TOML file"
                    ))
                })?;
                // Editors on Windows may start a file with a byte-order mark.
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
                let base_dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                (Raw::from_file(&text, &source, &base_dir)?, source)
            }
            (None, None) => (
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

    /// The fully resolved spec as canonical TOML (flags applied, defaults
    /// written out, `force` left out). [`Spec::from_toml_str`] reads it back
    /// to an equal `Spec` given the same `source` and `base_dir`.
    /// What the spec's patience does, where some point has patience (None:
    /// no patience anywhere, no patience columns).
    pub fn patience_mode(&self) -> Option<crate::contract::Reneging> {
        self.patience
            .iter()
            .any(Option::is_some)
            .then_some(self.run.reneging)
    }

    /// Whether some point has a capacity (then the CSV has the capacity
    /// columns).
    pub fn has_capacity(&self) -> bool {
        self.capacity.iter().any(Option::is_some)
    }

    /// Whether some point has non-renewal arrivals, an MMPP or a trace
    /// (then the CSV has the `arrival_dispersion` column).
    /// Whether the spec has the `speeds` axis (mixed fleets).
    pub fn has_fleet(&self) -> bool {
        !self.speeds.is_empty()
    }

    pub fn has_non_renewal_arrivals(&self) -> bool {
        self.arrival.iter().any(|d| !d.is_renewal())
    }

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
        if self.speeds.is_empty() {
            let _ = writeln!(
                t,
                "servers = {}",
                list(self.servers.iter().map(u32::to_string).collect())
            );
        } else {
            let _ = writeln!(
                t,
                "speeds = {}",
                list(
                    self.speeds
                        .iter()
                        .map(|f| toml_str(&f.to_string()))
                        .collect()
                )
            );
        }
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
        // Written only when some point has patience (the hash of a spec
        // without it stays as it was).
        if self.patience != [None] {
            let _ = writeln!(
                t,
                "patience = {}",
                list(
                    self.patience
                        .iter()
                        .map(|d| toml_str(d.as_ref().map_or("none", |d| d.text())))
                        .collect()
                )
            );
        }
        // Likewise the capacity.
        if self.capacity != [None] {
            let _ = writeln!(
                t,
                "capacity = {}",
                list(
                    self.capacity
                        .iter()
                        .map(|k| k.map_or_else(|| toml_str("none"), |k| k.to_string()))
                        .collect()
                )
            );
        }
        let _ = writeln!(t, "\n[run]");
        write_run_table(&self.run, &mut t);
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
