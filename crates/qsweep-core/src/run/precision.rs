//! `--precision P`: the stopping rule of the run loop. Replications are added
//! in rounds until the 95% CIs of the mean and the p99 wait are within `P` ×
//! their estimates, or the point has simulated `--max-customers` customers
//! (warm-up included); see `rounds` for how rounds are run.
//!
//! Each later round estimates the replications needed from the current CIs,
//! n·max(hw/(P·estimate))² over the mean and the p99 (CI half-widths shrink
//! as 1/√n), plus [`MARGIN`], growing at most [`MAX_GROWTH`]-fold per round
//! and at least by one replication per section; it never goes past
//! `max_customers` (nor [`MAX_REPS`]).

use crate::stats::{PointStats, P99};

/// A point's stopping rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Precision {
    /// Target 95% CI half-width relative to the estimate (mean and p99 wait).
    pub target: f64,
    /// Most customers (warm-up included) the point may simulate.
    pub max_customers: u64,
}

/// Largest growth of the replication count in one round.
pub const MAX_GROWTH: f64 = 4.0;
/// Aim this much past the estimated need (the CI estimate is itself noisy).
pub const MARGIN: f64 = 1.1;
/// Smallest first round under `precision` (16 sections of one replication).
pub const MIN_FIRST_ROUND: u32 = 16;
/// Most replications per point (their results are kept in memory).
pub const MAX_REPS: u64 = 1 << 24;

/// Half-width over estimate; 0 when both are 0, None without a CI.
fn relative(hw: Option<f64>, estimate: f64) -> Option<f64> {
    let hw = hw?;
    Some(if hw <= 0.0 {
        0.0
    } else if estimate > 0.0 {
        hw / estimate
    } else {
        f64::INFINITY
    })
}

/// Relative 95% CI half-widths of the mean and the p99 wait.
pub fn relative_half_widths(s: &PointStats) -> (Option<f64>, Option<f64>) {
    (
        relative(s.mean_wait_ci95, s.mean_wait),
        relative(s.wait_pct_ci95[P99], s.wait_pct[P99]),
    )
}

/// Both CIs within `target` of their estimates.
pub fn converged(s: &PointStats, target: f64) -> bool {
    matches!(relative_half_widths(s), (Some(m), Some(p)) if m <= target && p <= target)
}

/// Replications to have after the next round, from `n` now (before the
/// budget is applied).
pub fn next_total(n: u64, s: &PointStats, target: f64) -> u64 {
    let ratio = match relative_half_widths(s) {
        (Some(m), Some(p)) => (m / target).powi(2).max((p / target).powi(2)),
        _ => MAX_GROWTH,
    };
    let want = (n as f64 * ratio * MARGIN).ceil();
    let most = (n as f64 * MAX_GROWTH).ceil();
    (want.min(most) as u64).max(n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(mean: f64, hw: f64, p99: f64, p99_hw: f64) -> PointStats {
        let mut s = PointStats {
            mean_wait: mean,
            mean_wait_ci95: Some(hw),
            ..PointStats::default()
        };
        s.wait_pct[P99] = p99;
        s.wait_pct_ci95[P99] = Some(p99_hw);
        s
    }

    #[test]
    fn convergence_needs_both_cis() {
        assert!(converged(&stats(1.0, 0.01, 10.0, 0.1), 0.01));
        assert!(!converged(&stats(1.0, 0.011, 10.0, 0.1), 0.01));
        assert!(!converged(&stats(1.0, 0.01, 10.0, 0.2), 0.01));
        // No waiting at all: nothing left to estimate.
        assert!(converged(&stats(0.0, 0.0, 0.0, 0.0), 0.01));
        assert!(!converged(&PointStats::default(), 0.01));
    }

    #[test]
    fn growth_follows_the_ci_and_is_capped() {
        // Twice the target: 4× the replications wanted, 4.4× with margin,
        // capped at 4×.
        assert_eq!(next_total(100, &stats(1.0, 0.02, 1.0, 0.01), 0.01), 400);
        // 1.2× the target on the p99: 1.44 × 1.1 ≈ 1.584.
        assert_eq!(next_total(100, &stats(1.0, 0.005, 1.0, 0.012), 0.01), 159);
        // No CI: grow by the cap.
        assert_eq!(next_total(10, &PointStats::default(), 0.01), 40);
        // Always at least one more.
        assert_eq!(next_total(10, &stats(1.0, 0.0, 1.0, 0.0), 0.01), 11);
    }
}
