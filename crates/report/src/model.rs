//! The review report: vouch's versioned JSON output for one review.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use vouch_core::{
    CandidateRecord, ChangeCounts, ChangedFile, CommitRef, ContextWindow, ExcludedFile, Failure,
    Finding, Limitation, NotReviewedFile, Opinion, StageRecord, TokenUsage,
};

/// The `schemaVersion` of reports this crate writes.
pub const REPORT_SCHEMA_VERSION: &str = "vouch.review-report/2";

/// The tool that wrote the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// Always `vouch`.
    pub name: String,
    /// The vouch version.
    pub version: String,
}

/// Whether final answers were requested with `response_format: json_schema`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StructuredOutputs {
    /// Requested by configuration.
    pub requested: bool,
    /// The endpoint rejected them and vouch fell back to prompt-only contracts.
    pub fell_back: bool,
}

/// One review's report. Findings are present only when the opinion publishes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewReport {
    /// [`REPORT_SCHEMA_VERSION`].
    pub schema_version: String,
    /// Who wrote it.
    pub tool: ToolInfo,
    /// The reviewed repository (as given on the command line).
    pub repository: String,
    /// The repository's remote URL (`origin`, else its only remote) without credentials,
    /// when it has one: what SARIF's `versionControlProvenance` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_url: Option<String>,
    /// Base revision as given and resolved.
    pub base: CommitRef,
    /// Head revision as given and resolved.
    pub head: CommitRef,
    /// The merge base: the diff's old side.
    pub merge_base: String,
    /// The composition's name.
    pub composition: String,
    /// The derived opinion.
    pub opinion: Opinion,
    /// One line for humans.
    pub summary: String,
    /// Totals of the change.
    pub counts: ChangeCounts,
    /// Every changed file as the snapshot paired it (status, paths, hunks, long lines):
    /// what the files reviewed are derived from, with the stages' records, when a saved
    /// report is checked.
    pub changed_files: Vec<ChangedFile>,
    /// The canonical list of expected files.
    pub expected_files: Vec<String>,
    /// Changed files set aside before review (binary, excluded, unassigned), with reasons.
    pub excluded_files: Vec<ExcludedFile>,
    /// Files reviewed: each listed in an accepted coverage receipt and seen in full by the
    /// host's rule. Every count of reviewed files counts these.
    pub files_reviewed: Vec<String>,
    /// Every other changed file, by name, with its reason (`excluded`, `binary`,
    /// `unassigned`, `not-fully-seen`, `stage-failed`, `over-budget`).
    pub files_not_reviewed: Vec<NotReviewedFile>,
    /// Per stage instance: coverage, retries, repairs, usage.
    pub stages: Vec<StageRecord>,
    /// Every candidate with its decision.
    pub candidates: Vec<CandidateRecord>,
    /// Verified findings (empty unless `opinion.publishFindings`).
    pub findings: Vec<Finding>,
    /// Coverage limitations.
    pub limitations: Vec<Limitation>,
    /// Failures (the review is incomplete when any exist).
    pub failures: Vec<Failure>,
    /// Messages for the user (e.g. a coverage mismatch after retry), also printed.
    pub messages: Vec<String>,
    /// Observations that are not findings (stage summaries, fallbacks).
    pub observations: Vec<String>,
    /// Total token usage.
    pub usage: TokenUsage,
    /// The model's context window the budgets were derived from, and where it came
    /// from (absent when no model was called, and in reports of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<ContextWindow>,
    /// Structured-output use.
    pub structured_outputs: StructuredOutputs,
    /// The embedded review final report (vouch-final-report schema), validated before
    /// the report is written.
    pub final_report: serde_json::Value,
}
