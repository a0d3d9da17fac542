//! Receipt comparison, the one targeted retry and the failure after it (rules 4–6).

use serde_json::json;
use vouch_testkit::openai::{Match, Reply, Rule, ScriptedServer};
use vouch_workspace_tests::{candidate, candidates_reply, citation, decision};

use super::*;

/// The exact failure text of rule 6 for [`small_change`].
const MISMATCH: &str = "bug-review #2 coverage mismatch after retry.\n\
Missing files: CHANGELOG.md, docs/verification/example.md\n\
Unexpected files: ./AGENTS.md";

/// The receipt behind [`MISMATCH`]: `./AGENTS.md` is not `AGENTS.md`.
const WRONG: [&str; 3] = ["AGENTS.md", "./AGENTS.md", "src/lib.rs"];

#[tokio::test(flavor = "multi_thread")]
async fn exact_receipts_from_all_five_reviewers_never_retry() {
    let change = small_change();
    // Duplicates and order do not matter: the comparison removes duplicates first.
    let reordered = [
        "src/lib.rs",
        "docs/verification/example.md",
        "CHANGELOG.md",
        "AGENTS.md",
        "src/lib.rs",
    ];
    let script = panel_script(
        vec![
            Rule::when(first_execution("instructions-review #1"))
                .reply(Reply::content(receipt(true, &reordered))),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "full");
    assert_eq!(report["expectedFiles"], json!(SMALL));
    let labels: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, LABELS);
    for label in LABELS {
        assert_eq!(
            coverage_of(&report, label),
            (true, json!([]), json!([]), false),
            "{label}"
        );
    }
    assert_only_retried(&server, &[]);
    assert!(repairs(&server).is_empty());
    assert!(server.unmatched().is_empty());
    let lines = diagnostics(&out, &SMALL);
    assert!(diagnosed(&lines, "coverage-retry").is_empty());
}

/// A script where `label` first answers `first`, and its retry answers `retry`.
fn retry_script(label: &str, first: String, retry: String) -> vouch_testkit::openai::Script {
    panel_script(
        vec![
            Rule::when(retry_execution(label))
                .named("retry")
                .reply(Reply::content(retry)),
            Rule::when(first_execution(label))
                .named("first")
                .reply(Reply::content(first)),
        ],
        &SMALL,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_files_rerun_only_that_instance_and_the_replacement_wins() {
    let change = small_change();
    let first = candidates_reply(
        json!([candidate("src/lib.rs", 2, 2, "first answer's claim")]),
        true,
        &["AGENTS.md", "src/lib.rs"],
    );
    let retry = candidates_reply(
        json!([candidate("src/lib.rs", 2, 2, "replacement claim")]),
        true,
        &SMALL,
    );
    let decisions = json!({"decisions": [
        decision("bug-review #1/0", "rejected", json!([citation("src/lib.rs", 2, 2)]), None),
        decision("bug-review #2/0", "rejected", json!([citation("src/lib.rs", 2, 2)]), None),
    ]});
    let rules = vec![
        Rule::when(retry_execution("bug-review #2"))
            .named("retry")
            .reply(Reply::content(retry)),
        Rule::when(first_execution("bug-review #2"))
            .named("first")
            .reply(Reply::content(first)),
        // bug-review #1 proposes a candidate of its own.
        Rule::when(first_execution("bug-review #1")).reply(Reply::content(candidates_reply(
            json!([candidate("src/lib.rs", 2, 2, "sibling claim")]),
            true,
            &SMALL,
        ))),
        Rule::when(Match::user_contains("Instance: verifier\n"))
            .named("verifier")
            .reply(Reply::content(decisions.to_string())),
    ];
    let server = ScriptedServer::start(panel_script(rules, &SMALL)).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "full");
    assert_only_retried(&server, &["bug-review #2"]);
    let s = stage(&report, "bug-review #2");
    assert_eq!(s["retried"], true);
    assert_eq!(
        s["firstCoverage"],
        json!({"complete": false, "reportedIncomplete": false,
               "missingFiles": ["CHANGELOG.md", "docs/verification/example.md"], "unexpectedFiles": []})
    );
    assert_eq!(
        coverage_of(&report, "bug-review #2"),
        (true, json!([]), json!([]), true)
    );
    // The replacement replaced the original: only its candidate went to verification.
    let claims: Vec<(&str, &str)> = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["candidate"]["id"].as_str().unwrap(),
                c["candidate"]["claim"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        claims,
        [
            ("bug-review #1/0", "sibling claim"),
            ("bug-review #2/0", "replacement claim")
        ]
    );
    // The retry is the same reviewer execution plus the exact mismatch.
    let first = &server.served_by("first")[0];
    let retry = &server.served_by("retry")[0];
    assert_eq!(retry.system(), first.system(), "same role prompt");
    assert_eq!(retry.tool_names(), first.tool_names(), "same tools");
    assert!(!retry.tool_names().is_empty());
    assert_eq!(retry.body["model"], "scripted", "same model");
    let retry_task = task(retry);
    assert!(
        retry_task.starts_with(task(first).trim_end()),
        "the original task and change summary come first"
    );
    for needle in [
        "Missing files (inspect these now): [\"CHANGELOG.md\",\"docs/verification/example.md\"]\n",
        "<expected-files>\n[\"AGENTS.md\",\"CHANGELOG.md\",\"docs/verification/example.md\",\"src/lib.rs\"]\n</expected-files>",
        "first answer's claim",
        "Inspect the missing files, re-check coverage, keep the findings that are still valid",
    ] {
        assert!(
            retry_task.contains(needle),
            "{needle:?} not in\n{retry_task}"
        );
    }
    // No empty group is stated: nothing unexpected was listed.
    assert!(!retry_task.contains("Unexpected files"), "{retry_task}");
    let lines = diagnostics(&out, &SMALL);
    assert_eq!(diagnosed(&lines, "coverage-retry"), ["bug-review #2"]);
    assert!(server.unmatched().is_empty());
}

/// Runs a retry of `label` whose first receipt is `first` and whose retry is exact;
/// returns the report after checking that only `label` was rerun.
async fn retried_once(label: &str, first: String) -> (serde_json::Value, String) {
    let change = small_change();
    let server = ScriptedServer::start(retry_script(label, first, receipt(true, &SMALL))).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_only_retried(&server, &[label]);
    assert!(server.unmatched().is_empty());
    let lines = diagnostics(&out, &SMALL);
    assert_eq!(diagnosed(&lines, "coverage-retry"), [label]);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(
        coverage_of(&report, label),
        (true, json!([]), json!([]), true)
    );
    (report, task(&server.served_by("retry")[0]))
}

#[tokio::test(flavor = "multi_thread")]
async fn unexpected_file_reruns_only_that_instance() {
    let mut files = SMALL.to_vec();
    files.push("./AGENTS.md");
    let (report, retry_task) = retried_once("instructions-review #1", receipt(true, &files)).await;
    assert_eq!(
        stage(&report, "instructions-review #1")["firstCoverage"],
        json!({"complete": false, "reportedIncomplete": false, "missingFiles": [], "unexpectedFiles": ["./AGENTS.md"]})
    );
    assert!(retry_task.contains(
        "Unexpected files (not part of this change's list; remove them): [\"./AGENTS.md\"]\n"
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_false_reruns_only_that_instance() {
    let (report, retry_task) = retried_once("objective-review #1", receipt(false, &SMALL)).await;
    assert_eq!(
        stage(&report, "objective-review #1")["firstCoverage"],
        json!({"complete": false, "reportedIncomplete": true, "missingFiles": [], "unexpectedFiles": []})
    );
    assert!(retry_task.contains("Your previous answer said coverage.complete: false."));
}

/// The rule-6 scenario: bug-review #2 mismatches twice while bug-review #1 proposes a
/// candidate.
fn second_mismatch_script() -> vouch_testkit::openai::Script {
    panel_script(
        vec![
            Rule::when(retry_execution("bug-review #2"))
                .named("retry")
                .reply(Reply::content(receipt(true, &WRONG))),
            Rule::when(first_execution("bug-review #2"))
                .named("first")
                .reply(Reply::content(receipt(true, &WRONG))),
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(candidates_reply(
                json!([candidate("src/lib.rs", 2, 2, "would be a finding")]),
                true,
                &SMALL,
            ))),
            Rule::when(Match::user_contains("Instance: verifier\n"))
                .named("verifier")
                .always(Reply::status(500)),
        ],
        &SMALL,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn second_mismatch_fails_with_the_exact_message_and_publishes_nothing() {
    let change = small_change();
    let server = ScriptedServer::start(second_mismatch_script()).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["findings"], json!([]), "nothing is published");
    assert_eq!(report["messages"], json!([MISMATCH]));
    assert_eq!(
        report["failures"],
        json!([{"kind": "coverage-mismatch", "stage": "bug-review #2", "message": MISMATCH}])
    );
    let s = stage(&report, "bug-review #2");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["problem"], MISMATCH);
    assert_eq!(
        coverage_of(&report, "bug-review #2"),
        (
            false,
            json!(["CHANGELOG.md", "docs/verification/example.md"]),
            json!(["./AGENTS.md"]),
            true
        )
    );
    assert!(
        server.served_by("verifier").is_empty(),
        "no verification runs"
    );
    assert_only_retried(&server, &["bug-review #2"]);
    let lines = diagnostics(&out, &SMALL);
    assert_eq!(diagnosed(&lines, "coverage-retry"), ["bug-review #2"]);
    assert_eq!(diagnosed(&lines, "coverage-mismatch"), ["bug-review #2"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn second_mismatch_is_printed_on_stdout_and_kept_in_the_markdown_report() {
    let change = small_change();
    let server = ScriptedServer::start(second_mismatch_script()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.md");
    let path_arg = path.display().to_string();
    let out = review(
        &change,
        &server,
        &["--format", "markdown", "--out", &path_arg],
    )
    .await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!("{MISMATCH}\n")),
        "{}",
        out.stdout
    );
    diagnostics(&out, &SMALL);
    let markdown = std::fs::read_to_string(&path).unwrap();
    assert!(
        markdown.contains(&format!("```text\n{MISMATCH}\n```")),
        "{markdown}"
    );
    // Per-instance coverage: label, model, status, complete, missing, unexpected, retried
    // (`#` escaped, so a label never links an issue where the report is posted).
    for row in [
        r"| instructions-review \#1 | scripted | accepted | true | 0 | 0 | no |",
        r"| instructions-review \#2 | scripted | accepted | true | 0 | 0 | no |",
        r"| bug-review \#1 | scripted | accepted | true | 0 | 0 | no |",
        r"| bug-review \#2 | scripted | failed | false | 2 | 1 | yes |",
        r"| objective-review \#1 | scripted | accepted | true | 0 | 0 | no |",
    ] {
        assert!(markdown.contains(row), "{row:?} not in\n{markdown}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn incomplete_after_retry_is_reported_as_incomplete_coverage() {
    let change = small_change();
    let script = retry_script(
        "objective-review #1",
        receipt(false, &SMALL),
        receipt(false, &SMALL),
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(
        report["messages"],
        json!([
            "objective-review #1 coverage mismatch after retry.\nIncomplete coverage: the reviewer returned complete: false."
        ])
    );
    assert_eq!(
        coverage_of(&report, "objective-review #1"),
        (false, json!([]), json!([]), true)
    );
    assert_only_retried(&server, &["objective-review #1"]);
}

/// Rule 6 holds whatever ended the retry: when the turn budget forces the retry's final
/// answer and that receipt still mismatches, the instance fails and nothing is published.
#[tokio::test(flavor = "multi_thread")]
async fn budget_forced_retry_that_still_mismatches_fails_the_instance() {
    let change = small_change();
    let script = panel_script(
        vec![
            Rule::when(retry_execution("bug-review #2").and(Match::has_tools(false)))
                .named("forced")
                .reply(Reply::content(receipt(true, &["src/lib.rs"]))),
            Rule::when(retry_execution("bug-review #2").and(Match::has_tools(true)))
                .named("retry turn")
                .always(Reply::tool_call(
                    "read_file",
                    r#"{"path": "src/lib.rs", "start_line": 1, "end_line": 3}"#,
                )),
            Rule::when(first_execution("bug-review #2"))
                .reply(Reply::content(receipt(true, &WRONG))),
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(candidates_reply(
                json!([candidate("src/lib.rs", 2, 2, "would be a finding")]),
                true,
                &SMALL,
            ))),
            Rule::when(Match::user_contains("Instance: verifier\n"))
                .named("verifier")
                .always(Reply::status(500)),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["findings"], json!([]));
    let message = "bug-review #2 coverage mismatch after retry.\n\
                   Missing files: AGENTS.md, CHANGELOG.md, docs/verification/example.md";
    assert_eq!(report["messages"], json!([message]));
    let s = stage(&report, "bug-review #2");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["budgetHit"], "turns");
    assert_eq!(s["forcedSynthesis"], true);
    // The panel's budget: 12 tool turns, then one forced, tool-free answer.
    assert_eq!(server.served_by("retry turn").len(), 12);
    assert_eq!(server.served_by("forced").len(), 1);
    assert!(server.served_by("verifier").is_empty());
}
