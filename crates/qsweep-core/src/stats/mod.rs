//! Statistics of a point from what an engine returns: one path for both
//! engines.
//!
//! - Means (wait, sojourn, P(wait > 0)) average the replication means; their
//!   95% CIs are Student t intervals over the independent replications,
//!   except where few long replications were cut into sections (see
//!   below): the mean wait's and P(wait > 0)'s CIs are then batch means
//!   over the sections ([`section_mean_cis`]).
//! - Percentiles come from the pooled log-spaced histogram, interpolated
//!   linearly inside the bin. Binning error: a bin spans at most 1/64 of an
//!   octave, so a percentile is never off by more than its bin's width,
//!   1/64 = 1.56% (reached by an atom at one end of a bin, e.g. a
//!   deterministic wait); for a law with a continuous density the linear
//!   interpolation error is second order in the bin width: measured at most
//!   0.011% over p50 … p99.99 of the exact M/M/1 and M/H2/1 (SCV 10 and
//!   1000) wait laws (`binning_error_*` in `tests/it/statistics.rs`). No
//!   percentile is read from the overflow bin: a point whose reported
//!   numbers touch it is simulated again with a wider range ([`rescaled`],
//!   `run::rounds`).
//! - Percentile CIs ([`percentile_ci`]): Woodruff's interval (Woodruff,
//!   "Confidence intervals for medians and other position measures", JASA
//!   47, 1952; Sitter & Wu, Stat. Prob. Letters 52, 2001) with the
//!   replication sections as clusters. The CI of the exceedance probability
//!   1 − q is a Clopper–Pearson interval on the effective sample size of
//!   Korn & Graubard ("Confidence intervals for proportions with small
//!   expected number of positive counts estimated from survey data", Survey
//!   Methodology 24, 1998): n_eff = p̂(1 − p̂) / Var(p̂), Var from the
//!   sections (ratio estimator), scaled by (z/t_{K−1})² for the K − 1
//!   degrees of freedom of that variance. The interval is mapped back
//!   through the pooled quantile function, so it is asymmetric; the CSV's
//!   half-width is its longer side. Tail exceedances come in clusters (one
//!   busy period holds many of them), and where the sample holds few
//!   clusters past the percentile, its own Var(p̂) rests on them and comes
//!   out too small (M/H2/1, SCV 10, ρ 0.9, 32 × 20 000 customers: 4.6×
//!   too large an n_eff at p99.9). So where the percentile's own effective
//!   exceedances n_eff (1 − q) number fewer than [`TRUSTED_EXCEEDANCES`],
//!   n_eff is the smaller of its own and that of the level with
//!   [`LOWER_LEVEL_FACTOR`] × its exceedance probability, where 20× more
//!   clusters estimate the same dispersion (the excursions above a high
//!   level of a light-tailed queue have a law that no longer depends on
//!   the level: Asmussen, "Applied Probability and Queues", 2003, §XIII.5).
//!   Where the own level holds enough, it is used alone: the lower level's
//!   clusters are not the tail's where the queue's congestion periods
//!   dominate low levels (jsq at R = 100, pod at R = 1000: always taking
//!   the smaller made the p99 and p99.9 CIs 2.2–3.7× the seeds' spread;
//!   now 1.0–1.1×), and never the atom at 0 ([`lower_level`]). A sojourn
//!   percentile's section CDFs are the waits convolved with the exact
//!   service law, far less variable than a sample of sojourns, so its
//!   n_eff is not capped at the customers ([`Sampled`]: capped, the
//!   multi-server sojourn p99 CIs were 5–15× too wide). Sectioning, the previous method (Asmussen &
//!   Glynn, "Stochastic Simulation", 2007, §III.5: a t interval over the
//!   sections' own percentiles), covered an M/M/1 ρ 0.9 p99.9 55–63% of
//!   the time with 32 × 20 000 customers, where each section's p99.9 rests
//!   on one or two busy periods (the whole sample on about six); this
//!   method covers 93% there, and 93–98% for every percentile in the
//!   settings of `tests/it/statistics.rs` (M/M/1, M/M/10, M/H2/1 at ρ 0.8 and
//!   0.9, M/M/1000 at ρ 0.98; `QSWEEP_COVERAGE_SEEDS=1000` for a
//!   tighter band), with widths 1.0–1.5× the seeds' spread.
//!   Where the whole sample holds only a few excursions past the
//!   percentile (under [`FEW_EXCEEDANCES`] effective exceedances: p99.9 of
//!   M/M/1000 at ρ 0.98 with 32 × 100 000 customers), no interval from the
//!   data alone covers reliably (80% there), as the data's upper bound
//!   cannot pass the largest wait: for a light-tailed service law
//!   ([`TailModel::Exponential`]) the upper end comes from the exponential
//!   tail fitted at a lower level ([`extrapolated_upper`]), and the run
//!   says the percentile is not resolved either way.
//!   Sections are the replication batches the engines write
//!   (`engine::schedule`); a run of fewer than 16 replications that are long
//!   against the queue's relaxation time has each replication cut into
//!   consecutive sections as well (`PointParams::rep_sections`, batch
//!   means), so 4 long replications give 16 sections and not 4, whose 3
//!   degrees of freedom made the p99 CI 1.95× the seeds' spread.

use crate::contract::{
    RepResult, HIST_BINS, HIST_MIN_EXP, HIST_OCTAVES, HIST_OVERFLOW_BIN, HIST_ZERO_BIN,
};
use crate::dist::Dist;

mod hist;
mod sojourn;
mod special;

pub use hist::{hist_cdf, hist_quantile};
pub use sojourn::{convolved_quantile, ServiceCurve};
use sojourn::{sojourn_cdf, wait_spans, CdfTable};
pub use special::{
    beta_quantile, binomial_upper_bound, clopper_pearson, incomplete_beta, ln_gamma, student_t_cdf,
    student_t_quantile,
};
use special::{gamma_quantile, Z975};

/// Half-width of the 95% Student t CI of the mean of `xs`; None for n < 2.
pub fn ci95_half_width(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    Some(student_t_quantile(0.975, (n - 1) as f64) * (var / n as f64).sqrt())
}

/// The adjusted Fisher–Pearson sample skewness `G1 = g1 sqrt(n (n − 1)) /
/// (n − 2)`, `g1 = m3 / m2^(3/2)` with central moments `m_k` (Joanes & Gill,
/// The Statistician 47, 1998): None for fewer than 3 values or none apart.
pub fn skewness(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mean = xs.iter().sum::<f64>() / nf;
    let (m2, m3) = xs.iter().fold((0.0, 0.0), |(a, b), &x| {
        let d = x - mean;
        (a + d * d, b + d * d * d)
    });
    let (m2, m3) = (m2 / nf, m3 / nf);
    if m2.is_nan() || m2 <= 1e-24 * mean * mean {
        return None;
    }
    Some(m3 / m2.powf(1.5) * (nf * (nf - 1.0)).sqrt() / (nf - 2.0))
}

/// A percentile's exceedance level is compared with the level where the
/// exceedance probability is this many times larger (see the module doc):
/// for p99.9 the p98 level, for p99 the p80 level; p95 and below have none.
pub const LOWER_LEVEL_FACTOR: f64 = 20.0;

/// A percentile's 95% confidence interval, `lo ≤ estimate ≤ hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PercentileCi {
    pub lo: f64,
    pub hi: f64,
    /// The effective number of exceedances the interval rests on,
    /// `n_eff (1 − q)`: about the number of independent excursions past
    /// the percentile the sample holds. Under [`FEW_EXCEEDANCES`] no
    /// interval from the data covers reliably (the sample misses the
    /// excursions it would need to see its own spread).
    pub exceedances: f64,
}

/// Effective exceedances from which a percentile's own variance estimate
/// is trusted; below, the lower level's (see [`percentile_ci`]).
pub const TRUSTED_EXCEEDANCES: f64 = 10.0;

/// Effective exceedances under which a percentile's CI is reported as not
/// resolved: M/M/1000 at ρ 0.98 with 32 × 100 000 customers has p99.9 on
/// about 0.5 of them, and its CI covers 80% of seeds; M/H2/1 (SCV 10, ρ
/// 0.9) with 32 × 20 000, 0.35 and 67% (issue 27).
pub const FEW_EXCEEDANCES: f64 = 3.0;

/// The level [`percentile_ci`] borrows a variance from: the quantile of
/// [`LOWER_LEVEL_FACTOR`] × the exceedance probability of `q`, or, where
/// that falls on the atom at 0 (P(wait > 0) below it: the exceedances of
/// 0 are whole congestion periods, not excursions of the tail), the largest
/// of the factors 10, 5, 2.5 whose level is positive. None if none is.
fn lower_level(q: f64, quantile: &dyn Fn(f64) -> f64) -> Option<f64> {
    level_below(q, LOWER_LEVEL_FACTOR, quantile)
}

/// The quantile of `factor` × the exceedance probability of `q`, or of
/// the largest of `factor` / 2, / 4, … (at least 2) whose level is
/// positive: [`lower_level`]'s search from any factor.
fn level_below(q: f64, factor: f64, quantile: &dyn Fn(f64) -> f64) -> Option<f64> {
    let mut factor = factor;
    while factor >= 2.0 {
        let level = 1.0 - factor * (1.0 - q);
        if level > 0.0 {
            let t = quantile(level);
            if t > 0.0 {
                return Some(t);
            }
        }
        factor /= 2.0;
    }
    None
}

impl PercentileCi {
    /// The half-width the CSV reports: the longer side, so that
    /// `estimate ± half_width` holds the whole interval.
    pub fn half_width(&self, estimate: f64) -> f64 {
        (self.hi - estimate).max(estimate - self.lo).max(0.0)
    }
}

/// The pooled mean R = Σ w_i v_i / Σ w_i of independent sections' own
/// means `values` over `weights` units each, and its ratio-estimator
/// variance Σ (w_i / w̄)² (v_i − R)² / (K (K − 1)) of cluster sampling
/// (Cochran, "Sampling Techniques", 1977, §6.11): the one variance of
/// [`effective_n`], [`extrapolated_upper`] and [`section_mean_cis`].
fn cluster_mean(weights: &[f64], values: &[f64]) -> (f64, f64) {
    let k = weights.len() as f64;
    let total: f64 = weights.iter().sum();
    let mean_w = total / k;
    let mean = weights.iter().zip(values).map(|(w, v)| w * v).sum::<f64>() / total;
    let var = weights
        .iter()
        .zip(values)
        .map(|(w, v)| (w / mean_w * (v - mean)).powi(2))
        .sum::<f64>()
        / (k * (k - 1.0));
    (mean, var)
}

/// Korn & Graubard's effective sample size of the pooled exceedance
/// fraction at `t` over independent sections of `weights` customers whose
/// CDFs are `cdf(i, t)`: p̂(1 − p̂) / Var(p̂), Var from the sections
/// ([`cluster_mean`]). With `Sampled::Customers` capped at the number of
/// customers (a sample of them is never worth more than that many
/// independent ones); the number of customers when the sections agree
/// exactly.
fn effective_n(t: f64, weights: &[f64], cdf: &dyn Fn(usize, f64) -> f64, sampled: Sampled) -> f64 {
    let total: f64 = weights.iter().sum();
    let ys: Vec<f64> = (0..weights.len()).map(|i| 1.0 - cdf(i, t)).collect();
    let (p, var) = cluster_mean(weights, &ys);
    if var <= 0.0 {
        total
    } else {
        let n = p * (1.0 - p) / var;
        match sampled {
            Sampled::Customers => n.min(total),
            Sampled::Smoothed => n,
        }
    }
}

/// What a section's CDF is an estimate from, which bounds how much it can
/// be worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampled {
    /// The empirical CDF of the customers' own values (waits): its
    /// exceedance fraction has at least binomial variance (the customers'
    /// waits are positively correlated), so `n_eff` never exceeds them.
    Customers,
    /// A sample convolved with a law known exactly (sojourns: the waits
    /// with the service law): the service part is not sampled, so the
    /// fraction varies far less than a binomial of the customers, and the
    /// sections' spread alone says how much (capped, it was 5–15× too wide
    /// where few customers wait: issue 27).
    Smoothed,
}

/// What is known of a wait's tail beyond the data: whether a percentile
/// whose sample holds too few excursions past it (under
/// [`FEW_EXCEEDANCES`]) may take its upper bound from a fitted tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TailModel {
    /// Exponential. A queue whose service law has an exponential moment
    /// has a wait tail P(W > t) ~ C e^(−γt) (Cramér–Lundberg; for GI/G/c,
    /// Asmussen, "Applied Probability and Queues", 2003, §XIII.5), so the
    /// waits past a high level overshoot it by about an exponential
    /// amount whatever the level: fitted where the sample has many
    /// excursions, the tail is carried to a percentile where it has few
    /// ([`extrapolated_upper`]). M/M/c's wait given waiting is exactly
    /// exponential.
    Exponential,
    /// Nothing known (a heavy-tailed service law, or one whose tail
    /// qsweep does not classify): the data's interval stands, flagged.
    Unknown,
}

impl TailModel {
    /// The tail model of a queue with service law `service`
    /// ([`Dist::light_tailed`]).
    pub fn of(service: &Dist) -> TailModel {
        if service.light_tailed() {
            TailModel::Exponential
        } else {
            TailModel::Unknown
        }
    }
}

/// Steps of the trapezoid rule that integrates a section's tail above the
/// fitted level ([`extrapolated_upper`]).
const OVERSHOOT_STEPS: usize = 64;

/// The exponential tail of [`extrapolated_upper`] is fitted above the
/// level with this many times the percentile's exceedance probability (for
/// p99.9 the p90 level): far enough down that the sample holds dozens of
/// excursions past it. At 20× (p98) the fitted overshoot was low in the
/// calm samples that need the bound (M/M/1000 at ρ 0.98, 32 × 100,000
/// customers: 0.03–0.04 against the exact 0.05), and the bound covered in
/// 90% of seeds; at 100×, in all of 60 (M/H2/1, SCV 10, ρ 0.9: 95%).
pub const TAIL_FIT_FACTOR: f64 = 100.0;

/// The upper 95% bound of the `q` percentile from an exponential tail
/// ([`TailModel::Exponential`]), for a percentile the sample holds too few
/// excursions past to bound it from above: the data's own bound cannot
/// exceed the largest wait, while the sample quantile of a level crossed
/// by half an excursion is low more often than not (M/M/1000 at ρ 0.98,
/// 32 × 100,000 customers: p99.9 covered in 80% of seeds).
///
/// Above the level `L` where the exceedance probability is
/// [`TAIL_FIT_FACTOR`] times larger ([`level_below`]), P(W > L + x) =
/// p_L e^(−x/m): the quantile is L + m ln(p_L / (1 − q)). The mean
/// overshoot m is the ratio of the sections' tail integrals ∫_L (1 − F_i)
/// to their fractions above L (trapezoids up to the largest wait). The
/// independent overshoots it rests on, k, are the fewer of two counts:
/// m² / Var(m), from its ratio-estimator variance over the sections
/// ([`cluster_mean`]), and the effective exceedances of L, n_eff(L) p_L,
/// the excursions past it (in a calm sample the overshoots of one
/// excursion look independent: the first count alone came out 5–10× too
/// large); taken to the sections' degrees of freedom as [`percentile_ci`]
/// does. The mean of k exponentials is below m·k / Gamma_0.025(k) with
/// probability 97.5%, and p_L below its Clopper–Pearson bound: the bound
/// is L plus the one times the logarithm of the other over 1 − q. None
/// where the level has no waits above it.
fn extrapolated_upper(
    q: f64,
    weights: &[f64],
    cdf: &dyn Fn(usize, f64) -> f64,
    quantile: &dyn Fn(f64) -> f64,
    sampled: Sampled,
) -> Option<f64> {
    let k = weights.len();
    let level = level_below(q, TAIL_FIT_FACTOR, quantile)?;
    let top = quantile(1.0);
    if k < 2 || top <= level {
        return None;
    }
    let h = (top - level) / OVERSHOOT_STEPS as f64;
    // Per section: customers above the level, and their summed overshoot.
    let (mut above, mut overshoot) = (vec![0.0; k], vec![0.0; k]);
    for i in 0..k {
        above[i] = weights[i] * (1.0 - cdf(i, level));
        let integral: f64 = (0..=OVERSHOOT_STEPS)
            .map(|j| {
                let end = if j == 0 || j == OVERSHOOT_STEPS {
                    0.5
                } else {
                    1.0
                };
                end * (1.0 - cdf(i, level + j as f64 * h))
            })
            .sum();
        overshoot[i] = weights[i] * integral * h;
    }
    let total_above: f64 = above.iter().sum();
    if total_above <= 0.0 {
        return None;
    }
    // Each section's mean overshoot, weighted by its customers above L.
    let section_means: Vec<f64> = above
        .iter()
        .zip(&overshoot)
        .map(|(&a, &o)| if a > 0.0 { o / a } else { 0.0 })
        .collect();
    let (mean, var) = cluster_mean(&above, &section_means);
    let n_level = effective_n(level, weights, cdf, sampled);
    let p_level = total_above / weights.iter().sum::<f64>();
    let from_spread = if var > 0.0 {
        mean * mean / var
    } else {
        total_above
    };
    let independent = from_spread.min(n_level * p_level).min(total_above);
    let dof = (Z975 / student_t_quantile(0.975, (k - 1) as f64)).powi(2);
    let independent = (independent * dof).max(0.5);
    let mean_hi = mean * independent / gamma_quantile(0.025, independent);
    let n = n_level * dof;
    let (_, p_hi) = clopper_pearson(p_level * n, n);
    Some(level + mean_hi * (p_hi / (1.0 - q)).ln().max(0.0))
}

/// 95% CI of the `q` percentile `estimate` of a point whose replications
/// were cut into independent sections: section `i` holds `weights[i]`
/// customers and has CDF `cdf(i, t)`, and `quantile(p)` is the pooled
/// quantile function. Woodruff's interval with Korn & Graubard's effective
/// sample size (see the module doc). The same function serves any
/// percentile whose section CDFs can be evaluated (waits from the section
/// histograms, sojourns from their convolution with the service law).
/// None with fewer than two sections.
pub fn percentile_ci(
    q: f64,
    estimate: f64,
    weights: &[f64],
    cdf: &dyn Fn(usize, f64) -> f64,
    quantile: &dyn Fn(f64) -> f64,
    sampled: Sampled,
    tail: TailModel,
) -> Option<PercentileCi> {
    let k = weights.len();
    if k < 2 || weights.iter().any(|&w| w <= 0.0) {
        return None;
    }
    let exceed = 1.0 - q;
    let mut n_eff = effective_n(estimate, weights, cdf, sampled);
    if n_eff * exceed < TRUSTED_EXCEEDANCES {
        if let Some(t) = lower_level(q, quantile) {
            n_eff = n_eff.min(effective_n(t, weights, cdf, sampled));
        }
    }
    // Degrees of freedom: the variance rests on K sections (Korn &
    // Graubard's n_eff (t_n / t_df)², with t_n = z for the many customers).
    let t = student_t_quantile(0.975, (k - 1) as f64);
    let n = n_eff * (Z975 / t).powi(2);
    let (p_lo, p_hi) = clopper_pearson(exceed * n, n);
    let lo = quantile((1.0 - p_hi).max(0.0)).min(estimate);
    let mut hi = quantile((1.0 - p_lo).min(1.0)).max(estimate);
    if tail == TailModel::Exponential && estimate > 0.0 && n_eff * exceed < FEW_EXCEEDANCES {
        if let Some(h) = extrapolated_upper(q, weights, cdf, quantile, sampled) {
            hi = hi.max(h);
        }
    }
    Some(PercentileCi {
        lo,
        hi,
        exceedances: n_eff * exceed,
    })
}

/// The sections that hold customers, and how many each holds: the
/// clusters [`percentile_ci`] weighs (an empty section says nothing).
fn nonempty_sections<'a>(sections: &[&'a [u64]]) -> (Vec<&'a [u64]>, Vec<f64>) {
    let kept: Vec<&[u64]> = sections
        .iter()
        .copied()
        .filter(|s| s.iter().any(|&c| c > 0))
        .collect();
    let weights = kept.iter().map(|s| s.iter().sum::<u64>() as f64).collect();
    (kept, weights)
}

/// [`percentile_ci`] of a wait percentile from the sections' histograms
/// (`HIST_BINS` counts each, scaled by `scale`; `pooled` is their sum) and
/// the largest wait `max`. Empty sections are left out.
pub fn wait_percentile_ci(
    q: f64,
    estimate: f64,
    sections: &[&[u64]],
    pooled: &[u64],
    scale: f64,
    max: f64,
    tail: TailModel,
) -> Option<PercentileCi> {
    let (sections, weights) = nonempty_sections(sections);
    let cdf = |i: usize, t: f64| hist_cdf(sections[i], t, scale, max);
    let quantile = |p: f64| hist_quantile(pooled, p, scale, max).unwrap_or(0.0);
    percentile_ci(
        q,
        estimate,
        &weights,
        &cdf,
        &quantile,
        Sampled::Customers,
        tail,
    )
}

/// Which of a point's reported numbers were read from a histogram bin that
/// does not resolve them: the overflow bin (above `2^(HIST_MIN_EXP +
/// HIST_OCTAVES)` × scale, interpolated up to the largest wait) or the
/// underflow bin (below `2^HIST_MIN_EXP` × scale, interpolated from 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RangeUse {
    /// A wait percentile, a bound of its CI, or `p99_sojourn` (through the
    /// waits it convolves) came from the overflow bin.
    pub overflow: bool,
    /// A wait percentile came from the underflow bin, its CI above 0.
    pub underflow: bool,
}

/// Octaves kept free above the largest wait when a point is rescaled, so
/// that later `--precision` rounds, whose waits grow, rarely rescale again.
pub const RESCALE_HEADROOM_OCTAVES: i32 = 4;

/// The histogram scale to simulate a point again with when `used` says a
/// reported number was not resolved, or None when that cannot help. Scales
/// are `base` (the service mean) times a power of two, so binning stays
/// exact (a product by 2^k in f32) and the new range puts the largest wait
/// `max_wait` [`RESCALE_HEADROOM_OCTAVES`] below the top: the overflow bin
/// is then empty, and the underflow bin as small as that allows.
pub fn rescaled(used: RangeUse, max_wait: f64, scale: f64, base: f64) -> Option<f64> {
    if !(used.overflow || used.underflow) || !(max_wait > 0.0 && max_wait.is_finite()) {
        return None;
    }
    let top = HIST_MIN_EXP + HIST_OCTAVES as i32 - RESCALE_HEADROOM_OCTAVES;
    let k = (max_wait / base).log2().floor() as i32 + 1 - top;
    let new = base * 2f64.powi(k);
    // An overflow is only cured by a wider top; an underflow only by a
    // lower bottom that keeps the largest wait in range.
    let helps = if used.overflow {
        new > scale
    } else {
        new < scale
    };
    helps.then_some(new)
}

/// Index of each reported percentile in [`PointStats::wait_pct`] (and
/// [`WAIT_PERCENTILES`]).
pub const P50: usize = 0;
pub const P90: usize = 1;
pub const P95: usize = 2;
pub const P99: usize = 3;
pub const P999: usize = 4;

/// Percentiles reported for waits, as (column stem, q), at indices
/// [`P50`] … [`P999`].
pub const WAIT_PERCENTILES: [(&str, f64); 5] = [
    ("p50", 0.50),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
];

/// Everything the CSV reports about one point's simulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointStats {
    pub reps: usize,
    pub mean_wait: f64,
    pub mean_wait_ci95: Option<f64>,
    /// The adjusted Fisher–Pearson skewness `G1` of the replication mean
    /// waits (None under 3 replications or with no spread): what
    /// `horizon::skewed` judges the t interval's trust by.
    pub mean_wait_skewness: Option<f64>,
    pub p_wait: f64,
    /// 95% CI half-width of `p_wait`: Student t over the replications'
    /// fractions, as for the mean.
    pub p_wait_ci95: Option<f64>,
    /// Customers recorded (all replications), and those among them who
    /// waited (wait > 0): the histogram's total and all but its zero bin.
    pub recorded: u64,
    pub waited: u64,
    /// Wait percentiles in the order of [`WAIT_PERCENTILES`] (index with
    /// [`P50`] … [`P999`]), with CIs.
    pub wait_pct: [f64; 5],
    pub wait_pct_ci95: [Option<f64>; 5],
    /// The effective exceedances each percentile's CI rests on
    /// ([`PercentileCi::exceedances`]; None without a CI).
    pub wait_pct_exceedances: [Option<f64>; 5],
    pub max_wait: f64,
    pub mean_sojourn: f64,
    pub mean_sojourn_ci95: Option<f64>,
    pub p99_sojourn: f64,
    /// CI of `p99_sojourn`, by [`percentile_ci`] as the wait percentiles'.
    pub p99_sojourn_ci95: Option<f64>,
    /// `--slo`: P(wait > t) for each of `PointParams::slo`'s thresholds
    /// (the slots past the spec's are meaningless), the mean over the
    /// replications of their exact fractions (`RepResult::exceed`), with
    /// the Student t CI over replications as for `p_wait`, and the
    /// customers counted above each threshold (all replications).
    pub p_wait_gt: [f64; 4],
    pub p_wait_gt_ci95: [Option<f64>; 4],
    pub exceeded: [u64; 4],
    /// Patience (`PointParams::reneging`): the fraction of requests whose
    /// wait exceeded their patience (abandoned, or timed out), the mean
    /// over the replications of their exact fractions (`RepResult::lost`
    /// over the requests that arrived), with the Student t CI over
    /// replications, and the requests lost (all replications); under a
    /// capacity, the fraction refused (blocked). Under abandonment or a
    /// capacity every other statistic is over the served requests.
    pub p_lost: f64,
    pub p_lost_ci95: Option<f64>,
    pub lost: u64,
    /// Mean service time actually drawn (a check on the samplers).
    pub mean_service: f64,
    /// Replications whose sampler reported trouble.
    pub failed_reps: usize,
    /// Reported numbers the histogram's range did not resolve (the run
    /// loop simulates such a point again with a wider range).
    pub hist_range: RangeUse,
    /// A mixed fleet: each class's mean wait (engine order, fastest first:
    /// `RepResult::class_wait`), the mean over the replications that served
    /// some request of the class, with its Student t CI; None for a class
    /// that served none (or without a fleet).
    pub class_mean_wait: [Option<f64>; 4],
    pub class_mean_wait_ci95: [Option<f64>; 4],
}

/// [`percentile_ci`] of a sojourn percentile: each section's sojourn CDF is
/// its wait histogram convolved with the service law (as
/// [`convolved_quantile`] does for the pooled one). Empty sections are left
/// out; `hi` bounds the quantiles (the largest sojourn observed).
#[allow(clippy::too_many_arguments)]
pub fn sojourn_percentile_ci(
    q: f64,
    estimate: f64,
    sections: &[&[u64]],
    pooled: &[u64],
    scale: f64,
    max_wait: f64,
    service: &dyn ServiceCurve,
    hi: f64,
) -> Option<PercentileCi> {
    let (sections, weights) = nonempty_sections(sections);
    let spans: Vec<Vec<(f64, f64, f64)>> = sections
        .iter()
        .map(|s| wait_spans(s, scale, max_wait))
        .collect();
    let cdf = |i: usize, t: f64| -> f64 { sojourn_cdf(&spans[i], service, t) };
    let quantile =
        |p: f64| convolved_quantile(pooled, p, scale, max_wait, service, hi).unwrap_or(0.0);
    percentile_ci(
        q,
        estimate,
        &weights,
        &cdf,
        &quantile,
        Sampled::Smoothed,
        TailModel::Unknown,
    )
}

/// The `q` quantile of the wait and its 95% CI half-width, from the pooled
/// histogram `pooled` and the per-section histograms `batches`: the one
/// percentile path ([`wait_percentile_ci`]), for `--quantiles` columns as
/// for the built-in ones. `scale` and `max_wait` as in [`hist_quantile`];
/// 0 for an empty histogram.
pub fn wait_percentile(
    pooled: &[u64],
    batches: &[&[u64]],
    q: f64,
    scale: f64,
    max_wait: f64,
    tail: TailModel,
) -> (f64, Option<f64>) {
    let estimate = hist_quantile(pooled, q, scale, max_wait).unwrap_or(0.0);
    let ci = wait_percentile_ci(q, estimate, batches, pooled, scale, max_wait, tail);
    (estimate, ci.map(|c| c.half_width(estimate)))
}

/// 95% CI half-widths of the mean wait and of P(wait > 0) by batch means,
/// where the sections were cut within few long replications
/// (`PointParams::rep_sections`): Student t on K − 1 degrees of freedom
/// over the K sections' means, weighted by their customers (the ratio
/// estimator's variance, [`cluster_mean`]). A t interval over 4
/// replications has 3 degrees of freedom, and its mean-wait CI was 1.5×
/// the seeds' spread; over their 16 sections, 15. The sections' means are
/// read from their histograms, each bin's count at its midpoint: the
/// binning moves every section's mean alike (a bin spans 1/64 of an
/// octave), so their spread, all the CI takes from them, is barely moved;
/// the point's estimate stays the replications' exact mean. None (the
/// replications' interval stands) with fewer than two sections, or where a
/// section has waits past the histogram's range, whose values it does not
/// hold.
fn section_mean_cis(sections: &[&[u64]], scale: f64, max_wait: f64) -> Option<(f64, f64)> {
    let (kept, weights) = nonempty_sections(sections);
    let k = kept.len();
    if k < 2 || kept.iter().any(|s| s[HIST_OVERFLOW_BIN as usize] > 0) {
        return None;
    }
    let waits: Vec<f64> = kept
        .iter()
        .map(|s| {
            wait_spans(s, scale, max_wait)
                .iter()
                .map(|&(a, b, p)| p * 0.5 * (a + b))
                .sum()
        })
        .collect();
    let waited: Vec<f64> = kept
        .iter()
        .zip(&weights)
        .map(|(s, w)| 1.0 - s[HIST_ZERO_BIN as usize] as f64 / w)
        .collect();
    let t = student_t_quantile(0.975, (k - 1) as f64);
    let half_width = |xs: &[f64]| t * cluster_mean(&weights, xs).1.sqrt();
    Some((half_width(&waits), half_width(&waited)))
}

/// Statistics from one point's replications and its histogram batches
/// (`batches` slices of `HIST_BINS` wait counts). `scale` is
/// the histogram scale (1 / `inv_hist_scale`); `service` is the service
/// law, for sojourn percentiles.
pub fn point_stats(
    reps: &[RepResult],
    batches: &[&[u64]],
    scale: f64,
    service: &Dist,
    drops_late: bool,
) -> PointStats {
    // Where late requests are dropped (abandoned, or refused by a full
    // queue: `PointParams::drops_late`) the waits are the served requests'
    // (all but the lost); otherwise every request that arrived was served.
    let served = |r: &RepResult| {
        if drops_late {
            r.customers.saturating_sub(r.lost)
        } else {
            r.customers
        }
    };
    let n = reps.len();
    let col =
        |f: fn(&RepResult) -> f32| -> Vec<f64> { reps.iter().map(|r| f64::from(f(r))).collect() };
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let waits = col(|r| r.mean_wait);
    let sojourns = col(|r| r.mean_sojourn);
    let max_wait = reps
        .iter()
        .map(|r| f64::from(r.max_wait))
        .fold(0.0, f64::max);
    let bins = HIST_BINS as usize;
    let mut pooled = vec![0u64; bins];
    for b in batches {
        for (p, &c) in pooled.iter_mut().zip(b.iter()) {
            *p += c;
        }
    }
    let batches: Vec<&[u64]> = batches.iter().map(|b| &b[..bins]).collect();
    let top = 2f64.powi(HIST_MIN_EXP + HIST_OCTAVES as i32) * scale;
    let bottom = 2f64.powi(HIST_MIN_EXP) * scale;
    let mut hist_range = RangeUse::default();
    let mut wait_pct = [0.0; 5];
    let mut wait_pct_ci95 = [None; 5];
    let mut wait_pct_exceedances = [None; 5];
    let tail = TailModel::of(service);
    for (k, &(_, q)) in WAIT_PERCENTILES.iter().enumerate() {
        let est = hist_quantile(&pooled, q, scale, max_wait).unwrap_or(0.0);
        let ci = wait_percentile_ci(q, est, &batches, &pooled, scale, max_wait, tail);
        wait_pct[k] = est;
        wait_pct_ci95[k] = ci.map(|c| c.half_width(est));
        wait_pct_exceedances[k] = ci.map(|c| c.exceedances);
        // A percentile whose CI reaches 0 (at the zero atom: the median of
        // a queue with P(wait > 0) near 1/2) is indistinguishable from 0 at
        // any range; simulating the point again would double its cost for
        // nothing (issue 25).
        hist_range.underflow |= est > 0.0 && est < bottom && ci.is_none_or(|c| c.lo > 0.0);
        hist_range.overflow |= est >= top || ci.is_some_and(|c| c.hi >= top);
    }
    let max_sojourn = reps
        .iter()
        .map(|r| f64::from(r.max_sojourn))
        .fold(0.0, f64::max);
    let p99_sojourn =
        convolved_quantile(&pooled, 0.99, scale, max_wait, service, max_sojourn).unwrap_or(0.0);
    // The overflow bin's waits are spread up to the largest one: only a sojourn
    // quantile beyond its lower edge can depend on where they really lie.
    hist_range.overflow |= pooled[HIST_OVERFLOW_BIN as usize] > 0 && p99_sojourn > top;
    // Each section's sojourn CDF (for the p99's CI) reads the service CDF
    // through a table: the CI evaluates every section's convolution many
    // times, and a law's CDF can cost a special function each. The table's
    // error is the same in every section, so it barely moves their spread.
    let table = (p99_sojourn.is_finite() && p99_sojourn > 0.0)
        .then(|| CdfTable::new(service, 2.0 * p99_sojourn));
    let section_law: &dyn ServiceCurve = match &table {
        Some(t) => t,
        None => service,
    };
    let p99_sojourn_ci95 = sojourn_percentile_ci(
        0.99,
        p99_sojourn,
        &batches,
        &pooled,
        scale,
        max_wait,
        section_law,
        max_sojourn,
    )
    .map(|c| c.half_width(p99_sojourn));
    let recorded: u64 = pooled.iter().sum();
    let p_waits = col(|r| r.p_wait);
    // More sections than replications: they were cut within them.
    let (mean_wait_ci95, p_wait_ci95) = match (batches.len() > n)
        .then(|| section_mean_cis(&batches, scale, max_wait))
        .flatten()
    {
        Some((w, p)) => (Some(w), Some(p)),
        None => (ci95_half_width(&waits), ci95_half_width(&p_waits)),
    };
    let exceed_fractions = |k: usize| -> Vec<f64> {
        reps.iter()
            .map(|r| f64::from(r.exceed[k]) / f64::from(served(r).max(1)))
            .collect()
    };
    let exceed: [Vec<f64>; 4] = std::array::from_fn(exceed_fractions);
    let class_waits = |c: usize| -> Vec<f64> {
        reps.iter()
            .filter(|r| r.class_served[c] > 0)
            .map(|r| f64::from(r.class_wait[c]))
            .collect()
    };
    let lost_fractions: Vec<f64> = reps
        .iter()
        .map(|r| f64::from(r.lost) / f64::from(r.customers.max(1)))
        .collect();
    PointStats {
        p_lost: mean(&lost_fractions),
        p_lost_ci95: ci95_half_width(&lost_fractions),
        lost: reps.iter().map(|r| u64::from(r.lost)).sum(),
        p_wait_gt: std::array::from_fn(|k| mean(&exceed[k])),
        p_wait_gt_ci95: std::array::from_fn(|k| ci95_half_width(&exceed[k])),
        exceeded: std::array::from_fn(|k| reps.iter().map(|r| u64::from(r.exceed[k])).sum()),
        reps: n,
        mean_wait: mean(&waits),
        mean_wait_ci95,
        mean_wait_skewness: skewness(&waits),
        p_wait: mean(&p_waits),
        p_wait_ci95,
        recorded,
        waited: recorded - pooled[HIST_ZERO_BIN as usize],
        wait_pct,
        wait_pct_ci95,
        wait_pct_exceedances,
        max_wait,
        mean_sojourn: mean(&sojourns),
        mean_sojourn_ci95: ci95_half_width(&sojourns),
        p99_sojourn,
        p99_sojourn_ci95,
        mean_service: mean(&col(|r| r.mean_service)),
        failed_reps: reps.iter().filter(|r| r.status != 0).count(),
        hist_range,
        class_mean_wait: std::array::from_fn(|c| {
            let waits = class_waits(c);
            (!waits.is_empty()).then(|| mean(&waits))
        }),
        class_mean_wait_ci95: std::array::from_fn(|c| ci95_half_width(&class_waits(c))),
    }
}

#[cfg(test)]
mod tests {
    use super::special::NORMAL_ABOVE;
    use super::*;
    use crate::contract::hist_bin;
    use crate::dist::Role;
    use std::path::Path;

    #[test]
    fn deterministic_service_shifts_the_wait_quantile_exactly() {
        // Issue 27 item 4: with each bin's waits at its midpoint, W + D
        // snapped to the bins (up to 0.47% off). Spread uniformly, as the
        // wait quantile reads them, the sojourn quantile is the wait's plus D.
        let mut h = vec![0u64; HIST_BINS as usize];
        h[HIST_ZERO_BIN as usize] = 1000;
        for i in 0..20_000u32 {
            let w = 0.05 + 30.0 * f64::from(i) / 20_000.0;
            h[hist_bin(w as f32) as usize] += 1;
        }
        let (scale, max_wait) = (0.25, 30.05);
        let scaled: Vec<u64> = h.clone();
        for d in ["det(value=1)", "det(value=0.37)", "det(value=4)"] {
            let service = Dist::parse(d, Role::Service, Path::new(".")).unwrap();
            let shift = service.mean();
            for q in [0.5, 0.9, 0.99, 0.999] {
                let wait = hist_quantile(&scaled, q, scale, max_wait).unwrap();
                let sojourn =
                    convolved_quantile(&scaled, q, scale, max_wait, &service, 40.0).unwrap();
                assert!(
                    (sojourn - (wait + shift)).abs() <= 1e-8 * sojourn,
                    "{d} q {q}: sojourn {sojourn} vs wait {wait} + {shift}"
                );
            }
        }
    }

    #[test]
    fn tabulated_service_agrees_with_the_law() {
        let law = Dist::parse(
            "weibull(shape=0.46,median=0.05)",
            Role::Service,
            Path::new("."),
        )
        .unwrap();
        let table = CdfTable::new(&law, 3.0);
        // Linear interpolation errs most where F bends (near 0, F ~ x^0.46):
        // F is checked where it is smooth on the table's step, G everywhere.
        for x in [0.0, 0.3, 1.7, 2.999, 3.0, 5.0, 40.0] {
            assert!((table.cdf(x) - law.cdf(x)).abs() < 1e-4, "F({x})");
        }
        for x in [0.0, 1e-4, 0.01, 0.3, 1.7, 2.999, 3.0, 5.0, 40.0] {
            let g = law.integrated_cdf(x);
            assert!(
                (table.integrated_cdf(x) - g).abs() < 1e-4 * (1.0 + g),
                "G({x}): {} vs {g}",
                table.integrated_cdf(x)
            );
        }
    }

    #[test]
    fn gamma_quantiles_match_chi_square_tables() {
        // Gamma(k, 1) = χ²(2k) / 2: χ²_0.025(2) = 0.050636, χ²_0.025(20) =
        // 9.59078; Gamma(1) is Exp(1), whose 0.025 quantile is −ln 0.975.
        assert!((gamma_quantile(0.025, 1.0) + 0.975f64.ln()).abs() < 1e-9);
        assert!((2.0 * gamma_quantile(0.025, 10.0) - 9.59078).abs() < 1e-4);
        assert!((2.0 * gamma_quantile(0.025, 1.0) - 0.050636).abs() < 1e-5);
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Values from standard t tables (e.g. Abramowitz & Stegun, Table 26.10).
        for (dof, t) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (5.0, 2.570_582),
            (15.0, 2.131_450),
            (30.0, 2.042_272),
            (1000.0, 1.962_339),
        ] {
            let q = student_t_quantile(0.975, dof);
            assert!((q - t).abs() < 1e-5, "dof {dof}: {q} vs {t}");
        }
    }

    #[test]
    fn ln_gamma_known_values() {
        assert!((ln_gamma(1.0)).abs() < 1e-14);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-13);
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn histogram_quantiles_of_a_known_sample() {
        // 1000 values 0.001, 0.002, ..., 1.0 plus 1000 zeros: the 0.75
        // quantile is ~0.5, the 0.5 quantile is 0.
        let mut h = vec![0u64; HIST_BINS as usize];
        h[0] = 1000;
        for i in 1..=1000 {
            h[hist_bin(i as f32 / 1000.0) as usize] += 1;
        }
        assert_eq!(hist_quantile(&h, 0.5, 1.0, 1.0), Some(0.0));
        let q = hist_quantile(&h, 0.75, 1.0, 1.0).unwrap();
        assert!((q - 0.5).abs() < 0.5 * 0.01, "{q}");
        // scale
        let q2 = hist_quantile(&h, 0.75, 3.0, 3.0).unwrap();
        assert!((q2 - 3.0 * q).abs() < 1e-12);
        let q = hist_quantile(&h, 0.999, 1.0, 1.0).unwrap();
        assert!((q - 0.998).abs() < 0.998 * 0.01, "{q}");
    }

    #[test]
    fn sojourn_quantile_by_convolution_matches_mm1() {
        // M/M/1, lambda 0.8, mu 1: P(W = 0) = 0.2, W | W > 0 ~ Exp(0.2), and
        // the sojourn is Exp(0.2) (Kleinrock 1975, §3.2): p99 = ln(100)/0.2.
        let (lambda, mu) = (0.8f64, 1.0f64);
        let n = 2_000_000u64;
        let mut h = vec![0u64; HIST_BINS as usize];
        h[0] = (n as f64 * (1.0 - lambda / mu)) as u64;
        // Waiting customers at evenly spaced quantiles of Exp(mu - lambda).
        let waiting = n - h[0];
        for i in 0..waiting {
            let u = (i as f64 + 0.5) / waiting as f64;
            let w = -(1.0 - u).ln() / (mu - lambda);
            h[hist_bin(w as f32) as usize] += 1;
        }
        let service = Dist::parse("exp(rate=1)", Role::Service, Path::new(".")).unwrap();
        let p99 = convolved_quantile(&h, 0.99, 1.0, 80.0, &service, 200.0).unwrap();
        let exact = 100f64.ln() / (mu - lambda);
        assert!((p99 - exact).abs() < 0.005 * exact, "{p99} vs {exact}");
    }

    #[test]
    fn hist_cdf_inverts_hist_quantile() {
        let mut h = vec![0u64; HIST_BINS as usize];
        h[0] = 300;
        for i in 1..=700 {
            h[hist_bin(i as f32 / 70.0) as usize] += 1;
        }
        let (scale, max) = (2.0, 20.0);
        assert_eq!(hist_cdf(&h, 0.0, scale, max), 0.3);
        assert_eq!(hist_cdf(&h, -1.0, scale, max), 0.0);
        assert_eq!(hist_cdf(&h, max, scale, max), 1.0);
        for q in [0.31, 0.5, 0.9, 0.99, 0.995] {
            let t = hist_quantile(&h, q, scale, max).unwrap();
            let back = hist_cdf(&h, t, scale, max);
            assert!((back - q).abs() < 1e-12, "{q}: {t} -> {back}");
        }
    }

    #[test]
    fn clopper_pearson_matches_tables() {
        // Exact binomial limits: 0/10 and 5/10 from tables (e.g. Collett,
        // "Modelling Binary Data", 2003); for 1/100 the lower limit is
        // 1 − 0.975^(1/100) and the upper one solves
        // P(Bin(100, p) ≤ 1) = 0.025.
        let (lo, hi) = clopper_pearson(0.0, 10.0);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.308_497).abs() < 1e-6, "{hi}");
        let (lo, hi) = clopper_pearson(5.0, 10.0);
        assert!((lo - 0.187_086).abs() < 1e-6 && (hi - 0.812_914).abs() < 1e-6);
        let (lo, hi) = clopper_pearson(1.0, 100.0);
        assert!(
            (lo - 0.000_253).abs() < 1e-6 && (hi - 0.054_459).abs() < 1e-6,
            "{lo} {hi}"
        );
        // Large counts: the normal approximation, continuous at the switch.
        let below = clopper_pearson(NORMAL_ABOVE, 10.0 * NORMAL_ABOVE);
        let above = clopper_pearson(NORMAL_ABOVE + 1e-6, 10.0 * NORMAL_ABOVE + 1e-5);
        let width = below.1 - below.0;
        assert!(
            (below.0 - above.0).abs() < 0.01 * width,
            "{below:?} {above:?}"
        );
        assert!(
            (below.1 - above.1).abs() < 0.01 * width,
            "{below:?} {above:?}"
        );
    }

    /// Sections of i.i.d. exponential samples (evenly spaced quantiles,
    /// shuffled by a stride): no clustering, so n_eff is about the number
    /// of customers and the CI about the binomial one.
    fn iid_sections(k: usize, per: usize) -> Vec<Vec<u64>> {
        let n = k * per;
        let mut h = vec![vec![0u64; HIST_BINS as usize]; k];
        for i in 0..n {
            let j = (i * 7919) % n;
            let u = (j as f64 + 0.5) / n as f64;
            h[i % k][hist_bin(-(1.0 - u).ln() as f32) as usize] += 1;
        }
        h
    }

    #[test]
    fn percentile_ci_of_unclustered_sections_is_about_binomial() {
        let sections = iid_sections(16, 20_000);
        let refs: Vec<&[u64]> = sections.iter().map(Vec::as_slice).collect();
        let mut pooled = vec![0u64; HIST_BINS as usize];
        for s in &sections {
            for (p, c) in pooled.iter_mut().zip(s) {
                *p += c;
            }
        }
        let max = 20.0;
        for q in [0.5, 0.99] {
            let est = hist_quantile(&pooled, q, 1.0, max).unwrap();
            let ci =
                wait_percentile_ci(q, est, &refs, &pooled, 1.0, max, TailModel::Unknown).unwrap();
            assert!(ci.lo < est && est < ci.hi, "{ci:?} {est}");
            // Evenly spread sections: the variance between them is below the
            // binomial one, so n_eff is capped at the 320 000 customers and
            // the interval is the exact binomial one mapped through the
            // pooled quantiles (density e^-t: Δt ≈ z √(q(1−q)/n) / (1 − q)),
            // widened by (t_15 / z)².
            let n = 320_000.0 * (Z975 / student_t_quantile(0.975, 15.0)).powi(2);
            let expect = Z975 * (q * (1.0 - q) / n).sqrt() / (1.0 - q);
            let hw = ci.half_width(est);
            assert!(
                (hw - expect).abs() < 0.1 * expect,
                "q {q}: half-width {hw} vs {expect}"
            );
        }
        // One section: no CI.
        assert_eq!(
            wait_percentile_ci(
                0.5,
                1.0,
                &refs[..1],
                &sections[0],
                1.0,
                max,
                TailModel::Unknown
            ),
            None
        );
    }

    #[test]
    fn percentile_ci_widens_with_clustered_sections() {
        // Half the sections hold all of the tail: the exceedance fraction
        // varies between sections far beyond binomial noise.
        let mut sections = iid_sections(16, 20_000);
        for (i, s) in sections.iter_mut().enumerate() {
            let tail = hist_bin(6.0) as usize;
            if i % 2 == 0 {
                s[tail] += 400;
            } else {
                s[1 + hist_bin(0.01) as usize] += 400;
            }
        }
        let refs: Vec<&[u64]> = sections.iter().map(Vec::as_slice).collect();
        let mut pooled = vec![0u64; HIST_BINS as usize];
        for s in &sections {
            for (p, c) in pooled.iter_mut().zip(s) {
                *p += c;
            }
        }
        let iid = iid_sections(16, 20_000);
        let iid_refs: Vec<&[u64]> = iid.iter().map(Vec::as_slice).collect();
        let mut iid_pooled = vec![0u64; HIST_BINS as usize];
        for s in &iid {
            for (p, c) in iid_pooled.iter_mut().zip(s) {
                *p += c;
            }
        }
        let q = 0.99;
        let est = hist_quantile(&pooled, q, 1.0, 20.0).unwrap();
        let wide =
            wait_percentile_ci(q, est, &refs, &pooled, 1.0, 20.0, TailModel::Unknown).unwrap();
        let est0 = hist_quantile(&iid_pooled, q, 1.0, 20.0).unwrap();
        let narrow = wait_percentile_ci(
            q,
            est0,
            &iid_refs,
            &iid_pooled,
            1.0,
            20.0,
            TailModel::Unknown,
        )
        .unwrap();
        assert!(
            wide.half_width(est) > 3.0 * narrow.half_width(est0),
            "{wide:?} vs {narrow:?}"
        );
    }

    #[test]
    fn rescaled_moves_the_range_to_the_largest_wait() {
        let top = 2f64.powi(HIST_MIN_EXP + HIST_OCTAVES as i32);
        let over = RangeUse {
            overflow: true,
            underflow: false,
        };
        let under = RangeUse {
            overflow: false,
            underflow: true,
        };
        // A wait of 3e5 service means at scale 0.5: 2^k × 0.5 with the wait
        // RESCALE_HEADROOM_OCTAVES below the top.
        let s = rescaled(over, 3e5, 0.5, 0.5).unwrap();
        let room = 2f64.powi(RESCALE_HEADROOM_OCTAVES);
        assert!(3e5 / s < top / room && 3e5 / s >= top / room / 2.0, "{s}");
        assert_eq!((s / 0.5).log2().fract(), 0.0);
        // Already wide enough, or nothing to fix: no rescale.
        assert_eq!(rescaled(over, 3e5, s, 0.5), None);
        assert_eq!(rescaled(RangeUse::default(), 3e5, 0.5, 0.5), None);
        // An underflow with small waits: a lower range.
        let s = rescaled(under, 0.01, 1.0, 1.0).unwrap();
        assert!(s < 1.0 && 0.01 / s < top);
        // An underflow whose largest wait already fills the range: none.
        assert_eq!(rescaled(under, 1e3, 1.0, 1.0), None);
    }

    #[test]
    fn binomial_upper_bounds_match_clopper_pearson_tables() {
        // x = 0: 1 − 0.05^(1/n); n = 100 gives 0.0295 (≈ 3/n).
        let u = binomial_upper_bound(0, 100, 0.95).unwrap();
        assert!((u - 0.029_513).abs() < 1e-6, "{u}");
        let u = binomial_upper_bound(0, 100_000_000_000, 0.95).unwrap();
        assert!((u * 1e11 - 2.995_732).abs() < 1e-5, "{u}");
        // x = 1, n = 10: the one-sided 95% bound is 0.3942 (1 − P(Bin ≤ 1)
        // = 0.95 there); x = 5, n = 10: 0.7775.
        for (x, n, want) in [(1, 10, 0.394_163), (5, 10, 0.777_559)] {
            let u = binomial_upper_bound(x, n, 0.95).unwrap();
            assert!((u - want).abs() < 1e-5, "{x}/{n}: {u}");
        }
        assert_eq!(binomial_upper_bound(3, 3, 0.95), Some(1.0));
        assert_eq!(binomial_upper_bound(0, 0, 0.95), None);
    }

    #[test]
    fn ci_of_constant_is_zero_and_of_one_value_is_none() {
        assert_eq!(ci95_half_width(&[2.0, 2.0, 2.0]), Some(0.0));
        assert_eq!(ci95_half_width(&[2.0]), None);
        // n = 2: t(0.975, 1) * s / sqrt(2), s = sqrt(2) for {0, 2}.
        let h = ci95_half_width(&[0.0, 2.0]).unwrap();
        assert!((h - 12.706_205).abs() < 1e-5);
    }
}
