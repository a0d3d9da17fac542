//! Table-driven tests of JSON extraction.

use serde_json::{Value, json};

use super::{
    ExtractError, answer_text, candidates, extract_json, extract_json_if, tool_call_as_text,
};

/// The contract used by the table: an object with a `findings` array.
fn contract(value: &Value) -> Result<(), String> {
    match value.get("findings") {
        Some(Value::Array(_)) => Ok(()),
        _ => Err("missing `findings` array".to_owned()),
    }
}

enum Expect {
    Value(Value),
    NoJson,
    NoValid(usize),
    Ambiguous(usize),
    /// The key named.
    DuplicateKey(&'static str),
    /// The parser's message and place in the reply.
    Syntax(&'static str),
}

#[test]
fn extraction_table() {
    let cases: Vec<(&str, &str, Expect)> = vec![
        (
            "whole text",
            r#"{"findings": []}"#,
            Expect::Value(json!({"findings": []})),
        ),
        (
            "whole text with whitespace",
            "\n  {\"findings\": [1]}  \n",
            Expect::Value(json!({"findings": [1]})),
        ),
        (
            "json fence in prose",
            "I reviewed every file.\n```json\n{\"findings\": [], \"note\": \"}\"}\n```\nDone.",
            Expect::Value(json!({"findings": [], "note": "}"})),
        ),
        (
            "bare fence",
            "Result:\n```\n{\"findings\": [2]}\n```",
            Expect::Value(json!({"findings": [2]})),
        ),
        (
            "object in prose",
            r#"All files were reviewed: {"findings": [3]} — that is all."#,
            Expect::Value(json!({"findings": [3]})),
        ),
        (
            "braces and quotes inside strings",
            r#"Here: {"findings": ["a } b", "c \" { d"]}"#,
            Expect::Value(json!({"findings": ["a } b", "c \" { d"]})),
        ),
        (
            "stray brace in prose before the object",
            r#"The line `if x {` opens a block. {"findings": [4]}"#,
            Expect::Value(json!({"findings": [4]})),
        ),
        (
            "code braces before the object",
            "fn f() { g(); }\n{\"findings\": [5]}",
            Expect::Value(json!({"findings": [5]})),
        ),
        (
            "invalid object then valid object: choose by validity",
            r#"Draft: {"coverage": {}} Final: {"findings": [6]}"#,
            Expect::Value(json!({"findings": [6]})),
        ),
        (
            "identical duplicates count once",
            "```json\n{\"findings\": [7]}\n```\nAgain: {\"findings\": [7]}",
            Expect::Value(json!({"findings": [7]})),
        ),
        (
            "duplicates equal regardless of key order",
            r#"{"findings": [], "a": 1} and {"a": 1, "findings": []}"#,
            Expect::Value(json!({"findings": [], "a": 1})),
        ),
        (
            "two different valid objects are ambiguous",
            r#"First {"findings": [1]} then {"findings": [2]}"#,
            Expect::Ambiguous(2),
        ),
        (
            "no json at all",
            "I could not finish the review.",
            Expect::NoJson,
        ),
        (
            "truncated object is never closed",
            r#"{"findings": [{"path": "a.rs", "line": 3"#,
            Expect::NoJson,
        ),
        (
            "truncated fence is never closed",
            "```json\n{\"findings\": [\n",
            Expect::NoJson,
        ),
        (
            "object without the contract",
            r#"{"coverage": {"complete": true}}"#,
            Expect::NoValid(1),
        ),
        (
            "non-json braces only",
            "Use {braces} and {more braces}.",
            Expect::NoJson,
        ),
        (
            "a trailing comma: the reply's object is the problem, not the one inside it",
            "Answer:\n{\"coverage\": {\"complete\": false}, \"findings\": [],}",
            Expect::Syntax("trailing comma at line 2 column 50 of the reply"),
        ),
        (
            "a comment in the reply's object",
            "{\n  // every file read\n  \"findings\": []\n}",
            Expect::Syntax("at line 2 column 3 of the reply"),
        ),
        (
            "single-quoted keys",
            "{'findings': []}",
            Expect::Syntax("key must be a string at line 1 column 2 of the reply"),
        ),
        (
            "a broken draft before a valid answer is not the problem",
            r#"Draft: {"findings": [1],} Final: {"findings": [8]}"#,
            Expect::Value(json!({"findings": [8]})),
        ),
        (
            "a broken object beside a refused one does not hold it",
            r#"{"coverage": {}} and {"findings": [1],}"#,
            Expect::NoValid(1),
        ),
        (
            "a repeated key: which value was meant is unknown",
            r#"{"findings": [], "complete": false, "complete": true}"#,
            Expect::DuplicateKey("complete"),
        ),
        (
            "a repeated key in a nested object, in prose",
            r#"Done: {"findings": [{"path": "a", "severity": "low", "severity": "high"}]}"#,
            Expect::DuplicateKey("severity"),
        ),
        (
            "a repeated key in another object of the reply",
            "```json\n{\"findings\": []}\n```\nDraft: {\"x\": 1, \"x\": 2}",
            Expect::DuplicateKey("x"),
        ),
        (
            "the same key in sibling objects is no repeat",
            r#"{"findings": [{"path": "a"}, {"path": "b"}]}"#,
            Expect::Value(json!({"findings": [{"path": "a"}, {"path": "b"}]})),
        ),
        (
            "unicode around the object",
            "Überprüft ✓ {\"findings\": [\"ü\"]} ✓",
            Expect::Value(json!({"findings": ["ü"]})),
        ),
    ];
    for (name, text, expected) in cases {
        let got = extract_json(text, contract);
        match (expected, got) {
            (Expect::Value(want), Ok(value)) => assert_eq!(value, want, "{name}"),
            (Expect::NoJson, Err(ExtractError::NoJson)) => {}
            (Expect::Syntax(want), Err(e @ ExtractError::Syntax(_))) => {
                assert!(e.to_string().contains(want), "{name}: {e}")
            }
            (Expect::NoValid(n), Err(ExtractError::NoValid { candidates, .. })) => {
                assert_eq!(candidates, n, "{name}")
            }
            (Expect::Ambiguous(n), Err(ExtractError::Ambiguous { count })) => {
                assert_eq!(count, n, "{name}")
            }
            (Expect::DuplicateKey(key), Err(e @ ExtractError::DuplicateKey(_))) => {
                let text = e.to_string();
                assert!(
                    text.contains(&format!("the key `{key}` appears twice")),
                    "{name}: {text}"
                );
            }
            (_, got) => panic!("{name}: unexpected {got:?}"),
        }
    }
}

#[test]
fn no_valid_keeps_the_contract_reasons() {
    let err = extract_json(r#"{"a": 1}"#, contract).unwrap_err();
    assert_eq!(
        err,
        ExtractError::NoValid {
            candidates: 1,
            reasons: vec!["missing `findings` array".into()]
        }
    );
    assert!(err.to_string().contains("missing `findings` array"));
}

#[test]
fn boolean_check_variant() {
    let value = extract_json_if(r#"x {"ok": true} y {"ok": false}"#, |v| v["ok"] == true);
    assert_eq!(value, Ok(json!({"ok": true})));
}

#[test]
fn whole_text_that_is_not_an_object_still_yields_objects_inside() {
    // A whole-text array is not itself a candidate; its objects are.
    assert_eq!(
        candidates(r#"[{"findings": []}, 3]"#),
        vec![json!({"findings": []})]
    );
}

#[test]
fn a_leading_reasoning_block_is_not_the_answer() {
    // (reply, its answer part)
    let cases = [
        // A block that leads the reply, with a draft object inside.
        (
            "<think>Draft: {\"a\": 1} -- no wait.</think>\n{\"a\": 2}",
            "\n{\"a\": 2}",
        ),
        ("  <thinking>x</thinking>{}", "{}"),
        ("<reasoning>[1]</reasoning> ok", " ok"),
        // Opened by the chat template: the reply holds only the closing tag.
        ("so the answer is clear.\n</think>\n{}", "\n{}"),
        // Opened by the chat template, with a draft before the closing tag: the answer
        // is the JSON after it.
        (
            "Draft {\"a\": 1} no wait.</think>\n{\"a\": 2}",
            "\n{\"a\": 2}",
        ),
        // Any case, and the other reasoning markers.
        ("<THINK>{\"a\": 1}</THINK>{}", "{}"),
        ("[THINK]{\"a\": 1}[/THINK]{}", "{}"),
        (
            "<|channel|>analysis<|message|>{\"a\": 1}<|end|><|start|>assistant<|channel|>final<|message|>{}",
            "{}",
        ),
        // Reasoning that mentions its closing tag ends at the last one JSON follows.
        (
            "The code handles </think> tags. Draft {\"a\": 1} no wait.</think>\n{\"a\": 2}",
            "\n{\"a\": 2}",
        ),
        (
            "<think>Plan A {\"a\": 1} </think> Plan B {\"a\": 3} </think>\n{\"a\": 2}",
            "\n{\"a\": 2}",
        ),
        // An answer after a leading block that quotes the tag in its JSON: the block ends
        // where whole JSON follows, not inside the answer.
        (
            "<think>x</think>{\"claim\": \"emits </think> {y}\"}",
            "{\"claim\": \"emits </think> {y}\"}",
        ),
        // Reasoning that mentions its closing tag, then a draft, then the answer after
        // prose: the block ends at the last closing tag outside any JSON.
        (
            "Hmm </think>\n{\"a\": 1}\nno wait.</think>\n\nFinal: {\"a\": 2}",
            "\n\nFinal: {\"a\": 2}",
        ),
        (
            "<think>x</think>\nSure: {\"claim\": \"emits </think> tags\"}",
            "\nSure: {\"claim\": \"emits </think> tags\"}",
        ),
        // A claim quoting a closing tag, even one followed by a brace, stays whole.
        (
            "{\"claim\": \"x </think> {y}\"}",
            "{\"claim\": \"x </think> {y}\"}",
        ),
        // JSON or a fence before the closing tag: that tag is in the answer.
        (
            "{\"claim\": \"emits </think>\"}",
            "{\"claim\": \"emits </think>\"}",
        ),
        (
            "```json\n{\"a\": \"</think>\"}\n```",
            "```json\n{\"a\": \"</think>\"}\n```",
        ),
        // A block that never closes, and no block at all: the reply is whole.
        ("<think>{\"a\": 1}", "<think>{\"a\": 1}"),
        ("{\"a\": 1}", "{\"a\": 1}"),
        ("", ""),
    ];
    for (reply, want) in cases {
        assert_eq!(answer_text(reply), want, "{reply:?}");
    }
    // A draft inside the block is never a second answer.
    let reply = "<think>{\"findings\": []}</think>{\"findings\": [1]}";
    assert!(matches!(
        extract_json(reply, contract),
        Err(ExtractError::Ambiguous { count: 2 })
    ));
    assert_eq!(
        extract_json(answer_text(reply), contract),
        Ok(json!({"findings": [1]}))
    );
}

proptest::proptest! {
    /// Whatever the reply, its answer part is a suffix of it: nothing is rewritten.
    #[test]
    fn the_answer_part_is_a_suffix_of_the_reply(
        reply in "(<think>|</think>|<thinking>|</thinking>|\\{|\\[|```|[a-z ]){0,12}"
    ) {
        proptest::prop_assert!(reply.ends_with(answer_text(&reply)));
    }
}

#[test]
fn a_tool_call_written_as_text_is_recognised() {
    // (reply, holds a tool call as text)
    let cases = [
        (
            "<tool_call>\n{\"name\": \"diff\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>",
            true,
        ),
        (
            "[TOOL_CALLS][{\"name\": \"diff\", \"arguments\": {}}]",
            true,
        ),
        (
            "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.py\"}}",
            true,
        ),
        (
            "{\"name\": \"x\", \"arguments\": {}, \"summary\": \"\"}",
            false,
        ),
        ("{\"summary\": \"uses the name and arguments keys\"}", false),
        ("No defects found.", false),
    ];
    for (reply, holds) in cases {
        assert_eq!(tool_call_as_text(reply), holds, "{reply}");
    }
}
