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

fn reasons(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(|l| {
            let line: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|_| panic!("not a diagnostic: {l}"));
            line["reason"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// `--quiet`: errors and the final summary only. Off a terminal, stderr keeps the JSON
/// lines that report a problem and the final `review-finished`; progress lines go; stdout
/// keeps the summary and its messages, not where each document went.
#[tokio::test(flavor = "multi_thread")]
async fn quiet_keeps_problems_and_the_final_line_only() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit("base");
    repo.write("a.txt", "b\n");
    let head = repo.commit("change");
    let manifest = workspace().join("tests/data/e2e/tools-off-small-budget.toml");
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.json").display().to_string();
    let run = |url: String, quiet: bool| {
        let (path, base, head) = (
            repo.path().display().to_string(),
            base.clone(),
            head.clone(),
        );
        let (manifest, report) = (manifest.display().to_string(), report.clone());
        async move {
            let mut args = vec![
                "review",
                "--repo",
                &path,
                "--base",
                &base,
                "--head",
                &head,
                "--manifest",
                &manifest,
                "--base-url",
                &url,
                "--model",
                "scripted",
                "--out",
                &report,
            ];
            if quiet {
                args.push("--quiet");
            }
            vouch_workspace_tests::run_vouch(&args, &[]).await
        }
    };
    let clean = || {
        Script::new().rule(
            Rule::when(Match::any_message_contains(
                "Instance: generic-investigator #1",
            ))
            .reply(Reply::content(candidates_reply(
                json!([]),
                true,
                &["a.txt"],
            ))),
        )
    };
    let server = ScriptedServer::start(clean()).await;
    let loud = run(server.base_url(), false).await;
    assert_eq!(loud.code, 0, "{}\n{}", loud.stdout, loud.stderr);
    let loud_reasons = reasons(&loud.stderr);
    assert!(
        loud_reasons.contains(&"review-started".to_owned()),
        "{loud_reasons:?}"
    );
    assert!(loud.stdout.contains("report written to"), "{}", loud.stdout);

    let server = ScriptedServer::start(clean()).await;
    let quiet = run(server.base_url(), true).await;
    assert_eq!(quiet.code, 0, "{}\n{}", quiet.stdout, quiet.stderr);
    assert_eq!(reasons(&quiet.stderr), ["review-finished"]);
    assert!(
        quiet
            .stdout
            .starts_with("No verified finding in 1 reviewed file(s)"),
        "{}",
        quiet.stdout
    );
    assert!(
        !quiet.stdout.contains("report written to"),
        "{}",
        quiet.stdout
    );

    // A failing review keeps its error lines.
    let failing = ScriptedServer::start(
        Script::new()
            .rule(Rule::when(Match::any_message_contains("Instance:")).always(Reply::status(500))),
    )
    .await;
    let quiet = run(failing.base_url(), true).await;
    assert_eq!(quiet.code, 2, "{}\n{}", quiet.stdout, quiet.stderr);
    let kept = reasons(&quiet.stderr);
    assert!(kept.contains(&"provider-error".to_owned()), "{kept:?}");
    assert_eq!(kept.last().map(String::as_str), Some("review-finished"));
    assert!(
        kept.iter()
            .all(|r| r != "review-started" && r != "stage-completed"),
        "{kept:?}"
    );
    assert!(
        quiet.stdout.contains("could not finish"),
        "{}",
        quiet.stdout
    );
}
