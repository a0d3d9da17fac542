//! The final report vouch embeds in its own review of a local `base..head` range.
//!
//! A local range review is read-only: no mutations except read-only diagnostics, no
//! reviewed-head claim (vouch runs no tests), and explicit not-applicable values for
//! the pull request, target branch, merge, linked issues and inventory.

use std::str::FromStr;

use crate::model::{
    CommandEntry, CommandLocation, CommandPhase, Concurrency, ConcurrentReviewer, Coverage,
    DiffReview, DiffReviewStatus, Disposition, FinalReport, Handoff, MutationEntry, MutationLedger,
    NotApplicable, NotApplicableOr, ReviewRecord, ReviewState, ReviewSubmission, SchemaVersion,
    SelectedPrStale, Target, TargetBranchStale, TerminalDisposition, ValidationRecord,
    ValidationStatus,
};
use crate::violation::Violation;

/// The outcome of a vouch review (DESIGN: opinion and report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewOutcome {
    /// `nothing-to-review`: the range is empty; no model was called.
    NothingToReview,
    /// `aborted`: the review was cancelled.
    Aborted,
    /// `incomplete`: the review could not complete; nothing was published.
    Incomplete,
    /// `findings`: verified findings were published, with this coverage.
    Findings(Coverage),
    /// `no-findings`: no verified findings, with this coverage.
    NoFindings(Coverage),
}

/// An outcome string that is not `nothing-to-review`, `aborted`, `incomplete`,
/// `findings` or `no-findings`, or a coverage other than `full` / `limited`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown review outcome `{0}` (expected nothing-to-review, aborted, incomplete, findings or no-findings; coverage full or limited)"
)]
pub struct UnknownOutcome(pub String);

impl ReviewOutcome {
    /// Read an outcome and coverage as vouch's report spells them (`"findings"`,
    /// `Some("limited")`). `findings` and `no-findings` require a coverage of `full` or
    /// `limited`; the other outcomes ignore it.
    pub fn parse(outcome: &str, coverage: Option<&str>) -> Result<Self, UnknownOutcome> {
        let cov = |c: Option<&str>| match c {
            Some("full") => Ok(Coverage::Full),
            Some("limited") => Ok(Coverage::Limited),
            other => Err(UnknownOutcome(format!("{outcome} (coverage {other:?})"))),
        };
        match outcome {
            "nothing-to-review" => Ok(Self::NothingToReview),
            "aborted" => Ok(Self::Aborted),
            "incomplete" => Ok(Self::Incomplete),
            "findings" => Ok(Self::Findings(cov(coverage)?)),
            "no-findings" => Ok(Self::NoFindings(cov(coverage)?)),
            other => Err(UnknownOutcome(other.to_owned())),
        }
    }
}

impl FromStr for ReviewOutcome {
    type Err = UnknownOutcome;

    /// `nothing-to-review`, `aborted`, `incomplete`, or `findings`/`no-findings`
    /// optionally followed by `:full` or `:limited` (default `full`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (outcome, coverage) = s.split_once(':').map_or((s, None), |(o, c)| (o, Some(c)));
        let coverage = coverage.or(match outcome {
            "findings" | "no-findings" => Some("full"),
            _ => None,
        });
        Self::parse(outcome, coverage)
    }
}

/// What vouch knows about one local range review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalRangeReview {
    /// The repository: a path or a name.
    pub repository: String,
    /// The base commit (full SHA).
    pub base_sha: String,
    /// The head commit (full SHA); the candidate head of the report.
    pub head_sha: String,
    /// Repository-relative paths reviewed: in an accepted coverage receipt and seen in
    /// full (never merely changed or expected).
    pub files_reviewed: Vec<String>,
    /// The review outcome and coverage.
    pub outcome: ReviewOutcome,
    /// A short narrative of the review. It is validated with the report, so it must not
    /// claim merges, approvals, test runs or completeness the report does not prove.
    pub narrative: String,
    /// The command line vouch ran, recorded as a read-only review command.
    pub command_line: String,
}

/// Build the final report of a local range review.
///
/// Disposition: `review-reported` for nothing-to-review, findings and no-findings;
/// `stopped` for aborted; `blocked` for incomplete. The command line is the only
/// command (phase `review`, main checkout) and the only replay command, and is listed
/// under read-only diagnostics; every other mutation category is empty. Validation is
/// `not-run`; the review is `dry-run-only` with state NONE.
pub fn local_range_review_report(input: &LocalRangeReview) -> FinalReport {
    let (disposition, diff_status, coverage, next_action) = outcome_shape(input);
    let local = "local range review";
    FinalReport {
        schema_version: SchemaVersion::V1,
        narrative: input.narrative.clone(),
        handoff: Handoff {
            disposition,
            next_action: next_action.to_owned(),
            replay_commands: vec![input.command_line.clone()],
        },
        target: local_target(input, local),
        review: ReviewRecord {
            submission: ReviewSubmission::DryRunOnly,
            state: ReviewState::None,
            review_id: None,
            blocked_reason: None,
        },
        validation: not_run_validation(),
        diff_review: DiffReview {
            status: diff_status,
            files_reviewed: input.files_reviewed.clone(),
            coverage,
        },
        reviewed_head_sha: None,
        merge: NotApplicableOr::NotApplicable(NotApplicable::because(format!(
            "{local}: vouch does not merge"
        ))),
        linked_issues: NotApplicableOr::NotApplicable(NotApplicable::because(format!(
            "{local}: no linked issues"
        ))),
        inventory: NotApplicableOr::NotApplicable(NotApplicable::because(format!(
            "{local}: no pull-request queue"
        ))),
        mutations: MutationLedger {
            read_only_diagnostics: vec![MutationEntry::command(
                format!(
                    "read-only review of {}..{} from git objects",
                    input.base_sha, input.head_sha
                ),
                input.command_line.clone(),
            )],
            ..MutationLedger::default()
        },
        commands: vec![CommandEntry {
            command: input.command_line.clone(),
            location: CommandLocation::MainCheckout,
            phase: CommandPhase::Review,
            justification: None,
            capability_proof: None,
            seq: None,
        }],
        concurrency: quiet_concurrency(),
        strict_compliance: false,
    }
}

/// The disposition, diff-review status, coverage and next action an outcome reports.
fn outcome_shape(
    input: &LocalRangeReview,
) -> (
    Disposition,
    DiffReviewStatus,
    Option<Coverage>,
    &'static str,
) {
    match input.outcome {
        ReviewOutcome::NothingToReview => (
            Disposition::ReviewReported,
            DiffReviewStatus::NotRun,
            None,
            "Nothing to review: the range has no changed files.",
        ),
        ReviewOutcome::Aborted => (
            Disposition::Stopped,
            DiffReviewStatus::Aborted,
            None,
            "The review was cancelled; re-run the command to review the range.",
        ),
        ReviewOutcome::Incomplete => (
            Disposition::Blocked,
            DiffReviewStatus::Incomplete,
            None,
            "The review is incomplete and nothing was published; fix the reported cause and re-run the command.",
        ),
        // Verified findings, but no changed file was both in an accepted receipt and seen
        // in full: the findings stand, the diff review itself did not cover any file.
        ReviewOutcome::Findings(c) if input.files_reviewed.is_empty() => (
            Disposition::ReviewReported,
            DiffReviewStatus::Incomplete,
            Some(c),
            "Address the verified findings in the vouch report; no changed file was reviewed in full, so read the coverage statement.",
        ),
        ReviewOutcome::Findings(c) => (
            Disposition::ReviewReported,
            DiffReviewStatus::Findings,
            Some(c),
            "Address the verified findings in the vouch report.",
        ),
        // No file reviewed (every changed file excluded or unseen): the diff review did not run.
        ReviewOutcome::NoFindings(c) if input.files_reviewed.is_empty() => (
            Disposition::ReviewReported,
            DiffReviewStatus::NotRun,
            Some(c),
            "No changed file was reviewed in full (excluded, or not seen by any stage); read the coverage statement.",
        ),
        ReviewOutcome::NoFindings(c) => (
            Disposition::ReviewReported,
            DiffReviewStatus::Passed,
            Some(c),
            "No verified findings; read the coverage statement before relying on the result.",
        ),
    }
}

/// The target of a local range: the repository and both SHAs, no pull request and no
/// target branch.
fn local_target(input: &LocalRangeReview, local: &str) -> Target {
    Target {
        repository: input.repository.clone(),
        pull_request: NotApplicableOr::NotApplicable(NotApplicable::because(format!(
            "{local}: no pull request"
        ))),
        candidate_head_sha: input.head_sha.clone(),
        base_sha: Some(input.base_sha.clone()),
        target_branch: NotApplicableOr::NotApplicable(NotApplicable::because(format!(
            "{local}: the base is commit {}",
            input.base_sha
        ))),
    }
}

/// Validation was not run: vouch runs no tests.
fn not_run_validation() -> ValidationRecord {
    ValidationRecord {
        status: ValidationStatus::NotRun,
        official: false,
        ran_on_unmodified_pr_head: false,
        worktree_head: None,
        commands: Vec::new(),
        counts: None,
        ignored: Vec::new(),
        baseline: None,
        full_suite_passed: false,
        failures_pre_existing: false,
        isolated_worktree_only: false,
    }
}

/// No concurrent reviewer and nothing stale: a local range review is terminal on its own.
fn quiet_concurrency() -> Concurrency {
    Concurrency {
        concurrent_reviewer: ConcurrentReviewer {
            detected: false,
            evidence_source: None,
            actor: None,
        },
        selected_pr_stale: SelectedPrStale {
            stale: false,
            old_state: None,
            new_state: None,
            observed_at: None,
        },
        target_branch_stale: TargetBranchStale {
            stale: false,
            old_sha: None,
            new_sha: None,
        },
        ready_state_reusable: false,
        terminal_disposition: TerminalDisposition::Flag(true),
        mcp_interruptions: Vec::new(),
    }
}

/// vouch's own report failed its self-check: a bug in vouch, never a user error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("vouch's own final report failed validation ({} violations): {}", .violations.len(), summary(.violations))]
pub struct SelfCheckError {
    /// Every violation found.
    pub violations: Vec<Violation>,
}

fn summary(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("{} at {}: {}", v.code, v.pointer, v.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// [`local_range_review_report`], validated before it is returned.
///
/// Errors: [`SelfCheckError`] with every violation when the built report is invalid
/// (for example a narrative that claims a merge).
pub fn checked_local_range_review_report(
    input: &LocalRangeReview,
) -> Result<FinalReport, SelfCheckError> {
    let report = local_range_review_report(input);
    let value = serde_json::to_value(&report).expect("a FinalReport always serializes");
    let violations = crate::validate(&value, None);
    if violations.is_empty() {
        Ok(report)
    } else {
        Err(SelfCheckError { violations })
    }
}
