//! The rule table: one row per rule of docs/final-report.md, with the sentence it
//! implements (the docs' "Rule" column), the evidence it judges by, and the checks
//! that implement it. A rule's codes are the [`ViolationCode`]s of its number. A test
//! keeps the docs' rule table equal to this one.

use super::{
    Rule, claims, counts, handoff, inventory, ledger, mutations, reviewed, stale_state, staleness,
    structure,
};
use crate::violation::ViolationCode;

/// What a rule judges a report by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// The report alone.
    Report,
    /// The report, and the transcript when one is given (the docs' "What the
    /// transcript must show" column is not empty).
    ReportAndTranscript,
}

/// One rule.
pub(crate) struct RuleRow {
    pub number: u8,
    pub sentence: &'static str,
    pub evidence: Evidence,
    pub checks: &'static [Rule],
}

use Evidence::{Report, ReportAndTranscript};

/// Every rule, in rule-number order.
pub(crate) const RULE_TABLE: &[RuleRow] = &[
    RuleRow {
        number: 1,
        sentence: "Every required canonical field present; no unknown or confusable key.",
        evidence: Report,
        checks: &[structure::required_fields],
    },
    RuleRow {
        number: 2,
        sentence: "Legacy fields rejected, in JSON keys or Markdown labels.",
        evidence: Report,
        checks: &[structure::legacy_fields],
    },
    RuleRow {
        number: 3,
        sentence: "All nine mutation categories present and explicit.",
        evidence: Report,
        checks: &[structure::mutation_categories_explicit],
    },
    RuleRow {
        number: 4,
        sentence: "The reviewed head is the HEAD of the directory where official validation ran, when it ran.",
        evidence: ReportAndTranscript,
        checks: &[claims::reviewed_head_proven],
    },
    RuleRow {
        number: 5,
        sentence: "\"Merged\" needs a merge result and target-ancestry proof.",
        evidence: ReportAndTranscript,
        checks: &[claims::merge_proven],
    },
    RuleRow {
        number: 6,
        sentence: "\"Issue closed\" needs live linked-issue verification after the merge.",
        evidence: ReportAndTranscript,
        checks: &[claims::issue_closure_verified],
    },
    RuleRow {
        number: 7,
        sentence: "Pass claims carry counts; \"passed\" with nothing executed, failures, or unnamed skips is rejected wherever it appears.",
        evidence: ReportAndTranscript,
        checks: &[counts::full_suite_claim_proven],
    },
    RuleRow {
        number: 8,
        sentence: "A blocked handoff carries no approve or merge command anywhere.",
        evidence: Report,
        checks: &[handoff::blocked_handoff_without_replays],
    },
    RuleRow {
        number: 9,
        sentence: "Narrative and handoff agree about this change.",
        evidence: Report,
        checks: &[handoff::narrative_agrees_with_handoff],
    },
    RuleRow {
        number: 10,
        sentence: "The four review outcomes are distinct; a PENDING review is never APPROVED.",
        evidence: Report,
        checks: &[handoff::review_states_distinct],
    },
    RuleRow {
        number: 11,
        sentence: "Official validation is contaminated by any mutation of its directory after the candidate head was checked out.",
        evidence: ReportAndTranscript,
        checks: &[ledger::validation_not_after_local_merge],
    },
    RuleRow {
        number: 12,
        sentence: "A local merge simulation appears under Worktree/index mutations with clean-before and clean-after proof (abort/reset recorded).",
        evidence: Report,
        checks: &[ledger::merge_simulation_recorded],
    },
    RuleRow {
        number: 13,
        sentence: "\"Inventory complete\" needs a structured proof; a count compared with a page size is never proof. `INVENTORY_PAGINATION_UNPROVEN` is accepted.",
        evidence: ReportAndTranscript,
        checks: &[inventory::inventory_completeness_proven],
    },
    RuleRow {
        number: 14,
        sentence: "\"Failure is pre-existing / same as master\" is rejected when baseline and PR counts differ without an explanation.",
        evidence: Report,
        checks: &[counts::baseline_mismatch_explained],
    },
    RuleRow {
        number: 15,
        sentence: "Collisions: a blocked/stopped handoff that failed closed is accepted; a reusable ready state after an external mutation is rejected; an external queue mutation in the transcript needs the stale fields, and the stale fields agree with what the session read.",
        evidence: ReportAndTranscript,
        checks: &[
            staleness::collision_fails_closed,
            stale_state::stale_state_agrees,
        ],
    },
    RuleRow {
        number: 16,
        sentence: "Whole session: complete command ledger; isolation and strict-compliance claims true of the session; config reads justified; profile activations classified.",
        evidence: ReportAndTranscript,
        checks: &[ledger::whole_session_ledger],
    },
    RuleRow {
        number: 17,
        sentence: "\"Ready to merge\" carried across a recorded MCP failure or restart is rejected unless re-verified after it.",
        evidence: ReportAndTranscript,
        checks: &[staleness::ready_state_reverified],
    },
    RuleRow {
        number: 18,
        sentence: "Every mutation is in the mutation ledger under a fitting category.",
        evidence: ReportAndTranscript,
        checks: &[mutations::ledgers_agree],
    },
    RuleRow {
        number: 19,
        sentence: "A handoff that treats the change as reviewed needs a complete diff review with full coverage.",
        evidence: Report,
        checks: &[reviewed::handoff_on_full_review],
    },
];

/// A rule as the docs describe it: its number, sentence, codes and evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo {
    pub number: u8,
    pub sentence: &'static str,
    pub codes: Vec<ViolationCode>,
    pub evidence: Evidence,
}

/// The rule table, for documentation and its test.
pub fn rule_table() -> Vec<RuleInfo> {
    RULE_TABLE
        .iter()
        .map(|row| RuleInfo {
            number: row.number,
            sentence: row.sentence,
            codes: ViolationCode::ALL
                .iter()
                .copied()
                .filter(|c| c.rule() == row.number)
                .collect(),
            evidence: row.evidence,
        })
        .collect()
}
