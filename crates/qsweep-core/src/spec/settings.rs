//! The `[run]` table: how much to simulate and where results go.
//!
//! Every `[run]` setting is declared once, as one entry of [`RUN_SETTINGS`]:
//! its TOML key, its flag, what a valid value is, how a value from the spec
//! file or the command line is stored in [`RunSettings`], and how it is
//! written back as canonical TOML. The spec-file reader
//! ([`read_run_table`]), the flag merger ([`apply_run_flags`]), the
//! canonical writer ([`write_run_table`], hashed for provenance) and the
//! error messages all walk that table, so they cannot disagree.
//!
//! To add a `[run]` setting, edit three places (four edits):
//!
//! 1. [`RunSettings`] (this file): the field, and its default in
//!    `impl Default for RunSettings` just below it;
//! 2. [`RUN_SETTINGS`] (this file): the entry. Its `write` must return
//!    `None` at the default, so that specs written before the setting existed
//!    keep their canonical TOML and hash (and `--resume` still accepts them);
//! 3. [`super::SweepArgs`] (`flags.rs`): the clap field, whose doc comment is
//!    the `--help` line. The unit test `run_settings_and_flags_match` fails
//!    until the entry and the clap field agree.
//!
//! Then use the setting where it takes effect. If it describes the machine
//! rather than the study (as `out`, `threads`, `backend` and `adapter` do),
//! also reset it in `provenance::canonical_toml` (so it stays out of the
//! spec hash) and allow its flag in `load_from_meta` in `run/session.rs`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::values::{
    count, de_float, de_int, entries_in_order, invalid, invalid_count, nonempty, quote, show,
    str_int, toml_float, toml_str, FileCtx, Loc,
};
use super::{SpecError, SweepArgs, SWEEP_KEYS};
use crate::spec::Backend;

/// Default of `max_customers`: the most customers (warm-up included) one
/// point may simulate under `precision`.
pub const DEFAULT_MAX_CUSTOMERS: u64 = 10_000_000_000;

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
    /// [`super::default_out_path`].
    pub out: Option<PathBuf>,
    /// Worker threads for the CPU engine; 0 = all cores.
    pub threads: usize,
    /// Simulate points with rho >= 1 instead of refusing them.
    pub allow_unstable: bool,
    /// Overwrite an existing output file (flag only: it is about this
    /// invocation, not the study, so it has no `RUN_SETTINGS` entry and
    /// [`super::Spec::to_toml`] leaves it out).
    pub force: bool,
    /// The engine asked for.
    pub backend: Backend,
    /// Substring of the GPU adapter name to use.
    pub adapter: Option<String>,
    /// The time unit the spec's times and rates are written in (one of
    /// [`TIME_UNITS`]); recorded in the `.meta.json` and used by plots for
    /// axis labels. `None`: not said.
    pub units: Option<String>,
    /// Extra wait quantiles, each adding the columns `q{q}_wait` and
    /// `q{q}_wait_ci95` (see `output::quantile_columns`); empty: none.
    pub quantiles: Vec<f64>,
    /// `--slo`: wait thresholds t (in the spec's time unit), each adding
    /// the columns `p_wait_gt_{t}`, its `_ci95` and its exact baseline
    /// (see `output::slo_columns`), counted exactly in the kernels
    /// (`PointParams::slo`); empty: none.
    pub slo: Vec<f64>,
    /// What the `patience` axis's laws do: `Timeout` (served, counted as
    /// timed out) or `Abandon` (the default: the request leaves unserved).
    pub reneging: crate::contract::Reneging,
}

/// The time units a spec may declare (`units = "ms"`). Only a label: the
/// numbers are simulated as written, so λ is per this unit and every time
/// in the CSV is in it.
pub const TIME_UNITS: [&str; 7] = ["s", "ms", "us", "µs", "ns", "min", "h"];

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
            backend: Backend::Auto,
            adapter: None,
            units: None,
            quantiles: Vec::new(),
            slo: Vec::new(),
            reneging: crate::contract::Reneging::Abandon,
        }
    }
}

/// A `[run]` value as given, in the spec file or on the command line.
pub(super) enum Given<'a> {
    /// A value in the spec file.
    Toml(&'a DeValue<'a>),
    /// A flag's text (`--reps 4`).
    Text(&'a str),
    /// A list flag's texts, once per time it is given (`--slo 0.1 --slo
    /// 1,30`): one list, as the README promises of every flag.
    Texts(&'a [String]),
    /// A path flag's value (`-o out.csv`), which need not be UTF-8.
    Path(&'a Path),
    /// A switch that is present (`--allow-unstable`).
    Switch,
}

impl Given<'_> {
    /// An integer: a TOML integer or integral float, or flag text such as
    /// `2e5`.
    fn int(&self) -> Option<i128> {
        match self {
            Given::Toml(v) => de_int(v),
            Given::Text(s) => str_int(s),
            Given::Path(_) | Given::Switch | Given::Texts(_) => None,
        }
    }

    /// A number: a TOML integer or float, or flag text.
    fn float(&self) -> Option<f64> {
        match self {
            Given::Toml(v) => de_float(v),
            Given::Text(s) => s.trim().parse().ok(),
            Given::Path(_) | Given::Switch | Given::Texts(_) => None,
        }
    }

    /// A string: a TOML string or a flag's text, untrimmed.
    fn text(&self) -> Option<&str> {
        match self {
            Given::Toml(v) => v.as_str(),
            Given::Text(s) => Some(s),
            Given::Path(_) | Given::Switch | Given::Texts(_) => None,
        }
    }

    /// The spec file's value, if it comes from there.
    fn toml(&self) -> Option<&DeValue<'_>> {
        match self {
            Given::Toml(v) => Some(v),
            _ => None,
        }
    }

    /// The value as messages show it: `"tpu"` from a file, `'tpu'` from a
    /// flag.
    fn shown(&self) -> String {
        match self {
            Given::Toml(v) => show(v),
            Given::Text(s) => quote(s),
            Given::Texts(v) => quote(&v.join(",")),
            Given::Path(p) => quote(&p.to_string_lossy()),
            Given::Switch => "the switch".to_string(),
        }
    }
}

/// One `[run]` setting: everything the reader, the flag merger, the writer
/// and the messages need to know about it.
pub(super) struct RunSetting {
    /// Key in the spec file's `[run]` table.
    pub(super) key: &'static str,
    /// Flag of `qsweep run` (`--{flag}`), a field of [`SweepArgs`].
    pub(super) flag: &'static str,
    /// What a valid value is: `... is not a valid value; expected {expected}`.
    pub(super) expected: &'static str,
    /// Position of the key in the `expected one of ...` list of an unknown
    /// key (the table is in canonical TOML order; the list keeps the order
    /// the settings were added in, so that message stays as it was).
    pub(super) listed_at: usize,
    /// The flag's value on the command line, if given.
    pub(super) flag_value: fn(&SweepArgs) -> Option<Given<'_>>,
    /// Stores a value; `None`: not a valid value.
    pub(super) set: fn(&mut RunSettings, &Given<'_>) -> Option<()>,
    /// The value as canonical TOML; `None`: leave the key out.
    pub(super) write: fn(&RunSettings) -> Option<String>,
}

impl RunSetting {
    /// Why `given` was refused: too large for a count, or not what is
    /// expected.
    fn refusal(&self, given: &Given) -> String {
        let max = match self.key {
            "reps" | "customers" | "warmup" => u64::from(u32::MAX),
            "max_customers" | "seed" => u64::MAX,
            "threads" => u64::try_from(usize::MAX).unwrap_or(u64::MAX),
            _ => return invalid(&given.shown(), self.expected),
        };
        invalid_count(&given.shown(), given.int(), max, self.expected)
    }
}

/// Every `[run]` setting, in the order [`super::Spec::to_toml`] writes them
/// (and flags are applied).
pub(super) const RUN_SETTINGS: &[RunSetting] = &[
    RunSetting {
        key: "reps",
        flag: "reps",
        expected: "an integer >= 1",
        listed_at: 0,
        flag_value: |a| a.reps.as_deref().map(Given::Text),
        set: |r, v| {
            r.reps = v.int().and_then(count)?;
            Some(())
        },
        write: |r| Some(r.reps.to_string()),
    },
    RunSetting {
        key: "customers",
        flag: "customers",
        expected: "an integer >= 1",
        listed_at: 1,
        flag_value: |a| a.customers.as_deref().map(Given::Text),
        set: |r, v| {
            r.customers = v.int().and_then(count)?;
            Some(())
        },
        write: |r| Some(r.customers.to_string()),
    },
    RunSetting {
        key: "warmup",
        flag: "warmup",
        expected: "an integer >= 0, or \"auto\" (chosen per point by MSER-5)",
        listed_at: 2,
        flag_value: |a| a.warmup.as_deref().map(Given::Text),
        set: |r, v| {
            if v.text().is_some_and(|s| s.trim() == "auto") {
                // Each point's pilot chooses (see `warmup`).
                r.warmup = 0;
                r.warmup_auto = true;
            } else {
                r.warmup = v.int().and_then(|i| u32::try_from(i).ok())?;
                r.warmup_auto = false;
            }
            Some(())
        },
        write: |r| {
            Some(if r.warmup_auto {
                toml_str("auto")
            } else {
                r.warmup.to_string()
            })
        },
    },
    RunSetting {
        key: "precision",
        flag: "precision",
        expected: "a number > 0 and < 1 (target 95% CI half-width relative to the estimate, \
                   e.g. 0.01)",
        listed_at: 9,
        flag_value: |a| a.precision.as_deref().map(Given::Text),
        set: |r, v| {
            let p = v.float().filter(|&x| x.is_finite() && x > 0.0 && x < 1.0)?;
            r.precision = Some(p);
            Some(())
        },
        // Written only when set, so specs without it keep their hash.
        write: |r| r.precision.map(toml_float),
    },
    RunSetting {
        key: "max_customers",
        flag: "max-customers",
        expected: "an integer >= 1 (customers per point, e.g. 1e10)",
        listed_at: 10,
        flag_value: |a| a.max_customers.as_deref().map(Given::Text),
        set: |r, v| {
            r.max_customers = v
                .int()
                .and_then(|i| u64::try_from(i).ok())
                .filter(|&n| n >= 1)?;
            Some(())
        },
        // Written only when not the default, so specs without it keep their
        // hash.
        write: |r| (r.max_customers != DEFAULT_MAX_CUSTOMERS).then(|| r.max_customers.to_string()),
    },
    RunSetting {
        key: "seed",
        flag: "seed",
        expected: "an integer from 0 to 18446744073709551615 (a string for values above \
                   9223372036854775807)",
        listed_at: 3,
        flag_value: |a| a.seed.as_deref().map(Given::Text),
        set: |r, v| {
            r.seed = match v {
                Given::Toml(DeValue::Integer(_)) => v.int().and_then(|i| u64::try_from(i).ok()),
                // TOML integers stop at i64::MAX: larger seeds are strings.
                _ => v.text().and_then(|s| s.trim().parse().ok()),
            }?;
            Some(())
        },
        write: |r| {
            Some(if r.seed <= i64::MAX as u64 {
                r.seed.to_string()
            } else {
                toml_str(&r.seed.to_string())
            })
        },
    },
    RunSetting {
        key: "out",
        flag: "out",
        expected: "a non-empty path",
        listed_at: 4,
        flag_value: |a| a.out.as_deref().map(Given::Path),
        set: |r, v| {
            let out = match v {
                Given::Path(p) => (!p.as_os_str().is_empty()).then(|| p.to_path_buf()),
                _ => v.text().and_then(nonempty).map(PathBuf::from),
            }?;
            r.out = Some(out);
            Some(())
        },
        write: |r| r.out.as_ref().map(|out| toml_str(&out.to_string_lossy())),
    },
    RunSetting {
        key: "threads",
        flag: "threads",
        expected: "an integer >= 0 (0 = all cores)",
        listed_at: 5,
        flag_value: |a| a.threads.as_deref().map(Given::Text),
        set: |r, v| {
            r.threads = v.int().and_then(|i| usize::try_from(i).ok())?;
            Some(())
        },
        write: |r| Some(r.threads.to_string()),
    },
    RunSetting {
        key: "allow_unstable",
        flag: "allow-unstable",
        expected: "true or false",
        listed_at: 6,
        // A switch: present means true; absent leaves the file's value.
        flag_value: |a| a.allow_unstable.then_some(Given::Switch),
        set: |r, v| {
            r.allow_unstable = match v {
                Given::Switch => true,
                _ => v.toml()?.as_bool()?,
            };
            Some(())
        },
        write: |r| Some(r.allow_unstable.to_string()),
    },
    RunSetting {
        key: "backend",
        flag: "backend",
        expected: Backend::EXPECTED,
        listed_at: 7,
        flag_value: |a| a.backend.as_deref().map(Given::Text),
        set: |r, v| {
            // A flag's text is trimmed, a spec file's string is not.
            let name = match v {
                Given::Text(s) => s.trim(),
                _ => v.text()?,
            };
            r.backend = name.parse().ok()?;
            Some(())
        },
        write: |r| Some(toml_str(r.backend.name())),
    },
    RunSetting {
        key: "adapter",
        flag: "adapter",
        expected: "a non-empty string (part of the GPU adapter's name)",
        listed_at: 8,
        flag_value: |a| a.adapter.as_deref().map(Given::Text),
        set: |r, v| {
            r.adapter = Some(v.text().and_then(nonempty)?);
            Some(())
        },
        write: |r| r.adapter.as_deref().map(toml_str),
    },
    RunSetting {
        key: "units",
        flag: "units",
        expected: "a time unit: s, ms, us, µs, ns, min or h (the unit of the spec's times)",
        listed_at: 11,
        flag_value: |a| a.units.as_deref().map(Given::Text),
        set: |r, v| {
            let u = v.text()?.trim();
            r.units = Some(TIME_UNITS.iter().find(|&&t| t == u)?.to_string());
            Some(())
        },
        // Written only when set, so specs without it keep their hash.
        write: |r| r.units.as_deref().map(toml_str),
    },
    RunSetting {
        key: "quantiles",
        flag: "quantiles",
        expected: "a list of probabilities between 0 and 1, each once (e.g. 0.5,0.99,0.9999)",
        listed_at: 12,
        flag_value: |a| (!a.quantiles.is_empty()).then(|| Given::Texts(&a.quantiles)),
        set: |r, v| {
            let qs = float_list(v)?;
            let ok = |q: &f64| q.is_finite() && *q > 0.0 && *q < 1.0;
            let once = |i: usize| !qs[..i].contains(&qs[i]);
            if qs.is_empty() || !qs.iter().all(ok) || !(0..qs.len()).all(once) {
                return None;
            }
            r.quantiles = qs;
            Some(())
        },
        // Written only when set, so specs without it keep their hash.
        write: |r| {
            (!r.quantiles.is_empty()).then(|| {
                let items: Vec<String> = r.quantiles.iter().map(|&q| toml_float(q)).collect();
                format!("[{}]", items.join(", "))
            })
        },
    },
    RunSetting {
        key: "slo",
        flag: "slo",
        expected: "a list of at most 4 wait thresholds, each once, each a number from 0 to \
                   3.4e38 (f32, what the kernels count in) in the spec's time unit (e.g. \
                   0.1,1,30)",
        listed_at: 13,
        flag_value: |a| (!a.slo.is_empty()).then(|| Given::Texts(&a.slo)),
        set: |r, v| {
            let ts = float_list(v)?;
            // The recorder counts in f32: a threshold must be one.
            let ok = |t: &f64| t.is_finite() && *t >= 0.0 && *t <= f64::from(f32::MAX);
            let once = |i: usize| !ts[..i].contains(&ts[i]);
            if ts.is_empty()
                || ts.len() > crate::contract::MAX_SLO_THRESHOLDS
                || !ts.iter().all(ok)
                || !(0..ts.len()).all(once)
            {
                return None;
            }
            r.slo = ts;
            Some(())
        },
        // Written only when set, so specs without it keep their hash.
        write: |r| {
            (!r.slo.is_empty()).then(|| {
                let items: Vec<String> = r.slo.iter().map(|&t| toml_float(t)).collect();
                format!("[{}]", items.join(", "))
            })
        },
    },
    RunSetting {
        key: "reneging",
        flag: "reneging",
        expected: "\"abandon\" (a request whose wait would exceed its patience leaves \
                   unserved) or \"timeout\" (it is served, and counted as timed out)",
        listed_at: 14,
        flag_value: |a| a.reneging.as_deref().map(Given::Text),
        set: |r, v| {
            r.reneging = match v.text()?.trim() {
                "abandon" => crate::contract::Reneging::Abandon,
                "timeout" => crate::contract::Reneging::Timeout,
                _ => return None,
            };
            Some(())
        },
        // Written only when not the default, so specs without it keep
        // their hash.
        write: |r| (r.reneging == crate::contract::Reneging::Timeout).then(|| toml_str("timeout")),
    },
];

/// A list of numbers: a TOML array (or one number), or comma-separated
/// flag text. None if any item is not a number.
fn float_list(v: &Given<'_>) -> Option<Vec<f64>> {
    match v {
        Given::Toml(DeValue::Array(items)) => items
            .iter()
            .map(|i| de_float(i.get_ref()))
            .collect::<Option<_>>(),
        Given::Toml(other) => Some(vec![de_float(other)?]),
        Given::Texts(items) => items
            .iter()
            .flat_map(|s| s.split(','))
            .map(|s| s.trim().parse::<f64>().ok())
            .collect::<Option<_>>(),
        _ => v
            .text()?
            .split(',')
            .map(|s| s.trim().parse::<f64>().ok())
            .collect::<Option<_>>(),
    }
}

/// The `units` a spec's canonical TOML (a `.meta.json`'s `spec_toml`)
/// declares, if any.
pub fn units_in_toml(text: &str) -> Option<String> {
    let doc: toml::Table = text.parse().ok()?;
    let units = doc.get("run")?.get("units")?.as_str()?;
    TIME_UNITS.contains(&units).then(|| units.to_string())
}

/// Whether `key` is a `[run]` key (for "it belongs in [run]" hints).
pub(super) fn is_run_key(key: &str) -> bool {
    RUN_SETTINGS.iter().any(|s| s.key == key)
}

/// The `[run]` keys as unknown-key messages list them.
fn listed_keys() -> Vec<&'static str> {
    let mut settings: Vec<&RunSetting> = RUN_SETTINGS.iter().collect();
    settings.sort_by_key(|s| s.listed_at);
    settings.iter().map(|s| s.key).collect()
}

/// Reads the spec file's `[run]` table into `run`, in file order; the
/// errors of every bad key (none: all read).
pub(super) fn read_run_table(
    run: &mut RunSettings,
    ctx: &FileCtx<'_>,
    table: &DeTable<'_>,
) -> Vec<SpecError> {
    // Every key is checked, so that one run names all the bad ones.
    let mut errors = Vec::new();
    for (k, v) in entries_in_order(table) {
        let key: &str = k.get_ref();
        let Some(setting) = RUN_SETTINGS.iter().find(|s| s.key == key) else {
            let hint = if SWEEP_KEYS.contains(&key) {
                format!(" ({key} belongs in [sweep])")
            } else if key == "force" {
                " (force is a flag only: --force)".to_string()
            } else {
                String::new()
            };
            errors.push(ctx.err(
                k.span(),
                format!(
                    "[run] unknown key '{key}'; expected one of {}{hint}",
                    listed_keys().join(", ")
                ),
            ));
            continue;
        };
        let given = Given::Toml(v.get_ref());
        if (setting.set)(run, &given).is_none() {
            errors.push(ctx.loc(v.span(), "run", key).err(setting.refusal(&given)));
        }
    }
    errors
}

/// Applies the `[run]` flags that were given over `run`, each replacing the
/// setting; `--force` too, which only a flag can set.
pub(super) fn apply_run_flags(run: &mut RunSettings, args: &SweepArgs) -> Result<(), SpecError> {
    for setting in RUN_SETTINGS {
        let Some(given) = (setting.flag_value)(args) else {
            continue;
        };
        (setting.set)(run, &given)
            .ok_or_else(|| Loc::Flag(setting.flag).err(setting.refusal(&given)))?;
    }
    run.force |= args.force;
    Ok(())
}

/// Writes the `[run]` table's `key = value` lines of canonical TOML.
pub(super) fn write_run_table(run: &RunSettings, t: &mut String) {
    for setting in RUN_SETTINGS {
        if let Some(value) = (setting.write)(run) {
            let _ = writeln!(t, "{} = {value}", setting.key);
        }
    }
}
