//! A file moved or copied out of a path a `[files] exclude` rule matches is reviewed as
//! an added file: its content enters review for the first time, so every line of it is
//! shown to the model, and the file counts as reviewed because the lane saw every line. Real git (the
//! exclusion in the repository's own `.vouch/review.toml` at base), real HTTP to the
//! scripted server, the real binary.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Script, ScriptedServer};
use vouch_workspace_tests::{GENERIC, Output, ScriptedReview, perfect, stage};

/// The library's text: twelve lines, each naming its number.
fn library() -> String {
    (1..=12)
        .map(|i| format!("export const line{i} = \"library line {i}\";\n"))
        .collect()
}

/// A repository whose base vendors `vendor/lib.js` (excluded by the repository's own
/// configuration) and whose head moves it, unchanged, to `src/lib.js` — or, with
/// `copy`, copies it there and edits the vendored original (a copy source git looks at).
fn moved(copy: bool) -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write(".vouch/review.toml", "[files]\nexclude = [\"vendor/**\"]\n")
        .write("vendor/lib.js", library());
    let base = repo.commit("vendor the library");
    if copy {
        repo.write("src/lib.js", library())
            .write("vendor/lib.js", format!("{}// patched\n", library()));
    } else {
        repo.rename("vendor/lib.js", "src/lib.js");
    }
    let head = repo.commit("take the library into our sources");
    (repo, base, head)
}

async fn review(
    repo: &TestRepo,
    base: &str,
    head: &str,
    script: Script,
) -> (ScriptedServer, Value) {
    let server = ScriptedServer::start(script).await;
    let out: Output = ScriptedReview::new(repo, base, head, &server)
        .manifest("tests/data/e2e/minimal.toml")
        .run()
        .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    (server, out.json())
}

fn changed(report: &Value, path: &str) -> Value {
    report["changedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .cloned()
        .unwrap_or_else(|| panic!("{path} not changed: {report:#}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_renamed_out_of_an_excluded_path_is_shown_whole_to_the_model() {
    let (repo, base, head) = moved(false);
    let script = Script::new().rule(stage(GENERIC, "investigator", [perfect()]));
    let (server, report) = review(&repo, &base, &head, script).await;
    let asked = server.served_by("investigator");
    let user = asked[0].contents_of("user").join("\n");
    for i in [1, 7, 12] {
        let line = format!("export const line{i} = \\\"library line {i}\\\";");
        let plain = format!("export const line{i} = \"library line {i}\";");
        assert!(
            user.contains(&plain) || user.contains(&line),
            "line {i}:\n{user}"
        );
    }
    let file = changed(&report, "src/lib.js");
    assert_eq!(file["status"], "added", "{file:#}");
    assert_eq!(file["additions"], 12, "{file:#}");
    // It counts as reviewed because the lane's ledger holds every line of it.
    let ledger = &report["stages"][0]["ledger"];
    assert_eq!(
        *ledger,
        json!([{"revision": "head", "path": "src/lib.js", "lines": [[1, 12]]}]),
        "{report:#}"
    );
    assert_eq!(report["filesReviewed"], json!(["src/lib.js"]), "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    let observations = report["observations"].to_string();
    assert!(
        observations.contains("src/lib.js (from vendor/lib.js)"),
        "{observations}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_copied_out_of_an_excluded_path_is_shown_whole_to_the_model() {
    let (repo, base, head) = moved(true);
    let script = Script::new().rule(stage(GENERIC, "investigator", [perfect()]));
    let (server, report) = review(&repo, &base, &head, script).await;
    let user = server.served_by("investigator")[0]
        .contents_of("user")
        .join("\n");
    assert!(user.contains("library line 7"), "{user}");
    let file = changed(&report, "src/lib.js");
    assert_eq!(file["status"], "added", "{file:#}");
    assert!(file.get("previousPath").is_none(), "{file:#}");
    assert_eq!(report["filesReviewed"], json!(["src/lib.js"]), "{report:#}");
    // The vendored original, edited in place, stays excluded.
    assert_eq!(report["filesNotReviewed"][0]["path"], "vendor/lib.js");
    assert_eq!(report["filesNotReviewed"][0]["reason"], "excluded");
}
