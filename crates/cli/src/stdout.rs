//! stdout, written in one way: every document, summary, listing and message vouch prints
//! goes through [`write`] (or [`Text`] then [`write`]), which returns an error naming
//! stdout and the OS error instead of panicking as `print!` does on a full disk or a
//! closed pipe.
//!
//! **Decision:** a closed pipe (EPIPE, the reader went away) is an error like any other
//! for what a run produces — a review's or render's document, the summary beside the
//! files, a listing — because the document did not reach its reader whole: exit 2, and
//! the message goes to stderr (see `main::report_error`). Only texts a user reads a part
//! of (`vouch man | head`, completions, schemas, `validate-report`'s verdict, whose exit
//! code is the answer) may ignore a closed pipe, through [`StdoutError::is_closed_pipe`].

use std::fmt::Display;
use std::io::Write;

/// What could not be written to stdout, and the OS error.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {what} to stdout: {error}{}", advice(error))]
pub(crate) struct StdoutError {
    /// What was being written (`the sarif report`, `the summary`, …).
    what: String,
    /// The OS error.
    error: std::io::Error,
}

impl StdoutError {
    /// Whether the reader closed the pipe (EPIPE).
    pub(crate) fn is_closed_pipe(&self) -> bool {
        self.error.kind() == std::io::ErrorKind::BrokenPipe
    }
}

fn advice(error: &std::io::Error) -> &'static str {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        " (the program reading vouch's output exited before reading it all); \
         write the document to a file with --out FILE, or keep the reader open"
    } else {
        "; write the document to a file with --out FILE"
    }
}

/// Writes `what` to stdout through `write`, then flushes.
///
/// # Errors
/// The first write or the flush that failed, naming `what`.
pub(crate) fn write_with(
    what: impl Display,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), StdoutError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(|error| StdoutError {
            what: what.to_string(),
            error,
        })
}

/// Writes `text` to stdout; see [`write_with`].
///
/// # Errors
/// When stdout cannot take it all.
pub(crate) fn write(what: impl Display, text: &str) -> Result<(), StdoutError> {
    write_with(what, |out| out.write_all(text.as_bytes()))
}

/// Lines of text composed before they are written to stdout in one [`write`].
#[derive(Debug, Default)]
pub(crate) struct Text(String);

impl Text {
    /// Adds `line` and a line ending.
    pub(crate) fn line(&mut self, line: impl Display) {
        use std::fmt::Write as _;
        // Writing to a String cannot fail.
        let _ = writeln!(self.0, "{line}");
    }

    /// Writes the lines to stdout as `what`.
    ///
    /// # Errors
    /// When stdout cannot take them all.
    pub(crate) fn print(&self, what: impl Display) -> Result<(), StdoutError> {
        write(what, &self.0)
    }

    /// Writes the lines to stdout, or to stderr when stdout cannot take them (an error
    /// message must reach someone).
    pub(crate) fn print_or_stderr(&self) {
        if write("the error message", &self.0).is_err() {
            self.print_to_stderr();
        }
    }

    /// Writes the lines to stderr (best effort: there is nowhere else to say it).
    pub(crate) fn print_to_stderr(&self) {
        let _ = std::io::stderr().write_all(self.0.as_bytes());
    }
}
