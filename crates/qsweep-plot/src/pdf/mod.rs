//! PDF output: a plotters drawing backend that writes PDF page content, and the
//! document around it.
//!
//! Why this module exists: LaTeX users include figures as PDF, and plotters has
//! no PDF backend.  Converting our SVG with a general SVG renderer (usvg +
//! svg2pdf) would add a dozen crates and a font database to the build; the
//! figure uses a handful of primitives (lines, polylines, polygons, circles,
//! rectangles, text), so this backend emits them directly as PDF path and text
//! operators (ISO 32000-1 §8.5, §9.4).  It mirrors plotters' SVG backend
//! decision for decision, so the PDF is the SVG's figure: one logical pixel is
//! 1/96 inch (0.75 pt, the CSS pixel), the font size is plotters' size / 1.24,
//! text anchors are the SVG's `text-anchor` and `dy` (0.76 em for top, ±0.5 ex
//! for centre/bottom), rotations are about the anchor.  Text is set in the
//! same embedded DejaVu Sans, as a subset TrueType font addressed by glyph id
//! (a Type 0 font with Identity-H encoding and a ToUnicode map, so the text can
//! be searched and copied), with the font's own advances and kerning.

mod document;
mod subset;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ab_glyph::{Font, FontRef, GlyphId};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontTransform,
};

use super::style::FONT_BYTES;
use subset::TrueType;

/// plotters sizes fonts by line height; the SVG backend writes `font-size`
/// as size / 1.24, and so do we.
const SIZE_TO_EM: f64 = 1.0 / 1.24;
/// The SVG backend places top-anchored text with `dy="0.76em"`.
const TOP_DY_EM: f64 = 0.76;
/// Control-point distance of a cubic Bézier quarter circle, in radii.
const KAPPA: f64 = 0.552_284_749_8;

/// Errors of the PDF backend (it writes to memory: only a broken font can fail).
#[derive(Debug)]
pub(super) struct PdfError(String);

impl std::fmt::Display for PdfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PdfError {}

/// What the drawing produced: the page's content stream and what it refers to.
#[derive(Default)]
pub(super) struct PdfPage {
    content: String,
    /// Glyph ids used, with the text they stand for (for the ToUnicode map).
    glyphs: BTreeMap<u16, char>,
    /// Fill/stroke opacities below 1 used, as their bit patterns (graphics states).
    alphas: BTreeSet<u64>,
}

/// The backend: draws `size` logical pixels into a [`PdfPage`].
pub(super) struct PdfBackend<'a> {
    page: &'a mut PdfPage,
    size: (u32, u32),
    font: FontRef<'static>,
    units_per_em: f64,
    /// x-height of the font in em (CSS `ex`, used by the SVG's `dy="0.5ex"`).
    ex: f64,
}

impl<'a> PdfBackend<'a> {
    /// A backend of `size` logical pixels drawing into `page`.
    pub(super) fn new(page: &'a mut PdfPage, size: (u32, u32)) -> Result<Self, PdfError> {
        let font = FontRef::try_from_slice(FONT_BYTES)
            .map_err(|e| PdfError(format!("embedded font: {e}")))?;
        let tt = TrueType::parse(FONT_BYTES)
            .ok_or_else(|| PdfError("embedded font: not a TrueType font".to_string()))?;
        let units_per_em = f64::from(font.units_per_em().unwrap_or(2048.0));
        // Browsers take the x-height from the outline of 'x' when the OS/2
        // table does not give it (DejaVu's OS/2 is version 1).
        let x_top = tt.glyph_top(font.glyph_id('x').0).unwrap_or(1120);
        Ok(PdfBackend {
            page,
            size,
            font,
            units_per_em,
            ex: f64::from(x_top) / units_per_em,
        })
    }

    fn color(&mut self, c: BackendColor, stroke: bool) {
        let (r, g, b) = c.rgb;
        let op = if stroke { "RG" } else { "rg" };
        let _ = writeln!(
            self.page.content,
            "{} {} {} {op}",
            num(f64::from(r) / 255.0),
            num(f64::from(g) / 255.0),
            num(f64::from(b) / 255.0)
        );
    }

    /// Run `body` with `color` (stroke or fill), inside q/Q with a graphics
    /// state when it is translucent.
    fn with_color(&mut self, color: BackendColor, stroke: bool, body: impl FnOnce(&mut String)) {
        let translucent = color.alpha < 1.0;
        if translucent {
            self.page.alphas.insert(color.alpha.to_bits());
            let _ = writeln!(self.page.content, "q /{} gs", alpha_name(color.alpha));
        }
        self.color(color, stroke);
        body(&mut self.page.content);
        if translucent {
            self.page.content.push_str("Q\n");
        }
    }

    fn stroke_path(&mut self, pts: &[BackendCoord], style: &impl BackendStyle, close: bool) {
        let color = style.color();
        if color.alpha == 0.0 || pts.is_empty() {
            return;
        }
        let width = style.stroke_width();
        self.with_color(color, true, |c| {
            let _ = writeln!(c, "{width} w");
            path(c, pts);
            c.push_str(if close { "h S\n" } else { "S\n" });
        });
    }

    /// Width of `glyphs` in em, with kerning, and the TJ kerning adjustments
    /// (thousandths of an em, after each glyph but the last).
    fn advance(&self, glyphs: &[GlyphId]) -> (f64, Vec<f64>) {
        let mut width = 0.0;
        let mut kerns = Vec::with_capacity(glyphs.len());
        for (i, &g) in glyphs.iter().enumerate() {
            width += f64::from(self.font.h_advance_unscaled(g));
            if let Some(&next) = glyphs.get(i + 1) {
                let k = f64::from(self.font.kern_unscaled(g, next));
                width += k;
                kerns.push(-k / self.units_per_em * 1000.0);
            }
        }
        (width / self.units_per_em, kerns)
    }
}

/// A number as PDF content writes it: at most 3 decimals, no trailing zeros.
fn num(v: f64) -> String {
    let s = format!("{:.3}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Name of the graphics state of opacity `a`.
fn alpha_name(a: f64) -> String {
    format!("GA{}", (a.clamp(0.0, 1.0) * 1000.0).round() as u32)
}

fn path(c: &mut String, pts: &[BackendCoord]) {
    for (i, (x, y)) in pts.iter().enumerate() {
        let _ = writeln!(c, "{x} {y} {}", if i == 0 { "m" } else { "l" });
    }
}

impl DrawingBackend for PdfBackend<'_> {
    type ErrorType = PdfError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<PdfError>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<PdfError>> {
        Ok(())
    }

    fn draw_pixel(
        &mut self,
        (x, y): BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        if color.alpha == 0.0 {
            return Ok(());
        }
        self.with_color(color, false, |c| {
            let _ = writeln!(c, "{x} {y} 1 1 re f");
        });
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        self.stroke_path(&[from, to], style, false);
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        (x0, y0): BackendCoord,
        (x1, y1): BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // As the SVG backend: a rect element of the corners' difference; an
        // outline is stroked 1 px wide (SVG's default stroke width).
        self.with_color(color, !fill, |c| {
            if !fill {
                c.push_str("1 w\n");
            }
            let _ = writeln!(
                c,
                "{x0} {y0} {} {} re {}",
                x1 - x0,
                y1 - y0,
                if fill { "f" } else { "S" }
            );
        });
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        let pts: Vec<BackendCoord> = path.into_iter().collect();
        self.stroke_path(&pts, style, false);
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        let pts: Vec<BackendCoord> = vert.into_iter().collect();
        let color = style.color();
        if color.alpha == 0.0 || pts.is_empty() {
            return Ok(());
        }
        self.with_color(color, false, |c| {
            path(c, &pts);
            c.push_str("h f\n");
        });
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        (cx, cy): BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let width = style.stroke_width();
        let (x, y, r) = (f64::from(cx), f64::from(cy), f64::from(radius));
        let k = KAPPA * r;
        self.with_color(color, !fill, |c| {
            if !fill {
                let _ = writeln!(c, "{width} w");
            }
            // Four cubic Béziers, clockwise from the rightmost point.
            let _ = writeln!(c, "{} {} m", num(x + r), num(y));
            for (p1, p2, p3) in [
                ((x + r, y + k), (x + k, y + r), (x, y + r)),
                ((x - k, y + r), (x - r, y + k), (x - r, y)),
                ((x - r, y - k), (x - k, y - r), (x, y - r)),
                ((x + k, y - r), (x + r, y - k), (x + r, y)),
            ] {
                let _ = writeln!(
                    c,
                    "{} {} {} {} {} {} c",
                    num(p1.0),
                    num(p1.1),
                    num(p2.0),
                    num(p2.1),
                    num(p3.0),
                    num(p3.1)
                );
            }
            c.push_str(if fill { "h f\n" } else { "h S\n" });
        });
        Ok(())
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        (x0, y0): BackendCoord,
    ) -> Result<(), DrawingErrorKind<PdfError>> {
        let color = style.color();
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let size = style.size() * SIZE_TO_EM;
        let glyphs: Vec<GlyphId> = text.chars().map(|ch| self.font.glyph_id(ch)).collect();
        for (g, ch) in glyphs.iter().zip(text.chars()) {
            self.page.glyphs.entry(g.0).or_insert(ch);
        }
        let (width_em, kerns) = self.advance(&glyphs);
        let anchor = style.anchor();
        let dx = -width_em
            * size
            * match anchor.h_pos {
                HPos::Left => 0.0,
                HPos::Center => 0.5,
                HPos::Right => 1.0,
            };
        let dy = size
            * match anchor.v_pos {
                VPos::Top => TOP_DY_EM,
                VPos::Center => 0.5 * self.ex,
                VPos::Bottom => -0.5 * self.ex,
            };
        // SVG's rotate(θ, x0, y0), θ clockwise on the y-down page.
        let theta: f64 = match style.transform() {
            FontTransform::None => 0.0,
            FontTransform::Rotate90 => 90.0,
            FontTransform::Rotate180 => 180.0,
            FontTransform::Rotate270 => 270.0,
        };
        let (sin, cos) = theta.to_radians().sin_cos();
        let (sin, cos) = (tidy(sin), tidy(cos));
        // Glyph space (y up) -> page pixels (y down): the baseline starts at
        // (x0, y0) + R(θ)·(dx, dy).
        let (e, f) = (
            f64::from(x0) + cos * dx - sin * dy,
            f64::from(y0) + sin * dx + cos * dy,
        );
        let mut tj = String::from("[<");
        for (i, g) in glyphs.iter().enumerate() {
            let _ = write!(tj, "{:04X}", g.0);
            if let Some(&k) = kerns.get(i) {
                if k.abs() >= 0.5 {
                    let _ = write!(tj, "> {} <", num(k));
                }
            }
        }
        tj.push_str(">] TJ");
        self.with_color(color, false, |c| {
            let _ = writeln!(
                c,
                "BT /F1 {} Tf {} {} {} {} {} {} Tm {tj} ET",
                num(size),
                num(cos),
                num(sin),
                num(sin),
                num(-cos),
                num(e),
                num(f)
            );
        });
        Ok(())
    }
}

/// `sin`/`cos` of multiples of 90° without the 1e-16 residues of floating point.
fn tidy(v: f64) -> f64 {
    if (v - v.round()).abs() < 1e-12 {
        v.round()
    } else {
        v
    }
}

impl PdfPage {
    /// The PDF document of this page, `size` logical pixels large at
    /// `pt_per_px` points each (0.75: the CSS pixel).
    pub(super) fn finish(&self, size: (u32, u32), pt_per_px: f64) -> Result<Vec<u8>, PdfError> {
        document::write(self, size, pt_per_px)
    }
}

/// What the unit tests of `qsweep plot` check of the font subset.
#[cfg(test)]
pub(super) mod tests_api {
    /// (glyphs, glyphs with an outline) of a TrueType font; `None` when it
    /// does not parse.
    pub(crate) fn glyph_counts(data: &[u8]) -> Option<(usize, usize)> {
        super::subset::TrueType::parse(data).map(|t| (t.glyph_count(), t.outlined()))
    }
}
