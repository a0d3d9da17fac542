//! On a terminal (a pseudo-terminal made by util-linux `script`), the progress display
//! owns stderr: diagnostics are held until it has finished, so none lands between its
//! frames.

use serde_json::json;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{candidates_reply, vouch_bin, workspace};

fn quoted(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_diagnostics_wait_for_the_progress_display() {
    let server = ScriptedServer::start(
        Script::new().rule(
            Rule::when(Match::any_message_contains(
                "Instance: generic-investigator #1",
            ))
            .reply(Reply::content(candidates_reply(
                json!([]),
                true,
                &["a.txt"],
            ))),
        ),
    )
    .await;
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit("base");
    repo.write("a.txt", "b\n");
    let head = repo.commit("change");
    let manifest = workspace().join("tests/data/e2e/tools-off-small-budget.toml");
    let args = [
        vouch_bin().display().to_string(),
        "review".into(),
        "--repo".into(),
        repo.path().display().to_string(),
        "--base".into(),
        base,
        "--head".into(),
        head,
        "--manifest".into(),
        manifest.display().to_string(),
        "--base-url".into(),
        server.base_url(),
        "--model".into(),
        "scripted".into(),
        "--color".into(),
        "never".into(),
    ];
    let command = args.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(" ");
    let out = tokio::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("CI")
        .env_remove("VOUCH_LOG")
        .env("XDG_CONFIG_HOME", "/nonexistent-vouch-test-config")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("util-linux script runs vouch on a pseudo-terminal");
    let screen = String::from_utf8_lossy(&out.stdout);
    let finished = screen
        .find("vouch: review finished")
        .unwrap_or_else(|| panic!("no progress display on the terminal:\n{screen}"));
    assert!(screen.contains("vouch: reviewing 1 file(s)"), "{screen}");
    assert!(
        screen.contains("generic-investigator #1: 0 candidate(s)"),
        "{screen}"
    );
    assert!(screen.contains("(1/1 stage(s) done)"), "{screen}");
    let first_diagnostic = screen
        .find("{\"jobId\"")
        .unwrap_or_else(|| panic!("the diagnostics were lost:\n{screen}"));
    assert!(
        first_diagnostic > finished,
        "a diagnostic was written while the progress display was live:\n{screen}"
    );
    assert!(
        screen.contains("\"reason\":\"review-finished\""),
        "{screen}"
    );
}
