//! Execution failure, invalid output after repair and cancellation never enter the
//! coverage retry (rule 8).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{Output, vouch_bin, workspace};

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn execution_and_repair_failures_never_enter_retry() {
    let change = small_change();
    let script = panel_script(
        vec![
            // An execution failure: the endpoint refuses the reviewer's request.
            Rule::when(first_execution("bug-review #1")).reply(Reply::status(400)),
            // A repair process failure: the reply needs repair and the repair call fails.
            Rule::when(repair_of("[marker-i2]"))
                .named("repair")
                .reply(Reply::status(400)),
            Rule::when(first_execution("instructions-review #2"))
                .reply(Reply::content("Reviewed [marker-i2], no JSON here.")),
            Rule::when(Match::any_message_contains(RETRY_HEADING))
                .named("retry")
                .always(Reply::content(receipt(true, &SMALL))),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["findings"], json!([]));
    let mut failures: Vec<(String, String)> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["stage"].as_str().unwrap().to_string(),
                f["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    failures.sort();
    assert_eq!(
        failures,
        [
            ("bug-review #1".to_string(), "provider-error".to_string()),
            (
                "instructions-review #2".to_string(),
                "provider-error".to_string()
            ),
        ]
    );
    for label in ["bug-review #1", "instructions-review #2"] {
        let s = stage(&report, label);
        assert_eq!(s["status"], "failed", "{label}");
        assert_eq!(s["retried"], false, "{label}");
    }
    assert!(server.served_by("retry").is_empty(), "no retry request");
    assert_eq!(server.served_by("repair").len(), 1);
    assert_only_retried(&server, &[]);
    let lines = diagnostics(&out, &SMALL);
    assert!(diagnosed(&lines, "coverage-retry").is_empty());
    assert_eq!(report["messages"], json!([]), "no coverage message");
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_output_after_repair_never_enters_retry() {
    let change = small_change();
    let script = panel_script(
        vec![
            Rule::when(repair_of("[marker-o1]"))
                .named("repair")
                .reply(Reply::content("Sorry, I cannot produce JSON.")),
            Rule::when(first_execution("objective-review #1")).reply(Reply::content(
                "The objective is met [marker-o1]. Only CHANGELOG.md was checked.",
            )),
            Rule::when(Match::any_message_contains(RETRY_HEADING))
                .named("retry")
                .always(Reply::content(receipt(true, &SMALL))),
        ],
        &SMALL,
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["failures"][0]["kind"], "invalid-output");
    assert_eq!(report["failures"][0]["stage"], "objective-review #1");
    let s = stage(&report, "objective-review #1");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["retried"], false);
    assert_eq!(s["repaired"], true, "its one repair ran");
    assert_eq!(server.served_by("repair").len(), 1, "exactly one repair");
    assert!(server.served_by("retry").is_empty());
    assert_only_retried(&server, &[]);
    let lines = diagnostics(&out, &SMALL);
    assert!(diagnosed(&lines, "coverage-retry").is_empty());
    let mut invalid = diagnosed(&lines, "invalid-output");
    invalid.dedup();
    assert_eq!(invalid, ["objective-review #1"]);
}

/// `vouch review` started with the panel manifest, SIGINT sent once the first four
/// reviewers' requests are in flight (the panel runs four at once).
async fn interrupt_while_reviewers_answer(change: &Change, server: &ScriptedServer) -> Output {
    let repo = change.repo.path().display().to_string();
    let manifest = workspace().join("manifests/panel.toml");
    let mut command = tokio::process::Command::new(vouch_bin());
    command
        .args(["review", "--repo", &repo, "--base", &change.base])
        .args([
            "--head",
            &change.head,
            "--format",
            "json",
            "--model",
            "scripted",
        ])
        .arg("--manifest")
        .arg(&manifest)
        .args(["--base-url", &server.base_url()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") || key.starts_with("VOUCH_") {
            command.env_remove(key);
        }
    }
    command.env("CI", "true");
    let child = command.spawn().expect("starting vouch");
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.chat_requests().len() < 4 {
        assert!(Instant::now() < deadline, "the reviewers never asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = child.id().expect("vouch is running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let out = child.wait_with_output().await.expect("vouch exits");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_aborts_drops_in_flight_requests_and_starts_no_retry() {
    let change = small_change();
    // Every reply would be a mismatched receipt, but none arrives before Ctrl-C.
    let slow = Reply::content(receipt(true, &["src/lib.rs"])).delay(Duration::from_secs(600));
    let server =
        ScriptedServer::start(Script::new().rule(Rule::when(Match::any()).always(slow))).await;
    let out = interrupt_while_reviewers_answer(&change, &server).await;
    assert_eq!(out.code, 130, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "aborted");
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        report["failures"],
        json!([]),
        "a dropped request is no failure"
    );
    for s in report["stages"].as_array().unwrap() {
        assert_eq!(s["status"], "cancelled", "{s:#}");
        assert_eq!(s["retried"], false, "{s:#}");
    }
    assert_eq!(
        server.chat_requests().len(),
        4,
        "nothing was sent after Ctrl-C: no retry, no repair, no fifth reviewer"
    );
    assert!(
        server
            .chat_requests()
            .iter()
            .all(|r| !task(r).contains(RETRY_HEADING))
    );
    let lines = diagnostics(&out, &SMALL);
    assert!(diagnosed(&lines, "coverage-retry").is_empty());
    assert!(lines.iter().any(|d| d["reason"] == "cancelled"));
}
