//! Rules about concurrency and stale state: collisions (15), ready state across MCP
//! interruptions (17).

use super::Ctx;
use crate::classify;
use crate::evidence::{Outcome, outcome};
use crate::model::McpInterruption;
use crate::narrative::ClaimKind;
use crate::transcript::{EventName, TranscriptEntry};
use crate::violation::{Violation, ViolationCode};

/// Rule 15. "Collision: accept a blocked/stopped handoff that failed closed after an
/// external approve/merge; reject a report that keeps a reusable ready-to-approve/merge
/// state after any external mutation; when the transcript shows an external queue
/// mutation, reject a report missing the stale selected-PR or stale target-branch
/// fields."
///
/// External mutation evidence: a transcript `external-mutation` event, a detected
/// concurrent reviewer, or a stale selected PR or target branch. A detected reviewer
/// needs `evidenceSource` and `actor`; a stale PR needs old/new state and the time;
/// a stale branch needs old/new SHA. An event with `"scope": "pull-request"` or
/// `"target-branch"` needs that staleness recorded; without a scope, either.
pub(super) fn collision_fails_closed(ctx: &Ctx) -> Vec<Violation> {
    let events = ctx.events(&EventName::ExternalMutation);
    let detected = ctx.flag("/concurrency/concurrentReviewer/detected");
    let pr_stale = ctx.flag("/concurrency/selectedPrStale/stale");
    let branch_stale = ctx.flag("/concurrency/targetBranchStale/stale");
    let mut out = Vec::new();
    for (flag, fields, why) in STALE_DETAILS {
        if ctx.flag(flag) {
            out.extend(unrecorded_details(ctx, fields, why));
        }
    }
    out.extend(
        events
            .iter()
            .filter_map(|(seq, details)| unmarked_event(*seq, details, pr_stale, branch_stale)),
    );
    if events.is_empty() && !detected && !pr_stale && !branch_stale {
        return out;
    }
    out.extend(reusable_after_mutation(ctx));
    out
}

/// Each observation flag, the fields it needs, and why, for messages.
const STALE_DETAILS: &[(&str, &[&str], &str)] = &[
    (
        "/concurrency/concurrentReviewer/detected",
        &[
            "/concurrency/concurrentReviewer/evidenceSource",
            "/concurrency/concurrentReviewer/actor",
        ],
        "a concurrent reviewer was detected",
    ),
    (
        "/concurrency/selectedPrStale/stale",
        &[
            "/concurrency/selectedPrStale/oldState",
            "/concurrency/selectedPrStale/newState",
            "/concurrency/selectedPrStale/observedAt",
        ],
        "the selected PR is stale",
    ),
    (
        "/concurrency/targetBranchStale/stale",
        &[
            "/concurrency/targetBranchStale/oldSha",
            "/concurrency/targetBranchStale/newSha",
        ],
        "the target branch is stale",
    ),
];

/// The detail fields of a raised observation flag that are not recorded.
fn unrecorded_details(ctx: &Ctx, fields: &[&str], why: &str) -> Vec<Violation> {
    fields
        .iter()
        .filter(|field| ctx.text(field).is_none())
        .map(|field| {
            Violation::new(
                ViolationCode::StalenessNotRecorded,
                *field,
                format!("{why} but `{field}` is not recorded"),
            )
        })
        .collect()
}

/// An `external-mutation` event needs the stale flag of its scope (either without).
fn unmarked_event(
    seq: u64,
    details: &serde_json::Map<String, serde_json::Value>,
    pr_stale: bool,
    branch_stale: bool,
) -> Option<Violation> {
    let scope = details.get("scope").and_then(serde_json::Value::as_str);
    let (ok, pointer, what) = match scope {
        Some("pull-request") => (pr_stale, "/concurrency/selectedPrStale", "the selected PR"),
        Some("target-branch") => (
            branch_stale,
            "/concurrency/targetBranchStale",
            "the target branch",
        ),
        _ => (
            pr_stale || branch_stale,
            "/concurrency/selectedPrStale",
            "the selected PR or the target branch",
        ),
    };
    (!ok).then(|| {
        Violation::new(
            ViolationCode::StalenessNotRecorded,
            pointer,
            format!("transcript seq {seq} records an external mutation but the report does not mark {what} stale"),
        )
    })
}

/// After external evidence, the ready state is neither reusable nor the disposition.
fn reusable_after_mutation(ctx: &Ctx) -> Vec<Violation> {
    let reusable = ViolationCode::ReusableStateAfterExternalMutation;
    let mut out = Vec::new();
    if ctx.flag("/concurrency/readyStateReusable") {
        out.push(Violation::new(
            reusable,
            "/concurrency/readyStateReusable",
            "the ready state is marked reusable after an external mutation; fail closed (blocked/stopped, not reusable)",
        ));
    }
    if let Some(d) = ctx.disposition().filter(|d| d.is_ready_state()) {
        out.push(Violation::new(
            reusable,
            "/handoff/disposition",
            format!("disposition `{}` keeps a ready state after an external mutation; fail closed instead", d.as_str()),
        ));
    }
    out
}

/// Whether a transcript entry re-verifies live state: a read-only forge tool call
/// (`get_…`, `list_…`, `…_read`), or a read-only forge query (`gh pr view`, `tea pr`,
/// `glab mr view`, an HTTP GET) or `git fetch`/`ls-remote`/`rev-parse`. A mutation, an
/// `echo`, a `sleep` or an unknown command does not verify anything.
pub(super) fn verifies(entry: &TranscriptEntry) -> bool {
    match entry {
        TranscriptEntry::Tool {
            name, arguments, ..
        } => classify::classify_tool(name, arguments).is_none() && classify::is_read_tool(name),
        TranscriptEntry::Command { command, .. } => {
            classify::split_shell(command).iter().any(|simple| {
                let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
                let effects = classify::classify_simple(simple);
                let program = words
                    .first()
                    .map(|w| w.rsplit('/').next().unwrap_or(w))
                    .unwrap_or("");
                let read_only = effects.iter().all(|e| e.categories().is_empty());
                match program {
                    "gh" | "tea" | "glab" | "curl" | "wget" | "http" | "xh" => {
                        read_only && words.len() > 1
                    }
                    "git" => matches!(
                        classify::git_subcommand(&words[1..]).0,
                        "fetch" | "ls-remote" | "rev-parse" | "log" | "show"
                    ),
                    _ => false,
                }
            })
        }
        _ => false,
    }
}

/// Rule 17. "Stale state: \"ready to merge\" carried across a recorded MCP failure or
/// restart is rejected unless re-verified after it."
///
/// A ready state (ready disposition, `readyStateReusable`, or the narrative) needs, for
/// every MCP failure/restart in the transcript or in `concurrency.mcpInterruptions`, a
/// recorded `reverifiedAtSeq` later than the interruption; with a transcript, that seq
/// must be a tool call or command of the transcript.
pub(super) fn ready_state_reverified(ctx: &Ctx) -> Vec<Violation> {
    let ready = ctx.disposition().is_some_and(|d| d.is_ready_state())
        || ctx.flag("/concurrency/readyStateReusable")
        || ctx.narrative.claim(ClaimKind::ReadyState).is_some();
    if !ready {
        return Vec::new();
    }
    let code = ViolationCode::StaleReadyState;
    let recorded: Vec<McpInterruption> =
        ctx.get("/concurrency/mcpInterruptions").unwrap_or_default();
    // A read whose recorded result failed verified nothing.
    let failed = |seq: u64| {
        ctx.cited(seq)
            .and_then(|c| c.result)
            .is_some_and(|r| matches!(outcome(r), Outcome::Failed(_)))
    };
    let action_at = |seq: u64| {
        ctx.transcript
            .is_none_or(|t| t.iter().any(|e| e.seq() == seq && verifies(e)))
            && !failed(seq)
    };
    let reverified = |x: &McpInterruption| {
        x.reverified_at_seq
            .is_some_and(|r| x.seq.is_none_or(|s| r > s) && action_at(r))
    };
    let mut out = Vec::new();
    for (i, x) in recorded.iter().enumerate() {
        if !reverified(x) {
            out.push(Violation::new(
                code,
                format!("/concurrency/mcpInterruptions/{i}"),
                "a ready state is carried across this MCP interruption without a live re-verification after it (reverifiedAtSeq)",
            ));
        }
    }
    let mut events = ctx.events(&EventName::McpFailure);
    events.extend(ctx.events(&EventName::McpRestart));
    events.sort_by_key(|(seq, _)| *seq);
    for (seq, _) in events {
        if !recorded.iter().any(|x| x.seq == Some(seq)) {
            out.push(Violation::new(
                code,
                "/concurrency/mcpInterruptions",
                format!("a ready state is carried across the MCP failure/restart at transcript seq {seq}, which the report neither records nor re-verifies"),
            ));
        }
    }
    out
}
