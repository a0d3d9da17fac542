//! Rules about claims and their proof: reviewed head (4), merge (5), issue closure
//! (6).

use super::{Ctx, recorded};
use crate::classify;
use crate::model::{DiffReviewStatus, Disposition, LinkedIssue, MergeResult, ValidationStatus};
use crate::narrative::ClaimKind;
use crate::session::head_matches;
use crate::transcript::TranscriptEntry;
use crate::violation::{Violation, ViolationCode};

/// Rule 4. "A reviewed head SHA is rejected unless validation passed, diff review
/// passed, and the validation worktree HEAD exactly equals the candidate head."
///
/// The validation must also be the official run on the unmodified PR head, and the
/// reviewed head must itself be the candidate head.
pub(super) fn reviewed_head_proven(ctx: &Ctx) -> Vec<Violation> {
    let mut out = transcript_head(ctx);
    let Some(reviewed) = ctx.text("/reviewedHeadSha") else {
        return out;
    };
    let code = ViolationCode::ReviewedHeadUnproven;
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
    let already = out.iter().any(|v| v.pointer == "/validation/worktreeHead");
    if !already && (head.is_none() || head != candidate) {
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

/// Rule 4 with a transcript: the reviewed head is the HEAD of the directory the
/// official validation ran in, at the time it ran. A HEAD the transcript shows (checked
/// out, or read with `git rev-parse HEAD` and its recorded output) that differs from
/// `validation.worktreeHead` is a violation.
fn transcript_head(ctx: &Ctx) -> Vec<Violation> {
    let (Some(model), Some(claimed)) = (&ctx.model, ctx.text("/validation/worktreeHead")) else {
        return Vec::new();
    };
    let official = ctx.official_seqs();
    model
        .tests
        .iter()
        .filter(|r| official.contains(&r.seq))
        .find_map(|r| {
            let head = r.head.as_deref()?;
            let other = head_matches(head, claimed) == Some(false)
                || names_another_commit(head, ctx.text("/target/targetBranch/name"));
            other.then(|| {
                Violation::new(
                    ViolationCode::ReviewedHeadUnproven,
                    "/validation/worktreeHead",
                    format!(
                        "validation.worktreeHead is `{claimed}` but the transcript shows HEAD `{head}` in {} when official validation `{}` ran (seq {})",
                        r.dir.as_deref().unwrap_or("its directory"),
                        r.command,
                        r.seq
                    ),
                )
            })
        })
        .into_iter()
        .collect()
}

/// Whether a HEAD the model holds as a ref name is certainly not the candidate: the
/// target branch (`main`, `origin/main`, `refs/heads/main`, `refs/remotes/origin/main`)
/// or a ref relative to another commit (`HEAD~1`, `HEAD^`, `@{-1}`, `ORIG_HEAD`).
/// Other names (`FETCH_HEAD` after fetching the PR, `gh pr checkout 42`) stay unknown.
fn names_another_commit(head: &str, target_branch: Option<&str>) -> bool {
    let relative =
        head.contains('~') || head.contains('^') || head.contains("@{") || head == "ORIG_HEAD";
    let branch = target_branch.is_some_and(|name| {
        let short = head
            .trim_start_matches("refs/")
            .trim_start_matches("heads/")
            .trim_start_matches("remotes/");
        short == name || short.split_once('/').is_some_and(|(_, b)| b == name)
    });
    relative || branch
}

/// Rule 5. "\"Merged\" rejected without a merge result and target-ancestry proof."
///
/// A merge is claimed by `merge.result: merged`, `handoff.disposition: merged` or the
/// narrative; each needs `merge.result: merged`, `merge.mergeCommitSha` and
/// `merge.targetAncestryProof`.
pub(super) fn merge_proven(ctx: &Ctx) -> Vec<Violation> {
    let result: Option<MergeResult> = ctx.get("/merge/result");
    let narrative = ctx.narrative.claim(ClaimKind::Merged);
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
    match ctx.text("/merge/targetAncestryProof") {
        None => out.push(Violation::new(
            code,
            "/merge/targetAncestryProof",
            format!("{source} but there is no proof the merge commit is on the target branch"),
        )),
        Some(proof) => out.extend(recorded::cited_lines_support(
            ctx,
            "/merge/targetAncestryProof",
            "the target-ancestry proof",
            proof,
        )),
    }
    if result == Some(MergeResult::Merged) {
        out.extend(recorded::merge_call_succeeded(ctx));
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
        } else if let Some(problem) = closure_order(ctx, issue) {
            out.push(Violation::new(code, format!("/linkedIssues/{i}"), problem));
        }
    }
    if let Some(hit) = ctx.narrative.claim(ClaimKind::IssueClosed) {
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

/// The transcript seqs a text names (`seq 17`, `seq 15-16`, `seqs 3, 4`).
pub(super) fn cited_seqs(text: &str) -> Vec<u64> {
    let tokens: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.eq_ignore_ascii_case("seq") || t.eq_ignore_ascii_case("seqs") {
            out.extend(tokens.get(i + 1).and_then(|n| n.parse::<u64>().ok()));
        }
    }
    out
}

/// Whether a transcript entry reads an issue (a read tool or command naming issues).
fn reads_issue(entry: &TranscriptEntry) -> bool {
    match entry {
        TranscriptEntry::Tool {
            name, arguments, ..
        } => {
            name.to_lowercase().contains("issue")
                && classify::classify_tool(name, arguments).is_none()
        }
        TranscriptEntry::Command { command, .. } => {
            command.to_lowercase().contains("issue")
                && classify::classify_command(command)
                    .iter()
                    .all(|k| k.categories().is_empty())
        }
        _ => false,
    }
}

/// The first forge merge of the transcript (tool call or command).
fn merge_seq(ctx: &Ctx) -> Option<u64> {
    recorded::merge_calls(ctx).first().copied()
}

/// Rule 6 with a transcript: the live read of a closed issue is a transcript entry
/// (`verifiedAtSeq`, or a `seq N` in the evidence) that reads the issue, after the
/// merge in `seq` order.
fn closure_order(ctx: &Ctx, issue: &LinkedIssue) -> Option<String> {
    let transcript = ctx.transcript?;
    let cited: Vec<u64> = issue
        .verified_at_seq
        .into_iter()
        .chain(cited_seqs(issue.evidence.as_deref().unwrap_or_default()))
        .collect();
    let reference = &issue.reference;
    let Some(&seq) = cited.first() else {
        return Some(format!(
            "issue {reference} is marked closed but its evidence names no transcript seq of the live read (verifiedAtSeq)"
        ));
    };
    let Some(entry) = transcript.iter().find(|e| e.seq() == seq) else {
        return Some(format!(
            "issue {reference}: the live read is cited at seq {seq}, which is not in the transcript"
        ));
    };
    let call = ctx.cited(seq).map_or(entry, |c| c.call);
    if !reads_issue(call) {
        return Some(format!(
            "issue {reference}: transcript seq {seq} is not a read of the issue"
        ));
    }
    if let Some(problem) = recorded::issue_read_contradicts(ctx, reference, seq) {
        return Some(problem);
    }
    match merge_seq(ctx) {
        Some(merge) if seq < merge => Some(format!(
            "issue {reference}: the live read at seq {seq} comes before the merge at seq {merge}; the closure must be read after the merge"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::names_another_commit;

    #[test]
    fn heads_that_are_certainly_not_the_candidate() {
        let table = [
            ("origin/main", true),
            ("main", true),
            ("refs/remotes/upstream/main", true),
            ("HEAD~1", true),
            ("@{-1}", true),
            ("ORIG_HEAD", true),
            ("FETCH_HEAD", false),
            ("gh pr checkout 42", false),
            ("origin/pr/42", false),
        ];
        for (head, other) in table {
            assert_eq!(names_another_commit(head, Some("main")), other, "{head}");
        }
    }
}
