//! Axis titles: the human name (and unit) of each CSV column.
//!
//! Why this module exists: CSV headers are identifiers (`p99_wait`, `rho`); a
//! figure's axes say what they measure and in which unit.  The CSV carries no time
//! unit, so waits are labelled "(time units)" unless `--time-unit` names one.

/// Human axis label for a CSV column, with the unit where one is known.
pub(super) fn axis_label(col: &str, time_unit: Option<&str>) -> String {
    let tu = time_unit.unwrap_or("time units");
    let time = |what: &str| format!("{what} ({tu})");
    match col {
        "servers" => "servers".to_string(),
        "workers" => "workers per server".to_string(),
        "lambda" => match time_unit {
            Some(u) => format!("arrival rate λ (1/{u})"),
            None => "arrival rate λ (per time unit)".to_string(),
        },
        "rho" => "utilisation ρ".to_string(),
        "service_mean" => time("mean service time"),
        "service_scv" => "service-time SCV c²".to_string(),
        "choices" => "choices d".to_string(),
        "routers" => "routers".to_string(),
        "reps" => "replications".to_string(),
        "customers" => "customers per replication".to_string(),
        "mean_wait" => time("mean wait"),
        "p50_wait" => time("median wait"),
        "p999_wait" => time("p99.9 wait"),
        "max_wait" => time("max wait"),
        "p_wait" => "P(wait > 0)".to_string(),
        "mean_sojourn" => time("mean sojourn time"),
        "p99_sojourn" => time("p99 sojourn time"),
        "seconds" => "wall-clock time (s)".to_string(),
        "customers_per_s" => "throughput (customers/s)".to_string(),
        "analytic_mean_wait" => time("analytic mean wait"),
        "analytic_p99_wait" => time("analytic p99 wait"),
        "rel_err_mean_wait" => "relative error of mean wait".to_string(),
        c => {
            if let Some(stem) = c.strip_suffix("_wait") {
                if let Some(q) = stem.strip_prefix('p') {
                    if q.chars().all(|ch| ch.is_ascii_digit()) {
                        return time(&format!("p{q} wait"));
                    }
                }
                time(&c.replace('_', " "))
            } else if c.ends_with("_sojourn") {
                time(&c.replace('_', " "))
            } else {
                c.to_string()
            }
        }
    }
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
