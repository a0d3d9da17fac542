//! Reads that tell the truth (issue 10, item 4): a 2 MB minified one-line file edited in
//! three places is "seen" only when the edited bytes were shown — never because the
//! first 32 KiB of its one line were.

use serde_json::{Value, json};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_testkit::synth::{MINIFIED_PATH, SynthRepo, SynthSpec, generate_temp};
use vouch_workspace_tests::{candidates_reply, perfect, review_json, workspace};

const INVESTIGATOR: &str = "Instance: generic-investigator #1\n";
const AUDIT: &str = "Instance: clean-result-audit #1\n";

fn receipt() -> Reply {
    Reply::content(candidates_reply(json!([]), true, &[MINIFIED_PATH]))
}

/// Reviews the change with the audited composition (tools on); the investigator and the
/// clean-result audit each make `calls` in one turn (the patch, two cut 8 KiB lines, is
/// over the inline budget), then answer with a complete receipt and no candidate.
async fn review(repo: &SynthRepo, calls: Vec<(&str, String)>) -> (Value, ScriptedServer) {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains(AUDIT))
                .named("audit")
                .replies([Reply::tool_calls(calls.clone()), receipt()]),
        )
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .replies([Reply::tool_calls(calls), receipt()]),
        );
    let server = ScriptedServer::start(script).await;
    let manifest = workspace()
        .join("tests/data/e2e/audited.toml")
        .display()
        .to_string();
    let out = review_json(
        &repo.path,
        &repo.base,
        &repo.head,
        &server.base_url(),
        "scripted",
        &["--manifest", &manifest],
        &[],
    )
    .await;
    (out.json(), server)
}

fn minified() -> (tempfile::TempDir, SynthRepo) {
    generate_temp(&SynthSpec {
        minified: true,
        ..SynthSpec::new(0)
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_line_read_only_from_its_start_is_not_seen_and_the_review_is_not_clean() {
    let (_dir, repo) = minified();
    let read_start = json!({"path": MINIFIED_PATH}).to_string();
    let (report, server) = review(&repo, vec![("read_file", read_start)]).await;
    let results = server.served_by("investigator");
    assert!(
        results.iter().any(|r| r
            .contents_of("tool")
            .iter()
            .any(|t| t.contains("line 1 is longer than that and was cut"))),
        "the model was told the line was cut"
    );
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
    let limitations = report["limitations"].to_string();
    assert!(
        limitations.contains(MINIFIED_PATH),
        "the unseen file is named: {limitations}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_line_whose_edits_were_read_by_bytes_is_seen_and_may_be_clean() {
    let (_dir, repo) = minified();
    let snap = vouch_git::snapshot(&repo.path, Some(&repo.base), &repo.head).unwrap();
    let long = &snap.file(MINIFIED_PATH).unwrap().long_lines[0];
    assert_eq!(long.changed.len(), 3);
    let calls: Vec<(&str, String)> = long
        .changed
        .iter()
        .map(|&(start, _)| {
            let args = json!({"path": MINIFIED_PATH, "start_line": 1, "start_byte": start - 100});
            ("read_file", args.to_string())
        })
        .collect();
    let (report, _server) = review(&repo, calls).await;
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["limitations"], json!([]), "{report:#}");
    assert_eq!(
        report["stages"][0]["lineSpans"].as_array().unwrap().len(),
        3
    );
}

/// Issue 28 item 1: without tools, the changed bytes of a 2 MB one-line file are given
/// inline in byte windows across shards (each shard's receipt is exactly its expected
/// list), so the file is seen and the review can end clean with full coverage.
#[tokio::test(flavor = "multi_thread")]
async fn without_tools_a_long_lines_changed_bytes_are_given_in_byte_windows() {
    let (_dir, repo) = minified();
    // Every stage answers a complete receipt of exactly its expected list.
    let server =
        ScriptedServer::start(Script::new().rule(Rule::when(Match::any()).always(perfect()))).await;
    let manifest = workspace()
        .join("tests/data/e2e/sharded-no-tools.toml")
        .display()
        .to_string();
    let out = review_json(
        &repo.path,
        &repo.base,
        &repo.head,
        &server.base_url(),
        "scripted",
        &["--manifest", &manifest],
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(
        report["filesReviewed"],
        json!([MINIFIED_PATH]),
        "{report:#}"
    );
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["opinion"]["clean"], true);
    let windows = server
        .chat_requests()
        .iter()
        .flat_map(|r| r.contents_of("user"))
        .filter(|u| u.contains(&format!("<line path=\"{MINIFIED_PATH}\"")))
        .count();
    assert!(windows >= 1, "the changed bytes were given in byte windows");
}
