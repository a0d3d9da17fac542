//! The claim grammar's table: one row per claim phrase (its id, the claim, its words in
//! order, the words allowed between them, and the sentence of the rule it implements),
//! and the word lists that deny a phrase. Adding a phrasing is one row.

use super::claim::ClaimKind::{self, *};

/// One claim phrase.
pub(super) struct Pattern {
    /// A stable id, `kind:words`.
    pub(super) id: &'static str,
    pub(super) kind: ClaimKind,
    /// The words in order; `a|b` accepts either word.
    pub(super) words: &'static [&'static str],
    /// Most other words allowed between two consecutive pattern words.
    pub(super) gap: usize,
    /// The sentence of the rule (docs/final-report.md, issue 27) that judges the claim.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "documentation, checked by tests")
    )]
    pub(super) sentence: &'static str,
}

const fn p(
    id: &'static str,
    kind: ClaimKind,
    words: &'static [&'static str],
    gap: usize,
    sentence: &'static str,
) -> Pattern {
    Pattern {
        id,
        kind,
        words,
        gap,
        sentence,
    }
}

/// The rule sentences the phrases implement (the rule table's, `rules/table.rs`).
const S5: &str = "\"Merged\" needs a merge result and target-ancestry proof.";
const S6: &str = "\"Issue closed\" needs live linked-issue verification after the merge.";
const S7: &str = "Pass claims carry counts; \"passed\" with nothing executed, failures, or unnamed skips is rejected wherever it appears.";
const S9: &str = "Narrative and handoff agree about this change.";
const S13: &str = "\"Inventory complete\" needs a structured proof; a count compared with a page size is never proof. `INVENTORY_PAGINATION_UNPROVEN` is accepted.";
const S14: &str = "\"Failure is pre-existing / same as master\" is rejected when baseline and PR counts differ without an explanation.";
const S16: &str = "Whole session: complete command ledger; isolation and strict-compliance claims true of the session; config reads justified; profile activations classified.";
const S17: &str = "\"Ready to merge\" carried across a recorded MCP failure or restart is rejected unless re-verified after it.";

/// Words naming the target branch in a merge phrase (`pushed it to origin/main`).
const TARGET: &str = "main|master|trunk|target";
/// A target branch, or the direction word of a merge (`fast-forwarded into ...`).
const TARGET_OR_INTO: &str = "main|master|trunk|target|into|onto";

/// Every claim phrase; the first row of a kind that a sentence asserts decides.
pub(super) const PATTERNS: &[Pattern] = &[
    p("merged:merged", Merged, &["merged"], 0, S5),
    p(
        "merged:merge-succeeded",
        Merged,
        &["merge", "succeeded"],
        1,
        S5,
    ),
    p(
        "merged:merge-completed",
        Merged,
        &["merge", "completed"],
        1,
        S5,
    ),
    p(
        "merged:pushed-to-main",
        Merged,
        &["pushed", "to|into|onto", TARGET],
        2,
        S5,
    ),
    p(
        "merged:landed-on-main",
        Merged,
        &["landed", "on|in|into|onto|to", TARGET],
        2,
        S5,
    ),
    p(
        "merged:fast-forwarded-into-main",
        Merged,
        &["fast", "forwarded", TARGET_OR_INTO],
        1,
        S5,
    ),
    p(
        "merged:main-fast-forwarded",
        Merged,
        &[TARGET, "fast", "forwarded"],
        2,
        S5,
    ),
    p("approved:approved", Approved, &["approved"], 0, S9),
    p(
        "approved:approval-submitted",
        Approved,
        &["approval", "submitted"],
        2,
        S9,
    ),
    p("ready:ready-merge", ReadyState, &["ready", "merge"], 2, S17),
    p(
        "ready:ready-merged",
        ReadyState,
        &["ready", "merged"],
        2,
        S17,
    ),
    p(
        "ready:ready-merging",
        ReadyState,
        &["ready", "merging"],
        2,
        S17,
    ),
    p(
        "ready:ready-approve",
        ReadyState,
        &["ready", "approve"],
        2,
        S17,
    ),
    p(
        "ready:ready-approval",
        ReadyState,
        &["ready", "approval"],
        2,
        S17,
    ),
    p("ready:ready-land", ReadyState, &["ready", "land"], 2, S17),
    p("ready:ready-ship", ReadyState, &["ready", "ship"], 2, S17),
    p("ready:safe-land", ReadyState, &["safe", "land"], 1, S17),
    p("ready:safe-merge", ReadyState, &["safe", "merge"], 1, S17),
    p("ready:good-merge", ReadyState, &["good", "merge"], 1, S17),
    p("ready:ok-merge", ReadyState, &["ok", "merge"], 1, S17),
    p("ready:okay-merge", ReadyState, &["okay", "merge"], 1, S17),
    p("ready:fine-merge", ReadyState, &["fine", "merge"], 1, S17),
    p("ready:clear-merge", ReadyState, &["clear", "merge"], 1, S17),
    p(
        "ready:cleared-merge",
        ReadyState,
        &["cleared", "merge"],
        2,
        S17,
    ),
    p("ready:can-merged", ReadyState, &["can", "merged"], 2, S17),
    p("ready:mergeable", ReadyState, &["mergeable"], 0, S17),
    p("ready:merge-ready", ReadyState, &["merge", "ready"], 0, S17),
    p("ready:good-go", ReadyState, &["good", "go"], 1, S17),
    p(
        "ready:nothing-blocks",
        ReadyState,
        &["nothing", "blocks"],
        0,
        S17,
    ),
    p("ready:can-landed", ReadyState, &["can", "landed"], 2, S17),
    p("ready:ship-it", ReadyState, &["ship", "it"], 0, S17),
    p("ready:lgtm", ReadyState, &["lgtm"], 0, S17),
    p(
        "full-suite:full-suite-passed",
        FullSuitePassed,
        &["full", "suite", "passed"],
        2,
        S7,
    ),
    p(
        "full-suite:full-suite-green",
        FullSuitePassed,
        &["full", "suite", "green"],
        2,
        S7,
    ),
    p(
        "full-suite:entire-suite-passed",
        FullSuitePassed,
        &["entire", "suite", "passed"],
        2,
        S7,
    ),
    p(
        "full-suite:all-tests-passed",
        FullSuitePassed,
        &["all", "tests", "passed"],
        2,
        S7,
    ),
    p(
        "full-suite:all-tests-pass",
        FullSuitePassed,
        &["all", "tests", "pass"],
        2,
        S7,
    ),
    p(
        "full-suite:all-checks-passed",
        FullSuitePassed,
        &["all", "checks", "passed"],
        2,
        S7,
    ),
    p(
        "full-suite:all-checks-succeeded",
        FullSuitePassed,
        &["all", "checks", "succeeded"],
        2,
        S7,
    ),
    p(
        "full-suite:all-checks-green",
        FullSuitePassed,
        &["all", "checks", "green"],
        2,
        S7,
    ),
    p(
        "full-suite:tests-green",
        FullSuitePassed,
        &["tests", "green"],
        1,
        S7,
    ),
    p(
        "full-suite:suite-green",
        FullSuitePassed,
        &["suite", "green"],
        1,
        S7,
    ),
    p(
        "full-suite:ci-green",
        FullSuitePassed,
        &["ci", "green"],
        1,
        S7,
    ),
    p(
        "full-suite:everything-passed",
        FullSuitePassed,
        &["everything", "passed"],
        1,
        S7,
    ),
    p(
        "full-suite:everything-green",
        FullSuitePassed,
        &["everything", "green"],
        1,
        S7,
    ),
    p(
        "full-suite:all-green",
        FullSuitePassed,
        &["all", "green"],
        1,
        S7,
    ),
    p(
        "full-suite:checks-green",
        FullSuitePassed,
        &["checks", "green"],
        1,
        S7,
    ),
    p(
        "full-suite:validation-pass",
        FullSuitePassed,
        &["validation", "pass"],
        0,
        S7,
    ),
    p(
        "full-suite:tests-pass",
        FullSuitePassed,
        &["tests", "pass"],
        0,
        S7,
    ),
    p(
        "full-suite:tests-passing",
        FullSuitePassed,
        &[
            "tests|suite|checks|ci|everything|validation",
            "passing|passes",
        ],
        1,
        S7,
    ),
    p(
        "full-suite:validation-passed",
        FullSuitePassed,
        &["validation", "passed"],
        1,
        S7,
    ),
    p(
        "issue-closed:issue-closed",
        IssueClosed,
        &["issue", "closed"],
        3,
        S6,
    ),
    p(
        "issue-closed:issues-closed",
        IssueClosed,
        &["issues", "closed"],
        3,
        S6,
    ),
    p(
        "issue-closed:closed-issue",
        IssueClosed,
        &["closed", "issue"],
        2,
        S6,
    ),
    p(
        "issue-closed:closed-issues",
        IssueClosed,
        &["closed", "issues"],
        2,
        S6,
    ),
    p(
        "inventory:inventory-complete",
        InventoryComplete,
        &["inventory", "complete"],
        2,
        S13,
    ),
    p(
        "inventory:complete-inventory",
        InventoryComplete,
        &["complete", "inventory"],
        1,
        S13,
    ),
    p(
        "pre-existing:pre-existing",
        FailurePreExisting,
        &["pre", "existing"],
        0,
        S14,
    ),
    p(
        "pre-existing:preexisting",
        FailurePreExisting,
        &["preexisting"],
        0,
        S14,
    ),
    p(
        "pre-existing:same-as-master",
        FailurePreExisting,
        &["same", "as", "master"],
        0,
        S14,
    ),
    p(
        "pre-existing:same-as-main",
        FailurePreExisting,
        &["same", "as", "main"],
        0,
        S14,
    ),
    p(
        "pre-existing:also-fails-on",
        FailurePreExisting,
        &["also", "fails", "on"],
        0,
        S14,
    ),
    p(
        "isolated:validation-isolated-worktree",
        IsolatedWorktreeOnly,
        &["validation", "isolated", "worktree"],
        4,
        S16,
    ),
    p(
        "isolated:tests-isolated-worktree",
        IsolatedWorktreeOnly,
        &["tests", "isolated", "worktree"],
        4,
        S16,
    ),
    p(
        "isolated:isolated-worktree-only",
        IsolatedWorktreeOnly,
        &["isolated", "worktree", "only"],
        1,
        S16,
    ),
    p(
        "strict:strict-compliance",
        StrictCompliance,
        &["strict", "compliance"],
        0,
        S16,
    ),
    p(
        "strict:strictly-compliant",
        StrictCompliance,
        &["strictly", "compliant"],
        0,
        S16,
    ),
    p(
        "strict:fully-compliant",
        StrictCompliance,
        &["fully", "compliant"],
        0,
        S16,
    ),
    p("blocked:blocked", BlockedOrStopped, &["blocked"], 0, S9),
    p("blocked:stopped", BlockedOrStopped, &["stopped"], 0, S9),
    p(
        "blocked:failed-closed",
        BlockedOrStopped,
        &["failed", "closed"],
        0,
        S9,
    ),
    p(
        "blocked:fail-closed",
        BlockedOrStopped,
        &["fail", "closed"],
        0,
        S9,
    ),
];

/// Words that negate a claim anywhere before it in its sentence window or between its
/// words. `t` is the tail of contractions like "wasn't" after tokenisation.
pub(super) const NEGATORS: &[&str] = &[
    "not", "no", "never", "without", "t", "nor", "neither", "cannot", "unable", "refused",
    "nothing", "nobody", "none", "didn", "wasn", "isn", "hasn", "haven", "won", "wouldn", "couldn",
    "shouldn",
];

/// Words that hedge a claim when they precede it ("will be merged", "ready to be merged").
pub(super) const HEDGES: &[&str] = &[
    "would", "will", "should", "could", "can", "may", "might", "if", "once", "until", "unless",
    "before", "when", "whether", "ready", "be", "to", "pending", "awaiting", "await",
];

/// Words after "by" that keep a merge or approval the session's own.
pub(super) const SELF_WORDS: &[&str] = &[
    "me",
    "us",
    "this",
    "vouch",
    "myself",
    "ourselves",
    "session",
];

/// Label values that deny the label (`Merged: no`).
pub(super) const NEGATIVE_VALUES: &[&str] = &[
    "no",
    "false",
    "none",
    "not",
    "n",
    "na",
    "never",
    "unproven",
    "pending",
    "skipped",
    "incomplete",
    "unknown",
    "unverified",
    "partial",
    "blocked",
];
