//! `qsweep run`: a sweep simulated, its rows written as points finish,
//! with progress on stderr; `--dry-run` describes the run instead.

mod extras;

use std::path::PathBuf;

use anyhow::Result;

use qsweep_backend::backend;
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::Engine;
use qsweep_core::horizon::Horizon;
use qsweep_core::output;
use qsweep_core::progress::{self, Progress};
use qsweep_core::run::driver::{self, Launch};
use qsweep_core::run::report::{self, PointReport};
use qsweep_core::run::session::{self, Session};
use qsweep_core::run::{estimate, interrupt, PointResult, PreparedPoint};
use qsweep_core::spec::{Spec, SweepArgs};

use extras::Extras;

/// Flags of `qsweep run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,
    /// No progress output (errors, warnings, one line counting the points
    /// whose CIs are wider than 10%, and the final summary line only)
    #[arg(long, short)]
    pub quiet: bool,
    /// Continue the --out CSV of an interrupted run: check that it comes from
    /// the same spec and seed, keep its rows, run the missing points
    #[arg(long)]
    pub resume: bool,
    /// Run only the points whose index is K modulo N (0 <= K < N), e.g. one
    /// task of a Slurm job array; `qsweep merge` joins the N pieces
    #[arg(long, value_name = "K/N", allow_hyphen_values = true)]
    pub shard: Option<String>,
    /// Run the spec recorded in a .meta.json again (its shard too); --out,
    /// --backend, --adapter, --threads and --shard may change, nothing else
    #[arg(long, value_name = "META")]
    pub from_meta: Option<PathBuf>,
    /// Show the grid, customers, memory and an estimated time (from a
    /// sub-second calibration on the chosen backend), then stop: nothing is
    /// simulated or written
    #[arg(long)]
    pub dry_run: bool,
    /// Also write each point's wait histogram as tidy CSV to FILE, as points finish: point,bin_lower,bin_upper,count,ccdf (ccdf = P(wait > bin_upper))
    #[arg(long, value_name = "FILE")]
    pub hist: Option<PathBuf>,
}

/// `qsweep run` with its output in any format: `-o -` streams the CSV to
/// stdout, `-o x.json|.md|.parquet` writes `x.csv` (and its meta) row by
/// row as always and converts it once the run is complete; `--hist`.
pub fn run_command(args: &RunArgs) -> Result<()> {
    // Ctrl-C and SIGTERM are caught from the start: before the run loop
    // watches them they exit at once with 130 (issue 25: a SIGTERM during
    // the spec's loading or a GPU's start-up died with 143).
    interrupt::install();
    let (args, mut extras) = Extras::prepare(args)?;
    run(&args, &mut extras)
}

/// `qsweep run`: simulate the grid (or a shard of it), one CSV row per point,
/// with a `.meta.json` beside the CSV; the run itself is the library's
/// [`driver`], shown here as a progress bar and lines on stderr.
fn run(args: &RunArgs, extras: &mut Extras) -> Result<()> {
    let mode = progress::Mode::detect(args.quiet);
    let note = |msg: &str| {
        if mode != progress::Mode::Quiet {
            progress::say(msg);
        }
    };
    let launch = Launch::open(
        &session::Request {
            sweep: &args.sweep,
            resume: args.resume,
            shard: args.shard.as_deref(),
            from_meta: args.from_meta.as_deref(),
        },
        session::Caller::Cli,
        |_| extras.check_out(),
        &backend::choose_for,
        &note,
    )?;
    if args.dry_run {
        let mut launch = launch;
        return dry_run(
            &launch.session,
            launch.engine.as_mut(),
            &launch.reason,
            &extras.shown_out(&launch.session.out),
        );
    }
    // Ctrl-C from here on exits at once (saying how to resume), then (once
    // the loop watches the flag) stops the run cleanly.
    interrupt::set_resume_hint(&launch.session.resume_hint());
    let mut shown = Shown {
        mode,
        extras,
        progress: None,
        rate: 0.0,
        wall: std::time::Instant::now(),
    };
    let finished = launch.run(
        driver::Options {
            estimate_long_runs: true,
            resumable: true,
        },
        &driver::Says {
            note: &note,
            alert: &progress::say,
        },
        &mut shown,
        interrupt::stop_flag(),
    )?;
    let Shown {
        extras, rate, wall, ..
    } = shown;
    let session = finished.session;
    extras.finish(&session.out)?;

    extras.summary(&output::summary_table(&session.rows))?;
    let new_rows = session.new_rows();
    if new_rows == 0 {
        eprintln!(
            "qsweep: nothing left to run: {} already holds all {} points",
            session.out.display(),
            session.rows.len()
        );
        return Ok(());
    }
    let resumed = if session.done_before > 0 {
        format!(" ({} in all)", session.rows.len())
    } else {
        String::new()
    };
    eprintln!(
        "qsweep: wrote {new_rows} rows{resumed} to {} in {:.1} s ({:.3e} customers/s on {}; {:.3e} \
         in the engine)",
        extras.shown_out(&session.out),
        wall.elapsed().as_secs_f64(),
        rate,
        session.engines(),
        session.sim_customers / session.sim_seconds.max(1e-9)
    );
    let failed = session.failed_points();
    if !failed.is_empty() {
        // Every row is written: the run is complete, but not clean.
        return Err(qsweep_core::run::PointsFailed {
            points: failed,
            total: session.rows.len() as u64,
        }
        .into());
    }
    Ok(())
}

/// How `qsweep run` shows a run as it goes: a progress bar (or lines),
/// each point's warnings, and at the end the points whose CIs are too wide.
struct Shown<'a> {
    mode: progress::Mode,
    extras: &'a mut Extras,
    /// From the start of the simulation.
    progress: Option<Progress>,
    /// Customers/s over the run, as the progress measured it.
    rate: f64,
    wall: std::time::Instant,
}

impl driver::Observer for Shown<'_> {
    fn start(&mut self, session: &Session, planned: f64) {
        self.progress = Some(Progress::new(
            self.mode,
            session.in_file,
            session.done_before,
            planned,
        ));
        self.wall = std::time::Instant::now();
        interrupt::set_watched();
    }

    fn point(
        &mut self,
        session: &Session,
        fields: &[String],
        r: &PointResult<'_>,
        report: &PointReport,
    ) -> Result<()> {
        self.extras.point(session, fields, r)?;
        let progress = self.progress.as_mut().expect("started");
        progress.point(report.customers, || report.line.clone());
        for (warning, always) in &report.warnings {
            if *always {
                progress::say(warning);
            } else {
                progress.note(warning);
            }
        }
        Ok(())
    }

    fn simulated(&mut self, session: &Session, wide: &[u32]) {
        if let Some(mut progress) = self.progress.take() {
            self.rate = progress.rate();
            progress.finish();
        }
        if !wide.is_empty() {
            // Shown even with --quiet (the per-point lines are not).
            let shown: Vec<String> = wide.iter().take(10).map(u32::to_string).collect();
            let more = if wide.len() > 10 { ", ..." } else { "" };
            progress::say(&format!(
                "qsweep: warning: {} of {} points have a mean-wait or p99 95% CI wider than \
                 {}% of the estimate (points {}{more})",
                wide.len(),
                session.new_rows(),
                report::WIDE_CI * 100.0,
                shown.join(", ")
            ));
        }
    }
}

/// `qsweep run --dry-run`: what the run would be, on stdout.
fn dry_run(session: &Session, engine: &mut dyn Engine, backend: &str, out: &str) -> Result<()> {
    let spec = &session.spec;
    let todo = session.pending();
    let mut lines = vec![format!(
        "qsweep run --dry-run: nothing simulated, nothing written\ngrid: {} points ({})",
        session.total,
        session.axes()
    )];
    if todo.len() as u64 != session.total {
        lines.push(format!(
            "to run: {} of them{}",
            todo.len(),
            if session.resuming {
                " (the rest are in the CSV already)"
            } else {
                " (this shard)"
            }
        ));
    }
    let cal = estimate::calibrate(engine, &todo, &session.table)?;
    let shape = estimate::Shape::of(&engine.label(), CpuEngine::new(spec.run.threads).threads);
    let est = estimate::calibrated_estimate(&todo, spec.run.reps, shape, &cal);
    lines.push(format!(
        "customers: {:.3e} in all, warm-up included ({} per replication){}",
        est.customers,
        u64::from(spec.run.customers) + u64::from(spec.run.warmup),
        match est.most {
            Some((c, _)) => format!("; --precision may take up to {c:.3e}"),
            None => String::new(),
        }
    ));
    lines.push(format!(
        "memory: {}; limit {} ({})",
        estimate::describe_memory(&session.memory),
        qsweep_core::memory::human(session.memory_limit.bytes),
        session.memory_limit.source
    ));
    if spec.run.warmup_auto {
        lines.push(
            "warm-up: auto, chosen per point by CPU pilots when the run starts (not counted \
             above)"
                .to_string(),
        );
    }
    lines.extend(horizon_lines(spec, &todo));
    lines.push(format!("backend: {backend}"));
    let most = match est.most {
        Some((_, s)) => format!(" (up to {} under --precision)", progress::duration(s)),
        None => String::new(),
    };
    lines.push(format!(
        "time: about {}{most}, at {:.3e} customers/s measured in {:.1} s",
        progress::duration(est.seconds),
        est.customers / est.seconds.max(1e-9),
        cal.seconds
    ));
    lines.push(format!("output: {out} (not written)"));
    output::to_stdout(format!("{}\n", lines.join("\n")))
}

/// `--dry-run`'s lines about the points whose mean wait the run cannot
/// resolve (`qsweep_core::horizon`): at most [`HORIZON_LINES`], then a count.
fn horizon_lines(spec: &Spec, todo: &[PreparedPoint]) -> Vec<String> {
    let flagged: Vec<(u32, String)> = todo
        .iter()
        .filter_map(|p| {
            let h = Horizon::of(&p.grid, spec.run.reps, spec.run.customers)?;
            Some((p.grid.index, h.concern(&p.grid.service)?))
        })
        .collect();
    let mut lines: Vec<String> = flagged
        .iter()
        .take(HORIZON_LINES)
        .map(|(i, why)| format!("mean wait not resolved: point {i}: {why}"))
        .collect();
    if flagged.len() > HORIZON_LINES {
        lines.push(format!(
            "mean wait not resolved: {} more points",
            flagged.len() - HORIZON_LINES
        ));
    }
    lines
}

/// The most points `--dry-run` names one by one in its horizon lines.
const HORIZON_LINES: usize = 8;
