//! `qsweep size --then-run FILE`: every answer simulated as `qsweep run`
//! would, its rows a results CSV (and `--hist`).

use anyhow::Result;

use qsweep_core::engine::Engine;
use qsweep_core::export::hist::HistSink;
use qsweep_core::output;
use qsweep_core::run::{interrupt, row, PointResult};
use qsweep_core::spec::Spec;

use super::SizeArgs;

/// `qsweep size --then-run FILE`: every answer simulated as `qsweep run`
/// would (each case at its answer, point by point), its rows written to
/// FILE as a results CSV (and `--hist`).
pub(super) fn then_run(
    args: &SizeArgs,
    spec: &Spec,
    cases: &[qsweep_core::size::Case],
    answers: &[(usize, u32)],
    engine: &mut dyn Engine,
    then: &std::path::Path,
) -> Result<()> {
    if answers.is_empty() {
        eprintln!("qsweep: size: --then-run: no answer to simulate");
        return Ok(());
    }
    let mut points = Vec::new();
    for (i, &(id, n)) in answers.iter().enumerate() {
        let mut p = cases[id].at(n).points().remove(0);
        p.index = i as u32;
        points.push(p);
    }
    let mut run_spec = spec.clone();
    run_spec.run.slo.clear();
    let (prepared, table) = qsweep_core::run::prepare(&run_spec, points);
    let mut prepared = prepared;
    if run_spec.run.warmup_auto {
        qsweep_core::run::warmup::resolve(
            &mut prepared,
            &table,
            run_spec.run.reps,
            run_spec.run.threads,
        );
    }
    let extra = row::extra_columns(&run_spec);
    let mut sink = output::CsvSink::create_with(then, true, &extra)?;
    let mut hist = match &args.hist {
        Some(h) => Some(HistSink::open(h, true, false)?),
        None => None,
    };
    let label = engine.label();
    let started = std::time::Instant::now();
    qsweep_core::run::run_points_until(
        &prepared,
        &table,
        run_spec.run.reps,
        engine,
        &mut |r: PointResult<'_>| {
            let fields = row::fields(&run_spec, &r, &label);
            sink.write(&fields)?;
            if let Some(h) = hist.as_mut() {
                h.write(r.point.grid.index, &r.hist, r.point.scale, r.stats.max_wait)?;
            }
            Ok(())
        },
        interrupt::stop_flag(),
        true,
    )?;
    sink.sync()?;
    eprintln!(
        "qsweep: size: --then-run: simulated the {} answer(s) in {:.1} s; rows in {}{}",
        answers.len(),
        started.elapsed().as_secs_f64(),
        then.display(),
        match &args.hist {
            Some(h) => format!(", histograms in {}", h.display()),
            None => String::new(),
        }
    );
    Ok(())
}
