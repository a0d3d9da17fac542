//! vouch-llm: model access for vouch.
//!
//! - [`ModelClient`] sends one chat completion to an OpenAI-compatible endpoint
//!   through async-openai (bring-your-own-types calls, so servers that add or omit
//!   fields still work) and owns the retry, timeout, cancellation and
//!   structured-output fallback policy.
//! - [`run_agent`] runs a bounded tool-calling loop over a [`ToolBox`], with default
//!   budgets that always apply and a forced tool-free synthesis turn when one is hit.
//! - [`extract`] finds the one contract-valid JSON object in model text.
//!
//! The API key never appears in `Debug` output or error texts.

mod agent;
mod chat;
mod client;
mod config;
mod error;
mod error_body;
pub mod exchange;
pub mod extract;
mod http;
mod message;
mod preflight;
mod retry;
mod size;

pub use agent::{
    AgentEvent, AgentObserver, AgentOutcome, AgentRequest, Budget, BudgetKind,
    DEFAULT_FORCED_SYNTHESIS_PROMPT, ToolBox, run_agent,
};
pub use chat::{ChatReply, ChatRequest, FinishReason, ResponseSchema, Usage};
pub use client::ModelClient;
pub use config::{AuthScheme, BaseUrl, EndpointConfig};
pub use error::{BODY_EXCERPT_CHARS, LlmError, MIN_SECRET_CHARS, RetryCause};
pub use error_body::{ContextOverflow, SUMMARY_CHARS, context_overflow, summarize_error_body};
pub use exchange::{ExchangeStats, Exchanges};
pub use message::{ChatMessage, ToolCall, ToolSpec};
pub use preflight::{EndpointCheck, EndpointProblem, azure_deployment, without_credentials};
pub use size::{MIN_TOOL_ROOM, cut_to_json_len, json_text_len, json_value_len, oversized_answer};
