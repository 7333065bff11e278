//! Loop iterations per customer of the WGSL kernels, counted from the
//! kernels' structure (with margins).
//!
//! The GPU engine sizes its passes from these (software adapters cap the
//! loop iterations of one invocation); they live in the contract, beside the
//! records they read, because they describe the kernels' shared algorithms,
//! not one engine.

use super::ERLANG_DIRECT_MAX;
use super::{
    dispatch, rebase_period, DispatchPolicy, Kernel, Law, LawKind, PointParams, Reneging, Thinning,
    TILE_REPS,
};

/// Loop iterations one draw from `law` costs at most in the kernels (the
/// gamma sampler's expected count, with margin, for rejection loops).
pub fn law_loop_cost(law: &Law) -> u64 {
    match law.kind() {
        LawKind::Erlang if law.n <= ERLANG_DIRECT_MAX => u64::from(law.n) + 1,
        LawKind::Erlang | LawKind::Gamma => 8,
        // A loop over phase sojourns (two words and a compare each): three
        // times the expected count, with margin.
        LawKind::Mmpp => (3.0 * law.mmpp_steps_per_draw()).ceil() as u64 + 2,
        LawKind::Exp
        | LawKind::Det
        | LawKind::HyperExp
        | LawKind::LogNormal
        | LawKind::Weibull
        | LawKind::Pareto
        | LawKind::Uniform
        // Both modes of an empirical law are one word and one straight
        // lookup (select, no branch), as the interpolation was alone; a
        // trace's gap is one lookup.
        | LawKind::Empirical
        | LawKind::Trace => 2,
    }
}

/// Loop iterations of a sum of `m` draws (`draw_sum` in sampling.wgsl).
pub fn sum_loop_cost(law: &Law, m: u64) -> u64 {
    match law.kind() {
        LawKind::Exp | LawKind::Erlang
            if m * u64::from(law.n.max(1)) <= u64::from(ERLANG_DIRECT_MAX) =>
        {
            m * u64::from(law.n.max(1)) + 1
        }
        LawKind::Exp | LawKind::Erlang | LawKind::Gamma => 8,
        LawKind::Det => 1,
        LawKind::HyperExp
        | LawKind::LogNormal
        | LawKind::Weibull
        | LawKind::Pareto
        | LawKind::Uniform
        | LawKind::Empirical
        | LawKind::Mmpp
        | LawKind::Trace => m * law_loop_cost(law) + 1,
    }
}

/// Loop iterations per customer of a point, with margin.
pub fn loop_cost_per_customer(p: &PointParams) -> u64 {
    let arrival = match p.effective_thinning() {
        Thinning::Random if p.arrival.kind() != LawKind::Exp => {
            // A geometric number of draws, mean route_n: allow 3x the mean
            // over a pass (its sum over many customers is concentrated).
            3 * sum_loop_cost(&p.arrival, u64::from(p.route_n))
        }
        Thinning::EveryNth => sum_loop_cost(&p.arrival, u64::from(p.route_n)),
        Thinning::Random | Thinning::None => law_loop_cost(&p.arrival),
    };
    let queue = match p.kernel() {
        Kernel::KieferWolfowitz => kiefer_wolfowitz_sift_cost(p),
        Kernel::Dispatch => dispatch_loops_per_customer(p),
        Kernel::Lindley => 0,
    };
    // Measured on lavapipe: about 17 iterations per customer of M/M/1 (naga
    // and Mesa lower branches and switches into single-trip loops), 28 of
    // M/M/51; the base cost below keeps every kernel within the budget.
    // A patience draw goes through the run-time `draw`, an if-chain over
    // every law (a single-trip loop each under Mesa): its law's cost and
    // one per law.
    let patience = match p.reneging() {
        Reneging::None => 0,
        Reneging::Timeout | Reneging::Abandon => {
            law_loop_cost(&p.patience) + LawKind::ALL.len() as u64
        }
    };
    16 + arrival + law_loop_cost(&p.service) + queue + patience
}

/// Loop iterations per customer of a central queue run by a whole
/// workgroup (`run_cooperative` in kiefer_wolfowitz.wgsl): the sift's
/// levels give way to the winning lane's rescan of its
/// ⌈c / [`TILE_REPS`]⌉ servers and the amortized rebase of the same.
pub fn cooperative_loop_cost_per_customer(p: &PointParams) -> u64 {
    let rows = u64::from(p.servers.max(1).div_ceil(TILE_REPS));
    loop_cost_per_customer(p) - kiefer_wolfowitz_sift_cost(p) + rows + 3
}

/// The Kiefer–Wolfowitz kernel's own loop iterations per customer: the
/// sift (floor(log2 c) levels, with a margin) and the amortized rebase
/// loop; a capacity adds the ring's read and write and its amortized
/// rebase.
fn kiefer_wolfowitz_sift_cost(p: &PointParams) -> u64 {
    2 * u64::from(32 - p.servers.max(1).leading_zeros()) + 3 + 3 * u64::from(p.limited())
}

/// Loop iterations per customer of the dispatch kernel, with margin: the
/// departures it pops (about one per arrival; three allowed, the worst of a
/// SIMD group's lanes), each a sift-down and a sift-up over the heap's depth,
/// the arrival's push, the `pod` sample, `lwl`'s scan, and the amortized
/// rebase.
pub fn dispatch_loops_per_customer(p: &PointParams) -> u64 {
    let r = u64::from(p.servers.max(1));
    let period = u64::from(rebase_period(p.servers));
    let policy = p.policy();
    // A fleet's class lookup (a short scan of at most four ends) and its
    // per-class sum.
    let fleet = if p.has_fleet() { 6 } else { 0 };
    match policy {
        // A scan of every server's free-at time.
        DispatchPolicy::Lwl | DispatchPolicy::FirstFree => {
            return r + r.div_ceil(period) + 2 + fleet
        }
        // One or two words, the amortized rebase.
        DispatchPolicy::Random | DispatchPolicy::Weighted => return r.div_ceil(period) + 4 + fleet,
        _ => {}
    }
    // Requests in the system: at most the capacity, and far fewer at any
    // load that is not about to overflow (at a capacity grown past the
    // first, about the capacity); a pass that runs past the driver's limit
    // anyway is caught (the kernel flags it) rather than wrong.
    let first = u64::from(dispatch::capacity(p.servers));
    let h = u64::from(p.dispatch_capacity());
    let in_system = if h > first { h } else { h.min(4 * r + 512) };
    let depth = 64 - in_system.leading_zeros() as u64;
    let d = u64::from(p.effective_choices());
    let pod = if policy == DispatchPolicy::Pod {
        d * d + 2 * d
    } else {
        0
    };
    let routers = if policy == DispatchPolicy::Central {
        u64::from(p.routers.max(1))
    } else {
        0
    };
    // The epoch moves every `period` arrivals up to the rebase threshold,
    // and every `in_system − threshold` beyond (`dispatch::rebase_due`): per
    // arrival at most what a system just past the threshold costs.
    let threshold = u64::from(dispatch::rebase_threshold(p.servers));
    let rebase = (r + in_system.min(threshold + period) + routers).div_ceil(period);
    // A limit sums the chosen server's count over the routers; abandoning
    // requests leave a router's queue at its departures, each request once
    // (amortized: one more trip per arrival).
    let limit = if p.limited() {
        u64::from(p.routers.max(1)) + 1
    } else {
        0
    };
    let patience = if p.reneging() == Reneging::None { 0 } else { 2 };
    3 * (2 * depth + 2) + depth + pod + rebase + limit + patience + 2 + fleet
}
