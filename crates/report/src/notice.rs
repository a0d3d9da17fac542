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
}

impl NoticeKind {
    /// The check name (rdjson `code`, Code Quality `check_name`, SARIF `ruleId`).
    pub(crate) fn check(self) -> &'static str {
        match self {
            NoticeKind::NotCompleted => "vouch/review-not-completed",
            NoticeKind::LimitedCoverage => "vouch/limited-coverage",
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
    /// the repository root (`.`); never a file deleted at head, which has no line to
    /// show a notice on.
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
/// coverage a [`NoticeKind::LimitedCoverage`] notice; a clean or fully covered one none.
pub(crate) fn outcome_notice(report: &ReviewReport) -> Option<OutcomeNotice> {
    let o = &report.opinion;
    // A file deleted at head has no line a reader of the head revision can show.
    let at_head = |path: &&str| {
        report
            .changed_files
            .iter()
            .find(|f| f.path == *path)
            .is_none_or(|f| f.status != FileStatus::Deleted)
    };
    let first_changed = report
        .expected_files
        .iter()
        .map(String::as_str)
        .find(at_head)
        .unwrap_or(".");
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
            let path = report
                .files_not_reviewed
                .iter()
                .map(|f| f.path.as_str())
                .find(at_head)
                .unwrap_or(first_changed);
            Some(OutcomeNotice {
                kind: NoticeKind::LimitedCoverage,
                headline: "vouch review: limited coverage, not a clean opinion.".into(),
                details,
                path: path.to_string(),
            })
        }
        _ => None,
    }
}
