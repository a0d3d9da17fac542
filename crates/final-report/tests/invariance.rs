//! A verdict depends on what the session did, not on what its directories are called
//! or in which order it ran commands that do not depend on each other.
//!
//! Generated sessions start from the accepted `approved-after-simulation` fixture: the
//! review worktree gets a generated name, and a generated set of independent commands
//! (read-only diagnostics, and optionally an unrecorded file edit) runs in the
//! worktree between the diff review and the merge simulation, in a generated order.
//! Renaming the worktree or reordering those commands never changes the verdict, and
//! the verdict is a rejection exactly when the unrecorded edit is among them. Every
//! phrasing the claim grammar has for one claim is judged alike.

use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::{Value, json};
use vouch_final_report::{entry_from_value, validate};

const BASE_NAME: &str = "widgets-pr42";

/// Independent commands the session may run in the review worktree: reads, and one
/// edit that the report's ledger does not record.
const READS: &[&str] = &[
    "git status --porcelain",
    "git log --oneline -5",
    "git show --stat HEAD",
    "ls src",
    "cat README.md",
    "grep -rn round src",
];
const UNRECORDED_EDIT: &str = "touch NOTES.md";

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/final-report/accept")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report and transcript with the worktree renamed, every seq multiplied by 100,
/// and `extra` commands run (seqs 901, 902, …) between seq 9 and seq 10.
fn session(worktree: &str, extra: &[&str]) -> (Value, Vec<Value>) {
    let rename = |text: String| text.replace(BASE_NAME, worktree);
    let mut report: Value =
        serde_json::from_str(&rename(fixture("approved-after-simulation.json"))).expect("report");
    let mut lines: Vec<Value> = rename(fixture("approved-after-simulation.transcript.jsonl"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    for line in &mut lines {
        line["seq"] = json!(line["seq"].as_u64().expect("seq") * 100);
    }
    let commands = report["commands"].as_array_mut().expect("commands");
    for entry in commands.iter_mut() {
        if let Some(seq) = entry["seq"].as_u64() {
            entry["seq"] = json!(seq * 100);
        }
    }
    for (i, command) in extra.iter().enumerate() {
        let seq = 901 + i as u64;
        lines.push(json!({"seq": seq, "kind": "command", "command": command, "cwd": format!("/src/{worktree}")}));
        commands.push(json!({"command": command, "location": "review-worktree", "phase": "review", "seq": seq}));
    }
    lines.sort_by_key(|l| l["seq"].as_u64());
    (report, lines)
}

/// The verdict as sorted `(code, pointer)` pairs.
fn verdict(worktree: &str, extra: &[&str]) -> Vec<(String, String)> {
    let (report, lines) = session(worktree, extra);
    let transcript: Vec<_> = lines
        .into_iter()
        .map(|l| entry_from_value(l).expect("entry"))
        .collect();
    let mut out: Vec<(String, String)> = validate(&report, Some(&transcript))
        .into_iter()
        .map(|v| (v.code.as_str().to_owned(), v.pointer))
        .collect();
    out.sort();
    out
}

fn extra_commands() -> impl Strategy<Value = (Vec<&'static str>, bool)> {
    (
        proptest::sample::subsequence(READS.to_vec(), 0..=READS.len()),
        any::<bool>(),
    )
        .prop_map(|(mut commands, edit)| {
            if edit {
                commands.push(UNRECORDED_EDIT);
            }
            (commands, edit)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn renaming_the_worktree_or_reordering_independent_commands_keeps_the_verdict(
        (commands, edit) in extra_commands(),
        name in "[a-z][a-z0-9-]{2,12}",
        order in any::<proptest::sample::Index>(),
    ) {
        prop_assume!(!name.ends_with('-') && !BASE_NAME.contains(name.as_str()));
        let base = verdict(BASE_NAME, &commands);
        let mut shuffled = commands.clone();
        if !shuffled.is_empty() {
            let k = order.index(shuffled.len());
            shuffled.rotate_left(k);
            shuffled.reverse();
        }
        prop_assert_eq!(verdict(&name, &shuffled), base.clone());
        prop_assert_eq!(!base.is_empty(), edit, "{:?}", base);
    }
}

/// Phrasings of one claim in the grammar: a ready state, and this session's merge.
const READY_SYNONYMS: &[&str] = &[
    "The change is ready to merge.",
    "It is safe to merge.",
    "Honestly it is good to go.",
    "LGTM.",
    "The patch is mergeable as it stands.",
    "On its merits it is safe to land.",
    "Nothing blocks it.",
];

/// The verdict of the accepted stopped collision report with `sentence` appended to
/// its narrative.
fn stopped_with(sentence: &str) -> Vec<(String, String)> {
    let mut report: Value = serde_json::from_str(&fixture("collision-stop.json")).expect("report");
    let narrative = format!(
        "{}\n\n{sentence}",
        report["narrative"].as_str().expect("narrative")
    );
    report["narrative"] = Value::String(narrative);
    let transcript: Vec<_> = fixture("collision-stop.transcript.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| entry_from_value(serde_json::from_str(l).expect("line")).expect("entry"))
        .collect();
    let mut out: Vec<(String, String)> = validate(&report, Some(&transcript))
        .into_iter()
        .map(|v| (v.code.as_str().to_owned(), v.pointer))
        .collect();
    out.sort();
    out
}

#[test]
fn rewording_a_claim_by_a_synonym_of_the_grammar_keeps_the_verdict() {
    // Every phrasing, exhaustively: a ready claim in a stopped handoff's narrative is
    // rejected the same way in any wording of the grammar.
    for sentence in READY_SYNONYMS {
        assert_eq!(
            stopped_with(sentence),
            vec![(
                "NARRATIVE_HANDOFF_MISMATCH".to_owned(),
                "/handoff/disposition".to_owned()
            )],
            "{sentence}"
        );
    }
}
