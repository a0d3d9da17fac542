//! On a terminal (a pseudo-terminal from `portable-pty`, its output rendered by the
//! `vt100` terminal emulator) the progress display shows every stage with its turns, tool
//! calls and retries, and owns stderr: diagnostics are held until it has finished, so
//! none lands between its frames. The final frame is an insta snapshot.

use std::io::Read;

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{GENERIC, one_file_change, receipt, stage, vouch_bin, workspace};

const ROWS: u16 = 48;
const COLS: u16 = 200;

/// Runs `vouch` on a pseudo-terminal; returns its exit code and the screen's final frame.
fn on_a_terminal(args: &[String]) -> (u32, String) {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("a pseudo-terminal");
    let mut command = CommandBuilder::new(vouch_bin());
    command.args(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") || key.starts_with("VOUCH_") || key == "CI" {
            command.env_remove(key);
        }
    }
    command.env("TERM", "xterm-256color");
    command.env("XDG_CONFIG_HOME", "/nonexistent-vouch-test-config");
    let mut child = pty.slave.spawn_command(command).expect("vouch starts");
    drop(pty.slave);
    let mut reader = pty
        .master
        .try_clone_reader()
        .expect("the terminal's output");
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    // The output ends when vouch exits and the terminal's other side closes (EOF or EIO).
    while let Ok(n) = reader.read(&mut chunk) {
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    let status = child.wait().expect("vouch exits");
    let mut screen = vt100::Parser::new(ROWS, COLS, 0);
    screen.process(&bytes);
    let rows: Vec<String> = screen.screen().rows(0, COLS).collect();
    (status.exit_code(), rows.join("\n"))
}

/// Elapsed times, the job id and the report's temporary path change from run to run.
fn normalised(frame: &str, out: &str) -> String {
    let frame = frame.replace(out, "[out]");
    let seconds = regex::Regex::new(r"\d+(\.\d+)?s\b").unwrap();
    let job = regex::Regex::new(r"vouch-[0-9a-f]+-[0-9a-f]+").unwrap();
    let frame = seconds.replace_all(&frame, "[t]");
    let frame = job.replace_all(&frame, "[job]");
    let mut lines: Vec<&str> = frame.lines().map(str::trim_end).collect();
    // Stages run as the scheduler lets them: their lines are grouped by stage (in the
    // order each stage printed them), not interleaved as they happened to finish.
    let is_stage = |l: &str| l.starts_with("  ");
    if let Some(first) = lines.iter().position(|l| is_stage(l)) {
        let count = lines[first..].iter().take_while(|l| is_stage(l)).count();
        lines[first..first + count]
            .sort_by_key(|l| l.split(':').next().unwrap_or_default().to_owned());
    }
    // Likewise the held diagnostics: review-level lines first and last, stage lines by
    // stage in between.
    let is_diagnostic = |l: &str| l.starts_with("{\"jobId\"");
    if let Some(first) = lines.iter().position(|l| is_diagnostic(l)) {
        let count = lines[first..]
            .iter()
            .take_while(|l| is_diagnostic(l))
            .count();
        lines[first..first + count].sort_by_key(|l| {
            let line: serde_json::Value = serde_json::from_str(l).unwrap();
            let place = match line["reason"].as_str() {
                Some("review-started") => 0,
                Some("review-finished") => 2,
                _ => 1,
            };
            (place, line["label"].as_str().unwrap_or_default().to_owned())
        });
    }
    lines.join("\n").trim().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_every_stage_shows_turns_tool_calls_and_retries() {
    let answer = || receipt(json!([]), &["a.txt"]);
    let read = || Reply::tool_call("read_file", r#"{"path":"a.txt"}"#);
    let server = ScriptedServer::start(
        Script::new()
            .rule(
                Rule::when(Match::any_message_contains(
                    "Instance: generic-investigator #1",
                ))
                .replies([
                    Reply::status(503).header("Retry-After", "0"),
                    read(),
                    answer(),
                ]),
            )
            .rule(
                Rule::when(Match::any_message_contains(
                    "Instance: generic-investigator #2",
                ))
                .replies([read(), read(), answer()]),
            ),
    )
    .await;
    let (repo, base, head) = one_file_change();
    let manifest = workspace().join("tests/data/e2e/terminal.toml");
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("report.json").display().to_string();
    let args: Vec<String> = [
        "review",
        "--repo",
        &repo.path().display().to_string(),
        "--base",
        &base,
        "--head",
        &head,
        "--manifest",
        &manifest.display().to_string(),
        "--base-url",
        &server.base_url(),
        "--model",
        "scripted",
        "--color",
        "never",
        "--out",
        &out,
    ]
    .map(str::to_owned)
    .into();
    let (code, frame) = tokio::task::spawn_blocking(move || on_a_terminal(&args))
        .await
        .unwrap();
    assert_eq!(code, 0, "{frame}");
    let finished = frame
        .find("vouch: review finished")
        .unwrap_or_else(|| panic!("no progress display on the terminal:\n{frame}"));
    let first_diagnostic = frame
        .find("{\"jobId\"")
        .unwrap_or_else(|| panic!("the diagnostics were lost:\n{frame}"));
    assert!(
        first_diagnostic > finished,
        "a diagnostic was written while the progress display was live:\n{frame}"
    );
    insta::assert_snapshot!(normalised(&frame, &out));
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
    let (repo, base, head) = one_file_change();
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
        Script::new().rule(stage(
            GENERIC,
            "investigator",
            [receipt(json!([]), &["a.txt"])],
        ))
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
    // "not a clean opinion (see below)": the reasons follow.
    assert!(
        quiet
            .stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("  - ")),
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
    // The summary says why, stage by stage: the failure, not only how many there were.
    assert!(
        quiet
            .stdout
            .lines()
            .any(|l| l.starts_with("  - ") && l.contains("HTTP 500")),
        "{}",
        quiet.stdout
    );
}
