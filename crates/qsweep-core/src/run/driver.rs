//! The one run driver under both front ends, `qsweep run` and the Python
//! module's `qsweep.run`: a [`Session`] opened and checked, its engine
//! chosen, the points begun, simulated (each row written as it finishes)
//! and the run finished. The front ends differ only in how they show what
//! happens (a progress bar on stderr; events for Python's reporter), which
//! they say through [`Says`] and an [`Observer`], and in what they write
//! beside the CSV (`--hist`, `-o -`, exports), which stays theirs.

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use super::calibrate::Choose;
use super::estimate;
use super::point::PointResult;
use super::report::PointReport;
use super::rounds;
use super::session::{Caller, Request, Session};
use crate::engine::cpu::CpuEngine;
use crate::engine::Engine;
use crate::progress;
use crate::spec::Backend;

/// Where the driver's messages go.
pub struct Says<'a> {
    /// Notes about the run's set-up: the spec's notes, the engine chosen,
    /// rows kept from before, the banner, a long run's estimate (`qsweep
    /// run -q` hides them).
    pub note: &'a dyn Fn(&str),
    /// Messages shown even when quiet: an engine that failed and the one
    /// that carries on, a stopped run's rows and how to resume it.
    pub alert: &'a dyn Fn(&str),
}

/// What a front end sees of a run as it goes.
pub trait Observer {
    /// The points are about to run: `planned` customers (warm-up included)
    /// for the first round of each, for a progress bar.
    fn start(&mut self, _session: &Session, _planned: f64) {}
    /// A point finished; `fields` is its row, written to the CSV once this
    /// returns (so what goes with the row, such as `--hist`'s rows, is on
    /// disk before the row says the point is done). `session.rows` holds
    /// the rows before it.
    fn point(
        &mut self,
        session: &Session,
        fields: &[String],
        r: &PointResult<'_>,
        report: &PointReport,
    ) -> Result<()>;
    /// Every point has run (or the run stopped), before the session is
    /// finished: `wide` names the points whose CIs are too wide to trust.
    fn simulated(&mut self, _session: &Session, _wide: &[u32]) {}
}

/// How a front end wants the run driven.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Calibrate a run that could be long, and say how long it will take.
    pub estimate_long_runs: bool,
    /// Whether the CSV is the caller's to resume: a temporary one is not, so
    /// a failed run returns its error at once, with no resume command said.
    pub resumable: bool,
}

/// A session with its engine chosen: what `--dry-run` describes and
/// [`Launch::run`] simulates.
pub struct Launch {
    pub session: Session,
    pub engine: Box<dyn Engine>,
    /// Why `--backend` chose this engine.
    pub reason: String,
}

/// A finished run: its session (rows, engines, seconds) and the points
/// whose CIs are too wide to trust.
pub struct Finished {
    pub session: Session,
    pub wide_points: Vec<u32>,
}

impl Launch {
    /// Opens the session (every check on the spec and the output), runs
    /// the front end's own `check` on it, then chooses the engine with
    /// `choose` (the front end's `qsweep_backend::backend::choose_for`).
    pub fn open(
        req: &Request,
        caller: Caller,
        check: impl FnOnce(&Session) -> Result<()>,
        choose: &Choose,
        note: &dyn Fn(&str),
    ) -> Result<Launch> {
        let mut session = Session::open(req)?;
        session.caller = caller;
        check(&session)?;
        let chosen = session.choose_engine(choose, note)?;
        Ok(Launch {
            session,
            engine: chosen.engine,
            reason: chosen.reason,
        })
    }

    /// Begins the session, simulates its points and finishes it.
    pub fn run(
        self,
        opts: Options,
        says: &Says,
        observer: &mut dyn Observer,
        stop: &AtomicBool,
    ) -> Result<Finished> {
        let Launch {
            mut session,
            mut engine,
            ..
        } = self;
        let run = session.spec.run.clone();
        let first_label = engine.label();
        let todo = session.begin(&first_label, says.note)?;
        (says.note)(&session.banner());
        // Customers, so that progress moves with the work.
        let planned: f64 = todo
            .iter()
            .map(|p| f64::from(rounds::first_round(p, run.reps)) * rounds::rep_customers(p))
            .sum();
        if opts.estimate_long_runs {
            let shape = estimate::Shape::of(&first_label, CpuEngine::new(run.threads).threads);
            if estimate::could_be_long(&todo, run.reps, shape) {
                // Long enough to be worth a sub-second look before starting.
                let cal = estimate::calibrate(engine.as_mut(), &todo, &session.table)?;
                let est = estimate::calibrated_estimate(&todo, run.reps, shape, &cal);
                if est.seconds > estimate::LONG_RUN_SECONDS {
                    (says.note)(&format!(
                        "qsweep: this run will take about {} ({:.3e} customers at {:.3e}/s \
                         measured on {}); Ctrl-C stops it and --resume continues it",
                        progress::duration(est.seconds),
                        est.customers,
                        est.customers / est.seconds,
                        engine.label()
                    ));
                }
            }
        }
        observer.start(&session, planned);
        let can_fall_back = run.backend == Backend::Auto && first_label != "cpu";
        let mut wide_points: Vec<u32> = Vec::new();
        let result = session.simulate(
            todo,
            &mut engine,
            can_fall_back,
            says.alert,
            &mut |session, fields, r| {
                let report = PointReport::of(&session.spec, r);
                observer.point(session, fields, r, &report)?;
                if report.wide {
                    wide_points.push(r.point.grid.index);
                }
                Ok(())
            },
            stop,
        );
        observer.simulated(&session, &wide_points);
        if !opts.resumable && result.is_err() {
            // Nothing to resume: the temporary CSV goes with its folder (and
            // `finish` would say how to resume it).
            return Err(result.expect_err("checked"));
        }
        session.finish(result, says.alert)?;
        Ok(Finished {
            session,
            wide_points,
        })
    }
}
