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
    /// The stream of replication `rep` of grid point `point` under `seed`.
    /// Counter word 2 is a stream tag (0: the simulation stream) so that later
    /// features can derive further independent streams from the same key.
    pub fn new(seed: u64, point: u32, rep: u32) -> Self {
        let key = [seed as u32, (seed >> 32) as u32];
        let mut s = philox4x32_10([rep, point, 0, 0], key);
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
    /// backend; never 0, so `-ln(u)` is always finite.
    #[inline(always)]
    pub fn uniform_open0(&mut self) -> f32 {
        ((self.next_u32() >> 8) + 1) as f32 * (1.0 / 16_777_216.0)
    }

    /// Uniform on [0, 1): 24 random bits.
    #[inline(always)]
    pub fn uniform_closed0(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// Uniform on the open interval (0, 1), symmetric about 1/2: for inverse
    /// CDFs that are infinite at both ends (the normal).
    #[inline(always)]
    pub fn uniform_open(&mut self) -> f32 {
        ((self.next_u32() >> 9) as f32 + 0.5) * (1.0 / 8_388_608.0)
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
        let mut s = [[0u32; N]; 4];
        for (l, &rep) in reps.iter().enumerate() {
            let one = Stream::new(seed, point, rep).state();
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
        for (now, was) in self.s.iter_mut().zip(&before) {
            for l in 0..N {
                if !active[l] {
                    now[l] = was[l];
                }
            }
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
        self.next_u32()
            .map(|x| (x >> 8) as f32 * (1.0 / 16_777_216.0))
    }

    #[inline(always)]
    pub fn uniform_open(&mut self) -> [f32; N] {
        self.next_u32()
            .map(|x| ((x >> 9) as f32 + 0.5) * (1.0 / 8_388_608.0))
    }
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
        let (mut sum_a, mut sum_b) = (0.0f64, 0.0f64);
        for _ in 0..n {
            let a = s.uniform_open0();
            let b = s.uniform_closed0();
            let c = s.uniform_open();
            assert!(a > 0.0 && a <= 1.0);
            assert!((0.0..1.0).contains(&b));
            assert!(c > 0.0 && c < 1.0);
            sum_a += f64::from(a);
            sum_b += f64::from(b);
        }
        // sd of the mean of n uniforms is 0.2887/sqrt(n) = 6.5e-4; 5 sd.
        assert!((sum_a / n as f64 - 0.5).abs() < 3.3e-3);
        assert!((sum_b / n as f64 - 0.5).abs() < 3.3e-3);
    }
}
