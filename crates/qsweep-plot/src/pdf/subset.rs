//! A subset of a TrueType font for embedding in a PDF: the glyphs a figure uses,
//! at their original glyph ids.
//!
//! Why this module exists: DejaVu Sans is 760 kB, almost all of it outlines of
//! glyphs a figure never shows; a figure embeds a few dozen.  Keeping the glyph
//! ids (unused glyphs become empty) means the PDF can address glyphs by their id
//! in the full font (`/CIDToGIDMap /Identity`), and only `glyf`, `loca` and
//! `head` change.  Tables are those a TrueType font program embedded in a PDF
//! needs (ISO 32000-1 §9.9: `head`, `hhea`, `loca`, `maxp`, `cvt `, `prep`,
//! `glyf`, `hmtx`, `fpgm`); the table layout follows the OpenType specification
//! (table directory, `glyf` composite glyphs, `loca` formats, checksums).

use std::collections::BTreeSet;

/// Tables copied into the subset (sorted by tag, as the directory must be).
const KEPT: [&[u8; 4]; 9] = [
    b"cvt ", b"fpgm", b"glyf", b"head", b"hhea", b"hmtx", b"loca", b"maxp", b"prep",
];

/// Metrics of the font for the PDF font descriptor, in font units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Metrics {
    pub(super) units_per_em: u16,
    /// xMin, yMin, xMax, yMax of all glyphs (`head`).
    pub(super) bbox: [i16; 4],
    pub(super) ascent: i16,
    pub(super) descent: i16,
}

/// A parsed TrueType font (only what subsetting needs).
pub(super) struct TrueType<'a> {
    data: &'a [u8],
    /// (tag, offset, length) per table.
    tables: Vec<([u8; 4], usize, usize)>,
    /// Start and end of each glyph in `glyf`, relative to the table.
    glyphs: Vec<(usize, usize)>,
}

fn u16_at(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_be_bytes(d.get(o..o + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(o..o + 4)?.try_into().ok()?))
}

impl<'a> TrueType<'a> {
    /// Parse the table directory and `loca` of `data`; `None` if it is not a
    /// TrueType font with glyph outlines.
    pub(super) fn parse(data: &'a [u8]) -> Option<Self> {
        let n = u16_at(data, 4)? as usize;
        let mut tables = Vec::with_capacity(n);
        for i in 0..n {
            let rec = 12 + 16 * i;
            let tag: [u8; 4] = data.get(rec..rec + 4)?.try_into().ok()?;
            let off = u32_at(data, rec + 8)? as usize;
            let len = u32_at(data, rec + 12)? as usize;
            data.get(off..off + len)?;
            tables.push((tag, off, len));
        }
        let mut font = TrueType {
            data,
            tables,
            glyphs: vec![],
        };
        let head = font.table(b"head")?;
        let long = u16_at(head, 50)? == 1;
        let num_glyphs = u16_at(font.table(b"maxp")?, 4)? as usize;
        let loca = font.table(b"loca")?;
        let at = |i: usize| -> Option<usize> {
            if long {
                u32_at(loca, 4 * i).map(|v| v as usize)
            } else {
                u16_at(loca, 2 * i).map(|v| 2 * v as usize)
            }
        };
        let glyf_len = font.table(b"glyf")?.len();
        let mut glyphs = Vec::with_capacity(num_glyphs);
        for g in 0..num_glyphs {
            let (start, end) = (at(g)?, at(g + 1)?);
            if start > end || end > glyf_len {
                return None;
            }
            glyphs.push((start, end));
        }
        font.glyphs = glyphs;
        Some(font)
    }

    fn table(&self, tag: &[u8; 4]) -> Option<&'a [u8]> {
        self.tables
            .iter()
            .find(|t| &t.0 == tag)
            .map(|&(_, off, len)| &self.data[off..off + len])
    }

    fn glyph(&self, g: u16) -> &'a [u8] {
        let glyf = self.table(b"glyf").unwrap_or(&[]);
        self.glyphs
            .get(g as usize)
            .map_or(&[][..], |&(s, e)| &glyf[s..e])
    }

    /// Number of glyphs.
    #[cfg(test)]
    pub(super) fn glyph_count(&self) -> usize {
        self.glyphs.len()
    }

    /// Number of glyphs with an outline.
    #[cfg(test)]
    pub(super) fn outlined(&self) -> usize {
        self.glyphs.iter().filter(|(s, e)| e > s).count()
    }

    /// Top of glyph `g`'s outline (`yMax` of its header), e.g. the x-height for 'x'.
    pub(super) fn glyph_top(&self, g: u16) -> Option<i16> {
        u16_at(self.glyph(g), 8).map(|v| v as i16)
    }

    pub(super) fn metrics(&self) -> Option<Metrics> {
        let head = self.table(b"head")?;
        let hhea = self.table(b"hhea")?;
        let i = |d: &[u8], o: usize| u16_at(d, o).map(|v| v as i16);
        Some(Metrics {
            units_per_em: u16_at(head, 18)?,
            bbox: [i(head, 36)?, i(head, 38)?, i(head, 40)?, i(head, 42)?],
            ascent: i(hhea, 4)?,
            descent: i(hhea, 6)?,
        })
    }

    /// The glyph ids of the components of composite glyph `g` (empty for a simple glyph).
    fn components(&self, g: u16) -> Vec<u16> {
        const ARG_1_AND_2_ARE_WORDS: u16 = 0x0001;
        const WE_HAVE_A_SCALE: u16 = 0x0008;
        const MORE_COMPONENTS: u16 = 0x0020;
        const WE_HAVE_AN_X_AND_Y_SCALE: u16 = 0x0040;
        const WE_HAVE_A_TWO_BY_TWO: u16 = 0x0080;
        let d = self.glyph(g);
        let mut out = vec![];
        if d.len() < 10 || (u16_at(d, 0).unwrap_or(0) as i16) >= 0 {
            return out;
        }
        let mut o = 10;
        while let (Some(flags), Some(id)) = (u16_at(d, o), u16_at(d, o + 2)) {
            out.push(id);
            o += 4 + if flags & ARG_1_AND_2_ARE_WORDS != 0 {
                4
            } else {
                2
            };
            o += if flags & WE_HAVE_A_SCALE != 0 {
                2
            } else if flags & WE_HAVE_AN_X_AND_Y_SCALE != 0 {
                4
            } else if flags & WE_HAVE_A_TWO_BY_TWO != 0 {
                8
            } else {
                0
            };
            if flags & MORE_COMPONENTS == 0 {
                break;
            }
        }
        out
    }

    /// The font with only the outlines of `used` (and of .notdef and of the
    /// components of composite glyphs), every glyph keeping its id.
    pub(super) fn subset(&self, used: &BTreeSet<u16>) -> Vec<u8> {
        // Close the set over composite glyphs' components.
        let mut keep: BTreeSet<u16> = used.clone();
        keep.insert(0);
        let mut todo: Vec<u16> = keep.iter().copied().collect();
        while let Some(g) = todo.pop() {
            for c in self.components(g) {
                if (c as usize) < self.glyphs.len() && keep.insert(c) {
                    todo.push(c);
                }
            }
        }
        let mut glyf = Vec::new();
        let mut loca = Vec::with_capacity(4 * (self.glyphs.len() + 1));
        for g in 0..self.glyphs.len() {
            loca.extend_from_slice(&(glyf.len() as u32).to_be_bytes());
            if keep.contains(&(g as u16)) {
                glyf.extend_from_slice(self.glyph(g as u16));
                while glyf.len() % 4 != 0 {
                    glyf.push(0);
                }
            }
        }
        loca.extend_from_slice(&(glyf.len() as u32).to_be_bytes());

        let mut tables: Vec<([u8; 4], Vec<u8>)> = Vec::new();
        for tag in KEPT {
            let body = match tag {
                b"glyf" => glyf.clone(),
                b"loca" => loca.clone(),
                b"head" => {
                    let mut h = self.table(tag).unwrap_or(&[]).to_vec();
                    if h.len() >= 54 {
                        h[8..12].copy_from_slice(&[0; 4]); // checkSumAdjustment, set below
                        h[50..52].copy_from_slice(&1u16.to_be_bytes()); // long loca
                    }
                    h
                }
                _ => match self.table(tag) {
                    Some(t) => t.to_vec(),
                    None => continue,
                },
            };
            tables.push((*tag, body));
        }
        write_font(&tables)
    }
}

/// OpenType table checksum: the sum of the big-endian u32 words, zero-padded.
fn checksum(d: &[u8]) -> u32 {
    d.chunks(4).fold(0u32, |sum, c| {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        sum.wrapping_add(u32::from_be_bytes(w))
    })
}

/// A font file of `tables` (sorted by tag): directory, 4-byte aligned tables,
/// checksums and `head.checkSumAdjustment`.
fn write_font(tables: &[([u8; 4], Vec<u8>)]) -> Vec<u8> {
    let n = tables.len() as u16;
    let pow2 = 1u16 << (15 - n.leading_zeros() as u16);
    let mut out = Vec::new();
    out.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(&(pow2 * 16).to_be_bytes());
    out.extend_from_slice(&(pow2.trailing_zeros() as u16).to_be_bytes());
    out.extend_from_slice(&((n - pow2) * 16).to_be_bytes());
    let mut offset = 12 + 16 * tables.len();
    let mut head_at = None;
    for (tag, body) in tables {
        out.extend_from_slice(tag);
        out.extend_from_slice(&checksum(body).to_be_bytes());
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        if tag == b"head" {
            head_at = Some(offset);
        }
        offset += body.len().div_ceil(4) * 4;
    }
    for (_, body) in tables {
        out.extend_from_slice(body);
        while out.len() % 4 != 0 {
            out.push(0);
        }
    }
    if let Some(h) = head_at {
        let adj = 0xB1B0_AFBAu32.wrapping_sub(checksum(&out));
        out[h + 8..h + 12].copy_from_slice(&adj.to_be_bytes());
    }
    out
}
