//! What a transcript line's recorded result says: whether the call succeeded, which
//! state an issue read returned, and which lines a proof text cites. The transcript is
//! the evidence the reporting agent cannot edit afterwards, so a recorded failure wins
//! over the report's account of the same call.

use std::ops::RangeInclusive;

use serde_json::Value;

/// What a recorded result says about its call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// An exit code 0, `merged: true`, `ok`/`success: true`.
    Succeeded,
    /// A non-zero exit code, `merged: false`, `isError`, `ok`/`success: false`, an
    /// `error`, or an HTTP status of 400 or more; the string says which.
    Failed(String),
    /// Nothing in the result says either way.
    Unknown,
}

/// Most envelopes looked into, one inside another (a hostile result cannot make the
/// search unbounded).
const MAX_ENVELOPES: usize = 4;

/// The objects a recorded result carries its payload in, nearest first: the result
/// itself and, unwrapped from it (again, a few levels at most), command output that is
/// JSON, MCP `structuredContent` and `content[].text` parsed as JSON, a REST `body`,
/// GraphQL `data` down through single-key objects (`data.repository.issue`), and an
/// `issue` object. Nothing else is searched: a `state` inside a timeline event or a
/// list of comments is not the issue's.
pub(crate) fn payloads(result: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    collect_payloads(result, 0, &mut out);
    out
}

fn collect_payloads(value: &Value, depth: usize, out: &mut Vec<Value>) {
    if !value.is_object() || depth > MAX_ENVELOPES {
        return;
    }
    out.push(value.clone());
    let json_text = |v: &Value| {
        v.as_str()
            .and_then(|t| serde_json::from_str::<Value>(t.trim()).ok())
    };
    let mut inner: Vec<Value> = Vec::new();
    if let Some(text) = result_output(value)
        && let Ok(parsed) = serde_json::from_str::<Value>(text.trim())
    {
        inner.push(parsed);
    }
    if let Some(structured) = value.get("structuredContent") {
        inner.push(structured.clone());
    }
    if let Some(items) = value.get("content").and_then(Value::as_array) {
        inner.extend(
            items
                .iter()
                .filter(|i| i.get("type").is_none_or(|t| t == "text"))
                .filter_map(|i| i.get("text").and_then(json_text)),
        );
    }
    if let Some(body) = value.get("body") {
        inner.push(json_text(body).unwrap_or_else(|| body.clone()));
    }
    if let Some(mut data) = value.get("data") {
        inner.push(data.clone());
        while let Some(only) = data
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.values().next())
        {
            inner.push(only.clone());
            data = only;
        }
    }
    if let Some(issue) = value.get("issue") {
        inner.push(issue.clone());
    }
    for payload in &inner {
        collect_payloads(payload, depth + 1, out);
    }
}

/// The outcome a recorded result reports, read in the result and in the payloads it
/// wraps ([`payloads`]). Failure signals win over success signals.
pub(crate) fn outcome(result: &Value) -> Outcome {
    let Some(map) = result.as_object() else {
        return Outcome::Unknown;
    };
    let exit_code = map.get("exitCode").and_then(Value::as_i64);
    if let Some(c) = exit_code.filter(|c| *c != 0) {
        return Outcome::Failed(format!("it exited {c}"));
    }
    // A command that exited 0 can still print a failure (curl prints an HTTP error
    // body and exits 0): its JSON output is one of the payloads.
    let payloads = payloads(result);
    let maps = payloads.iter().filter_map(Value::as_object);
    if let Some(why) = maps.clone().find_map(failure_signal) {
        return Outcome::Failed(why);
    }
    if exit_code == Some(0) {
        return Outcome::Succeeded;
    }
    let succeeded = maps.clone().any(|map| {
        ["merged", "ok", "success"]
            .iter()
            .any(|k| map.get(*k) == Some(&Value::Bool(true)))
    });
    if succeeded {
        Outcome::Succeeded
    } else {
        Outcome::Unknown
    }
}

/// The failure a result object reports, if any.
fn failure_signal(map: &serde_json::Map<String, Value>) -> Option<String> {
    for key in ["merged", "ok", "success"] {
        if map.get(key) == Some(&Value::Bool(false)) {
            return Some(format!("`{key}` is false"));
        }
    }
    if map.get("isError") == Some(&Value::Bool(true)) {
        return Some("`isError` is true".to_owned());
    }
    for key in ["error", "errors"] {
        let reported = match map.get(key) {
            None | Some(Value::Null | Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.trim().is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            Some(_) => true,
        };
        if reported {
            return Some(format!("it reports `{key}`: {}", map[key]));
        }
    }
    ["status", "statusCode", "status_code", "httpStatus"]
        .iter()
        .find_map(|k| {
            let v = map.get(*k)?;
            let code = v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))?;
            (code >= 400).then(|| format!("HTTP status {code}"))
        })
}

/// The state of an issue as a recorded read returned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IssueState {
    Open,
    Closed,
}

/// The issue state in a recorded result or a payload it wraps ([`payloads`]), the
/// nearest that says: a `state` (`open`, `opened`, `reopened`, `closed`, any case) or a
/// boolean `closed`/`isClosed`/`is_closed`.
pub(crate) fn issue_state(result: &Value) -> Option<IssueState> {
    payloads(result).iter().find_map(|scope| {
        let closed = ["closed", "isClosed", "is_closed"]
            .iter()
            .find_map(|k| scope.get(*k).and_then(Value::as_bool));
        if let Some(closed) = closed {
            return Some(if closed {
                IssueState::Closed
            } else {
                IssueState::Open
            });
        }
        match scope.get("state")?.as_str()?.to_lowercase().as_str() {
            "closed" => Some(IssueState::Closed),
            "open" | "opened" | "reopened" => Some(IssueState::Open),
            _ => None,
        }
    })
}

/// A command result's output text (`output` or `stdout`).
fn result_output(result: &Value) -> Option<&str> {
    ["output", "stdout"]
        .iter()
        .find_map(|k| result.get(*k).and_then(Value::as_str))
}

/// The transcript seqs a text cites: `seq 17`, `seq 15-16` (a range), `seqs 3, 4`,
/// `seq 3 and 5`.
pub(crate) fn cited_ranges(text: &str) -> Vec<RangeInclusive<u64>> {
    let tokens = seq_tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let is_seq = matches!(&tokens[i], Token::Word(w) if w == "seq" || w == "seqs");
        i += 1;
        if !is_seq {
            continue;
        }
        while let Some(Token::Number(start)) = tokens.get(i) {
            let mut end = *start;
            i += 1;
            if let (Some(Token::Dash), Some(Token::Number(n))) = (tokens.get(i), tokens.get(i + 1))
            {
                end = (*n).max(*start);
                i += 2;
            }
            out.push(*start..=end);
            match (tokens.get(i), tokens.get(i + 1)) {
                (Some(Token::Comma), Some(Token::Number(_))) => i += 1,
                (Some(Token::Word(w)), Some(Token::Number(_))) if w == "and" => i += 1,
                _ => break,
            }
        }
    }
    out
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Number(u64),
    Dash,
    Comma,
}

fn seq_tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() {
            let mut word = c.to_string();
            while let Some(n) = chars.peek().copied().filter(|n| n.is_alphanumeric()) {
                word.push(n);
                chars.next();
            }
            out.push(match word.parse::<u64>() {
                Ok(n) => Token::Number(n),
                Err(_) => Token::Word(word.to_lowercase()),
            });
        } else if matches!(c, '-' | '–' | '—') {
            out.push(Token::Dash);
        } else if c == ',' {
            out.push(Token::Comma);
        }
    }
    out
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use super::*;

    #[test]
    fn a_command_that_exited_0_but_printed_a_json_failure_failed() {
        let table = [
            (
                json!({"exitCode": 0, "output": "{\"message\": \"Not mergeable\", \"status\": \"405\"}"}),
                false,
            ),
            (
                json!({"exitCode": 0, "output": "{\"merged\": false}"}),
                false,
            ),
            (
                json!({"exitCode": 0, "output": "{\"merged\": true, \"sha\": \"5eed\"}"}),
                true,
            ),
            (
                json!({"exitCode": 0, "output": "test result: ok. 3 passed"}),
                true,
            ),
            (
                json!({"exitCode": 1, "output": "{\"merged\": true}"}),
                false,
            ),
        ];
        for (result, succeeded) in table {
            assert_eq!(
                outcome(&result) == Outcome::Succeeded,
                succeeded,
                "{result}"
            );
        }
    }

    #[test]
    fn recorded_results_say_whether_the_call_succeeded() {
        let failed = |v: Value| matches!(outcome(&v), Outcome::Failed(_));
        assert!(failed(json!({"exitCode": 1, "output": ""})));
        assert!(failed(
            json!({"merged": false, "status": 405, "message": "not mergeable"})
        ));
        assert!(failed(json!({"message": "try later", "status": 405})));
        assert!(failed(
            json!({"merged": false, "error": "405 Method Not Allowed"})
        ));
        assert!(failed(json!({"isError": true, "content": []})));
        assert!(failed(json!({"error": {"code": -32000}})));
        assert!(failed(json!({"statusCode": "502"})));
        assert_eq!(outcome(&json!({"exitCode": 0})), Outcome::Succeeded);
        assert_eq!(
            outcome(&json!({"merged": true, "sha": "5eed"})),
            Outcome::Succeeded
        );
        assert_eq!(
            outcome(&json!({"number": 17, "state": "open"})),
            Outcome::Unknown
        );
        assert_eq!(
            outcome(&json!({"error": null, "status": 200})),
            Outcome::Unknown
        );
        assert_eq!(outcome(&json!("done")), Outcome::Unknown);
        // The payload an envelope wraps: MCP text content, structured content, a body.
        assert!(failed(json!({"content": [
            {"type": "text", "text": "{\"merged\": false, \"message\": \"not mergeable\"}"}
        ]})));
        assert!(failed(json!({"structuredContent": {"merged": false}})));
        assert!(failed(json!({"body": "{\"merged\": false}"})));
        assert!(failed(
            json!({"data": {"mergePullRequest": {"error": "not mergeable"}}})
        ));
        assert_eq!(
            outcome(&json!({"content": [{"type": "text", "text": "{\"merged\": true}"}]})),
            Outcome::Succeeded
        );
        assert_eq!(
            outcome(&json!({"content": [{"type": "text", "text": "merged"}]})),
            Outcome::Unknown
        );
    }

    #[test]
    fn issue_reads_say_open_or_closed() {
        let table = [
            (
                json!({"number": 17, "state": "open"}),
                Some(IssueState::Open),
            ),
            (json!({"state": "CLOSED"}), Some(IssueState::Closed)),
            (
                json!({"body": {"state": "reopened"}}),
                Some(IssueState::Open),
            ),
            (json!({"data": {"closed": true}}), Some(IssueState::Closed)),
            (
                json!({"exitCode": 0, "output": "{\"state\":\"OPEN\"}"}),
                Some(IssueState::Open),
            ),
            (json!({"number": 17}), None),
            // MCP, GraphQL and REST envelopes are unwrapped.
            (
                json!({"content": [{"type": "text", "text": "{\"number\":17,\"state\":\"open\"}"}]}),
                Some(IssueState::Open),
            ),
            (
                json!({"content": [{"type": "text", "text": "..."}], "structuredContent": {"state": "open"}}),
                Some(IssueState::Open),
            ),
            (
                json!({"data": {"repository": {"issue": {"state": "OPEN"}}}}),
                Some(IssueState::Open),
            ),
            (json!({"isClosed": false}), Some(IssueState::Open)),
            (
                json!({"body": "{\"state\": \"closed\"}"}),
                Some(IssueState::Closed),
            ),
            // Not searched arbitrarily deep: a timeline event's state is not the issue's.
            (
                json!({"state": "closed", "timeline": [{"event": "reopened", "state": "open"}]}),
                Some(IssueState::Closed),
            ),
            (
                json!({"number": 17, "timeline": [{"state": "open"}], "comments": {"state": "open", "n": 1}}),
                None,
            ),
            (
                json!({"data": {"repository": {"issue": {"number": 17, "timelineItems": {"nodes": [{"state": "OPEN"}]}}}}}),
                None,
            ),
        ];
        for (result, expected) in table {
            assert_eq!(issue_state(&result), expected, "{result}");
        }
    }

    #[test]
    fn proofs_cite_single_seqs_ranges_and_lists() {
        let table: &[(&str, &[RangeInclusive<u64>])] = &[
            (
                "mcp__gitea__get_issue at transcript seq 17 after the merge",
                &[17..=17],
            ),
            (
                "exited 0 after git fetch (transcript seq 15-16)",
                &[15..=16],
            ),
            ("seqs 3, 4 and 9", &[3..=3, 4..=4, 9..=9]),
            ("seq 150–160", &[150..=160]),
            ("Seq 7. Then 8 more", &[7..=7]),
            ("no citation, 12 < 50", &[]),
        ];
        for (text, expected) in table {
            assert_eq!(cited_ranges(text), *expected, "{text}");
        }
    }
}
