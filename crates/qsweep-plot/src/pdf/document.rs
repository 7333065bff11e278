//! The PDF file around a drawn page: objects, font, cross-reference table.
//!
//! Why this module exists: the page content is only operators; a reader needs
//! the document structure of ISO 32000-1 §7.5 (header, numbered objects, `xref`
//! table of their byte offsets, trailer) and the font as §9.7 describes a
//! composite font: a Type 0 font with `Identity-H` encoding whose descendant is
//! a `CIDFontType2` (TrueType) font addressed by glyph id, with its advance
//! widths (`/W`), its font program (`FontFile2`, our subset) and a `ToUnicode`
//! CMap (§9.10.3) so that text extraction gives the characters back.
//! Nothing time- or machine-dependent is written: the same figure gives the same
//! bytes (like the SVG).

use std::fmt::Write as _;
use std::io::Write as _;

use ab_glyph::{Font, FontRef};

use super::subset::TrueType;
use super::{alpha_name, num, PdfError, PdfPage};
use crate::style::FONT_BYTES;

/// PostScript name of the embedded font.
const FONT_NAME: &str = "DejaVuSans";

/// The document of `page`, `(w, h)` logical pixels large at `pt_per_px`
/// points each (the CSS pixel, 1/96 inch, is 0.75 pt).
pub(super) fn write(
    page: &PdfPage,
    (w, h): (u32, u32),
    pt_per_px: f64,
) -> Result<Vec<u8>, PdfError> {
    let bad_font = || PdfError("embedded font: not a TrueType font".to_string());
    let tt = TrueType::parse(FONT_BYTES).ok_or_else(bad_font)?;
    let metrics = tt.metrics().ok_or_else(bad_font)?;
    let font = FontRef::try_from_slice(FONT_BYTES).map_err(|_| bad_font())?;
    let upem = f64::from(metrics.units_per_em);
    let per_mille = |v: f64| num(v / upem * 1000.0);
    let (wpt, hpt) = (f64::from(w) * pt_per_px, f64::from(h) * pt_per_px);

    let mut doc = Pdf::default();
    let used: std::collections::BTreeSet<u16> = page.glyphs.keys().copied().collect();
    let tag = subset_tag(&used);
    let base_font = format!("{tag}+{FONT_NAME}");

    // 1 catalog, 2 pages, 3 page, 4 content, 5 Type 0 font, 6 CID font,
    // 7 descriptor, 8 font program, 9 ToUnicode, 10 info.
    doc.object("<< /Type /Catalog /Pages 2 0 R >>".to_string());
    doc.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string());
    let mut gstates = String::new();
    for bits in &page.alphas {
        let a = f64::from_bits(*bits);
        let _ = write!(
            gstates,
            " /{} << /Type /ExtGState /CA {} /ca {} >>",
            alpha_name(a),
            num(a),
            num(a)
        );
    }
    let gstates = if gstates.is_empty() {
        String::new()
    } else {
        format!(" /ExtGState <<{gstates} >>")
    };
    doc.object(format!(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {} {}] /Resources << /Font << /F1 5 0 R >>{gstates} >> /Contents 4 0 R >>",
        num(wpt),
        num(hpt)
    ));
    // Draw in logical pixels with y down, as the SVG; 4 M is SVG's miter limit.
    let content = format!(
        "{} 0 0 {} 0 {} cm\n4 M\n{}",
        num(pt_per_px),
        num(-pt_per_px),
        num(hpt),
        page.content
    );
    doc.stream("", content.as_bytes())?;
    doc.object(format!(
        "<< /Type /Font /Subtype /Type0 /BaseFont /{base_font} /Encoding /Identity-H /DescendantFonts [6 0 R] /ToUnicode 9 0 R >>"
    ));
    let mut widths = String::new();
    for &g in &used {
        let adv = f64::from(font.h_advance_unscaled(ab_glyph::GlyphId(g)));
        let _ = write!(widths, "{g} [{}] ", per_mille(adv));
    }
    doc.object(format!(
        "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{base_font} /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 7 0 R /DW 1000 /W [{}] /CIDToGIDMap /Identity >>",
        widths.trim_end()
    ));
    let [x0, y0, x1, y1] = metrics.bbox.map(f64::from);
    let cap = tt
        .glyph_top(font.glyph_id('H').0)
        .map_or(f64::from(metrics.ascent), f64::from);
    doc.object(format!(
        "<< /Type /FontDescriptor /FontName /{base_font} /Flags 4 /FontBBox [{} {} {} {}] /ItalicAngle 0 /Ascent {} /Descent {} /CapHeight {} /StemV 80 /FontFile2 8 0 R >>",
        per_mille(x0),
        per_mille(y0),
        per_mille(x1),
        per_mille(y1),
        per_mille(f64::from(metrics.ascent)),
        per_mille(f64::from(metrics.descent)),
        per_mille(cap)
    ));
    let program = tt.subset(&used);
    doc.stream(&format!(" /Length1 {}", program.len()), &program)?;
    doc.stream("", to_unicode(page).as_bytes())?;
    doc.object(format!(
        "<< /Producer (qsweep {}) /Creator (qsweep plot) >>",
        env!("CARGO_PKG_VERSION")
    ));
    Ok(doc.finish(1, 10))
}

/// The six capital letters that name a font subset (§9.6.4), derived from
/// the glyphs it holds (FNV-1a), so that the same figure gives the same name.
fn subset_tag(used: &std::collections::BTreeSet<u16>) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for g in used {
        for b in g.to_be_bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    (0..6)
        .map(|_| {
            let c = (b'A' + (h % 26) as u8) as char;
            h /= 26;
            c
        })
        .collect()
}

/// The ToUnicode CMap: each glyph id back to the character it was drawn for.
fn to_unicode(page: &PdfPage) -> String {
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let pairs: Vec<(&u16, &char)> = page.glyphs.iter().collect();
    // At most 100 entries per block (§9.10.3).
    for block in pairs.chunks(100) {
        let _ = writeln!(s, "{} beginbfchar", block.len());
        for (g, ch) in block {
            let utf16: String = ch
                .encode_utf16(&mut [0; 2])
                .iter()
                .map(|u| format!("{u:04X}"))
                .collect();
            let _ = writeln!(s, "<{g:04X}> <{utf16}>");
        }
        s.push_str("endbfchar\n");
    }
    s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    s
}

/// Objects in the order written, numbered from 1.
#[derive(Default)]
struct Pdf {
    objects: Vec<Vec<u8>>,
}

impl Pdf {
    fn object(&mut self, body: String) {
        self.objects.push(body.into_bytes());
    }

    /// A Flate-compressed stream object with `extra` dictionary entries.
    fn stream(&mut self, extra: &str, data: &[u8]) -> Result<(), PdfError> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(data)
            .map_err(|e| PdfError(format!("compressing a stream: {e}")))?;
        let packed = z
            .finish()
            .map_err(|e| PdfError(format!("compressing a stream: {e}")))?;
        let mut obj = format!(
            "<< /Length {} /Filter /FlateDecode{extra} >>\nstream\n",
            packed.len()
        )
        .into_bytes();
        obj.extend_from_slice(&packed);
        obj.extend_from_slice(b"\nendstream");
        self.objects.push(obj);
        Ok(())
    }

    /// The file: header, objects, cross-reference table, trailer.
    fn finish(self, root: usize, info: usize) -> Vec<u8> {
        // The second line's bytes above 127 mark the file as binary (§7.5.2).
        let mut out: Vec<u8> = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
        let mut offsets = Vec::with_capacity(self.objects.len());
        for (i, body) in self.objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", self.objects.len() + 1);
        for o in offsets {
            // Each entry is exactly 20 bytes (§7.5.4).
            let _ = writeln!(table, "{o:010} 00000 n ");
        }
        let _ = write!(
            table,
            "trailer\n<< /Size {} /Root {root} 0 R /Info {info} 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            self.objects.len() + 1
        );
        out.extend_from_slice(table.as_bytes());
        out
    }
}
