//! Ctrl-C and SIGTERM during a run: the first sets the stop flag, which the
//! engines watch inside their calls (`engine::Watch`), so the run stops
//! within milliseconds: every point finished before keeps its row, the
//! points being simulated are dropped (a resumed run simulates them again),
//! the `.meta.json` says `interrupted`, the process exits 130. A second one
//! exits at once, and so does the first before the run loop watches the
//! flag ([`set_watched`]): nothing has been simulated yet then, and the
//! steps before it (`--warmup auto` pilots, a calibration) do not look at
//! the flag. The CSV stays resumable either way; what to type to resume is
//! printed.
//!
//! A clean stop that takes longer than [`STOP_GRACE`] (a GPU pipeline
//! being compiled, a pass that cannot be cut short, a driver's slow
//! teardown) is ended as a second Ctrl-C would end it: the promise is a
//! stop within about a second, whatever the engine is doing (issue 25).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

use crate::provenance::{self, Meta, Status};

/// Set by Ctrl-C (or SIGTERM): the run loop and the engines watch it.
static STOP: AtomicBool = AtomicBool::new(false);
/// Whether something watches [`STOP`] (else Ctrl-C exits at once).
static WATCHED: AtomicBool = AtomicBool::new(false);
/// What a second Ctrl-C prints: how to resume.
static RESUME_HINT: Mutex<String> = Mutex::new(String::new());
/// The running run's `.meta.json` (path and contents), so a second Ctrl-C,
/// which exits at once, still records the run as interrupted.
static ABORT_META: Mutex<Option<(PathBuf, Meta)>> = Mutex::new(None);
/// The run has written its final meta (and said how it ended).
static ENDED: AtomicBool = AtomicBool::new(false);

/// How long the run has after the first Ctrl-C to stop cleanly (its final
/// `.meta.json`, its summary) before it is stopped at once. A clean stop
/// takes milliseconds on the CPU and at most a pass on a GPU (a fraction
/// of a second on lavapipe, see `crates/qsweep-gpu/src/pass_rates.rs`).
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// The flag the run loop polls ([`crate::run::run_points_until`]).
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// From now on the run loop watches the stop flag: Ctrl-C stops the run
/// cleanly instead of exiting at once.
pub fn set_watched() {
    WATCHED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// The command that resumes the current run, printed if the user stops it
/// at once.
pub fn set_resume_hint(hint: &str) {
    if let Ok(mut h) = RESUME_HINT.lock() {
        hint.clone_into(&mut h);
    }
}

/// Records the meta a second Ctrl-C must mark interrupted.
pub fn set_abort_meta(path: PathBuf, meta: &Meta) {
    if let Ok(mut m) = ABORT_META.lock() {
        *m = Some((path, meta.clone()));
    }
}

/// Keeps that meta's row counts current.
pub fn set_abort_rows(points_done: u64, points_run: u64) {
    if let Ok(mut m) = ABORT_META.lock() {
        if let Some((_, meta)) = m.as_mut() {
            meta.points_done = points_done;
            meta.run.points_run = points_run;
        }
    }
}

/// The run has written its own final meta.
pub fn clear_abort_meta() {
    if let Ok(mut m) = ABORT_META.lock() {
        *m = None;
    }
    ENDED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Marks the running run's meta interrupted (a second Ctrl-C).
fn write_abort_meta() {
    if let Ok(mut m) = ABORT_META.lock() {
        if let Some((path, mut meta)) = m.take() {
            meta.run.status = Status::Interrupted;
            meta.run.ended = Some(provenance::now_rfc3339());
            let _ = meta.write(&path);
        }
    }
}

/// Ctrl-C and SIGTERM (a batch scheduler's notice) set the stop flag; a
/// second one exits at once (the CSV's whole rows are kept either way).
/// SIGHUP is left alone, so `nohup qsweep run ...` survives a closed
/// terminal.
#[cfg(unix)]
pub fn install() {
    use crate::progress;
    use signal_hook::consts::{SIGINT, SIGTERM};
    use std::sync::atomic::Ordering;
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
            if STOP.swap(true, Ordering::SeqCst) || !WATCHED.load(Ordering::SeqCst) {
                stop_at_once(None);
            }
            progress::say(
                "qsweep: interrupt: stopping; the points being simulated are dropped (--resume \
                 runs them again); press Ctrl-C again to stop at once",
            );
            // A clean stop that does not come within the grace is forced.
            std::thread::spawn(|| {
                std::thread::sleep(STOP_GRACE);
                stop_at_once(Some(STOP_GRACE));
            });
        }
    });
}

/// Ends the process now with 130: a second Ctrl-C, the first before the
/// run loop watches the flag, or (`late`) a clean stop that took longer
/// than that. The running run's meta is marked interrupted.
#[cfg(unix)]
fn stop_at_once(late: Option<Duration>) -> ! {
    use crate::progress;
    if late.is_some() && ENDED.load(std::sync::atomic::Ordering::SeqCst) {
        // The run has stopped and said so; only its teardown is slow.
        std::process::exit(130);
    }
    let hint = RESUME_HINT.lock().map(|h| h.clone()).unwrap_or_default();
    write_abort_meta();
    let how = match late {
        Some(grace) => format!(
            "qsweep: interrupted: not stopped within {} s; stopped at once",
            grace.as_secs_f64()
        ),
        None => "qsweep: stopped at once".to_string(),
    };
    if hint.is_empty() {
        // Caught before the run had its CSV: nothing to resume.
        progress::say("qsweep: stopped before the run started; nothing was written");
    } else {
        progress::say(&format!(
            "{how}; the CSV keeps its whole rows. To resume:\n  {hint}"
        ));
    }
    std::process::exit(130);
}

/// Elsewhere Ctrl-C ends the process; the CSV stays resumable.
#[cfg(not(unix))]
pub fn install() {}
