//! The tool-calling agent loop with budgets that always apply.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::chat::{ChatReply, ChatRequest, FinishReason, ResponseSchema, Usage};
use crate::client::ModelClient;
use crate::error::LlmError;
use crate::message::{ChatMessage, ToolCall, ToolSpec};
use crate::size::{MIN_TOOL_ROOM, fixed_len, json_text_len, message_len, oversized_answer};

/// Tools a model may call during an agent run (the host's read-only repository tools).
///
/// Calls are synchronous and run on the async task: keep them quick and bounded.
pub trait ToolBox: Send + Sync {
    /// The tools offered to the model. An empty list makes the run tool-free.
    fn specs(&self) -> Vec<ToolSpec>;

    /// Runs tool `name` with a JSON-object `arguments`. `Err` carries a message the
    /// model will read (e.g. "path is outside the repository"); it never ends the run.
    ///
    /// `max_bytes` is the room the next request has for the answer, as a JSON string
    /// ([`crate::json_text_len`]). A longer answer must not be returned, nor counted as
    /// shown: return an error instead ([`crate::oversized_answer`]). The loop replaces
    /// any longer answer that still comes back with that error.
    fn call(&self, name: &str, arguments: &Value, max_bytes: usize) -> Result<String, String>;

    /// Answers the call only when its answer would repeat source this run already
    /// showed, so nothing new is read or recorded (a `diff` of a patch given inline in
    /// full, a `read_file` of lines already shown). Such a call is not counted against
    /// `max_tool_calls`, and is answered also once they are spent. `None` when the answer
    /// would show anything new, or the toolbox cannot tell cheaply: the loop then counts
    /// the call, or refuses it over the budget. Same contract for `max_bytes` as
    /// [`ToolBox::call`].
    fn repeat(&self, name: &str, arguments: &Value, max_bytes: usize) -> Option<String> {
        let _ = (name, arguments, max_bytes);
        None
    }
}

/// Limits of one agent run. They always apply; [`Budget::default`] gives the values
/// used when the user sets none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// Model requests that may offer tools (at least 1). A forced synthesis turn
    /// comes on top.
    pub max_turns: u32,
    /// Tool calls the host executes; further calls are answered with an error.
    pub max_tool_calls: u32,
    /// `max_tokens` sent with every request.
    pub max_output_tokens_per_request: u32,
    /// Prompt plus completion tokens over the run, as reported by the server; once
    /// reached, no further tool turn is started.
    pub max_total_tokens: u64,
    /// Largest request body the loop assembles after the first, in bytes (`None`: no
    /// bound). A tool answer that would take the next request past it is not shown
    /// (the toolbox is told the room left); once less than [`crate::MIN_TOOL_ROOM`] is
    /// left, no further tool turn is started. The first request is the caller's to
    /// size.
    pub max_request_bytes: Option<u64>,
}

impl Default for Budget {
    /// 12 turns, 24 tool calls, 2,048 output tokens per request, 60,000 total tokens.
    fn default() -> Self {
        Budget {
            max_turns: 12,
            max_tool_calls: 24,
            max_output_tokens_per_request: 2_048,
            max_total_tokens: 60_000,
            max_request_bytes: None,
        }
    }
}

/// Which budget ended the tool phase of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BudgetKind {
    /// `max_turns` tool turns were used and the model still called tools.
    Turns,
    /// `max_tool_calls` calls were executed and the model asked for more (a model that
    /// answers after exactly `max_tool_calls` calls hit nothing).
    ToolCalls,
    /// `max_total_tokens` was reached.
    TotalTokens,
    /// The next request had no room left for tool answers under `max_request_bytes`.
    RequestSize,
}

/// The user message sent on a forced synthesis turn when the caller supplies none.
pub const DEFAULT_FORCED_SYNTHESIS_PROMPT: &str = "Your tool budget for this task is spent: \
you cannot call tools any more. Give your final answer now, in the required output format, \
based only on what you have already read.";

/// What an agent run reports while it runs (for a progress display; never needed for
/// its result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentEvent {
    /// A reply arrived or a tool call was answered: the run's counts so far.
    Progress {
        /// Model replies received.
        turns: u32,
        /// Tool calls answered.
        tool_calls: u32,
    },
    /// A reply arrived: what it cost (its tokens and the HTTP requests it took). The sum
    /// of these is what a run spent before it failed, if it fails.
    Replied {
        /// The reply's usage.
        usage: Usage,
        /// The model the endpoint says answered, when it says.
        model: Option<String>,
    },
    /// A model request failed and will be sent again after `wait`.
    Retrying {
        /// The failed attempt's number (1 for the first).
        attempt: u32,
        /// Why it failed.
        cause: crate::RetryCause,
        /// The wait before the next attempt.
        wait: std::time::Duration,
    },
}

/// Receives an agent run's [`AgentEvent`]s.
pub type AgentObserver<'a> = &'a (dyn Fn(AgentEvent) + Send + Sync);

/// One agent run: the conversation start, the tools, the budget and the cancel signal.
pub struct AgentRequest<'a> {
    /// System message (role prompt and host policy text).
    pub system: String,
    /// User message (the task).
    pub user: String,
    /// Tools to offer; `None` (or a toolbox with no specs) makes a single tool-free turn.
    pub tools: Option<&'a dyn ToolBox>,
    /// Output contract, sent as `response_format: json_schema` on tool-free turns
    /// only (a tool-free run, or the forced synthesis turn).
    pub response_schema: Option<ResponseSchema>,
    /// Budgets; always applied.
    pub budget: Budget,
    /// Host-rendered text sent as a `user` message on the final tool-free turn when a
    /// budget is hit.
    pub forced_synthesis_prompt: String,
    /// Sampling temperature for every request (`None`: server default).
    pub temperature: Option<f32>,
    /// Cancels the run; the in-flight request is dropped.
    pub cancel: CancellationToken,
    /// Told of the run's progress and of each retried request.
    pub observer: Option<AgentObserver<'a>>,
}

impl<'a> AgentRequest<'a> {
    /// A tool-free request with default budget and synthesis prompt.
    pub fn new(
        system: impl Into<String>,
        user: impl Into<String>,
        cancel: CancellationToken,
    ) -> Self {
        AgentRequest {
            system: system.into(),
            user: user.into(),
            tools: None,
            response_schema: None,
            budget: Budget::default(),
            forced_synthesis_prompt: DEFAULT_FORCED_SYNTHESIS_PROMPT.to_owned(),
            temperature: None,
            cancel,
            observer: None,
        }
    }

    /// Reports progress and retries to `observer`.
    pub fn with_observer(mut self, observer: AgentObserver<'a>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Offers `tools`.
    pub fn with_tools(mut self, tools: &'a dyn ToolBox) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets the output contract schema.
    pub fn with_response_schema(mut self, schema: ResponseSchema) -> Self {
        self.response_schema = Some(schema);
        self
    }

    /// Sets the budget.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Sets the forced synthesis prompt.
    pub fn with_forced_synthesis_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.forced_synthesis_prompt = prompt.into();
        self
    }
}

/// The result of an agent run.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentOutcome {
    /// Content of the final reply (empty when it had none). Not validated.
    pub final_text: String,
    /// Finish reason of the final reply; `Length` means truncated.
    pub finish_reason: FinishReason,
    /// Usage summed over every request of the run.
    pub usage: Usage,
    /// Model replies received (tool turns plus any synthesis turn).
    pub turns: u32,
    /// Tool calls the model requested.
    pub tool_calls: u32,
    /// Tool calls answered with an error (unknown tool, invalid arguments, tool
    /// failure, over budget).
    pub tool_errors: u32,
    /// The budget that ended the tool phase, if any (a recorded limitation).
    pub budget_hit: Option<BudgetKind>,
    /// Whether the final reply came from a forced synthesis turn.
    pub forced_synthesis: bool,
    /// Whether the final reply was generated under `response_format: json_schema`.
    pub structured: bool,
    /// The whole conversation, final reply included.
    pub messages: Vec<ChatMessage>,
}

impl AgentOutcome {
    /// Whether the final answer was cut off by the token limit (`finish_reason:
    /// length`). A truncated answer must never be parsed as complete.
    pub fn is_truncated(&self) -> bool {
        self.finish_reason == FinishReason::Length
    }

    /// Whether the endpoint's content filter withheld part of the final answer
    /// (`finish_reason: content_filter`). A filtered answer is not the model's whole
    /// answer and must never be parsed as one.
    pub fn is_filtered(&self) -> bool {
        self.finish_reason == FinishReason::ContentFilter
    }
}

/// Runs the agent loop.
///
/// Each turn sends the conversation (with tools when the run has any). A reply with
/// tool calls gets one `tool` message per call: the tool's output, or an error the
/// model can read for an unknown tool, arguments that are not a JSON object (e.g.
/// truncated), a tool failure, or a call beyond `max_tool_calls`. The loop ends at
/// the first reply without tool calls. When a budget is hit while the model still
/// works with tools, the host appends `forced_synthesis_prompt` as a `user` message
/// and sends one last request without tools (with the response schema, if any); that
/// reply is final whatever it contains.
///
/// # Errors
/// Any [`LlmError`] of a request ([`LlmError::Cancelled`] when `cancel` fires).
pub async fn run_agent(
    client: &ModelClient,
    request: AgentRequest<'_>,
) -> Result<AgentOutcome, LlmError> {
    let budget = request.budget;
    let max_turns = budget.max_turns.max(1);
    let specs = request.tools.map(|t| t.specs()).unwrap_or_default();
    let toolbox = request.tools.filter(|_| !specs.is_empty());
    let known: BTreeSet<String> = specs.iter().map(|s| s.name.clone()).collect();
    let turn = |messages: &[ChatMessage], tools: Vec<ToolSpec>| ChatRequest {
        messages: messages.to_vec(),
        response_schema: if tools.is_empty() {
            request.response_schema.clone()
        } else {
            None
        },
        tools,
        max_tokens: Some(budget.max_output_tokens_per_request),
        temperature: request.temperature,
    };

    let mut run = Run::default();
    run.push(ChatMessage::system(&request.system));
    run.push(ChatMessage::user(&request.user));
    let observe = |event: AgentEvent| {
        if let Some(observer) = request.observer {
            observer(event);
        }
    };
    let on_retry = |attempt: u32, cause: crate::RetryCause, wait: std::time::Duration| {
        observe(AgentEvent::Retrying {
            attempt,
            cause,
            wait,
        });
    };
    let complete = |messages: &[ChatMessage], tools: Vec<ToolSpec>| {
        client.complete_observed(turn(messages, tools), &request.cancel, &on_retry)
    };
    let Some(toolbox) = toolbox else {
        let reply = complete(&run.messages, Vec::new()).await?;
        run.replied(&reply, &observe);
        return Ok(run.finish(reply, None));
    };

    let room = Room::new(&request, &turn(&[], specs.clone()), &turn(&[], Vec::new()));
    loop {
        let reply = complete(&run.messages, specs.clone()).await?;
        run.replied(&reply, &observe);
        if reply.tool_calls.is_empty() {
            return Ok(run.finish(reply, None));
        }
        for call in &reply.tool_calls {
            if request.cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            let answer = answer_call(toolbox, &known, call, &mut run, &room, &budget);
            run.answer(call, answer);
            observe(run.progress());
        }
        if let Some(kind) = budget_hit(&run, &room, &budget, max_turns) {
            tracing::info!(budget = ?kind, turns = run.turns, "agent budget hit; forcing synthesis");
            run.push(ChatMessage::user(&request.forced_synthesis_prompt));
            let reply = complete(&run.messages, Vec::new()).await?;
            run.replied(&reply, &observe);
            return Ok(run.finish(reply, Some(kind)));
        }
    }
}

/// The budget a tool turn has used up, if any, checked in this order: turns, tool calls,
/// total tokens, then the room the next request has left for tool answers.
fn budget_hit(run: &Run, room: &Room, budget: &Budget, max_turns: u32) -> Option<BudgetKind> {
    if run.turns >= max_turns {
        Some(BudgetKind::Turns)
    } else if run.refused_over_budget {
        Some(BudgetKind::ToolCalls)
    } else if run.usage.counted_tokens() >= budget.max_total_tokens {
        Some(BudgetKind::TotalTokens)
    } else if room.left(run) < MIN_TOOL_ROOM {
        Some(BudgetKind::RequestSize)
    } else {
        None
    }
}

/// Answers one tool call within the budget: refused once `max_tool_calls` are spent or
/// the request has no room left, and never longer than the room the next request has. A
/// call that only repeats what the run showed ([`ToolBox::repeat`]) is answered without
/// being counted, also past the budget.
fn answer_call(
    toolbox: &dyn ToolBox,
    known: &BTreeSet<String>,
    call: &ToolCall,
    run: &mut Run,
    room: &Room,
    budget: &Budget,
) -> Result<String, String> {
    let left = room.for_answer(run, &call.id);
    if left >= MIN_TOOL_ROOM
        && let Some(answer) = repeated(toolbox, known, call, left)
    {
        return Ok(answer);
    }
    if run.executed >= budget.max_tool_calls {
        run.refused_over_budget = true;
        return Err(format!(
            "not executed: the tool-call budget of {} calls is spent; \
             answer with what you have read",
            budget.max_tool_calls
        ));
    }
    if left < MIN_TOOL_ROOM {
        return Err("not executed: this request has reached its size bound \
                    (max_request_tokens); answer with what you have read"
            .to_owned());
    }
    run.executed += 1;
    let answer = call_tool(toolbox, known, call, left)?;
    let bytes = json_text_len(&answer);
    if bytes > left {
        return Err(oversized_answer(bytes, left));
    }
    Ok(answer)
}

/// The answer of a call that only repeats what the run already showed ([`ToolBox::repeat`]),
/// within `max_bytes`: not counted, never refused for the call budget.
fn repeated(
    toolbox: &dyn ToolBox,
    known: &BTreeSet<String>,
    call: &ToolCall,
    max_bytes: usize,
) -> Option<String> {
    if !known.contains(call.name.as_str()) {
        return None;
    }
    let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
    let answer = toolbox.repeat(&call.name, &arguments, max_bytes)?;
    (json_text_len(&answer) <= max_bytes).then_some(answer)
}

/// The size bound of a run's requests: what every later request carries besides its
/// messages (the larger of a tool turn's and the forced synthesis turn's, the forced
/// synthesis prompt included), and the bound.
struct Room {
    bound: Option<usize>,
    fixed: usize,
}

impl Room {
    fn new(request: &AgentRequest<'_>, tool_turn: &ChatRequest, synthesis: &ChatRequest) -> Self {
        let forced = message_len(&ChatMessage::user(&request.forced_synthesis_prompt));
        Room {
            bound: request
                .budget
                .max_request_bytes
                .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
            fixed: fixed_len(tool_turn).max(fixed_len(synthesis) + forced),
        }
    }

    /// Bytes the next request has left for further messages.
    fn left(&self, run: &Run) -> usize {
        self.bound.map_or(usize::MAX, |bound| {
            bound.saturating_sub(self.fixed + run.bytes)
        })
    }

    /// Bytes the content of a tool message answering `call_id` may take.
    fn for_answer(&self, run: &Run, call_id: &str) -> usize {
        let envelope = message_len(&ChatMessage::tool(call_id, ""));
        self.left(run).saturating_sub(envelope)
    }
}

/// Counters and transcript of a run in progress.
#[derive(Default)]
struct Run {
    messages: Vec<ChatMessage>,
    /// Wire bytes of `messages`.
    bytes: usize,
    usage: Usage,
    turns: u32,
    tool_calls: u32,
    tool_errors: u32,
    executed: u32,
    /// A call was refused because `max_tool_calls` were already executed.
    refused_over_budget: bool,
}

impl Run {
    fn progress(&self) -> AgentEvent {
        AgentEvent::Progress {
            turns: self.turns,
            tool_calls: self.tool_calls,
        }
    }

    fn push(&mut self, message: ChatMessage) {
        self.bytes += message_len(&message);
        self.messages.push(message);
    }

    /// Records `reply` and tells the observer: who replied and what it spent, then the
    /// run's progress.
    fn replied(&mut self, reply: &ChatReply, observe: &impl Fn(AgentEvent)) {
        self.record(reply);
        observe(AgentEvent::Replied {
            usage: reply.usage,
            model: reply.model.clone(),
        });
        observe(self.progress());
    }

    fn record(&mut self, reply: &ChatReply) {
        self.turns += 1;
        self.usage.add(reply.usage);
        self.push(reply.to_message());
    }

    fn answer(&mut self, call: &ToolCall, answer: Result<String, String>) {
        self.tool_calls += 1;
        let content = answer.unwrap_or_else(|error| {
            self.tool_errors += 1;
            format!("error: {error}")
        });
        self.push(ChatMessage::tool(&call.id, content));
    }

    /// Ends the run with `reply`, which must already be recorded.
    fn finish(self, reply: ChatReply, budget_hit: Option<BudgetKind>) -> AgentOutcome {
        AgentOutcome {
            final_text: reply.content.unwrap_or_default(),
            finish_reason: reply.finish_reason,
            usage: self.usage,
            turns: self.turns,
            tool_calls: self.tool_calls,
            tool_errors: self.tool_errors,
            budget_hit,
            forced_synthesis: budget_hit.is_some(),
            structured: reply.structured,
            messages: self.messages,
        }
    }
}

/// Validates and executes one call; `Err` is the text the model will see.
fn call_tool(
    toolbox: &dyn ToolBox,
    known: &BTreeSet<String>,
    call: &ToolCall,
    max_bytes: usize,
) -> Result<String, String> {
    let name = call.name.as_str();
    if !known.contains(name) {
        let available: Vec<&str> = known.iter().map(String::as_str).collect();
        return Err(format!(
            "unknown tool `{name}`; available tools: {}",
            available.join(", ")
        ));
    }
    let arguments: Value = if call.arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(&call.arguments).map_err(|error| {
            format!(
                "the arguments of `{name}` are not valid JSON ({error}); the call was not \
                 executed. Call it again with one complete JSON object."
            )
        })?
    };
    if !arguments.is_object() {
        return Err(format!("the arguments of `{name}` must be a JSON object"));
    }
    toolbox.call(name, &arguments, max_bytes)
}
