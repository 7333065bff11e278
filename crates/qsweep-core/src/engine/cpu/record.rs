//! Recording a customer: the CPU twin of `Recorder` and `rec_init`,
//! `rec_record`, `rec_flush` and `rec_finish` in `shaders/common.wgsl`.
//!
//! Every kernel hands each recorded customer's wait, service and
//! interarrival time here. The means are f32 sums over blocks of
//! `SUM_BLOCK` customers folded into Kahan sums, in the GPU's order, so
//! the two engines round alike; the wait also goes to the slot's one wait
//! histogram (`hist_bin`), from which the host reads percentiles.

use crate::contract::{hist_bin, PointParams, Reneging, RepResult, HIST_BINS, SUM_BLOCK};

/// Classic Kahan summation (Kahan 1965), in f32 as on the GPU.
#[derive(Clone, Copy, Default)]
struct Kahan {
    sum: f32,
    carry: f32,
}

impl Kahan {
    #[inline(always)]
    fn add(&mut self, x: f32) {
        let y = x - self.carry;
        let t = self.sum + y;
        self.carry = (t - self.sum) - y;
        self.sum = t;
    }
}

#[inline(always)]
fn add<const N: usize>(acc: &mut [f32; N], x: &[f32; N]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a += x;
    }
}

#[inline(always)]
fn max<const N: usize>(acc: &mut [f32; N], x: &[f32; N]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a = a.max(*x);
    }
}

/// Per-replication accumulators of `N` lanes (the twin of `Recorder` in
/// `shaders/common.wgsl`): f32 block sums folded into Kahan sums.
///
/// Laid out for the lock-step loops, whose state lives in the stack frame:
/// the lane arrays come first, so with 8 lanes each is one aligned AVX2
/// vector, and the cache-line alignment makes the compiler align the whole
/// frame, so the layout no longer depends on the callers' frames. Left to
/// chance, vectors straddling cache lines cut the Lindley loop's throughput
/// by a third when this file was split out of `cpu.rs` (a split store
/// cannot forward to the loads that follow it).
#[repr(C, align(64))]
pub(super) struct Recorders<const N: usize> {
    block: [[f32; N]; 4],
    block_waited: [f32; N],
    max_wait: [f32; N],
    max_sojourn: [f32; N],
    waited: [u32; N],
    /// Waits above each `slo` threshold (`PointParams::slo`).
    exceed: [[u32; N]; 4],
    slo: [f32; 4],
    /// Requests whose wait exceeded their patience (`RepResult::lost`).
    lost: [u32; N],
    /// Under abandonment, each lane's own count of requests in its block
    /// (the lanes record different requests; `in_block` counts for all of
    /// them otherwise).
    lane_in_block: [u32; N],
    /// What a late request is: served and counted (a timeout), dropped
    /// (abandoned, or refused by a full queue), or never late.
    late_rule: LateRule,
    /// wait, sojourn, service, interarrival
    total: [[Kahan; 4]; N],
    /// The Kahan sums of the segments done (`end_segment`), added in order.
    done: [[f32; 4]; N],
    in_block: u32,
    inv_scale: f32,
    /// Histogram sections of a replication (`PointParams::rep_sections`):
    /// the requests per section (`u32::MAX`: one), the requests the current
    /// section still takes (recorded or dropped: the lanes step together),
    /// and its first bin in the tile's histogram. Twin of `rec_sections`
    /// and `rec_request`'s slot in `shaders/common.wgsl`.
    section_length: u32,
    section_left: u32,
    hist_base: usize,
}

/// Lanes kept in one aligned vector, as [`Recorders`]' arrays are.
#[repr(C, align(32))]
struct Aligned<T>(T);

/// What [`Recorders::record_request`] does with a late request (twin of
/// `rec_request`'s constants `RENEGING`, `DROPS_LATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LateRule {
    /// No patience, no capacity: nothing is late.
    Never,
    /// A timeout: served and recorded, counted in `lost`.
    Counted,
    /// Abandoned or refused: counted in `lost`, not recorded.
    Dropped,
}

impl<const N: usize> Recorders<N> {
    pub(super) fn new(p: &PointParams) -> Self {
        Self {
            inv_scale: p.inv_hist_scale,
            slo: p.slo,
            exceed: [[0; N]; 4],
            lost: [0; N],
            lane_in_block: [0; N],
            late_rule: if p.drops_late() {
                LateRule::Dropped
            } else if p.reneging() == Reneging::Timeout {
                LateRule::Counted
            } else {
                LateRule::Never
            },
            total: [[Kahan::default(); 4]; N],
            done: [[0.0; 4]; N],
            block: [[0.0; N]; 4],
            in_block: 0,
            block_waited: [0.0; N],
            waited: [0; N],
            max_wait: [0.0; N],
            max_sojourn: [0.0; N],
            section_length: p.section_length(),
            section_left: p.section_length(),
            hist_base: 0,
        }
    }

    /// Record one customer per lane; only the first `active` lanes count in
    /// the wait histogram (the rest pad a partial group).
    #[inline(always)]
    pub(super) fn record(
        &mut self,
        hist: &mut [u32],
        active: usize,
        wait: &[f32; N],
        service: &[f32; N],
        interarrival: &[f32; N],
    ) {
        let mut sojourn = [0.0f32; N];
        for l in 0..N {
            sojourn[l] = wait[l] + service[l];
        }
        add(&mut self.block[0], wait);
        add(&mut self.block[1], &sojourn);
        add(&mut self.block[2], service);
        add(&mut self.block[3], interarrival);
        // Counted in f32 within a block (exact below 2^24), flushed to u32.
        for (n, w) in self.block_waited.iter_mut().zip(wait) {
            *n += if *w > 0.0 { 1.0 } else { 0.0 };
        }
        for (count, &t) in self.exceed.iter_mut().zip(&self.slo) {
            for (n, w) in count.iter_mut().zip(wait) {
                *n += u32::from(*w > t);
            }
        }
        max(&mut self.max_wait, wait);
        max(&mut self.max_sojourn, &sojourn);
        let mut aligned_bins = Aligned([0u32; N]);
        let wait_bins = &mut aligned_bins.0;
        for l in 0..N {
            wait_bins[l] = hist_bin(wait[l] * self.inv_scale);
        }
        for l in 0..active {
            hist[wait_bins[l] as usize] += 1;
        }
        self.in_block += 1;
        if self.in_block == SUM_BLOCK {
            self.flush();
        }
    }

    /// Record one request per lane that was `late` (its wait beyond its
    /// patience, or the queue full; all false without either): recorded
    /// unless dropped, counted as lost if late. Twin of `rec_request`.
    #[inline(always)]
    pub(super) fn record_request(
        &mut self,
        hist: &mut [u32],
        active: usize,
        wait: &[f32; N],
        service: &[f32; N],
        interarrival: &[f32; N],
        late: &[bool; N],
    ) {
        // The request's section: `hist` holds the tile's sections one
        // after the other (one, unless the point has `rep_sections`).
        if self.section_left == 0 {
            self.section_left = self.section_length;
            self.hist_base += HIST_BINS as usize;
        }
        self.section_left -= 1;
        let hist = &mut hist[self.hist_base..];
        match self.late_rule {
            LateRule::Never => self.record(hist, active, wait, service, interarrival),
            LateRule::Counted => {
                for (n, &l) in self.lost.iter_mut().zip(late) {
                    *n += u32::from(l);
                }
                self.record(hist, active, wait, service, interarrival);
            }
            LateRule::Dropped => {
                self.record_served(hist, active, wait, service, interarrival, late)
            }
        }
    }

    /// Under abandonment: lanes record apart, as which of them abandoned
    /// differs. Out of line, as `Sampler::draw_patience` is, to keep the
    /// per-law loops of points without patience as they were.
    #[inline(never)]
    fn record_served(
        &mut self,
        hist: &mut [u32],
        active: usize,
        wait: &[f32; N],
        service: &[f32; N],
        interarrival: &[f32; N],
        late: &[bool; N],
    ) {
        for l in 0..N {
            self.lost[l] += u32::from(late[l]);
            if !late[l] {
                self.record_lane(hist, l < active, l, wait[l], service[l], interarrival[l]);
            }
        }
    }

    /// [`Self::record`] for lane `l` alone (its block counter its own: under
    /// abandonment the lanes record different numbers of requests, so the
    /// block sums run per lane, `lane_in_block`).
    #[inline(always)]
    fn record_lane(
        &mut self,
        hist: &mut [u32],
        counted: bool,
        l: usize,
        wait: f32,
        service: f32,
        interarrival: f32,
    ) {
        let sojourn = wait + service;
        self.block[0][l] += wait;
        self.block[1][l] += sojourn;
        self.block[2][l] += service;
        self.block[3][l] += interarrival;
        self.block_waited[l] += if wait > 0.0 { 1.0 } else { 0.0 };
        for k in 0..4 {
            self.exceed[k][l] += u32::from(wait > self.slo[k]);
        }
        self.max_wait[l] = self.max_wait[l].max(wait);
        self.max_sojourn[l] = self.max_sojourn[l].max(sojourn);
        if counted {
            hist[hist_bin(wait * self.inv_scale) as usize] += 1;
        }
        self.lane_in_block[l] += 1;
        if self.lane_in_block[l] == SUM_BLOCK {
            self.flush_lane(l);
        }
    }

    #[inline(always)]
    fn flush_lane(&mut self, l: usize) {
        for k in 0..4 {
            self.total[l][k].add(self.block[k][l]);
            self.block[k][l] = 0.0;
        }
        self.waited[l] += self.block_waited[l] as u32;
        self.block_waited[l] = 0.0;
        self.lane_in_block[l] = 0;
    }

    #[inline(always)]
    fn flush(&mut self) {
        for l in 0..N {
            for k in 0..4 {
                self.total[l][k].add(self.block[k][l]);
            }
            self.waited[l] += self.block_waited[l] as u32;
        }
        self.block = [[0.0; N]; 4];
        self.block_waited = [0.0; N];
        self.in_block = 0;
        self.lane_in_block = [0; N];
    }

    /// Close a segment of the replication (`contract::Segments`): its Kahan
    /// sums are added, in segment order, to those of the segments before it
    /// and start again from zero, as each GPU invocation running one segment
    /// does (the twin of `rec_end_segment`). Counts and maxima run on.
    pub(super) fn end_segment(&mut self) {
        self.flush();
        for l in 0..N {
            for k in 0..4 {
                self.done[l][k] += self.total[l][k].sum;
            }
        }
        self.total = [[Kahan::default(); 4]; N];
    }

    /// The lanes' results over `customers` recorded requests: the means
    /// over those served (all but the abandoned, `rec_result`'s `dropped`).
    pub(super) fn finish(mut self, customers: u32, status: [u32; N]) -> [RepResult; N] {
        self.end_segment();
        std::array::from_fn(|l| {
            let dropped = if self.late_rule == LateRule::Dropped {
                self.lost[l]
            } else {
                0
            };
            let n = (customers - dropped.min(customers)).max(1) as f32;
            RepResult {
                mean_wait: self.done[l][0] / n,
                mean_sojourn: self.done[l][1] / n,
                p_wait: self.waited[l] as f32 / n,
                max_wait: self.max_wait[l],
                max_sojourn: self.max_sojourn[l],
                mean_service: self.done[l][2] / n,
                mean_interarrival: self.done[l][3] / n,
                customers,
                status: status[l],
                max_in_system: 0,
                exceed: std::array::from_fn(|k| self.exceed[k][l]),
                lost: self.lost[l],
                // A fleet's classes are the dispatch kernel's to fill.
                class_wait: [0.0; 4],
                class_served: [0; 4],
            }
        })
    }
}
