//! A change that touches a binary file (a logo) can be reviewed in full: the binary is a
//! metadata-only patch — shown inline as its sizes, blob ids and detected type, counted
//! reviewed when an accepted receipt lists it, with an observation that its content was
//! not read. `[files] binary = "limit"` keeps the older rule: the file is set aside as
//! `binary` and coverage is limited. Real git, real HTTP, the real binary, tools off.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{ScriptedReview, candidates_reply};

const FILES: [&str; 2] = ["assets/logo.png", "src/lib.rs"];

/// The first bytes of a PNG file, then bytes that make it binary to git.
fn png(seed: u8) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend((0..600u32).map(|i| (i as u8).wrapping_mul(seed)));
    bytes
}

fn change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("assets/logo.png", png(3))
        .write("src/lib.rs", "pub fn f() -> u8 {\n    1\n}\n");
    let base = repo.commit("base");
    repo.write("assets/logo.png", png(7))
        .write("src/lib.rs", "pub fn f() -> u8 {\n    2\n}\n");
    let head = repo.commit("new logo, new value");
    (repo, base, head)
}

/// Reviews `base..head` of `repo` with `manifest`, tools off and `envs`, against a server
/// answering by `script`.
async fn run(
    (repo, base, head): (&TestRepo, &str, &str),
    manifest: &str,
    script: Script,
    envs: &[(&str, &str)],
) -> (ScriptedServer, vouch_workspace_tests::Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("composition.toml");
    std::fs::write(&path, manifest).unwrap();
    let server = ScriptedServer::start(script).await;
    let out = ScriptedReview::new(repo, base, head, &server)
        .args(&["--manifest", &path.display().to_string(), "--tools", "off"])
        .envs(envs)
        .run()
        .await;
    let report = out.json();
    (server, out, report)
}

/// Every stage answers a complete receipt of the files it was given.
async fn review(manifest: &str) -> (ScriptedServer, vouch_workspace_tests::Output, Value) {
    let (repo, base, head) = change();
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains("assets/logo.png"))
                .named("both")
                .always(Reply::content(candidates_reply(json!([]), true, &FILES))),
        )
        .rule(
            Rule::when(Match::user_contains("src/lib.rs"))
                .named("text")
                .always(Reply::content(candidates_reply(
                    json!([]),
                    true,
                    &["src/lib.rs"],
                ))),
        );
    run((&repo, &base, &head), manifest, script, &[]).await
}

const COMPOSITION: &str = r#"
[composition]
name = "binary"
concurrency = 2
[budget]
max_turns = 4
max_tool_calls = 4
max_output_tokens = 2048
max_total_tokens = 60000
[[specialist]]
id = "generic-investigator"
version = "1.0.0"
role = "investigator"
[[specialist]]
id = "clean-result-audit"
version = "1.0.0"
role = "clean-result-audit"
[verifier]
id = "verifier"
version = "1.0.0"
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_image_is_reviewed_from_its_metadata_and_the_review_can_be_clean() {
    let (server, out, report) = review(COMPOSITION).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["clean"], true, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["filesReviewed"], json!(FILES));
    assert_eq!(report["filesNotReviewed"], json!([]));
    let observations = report["observations"].to_string();
    assert!(
        observations.contains("reviewed from their metadata only")
            && observations.contains("assets/logo.png"),
        "{observations}"
    );
    // The investigator was shown the binary change as its metadata, inline.
    let asked = server.served_by("both");
    let user = asked[0].contents_of("user").join("\n");
    assert!(
        user.contains("Binary files differ; content not shown"),
        "{user}"
    );
    let sides: Vec<&str> = user
        .lines()
        .filter(|l| l.starts_with("binary base: ") || l.starts_with("binary head: "))
        .collect();
    assert_eq!(sides.len(), 2, "{user}");
    for side in sides {
        assert!(
            side.contains("bytes, blob ") && side.ends_with("type image/png"),
            "{side}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn under_binary_limit_a_changed_image_is_set_aside_and_coverage_is_limited() {
    let manifest = format!("{COMPOSITION}\n[files]\nbinary = \"limit\"\n");
    let (server, out, report) = review(&manifest).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["filesReviewed"], json!(["src/lib.rs"]));
    assert_eq!(report["filesNotReviewed"][0]["path"], "assets/logo.png");
    assert_eq!(report["filesNotReviewed"][0]["reason"], "binary");
    // The limitation says why the file was set aside: no exclude rule matched it.
    assert_eq!(
        report["limitations"][0]["detail"],
        "1 changed file(s) were not reviewed: 1 binary, set aside by binary = \"limit\"",
        "{report:#}"
    );
    assert!(
        server.served_by("both").is_empty(),
        "the image was never shown"
    );
}

/// A source file made binary by one NUL byte is text, not an image: reviewing it from its metadata would let a change hide its code behind a
/// NUL byte and still end clean. It is set aside as `binary`, never shown as metadata,
/// and coverage is limited; the image beside it is still reviewed from its metadata.
#[tokio::test(flavor = "multi_thread")]
async fn a_source_file_with_a_nul_byte_is_not_reviewed_from_its_metadata() {
    let repo = TestRepo::new();
    repo.write("assets/logo.png", png(3)).write(
        "src/auth.py",
        b"# \0 marker\ndef allowed(user):\n    return user.is_admin\n",
    );
    let base = repo.commit("base");
    repo.write("assets/logo.png", png(7)).write(
        "src/auth.py",
        b"# \0 marker\ndef allowed(user):\n    return True\n",
    );
    let head = repo.commit("allow everyone");
    let script = Script::new().rule(
        Rule::when(Match::user_contains("assets/logo.png"))
            .named("logo")
            .always(Reply::content(candidates_reply(
                json!([]),
                true,
                &["assets/logo.png"],
            ))),
    );
    let (server, _, report) = run((&repo, &base, &head), COMPOSITION, script, &[]).await;
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
    assert_eq!(report["filesReviewed"], json!(["assets/logo.png"]));
    assert_eq!(report["filesNotReviewed"][0]["path"], "src/auth.py");
    assert_eq!(report["filesNotReviewed"][0]["reason"], "binary");
    assert!(
        report["filesNotReviewed"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("a side of it is text"),
        "{report:#}"
    );
    // Its limitation names that reason, not a policy the composition never set.
    assert_eq!(
        report["limitations"][0]["detail"],
        "1 changed file(s) were not reviewed: 1 binary to git but with text never shown, \
         which cannot be reviewed from metadata",
        "{report:#}"
    );
    for request in server.chat_requests() {
        assert!(!request.raw_body.contains("src/auth.py"), "never shown");
    }
}

/// A binary file counts as reviewed only when its metadata was shown: with no inline
/// source (tools off, `VOUCH_INLINE_BYTES=0`) a receipt that lists the image proves
/// nothing was seen, so it is `not-fully-seen`, like the text file beside it.
#[tokio::test(flavor = "multi_thread")]
async fn a_binary_file_whose_metadata_was_never_shown_is_not_reviewed() {
    let (repo, base, head) = change();
    let script = Script::new().rule(
        Rule::when(Match::any()).always(Reply::content(candidates_reply(json!([]), true, &FILES))),
    );
    let envs = [("VOUCH_INLINE_BYTES", "0")];
    let (_, _, report) = run((&repo, &base, &head), COMPOSITION, script, &envs).await;
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(report["filesReviewed"], json!([]), "{report:#}");
    let logo = report["filesNotReviewed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "assets/logo.png")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(logo["reason"], "not-fully-seen", "{report:#}");
}
