//! One stage execution's model exchange: agent loop → extraction → at most one isolated
//! repair → plugin parse.

use serde_json::Value;
use vouch_abi::ParsedReply;
use vouch_abi::contract::token_bound;
use vouch_core::TokenUsage;
use vouch_llm::extract::extract_json;
use vouch_llm::{AgentOutcome, AgentRequest, Budget, LlmError, ResponseSchema, run_agent};

use super::env::{ReviewEnv, ToolsMode};
use crate::diagnostics::ReasonCode;
use crate::policy::{FORCED_SYNTHESIS, REPAIR_SYSTEM, repair_user_message};
use crate::registry::{PluginError, SpecialistHandle};
use crate::tools::RepoTools;

/// Most output tokens any single request may ask for, whatever the contract's bound.
pub const MAX_OUTPUT_TOKENS_CAP: u32 = 8_192;

/// Why an exchange produced no usable reply.
#[derive(Debug)]
pub enum ExchangeError {
    /// The run was cancelled.
    Cancelled,
    /// The endpoint failed (the message is safe to show: it never contains the key).
    Provider(LlmError),
    /// The plugin failed.
    Plugin(PluginError),
    /// The reply stayed invalid after repair (or was truncated).
    Invalid {
        /// What was wrong, for the report.
        message: String,
        /// True when a `finish_reason: length` cut was involved.
        truncated: bool,
    },
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

/// A usable reply.
#[derive(Debug)]
pub struct Answer {
    /// The plugin-parsed reply.
    pub parsed: ParsedReply,
    /// The extracted JSON object.
    pub value: Value,
    /// The model text of the execution (before any repair): where a repaired
    /// full-coverage quote must occur verbatim.
    pub prior_text: String,
    /// True when an isolated repair produced it.
    pub repaired: bool,
    /// Token usage of the execution and its repair.
    pub usage: TokenUsage,
    /// The budget the execution hit, if any.
    pub budget_hit: Option<String>,
    /// Whether the final reply was forced.
    pub forced_synthesis: bool,
}

/// One exchange's inputs.
pub struct Exchange<'a> {
    /// Instance label.
    pub label: &'a str,
    /// The specialist.
    pub handle: &'a SpecialistHandle,
    /// System message.
    pub system: String,
    /// User message (task plus the host's sections).
    pub user: String,
    /// Output contract.
    pub schema: Value,
    /// Repair contract (adds `fullCoverageQuote` for receipts).
    pub repair_schema: Value,
    /// The canonical list, for receipts (`None` for the verifier).
    pub expected: Option<&'a [String]>,
    /// Budget of the agent loop.
    pub budget: Budget,
    /// Tools of this execution (their ledger is the execution's).
    pub tools: &'a RepoTools,
    /// The specialist's own model (`None`: the run's default client).
    pub model: Option<&'a str>,
}

fn usage_of(outcome: &AgentOutcome) -> TokenUsage {
    TokenUsage {
        requests: u64::from(outcome.usage.requests),
        prompt_tokens: outcome.usage.prompt_tokens,
        completion_tokens: outcome.usage.completion_tokens,
    }
}

fn budget_name(outcome: &AgentOutcome) -> Option<String> {
    outcome.budget_hit.map(|b| match b {
        vouch_llm::BudgetKind::Turns => "turns".to_string(),
        vouch_llm::BudgetKind::ToolCalls => "tool-calls".to_string(),
        vouch_llm::BudgetKind::TotalTokens => "tokens".to_string(),
    })
}

/// `max_tokens` for a reply under `schema`: the contract's bound, at least the budget's
/// own value and at most [`MAX_OUTPUT_TOKENS_CAP`].
fn output_tokens(schema: &Value, budget: &Budget) -> u32 {
    let bound = u32::try_from(token_bound(schema)).unwrap_or(u32::MAX);
    bound
        .max(budget.max_output_tokens_per_request)
        .min(MAX_OUTPUT_TOKENS_CAP)
}

/// True when an HTTP 400/422 body says the endpoint cannot take `tools` (matching the
/// body text is the only signal compatible servers give).
fn rejects_tools(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    body.contains("tool") && !body.contains("response_format") && !body.contains("json_schema")
}

/// Extracts the one contract-valid object from `text` and parses it with the plugin.
fn extract_and_parse(
    handle: &SpecialistHandle,
    text: &str,
) -> Result<(Value, ParsedReply), String> {
    let value = extract_json(text, |v| {
        handle.parse(v).map(|_| ()).map_err(|e| e.to_string())
    })
    .map_err(|e| e.to_string())?;
    let parsed = handle.parse(&value).map_err(|e| e.to_string())?;
    Ok((value, parsed))
}

/// Runs the exchange: the agent loop with the stage's tools (unless tools are off),
/// then extraction; a reply that is invalid or truncated gets exactly one isolated,
/// tool-free repair call that sees the contract, the canonical list (receipts only),
/// the invalid reply and the parser error — never the snapshot path or tools.
pub async fn exchange(env: &ReviewEnv, ex: Exchange<'_>) -> Result<Answer, ExchangeError> {
    let mut budget = ex.budget;
    budget.max_output_tokens_per_request = output_tokens(&ex.schema, &ex.budget);
    let request = |with_tools: bool| {
        let request = AgentRequest::new(ex.system.clone(), ex.user.clone(), env.cancel.clone())
            .with_response_schema(ResponseSchema {
                name: "vouch_stage_reply".into(),
                schema: ex.schema.clone(),
            })
            .with_budget(budget)
            .with_forced_synthesis_prompt(FORCED_SYNTHESIS);
        if with_tools {
            request.with_tools(ex.tools)
        } else {
            request
        }
    };
    let client = env.client_for(ex.model);
    let with_tools = env.tools_enabled();
    let outcome = match run_agent(client, request(with_tools)).await {
        // Auto mode: an endpoint that rejects tools gets inline context from now on.
        Err(LlmError::Http {
            status: 400 | 422,
            body,
        }) if with_tools && env.tools == ToolsMode::Auto && rejects_tools(&body) => {
            env.tools_rejected
                .store(true, std::sync::atomic::Ordering::Relaxed);
            env.diagnose(Some(ex.label), "lane", None, ReasonCode::ToolsFallback);
            run_agent(client, request(false)).await?
        }
        other => other?,
    };
    let mut usage = usage_of(&outcome);
    let budget_hit = budget_name(&outcome);
    if budget_hit.is_some() {
        env.diagnose(
            Some(ex.label),
            "lane",
            Some(ex.tools.ledger().windows.len() as u64),
            ReasonCode::BudgetHit,
        );
    }
    let prior_text = outcome.final_text.clone();
    let first = if outcome.is_truncated() {
        env.diagnose(Some(ex.label), "lane", None, ReasonCode::TruncatedOutput);
        Err("the reply was cut off at the output token limit (finish_reason: length); it is not a complete answer".to_string())
    } else {
        extract_and_parse(ex.handle, &prior_text)
    };
    let error = match first {
        Ok((value, parsed)) => {
            return Ok(Answer {
                parsed,
                value,
                prior_text,
                repaired: false,
                usage,
                budget_hit,
                forced_synthesis: outcome.forced_synthesis,
            });
        }
        Err(error) => error,
    };
    env.diagnose(Some(ex.label), "repair", None, ReasonCode::RepairAttempted);
    let repair_user = repair_user_message(&ex.repair_schema, ex.expected, &prior_text, &error);
    let repair_budget = Budget {
        max_turns: 1,
        max_tool_calls: 0,
        max_output_tokens_per_request: output_tokens(&ex.repair_schema, &ex.budget),
        max_total_tokens: u64::MAX,
    };
    let repair = AgentRequest::new(REPAIR_SYSTEM, repair_user, env.cancel.clone())
        .with_response_schema(ResponseSchema {
            name: "vouch_repair_reply".into(),
            schema: ex.repair_schema.clone(),
        })
        .with_budget(repair_budget);
    let repaired = run_agent(client, repair).await?;
    usage.add(usage_of(&repaired));
    let truncated = repaired.is_truncated();
    let second = if truncated {
        Err(
            "the repair reply was cut off at the output token limit (finish_reason: length)"
                .to_string(),
        )
    } else {
        extract_and_parse(ex.handle, &repaired.final_text)
    };
    match second {
        Ok((value, parsed)) => Ok(Answer {
            parsed,
            value,
            prior_text,
            repaired: true,
            usage,
            budget_hit,
            forced_synthesis: outcome.forced_synthesis,
        }),
        Err(repair_error) => {
            env.diagnose(Some(ex.label), "repair", None, ReasonCode::InvalidOutput);
            Err(ExchangeError::Invalid {
                message: format!(
                    "{} returned no valid reply: {error}; after repair: {repair_error}",
                    ex.label
                ),
                truncated: truncated || outcome.is_truncated(),
            })
        }
    }
}
