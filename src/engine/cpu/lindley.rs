//! One FIFO server per replication: the CPU twin of `shaders/lindley.wgsl`,
//! run on `N` replications in lock step (each lane does exactly what one
//! GPU invocation does).

use super::record::Recorders;
use crate::contract::{PointParams, RepResult};
use crate::engine::Watch;
use crate::sampling::{ln_keep, Sampler, ANY};

/// One FIFO server per lane: Lindley's recursion W' = max(0, W + S − A)
/// (Lindley, "The theory of queues with a single server", 1952), handing
/// every customer's wait (warm-up included) to `on_customer(index, waits of
/// the N lanes)`: the per-customer trace of a warm-up pilot (`warmup`).
/// Reads the laws at run time; [`simulate_lanes`](super::simulate_lanes) is
/// the compiled-per-law path the engine runs.
pub fn lindley_traced<const N: usize, F: FnMut(u32, &[f32; N])>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    on_customer: &mut F,
) -> [RepResult; N] {
    lindley_loop::<N, ANY, ANY, ANY, F>(p, reps, active, table, hist, on_customer, Watch::none())
}

/// The Lindley loop for arrival kind `A`, thinning `T` and service kind `S`
/// (each [`ANY`] or fixed, as in [`Sampler::draw_as`]). Stops early, its
/// results then meaningless, once `watch` says so (checked every
/// [`Watch::EVERY`] customers).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn lindley_loop<
    const N: usize,
    const A: u32,
    const T: u32,
    const S: u32,
    F: FnMut(u32, &[f32; N]),
>(
    p: &PointParams,
    reps: [u32; N],
    active: usize,
    table: &[f32],
    hist: &mut [u32],
    on_customer: &mut F,
    watch: Watch<'_>,
) -> [RepResult; N] {
    let mut rng = Sampler::<N>::new(p, reps, table);
    let lk = ln_keep(p);
    let mut rec = Recorders::<N>::new(p.inv_hist_scale);
    let mut wait = [0.0f32; N];
    let mut prev_service = [0.0f32; N];
    for i in 0..p.warmup + p.customers {
        if i % Watch::EVERY == Watch::EVERY - 1
            && watch.tick(u64::from(Watch::EVERY) * active as u64)
        {
            break;
        }
        let a = rng.next_interarrival_as::<A, T>(p, lk);
        for l in 0..N {
            wait[l] = (wait[l] + prev_service[l] - a[l]).max(0.0);
        }
        prev_service = rng.draw_as::<S>(&p.service);
        on_customer(i, &wait);
        if i >= p.warmup {
            rec.record(hist, active, &wait, &prev_service, &a);
        }
    }
    rec.finish(p.customers, rng.status)
}
