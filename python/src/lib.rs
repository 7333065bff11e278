//! `qsweep._qsweep`: the extension module behind the Python package
//! (`python/qsweep/`). It drives the library exactly as `qsweep run` does,
//! through the same run driver (`qsweep_core::run::driver`, with the same
//! `PointReport` per point), so a frame holds the CSV's own fields, as
//! text, and Python only converts them to numbers.
//!
//! Keyword arguments arrive as the CLI's flags (`--servers=51`) and are
//! parsed by the CLI's own `SweepArgs`: the same defaults, the same checks,
//! the same one-line messages.
//!
//! The sweep runs on a worker thread while the calling thread waits with the
//! GIL released, waking every [`POLL`] to hand progress to Python and to
//! check for Ctrl-C (`Python::check_signals`). Ctrl-C sets the run's stop
//! flag (the one `qsweep run` sets, which the engines watch inside their
//! calls, so the worker stops within milliseconds and drops the points
//! being simulated) and raises `KeyboardInterrupt` at once when the CSV is
//! a temporary one; with `out=` it first waits for the worker to stop,
//! [`GRACE`] at most, so that the rows and the `.meta.json` are final when
//! the exception arrives. A worker that has not stopped by then ends on its
//! own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::{CommandFactory, Parser};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use qsweep_core::output;
use qsweep_core::run::driver::{self, Launch};
use qsweep_core::run::report::PointReport;
use qsweep_core::run::session::{self, Session};
use qsweep_core::run::{Interrupted, PointResult};
use qsweep_core::spec::{AnalyticArgs, Spec, SpecError, SweepArgs};
use qsweep_core::UsageError;

/// How often the waiting thread hands progress to Python and checks Ctrl-C.
const POLL: Duration = Duration::from_millis(100);
/// How long Ctrl-C waits for a run with `out=` to stop cleanly before raising.
const GRACE: Duration = Duration::from_secs(2);

/// `qsweep.run`'s settings, as `qsweep run` reads them (its `RunArgs`, less
/// `--quiet`, which the Python side handles).
#[derive(Parser)]
#[command(
    name = "qsweep.run",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
struct RunFlags {
    #[command(flatten)]
    sweep: SweepArgs,
    #[arg(long)]
    resume: bool,
    #[arg(long, allow_hyphen_values = true)]
    shard: Option<String>,
    #[arg(long)]
    from_meta: Option<PathBuf>,
}

/// `qsweep.analytic`'s settings, as `qsweep analytic` reads them.
#[derive(Parser)]
#[command(
    name = "qsweep.analytic",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
struct AnalyticFlags {
    #[command(flatten)]
    args: AnalyticArgs,
}

/// The long flag names each command takes (for checking keyword names).
#[pyfunction]
fn flag_names(command: &str) -> PyResult<Vec<String>> {
    let cmd = match command {
        "run" => RunFlags::command(),
        "analytic" => AnalyticFlags::command(),
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown command '{command}'"
            )))
        }
    };
    Ok(cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect())
}

/// The results CSV's header, in order.
#[pyfunction]
fn columns() -> Vec<String> {
    output::COLUMNS.iter().map(|c| c.to_string()).collect()
}

/// The type of a column qsweep writes, by name ("int", "uint", "float",
/// "bool", "text"), as Parquet is typed (`export::Kind::known`); None for a
/// column qsweep does not write.
#[pyfunction]
fn column_kind(name: &str) -> Option<&'static str> {
    qsweep_core::export::Kind::known(name).map(qsweep_core::export::Kind::name)
}

/// Parses flags as the CLI does; a clap error becomes its first line.
fn parse<T: Parser>(argv: &[String]) -> PyResult<T> {
    T::try_parse_from(argv).map_err(|e| {
        let text = e.to_string();
        let line = text.lines().next().unwrap_or("invalid arguments");
        PyValueError::new_err(line.trim_start_matches("error: ").to_string())
    })
}

/// The library's error as Python sees it: bad input (exit 2 in the CLI) is a
/// `ValueError` with the CLI's one-line message, Ctrl-C a
/// `KeyboardInterrupt`, anything else a `RuntimeError`.
fn to_py(e: anyhow::Error) -> PyErr {
    let msg = format!("{e:#}");
    if e.is::<Interrupted>() {
        PyKeyboardInterrupt::new_err(msg)
    } else if e.downcast_ref::<UsageError>().is_some() || e.downcast_ref::<SpecError>().is_some() {
        PyValueError::new_err(msg)
    } else {
        PyRuntimeError::new_err(msg)
    }
}

/// A table as Python receives it: the header and the rows' fields, as text.
type Table = (Vec<String>, Vec<Vec<String>>);

/// What the worker tells the waiting thread.
enum Event {
    /// A line for standard error (notes, the backend chosen, warnings).
    Note(String),
    /// Points this CSV will hold, and those it holds already (resumed);
    /// the customers planned for the points to run (warm-up included).
    Start {
        total: u64,
        done: u64,
        planned: f64,
    },
    /// A point finished: its one-line summary and customers simulated.
    Point {
        line: String,
        customers: f64,
    },
    Done(Result<Finished>),
}

/// A completed run.
struct Finished {
    rows: Vec<Vec<String>>,
    engines: String,
    spec_toml: String,
    source: String,
    out: Option<PathBuf>,
    new_rows: u64,
    wide_points: Vec<u32>,
    sim_seconds: f64,
    sim_customers: f64,
}

/// `qsweep run` with `flags`, reporting through `tx`; `temp_out` means the
/// output is a temporary file nobody will resume. The run is the library's
/// [`driver`], as under `qsweep run`; only what it shows differs.
fn simulate(
    flags: &RunFlags,
    temp_out: bool,
    stop: &AtomicBool,
    tx: &Sender<Event>,
) -> Result<Finished> {
    // Every message, the run's notes and its alerts (rows kept, how to
    // resume) alike, reaches Python as a note, so `quiet=True` silences
    // them and a notebook shows them.
    let say = |msg: &str| {
        let _ = tx.send(Event::Note(msg.to_string()));
    };
    let launch = Launch::open(
        &session::Request {
            sweep: &flags.sweep,
            resume: flags.resume,
            shard: flags.shard.as_deref(),
            from_meta: flags.from_meta.as_deref(),
        },
        // A stopped run says how to resume it as a call of qsweep.run.
        session::Caller::Python,
        |_| Ok(()),
        &qsweep_backend::backend::choose_for,
        &say,
    )?;
    let finished = launch.run(
        driver::Options {
            estimate_long_runs: false,
            resumable: !temp_out,
        },
        &driver::Says {
            note: &say,
            alert: &say,
        },
        &mut Events(tx),
        stop,
    )?;
    let mut session = finished.session;
    Ok(Finished {
        engines: session.engines(),
        spec_toml: session.spec.to_toml(),
        source: session.spec.source.clone(),
        out: (!temp_out).then(|| session.out.clone()),
        new_rows: session.new_rows(),
        wide_points: finished.wide_points,
        sim_seconds: session.sim_seconds,
        sim_customers: session.sim_customers,
        rows: std::mem::take(&mut session.rows),
    })
}

/// The run's progress as events for the waiting thread.
struct Events<'a>(&'a Sender<Event>);

impl driver::Observer for Events<'_> {
    fn start(&mut self, session: &Session, planned: f64) {
        let _ = self.0.send(Event::Start {
            total: session.in_file,
            done: session.done_before,
            planned,
        });
    }

    fn point(
        &mut self,
        _session: &Session,
        _fields: &[String],
        _r: &PointResult<'_>,
        report: &PointReport,
    ) -> Result<()> {
        let _ = self.0.send(Event::Point {
            line: report.line.clone(),
            customers: report.customers,
        });
        for (warning, _) in &report.warnings {
            let _ = self.0.send(Event::Note(warning.clone()));
        }
        Ok(())
    }
}

/// Hands one event to the Python reporter (`qsweep._progress.Reporter`).
fn report(reporter: &Bound<'_, PyAny>, ev: Event) -> PyResult<()> {
    match ev {
        Event::Note(msg) => reporter.call_method1("note", (msg,))?,
        Event::Start {
            total,
            done,
            planned,
        } => reporter.call_method1("start", (total, done, planned))?,
        Event::Point { line, customers } => reporter.call_method1("point", (line, customers))?,
        Event::Done(_) => return Ok(()),
    };
    Ok(())
}

/// Runs a sweep: `argv` holds the CLI's flags, `spec` a spec file or
/// `spec_text` a spec's TOML. Returns the CSV (header and rows, the CSV's
/// fields as text) and a dict about the run. Without `--out` the CSV is
/// written to a temporary folder, removed afterwards.
#[pyfunction]
#[pyo3(signature = (argv, reporter, spec=None, spec_text=None))]
fn run<'py>(
    py: Python<'py>,
    argv: Vec<String>,
    reporter: Bound<'py, PyAny>,
    spec: Option<PathBuf>,
    spec_text: Option<String>,
) -> PyResult<(Table, Bound<'py, PyDict>)> {
    let mut flags: RunFlags = parse(&argv)?;
    flags.sweep.spec = spec;
    flags.sweep.spec_text = spec_text;
    // Re-running a notebook cell must just work: without `out=` the CSV goes
    // to a fresh temporary folder (but `resume` needs the CSV it continues).
    let temp = match flags.sweep.out.is_none() && !flags.resume {
        true => Some(tempfile::Builder::new().prefix("qsweep-").tempdir()?),
        false => None,
    };
    if let Some(dir) = &temp {
        flags.sweep.out = Some(dir.path().join("results.csv"));
    }

    let grace = if temp.is_some() {
        Duration::ZERO
    } else {
        GRACE
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let worker = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("qsweep-run".into())
            .spawn(move || {
                let result = simulate(&flags, temp.is_some(), &stop, &tx);
                // The session (and its lock on the CSV) is gone: the
                // temporary folder may go too, before the rows are handed on.
                drop(temp);
                let _ = tx.send(Event::Done(result));
            })?
    };

    // (A Mutex makes the receiver `Sync`, as `detach` asks of what it borrows.)
    let rx = std::sync::Mutex::new(rx);
    let wait = |timeout: Duration| {
        py.detach(|| match rx.lock() {
            Ok(rx) => rx.recv_timeout(timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        })
    };
    let outcome = loop {
        let ev = wait(POLL);
        let step = match ev {
            Ok(Event::Done(r)) => break r,
            Ok(ev) => report(&reporter, ev),
            Err(RecvTimeoutError::Timeout) => Ok(()),
            Err(RecvTimeoutError::Disconnected) => {
                break Err(anyhow::anyhow!(
                    "the simulation thread ended without a result (it panicked; see stderr)"
                ))
            }
        };
        // Ctrl-C, or an exception in the reporter (where a pending
        // KeyboardInterrupt may surface first).
        if let Err(e) = step.and_then(|()| py.check_signals()) {
            stop.store(true, Ordering::SeqCst);
            let deadline = Instant::now() + grace;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                match wait(left.min(POLL)) {
                    Ok(Event::Done(_)) | Err(RecvTimeoutError::Disconnected) => break,
                    // What the stopping run says (the rows kept, how to
                    // resume) is shown; progress no longer is.
                    Ok(Event::Note(msg)) => {
                        let _ = report(&reporter, Event::Note(msg));
                    }
                    Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                }
                // A second Ctrl-C stops waiting at once.
                if py.check_signals().is_err() {
                    break;
                }
            }
            return Err(e);
        }
    };
    // The worker has sent its last word and is ending.
    let _ = py.detach(|| worker.join());
    let done = outcome.map_err(to_py)?;

    let info = PyDict::new(py);
    info.set_item("engines", done.engines)?;
    info.set_item("spec_toml", done.spec_toml)?;
    info.set_item("source", done.source)?;
    info.set_item("out", done.out)?;
    info.set_item("new_rows", done.new_rows)?;
    info.set_item("wide_points", done.wide_points)?;
    info.set_item("sim_seconds", done.sim_seconds)?;
    info.set_item("sim_customers", done.sim_customers)?;
    Ok(((columns(), done.rows), info))
}

/// `qsweep analytic`: the grid's baselines. Returns the table (as text) and
/// the spec's notes.
#[pyfunction]
#[pyo3(signature = (argv, spec=None, spec_text=None))]
fn analytic(
    argv: Vec<String>,
    spec: Option<PathBuf>,
    spec_text: Option<String>,
) -> PyResult<(Table, Vec<String>)> {
    let flags: AnalyticFlags = parse(&argv)?;
    let mut sweep = flags.args.sweep();
    sweep.spec = spec;
    sweep.spec_text = spec_text;
    let spec = Spec::load(&sweep).map_err(|e| to_py(e.into()))?;
    let table = qsweep_core::run::analytic_table(&spec);
    let (header, rows) = (table.header, table.rows);
    let notes = spec
        .notes()
        .into_iter()
        .map(|n| format!("qsweep: note: {n}"))
        .collect();
    Ok(((header, rows), notes))
}

#[pymodule]
fn _qsweep(m: &Bound<'_, PyModule>) -> PyResult<()> {
    qsweep_core::provenance::set_git_revision(option_env!("QSWEEP_GIT_REVISION"));
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(analytic, m)?)?;
    m.add_function(wrap_pyfunction!(flag_names, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(column_kind, m)?)?;
    m.add("VERSION", qsweep_core::provenance::VERSION)?;
    Ok(())
}
