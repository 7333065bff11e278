//! `qsweep completions SHELL`: a shell completion script.

use anyhow::Result;

use qsweep_core::output;

/// Flags of `qsweep completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `qsweep completions SHELL`: the completion script, from the clap
/// definition (so it can never list a flag that does not exist).
pub fn completions<C: clap::CommandFactory>(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = C::command();
    // Into memory first: clap_complete panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "qsweep", &mut script);
    output::to_stdout(script)
}
