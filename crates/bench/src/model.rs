//! The instant, perfect scripted model: it answers every stage with a complete receipt
//! listing exactly the request's expected files, no candidate, and — when the request
//! offers tools — first reads every file the host says it did not give inline or asks it
//! to inspect, as its [`Reader`] does: one `diff` call per file, or `read_file` in
//! line windows at head and base. [`Answers`] can make each execution's first answer
//! wrong (a file left out, a reply cut off), to exercise the host's retry and repair.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};
use vouch_testkit::openai::{Match, Reply, Rule, Script};

/// Most tool calls the model asks for in one turn.
pub const READS_PER_TURN: usize = 8;

pub use crate::windows::WINDOW_LINES;

/// How the perfect model reads a file it was not given inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reader {
    /// One `diff` call per file.
    #[default]
    Diff,
    /// `read_file` in windows of [`WINDOW_LINES`] lines, the whole file at head and at
    /// base (where the deleted lines are), following the tool's notes for a line too
    /// long to show whole (byte windows).
    ReadFile,
}

impl Reader {
    /// The name used on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Reader::Diff => "diff",
            Reader::ReadFile => "read_file",
        }
    }
}

/// How the model's first answer of each stage execution is written; every later answer
/// (a repair, a coverage retry) is exact. The second and third exercise the host's
/// repair and coverage-retry paths, which an exact model never takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Answers {
    /// A complete receipt listing exactly the expected files.
    #[default]
    Exact,
    /// A receipt that claims completeness but leaves out the last expected file (when it
    /// expects more than one): the host asks again for the missing file.
    OmitOne,
    /// The exact answer cut off in the middle, as a reply that ran out of output tokens:
    /// the host repairs it.
    CutOff,
}

impl Answers {
    /// The name used on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Answers::Exact => "exact",
            Answers::OmitOne => "omit-one",
            Answers::CutOff => "cut-off",
        }
    }
}

/// The `usage` the perfect model reports with each reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Usage {
    /// The scripted server's fixed default (`vouch_testkit::openai::DEFAULT_USAGE`).
    #[default]
    Scripted,
    /// Prompt tokens estimated from the request as a provider tokenizes it
    /// ([`crate::cost::provider_text`], [`crate::cost::tokens`]), completion tokens from
    /// the reply's text: what a real endpoint would report, so vouch's token budgets
    /// see the amounts they would.
    Estimated,
}

/// A script whose one rule answers every chat request as [`perfect_reply`] does with
/// `reader`, `answers` and `usage`, each reply sent `latency` after its request arrived.
pub fn perfect_script(latency: Duration, reader: Reader, answers: Answers, usage: Usage) -> Script {
    let reply = Reply::computed(move |request| perfect_reply(request, reader, answers, usage));
    let reply = if latency.is_zero() {
        reply
    } else {
        reply.delay(latency)
    };
    Script::new().rule(Rule::when(Match::any()).named("perfect").always(reply))
}

/// What the perfect model does with one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The endpoint check's one-token probe.
    Pong,
    /// Call these tools first (name, JSON arguments).
    Read(Vec<(String, Value)>),
    /// The final answer (a JSON object of the stage's contract).
    Final(Value),
    /// A final answer cut off before its end (not valid JSON).
    CutOff(String),
}

/// Rule: `answer` as `answers` writes it. Only the first final answer of an execution
/// (not a repair, not a coverage retry) is shaped.
fn shaped(answer: Answer, request: &Value, answers: Answers) -> Answer {
    let Answer::Final(mut value) = answer else {
        return answer;
    };
    let first = !is_repair(request) && !is_coverage_retry(request);
    match answers {
        Answers::OmitOne if first && value.get("coverage").is_some() => {
            if let Some(files) = value
                .pointer_mut("/coverage/reviewedFiles")
                .and_then(Value::as_array_mut)
                .filter(|f| f.len() > 1)
            {
                files.pop();
            }
            Answer::Final(value)
        }
        Answers::CutOff if first => {
            let text = value.to_string();
            let mut cut = text.len() / 2;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            Answer::CutOff(text[..cut].to_owned())
        }
        _ => Answer::Final(value),
    }
}

/// True when the request is a coverage retry: its `## Coverage retry` section says what
/// the execution's earlier answer got wrong (the retry is a new conversation, with that
/// answer quoted), whether files were missed or a repaired claim was not taken.
fn is_coverage_retry(request: &Value) -> bool {
    texts(request)
        .iter()
        .any(|t| t.contains("## Coverage retry\n"))
}

/// The perfect model's reply to one chat-completion request body, with `usage`.
pub fn perfect_reply(request: &Value, reader: Reader, answers: Answers, usage: Usage) -> Reply {
    let (reply, completion_bytes) = match shaped(decide(request, reader), request, answers) {
        Answer::Pong => (Reply::content("pong"), 4),
        Answer::Read(calls) => {
            let calls: Vec<(String, String)> = calls
                .into_iter()
                .map(|(name, args)| (name, args.to_string()))
                .collect();
            let bytes = calls.iter().map(|(n, a)| n.len() + a.len()).sum();
            (Reply::tool_calls(calls), bytes)
        }
        Answer::Final(answer) => {
            let text = answer.to_string();
            (Reply::content(text.clone()), text.len())
        }
        Answer::CutOff(text) => {
            let bytes = text.len();
            (Reply::content(text), bytes)
        }
    };
    match usage {
        Usage::Scripted => reply,
        Usage::Estimated => reply.with_usage(
            crate::cost::tokens(crate::cost::provider_text(request).len()),
            crate::cost::tokens(completion_bytes),
        ),
    }
}

/// Rule: a probe gets `pong`; a verifier gets no decision (the model proposes no
/// candidate); with tools, every file the host did not give inline or names as missing
/// is read first as `reader` reads ([`READS_PER_TURN`] calls per turn); then the answer
/// is a complete receipt with exactly the last expected-files array of the conversation
/// and no candidate.
pub fn decide(request: &Value, reader: Reader) -> Answer {
    if request.get("max_tokens").and_then(Value::as_u64) == Some(1) {
        return Answer::Pong;
    }
    let all = texts(request).join("\n");
    if all.contains("\"decisions\"") && !all.contains("\"reviewedFiles\"") {
        return Answer::Final(json!({"decisions": []}));
    }
    let expected = last_array_after(&all, "<expected-files>\n").unwrap_or_default();
    let offers_tools = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if offers_tools {
        let calls = match reader {
            Reader::Diff => files_to_read(&all, &requested_paths(request))
                .into_iter()
                .map(|path| ("diff".to_owned(), json!({"path": path})))
                .collect(),
            Reader::ReadFile => crate::windows::next_reads(
                &files_to_read(&all, &BTreeSet::new()),
                &crate::windows::tool_results(request),
            ),
        };
        if !calls.is_empty() {
            return Answer::Read(calls.into_iter().take(READS_PER_TURN).collect());
        }
    }
    Answer::Final(json!({
        "candidates": [],
        "coverage": {"complete": true, "reviewedFiles": expected},
        "summary": "Inspected every expected file; no defect found.",
    }))
}

/// Files the host named as not given inline or as missing, minus those already read.
fn files_to_read(all: &str, requested: &BTreeSet<String>) -> Vec<String> {
    let mut wanted = BTreeSet::new();
    for marker in [
        "Not included (over the inline budget): ",
        "Missing files (inspect these now): ",
    ] {
        let mut rest = all;
        while let Some(at) = rest.find(marker) {
            rest = &rest[at + marker.len()..];
            if let Some(paths) = array_at(rest) {
                wanted.extend(paths);
            }
        }
    }
    wanted.difference(requested).cloned().collect()
}

/// Paths of every tool call the model already made in this conversation.
fn requested_paths(request: &Value) -> BTreeSet<String> {
    request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter_map(|call| call.pointer("/function/arguments").and_then(Value::as_str))
        .filter_map(|args| serde_json::from_str::<Value>(args).ok())
        .filter_map(|args| args.get("path").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn is_repair(request: &Value) -> bool {
    texts(request)
        .first()
        .is_some_and(|system| system.starts_with("You repair"))
}

/// Every message's content as text, in order (parts joined).
fn texts(request: &Value) -> Vec<String> {
    request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| match m.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .collect()
}

/// The JSON string array right after the last `marker` in `text`.
fn last_array_after(text: &str, marker: &str) -> Option<Vec<String>> {
    let at = text.rfind(marker)?;
    array_at(&text[at + marker.len()..])
}

/// The JSON string array at the start of `text` (up to the end of its line).
fn array_at(text: &str) -> Option<Vec<String>> {
    let line = text.lines().next()?;
    serde_json::from_str(line.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(user: &str, tools: bool, history: Vec<Value>) -> Value {
        let mut messages = vec![
            json!({"role": "system", "content": "You review."}),
            json!({"role": "user", "content": user}),
        ];
        messages.extend(history);
        let mut body = json!({"model": "m", "messages": messages});
        if tools {
            body["tools"] = json!([{"type": "function", "function": {"name": "diff"}}]);
        }
        body
    }

    const USER: &str = "Instance: generic-investigator #1\n<expected-files>\n[\"a.rs\",\"b.rs\"]\n</expected-files>\nNot included (over the inline budget): [\"b.rs\"]\n";

    #[test]
    fn reads_what_was_not_given_then_answers_with_the_exact_receipt() {
        let first = decide(&request(USER, true, vec![]), Reader::Diff);
        assert_eq!(
            first,
            Answer::Read(vec![("diff".to_owned(), json!({"path": "b.rs"}))])
        );
        let history = vec![
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "diff", "arguments": "{\"path\":\"b.rs\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "c", "content": "@@ -1 +1 @@"}),
        ];
        let Answer::Final(answer) = decide(&request(USER, true, history), Reader::Diff) else {
            panic!("a final answer once every file was read");
        };
        assert_eq!(answer["coverage"]["complete"], true);
        assert_eq!(answer["coverage"]["reviewedFiles"], json!(["a.rs", "b.rs"]));
        assert_eq!(answer["candidates"], json!([]));
    }

    #[test]
    fn the_probe_gets_pong_and_the_receipt_follows_the_last_list() {
        let mut probe = request(USER, false, vec![]);
        probe["max_tokens"] = json!(1);
        assert_eq!(decide(&probe, Reader::Diff), Answer::Pong);
        let retry = vec![
            json!({"role": "user", "content": "## Coverage retry\n<expected-files>\n[\"c.rs\"]\n</expected-files>\n"}),
        ];
        let Answer::Final(answer) = decide(&request(USER, false, retry), Reader::ReadFile) else {
            panic!("a final answer");
        };
        assert_eq!(answer["coverage"]["reviewedFiles"], json!(["c.rs"]));
    }

    #[test]
    fn without_tools_answers_at_once() {
        let Answer::Final(answer) = decide(&request(USER, false, vec![]), Reader::ReadFile) else {
            panic!("no tools: a final answer at once");
        };
        assert_eq!(answer["coverage"]["reviewedFiles"], json!(["a.rs", "b.rs"]));
    }

    /// The first answer of an execution is shaped; a coverage retry's and a repair's are
    /// exact, so every stage ends complete after one retry or one repair.
    #[test]
    fn only_an_executions_first_answer_is_shaped() {
        let first = request(USER, false, vec![]);
        let text = |reply: Answer| match reply {
            Answer::Final(v) => v.to_string(),
            Answer::CutOff(t) => t,
            other => panic!("a final answer: {other:?}"),
        };
        let omitted = text(shaped(
            decide(&first, Reader::Diff),
            &first,
            Answers::OmitOne,
        ));
        let omitted: Value = serde_json::from_str(&omitted).unwrap();
        assert_eq!(omitted["coverage"]["reviewedFiles"], json!(["a.rs"]));
        assert_eq!(omitted["coverage"]["complete"], true);
        let cut = text(shaped(
            decide(&first, Reader::Diff),
            &first,
            Answers::CutOff,
        ));
        assert!(serde_json::from_str::<Value>(&cut).is_err(), "{cut}");
        let exact = text(shaped(decide(&first, Reader::Diff), &first, Answers::Exact));
        assert!(exact.contains("\"a.rs\",\"b.rs\""), "{exact}");

        let retry = request(
            "## Coverage retry\nMissing files (their patches are in the source given above; inspect them): [\"b.rs\"]\n<expected-files>\n[\"a.rs\",\"b.rs\"]\n",
            false,
            vec![],
        );
        let mut repair = request(USER, false, vec![]);
        repair["messages"][0]["content"] = json!("You repair a reply.");
        for later in [retry, repair] {
            for answers in [Answers::OmitOne, Answers::CutOff] {
                let answer = text(shaped(decide(&later, Reader::Diff), &later, answers));
                let answer: Value = serde_json::from_str(&answer).unwrap();
                assert_eq!(answer["coverage"]["reviewedFiles"], json!(["a.rs", "b.rs"]));
            }
        }
    }
}
