//! `qsweep export`: a results CSV as JSON, Markdown, Parquet or CSV.

use std::path::PathBuf;

use anyhow::Result;

use qsweep_core::export::Format;

/// Flags of `qsweep export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// A results CSV (of qsweep run, merge, or analytic -o)
    #[arg(value_name = "IN.csv")]
    pub input: PathBuf,
    /// The file to write, its format by extension (.csv, .json, .md, .parquet), or - for stdout
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    /// The format, whatever OUT's extension: csv, json, md or parquet [default: from OUT; csv for -]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Only these columns, in this order [comma-separated; default: all, CI columns beside their estimates]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Overwrite OUT if it exists
    #[arg(long)]
    pub force: bool,
}

/// `qsweep export`: a results CSV as JSON, Markdown, Parquet or CSV.
pub fn export(args: &ExportArgs) -> Result<()> {
    let stdout = args.out == std::path::Path::new("-");
    let format = match &args.format {
        Some(name) => Format::from_name(name)?,
        None if stdout => Format::Csv,
        None => match args.out.extension() {
            None => {
                return Err(qsweep_core::UsageError(format!(
                    "out: '{}' has no extension; expected {} (or --format)",
                    args.out.display(),
                    Format::EXPECTED
                ))
                .into())
            }
            Some(_) => Format::of_path(&args.out)?,
        },
    };
    let same = match (args.input.canonicalize(), args.out.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(qsweep_core::UsageError(format!(
            "out: '{}' is the input; expected a new file",
            args.out.display()
        ))
        .into());
    }
    let columns = (!args.columns.is_empty()).then_some(args.columns.as_slice());
    let rows = qsweep_core::export::export(&args.input, &args.out, format, columns, args.force)?;
    if !stdout {
        eprintln!(
            "qsweep: wrote {} ({rows} rows as {})",
            args.out.display(),
            format.extension()
        );
    }
    Ok(())
}
