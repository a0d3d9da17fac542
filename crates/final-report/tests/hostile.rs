//! Properties that must hold for every input, checked with hostile generated inputs:
//! look-alike and invisible characters in keys are always rejected, unknown keys are
//! always rejected, text that does not parse never validates, and a blocked handoff
//! never carries a merge or approve command.

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
