//! `vouch schema NAME` prints exactly the committed schema of each document, so a user
//! validating a saved report with their own tools uses what vouch checks against.

use vouch_workspace_tests::vouch_bin;

fn schema_output(name: &str) -> String {
    let output = std::process::Command::new(vouch_bin())
        .args(["schema", name])
        .output()
        .expect("run vouch schema");
    assert_eq!(output.status.code(), Some(0), "vouch schema {name}");
    String::from_utf8(output.stdout).expect("UTF-8 schema")
}

fn committed(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).expect("committed schema")
}

#[test]
fn each_schema_is_the_committed_file() {
    for (name, path) in [
        (
            "report",
            "crates/report/schema/review-report.v2.schema.json",
        ),
        (
            "failure",
            "crates/report/schema/review-failure.v1.schema.json",
        ),
        (
            "final-report",
            "crates/final-report/schema/review-final-report.v1.schema.json",
        ),
    ] {
        assert_eq!(schema_output(name), committed(path), "{name}");
    }
}

#[test]
fn an_unknown_schema_is_a_usage_error() {
    let output = std::process::Command::new(vouch_bin())
        .args(["schema", "sarif"])
        .output()
        .expect("run vouch schema");
    assert_eq!(output.status.code(), Some(3));
}
