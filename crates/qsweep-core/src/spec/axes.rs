//! The `[sweep]` table: the axes whose product is the grid.
//!
//! Each axis (routing, choices, routers, servers, workers, arrival, the load
//! as lambda or rho, service) is a list in the spec file (a scalar means a
//! one-element list) or a comma-separated, repeatable flag. Each element is
//! checked here, with the messages' `expected ...` texts below; [`Axes`]
//! holds what one source gave before [`Axes::finish`] fills the defaults
//! and refuses the axes that have none.

use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::flags::{flag_items, flag_list, split_flag};
use super::ranges::{expand_real, int_items, is_range, Expansion};
use super::settings::{is_run_key, RunSettings};
use super::values::{
    count, de_float, de_int, entries_in_order, invalid, invalid_count, positive, quote, show,
    str_int, FileCtx, Loc,
};
use super::{Load, Spec, SpecError, SweepArgs};
use crate::dist::{Dist, Role};
use crate::fleet::{Fleet, EXPECT_FLEET};
use crate::routing::Routing;

/// Keys of the `[sweep]` table, in grid nesting order (outermost first;
/// `lambda` and `rho` are the two spellings of the load axis).
pub const SWEEP_KEYS: [&str; 12] = [
    "routing", "choices", "routers", "servers", "speeds", "workers", "arrival", "lambda", "rho",
    "service", "patience", "capacity",
];
/// Default of the `choices` axis (power of two choices).
pub const DEFAULT_CHOICES: u32 = 2;
/// Default of the `routers` axis.
pub const DEFAULT_ROUTERS: u32 = 1;

const EXPECT_CHOICES: &str = "integers from 1 to 32 (servers sampled per request by pod)";
const EXPECT_ROUTERS: &str =
    "integers from 1 to 1024 (routers that each see only their own requests)";
const EXPECT_COUNT: &str = "integers >= 1";
const EXPECT_RATE: &str = "finite numbers > 0 (arrival rates, requests per second)";
const EXPECT_RHO: &str = "finite numbers > 0 (target utilisation per server)";

/// The axes one source gave (`None`: not given), before defaults.
#[derive(Default)]
pub(super) struct Axes {
    routing: Option<Vec<Routing>>,
    choices: Option<Vec<u32>>,
    routers: Option<Vec<u32>>,
    servers: Option<Vec<u32>>,
    /// Mixed fleets, in place of `servers`.
    speeds: Option<Vec<Fleet>>,
    workers: Option<Vec<u32>>,
    arrival: Option<Vec<Dist>>,
    load: Option<Vec<Load>>,
    service: Option<Vec<Dist>>,
    /// Each request's patience (`None` elements: "none", no patience).
    patience: Option<Vec<Option<Dist>>>,
    /// Requests a queue may hold (`None` elements: "none", no limit).
    capacity: Option<Vec<Option<u32>>>,
    /// Ranges the axes were written with (see `ranges`), for the notes.
    ranges: Vec<Expansion>,
}

fn choices_value(i: i128) -> Option<u32> {
    count(i).filter(|&n| n <= crate::contract::dispatch::MAX_CHOICES)
}

fn routers_value(i: i128) -> Option<u32> {
    count(i).filter(|&n| n <= crate::contract::dispatch::MAX_ROUTERS)
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

impl Axes {
    /// Reads the spec file's `[sweep]` table, in file order; the errors of
    /// every bad key (none: all read).
    pub(super) fn read_toml(&mut self, ctx: &FileCtx<'_>, table: &DeTable<'_>) -> Vec<SpecError> {
        let mut load_key: Option<(&'static str, usize)> = None;
        // Every key is checked, so that one run names all the bad ones.
        let mut errors = Vec::new();
        for (k, v) in entries_in_order(table) {
            let key: &str = k.get_ref();
            let loc = ctx.loc(k.span(), "sweep", key);
            let elem_loc = |e: &Spanned<DeValue<'_>>| ctx.loc(e.span(), "sweep", key);
            let mut read_key = || -> Result<(), SpecError> {
                match key {
                    "routing" => {
                        let mut out = Vec::new();
                        let expect_routing = format!("one of {}", Routing::names());
                        for e in axis_items(v, &loc, &expect_routing)? {
                            let r = match e.get_ref() {
                                DeValue::String(s) => s.parse::<Routing>(),
                                other => Err(invalid(&show(other), &expect_routing)),
                            };
                            out.push(r.map_err(|m| elem_loc(e).err(m))?);
                        }
                        self.routing = Some(out);
                    }
                    "servers" | "workers" => {
                        let mut out = Vec::new();
                        for e in axis_items(v, &loc, EXPECT_COUNT)? {
                            if let Some(text) = range_text(e.get_ref()) {
                                let values = int_range(text, count, EXPECT_COUNT)
                                    .map_err(|m| elem_loc(e).err(m))?;
                                self.note_range(key, text, &values);
                                out.extend(values);
                                continue;
                            }
                            let i = de_int(e.get_ref());
                            let n = i.and_then(count).ok_or_else(|| {
                                let shown = show(e.get_ref());
                                let max = u64::from(u32::MAX);
                                elem_loc(e).err(invalid_count(&shown, i, max, EXPECT_COUNT))
                            })?;
                            out.push(n);
                        }
                        if key == "servers" {
                            self.servers = Some(out);
                        } else {
                            self.workers = Some(out);
                        }
                    }
                    "speeds" => {
                        let mut out = Vec::new();
                        for e in axis_items(v, &loc, EXPECT_FLEET)? {
                            let fleet = match e.get_ref() {
                                DeValue::String(s) => Fleet::parse(s),
                                other => Err(invalid(&show(other), EXPECT_FLEET)),
                            };
                            out.push(fleet.map_err(|m| elem_loc(e).err(m))?);
                        }
                        self.speeds = Some(out);
                    }
                    "choices" | "routers" => {
                        let (expected, parse): (_, fn(i128) -> Option<u32>) = if key == "choices" {
                            (EXPECT_CHOICES, choices_value)
                        } else {
                            (EXPECT_ROUTERS, routers_value)
                        };
                        let mut out = Vec::new();
                        for e in axis_items(v, &loc, expected)? {
                            if let Some(text) = range_text(e.get_ref()) {
                                let values = int_range(text, parse, expected)
                                    .map_err(|m| elem_loc(e).err(m))?;
                                self.note_range(key, text, &values);
                                out.extend(values);
                                continue;
                            }
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
                        let load = |x: f64| {
                            if name == "lambda" {
                                Load::Lambda(x)
                            } else {
                                Load::Rho(x)
                            }
                        };
                        for e in axis_items(v, &loc, expected)? {
                            if let Some(text) = range_text(e.get_ref()) {
                                let values =
                                    real_range(text, expected).map_err(|m| elem_loc(e).err(m))?;
                                self.note_range(name, text, &values);
                                out.extend(values.into_iter().map(load));
                                continue;
                            }
                            let x = de_float(e.get_ref()).and_then(positive).ok_or_else(|| {
                                elem_loc(e).err(invalid(&show(e.get_ref()), expected))
                            })?;
                            out.push(load(x));
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
                                other => {
                                    return Err(elem_loc(e).err(invalid(&show(other), expected)))
                                }
                            };
                            out.push(d);
                        }
                        if role == Role::Arrival {
                            self.arrival = Some(out);
                        } else {
                            self.service = Some(out);
                        }
                    }
                    "patience" => {
                        let mut out = Vec::new();
                        for e in axis_items(v, &loc, EXPECT_PATIENCE)? {
                            let d = match e.get_ref() {
                                DeValue::String(s) => parse_patience(s, ctx.base_dir)
                                    .map_err(|err| elem_loc(e).dist_err(&err))?,
                                other => {
                                    return Err(
                                        elem_loc(e).err(invalid(&show(other), EXPECT_PATIENCE))
                                    )
                                }
                            };
                            out.push(d);
                        }
                        self.patience = Some(out);
                    }
                    "capacity" => {
                        let mut out = Vec::new();
                        for e in axis_items(v, &loc, EXPECT_CAPACITY)? {
                            let k = match e.get_ref() {
                                DeValue::String(s) => parse_capacity(s),
                                other => capacity_value(de_int(other), &show(other)),
                            };
                            out.push(k.map_err(|m| elem_loc(e).err(m))?);
                        }
                        self.capacity = Some(out);
                    }
                    _ => {
                        let hint = if is_run_key(key) {
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
                Ok(())
            };
            if let Err(e) = read_key() {
                errors.push(e);
            }
        }
        errors
    }

    /// Applies the axis flags that were given, each replacing the whole
    /// axis; relative `file=` paths in flag values resolve against `cwd`.
    pub(super) fn apply_flags(&mut self, a: &SweepArgs, cwd: &Path) -> Result<(), SpecError> {
        let expect_routing = format!("one of {}", Routing::names());
        if let Some(v) = flag_list("routing", &a.axes.routing, &expect_routing, |s| s.parse())? {
            self.routing = Some(v);
        }
        let counts = |s: &str| {
            let i = str_int(s);
            i.and_then(count)
                .ok_or_else(|| invalid_count(&quote(s), i, u64::from(u32::MAX), EXPECT_COUNT))
        };
        let choices = |s: &str| {
            str_int(s)
                .and_then(choices_value)
                .ok_or_else(|| invalid(&quote(s), EXPECT_CHOICES))
        };
        let routers = |s: &str| {
            str_int(s)
                .and_then(routers_value)
                .ok_or_else(|| invalid(&quote(s), EXPECT_ROUTERS))
        };
        type Single<'c> = &'c dyn Fn(&str) -> Result<u32, String>;
        /// Flag, its values, what is expected, one value, a range's value.
        type IntAxis<'c> = (
            &'static str,
            &'c [String],
            &'c str,
            Single<'c>,
            fn(i128) -> Option<u32>,
        );
        let int_axes: [IntAxis; 4] = [
            ("servers", &a.axes.servers, EXPECT_COUNT, &counts, count),
            ("workers", &a.axes.workers, EXPECT_COUNT, &counts, count),
            (
                "choices",
                &a.axes.choices,
                EXPECT_CHOICES,
                &choices,
                choices_value,
            ),
            (
                "routers",
                &a.axes.routers,
                EXPECT_ROUTERS,
                &routers,
                routers_value,
            ),
        ];
        for (flag, values, expected, single, check) in int_axes {
            let mut ranges = Vec::new();
            let parsed = flag_items(flag, values, expected, |s| {
                let v = int_items(s, single, check, expected)?;
                if is_range(s) {
                    ranges.push((s.trim().to_string(), v.clone()));
                }
                Ok(v)
            })?;
            let Some(v) = parsed else { continue };
            self.replace_ranges(&[flag]);
            for (text, values) in ranges {
                self.note_range(flag, &text, &values);
            }
            match flag {
                "servers" => {
                    // The fleet is one axis: --servers replaces the spec's speeds.
                    self.speeds = None;
                    self.servers = Some(v)
                }
                "workers" => self.workers = Some(v),
                "choices" => self.choices = Some(v),
                _ => self.routers = Some(v),
            }
        }
        if !a.axes.speeds.is_empty() {
            if !a.axes.servers.is_empty() {
                return Err(Loc::Flag("speeds").err(
                    "given together with --servers; expected one of them (a fleet sets its \
                     servers)",
                ));
            }
            let mut out = Vec::new();
            for value in &a.axes.speeds {
                for item in value.split(';') {
                    out.push(Fleet::parse(item).map_err(|m| Loc::Flag("speeds").err(m))?);
                }
            }
            self.servers = None;
            self.speeds = Some(out);
        }
        let dist_expected = "distribution strings such as exp or weibull(shape=0.46,median=0.05)";
        for (flag, role, values) in [
            ("arrival", Role::Arrival, &a.axes.arrival),
            ("service", Role::Service, &a.axes.service),
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
        if let Some(items) = split_flag("patience", &a.axes.patience, EXPECT_PATIENCE)? {
            let mut out = Vec::new();
            for s in items {
                out.push(parse_patience(&s, cwd).map_err(|e| Loc::Flag("patience").dist_err(&e))?);
            }
            self.patience = Some(out);
        }
        if let Some(items) = split_flag("capacity", &a.axes.capacity, EXPECT_CAPACITY)? {
            let mut out = Vec::new();
            for s in items {
                out.push(parse_capacity(&s).map_err(|m| Loc::Flag("capacity").err(m))?);
            }
            self.capacity = Some(out);
        }
        let mut ranges = Vec::new();
        let mut loads = |flag: &'static str, values: &[String], expected: &str| {
            flag_items(flag, values, expected, |s| {
                let v = match expand_real(s)? {
                    Some(_) => {
                        let v = real_range(s, expected)?;
                        ranges.push((flag, s.trim().to_string(), v.clone()));
                        v
                    }
                    None => vec![parse_positive(s, expected)?],
                };
                Ok(v.into_iter()
                    .map(|x| {
                        if flag == "lambda" {
                            Load::Lambda(x)
                        } else {
                            Load::Rho(x)
                        }
                    })
                    .collect())
            })
        };
        let lambda = loads("lambda", &a.axes.lambda, EXPECT_RATE)?;
        let rho = loads("rho", &a.axes.rho, EXPECT_RHO)?;
        match (lambda, rho) {
            (Some(_), Some(_)) => {
                return Err(Loc::Flag("rho").err(
                    "given together with --lambda; expected exactly one of --lambda or --rho",
                ))
            }
            (Some(v), None) | (None, Some(v)) => {
                self.replace_ranges(&["lambda", "rho"]);
                for (flag, text, values) in ranges {
                    self.note_range(flag, &text, &values);
                }
                self.load = Some(v)
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// Fills defaults and insists on the axes that have none, which are
    /// reported at `at` (`spec.toml:1: [sweep]`); the default arrival law
    /// resolves in `base_dir`.
    pub(super) fn finish(
        self,
        at: &str,
        base_dir: &Path,
        run: RunSettings,
        source: String,
    ) -> Result<Spec, SpecError> {
        let missing = |key: &str, what: &str| {
            SpecError(format!(
                "{at} {key}: missing; expected {what} (or pass --{key})"
            ))
        };
        let routing = self
            .routing
            .ok_or_else(|| missing("routing", &format!("a list of {}", Routing::names())))?;
        // A fleet sets its servers: the two axes are one.
        let (servers, speeds) = match (self.servers, self.speeds) {
            (Some(_), Some(_)) => {
                return Err(SpecError(format!(
                    "{at} speeds: given together with servers; expected one of them (a fleet \
                     such as \"40x1,10x2\" sets its servers)"
                )))
            }
            (None, Some(fleets)) => (fleets.iter().map(Fleet::servers).collect(), fleets),
            (servers, None) => (
                servers.ok_or_else(|| missing("servers", "a list of integers >= 1"))?,
                Vec::new(),
            ),
        };
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
            None => vec![Dist::parse("exp", Role::Arrival, base_dir)
                .map_err(|e| SpecError(format!("{at} arrival: default 'exp': {e}")))?],
        };
        Ok(Spec {
            routing,
            choices: self.choices.unwrap_or_else(|| vec![DEFAULT_CHOICES]),
            routers: self.routers.unwrap_or_else(|| vec![DEFAULT_ROUTERS]),
            servers,
            speeds,
            workers: self.workers.unwrap_or_else(|| vec![1]),
            arrival,
            load,
            service,
            patience: self.patience.unwrap_or_else(|| vec![None]),
            capacity: self.capacity.unwrap_or_else(|| vec![None]),
            run,
            source,
            ranges: super::Ranges(self.ranges),
        })
    }

    /// Remembers that `axis` was given the range `text`, worth `values`.
    fn note_range<T: ToString>(&mut self, axis: &str, text: &str, values: &[T]) {
        self.ranges.push(Expansion {
            axis: axis.to_string(),
            text: text.to_string(),
            values: values.iter().map(T::to_string).collect(),
        });
    }

    /// Forgets the ranges of axes a flag replaces.
    fn replace_ranges(&mut self, axes: &[&str]) {
        self.ranges.retain(|e| !axes.contains(&e.axis.as_str()));
    }
}

const EXPECT_PATIENCE: &str = "distribution strings such as \"det(value=30)\" or \
                               \"exp(mean=60)\", or \"none\"";

/// A `patience` element: "none" (no patience), or a law, read as service
/// times are (its times in the spec's unit).
fn parse_patience(text: &str, base_dir: &Path) -> Result<Option<Dist>, String> {
    if text.trim() == "none" {
        return Ok(None);
    }
    // The law is read as a service law, but the message is about patience:
    // "--patience: det: …", not "--patience: service: det: …" (issue 40).
    Dist::parse(text, Role::Service, base_dir)
        .map(Some)
        .map_err(|e| {
            let e = e.to_string();
            match e.strip_prefix("service: ") {
                Some(rest) => rest.to_string(),
                None => e,
            }
        })
}

const EXPECT_CAPACITY: &str = "integers from 1 to 65535 (requests a dyno, or the central queue, \
                               may hold, waiting and in service), or \"none\"";

/// A `capacity` element written as text: "none" (no limit) or an integer.
fn parse_capacity(text: &str) -> Result<Option<u32>, String> {
    if text.trim() == "none" {
        return Ok(None);
    }
    capacity_value(str_int(text), &quote(text.trim()))
}

/// A capacity K: an integer from 1 to [`MAX_CAPACITY`].
///
/// [`MAX_CAPACITY`]: crate::contract::MAX_CAPACITY
fn capacity_value(int: Option<i128>, shown: &str) -> Result<Option<u32>, String> {
    let max = crate::contract::MAX_CAPACITY;
    match int.and_then(count) {
        Some(k) if k <= max => Ok(Some(k)),
        _ => Err(invalid_count(shown, int, u64::from(max), EXPECT_CAPACITY)),
    }
}

/// A spec file's string element written as a range (`"0.5:0.95:0.05"`).
fn range_text<'a>(v: &'a DeValue<'_>) -> Option<&'a str> {
    match v {
        DeValue::String(s) if is_range(s) => Some(s),
        _ => None,
    }
}

/// The values of a range on an integer axis, each checked by `check`.
fn int_range(
    text: &str,
    check: fn(i128) -> Option<u32>,
    expected: &str,
) -> Result<Vec<u32>, String> {
    int_items(text, |s| Err(invalid(&quote(s), expected)), check, expected)
}

/// The values of a range on a rate axis (lambda, rho), each a finite
/// number > 0.
fn real_range(text: &str, expected: &str) -> Result<Vec<f64>, String> {
    let values = expand_real(text)?.unwrap_or_default();
    match values.iter().find(|&&x| positive(x).is_none()) {
        Some(x) => Err(format!(
            "{} (from the range '{}')",
            invalid(&x.to_string(), expected),
            text.trim()
        )),
        None => Ok(values),
    }
}

fn parse_positive(s: &str, expected: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .and_then(positive)
        .ok_or_else(|| invalid(&quote(s), expected))
}
