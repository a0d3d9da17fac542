//! Extraction, then one isolated repair (rule 3), seen in the HTTP requests the
//! scripted server received.

use serde_json::json;
use vouch_testkit::openai::{Match, Reply, Rule, ScriptedServer};
use vouch_workspace_tests::{candidate, candidates_reply, citation, decision};

use super::*;

const SMALL_LIST: &str = "<expected-files>\n[\"AGENTS.md\",\"CHANGELOG.md\",\"docs/verification/example.md\",\"src/lib.rs\"]\n</expected-files>";

/// A repaired receipt for [`small_change`].
fn repaired(complete: bool, files: &[&str]) -> String {
    json!({"candidates": [], "coverage": {"complete": complete, "reviewedFiles": files},
           "summary": "repaired"})
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn repair_gets_contract_list_reply_and_error_but_no_tools_or_snapshot_path() {
    let change = small_change();
    // Its own receipt is exact, but it carries a key the contract does not know.
    let prose = format!(
        "Findings of bug-review [marker-b1]: none. {}",
        json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": SMALL},
               "notes": "all four read"})
    );
    let script = panel_script(
        vec![
            Rule::when(repair_of("[marker-b1]"))
                .named("repair")
                .reply(Reply::content(repaired(true, &SMALL))),
            Rule::when(first_execution("bug-review #1"))
                .named("first")
                .reply(Reply::content(prose.clone())),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    // The prior reply's own receipt was exact: the repaired receipt stands, no retry.
    assert_eq!(
        coverage_of(&report, "bug-review #1"),
        (true, json!([]), json!([]), false)
    );
    assert_eq!(stage(&report, "bug-review #1")["repaired"], true);
    assert_eq!(stage(&report, "bug-review #1")["receiptDowngraded"], false);
    assert_only_retried(&server, &[]);

    let all = repairs(&server);
    assert_eq!(all.len(), 1, "exactly one isolated repair");
    let request = &all[0];
    assert_eq!(request.rule_label(), Some("repair"));
    // Isolated: a system and a user message, nothing of the reviewer's conversation.
    assert_eq!(request.messages().len(), 2, "{:#}", request.body);
    assert!(!request.has_tools(), "no tools");
    assert!(request.body.get("tools").is_none(), "{:#}", request.body);
    let user = task(request);
    assert!(
        user.contains(SMALL_LIST),
        "the exact canonical list: {user}"
    );
    assert!(
        user.contains(&format!("<prior-reply>\n{prose}\n</prior-reply>")),
        "{user}"
    );
    assert!(user.contains("## Parser error\n"), "{user}");
    assert!(
        user.contains("\"reviewedFiles\"") && !user.contains("fullCoverageQuote"),
        "the repair contract: {user}"
    );
    assert!(
        !user.contains("Instance: ") && !user.contains("## Change"),
        "no reviewer task: {user}"
    );
    let schema = &request.response_format().expect("structured outputs")["json_schema"]["schema"];
    assert!(schema["properties"]["coverage"].is_object(), "{schema:#}");
    let repo_path = change.repo.path().display().to_string();
    assert!(
        !request.raw_body.contains(&repo_path),
        "no snapshot path in the repair request"
    );
    assert!(server.unmatched().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn repaired_full_coverage_of_a_prose_reply_is_downgraded_and_retried() {
    let change = small_change();
    let prose = "bug-review notes [marker-b1]: answer() changed from 41 to 42.";
    let script = panel_script(
        vec![
            Rule::when(retry_execution("bug-review #1"))
                .named("retry")
                .reply(Reply::content(receipt(true, &SMALL))),
            Rule::when(repair_of("[marker-b1]"))
                .named("repair")
                .reply(Reply::content(repaired(true, &SMALL))),
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(prose)),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let s = stage(&report, "bug-review #1");
    assert_eq!(s["receiptDowngraded"], true, "visible in the report");
    assert_eq!(
        s["firstCoverage"],
        json!({"complete": false, "reportedIncomplete": true, "missingFiles": [], "unexpectedFiles": []})
    );
    assert_eq!(
        coverage_of(&report, "bug-review #1"),
        (true, json!([]), json!([]), true)
    );
    let observations = report["observations"].to_string();
    assert!(
        observations.contains("bug-review #1: the repaired reply claimed full coverage, but the prior reply held no JSON coverage receipt saying complete: true with exactly the expected files (a prose claim of coverage is not checked); recorded as complete: false"),
        "{observations}"
    );
    assert_only_retried(&server, &["bug-review #1"]);
    let lines = diagnostics(&out, &SMALL);
    assert_eq!(diagnosed(&lines, "repair-quote-missing"), ["bug-review #1"]);
    assert_eq!(diagnosed(&lines, "coverage-retry"), ["bug-review #1"]);
}

/// A reviewer that claims full coverage in prose twice, each time repaired to
/// `complete: true`, fails after its retry, and the failure says what the replies said:
/// a repaired claim the host did not take, never "the reviewer returned complete: false".
#[tokio::test(flavor = "multi_thread")]
async fn a_prose_claim_twice_fails_naming_the_claim_that_was_not_taken() {
    let change = small_change();
    let script = panel_script(
        vec![
            Rule::when(retry_execution("bug-review #1"))
                .named("retry")
                .reply(Reply::content(
                    "Again [marker-b9]: I reviewed every file; all fine.",
                )),
            Rule::when(repair_of("[marker-b9]"))
                .named("repair")
                .always(Reply::content(repaired(true, &SMALL))),
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(
                "Notes [marker-b9]: every file reviewed, nothing found.",
            )),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    let messages = report["messages"].to_string();
    assert!(
        messages.contains("bug-review #1 coverage mismatch after retry.\\nIncomplete coverage: the repaired reply said complete: true, but the prior reply held no JSON coverage receipt"),
        "{messages}"
    );
    assert!(!messages.contains("returned complete: false"), "{messages}");
    assert_eq!(server.served_by("repair").len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_different_valid_objects_are_invalid_and_go_to_repair() {
    let change = small_change();
    let one = receipt(true, &SMALL);
    let other = receipt(false, &["src/lib.rs"]);
    let prose = format!("Draft [marker-b2]:\n{other}\nFinal:\n{one}\n");
    let script = panel_script(
        vec![
            Rule::when(retry_execution("bug-review #2"))
                .named("retry")
                .reply(Reply::content(receipt(true, &SMALL))),
            Rule::when(repair_of("[marker-b2]"))
                .named("repair")
                .reply(Reply::content(repaired(false, &["src/lib.rs"]))),
            Rule::when(first_execution("bug-review #2")).reply(Reply::content(prose)),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // Not "first wins" and not "last wins": the repair decides, and its partial receipt
    // leads to the targeted retry.
    let repair = &server.served_by("repair")[0];
    assert!(
        task(repair).contains("2 different JSON objects that each satisfy the output contract"),
        "{}",
        task(repair)
    );
    let report = out.json();
    assert_eq!(
        stage(&report, "bug-review #2")["firstCoverage"]["missingFiles"],
        json!(["AGENTS.md", "CHANGELOG.md", "docs/verification/example.md"])
    );
    assert_only_retried(&server, &["bug-review #2"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn verifier_repair_gets_no_file_list() {
    let change = small_change();
    let decisions = json!({"decisions": [
        decision("bug-review #1/0", "rejected", json!([citation("src/lib.rs", 2, 2)]), None),
    ]});
    let script = panel_script(
        vec![
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(candidates_reply(
                json!([candidate("src/lib.rs", 2, 2, "42 is wrong")]),
                true,
                &SMALL,
            ))),
            Rule::when(repair_of("[marker-verifier]"))
                .named("repair")
                .reply(Reply::content(decisions.to_string())),
            // A decision stated as JSON, cut before its citations: the repair may only
            // complete it.
            Rule::when(Match::user_contains("Instance: verifier\n")).reply(Reply::content(
                r#"[marker-verifier] {"decisions": [{"candidateId": "bug-review #1/0", "decision": "rejected", "citations": [{"path": "src/lib.rs", "#,
            )),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json()["candidates"][0]["verdict"], "rejected");
    let repair = &server.served_by("repair")[0];
    let user = task(repair);
    assert!(!user.contains("<expected-files>"), "{user}");
    assert!(!user.contains("reviewedFiles"), "{user}");
    assert!(!repair.has_tools());
    assert!(server.unmatched().is_empty());
}

/// A repair never decides a verdict: a verifier that answers only in words ("cannot be
/// verified; rejected" names both verdicts) and whose repair says `verified` publishes
/// nothing; the repair fails, the review is incomplete and the candidate unpublished.
#[tokio::test(flavor = "multi_thread")]
async fn a_repair_never_turns_a_verifier_answer_in_words_into_a_finding() {
    let change = small_change();
    let flipped = json!({"decisions": [
        decision(
            "bug-review #1/0",
            "verified",
            json!([citation("src/lib.rs", 2, 2)]),
            Some(json!({"path": "src/lib.rs", "startLine": 2, "endLine": 2, "claim": "42 is wrong", "severity": "high"})),
        ),
    ]});
    let script = panel_script(
        vec![
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(candidates_reply(
                json!([candidate("src/lib.rs", 2, 2, "42 is wrong")]),
                true,
                &SMALL,
            ))),
            Rule::when(repair_of("[marker-verifier]"))
                .named("repair")
                .reply(Reply::content(flipped.to_string())),
            Rule::when(Match::user_contains("Instance: verifier\n")).reply(Reply::content(
                "This candidate cannot be verified from the source; rejected. [marker-verifier]",
            )),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete", "{report:#}");
    assert_eq!(report["findings"], json!([]), "{report:#}");
    assert!(
        report["failures"]
            .to_string()
            .contains("a repair cannot decide a verdict"),
        "{}",
        report["failures"]
    );
    assert_eq!(server.served_by("repair").len(), 1);
}

/// A verifier reply whose only JSON is an example saying `verified`, while its words
/// reject the candidate, is repaired into `verified`: a verdict reached through a repair
/// is checked by the verifier itself in a focused pass, and when that pass rejects it the
/// candidate is unresolved, nothing is published and the review is not clean.
#[tokio::test(flavor = "multi_thread")]
async fn a_verified_reached_through_a_repair_is_checked_by_a_focused_pass() {
    let change = small_change();
    let verified = json!({"decisions": [
        decision(
            "bug-review #1/0",
            "verified",
            json!([citation("src/lib.rs", 2, 2)]),
            Some(json!({"path": "src/lib.rs", "startLine": 2, "endLine": 2, "claim": "42 is wrong", "severity": "high"})),
        ),
    ]});
    let rejected = json!({"decisions": [
        decision("bug-review #1/0", "rejected", json!([citation("src/lib.rs", 2, 2)]), None),
    ]});
    let script = panel_script(
        vec![
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(candidates_reply(
                json!([candidate("src/lib.rs", 2, 2, "42 is wrong")]),
                true,
                &SMALL,
            ))),
            Rule::when(repair_of("[marker-example]"))
                .named("repair")
                .reply(Reply::content(verified.to_string())),
            Rule::when(Match::user_contains("Instance: verifier (focused"))
                .named("focused")
                .reply(Reply::content(rejected.to_string())),
            Rule::when(Match::user_contains("Instance: verifier\n")).reply(Reply::content(
                r#"[marker-example] The format asks for e.g. {"candidateId": "bug-review #1/0", "decision": "verified"} but having read src/lib.rs the candidate is wrong: I reject it."#,
            )),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    let report = out.json();
    assert_eq!(server.served_by("repair").len(), 1);
    assert_eq!(server.served_by("focused").len(), 1, "{report:#}");
    assert_eq!(report["findings"], json!([]), "{report:#}");
    assert_eq!(
        report["candidates"][0]["verdict"], "unresolved",
        "{report:#}"
    );
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// Rule 3 with issue #9's truncation rule: a reply cut off at the token limit is never
/// parsed, even when it holds a complete, valid object, and never repaired; the stage
/// re-asks once, stating the cut and the bound, and the re-asked partial receipt then
/// takes the normal targeted retry.
#[tokio::test(flavor = "multi_thread")]
async fn truncated_reply_is_re_asked_never_parsed_nor_repaired() {
    let change = small_change();
    let cut = format!(
        "All four files were reviewed [marker-i1].\n{}",
        receipt(true, &SMALL)
    );
    let script = panel_script(
        vec![
            Rule::when(retry_execution("instructions-review #1"))
                .named("retry")
                .reply(Reply::content(receipt(true, &SMALL))),
            Rule::when(repair_of("[marker-i1]"))
                .named("repair")
                .reply(Reply::content(receipt(true, &SMALL))),
            Rule::when(
                first_execution("instructions-review #1")
                    .and(Match::user_contains("## Output cut off")),
            )
            .named("re-ask")
            .reply(Reply::content(receipt(false, &["AGENTS.md"]))),
            Rule::when(first_execution("instructions-review #1"))
                .reply(Reply::content_with_finish(cut, "length")),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        server.served_by("repair").is_empty(),
        "a cut reply is never repaired"
    );
    let reask = task(&server.served_by("re-ask")[0]);
    assert!(
        reask.contains("finish_reason: length") && reask.contains("tokens"),
        "{reask}"
    );
    let report = out.json();
    let s = stage(&report, "instructions-review #1");
    assert_eq!(s["repaired"], false);
    assert_eq!(
        s["firstCoverage"]["missingFiles"],
        json!(["CHANGELOG.md", "docs/verification/example.md", "src/lib.rs"])
    );
    // The cut execution and its re-ask, then exactly one coverage retry.
    assert_eq!(executions(&server, "instructions-review #1"), (2, 1));
    assert_eq!(server.served_by("re-ask").len(), 1);
    let lines = diagnostics(&out, &SMALL);
    assert_eq!(
        diagnosed(&lines, "truncated-output"),
        ["instructions-review #1"]
    );
}
