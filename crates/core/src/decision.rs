//! Verification decisions and the accounting rule that every candidate gets exactly one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::candidate::{Candidate, Severity};
use crate::source::{Citation, CitationError, SourceLedger, SourceWindow};

/// A verifier's verdict on one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The evidence proves the defect.
    Verified,
    /// The evidence disproves it, or it falls outside the reporting boundary.
    Rejected,
    /// The context needed to decide was missing.
    Unresolved,
}

impl Verdict {
    /// The contract spelling (`verified`, `rejected`, `unresolved`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Rejected => "rejected",
            Verdict::Unresolved => "unresolved",
        }
    }
}

impl std::str::FromStr for Verdict {
    type Err = vouch_abi::UnknownValue;

    /// Parses the contract spelling (`verified`, `rejected`, `unresolved`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Verdict::Verified, Verdict::Rejected, Verdict::Unresolved]
            .into_iter()
            .find(|v| v.as_str() == text)
            .ok_or_else(|| vouch_abi::UnknownValue::new("verdict", text))
    }
}

/// The finding a `verified` decision states (it may narrow the candidate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindingDraft {
    /// Path; must be the candidate's.
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Severity; may be lowered, never raised.
    pub severity: Severity,
    /// The supported claim.
    pub claim: String,
}

/// One decision as the verifier returned it (after plugin parsing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// The host-assigned candidate id.
    pub candidate_id: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Decisive evidence, or what context was missing.
    pub evidence: String,
    /// Citations the decision rests on.
    pub citations: Vec<Citation>,
    /// The finding, for `verified`.
    pub finding: Option<FindingDraft>,
}

/// Why a verification result cannot be trusted. Any of these makes the review `incomplete`.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case", tag = "problem")]
pub enum DecisionProblem {
    /// A decision names an id the host never assigned.
    #[error("decision for unknown candidate id `{candidate_id}`")]
    UnknownCandidate {
        /// The id as the verifier wrote it.
        candidate_id: String,
    },
    /// Two decisions for one candidate.
    #[error("more than one decision for candidate `{candidate_id}`")]
    DuplicateDecision {
        /// The candidate.
        candidate_id: String,
    },
    /// No decision at all for a candidate.
    #[error("no decision for candidate `{candidate_id}`")]
    MissingDecision {
        /// The candidate.
        candidate_id: String,
    },
    /// A citation is malformed or lies outside what the verifier read.
    #[error("candidate `{candidate_id}`: {error}")]
    Citation {
        /// The candidate.
        candidate_id: String,
        /// What is wrong with the citation.
        error: CitationError,
    },
    /// A decision that does not fit the verifier contract (an unknown verdict, revision
    /// or severity) — possible only from a plugin whose parser let it through.
    #[error("candidate `{candidate_id}`: malformed decision ({reason})")]
    Malformed {
        /// The candidate.
        candidate_id: String,
        /// What does not fit.
        reason: String,
    },
    /// A verified decision with no citation at all.
    #[error("candidate `{candidate_id}` is verified without any citation")]
    Uncited {
        /// The candidate.
        candidate_id: String,
    },
    /// The verified finding is not a narrowing of its candidate (a replacement defect).
    #[error(
        "candidate `{candidate_id}`: verified finding is unrelated to the candidate ({reason})"
    )]
    UnrelatedFinding {
        /// The candidate.
        candidate_id: String,
        /// What differs.
        reason: String,
    },
}

/// How far (in lines) a narrowed finding's range may sit from its candidate's range and
/// still count as the same defect.
pub const NARROWING_SLACK_LINES: u32 = 10;

/// What the accounting concluded for one candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum CandidateState {
    /// Verified with a valid finding and citations.
    Verified {
        /// The accepted decision.
        decision: Decision,
    },
    /// Verified but the finding was omitted: re-check alone (focused pass).
    NeedsFocusedPass {
        /// The decision that omitted its finding.
        decision: Decision,
    },
    /// Rejected.
    Rejected {
        /// The decision.
        decision: Decision,
    },
    /// Unresolved.
    Unresolved {
        /// The decision.
        decision: Decision,
    },
    /// The decision (or its absence) is a validation failure.
    Invalid {
        /// Why.
        problem: DecisionProblem,
    },
}

/// The accounting of one verification pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionAccount {
    /// One state per candidate id, for every candidate given.
    pub states: BTreeMap<String, CandidateState>,
    /// Problems not tied to a given candidate (unknown ids).
    pub stray: Vec<DecisionProblem>,
}

impl DecisionAccount {
    /// Every problem, stray and per candidate.
    pub fn problems(&self) -> Vec<DecisionProblem> {
        let mut out = self.stray.clone();
        for state in self.states.values() {
            if let CandidateState::Invalid { problem } = state {
                out.push(problem.clone());
            }
        }
        out
    }
}

/// What an uncited rejection's evidence is prefixed with when it is recorded as unresolved.
pub const UNCITED_REJECTION: &str = "The verifier rejected this candidate without citing any source, so nothing disproves it; recorded as unresolved.";

/// Rule (a rejection rests on source): a rejection must cite the source that disproves
/// the candidate; one that cites nothing disproves nothing, so it is recorded as
/// unresolved (coverage `limited`, never clean), its evidence kept after
/// [`UNCITED_REJECTION`].
fn uncited_rejection(decision: Decision) -> Decision {
    let evidence = match decision.evidence.trim() {
        "" => UNCITED_REJECTION.to_string(),
        said => format!("{UNCITED_REJECTION} Its evidence: {said}"),
    };
    Decision {
        verdict: Verdict::Unresolved,
        evidence,
        ..decision
    }
}

/// Rule (narrowing): a finding at lines `start..=end` is its candidate's defect only
/// when it lies within [`NARROWING_SLACK_LINES`] of the candidate's lines `from..=to` on
/// both sides: a finding that starts near the candidate but runs far past it (or moves
/// away) names other lines.
pub fn within_narrowing_slack((start, end): (u32, u32), (from, to): (u32, u32)) -> bool {
    start.saturating_add(NARROWING_SLACK_LINES) >= from
        && end <= to.saturating_add(NARROWING_SLACK_LINES)
}

fn check_finding(
    candidate: &Candidate,
    finding: &FindingDraft,
    ledger: &SourceLedger,
) -> Result<(), String> {
    if finding.claim.trim().is_empty() {
        return Err("its claim is empty".into());
    }
    if finding.path != candidate.path {
        return Err(format!(
            "path `{}` is not the candidate's `{}`",
            finding.path, candidate.path
        ));
    }
    if finding.start_line == 0 || finding.end_line < finding.start_line {
        return Err(format!(
            "invalid line range {}-{}",
            finding.start_line, finding.end_line
        ));
    }
    if !within_narrowing_slack(
        (finding.start_line, finding.end_line),
        (candidate.start_line, candidate.end_line),
    ) {
        return Err(format!(
            "lines {}-{} are far from the candidate's {}-{}",
            finding.start_line, finding.end_line, candidate.start_line, candidate.end_line
        ));
    }
    if finding.severity < candidate.severity {
        return Err(format!(
            "severity raised from {} to {}",
            candidate.severity.as_str(),
            finding.severity.as_str()
        ));
    }
    // What a finding points at must be source the verifier was shown or read, like what
    // it cites (never lines past the end of the file, never lines no one read).
    let lines = SourceWindow {
        revision: candidate.revision,
        path: finding.path.clone(),
        start_line: finding.start_line,
        end_line: finding.end_line,
    };
    if let Err(e) = ledger.check(&lines) {
        return Err(format!(
            "lines {}-{} were not all read by the verifier: {e}",
            finding.start_line, finding.end_line
        ));
    }
    Ok(())
}

/// Rule (verification): one pass over all candidates; for each candidate exactly one
/// decision. A decision for an unknown id, a second decision, a missing decision, a
/// malformed or unread citation (checked against the verifier's own ledger), a verified
/// decision without citations, or a verified finding unrelated to its candidate (other
/// path, a range more than [`NARROWING_SLACK_LINES`] away, or a raised severity), with an
/// empty claim, or on lines the verifier did not read (past a file's end, say) is a
/// validation failure. A verified decision that omits its finding needs a focused pass.
pub fn account_decisions(
    candidates: &[Candidate],
    decisions: &[Decision],
    ledger: &SourceLedger,
) -> DecisionAccount {
    let by_id: BTreeMap<&str, &Candidate> = candidates.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut grouped: BTreeMap<&str, Vec<&Decision>> = BTreeMap::new();
    let mut account = DecisionAccount::default();
    for d in decisions {
        if by_id.contains_key(d.candidate_id.as_str()) {
            grouped.entry(d.candidate_id.as_str()).or_default().push(d);
        } else {
            account.stray.push(DecisionProblem::UnknownCandidate {
                candidate_id: d.candidate_id.clone(),
            });
        }
    }
    for c in candidates {
        let id = c.id.clone();
        let state = match grouped.get(c.id.as_str()).map(Vec::as_slice) {
            None | Some([]) => CandidateState::Invalid {
                problem: DecisionProblem::MissingDecision {
                    candidate_id: id.clone(),
                },
            },
            Some([_, _, ..]) => CandidateState::Invalid {
                problem: DecisionProblem::DuplicateDecision {
                    candidate_id: id.clone(),
                },
            },
            Some([d]) => judge(c, d, ledger),
        };
        account.states.insert(id, state);
    }
    account
}

fn judge(candidate: &Candidate, decision: &Decision, ledger: &SourceLedger) -> CandidateState {
    let id = || candidate.id.clone();
    for citation in &decision.citations {
        if let Err(error) = ledger.check(citation) {
            return CandidateState::Invalid {
                problem: DecisionProblem::Citation {
                    candidate_id: id(),
                    error,
                },
            };
        }
    }
    let decision = decision.clone();
    match decision.verdict {
        Verdict::Rejected if decision.citations.is_empty() => CandidateState::Unresolved {
            decision: uncited_rejection(decision),
        },
        Verdict::Rejected => CandidateState::Rejected { decision },
        Verdict::Unresolved => CandidateState::Unresolved { decision },
        Verdict::Verified => {
            if decision.citations.is_empty() {
                return CandidateState::Invalid {
                    problem: DecisionProblem::Uncited { candidate_id: id() },
                };
            }
            match &decision.finding {
                None => CandidateState::NeedsFocusedPass { decision },
                Some(f) => match check_finding(candidate, f, ledger) {
                    Ok(()) => CandidateState::Verified { decision },
                    Err(reason) => CandidateState::Invalid {
                        problem: DecisionProblem::UnrelatedFinding {
                            candidate_id: id(),
                            reason,
                        },
                    },
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Revision, SourceWindow};

    fn cand(id: &str) -> Candidate {
        Candidate {
            id: id.into(),
            proposed_by: "generic-investigator #1".into(),
            path: "src/a.rs".into(),
            revision: Revision::Head,
            start_line: 20,
            end_line: 25,
            severity: Severity::High,
            area: crate::Area::Correctness,
            claim: "c".into(),
            evidence: "e".into(),
        }
    }

    fn cite(s: u32, e: u32) -> Citation {
        SourceWindow {
            revision: Revision::Head,
            path: "src/a.rs".into(),
            start_line: s,
            end_line: e,
        }
    }

    fn dec(
        id: &str,
        verdict: Verdict,
        citations: Vec<Citation>,
        finding: Option<(u32, u32, Severity, &str)>,
    ) -> Decision {
        Decision {
            candidate_id: id.into(),
            verdict,
            evidence: "because".into(),
            citations,
            finding: finding.map(|(s, e, sev, path)| FindingDraft {
                path: path.into(),
                start_line: s,
                end_line: e,
                severity: sev,
                claim: "narrowed".into(),
            }),
        }
    }

    fn state_name(s: &CandidateState) -> String {
        match s {
            CandidateState::Verified { .. } => "verified".into(),
            CandidateState::NeedsFocusedPass { .. } => "focused".into(),
            CandidateState::Rejected { .. } => "rejected".into(),
            CandidateState::Unresolved { .. } => "unresolved".into(),
            CandidateState::Invalid { problem } => format!(
                "invalid:{}",
                serde_json::to_value(problem).unwrap()["problem"]
                    .as_str()
                    .unwrap()
            ),
        }
    }

    #[test]
    fn every_candidate_gets_exactly_one_valid_decision() {
        let mut ledger = SourceLedger::default();
        ledger.record(cite(1, 40));
        let ok = Some((21, 22, Severity::High, "src/a.rs"));
        let cases: Vec<(Vec<Decision>, &str)> = vec![
            (
                vec![dec("x/0", Verdict::Verified, vec![cite(20, 25)], ok)],
                "verified",
            ),
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(20, 25)],
                    Some((21, 22, Severity::Low, "src/a.rs")),
                )],
                "verified",
            ),
            (
                vec![dec("x/0", Verdict::Verified, vec![cite(20, 25)], None)],
                "focused",
            ),
            (
                vec![dec("x/0", Verdict::Rejected, vec![cite(20, 25)], None)],
                "rejected",
            ),
            // A rejection that cites nothing disproves nothing.
            (
                vec![dec("x/0", Verdict::Rejected, vec![], None)],
                "unresolved",
            ),
            (
                vec![dec("x/0", Verdict::Unresolved, vec![], None)],
                "unresolved",
            ),
            (vec![], "invalid:missing-decision"),
            (
                vec![
                    dec("x/0", Verdict::Rejected, vec![], None),
                    dec("x/0", Verdict::Rejected, vec![], None),
                ],
                "invalid:duplicate-decision",
            ),
            (
                vec![dec("x/0", Verdict::Verified, vec![cite(30, 60)], ok)],
                "invalid:citation",
            ),
            (
                vec![dec("x/0", Verdict::Rejected, vec![cite(0, 1)], None)],
                "invalid:citation",
            ),
            (
                vec![dec("x/0", Verdict::Verified, vec![], ok)],
                "invalid:uncited",
            ),
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(20, 25)],
                    Some((21, 22, Severity::High, "src/b.rs")),
                )],
                "invalid:unrelated-finding",
            ),
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(20, 25)],
                    Some((300, 301, Severity::High, "src/a.rs")),
                )],
                "invalid:unrelated-finding",
            ),
            // Within ten lines of the candidate's 20-25 on both sides, and not.
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(10, 35)],
                    Some((10, 35, Severity::High, "src/a.rs")),
                )],
                "verified",
            ),
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(20, 36)],
                    Some((35, 36, Severity::High, "src/a.rs")),
                )],
                "invalid:unrelated-finding",
            ),
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(1, 25)],
                    Some((1, 25, Severity::High, "src/a.rs")),
                )],
                "invalid:unrelated-finding",
            ),
            (
                vec![dec(
                    "x/0",
                    Verdict::Verified,
                    vec![cite(20, 25)],
                    Some((21, 22, Severity::Critical, "src/a.rs")),
                )],
                "invalid:unrelated-finding",
            ),
            (
                vec![Decision {
                    finding: Some(FindingDraft {
                        claim: "  ".into(),
                        ..dec("x/0", Verdict::Verified, vec![], ok).finding.unwrap()
                    }),
                    ..dec("x/0", Verdict::Verified, vec![cite(20, 25)], ok)
                }],
                "invalid:unrelated-finding",
            ),
        ];
        // Near the candidate but past what the verifier read (as past a file's end).
        let mut short = SourceLedger::default();
        short.record(cite(15, 30));
        let past = dec(
            "x/0",
            Verdict::Verified,
            vec![cite(20, 25)],
            Some((28, 33, Severity::High, "src/a.rs")),
        );
        let account = account_decisions(&[cand("x/0")], &[past], &short);
        assert_eq!(
            state_name(&account.states["x/0"]),
            "invalid:unrelated-finding"
        );
        for (decisions, want) in cases {
            let account = account_decisions(&[cand("x/0")], &decisions, &ledger);
            assert_eq!(account.states.len(), 1);
            assert_eq!(state_name(&account.states["x/0"]), want, "{decisions:?}");
        }
        let stray = account_decisions(
            &[cand("x/0")],
            &[
                dec("x/0", Verdict::Rejected, vec![], None),
                dec("y/9", Verdict::Rejected, vec![], None),
            ],
            &ledger,
        );
        assert_eq!(
            stray.stray,
            vec![DecisionProblem::UnknownCandidate {
                candidate_id: "y/9".into()
            }]
        );
        assert_eq!(stray.problems().len(), 1);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn verdict() -> impl Strategy<Value = Verdict> {
            prop_oneof![
                Just(Verdict::Verified),
                Just(Verdict::Rejected),
                Just(Verdict::Unresolved)
            ]
        }

        proptest! {
            /// For any decision on the candidate at 20-25 (the verifier read lines 1-60):
            /// a rejection stands only with a citation, and a verified finding stands only
            /// within ten lines of its candidate's on both sides — the rule the report's
            /// self-check applies again, so the gate never passes what it refuses.
            #[test]
            fn a_rejection_needs_a_citation_and_a_finding_stays_near_its_candidate(
                verdict in verdict(),
                cited in prop::option::of((1u32..70, 0u32..10)),
                finding in prop::option::of((1u32..70, 0u32..30)),
            ) {
                let mut ledger = SourceLedger::default();
                ledger.record(cite(1, 60));
                let citations: Vec<Citation> =
                    cited.map(|(s, n)| cite(s, s + n)).into_iter().collect();
                let finding = finding.map(|(s, n)| (s, s + n, Severity::High, "src/a.rs"));
                let d = dec("x/0", verdict, citations.clone(), finding);
                let account = account_decisions(&[cand("x/0")], &[d], &ledger);
                match &account.states["x/0"] {
                    CandidateState::Rejected { decision } => {
                        prop_assert!(!decision.citations.is_empty());
                    }
                    CandidateState::Verified { decision } => {
                        let f = decision.finding.as_ref().unwrap();
                        prop_assert!(within_narrowing_slack((f.start_line, f.end_line), (20, 25)));
                    }
                    CandidateState::Unresolved { decision } => prop_assert!(
                        verdict == Verdict::Unresolved
                            || (verdict == Verdict::Rejected && citations.is_empty()),
                        "{decision:?}"
                    ),
                    _ => {}
                }
            }
        }
    }
}
