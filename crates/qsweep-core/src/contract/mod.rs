//! The engine contract: what goes into an engine and what comes back.
//!
//! Both engines (CPU in `engine::cpu`, GPU in `qsweep_gpu` + `shaders/`) take the
//! same flat, `bytemuck::Pod` parameter records and a list of [`Tile`]s (ranges
//! of replications of one grid point), and return the same per-replication
//! [`RepResult`]s and per-(point, batch) histograms. Everything statistical
//! happens afterwards, once, in `stats`. The WGSL declarations of these structs
//! live in `shaders/common.wgsl` and must stay field-for-field identical.

use bytemuck::{Pod, Zeroable};

mod codes;
pub mod costs;
pub mod wgsl;

pub use codes::{DispatchPolicy, Kernel, LawKind, Reneging, Thinning, UnknownCode};

/// A sampling law, fully resolved to absolute parameters.
///
/// A draw is `clamp(scale * base(u), lo, hi)`; `base` depends on `kind` (a
/// [`LawKind`] code):
/// - EXP: mean `p[0]`
/// - DET: value `p[0]`
/// - ERLANG: `n` phases, each exponential with mean `p[0]`
/// - GAMMA: shape `p[0]`, scale `p[1]`
/// - HYPEREXP: with probability `p[0]` exponential of mean `p[1]`, else mean
///   `p[2]` (`dist` puts the rare branch first, so that `p[0]` is small and exact)
/// - LOGNORMAL: `exp(p[0] + p[1] * Z)`
/// - WEIBULL: `p[0] * (-ln U)^p[1]` (`p[1]` = 1 / shape)
/// - PARETO: bounded Pareto on `[L, H]`: `alpha = p[0]`, `L = p[1]`,
///   `p[2] = (L/H)^alpha` and `p[3] = 1 − (L/H)^alpha`, both from f64
/// - UNIFORM: `p[0] + p[1] * U`
/// - EMPIRICAL: the `n` sorted values at `offset` in the shared table,
///   resampled (`p[0] = 0`: each with probability `1/n`) or, `p[0] = 1`
///   (`smooth=linear`), their piecewise-linear inverse CDF
/// - MMPP (arrivals only; a two-phase Markov-modulated Poisson process, see
///   `Sampler::mmpp` in `src/sampling.rs`): phase `i` (0 or 1) lasts an
///   exponential time of mean `p[i]` = 1/(r_i + s_i) and ends with an
///   arrival with probability `p[2 + i]` = r_i/(r_i + s_i), else with a
///   switch to the other phase; `n` is the probability of starting in
///   phase 1, the stationary s_0/(s_0 + s_1), in units of 2^-32 (an exact
///   comparison with one random word). The phase is the replication's
///   state between draws, on both engines.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Law {
    pub kind: u32,
    pub n: u32,
    pub offset: u32,
    pub _pad0: u32,
    pub p: [f32; 4],
    pub scale: f32,
    pub lo: f32,
    pub hi: f32,
    pub _pad1: f32,
}

/// Sizes of [`Kernel::Dispatch`]'s per-replication state (mirrored in
/// `shaders/dispatch.wgsl`); the policies are [`DispatchPolicy`].
///
/// # Capacity and growth
/// A replication holds at most [`PointParams::capacity`] requests (its
/// departure heap and each router queue have that many slots); one that
/// would hold more stops with [`rep_status::QUEUE_OVERFLOW`](super::rep_status::QUEUE_OVERFLOW).
/// The capacity changes nothing else: every decision, random word and f32
/// operation of a replication is the same at any capacity it fits in, so
/// the run loop re-runs an overflowed replication at a larger capacity
/// ([`grow`]) and gets the sample path of an unbounded queue, up to
/// [`MAX_STATE_BYTES`] of state per replication.
pub mod dispatch {
    use super::{DispatchPolicy, PointParams};

    /// Largest `choices` the kernels accept (the GPU keeps the sample in a
    /// private array of this size).
    pub const MAX_CHOICES: u32 = 32;
    /// Largest `routers`.
    pub const MAX_ROUTERS: u32 = 1024;
    /// Requests a replication may hold beyond `2 R` (in servers and router
    /// queues together) at its first capacity. 512: jsq with R = 100 then
    /// holds 10 KB of state per replication (2048 made it 28.6 KB, three
    /// quarters of it slack), so a binding holds nearly three times the
    /// replications; a replication that outgrows it runs again at twice the
    /// capacity with the same numbers (the module notes), which only the
    /// heaviest queues need.
    pub const CAPACITY_SLACK: u32 = 512;

    /// The capacity a replication of a system of `servers` starts with
    /// (and the one a [`PointParams`] with `capacity` 0 means).
    pub fn capacity(servers: u32) -> u32 {
        2 * servers.max(1) + CAPACITY_SLACK
    }

    /// Requests held beyond `2 R` above which the epoch moves less often
    /// ([`rebase_due`]). Part of the sample path (a move shifts every stored
    /// time by the same f32), so it is fixed here, apart from the capacity:
    /// 2048, the first capacity's slack when the rule was made, so that no
    /// stream changed when the slack shrank.
    pub const REBASE_SLACK: u32 = 2048;

    /// Requests held above which the epoch moves less often: `2 R +`
    /// [`REBASE_SLACK`] ([`rebase_due`]).
    pub fn rebase_threshold(servers: u32) -> u32 {
        2 * servers.max(1) + REBASE_SLACK
    }

    /// Memory limit of one replication's state: growth stops where the
    /// state at the next capacity would exceed it (or the state at the first
    /// capacity, if that is larger). 16 MiB, so that a GPU tile of
    /// [`TILE_REPS`](super::TILE_REPS) replications fits a 1 GiB binding
    /// (`qsweep_gpu`'s `plan` binds up to 4 GiB where the adapter allows, but
    /// a tile must fit every adapter that runs the kernel at all).
    pub const MAX_STATE_BYTES: u64 = 16 << 20;

    /// Words of the GPU state's header: heap size, requests dispatched,
    /// flags, most requests held, requests waiting at routers (see
    /// `shaders/dispatch.wgsl`).
    pub const HEADER_WORDS: u32 = 5;

    /// Whether the epoch moves at this arrival: `since` arrivals after the
    /// last move, with `in_system` requests held (at servers and routers,
    /// after the departures up to now). Every `period` arrivals (the
    /// [`rebase_period`](super::rebase_period)) while the system holds at
    /// most its first capacity, as always; beyond it, every `in_system −
    /// capacity(R)` arrivals once that is longer, so a move, which shifts
    /// every stored time (O(`in_system`)), stays O(1) per arrival however
    /// far the queue grows. It reads `2 R +` [`REBASE_SLACK`], never the
    /// capacity, so the sample path does not depend on the capacity.
    #[inline(always)]
    pub fn rebase_due(since: u32, period: u32, in_system: u32, servers: u32) -> bool {
        since >= period.max(in_system.saturating_sub(rebase_threshold(servers)))
    }

    /// 32-bit words of GPU state per replication at capacity `h`, laid out
    /// as in `shaders/dispatch.wgsl`: header, `free[R]`, heap times and tags
    /// (`H` each), per router its counts (`R`) and, unless `pod`, its
    /// permutation, inverse permutation (`R` each) and block starts
    /// (`H + 2`), then for `central` per router a queue of `H` (arrival time,
    /// service, interarrival[, patience]) slots and its head and length. `lwl` needs
    /// the header and `free` only. All-zero words are the empty system.
    pub fn state_words_at(p: &PointParams, h: u32) -> u64 {
        let r = u64::from(p.servers.max(1));
        let header = u64::from(HEADER_WORDS);
        let policy = p.policy();
        let classes = if p.has_fleet() { FLEET_WORDS } else { 0 };
        if policy.free_times_only() {
            return header + r + classes;
        }
        let h = u64::from(h);
        let k = u64::from(p.routers.max(1));
        let per_router = if policy == DispatchPolicy::Pod {
            r
        } else {
            3 * r + h + 2
        };
        let queues = if policy == DispatchPolicy::Central {
            k * (queue_slot_words(p) * h + 2)
        } else {
            0
        };
        header + r + 2 * h + k * per_router + queues + classes
    }

    /// Words of a fleet's per-class sums at the end of the state: a Kahan
    /// sum (sum, carry) and a count per class (`o_class` in the kernel).
    pub const FLEET_WORDS: u64 = 3 * super::MAX_FLEET_CLASSES as u64;

    /// Words of a router-queue slot: arrival time, service, interarrival,
    /// and with patience the request's patience (`d_qw` in the kernel).
    pub fn queue_slot_words(p: &PointParams) -> u64 {
        if p.reneging() == super::Reneging::None {
            3
        } else {
            4
        }
    }

    /// Words of state per replication at the point's capacity.
    pub fn state_words(p: &PointParams) -> u64 {
        state_words_at(p, p.dispatch_capacity())
    }

    /// Whether replications of `p` can overflow at all (`lwl` keeps no
    /// per-request state).
    pub fn can_overflow(p: &PointParams) -> bool {
        p.kernel() == super::Kernel::Dispatch && !p.policy().free_times_only()
    }

    /// The memory limit of a replication's state, in bytes:
    /// [`MAX_STATE_BYTES`], or the state at the first capacity if that is
    /// already larger.
    pub fn state_limit_bytes(p: &PointParams) -> u64 {
        MAX_STATE_BYTES.max(4 * state_words_at(p, capacity(p.servers)))
    }

    /// The largest capacity within [`state_limit_bytes`].
    pub fn max_capacity(p: &PointParams) -> u32 {
        let first = capacity(p.servers);
        let limit = state_limit_bytes(p) / 4;
        // state_words_at is affine in h: a + b h.
        let a = state_words_at(p, 0);
        let b = state_words_at(p, 1) - a;
        let h = (limit.saturating_sub(a) / b.max(1)).min(u64::from(u32::MAX / 4));
        (h as u32).max(first)
    }

    /// The capacity to re-run an overflowed replication at: twice `h`,
    /// within [`max_capacity`]; None when `h` is already the limit.
    pub fn grow(p: &PointParams, h: u32) -> Option<u32> {
        let next = h.saturating_mul(2).min(max_capacity(p));
        (next > h).then_some(next)
    }
}

/// Everything an engine needs to simulate one grid point.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PointParams {
    /// Interarrival law of the whole system's arrival stream.
    pub arrival: Law,
    pub service: Law,
    /// A [`Kernel`] code.
    pub kernel: u32,
    /// A [`Thinning`] code.
    pub thinning: u32,
    /// Number of servers in the simulated queue (1 for Lindley).
    pub servers: u32,
    /// Number of queues the stream is split over (R) for `thinning`; under
    /// [`Kernel::Dispatch`], the [`DispatchPolicy`] code.
    pub route_n: u32,
    /// Customers recorded per replication, after `warmup` discarded ones.
    pub customers: u32,
    pub warmup: u32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    /// Index of the point in the full grid: part of every stream's key.
    pub point_index: u32,
    /// 1 / histogram scale: times are binned as `t * inv_hist_scale`.
    pub inv_hist_scale: f32,
    /// [`Kernel::Dispatch`] with [`DispatchPolicy::Pod`]: servers sampled per
    /// arrival (clamped to 1..=min(`servers`, [`dispatch::MAX_CHOICES`])).
    /// Unused (0) otherwise.
    pub choices: u32,
    /// [`Kernel::Dispatch`]: routers the arrivals are split over at random,
    /// each knowing only its own requests (0 counts as 1). Unused otherwise.
    pub routers: u32,
    /// Random thinning: `ln(1 − 1/route_n)`, the log-probability that an
    /// arrival of the stream skips this queue, computed in f64 on the host
    /// ([`PointParams::with_ln_keep`]) and rounded once: rounding `1 − 1/R` to
    /// f32 first, as the kernels used to, errs by 1.4e-3 at R = 1e5. 0 when
    /// the point is not thinned at random.
    pub ln_keep: f32,
    /// [`Kernel::Dispatch`]: requests a replication may hold at once (see
    /// [`dispatch`]); 0 means [`dispatch::capacity`]`(servers)`, the first
    /// capacity. Unused otherwise.
    pub capacity: u32,
    /// A [`Reneging`] code: what [`PointParams::patience`] does (none:
    /// patience is never drawn, the plain queue).
    pub reneging: u32,
    /// The `capacity` axis, K: at most this many requests in the simulated
    /// queue (waiting and in service); an arrival that finds K is refused
    /// (blocked: counted in [`RepResult::lost`], never served nor
    /// recorded). 0: no limit. Only [`Kernel::KieferWolfowitz`] (which
    /// also runs a limited one-server queue) reads it; at least `servers`,
    /// at most [`MAX_CAPACITY`].
    pub system_limit: u32,
    /// `--slo`: the wait thresholds t whose exceedances P(wait > t) the
    /// recorder counts, exactly, per replication ([`RepResult::exceed`]);
    /// up to [`MAX_SLO_THRESHOLDS`], in the spec's time unit, compared in
    /// f32. The slots past the spec's thresholds are counted too (against
    /// whatever they hold) and never read.
    pub slo: [f32; 4],
    /// Each request's patience (the `patience` axis), drawn after its
    /// service time from the same stream, when `reneging` is not
    /// [`Reneging::None`] (unused otherwise).
    pub patience: Law,
    /// A mixed fleet (`crate::fleet`), [`Kernel::Dispatch`] only: server
    /// `i` is of class `c` when `fleet_end[c − 1] <= i < fleet_end[c]`
    /// (classes fastest first; the unused ends are `servers`).
    pub fleet_end: [u32; 4],
    /// Each class's service-time factor `1 / speed`, computed in f64 and
    /// rounded once: a request of size S takes `S · fleet_time[c]` (a
    /// product, which every backend rounds correctly; WGSL's division may
    /// err by 2.5 ulp).
    pub fleet_time: [f32; 4],
    /// `weighted`: the class of a request is the first `c` whose
    /// `fleet_pick[c]` exceeds its word (the cumulative speed shares ×
    /// 2^32, the last `u32::MAX`).
    pub fleet_pick: [u32; 4],
    /// Classes in the fleet; 0: identical servers of speed 1 (nothing of
    /// the fleet is read, and every kernel runs as it does without one).
    pub fleet_classes: u32,
    /// Histogram sections each replication's recorded requests are cut
    /// into (0 or 1: one, the replication's own). A tile of such a point
    /// owns [`PointParams::hist_span`] consecutive slots from its
    /// `hist_slot`, and request `j` (counted from the first recorded, the
    /// dropped ones included) goes to slot `hist_slot + j / section_length`:
    /// a run of few long replications still has enough sections for its
    /// percentile CIs (`engine::schedule::sections_per_rep`). Twin of
    /// `rec_request`'s slot choice in `shaders/common.wgsl`.
    pub rep_sections: u32,
    pub _pad: [u32; 2],
}

/// Speed classes one fleet may have ([`PointParams::fleet_end`]).
pub const MAX_FLEET_CLASSES: usize = 4;

/// The largest capacity K a point may have: the Kiefer–Wolfowitz kernels
/// keep K slots per replication (free-at times and a ring of start times)
/// and loop over them at each rebase, so K is held to the GPU's largest
/// queue (`qsweep_gpu::MAX_GPU_SERVERS`'s value)
/// on both engines, which keeps their numbers the same.
pub const MAX_CAPACITY: u32 = 65_535;

/// Wait thresholds one run can count (`PointParams::slo`): the recorder
/// compares each recorded wait with all of them in one 4-lane comparison.
pub const MAX_SLO_THRESHOLDS: usize = 4;

impl Law {
    /// A law of `kind` with parameters `p`, neither scaled nor clamped
    /// (scale 1, range [0, f32::MAX]): the laws benchmarks and tests write
    /// by hand (specs go through `dist`).
    pub fn unclamped(kind: LawKind, p: [f32; 4]) -> Self {
        Self {
            kind: kind.code(),
            p,
            scale: 1.0,
            lo: 0.0,
            hi: f32::MAX,
            ..Self::default()
        }
    }
}

impl Law {
    /// MMPP: the expected phase sojourns per draw, 1 + the expected phase
    /// switches between two arrivals: with r_i = p[2+i]/p[i] and s_i =
    /// (1 − p[2+i])/p[i], (λ + π·s)/λ where π is the stationary phase law
    /// and λ = π·r. What a draw costs, in loop iterations.
    pub fn mmpp_steps_per_draw(&self) -> f64 {
        let (m, a) = (
            [f64::from(self.p[0]), f64::from(self.p[1])],
            [f64::from(self.p[2]), f64::from(self.p[3])],
        );
        let r = [a[0] / m[0], a[1] / m[1]];
        let s = [(1.0 - a[0]) / m[0], (1.0 - a[1]) / m[1]];
        let pi = [s[1] / (s[0] + s[1]), s[0] / (s[0] + s[1])];
        let lambda = pi[0] * r[0] + pi[1] * r[1];
        1.0 + (pi[0] * s[0] + pi[1] * s[1]) / lambda
    }

    /// The law's family. Records are built from [`LawKind`]s, so an unknown
    /// code is a bug, never input.
    #[inline(always)]
    pub fn kind(&self) -> LawKind {
        LawKind::from_code(self.kind).expect("Law::kind holds a LawKind code")
    }
}

impl PointParams {
    pub fn seed(&self) -> u64 {
        u64::from(self.seed_lo) | (u64::from(self.seed_hi) << 32)
    }

    /// How each replication is cut into segments: [`Segments::for_total`]
    /// for the one-server kernel, a single segment for the others.
    pub fn segments(&self) -> Segments {
        let total = self.warmup + self.customers;
        match self.kernel() {
            // Abandonment makes the recursion V' = max(V + S·1[V <= θ] − A, 0),
            // no longer a composition of maps V -> max(V + a, b): its
            // replications run as one segment.
            Kernel::Lindley if self.reneging() == Reneging::Abandon => Segments {
                count: 1,
                length: total.max(1),
            },
            // A non-renewal arrival stream (MMPP) carries its phase from one
            // interarrival to the next: a segment's stream could not start
            // in the phase the previous segment left, so its replications
            // run as one segment too.
            Kernel::Lindley if self.arrival.kind().is_stateful() => Segments {
                count: 1,
                length: total.max(1),
            },
            Kernel::Lindley => Segments::for_total(total),
            Kernel::KieferWolfowitz | Kernel::Dispatch => Segments {
                count: 1,
                length: total.max(1),
            },
        }
    }

    /// Whether the point's queue refuses arrivals beyond
    /// [`PointParams::system_limit`].
    #[inline(always)]
    pub fn limited(&self) -> bool {
        self.system_limit > 0
    }

    /// Slots of a Kiefer–Wolfowitz replication's row in the heap buffer:
    /// its `servers` free-at times, then, under a capacity K, a ring of the
    /// start times of the last K − `servers` admitted requests (see
    /// `shaders/kiefer_wolfowitz.wgsl`).
    #[inline(always)]
    pub fn heap_slots(&self) -> u32 {
        self.servers.max(1).max(self.system_limit)
    }

    /// Whether a request that finds the queue `late` (its wait beyond its
    /// patience under abandonment, or the queue full) is dropped: counted
    /// in [`RepResult::lost`], neither served nor recorded. Twin of
    /// `DROPS_LATE` in `shaders/common.wgsl`.
    #[inline(always)]
    pub fn drops_late(&self) -> bool {
        self.limited() || self.reneging() == Reneging::Abandon
    }

    /// What the point's patience does.
    #[inline(always)]
    pub fn reneging(&self) -> Reneging {
        Reneging::from_code(self.reneging).expect("PointParams::reneging holds a Reneging code")
    }

    /// The recursion that simulates this point.
    #[inline(always)]
    pub fn kernel(&self) -> Kernel {
        Kernel::from_code(self.kernel).expect("PointParams::kernel holds a Kernel code")
    }

    /// The thinning the point's queue actually sees: none when `route_n` is 1.
    #[inline(always)]
    pub fn effective_thinning(&self) -> Thinning {
        if self.route_n > 1 {
            Thinning::from_code(self.thinning).expect("PointParams::thinning holds a Thinning code")
        } else {
            Thinning::None
        }
    }

    /// The dispatch policy of a [`Kernel::Dispatch`] point.
    #[inline(always)]
    pub fn policy(&self) -> DispatchPolicy {
        debug_assert_eq!(self.kernel(), Kernel::Dispatch);
        DispatchPolicy::from_code(self.route_n).expect("route_n holds a DispatchPolicy code")
    }

    /// What [`PointParams::ln_keep`] holds: `ln(1 − 1/route_n)` in f64
    /// (`ln_1p(−1/R)`, exact to an f64 ulp) under random thinning, else 0.
    pub fn host_ln_keep(&self) -> f32 {
        if self.effective_thinning() == Thinning::Random {
            (-1.0 / f64::from(self.route_n)).ln_1p() as f32
        } else {
            0.0
        }
    }

    /// This point with [`PointParams::ln_keep`] filled in: call it after
    /// setting the thinning and `route_n`.
    pub fn with_ln_keep(self) -> Self {
        Self {
            ln_keep: self.host_ln_keep(),
            ..self
        }
    }

    /// The capacity the dispatch kernels use: `capacity`, or the first
    /// capacity when it is 0.
    #[inline(always)]
    pub fn dispatch_capacity(&self) -> u32 {
        if self.capacity == 0 {
            dispatch::capacity(self.servers)
        } else {
            self.capacity
        }
    }

    /// Histogram slots one tile of this point writes: its sections per
    /// replication ([`PointParams::rep_sections`], at least 1).
    #[inline(always)]
    pub fn hist_span(&self) -> u32 {
        self.rep_sections.max(1)
    }

    /// Recorded requests per histogram section of a replication (the last
    /// holds the rest); `u32::MAX` for one section, which no count reaches.
    #[inline(always)]
    pub fn section_length(&self) -> u32 {
        if self.hist_span() == 1 {
            u32::MAX
        } else {
            self.customers.div_ceil(self.hist_span()).max(1)
        }
    }

    /// Whether the point's servers have different speeds (a fleet).
    #[inline(always)]
    pub fn has_fleet(&self) -> bool {
        self.fleet_classes > 0
    }

    /// The class of server `srv` of a fleet (0 without one). Twin of
    /// `fleet_class` in `shaders/dispatch.wgsl`.
    #[inline(always)]
    pub fn fleet_class(&self, srv: u32) -> usize {
        let mut c = 0;
        while c + 1 < self.fleet_classes as usize && srv >= self.fleet_end[c] {
            c += 1;
        }
        c
    }

    /// `choices` as the dispatch kernels use it: 1 ..= min(R, MAX_CHOICES).
    pub fn effective_choices(&self) -> u32 {
        self.choices
            .clamp(1, dispatch::MAX_CHOICES)
            .min(self.servers.max(1))
    }
}

/// Iteration bound of the gamma rejection loop (acceptance is above 95%, so
/// hitting it means broken parameters, reported through `RepResult::status`).
pub const GAMMA_MAX_TRIES: u32 = 64;
/// Erlang sums with more phases than this use the gamma sampler.
pub const ERLANG_DIRECT_MAX: u32 = 16;
/// Cap on the number of stream arrivals summed for one thinned arrival.
pub const GEOMETRIC_CAP: u32 = 1 << 24;
/// Iteration bound of the MMPP sampler (phase sojourns per interarrival): a
/// replication that hits it is flagged `SAMPLER_BOUND`, as the gamma's is.
/// `dist` refuses laws whose chance of an arrival per cycle through both
/// phases is below [`MMPP_MIN_CYCLE_ARRIVAL`], so the bound is hit with
/// probability at most (1 − 2^-10)^32768 = e^-32 per draw.
pub const MMPP_MAX_STEPS: u32 = 1 << 16;
/// Smallest probability that a cycle through both MMPP phases brings an
/// arrival (see [`MMPP_MAX_STEPS`]).
pub const MMPP_MIN_CYCLE_ARRIVAL: f64 = 1.0 / 1024.0;

/// Customers per block of a replication's running sums: each block is summed
/// in f32 from zero and added to a Kahan-compensated total, so long runs keep
/// their precision on both engines.
pub const SUM_BLOCK: u32 = 256;

/// Customers (warm-up included) in a segment of a one-server replication,
/// at least (see [`Segments`]): enough that a segment's fixed costs (its
/// stream's set-up, the scan of the maps) stay below 1% of its work.
pub const MIN_SEGMENT_CUSTOMERS: u32 = 4096;

/// Segments of one replication, at most: a GPU workgroup holds all the
/// segments of a replication, so their maps are scanned in workgroup memory.
pub const MAX_SEGMENTS: u32 = TILE_REPS;

/// How a one-server (Lindley) replication's customers are cut into segments,
/// each drawing from its own stream (`rng::Stream::segment`), so that a GPU
/// can run one replication over many invocations.
///
/// Lindley's recursion on the workload just after an arrival,
/// V_n = max(V_{n-1} - A_n, 0) + S_n, applies the map V ↦ max(V + a, b)
/// with a = S_n − A_n and b = S_n; such maps compose into maps of the same
/// form, (a1, b1) then (a2, b2) being (a1 + a2, max(b1 + a2, b2)). So each
/// segment's map (its shift a = Σ (S − A), and b, its final workload
/// started empty) is computed on its own, and a scan over the segments gives
/// each one's starting workload exactly: the parallel-prefix Lindley
/// recursion of Greenberg, Lubachevsky and Mitrani (SIGMETRICS 1990;
/// "Algorithms for unboundedly parallel simulations", ACM TOCS 9(3), 1991). Both engines
/// start segment k + 1 from max(V_k + a_k, b_k), never from the previous
/// segment's last computed workload, so the GPU's two layouts (segments in
/// turn in one invocation, or side by side and scanned) and the CPU agree to
/// the bit.
///
/// The cutting depends on the replication's length alone (never on `reps`,
/// the adapter or how work is split), so a replication's numbers do not
/// either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segments {
    /// A power of two, 1 ..= [`MAX_SEGMENTS`].
    pub count: u32,
    /// Customers per segment; the last holds the rest (at least one).
    pub length: u32,
}

impl Segments {
    /// The most segments of at least [`MIN_SEGMENT_CUSTOMERS`] (a power of
    /// two, so they pack whole replications into a workgroup) for a
    /// replication of `total` customers, warm-up included. Twin of
    /// `lindley_segments` in `shaders/lindley.wgsl`.
    pub fn for_total(total: u32) -> Self {
        let mut count = 1u32;
        while count < MAX_SEGMENTS && total / (2 * count) >= MIN_SEGMENT_CUSTOMERS {
            count *= 2;
        }
        Self {
            count,
            length: total.div_ceil(count).max(1),
        }
    }

    /// Customers `[first, end)` of segment `k` of a replication of `total`.
    pub fn range(&self, k: u32, total: u32) -> (u32, u32) {
        let first = (k * self.length).min(total);
        (first, (first + self.length).min(total))
    }
}

/// Customers between rebases of the free-at times of a queue of `servers`
/// (Kiefer–Wolfowitz and dispatch kernels): times are relative to an epoch
/// that moves to the current arrival this often, keeping f32 precision.
pub fn rebase_period(servers: u32) -> u32 {
    servers.max(32)
}

/// Replications per tile: the GPU workgroup size.
pub const TILE_REPS: u32 = 64;

/// A contiguous range of at most [`TILE_REPS`] replications of one point, all
/// in one histogram batch. A GPU workgroup runs one tile.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Tile {
    /// Index into the dispatch's `PointParams` array.
    pub param_index: u32,
    /// Histogram slot (one per (point, batch) in the dispatch).
    pub hist_slot: u32,
    pub rep_start: u32,
    pub rep_count: u32,
}

/// What one replication reports (all over its recorded customers).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RepResult {
    pub mean_wait: f32,
    pub mean_sojourn: f32,
    /// Fraction of customers who waited (wait > 0).
    pub p_wait: f32,
    pub max_wait: f32,
    pub max_sojourn: f32,
    /// Sample mean of the service times drawn: a check on the samplers.
    pub mean_service: f32,
    /// Sample mean of the simulated queue's interarrival times.
    pub mean_interarrival: f32,
    pub customers: u32,
    /// Nonzero when the replication failed (see [`rep_status`]).
    pub status: u32,
    /// [`Kernel::Dispatch`] except `lwl`: the most requests the replication
    /// held at once (at servers and routers, warm-up included), at least
    /// its capacity when it overflowed. 0 for the other kernels.
    pub max_in_system: u32,
    /// Recorded customers whose wait exceeded each of
    /// [`PointParams::slo`]'s thresholds (`wait > t`, in f32).
    pub exceed: [u32; 4],
    /// Recorded requests whose wait exceeded their patience: timed out
    /// ([`Reneging::Timeout`], recorded all the same) or abandoned
    /// ([`Reneging::Abandon`], in none of the other fields, whose means are
    /// over the `customers − lost` served requests); or, under a capacity
    /// ([`PointParams::system_limit`]), refused (blocked, likewise in no
    /// other field). 0 without either.
    pub lost: u32,
    /// A mixed fleet: each class's mean wait over its served recorded
    /// requests (engine order, fastest first; 0 where none), from f32
    /// Kahan sums. 0 without a fleet.
    pub class_wait: [f32; 4],
    /// A mixed fleet: the served recorded requests of each class.
    pub class_served: [u32; 4],
}

pub mod rep_status {
    pub const OK: u32 = 0;
    /// A rejection sampler hit its iteration bound.
    pub const SAMPLER_BOUND: u32 = 1;
    /// [`Kernel::Dispatch`](super::Kernel::Dispatch): the requests in the
    /// system outgrew [`PointParams::capacity`](super::PointParams::capacity);
    /// the replication stopped there and its numbers are meaningless (the run
    /// loop re-runs it with more room: see [`dispatch`](super::dispatch)).
    pub const QUEUE_OVERFLOW: u32 = 2;
}

/// Histogram layout: an exact zero bin, an underflow bin, `HIST_OCTAVES`
/// octaves of `HIST_SUB` log-linear sub-bins, and an overflow bin. Binning
/// reads the f32 exponent and top mantissa bits (as HdrHistogram does), so
/// it costs a few integer operations and is identical on every backend. Each
/// sub-bin spans a factor of at most 65/64, so reporting an interpolated point
/// inside it errs by under 0.8% (< the 1% the CSV promises).
pub const HIST_SUB_BITS: u32 = 6;
pub const HIST_SUB: u32 = 1 << HIST_SUB_BITS;
/// Smallest binned octave: values below `2^HIST_MIN_EXP` × scale underflow.
pub const HIST_MIN_EXP: i32 = -14;
pub const HIST_OCTAVES: u32 = 28;
pub const HIST_ZERO_BIN: u32 = 0;
pub const HIST_UNDERFLOW_BIN: u32 = 1;
pub const HIST_FIRST_LOG_BIN: u32 = 2;
pub const HIST_OVERFLOW_BIN: u32 = HIST_FIRST_LOG_BIN + HIST_OCTAVES * HIST_SUB;
/// Bins in one histogram. A slot holds one histogram, of waits: a
/// customer's FCFS wait and its own service time are independent, so sojourn
/// percentiles are computed on the host from the wait histogram and the
/// service law (`stats::convolved_quantile`).
pub const HIST_BINS: u32 = HIST_OVERFLOW_BIN + 1;
/// u32 words per bin of a GPU batch's histograms (`hist` in
/// shaders/common.wgsl): a count's low then high word, so a bin holds a u64
/// (a large GPU fills a point's bins past 2^32 customers; `hist_flush`
/// carries into the high word). A workgroup's own tile histogram keeps one
/// u32 per bin: a pass adds at most `TILE_REPS` × its customers to it,
/// which the GPU engine keeps under 2^32.
pub const HIST_WORDS_PER_BIN: u32 = 2;

/// Bin of a scaled, nonnegative time `v` (= t / scale). Written with
/// selects, not branches, so the CPU engine bins all its lanes at once.
#[inline(always)]
pub fn hist_bin(v: f32) -> u32 {
    let bits = v.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    let octave = (exp - HIST_MIN_EXP).clamp(0, HIST_OCTAVES as i32 - 1) as u32;
    let log_bin =
        HIST_FIRST_LOG_BIN + octave * HIST_SUB + ((bits >> (23 - HIST_SUB_BITS)) & (HIST_SUB - 1));
    let bin = if exp < HIST_MIN_EXP {
        HIST_UNDERFLOW_BIN
    } else {
        log_bin
    };
    let bin = if exp >= HIST_MIN_EXP + HIST_OCTAVES as i32 {
        HIST_OVERFLOW_BIN
    } else {
        bin
    };
    // Also catches -0.0 and negative values; NaN has exponent 128: overflow.
    if v <= 0.0 {
        HIST_ZERO_BIN
    } else {
        bin
    }
}

/// Lower and upper edge (in scaled units) of a histogram bin; the zero bin is
/// `[0, 0]`, the overflow bin ends at infinity.
pub fn hist_bin_edges(bin: u32) -> (f64, f64) {
    match bin {
        HIST_ZERO_BIN => (0.0, 0.0),
        HIST_UNDERFLOW_BIN => (0.0, 2f64.powi(HIST_MIN_EXP)),
        HIST_OVERFLOW_BIN => (2f64.powi(HIST_MIN_EXP + HIST_OCTAVES as i32), f64::INFINITY),
        b => {
            let i = b - HIST_FIRST_LOG_BIN;
            let octave = 2f64.powi(HIST_MIN_EXP + (i / HIST_SUB) as i32);
            let sub = f64::from(i % HIST_SUB);
            let width = octave / f64::from(HIST_SUB);
            (octave + sub * width, octave + (sub + 1.0) * width)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_contain_their_values_within_one_percent() {
        let mut v = 2f32.powi(HIST_MIN_EXP);
        while v < 2f32.powi(HIST_MIN_EXP + HIST_OCTAVES as i32) {
            let b = hist_bin(v);
            let (lo, hi) = hist_bin_edges(b);
            assert!(
                f64::from(v) >= lo && f64::from(v) < hi,
                "{v} not in bin {b} [{lo},{hi})"
            );
            assert!(hi / lo <= 65.0 / 64.0 + 1e-12);
            v *= 1.0137;
        }
        assert_eq!(hist_bin(0.0), HIST_ZERO_BIN);
        assert_eq!(hist_bin(1e-30), HIST_UNDERFLOW_BIN);
        assert_eq!(hist_bin(1e30), HIST_OVERFLOW_BIN);
        assert_eq!(hist_bin(f32::INFINITY), HIST_OVERFLOW_BIN);
    }
}
