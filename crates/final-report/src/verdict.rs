//! The verdict shared by `vouch validate-report`, the MCP tool and the hook script.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::input::{ReportParseError, parse_report};
use crate::transcript::{TranscriptError, parse_transcript};
use crate::violation::{Violation, Warning};

/// Exit code: the report is valid.
pub const EXIT_VALID: i32 = 0;
/// Exit code: the report is invalid.
pub const EXIT_INVALID: i32 = 1;
/// Exit code: the report or transcript could not be read.
pub const EXIT_UNREADABLE: i32 = 3;

/// Input that is not a report or transcript at all.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The report text could not be read as JSON or Markdown.
    #[error("report: {0}")]
    Report(#[from] ReportParseError),
    /// The transcript could not be read as JSON lines.
    #[error("{0}")]
    Transcript(#[from] TranscriptError),
}

/// The outcome of validating one report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Whether the report is valid.
    pub valid: bool,
    /// The process exit code this verdict maps to: 0 valid, 1 invalid, 3 unreadable.
    pub exit_code: i32,
    /// Every violation, in rule order.
    pub violations: Vec<Violation>,
    /// Narrative sentences that assert state but were not checked against the handoff
    /// (about another change, or outside the claim grammar). Never affect validity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Why the input could not be read (only for exit code 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Verdict {
    /// The verdict for a report with these violations.
    pub fn from_violations(violations: Vec<Violation>) -> Self {
        let valid = violations.is_empty();
        Self {
            valid,
            exit_code: if valid { EXIT_VALID } else { EXIT_INVALID },
            violations,
            warnings: Vec::new(),
            error: None,
        }
    }

    /// The verdict for input that could not be read.
    pub fn unreadable(error: impl std::fmt::Display) -> Self {
        Self {
            valid: false,
            exit_code: EXIT_UNREADABLE,
            violations: Vec::new(),
            warnings: Vec::new(),
            error: Some(error.to_string()),
        }
    }

    /// Human-readable text: one line per violation
    /// (`CODE [rule N] /pointer: message`), then a summary line.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        if let Some(error) = &self.error {
            out.push_str(&format!("unreadable input: {error}\n"));
            return out;
        }
        for v in &self.violations {
            let pointer = if v.pointer.is_empty() {
                "/"
            } else {
                &v.pointer
            };
            out.push_str(&format!(
                "{} [rule {}] {pointer}: {}\n",
                v.code, v.rule, v.message
            ));
        }
        for w in &self.warnings {
            out.push_str(&format!(
                "warning {} line {}: {}: \"{}\"\n",
                w.pointer, w.line, w.message, w.sentence
            ));
        }
        if self.valid {
            out.push_str("report is valid\n");
        } else {
            out.push_str(&format!(
                "report is invalid: {} violation{}\n",
                self.violations.len(),
                if self.violations.len() == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// Parse and validate a report text (JSON or Markdown) with an optional JSON-lines
/// transcript text.
pub fn check_inputs(report: &str, transcript: Option<&str>) -> Result<Vec<Violation>, InputError> {
    let report = parse_report(report)?;
    let transcript = transcript.map(parse_transcript).transpose()?;
    Ok(crate::validate(&report, transcript.as_deref()))
}

/// [`check_inputs`] as a [`Verdict`] (unreadable input becomes exit code 3).
pub fn check_text(report: &str, transcript: Option<&str>) -> Verdict {
    let parsed = parse_report(report)
        .map_err(InputError::from)
        .and_then(|r| {
            let t = transcript.map(parse_transcript).transpose()?;
            Ok((r, t))
        });
    match parsed {
        Ok((report, transcript)) => crate::verdict(&report, transcript.as_deref()),
        Err(error) => Verdict::unreadable(error),
    }
}
