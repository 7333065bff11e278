//! The dynamic dispatch policies (`jsq`, `pod`, `jiq`, `lwl`, several
//! routers) against an independent reference and against theory.
//!
//! The reference (`Reference` below) is an obviously-correct event-by-event
//! simulator written for this test only: f64 times, every server a
//! `VecDeque` of the departure times of the requests it holds (tagged with
//! the router that sent them), decisions by linear scans, and its own random
//! numbers (`rand`'s StdRng), so it shares nothing with the engine but the
//! model. The engine runs through the real path (spec text → grid points →
//! `run::prepare` → CPU engine), and the two must agree in distribution:
//! mean wait, P(wait > 0) and the wait percentiles, each within 4 combined
//! standard errors (from the replications for means, from 16 sections for
//! percentiles) plus 1% for the engine's histogram resolution. Seeds are
//! fixed, so the tests are deterministic.
//!
//! Theory: `lwl` reproduces `central` replication by replication (same
//! streams); `jsq` with one server is M/M/1; `pod` with d = 2 at R = 1000 is
//! within 2% of the mean-field limit of the mean sojourn time (see
//! `analytic::mean_field_pod` for its derivation); one router changes
//! nothing. The GPU kernel must reproduce the CPU twin replication by
//! replication.
//!
//! Patience and capacity: the reference models both (a patience per
//! request, a limit per server), and the engine must agree with it on the
//! fraction lost as well; where a policy reduces to a queue with a formula
//! (Erlang B, M/M/1/K, Erlang A, M/M/1+D) both engines must meet it within
//! the run's own CI; and the GPU refuses, abandons and times out the same
//! requests as the CPU.

use std::collections::VecDeque;
use std::path::Path;

use qsweep_core::contract::RepResult;
use qsweep_core::contract::{
    rep_status, DispatchPolicy, Kernel, Law, LawKind, PointParams, Thinning,
};
use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::schedule::{tiles_for_point, tiles_for_points};
use qsweep_core::engine::{Batch, Engine};
use qsweep_core::run;
use qsweep_core::run::growing::run_growing;
use qsweep_core::spec::{GridPoint, Spec};
use qsweep_core::stats::{point_stats, PointStats};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// ---------------------------------------------------------------------------
// The reference simulator.

#[derive(Clone, Copy, Debug)]
enum RefLaw {
    Exp {
        mean: f64,
    },
    /// Two exponential phases with balanced means (as `hyperexp(scv=,mean=)`).
    HyperExp {
        scv: f64,
        mean: f64,
    },
    Erlang {
        k: u32,
        mean: f64,
    },
    Uniform {
        lo: f64,
        hi: f64,
    },
    /// A two-phase MMPP (arrivals only): phase i emits at `rates[i]` and
    /// leaves at `switch[i]`. Not renewal: drawn by [`RefLaw::next_arrival`]
    /// from the replication's phase.
    Mmpp {
        rates: [f64; 2],
        switch: [f64; 2],
    },
    /// A replayed trace (arrivals only): these gaps in order, from a
    /// uniformly random start, wrapping after the last. Not renewal: drawn
    /// by [`RefLaw::next_arrival`] from the replication's position.
    Trace {
        gaps: &'static [f64],
    },
}

impl RefLaw {
    /// The replication's starting phase (MMPP: from the stationary law
    /// (s2, s1)/(s1 + s2); 0 for the renewal laws).
    fn start_phase(self, rng: &mut StdRng) -> usize {
        match self {
            RefLaw::Mmpp { switch, .. } => {
                usize::from(rng.random::<f64>() < switch[0] / (switch[0] + switch[1]))
            }
            RefLaw::Trace { gaps } => rng.random_range(0..gaps.len()),
            _ => 0,
        }
    }

    /// The time to the next arrival from the current `phase`: for an MMPP
    /// by competing exponentials (the next arrival at rate r_i against the
    /// next switch at rate s_i, memoryless, so redrawn after each switch),
    /// not the engines' one-race-per-sojourn sampler; a plain draw otherwise.
    fn next_arrival(self, rng: &mut StdRng, phase: &mut usize) -> f64 {
        if let RefLaw::Trace { gaps } = self {
            let gap = gaps[*phase];
            *phase = (*phase + 1) % gaps.len();
            return gap;
        }
        let RefLaw::Mmpp { rates, switch } = self else {
            return self.sample(rng);
        };
        let exp = |rng: &mut StdRng, rate: f64| -(1.0 - rng.random::<f64>()).ln() / rate;
        let mut t = 0.0;
        loop {
            let arrive = if rates[*phase] > 0.0 {
                exp(rng, rates[*phase])
            } else {
                f64::INFINITY
            };
            let leave = exp(rng, switch[*phase]);
            if arrive < leave {
                return t + arrive;
            }
            t += leave;
            *phase ^= 1;
        }
    }

    fn sample(self, rng: &mut StdRng) -> f64 {
        let exp = |rng: &mut StdRng, mean: f64| -mean * (1.0 - rng.random::<f64>()).ln();
        match self {
            RefLaw::Exp { mean } => exp(rng, mean),
            RefLaw::HyperExp { scv, mean } => {
                let r = ((scv - 1.0) / (scv + 1.0)).sqrt();
                let p1 = (1.0 + r) / 2.0;
                if rng.random::<f64>() < p1 {
                    exp(rng, mean / (2.0 * p1))
                } else {
                    exp(rng, mean / (2.0 * (1.0 - p1)))
                }
            }
            RefLaw::Erlang { k, mean } => (0..k).map(|_| exp(rng, mean / f64::from(k))).sum(),
            RefLaw::Uniform { lo, hi } => lo + (hi - lo) * rng.random::<f64>(),
            RefLaw::Mmpp { .. } | RefLaw::Trace { .. } => {
                panic!("a stateful stream is drawn by next_arrival")
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum RefPolicy {
    Jsq,
    Pod(usize),
    Jiq,
    Lwl,
    Central,
    /// Each arrival to a server uniformly at random; only server 0's
    /// requests are recorded (one dyno inside the whole system).
    Random,
    /// Arrival i to server i mod R; only server 0's requests are recorded.
    RoundRobin,
    /// Each arrival to a server uniformly at random, every request recorded
    /// (a fleet routed at random).
    Uniform,
    /// Each arrival to a server with probability proportional to its speed.
    Weighted,
}

/// What a late request does in the reference: its patience's law and
/// whether it abandons (else it times out: served, counted).
#[derive(Clone, Copy, Debug)]
struct RefPatience {
    law: RefLaw,
    abandon: bool,
}

/// One configuration of the reference.
#[derive(Clone, Copy, Debug)]
struct Reference {
    policy: RefPolicy,
    servers: usize,
    routers: usize,
    arrival: RefLaw,
    service: RefLaw,
    warmup: usize,
    customers: usize,
    /// Patience, if any (each request draws one).
    patience: Option<RefPatience>,
    /// The most requests a server may hold (a refused one is lost).
    capacity: Option<usize>,
    /// A mixed fleet: each server's speed (a request of size S takes S /
    /// speed there; `central` sends a request to the fastest idle server,
    /// ties at random). None: all of speed 1.
    speeds: Option<&'static [f64]>,
}

impl Reference {
    /// The recorded waits of one replication, in dispatch order (the served
    /// requests' under abandonment or a capacity), and the fraction of its
    /// requests lost (refused, abandoned or timed out).
    fn replication(&self, rng: &mut StdRng) -> (Vec<f64>, f64) {
        let r = self.servers;
        // Per server: (departure time, router) of each request it holds, FIFO.
        let mut servers: Vec<VecDeque<(f64, usize)>> = vec![VecDeque::new(); r];
        // Per router (central): (arrival time, service, patience) of waiting requests.
        let mut queues: Vec<VecDeque<(f64, f64, f64)>> = vec![VecDeque::new(); self.routers];
        let total = self.warmup + self.customers;
        let mut waits = Vec::with_capacity(self.customers);
        let mut lost = 0usize;
        let mut done = 0;
        // Records a request's fate; whether it joins its server.
        let abandon = self.patience.is_some_and(|p| p.abandon);
        let mut record = |done: &mut usize, w: f64, late: bool, refused: bool| -> bool {
            let dropped = refused || (late && abandon);
            if *done >= self.warmup {
                lost += usize::from(late || refused);
                if !dropped {
                    waits.push(w);
                }
            }
            *done += 1;
            !dropped
        };
        let draw_patience =
            |rng: &mut StdRng| self.patience.map_or(f64::INFINITY, |p| p.law.sample(rng));
        // When server s's queue empties (its last departure), or `now`.
        let free_at = |q: &VecDeque<(f64, usize)>, now: f64| q.back().map_or(now, |b| b.0.max(now));
        let mut t = 0.0;
        let mut phase = self.arrival.start_phase(rng);
        let mut arrivals = 0usize;
        'arrivals: while done < total {
            t += self.arrival.next_arrival(rng, &mut phase);
            arrivals += 1;
            // Departures up to t, earliest first.
            loop {
                let mut next: Option<(f64, usize)> = None;
                for (s, q) in servers.iter().enumerate() {
                    if let Some(&(d, _)) = q.front() {
                        if d <= t && next.is_none_or(|(nd, _)| d < nd) {
                            next = Some((d, s));
                        }
                    }
                }
                let Some((d, s)) = next else { break };
                let (_, k) = servers[s].pop_front().unwrap();
                if self.policy == RefPolicy::Central {
                    // Router k now believes s idle: its oldest waiting
                    // request still patient goes there.
                    while let Some((arrived, service, patience)) = queues[k].pop_front() {
                        let start = free_at(&servers[s], d);
                        let joins = record(
                            &mut done,
                            start - arrived,
                            start - arrived > patience,
                            false,
                        );
                        if joins {
                            let speed = self.speeds.map_or(1.0, |v| v[s]);
                            servers[s].push_back((start + service / speed, k));
                        }
                        if done == total {
                            break 'arrivals;
                        }
                        if joins {
                            break;
                        }
                    }
                }
            }
            let size = self.service.sample(rng);
            let speed = |s: usize| self.speeds.map_or(1.0, |v| v[s]);
            let k = if self.routers > 1 {
                rng.random_range(0..self.routers)
            } else {
                0
            };
            // What router k knows: how many of its own requests each server holds.
            let own: Vec<usize> = servers
                .iter()
                .map(|q| q.iter().filter(|e| e.1 == k).count())
                .collect();
            let uniform_among =
                |rng: &mut StdRng, set: &[usize]| set[rng.random_range(0..set.len())];
            let fewest = |rng: &mut StdRng, set: &[usize]| {
                let m = set.iter().map(|&s| own[s]).min().unwrap();
                let ties: Vec<usize> = set.iter().copied().filter(|&s| own[s] == m).collect();
                uniform_among(rng, &ties)
            };
            let all: Vec<usize> = (0..r).collect();
            let idle: Vec<usize> = all.iter().copied().filter(|&s| own[s] == 0).collect();
            let s = match self.policy {
                RefPolicy::Jsq => fewest(rng, &all),
                RefPolicy::Pod(d) => {
                    let sample = rand::seq::index::sample(rng, r, d.min(r)).into_vec();
                    fewest(rng, &sample)
                }
                RefPolicy::Jiq if !idle.is_empty() => uniform_among(rng, &idle),
                RefPolicy::Jiq => uniform_among(rng, &all),
                RefPolicy::Lwl => {
                    let free: Vec<f64> = servers.iter().map(|q| free_at(q, t)).collect();
                    (0..r).min_by(|&a, &b| free[a].total_cmp(&free[b])).unwrap()
                }
                RefPolicy::Central if !idle.is_empty() => {
                    let fastest = idle.iter().map(|&s| speed(s)).fold(0.0, f64::max);
                    let ties: Vec<usize> = idle
                        .iter()
                        .copied()
                        .filter(|&s| speed(s) == fastest)
                        .collect();
                    uniform_among(rng, &ties)
                }
                RefPolicy::Central => {
                    let patience = draw_patience(rng);
                    queues[k].push_back((t, size, patience));
                    continue;
                }
                RefPolicy::Random | RefPolicy::Uniform => rng.random_range(0..r),
                RefPolicy::Weighted => {
                    let total: f64 = (0..r).map(speed).sum();
                    let mut u = rng.random::<f64>() * total;
                    let mut pick = r - 1;
                    for s in 0..r {
                        if u < speed(s) {
                            pick = s;
                            break;
                        }
                        u -= speed(s);
                    }
                    pick
                }
                RefPolicy::RoundRobin => (arrivals - 1) % r,
            };
            if matches!(self.policy, RefPolicy::Random | RefPolicy::RoundRobin) && s != 0 {
                // Another dyno: served, not recorded.
                let start = free_at(&servers[s], t);
                servers[s].push_back((start + size, k));
                continue;
            }
            let service = size / speed(s);
            let patience = draw_patience(rng);
            let start = free_at(&servers[s], t);
            let refused = self.capacity.is_some_and(|c| servers[s].len() >= c);
            if record(&mut done, start - t, start - t > patience, refused) {
                servers[s].push_back((start + service, k));
            }
        }
        (waits, lost as f64 / self.customers as f64)
    }

    fn run(&self, reps: usize, seed: u64) -> Summary {
        let mut rng = StdRng::seed_from_u64(seed);
        let (runs, lost): (Vec<Vec<f64>>, Vec<f64>) =
            (0..reps).map(|_| self.replication(&mut rng)).unzip();
        let mut s = Summary::from_waits(&runs);
        s.p_lost = mean_se(&lost);
        s
    }
}

// ---------------------------------------------------------------------------
// Summaries and comparisons.

/// Mean wait and P(wait > 0) with standard errors over replications, and
/// wait percentiles (p50, p90, p99) with standard errors over 16 sections.
#[derive(Debug)]
struct Summary {
    mean: (f64, f64),
    p_wait: (f64, f64),
    pct: [(f64, f64); 3],
    /// Requests lost (refused, abandoned, timed out) per request.
    p_lost: (f64, f64),
}

const QS: [f64; 3] = [0.5, 0.9, 0.99];
/// Index of each of QS in `stats::WAIT_PERCENTILES`.
const QS_IN_STATS: [usize; 3] = [0, 1, 3];
/// Student t (15 dof) 0.975 quantile: sectioning CIs of 16 batches.
const T15: f64 = 2.131_45;

fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

impl Summary {
    fn from_waits(runs: &[Vec<f64>]) -> Summary {
        let means: Vec<f64> = runs
            .iter()
            .map(|w| w.iter().sum::<f64>() / w.len() as f64)
            .collect();
        let waited: Vec<f64> = runs
            .iter()
            .map(|w| w.iter().filter(|&&x| x > 0.0).count() as f64 / w.len() as f64)
            .collect();
        let mut pooled: Vec<f64> = runs.concat();
        pooled.sort_by(f64::total_cmp);
        let sections = 16;
        let per = runs.len() / sections;
        let pct = QS.map(|q| {
            let batch_q: Vec<f64> = (0..sections)
                .map(|b| {
                    let mut w: Vec<f64> = runs[b * per..(b + 1) * per].concat();
                    w.sort_by(f64::total_cmp);
                    quantile(&w, q)
                })
                .collect();
            (quantile(&pooled, q), mean_se(&batch_q).1)
        });
        Summary {
            mean: mean_se(&means),
            p_wait: mean_se(&waited),
            pct,
            p_lost: (0.0, 0.0),
        }
    }

    fn from_engine(reps: &[RepResult], stats: &PointStats) -> Summary {
        let col = |f: fn(&RepResult) -> f32| -> Vec<f64> {
            reps.iter().map(|r| f64::from(f(r))).collect()
        };
        Summary {
            mean: mean_se(&col(|r| r.mean_wait)),
            p_wait: mean_se(&col(|r| r.p_wait)),
            pct: QS_IN_STATS.map(|i| {
                (
                    stats.wait_pct[i],
                    stats.wait_pct_ci95[i].unwrap_or(0.0) / T15,
                )
            }),
            p_lost: mean_se(
                &reps
                    .iter()
                    .map(|r| f64::from(r.lost) / f64::from(r.customers))
                    .collect::<Vec<_>>(),
            ),
        }
    }
}

/// |a − b| within 4 combined standard errors (+ `slack`), and prints the
/// comparison.
fn agree(what: &str, a: (f64, f64), b: (f64, f64), slack: f64) {
    let se = (a.1 * a.1 + b.1 * b.1).sqrt();
    let line = format!(
        "{what}: engine {:.5} ± {:.5}, reference {:.5} ± {:.5} (diff {:+.2} se)",
        a.0,
        a.1,
        b.0,
        b.1,
        (a.0 - b.0) / se.max(1e-300)
    );
    eprintln!("{line}");
    assert!((a.0 - b.0).abs() <= 4.0 * se + slack, "{line}");
}

/// Every point of a spec on the CPU engine: grid point, replications, statistics.
fn engine_points(toml: &str) -> Vec<(GridPoint, Vec<RepResult>, PointStats)> {
    let spec = Spec::from_toml_str(toml, "test", Path::new("."))
        .unwrap_or_else(|e| panic!("test spec rejected: {e}\n{toml}"));
    let (prepared, table) = run::prepare(&spec, spec.points());
    let mut engine = CpuEngine::new(0);
    prepared
        .iter()
        .map(|p| {
            let params = [p.params];
            let (tiles, slots) = tiles_for_point(0, spec.run.reps, 0);
            let batch = Batch {
                params: &params,
                tiles: &tiles,
                table: &table,
                slots,
            };
            // With queues that grow as the run loop grows them.
            let (out, _) = run_growing(&mut engine, &batch).unwrap();
            let per = out.hist.len() / slots as usize;
            let batches: Vec<&[u64]> = out.hist.chunks(per).collect();
            let stats = point_stats(
                &out.reps,
                &batches,
                p.scale,
                &p.grid.service,
                p.params.drops_late(),
            );
            (p.grid.clone(), out.reps, stats)
        })
        .collect()
}

fn spec_text(
    routing: &str,
    extra: &str,
    servers: u32,
    rho: f64,
    arrival: &str,
    service: &str,
    run: &str,
) -> String {
    format!(
        "[sweep]\nrouting = [\"{routing}\"]\n{extra}servers = [{servers}]\narrival = [\"{arrival}\"]\n\
         rho = [{rho}]\nservice = [\"{service}\"]\n\n[run]\n{run}\n"
    )
}

/// The engine and the reference agree in distribution on one configuration.
fn check_against_reference(
    routing: &str,
    extra: &str,
    reference: Reference,
    rho: f64,
    arrival: &str,
    service: &str,
) {
    let reps = 32;
    let mut run = format!(
        "reps = {reps}\ncustomers = {}\nwarmup = {}\nseed = 77",
        reference.customers, reference.warmup
    );
    let mut extra = extra.to_string();
    if let Some(p) = reference.patience {
        let RefLaw::Exp { mean } = p.law else {
            panic!("the limits tests give the reference exponential patience")
        };
        extra += &format!("patience = [\"exp(mean={mean})\"]\n");
        let mode = if p.abandon { "abandon" } else { "timeout" };
        run += &format!("\nreneging = \"{mode}\"");
    }
    if let Some(k) = reference.capacity {
        extra += &format!("capacity = [{k}]\n");
    }
    let extra = extra.as_str();
    let toml = match reference.speeds {
        // A fleet sets its servers.
        Some(_) => {
            spec_text(routing, extra, 0, rho, arrival, service, &run).replace("servers = [0]\n", "")
        }
        None => spec_text(
            routing,
            extra,
            reference.servers as u32,
            rho,
            arrival,
            service,
            &run,
        ),
    };
    let points = engine_points(&toml);
    assert_eq!(points.len(), 1);
    let (g, reps_out, stats) = &points[0];
    assert!(
        reps_out.iter().all(|r| r.status == 0),
        "{routing}: failed replications"
    );
    let eng = Summary::from_engine(reps_out, stats);
    let refs = reference.run(
        reps,
        0x5EED_0000 + g.index as u64 + reference.servers as u64,
    );
    let name = format!(
        "{routing} {extra}R={} rho={rho} {arrival}/{service}",
        reference.servers
    )
    .replace('\n', " ");
    // Informative: the means are known to a few per cent.
    assert!(
        refs.mean.1 <= 0.05 * refs.mean.0.max(1e-3),
        "{name}: reference too noisy {refs:?}"
    );
    agree(&format!("{name} mean wait"), eng.mean, refs.mean, 0.0);
    agree(&format!("{name} P(wait>0)"), eng.p_wait, refs.p_wait, 0.0);
    if reference.patience.is_some() || reference.capacity.is_some() {
        assert!(refs.p_lost.0 > 0.01, "{name}: too few losses to test");
        agree(&format!("{name} P(lost)"), eng.p_lost, refs.p_lost, 0.0);
    }
    for (i, q) in QS.iter().enumerate() {
        let slack = 0.01 * refs.pct[i].0 + 1e-9;
        agree(
            &format!("{name} p{}", q * 100.0),
            eng.pct[i],
            refs.pct[i],
            slack,
        );
    }
}

fn reference(
    policy: RefPolicy,
    servers: usize,
    routers: usize,
    rho: f64,
    service: RefLaw,
) -> Reference {
    let mean = match service {
        RefLaw::Exp { mean } | RefLaw::HyperExp { mean, .. } | RefLaw::Erlang { mean, .. } => mean,
        RefLaw::Uniform { lo, hi } => 0.5 * (lo + hi),
        RefLaw::Mmpp { .. } | RefLaw::Trace { .. } => panic!("an arrival law"),
    };
    Reference {
        policy,
        servers,
        routers,
        arrival: RefLaw::Exp {
            mean: mean / (rho * servers as f64),
        },
        service,
        warmup: 2_000,
        customers: 20_000,
        patience: None,
        capacity: None,
        speeds: None,
    }
}

const EXP1: RefLaw = RefLaw::Exp { mean: 1.0 };

// ---------------------------------------------------------------------------
// The reference itself, against exact theory.

/// Random routing thins an MMPP to an MMPP (rates r/R, the same
/// switching), so one dyno simulated alone from the thinned law (the
/// engine's one-server kernel, `Dist::thinned_at_random`) must be the same
/// dyno inside the whole system: the reference routes the whole MMPP
/// stream over R = 4 dynos at random and records dyno 0. Round robin's
/// dyno sums R consecutive interarrivals of the stream, each from the phase
/// the last left: against the reference's dyno 0 too.
#[test]
fn mmpp_thinned_dyno_matches_the_whole_system() {
    // mmpp(rates=[1,3],switch=[0.5,0.5]) has mean rate 2; at rho 0.7 over 4
    // dynos of exp(mean=1) the stream's rate is 2.8, so every rate is 1.4x.
    let arrival = RefLaw::Mmpp {
        rates: [1.4, 4.2],
        switch: [0.7, 0.7],
    };
    for (routing, policy) in [
        ("random", RefPolicy::Random),
        ("round_robin", RefPolicy::RoundRobin),
    ] {
        let r = Reference {
            arrival,
            warmup: 2_000,
            customers: 20_000,
            ..reference(policy, 4, 1, 0.7, EXP1)
        };
        check_against_reference(
            routing,
            "",
            r,
            0.7,
            "mmpp(rates=[1,3],switch=[0.5,0.5])",
            "exp(mean=1)",
        );
    }
}

/// The shipped bursty log (`data/bursty-trace.txt`) replayed as the whole
/// stream: one dyno of it under random routing and round robin (the
/// engines sum a geometric number or every R-th of the trace's consecutive
/// gaps), and jsq over all R dynos (the dispatch kernel), each against the
/// reference replaying the same gaps, read here from the file on its own,
/// at the stream's rate (rho 0.7 over 4 dynos of exp(mean=1): 2.8).
#[test]
fn trace_replay_matches_the_whole_system() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/bursty-trace.txt");
    let stamps: Vec<f64> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let raw: Vec<f64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_gap = raw.iter().sum::<f64>() / raw.len() as f64;
    let scale = 1.0 / (2.8 * mean_gap);
    let gaps: &'static [f64] = Box::leak(raw.iter().map(|g| g * scale).collect());
    for (routing, policy) in [
        ("random", RefPolicy::Random),
        ("round_robin", RefPolicy::RoundRobin),
        ("jsq", RefPolicy::Jsq),
    ] {
        let r = Reference {
            arrival: RefLaw::Trace { gaps },
            warmup: 2_000,
            customers: 40_000,
            ..reference(policy, 4, 1, 0.7, EXP1)
        };
        check_against_reference(
            routing,
            "",
            r,
            0.7,
            &format!("trace(file={path})"),
            "exp(mean=1)",
        );
    }
}

#[test]
fn reference_simulator_matches_exact_queues() {
    // One server under jsq: M/M/1 at rho 0.8, E[W] = rho/(1 − rho) = 4.
    let mut r = reference(RefPolicy::Jsq, 1, 1, 0.8, EXP1);
    r.customers = 40_000;
    r.warmup = 4_000;
    let s = r.run(32, 1);
    eprintln!("reference M/M/1: {:?}", s.mean);
    assert!((s.mean.0 - 4.0).abs() <= 4.0 * s.mean.1, "{s:?}");
    assert!((s.p_wait.0 - 0.8).abs() <= 4.0 * s.p_wait.1, "{s:?}");
    // lwl and central with one router: M/M/4 at rho 0.85 (Erlang C).
    let exact = qsweep_core::analytic::mmc_mean_wait(4, 3.4, 1.0);
    for policy in [RefPolicy::Lwl, RefPolicy::Central] {
        let s = reference(policy, 4, 1, 0.85, EXP1).run(32, 2);
        eprintln!("reference {policy:?} M/M/4: {:?} vs {exact}", s.mean);
        assert!(
            (s.mean.0 - exact).abs() <= 4.0 * s.mean.1,
            "{policy:?} {s:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// The engine against the reference, policy by policy.

#[test]
fn jsq_matches_reference() {
    check_against_reference(
        "jsq",
        "",
        reference(RefPolicy::Jsq, 4, 1, 0.9, EXP1),
        0.9,
        "exp",
        "exp(mean=1)",
    );
    let hx = RefLaw::HyperExp {
        scv: 4.0,
        mean: 1.0,
    };
    check_against_reference(
        "jsq",
        "",
        reference(RefPolicy::Jsq, 3, 1, 0.8, hx),
        0.8,
        "exp",
        "hyperexp(scv=4,mean=1)",
    );
}

/// A mixed fleet, `"2x1,3x3"` (speeds 1 and 3): the engine numbers the
/// dynos fastest class first, so the reference's servers are listed so.
const FLEET: &str = "2x1,3x3";
const FLEET_SPEEDS: &[f64] = &[3.0, 3.0, 3.0, 1.0, 1.0];

/// Every policy that takes a fleet, on the dispatch kernel, against the
/// reference serving each request in size / speed: jsq, pod and jiq
/// choose by counts as on equal dynos, lwl by work left, central sends a
/// request to the fastest idle dyno and else queues it for the first to
/// free up, weighted picks a dyno with probability ∝ speed and random
/// uniformly (the slow dynos at rho 0.88 for the fleet's 0.4).
#[test]
fn fleets_match_reference() {
    for (routing, policy, rho) in [
        ("jsq", RefPolicy::Jsq, 0.85),
        ("pod", RefPolicy::Pod(2), 0.85),
        // jiq routes uniformly while no dyno is idle: at rho 0.85 its slow
        // dynos get 1.87 requests per unit of time they serve 1 of, and its
        // queues wander far (a mean wait of about 26, too noisy to test).
        ("jiq", RefPolicy::Jiq, 0.4),
        ("lwl", RefPolicy::Lwl, 0.85),
        ("central", RefPolicy::Central, 0.85),
        ("weighted", RefPolicy::Weighted, 0.7),
        ("random", RefPolicy::Uniform, 0.4),
    ] {
        let mut r = reference(policy, 5, 1, rho, EXP1);
        // rho is over the fleet's capacity, 11 speed-1 dynos.
        r.arrival = RefLaw::Exp {
            mean: 1.0 / (rho * 11.0),
        };
        r.speeds = Some(FLEET_SPEEDS);
        let extra = format!("choices = [2]\nspeeds = [\"{FLEET}\"]\n");
        check_against_reference(routing, &extra, r, rho, "exp", "exp(mean=1)");
    }
}

#[test]
fn pod_matches_reference() {
    check_against_reference(
        "pod",
        "",
        reference(RefPolicy::Pod(2), 6, 1, 0.9, EXP1),
        0.9,
        "exp",
        "exp(mean=1)",
    );
    let u = RefLaw::Uniform { lo: 0.5, hi: 1.5 };
    check_against_reference(
        "pod",
        "choices = [3]\n",
        reference(RefPolicy::Pod(3), 8, 1, 0.85, u),
        0.85,
        "exp",
        "uniform(min=0.5,max=1.5)",
    );
}

#[test]
fn jiq_matches_reference() {
    check_against_reference(
        "jiq",
        "",
        reference(RefPolicy::Jiq, 5, 1, 0.9, EXP1),
        0.9,
        "exp",
        "exp(mean=1)",
    );
}

#[test]
fn lwl_matches_reference() {
    let mut r = reference(RefPolicy::Lwl, 4, 1, 0.9, EXP1);
    r.arrival = RefLaw::Erlang {
        k: 3,
        mean: 1.0 / (0.9 * 4.0),
    };
    check_against_reference("lwl", "", r, 0.9, "erlang(k=3)", "exp(mean=1)");
}

#[test]
fn several_routers_match_reference() {
    for (routing, policy) in [
        ("jsq", RefPolicy::Jsq),
        ("pod", RefPolicy::Pod(2)),
        ("jiq", RefPolicy::Jiq),
        ("central", RefPolicy::Central),
    ] {
        check_against_reference(
            routing,
            "routers = [3]\n",
            reference(policy, 4, 3, 0.85, EXP1),
            0.85,
            "exp",
            "exp(mean=1)",
        );
    }
}

// ---------------------------------------------------------------------------
// Patience and capacity: the engine against the reference.

fn with_limits(
    mut r: Reference,
    patience: Option<(f64, bool)>,
    capacity: Option<usize>,
) -> Reference {
    r.patience = patience.map(|(mean, abandon)| RefPatience {
        law: RefLaw::Exp { mean },
        abandon,
    });
    r.capacity = capacity;
    r
}

/// A per-server limit under each policy that counts its requests: the
/// fraction refused, and the admitted requests' waits. Loads above 1 too
/// (a limit keeps any load stable).
#[test]
fn capacities_match_reference() {
    for (routing, extra, policy, servers, routers, rho, k) in [
        ("jsq", "", RefPolicy::Jsq, 4, 1, 0.9, 2),
        ("pod", "", RefPolicy::Pod(2), 6, 1, 1.1, 3),
        ("jiq", "", RefPolicy::Jiq, 5, 1, 0.95, 2),
        ("jsq", "routers = [3]\n", RefPolicy::Jsq, 4, 3, 0.9, 2),
    ] {
        let r = with_limits(
            reference(policy, servers, routers, rho, EXP1),
            None,
            Some(k),
        );
        check_against_reference(routing, extra, r, rho, "exp", "exp(mean=1)");
    }
}

/// Patience under every policy: abandonment (the served requests' waits,
/// the fraction that left) and timeouts (every request served, the fraction
/// that waited too long), including requests that wait at `central`'s
/// routers and are judged when dispatched.
#[test]
fn patience_matches_reference() {
    for (routing, extra, policy, servers, routers, rho, patience) in [
        ("jsq", "", RefPolicy::Jsq, 4, 1, 1.2, (2.0, true)),
        ("pod", "", RefPolicy::Pod(2), 6, 1, 0.95, (1.0, false)),
        ("jiq", "", RefPolicy::Jiq, 5, 1, 1.1, (3.0, true)),
        ("lwl", "", RefPolicy::Lwl, 4, 1, 1.1, (1.0, true)),
        (
            "central",
            "routers = [3]\n",
            RefPolicy::Central,
            4,
            3,
            1.0,
            (1.0, true),
        ),
        (
            "central",
            "routers = [3]\n",
            RefPolicy::Central,
            4,
            3,
            0.9,
            (2.0, false),
        ),
    ] {
        let r = with_limits(
            reference(policy, servers, routers, rho, EXP1),
            Some(patience),
            None,
        );
        check_against_reference(routing, extra, r, rho, "exp", "exp(mean=1)");
    }
}

// ---------------------------------------------------------------------------
// Patience and capacity: exact theory where a policy reduces to a queue
// with a formula (analytic::capacity, analytic::patience).

/// |sim − exact| of the fraction lost within 1.5 × the run's 95% CI, the CI
/// at most `frac` of the exact value; and the served requests' mean wait.
fn check_limits(toml: &str, engine: &mut dyn Engine, method: &str, frac: f64) {
    for (g, s, b) in crate::common::simulate(toml, engine) {
        let what = crate::common::describe(&g);
        assert_eq!(b.method, method, "{what}");
        let exact = b.p_lost.expect("an exact fraction lost");
        let ci = s.p_lost_ci95.expect("a CI over replications");
        let line = format!(
            "{what}: P(lost) sim {:.6} ± {ci:.6} exact {exact:.6} (z ≈ {:.2})",
            s.p_lost,
            (s.p_lost - exact) / (ci / 1.96)
        );
        eprintln!("{line}");
        assert!(ci <= frac * exact, "CI too wide to test: {line}");
        assert!((s.p_lost - exact).abs() <= 1.5 * ci, "{line}");
        let exact_mean = b.mean_wait.expect("an exact mean wait");
        if exact_mean == 0.0 {
            assert_eq!(s.mean_wait, 0.0, "{what}: a loss system never queues");
        } else {
            crate::common::assert_mean_matches(&g, &s, exact_mean, frac);
        }
    }
}

fn limits_spec(routing: &str, extra: &str, servers: u32, rho: f64, run: &str) -> String {
    spec_text(
        routing,
        extra,
        servers,
        rho,
        "exp",
        "exp(mean=1)",
        &format!("reps = 64\ncustomers = 20000\nwarmup = 2000\nseed = 19\n{run}"),
    )
}

/// The exact cases, on `engine`: jsq and jiq with room for one request per
/// server are Erlang's loss system on all R servers; pod with one choice
/// is random routing (M/M/1/K per server); lwl is the central queue
/// (Erlang A under exponential patience); any policy over one server is
/// that server's queue (M/M/1+D).
fn limits_meet_theory(engine: &mut dyn Engine, frac: f64) {
    let cap1 = "capacity = [1]\n";
    check_limits(
        &limits_spec("jsq", cap1, 10, 0.8, ""),
        engine,
        "exact:erlang_b",
        frac,
    );
    check_limits(
        &limits_spec("jiq", cap1, 6, 1.0, ""),
        engine,
        "exact:erlang_b",
        frac,
    );
    check_limits(
        &limits_spec("pod", "choices = [1]\ncapacity = [5]\n", 4, 0.9, ""),
        engine,
        "exact:mm1k",
        frac,
    );
    let abandon = "reneging = \"abandon\"";
    check_limits(
        &limits_spec("lwl", "patience = [\"exp(mean=2)\"]\n", 8, 1.1, abandon),
        engine,
        "exact:erlang_a",
        frac,
    );
    check_limits(
        &limits_spec("jsq", "patience = [\"det(value=2)\"]\n", 1, 0.9, abandon),
        engine,
        "exact:mm1_det_patience",
        frac,
    );
}

#[test]
fn limits_meet_exact_theory_on_cpu() {
    limits_meet_theory(&mut CpuEngine::new(0), 0.1);
}

#[test]
fn gpu_limits_meet_exact_theory() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_limits_meet_exact_theory") else {
        return;
    };
    limits_meet_theory(&mut gpu, 0.1);
}

// ---------------------------------------------------------------------------
// Theory.

fn law(kind: LawKind, p: [f32; 4]) -> Law {
    Law::unclamped(kind, p)
}

/// A point for the engines directly.
fn point(index: u32, k: u32, policy: u32, servers: u32, arrival: Law, service: Law) -> PointParams {
    PointParams {
        arrival,
        service,
        kernel: k,
        thinning: Thinning::None.code(),
        servers,
        route_n: policy,
        customers: 3_000,
        warmup: 300,
        seed_lo: 4242,
        seed_hi: 3,
        point_index: index,
        inv_hist_scale: 1.0,
        choices: 2,
        routers: 1,
        ..PointParams::default()
    }
}

fn run_points(params: &[PointParams], reps: u32, engine: &mut dyn Engine) -> Vec<Vec<RepResult>> {
    let (tiles, slots) = tiles_for_points(params.len() as u32, reps);
    let batch = Batch {
        params,
        tiles: &tiles,
        table: &[0.0],
        slots,
    };
    let out = engine.run(&batch).unwrap();
    out.reps
        .chunks(reps as usize)
        .map(<[RepResult]>::to_vec)
        .collect()
}

#[test]
fn lwl_equals_central_replication_by_replication() {
    // lwl consumes the words central does (interarrival, service) and does
    // the same f32 operations, so the results are bit for bit the same.
    let weibull = Law {
        lo: 0.01,
        hi: 30.0,
        ..law(LawKind::Weibull, [0.3, 1.0 / 0.46, 0.0, 0.0])
    };
    let mut params = Vec::new();
    for (servers, service, mean_service) in [
        (2, law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]), 1.0f32),
        (7, law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]), 1.0),
        (64, weibull, 0.5),
        (300, law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]), 1.0),
    ] {
        // rho = 0.95 (Weibull: roughly).
        let arrival = law(
            LawKind::Exp,
            [mean_service / (0.95 * servers as f32), 0.0, 0.0, 0.0],
        );
        let index = params.len() as u32;
        params.push(point(
            index,
            Kernel::KieferWolfowitz.code(),
            0,
            servers,
            arrival,
            service,
        ));
        params.push(point(
            index,
            Kernel::Dispatch.code(),
            DispatchPolicy::Lwl.code(),
            servers,
            arrival,
            service,
        ));
    }
    let out = run_points(&params, 40, &mut CpuEngine::new(0));
    for pair in out.chunks(2) {
        let (central, lwl) = (&pair[0], &pair[1]);
        assert!(central.iter().any(|r| r.p_wait > 0.0));
        for (rep, (c, l)) in central.iter().zip(lwl).enumerate() {
            assert_eq!(c, l, "rep {rep}");
        }
    }
}

#[test]
fn jsq_pod_jiq_with_one_server_are_mm1() {
    let toml = "[sweep]\nrouting = [\"jsq\", \"pod\", \"jiq\"]\nservers = [1]\nrho = [0.8]\n\
                service = [\"exp(mean=1)\"]\n\n[run]\nreps = 64\ncustomers = 60000\nwarmup = 6000\nseed = 5\n";
    let points = crate::common::simulate(toml, &mut CpuEngine::new(0));
    assert_eq!(points.len(), 3);
    for (g, s, b) in &points {
        assert_eq!(b.method, "exact:mm1", "{}", crate::common::describe(g));
        crate::common::assert_clean(g, s, 64, 60_000);
        crate::common::assert_mean_matches(g, s, b.mean_wait.unwrap(), 0.05);
        crate::common::assert_p99_matches(g, s, b.p99_wait.unwrap(), 0.05);
        assert!(
            (s.p_wait - 0.8).abs() < 0.01,
            "{}: P(wait>0) {}",
            crate::common::describe(g),
            s.p_wait
        );
    }
}

#[test]
fn pod_approaches_the_mean_field_limit() {
    // Power of two choices at R = 1000: the mean sojourn time is within 2% of
    // the mean-field limit T = Σ_{i≥1} rho^(2^i − 2) (analytic::mean_field_pod).
    for (d, rho) in [(2u32, 0.9f64), (2, 0.95), (3, 0.9)] {
        let toml = format!(
            "[sweep]\nrouting = [\"pod\"]\nchoices = [{d}]\nservers = [1000]\nrho = [{rho}]\n\
             service = [\"exp(mean=1)\"]\n\n[run]\nreps = 8\ncustomers = 200000\nwarmup = 60000\nseed = 9\n"
        );
        let points = crate::common::simulate(&toml, &mut CpuEngine::new(0));
        let (g, s, b) = &points[0];
        assert_eq!(b.method, "approx:mean_field_pod");
        let df = f64::from(d);
        let t: f64 = (1..40)
            .map(|i| rho.powf((df.powi(i) - df) / (df - 1.0)))
            .sum();
        assert!((b.mean_wait.unwrap() - (t - 1.0)).abs() < 1e-9);
        let err = (s.mean_sojourn - t) / t;
        eprintln!(
            "pod d={d} rho={rho} R=1000: mean sojourn {:.5} ± {:.5}, mean field {t:.5}, rel err {err:+.4}; \
             mean wait {:.5} vs {:.5}",
            s.mean_sojourn,
            s.mean_sojourn_ci95.unwrap(),
            s.mean_wait,
            t - 1.0
        );
        crate::common::assert_clean(g, s, 8, 200_000);
        assert!(err.abs() < 0.02, "{}", crate::common::describe(g));
    }
}

#[test]
fn one_router_changes_nothing() {
    // The routers axis at its default and written out as 1 give the same
    // engine parameters for every policy (so the same results), and central
    // with one router stays the central queue's kernel.
    let text = |extra: &str| {
        format!(
            "[sweep]\nrouting = [\"random\", \"round_robin\", \"central\", \"jsq\", \"pod\", \"jiq\", \"lwl\"]\n\
             {extra}servers = [1, 5]\nrho = [0.7]\nservice = [\"exp(mean=1)\"]\n"
        )
    };
    let params = |toml: &str| {
        let spec = Spec::from_toml_str(toml, "test", Path::new(".")).unwrap();
        let (prepared, _) = run::prepare(&spec, spec.points());
        prepared.iter().map(|p| p.params).collect::<Vec<_>>()
    };
    let default = params(&text(""));
    assert_eq!(default.len(), 14);
    assert_eq!(default, params(&text("routers = [1]\n")));
    assert_eq!(default, params(&text("routers = 1\nchoices = 2\n")));
    for p in &default[..6] {
        assert_ne!(p.kernel(), Kernel::Dispatch, "{p:?}");
    }
    for p in &default[6..] {
        assert_eq!((p.kernel, p.routers), (Kernel::Dispatch.code(), 1), "{p:?}");
    }
    // Several routers for central: the dispatch kernel; for random: unchanged.
    let spec = Spec::from_toml_str(
        "[sweep]\nrouting = [\"random\", \"central\"]\nrouters = [1, 3]\nservers = [4]\nrho = [0.7]\nservice = [\"exp(mean=1)\"]\n",
        "test",
        Path::new("."),
    )
    .unwrap();
    let points = spec.points();
    let summary: Vec<_> = points
        .iter()
        .map(|g| (g.routing.name(), g.routers))
        .collect();
    assert_eq!(summary, [("random", 1), ("central", 1), ("central", 3)]);
    let (prepared, _) = run::prepare(&spec, points);
    assert_eq!(prepared[1].params.kernel(), Kernel::KieferWolfowitz);
    assert_eq!(
        (
            prepared[2].params.kernel,
            prepared[2].params.route_n,
            prepared[2].params.routers
        ),
        (Kernel::Dispatch.code(), DispatchPolicy::Central.code(), 3)
    );
}

#[test]
fn dispatch_central_with_one_router_is_the_central_queue() {
    // The router-queue code path with K = 1 is a central FCFS queue (M/M/5
    // at rho 0.9 here): it must agree with Erlang C and with the
    // Kiefer–Wolfowitz kernel in distribution (other words, so not
    // replication by replication). Requests that wait are dispatched at the
    // departure that frees their server, which makes this the sharpest test
    // of the event order around the epoch rebase.
    let exp = law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]);
    let arrival = law(LawKind::Exp, [1.0 / (0.9 * 5.0), 0.0, 0.0, 0.0]);
    let mut a = point(0, Kernel::KieferWolfowitz.code(), 0, 5, arrival, exp);
    let mut b = point(
        1,
        Kernel::Dispatch.code(),
        DispatchPolicy::Central.code(),
        5,
        arrival,
        exp,
    );
    for p in [&mut a, &mut b] {
        p.customers = 40_000;
        p.warmup = 4_000;
    }
    let out = run_points(&[a, b], 128, &mut CpuEngine::new(0));
    let col = |reps: &[RepResult], f: fn(&RepResult) -> f32| {
        mean_se(&reps.iter().map(|r| f64::from(f(r))).collect::<Vec<_>>())
    };
    let exact = qsweep_core::analytic::mmc_mean_wait(5, 4.5, 1.0);
    let c = qsweep_core::analytic::erlang_c(5, 4.5);
    agree(
        "KW vs dispatch central K=1 mean wait",
        col(&out[1], |r| r.mean_wait),
        col(&out[0], |r| r.mean_wait),
        0.0,
    );
    agree(
        "dispatch central K=1 vs Erlang C mean wait",
        col(&out[1], |r| r.mean_wait),
        (exact, 0.0),
        0.0,
    );
    agree(
        "dispatch central K=1 vs Erlang C P(wait>0)",
        col(&out[1], |r| r.p_wait),
        (c, 0.0),
        0.0,
    );
}

// ---------------------------------------------------------------------------
// Queues that grow.

/// Runs `params` (each `reps` replications in 16 sections) through
/// `run_growing` from the capacity each holds: results, histograms per
/// point, final capacities.
fn run_grown(
    params: &[PointParams],
    reps: u32,
    engine: &mut dyn Engine,
) -> (Vec<Vec<RepResult>>, Vec<Vec<u64>>, Vec<u32>) {
    let (tiles, slots) = tiles_for_points(params.len() as u32, reps);
    let batch = Batch {
        params,
        tiles: &tiles,
        table: &[0.0],
        slots,
    };
    let (out, capacities) = run_growing(engine, &batch).unwrap();
    let per_point = out.hist.len() / params.len();
    (
        out.reps
            .chunks(reps as usize)
            .map(<[RepResult]>::to_vec)
            .collect(),
        out.hist.chunks(per_point).map(<[u64]>::to_vec).collect(),
        capacities,
    )
}

/// A point whose queue overflows the first capacity in some replications
/// (jsq, R = 2, hyperexponential service at rho 0.95: 10 of 64) and one that
/// overflows in all (unstable jsq, rho 1.3), grown from the first capacity,
/// give exactly the replications and histograms of a run at a capacity that
/// never overflows: the growth reproduces the unbounded queue.
#[test]
fn growth_reproduces_an_unbounded_queue() {
    let hyper = |scv: f32| {
        // Balanced two-phase hyperexponential of mean 1 (dist's form).
        let r = ((scv - 1.0) / (scv + 1.0)).sqrt();
        let p1 = (1.0 + r) / 2.0;
        law(
            LawKind::HyperExp,
            [p1, 1.0 / (2.0 * p1), 1.0 / (2.0 * (1.0 - p1)), 0.0],
        )
    };
    let jsq = DispatchPolicy::Jsq.code();
    let arrival = |rho: f32| law(LawKind::Exp, [1.0 / (2.0 * rho), 0.0, 0.0, 0.0]);
    let mut heavy = point(
        0,
        Kernel::Dispatch.code(),
        jsq,
        2,
        arrival(0.95),
        hyper(10.0),
    );
    heavy.customers = 50_000;
    heavy.warmup = 0;
    let mut unstable = point(
        1,
        Kernel::Dispatch.code(),
        jsq,
        2,
        arrival(1.3),
        law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]),
    );
    unstable.customers = 12_000;
    unstable.warmup = 0;
    let reps = 64;
    let params = [heavy, unstable];
    let mut cpu = CpuEngine::new(0);
    // How many overflow at the first capacity: some of the first point's,
    // all of the second's (so both ways of re-running a slot are used).
    let first = run_points(&params, reps, &mut cpu);
    let overflowed: Vec<usize> = first
        .iter()
        .map(|o| {
            o.iter()
                .filter(|r| r.status & rep_status::QUEUE_OVERFLOW != 0)
                .count()
        })
        .collect();
    eprintln!(
        "overflowed at capacity {}: {overflowed:?} of {reps}",
        qsweep_core::contract::dispatch::capacity(2)
    );
    assert!(
        overflowed[0] > 0 && overflowed[0] < reps as usize / 2,
        "{overflowed:?}"
    );
    assert_eq!(overflowed[1], reps as usize);

    let (grown, grown_hist, capacities) = run_grown(&params, reps, &mut cpu);
    let roomy: Vec<PointParams> = params
        .iter()
        .map(|p| PointParams {
            capacity: qsweep_core::contract::dispatch::max_capacity(p),
            ..*p
        })
        .collect();
    let (wide, wide_hist, _) = run_grown(&roomy, reps, &mut cpu);
    eprintln!("grown capacities {capacities:?}");
    for i in 0..2 {
        assert!(capacities[i] > qsweep_core::contract::dispatch::capacity(2));
        assert!(grown[i].iter().all(|r| r.status == 0));
        assert_eq!(grown[i], wide[i], "point {i}: replications differ");
        assert_eq!(grown_hist[i], wide_hist[i], "point {i}: histograms differ");
        let peak = grown[i].iter().map(|r| r.max_in_system).max().unwrap();
        assert!(
            peak > qsweep_core::contract::dispatch::capacity(2) && peak <= capacities[i],
            "point {i}: peak {peak}"
        );
    }
    // The unstable queue grows by about (1 - 1/rho) per arrival: its peak
    // is near 12000 (1 - 1/1.3) = 2769, within 5 standard deviations of
    // the arrivals-minus-departures walk, sqrt(n (1 + 1/rho)).
    let mean_peak = grown[1]
        .iter()
        .map(|r| f64::from(r.max_in_system))
        .sum::<f64>()
        / 64.0;
    let (n, rho): (f64, f64) = (12_000.0, 1.3);
    let sd = (n * (1.0 + 1.0 / rho)).sqrt();
    assert!(
        (mean_peak - n * (1.0 - 1.0 / rho)).abs() <= 5.0 * sd,
        "mean peak {mean_peak}"
    );
}

/// Queues that outgrow the first capacity, against the reference
/// simulator (whose queues are unbounded): jsq with two servers and central
/// with two routers at rho 1.25, where the requests in the system pass 2052
/// within 25000 customers.
#[test]
fn grown_queues_match_reference() {
    for (routing, extra, policy, servers, routers) in [
        ("jsq", "", RefPolicy::Jsq, 2, 1),
        ("central", "routers = [2]\n", RefPolicy::Central, 3, 2),
    ] {
        let rho = 1.25;
        let mut r = reference(policy, servers, routers, rho, EXP1);
        r.warmup = 0;
        r.customers = 25_000;
        let run = format!(
            "reps = 32\ncustomers = {}\nwarmup = 0\nseed = 77\nallow_unstable = true",
            r.customers
        );
        let toml = spec_text(
            routing,
            extra,
            servers as u32,
            rho,
            "exp",
            "exp(mean=1)",
            &run,
        );
        let points = engine_points(&toml);
        let (_, reps_out, stats) = &points[0];
        assert!(reps_out.iter().all(|x| x.status == 0), "{routing}");
        let peak = reps_out.iter().map(|x| x.max_in_system).max().unwrap();
        assert!(peak > 2 * servers as u32 + 2048, "{routing}: peak {peak}");
        let eng = Summary::from_engine(reps_out, stats);
        let refs = r.run(32, 0x6A0 + servers as u64);
        let name = format!("{routing} {extra}R={servers} rho={rho}").replace('\n', " ");
        agree(&format!("{name} mean wait"), eng.mean, refs.mean, 0.0);
        for (i, q) in QS.iter().enumerate() {
            let slack = 0.01 * refs.pct[i].0 + 1e-9;
            agree(
                &format!("{name} p{}", q * 100.0),
                eng.pct[i],
                refs.pct[i],
                slack,
            );
        }
    }
}

/// A point whose queue outgrows the memory limit fails alone, with an
/// error that states the limit: central with 600 routers and 512 servers
/// starts above 16 MiB of state per replication, so it cannot grow, and at
/// rho 2 overflows within a few thousand customers. The stable point beside
/// it is reported as usual.
#[test]
fn a_queue_at_the_memory_limit_fails_its_point_alone() {
    let toml =
        "[sweep]\nrouting = [\"central\"]\nrouters = [600]\nservers = [512]\nrho = [0.5, 2]\n\
                service = [\"exp(mean=1)\"]\n\n[run]\nreps = 2\ncustomers = 20000\nwarmup = 0\n\
                allow_unstable = true\n";
    let spec = Spec::from_toml_str(toml, "test", Path::new(".")).unwrap();
    let (prepared, table) = run::prepare(&spec, spec.points());
    let p = &prepared[1].params;
    let limit = qsweep_core::contract::dispatch::state_limit_bytes(p);
    assert!(limit > qsweep_core::contract::dispatch::MAX_STATE_BYTES);
    assert_eq!(
        qsweep_core::contract::dispatch::grow(p, p.dispatch_capacity()),
        None
    );
    let mut seen = Vec::new();
    run::run_points(
        &prepared,
        &table,
        2,
        &mut CpuEngine::new(0),
        &mut |r: run::PointResult| {
            seen.push((
                r.point.grid.index,
                r.error.clone(),
                r.stats.reps,
                r.max_in_system,
            ));
            Ok(())
        },
    )
    .unwrap();
    eprintln!("{seen:?}");
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[0].0, seen[0].1.as_deref(), seen[0].2), (0, None, 2));
    let (index, error, reps, peak) = &seen[1];
    let error = error.as_deref().expect("point 1 fails");
    assert_eq!((*index, *reps), (1, 0));
    let first = qsweep_core::contract::dispatch::capacity(512);
    assert!(peak.unwrap() >= first, "{peak:?}");
    let mib = run::point::mib(limit);
    assert_eq!(mib, "17.6");
    assert!(
        error.contains(&format!(
            "grid point 1 (routing=central servers=512 lambda=1024 rho=2.000): the requests in \
             the system outgrew the memory limit of {mib} MiB of dispatch state per replication \
             (a capacity of {first} requests) in 2 of 2 replications; the point is unstable"
        )),
        "{error}"
    );
}

// ---------------------------------------------------------------------------
// The GPU kernel against its CPU twin.

fn close(a: f32, b: f32, rel: f32) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-3)
}

/// Every policy on both engines with the same streams. Laws whose samplers
/// are exact in f32 on any hardware (uniform with a power-of-two width:
/// no transcendental functions, products exact) make the two engines take
/// the same decisions, so every replication must agree to 1e-4 (bit for
/// bit, in practice). With exponential laws the samplers' logarithms differ
/// in the last bits between CPU and GPU, and a dispatch decision between two
/// nearly simultaneous events can then go the other way and send the two
/// replications down different (equally valid) paths: there most
/// replications must still agree to 1e-4 and the point means statistically.
#[test]
fn gpu_matches_cpu_for_every_policy() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_matches_cpu_for_every_policy") else {
        return;
    };
    let configs: [(u32, u32, u32, u32); 9] = [
        // (policy, servers, routers, choices)
        (DispatchPolicy::Jsq.code(), 8, 1, 2),
        (DispatchPolicy::Pod.code(), 20, 1, 2),
        (DispatchPolicy::Pod.code(), 10, 1, 3),
        (DispatchPolicy::Jiq.code(), 8, 1, 2),
        (DispatchPolicy::Lwl.code(), 8, 1, 2),
        (DispatchPolicy::Jsq.code(), 6, 3, 2),
        (DispatchPolicy::Pod.code(), 6, 2, 2),
        (DispatchPolicy::Jiq.code(), 6, 2, 2),
        (DispatchPolicy::Central.code(), 4, 3, 2),
    ];
    let mut exact_params = Vec::new();
    let mut exp_params = Vec::new();
    for (policy, servers, routers, choices) in configs {
        let rho = 0.85f32;
        // Uniform interarrivals on [0, w) with w a power of two, and uniform
        // service on [a, a + 1) with mean rho · R · w / 2: exact in f32.
        let width = (2.0 / (rho * servers as f32)).log2().ceil().exp2();
        let a = rho * servers as f32 * width / 2.0 - 0.5;
        let exact = |index| PointParams {
            routers,
            choices,
            ..point(
                index,
                Kernel::Dispatch.code(),
                policy,
                servers,
                law(LawKind::Uniform, [0.0, width, 0.0, 0.0]),
                law(LawKind::Uniform, [a, 1.0, 0.0, 0.0]),
            )
        };
        exact_params.push(exact(exact_params.len() as u32));
        let expo = |index| PointParams {
            routers,
            choices,
            ..point(
                index,
                Kernel::Dispatch.code(),
                policy,
                servers,
                law(LawKind::Exp, [1.0 / (rho * servers as f32), 0.0, 0.0, 0.0]),
                law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]),
            )
        };
        exp_params.push(expo(100 + exp_params.len() as u32));
    }
    // MMPP arrivals (a phase per replication, carried across passes) to
    // jsq, lwl and several routers' central queues, exponential service.
    let mut mmpp_params = Vec::new();
    for (policy, servers, routers) in [
        (DispatchPolicy::Jsq.code(), 8, 1),
        (DispatchPolicy::Lwl.code(), 8, 1),
        (DispatchPolicy::Central.code(), 4, 3),
    ] {
        let rho = 0.85f64;
        let arrival = qsweep_core::dist::Dist::parse(
            "mmpp(rates=[1,3],switch=[0.5,0.5])",
            qsweep_core::dist::Role::Arrival,
            Path::new("."),
        )
        .unwrap()
        .with_mean(1.0 / (rho * f64::from(servers)))
        .to_law(&mut Vec::new());
        mmpp_params.push(PointParams {
            routers,
            ..point(
                200 + mmpp_params.len() as u32,
                Kernel::Dispatch.code(),
                policy,
                servers,
                arrival,
                law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]),
            )
        });
    }
    // A mixed fleet, 4 dynos of speed 2 then 4 of speed 1 (engine order,
    // fastest first; service-time factors 1/2 and 1, exact in f32), with
    // the uniform laws: every policy that takes a fleet, the per-class sums
    // compared too.
    let mut fleet_params = Vec::new();
    for (policy, choices) in [
        (DispatchPolicy::Random, 1),
        (DispatchPolicy::Weighted, 1),
        (DispatchPolicy::FirstFree, 1),
        (DispatchPolicy::Jsq, 1),
        (DispatchPolicy::Pod, 2),
        (DispatchPolicy::Jiq, 1),
        (DispatchPolicy::Lwl, 1),
    ] {
        // rho 0.75 of a capacity of 12 speed-1 dynos (0.5 for random's
        // slow dynos: 12 · 0.5 / 8 = 0.75).
        let rho = if policy == DispatchPolicy::Random {
            0.5f32
        } else {
            0.75
        };
        let width = (2.0 / (rho * 12.0)).log2().ceil().exp2();
        let a = rho * 12.0 * width / 2.0 - 0.5;
        fleet_params.push(PointParams {
            choices,
            fleet_classes: 2,
            fleet_end: [4, 8, 8, 8],
            fleet_time: [0.5, 1.0, 1.0, 1.0],
            fleet_pick: [
                (2u64 << 32).div_euclid(3) as u32,
                u32::MAX,
                u32::MAX,
                u32::MAX,
            ],
            ..point(
                300 + fleet_params.len() as u32,
                Kernel::Dispatch.code(),
                policy.code(),
                8,
                law(LawKind::Uniform, [0.0, width, 0.0, 0.0]),
                law(LawKind::Uniform, [a, 1.0, 0.0, 0.0]),
            )
        });
    }
    let reps = 64;
    for (params, exact, laws) in [
        (&exact_params, true, "uniform laws"),
        (&exp_params, false, "exponential laws"),
        (&mmpp_params, false, "mmpp arrivals, exponential service"),
        (&fleet_params, true, "a mixed fleet, uniform laws"),
    ] {
        let cpu = run_points(params, reps, &mut CpuEngine::new(0));
        let gpu_out = run_points(params, reps, &mut gpu);
        for (i, (c, g)) in cpu.iter().zip(&gpu_out).enumerate() {
            let p = &params[i];
            let mut same = 0;
            for (rep, (a, b)) in c.iter().zip(g).enumerate() {
                assert_eq!(
                    (a.status, b.status),
                    (0, 0),
                    "policy {} rep {rep}",
                    p.route_n
                );
                assert_eq!(a.customers, b.customers);
                let agrees = close(a.mean_wait, b.mean_wait, 1e-4)
                    && close(a.mean_sojourn, b.mean_sojourn, 1e-4)
                    && close(a.mean_service, b.mean_service, 1e-4)
                    && a.class_served == b.class_served
                    && (0..4).all(|c| close(a.class_wait[c], b.class_wait[c], 1e-4));
                if exact {
                    assert!(
                        agrees,
                        "policy {} servers {} rep {rep}: cpu {a:?} gpu {b:?}",
                        p.route_n, p.servers
                    );
                }
                same += usize::from(agrees);
            }
            let mc = mean_se(&c.iter().map(|r| f64::from(r.mean_wait)).collect::<Vec<_>>());
            let mg = mean_se(&g.iter().map(|r| f64::from(r.mean_wait)).collect::<Vec<_>>());
            eprintln!(
                "policy {} servers {} routers {} ({}): {same}/{reps} replications agree to 1e-4; mean wait cpu {:.5} gpu {:.5}",
                p.route_n,
                p.servers,
                p.routers,
                laws,
                mc.0,
                mg.0
            );
            if !exact {
                assert!(
                    same * 4 >= reps as usize * 3,
                    "policy {}: only {same}/{reps} agree",
                    p.route_n
                );
                agree("gpu vs cpu mean wait", mg, mc, 0.0);
            }
        }
    }
}

/// Patience and capacity, replication by replication: with laws exact in
/// f32 (uniform interarrivals, services and patience on power-of-two
/// grids) the GPU kernel refuses, abandons and times out the same requests
/// as its CPU twin, under every policy, with one router and several
/// (requests judged at `central`'s routers too).
#[test]
fn gpu_matches_cpu_with_patience_and_capacity() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_matches_cpu_with_patience_and_capacity")
    else {
        return;
    };
    use qsweep_core::contract::Reneging;
    // (policy, servers, routers, choices, reneging, capacity, rho)
    let configs = [
        (DispatchPolicy::Jsq, 8, 1, 2, Reneging::None, 2, 1.1f32),
        (DispatchPolicy::Pod, 10, 1, 2, Reneging::None, 3, 1.0),
        (DispatchPolicy::Jiq, 8, 1, 2, Reneging::None, 1, 0.9),
        (DispatchPolicy::Jsq, 6, 3, 2, Reneging::None, 2, 0.95),
        (DispatchPolicy::Jsq, 8, 1, 2, Reneging::Abandon, 0, 1.2),
        (DispatchPolicy::Pod, 10, 2, 3, Reneging::Timeout, 0, 0.95),
        (DispatchPolicy::Jiq, 8, 1, 2, Reneging::Abandon, 0, 1.1),
        (DispatchPolicy::Lwl, 8, 1, 2, Reneging::Abandon, 0, 1.1),
        (DispatchPolicy::Central, 4, 3, 2, Reneging::Abandon, 0, 1.0),
        (DispatchPolicy::Central, 4, 3, 2, Reneging::Timeout, 0, 0.9),
    ];
    let params: Vec<PointParams> = configs
        .iter()
        .enumerate()
        .map(
            |(i, &(policy, servers, routers, choices, reneging, k, rho))| {
                let width = (2.0 / (rho * servers as f32)).log2().ceil().exp2();
                let a = rho * servers as f32 * width / 2.0 - 0.5;
                PointParams {
                    routers,
                    choices,
                    reneging: reneging.code(),
                    // Patience uniform on [0, 2): a mean of one service.
                    patience: law(LawKind::Uniform, [0.0, 2.0, 0.0, 0.0]),
                    system_limit: k,
                    ..point(
                        i as u32,
                        Kernel::Dispatch.code(),
                        policy.code(),
                        servers,
                        law(LawKind::Uniform, [0.0, width, 0.0, 0.0]),
                        law(LawKind::Uniform, [a, 1.0, 0.0, 0.0]),
                    )
                }
            },
        )
        .collect();
    let reps = 32;
    let cpu = run_points(&params, reps, &mut CpuEngine::new(0));
    let gpu_out = run_points(&params, reps, &mut gpu);
    for (p, (c, g)) in params.iter().zip(cpu.iter().zip(&gpu_out)) {
        let what = format!(
            "policy {} servers {} routers {} reneging {} limit {}",
            p.route_n, p.servers, p.routers, p.reneging, p.system_limit
        );
        let lost: u32 = c.iter().map(|r| r.lost).sum();
        assert!(lost > 0, "{what}: nothing lost, nothing tested");
        for (rep, (a, b)) in c.iter().zip(g).enumerate() {
            assert_eq!((a.status, b.status), (0, 0), "{what} rep {rep}");
            assert_eq!(a.lost, b.lost, "{what} rep {rep}: cpu {a:?} gpu {b:?}");
            assert_eq!(a.customers, b.customers, "{what} rep {rep}");
            assert!(
                close(a.mean_wait, b.mean_wait, 1e-4)
                    && close(a.mean_sojourn, b.mean_sojourn, 1e-4)
                    && a.max_in_system == b.max_in_system,
                "{what} rep {rep}: cpu {a:?} gpu {b:?}"
            );
        }
        eprintln!(
            "{what}: {reps} replications agree; lost {:.4} per request",
            f64::from(lost) / f64::from(reps * p.customers)
        );
    }
}

/// Unstable points whose queues outgrow the first capacity, grown by
/// `run_growing` on each engine: the GPU kernel honours the capacity and
/// the moving epoch (`dispatch::rebase_due`) as its CPU twin does, so with
/// laws exact in f32 the replications, their peaks and the histograms are
/// the same.
#[test]
fn gpu_grows_queues_as_the_cpu_does() {
    let Some(mut gpu) = crate::common::gpu_or_skip("gpu_grows_queues_as_the_cpu_does") else {
        return;
    };
    let mut params = Vec::new();
    for (policy, servers, routers) in [
        (DispatchPolicy::Jsq.code(), 2, 1),
        (DispatchPolicy::Pod.code(), 4, 1),
        (DispatchPolicy::Jiq.code(), 3, 2),
        (DispatchPolicy::Central.code(), 3, 2),
    ] {
        let rho = 1.3f32;
        let width = (2.0 / (rho * servers as f32)).log2().ceil().exp2();
        let a = rho * servers as f32 * width / 2.0 - 0.5;
        let mut p = PointParams {
            routers,
            choices: 2,
            ..point(
                params.len() as u32,
                Kernel::Dispatch.code(),
                policy,
                servers,
                law(LawKind::Uniform, [0.0, width, 0.0, 0.0]),
                law(LawKind::Uniform, [a, 1.0, 0.0, 0.0]),
            )
        };
        // Past the rebase threshold (2 R + 2048; the first capacity is 2 R + 512) at about (1 - 1/rho) per
        // arrival; central's requests wait at two routers, each with a
        // queue of that capacity.
        p.customers = if routers > 1 { 20_000 } else { 12_000 };
        p.warmup = 0;
        params.push(p);
    }
    let reps = 16;
    let (cpu, cpu_hist, cpu_cap) = run_grown(&params, reps, &mut CpuEngine::new(0));
    let (gpu_out, gpu_hist, gpu_cap) = run_grown(&params, reps, &mut gpu);
    assert_eq!(cpu_cap, gpu_cap);
    for (i, p) in params.iter().enumerate() {
        let peak = cpu[i].iter().map(|r| r.max_in_system).max().unwrap();
        eprintln!(
            "policy {} servers {} routers {}: capacity {}, peak {peak}",
            p.route_n, p.servers, p.routers, cpu_cap[i]
        );
        assert!(
            peak > 2 * p.servers + 2048,
            "policy {}: peak {peak}",
            p.route_n
        );
        for (rep, (a, b)) in cpu[i].iter().zip(&gpu_out[i]).enumerate() {
            assert_eq!(
                (a.status, a.customers, a.max_in_system),
                (b.status, b.customers, b.max_in_system),
                "policy {} rep {rep}",
                p.route_n
            );
            assert!(
                close(a.mean_wait, b.mean_wait, 1e-4)
                    && close(a.mean_sojourn, b.mean_sojourn, 1e-4),
                "policy {} rep {rep}: cpu {a:?} gpu {b:?}",
                p.route_n
            );
        }
        assert_eq!(cpu_hist[i], gpu_hist[i], "policy {}: histograms", p.route_n);
    }
}

#[test]
#[ignore = "throughput measurement: cargo test --test dynamic -- --ignored --nocapture"]
fn throughput() {
    let exp1 = law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]);
    let mut engines: Vec<(String, Box<dyn Engine>)> =
        vec![("cpu".into(), Box::new(CpuEngine::new(0)))];
    if let Some(g) = crate::common::gpu_or_skip("throughput") {
        engines.push((g.label(), Box::new(g)));
    }
    for (label, engine) in &mut engines {
        for (policy, servers) in [
            (DispatchPolicy::Jsq.code(), 100),
            (DispatchPolicy::Pod.code(), 100),
            (DispatchPolicy::Jiq.code(), 100),
            (DispatchPolicy::Lwl.code(), 100),
            (DispatchPolicy::Jsq.code(), 1000),
            (DispatchPolicy::Pod.code(), 1000),
            (DispatchPolicy::Jiq.code(), 1000),
        ] {
            let arrival = law(LawKind::Exp, [1.0 / (0.9 * servers as f32), 0.0, 0.0, 0.0]);
            let mut p = point(0, Kernel::Dispatch.code(), policy, servers, arrival, exp1);
            p.customers = 200_000;
            p.warmup = 0;
            let reps = 64;
            run_points(&[p], 2, engine.as_mut());
            let t = std::time::Instant::now();
            run_points(&[p], reps, engine.as_mut());
            let rate = f64::from(reps) * f64::from(p.customers) / t.elapsed().as_secs_f64();
            eprintln!("{label}: policy {policy} R={servers} rho=0.9: {rate:.3e} customers/s");
        }
    }
}

/// What the run loop reports of each point: (point, stats, section
/// histograms, max_in_system, error).
type Reported = Vec<(u32, PointStats, Vec<Vec<u64>>, Option<u32>, Option<String>)>;

fn run_loop(points: &[run::PreparedPoint], table: &[f32], engine: &mut dyn Engine) -> Reported {
    let mut got = Vec::new();
    run::run_points(points, table, 64, engine, &mut |r: run::PointResult| {
        got.push((
            r.point.grid.index,
            r.stats,
            r.hist,
            r.max_in_system,
            r.error,
        ));
        Ok(())
    })
    .unwrap();
    got
}

/// The run loop on each engine grows queues tile by tile (tiles of which
/// most replications overflowed run again whole; otherwise the overflowed
/// replications are undone and run again) and gives exactly what the same
/// engine gives with room for the whole queue from the start. In 4000
/// customers the queue passes the first capacity (2 R + 512 = 516) in a
/// few replications at rho 1.1 (which are undone and run again) and in
/// most at rho 1.19 (whose tile runs again whole): both ways are used.
#[test]
fn the_run_loop_grows_queues_exactly_on_each_engine() {
    let toml = "[sweep]\nrouting = [\"jsq\"]\nservers = [2]\nrho = [1.1, 1.19]\n\
                service = [\"exp(mean=1)\"]\n\n[run]\nreps = 64\ncustomers = 4000\nwarmup = 0\n\
                allow_unstable = true\n";
    let spec = Spec::from_toml_str(toml, "test", Path::new(".")).unwrap();
    let (points, table) = run::prepare(&spec, spec.points());
    // Room for the whole queue (its peak is under 1000) from the start,
    // within a software adapter's bindings.
    let roomy: Vec<run::PreparedPoint> = points
        .iter()
        .map(|p| run::PreparedPoint {
            grid: p.grid.clone(),
            params: PointParams {
                capacity: 8192,
                ..p.params
            },
            scale: p.scale,
            warmup_auto: p.warmup_auto,
            pilot: p.pilot,
            precision: p.precision,
        })
        .collect();
    let mut engines: Vec<Box<dyn Engine>> = vec![Box::new(CpuEngine::new(0))];
    if let Some(gpu) =
        crate::common::gpu_or_skip("the_run_loop_grows_queues_exactly_on_each_engine")
    {
        engines.push(Box::new(gpu));
    }
    for engine in &mut engines {
        let reference = run_loop(&roomy, &table, engine.as_mut());
        for point in &reference {
            let peak = point.3.unwrap();
            let first = qsweep_core::contract::dispatch::capacity(2);
            assert!(peak > first, "{}: peak {peak}", engine.label());
            assert_eq!(point.4, None);
        }
        let grown = run_loop(&points, &table, engine.as_mut());
        assert!(grown == reference, "{}: results differ", engine.label());
    }
}
