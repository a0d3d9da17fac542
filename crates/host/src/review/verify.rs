//! Verification: one pass over all candidates, then a focused single-candidate pass for
//! each verified decision that omitted its finding.

use vouch_abi::contract::ContractRequest;
use vouch_abi::{
    CandidateForVerification, DecisionPayload, PAYLOAD_VERSION, ParsedReply, PromptRequest,
    ProposedCandidate,
};
use vouch_core::{
    Candidate, CandidateRecord, CandidateState, Citation, Decision, DecisionProblem, Failure,
    FailureKind, Finding, FindingDraft, Limitation, LimitationKind, Provenance, Revision, Severity,
    SourceWindow, StageRecord, StageStatus, TokenUsage, Verdict, account_decisions,
};

use super::env::{ReviewEnv, ToolsMode};
use super::inline;
use super::reply::{Exchange, ExchangeError, exchange};
use super::stage::StagePlan;
use crate::diagnostics::ReasonCode;
use crate::policy::{
    compose_user_message, inline_context_section, output_contract_section, tools_section,
};
use crate::progress::ProgressEvent;
use crate::tools::RepoTools;

/// Output-token budget of a focused verification pass.
pub const FOCUSED_OUTPUT_TOKENS: u32 = 4_000;

/// What verification contributes to the review.
pub struct VerificationRun {
    /// The verifier's stage records (batch pass, then focused passes).
    pub records: Vec<StageRecord>,
    /// Every candidate with its decision.
    pub candidates: Vec<CandidateRecord>,
    /// Verified findings, unmerged.
    pub findings: Vec<Finding>,
    /// Failures (review incomplete).
    pub failures: Vec<Failure>,
    /// Limitations (unresolved candidates, source gaps).
    pub limitations: Vec<Limitation>,
    /// Cancelled.
    pub cancelled: bool,
}

fn payload(c: &Candidate) -> CandidateForVerification {
    CandidateForVerification {
        id: c.id.clone(),
        candidate: ProposedCandidate {
            path: c.path.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
            revision: match c.revision {
                Revision::Head => "head".into(),
                Revision::Base => "base".into(),
            },
            severity: c.severity.as_str().into(),
            area: c.area.clone(),
            claim: c.claim.clone(),
            evidence: c.evidence.clone(),
        },
    }
}

/// Converts a decision payload into a core decision, or the problem that makes it
/// malformed (an unknown revision or severity).
fn to_decision(d: &DecisionPayload) -> Result<Decision, DecisionProblem> {
    let verdict = match d.decision.as_str() {
        "verified" => Verdict::Verified,
        "rejected" => Verdict::Rejected,
        _ => Verdict::Unresolved,
    };
    let mut citations: Vec<Citation> = Vec::new();
    for c in &d.citations {
        let revision = match c.revision.as_str() {
            "head" => Revision::Head,
            "base" => Revision::Base,
            _ => {
                return Err(DecisionProblem::Citation {
                    candidate_id: d.candidate_id.clone(),
                    error: vouch_core::CitationError::Malformed {
                        path: c.path.clone(),
                        start_line: c.start_line,
                        end_line: c.end_line,
                    },
                });
            }
        };
        citations.push(SourceWindow {
            revision,
            path: c.path.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
        });
    }
    let finding = match &d.finding {
        None => None,
        Some(f) => Some(FindingDraft {
            path: f.path.clone(),
            start_line: f.start_line,
            end_line: f.end_line,
            severity: Severity::parse(&f.severity).ok_or_else(|| {
                DecisionProblem::UnrelatedFinding {
                    candidate_id: d.candidate_id.clone(),
                    reason: format!("unknown severity `{}`", f.severity),
                }
            })?,
            claim: f.claim.clone(),
        }),
    };
    Ok(Decision {
        candidate_id: d.candidate_id.clone(),
        verdict,
        evidence: d.evidence.clone(),
        citations,
        finding,
    })
}

struct PassResult {
    record: StageRecord,
    states: Vec<(String, CandidateState)>,
    stray: Vec<DecisionProblem>,
}

async fn pass(
    env: &ReviewEnv,
    plan: &StagePlan,
    label: &str,
    candidates: &[Candidate],
    focused: bool,
) -> Result<PassResult, (StageRecord, ExchangeError)> {
    let d = plan.handle.descriptor();
    let mut record = StageRecord {
        label: label.to_string(),
        specialist: d.id.clone(),
        version: d.version.clone(),
        role: "verifier".into(),
        status: StageStatus::Accepted,
        assigned_files: plan.assigned.len(),
        coverage: None,
        retried: false,
        first_coverage: None,
        repaired: false,
        receipt_downgraded: false,
        candidates: candidates.len(),
        budget_hit: None,
        forced_synthesis: false,
        source_windows: 0,
        usage: TokenUsage::default(),
        summary: String::new(),
        problem: None,
    };
    let tools = RepoTools::new(env.reader.clone());
    let ids: Vec<String> = candidates.iter().map(|c| c.id.clone()).collect();
    let request = ContractRequest {
        expected_files: vec![],
        candidate_ids: ids,
        repair: false,
    };
    let schema = match plan.handle.contract(&request) {
        Ok(s) => s,
        Err(e) => return Err((record, ExchangeError::Plugin(e))),
    };
    let prompt_request = PromptRequest {
        payload_version: PAYLOAD_VERSION,
        label: label.to_string(),
        change: env.change_summary(&plan.assigned),
        intent: None,
        policy_evidence: env.policy.iter().map(|(p, _)| p.clone()).collect(),
        candidates: candidates.iter().map(payload).collect(),
        tools_available: env.tools == ToolsMode::On,
    };
    let prompt = match plan.handle.render_prompt(&prompt_request) {
        Ok(p) => p,
        Err(e) => return Err((record, ExchangeError::Plugin(e))),
    };
    for w in env.policy.iter().filter_map(|(_, w)| w.clone()) {
        tools.record(w);
    }
    let mut blocks = inline::candidate_windows(env, &tools, candidates);
    let patch_paths: Vec<String> = {
        let mut p: Vec<String> = candidates
            .iter()
            .map(|c| c.path.clone())
            .filter(|p| plan.assigned.contains(p))
            .collect();
        p.sort();
        p.dedup();
        p
    };
    let patches = inline::patches(env, &tools, &patch_paths);
    blocks.extend(patches.blocks);
    let mut sections = vec![inline_context_section(&blocks, &patches.omitted)];
    if env.tools == ToolsMode::On {
        sections.push(tools_section(
            vouch_git::reader::MAX_LINES,
            vouch_git::reader::MAX_BYTES as u32,
            vouch_git::reader::MAX_GREP_MATCHES as u32,
        ));
    }
    sections.push(output_contract_section(&schema));
    let mut budget = plan.budget;
    if focused {
        budget.max_output_tokens_per_request = FOCUSED_OUTPUT_TOKENS;
    }
    let answer = exchange(
        env,
        Exchange {
            label,
            handle: &plan.handle,
            system: prompt.system,
            user: compose_user_message(&prompt.user, &sections),
            schema: schema.clone(),
            repair_schema: schema,
            expected: None,
            budget,
            tools: &tools,
        },
    )
    .await;
    record.source_windows = tools.ledger().windows.len();
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Err((record, e)),
    };
    record.usage = answer.usage;
    record.repaired = answer.repaired;
    record.forced_synthesis = answer.forced_synthesis;
    record.budget_hit = answer.budget_hit.clone();
    let ParsedReply::Decisions(reply) = answer.parsed else {
        return Err((
            record,
            ExchangeError::Invalid {
                message: format!("{label} returned a reply of the wrong kind"),
                truncated: false,
            },
        ));
    };
    let mut decisions = Vec::new();
    let mut stray = Vec::new();
    for d in &reply.decisions {
        match to_decision(d) {
            Ok(d) => decisions.push(d),
            Err(problem) => stray.push(problem),
        }
    }
    let account = account_decisions(candidates, &decisions, &tools.ledger());
    stray.extend(account.stray);
    // A malformed decision for a known candidate invalidates that candidate.
    let mut states: Vec<(String, CandidateState)> = account.states.into_iter().collect();
    for problem in &stray {
        let id = match problem {
            DecisionProblem::Citation { candidate_id, .. }
            | DecisionProblem::UnrelatedFinding { candidate_id, .. } => candidate_id,
            _ => continue,
        };
        if let Some((_, state)) = states.iter_mut().find(|(c, _)| c == id) {
            *state = CandidateState::Invalid {
                problem: problem.clone(),
            };
        }
    }
    stray.retain(|p| matches!(p, DecisionProblem::UnknownCandidate { .. }));
    record.candidates = reply.decisions.len();
    Ok(PassResult {
        record,
        states,
        stray,
    })
}

fn finding(c: &Candidate, decision: &Decision, verifier: &str, passes: u8) -> Finding {
    let f = decision
        .finding
        .as_ref()
        .expect("verified decisions carry a finding");
    Finding {
        path: f.path.clone(),
        revision: c.revision,
        start_line: f.start_line,
        end_line: f.end_line,
        severity: f.severity,
        area: c.area.clone(),
        claim: f.claim.clone(),
        evidence: decision.evidence.clone(),
        citations: decision.citations.clone(),
        provenance: Provenance {
            proposed_by: vec![c.proposed_by.clone()],
            candidate_ids: vec![c.id.clone()],
            verified_by: verifier.to_string(),
            verification_passes: passes,
        },
    }
}

fn failure_of(label: &str, e: ExchangeError) -> Option<Failure> {
    let (kind, message) = match e {
        ExchangeError::Cancelled => return None,
        ExchangeError::Provider(err) => (
            FailureKind::ProviderError,
            format!("{label}: the model endpoint failed: {err}"),
        ),
        ExchangeError::Plugin(err) => (FailureKind::PluginError, format!("{label}: {err}")),
        ExchangeError::Invalid { message, truncated } => (
            if truncated {
                FailureKind::TruncatedOutput
            } else {
                FailureKind::InvalidOutput
            },
            message,
        ),
    };
    Some(Failure {
        kind,
        stage: Some(label.to_string()),
        message,
    })
}

/// Rule (verification): all candidates together in one pass, exactly one decision each;
/// a verified decision that omits its finding is re-checked alone (same prompt and
/// tools, a 4,000-token output budget) and a recovered finding records
/// `verificationPasses: 2`; omitted again → `unresolved` (no clean opinion, other
/// findings kept). Unknown ids, missing or malformed decisions and unread citations
/// make the review incomplete.
pub async fn verify(
    env: &ReviewEnv,
    plan: &StagePlan,
    candidates: &[Candidate],
) -> VerificationRun {
    let mut run = VerificationRun {
        records: vec![],
        candidates: vec![],
        findings: vec![],
        failures: vec![],
        limitations: vec![],
        cancelled: false,
    };
    if candidates.is_empty() {
        return run;
    }
    env.progress(ProgressEvent::VerificationStarted {
        candidates: candidates.len(),
    });
    let batch = match pass(env, plan, &plan.label, candidates, false).await {
        Ok(p) => p,
        Err((mut record, e)) => {
            record.status = StageStatus::Failed;
            match failure_of(&plan.label, e) {
                None => {
                    run.cancelled = true;
                    record.status = StageStatus::Cancelled;
                }
                Some(f) => {
                    env.diagnose(
                        Some(&plan.label),
                        "verification",
                        Some(record.source_windows as u64),
                        ReasonCode::ProviderError,
                    );
                    record.problem = Some(f.message.clone());
                    run.failures.push(f);
                }
            }
            run.records.push(record);
            run.candidates = candidates
                .iter()
                .map(|c| undecided(c, "verification did not complete"))
                .collect();
            return run;
        }
    };
    run.records.push(batch.record);
    for problem in batch.stray {
        env.diagnose(
            Some(&plan.label),
            "verification",
            None,
            ReasonCode::InvalidDecision,
        );
        run.failures.push(Failure {
            kind: FailureKind::InvalidDecision,
            stage: Some(plan.label.clone()),
            message: problem.to_string(),
        });
    }
    for c in candidates {
        let state = batch
            .states
            .iter()
            .find(|(id, _)| id == &c.id)
            .map(|(_, s)| s.clone());
        let record = match state {
            Some(CandidateState::Verified { decision }) => {
                run.findings.push(finding(c, &decision, &plan.label, 1));
                decided(c, &decision, 1)
            }
            Some(CandidateState::Rejected { decision }) => decided(c, &decision, 1),
            Some(CandidateState::Unresolved { decision }) => {
                run.limitations
                    .push(unresolved_limitation(c, &decision.evidence));
                decided(c, &decision, 1)
            }
            Some(CandidateState::NeedsFocusedPass { .. }) => {
                env.diagnose(
                    Some(&plan.label),
                    "verification",
                    None,
                    ReasonCode::FocusedVerification,
                );
                focused(env, plan, c, &mut run).await
            }
            Some(CandidateState::Invalid { problem }) => {
                env.diagnose(
                    Some(&plan.label),
                    "verification",
                    None,
                    ReasonCode::InvalidDecision,
                );
                run.failures.push(Failure {
                    kind: FailureKind::InvalidDecision,
                    stage: Some(plan.label.clone()),
                    message: problem.to_string(),
                });
                undecided(c, &problem.to_string())
            }
            None => undecided(c, "no decision"),
        };
        run.candidates.push(record);
        if run.cancelled {
            break;
        }
    }
    run
}

async fn focused(
    env: &ReviewEnv,
    plan: &StagePlan,
    c: &Candidate,
    run: &mut VerificationRun,
) -> CandidateRecord {
    let label = format!("{} (focused {})", plan.label, c.id);
    match pass(env, plan, &label, std::slice::from_ref(c), true).await {
        Err((mut record, e)) => {
            record.status = StageStatus::Failed;
            let out = match failure_of(&label, e) {
                None => {
                    run.cancelled = true;
                    record.status = StageStatus::Cancelled;
                    undecided(c, "cancelled")
                }
                Some(f) => {
                    record.problem = Some(f.message.clone());
                    let text = f.message.clone();
                    run.failures.push(f);
                    undecided(c, &text)
                }
            };
            run.records.push(record);
            out
        }
        Ok(p) => {
            run.records.push(p.record);
            for problem in p.stray {
                run.failures.push(Failure {
                    kind: FailureKind::InvalidDecision,
                    stage: Some(label.clone()),
                    message: problem.to_string(),
                });
            }
            match p.states.into_iter().next().map(|(_, s)| s) {
                Some(CandidateState::Verified { decision }) => {
                    run.findings.push(finding(c, &decision, &plan.label, 2));
                    decided(c, &decision, 2)
                }
                Some(CandidateState::Rejected { decision }) => decided(c, &decision, 2),
                Some(CandidateState::Unresolved { decision }) => {
                    run.limitations
                        .push(unresolved_limitation(c, &decision.evidence));
                    decided(c, &decision, 2)
                }
                Some(CandidateState::NeedsFocusedPass { decision }) => {
                    let reason = "verified twice without the finding itself";
                    run.limitations.push(unresolved_limitation(c, reason));
                    CandidateRecord {
                        candidate: c.clone(),
                        verdict: Some(Verdict::Unresolved),
                        evidence: decision.evidence,
                        verification_passes: 2,
                        problem: Some(reason.into()),
                    }
                }
                Some(CandidateState::Invalid { problem }) => {
                    run.failures.push(Failure {
                        kind: FailureKind::InvalidDecision,
                        stage: Some(label),
                        message: problem.to_string(),
                    });
                    undecided(c, &problem.to_string())
                }
                None => undecided(c, "no decision"),
            }
        }
    }
}

fn unresolved_limitation(c: &Candidate, why: &str) -> Limitation {
    Limitation {
        kind: LimitationKind::UnresolvedCandidate,
        stage: Some(c.proposed_by.clone()),
        detail: format!(
            "candidate {} ({}:{}-{}) is unresolved: {why}",
            c.id, c.path, c.start_line, c.end_line
        ),
    }
}

fn decided(c: &Candidate, d: &Decision, passes: u8) -> CandidateRecord {
    CandidateRecord {
        candidate: c.clone(),
        verdict: Some(d.verdict),
        evidence: d.evidence.clone(),
        verification_passes: passes,
        problem: None,
    }
}

fn undecided(c: &Candidate, why: &str) -> CandidateRecord {
    CandidateRecord {
        candidate: c.clone(),
        verdict: None,
        evidence: String::new(),
        verification_passes: 1,
        problem: Some(why.to_string()),
    }
}
