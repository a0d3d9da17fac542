//! Chat messages, tool calls and tool specifications in OpenAI's chat-completions
//! wire shape (<https://platform.openai.com/docs/api-reference/chat/create>).

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

/// One message of a conversation. Serializes to OpenAI's wire shape
/// (`{"role": "system"|"user"|"assistant"|"tool", ...}`), which is also the shape of an
/// agent transcript.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    /// Instructions for the model.
    System {
        /// Message text.
        content: String,
    },
    /// The task (or a host-rendered follow-up such as forced synthesis).
    User {
        /// Message text.
        content: String,
    },
    /// A model reply: text, tool calls, or both.
    Assistant {
        /// Text; `null` on the wire when the reply only calls tools.
        content: Option<String>,
        /// Requested tool calls (omitted on the wire when empty).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result (or error) of one tool call, answering the call with `tool_call_id`.
    Tool {
        /// Id of the assistant's tool call this answers.
        tool_call_id: String,
        /// Tool output or an error text the model can read.
        content: String,
    },
}

impl ChatMessage {
    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage::System {
            content: content.into(),
        }
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage::User {
            content: content.into(),
        }
    }

    /// A `tool` message answering `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }
}

/// One tool call requested by the model.
///
/// Serializes to the wire shape `{"id", "type": "function", "function": {"name",
/// "arguments"}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// Call id from the server (synthesized as `vouch_call_N` when the server sent none).
    pub id: String,
    /// Requested tool name (may name a tool that does not exist).
    pub name: String,
    /// The raw `function.arguments` text; expected to be a JSON object but may be
    /// truncated or otherwise invalid.
    pub arguments: String,
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &json!({"name": self.name, "arguments": self.arguments}),
        )?;
        map.end()
    }
}

/// A tool offered to the model: name, description and a JSON Schema of its
/// arguments object. Serializes to `{"type": "function", "function": {"name",
/// "description", "parameters"}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// Tool name, e.g. `read_file`.
    pub name: String,
    /// What the tool does and its bounds, as the model should read it.
    pub description: String,
    /// JSON Schema (an `object` schema) of the arguments.
    pub parameters: Value,
}

/// `{"type": "function", "function": {"name", "description", "parameters"}}`, written
/// straight from the spec (a request serializes every tool's schema; no copy is made).
impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Function<'a>(&'a ToolSpec);
        impl Serialize for Function<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", &self.0.name)?;
                map.serialize_entry("description", &self.0.description)?;
                map.serialize_entry("parameters", &self.0.parameters)?;
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry("function", &Function(self))?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shapes() {
        let assistant = ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a"}"#.into(),
            }],
        };
        assert_eq!(
            serde_json::to_value(&assistant).unwrap(),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
            ]})
        );
        assert_eq!(
            serde_json::to_value(ChatMessage::tool("c1", "ok")).unwrap(),
            json!({"role": "tool", "tool_call_id": "c1", "content": "ok"})
        );
        assert_eq!(
            serde_json::to_value(ChatMessage::system("s")).unwrap(),
            json!({"role": "system", "content": "s"})
        );
        let text_only = ChatMessage::Assistant {
            content: Some("hi".into()),
            tool_calls: vec![],
        };
        assert_eq!(
            serde_json::to_value(&text_only).unwrap(),
            json!({"role": "assistant", "content": "hi"})
        );
        let spec = ToolSpec {
            name: "grep".into(),
            description: "search".into(),
            parameters: json!({"type": "object"}),
        };
        assert_eq!(
            serde_json::to_value(&spec).unwrap(),
            json!({"type": "function", "function":
                {"name": "grep", "description": "search", "parameters": {"type": "object"}}})
        );
        // Byte for byte, keys in this order: recorded exchanges match request bodies.
        assert_eq!(
            serde_json::to_string(&spec).unwrap(),
            r#"{"type":"function","function":{"name":"grep","description":"search","parameters":{"type":"object"}}}"#
        );
    }
}
