//! Peak f32 arithmetic rate of this CPU: the twin of `shaders/peak.wgsl`,
//! the CPU's side of `qsweep bench`'s fraction of peak. Independent
//! multiply-add chains and nothing else, compiled as the engine's loops are
//! (`N` lanes, AVX2 where present).

/// Independent multiply-add chains of `N` lanes in the peak loop: enough to
/// cover the latency of the floating-point pipes.
const PEAK_CHAINS: usize = 12;

/// `rounds` of `x = x·k + m` on [`PEAK_CHAINS`] × `N` independent f32
/// values; returns their sum so nothing is dead code.
#[inline(always)]
fn multiply_add_chains<const N: usize>(rounds: u64) -> f32 {
    let k = std::hint::black_box(0.9999f32);
    let m = std::hint::black_box(0.0001f32);
    let mut acc: [[f32; N]; PEAK_CHAINS] =
        std::array::from_fn(|c| std::array::from_fn(|l| (c * N + l) as f32 * 1e-3));
    for _ in 0..rounds {
        for chain in acc.iter_mut() {
            for x in chain.iter_mut() {
                *x = *x * k + m;
            }
        }
    }
    acc.iter().flatten().sum()
}

/// [`multiply_add_chains`] compiled as the engine is (AVX2 where present).
fn multiply_add_chains_best<const N: usize>(rounds: u64) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<const N: usize>(rounds: u64) -> f32 {
            multiply_add_chains::<N>(rounds)
        }
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { avx2::<N>(rounds) };
    }
    multiply_add_chains::<N>(rounds)
}

/// Operations per second (a multiply-add counting two, as in
/// `qsweep_gpu::opcount`) of `N`-lane chains on `threads` threads, measured
/// for about `seconds`.
pub(super) fn ops_per_second<const N: usize>(threads: usize, seconds: f64) -> f64 {
    let ops_per_round = (PEAK_CHAINS * N * 2) as f64;
    let mut rounds = 1u64 << 16;
    loop {
        let started = std::time::Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| std::hint::black_box(multiply_add_chains_best::<N>(rounds)));
            }
        });
        let secs = started.elapsed().as_secs_f64();
        if secs >= seconds || rounds >= 1 << 40 {
            return threads as f64 * rounds as f64 * ops_per_round / secs;
        }
        let grow = (1.2 * seconds / secs.max(1e-6)).clamp(2.0, 64.0);
        rounds = (rounds as f64 * grow) as u64;
    }
}
