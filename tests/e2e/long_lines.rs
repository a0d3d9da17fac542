//! Reads that tell the truth (issue 10, item 4): a 2 MB minified one-line file edited in
//! three places is "seen" only when the edited bytes were shown — never because the
//! first 32 KiB of its one line were.

use serde_json::{Value, json};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_testkit::synth::{MINIFIED_PATH, SynthRepo, SynthSpec, generate_temp};
use vouch_workspace_tests::{candidates_reply, perfect, review_json, workspace};

const INVESTIGATOR: &str = "Instance: generic-investigator #1";
const AUDIT: &str = "Instance: clean-result-audit #1";

fn receipt() -> Reply {
    Reply::content(candidates_reply(json!([]), true, &[MINIFIED_PATH]))
}

/// Each execution makes `calls` in its first turn, then answers a complete receipt with
/// no candidate.
fn reads_then_receipt(calls: Vec<(&'static str, String)>) -> Reply {
    Reply::computed(move |body| {
        let answered = body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        if answered {
            receipt()
        } else {
            Reply::tool_calls(calls.clone())
        }
    })
}

/// Reviews the change with the audited composition (tools on); every execution of the
/// investigator and the clean-result audit (a lane may run as shards: the file's two
/// long lines are each about what one read shows of a line) makes `calls`, then answers
/// with a complete receipt and no candidate.
async fn review(repo: &SynthRepo, calls: Vec<(&'static str, String)>) -> (Value, ScriptedServer) {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains(AUDIT))
                .named("audit")
                .always(reads_then_receipt(calls.clone())),
        )
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("investigator")
                .always(reads_then_receipt(calls)),
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
    // The edited places, at head and (an in-place edit: the same places) at base: text
    // replaced inside a long line is shown by the base line it was replaced in.
    let calls: Vec<(&'static str, String)> = snap
        .file(MINIFIED_PATH)
        .unwrap()
        .long_lines
        .iter()
        .flat_map(|long| {
            assert_eq!(long.changed.len(), 3);
            let revision = long.revision.as_str();
            long.changed.iter().map(move |&(start, _)| {
                let args = json!({"path": MINIFIED_PATH, "start_line": 1,
                    "start_byte": start - 100, "revision": revision});
                ("read_file", args.to_string())
            })
        })
        .collect();
    assert_eq!(calls.len(), 6, "three places at head and at base");
    let (report, _server) = review(&repo, calls.clone()).await;
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["limitations"], json!([]), "{report:#}");
    assert_eq!(
        report["stages"][0]["lineSpans"].as_array().unwrap().len(),
        6
    );
    // The head places alone leave the replaced text unseen.
    let head_only: Vec<(&'static str, String)> = calls
        .into_iter()
        .filter(|(_, args)| args.contains("\"head\""))
        .collect();
    assert_eq!(head_only.len(), 3);
    let (report, _server) = review(&repo, head_only).await;
    assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
}

/// A change that deletes text from inside a 300 KB one-line file, and one other file.
fn deleted_inside_a_long_line() -> (vouch_testkit::git::TestRepo, String, String) {
    let repo = vouch_testkit::git::TestRepo::new();
    let body: String = (0..20_000).map(|i| format!("var v{i}={i};")).collect();
    let middle = body.len() / 2;
    repo.write(
        "app.js",
        format!("{}{REMOVED}{}\n", &body[..middle], &body[middle..]),
    );
    let base = repo.commit("base");
    repo.write("app.js", format!("{body}\n"));
    let head = repo.commit("drop the access checks");
    (repo, base, head)
}

/// Reviews the change of [`deleted_inside_a_long_line`] against `script`, with
/// `--tools tools`.
async fn review_deletion(
    script: Script,
    tools: &str,
) -> (vouch_workspace_tests::Output, ScriptedServer) {
    let (repo, base, head) = deleted_inside_a_long_line();
    let server = ScriptedServer::start(script).await;
    let out = review_json(
        repo.path(),
        &base,
        &head,
        &server.base_url(),
        "scripted",
        &["--tools", tools],
        &[],
    )
    .await;
    (out, server)
}

/// The text the change deletes from inside the long line.
const REMOVED: &str = "checkAuth(user);requireAdmin(user);";

/// Text deleted from inside a long line is shown from the base line (tools off): some
/// request carries it, and only then is the file reviewed and the review clean.
#[tokio::test(flavor = "multi_thread")]
async fn without_tools_text_deleted_inside_a_long_line_is_shown_from_base() {
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let (out, server) = review_deletion(script, "off").await;
    let report = out.json();
    assert_eq!(out.code, 0, "{report:#}\n{}", out.stderr);
    assert_eq!(report["filesReviewed"], json!(["app.js"]), "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    let shown = server
        .chat_requests()
        .iter()
        .flat_map(|r| r.contents_of("user"))
        .filter(|u| u.contains(REMOVED))
        .count();
    assert!(shown >= 1, "the deleted text was shown to the model");
}

/// With tools, a model that reads only the head side of the edit never sees the text
/// that was deleted: the file is not fully seen and the review is not clean.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_line_read_only_at_head_leaves_text_deleted_from_it_unseen() {
    let (repo, base, head) = deleted_inside_a_long_line();
    let snap = vouch_git::snapshot(repo.path(), Some(&base), &head).unwrap();
    let head_line = snap
        .file("app.js")
        .unwrap()
        .long_lines
        .iter()
        .find(|l| l.revision == vouch_core::Revision::Head);
    let edit = head_line.expect("the head line changed").changed[0].0;
    let read = json!({"path": "app.js", "start_line": 1, "start_byte": edit.saturating_sub(200)});
    let calls = vec![("read_file", read.to_string())];
    let script = Script::new().rule(Rule::when(Match::user_contains("<expected-files>")).always(
        Reply::computed(move |body| {
            let list = vouch_workspace_tests::expected_list(body);
            let paths: Vec<&str> = list.iter().map(String::as_str).collect();
            let answered = body["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
            if answered {
                Reply::content(candidates_reply(json!([]), true, &paths))
            } else {
                Reply::tool_calls(calls.clone())
            }
        }),
    ));
    let (out, _server) = review_deletion(script, "on").await;
    let report = out.json();
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
    assert!(
        report["filesNotReviewed"].to_string().contains("app.js"),
        "{report:#}"
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
