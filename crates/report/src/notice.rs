//! What a report says about the review itself, beside its findings: that it did not
//! complete, or that its coverage is limited. One notice, rendered by every format that
//! lists issues (rdjson, Code Quality, SARIF), so that no format reads a review that is
//! not clean as "no issues".

use vouch_core::{CoverageLevel, FileStatus, Outcome};

use crate::model::ReviewReport;

/// Which notice a report carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoticeKind {
    /// Incomplete or aborted: nothing is published.
    NotCompleted,
    /// Completed with limited coverage: not a clean opinion.
    LimitedCoverage,
    /// Completed with full coverage and no verified finding, yet not a clean opinion (no
    /// clean-result audit ran, or it did not pass).
    NotClean,
}

impl NoticeKind {
    /// The check name (rdjson `code`, Code Quality `check_name`, SARIF `ruleId`).
    pub(crate) fn check(self) -> &'static str {
        match self {
            NoticeKind::NotCompleted => "vouch/review-not-completed",
            NoticeKind::LimitedCoverage => "vouch/limited-coverage",
            NoticeKind::NotClean => "vouch/not-a-clean-opinion",
        }
    }
}

/// The notice: a headline, its details (one per failure, limitation or excluded file)
/// and the file it is placed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutcomeNotice {
    pub kind: NoticeKind,
    pub headline: String,
    pub details: Vec<String>,
    /// The first file not reviewed (limited coverage), else the first changed file, else
    /// the repository root (`.`) ([`place`]).
    pub path: String,
}

impl OutcomeNotice {
    /// The headline, then each detail after `separator`.
    pub(crate) fn text(&self, separator: &str) -> String {
        let mut text = self.headline.clone();
        for d in &self.details {
            text.push_str(separator);
            text.push_str(d);
        }
        text
    }
}

/// Rule (no partial result reads as complete): a report that is incomplete or aborted
/// carries a [`NoticeKind::NotCompleted`] notice; one that completed with limited
/// coverage a [`NoticeKind::LimitedCoverage`] notice; one with full coverage and no
/// verified finding that is still not clean, or whose range changes nothing, a
/// [`NoticeKind::NotClean`] notice naming why; a clean one, or one whose findings say why
/// it is not clean, none.
pub(crate) fn outcome_notice(report: &ReviewReport) -> Option<OutcomeNotice> {
    let o = &report.opinion;
    let changed: Vec<&str> = report.expected_files.iter().map(String::as_str).collect();
    let first_changed = place(report, &changed).unwrap_or(".");
    match o.outcome {
        Outcome::Incomplete | Outcome::Aborted => {
            let state = if o.outcome == Outcome::Aborted {
                "aborted"
            } else {
                "incomplete"
            };
            Some(OutcomeNotice {
                kind: NoticeKind::NotCompleted,
                headline: format!("vouch review {state}: {}", report.summary),
                details: report.failures.iter().map(|f| f.message.clone()).collect(),
                path: first_changed.to_string(),
            })
        }
        Outcome::Findings | Outcome::NoFindings if o.coverage == Some(CoverageLevel::Limited) => {
            let details = report
                .limitations
                .iter()
                .map(|l| l.detail.clone())
                .chain(
                    report
                        .excluded_files
                        .iter()
                        .map(|e| format!("excluded {}: {}", e.path, e.reason)),
                )
                .collect();
            // A file not reviewed first, then a changed one; a text file before either.
            let not_reviewed = report.files_not_reviewed.iter().map(|f| f.path.as_str());
            let text_first: Vec<&str> = not_reviewed.chain(changed.iter().copied()).collect();
            let path = place(report, &text_first).unwrap_or(".");
            Some(OutcomeNotice {
                kind: NoticeKind::LimitedCoverage,
                headline: "vouch review: limited coverage, not a clean opinion.".into(),
                details,
                path: path.to_string(),
            })
        }
        Outcome::NoFindings if !o.clean => Some(OutcomeNotice {
            kind: NoticeKind::NotClean,
            headline: "vouch review: no verified finding, but not a clean opinion.".into(),
            details: o.not_clean_because.clone(),
            path: first_changed.to_string(),
        }),
        // A range that changes nothing (a wrong base, say) reviewed nothing: an empty
        // document would read as "no alerts" and close the category's open ones.
        Outcome::NothingToReview => Some(OutcomeNotice {
            kind: NoticeKind::NotClean,
            headline: "vouch review: the range changes nothing, so nothing was reviewed; \
                       not a clean opinion."
                .into(),
            details: o.not_clean_because.clone(),
            path: first_changed.to_string(),
        }),
        _ => None,
    }
}

/// Rule (where a notice is placed): the first of `paths` with a line a reader of the head
/// revision can show it on: a text file there first, else any file there; never a file
/// deleted at head. A binary file (an image) shows no line, so it takes a notice only
/// when no text file is among `paths`.
fn place<'a>(report: &ReviewReport, paths: &[&'a str]) -> Option<&'a str> {
    let file = |path: &str| report.changed_files.iter().find(|f| f.path == path);
    let at_head = |path: &&&str| file(path).is_none_or(|f| f.status != FileStatus::Deleted);
    let text = |path: &&&str| file(path).is_none_or(|f| !f.binary);
    let there = || paths.iter().filter(at_head);
    there().find(text).or_else(|| there().next()).copied()
}
