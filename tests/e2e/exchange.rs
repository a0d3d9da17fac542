//! `vouch review --cache`, `--record` and `--replay`: the response cache answers a
//! repeated review without a request, and the committed recording replays offline.
//!
//! The recording under `tests/data/recordings/review-minimal/` is re-made with
//! `VOUCH_UPDATE_RECORDINGS=1 cargo test --test e2e exchange::committed_recording_replays_offline`
//! (docs/eval.md).

use std::path::{Path, PathBuf};

use serde_json::json;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Script, ScriptedServer};
use vouch_workspace_tests::{
    GENERIC, ScriptedReview, ScriptedVerifier, VERIFIER, candidate, read_lines, receipt, run_vouch,
    stage, vouch_command, workspace,
};

const LIB_BASE: &str = "/// Parses a port number.\npub fn parse_port(s: &str) -> Option<u16> {\n    s.trim().parse().ok()\n}\n";
const LIB_HEAD: &str = "/// Parses a port number.\npub fn parse_port(s: &str) -> Option<u16> {\n    let n: u32 = s.trim().parse().ok()?;\n    Some(n as u16)\n}\n";

/// A one-file change with one defect; its SHAs are the same on every machine.
fn repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", LIB_BASE);
    let base = repo.commit("base");
    repo.write("src/lib.rs", LIB_HEAD);
    let head = repo.commit("widen port parsing");
    (repo, base, head)
}

/// The investigator reads the file and proposes one candidate; the verifier verifies it.
fn script() -> Script {
    const CLAIM: &str = "ports above 65535 wrap silently";
    let candidates = json!([candidate("src/lib.rs", 3, 4, CLAIM)]);
    Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [
                read_lines("src/lib.rs", 1, 5),
                receipt(candidates, &["src/lib.rs"]),
            ],
        ))
        .rule(
            ScriptedVerifier::new()
                .confirms("generic-investigator #1/0", "src/lib.rs", 3, 4, CLAIM)
                .rule(),
        )
}

/// The minimal composition, relative to the workspace.
const MINIMAL: &str = "tests/data/e2e/minimal.toml";

fn minimal() -> String {
    workspace().join(MINIMAL).display().to_string()
}

/// The committed recording of [`script`]'s review of [`repo`].
fn recording() -> PathBuf {
    workspace().join("tests/data/recordings/review-minimal")
}

fn findings_of(report: &serde_json::Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["claim"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cache_answers_a_repeated_review_without_any_request() {
    let (repo, base, head) = repo();
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().display().to_string();
    let server = ScriptedServer::start(script()).await;
    let cached = ScriptedReview::new(&repo, &base, &head, &server)
        .manifest(MINIMAL)
        .args(&["--cache", &cache_dir])
        .envs(&[("OPENAI_API_KEY", "sk-CACHE-MARKER")]);
    let first = cached.run().await;
    assert_eq!(first.code, 1, "{}\n{}", first.stdout, first.stderr);
    let sent = server.chat_requests().len();
    assert_eq!(sent, 3, "investigator twice, verifier once");
    let second = cached.run().await;
    assert_eq!(second.code, 1, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(
        server.chat_requests().len(),
        sent,
        "the second review sent a request"
    );
    assert_eq!(findings_of(&first.json()), findings_of(&second.json()));
    // The key is sent as a header, never stored.
    for entry in walk(cache.path()) {
        let text = std::fs::read_to_string(&entry).unwrap();
        assert!(!text.contains("sk-CACHE-MARKER"), "{}", entry.display());
    }
    // Without --cache the same review asks the endpoint again.
    let uncached = ScriptedReview::new(&repo, &base, &head, &server)
        .manifest(MINIMAL)
        .run()
        .await;
    assert_eq!(
        uncached.code, 2,
        "the script's replies are used up: {}",
        uncached.stdout
    );
    assert!(server.chat_requests().len() > sent);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Re-makes the committed recording when `VOUCH_UPDATE_RECORDINGS=1`.
async fn update_recording_if_asked(repo: &TestRepo, base: &str, head: &str) {
    if std::env::var_os("VOUCH_UPDATE_RECORDINGS").is_none_or(|v| v != "1") {
        return;
    }
    let dir = recording();
    let _ = std::fs::remove_dir_all(&dir);
    let server = ScriptedServer::start(script()).await;
    let out_dir = dir.display().to_string();
    let out = ScriptedReview::new(repo, base, head, &server)
        .manifest(MINIMAL)
        .args(&["--concurrency", "1", "--record", &out_dir])
        .run()
        .await;
    assert_eq!(
        out.code, 1,
        "recording failed:\n{}\n{}",
        out.stdout, out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn committed_recording_replays_offline() {
    let (repo, base, head) = repo();
    update_recording_if_asked(&repo, &base, &head).await;
    // No server at all: every answer comes from the recording.
    let manifest = minimal();
    let replay = recording().display().to_string();
    let repo_path = repo.path().display().to_string();
    let out = replay_review(&repo_path, (&base, &head), &manifest, &replay).await;
    assert_eq!(
        out.code, 1,
        "the recorded review no longer replays; if a prompt or policy change is intended, run VOUCH_UPDATE_RECORDINGS=1 cargo test --test e2e exchange::committed_recording_replays_offline and commit tests/data/recordings\n{}\n{}",
        out.stdout, out.stderr
    );
    let report = out.json();
    assert_eq!(
        findings_of(&report),
        [(
            "src/lib.rs".to_owned(),
            "ports above 65535 wrap silently".to_owned()
        )]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_meeting_an_unrecorded_request_fails_with_the_diff() {
    let (repo, base, head) = repo();
    // A recording whose first request differs from what vouch sends now, as after a
    // prompt change: one word of the first user message is altered.
    let changed = tempfile::tempdir().unwrap();
    let mut altered = false;
    for entry in std::fs::read_dir(recording()).unwrap().flatten() {
        let mut record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.path()).unwrap()).unwrap();
        if record["seq"] == 1 {
            let messages = record["request"]["messages"].as_array_mut().unwrap();
            let user = messages.iter_mut().find(|m| m["role"] == "user").unwrap();
            let text = user["content"].as_str().unwrap().to_owned();
            user["content"] = json!(format!("{text}\nAn extra recorded line."));
            altered = true;
        }
        std::fs::write(
            changed.path().join(entry.file_name()),
            serde_json::to_string_pretty(&record).unwrap(),
        )
        .unwrap();
    }
    assert!(altered);
    let manifest = minimal();
    let replay = changed.path().display().to_string();
    let repo_path = repo.path().display().to_string();
    let out = replay_review(&repo_path, (&base, &head), &manifest, &replay).await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    // Stdout is the JSON format's failure document; the message is what a person sees
    // (shown with --nocapture).
    let failure = out.json();
    assert_eq!(failure["schemaVersion"], "vouch.review-failure/1");
    let message = failure["message"].as_str().unwrap_or_default().to_string();
    println!("{message}");
    let out = vouch_workspace_tests::Output {
        stdout: message,
        ..out
    };
    assert!(
        out.stdout.contains("met a request that was not recorded"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("closest recorded request is 0001.json"),
        "{}",
        out.stdout
    );
    // The recorded side of the diff carries the altered line, the sent side does not.
    let removed: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    let added: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert!(
        removed
            .iter()
            .any(|l| l.contains("An extra recorded line.")),
        "{}",
        out.stdout
    );
    assert!(
        added.iter().all(|l| !l.contains("An extra recorded line.")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("--- recorded 0001.json"),
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn record_refuses_a_folder_that_holds_files() {
    let (repo, base, head) = repo();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let server = ScriptedServer::start(script()).await;
    let rec = dir.path().display().to_string();
    let out = ScriptedReview::new(&repo, &base, &head, &server)
        .args(&["--record", &rec])
        .run()
        .await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("not empty"), "{}", out.stdout);
    assert!(server.chat_requests().is_empty());
}

/// A recording cut short by Ctrl-C says so: its replay is refused at once (exit 3) as
/// incomplete, naming the cancelled recording and saying to record it again — not
/// "the review no longer sends the recorded requests", which blamed the review.
#[tokio::test(flavor = "multi_thread")]
async fn replay_of_a_recording_cut_short_by_ctrl_c_says_it_is_incomplete() {
    const CLAIM: &str = "ports above 65535 wrap silently";
    let (repo, base, head) = repo();
    // The verifier's answer never comes in time: the review is interrupted while it waits.
    let slow_verifier = ScriptedVerifier::new()
        .confirms("generic-investigator #1/0", "src/lib.rs", 3, 4, CLAIM)
        .reply()
        .delay(std::time::Duration::from_secs(120));
    let candidates = json!([candidate("src/lib.rs", 3, 4, CLAIM)]);
    let server = ScriptedServer::start(
        Script::new()
            .rule(stage(
                GENERIC,
                "investigator",
                [
                    read_lines("src/lib.rs", 1, 5),
                    receipt(candidates, &["src/lib.rs"]),
                ],
            ))
            .rule(stage(VERIFIER, "verifier", [slow_verifier])),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let (repo_path, manifest, rec_arg) = (
        repo.path().display().to_string(),
        minimal(),
        rec.display().to_string(),
    );
    let url = server.base_url();
    let args = [
        "review",
        "--repo",
        &repo_path,
        "--base",
        &base,
        "--head",
        &head,
        "--format",
        "json",
        "--manifest",
        &manifest,
        "--base-url",
        &url,
        "--model",
        "scripted",
        "--concurrency",
        "1",
        "--record",
        &rec_arg,
    ];
    let child = vouch_command(&args, &[]).spawn().unwrap();
    // Interrupt once the investigator's two exchanges are recorded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !rec.join("0002.json").exists() {
        assert!(std::time::Instant::now() < deadline, "nothing was recorded");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let recorded = child.wait_with_output().await.unwrap();
    assert_eq!(
        recorded.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );

    let out = replay_review(&repo_path, (&base, &head), &manifest, &rec_arg).await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let failure = out.json();
    let message = failure["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!(
            "--replay {rec_arg}: the recording is incomplete: the recorded review was cancelled \
             (Ctrl-C or SIGTERM) before it ended, so it holds only the 2 exchange(s) made until \
             then; record the review again with --record into a new or empty folder"
        )
    );
}

/// `vouch review` of `base..head` in `repo_path` with `manifest`, one stage at a time,
/// every answer from the recording in `replay`.
async fn replay_review(
    repo_path: &str,
    (base, head): (&str, &str),
    manifest: &str,
    replay: &str,
) -> vouch_workspace_tests::Output {
    run_vouch(
        &[
            "review",
            "--repo",
            repo_path,
            "--base",
            base,
            "--head",
            head,
            "--format",
            "json",
            "--manifest",
            manifest,
            "--concurrency",
            "1",
            "--replay",
            replay,
        ],
        &[],
    )
    .await
}
