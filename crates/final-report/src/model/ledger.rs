//! The mutation ledger (nine explicit categories) and the command ledger.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Every mutation the session made, in exactly nine categories. Each category is an
/// explicit list; an empty list means "none of this kind", and it must agree with the
/// command ledger and the transcript.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutationLedger {
    /// File edits by reviewer.
    pub file_edits_by_reviewer: Vec<MutationEntry>,
    /// Worktree/index mutations (worktree add/remove, checkout, local merge simulation).
    pub worktree_index_mutations: Vec<MutationEntry>,
    /// Git ref mutations (fetch, commit, branch, tag, update-ref, push).
    pub git_ref_mutations: Vec<MutationEntry>,
    /// MCP/Gitea (forge) mutations other than reviews and merges.
    pub mcp_forge_mutations: Vec<MutationEntry>,
    /// Review mutations (pending, submitted or dismissed reviews).
    pub review_mutations: Vec<MutationEntry>,
    /// Merge mutations (forge merges).
    pub merge_mutations: Vec<MutationEntry>,
    /// Cleanup mutations (worktree removal, aborts, resets, temp files).
    pub cleanup_mutations: Vec<MutationEntry>,
    /// External-state mutations (CI reruns, webhooks, anything outside repo and forge).
    pub external_state_mutations: Vec<MutationEntry>,
    /// Read-only diagnostics (listed so that "nothing else" is explicit).
    pub read_only_diagnostics: Vec<MutationEntry>,
}

impl MutationLedger {
    /// The entries of one category.
    pub fn category(&self, category: MutationCategory) -> &[MutationEntry] {
        match category {
            MutationCategory::FileEditsByReviewer => &self.file_edits_by_reviewer,
            MutationCategory::WorktreeIndexMutations => &self.worktree_index_mutations,
            MutationCategory::GitRefMutations => &self.git_ref_mutations,
            MutationCategory::McpForgeMutations => &self.mcp_forge_mutations,
            MutationCategory::ReviewMutations => &self.review_mutations,
            MutationCategory::MergeMutations => &self.merge_mutations,
            MutationCategory::CleanupMutations => &self.cleanup_mutations,
            MutationCategory::ExternalStateMutations => &self.external_state_mutations,
            MutationCategory::ReadOnlyDiagnostics => &self.read_only_diagnostics,
        }
    }
}

/// The nine mutation categories, in ledger order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MutationCategory {
    /// `fileEditsByReviewer`
    FileEditsByReviewer,
    /// `worktreeIndexMutations`
    WorktreeIndexMutations,
    /// `gitRefMutations`
    GitRefMutations,
    /// `mcpForgeMutations`
    McpForgeMutations,
    /// `reviewMutations`
    ReviewMutations,
    /// `mergeMutations`
    MergeMutations,
    /// `cleanupMutations`
    CleanupMutations,
    /// `externalStateMutations`
    ExternalStateMutations,
    /// `readOnlyDiagnostics`
    ReadOnlyDiagnostics,
}

impl MutationCategory {
    /// All nine categories, in ledger order.
    pub const ALL: [MutationCategory; 9] = [
        Self::FileEditsByReviewer,
        Self::WorktreeIndexMutations,
        Self::GitRefMutations,
        Self::McpForgeMutations,
        Self::ReviewMutations,
        Self::MergeMutations,
        Self::CleanupMutations,
        Self::ExternalStateMutations,
        Self::ReadOnlyDiagnostics,
    ];

    /// The camelCase JSON key under `mutations`.
    pub fn key(self) -> &'static str {
        match self {
            Self::FileEditsByReviewer => "fileEditsByReviewer",
            Self::WorktreeIndexMutations => "worktreeIndexMutations",
            Self::GitRefMutations => "gitRefMutations",
            Self::McpForgeMutations => "mcpForgeMutations",
            Self::ReviewMutations => "reviewMutations",
            Self::MergeMutations => "mergeMutations",
            Self::CleanupMutations => "cleanupMutations",
            Self::ExternalStateMutations => "externalStateMutations",
            Self::ReadOnlyDiagnostics => "readOnlyDiagnostics",
        }
    }

    /// The human label used in the issue and in Markdown reports.
    pub fn label(self) -> &'static str {
        match self {
            Self::FileEditsByReviewer => "File edits by reviewer",
            Self::WorktreeIndexMutations => "Worktree/index mutations",
            Self::GitRefMutations => "Git ref mutations",
            Self::McpForgeMutations => "MCP/Gitea mutations",
            Self::ReviewMutations => "Review mutations",
            Self::MergeMutations => "Merge mutations",
            Self::CleanupMutations => "Cleanup mutations",
            Self::ExternalStateMutations => "External-state mutations",
            Self::ReadOnlyDiagnostics => "Read-only diagnostics",
        }
    }
}

/// One recorded mutation (or read-only diagnostic).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutationEntry {
    /// What changed, in words.
    #[schemars(length(min = 1))]
    pub action: String,
    /// The shell command that made the change, as in the command ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The MCP tool that made the change, as named in the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Where it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<CommandLocation>,
    /// Proof the tree was clean before (required for a local merge simulation), e.g.
    /// "git status --porcelain: empty".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_before: Option<String>,
    /// Proof the tree was clean after, naming the abort/reset (required for a local merge
    /// simulation), e.g. "git merge --abort; git status --porcelain: empty".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_after: Option<String>,
}

impl MutationEntry {
    /// An entry with only an action and a command.
    pub fn command(action: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            action: action.into(),
            command: Some(command.into()),
            tool: None,
            location: None,
            clean_before: None,
            clean_after: None,
        }
    }
}

/// One command of the session, in session order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandEntry {
    /// The command line, as run (compared after whitespace normalisation).
    #[schemars(length(min = 1))]
    pub command: String,
    /// Where it ran.
    pub location: CommandLocation,
    /// Why it ran.
    pub phase: CommandPhase,
    /// Why the command was needed (required for local config/profile inspection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// The capability or policy that allowed it (required for runtime/session mutations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability_proof: Option<String>,
    /// Transcript `seq` of the command, when a transcript exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// Where a command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommandLocation {
    /// The main checkout of the repository.
    MainCheckout,
    /// An isolated review worktree.
    ReviewWorktree,
    /// Elsewhere (home directory, temp directory, no repository).
    Other,
}

/// Why a command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommandPhase {
    /// Diagnostics before the review started.
    PreReviewDiagnostics,
    /// The official validation on the unmodified PR head.
    OfficialPrHeadValidation,
    /// A diagnostic local merge simulation (never official validation).
    MergeSimulation,
    /// The review itself.
    Review,
    /// The merge.
    Merge,
    /// Cleanup.
    Cleanup,
    /// Reading local configuration or forge-client profiles/auth (must be justified).
    LocalConfigInspection,
    /// Changing the runtime/session (e.g. activating a forge profile); needs capability
    /// or policy proof.
    RuntimeSessionMutation,
    /// Not classified. Any unclassified pre-review command defeats a strict-compliance
    /// claim.
    Unclassified,
}
