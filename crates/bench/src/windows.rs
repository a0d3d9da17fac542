//! The `read_file` reader's plan: which windows of which files to read next, from the
//! tool calls and results already in the conversation (the model keeps no state).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

/// Lines the `read_file` reader asks for per call.
pub const WINDOW_LINES: u32 = 200;

/// The two sides a file is read at: head (its lines now) and base (the deleted lines).
const REVISIONS: [&str; 2] = ["head", "base"];

/// One `read_file` call of the conversation and what it returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call's arguments.
    pub args: Value,
    /// The tool message's text.
    pub text: String,
}

/// Every `read_file` call of `request`'s messages with its result, in order.
pub fn tool_results(request: &Value) -> Vec<ToolResult> {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut calls: BTreeMap<&str, Value> = BTreeMap::new();
    let mut results = Vec::new();
    for message in messages {
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let named_read = call.pointer("/function/name").and_then(Value::as_str);
            let args = call.pointer("/function/arguments").and_then(Value::as_str);
            if let (Some(id), Some("read_file"), Some(args)) =
                (call.get("id").and_then(Value::as_str), named_read, args)
            {
                calls.insert(id, serde_json::from_str(args).unwrap_or(Value::Null));
            }
        }
        let id = message.get("tool_call_id").and_then(Value::as_str);
        if let Some(args) = id.and_then(|id| calls.get(id)) {
            let text = message
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or_default();
            results.push(ToolResult {
                args: args.clone(),
                text: text.to_owned(),
            });
        }
    }
    results
}

/// Rule: each of `paths` is read at head and at base, each side in windows of
/// [`WINDOW_LINES`] lines from line 1 until the header's total is covered; a side whose
/// first read is not a numbered window (not found there, binary, empty) is done; a line
/// the tool cut is read in byte windows from byte 0, following each `continue with
/// start_line=L start_byte=B` note. Calls already made are never repeated.
pub fn next_reads(paths: &[String], done: &[ToolResult]) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    for path in paths {
        for revision in REVISIONS {
            let side: Vec<&ToolResult> = done
                .iter()
                .filter(|r| r.args["path"] == path.as_str() && revision_of(&r.args) == revision)
                .collect();
            calls.extend(next_for_side(&side).into_iter().map(|mut args| {
                args["path"] = json!(path);
                args["revision"] = json!(revision);
                ("read_file".to_owned(), args)
            }));
        }
    }
    calls
}

fn revision_of(args: &Value) -> &str {
    args.get("revision")
        .and_then(Value::as_str)
        .unwrap_or("head")
}

/// The next calls (arguments without path and revision) for one side of one file.
fn next_for_side(side: &[&ToolResult]) -> Vec<Value> {
    if side.is_empty() {
        return vec![json!({"start_line": 1, "end_line": WINDOW_LINES})];
    }
    let Some(total) = side.iter().find_map(|r| lines_header(&r.text).map(|h| h.2)) else {
        return vec![];
    };
    let requested: BTreeSet<(u64, Option<u64>)> = side
        .iter()
        .filter_map(|r| {
            let line = r.args.get("start_line").and_then(Value::as_u64)?;
            Some((line, r.args.get("start_byte").and_then(Value::as_u64)))
        })
        .collect();
    let mut wanted: Vec<(u64, Option<u64>)> = Vec::new();
    let covered_to = side
        .iter()
        .filter_map(|r| lines_header(&r.text).map(|h| h.1))
        .max()
        .unwrap_or(0);
    if covered_to < total {
        wanted.push((covered_to + 1, None));
    }
    for result in side {
        if let Some(line) = cut_line(&result.text) {
            wanted.push((line, Some(0)));
        }
        if let Some((line, byte)) = byte_continuation(&result.text) {
            wanted.push((line, Some(byte)));
        }
    }
    wanted
        .into_iter()
        .filter(|w| !requested.contains(w))
        .map(|(line, byte)| match byte {
            None => json!({"start_line": line, "end_line": line + u64::from(WINDOW_LINES) - 1}),
            Some(byte) => json!({"start_line": line, "start_byte": byte}),
        })
        .collect()
}

/// `(start, end, total)` of a `{path} at {rev}, lines a-b of n` header.
fn lines_header(text: &str) -> Option<(u64, u64, u64)> {
    let first = text.lines().next()?;
    let (_, rest) = first.rsplit_once(", lines ")?;
    let (range, total) = rest.split_once(" of ")?;
    let (start, end) = range.split_once('-')?;
    Some((
        start.parse().ok()?,
        end.parse().ok()?,
        total.trim().parse().ok()?,
    ))
}

/// The line a window cut (`line L is longer than that and was cut`).
fn cut_line(text: &str) -> Option<u64> {
    let (_, rest) = text.split_once("; line ")?;
    let (line, rest) = rest.split_once(' ')?;
    rest.starts_with("is longer than that and was cut")
        .then(|| line.parse().ok())
        .flatten()
}

/// `(L, B)` of a byte window's `continue with start_line=L start_byte=B` note.
fn byte_continuation(text: &str) -> Option<(u64, u64)> {
    let (_, rest) = text.split_once("continue with start_line=")?;
    let (line, rest) = rest.split_once(" start_byte=")?;
    let byte: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.parse().ok()?, byte.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(args: Value, text: &str) -> ToolResult {
        ToolResult {
            args,
            text: text.to_owned(),
        }
    }

    fn read(path: &str, revision: &str, args: Value) -> (String, Value) {
        let mut args = args;
        args["path"] = json!(path);
        args["revision"] = json!(revision);
        ("read_file".to_owned(), args)
    }

    #[test]
    fn first_windows_at_both_sides_then_the_next_until_the_total() {
        let paths = vec!["a.rs".to_owned()];
        assert_eq!(
            next_reads(&paths, &[]),
            vec![
                read("a.rs", "head", json!({"start_line": 1, "end_line": 200})),
                read("a.rs", "base", json!({"start_line": 1, "end_line": 200})),
            ]
        );
        let done = vec![
            result(
                json!({"path": "a.rs", "revision": "head", "start_line": 1, "end_line": 200}),
                "a.rs at head, lines 1-200 of 250\n1: x\n",
            ),
            result(
                json!({"path": "a.rs", "revision": "base", "start_line": 1, "end_line": 200}),
                "error: a.rs does not exist at base",
            ),
        ];
        assert_eq!(
            next_reads(&paths, &done),
            vec![read(
                "a.rs",
                "head",
                json!({"start_line": 201, "end_line": 400})
            )]
        );
        let mut all = done.clone();
        all.push(result(
            json!({"path": "a.rs", "revision": "head", "start_line": 201, "end_line": 400}),
            "a.rs at head, lines 201-250 of 250\n201: y\n",
        ));
        assert!(next_reads(&paths, &all).is_empty());
    }

    #[test]
    fn a_cut_line_is_read_in_byte_windows_following_the_notes() {
        let paths = vec!["m.js".to_owned()];
        let head = |args: Value, text: &str| {
            let mut args = args;
            args["path"] = json!("m.js");
            result(args, text)
        };
        let mut done = vec![
            head(
                json!({"start_line": 1, "end_line": 200}),
                "m.js at head, lines 1-1 of 1\n1: abc\n[truncated: read_file returns at most 400 lines and 32768 bytes per call; line 1 is longer than that and was cut: read the rest with start_line=1 and start_byte]\n",
            ),
            result(
                json!({"path": "m.js", "revision": "base"}),
                "m.js at base, lines 1-1 of 1\n1: a\n",
            ),
        ];
        assert_eq!(
            next_reads(&paths, &done),
            vec![read(
                "m.js",
                "head",
                json!({"start_line": 1, "start_byte": 0})
            )]
        );
        done.push(head(
            json!({"start_line": 1, "start_byte": 0}),
            "m.js at head, line 1 bytes 0-16384 of 20000\n1: abc\n[cut: at most 16384 bytes per call; continue with start_line=1 start_byte=16384]\n",
        ));
        assert_eq!(
            next_reads(&paths, &done),
            vec![read(
                "m.js",
                "head",
                json!({"start_line": 1, "start_byte": 16384})
            )]
        );
        done.push(head(
            json!({"start_line": 1, "start_byte": 16384}),
            "m.js at head, line 1 bytes 16384-20000 of 20000\n1: c\n",
        ));
        assert!(next_reads(&paths, &done).is_empty());
    }

    #[test]
    fn results_are_matched_to_their_calls_by_id() {
        let request = json!({"messages": [
            {"role": "user", "content": "review"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}},
                {"id": "2", "type": "function", "function": {"name": "diff", "arguments": "{\"path\":\"b.rs\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "2", "content": "@@"},
            {"role": "tool", "tool_call_id": "1", "content": "a.rs at head, lines 1-3 of 3\n"}
        ]});
        assert_eq!(
            tool_results(&request),
            vec![result(
                json!({"path": "a.rs"}),
                "a.rs at head, lines 1-3 of 3\n"
            )]
        );
    }
}
