//! The committed JSON Schema file equals what schemars generates from the types.
//!
//! Regenerate with `VOUCH_BLESS=1 cargo test -p vouch-final-report --test schema_file`
//! (refused under `CI=true`, where a difference always fails).

use std::path::PathBuf;

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/review-final-report.v1.schema.json")
}

#[test]
fn committed_schema_matches_the_generated_schema() {
    let generated = vouch_final_report::json_schema_text();
    let path = schema_path();
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
        "{} differs from the schema generated from the types; run `VOUCH_BLESS=1 cargo test -p vouch-final-report --test schema_file` and commit the result",
        path.display()
    );
}

#[test]
fn committed_schema_is_versioned_and_requires_every_section() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).expect("schema file"))
            .expect("JSON");
    assert_eq!(schema["$id"], vouch_final_report::SCHEMA_ID);
    assert_eq!(
        schema["properties"]["schemaVersion"]["$ref"],
        "#/$defs/SchemaVersion"
    );
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for section in [
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
    ] {
        assert!(required.contains(&section), "{section} is not required");
    }
    assert!(!required.contains(&"reviewedHeadSha"));
    let ledger = &schema["$defs"]["MutationLedger"];
    assert_eq!(ledger["additionalProperties"], false);
    assert_eq!(
        ledger["required"]
            .as_array()
            .expect("ledger required")
            .len(),
        9
    );
}
