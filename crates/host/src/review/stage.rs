//! A candidate-producing stage instance: prompt → exchange → receipt check → at most one
//! targeted coverage retry.

use serde_json::Value;
use vouch_abi::contract::{ContractRequest, MAX_CANDIDATES, token_bound};
use vouch_abi::{
    CandidateReply, PAYLOAD_VERSION, ParsedReply, PromptRequest, ProposedCandidate, Role,
};
use vouch_core::{
    Candidate, CoverageComparison, CoverageReceipt, Failure, FailureKind, Limitation,
    LimitationKind, Revision, Severity, StageRecord, StageStatus, TokenUsage, candidate_id,
    compare_coverage, mismatch_after_retry_message,
};
use vouch_llm::Budget;

use super::env::ReviewEnv;
use super::inline;
use super::reply::{Answer, Exchange, ExchangeError, exchange};
use crate::diagnostics::ReasonCode;
use crate::policy::{
    compose_user_message, coverage_retry_message, expected_files_section, inline_context_section,
    output_contract_section, tools_section,
};
use crate::progress::ProgressEvent;
use crate::registry::SpecialistHandle;
use crate::tools::RepoTools;

/// One planned stage instance.
#[derive(Clone)]
pub struct StagePlan {
    /// Stable label (e.g. `bug-review #2`).
    pub label: String,
    /// The specialist.
    pub handle: SpecialistHandle,
    /// Its assigned canonical files (sorted, unique, current paths).
    pub assigned: Vec<String>,
    /// Agent budget.
    pub budget: Budget,
    /// The specialist's own model, if it names one.
    pub model: Option<String>,
}

/// What a finished candidate stage contributes to the review.
pub struct StageRun {
    /// Per-instance record for the report.
    pub record: StageRecord,
    /// Candidates with host-assigned ids (empty unless accepted or limited).
    pub candidates: Vec<Candidate>,
    /// A failure (the review is incomplete).
    pub failure: Option<Failure>,
    /// Limitations (coverage is limited).
    pub limitations: Vec<Limitation>,
    /// Observations for the report.
    pub observations: Vec<String>,
    /// The user-facing message to print (e.g. a coverage mismatch after retry).
    pub message: Option<String>,
    /// True when cancelled.
    pub cancelled: bool,
}

fn gets_intent(role: Role) -> bool {
    matches!(role, Role::OutcomeInvestigator | Role::Reviewer)
}

/// A fresh record of a stage instance of `handle` labelled `label` with `assigned`
/// files: accepted until something says otherwise.
pub(super) fn stage_record(label: &str, handle: &SpecialistHandle, assigned: usize) -> StageRecord {
    let d = handle.descriptor();
    StageRecord {
        label: label.to_string(),
        specialist: d.id.clone(),
        version: d.version.clone(),
        role: d.role.as_str().to_string(),
        status: StageStatus::Accepted,
        assigned_files: assigned,
        coverage: None,
        retried: false,
        first_coverage: None,
        repaired: false,
        receipt_downgraded: false,
        candidates: 0,
        budget_hit: None,
        forced_synthesis: false,
        source_windows: 0,
        ledger: Vec::new(),
        model: None,
        usage: TokenUsage::default(),
        summary: String::new(),
        problem: None,
    }
}

/// Builds the prompt request for a stage instance (intent only for roles that get it).
fn prompt_request(env: &ReviewEnv, plan: &StagePlan) -> PromptRequest {
    let role = plan.handle.descriptor().role;
    PromptRequest {
        payload_version: PAYLOAD_VERSION,
        label: plan.label.clone(),
        change: env.change_summary(&plan.assigned),
        intent: if gets_intent(role) {
            env.intent.clone()
        } else {
            None
        },
        policy_evidence: env.policy.iter().map(|(d, _)| d.clone()).collect(),
        candidates: vec![],
        tools_available: env.tools_enabled(),
    }
}

/// The candidate reply with the repair rule applied: a repaired `complete: true` counts
/// only when its `fullCoverageQuote` occurs verbatim in the prior reply; otherwise it is
/// recorded as `complete: false` (returns true when it downgraded).
fn checked_reply(answer: &Answer) -> Option<(CandidateReply, bool)> {
    let ParsedReply::Candidates(mut reply) = answer.parsed.clone() else {
        return None;
    };
    let mut downgraded = false;
    if answer.repaired && reply.coverage.complete {
        let quoted = reply
            .full_coverage_quote
            .as_deref()
            .map(str::trim)
            .is_some_and(|q| !q.is_empty() && answer.prior_text.contains(q));
        if !quoted {
            reply.coverage.complete = false;
            downgraded = true;
        }
    }
    Some((reply, downgraded))
}

fn to_candidate(label: &str, index: usize, p: &ProposedCandidate) -> Candidate {
    Candidate {
        id: candidate_id(label, index),
        proposed_by: label.to_string(),
        path: p.path.clone(),
        revision: if p.revision == "base" {
            Revision::Base
        } else {
            Revision::Head
        },
        start_line: p.start_line,
        end_line: p.end_line,
        severity: Severity::parse(&p.severity).unwrap_or(Severity::Low),
        area: p.area.clone(),
        claim: p.claim.clone(),
        evidence: p.evidence.clone(),
    }
}

/// Rule (coverage contract): a receipt is accepted when it is exact; a parsed receipt
/// with `complete: false`, missing or unexpected files reruns only this instance, once,
/// with the original task, the canonical list, its previous output and the exact
/// mismatch; a second mismatch fails the instance with the exact mismatch message.
/// Execution failures, invalid output after repair and cancellation never retry.
pub async fn run_candidate_stage(env: &ReviewEnv, plan: &StagePlan) -> StageRun {
    env.progress(ProgressEvent::StageStarted {
        label: plan.label.clone(),
    });
    let mut run = StageRun {
        record: stage_record(&plan.label, &plan.handle, plan.assigned.len()),
        candidates: vec![],
        failure: None,
        limitations: vec![],
        observations: vec![],
        message: None,
        cancelled: false,
    };
    let tools = RepoTools::new(env.reader.clone());
    let outcome = drive(env, plan, &tools, &mut run).await;
    run.record.ledger = tools.ledger().windows;
    run.record.source_windows = run.record.ledger.len();
    if tools.lookup_failures() > 0 {
        run.limitations.push(Limitation {
            kind: LimitationKind::SourceLookupGap,
            stage: Some(plan.label.clone()),
            detail: format!(
                "{} repository tool call(s) of {} failed to retrieve source",
                tools.lookup_failures(),
                plan.label
            ),
        });
        env.diagnose(
            Some(&plan.label),
            "lane",
            Some(run.record.source_windows as u64),
            ReasonCode::SourceLookupGap,
        );
    }
    match outcome {
        Ok(()) => {}
        Err(ExchangeError::Cancelled) => {
            run.cancelled = true;
            run.record.status = StageStatus::Cancelled;
            run.candidates.clear();
        }
        Err(e) => {
            let (kind, message, reason) = match e {
                ExchangeError::Provider(err) => (
                    FailureKind::ProviderError,
                    format!("{}: the model endpoint failed: {err}", plan.label),
                    ReasonCode::ProviderError,
                ),
                ExchangeError::Plugin(err) => (
                    FailureKind::PluginError,
                    format!("{}: {err}", plan.label),
                    ReasonCode::PluginError,
                ),
                ExchangeError::Invalid { message, truncated } => {
                    // Output is invalid only after its one isolated repair ran.
                    run.record.repaired = true;
                    (
                        if truncated {
                            FailureKind::TruncatedOutput
                        } else {
                            FailureKind::InvalidOutput
                        },
                        message,
                        ReasonCode::InvalidOutput,
                    )
                }
                ExchangeError::Cancelled => unreachable!("handled above"),
            };
            env.diagnose_ledger(Some(&plan.label), "lane", &tools.ledger(), reason);
            run.record.status = StageStatus::Failed;
            run.record.problem = Some(message.clone());
            run.failure = Some(Failure {
                kind,
                stage: Some(plan.label.clone()),
                message,
            });
            run.candidates.clear();
        }
    }
    if run.record.status == StageStatus::Accepted && !run.limitations.is_empty() {
        run.record.status = StageStatus::Limited;
    }
    if run.record.status == StageStatus::Accepted {
        env.diagnose_ledger(
            Some(&plan.label),
            "lane",
            &tools.ledger(),
            ReasonCode::StageCompleted,
        );
    }
    run.record.candidates = run.candidates.len();
    env.progress(ProgressEvent::StageFinished {
        label: plan.label.clone(),
        candidates: run.candidates.len(),
        failed: run.record.status == StageStatus::Failed,
    });
    run
}

/// The stage's messages: system from the plugin; user = the plugin's task plus the
/// host's sections (inline source, expected files, tools, output contract).
fn messages(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    schema: &Value,
) -> Result<(String, String, Vec<String>), ExchangeError> {
    let prompt = plan
        .handle
        .render_prompt(&prompt_request(env, plan))
        .map_err(ExchangeError::Plugin)?;
    let inline = inline::patches(env, tools, &plan.assigned);
    for (_, window) in &env.policy {
        if let Some(w) = window {
            tools.record(w.clone());
        }
    }
    let mut sections = vec![inline_context_section(&inline.blocks, &inline.omitted)];
    if env.tools_enabled() {
        sections.push(tools_section(
            vouch_git::reader::MAX_LINES,
            vouch_git::reader::MAX_BYTES as u32,
            vouch_git::reader::MAX_GREP_MATCHES as u32,
        ));
    }
    sections.push(expected_files_section(&plan.assigned));
    sections.push(output_contract_section(schema));
    let mut gaps = inline.failed;
    if !env.tools_enabled() {
        for p in inline.omitted {
            if !gaps.contains(&p) {
                gaps.push(p);
            }
        }
    }
    Ok((
        prompt.system,
        compose_user_message(&prompt.user, &sections),
        gaps,
    ))
}

/// Rule (structured outputs): a final answer's `max_tokens` covers its contract's bound.
/// The host therefore lowers the contract's candidate cap until the bound
/// ([`token_bound`]) fits the stage's output-token budget, down to one candidate; a
/// contract that still does not fit is requested with `max_tokens` at its bound.
fn fitted_contract(
    plan: &StagePlan,
) -> Result<(ContractRequest, Value), crate::registry::PluginError> {
    let budget = u64::from(plan.budget.max_output_tokens_per_request);
    let mut request = ContractRequest {
        expected_files: plan.assigned.clone(),
        candidate_ids: vec![],
        repair: false,
        max_candidates: None,
    };
    for cap in (1..=MAX_CANDIDATES).rev() {
        request.max_candidates = Some(cap);
        let schema = plan.handle.contract(&request)?;
        if cap == 1 || token_bound(&schema) <= budget {
            return Ok((request, schema));
        }
    }
    unreachable!("the loop returns at cap 1")
}

async fn drive(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    run: &mut StageRun,
) -> Result<(), ExchangeError> {
    let (request, schema) = fitted_contract(plan).map_err(ExchangeError::Plugin)?;
    let repair_schema = plan
        .handle
        .contract(&ContractRequest {
            repair: true,
            ..request
        })
        .map_err(ExchangeError::Plugin)?;
    let (system, user, gaps) = messages(env, plan, tools, &schema)?;
    if !gaps.is_empty() {
        // Which hunks the missing patches hold is unknown here: `hunkCount` is null.
        env.diagnose(
            Some(&plan.label),
            "lane",
            Some(tools.ledger().windows.len() as u64),
            ReasonCode::SourceLookupGap,
        );
        run.limitations.push(Limitation {
            kind: LimitationKind::SourceLookupGap,
            stage: Some(plan.label.clone()),
            detail: format!(
                "patches not available to {} without tools: {}",
                plan.label,
                gaps.join(", ")
            ),
        });
    }
    let ask = |user: String| Exchange {
        label: &plan.label,
        handle: &plan.handle,
        system: system.clone(),
        user,
        schema: schema.clone(),
        repair_schema: repair_schema.clone(),
        expected: Some(&plan.assigned),
        budget: plan.budget,
        tools,
        model: plan.model.as_deref(),
    };
    let first = exchange(env, ask(user.clone())).await?;
    let (reply, comparison) = absorb(env, run, &first, plan);
    if comparison.complete {
        return accept(run, plan, reply, &first);
    }
    // A cancelled review starts no retry (not even its progress event).
    if env.cancel.is_cancelled() {
        return Err(ExchangeError::Cancelled);
    }
    // One targeted retry of this instance only.
    env.progress(ProgressEvent::ReviewerCoverageRetry {
        label: plan.label.clone(),
        missing: comparison.missing_files.len(),
        unexpected: comparison.unexpected_files.len(),
        reported_incomplete: comparison.reported_incomplete,
    });
    env.diagnose_ledger(
        Some(&plan.label),
        "retry",
        &tools.ledger(),
        ReasonCode::CoverageRetry,
    );
    run.record.retried = true;
    run.record.first_coverage = Some(comparison.clone());
    let retry_user = format!(
        "{}\n\n{}",
        user.trim_end(),
        coverage_retry_message(&plan.assigned, &first.value, &comparison)
    );
    let second = exchange(env, ask(retry_user)).await?;
    let (reply, comparison) = absorb(env, run, &second, plan);
    if comparison.complete {
        return accept(run, plan, reply, &second);
    }
    // Rule 6 holds in every composition and whatever ended the retry: a receipt still
    // mismatched after its one retry fails the instance (the review is incomplete and
    // nothing is published), also when a budget forced the retry's final answer.
    let message = mismatch_after_retry_message(&plan.label, &comparison);
    env.diagnose_ledger(
        Some(&plan.label),
        "retry",
        &tools.ledger(),
        ReasonCode::CoverageMismatch,
    );
    run.record.status = StageStatus::Failed;
    run.record.problem = Some(message.clone());
    run.failure = Some(Failure {
        kind: FailureKind::CoverageMismatch,
        stage: Some(plan.label.clone()),
        message: message.clone(),
    });
    run.message = Some(message);
    Ok(())
}

/// Records an answer's bookkeeping and compares its receipt. A repaired receipt that was
/// downgraded to `complete: false` is made visible: a report observation, the record's
/// `receiptDowngraded` flag and a `repair-quote-missing` diagnostic.
fn absorb(
    env: &ReviewEnv,
    run: &mut StageRun,
    answer: &Answer,
    plan: &StagePlan,
) -> (CandidateReply, CoverageComparison) {
    run.record.usage.add(answer.usage);
    run.record.repaired |= answer.repaired;
    run.record.forced_synthesis |= answer.forced_synthesis;
    if answer.budget_hit.is_some() {
        run.record.budget_hit = answer.budget_hit.clone();
    }
    let (reply, downgraded) = checked_reply(answer).unwrap_or_else(|| {
        (
            CandidateReply {
                candidates: vec![],
                coverage: Default::default(),
                full_coverage_quote: None,
                summary: String::new(),
            },
            false,
        )
    });
    if downgraded {
        env.diagnose(
            Some(&plan.label),
            "repair",
            None,
            ReasonCode::RepairQuoteMissing,
        );
        run.record.receipt_downgraded = true;
        run.observations.push(format!(
            "{}: the repaired reply claimed full coverage without quoting the prior reply's statement verbatim; recorded as complete: false",
            plan.label
        ));
    }
    let receipt = CoverageReceipt {
        complete: reply.coverage.complete,
        reviewed_files: reply.coverage.reviewed_files.clone(),
    };
    let comparison = compare_coverage(&plan.assigned, &receipt);
    run.record.coverage = Some(comparison.clone());
    (reply, comparison)
}

fn accept(
    run: &mut StageRun,
    plan: &StagePlan,
    reply: CandidateReply,
    answer: &Answer,
) -> Result<(), ExchangeError> {
    run.record.summary = reply.summary.clone();
    if let Some(kind) = &answer.budget_hit {
        run.limitations.push(Limitation {
            kind: LimitationKind::BudgetHit,
            stage: Some(plan.label.clone()),
            detail: format!("{} hit its {kind} budget", plan.label),
        });
    }
    run.candidates = reply
        .candidates
        .iter()
        .enumerate()
        .map(|(i, p)| to_candidate(&plan.label, i, p))
        .collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_abi::Coverage;

    fn answer(repaired: bool, complete: bool, quote: Option<&str>, prior: &str) -> Answer {
        Answer {
            parsed: ParsedReply::Candidates(CandidateReply {
                candidates: vec![],
                coverage: Coverage {
                    complete,
                    reviewed_files: vec!["a.rs".into(), "b.md".into()],
                },
                full_coverage_quote: quote.map(str::to_string),
                summary: String::new(),
            }),
            value: Value::Null,
            prior_text: prior.to_string(),
            repaired,
            usage: TokenUsage::default(),
            budget_hit: None,
            forced_synthesis: false,
        }
    }

    /// Rule 3: a repaired `complete: true` stands only when its quote occurs verbatim in
    /// the prior reply; otherwise it is recorded as `complete: false` (downgraded).
    /// Unrepaired replies and repaired `complete: false` are never touched.
    #[test]
    fn repaired_full_coverage_needs_a_verbatim_quote() {
        let prior = "Analysis done. I reviewed all 2 expected files, including b.md.";
        // (repaired, complete, quote, complete after, downgraded)
        let cases: &[(bool, bool, Option<&str>, bool, bool)] = &[
            (
                true,
                true,
                Some("I reviewed all 2 expected files"),
                true,
                false,
            ),
            (
                true,
                true,
                Some("  I reviewed all 2 expected files  "),
                true,
                false,
            ),
            (
                true,
                true,
                Some("I reviewed all expected files"),
                false,
                true,
            ),
            (
                true,
                true,
                Some("i reviewed all 2 expected files"),
                false,
                true,
            ),
            (true, true, Some("   "), false, true),
            (true, true, None, false, true),
            (true, false, None, false, false),
            (false, true, None, true, false),
            (false, true, Some("not in the reply"), true, false),
        ];
        for &(repaired, complete, quote, want_complete, want_downgraded) in cases {
            let (reply, downgraded) =
                checked_reply(&answer(repaired, complete, quote, prior)).unwrap();
            assert_eq!(
                (reply.coverage.complete, downgraded),
                (want_complete, want_downgraded),
                "repaired {repaired}, complete {complete}, quote {quote:?}"
            );
            assert_eq!(reply.coverage.reviewed_files, ["a.rs", "b.md"]);
        }
    }
}
