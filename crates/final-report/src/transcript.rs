//! The session transcript: JSON lines in order, one action per line.
//!
//! Format (documented in docs/final-report.md):
//! `{"seq":N,"kind":"command","command":"...","cwd":"..."}`,
//! `{"seq":N,"kind":"tool","name":"...","arguments":{...}}`,
//! `{"seq":N,"kind":"event","name":"mcp-failure"|"mcp-restart"|"external-mutation",...}`,
//! `{"seq":N,"kind":"result","for":M,"result":{...}}`.
//! `command` and `tool` lines may carry their own `result` (what came back: an exit code
//! and output for commands, the response or its metadata for tools); a `result` line
//! records it separately for the call at seq `for`.
//! Entries are ordered by `seq` (strictly increasing). Blank lines are ignored. Unknown
//! `kind`s are kept as [`TranscriptEntry::Other`] so the format can grow.

use serde_json::{Map, Value};

/// One transcript line.
#[derive(Debug, Clone, PartialEq)]
pub enum TranscriptEntry {
    /// A shell command the session ran.
    Command {
        /// Order key.
        seq: u64,
        /// The command line.
        command: String,
        /// Working directory, when recorded.
        cwd: Option<String>,
        /// What came back (`{"exitCode": N, "output": "..."}`), when recorded.
        result: Option<Value>,
    },
    /// An MCP (or agent) tool call.
    Tool {
        /// Order key.
        seq: u64,
        /// Tool name, e.g. `merge_pull_request` or `mcp__gitea__create_review`.
        name: String,
        /// Tool arguments (`null` when absent).
        arguments: Value,
        /// The tool's response or its metadata, when recorded.
        result: Option<Value>,
    },
    /// The result of an earlier command or tool call, recorded on its own line.
    Result {
        /// Order key.
        seq: u64,
        /// The `seq` of the call this is the result of.
        of: u64,
        /// What came back.
        result: Value,
    },
    /// A session event.
    Event {
        /// Order key.
        seq: u64,
        /// Event name.
        name: EventName,
        /// The other fields of the line (e.g. `actor`, `scope`, `detail`).
        details: Map<String, Value>,
    },
    /// A line of another kind, kept for ordering only.
    Other {
        /// Order key.
        seq: u64,
        /// The `kind` value.
        kind: String,
    },
}

impl TranscriptEntry {
    /// The entry's `seq`.
    pub fn seq(&self) -> u64 {
        match self {
            Self::Command { seq, .. }
            | Self::Tool { seq, .. }
            | Self::Event { seq, .. }
            | Self::Result { seq, .. }
            | Self::Other { seq, .. } => *seq,
        }
    }
}

/// Event names the validator understands; others are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventName {
    /// `mcp-failure`: an MCP call or connection failed.
    McpFailure,
    /// `mcp-restart`: the MCP server or session restarted.
    McpRestart,
    /// `external-mutation`: someone else changed the queue (approve, merge, push).
    ExternalMutation,
    /// Any other event name.
    Other(String),
}

impl EventName {
    fn parse(name: &str) -> Self {
        match name {
            "mcp-failure" => Self::McpFailure,
            "mcp-restart" => Self::McpRestart,
            "external-mutation" => Self::ExternalMutation,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// A transcript line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transcript line {line}: {message}")]
pub struct TranscriptError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parse a JSON-lines transcript.
///
/// Errors: a line that is not a JSON object, lacks a non-negative integer `seq` or a
/// string `kind`, lacks the fields of its kind, or whose `seq` is not greater than the
/// previous line's.
pub fn parse_transcript(text: &str) -> Result<Vec<TranscriptEntry>, TranscriptError> {
    let mut entries = Vec::new();
    let mut last_seq: Option<u64> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let err = |message: String| TranscriptError { line, message };
        let value: Value = serde_json::from_str(raw).map_err(|e| err(format!("not JSON: {e}")))?;
        crate::strict_json::check_unique_keys(raw)
            .map_err(|e| err(format!("repeats a key: {e}")))?;
        let entry = entry_from_value(value).map_err(err)?;
        if let Some(prev) = last_seq
            && entry.seq() <= prev
        {
            return Err(err(format!(
                "seq {} is not greater than the previous seq {prev}",
                entry.seq()
            )));
        }
        last_seq = Some(entry.seq());
        entries.push(entry);
    }
    Ok(entries)
}

/// Read one transcript entry from a JSON value (the MCP tool accepts arrays of these).
pub fn entry_from_value(value: Value) -> Result<TranscriptEntry, String> {
    let Value::Object(mut map) = value else {
        return Err("not a JSON object".to_owned());
    };
    let seq = map
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or("missing non-negative integer `seq`")?;
    let kind = match map.remove("kind") {
        Some(Value::String(kind)) => kind,
        _ => return Err("missing string `kind`".to_owned()),
    };
    let take_string = |map: &mut Map<String, Value>, key: &str| match map.remove(key) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(format!("`{kind}` entry lacks string `{key}`")),
    };
    Ok(match kind.as_str() {
        "command" => TranscriptEntry::Command {
            seq,
            command: take_string(&mut map, "command")?,
            cwd: map.get("cwd").and_then(Value::as_str).map(str::to_owned),
            result: map.remove("result"),
        },
        "tool" => TranscriptEntry::Tool {
            seq,
            name: take_string(&mut map, "name")?,
            arguments: map.remove("arguments").unwrap_or(Value::Null),
            result: map.remove("result"),
        },
        "result" => TranscriptEntry::Result {
            seq,
            of: map.get("for").and_then(Value::as_u64).ok_or(
                "`result` entry lacks the non-negative integer `for` (the seq of its call)",
            )?,
            result: map
                .remove("result")
                .ok_or("`result` entry lacks `result`")?,
        },
        "event" => {
            let name = EventName::parse(&take_string(&mut map, "name")?);
            map.remove("seq");
            TranscriptEntry::Event {
                seq,
                name,
                details: map,
            }
        }
        _ => TranscriptEntry::Other { seq, kind },
    })
}

/// Read a transcript given as an array of entry objects (the MCP tool's JSON form).
pub fn transcript_from_values(values: Vec<Value>) -> Result<Vec<TranscriptEntry>, TranscriptError> {
    let lines: Vec<String> = values.iter().map(Value::to_string).collect();
    parse_transcript(&lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind_in_order() {
        let text = r#"{"seq":1,"kind":"command","command":"git status","cwd":"/w"}

{"seq":2,"kind":"tool","name":"get_pull_request","arguments":{"number":7}}
{"seq":5,"kind":"event","name":"mcp-restart","detail":"server restarted"}
{"seq":6,"kind":"message","text":"hi"}"#;
        let entries = parse_transcript(text).unwrap();
        assert_eq!(entries.len(), 4);
        assert!(
            matches!(&entries[0], TranscriptEntry::Command { command, cwd: Some(c), .. } if command == "git status" && c == "/w")
        );
        assert!(
            matches!(&entries[1], TranscriptEntry::Tool { name, .. } if name == "get_pull_request")
        );
        match &entries[2] {
            TranscriptEntry::Event { name, details, .. } => {
                assert_eq!(*name, EventName::McpRestart);
                assert_eq!(details["detail"], "server restarted");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(entries[3].seq(), 6);
    }

    #[test]
    fn rejects_bad_lines_with_their_line_number() {
        let cases = [
            ("not json", 1, "not JSON"),
            (r#"{"kind":"command","command":"x"}"#, 1, "seq"),
            (r#"{"seq":1,"command":"x"}"#, 1, "kind"),
            (r#"{"seq":1,"kind":"command"}"#, 1, "command"),
            (
                "{\"seq\":2,\"kind\":\"event\",\"name\":\"x\"}\n{\"seq\":2,\"kind\":\"event\",\"name\":\"y\"}",
                2,
                "not greater",
            ),
            (
                r#"{"seq":1,"kind":"command","command":"x","result":{"exitCode":1,"exitCode":0}}"#,
                1,
                "`exitCode` appears twice",
            ),
        ];
        for (text, line, needle) in cases {
            let err = parse_transcript(text).unwrap_err();
            assert_eq!(err.line, line, "{text}");
            assert!(err.message.contains(needle), "{text}: {}", err.message);
        }
    }
}
