//! How long a dispatch's passes are: [`PassLength`] per adapter and a model
//! of each pipeline's pass time fitted to the passes it has run
//! ([`PassRates`]): on hardware passes are cut to [`TARGET_PASS_SECONDS`]
//! by it; on a software adapter to its loop cap, and to
//! [`SOFTWARE_PASS_SECONDS`] by it, so that a stop between passes is
//! answered within a fraction of a second (issue 25: a loop-budget pass of
//! 2^16 replications ran for seconds on lavapipe, and Ctrl-C waited for it).
//!
//! The model is `t = a + b · w`: `a` the fixed seconds of a pass (encoding,
//! submission, launch, the host's wait: tens of microseconds on a discrete
//! GPU, about 20 ms on lavapipe), `b` the seconds per loop iteration of one
//! replication (`w`: customers × [`loop_cost_per_customer`]) at the
//! dispatch's width. A model of `b` alone, as this engine had, reads a pass
//! that is mostly fixed cost as a slow kernel and shrinks the next pass,
//! which is then even more fixed cost: on lavapipe passes collapsed to a
//! few customers each. Fitting both and aiming the variable part at least
//! at the fixed cost keeps a pass's overhead at most half of it whatever
//! the device.
//!
//! The fit is Theil–Sen (Theil 1950; Sen 1968: the median of the pairwise
//! slopes, then the median intercept) over a pipeline's last
//! [`RECENT_PASSES`] passes, so one odd pass (a timer glitch, the short last
//! pass of a dispatch, a first pass that was mostly launch latency) moves
//! neither `a` nor `b` far. A pass is at most [`MAX_GROWTH_PER_PASS`] times
//! the largest one measured, so the model never extrapolates far.
//!
//! [`loop_cost_per_customer`]: qsweep_core::contract::costs::loop_cost_per_customer

use std::collections::{BTreeMap, VecDeque};

use super::plan::{DispatchPlan, MAX_PASS_CUSTOMERS};
use super::Specialization;

/// Device time one pass should take on a hardware adapter. Short enough to
/// stay far from OS GPU watchdogs (Windows resets a device whose work runs
/// about 2 s, TDR's default) and for a stop flag checked between passes to
/// answer within a few of them (at most [`PASSES_IN_FLIGHT`] + 1 passes are
/// queued or running); long enough that a pass's fixed cost on the host and
/// the device (encoding, submission, a launch: tens of microseconds) stays
/// near 0.1% of it. Where the fixed cost is larger (a software adapter
/// planned as hardware), a pass's variable part is at least its fixed cost.
///
/// [`PASSES_IN_FLIGHT`]: super::timer::PASSES_IN_FLIGHT
pub const TARGET_PASS_SECONDS: f64 = 0.03;

/// Device time a software adapter's pass may take at most
/// ([`PassLength::LoopBudget`]): its passes also end at its loop cap,
/// whichever comes first. A stop waits for the running pass and the one
/// queued behind it (see `submit.rs`), so for at most twice this, a
/// measured pass time that follows the machine's load; a pass's fixed cost
/// (about 20 ms on lavapipe) stays under a tenth of it. Before a pipeline
/// has been measured its pass is sized for this at
/// [`START_LOOPS_PER_SECOND`], lavapipe's slowest kernel, so even a first
/// pass over 2^16 replications keeps to it.
pub const SOFTWARE_PASS_SECONDS: f64 = 0.25;

/// Loop iterations ([`loop_cost_per_customer`] × customers, summed over a
/// pass's replications) per second that a hardware adapter is assumed to run
/// before its pipeline has been measured. Lavapipe's slowest kernel on the
/// development machine's two cores runs about this many (docs/speed.md: jsq
/// with R = 100 at 9 × 10⁵ customers/s, about 100 loop iterations each; its
/// M/M/1 runs 2 × 10⁹), and any hardware GPU is faster, so a first pass takes
/// at most about [`FIRST_PASS_SECONDS`].
///
/// [`loop_cost_per_customer`]: qsweep_core::contract::costs::loop_cost_per_customer
pub(super) const START_LOOPS_PER_SECOND: f64 = 1e8;

/// Device time a pipeline's first pass is sized for, before any of its
/// passes has been measured: a tenth of [`TARGET_PASS_SECONDS`], so that on
/// a device 100 times slower than [`START_LOOPS_PER_SECOND`] the first pass
/// still ends in about 0.3 s, far inside Windows' 2 s watchdog (a pass's
/// length is fixed before it runs; only the next one can learn from it). On
/// a fast device the extra passes this costs are a few launches
/// (`tests.rs`: a device 1000 times faster reaches its target in 6 passes).
const FIRST_PASS_SECONDS: f64 = TARGET_PASS_SECONDS / 10.0;

/// A pass is at most this many times longer (in customers per replication)
/// than the longest pass of its pipeline measured so far: the model is
/// fitted on those passes and is not trusted far beyond them.
const MAX_GROWTH_PER_PASS: f64 = 8.0;

/// Passes of a pipeline the model is fitted on (the most recent).
const RECENT_PASSES: usize = 8;

/// How one adapter's passes are cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PassLength {
    /// A software adapter: [`pass_customers`] (its loop cap, [`LOOP_BUDGET`]),
    /// and at most [`SOFTWARE_PASS_SECONDS`] by the pipeline's model.
    ///
    /// [`pass_customers`]: super::plan::pass_customers
    /// [`LOOP_BUDGET`]: super::plan::LOOP_BUDGET
    LoopBudget,
    /// A hardware adapter: [`TARGET_PASS_SECONDS`] by the pipeline's model;
    /// `loop_capped` where the adapter is software planned as hardware
    /// (`QSWEEP_ADAPTER_CLASS=hardware`), whose passes also stay within its
    /// loop cap, or its loops would end early.
    Timed { loop_capped: bool },
    /// This many customers per pass (tests: the results must not depend on
    /// the cutting).
    #[cfg(test)]
    Fixed(u32),
}

impl PassLength {
    /// Adapters planned as software ([`AdapterClass`]) cap loop iterations;
    /// hardware ones are timed.
    ///
    /// [`AdapterClass`]: super::AdapterClass
    pub fn for_adapter(desc: &super::AdapterDesc) -> Self {
        match desc.class {
            super::AdapterClass::Software => Self::LoopBudget,
            super::AdapterClass::Hardware => Self::Timed {
                loop_capped: desc.is_software,
            },
        }
    }
}

/// One pipeline's pass times, `t = fixed + per_loop · w · crowding`, fitted
/// to its recent passes (all at `lanes` replications).
#[derive(Clone, Debug)]
struct PassModel {
    /// Recent passes: (loop iterations per replication, seconds).
    recent: VecDeque<(f64, f64)>,
    /// Replications of the dispatch the recent passes ran in. A dispatch as
    /// wide or narrower is predicted at the same time per replication (the
    /// device may not have been full); a wider one proportionally longer
    /// (it may have been): both err on the long side.
    lanes: u64,
    fixed: f64,
    per_loop: f64,
    /// The longest pass measured (loop iterations per replication).
    longest: f64,
}

impl PassModel {
    fn crowding(&self, lanes: u64) -> f64 {
        (lanes as f64 / self.lanes.max(1) as f64).max(1.0)
    }

    /// The loop iterations per replication a pass over `lanes` replications
    /// should hold: its variable part at `target` seconds, and at least the
    /// fixed cost, within [`MAX_GROWTH_PER_PASS`] of the longest measured.
    fn pass_loops(&self, lanes: u64, target: f64) -> f64 {
        let variable = (target - self.fixed).max(self.fixed);
        let loops = variable / (self.per_loop * self.crowding(lanes)).max(f64::MIN_POSITIVE);
        loops.min(self.longest * MAX_GROWTH_PER_PASS)
    }

    /// Adds a pass and refits.
    fn add(&mut self, lanes: u64, loops: f64, seconds: f64) {
        if lanes != self.lanes {
            // Another width: the fixed cost carries over (it does not depend
            // on the replications), the rest is measured afresh.
            self.recent.clear();
            self.lanes = lanes;
        }
        if self.recent.len() == RECENT_PASSES {
            self.recent.pop_front();
        }
        self.recent.push_back((loops, seconds));
        self.longest = self.longest.max(loops);
        self.refit();
    }

    /// Theil–Sen over the recent passes; with one distinct length only, the
    /// fixed cost is kept and the rest of the time is the loops'.
    fn refit(&mut self) {
        let mut slopes: Vec<f64> = Vec::new();
        for (i, &(xi, ti)) in self.recent.iter().enumerate() {
            for &(xj, tj) in self.recent.iter().skip(i + 1) {
                // Passes of nearly the same length say nothing of the slope.
                if (xj - xi).abs() > 0.05 * xi.max(xj) {
                    slopes.push((tj - ti) / (xj - xi));
                }
            }
        }
        let floor = self
            .recent
            .iter()
            .map(|&(x, t)| t / x.max(1.0))
            .fold(f64::INFINITY, f64::min)
            * 1e-3;
        if let Some(slope) = median(&mut slopes) {
            // A noisy, non-positive slope is clamped: the loops take time.
            self.per_loop = slope.max(floor);
            let mut intercepts: Vec<f64> = self
                .recent
                .iter()
                .map(|&(x, t)| t - self.per_loop * x)
                .collect();
            let shortest = self
                .recent
                .iter()
                .map(|r| r.1)
                .fold(f64::INFINITY, f64::min);
            self.fixed = median(&mut intercepts).unwrap_or(0.0).clamp(0.0, shortest);
        } else {
            let (x, t) = *self.recent.back().expect("a pass was just added");
            self.fixed = self.fixed.min(t);
            self.per_loop = ((t - self.fixed) / x.max(1.0)).max(floor);
        }
    }
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// What cuts a device's passes: its [`PassLength`] and, for timed passes,
/// each pipeline's model, updated as passes retire.
pub(super) struct PassRates {
    pub pass_length: PassLength,
    models: BTreeMap<Specialization, PassModel>,
}

impl PassRates {
    pub fn new(pass_length: PassLength) -> Self {
        Self {
            pass_length,
            models: BTreeMap::new(),
        }
    }

    /// The end of `d`'s pass that starts at customer `begin`: never past
    /// `d.max_total`.
    pub fn pass_end(&self, d: &DispatchPlan, begin: u32) -> u32 {
        let len = match self.pass_length {
            PassLength::LoopBudget => d.loop_budget_pass.min(self.timed_pass(
                d,
                SOFTWARE_PASS_SECONDS,
                SOFTWARE_PASS_SECONDS,
            )),
            PassLength::Timed { loop_capped } => {
                let timed = self.timed_pass(d, TARGET_PASS_SECONDS, FIRST_PASS_SECONDS);
                if loop_capped {
                    timed.min(d.loop_budget_pass)
                } else {
                    timed
                }
            }
            #[cfg(test)]
            PassLength::Fixed(n) => n.clamp(1, MAX_PASS_CUSTOMERS),
        };
        begin.saturating_add(len).min(d.max_total)
    }

    /// Customers per replication of a pass of `d` that takes `target`
    /// seconds by its pipeline's model, or `first` seconds at
    /// [`START_LOOPS_PER_SECOND`] for the whole device before any of its
    /// passes has been measured.
    fn timed_pass(&self, d: &DispatchPlan, target: f64, first: f64) -> u32 {
        let loops = match self.models.get(&d.spec) {
            Some(model) => model.pass_loops(d.lanes(), target),
            // Shared by the dispatch's replications.
            None => first * START_LOOPS_PER_SECOND / d.lanes() as f64,
        };
        // Rounded up: a pass mostly fixed cost (lavapipe's jsq: 1 customer
        // in 20 ms against a 30 ms target) is modelled as all loops until
        // passes of two lengths have been measured, and is asked to grow by
        // target / time, 1.5; rounded down, 1.5 customers stayed 1 for
        // ever (the CLI's hardware-planned run took 1 customer a pass).
        (loops / d.cost as f64)
            .ceil()
            .clamp(1.0, f64::from(MAX_PASS_CUSTOMERS)) as u32
    }

    /// Account for a retired pass of `d` that ran `customers` per replication
    /// in `seconds`.
    pub fn record(&mut self, d: &DispatchPlan, customers: u32, seconds: f64) {
        if customers == 0 || seconds <= 0.0 || !seconds.is_finite() {
            return;
        }
        let loops = f64::from(customers) * d.cost as f64;
        self.models
            .entry(d.spec)
            .or_insert_with(|| PassModel {
                recent: VecDeque::new(),
                lanes: d.lanes(),
                fixed: 0.0,
                per_loop: 0.0,
                longest: 0.0,
            })
            .add(d.lanes(), loops, seconds);
    }

    /// The fitted model of `d`'s pipeline (fixed seconds per pass, seconds
    /// per loop iteration of one replication, longest pass in loops), for
    /// `QSWEEP_DEBUG_PASSES`.
    pub fn fitted(&self, d: &DispatchPlan) -> Option<(f64, f64, f64)> {
        self.models
            .get(&d.spec)
            .map(|m| (m.fixed, m.per_loop, m.longest))
    }

    /// The fitted model of `d`'s pipeline: (fixed seconds per pass, seconds
    /// per loop iteration of one replication), for tests and reports.
    #[cfg(test)]
    pub fn model(&self, d: &DispatchPlan) -> Option<(f64, f64)> {
        self.models.get(&d.spec).map(|m| (m.fixed, m.per_loop))
    }

    /// As if `d`'s pipeline had been measured at `customers_per_second` (all
    /// of `d`'s replications together), with no fixed cost.
    #[cfg(test)]
    pub fn assume(&mut self, d: &DispatchPlan, customers_per_second: f64) {
        let per_rep = customers_per_second / d.lanes() as f64;
        let loops = per_rep * d.cost as f64;
        self.models.insert(
            d.spec,
            PassModel {
                recent: VecDeque::from([(loops, 1.0)]),
                lanes: d.lanes(),
                fixed: 0.0,
                per_loop: 1.0 / loops,
                longest: f64::INFINITY,
            },
        );
    }
}
