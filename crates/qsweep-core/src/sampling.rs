//! Drawing from a [`Law`]: the CPU twin of `shaders/sampling.wgsl`.
//!
//! Both sides consume the same random words in the same order and do the
//! same f32 arithmetic, including `ln` and `exp` ([`fast_ln`], [`fast_exp`]:
//! polynomials, not a driver's builtins). Rust rounds every operation as
//! written; the WGSL twin pins each product that feeds a sum, and each sum
//! that feeds a later sum (`mul_add`, `pinned`), so that a GPU compiler that
//! fuses multiply-adds or regroups sums rounds as this file does: same
//! branches, same bits (tests/it/contraction.rs). Keep the two files in step:
//! every function here has a WGSL namesake (the WGSL has a few more
//! helpers: `mul_add`, `pinned`, `gamma_try`, `geometric_count`), and a sum
//! added here must be pinned there.
//!
//! Samplers (all f32):
//! - exponential, Weibull, bounded Pareto, hyperexponential and the
//!   geometric thinning count by inversion of the full-range uniform
//!   ([`Lanes::uniform_full`]: one word, two with probability 2^-9), so the
//!   draws reach the law's tail down to probability 2^-40 at full f32
//!   resolution instead of stopping at 2^-24;
//! - uniform laws and smoothed empirical laws (`smooth=linear`) by
//!   inversion of a 24-bit uniform; resampled empirical laws (the default)
//!   by an exact multiply-shift of one 32-bit word ([`resample_index`]);
//! - the normal by Giles' single-precision `erfinv` ("Approximating the erfinv
//!   function", GPU Computing Gems Jade, 2011) of a full-range uniform with a
//!   random sign, plus a far-tail branch fitted for this project (see
//!   [`normal_abs`]), so a lognormal costs one word and reaches |z| = 9.3;
//! - the gamma by Marsaglia and Tsang, "A simple method for generating gamma
//!   variables", ACM TOMS 26(3), 2000, with the `U^(1/a)` boost for a < 1
//!   taken as `exp(ln(1 - V)/a)` of a full-range `V`, exact for tiny shapes;
//! - the MMPP (an arrival process, not a renewal law) by its phase
//!   sojourns, each an exponential of a full-range uniform ended by an
//!   arrival or a switch on a 24-bit uniform ([`Sampler::mmpp`]), from the
//!   phase each lane keeps between draws ([`Sampler::arrival_state`]; the
//!   WGSL twin's `arrival_start` is this file's [`Sampler::new`]);
//! - a replayed trace (`trace(file=...)`) by its gaps in file order, from a
//!   position each lane keeps between draws, starting where the
//!   replication's first word says ([`Sampler::trace`]).

use crate::contract::{rep_status, Law, LawKind, PointParams, Reneging, Thinning};
use crate::contract::{ERLANG_DIRECT_MAX, GAMMA_MAX_TRIES, GEOMETRIC_CAP, MMPP_MAX_STEPS};
use crate::rng::Lanes;

/// Natural logarithm for the CPU engine: Cephes `logf` (Moshier, "Methods
/// and Programs for Mathematical Functions", 1989), within 2 ulp on normal
/// positive inputs (the only inputs the samplers produce; zero gives −∞).
/// Inlined and branch-free, so replication loops vectorize. The WGSL twin
/// (`fast_ln` in `shaders/sampling.wgsl`) replaces the builtin `log`, whose
/// accuracy is the driver's: thinning counts and gamma acceptance branch on
/// it, so both engines must take the same branches.
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let bits = x.to_bits();
    // x = m · 2^e with m in [0.5, 1).
    let mut e = ((bits >> 23) & 0xff) as i32 - 126;
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let small = m < SQRT_HALF;
    e -= i32::from(small);
    let x = if small { m + m - 1.0 } else { m - 1.0 };
    let z = x * x;
    let mut y = 7.037_683_6e-2_f32;
    y = y * x - 1.151_461e-1;
    y = y * x + 1.167_699_9e-1;
    y = y * x - 1.242_014_1e-1;
    y = y * x + 1.424_932_3e-1;
    y = y * x - 1.666_805_8e-1;
    y = y * x + 2.000_071_5e-1;
    y = y * x - 2.499_999_4e-1;
    y = y * x + 3.333_333e-1;
    y = y * x * z;
    let ef = e as f32;
    y += -2.121_944_4e-4 * ef;
    y += -0.5 * z;
    let r = x + y;
    let r = r + 0.693_359_4 * ef;
    // Zero and subnormals (a gamma proposal can underflow) are −∞.
    if bits & 0x7f80_0000 == 0 {
        f32::NEG_INFINITY
    } else {
        r
    }
}

/// Exponential for the CPU engine: Cephes `expf` (Moshier, 1989), within
/// 2 ulp over the normal range; +∞ above ln(f32::MAX), 0 where the result
/// would be subnormal (as GPUs flush it). Branch-free and inlined, so
/// replication loops vectorize (the libm call does not); the WGSL twin
/// (`fast_exp`) replaces the builtin `exp` for the reason [`fast_ln`] gives.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    const MAX_ARG: f32 = 88.722_84;
    const MIN_ARG: f32 = -87.336_55;
    let xc = x.clamp(MIN_ARG, MAX_ARG);
    // x = n·ln 2 + r, |r| ≤ ln(2)/2, with ln 2 split in two for exactness.
    let n = (xc * std::f32::consts::LOG2_E + 0.5).floor();
    let r = xc - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let z = r * r;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5; // Cephes: 5.0000001201e-1, which is 0.5 in f32
    let y = p * z + r + 1.0;
    // 2^n built from its exponent bits: n ∈ [−126, 128] after the clamp.
    let n = n as i32;
    let scaled =
        y * f32::from_bits(((n.min(127) + 127) as u32) << 23) * if n > 127 { 2.0 } else { 1.0 };
    if x > MAX_ARG {
        f32::INFINITY
    } else if x < MIN_ARG {
        0.0
    } else {
        scaled
    }
}

/// Giles' `w = −ln(1 − x²)` at `x = 1 − u`, computed as `−ln(u (2 − u))`
/// so that it keeps full precision for tiny `u`.
#[inline(always)]
fn giles_w(u: f32) -> f32 {
    -fast_ln(u * (2.0 - u))
}

/// Where [`normal_abs`] switches to its far-tail branch: `w >= 16`, i.e.
/// `u < 1.1e-7`, beyond the range Giles fitted his single-precision tail to
/// (`u >= 2^-24`); that polynomial is off by 3e-5 at `u = 2^-28` and by 50%
/// at `u = 2^-64`.
pub const FAR_W: f32 = 16.0;

/// Giles' two single-precision branches of `sqrt(2) erfinv(1 − u)`, for
/// `w = giles_w(u) < FAR_W`: both polynomials, then a select, so lanes run
/// in lock step.
#[inline(always)]
fn normal_abs_near(u: f32, w: f32) -> f32 {
    let central = {
        let w = w - 2.5;
        let mut p = 2.810_226_4e-8_f32;
        p = 3.432_739_4e-7 + p * w;
        p = -3.523_387_7e-6 + p * w;
        p = -4.391_506_5e-6 + p * w;
        p = 2.185_808_7e-4 + p * w;
        p = -1.253_725_e-3 + p * w;
        p = -4.177_681_6e-3 + p * w;
        p = 2.466_407_3e-1 + p * w;
        1.501_409_4 + p * w
    };
    let tail = {
        let w = w.sqrt() - 3.0;
        let mut p = -2.002_142_6e-4_f32;
        p = 1.009_505_6e-4 + p * w;
        p = 1.349_343_2e-3 + p * w;
        p = -3.673_428_4e-3 + p * w;
        p = 5.739_507_7e-3 + p * w;
        p = -7.622_461_3e-3 + p * w;
        p = 9.438_870_5e-3 + p * w;
        p = 1.001_674 + p * w;
        2.832_976_8 + p * w
    };
    let p = if w < 5.0 { central } else { tail };
    std::f32::consts::SQRT_2 * p * (1.0 - u)
}

/// The far-tail branch of `sqrt(2) erfinv(1 − u)` (`w >= FAR_W`): a degree-6
/// Chebyshev fit of `erfinv(x)/x` in `sqrt(w) − 5.5` over `w` in [16, 48]
/// (`u` down to 2^-69), computed with mpmath for this project in the form of
/// Giles' tail branch; within 1.7e-7 relative in f32.
#[inline(always)]
fn normal_abs_far(u: f32, w: f32) -> f32 {
    let w = w.sqrt() - 5.5;
    let mut p = 2.681_795e-6_f32;
    p = -1.194_021_75e-5 + p * w;
    p = 3.944_894e-5 + p * w;
    p = -1.006_984_9e-4 + p * w;
    p = -3.678_513_2e-4 + p * w;
    p = 1.010_032_5 + p * w;
    p = 5.354_999 + p * w;
    std::f32::consts::SQRT_2 * p * (1.0 - u)
}

/// `|Z|` of a standard normal `Z` at two-sided tail probability `u`:
/// `P(|Z| > normal_abs(u)) = u`, i.e. `sqrt(2) erfinv(1 − u)`, for `u` in
/// (0, 1]. With the full-range uniform (`u >= 2^-65`) it reaches 9.3.
#[inline(always)]
pub fn normal_abs(u: f32) -> f32 {
    let w = giles_w(u);
    if w < FAR_W {
        normal_abs_near(u, w)
    } else {
        normal_abs_far(u, w)
    }
}

/// [`normal_abs`] in every lane: the near branches vectorised, the far
/// tail (probability 1.1e-7 a lane) patched where a lane needs it.
#[inline(always)]
pub fn normal_abs_lanes<const N: usize>(u: [f32; N]) -> [f32; N] {
    // Plain loops, not `map`/`from_fn` closures, so that all of it is
    // inlined into the replication loop (see `lanes!`).
    let mut w = [0.0f32; N];
    let mut z = [0.0f32; N];
    for l in 0..N {
        w[l] = giles_w(u[l]);
        z[l] = normal_abs_near(u[l], w[l]);
    }
    if w.iter().fold(false, |a, &x| a | (x >= FAR_W)) {
        for l in 0..N {
            let far = normal_abs_far(u[l], w[l]);
            if w[l] >= FAR_W {
                z[l] = far;
            }
        }
    }
    z
}

/// `z` with its sign flipped where bit 0 of `word` is set: the normal's
/// random sign, from the bit the full-range uniform leaves unused.
#[inline(always)]
pub fn signed(z: f32, word: u32) -> f32 {
    f32::from_bits(z.to_bits() ^ ((word & 1) << 31))
}

/// A standard normal in every lane: one full-range uniform (its tail
/// probability) and its spare bit (the sign).
#[inline(always)]
pub fn normals<const N: usize>(streams: &mut Lanes<N>) -> [f32; N] {
    let (u, last) = streams.uniform_full();
    let mut z = normal_abs_lanes(u);
    for l in 0..N {
        z[l] = signed(z[l], last[l]);
    }
    z
}

/// `ln(1 − v)` for `v` in [0, 1), accurate where `1 − v` rounds: the
/// series `−v (1 + v/2 + ... + v⁶/7)` below 1/16 (truncation error below
/// `v⁷/8 <= 2^-31` relative), the logarithm of `1 − v <= 15/16` above,
/// where a GPU's `log` (absolute error up to 2^-21 near 1) is still good
/// to 1e-6 relative. Branch-free.
#[inline(always)]
pub fn ln_1m(v: f32) -> f32 {
    let mut p = 1.0 / 7.0;
    p = 1.0 / 6.0 + v * p;
    p = 0.2 + v * p;
    p = 0.25 + v * p;
    p = 1.0 / 3.0 + v * p;
    p = 0.5 + v * p;
    p = 1.0 + v * p;
    let series = -v * p;
    let direct = fast_ln(1.0 - v);
    if v < 0.0625 {
        series
    } else {
        direct
    }
}

/// Weibull from a full-range uniform: `scale · (−ln u)^(1/shape)` with
/// `p[0]` the scale and `p[1] = 1/shape` (`u < 1`, so `−ln u > 0`).
#[inline(always)]
pub fn weibull_of(law: &Law, u: f32) -> f32 {
    let e = -fast_ln(u);
    law.p[0] * fast_exp(law.p[1] * fast_ln(e))
}

/// Bounded Pareto from a full-range uniform, by inversion of
/// `P(X > x) = ((L/x)^α − h)/q` with `h = (L/H)^α` and `q = 1 − h` computed
/// in f64 on the host (`p = [α, L, h, q]`): `x = L (h + u q)^(−1/α)`. Small
/// `u` gives the top of the support, where the second moment lives for
/// `α < 2`, so it keeps the uniform's full resolution there. When `q < 1/2`
/// (`h + u q` near 1, small `α ln(H/L)`), `ln(h + u q)` is taken as
/// `ln(1 − q (1 − u))` by [`ln_1m`], which keeps its relative precision
/// there (an error `δ` in it is `δ/α` in `ln x`, and a GPU's `log` is only
/// good to an absolute 1e-7 near 1).
#[inline(always)]
pub fn pareto_of(law: &Law, u: f32) -> f32 {
    let (alpha, lo, h, q) = (law.p[0], law.p[1], law.p[2], law.p[3]);
    let ln_r = if q < 0.5 {
        ln_1m(q * (1.0 - u))
    } else {
        fast_ln(h + u * q)
    };
    lo * fast_exp(-ln_r / alpha)
}

/// Lognormal `exp(p[0] + p[1] z)` of a standard normal `z`.
#[inline(always)]
pub fn lognormal_of(law: &Law, z: f32) -> f32 {
    fast_exp(law.p[0] + law.p[1] * z)
}

/// Sampling state of `N` replications run in lock step: their streams and
/// sticky status words. Every law is drawn for all lanes at once; laws with
/// a fixed number of words per draw are plain lane loops the compiler
/// vectorizes, rejection samplers run lane by lane.
pub struct Sampler<'a, const N: usize> {
    pub streams: Lanes<N>,
    pub table: &'a [f32],
    pub status: [u32; N],
    /// Each lane's stateful arrival stream's state between draws, which
    /// makes it non-renewal: an MMPP's phase, 0 or 1 ([`Sampler::mmpp`]); a
    /// trace's next position ([`Sampler::trace`]); unused (0) for the other
    /// laws. Twin of `arrival_state` in `shaders/sampling.wgsl`.
    pub arrival_state: [u32; N],
}

/// `$body` with `$v` bound to each lane of `$x` in turn, written as a plain
/// loop rather than a closure so that it is always inlined into the
/// replication loop (a closure that grows past LLVM's inlining threshold
/// becomes a call compiled without the loop's AVX2).
macro_rules! lanes {
    ($x:expr, |$v:ident| $body:expr) => {{
        let x = $x;
        let mut out = [0.0f32; N];
        for l in 0..N {
            let $v = x[l];
            out[l] = $body;
        }
        out
    }};
}

/// `$common` in every lane, an f32 expression of `$u`, the lane's
/// full-range uniform, and `$last`, its last word (see
/// [`Lanes::uniform_full`]), drawn from `$streams`. It is computed in one
/// straight loop on the common path's uniforms (all at least 2^-9), then,
/// when some lane took the rare path (1.6% of draws of 8 lanes), again as
/// `$rare` on every lane's final uniform, kept where the lane was rare. So
/// the common loop vectorises as a plain inversion, and `$common` may leave
/// out what only uniforms below 2^-9 need (the normal's far tail); `$rare`
/// must equal `$common` wherever both apply.
macro_rules! full_lanes {
    ($streams:expr, |$u:ident, $last:ident| $common:expr, $rare:expr) => {{
        let (w, any_rare) = $streams.uniform_full_start();
        let mut out = [0.0f32; N];
        for l in 0..N {
            let $u = crate::rng::uniform_full_common(w[l]);
            let $last = w[l];
            let _ = $last;
            out[l] = $common;
        }
        if any_rare {
            let (u, last) = $streams.uniform_full_finish(w);
            for l in 0..N {
                let $u = u[l];
                let $last = last[l];
                let _ = $last;
                let x = $rare;
                if w[l] < crate::rng::FULL_RARE {
                    out[l] = x;
                }
            }
        }
        out
    }};
    ($streams:expr, |$u:ident| $body:expr) => {
        full_lanes!($streams, |$u, last| $body, $body)
    };
}

impl<'a, const N: usize> Sampler<'a, N> {
    /// The samplers of replications `reps` of point `p`, at the start of
    /// their streams. A stateful arrival law draws each lane's starting
    /// state here, from the first word of the replication's stream, before
    /// any other draw (`arrival_start` in sampling.wgsl, called by every
    /// kernel right after `rng_init`): an MMPP's phase from the stationary
    /// law (phase 1 when the word is below `law.n`, P = n 2^-32 = s_0/(s_0 +
    /// s_1)); a trace's position, uniform over its `n` gaps
    /// ([`resample_index`]).
    pub fn new(p: &PointParams, reps: [u32; N], table: &'a [f32]) -> Self {
        let mut s = Self {
            streams: Lanes::new(p.seed(), p.point_index, reps),
            table,
            status: [rep_status::OK; N],
            arrival_state: [0; N],
        };
        let law = &p.arrival;
        match law.kind() {
            LawKind::Mmpp => {
                let w = s.streams.next_u32();
                for (phase, w) in s.arrival_state.iter_mut().zip(w) {
                    *phase = u32::from(w < law.n);
                }
            }
            LawKind::Trace => {
                let w = s.streams.next_u32();
                for (position, w) in s.arrival_state.iter_mut().zip(w) {
                    *position = resample_index(w, law.n);
                }
            }
            _ => {}
        }
        s
    }

    /// The next gap of a replayed trace per lane: the one at the lane's
    /// position in the trace (`law.n` gaps in file order from
    /// `law.offset` in the table), which then moves on by one, wrapping
    /// around to the first gap after the last. No word is drawn: the
    /// randomness of a trace is its starting position (and, under random
    /// routing, which arrivals a dyno gets). Twin of `trace_gap`.
    #[inline(always)]
    pub fn trace(&mut self, law: &Law) -> [f32; N] {
        let gaps = &self.table[law.offset as usize..(law.offset + law.n) as usize];
        std::array::from_fn(|l| {
            let at = self.arrival_state[l];
            self.arrival_state[l] = if at + 1 == law.n { 0 } else { at + 1 };
            gaps[at as usize]
        })
    }

    /// One MMPP interarrival per lane (see [`Law`] for the record): from
    /// the lane's phase, a sojourn of exponential length (mean `p[phase]`,
    /// one full-range uniform) that ends in an arrival with probability
    /// `p[2 + phase]` (a 24-bit uniform below it), else in a switch to the
    /// other phase and another sojourn; the interarrival is the sum of the
    /// sojourns. The lanes step in lock step, a lane that has its arrival
    /// holding its stream still (as the gamma's lanes do), so each consumes
    /// exactly the words the GPU's `mmpp` does. At most [`MMPP_MAX_STEPS`]
    /// sojourns: a lane that reaches it is flagged `SAMPLER_BOUND`.
    #[inline(never)]
    pub fn mmpp(&mut self, law: &Law) -> [f32; N] {
        let mut t = [0.0f32; N];
        let mut pending = [true; N];
        for _ in 0..MMPP_MAX_STEPS {
            if !pending.contains(&true) {
                break;
            }
            let u = self.streams.masked(&pending, |s| s.uniform_full().0);
            let c = self.streams.masked(&pending, Lanes::uniform_closed0);
            for l in 0..N {
                if pending[l] {
                    let ph = self.arrival_state[l] as usize;
                    t[l] += -law.p[ph] * fast_ln(u[l]);
                    if c[l] < law.p[2 + ph] {
                        pending[l] = false;
                    } else {
                        self.arrival_state[l] ^= 1;
                    }
                }
            }
        }
        for (status, &bound) in self.status.iter_mut().zip(&pending) {
            if bound {
                *status |= rep_status::SAMPLER_BOUND;
            }
        }
        t
    }

    /// Draw from now on from segment `segment` of each lane's replication
    /// ([`Stream::segment`](crate::rng::Stream::segment)); the status flags
    /// carry over.
    pub fn enter_segment(&mut self, p: &PointParams, reps: [u32; N], segment: u32) {
        self.streams = Lanes::segment(p.seed(), p.point_index, reps, segment);
    }

    /// Exponential with the given mean, by inversion of the full-range
    /// uniform: `−mean ln u`, which reaches 45 means.
    #[inline(always)]
    pub fn exponential(&mut self, mean: f32) -> [f32; N] {
        full_lanes!(self.streams, |u| -mean * fast_ln(u))
    }

    /// Exponential with a mean per lane.
    #[inline(always)]
    fn exponential_each(&mut self, mean: [f32; N]) -> [f32; N] {
        let u = self.streams.uniform_full().0;
        let mut out = [0.0f32; N];
        for l in 0..N {
            out[l] = -mean[l] * fast_ln(u[l]);
        }
        out
    }

    /// Gamma(shape, scale) in every lane, by Marsaglia and Tsang: lanes
    /// try in lock step, and a lane that has accepted stops drawing (its
    /// stream holds still), so each lane consumes exactly the words the
    /// GPU's `gamma` does for its invocation. Sets `SAMPLER_BOUND` in a
    /// lane's status if its rejection loop hits [`GAMMA_MAX_TRIES`].
    pub fn gamma(&mut self, shape: f32, scale: f32) -> [f32; N] {
        // Too large to inline into every replication loop, so it picks its
        // own code generation: AVX2 where the CPU has it, as the loops do.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<const N: usize>(
                s: &mut Sampler<'_, N>,
                shape: f32,
                scale: f32,
            ) -> [f32; N] {
                s.gamma_lanes(shape, scale)
            }
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { avx2(self, shape, scale) };
        }
        self.gamma_lanes(shape, scale)
    }

    #[inline(always)]
    fn gamma_lanes(&mut self, shape: f32, scale: f32) -> [f32; N] {
        let boosted = shape < 1.0;
        let a = if boosted { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        let mut result = [d; N];
        let mut pending = [true; N];
        for _ in 0..GAMMA_MAX_TRIES {
            if !pending.contains(&true) {
                break;
            }
            let z = self.streams.masked(&pending, normals);
            let u = self.streams.masked(&pending, Lanes::uniform_open0);
            for l in 0..N {
                let v = 1.0 + c * z[l];
                let v3 = v * v * v;
                let accept = pending[l]
                    && v > 0.0
                    && fast_ln(u[l]) < 0.5 * z[l] * z[l] + d - d * v3 + d * fast_ln(v3);
                if accept {
                    result[l] = d * v3;
                    pending[l] = false;
                }
            }
        }
        for (status, &bound) in self.status.iter_mut().zip(&pending) {
            if bound {
                *status |= rep_status::SAMPLER_BOUND;
            }
        }
        if boosted {
            // U^(1/a) with U = 1 − V: for a tiny shape only U within about
            // a of 1 matters, where V keeps the full-range resolution.
            let v = self.streams.uniform_full().0;
            for l in 0..N {
                result[l] *= fast_exp(ln_1m(v[l]) / shape);
            }
        }
        lanes!(result, |r| r * scale)
    }

    /// Sum of `m` exponential phases of the given mean (Erlang-m).
    #[inline(always)]
    pub fn erlang(&mut self, m: u32, phase_mean: f32) -> [f32; N] {
        if m > ERLANG_DIRECT_MAX {
            return self.gamma(m as f32, phase_mean);
        }
        let mut log_sum = [0.0f32; N];
        for _ in 0..m {
            let u = self.streams.uniform_full().0;
            for l in 0..N {
                log_sum[l] += fast_ln(u[l]);
            }
        }
        lanes!(log_sum, |s| -phase_mean * s)
    }

    /// One draw from `law` per lane, scaled and clamped.
    #[inline(always)]
    pub fn draw(&mut self, law: &Law) -> [f32; N] {
        self.draw_as::<ANY>(law)
    }

    /// Whether each lane's request, waiting `wait`, runs out of patience:
    /// a draw of `p.patience` (after the service time, from the same
    /// stream) below the wait. All false, drawing nothing, without
    /// reneging. Twin of `patience_late` in `shaders/common.wgsl`.
    #[inline(always)]
    pub fn late(&mut self, p: &PointParams, wait: &[f32; N]) -> [bool; N] {
        if p.reneging == Reneging::None.code() {
            return [false; N];
        }
        self.draw_patience(p, wait)
    }

    /// The patience draw itself, kept out of line: inlined, the run-time
    /// match over every law would be compiled into each of the hundreds of
    /// per-law replication loops (`with_laws`), for a draw only points with
    /// patience make.
    #[inline(never)]
    fn draw_patience(&mut self, p: &PointParams, wait: &[f32; N]) -> [bool; N] {
        let patience = self.patience(p);
        std::array::from_fn(|l| wait[l] > patience[l])
    }

    /// One draw of the point's patience law per lane (the dispatch kernel
    /// draws it before it knows the wait: a request waiting at its router
    /// carries it), out of line for the reason [`Self::late`]'s draw is.
    #[inline(never)]
    pub fn patience(&mut self, p: &PointParams) -> [f32; N] {
        self.draw(&p.patience)
    }

    /// [`draw`](Self::draw) compiled for laws of kind `KIND` ([`ANY`]: read
    /// `law.kind` at run time). Same words, same arithmetic, same results;
    /// a fixed kind lets a replication loop keep its state in registers.
    #[inline(always)]
    pub fn draw_as<const KIND: u32>(&mut self, law: &Law) -> [f32; N] {
        let kind = if KIND == ANY {
            law.kind()
        } else {
            LawKind::from_code(KIND).expect("KIND is a LawKind code or ANY")
        };
        debug_assert_eq!(kind, law.kind());
        let x = match kind {
            LawKind::Exp => self.exponential(law.p[0]),
            LawKind::Det => [law.p[0]; N],
            LawKind::Erlang => self.erlang(law.n, law.p[0]),
            LawKind::Gamma => self.gamma(law.p[0], law.p[1]),
            LawKind::HyperExp => {
                // p[0] is the rare branch's probability (down to 2^-40 it is
                // resolved by the full-range uniform to one part in 2^23).
                let branch = self.streams.uniform_full().0;
                let mean = branch.map(|b| if b < law.p[0] { law.p[1] } else { law.p[2] });
                self.exponential_each(mean)
            }
            // |z| on the common path needs only Giles' near branches.
            LawKind::LogNormal => full_lanes!(
                self.streams,
                |u, last| lognormal_of(law, signed(normal_abs_near(u, giles_w(u)), last)),
                lognormal_of(law, signed(normal_abs(u), last))
            ),
            LawKind::Weibull => full_lanes!(self.streams, |u| weibull_of(law, u)),
            LawKind::Pareto => full_lanes!(self.streams, |u| pareto_of(law, u)),
            LawKind::Uniform => {
                lanes!(self.streams.uniform_closed0(), |u| law.p[0] + law.p[1] * u)
            }
            LawKind::Empirical => {
                let table = &self.table[law.offset as usize..(law.offset + law.n) as usize];
                let w = self.streams.next_u32();
                if law.p[0] == 0.0 {
                    lanes!(w, |w| resample(table, w))
                } else {
                    lanes!(w, |w| empirical(table, crate::rng::closed0_of(w)))
                }
            }
            LawKind::Mmpp => self.mmpp(law),
            LawKind::Trace => self.trace(law),
        };
        lanes!(x, |x| (law.scale * x).max(law.lo).min(law.hi))
    }

    /// Sum of `m` independent draws from `law` per lane, in closed form where
    /// the law is closed under convolution (exp, Erlang, gamma, det) and by
    /// summing otherwise. Arrival laws carry no clamps, which the shortcuts
    /// rely on. An MMPP's draws are not independent: its sum is `m`
    /// consecutive draws, each from the phase the last one left (round
    /// robin's every `m`-th arrival of the stream), as are a trace's.
    pub fn draw_sum(&mut self, law: &Law, m: u32) -> [f32; N] {
        match law.kind() {
            LawKind::Exp => lanes!(self.erlang(m, law.p[0]), |x| law.scale * x),
            LawKind::Erlang => lanes!(self.erlang(m * law.n, law.p[0]), |x| law.scale * x),
            LawKind::Gamma => lanes!(self.gamma(m as f32 * law.p[0], law.p[1]), |x| law.scale * x),
            LawKind::Det => [law.scale * law.p[0] * m as f32; N],
            LawKind::HyperExp
            | LawKind::LogNormal
            | LawKind::Weibull
            | LawKind::Pareto
            | LawKind::Uniform
            | LawKind::Empirical
            | LawKind::Mmpp
            | LawKind::Trace => {
                let mut sum = [0.0f32; N];
                for _ in 0..m {
                    let x = self.draw(law);
                    for l in 0..N {
                        sum[l] += x[l];
                    }
                }
                sum
            }
        }
    }

    /// Interarrival time at the simulated queue, per lane. `ln_keep` is
    /// ln(1 − 1/route_n), computed once per replication for random routing.
    #[inline(always)]
    pub fn next_interarrival(&mut self, p: &PointParams, ln_keep: f32) -> [f32; N] {
        self.next_interarrival_as::<ANY, ANY>(p, ln_keep)
    }

    /// [`next_interarrival`](Self::next_interarrival) compiled for arrival
    /// laws of kind `KIND` and the effective thinning `THIN` (see
    /// [`PointParams::effective_thinning`]); [`ANY`] reads either at run time.
    #[inline(always)]
    pub fn next_interarrival_as<const KIND: u32, const THIN: u32>(
        &mut self,
        p: &PointParams,
        ln_keep: f32,
    ) -> [f32; N] {
        let kind = if KIND == ANY {
            p.arrival.kind()
        } else {
            LawKind::from_code(KIND).expect("KIND is a LawKind code or ANY")
        };
        let thin = if THIN == ANY {
            p.effective_thinning()
        } else {
            Thinning::from_code(THIN).expect("THIN is a Thinning code or ANY")
        };
        debug_assert_eq!((kind, thin), (p.arrival.kind(), p.effective_thinning()));
        match thin {
            Thinning::Random => {
                // An MMPP thinned at random is an MMPP with the rates
                // divided by route_n (`Dist::thinned_at_random`), which
                // `run::point` encodes as the point's own law (thinning
                // none) where its sampler's loop allows; otherwise it comes
                // here and sums a geometric number of consecutive stateful
                // draws of the stream, which is exact too (never the
                // exponential shortcut, nor a closed-form sum).
                if kind == LawKind::Exp {
                    // Poisson thinning: a Poisson stream split at random stays Poisson.
                    self.exponential(p.arrival.scale * p.arrival.p[0] * p.route_n as f32)
                } else {
                    // Arrivals skipped before one joins this queue: geometric,
                    // so the lanes need different sums.
                    std::array::from_fn(|l| {
                        let mut one = Sampler::<1> {
                            streams: Lanes::from_stream(self.streams.lane(l)),
                            table: self.table,
                            status: [self.status[l]],
                            arrival_state: [self.arrival_state[l]],
                        };
                        let u = one.streams.uniform_full().0[0];
                        let m = 1.0 + (fast_ln(u) / ln_keep).floor();
                        let m = if m < GEOMETRIC_CAP as f32 {
                            m as u32
                        } else {
                            GEOMETRIC_CAP
                        };
                        let x = one.draw_sum(&p.arrival, m)[0];
                        self.streams.set_lane(l, one.streams.lane(0));
                        self.status[l] = one.status[0];
                        self.arrival_state[l] = one.arrival_state[0];
                        x
                    })
                }
            }
            Thinning::EveryNth => self.draw_sum(&p.arrival, p.route_n),
            Thinning::None => self.draw_as::<KIND>(&p.arrival),
        }
    }
}

/// Stands for "known only at run time" in the `KIND`/`THIN` parameters of
/// [`Sampler::draw_as`] and [`Sampler::next_interarrival_as`].
pub const ANY: u32 = u32::MAX;

/// Something generic over a point's sampling laws, run by [`with_laws`].
pub trait LawsVisitor {
    type Output;
    fn visit<const ARRIVAL: u32, const THIN: u32, const SERVICE: u32>(self) -> Self::Output;
}

/// Runs `v` compiled for `p`'s laws where they are among the common cases
/// (Poisson arrivals, seen whole, thinned at random or every n-th, with exponential,
/// Weibull, lognormal, deterministic or empirical service) and for laws
/// read at run time otherwise. The CPU twin of the GPU's pipeline
/// specialisation: the replication loop loses its per-customer dispatch on
/// the law and keeps its state in registers. Every variant gives the same
/// results as the generic one.
#[inline(always)]
pub fn with_laws<V: LawsVisitor>(p: &PointParams, v: V) -> V::Output {
    const EXP: u32 = LawKind::Exp.code();
    macro_rules! by_service {
        ($thin:expr) => {
            match p.service.kind() {
                LawKind::Exp => v.visit::<EXP, { $thin }, EXP>(),
                LawKind::Weibull => v.visit::<EXP, { $thin }, { LawKind::Weibull.code() }>(),
                LawKind::LogNormal => v.visit::<EXP, { $thin }, { LawKind::LogNormal.code() }>(),
                LawKind::Det => v.visit::<EXP, { $thin }, { LawKind::Det.code() }>(),
                LawKind::Empirical => v.visit::<EXP, { $thin }, { LawKind::Empirical.code() }>(),
                LawKind::Erlang
                | LawKind::Gamma
                | LawKind::HyperExp
                | LawKind::Pareto
                | LawKind::Uniform
                | LawKind::Mmpp
                | LawKind::Trace => v.visit::<ANY, ANY, ANY>(),
            }
        };
    }
    if p.arrival.kind() != LawKind::Exp {
        return v.visit::<ANY, ANY, ANY>();
    }
    match p.effective_thinning() {
        Thinning::None => by_service!(Thinning::None.code()),
        Thinning::Random => by_service!(Thinning::Random.code()),
        Thinning::EveryNth => by_service!(Thinning::EveryNth.code()),
    }
}

/// `floor(w n / 2^32)`: the index of the table entry a word `w` resamples,
/// in `[0, n)` for every `w` and exact (the WGSL twin forms the same integer
/// from 16-bit halves). Index `i` takes `ceil((i + 1) 2^32 / n) − ceil(i
/// 2^32 / n)` of the 2^32 words, so every index's probability is within
/// 2^-32 of `1/n` and the index's CDF within 2^-32 of `i / n` everywhere.
#[inline(always)]
pub fn resample_index(w: u32, n: u32) -> u32 {
    ((u64::from(w) * u64::from(n)) >> 32) as u32
}

/// One of the `table`'s values, each with probability `1/n` (to 2^-32,
/// [`resample_index`]), for the word `w`: `empirical(file=...)`'s default
/// (`smooth=none`, the bootstrap).
#[inline(always)]
fn resample(table: &[f32], w: u32) -> f32 {
    let i = resample_index(w, table.len() as u32);
    // SAFETY: i < n, the table's length.
    unsafe { *table.get_unchecked(i as usize) }
}

/// Piecewise-linear inverse CDF through the sorted `table` at `u` ∈ [0, 1)
/// (`smooth=linear`).
#[inline(always)]
fn empirical(table: &[f32], u: f32) -> f32 {
    let n = table.len() as u32;
    if n < 2 {
        return table[0];
    }
    let pos = u * (n - 1) as f32;
    // SAFETY: u ∈ [0, 1) and n < 2^31 (a table is one storage binding), so
    // pos is finite and in [0, n − 1]:
    // the conversion is exact truncation (unlike `as`, it does not need the
    // saturating code that keeps this loop from vectorizing).
    let i = unsafe { pos.to_int_unchecked::<u32>() }.min(n - 2);
    let frac = pos - i as f32;
    // SAFETY: i ≤ n − 2, so both indices are within the table.
    let (a, b) = unsafe {
        (
            *table.get_unchecked(i as usize),
            *table.get_unchecked(i as usize + 1),
        )
    };
    a + frac * (b - a)
}

/// ln(1 − 1/route_n) for random thinning: the host's f64 value the point
/// carries ([`PointParams::with_ln_keep`]).
pub fn ln_keep(p: &PointParams) -> f32 {
    debug_assert!(
        p.arrival.kind() == LawKind::Exp || p.ln_keep.to_bits() == p.host_ln_keep().to_bits(),
        "PointParams::ln_keep not filled in (call with_ln_keep)"
    );
    p.ln_keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    fn law(kind: LawKind, p: [f32; 4]) -> Law {
        Law::unclamped(kind, p)
    }

    fn sample_moments(l: &Law, n: usize) -> (f64, f64) {
        let table = [1.0f32, 2.0, 4.0];
        let mut s = Sampler::<1> {
            streams: Lanes::from_stream(Stream::new(11, 0, 0)),
            table: &table,
            status: [0],
            arrival_state: [0],
        };
        let (mut m1, mut m2) = (0.0f64, 0.0f64);
        for _ in 0..n {
            let x = f64::from(s.draw(l)[0]);
            m1 += x;
            m2 += x * x;
        }
        assert_eq!(s.status, [0]);
        (m1 / n as f64, m2 / n as f64)
    }

    fn assert_mean(l: Law, mean: f64, var: f64) {
        let n = 400_000;
        let (m1, _) = sample_moments(&l, n);
        let se = (var / n as f64).sqrt();
        assert!(
            (m1 - mean).abs() < 5.0 * se,
            "kind {}: mean {m1} vs {mean} (se {se})",
            l.kind
        );
    }

    #[test]
    fn fast_ln_is_within_two_ulp_of_libm() {
        let mut x = 1e-30f32;
        while x < 1e30 {
            let (a, b) = (fast_ln(x), x.ln());
            assert!(
                (a - b).abs() <= 2.0 * f32::EPSILON * b.abs().max(1.0),
                "{x}: {a} vs {b}"
            );
            x *= 1.000_37;
        }
        assert_eq!(fast_ln(1.0), 0.0);
        assert_eq!(fast_ln(0.0), f32::NEG_INFINITY);
    }

    #[test]
    fn fast_exp_is_within_two_ulp_of_libm() {
        let mut x = -87.3f32;
        while x < 88.7 {
            let (a, b) = (fast_exp(x), x.exp());
            assert!((a - b).abs() <= 2.0 * f32::EPSILON * b, "{x}: {a} vs {b}");
            x += 0.000_97;
        }
        assert_eq!(fast_exp(0.0), 1.0);
        assert_eq!(fast_exp(89.0), f32::INFINITY);
        assert_eq!(fast_exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(fast_exp(-88.0), 0.0);
        assert_eq!(fast_exp(f32::NEG_INFINITY), 0.0);
        assert!(fast_exp(88.72).is_finite());
    }

    #[test]
    fn lanes_reproduce_single_streams() {
        // Running replications in lock step must not change any of them.
        let p = PointParams {
            seed_lo: 9,
            point_index: 4,
            ..PointParams::default()
        };
        let table = [0.5f32, 1.0, 3.0];
        let laws = [
            law(LawKind::Exp, [2.0, 0.0, 0.0, 0.0]),
            law(LawKind::Gamma, [0.7, 1.0, 0.0, 0.0]),
            law(LawKind::HyperExp, [0.8, 0.5, 3.0, 0.0]),
            law(LawKind::LogNormal, [-1.0, 2.0, 0.0, 0.0]),
            law(LawKind::Weibull, [0.5, 3.0, 0.0, 0.0]),
            law(LawKind::Pareto, [1.5, 1.0, 1e-3, 0.999]),
            law(LawKind::Pareto, [1e-3, 1.0, 0.99, 0.01]),
            Law {
                n: 3,
                ..law(LawKind::Empirical, [0.0; 4])
            },
            Law {
                n: 3,
                ..law(LawKind::Empirical, [1.0, 0.0, 0.0, 0.0])
            },
        ];
        let mut wide = Sampler::<8>::new(&p, std::array::from_fn(|l| l as u32 * 3), &table);
        let mut narrow: Vec<Sampler<1>> = (0..8)
            .map(|l| Sampler::<1>::new(&p, [l * 3], &table))
            .collect();
        for i in 0..8000 {
            let l = &laws[i % laws.len()];
            let w = wide.draw(l);
            for (k, n) in narrow.iter_mut().enumerate() {
                assert_eq!(w[k].to_bits(), n.draw(l)[0].to_bits());
            }
        }
    }

    #[test]
    fn normal_abs_matches_known_values() {
        // Two-sided: P(|Z| > 1.959964) = 0.05, P(|Z| > 4.753424) = 2e-6.
        assert!((normal_abs(0.05) - 1.959_964).abs() < 2e-5);
        assert_eq!(normal_abs(1.0), 0.0);
        assert!((normal_abs(2e-6) - 4.753_424).abs() < 5e-4);
        // The far tail, against mpmath's sqrt(2) erfinv(1 − 2^-e) to 17
        // digits: Giles' single-precision tail alone is off by 3e-5 at 2^-28
        // and by 54% at 2^-64.
        for (e, z) in [
            (24, 5.419_983_174_916_868),
            (28, 5.895_951_216_739_57),
            (30, 6.120_756_285_971_941),
            (40, 7.143_552_034_352_189),
            (50, 8.041_399_959_096_542),
            (60, 8.851_003_068_386_147),
            (64, 9.155_293_772_686_073),
            (65, 9.229_834_433_057_749),
        ] {
            let got = f64::from(normal_abs(2f32.powi(-e)));
            assert!((got / z - 1.0).abs() < 1e-6, "2^-{e}: {got} vs {z}");
        }
    }

    #[test]
    fn normal_lanes_match_the_scalar_quantile() {
        // Every branch, the far tail included, as the lanes compute it.
        let mut u = [0.0f32; 8];
        let mut x = 1.0f32;
        while x > 1e-20 {
            for (l, v) in u.iter_mut().enumerate() {
                *v = x * (1.0 - 0.1 * l as f32);
            }
            let z = normal_abs_lanes(u);
            for l in 0..8 {
                assert_eq!(z[l].to_bits(), normal_abs(u[l]).to_bits(), "u {}", u[l]);
            }
            x *= 0.93;
        }
    }

    #[test]
    fn ln_1m_is_accurate_near_zero_and_one() {
        let mut v = 1e-30f32;
        while v < 1.0 {
            let exact = (-f64::from(v)).ln_1p();
            let got = f64::from(ln_1m(v));
            // 1 − v rounds by up to 2^-25 just above the switch at 2^-7.
            assert!(
                ((got - exact) / exact).abs() < 5e-6,
                "{v}: {got} vs {exact}"
            );
            v *= 1.01;
        }
    }

    #[test]
    fn laws_have_their_means() {
        assert_mean(law(LawKind::Exp, [2.0, 0.0, 0.0, 0.0]), 2.0, 4.0);
        assert_mean(law(LawKind::Det, [1.5, 0.0, 0.0, 0.0]), 1.5, 1e-12);
        let mut erl = law(LawKind::Erlang, [0.5, 0.0, 0.0, 0.0]);
        erl.n = 4;
        assert_mean(erl, 2.0, 1.0);
        erl.n = 40;
        assert_mean(erl, 20.0, 10.0);
        assert_mean(law(LawKind::Gamma, [0.3, 2.0, 0.0, 0.0]), 0.6, 1.2);
        assert_mean(law(LawKind::Gamma, [7.5, 0.5, 0.0, 0.0]), 3.75, 1.875);
        assert_mean(law(LawKind::HyperExp, [0.9, 0.5, 4.5, 0.0]), 0.9, 6.0);
        // lognormal mu=0, sigma=0.5: mean e^0.125, var (e^0.25-1)e^0.25
        assert_mean(
            law(LawKind::LogNormal, [0.0, 0.5, 0.0, 0.0]),
            0.125f64.exp(),
            0.365,
        );
        // Weibull scale 1, shape 2: mean Gamma(1.5) = 0.886227, var 1 - 0.785398
        assert_mean(
            law(LawKind::Weibull, [1.0, 0.5, 0.0, 0.0]),
            0.886_227,
            0.2146,
        );
        // bounded Pareto alpha 2 on [1, 10]: mean = 2(1 - 0.1)/(1 - 0.01) = 1.818182
        // (alpha, L, (L/H)^alpha, 1 − (L/H)^alpha)
        assert_mean(law(LawKind::Pareto, [2.0, 1.0, 0.01, 0.99]), 1.818_182, 1.4);
        assert_mean(law(LawKind::Uniform, [1.0, 2.0, 0.0, 0.0]), 2.0, 1.0 / 3.0);
        // The table 1, 2, 4: resampled, mean 7/3 and variance 7 − 49/9;
        // smoothed, segments [1, 2] and [2, 4], mean 2.25, E[X^2] 35/6.
        let mut emp = law(LawKind::Empirical, [0.0; 4]);
        emp.n = 3;
        assert_mean(emp, 7.0 / 3.0, 14.0 / 9.0);
        emp.p[0] = 1.0;
        assert_mean(emp, 2.25, 35.0 / 6.0 - 2.25 * 2.25);
    }

    #[test]
    fn resampling_draws_only_the_values_each_equally_often() {
        // Each index takes floor or ceil of 2^32 / n words, in order: the
        // index's CDF is within 2^-32 of i / n, for tables of every size.
        for n in [
            1u32,
            2,
            3,
            7,
            1000,
            65_535,
            65_536,
            65_537,
            1 << 24,
            (1 << 24) + 1,
        ] {
            let first = |i: u32| ((u64::from(i) << 32).div_ceil(u64::from(n))) as u32;
            for i in [0, 1, n / 3, n / 2, n - 1].into_iter().filter(|&i| i < n) {
                let w = first(i);
                assert_eq!(resample_index(w, n), i, "n {n}: first word of {i}");
                if w > 0 {
                    assert_eq!(resample_index(w - 1, n), i - 1, "n {n}: before {i}");
                }
            }
            assert_eq!(resample_index(u32::MAX, n), n - 1, "n {n}");
        }
        let table = [0.5f32, 1.0, 3.0];
        let emp = Law {
            n: 3,
            ..law(LawKind::Empirical, [0.0; 4])
        };
        let mut s = Sampler::<8>::new(
            &PointParams::default(),
            std::array::from_fn(|l| l as u32),
            &table,
        );
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            for x in s.draw(&emp) {
                counts[table.iter().position(|&v| v == x).expect("a table value")] += 1;
            }
        }
        // 240000 draws, 80000 of each value expected, sd 231: within 5 sd.
        for c in counts {
            assert!(c.abs_diff(80_000) < 1155, "{counts:?}");
        }
    }

    #[test]
    fn clamps_apply_after_scale() {
        let mut l = law(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]);
        l.scale = 2.0;
        l.lo = 0.5;
        l.hi = 3.0;
        let table = [0.0f32];
        let mut s = Sampler::<4>::new(&PointParams::default(), [0, 1, 2, 3], &table);
        for _ in 0..10_000 {
            for x in s.draw(&l) {
                assert!((0.5..=3.0).contains(&x));
            }
        }
    }

    #[test]
    fn ln_keep_is_the_f64_value() {
        for r in [2u32, 5, 51, 100_000, 4_000_000_000] {
            let p = PointParams {
                arrival: law(LawKind::Uniform, [0.0, 2.0, 0.0, 0.0]),
                thinning: Thinning::Random.code(),
                route_n: r,
                ..PointParams::default()
            }
            .with_ln_keep();
            let exact = (-1.0 / f64::from(r)).ln_1p();
            let got = f64::from(ln_keep(&p));
            assert!(
                (got / exact - 1.0).abs() < 6e-8,
                "R = {r}: {got} vs {exact}"
            );
        }
        // What the kernels computed before, ln of 1 − 1/R rounded to f32:
        // 1.4e-3 off at R = 1e5.
        let old = f64::from(fast_ln(1.0 - 1.0 / 1e5f32));
        assert!((old / (-1e-5f64).ln_1p() - 1.0).abs() > 1e-3);
    }

    /// A parsed MMPP arrival law of mean 1 (rates [1,3]/2, switching
    /// [0.5,0.5]/2: index of dispersion 2).
    fn mmpp_point() -> PointParams {
        let d = crate::dist::Dist::parse(
            "mmpp(rates=[1,3],switch=[0.5,0.5])",
            crate::dist::Role::Arrival,
            std::path::Path::new("."),
        )
        .unwrap();
        PointParams {
            arrival: d.to_law(&mut Vec::new()),
            seed_lo: 5,
            point_index: 2,
            ..PointParams::default()
        }
    }

    /// Lanes in lock step keep each replication's phase: the same draws as
    /// one replication at a time, starting phase included.
    #[test]
    fn mmpp_lanes_reproduce_single_streams() {
        let p = mmpp_point();
        let reps: [u32; 8] = std::array::from_fn(|l| l as u32 * 7 + 1);
        let mut wide = Sampler::<8>::new(&p, reps, &[]);
        let mut narrow: Vec<Sampler<1>> = reps
            .iter()
            .map(|&r| Sampler::<1>::new(&p, [r], &[]))
            .collect();
        let starts: Vec<u32> = narrow.iter().map(|n| n.arrival_state[0]).collect();
        assert_eq!(wide.arrival_state.to_vec(), starts);
        assert!(starts.contains(&0) && starts.contains(&1), "{starts:?}");
        for _ in 0..20_000 {
            let w = wide.draw(&p.arrival);
            for (k, n) in narrow.iter_mut().enumerate() {
                assert_eq!(w[k].to_bits(), n.draw(&p.arrival)[0].to_bits());
                assert_eq!(wide.arrival_state[k], n.arrival_state[0]);
            }
        }
        assert_eq!(wide.status, [0; 8]);
    }

    /// The sampled stream has mean rate 1 and the index of dispersion of
    /// `Mmpp::dispersion` (2): counts in windows of 200 time units (100
    /// relaxation times of the phase, 1/(s1 + s2) = 2), whose variance to
    /// mean ratio has a relative standard error of sqrt(2/2000) = 3.2%.
    #[test]
    fn mmpp_stream_has_its_rate_and_dispersion() {
        let p = mmpp_point();
        let mut s = Sampler::<1>::new(&p, [3], &[]);
        let (windows, width) = (2000usize, 200.0f64);
        let mut counts = vec![0u32; windows];
        let mut t = 0.0f64;
        loop {
            t += f64::from(s.draw(&p.arrival)[0]);
            let w = (t / width) as usize;
            if w >= windows {
                break;
            }
            counts[w] += 1;
        }
        let n = windows as f64;
        let mean = counts.iter().map(|&c| f64::from(c)).sum::<f64>() / n;
        let var = counts
            .iter()
            .map(|&c| (f64::from(c) - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        let rate = mean / width;
        // The rate: sd of a window's count ≈ sqrt(2 · 200), over 2000.
        assert!((rate - 1.0).abs() < 5.0 * (2.0 * width).sqrt() / n.sqrt() / width);
        let dispersion = var / mean;
        assert!(
            (dispersion - 2.0).abs() < 5.0 * 0.032 * 2.0 + 0.02,
            "index of dispersion {dispersion}"
        );
        assert_eq!(s.status, [0]);
    }

    /// A trace's replications replay its gaps in order from their own
    /// starting positions (the first word's `resample_index`), wrapping
    /// after the last; lanes in lock step reproduce single streams; round
    /// robin's sum is consecutive gaps; random thinning sums a geometric
    /// number of consecutive gaps, consuming one word per customer.
    #[test]
    fn trace_lanes_replay_in_order_from_their_starts() {
        let table = [9.0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
        let trace = Law {
            offset: 1,
            n: 5,
            scale: 0.5,
            ..law(LawKind::Trace, [0.0; 4])
        };
        let p = PointParams {
            arrival: trace,
            seed_lo: 5,
            point_index: 2,
            ..PointParams::default()
        };
        let reps: [u32; 8] = std::array::from_fn(|l| l as u32 * 3 + 1);
        let mut wide = Sampler::<8>::new(&p, reps, &table);
        let mut starts = Vec::new();
        for (k, &r) in reps.iter().enumerate() {
            let mut stream = crate::rng::Stream::new(p.seed(), p.point_index, r);
            let start = resample_index(stream.next_u32(), 5);
            assert_eq!(wide.arrival_state[k], start);
            starts.push(start);
        }
        assert!(starts.iter().any(|&s| s != starts[0]), "{starts:?}");
        for step in 0..12u32 {
            let x = wide.draw(&p.arrival);
            for k in 0..8 {
                let at = (starts[k] + step) % 5;
                assert_eq!(x[k], 0.5 * table[1 + at as usize], "lane {k} step {step}");
            }
        }
        // No word was drawn after the start: the streams stand where the
        // start left them.
        let mut fresh = Sampler::<8>::new(&p, reps, &table);
        assert_eq!(fresh.streams.next_u32(), wide.streams.next_u32());
        // Round robin over 3 dynos: three consecutive gaps.
        let mut one = Sampler::<1>::new(&p, [4], &table);
        let s0 = one.arrival_state[0];
        let sum = one.draw_sum(&p.arrival, 3)[0];
        let expect: f32 = (0..3)
            .map(|i| 0.5 * table[1 + ((s0 + i) % 5) as usize])
            .fold(0.0, |a, b| a + b);
        assert_eq!(sum, expect);
        assert_eq!(one.arrival_state[0], (s0 + 3) % 5);
        // Random routing over 4 dynos: one geometric count, then that many
        // consecutive gaps, the position carried along.
        let thin = PointParams {
            thinning: Thinning::Random.code(),
            route_n: 4,
            ..p
        }
        .with_ln_keep();
        let mut lanes = Sampler::<8>::new(&thin, reps, &table);
        let mut total = [0.0f64; 8];
        for _ in 0..4000 {
            let x = lanes.next_interarrival(&thin, thin.ln_keep);
            for l in 0..8 {
                total[l] += f64::from(x[l]);
            }
        }
        // Mean gap 1.5 (scale 0.5 of mean 3), times 4: 6 per customer.
        for t in total {
            assert!((t / 4000.0 / 6.0 - 1.0).abs() < 0.1, "{}", t / 4000.0);
        }
    }

    #[test]
    fn thinned_arrivals_have_scaled_means() {
        for (kind, thin) in [
            (LawKind::Exp, Thinning::Random),
            (LawKind::Uniform, Thinning::Random),
            (LawKind::Exp, Thinning::EveryNth),
            (LawKind::Uniform, Thinning::EveryNth),
        ] {
            let mut p = PointParams {
                arrival: law(kind, [0.0, 2.0, 0.0, 0.0]),
                thinning: thin.code(),
                route_n: 5,
                ..PointParams::default()
            }
            .with_ln_keep();
            if kind == LawKind::Exp {
                p.arrival.p[0] = 1.0;
            }
            let table = [0.0f32];
            let mut s = Sampler::<1>::new(&p, [0], &table);
            let lk = ln_keep(&p);
            let n = 200_000;
            let mean: f64 = (0..n)
                .map(|_| f64::from(s.next_interarrival(&p, lk)[0]))
                .sum::<f64>()
                / n as f64;
            assert!(
                (mean - 5.0).abs() < 0.05,
                "kind {kind:?} thinning {thin:?}: {mean}"
            );
        }
    }
}
