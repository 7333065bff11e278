//! A finished point as its results-CSV row: the standard columns
//! ([`crate::output::COLUMNS`]), then those the spec asks for (`--quantiles`,
//! `--slo`, patience, capacity, arrival dispersion, fleets). One function for
//! every writer of simulated rows: `qsweep run`'s session and
//! `qsweep size --then-run`.

use super::point::{baseline, PointResult};
use crate::output::{self, Row};
use crate::spec::Spec;

/// The CSV fields of a finished point simulated on the engine `label`.
pub fn fields(spec: &Spec, r: &PointResult<'_>, label: &str) -> Vec<String> {
    let base = baseline(&r.point.grid);
    let row = Row {
        point: &r.point.grid,
        reps: r.stats.reps as u32,
        customers: spec.run.customers,
        warmup: r.point.params.warmup,
        seed: spec.run.seed,
        stats: &r.stats,
        analytic: &base,
        backend: label,
        seconds: r.seconds,
        converged: r.converged,
        truncation: r.point.pilot.map(|p| p.truncation),
        max_in_system: r.max_in_system,
        error: r.error.as_deref(),
    };
    let mut fields = row.fields();
    fields.extend(output::quantile_fields(
        &spec.run.quantiles,
        &r.hist,
        r.point.scale,
        r.stats.max_wait,
        crate::stats::TailModel::of(&r.point.grid.service),
    ));
    fields.extend(output::slo_fields(
        &spec.run.slo,
        &r.stats,
        &base,
        r.error.is_some(),
    ));
    fields.extend(output::patience_fields(
        spec.patience_mode(),
        &r.point.grid,
        &r.stats,
        &base,
        r.error.is_some(),
    ));
    fields.extend(output::capacity_fields(
        spec.has_capacity(),
        &r.point.grid,
        &r.stats,
        &base,
        r.error.is_some(),
    ));
    fields.extend(output::dispersion_fields(
        spec.has_non_renewal_arrivals(),
        &r.point.grid,
    ));
    fields.extend(output::fleet_fields(
        spec.has_fleet(),
        &r.point.grid,
        &r.stats,
        &base,
        r.error.is_some(),
    ));
    fields
}

/// The columns after the standard ones, in the order [`fields`] writes them.
pub fn extra_columns(spec: &Spec) -> Vec<String> {
    output::extra_columns(
        &spec.run.quantiles,
        &spec.run.slo,
        spec.patience_mode(),
        spec.has_capacity(),
        spec.has_non_renewal_arrivals(),
        spec.has_fleet(),
    )
}
