//! The committed JSON Schemas of the review report and the failure document equal what
//! schemars generates from the types.
//!
//! Regenerate with `VOUCH_BLESS=1 cargo test -p vouch-report --test schema_file` (refused
//! under `CI=true`, where a difference always fails).

use std::path::PathBuf;

fn check(file: &str, generated: String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(file);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let bless = std::env::var("VOUCH_BLESS").is_ok_and(|v| v == "1");
    if bless && !in_ci {
        std::fs::write(&path, &generated).expect("write the schema file");
        eprintln!("wrote {}", path.display());
        return;
    }
    panic!(
        "{} differs from the schema generated from the types; run `VOUCH_BLESS=1 cargo test -p vouch-report --test schema_file` and commit the result",
        path.display()
    );
}

#[test]
fn committed_report_schema_matches_the_generated_schema() {
    check(
        "review-report.v2.schema.json",
        vouch_report::report_schema_text(),
    );
}

#[test]
fn committed_failure_schema_matches_the_generated_schema() {
    check(
        "review-failure.v1.schema.json",
        vouch_report::failure_schema_text(),
    );
}

#[test]
fn committed_report_schema_requires_the_opinion_and_refuses_unknown_fields() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/review-report.v2.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema file")).expect("JSON");
    assert_eq!(schema["title"], "ReviewReport");
    assert_eq!(schema["additionalProperties"], false);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for field in [
        "schemaVersion",
        "opinion",
        "findings",
        "failures",
        "limitations",
        "finalReport",
    ] {
        assert!(required.contains(&field), "{field} is not required");
    }
    assert!(!required.contains(&"remoteUrl"), "remoteUrl is optional");
}
