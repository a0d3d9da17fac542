//! Rule 19 over every combination of what a report claims of the reviewed change
//! (disposition, review state, reviewed head) and what its diff review says (status,
//! coverage): the rule's code appears exactly when a claim of a reviewed change stands
//! on anything but a completed review with full coverage, whatever else the report says.
//! Also: what a report's test counts prove when they are not whole numbers.

use std::path::PathBuf;

use serde_json::{Value, json};
use vouch_final_report::validate;

const DISPOSITIONS: &[&str] = &[
    "merged",
    "ready-to-merge",
    "ready-to-approve",
    "approved",
    "changes-requested",
    "commented",
    "review-reported",
    "blocked",
    "stopped",
];
const STATES: &[&str] = &["APPROVED", "REQUEST_CHANGES", "COMMENT", "PENDING", "NONE"];
const STATUSES: &[&str] = &["passed", "findings", "incomplete", "aborted", "not-run"];
const COVERAGES: &[Option<&str>] = &[Some("full"), Some("limited"), None];

fn base() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/final-report/accept/local-range.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("report")
}

/// Whether the report makes a claim rule 19 judges, and whether it stands.
fn expected(
    disposition: &str,
    state: &str,
    status: &str,
    coverage: Option<&str>,
    head: bool,
) -> bool {
    let acts = matches!(
        disposition,
        "merged" | "ready-to-merge" | "ready-to-approve" | "approved"
    ) || state == "APPROVED";
    let full = coverage == Some("full");
    let completed = matches!(status, "passed" | "findings");
    (acts && !(completed && full)) || (head && !(status == "passed" && full))
}

#[test]
fn a_reviewed_claim_stands_only_on_a_completed_review_with_full_coverage() {
    let base = base();
    let head_sha = base["target"]["candidateHeadSha"].clone();
    let mut checked = 0;
    for disposition in DISPOSITIONS {
        for state in STATES {
            for status in STATUSES {
                for coverage in COVERAGES {
                    for head in [false, true] {
                        let mut report = base.clone();
                        report["handoff"]["disposition"] = json!(disposition);
                        report["review"]["state"] = json!(state);
                        report["diffReview"]["status"] = json!(status);
                        match coverage {
                            Some(c) => report["diffReview"]["coverage"] = json!(c),
                            None => {
                                report["diffReview"]
                                    .as_object_mut()
                                    .unwrap()
                                    .remove("coverage");
                            }
                        }
                        if head {
                            report["reviewedHeadSha"] = head_sha.clone();
                        }
                        let flagged = validate(&report, None)
                            .iter()
                            .any(|v| v.code.as_str() == "REVIEWED_WITHOUT_FULL_REVIEW");
                        assert_eq!(
                            flagged,
                            expected(disposition, state, status, *coverage, head),
                            "{disposition} {state} {status} {coverage:?} head={head}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 9 * 5 * 5 * 3 * 2);
}

/// Counts that are not whole numbers are named at the count itself, by its type, and the
/// pass claim they cannot prove says so (not "no counts are recorded", nor "not of type
/// null", which an optional field's other branch would say).
#[test]
fn counts_that_are_not_whole_numbers_are_named_as_such() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/final-report/accept/merged-pr.json");
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("report");
    for bad in [json!(41.5), json!(-1), json!("212")] {
        report["validation"]["counts"]["passed"] = bad.clone();
        let messages: Vec<String> = validate(&report, None)
            .into_iter()
            .map(|v| format!("{} {} {}", v.code.as_str(), v.pointer, v.message))
            .collect();
        let all = messages.join("\n");
        assert!(
            all.contains("INVALID_FIELD /validation/counts/passed"),
            "{bad}: {all}"
        );
        assert!(!all.contains("\"null\""), "{bad}: {all}");
        assert!(
            all.contains("the recorded test counts are not whole non-negative numbers"),
            "{bad}: {all}"
        );
    }
}
