//! Rule 19: a handoff that treats the change as reviewed stands on a complete diff
//! review with full coverage.

use super::Ctx;
use crate::model::{Coverage, DiffReviewStatus, Disposition, ReviewState};
use crate::violation::{Violation, ViolationCode};

/// What a report claims of the reviewed change that needs a complete diff review.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ReviewedClaim {
    /// A disposition that acts on the change as reviewed.
    Disposition(Disposition),
    /// An approving review state.
    Approved,
    /// A reviewed head SHA.
    ReviewedHead,
    /// An approve or merge command the handoff gives the controller (its pointer and
    /// the command).
    HandoffCommand(String, String),
}

impl ReviewedClaim {
    fn pointer(&self) -> &str {
        match self {
            ReviewedClaim::Disposition(_) => "/handoff/disposition",
            ReviewedClaim::Approved => "/review/state",
            ReviewedClaim::ReviewedHead => "/reviewedHeadSha",
            ReviewedClaim::HandoffCommand(pointer, _) => pointer,
        }
    }

    fn describe(&self) -> String {
        match self {
            ReviewedClaim::Disposition(d) => format!("the handoff disposition `{}`", d.as_str()),
            ReviewedClaim::Approved => "the review state `APPROVED`".into(),
            ReviewedClaim::ReviewedHead => "a reviewed head SHA".into(),
            ReviewedClaim::HandoffCommand(_, command) => {
                format!("the handoff's approve or merge command `{command}`")
            }
        }
    }
}

/// Rule (19, pure): the problem with `claim` given the diff review's `status` and
/// `coverage`, if any. A claim needs a completed review (`passed`, or `findings` for a
/// disposition or approval, which may weigh findings) with `coverage: full`; a
/// reviewed head needs `passed` with full coverage.
fn problem(
    claim: &ReviewedClaim,
    status: Option<DiffReviewStatus>,
    coverage: Option<Coverage>,
) -> Option<String> {
    let completed = match claim {
        ReviewedClaim::Disposition(_)
        | ReviewedClaim::Approved
        | ReviewedClaim::HandoffCommand(..) => matches!(
            status,
            Some(DiffReviewStatus::Passed | DiffReviewStatus::Findings)
        ),
        ReviewedClaim::ReviewedHead => status == Some(DiffReviewStatus::Passed),
    };
    let status_name = wire_name(status);
    if !completed {
        return Some(format!(
            "{} needs a completed diff review, but its status is `{status_name}`",
            claim.describe()
        ));
    }
    (coverage != Some(Coverage::Full)).then(|| {
        format!(
            "{} needs a diff review with full coverage, but its coverage is `{}`",
            claim.describe(),
            wire_name(coverage)
        )
    })
}

/// A value as the report spells it (its serde name), or `(missing)`.
fn wire_name(value: Option<impl serde::Serialize>) -> String {
    value
        .and_then(|v| serde_json::to_value(v).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "(missing)".into())
}

/// The claims `ctx` makes that need a complete diff review.
fn claims(ctx: &Ctx) -> Vec<ReviewedClaim> {
    let mut out = Vec::new();
    if let Some(
        d @ (Disposition::Merged
        | Disposition::ReadyToMerge
        | Disposition::ReadyToApprove
        | Disposition::Approved),
    ) = ctx.disposition()
    {
        out.push(ReviewedClaim::Disposition(d));
    }
    if ctx.get::<ReviewState>("/review/state") == Some(ReviewState::Approved) {
        out.push(ReviewedClaim::Approved);
    }
    if ctx.text("/reviewedHeadSha").is_some() {
        out.push(ReviewedClaim::ReviewedHead);
    }
    out.extend(
        super::handoff::approve_or_merge_commands(ctx)
            .into_iter()
            .map(|(pointer, command)| ReviewedClaim::HandoffCommand(pointer, command)),
    );
    out
}

/// Rule 19. "A handoff that treats the change as reviewed needs a complete diff review
/// with full coverage."
///
/// A ready, approved or merged disposition, an `APPROVED` review state, an approve or
/// merge command in the handoff (what rule 8 finds there) and a reviewed head each need a completed diff review (`passed`; `findings` too for a disposition
/// or approval) whose coverage is `full`: a review that was incomplete, aborted, not
/// run or limited proves nothing about the files it missed. A `passed` review with
/// limited coverage is itself an honest record (vouch's own reports say so); acting on
/// it as reviewed is what this rule rejects.
pub(super) fn handoff_on_full_review(ctx: &Ctx) -> Vec<Violation> {
    let status = ctx.get::<DiffReviewStatus>("/diffReview/status");
    let coverage = ctx.get::<Coverage>("/diffReview/coverage");
    claims(ctx)
        .into_iter()
        .filter_map(|claim| {
            let message = problem(&claim, status, coverage)?;
            Some(Violation::new(
                ViolationCode::ReviewedWithoutFullReview,
                claim.pointer(),
                message,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Coverage::{Full, Limited};
    use DiffReviewStatus::*;

    #[test]
    fn a_reviewed_claim_needs_a_completed_review_with_full_coverage() {
        let ready = || ReviewedClaim::Disposition(Disposition::ReadyToMerge);
        let merge =
            || ReviewedClaim::HandoffCommand("/handoff/nextAction".into(), "gh pr merge 4".into());
        let cases = [
            (ready(), Some(Passed), Some(Full), true),
            (ready(), Some(Findings), Some(Full), true),
            (ready(), Some(Passed), Some(Limited), false),
            (ready(), Some(Passed), None, false),
            (ready(), Some(Incomplete), Some(Full), false),
            (ready(), Some(Aborted), None, false),
            (ready(), Some(NotRun), None, false),
            (ready(), None, None, false),
            (ReviewedClaim::Approved, Some(Findings), Some(Full), true),
            (ReviewedClaim::Approved, Some(Incomplete), None, false),
            (merge(), Some(Findings), Some(Full), true),
            (merge(), Some(Passed), Some(Limited), false),
            (merge(), Some(Incomplete), None, false),
            (ReviewedClaim::ReviewedHead, Some(Passed), Some(Full), true),
            (
                ReviewedClaim::ReviewedHead,
                Some(Findings),
                Some(Full),
                false,
            ),
            (
                ReviewedClaim::ReviewedHead,
                Some(Passed),
                Some(Limited),
                false,
            ),
        ];
        for (claim, status, coverage, holds) in cases {
            assert_eq!(
                problem(&claim, status, coverage).is_none(),
                holds,
                "{claim:?} {status:?} {coverage:?}"
            );
        }
    }
}
