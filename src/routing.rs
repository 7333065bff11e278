//! Routing policies and how each maps onto a queue the engines simulate.
//!
//! A load balancer in front of R dynos (each with `workers` servers) is
//! reduced to the smallest system with the same waiting-time law:
//! - `random`: by thinning, each dyno is an independent queue fed by a random
//!   1/R of the arrivals (Poisson stays Poisson), so one dyno is simulated;
//! - `round_robin`: each dyno sees every R-th arrival;
//! - `central`: one FCFS queue in front of all R·workers servers (the
//!   "intelligent router").
//!
//! A dyno with one worker is a single FIFO server (Lindley); otherwise it is a
//! multi-server FCFS queue (Kiefer–Wolfowitz).

use std::fmt;
use std::str::FromStr;

use crate::contract::{kernel, thinning};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Routing {
    Random,
    RoundRobin,
    Central,
}

impl Routing {
    pub const ALL: [Routing; 3] = [Routing::Random, Routing::RoundRobin, Routing::Central];

    pub fn name(self) -> &'static str {
        match self {
            Routing::Random => "random",
            Routing::RoundRobin => "round_robin",
            Routing::Central => "central",
        }
    }

    /// The simulated queue for `servers` dynos of `workers` each:
    /// (kernel, thinning, servers in the queue, route_n).
    pub fn queue(self, servers: u32, workers: u32) -> QueueShape {
        let (thin, c, route_n) = match self {
            Routing::Random => (thinning::RANDOM, workers, servers),
            Routing::RoundRobin => (thinning::EVERY_NTH, workers, servers),
            Routing::Central => (thinning::NONE, servers * workers, 1),
        };
        QueueShape {
            kernel: if c == 1 {
                kernel::LINDLEY
            } else {
                kernel::KIEFER_WOLFOWITZ
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
    pub kernel: u32,
    pub thinning: u32,
    pub servers: u32,
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
            other => Err(format!(
                "unknown routing '{other}'; expected one of random, round_robin, central"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(Routing::Random.queue(51, 1).kernel, kernel::LINDLEY);
        assert_eq!(Routing::Random.queue(51, 4).servers, 4);
        assert_eq!(Routing::Central.queue(51, 2).servers, 102);
        assert_eq!(Routing::Central.queue(1, 1).kernel, kernel::LINDLEY);
        assert_eq!("round-robin".parse::<Routing>(), Ok(Routing::RoundRobin));
        assert!("smart"
            .parse::<Routing>()
            .unwrap_err()
            .contains("expected one of"));
    }
}
