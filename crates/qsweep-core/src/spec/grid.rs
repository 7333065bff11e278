//! The grid: expanding a [`Spec`]'s axes into [`GridPoint`]s, and the checks
//! that need whole points.
//!
//! A point's arrival rate depends on its load kind (lambda, or rho times the
//! capacity over the mean service time), so some mistakes only show once the
//! axes are multiplied out: an unstable point, a rate the engines' f32
//! cannot hold, a dynamic policy with multi-worker servers. They are refused
//! here, naming the point (`point 3 (routing=random servers=51 lambda=160)`).

use std::fmt::Write as _;

use super::axes::DEFAULT_ROUTERS;
use super::{GridPoint, Load, Spec, SpecError};
use crate::routing::Routing;

/// Arrival rates a point may have (per second): the engines work in f32, so
/// the mean interarrival time 1/lambda must be a normal f32 with room to spare.
pub const LAMBDA_RANGE: (f64, f64) = (1e-30, 1e30);

impl Spec {
    /// Number of grid points (saturating).
    pub fn point_count(&self) -> u64 {
        let per_routing = self.routing.iter().fold(0u64, |n, r| {
            let choices = if r.takes_choices() {
                self.choices.len()
            } else {
                1
            };
            let routers = if r.takes_routers() {
                self.routers.len()
            } else {
                1
            };
            n.saturating_add((choices as u64).saturating_mul(routers as u64))
        });
        [
            self.servers.len(),
            self.workers.len(),
            self.arrival.len(),
            self.load.len(),
            self.service.len(),
            self.patience.len(),
            self.capacity.len(),
        ]
        .iter()
        .fold(per_routing, |n, &len| n.saturating_mul(len as u64))
    }

    /// The grid in nesting order: routing (outermost), choices, routers,
    /// servers, workers, arrival, load, service (innermost). `choices` only
    /// multiplies `pod` points and `routers` only `central`, `jsq`, `pod` and
    /// `jiq` points; for the other policies those axes collapse to one point
    /// (choices `None`, routers 1). `pod`'s d is capped at the point's
    /// servers, as the engines cap it, so the CSV records what ran. Call it
    /// on a validated spec (as [`Spec::load`] returns).
    pub fn points(&self) -> Vec<GridPoint> {
        self.grid().collect()
    }

    /// [`Spec::points`], one at a time: the one place a grid point is built
    /// (validation walks it without holding the whole grid).
    pub fn grid(&self) -> impl Iterator<Item = GridPoint> + '_ {
        let policies = self.routing.iter().flat_map(move |&routing| {
            let choices: Vec<Option<u32>> = if routing.takes_choices() {
                self.choices.iter().map(|&d| Some(d)).collect()
            } else {
                vec![None]
            };
            let routers: Vec<u32> = if routing.takes_routers() {
                self.routers.clone()
            } else {
                vec![DEFAULT_ROUTERS]
            };
            choices
                .into_iter()
                .flat_map(move |c| routers.clone().into_iter().map(move |k| (routing, c, k)))
        });
        policies
            .flat_map(move |policy| {
                self.fleets().flat_map(move |(servers, fleet)| {
                    self.workers.iter().flat_map(move |&workers| {
                        self.arrival.iter().flat_map(move |arrival| {
                            self.load.iter().flat_map(move |&load| {
                                self.service.iter().flat_map(move |service| {
                                    self.patience.iter().flat_map(move |patience| {
                                        self.capacity.iter().map(move |&capacity| {
                                            (
                                                policy,
                                                (servers, fleet),
                                                workers,
                                                arrival,
                                                load,
                                                service,
                                                patience,
                                                capacity,
                                            )
                                        })
                                    })
                                })
                            })
                        })
                    })
                })
            })
            .enumerate()
            .map(
                |(
                    index,
                    (
                        (routing, choices, routers),
                        (servers, fleet),
                        workers,
                        arrival,
                        load,
                        service,
                        patience,
                        limit,
                    ),
                )| {
                    let capacity = match fleet {
                        Some(f) => f.capacity() * f64::from(workers),
                        None => f64::from(servers) * f64::from(workers),
                    };
                    let mean_service = service.mean();
                    let (lambda, rho) = match load {
                        Load::Lambda(l) => (l, l * mean_service / capacity),
                        Load::Rho(r) => (r * capacity / mean_service, r),
                    };
                    GridPoint {
                        index: index as u32,
                        routing,
                        choices: choices.map(|d| d.min(servers)),
                        routers,
                        servers,
                        fleet: fleet.cloned(),
                        workers,
                        // Outside the engines' range (refused by
                        // `validate_points`) the law stays as written.
                        arrival: if (LAMBDA_RANGE.0..=LAMBDA_RANGE.1).contains(&lambda) {
                            arrival.with_mean(1.0 / lambda)
                        } else {
                            arrival.clone()
                        },
                        arrival_text: arrival.text().to_string(),
                        lambda,
                        service: service.clone(),
                        patience: patience.clone(),
                        reneging: match patience {
                            Some(_) => self.run.reneging,
                            None => crate::contract::Reneging::None,
                        },
                        capacity: limit,
                        rho,
                        // Abandonment bounds every wait by the patience:
                        // the queue is stable at any load (Baccelli, Boyer
                        // & Hébuterne 1984); timeouts change nothing. A
                        // capacity bounds the queue itself.
                        // Random routing on a fleet overloads its slowest
                        // class first, whatever the others' room.
                        stable: (rho < 1.0
                            && match fleet {
                                Some(f) if routing == Routing::Random => {
                                    f.random_rho_max(lambda, mean_service) < 1.0
                                }
                                _ => true,
                            })
                            || limit.is_some()
                            || (patience.is_some()
                                && self.run.reneging == crate::contract::Reneging::Abandon),
                    }
                },
            )
    }

    /// The servers axis with each element's fleet: the `speeds` axis's
    /// fleets where given, else identical dynos.
    fn fleets(&self) -> impl Iterator<Item = (u32, Option<&crate::fleet::Fleet>)> + '_ {
        self.servers
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, self.speeds.get(i)))
    }

    /// What the user may not expect of this grid, said once before a run:
    /// the values each axis range expands to, an axis that does not apply to some (or any) of its policies, and
    /// `pod` samples capped at the number of servers.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.ranges.0.iter().map(|e| e.describe()).collect();
        let names = |pick: fn(Routing) -> bool| -> Vec<String> {
            self.routing
                .iter()
                .filter(|&&r| pick(r))
                .map(|r| r.to_string())
                .collect()
        };
        if self.routers.iter().any(|&k| k != DEFAULT_ROUTERS) {
            let ignored = names(|r| !r.takes_routers());
            if !ignored.is_empty() {
                notes.push(format!(
                    "routers applies to central, jsq, pod and jiq; {} run with one router",
                    ignored.join(", ")
                ));
            }
        }
        if self.choices != [super::DEFAULT_CHOICES] && names(Routing::takes_choices).is_empty() {
            notes.push("choices applies to pod only; no pod point is in this grid".to_string());
        }
        if self.routing.contains(&Routing::Pod) {
            for &d in &self.choices {
                let capped: Vec<String> = self
                    .servers
                    .iter()
                    .filter(|&&r| d > r)
                    .map(u32::to_string)
                    .collect();
                if !capped.is_empty() {
                    notes.push(format!(
                        "pod with choices={d} samples every server when servers = {} (its \
                         choices column says so)",
                        capped.join(", ")
                    ));
                }
            }
        }
        notes
    }

    /// Refuses points with rho >= 1 unless `allow_unstable`, points whose
    /// arrival rate is outside [`LAMBDA_RANGE`] (a rho can imply one), and
    /// points whose central queue would have more than `u32::MAX` servers.
    pub fn validate_points(&self) -> Result<(), SpecError> {
        for &s in &self.servers {
            for &w in &self.workers {
                if s.checked_mul(w).is_none() {
                    return Err(SpecError(format!(
                        "[sweep] servers × workers = {s} × {w} is too large; expected a product \
                         <= {}",
                        u32::MAX
                    )));
                }
            }
        }
        let (lo, hi) = LAMBDA_RANGE;
        for c in self.grid() {
            let what = || self.describe(&c);
            if c.workers > 1 && c.routing.is_dynamic(c.routers) {
                let which = if c.routing == Routing::Central {
                    "central with routers > 1".to_string()
                } else {
                    c.routing.to_string()
                };
                return Err(SpecError(format!(
                    "point {} ({}): {which} dispatches to single-worker FIFO servers; expected \
                     workers = 1 with jsq, pod, jiq, lwl and central with routers > 1 (model \
                     a dyno of w workers as w servers)",
                    c.index,
                    what()
                )));
            }
            if let Some(fleet) = &c.fleet {
                if c.workers > 1 {
                    return Err(SpecError(format!(
                        "point {} ({}): speeds: a fleet's dynos are single-worker servers; \
                         expected workers = 1 (model a dyno of w workers as w dynos)",
                        c.index,
                        what()
                    )));
                }
                if let Err(why) = c.routing.fleet_policy(c.routers) {
                    return Err(SpecError(format!(
                        "point {} ({}): speeds: {why}; expected routing random, weighted, \
                         central (one router), jsq, pod, jiq or lwl with speeds",
                        c.index,
                        what()
                    )));
                }
                if c.capacity.is_some() || c.patience.is_some() {
                    return Err(SpecError(format!(
                        "point {} ({}): speeds: a fleet with a capacity or a patience is not \
                         modelled yet; expected capacity = \"none\" and patience = \"none\" \
                         with speeds ({fleet})",
                        c.index,
                        what()
                    )));
                }
            }
            if !(lo..=hi).contains(&c.lambda) {
                return Err(SpecError(format!(
                    "point {} ({}): lambda is out of range; expected arrival rates from {lo:e} \
                     to {hi:e} per second",
                    c.index,
                    what()
                )));
            }
            if let Some(k) = c.capacity {
                // A per-server limit needs the router's counts of its
                // requests at each server: lwl keeps none, and central's
                // routers hold requests of their own.
                if c.routing == Routing::Lwl || (c.routing == Routing::Central && c.routers > 1) {
                    let which = if c.routing == Routing::Lwl {
                        "lwl"
                    } else {
                        "central with routers > 1"
                    };
                    return Err(SpecError(format!(
                        "point {} ({}): capacity: {which} does not model a capacity; expected \
                         routing random, round_robin, central (one router), jsq, pod or jiq \
                         with a capacity",
                        c.index,
                        what(),
                    )));
                }
                if c.patience.is_some() {
                    return Err(SpecError(format!(
                        "point {} ({}): capacity: a capacity and a patience together are not \
                         modelled yet; expected capacity = \"none\" or patience = \"none\"",
                        c.index,
                        what()
                    )));
                }
                // The queue's own servers: a dyno's workers, or the whole
                // fleet behind the central queue; the dispatch policies'
                // single-worker servers each have their own limit.
                let queue = if c.routing.is_dynamic(c.routers) {
                    1
                } else {
                    c.routing.shape(c.servers, c.workers, c.routers).servers
                };
                if k < queue {
                    return Err(SpecError(format!(
                        "point {} ({}): capacity: {k} is below the queue's {queue} servers; \
                         expected a capacity >= {queue} (the requests in service count)",
                        c.index,
                        what()
                    )));
                }
            }
            if !c.stable && !self.run.allow_unstable {
                let rho = match &c.fleet {
                    Some(f) if c.rho < 1.0 => format!(
                        "its slowest class's rho = {:.3} >= 1 under random routing",
                        f.random_rho_max(c.lambda, c.service.mean())
                    ),
                    _ => format!("rho = {:.3} >= 1", c.rho),
                };
                return Err(SpecError(format!(
                    "point {} ({}): unstable, {rho}; lower lambda or rho, add \
                     servers, or pass --allow-unstable",
                    c.index,
                    what(),
                )));
            }
        }
        Ok(())
    }

    /// `routing=random servers=51 lambda=160`, plus workers, arrival and
    /// service where they vary: names a point in messages.
    pub fn describe(&self, p: &GridPoint) -> String {
        let mut s = self.describe_parts(
            p.routing,
            p.choices,
            p.routers,
            p.servers,
            p.workers,
            &p.arrival_text,
            p.lambda,
            p.service.text(),
        );
        if self.patience.len() > 1 {
            let law = p.patience.as_ref().map_or("none", |d| d.text());
            let _ = write!(s, " patience={law}");
        }
        if let Some(f) = &p.fleet {
            let _ = write!(s, " speeds={f}");
        }
        if self.capacity.len() > 1 {
            let k = p
                .capacity
                .map_or_else(|| "none".to_string(), |k| k.to_string());
            let _ = write!(s, " capacity={k}");
        }
        s
    }

    #[allow(clippy::too_many_arguments)]
    fn describe_parts(
        &self,
        routing: Routing,
        choices: Option<u32>,
        routers: u32,
        servers: u32,
        workers: u32,
        arrival: &str,
        lambda: f64,
        service: &str,
    ) -> String {
        let mut s = format!("routing={routing}");
        if let Some(d) = choices {
            let _ = write!(s, " choices={d}");
        }
        if routers != 1 {
            let _ = write!(s, " routers={routers}");
        }
        let _ = write!(s, " servers={servers}");
        if self.workers.len() > 1 || workers != 1 {
            let _ = write!(s, " workers={workers}");
        }
        if self.arrival.len() > 1 {
            let _ = write!(s, " arrival={arrival}");
        }
        if (1e-4..1e15).contains(&lambda) {
            let _ = write!(s, " lambda={lambda}");
        } else {
            let _ = write!(s, " lambda={lambda:e}");
        }
        if self.service.len() > 1 {
            let _ = write!(s, " service={service}");
        }
        s
    }

    /// Everything that needs the whole spec.
    pub(super) fn validate(&self) -> Result<(), SpecError> {
        let n = self.point_count();
        if n > u64::from(u32::MAX) {
            return Err(SpecError(format!(
                "[sweep]: the grid has {n} points; expected at most {}",
                u32::MAX
            )));
        }
        // Before validate_points expands the grid: a grid too large for
        // memory is refused, not allocated.
        let limit = crate::memory::limit().map_err(|e| SpecError(e.0))?;
        let bytes = n.saturating_mul(crate::memory::GRID_POINT_BYTES);
        if bytes > limit.bytes {
            let most = limit.bytes / crate::memory::GRID_POINT_BYTES;
            return Err(SpecError(
                crate::memory::refusal(
                    "[sweep]",
                    &format!("a grid of {n} points"),
                    bytes,
                    &format!("at most {most} points"),
                    &limit,
                )
                .0,
            ));
        }
        let per_rep = u64::from(self.run.customers) + u64::from(self.run.warmup);
        if per_rep > u64::from(u32::MAX) {
            return Err(SpecError(format!(
                "[run] customers + warmup = {per_rep} is too large; expected at most {}",
                u32::MAX
            )));
        }
        self.validate_points()
    }
}
