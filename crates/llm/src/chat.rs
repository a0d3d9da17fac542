//! One chat completion: what vouch asks ([`ChatRequest`]) and what it reads back
//! ([`ChatReply`]), plus the lenient decoding of compatible servers' replies.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::Value;

use crate::message::{ChatMessage, ToolCall, ToolSpec};

/// A JSON Schema to constrain the reply with `response_format: json_schema`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseSchema {
    /// Schema name (OpenAI requires `^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// The JSON Schema of the expected reply object. Sent with `strict: true`.
    pub schema: Value,
}

/// One chat-completion request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRequest {
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Tools offered on this turn (none → no `tools` field is sent).
    pub tools: Vec<ToolSpec>,
    /// `max_tokens`: cap on generated tokens for this reply.
    pub max_tokens: Option<u32>,
    /// Sampling temperature; `None` leaves the server default.
    pub temperature: Option<f32>,
    /// Reply schema, sent as `response_format` only when `tools` is empty, the
    /// endpoint has structured outputs enabled and has not rejected them before.
    pub response_schema: Option<ResponseSchema>,
}

/// Why the model stopped generating (`choices[0].finish_reason`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FinishReason {
    /// Natural end of the answer.
    Stop,
    /// The token limit cut the answer off: it is truncated and must not be treated
    /// as complete.
    Length,
    /// The model asked for tool calls.
    ToolCalls,
    /// The provider's content filter cut the answer.
    ContentFilter,
    /// Anything else the server sent, verbatim (`missing` when it sent none).
    Other(String),
}

impl FinishReason {
    /// Maps a wire value; `None` (absent or null) becomes `Other("missing")`.
    pub fn from_wire(value: Option<&str>) -> Self {
        match value {
            Some("stop") => FinishReason::Stop,
            Some("length") => FinishReason::Length,
            Some("tool_calls") => FinishReason::ToolCalls,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_owned()),
            None => FinishReason::Other("missing".to_owned()),
        }
    }
}

/// Token usage and request count, summed over the calls of one stage or agent run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens as reported by the server (0 when it reports none).
    pub prompt_tokens: u64,
    /// Generated tokens as reported by the server (0 when it reports none).
    pub completion_tokens: u64,
    /// Of the prompt tokens, those the server served from its prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`; 0 when it reports none).
    pub cached_prompt_tokens: u64,
    /// HTTP requests sent, counting retries and structured-output fallbacks.
    pub requests: u32,
    /// Replies that stated no token counts (no `usage`, or neither `prompt_tokens` nor
    /// `completion_tokens` in it); their tokens are in [`Usage::estimated_tokens`].
    pub unreported_replies: u32,
    /// vouch's estimate of the prompt and completion tokens of the replies that stated
    /// none (three bytes per token of the request body and of the reply's text), so a
    /// token budget still holds against an endpoint that does not count.
    pub estimated_tokens: u64,
}

impl Usage {
    /// Prompt plus completion tokens, as the endpoint reported them.
    pub fn total_tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// What a token budget counts: the reported tokens plus vouch's estimate for the
    /// replies that reported none.
    pub fn counted_tokens(&self) -> u64 {
        self.total_tokens() + self.estimated_tokens
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
        self.requests += other.requests;
        self.unreported_replies += other.unreported_replies;
        self.estimated_tokens += other.estimated_tokens;
    }
}

/// What the model answered to one [`ChatRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct ChatReply {
    /// Text of the assistant message (`None` when the server sent `null`/nothing).
    pub content: Option<String>,
    /// Tool calls, in the server's order.
    pub tool_calls: Vec<ToolCall>,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// Tokens of this reply and the HTTP requests it took.
    pub usage: Usage,
    /// Whether this reply was generated under `response_format: json_schema`.
    pub structured: bool,
    /// The model the endpoint says answered (its `model` field; often a versioned name
    /// of the model asked for), when it says.
    pub model: Option<String>,
}

impl ChatReply {
    /// Rule (a budget holds without the endpoint's counts): a reply that stated no token
    /// counts is counted by [`vouch_core::estimate_tokens`] (the request bound's ratio,
    /// which errs large) of the request body sent (`request_bytes`) and of its own text
    /// and tool calls.
    pub(crate) fn estimate_unreported(&mut self, request_bytes: usize) {
        if self.usage.unreported_replies == 0 {
            return;
        }
        let reply_bytes = self.content.as_deref().map_or(0, str::len)
            + self
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum::<usize>();
        self.usage.estimated_tokens = vouch_core::estimate_tokens(request_bytes + reply_bytes);
    }

    /// The reply as an assistant message for the transcript.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::Assistant {
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}

/// The JSON body of a chat-completion request for `model`, borrowed from the request:
/// what is sent ([`request_body`]) and what is counted ([`crate::size`]) are one
/// serialization. Keys in this order; `response_format` only when `send_schema` is true
/// and the request has a schema.
#[derive(Serialize)]
pub(crate) struct RequestBody<'a> {
    model: &'a str,
    pub(crate) messages: &'a [ChatMessage],
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    /// As a JSON value holds an `f32`: widened to `f64`.
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "<[ToolSpec]>::is_empty")]
    tools: &'a [ToolSpec],
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
}

#[derive(Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: JsonSchemaFormat<'a>,
}

#[derive(Serialize)]
struct JsonSchemaFormat<'a> {
    name: &'a str,
    strict: bool,
    schema: &'a Value,
}

impl<'a> RequestBody<'a> {
    pub(crate) fn of(model: &'a str, request: &'a ChatRequest, send_schema: bool) -> Self {
        RequestBody {
            model,
            messages: &request.messages,
            stream: false,
            max_tokens: request.max_tokens,
            temperature: request.temperature.map(f64::from),
            tools: &request.tools,
            response_format: request
                .response_schema
                .as_ref()
                .filter(|_| send_schema)
                .map(|schema| ResponseFormat {
                    kind: "json_schema",
                    json_schema: JsonSchemaFormat {
                        name: &schema.name,
                        strict: true,
                        schema: &schema.schema,
                    },
                }),
        }
    }
}

/// The JSON body of a chat-completion request for `model` ([`RequestBody`]).
pub(crate) fn request_body(model: &str, request: &ChatRequest, send_schema: bool) -> Value {
    serde_json::to_value(RequestBody::of(model, request, send_schema))
        .expect("a request body is plain JSON")
}

/// Reads a chat-completion reply leniently: extra fields are ignored; `content` may be
/// a string, null, absent or an array of text parts; a tool call's `arguments` may be
/// a string or (as some servers send) a JSON value, which is re-serialized; missing
/// call ids are synthesized from `ids`; a reply without token counts is marked
/// [`Usage::unreported_replies`] (the client estimates its tokens).
///
/// Errors (as text for [`crate::LlmError::Decode`]): the body carries an `error`
/// object, has no `choices[0].message`.
pub(crate) fn parse_reply(body: &Value, ids: &AtomicU64) -> Result<ChatReply, String> {
    let Some(choice) = body.get("choices").and_then(|c| c.get(0)) else {
        if let Some(error) = body.get("error") {
            return Err(format!(
                "the reply carries an error instead of choices: {error}"
            ));
        }
        return Err("the reply has no choices".to_owned());
    };
    let message = choice.get("message").ok_or("choices[0] has no message")?;
    let content = match message.get("content") {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    };
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|call| parse_tool_call(call, ids))
                .collect()
        })
        .unwrap_or_default();
    let usage = body.get("usage");
    let stated = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
    let tokens = |field: &str| stated(field).unwrap_or(0);
    let unreported = stated("prompt_tokens").is_none() && stated("completion_tokens").is_none();
    Ok(ChatReply {
        content,
        tool_calls,
        finish_reason: FinishReason::from_wire(choice.get("finish_reason").and_then(Value::as_str)),
        usage: Usage {
            prompt_tokens: tokens("prompt_tokens"),
            completion_tokens: tokens("completion_tokens"),
            cached_prompt_tokens: usage
                .and_then(|u| u.pointer("/prompt_tokens_details/cached_tokens"))
                .and_then(Value::as_u64)
                .unwrap_or(0),
            requests: 0,
            unreported_replies: u32::from(unreported),
            estimated_tokens: 0,
        },
        structured: false,
        model: body
            .get("model")
            .and_then(Value::as_str)
            .and_then(model_name),
    })
}

/// Longest model name kept from a reply, in characters.
pub const MAX_MODEL_NAME_CHARS: usize = 128;

/// Rule (a reply's `model` is the endpoint's word, not trusted text): kept when it has
/// a printable character; control characters become spaces, and a name past
/// [`MAX_MODEL_NAME_CHARS`] is cut there and ends in `…`.
fn model_name(raw: &str) -> Option<String> {
    let clean: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.trim();
    if clean.is_empty() {
        return None;
    }
    if clean.chars().count() <= MAX_MODEL_NAME_CHARS {
        return Some(clean.to_owned());
    }
    let cut: String = clean.chars().take(MAX_MODEL_NAME_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

fn parse_tool_call(call: &Value, ids: &AtomicU64) -> ToolCall {
    let function = call.get("function");
    let name = function
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let arguments = match function.and_then(|f| f.get("arguments")) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("vouch_call_{}", ids.fetch_add(1, Ordering::Relaxed)),
    };
    ToolCall {
        id,
        name,
        arguments,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_replys_model_name_is_kept_printable_and_bounded() {
        let long = "m".repeat(MAX_MODEL_NAME_CHARS + 50);
        for (raw, kept) in [
            ("gpt-4o-2024-08-06", Some("gpt-4o-2024-08-06".to_string())),
            ("", None),
            ("  \t\n ", None),
            ("bad\u{0}name\x1b[31m", Some("bad name [31m".to_string())),
            (
                long.as_str(),
                Some(format!("{}…", "m".repeat(MAX_MODEL_NAME_CHARS - 1))),
            ),
        ] {
            assert_eq!(model_name(raw), kept, "{raw:?}");
        }
    }

    proptest::proptest! {
        /// Whatever an endpoint names, what is kept is bounded, printable and non-empty.
        #[test]
        fn any_model_name_is_kept_bounded_and_printable(raw in proptest::prelude::any::<String>()) {
            if let Some(kept) = model_name(&raw) {
                proptest::prop_assert!(kept.chars().count() <= MAX_MODEL_NAME_CHARS);
                proptest::prop_assert!(!kept.chars().any(char::is_control));
                proptest::prop_assert!(!kept.trim().is_empty());
            }
        }
    }
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<ChatReply, String> {
        parse_reply(&body, &AtomicU64::new(0))
    }

    #[test]
    fn finish_reasons() {
        for (wire, expected) in [
            (Some("stop"), FinishReason::Stop),
            (Some("length"), FinishReason::Length),
            (Some("tool_calls"), FinishReason::ToolCalls),
            (Some("content_filter"), FinishReason::ContentFilter),
            (Some("eos"), FinishReason::Other("eos".into())),
            (None, FinishReason::Other("missing".into())),
        ] {
            assert_eq!(FinishReason::from_wire(wire), expected);
        }
    }

    #[test]
    fn llama_cpp_style_reply_with_extra_and_missing_fields() {
        let reply = parse(json!({
            "choices": [{
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "reasoning_content": "thinking",
                    "tool_calls": [
                        {"function": {"name": "read_file", "arguments": {"path": "a"}}},
                        {"id": "", "type": "function", "function": {"name": "grep"}},
                    ]
                }
            }],
            "timings": {"predicted_ms": 12.0},
        }))
        .unwrap();
        assert_eq!(reply.content, None);
        assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
        assert_eq!(reply.tool_calls[0].id, "vouch_call_0");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(reply.tool_calls[1].id, "vouch_call_1");
        assert_eq!(reply.tool_calls[1].arguments, "");
        assert_eq!(
            reply.usage,
            Usage {
                unreported_replies: 1,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn a_reply_is_unreported_only_when_it_states_no_token_count() {
        for (usage, unreported) in [
            (None, 1),
            (Some(json!(null)), 1),
            (Some(json!({})), 1),
            (Some(json!({"total_tokens": 9})), 1),
            (Some(json!({"prompt_tokens": "3"})), 1),
            (Some(json!({"prompt_tokens": 3})), 0),
            (Some(json!({"completion_tokens": 0})), 0),
        ] {
            let mut body = json!({"choices": [{"message": {"content": "x"}}]});
            if let Some(usage) = &usage {
                body["usage"] = usage.clone();
            }
            let mut reply = parse(body).unwrap();
            assert_eq!(reply.usage.unreported_replies, unreported, "{usage:?}");
            reply.estimate_unreported(299);
            let expected = if unreported == 1 { 100 } else { 0 };
            assert_eq!(reply.usage.estimated_tokens, expected, "{usage:?}");
            assert_eq!(
                reply.usage.counted_tokens(),
                reply.usage.total_tokens() + expected
            );
        }
    }

    #[test]
    fn content_parts_and_usage() {
        let reply = parse(json!({
            "choices": [{"finish_reason": "stop", "message": {"content": [
                {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4},
        }))
        .unwrap();
        assert_eq!(reply.content.as_deref(), Some("ab"));
        assert_eq!(reply.usage.total_tokens(), 7);
    }

    #[test]
    fn unusable_replies() {
        assert!(parse(json!({"choices": []})).is_err());
        assert!(parse(json!({"choices": [{"finish_reason": "stop"}]})).is_err());
        let err = parse(json!({"error": {"message": "overloaded"}})).unwrap_err();
        assert!(err.contains("overloaded"), "{err}");
    }

    #[test]
    fn request_body_sends_schema_only_when_asked() {
        let request = ChatRequest {
            messages: vec![ChatMessage::user("hi")],
            max_tokens: Some(64),
            response_schema: Some(ResponseSchema {
                name: "receipt".into(),
                schema: json!({"type": "object"}),
            }),
            ..ChatRequest::default()
        };
        let with = request_body("m", &request, true);
        assert_eq!(
            with["response_format"],
            json!({"type": "json_schema", "json_schema":
                {"name": "receipt", "strict": true, "schema": {"type": "object"}}})
        );
        assert_eq!(with["max_tokens"], 64);
        assert_eq!(with["stream"], false);
        assert!(with.get("tools").is_none());
        assert!(
            request_body("m", &request, false)
                .get("response_format")
                .is_none()
        );
    }

    /// The body as sent (a JSON value, serialized) and the body as counted (serialized
    /// straight from the request) are the same bytes, keys in the same order.
    #[test]
    fn the_counted_body_is_the_sent_body() {
        let request = ChatRequest {
            messages: vec![ChatMessage::system("s\n\"q\""), ChatMessage::user("hi")],
            tools: vec![ToolSpec {
                name: "grep".into(),
                description: "search".into(),
                parameters: json!({"type": "object", "properties": {"b": {}, "a": {}}}),
            }],
            max_tokens: Some(64),
            temperature: Some(0.2),
            response_schema: Some(ResponseSchema {
                name: "receipt".into(),
                schema: json!({"type": "object", "required": ["z", "a"]}),
            }),
        };
        for send_schema in [true, false] {
            let sent = serde_json::to_string(&request_body("m", &request, send_schema)).unwrap();
            let counted =
                serde_json::to_string(&RequestBody::of("m", &request, send_schema)).unwrap();
            assert_eq!(sent, counted);
            assert!(
                sent.starts_with(r#"{"model":"m","messages":[{"role":"system""#),
                "{sent}"
            );
            // An f32 temperature goes out widened, as a JSON value of it always has.
            assert!(
                sent.contains(
                    r#""stream":false,"max_tokens":64,"temperature":0.20000000298023224,"tools""#
                ),
                "{sent}"
            );
        }
    }
}
