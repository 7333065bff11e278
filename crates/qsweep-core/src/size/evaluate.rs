//! Judging one R of a sizing search: exactly where the analytic baseline
//! is exact, else by one point simulated as `qsweep run` would, each
//! simulation saved to the search's journal as it is made.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use anyhow::Result;

use super::{Case, Eval, How, Lost, Metric, Target};
use crate::engine::Engine;
use crate::run::{self, PointResult};
use crate::spec::Spec;
use crate::stats::{PointStats, TailModel};

/// A point simulated for the search, kept for the other targets of the
/// same case (one simulation gives every metric).
struct Simulated {
    /// Statistics, section histograms and their scale; None: the queue
    /// outgrew the memory limit (the point's row would carry an error).
    result: Option<(PointStats, Vec<Vec<u64>>, f64, TailModel)>,
    seconds: f64,
}

/// Judges R for the search: exactly where the baseline is exact (unless
/// `simulate`), else by one point simulated on the engine, each simulation
/// done once per case and R whatever the number of targets.
pub struct Evaluator<'a> {
    engine: &'a mut dyn Engine,
    simulate: bool,
    stop: &'a AtomicBool,
    cache: HashMap<(usize, u32), Simulated>,
    /// Where each simulated evaluation is saved as it is made.
    journal: Option<Journal>,
    /// The metrics of every target, saved for each simulated point.
    metrics: Vec<Metric>,
}

impl<'a> Evaluator<'a> {
    /// `simulate`: simulate even where a formula is exact.
    pub fn new(engine: &'a mut dyn Engine, simulate: bool, stop: &'a AtomicBool) -> Self {
        Evaluator {
            engine,
            simulate,
            stop,
            cache: HashMap::new(),
            journal: None,
            metrics: Vec::new(),
        }
    }

    /// Save every simulated evaluation to `journal` (the values of every
    /// metric in `metrics`), and take the evaluations it already holds
    /// instead of simulating them again.
    pub fn with_journal(mut self, journal: Journal, metrics: Vec<Metric>) -> Self {
        self.journal = Some(journal);
        self.metrics = metrics;
        self
    }

    /// The metric of `target` for case number `id` (`case`) at `n`.
    pub fn eval(&mut self, id: usize, case: &Case, n: u32, target: &Target) -> Result<Eval> {
        let mut spec = case.at(n);
        if let Some(t) = target.metric.slo() {
            spec.run.slo = vec![t];
        }
        let points = spec.points();
        let point = &points[0];
        if let Metric::PLost(lost) = target.metric {
            if let Err(needs) = lost.check(point) {
                return Err(crate::UsageError(format!(
                    "--target: '{target}' needs {needs} in the spec; expected a target on \
                     what the spec's requests can lose, or the spec's {} axis",
                    if lost == Lost::Block {
                        "capacity"
                    } else {
                        "patience"
                    }
                ))
                .into());
            }
        }
        if !point.stable {
            return Ok(Eval::unstable(n));
        }
        spec.validate_points()?;
        let base = run::baseline(point);
        if !self.simulate {
            if let Some(value) = target.metric.exact(&base) {
                if matches!(target.metric, Metric::MeanWait | Metric::PWaitGt(_))
                    && !target.strict
                    && target.bound == 0.0
                    && point.lambda > 0.0
                {
                    // Under Poisson arrivals every finite fleet has a
                    // positive mean wait: an exact 0 is floating-point
                    // underflow, and answering with it (issue 25: 177
                    // servers "exact" at λ = 1) would be wrong.
                    return Err(crate::UsageError(format!(
                        "--target: '{target}' is met only by an infinite fleet ({}: every \
                         finite fleet has a positive wait); expected a bound > 0",
                        base.method
                    ))
                    .into());
                }
                return Ok(Eval {
                    n,
                    value,
                    ci95: None,
                    how: How::Exact(base.method),
                    seconds: 0.0,
                    reused: false,
                    from_journal: false,
                });
            }
        }
        let reused = self.cache.contains_key(&(id, n));
        let hash = crate::provenance::spec_hash(&spec, &[]);
        if !reused {
            if let Some(e) = self
                .journal
                .as_ref()
                .and_then(|j| j.get(&hash, target.metric, n))
            {
                return Ok(e);
            }
            let sim = self.simulate_point(&spec, points)?;
            if let Some(j) = self.journal.as_mut() {
                j.record(&hash, id, n, &spec, &sim, &self.metrics)?;
            }
            self.cache.insert((id, n), sim);
        }
        let sim = &self.cache[&(id, n)];
        let seconds = if reused { 0.0 } else { sim.seconds };
        Ok(match &sim.result {
            None => Eval {
                n,
                value: f64::INFINITY,
                ci95: None,
                how: How::Overflow,
                seconds,
                reused,
                from_journal: false,
            },
            Some((stats, hist, scale, tail)) => {
                let (value, ci95) = target.metric.simulated(stats, hist, *scale, *tail);
                Eval {
                    n,
                    value,
                    ci95,
                    how: How::Simulated,
                    seconds,
                    reused,
                    from_journal: false,
                }
            }
        })
    }

    /// One point, as `qsweep run` would simulate it.
    fn simulate_point(
        &mut self,
        spec: &Spec,
        points: Vec<crate::spec::GridPoint>,
    ) -> Result<Simulated> {
        let (mut prepared, table) = run::prepare(spec, points);
        if spec.run.warmup_auto {
            run::warmup::resolve(&mut prepared, &table, spec.run.reps, spec.run.threads);
        }
        let started = std::time::Instant::now();
        let mut got = None;
        run::run_points_until(
            &prepared,
            &table,
            spec.run.reps,
            self.engine,
            &mut |r: PointResult<'_>| {
                // A point whose queue outgrew the memory limit (its row
                // would carry an error): the queue grows without bound here.
                got = Some(match r.error {
                    Some(_) => None,
                    None => Some((
                        r.stats,
                        r.hist,
                        r.point.scale,
                        TailModel::of(&r.point.grid.service),
                    )),
                });
                Ok(())
            },
            self.stop,
            true,
        )?;
        Ok(Simulated {
            result: got.expect("one point reported"),
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// The columns of a `qsweep size` journal.
pub const JOURNAL_COLUMNS: [&str; 8] = [
    "point_hash",
    "case",
    "n",
    "metric",
    "value",
    "ci95",
    "how",
    "seconds",
];

/// The evaluations of a search, saved as they are made (one CSV row per
/// simulated point and metric, flushed each time), so that a search that
/// is killed or interrupted loses at most the point being simulated:
/// `--resume` reads them back and simulates only the rest. A row is keyed
/// by the hash of the one-point spec it simulated (its canonical TOML:
/// laws, load, fleet, replications, customers, warm-up, seed), so a
/// journal never answers for a point simulated differently.
pub struct Journal {
    path: std::path::PathBuf,
    writer: csv::Writer<std::fs::File>,
    saved: HashMap<(String, String), (f64, Option<f64>, bool)>,
    /// Rows read back from an earlier search.
    pub loaded: usize,
}

impl Journal {
    /// Opens `path`: a new journal (an existing one is refused unless
    /// `force`, which starts it again, or `resume`, which reads it and
    /// appends).
    pub fn open(path: &std::path::Path, resume: bool, force: bool) -> Result<Journal> {
        use std::fs::OpenOptions;
        let usage = |m: String| -> anyhow::Error { crate::UsageError(m).into() };
        crate::files::regular_output(path, "--journal")?;
        let exists = path.symlink_metadata().is_ok();
        let mut saved = HashMap::new();
        let mut loaded = 0;
        if exists && resume {
            let mut r = csv::ReaderBuilder::new()
                .flexible(true)
                .from_path(path)
                .map_err(|e| usage(format!("--journal: cannot read '{}': {e}", path.display())))?;
            let header: Vec<String> = r
                .headers()
                .map_err(|e| usage(format!("--journal: '{}': {e}", path.display())))?
                .iter()
                .map(str::to_string)
                .collect();
            if header != JOURNAL_COLUMNS {
                return Err(usage(format!(
                    "--journal: '{}' is not a journal of qsweep size (its header is {}); \
                     expected {}",
                    path.display(),
                    header.join(","),
                    JOURNAL_COLUMNS.join(",")
                )));
            }
            // A row cut short by a kill is left out (its point runs again).
            for rec in r.records().flatten() {
                if rec.len() != JOURNAL_COLUMNS.len() {
                    continue;
                }
                let value: Option<f64> = rec[4].parse().ok();
                let (Some(value), how) = (value, &rec[6]) else {
                    continue;
                };
                let overflow = how == "overflow";
                if !overflow && how != "simulated" {
                    continue;
                }
                saved.insert(
                    (rec[0].to_string(), rec[3].to_string()),
                    (value, rec[5].parse().ok(), overflow),
                );
                loaded += 1;
            }
        } else if exists && !force {
            return Err(usage(format!(
                "--journal: '{}' already exists; pass --resume to continue the search it \
                 saved, or --force to start again",
                path.display()
            )));
        }
        let file = if exists && resume {
            OpenOptions::new().append(true).open(path)
        } else {
            std::fs::File::create(path)
        }
        .map_err(|e| usage(format!("--journal: cannot open '{}': {e}", path.display())))?;
        let empty = file.metadata().map(|m| m.len() == 0).unwrap_or(true);
        let mut writer = csv::Writer::from_writer(file);
        if empty {
            writer.write_record(JOURNAL_COLUMNS)?;
            writer.flush()?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            writer,
            saved,
            loaded,
        })
    }

    /// The saved evaluation of `metric` at the point `hash` (server count `n`).
    fn get(&self, hash: &str, metric: Metric, n: u32) -> Option<Eval> {
        let &(value, ci95, overflow) = self.saved.get(&(hash.to_string(), metric.name()))?;
        Some(Eval {
            n,
            value: if overflow { f64::INFINITY } else { value },
            ci95,
            how: if overflow {
                How::Overflow
            } else {
                How::Simulated
            },
            seconds: 0.0,
            reused: true,
            from_journal: true,
        })
    }

    /// Saves (and flushes) the metrics of one simulated point.
    fn record(
        &mut self,
        hash: &str,
        case: usize,
        n: u32,
        spec: &Spec,
        sim: &Simulated,
        metrics: &[Metric],
    ) -> Result<()> {
        let num = crate::output::num;
        for &m in metrics {
            // P(wait > t) is known only for the threshold simulated.
            if m.slo().is_some() && spec.run.slo.first().copied() != m.slo() {
                continue;
            }
            let (value, ci95, how) = match &sim.result {
                None => (f64::INFINITY, None, "overflow"),
                Some((stats, hist, scale, tail)) => {
                    let (v, ci) = m.simulated(stats, hist, *scale, *tail);
                    (v, ci, "simulated")
                }
            };
            self.writer
                .write_record([
                    hash.to_string(),
                    case.to_string(),
                    n.to_string(),
                    m.name(),
                    num(value),
                    ci95.map(num).unwrap_or_default(),
                    how.to_string(),
                    format!("{:.3}", sim.seconds),
                ])
                .and_then(|()| self.writer.flush().map_err(csv::Error::from))
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))?;
            self.saved.insert(
                (hash.to_string(), m.name()),
                (value, ci95, how == "overflow"),
            );
        }
        Ok(())
    }
}
