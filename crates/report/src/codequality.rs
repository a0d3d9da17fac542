//! GitLab Code Quality rendering: the JSON array of issues GitLab reads from a
//! `codequality` report artifact for its merge-request widget (a subset of Code
//! Climate's issue format: `description`, `check_name`, `fingerprint`, `severity`,
//! `location.path`, `location.lines.begin`).

use serde_json::{Value, json};
use vouch_core::{Revision, Severity};

use crate::failure::RunFailure;
use crate::model::ReviewReport;
use crate::notice::{NoticeKind, outcome_notice};
use crate::sarif::fingerprint;

/// GitLab's severities are `info`, `minor`, `major`, `critical` and `blocker`.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::High => "major",
        Severity::Medium => "minor",
        Severity::Low => "info",
    }
}

fn issue(
    description: String,
    check: &str,
    fingerprint: String,
    severity: &str,
    path: &str,
    lines: (u32, u32),
) -> Value {
    json!({
        "type": "issue",
        "description": description,
        "check_name": check,
        "fingerprint": fingerprint,
        "severity": severity,
        "location": {"path": path, "lines": {"begin": lines.0, "end": lines.1}}
    })
}

fn finding(f: &vouch_core::Finding) -> Value {
    let fp = fingerprint(f.area.as_str(), &f.path, f.revision, &f.claim);
    let (description, lines) = match f.revision {
        Revision::Head => (f.message(), (f.start_line, f.end_line)),
        // GitLab places lines on the new side: a finding about removed lines is put at
        // the top of the file and says which old lines it means.
        Revision::Base => (
            format!(
                "{} (about removed lines {}-{} of the old side)",
                f.message(),
                f.start_line,
                f.end_line
            ),
            (1, 1),
        ),
    };
    issue(
        format!("{description} [vouch: {}]", f.area),
        &format!("vouch/{}", f.area),
        fp,
        severity(f.severity),
        &f.path,
        lines,
    )
}

/// Renders the report as a GitLab Code Quality array: one issue per published finding,
/// plus its outcome notice ([`outcome_notice`]): an incomplete or aborted review is one
/// `major` issue saying that nothing is published, limited coverage or another not-clean
/// opinion without findings one `minor` issue saying why it is not a clean opinion (so
/// the widget never reads any of them as "no issues").
pub fn render_codequality(report: &ReviewReport) -> Value {
    let mut issues: Vec<Value> = report.findings.iter().map(finding).collect();
    if let Some(notice) = outcome_notice(report) {
        let severity = match notice.kind {
            NoticeKind::NotCompleted => "major",
            NoticeKind::LimitedCoverage | NoticeKind::NotClean => "minor",
        };
        let check = notice.kind.check();
        issues.push(issue(
            notice.text(" "),
            check,
            fingerprint(check, &notice.path, Revision::Head, ""),
            severity,
            &notice.path,
            (1, 1),
        ));
    }
    Value::Array(issues)
}

/// The Code Quality document of a run that ended before it had a report.
pub fn render_codequality_failure(failure: &RunFailure) -> Value {
    json!([issue(
        format!("{} {}", failure.summary(), failure.message),
        "vouch/review-failed",
        fingerprint("vouch/review-failed", ".", Revision::Head, ""),
        "major",
        ".",
        (1, 1),
    )])
}
