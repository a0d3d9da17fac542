//! reviewdog Diagnostic Format (rdjson) rendering (`DiagnosticResult.json` of
//! reviewdog's `proto/rdf`).

use serde_json::{Value, json};
use vouch_core::Severity;

use crate::model::ReviewReport;

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "ERROR",
        Severity::Medium => "WARNING",
        Severity::Low => "INFO",
    }
}

/// Renders the report as an rdjson `DiagnosticResult`: one diagnostic per published
/// finding, with its path and line range, severity, and the review area as `code`.
pub fn render_rdjson(report: &ReviewReport) -> Value {
    let diagnostics: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "message": format!("{}\n\n{}\nProposed by {}; verified by {}.", f.claim, f.evidence, f.provenance.proposed_by.join(", "), f.provenance.verified_by),
                "location": {
                    "path": f.path,
                    "range": {"start": {"line": f.start_line}, "end": {"line": f.end_line}}
                },
                "severity": severity(f.severity),
                "source": {"name": "vouch"},
                "code": {"value": f.area}
            })
        })
        .collect();
    json!({
        "source": {"name": "vouch"},
        "severity": "WARNING",
        "diagnostics": diagnostics
    })
}
