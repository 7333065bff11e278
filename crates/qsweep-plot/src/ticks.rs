//! Axis scales and ticks: where the tick marks go and how they are labelled.
//!
//! Why this module exists: plotters' numeric axes choose their own ticks, which
//! on a log axis of waits (10⁻³ … 10²) or at a sweep's grid points (servers 8, 16,
//! 32) read poorly.  Here the ticks are chosen by rule — decades, 1-2-5 or 1..9 per
//! decade on log axes, 1/2/2.5/5 × 10ᵏ steps on linear ones, the data's own x values
//! when few and their labels fit — and handed to plotters through [`TickedAxis`],
//! an axis that draws exactly the ticks it is given.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{text_size, Geom};
use super::PlotSummary;

/// Axis mapping: data value -> drawing coordinate (log10 for log axes).
#[derive(Clone, Copy, Debug)]
pub(super) struct Scale {
    pub(super) log: bool,
}

impl Scale {
    pub(super) fn fwd(self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }
}

/// Ticks of one axis, in drawing coordinates, with their labels.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Ticks {
    pub(super) major: Vec<(f64, String)>,
    pub(super) minor: Vec<f64>,
    /// Log-axis ticks at m × 10^k: (m, k) of each major tick, so that the
    /// labels can be written in the notation the whole figure uses
    /// ([`Ticks::relabel`]); empty for other ticks.
    pub(super) log_marks: Vec<(u32, i32)>,
}

/// Exponents whose powers of ten read well as decimals (0.0001 … 100000).
const PLAIN_EXPONENTS: std::ops::RangeInclusive<i32> = -4..=5;

impl Ticks {
    /// Whether these ticks can all be written as plain decimals (`None`:
    /// they are not log-axis decades, and take no part in the choice).
    pub(super) fn plain_ok(&self) -> Option<bool> {
        (!self.log_marks.is_empty()).then(|| {
            self.log_marks
                .iter()
                .all(|(_, k)| PLAIN_EXPONENTS.contains(k))
        })
    }

    /// Log-axis labels in one notation: decimals (`plain`) or powers of ten.
    /// In powers of ten, the 2 and 5 × 10^k between two labelled decades
    /// become grid lines (`2×10⁰` beside `10⁰` reads poorly).
    pub(super) fn relabel(&mut self, plain: bool) {
        if self.log_marks.len() != self.major.len() {
            return;
        }
        let decades = self.log_marks.iter().filter(|(m, _)| *m == 1).count();
        if !plain && decades >= 2 && decades < self.log_marks.len() {
            let (keep, drop): (Vec<_>, Vec<_>) = self
                .major
                .drain(..)
                .zip(self.log_marks.drain(..))
                .partition(|(_, (m, _))| *m == 1);
            self.minor.extend(drop.into_iter().map(|((t, _), _)| t));
            (self.major, self.log_marks) = keep.into_iter().unzip();
        }
        for ((_, label), &(m, k)) in self.major.iter_mut().zip(&self.log_marks) {
            *label = log_label(m, k, plain);
        }
    }
}

const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

fn superscript(e: i32) -> String {
    let mut s = String::new();
    if e < 0 {
        s.push('⁻');
    }
    for d in e.unsigned_abs().to_string().bytes() {
        s.push(SUPERSCRIPT[(d - b'0') as usize]);
    }
    s
}

/// Label for a tick value `v`, knowing the tick spacing `step` (for decimals).
pub(super) fn format_tick(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-4..1e6).contains(&a) {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        let m_str = trim_decimals(&format!("{m:.2}"));
        return if m_str == "1" {
            format!("10{}", superscript(e))
        } else if m_str == "-1" {
            format!("−10{}", superscript(e))
        } else {
            format!("{}×10{}", m_str.replace('-', "−"), superscript(e))
        };
    }
    let mut d = 0usize;
    while d < 10 {
        let scaled = step.abs() * 10f64.powi(d as i32);
        if (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0) {
            break;
        }
        d += 1;
    }
    format!("{v:.d$}").replace('-', "−")
}

fn trim_decimals(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// Nice linear ticks (1, 2, 2.5, 5 × 10^k steps) in `[lo, hi]`, about `target` of them.
pub(super) fn linear_ticks(lo: f64, hi: f64, target: usize, integer: bool) -> Ticks {
    let raw = (hi - lo) / target.max(1) as f64;
    let e = raw.log10().floor();
    let f = raw / 10f64.powf(e);
    // Nearest nice mantissa (the tick count may end up a little above `target`).
    let m = if f < 1.5 {
        1.0
    } else if f < 2.25 {
        2.0
    } else if f < 3.5 && !(integer && e == 0.0) {
        2.5
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    };
    let mut step = m * 10f64.powf(e);
    if integer {
        step = step.max(1.0);
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let major = (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            (v, format_tick(v, step))
        })
        .collect();
    Ticks {
        major,
        ..Ticks::default()
    }
}

/// Ticks for a log10 axis spanning `[lo, hi]` (log10 units): every decade
/// (every n-th only when more than `max_decades` would not fit), else 1-2-5,
/// else 1..9 per decade (about `target` of them), else nice linear ticks;
/// light grid lines at the remaining 1..9 × 10^k (or skipped decades).
pub(super) fn log_ticks(lo: f64, hi: f64, target: usize, max_decades: usize) -> Ticks {
    let target = target.max(2);
    let kmin = lo.floor() as i32;
    let kmax = hi.ceil() as i32;
    let inside = |t: f64| t >= lo - 1e-9 && t <= hi + 1e-9;
    // (position, mantissa, exponent)
    let set = |mults: &[u32], every: i32| -> Vec<(f64, u32, i32)> {
        let mut out = Vec::new();
        for k in kmin..=kmax {
            if k.rem_euclid(every) != 0 {
                continue;
            }
            for &m in mults {
                let t = f64::from(m).log10() + k as f64;
                if inside(t) {
                    out.push((t, m, k));
                }
            }
        }
        out
    };
    let decades = set(&[1], 1);
    let mut every = 1;
    let mut major = decades.clone();
    let max_decades = max_decades.max(2);
    if decades.len() > max_decades {
        every = (decades.len() as f64 / max_decades as f64).ceil() as i32;
        major = set(&[1], every);
    }
    if major.len() < 3 {
        let s125 = set(&[1, 2, 5], 1);
        if s125.len() <= target && s125.len() > major.len() {
            major = s125;
        }
    }
    if major.len() < 2 {
        let all = set(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1);
        if all.len() >= 2 && all.len() <= target.max(4) {
            major = all;
        } else {
            // Very narrow range: plain nice ticks in data space.
            let lin = linear_ticks(10f64.powf(lo), 10f64.powf(hi), target.min(4), false);
            let major: Vec<(f64, String)> = lin
                .major
                .into_iter()
                .filter(|(v, _)| *v > 0.0)
                .map(|(v, l)| (v.log10(), l))
                .collect();
            return Ticks {
                major,
                ..Ticks::default()
            };
        }
    }
    let is_major = |t: f64| major.iter().any(|(mt, _, _)| (mt - t).abs() < 1e-9);
    let mut minor = Vec::new();
    if every > 1 {
        minor = decades
            .iter()
            .map(|d| d.0)
            .filter(|&t| !is_major(t))
            .collect();
    } else if hi - lo <= 8.0 {
        minor = set(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1)
            .into_iter()
            .map(|d| d.0)
            .filter(|&t| !is_major(t))
            .collect();
    }
    // One notation for the whole axis: decimals when all ticks are short,
    // else powers of 10 (the figure may then choose one for all its axes).
    let plain = major.iter().all(|&(_, _, k)| PLAIN_EXPONENTS.contains(&k));
    let log_marks = major.iter().map(|&(_, m, k)| (m, k)).collect();
    let major = major
        .into_iter()
        .map(|(t, m, k)| (t, log_label(m, k, plain)))
        .collect();
    Ticks {
        major,
        minor,
        log_marks,
    }
}

fn log_label(m: u32, k: i32, plain: bool) -> String {
    if plain {
        let v = f64::from(m) * 10f64.powi(k);
        format!("{v:.d$}", d = (-k).max(0) as usize)
    } else if m == 1 {
        format!("10{}", superscript(k))
    } else {
        format!("{m}×10{}", superscript(k))
    }
}

/// Axis limits (drawing coordinates) around data values `vals` (values ≤ 0 are
/// ignored on log axes), padded; `anchor_zero` starts a linear axis at 0 when all
/// data are ≥ 0.
pub(super) fn axis_limits(vals: &[f64], scale: Scale, anchor_zero: bool) -> (f64, f64) {
    let t: Vec<f64> = vals
        .iter()
        .filter(|v| v.is_finite() && (!scale.log || **v > 0.0))
        .map(|&v| scale.fwd(v))
        .collect();
    if t.is_empty() {
        return if scale.log { (-1.0, 1.0) } else { (0.0, 1.0) };
    }
    let mut lo = t.iter().cloned().fold(f64::INFINITY, f64::min);
    let mut hi = t.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if scale.log {
        let min_span = 0.3;
        if hi - lo < min_span {
            let mid = (hi + lo) / 2.0;
            lo = mid - min_span / 2.0;
            hi = mid + min_span / 2.0;
        }
        let span = hi - lo;
        (lo - 0.06 * span, hi + 0.06 * span)
    } else {
        if anchor_zero && lo >= 0.0 {
            lo = 0.0;
        }
        if hi - lo <= 0.0 {
            let d = if hi.abs() > 0.0 { hi.abs() * 0.1 } else { 1.0 };
            lo -= d;
            hi += d;
        }
        let span = hi - lo;
        let lo = if anchor_zero && lo == 0.0 {
            0.0
        } else {
            lo - 0.05 * span
        };
        (lo, hi + 0.05 * span)
    }
}

/// A linear axis in drawing coordinates with exactly the given ticks
/// (plotters' own numeric axes choose their ticks themselves).
pub(super) struct TickedAxis {
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl TickedAxis {
    pub(super) fn new(lo: f64, hi: f64, ticks: &Ticks) -> Self {
        TickedAxis {
            lo,
            hi,
            major: ticks.major.iter().map(|t| t.0).collect(),
            minor: ticks.minor.clone(),
        }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The label of the major tick at `v` (plotters asks by value).
pub(super) fn lookup_label(t: &Ticks, v: f64) -> String {
    t.major
        .iter()
        .find(|(p, _)| (p - v).abs() <= 1e-9 * p.abs().max(1.0))
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| format_tick(v, v))
}

/// The x axis all panels share (the same x column everywhere): its scale, its limits
/// in drawing coordinates and the data's distinct x values (candidate ticks).
pub(super) struct SharedXAxis {
    pub(super) scale: Scale,
    pub(super) lo: f64,
    pub(super) hi: f64,
    distinct: Vec<f64>,
    integer: bool,
}

impl SharedXAxis {
    pub(super) fn new(summary: &PlotSummary, log: bool) -> Self {
        let scale = Scale { log };
        let xs: Vec<f64> = summary
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        let (lo, hi) = {
            // Data range plus 4 % on both sides so that end markers are not cut.
            let (a, b) = (scale.fwd(summary.x_range.0), scale.fwd(summary.x_range.1));
            if b > a {
                (a - 0.04 * (b - a), b + 0.04 * (b - a))
            } else {
                let half = if scale.log {
                    0.15
                } else {
                    (a.abs() * 0.1).max(0.5)
                };
                (a - half, a + half)
            }
        };
        let mut distinct: Vec<f64> = xs.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        let integer = xs.iter().all(|x| x.fract() == 0.0);
        SharedXAxis {
            scale,
            lo,
            hi,
            distinct,
            integer,
        }
    }

    /// x ticks: the distinct data x values when there are few and their labels fit
    /// (sweeps are usually read at their grid points), else nice ticks, as many as
    /// fit in `plot_w` pixels.
    pub(super) fn choose_ticks<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        font: &TextStyle,
        plot_w: i32,
        g: &Geom,
    ) -> Ticks {
        let fits = |ticks: &Ticks| self.labels_fit(root, font, ticks, plot_w, g);
        if let Some(ticks) = self.grid_point_ticks() {
            if fits(&ticks) {
                return ticks;
            }
        }
        if let Some(ticks) = self.grid_point_ticks() {
            // Not all fit: as many as fit, the ends always, round values first.
            let thinned = self.thin_to_fit(root, font, ticks, plot_w, g);
            if thinned.major.len() >= 3.min(self.distinct.len()) {
                return thinned;
            }
        }
        let mut target = ((plot_w as f64 / (g.s * 60.0)).floor() as usize).clamp(2, 10);
        loop {
            let ticks = if self.scale.log {
                log_ticks(self.lo, self.hi, target, target)
            } else {
                linear_ticks(self.lo, self.hi, target, self.integer)
            };
            if fits(&ticks) || target <= 2 {
                return ticks;
            }
            target -= 1;
        }
    }

    /// One tick per distinct x value, when there are 2..=24 of them and each is a
    /// round number (at most two decimals).
    fn grid_point_ticks(&self) -> Option<Ticks> {
        let roundish = self
            .distinct
            .iter()
            .all(|v| (v * 100.0 - (v * 100.0).round()).abs() < 1e-9 && v.abs() < 1e6);
        if self.distinct.len() < 2 || self.distinct.len() > 24 || !roundish {
            return None;
        }
        let step = if self.integer { 1.0 } else { 0.01 };
        let major: Vec<(f64, String)> = self
            .distinct
            .iter()
            .map(|&v| (self.scale.fwd(v), trim_decimals(&format_tick(v, step))))
            .collect();
        Some(Ticks {
            major,
            minor: if self.scale.log {
                log_ticks(self.lo, self.hi, 2, 2).minor
            } else {
                vec![]
            },
            log_marks: vec![],
        })
    }

    /// The grid-point ticks whose labels fit side by side: the last and the
    /// first, then powers of ten, then 2 and 5 × 10^k, then whole numbers,
    /// then the rest, each kept where it leaves 10 logical pixels to the
    /// labels already kept.
    fn thin_to_fit<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        font: &TextStyle,
        ticks: Ticks,
        plot_w: i32,
        g: &Geom,
    ) -> Ticks {
        let to_px = |t: f64| (t - self.lo) / (self.hi - self.lo) * plot_w as f64;
        let n = ticks.major.len();
        let rank = |i: usize, v: f64| -> u32 {
            if i + 1 == n {
                return 0;
            }
            if i == 0 {
                return 1;
            }
            let e = v.abs().log10().floor();
            let m = v / 10f64.powf(e);
            let near = |x: f64| (m - x).abs() < 1e-9;
            if near(1.0) {
                2
            } else if near(2.0) || near(5.0) {
                3
            } else if v.fract() == 0.0 {
                4
            } else {
                5
            }
        };
        let values: Vec<f64> = self.distinct.clone();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (rank(i, values[i]), i));
        let mut kept: Vec<(usize, f64, f64)> = Vec::new();
        for i in order {
            let (t, label) = &ticks.major[i];
            let w = text_size(root, label, font).0 as f64;
            let (a, b) = (to_px(*t) - w / 2.0, to_px(*t) + w / 2.0);
            let gap = g.s * 10.0;
            if kept
                .iter()
                .all(|&(_, ka, kb)| b + gap <= ka || a >= kb + gap)
            {
                kept.push((i, a, b));
            }
        }
        kept.sort_by_key(|k| k.0);
        Ticks {
            major: kept.iter().map(|k| ticks.major[k.0].clone()).collect(),
            minor: ticks.minor,
            log_marks: vec![],
        }
    }

    /// Whether the tick labels, centred on their ticks, leave at least 10 logical
    /// pixels between neighbours.
    fn labels_fit<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        font: &TextStyle,
        ticks: &Ticks,
        plot_w: i32,
        g: &Geom,
    ) -> bool {
        let to_px = |t: f64| (t - self.lo) / (self.hi - self.lo) * plot_w as f64;
        let mut prev_right = f64::NEG_INFINITY;
        for (t, label) in &ticks.major {
            let w = text_size(root, label, font).0 as f64;
            let c = to_px(*t);
            if c - w / 2.0 < prev_right + g.s * 10.0 {
                return false;
            }
            prev_right = c + w / 2.0;
        }
        true
    }
}
