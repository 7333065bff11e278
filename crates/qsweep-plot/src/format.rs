//! A figure's file format, from the output file's extension: what the
//! figure is sized for ([`super::paper`]) and how it is written
//! ([`super::output`]) both depend on it, so it sits below both.

use std::path::Path;

use super::PlotError;

/// Output formats, from the file name's extension (case-insensitive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Format {
    Svg,
    Png,
    Pdf,
}

impl Format {
    /// The format of `out`, or the error naming its unsupported extension.
    pub(super) fn of(out: &Path) -> Result<Format, PlotError> {
        let ext = out
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "svg" => Ok(Format::Svg),
            "png" => Ok(Format::Png),
            "pdf" => Ok(Format::Pdf),
            _ => Err(PlotError::UnsupportedFormat {
                file: out.display().to_string(),
                ext: if ext.is_empty() {
                    "(none)".to_string()
                } else {
                    format!(".{ext}")
                },
            }),
        }
    }
}
