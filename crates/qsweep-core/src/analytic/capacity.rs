//! Baselines of queues with a capacity (the `capacity` axis): at most K
//! requests in a dyno, or in the central queue, waiting and in service; an
//! arrival that finds K is refused.
//!
//! With Poisson arrivals and exponential service the queue is M/M/c/K
//! (\[GH\] Gross, Shortle, Thompson & Harris, *Fundamentals of Queueing
//! Theory*, 4th ed., §2.5–2.6; `super::finite::mmck`): the blocking
//! probability (PASTA: the time-average probability of K in system), the
//! admitted requests' mean wait and their whole wait law (p99, `--slo`'s
//! P(W > t)). K = c is Erlang's loss system (Erlang B, 1917), c = 1 is
//! M/M/1/K. Random routing thins a Poisson stream to Poisson λ/R per dyno,
//! so each dyno is exactly M/M/w/K; central is one M/M/(R·w)/K. Under a
//! dispatch policy (`jsq`, `pod`, `jiq`) K is each server's limit: exact
//! where the policy reduces to one of these (one server, `pod` with one
//! choice, Erlang B for K = 1 under `jsq`/`jiq`). Round robin's Erlang
//! stream, the other dispatch cases and other service laws have no formula
//! here: "none".

use super::finite::mmck;
use super::patience::{poisson_queue, PoissonQueue};
use super::{is_exponential, Baseline, Policy, QueueInput};

/// The baseline of `q` with at most `capacity` requests in its queue (each
/// server's, under a dispatch policy).
///
/// Beyond the queues `poisson_queue` names, `jsq` and `jiq` with one router
/// (and `pod` sampling every server) send a request to an idle server while
/// there is one; with room for one request per server the fleet is
/// Erlang's loss system on all R servers.
pub fn with_capacity(q: &QueueInput, capacity: u32) -> Baseline {
    let none = || Baseline::new("none", None, None);
    let idle_first = match q.policy {
        Policy::Jsq { routers: 1 } | Policy::Jiq { routers: 1 } => true,
        Policy::Pod { d, routers: 1 } => d >= q.servers,
        _ => false,
    };
    let (queue, capacity) = if capacity == 1 && idle_first && is_exponential(&q.arrival) {
        let queue = PoissonQueue {
            lambda: q.lambda,
            servers: q.servers,
        };
        (queue, q.servers)
    } else {
        match poisson_queue(q) {
            Some(queue) => (queue, capacity),
            None => return none(),
        }
    };
    if !(is_exponential(&q.service) && q.service.mean.is_finite() && q.service.mean > 0.0) {
        return none();
    }
    let Some(f) = mmck(queue.lambda, 1.0 / q.service.mean, queue.servers, capacity) else {
        return none();
    };
    let method = if capacity == queue.servers {
        "exact:erlang_b"
    } else if queue.servers == 1 {
        "exact:mm1k"
    } else {
        "exact:mmck"
    };
    Baseline {
        mean_wait: Some(f.mean_wait),
        p99_wait: f.wait_quantile(super::P99),
        p_lost: Some(f.p_block),
        limited: Some(Box::new(f)),
        ..Baseline::new(method, None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{Family, LawMoments, Policy};

    fn exp(mean: f64) -> LawMoments {
        LawMoments {
            family: Family::Exp,
            mean,
            scv: 1.0,
            clamped: false,
        }
    }

    fn input(policy: Policy, servers: u32, lambda: f64) -> QueueInput {
        QueueInput {
            policy,
            servers,
            workers: 1,
            lambda,
            arrival: exp(1.0 / lambda),
            service: exp(1.0),
        }
    }

    #[test]
    fn random_routing_is_one_mm1k_dyno_at_lambda_over_r() {
        // One dyno of 10 at λ = 8: ρ = 0.8, K = 5. M/M/1/K: P(K) =
        // (1 − ρ) ρ^K / (1 − ρ^{K+1}).
        let b = with_capacity(&input(Policy::Random, 10, 8.0), 5);
        assert_eq!(b.method, "exact:mm1k");
        let rho: f64 = 0.8;
        let p_block = (1.0 - rho) * rho.powi(5) / (1.0 - rho.powi(6));
        assert!((b.p_lost.unwrap() - p_block).abs() < 1e-12, "{b:?}");
        assert!(b.p99_wait.unwrap() > b.mean_wait.unwrap());
    }

    #[test]
    fn central_at_k_equal_c_is_erlang_b_with_no_wait() {
        // Erlang B(c = 5, a = 3): a^c/c! / Σ a^k/k!.
        let b = with_capacity(&input(Policy::Central, 5, 3.0), 5);
        assert_eq!(b.method, "exact:erlang_b");
        let a: f64 = 3.0;
        let terms: Vec<f64> = (0..=5)
            .map(|k| a.powi(k) / f64::from((1..=k).product::<i32>()))
            .collect();
        let erlang_b = terms[5] / terms.iter().sum::<f64>();
        assert!((b.p_lost.unwrap() - erlang_b).abs() < 1e-12, "{b:?}");
        assert_eq!(b.mean_wait, Some(0.0));
        assert_eq!(b.p_wait_gt(0.0), Some(0.0));
    }

    #[test]
    fn round_robin_and_non_exponential_service_have_no_formula() {
        let mut q = input(Policy::RoundRobin, 10, 8.0);
        assert_eq!(with_capacity(&q, 5).method, "none");
        q.policy = Policy::Central;
        q.service = LawMoments {
            family: Family::Det,
            scv: 0.0,
            ..exp(1.0)
        };
        assert_eq!(with_capacity(&q, 20).method, "none");
    }
}
