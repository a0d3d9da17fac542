//! A candidate-producing stage instance: prompt → exchange → receipt check → at most one
//! targeted coverage retry.

use vouch_abi::{
    DismissedForVerification, MAX_CANDIDATES, MAX_DISMISSED_CONCERNS, PAYLOAD_VERSION,
    PromptRequest, Role,
};
use vouch_core::{
    Candidate, CandidateLocation, CoverageComparison, Failure, FailureKind, IssueStep, Limitation,
    LimitationKind, PastRepairBound, ReceiptProblem, ReplyIssue, StageRecord, StageStatus,
    candidate_id, carried_candidates, compare_coverage, forced_synthesis_limits,
    mismatch_after_retry_message, repaired_full_coverage,
};

use super::concerns;
use super::contract::fitted_contract;
use super::env::ReviewEnv;
pub(super) use super::exec::stage_record;
use super::exec::{Execution, Prepared, StageKind, fail, note_answer, prepare};
use super::inline::{self, InlineSource};
use super::prefetch;
use super::reply::{Answer, CandidateAnswer, ExchangeError, ProposedDraft, TypedReply};
pub(crate) use super::stage_plan::{HunkPiece, ShardLimits, StagePlan};
use crate::diagnostics::ReasonCode;
use crate::policy::{PreviousAnswer, RetrySource, coverage_retry_message};
use crate::progress::ProgressEvent;
use crate::tools::RepoTools;

/// What a finished candidate stage contributes to the review.
pub(crate) struct StageRun {
    /// Per-instance record for the report.
    pub(crate) record: StageRecord,
    /// Candidates with host-assigned ids (empty unless accepted or limited).
    pub(crate) candidates: Vec<Candidate>,
    /// A failure (the review is incomplete).
    pub(crate) failure: Option<Failure>,
    /// Limitations (coverage is limited).
    pub(crate) limitations: Vec<Limitation>,
    /// Observations for the report.
    pub(crate) observations: Vec<String>,
    /// The user-facing message to print (e.g. a coverage mismatch after retry).
    pub(crate) message: Option<String>,
    /// True when cancelled.
    pub(crate) cancelled: bool,
    /// Concerns it checked and dismissed (for the verifier; also observations).
    pub(crate) dismissed: Vec<DismissedForVerification>,
}

impl StageRun {
    /// A run with `record` and nothing else yet.
    pub(super) fn new(record: StageRecord) -> StageRun {
        StageRun {
            record,
            candidates: vec![],
            failure: None,
            limitations: vec![],
            observations: vec![],
            message: None,
            cancelled: false,
            dismissed: vec![],
        }
    }
}

fn gets_intent(role: Role) -> bool {
    matches!(role, Role::OutcomeInvestigator | Role::Reviewer)
}

/// Builds the prompt request for a stage instance (intent only for roles that get it).
pub(super) fn prompt_request(env: &ReviewEnv, plan: &StagePlan) -> PromptRequest {
    let role = plan.handle.descriptor().role;
    PromptRequest {
        payload_version: PAYLOAD_VERSION,
        label: plan.label.clone(),
        change: env.change_summary(&plan.assigned),
        intent: if gets_intent(role) {
            env.inputs.intent.clone()
        } else {
            None
        },
        policy_evidence: env.inputs.policy.iter().map(|(d, _)| d.clone()).collect(),
        candidates: vec![],
        dismissed_concerns: vec![],
        tools_available: env.tools_enabled(),
    }
}

/// The candidate reply with the repair rule for receipts ([`repaired_full_coverage`])
/// applied: a repaired `complete: true` stands only when the prior reply's own JSON
/// receipt was complete with exactly the expected files; otherwise it is recorded as
/// `complete: false` (the problem is returned).
fn checked_reply(
    answer: &Answer,
    expected: &[String],
) -> (CandidateAnswer, Option<ReceiptProblem>) {
    let TypedReply::Candidates(mut reply) = answer.reply.clone() else {
        unreachable!("a candidate stage's exchange returns candidates")
    };
    let mut problem = None;
    if answer.repaired
        && reply.receipt.complete
        && let Err(p) = repaired_full_coverage(&answer.prior_text, expected)
    {
        reply.receipt.complete = false;
        problem = Some(p);
    }
    (reply, problem)
}

fn to_candidate(label: &str, index: usize, p: &ProposedDraft) -> Candidate {
    Candidate {
        id: candidate_id(label, index),
        proposed_by: label.to_string(),
        path: p.path.clone(),
        revision: p.revision,
        start_line: p.start_line,
        end_line: p.end_line,
        severity: p.severity,
        area: p.area,
        claim: p.claim.clone(),
        evidence: p.evidence.clone(),
    }
}

/// Rule (coverage contract): a receipt is accepted when it is exact; a parsed receipt
/// with `complete: false`, missing or unexpected files reruns only this instance, once,
/// with the original task, the canonical list, its previous output and the exact
/// mismatch; a second mismatch fails the instance with the exact mismatch message.
/// Execution failures, invalid output after repair and cancellation never retry.
pub(crate) async fn run_candidate_stage(env: &ReviewEnv, plan: &StagePlan) -> StageRun {
    env.progress(ProgressEvent::StageStarted {
        label: plan.label.clone(),
    });
    let kind = StageKind::of_role(plan.handle.descriptor().role);
    let mut run = StageRun::new(stage_record(&plan.label, &plan.handle, plan.assigned.len()));
    let tools = env.tools();
    let outcome = drive(env, plan, kind, &tools, &mut run).await;
    run.record.set_ledger(tools.ledger());
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
            kind.as_str(),
            Some(run.record.source_windows as u64),
            ReasonCode::SourceLookupGap,
        );
    }
    if let Err(e) = outcome {
        run.failure = fail(env, kind, &mut run.record, e);
        run.cancelled = run.record.status == StageStatus::Cancelled;
        run.candidates.clear();
    }
    if run.record.status == StageStatus::Accepted && !run.limitations.is_empty() {
        run.record.status = StageStatus::Limited;
    }
    if run.record.status == StageStatus::Accepted {
        env.diagnose_ledger(
            Some(&plan.label),
            kind.as_str(),
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

/// Patches without tools that the stage could not be given (over the inline budget or
/// not retrievable): a source lookup gap.
fn tools_off_gaps(env: &ReviewEnv, inline: &InlineSource) -> Vec<String> {
    let mut gaps = inline.failed.clone();
    if !env.tools_enabled() {
        for p in &inline.omitted {
            if !gaps.contains(p) {
                gaps.push(p.clone());
            }
        }
    }
    gaps
}

/// Runs one stage execution: its contract, inline source and prefetch, the first
/// exchange, and (when the receipt does not match) its one coverage retry.
async fn drive(
    env: &ReviewEnv,
    plan: &StagePlan,
    kind: StageKind,
    tools: &RepoTools,
    run: &mut StageRun,
) -> Result<(), ExchangeError> {
    // A cancelled review prepares nothing more (no patches, no prefetch).
    if env.services.cancel.is_cancelled() {
        return Err(ExchangeError::Cancelled);
    }
    let contract = fitted_contract(&env.memo.fitted_caps, plan).map_err(ExchangeError::Plugin)?;
    let inline = super::env::off_the_runtime(|| inline::shard_source(env, tools, plan));
    let gaps = tools_off_gaps(env, &inline);
    if !gaps.is_empty() {
        // Which hunks the missing patches hold is unknown here: `hunkCount` is null.
        env.diagnose(
            Some(&plan.label),
            kind.as_str(),
            Some(tools.ledger().recorded() as u64),
            ReasonCode::SourceLookupGap,
        );
    }
    let prefetched = super::env::off_the_runtime(|| {
        prefetch::prefetch(env, tools, &plan.assigned, plan.prefetch_tokens)
    });
    run.record.prefetch = prefetched.record;
    let prepared = prepare(
        env,
        Execution {
            kind,
            label: &plan.label,
            plan,
            request: prompt_request(env, plan),
            contract,
            inline: &inline,
            prefetch: &prefetched.section,
            tools,
        },
    )?;
    let first = prepared
        .ask(env, prepared.user.clone())
        .await
        .map_err(|f| f.noted(&mut run.record))?;
    let (reply, comparison, downgraded) = absorb(env, run, &first, plan, &plan.assigned);
    if comparison.complete {
        return accept(run, plan, reply, &first, &gaps);
    }
    // A cancelled review starts no retry (not even its progress event).
    if env.services.cancel.is_cancelled() {
        return Err(ExchangeError::Cancelled);
    }
    let first = FirstTry {
        answer: &first,
        candidates: reply.candidates,
        comparison,
        downgraded,
        gaps,
    };
    retry(env, plan, tools, run, &prepared, first).await
}

/// What a stage's first exchange leaves for its coverage retry: its answer and the
/// candidates it proposed, the receipt's comparison, why a repaired `complete: true` was
/// recorded as `complete: false` (if it was) and the files that could not be given
/// without tools.
struct FirstTry<'a> {
    answer: &'a Answer,
    candidates: Vec<ProposedDraft>,
    comparison: CoverageComparison,
    downgraded: Option<ReceiptProblem>,
    gaps: Vec<String>,
}

/// Rules 5–7 (coverage retry): one targeted retry of this instance only, after the
/// first message; the retry's receipt must cover what could be given, else the instance
/// fails ([`fail_after_retry`]).
async fn retry(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    run: &mut StageRun,
    prepared: &Prepared<'_>,
    first: FirstTry<'_>,
) -> Result<(), ExchangeError> {
    let FirstTry {
        answer,
        candidates: first_candidates,
        comparison,
        downgraded,
        gaps,
    } = first;
    note_retry(env, plan, tools, run, (&comparison, downgraded));
    let source = retry_source(env, &comparison.missing_files, &gaps);
    let retry_user = format!(
        "{}\n\n{}",
        prepared.user.trim_end(),
        coverage_retry_message(
            &plan.assigned,
            previous_answer(answer, downgraded),
            &comparison,
            &source,
            plan.retry_answer_bytes,
        )
    );
    let second = prepared
        .ask(env, retry_user)
        .await
        .map_err(|f| f.noted(&mut run.record))?;
    // Files that could not be given without tools are a stated source gap, not part
    // of what the retry's receipt must cover.
    let coverable: Vec<String> = plan
        .assigned
        .iter()
        .filter(|p| !gaps.contains(p))
        .cloned()
        .collect();
    let (mut reply, comparison, downgraded) = absorb(env, run, &second, plan, &coverable);
    if comparison.complete {
        carry_candidates(run, plan, first_candidates, &mut reply);
        return accept(run, plan, reply, &second, &gaps);
    }
    fail_after_retry(env, plan, tools, run, (&comparison, downgraded));
    Ok(())
}

/// What the retry shows of the first answer: its structured output, or, when a repaired
/// claim of full coverage was not taken, the reply as the model wrote it.
fn previous_answer(answer: &Answer, downgraded: Option<ReceiptProblem>) -> PreviousAnswer<'_> {
    match downgraded {
        Some(problem) => PreviousAnswer::Downgraded {
            reply: &answer.prior_text,
            problem,
        },
        None => PreviousAnswer::Output(&answer.value),
    }
}

/// Rule ([`carried_candidates`]): the first answer's candidates that the retry's answer
/// left out are kept beside it, for the verifier to decide, and the report says so.
fn carry_candidates(
    run: &mut StageRun,
    plan: &StagePlan,
    first: Vec<ProposedDraft>,
    reply: &mut CandidateAnswer,
) {
    let before: Vec<CandidateLocation> = first.iter().map(ProposedDraft::location).collect();
    let after: Vec<CandidateLocation> = reply
        .candidates
        .iter()
        .map(ProposedDraft::location)
        .collect();
    let carried = carried_candidates(&before, &after);
    if carried.is_empty() {
        return;
    }
    let places: Vec<String> = carried
        .iter()
        .map(|&i| {
            format!(
                "{}:{}-{}",
                before[i].path, before[i].start_line, before[i].end_line
            )
        })
        .collect();
    run.observations.push(format!(
        "{}: its coverage retry left out {} candidate(s) of its first answer ({}); they are kept for verification",
        plan.label,
        carried.len(),
        places.join(", ")
    ));
    reply
        .candidates
        .extend(carried.iter().map(|&i| first[i].clone()));
}

/// Says that the instance is retried, and why: progress, diagnostics and the record's
/// reply issue (the receipt's mismatch).
fn note_retry(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    run: &mut StageRun,
    (comparison, downgraded): (&CoverageComparison, Option<ReceiptProblem>),
) {
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
    run.record.reply_issues.push(ReplyIssue::new(
        IssueStep::CoverageRetry,
        Some("/coverage".to_string()),
        &comparison.retry_reason(downgraded),
    ));
    run.record.first_coverage = Some(comparison.clone());
}

/// Rule 6 holds in every composition and whatever ended the retry: a receipt still
/// mismatched after its one retry fails the instance (the review is incomplete and
/// nothing is published), also when a budget forced the retry's final answer.
fn fail_after_retry(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    run: &mut StageRun,
    (comparison, downgraded): (&CoverageComparison, Option<ReceiptProblem>),
) {
    let message = mismatch_after_retry_message(&plan.label, comparison, downgraded);
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
        detail: None,
    });
    run.message = Some(message);
}

/// Rule (coverage retry, issue #9 item 12; issue 28): with tools the retry asks the
/// model to inspect the missing files; without tools it repeats the first request, which
/// holds the missing files' source, and points to it there rather than giving it again
/// (so a shard's content counts once in its largest request); a missing file the first
/// request could not give (`gaps`) stays a source gap stated as such.
fn retry_source(env: &ReviewEnv, missing: &[String], gaps: &[String]) -> RetrySource {
    if env.tools_enabled() {
        return RetrySource::Tools;
    }
    RetrySource::Inline {
        unavailable: missing
            .iter()
            .filter(|p| gaps.contains(p))
            .cloned()
            .collect(),
    }
}

/// Records an answer's bookkeeping and compares its receipt with `expected`. A repaired
/// receipt that was downgraded to `complete: false` is made visible: a report
/// observation naming why, the record's `receiptDowngraded` flag and a
/// `repair-quote-missing` diagnostic; why is returned too.
fn absorb(
    env: &ReviewEnv,
    run: &mut StageRun,
    answer: &Answer,
    plan: &StagePlan,
    expected: &[String],
) -> (CandidateAnswer, CoverageComparison, Option<ReceiptProblem>) {
    note_answer(&mut run.record, answer);
    let (mut reply, downgraded) = checked_reply(answer, &plan.assigned);
    bound_candidates(run, plan, &mut reply);
    name_past_repair_bound(run, plan, &answer.past_repair_bound);
    if let Some(problem) = downgraded {
        env.diagnose(
            Some(&plan.label),
            "repair",
            None,
            ReasonCode::RepairQuoteMissing,
        );
        run.record.receipt_downgraded = true;
        run.observations.push(format!(
            "{}: the repaired reply claimed full coverage, but {problem}; recorded as complete: false",
            plan.label
        ));
    }
    // A file the host could not give (tools off) may be named or left out alike.
    let mut receipt = reply.receipt.clone();
    receipt
        .reviewed_files
        .retain(|p| expected.contains(p) || !plan.assigned.contains(p));
    let comparison = compare_coverage(expected, &receipt);
    run.record.coverage = Some(comparison.clone());
    let stated = run
        .limitations
        .iter()
        .any(|l| l.kind == LimitationKind::ForcedSynthesis);
    if forced_synthesis_limits(answer.spent.forced_synthesis, &comparison) && !stated {
        run.limitations.push(Limitation {
            kind: LimitationKind::ForcedSynthesis,
            stage: Some(plan.label.clone()),
            detail: format!(
                "{} ran out of budget and was asked for its answer without tools; that \
                 answer's coverage receipt was incomplete",
                plan.label
            ),
        });
    }
    (reply, comparison, downgraded)
}

/// Most characters of a claim an observation quotes.
const MAX_QUOTED_CLAIM_CHARS: usize = 200;

/// Rule (a reply's bound): the contract asks for at most [`MAX_CANDIDATES`] candidates,
/// but a reply that raises more is not refused for it (each is well formed, and refusing
/// would fail the stage). The first [`MAX_CANDIDATES`] go on to verification; each one
/// past the bound is named with its claim in an observation and limits coverage
/// (`unverifiable-candidate`), so the review is never clean, and it costs the others
/// nothing. A retry that raises the same one again names it once.
fn bound_candidates(run: &mut StageRun, plan: &StagePlan, reply: &mut CandidateAnswer) {
    let bound = MAX_CANDIDATES as usize;
    if reply.candidates.len() <= bound {
        return;
    }
    let raised = reply.candidates.len();
    let mut places = Vec::new();
    for p in reply.candidates.split_off(bound) {
        let claim = p.claim.trim();
        let quoted: String = claim.chars().take(MAX_QUOTED_CLAIM_CHARS).collect();
        let cut = if quoted.len() < claim.len() {
            "…"
        } else {
            ""
        };
        let at = format!(
            "{}:{}-{} at {} ({quoted}{cut})",
            p.path,
            p.start_line,
            p.end_line,
            p.revision.as_str()
        );
        let why = format!("past the bound of {bound} candidates a reply may carry");
        if name_unverified(run, plan, &format!("candidate {at}"), &why) {
            places.push(at);
        }
    }
    if !places.is_empty() {
        run.observations.push(format!(
            "{}: its reply raised {raised} candidates, more than the {bound} a reply may \
             carry; the first {bound} go on to verification and these were not verified: {}",
            plan.label,
            places.join("; ")
        ));
    }
}

/// Limits coverage with an `unverifiable-candidate` naming `what` of `plan`'s reply and
/// `why` it was not verified; false when the same was named before (a retry that raises
/// the same candidate again names it once; another claim at the same place is another
/// candidate).
fn name_unverified(run: &mut StageRun, plan: &StagePlan, what: &str, why: &str) -> bool {
    name_unverified_n(run, plan, (what, 1), why)
}

/// [`name_unverified`] for `count` candidates named together.
fn name_unverified_n(
    run: &mut StageRun,
    plan: &StagePlan,
    (what, count): (&str, usize),
    why: &str,
) -> bool {
    let was = if count == 1 { "was" } else { "were" };
    let detail = format!("{what} of {} {was} not verified ({why})", plan.label);
    if run.limitations.iter().any(|l| l.detail == detail) {
        return false;
    }
    run.limitations.push(Limitation {
        kind: LimitationKind::UnverifiableCandidate,
        stage: Some(plan.label.clone()),
        detail,
    });
    true
}

/// Rule (a repair's bound): a repair's contract holds at most [`MAX_CANDIDATES`]
/// candidates, so a broken reply that raised more cannot be repaired whole. What the
/// repair could not hold ([`PastRepairBound`]) is named like a reply's candidates past
/// its bound: each complete candidate and prose place by where it is, the rest (written
/// too brokenly to locate) by count; each limits coverage.
fn name_past_repair_bound(run: &mut StageRun, plan: &StagePlan, past: &PastRepairBound) {
    if past.count == 0 {
        return;
    }
    let bound = MAX_CANDIDATES as usize;
    let why = format!("its reply needed repair, and a repair carries at most {bound} candidates");
    let places = past
        .candidates
        .iter()
        .map(|c| format!("{}:{}-{}", c.path, c.start_line, c.end_line))
        .chain(
            past.places
                .iter()
                .map(|(path, line)| format!("{path}:{line}")),
        );
    let mut named = Vec::new();
    for at in places {
        if name_unverified(run, plan, &format!("the candidate at {at}"), &why) {
            named.push(at);
        }
    }
    let unlocated = past.count - past.candidates.len() - past.places.len();
    if unlocated > 0 {
        let what = format!(
            "{unlocated} more candidate{}",
            if unlocated == 1 { "" } else { "s" }
        );
        let why = format!("{why}; not written as whole JSON objects, so where is not known");
        if name_unverified_n(run, plan, (&what, unlocated), &why) {
            named.push(what);
        }
    }
    if !named.is_empty() {
        run.observations.push(format!(
            "{}: its reply needed repair and held more candidates than the {bound} a repair \
             carries; the repair's go on to verification and these were not verified: {}",
            plan.label,
            named.join("; ")
        ));
    }
}

fn accept(
    run: &mut StageRun,
    plan: &StagePlan,
    reply: CandidateAnswer,
    answer: &Answer,
    gaps: &[String],
) -> Result<(), ExchangeError> {
    run.record.summary = reply.summary.clone();
    if !gaps.is_empty() {
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
    if let Some(kind) = run
        .record
        .budget_hit
        .filter(|_| answer.spent.budget_hit.is_some())
    {
        run.limitations.push(Limitation {
            kind: LimitationKind::BudgetHit,
            stage: Some(plan.label.clone()),
            detail: format!("{} hit its {} budget", plan.label, kind.as_str()),
        });
    }
    // Every dismissed concern is kept in the report; the verifier receives as many of a
    // reply's as its contract allows.
    let mut dismissed = concerns::for_verifier(&plan.label, &reply.dismissed);
    run.observations
        .extend(dismissed.iter().map(concerns::observation));
    dismissed.truncate(MAX_DISMISSED_CONCERNS as usize);
    run.dismissed = dismissed;
    run.candidates = reply
        .candidates
        .iter()
        .enumerate()
        .map(|(i, p)| to_candidate(&plan.label, i, p))
        .collect();
    Ok(())
}
