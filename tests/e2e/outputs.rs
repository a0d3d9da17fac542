//! Output documents through the real binary: several formats from one run, `vouch render`
//! of a saved report, a valid document of the requested format on stdout and in every
//! `--out` after any exit, and never an earlier run's report left in place.

use std::path::Path;

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Script, ScriptedServer};
use vouch_workspace_tests::{
    GENERIC, ScriptedVerifier, candidate, citation, decision, finding, receipt, run_vouch, stage,
    vouch_command, workspace,
};

const LIB_BASE: &str =
    "pub fn parse_port(s: &str) -> Option<u16> {\n    s.trim().parse().ok()\n}\n";
const LIB_HEAD: &str = "pub fn parse_port(s: &str) -> Option<u16> {\n    let n: u32 = s.trim().parse().ok()?;\n    Some(n as u16)\n}\n";

/// A repository whose head changes `src/lib.rs`, with an `origin` remote that carries a
/// token (which no document may repeat).
fn repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", LIB_BASE);
    let base = repo.commit("base");
    repo.write("src/lib.rs", LIB_HEAD);
    let head = repo.commit("widen port parsing");
    repo.git(&[
        "remote",
        "add",
        "origin",
        "https://x-access-token:ghs_SECRET@github.com/acme/ports.git",
    ]);
    (repo, base, head)
}

/// One verified finding at `src/lib.rs:2-3`.
fn one_finding_script() -> Script {
    const CLAIM: &str = "ports above 65535 wrap silently";
    let candidates = json!([candidate("src/lib.rs", 2, 3, CLAIM)]);
    Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [receipt(candidates, &["src/lib.rs"])],
        ))
        .rule(
            ScriptedVerifier::new()
                .confirms("generic-investigator #1/0", "src/lib.rs", 2, 3, CLAIM)
                .rule(),
        )
}

async fn review(
    repo: &TestRepo,
    base: &str,
    head: &str,
    base_url: &str,
    extra: &[&str],
) -> vouch_workspace_tests::Output {
    let args = review_args(repo, base, head, base_url, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_vouch(&args, &[]).await
}

/// The arguments of [`review`].
fn review_args(
    repo: &TestRepo,
    base: &str,
    head: &str,
    base_url: &str,
    extra: &[&str],
) -> Vec<String> {
    let repo = repo.path().display().to_string();
    let manifest = workspace()
        .join("tests/data/e2e/minimal.toml")
        .display()
        .to_string();
    let mut args = vec![
        "review",
        "--repo",
        &repo,
        "--base",
        base,
        "--head",
        head,
        "--manifest",
        &manifest,
        "--base-url",
        base_url,
        "--model",
        "scripted",
    ];
    args.extend_from_slice(extra);
    args.into_iter().map(str::to_owned).collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn one_run_writes_every_format_and_render_reproduces_them_without_a_model() {
    let (repo, base, head) = repo();
    let server = ScriptedServer::start(one_finding_script()).await;
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("reports");
    let out_dir_arg = out_dir.display().to_string();
    let out = review(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &[
            "--format",
            "json,markdown,sarif",
            "--format",
            "rdjson,rdjsonl,codequality",
            "--out-dir",
            &out_dir_arg,
        ],
    )
    .await;
    assert_eq!(
        out.code, 1,
        "findings exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    let requests = server.request_count();
    assert_eq!(
        (
            server.served_by("investigator").len(),
            server.served_by("verifier").len()
        ),
        (1, 1),
        "one model run for six documents"
    );
    assert!(out.stdout.contains("1 verified finding"), "{}", out.stdout);
    assert!(
        out.stdout.contains("sarif report written to"),
        "{}",
        out.stdout
    );

    let report = json_of(&read(&out_dir.join("vouch-report.json")));
    assert_eq!(report["opinion"]["outcome"], "findings");
    assert_eq!(report["remoteUrl"], "https://github.com/acme/ports.git");
    let sarif = json_of(&read(&out_dir.join("vouch-report.sarif")));
    let run = &sarif["runs"][0];
    assert_eq!(
        run["results"][0]["message"]["text"],
        "ports above 65535 wrap silently"
    );
    assert_eq!(
        run["versionControlProvenance"][0]["repositoryUri"],
        "https://github.com/acme/ports.git"
    );
    assert_eq!(
        run["versionControlProvenance"][0]["revisionId"],
        head.as_str()
    );
    let rdjson = json_of(&read(&out_dir.join("vouch-report.rdjson")));
    assert_eq!(rdjson["diagnostics"][0]["location"]["path"], "src/lib.rs");
    let rdjsonl = read(&out_dir.join("vouch-report.rdjsonl"));
    let lines: Vec<Value> = rdjsonl.lines().map(json_of).collect();
    assert_eq!(lines, rdjson["diagnostics"].as_array().unwrap().clone());
    let codequality = json_of(&read(&out_dir.join("vouch-codequality.json")));
    assert_eq!(codequality[0]["location"]["lines"]["begin"], 2);
    let markdown = read(&out_dir.join("vouch-report.md"));
    assert!(
        markdown.contains("ports above 65535 wrap silently"),
        "{markdown}"
    );
    for name in ["vouch-report.json", "vouch-report.sarif", "vouch-report.md"] {
        assert!(
            !read(&out_dir.join(name)).contains("SECRET"),
            "{name} leaks the token"
        );
    }

    // The saved JSON report renders to the same documents, with no endpoint and no model.
    let saved = out_dir.join("vouch-report.json").display().to_string();
    for (format, file) in [
        ("sarif", "vouch-report.sarif"),
        ("markdown", "vouch-report.md"),
        ("rdjsonl", "vouch-report.rdjsonl"),
        ("codequality", "vouch-codequality.json"),
    ] {
        let rendered = run_vouch(&["render", &saved, "--format", format], &[]).await;
        assert_eq!(rendered.code, 0, "{format}: {}", rendered.stdout);
        assert_eq!(rendered.stdout, read(&out_dir.join(file)), "{format}");
    }
    assert_eq!(server.request_count(), requests, "render calls no model");

    // The validator takes the saved JSON report by its embedded final report, and names
    // the Markdown report as one that embeds none.
    let validated = run_vouch(&["validate-report", &saved], &[]).await;
    assert_eq!(
        validated.code, 0,
        "{}\n{}",
        validated.stdout, validated.stderr
    );
    assert!(
        validated
            .stderr
            .contains("its embedded final report (/finalReport) was validated"),
        "{}",
        validated.stderr
    );
    let markdown_path = out_dir.join("vouch-report.md").display().to_string();
    let unreadable = run_vouch(&["validate-report", &markdown_path], &[]).await;
    assert_eq!(unreadable.code, 3, "{}", unreadable.stdout);
    assert!(
        unreadable
            .stdout
            .contains("is vouch's Markdown review report, which embeds no final report"),
        "{}",
        unreadable.stdout
    );

    // As a pull-request comment: the hidden marker first, the same content.
    let comment = run_vouch(
        &["render", &saved, "--format", "markdown", "--comment"],
        &[],
    )
    .await;
    assert_eq!(comment.code, 0, "{}", comment.stdout);
    assert_eq!(
        comment.stdout,
        format!(
            "<!-- vouch:summary -->\n{}",
            read(&out_dir.join("vouch-report.md"))
        )
    );

    // Rendering over its own input is refused, and the input survives.
    let over = format!("json={saved}");
    let refused = run_vouch(&["render", &saved, "--out", &over], &[]).await;
    assert_eq!(refused.code, 3, "{}", refused.stdout);
    assert!(
        refused.stdout.contains("the report being rendered"),
        "{}",
        refused.stdout
    );
    assert_eq!(json_of(&read(&out_dir.join("vouch-report.json"))), report);

    // A saved report whose area or role is outside vouch's vocabulary is refused, naming
    // the field and the value (never read with a default).
    for (pointer, bad) in [("/findings/0/area", "style"), ("/stages/0/role", "judge")] {
        let mut broken = report.clone();
        *broken.pointer_mut(pointer).expect(pointer) = json!(bad);
        let path = out_dir.join("broken.json");
        std::fs::write(&path, broken.to_string()).unwrap();
        let out = run_vouch(&["render", &path.display().to_string()], &[]).await;
        assert_eq!(out.code, 3, "{pointer}: {}", out.stdout);
        assert!(
            out.stdout.contains(&format!("\"{bad}\" is not one of"))
                && out.stdout.contains(pointer),
            "{pointer}: {}",
            out.stdout
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn out_format_pairs_write_each_document_and_stdout_keeps_its_own() {
    let (repo, base, head) = repo();
    let server = ScriptedServer::start(one_finding_script()).await;
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("code-scanning.sarif");
    let cq = dir.path().join("gl-code-quality.json");
    let sarif_arg = format!("sarif={}", sarif.display());
    let cq_arg = format!("codequality={}", cq.display());
    let out = review(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &["--format", "json", "--out", &sarif_arg, "--out", &cq_arg],
    )
    .await;
    assert_eq!(out.code, 1, "{}", out.stdout);
    // stdout is the JSON report alone.
    assert_eq!(out.json()["findings"][0]["path"], "src/lib.rs");
    assert_eq!(json_of(&read(&sarif))["version"], "2.1.0");
    assert_eq!(json_of(&read(&cq))[0]["severity"], "major");
}

#[tokio::test(flavor = "multi_thread")]
async fn several_formats_on_stdout_are_a_usage_error_naming_the_fix() {
    let out = run_vouch(&["review", "--format", "json,sarif"], &[]).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("--out-dir"), "{}", out.stdout);
}

/// Every format's document on stdout when the review cannot start (no endpoint): valid
/// in its format, the error inside, exit 3.
#[tokio::test(flavor = "multi_thread")]
async fn stdout_carries_the_formats_failure_document_when_the_review_cannot_start() {
    let (repo, base, head) = repo();
    let repo_path = repo.path().display().to_string();
    for format in [
        "json",
        "markdown",
        "sarif",
        "rdjson",
        "rdjsonl",
        "codequality",
    ] {
        let out = run_vouch(
            &[
                "review", "--repo", &repo_path, "--base", &base, "--head", &head, "--format",
                format,
            ],
            &[],
        )
        .await;
        assert_eq!(out.code, 3, "{format}: {}", out.stdout);
        assert!(
            !out.stdout.starts_with("vouch:"),
            "{format}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains("OPENAI_BASE_URL"),
            "{format}: {}",
            out.stdout
        );
        match format {
            "json" => {
                let doc = out.json();
                assert_eq!(doc["schemaVersion"], "vouch.review-failure/1");
                assert_eq!(doc["exitCode"], 3);
                assert_eq!(doc["class"], "usage");
                let schema = vouch_report::failure_schema();
                assert!(jsonschema::is_valid(&schema, &doc), "{doc:#}");
            }
            "markdown" => assert!(
                out.stdout.starts_with("# vouch review: Failed"),
                "{}",
                out.stdout
            ),
            "sarif" => {
                let run = &out.json()["runs"][0];
                assert_eq!(run["invocations"][0]["executionSuccessful"], false);
                assert!(run.get("results").is_none(), "no results: not 'no alerts'");
            }
            "rdjson" => assert_eq!(out.json()["diagnostics"][0]["severity"], "ERROR"),
            "rdjsonl" => {
                let lines: Vec<Value> = out.stdout.lines().map(json_of).collect();
                assert_eq!(lines.len(), 1);
                assert_eq!(lines[0]["severity"], "ERROR");
            }
            "codequality" => assert_eq!(out.json()[0]["check_name"], "vouch/review-failed"),
            _ => unreachable!(),
        }
    }
}

/// `--out` after any exit holds this run's document: a run that exits 3 for a missing
/// or invalid `--manifest` replaces an earlier clean report with its failure document.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_run_never_leaves_an_earlier_report_in_out() {
    let (repo, base, head) = repo();
    let server = ScriptedServer::start(Script::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let bad_manifest = dir.path().join("bad.toml");
    std::fs::write(&bad_manifest, "this is = = not toml\n").unwrap();
    let bad_manifest = bad_manifest.display().to_string();
    let report = dir.path().join("report.json");
    let report_arg = report.display().to_string();
    for manifest in ["/nonexistent/vouch.toml", bad_manifest.as_str()] {
        let earlier = r#"{"schemaVersion": "vouch.review-report/2", "opinion": {"outcome": "no-findings", "clean": true}}"#;
        std::fs::write(&report, earlier).unwrap();
        let repo_path = repo.path().display().to_string();
        let out = run_vouch(
            &[
                "review",
                "--repo",
                &repo_path,
                "--base",
                &base,
                "--head",
                &head,
                "--base-url",
                &server.base_url(),
                "--model",
                "scripted",
                "--manifest",
                manifest,
                "--format",
                "json",
                "--out",
                &report_arg,
            ],
            &[],
        )
        .await;
        assert_eq!(out.code, 3, "{manifest}: {}", out.stdout);
        assert!(out.stdout.starts_with("vouch: "), "{}", out.stdout);
        let doc = json_of(&read(&report));
        assert_eq!(
            doc["schemaVersion"], "vouch.review-failure/1",
            "{manifest}: {doc:#}"
        );
        assert!(
            doc["message"].as_str().unwrap().contains(manifest),
            "{manifest}: {doc:#}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn render_refuses_what_is_not_a_review_report_in_the_requested_format() {
    let dir = tempfile::tempdir().unwrap();
    let not_report = dir.path().join("other.json");
    std::fs::write(&not_report, r#"{"schemaVersion": "something/2"}"#).unwrap();
    let path = not_report.display().to_string();
    let out = run_vouch(&["render", &path, "--format", "sarif"], &[]).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    let run = &out.json()["runs"][0];
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    let note = run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
        .as_str()
        .unwrap();
    assert!(
        note.contains("something/2") && note.contains("vouch review --format json"),
        "{note}"
    );
    let missing = run_vouch(&["render", "/nonexistent/r.json"], &[]).await;
    assert_eq!(missing.code, 3);
    assert!(
        missing.stdout.contains("/nonexistent/r.json"),
        "{}",
        missing.stdout
    );
}

/// An incomplete review (the verifier cites lines it never read): SARIF without
/// `results` and not successful, so an upload could never close alerts; rdjson and Code
/// Quality state the outcome; the Markdown names it.
#[tokio::test(flavor = "multi_thread")]
async fn an_incomplete_review_is_stated_in_every_format_and_never_reads_as_no_alerts() {
    let (repo, base, head) = repo();
    let verifier = ScriptedVerifier::new().decides(decision(
        "generic-investigator #1/0",
        "verified",
        json!([citation("src/lib.rs", 90, 95)]),
        Some(finding("src/lib.rs", 2, 3, "wraps")),
    ));
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [receipt(
                json!([candidate("src/lib.rs", 2, 3, "wraps")]),
                &["src/lib.rs"],
            )],
        ))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().display().to_string();
    let out = review(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &[
            "--format",
            "sarif,rdjson,codequality,markdown",
            "--out-dir",
            &out_dir,
        ],
    )
    .await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    let sarif = json_of(&read(&dir.path().join("vouch-report.sarif")));
    let run = &sarif["runs"][0];
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    assert!(run.get("results").is_none(), "{run:#}");
    assert_eq!(run["properties"]["outcome"], "incomplete");
    let rdjson = json_of(&read(&dir.path().join("vouch-report.rdjson")));
    let diagnostics = rdjson["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{rdjson:#}");
    assert_eq!(diagnostics[0]["severity"], "ERROR");
    assert_eq!(diagnostics[0]["location"]["path"], "src/lib.rs");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("outside the source read"),
        "{rdjson:#}"
    );
    let cq = json_of(&read(&dir.path().join("vouch-codequality.json")));
    assert_eq!(cq[0]["check_name"], "vouch/review-not-completed");
    let md = read(&dir.path().join("vouch-report.md"));
    assert!(md.starts_with("# vouch review: Incomplete"), "{md}");
}

/// A usage error of a flag other than the output flags (a value clap refuses, an unknown
/// flag), wherever it stands on the command line, still leaves this run's failure
/// document, naming the error, in every requested document, never an earlier run's
/// report; clap's message stays on stderr and the exit code is 3. Wrong output flags
/// themselves write no document.
#[tokio::test(flavor = "multi_thread")]
async fn a_usage_error_of_another_flag_replaces_earlier_reports_with_failure_documents() {
    let (repo, base, head) = repo();
    let repo_path = repo.path().display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("report.json");
    let sarif_path = dir.path().join("report.sarif");
    let json_arg = format!("json={}", json_path.display());
    let sarif_arg = format!("sarif={}", sarif_path.display());
    let outputs = [
        "--format",
        "json,sarif",
        "--out",
        json_arg.as_str(),
        "--out",
        sarif_arg.as_str(),
    ];
    let earlier =
        r#"{"schemaVersion": "vouch.review-report/2", "opinion": {"outcome": "findings"}}"#;
    // (the bad flag, the words of clap's error the document must carry)
    let cases: [(&[&str], &str); 3] = [
        (&["--concurrency", "0"], "--concurrency"),
        (&["--fail-on", "bogus"], "bogus"),
        (&["--no-such-flag"], "--no-such-flag"),
    ];
    for (bad, named) in cases {
        // The bad flag after the output flags, and before them.
        for bad_first in [false, true] {
            std::fs::write(&json_path, earlier).unwrap();
            std::fs::write(&sarif_path, "an earlier run's SARIF").unwrap();
            let mut args = vec![
                "review", "--repo", &repo_path, "--base", &base, "--head", &head,
            ];
            if bad_first {
                args.extend_from_slice(bad);
                args.extend_from_slice(&outputs);
            } else {
                args.extend_from_slice(&outputs);
                args.extend_from_slice(bad);
            }
            let case = format!("{args:?}");
            let out = run_vouch(&args, &[]).await;
            assert_eq!(out.code, 3, "{case}: {}\n{}", out.stdout, out.stderr);
            assert!(out.stderr.contains(named), "{case}: {}", out.stderr);
            let doc = json_of(&read(&json_path));
            assert_eq!(doc["schemaVersion"], "vouch.review-failure/1", "{case}");
            assert_eq!(doc["class"], "usage", "{case}");
            assert_eq!(doc["exitCode"], 3, "{case}");
            let message = doc["message"].as_str().unwrap();
            assert!(message.contains(named), "{case}: {message}");
            assert!(
                !message.contains('\u{1b}'),
                "{case}: no ANSI codes: {message:?}"
            );
            let schema = vouch_report::failure_schema();
            assert!(jsonschema::is_valid(&schema, &doc), "{case}: {doc:#}");
            let sarif = json_of(&read(&sarif_path));
            let run = &sarif["runs"][0];
            assert_eq!(
                run["invocations"][0]["executionSuccessful"], false,
                "{case}"
            );
            assert!(run.get("results").is_none(), "{case}: no results");
        }
    }

    // A document bound for stdout is the failure document too.
    let out = run_vouch(
        &[
            "review",
            "--repo",
            &repo_path,
            "--format",
            "json",
            "--timeout",
            "0",
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let doc = out.json();
    assert_eq!(doc["schemaVersion"], "vouch.review-failure/1");
    assert!(
        doc["message"].as_str().unwrap().contains("--timeout"),
        "{doc:#}"
    );

    // Wrong output flags: clap's message alone, no document anywhere.
    std::fs::write(&json_path, earlier).unwrap();
    let out = run_vouch(
        &[
            "review",
            "--format",
            "xml",
            "--out",
            &json_arg,
            "--concurrency",
            "0",
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout, "",
        "no document of a format that does not exist"
    );
    assert!(out.stderr.contains("xml"), "{}", out.stderr);
    // `vouch render` never writes a failure document over the report it renders.
    let saved = dir.path().join("saved.json");
    std::fs::write(&saved, earlier).unwrap();
    let saved_arg = saved.display().to_string();
    let out = run_vouch(
        &[
            "render",
            &saved_arg,
            "--format",
            "json",
            "--out",
            &saved_arg,
            "--no-such-flag",
        ],
        &[],
    )
    .await;
    assert_eq!(
        out.code, 3,
        "{}
{}",
        out.stdout, out.stderr
    );
    assert_eq!(read(&saved), earlier, "the input survives");
    // Help is not an error: exit 0 and no document.
    let help = run_vouch(&["review", "--help", "--format", "json"], &[]).await;
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(help.stdout.contains("Usage"), "{}", help.stdout);
}

/// `vouch` run with `args` and stdout `stdout`; the reading end of a pipe is closed at
/// once when `close_pipe` (the reader went away before vouch wrote).
async fn run_with_stdout(
    args: &[String],
    stdout: std::process::Stdio,
    close_pipe: bool,
) -> vouch_workspace_tests::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = vouch_command(&args, &[])
        .stdout(stdout)
        .spawn()
        .expect("running vouch");
    if close_pipe {
        drop(child.stdout.take());
    }
    let out = child.wait_with_output().await.expect("running vouch");
    vouch_workspace_tests::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// stderr's last line: where vouch says what went wrong when stdout itself failed.
fn last_line(out: &vouch_workspace_tests::Output) -> &str {
    out.stderr.lines().last().unwrap_or_default()
}

fn dev_full() -> std::process::Stdio {
    let full = std::fs::File::options().write(true).open("/dev/full");
    full.expect("/dev/full").into()
}

/// A document stdout cannot take — a full disk (`/dev/full`) for `review` and `render`,
/// a reader that went away (a closed pipe) — ends the run with exit 2 and one line on
/// stderr naming the document, stdout and the OS error; never a panic (exit 101, with
/// only `{"reason":"panic"}` on stderr).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_document_stdout_cannot_take_is_exit_2_naming_stdout_and_the_os_error() {
    let (repo, base, head) = repo();
    let server = ScriptedServer::start(one_finding_script()).await;
    let args = review_args(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &["--format", "sarif"],
    );
    let out = run_with_stdout(&args, dev_full(), false).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        last_line(&out),
        "vouch: cannot write the sarif report to stdout: No space left on device (os error 28); \
         write the document to a file with --out FILE",
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("\"panic\""), "{}", out.stderr);

    let server = ScriptedServer::start(one_finding_script()).await;
    let args = review_args(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &["--format", "json"],
    );
    let out = run_with_stdout(&args, std::process::Stdio::piped(), true).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        last_line(&out).starts_with(
            "vouch: cannot write the json report to stdout: Broken pipe (os error 32) \
             (the program reading vouch's output exited before reading it all)"
        ),
        "{}",
        out.stderr
    );

    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("r.json").display().to_string();
    let server = ScriptedServer::start(one_finding_script()).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &["--format", "json", "--out", &saved],
    )
    .await;
    assert_eq!(out.code, 1, "{}", out.stdout);
    let render = ["render", &saved, "--format", "sarif"].map(str::to_owned);
    let out = run_with_stdout(&render, dev_full(), false).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        last_line(&out)
            .starts_with("vouch: cannot write the sarif report to stdout: No space left on device"),
        "{}",
        out.stderr
    );
}

/// The files in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The documents of one run are published together: when one destination cannot be
/// written once the review has run (its temporary file cannot be created: here a folder
/// stands in its place), no other document appears — not a clean JSON report beside the
/// SARIF that failed — and the run exits 2 naming the destination. A document bound for
/// stdout is then the failure document naming it.
#[tokio::test(flavor = "multi_thread")]
async fn one_unwritable_destination_publishes_no_document_of_the_run() {
    let (repo, base, head) = repo();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let md = dir.path().join("report.md");
    let sarif = dir.path().join("report.sarif");
    // What vouch writes the SARIF to before renaming it into place.
    let blocker = dir.path().join(".report.sarif.vouch-tmp");
    std::fs::create_dir(&blocker).unwrap();
    let outs = [("json", &json), ("markdown", &md), ("sarif", &sarif)]
        .map(|(format, path)| format!("{format}={}", path.display()));
    let server = ScriptedServer::start(one_finding_script()).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &[
            "--format",
            "json,markdown,sarif",
            "--out",
            &outs[0],
            "--out",
            &outs[1],
            "--out",
            &outs[2],
        ],
    )
    .await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        names_in(dir.path()),
        [".report.sarif.vouch-tmp"],
        "{}",
        out.stdout
    );
    let said = format!(
        "vouch: cannot write the sarif report to {}: Is a directory",
        sarif.display()
    );
    assert!(out.stdout.starts_with(&said), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("no file of this run was written (its files are published together"),
        "{}",
        out.stdout
    );

    // JSON on stdout, SARIF to the blocked file: stdout is the failure document.
    let server = ScriptedServer::start(one_finding_script()).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server.base_url(),
        &["--format", "json,sarif", "--out", &outs[2]],
    )
    .await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let doc = out.json();
    assert_eq!(doc["schemaVersion"], "vouch.review-failure/1", "{doc:#}");
    assert_eq!(doc["exitCode"], 2);
    let message = doc["message"].as_str().unwrap();
    assert!(message.contains(&sarif.display().to_string()), "{message}");
    assert_eq!(names_in(dir.path()), [".report.sarif.vouch-tmp"]);
}
