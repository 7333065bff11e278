//! Random streams shared bit-for-bit by the CPU engine and the WGSL kernels.
//!
//! Every replication owns one stream, keyed by `(seed, grid point, replication)`
//! through the counter-based generator Philox4x32-10 (Salmon, Moraes, Dror and
//! Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011). Because the key
//! alone determines the stream, results never depend on thread count, chunking,
//! dispatch size or backend.
//!
//! Philox costs twenty 32×32→64-bit multiplies per four words, and WGSL has no
//! widening multiply, so the inner loops draw from xoshiro128++ (Blackman and
//! Vigna, 2018) seeded by one Philox block: four `u32` of state that live in
//! registers on a GPU and need only 32-bit adds, shifts and rotates. The WGSL twin
//! of this file is `shaders/rng.wgsl`; `tests/gpu_*` check they agree bit for bit.

/// Philox4x32 round multipliers and Weyl key increments (Random123 `philox.h`).
const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds: a bijection of the 128-bit counter under a 64-bit key.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(PHILOX_W0);
            k[1] = k[1].wrapping_add(PHILOX_W1);
        }
        let p0 = u64::from(PHILOX_M0) * u64::from(c[0]);
        let p1 = u64::from(PHILOX_M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The per-replication generator: xoshiro128++ seeded from Philox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    s: [u32; 4],
}

impl Stream {
    /// The stream of replication `rep` of grid point `point` under `seed`
    /// (its first segment: [`Stream::segment`]).
    pub fn new(seed: u64, point: u32, rep: u32) -> Self {
        Self::segment(seed, point, rep, 0)
    }

    /// The stream of segment `segment` of replication `rep`: a one-server
    /// replication is cut into segments run side by side on a GPU
    /// (`contract::lindley_segments`), each drawing from its own stream.
    /// Counter word 2 is a stream tag (0: the simulation stream) so that later
    /// features can derive further independent streams from the same key;
    /// word 3 is the segment (0 for every other kernel, whose replications
    /// are one stream).
    pub fn segment(seed: u64, point: u32, rep: u32, segment: u32) -> Self {
        let key = [seed as u32, (seed >> 32) as u32];
        let mut s = philox4x32_10([rep, point, 0, segment], key);
        // xoshiro's only forbidden state; Philox is a bijection, so this happens
        // for exactly one counter per key and the fix-up is mirrored in WGSL.
        if s == [0; 4] {
            s[0] = 1;
        }
        Self { s }
    }

    /// Next 32 random bits (xoshiro128++).
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(7).wrapping_add(s[0]);
        let t = s[1] << 9;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(11);
        result
    }

    /// Uniform on (0, 1]: 24 random bits, exactly representable in f32 on every
    /// backend; never 0, so `-ln(u)` is always finite. Its tail stops at
    /// 2^-24: for the acceptance tests of rejection samplers, where that is
    /// harmless; inversion samplers use [`Stream::uniform_full`].
    #[inline(always)]
    pub fn uniform_open0(&mut self) -> f32 {
        ((self.next_u32() >> 8) + 1) as f32 * (1.0 / 16_777_216.0)
    }

    /// Uniform on [0, 1): 24 random bits (bounded laws: uniform, smoothed
    /// empirical), [`closed0_of`] of the next word.
    #[inline(always)]
    pub fn uniform_closed0(&mut self) -> f32 {
        closed0_of(self.next_u32())
    }

    /// The full-range uniform on [2^-65, 1) (see [`uniform_full_rare`]) and
    /// the last word drawn, whose bit 0 the uniform leaves unused.
    #[inline(always)]
    pub fn uniform_full(&mut self) -> (f32, u32) {
        let w = self.next_u32();
        if w >= FULL_RARE {
            (uniform_full_common(w), w)
        } else {
            let w2 = self.next_u32();
            (uniform_full_rare(w, w2), w2)
        }
    }

    /// The raw state, for tests comparing against the WGSL twin.
    pub fn state(&self) -> [u32; 4] {
        self.s
    }
}

/// `f` applied to `a` and `b` lane by lane.
#[inline(always)]
fn zip<const N: usize>(a: [u32; N], b: [u32; N], f: impl Fn(u32, u32) -> u32) -> [u32; N] {
    std::array::from_fn(|l| f(a[l], b[l]))
}

/// `N` replications' streams side by side (structure of arrays), so the CPU
/// engine can run replications in lock step and the compiler can vectorize
/// the generator across them. Lane `l` is exactly the [`Stream`] of its
/// replication.
#[derive(Clone, Copy, Debug)]
pub struct Lanes<const N: usize> {
    s: [[u32; N]; 4],
}

impl<const N: usize> Lanes<N> {
    pub fn new(seed: u64, point: u32, reps: [u32; N]) -> Self {
        Self::segment(seed, point, reps, 0)
    }

    /// Segment `segment` of each lane's replication ([`Stream::segment`]).
    pub fn segment(seed: u64, point: u32, reps: [u32; N], segment: u32) -> Self {
        let mut s = [[0u32; N]; 4];
        for (l, &rep) in reps.iter().enumerate() {
            let one = Stream::segment(seed, point, rep, segment).state();
            for k in 0..4 {
                s[k][l] = one[k];
            }
        }
        Self { s }
    }

    /// One lane holding `stream`.
    pub fn from_stream(stream: Stream) -> Self {
        let mut lanes = Self { s: [[0; N]; 4] };
        for l in 0..N {
            lanes.set_lane(l, stream);
        }
        lanes
    }

    /// Lane `l` as a standalone stream (for samplers that run lane by lane).
    #[inline(always)]
    pub fn lane(&self, l: usize) -> Stream {
        Stream {
            s: [self.s[0][l], self.s[1][l], self.s[2][l], self.s[3][l]],
        }
    }

    #[inline(always)]
    pub fn set_lane(&mut self, l: usize, stream: Stream) {
        for k in 0..4 {
            self.s[k][l] = stream.s[k];
        }
    }

    /// Next 32 bits of every lane (xoshiro128++, as [`Stream::next_u32`]).
    #[inline(always)]
    pub fn next_u32(&mut self) -> [u32; N] {
        // One whole-array operation per step of the generator: each becomes
        // one vector instruction, where a fused per-lane loop was vectorized
        // piecemeal (half-width pieces whose stores and reloads stalled).
        let [s0, s1, s2, s3] = self.s;
        let out = zip(
            zip(s0, s3, u32::wrapping_add).map(|x| x.rotate_left(7)),
            s0,
            u32::wrapping_add,
        );
        let t = s1.map(|x| x << 9);
        let s2 = zip(s2, s0, |a, b| a ^ b);
        let s3 = zip(s3, s1, |a, b| a ^ b);
        let s1 = zip(s1, s2, |a, b| a ^ b);
        let s0 = zip(s0, s3, |a, b| a ^ b);
        let s2 = zip(s2, t, |a, b| a ^ b);
        let s3 = s3.map(|x| x.rotate_left(11));
        self.s = [s0, s1, s2, s3];
        out
    }

    /// `draw` on the lanes where `active` is set; the other lanes' streams
    /// are left as they were (their values in the result are meaningless).
    #[inline(always)]
    pub fn masked<T>(&mut self, active: &[bool; N], draw: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.s;
        let out = draw(self);
        // A bitwise select per word, which stays one vector operation.
        let keep = active.map(|a| if a { u32::MAX } else { 0 });
        for (now, was) in self.s.iter_mut().zip(&before) {
            *now = std::array::from_fn(|l| (now[l] & keep[l]) | (was[l] & !keep[l]));
        }
        out
    }

    #[inline(always)]
    pub fn uniform_open0(&mut self) -> [f32; N] {
        self.next_u32()
            .map(|x| ((x >> 8) + 1) as f32 * (1.0 / 16_777_216.0))
    }

    #[inline(always)]
    pub fn uniform_closed0(&mut self) -> [f32; N] {
        self.next_u32().map(closed0_of)
    }

    /// [`Stream::uniform_full`] in every lane: the uniforms and each lane's
    /// last word. The common path is one word and a conversion, as
    /// [`Lanes::uniform_closed0`]; the lanes whose first word is below
    /// [`FULL_RARE`] (probability 2^-9 each) draw their second word under a
    /// mask. Samplers that transform the uniform use
    /// [`Lanes::uniform_full_start`] and [`Lanes::uniform_full_finish`]
    /// instead, so that their common loop stays straight (`full_lanes!` in
    /// `sampling.rs`).
    #[inline(always)]
    pub fn uniform_full(&mut self) -> ([f32; N], [u32; N]) {
        let (w, rare) = self.uniform_full_start();
        if rare {
            return self.uniform_full_finish(w);
        }
        let mut u = [0.0f32; N];
        for l in 0..N {
            u[l] = uniform_full_common(w[l]);
        }
        (u, w)
    }

    /// The first words of a full-range uniform in every lane, and whether
    /// any lane needs the rare path (`w < FULL_RARE`). Lanes that do not
    /// have their uniform: `uniform_full_common(w)`, and last word `w`.
    #[inline(always)]
    pub fn uniform_full_start(&mut self) -> ([u32; N], bool) {
        let w = self.next_u32();
        // A fold of the compares (not `any`, which stops early): one vector
        // compare and a mask test.
        let rare = w.iter().fold(false, |a, &x| a | (x < FULL_RARE));
        (w, rare)
    }

    /// Every lane's full-range uniform and last word, given the first
    /// words `w` from [`Lanes::uniform_full_start`]: the rare lanes draw
    /// their second word (their streams step, the others' hold still).
    /// In lock step with bitwise selects, so that no lane is indexed at run
    /// time and the streams stay in registers.
    #[inline(always)]
    pub fn uniform_full_finish(&mut self, w: [u32; N]) -> ([f32; N], [u32; N]) {
        let mut rare = [false; N];
        for l in 0..N {
            rare[l] = w[l] < FULL_RARE;
        }
        let w2 = self.masked(&rare, Lanes::next_u32);
        let mut u = [0.0f32; N];
        let mut last = w;
        for l in 0..N {
            let v = uniform_full_rare(w[l], w2[l]);
            u[l] = if rare[l] {
                v
            } else {
                uniform_full_common(w[l])
            };
            last[l] = if rare[l] { w2[l] } else { w[l] };
        }
        (u, last)
    }
}

/// The uniform on [0, 1) of one word: its top 24 bits, `(w >> 8) 2^-24`,
/// exact in f32 (`uniform_closed0` in `shaders/rng.wgsl`).
#[inline(always)]
pub fn closed0_of(w: u32) -> f32 {
    (w >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// First words below this take the rare path of the full-range uniform.
pub const FULL_RARE: u32 = 1 << 23;

/// The full-range uniform's common path: a first word `w >= FULL_RARE`
/// gives `u = (w >> 8) 2^-24`, on the grid of step 2^-24 in [2^-9, 1).
///
/// Why a full-range uniform: inversion samplers send the smallest uniforms
/// to the law's tail (`-ln u`, the normal quantile, Pareto's `u^(-1/alpha)`),
/// and a 24-bit uniform stops at 2^-24, which truncates heavy-tailed laws
/// where their second moment lives (lognormal scv 100: -10% of E[S^2]).
/// This uniform has the f32 resolution everywhere instead: it is the 64-bit
/// binary fraction of two words rounded down to 24 significant bits, as in
/// Downey, "Generating pseudo-random floating-point values" (2007) and
/// Campbell, "Uniform random floats" (2014), except that the common path
/// keeps a fixed point grid and one word (relative step at most 2^-15).
#[inline(always)]
pub fn uniform_full_common(w: u32) -> f32 {
    (w >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// The full-range uniform's rare path (`w1 < FULL_RARE`, probability 2^-9):
/// the leading zeros of the 64-bit fraction `w1:w2` set the binade
/// `[2^-(k+1), 2^-k)` and the 23 bits after the leading one the mantissa,
/// so `P(u < x) = x` to within one f32 ulp of `x` for every `x >= 2^-40`.
/// Below 2^-40 (probability 2^-40) the grid coarsens: the mantissa runs out
/// of bits, down to `u = 2^-65` when both words are 0. Bit 0 of `w2` is never
/// used: callers take it as a free random bit (the normal's sign).
#[inline(always)]
pub fn uniform_full_rare(w1: u32, w2: u32) -> f32 {
    // Both cases computed, then a select (branch-free for the CPU's lanes;
    // for w1 >= FULL_RARE the result is meaningless and unused).
    // w1 != 0: 9 <= k <= 31, the mantissa takes 31 - k bits of w1, k - 8 of w2.
    let k1 = w1.leading_zeros();
    let hi = w1.wrapping_shl(k1) | w2.wrapping_shr(32 - k1);
    let m1 = (hi >> 8) & 0x7f_ffff;
    // w1 == 0: the binade from w2 alone (bit 0 cleared; 32 zeros when v == 0).
    let v = w2 & !1;
    let k2 = v.leading_zeros();
    let m2 = (v.wrapping_shl(k2) >> 8) & 0x7f_ffff;
    let (k, m) = if w1 != 0 { (k1, m1) } else { (32 + k2, m2) };
    f32::from_bits(((126 - k) << 23) | m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer vectors from Random123 1.14 `tests/kat_vectors`
    /// (lines `philox4x32 10 ...`).
    #[test]
    fn philox_known_answers() {
        assert_eq!(
            philox4x32_10([0, 0, 0, 0], [0, 0]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn streams_differ_by_point_and_rep_and_seed() {
        let a = Stream::new(1, 0, 0).state();
        assert_ne!(a, Stream::new(1, 0, 1).state());
        assert_ne!(a, Stream::new(1, 1, 0).state());
        assert_ne!(a, Stream::new(2, 0, 0).state());
        assert_eq!(a, Stream::new(1, 0, 0).state());
    }

    #[test]
    fn lanes_are_independent_streams() {
        let mut lanes = Lanes::<8>::new(5, 2, [0, 1, 2, 3, 10, 11, 12, 99]);
        let mut single: Vec<Stream> = [0, 1, 2, 3, 10, 11, 12, 99]
            .iter()
            .map(|&r| Stream::new(5, 2, r))
            .collect();
        for _ in 0..100 {
            let wide = lanes.next_u32();
            for (l, s) in single.iter_mut().enumerate() {
                assert_eq!(wide[l], s.next_u32());
            }
        }
        assert_eq!(lanes.lane(7), single[7]);
    }

    #[test]
    fn uniforms_are_in_range_and_mean_half() {
        let mut s = Stream::new(7, 3, 5);
        let n = 200_000;
        let (mut sum_a, mut sum_b, mut sum_c) = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..n {
            let a = s.uniform_open0();
            let b = s.uniform_closed0();
            let (c, _) = s.uniform_full();
            assert!(a > 0.0 && a <= 1.0);
            assert!((0.0..1.0).contains(&b));
            assert!(c > 0.0 && c < 1.0);
            sum_a += f64::from(a);
            sum_b += f64::from(b);
            sum_c += f64::from(c);
        }
        // sd of the mean of n uniforms is 0.2887/sqrt(n) = 6.5e-4; 5 sd.
        assert!((sum_a / n as f64 - 0.5).abs() < 3.3e-3);
        assert!((sum_b / n as f64 - 0.5).abs() < 3.3e-3);
        assert!((sum_c / n as f64 - 0.5).abs() < 3.3e-3);
    }

    /// The 64-bit fraction `w1:w2 / 2^64` (bit 0 of `w2` cleared) rounded
    /// down to 24 significant bits, in exact integer arithmetic: what the
    /// full-range uniform's rare path must give.
    fn truncated_fraction(w1: u32, w2: u32) -> f32 {
        let w = (u64::from(w1) << 32) | u64::from(w2 & !1);
        if w == 0 {
            return f32::from_bits(62 << 23);
        }
        let k = w.leading_zeros();
        // 24 significant bits from the leading one down (zeros past bit 0).
        let top = (w << k) >> 40;
        (top as f64 * 2f64.powi(-(24 + k as i32))) as f32
    }

    #[test]
    fn full_uniform_rare_path_is_the_truncated_64_bit_fraction() {
        let mut s = Stream::new(3, 1, 4);
        for i in 0..200_000u32 {
            let w2 = s.next_u32();
            // First words of every length below FULL_RARE, and zero.
            let w1 = match i % 24 {
                0 => 0,
                b => s.next_u32() >> (8 + b),
            };
            let u = uniform_full_rare(w1, w2);
            assert_eq!(u, truncated_fraction(w1, w2), "w1 {w1:#x} w2 {w2:#x}");
            assert!(u > 0.0 && u < 2f32.powi(-9));
            // Bit 0 of w2 is free: it never changes the uniform.
            assert_eq!(u, uniform_full_rare(w1, w2 ^ 1));
        }
        // Full resolution down to 2^-40: a step of one ulp is 2^-23 relative.
        let u = uniform_full_rare(1 << 4, 1 << 13);
        assert_eq!(u, 2f32.powi(-28) * (1.0 + 2f32.powi(-23)));
        assert_eq!(uniform_full_rare(0, 0), 2f32.powi(-65));
    }

    #[test]
    fn full_uniform_common_path_is_the_24_bit_grid() {
        for w in [FULL_RARE, FULL_RARE + 255, 0x8000_0000, u32::MAX] {
            assert_eq!(uniform_full_common(w), (w >> 8) as f32 / 16_777_216.0);
        }
        assert_eq!(uniform_full_common(FULL_RARE), 2f32.powi(-9));
        assert_eq!(uniform_full_common(u32::MAX), 1.0 - 2f32.powi(-24));
    }

    #[test]
    fn full_uniform_lanes_match_streams_and_hit_the_rare_path() {
        let reps = [0, 1, 2, 3, 10, 11, 12, 99];
        let mut lanes = Lanes::<8>::new(5, 2, reps);
        let mut single: Vec<Stream> = reps.iter().map(|&r| Stream::new(5, 2, r)).collect();
        let mut rare = 0;
        for _ in 0..20_000 {
            let (u, last) = lanes.uniform_full();
            for (l, s) in single.iter_mut().enumerate() {
                let (v, w) = s.uniform_full();
                assert_eq!((u[l].to_bits(), last[l]), (v.to_bits(), w));
                rare += usize::from(v < 2f32.powi(-9));
            }
        }
        // 160000 draws, 2^-9 of them rare: 312 expected, sd 18.
        assert!((220..=410).contains(&rare), "{rare} rare draws");
        assert_eq!(lanes.lane(3), single[3]);
    }
}
