//! What every drawing step shares: the embedded font, the text and line greys, and
//! [`Geom`], which turns logical pixels into device pixels.
//!
//! Why this module exists: the same figure is drawn at 1× (SVG) and 2× (PNG), so
//! every length and font size is written in logical pixels and scaled in one place;
//! and text must be measurable (for layout) with the very font that draws it.
//!
//! Text is rendered with DejaVu Sans embedded in the binary (`data/fonts/`) through
//! `ab_glyph`, so no system font library (fontconfig/freetype) is needed.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Font family named in SVG text (and registered for the bitmap backend).
pub(super) const FONT_FAMILY: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";
pub(super) static FONT_BYTES: &[u8] = include_bytes!("../../../data/fonts/DejaVuSans.ttf");

/// Colour of all text.
pub(super) const TEXT: RGBColor = RGBColor(20, 20, 20);
/// Colour of legend samples that explain a convention rather than a series.
pub(super) const META_GREY: RGBColor = RGBColor(80, 80, 80);
/// Colour of axis lines, panel frames and axis-break marks.
pub(super) const AXIS_GREY: RGBColor = RGBColor(40, 40, 40);

/// Register the embedded font with plotters once; `false` if that failed.
pub(super) fn ensure_font() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES).is_ok()
    })
}

/// Geometry in logical pixels, multiplied by `s` when drawing.
pub(super) struct Geom {
    pub(super) s: f64,
}

impl Geom {
    /// A length or coordinate in device pixels.
    pub(super) fn px(&self, v: f64) -> i32 {
        (v * self.s).round() as i32
    }
    /// A stroke width in device pixels (at least 1).
    pub(super) fn w(&self, v: f64) -> u32 {
        ((v * self.s).round() as u32).max(1)
    }
    /// The embedded font at `size` logical pixels, in the text colour.
    pub(super) fn font(&self, size: f64) -> TextStyle<'static> {
        TextStyle::from((FONT_FAMILY, size * self.s).into_font()).color(&TEXT)
    }
}

/// Width and height of `text` in device pixels (a rough guess if it cannot be measured).
pub(super) fn text_size<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> (i32, i32) {
    area.estimate_text_size(text, style)
        .map(|(w, h)| (w as i32, h as i32))
        .unwrap_or((text.chars().count() as i32 * 8, 14))
}
