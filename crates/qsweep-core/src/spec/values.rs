//! Reading single values, and saying where a bad one came from.
//!
//! A spec value arrives either as a TOML value in a spec file or as the text
//! of a flag. Both kinds are parsed with the same rules (integral floats such
//! as `2e5` count as integers, for example) and refused with the same
//! one-line shape: `spec.toml:3: [sweep] servers: 0 is not a valid value;
//! expected integers >= 1`, or `--servers: '0' is not a valid value; ...`.
//! [`Loc`] builds that prefix; the helpers here are shared by the `[sweep]`
//! axes and the `[run]` settings. [`toml_str`] and [`toml_float`] go the
//! other way, for the canonical TOML of [`super::Spec::to_toml`].

use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::SpecError;

/// Where a value came from, for error messages.
#[derive(Clone, Debug)]
pub(super) enum Loc {
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
    pub(super) fn err(&self, problem: impl std::fmt::Display) -> SpecError {
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
    pub(super) fn dist_err(&self, msg: &str) -> SpecError {
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

/// The spec file being read.
pub(super) struct FileCtx<'a> {
    pub(super) text: &'a str,
    pub(super) source: &'a str,
    /// Where relative `file=` paths of distributions resolve.
    pub(super) base_dir: &'a Path,
}

impl FileCtx<'_> {
    /// The 1-based line a byte span starts on.
    pub(super) fn line(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    pub(super) fn loc(&self, span: Range<usize>, table: &'static str, key: &str) -> Loc {
        Loc::File {
            source: self.source.to_string(),
            line: self.line(span),
            table,
            key: key.to_string(),
        }
    }

    /// An error not tied to a `[table] key`.
    pub(super) fn err(&self, span: Range<usize>, msg: impl std::fmt::Display) -> SpecError {
        SpecError(format!("{}:{}: {msg}", self.source, self.line(span)))
    }
}

pub(super) type Entry<'a, 'i> = (
    &'a Spanned<std::borrow::Cow<'i, str>>,
    &'a Spanned<DeValue<'i>>,
);

/// A table's entries in the order they appear in the file.
pub(super) fn entries_in_order<'a, 'i>(table: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// A TOML value as it would be written, for error messages.
pub(super) fn show(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => toml_str(s),
        DeValue::Integer(i) => i.to_string(),
        DeValue::Float(f) => f.as_str().to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        // The items, so that `slo = [1, 1]` and `slo = []` say which array
        // is refused (issue 40: every array was "an array").
        DeValue::Array(items) if items.len() <= 8 => format!(
            "[{}]",
            items
                .iter()
                .map(|i| show(i.get_ref()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        DeValue::Array(items) => format!("an array of {} items", items.len()),
        DeValue::Table(_) => "a table".to_string(),
    }
}

/// A flag's text as messages show it: `'text'`.
pub(super) fn quote(s: &str) -> String {
    format!("'{s}'")
}

/// `{shown} is not a valid value; expected {expected}`.
pub(super) fn invalid(shown: &str, expected: &str) -> String {
    format!("{shown} is not a valid value; expected {expected}")
}

/// [`invalid`], unless the value is an integer above `max`: then it says
/// the value is too large and what the most is (a count over `u32::MAX` is
/// the right kind of value, just too big).
pub(super) fn invalid_count(shown: &str, int: Option<i128>, max: u64, expected: &str) -> String {
    match int {
        Some(i) if i > i128::from(max) => {
            format!("{shown} is too large; expected at most {max}")
        }
        _ => invalid(shown, expected),
    }
}

/// Integer of a TOML value; integral floats (`2e5`) count.
pub(super) fn de_int(v: &DeValue<'_>) -> Option<i128> {
    match v {
        DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
        DeValue::Float(f) => float_int(f.as_str().parse().ok()?),
        _ => None,
    }
}

/// Number of a TOML value, integer or float.
pub(super) fn de_float(v: &DeValue<'_>) -> Option<f64> {
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
pub(super) fn str_int(s: &str) -> Option<i128> {
    let s = s.trim();
    s.parse::<i128>()
        .ok()
        .or_else(|| float_int(s.parse().ok()?))
}

/// A count: an integer >= 1 that fits a `u32`.
pub(super) fn count(i: i128) -> Option<u32> {
    u32::try_from(i).ok().filter(|&n| n >= 1)
}

/// A finite number > 0.
pub(super) fn positive(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

/// `s` unchanged, unless it is empty or only whitespace.
pub(super) fn nonempty(s: &str) -> Option<String> {
    (!s.trim().is_empty()).then(|| s.to_string())
}

/// A TOML string literal.
pub(super) fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Shortest text that parses back to the same `f64`, always a TOML float.
pub(super) fn toml_float(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) || !x.is_finite() {
        s
    } else {
        format!("{s}.0")
    }
}
