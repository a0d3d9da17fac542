//! One stage execution's model exchange: agent loop → truncation rule → extraction →
//! typed parse → at most one isolated repair, whose result must pass the repair rules.
//!
//! Every model stage (lanes, audit, verifier, focused pass) goes through [`exchange`];
//! what it returns is typed ([`TypedReply`]), so a stage never sees contract strings.

use serde_json::Value;
use vouch_abi::{
    CandidateReply, DecisionPayload, DismissedConcern, MAX_CANDIDATES, ParsedReply,
    ProposedCandidate,
};
use vouch_core::{
    Area, CandidateLocation, Citation, ContextWindow, CoverageReceipt, Decision, FindingDraft,
    IssueStep, PastRepairBound, ReplyIssue, Revision, Severity, ShapeProblem, SourceWindow,
    TokenUsage, TruncationStep, Verdict, WindowSource, check_candidate_repair,
    check_decision_repair, conform, truncation_step,
};
use vouch_llm::extract::{ExtractError, answer_text, extract_json};
use vouch_llm::{
    AgentEvent, AgentOutcome, AgentRequest, Budget, LlmError, ResponseSchema, run_agent,
};
use vouch_specialist_kit::contract::token_bound;

use crate::progress::ProgressEvent;

use super::contract::Contract;
use super::env::{ReviewEnv, ToolsDropped, ToolsMode};
use crate::diagnostics::ReasonCode;
use crate::policy::{FORCED_SYNTHESIS, REPAIR_SYSTEM, repair_user_message, truncation_notice};
use crate::registry::{PluginError, SpecialistHandle};
use crate::tools::RepoTools;

/// Most output tokens any single request may ask for, whatever the contract's bound.
pub(crate) const MAX_OUTPUT_TOKENS_CAP: u32 = 8_192;

/// Why an exchange produced no usable reply.
#[derive(Debug)]
pub(super) enum ExchangeError {
    /// The run was cancelled.
    Cancelled,
    /// The endpoint failed (the message is safe to show: it never contains the key).
    Provider(LlmError),
    /// The plugin failed.
    Plugin(PluginError),
    /// The reply stayed invalid after its one repair, or the repair broke a repair rule.
    Invalid(String),
    /// The reply was cut at the output limit twice (or with no budget left to re-ask),
    /// or the repair was cut.
    Truncated(String),
}

impl From<LlmError> for ExchangeError {
    fn from(e: LlmError) -> Self {
        if e.is_cancelled() {
            ExchangeError::Cancelled
        } else {
            ExchangeError::Provider(e)
        }
    }
}

/// A candidate as a stage proposed it, typed (the host assigns its id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProposedDraft {
    /// Path as written.
    pub(crate) path: String,
    /// Side the lines refer to.
    pub(crate) revision: Revision,
    /// First line.
    pub(crate) start_line: u32,
    /// Last line.
    pub(crate) end_line: u32,
    /// Severity.
    pub(crate) severity: Severity,
    /// Review area.
    pub(crate) area: Area,
    /// One-sentence claim.
    pub(crate) claim: String,
    /// The proposer's reasoning.
    pub(crate) evidence: String,
}

impl ProposedDraft {
    /// Where it is: its path and lines, as the repair and retry rules compare places.
    pub(crate) fn location(&self) -> CandidateLocation {
        CandidateLocation {
            path: self.path.clone(),
            start_line: u64::from(self.start_line),
            end_line: u64::from(self.end_line),
        }
    }
}

/// A candidate-producing stage's reply, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CandidateAnswer {
    /// Proposed candidates.
    pub(crate) candidates: Vec<ProposedDraft>,
    /// The coverage receipt.
    pub(crate) receipt: CoverageReceipt,
    /// Summary for the report.
    pub(crate) summary: String,
    /// Concerns the stage checked and dismissed, with the evidence that cleared them.
    pub(crate) dismissed: Vec<DismissedConcern>,
}

/// A reply, typed: candidates with a receipt, or decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypedReply {
    /// From a candidate-producing stage.
    Candidates(CandidateAnswer),
    /// From the verifier.
    Decisions(Vec<Decision>),
}

/// Which reply kind an exchange expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReplyKind {
    /// Candidates and a coverage receipt.
    Candidates,
    /// Verification decisions.
    Decisions,
}

/// A usable reply.
#[derive(Debug)]
pub(super) struct Answer {
    /// The typed reply.
    pub(crate) reply: TypedReply,
    /// The extracted JSON object (a coverage retry shows it back to the model).
    pub(crate) value: Value,
    /// The model text the answer rests on (before any repair): where a repaired
    /// full-coverage quote must be a span.
    pub(crate) prior_text: String,
    /// True when an isolated repair produced it.
    pub(crate) repaired: bool,
    /// What of the prior reply a repair held at its candidate bound could not hold.
    pub(crate) past_repair_bound: PastRepairBound,
    /// What the exchange spent.
    pub(crate) spent: Spent,
}

/// What an exchange spent: its requests and tokens (the execution, its re-ask and its
/// repair), the budget it hit and whether its last reply was forced. Kept when the
/// exchange fails too ([`Failed`]), so a failed stage's record still counts them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spent {
    /// Token usage.
    pub(crate) usage: TokenUsage,
    /// The budget the execution hit, if any.
    pub(crate) budget_hit: Option<vouch_llm::BudgetKind>,
    /// Whether the final reply was forced.
    pub(crate) forced_synthesis: bool,
    /// The models the endpoint says answered, in the order first seen.
    pub(crate) answered_by: Vec<String>,
    /// What was wrong with each reply that went to repair (and with the repair's reply,
    /// when it failed too).
    pub(crate) issues: Vec<ReplyIssue>,
}

/// An exchange that failed, with what it spent before it failed.
#[derive(Debug)]
pub(super) struct Failed {
    /// Why it failed.
    pub(crate) error: ExchangeError,
    /// What it spent.
    pub(crate) spent: Spent,
}

/// One exchange's inputs.
pub(crate) struct Exchange<'a> {
    /// Instance label.
    pub(crate) label: &'a str,
    /// Diagnostic stage name of the execution (`lane`, `audit`, `verification`).
    pub(crate) stage: &'static str,
    /// The specialist.
    pub(crate) handle: &'a SpecialistHandle,
    /// System message.
    pub(crate) system: &'a str,
    /// User message (task plus the host's sections).
    pub(crate) user: String,
    /// Output contract (its repair variant is asked for when a repair is needed).
    pub(crate) contract: &'a Contract,
    /// The reply kind the contract describes.
    pub(crate) kind: ReplyKind,
    /// The canonical list, for receipts (`None` for the verifier).
    pub(crate) expected: Option<&'a [String]>,
    /// Budget of the agent loop.
    pub(crate) budget: Budget,
    /// Tools of this execution (their ledger is the execution's).
    pub(crate) tools: &'a RepoTools,
    /// The specialist's own model (`None`: the run's default client).
    pub(crate) model: Option<&'a str>,
}

fn usage_of(outcome: &AgentOutcome) -> TokenUsage {
    token_usage(outcome.usage, 0)
}

/// The one conversion of the model client's usage into the report's, with `failed`
/// requests of a completion that failed (sent, never answered) added.
fn token_usage(usage: vouch_llm::Usage, failed: u32) -> TokenUsage {
    TokenUsage {
        requests: u64::from(usage.requests) + u64::from(failed),
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_prompt_tokens: usage.cached_prompt_tokens,
        unreported_replies: u64::from(usage.unreported_replies),
        estimated_tokens: usage.estimated_tokens,
    }
}

/// Rule (a request and its reply fit the window): `max_tokens` for a reply under
/// `schema` is the contract's bound, at least the budget's own value and at most
/// [`MAX_OUTPUT_TOKENS_CAP`]; where the endpoint or the configuration states the window,
/// also at most what it leaves beside the request bound (the budget's own value always
/// fits there: budgets are derived, or refused, so). A contract whose bound is larger (one
/// verifier decision can be bounded at about 2,850 tokens, over the 2,192 an 8k window
/// leaves beside a 6,000-token request) is answered within that; a reply cut at it is
/// asked again once for a shorter answer.
fn output_tokens(schema: &Value, budget: &Budget, window: ContextWindow) -> u32 {
    let bound = u32::try_from(token_bound(schema)).unwrap_or(u32::MAX);
    let mut cap = MAX_OUTPUT_TOKENS_CAP;
    if window.source != WindowSource::Default
        && let Some(bytes) = budget.max_request_bytes
    {
        let request =
            u32::try_from(bytes.div_ceil(vouch_core::BYTES_PER_TOKEN)).unwrap_or(u32::MAX);
        let beside = window.tokens.saturating_sub(request);
        cap = cap.min(beside.max(budget.max_output_tokens_per_request));
    }
    bound.max(budget.max_output_tokens_per_request).min(cap)
}

/// True when an HTTP 400/422 body says the endpoint cannot take `tools` (matching the
/// body text is the only signal compatible servers give).
fn rejects_tools(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    body.contains("tool") && !body.contains("response_format") && !body.contains("json_schema")
}

fn line(value: u32, what: &str) -> Result<u32, String> {
    if value == 0 || u64::from(value) > vouch_specialist_kit::contract::MAX_LINE {
        return Err(format!(
            "{what} {value} is outside 1..={}",
            vouch_specialist_kit::contract::MAX_LINE
        ));
    }
    Ok(value)
}

fn draft(i: usize, p: &ProposedCandidate) -> Result<ProposedDraft, String> {
    let at = |e: String| format!("candidates[{i}]: {e}");
    Ok(ProposedDraft {
        path: p.path.clone(),
        revision: p.revision.parse().map_err(|e| at(format!("{e}")))?,
        start_line: line(p.start_line, "startLine").map_err(at)?,
        end_line: line(p.end_line, "endLine").map_err(at)?,
        severity: p.severity.parse().map_err(|e| at(format!("{e}")))?,
        area: p.area.parse().map_err(|e| at(format!("{e}")))?,
        claim: p.claim.clone(),
        evidence: p.evidence.clone(),
    })
}

fn candidates(reply: CandidateReply) -> Result<CandidateAnswer, String> {
    Ok(CandidateAnswer {
        candidates: reply
            .candidates
            .iter()
            .enumerate()
            .map(|(i, p)| draft(i, p))
            .collect::<Result<_, _>>()?,
        receipt: CoverageReceipt {
            complete: reply.coverage.complete,
            reviewed_files: reply.coverage.reviewed_files,
        },
        summary: reply.summary,
        dismissed: reply.dismissed_concerns,
    })
}

fn decision(i: usize, d: &DecisionPayload) -> Result<Decision, String> {
    let at = |e: String| format!("decisions[{i}]: {e}");
    let mut citations: Vec<Citation> = Vec::new();
    for c in &d.citations {
        citations.push(SourceWindow {
            revision: c.revision.parse().map_err(|e| at(format!("{e}")))?,
            path: c.path.clone(),
            start_line: line(c.start_line, "citation startLine").map_err(at)?,
            end_line: line(c.end_line, "citation endLine").map_err(at)?,
        });
    }
    let finding = match &d.finding {
        None => None,
        Some(f) => Some(FindingDraft {
            path: f.path.clone(),
            start_line: line(f.start_line, "finding startLine").map_err(at)?,
            end_line: line(f.end_line, "finding endLine").map_err(at)?,
            severity: f.severity.parse().map_err(|e| at(format!("{e}")))?,
            claim: f.claim.clone(),
        }),
    };
    Ok(Decision {
        candidate_id: d.candidate_id.clone(),
        verdict: d.decision.parse().map_err(|e| at(format!("{e}")))?,
        evidence: d.evidence.clone(),
        citations,
        finding,
    })
}

/// Rule (typed replies): a plugin-parsed reply becomes the host's types, or it is a
/// contract violation (which goes to repair) — in every stage alike. A reply of the
/// other kind, an unknown severity, revision, area or verdict, or a line outside
/// `1..=MAX_LINE` never gets a default.
pub(crate) fn typed_reply(parsed: ParsedReply, kind: ReplyKind) -> Result<TypedReply, String> {
    match (parsed, kind) {
        (ParsedReply::Candidates(r), ReplyKind::Candidates) => {
            candidates(r).map(TypedReply::Candidates)
        }
        (ParsedReply::Decisions(r), ReplyKind::Decisions) => r
            .decisions
            .iter()
            .enumerate()
            .map(|(i, d)| decision(i, d))
            .collect::<Result<_, _>>()
            .map(TypedReply::Decisions),
        _ => Err("the reply is of the wrong kind for this stage's contract".into()),
    }
}

/// What was wrong with a reply: where (a JSON pointer into it, when the problem has a
/// place) and the contract check's, parser's or extraction's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReplyFault {
    /// JSON pointer of the problem, when it has one.
    pub(crate) pointer: Option<String>,
    /// What is wrong.
    pub(crate) message: String,
}

impl ReplyFault {
    fn plain(message: impl Into<String>) -> ReplyFault {
        ReplyFault {
            pointer: None,
            message: message.into(),
        }
    }

    /// The contract-shape problems of a reply ([`conform`]), the first one's pointer kept.
    fn shape(problems: Vec<ShapeProblem>) -> ReplyFault {
        ReplyFault {
            pointer: problems.first().map(|p| p.pointer().to_owned()),
            message: problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// The fault as a report's [`ReplyIssue`] of `step` (bounded).
    pub(super) fn issue(&self, step: IssueStep) -> ReplyIssue {
        ReplyIssue::new(step, self.pointer.clone(), &self.message)
    }
}

impl std::fmt::Display for ReplyFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Checks one JSON value: its shape against `schema` ([`conform`]: omitted optional
/// fields take their defaults; unknown keys, wrong types and absent decisions are
/// faults), then the plugin's parse and the typed reply. Returns the value with its
/// defaults filled in.
fn check_value(
    handle: &SpecialistHandle,
    kind: ReplyKind,
    schema: &Value,
    value: &Value,
) -> Result<(Value, TypedReply), ReplyFault> {
    let filled = conform(value, schema).map_err(ReplyFault::shape)?;
    let parsed = handle
        .parse(&filled)
        .map_err(|e| ReplyFault::plain(e.to_string()))?;
    let reply = typed_reply(parsed, kind).map_err(ReplyFault::plain)?;
    Ok((filled, reply))
}

/// Extracts the one contract-valid object from `text` ([`check_value`]); when none is,
/// the fault names the first problem's pointer and the extraction's message.
fn extract_and_parse(
    handle: &SpecialistHandle,
    kind: ReplyKind,
    schema: &Value,
    text: &str,
) -> Result<(Value, TypedReply), ReplyFault> {
    let first: std::cell::RefCell<Option<ReplyFault>> = Default::default();
    let value = extract_json(text, |v| {
        check_value(handle, kind, schema, v)
            .map(|_| ())
            .map_err(|fault| {
                let message = fault.message.clone();
                first.borrow_mut().get_or_insert(fault);
                message
            })
    })
    .map_err(|e| ReplyFault {
        // A place inside an object the check refused is the problem only when the
        // reply's JSON parsed.
        pointer: first
            .take()
            .and_then(|f| f.pointer)
            .filter(|_| matches!(e, ExtractError::NoValid { .. })),
        message: format!("{e}{}", tool_call_hint(text)),
    })?;
    check_value(handle, kind, schema, &value)
}

/// What to do when a reply that did not parse holds a tool call written as text
/// ([`vouch_llm::extract::tool_call_as_text`]); empty otherwise.
fn tool_call_hint(text: &str) -> &'static str {
    if vouch_llm::extract::tool_call_as_text(text) {
        "; the reply holds a tool call written as text, which the endpoint did not parse \
         as a tool call: serve the model with its tool-call parser (vLLM: \
         --enable-auto-tool-choice --tool-call-parser NAME), or review with --tools off"
    } else {
        ""
    }
}

/// Rule (repair, [`check_candidate_repair`], [`check_decision_repair`]): a repaired
/// reply stands only when it changed syntax, not content (`expected`: the stage's
/// canonical list, whose places a prose reply names must survive). A candidate repair
/// held at [`MAX_CANDIDATES`] returns what of the prior reply it could not hold.
fn check_repair(
    prior: &str,
    reply: &TypedReply,
    expected: &[String],
) -> Result<PastRepairBound, String> {
    let result = match reply {
        TypedReply::Candidates(a) => {
            let locations: Vec<CandidateLocation> =
                a.candidates.iter().map(ProposedDraft::location).collect();
            let dismissed: Vec<CandidateLocation> = a
                .dismissed
                .iter()
                .map(|d| CandidateLocation {
                    path: d.path.clone(),
                    start_line: u64::from(d.start_line),
                    end_line: u64::from(d.end_line),
                })
                .collect();
            check_candidate_repair(
                prior,
                &locations,
                (expected, &dismissed),
                MAX_CANDIDATES as usize,
            )
        }
        TypedReply::Decisions(ds) => {
            let verdicts: Vec<(String, Verdict)> = ds
                .iter()
                .map(|d| (d.candidate_id.clone(), d.verdict))
                .collect();
            check_decision_repair(prior, &verdicts).map(|()| PastRepairBound::default())
        }
    };
    result.map_err(|v| v.to_string())
}

/// The progress event of an agent loop's event, for the stage `label` (none for what a
/// reply cost, which the exchange counts).
fn stage_event(label: &str, event: AgentEvent) -> Option<ProgressEvent> {
    match event {
        AgentEvent::Progress { turns, tool_calls } => Some(ProgressEvent::StageActivity {
            label: label.to_owned(),
            turns,
            tool_calls,
        }),
        AgentEvent::Retrying {
            attempt,
            cause,
            wait,
        } => Some(ProgressEvent::ModelRetry {
            label: label.to_owned(),
            attempt,
            cause,
            wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        }),
        AgentEvent::Replied { .. } => None,
    }
}

/// What a failed agent run spent: the replies it received and the requests of the
/// completion that failed.
fn spent_before(replied: vouch_llm::Usage, error: &LlmError) -> TokenUsage {
    token_usage(replied, error.requests_sent())
}

/// The agent loop of an exchange (with the tools fallback of `tools = "auto"`).
async fn agent(
    env: &ReviewEnv,
    ex: &Exchange<'_>,
    user: &str,
    budget: Budget,
    spent: &mut Spent,
) -> Result<AgentOutcome, ExchangeError> {
    // What the replies cost, counted as they come: kept when the run fails.
    let replied = std::sync::Mutex::new(vouch_llm::Usage::default());
    let answered_by = AnsweredBy::default();
    let observer = |event: AgentEvent| match event {
        AgentEvent::Replied { usage, model } => {
            if let Ok(mut sum) = replied.lock() {
                sum.add(usage);
            }
            answered_by.note(model);
        }
        other => {
            if let Some(event) = stage_event(ex.label, other) {
                env.progress(event);
            }
        }
    };
    let request = |with_tools: bool| {
        let request = AgentRequest::new(ex.system, user, env.services.cancel.clone())
            .with_response_schema(ResponseSchema {
                name: "vouch_stage_reply".into(),
                schema: ex.contract.schema.clone(),
            })
            .with_budget(budget)
            .with_forced_synthesis_prompt(FORCED_SYNTHESIS)
            .with_observer(&observer);
        if with_tools {
            request.with_tools(ex.tools)
        } else {
            request
        }
    };
    let client = env.client_for(ex.model);
    let with_tools = env.tools_enabled();
    let result = match run_agent(client, request(with_tools)).await {
        // Auto mode: an endpoint that rejects tools gets inline context from now on.
        Err(LlmError::Http {
            status: 400 | 422,
            body,
        }) if with_tools && env.inputs.tools == ToolsMode::Auto && rejects_tools(&body) => {
            env.drop_tools(ToolsDropped::Rejected);
            env.diagnose(Some(ex.label), ex.stage, None, ReasonCode::ToolsFallback);
            spent.usage.requests += 1;
            if let Ok(mut sum) = replied.lock() {
                *sum = vouch_llm::Usage::default();
            }
            run_agent(client, request(false)).await
        }
        other => other,
    };
    answered_by.into_spent(spent);
    result.map_err(|e| {
        let sum = replied.lock().map(|sum| *sum).unwrap_or_default();
        spent.usage.add(spent_before(sum, &e));
        e.into()
    })
}

/// Most distinct answering models a stage record keeps (an endpoint naming a new model
/// in every reply cannot grow the report without bound).
pub(crate) const MAX_ANSWERING_MODELS: usize = 8;

/// Adds `model` to `seen` unless it is there or `seen` is full
/// ([`MAX_ANSWERING_MODELS`]): the one rule for an exchange's and a record's list.
pub(crate) fn note_answering_model(seen: &mut Vec<String>, model: String) {
    if !seen.contains(&model) && seen.len() < MAX_ANSWERING_MODELS {
        seen.push(model);
    }
}

/// The models the endpoint says answered an exchange's replies, as they come.
#[derive(Default)]
struct AnsweredBy(std::sync::Mutex<Vec<String>>);

impl AnsweredBy {
    fn note(&self, model: Option<String>) {
        if let (Some(model), Ok(mut seen)) = (model, self.0.lock()) {
            note_answering_model(&mut seen, model);
        }
    }

    fn into_spent(self, spent: &mut Spent) {
        for model in self.0.into_inner().unwrap_or_default() {
            note_answering_model(&mut spent.answered_by, model);
        }
    }
}

/// Rule (filtered reply): an answer the endpoint's content filter stopped
/// (`finish_reason: content_filter`) is not the model's whole answer, so it is never
/// parsed, repaired or re-asked (the filter would stop the same answer again): the stage
/// fails, `truncated-output`, naming the filter.
fn filtered(label: &str, what: &str) -> ExchangeError {
    ExchangeError::Truncated(format!(
        "{label}: the endpoint's content filter stopped its {what} \
         (finish_reason: content_filter); a filtered reply is never parsed or repaired"
    ))
}

/// Runs the exchange: the agent loop with the stage's tools (unless tools are off); a
/// reply cut at the output limit is never parsed nor repaired, but re-asked once within
/// the budget ([`truncation_step`]); then extraction and typed parse; an invalid reply
/// gets exactly one isolated, tool-free repair call that sees the contract, the canonical
/// list (receipts only), the invalid reply and the parser error — never the snapshot
/// path or tools — and whose result must pass the repair rules ([`check_repair`]).
/// What the exchange spent is returned with its answer or its failure.
pub(super) async fn exchange(env: &ReviewEnv, ex: Exchange<'_>) -> Result<Answer, Failed> {
    let mut spent = Spent::default();
    match spending(env, ex, &mut spent).await {
        Ok(answer) => Ok(Answer { spent, ..answer }),
        Err(error) => Err(Failed { error, spent }),
    }
}

/// [`exchange`], adding what it spends to `spent` as it goes (the answer's own `spent`
/// is filled in by [`exchange`]): a reply within the output limit, then its parse, then
/// (when it does not parse) its repair.
async fn spending(
    env: &ReviewEnv,
    ex: Exchange<'_>,
    spent: &mut Spent,
) -> Result<Answer, ExchangeError> {
    let outcome = uncut_reply(env, &ex, spent).await?;
    if outcome.budget_hit.is_some() {
        env.diagnose(
            Some(ex.label),
            ex.stage,
            Some(ex.tools.ledger().recorded() as u64),
            ReasonCode::BudgetHit,
        );
    }
    // A leading reasoning block is the model thinking, not its answer.
    let prior_text = match answer_text(&outcome.final_text) {
        answer if answer.len() < outcome.final_text.len() => answer.to_string(),
        _ => outcome.final_text,
    };
    let error = match extract_and_parse(ex.handle, ex.kind, &ex.contract.schema, &prior_text) {
        Ok((value, reply)) => return Ok(Answer::of(reply, value, prior_text, false)),
        Err(error) => error,
    };
    spent.issues.push(error.issue(IssueStep::Repair));
    env.diagnose(Some(ex.label), "repair", None, ReasonCode::RepairAttempted);
    repair(env, &ex, prior_text, error, spent).await
}

impl Answer {
    /// An answer whose exchange's spending is filled in later, by [`exchange`].
    fn of(reply: TypedReply, value: Value, prior_text: String, repaired: bool) -> Answer {
        Answer {
            reply,
            value,
            prior_text,
            repaired,
            past_repair_bound: PastRepairBound::default(),
            spent: Spent::default(),
        }
    }
}

/// The stage's final reply, re-asked once with a shorter-answer notice when it was cut
/// off at the output limit ([`truncation_step`]); a filtered reply, or one cut off again,
/// is an error.
async fn uncut_reply(
    env: &ReviewEnv,
    ex: &Exchange<'_>,
    spent: &mut Spent,
) -> Result<AgentOutcome, ExchangeError> {
    let mut budget = ex.budget;
    budget.max_output_tokens_per_request =
        output_tokens(&ex.contract.schema, &ex.budget, env.inputs.window);
    let mut cuts = 0;
    let mut user = ex.user.clone();
    loop {
        let outcome = agent(env, ex, &user, budget, spent).await?;
        spent.usage.add(usage_of(&outcome));
        // Of the reply the answer rests on: the last one.
        spent.forced_synthesis = outcome.forced_synthesis;
        spent.budget_hit = outcome.budget_hit;
        if outcome.is_filtered() {
            return Err(filtered(ex.label, "reply"));
        }
        let used = spent.usage.prompt_tokens + spent.usage.completion_tokens;
        let left = ex.budget.max_total_tokens.saturating_sub(used);
        match truncation_step(outcome.is_truncated(), cuts, left > 0) {
            TruncationStep::Parse => return Ok(outcome),
            TruncationStep::ReAsk => {
                env.diagnose(Some(ex.label), ex.stage, None, ReasonCode::TruncatedOutput);
                cuts += 1;
                budget.max_total_tokens = left;
                user = format!(
                    "{}\n\n{}",
                    ex.user.trim_end(),
                    truncation_notice(budget.max_output_tokens_per_request)
                );
            }
            TruncationStep::Fail => {
                let again = if cuts > 0 {
                    " again, after one re-ask"
                } else {
                    ""
                };
                return Err(ExchangeError::Truncated(format!(
                    "{}: the reply was cut off at the output limit of {} tokens \
                     (finish_reason: length){again}; a cut reply is never parsed or repaired",
                    ex.label, budget.max_output_tokens_per_request
                )));
            }
        }
    }
}

/// The one isolated repair of a reply that did not parse (`error` says why): its result
/// must parse and pass [`check_repair`] against `prior_text`, else the exchange fails
/// naming both errors.
async fn repair(
    env: &ReviewEnv,
    ex: &Exchange<'_>,
    prior_text: String,
    error: ReplyFault,
    spent: &mut Spent,
) -> Result<Answer, ExchangeError> {
    // What the repair check will demand of a candidate repair (its contract's cap and,
    // for a reply shown in part, its message follow it).
    let demands = (ex.kind == ReplyKind::Candidates)
        .then(|| vouch_core::repair_demands(&prior_text, ex.expected.unwrap_or_default()));
    let owed = demands.as_ref().map_or(0, |d| {
        d.candidates.len().max(d.claims).max(d.places.len()) as u64
    });
    let repair_schema = ex
        .contract
        .repair(ex.handle, owed)
        .map_err(ExchangeError::Plugin)?;
    let repaired = ask_repair(
        env,
        ex,
        &repair_schema,
        (&prior_text, demands.as_ref()),
        &error,
        spent,
    )
    .await?;
    if repaired.is_filtered() {
        return Err(filtered(ex.label, "repair"));
    }
    if repaired.is_truncated() {
        return Err(ExchangeError::Truncated(format!(
            "{} returned no valid reply: {error}; its repair was cut off at the output limit \
             (finish_reason: length)",
            ex.label
        )));
    }
    let checked = extract_and_parse(
        ex.handle,
        ex.kind,
        &repair_schema,
        answer_text(&repaired.final_text),
    )
    .and_then(|(value, reply)| {
        let past = check_repair(&prior_text, &reply, ex.expected.unwrap_or_default())
            .map_err(ReplyFault::plain)?;
        Ok((value, reply, past))
    });
    match checked {
        Ok((value, reply, past)) => Ok(Answer {
            past_repair_bound: past,
            ..Answer::of(reply, value, prior_text, true)
        }),
        Err(repair_error) => {
            spent
                .issues
                .push(repair_error.issue(IssueStep::RepairFailed));
            env.diagnose(Some(ex.label), "repair", None, ReasonCode::InvalidOutput);
            Err(ExchangeError::Invalid(format!(
                "{} returned no valid reply: {error}; after repair: {repair_error}",
                ex.label
            )))
        }
    }
}

/// Bytes a repair request takes besides the prior reply: the envelope, the model's name
/// and the cut note.
const REPAIR_FRAME_BYTES: usize = 1_024;

/// Rule (a repair request within the stage's request bound): the JSON-escaped bytes of
/// the prior reply a repair may show: the request bound less the system message, the
/// repair message around the reply and the repair contract as `response_format`
/// (unbounded when the stage has no request bound).
fn repair_prior_bytes(ex: &Exchange<'_>, repair_schema: &Value, error: &str) -> usize {
    let Some(bound) = ex.budget.max_request_bytes else {
        return usize::MAX;
    };
    let frame = vouch_llm::json_text_len(REPAIR_SYSTEM)
        + vouch_llm::json_text_len(&repair_user_message(
            repair_schema,
            ex.expected,
            ("", None),
            error,
            usize::MAX,
        ))
        + vouch_llm::json_value_len(repair_schema)
        + REPAIR_FRAME_BYTES;
    usize::try_from(bound)
        .unwrap_or(usize::MAX)
        .saturating_sub(frame)
}

/// Sends the repair call: no tools, one turn, the repair contract as `response_format`,
/// and only what [`repair_user_message`] shows (the contract, the canonical list for
/// receipts, the prior reply and the parser error). What it spent joins `spent`.
async fn ask_repair(
    env: &ReviewEnv,
    ex: &Exchange<'_>,
    repair_schema: &Value,
    (prior_text, demands): (&str, Option<&vouch_core::RepairDemands>),
    error: &ReplyFault,
    spent: &mut Spent,
) -> Result<AgentOutcome, ExchangeError> {
    let error = error.to_string();
    let prior_bytes = repair_prior_bytes(ex, repair_schema, &error);
    let repair_user = repair_user_message(
        repair_schema,
        ex.expected,
        (prior_text, demands),
        &error,
        prior_bytes,
    );
    let repair_budget = Budget {
        max_turns: 1,
        max_tool_calls: 0,
        max_output_tokens_per_request: output_tokens(repair_schema, &ex.budget, env.inputs.window),
        max_total_tokens: u64::MAX,
        max_request_bytes: None,
    };
    let answered_by = AnsweredBy::default();
    let observer = |event: AgentEvent| {
        if let AgentEvent::Replied { model, .. } = event {
            answered_by.note(model);
        }
    };
    let repair = AgentRequest::new(REPAIR_SYSTEM, repair_user, env.services.cancel.clone())
        .with_response_schema(ResponseSchema {
            name: "vouch_repair_reply".into(),
            schema: repair_schema.clone(),
        })
        .with_budget(repair_budget)
        .with_observer(&observer);
    let repaired = run_agent(env.client_for(ex.model), repair).await;
    answered_by.into_spent(spent);
    let repaired = repaired.map_err(|e| {
        spent
            .usage
            .add(spent_before(vouch_llm::Usage::default(), &e));
        ExchangeError::from(e)
    })?;
    spent.usage.add(usage_of(&repaired));
    Ok(repaired)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_abi::{Coverage, VerifiedFinding, VerifierReply};

    /// [`output_tokens`]: (a string contract's `maxLength`, budget reply, request bound
    /// in tokens, window and whether it was stated) → `max_tokens` (the contract's bound
    /// counts the string's two quotes).
    #[test]
    fn a_reply_asks_its_bound_within_what_the_window_leaves() {
        type Case = ((u64, u32, u64, u32, bool), u32);
        let cases: [Case; 7] = [
            // A bound above the budget's reply is asked for when the window has room.
            ((2_065, 2_048, 6_000, 8_192, true), 2_067),
            // One verifier decision bounded at 2,847: only the 2,192 an 8k window leaves.
            ((2_847, 2_048, 6_000, 8_192, true), 2_192),
            // A window nobody stated caps nothing but the absolute cap.
            ((2_847, 2_048, 6_000, 8_192, false), 2_849),
            (
                (20_000, 8_192, 24_000, 32_768, false),
                MAX_OUTPUT_TOKENS_CAP,
            ),
            // The budget's own reply is never lowered.
            ((100, 2_048, 6_000, 8_192, true), 2_048),
            ((3_000, 4_096, 12_000, 16_384, true), 4_096),
            ((9_000, 4_096, 12_000, 16_384, true), 4_384),
        ];
        for ((bound, reply, request, tokens, stated), want) in cases {
            let schema = serde_json::json!({"type": "string", "maxLength": bound});
            let budget = Budget {
                max_output_tokens_per_request: reply,
                max_request_bytes: Some(request * vouch_core::BYTES_PER_TOKEN),
                ..Budget::default()
            };
            let window = ContextWindow {
                tokens,
                source: if stated {
                    WindowSource::Endpoint
                } else {
                    WindowSource::Default
                },
            };
            assert_eq!(
                output_tokens(&schema, &budget, window),
                want,
                "bound {bound}, reply {reply}, request {request}, window {tokens}"
            );
        }
    }

    fn proposed(revision: &str, severity: &str, area: &str) -> ProposedCandidate {
        ProposedCandidate {
            path: "src/lib.rs".into(),
            start_line: 3,
            end_line: 4,
            revision: revision.into(),
            severity: severity.into(),
            area: area.into(),
            claim: "c".into(),
            evidence: "e".into(),
        }
    }

    fn reply_with(candidate: ProposedCandidate) -> ParsedReply {
        ParsedReply::Candidates(CandidateReply {
            candidates: vec![candidate],
            coverage: Coverage::default(),
            summary: String::new(),
            dismissed_concerns: vec![],
        })
    }

    /// A plugin's parsed candidate (lanes and the audit alike) becomes typed or is a
    /// contract violation naming the candidate, the set and the value; whatever a plugin
    /// lets through, an area outside [`Area::ALL`] never gets a default.
    #[test]
    fn candidates_outside_the_vocabulary_are_contract_violations() {
        let cases = [
            (proposed("head", "high", "security"), Ok(Area::Security)),
            (
                proposed("base", "low", "failure-paths"),
                Ok(Area::FailurePaths),
            ),
            (
                proposed("head", "high", "style"),
                Err("candidates[0]: unknown area `style`"),
            ),
            (
                proposed("head", "high", "Security"),
                Err("candidates[0]: unknown area `Security`"),
            ),
            (
                proposed("head", "high", ""),
                Err("candidates[0]: unknown area ``"),
            ),
            (
                proposed("head", "urgent", "security"),
                Err("candidates[0]: unknown severity `urgent`"),
            ),
            (
                proposed("tip", "high", "security"),
                Err("candidates[0]: unknown revision `tip`"),
            ),
        ];
        for (candidate, expected) in cases {
            let got =
                typed_reply(reply_with(candidate.clone()), ReplyKind::Candidates).map(
                    |r| match r {
                        TypedReply::Candidates(a) => a.candidates[0].area,
                        TypedReply::Decisions(_) => panic!("candidates expected"),
                    },
                );
            assert_eq!(got, expected.map_err(String::from), "{candidate:?}");
        }
    }

    /// The verifier's reply carries no area; a decision outside its vocabulary is a
    /// contract violation too, and a reply of the other kind is refused in both stages.
    #[test]
    fn decisions_outside_the_vocabulary_and_wrong_kinds_are_contract_violations() {
        let decided = |verdict: &str, severity: &str| {
            ParsedReply::Decisions(VerifierReply {
                decisions: vec![DecisionPayload {
                    candidate_id: "a/0".into(),
                    decision: verdict.into(),
                    evidence: String::new(),
                    citations: vec![],
                    finding: Some(VerifiedFinding {
                        path: "src/lib.rs".into(),
                        start_line: 3,
                        end_line: 4,
                        severity: severity.into(),
                        claim: "c".into(),
                    }),
                }],
            })
        };
        assert!(typed_reply(decided("verified", "high"), ReplyKind::Decisions).is_ok());
        for (reply, message) in [
            (
                decided("proven", "high"),
                "decisions[0]: unknown verdict `proven`",
            ),
            (
                decided("verified", "urgent"),
                "decisions[0]: unknown severity `urgent`",
            ),
        ] {
            assert_eq!(
                typed_reply(reply, ReplyKind::Decisions).err().as_deref(),
                Some(message)
            );
        }
        let wrong = "the reply is of the wrong kind for this stage's contract";
        assert_eq!(
            typed_reply(decided("verified", "high"), ReplyKind::Candidates)
                .err()
                .as_deref(),
            Some(wrong)
        );
        assert_eq!(
            typed_reply(
                reply_with(proposed("head", "high", "security")),
                ReplyKind::Decisions
            )
            .err()
            .as_deref(),
            Some(wrong)
        );
    }
}
