//! Report/transcript pairs written from docs/final-report.md and the schema alone, by
//! someone who never read the fixtures or the code: 15 correct reports in varied
//! wording and 15 reports that each break one rule in wording the docs do not show.
//!
//! Each directory under tests/data/final-report/pairs holds `report.json`,
//! `transcript.jsonl` and `expected.json`: the intended verdict, what the pair aims at,
//! and the exact `{code, pointer}` violations (empty for a correct report).

use std::path::PathBuf;

use serde_json::Value;
use vouch_final_report::{parse_report, parse_transcript, validate};

fn pairs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/final-report/pairs")
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_pair_is_judged_as_intended() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(pairs_dir())
        .expect("pairs dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 30, "{dirs:?}");
    let (mut accepted, mut failures) = (0, Vec::new());
    for dir in &dirs {
        let report = parse_report(&read(&dir.join("report.json"))).expect("report");
        let transcript = parse_transcript(&read(&dir.join("transcript.jsonl"))).expect("log");
        let expected: Value =
            serde_json::from_str(&read(&dir.join("expected.json"))).expect("expected.json");
        let intended = expected["intended"].as_str().expect("intended");
        let mut want: Vec<(String, String)> = expected["expect"]
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
        want.sort();
        assert_eq!(intended == "accept", want.is_empty(), "{}", dir.display());
        accepted += usize::from(want.is_empty());
        let got = validate(&report, Some(&transcript));
        let mut got_pairs: Vec<(String, String)> = got
            .iter()
            .map(|v| (v.code.as_str().to_owned(), v.pointer.clone()))
            .collect();
        got_pairs.sort();
        if got_pairs != want {
            let detail: Vec<String> = got
                .iter()
                .map(|v| format!("  {} {}: {}", v.code, v.pointer, v.message))
                .collect();
            failures.push(format!(
                "{}: expected {want:?}\n got:\n{}",
                dir.display(),
                detail.join("\n")
            ));
        }
    }
    assert_eq!(accepted, 15, "15 correct reports and 15 violating ones");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
