//! Progress on standard error while a sweep runs.
//!
//! Work is counted in customers (warm-up included), not points: one point
//! can be most of a run. Two counters feed it while engine calls run: the
//! engines add customers as they simulate them ([`live_counter`], counted
//! inside replications, so even one enormous replication moves it), and
//! the run loop adds each finished tile's customers ([`customers_done`]).
//! Both are lower bounds of the work done; the display shows the larger.
//! Precision rounds add the work they plan ([`plan_more`]).
//!
//! On a terminal: one bar (customers done of those planned, points,
//! customers/s, ETA) redrawn four times a second by a ticker thread, with
//! messages printed above it. Otherwise (a log file, a batch job): one
//! concise line per finished point, and a line saying how far the run is
//! when no point has finished for a while ([`HEARTBEAT_SECONDS`], or
//! `QSWEEP_PROGRESS_SECONDS`). With `--quiet`: nothing but what
//! [`Progress::note`] is asked to say anyway. Ctrl-C handlers print
//! through [`say`], which knows the bar.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

/// Seconds without a finished point after which [`Mode::Lines`] says how
/// far the run is.
pub const HEARTBEAT_SECONDS: f64 = 60.0;

/// Customers the engines have simulated (process-wide, never reset).
static LIVE: AtomicU64 = AtomicU64::new(0);
/// Customers of finished tiles (process-wide, never reset).
static DONE: AtomicU64 = AtomicU64::new(0);
/// Customers planned by rounds after the first (process-wide).
static PLANNED: AtomicU64 = AtomicU64::new(0);

/// The counter engines add simulated customers to (see `engine::Watch`).
pub fn live_counter() -> &'static AtomicU64 {
    &LIVE
}

/// `customers` more in finished tiles.
pub fn customers_done(customers: f64) {
    DONE.fetch_add(customers as u64, Ordering::Relaxed);
}

/// `customers` more planned (a precision round).
pub fn plan_more(customers: f64) {
    PLANNED.fetch_add(customers as u64, Ordering::Relaxed);
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

/// `1h 02m`, `3m 05s`, `42s`, `0.4s`.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "?".into();
    }
    if seconds < 9.95 {
        return format!("{:.1}s", seconds.max(0.0));
    }
    let s = seconds.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d {:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// What the ticker and the per-point lines share.
struct Shared {
    /// Points the file will hold (its shard's), and those already in it.
    total: u64,
    done: AtomicU64,
    /// Customers this invocation plans (first rounds), and the counters'
    /// values when it started.
    planned: f64,
    base: [u64; 3],
    started: Instant,
    /// When [`Mode::Lines`] last printed, in ms since `started`.
    last_line_ms: AtomicU64,
}

impl Shared {
    /// Customers done and planned by this invocation.
    fn customers(&self) -> (f64, f64) {
        let live = LIVE.load(Ordering::Relaxed).saturating_sub(self.base[0]);
        let done = DONE.load(Ordering::Relaxed).saturating_sub(self.base[1]);
        let more = PLANNED.load(Ordering::Relaxed).saturating_sub(self.base[2]);
        let planned = self.planned + more as f64;
        ((live.max(done) as f64).min(planned), planned)
    }

    /// Customers per second of wall time, and seconds left at that rate.
    fn rate_and_eta(&self) -> (f64, f64) {
        let (done, planned) = self.customers();
        let rate = done / self.started.elapsed().as_secs_f64().max(1e-9);
        let eta = if done > 0.0 {
            (planned - done) / rate
        } else {
            f64::NAN
        };
        (rate, eta)
    }

    /// `3/20 points · 1.23e9 of 3.00e9 customers (41.0%) · 5.00e7/s · ETA
    /// 1m 05s`.
    fn status(&self) -> String {
        let (done, planned) = self.customers();
        let (rate, eta) = self.rate_and_eta();
        format!(
            "{}/{} points · {:.2e} of {:.2e} customers ({:.1}%) · {:.2e}/s · ETA {}",
            self.done.load(Ordering::Relaxed),
            self.total,
            done,
            planned,
            100.0 * done / planned.max(1.0),
            rate,
            duration(eta)
        )
    }
}

/// Progress of one run.
pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
    shared: Arc<Shared>,
    /// Customers of the points finished by this invocation.
    customers: f64,
    ticker: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

/// Seconds between heartbeat lines: [`HEARTBEAT_SECONDS`] or
/// `QSWEEP_PROGRESS_SECONDS`.
fn heartbeat_seconds() -> f64 {
    std::env::var("QSWEEP_PROGRESS_SECONDS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(HEARTBEAT_SECONDS)
}

impl Progress {
    /// `total` points, `done` of them already finished (a resumed run);
    /// `customers` planned for the rest (their first rounds).
    pub fn new(mode: Mode, total: u64, done: u64, customers: f64) -> Progress {
        let bar = (mode == Mode::Bar).then(|| {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar}  {msg}")
                    .expect("valid template"),
            );
            bar.set_message("starting");
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        if let Ok(mut b) = BAR.lock() {
            b.clone_from(&bar);
        }
        let shared = Arc::new(Shared {
            total,
            done: AtomicU64::new(done),
            planned: customers,
            base: [
                LIVE.load(Ordering::Relaxed),
                DONE.load(Ordering::Relaxed),
                PLANNED.load(Ordering::Relaxed),
            ],
            started: Instant::now(),
            last_line_ms: AtomicU64::new(0),
        });
        let ticker = match mode {
            Mode::Quiet => None,
            Mode::Bar | Mode::Lines => {
                let halt = Arc::new(AtomicBool::new(false));
                let (h, s, b) = (halt.clone(), shared.clone(), bar.clone());
                let heartbeat = heartbeat_seconds();
                let handle = std::thread::spawn(move || tick(&h, &s, b.as_ref(), heartbeat));
                Some((halt, handle))
            }
        };
        Progress {
            mode,
            bar,
            shared,
            customers: 0.0,
            ticker,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Points finished so far (resumed ones included) and the total.
    pub fn counts(&self) -> (u64, u64) {
        (self.shared.done.load(Ordering::Relaxed), self.shared.total)
    }

    /// Customers per second of wall time in this invocation (finished
    /// points).
    pub fn rate(&self) -> f64 {
        self.customers / self.shared.started.elapsed().as_secs_f64().max(1e-9)
    }

    /// One more point finished, with `customers` simulated; `line` is the
    /// per-point line for [`Mode::Lines`].
    pub fn point(&mut self, customers: f64, line: impl FnOnce() -> String) {
        let done = self.shared.done.fetch_add(1, Ordering::Relaxed) + 1;
        self.customers += customers;
        match self.mode {
            Mode::Bar => {
                if let Some(b) = &self.bar {
                    draw(b, &self.shared);
                }
            }
            Mode::Lines => {
                eprintln!("[{}/{}] {}", done, self.shared.total, line());
                let ms = self.shared.started.elapsed().as_millis() as u64;
                self.shared.last_line_ms.store(ms, Ordering::Relaxed);
            }
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
        if let Some((halt, handle)) = self.ticker.take() {
            halt.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if let Ok(mut b) = BAR.lock() {
            *b = None;
        }
    }
}

/// Redraws the bar from the counters.
fn draw(bar: &ProgressBar, s: &Shared) {
    let (done, planned) = s.customers();
    bar.set_position((1000.0 * done / planned.max(1.0)) as u64);
    bar.set_message(s.status());
}

/// The ticker: the bar redrawn four times a second; in [`Mode::Lines`], a
/// status line after `heartbeat` seconds without one.
fn tick(halt: &AtomicBool, s: &Shared, bar: Option<&ProgressBar>, heartbeat: f64) {
    let step = Duration::from_millis(if bar.is_some() { 250 } else { 50 });
    while !halt.load(Ordering::Relaxed) {
        std::thread::sleep(step);
        if let Some(b) = bar {
            draw(b, s);
            continue;
        }
        let now = s.started.elapsed().as_millis() as u64;
        if now.saturating_sub(s.last_line_ms.load(Ordering::Relaxed)) as f64 >= heartbeat * 1e3 {
            s.last_line_ms.store(now, Ordering::Relaxed);
            if !halt.load(Ordering::Relaxed) {
                eprintln!("qsweep: progress: {}", s.status());
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(0.44), "0.4s");
        assert_eq!(duration(9.96), "10s");
        assert_eq!(duration(42.0), "42s");
        assert_eq!(duration(185.0), "3m 05s");
        assert_eq!(duration(3720.0), "1h 02m");
        assert_eq!(duration(90_000.0), "1d 01h");
        assert_eq!(duration(f64::NAN), "?");
    }

    #[test]
    fn the_status_counts_customers_from_either_counter() {
        let mut p = Progress::new(Mode::Quiet, 4, 1, 1000.0);
        // (Other tests may count concurrently: only lower bounds hold.)
        customers_done(250.0);
        let (done, planned) = p.shared.customers();
        assert!(done >= 250.0 && planned >= 1000.0, "{done} {planned}");
        LIVE.fetch_add(600, Ordering::Relaxed);
        assert!(p.shared.customers().0 >= 600.0);
        p.point(100.0, String::new);
        assert_eq!(p.counts(), (2, 4));
        assert!(p.shared.status().starts_with("2/4 points · "));
        p.finish();
    }
}
