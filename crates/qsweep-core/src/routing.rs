//! Routing policies and how each maps onto a queue the engines simulate.
//!
//! A load balancer in front of R dynos (each with `workers` servers) is
//! reduced to the smallest system with the same waiting-time law:
//! - `random`: by thinning, each dyno is an independent queue fed by a random
//!   1/R of the arrivals (Poisson stays Poisson), so one dyno is simulated;
//! - `round_robin`: each dyno sees every R-th arrival;
//! - `central`: one FCFS queue in front of all R·workers servers (the
//!   "intelligent router");
//! - `weighted`: random routing with each dyno chosen with probability
//!   proportional to its speed; the same as `random` on a fleet of equal
//!   dynos (the `speeds` axis makes them differ).
//!
//! With a mixed fleet (`speeds`, see `crate::fleet`) no single queue stands
//! for the system: every policy runs on the dispatch kernel
//! ([`Routing::fleet_policy`]), `central` as a first-free scan that prefers
//! the fastest idle dyno.
//!
//! A dyno with one worker is a single FIFO server (Lindley); otherwise it is a
//! multi-server FCFS queue (Kiefer–Wolfowitz).
//!
//! The dynamic policies decide on the state of every server, so no single
//! queue stands for the system: the dispatch kernel (`engine::cpu::dispatch`)
//! simulates all R single-worker FIFO servers of a replication together:
//! - `jsq`: join the shortest queue (fewest requests present, queued + in
//!   service), ties broken uniformly at random;
//! - `pod`: power of d choices (Mitzenmacher 2001; Vvedenskaya, Dobrushin and
//!   Karpelevich 1996): sample `choices` distinct servers, join the one with
//!   the fewest present, ties at random;
//! - `jiq`: join the idle queue (Lu, Xie, Kliot, Geller, Larus and Greenberg,
//!   2011): a random idle server if one is idle, else a random server;
//! - `lwl`: least work left: join the server whose queue empties first. Its
//!   waits are those of `central` (each request starts at the earliest time
//!   any server frees up), which makes it a cross-check of the two kernels.
//!
//! `routers` K > 1 (for `central`, `jsq`, `pod`, `jiq`): arrivals are split
//! uniformly at random over K routers, each applying its policy to the
//! requests it dispatched itself only (it learns when they finish). For
//! `central` each router keeps its own FCFS queue and dispatches only to
//! servers where it has no request of its own. Random routing needs no
//! information, so K random routers are one random router; `round_robin`
//! and `lwl` take no `routers` (the axis does not apply to them).

use std::fmt;
use std::str::FromStr;

use crate::contract::{DispatchPolicy, Kernel, Thinning};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Routing {
    Random,
    RoundRobin,
    Central,
    Jsq,
    Pod,
    Jiq,
    Lwl,
    Weighted,
}

impl Routing {
    pub const ALL: [Routing; 8] = [
        Routing::Random,
        Routing::RoundRobin,
        Routing::Central,
        Routing::Jsq,
        Routing::Pod,
        Routing::Jiq,
        Routing::Lwl,
        Routing::Weighted,
    ];

    /// Every name, for messages: "random, round_robin, ...".
    pub fn names() -> String {
        Self::ALL.map(Routing::name).join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            Routing::Random => "random",
            Routing::RoundRobin => "round_robin",
            Routing::Central => "central",
            Routing::Jsq => "jsq",
            Routing::Pod => "pod",
            Routing::Jiq => "jiq",
            Routing::Lwl => "lwl",
            Routing::Weighted => "weighted",
        }
    }

    /// Whether the `choices` axis applies (power of d choices only).
    pub fn takes_choices(self) -> bool {
        self == Routing::Pod
    }

    /// Whether the `routers` axis applies.
    pub fn takes_routers(self) -> bool {
        matches!(
            self,
            Routing::Central | Routing::Jsq | Routing::Pod | Routing::Jiq
        )
    }

    /// Whether the point is simulated by the dispatch kernel, which needs
    /// single-worker servers.
    pub fn is_dynamic(self, routers: u32) -> bool {
        match self {
            Routing::Jsq | Routing::Pod | Routing::Jiq | Routing::Lwl => true,
            Routing::Central => routers > 1,
            Routing::Random | Routing::RoundRobin | Routing::Weighted => false,
        }
    }

    /// The dispatch policy that simulates this routing on a mixed fleet, or
    /// why none does (one line, for the point's refusal).
    pub fn fleet_policy(self, routers: u32) -> Result<DispatchPolicy, String> {
        Ok(match self {
            Routing::Random => DispatchPolicy::Random,
            Routing::Weighted => DispatchPolicy::Weighted,
            Routing::Jsq => DispatchPolicy::Jsq,
            Routing::Pod => DispatchPolicy::Pod,
            Routing::Jiq => DispatchPolicy::Jiq,
            Routing::Lwl => DispatchPolicy::Lwl,
            Routing::Central if routers <= 1 => DispatchPolicy::FirstFree,
            Routing::Central => {
                return Err("central with routers > 1 does not model a mixed fleet yet".into())
            }
            Routing::RoundRobin => {
                return Err("round_robin does not model a mixed fleet yet".into())
            }
        })
    }

    /// The simulated queue for `servers` dynos of `workers` each:
    /// (kernel, thinning, servers in the queue, route_n).
    pub fn queue(self, servers: u32, workers: u32) -> QueueShape {
        self.shape(servers, workers, 1)
    }

    /// [`Routing::queue`] with `routers` routers. Dynamic points get the
    /// dispatch kernel: all `servers` servers, the policy in `route_n`.
    pub fn shape(self, servers: u32, workers: u32, routers: u32) -> QueueShape {
        if self.is_dynamic(routers) {
            let policy = match self {
                Routing::Jsq => DispatchPolicy::Jsq,
                Routing::Pod => DispatchPolicy::Pod,
                Routing::Jiq => DispatchPolicy::Jiq,
                Routing::Lwl => DispatchPolicy::Lwl,
                Routing::Central => DispatchPolicy::Central,
                Routing::Random | Routing::RoundRobin | Routing::Weighted => {
                    unreachable!("{self} is not a dynamic policy")
                }
            };
            return QueueShape {
                kernel: Kernel::Dispatch,
                thinning: Thinning::None,
                servers,
                route_n: policy.code(),
            };
        }
        let (thin, c, route_n) = match self {
            Routing::RoundRobin => (Thinning::EveryNth, workers, servers),
            Routing::Central => (Thinning::None, servers * workers, 1),
            // Weighting equal dynos by speed is choosing them uniformly.
            Routing::Random | Routing::Weighted => (Thinning::Random, workers, servers),
            Routing::Jsq | Routing::Pod | Routing::Jiq | Routing::Lwl => {
                unreachable!("{self} is a dynamic policy")
            }
        };
        QueueShape {
            kernel: if c == 1 {
                Kernel::Lindley
            } else {
                Kernel::KieferWolfowitz
            },
            thinning: thin,
            servers: c,
            route_n,
        }
    }
}

/// The queue an engine simulates for one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueShape {
    pub kernel: Kernel,
    pub thinning: Thinning,
    pub servers: u32,
    /// R for thinning; the [`DispatchPolicy`] code for [`Kernel::Dispatch`].
    pub route_n: u32,
}

impl fmt::Display for Routing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Routing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "random" => Ok(Routing::Random),
            "round_robin" | "round-robin" | "rr" => Ok(Routing::RoundRobin),
            "central" => Ok(Routing::Central),
            "jsq" => Ok(Routing::Jsq),
            "pod" => Ok(Routing::Pod),
            "jiq" => Ok(Routing::Jiq),
            "lwl" => Ok(Routing::Lwl),
            "weighted" => Ok(Routing::Weighted),
            other => Err(format!(
                "unknown routing '{other}'; expected one of {}",
                Routing::names()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(Routing::Random.queue(51, 1).kernel, Kernel::Lindley);
        assert_eq!(Routing::Random.queue(51, 4).servers, 4);
        assert_eq!(Routing::Central.queue(51, 2).servers, 102);
        assert_eq!(Routing::Central.queue(1, 1).kernel, Kernel::Lindley);
        assert_eq!("round-robin".parse::<Routing>(), Ok(Routing::RoundRobin));
        assert!("smart"
            .parse::<Routing>()
            .unwrap_err()
            .contains("expected one of"));
    }

    #[test]
    fn dynamic_policies_use_the_dispatch_kernel() {
        for r in Routing::ALL {
            assert_eq!(r.name().parse::<Routing>(), Ok(r));
        }
        let s = Routing::Pod.shape(100, 1, 1);
        assert_eq!(
            (s.kernel, s.servers, s.route_n),
            (Kernel::Dispatch, 100, DispatchPolicy::Pod.code())
        );
        assert_eq!(s.thinning, Thinning::None);
        assert_eq!(Routing::Lwl.queue(7, 1).route_n, DispatchPolicy::Lwl.code());
        // One router leaves central as it was; several need the whole system.
        assert_eq!(
            Routing::Central.shape(7, 1, 1),
            Routing::Central.queue(7, 1)
        );
        let s = Routing::Central.shape(7, 1, 3);
        assert_eq!(
            (s.kernel, s.route_n),
            (Kernel::Dispatch, DispatchPolicy::Central.code())
        );
        assert_eq!(Routing::Random.shape(7, 1, 3), Routing::Random.queue(7, 1));
    }

    #[test]
    fn the_routing_flags_help_lists_every_policy() {
        // clap's help comes from a doc comment, which cannot be computed:
        // this keeps it in step with the enum.
        let flags = include_str!("spec/flags.rs");
        let help = format!("/// Routing policies: {} [list]", Routing::names());
        assert!(flags.contains(&help), "spec/flags.rs lacks '{help}'");
    }
}
