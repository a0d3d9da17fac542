//! Rules about claims and their proof: reviewed head (4), merge (5), issue closure
//! (6), full suite (7), inventory completeness (13), pre-existing failures (14).

use super::Ctx;
use crate::model::{
    DiffReviewStatus, Disposition, IgnoredTests, LinkedIssue, MergeResult, PaginationProof,
    TestCounts, ValidationStatus,
};
use crate::narrative::{Claim, words};
use crate::violation::{Violation, ViolationCode};

/// Rule 4. "A reviewed head SHA is rejected unless validation passed, diff review
/// passed, and the validation worktree HEAD exactly equals the candidate head."
///
/// The validation must also be the official run on the unmodified PR head, and the
/// reviewed head must itself be the candidate head.
pub(super) fn reviewed_head_proven(ctx: &Ctx) -> Vec<Violation> {
    let Some(reviewed) = ctx.text("/reviewedHeadSha") else {
        return Vec::new();
    };
    let code = ViolationCode::ReviewedHeadUnproven;
    let mut out = Vec::new();
    let candidate = ctx.text("/target/candidateHeadSha");
    if candidate != Some(reviewed) {
        out.push(Violation::new(
            code,
            "/reviewedHeadSha",
            format!(
                "reviewedHeadSha `{reviewed}` is not the candidate head `{}`",
                candidate.unwrap_or("(missing)")
            ),
        ));
    }
    if ctx.get::<ValidationStatus>("/validation/status") != Some(ValidationStatus::Passed) {
        out.push(Violation::new(
            code,
            "/validation/status",
            "a reviewed head is claimed but validation did not pass",
        ));
    }
    if !ctx.flag("/validation/official") || !ctx.flag("/validation/ranOnUnmodifiedPrHead") {
        out.push(Violation::new(
            code,
            "/validation/ranOnUnmodifiedPrHead",
            "a reviewed head is claimed but the passing validation is not the official run on the unmodified PR head",
        ));
    }
    if ctx.get::<DiffReviewStatus>("/diffReview/status") != Some(DiffReviewStatus::Passed) {
        out.push(Violation::new(
            code,
            "/diffReview/status",
            "a reviewed head is claimed but the diff review did not pass",
        ));
    }
    let head = ctx.text("/validation/worktreeHead");
    if head.is_none() || head != candidate {
        out.push(Violation::new(
            code,
            "/validation/worktreeHead",
            format!(
                "a reviewed head is claimed but the validation worktree HEAD `{}` is not exactly the candidate head `{}`",
                head.unwrap_or("(missing)"),
                candidate.unwrap_or("(missing)")
            ),
        ));
    }
    out
}

/// Rule 5. "\"Merged\" rejected without a merge result and target-ancestry proof."
///
/// A merge is claimed by `merge.result: merged`, `handoff.disposition: merged` or the
/// narrative; each needs `merge.result: merged`, `merge.mergeCommitSha` and
/// `merge.targetAncestryProof`.
pub(super) fn merge_proven(ctx: &Ctx) -> Vec<Violation> {
    let result: Option<MergeResult> = ctx.get("/merge/result");
    let narrative = ctx.narrative.claim(Claim::Merged);
    let claimed = result == Some(MergeResult::Merged)
        || ctx.disposition() == Some(Disposition::Merged)
        || narrative.is_some();
    if !claimed {
        return Vec::new();
    }
    let code = ViolationCode::MergeUnproven;
    let source = match narrative {
        Some(hit) if result != Some(MergeResult::Merged) => {
            format!("the narrative says \"{}\"", hit.sentence)
        }
        _ => "the report claims a merge".to_owned(),
    };
    if ctx.not_applicable("/merge") {
        return vec![Violation::new(
            code,
            "/merge",
            format!("{source} but the merge record is not applicable"),
        )];
    }
    let mut out = Vec::new();
    if result != Some(MergeResult::Merged) {
        out.push(Violation::new(
            code,
            "/merge/result",
            format!("{source} but merge.result is not `merged`"),
        ));
    }
    if ctx.text("/merge/mergeCommitSha").is_none() {
        out.push(Violation::new(
            code,
            "/merge/mergeCommitSha",
            format!("{source} but no merge commit SHA is recorded"),
        ));
    }
    if ctx.text("/merge/targetAncestryProof").is_none() {
        out.push(Violation::new(
            code,
            "/merge/targetAncestryProof",
            format!("{source} but there is no proof the merge commit is on the target branch"),
        ));
    }
    out
}

/// Rule 6. "\"Issue closed\" rejected without live linked-issue verification after the
/// merge."
pub(super) fn issue_closure_verified(ctx: &Ctx) -> Vec<Violation> {
    let code = ViolationCode::IssueClosureUnverified;
    let issues: Vec<(usize, LinkedIssue)> = ctx
        .report
        .pointer("/linkedIssues")
        .and_then(serde_json::Value::as_array)
        .map(|items| {
            items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| serde_json::from_value(v.clone()).ok().map(|x| (i, x)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, issue) in issues.iter().filter(|(_, x)| x.closed) {
        let unverified = !issue.live_verified_after_merge
            || issue
                .evidence
                .as_deref()
                .is_none_or(|e| e.trim().is_empty());
        if unverified {
            out.push(Violation::new(
                code,
                format!("/linkedIssues/{i}"),
                format!(
                    "issue {} is marked closed without a live read of its state after the merge (liveVerifiedAfterMerge and evidence)",
                    issue.reference
                ),
            ));
        }
    }
    if let Some(hit) = ctx.narrative.claim(Claim::IssueClosed) {
        let proven = issues
            .iter()
            .any(|(_, x)| x.closed && x.live_verified_after_merge && x.evidence.is_some());
        if !proven {
            out.push(Violation::new(
                code,
                "/linkedIssues",
                format!("the narrative says \"{}\" but no linked issue is recorded closed and live-verified after the merge", hit.sentence),
            ));
        }
    }
    out
}

/// Rule 7. "\"Full suite passed\" rejected when tests were ignored or skipped, unless
/// the report says exactly what was ignored."
///
/// The claim (`validation.fullSuitePassed` or the narrative) also needs a `passed`
/// status, counts, and zero failures; `validation.ignored` counts must add up to
/// `skipped + ignored`.
pub(super) fn full_suite_claim_proven(ctx: &Ctx) -> Vec<Violation> {
    let narrative = ctx.narrative.claim(Claim::FullSuitePassed);
    if !ctx.flag("/validation/fullSuitePassed") && narrative.is_none() {
        return Vec::new();
    }
    let code = ViolationCode::FullSuiteClaimUnproven;
    let source = narrative
        .map(|h| format!("the narrative says \"{}\"", h.sentence))
        .unwrap_or_else(|| "validation.fullSuitePassed is true".to_owned());
    let mut out = Vec::new();
    if ctx.get::<ValidationStatus>("/validation/status") != Some(ValidationStatus::Passed) {
        out.push(Violation::new(
            code,
            "/validation/status",
            format!("{source} but validation did not pass"),
        ));
    }
    let Some(counts) = ctx.get::<TestCounts>("/validation/counts") else {
        out.push(Violation::new(
            code,
            "/validation/counts",
            format!("{source} but no test counts are recorded"),
        ));
        return out;
    };
    if counts.failed > 0 {
        out.push(Violation::new(
            code,
            "/validation/counts/failed",
            format!("{source} but {} tests failed", counts.failed),
        ));
    }
    let not_run = counts.skipped + counts.ignored;
    if not_run > 0 {
        let listed: Vec<IgnoredTests> = ctx.get("/validation/ignored").unwrap_or_default();
        let listed_count: u64 = listed.iter().map(|x| x.count).sum();
        if listed_count != not_run {
            out.push(Violation::new(
                code,
                "/validation/ignored",
                format!(
                    "{source} but {} skipped and {} ignored tests are not all named: validation.ignored accounts for {listed_count} of {not_run}",
                    counts.skipped, counts.ignored
                ),
            ));
        }
    }
    out
}

/// Phrases that treat "fewer results than the page size" as the proof.
const COUNT_BELOW_PAGE: &[&[&str]] = &[
    &["less", "than", "page", "size"],
    &["fewer", "than", "page", "size"],
    &["below", "page", "size"],
    &["smaller", "than", "page", "size"],
    &["under", "page", "size"],
    &["less", "than", "the", "page", "size"],
    &["fewer", "than", "the", "page", "size"],
    &["below", "the", "page", "size"],
    &["smaller", "than", "the", "page", "size"],
    &["under", "the", "page", "size"],
    &["less", "than", "limit"],
    &["fewer", "than", "limit"],
];

/// Rule 13. "\"Inventory complete\" is rejected without explicit final-page /
/// no-next-page / metadata proof; result count below page size is not proof. A report
/// that records its inventory as unproven (`INVENTORY_PAGINATION_UNPROVEN`) instead of
/// claiming completeness is accepted (the claim is downgraded, not hidden)."
pub(super) fn inventory_completeness_proven(ctx: &Ctx) -> Vec<Violation> {
    let code = ViolationCode::InventoryCompletenessUnproven;
    let narrative = ctx.narrative.claim(Claim::InventoryComplete);
    let complete = ctx.flag("/inventory/complete");
    if !complete && narrative.is_none() {
        return Vec::new();
    }
    let source = if complete {
        "inventory.complete is true".to_owned()
    } else {
        format!(
            "the narrative says \"{}\"",
            narrative.map(|h| h.sentence.as_str()).unwrap_or_default()
        )
    };
    if ctx.not_applicable("/inventory") {
        return vec![Violation::new(
            code,
            "/inventory",
            format!("{source} but the inventory is not applicable"),
        )];
    }
    let mut out = Vec::new();
    if !complete {
        out.push(Violation::new(
            code,
            "/inventory/complete",
            format!("{source} but the inventory records completeness as unproven; drop the claim or prove it"),
        ));
        return out;
    }
    let proof: Option<PaginationProof> = ctx.get("/inventory/paginationProof");
    if matches!(proof, None | Some(PaginationProof::None)) {
        out.push(Violation::new(
            code,
            "/inventory/paginationProof",
            format!("{source} without final-page, no-next-page or tool-metadata proof; record status INVENTORY_PAGINATION_UNPROVEN instead"),
        ));
    }
    match ctx.text("/inventory/evidence") {
        None => out.push(Violation::new(
            code,
            "/inventory/evidence",
            format!("{source} but the pagination evidence is empty"),
        )),
        Some(evidence) => {
            let tokens = words(evidence);
            let count_only = COUNT_BELOW_PAGE
                .iter()
                .any(|phrase| tokens.windows(phrase.len()).any(|w| w == *phrase));
            if count_only {
                out.push(Violation::new(
                    code,
                    "/inventory/evidence",
                    "a result count below the page size is not pagination proof; cite the final page, the absent next-page link, or tool metadata",
                ));
            }
        }
    }
    if ctx.text("/inventory/status").is_some() {
        out.push(Violation::new(
            code,
            "/inventory/status",
            "the inventory is claimed complete and unproven at once",
        ));
    }
    out
}

/// Rule 14. "\"Failure is pre-existing / same as master\" is rejected when baseline and
/// PR test counts differ without an explanation."
///
/// The claim (`validation.failuresPreExisting` or the narrative) needs baseline counts;
/// counts that differ need `validation.baseline.explanation`.
pub(super) fn baseline_mismatch_explained(ctx: &Ctx) -> Vec<Violation> {
    let narrative = ctx.narrative.claim(Claim::FailurePreExisting);
    if !ctx.flag("/validation/failuresPreExisting") && narrative.is_none() {
        return Vec::new();
    }
    let code = ViolationCode::BaselineMismatchUnexplained;
    let source = narrative
        .map(|h| format!("the narrative says \"{}\"", h.sentence))
        .unwrap_or_else(|| "validation.failuresPreExisting is true".to_owned());
    let Some(baseline) = ctx.get::<TestCounts>("/validation/baseline/counts") else {
        return vec![Violation::new(
            code,
            "/validation/baseline",
            format!("{source} but no baseline counts are recorded"),
        )];
    };
    let Some(counts) = ctx.get::<TestCounts>("/validation/counts") else {
        return vec![Violation::new(
            code,
            "/validation/counts",
            format!("{source} but the PR run has no counts"),
        )];
    };
    if baseline != counts && ctx.text("/validation/baseline/explanation").is_none() {
        return vec![Violation::new(
            code,
            "/validation/baseline/explanation",
            format!(
                "{source} but baseline counts (passed {}, failed {}, skipped {}, ignored {}) differ from the PR run (passed {}, failed {}, skipped {}, ignored {}) and no explanation is given",
                baseline.passed,
                baseline.failed,
                baseline.skipped,
                baseline.ignored,
                counts.passed,
                counts.failed,
                counts.skipped,
                counts.ignored
            ),
        )];
    }
    Vec::new()
}
