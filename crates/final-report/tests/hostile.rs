//! Properties that must hold for every input, checked with hostile generated inputs:
//! look-alike and invisible characters in keys are always rejected, unknown keys are
//! always rejected, text that does not parse never validates, and a blocked handoff
//! never carries a merge or approve command, and JSON that repeats a key is never read.

use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::{Value, json};
use vouch_final_report::{ViolationCode, check_text, parse_report, validate};

fn base() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/final-report/accept/collision-stop.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

const KEYS: &[&str] = &[
    "schemaVersion",
    "narrative",
    "handoff",
    "target",
    "review",
    "validation",
    "diffReview",
    "merge",
    "linkedIssues",
    "inventory",
    "mutations",
    "commands",
    "concurrency",
];

/// Invisible characters, odd spaces and Cyrillic/Greek look-alikes of Latin letters.
fn hostile_char() -> impl Strategy<Value = char> {
    prop::sample::select(vec![
        '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}', '\u{00A0}',
        '\u{202F}', '\u{2007}', 'а', 'е', 'о', 'р', 'с', 'і', 'ο', 'α',
    ])
}

/// `value` as JSON text in which the `target`-th object (pre-order, counting only
/// non-empty objects) repeats its key number `key` with `again` as the second value.
fn text_repeating_a_key(value: &Value, target: usize, key: usize, again: &Value) -> String {
    fn write(v: &Value, seen: &mut usize, target: usize, key: usize, again: &Value) -> String {
        match v {
            Value::Object(map) if !map.is_empty() => {
                let here = *seen == target;
                *seen += 1;
                let mut parts: Vec<String> = map
                    .iter()
                    .map(|(k, x)| format!("{}:{}", json!(k), write(x, seen, target, key, again)))
                    .collect();
                if here {
                    let k = map.keys().nth(key % map.len()).expect("key");
                    parts.push(format!("{}:{}", json!(k), again));
                }
                format!("{{{}}}", parts.join(","))
            }
            Value::Array(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|x| write(x, seen, target, key, again))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            other => other.to_string(),
        }
    }
    write(value, &mut 0, target, key, again)
}

fn count_objects(v: &Value) -> usize {
    match v {
        Value::Object(map) if !map.is_empty() => 1 + map.values().map(count_objects).sum::<usize>(),
        Value::Object(_) => 0,
        Value::Array(items) => items.iter().map(count_objects).sum(),
        _ => 0,
    }
}

fn codes(report: &Value) -> Vec<ViolationCode> {
    validate(report, None).iter().map(|v| v.code).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A key with an invisible or look-alike character inserted anywhere is a
    /// CONFUSABLE_CHARACTER violation, and the report is never valid.
    #[test]
    fn confusable_keys_are_always_rejected(
        key in prop::sample::select(KEYS),
        at in 0usize..24,
        c in hostile_char(),
        replace in any::<bool>(),
    ) {
        let mut report = base();
        let map = report.as_object_mut().expect("object");
        let value = map.shift_remove(key).expect("key");
        let mut chars: Vec<char> = key.chars().collect();
        let i = at % chars.len();
        if replace { chars[i] = c } else { chars.insert(i, c) }
        let hostile: String = chars.into_iter().collect();
        prop_assume!(hostile != key);
        map.insert(hostile, value);
        let found = codes(&report);
        prop_assert!(found.contains(&ViolationCode::ConfusableCharacter), "{found:?}");
    }

    /// Any key the schema does not define, at the top level or in a section, makes
    /// the report invalid.
    #[test]
    fn unknown_keys_are_always_rejected(
        key in "[a-zA-Z][a-zA-Z0-9_]{0,12}",
        section in prop::sample::select(vec!["", "handoff", "validation", "review", "concurrency", "diffReview"]),
    ) {
        let mut report = base();
        let target = if section.is_empty() { &mut report } else { &mut report[section] };
        let map = target.as_object_mut().expect("object");
        prop_assume!(!map.contains_key(&key));
        map.insert(key.clone(), json!("x"));
        prop_assert!(!validate(&report, None).is_empty(), "{section}/{key} accepted");
    }

    /// Text that does not parse as a report never validates: the verdict is valid only
    /// for text `parse_report` reads.
    #[test]
    fn text_that_never_parses_never_validates(text in "\\PC{0,200}") {
        let verdict = check_text(&text, None);
        if parse_report(&text).is_err() {
            prop_assert_eq!(verdict.exit_code, 3);
            prop_assert!(!verdict.valid);
        }
    }

    /// A report whose JSON repeats a key in any object, at any depth, with any second
    /// value (the same one included), is never read, as JSON or as Markdown: which value
    /// counts would be ambiguous.
    #[test]
    fn a_repeated_key_is_never_read(
        target in 0usize..10_000,
        key in 0usize..64,
        again in prop::sample::select(vec![json!("passed"), json!("failed"), json!(true), json!(0), json!(null)]),
        markdown in any::<bool>(),
    ) {
        let report = base();
        let json_text = text_repeating_a_key(&report, target % count_objects(&report), key, &again);
        let text = if markdown {
            format!("Report.\n\n```json\n{json_text}\n```\n")
        } else {
            json_text
        };
        let verdict = check_text(&text, None);
        prop_assert_eq!(verdict.exit_code, 3, "{}", text);
        prop_assert!(verdict.error.unwrap_or_default().contains("appears twice"));
    }

    /// Arbitrary JSON objects are never valid reports.
    #[test]
    fn arbitrary_objects_never_validate(
        entries in prop::collection::btree_map("[a-zA-Z]{1,10}", any::<i64>(), 0..8),
    ) {
        let report: Value = entries.into_iter().map(|(k, v)| (k, json!(v))).collect::<serde_json::Map<_, _>>().into();
        prop_assert!(!validate(&report, None).is_empty());
    }

    /// A blocked or stopped handoff never carries a merge or approve command, wherever
    /// it is written and however it is wrapped.
    #[test]
    fn blocked_handoffs_never_carry_merge_or_approve(
        number in 1u64..100_000,
        disposition in prop::sample::select(vec!["blocked", "stopped"]),
        template in prop::sample::select(vec![
            "gh pr merge {n} --squash",
            "gh pr review {n} --approve",
            "tea pulls merge {n}",
            "tea pr approve {n}",
            "glab mr merge {n}",
            "./scripts/pr.sh merge {n}",
            "bin/forge --action approve {n}",
            "make merge PR={n}",
            "mcp__gitea__merge_pull_request(index={n})",
            "curl -X POST https://git.example/api/v1/repos/o/r/pulls/{n}/merge",
        ]),
        place in 0usize..3,
    ) {
        let command = template.replace("{n}", &number.to_string());
        let mut report = base();
        report["handoff"]["disposition"] = json!(disposition);
        match place {
            0 => report["handoff"]["replayCommands"] = json!([command]),
            1 => report["handoff"]["nextAction"] = json!(format!("After re-selection run `{command}`.")),
            _ => report["handoff"]["nextAction"] = json!(format!("Later, {command}")),
        }
        let found = codes(&report);
        prop_assert!(found.contains(&ViolationCode::BlockedHandoffReplaysMutation), "{command}: {found:?}");
    }
}
