//! `qsweep size`: for each case of the grid (every axis but the searched
//! one), the smallest number of servers (or workers) meeting each target;
//! exact where theory is, else a search with simulations saved in a
//! journal as they finish. `--dry-run` and `--then-run` have their own
//! modules, as has the table of answers.

mod dry_run;
mod table;
mod then_run;

use std::path::PathBuf;

use anyhow::Result;

use qsweep_backend::backend;
use qsweep_core::export::{Format, Table};
use qsweep_core::output;
use qsweep_core::progress;
use qsweep_core::run::{calibrate, interrupt};
use qsweep_core::spec::{Spec, SweepArgs};

use super::spec::load_spec;

/// Flags of `qsweep size`.
#[derive(clap::Args, Debug)]
pub struct SizeArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,
    /// What must hold: METRIC<=BOUND (or <), e.g. p99_wait<=0.1; METRIC: mean_wait, p_wait, p50_wait … p999_wait, qQ_wait (any quantile), mean_sojourn, p99_sojourn [list]
    #[arg(long, value_name = "TARGET", value_delimiter = ',', required = true)]
    pub target: Vec<String>,
    /// The axis to size: servers (R) or workers (per server)
    #[arg(long, value_name = "AXIS", default_value = "servers")]
    pub over: String,
    /// Give up above this many servers (or workers)
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max: u32,
    /// Simulate even where an exact formula gives the metric (a check on both)
    #[arg(long)]
    pub simulate: bool,
    /// No line per evaluation (the table and errors only)
    #[arg(long, short)]
    pub quiet: bool,
    /// Where each simulated evaluation is saved as it is made [default:
    /// OUT.journal.csv beside -o OUT, else qsweep-size.journal.csv]; removed
    /// once the search completes, kept when it is stopped or fails
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Continue a stopped search from its journal: the evaluations saved
    /// there are not simulated again
    #[arg(long)]
    pub resume: bool,
    /// Show the cases, how each target is judged (exact or simulated) and
    /// the time of one evaluation (from a sub-second calibration), then stop
    #[arg(long)]
    pub dry_run: bool,
    /// Then simulate every answer (each case at its answer's servers), as
    /// `qsweep run` would, and write their rows as a results CSV to FILE
    /// (`qsweep plot FILE`, `--hist` for the tails)
    #[arg(long, value_name = "FILE")]
    pub then_run: Option<PathBuf>,
    /// With --then-run: also write the answers' wait histograms to FILE
    /// (as `qsweep run --hist`)
    #[arg(long, value_name = "FILE", requires = "then_run")]
    pub hist: Option<PathBuf>,
}

/// `qsweep size`: for each case of the grid (every axis but the searched
/// one), the smallest number of servers (or workers) meeting each target.
pub fn size(args: &SizeArgs) -> Result<()> {
    use qsweep_core::size::{self, Over, Target};
    let usage = |m: String| -> anyhow::Error { qsweep_core::UsageError(m).into() };
    let over: Over = args.over.parse().map_err(usage)?;
    let targets: Vec<Target> = args
        .target
        .iter()
        .map(|t| t.parse().map_err(usage))
        .collect::<Result<_>>()?;
    // A search stopped while --then-run simulated its answers has written
    // them (-o) and kept its journal: --resume writes them again, from the
    // journal, and then simulates the answers (issue 40).
    let journal_path = then_run::journal_of(args);
    let replace = args.sweep.force || (args.resume && journal_path.exists());
    let format = match &args.sweep.out {
        Some(out) if out != std::path::Path::new("-") => {
            let f = Format::of_path(out)?;
            qsweep_core::export::check_new(out, replace)?;
            Some(f)
        }
        _ => None,
    };
    // The searched axis comes from the search (a placeholder here, so a
    // spec without it loads); unstable values are skipped by the search.
    let mut sweep = args.sweep.clone();
    // A fleet is the servers axis itself: nothing to search over. Asked
    // before the placeholder, which would replace the spec's fleets.
    let fleet_flag = !sweep.axes.speeds.is_empty();
    if fleet_flag || Spec::load(&sweep).is_ok_and(|s| s.has_fleet()) {
        return Err(qsweep_core::UsageError(
            "size: speeds: searching over mixed fleets is not supported yet; expected a spec \
             with servers (identical dynos)"
                .into(),
        )
        .into());
    }
    match over {
        Over::Servers => sweep.axes.servers = vec!["1".into()],
        Over::Workers => sweep.axes.workers = vec!["1".into()],
    }
    sweep.out = None;
    sweep.allow_unstable = true;
    let spec = load_spec(&sweep, &[over.name()])?;
    let cases = size::cases(&spec, over)?;
    let say = |m: &str| {
        if !args.quiet {
            eprintln!("{m}");
        }
    };
    let given = match over {
        Over::Servers => !args.sweep.axes.servers.is_empty(),
        Over::Workers => !args.sweep.axes.workers.is_empty(),
    };
    if given {
        say(&format!(
            "qsweep: note: size searches {0}; --{0} is not used",
            over.name()
        ));
    }
    // One engine for every evaluation, chosen as `qsweep run` would on the
    // first case's smallest stable fleet.
    let first = cases[0].at(cases[0].first);
    let (prepared, table) = qsweep_core::run::prepare(&first, first.points());
    let params: Vec<_> = prepared.iter().map(|p| p.params).collect();
    let chosen = backend::choose_for(
        spec.run.backend,
        spec.run.adapter.as_deref(),
        spec.run.threads,
        &calibrate::Sample {
            params: &calibrate::calibration_sample(&params),
            table: &table,
        },
    )?;
    say(&format!("qsweep: backend: {}", chosen.reason));
    let mut engine = chosen.engine;
    let label = engine.label();
    if args.dry_run {
        return dry_run::dry_run(args, &spec, &cases, &targets, engine.as_mut(), &label);
    }
    then_run::check_paths(args, &journal_path, replace)?;
    let journal = size::evaluate::Journal::open(&journal_path, args.resume, args.sweep.force)?;
    if journal.loaded > 0 {
        say(&format!(
            "qsweep: size: resuming: {} saved evaluation(s) read from {}",
            journal.loaded,
            journal_path.display()
        ));
    } else if args.resume {
        say(&format!(
            "qsweep: size: --resume: nothing saved in {} yet; starting the search",
            journal_path.display()
        ));
    }
    // Ctrl-C stops the simulation within milliseconds; the journal keeps
    // every evaluation finished, and the message says how to resume.
    let mut resume_cmd = qsweep_core::provenance::command_line();
    if !resume_cmd.iter().any(|a| a == "--resume") {
        resume_cmd.push("--resume".into());
    }
    resume_cmd.retain(|a| a != "--force");
    let resume_cmd = qsweep_core::provenance::shell_join(&resume_cmd);
    interrupt::install();
    interrupt::set_resume_hint(&resume_cmd);
    interrupt::set_watched();
    let stop = interrupt::stop_flag();
    let started = std::time::Instant::now();
    let metrics: Vec<size::Metric> = targets.iter().map(|t| t.metric).collect();
    let mut evaluator = size::evaluate::Evaluator::new(engine.as_mut(), args.simulate, stop)
        .with_journal(journal, metrics);
    let mut rows: Vec<Vec<String>> = Vec::new();
    // For the ETA: simulated evaluations so far, their seconds, and the
    // evaluations of the searches finished.
    let (mut simulated, mut sim_seconds) = (0usize, 0.0f64);
    let mut per_search: Vec<usize> = Vec::new();
    let searches = cases.len() * targets.len();
    let mut answers: Vec<(usize, u32)> = Vec::new();
    let outcome = (|| -> Result<()> {
        for (id, case) in cases.iter().enumerate() {
            let what = case.describe(&spec);
            for target in &targets {
                let mut done_here = 0usize;
                let mut eval = |n: u32| {
                    let e = evaluator.eval(id, case, n, target)?;
                    done_here += 1;
                    if e.how == size::How::Simulated && !e.reused {
                        simulated += 1;
                        sim_seconds += e.seconds;
                    }
                    let side = if e.meets(target) { "meets" } else { "misses" };
                    let cost = match (e.from_journal, e.reused, e.seconds) {
                        (true, _, _) => ", saved before".to_string(),
                        (_, true, _) => ", simulated before".to_string(),
                        (_, _, s) if s > 0.0 => format!(", {s:.1} s"),
                        _ => String::new(),
                    };
                    let how = match e.how {
                        _ if e.reused => String::new(),
                        size::How::Unstable | size::How::Overflow => String::new(),
                        ref how => how.to_string(),
                    };
                    let note = format!("{how}{cost}");
                    let note = note.trim_start_matches(", ");
                    let eta = eta(
                        simulated,
                        sim_seconds,
                        &per_search,
                        searches,
                        done_here,
                        case.first,
                    );
                    say(&format!(
                        "qsweep: size: {what} {target}: {}={n}: {}{} {side}{eta}",
                        over.name(),
                        e.shown(),
                        if note.is_empty() {
                            String::new()
                        } else {
                            format!(" ({note})")
                        },
                    ));
                    Ok(e)
                };
                let (most, why) = case.most(args.max);
                let mut found = size::search(case.first, most, target, &mut eval)?;
                if let (None, Some(why)) = (&found.answer, why) {
                    found.verdict = size::Verdict::NotFoundWithin(why);
                }
                per_search.push(found.evaluations.len());
                if let Some(a) = &found.answer {
                    if !answers.contains(&(id, a.n)) {
                        answers.push((id, a.n));
                    }
                }
                rows.push(table::row(case, target, &found, over));
            }
        }
        Ok(())
    })();
    if let Err(e) = outcome {
        drop(evaluator);
        let saved = std::fs::read_to_string(&journal_path)
            .map(|t| t.lines().count().saturating_sub(1))
            .unwrap_or(0);
        if saved == 0 {
            // Nothing simulated yet: no journal to keep.
            let _ = std::fs::remove_file(&journal_path);
            return Err(e);
        }
        if e.is::<qsweep_core::run::Interrupted>() {
            eprintln!(
                "qsweep: size: stopped; the evaluations finished are saved in {}. To resume:\n  \
                 {resume_cmd}",
                journal_path.display()
            );
        } else {
            eprintln!(
                "qsweep: size: the evaluations finished are saved in {} (--resume continues)",
                journal_path.display()
            );
        }
        return Err(e);
    }
    drop(evaluator);
    let header = table::COLUMNS.map(String::from).to_vec();
    let table = Table { header, rows };
    let to_stdout = args.sweep.out.as_deref() == Some(std::path::Path::new("-"));
    if to_stdout {
        // stdout holds the CSV.
        eprint!("{}", table::summary(&table, &spec, over));
    } else {
        output::to_stdout(table::summary(&table, &spec, over))?;
    }
    eprintln!(
        "qsweep: sized {} cases × {} targets in {:.1} s on {}",
        cases.len(),
        targets.len(),
        started.elapsed().as_secs_f64(),
        label
    );
    if let (Some(out), Some(format)) = (&args.sweep.out, format) {
        qsweep_core::export::write_output(out, &table.encode(format)?, true)?;
        eprintln!(
            "qsweep: wrote {} rows to {}",
            table.rows.len(),
            out.display()
        );
    } else if to_stdout {
        qsweep_core::export::write_output(
            std::path::Path::new("-"),
            &table.encode(Format::Csv)?,
            false,
        )?;
    }
    if let Some(then) = &args.then_run {
        // The journal stays until the answers' rows are written: a stop
        // here resumes from it (`--resume`) without searching again.
        then_run::then_run(args, &spec, &cases, &answers, engine.as_mut(), then)?;
    }
    // Everything is in the outputs now.
    let _ = std::fs::remove_file(&journal_path);
    Ok(())
}

/// ` (3 of about 20 evaluations; about 4 min left)`: from the seconds of
/// the simulated evaluations so far and the evaluations the finished
/// searches took (before any finished: 2·log2 of the first stable fleet,
/// plus 4).
fn eta(
    simulated: usize,
    seconds: f64,
    per_search: &[usize],
    searches: usize,
    done_here: usize,
    first: u32,
) -> String {
    if simulated == 0 {
        return String::new();
    }
    let per = if per_search.is_empty() {
        2.0 * f64::from(first.max(2)).log2() + 4.0
    } else {
        per_search.iter().sum::<usize>() as f64 / per_search.len() as f64
    };
    let left_here = (per - done_here as f64).max(1.0);
    let later = searches.saturating_sub(per_search.len() + 1) as f64 * per;
    let left = (left_here + later) * seconds / simulated as f64;
    format!("; about {} left", progress::duration(left))
}
