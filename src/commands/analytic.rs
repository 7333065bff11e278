//! `qsweep analytic`: the analytic baselines of a sweep's grid, no simulation;
//! for the default study, the published analysis beside exact theory.

use anyhow::Result;

use qsweep_core::analytic;
use qsweep_core::export::Format;
use qsweep_core::output::{self, num};
use qsweep_core::spec::{AnalyticArgs, Spec, SEED_SOURCE};

use super::spec::load_spec;

/// `qsweep analytic`: the grid's analytic baselines, no simulation, to stdout
/// (and as CSV to `-o`).
pub fn analytic(analytic_args: &AnalyticArgs) -> Result<()> {
    let sweep = analytic_args.sweep();
    let args = &sweep;
    // A wrong output name is refused before anything is said.
    let format = match &args.out {
        Some(out) if out != std::path::Path::new("-") => Some(Format::of_path(out)?),
        _ => None,
    };
    let spec = load_spec(args, &[])?;
    for note in spec.notes() {
        eprintln!("qsweep: note: {note}");
    }
    // Only an explicit -o writes a file: the spec's `out` names where its
    // simulated results go, which an analytic table must never take.
    let table = qsweep_core::run::analytic_table(&spec);
    let rows = &table.rows;
    if let Some(out) = &args.out {
        if out == std::path::Path::new("-") {
            // The CSV on stdout, instead of the text tables.
            qsweep_core::export::write_output(out, &table.encode(Format::Csv)?, false)?;
            return Ok(());
        }
        let format = format.unwrap_or(Format::Csv);
        if !args.force && out.symlink_metadata().is_ok() {
            // As before formats existed: the file system's own words.
            output::create_file(out, false, "")?;
        }
        qsweep_core::export::write_output(out, &table.encode(format)?, true)?;
        eprintln!("qsweep: wrote {} rows to {}", rows.len(), out.display());
    }
    let mut text = output::align(&output::ANALYTIC_COLUMNS, rows);
    if spec.source == SEED_SOURCE && is_seed_question(&spec) {
        text.push_str(&seed_comparison());
    }
    output::to_stdout(text)
}

/// Whether the grid asks the published analysis' question (λ = 150/s,
/// Poisson arrivals, exponential service of mean 1/3 s, one worker per
/// dyno), so that its table belongs beside the grid's.
fn is_seed_question(spec: &Spec) -> bool {
    use qsweep_core::spec::Load;
    spec.load
        .iter()
        .all(|l| matches!(l, Load::Lambda(v) if *v == 150.0))
        && spec
            .service
            .iter()
            .all(|s| (s.mean() - 1.0 / 3.0).abs() < 1e-12 && (s.scv() - 1.0).abs() < 1e-12)
        && spec.arrival.iter().all(|a| a.text() == "exp")
        && spec.workers.iter().all(|&w| w == 1)
}

/// The published analysis of the default study beside exact theory.
fn seed_comparison() -> String {
    let mut text = String::from(
        "\nThe published analysis beside exact theory (λ = 150/s, μ = 3/s; mean wait in ms):\n",
    );
    let h = [
        "R",
        "published random",
        "M/M/1 at λ/R",
        "published central",
        "1/(Rμ−λ)",
        "Erlang C M/M/R",
    ];
    let r: Vec<Vec<String>> = analytic::seed_comparison_rows()
        .iter()
        .map(|r| {
            vec![
                r.servers.to_string(),
                num(r.published_dumb_ms),
                format!("{:.2}", r.mm1_mean_wait_ms),
                num(r.published_smart_ms),
                format!("{:.3}", r.one_over_spare_capacity_ms),
                format!("{:.3e}", r.erlang_c_mean_wait_ms),
            ]
        })
        .collect();
    text.push_str(&output::align(&h, &r));
    text.push_str("The published central-queue row is 1/(Rμ−λ): Erlang C's wait with P(wait) set to 1. The exact M/M/R wait is C(R, λ/μ)/(Rμ−λ).\n");
    text
}
