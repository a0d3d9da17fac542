//! One stage execution, the same for every model stage (lanes, audit, verifier,
//! focused pass): prompt sections assembled once → exchange ([`super::reply`]: agent
//! loop, truncation rule, extraction, typed parse, repair and its rules) → ledger and
//! record; and the one mapping from an exchange error to a failure kind and reason code.

use vouch_abi::{PromptRequest, Role};
use vouch_core::{BudgetKind, Failure, FailureKind, StageRecord, StageStatus};

pub(crate) use super::contract::Contract;
use super::env::ReviewEnv;
use super::inline::InlineSource;
use super::reply::{Answer, Exchange, ExchangeError, Failed, ReplyKind, Spent, exchange};
use super::stage::StagePlan;
use crate::diagnostics::ReasonCode;
use crate::policy::{
    ANSWER_REMINDER, compose_user_message, expected_files_section, inline_context_section,
    output_contract_section, split_files_section, tools_section,
};
use crate::registry::SpecialistHandle;
use crate::tools::RepoTools;

/// What a model stage execution is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StageKind {
    /// A candidate lane (investigator, conventions, reviewer, …).
    Lane,
    /// The clean-result audit.
    Audit,
    /// The verifier's pass over all candidates.
    Verification,
    /// A focused single-candidate verification pass.
    FocusedVerification,
}

impl StageKind {
    /// The kind of a candidate-producing stage of `role`.
    pub(crate) fn of_role(role: Role) -> StageKind {
        match role {
            Role::CleanResultAudit => StageKind::Audit,
            Role::Verifier => StageKind::Verification,
            _ => StageKind::Lane,
        }
    }

    /// The diagnostic stage name (`lane`, `audit`, `verification`).
    pub(super) fn as_str(self) -> &'static str {
        match self {
            StageKind::Lane => "lane",
            StageKind::Audit => "audit",
            StageKind::Verification | StageKind::FocusedVerification => "verification",
        }
    }

    /// The reply kind its contract describes.
    fn reply(self) -> ReplyKind {
        match self {
            StageKind::Lane | StageKind::Audit => ReplyKind::Candidates,
            StageKind::Verification | StageKind::FocusedVerification => ReplyKind::Decisions,
        }
    }
}

/// A fresh record of a stage instance of `handle` labelled `label` with `assigned`
/// files: accepted until something says otherwise.
pub(super) fn stage_record(label: &str, handle: &SpecialistHandle, assigned: usize) -> StageRecord {
    let d = handle.descriptor();
    StageRecord::new(label, (&d.id, &d.version, d.role), assigned)
}

/// One execution's inputs: who runs, what it is given, and its contract.
pub(super) struct Execution<'a> {
    /// What the execution is for.
    pub(crate) kind: StageKind,
    /// Its label (a focused pass has its own).
    pub(crate) label: &'a str,
    /// The planned instance (specialist, model, budget, assigned files).
    pub(crate) plan: &'a StagePlan,
    /// What the plugin renders its role prompt from.
    pub(crate) request: PromptRequest,
    /// The output contract (already fitted to the budget).
    pub(crate) contract: Contract,
    /// Source the host gives inline (recorded in `tools`' ledger already).
    pub(crate) inline: &'a InlineSource,
    /// The prefetch section (recorded in `tools`' ledger already; empty for none).
    pub(crate) prefetch: &'a str,
    /// The execution's tools and ledger.
    pub(crate) tools: &'a RepoTools,
}

/// The messages and contracts of an execution, assembled once.
pub(crate) struct Prepared<'a> {
    execution: Execution<'a>,
    system: String,
    /// The user message: the plugin's task, then the host's sections.
    pub(crate) user: String,
}

/// Assembles an execution's messages once, stable content first (issue 10, "Prompt
/// economy"; issue 28 item 6, the prefix a lane's shards share): the tools section (when
/// offered) and the output contract, the plugin's prompt (policy evidence and task, then
/// instance and change), then the change-specific host sections — inline source,
/// prefetched graph context, expected files (receipts only) — and [`ANSWER_REMINDER`].
/// The expected list appears once; the contract repeats no path. The policy evidence
/// windows join the ledger.
pub(super) fn prepare<'a>(
    env: &ReviewEnv,
    execution: Execution<'a>,
) -> Result<Prepared<'a>, ExchangeError> {
    let handle = &execution.plan.handle;
    let prompt = handle
        .render_prompt(&execution.request)
        .map_err(ExchangeError::Plugin)?;
    for w in env.inputs.policy.iter().filter_map(|(_, w)| w.clone()) {
        execution.tools.record(w);
    }
    let mut prelude = Vec::new();
    if env.tools_enabled() {
        prelude.push(tools_section(
            vouch_git::reader::MAX_LINES,
            vouch_git::reader::MAX_BYTES as u32,
            vouch_git::reader::MAX_GREP_MATCHES as u32,
        ));
    }
    prelude.push(output_contract_section(&execution.contract.schema));
    let mut sections = vec![inline_context_section(
        &execution.inline.blocks,
        &execution.inline.omitted,
    )];
    if !execution.prefetch.is_empty() {
        sections.push(execution.prefetch.to_string());
    }
    if execution.kind.reply() == ReplyKind::Candidates {
        let split: Vec<&str> = execution
            .plan
            .split
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        if !split.is_empty() {
            sections.push(split_files_section(&split));
        }
        sections.push(expected_files_section(&execution.plan.assigned));
    }
    sections.push(ANSWER_REMINDER.to_string());
    Ok(Prepared {
        user: compose_user_message(&prelude, &prompt.user, &sections),
        system: prompt.system,
        execution,
    })
}

impl Prepared<'_> {
    /// Runs one exchange of the execution with `user` (the prepared message, or it
    /// plus a coverage retry section).
    pub(super) async fn ask(&self, env: &ReviewEnv, user: String) -> Result<Answer, Failed> {
        let ex = &self.execution;
        let receipts = ex.kind.reply() == ReplyKind::Candidates;
        exchange(
            env,
            Exchange {
                label: ex.label,
                stage: ex.kind.as_str(),
                handle: &ex.plan.handle,
                system: &self.system,
                user,
                contract: &ex.contract,
                kind: ex.kind.reply(),
                expected: receipts.then_some(ex.plan.assigned.as_slice()),
                budget: ex.plan.budget,
                tools: ex.tools,
                model: ex.plan.model.as_deref(),
            },
        )
        .await
    }
}

/// The report's spelling of the agent loop's budget kind.
fn budget_kind(kind: vouch_llm::BudgetKind) -> BudgetKind {
    match kind {
        vouch_llm::BudgetKind::Turns => BudgetKind::Turns,
        vouch_llm::BudgetKind::ToolCalls => BudgetKind::ToolCalls,
        vouch_llm::BudgetKind::TotalTokens => BudgetKind::TotalTokens,
        vouch_llm::BudgetKind::RequestSize => BudgetKind::RequestSize,
    }
}

/// Adds an answer's bookkeeping to its stage record (what it spent, whether a repair
/// produced it).
pub(crate) fn note_answer(record: &mut StageRecord, answer: &Answer) {
    note_spent(record, &answer.spent);
    record.repaired |= answer.repaired;
}

/// Adds what an exchange spent to its stage record: usage, forced synthesis, the budget
/// hit, the models that answered.
fn note_spent(record: &mut StageRecord, spent: &Spent) {
    record.usage.add(spent.usage);
    record.forced_synthesis |= spent.forced_synthesis;
    if let Some(kind) = spent.budget_hit {
        record.budget_hit = Some(budget_kind(kind));
    }
    for model in &spent.answered_by {
        super::reply::note_answering_model(&mut record.answered_by, model.clone());
    }
    record.reply_issues.extend(spent.issues.iter().cloned());
}

impl Failed {
    /// Adds what the failed exchange spent to its stage record, and gives its error: a
    /// failed stage's requests and tokens count like any other's.
    pub(crate) fn noted(self, record: &mut StageRecord) -> ExchangeError {
        note_spent(record, &self.spent);
        self.error
    }
}

/// What a stage failure says after a request that ran out of time (each attempt did,
/// retries included): which settings raise the per-request timeout.
const TIMEOUT_ADVICE: &str = "; a slow endpoint needs a longer per-request \
     timeout: raise it with --timeout SECONDS, or request_timeout_secs under [model] in the \
     manifest or the user configuration's profile";

/// What a stage failure says after the endpoint refused a request as longer than the
/// model's context window: how to tell vouch that window, so it sizes every request to it.
fn window_advice(overflow: vouch_llm::ContextOverflow) -> String {
    let smallest = crate::manifest::MIN_CONTEXT_TOKENS;
    if let Some(w) = overflow.window.filter(|&w| w < smallest) {
        return format!(
            "; the endpoint says the model's context window is {w} tokens, smaller than \
             any window vouch can review in ({smallest}): serve the model with a context of \
             at least {smallest} tokens (llama.cpp -c, Ollama num_ctx, vLLM --max-model-len)"
        );
    }
    let n = overflow
        .window
        .map_or_else(|| "N".to_owned(), |w| w.to_string());
    format!(
        "; the endpoint says the request was longer than the model's context window: state \
         the window with context_tokens = {n} under [model] in the manifest or in the user \
         configuration's profile, and vouch sizes every request and reply to fit it (a \
         slightly smaller value leaves room for a tokenizer that counts more tokens than \
         vouch estimates)"
    )
}

/// Rule (failures): the one mapping from an exchange error to a failure kind, its
/// allowlisted reason code and the message for the report. `None` for a cancellation
/// (the review is aborted, not failed).
pub(crate) fn failure_of(label: &str, e: ExchangeError) -> Option<(Failure, ReasonCode)> {
    let mut detail = None;
    let (kind, message, reason) = match e {
        ExchangeError::Cancelled => return None,
        ExchangeError::Provider(err) => {
            detail = err.response_body().map(str::to_owned);
            let advice = match err.response_body().and_then(vouch_llm::context_overflow) {
                Some(overflow) => window_advice(overflow),
                None if err.is_timeout() => TIMEOUT_ADVICE.to_owned(),
                None => String::new(),
            };
            (
                FailureKind::ProviderError,
                format!("{label}: the model endpoint failed: {err}{advice}"),
                ReasonCode::ProviderError,
            )
        }
        ExchangeError::Plugin(err) => (
            FailureKind::PluginError,
            format!("{label}: {err}"),
            ReasonCode::PluginError,
        ),
        ExchangeError::Invalid(message) => (
            FailureKind::InvalidOutput,
            message,
            ReasonCode::InvalidOutput,
        ),
        ExchangeError::Truncated(message) => (
            FailureKind::TruncatedOutput,
            message,
            ReasonCode::TruncatedOutput,
        ),
    };
    Some((
        Failure {
            kind,
            stage: Some(label.to_string()),
            message,
            detail,
        },
        reason,
    ))
}

/// Records a failed execution on its record: `failed` with the failure's message (and
/// its diagnostic), or `cancelled`. Returns the failure, if it was one.
pub(super) fn fail(
    env: &ReviewEnv,
    kind: StageKind,
    record: &mut StageRecord,
    e: ExchangeError,
) -> Option<Failure> {
    if matches!(e, ExchangeError::Invalid(_)) {
        // Output is invalid only after its one isolated repair ran.
        record.repaired = true;
    }
    match failure_of(&record.label, e) {
        None => {
            record.status = StageStatus::Cancelled;
            None
        }
        Some((failure, reason)) => {
            env.diagnose_record(kind.as_str(), record, reason);
            record.status = StageStatus::Failed;
            record.problem = Some(failure.message.clone());
            Some(failure)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use vouch_llm::LlmError;

    use super::*;

    #[test]
    fn a_request_that_ran_out_of_time_names_the_settings_that_raise_the_timeout() {
        let timeout = || LlmError::Timeout {
            timeout: Duration::from_secs(2),
        };
        let exhausted = LlmError::RetriesExhausted {
            attempts: 4,
            last: Box::new(timeout()),
        };
        for (error, advised) in [
            (timeout(), true),
            (exhausted, true),
            (
                LlmError::RetriesExhausted {
                    attempts: 4,
                    last: Box::new(LlmError::Http {
                        status: 503,
                        body: String::new(),
                    }),
                },
                false,
            ),
        ] {
            let (failure, _) = failure_of("lane #1", ExchangeError::Provider(error)).unwrap();
            assert_eq!(
                failure.message.ends_with(TIMEOUT_ADVICE),
                advised,
                "{}",
                failure.message
            );
        }
        assert!(TIMEOUT_ADVICE.contains("--timeout SECONDS"));
        assert!(TIMEOUT_ADVICE.contains("request_timeout_secs under [model]"));
    }
}
