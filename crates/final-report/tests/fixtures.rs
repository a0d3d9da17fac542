//! Fixture-driven tests: every case under tests/data/final-report/cases yields exactly
//! its expected violations; the accepted fixtures validate; Markdown round-trips.
//!
//! A case is a small JSON file: a `base` report (from `accept/`), an RFC 7396
//! `mergePatch`, optional `commandsPatch` (`{"index": patch}` for command-ledger
//! entries), `appendNarrative`, `appendCommands`, a `transcript` that replaces the base
//! transcript, `transcriptPatch` (`{"seq": patch}` applied to the base transcript's
//! entries) or `extraTranscript` entries added to it, and the `expect`ed
//! `{code, pointer}` list (empty for acceptance cases). Cases named `i13-*` are the
//! examples of issue #13, `route-*` one mutation route each, `ok-*` correct reports
//! that must be accepted.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use vouch_final_report::{
    TranscriptEntry, ViolationCode, entry_from_value, parse_report, parse_transcript,
    render_markdown, validate,
};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/final-report")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The base transcript next to a base report (`x.json` → `x.transcript.jsonl`).
fn base_transcript(base: &Path) -> Option<Vec<TranscriptEntry>> {
    let path = base.with_extension("transcript.jsonl");
    path.exists()
        .then(|| parse_transcript(&read(&path)).expect("base transcript"))
}

/// The base transcript with RFC 7396 patches applied to the entries of the given seqs.
fn patched_base_transcript(
    base: &Path,
    patches: &serde_json::Map<String, Value>,
) -> Vec<TranscriptEntry> {
    let text = read(&base.with_extension("transcript.jsonl"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut entry: Value = serde_json::from_str(line).expect("base transcript line");
            let seq = entry["seq"].as_u64().expect("seq").to_string();
            if let Some(patch) = patches.get(&seq) {
                merge_patch(&mut entry, patch);
            }
            entry_from_value(entry).expect("patched entry")
        })
        .collect()
}

/// RFC 7396 JSON merge patch.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let map = target.as_object_mut().expect("object");
    for (key, value) in patch {
        if value.is_null() {
            map.shift_remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

struct Case {
    name: String,
    rule: u8,
    report: Value,
    transcript: Option<Vec<TranscriptEntry>>,
    expect: Vec<(String, String)>,
}

fn load_case(path: &Path) -> Case {
    let case = read_json(path);
    let base = data().join(case["base"].as_str().expect("base"));
    let mut report = read_json(&base);
    if let Some(patch) = case.get("mergePatch") {
        merge_patch(&mut report, patch);
    }
    if let Some(extra) = case.get("appendNarrative").and_then(Value::as_str) {
        let narrative = format!(
            "{}{extra}",
            report["narrative"].as_str().unwrap_or_default()
        );
        report["narrative"] = Value::String(narrative);
    }
    if let Some(patches) = case.get("commandsPatch").and_then(Value::as_object) {
        let commands = report["commands"].as_array_mut().expect("commands");
        for (index, patch) in patches {
            let i: usize = index.parse().expect("commandsPatch key is an index");
            merge_patch(&mut commands[i], patch);
        }
    }
    if let Some(extra) = case.get("appendCommands").and_then(Value::as_array) {
        report["commands"]
            .as_array_mut()
            .expect("commands")
            .extend(extra.iter().cloned());
    }
    let mut transcript = match case.get("transcript") {
        Some(Value::Array(entries)) => Some(
            entries
                .iter()
                .map(|e| entry_from_value(e.clone()).expect("entry"))
                .collect(),
        ),
        _ => case
            .get("transcriptPatch")
            .and_then(Value::as_object)
            .map(|patches| patched_base_transcript(&base, patches))
            .or_else(|| base_transcript(&base)),
    };
    if let Some(extra) = case.get("extraTranscript").and_then(Value::as_array) {
        let list: &mut Vec<TranscriptEntry> = transcript.get_or_insert_with(Vec::new);
        list.extend(
            extra
                .iter()
                .map(|e| entry_from_value(e.clone()).expect("entry")),
        );
        list.sort_by_key(TranscriptEntry::seq);
    }
    let expect = case["expect"]
        .as_array()
        .expect("expect")
        .iter()
        .map(|e| {
            (
                e["code"].as_str().expect("code").to_owned(),
                e["pointer"].as_str().expect("pointer").to_owned(),
            )
        })
        .collect();
    Case {
        name: path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned(),
        rule: case["rule"].as_u64().expect("rule") as u8,
        report,
        transcript,
        expect,
    }
}

fn cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(data().join("cases"))
        .expect("cases dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load_case(p)).collect()
}

fn sorted(mut pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs.sort();
    pairs
}

#[test]
fn every_case_yields_exactly_its_expected_violations() {
    let mut failures = Vec::new();
    for case in cases() {
        let got = validate(&case.report, case.transcript.as_deref());
        let got_pairs = sorted(
            got.iter()
                .map(|v| (v.code.as_str().to_owned(), v.pointer.clone()))
                .collect(),
        );
        if got_pairs != sorted(case.expect.clone()) {
            let detail: Vec<String> = got
                .iter()
                .map(|v| format!("  {} {}: {}", v.code, v.pointer, v.message))
                .collect();
            failures.push(format!(
                "{}: expected {:?}\n got:\n{}",
                case.name,
                case.expect,
                detail.join("\n")
            ));
        }
        for v in &got {
            assert_eq!(v.rule, v.code.rule(), "{}", case.name);
            assert!(!v.message.trim().is_empty(), "{}: empty message", case.name);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_rule_and_every_code_has_a_rejection_case() {
    let cases = cases();
    let rejecting: Vec<&Case> = cases.iter().filter(|c| !c.expect.is_empty()).collect();
    let rules: BTreeSet<u8> = rejecting.iter().map(|c| c.rule).collect();
    let table: BTreeSet<u8> = vouch_final_report::rule_table()
        .iter()
        .map(|r| r.number)
        .collect();
    assert_eq!(rules, table, "every rule of the table has a rejection case");
    for case in &rejecting {
        assert!(
            case.expect.iter().any(|(code, _)| ViolationCode::ALL
                .iter()
                .any(|k| k.as_str() == code && k.rule() == case.rule)),
            "{} is filed under rule {} but expects no code of that rule",
            case.name,
            case.rule
        );
    }
    let codes: BTreeSet<&str> = rejecting
        .iter()
        .flat_map(|c| c.expect.iter().map(|(code, _)| code.as_str()))
        .collect();
    for code in ViolationCode::ALL {
        assert!(
            codes.contains(code.as_str()),
            "no rejection case for {code}"
        );
    }
}

#[test]
fn accepted_reports_are_valid_with_and_without_their_transcripts() {
    let mut names: Vec<String> = std::fs::read_dir(data().join("accept"))
        .expect("accept dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.file_stem().expect("stem").to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for name in names {
        let base = data().join(format!("accept/{name}.json"));
        let report = read_json(&base);
        assert_eq!(validate(&report, None), [], "{name} without transcript");
        if let Some(transcript) = base_transcript(&base) {
            assert_eq!(
                validate(&report, Some(&transcript)),
                [],
                "{name} with transcript"
            );
        }
    }
}

#[test]
fn markdown_fixture_is_the_json_fixture_and_round_trips() {
    let json = read_json(&data().join("accept/merged-pr.json"));
    let markdown = read(&data().join("accept/merged-pr.md"));
    let parsed = parse_report(&markdown).expect("markdown report");
    assert_eq!(parsed, json);
    let rendered = render_markdown(&json);
    assert_eq!(parse_report(&rendered).expect("rendered"), json);
    assert_eq!(render_markdown(&parsed), rendered);
    let transcript = base_transcript(&data().join("accept/merged-pr.json"));
    assert_eq!(validate(&parsed, transcript.as_deref()), []);
}

#[test]
fn markdown_legacy_labels_are_rejected_in_the_prose() {
    let markdown = read(&data().join("accept/merged-pr.md"));
    let with_label = markdown.replacen(
        "Disposition: merged",
        "Disposition: merged\n\n**Workspace mutations:** none",
        1,
    );
    let report = parse_report(&with_label).expect("markdown");
    let violations = validate(&report, None);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].code, ViolationCode::LegacyField);
    assert_eq!(violations[0].pointer, "/narrative");
    assert!(violations[0].message.contains("Workspace mutations"));
}

#[test]
fn all_violations_are_reported_at_once() {
    let mut report = read_json(&data().join("accept/merged-pr.json"));
    merge_patch(
        &mut report,
        &json!({"handoff": {"nextAction": null}, "merge": {"targetAncestryProof": null}, "inventory": {"paginationProof": "none"}}),
    );
    let codes: Vec<ViolationCode> = validate(&report, None).iter().map(|v| v.code).collect();
    assert_eq!(
        codes,
        [
            ViolationCode::MissingField,
            ViolationCode::MergeUnproven,
            ViolationCode::InventoryCompletenessUnproven
        ]
    );
}

#[test]
fn a_non_object_report_is_one_invalid_field() {
    let violations = validate(&json!([1, 2]), None);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].code, ViolationCode::InvalidField);
    assert_eq!(violations[0].pointer, "");
}

#[test]
fn a_value_outside_an_enumeration_is_one_violation_naming_the_allowed_values() {
    let mut report = read_json(&data().join("accept/approved-after-simulation.json"));
    report["mutations"]["worktreeIndexMutations"][0]["location"] = json!("/src/widgets");
    let violations = validate(&report, None);
    assert_eq!(violations.len(), 1, "{violations:?}");
    let v = &violations[0];
    assert_eq!(v.code, ViolationCode::InvalidField);
    assert_eq!(v.pointer, "/mutations/worktreeIndexMutations/0/location");
    for allowed in [
        "`main-checkout`",
        "`review-worktree`",
        "`other`",
        "\"/src/widgets\"",
    ] {
        assert!(v.message.contains(allowed), "{}", v.message);
    }
}
