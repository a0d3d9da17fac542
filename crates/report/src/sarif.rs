//! SARIF 2.1.0 rendering (OASIS SARIF v2.1.0, `sarif-schema-2.1.0.json`).

use serde_json::{Value, json};
use vouch_core::{Outcome, Severity};

use crate::model::ReviewReport;

/// SARIF `result.level` for a severity (§3.27.10: `error`, `warning`, `note`).
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// Renders the report as a SARIF 2.1.0 log with one run. Each published finding is a
/// SARIF result whose `ruleId` is its review area, with a physical location (path and
/// line region), its citations as `relatedLocations`, and provenance in `properties`.
/// An incomplete or aborted review has no results and `executionSuccessful: false` with
/// the failures as tool execution notifications.
pub fn render_sarif(report: &ReviewReport) -> Value {
    let mut rules: Vec<String> = report.findings.iter().map(|f| f.area.clone()).collect();
    rules.sort();
    rules.dedup();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let related: Vec<Value> = f
                .citations
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({
                        "id": i,
                        "message": {"text": format!("citation at {:?}", c.revision).to_lowercase()},
                        "physicalLocation": {
                            "artifactLocation": {"uri": c.path},
                            "region": {"startLine": c.start_line, "endLine": c.end_line}
                        }
                    })
                })
                .collect();
            json!({
                "ruleId": f.area,
                "ruleIndex": rules.iter().position(|r| r == &f.area).unwrap_or(0),
                "level": level(f.severity),
                "message": {"text": f.claim},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": f.start_line, "endLine": f.end_line}
                    }
                }],
                "relatedLocations": related,
                "properties": {
                    "severity": f.severity.as_str(),
                    "evidence": f.evidence,
                    "proposedBy": f.provenance.proposed_by,
                    "verifiedBy": f.provenance.verified_by,
                    "verificationPasses": f.provenance.verification_passes
                }
            })
        })
        .collect();
    let completed = matches!(
        report.opinion.outcome,
        Outcome::Findings | Outcome::NoFindings | Outcome::NothingToReview
    );
    let notifications: Vec<Value> = report
        .failures
        .iter()
        .map(|f| json!({"level": "error", "message": {"text": f.message}}))
        .chain(
            report
                .limitations
                .iter()
                .map(|l| json!({"level": "warning", "message": {"text": l.detail}})),
        )
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": report.tool.name,
                "version": report.tool.version,
                "rules": rules.iter().map(|r| json!({"id": r, "name": r, "shortDescription": {"text": format!("vouch review area: {r}")}})).collect::<Vec<_>>()
            }},
            "invocations": [{
                "executionSuccessful": completed,
                "toolExecutionNotifications": notifications
            }],
            "versionControlProvenance": [{
                "repositoryUri": "file:///",
                "revisionId": report.head.sha
            }],
            "results": results,
            "properties": {
                "outcome": report.opinion.outcome,
                "coverage": report.opinion.coverage,
                "clean": report.opinion.clean
            }
        }]
    })
}
