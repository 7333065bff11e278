//! `qsweep help [COMMAND]`: the same text as `qsweep [COMMAND] --help`.

use anyhow::Result;

use qsweep_core::output;

/// Flags of `qsweep help`.
#[derive(clap::Args, Debug)]
pub struct HelpArgs {
    /// The subcommand (and its subcommands) to explain; none: qsweep itself
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `qsweep help [COMMAND]`: the same text as `qsweep [COMMAND] --help`.
pub fn help<C: clap::CommandFactory>(args: &HelpArgs) -> Result<()> {
    let mut cmd = C::command();
    // Built, so subcommands know their full name (`qsweep run`).
    cmd.build();
    let mut at = &mut cmd;
    for name in &args.command {
        let known: Vec<String> = at
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        at = match at.find_subcommand_mut(name) {
            Some(sub) => sub,
            None => {
                return Err(qsweep_core::UsageError(format!(
                    "help: '{name}' is not a subcommand; expected one of {}",
                    known.join(", ")
                ))
                .into())
            }
        };
    }
    output::to_stdout(at.render_help().to_string())
}
