//! Rules about the handoff: blocked replays (8), narrative agreement (9), distinct
//! review states (10).

use std::collections::BTreeSet;

use super::Ctx;
use crate::classify::is_direct_approve_or_merge;
use crate::model::{Disposition, MutationCategory, ReviewState, ReviewSubmission};
use crate::narrative::{ClaimKind, FilesClaim, words};
use crate::violation::{Violation, ViolationCode};

/// Rule 8. "A blocked handoff that includes direct approve or merge replay commands is
/// rejected."
///
/// Applies to `blocked` and `stopped` dispositions; a command approves or merges when
/// it is a forge merge/approve (CLI, HTTP or tool-call notation) or a local `git merge`.
pub(super) fn blocked_handoff_without_replays(ctx: &Ctx) -> Vec<Violation> {
    if !ctx
        .disposition()
        .is_some_and(Disposition::is_blocked_or_stopped)
    {
        return Vec::new();
    }
    approve_or_merge_commands(ctx)
        .into_iter()
        .map(|(pointer, command)| {
            Violation::new(
                ViolationCode::BlockedHandoffReplaysMutation,
                pointer,
                format!(
                    "a blocked/stopped handoff must not carry a direct approve or merge command anywhere: `{command}`"
                ),
            )
        })
        .collect()
}

/// Each approve or merge command the handoff carries (a replay command, or a command
/// fragment of any other handoff text), with its JSON pointer.
pub(super) fn approve_or_merge_commands(ctx: &Ctx) -> Vec<(String, String)> {
    let Some(handoff) = ctx.report.get("handoff") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    super::counts::walk_strings(handoff, "/handoff", &mut |pointer, text| {
        let replay = pointer.starts_with("/handoff/replayCommands/");
        let found = if replay {
            approves_or_merges(text).then(|| text.to_owned())
        } else {
            command_fragments(text)
                .into_iter()
                .find(|f| approves_or_merges(f))
        };
        if let Some(command) = found {
            out.push((pointer.to_owned(), command));
        }
    });
    out
}

/// Whether a command approves or merges: a forge, git or tool-call approve/merge, or
/// a wrapper (a script or unknown program) whose name or arguments say approve/merge.
fn approves_or_merges(command: &str) -> bool {
    is_direct_approve_or_merge(command) || wrapper_approves_or_merges(command)
}

/// Programs the classifier knows; wrappers are everything else.
const KNOWN: &[&str] = &[
    "git", "gh", "tea", "glab", "curl", "wget", "http", "https", "xh", "bash", "sh", "zsh",
];

/// Flags whose value is the wrapper's action (`--action merge`).
const ACTION_FLAGS: &[&str] = &[
    "--action",
    "--op",
    "--mode",
    "--event",
    "--verb",
    "--do",
    "--cmd",
    "--command",
    "-a",
];

/// Interpreters that run a script named by their first non-flag argument
/// (`bash scripts/land.sh 9`), or a command string after `-c`.
const INTERPRETERS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "env", "python", "python3", "node", "ruby", "perl",
];

fn wrapper_approves_or_merges(command: &str) -> bool {
    crate::classify::split_shell(command).iter().any(|simple| {
        let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
        simple_wrapper_approves_or_merges(&words)
    })
}

/// One simple command: an interpreter is looked through (`bash -c '…'` is checked as a
/// command of its own, `bash script.sh …` as the script), then a program the classifier
/// does not know is a wrapper whose name or arguments may say approve/merge.
fn simple_wrapper_approves_or_merges(words: &[&str]) -> bool {
    const WORDS: &[&str] = &["approve", "approved", "merge", "lgtm", "land"];
    let Some(first) = words.first() else {
        return false;
    };
    let program = first.rsplit('/').next().unwrap_or(first).to_lowercase();
    if INTERPRETERS.contains(&program.as_str()) {
        let rest = &words[1..];
        if let Some(i) = rest.iter().position(|w| *w == "-c") {
            return rest
                .get(i + 1)
                .is_some_and(|inner| approves_or_merges(inner));
        }
        let script = rest.iter().position(|w| !w.starts_with('-'));
        return script.is_some_and(|i| simple_wrapper_approves_or_merges(&rest[i..]));
    }
    if KNOWN.contains(&program.as_str()) {
        return false;
    }
    let named = program
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| WORDS.contains(&w));
    named
        || words.iter().enumerate().skip(1).any(|(i, a)| {
            let lower = a.to_lowercase();
            if let Some((flag, value)) = lower.split_once('=') {
                return ACTION_FLAGS.contains(&flag) && WORDS.contains(&value);
            }
            let bare = lower.trim_start_matches('-');
            if !WORDS.contains(&bare) {
                return false;
            }
            if lower.starts_with('-') {
                return true;
            }
            let prev = words[i - 1].to_lowercase();
            !prev.starts_with('-') || ACTION_FLAGS.contains(&prev.as_str())
        })
}

/// Command-shaped fragments of prose: `code spans`, and the rest of a clause from a
/// known program, a script path or a tool-call name on.
fn command_fragments(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_owned())
        .collect();
    for clause in text.split(['`', ';', '\n']) {
        let tokens: Vec<&str> = clause.split_whitespace().collect();
        for (i, t) in tokens.iter().enumerate() {
            let bare =
                t.trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | ')' | ',' | '.' | ':'));
            let lower = bare.to_lowercase();
            let program = KNOWN.contains(&lower.as_str()) && lower != "http" && lower != "https";
            let script = lower.starts_with("./")
                || lower.ends_with(".sh")
                || lower == "make"
                || (lower.contains('/') && !lower.contains("://") && i + 1 < tokens.len());
            let tool = t.contains("__") || (t.contains('(') && t.contains('_'));
            if program || script || tool {
                out.push(tokens[i..].join(" ").trim_end_matches('.').to_owned());
            }
        }
    }
    out
}

/// The disposition named by a label value: the longest run of leading words that
/// spells a disposition (`ready to merge — waiting` → `ready-to-merge`).
fn disposition_in(value: &str) -> Option<Disposition> {
    let tokens = words(value);
    (1..=tokens.len().min(3)).rev().find_map(|n| {
        let joined = tokens[..n].join("-");
        serde_json::from_value(serde_json::Value::String(joined)).ok()
    })
}

/// Rule 9. "Narrative and handoff must agree: disposition words, merged/approved
/// claims, and the files-reviewed lists."
///
/// Checked: a `Disposition:` label equals `handoff.disposition`; a narrative merge
/// claim needs the `merged` disposition; a narrative approval needs review state
/// APPROVED; "ready to merge/approve" contradicts blocked, stopped or review-only
/// dispositions; "blocked/stopped/failed closed" contradicts merged, approved or ready
/// dispositions; a `Files reviewed:` list (or count) equals `diffReview.filesReviewed`.
pub(super) fn narrative_agrees_with_handoff(ctx: &Ctx) -> Vec<Violation> {
    let mut out: Vec<Violation> = disposition_label(ctx).into_iter().collect();
    out.extend(claims_against_disposition(ctx, &CLAIM_CONTRADICTS[..1]));
    out.extend(approval_claim(ctx));
    out.extend(claims_against_disposition(ctx, &CLAIM_CONTRADICTS[1..]));
    out.extend(files_reviewed_claim(ctx));
    out
}

/// A claim in words and the dispositions it contradicts.
type ClaimRow = (ClaimKind, fn(Option<Disposition>) -> bool);

/// The claims checked against the handoff disposition.
const CLAIM_CONTRADICTS: &[ClaimRow] = &[
    (ClaimKind::Merged, |d| d != Some(Disposition::Merged)),
    (ClaimKind::ReadyState, |d| {
        matches!(
            d,
            Some(
                Disposition::Blocked
                    | Disposition::Stopped
                    | Disposition::ReviewReported
                    | Disposition::ChangesRequested
            )
        )
    }),
    (ClaimKind::BlockedOrStopped, |d| {
        matches!(
            d,
            Some(
                Disposition::Merged
                    | Disposition::Approved
                    | Disposition::ReadyToMerge
                    | Disposition::ReadyToApprove
            )
        )
    }),
];

/// The handoff disposition as messages name it.
fn handoff_name(ctx: &Ctx) -> &'static str {
    ctx.disposition()
        .map(Disposition::as_str)
        .unwrap_or("(missing)")
}

/// A `Disposition:` label names the handoff's disposition.
fn disposition_label(ctx: &Ctx) -> Option<Violation> {
    let disposition = ctx.disposition();
    let label =
        ctx.narrative
            .label(&["disposition", "final disposition", "handoff disposition"])?;
    (disposition_in(&label.value) != disposition || disposition.is_none()).then(|| {
        Violation::new(
            ViolationCode::NarrativeHandoffMismatch,
            "/handoff/disposition",
            format!(
                "the narrative says `Disposition: {}` but the handoff disposition is `{}`",
                label.value,
                handoff_name(ctx)
            ),
        )
    })
}

/// Each claim of `rows` the narrative makes whose dispositions include the handoff's.
fn claims_against_disposition(ctx: &Ctx, rows: &[ClaimRow]) -> Vec<Violation> {
    rows.iter()
        .filter(|(_, contradicts)| contradicts(ctx.disposition()))
        .filter_map(|(claim, _)| ctx.narrative.claim(*claim))
        .map(|hit| {
            Violation::new(
                ViolationCode::NarrativeHandoffMismatch,
                "/handoff/disposition",
                format!(
                    "the narrative says \"{}\" but the handoff disposition is `{}`",
                    hit.sentence,
                    handoff_name(ctx)
                ),
            )
        })
        .collect()
}

/// An approval claim needs the review state `APPROVED`.
fn approval_claim(ctx: &Ctx) -> Option<Violation> {
    let hit = ctx.narrative.claim(ClaimKind::Approved)?;
    let state: Option<ReviewState> = ctx.get("/review/state");
    (state != Some(ReviewState::Approved)).then(|| {
        Violation::new(
            ViolationCode::NarrativeHandoffMismatch,
            "/review/state",
            format!(
                "the narrative says \"{}\" but the review state is `{}`",
                hit.sentence,
                ctx.text("/review/state").unwrap_or("(missing)")
            ),
        )
    })
}

/// A `Files reviewed:` count or list equals `diffReview.filesReviewed`.
fn files_reviewed_claim(ctx: &Ctx) -> Option<Violation> {
    let code = ViolationCode::NarrativeHandoffMismatch;
    let recorded: Vec<String> = ctx.get("/diffReview/filesReviewed").unwrap_or_default();
    match ctx.narrative.files_reviewed()? {
        FilesClaim::Count(n) if n != recorded.len() => Some(Violation::new(
            code,
            "/diffReview/filesReviewed",
            format!(
                "the narrative says {n} files were reviewed but diffReview.filesReviewed lists {}",
                recorded.len()
            ),
        )),
        FilesClaim::List(listed) => {
            let said: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
            let kept: BTreeSet<&str> = recorded.iter().map(String::as_str).collect();
            let only_said: Vec<&str> = said.difference(&kept).copied().collect();
            let only_kept: Vec<&str> = kept.difference(&said).copied().collect();
            (said != kept).then(|| Violation::new(
                code,
                "/diffReview/filesReviewed",
                format!(
                    "the narrative's files-reviewed list differs from diffReview.filesReviewed (only in narrative: [{}]; only in handoff: [{}])",
                    only_said.join(", "),
                    only_kept.join(", ")
                ),
            ))
        }
        FilesClaim::Count(_) => None,
    }
}

/// Rule 10. "Official review submitted, finding ready but not submitted, dry-run only,
/// and mutation blocked are distinct; a PENDING review is never APPROVED."
///
/// `official-review-submitted` needs state APPROVED, REQUEST_CHANGES or COMMENT, a
/// `reviewId` and a review mutation; `finding-ready-not-submitted` and
/// `mutation-blocked` allow only NONE or PENDING (the latter with `blockedReason`);
/// `dry-run-only` needs state NONE and no review mutation. Dispositions `approved`,
/// `changes-requested` and `commented` need the matching submitted state.
pub(super) fn review_states_distinct(ctx: &Ctx) -> Vec<Violation> {
    let (Some(submission), Some(state)) = (
        ctx.get::<ReviewSubmission>("/review/submission"),
        ctx.get::<ReviewState>("/review/state"),
    ) else {
        return Vec::new();
    };
    let mut out: Vec<Violation> = submission_problems(ctx, submission, state)
        .into_iter()
        .map(|(pointer, message)| {
            Violation::new(ViolationCode::ReviewStateConflated, pointer, message)
        })
        .collect();
    out.extend(disposition_needs_state(ctx, submission, state));
    out
}

/// What a review submission requires of its state, id, reason and review mutations:
/// `(pointer, message)` for each requirement it misses.
fn submission_problems(
    ctx: &Ctx,
    submission: ReviewSubmission,
    state: ReviewState,
) -> Vec<(&'static str, String)> {
    let sub = ctx.text("/review/submission").unwrap_or_default();
    let st = ctx.text("/review/state").unwrap_or_default();
    let unsubmitted = matches!(state, ReviewState::Pending | ReviewState::None);
    let mutations = !ctx.category(MutationCategory::ReviewMutations).is_empty();
    let checks: Vec<(bool, &'static str, String)> = match submission {
        ReviewSubmission::OfficialReviewSubmitted => vec![
            (
                unsubmitted,
                "/review/state",
                format!("`{sub}` with state `{st}`: a {st} review was not submitted"),
            ),
            (
                ctx.text("/review/reviewId").is_none(),
                "/review/reviewId",
                "an official review submission needs the forge review id as proof".to_owned(),
            ),
            (
                !mutations,
                "/mutations/reviewMutations",
                "an official review was submitted but the review-mutation ledger is empty"
                    .to_owned(),
            ),
        ],
        ReviewSubmission::FindingReadyNotSubmitted | ReviewSubmission::MutationBlocked => vec![
            (
                !unsubmitted,
                "/review/state",
                format!("`{sub}` cannot have the submitted state `{st}`"),
            ),
            (
                submission == ReviewSubmission::MutationBlocked
                    && ctx.text("/review/blockedReason").is_none(),
                "/review/blockedReason",
                "`mutation-blocked` needs the reason the review mutation was blocked".to_owned(),
            ),
        ],
        ReviewSubmission::DryRunOnly => vec![
            (
                state != ReviewState::None,
                "/review/state",
                format!("`dry-run-only` cannot have review state `{st}`; nothing was posted"),
            ),
            (
                mutations,
                "/mutations/reviewMutations",
                "`dry-run-only` but the review-mutation ledger records review mutations".to_owned(),
            ),
        ],
    };
    checks
        .into_iter()
        .filter(|(failed, _, _)| *failed)
        .map(|(_, pointer, message)| (pointer, message))
        .collect()
}

/// Dispositions `approved`/`changes-requested`/`commented` need that state, submitted.
fn disposition_needs_state(
    ctx: &Ctx,
    submission: ReviewSubmission,
    state: ReviewState,
) -> Option<Violation> {
    let needed = match ctx.disposition()? {
        Disposition::Approved => ReviewState::Approved,
        Disposition::ChangesRequested => ReviewState::RequestChanges,
        Disposition::Commented => ReviewState::Comment,
        _ => return None,
    };
    let submitted = submission == ReviewSubmission::OfficialReviewSubmitted;
    if state == needed && submitted {
        return None;
    }
    let d = ctx.text("/handoff/disposition").unwrap_or_default();
    let sub = ctx.text("/review/submission").unwrap_or_default();
    let st = ctx.text("/review/state").unwrap_or_default();
    Some(Violation::new(
        ViolationCode::ReviewStateConflated,
        "/handoff/disposition",
        format!(
            "disposition `{d}` needs an officially submitted review in that state, but the review is `{sub}` / `{st}`"
        ),
    ))
}
