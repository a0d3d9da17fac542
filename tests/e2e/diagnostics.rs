//! Structured diagnostics on stderr (issue 4, "Diagnostics and provenance"): in a
//! non-interactive run stderr carries only JSON lines with the job id, reviewer label,
//! stage, numeric source and hunk counts and an allowlisted reason code — never paths,
//! source text, prompts, intent, policy text or raw provider errors.
//!
//! The change under review puts marker strings in its paths, contents, commit message,
//! pull-request title, policy evidence and the provider's error body; three runs (a
//! successful one with a repair and a focused pass, a coverage mismatch after retry, a
//! provider error) must keep every marker off stderr.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    AUDIT, CONVENTIONS, FOCUSED, GENERIC, OUTCOME, Output, ScriptedVerifier, VERIFIER, candidate,
    candidates_reply, citation, decision, decisions, stage,
};

use crate::composition::review;

/// The closed allowlist of reason codes (vouch-host `diagnostics::ReasonCode`).
const REASONS: [&str; 18] = [
    "review-started",
    "stage-completed",
    "repair-attempted",
    "repair-quote-missing",
    "invalid-output",
    "truncated-output",
    "coverage-retry",
    "coverage-mismatch",
    "provider-error",
    "source-lookup-gap",
    "budget-hit",
    "structured-output-fallback",
    "invalid-decision",
    "candidate-not-resolved",
    "focused-verification",
    "plugin-error",
    "cancelled",
    "review-finished",
];

/// The stage kinds a diagnostic may name.
const STAGES: [&str; 7] = [
    "snapshot",
    "lane",
    "repair",
    "retry",
    "verification",
    "audit",
    "report",
];

const DIR: &str = "src/PATHMARK-a81c";
const FILE: &str = "src/PATHMARK-a81c/secret_FILEMARK-5e2d.rs";
const FILES: [&str; 2] = ["README.md", FILE];
const MARKERS: [&str; 8] = [
    "PATHMARK-a81c",
    "FILEMARK-5e2d",
    "CONTENTMARK-c3f9",
    "COMMITMARK-0b7e",
    "TITLEMARK-6d14",
    "POLICYMARK-91aa",
    "PROVIDERMARK-77ee",
    "README",
];

/// Labels a diagnostic of these runs may carry.
const LABELS: [&str; 6] = [
    "generic-investigator #1",
    "outcome-investigator #1",
    "conventions #1",
    "clean-result-audit #1",
    "verifier",
    "verifier (focused generic-investigator #1/0)",
];

/// Asserts every stderr line is one allowlisted JSON diagnostic of one job and that no
/// marker appears anywhere on stderr; returns the parsed lines.
pub(crate) fn diagnostics_only(stderr: &str, markers: &[&str], labels: &[&str]) -> Vec<Value> {
    for marker in markers {
        assert!(
            !stderr.contains(marker),
            "{marker} leaked to stderr:\n{stderr}"
        );
    }
    let mut job = None;
    let mut lines = Vec::new();
    for line in stderr.lines() {
        let d: Value = serde_json::from_str(line)
            .unwrap_or_else(|_| panic!("stderr line is not JSON: {line}"));
        let keys: Vec<&str> = d
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {line}"))
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "jobId",
                "label",
                "stage",
                "sourceCount",
                "hunkCount",
                "reason"
            ],
            "{line}"
        );
        let id = d["jobId"].as_str().unwrap().to_string();
        assert!(!id.is_empty());
        assert_eq!(
            job.get_or_insert_with(|| id.clone()),
            &id,
            "one job per run"
        );
        assert!(
            d["label"].is_null() || labels.contains(&d["label"].as_str().unwrap()),
            "{line}"
        );
        assert!(STAGES.contains(&d["stage"].as_str().unwrap()), "{line}");
        for count in ["sourceCount", "hunkCount"] {
            assert!(d[count].is_null() || d[count].is_u64(), "{line}");
        }
        assert!(REASONS.contains(&d["reason"].as_str().unwrap()), "{line}");
        lines.push(d);
    }
    lines
}

fn reasons(lines: &[Value]) -> Vec<(Option<String>, String)> {
    lines
        .iter()
        .map(|d| {
            (
                d["label"].as_str().map(str::to_string),
                d["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(lines: &[Value], label: Option<&str>, reason: &str) -> bool {
    reasons(lines)
        .iter()
        .any(|(l, r)| l.as_deref() == label && r == reason)
}

/// A change whose paths, contents, commit message and base policy carry markers.
fn marked_repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write(
        "AGENTS.md",
        "# Rules\n\nPOLICYMARK-91aa: keep ports in range.\n",
    )
    .write(
        FILE,
        "// CONTENTMARK-c3f9\npub fn port(n: u32) -> u16 {\n    n as u16\n}\n",
    )
    .write("README.md", "# marked\n");
    let base = repo.commit("base");
    repo.write(
        FILE,
        "// CONTENTMARK-c3f9 widened\npub fn port(n: u64) -> u16 {\n    n as u16\n}\n",
    )
    .write("README.md", "# marked\n\nCONTENTMARK-c3f9 in the readme.\n");
    let head = repo.commit("COMMITMARK-0b7e: widen the port type");
    (repo, base, head)
}

async fn run(script: Script) -> (Output, ScriptedServer) {
    let (repo, base, head) = marked_repo();
    let server = ScriptedServer::start(script).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        &["--pr-title", "TITLEMARK-6d14: widen ports"],
        &[],
    )
    .await;
    (out, server)
}

fn empty(files: &[&str]) -> Reply {
    Reply::content(candidates_reply(json!([]), true, files))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_successful_run_with_repair_and_focused_pass_keeps_stderr_to_diagnostics() {
    // Its own receipt is exact, beside a key the contract does not know: it goes to
    // repair, and the repaired receipt keeps full coverage.
    let prose = format!(
        "I read {FILE} (CONTENTMARK-c3f9) and README.md. No problems. {}",
        json!({"coverage": {"complete": true, "reviewedFiles": FILES}, "notes": "all read"})
    );
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": ""});
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains("You repair"))
                .named("repair")
                .replies([Reply::content(repaired.to_string())]),
        )
        .rule(stage(
            GENERIC,
            "generic",
            [
                // A tool error that names a marked path: seen by the model only.
                Reply::tool_call("read_file", format!(r#"{{"path": "{DIR}/missing.rs"}}"#)),
                Reply::content(candidates_reply(
                    json!([candidate(
                        FILE,
                        2,
                        3,
                        "values above 65535 wrap (CONTENTMARK-c3f9)"
                    )]),
                    true,
                    &FILES,
                )),
            ],
        ))
        .rule(stage(OUTCOME, "outcome", [Reply::content(prose)]))
        .rule(stage(CONVENTIONS, "conventions", [empty(&FILES)]))
        .rule(stage(AUDIT, "audit", [empty(&FILES)]))
        .rule(stage(
            FOCUSED,
            "focused",
            [ScriptedVerifier::new()
                .confirms(
                    "generic-investigator #1/0",
                    FILE,
                    2,
                    3,
                    "values above 65535 wrap",
                )
                .reply()],
        ))
        .rule(stage(
            VERIFIER,
            "verifier",
            [decisions(json!([decision(
                "generic-investigator #1/0",
                "verified",
                json!([citation(FILE, 2, 3)]),
                None
            )]))],
        ));
    let (out, server) = run(script).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(server.unmatched().is_empty());
    assert_eq!(server.served_by("repair").len(), 1);
    // The markers did pass through the run: the report names the marked path.
    assert!(out.stdout.contains("PATHMARK-a81c"));
    let lines = diagnostics_only(&out.stderr, &MARKERS, &LABELS);
    assert!(has(&lines, None, "review-started"));
    assert!(has(
        &lines,
        Some("outcome-investigator #1"),
        "repair-attempted"
    ));
    assert!(has(
        &lines,
        Some("generic-investigator #1"),
        "stage-completed"
    ));
    assert!(has(&lines, Some("verifier"), "focused-verification"));
    assert!(has(&lines, None, "review-finished"));
    // Counts are numbers: the change has two hunks, and a completed lane read source.
    let completed = lines
        .iter()
        .find(|d| d["reason"] == "stage-completed" && d["label"] == "generic-investigator #1")
        .unwrap();
    assert_eq!(completed["hunkCount"], 2);
    assert!(completed["sourceCount"].as_u64().unwrap() >= 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_coverage_mismatch_after_retry_keeps_paths_off_stderr() {
    let alias = format!("./{FILE}");
    let bad = || {
        Reply::content(candidates_reply(
            json!([]),
            true,
            &["README.md", FILE, alias.as_str()],
        ))
    };
    let script = Script::new()
        .rule(stage(GENERIC, "generic", [bad(), bad()]))
        .rule(stage(OUTCOME, "outcome", [empty(&FILES)]))
        .rule(stage(CONVENTIONS, "conventions", [empty(&FILES)]));
    let (out, server) = run(script).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(server.served_by("generic").len(), 2, "one retry");
    // The exact failure message, with paths, is for the report and stdout only.
    let report = out.json();
    assert_eq!(
        report["messages"][0],
        format!(
            "generic-investigator #1 coverage mismatch after retry.\nUnexpected files: ./{FILE}"
        )
    );
    let lines = diagnostics_only(&out.stderr, &MARKERS, &LABELS);
    assert!(has(
        &lines,
        Some("generic-investigator #1"),
        "coverage-retry"
    ));
    assert!(has(
        &lines,
        Some("generic-investigator #1"),
        "coverage-mismatch"
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_error_keeps_its_raw_text_off_stderr() {
    let error = json!({"error": {"message": format!("PROVIDERMARK-77ee upstream failed while reading {FILE}"),
        "type": "server_error", "code": null}});
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "generic",
            [Reply::content(candidates_reply(
                json!([candidate(FILE, 2, 3, "values above 65535 wrap")]),
                true,
                &FILES,
            ))],
        ))
        .rule(stage(OUTCOME, "outcome", [empty(&FILES)]))
        .rule(stage(CONVENTIONS, "conventions", [empty(&FILES)]))
        .rule(
            Rule::when(Match::any_message_contains(VERIFIER))
                .named("verifier")
                .always(Reply::raw(500, error.to_string()).header("Retry-After", "0")),
        );
    let (out, server) = run(script).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        server.served_by("verifier").len() > 1,
        "retried before failing"
    );
    let report = out.json();
    assert_eq!(report["failures"][0]["kind"], "provider-error");
    let lines = diagnostics_only(&out.stderr, &MARKERS, &LABELS);
    assert!(has(&lines, Some("verifier"), "provider-error"));
    assert!(has(&lines, None, "review-finished"));
}
