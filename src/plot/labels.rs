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
