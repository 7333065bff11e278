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
use super::style::{text_size, Geom};
use super::PlotOptions;

/// Automatic size of one panel in logical pixels.
const PANEL_W: u32 = 470;
const PANEL_H: u32 = 360;

/// Figure size in logical pixels: `--width`/`--height`, or room for the panel grid,
/// the legend (estimated at 150 px per entry) and the title.
pub(super) fn figure_size(l: &Loaded, opts: &PlotOptions) -> (u32, u32) {
    let w = if opts.width > 0 {
        opts.width
    } else {
        (l.cols as u32 * PANEL_W + 20).max(560)
    };
    let h = if opts.height > 0 {
        opts.height
    } else {
        let legend = 34 + 26 * (legend::max_entries(l) as u32 * 150 / w.max(1));
        let title = if opts.title.is_some() { 36 } else { 0 };
        l.rows as u32 * PANEL_H + legend + title + 10
    };
    (w.max(200), h.max(150))
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
