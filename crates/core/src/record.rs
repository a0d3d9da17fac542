//! What a review run records per stage and per candidate, for the report.

use serde::{Deserialize, Serialize};

use crate::boundary::Role;
use crate::candidate::Candidate;
use crate::coverage::CoverageComparison;
use crate::decision::Verdict;
use crate::source::SourceLedger;

/// Token usage of one stage instance (summed over its requests).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// HTTP requests sent (retries of one request count once each).
    pub requests: u64,
    /// Prompt tokens as the endpoint reported them.
    pub prompt_tokens: u64,
    /// Completion tokens as the endpoint reported them.
    pub completion_tokens: u64,
    /// Of the prompt tokens, those the endpoint served from its prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`; 0, and left out of the report, when
    /// it does not say).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_prompt_tokens: u64,
    /// Replies whose endpoint stated no token counts (0, and left out of the report, when
    /// every reply stated them). Their tokens are not in `promptTokens` or
    /// `completionTokens` but in `estimatedTokens`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreported_replies: u64,
    /// vouch's estimate of those replies' prompt and completion tokens (three bytes per
    /// token of each request body and reply, which errs large); token budgets count it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimated_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TokenUsage {
    /// Prompt and completion tokens as reported, plus vouch's estimate for the replies
    /// that reported none: what a token budget counts.
    pub fn counted_tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens + self.estimated_tokens
    }

    /// Adds another usage.
    pub fn add(&mut self, other: TokenUsage) {
        self.requests += other.requests;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
        self.unreported_replies += other.unreported_replies;
        self.estimated_tokens += other.estimated_tokens;
    }
}

/// How a stage instance ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StageStatus {
    /// Its result was accepted (receipt matched, or the stage has no receipt).
    Accepted,
    /// It completed with a stated limitation (source gap, budget, partial coverage).
    Limited,
    /// It failed: the review is incomplete.
    Failed,
    /// It was cancelled.
    Cancelled,
    /// It did not run (e.g. the audit when candidates exist).
    Skipped,
}

/// Which budget of a stage's agent loop ended its tool phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum BudgetKind {
    /// Its tool turns were used up.
    #[serde(rename = "turns")]
    Turns,
    /// Its tool calls were used up.
    #[serde(rename = "tool-calls")]
    ToolCalls,
    /// Its total tokens were used up.
    #[serde(rename = "tokens")]
    TotalTokens,
    /// Its requests reached their size bound (`max_request_tokens`).
    #[serde(rename = "request-size")]
    RequestSize,
}

impl BudgetKind {
    /// The report spelling (`turns`, `tool-calls`, `tokens`, `request-size`).
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetKind::Turns => "turns",
            BudgetKind::ToolCalls => "tool-calls",
            BudgetKind::TotalTokens => "tokens",
            BudgetKind::RequestSize => "request-size",
        }
    }
}

/// One stage instance's record: per-instance coverage and how it got there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageRecord {
    /// Stable instance label (e.g. `bug-review #2`).
    pub label: String,
    /// Specialist id.
    pub specialist: String,
    /// Specialist version.
    pub version: String,
    /// The specialist's role.
    #[schemars(with = "crate::boundary::RoleSchema")]
    pub role: Role,
    /// How it ended.
    pub status: StageStatus,
    /// Number of files assigned to it.
    pub assigned_files: usize,
    /// For a candidate stage (a lane's execution, or the clean-result audit's): the lane
    /// it belongs to (its unsharded label; a lane's shards share it). `None` for the
    /// verifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<String>,
    /// For a candidate stage: the files assigned to it (its canonical list), from which
    /// the files reviewed are derived ([`crate::files_reviewed_from_records`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assigned_paths: Vec<String>,
    /// The final coverage comparison (`None` for the verifier, or when no receipt parsed).
    pub coverage: Option<CoverageComparison>,
    /// True when a coverage retry ran.
    pub retried: bool,
    /// The comparison that triggered the retry.
    pub first_coverage: Option<CoverageComparison>,
    /// True when an isolated repair call ran.
    pub repaired: bool,
    /// True when a repaired `complete: true` was not backed by the prior reply's own
    /// exact JSON receipt (`repaired_full_coverage`) and was recorded as `complete: false`.
    pub receipt_downgraded: bool,
    /// What was wrong with each reply that went to repair or to a coverage retry (and
    /// with a repair's reply that failed): a JSON pointer and the contract check's,
    /// parser's or comparison's message, bounded; never source text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reply_issues: Vec<crate::shape::ReplyIssue>,
    /// Candidates it proposed (verifier: decisions it returned).
    pub candidates: usize,
    /// The budget it hit, if any (`turns`, `tool-calls`, `tokens`).
    pub budget_hit: Option<BudgetKind>,
    /// True when it was forced to synthesise a final answer.
    pub forced_synthesis: bool,
    /// What the host prefetched from the repository graph before its first turn (null
    /// when it was given none: nothing to look up for its files, or a zero budget).
    #[serde(default)]
    pub prefetch: Option<crate::prefetch::PrefetchRecord>,
    /// Source windows and line spans it read or was given, as recorded (before the
    /// ledger was compacted).
    pub source_windows: usize,
    /// The source ledger of the execution in compact form: per path and revision, the
    /// lines it read or was given as merged ranges, ordered by path, base before head
    /// (for the verifier, the lines its citations were checked against). Empty when it
    /// did not run.
    #[serde(default)]
    pub ledger: Vec<crate::source::FileLines>,
    /// Parts of long lines the execution was shown cut (bytes of one line), recorded
    /// instead of windows: a long line shown in part never counts as read whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_spans: Vec<crate::source::LineSpan>,
    /// Files whose metadata-only patch the execution was shown (a binary file's sizes,
    /// blob ids and type; a mode change; a pure rename or copy), in the order shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metadata_shown: Vec<String>,
    /// The model its requests named (chosen by the model rule, see `docs/manifests.md`);
    /// `None` when it sent no request (skipped).
    #[serde(default)]
    pub model: Option<String>,
    /// The models the endpoint said answered its replies (each reply's `model` field, in
    /// the order first seen; often a versioned name of `model`, or the deployment's model
    /// on Azure; at most 8, each at most 128 characters with control characters as
    /// spaces). Empty when it received no reply or the endpoint names none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered_by: Vec<String>,
    /// Token usage.
    pub usage: TokenUsage,
    /// Its own short summary, if it gave one.
    pub summary: String,
    /// What went wrong, in words, when it failed or was limited.
    pub problem: Option<String>,
}

impl StageRecord {
    /// A fresh record of a stage instance labelled `label` of the specialist `specialist`
    /// (`version`, `role`) with `assigned_files` files: accepted until something says
    /// otherwise, nothing recorded yet.
    pub fn new(
        label: &str,
        (specialist, version, role): (&str, &str, Role),
        assigned_files: usize,
    ) -> StageRecord {
        StageRecord {
            label: label.to_string(),
            specialist: specialist.to_string(),
            version: version.to_string(),
            role,
            status: StageStatus::Accepted,
            assigned_files,
            lane: None,
            assigned_paths: Vec::new(),
            coverage: None,
            retried: false,
            first_coverage: None,
            repaired: false,
            receipt_downgraded: false,
            reply_issues: Vec::new(),
            candidates: 0,
            budget_hit: None,
            forced_synthesis: false,
            prefetch: None,
            source_windows: 0,
            ledger: Vec::new(),
            line_spans: Vec::new(),
            metadata_shown: Vec::new(),
            model: None,
            answered_by: Vec::new(),
            usage: TokenUsage::default(),
            summary: String::new(),
            problem: None,
        }
    }

    /// Keeps an execution's ledger on its record: the compact form, its line spans, and
    /// how many windows and spans were recorded.
    pub fn set_ledger(&mut self, ledger: SourceLedger) {
        self.source_windows = ledger.recorded();
        self.ledger = ledger.compact();
        self.line_spans = ledger.spans;
        self.metadata_shown = ledger.metadata;
    }

    /// The execution's ledger rebuilt from this record: it accepts exactly the citations
    /// the recorded ledger accepted ([`SourceLedger::compact`]).
    pub fn source_ledger(&self) -> SourceLedger {
        SourceLedger::from_compact(&self.ledger, &self.line_spans, &self.metadata_shown)
    }

    /// Whether its coverage receipt was accepted: the stage ended accepted or limited
    /// with a complete, exact receipt.
    pub fn receipt_accepted(&self) -> bool {
        matches!(self.status, StageStatus::Accepted | StageStatus::Limited)
            && self.coverage.as_ref().is_some_and(|c| c.complete)
    }
}

/// One candidate and what verification decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CandidateRecord {
    /// The candidate.
    pub candidate: Candidate,
    /// The verdict (`None` when no valid decision exists).
    pub verdict: Option<Verdict>,
    /// The decisive evidence or missing context.
    pub evidence: String,
    /// Verification passes it took (1, or 2 with a focused pass).
    pub verification_passes: u8,
    /// Why its decision was invalid, if it was.
    pub problem: Option<String>,
}

/// Rule (identical candidates): candidates that state the same defect — the same path,
/// side, lines, area and claim (its letters and digits, case aside: lanes copying one
/// claim differ in a capital or a full stop), as several lanes often propose it — and
/// were decided both `verified` and `rejected` are contradicted: the verifier answered
/// one question both ways, so neither verdict may stand. Returns their ids, in record
/// order.
pub fn contradicted_candidates(records: &[CandidateRecord]) -> Vec<String> {
    let words = |claim: &str| -> String {
        claim
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let same = |a: &Candidate, b: &Candidate| {
        (&a.path, a.revision, a.start_line, a.end_line, a.area)
            == (&b.path, b.revision, b.start_line, b.end_line, b.area)
            && words(&a.claim) == words(&b.claim)
    };
    let verdicts_of = |c: &Candidate| -> Vec<Verdict> {
        records
            .iter()
            .filter(|r| same(&r.candidate, c))
            .filter_map(|r| r.verdict)
            .collect()
    };
    records
        .iter()
        .filter(|r| {
            let verdicts = verdicts_of(&r.candidate);
            verdicts.contains(&Verdict::Verified) && verdicts.contains(&Verdict::Rejected)
        })
        .map(|r| r.candidate.id.clone())
        .collect()
}

/// A changed file no stage reviewed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExcludedFile {
    /// Current path.
    pub path: String,
    /// Why (e.g. `matches exclusion "**/Cargo.lock"`, `binary file`).
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{LineSpan, Revision, SourceWindow};

    fn w(path: &str, start_line: u32, end_line: u32) -> SourceWindow {
        SourceWindow {
            revision: Revision::Head,
            path: path.into(),
            start_line,
            end_line,
        }
    }

    /// A record keeps the compact ledger and the spans, counts every window and span as
    /// recorded, and reads back a ledger accepting the same citations.
    fn record(
        id: &str,
        lines: (u32, u32),
        claim: &str,
        verdict: Option<Verdict>,
    ) -> CandidateRecord {
        CandidateRecord {
            candidate: Candidate {
                id: id.into(),
                proposed_by: id.split('/').next().unwrap_or(id).into(),
                path: "a.rs".into(),
                revision: Revision::Head,
                start_line: lines.0,
                end_line: lines.1,
                severity: crate::candidate::Severity::High,
                area: crate::boundary::Area::Correctness,
                claim: claim.into(),
                evidence: String::new(),
            },
            verdict,
            evidence: String::new(),
            verification_passes: 1,
            problem: None,
        }
    }

    #[test]
    fn identical_candidates_decided_both_ways_are_contradicted() {
        use Verdict::*;
        type Case = (Vec<CandidateRecord>, Vec<&'static str>);
        let cases: Vec<Case> = vec![
            (
                vec![
                    record("x #1/0", (3, 4), "wraps", Some(Verified)),
                    record("y #1/0", (3, 4), "wraps", Some(Rejected)),
                    record("z #1/0", (3, 4), "wraps", Some(Rejected)),
                ],
                vec!["x #1/0", "y #1/0", "z #1/0"],
            ),
            // The same claim up to case and punctuation is the same claim.
            (
                vec![
                    record(
                        "x #1/0",
                        (3, 4),
                        "f25 subtracts instead of adding",
                        Some(Verified),
                    ),
                    record(
                        "y #1/0",
                        (3, 4),
                        "F25 subtracts instead of adding.",
                        Some(Rejected),
                    ),
                ],
                vec!["x #1/0", "y #1/0"],
            ),
            // Agreeing verdicts, another claim, other lines, or an unresolved one: none.
            (
                vec![
                    record("x #1/0", (3, 4), "wraps", Some(Verified)),
                    record("y #1/0", (3, 4), "wraps", Some(Verified)),
                ],
                vec![],
            ),
            (
                vec![
                    record("x #1/0", (3, 4), "wraps", Some(Verified)),
                    record("y #1/0", (3, 4), "truncates", Some(Rejected)),
                    record("z #1/0", (3, 5), "wraps", Some(Rejected)),
                    record("w #1/0", (3, 4), "wraps", Some(Unresolved)),
                    record("v #1/0", (3, 4), "wraps", None),
                ],
                vec![],
            ),
        ];
        for (records, expected) in cases {
            assert_eq!(contradicted_candidates(&records), expected);
        }
    }

    #[test]
    fn a_record_keeps_the_compact_ledger_and_counts_what_was_recorded() {
        let mut ledger = SourceLedger::default();
        for window in [w("a.rs", 6, 12), w("a.rs", 13, 20), w("a.rs", 30, 31)] {
            ledger.record(window);
        }
        ledger.record_span(LineSpan {
            revision: Revision::Head,
            path: "min.js".into(),
            line: 1,
            start_byte: 0,
            end_byte: 100,
            reaches_end: false,
        });
        let mut record = StageRecord::new(
            "generic-investigator #1",
            ("generic-investigator", "1.0.0", Role::Investigator),
            1,
        );
        record.set_ledger(ledger.clone());
        assert_eq!(record.source_windows, 4, "three windows and one span");
        assert_eq!(record.ledger.len(), 1);
        assert_eq!(record.ledger[0].lines, [(6, 20), (30, 31)]);
        assert_eq!(record.line_spans, ledger.spans);
        let rebuilt = record.source_ledger();
        for (citation, ok) in [
            (w("a.rs", 6, 20), true),
            (w("a.rs", 10, 30), false),
            (w("a.rs", 30, 31), true),
            (w("b.rs", 6, 6), false),
        ] {
            assert_eq!(ledger.check(&citation).is_ok(), ok, "{citation:?}");
            assert_eq!(rebuilt.check(&citation).is_ok(), ok, "{citation:?}");
        }
        assert!(rebuilt.shows_bytes(Revision::Head, "min.js", 1, (10, 20)));
    }
}
