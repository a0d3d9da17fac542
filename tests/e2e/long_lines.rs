//! Long lines (issue 10 item 4, issue 28 item 1): a 2 MB minified one-line file edited in
//! three places is "seen" only when the edited bytes were shown — never because the
//! first 32 KiB of its one line were — and the host shows them inline by the bytes that
//! changed, at head and at base, with tools or without.

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

/// Issue 28 item 1, with tools: the changed bytes of a 2 MB one-line file are given
/// inline at head and at base, so a model that reads the line only from its start (and
/// is told the read was cut) still ends with every changed byte shown, and the review
/// may end clean. Reading a 2 MB line in byte windows would take hundreds of calls.
#[tokio::test(flavor = "multi_thread")]
async fn with_tools_a_long_lines_changed_bytes_are_given_inline_at_both_sides() {
    let (_dir, repo) = minified();
    let snap = vouch_git::snapshot(&repo.path, Some(&repo.base), &repo.head).unwrap();
    let read_start = json!({"path": MINIFIED_PATH}).to_string();
    let (report, server) = review(&repo, vec![("read_file", read_start)]).await;
    let results = server.served_by("investigator");
    assert!(
        results.iter().any(|r| r
            .contents_of("tool")
            .iter()
            .any(|t| t.contains("line 1 is longer than that and was cut"))),
        "the model was told the line it read was cut"
    );
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["opinion"]["clean"], true, "{report:#}");
    let spans: Vec<(String, u64, u64)> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["lane"] == "generic-investigator #1")
        .flat_map(|s| s["lineSpans"].as_array().cloned().unwrap_or_default())
        .map(|s| {
            let n = |k: &str| s[k].as_u64().unwrap();
            (
                s["revision"].as_str().unwrap().to_owned(),
                n("startByte"),
                n("endByte"),
            )
        })
        .collect();
    let long_lines = &snap.file(MINIFIED_PATH).unwrap().long_lines;
    assert_eq!(
        long_lines.len(),
        2,
        "the line is rewritten: named at head and base"
    );
    for long in long_lines {
        for &(start, end) in &long.changed {
            let (start, end) = (u64::from(start), u64::from(end));
            assert!(
                spans
                    .iter()
                    .any(|(r, s, e)| r == long.revision.as_str() && *s <= start && end <= *e),
                "{} bytes {start}..{end} were given inline: {spans:?}",
                long.revision.as_str()
            );
        }
    }
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

/// A change that replaces a line just under the long-line size, holding [`REMOVED`],
/// with a long line that does not: the removed text is only in the base line, which is
/// not long by itself.
fn short_line_replaced_by_a_long_one() -> (vouch_testkit::git::TestRepo, String, String) {
    let repo = vouch_testkit::git::TestRepo::new();
    let body: String = (0..4_000).map(|i| format!("v{i};")).collect();
    let body = &body[..vouch_core::LONG_LINE_BYTES as usize - 500 - REMOVED.len()];
    repo.write("app.js", format!("{REMOVED}{body}\n"));
    let base = repo.commit("base");
    let tail: String = (0..4_000).map(|i| format!("w{i};")).collect();
    repo.write("app.js", format!("{body}{tail}\n"));
    let head = repo.commit("drop the access checks");
    (repo, base, head)
}

/// A change that edits `line` (the fourth line of five) to `edited`: a hunk too large
/// for one shard, so it is given in pieces.
fn one_line_edited(line: &[u8], edited: &[u8]) -> (vouch_testkit::git::TestRepo, String, String) {
    let repo = vouch_testkit::git::TestRepo::new();
    let file =
        |middle: &[u8]| [b"// a\nlet b = 1;\nlet c = 2;\n", middle, b"\nlet d = 3;\n"].concat();
    repo.write("app.js", file(line));
    let base = repo.commit("base");
    repo.write("app.js", file(edited));
    let head = repo.commit("edit the long line");
    (repo, base, head)
}

/// A line just under the long-line size is an ordinary line: the pieces of a hunk too
/// large for one shard give it whole (it was left out of every piece when its cost, an
/// eighth more than its length for JSON escapes, reached the long-line size).
#[tokio::test(flavor = "multi_thread")]
async fn a_line_just_under_the_long_line_size_is_given_whole() {
    let line: Vec<u8> = (0..vouch_core::LONG_LINE_BYTES as usize - 100)
        .map(|i| b"abcdefgh;="[i % 10])
        .collect();
    let mut edited = line.clone();
    edited.splice(4000..4006, b"EDITED".iter().copied());
    for tools in ["off", "on"] {
        reviewed_showing(one_line_edited(&line, &edited), tools, &["EDITED"]).await;
    }
}

/// A line of bytes that are not UTF-8 (Latin-1) is shown four times its length, as
/// `\xNN` escapes: shown as long as a long line, it is one (named by the snapshot, its
/// changed bytes given in windows sized by what they show), however few bytes it has. A
/// swapped byte is shown as a change on both sides.
#[tokio::test(flavor = "multi_thread")]
async fn a_latin1_line_shown_as_long_as_a_long_line_is_given_by_its_changed_bytes() {
    for len in [2100, 6000] {
        let line = [vec![0xE9u8; len], b"caf\xE9".to_vec(), vec![0xE8u8; 10]].concat();
        let mut edited = line.clone();
        edited[len + 3] = 0xE8;
        for tools in ["off", "on"] {
            reviewed_showing(
                one_line_edited(&line, &edited),
                tools,
                &["caf\\xE9\\xE8", "caf\\xE8\\xE8"],
            )
            .await;
        }
    }
}

/// A change of line ending alone (CRLF to LF) is shown as a change: the base line is
/// given with the CRLF mark after its text, for an ordinary line and for a long one
/// (whose changed byte is its last), with tools or without.
#[tokio::test(flavor = "multi_thread")]
async fn a_line_whose_only_change_is_its_ending_is_shown_with_the_crlf_mark() {
    let long = "q".repeat(20_000);
    let cases = [
        ("let x = 1;".to_string(), "let x = 1;\u{240D}".to_string()),
        (long, format!("qqqq{}", vouch_core::CR_MARK)),
    ];
    for (line, shown) in &cases {
        let crlf = [line.as_bytes(), b"\r"].concat();
        for tools in ["off", "on"] {
            reviewed_showing(one_line_edited(&crlf, line.as_bytes()), tools, &[shown]).await;
        }
    }
}

/// A long last line whose only change is the newline after it: the byte window that
/// shows the line's end at base says the file has no final newline there, so base and
/// head read differently, with tools or without.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_last_line_given_a_final_newline_is_shown_as_a_change() {
    let long = "w".repeat(20_000);
    for tools in ["off", "on"] {
        let repo = vouch_testkit::git::TestRepo::new();
        repo.write("app.js", format!("// a\n{long}"));
        let base = repo.commit("base");
        repo.write("app.js", format!("// a\n{long}\n"));
        let head = repo.commit("add the final newline");
        let end = format!("{}\n\\ No newline at end of file", "w".repeat(16));
        reviewed_showing((repo, base, head), tools, &[&end]).await;
    }
}

/// With a 16k-token window a shard holds a few KiB: a changed line too long for that
/// but shorter than a patch shows whole is still given, by the bytes that changed, so
/// the review reaches full coverage with tools or without.
#[tokio::test(flavor = "multi_thread")]
async fn with_a_small_window_a_line_longer_than_a_shard_is_given_by_its_changed_bytes() {
    for len in [2_500usize, 7_000] {
        edited_in_the_middle_is_reviewed(len, "window-16k.toml").await;
    }
}

/// With a shard budget too small to hold it whole, a changed line shorter than the
/// named-line size is given in byte windows that together show all of it, and counts as
/// seen (it was in no shard, so its file could never be reviewed).
#[tokio::test(flavor = "multi_thread")]
async fn a_short_line_no_shard_holds_whole_is_given_in_byte_windows_covering_it() {
    let len = vouch_core::NAMED_LINE_BYTES as usize - 124;
    edited_in_the_middle_is_reviewed(len, "tiny-shard.toml").await;
}

/// A line of `len` bytes edited in its middle is reviewed with full coverage under the
/// e2e manifest `manifest`, tools off and on, and the edit reaches the model.
async fn edited_in_the_middle_is_reviewed(len: usize, manifest: &str) {
    let manifest = workspace()
        .join("tests/data/e2e")
        .join(manifest)
        .display()
        .to_string();
    let line: Vec<u8> = (0..len).map(|i| b"abcdefgh;="[i % 10]).collect();
    let mut edited = line.clone();
    edited.splice(len / 2..len / 2 + 6, b"EDITED".iter().copied());
    for tools in ["off", "on"] {
        let args = ["--tools", tools, "--manifest", &manifest];
        reviewed_showing_with(one_line_edited(&line, &edited), &args, &["EDITED"]).await;
    }
}

/// Reviews `change` against `script`, with `--tools tools`.
async fn review_change(
    (repo, base, head): (vouch_testkit::git::TestRepo, String, String),
    script: Script,
    args: &[&str],
) -> (vouch_workspace_tests::Output, ScriptedServer) {
    let server = ScriptedServer::start(script).await;
    let out = review_json(
        repo.path(),
        &base,
        &head,
        &server.base_url(),
        "scripted",
        args,
        &[],
    )
    .await;
    (out, server)
}

/// The text the change deletes from inside the long line.
const REMOVED: &str = "checkAuth(user);requireAdmin(user);";

/// Reviews `change` (of `app.js`) with `--tools tools` and a model that reads nothing:
/// the file is reviewed with full coverage, and each of `texts` is carried by some
/// request (with tools too: the host gave the source).
async fn reviewed_showing(
    change: (vouch_testkit::git::TestRepo, String, String),
    tools: &str,
    texts: &[&str],
) {
    reviewed_showing_with(change, &["--tools", tools], texts).await;
}

/// [`reviewed_showing`] with the review's arguments `args` (`--tools` among them).
async fn reviewed_showing_with(
    change: (vouch_testkit::git::TestRepo, String, String),
    args: &[&str],
    texts: &[&str],
) {
    let tools = args.join(" ");
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let (out, server) = review_change(change, script, args).await;
    let report = out.json();
    assert_eq!(out.code, 0, "tools {tools}: {report:#}\n{}", out.stderr);
    assert_eq!(
        report["filesReviewed"],
        json!(["app.js"]),
        "tools {tools}: {report:#}"
    );
    assert_eq!(
        report["opinion"]["coverage"], "full",
        "tools {tools}: {report:#}"
    );
    let users: Vec<String> = server
        .chat_requests()
        .iter()
        .flat_map(|r| r.contents_of("user"))
        .collect();
    for text in texts {
        assert!(
            users.iter().any(|u| u.contains(text)),
            "tools {tools}: `{text}` was shown to the model"
        );
    }
}

/// [`reviewed_showing`] the text the change deletes, [`REMOVED`].
async fn removed_text_is_shown(
    change: (vouch_testkit::git::TestRepo, String, String),
    tools: &str,
) {
    reviewed_showing(change, tools, &[REMOVED]).await;
}

/// Text deleted from inside a long line is shown from the base line, with tools or
/// without.
async fn text_deleted_inside_a_long_line_is_shown_from_base(tools: &str) {
    removed_text_is_shown(deleted_inside_a_long_line(), tools).await;
}

/// The text a long line no longer holds is shown from the base line it replaced even when
/// that base line is not long itself, with tools or without.
#[tokio::test(flavor = "multi_thread")]
async fn text_of_a_shorter_base_line_a_long_line_replaced_is_shown() {
    for tools in ["off", "on"] {
        removed_text_is_shown(short_line_replaced_by_a_long_one(), tools).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_tools_text_deleted_inside_a_long_line_is_shown_from_base() {
    text_deleted_inside_a_long_line_is_shown_from_base("off").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_tools_text_deleted_inside_a_long_line_is_shown_from_base() {
    text_deleted_inside_a_long_line_is_shown_from_base("on").await;
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
    // Without tools, nothing tells the model to call one.
    for request in server.chat_requests() {
        for user in request.contents_of("user") {
            for call in ["per call", "start_byte", "read_file"] {
                assert!(
                    !user.contains(call),
                    "{call:?} in a request without tools: {user}"
                );
            }
        }
    }
}

/// A short edit beside an unchanged long line (in the hunk's context): the long line is
/// never shown whole, yet the change is seen and the review ends with full coverage,
/// with tools or without.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_beside_an_unchanged_long_line_is_seen() {
    for tools in ["off", "on"] {
        let repo = vouch_testkit::git::TestRepo::new();
        let long: String = (0..6_000).map(|i| format!("v{i};")).collect();
        repo.write("app.js", format!("var limit=1;\n{long}\n"));
        let base = repo.commit("base");
        repo.write("app.js", format!("var limit=2;\n{long}\n"));
        let head = repo.commit("raise the limit");
        reviewed_showing((repo, base, head), tools, &["var limit=1;", "var limit=2;"]).await;
    }
}
