//! The reviewer coverage contract through `vouch review --manifest manifests/panel.toml`:
//! the real binary, the shipped five-reviewer panel, real git repositories and real HTTP
//! to a scripted OpenAI-compatible server.
//!
//! Requests are told apart by content, as a real endpoint would see them: a reviewer
//! execution's user message starts with `Instance: <label>`, a coverage retry carries
//! the host's `## Coverage retry` section, and an isolated repair has the host's repair
//! system prompt and nothing of the reviewer's task (so each scripted prose reply holds a
//! unique marker the repair rule can match). Counting requests per instance is how the
//! tests prove that siblings are never rerun.
//!
//! Host-level tests of the same contract (progress events, presenters, cancellation at
//! exact points, the reviewer task snapshot) are in `crates/host/tests/panel_coverage.rs`.

mod errors;
mod receipts;
mod repair;
mod replay;

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, RecordedRequest, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{Output, candidates_reply, run_vouch, workspace};

/// The panel's instance labels, in manifest order.
pub const LABELS: [&str; 5] = [
    "instructions-review #1",
    "instructions-review #2",
    "bug-review #1",
    "bug-review #2",
    "objective-review #1",
];

/// The canonical list of [`small_change`].
pub const SMALL: [&str; 4] = [
    "AGENTS.md",
    "CHANGELOG.md",
    "docs/verification/example.md",
    "src/lib.rs",
];

/// The start of the host's coverage-retry section.
pub const RETRY_HEADING: &str = "## Coverage retry";

/// The start of the isolated repair call's system prompt.
pub const REPAIR_SYSTEM: &str = "You repair a reviewer's final answer";

/// A reviewed range.
pub struct Change {
    pub repo: TestRepo,
    pub base: String,
    pub head: String,
}

/// Four changed files (one added), written in unsorted order; `src/lib.rs` line 2 is the
/// changed line.
pub fn small_change() -> Change {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n")
        .write("CHANGELOG.md", "# Changelog\n")
        .write("AGENTS.md", "# Agents\n\nKeep CHANGELOG.md current.\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")
        .write(
            "docs/verification/example.md",
            "# Example\n\nanswer() is 42.\n",
        )
        .write("CHANGELOG.md", "# Changelog\n\n- answer is 42\n")
        .write(
            "AGENTS.md",
            "# Agents\n\nKeep CHANGELOG.md current.\nDocument examples.\n",
        );
    let head = repo.commit("answer 42 and document it");
    Change { repo, base, head }
}

/// Runs `vouch review` with the shipped panel composition on `change` against `server`
/// (JSON report on stdout unless `extra` says otherwise).
pub async fn review(change: &Change, server: &ScriptedServer, extra: &[&str]) -> Output {
    let repo = change.repo.path().display().to_string();
    let manifest = workspace()
        .join("manifests/panel.toml")
        .display()
        .to_string();
    let url = server.base_url();
    let mut args = vec![
        "review",
        "--repo",
        &repo,
        "--base",
        &change.base,
        "--head",
        &change.head,
        "--manifest",
        &manifest,
        "--base-url",
        &url,
        "--model",
        "scripted",
    ];
    if !extra.contains(&"--format") {
        args.extend(["--format", "json"]);
    }
    // Every instance starts at once, so one that fails never keeps another from starting
    // (no stage starts after a failure): these tests count each instance's executions.
    if !extra.contains(&"--concurrency") {
        args.extend(["--concurrency", "8"]);
    }
    args.extend_from_slice(extra);
    run_vouch(&args, &[]).await
}

/// A reviewer reply without candidates and with this receipt.
pub fn receipt(complete: bool, files: &[&str]) -> String {
    candidates_reply(json!([]), complete, files)
}

/// A first (not retried) execution of `label`.
pub fn first_execution(label: &str) -> Match {
    Match::user_contains(format!("Instance: {label}\n"))
        .and(Match::not(Match::user_contains(RETRY_HEADING)))
}

/// The coverage retry of `label`.
pub fn retry_execution(label: &str) -> Match {
    Match::user_contains(format!("Instance: {label}\n")).and(Match::user_contains(RETRY_HEADING))
}

/// An isolated repair whose prior reply contains `marker`.
pub fn repair_of(marker: &str) -> Match {
    Match::system_contains(REPAIR_SYSTEM).and(Match::user_contains(marker))
}

/// `overrides` first, then an exact receipt (`expected`) for every instance's first
/// execution, in rules named after the labels.
pub fn panel_script(overrides: Vec<Rule>, expected: &[&str]) -> Script {
    let mut script = Script::new();
    for rule in overrides {
        script = script.rule(rule);
    }
    for label in LABELS {
        script = script.rule(
            Rule::when(first_execution(label))
                .named(label)
                .reply(Reply::content(receipt(true, expected))),
        );
    }
    script
}

/// The user message of a chat request (its task).
pub fn task(request: &RecordedRequest) -> String {
    request
        .contents_of("user")
        .first()
        .cloned()
        .unwrap_or_default()
}

/// Whether `request` is an execution (first or retry) of `label`.
pub fn is_instance(request: &RecordedRequest, label: &str) -> bool {
    task(request).contains(&format!("\nInstance: {label}\n"))
}

/// `(first executions, coverage retries)` the server received for `label`.
pub fn executions(server: &ScriptedServer, label: &str) -> (usize, usize) {
    let mine: Vec<_> = server
        .chat_requests()
        .into_iter()
        .filter(|r| is_instance(r, label))
        .collect();
    let retries = mine
        .iter()
        .filter(|r| task(r).contains(RETRY_HEADING))
        .count();
    (mine.len() - retries, retries)
}

/// Every isolated repair request, in arrival order.
pub fn repairs(server: &ScriptedServer) -> Vec<RecordedRequest> {
    server
        .chat_requests()
        .into_iter()
        .filter(|r| r.system().is_some_and(|s| s.starts_with(REPAIR_SYSTEM)))
        .collect()
}

/// Asserts every instance's `(first executions, retries)`: `retried` got `(1, 1)`, every
/// other instance `(1, 0)`.
pub fn assert_only_retried(server: &ScriptedServer, retried: &[&str]) {
    for label in LABELS {
        let want = if retried.contains(&label) {
            (1, 1)
        } else {
            (1, 0)
        };
        assert_eq!(
            executions(server, label),
            want,
            "{label}: (first executions, retries)"
        );
    }
}

/// Stderr parsed as diagnostic lines; panics when a line is anything else or names one
/// of `paths` (stderr carries only structured diagnostics, never paths).
pub fn diagnostics(out: &Output, paths: &[&str]) -> Vec<Value> {
    out.stderr
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|_| panic!("stderr line is not a diagnostic: {line}"));
            assert!(
                v.get("reason").is_some() && v.get("jobId").is_some(),
                "{line}"
            );
            for p in paths {
                assert!(!line.contains(p), "a path leaked to stderr: {line}");
            }
            v
        })
        .collect()
}

/// Labels of the diagnostic lines with `reason`, in order.
pub fn diagnosed(lines: &[Value], reason: &str) -> Vec<String> {
    lines
        .iter()
        .filter(|d| d["reason"] == reason)
        .map(|d| d["label"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The report's stage record of `label`.
pub fn stage<'a>(report: &'a Value, label: &str) -> &'a Value {
    report["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["label"] == label))
        .unwrap_or_else(|| panic!("no stage {label} in {report:#}"))
}

/// The per-instance coverage the report carries: `(complete, missing, unexpected,
/// retried)` of the final receipt comparison.
pub fn coverage_of(report: &Value, label: &str) -> (bool, Value, Value, bool) {
    let s = stage(report, label);
    let c = &s["coverage"];
    (
        c["complete"].as_bool().unwrap_or_else(|| panic!("{s:#}")),
        c["missingFiles"].clone(),
        c["unexpectedFiles"].clone(),
        s["retried"].as_bool().unwrap(),
    )
}
