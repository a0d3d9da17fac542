//! Responsive at any size (issue 10, item 5): SIGTERM while a large change is still being
//! prepared (before any request reaches the model) ends the review as `aborted`, with
//! its report written.

use std::time::Duration;

use serde_json::Value;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_testkit::synth::{SynthSpec, generate};
use vouch_workspace_tests::{vouch_bin, workspace};

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_while_preparing_a_large_change_ends_it_aborted_with_its_report_written() {
    let dir = tempfile::tempdir().unwrap();
    let repo = generate(&dir.path().join("repo"), &SynthSpec::new(5_000));
    let server = ScriptedServer::start(
        Script::new().rule(Rule::when(Match::any()).always(Reply::content("{}"))),
    )
    .await;
    let report = dir.path().join("report.json");
    let manifest = workspace().join("tests/data/e2e/minimal.toml");
    let child = tokio::process::Command::new(vouch_bin())
        .args(["review", "--repo"])
        .arg(&repo.path)
        .args([
            "--base", &repo.base, "--head", &repo.head, "--format", "json",
        ])
        .args(["--base-url", &server.base_url(), "--model", "scripted"])
        .arg("--manifest")
        .arg(&manifest)
        .arg("--out")
        .arg(&report)
        .env("CI", "true")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signal as soon as it catches SIGTERM: its handlers are installed just before the
    // snapshot, so it is preparing the change then, on a fast machine as on a slow one.
    let pid = child.id().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !catches_sigterm(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "vouch never caught SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(
        server.request_count(),
        0,
        "the change is still being prepared: nothing has reached the endpoint"
    );
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("vouch did not end after SIGTERM")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert_eq!(
        server.request_count(),
        0,
        "no request was sent after the signal"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&report).expect("report written"))
        .expect("the report is JSON");
    assert_eq!(written["opinion"]["outcome"], "aborted", "{written:#}");
    assert_eq!(written["opinion"]["clean"], false);
    assert_eq!(written["head"]["sha"], repo.head.as_str());
    assert!(
        written["messages"]
            .to_string()
            .contains("cancelled while the change was being prepared"),
        "{written:#}"
    );
}

/// Whether process `pid` has a handler for SIGTERM (Linux: the `SigCgt` mask of
/// `/proc/PID/status`, bit 15 − 1).
fn catches_sigterm(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (15 - 1)) != 0)
}
