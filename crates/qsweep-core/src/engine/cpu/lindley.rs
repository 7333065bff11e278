//! One FIFO server per replication: the CPU twin of `shaders/lindley.wgsl`,
//! run on `N` replications in lock step (each lane does exactly what one
//! GPU invocation does).

use super::record::Recorders;
use crate::contract::{PointParams, Reneging, RepResult};
use crate::engine::Watch;
use crate::sampling::{ln_keep, Sampler, ANY};

/// One FIFO server per lane: Lindley's recursion W' = max(0, W + S − A)
/// (Lindley, "The theory of queues with a single server", 1952), segment by
/// segment (`contract::Segments`: each its own stream, started from the
/// workload the scan of the segments' maps gives), handing
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

/// The Lindley loop for arrival kind `A`, thinning `T` and service kind `S`,
/// over the replication's segments in turn, as a GPU invocation does when
/// replications alone fill the device (`shaders/lindley.wgsl`)
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
    let mut rec = Recorders::<N>::new(p);
    let segments = p.segments();
    let total = p.warmup + p.customers;
    let abandon = p.reneging() == Reneging::Abandon;
    // The workload just after the arrival before the segment's first
    // customer (that customer's predecessor's wait plus service): zero, an
    // empty queue, for the first segment.
    let mut start = [0.0f32; N];
    'segments: for k in 0..segments.count {
        if k > 0 {
            rng.enter_segment(p, reps, k);
        }
        let (first, end) = segments.range(k, total);
        let mut wait = [0.0f32; N];
        let mut prev_service = start;
        // The segment's map V ↦ max(V + shift, from_empty): `shift` sums
        // S − A, and (wait0, prev0) run the recursion from an empty queue.
        let mut shift = [0.0f32; N];
        let mut wait0 = [0.0f32; N];
        let mut prev0 = [0.0f32; N];
        for i in first..end {
            if i % Watch::EVERY == Watch::EVERY - 1
                && watch.tick(u64::from(Watch::EVERY) * active as u64)
            {
                break 'segments;
            }
            let a = rng.next_interarrival_as::<A, T>(p, lk);
            for l in 0..N {
                wait[l] = (wait[l] + prev_service[l] - a[l]).max(0.0);
                wait0[l] = (wait0[l] + prev0[l] - a[l]).max(0.0);
            }
            let service = rng.draw_as::<S>(&p.service);
            // The work the request brings: none if it abandons (its wait
            // beyond its patience, `Sampler::late`), V' = max(V + S·1[V <=
            // θ] − A, 0); `work_brought` in the shader.
            let late = rng.late(p, &wait);
            prev_service = service;
            if abandon {
                for l in 0..N {
                    if late[l] {
                        prev_service[l] = 0.0;
                    }
                }
            }
            for l in 0..N {
                shift[l] += prev_service[l] - a[l];
            }
            prev0 = prev_service;
            on_customer(i, &wait);
            if i >= p.warmup {
                rec.record_request(hist, active, &wait, &service, &a, &late);
            }
        }
        rec.end_segment();
        for l in 0..N {
            start[l] = (start[l] + shift[l]).max(wait0[l] + prev0[l]);
        }
    }
    rec.finish(p.customers, rng.status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Law, LawKind};

    /// A replication cut into segments is Lindley's recursion run straight
    /// through its segments' draws in order: the scan of the segments'
    /// maps starts each one from exactly the workload the previous left.
    #[test]
    fn segments_continue_the_recursion_across_their_boundaries() {
        let p = PointParams {
            arrival: Law::unclamped(LawKind::Exp, [1.0, 0.0, 0.0, 0.0]),
            service: Law::unclamped(LawKind::Exp, [0.95, 0.0, 0.0, 0.0]),
            customers: 30_000,
            warmup: 2000,
            seed_lo: 3,
            point_index: 1,
            inv_hist_scale: 1.0,
            ..PointParams::default()
        }
        .with_ln_keep();
        let segments = p.segments();
        assert_eq!((segments.count, segments.length), (4, 8000));
        let total = p.warmup + p.customers;
        let mut traced = Vec::new();
        let mut hist = vec![0u32; crate::contract::HIST_BINS as usize];
        let [result] =
            lindley_traced::<1, _>(&p, [5], 1, &[], &mut hist, &mut |_, w| traced.push(w[0]));
        assert_eq!(traced.len(), total as usize);
        assert_eq!(result.customers, p.customers);

        // The reference: one recursion in f64 over the same draws.
        let mut rng = Sampler::<1>::new(&p, [5], &[]);
        let lk = ln_keep(&p);
        let (mut wait, mut prev_service) = (0.0f64, 0.0f64);
        let mut busy_boundaries = 0;
        for k in 0..segments.count {
            rng.enter_segment(&p, [5], k);
            let (first, end) = segments.range(k, total);
            if k > 0 && wait + prev_service > 1.0 {
                busy_boundaries += 1;
            }
            for i in first..end {
                let [a] = rng.next_interarrival_as::<ANY, ANY>(&p, lk);
                wait = (wait + prev_service - f64::from(a)).max(0.0);
                prev_service = f64::from(rng.draw_as::<ANY>(&p.service)[0]);
                let got = f64::from(traced[i as usize]);
                assert!(
                    (got - wait).abs() <= 1e-4 * wait.max(1.0),
                    "customer {i} (segment {k}): {got} vs {wait}"
                );
            }
        }
        // The check has teeth: queues were busy across boundaries, where
        // starting a segment empty would be wrong.
        assert!(busy_boundaries >= 2, "{busy_boundaries}");
    }
}
