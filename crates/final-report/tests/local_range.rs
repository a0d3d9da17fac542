//! vouch's own local-range report: valid for every outcome, explicit not-applicable
//! values, and the committed fixture matches the builder.

use std::path::PathBuf;

use serde_json::Value;
use vouch_final_report::model::{Coverage, Disposition, MutationCategory, NotApplicableOr};
use vouch_final_report::{
    LocalRangeReview, ReviewOutcome, ViolationCode, checked_local_range_review_report,
    local_range_review_report, validate,
};

const BASE: &str = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";
const HEAD: &str = "c0ffee1234567890abcdef1234567890abcdef12";

fn input(outcome: ReviewOutcome, narrative: &str) -> LocalRangeReview {
    LocalRangeReview {
        repository: "/src/widgets".to_owned(),
        base_sha: BASE.to_owned(),
        head_sha: HEAD.to_owned(),
        files_reviewed: vec!["src/round.rs".to_owned(), "tests/round.rs".to_owned()],
        outcome,
        narrative: narrative.to_owned(),
        command_line: format!("vouch review --base {BASE} --head {HEAD} --format json"),
    }
}

#[test]
fn builder_output_validates_for_every_outcome() {
    let table = [
        (
            ReviewOutcome::NothingToReview,
            "The range has no changed files; no model was called.",
            Disposition::ReviewReported,
        ),
        (
            ReviewOutcome::Aborted,
            "The review was cancelled before it completed.",
            Disposition::Stopped,
        ),
        (
            ReviewOutcome::Incomplete,
            "The review is incomplete: bug-review #1 coverage mismatch after retry. Nothing was published.",
            Disposition::Blocked,
        ),
        (
            ReviewOutcome::Findings(Coverage::Full),
            "vouch found 2 verified findings with full coverage.",
            Disposition::ReviewReported,
        ),
        (
            ReviewOutcome::Findings(Coverage::Limited),
            "vouch found 1 verified finding; coverage is limited by a source lookup gap.",
            Disposition::ReviewReported,
        ),
        (
            ReviewOutcome::NoFindings(Coverage::Full),
            "No verified findings; coverage is full.",
            Disposition::ReviewReported,
        ),
        (
            ReviewOutcome::NoFindings(Coverage::Limited),
            "No verified findings; coverage is limited.",
            Disposition::ReviewReported,
        ),
    ];
    for (outcome, narrative, disposition) in table {
        let report = checked_local_range_review_report(&input(outcome, narrative))
            .unwrap_or_else(|e| panic!("{outcome:?}: {e}"));
        assert_eq!(report.handoff.disposition, disposition, "{outcome:?}");
        assert_eq!(report.reviewed_head_sha, None);
        assert!(matches!(report.merge, NotApplicableOr::NotApplicable(_)));
        assert!(matches!(
            report.inventory,
            NotApplicableOr::NotApplicable(_)
        ));
        assert!(matches!(
            report.linked_issues,
            NotApplicableOr::NotApplicable(_)
        ));
        assert!(matches!(
            report.target.pull_request,
            NotApplicableOr::NotApplicable(_)
        ));
        for category in MutationCategory::ALL {
            let entries = report.mutations.category(category);
            if category == MutationCategory::ReadOnlyDiagnostics {
                assert_eq!(entries.len(), 1);
            } else {
                assert!(entries.is_empty(), "{category:?}");
            }
        }
    }
}

#[test]
fn outcome_strings_parse_as_vouch_spells_them() {
    let table = [
        ("nothing-to-review", Some(ReviewOutcome::NothingToReview)),
        ("aborted", Some(ReviewOutcome::Aborted)),
        ("incomplete", Some(ReviewOutcome::Incomplete)),
        ("findings", Some(ReviewOutcome::Findings(Coverage::Full))),
        (
            "findings:limited",
            Some(ReviewOutcome::Findings(Coverage::Limited)),
        ),
        (
            "no-findings:full",
            Some(ReviewOutcome::NoFindings(Coverage::Full)),
        ),
        ("no-findings:partial", None),
        ("clean", None),
    ];
    for (text, expected) in table {
        assert_eq!(text.parse::<ReviewOutcome>().ok(), expected, "{text}");
    }
}

#[test]
fn a_narrative_claiming_a_merge_fails_the_self_check() {
    let err = checked_local_range_review_report(&input(
        ReviewOutcome::NoFindings(Coverage::Full),
        "No findings, so I merged the branch.",
    ))
    .expect_err("self-check must fail");
    let codes: Vec<ViolationCode> = err.violations.iter().map(|v| v.code).collect();
    assert!(codes.contains(&ViolationCode::MergeUnproven), "{codes:?}");
    assert!(err.to_string().contains("MERGE_UNPROVEN"));
}

#[test]
fn committed_local_range_fixture_matches_the_builder() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/final-report/accept/local-range.json");
    let report = local_range_review_report(&input(
        ReviewOutcome::NoFindings(Coverage::Full),
        "vouch reviewed the range 1a2b3c4..c0ffee1 and found no verified findings; coverage is full.\n\nFiles reviewed: src/round.rs, tests/round.rs",
    ));
    let mut text = serde_json::to_string_pretty(&report).expect("serialize");
    text.push('\n');
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != text {
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        if std::env::var("VOUCH_BLESS").is_ok_and(|v| v == "1") && !in_ci {
            std::fs::write(&path, &text).expect("write fixture");
        } else {
            panic!(
                "{} differs from the builder output; regenerate with VOUCH_BLESS=1",
                path.display()
            );
        }
    }
    let value: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(validate(&value, None), []);
}

#[test]
fn a_review_where_every_file_was_excluded_validates_with_the_diff_review_not_run() {
    let mut only_excluded = input(
        ReviewOutcome::NoFindings(Coverage::Limited),
        "No changed file could be reviewed: every one was excluded. Coverage is limited.",
    );
    only_excluded.files_reviewed.clear();
    let report = serde_json::to_value(local_range_review_report(&only_excluded)).unwrap();
    assert_eq!(report["diffReview"]["status"], "not-run");
    assert_eq!(validate(&report, None), vec![]);
}
