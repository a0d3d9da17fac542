//! reviewdog Diagnostic Format rendering: rdjson (one `DiagnosticResult`) and rdjsonl (one
//! `Diagnostic` per line), as reviewdog's `proto/rdf/reviewdog.proto` defines them.
//!
//! Findings outside the diff stay in the document: reviewdog's filter modes decide what
//! is posted. The outcome is visible: an incomplete or aborted review is one ERROR
//! diagnostic saying so, and limited coverage one WARNING naming why.

use serde_json::{Value, json};
use vouch_core::{Revision, Severity, SourceWindow};

use crate::failure::RunFailure;
use crate::model::ReviewReport;
use crate::notice::{NoticeKind, outcome_notice};

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "ERROR",
        Severity::Medium => "WARNING",
        Severity::Low => "INFO",
    }
}

fn range(start: u32, end: u32) -> Value {
    json!({"start": {"line": start}, "end": {"line": end}})
}

fn related(window: &SourceWindow, what: &str) -> Value {
    let side = match window.revision {
        Revision::Head => "at head",
        Revision::Base => "at the merge base (old side of the change)",
    };
    json!({
        "message": format!("{what}: lines {}-{} {side}", window.start_line, window.end_line),
        "location": {"path": window.path, "range": range(window.start_line, window.end_line)}
    })
}

fn finding(f: &vouch_core::Finding) -> Value {
    let mut related_locations = Vec::new();
    // reviewdog places ranges on the new side: a finding about removed lines is
    // file-level, its old-side lines a related location.
    let location = match f.revision {
        Revision::Head => json!({"path": f.path, "range": range(f.start_line, f.end_line)}),
        Revision::Base => {
            let base = SourceWindow {
                revision: Revision::Base,
                path: f.path.clone(),
                start_line: f.start_line,
                end_line: f.end_line,
            };
            related_locations.push(related(&base, "the finding's removed lines"));
            json!({"path": f.path})
        }
    };
    related_locations.extend(f.citations.iter().map(|c| related(c, "citation")));
    json!({
        "message": format!(
            "{}\n\n{}\nProposed by {}; verified by {}.",
            f.message(),
            f.evidence,
            f.provenance.proposed_by.join(", "),
            f.provenance.verified_by
        ),
        "location": location,
        "severity": severity(f.severity),
        "source": {"name": "vouch"},
        "code": {"value": f.area},
        "related_locations": related_locations
    })
}

/// The diagnostics of a report: one per published finding, plus its outcome notice
/// ([`outcome_notice`]): ERROR when the review is incomplete or aborted, WARNING when its
/// coverage is limited or, with no finding, its opinion is not clean.
pub fn diagnostics(report: &ReviewReport) -> Vec<Value> {
    let mut out: Vec<Value> = report.findings.iter().map(finding).collect();
    if let Some(notice) = outcome_notice(report) {
        let level = match notice.kind {
            NoticeKind::NotCompleted => "ERROR",
            NoticeKind::LimitedCoverage | NoticeKind::NotClean => "WARNING",
        };
        out.push(json!({
            "message": notice.text("\n- "),
            "location": {"path": notice.path},
            "severity": level,
            "source": {"name": "vouch"},
            "code": {"value": notice.kind.check()}
        }));
    }
    out
}

fn failure_diagnostic(failure: &RunFailure) -> Value {
    json!({
        "message": format!("{}\n{}", failure.summary(), failure.message),
        "location": {"path": "."},
        "severity": "ERROR",
        "source": {"name": "vouch"},
        "code": {"value": "vouch/review-failed"}
    })
}

fn result(diagnostics: Vec<Value>) -> Value {
    json!({"source": {"name": "vouch"}, "diagnostics": diagnostics})
}

/// Renders the report as an rdjson `DiagnosticResult` (see [`diagnostics`]).
pub fn render_rdjson(report: &ReviewReport) -> Value {
    result(diagnostics(report))
}

/// The rdjson document of a run that ended before it had a report: one ERROR.
pub fn render_rdjson_failure(failure: &RunFailure) -> Value {
    result(vec![failure_diagnostic(failure)])
}

/// One compact JSON `Diagnostic` per line.
pub fn lines(diagnostics: &[Value]) -> String {
    diagnostics
        .iter()
        .map(|d| serde_json::to_string(d).expect("JSON serialises") + "\n")
        .collect()
}

/// Renders the report as rdjsonl: the diagnostics of [`diagnostics`], one per line.
pub fn render_rdjsonl(report: &ReviewReport) -> String {
    lines(&diagnostics(report))
}

/// The rdjsonl document of a run that ended before it had a report.
pub fn render_rdjsonl_failure(failure: &RunFailure) -> String {
    lines(&[failure_diagnostic(failure)])
}
