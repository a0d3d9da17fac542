//! Verification: one pass over all candidates, then a focused single-candidate pass for
//! each verified decision that omitted its finding.

use std::sync::Arc;

use vouch_abi::{
    CandidateForVerification, DismissedForVerification, PAYLOAD_VERSION, PromptRequest,
    ProposedCandidate,
};
use vouch_core::Area;
use vouch_core::{
    Candidate, CandidateRecord, CandidateState, ConventionGap, Decision, DecisionProblem, Failure,
    FailureKind, Finding, Limitation, LimitationKind, Provenance, SourceWindow, StageRecord,
    StageStatus, Verdict, WindowSource, account_decisions, batches, convention_support,
    estimate_tokens,
};
use vouch_specialist_kit::contract::ContractRequest;

use super::bounded::{NotRun, run_until_failure};
use super::context::policy_paths;
use super::env::ReviewEnv;
use super::exec::{Contract, Execution, StageKind, fail, note_answer, prepare, stage_record};
use super::inline::{self, InlineSource};
use super::prefetch;
use super::reply::{ExchangeError, MAX_OUTPUT_TOKENS_CAP, TypedReply};
use super::stage::StagePlan;
use crate::diagnostics::ReasonCode;
use crate::progress::ProgressEvent;
use crate::tools::RepoTools;

/// Output-token budget of a focused verification pass (at most the verifier's own
/// `max_output_tokens`).
pub(crate) const FOCUSED_OUTPUT_TOKENS: u32 = 4_000;

/// What verification contributes to the review.
pub(crate) struct VerificationRun {
    /// The verifier's stage records (batch pass, then focused passes).
    pub(crate) records: Vec<StageRecord>,
    /// Every candidate with its decision.
    pub(crate) candidates: Vec<CandidateRecord>,
    /// Verified findings, unmerged.
    pub(crate) findings: Vec<Finding>,
    /// Failures (review incomplete).
    pub(crate) failures: Vec<Failure>,
    /// Limitations (unresolved candidates, source gaps).
    pub(crate) limitations: Vec<Limitation>,
    /// Cancelled.
    pub(crate) cancelled: bool,
}

fn payload(c: &Candidate) -> CandidateForVerification {
    CandidateForVerification {
        id: c.id.clone(),
        candidate: ProposedCandidate {
            path: c.path.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
            revision: c.revision.as_str().into(),
            severity: c.severity.as_str().into(),
            area: c.area.as_str().into(),
            claim: c.claim.clone(),
            evidence: c.evidence.clone(),
        },
    }
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

/// The changed files the candidates name (sorted, unique): what a verification pass's
/// change summary and patches cover, rather than the whole canonical list.
fn candidate_files(plan: &StagePlan, candidates: &[Candidate]) -> Vec<String> {
    let mut paths: Vec<String> = candidates
        .iter()
        .map(|c| c.path.clone())
        .filter(|p| plan.assigned.contains(p))
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Rule (a verification request within its bound): what a pass gives inline (the lines
/// around each candidate, then the patches of their files, then the prefetch) shares
/// half the verifier's request bound, less the candidates' own text: the half
/// [`verification_batches`] plans a batch's content in (the other half holds the
/// prompt, the contract and the answer). Patches take at most the inline budget. At an
/// 8k window a candidate on a file of long lines once brought 15 KB of source.
fn source_room(plan: &StagePlan, candidates: &[Candidate]) -> usize {
    let half = u64::from(plan.shards.max_request_tokens) * vouch_core::BYTES_PER_TOKEN / 2;
    let text: usize = candidates
        .iter()
        .map(|c| c.claim.len() + c.evidence.len() + CANDIDATE_FRAME_BYTES)
        .sum();
    usize::try_from(half)
        .unwrap_or(usize::MAX)
        .saturating_sub(text)
}

/// Bytes a candidate's entry takes besides its claim and evidence (tag, id, place).
const CANDIDATE_FRAME_BYTES: usize = 200;

/// The source a verification pass is given inline within `room` bytes (see
/// [`source_room`]): the lines around each candidate, then the patches of the
/// candidates' assigned files; what it used is returned beside it.
fn given_source(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    candidates: &[Candidate],
    room: usize,
) -> (InlineSource, usize) {
    let mut used = 0;
    let (mut blocks, left_out) = inline::candidate_windows(env, tools, candidates, room, &mut used);
    let patch_paths = candidate_files(plan, candidates);
    let inline_bytes = env
        .inputs
        .inline_bytes
        .unwrap_or(super::env::DEFAULT_INLINE_BYTES);
    let patches = inline::patches(
        env,
        tools,
        &patch_paths,
        inline_bytes.min(room.saturating_sub(used)),
    );
    used += patches.blocks.iter().map(String::len).sum::<usize>();
    blocks.extend(patches.blocks);
    let mut omitted = patches.omitted;
    for path in left_out {
        if !omitted.contains(&path) {
            omitted.push(path);
        }
    }
    let given = InlineSource {
        blocks,
        omitted,
        failed: patches.failed,
    };
    (given, used)
}

/// Partial coverage of a verification pass: a budget hit, source the host could not
/// retrieve, or no source at all. Each is a stated limitation with the stage's label.
fn pass_limitations(
    env: &ReviewEnv,
    record: &StageRecord,
    given: &InlineSource,
    tools: &RepoTools,
) -> Vec<Limitation> {
    let label = record.label.as_str();
    let mut limitations = Vec::new();
    if let Some(kind) = record.budget_hit {
        limitations.push(Limitation {
            kind: LimitationKind::BudgetHit,
            stage: Some(label.to_string()),
            detail: format!("{label} hit its {} budget", kind.as_str()),
        });
    }
    if !given.failed.is_empty() || tools.lookup_failures() > 0 {
        limitations.push(gap(
            label,
            format!(
                "{label} could not retrieve {} patch(es) and {} tool read(s)",
                given.failed.len(),
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
    limitations
}

/// The plan of a focused pass: the verifier's, its replies lowered to
/// [`FOCUSED_OUTPUT_TOKENS`] and never raised (its request bound leaves room in the
/// window for the verifier's own replies, not more).
fn focused_plan_of(plan: &StagePlan) -> StagePlan {
    let mut focused = plan.clone();
    let own = plan.budget.max_output_tokens_per_request;
    focused.budget.max_output_tokens_per_request = FOCUSED_OUTPUT_TOKENS.min(own);
    focused
}

/// What a pass is given inline within its [`source_room`]: its source, then the same
/// prefetch a lane gets for the changed files the candidates are in, within what the
/// source leaves.
fn given_inline(
    env: &ReviewEnv,
    plan: &StagePlan,
    tools: &RepoTools,
    candidates: &[Candidate],
) -> (InlineSource, prefetch::Prefetched) {
    let room = source_room(plan, candidates);
    let (given, used) = given_source(env, plan, tools, candidates, room);
    let files = candidate_files(plan, candidates);
    let left = room.saturating_sub(used) as u64 / vouch_core::BYTES_PER_TOKEN;
    let budget = plan
        .prefetch_tokens
        .min(u32::try_from(left).unwrap_or(u32::MAX));
    (given, prefetch::prefetch(env, tools, &files, budget))
}

/// One verification pass over `candidates`: their source and prefetch given inline, one
/// exchange, and its decisions accounted against the pass's ledger.
async fn pass(
    env: &ReviewEnv,
    plan: &StagePlan,
    label: &str,
    candidates: &[Candidate],
    dismissed: &[DismissedForVerification],
    kind: StageKind,
) -> Result<PassResult, (StageRecord, ExchangeError)> {
    let mut record = StageRecord {
        candidates: candidates.len(),
        ..stage_record(label, &plan.handle, plan.assigned.len())
    };
    let tools = env.tools();
    let (given, prefetched) =
        super::env::off_the_runtime(|| given_inline(env, plan, &tools, candidates));
    record.prefetch = prefetched.record;
    let focused_plan;
    let mut run_plan = plan;
    if kind == StageKind::FocusedVerification {
        focused_plan = focused_plan_of(plan);
        run_plan = &focused_plan;
    }
    let contract =
        Contract::of(&plan.handle, decisions_contract(candidates)).map_err(ExchangeError::Plugin);
    let prepared = contract.and_then(|contract| {
        prepare(
            env,
            Execution {
                kind,
                label,
                plan: run_plan,
                request: pass_request(env, plan, label, candidates, dismissed),
                contract,
                inline: &given,
                prefetch: &prefetched.section,
                tools: &tools,
            },
        )
    });
    let answer = match prepared {
        Ok(prepared) => prepared
            .ask(env, prepared.user.clone())
            .await
            .map_err(|f| f.noted(&mut record)),
        Err(e) => Err(e),
    };
    record.set_ledger(tools.ledger());
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Err((record, e)),
    };
    note_answer(&mut record, &answer);
    let limitations = pass_limitations(env, &record, &given, &tools);
    limit_record(&mut record, &limitations);
    let TypedReply::Decisions(decisions) = answer.reply else {
        unreachable!("a verification exchange returns decisions")
    };
    let account = account_decisions(candidates, &decisions, &tools.ledger());
    record.candidates = decisions.len();
    let states = account
        .states
        .into_iter()
        .map(|(id, state)| (id, through_repair(state, answer.repaired, kind)))
        .collect();
    Ok(PassResult {
        record,
        states,
        stray: account.stray,
        limitations,
    })
}

/// A pass record with `limitations` is limited, and says why.
fn limit_record(record: &mut StageRecord, limitations: &[Limitation]) {
    if limitations.is_empty() {
        return;
    }
    record.status = StageStatus::Limited;
    record.problem = Some(
        limitations
            .iter()
            .map(|l| l.detail.as_str())
            .collect::<Vec<_>>()
            .join("; "),
    );
}

/// Rule (a repair never publishes a finding): a `verified` decision that reached vouch
/// through a repair of the verifier's reply — whose evidence, citations and finding a
/// model without tools may have written, from an example or a cut-off draft — is checked
/// by the verifier itself: after the batch pass it takes a focused pass; after a focused
/// pass it is unresolved (a stated limitation), never published.
fn through_repair(state: CandidateState, repaired: bool, kind: StageKind) -> CandidateState {
    match state {
        CandidateState::Verified { decision } if repaired => match kind {
            StageKind::FocusedVerification => CandidateState::Unresolved {
                decision: Decision {
                    verdict: Verdict::Unresolved,
                    evidence: "verified only by a repair of the verifier's reply, which cannot \
                               decide a verdict"
                        .into(),
                    ..decision
                },
            },
            _ => CandidateState::NeedsFocusedPass { decision },
        },
        other => other,
    }
}

/// The verifier's contract for `candidates`: one decision per candidate id, no receipt.
fn decisions_contract(candidates: &[Candidate]) -> ContractRequest {
    ContractRequest {
        expected_files: vec![],
        candidate_ids: candidates.iter().map(|c| c.id.clone()).collect(),
        repair: false,
        max_candidates: None,
        max_dismissed: None,
        receipt_bound: None,
    }
}

/// What a verification pass's prompt is rendered from: the candidates, the concerns
/// dismissed, the change summary of the candidates' files and the policy evidence;
/// never the intent.
fn pass_request(
    env: &ReviewEnv,
    plan: &StagePlan,
    label: &str,
    candidates: &[Candidate],
    dismissed: &[DismissedForVerification],
) -> PromptRequest {
    PromptRequest {
        payload_version: PAYLOAD_VERSION,
        label: label.to_string(),
        change: env.change_summary(&candidate_files(plan, candidates)),
        intent: None,
        policy_evidence: env.inputs.policy.iter().map(|(p, _)| p.clone()).collect(),
        candidates: candidates.iter().map(payload).collect(),
        dismissed_concerns: dismissed.to_vec(),
        tools_available: env.tools_enabled(),
    }
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
        area: c.area,
        claim: f.claim.clone(),
        evidence: decision.evidence.clone(),
        citations: decision.citations.clone(),
        provenance: Provenance {
            proposed_by: vec![c.proposed_by.clone()],
            candidate_ids: vec![c.id.clone()],
            verified_by: verifier.to_string(),
            verification_passes: passes,
        },
        also_verified: Vec::new(),
    }
}

/// The policy paths a convention finding may cite as its written policy: the documents
/// the host recognises for this change and every policy document it gave (including the
/// repository's review instructions).
fn convention_policy_paths(env: &ReviewEnv) -> Vec<String> {
    let mut paths = policy_paths(&env.inputs.snapshot);
    for (doc, _) in &env.inputs.policy {
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
    if c.area != Area::Conventions {
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
        &env.inputs.snapshot.files,
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
            invalid_decision(env, stage, &problem, run);
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
        invalid_decision(env, stage, &problem, run);
    }
}

/// Records an invalid decision: its diagnostic and an `invalid-decision` failure.
fn invalid_decision(
    env: &ReviewEnv,
    stage: &str,
    problem: &DecisionProblem,
    run: &mut VerificationRun,
) {
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
        detail: None,
    });
}

/// Records a failed pass: its record, and the failure (or the cancellation).
fn failed_pass(
    env: &ReviewEnv,
    kind: StageKind,
    mut record: StageRecord,
    e: ExchangeError,
    run: &mut VerificationRun,
) -> String {
    let why = match fail(env, kind, &mut record, e) {
        None => {
            run.cancelled = true;
            "cancelled".to_string()
        }
        Some(f) => {
            let text = f.message.clone();
            run.failures.push(f);
            text
        }
    };
    run.records.push(record);
    why
}

/// Records a batch pass that did not run: skipped when it was not started after another
/// failed, a failure when its task ended abnormally. Returns why its candidates are
/// undecided.
fn batch_not_run(
    plan: &StagePlan,
    label: &str,
    candidates: usize,
    why: &NotRun,
    run: &mut VerificationRun,
) -> String {
    let (record, failure) = why.record(StageRecord {
        candidates,
        ..stage_record(label, &plan.handle, plan.assigned.len())
    });
    run.failures.extend(failure);
    run.records.push(record);
    format!("verification did not complete: {}", why.reason())
}

/// Most candidates one verification pass decides (twice a lane's candidate cap).
pub(crate) const MAX_BATCH_CANDIDATES: usize = 12;

/// Rule (issue 10, "verification batches likewise when candidates are many"): the
/// candidates, in order, are cut into batches ([`vouch_core::batches`]) of at most
/// [`MAX_BATCH_CANDIDATES`], and at most as many as the verifier's output budget holds
/// decisions of ([`decisions_per_answer`]), whose candidate text, context windows and
/// patches fit half of the verifier's `max_request_tokens` (the other half for its
/// prompt, contract and answer). One batch (the usual case) is the verifier's one pass under its own label;
/// more are labelled `verifier [batch k/n]` and run concurrently.
fn verification_batches(
    env: &ReviewEnv,
    plan: &StagePlan,
    candidates: &[Candidate],
) -> Vec<std::ops::Range<usize>> {
    let mut seen_paths: Vec<&str> = Vec::new();
    let costs: Vec<u64> = candidates
        .iter()
        .map(|c| {
            let mut bytes = c.claim.len() + c.evidence.len() + 200;
            // Its window at full context, from the lines' real lengths (at most one read).
            bytes += inline::candidate_window(env, c, vouch_git::MAX_BYTES).map_or(0, |w| w.bytes);
            if !seen_paths.contains(&c.path.as_str()) {
                seen_paths.push(&c.path);
                bytes += env
                    .services
                    .reader
                    .diff(&c.path)
                    .map_or(0, |d| d.text.len());
            }
            estimate_tokens(bytes)
        })
        .collect();
    let cap = u64::from(plan.shards.max_request_tokens) / 2;
    batches(&costs, cap, decisions_per_answer(env, plan, candidates))
}

/// Rule (a request and its reply fit the window): how many decisions one verification
/// answer may carry. A reply asks for its contract's token bound, at most
/// [`MAX_OUTPUT_TOKENS_CAP`]; where the window the endpoint or the configuration states
/// leaves less than that beside the verifier's request bound, a batch holds no more
/// decisions than fit what it leaves (a 12k window's 3,072 tokens hold fewer than
/// [`MAX_BATCH_CANDIDATES`]): the bound's cost per decision measured from the contracts
/// of one and two candidates; at least one.
fn decisions_per_answer(env: &ReviewEnv, plan: &StagePlan, candidates: &[Candidate]) -> usize {
    let window = env.inputs.window;
    let room = window
        .tokens
        .saturating_sub(plan.shards.max_request_tokens)
        .max(plan.budget.max_output_tokens_per_request);
    let Some(first) = candidates
        .first()
        .filter(|_| window.source != WindowSource::Default && room < MAX_OUTPUT_TOKENS_CAP)
    else {
        return MAX_BATCH_CANDIDATES;
    };
    let bound = |n: usize| {
        let ids = vec![first.clone(); n];
        Contract::of(&plan.handle, decisions_contract(&ids))
            .map(|c| vouch_specialist_kit::contract::token_bound(&c.schema))
    };
    let (Ok(one), Ok(two)) = (bound(1), bound(2)) else {
        return MAX_BATCH_CANDIDATES;
    };
    let per = two.saturating_sub(one).max(1);
    let fits = u64::from(room).saturating_sub(one - per.min(one)) / per;
    usize::try_from(fits)
        .unwrap_or(usize::MAX)
        .clamp(1, MAX_BATCH_CANDIDATES)
}

/// Runs the batch passes with at most `concurrency` at once, none after one has failed
/// ([`run_until_failure`]); results in batch order, with each batch's label.
async fn run_batches(
    env: &Arc<ReviewEnv>,
    plan: &StagePlan,
    candidates: &[Candidate],
    dismissed: &[DismissedForVerification],
    groups: Vec<std::ops::Range<usize>>,
    concurrency: usize,
) -> Vec<(std::ops::Range<usize>, String, Result<PassOutcome, NotRun>)> {
    let dismissed: Arc<[DismissedForVerification]> = dismissed.into();
    let n = groups.len();
    let jobs: Vec<(std::ops::Range<usize>, String)> = groups
        .into_iter()
        .enumerate()
        .map(|(k, range)| {
            let label = if n > 1 {
                format!("{} [batch {}/{n}]", plan.label, k + 1)
            } else {
                plan.label.clone()
            };
            (range, label)
        })
        .collect();
    let start = |(range, label): (std::ops::Range<usize>, String)| {
        let (env, plan) = (env.clone(), plan.clone());
        let dismissed = dismissed.clone();
        let batch = candidates[range].to_vec();
        async move {
            pass(
                &env,
                &plan,
                &label,
                &batch,
                &dismissed,
                StageKind::Verification,
            )
            .await
        }
    };
    run_until_failure(concurrency, jobs, start, pass_failed)
        .await
        .into_iter()
        .map(|((range, label), outcome)| (range, label, outcome))
        .collect()
}

/// The label of a batch pass that makes the review incomplete: it failed (not cancelled)
/// or returned decisions that fail it.
fn pass_failed(outcome: &PassOutcome) -> Option<String> {
    match outcome {
        Ok(pass) => (!pass.stray.is_empty()).then(|| pass.record.label.clone()),
        Err((_, ExchangeError::Cancelled)) => None,
        Err((record, _)) => Some(record.label.clone()),
    }
}

type PassOutcome = Result<PassResult, (StageRecord, ExchangeError)>;

/// Rule (verification): all candidates together in one pass (or, when they are many, in
/// batches: [`verification_batches`]), exactly one decision each;
/// a verified decision that omits its finding is re-checked alone (same prompt and
/// tools, a 4,000-token output budget) and a recovered finding records
/// `verificationPasses: 2`; omitted again → `unresolved` (no clean opinion, other
/// findings kept). Unknown ids, missing, duplicate or malformed decisions and unread
/// citations make the review incomplete. A verified convention finding outside its
/// boundary ([`convention_support`]) is `unresolved`, never published.
pub(crate) async fn verify(
    env: &Arc<ReviewEnv>,
    plan: &StagePlan,
    candidates: &[Candidate],
    dismissed: &[DismissedForVerification],
    concurrency: usize,
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
        label: plan.label.clone(),
        candidates: candidates.len(),
    });
    let groups = verification_batches(env, plan, candidates);
    let mut states: Vec<(String, CandidateState)> = Vec::new();
    // Each batch's range and label, and why its candidates are undecided after how many
    // passes (`None`: decided).
    type Undecided = Option<(String, u8)>;
    let mut batch_of: Vec<(std::ops::Range<usize>, String, Undecided)> = Vec::new();
    for (range, label, result) in
        run_batches(env, plan, candidates, dismissed, groups, concurrency).await
    {
        let undecided_why = match result {
            Ok(Ok(batch)) => {
                run.records.push(batch.record);
                run.limitations.extend(batch.limitations);
                stray_failures(env, &label, batch.stray, &mut run);
                states.extend(batch.states);
                None
            }
            Ok(Err((record, e))) => {
                failed_pass(env, StageKind::Verification, record, e, &mut run);
                Some(("verification did not complete".to_string(), 1))
            }
            // A batch that never ran gave its candidates no pass.
            Err(why) => Some((batch_not_run(plan, &label, range.len(), &why, &mut run), 0)),
        };
        batch_of.push((range, label, undecided_why));
    }
    for (i, c) in candidates.iter().enumerate() {
        let Some((_, label, undecided_why)) = batch_of.iter().find(|(r, ..)| r.contains(&i)) else {
            continue;
        };
        if let Some((why, passes)) = undecided_why {
            run.candidates.push(undecided(c, why, *passes));
            continue;
        }
        if run.cancelled || env.services.cancel.is_cancelled() {
            run.cancelled = true;
            run.candidates
                .push(undecided(c, "not decided: the review was cancelled", 1));
            continue;
        }
        let state = states
            .iter()
            .find(|(id, _)| id == &c.id)
            .map(|(_, s)| s.clone());
        let record = match settle(env, label, &plan.label, c, state, 1, &mut run) {
            Settled::Record(r) => *r,
            Settled::Focus => focused(env, plan, c, dismissed, &mut run).await,
        };
        run.candidates.push(record);
    }
    unresolve_contradictions(&mut run);
    run
}

/// Rule ([`vouch_core::contradicted_candidates`]): identical candidates decided both
/// verified and rejected are each unresolved, with a stated limitation, and no finding
/// of theirs is published.
fn unresolve_contradictions(run: &mut VerificationRun) {
    let ids = vouch_core::contradicted_candidates(&run.candidates);
    if ids.is_empty() {
        return;
    }
    let reason = "identical candidates of other lanes were decided both verified and rejected";
    for record in run
        .candidates
        .iter_mut()
        .filter(|r| ids.contains(&r.candidate.id))
    {
        run.limitations
            .push(unresolved_limitation(&record.candidate, reason));
        record.verdict = Some(Verdict::Unresolved);
        record.problem = Some(reason.into());
    }
    run.findings
        .retain(|f| !f.provenance.candidate_ids.iter().any(|id| ids.contains(id)));
}

async fn focused(
    env: &ReviewEnv,
    plan: &StagePlan,
    c: &Candidate,
    dismissed: &[DismissedForVerification],
    run: &mut VerificationRun,
) -> CandidateRecord {
    let label = format!("{} (focused {})", plan.label, c.id);
    match pass(
        env,
        plan,
        &label,
        std::slice::from_ref(c),
        dismissed,
        StageKind::FocusedVerification,
    )
    .await
    {
        Err((record, e)) => {
            let why = failed_pass(env, StageKind::FocusedVerification, record, e, run);
            undecided(c, &why, 2)
        }
        Ok(p) => {
            run.records.push(p.record);
            run.limitations.extend(p.limitations);
            stray_failures(env, &label, p.stray, run);
            let state = p.states.into_iter().next().map(|(_, s)| s);
            match settle(env, &label, &plan.label, c, state, 2, run) {
                Settled::Record(r) => contradicted(*r, run),
                Settled::Focus => unreachable!("a focused pass never asks for another"),
            }
        }
    }
}

/// Rule (focused pass): a candidate the batch pass verified (without its finding) and
/// the focused pass rejects is unresolved, not rejected: the verifier contradicted
/// itself, so neither verdict is taken, and the stated limitation keeps the opinion
/// from being clean.
fn contradicted(record: CandidateRecord, run: &mut VerificationRun) -> CandidateRecord {
    if record.verdict != Some(Verdict::Rejected) {
        return record;
    }
    let reason = "the batch pass verified it without its finding and the focused pass rejected it";
    run.limitations
        .push(unresolved_limitation(&record.candidate, reason));
    CandidateRecord {
        verdict: Some(Verdict::Unresolved),
        problem: Some(reason.into()),
        ..record
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
