//! The flags of `qsweep run` ([`SweepArgs`]) and `qsweep analytic` ([`AnalyticArgs`]), and reading list flags.
//!
//! [`SweepArgs`] declares one flag per `[sweep]` axis ([`AxisArgs`], which
//! `qsweep analytic` shares) and per `[run]` setting (clap derive: its doc
//! comments are the `--help` text). Axis flags
//! take comma-separated lists and may repeat (`--servers 1,2 --servers 4`);
//! [`flag_list`] splits and parses them. Each flag replaces the whole axis or
//! setting of the spec file. A unit test checks that the `[run]` flags here
//! and the settings table ([`super::settings`]) name the same settings.

use std::path::PathBuf;

use super::values::Loc;
use super::SpecError;
use crate::dist::split_list;

/// A flag's value taken as written (the spec's own parser reads it later,
/// with its one-line messages), offering `words` to shell completion
/// (`qsweep completions`): without them a shell completes file names where
/// a policy or a law is expected (issue 26). Help text lists the words
/// itself, so the args hide clap's own `[possible values]` line.
#[derive(Clone, Copy)]
pub struct Words(fn() -> Vec<&'static str>);

impl Words {
    /// Completion offers what `words` returns.
    pub const fn new(words: fn() -> Vec<&'static str>) -> Words {
        Words(words)
    }
}

impl clap::builder::TypedValueParser for Words {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.0)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// The routing policies, for completion.
pub const ROUTING_WORDS: Words = Words(|| crate::routing::Routing::ALL.map(|r| r.name()).to_vec());
/// The law names (`exp`, `weibull`, ...), for completion.
pub const LAW_WORDS: Words = Words(|| {
    crate::dist::LawName::ALL
        .iter()
        .map(|l| l.as_str())
        .collect()
});
/// The names of the laws a service time may follow (all but the arrival
/// processes `mmpp` and `trace`), for completion of `--service`.
pub const SERVICE_LAW_WORDS: Words = Words(|| {
    crate::dist::LawName::ALL
        .iter()
        .filter(|l| !l.is_arrival_only())
        .map(|l| l.as_str())
        .collect()
});
/// The service laws' names and `none`, for completion of `--patience`.
pub const PATIENCE_WORDS: Words = Words(|| {
    let mut words = vec!["none"];
    words.extend(
        crate::dist::LawName::ALL
            .iter()
            .filter(|l| !l.is_arrival_only())
            .map(|l| l.as_str()),
    );
    words
});

/// One flag per `[sweep]` axis, shared by `qsweep run`, `qsweep analytic`
/// and `qsweep size` (flattened into their flags): comma-separated lists,
/// repeatable, each replacing the spec's axis.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct AxisArgs {
    /// Routing policies: random, round_robin, central, jsq, pod, jiq, lwl, weighted [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = ROUTING_WORDS, hide_possible_values = true)]
    pub routing: Vec<String>,
    /// Servers sampled per request by pod (power of d choices) [list of 1..=32 or ranges; default 2]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub choices: Vec<String>,
    /// Routers, each seeing only its own requests (central, jsq, pod, jiq) [list of 1..=1024 or ranges; default 1]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub routers: Vec<String>,
    /// Dynos (servers) behind the load balancer [list of integers >= 1, or ranges: 10:100:10, geom(1,1000,7)]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub servers: Vec<String>,
    /// Mixed fleets in place of --servers: count x speed per class, fleets separated by ';', e.g. '40x1,10x2;50x1' [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub speeds: Vec<String>,
    /// Workers per dyno [list of integers >= 1 or ranges; default 1]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub workers: Vec<String>,
    /// Interarrival laws, rescaled to mean 1/lambda at each point [list; default exp]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = LAW_WORDS, hide_possible_values = true)]
    pub arrival: Vec<String>,
    /// Arrival rates, requests per time unit (replaces the spec's lambda or rho) [list or ranges]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub lambda: Vec<String>,
    /// Target utilisations: lambda = rho·servers·workers/E[S] (replaces the spec's lambda or rho) [list, or ranges: 0.5:0.95:0.05 (stop included), geom(0.1,0.9,5) (log-spaced)]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub rho: Vec<String>,
    /// Service-time laws, e.g. 'weibull(shape=0.46,median=0.05,min=0.01,max=30)' [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = SERVICE_LAW_WORDS, hide_possible_values = true)]
    pub service: Vec<String>,
    /// Each request's patience: a law such as 'det(value=30)' or 'exp(mean=60)', or none (see --reneging) [list; default none]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = PATIENCE_WORDS, hide_possible_values = true)]
    pub patience: Vec<String>,
    /// Requests a dyno (or the central queue) may hold, waiting and in service; arrivals beyond are refused: integers from 1 to 65535, or none [list; default none]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = Words(|| vec!["none"]), hide_possible_values = true)]
    pub capacity: Vec<String>,
}

/// Flags of `qsweep run`: one per axis and setting, each overriding the spec
/// file (or the built-in default study).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct SweepArgs {
    /// Sweep spec (TOML). Without it the built-in default study
    /// (data/seed.toml) runs, with any flags applied on top.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// The spec's TOML text itself, in place of a file: the Python module's
    /// `qsweep.run(spec="...")` (not a flag). Errors name it `<string>`;
    /// relative `file=` paths in it resolve against the current directory.
    #[arg(skip)]
    pub spec_text: Option<String>,
    /// The grid's axes.
    #[command(flatten)]
    pub axes: AxisArgs,
    /// Replications per point [overrides the spec; 1024 if it has none]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub reps: Option<String>,
    /// Customers recorded per replication [overrides the spec; 100000 if it has none]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub customers: Option<String>,
    /// Customers discarded first in each replication, or auto (MSER-5 on a pilot run, per point) [overrides the spec; 10000 if it has none]
    #[arg(long, value_name = "N|auto", allow_hyphen_values = true, value_parser = Words(|| vec!["auto"]), hide_possible_values = true)]
    pub warmup: Option<String>,
    /// Add replications in rounds until the 95% CIs of mean and p99 wait are within P × the estimate (e.g. 0.01) [--reps is the first round]
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub precision: Option<String>,
    /// With --precision: stop adding replications at this many customers per point, warm-up included [default 1e10]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub max_customers: Option<String>,
    /// Master random seed [overrides the spec; 1 if it has none]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub seed: Option<String>,
    /// Output: .csv (written row by row, resumable), .json, .md or .parquet (converted from the .csv written beside it once the run completes), or - (CSV on stdout, the summary on stderr) [default: qsweep-results.csv, or -2, -3 ... if taken]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// CPU threads, 0 = all cores [default 0]
    #[arg(long, short = 'j', value_name = "N", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub threads: Option<String>,
    /// Simulate points with rho >= 1 instead of refusing them
    #[arg(long)]
    pub allow_unstable: bool,
    /// Overwrite the output file if it exists
    #[arg(long)]
    pub force: bool,
    /// Engine: auto, gpu or cpu [default auto]
    #[arg(long, value_name = "auto|gpu|cpu", value_parser = Words(|| vec!["auto", "gpu", "cpu"]), hide_possible_values = true)]
    pub backend: Option<String>,
    /// Use the GPU adapter whose name contains this
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// Time unit of the spec's times and rates: s, ms, us, µs, ns, min or h (a label recorded in the .meta.json and used by plots) [default: unsaid]
    #[arg(long, value_name = "UNIT", value_parser = Words(|| super::TIME_UNITS.to_vec()), hide_possible_values = true)]
    pub units: Option<String>,
    /// Extra wait quantiles, each adding the CSV columns q{Q}_wait and q{Q}_wait_ci95 (e.g. 0.9999 → q0.9999_wait), computed like p99_wait [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub quantiles: Vec<String>,
    /// Wait thresholds (at most 4, in the spec's time unit), each adding the CSV columns p_wait_gt_{T}, p_wait_gt_{T}_ci95 and analytic_p_wait_gt_{T}: P(wait > T), counted exactly per customer in the kernels, Student t CI over replications [list]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_hint = clap::ValueHint::Other)]
    pub slo: Vec<String>,
    /// What the patience axis does: abandon (the request leaves unserved when its wait would exceed its patience; default) or timeout (it is served, and counted as timed out)
    #[arg(long, value_name = "MODE", value_parser = Words(|| vec!["abandon", "timeout"]), hide_possible_values = true)]
    pub reneging: Option<String>,
}

/// Flags of `qsweep analytic`: the grid's axes only (no simulation, so none
/// of `run`'s settings), the same [`AxisArgs`] as `qsweep run`'s.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct AnalyticArgs {
    /// Sweep spec (TOML); its [run] settings are not used. Without it the built-in default study (data/seed.toml), with any flags applied on top.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// The grid's axes: `qsweep run`'s flags.
    #[command(flatten)]
    pub axes: AxisArgs,
    /// Also write the table to this file: .csv, .json, .md or .parquet by extension, or - for CSV on stdout (instead of the text table)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Include points with rho >= 1 (their baseline is `unstable`) instead of refusing them
    #[arg(long)]
    pub allow_unstable: bool,
    /// Overwrite the output file if it exists
    #[arg(long)]
    pub force: bool,
}

impl AnalyticArgs {
    /// The same request as `qsweep run`'s flags.
    pub fn sweep(&self) -> SweepArgs {
        SweepArgs {
            spec: self.spec.clone(),
            axes: self.axes.clone(),
            out: self.out.clone(),
            allow_unstable: self.allow_unstable,
            force: self.force,
            ..SweepArgs::default()
        }
    }
}

/// All items of a repeatable, comma-separated list flag (`None`: not given).
pub(super) fn split_flag(
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

/// A repeatable, comma-separated list flag, each item parsed (`None`: not given).
pub(super) fn flag_list<T>(
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

/// [`flag_list`] for items that may stand for several values (ranges:
/// `0.5:0.95:0.05`), flattened in order (`None`: not given).
pub(super) fn flag_items<T>(
    flag: &'static str,
    values: &[String],
    expected: &str,
    mut parse: impl FnMut(&str) -> Result<Vec<T>, String>,
) -> Result<Option<Vec<T>>, SpecError> {
    let Some(items) = split_flag(flag, values, expected)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for s in &items {
        out.extend(parse(s).map_err(|m| Loc::Flag(flag).err(m))?);
    }
    Ok(Some(out))
}
