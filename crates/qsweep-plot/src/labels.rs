//! Axis titles: the human name (and unit) of each CSV column.
//!
//! Why this module exists: CSV headers are identifiers (`p99_wait`, `rho`); a
//! figure's axes say what they measure and in which unit.  The CSV carries no time
//! unit, so waits are labelled "(time units)" unless `--time-unit` names one.

/// Human axis label for a CSV column, with the unit where one is known.
pub(super) fn axis_label(col: &str, time_unit: Option<&str>) -> String {
    let tu = time_unit.unwrap_or("time units");
    match col {
        "lambda" => match time_unit {
            Some(u) => format!("arrival rate λ (1/{u})"),
            None => "arrival rate λ (per time unit)".to_string(),
        },
        c => match quantity(c) {
            Some((what, true)) => format!("{what} ({tu})"),
            Some((what, false)) => what,
            None => c.to_string(),
        },
    }
}

/// What a column measures in words, and whether it is a time: `p99_wait`
/// is ("p99 wait", true), `q0.9999_wait` ("p99.99 wait", true),
/// `mean_wait_ci95` ("95% CI of mean wait", true). `None` for columns it
/// does not know (shown by their name).
fn quantity(col: &str) -> Option<(String, bool)> {
    let time = |w: &str| Some((w.to_string(), true));
    let plain = |w: &str| Some((w.to_string(), false));
    match col {
        "servers" => return plain("servers"),
        "workers" => return plain("workers per server"),
        "rho" => return plain("utilisation ρ"),
        "service_mean" => return time("mean service time"),
        "service_scv" => return plain("service-time SCV c²"),
        "choices" => return plain("choices d"),
        "routers" => return plain("routers"),
        "reps" => return plain("replications"),
        "customers" => return plain("customers per replication"),
        "warmup" => return plain("warm-up customers per replication"),
        "warmup_truncation" => return plain("MSER-5 truncation (customers)"),
        "mean_wait" => return time("mean wait"),
        "max_wait" => return time("max wait"),
        "p_wait" => return plain("P(wait > 0)"),
        "mean_sojourn" => return time("mean sojourn time"),
        "seconds" => return plain("wall-clock time (s)"),
        "customers_per_s" => return plain("throughput (customers/s)"),
        "waited" => return plain("customers who waited"),
        "max_in_system" => return plain("most requests in the system"),
        "bin_upper" => return time("wait t"),
        "bin_lower" => return time("bin's lower edge"),
        "ccdf" => return plain("P(wait > t)"),
        "count" => return plain("customers in the bin"),
        "point" => return plain("grid point"),
        _ => {}
    }
    for (prefix, words) in [
        ("analytic_", "analytic "),
        ("rel_err_", "relative error of "),
    ] {
        if let Some(rest) = col.strip_prefix(prefix) {
            let (what, is_time) = quantity(rest)?;
            return Some((format!("{words}{what}"), is_time && prefix == "analytic_"));
        }
    }
    if let Some(rest) = col.strip_prefix("z_") {
        return quantity(rest).map(|(w, _)| (format!("z-score of {w}"), false));
    }
    for (suffix, words) in [("_ci95", "95% CI of "), ("_upper95", "95% upper bound of ")] {
        if let Some(rest) = col.strip_suffix(suffix) {
            return quantity(rest).map(|(w, t)| (format!("{words}{w}"), t));
        }
    }
    for (suffix, noun) in [("_wait", "wait"), ("_sojourn", "sojourn time")] {
        if let Some(stem) = col.strip_suffix(suffix) {
            if let Some(p) = percentile_name(stem) {
                return Some((format!("{p} {noun}"), true));
            }
            return Some((col.replace('_', " "), true));
        }
    }
    None
}

/// `p50` → "median", `p99` → "p99", `p999` → "p99.9", `q0.9999` →
/// "p99.99", `q0.5` → "median"; `None` for anything else.
fn percentile_name(stem: &str) -> Option<String> {
    let percent = if let Some(d) = stem.strip_prefix('p') {
        if d.is_empty() || !d.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        // p50, p99: percent; p999, p9999: 99.9, 99.99.
        if d.len() <= 2 {
            d.to_string()
        } else {
            format!("{}.{}", &d[..2], &d[2..])
        }
    } else if let Some(q) = stem.strip_prefix('q') {
        let v: f64 = q.parse().ok().filter(|v: &f64| (0.0..=1.0).contains(v))?;
        let s = format!("{:.6}", v * 100.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        return None;
    };
    Some(if percent == "50" {
        "median".to_string()
    } else {
        format!("p{percent}")
    })
}

/// Legend name of a routing policy as written in the CSV's `routing` column:
/// the policy names of the queueing literature (JSQ: join the shortest queue,
/// JIQ: join the idle queue, LWL: least work left), words for the others.
/// Unknown names are shown as they are.
pub(super) fn routing_name(v: &str) -> String {
    match v {
        "round_robin" => "round robin".to_string(),
        "jsq" => "JSQ".to_string(),
        "jiq" => "JIQ".to_string(),
        "lwl" => "LWL".to_string(),
        "" => "(empty)".to_string(),
        other => other.to_string(),
    }
}

/// A routing policy with what the CSV says besides its name: pod's `choices`
/// (d, empty for the other policies) and the number of `routers` (1, the
/// default, is not shown): "pod (d=2)", "JSQ (2 routers)", "pod (d=2, 2 routers)".
pub(super) fn routing_label(
    routing: &str,
    choices: &str,
    routers: &str,
    extra: &[String],
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !choices.is_empty() {
        parts.push(format!("d={choices}"));
    }
    if !routers.is_empty() && routers != "1" {
        parts.push(format!("{routers} routers"));
    }
    parts.extend(extra.iter().cloned());
    let name = routing_name(routing);
    if parts.is_empty() {
        name
    } else {
        format!("{name} ({})", parts.join(", "))
    }
}

/// Short name of an axis column in legends and facet titles (`ρ` for `rho`,
/// `d` for pod's `choices`), the column name otherwise.
pub(super) fn axis_symbol(col: &str) -> &str {
    match col {
        "rho" => "ρ",
        "lambda" => "λ",
        "choices" => "d",
        other => other,
    }
}

/// A value as legends and facet titles show it: distribution texts get a space
/// after each comma so that they read (and wrap) as prose; empty is "(empty)".
pub(super) fn value_text(col: &str, v: &str) -> String {
    if v.is_empty() {
        "(empty)".to_string()
    } else if matches!(col, "service" | "arrival") {
        v.replace(',', ", ")
    } else {
        v.to_string()
    }
}

/// What kind of baseline an `analytic_method` cell names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum BaselineKind {
    /// `exact:…`: a closed form for this model (drawn as a thin solid line).
    Exact,
    /// `approx:…`: a named approximation (drawn dashed).
    Approx,
    /// No `analytic_method` column, or a cell that is neither (drawn dashed,
    /// labelled "analytic" as before the column existed).
    Unknown,
}

/// The kind and human name of an `analytic_method` cell, e.g. `exact:erlang_c`
/// -> (Exact, "Erlang C"), `approx:allen_cunneen` -> (Approx, "Allen–Cunneen").
/// The names are those of the methods' sources cited in `src/analytic/`.
pub(super) fn baseline_method(cell: &str) -> (BaselineKind, String) {
    let (kind, name) = if let Some(n) = cell.strip_prefix("exact:") {
        (BaselineKind::Exact, n)
    } else if let Some(n) = cell.strip_prefix("approx:") {
        (BaselineKind::Approx, n)
    } else {
        return (BaselineKind::Unknown, String::new());
    };
    let human = match name {
        "mm1" => "M/M/1".to_string(),
        "erlang_c" => "Erlang C".to_string(),
        "pollaczek_khinchine" => "Pollaczek–Khinchine".to_string(),
        "md1" => "M/D/1".to_string(),
        "er_m_1" => "Eᵣ/M/1".to_string(),
        "gi_m_1" => "GI/M/1".to_string(),
        "allen_cunneen" => "Allen–Cunneen".to_string(),
        "kraemer_langenbach_belz" => "Krämer–Langenbach-Belz".to_string(),
        "mean_field_pod" => "mean-field pod".to_string(),
        other => other.replace('_', " "),
    };
    (kind, human)
}

/// "exact: Erlang C" / "approx: Allen–Cunneen" / "analytic".
pub(super) fn baseline_text(kind: BaselineKind, names: &[String]) -> String {
    match kind {
        BaselineKind::Exact => format!("exact: {}", names.join(", ")),
        BaselineKind::Approx => format!("approx: {}", names.join(", ")),
        BaselineKind::Unknown => "analytic".to_string(),
    }
}
