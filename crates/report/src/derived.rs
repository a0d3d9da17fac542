//! What a report says in words, derived from its records: the one-line summary and the
//! embedded final report. `vouch review` writes them from the report it assembled, and a
//! saved report's check derives them again, so neither can say what the records do not.

use vouch_core::{CoverageLevel, Opinion, Outcome};
use vouch_final_report::{
    LocalRangeReview, ReviewOutcome, SelfCheckError, checked_local_range_review_report,
};

use crate::ReviewReport;

/// The one-line summary. Counts of reviewed files count only the files reviewed (in an
/// accepted receipt and seen in full), never the changed or expected files.
pub fn summary_line(report: &ReviewReport) -> String {
    let files = report.files_reviewed.len();
    let unreviewed = match report.files_not_reviewed.len() {
        0 => String::new(),
        n => format!(" ({n} other changed file(s) not reviewed, listed in the report)"),
    };
    match report.opinion.outcome {
        Outcome::NothingToReview
            if report.merge_base == report.head.sha && report.base.sha != report.head.sha =>
        {
            "Nothing to review: head is an ancestor of base, so the change merge-base(base, head)..head is empty (were base and head swapped?). No model was called.".into()
        }
        Outcome::NothingToReview => {
            "Nothing to review: the range changes no file. No model was called.".into()
        }
        Outcome::Aborted => {
            "The review was cancelled before it finished; nothing is published.".into()
        }
        Outcome::Incomplete => format!(
            "The review could not finish ({} failure(s)); no finding is published.",
            report.failures.len()
        ),
        Outcome::Findings => format!(
            "{} verified finding(s) in {files} reviewed file(s){unreviewed}.",
            report.findings.len()
        ),
        Outcome::NoFindings if report.opinion.clean => {
            format!("Clean: no verified finding in {files} reviewed file(s), full coverage.")
        }
        Outcome::NoFindings => format!(
            "No verified finding in {files} reviewed file(s){unreviewed}; not a clean opinion (see below)."
        ),
    }
}

/// The final report's outcome for an opinion.
fn final_report_outcome(opinion: &Opinion) -> ReviewOutcome {
    let coverage = match opinion.coverage {
        Some(CoverageLevel::Full) => Some("full"),
        Some(CoverageLevel::Limited) => Some("limited"),
        None => None,
    };
    ReviewOutcome::parse(opinion.outcome.as_str(), coverage).unwrap_or(ReviewOutcome::Incomplete)
}

/// The final report `report` embeds, for the review run as `command_line`: a read-only
/// local-range review of its files reviewed with its opinion, its narrative the summary.
///
/// # Errors
/// [`SelfCheckError`] when the final report fails its own validator (a bug in vouch).
pub fn embedded_final_report(
    report: &ReviewReport,
    command_line: &str,
) -> Result<serde_json::Value, SelfCheckError> {
    let final_report = checked_local_range_review_report(&LocalRangeReview {
        repository: report.repository.clone(),
        base_sha: report.merge_base.clone(),
        head_sha: report.head.sha.clone(),
        files_reviewed: report.files_reviewed.clone(),
        outcome: final_report_outcome(&report.opinion),
        narrative: format!(
            "vouch read-only review of a local range. {}",
            report.summary
        ),
        command_line: command_line.to_string(),
    })?;
    Ok(serde_json::to_value(final_report).expect("a final report serialises"))
}
