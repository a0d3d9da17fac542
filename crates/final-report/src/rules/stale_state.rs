//! Rule 15, the truth of the stale-state fields: the selected pull request's staleness,
//! the target branch's staleness and the ready state must agree with what the
//! session's recorded reads returned, not only be present and well typed.
//!
//! Only reads before the session's own first forge merge count: after it, the pull
//! request is merged and the target branch moved by this session, not by anyone else.

use super::Ctx;
use super::recorded::merge_calls;
use crate::observed::{
    BranchObservation, PrObservation, PrState, branch_reads, pull_request_reads,
};
use crate::session::head_matches;
use crate::transcript::EventName;
use crate::violation::{Violation, ViolationCode};

/// The reads of the selected PR and of the target branch before the session's merge.
struct Observed {
    number: Option<u64>,
    pr: Vec<PrObservation>,
    branch: Vec<BranchObservation>,
}

fn observed(ctx: &Ctx) -> Option<Observed> {
    let (transcript, model) = (ctx.transcript?, ctx.model.as_ref()?);
    let until = merge_calls(ctx).first().copied().unwrap_or(u64::MAX);
    let result_of = |seq: u64| model.result(seq).cloned();
    let number: Option<u64> = ctx.get("/target/pullRequest/number");
    let mut pr = number
        .map(|n| pull_request_reads(transcript, result_of, n))
        .unwrap_or_default();
    pr.retain(|r| r.seq < until);
    let mut branch = ctx
        .text("/target/targetBranch/name")
        .map(|name| branch_reads(transcript, result_of, name))
        .unwrap_or_default();
    branch.retain(|r| r.seq < until);
    Some(Observed { number, pr, branch })
}

/// Rule 15. "The stale-state fields (selected PR, target branch, ready state) must
/// agree with what the transcript's events and recorded results imply."
///
/// Recorded reads of the selected PR that returned different states or heads, or a
/// head other than the candidate, need `selectedPrStale.stale`; its `oldState` and
/// `newState`, when they are state words, must be what the first and last reads
/// returned. A recorded tip of the target branch other than `shaAtSelection` needs
/// `targetBranchStale.stale`, and `newSha` must be that tip. A ready state is not
/// carried past a read that returned the PR merged or closed.
pub(super) fn stale_state_agrees(ctx: &Ctx) -> Vec<Violation> {
    let Some(seen) = observed(ctx) else {
        return Vec::new();
    };
    let mut out = selected_pr(ctx, &seen);
    out.extend(target_branch(ctx, &seen.branch));
    out.extend(ready_after_close(ctx, &seen));
    out
}

/// How the reads of the selected PR show it changed, if they do.
fn pr_change(ctx: &Ctx, reads: &[PrObservation]) -> Option<String> {
    let first = reads.first()?;
    let moved_state = reads
        .iter()
        .find(|r| r.state.is_some() && first.state.is_some() && r.state != first.state);
    if let Some(r) = moved_state {
        let (a, b) = (
            first.state.map(PrState::as_str),
            r.state.map(PrState::as_str),
        );
        return Some(format!(
            "seq {} returned it {}, seq {} {}",
            first.seq,
            a.unwrap_or_default(),
            r.seq,
            b.unwrap_or_default()
        ));
    }
    let candidate = ctx.text("/target/candidateHeadSha").unwrap_or_default();
    reads.iter().find_map(|r| {
        let head = r.head.as_deref()?;
        (head_matches(head, candidate) == Some(false)).then(|| {
            format!(
                "seq {} returned head {head}, not the candidate head {candidate}",
                r.seq
            )
        })
    })
}

/// Whether an `external-mutation` event of one of `scopes` (or of none) is in the
/// transcript: rule 15's event check then already reports the missing flag, once.
fn event_reports(ctx: &Ctx, scopes: &[Option<&str>]) -> bool {
    ctx.events(&EventName::ExternalMutation)
        .iter()
        .any(|(_, d)| scopes.contains(&d.get("scope").and_then(serde_json::Value::as_str)))
}

fn selected_pr(ctx: &Ctx, seen: &Observed) -> Vec<Violation> {
    let number = seen.number.map(|n| format!(" #{n}")).unwrap_or_default();
    if !ctx.flag("/concurrency/selectedPrStale/stale") {
        if event_reports(ctx, &[None, Some("pull-request")]) {
            return Vec::new();
        }
        return pr_change(ctx, &seen.pr)
            .map(|how| {
                Violation::new(
                    ViolationCode::StalenessNotRecorded,
                    "/concurrency/selectedPrStale/stale",
                    format!("the recorded reads of PR{number} show it changed ({how}) but `selectedPrStale.stale` is false"),
                )
            })
            .into_iter()
            .collect();
    }
    let ends = [
        ("oldState", seen.pr.iter().find(|r| r.state.is_some())),
        ("newState", seen.pr.iter().rev().find(|r| r.state.is_some())),
    ];
    ends.into_iter()
        .filter_map(|(field, read)| {
            let read = read?;
            let pointer = format!("/concurrency/selectedPrStale/{field}");
            let said = PrState::parse(ctx.text(&pointer)?)?;
            let seen_state = read.state?;
            (said != seen_state).then(|| {
                Violation::new(
                    ViolationCode::StaleStateContradicted,
                    pointer,
                    format!("`{field}` says `{}` but the read of PR{number} at transcript seq {} returned `{}`", said.as_str(), read.seq, seen_state.as_str()),
                )
            })
        })
        .collect()
}

fn target_branch(ctx: &Ctx, reads: &[BranchObservation]) -> Vec<Violation> {
    let (Some(at_selection), Some(last)) = (
        ctx.text("/target/targetBranch/shaAtSelection"),
        reads.last(),
    ) else {
        return Vec::new();
    };
    if head_matches(&last.sha, at_selection) != Some(false) {
        return Vec::new();
    }
    let name = ctx.text("/target/targetBranch/name").unwrap_or_default();
    if !ctx.flag("/concurrency/targetBranchStale/stale") {
        if event_reports(ctx, &[Some("target-branch")]) {
            return Vec::new();
        }
        return vec![Violation::new(
            ViolationCode::StalenessNotRecorded,
            "/concurrency/targetBranchStale/stale",
            format!(
                "transcript seq {} read `{name}` at {}, not `shaAtSelection` {at_selection}, but `targetBranchStale.stale` is false",
                last.seq, last.sha
            ),
        )];
    }
    match ctx.text("/concurrency/targetBranchStale/newSha") {
        Some(new) if head_matches(new, &last.sha) == Some(false) => vec![Violation::new(
            ViolationCode::StaleStateContradicted,
            "/concurrency/targetBranchStale/newSha",
            format!(
                "`newSha` is {new} but the last read of `{name}` (transcript seq {}) returned {}",
                last.seq, last.sha
            ),
        )],
        _ => Vec::new(),
    }
}

fn ready_after_close(ctx: &Ctx, seen: &Observed) -> Option<Violation> {
    let ready = ctx.disposition().filter(|d| d.is_ready_state())?;
    let last = seen.pr.iter().rev().find(|r| r.state.is_some())?;
    let state = last.state.filter(|s| *s != PrState::Open)?;
    Some(Violation::new(
        ViolationCode::ReusableStateAfterExternalMutation,
        "/handoff/disposition",
        format!(
            "disposition `{}` keeps a ready state but the last read of the pull request (transcript seq {}) returned it {}; fail closed instead",
            ready.as_str(),
            last.seq,
            state.as_str()
        ),
    ))
}
