//! Violations: a stable code, the issue rule it enforces, a JSON pointer and a message
//! naming the missing proof.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One reason a report is invalid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// Stable code; never renamed within a schema version.
    pub code: ViolationCode,
    /// The rule number (1-18) in docs/final-report.md.
    pub rule: u8,
    /// RFC 6901 JSON pointer into the report (`""` is the whole report).
    pub pointer: String,
    /// What is wrong and which proof is missing.
    pub message: String,
}

impl Violation {
    /// A violation of `code` at `pointer`.
    pub fn new(
        code: ViolationCode,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            code,
            rule: code.rule(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, rule $rule:literal; )*) => {
        /// Stable violation codes. The JSON value is the SCREAMING_SNAKE name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        pub enum ViolationCode {
            $( $(#[$doc])* #[serde(rename = $text)] $variant, )*
        }

        impl ViolationCode {
            /// Every code, in rule order.
            pub const ALL: &'static [ViolationCode] = &[$(Self::$variant),*];

            /// The JSON spelling of the code.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text,)* }
            }

            /// The rule number the code enforces.
            pub fn rule(self) -> u8 {
                match self { $(Self::$variant => $rule,)* }
            }
        }
    };
}

codes! {
    /// Rule 1: a required canonical field is missing.
    MissingField = "MISSING_FIELD", rule 1;
    /// Rule 1: a field has the wrong type or value.
    InvalidField = "INVALID_FIELD", rule 1;
    /// Rule 1: a key the schema does not define (fail closed on shape).
    UnknownField = "UNKNOWN_FIELD", rule 1;
    /// Rule 1: a key or label with invisible, non-ASCII-space, look-alike or
    /// compatibility characters.
    ConfusableCharacter = "CONFUSABLE_CHARACTER", rule 1;
    /// Rule 2: a legacy field or Markdown label is used.
    LegacyField = "LEGACY_FIELD", rule 2;
    /// Rule 3: the mutation ledger lacks one of the nine explicit category lists.
    MutationLedgerNotExplicit = "MUTATION_LEDGER_NOT_EXPLICIT", rule 3;
    /// Rule 4: a reviewed head SHA without passed validation/diff review on that head.
    ReviewedHeadUnproven = "REVIEWED_HEAD_UNPROVEN", rule 4;
    /// Rule 5: "merged" without a merge result and target-ancestry proof.
    MergeUnproven = "MERGE_UNPROVEN", rule 5;
    /// Rule 6: "issue closed" without live verification after the merge.
    IssueClosureUnverified = "ISSUE_CLOSURE_UNVERIFIED", rule 6;
    /// Rule 7: "full suite passed" with unexplained skips or ignores.
    FullSuiteClaimUnproven = "FULL_SUITE_CLAIM_UNPROVEN", rule 7;
    /// Rule 8: a blocked handoff replays approve or merge commands.
    BlockedHandoffReplaysMutation = "BLOCKED_HANDOFF_REPLAYS_MUTATION", rule 8;
    /// Rule 9: the narrative and the handoff disagree.
    NarrativeHandoffMismatch = "NARRATIVE_HANDOFF_MISMATCH", rule 9;
    /// Rule 10: review submission states are conflated (e.g. PENDING as APPROVED).
    ReviewStateConflated = "REVIEW_STATE_CONFLATED", rule 10;
    /// Rule 11: official validation passed after a local merge.
    ValidationAfterLocalMerge = "VALIDATION_AFTER_LOCAL_MERGE", rule 11;
    /// Rule 12: a local merge simulation without worktree/index entry and clean proof.
    MergeSimulationUnrecorded = "MERGE_SIMULATION_UNRECORDED", rule 12;
    /// Rule 13: "inventory complete" without pagination proof.
    InventoryCompletenessUnproven = "INVENTORY_COMPLETENESS_UNPROVEN", rule 13;
    /// Rule 14: "pre-existing failure" with differing, unexplained baseline counts.
    BaselineMismatchUnexplained = "BASELINE_MISMATCH_UNEXPLAINED", rule 14;
    /// Rule 15: a reusable ready state after an external mutation.
    ReusableStateAfterExternalMutation = "REUSABLE_STATE_AFTER_EXTERNAL_MUTATION", rule 15;
    /// Rule 15: an external mutation without the staleness/concurrency fields.
    StalenessNotRecorded = "STALENESS_NOT_RECORDED", rule 15;
    /// Rule 15: a stale-state field the session's recorded reads contradict.
    StaleStateContradicted = "STALE_STATE_CONTRADICTED", rule 15;
    /// Rule 16: the command ledger omits session commands.
    CommandLedgerIncomplete = "COMMAND_LEDGER_INCOMPLETE", rule 16;
    /// Rule 16: a command-ledger entry that matches no transcript line.
    CommandNotInTranscript = "COMMAND_NOT_IN_TRANSCRIPT", rule 16;
    /// Rule 16: "isolated worktree" claim while tests ran in the main checkout.
    MainCheckoutValidation = "MAIN_CHECKOUT_VALIDATION", rule 16;
    /// Rule 16: local config/profile inspection not classified and justified.
    ConfigInspectionUnjustified = "CONFIG_INSPECTION_UNJUSTIFIED", rule 16;
    /// Rule 16: profile activation not a runtime/session mutation with proof.
    ProfileActivationUnclassified = "PROFILE_ACTIVATION_UNCLASSIFIED", rule 16;
    /// Rule 16: "strict compliance" with unclassified pre-review commands.
    StrictComplianceUnproven = "STRICT_COMPLIANCE_UNPROVEN", rule 16;
    /// Rule 17: ready state carried across an MCP failure or restart.
    StaleReadyState = "STALE_READY_STATE", rule 17;
    /// Rule 18: the mutation ledger disagrees with the commands or transcript.
    MutationLedgerDisagrees = "MUTATION_LEDGER_DISAGREES", rule 18;
    /// Rule 19: a ready, approved or merged handoff, a passed diff review or a reviewed
    /// head without a completed diff review with full coverage.
    ReviewedWithoutFullReview = "REVIEWED_WITHOUT_FULL_REVIEW", rule 19;
}

impl std::fmt::Display for ViolationCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Escape one JSON-pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`).
pub(crate) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A narrative sentence the validator could not relate to the handoff: not a
/// violation, but shown so that what the check did not read is visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// Always `/narrative` (or the handoff field the sentence is in).
    pub pointer: String,
    /// 1-based line of the narrative (or field).
    pub line: usize,
    /// The sentence.
    pub sentence: String,
    /// Why it was not checked.
    pub message: String,
}
