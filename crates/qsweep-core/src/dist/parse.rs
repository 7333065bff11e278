//! Text to law: `name(key=value,...)` into a [`Dist`], and comma-separated
//! lists of laws.
//!
//! Why this module exists: the command line and spec files must reject a
//! misspelt or contradictory law with one precise line rather than guess, so
//! every key check and every parse error message lives here, next to the
//! resolution of the user's keys (`median=`, `rate=`, `scv=`, ...) into the
//! absolute parameters of `Shape`.

use std::fmt;
use std::path::Path;

use super::empirical::{load_empirical, load_trace};
use super::special::gamma_fn;
use super::{Dist, DistError, LawName, Role, Shape, Smoothing, LAW_NAMES};

/// Keys that fix a law's scale; arrival laws may not use them.
const SCALE_KEYS: [&str; 5] = ["mean", "rate", "value", "scale", "median"];

impl Dist {
    /// Parse `name(key=value,...)` or `name` for `role`. Relative
    /// `empirical(file=...)` paths resolve against `base_dir` (the spec
    /// file's directory, or the current directory for command-line flags).
    ///
    /// An arrival law comes back with mean 1; see [`Dist::with_mean`].
    pub fn parse(text: &str, role: Role, base_dir: &Path) -> Result<Dist, DistError> {
        let text = text.trim();
        let fail = |msg: String| DistError(format!("{role}: {msg}"));
        if text.is_empty() {
            return Err(fail(
                "empty distribution; expected a law such as exp(mean=1)".into(),
            ));
        }
        let (name, inner) = match text.find('(') {
            Some(open) => {
                let rest = &text[open + 1..];
                let Some(inner) = rest.strip_suffix(')') else {
                    let what = if rest.contains(')') {
                        "has text after ')'"
                    } else {
                        "is missing ')'"
                    };
                    return Err(fail(format!(
                        "'{text}' {what}; expected name(key=value,...)"
                    )));
                };
                if inner.contains('(') || inner.contains(')') {
                    return Err(fail(format!(
                        "'{text}' has unbalanced parentheses; expected name(key=value,...)"
                    )));
                }
                (text[..open].trim(), Some(inner))
            }
            None if text.contains(')') => {
                return Err(fail(format!(
                    "'{text}' has unbalanced parentheses; expected name(key=value,...)"
                )));
            }
            None => (text, None),
        };
        let Some(law) = LawName::from_name(name) else {
            return Err(fail(format!(
                "unknown law '{name}'; expected one of {}",
                LAW_NAMES.join(", ")
            )));
        };
        let args = Args::parse(role, law, inner.unwrap_or(""))?;
        let (shape, lo, hi) = args.resolve(base_dir)?;
        let data_file = matches!(shape, Shape::Empirical { .. })
            .then(|| {
                args.raw("file")
                    .map(|f| super::empirical::resolve(f, base_dir))
            })
            .flatten();
        let mut dist = Dist {
            text: text.to_string(),
            role,
            shape,
            lo,
            hi,
            data_file,
        };
        if role == Role::Arrival && law.is_scaled_by_support_or_data() {
            // Laws scaled by their support or data: normalize like the others.
            dist = dist.with_mean(1.0);
        }
        let (m1, m2) = (dist.mean(), dist.second_moment());
        if !(m1 > 0.0 && (m1 as f32).is_finite() && (m1 as f32) > 0.0 && m2.is_finite()) {
            return Err(args.err(format!(
                "the law's moments (mean {m1:e}, second moment {m2:e}) are outside the \
                 range the f32 engines support; expected parameters of moderate size"
            )));
        }
        dist.check_limits().map_err(|msg| args.err(msg))?;
        Ok(dist)
    }
}

/// Key=value arguments of one law being parsed.
struct Args<'a> {
    role: Role,
    law: LawName,
    items: Vec<(&'a str, &'a str)>,
}

impl<'a> Args<'a> {
    /// Split `inner` (between the parentheses) into checked key=value pairs.
    fn parse(role: Role, law: LawName, inner: &'a str) -> Result<Self, DistError> {
        let mut args = Args {
            role,
            law,
            items: Vec::new(),
        };
        if inner.trim().is_empty() {
            return Ok(args);
        }
        let allowed: Vec<&str> = law
            .keys()
            .iter()
            .copied()
            .filter(|k| role == Role::Service || args.arrival_allows(k))
            .collect();
        if role == Role::Service && law.is_arrival_only() {
            return Err(args.err(format!(
                "{law} is an arrival process, not a service law; expected it as the \
                 arrival law (e.g. --arrival '{}')",
                law.arrival_example()
            )));
        }
        for item in args.items_of(inner)? {
            let item = item.trim();
            if item.is_empty() {
                return Err(args.err("empty item; expected key=value pairs separated by commas"));
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(args.err(format!("'{item}' is not key=value; expected e.g. mean=1")));
            };
            let (key, value) = (key.trim(), value.trim());
            if value.is_empty() {
                return Err(args.err(format!("{key}= has no value; expected {key}=<value>")));
            }
            if !law.keys().contains(&key) {
                let expected = if allowed.is_empty() {
                    format!("no keys (write just {law})")
                } else {
                    allowed.join(", ")
                };
                return Err(args.err(format!("unknown key '{key}'; expected {expected}")));
            }
            if args.items.iter().any(|(k, _)| *k == key) {
                return Err(args.err(format!("duplicate key '{key}'; expected each key once")));
            }
            if role == Role::Arrival && !args.arrival_allows(key) {
                if key == "min" || key == "max" {
                    return Err(DistError(
                        "arrival: min/max clamps are not supported for arrival laws \
                         (the arrival mean is set by lambda or rho)"
                            .to_string(),
                    ));
                }
                return Err(args.err(format!(
                    "{key}= is not allowed for arrival laws (the arrival mean is set by \
                     lambda or rho); expected the shape only, e.g. {}",
                    law.arrival_example()
                )));
            }
            args.items.push((key, value));
        }
        Ok(args)
    }

    /// `inner` cut at the commas outside brackets, so that a list value
    /// (`rates=[1,9]`) stays one item.
    fn items_of<'b>(&self, inner: &'b str) -> Result<Vec<&'b str>, DistError> {
        let mut items = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, ch) in inner.char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth = depth.checked_sub(1).ok_or_else(|| {
                        self.err("unbalanced ']'; expected lists written key=[a,b]")
                    })?;
                }
                ',' if depth == 0 => {
                    items.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if depth != 0 {
            return Err(self.err("unbalanced '['; expected lists written key=[a,b]"));
        }
        items.push(&inner[start..]);
        Ok(items)
    }

    /// A list value `key=[a,b]` of two finite numbers, each `> 0` (or `>=
    /// 0` when `allow_zero`): a two-phase law's per-phase values.
    fn pair(&self, key: &str, allow_zero: bool) -> Result<[f64; 2], DistError> {
        let raw = self
            .raw(key)
            .ok_or_else(|| self.needs(&format!("{key}=[a,b]")))?;
        let sign = if allow_zero {
            "nonnegative"
        } else {
            "positive"
        };
        let Some(list) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
            return Err(self.err(format!(
                "{key} must be a list [a,b] of {sign} numbers, one per phase, got '{raw}'"
            )));
        };
        let values: Vec<&str> = list.split(',').map(str::trim).collect();
        if values.len() != 2 {
            return Err(self.err(format!(
                "{key} has {} values; expected 2 ({key}=[a,b]: two phases, the only \
                 number of phases supported)",
                values.len()
            )));
        }
        let mut out = [0.0; 2];
        for (o, v) in out.iter_mut().zip(&values) {
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() && (x > 0.0 || (allow_zero && x == 0.0)) => *o = x,
                _ => {
                    return Err(self.err(format!(
                        "{key} must hold {sign} finite numbers, got '{v}' in '{raw}'"
                    )))
                }
            }
        }
        Ok(out)
    }

    fn arrival_allows(&self, key: &str) -> bool {
        if SCALE_KEYS.contains(&key) {
            return false;
        }
        !matches!(key, "min" | "max") || self.law.min_max_is_support()
    }

    fn err(&self, msg: impl fmt::Display) -> DistError {
        DistError(format!("{}: {}: {}", self.role, self.law, msg))
    }

    fn needs(&self, what: &str) -> DistError {
        DistError(format!("{}: {} needs {}", self.role, self.law, what))
    }

    fn raw(&self, key: &str) -> Option<&'a str> {
        self.items.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// A number `> 0` (or `>= 0` when `allow_zero`), finite.
    fn number(&self, key: &str, allow_zero: bool) -> Result<Option<f64>, DistError> {
        let Some(raw) = self.raw(key) else {
            return Ok(None);
        };
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && (v > 0.0 || (allow_zero && v == 0.0)) => Ok(Some(v)),
            _ => Err(self.err(format!(
                "{key} must be a {} finite number, got '{raw}'",
                if allow_zero {
                    "nonnegative"
                } else {
                    "positive"
                }
            ))),
        }
    }

    fn positive(&self, key: &str) -> Result<Option<f64>, DistError> {
        self.number(key, false)
    }

    fn required(&self, key: &str) -> Result<f64, DistError> {
        self.positive(key)?
            .ok_or_else(|| self.needs(&format!("{key}=")))
    }

    /// At most one of `keys` (positive numbers); error when several are given.
    fn one_of(&self, keys: &[&'static str]) -> Result<Option<(&'static str, f64)>, DistError> {
        let given: Vec<&'static str> = keys
            .iter()
            .copied()
            .filter(|k| self.raw(k).is_some())
            .collect();
        if given.len() > 1 {
            return Err(self.err(format!(
                "{}= and {}= contradict; expected only one of {}",
                given[0],
                given[1],
                or_list(keys)
            )));
        }
        match given.first() {
            Some(&k) => Ok(Some((k, self.positive(k)?.expect("key is present")))),
            None => Ok(None),
        }
    }

    /// The scale key of a parametric law: required for service laws; for
    /// arrival laws (which may not give one) a unit mean.
    fn scale(&self, keys: &[&'static str]) -> Result<(&'static str, f64), DistError> {
        match self.one_of(keys)? {
            Some(kv) => Ok(kv),
            None if self.role == Role::Arrival => Ok(("mean", 1.0)),
            None => Err(self.needs(&or_list(keys))),
        }
    }

    /// `(shape, lo, hi)` from the checked keys.
    fn resolve(&self, base_dir: &Path) -> Result<(Shape, f64, f64), DistError> {
        let shape = match self.law {
            LawName::Exp => {
                let (key, v) = self.scale(&["mean", "rate"])?;
                Shape::Exp {
                    mean: if key == "rate" { 1.0 / v } else { v },
                }
            }
            LawName::Det => Shape::Det {
                value: self.scale(&["value", "mean"])?.1,
            },
            LawName::Erlang => {
                let k = self.integer("k")?;
                let (key, v) = self.scale(&["mean", "rate"])?;
                let mean = if key == "rate" { 1.0 / v } else { v };
                Shape::Erlang {
                    k,
                    phase_mean: mean / f64::from(k),
                }
            }
            LawName::Gamma => {
                let shape = self.required("shape")?;
                let (key, v) = self.scale(&["mean", "scale"])?;
                Shape::Gamma {
                    shape,
                    scale: if key == "scale" { v } else { v / shape },
                }
            }
            LawName::HyperExp => {
                let scv = self.required("scv")?;
                if scv <= 1.0 {
                    return Err(self.err(format!(
                        "scv must be > 1, got {scv}; expected scv > 1 (use exp for scv = 1, \
                         erlang or gamma below 1)"
                    )));
                }
                let (_, mean) = self.scale(&["mean"])?;
                // Balanced means (Whitt 1982, "Approximating a point process by a
                // renewal process, I: two basic methods", Oper. Res. 30(1)): p1 = (1 + r)/2 with
                // r = sqrt((scv-1)/(scv+1)), mean_i = mean / (2 p_i). The small
                // probability p2 = (1 - r)/2 = 1/((scv+1)(1+r)) is formed without
                // cancellation and kept beside p1 = 1 - p2 (which is 1 in f64
                // from scv = 1e16 on).
                let r = ((scv - 1.0) / (scv + 1.0)).sqrt();
                let p2 = 1.0 / ((scv + 1.0) * (1.0 + r));
                let p1 = 1.0 - p2;
                Shape::HyperExp {
                    p1,
                    p2,
                    mean1: mean / (2.0 * p1),
                    mean2: mean / (2.0 * p2),
                }
            }
            LawName::LogNormal => {
                let sigma = match self.one_of(&["scv", "sigma"])? {
                    // scv = e^(sigma^2) - 1 (JKB vol. 1, ch. 14).
                    Some(("scv", scv)) => scv.ln_1p().sqrt(),
                    Some((_, sigma)) => sigma,
                    None => return Err(self.needs("scv= or sigma=")),
                };
                let mu = match self.scale(&["mean", "median"])? {
                    ("median", median) => median.ln(),
                    // mean = e^(mu + sigma^2/2).
                    (_, mean) => mean.ln() - sigma * sigma / 2.0,
                };
                Shape::LogNormal { mu, sigma }
            }
            LawName::Weibull => {
                let k = self.required("shape")?;
                let scale = match self.scale(&["scale", "mean", "median"])? {
                    ("scale", s) => s,
                    // median = lambda (ln 2)^(1/k) (JKB vol. 1, ch. 21).
                    ("median", m) => m / std::f64::consts::LN_2.powf(1.0 / k),
                    // mean = lambda Gamma(1 + 1/k).
                    (_, m) => m / gamma_fn(1.0 + 1.0 / k),
                };
                Shape::Weibull { scale, shape: k }
            }
            LawName::Pareto => {
                let alpha = self.required("alpha")?;
                let (lo, hi) = self.min_max(false)?;
                Shape::Pareto { alpha, lo, hi }
            }
            LawName::Uniform => {
                let (min, max) = self.min_max(true)?;
                Shape::Uniform {
                    min,
                    width: max - min,
                }
            }
            LawName::Empirical => {
                let file = self.raw("file").ok_or_else(|| self.needs("file="))?;
                let smooth = self.smoothing()?;
                let values = load_empirical(self.role, file, base_dir)?;
                Shape::Empirical {
                    prefix: super::tails::prefix_sums(&values),
                    values: values.into(),
                    scale: 1.0,
                    smooth,
                    replay: None,
                }
            }
            LawName::Trace => {
                let file = self.raw("file").ok_or_else(|| self.needs("file="))?;
                let gaps = load_trace(file, base_dir)?;
                let mut values = gaps.clone();
                values.sort_by(f64::total_cmp);
                Shape::Empirical {
                    prefix: super::tails::prefix_sums(&values),
                    values: values.into(),
                    scale: 1.0,
                    smooth: Smoothing::None,
                    replay: Some(gaps.into()),
                }
            }
            LawName::Mmpp => {
                let rates = self.pair("rates", true)?;
                let switch = self.pair("switch", false)?;
                if rates[0] + rates[1] <= 0.0 {
                    return Err(self.err(
                        "rates=[0,0] never emits an arrival; expected at least one positive rate",
                    ));
                }
                let m = super::Mmpp { rates, switch };
                let cycle = m.cycle_arrival();
                if cycle < crate::contract::MMPP_MIN_CYCLE_ARRIVAL {
                    return Err(self.err(format!(
                        "a cycle through both phases brings an arrival with probability \
                         {cycle:.3e}, below the 2^-10 the sampler's loop allows (the phases \
                         switch much faster than arrivals come: the stream is nearly Poisson); \
                         expected switch rates at most a few hundred times the rates"
                    )));
                }
                Shape::Mmpp(m)
            }
        };
        if self.law.min_max_is_support() {
            return Ok((shape, 0.0, f64::INFINITY));
        }
        let lo = self.number("min", true)?.unwrap_or(0.0);
        let hi = self.positive("max")?.unwrap_or(f64::INFINITY);
        if hi <= lo {
            return Err(self.max_le_min());
        }
        Ok((shape, lo, hi))
    }

    /// Both `min=` and `max=` (the support of pareto/uniform), `max > min`.
    fn min_max(&self, allow_zero_min: bool) -> Result<(f64, f64), DistError> {
        let lo = self.number("min", allow_zero_min)?;
        let hi = self.positive("max")?;
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(self.needs("min= and max="));
        };
        if hi <= lo {
            return Err(self.max_le_min());
        }
        Ok((lo, hi))
    }

    fn max_le_min(&self) -> DistError {
        self.err(format!(
            "max={} is not greater than min={}; expected max > min",
            self.raw("max").unwrap_or("?"),
            self.raw("min").unwrap_or("0")
        ))
    }

    /// `smooth=` of an empirical law: `none` (resampling, the default) or
    /// `linear`.
    fn smoothing(&self) -> Result<Smoothing, DistError> {
        const ALL: [Smoothing; 2] = [Smoothing::None, Smoothing::Linear];
        let Some(raw) = self.raw("smooth") else {
            return Ok(Smoothing::None);
        };
        ALL.into_iter().find(|s| s.as_str() == raw).ok_or_else(|| {
            self.err(format!(
                "smooth must be none (resample the values, the default) or linear \
                 (interpolate between the sorted values), got '{raw}'"
            ))
        })
    }

    fn integer(&self, key: &str) -> Result<u32, DistError> {
        let raw = self
            .raw(key)
            .ok_or_else(|| self.needs(&format!("{key}=")))?;
        match raw.parse::<u32>() {
            Ok(k) if k >= 1 => Ok(k),
            _ => Err(self.err(format!("{key} must be an integer >= 1, got '{raw}'"))),
        }
    }
}

/// "a=", "a= or b=", "a=, b= or c=".
fn or_list(keys: &[&str]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| format!("{k}=")).collect();
    match keys.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// Split a comma-separated list where commas inside parentheses belong to the item:
/// `"exp(mean=1),weibull(shape=0.5,mean=2)"` -> `["exp(mean=1)", "weibull(shape=0.5,mean=2)"]`.
/// Items are trimmed. Errors on unbalanced parentheses or empty items.
pub fn split_list(text: &str) -> Result<Vec<String>, String> {
    if text.trim().is_empty() {
        return Err("empty list; expected one or more comma-separated items".into());
    }
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    let push = |current: &mut String, items: &mut Vec<String>| {
        let item = current.trim().to_string();
        current.clear();
        if item.is_empty() {
            return Err(format!(
                "item {} of '{text}' is empty; expected comma-separated items such as exp(mean=1),det(value=2)",
                items.len() + 1
            ));
        }
        items.push(item);
        Ok(())
    };
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    format!("unbalanced ')' in '{text}'; expected matching parentheses")
                })?;
            }
            ',' if depth == 0 => {
                push(&mut current, &mut items)?;
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    if depth != 0 {
        return Err(format!(
            "unbalanced '(' in '{text}'; expected matching parentheses"
        ));
    }
    push(&mut current, &mut items)?;
    Ok(items)
}
