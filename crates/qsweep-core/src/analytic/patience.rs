//! Baselines of queues whose requests have patience (the `patience` axis):
//! which exact formula applies to the simulated queue, for each of the
//! `reneging` modes.
//!
//! - Timeout (`Reneging::Timeout`): the queue is the plain one, so the mean
//!   and p99 wait are the plain baseline's; a request times out when its
//!   wait W exceeds its patience τ, so the exact P(timeout) is E[P(W > τ)]:
//!   P(W > θ) for a deterministic θ, and, for an exponential tail
//!   P(W > t) = p e^{−γt} (M/M/c, GI/M/1) and exponential patience of rate
//!   r, p·r / (r + γ).
//! - Abandon (`Reneging::Abandon`): a request whose offered wait V would
//!   exceed its patience leaves unserved. The queue is another one: M/M/c+M
//!   (Erlang A: Palm 1943; Garnett, Mandelbaum & Reiman 2002), and M/M/1+D
//!   and M/G/1+D with deterministic patience (the virtual wait's density:
//!   Baccelli, Boyer & Hébuterne 1984), give P(abandon) and the served
//!   requests' mean wait E[V | V ≤ τ] (`super::impatience`). Elsewhere no
//!   formula: "none".
//!
//! The simulated queue is the one the plain baseline describes
//! (`super::baseline`): random routing thins a Poisson stream to Poisson
//! λ/R per dyno of `workers` servers, central is one queue of all servers;
//! round robin's Erlang stream has no formula under abandonment.

use super::impatience::{
    erlang_a, mg1_det_patience, mm1_det_patience, mmc_det_patience, Impatience,
};
use super::{is_exponential, Baseline, Family, LawMoments, Policy, QueueInput, WaitTail};
use crate::contract::Reneging;

/// The baseline of `q` whose requests have patience of law `patience`,
/// doing `mode`, from the plain queue's `plain` baseline;
/// `service_survival` is P(S > x) of the service law (M/G/1+D).
pub fn with_patience(
    q: &QueueInput,
    plain: Baseline,
    patience: &LawMoments,
    mode: Reneging,
    service_survival: &dyn Fn(f64) -> f64,
) -> Baseline {
    match mode {
        Reneging::None => plain,
        Reneging::Timeout => {
            let p_lost = p_timeout(&plain, patience);
            Baseline { p_lost, ..plain }
        }
        Reneging::Abandon => abandon(q, patience, service_survival),
    }
}

/// E[P(W > τ)] where the plain wait's law is known (module docs).
fn p_timeout(plain: &Baseline, patience: &LawMoments) -> Option<f64> {
    if patience.clamped {
        return None;
    }
    match patience.family {
        Family::Det => plain.p_wait_gt(patience.mean),
        Family::Exp if super::close(patience.scv, 1.0) => match plain.wait_tail? {
            WaitTail::Exponential { p_wait, decay } => {
                let r = 1.0 / patience.mean;
                Some(p_wait * r / (r + decay))
            }
            WaitTail::Md1 { .. } => None,
        },
        _ => None,
    }
}

/// The queue one simulated replication is, under abandonment: Poisson
/// arrivals at `lambda` to `servers` servers.
pub(super) struct PoissonQueue {
    pub lambda: f64,
    pub servers: u32,
}

/// The Poisson queue a replication of `q` simulates, where its arrivals
/// are Poisson: one dyno (λ/R, `workers` servers) under random routing,
/// the whole fleet under central; None otherwise.
///
/// Three dispatch policies are such a queue exactly, replication by
/// replication in law: `lwl` is the central queue's Kiefer–Wolfowitz
/// recursion (an abandoning request takes no server in either); any policy
/// over one server is that server's queue; and `pod` with one choice picks
/// a server uniformly, which is random routing.
pub(super) fn poisson_queue(q: &QueueInput) -> Option<PoissonQueue> {
    if !is_exponential(&q.arrival) {
        return None;
    }
    match q.policy {
        Policy::Random | Policy::Pod { d: 1, .. } => Some(PoissonQueue {
            lambda: q.lambda / f64::from(q.servers),
            servers: q.workers,
        }),
        Policy::Central | Policy::Lwl => Some(PoissonQueue {
            lambda: q.lambda,
            servers: q.servers.checked_mul(q.workers)?,
        }),
        Policy::Jsq { .. } | Policy::Jiq { .. } | Policy::Pod { .. } if q.servers == 1 => {
            Some(PoissonQueue {
                lambda: q.lambda,
                servers: 1,
            })
        }
        // Round robin's stream is Erlang, and the other dispatch policies
        // couple their servers: no formula.
        _ => None,
    }
}

fn abandon(
    q: &QueueInput,
    patience: &LawMoments,
    service_survival: &dyn Fn(f64) -> f64,
) -> Baseline {
    let none = || Baseline::new("none", None, None);
    let Some(queue) = poisson_queue(q) else {
        return none();
    };
    if patience.clamped || !(patience.mean.is_finite() && patience.mean > 0.0) {
        return none();
    }
    let s = &q.service;
    let exp_service = is_exponential(s);
    let exp_patience = patience.family == Family::Exp && super::close(patience.scv, 1.0);
    let found: Option<(&str, Impatience)> = match patience.family {
        Family::Exp if exp_patience && exp_service => erlang_a(
            queue.lambda,
            1.0 / s.mean,
            1.0 / patience.mean,
            queue.servers,
        )
        .map(|r| ("exact:erlang_a", r)),
        Family::Det if queue.servers == 1 && exp_service => {
            mm1_det_patience(queue.lambda, 1.0 / s.mean, patience.mean)
                .map(|r| ("exact:mm1_det_patience", r))
        }
        Family::Det if exp_service => {
            mmc_det_patience(queue.lambda, 1.0 / s.mean, queue.servers, patience.mean)
                .map(|r| ("exact:mmc_det_patience", r))
        }
        Family::Det if queue.servers == 1 => {
            mg1_det_patience(queue.lambda, service_survival, s.mean, patience.mean)
                .map(|r| ("exact:mg1_det_patience", r))
        }
        _ => None,
    };
    match found {
        Some((method, r)) => {
            let p99 = r.served_wait_quantile(super::P99);
            Baseline {
                p_lost: Some(r.p_abandon),
                served: Some(Box::new(r.clone())),
                ..Baseline::new(method, Some(r.mean_wait_served), p99)
            }
        }
        None => none(),
    }
}
