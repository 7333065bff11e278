//! The subcommands: glue between the CLI and the library.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use anyhow::Result;

use qsweep::analytic;
use qsweep::backend::{self, Backend};
use qsweep::engine::cpu::CpuEngine;
use qsweep::engine::gpu::list_adapters;
use qsweep::engine::Engine;
use qsweep::merge;
use qsweep::output::{self, num, CsvSink, Row};
use qsweep::plot::{plot_csv, PlotOptions};
use qsweep::progress::{self, Progress};
use qsweep::provenance::{self, Invocation, Meta, Status, META_FORMAT};
use qsweep::resume::{self, scan_csv, Expect, Scanned, Shard};
use qsweep::spec::{default_out_path, Spec, SweepArgs, SEED_SOURCE};
use qsweep::sweep::{self, Interrupted, PointResult, PreparedPoint};
use qsweep::UsageError;

/// Flags of `qsweep run`.
#[derive(clap::Args, Debug)]
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
}

/// Set by Ctrl-C (or SIGTERM, SIGHUP): stop after the points in flight.
static STOP: AtomicBool = AtomicBool::new(false);
/// What Ctrl-C prints: how to resume.
static RESUME_HINT: Mutex<String> = Mutex::new(String::new());

fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}

/// `qsweep run`: simulate the grid (or a shard of it), one CSV row per point,
/// with a `.meta.json` beside the CSV.
pub fn run(args: &RunArgs) -> Result<()> {
    let flag_shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    if args.resume && args.sweep.force {
        return Err(usage(
            "--resume: given together with --force; expected one of them (--resume keeps the \
             CSV's rows, --force overwrites it)"
                .into(),
        ));
    }
    let (mut spec, meta_shard, spec_dir) = match &args.from_meta {
        Some(path) => load_from_meta(path, &args.sweep)?,
        None => {
            let spec = Spec::load(&args.sweep)?;
            let dir = match args.sweep.spec.as_deref().and_then(Path::parent) {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let dir = dir.canonicalize().unwrap_or(dir).display().to_string();
            (spec, None, dir)
        }
    };
    let shard = flag_shard.or(meta_shard);
    let named_out = spec.run.out.is_some();
    if args.resume && !named_out {
        return Err(usage(
            "--resume: no CSV named; expected --out/-o with the CSV to resume (or --from-meta)"
                .into(),
        ));
    }
    let out = spec
        .run
        .out
        .clone()
        .unwrap_or_else(|| default_out_path(Path::new(".")));
    spec.run.out = Some(out.clone());
    let mode = progress::Mode::detect(args.quiet);
    let say = |msg: &str| {
        if mode != progress::Mode::Quiet {
            progress::say(msg);
        }
    };

    let points = spec.points();
    let total = points.len() as u64;
    let (prepared, table) = sweep::prepare(&spec, points);
    let hash = provenance::spec_hash(&spec, &table);
    let meta_file = provenance::meta_path(&out);
    let expect = Expect {
        total,
        shard,
        seed: spec.run.seed,
    };
    let started = provenance::now_rfc3339();

    // What the CSV already holds (--resume), checked before any engine starts.
    let resuming = args.resume && out.symlink_metadata().is_ok();
    let mut previous_runs = Vec::new();
    let mut first_started = started.clone();
    let mut scanned = Scanned::default();
    if resuming {
        let old = meta_file
            .exists()
            .then(|| Meta::read(&meta_file))
            .transpose()?;
        if let Some(m) = &old {
            if m.spec_hash != hash {
                let why = if m.seed != spec.run.seed {
                    format!("seed {}, this run has seed {}", m.seed, spec.run.seed)
                } else {
                    format!("spec hash {}, this spec has {hash}", m.spec_hash)
                };
                return Err(usage(format!(
                    "--resume: '{}' was written by a different spec ({why}); expected the spec \
                     and seed it was started with (or a new --out)",
                    out.display()
                )));
            }
            let this = shard.map(|s| s.to_string());
            if m.shard != this {
                let show = |s: &Option<String>| s.clone().unwrap_or_else(|| "none".into());
                return Err(usage(format!(
                    "--resume: '{}' holds shard {}, this run is shard {}; expected the same \
                     --shard",
                    out.display(),
                    show(&m.shard),
                    show(&this)
                )));
            }
            previous_runs = m.previous_runs.clone();
            let mut last = m.run.clone();
            if last.status == Status::Running {
                // Killed without a word: say so in the record.
                last.ended = None;
            }
            previous_runs.push(last);
            first_started = m.first_started.clone();
        }
        scanned = scan_csv(&out, &expect)?;
        if old.is_none() && !scanned.rows.is_empty() {
            return Err(usage(format!(
                "--resume: '{}' has no '{}' beside it, so nothing shows which spec wrote it; \
                 expected a CSV written by qsweep run (or pass --force to start it over)",
                out.display(),
                meta_file.display()
            )));
        }
    } else if !spec.run.force && out.symlink_metadata().is_ok() {
        // Refuse before opening an engine (CsvSink::create would too).
        return Err(usage(format!(
            "out: '{}' already exists; expected a new file (pass --force to overwrite it, or \
             --resume to continue it)",
            out.display()
        )));
    }

    let sample_params: Vec<_> = prepared.iter().map(|p| p.params).collect();
    let sample_params = backend::calibration_sample(&sample_params);
    let chosen = backend::choose_for(
        spec.run.backend,
        spec.run.adapter.as_deref(),
        spec.run.threads,
        &backend::Sample {
            params: &sample_params,
            table: &table,
        },
    )?;
    say(&format!("qsweep: backend: {}", chosen.reason));
    let mut engine = chosen.engine;
    let first_label = engine.label();

    let mut sink = if resuming {
        if scanned.no_header {
            resume::truncate(&out, 0)?;
        } else if let Some((line, bytes)) = scanned.torn {
            say(&format!(
                "qsweep: resume: dropping the cut-short last line of {} (line {line}, {bytes} \
                 bytes); its point runs again",
                out.display()
            ));
            resume::truncate(&out, scanned.good_len)?;
        }
        CsvSink::append(&out)?
    } else {
        if args.resume {
            say(&format!(
                "qsweep: resume: {} does not exist yet; starting it",
                out.display()
            ));
        }
        CsvSink::create(&out, spec.run.force)?
    };

    let mut todo: Vec<PreparedPoint> = prepared
        .into_iter()
        .filter(|p| shard.is_none_or(|s| s.contains(p.grid.index)))
        .filter(|p| !scanned.points.contains(&p.grid.index))
        .collect();
    let in_file = shard.map_or(total, |s| s.size(total));
    let done_before = scanned.rows.len() as u64;
    if spec.run.warmup_auto && !todo.is_empty() {
        choose_warmups(&mut todo, &table, spec.run.threads, &say);
    }

    let mut meta = Meta {
        format: META_FORMAT.to_string(),
        csv: merge::file_name(&out),
        spec_hash: hash,
        seed: spec.run.seed,
        spec_toml: spec.to_toml(),
        spec_source: spec.source.clone(),
        spec_dir,
        points_total: total,
        shard: shard.map(|s| s.to_string()),
        points: in_file,
        points_done: done_before,
        backend: spec.run.backend.to_string(),
        adapter: spec.run.adapter.clone(),
        run: Invocation {
            command: provenance::command_line(),
            cwd: provenance::cwd(),
            host: provenance::hostname(),
            qsweep_version: provenance::VERSION.to_string(),
            git_revision: provenance::GIT_REVISION.to_string(),
            engine: first_label.clone(),
            started,
            ended: None,
            status: Status::Running,
            points_run: 0,
        },
        first_started,
        error: None,
        previous_runs,
        pieces: Vec::new(),
    };
    meta.write(&meta_file)?;

    let hint = resume_hint(&out, !named_out);
    if let Ok(mut h) = RESUME_HINT.lock() {
        h.clone_from(&hint);
    }
    install_interrupt_handler();

    let shard_note = shard
        .map(|s| format!("; shard {s}: {in_file} of the {total} points"))
        .unwrap_or_default();
    let resume_note = if resuming {
        format!("; resuming: {done_before} of {in_file} done")
    } else {
        String::new()
    };
    let reps_note = match spec.run.precision {
        Some(p) => format!(
            "{}+ replications (until ±{} at 95%, at most {:.3e} customers a point)",
            spec.run.reps.max(qsweep::precision::MIN_FIRST_ROUND),
            num(p),
            spec.run.max_customers as f64
        ),
        None => format!("{} replications", spec.run.reps),
    };
    let warmup_note = if spec.run.warmup_auto {
        "auto".to_string()
    } else {
        spec.run.warmup.to_string()
    };
    say(&format!(
        "qsweep: {} points × {reps_note} × {} customers (+{warmup_note} warm-up) from {} → {}\
         {shard_note}{resume_note}",
        total,
        spec.run.customers,
        spec.source,
        out.display()
    ));

    let mut rows = scanned.rows;
    let mut progress = Progress::new(mode, in_file, done_before);
    let mut sim_seconds = 0.0;
    let mut sim_customers = 0.0;
    let mut wide_points: Vec<u32> = Vec::new();
    let mut new_rows = 0u64;
    let mut labels = vec![first_label.clone()];
    let wall = std::time::Instant::now();
    let can_fall_back = spec.run.backend == Backend::Auto && first_label != "cpu";
    let threads = spec.run.threads;
    let mut fallback = |e: &anyhow::Error, left: usize| -> Result<Box<dyn Engine>> {
        let cpu = CpuEngine::new(threads);
        let e = format!("{e:#}").replace('\n', " ");
        progress::say(&format!(
            "qsweep: {e}; the rows before it are kept; continuing on the CPU engine ({} \
             threads) for the remaining {left} points",
            cpu.threads
        ));
        Ok(Box::new(cpu))
    };
    let result = resume::run_surviving(
        todo,
        &table,
        spec.run.reps,
        &mut engine,
        can_fall_back.then_some(&mut fallback as resume::Fallback<'_>),
        &mut |r: PointResult<'_>, label: &str| {
            let baseline = sweep::baseline(&r.point.grid);
            let warmup = r.point.params.warmup;
            let row = Row {
                point: &r.point.grid,
                reps: r.stats.reps as u32,
                customers: spec.run.customers,
                warmup,
                seed: spec.run.seed,
                stats: &r.stats,
                analytic: &baseline,
                backend: label,
                seconds: r.seconds,
                converged: r.converged,
            };
            let simulated =
                r.stats.reps as f64 * (f64::from(spec.run.customers) + f64::from(warmup));
            let fields = row.fields();
            sink.write(&fields)?;
            new_rows += 1;
            sim_seconds += r.seconds;
            sim_customers += simulated;
            if labels.last().is_none_or(|l| l != label) {
                labels.push(label.to_string());
            }
            progress.point(simulated, || {
                let theory = baseline
                    .mean_wait
                    .map(|m| format!(" (theory {})", num(m)))
                    .unwrap_or_default();
                format!(
                    "{} rho={}: mean wait {} ± {}{theory}, p99 {}",
                    spec.describe(&r.point.grid),
                    num(r.point.grid.rho),
                    num(r.stats.mean_wait),
                    r.stats
                        .mean_wait_ci95
                        .map(num)
                        .unwrap_or_else(|| "?".into()),
                    num(r.stats.wait_pct[3]),
                )
            });
            if let Some(why) = wide_ci(&r.stats) {
                wide_points.push(r.point.grid.index);
                progress.note(&format!(
                    "qsweep: warning: point {} ({}): {why}; its digits are not to be trusted (more \
                     --reps or --customers, or --precision)",
                    r.point.grid.index,
                    spec.describe(&r.point.grid)
                ));
            }
            if r.stats.failed_reps > 0 {
                progress.note(&format!(
                    "qsweep: warning: point {}: {} replications hit a sampler bound",
                    r.point.grid.index, r.stats.failed_reps
                ));
            }
            rows.push(fields);
            Ok(())
        },
        &STOP,
    );
    let rate = progress.rate();
    progress.finish();
    if !wide_points.is_empty() {
        // Shown even with --quiet (the per-point lines are not).
        let shown: Vec<String> = wide_points.iter().take(10).map(u32::to_string).collect();
        let more = if wide_points.len() > 10 { ", ..." } else { "" };
        progress::say(&format!(
            "qsweep: warning: {} of {new_rows} points have a mean-wait or p99 95% CI wider than \
             {}% of the estimate (points {}{more})",
            wide_points.len(),
            WIDE_CI * 100.0,
            shown.join(", ")
        ));
    }
    // The rows on disk before the meta file says how many there are.
    let synced = sink.sync();
    if result.is_ok() {
        synced?;
    }

    meta.points_done = done_before + new_rows;
    meta.run.points_run = new_rows;
    meta.run.engine = labels.join(", then ");
    meta.run.ended = Some(provenance::now_rfc3339());
    meta.run.status = match &result {
        Ok(()) => Status::Complete,
        Err(e) if e.is::<Interrupted>() => Status::Interrupted,
        Err(_) => Status::Failed,
    };
    if let Err(e) = &result {
        if !e.is::<Interrupted>() {
            meta.error = Some(format!("{e:#}"));
        }
    }
    meta.write(&meta_file)?;

    if let Err(e) = result {
        let kept = format!(
            "{} of {in_file} points are in {}",
            meta.points_done,
            out.display()
        );
        if e.is::<Interrupted>() {
            progress::say(&format!(
                "qsweep: interrupted; {kept}. To resume:\n  {hint}"
            ));
        } else {
            progress::say(&format!(
                "qsweep: the run stopped; {kept}. After fixing the cause, resume with:\n  {hint}"
            ));
        }
        return Err(e);
    }

    print!("{}", output::summary_table(&rows));
    output::flush_stdout();
    if new_rows == 0 {
        eprintln!(
            "qsweep: nothing left to run: {} already holds all {} points",
            sink.path().display(),
            rows.len()
        );
        return Ok(());
    }
    let resumed = if done_before > 0 {
        format!(" ({} in all)", rows.len())
    } else {
        String::new()
    };
    eprintln!(
        "qsweep: wrote {new_rows} rows{resumed} to {} in {:.1} s ({:.3e} customers/s on {}; {:.3e} \
         in the engine)",
        sink.path().display(),
        wall.elapsed().as_secs_f64(),
        rate,
        meta.run.engine,
        sim_customers / sim_seconds.max(1e-9)
    );
    Ok(())
}

/// A CI half-width above this fraction of its estimate earns a warning.
const WIDE_CI: f64 = 0.10;

/// Why a point's mean-wait or p99 CI is too wide to trust (None: fine).
fn wide_ci(s: &qsweep::stats::PointStats) -> Option<String> {
    let mut why = Vec::new();
    for (name, est, hw) in [
        ("mean wait", s.mean_wait, s.mean_wait_ci95),
        ("p99 wait", s.wait_pct[3], s.wait_pct_ci95[3]),
    ] {
        match hw {
            None => why.push(format!("{name} has no CI ({} replication)", s.reps)),
            Some(hw) if hw > WIDE_CI * est => {
                why.push(format!("{name} {} ± {} (95%)", num(est), num(hw)))
            }
            Some(_) => {}
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// `--warmup auto`: each point's warm-up from MSER-5 on a CPU pilot run.
fn choose_warmups(points: &mut [PreparedPoint], table: &[f32], threads: usize, say: &dyn Fn(&str)) {
    let started = std::time::Instant::now();
    qsweep::warmup::resolve(points, table, threads);
    let warmups: Vec<u32> = points.iter().map(|p| p.params.warmup).collect();
    let (lo, hi) = (
        warmups.iter().min().copied().unwrap_or(0),
        warmups.iter().max().copied().unwrap_or(0),
    );
    let piloted: f64 = points
        .iter()
        .filter_map(|p| p.pilot)
        .map(|q| f64::from(q.customers) * f64::from(q.reps))
        .sum();
    say(&format!(
        "qsweep: warm-up auto: MSER-5 on CPU pilots of {} points ({:.3e} customers) in {:.1} s: \
         warm-ups {lo}..={hi} customers",
        points.len(),
        piloted,
        started.elapsed().as_secs_f64()
    ));
    for p in points.iter() {
        if let Some(pilot) = p.pilot.filter(|q| q.at_limit) {
            progress::say(&format!(
                "qsweep: warning: point {}: the warm-up pilot ({} customers × {} replications) \
                 saw no end of the transient in its first half; warm-up {} may be too short",
                p.grid.index, pilot.customers, pilot.reps, p.params.warmup
            ));
        }
    }
}

/// `qsweep run --from-meta`: the recorded spec, with the flags that may
/// change applied; its shard; the directory its `file=` paths resolve in.
fn load_from_meta(path: &Path, a: &SweepArgs) -> Result<(Spec, Option<Shard>, String)> {
    let mut given = Vec::new();
    if a.spec.is_some() {
        given.push("SPEC".to_string());
    }
    for (name, set) in [
        ("routing", !a.routing.is_empty()),
        ("servers", !a.servers.is_empty()),
        ("workers", !a.workers.is_empty()),
        ("arrival", !a.arrival.is_empty()),
        ("lambda", !a.lambda.is_empty()),
        ("rho", !a.rho.is_empty()),
        ("service", !a.service.is_empty()),
        ("choices", !a.choices.is_empty()),
        ("routers", !a.routers.is_empty()),
        ("reps", a.reps.is_some()),
        ("customers", a.customers.is_some()),
        ("warmup", a.warmup.is_some()),
        ("precision", a.precision.is_some()),
        ("max-customers", a.max_customers.is_some()),
        ("seed", a.seed.is_some()),
        ("allow-unstable", a.allow_unstable),
    ] {
        if set {
            given.push(format!("--{name}"));
        }
    }
    if !given.is_empty() {
        return Err(usage(format!(
            "--from-meta: the spec comes from '{}'; expected no {} (only --out, --backend, \
             --adapter, --threads, --shard, --force, --resume, --quiet)",
            path.display(),
            given.join(", ")
        )));
    }
    let meta = Meta::read(path)?;
    let mut spec = Spec::from_toml_str(
        &meta.spec_toml,
        &format!("{} spec_toml", path.display()),
        Path::new(&meta.spec_dir),
    )?;
    spec.source = meta.spec_source.clone();
    let beside = path.parent().unwrap_or(Path::new("")).join(&meta.csv);
    spec.run.out = Some(a.out.clone().unwrap_or(beside));
    if let Some(b) = &a.backend {
        let b = b.trim();
        spec.run.backend = b.parse().map_err(|_| {
            usage(format!(
                "--backend: '{b}' is not a valid value; expected {}",
                Backend::EXPECTED
            ))
        })?;
    }
    if let Some(name) = &a.adapter {
        spec.run.adapter = Some(name.clone());
    }
    if let Some(t) = &a.threads {
        spec.run.threads = t.trim().parse().map_err(|_| {
            usage(format!(
                "--threads: '{t}' is not a valid value; expected an integer >= 0 (0 = all cores)"
            ))
        })?;
    }
    spec.run.force = a.force;
    let shard = meta.shard.as_deref().map(Shard::parse).transpose()?;
    Ok((spec, shard, meta.spec_dir))
}

/// This command line with `--resume` (and `-o OUT` when the name was
/// chosen by default; `--force` dropped).
fn resume_hint(out: &Path, add_out: bool) -> String {
    let mut args: Vec<String> = provenance::command_line()
        .into_iter()
        .filter(|a| a != "--force")
        .collect();
    if add_out {
        args.push("-o".into());
        args.push(out.display().to_string());
    }
    if !args.iter().any(|a| a == "--resume") {
        args.push("--resume".into());
    }
    provenance::shell_join(&args)
}

/// Ctrl-C and SIGTERM (a batch scheduler's notice) set [`STOP`]; a second
/// one exits at once (the CSV's whole rows are kept either way). SIGHUP is
/// left alone, so `nohup qsweep run ...` survives a closed terminal.
#[cfg(unix)]
fn install_interrupt_handler() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            progress::say(&format!(
                "qsweep: warning: cannot catch Ctrl-C ({e}); the CSV stays resumable anyway"
            ));
            return;
        }
    };
    std::thread::spawn(move || {
        for _ in signals.forever() {
            let hint = RESUME_HINT.lock().map(|h| h.clone()).unwrap_or_default();
            if STOP.swap(true, Ordering::SeqCst) {
                progress::say(&format!(
                    "qsweep: stopped at once; the CSV keeps its whole rows. To resume:\n  {hint}"
                ));
                std::process::exit(130);
            }
            progress::say(
                "qsweep: interrupt: finishing the points being simulated, then stopping (press \
                 Ctrl-C again to stop at once)",
            );
        }
    });
}

/// Elsewhere Ctrl-C ends the process; the CSV stays resumable.
#[cfg(not(unix))]
fn install_interrupt_handler() {}

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
    print!("{}", output::summary_table(&merged.rows));
    output::flush_stdout();
    eprintln!(
        "qsweep: merged {} pieces: {} rows to {} (provenance in {})",
        args.pieces.len(),
        merged.rows.len(),
        args.out.display(),
        merged.meta.display()
    );
    Ok(())
}

/// `qsweep analytic`: the grid's analytic baselines, no simulation.
pub fn analytic(args: &SweepArgs) -> Result<()> {
    let spec = Spec::load(args)?;
    let points = spec.points();
    let header = [
        "point",
        "routing",
        "servers",
        "workers",
        "choices",
        "routers",
        "arrival",
        "lambda",
        "service",
        "rho",
        "analytic_mean_wait",
        "analytic_p99_wait",
        "analytic_method",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in &points {
        let b = sweep::baseline(p);
        rows.push(vec![
            p.index.to_string(),
            p.routing.to_string(),
            p.servers.to_string(),
            p.workers.to_string(),
            p.choices.map(|c| c.to_string()).unwrap_or_default(),
            p.routers.to_string(),
            p.arrival_text.clone(),
            num(p.lambda),
            p.service.text().to_string(),
            num(p.rho),
            b.mean_wait.map(num).unwrap_or_default(),
            b.p99_wait.map(num).unwrap_or_default(),
            b.method,
        ]);
    }
    if let Some(out) = &spec.run.out {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(spec.run.force)
            .truncate(spec.run.force)
            .create_new(!spec.run.force)
            .open(out)
            .map_err(|e| {
                qsweep::UsageError(format!("out: cannot create '{}': {e}", out.display()))
            })?;
        let mut w = csv::Writer::from_writer(file);
        w.write_record(header)?;
        for r in &rows {
            w.write_record(r)?;
        }
        w.flush()?;
        eprintln!("qsweep: wrote {} rows to {}", rows.len(), out.display());
    }
    print!("{}", align(&header, &rows));
    if spec.source == SEED_SOURCE {
        println!(
            "\nThe published analysis beside exact theory (λ = 150/s, μ = 3/s; mean wait in ms):"
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
        print!("{}", align(&h, &r));
        println!("The published central-queue row is 1/(Rμ−λ): Erlang C's wait with P(wait) set to 1. The exact M/M/R wait is C(R, λ/μ)/(Rμ−λ).");
    }
    Ok(())
}

fn align(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut all = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    all.extend(rows.iter().cloned());
    let widths: Vec<usize> = (0..header.len())
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| format!("{v:>w$}", w = widths[c]))
            .collect();
        out.push_str(&line.join("  "));
        out.push('\n');
    }
    out
}

/// `qsweep adapters`: every adapter wgpu sees.
pub fn adapters() -> Result<()> {
    let list = list_adapters();
    if list.is_empty() {
        println!("no GPU adapters (qsweep will use its CPU engine)");
        return Ok(());
    }
    let header = ["name", "backend", "type", "driver"];
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
    print!("{}", align(&header, &rows));
    Ok(())
}

/// Flags of `qsweep plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Results CSV written by `qsweep run`
    pub csv: PathBuf,
    /// Output figure, .svg or .png (default: the CSV's name with .svg)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Column on the x axis
    #[arg(long, default_value = "servers")]
    pub x: String,
    /// Columns on the y axis, one panel each (comma-separated)
    #[arg(long, default_value = "mean_wait,p99_wait", value_delimiter = ',')]
    pub y: Vec<String>,
    /// One line per distinct value of this column ("" for one line per panel)
    #[arg(long, default_value = "routing")]
    pub by: String,
    /// One row of panels per distinct value of this column
    #[arg(long)]
    pub facet: Option<String>,
    /// Logarithmic x axis
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis (the default)
    #[arg(long, conflicts_with = "linear_y")]
    pub log_y: bool,
    /// Linear y axis
    #[arg(long)]
    pub linear_y: bool,
    /// Draw the analytic_* columns as dashed lines
    #[arg(long)]
    pub analytic: bool,
    /// Time unit of the spec, for axis labels (e.g. s, ms)
    #[arg(long)]
    pub time_unit: Option<String>,
    /// Figure title
    #[arg(long)]
    pub title: Option<String>,
    /// Width and height in SVG pixels (0: automatic)
    #[arg(long, default_value_t = 0)]
    pub width: u32,
    #[arg(long, default_value_t = 0)]
    pub height: u32,
}

/// `qsweep plot`: a results CSV as a figure.
pub fn plot(args: &PlotArgs) -> Result<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.csv.with_extension("svg"));
    let opts = PlotOptions {
        x: args.x.clone(),
        y: args.y.iter().filter(|s| !s.is_empty()).cloned().collect(),
        by: args.by.clone(),
        facet: args.facet.clone(),
        log_x: args.log_x,
        log_y: !args.linear_y,
        analytic: args.analytic,
        width: args.width,
        height: args.height,
        title: args.title.clone(),
        time_unit: args.time_unit.clone(),
    };
    let summary = plot_csv(&args.csv, &out, &opts)?;
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

/// Flags of `qsweep bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Backends to measure: auto (the CPU and every usable GPU adapter), gpu or cpu
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Only the GPU adapter whose name contains this text
    #[arg(long)]
    pub adapter: Option<String>,
    /// Seconds each timed measurement should last, at least
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Also write the table as CSV here (refused if it exists, unless --force)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Overwrite --out
    #[arg(long)]
    pub force: bool,
    /// Worker threads of the CPU engine (0 = all cores)
    #[arg(long, short = 'j', default_value_t = 0)]
    pub threads: usize,
    /// Only cases whose name contains this text (e.g. "central")
    #[arg(long)]
    pub only: Option<String>,
}

/// `qsweep bench`: customers/s per policy and backend, in one run.
pub fn bench(args: &BenchArgs) -> Result<()> {
    use qsweep::bench::{measure_for, standard_cases, BenchRow, BENCH_COLUMNS};
    use qsweep::engine::gpu::{AdapterChoice, GpuEngine};
    if !(args.seconds > 0.0 && args.seconds.is_finite()) {
        return Err(qsweep::UsageError(format!(
            "--seconds: '{}' is not valid; expected a positive number",
            args.seconds
        ))
        .into());
    }
    let backend: Backend = args
        .backend
        .parse()
        .map_err(|e| qsweep::UsageError(format!("--backend: {e}")))?;
    // Refuse an existing --out before measuring anything.
    let mut sink = match &args.out {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(args.force)
                .truncate(args.force)
                .create_new(!args.force)
                .open(path)
                .map_err(|e| {
                    qsweep::UsageError(format!(
                        "out: cannot create '{}': {e} (pass --force to overwrite)",
                        path.display()
                    ))
                })?;
            let mut w = csv::Writer::from_writer(file);
            w.write_record(BENCH_COLUMNS)?;
            Some(w)
        }
        None => None,
    };
    let mut gpu = None;
    if backend != Backend::Cpu {
        match GpuEngine::open(&AdapterChoice {
            name: args.adapter.clone(),
        }) {
            Ok(g) => gpu = Some(g),
            Err(e) if backend == Backend::Gpu => return Err(e),
            Err(e) => eprintln!("qsweep: bench: no GPU engine ({e:#}); measuring the CPU only"),
        }
    }
    let mut cpu = (backend != Backend::Gpu).then(|| CpuEngine::new(args.threads));
    // Each backend's peak arithmetic rate, for the fraction of peak.
    let peak_seconds = args.seconds.min(1.0);
    let cpu_peak = cpu
        .as_ref()
        .map(|c| qsweep::engine::cpu::peak_ops_per_second(c.threads, peak_seconds));
    let gpu_peak = match gpu.as_mut() {
        Some(g) => Some(g.peak_ops_per_second(peak_seconds)?),
        None => None,
    };
    let mut rows = Vec::new();
    for case in standard_cases() {
        if args.only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        // The CPU engine is the kernels' twin: the same operations.
        let ops_per_customer = qsweep::engine::opcount::ops_per_customer(
            &qsweep::engine::gpu::Specialization::of(&case.params).source(),
            &case.params,
        );
        let mut cpu_rate = None;
        if let Some(cpu) = cpu.as_mut() {
            let (customers, wall) = measure_for(cpu, &case, args.seconds)?;
            let rate = customers / wall;
            cpu_rate = Some(rate);
            rows.push(BenchRow {
                case: case.name,
                backend: "cpu".into(),
                adapter: format!("{} threads", cpu.threads),
                driver: String::new(),
                customers,
                wall_seconds: wall,
                device_seconds: None,
                customers_per_s: rate,
                ratio_to_cpu: Some(1.0),
                ops_per_customer,
                peak_ops_per_s: cpu_peak,
            });
        }
        if let Some(gpu) = gpu.as_mut() {
            let (customers, wall) = measure_for(gpu, &case, args.seconds)?;
            let rate = customers / wall;
            let desc = gpu.adapter().clone();
            rows.push(BenchRow {
                case: case.name,
                backend: desc.backend.clone(),
                adapter: desc.name.clone(),
                driver: desc.driver.clone(),
                customers,
                wall_seconds: wall,
                device_seconds: Some(gpu.last_device_seconds),
                customers_per_s: rate,
                ratio_to_cpu: cpu_rate.map(|c| rate / c),
                ops_per_customer,
                peak_ops_per_s: gpu_peak,
            });
        }
        let last = rows.last().expect("a row per case");
        eprintln!(
            "qsweep: bench: {} done ({})",
            case.name,
            num(last.customers_per_s)
        );
    }
    let header = [
        "case",
        "backend",
        "adapter",
        "customers/s",
        "wall s",
        "device s",
        "vs cpu",
        "ops/cust",
        "of peak",
    ];
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.case.to_string(),
                r.backend.clone(),
                r.adapter.clone(),
                format!("{:.3e}", r.customers_per_s),
                format!("{:.2}", r.wall_seconds),
                r.device_seconds
                    .map(|d| format!("{d:.2}"))
                    .unwrap_or_default(),
                r.ratio_to_cpu
                    .map(|x| format!("{x:.2}x"))
                    .unwrap_or_default(),
                r.ops_per_customer
                    .map(|x| format!("{x:.0}"))
                    .unwrap_or_default(),
                r.fraction_of_peak()
                    .map(|x| format!("{:.1}%", 100.0 * x))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    print!("{}", align(&header, &table));
    for (name, peak) in [("cpu", cpu_peak), ("gpu", gpu_peak)] {
        if let Some(peak) = peak {
            println!("peak {name}: {peak:.3e} f32 operations/s (measured; a multiply-add is two)");
        }
    }
    println!(
        "of peak: customers/s x ops/cust (counted from the kernel's IR, an estimate) over the peak"
    );
    if let Some(g) = &gpu {
        println!(
            "device s: {}",
            if g.timestamps {
                "GPU timestamp queries around each pass"
            } else {
                "host-side wait for each pass (the adapter has no timestamp queries)"
            }
        );
    }
    if let Some(w) = sink.as_mut() {
        for r in &rows {
            w.write_record(r.fields())?;
        }
        w.flush()?;
        eprintln!(
            "qsweep: wrote {}",
            args.out.as_ref().expect("out").display()
        );
    }
    Ok(())
}
