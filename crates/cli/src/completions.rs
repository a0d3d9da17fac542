//! `vouch completions SHELL` and `vouch man`: generated from the same clap definition
//! as the parser, so they never drift from the real flags.

use std::io::Write;

use clap::{CommandFactory, ValueEnum};

use crate::stdout::StdoutError;

/// Shells `vouch completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    /// Bash (source it, or put it in bash-completion's folder).
    Bash,
    /// Zsh (put it on $fpath as `_vouch`).
    Zsh,
    /// Fish (put it in ~/.config/fish/completions/vouch.fish).
    Fish,
    /// PowerShell (dot-source it from $PROFILE).
    Powershell,
}

/// Writes the completion script for `shell` of the command `C` to `out`.
pub(crate) fn write_completions<C: CommandFactory>(shell: Shell, out: &mut dyn Write) {
    let mut command = C::command();
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
    };
    clap_complete::generate(shell, &mut command, "vouch", out);
}

/// Writes the roff man page of the command `C` (with its subcommands) to `out`.
///
/// # Errors
/// When `out` cannot be written.
pub(crate) fn write_man<C: CommandFactory>(out: &mut dyn Write) -> std::io::Result<()> {
    let command = C::command();
    clap_mangen::Man::new(command.clone()).render(out)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        writeln!(out)?;
        clap_mangen::Man::new(sub.clone())
            .title(format!("vouch-{}", sub.get_name()))
            .render(out)?;
    }
    Ok(())
}

/// Writes `text` (`what`) to stdout and returns exit code 0; a reader that stops early
/// (`| head`) is not an error.
///
/// # Errors
/// Any other failure to write stdout (a full disk).
pub(crate) fn print(what: &str, text: &[u8]) -> Result<i32, StdoutError> {
    match crate::stdout::write_with(what, |out| out.write_all(text)) {
        Err(e) if !e.is_closed_pipe() => Err(e),
        _ => Ok(0),
    }
}
