//! Figure files: the format chosen by the output file's extension, the drawing
//! backend for it, and the bytes written.
//!
//! Why this module exists: the same [`render`] call draws on an SVG string (1×,
//! logical pixels), on a PDF page (1×, vector, see [`super::pdf`]) or on an RGB
//! buffer rasterised at 2× so that PNGs stay sharp in print; the PNG records its
//! resolution and the PDF its page size so that their physical size matches the SVG's.

use std::path::Path;

use plotters::prelude::*;

use super::format::Format;
use super::load::Loaded;
use super::panel::DrawStats;
use super::paper::FigureSize;
use super::pdf::{PdfBackend, PdfPage};
use super::render::render;
use super::style::Geom;
use super::{PlotError, PlotOptions};

/// Device pixels per logical pixel in PNG output.
pub(super) const PNG_SCALE: f64 = 2.0;

/// Draw `l` at `size` and write it to `out` in `format`.
pub(super) fn write_figure(
    out: &Path,
    format: Format,
    l: &Loaded,
    opts: &PlotOptions,
    size: FigureSize,
) -> Result<DrawStats, PlotError> {
    match format {
        Format::Svg => write_svg(out, l, opts, size),
        Format::Png => write_png(out, l, opts, size),
        Format::Pdf => write_pdf(out, l, opts, size),
    }
}

fn draw_error(out: &Path, message: String) -> PlotError {
    PlotError::Draw {
        file: out.display().to_string(),
        message,
    }
}

fn io_error(out: &Path, cause: std::io::Error) -> PlotError {
    PlotError::Write {
        file: out.display().to_string(),
        cause,
    }
}

/// Writes the figure whole or not at all (`qsweep_core::files::Staged`): a
/// full disk leaves an older figure as it was (issue 40).
fn write_whole(out: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    // The command refused an existing `out` without --force already.
    use qsweep_core::files::Unwritten;
    qsweep_core::files::write_whole(out, bytes, true).map_err(|e| match e {
        // A folder that does not exist: bad input, as before.
        Unwritten::Create(cause) => PlotError::Io {
            file: out.display().to_string(),
            cause,
        },
        Unwritten::Write(cause) => io_error(out, cause),
    })
}

fn write_svg(
    out: &Path,
    l: &Loaded,
    opts: &PlotOptions,
    size: FigureSize,
) -> Result<DrawStats, PlotError> {
    let (w, h) = size.px;
    let mut svg = String::new();
    let stats;
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        stats =
            render(&root, l, opts, &Geom { s: 1.0 }).map_err(|e| draw_error(out, e.to_string()))?;
        root.present().map_err(|e| draw_error(out, e.to_string()))?;
    }
    let svg = match size.inches {
        Some(inches) => printed_size(svg, (w, h), inches),
        None => svg,
    };
    write_whole(out, xml_chars(svg).as_bytes())?;
    Ok(stats)
}

/// The SVG's declared size in inches (its user units, the viewBox, stay the
/// logical pixels), so that it is placed at its printed size.
fn printed_size(svg: String, (w, h): (u32, u32), (wi, hi): (f64, f64)) -> String {
    let from = format!("<svg width=\"{w}\" height=\"{h}\" ");
    let to = format!("<svg width=\"{}in\" height=\"{}in\" ", inch(wi), inch(hi));
    svg.replacen(&from, &to, 1)
}

/// Inches with at most 3 decimals.
fn inch(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `svg` without the characters XML 1.0 forbids (C0 controls other than
/// tab, line feed and carriage return, U+FFFE, U+FFFF). Why: a `--title`,
/// legend or facet value with a control character (from the command line
/// or the CSV) made an SVG that no XML parser reads (issue 25); plotters
/// escapes `<`, `>` and `&` but passes these through.
fn xml_chars(svg: String) -> String {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{fffe}' || c == '\u{ffff}'
    };
    if !svg.contains(bad) {
        return svg;
    }
    svg.chars().filter(|&c| !bad(c)).collect()
}

fn write_pdf(
    out: &Path,
    l: &Loaded,
    opts: &PlotOptions,
    size: FigureSize,
) -> Result<DrawStats, PlotError> {
    let (w, h) = size.px;
    let mut page = PdfPage::default();
    let stats;
    {
        let backend =
            PdfBackend::new(&mut page, (w, h)).map_err(|e| draw_error(out, e.to_string()))?;
        let root = backend.into_drawing_area();
        stats =
            render(&root, l, opts, &Geom { s: 1.0 }).map_err(|e| draw_error(out, e.to_string()))?;
        root.present().map_err(|e| draw_error(out, e.to_string()))?;
    }
    let bytes = page
        .finish((w, h), 72.0 / size.px_per_inch())
        .map_err(|e| draw_error(out, e.to_string()))?;
    write_whole(out, &bytes)?;
    Ok(stats)
}

fn write_png(
    out: &Path,
    l: &Loaded,
    opts: &PlotOptions,
    size: FigureSize,
) -> Result<DrawStats, PlotError> {
    let (w, h) = size.px;
    let s = PNG_SCALE;
    let (pw, ph) = ((w as f64 * s) as u32, (h as f64 * s) as u32);
    let mut buf = vec![0u8; pw as usize * ph as usize * 3];
    let stats;
    {
        let root = BitMapBackend::with_buffer(&mut buf, (pw, ph)).into_drawing_area();
        stats = render(&root, l, opts, &Geom { s }).map_err(|e| draw_error(out, e.to_string()))?;
        root.present().map_err(|e| draw_error(out, e.to_string()))?;
    }
    let bytes = encode_png(&buf, pw, ph, s * size.px_per_inch())
        .map_err(|e| draw_error(out, e.to_string()))?;
    write_whole(out, &bytes)?;
    Ok(stats)
}

/// The PNG in memory: written to the file whole (a `BufWriter` over the
/// file would drop its last flush's error, a full disk's among them).
fn encode_png(rgb: &[u8], w: u32, h: u32, dpi: f64) -> Result<Vec<u8>, png::EncodingError> {
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // The logical pixels per inch × scale, so that the physical size matches
    // the SVG's.
    let ppm = (dpi / 0.0254).round() as u32;
    enc.set_pixel_dims(Some(png::PixelDimensions {
        xppu: ppm,
        yppu: ppm,
        unit: png::Unit::Meter,
    }));
    let mut writer = enc.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(bytes)
}
