//! Rules a review report must keep with its own evidence, checked whenever a report is
//! written and whenever a saved one is read (`vouch render`, `vouch publish`): a report
//! edited by hand cannot publish what its own records do not support.

use std::collections::{HashMap, HashSet};

use vouch_core::{
    Candidate, NARROWING_SLACK_LINES, NotReviewedFile, NotReviewedReason, Role, SourceLedger,
    SourceWindow, StageRecord, StageStatus, Verdict, files_reviewed_from_records,
    within_narrowing_slack,
};

use crate::ReviewReport;

/// Rule (report evidence): every problem of `report` with the evidence it carries, in
/// words (empty when it keeps every rule):
///
/// - every finding cites source, and every citation lies inside what a verifier stage
///   read or was given (its ledger);
/// - every finding merges candidates the report records as verified, at their file, no
///   more severe than the most severe of them, with a claim; no finding repeats another;
/// - an opinion that publishes findings publishes one for every verified candidate;
/// - a clean opinion has no findings and decides every candidate; when no lane proposed
///   a candidate, it rests on a clean-result audit whose record is accepted;
/// - every changed file is listed once, as reviewed or as not reviewed; the files
///   reviewed are files of the canonical list, and exactly the files its own records
///   (changed files, candidate stages' assignments, receipts and ledgers) show were
///   reviewed;
/// - the summary and the embedded final report are the ones its records give.
pub fn evidence_problems(report: &ReviewReport) -> Vec<String> {
    let mut problems = Vec::new();
    published_problems(report, &mut problems);
    finding_problems(report, &mut problems);
    clean_problems(report, &mut problems);
    file_problems(report, &mut problems);
    words_problems(report, &mut problems);
    problems
}

/// The summary and the embedded final report are what the records give
/// ([`crate::summary_line`], [`crate::embedded_final_report`] for the command line the
/// final report names).
fn words_problems(report: &ReviewReport, problems: &mut Vec<String>) {
    let summary = crate::summary_line(report);
    if report.summary != summary {
        problems.push(format!(
            "the summary does not say what the records do (they say: {summary:?})"
        ));
    }
    let Some(command_line) = report.final_report["handoff"]["replayCommands"][0].as_str() else {
        problems.push("the embedded final report names no command line".into());
        return;
    };
    match crate::embedded_final_report(report, command_line) {
        Ok(expected) if expected == report.final_report => {}
        Ok(_) => problems.push(
            "the embedded final report is not the one the records give (its outcome, \
             coverage, files reviewed or narrative differ)"
                .into(),
        ),
        Err(e) => problems.push(format!("the records give no valid final report: {e}")),
    }
}

fn published_problems(report: &ReviewReport, problems: &mut Vec<String>) {
    let o = &report.opinion;
    if o.publish_findings && report.findings.is_empty() {
        problems.push("an opinion that publishes findings, with none".into());
    }
    if !o.publish_findings {
        return;
    }
    for c in report
        .candidates
        .iter()
        .filter(|c| c.verdict == Some(Verdict::Verified))
    {
        let published = report
            .findings
            .iter()
            .any(|f| f.provenance.candidate_ids.contains(&c.candidate.id));
        if !published {
            problems.push(format!(
                "verified candidate `{}` is in no published finding",
                c.candidate.id
            ));
        }
    }
    for (i, f) in report.findings.iter().enumerate() {
        if report.findings[..i].contains(f) {
            problems.push(format!("finding {} repeats an earlier one", i + 1));
        }
    }
}

fn finding_problems(report: &ReviewReport, problems: &mut Vec<String>) {
    let mut read = SourceLedger::default();
    for stage in report.stages.iter().filter(|s| s.role == Role::Verifier) {
        read.extend(&stage.source_ledger());
    }
    let verified: HashMap<&str, &Candidate> = report
        .candidates
        .iter()
        .filter(|c| c.verdict == Some(Verdict::Verified))
        .map(|c| (c.candidate.id.as_str(), &c.candidate))
        .collect();
    for (i, f) in report.findings.iter().enumerate() {
        let at = format!(
            "finding {} ({}:{}-{})",
            i + 1,
            f.path,
            f.start_line,
            f.end_line
        );
        if f.citations.is_empty() {
            problems.push(format!("{at} cites no source"));
        }
        for c in &f.citations {
            if let Err(e) = read.check(c) {
                problems.push(format!(
                    "{at} cites {}:{}-{}, which no verifier stage read: {e}",
                    c.path, c.start_line, c.end_line
                ));
            }
        }
        let ids = &f.provenance.candidate_ids;
        if ids.is_empty() {
            problems.push(format!("{at} names no candidate it was verified from"));
        }
        for id in ids {
            let Some(candidate) = verified.get(id.as_str()) else {
                problems.push(format!(
                    "{at} names candidate `{id}`, which no verified candidate record holds"
                ));
                continue;
            };
            if candidate.path != f.path || candidate.revision != f.revision {
                problems.push(format!(
                    "{at} is not at its candidate `{id}`'s file ({})",
                    candidate.path
                ));
            }
        }
        let most_severe = ids
            .iter()
            .filter_map(|id| verified.get(id.as_str()))
            .map(|c| c.severity)
            .min();
        if most_severe.is_some_and(|s| f.severity < s) {
            problems.push(format!(
                "{at} is more severe ({}) than any candidate it was verified from",
                f.severity.as_str()
            ));
        }
        if f.claim.trim().is_empty() {
            problems.push(format!("{at} has an empty claim"));
        }
        let candidates: Vec<&Candidate> = ids
            .iter()
            .filter_map(|id| verified.get(id.as_str()).copied())
            .collect();
        narrowing_problems(report, &read, f, &candidates, &at, problems);
    }
}

/// What the live run requires of a verified finding beyond its citations: its lines
/// read by a verifier stage, its area its candidates', its range within
/// [`NARROWING_SLACK_LINES`] of theirs, and a verifier stage that verified it.
fn narrowing_problems(
    report: &ReviewReport,
    read: &SourceLedger,
    f: &vouch_core::Finding,
    candidates: &[&Candidate],
    at: &str,
    problems: &mut Vec<String>,
) {
    let own = SourceWindow {
        revision: f.revision,
        path: f.path.clone(),
        start_line: f.start_line,
        end_line: f.end_line,
    };
    if read.check(&own).is_err() {
        problems.push(format!("{at} lies on lines no verifier stage read"));
    }
    if candidates.iter().any(|c| c.area != f.area) {
        problems.push(format!("{at} is not in its candidates' area"));
    }
    let from = candidates.iter().map(|c| c.start_line).min();
    let to = candidates.iter().map(|c| c.end_line).max();
    if let (Some(from), Some(to)) = (from, to)
        && !within_narrowing_slack((f.start_line, f.end_line), (from, to))
    {
        problems.push(format!(
            "{at} lies more than {NARROWING_SLACK_LINES} lines from its candidates' lines {from}-{to}"
        ));
    }
    // A verifier's passes are labelled from its own label (`verifier [batch 2/3]`,
    // `verifier (focused …)`), which is what a finding names.
    if !report
        .stages
        .iter()
        .any(|s| s.role == Role::Verifier && s.label.starts_with(&f.provenance.verified_by))
    {
        problems.push(format!(
            "{at} names `{}` as its verifier, which is no verifier stage of the report",
            f.provenance.verified_by
        ));
    }
}

fn clean_problems(report: &ReviewReport, problems: &mut Vec<String>) {
    if !report.opinion.clean {
        return;
    }
    if !report.findings.is_empty() {
        problems.push(format!(
            "a clean opinion with {} finding(s)",
            report.findings.len()
        ));
    }
    let undecided = report
        .candidates
        .iter()
        .filter(|c| c.verdict.is_none_or(|v| v == Verdict::Unresolved))
        .count();
    if undecided > 0 {
        problems.push(format!(
            "a clean opinion with {undecided} candidate(s) unresolved or undecided"
        ));
    }
    let audit = |s: &&StageRecord| s.role == Role::CleanResultAudit;
    let audit_labels: HashSet<&str> = report
        .stages
        .iter()
        .filter(audit)
        .map(|s| s.label.as_str())
        .collect();
    let lane_candidates = report
        .candidates
        .iter()
        .filter(|c| !audit_labels.contains(c.candidate.proposed_by.as_str()))
        .count();
    let audit_accepted = report
        .stages
        .iter()
        .filter(audit)
        .any(|s| s.status == StageStatus::Accepted);
    if lane_candidates == 0 && !audit_accepted {
        problems.push(
            "a clean opinion where no lane proposed a candidate and no clean-result audit \
             record is accepted"
                .into(),
        );
    }
}

fn file_problems(report: &ReviewReport, problems: &mut Vec<String>) {
    // Every changed file is in exactly one of the two lists.
    let listed = report.files_reviewed.len() + report.files_not_reviewed.len();
    if listed != report.counts.files as usize {
        problems.push(format!(
            "{} file(s) listed as reviewed or not reviewed, but the change has {}",
            listed, report.counts.files
        ));
    }
    let mut seen = HashSet::new();
    let all = report
        .files_reviewed
        .iter()
        .chain(report.files_not_reviewed.iter().map(|f| &f.path));
    for path in all {
        if !seen.insert(path.as_str()) {
            problems.push(format!("{path} is listed twice"));
        }
    }
    derived_problems(report, problems);
    let expected: HashSet<&str> = report.expected_files.iter().map(String::as_str).collect();
    let not_reviewed: HashSet<&str> = report
        .files_not_reviewed
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    for path in &report.files_reviewed {
        if !expected.contains(path.as_str()) {
            problems.push(format!(
                "{path} is listed as reviewed but is not in the canonical list"
            ));
        }
        if not_reviewed.contains(path.as_str()) {
            problems.push(format!(
                "{path} is listed both as reviewed and as not reviewed"
            ));
        }
    }
}

/// The files reviewed derived from the report's own records
/// ([`files_reviewed_from_records`], as the host derived them): every file the report
/// lists as reviewed must be one, and every one must be listed.
fn derived_problems(report: &ReviewReport, problems: &mut Vec<String>) {
    if report.changed_files.len() != report.counts.files as usize {
        problems.push(format!(
            "{} changed file(s) recorded, but the change has {}",
            report.changed_files.len(),
            report.counts.files
        ));
    } else if vouch_core::ChangeCounts::of(&report.changed_files) != report.counts {
        problems.push(
            "the change's counts (hunks, added or removed lines) are not those of its \
             changed files"
                .into(),
        );
    }
    for s in report.stages.iter().filter(|s| s.role == Role::Verifier) {
        if s.lane.is_some() {
            problems.push(format!(
                "{} is a verifier's record but names a lane: verification reviews no file",
                s.label
            ));
        }
    }
    let set_aside: Vec<NotReviewedFile> = report
        .files_not_reviewed
        .iter()
        .filter(|f| {
            matches!(
                f.reason,
                NotReviewedReason::Excluded
                    | NotReviewedReason::Binary
                    | NotReviewedReason::Unassigned
            )
        })
        .cloned()
        .collect();
    let left_out: Vec<String> = report
        .files_not_reviewed
        .iter()
        .filter(|f| f.reason == NotReviewedReason::OverBudget)
        .map(|f| f.path.clone())
        .collect();
    let derived =
        files_reviewed_from_records(&report.changed_files, &set_aside, &left_out, &report.stages);
    let derived_set: HashSet<&str> = derived.reviewed.iter().map(String::as_str).collect();
    let listed: HashSet<&str> = report.files_reviewed.iter().map(String::as_str).collect();
    for path in &report.files_reviewed {
        if !derived_set.contains(path.as_str()) {
            problems.push(format!(
                "{path} is listed as reviewed, but no lane's accepted receipts and ledgers \
                 show every changed line of it seen"
            ));
        }
    }
    for path in &derived.reviewed {
        if !listed.contains(path.as_str()) {
            problems.push(format!(
                "{path} was reviewed by the stages' records but is not listed as reviewed"
            ));
        }
    }
}
