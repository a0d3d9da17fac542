//! Request matchers for scripted rules.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// A predicate over a chat-completion request body (the parsed JSON the client sent).
///
/// Text matchers are case-sensitive substring checks on message `content`; content
/// given as an array of parts (`[{type: "text", text}]`) is joined before matching.
/// Build compound matchers with [`Match::and`], [`Match::or`], [`Match::all`],
/// [`Match::any_of`] and [`Match::not`].
#[derive(Clone)]
pub enum Match {
    /// Every request.
    Any,
    /// The first `system` message's content contains the text.
    SystemContains(String),
    /// Some `user` message's content contains the text.
    UserContains(String),
    /// Some message (any role) has content containing the text.
    AnyMessageContains(String),
    /// The last message's content contains the text.
    LastMessageContains(String),
    /// The last message has this role (`system`, `user`, `assistant`, `tool`).
    LastMessageRole(String),
    /// Some `tool` message's content contains the text.
    ToolResultContains(String),
    /// The request carries a non-empty `tools` array (`true`) or none (`false`).
    HasTools(bool),
    /// The request carries a `response_format` (`true`) or none (`false`).
    HasResponseFormat(bool),
    /// The request has exactly this many messages.
    MessageCount(usize),
    /// The request's `model` equals the text.
    Model(String),
    /// All inner matchers match.
    All(Vec<Match>),
    /// At least one inner matcher matches.
    AnyOf(Vec<Match>),
    /// The inner matcher does not match.
    Not(Box<Match>),
    /// A caller-supplied predicate over the whole body, with a name for diagnostics.
    Custom(String, Arc<dyn Fn(&Value) -> bool + Send + Sync>),
}

impl Match {
    /// Matches every request.
    pub fn any() -> Self {
        Match::Any
    }
    /// The first `system` message contains `text`.
    pub fn system_contains(text: impl Into<String>) -> Self {
        Match::SystemContains(text.into())
    }
    /// Some `user` message contains `text`.
    pub fn user_contains(text: impl Into<String>) -> Self {
        Match::UserContains(text.into())
    }
    /// Some message of any role contains `text`.
    pub fn any_message_contains(text: impl Into<String>) -> Self {
        Match::AnyMessageContains(text.into())
    }
    /// The last message contains `text`.
    pub fn last_message_contains(text: impl Into<String>) -> Self {
        Match::LastMessageContains(text.into())
    }
    /// The last message has `role`.
    pub fn last_message_role(role: impl Into<String>) -> Self {
        Match::LastMessageRole(role.into())
    }
    /// Some `tool` message contains `text`.
    pub fn tool_result_contains(text: impl Into<String>) -> Self {
        Match::ToolResultContains(text.into())
    }
    /// The request offers tools (`true`) or none (`false`).
    pub fn has_tools(yes: bool) -> Self {
        Match::HasTools(yes)
    }
    /// The request carries a `response_format` (`true`) or none (`false`).
    pub fn has_response_format(yes: bool) -> Self {
        Match::HasResponseFormat(yes)
    }
    /// The request has exactly `count` messages.
    pub fn message_count(count: usize) -> Self {
        Match::MessageCount(count)
    }
    /// The request's `model` field equals `model`.
    pub fn model(model: impl Into<String>) -> Self {
        Match::Model(model.into())
    }
    /// All of `matchers` match (an empty list matches everything).
    pub fn all(matchers: impl IntoIterator<Item = Match>) -> Self {
        Match::All(matchers.into_iter().collect())
    }
    /// At least one of `matchers` matches (an empty list matches nothing).
    pub fn any_of(matchers: impl IntoIterator<Item = Match>) -> Self {
        Match::AnyOf(matchers.into_iter().collect())
    }
    /// `inner` does not match.
    #[allow(clippy::should_implement_trait)]
    pub fn not(inner: Match) -> Self {
        Match::Not(Box::new(inner))
    }
    /// A named predicate over the whole request body.
    pub fn custom(
        name: impl Into<String>,
        predicate: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        Match::Custom(name.into(), Arc::new(predicate))
    }
    /// `self` and `other` both match.
    pub fn and(self, other: Match) -> Self {
        Match::All(vec![self, other])
    }
    /// `self` or `other` matches.
    pub fn or(self, other: Match) -> Self {
        Match::AnyOf(vec![self, other])
    }

    /// Whether this matcher accepts the request body `body`.
    pub fn matches(&self, body: &Value) -> bool {
        let messages = messages(body);
        match self {
            Match::Any => true,
            Match::SystemContains(text) => messages
                .iter()
                .find(|m| role(m) == Some("system"))
                .is_some_and(|m| content_text(m).contains(text.as_str())),
            Match::UserContains(text) => messages_with_role(messages, "user")
                .any(|m| content_text(m).contains(text.as_str())),
            Match::AnyMessageContains(text) => messages
                .iter()
                .any(|m| content_text(m).contains(text.as_str())),
            Match::LastMessageContains(text) => messages
                .last()
                .is_some_and(|m| content_text(m).contains(text.as_str())),
            Match::LastMessageRole(wanted) => {
                messages.last().and_then(role) == Some(wanted.as_str())
            }
            Match::ToolResultContains(text) => messages_with_role(messages, "tool")
                .any(|m| content_text(m).contains(text.as_str())),
            Match::HasTools(yes) => has_tools(body) == *yes,
            Match::HasResponseFormat(yes) => {
                body.get("response_format").is_some_and(|f| !f.is_null()) == *yes
            }
            Match::MessageCount(count) => messages.len() == *count,
            Match::Model(model) => body.get("model").and_then(Value::as_str) == Some(model),
            Match::All(inner) => inner.iter().all(|m| m.matches(body)),
            Match::AnyOf(inner) => inner.iter().any(|m| m.matches(body)),
            Match::Not(inner) => !inner.matches(body),
            Match::Custom(_, predicate) => predicate(body),
        }
    }
}

impl fmt::Debug for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Match::Any => write!(f, "any"),
            Match::SystemContains(t) => write!(f, "system_contains({t:?})"),
            Match::UserContains(t) => write!(f, "user_contains({t:?})"),
            Match::AnyMessageContains(t) => write!(f, "any_message_contains({t:?})"),
            Match::LastMessageContains(t) => write!(f, "last_message_contains({t:?})"),
            Match::LastMessageRole(r) => write!(f, "last_message_role({r:?})"),
            Match::ToolResultContains(t) => write!(f, "tool_result_contains({t:?})"),
            Match::HasTools(b) => write!(f, "has_tools({b})"),
            Match::HasResponseFormat(b) => write!(f, "has_response_format({b})"),
            Match::MessageCount(n) => write!(f, "message_count({n})"),
            Match::Model(m) => write!(f, "model({m:?})"),
            Match::All(inner) => f.debug_tuple("all").field(inner).finish(),
            Match::AnyOf(inner) => f.debug_tuple("any_of").field(inner).finish(),
            Match::Not(inner) => f.debug_tuple("not").field(inner).finish(),
            Match::Custom(name, _) => write!(f, "custom({name:?})"),
        }
    }
}

/// The `messages` array of a request body (empty when absent or not an array).
pub(crate) fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn messages_with_role<'a>(
    messages: &'a [Value],
    wanted: &'a str,
) -> impl Iterator<Item = &'a Value> + 'a {
    messages.iter().filter(move |m| role(m) == Some(wanted))
}

/// The `role` of one message.
pub(crate) fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// A message's content as text: a string as is, an array of parts joined by `\n`
/// (each part's `text`), anything else empty.
pub(crate) fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether the body carries a non-empty `tools` array.
pub(crate) fn has_tools(body: &Value) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty())
}
