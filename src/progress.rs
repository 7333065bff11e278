//! Progress on standard error while a sweep runs.
//!
//! On a terminal: one bar (points done/total, customers/s, ETA) that
//! messages print above. Otherwise (a log file, a batch job): one concise
//! line per finished point. With `--quiet`: nothing but what [`Progress::note`]
//! is asked to say anyway. Ctrl-C handlers print through [`say`], which knows
//! the bar.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Bar,
    Lines,
    Quiet,
}

impl Mode {
    /// The bar when standard error is a terminal, lines otherwise; nothing
    /// when `quiet`.
    pub fn detect(quiet: bool) -> Mode {
        if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// The bar in use, for [`say`].
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Prints a line on standard error, above the bar if one is showing.
pub fn say(msg: &str) {
    let bar = BAR.lock().ok().and_then(|b| b.clone());
    match bar {
        Some(b) if !b.is_hidden() => b.println(msg),
        _ => eprintln!("{msg}"),
    }
}

/// Progress of one run.
pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
    /// Points the file will hold (its shard's), and those already in it.
    total: u64,
    done: u64,
    /// Customers simulated by this invocation and since when.
    customers: f64,
    started: Instant,
}

impl Progress {
    /// `total` points, `done` of them already finished (a resumed run).
    pub fn new(mode: Mode, total: u64, done: u64) -> Progress {
        let bar = (mode == Mode::Bar).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} points  {msg}  ETA {eta}",
                )
                .expect("valid template"),
            );
            bar.set_position(done);
            bar.reset_eta();
            bar.set_message("starting");
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        if let Ok(mut b) = BAR.lock() {
            b.clone_from(&bar);
        }
        Progress {
            mode,
            bar,
            total,
            done,
            customers: 0.0,
            started: Instant::now(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Points finished so far (resumed ones included) and the total.
    pub fn counts(&self) -> (u64, u64) {
        (self.done, self.total)
    }

    /// Customers per second of wall time in this invocation.
    pub fn rate(&self) -> f64 {
        self.customers / self.started.elapsed().as_secs_f64().max(1e-9)
    }

    /// One more point finished, with `customers` simulated; `line` is the
    /// per-point line for [`Mode::Lines`].
    pub fn point(&mut self, customers: f64, line: impl FnOnce() -> String) {
        self.done += 1;
        self.customers += customers;
        match self.mode {
            Mode::Bar => {
                if let Some(b) = &self.bar {
                    b.set_position(self.done);
                    b.set_message(format!("{:.3e} customers/s", self.rate()));
                }
            }
            Mode::Lines => eprintln!("[{}/{}] {}", self.done, self.total, line()),
            Mode::Quiet => {}
        }
    }

    /// A message that is not per-point progress (shown unless quiet).
    pub fn note(&self, msg: &str) {
        match self.mode {
            Mode::Quiet => {}
            _ => say(msg),
        }
    }

    /// Removes the bar (before the summary is printed).
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if let Ok(mut b) = BAR.lock() {
            *b = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
