//! The lifecycle of `qsweep run` around the run loop, so the binary is a
//! short sequence of calls and each step is tested here:
//!
//! 1. [`Session::open`]: the spec (a file, the default study or a
//!    `.meta.json`), the shard, its memory (refused beyond the limit, see
//!    [`super::estimate`]), and every check on the output before any
//!    engine starts: an existing CSV is refused without `--force`; with
//!    `--resume` its `.meta.json` must name the same spec, seed and shard
//!    and its rows must be whole rows of this grid;
//! 2. [`Session::begin`]: the CSV opened (a torn last line cut off), the
//!    points still to run, `--warmup auto` pilots, and the `.meta.json`
//!    written with status `running`;
//! 3. [`Session::simulate`]: the points run (on the CPU engine after a GPU
//!    that fails, with `--backend auto`), each finished point's row written
//!    by [`Session::write`] and flushed as it comes;
//! 4. [`Session::finish`]: the rows synced, then the `.meta.json` marked
//!    complete, interrupted or failed (with how to resume).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};

use super::from_meta::load_from_meta;
use super::out_file::{
    lock_existing, partial_path, refuse_inputs_as_output, streams_to_stdout, without_out_flag,
};
use super::point::{PointResult, PreparedPoint};
use super::report::{simulated_customers, thin_pilot};
use super::resume::{run_surviving, scan_csv, truncate, Expect, Fallback, Scanned, Shard};
use super::rounds::Interrupted;
use crate::engine::cpu::CpuEngine;
use crate::engine::Engine;
use crate::output::{axis_fields, num, CsvSink};
use crate::progress;
use crate::provenance::{self, Invocation, Meta, Status, META_FORMAT};
use crate::spec::Backend;
use crate::spec::{default_out_path, Spec, SweepArgs};
use crate::usage;

/// What `qsweep run` was asked to do.
pub struct Request<'a> {
    pub sweep: &'a SweepArgs,
    /// `--resume`: continue the CSV named by `--out`.
    pub resume: bool,
    /// `--shard K/N`, unparsed.
    pub shard: Option<&'a str>,
    /// `--from-meta`: run the spec recorded in this `.meta.json`.
    pub from_meta: Option<&'a Path>,
}

/// Who runs a session, so that a stopped run says how to resume it in the
/// caller's own words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Caller {
    /// `qsweep run`: this command line with `--resume`.
    #[default]
    Cli,
    /// The Python module: `qsweep.run(..., out=..., resume=True)` (its
    /// process's command line is the Python script's, not qsweep's).
    Python,
}

/// A run between its checks and its last row.
pub struct Session {
    /// Who runs it (how [`Session::resume_hint`] is worded).
    pub caller: Caller,
    pub spec: Spec,
    /// The results CSV.
    pub out: PathBuf,
    /// Its `.meta.json`.
    pub meta_file: PathBuf,
    pub shard: Option<Shard>,
    /// Every point of the grid, ready for the engines.
    prepared: Vec<PreparedPoint>,
    /// The shared empirical-law table.
    pub table: Vec<f32>,
    /// Points in the whole grid, and in this CSV once complete.
    pub total: u64,
    pub in_file: u64,
    /// `--out` was given (not chosen by default).
    named_out: bool,
    /// Continuing an existing CSV.
    pub resuming: bool,
    /// `--resume` was given (with nothing to resume, the CSV is started).
    resume_requested: bool,
    scanned: Scanned,
    hash: String,
    spec_dir: String,
    started: String,
    first_started: String,
    previous_runs: Vec<Invocation>,
    /// Rows in the CSV: those kept from before, then each new one.
    pub rows: Vec<Vec<String>>,
    /// Rows kept from an earlier run.
    pub done_before: u64,
    sink: Option<CsvSink>,
    meta: Option<Meta>,
    /// The output, locked for the run's lifetime when it existed before.
    _lock: Option<std::fs::File>,
    /// `--force` over an existing CSV: rows go to `OUT.partial`, renamed
    /// over the old CSV only once the run completes.
    partial: Option<PathBuf>,
    /// The CSV that this run's rows replace once it completes: the old
    /// output under `--force` (rows in [`Self::partial`]), or, resuming an
    /// interrupted `--force` run's `OUT.partial`, the `OUT` its meta names.
    replaces: Option<PathBuf>,
    /// Engines that simulated, in order (after a fallback, two).
    labels: Vec<String>,
    /// Engine seconds and customers (warm-up included) of the new rows.
    pub sim_seconds: f64,
    pub sim_customers: f64,
    /// What the run needs, and may take.
    pub memory: super::estimate::MemoryNeed,
    pub memory_limit: crate::memory::Limit,
}

impl Session {
    /// Loads the spec and checks the output; nothing is written.
    pub fn open(req: &Request) -> Result<Session> {
        let flag_shard = req.shard.map(Shard::parse).transpose()?;
        if req.resume && req.sweep.force {
            return Err(usage(
                "--resume: given together with --force; expected one of them (--resume keeps \
                 the CSV's rows, --force overwrites it)"
                    .into(),
            ));
        }
        let (mut spec, meta_shard, spec_dir) = match req.from_meta {
            Some(path) => load_from_meta(path, req.sweep)?,
            None => {
                let spec = Spec::load(req.sweep)?;
                let dir = match req.sweep.spec.as_deref().and_then(Path::parent) {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let dir = dir.canonicalize().unwrap_or(dir).display().to_string();
                (spec, None, dir)
            }
        };
        let shard = flag_shard.or(meta_shard);
        let named_out = spec.run.out.is_some();
        if req.resume && !named_out {
            return Err(usage(
                "--resume: no CSV named; expected --out/-o with the CSV to resume (or \
                 --from-meta)"
                    .into(),
            ));
        }
        let out = spec
            .run
            .out
            .clone()
            .unwrap_or_else(|| default_out_path(Path::new(".")));
        spec.run.out = Some(out.clone());

        refuse_inputs_as_output(&out, &spec, req.sweep.spec.as_deref())?;
        // Before opening it: a FIFO would block, and `--force` would rename
        // a regular file over a device node or into a directory.
        crate::files::regular_output(&out, "out")?;
        let lock = lock_existing(&out)?;
        let partial = (spec.run.force && lock.is_some()).then(|| partial_path(&out));

        let points = spec.points();
        let total = points.len() as u64;
        let (prepared, table) = super::prepare(&spec, points);
        // Before anything sized by the spec is allocated.
        let memory_limit = crate::memory::limit()?;
        let memory = super::estimate::memory_need(
            &prepared,
            total,
            spec.run.reps,
            crate::engine::cpu::CpuEngine::new(spec.run.threads).threads,
            spec.run.backend != Backend::Gpu,
            &memory_limit,
        )?;
        let hash = provenance::spec_hash(&spec, &table);
        let meta_file = provenance::meta_path(&out);
        let started = provenance::now_rfc3339();
        let replaces = partial.as_ref().map(|_| out.clone());
        let mut session = Session {
            caller: Caller::Cli,
            resuming: req.resume && out.symlink_metadata().is_ok(),
            resume_requested: req.resume,
            in_file: shard.map_or(total, |s| s.size(total)),
            spec,
            out,
            meta_file,
            shard,
            prepared,
            table,
            total,
            named_out,
            scanned: Scanned::default(),
            hash,
            spec_dir,
            first_started: started.clone(),
            started,
            previous_runs: Vec::new(),
            rows: Vec::new(),
            done_before: 0,
            sink: None,
            meta: None,
            _lock: lock,
            replaces,
            partial,
            labels: Vec::new(),
            sim_seconds: 0.0,
            sim_customers: 0.0,
            memory,
            memory_limit,
        };
        if session.resuming {
            session.check_resumable()?;
        } else if !session.spec.run.force && session.out.symlink_metadata().is_ok() {
            // Refuse before opening an engine (CsvSink::create would too).
            return Err(usage(format!(
                "out: '{}' already exists; expected a new file (pass --force to overwrite it, \
                 or --resume to continue it)",
                session.out.display()
            )));
        } else if !session.spec.run.force
            && !session.resume_requested
            && session.meta_file.symlink_metadata().is_ok()
            // An unknown extension is the CLI's refusal, named as such.
            && crate::export::Format::of_path(&session.out).is_ok()
        {
            // The CSV is gone but its provenance is not: another run's
            // record is never overwritten without --force (issue 25).
            return Err(usage(format!(
                "out: '{}' already exists (the provenance of an earlier run, without its CSV); \
                 expected a new output (pass --force to overwrite it)",
                session.meta_file.display()
            )));
        }
        Ok(session)
    }

    /// `--resume`: the CSV and its `.meta.json` come from this spec, seed
    /// and shard; keeps their rows and the earlier invocations.
    fn check_resumable(&mut self) -> Result<()> {
        let out = &self.out;
        let old = self
            .meta_file
            .exists()
            .then(|| Meta::read(&self.meta_file))
            .transpose()?;
        if let Some(m) = &old {
            if m.spec_hash != self.hash {
                let why = if m.seed != self.spec.run.seed {
                    format!("seed {}, this run has seed {}", m.seed, self.spec.run.seed)
                } else {
                    format!("spec hash {}, this spec has {}", m.spec_hash, self.hash)
                };
                return Err(usage(format!(
                    "--resume: '{}' was written by a different spec ({why}); expected the spec \
                     and seed it was started with (or a new --out)",
                    out.display()
                )));
            }
            let this = self.shard.map(|s| s.to_string());
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
            if let Some(name) = &m.replaces {
                // Resuming an interrupted `--force` run's partial CSV: it
                // still replaces the old CSV once complete.
                let plain = Path::new(name).components().count() == 1
                    && matches!(
                        Path::new(name).components().next(),
                        Some(std::path::Component::Normal(_))
                    )
                    && !name.ends_with(".meta.json");
                if !plain {
                    return Err(usage(format!(
                        "--resume: '{}' says it replaces '{name}', which is not a file name \
                         beside it; expected the meta file qsweep wrote (an edited file?)",
                        self.meta_file.display()
                    )));
                }
                let target = out.parent().unwrap_or(Path::new("")).join(name);
                crate::files::regular_output(&target, "out")?;
                self.replaces = Some(target);
            }
            self.previous_runs = m.previous_runs.clone();
            let mut last = m.run.clone();
            if last.status == Status::Running {
                // Killed without a word: say so in the record.
                last.ended = None;
            }
            self.previous_runs.push(last);
            self.first_started = m.first_started.clone();
        }
        let prepared = &self.prepared;
        let axes = |i: u32| axis_fields(&prepared[i as usize].grid);
        let expect = Expect {
            total: self.total,
            shard: self.shard,
            seed: self.spec.run.seed,
            axes: Some(&axes),
            customers: Some(self.spec.run.customers),
            reps: self
                .spec
                .run
                .precision
                .is_none()
                .then_some(self.spec.run.reps),
            numbers: true,
        };
        let scanned = scan_csv(out, &expect)?;
        let extra = self.extra_columns();
        if !scanned.no_header && scanned.extra != extra {
            let show = |c: &[String]| match c {
                [] => "none".to_string(),
                c => c.join(","),
            };
            return Err(usage(format!(
                "--resume: '{}' has the extra columns {}, this run writes {}; expected the \
                 --quantiles and --slo it was started with",
                out.display(),
                show(&scanned.extra),
                show(&extra)
            )));
        }
        self.scanned = scanned;
        if old.is_none() && !self.scanned.rows.is_empty() {
            return Err(usage(format!(
                "--resume: '{}' has no '{}' beside it, so nothing shows which spec wrote it; \
                 expected a CSV written by qsweep run (or pass --force to start it over)",
                out.display(),
                self.meta_file.display()
            )));
        }
        Ok(())
    }

    /// The points this run would simulate (its shard's, less those a
    /// resumed CSV holds), before [`Session::begin`] takes them.
    pub fn pending(&self) -> Vec<PreparedPoint> {
        let kept = &self.scanned.points;
        self.prepared
            .iter()
            .filter(|p| self.shard.is_none_or(|s| s.contains(p.grid.index)))
            .filter(|p| !kept.contains(&p.grid.index))
            .map(|p| PreparedPoint {
                grid: p.grid.clone(),
                params: p.params,
                scale: p.scale,
                warmup_auto: p.warmup_auto,
                pilot: p.pilot,
                precision: p.precision,
            })
            .collect()
    }

    /// The grid's axes: those that vary with their values (`servers: 51,
    /// 60, 75 (3)`), then the fixed ones.
    pub fn axes(&self) -> String {
        let s = &self.spec;
        let show = |name: &str, v: Vec<String>| -> (bool, String) {
            let n = v.len();
            let text = if n > 6 {
                format!("{}, ..., {} ({n} values)", v[..3].join(", "), v[n - 1])
            } else {
                v.join(", ")
            };
            (n > 1, format!("{name} {text}"))
        };
        let load_key = s.load.first().map_or("lambda", |l| l.key());
        let all = [
            show("routing", s.routing.iter().map(|r| r.to_string()).collect()),
            show("choices", s.choices.iter().map(u32::to_string).collect()),
            show("routers", s.routers.iter().map(u32::to_string).collect()),
            show("servers", s.servers.iter().map(u32::to_string).collect()),
            show("workers", s.workers.iter().map(u32::to_string).collect()),
            show(
                "arrival",
                s.arrival.iter().map(|d| d.text().to_string()).collect(),
            ),
            show(load_key, s.load.iter().map(|l| num(l.value())).collect()),
            show(
                "service",
                s.service.iter().map(|d| d.text().to_string()).collect(),
            ),
        ];
        let varying: Vec<&str> = all.iter().filter(|a| a.0).map(|a| a.1.as_str()).collect();
        let fixed: Vec<&str> = all.iter().filter(|a| !a.0).map(|a| a.1.as_str()).collect();
        format!(
            "varying: {}; fixed: {}",
            if varying.is_empty() {
                "none".to_string()
            } else {
                varying.join(" × ")
            },
            fixed.join(", ")
        )
    }

    /// The first steps of every front end's run (the CLI's and Python's):
    /// the spec's notes, then the engine `--backend` chooses (`auto`
    /// calibrates on a sample of the grid's own points), its reason said
    /// through `say`. `choose` opens it: the front end's
    /// `qsweep_backend::backend::choose_for`.
    pub fn choose_engine(
        &self,
        choose: &crate::run::calibrate::Choose,
        say: &dyn Fn(&str),
    ) -> Result<crate::run::calibrate::Chosen> {
        for note in self.spec.notes() {
            say(&format!("qsweep: note: {note}"));
        }
        let all: Vec<_> = self.prepared.iter().map(|p| p.params).collect();
        let run = &self.spec.run;
        let chosen = choose(
            run.backend,
            run.adapter.as_deref(),
            run.threads,
            &crate::run::calibrate::Sample {
                params: &crate::run::calibrate::calibration_sample(&all),
                table: &self.table,
            },
        )?;
        say(&format!("qsweep: backend: {}", chosen.reason));
        Ok(chosen)
    }

    /// Opens the CSV (cutting off a torn last line when resuming), takes
    /// the points still to run, runs the `--warmup auto` pilots and writes
    /// the `.meta.json` with status `running`. `say` shows progress notes.
    pub fn begin(&mut self, engine_label: &str, say: &dyn Fn(&str)) -> Result<Vec<PreparedPoint>> {
        let sink = if self.resuming {
            if self.scanned.no_header {
                truncate(&self.out, 0)?;
            } else if let Some((line, bytes)) = self.scanned.torn {
                say(&format!(
                    "qsweep: resume: dropping the cut-short last line of {} (line {line}, \
                     {bytes} bytes); its point runs again",
                    self.out.display()
                ));
                truncate(&self.out, self.scanned.good_len)?;
            }
            if !self.scanned.failed.is_empty() {
                let points: Vec<String> = self
                    .scanned
                    .failed
                    .iter()
                    .map(|f| f.0.to_string())
                    .collect();
                say(&format!(
                    "qsweep: resume: running the failed points again ({}); their old rows are \
                     dropped",
                    points.join(", ")
                ));
                self._lock = Some(super::resume::drop_failed_rows(
                    &self.out,
                    &mut self.scanned,
                )?);
            }
            CsvSink::append_with(&self.out, &self.extra_columns())?
        } else {
            if self.resume_requested {
                say(&format!(
                    "qsweep: resume: {} does not exist yet; starting it",
                    self.out.display()
                ));
            }
            CsvSink::create_with(self.csv_path(), self.spec.run.force, &self.extra_columns())?
        };
        self.sink = Some(sink);

        let shard = self.shard;
        let kept = &self.scanned.points;
        let mut todo: Vec<PreparedPoint> = std::mem::take(&mut self.prepared)
            .into_iter()
            .filter(|p| shard.is_none_or(|s| s.contains(p.grid.index)))
            .filter(|p| !kept.contains(&p.grid.index))
            .collect();
        self.rows = std::mem::take(&mut self.scanned.rows);
        self.done_before = self.rows.len() as u64;
        if self.spec.run.warmup_auto && !todo.is_empty() {
            // Under `--precision` the run's final replication count is
            // not known yet: the pilot takes all its budget allows.
            let reps = if self.spec.run.precision.is_some() {
                u32::MAX
            } else {
                self.spec.run.reps
            };
            choose_warmups(&mut todo, &self.table, reps, self.spec.run.threads, say);
        }

        self.labels = vec![engine_label.to_string()];
        let meta = Meta {
            format: META_FORMAT.to_string(),
            csv: provenance::file_name(self.csv_path()),
            spec_hash: self.hash.clone(),
            seed: self.spec.run.seed,
            spec_toml: self.spec.to_toml(),
            spec_source: self.spec.source.clone(),
            spec_dir: self.spec_dir.clone(),
            points_total: self.total,
            shard: self.shard.map(|s| s.to_string()),
            points: self.in_file,
            points_done: self.done_before,
            backend: self.spec.run.backend.to_string(),
            adapter: self.spec.run.adapter.clone(),
            run: Invocation {
                command: provenance::command_line(),
                cwd: provenance::cwd(),
                host: provenance::hostname(),
                qsweep_version: provenance::VERSION.to_string(),
                git_revision: provenance::git_revision().to_string(),
                engine: engine_label.to_string(),
                started: self.started.clone(),
                ended: None,
                status: Status::Running,
                points_run: 0,
                device: None,
            },
            first_started: self.first_started.clone(),
            error: None,
            failed_points: Vec::new(),
            previous_runs: std::mem::take(&mut self.previous_runs),
            replaces: self.replaces.as_deref().map(provenance::file_name),
            pieces: Vec::new(),
        };
        meta.write(&self.writing_meta())?;
        super::interrupt::set_abort_meta(self.writing_meta(), &meta);
        self.meta = Some(meta);
        Ok(todo)
    }

    /// The command that resumes this run (this command line with
    /// `--resume`, `-o OUT` when the name was chosen by default, `--force`
    /// dropped); for the Python module, the call.
    pub fn resume_hint(&self) -> String {
        if self.caller == Caller::Python {
            // The rows are in the partial CSV while the old one is kept.
            let csv = self.partial.as_deref().unwrap_or(&self.out);
            let quoted = csv
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('\'', "\\'");
            return format!("qsweep.run(..., out='{quoted}', resume=True)");
        }
        let mut args: Vec<String> = provenance::command_line()
            .into_iter()
            .filter(|a| a != "--force")
            .collect();
        if let Some(partial) = &self.partial {
            // The old CSV is untouched: continue the new one.
            args = without_out_flag(args);
            args.push("-o".into());
            args.push(partial.display().to_string());
        } else if !self.named_out {
            args.push("-o".into());
            args.push(self.out.display().to_string());
        }
        if !args.iter().any(|a| a == "--resume") {
            args.push("--resume".into());
        }
        provenance::shell_join(&args)
    }

    /// The line that says what is about to run.
    pub fn banner(&self) -> String {
        let run = &self.spec.run;
        let shard_note = self
            .shard
            .map(|s| format!("; shard {s}: {} of the {} points", self.in_file, self.total))
            .unwrap_or_default();
        let resume_note = if self.resuming {
            format!("; resuming: {} of {} done", self.done_before, self.in_file)
        } else {
            String::new()
        };
        let reps_note = match run.precision {
            Some(p) => format!(
                "{}+ replications (until ±{} at 95%, at most {:.3e} customers a point)",
                run.reps.max(super::precision::MIN_FIRST_ROUND),
                num(p),
                run.max_customers as f64
            ),
            None => format!("{} replications", run.reps),
        };
        let warmup_note = if run.warmup_auto {
            "auto".to_string()
        } else {
            run.warmup.to_string()
        };
        format!(
            "qsweep: {} points × {reps_note} × {} customers (+{warmup_note} warm-up) from {} → \
             {}{shard_note}{resume_note}",
            self.total,
            run.customers,
            self.spec.source,
            self.out.display()
        )
    }

    /// Writes (and flushes) a finished point's row; returns its fields.
    pub fn write(&mut self, r: &PointResult<'_>, label: &str) -> Result<&[String]> {
        let fields = super::row::fields(&self.spec, r, label);
        self.record(r, label, fields)?;
        Ok(self.rows.last().expect("just recorded"))
    }

    /// Writes `fields`, the row of `r`, to the CSV.
    fn record(&mut self, r: &PointResult<'_>, label: &str, fields: Vec<String>) -> Result<()> {
        let customers = self.spec.run.customers;
        self.sink
            .as_mut()
            .expect("Session::begin opened the CSV")
            .write(&fields)?;
        self.sim_seconds += r.seconds;
        self.sim_customers += simulated_customers(r, customers);
        if self.labels.last().is_none_or(|l| l != label) {
            self.labels.push(label.to_string());
        }
        self.rows.push(fields);
        super::interrupt::set_abort_rows(self.rows.len() as u64, self.new_rows());
        Ok(())
    }

    /// The columns after the standard ones (`--quantiles`, `--slo`).
    pub fn extra_columns(&self) -> Vec<String> {
        super::row::extra_columns(&self.spec)
    }

    /// The CSV this run writes: the output, or `OUT.partial` under
    /// `--force` until the run completes.
    pub fn csv_path(&self) -> &Path {
        self.partial.as_deref().unwrap_or(&self.out)
    }

    /// The `.meta.json` beside [`Self::csv_path`].
    fn writing_meta(&self) -> PathBuf {
        provenance::meta_path(self.csv_path())
    }

    /// Points whose rows carry an error, in increasing order.
    pub fn failed_points(&self) -> Vec<u32> {
        crate::output::failed_points(&self.rows)
    }

    /// Rows written by this invocation.
    pub fn new_rows(&self) -> u64 {
        self.rows.len() as u64 - self.done_before
    }

    /// The engines that simulated, as the meta and the summary name them.
    pub fn engines(&self) -> String {
        self.labels.join(", then ")
    }

    /// Simulates `todo` (from [`Self::begin`]) on `engine`: the part of a run
    /// every front end (the CLI, the Python module) shares. Each finished
    /// point is written, then handed to `on_point` with its CSV fields; with
    /// `fall_back`, an engine that fails hands the points left to the CPU
    /// engine (`say` tells why) and the rows before stay; the device's report
    /// (the failed GPU's, if one failed) is recorded for the `.meta.json`.
    /// Returns the run's result for [`Self::finish`].
    pub fn simulate(
        &mut self,
        todo: Vec<PreparedPoint>,
        engine: &mut Box<dyn Engine>,
        fall_back: bool,
        say: &dyn Fn(&str),
        on_point: OnPoint<'_>,
        stop: &AtomicBool,
    ) -> Result<()> {
        let table = self.table.clone();
        let (reps, threads) = (self.spec.run.reps, self.spec.run.threads);
        // What a GPU did before it failed (the CPU engine reports nothing).
        let mut failed_report = None;
        let mut fallback = |e: &anyhow::Error, left: usize, failed: &dyn Engine| {
            failed_report = failed.device_report();
            let cpu = CpuEngine::new(threads);
            let e = format!("{e:#}").replace('\n', " ");
            say(&format!(
                "qsweep: {e}; the rows before it are kept; continuing on the CPU engine ({} \
                 threads) for the remaining {left} points",
                cpu.threads
            ));
            Ok(Box::new(cpu) as Box<dyn Engine>)
        };
        let result = run_surviving(
            todo,
            &table,
            reps,
            engine,
            fall_back.then_some(&mut fallback as Fallback<'_>),
            &mut |r: PointResult<'_>, label: &str| {
                // The observer first (the `--hist` rows), then the row: a row
                // in the CSV says its point is done, so what goes with it must
                // be on disk before it (issue 40: a full disk between a row
                // and its histogram left a torn histogram --resume never
                // redid).
                let fields = super::row::fields(&self.spec, &r, label);
                on_point(self, &fields, &r)?;
                self.record(&r, label, fields)
            },
            stop,
        );
        self.record_device(failed_report.or_else(|| engine.device_report()));
        result
    }

    /// Records what the engine's device did in this invocation (see
    /// [`Engine::device_report`](crate::engine::Engine::device_report)), for
    /// the `.meta.json` that [`Self::finish`] writes.
    pub fn record_device(&mut self, report: Option<crate::engine::DeviceReport>) {
        if let Some(meta) = self.meta.as_mut() {
            meta.run.device = report;
        }
    }

    /// Syncs the rows, then records how the run ended in the `.meta.json`.
    /// A failed or interrupted run says how many points are kept and how to
    /// resume, and its error is returned.
    pub fn finish(&mut self, result: Result<()>, say: &dyn Fn(&str)) -> Result<()> {
        // The rows on disk before the meta file says how many there are.
        let synced = self.sink.as_mut().map_or(Ok(()), CsvSink::sync);
        if result.is_ok() {
            synced?;
        }
        let new_rows = self.new_rows();
        let engines = self.engines();
        let writing_meta = self.writing_meta();
        let source = self.csv_path().to_path_buf();
        let meta = self.meta.as_mut().expect("Session::begin wrote the meta");
        meta.points_done = self.done_before + new_rows;
        meta.failed_points = crate::output::failed_points(&self.rows);
        meta.run.points_run = new_rows;
        meta.run.engine = engines;
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
        super::interrupt::clear_abort_meta();
        if let (Some(target), Ok(())) = (self.replaces.clone(), &result) {
            // Complete: the new CSV replaces the old one, then its meta
            // (a crash in between leaves a meta that refuses the CSV, never
            // one that vouches for the wrong rows). Also when this run
            // resumed the partial CSV of an interrupted `--force` run.
            meta.csv = provenance::file_name(&target);
            meta.replaces = None;
            std::fs::rename(&source, &target).with_context(|| {
                format!("renaming {} to {}", source.display(), target.display())
            })?;
            let target_meta = provenance::meta_path(&target);
            meta.write(&target_meta)?;
            let _ = std::fs::remove_file(provenance::meta_path(&source));
            self.out = target;
            self.meta_file = target_meta;
            return Ok(());
        }
        // A full disk fails the meta file too: the run's own error and how
        // to resume still come first (issue 40: the meta file's error was
        // all a full disk said). The meta file written at the start still
        // vouches for the spec, which is what --resume checks.
        let meta_written = meta.write(&writing_meta);
        if let Err(e) = result {
            let kept = match &self.partial {
                Some(partial) => format!(
                    "{} of {} points are in {} ({} is untouched)",
                    meta.points_done,
                    self.in_file,
                    partial.display(),
                    self.out.display()
                ),
                None => format!(
                    "{} of {} points are in {}",
                    meta.points_done,
                    self.in_file,
                    self.out.display()
                ),
            };
            if streams_to_stdout(&provenance::command_line()) {
                // `-o -`: the CSV lives in a temporary folder that goes
                // with this process; a `-o - --resume` hint cannot work
                // (issue 25).
                let how = if e.is::<Interrupted>() {
                    "interrupted"
                } else {
                    "the run stopped"
                };
                say(&format!(
                    "qsweep: {how}; {} of {} points went to stdout (-o - cannot be resumed: \
                     run it again, with -o FILE to keep the rows of a run that stops)",
                    meta.points_done, self.in_file
                ));
                return Err(e);
            }
            let hint = self.resume_hint();
            let kept = match &meta_written {
                Ok(()) => kept,
                Err(m) => format!("{kept}; its .meta.json could not be updated ({m:#})"),
            };
            if e.is::<Interrupted>() {
                say(&format!(
                    "qsweep: interrupted; {kept}. To resume:\n  {hint}"
                ));
            } else {
                say(&format!(
                    "qsweep: the run stopped; {kept}. After fixing the cause, resume with:\n  \
                     {hint}"
                ));
            }
            return Err(e);
        }
        meta_written
    }
}

/// What [`Session::simulate`] hands each finished point to, after writing
/// its row: the session, the row's CSV fields and the point's result.
pub type OnPoint<'a> = &'a mut dyn FnMut(&Session, &[String], &PointResult<'_>) -> Result<()>;

/// `--warmup auto`: each point's warm-up from MSER-5 on a CPU pilot of
/// the run's own replications (`run_reps` of them, as the budget allows).
fn choose_warmups(
    points: &mut [PreparedPoint],
    table: &[f32],
    run_reps: u32,
    threads: usize,
    say: &dyn Fn(&str),
) {
    let started = std::time::Instant::now();
    super::warmup::resolve(points, table, run_reps, threads);
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
        let Some(pilot) = p.pilot else { continue };
        if pilot.at_limit {
            progress::say(&format!(
                "qsweep: warning: point {}: the warm-up pilot ({} customers × {} replications) \
                 saw no end of the transient in its first half; warm-up {} may be too short",
                p.grid.index, pilot.customers, pilot.reps, p.params.warmup
            ));
        } else if let Some(why) = thin_pilot(&pilot, run_reps, p.params.customers) {
            progress::say(&format!("qsweep: note: point {}: {why}", p.grid.index));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cpu::CpuEngine;
    use crate::run::report::PointReport;
    use crate::run::run_points;
    use crate::stats::PointStats;

    fn args(out: &Path) -> SweepArgs {
        SweepArgs {
            axes: crate::spec::AxisArgs {
                servers: vec!["1,2".into()],
                routing: vec!["random".into()],
                lambda: vec!["0.5".into()],
                service: vec!["exp(mean=0.2)".into()],
                ..crate::spec::AxisArgs::default()
            },
            reps: Some("4".into()),
            customers: Some("200".into()),
            warmup: Some("10".into()),
            out: Some(out.to_path_buf()),
            backend: Some("cpu".into()),
            ..SweepArgs::default()
        }
    }

    fn request(a: &SweepArgs, resume: bool) -> Request<'_> {
        Request {
            sweep: a,
            resume,
            shard: None,
            from_meta: None,
        }
    }

    #[test]
    fn a_point_report_says_the_line_and_warnings_of_its_point() {
        let dir = tempfile::tempdir().unwrap();
        let a = args(&dir.path().join("r.csv"));
        let mut session = Session::open(&request(&a, false)).unwrap();
        let todo = session.begin("cpu", &|_| {}).unwrap();
        let table = session.table.clone();
        let spec = session.spec.clone();
        let mut reports = Vec::new();
        run_points(&todo, &table, 4, &mut CpuEngine::new(1), &mut |r| {
            let failed = PointResult {
                point: r.point,
                stats: PointStats::default(),
                hist: Vec::new(),
                seconds: 0.0,
                converged: None,
                max_in_system: None,
                error: Some("queue outgrew the limit".into()),
            };
            reports.push((PointReport::of(&spec, &r), PointReport::of(&spec, &failed)));
            Ok(())
        })
        .unwrap();
        assert_eq!(reports.len(), 2);
        for (i, (ok, failed)) in reports.iter().enumerate() {
            // M/M/1 at rho 0.1: theory beside the estimate; 4 replications of
            // 200 customers leave the p99's CI wide, never quietly.
            assert!(
                ok.line.starts_with("routing=random servers="),
                "{}",
                ok.line
            );
            assert!(ok.line.contains("(theory ") && ok.line.contains(", p99 "));
            assert_eq!(ok.customers, 4.0 * 210.0);
            assert_eq!(
                ok.wide,
                ok.warnings
                    .iter()
                    .any(|(w, _)| w.contains("not to be trusted"))
            );
            assert!(failed.line.ends_with(": failed"), "{}", failed.line);
            assert_eq!(
                failed.warnings,
                vec![(
                    format!("qsweep: point {i} failed: queue outgrew the limit"),
                    true
                )]
            );
            assert!(!failed.wide && failed.customers == 0.0);
        }
    }

    /// Runs `session` to the end (or, with `stop_after`, fails after that
    /// many rows, as an engine failure would) and returns `finish`'s result.
    fn simulate(session: &mut Session, stop_after: Option<usize>) -> Result<()> {
        let todo = session.begin("cpu", &|_| {})?;
        let table = session.table.clone();
        let reps = session.spec.run.reps;
        let mut written = 0;
        let result = run_points(&todo, &table, reps, &mut CpuEngine::new(1), &mut |r| {
            if stop_after == Some(written) {
                anyhow::bail!("engine lost");
            }
            session.write(&r, "cpu")?;
            written += 1;
            Ok(())
        });
        session.finish(result, &|_| {})
    }

    #[test]
    fn a_run_writes_its_rows_and_a_complete_meta() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.csv");
        let a = args(&out);
        let mut s = Session::open(&request(&a, false)).unwrap();
        assert!(!s.resuming);
        simulate(&mut s, None).unwrap();
        assert_eq!(s.new_rows(), 2);
        let meta = Meta::read(&s.meta_file).unwrap();
        assert_eq!(meta.run.status, Status::Complete);
        assert_eq!((meta.points_done, meta.run.points_run), (2, 2));
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 3);
        // While the run holds its CSV, no other run may take it...
        let e = Session::open(&request(&a, true)).err().unwrap();
        assert!(e.to_string().contains("being written by another"), "{e}");
        drop(s);
        // ...and once it is done, the same output is refused unless resumed.
        let e = Session::open(&request(&a, false)).err().unwrap();
        assert!(e.to_string().contains("already exists"), "{e}");
    }

    #[test]
    fn a_failed_run_is_recorded_and_resumes_where_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.csv");
        let a = args(&out);
        let mut s = Session::open(&request(&a, false)).unwrap();
        let e = simulate(&mut s, Some(1)).unwrap_err();
        assert!(e.to_string().contains("engine lost"));
        let meta = Meta::read(&s.meta_file).unwrap();
        assert_eq!(meta.run.status, Status::Failed);
        assert_eq!(meta.points_done, 1);
        assert!(meta.error.unwrap().contains("engine lost"));
        drop(s);

        let mut r = Session::open(&request(&a, true)).unwrap();
        assert!(r.resuming);
        simulate(&mut r, None).unwrap();
        assert_eq!((r.done_before, r.new_rows()), (1, 1));
        let meta = Meta::read(&r.meta_file).unwrap();
        assert_eq!(meta.run.status, Status::Complete);
        assert_eq!(meta.previous_runs.len(), 1);
        assert_eq!(meta.previous_runs[0].status, Status::Failed);
        // The resumed CSV equals one written in a single run.
        let once = dir.path().join("once.csv");
        let mut whole = Session::open(&request(&args(&once), false)).unwrap();
        simulate(&mut whole, None).unwrap();
        let strip = |p: &Path| -> Vec<String> {
            let seconds = crate::output::column_index("seconds").unwrap();
            let rate = crate::output::column_index("customers_per_s").unwrap();
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| {
                    l.split(',')
                        .enumerate()
                        .filter(|(i, _)| *i != seconds && *i != rate)
                        .map(|(_, f)| f)
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect()
        };
        assert_eq!(strip(&out), strip(&once));
    }

    #[test]
    fn resume_refuses_another_spec_and_resume_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.csv");
        let a = args(&out);
        let mut s = Session::open(&request(&a, false)).unwrap();
        simulate(&mut s, Some(1)).unwrap_err();
        drop(s);
        let other = SweepArgs {
            seed: Some("7".into()),
            ..args(&out)
        };
        let e = Session::open(&request(&other, true)).err().unwrap();
        assert!(e.to_string().contains("different spec (seed 1"), "{e}");
        let forced = SweepArgs {
            force: true,
            ..args(&out)
        };
        let e = Session::open(&request(&forced, true)).err().unwrap();
        assert!(e
            .to_string()
            .starts_with("--resume: given together with --force"));
    }
}
