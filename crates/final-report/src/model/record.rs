//! Records of what the session proved: review, validation, diff review, merge, linked
//! issues, inventory, concurrency.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether and how a review was submitted to the forge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewRecord {
    /// Which of the four distinct review outcomes applies.
    pub submission: ReviewSubmission,
    /// The forge's state of the session's review.
    pub state: ReviewState,
    /// The forge id of the submitted review: proof of an official submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    /// Why a review mutation was blocked (required for `mutation-blocked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<String>,
}

/// The four review outcomes, which are never interchangeable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewSubmission {
    /// A review was submitted to the forge (state APPROVED, REQUEST_CHANGES or COMMENT).
    OfficialReviewSubmitted,
    /// A finding is ready but no review was submitted (at most a PENDING draft).
    FindingReadyNotSubmitted,
    /// The review was computed and reported only; nothing was posted to a forge.
    DryRunOnly,
    /// A review mutation was attempted or wanted but blocked by policy or permission.
    MutationBlocked,
}

/// A forge review state, spelled as the forges spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewState {
    /// An approving review was submitted.
    Approved,
    /// A review requesting changes was submitted.
    RequestChanges,
    /// A comment-only review was submitted.
    Comment,
    /// A draft review exists but was never submitted. Never an approval.
    Pending,
    /// No review exists.
    None,
}

/// The validation (test) record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValidationRecord {
    /// Outcome of the validation run.
    pub status: ValidationStatus,
    /// Whether this run is the official PR-head validation (false for a diagnostic
    /// merge simulation or when nothing ran).
    pub official: bool,
    /// Whether the run used the unmodified pull-request head (no local merge, no edits).
    pub ran_on_unmodified_pr_head: bool,
    /// The exact `HEAD` commit of the worktree the validation ran on (full SHA).
    /// Required when the status is `passed` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_head: Option<String>,
    /// The validation commands, as they appear in the command ledger.
    pub commands: Vec<String>,
    /// Test counts of the run. Required when the status is `passed` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<TestCounts>,
    /// Exactly what was skipped or ignored; the counts must add up to
    /// `counts.skipped + counts.ignored`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<IgnoredTests>,
    /// Baseline counts on the target branch, for "pre-existing failure" claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// Claim: the full suite passed. Absent means no claim.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_suite_passed: bool,
    /// Claim: the failures are pre-existing (same as the target branch).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failures_pre_existing: bool,
    /// Claim: all validation ran in an isolated worktree, none in the main checkout.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub isolated_worktree_only: bool,
}

/// Outcome of a validation run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ValidationStatus {
    /// Every executed test passed.
    Passed,
    /// At least one test failed.
    Failed,
    /// Validation was not run (e.g. a read-only review).
    NotRun,
}

/// Test counts of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestCounts {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests skipped by the runner (conditions, platform, filters).
    pub skipped: u64,
    /// Tests marked ignored.
    pub ignored: u64,
}

/// A named group of skipped or ignored tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IgnoredTests {
    /// The test (or test group) name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// How many tests this entry stands for (at least 1).
    #[schemars(range(min = 1))]
    pub count: u64,
    /// Why they were skipped or ignored.
    #[schemars(length(min = 1))]
    pub reason: String,
}

/// Baseline test counts on the target branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Baseline {
    /// What the baseline ran on, e.g. `main@<sha>`.
    #[schemars(length(min = 1))]
    pub reference: String,
    /// The baseline counts.
    pub counts: TestCounts,
    /// Why the baseline and PR counts differ; required when they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// The diff review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffReview {
    /// Outcome of the diff review.
    pub status: DiffReviewStatus,
    /// The repository-relative paths that were reviewed. Required (non-empty) when the
    /// status is `passed` or `findings`.
    pub files_reviewed: Vec<String>,
    /// Coverage of a completed review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
}

/// Outcome of a diff review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DiffReviewStatus {
    /// Completed with no blocking findings.
    Passed,
    /// Completed with findings.
    Findings,
    /// Could not complete; nothing is proven.
    Incomplete,
    /// Cancelled.
    Aborted,
    /// Not run (e.g. an empty range).
    NotRun,
}

/// Coverage of a completed review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// Every file was covered with no limitation.
    Full,
    /// Coverage was limited (stated in the narrative).
    Limited,
}

/// The merge record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergeRecord {
    /// What happened to the merge.
    pub result: MergeResult,
    /// The merge commit SHA (required for `merged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit_sha: Option<String>,
    /// Proof the merge commit is on the target branch, e.g. the output of
    /// `git merge-base --is-ancestor <merge> origin/main` (required for `merged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ancestry_proof: Option<String>,
}

/// What happened to the merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MergeResult {
    /// The session merged the change.
    Merged,
    /// A merge was attempted and failed or was refused.
    NotMerged,
    /// No merge was attempted.
    NotAttempted,
}

/// A linked issue and its verified state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkedIssue {
    /// The issue reference, e.g. `#12` or a URL.
    #[schemars(length(min = 1))]
    pub reference: String,
    /// Claim: the issue is closed.
    pub closed: bool,
    /// Whether the issue state was read live from the forge after the merge.
    pub live_verified_after_merge: bool,
    /// The evidence of the live read (tool call, API response summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Transcript `seq` of the live read of the issue (after the merge). With a
    /// transcript, this (or a `seq N` named in `evidence`) must be a read of the issue
    /// after the merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at_seq: Option<u64>,
}

/// The pull-request queue inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Inventory {
    /// Claim: the inventory is complete.
    pub complete: bool,
    /// The kind of pagination proof. A result count below the page size is not proof.
    pub pagination_proof: PaginationProof,
    /// The proof in words (e.g. "page 3: Link header has no rel=next").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Transcript `seq` of the listing call (or its `result` entry) whose recorded
    /// response proves the last page: a false has-next flag, a null next link, a Link
    /// header without `rel="next"`, or a total no larger than the items fetched.
    /// Required when `complete` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_seq: Option<u64>,
    /// `INVENTORY_PAGINATION_UNPROVEN` when completeness could not be proven: the claim
    /// is downgraded, not hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<InventoryStatus>,
}

/// The kind of pagination proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PaginationProof {
    /// The last page was read and the forge marked it final.
    FinalPage,
    /// The forge response had no next-page link.
    NoNextPage,
    /// Tool metadata stated the total count or that no more pages exist.
    ToolMetadata,
    /// No proof.
    None,
}

/// A downgraded inventory state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum InventoryStatus {
    /// Completeness of the inventory could not be proven.
    #[serde(rename = "INVENTORY_PAGINATION_UNPROVEN")]
    PaginationUnproven,
}

/// Concurrency and staleness observations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Concurrency {
    /// Another reviewer or agent acting on the same change.
    pub concurrent_reviewer: ConcurrentReviewer,
    /// The selected pull request changed after selection.
    pub selected_pr_stale: SelectedPrStale,
    /// The target branch moved after selection.
    pub target_branch_stale: TargetBranchStale,
    /// Whether a controller may reuse this report's ready-to-approve/merge state later.
    pub ready_state_reusable: bool,
    /// Whether the disposition is terminal: a controller must re-select rather than
    /// resume from this report's state. `true`/`false`, or the terminal disposition in
    /// words (which means terminal).
    pub terminal_disposition: TerminalDisposition,
    /// MCP failures and restarts during the session, with the re-verification after each.
    #[serde(default)]
    pub mcp_interruptions: Vec<McpInterruption>,
}

/// Whether a session's disposition is terminal.
///
/// JSON: a boolean, or a non-empty sentence stating the terminal disposition (e.g.
/// "stopped due to an external reviewer mutation, not approved or merged by this
/// session"), which means terminal. Both forms are schema version 1: the sentence form
/// widens what v1 accepts, so every earlier v1 report stays valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TerminalDisposition {
    /// `true`: terminal; `false`: a controller may resume from this report's state.
    Flag(bool),
    /// The terminal disposition in words: terminal.
    Stated(#[schemars(length(min = 1))] String),
}

impl TerminalDisposition {
    /// Whether the disposition is terminal.
    pub fn is_terminal(&self) -> bool {
        match self {
            Self::Flag(terminal) => *terminal,
            Self::Stated(_) => true,
        }
    }
}

/// A concurrent reviewer observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConcurrentReviewer {
    /// Whether one was detected.
    pub detected: bool,
    /// Where it was seen (e.g. "review list at seq 41"); required when detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_source: Option<String>,
    /// Who it was; required when detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

/// A stale selected pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectedPrStale {
    /// Whether the pull request changed after selection.
    pub stale: bool,
    /// Its state at selection (required when stale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_state: Option<String>,
    /// Its state when the change was observed (required when stale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_state: Option<String>,
    /// When the change was observed, RFC 3339 (required when stale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<String>,
}

/// A stale target branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetBranchStale {
    /// Whether the target branch moved after selection.
    pub stale: bool,
    /// Its SHA at selection (required when stale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_sha: Option<String>,
    /// Its SHA when the move was observed (required when stale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_sha: Option<String>,
}

/// An MCP failure or restart and the live re-verification after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpInterruption {
    /// Failure or restart.
    pub kind: InterruptionKind,
    /// Transcript `seq` of the interruption, when a transcript exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Transcript `seq` of the live re-verification after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverified_at_seq: Option<u64>,
    /// What was re-verified and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// Kind of MCP interruption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InterruptionKind {
    /// A tool call or the MCP connection failed.
    Failure,
    /// The MCP server or session restarted.
    Restart,
}
