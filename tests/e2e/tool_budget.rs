//! The tool-call budget counts new reads: a model that asks again for a patch it was
//! given inline (as models often do) is answered without spending its budget, so a lane
//! of more files than `max_tool_calls` still ends with full coverage.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{ScriptedReview, candidates_reply, expected_list};

/// Files changed: more than the minimal composition's `max_tool_calls` (8).
const FILES: usize = 12;

/// A change of [`FILES`] small files, one line each.
fn change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    for i in 0..FILES {
        repo.write(&format!("src/f{i:02}.txt"), format!("value {i}\nkept\n"));
    }
    let base = repo.commit("base");
    for i in 0..FILES {
        repo.write(
            &format!("src/f{i:02}.txt"),
            format!("value {}\nkept\n", i + 1),
        );
    }
    let head = repo.commit("bump every value");
    (repo, base, head)
}

/// The investigator calls `diff` on every file it was given, then answers complete.
fn rereads_every_patch() -> Reply {
    Reply::computed(|body| {
        let list = expected_list(body);
        let answered = body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        if answered {
            let paths: Vec<&str> = list.iter().map(String::as_str).collect();
            return Reply::content(candidates_reply(json!([]), true, &paths));
        }
        Reply::tool_calls(
            list.iter()
                .map(|p| ("diff", json!({ "path": p }).to_string())),
        )
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn asking_again_for_patches_given_inline_spends_no_tool_calls() {
    let (repo, base, head) = change();
    let script = Script::new().rule(
        Rule::when(Match::any_message_contains("generic-investigator #1"))
            .named("investigator")
            .always(rereads_every_patch()),
    );
    let server = ScriptedServer::start(script).await;
    let out = ScriptedReview::new(&repo, &base, &head, &server)
        .manifest("tests/data/e2e/minimal.toml")
        .run()
        .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["limitations"], json!([]));
    let stage = &report["stages"][0];
    assert_eq!(stage["budgetHit"], Value::Null, "{stage:#}");
    assert_eq!(stage["forcedSynthesis"], false);
    // Every repeated patch was answered, none refused for the budget.
    let requests = server.served_by("investigator");
    let answers: Vec<String> = requests[1].contents_of("tool");
    assert_eq!(answers.len(), FILES);
    assert!(answers.iter().all(|a| a.contains("+value")), "{answers:#?}");
}
