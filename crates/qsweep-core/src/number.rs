//! How every number is written into a CSV field, a table cell or a
//! message: one function, so the results CSV, the terminal summary and the
//! horizon notes print the same digits. At the bottom of the crate (it
//! imports nothing) so that `output` and `horizon`, which both print
//! numbers, need not import each other for it.

/// Numbers with 7 significant digits, plain decimals where readable.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            String::new()
        } else {
            format!("{x}")
        };
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let mag = x.abs().log10().floor() as i32;
    if (-5..=9).contains(&mag) {
        let decimals = (6 - mag).max(0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{x:.6e}")
    }
}
