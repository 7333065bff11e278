//! Mixed fleets: dynos of different speeds (the `speeds` axis).
//!
//! A fleet is written as classes of `count x speed`, comma-separated:
//! `"40x1,10x2"` is 40 dynos of speed 1 and 10 of speed 2. A dyno of speed
//! `s` serves a request of size `S` (drawn from the service law) in `S / s`;
//! the fleet's capacity is `Σ count·speed`, so `rho = λ·E[S] / Σ count·speed`.
//!
//! The engines number the dynos class by class, fastest class first
//! ([`Fleet::engine_order`]): the first free server of a central queue
//! ([`DispatchPolicy::FirstFree`](crate::contract::DispatchPolicy::FirstFree))
//! is then the lowest-numbered idle one, and the per-class results come back
//! in that order and are put back in the order the user wrote
//! ([`Fleet::user_order`]).

use std::fmt;

use crate::contract::MAX_FLEET_CLASSES;

/// One class of a fleet: `count` dynos of relative speed `speed`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedClass {
    pub count: u32,
    pub speed: f64,
}

/// A mixed fleet, its classes in the order written.
#[derive(Clone, Debug, PartialEq)]
pub struct Fleet {
    pub classes: Vec<SpeedClass>,
    /// The text as written (trimmed): the `speeds` column.
    text: String,
}

/// What a `speeds` element must look like, for messages.
pub const EXPECT_FLEET: &str = "a fleet such as \"40x1,10x2\" (count x relative speed per \
                                class, counts >= 1, speeds finite and > 0, 1 to 4 classes)";

/// The most dynos one fleet may hold (as the `servers` axis of the dynamic
/// policies: the dispatch kernel's state is per server).
pub const MAX_FLEET_SERVERS: u64 = 1 << 20;

impl Fleet {
    /// Reads `"40x1,10x2"`; the error says what is wrong and what is
    /// expected, in one line.
    pub fn parse(text: &str) -> Result<Fleet, String> {
        let trimmed = text.trim();
        let bad = |why: &str| format!("'{trimmed}' {why}; expected {EXPECT_FLEET}");
        if trimmed.is_empty() {
            return Err(bad("is empty"));
        }
        let mut classes = Vec::new();
        for item in trimmed.split(',') {
            let item = item.trim();
            let (count, speed) = item
                .split_once(['x', 'X', '*'])
                .ok_or_else(|| bad(&format!("has '{item}', not count x speed")))?;
            let count: u32 = count
                .trim()
                .parse()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| bad(&format!("has the count '{}'", count.trim())))?;
            let speed: f64 = speed
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0 && (*s as f32).is_normal())
                .ok_or_else(|| bad(&format!("has the speed '{}'", speed.trim())))?;
            classes.push(SpeedClass { count, speed });
        }
        if classes.len() > MAX_FLEET_CLASSES {
            return Err(bad(&format!("has {} classes", classes.len())));
        }
        let total: u64 = classes.iter().map(|c| u64::from(c.count)).sum();
        if total > MAX_FLEET_SERVERS {
            return Err(bad(&format!(
                "has {total} dynos, more than {MAX_FLEET_SERVERS}"
            )));
        }
        Ok(Fleet {
            classes,
            text: trimmed.to_string(),
        })
    }

    /// Dynos in the fleet.
    pub fn servers(&self) -> u32 {
        self.classes.iter().map(|c| c.count).sum()
    }

    /// `Σ count·speed`: the fleet's capacity in speed-1 dynos.
    pub fn capacity(&self) -> f64 {
        self.classes
            .iter()
            .map(|c| f64::from(c.count) * c.speed)
            .sum()
    }

    /// Whether every dyno has speed 1: the plain fleet of `servers()`
    /// identical dynos, simulated (and numbered) exactly as the `servers`
    /// axis's.
    pub fn is_plain(&self) -> bool {
        self.classes.iter().all(|c| c.speed == 1.0)
    }

    /// Class indices as the engines number them: fastest first, ties in the
    /// written order.
    pub fn engine_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.classes.len()).collect();
        order.sort_by(|&a, &b| {
            self.classes[b]
                .speed
                .total_cmp(&self.classes[a].speed)
                .then(a.cmp(&b))
        });
        order
    }

    /// Per-class values in engine order put back in the written order.
    pub fn user_order<T: Copy>(&self, engine: &[T]) -> Vec<T> {
        let order = self.engine_order();
        let mut out = vec![engine[0]; self.classes.len()];
        for (slot, &class) in order.iter().enumerate() {
            out[class] = engine[slot];
        }
        out
    }

    /// The share of the arrivals each class receives (written order) under
    /// `random` (uniform over dynos) or `weighted` (proportional to speed).
    pub fn arrival_shares(&self, weighted: bool) -> Vec<f64> {
        let total = if weighted {
            self.capacity()
        } else {
            f64::from(self.servers())
        };
        self.classes
            .iter()
            .map(|c| f64::from(c.count) * if weighted { c.speed } else { 1.0 } / total)
            .collect()
    }

    /// The busiest class's utilisation under `random` (uniform) routing at
    /// arrival rate `lambda` and mean service `mean_service`: random routing
    /// is stable only when every class is, however fast the others.
    pub fn random_rho_max(&self, lambda: f64, mean_service: f64) -> f64 {
        let per_dyno = lambda / f64::from(self.servers());
        self.classes
            .iter()
            .map(|c| per_dyno * mean_service / c.speed)
            .fold(0.0, f64::max)
    }
}

impl fmt::Display for Fleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_reads_its_classes_and_keeps_its_text() {
        let f = Fleet::parse(" 40x1, 10x2 ").unwrap();
        assert_eq!(
            f.classes,
            vec![
                SpeedClass {
                    count: 40,
                    speed: 1.0
                },
                SpeedClass {
                    count: 10,
                    speed: 2.0
                }
            ]
        );
        assert_eq!(f.to_string(), "40x1, 10x2");
        assert_eq!(f.servers(), 50);
        assert_eq!(f.capacity(), 60.0);
        assert!(!f.is_plain());
        assert!(Fleet::parse("50x1").unwrap().is_plain());
        // Fastest first, and back.
        assert_eq!(f.engine_order(), vec![1, 0]);
        assert_eq!(f.user_order(&[0.5, 2.0]), vec![2.0, 0.5]);
        let shares = f.arrival_shares(true);
        assert!((shares[0] - 40.0 / 60.0).abs() < 1e-15);
        assert_eq!(f.arrival_shares(false), vec![0.8, 0.2]);
        // 150/s over 50 dynos, E[S] = 1/3: the slow class at rho 1.
        assert!((f.random_rho_max(150.0, 1.0 / 3.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bad_fleets_say_what_is_wrong_in_one_line() {
        for (text, what) in [
            ("", "is empty"),
            ("40", "not count x speed"),
            ("0x1", "the count '0'"),
            ("4x0", "the speed '0'"),
            ("4x-1", "the speed '-1'"),
            ("4xnan", "the speed 'nan'"),
            ("4x1e300", "the speed '1e300'"),
            ("1x1,1x2,1x3,1x4,1x5", "has 5 classes"),
            ("2000000x1", "more than"),
        ] {
            let e = Fleet::parse(text).unwrap_err();
            assert!(e.contains(what), "{text}: {e}");
            assert!(e.contains("expected a fleet such as"), "{e}");
            assert!(!e.contains('\n'));
        }
    }
}
