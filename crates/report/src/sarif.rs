//! SARIF 2.1.0 rendering (OASIS SARIF v2.1.0, `sarif-schema-2.1.0.json`).

use serde_json::{Value, json};
use vouch_core::{Outcome, Severity};

use crate::model::ReviewReport;

/// A repository-relative path as a SARIF `uri-reference` (RFC 3986): each byte outside
/// the unreserved set and `/` is percent-encoded, so spaces, unicode, quotes and control
/// characters in file names stay valid URIs (SARIF §3.10, `artifactLocation.uri`).
pub fn path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The reviewed repository as a URI: `file://` plus the encoded absolute path, or the
/// encoded relative path as given (a `uri-reference`).
fn repository_uri(repository: &str) -> String {
    if repository.starts_with('/') {
        format!("file://{}", path_uri(repository))
    } else {
        path_uri(repository)
    }
}

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
                        "message": {"text": format!("citation at {}", c.revision.as_str())},
                        "physicalLocation": {
                            "artifactLocation": {"uri": path_uri(&c.path)},
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
                        "artifactLocation": {"uri": path_uri(&f.path)},
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
                "repositoryUri": repository_uri(&report.repository),
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
