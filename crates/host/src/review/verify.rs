//! Verification: one pass over all candidates, then a focused single-candidate pass for
//! each verified decision that omitted its finding.

use vouch_abi::contract::ContractRequest;
use vouch_abi::{
    CandidateForVerification, DecisionPayload, PAYLOAD_VERSION, ParsedReply, PromptRequest,
    ProposedCandidate,
};
use vouch_core::{
    CONVENTIONS_AREA, Candidate, CandidateRecord, CandidateState, Citation, ConventionGap,
    Decision, DecisionProblem, Failure, FailureKind, Finding, FindingDraft, Limitation,
    LimitationKind, Provenance, Revision, Severity, SourceWindow, StageRecord, StageStatus,
    Verdict, account_decisions, convention_support,
};

use super::context::policy_paths;
use super::env::ReviewEnv;
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
/// malformed (an unknown verdict, citation revision or severity: possible only from a
/// plugin whose parser let it through).
fn to_decision(d: &DecisionPayload) -> Result<Decision, DecisionProblem> {
    let malformed = |reason: String| DecisionProblem::Malformed {
        candidate_id: d.candidate_id.clone(),
        reason,
    };
    let verdict = match d.decision.as_str() {
        "verified" => Verdict::Verified,
        "rejected" => Verdict::Rejected,
        "unresolved" => Verdict::Unresolved,
        other => return Err(malformed(format!("unknown decision `{other}`"))),
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
            severity: Severity::parse(&f.severity)
                .ok_or_else(|| malformed(format!("unknown severity `{}`", f.severity)))?,
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
    limitations: Vec<Limitation>,
}

fn gap(label: &str, detail: String) -> Limitation {
    Limitation {
        kind: LimitationKind::SourceLookupGap,
        stage: Some(label.to_string()),
        detail,
    }
}

async fn pass(
    env: &ReviewEnv,
    plan: &StagePlan,
    label: &str,
    candidates: &[Candidate],
    focused: bool,
) -> Result<PassResult, (StageRecord, ExchangeError)> {
    let mut record = StageRecord {
        candidates: candidates.len(),
        ..super::stage::stage_record(label, &plan.handle, plan.assigned.len())
    };
    let tools = RepoTools::new(env.reader.clone());
    let ids: Vec<String> = candidates.iter().map(|c| c.id.clone()).collect();
    let request = ContractRequest {
        expected_files: vec![],
        candidate_ids: ids,
        repair: false,
        max_candidates: None,
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
        tools_available: env.tools_enabled(),
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
    if env.tools_enabled() {
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
            model: plan.model.as_deref(),
        },
    )
    .await;
    record.ledger = tools.ledger().windows;
    record.source_windows = record.ledger.len();
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Err((record, e)),
    };
    record.usage = answer.usage;
    record.repaired = answer.repaired;
    record.forced_synthesis = answer.forced_synthesis;
    record.budget_hit = answer.budget_hit.clone();
    // Partial coverage of a verification pass: a budget hit, source the host could not
    // retrieve, or no source at all. Each is a stated limitation with the stage's label.
    let mut limitations = Vec::new();
    if let Some(kind) = &answer.budget_hit {
        limitations.push(Limitation {
            kind: LimitationKind::BudgetHit,
            stage: Some(label.to_string()),
            detail: format!("{label} hit its {kind} budget"),
        });
    }
    if !patches.failed.is_empty() || tools.lookup_failures() > 0 {
        limitations.push(gap(
            label,
            format!(
                "{label} could not retrieve {} patch(es) and {} tool read(s)",
                patches.failed.len(),
                tools.lookup_failures()
            ),
        ));
    } else if super::windows_beyond_policy(env, record.source_windows) == 0 {
        limitations.push(gap(
            label,
            format!("{label} decided without reading or being given any source"),
        ));
    }
    if limitations
        .iter()
        .any(|l| l.kind == LimitationKind::SourceLookupGap)
    {
        env.diagnose(
            Some(label),
            "verification",
            Some(record.source_windows as u64),
            ReasonCode::SourceLookupGap,
        );
    }
    if !limitations.is_empty() {
        record.status = StageStatus::Limited;
        record.problem = Some(
            limitations
                .iter()
                .map(|l| l.detail.as_str())
                .collect::<Vec<_>>()
                .join("; "),
        );
    }
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
            | DecisionProblem::Malformed { candidate_id, .. }
            | DecisionProblem::UnrelatedFinding { candidate_id, .. } => candidate_id,
            _ => continue,
        };
        if let Some((_, state)) = states.iter_mut().find(|(c, _)| c == id) {
            *state = CandidateState::Invalid {
                problem: problem.clone(),
            };
        }
    }
    // Problems tied to a given candidate now live in its state; what is left names ids
    // the host never assigned.
    stray.retain(|p| {
        let id = match p {
            DecisionProblem::Citation { candidate_id, .. }
            | DecisionProblem::Malformed { candidate_id, .. }
            | DecisionProblem::UnrelatedFinding { candidate_id, .. } => candidate_id,
            _ => return true,
        };
        !states.iter().any(|(c, _)| c == id)
    });
    record.candidates = reply.decisions.len();
    Ok(PassResult {
        record,
        states,
        stray,
        limitations,
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

/// The failure, diagnostic reason and whether it was a cancellation, of an exchange error.
fn failure_of(label: &str, e: ExchangeError) -> Option<(Failure, ReasonCode)> {
    let (kind, message, reason) = match e {
        ExchangeError::Cancelled => return None,
        ExchangeError::Provider(err) => (
            FailureKind::ProviderError,
            format!("{label}: the model endpoint failed: {err}"),
            ReasonCode::ProviderError,
        ),
        ExchangeError::Plugin(err) => (
            FailureKind::PluginError,
            format!("{label}: {err}"),
            ReasonCode::PluginError,
        ),
        ExchangeError::Invalid { message, truncated } => {
            if truncated {
                (
                    FailureKind::TruncatedOutput,
                    message,
                    ReasonCode::TruncatedOutput,
                )
            } else {
                (
                    FailureKind::InvalidOutput,
                    message,
                    ReasonCode::InvalidOutput,
                )
            }
        }
    };
    Some((
        Failure {
            kind,
            stage: Some(label.to_string()),
            message,
        },
        reason,
    ))
}

/// The policy paths a convention finding may cite as its written policy: the documents
/// the host recognises for this change and every policy document it gave (including the
/// repository's review instructions).
fn convention_policy_paths(env: &ReviewEnv) -> Vec<String> {
    let mut paths = policy_paths(&env.snapshot);
    for (doc, _) in &env.policy {
        if !paths.contains(&doc.path) {
            paths.push(doc.path.clone());
        }
    }
    paths
}

/// Rule (verification, convention boundary, [`convention_support`]): a verified decision
/// for a candidate in the conventions area stands only when its citations carry a written
/// policy at base or three distinct examples outside the change, and the finding lies in
/// a changed hunk. Returns why not, if not.
fn convention_gap(env: &ReviewEnv, c: &Candidate, decision: &Decision) -> Option<ConventionGap> {
    if c.area != CONVENTIONS_AREA {
        return None;
    }
    let f = decision.finding.as_ref()?;
    let location = SourceWindow {
        revision: c.revision,
        path: f.path.clone(),
        start_line: f.start_line,
        end_line: f.end_line,
    };
    convention_support(
        &location,
        &decision.citations,
        &env.snapshot.files,
        &convention_policy_paths(env),
    )
    .err()
}

/// What a candidate's state settles into.
enum Settled {
    Record(Box<CandidateRecord>),
    /// Verified without the finding in the batch pass: re-check alone.
    Focus,
}

/// Settles one candidate's state after pass number `passes` (1 = batch, 2 = focused):
/// verified findings are kept (convention findings only within their boundary), rejected
/// ones recorded, unresolved ones limit coverage, invalid decisions fail the review.
fn settle(
    env: &ReviewEnv,
    stage: &str,
    verifier: &str,
    c: &Candidate,
    state: Option<CandidateState>,
    passes: u8,
    run: &mut VerificationRun,
) -> Settled {
    let state = state.unwrap_or_else(|| CandidateState::Invalid {
        problem: DecisionProblem::MissingDecision {
            candidate_id: c.id.clone(),
        },
    });
    let record = match state {
        CandidateState::Verified { decision } => match convention_gap(env, c, &decision) {
            None => {
                run.findings.push(finding(c, &decision, verifier, passes));
                decided(c, &decision, passes)
            }
            Some(gap) => {
                let reason = format!("verified outside the convention boundary: {gap}");
                run.limitations.push(unresolved_limitation(c, &reason));
                CandidateRecord {
                    candidate: c.clone(),
                    verdict: Some(Verdict::Unresolved),
                    evidence: decision.evidence,
                    verification_passes: passes,
                    problem: Some(reason),
                }
            }
        },
        CandidateState::Rejected { decision } => decided(c, &decision, passes),
        CandidateState::Unresolved { decision } => {
            run.limitations
                .push(unresolved_limitation(c, &decision.evidence));
            decided(c, &decision, passes)
        }
        CandidateState::NeedsFocusedPass { .. } if passes == 1 => {
            env.diagnose(
                Some(verifier),
                "verification",
                None,
                ReasonCode::FocusedVerification,
            );
            return Settled::Focus;
        }
        CandidateState::NeedsFocusedPass { decision } => {
            let reason = "verified twice without the finding itself";
            run.limitations.push(unresolved_limitation(c, reason));
            CandidateRecord {
                candidate: c.clone(),
                verdict: Some(Verdict::Unresolved),
                evidence: decision.evidence,
                verification_passes: passes,
                problem: Some(reason.into()),
            }
        }
        CandidateState::Invalid { problem } => {
            env.diagnose(
                Some(stage),
                "verification",
                None,
                ReasonCode::InvalidDecision,
            );
            run.failures.push(Failure {
                kind: FailureKind::InvalidDecision,
                stage: Some(stage.to_string()),
                message: problem.to_string(),
            });
            undecided(c, &problem.to_string(), passes)
        }
    };
    Settled::Record(Box::new(record))
}

/// Records a pass's stray problems (decisions for ids the host never assigned).
fn stray_failures(
    env: &ReviewEnv,
    stage: &str,
    stray: Vec<DecisionProblem>,
    run: &mut VerificationRun,
) {
    for problem in stray {
        env.diagnose(
            Some(stage),
            "verification",
            None,
            ReasonCode::InvalidDecision,
        );
        run.failures.push(Failure {
            kind: FailureKind::InvalidDecision,
            stage: Some(stage.to_string()),
            message: problem.to_string(),
        });
    }
}

/// Records a failed pass: its record, and the failure (or the cancellation).
fn failed_pass(
    env: &ReviewEnv,
    mut record: StageRecord,
    e: ExchangeError,
    run: &mut VerificationRun,
) -> String {
    record.status = StageStatus::Failed;
    let why = match failure_of(&record.label, e) {
        None => {
            run.cancelled = true;
            record.status = StageStatus::Cancelled;
            "cancelled".to_string()
        }
        Some((f, reason)) => {
            let ledger = vouch_core::SourceLedger {
                windows: record.ledger.clone(),
            };
            env.diagnose_ledger(Some(&record.label), "verification", &ledger, reason);
            record.problem = Some(f.message.clone());
            let text = f.message.clone();
            run.failures.push(f);
            text
        }
    };
    run.records.push(record);
    why
}

/// Rule (verification): all candidates together in one pass, exactly one decision each;
/// a verified decision that omits its finding is re-checked alone (same prompt and
/// tools, a 4,000-token output budget) and a recovered finding records
/// `verificationPasses: 2`; omitted again → `unresolved` (no clean opinion, other
/// findings kept). Unknown ids, missing, duplicate or malformed decisions and unread
/// citations make the review incomplete. A verified convention finding outside its
/// boundary ([`convention_support`]) is `unresolved`, never published.
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
        Err((record, e)) => {
            failed_pass(env, record, e, &mut run);
            run.candidates = candidates
                .iter()
                .map(|c| undecided(c, "verification did not complete", 1))
                .collect();
            return run;
        }
    };
    run.records.push(batch.record);
    run.limitations.extend(batch.limitations);
    stray_failures(env, &plan.label, batch.stray, &mut run);
    for c in candidates {
        if run.cancelled || env.cancel.is_cancelled() {
            run.cancelled = true;
            run.candidates
                .push(undecided(c, "not decided: the review was cancelled", 1));
            continue;
        }
        let state = batch
            .states
            .iter()
            .find(|(id, _)| id == &c.id)
            .map(|(_, s)| s.clone());
        let record = match settle(env, &plan.label, &plan.label, c, state, 1, &mut run) {
            Settled::Record(r) => *r,
            Settled::Focus => focused(env, plan, c, &mut run).await,
        };
        run.candidates.push(record);
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
        Err((record, e)) => {
            let why = failed_pass(env, record, e, run);
            undecided(c, &why, 2)
        }
        Ok(p) => {
            run.records.push(p.record);
            run.limitations.extend(p.limitations);
            stray_failures(env, &label, p.stray, run);
            let state = p.states.into_iter().next().map(|(_, s)| s);
            match settle(env, &label, &plan.label, c, state, 2, run) {
                Settled::Record(r) => *r,
                Settled::Focus => unreachable!("a focused pass never asks for another"),
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

fn undecided(c: &Candidate, why: &str, passes: u8) -> CandidateRecord {
    CandidateRecord {
        candidate: c.clone(),
        verdict: None,
        evidence: String::new(),
        verification_passes: passes,
        problem: Some(why.to_string()),
    }
}
