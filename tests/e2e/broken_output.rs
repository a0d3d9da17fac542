//! Broken model output never becomes an accepted or clean result (issue #9): a reply cut
//! at the output limit is re-asked once and never parsed or repaired; a repair fixes
//! syntax only (it cannot flip a verdict); a repaired full-coverage claim needs a quote
//! that states it. Each run goes through the real binary and real HTTP.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    ScriptedReview, candidate, candidates_reply, citation, decision, finding,
};

const FILES: [&str; 2] = ["docs/limits.md", "src/limits.rs"];
const INVESTIGATOR: &str = "Instance: generic-investigator #1\n";
const AUDIT: &str = "Instance: clean-result-audit #1\n";
const VERIFIER: &str = "Instance: verifier\n";
const REPAIR: &str = "You repair a reviewer's final answer";
const RETRY: &str = "## Coverage retry";
const CUT_NOTICE: &str = "## Output cut off";

/// A change to a limit and its documentation.
fn change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write(
        "src/limits.rs",
        "/// Most open files.\npub const MAX_OPEN: u32 = 64;\n\npub fn allowed(n: u32) -> bool {\n    n < MAX_OPEN\n}\n",
    )
    .write("docs/limits.md", "# Limits\n\nAt most 64 open files.\n");
    let base = repo.commit("limits");
    repo.write(
        "src/limits.rs",
        "/// Most open files.\npub const MAX_OPEN: u32 = 64;\n\npub fn allowed(n: u32) -> bool {\n    n <= MAX_OPEN\n}\n",
    )
    .write("docs/limits.md", "# Limits\n\nAt most 64 open files, inclusive.\n");
    let head = repo.commit("allow the limit itself");
    (repo, base, head)
}

/// Reviews the change with the minimal composition plus the clean-result audit.
async fn review(server: &ScriptedServer) -> (vouch_workspace_tests::Output, Value) {
    let (repo, base, head) = change();
    let out = ScriptedReview::new(&repo, &base, &head, server)
        .manifest("tests/data/e2e/audited.toml")
        .run()
        .await;
    let report = out.json();
    (out, report)
}

fn complete_receipt() -> String {
    candidates_reply(json!([]), true, &FILES)
}

/// The clean-result audit: nothing found, every file covered.
fn audit_passes() -> Rule {
    Rule::when(Match::user_contains(AUDIT))
        .named("audit")
        .always(Reply::content(complete_receipt()))
}

fn stage<'a>(report: &'a Value, label: &str) -> &'a Value {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap_or_else(|| panic!("no stage {label}: {report:#}"))
}

/// Reviews with an investigator that always answers `investigator` (and a repair that
/// answers `repair`, the audit passing), and checks the review failed on a
/// `truncated-output`: incomplete, exit 2, never clean.
async fn failed_investigator(
    investigator: Reply,
    repair: Reply,
) -> (ScriptedServer, vouch_workspace_tests::Output, Value) {
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains(REPAIR))
                .named("repair")
                .always(repair),
        )
        .rule(audit_passes())
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .always(investigator),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["opinion"]["clean"], false);
    assert_eq!(report["failures"][0]["kind"], "truncated-output");
    (server, out, report)
}

/// An investigator reply with a complete receipt and a candidate cut mid-claim.
const CUT_INVESTIGATOR: &str = r#"{"coverage": {"complete": true, "reviewedFiles": ["docs/limits.md", "src/limits.rs"]}, "candidates": [{"path": "src/limits.rs", "startLine": 5, "endLine": 5, "revision": "head", "severity": "high", "area": "correctness", "claim": "allowed() now admits one file more than MAX_OP"#;

/// Issue #9 (a): a cut investigator reply, whose repair would claim full coverage, never
/// ends clean: the cut reply is never repaired; the stage re-asks once, stating the cut
/// and the bound; a second cut fails the review (`truncated-output`, stated in the
/// report).
#[tokio::test(flavor = "multi_thread")]
async fn a_cut_investigator_reply_is_never_repaired_into_a_clean_review() {
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": "repaired"});
    let (server, out, report) = failed_investigator(
        Reply::content_with_finish(CUT_INVESTIGATOR, "length").with_usage(11, 7),
        Reply::content(repaired.to_string()),
    )
    .await;
    let message = report["failures"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("cut off at the output limit") && message.contains("again"),
        "{message}"
    );
    assert!(
        server.served_by("repair").is_empty(),
        "a cut reply is never repaired"
    );
    assert!(
        server.served_by("audit").is_empty(),
        "nothing after a failure"
    );
    let asks = server.served_by("investigator");
    assert_eq!(asks.len(), 2, "one re-ask");
    let reask = asks[1].contents_of("user").join("\n");
    assert!(
        reask.contains(CUT_NOTICE) && reask.contains("output limit of 2048 tokens"),
        "the re-ask states the cut and the bound: {reask}"
    );
    assert!(!asks[0].contents_of("user").join("\n").contains(CUT_NOTICE));
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["repaired"], false);
    // A failed stage's requests and tokens count like any other's: its two asks (each
    // 11 prompt and 7 completion tokens), in its record and in the review's total.
    assert_eq!(
        s["usage"],
        json!({"requests": 2, "promptTokens": 22, "completionTokens": 14}),
        "{s:#}"
    );
    assert_eq!(report["usage"]["requests"], json!(server.request_count()));
    assert_eq!(report["usage"]["promptTokens"], 22, "{report:#}");
    let reasons: Vec<Value> = out
        .stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["reason"].clone())
        .collect();
    assert_eq!(
        reasons.iter().filter(|r| *r == "truncated-output").count(),
        2,
        "{reasons:?}"
    );
}

/// A reply the endpoint's content filter stopped is not the model's whole answer: it is
/// never parsed (here it holds a complete, clean receipt), repaired or re-asked; the
/// stage fails naming the filter and the review is incomplete.
#[tokio::test(flavor = "multi_thread")]
async fn a_filtered_reply_is_never_accepted() {
    let (server, _, report) = failed_investigator(
        Reply::content_with_finish(complete_receipt(), "content_filter"),
        Reply::content(complete_receipt()),
    )
    .await;
    let message = report["failures"][0]["message"].as_str().unwrap();
    assert!(message.contains("content filter"), "{message}");
    assert_eq!(server.served_by("investigator").len(), 1, "never re-asked");
    assert!(server.served_by("repair").is_empty(), "never repaired");
    assert!(
        server.served_by("audit").is_empty(),
        "nothing after a failure"
    );
    assert_eq!(
        stage(&report, "generic-investigator #1")["status"],
        "failed"
    );
}

/// A stage that fails on the endpoint after some turns still counts what it spent: the
/// reply it received and every attempt of the request that failed (the manifest allows
/// two retries), in its record and in the review's total.
#[tokio::test(flavor = "multi_thread")]
async fn a_stage_that_fails_on_the_endpoint_counts_what_it_spent() {
    let script = Script::new().rule(audit_passes()).rule(
        Rule::when(Match::user_contains(INVESTIGATOR))
            .named("investigator")
            .reply(
                Reply::tool_call("read_file", r#"{"path": "src/limits.rs"}"#)
                    .answered_by("scripted-2026-12-01"),
            )
            .always(Reply::status(500).header("Retry-After", "0")),
    );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        report["failures"][0]["kind"], "provider-error",
        "{report:#}"
    );
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(s["status"], "failed");
    assert_eq!(
        s["usage"],
        json!({"requests": 4, "promptTokens": 10, "completionTokens": 5}),
        "{s:#}"
    );
    // The one reply it got names the model that answered: kept with the failure.
    assert_eq!(s["answeredBy"], json!(["scripted-2026-12-01"]), "{s:#}");
    assert_eq!(report["usage"]["requests"], json!(server.request_count()));
}

/// The one re-ask of a cut reply is a full answer of its own: when it fits, the stage
/// accepts it and the review goes on (the audit runs, the review is clean).
#[tokio::test(flavor = "multi_thread")]
async fn a_cut_reply_answered_in_full_on_its_re_ask_is_accepted() {
    let script = Script::new()
        .rule(audit_passes())
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR).and(Match::user_contains(CUT_NOTICE)))
                .named("re-ask")
                .reply(Reply::content(complete_receipt()).answered_by("scripted-2026-12-01")),
        )
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .reply(Reply::content_with_finish(CUT_INVESTIGATOR, "length")),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["clean"], true, "{report:#}");
    assert_eq!(server.served_by("re-ask").len(), 1);
    assert_eq!(server.served_by("audit").len(), 1);
    // Each model the endpoint named, once, in the order first seen: the cut reply's (the
    // model asked for, echoed), then the re-ask's.
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(
        s["answeredBy"],
        json!([s["model"], "scripted-2026-12-01"]),
        "{s:#}"
    );
    assert!(server.unmatched().is_empty());
}

fn lane_with_one_candidate() -> Rule {
    Rule::when(Match::user_contains(INVESTIGATOR))
        .named("investigator")
        .always(Reply::content(candidates_reply(
            json!([candidate(
                "src/limits.rs",
                5,
                5,
                "allowed() admits one file more than MAX_OPEN"
            )]),
            true,
            &FILES,
        )))
}

fn rejected_by_repair() -> Rule {
    let rejected = json!({"decisions": [{"candidateId": "generic-investigator #1/0", "decision": "rejected",
        "evidence": "repaired", "citations": [], "finding": null}]});
    Rule::when(Match::system_contains(REPAIR))
        .named("repair")
        .always(Reply::content(rejected.to_string()))
}

/// Issue #9 (b): a verifier `verified` decision cut off is never "repaired" into
/// `rejected`: the review does not end with no findings (exit 0); it is incomplete.
#[tokio::test(flavor = "multi_thread")]
async fn a_cut_verified_decision_is_never_repaired_into_a_rejection() {
    let cut = r#"{"decisions": [{"candidateId": "generic-investigator #1/0", "decision": "verified", "evidence": "line 5 compares with <= so MAX_OPEN itsel"#;
    let script = Script::new()
        .rule(rejected_by_repair())
        .rule(audit_passes())
        .rule(lane_with_one_candidate())
        .rule(
            Rule::when(Match::user_contains(VERIFIER))
                .named("verifier")
                .always(Reply::content_with_finish(cut, "length")),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["failures"][0]["kind"], "truncated-output");
    assert_eq!(report["failures"][0]["stage"], "verifier");
    assert!(server.served_by("repair").is_empty());
    assert_eq!(server.served_by("verifier").len(), 2, "one re-ask");
    assert_ne!(report["candidates"][0]["verdict"], "rejected");
}

/// Issue #9 (b), not cut: a verifier reply that states `verified` but is not valid JSON
/// goes to repair; a repair that answers `rejected` changed a verdict, not syntax, and
/// the review is incomplete (the candidate is never recorded as rejected).
#[tokio::test(flavor = "multi_thread")]
async fn a_repair_that_flips_a_verdict_is_refused() {
    let invalid = r#"Decision: {"candidateId": "generic-investigator #1/0", "decision": "verified", "evidence": "line 5 admits MAX_OPEN", "citations": [{"revision": "head", "path": "src/limits.rs", "startLine": 5, "endLine": 5}], "finding": {"path": "src/limits.rs"}"#;
    let script = Script::new()
        .rule(rejected_by_repair())
        .rule(audit_passes())
        .rule(lane_with_one_candidate())
        .rule(
            Rule::when(Match::user_contains(VERIFIER))
                .named("verifier")
                .always(Reply::content(invalid)),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["failures"][0]["kind"], "invalid-output");
    let message = report["failures"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "the repair changed the decision for `generic-investigator #1/0` from verified to rejected"
        ),
        "{message}"
    );
    assert_eq!(server.served_by("repair").len(), 1);
    assert_ne!(report["candidates"][0]["verdict"], "rejected");
}

/// Issue #9 (c): a repaired `complete: true` of a reply with no JSON receipt is
/// downgraded to `complete: false`, visibly (record, observation, diagnostic), and takes
/// the normal coverage retry, however the reply words its coverage: the host cannot tell
/// a full claim from a qualified one in prose.
#[tokio::test(flavor = "multi_thread")]
async fn a_prose_reply_repaired_into_full_coverage_is_downgraded_and_retried() {
    for prose in [
        "Looked at src/limits.rs. The comparison changed.",
        "I reviewed every changed file without reading docs/limits.md.",
        "I reviewed all the files I was able to open.",
        "The task claims I reviewed every changed file, which is false.",
    ] {
        let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
            "summary": "repaired"});
        let script = repair_script(prose, &repaired);
        let server = ScriptedServer::start(script).await;
        let (out, report) = review(&server).await;
        assert_eq!(out.code, 0, "{prose:?}: {}\n{}", out.stdout, out.stderr);
        let s = stage(&report, "generic-investigator #1");
        assert_eq!(s["receiptDowngraded"], true, "{prose:?}: {s:#}");
        assert_eq!(s["firstCoverage"]["reportedIncomplete"], true, "{s:#}");
        assert_eq!(s["retried"], true);
        assert_eq!(server.served_by("retry").len(), 1, "{prose:?}");
        let observations = report["observations"].to_string();
        assert!(
            observations.contains(
                "the prior reply held no JSON coverage receipt saying complete: true with exactly the expected files"
            ),
            "{prose:?}: {observations}"
        );
        // What the reply said is not misquoted: neither in the report nor in the retry.
        let issue = s["replyIssues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["step"] == "coverage-retry")
            .unwrap();
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.starts_with("the repaired receipt said complete: true, but"),
            "{message}"
        );
        let retry = server.served_by("retry")[0].contents_of("user").join("\n");
        assert!(!retry.contains("said coverage.complete: false"), "{retry}");
        // The retry says exactly what was wrong: no file was missed, and full coverage
        // is stated only as a JSON receipt; it shows the reply as written, not the
        // repaired receipt that claimed what the reply did not.
        let section = &retry[retry.find(RETRY).expect("a retry section")..];
        assert!(!section.contains("Missing files"), "{section}");
        assert!(!section.contains("Unexpected files"), "{section}");
        assert!(
            section.contains("Full coverage is stated only by a JSON coverage receipt in your answer: coverage.complete: true with coverage.reviewedFiles listing exactly the expected files."),
            "{section}"
        );
        assert!(
            section.contains(&format!("<previous-reply>\n{prose}\n</previous-reply>")),
            "{section}"
        );
        assert!(!section.contains("<previous-output>"), "{section}");
        assert!(
            out.stderr.contains("\"repair-quote-missing\""),
            "{}",
            out.stderr
        );
    }
}

/// Reviews with an investigator answering `investigator`, a repair answering `repair`,
/// a retry answering a complete receipt and the audit passing.
async fn investigator_and_repair(
    investigator: impl std::fmt::Display,
    repair: Value,
) -> (ScriptedServer, Value) {
    let server = ScriptedServer::start(repair_script(investigator, &repair)).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["clean"], true, "{report:#}");
    (server, report)
}

/// A model whose investigator answers `investigator`, whose repair answers `repair`,
/// whose coverage retry answers a complete receipt, and whose audit passes.
fn repair_script(investigator: impl std::fmt::Display, repair: &Value) -> Script {
    Script::new()
        .rule(
            Rule::when(Match::system_contains(REPAIR))
                .named("repair")
                .always(Reply::content(repair.to_string())),
        )
        .rule(audit_passes())
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR).and(Match::user_contains(RETRY)))
                .named("retry")
                .always(Reply::content(complete_receipt())),
        )
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .always(Reply::content(investigator.to_string())),
        )
}

/// Models routinely leave out empty arrays and optional text: a reply that is only an
/// exact, complete receipt needs no repair and keeps its full coverage.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_that_omits_its_empty_arrays_is_accepted_without_repair() {
    let bare = json!({"coverage": {"complete": true, "reviewedFiles": FILES}});
    let (server, report) = investigator_and_repair(bare, json!({})).await;
    assert!(
        server.served_by("repair").is_empty(),
        "no repair was needed"
    );
    assert!(server.served_by("retry").is_empty());
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(s["repaired"], false);
    assert_eq!(s["coverage"]["complete"], true, "{s:#}");
    assert!(s.get("replyIssues").is_none(), "{s:#}");
}

/// An unknown key is a contract violation: the reply goes to repair and the report says
/// where and why. The prior reply's own JSON receipt was complete with exactly the
/// expected files, so the repaired receipt keeps full coverage without a quote.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_key_goes_to_repair_and_a_complete_prior_receipt_stands() {
    let receipt = json!({"complete": true, "reviewedFiles": FILES});
    let prior = json!({"candidates": [], "coverage": receipt, "notes": "all good"});
    let repaired = json!({"candidates": [], "coverage": receipt, "summary": ""});
    let (server, report) = investigator_and_repair(prior, repaired).await;
    assert_eq!(server.served_by("repair").len(), 1);
    assert!(server.served_by("retry").is_empty(), "no coverage retry");
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(s["repaired"], true);
    assert_eq!(s["receiptDowngraded"], false, "{s:#}");
    assert_eq!(s["replyIssues"][0]["step"], "repair", "{s:#}");
    assert_eq!(s["replyIssues"][0]["pointer"], "/notes");
    let message = s["replyIssues"][0]["message"].as_str().unwrap();
    assert!(message.contains("unknown key"), "{message}");
    assert_eq!(s["replyIssues"].as_array().unwrap().len(), 1);
}

/// A reply whose own JSON object does not parse (a trailing comma, a comment) is
/// reported by its syntax error and its place in the reply, not by what an object found
/// inside it lacks (with no pointer into an object the model did not write).
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_that_does_not_parse_is_reported_by_its_syntax_error() {
    let receipt = json!({"complete": true, "reviewedFiles": FILES}).to_string();
    let cases = [
        (
            format!(r#"{{"candidates": [], "coverage": {receipt},}}"#),
            "trailing comma at line 1 column",
        ),
        (
            format!("{{\n  // all read\n  \"coverage\": {receipt}\n}}"),
            "at line 2 column 3 of the reply",
        ),
    ];
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": ""});
    for (prior, want) in cases {
        let (_, report) = investigator_and_repair(&prior, repaired.clone()).await;
        let s = stage(&report, "generic-investigator #1");
        let issue = &s["replyIssues"][0];
        assert_eq!(issue["step"], "repair", "{prior}: {s:#}");
        assert!(
            issue.get("pointer").is_none_or(Value::is_null),
            "{prior}: {issue:#}"
        );
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("does not parse") && message.contains(want),
            "{prior}: {message}"
        );
    }
}

/// A defect a reply states only in prose, at a place in a changed file, cannot be lost
/// in the repair: a repair that keeps it neither as a candidate nor as a dismissed
/// concern fails, and the review is incomplete, never clean.
#[tokio::test(flavor = "multi_thread")]
async fn a_defect_stated_in_prose_is_never_repaired_away() {
    let prose = "1. **src/limits.rs:5** (high, correctness) - allowed() admits one file more \
        than MAX_OP.\nI reviewed every changed file.";
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": ""});
    let script = repair_script(prose, &repaired);
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    let message = report["failures"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "names src/limits.rs:5, but the repair kept no candidate or dismissed concern there"
        ),
        "{message}"
    );
    let repair = server.served_by("repair")[0].contents_of("user").join("\n");
    assert!(
        repair.contains("must appear as a candidate or as a dismissed concern"),
        "{repair}"
    );
}

/// A coverage retry's answer replaces the first one, but a candidate the first answer
/// proposed is never lost by it: left out of the retry's answer, it is kept for the
/// verifier to decide, and the report says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_the_coverage_retry_leaves_out_still_reaches_the_verifier() {
    let first = candidates_reply(
        json!([candidate(
            "src/limits.rs",
            5,
            5,
            "allowed() admits one file more than MAX_OPEN"
        )]),
        true,
        &["src/limits.rs"],
    );
    let rejected = json!({"decisions": [{"candidateId": "generic-investigator #1/0",
        "decision": "rejected", "evidence": "checked", "citations": [], "finding": null}]});
    let script = Script::new()
        .rule(audit_passes())
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR).and(Match::user_contains(RETRY)))
                .named("retry")
                .always(Reply::content(complete_receipt())),
        )
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .always(Reply::content(first)),
        )
        .rule(
            Rule::when(Match::user_contains(VERIFIER))
                .named("verifier")
                .always(Reply::content(rejected.to_string())),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(server.served_by("retry").len(), 1, "{}", out.stderr);
    let verifier = server.served_by("verifier");
    assert!(
        !verifier.is_empty(),
        "the candidate was verified: {report:#}"
    );
    assert!(
        verifier[0]
            .contents_of("user")
            .join("\n")
            .contains("generic-investigator #1/0"),
        "{report:#}"
    );
    let observations = report["observations"].to_string();
    assert!(
        observations.contains(
            "its coverage retry left out 1 candidate(s) of its first answer (src/limits.rs:5-5)"
        ),
        "{observations}"
    );
}

/// A receipt the prior reply wrote malformed (keys in another case, a trailing comma,
/// `complete` as a string) or ambiguous (a key repeated, the incomplete copy first) is
/// no statement of full coverage, whatever the prose beside it says: the repaired
/// `complete: true` is downgraded and the stage takes the coverage retry.
#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_or_ambiguous_prior_receipt_is_never_repaired_into_full_coverage() {
    let stated = "I reviewed every changed file.";
    let priors = [
        format!(r#"{{"Coverage": {{"Complete": false, "reviewedFiles": ["src/limits.rs"]}}}} {stated}"#),
        format!(r#"{{"coverage": {{"complete": false, "reviewedFiles": ["src/limits.rs"],}}}} {stated}"#),
        format!(r#"{{"coverage": {{"complete": "false", "reviewedFiles": ["src/limits.rs"]}}}} {stated}"#),
        r#"{"candidates": [], "coverage": {"complete": false, "reviewedFiles": ["src/limits.rs"]}, "coverage": {"complete": true, "reviewedFiles": ["docs/limits.md", "src/limits.rs"]}}"#.to_string(),
    ];
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": ""});
    for prior in priors {
        let (server, report) = investigator_and_repair(&prior, repaired.clone()).await;
        assert_eq!(server.served_by("repair").len(), 1, "{prior}");
        assert_eq!(server.served_by("retry").len(), 1, "{prior}");
        let s = stage(&report, "generic-investigator #1");
        assert_eq!(s["receiptDowngraded"], true, "{prior}: {s:#}");
        assert_eq!(s["retried"], true, "{prior}");
    }
}

/// A prior reply whose own receipt said `complete: false` stays incomplete whatever its
/// repair claims and its prose says: the receipt is downgraded and takes the coverage
/// retry, and the report names both steps.
#[tokio::test(flavor = "multi_thread")]
async fn an_incomplete_prior_receipt_is_never_repaired_into_full_coverage() {
    let stated = "I reviewed all changed files: docs/limits.md, src/limits.rs.";
    let prior = json!({"coverage": {"complete": false, "reviewedFiles": ["src/limits.rs"]},
        "summary": stated, "candidates": [{"path": "src/limits.rs"}]});
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": ""});
    let (server, report) = investigator_and_repair(prior, repaired).await;
    assert_eq!(server.served_by("repair").len(), 1);
    assert_eq!(server.served_by("retry").len(), 1);
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(s["receiptDowngraded"], true, "{s:#}");
    let issues = s["replyIssues"].as_array().unwrap();
    assert_eq!(issues[0]["step"], "repair");
    assert_eq!(issues[0]["pointer"], "/candidates/0/startLine", "{s:#}");
    assert_eq!(issues[1]["step"], "coverage-retry");
    assert_eq!(issues[1]["pointer"], "/coverage");
    assert_eq!(
        issues[1]["message"],
        "the repaired receipt said complete: true, but the prior reply's own coverage receipt was incomplete, did not list exactly the expected files, or repeated a key; recorded as complete: false"
    );
    let observations = report["observations"].to_string();
    assert!(
        observations.contains("the prior reply's own coverage receipt was incomplete"),
        "{observations}"
    );
}

/// A gateway's HTML error page is said in one line (status, title, first text line) in
/// the failure's message, never quoted whole; the page itself stays in the failure's
/// `detail`, bounded.
#[tokio::test(flavor = "multi_thread")]
async fn a_gateway_error_page_is_summarised_and_its_body_kept_in_the_failure_detail() {
    let page = format!(
        "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>\
         <hr><center>nginx</center>{}</body></html>",
        "<!-- padding -->".repeat(200)
    );
    let script = Script::new().rule(audit_passes()).rule(
        Rule::when(Match::user_contains(INVESTIGATOR))
            .named("investigator")
            .always(Reply::raw(502, page.clone()).header("Retry-After", "0")),
    );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let failure = &report["failures"][0];
    assert_eq!(failure["kind"], "provider-error", "{report:#}");
    let message = failure["message"].as_str().unwrap();
    assert!(message.contains("502 Bad Gateway"), "{message}");
    assert!(
        !message.contains("<html>"),
        "the page is not quoted: {message}"
    );
    let detail = failure["detail"].as_str().expect("the body is kept");
    assert!(detail.starts_with("<html><head><title>502"), "{detail}");
    assert!(
        detail.chars().count() < page.chars().count(),
        "bounded: {detail}"
    );
}

/// A reasoning model served without a reasoning parser writes `<think>…</think>` before
/// its answer (or only `…</think>` when the chat template opened the block), drafts
/// included: a draft is the model thinking, not a second answer. The lane's draft receipt
/// (incomplete) and the verifier's draft verdict (rejected) are never read; the answers
/// after the block stand, with no repair and no retry.
#[tokio::test(flavor = "multi_thread")]
async fn a_draft_inside_a_leading_reasoning_block_is_not_an_answer() {
    let think = |draft: &Value, answer: &str| {
        format!("<think>Draft: {draft} -- no wait, check again.</think>\n{answer}")
    };
    // As a chat template that opened the block leaves it: only the closing tag.
    let opened =
        |draft: &Value, answer: &str| format!("Draft: {draft} -- hmm, no.\n</think>\n\n{answer}");
    let id = "generic-investigator #1/0";
    let lane = think(
        &json!({"coverage": {"complete": false, "reviewedFiles": []}}),
        &candidates_reply(
            json!([candidate(
                "src/limits.rs",
                5,
                5,
                "allowed() admits MAX_OPEN itself"
            )]),
            true,
            &FILES,
        ),
    );
    let verdict = opened(
        &json!({"decisions": [decision(id, "rejected", json!([]), None)]}),
        &json!({"decisions": [decision(
            id,
            "verified",
            json!([citation("src/limits.rs", 5, 5)]),
            Some(finding("src/limits.rs", 5, 5, "allowed() admits MAX_OPEN itself")),
        )]})
        .to_string(),
    );
    let script = Script::new()
        .rule(audit_passes())
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .always(Reply::content(lane)),
        )
        .rule(
            Rule::when(Match::user_contains(VERIFIER))
                .named("verifier")
                .always(Reply::content(verdict)),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["outcome"], "findings", "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full");
    assert_eq!(
        report["findings"][0]["claim"],
        "allowed() admits MAX_OPEN itself"
    );
    assert_eq!(server.served_by("investigator").len(), 1, "no retry");
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.system().unwrap_or_default().contains(REPAIR)),
        "no repair"
    );
    let s = stage(&report, "generic-investigator #1");
    assert_eq!(s["replyIssues"], Value::Null, "{s:#}");
}

/// A server without the model's tool-call parser returns its tool calls as text: the
/// review does not finish, and the failure says why and what to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_written_as_text_is_named_with_the_fix() {
    let as_text = r#"<tool_call>
{"name": "diff", "arguments": {"path": "src/limits.rs"}}
</tool_call>"#;
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains(REPAIR))
                .named("repair")
                .always(Reply::content(as_text)),
        )
        .rule(audit_passes())
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .always(Reply::content(as_text)),
        );
    let server = ScriptedServer::start(script).await;
    let (out, report) = review(&server).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let failure = report["failures"][0]["message"].as_str().unwrap();
    assert!(
        failure.contains("holds a tool call written as text") && failure.contains("--tools off"),
        "{failure}"
    );
}
