//! The review's opinion: derived by one pure function from facts, never by a model.

use serde::{Deserialize, Serialize};

/// The outcome axis of the opinion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The range changes nothing; no model was called. Never "clean".
    NothingToReview,
    /// Cancelled (Ctrl-C or a cancelled token).
    Aborted,
    /// The review could not complete; nothing is published.
    Incomplete,
    /// Verified findings are published.
    Findings,
    /// The review completed without verified findings.
    NoFindings,
}

impl Outcome {
    /// The kebab-case spelling, as in the JSON report (`no-findings`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::NothingToReview => "nothing-to-review",
            Outcome::Aborted => "aborted",
            Outcome::Incomplete => "incomplete",
            Outcome::Findings => "findings",
            Outcome::NoFindings => "no-findings",
        }
    }
}

/// The coverage axis, for completed reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CoverageLevel {
    /// Every assigned file in an accepted receipt, no gap, no exclusion, nothing unresolved.
    Full,
    /// See the limitations.
    Limited,
}

/// Kinds of coverage limitation (each makes coverage `limited`; none makes a review
/// incomplete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimitationKind {
    /// The host could not retrieve source (a file, a patch, a tool failure, zero windows).
    SourceLookupGap,
    /// Changed files were excluded by the composition (or are binary).
    ExcludedFiles,
    /// A stage hit a turn, call or token budget.
    BudgetHit,
    /// A stage was forced to synthesise and its receipt was incomplete.
    ForcedSynthesis,
    /// A candidate stayed unresolved.
    UnresolvedCandidate,
    /// A stage reported partial coverage that does not fall under the receipt rule
    /// (e.g. outcome investigation or focused verification).
    PartialCoverage,
    /// Changed files that no enabled lane instance was assigned (no selection matched).
    UnassignedFiles,
    /// A lane candidate's location did not resolve (candidate intake: a path that is not
    /// exactly a file at its revision, or lines outside the file), so it was not verified.
    UnverifiableCandidate,
    /// Changed files no stage both listed in an accepted receipt and saw in full.
    UnreviewedFiles,
    /// Rename detection stopped at its limit: some renames may show as a deletion plus
    /// an addition (both still reviewed in full).
    RenameLimit,
}

impl LimitationKind {
    /// The kebab-case spelling, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitationKind::SourceLookupGap => "source-lookup-gap",
            LimitationKind::ExcludedFiles => "excluded-files",
            LimitationKind::BudgetHit => "budget-hit",
            LimitationKind::ForcedSynthesis => "forced-synthesis",
            LimitationKind::UnresolvedCandidate => "unresolved-candidate",
            LimitationKind::PartialCoverage => "partial-coverage",
            LimitationKind::UnassignedFiles => "unassigned-files",
            LimitationKind::UnverifiableCandidate => "unverifiable-candidate",
            LimitationKind::UnreviewedFiles => "unreviewed-files",
            LimitationKind::RenameLimit => "rename-limit",
        }
    }
}

/// One coverage limitation, stated in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limitation {
    /// What kind.
    pub kind: LimitationKind,
    /// Stage instance label, when one stage is concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// Human explanation (may name paths; goes to the report, never to stderr).
    pub detail: String,
}

/// Kinds of failure (each makes the review `incomplete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The model endpoint failed (HTTP error, retries exhausted, timeout).
    ProviderError,
    /// A reply was still invalid after its one repair.
    InvalidOutput,
    /// A reply was cut off (`finish_reason: length`) and could not be repaired.
    TruncatedOutput,
    /// A coverage receipt still mismatched after its one retry.
    CoverageMismatch,
    /// A verification decision or citation failed validation.
    InvalidDecision,
    /// A plugin call failed.
    PluginError,
    /// A stage could not run: the stable part of its requests leaves no room for the
    /// change under its request bound, so its files could never be reviewed.
    BudgetTooSmall,
}

impl FailureKind {
    /// The kebab-case spelling, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::ProviderError => "provider-error",
            FailureKind::InvalidOutput => "invalid-output",
            FailureKind::TruncatedOutput => "truncated-output",
            FailureKind::CoverageMismatch => "coverage-mismatch",
            FailureKind::InvalidDecision => "invalid-decision",
            FailureKind::PluginError => "plugin-error",
            FailureKind::BudgetTooSmall => "budget-too-small",
        }
    }
}

/// One failure, stated in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// What kind.
    pub kind: FailureKind,
    /// Stage instance label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// Human message (e.g. the exact coverage-mismatch text).
    pub message: String,
    /// For a provider error: what the endpoint answered, as it answered it (its body,
    /// bounded), beside the message's one-line summary of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Whether the clean-result audit has what a clean opinion needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuditState {
    /// Lanes proposed candidates, so no audit was needed.
    NotNeeded,
    /// The audit ran and none of its candidates survived verification.
    Passed,
    /// The audit ran and some of its candidates were verified.
    FoundDefects,
    /// No lane proposed a candidate and no audit ran (none configured, or it failed).
    NotRun,
}

/// What became of the clean-result audit stage in one review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditRun {
    /// The composition has no audit, or it was not started (lanes proposed candidates,
    /// something failed, the run was cancelled).
    NotStarted,
    /// The audit ran and failed (or was cancelled).
    Failed,
    /// The audit ran and its reply was accepted.
    Accepted,
}

/// Rule (clean needs the audit): when the lanes proposed any candidate the audit is
/// not needed; otherwise the audit counts only when it ran and its reply was accepted:
/// `found-defects` when verification kept any finding (all of them are the audit's),
/// else `passed`. An audit that did not run or failed is `not-run`, which never allows
/// a clean opinion.
pub fn audit_state(
    lane_candidates: usize,
    audit: AuditRun,
    verified_findings: usize,
) -> AuditState {
    match (lane_candidates, audit) {
        (1.., _) => AuditState::NotNeeded,
        (0, AuditRun::Accepted) if verified_findings > 0 => AuditState::FoundDefects,
        (0, AuditRun::Accepted) => AuditState::Passed,
        (0, AuditRun::NotStarted | AuditRun::Failed) => AuditState::NotRun,
    }
}

/// Everything the opinion depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewFacts {
    /// The range changes nothing.
    pub change_is_empty: bool,
    /// The run was cancelled.
    pub aborted: bool,
    /// Failures (any → incomplete).
    pub failures: Vec<Failure>,
    /// Coverage limitations (any → limited).
    pub limitations: Vec<Limitation>,
    /// Verified findings after merge.
    pub verified_findings: usize,
    /// Candidates that stayed unresolved.
    pub unresolved_candidates: usize,
    /// Candidates without a decision (these are also failures).
    pub undecided_candidates: usize,
    /// The audit's state.
    pub audit: AuditState,
}

/// The derived opinion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Opinion {
    /// Outcome axis.
    pub outcome: Outcome,
    /// Coverage axis; `None` unless the review completed (findings / no-findings).
    pub coverage: Option<CoverageLevel>,
    /// True only for a whole-change clean opinion.
    pub clean: bool,
    /// True when findings are published (outcome `findings`).
    pub publish_findings: bool,
    /// Why the opinion is not clean, in words (empty when clean).
    pub not_clean_because: Vec<String>,
}

/// Rule (design, "Opinion and report"): the outcome is `aborted` when cancelled (also
/// while the change was still being prepared, when whether it is empty is not yet
/// known), `nothing-to-review` for an empty range, `incomplete` on any failure (nothing published),
/// `findings` when verified findings exist, else `no-findings`. Completed reviews have
/// coverage `full` or `limited` (any limitation, or any unresolved candidate). Clean =
/// `no-findings` with `full` coverage, every candidate decided, and — when no lane
/// proposed any candidate — the clean-result audit ran and none of its candidates
/// survived. Findings with limited coverage are published with the limitation stated.
pub fn derive_opinion(facts: &ReviewFacts) -> Opinion {
    let stop = |outcome, reason: &str| Opinion {
        outcome,
        coverage: None,
        clean: false,
        publish_findings: false,
        not_clean_because: vec![reason.to_string()],
    };
    if facts.aborted {
        return stop(Outcome::Aborted, "the review was cancelled");
    }
    if facts.change_is_empty {
        return stop(Outcome::NothingToReview, "the range changes nothing");
    }
    if !facts.failures.is_empty() || facts.undecided_candidates > 0 {
        return stop(Outcome::Incomplete, "the review could not complete");
    }
    let limited = !facts.limitations.is_empty() || facts.unresolved_candidates > 0;
    let coverage = if limited {
        CoverageLevel::Limited
    } else {
        CoverageLevel::Full
    };
    let outcome = if facts.verified_findings > 0 {
        Outcome::Findings
    } else {
        Outcome::NoFindings
    };
    let mut why = Vec::new();
    if outcome == Outcome::Findings {
        why.push("verified findings".to_string());
    }
    if limited {
        why.push("coverage is limited".to_string());
    }
    if facts.unresolved_candidates > 0 {
        why.push(format!(
            "{} candidate(s) unresolved",
            facts.unresolved_candidates
        ));
    }
    match facts.audit {
        AuditState::NotNeeded | AuditState::Passed => {}
        AuditState::FoundDefects => why.push("the clean-result audit found defects".to_string()),
        AuditState::NotRun => {
            why.push("no lane proposed a candidate and no clean-result audit ran".to_string())
        }
    }
    Opinion {
        outcome,
        coverage: Some(coverage),
        clean: why.is_empty(),
        publish_findings: outcome == Outcome::Findings,
        not_clean_because: why,
    }
}

/// The `--fail-on` threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// Exit 1 when verified findings are published (the default).
    Finding,
    /// Exit 1 for findings, and for limited coverage too.
    Limited,
    /// Exit 0 for every completed review.
    Never,
}

/// Rule (design, "Exit codes"): 0 completed and nothing at or above the failure
/// threshold · 1 verified findings at or above `--fail-on` · 2 incomplete · 130 aborted.
/// Limited coverage exits 0 unless `--fail-on limited`. (3, usage errors, is the
/// binary's.)
pub fn exit_code(opinion: &Opinion, fail_on: FailOn) -> i32 {
    match opinion.outcome {
        Outcome::NothingToReview => 0,
        Outcome::Aborted => 130,
        Outcome::Incomplete => 2,
        Outcome::Findings => i32::from(fail_on != FailOn::Never),
        Outcome::NoFindings => i32::from(
            fail_on == FailOn::Limited && opinion.coverage == Some(CoverageLevel::Limited),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_spelling_is_the_json_spelling() {
        use Outcome::*;
        for o in [NothingToReview, Aborted, Incomplete, Findings, NoFindings] {
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
    }

    /// Every spelling the JSON schema allows for `T`, each parsed and spelled back by
    /// `as_str`: a new variant without its `as_str` arm (or with a different spelling)
    /// fails here.
    fn assert_as_str_is_the_json_spelling<T>(as_str: fn(T) -> &'static str)
    where
        T: schemars::JsonSchema + serde::de::DeserializeOwned,
    {
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
        let mut spellings: Vec<String> = Vec::new();
        collect_enum_strings(&schema, &mut spellings);
        assert!(!spellings.is_empty(), "{schema}");
        for spelling in spellings {
            let value: T = serde_json::from_value(serde_json::Value::from(spelling.clone()))
                .unwrap_or_else(|e| panic!("{spelling}: {e}"));
            assert_eq!(as_str(value), spelling);
        }
    }

    fn collect_enum_strings(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map {
                    match (key.as_str(), inner) {
                        ("enum", serde_json::Value::Array(items)) => {
                            out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_owned)))
                        }
                        ("const", serde_json::Value::String(s)) => out.push(s.clone()),
                        _ => collect_enum_strings(inner, out),
                    }
                }
            }
            serde_json::Value::Array(items) => {
                items.iter().for_each(|i| collect_enum_strings(i, out));
            }
            _ => {}
        }
    }

    #[test]
    fn limitation_and_failure_kinds_spell_as_the_json_report() {
        assert_as_str_is_the_json_spelling::<LimitationKind>(LimitationKind::as_str);
        assert_as_str_is_the_json_spelling::<FailureKind>(FailureKind::as_str);
        assert_as_str_is_the_json_spelling::<Outcome>(Outcome::as_str);
    }

    #[test]
    fn the_audit_counts_only_when_it_ran_and_was_accepted() {
        use AuditRun::*;
        // (lane candidates, audit run, verified findings, state)
        let cases = [
            (2, NotStarted, 0, AuditState::NotNeeded),
            (1, Accepted, 1, AuditState::NotNeeded),
            (0, Accepted, 0, AuditState::Passed),
            (0, Accepted, 2, AuditState::FoundDefects),
            (0, Failed, 0, AuditState::NotRun),
            (0, NotStarted, 0, AuditState::NotRun),
        ];
        for (lanes, run, found, want) in cases {
            assert_eq!(
                audit_state(lanes, run, found),
                want,
                "{lanes} {run:?} {found}"
            );
        }
    }

    fn facts() -> ReviewFacts {
        ReviewFacts {
            change_is_empty: false,
            aborted: false,
            failures: vec![],
            limitations: vec![],
            verified_findings: 0,
            unresolved_candidates: 0,
            undecided_candidates: 0,
            audit: AuditState::NotNeeded,
        }
    }

    #[test]
    fn opinion_is_derived_by_rule() {
        let failure = Failure {
            kind: FailureKind::ProviderError,
            stage: None,
            message: "x".into(),
            detail: None,
        };
        let gap = Limitation {
            kind: LimitationKind::SourceLookupGap,
            stage: None,
            detail: "x".into(),
        };
        // (facts, outcome, coverage, clean, exit with --fail-on finding, with limited)
        let cases: Vec<(ReviewFacts, Outcome, Option<CoverageLevel>, bool, i32, i32)> = vec![
            (
                facts(),
                Outcome::NoFindings,
                Some(CoverageLevel::Full),
                true,
                0,
                0,
            ),
            (
                ReviewFacts {
                    change_is_empty: true,
                    ..facts()
                },
                Outcome::NothingToReview,
                None,
                false,
                0,
                0,
            ),
            (
                ReviewFacts {
                    aborted: true,
                    verified_findings: 2,
                    ..facts()
                },
                Outcome::Aborted,
                None,
                false,
                130,
                130,
            ),
            (
                ReviewFacts {
                    failures: vec![failure.clone()],
                    verified_findings: 2,
                    ..facts()
                },
                Outcome::Incomplete,
                None,
                false,
                2,
                2,
            ),
            (
                ReviewFacts {
                    undecided_candidates: 1,
                    ..facts()
                },
                Outcome::Incomplete,
                None,
                false,
                2,
                2,
            ),
            (
                ReviewFacts {
                    verified_findings: 1,
                    ..facts()
                },
                Outcome::Findings,
                Some(CoverageLevel::Full),
                false,
                1,
                1,
            ),
            (
                ReviewFacts {
                    verified_findings: 1,
                    limitations: vec![gap.clone()],
                    ..facts()
                },
                Outcome::Findings,
                Some(CoverageLevel::Limited),
                false,
                1,
                1,
            ),
            (
                ReviewFacts {
                    limitations: vec![gap],
                    ..facts()
                },
                Outcome::NoFindings,
                Some(CoverageLevel::Limited),
                false,
                0,
                1,
            ),
            (
                ReviewFacts {
                    unresolved_candidates: 1,
                    ..facts()
                },
                Outcome::NoFindings,
                Some(CoverageLevel::Limited),
                false,
                0,
                1,
            ),
            (
                ReviewFacts {
                    audit: AuditState::NotRun,
                    ..facts()
                },
                Outcome::NoFindings,
                Some(CoverageLevel::Full),
                false,
                0,
                0,
            ),
            (
                ReviewFacts {
                    audit: AuditState::Passed,
                    ..facts()
                },
                Outcome::NoFindings,
                Some(CoverageLevel::Full),
                true,
                0,
                0,
            ),
        ];
        for (f, outcome, coverage, clean, exit_finding, exit_limited) in cases {
            let o = derive_opinion(&f);
            assert_eq!(
                (o.outcome, o.coverage, o.clean),
                (outcome, coverage, clean),
                "{f:?}"
            );
            assert_eq!(o.clean, o.not_clean_because.is_empty());
            assert_eq!(o.publish_findings, outcome == Outcome::Findings);
            assert_eq!(exit_code(&o, FailOn::Finding), exit_finding, "{f:?}");
            assert_eq!(exit_code(&o, FailOn::Limited), exit_limited, "{f:?}");
        }
        let findings = derive_opinion(&ReviewFacts {
            verified_findings: 1,
            ..facts()
        });
        assert_eq!(exit_code(&findings, FailOn::Never), 0);
    }
}
