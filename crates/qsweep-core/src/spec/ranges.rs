//! Axis ranges: one item of a numeric axis that stands for many values.
//!
//! Two forms, in a spec file (as a string: `rho = ["0.5:0.95:0.05"]`) or a
//! flag (`--rho 0.5:0.95:0.05`), mixed freely with plain values in a list:
//!
//! - `start:stop:step` (or `start:stop`, step 1): start, start + step, …
//!   up to and including `stop` within rounding (a step that lands within
//!   1e-9 steps of `stop` includes it). Each value is rounded to the
//!   decimals of `start` and `step`, so `0.5:0.95:0.05` gives exactly the
//!   numbers `0.5, 0.55, …, 0.95` a user would type (and the spec, its
//!   canonical TOML and its hash are those of the written-out list).
//! - `geom(start,stop,count)`: `count` values spaced evenly on a log scale
//!   from `start` to `stop`, both included (`geom(1,1000,7)`: 1, 3.16, 10,
//!   …, 1000), rounded to 12 significant digits (so a decade lands on the
//!   round number); on integer axes rounded to integers, repeats dropped.
//!
//! What an axis keeps is the expanded list: ranges are a way of writing it.
//! [`Expansion`] remembers how each was written, for the notes a run shows.

use super::values::invalid;

/// Most values one range may expand to (a typo such as `1:1e9` should be
/// refused, not allocated).
pub const MAX_RANGE_VALUES: usize = 100_000;

/// How ranges are written, for messages.
pub const RANGE_FORMS: &str = "start:stop:step (stop included) or geom(start,stop,count)";

/// A range as written and the values it stands for (shown by `notes`).
#[derive(Clone, Debug)]
pub struct Expansion {
    /// The axis (`rho`, `servers`, …).
    pub axis: String,
    /// The range as written.
    pub text: String,
    /// Its values, as the CSV writes them.
    pub values: Vec<String>,
}

impl Expansion {
    /// `rho 0.5:0.95:0.05 = 0.5, 0.55, …, 0.95 (10 values)`.
    pub fn describe(&self) -> String {
        let n = self.values.len();
        let shown = if n <= 20 {
            self.values.join(", ")
        } else {
            format!(
                "{}, …, {}",
                self.values[..10].join(", "),
                self.values[n - 3..].join(", ")
            )
        };
        let count = if n == 1 { "value" } else { "values" };
        format!("{} {} = {shown} ({n} {count})", self.axis, self.text)
    }
}

/// Whether `s` is written as a range (anything else is a plain value).
pub fn is_range(s: &str) -> bool {
    let s = s.trim();
    s.contains(':') || geom_args(s).is_some()
}

/// The inside of `geom(...)`, if `s` has that form.
fn geom_args(s: &str) -> Option<&str> {
    let rest = s.trim().strip_prefix("geom")?.trim_start();
    rest.strip_prefix('(')?.strip_suffix(')')
}

/// `'{text}' is not a valid range: {why}; expected ...`.
fn refuse(text: &str, why: &str) -> String {
    format!("'{text}' is not a valid range: {why}; expected {RANGE_FORMS}")
}

fn number(text: &str, part: &str, what: &str) -> Result<f64, String> {
    part.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| refuse(text, &format!("{what} '{}' is not a number", part.trim())))
}

/// Fewest decimals that print `x` back to the same `f64` (None beyond 17:
/// not a short decimal, e.g. 1/3).
fn decimals(x: f64) -> Option<usize> {
    (0..=17).find(|&d| format!("{x:.d$}").parse::<f64>() == Ok(x))
}

/// `x` rounded to `d` decimals, through its decimal text (so the result is
/// the `f64` of the number a user would type).
fn round_decimals(x: f64, d: usize) -> f64 {
    format!("{x:.d$}").parse().unwrap_or(x)
}

/// `x` rounded to 12 significant digits.
fn round_significant(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// The values of a range on a real-valued axis; `Ok(None)`: `s` is not
/// written as a range.
pub fn expand_real(s: &str) -> Result<Option<Vec<f64>>, String> {
    let text = s.trim();
    if let Some(args) = geom_args(text) {
        return geom(text, args).map(Some);
    }
    if !text.contains(':') {
        return Ok(None);
    }
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return Err(refuse(text, "more than three parts"));
    }
    let start = number(text, parts[0], "start")?;
    let stop = number(text, parts[1], "stop")?;
    let step = match parts.get(2) {
        Some(p) => number(text, p, "step")?,
        None => 1.0,
    };
    if step <= 0.0 {
        return Err(refuse(text, "the step is not > 0"));
    }
    if stop < start {
        return Err(refuse(text, "stop is below start"));
    }
    // Inclusive of `stop` within rounding: (0.95 - 0.5) / 0.05 is
    // 8.999999999999998 in binary floating point.
    let steps = ((stop - start) / step + 1e-9).floor();
    if steps + 1.0 > MAX_RANGE_VALUES as f64 {
        return Err(refuse(
            text,
            &format!("it has more than {MAX_RANGE_VALUES} values"),
        ));
    }
    let d = decimals(start).zip(decimals(step)).map(|(a, b)| a.max(b));
    let values = (0..=steps as usize)
        .map(|i| {
            let x = start + i as f64 * step;
            d.map_or(x, |d| round_decimals(x, d))
        })
        .collect();
    Ok(Some(values))
}

/// `geom(start,stop,count)`.
fn geom(text: &str, args: &str) -> Result<Vec<f64>, String> {
    let parts: Vec<&str> = args.split(',').collect();
    if parts.len() != 3 {
        return Err(refuse(text, "geom takes three numbers"));
    }
    let start = number(text, parts[0], "start")?;
    let stop = number(text, parts[1], "stop")?;
    let count = number(text, parts[2], "count")?;
    if start <= 0.0 {
        return Err(refuse(text, "a log-spaced range needs start > 0"));
    }
    if stop <= start {
        return Err(refuse(text, "stop is not above start"));
    }
    if count.fract() != 0.0 || !(2.0..=MAX_RANGE_VALUES as f64).contains(&count) {
        return Err(refuse(
            text,
            &format!("count is not an integer from 2 to {MAX_RANGE_VALUES}"),
        ));
    }
    let n = count as usize;
    let ratio = (stop / start).ln();
    Ok((0..n)
        .map(|i| match i {
            0 => start,
            _ if i == n - 1 => stop,
            _ => round_significant(start * (ratio * i as f64 / (n - 1) as f64).exp()),
        })
        .collect())
}

/// The values of a range on an integer axis; `Ok(None)`: not a range.
/// `start:stop:step` must be written in integers; `geom` values are rounded
/// to the nearest integer and repeats dropped. Each value is then checked
/// by the axis (`check`, with the axis's own message).
pub fn expand_int(s: &str) -> Result<Option<Vec<i128>>, String> {
    let text = s.trim();
    let Some(values) = expand_real(text)? else {
        return Ok(None);
    };
    let as_int = |x: f64| (x.fract() == 0.0 && x.abs() < 1e30).then_some(x as i128);
    if geom_args(text).is_some() {
        let mut out: Vec<i128> = Vec::with_capacity(values.len());
        for x in values {
            let i = x.round() as i128;
            if out.last() != Some(&i) {
                out.push(i);
            }
        }
        return Ok(Some(out));
    }
    let parts: Vec<&str> = text.split(':').collect();
    for (part, what) in parts.iter().zip(["start", "stop", "step"]) {
        let x = number(text, part, what)?;
        if as_int(x).is_none() {
            return Err(refuse(
                text,
                &format!("{what} '{}' is not an integer", part.trim()),
            ));
        }
    }
    Ok(Some(values.into_iter().filter_map(as_int).collect()))
}

/// Each item of an integer axis: a range's values or one value (`single`).
/// Values are checked by `check`, whose message names the bad value.
pub fn int_items(
    item: &str,
    single: impl Fn(&str) -> Result<u32, String>,
    check: impl Fn(i128) -> Option<u32>,
    expected: &str,
) -> Result<Vec<u32>, String> {
    match expand_int(item)? {
        None => single(item).map(|v| vec![v]),
        Some(values) => values
            .into_iter()
            .map(|i| {
                check(i).ok_or_else(|| {
                    format!(
                        "{} (from the range '{}')",
                        invalid(&i.to_string(), expected),
                        item.trim()
                    )
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(s: &str) -> Vec<f64> {
        expand_real(s).unwrap().unwrap()
    }

    #[test]
    fn linear_ranges_include_stop_and_give_the_typed_numbers() {
        let v = real("0.5:0.95:0.05");
        let typed = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];
        assert_eq!(v, typed);
        assert_eq!(real("1:4"), [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(real("0.1:0.35:0.1"), [0.1, 0.2, 0.3]);
        assert_eq!(real("2:2:1"), [2.0]);
        assert_eq!(real("1e-3:3e-3:1e-3"), [0.001, 0.002, 0.003]);
        assert_eq!(real(" 0.7 : 0.9 : 0.1 "), [0.7, 0.8, 0.9]);
        // Not short decimals: no rounding, the sum itself.
        let third = 1.0 / 3.0;
        assert_eq!(real(&format!("0:1:{third:?}")).len(), 4);
    }

    #[test]
    fn geometric_ranges_hit_their_ends_and_decades() {
        let v = real("geom(1,1000,7)");
        assert_eq!(v.len(), 7);
        assert_eq!((v[0], v[2], v[4], v[6]), (1.0, 10.0, 100.0, 1000.0));
        assert!((v[1] - 10f64.sqrt()).abs() < 1e-11);
        assert_eq!(real("geom(0.5, 0.9, 2)"), [0.5, 0.9]);
        assert_eq!(
            expand_int("geom(1,100,9)").unwrap().unwrap(),
            [1, 2, 3, 6, 10, 18, 32, 56, 100]
        );
        // Rounding to integers may repeat a value: kept once.
        assert_eq!(expand_int("geom(1,3,5)").unwrap().unwrap(), [1, 2, 3]);
    }

    #[test]
    fn plain_values_are_not_ranges() {
        assert_eq!(expand_real("0.5").unwrap(), None);
        assert_eq!(expand_int("51").unwrap(), None);
        assert!(!is_range("many") && is_range("1:2") && is_range("geom(1,2,2)"));
    }

    #[test]
    fn bad_ranges_are_refused_with_the_reason() {
        let err = |s: &str| expand_real(s).unwrap_err();
        assert_eq!(
            err("0.9:0.5:0.1"),
            "'0.9:0.5:0.1' is not a valid range: stop is below start; expected \
             start:stop:step (stop included) or geom(start,stop,count)"
        );
        assert!(err("1:2:0").contains("the step is not > 0"));
        assert!(err("1:2:-1").contains("the step is not > 0"));
        assert!(err("1:x").contains("stop 'x' is not a number"));
        assert!(err("1:2:3:4").contains("more than three parts"));
        assert!(err("1:1e9:1").contains("more than 100000 values"));
        assert!(err("geom(0,10,3)").contains("start > 0"));
        assert!(err("geom(1,10,1)").contains("count is not an integer from 2"));
        assert!(err("geom(1,10,2.5)").contains("count is not an integer"));
        assert!(err("geom(10,1,3)").contains("stop is not above start"));
        assert!(err("geom(1,10)").contains("three numbers"));
        assert!(expand_int("1:2:0.5")
            .unwrap_err()
            .contains("step '0.5' is not an integer"));
    }
}
