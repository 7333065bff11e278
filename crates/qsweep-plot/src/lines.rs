//! Where a record of a CSV sits in its file: the line numbers that every
//! message about a malformed or odd row names. Read once by [`super::inputs`]
//! (which reads the files) and used by [`super::load`] through the table it
//! returns, so that neither imports the other for it.

use super::PlotError;

/// The error for a malformed record, with the line number where the csv crate knows it.
pub(super) fn csv_error(file: &str, data: &[u8], e: csv::Error) -> PlotError {
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos: Some(pos),
            expected_len,
            len,
        } => format!(
            "line {}: {len} field(s) where the header has {expected_len}",
            line_at(data, pos.byte())
        ),
        csv::ErrorKind::Utf8 { pos: Some(pos), .. } => {
            format!("line {}: invalid UTF-8", line_at(data, pos.byte()))
        }
        _ => e.to_string(),
    };
    PlotError::Csv {
        file: file.to_string(),
        message,
    }
}

/// 1-based line number of the record starting at `byte` (the csv crate's own line
/// count is one short for CRLF files).
fn line_at(data: &[u8], byte: u64) -> u64 {
    LineCounter::default().at(data, byte)
}

/// [`line_at`] for records asked in file order: each call counts only the
/// newlines since the previous one. Why: counting from the start of the file
/// for every record made `qsweep plot` quadratic in rows (issue 25: 100,000
/// rows took minutes); this keeps it linear.
#[derive(Default)]
pub(super) struct LineCounter {
    /// Bytes counted so far, and the newlines among them.
    upto: usize,
    newlines: u64,
}

impl LineCounter {
    pub(super) fn at(&mut self, data: &[u8], byte: u64) -> u64 {
        let mut b = (byte as usize).min(data.len());
        while b < data.len() && (data[b] == b'\r' || data[b] == b'\n') {
            b += 1;
        }
        if b < self.upto {
            // Asked out of order: start over.
            *self = LineCounter::default();
        }
        self.newlines += data[self.upto..b].iter().filter(|&&c| c == b'\n').count() as u64;
        self.upto = b;
        1 + self.newlines
    }
}
