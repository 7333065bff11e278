//! Mixed fleets (`crate::fleet`): random and weighted routing of a Poisson
//! stream over dynos of different speeds.
//!
//! Why it is exact: splitting a Poisson stream at random (Bernoulli choices,
//! independent of the past) gives independent Poisson streams, so each dyno
//! is an M/G/1 queue of its own — at rate `λ/R` under `random`, `λ·s/Σs`
//! under `weighted` — serving sizes `S` in `S/s`: E\[S_c\] = E\[S\]/s, E\[S_c²\]
//! = E\[S²\]/s². Pollaczek–Khinchine gives each class's mean wait
//! (\[Kleinrock\] ch. 5), and the fleet's is their average weighted by the
//! share of the requests each class receives. With exponential sizes each
//! class is M/M/1, P(W_c > t) = ρ_c e^{−(μ_c − λ_c) t}, and the fleet's p99
//! is where the mixture of those tails is 1%.
//!
//! Join-the-shortest-queue, power of d, join-idle-queue and least-work-left
//! on unequal servers have no closed form; nor does the central queue with
//! unequal servers (the "heterogeneous M/M/c", whose exact analysis needs a
//! Markov chain over which servers are busy: Alves, Yehia and Pedrosa, "A
//! note on the exact solution of heterogeneous M/M/c queues", 2011; bounds
//! and approximations in Lin and Kumar, "Optimal control of a queueing
//! system with two heterogeneous servers", IEEE TAC 29(8), 1984). They are
//! simulated, with baseline "none".

use super::{mg1::pollaczek_khinchine_mean_wait, Baseline, Family, QueueInput};
use crate::fleet::Fleet;
use crate::routing::Routing;

/// The method label of a fleet split into independent M/G/1 queues.
pub const METHOD: &str = "exact:mg1_by_class";

/// The baseline of `fleet` at the rates and laws of `q`, routed by `routing`:
/// the row's mean (and, with exponential sizes, p99) over every request, and
/// each class's mean wait (`Baseline::class_mean_wait`).
pub fn baseline(q: &QueueInput, routing: Routing, fleet: &Fleet) -> Baseline {
    let weighted = match routing {
        Routing::Random => false,
        Routing::Weighted => true,
        _ => return Baseline::none(),
    };
    let poisson = q.arrival.family == Family::Exp && !q.arrival.clamped;
    let (mean, scv) = (q.service.mean, q.service.scv);
    if !(poisson && mean.is_finite() && mean > 0.0 && scv.is_finite() && q.lambda > 0.0) {
        return Baseline::none();
    }
    let shares = fleet.arrival_shares(weighted);
    // Per class: (share of requests, arrival rate per dyno, service rate).
    let classes: Vec<(f64, f64, f64)> = fleet
        .classes
        .iter()
        .zip(&shares)
        .map(|(c, &share)| (share, q.lambda * share / f64::from(c.count), c.speed / mean))
        .collect();
    if classes.iter().any(|&(_, l, mu)| l >= mu) {
        return Baseline::unstable();
    }
    let waits: Vec<f64> = classes
        .iter()
        .map(|&(_, l, mu)| pollaczek_khinchine_mean_wait(l, 1.0 / mu, scv))
        .collect();
    let overall: f64 = classes.iter().zip(&waits).map(|(c, w)| c.0 * w).sum();
    let exp_service = q.service.family == Family::Exp && !q.service.clamped;
    let p99 = exp_service.then(|| mixture_quantile(&classes, 0.99));
    Baseline {
        class_mean_wait: Some(waits),
        ..Baseline::new(METHOD, Some(overall), p99)
    }
}

/// The `p`-quantile of a wait whose tail is Σ share·ρ·e^{−(μ − λ) t} (M/M/1
/// classes), by bisection on the decreasing tail.
fn mixture_quantile(classes: &[(f64, f64, f64)], p: f64) -> f64 {
    let tail = |t: f64| -> f64 {
        classes
            .iter()
            .map(|&(share, l, mu)| share * (l / mu) * (-(mu - l) * t).exp())
            .sum()
    };
    let target = 1.0 - p;
    if tail(0.0) <= target {
        return 0.0;
    }
    let mut hi = 1.0;
    while tail(hi) > target {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{LawMoments, Policy};

    fn input(lambda: f64, service: Family, scv: f64) -> QueueInput {
        let m = |family, mean, scv| LawMoments {
            family,
            mean,
            scv,
            clamped: false,
        };
        QueueInput {
            policy: Policy::Random,
            servers: 50,
            workers: 1,
            lambda,
            arrival: m(Family::Exp, 1.0 / lambda, 1.0),
            service: m(service, 1.0 / 3.0, scv),
        }
    }

    #[test]
    fn a_plain_fleet_is_m_m_1_per_dyno() {
        // 50 dynos of speed 1 at 120/s, E[S] = 1/3: each M/M/1 at rho 0.8,
        // W = rho / (mu − lambda) = 0.8 / (3 − 2.4).
        let b = baseline(
            &input(120.0, Family::Exp, 1.0),
            Routing::Random,
            &Fleet::parse("50x1").unwrap(),
        );
        let w = 0.8 / 0.6;
        assert!((b.mean_wait.unwrap() - w).abs() < 1e-12);
        assert_eq!(b.method, METHOD);
        // M/M/1's p99: ln(rho / 0.01) / (mu − lambda).
        let p99 = (0.8f64 / 0.01).ln() / 0.6;
        assert!((b.p99_wait.unwrap() - p99).abs() < 1e-9);
    }

    #[test]
    fn weighted_loads_every_class_alike_and_random_overloads_the_slow() {
        let fleet = Fleet::parse("40x1,10x2").unwrap();
        // Capacity 60 speed-1 dynos; 150/s at E[S] = 1/3 is rho 5/6.
        let q = input(150.0, Family::Det, 0.0);
        let w = baseline(&q, Routing::Weighted, &fleet);
        let classes = w.class_mean_wait.clone().unwrap();
        // Each class at rho 5/6: M/D/1 W = rho E[S_c] / (2 (1 − rho)).
        let rho = 5.0 / 6.0;
        let slow = rho * (1.0 / 3.0) / (2.0 * (1.0 - rho));
        assert!((classes[0] - slow).abs() < 1e-12);
        assert!((classes[1] - slow / 2.0).abs() < 1e-12);
        let overall = (40.0 / 60.0) * classes[0] + (20.0 / 60.0) * classes[1];
        assert!((w.mean_wait.unwrap() - overall).abs() < 1e-12);
        assert!(w.p99_wait.is_none());
        // Random sends 3/s to each dyno: the slow ones at rho 1.
        assert_eq!(baseline(&q, Routing::Random, &fleet).method, "unstable");
        assert_eq!(baseline(&q, Routing::Jsq, &fleet).method, "none");
    }
}
