//! One panel of the figure: its axes, ticks, frame and caption, then its series —
//! lines, error bars and markers, with a ▼ on the bottom edge for each value that
//! a log y axis cannot place.
//!
//! Why this module exists: a panel's y range, tick density and label room depend on
//! its own data and pixel size, and the order of drawing matters (analytic lines
//! underneath, error bars under markers, ▼ markers last); both are decided here.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::labels::BaselineKind;
use super::load::{Loaded, PanelInfo, SeriesMeta};
use super::markers::{draw_clamped, draw_error_bar, draw_marker, group_color, group_shape, Clamp};
use super::style::{text_size, Geom, AXIS_GREY, META_GREY};
use super::ticks::{
    axis_limits, linear_ticks, log_ticks, lookup_label, Scale, SharedXAxis, TickedAxis, Ticks,
};
use super::{PlotOptions, Series};

/// Counts of what was drawn; used by tests to check error bars / clamped markers.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct DrawStats {
    pub(super) ci_bars: usize,
    pub(super) markers: usize,
    pub(super) hollow_markers: usize,
    pub(super) clamped_markers: usize,
    /// Polylines of dashed baselines (approximations, unknown methods).
    pub(super) dashed_segments: usize,
    /// Polylines of exact baselines (thin, solid).
    pub(super) exact_segments: usize,
    /// Per panel (drawing order): the y axis' limits in drawing coordinates
    /// (log10 of the values on a log axis).
    pub(super) y_limits: Vec<(f64, f64)>,
}

type DrawResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A panel's chart: plotters' coordinates over our own tick choice.
type Chart<'c, DB> = ChartContext<'c, DB, Cartesian2d<TickedAxis, TickedAxis>>;

/// Draw every panel of `l` into its cell of `area` (row-major).
pub(super) fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    l: &Loaded,
    opts: &PlotOptions,
    g: &Geom,
) -> DrawResult<DrawStats, DB> {
    let cells = area.split_evenly((l.rows, l.cols));
    let grid = PanelGrid {
        l,
        x_axis: SharedXAxis::new(&l.summary, opts.log_x),
        yscale: Scale { log: opts.log_y },
        shared_y: l.faceted && opts.shared_y,
        g,
        tick_font: g.font(15.0),
        desc_font: g.font(17.0),
        caption_font: g.font(17.0),
    };
    // Every panel's y axis first: the figure writes all its log-axis labels
    // in one notation (decimals where every panel's fit, else powers of 10).
    let mut y_axes: Vec<YAxis> = l
        .panels
        .iter()
        .enumerate()
        .filter_map(|(p, info)| cells.get(p).map(|cell| grid.y_axis(root, cell, p, info)))
        .collect();
    let plain = y_axes
        .iter()
        .filter_map(|y| y.ticks.plain_ok())
        .all(|ok| ok);
    for y in &mut y_axes {
        y.ticks.relabel(plain);
    }
    let mut stats = DrawStats::default();
    for ((p, info), y) in l.panels.iter().enumerate().zip(y_axes) {
        let Some(cell) = cells.get(p) else { break };
        grid.draw_panel(root, cell, p, info, (y, plain), &mut stats)?;
    }
    Ok(stats)
}

/// What all panels share.
struct PanelGrid<'a> {
    l: &'a Loaded,
    x_axis: SharedXAxis,
    yscale: Scale,
    /// Panels of one y column share their y range (facet rows, without `--free-y`).
    shared_y: bool,
    g: &'a Geom,
    tick_font: TextStyle<'static>,
    desc_font: TextStyle<'static>,
    caption_font: TextStyle<'static>,
}

/// A panel's y axis before it is drawn: what [`PanelGrid::y_axis`] chose.
struct YAxis {
    ticks: Ticks,
    /// Limits in drawing coordinates, before the zero band.
    y0: f64,
    y1: f64,
    zero_band: bool,
    plot_h: i32,
    caption_h: i32,
    tick_len: i32,
    x_area: i32,
}

/// The axes of one panel: limits, ticks and the room around the plotting area.
struct PanelAxes {
    x_ticks: Ticks,
    y_ticks: Ticks,
    /// Bottom of the y axis (drawing coordinates), below `data_lo` by the zero band.
    y0: f64,
    /// Top of the y axis (drawing coordinates).
    y1: f64,
    /// Bottom of the padded data range: on a log axis, analytic values below it are clipped.
    data_lo: f64,
    /// Log axis with zeros: a band below the data, its bottom edge labelled 0 and
    /// separated by axis-break marks, holds the ▼ markers of the zero values.
    zero_band: bool,
    caption_h: i32,
    tick_len: i32,
    x_area: i32,
    y_area: i32,
    right_margin: i32,
}

impl PanelGrid<'_> {
    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        cell: &DrawingArea<DB, Shift>,
        p: usize,
        info: &PanelInfo,
        (y, plain): (YAxis, bool),
        stats: &mut DrawStats,
    ) -> DrawResult<(), DB> {
        let series = &self.l.summary.series;
        let members: Vec<usize> = (0..series.len())
            .filter(|&i| self.l.meta[i].panel == p)
            .collect();
        let axes = self.panel_axes(root, cell, y, plain);
        stats.y_limits.push((axes.y0, axes.y1));
        let chart = self.draw_mesh(cell, info, &axes)?;
        self.draw_frame(root, &chart, info, &axes)?;
        let (prx, pry) = chart.plotting_area().get_pixel_range();
        if members.is_empty() {
            root.draw_text(
                "no data",
                &self
                    .g
                    .font(16.0)
                    .color(&META_GREY)
                    .pos(Pos::new(HPos::Center, VPos::Center)),
                ((prx.start + prx.end) / 2, (pry.start + pry.end) / 2),
            )?;
            return Ok(());
        }
        let coords = Coords {
            chart: &chart,
            xscale: self.x_axis.scale,
            yscale: self.yscale,
            y0: axes.y0,
            y1: axes.y1,
            data_lo: axes.data_lo,
            bottom: pry.end - 1 - self.g.px(1.0),
            dodge: 0,
        };
        // Zero values on the log axis, drawn last (see below).
        let mut clamps: Vec<Clamp> = Vec::new();
        // Measured series first, then the analytic baselines on top of them,
        // group by group: a theory line that agrees with the simulation runs
        // along it, dashed, instead of hiding under it.
        let (baselines, measured): (Vec<usize>, Vec<usize>) =
            members.iter().partition(|&&i| series[i].baseline.is_some());
        // Series whose markers would cover each other (a one-server queue is
        // the same under every policy) are set a few pixels apart.
        let step = if self.overlapping(&coords, &measured) {
            self.g.px(4.0)
        } else {
            0
        };
        for (k, &i) in measured.iter().enumerate() {
            let dodged = Coords {
                dodge: ((2 * k as i32 - (measured.len() as i32 - 1)) * step) / 2,
                ..coords
            };
            self.draw_series(
                root,
                &dodged,
                &series[i],
                &self.l.meta[i],
                &mut clamps,
                stats,
            )?;
        }
        let mut groups: Vec<usize> = Vec::new();
        for &i in &baselines {
            if !groups.contains(&self.l.meta[i].group) {
                groups.push(self.l.meta[i].group);
            }
        }
        for g in groups {
            let of_group: Vec<usize> = baselines
                .iter()
                .copied()
                .filter(|&i| self.l.meta[i].group == g)
                .collect();
            self.draw_baselines(root, &coords, g, &of_group, &mut clamps, stats)?;
        }
        stats.clamped_markers += clamps.len();
        draw_clamped(root, self.g, &clamps, coords.bottom, (prx.start, prx.end))
    }

    /// Whether two of the measured series `idx` have a point at the same x
    /// less than two markers apart.
    fn overlapping<DB: DrawingBackend>(&self, coords: &Coords<'_, '_, DB>, idx: &[usize]) -> bool {
        if self.l.lines_only || idx.len() < 2 {
            return false;
        }
        let series = &self.l.summary.series;
        let near = self.g.px(5.0);
        let px: Vec<std::collections::HashMap<u64, i32>> = idx
            .iter()
            .map(|&i| {
                series[i]
                    .points
                    .iter()
                    .filter_map(|&(x, y, _)| coords.point(x, y).map(|p| (x.to_bits(), p.1)))
                    .collect()
            })
            .collect();
        px.iter().enumerate().any(|(a, pa)| {
            px[a + 1..].iter().any(|pb| {
                pa.iter()
                    .any(|(x, ya)| pb.get(x).is_some_and(|yb| (ya - yb).abs() < near))
            })
        })
    }

    /// y values that set a panel's limits — values, CI ends and analytic values —
    /// and whether a value ≤ 0 must be placed on a log axis.
    fn y_values(&self, members: &[usize]) -> (Vec<f64>, bool) {
        let series = &self.l.summary.series;
        let log = self.yscale.log;
        let mut yvals = Vec::new();
        let mut clamped_here = false;
        // On a log axis, analytic values far below every simulated one (an
        // Erlang C wait of 1e-60 s, say) would squash the data into a line:
        // they are left off the limits (and clipped by the frame).
        let simulated_min = members
            .iter()
            .filter(|&&i| series[i].baseline.is_none())
            .flat_map(|&i| series[i].points.iter().map(|p| p.1))
            .filter(|&y| y > 0.0)
            .fold(f64::INFINITY, f64::min);
        for &i in members {
            if log && series[i].baseline.is_some() && simulated_min.is_finite() {
                for &(_, y, _) in &series[i].points {
                    if y >= simulated_min / 100.0 {
                        yvals.push(y);
                    }
                }
                continue;
            }
            for &(_, y, ci) in &series[i].points {
                if log && y <= 0.0 {
                    clamped_here = true;
                }
                yvals.push(y);
                if let Some(c) = ci {
                    yvals.push(y + c);
                    if !log || y - c > 0.0 {
                        yvals.push(y - c);
                    }
                }
            }
        }
        (yvals, clamped_here)
    }

    /// The y axis of a panel: limits and ticks, with tick density from the
    /// pixels available in `cell`. Its range is set by the panel's own
    /// series, or by those of every panel of its y column when facet rows
    /// share their y axis.
    fn y_axis<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        cell: &DrawingArea<DB, Shift>,
        p: usize,
        info: &PanelInfo,
    ) -> YAxis {
        let g = self.g;
        let series = &self.l.summary.series;
        let range_members: Vec<usize> = (0..series.len())
            .filter(|&i| {
                let q = self.l.meta[i].panel;
                if self.shared_y {
                    self.l.panels[q].y_index == info.y_index
                } else {
                    q == p
                }
            })
            .collect();
        let (_, chh) = cell.dim_in_pixel();
        let (yvals, clamped_here) = self.y_values(&range_members);
        let (y0, y1) = axis_limits(&yvals, self.yscale, true);

        let caption_h = if info.title.is_some() {
            g.px(30.0)
        } else {
            g.px(12.0)
        };
        let tick_len = g.px(5.0);
        let label_dist = tick_len * 2;
        let (_, desc_h) = text_size(root, "Mg", &self.desc_font);
        let (_, tick_h) = text_size(root, "0123456789", &self.tick_font);
        let x_area = label_dist + tick_h + g.px(8.0) + desc_h + g.px(4.0);
        let plot_h = chh as i32 - caption_h - x_area - g.px(6.0);
        let y_target = ((plot_h as f64 / (g.s * 48.0)).floor() as usize).clamp(3, 9);
        // Every decade labelled where labels 1.6 line heights apart fit.
        let zero_band = self.yscale.log && clamped_here;
        let band_px = if zero_band { 24.0 * g.s } else { 0.0 };
        let room = (plot_h as f64 - band_px).max(1.0);
        let max_decades = (room / (f64::from(tick_h.max(1)) * 1.6) + 1.0).floor() as usize;
        let ticks = if self.yscale.log {
            log_ticks(y0, y1, y_target, max_decades.max(y_target))
        } else {
            linear_ticks(y0, y1, y_target, false)
        };
        YAxis {
            ticks,
            y0,
            y1,
            zero_band,
            plot_h,
            caption_h,
            tick_len,
            x_area,
        }
    }

    /// Limits, ticks and label room of a panel whose y axis is `y`; a log x
    /// axis' decades are written in powers of ten unless the figure's y axes
    /// are all decimals (`plain`).
    fn panel_axes<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        cell: &DrawingArea<DB, Shift>,
        y: YAxis,
        plain: bool,
    ) -> PanelAxes {
        let g = self.g;
        let (cw, _) = cell.dim_in_pixel();
        let YAxis {
            ticks: mut y_ticks,
            mut y0,
            y1,
            zero_band,
            plot_h,
            caption_h,
            tick_len,
            x_area,
        } = y;
        let data_lo = y0;
        if zero_band {
            let band_px = 24.0 * g.s;
            y0 -= (y1 - y0) * band_px / (plot_h as f64 - band_px).max(1.0);
            y_ticks.major.insert(0, (y0, "0".to_string()));
            y_ticks.log_marks.clear();
        }
        let label_dist = tick_len * 2;
        let (_, desc_h) = text_size(root, "Mg", &self.desc_font);
        let y_label_w = y_ticks
            .major
            .iter()
            .map(|(_, t)| text_size(root, t, &self.tick_font).0)
            .max()
            .unwrap_or(0);
        let y_area = label_dist + y_label_w + g.px(10.0) + desc_h + g.px(4.0);
        let right_margin = g.px(16.0);
        let plot_w = cw as i32 - y_area - right_margin - g.px(8.0);
        let mut x_ticks = self.x_axis.choose_ticks(root, &self.tick_font, plot_w, g);
        if !plain {
            x_ticks.relabel(false);
        }
        PanelAxes {
            x_ticks,
            y_ticks,
            y0,
            y1,
            data_lo,
            zero_band,
            caption_h,
            tick_len,
            x_area,
            y_area,
            right_margin,
        }
    }

    /// The chart in `cell`: grid lines, ticks, tick labels and axis titles.
    fn draw_mesh<'c, DB: DrawingBackend>(
        &self,
        cell: &'c DrawingArea<DB, Shift>,
        info: &PanelInfo,
        axes: &PanelAxes,
    ) -> DrawResult<Chart<'c, DB>, DB> {
        let g = self.g;
        let y_label = &self.l.summary.y_labels[info.y_index];
        let mut builder = ChartBuilder::on(cell);
        builder
            .margin_left(g.px(8.0))
            .margin_right(axes.right_margin)
            .margin_top(axes.caption_h)
            .margin_bottom(g.px(6.0))
            .x_label_area_size(axes.x_area)
            .y_label_area_size(axes.y_area);
        let mut chart = builder.build_cartesian_2d(
            TickedAxis::new(self.x_axis.lo, self.x_axis.hi, &axes.x_ticks),
            TickedAxis::new(axes.y0, axes.y1, &axes.y_ticks),
        )?;
        let xfmt = |v: &f64| lookup_label(&axes.x_ticks, *v);
        let yfmt = |v: &f64| lookup_label(&axes.y_ticks, *v);
        chart
            .configure_mesh()
            .x_desc(self.l.summary.x_label.clone())
            .y_desc(y_label.clone())
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .label_style(self.tick_font.clone())
            .axis_desc_style(self.desc_font.clone())
            .bold_line_style(RGBColor(225, 225, 225).stroke_width(g.w(1.0)))
            .light_line_style(RGBColor(243, 243, 243).stroke_width(g.w(1.0)))
            .axis_style(AXIS_GREY.stroke_width(g.w(1.0)))
            .set_all_tick_mark_size(axes.tick_len)
            .draw()?;
        Ok(chart)
    }

    /// The caption above the plotting area, the frame around it and the axis
    /// breaks above the zero band.
    fn draw_frame<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &Chart<'_, DB>,
        info: &PanelInfo,
        axes: &PanelAxes,
    ) -> DrawResult<(), DB> {
        let g = self.g;
        let (prx, pry) = chart.plotting_area().get_pixel_range();
        if let Some(t) = &info.title {
            // Centred over the plotting area (not the whole cell with its label area).
            root.draw_text(
                t,
                &self.caption_font.pos(Pos::new(HPos::Center, VPos::Bottom)),
                ((prx.start + prx.end) / 2, pry.start - g.px(7.0)),
            )?;
        }
        root.draw(&PathElement::new(
            vec![
                (prx.start, pry.start),
                (prx.end - 1, pry.start),
                (prx.end - 1, pry.end - 1),
                (prx.start, pry.end - 1),
                (prx.start, pry.start),
            ],
            AXIS_GREY.stroke_width(g.w(1.0)),
        ))?;
        if axes.zero_band {
            let yb = chart.backend_coord(&(self.x_axis.lo, axes.data_lo)).1 + g.px(6.0);
            for x in [prx.start, prx.end - 1] {
                draw_axis_break(root, g, x, yb)?;
            }
        }
        Ok(())
    }

    /// A measured series: its line, error bars and markers; values the log axis
    /// cannot place are added to `clamps`.
    fn draw_series<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        coords: &Coords<'_, '_, DB>,
        s: &Series,
        m: &SeriesMeta,
        clamps: &mut Vec<Clamp>,
        stats: &mut DrawStats,
    ) -> DrawResult<(), DB> {
        let color = group_color(m.group);
        self.draw_line(root, coords, s, color)?;
        if self.l.lines_only {
            return Ok(());
        }
        // Error bars, then markers on top.
        self.draw_error_bars(root, coords, s, color, stats)?;
        self.draw_markers(root, coords, s, m, clamps, stats)
    }

    /// The line through a measured series' points, broken where a point cannot be placed.
    fn draw_line<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        coords: &Coords<'_, '_, DB>,
        s: &Series,
        color: RGBColor,
    ) -> DrawResult<(), DB> {
        let mut segments: Vec<Vec<(i32, i32)>> = vec![vec![]];
        for &(x, y, _) in &s.points {
            match coords.point(x, y) {
                Some(pt) => segments.last_mut().unwrap().push(pt),
                None => segments.push(vec![]),
            }
        }
        for seg in segments.into_iter().filter(|s| s.len() >= 2) {
            root.draw(&PathElement::new(seg, color.stroke_width(self.g.w(2.0))))?;
        }
        Ok(())
    }

    /// The analytic baselines of group `g` (its series `idx`, one per method):
    /// one line through all their points in x order, thin and solid between two
    /// points of the same exact method, dashed elsewhere (approximations,
    /// unknown methods, and the step from one method to another), broken where
    /// a point cannot be placed; values ≤ 0 on a log axis go to `clamps`.
    fn draw_baselines<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        coords: &Coords<'_, '_, DB>,
        g: usize,
        idx: &[usize],
        clamps: &mut Vec<Clamp>,
        stats: &mut DrawStats,
    ) -> DrawResult<(), DB> {
        let series = &self.l.summary.series;
        let color = group_color(g);
        let mut pts: Vec<(f64, f64, usize)> = idx
            .iter()
            .flat_map(|&i| series[i].points.iter().map(move |p| (p.0, p.1, i)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Runs of one style: (exact, pixels).
        let mut runs: Vec<(bool, Vec<(i32, i32)>)> = Vec::new();
        let mut prev: Option<((i32, i32), usize)> = None;
        let mut open = false;
        for &(x, y, i) in &pts {
            // Analytic values below the axis (left off its limits) are
            // clipped: the line stops at the last visible point.
            let below_axis = y > 0.0 && coords.yscale.fwd(y) < coords.data_lo;
            let Some(pt) = coords.point(x, y).filter(|_| !below_axis) else {
                prev = None;
                open = false;
                continue;
            };
            if let Some((ppt, pi)) = prev {
                let exact = pi == i && self.l.meta[i].baseline == Some(BaselineKind::Exact);
                match runs.last_mut() {
                    Some((style, run)) if open && *style == exact => run.push(pt),
                    _ => runs.push((exact, vec![ppt, pt])),
                }
                open = true;
            }
            prev = Some((pt, i));
        }
        // Drawn over the measured series in a darker shade of its colour:
        // exact values dotted, approximations in long dashes.
        let shade = baseline_shade(color);
        for (exact, run) in runs {
            if exact {
                root.draw(&DashedPathElement::new(
                    run,
                    self.g.px(EXACT_DASH.0),
                    self.g.px(EXACT_DASH.1),
                    shade.stroke_width(self.g.w(1.6)),
                ))?;
                stats.exact_segments += 1;
            } else {
                root.draw(&DashedPathElement::new(
                    run,
                    self.g.px(APPROX_DASH.0),
                    self.g.px(APPROX_DASH.1),
                    shade.stroke_width(self.g.w(2.0)),
                ))?;
                stats.dashed_segments += 1;
            }
        }
        for &i in idx {
            for &(x, y, _) in &series[i].points {
                if coords.yscale.log && y <= 0.0 {
                    clamps.push(Clamp {
                        x: coords.x_px(x),
                        group: g,
                        filled: false,
                        analytic: true,
                    });
                }
            }
        }
        Ok(())
    }

    /// 95 % CI bars, clipped to the axis; on a log axis a bar reaching 0 runs to
    /// the bottom edge without a lower cap.
    fn draw_error_bars<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        coords: &Coords<'_, '_, DB>,
        s: &Series,
        color: RGBColor,
        stats: &mut DrawStats,
    ) -> DrawResult<(), DB> {
        let (xscale, yscale) = (coords.xscale, coords.yscale);
        for &(x, y, ci) in &s.points {
            let Some(c) = ci else { continue };
            if c <= 0.0 || (yscale.log && y <= 0.0) {
                continue;
            }
            let top = coords
                .chart
                .backend_coord(&(xscale.fwd(x), yscale.fwd(y + c).min(coords.y1)))
                .1;
            let (low, capped) = if yscale.log && y - c <= 0.0 {
                (coords.bottom, false)
            } else {
                (
                    coords
                        .chart
                        .backend_coord(&(xscale.fwd(x), yscale.fwd(y - c).max(coords.y0)))
                        .1,
                    true,
                )
            };
            draw_error_bar(root, self.g, coords.x_px(x), (top, low), color, capped)?;
            stats.ci_bars += 1;
        }
        Ok(())
    }

    /// The markers of a measured series (hollow for unstable rows); points the log
    /// axis cannot place go to `clamps`.
    fn draw_markers<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        coords: &Coords<'_, '_, DB>,
        s: &Series,
        m: &SeriesMeta,
        clamps: &mut Vec<Clamp>,
        stats: &mut DrawStats,
    ) -> DrawResult<(), DB> {
        let color = group_color(m.group);
        for (k, &(x, y, _)) in s.points.iter().enumerate() {
            let stable = m.stable.get(k).copied().unwrap_or(true);
            match coords.point(x, y) {
                Some(pt) => {
                    draw_marker(root, self.g, pt, group_shape(m.group), color, stable)?;
                    stats.markers += 1;
                }
                None => clamps.push(Clamp {
                    x: coords.x_px(x),
                    group: m.group,
                    filled: stable,
                    analytic: false,
                }),
            }
            if !stable {
                stats.hollow_markers += 1;
            }
        }
        Ok(())
    }
}

/// Dash and gap of an exact baseline (logical pixels): dots.
pub(super) const EXACT_DASH: (f64, f64) = (3.0, 2.5);
/// Dash and gap of an approximate baseline: long dashes.
pub(super) const APPROX_DASH: (f64, f64) = (7.0, 4.0);

/// The colour a baseline is drawn in over its series: the series' colour
/// at 40%, so that it shows on the series' own line.
pub(super) fn baseline_shade(c: RGBColor) -> RGBColor {
    let d = |v: u8| (f64::from(v) * 0.4).round() as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

/// Data values -> pixels in one panel.
struct Coords<'a, 'c, DB: DrawingBackend> {
    chart: &'a Chart<'c, DB>,
    xscale: Scale,
    yscale: Scale,
    y0: f64,
    y1: f64,
    data_lo: f64,
    /// Pixel row of the ▼ markers' tips, just above the bottom of the frame.
    bottom: i32,
    /// Pixels a measured series is set right (or left, negative) of its x,
    /// so that series that coincide stay visible side by side.
    dodge: i32,
}

impl<DB: DrawingBackend> Clone for Coords<'_, '_, DB> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<DB: DrawingBackend> Copy for Coords<'_, '_, DB> {}

impl<DB: DrawingBackend> Coords<'_, '_, DB> {
    /// Pixel of a data point; `None` for y ≤ 0 on a log axis.
    fn point(&self, x: f64, y: f64) -> Option<(i32, i32)> {
        if self.yscale.log && y <= 0.0 {
            None
        } else {
            let (px, py) = self
                .chart
                .backend_coord(&(self.xscale.fwd(x), self.yscale.fwd(y)));
            Some((px + self.dodge, py))
        }
    }

    /// Pixel column of a data x.
    fn x_px(&self, x: f64) -> i32 {
        self.chart.backend_coord(&(self.xscale.fwd(x), self.y0)).0 + self.dodge
    }
}

/// Two short slanted strokes across a vertical axis line at `(x, y)`, with the axis
/// interrupted between them: the conventional "broken axis" mark.
fn draw_axis_break<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    x: i32,
    y: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (dx, dy, gap) = (g.px(6.0), g.px(3.0), g.px(2.5));
    root.draw(&Polygon::new(
        vec![
            (x - dx, y - gap + dy),
            (x + dx, y - gap - dy),
            (x + dx, y + gap - dy),
            (x - dx, y + gap + dy),
        ],
        WHITE.filled(),
    ))?;
    let style = AXIS_GREY.stroke_width(g.w(1.0));
    for off in [-gap, gap] {
        root.draw(&PathElement::new(
            vec![(x - dx, y + off + dy), (x + dx, y + off - dy)],
            style,
        ))?;
    }
    Ok(())
}
