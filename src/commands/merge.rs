//! `qsweep merge`: the pieces of a sharded sweep (`run --shard K/N`) into one CSV.

use std::path::PathBuf;

use anyhow::Result;

use qsweep_core::{merge, output};

/// Flags of `qsweep merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The merged CSV to write (its .meta.json goes beside it)
    #[arg(value_name = "OUT.csv")]
    pub out: PathBuf,
    /// The pieces: CSVs of `qsweep run --shard K/N`, each with its .meta.json
    #[arg(value_name = "PIECE.csv", required = true)]
    pub pieces: Vec<PathBuf>,
    /// Overwrite OUT.csv if it exists
    #[arg(long)]
    pub force: bool,
}

/// `qsweep merge`: the pieces of a sharded sweep into one CSV.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let merged = merge::merge(&args.out, &args.pieces, args.force)?;
    output::to_stdout(output::summary_table(&merged.rows))?;
    eprintln!(
        "qsweep: merged {} pieces: {} rows to {} (provenance in {})",
        args.pieces.len(),
        merged.rows.len(),
        args.out.display(),
        merged.meta.display()
    );
    Ok(())
}
