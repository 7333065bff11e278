//! Drawing from a [`Law`]: the CPU twin of `shaders/sampling.wgsl`.
//!
//! Both sides consume the same random words in the same order and do the
//! same f32 arithmetic, so per-replication results differ only by the last
//! bits of transcendental functions. Keep the two files in step: every
//! function here has a WGSL namesake.
//!
//! Samplers (all f32):
//! - exponential, Weibull, bounded Pareto, hyperexponential, uniform and
//!   empirical laws by inversion (one word per draw, two for hyperexp);
//! - the normal by Giles' single-precision `erfinv` ("Approximating the erfinv
//!   function", GPU Computing Gems Jade, 2011), so a lognormal costs one word;
//! - the gamma by Marsaglia and Tsang, "A simple method for generating gamma
//!   variables", ACM TOMS 26(3), 2000, with the `U^(1/a)` boost for a < 1.

use crate::contract::{law_kind, rep_status, thinning, Law, PointParams};
use crate::rng::Stream;

/// Iteration bound of the gamma rejection loop (acceptance is above 95%, so
/// hitting it means broken parameters, reported through `RepResult::status`).
pub const GAMMA_MAX_TRIES: u32 = 64;
/// Erlang sums with more phases than this use the gamma sampler.
pub const ERLANG_DIRECT_MAX: u32 = 16;
/// Cap on the number of stream arrivals summed for one thinned arrival.
pub const GEOMETRIC_CAP: u32 = 1 << 24;

/// Per-replication sampling state: the stream plus a sticky status word.
pub struct Sampler<'a> {
    pub stream: Stream,
    pub table: &'a [f32],
    pub status: u32,
}

/// sqrt(2) · erfinv(2u − 1): the standard normal quantile at `u` ∈ (0, 1).
#[inline(always)]
pub fn normal_quantile(u: f32) -> f32 {
    let x = 2.0 * u - 1.0;
    // w = −ln(1 − x²) computed as −ln(4u(1 − u)) to avoid cancellation.
    let mut w = -(4.0 * u * (1.0 - u)).ln();
    let p = if w < 5.0 {
        w -= 2.5;
        let mut p = 2.810_226_4e-8_f32;
        p = 3.432_739_4e-7 + p * w;
        p = -3.523_387_7e-6 + p * w;
        p = -4.391_506_5e-6 + p * w;
        p = 2.185_808_7e-4 + p * w;
        p = -1.253_725_e-3 + p * w;
        p = -4.177_681_6e-3 + p * w;
        p = 2.466_407_3e-1 + p * w;
        1.501_409_4 + p * w
    } else {
        w = w.sqrt() - 3.0;
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
    std::f32::consts::SQRT_2 * p * x
}

impl<'a> Sampler<'a> {
    pub fn new(p: &PointParams, rep: u32, table: &'a [f32]) -> Self {
        Self {
            stream: Stream::new(p.seed(), p.point_index, rep),
            table,
            status: rep_status::OK,
        }
    }

    /// Exponential with the given mean, by inversion.
    #[inline(always)]
    pub fn exponential(&mut self, mean: f32) -> f32 {
        -mean * self.stream.uniform_open0().ln()
    }

    /// Gamma(shape, scale) by Marsaglia–Tsang.
    pub fn gamma(&mut self, shape: f32, scale: f32) -> f32 {
        let boosted = shape < 1.0;
        let a = if boosted { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        let mut result = d;
        let mut accepted = false;
        for _ in 0..GAMMA_MAX_TRIES {
            let z = normal_quantile(self.stream.uniform_open());
            let v = 1.0 + c * z;
            let u = self.stream.uniform_open0();
            if v <= 0.0 {
                continue;
            }
            let v3 = v * v * v;
            if u.ln() < 0.5 * z * z + d - d * v3 + d * v3.ln() {
                result = d * v3;
                accepted = true;
                break;
            }
        }
        if !accepted {
            self.status |= rep_status::SAMPLER_BOUND;
        }
        if boosted {
            let u = self.stream.uniform_open0();
            result *= (u.ln() / shape).exp();
        }
        result * scale
    }

    /// Sum of `m` exponential phases of the given mean (Erlang-m).
    #[inline(always)]
    pub fn erlang(&mut self, m: u32, phase_mean: f32) -> f32 {
        if m > ERLANG_DIRECT_MAX {
            return self.gamma(m as f32, phase_mean);
        }
        let mut log_sum = 0.0f32;
        for _ in 0..m {
            log_sum += self.stream.uniform_open0().ln();
        }
        -phase_mean * log_sum
    }

    /// One draw from `law`, scaled and clamped.
    #[inline(always)]
    pub fn draw(&mut self, law: &Law) -> f32 {
        let x = match law.kind {
            law_kind::EXP => self.exponential(law.p[0]),
            law_kind::DET => law.p[0],
            law_kind::ERLANG => self.erlang(law.n, law.p[0]),
            law_kind::GAMMA => self.gamma(law.p[0], law.p[1]),
            law_kind::HYPEREXP => {
                let branch = self.stream.uniform_closed0();
                let mean = if branch < law.p[0] {
                    law.p[1]
                } else {
                    law.p[2]
                };
                self.exponential(mean)
            }
            law_kind::LOGNORMAL => {
                (law.p[0] + law.p[1] * normal_quantile(self.stream.uniform_open())).exp()
            }
            law_kind::WEIBULL => {
                let e = -self.stream.uniform_open().ln();
                law.p[0] * (law.p[1] * e.ln()).exp()
            }
            law_kind::PARETO => {
                let (alpha, lo, hi) = (law.p[0], law.p[1], law.p[2]);
                let q = 1.0 - (alpha * (lo / hi).ln()).exp();
                let u = self.stream.uniform_closed0();
                lo * (-(1.0 - u * q).ln() / alpha).exp()
            }
            law_kind::UNIFORM => law.p[0] + law.p[1] * self.stream.uniform_closed0(),
            law_kind::EMPIRICAL => {
                let u = self.stream.uniform_closed0();
                let base = law.offset as usize;
                if law.n < 2 {
                    self.table[base]
                } else {
                    let pos = u * (law.n - 1) as f32;
                    let i = (pos as u32).min(law.n - 2);
                    let frac = pos - i as f32;
                    let a = self.table[base + i as usize];
                    let b = self.table[base + i as usize + 1];
                    a + frac * (b - a)
                }
            }
            _ => 0.0,
        };
        (law.scale * x).max(law.lo).min(law.hi)
    }

    /// Sum of `m` independent draws from `law`, in closed form where the law
    /// is closed under convolution (exp, Erlang, gamma, det) and by summing
    /// otherwise. Arrival laws carry no clamps, which the shortcuts rely on.
    pub fn draw_sum(&mut self, law: &Law, m: u32) -> f32 {
        match law.kind {
            law_kind::EXP => law.scale * self.erlang(m, law.p[0]),
            law_kind::ERLANG => law.scale * self.erlang(m * law.n, law.p[0]),
            law_kind::GAMMA => law.scale * self.gamma(m as f32 * law.p[0], law.p[1]),
            law_kind::DET => law.scale * law.p[0] * m as f32,
            _ => {
                let mut sum = 0.0f32;
                for _ in 0..m {
                    sum += self.draw(law);
                }
                sum
            }
        }
    }

    /// Interarrival time at the simulated queue. `ln_keep` is
    /// ln(1 − 1/route_n), precomputed once per replication for random routing.
    #[inline(always)]
    pub fn next_interarrival(&mut self, p: &PointParams, ln_keep: f32) -> f32 {
        match p.thinning {
            thinning::RANDOM if p.route_n > 1 => {
                if p.arrival.kind == law_kind::EXP {
                    // Poisson thinning: a Poisson stream split at random stays Poisson.
                    self.exponential(p.arrival.scale * p.arrival.p[0] * p.route_n as f32)
                } else {
                    // Arrivals skipped before one joins this queue: geometric.
                    let u = self.stream.uniform_open0();
                    let m = 1.0 + (u.ln() / ln_keep).floor();
                    let m = if m < GEOMETRIC_CAP as f32 {
                        m as u32
                    } else {
                        GEOMETRIC_CAP
                    };
                    self.draw_sum(&p.arrival, m)
                }
            }
            thinning::EVERY_NTH if p.route_n > 1 => self.draw_sum(&p.arrival, p.route_n),
            _ => self.draw(&p.arrival),
        }
    }
}

/// ln(1 − 1/route_n) in f32, as the kernels compute it.
pub fn ln_keep(p: &PointParams) -> f32 {
    if p.route_n > 1 {
        (1.0 - 1.0 / p.route_n as f32).ln()
    } else {
        -1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(kind: u32, p: [f32; 4]) -> Law {
        Law {
            kind,
            p,
            scale: 1.0,
            lo: 0.0,
            hi: f32::MAX,
            ..Law::default()
        }
    }

    fn sample_moments(l: &Law, n: usize) -> (f64, f64) {
        let table = [1.0f32, 2.0, 4.0];
        let mut s = Sampler {
            stream: Stream::new(11, 0, 0),
            table: &table,
            status: 0,
        };
        let (mut m1, mut m2) = (0.0f64, 0.0f64);
        for _ in 0..n {
            let x = f64::from(s.draw(l));
            m1 += x;
            m2 += x * x;
        }
        assert_eq!(s.status, 0);
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
    fn normal_quantile_matches_known_values() {
        // Phi^-1(0.975) = 1.959964, Phi^-1(0.5) = 0, Phi^-1(1e-6) = -4.753424.
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 2e-5);
        assert!(normal_quantile(0.5).abs() < 1e-6);
        assert!((normal_quantile(1e-6) + 4.753_424).abs() < 5e-4);
    }

    #[test]
    fn laws_have_their_means() {
        assert_mean(law(law_kind::EXP, [2.0, 0.0, 0.0, 0.0]), 2.0, 4.0);
        assert_mean(law(law_kind::DET, [1.5, 0.0, 0.0, 0.0]), 1.5, 1e-12);
        let mut erl = law(law_kind::ERLANG, [0.5, 0.0, 0.0, 0.0]);
        erl.n = 4;
        assert_mean(erl, 2.0, 1.0);
        erl.n = 40;
        assert_mean(erl, 20.0, 10.0);
        assert_mean(law(law_kind::GAMMA, [0.3, 2.0, 0.0, 0.0]), 0.6, 1.2);
        assert_mean(law(law_kind::GAMMA, [7.5, 0.5, 0.0, 0.0]), 3.75, 1.875);
        assert_mean(law(law_kind::HYPEREXP, [0.9, 0.5, 4.5, 0.0]), 0.9, 6.0);
        // lognormal mu=0, sigma=0.5: mean e^0.125, var (e^0.25-1)e^0.25
        assert_mean(
            law(law_kind::LOGNORMAL, [0.0, 0.5, 0.0, 0.0]),
            0.125f64.exp(),
            0.365,
        );
        // Weibull scale 1, shape 2: mean Gamma(1.5) = 0.886227, var 1 - 0.785398
        assert_mean(
            law(law_kind::WEIBULL, [1.0, 0.5, 0.0, 0.0]),
            0.886_227,
            0.2146,
        );
        // bounded Pareto alpha 2 on [1, 10]: mean = 2(1 - 0.1)/(1 - 0.01) = 1.818182
        assert_mean(law(law_kind::PARETO, [2.0, 1.0, 10.0, 0.0]), 1.818_182, 1.4);
        assert_mean(law(law_kind::UNIFORM, [1.0, 2.0, 0.0, 0.0]), 2.0, 1.0 / 3.0);
        let mut emp = law(law_kind::EMPIRICAL, [0.0; 4]);
        emp.n = 3;
        assert_mean(emp, 2.25, 0.8);
    }

    #[test]
    fn clamps_apply_after_scale() {
        let mut l = law(law_kind::EXP, [1.0, 0.0, 0.0, 0.0]);
        l.scale = 2.0;
        l.lo = 0.5;
        l.hi = 3.0;
        let table = [0.0f32];
        let mut s = Sampler {
            stream: Stream::new(1, 0, 0),
            table: &table,
            status: 0,
        };
        for _ in 0..10_000 {
            let x = s.draw(&l);
            assert!((0.5..=3.0).contains(&x));
        }
    }

    #[test]
    fn thinned_arrivals_have_scaled_means() {
        for (kind, thin) in [
            (law_kind::EXP, thinning::RANDOM),
            (law_kind::UNIFORM, thinning::RANDOM),
            (law_kind::EXP, thinning::EVERY_NTH),
            (law_kind::UNIFORM, thinning::EVERY_NTH),
        ] {
            let mut p = PointParams {
                arrival: law(kind, [0.0, 2.0, 0.0, 0.0]),
                thinning: thin,
                route_n: 5,
                ..PointParams::default()
            };
            if kind == law_kind::EXP {
                p.arrival.p[0] = 1.0;
            }
            let table = [0.0f32];
            let mut s = Sampler::new(&p, 0, &table);
            let lk = ln_keep(&p);
            let n = 200_000;
            let mean: f64 = (0..n)
                .map(|_| f64::from(s.next_interarrival(&p, lk)))
                .sum::<f64>()
                / n as f64;
            assert!(
                (mean - 5.0).abs() < 0.05,
                "kind {kind} thinning {thin}: {mean}"
            );
        }
    }
}
