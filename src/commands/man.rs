//! `qsweep man`: the manual pages (roff).

use std::path::PathBuf;

use anyhow::Result;

use qsweep_core::output;

/// Flags of `qsweep man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write qsweep.1 and one qsweep-SUBCOMMAND.1 per subcommand into this folder instead
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `qsweep man`: the manual page, from the clap definition.
pub fn man<C: clap::CommandFactory>(args: &ManArgs) -> Result<()> {
    let cmd = C::command();
    match &args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            output::to_stdout(page)?;
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err(qsweep_core::UsageError(format!(
                    "--dir: '{}' is not a folder; expected an existing folder for the pages",
                    dir.display()
                ))
                .into());
            }
            clap_mangen::generate_to(cmd, dir)?;
            eprintln!("qsweep: wrote the manual pages to {}", dir.display());
        }
    }
    output::flush_stdout();
    Ok(())
}
