//! What the scripted server recorded about each request.

use std::time::Instant;

use serde_json::Value;

use super::matcher;

/// How the server answered a recorded request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServedBy {
    /// A rule of the script: its index (0-based, in the order added) and label.
    Rule {
        /// Position of the rule in the script.
        index: usize,
        /// The rule's label, if it was named.
        label: Option<String>,
    },
    /// `GET /v1/models`, answered with the server's model list.
    ModelList,
    /// llama.cpp's `GET /props` (the server's settings).
    Props,
    /// A chat request no rule could serve (answered HTTP 500
    /// `no scripted reply for request`).
    Unmatched,
    /// A chat request whose body was not JSON (answered HTTP 400).
    InvalidBody,
    /// A route the server does not serve (answered HTTP 404).
    UnknownRoute,
    /// An endpoint check's minimal request (`max_tokens: 1`) no rule served, answered
    /// with a one-word completion as a real server would.
    Probe,
    /// The imitated provider refused it (credentials, query, deployment or model),
    /// with that provider's status and error body.
    Refused,
}

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// Arrival order, 0-based, across all routes.
    pub seq: usize,
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The query string, if any (e.g. `api-version=2024-10-21`).
    pub query: Option<String>,
    /// Headers in arrival order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body (`Value::Null` for an empty or non-JSON body).
    pub body: Value,
    /// The raw body text (lossy UTF-8).
    pub raw_body: String,
    /// When the request arrived (before any scripted delay).
    pub arrived_at: Instant,
    /// Which rule (or built-in route) answered it.
    pub served_by: ServedBy,
    /// The HTTP status sent back.
    pub status: u16,
    /// The rule labels of the chat requests still being answered when this one arrived
    /// (`None` for unnamed rules): which stages ran alongside it.
    pub in_flight_at_arrival: Vec<Option<String>>,
}

impl RecordedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `messages` array of the body (empty when absent).
    pub fn messages(&self) -> &[Value] {
        matcher::messages(&self.body)
    }

    /// Content of the first `system` message, if any.
    pub fn system(&self) -> Option<String> {
        self.messages()
            .iter()
            .find(|m| matcher::role(m) == Some("system"))
            .map(matcher::content_text)
    }

    /// The last message, if any.
    pub fn last_message(&self) -> Option<&Value> {
        self.messages().last()
    }

    /// Contents of all messages with `role`, in order.
    pub fn contents_of(&self, role: &str) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| matcher::role(m) == Some(role))
            .map(matcher::content_text)
            .collect()
    }

    /// Whether the body carries a non-empty `tools` array.
    pub fn has_tools(&self) -> bool {
        matcher::has_tools(&self.body)
    }

    /// Names of the offered tools (`tools[].function.name`).
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    }

    /// The `response_format` object, if sent and not null.
    pub fn response_format(&self) -> Option<&Value> {
        self.body.get("response_format").filter(|f| !f.is_null())
    }

    /// Whether the request was a chat completion answered by a rule.
    pub fn is_matched(&self) -> bool {
        matches!(self.served_by, ServedBy::Rule { .. })
    }

    /// The label of the rule that served it, if any.
    pub fn rule_label(&self) -> Option<&str> {
        match &self.served_by {
            ServedBy::Rule { label, .. } => label.as_deref(),
            _ => None,
        }
    }
}
