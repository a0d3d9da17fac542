//! docs/final-report.md agrees with the schema: its generated field reference is the
//! one [`vouch_final_report::field_reference`] derives from the schema (types and
//! allowed values), and the hand-written overview names every top-level section.
//!
//! Regenerate the reference with `VOUCH_BLESS=1 cargo test -p vouch-final-report --test
//! docs_fields` (refused under `CI=true`, where a difference always fails).

use std::path::PathBuf;

const BEGIN: &str = "<!-- generated from the schema: field reference -->\n";
const END: &str = "<!-- end of the generated field reference -->";

fn docs_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/final-report.md")
}

/// The docs text split around the generated block: (before, block, after).
fn split(docs: &str) -> (&str, &str, &str) {
    let start = docs
        .find(BEGIN)
        .expect("the docs carry the generated block")
        + BEGIN.len();
    let end = start + docs[start..].find(END).expect("the generated block ends");
    (&docs[..start], &docs[start..end], &docs[end..])
}

#[test]
fn the_docs_field_reference_is_generated_from_the_schema() {
    let path = docs_path();
    let docs = std::fs::read_to_string(&path).expect("docs/final-report.md");
    let (before, block, after) = split(&docs);
    let generated = vouch_final_report::field_reference();
    if block == generated {
        return;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let bless = std::env::var("VOUCH_BLESS").is_ok_and(|v| v == "1");
    if bless && !in_ci {
        std::fs::write(&path, format!("{before}{generated}{after}")).expect("write the docs");
        eprintln!("wrote {}", path.display());
        return;
    }
    panic!(
        "the field reference in {} differs from the schema; run `VOUCH_BLESS=1 cargo test -p vouch-final-report --test docs_fields` and commit the result",
        path.display()
    );
}

#[test]
fn the_overview_table_names_every_section_of_the_schema() {
    let docs = std::fs::read_to_string(docs_path()).expect("docs/final-report.md");
    let schema = vouch_final_report::json_schema();
    let sections = schema["properties"].as_object().expect("properties");
    for name in sections.keys() {
        assert!(
            docs.contains(&format!("| `{name}` |")),
            "the overview table has no row for `{name}`"
        );
    }
}

#[test]
fn every_enumeration_value_of_the_schema_is_in_the_reference() {
    let reference = vouch_final_report::field_reference();
    let rows = vouch_final_report::field_rows(&vouch_final_report::json_schema());
    let location = rows
        .iter()
        .find(|r| r.path == "mutations.worktreeIndexMutations[].location")
        .expect("a mutation entry's location is documented");
    for value in ["main-checkout", "review-worktree", "other"] {
        assert!(
            location.kind.contains(&format!("`{value}`")),
            "{location:?}"
        );
    }
    let terminal = rows
        .iter()
        .find(|r| r.path == "concurrency.terminalDisposition")
        .expect("terminalDisposition is documented");
    assert_eq!(terminal.kind, "boolean or non-empty string");
    assert!(reference.contains("| `commands[].phase` | one of `pre-review-diagnostics`"));
}

/// The rows of the docs' rule table: number, rule sentence, codes, and whether the
/// "What the transcript must show" column says anything.
fn docs_rules(docs: &str) -> Vec<(u8, String, Vec<String>, bool)> {
    let start = docs.find("### The rules").expect("the rules section");
    docs[start..]
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.strip_prefix("| ")?.split(" | ").collect();
            let number: u8 = cells.first()?.parse().ok()?;
            let codes = cells[2]
                .split(", ")
                .map(|c| c.trim_matches('`').to_owned())
                .collect();
            let transcript = cells.last()?.trim_end_matches(" |").trim() != "—";
            Some((number, cells[1].to_owned(), codes, transcript))
        })
        .collect()
}

#[test]
fn the_docs_rule_table_is_the_rule_table() {
    let docs = std::fs::read_to_string(docs_path()).expect("docs/final-report.md");
    let documented = docs_rules(&docs);
    let table: Vec<(u8, String, Vec<String>, bool)> = vouch_final_report::rule_table()
        .into_iter()
        .map(|r| {
            (
                r.number,
                r.sentence.to_owned(),
                r.codes.iter().map(|c| c.as_str().to_owned()).collect(),
                r.evidence == vouch_final_report::Evidence::ReportAndTranscript,
            )
        })
        .collect();
    assert!(!documented.is_empty(), "the docs' rule table was not found");
    assert_eq!(documented, table);
}
