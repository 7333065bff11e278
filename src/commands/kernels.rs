//! `qsweep kernels`: the WGSL of every GPU pipeline variant, for other compilers.

use std::path::PathBuf;

use anyhow::Result;

use qsweep_core::output;
use qsweep_core::UsageError;

/// Flags of `qsweep kernels`.
#[derive(clap::Args, Debug)]
pub struct KernelsArgs {
    /// Folder to write into (created if absent): one .wgsl file per pipeline variant and manifest.tsv
    #[arg(long, short, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace .wgsl files and manifest.tsv already in DIR
    #[arg(long)]
    pub force: bool,
}

/// `qsweep kernels --out DIR`: every source the GPU engine can compile,
/// from the function it compiles from, for other compilers (CI: naga's
/// back ends, spirv-val, glslangValidator, Tint).
pub fn kernels(args: &KernelsArgs) -> Result<()> {
    let manifest = args.out.join("manifest.tsv");
    if manifest.exists() && !args.force {
        return Err(UsageError(format!(
            "--out: {} already holds a manifest.tsv; expected an empty or new folder (--force replaces it)",
            args.out.display()
        ))
        .into());
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(UsageError(format!(
            "--out: {} is not a folder; expected a folder to write kernels into",
            args.out.display()
        ))
        .into());
    }
    let n = qsweep_gpu::write_kernels(&args.out)?;
    output::to_stdout(format!(
        "{n} kernel sources and manifest.tsv written to {}\n",
        args.out.display()
    ))
}
