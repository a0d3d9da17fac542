//! vouch-core: the domain types and pure rules of a vouch review.
//!
//! Snapshot → canonical file list → coverage receipts → candidates → decisions →
//! findings → opinion. No IO, no async: every rule here is a pure function with the
//! rule's sentence in its docstring and a table-driven test beside it.

pub mod boundary;
pub mod candidate;
pub mod caps;
pub mod completion;
pub mod convention;
pub mod coverage;
pub mod decision;
pub mod files;
pub mod finding;
pub mod intake;
pub mod opinion;
pub mod prefetch;
pub mod record;
pub mod reply;
pub mod reviewed;
pub mod shape;
pub mod shard;
pub mod snapshot;
pub mod source;
pub mod text;
pub mod window;

pub use boundary::{Area, Role};
pub use candidate::{Candidate, Severity, UnknownValue, candidate_id};
pub use caps::fit_caps;
pub use completion::{files_not_fully_seen, files_without_lane, hunks_seen, zero_source_gap};
pub use convention::{
    ConventionGap, ConventionSupport, MIN_CONVENTION_EXAMPLES, convention_support,
};
pub use coverage::{
    CoverageComparison, CoverageReceipt, ReceiptProblem, RetryProblem, compare_coverage,
    forced_synthesis_limits, mismatch_after_retry_message, normalisation_hint,
};
pub use decision::{
    CandidateState, Decision, DecisionAccount, DecisionProblem, FindingDraft,
    NARROWING_SLACK_LINES, UNCITED_REJECTION, Verdict, account_decisions, within_narrowing_slack,
};
pub use files::{expected_files, reviewed_as_added};
pub use finding::{AlsoVerified, Finding, Provenance, merge_findings};
pub use intake::{IntakeProblem, PathLookup, candidate_intake, is_canonical_path};
pub use opinion::{
    AuditRun, AuditState, CoverageLevel, FailOn, Failure, FailureKind, Limitation, LimitationKind,
    Opinion, Outcome, ReviewFacts, audit_state, derive_opinion, exit_code,
};
pub use prefetch::{PrefetchKind, PrefetchRecord, select_within_budget};
pub use record::{
    BudgetKind, CandidateRecord, ExcludedFile, StageRecord, StageStatus, TokenUsage,
    contradicted_candidates,
};
pub use reply::{
    CandidateLocation, PastRepairBound, PriorReceipt, RepairDemands, RepairViolation,
    TruncationStep, carried_candidates, check_candidate_repair, check_decision_repair,
    complete_prior_candidates, prior_receipt, prior_verdicts, prose_locations, repair_demands,
    repaired_full_coverage, truncation_step,
};
pub use reviewed::{
    FilesReviewed, NotReviewedFile, NotReviewedReason, StageCoverage, files_reviewed,
    files_reviewed_from_records,
};
pub use shape::{
    IssueStep, MAX_SHAPE_PROBLEMS, OMITTABLE, Omitted, ReplyIssue, ShapeProblem, conform,
    omitted_value,
};
pub use shard::{
    BYTES_PER_TOKEN, FileCost, FilePart, MIN_RETRY_ANSWER_TOKENS, Shard, ShardBudget, ShardEntry,
    ShardPlan, ShardRoom, batches, estimate_tokens, lane_receipt_bound, plan_shards,
    receipt_tokens, running_order, shard_room,
};
pub use snapshot::{
    ChangeCounts, ChangeSnapshot, ChangedFile, CommitRef, EntryKind, FileStatus, Hunk,
    LONG_LINE_BYTES, LongLineChange, NAMED_LINE_BYTES, RangeCommit, RenameLimitHit, is_long_line,
    is_named_line, rename_limitation,
};
pub use source::{
    Citation, CitationError, FileLines, LineSpan, Revision, SourceLedger, SourceWindow,
    merge_line_ranges,
};
pub use text::{CR_MARK, ending_mark, shown_len, shown_prefix_len, shown_text, split_cr};
pub use window::{ContextWindow, DEFAULT_CONTEXT_TOKENS, WindowSource, choose_window};
