//! JSON: an array of objects, one per row, keys in column order, values
//! typed (numbers as numbers, `true`/`false` as booleans, text as strings,
//! empty fields and non-finite numbers as null).

use std::io::Write;

use anyhow::Result;

use super::{Kind, Table};

/// The JSON number of a field, or `null` where JSON has none (`inf`, `NaN`).
/// Finite numbers keep the CSV's digits (already the shortest text for the
/// precision written), so JSON and CSV read back to the same `f64`.
fn number(v: &str) -> String {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => {
            if is_json_number(v) {
                v.to_string()
            } else {
                // E.g. "1e5" is fine, but "+1", ".5" or "5." are not JSON.
                serde_json::Number::from_f64(x).map_or("null".into(), |n| n.to_string())
            }
        }
        _ => "null".to_string(),
    }
}

/// The JSON number grammar (RFC 8259 §6).
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(c) if c.is_ascii_digit() => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn value(v: &str, kind: Kind) -> String {
    if v.is_empty() {
        return "null".into();
    }
    match kind {
        Kind::Int | Kind::UInt | Kind::Float => number(v),
        Kind::Bool => v.to_string(),
        Kind::Text => serde_json::Value::String(v.to_string()).to_string(),
    }
}

pub(super) fn write(table: &Table, kinds: &[Kind], w: &mut dyn Write) -> Result<()> {
    let keys: Vec<String> = table
        .header
        .iter()
        .map(|h| serde_json::Value::String(h.clone()).to_string())
        .collect();
    writeln!(w, "[")?;
    for (n, row) in table.rows.iter().enumerate() {
        let fields: Vec<String> = row
            .iter()
            .zip(&keys)
            .zip(kinds)
            .map(|((v, k), &kind)| format!("{k}: {}", value(v, kind)))
            .collect();
        let comma = if n + 1 < table.rows.len() { "," } else { "" };
        writeln!(w, "  {{{}}}{comma}", fields.join(", "))?;
    }
    writeln!(w, "]")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_json_grammar() {
        for ok in ["0", "-1", "16.66667", "2.500000e-9", "1E5", "0.5e+3"] {
            assert!(is_json_number(ok), "{ok}");
            assert_eq!(number(ok), ok);
        }
        for bad in ["01", ".5", "5.", "+1", "1e", "inf", "NaN", ""] {
            assert!(!is_json_number(bad), "{bad}");
        }
        assert_eq!(number("inf"), "null");
        assert_eq!(number("NaN"), "null");
        assert_eq!(number("+1"), "1.0");
        assert_eq!(value("", Kind::Float), "null");
        assert_eq!(value("a\"b", Kind::Text), "\"a\\\"b\"");
    }
}
