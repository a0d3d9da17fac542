//! The JSON payloads that cross the plugin boundary (payload version 1).
//!
//! Every type is serde camelCase. Unknown fields are ignored in both directions, so the
//! host and plugins can grow independently within one ABI major: never add
//! `deny_unknown_fields` here.

use serde::{Deserialize, Serialize};

/// The payload version this crate speaks.
pub const PAYLOAD_VERSION: u32 = 1;

/// A value of a closed set (role, area; in vouch-core also severity, revision, verdict)
/// that is not one of its members.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`")]
pub struct UnknownValue {
    /// What the set is (`role`, `area`, `severity`, ...).
    pub what: &'static str,
    /// The value as written.
    pub value: String,
}

impl UnknownValue {
    /// `value` is not a `what`.
    pub fn new(what: &'static str, value: &str) -> Self {
        UnknownValue {
            what,
            value: value.to_string(),
        }
    }
}

/// What a specialist does in a review. The host decides what a role receives
/// (e.g. only the outcome investigator ever receives pull-request intent).
///
/// The one spelling is [`Role::as_str`]; serde and [`FromStr`](std::str::FromStr) use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Generic investigator: every changed file, never the pull-request prose.
    Investigator,
    /// Outcome investigator: checks the change achieves its detected intent.
    OutcomeInvestigator,
    /// Repository conventions: written policy or ≥ 3 consistent examples.
    Conventions,
    /// Clean-result audit: runs only when no lane proposed a candidate.
    CleanResultAudit,
    /// A panel reviewer (instructions, bug, objective reviews).
    Reviewer,
    /// The verifier: one decision per candidate, with citations.
    Verifier,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 6] = [
        Role::Investigator,
        Role::OutcomeInvestigator,
        Role::Conventions,
        Role::CleanResultAudit,
        Role::Reviewer,
        Role::Verifier,
    ];

    /// The kebab-case name, as in manifests and reports (`outcome-investigator`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Investigator => "investigator",
            Role::OutcomeInvestigator => "outcome-investigator",
            Role::Conventions => "conventions",
            Role::CleanResultAudit => "clean-result-audit",
            Role::Reviewer => "reviewer",
            Role::Verifier => "verifier",
        }
    }
}

impl std::fmt::Display for Role {
    /// Writes [`Role::as_str`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Role {
    type Err = UnknownValue;

    /// Parses the kebab-case name exactly; anything else is an error naming it.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == text)
            .ok_or_else(|| UnknownValue::new("role", text))
    }
}

/// A review area: the one definition of the areas a candidate or finding may have (the
/// investigator prompts' review-area table, the contracts' `area` enum, the reports'
/// `area` and SARIF rules).
///
/// The one spelling is [`Area::as_str`]; serde and [`FromStr`](std::str::FromStr) use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Area {
    /// Logic errors, wrong results.
    Correctness,
    /// Broken interfaces and promises between parts.
    Contracts,
    /// Error handling and partial failure.
    FailurePaths,
    /// Races, ordering, shared state.
    Concurrency,
    /// Security defects.
    Security,
    /// Leaks and unbounded use.
    Resources,
    /// Deployment, configuration, observability.
    Operations,
    /// Input validation.
    Validation,
    /// Repository conventions (written policy or consistent practice).
    Conventions,
}

impl Area {
    /// Every area, in the review-area table's order.
    pub const ALL: [Area; 9] = [
        Area::Correctness,
        Area::Contracts,
        Area::FailurePaths,
        Area::Concurrency,
        Area::Security,
        Area::Resources,
        Area::Operations,
        Area::Validation,
        Area::Conventions,
    ];

    /// The contract spelling (`failure-paths`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Area::Correctness => "correctness",
            Area::Contracts => "contracts",
            Area::FailurePaths => "failure-paths",
            Area::Concurrency => "concurrency",
            Area::Security => "security",
            Area::Resources => "resources",
            Area::Operations => "operations",
            Area::Validation => "validation",
            Area::Conventions => "conventions",
        }
    }
}

impl std::fmt::Display for Area {
    /// Writes [`Area::as_str`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Area {
    type Err = UnknownValue;

    /// Parses the contract spelling exactly; an unknown area is an error naming it.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Area::ALL
            .into_iter()
            .find(|a| a.as_str() == text)
            .ok_or_else(|| UnknownValue::new("area", text))
    }
}

/// What `describe` returns: who the plugin is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Stable id, lowercase kebab-case (e.g. `generic-investigator`). Also names the
    /// export symbol: see [`crate::export_symbol`].
    pub id: String,
    /// The plugin's own semantic version (e.g. `1.0.0`); manifests pin it.
    pub version: String,
    /// The role it plays.
    pub role: Role,
    /// Payload version it speaks ([`PAYLOAD_VERSION`]).
    pub payload_version: u32,
    /// One sentence for humans.
    #[serde(default)]
    pub description: String,
}

/// One hunk as shown to a specialist (1-based line numbers, as in `@@ -a,b +c,d @@`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkSummary {
    /// First base line.
    pub old_start: u32,
    /// Base line count.
    pub old_lines: u32,
    /// First head line.
    pub new_start: u32,
    /// Head line count.
    pub new_lines: u32,
}

/// One changed file as shown to a specialist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSummary {
    /// Current path.
    pub path: String,
    /// Source path of a rename or copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_path: Option<String>,
    /// `added`, `modified`, `deleted`, `renamed`, `copied`, `mode-only`, `type-changed`.
    pub status: String,
    /// `file`, `executable`, `symlink`, `submodule`.
    pub kind: String,
    /// True for binary files (no hunks).
    pub binary: bool,
    /// Added lines.
    pub additions: u32,
    /// Deleted lines.
    pub deletions: u32,
    /// Hunks in file order.
    pub hunks: Vec<HunkSummary>,
}

/// The change as shown to a specialist: only the files assigned to this instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSummary {
    /// Merge-base commit id (the old side).
    pub base_sha: String,
    /// Head commit id (the new side).
    pub head_sha: String,
    /// Assigned files, sorted by path.
    pub files: Vec<FileSummary>,
}

/// Host-detected intent of the change (pull-request title/body, else commit messages).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    /// Where it came from: `pull-request` or `commit-messages`.
    pub source: String,
    /// Title, if any.
    #[serde(default)]
    pub title: String,
    /// Body or concatenated commit messages (bounded by the host).
    #[serde(default)]
    pub body: String,
}

/// A repository policy document read from the base tree (bounded by the host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyDocument {
    /// Repository-relative path at base.
    pub path: String,
    /// Text, possibly cut at the host's size cap.
    pub text: String,
    /// True when `text` was cut.
    pub truncated: bool,
}

/// A candidate finding as the verifier receives it (the id is assigned by the host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CandidateForVerification {
    /// Host-assigned id (`<lane label> / <index>`, e.g. `generic-investigator #1/0`).
    pub id: String,
    /// The proposed finding.
    #[serde(flatten)]
    pub candidate: ProposedCandidate,
}

/// What `render_prompt` receives. Fields a role does not get are empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRequest {
    /// Payload version of the host.
    pub payload_version: u32,
    /// The instance label (e.g. `bug-review #2`).
    pub label: String,
    /// The assigned part of the change.
    pub change: ChangeSummary,
    /// Detected intent; only the outcome investigator and objective reviewers get it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Repository policy evidence from the base tree.
    #[serde(default)]
    pub policy_evidence: Vec<PolicyDocument>,
    /// Candidates to decide (verifier only).
    #[serde(default)]
    pub candidates: Vec<CandidateForVerification>,
    /// Concerns the candidate stages checked and dismissed (verifier only; the
    /// clean-result audit never receives them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dismissed_concerns: Vec<DismissedForVerification>,
    /// True when the model can call the repository tools; false when the host gives
    /// patches and context inline.
    pub tools_available: bool,
}

/// What `render_prompt` returns: the role prompt. The host appends every policy section
/// (expected files, output contract, tool bounds) itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedPrompt {
    /// The system message (the role).
    pub system: String,
    /// The user message (the task for this change).
    pub user: String,
}

/// A candidate finding proposed by a candidate-producing stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedCandidate {
    /// Repository-relative path of the defect.
    pub path: String,
    /// First line (1-based) at `revision`.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// `head` (default) or `base` (for removed code).
    #[serde(default = "default_revision")]
    pub revision: String,
    /// `critical`, `high`, `medium`, `low`.
    pub severity: String,
    /// Review area as the plugin wrote it: one of [`Area`]'s spellings (e.g.
    /// `correctness`). The host parses it with [`Area`]'s `FromStr`; any other text is a
    /// contract violation.
    pub area: String,
    /// One-sentence claim of the defect.
    pub claim: String,
    /// Why the proposer believes it.
    #[serde(default)]
    pub evidence: String,
}

fn default_revision() -> String {
    "head".to_string()
}

/// A coverage receipt as a stage returns it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// The stage says it inspected every assigned file.
    pub complete: bool,
    /// The paths it inspected.
    #[serde(default)]
    pub reviewed_files: Vec<String>,
}

/// The parsed reply of a candidate-producing stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CandidateReply {
    /// Proposed candidates (possibly none).
    pub candidates: Vec<ProposedCandidate>,
    /// The coverage receipt.
    pub coverage: Coverage,
    /// A short summary for the report.
    #[serde(default)]
    pub summary: String,
    /// Concerns the stage checked and dismissed, each with the evidence that cleared it
    /// (at most [`MAX_DISMISSED_CONCERNS`](crate::contract::MAX_DISMISSED_CONCERNS)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dismissed_concerns: Vec<DismissedConcern>,
}

/// A concern a candidate stage checked and dismissed: where, what was suspected, and the
/// evidence that cleared it. Kept in the report as an observation and shown to the
/// verifier beside the candidates; never to the clean-result audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DismissedConcern {
    /// Repository-relative path the concern was about (at head).
    pub path: String,
    /// First line (1-based).
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// What was suspected, in one sentence.
    pub concern: String,
    /// The evidence that cleared it (what was read, as path:line).
    pub evidence: String,
}

/// A dismissed concern as the verifier receives it: with the label of the stage that
/// recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DismissedForVerification {
    /// Label of the stage instance that dismissed it (e.g. `generic-investigator #1`).
    pub dismissed_by: String,
    /// The concern.
    #[serde(flatten)]
    pub concern: DismissedConcern,
}

/// The verifier's finding for a verified candidate (may narrow the candidate's claim).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedFinding {
    /// Path (must equal the candidate's).
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Severity, possibly narrowed.
    pub severity: String,
    /// The supported claim.
    pub claim: String,
}

/// A citation as the verifier writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CitationPayload {
    /// `head` or `base`.
    pub revision: String,
    /// Repository-relative path.
    pub path: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
}

/// One verification decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionPayload {
    /// The host-assigned candidate id it decides.
    pub candidate_id: String,
    /// `verified`, `rejected` or `unresolved`.
    pub decision: String,
    /// The decisive evidence, or the missing context.
    #[serde(default)]
    pub evidence: String,
    /// Citations supporting the decision.
    #[serde(default)]
    pub citations: Vec<CitationPayload>,
    /// For `verified`: the finding as supported by the evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<VerifiedFinding>,
}

/// The parsed reply of the verifier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifierReply {
    /// One decision per candidate.
    pub decisions: Vec<DecisionPayload>,
}

/// What `parse` returns: the normalised reply of either kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ParsedReply {
    /// From a candidate-producing role.
    Candidates(CandidateReply),
    /// From the verifier.
    Decisions(VerifierReply),
}

/// Most candidates a standard candidate reply may carry.
pub const MAX_CANDIDATES: u64 = 6;

/// Most dismissed concerns one stage instance may record.
pub const MAX_DISMISSED_CONCERNS: u64 = 3;

/// What the host tells a plugin when asking for its contract.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractRequest {
    /// The instance's canonical expected files (candidate producers).
    #[serde(default)]
    pub expected_files: Vec<String>,
    /// Host-assigned ids of the candidates to decide (verifier).
    #[serde(default)]
    pub candidate_ids: Vec<String>,
    /// True when the contract is asked for a repair call (a plugin may shape the repair's
    /// contract differently; the standard contracts are the same for both).
    #[serde(default)]
    pub repair: bool,
    /// Most candidates the reply may carry (1 to [`MAX_CANDIDATES`]; `None` is the
    /// maximum). The host lowers it so the contract's token bound (the standard contracts' `token_bound` in vouch-specialist-kit) fits the stage's
    /// output-token budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_candidates: Option<u64>,
    /// Most dismissed concerns the reply may carry (0 to [`MAX_DISMISSED_CONCERNS`];
    /// `None` is the maximum), lowered with the candidate cap to fit the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_dismissed: Option<u64>,
    /// The receipt's bounds when they are the lane's rather than `expected_files`'
    /// own: every shard of a lane asks with its lane's bound, so the shards get one
    /// contract and their requests share a prefix a provider's prompt cache can serve.
    /// A contract bounds the receipt by the larger of this and its own list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_bound: Option<ReceiptBound>,
}

/// The bounds of a coverage receipt's `reviewedFiles`: how many paths it may hold and how
/// long the longest may be, in characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptBound {
    /// Most paths.
    pub files: u64,
    /// Characters of the longest path.
    pub longest_path_chars: u64,
}

impl ReceiptBound {
    /// The bound of `paths` themselves.
    pub fn of(paths: &[String]) -> ReceiptBound {
        ReceiptBound {
            files: paths.len() as u64,
            longest_path_chars: paths
                .iter()
                .map(|p| p.chars().count() as u64)
                .max()
                .unwrap_or(0),
        }
    }

    /// The larger of both bounds, field by field.
    pub fn max(self, other: ReceiptBound) -> ReceiptBound {
        ReceiptBound {
            files: self.files.max(other.files),
            longest_path_chars: self.longest_path_chars.max(other.longest_path_chars),
        }
    }
}

impl ContractRequest {
    /// The candidate cap this request asks for, clamped to 1..=[`MAX_CANDIDATES`].
    pub fn candidate_cap(&self) -> u64 {
        self.max_candidates
            .unwrap_or(MAX_CANDIDATES)
            .clamp(1, MAX_CANDIDATES)
    }

    /// The dismissed-concern cap this request asks for, at most
    /// [`MAX_DISMISSED_CONCERNS`] (0: the reply's list must be empty).
    pub fn dismissed_cap(&self) -> u64 {
        self.max_dismissed
            .unwrap_or(MAX_DISMISSED_CONCERNS)
            .min(MAX_DISMISSED_CONCERNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every role and area: `as_str` parses back to itself and is its serde spelling;
    /// a near miss (case, spaces, snake case) is an error naming the set and value.
    #[test]
    fn roles_and_areas_have_one_spelling_each() {
        let roles = [
            (Role::Investigator, "investigator"),
            (Role::OutcomeInvestigator, "outcome-investigator"),
            (Role::Conventions, "conventions"),
            (Role::CleanResultAudit, "clean-result-audit"),
            (Role::Reviewer, "reviewer"),
            (Role::Verifier, "verifier"),
        ];
        assert_eq!(roles.map(|(r, _)| r), Role::ALL);
        for (role, text) in roles {
            assert_eq!(role.as_str(), text);
            assert_eq!(role.to_string(), text);
            assert_eq!(text.parse::<Role>(), Ok(role));
            assert_eq!(serde_json::to_value(role).unwrap(), text);
            assert_eq!(serde_json::from_value::<Role>(text.into()).unwrap(), role);
        }
        let areas = [
            (Area::Correctness, "correctness"),
            (Area::Contracts, "contracts"),
            (Area::FailurePaths, "failure-paths"),
            (Area::Concurrency, "concurrency"),
            (Area::Security, "security"),
            (Area::Resources, "resources"),
            (Area::Operations, "operations"),
            (Area::Validation, "validation"),
            (Area::Conventions, "conventions"),
        ];
        assert_eq!(areas.map(|(a, _)| a), Area::ALL);
        for (area, text) in areas {
            assert_eq!(area.as_str(), text);
            assert_eq!(area.to_string(), text);
            assert_eq!(text.parse::<Area>(), Ok(area));
            assert_eq!(serde_json::to_value(area).unwrap(), text);
            assert_eq!(serde_json::from_value::<Area>(text.into()).unwrap(), area);
        }
        for bad in ["Verifier", " verifier", "outcome_investigator", ""] {
            assert_eq!(bad.parse::<Role>(), Err(UnknownValue::new("role", bad)));
        }
        for bad in ["Conventions", "failure_paths", "style", ""] {
            assert_eq!(bad.parse::<Area>(), Err(UnknownValue::new("area", bad)));
            assert_eq!(
                bad.parse::<Area>().unwrap_err().to_string(),
                format!("unknown area `{bad}`")
            );
        }
    }
}
