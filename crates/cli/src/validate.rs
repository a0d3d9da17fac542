//! `vouch validate-report`: check a review final report (see the vouch-final-report
//! crate and docs/final-report.md).
//!
//! Exit codes: 0 valid, 1 invalid, 3 unreadable input (missing file, not JSON or
//! Markdown with exactly one fenced JSON block, malformed transcript).

use std::io::Read;
use std::path::{Path, PathBuf};

use vouch_final_report::{Verdict, check_text};

/// Output format of the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// One line per violation (`CODE [rule N] /pointer: message`), then a summary line.
    Text,
    /// The verdict as JSON: `{valid, exitCode, violations: [{code, rule, pointer, message}], error?}`.
    Json,
}

/// Arguments of `vouch validate-report`.
#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// The report: canonical JSON, or Markdown whose single fenced ```json block is the
    /// handoff and whose prose is the narrative. `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    /// The session transcript (JSON lines: command, tool and event entries ordered by
    /// `seq`) to check the command and mutation ledgers against.
    #[arg(long, value_name = "LOG.jsonl")]
    pub(crate) transcript: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Read a file, or standard input for `-`, as UTF-8 text.
pub(crate) fn read_source(name: &str) -> Result<String, String> {
    let mut text = String::new();
    if name == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        return Ok(text);
    }
    std::fs::read_to_string(Path::new(name)).map_err(|e| format!("cannot read {name}: {e}"))
}

/// The verdict for a report file and an optional transcript file.
fn verdict(args: &ValidateArgs) -> Verdict {
    let report = match read_source(&args.file) {
        Ok(text) => text,
        Err(e) => return Verdict::unreadable(e),
    };
    let transcript = match &args.transcript {
        Some(path) if path.as_os_str() == "-" && args.file == "-" => {
            return Verdict::unreadable(
                "the report and the transcript cannot both be standard input",
            );
        }
        Some(path) => match read_source(&path.to_string_lossy()) {
            Ok(text) => Some(text),
            Err(e) => return Verdict::unreadable(e),
        },
        None => None,
    };
    check_text(&report, transcript.as_deref())
}

/// Runs the command and prints the verdict on standard output; returns the exit code.
pub(crate) fn run(args: &ValidateArgs) -> anyhow::Result<i32> {
    let verdict = verdict(args);
    let text = match args.format {
        Format::Text => verdict.render_text(),
        Format::Json => serde_json::to_string_pretty(&verdict)? + "\n",
    };
    // A closed pipe (`| head`) is not an error of the validation.
    match crate::stdout::write("the verdict", &text) {
        Err(e) if !e.is_closed_pipe() => return Err(e.into()),
        _ => {}
    }
    Ok(verdict.exit_code)
}
