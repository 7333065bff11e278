// Random streams: the WGSL twin of src/rng.rs (read its doc comment first).
// Philox4x32-10 keys one stream per (seed, point, replication); the inner
// loops draw from xoshiro128++ seeded by that Philox block.

const PHILOX_M0: u32 = 0xD2511F53u;
const PHILOX_M1: u32 = 0xCD9E8D57u;
const PHILOX_W0: u32 = 0x9E3779B9u;
const PHILOX_W1: u32 = 0xBB67AE85u;

// 32x32 -> 64-bit product as (hi, lo): WGSL has no widening multiply.
fn mul_hi_lo(a: u32, b: u32) -> vec2<u32> {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let lo_lo = a_lo * b_lo;
    let hi_lo = a_hi * b_lo;
    let lo_hi = a_lo * b_hi;
    let hi_hi = a_hi * b_hi;
    let cross = (lo_lo >> 16u) + (hi_lo & 0xffffu) + lo_hi;
    let hi = hi_hi + (hi_lo >> 16u) + (cross >> 16u);
    return vec2<u32>(hi, a * b);
}

fn philox4x32_10(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = key;
    for (var round = 0u; round < 10u; round++) {
        if (round > 0u) {
            k = k + vec2<u32>(PHILOX_W0, PHILOX_W1);
        }
        let p0 = mul_hi_lo(PHILOX_M0, c.x);
        let p1 = mul_hi_lo(PHILOX_M1, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    }
    return c;
}

// xoshiro128++ state of the current invocation's replication.
var<private> rng_s: vec4<u32>;

fn rng_init(seed_lo: u32, seed_hi: u32, point: u32, rep: u32) {
    rng_init_segment(seed_lo, seed_hi, point, rep, 0u);
}

// Twin of `Stream::segment`: counter word 3 is the segment of a one-server
// replication (0 for every other kernel).
fn rng_init_segment(seed_lo: u32, seed_hi: u32, point: u32, rep: u32, segment: u32) {
    rng_s = philox4x32_10(vec4<u32>(rep, point, 0u, segment), vec2<u32>(seed_lo, seed_hi));
    if (all(rng_s == vec4<u32>(0u))) {
        rng_s.x = 1u;
    }
}

fn rotl(x: u32, k: u32) -> u32 {
    return (x << k) | (x >> (32u - k));
}

fn next_u32() -> u32 {
    let result = rotl(rng_s.x + rng_s.w, 7u) + rng_s.x;
    let t = rng_s.y << 9u;
    rng_s.z ^= rng_s.x;
    rng_s.w ^= rng_s.y;
    rng_s.y ^= rng_s.z;
    rng_s.x ^= rng_s.w;
    rng_s.z ^= t;
    rng_s.w = rotl(rng_s.w, 11u);
    return result;
}

// Uniform on (0, 1]: never 0, so -log(u) is finite.
fn uniform_open0() -> f32 {
    return f32((next_u32() >> 8u) + 1u) * (1.0 / 16777216.0);
}

// Uniform on [0, 1) of one word: its top 24 bits (closed0_of in src/rng.rs).
fn closed0_of(w: u32) -> f32 {
    return f32(w >> 8u) * (1.0 / 16777216.0);
}

// Uniform on [0, 1).
fn uniform_closed0() -> f32 {
    return closed0_of(next_u32());
}

// The last word the full-range uniform drew: its bit 0 is unused (the
// normal's sign).
var<private> rng_last: u32;

// The full-range uniform on [2^-65, 1) (see Stream::uniform_full in
// src/rng.rs): one word on the common path, a second with probability 2^-9.
fn uniform_full() -> f32 {
    let w = next_u32();
    if (w >= FULL_RARE) {
        rng_last = w;
        return f32(w >> 8u) * (1.0 / 16777216.0);
    }
    let w2 = next_u32();
    rng_last = w2;
    return uniform_full_rare(w, w2);
}

// The rare path: the leading zeros of the 64-bit fraction w1:w2 set the
// binade, the 23 bits after the leading one the mantissa.
fn uniform_full_rare(w1: u32, w2: u32) -> f32 {
    var k: u32;
    var m: u32;
    if (w1 != 0u) {
        k = countLeadingZeros(w1);
        let hi = (w1 << k) | (w2 >> (32u - k));
        m = (hi >> 8u) & 0x7fffffu;
    } else {
        let v = w2 & 0xfffffffeu;
        let k2 = countLeadingZeros(v);
        k = 32u + k2;
        m = ((v << (k2 & 31u)) >> 8u) & 0x7fffffu;
    }
    return bitcast<f32>(((126u - k) << 23u) | m);
}
