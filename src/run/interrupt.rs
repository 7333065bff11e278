//! Ctrl-C and SIGTERM during a run: the first asks the run loop to stop after
//! the points in flight (their rows are kept), the second exits at once. The
//! CSV stays resumable either way; what to type to resume is printed.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// Set by Ctrl-C (or SIGTERM): the run loop checks it between rounds.
static STOP: AtomicBool = AtomicBool::new(false);
/// What a second Ctrl-C prints: how to resume.
static RESUME_HINT: Mutex<String> = Mutex::new(String::new());

/// The flag the run loop polls ([`crate::run::run_points_until`]).
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// The command that resumes the current run, printed if the user stops it
/// at once.
pub fn set_resume_hint(hint: &str) {
    if let Ok(mut h) = RESUME_HINT.lock() {
        hint.clone_into(&mut h);
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
pub fn install() {}
