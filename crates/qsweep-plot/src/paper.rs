//! Figure sizes for print: lengths in inches, centimetres, millimetres or
//! points, the paper presets, and the scale a printed figure is laid out at.
//!
//! Why this module exists: a figure is laid out in logical pixels (the SVG's
//! user units), and its text sizes are fixed in them. A figure sized in pixels
//! and then scaled into a paper's column shrinks its text with it (a 960 px
//! figure in a 3.5 in column: 3 pt). A figure sized in inches is instead laid
//! out at [`PX_PER_INCH`] logical pixels per inch, so its tick labels print at
//! 8 pt, axis titles at 9 pt and the title at 11 pt, whatever its size; the
//! SVG then declares its size in inches (`width="3.5in"`), the PDF's page is
//! that size, and the PNG records the matching resolution.

use super::format::Format;
use super::PlotOptions;

/// Logical pixels per inch of a figure sized in inches: plotters draws a
/// 15 px font at 12.1 user units, which at this scale is 8.06 pt.
pub const PX_PER_INCH: f64 = 108.0;

/// The named sizes of `--size`: (name, width in inches, what it is).
pub const PAPER_SIZES: [(&str, f64, &str); 2] = [
    (
        "column",
        3.5,
        "one column of a two-column paper (3.5 in, 8.9 cm)",
    ),
    (
        "page",
        7.0,
        "the text width of a two-column paper's page (7 in, 17.8 cm)",
    ),
];

/// Width of the `page` preset, the default size of a PDF.
const PDF_DEFAULT_INCHES: f64 = 7.0;

/// A length given on the command line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Length {
    /// Logical (SVG) pixels: a bare number, or `600px`.
    Px(u32),
    /// A printed length, in inches (`3.5in`, `8.8cm`, `89mm`, `252pt`).
    Inches(f64),
}

/// Parse a length: `600` or `600px` (pixels), `3.5in`, `8.8cm`, `89mm` or
/// `252pt`; a preset name of [`PAPER_SIZES`] is the preset's width.
pub fn parse_length(text: &str) -> Result<Length, String> {
    let t = text.trim();
    if let Some((_, w, _)) = PAPER_SIZES.iter().find(|(n, _, _)| *n == t) {
        return Ok(Length::Inches(*w));
    }
    let units: [(&str, f64); 5] = [
        ("in", 1.0),
        ("cm", 1.0 / 2.54),
        ("mm", 1.0 / 25.4),
        ("pt", 1.0 / 72.0),
        ("px", 0.0),
    ];
    let (number, unit) = units
        .iter()
        .find_map(|(u, f)| t.strip_suffix(u).map(|n| (n.trim(), Some((*u, *f)))))
        .unwrap_or((t, None));
    let bad = || {
        format!(
            "'{text}' is not a length; expected a number of pixels (600), or of inches, \
             centimetres, millimetres or points (3.5in, 8.8cm, 89mm, 252pt), or {}",
            PAPER_SIZES
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>()
                .join(" or ")
        )
    };
    let v: f64 = number.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad());
    }
    match unit {
        None | Some(("px", _)) => {
            if v.fract() != 0.0 || v > 100_000.0 {
                return Err(format!(
                    "'{text}': pixels are a whole number up to 100000; expected e.g. 600 or 3.5in"
                ));
            }
            Ok(Length::Px(v as u32))
        }
        Some((_, f)) => {
            let inches = v * f;
            if inches > 200.0 {
                return Err(format!(
                    "'{text}' is over 200 inches; expected a figure's size (3.5in, 8.8cm)"
                ));
            }
            Ok(Length::Inches(inches))
        }
    }
}

/// The options a figure in `format` is drawn with: a PDF given no size is
/// sized for a page's text width ([`PDF_DEFAULT_INCHES`]), since a PDF is
/// for print; other formats keep their pixel size.
pub(super) fn default_for(format: Format, opts: &PlotOptions) -> PlotOptions {
    let mut o = opts.clone();
    let no_size = o.width == 0 && o.height == 0 && o.width_in <= 0.0 && o.height_in <= 0.0;
    if format == Format::Pdf && no_size {
        o.width_in = PDF_DEFAULT_INCHES;
    }
    o
}

/// A figure's size: its logical pixels and, when sized for print, inches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct FigureSize {
    pub(super) px: (u32, u32),
    /// Width and height in inches (printed figures).
    pub(super) inches: Option<(f64, f64)>,
}

impl FigureSize {
    /// Logical pixels per inch: [`PX_PER_INCH`] for a printed figure, the
    /// CSS pixel's 96 otherwise.
    pub(super) fn px_per_inch(&self) -> f64 {
        if self.inches.is_some() {
            PX_PER_INCH
        } else {
            96.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_in_every_unit() {
        assert_eq!(parse_length("600"), Ok(Length::Px(600)));
        assert_eq!(parse_length("600px"), Ok(Length::Px(600)));
        assert_eq!(parse_length("3.5in"), Ok(Length::Inches(3.5)));
        assert_eq!(parse_length("column"), Ok(Length::Inches(3.5)));
        assert_eq!(parse_length("page"), Ok(Length::Inches(7.0)));
        let Ok(Length::Inches(cm)) = parse_length("8.89cm") else {
            panic!()
        };
        assert!((cm - 3.5).abs() < 1e-9);
        let Ok(Length::Inches(pt)) = parse_length("252pt") else {
            panic!()
        };
        assert!((pt - 3.5).abs() < 1e-9);
        for bad in ["", "3.5 furlongs", "-2in", "1.5", "nanin", "1e9cm"] {
            assert!(parse_length(bad).is_err(), "{bad}");
        }
    }
}
