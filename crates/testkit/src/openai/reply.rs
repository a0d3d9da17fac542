//! Scripted replies and their OpenAI-shaped JSON bodies.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The model name the server reports when a request names none (also the only
/// entry of `GET /v1/models`).
pub const SCRIPTED_MODEL: &str = "scripted-model";

/// `(prompt_tokens, completion_tokens)` reported when a completion reply sets no
/// usage with [`Reply::with_usage`] (and was not built with [`Reply::without_usage`]).
pub const DEFAULT_USAGE: (u64, u64) = (10, 5);

/// One scripted HTTP reply.
///
/// Completion replies ([`Reply::content`], [`Reply::tool_call`], ...) are rendered as
/// an OpenAI chat-completion object: `id`, `object: "chat.completion"`, `created`,
/// `model` (echoing the request), `choices[0]{index, message{role, content,
/// tool_calls[{id, type: "function", function{name, arguments}}]}, finish_reason}`
/// and `usage{prompt_tokens, completion_tokens, total_tokens}`. The finish reason
/// defaults to `tool_calls` when the reply has tool calls, else `stop`.
#[derive(Clone, Debug)]
pub struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: ReplyBody,
    pub(crate) delay: Option<Duration>,
    pub(crate) hold_until_in_flight: Option<usize>,
}

/// Longest a [`Reply::hold_until_in_flight`] reply waits for the other requests before
/// it answers anyway (so a host that never sends them fails its test instead of hanging).
pub const HOLD_LIMIT: Duration = Duration::from_secs(30);

#[derive(Clone, Debug)]
pub(crate) enum ReplyBody {
    Completion {
        content: Option<String>,
        tool_calls: Vec<(String, String)>,
        finish_reason: Option<String>,
        usage: Option<(u64, u64)>,
        /// `usage.prompt_tokens_details.cached_tokens`, when set.
        cached_tokens: Option<u64>,
        /// The `model` it names, when not the request's.
        model: Option<String>,
    },
    Raw(String),
    /// The request's headers and body echoed back as JSON.
    EchoRequest,
    /// A reply computed from the request body when it is served.
    Computed(Responder),
}

/// A caller-supplied function from a request body to the reply it gets.
#[derive(Clone)]
pub(crate) struct Responder(Arc<dyn Fn(&Value) -> Reply + Send + Sync>);

impl fmt::Debug for Responder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "responder")
    }
}

impl Reply {
    fn completion(content: Option<String>, tool_calls: Vec<(String, String)>) -> Self {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: ReplyBody::Completion {
                content,
                tool_calls,
                finish_reason: None,
                usage: Some(DEFAULT_USAGE),
                cached_tokens: None,
                model: None,
            },
            delay: None,
            hold_until_in_flight: None,
        }
    }

    /// A 200 completion whose content `content` computes from the request body: a model
    /// that answers what it is asked (e.g. a receipt of exactly the request's expected
    /// list). Usage is [`DEFAULT_USAGE`]
    /// (the content-only case of [`Reply::computed`]).
    pub fn content_from(content: impl Fn(&Value) -> String + Send + Sync + 'static) -> Self {
        Self::computed(move |request| Reply::content(content(request)))
    }

    /// A 200 completion whose assistant message has `text` as content.
    pub fn content(text: impl Into<String>) -> Self {
        Self::completion(Some(text.into()), Vec::new())
    }

    /// A 200 completion with `text` as content and the given `finish_reason`
    /// (e.g. `"length"` for a truncated answer).
    pub fn content_with_finish(text: impl Into<String>, finish_reason: &str) -> Self {
        Self::content(text).finish_reason(finish_reason)
    }

    /// A 200 completion with one tool call (`content: null`). `arguments` is sent
    /// verbatim as the `function.arguments` string, so it may be invalid JSON.
    pub fn tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::completion(None, vec![(name.into(), arguments.into())])
    }

    /// A 200 completion with several tool calls, in order (`content: null`).
    pub fn tool_calls<N, A>(calls: impl IntoIterator<Item = (N, A)>) -> Self
    where
        N: Into<String>,
        A: Into<String>,
    {
        let calls = calls
            .into_iter()
            .map(|(name, args)| (name.into(), args.into()))
            .collect();
        Self::completion(None, calls)
    }

    /// An error reply with `status` and an OpenAI-shaped error body
    /// (`{"error": {"message": "scripted status N", "type": "scripted", ...}}`).
    pub fn status(status: u16) -> Self {
        let body = json!({
            "error": {
                "message": format!("scripted status {status}"),
                "type": "scripted",
                "param": null,
                "code": null,
            }
        });
        Self::raw(status, body.to_string())
    }

    /// A reply with `status` and `body` sent verbatim (`content-type: application/json`
    /// unless overridden with [`Reply::header`]).
    pub fn raw(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: ReplyBody::Raw(body.into()),
            delay: None,
            hold_until_in_flight: None,
        }
    }

    /// A reply with `status` whose JSON body echoes the request:
    /// `{"error": {"message": "echo"}, "headers": {name: value}, "body": <request>}`.
    /// Useful to prove that secrets sent in headers never reach an error message.
    pub fn echo_request(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: ReplyBody::EchoRequest,
            delay: None,
            hold_until_in_flight: None,
        }
    }

    /// A reply computed from the request body when a request is served: `respond` is
    /// called with the parsed body and its reply is sent (a model that answers what it
    /// is asked, e.g. a receipt listing exactly the request's expected files). A delay
    /// set on this reply applies when the computed reply sets none.
    pub fn computed(respond: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: ReplyBody::Computed(Responder(Arc::new(respond))),
            delay: None,
            hold_until_in_flight: None,
        }
    }

    /// The reply actually sent for `request`: a computed reply's result, else itself.
    pub(crate) fn resolve(self, request: &Value) -> Reply {
        match &self.body {
            ReplyBody::Computed(Responder(respond)) => {
                let mut reply = respond(request);
                reply.delay = reply.delay.or(self.delay);
                reply.hold_until_in_flight =
                    reply.hold_until_in_flight.or(self.hold_until_in_flight);
                reply
            }
            _ => self,
        }
    }

    /// Adds (or appends) a tool call to a completion reply.
    pub fn and_tool_call(mut self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        if let ReplyBody::Completion { tool_calls, .. } = &mut self.body {
            tool_calls.push((name.into(), arguments.into()));
        }
        self
    }

    /// Sets the `content` of a completion reply (also for tool-call replies).
    pub fn with_content(mut self, text: impl Into<String>) -> Self {
        if let ReplyBody::Completion { content, .. } = &mut self.body {
            *content = Some(text.into());
        }
        self
    }

    /// Sets the completion's `finish_reason` (`stop`, `length`, `tool_calls`,
    /// `content_filter`, or anything else).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        if let ReplyBody::Completion { finish_reason, .. } = &mut self.body {
            *finish_reason = Some(reason.to_owned());
        }
        self
    }

    /// Sets the completion's `usage` (token counts; `total_tokens` is their sum).
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        if let ReplyBody::Completion { usage, .. } = &mut self.body {
            *usage = Some((prompt_tokens, completion_tokens));
        }
        self
    }

    /// States that `cached` of the prompt tokens came from the server's prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`, as OpenAI, vLLM and OpenRouter
    /// send it); ignored when the reply has no `usage`.
    pub fn with_cached_tokens(mut self, cached: u64) -> Self {
        if let ReplyBody::Completion { cached_tokens, .. } = &mut self.body {
            *cached_tokens = Some(cached);
        }
        self
    }

    /// Names `model` as the model that answered, instead of echoing the request's (as
    /// endpoints do that answer with a versioned name, or route to another model).
    pub fn answered_by(mut self, name: impl Into<String>) -> Self {
        if let ReplyBody::Completion { model, .. } = &mut self.body {
            *model = Some(name.into());
        }
        self
    }

    /// Omits `usage` from the completion (some compatible servers do).
    pub fn without_usage(mut self) -> Self {
        if let ReplyBody::Completion { usage, .. } = &mut self.body {
            *usage = None;
        }
        self
    }

    /// Adds a response header (e.g. `Retry-After: 1`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits `delay` after the request arrived before answering (slow servers,
    /// timeouts, cancellation).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Holds the answer until at least `requests` chat requests (this one included) are
    /// being answered at once, or [`HOLD_LIMIT`] passed: how a test makes concurrent
    /// stages meet, so each request's [`in_flight_at_arrival`] shows who ran alongside
    /// it (a host that sends them one after another leaves it empty).
    ///
    /// [`in_flight_at_arrival`]: super::RecordedRequest::in_flight_at_arrival
    pub fn hold_until_in_flight(mut self, requests: usize) -> Self {
        self.hold_until_in_flight = Some(requests);
        self
    }

    /// The HTTP status this reply is sent with.
    pub fn status_code(&self) -> u16 {
        self.status
    }

    /// Renders the body for the request with sequence number `seq` (0-based, in
    /// arrival order), request body `request` and request headers `headers`.
    pub(crate) fn render_body(
        &self,
        seq: usize,
        request: &Value,
        headers: &[(String, String)],
    ) -> String {
        match &self.body {
            ReplyBody::Raw(body) => body.clone(),
            ReplyBody::EchoRequest => {
                let headers: serde_json::Map<String, Value> = headers
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                json!({"error": {"message": "echo"}, "headers": headers, "body": request})
                    .to_string()
            }
            ReplyBody::Completion {
                content,
                tool_calls,
                finish_reason,
                usage,
                cached_tokens,
                model,
            } => {
                let mut body =
                    completion_json(seq, request, content, tool_calls, finish_reason, usage);
                if let (Some(cached), Some(usage)) = (cached_tokens, body.get_mut("usage")) {
                    usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
                }
                if let Some(model) = model {
                    body["model"] = Value::String(model.clone());
                }
                body.to_string()
            }
            ReplyBody::Computed(Responder(respond)) => {
                respond(request).render_body(seq, request, headers)
            }
        }
    }
}

fn completion_json(
    seq: usize,
    request: &Value,
    content: &Option<String>,
    tool_calls: &[(String, String)],
    finish_reason: &Option<String>,
    usage: &Option<(u64, u64)>,
) -> Value {
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(SCRIPTED_MODEL);
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        let calls: Vec<Value> = tool_calls
            .iter()
            .enumerate()
            .map(|(i, (name, arguments))| {
                json!({
                    "id": format!("call_{seq}_{i}"),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    let finish_reason = finish_reason.clone().unwrap_or_else(|| {
        if tool_calls.is_empty() {
            "stop".to_owned()
        } else {
            "tool_calls".to_owned()
        }
    });
    let mut body = json!({
        "id": format!("chatcmpl-scripted-{seq}"),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
    });
    if let Some((prompt, completion)) = usage {
        body["usage"] = json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        });
    }
    body
}
