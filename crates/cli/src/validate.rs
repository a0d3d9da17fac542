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

/// What was given: a final report, or one of vouch's own review reports, which is not a
/// final report but embeds one.
enum Given {
    /// A final report (JSON or Markdown), as read.
    FinalReport(String),
    /// vouch's JSON review report: its embedded final report (`/finalReport`), as JSON.
    Embedded(String),
    /// vouch's Markdown review report: it embeds no final report.
    ReviewMarkdown,
}

/// The first line of vouch's Markdown review report starts so.
const REVIEW_MARKDOWN_TITLE: &str = "# vouch review";

/// Rule (a vouch review report given to the validator): its JSON form (schema
/// [`vouch_report::REPORT_SCHEMA_VERSION`]) is checked by its embedded final report; its
/// Markdown form embeds none and is unreadable, with the way to its JSON form.
fn given(text: String) -> Given {
    if text.trim_start().starts_with(REVIEW_MARKDOWN_TITLE) {
        return Given::ReviewMarkdown;
    }
    let embedded = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .filter(|v| v["schemaVersion"] == vouch_report::REPORT_SCHEMA_VERSION)
        .and_then(|v| v.get("finalReport").map(serde_json::Value::to_string));
    match embedded {
        Some(final_report) => Given::Embedded(final_report),
        None => Given::FinalReport(text),
    }
}

/// The verdict for a report file and an optional transcript file, and a note on what was
/// checked when it was not the file as given.
fn verdict(args: &ValidateArgs) -> (Verdict, Option<String>) {
    let text = match read_source(&args.file) {
        Ok(text) => text,
        Err(e) => return (Verdict::unreadable(e), None),
    };
    let (report, note) = match given(text) {
        Given::FinalReport(text) => (text, None),
        Given::Embedded(text) => (
            text,
            Some(format!(
                "note: {} is a vouch review report ({}); its embedded final report \
                 (/finalReport) was validated",
                args.file,
                vouch_report::REPORT_SCHEMA_VERSION
            )),
        ),
        Given::ReviewMarkdown => {
            return (
                Verdict::unreadable(format!(
                    "{} is vouch's Markdown review report, which embeds no final report; \
                     validate the JSON report of the same review (written with \
                     `--format json`)",
                    args.file
                )),
                None,
            );
        }
    };
    let transcript = match &args.transcript {
        Some(path) if path.as_os_str() == "-" && args.file == "-" => {
            let both = "the report and the transcript cannot both be standard input";
            return (Verdict::unreadable(both), None);
        }
        Some(path) => match read_source(&path.to_string_lossy()) {
            Ok(text) => Some(text),
            Err(e) => return (Verdict::unreadable(e), None),
        },
        None => None,
    };
    (check_text(&report, transcript.as_deref()), note)
}

/// Runs the command and prints the verdict on standard output; returns the exit code.
pub(crate) fn run(args: &ValidateArgs) -> anyhow::Result<i32> {
    let (verdict, note) = verdict(args);
    // The note goes to stderr: standard output stays the verdict alone.
    if let Some(note) = note {
        eprintln!("{note}");
    }
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
