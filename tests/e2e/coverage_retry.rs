//! The coverage retry without tools (issue #9 item 12; issue 28): the retry repeats the
//! first request, points to the missing files' patches given there (never giving them
//! twice), and a file the first request could not give is a stated source gap, never a
//! demand to "inspect these now".

use serde_json::json;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{ScriptedReview, candidates_reply};

const INVESTIGATOR: &str = "Instance: generic-investigator #1\n";
const RETRY: &str = "## Coverage retry";

/// Numbered lines `prefix 1` … `prefix n`.
fn lines(prefix: &str, n: usize) -> String {
    (1..=n).map(|i| format!("{prefix} {i}\n")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_without_tools_points_to_the_patches_given_and_states_what_it_cannot_give() {
    let repo = TestRepo::new();
    repo.write("a.md", lines("alpha", 8))
        .write("b.md", lines("beta", 8))
        .write("c.txt", lines("gamma", 4));
    let base = repo.commit("base");
    repo.write("a.md", lines("ALPHA", 8))
        .write("b.md", lines("BETA", 8))
        .write(
            "c.txt",
            lines("a much longer replacement line of gamma", 60),
        );
    let head = repo.commit("change all three");
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR).and(Match::user_contains(RETRY)))
                .named("retry")
                .reply(Reply::content(candidates_reply(
                    json!([]),
                    true,
                    &["a.md", "b.md"],
                ))),
        )
        .rule(
            Rule::when(Match::user_contains(INVESTIGATOR))
                .named("first")
                .reply(Reply::content(candidates_reply(
                    json!([]),
                    false,
                    &["a.md"],
                ))),
        );
    let server = ScriptedServer::start(script).await;
    let out = ScriptedReview::new(&repo, &base, &head, &server)
        .manifest("tests/data/e2e/tools-off-small-budget.toml")
        .envs(&[("VOUCH_INLINE_BYTES", "400")])
        .run()
        .await;
    let report = out.json();
    let first = server.served_by("first")[0].contents_of("user").join("\n");
    assert!(first.contains("<patch path=\"a.md\">"), "{first}");
    assert!(first.contains("<patch path=\"b.md\">"), "{first}");
    assert!(
        !first.contains("<patch path=\"c.txt\">"),
        "over the budget: {first}"
    );
    let retry = server.served_by("retry")[0].contents_of("user").join("\n");
    let (repeated, section) = retry.split_at(retry.find(RETRY).expect("a retry section"));
    assert!(
        repeated.contains("<patch path=\"b.md\">"),
        "the first request is repeated: {repeated}"
    );
    assert!(
        section.contains(
            "Missing files (their patches are in the source given above; inspect them): [\"b.md\"]\n"
        ),
        "{section}"
    );
    assert!(
        !section.contains("<patch"),
        "nothing given twice: {section}"
    );
    assert!(
        section.contains("source gap the report states, so leave them out of coverage.reviewedFiles): [\"c.txt\"]"),
        "{section}"
    );
    assert!(!section.contains("inspect these now"), "{section}");
    // The retry's receipt covers what could be given: accepted, with the gap stated.
    assert!(
        report["failures"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "limited");
    let gaps = report["limitations"].to_string();
    assert!(
        gaps.contains("patches not available to generic-investigator #1 without tools: c.txt"),
        "{gaps}"
    );
    assert!(!gaps.contains("without tools: b.md"), "{gaps}");
}
