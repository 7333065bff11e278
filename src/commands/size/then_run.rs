//! `qsweep size --then-run FILE`: every answer simulated as `qsweep run`
//! would, its rows a results CSV (and `--hist`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use qsweep_core::engine::Engine;
use qsweep_core::export::hist::HistSink;
use qsweep_core::export::Format;
use qsweep_core::files::Staged;
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
    then: &Path,
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
    // Whole or not at all, as `qsweep run` writes its CSV: a stop leaves
    // no half-written file to refuse later (check_paths refused an
    // existing one unless --force or --resume).
    let staged = Staged::new(then, true);
    staged.create().map_err(|e| {
        qsweep_core::UsageError(format!(
            "--then-run: cannot create '{}': {e}; expected a path in a folder that exists",
            then.display()
        ))
    })?;
    let mut sink = output::CsvSink::create_with(staged.path(), true, &extra)?;
    let staged_hist = args.hist.as_deref().map(|h| Staged::new(h, true));
    let mut hist = match &staged_hist {
        Some(h) => Some(HistSink::open(h.path(), true, None)?),
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
    // Synced when committed.
    drop(sink);
    let placed = |path: &Path, staged: Staged| {
        staged
            .commit()
            .with_context(|| format!("--then-run: writing {}", path.display()))
    };
    placed(then, staged)?;
    if let (Some(h), Some(staged)) = (&args.hist, staged_hist) {
        drop(hist);
        placed(h, staged)?;
    }
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

/// The journal's path: `--journal`, else OUT.journal.csv beside `-o OUT`,
/// else `qsweep-size.journal.csv`.
pub(super) fn journal_of(args: &SizeArgs) -> PathBuf {
    args.journal
        .clone()
        .unwrap_or_else(|| match &args.sweep.out {
            Some(out) if out != Path::new("-") => {
                PathBuf::from(format!("{}.journal.csv", out.with_extension("").display()))
            }
            _ => PathBuf::from("qsweep-size.journal.csv"),
        })
}

/// Refuses, before any search, outputs that would lose work (issue 40): a
/// `--then-run` that is not a results CSV file (`r.json` got raw CSV, `-`
/// made a file named `-`), two outputs of one command on the same file
/// (`-o t.csv --then-run t.csv` overwrote the answers with the run's
/// rows), and an existing `--then-run` or `--hist` unless `replace`
/// (`--force`, or `--resume` of a search whose journal is kept).
pub(super) fn check_paths(args: &SizeArgs, journal: &Path, replace: bool) -> Result<()> {
    let usage = |m: String| -> anyhow::Error { qsweep_core::UsageError(m).into() };
    if let Some(then) = &args.then_run {
        let csv = then != Path::new("-")
            && !then.to_string_lossy().ends_with(".meta.json")
            && Format::of_path(then).is_ok_and(|f| f == Format::Csv)
            && then
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if !csv {
            return Err(usage(format!(
                "--then-run: '{}' is not a .csv file name; expected FILE.csv (the answers' rows \
                 are a results CSV; `qsweep export` converts it)",
                then.display()
            )));
        }
    }
    let named: Vec<(&str, &Path)> = [
        ("-o", args.sweep.out.as_deref()),
        ("--then-run", args.then_run.as_deref()),
        ("--hist", args.hist.as_deref()),
        ("the journal", Some(journal)),
    ]
    .into_iter()
    .filter_map(|(n, p)| Some((n, p?)))
    .filter(|(_, p)| *p != Path::new("-"))
    .collect();
    let key = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    for (i, (a, pa)) in named.iter().enumerate() {
        for (b, pb) in &named[i + 1..] {
            if key(pa) == key(pb) {
                return Err(usage(format!(
                    "{b}: '{}' is also {a}; expected a different file for each output",
                    pb.display()
                )));
            }
        }
    }
    for (flag, f) in [("--then-run", &args.then_run), ("--hist", &args.hist)] {
        let Some(f) = f else { continue };
        qsweep_core::export::check_new(f, replace)?;
        // Found before the search, not after it.
        if let Some(parent) = f.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(usage(format!(
                    "{flag}: '{}' is in a folder that does not exist ('{}'); expected a path \
                     in an existing folder",
                    f.display(),
                    parent.display()
                )));
            }
        }
    }
    Ok(())
}
