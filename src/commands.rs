//! The subcommands: glue between the CLI and the library.

use std::path::PathBuf;

use anyhow::{Context, Result};

use qsweep_backend::backend;
use qsweep_core::analytic;
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::Engine;
use qsweep_core::export::hist::HistSink;
use qsweep_core::export::{Format, Table};
use qsweep_core::horizon::Horizon;
use qsweep_core::merge;
use qsweep_core::output::{self, num};
use qsweep_core::progress::{self, Progress};
use qsweep_core::run::session::{self, Session};
use qsweep_core::run::{calibrate, estimate, interrupt, rounds, PointResult, PreparedPoint};
use qsweep_core::spec::{AnalyticArgs, Backend, Spec, SweepArgs, SEED_SOURCE};
use qsweep_core::UsageError;
use qsweep_gpu::list_adapters;
use qsweep_plot::{plot_files, PlotOptions};

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
/// with a `.meta.json` beside the CSV.
pub fn run(args: &RunArgs, extras: &mut Extras) -> Result<()> {
    let mut session = Session::open(&session::Request {
        sweep: &args.sweep,
        resume: args.resume,
        shard: args.shard.as_deref(),
        from_meta: args.from_meta.as_deref(),
    })?;
    extras.check_out()?;
    let mode = progress::Mode::detect(args.quiet);
    let say = |msg: &str| {
        if mode != progress::Mode::Quiet {
            progress::say(msg);
        }
    };
    let run = session.spec.run.clone();
    let chosen = session.choose_engine(&backend::choose_for, &say)?;
    let mut engine = chosen.engine;
    if args.dry_run {
        return dry_run(
            &session,
            engine.as_mut(),
            &chosen.reason,
            &extras.shown_out(&session.out),
        );
    }
    let first_label = engine.label();
    // Ctrl-C from here on exits at once (saying how to resume), then (once
    // the loop watches the flag) stops the run cleanly.
    interrupt::set_resume_hint(&session.resume_hint());
    let todo = session.begin(&first_label, &say)?;
    say(&session.banner());
    let planned: f64 = todo
        .iter()
        .map(|p| f64::from(rounds::first_round(p, run.reps)) * rounds::rep_customers(p))
        .sum();
    let shape = estimate::Shape::of(&first_label, CpuEngine::new(run.threads).threads);
    if estimate::could_be_long(&todo, run.reps, shape) {
        // Long enough to be worth a sub-second look before starting.
        let cal = estimate::calibrate(engine.as_mut(), &todo, &session.table)?;
        let est = estimate::calibrated_estimate(&todo, run.reps, shape, &cal);
        if est.seconds > estimate::LONG_RUN_SECONDS {
            say(&format!(
                "qsweep: this run will take about {} ({:.3e} customers at {:.3e}/s measured on \
                 {}); Ctrl-C stops it and --resume continues it",
                progress::duration(est.seconds),
                est.customers,
                est.customers / est.seconds,
                engine.label()
            ));
        }
    }

    let mut progress = Progress::new(mode, session.in_file, session.done_before, planned);
    let mut wide_points: Vec<u32> = Vec::new();
    let wall = std::time::Instant::now();
    let can_fall_back = run.backend == Backend::Auto && first_label != "cpu";
    interrupt::set_watched();
    let result = session.simulate(
        todo,
        &mut engine,
        can_fall_back,
        &progress::say,
        &mut |session, fields, r| {
            extras.point(session, fields, r)?;
            report_point(session, r, &mut progress, &mut wide_points);
            Ok(())
        },
        interrupt::stop_flag(),
    );
    let rate = progress.rate();
    progress.finish();
    if !wide_points.is_empty() {
        // Shown even with --quiet (the per-point lines are not).
        let shown: Vec<String> = wide_points.iter().take(10).map(u32::to_string).collect();
        let more = if wide_points.len() > 10 { ", ..." } else { "" };
        progress::say(&format!(
            "qsweep: warning: {} of {} points have a mean-wait or p99 95% CI wider than \
             {}% of the estimate (points {}{more})",
            wide_points.len(),
            session.new_rows(),
            session::WIDE_CI * 100.0,
            shown.join(", ")
        ));
    }
    session.finish(result, &progress::say)?;
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

/// Show a finished point: its progress line and its warnings.
fn report_point(
    session: &Session,
    r: &PointResult<'_>,
    progress: &mut Progress,
    wide_points: &mut Vec<u32>,
) {
    let report = session::PointReport::of(&session.spec, r);
    progress.point(report.customers, || report.line.clone());
    if report.wide {
        wide_points.push(r.point.grid.index);
    }
    for (warning, always) in &report.warnings {
        if *always {
            progress::say(warning);
        } else {
            progress.note(warning);
        }
    }
}

/// What `qsweep run` writes besides its CSV and meta (see [`run_command`]).
#[derive(Default)]
pub struct Extras {
    /// `-o -`: rows to stdout as they come; the CSV itself goes to a
    /// temporary folder, removed at the end.
    stdout: Option<StdoutRows>,
    /// `-o x.json|.md|.parquet`: written from the CSV when the run completes.
    export: Option<(PathBuf, Format)>,
    /// An output name with an unknown extension: refused once the session
    /// has made its own checks (an output that is the spec, say, is named
    /// as such).
    bad_out: Option<qsweep_core::UsageError>,
    /// `--hist FILE`, opened at the first point (so bad input leaves no file).
    hist_path: Option<(PathBuf, bool, bool)>,
    hist: Option<HistSink>,
}

/// Checks `--hist FILE` before anything runs (issue 25): `-` is refused
/// (it made a file named `-`), so is a file that is one of the run's inputs
/// (the spec, the meta it comes from, an empirical data file), its output
/// CSV or that CSV's meta (`--hist s.toml --force` overwrote the spec), and
/// a path whose folder does not exist (which failed only after the first
/// point was simulated).
fn check_hist(hist: &std::path::Path, args: &RunArgs) -> Result<()> {
    let bad = |msg: String| -> anyhow::Error { qsweep_core::UsageError(msg).into() };
    if hist == std::path::Path::new("-") {
        return Err(bad(
            "--hist: '-' (stdout) is not supported; expected a file path for the histogram \
             rows"
                .into(),
        ));
    }
    qsweep_core::files::regular_output(hist, "--hist")?;
    let parent = match hist.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad(format!(
            "--hist: '{}' is in a folder that does not exist ('{}'); expected a path in an \
             existing folder",
            hist.display(),
            parent.display()
        )));
    }
    let spec = Spec::load(&args.sweep).ok();
    let mut taken: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(s) = &args.sweep.spec {
        taken.push(("the spec", s.clone()));
    }
    if let Some(m) = &args.from_meta {
        taken.push(("the --from-meta file", m.clone()));
    }
    let out = args
        .sweep
        .out
        .clone()
        .or_else(|| spec.as_ref().and_then(|s| s.run.out.clone()));
    if let Some(out) = out.filter(|o| o != std::path::Path::new("-")) {
        // `-o x.json` writes its rows to x.csv first.
        if let Ok(format) = Format::of_path(&out) {
            let csv = qsweep_core::export::csv_beside(&out, format);
            taken.push((
                "the output's meta file",
                qsweep_core::provenance::meta_path(&csv),
            ));
            taken.push(("the output", csv));
        }
        taken.push(("the output", out));
    }
    if let Some(spec) = &spec {
        for p in spec.points() {
            for d in [&p.arrival, &p.service] {
                if let Some(f) = d.data_file() {
                    taken.push(("an empirical data file", f.to_path_buf()));
                }
            }
        }
    }
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    };
    for (what, path) in &taken {
        if same(hist, path) {
            return Err(bad(format!(
                "--hist: '{}' is {what} of this run; expected a new path for the histogram rows",
                hist.display()
            )));
        }
    }
    Ok(())
}

/// `-o -`: the CSV on stdout.
struct StdoutRows {
    writer: csv::Writer<std::io::Stdout>,
    header_written: bool,
    /// Holds the run's CSV and meta (every run has them).
    tmp: PathBuf,
}

impl Drop for StdoutRows {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

impl Extras {
    /// Reads what the output asks for and rewrites `args` for the run
    /// itself (its CSV: a temporary one for `-o -`, `x.csv` for `x.json`).
    /// Every check runs here, before anything is simulated or written.
    fn prepare(args: &RunArgs) -> Result<(RunArgs, Extras)> {
        let mut args = args.clone();
        let mut extras = Extras::default();
        let force = args.sweep.force;
        if let Some(hist) = &args.hist {
            check_hist(hist, &args)?;
            if !args.resume {
                qsweep_core::export::check_new(hist, force)
                    .map_err(|e| qsweep_core::UsageError(e.0.replacen("out:", "--hist:", 1)))?;
            }
            extras.hist_path = Some((hist.clone(), force, args.resume));
        }
        // The output named by -o, else by the spec file's `out`.
        let out = match (&args.sweep.out, &args.from_meta) {
            (Some(out), _) => Some(out.clone()),
            (None, None) => Spec::load(&args.sweep).ok().and_then(|s| s.run.out),
            (None, Some(_)) => None,
        };
        let Some(out) = out else {
            return Ok((args, extras));
        };
        if out == std::path::Path::new("-") {
            if args.resume {
                return Err(qsweep_core::UsageError(
                    "--resume: -o - streams to stdout, which cannot be resumed; expected a \
                     file for --out"
                        .into(),
                )
                .into());
            }
            let tmp = std::env::temp_dir().join(format!(
                "qsweep-stdout-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ));
            std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            args.sweep.out = Some(tmp.join("results.csv"));
            extras.stdout = Some(StdoutRows {
                writer: csv::Writer::from_writer(std::io::stdout()),
                header_written: false,
                tmp,
            });
            return Ok((args, extras));
        }
        if out.to_string_lossy().ends_with(".meta.json") {
            // Not a JSON export: the session refuses a meta file's name.
            return Ok((args, extras));
        }
        let format = match Format::of_path(&out) {
            Ok(f) => f,
            Err(e) => {
                extras.bad_out = Some(e);
                return Ok((args, extras));
            }
        };
        if format != Format::Csv {
            if !args.resume {
                qsweep_core::export::check_new(&out, force)?;
            }
            args.sweep.out = Some(qsweep_core::export::csv_beside(&out, format));
            extras.export = Some((out, format));
        }
        Ok((args, extras))
    }

    /// Refuses an output name with an unknown extension (see `bad_out`).
    fn check_out(&mut self) -> Result<()> {
        match self.bad_out.take() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// A finished point's row (and histogram).
    fn point(&mut self, session: &Session, fields: &[String], r: &PointResult<'_>) -> Result<()> {
        if let Some(s) = self.stdout.as_mut() {
            let mut write = || -> csv::Result<()> {
                if !s.header_written {
                    let extra = session.extra_columns();
                    let header = output::COLUMNS.iter().copied();
                    s.writer
                        .write_record(header.chain(extra.iter().map(String::as_str)))?;
                    s.header_written = true;
                }
                s.writer.write_record(fields)?;
                Ok(s.writer.flush()?)
            };
            write().context("writing to stdout")?;
        }
        if let Some((path, force, append)) = self.hist_path.take() {
            self.hist = Some(HistSink::open(&path, force, append)?);
        }
        if let Some(h) = self.hist.as_mut() {
            h.write(r.point.grid.index, &r.hist, r.point.scale, r.stats.max_wait)?;
        }
        Ok(())
    }

    /// The run is complete and `csv` holds every row.
    fn finish(&mut self, csv: &std::path::Path) -> Result<()> {
        if let Some(s) = self.stdout.as_mut() {
            if !s.header_written {
                // No row ran: the header alone, as the CSV holds it.
                let table = Table::read_csv(csv)?;
                s.writer
                    .write_record(&table.header)
                    .and_then(|()| Ok(s.writer.flush()?))
                    .context("writing to stdout")?;
                s.header_written = true;
            }
        }
        if let Some((out, format)) = &self.export {
            let table = Table::read_csv(csv)?.ci_beside_estimates();
            qsweep_core::export::write_output(out, &table.encode(*format)?, true)?;
            eprintln!(
                "qsweep: wrote {} ({} rows as {}, CI columns beside their estimates; from {})",
                out.display(),
                table.rows.len(),
                format.extension(),
                csv.display()
            );
        }
        Ok(())
    }

    /// Where the rows went, as the last line says it.
    fn shown_out(&self, csv: &std::path::Path) -> String {
        match (&self.stdout, &self.export) {
            (Some(_), _) => "stdout".to_string(),
            (None, Some((out, _))) => format!("{} and {}", csv.display(), out.display()),
            (None, None) => csv.display().to_string(),
        }
    }

    /// The summary table: on stdout, unless the CSV is there.
    fn summary(&self, table: &str) -> Result<()> {
        if self.stdout.is_some() {
            eprint!("{table}");
            Ok(())
        } else {
            output::to_stdout(table)
        }
    }
}

/// Flags of `qsweep export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// A results CSV (of qsweep run, merge, or analytic -o)
    #[arg(value_name = "IN.csv")]
    pub input: PathBuf,
    /// The file to write, its format by extension (.csv, .json, .md, .parquet), or - for stdout
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    /// The format, whatever OUT's extension: csv, json, md or parquet [default: from OUT; csv for -]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Only these columns, in this order [comma-separated; default: all, CI columns beside their estimates]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Overwrite OUT if it exists
    #[arg(long)]
    pub force: bool,
}

/// `qsweep export`: a results CSV as JSON, Markdown, Parquet or CSV.
pub fn export(args: &ExportArgs) -> Result<()> {
    let stdout = args.out == std::path::Path::new("-");
    let format = match &args.format {
        Some(name) => Format::from_name(name)?,
        None if stdout => Format::Csv,
        None => match args.out.extension() {
            None => {
                return Err(qsweep_core::UsageError(format!(
                    "out: '{}' has no extension; expected {} (or --format)",
                    args.out.display(),
                    Format::EXPECTED
                ))
                .into())
            }
            Some(_) => Format::of_path(&args.out)?,
        },
    };
    let same = match (args.input.canonicalize(), args.out.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(qsweep_core::UsageError(format!(
            "out: '{}' is the input; expected a new file",
            args.out.display()
        ))
        .into());
    }
    let columns = (!args.columns.is_empty()).then_some(args.columns.as_slice());
    let rows = qsweep_core::export::export(&args.input, &args.out, format, columns, args.force)?;
    if !stdout {
        eprintln!(
            "qsweep: wrote {} ({rows} rows as {})",
            args.out.display(),
            format.extension()
        );
    }
    Ok(())
}

/// Flags of `qsweep merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The merged CSV to write (its .meta.json goes beside it)
    #[arg(value_name = "OUT.csv")]
    pub out: PathBuf,
    /// The pieces: CSVs of `qsweep run --shard K/N`, each with its .meta.json
    #[arg(value_name = "PIECE.csv", required = true)]
    pub pieces: Vec<PathBuf>,
    /// Overwrite OUT.csv if it exists
    #[arg(long)]
    pub force: bool,
}

/// `qsweep merge`: the pieces of a sharded sweep into one CSV.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let merged = merge::merge(&args.out, &args.pieces, args.force)?;
    output::to_stdout(output::summary_table(&merged.rows))?;
    eprintln!(
        "qsweep: merged {} pieces: {} rows to {} (provenance in {})",
        args.pieces.len(),
        merged.rows.len(),
        args.out.display(),
        merged.meta.display()
    );
    Ok(())
}

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

/// [`Spec::load`], whose error, when flags were given without a spec file,
/// names what came from the built-in study (issue 26: `--servers 10
/// --service 'exp(rate=1)'` was refused as unstable at the study's λ = 150
/// without saying where 150 came from). `skip`: axes not used (the one
/// `size` searches).
fn load_spec(args: &SweepArgs, skip: &[&str]) -> Result<Spec, qsweep_core::spec::SpecError> {
    Spec::load(args).map_err(|e| match inherited(args, skip) {
        Some(what) => qsweep_core::spec::SpecError(format!(
            "{e} (with no spec file, {what} came from the built-in study {SEED_SOURCE}: give \
             them as flags, or write a spec)"
        )),
        None => e,
    })
}

/// The axes a run without a spec file takes from the built-in study, with
/// their values (`lambda = 150`), when some axes were given as flags.
fn inherited(args: &SweepArgs, skip: &[&str]) -> Option<String> {
    if args.spec.is_some() || args.spec_text.is_some() {
        return None;
    }
    let a = &args.axes;
    let given = [
        &a.routing, &a.choices, &a.routers, &a.servers, &a.workers, &a.arrival, &a.lambda, &a.rho,
        &a.service,
    ];
    if given.iter().all(|v| v.is_empty()) {
        return None;
    }
    let seed = Spec::load(&SweepArgs::default()).ok()?;
    let join = |v: Vec<String>| v.join(", ");
    let mut parts = Vec::new();
    let mut add = |name: &str, empty: bool, value: String| {
        if empty && !skip.contains(&name) {
            parts.push(format!("{name} = {value}"));
        }
    };
    add(
        "routing",
        a.routing.is_empty(),
        join(seed.routing.iter().map(|r| r.to_string()).collect()),
    );
    add(
        "servers",
        a.servers.is_empty(),
        join(seed.servers.iter().map(|r| r.to_string()).collect()),
    );
    add(
        "lambda",
        a.lambda.is_empty() && a.rho.is_empty(),
        join(seed.load.iter().map(|l| num(l.value())).collect()),
    );
    add(
        "service",
        a.service.is_empty(),
        join(seed.service.iter().map(|s| s.text().to_string()).collect()),
    );
    (!parts.is_empty()).then(|| parts.join("; "))
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

/// `qsweep adapters`: every adapter wgpu sees.
pub fn adapters() -> Result<()> {
    if let Some(why) = qsweep_backend::backend::gpu_out_of_reach() {
        return output::to_stdout(format!(
            "GPU adapters not probed: {why} (qsweep will use its CPU engine)\n"
        ));
    }
    let list = list_adapters();
    if list.is_empty() {
        return output::to_stdout("no GPU adapters (qsweep will use its CPU engine)\n");
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|a| {
            vec![
                a.name.clone(),
                a.backend.clone(),
                a.device_type.clone(),
                a.driver.clone(),
            ]
        })
        .collect();
    output::to_stdout(output::align(&["name", "backend", "type", "driver"], &rows))
}

/// Flags of `qsweep kernels`.
#[derive(clap::Args, Debug)]
pub struct KernelsArgs {
    /// Folder to write into (created if absent): one .wgsl file per pipeline variant and manifest.tsv
    #[arg(long, short, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace .wgsl files and manifest.tsv already in DIR
    #[arg(long)]
    pub force: bool,
}

/// `qsweep kernels --out DIR`: every source the GPU engine can compile,
/// from the function it compiles from, for other compilers (CI: naga's
/// back ends, spirv-val, glslangValidator, Tint).
pub fn kernels(args: &KernelsArgs) -> Result<()> {
    let manifest = args.out.join("manifest.tsv");
    if manifest.exists() && !args.force {
        return Err(UsageError(format!(
            "--out: {} already holds a manifest.tsv; expected an empty or new folder (--force replaces it)",
            args.out.display()
        ))
        .into());
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(UsageError(format!(
            "--out: {} is not a folder; expected a folder to write kernels into",
            args.out.display()
        ))
        .into());
    }
    let n = qsweep_gpu::write_kernels(&args.out)?;
    output::to_stdout(format!(
        "{n} kernel sources and manifest.tsv written to {}\n",
        args.out.display()
    ))
}

/// Flags of `qsweep plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Results CSVs written by `qsweep run` (several: their rows in one
    /// figure, told apart by a `file` column), or histogram CSVs of `run
    /// --hist` (drawn as each point's tail P(wait > t) on log axes, labelled
    /// from the results CSV given before them)
    #[arg(required = true, num_args = 1..)]
    pub csv: Vec<PathBuf>,
    /// Output figure, .svg, .png or .pdf (default: the first CSV's name with .svg)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Column on the x axis [default: the axis that varies along a series:
    /// servers, rho, lambda, workers, choices or routers; bin_upper for histograms]
    #[arg(long)]
    pub x: Option<String>,
    /// Columns on the y axis, one panel each (comma-separated) [histograms: ccdf]
    #[arg(long, default_value = "mean_wait,p99_wait", value_delimiter = ',')]
    pub y: Vec<String>,
    /// One line per distinct value of these columns (comma-separated; "" for one
    /// line per panel); routing carries pod's d and the router count along
    /// [histograms: one curve per point, named by the axes that differ]
    #[arg(long, default_value = "routing", value_delimiter = ',')]
    pub by: Vec<String>,
    /// One row of panels per distinct value of these columns (comma-separated)
    #[arg(long, value_delimiter = ',')]
    pub facet: Vec<String>,
    /// Let the facet rows of each y column share one y range (by default each
    /// panel has its own)
    #[arg(long, conflicts_with = "free_y")]
    pub shared_y: bool,
    /// Give each panel its own y range (the default)
    #[arg(long)]
    pub free_y: bool,
    /// Logarithmic x axis (always, for histograms)
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis (the default)
    #[arg(long, conflicts_with = "linear_y")]
    pub log_y: bool,
    /// Linear y axis
    #[arg(long)]
    pub linear_y: bool,
    /// Draw the analytic_* columns over the simulated ones: exact methods
    /// dotted, approximations dashed, both named in the legend
    #[arg(long)]
    pub analytic: bool,
    /// Time unit of the spec, for axis labels (e.g. s, ms) [default: the `units` recorded in the CSV's .meta.json]
    #[arg(long)]
    pub time_unit: Option<String>,
    /// Figure title
    #[arg(long)]
    pub title: Option<String>,
    /// Overwrite the figure if it exists
    #[arg(long)]
    pub force: bool,
    /// Figure width: pixels (600), or a printed width (3.5in, 8.8cm, 89mm,
    /// 252pt; text then prints at 8-11 pt), or column / page [default: from
    /// the panels; a PDF: page, 7 in]
    #[arg(long, value_parser = parse_plot_length)]
    pub width: Option<qsweep_plot::Length>,
    /// Figure height, as --width [default: from the width and the panels]
    #[arg(long, value_parser = parse_plot_length)]
    pub height: Option<qsweep_plot::Length>,
    /// A printed size by name: column (3.5 in, one column of a two-column
    /// paper) or page (7 in, its text width); --width overrides it
    #[arg(long, value_parser = ["column", "page"])]
    pub size: Option<String>,
}

fn parse_plot_length(s: &str) -> Result<qsweep_plot::Length, String> {
    qsweep_plot::parse_length(s)
}

/// `qsweep plot`: results or histogram CSVs as a figure.
pub fn plot(args: &PlotArgs) -> Result<()> {
    use qsweep_plot::Length;
    let first = &args.csv[0];
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| first.with_extension("svg"));
    let list =
        |v: &[String]| -> Vec<String> { v.iter().filter(|s| !s.is_empty()).cloned().collect() };
    let preset = args
        .size
        .as_deref()
        .and_then(|s| qsweep_plot::PAPER_SIZES.iter().find(|p| p.0 == s))
        .map_or(0.0, |p| p.1);
    let (mut width, mut width_in) = (0, preset);
    match args.width {
        Some(Length::Px(px)) => (width, width_in) = (px, 0.0),
        Some(Length::Inches(i)) => width_in = i,
        None => {}
    }
    let (mut height, mut height_in) = (0, 0.0);
    match args.height {
        Some(Length::Px(px)) => height = px,
        Some(Length::Inches(i)) => height_in = i,
        None => {}
    }
    if (width_in > 0.0 || height_in > 0.0) && (width > 0 || height > 0) {
        return Err(qsweep_core::UsageError(
            "--width/--height: one in pixels and one in inches (or --size); expected both in \
             the same kind of unit"
                .to_string(),
        )
        .into());
    }
    let opts = PlotOptions {
        x: args.x.clone().unwrap_or_default(),
        y: list(&args.y),
        by: list(&args.by),
        facet: list(&args.facet),
        shared_y: args.shared_y,
        log_x: args.log_x,
        log_y: !args.linear_y,
        analytic: args.analytic,
        width,
        height,
        width_in,
        height_in,
        title: args.title.clone(),
        // Else the unit the run's spec declared (`units`), from its meta.
        time_unit: args
            .time_unit
            .clone()
            .or_else(|| args.csv.iter().find_map(|c| recorded_units(c))),
    };
    if !args.force && out.symlink_metadata().is_ok() {
        return Err(qsweep_core::UsageError(format!(
            "--out: '{}' already exists; expected a new file (pass --force to overwrite it)",
            out.display()
        ))
        .into());
    }
    let paths: Vec<&std::path::Path> = args.csv.iter().map(PathBuf::as_path).collect();
    let summary = plot_files(&paths, &out, &opts)?;
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    eprintln!(
        "qsweep: wrote {} ({} series)",
        out.display(),
        summary.series.len()
    );
    Ok(())
}

/// The `units` recorded in the `.meta.json` beside a results CSV, if any.
fn recorded_units(csv: &std::path::Path) -> Option<String> {
    let meta =
        qsweep_core::provenance::Meta::read(&qsweep_core::provenance::meta_path(csv)).ok()?;
    qsweep_core::spec::units_in_toml(&meta.spec_toml)
}

/// Flags of `qsweep bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Backends to measure: auto (the CPU and every usable GPU adapter), gpu or cpu
    #[arg(long, default_value = "auto", value_parser = qsweep_core::spec::Words::new(|| vec!["auto", "gpu", "cpu"]), hide_possible_values = true)]
    pub backend: String,
    /// Only the GPU adapter whose name contains this text
    #[arg(long)]
    pub adapter: Option<String>,
    /// Seconds each timed measurement should last, at least
    #[arg(long, default_value_t = 2.0, value_hint = clap::ValueHint::Other)]
    pub seconds: f64,
    /// Also write the table as CSV here (refused if it exists, unless --force)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Overwrite --out
    #[arg(long)]
    pub force: bool,
    /// Worker threads of the CPU engine (0 = all cores)
    #[arg(long, short = 'j', default_value_t = 0, value_hint = clap::ValueHint::Other)]
    pub threads: usize,
    /// Only cases whose name contains this text (e.g. "central")
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub only: Option<String>,
}

/// `qsweep bench`: customers/s per policy and backend, in one run.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let opts = qsweep_backend::bench::BenchOptions {
        backend: args
            .backend
            .parse()
            .map_err(|e| qsweep_core::UsageError(format!("--backend: {e}")))?,
        adapter: args.adapter.clone(),
        seconds: args.seconds,
        threads: args.threads,
        only: args.only.clone(),
    };
    opts.check()?;
    // Refuse an existing --out before measuring anything.
    let mut sink = match &args.out {
        Some(path) => {
            let file = output::create_file(path, args.force, " (pass --force to overwrite)")?;
            let mut w = csv::Writer::from_writer(file);
            w.write_record(qsweep_backend::bench::BENCH_COLUMNS)
                .with_context(|| format!("writing {}", path.display()))?;
            Some(w)
        }
        None => None,
    };
    let report = qsweep_backend::bench::run(&opts, &mut |row| {
        eprintln!(
            "qsweep: bench: {} done ({})",
            row.case,
            num(row.customers_per_s)
        );
    })?;
    output::to_stdout(report.table())?;
    if let Some(w) = sink.as_mut() {
        let path = args.out.as_ref().expect("out");
        let named = || format!("writing {}", path.display());
        for r in &report.rows {
            w.write_record(r.fields()).with_context(named)?;
        }
        w.flush().with_context(named)?;
        eprintln!(
            "qsweep: wrote {}",
            args.out.as_ref().expect("out").display()
        );
    }
    Ok(())
}

/// Flags of `qsweep completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `qsweep completions SHELL`: the completion script, from the clap
/// definition (so it can never list a flag that does not exist).
pub fn completions<C: clap::CommandFactory>(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = C::command();
    // Into memory first: clap_complete panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "qsweep", &mut script);
    output::to_stdout(script)
}

/// Flags of `qsweep man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write qsweep.1 and one qsweep-SUBCOMMAND.1 per subcommand into this folder instead
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `qsweep man`: the manual page, from the clap definition.
pub fn man<C: clap::CommandFactory>(args: &ManArgs) -> Result<()> {
    let cmd = C::command();
    match &args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            output::to_stdout(page)?;
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err(qsweep_core::UsageError(format!(
                    "--dir: '{}' is not a folder; expected an existing folder for the pages",
                    dir.display()
                ))
                .into());
            }
            clap_mangen::generate_to(cmd, dir)?;
            eprintln!("qsweep: wrote the manual pages to {}", dir.display());
        }
    }
    output::flush_stdout();
    Ok(())
}

/// Flags of `qsweep help`.
#[derive(clap::Args, Debug)]
pub struct HelpArgs {
    /// The subcommand (and its subcommands) to explain; none: qsweep itself
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `qsweep help [COMMAND]`: the same text as `qsweep [COMMAND] --help`.
pub fn help<C: clap::CommandFactory>(args: &HelpArgs) -> Result<()> {
    let mut cmd = C::command();
    // Built, so subcommands know their full name (`qsweep run`).
    cmd.build();
    let mut at = &mut cmd;
    for name in &args.command {
        let known: Vec<String> = at
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        at = match at.find_subcommand_mut(name) {
            Some(sub) => sub,
            None => {
                return Err(qsweep_core::UsageError(format!(
                    "help: '{name}' is not a subcommand; expected one of {}",
                    known.join(", ")
                ))
                .into())
            }
        };
    }
    output::to_stdout(at.render_help().to_string())
}

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
    let format = match &args.sweep.out {
        Some(out) if out != std::path::Path::new("-") => {
            let f = Format::of_path(out)?;
            qsweep_core::export::check_new(out, args.sweep.force)?;
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
        return size_dry_run(args, &spec, &cases, &targets, engine.as_mut(), &label);
    }
    for f in [&args.then_run, &args.hist].into_iter().flatten() {
        qsweep_core::export::check_new(f, args.sweep.force)?;
    }
    let journal_path = args
        .journal
        .clone()
        .unwrap_or_else(|| match &args.sweep.out {
            Some(out) if out != std::path::Path::new("-") => {
                PathBuf::from(format!("{}.journal.csv", out.with_extension("").display()))
            }
            _ => PathBuf::from("qsweep-size.journal.csv"),
        });
    let journal = size::Journal::open(&journal_path, args.resume, args.sweep.force)?;
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
    let mut evaluator =
        size::Evaluator::new(engine.as_mut(), args.simulate, stop).with_journal(journal, metrics);
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
                let found = size::search(case.first, args.max, target, &mut eval)?;
                per_search.push(found.evaluations.len());
                if let Some(a) = &found.answer {
                    if !answers.contains(&(id, a.n)) {
                        answers.push((id, a.n));
                    }
                }
                rows.push(size_row(case, target, &found, over));
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
    let header = SIZE_COLUMNS.map(String::from).to_vec();
    let table = Table { header, rows };
    let to_stdout = args.sweep.out.as_deref() == Some(std::path::Path::new("-"));
    if to_stdout {
        // stdout holds the CSV.
        eprint!("{}", size_summary(&table, &spec, over));
    } else {
        output::to_stdout(size_summary(&table, &spec, over))?;
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
    // Everything is in the output now.
    let _ = std::fs::remove_file(&journal_path);
    if let Some(then) = &args.then_run {
        size_then_run(args, &spec, &cases, &answers, engine.as_mut(), then)?;
    }
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

/// `qsweep size --dry-run`: the cases, how each target is judged, and the
/// time of one simulated evaluation at the first stable fleet.
fn size_dry_run(
    args: &SizeArgs,
    spec: &Spec,
    cases: &[qsweep_core::size::Case],
    targets: &[qsweep_core::size::Target],
    engine: &mut dyn Engine,
    label: &str,
) -> Result<()> {
    let mut out = format!(
        "qsweep size --dry-run: nothing simulated, nothing written\n{} case(s) × {} target(s); \
         each evaluation: {} replications × {} customers (+{} warm-up)\n",
        cases.len(),
        targets.len(),
        spec.run.reps,
        spec.run.customers,
        if spec.run.warmup_auto {
            "auto".to_string()
        } else {
            spec.run.warmup.to_string()
        }
    );
    let mut total = 0.0;
    for case in cases {
        let at = case.at(case.first);
        let points = at.points();
        let base = qsweep_core::run::baseline(&points[0]);
        let judged: Vec<String> = targets
            .iter()
            .map(|t| match t.metric.exact(&base).filter(|_| !args.simulate) {
                Some(_) => format!("{t}: exact ({})", base.method),
                None => format!("{t}: simulated"),
            })
            .collect();
        let simulated = judged.iter().any(|j| j.ends_with("simulated"));
        let mut line = format!(
            "  {}: from {}={} (the first stable); {}",
            case.describe(spec),
            case.over.name(),
            case.first,
            judged.join(", ")
        );
        if simulated {
            let (prepared, table) = qsweep_core::run::prepare(&at, points);
            let cal = estimate::calibrate(engine, &prepared, &table)?;
            let shape = estimate::Shape::of(label, CpuEngine::new(spec.run.threads).threads);
            let est = estimate::calibrated_estimate(&prepared, spec.run.reps, shape, &cal);
            // About 2·log2(R*) evaluations, shared by the case's targets;
            // larger fleets cost more for the whole-system policies.
            let evals = 2.0 * f64::from(case.first.max(2)).log2() + 4.0;
            total += evals * est.seconds;
            line.push_str(&format!(
                "; one evaluation at {}={}: about {} ({:.3e} customers); about {evals:.0} \
                 evaluations",
                case.over.name(),
                case.first,
                progress::duration(est.seconds),
                est.customers
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!(
        "estimated time: about {} on {label} (evaluations at larger fleets cost more for jsq, \
         pod, jiq, lwl and routers > 1); each is saved as it finishes, and --resume continues \
         a stopped search\n",
        progress::duration(total)
    ));
    output::to_stdout(out)
}

/// `qsweep size --then-run FILE`: every answer simulated as `qsweep run`
/// would (each case at its answer, point by point), its rows written to
/// FILE as a results CSV (and `--hist`).
fn size_then_run(
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
    let extra = output::extra_columns(
        &run_spec.run.quantiles,
        &[],
        run_spec.patience_mode(),
        run_spec.has_capacity(),
        run_spec.has_non_renewal_arrivals(),
        run_spec.has_fleet(),
    );
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
            let base = qsweep_core::run::baseline(&r.point.grid);
            let row = output::Row {
                point: &r.point.grid,
                reps: r.stats.reps as u32,
                customers: run_spec.run.customers,
                warmup: r.point.params.warmup,
                seed: run_spec.run.seed,
                stats: &r.stats,
                analytic: &base,
                backend: &label,
                seconds: r.seconds,
                converged: r.converged,
                truncation: r.point.pilot.map(|p| p.truncation),
                max_in_system: r.max_in_system,
                error: r.error.as_deref(),
            };
            let mut fields = row.fields();
            fields.extend(output::quantile_fields(
                &run_spec.run.quantiles,
                &r.hist,
                r.point.scale,
                r.stats.max_wait,
                qsweep_core::stats::TailModel::of(&r.point.grid.service),
            ));
            fields.extend(output::patience_fields(
                run_spec.patience_mode(),
                &r.point.grid,
                &r.stats,
                &base,
                r.error.is_some(),
            ));
            fields.extend(output::capacity_fields(
                run_spec.has_capacity(),
                &r.point.grid,
                &r.stats,
                &base,
                r.error.is_some(),
            ));
            fields.extend(output::dispersion_fields(
                run_spec.has_non_renewal_arrivals(),
                &r.point.grid,
            ));
            fields.extend(output::fleet_fields(
                run_spec.has_fleet(),
                &r.point.grid,
                &r.stats,
                &base,
                r.error.is_some(),
            ));
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

/// Columns of `qsweep size -o`.
const SIZE_COLUMNS: [&str; 20] = [
    "routing",
    "choices",
    "routers",
    "servers",
    "workers",
    "arrival",
    "lambda",
    "service",
    "target",
    "over",
    "answer",
    "method",
    "metric_at_answer",
    "metric_at_answer_ci95",
    "neighbour",
    "method_at_neighbour",
    "metric_at_neighbour",
    "metric_at_neighbour_ci95",
    "resolved",
    "evaluations",
];

/// One row of `qsweep size`'s table.
fn size_row(
    case: &qsweep_core::size::Case,
    target: &qsweep_core::size::Target,
    found: &qsweep_core::size::Sizing,
    over: qsweep_core::size::Over,
) -> Vec<String> {
    use qsweep_core::size::{Eval, Over};
    let s = &case.spec;
    let opt = |x: Option<f64>| x.map(num).unwrap_or_default();
    let value = |e: Option<&Eval>| {
        e.filter(|e| e.value.is_finite())
            .map(|e| num(e.value))
            .unwrap_or_default()
    };
    let answer = found.answer.as_ref();
    let nb = found.neighbour.as_ref();
    vec![
        s.routing[0].to_string(),
        if s.routing[0].takes_choices() {
            s.choices[0].to_string()
        } else {
            String::new()
        },
        s.routers[0].to_string(),
        match over {
            Over::Workers => s.servers[0].to_string(),
            Over::Servers => answer.map(|e| e.n.to_string()).unwrap_or_default(),
        },
        match over {
            Over::Servers => s.workers[0].to_string(),
            Over::Workers => answer.map(|e| e.n.to_string()).unwrap_or_default(),
        },
        s.arrival[0].text().to_string(),
        num(s.load[0].value()),
        s.service[0].text().to_string(),
        target.to_string(),
        over.name().to_string(),
        answer.map(|e| e.n.to_string()).unwrap_or_default(),
        answer.map(|e| e.how.to_string()).unwrap_or_default(),
        value(answer),
        opt(answer.and_then(|e| e.ci95)),
        nb.map(|e| e.n.to_string()).unwrap_or_default(),
        nb.map(|e| e.how.to_string()).unwrap_or_default(),
        value(nb),
        opt(nb.and_then(|e| e.ci95)),
        found.verdict.to_string(),
        found.evaluations.len().to_string(),
    ]
}

/// The table `qsweep size` prints: one line per case and target.
fn size_summary(table: &Table, spec: &Spec, over: qsweep_core::size::Over) -> String {
    let col = |name: &str| table.header.iter().position(|h| h == name).expect("column");
    let mut shown: Vec<&str> = vec!["routing"];
    if spec.routing.iter().any(|r| r.takes_choices()) {
        shown.push("choices");
    }
    let varies = |name: &str| {
        let i = col(name);
        table.rows.iter().any(|r| r[i] != table.rows[0][i])
    };
    let fixed = match over {
        qsweep_core::size::Over::Servers => "workers",
        qsweep_core::size::Over::Workers => "servers",
    };
    for c in ["routers", fixed, "arrival", "lambda", "service"] {
        if varies(c) {
            shown.push(c);
        }
    }
    let head: Vec<String> = shown
        .iter()
        .map(|s| s.to_string())
        .chain([
            "target".to_string(),
            over.name().to_string(),
            "at the answer".to_string(),
            "at one fewer".to_string(),
            "resolved".to_string(),
        ])
        .collect();
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|r| {
            let at = |v: &str, ci: &str, how: &str| match (how, ci) {
                ("", _) => String::new(),
                ("unstable" | "overflow", _) => how.to_string(),
                ("simulated", "") => format!("{v} (no CI)"),
                ("simulated", ci) => format!("{v} ± {ci}"),
                (_, _) => format!("{v} ({how})"),
            };
            let mut line: Vec<String> = shown.iter().map(|c| r[col(c)].clone()).collect();
            line.push(r[col("target")].clone());
            line.push(match r[col("answer")].as_str() {
                "" => "not met".into(),
                n => n.into(),
            });
            line.push(at(
                &r[col("metric_at_answer")],
                &r[col("metric_at_answer_ci95")],
                &r[col("method")],
            ));
            line.push(at(
                &r[col("metric_at_neighbour")],
                &r[col("metric_at_neighbour_ci95")],
                &r[col("method_at_neighbour")],
            ));
            line.push(r[col("resolved")].clone());
            line
        })
        .collect();
    // Text left-aligned, the answer right-aligned.
    let answer_col = shown.len() + 1;
    let mut all = vec![head];
    all.extend(rows);
    let widths: Vec<usize> = (0..all[0].len())
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == answer_col {
                    format!("{v:>w$}", w = widths[c])
                } else {
                    format!("{v:<w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
