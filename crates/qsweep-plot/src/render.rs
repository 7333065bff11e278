//! Laying out the figure: its size, the title, the legend strip below and the grid
//! of panels above it.
//!
//! Why this module exists: the figure is drawn the same way on an SVG and a bitmap
//! backend; this is the one place that decides where each part goes, in logical
//! pixels scaled by [`Geom`].  The parts draw themselves: [`super::legend`] and
//! [`super::panel`].

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::legend::{self, Legend};
use super::load::Loaded;
use super::panel::{draw_panels, DrawStats};
use super::paper::{FigureSize, PX_PER_INCH};
use super::style::{text_size, Geom};
use super::PlotOptions;

/// Automatic size of one panel in logical pixels.
const PANEL_W: u32 = 470;
const PANEL_H: u32 = 360;

/// Figure size: `--width`/`--height` in pixels, or in inches (laid out at
/// [`PX_PER_INCH`]), or room for the panel grid, the legend (estimated at 150
/// px per entry) and the title. A panel given less width than the automatic
/// one is made less tall in proportion (down to 180 px).
pub(super) fn figure_size(l: &Loaded, opts: &PlotOptions) -> FigureSize {
    let printed = opts.width_in > 0.0 || opts.height_in > 0.0;
    let px = |inches: f64| (inches * PX_PER_INCH).round() as u32;
    let auto_w = (l.cols as u32 * PANEL_W + 20).max(560);
    let w = if opts.width_in > 0.0 {
        px(opts.width_in)
    } else if opts.width > 0 && !printed {
        opts.width
    } else {
        auto_w
    };
    let h = if opts.height_in > 0.0 {
        px(opts.height_in)
    } else if opts.height > 0 && !printed {
        opts.height
    } else {
        let panel_w = (w.saturating_sub(20) / l.cols.max(1) as u32) as f64;
        let panel_h = ((panel_w * f64::from(PANEL_H) / f64::from(PANEL_W)).round() as u32)
            .clamp(180, PANEL_H);
        let legend = 34 + 26 * (legend::max_entries(l) as u32 * 150 / w.max(1));
        let title = if opts.title.is_some() { 36 } else { 0 };
        l.rows as u32 * panel_h + legend + title + 10
    };
    let (w, h) = (w.max(200), h.max(150));
    FigureSize {
        px: (w, h),
        inches: printed.then(|| (f64::from(w) / PX_PER_INCH, f64::from(h) / PX_PER_INCH)),
    }
}

/// Draw the whole figure on `root` (white background, title, legend, panels).
pub(super) fn render<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    l: &Loaded,
    opts: &PlotOptions,
    g: &Geom,
) -> Result<DrawStats, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let mut area = root.margin(g.px(6.0), g.px(4.0), g.px(6.0), g.px(6.0));
    if let Some(title) = &opts.title {
        area = draw_title(root, &area, title, g)?;
    }
    let legend = Legend::new(root, l, area.dim_in_pixel().0 as i32, g);
    let area_h = area.dim_in_pixel().1 as i32;
    let (panels_area, legend_area) = area.split_vertically(area_h - legend.height(g));
    legend.draw(root, &legend_area, g)?;
    draw_panels(root, &panels_area, l, opts, g)
}

/// The figure title, centred on top of `area`; returns the area below it.
fn draw_title<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    title: &str,
    g: &Geom,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (w, _h) = root.dim_in_pixel();
    let style = g.font(21.0).pos(Pos::new(HPos::Center, VPos::Top));
    let (_, th) = text_size(root, title, &style);
    area.draw_text(title, &style, ((w as i32) / 2 - g.px(6.0), g.px(4.0)))?;
    Ok(area.split_vertically(th + g.px(14.0)).1)
}
