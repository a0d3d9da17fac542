//! `vouch validate-report` from the built binary, and the two gate recipes
//! (scripts/validate-final-report, examples/ci-gate/check-final-reports.sh) run
//! against it with valid and invalid reports.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn accept(name: &str) -> PathBuf {
    root().join("tests/data/final-report/accept").join(name)
}

fn vouch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(args)
        .output()
        .expect("run vouch")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The merged-PR report with its reviewed head moved off the validated HEAD and its
/// ancestry proof removed: two violations (rules 4 and 5).
fn invalid_report() -> String {
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(accept("merged-pr.json")).expect("fixture"))
            .expect("json");
    report["validation"]["worktreeHead"] =
        Value::String("0123456789abcdef0123456789abcdef01234567".into());
    report["merge"]
        .as_object_mut()
        .expect("merge")
        .shift_remove("targetAncestryProof");
    serde_json::to_string_pretty(&report).expect("serialize")
}

#[test]
fn valid_json_and_markdown_reports_exit_zero() {
    let json = accept("merged-pr.json");
    let transcript = accept("merged-pr.transcript.jsonl");
    for args in [
        vec![
            "validate-report",
            path_str(&json),
            "--transcript",
            path_str(&transcript),
        ],
        vec!["validate-report", path_str(&accept("merged-pr.md"))],
        vec![
            "validate-report",
            path_str(&accept("collision-stop.json")),
            "--transcript",
            path_str(&accept("collision-stop.transcript.jsonl")),
        ],
        vec![
            "validate-report",
            path_str(&accept("local-range.json")),
            "--format",
            "text",
        ],
    ] {
        let out = vouch(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stdout)
        );
        let stdout = text(&out.stdout);
        let (last, rest) = stdout
            .trim_end()
            .lines()
            .collect::<Vec<_>>()
            .split_last()
            .map(|(l, r)| (l.to_string(), r.to_vec()))
            .expect("output");
        assert_eq!(last, "report is valid", "{stdout}");
        // Anything before the summary is a warning, never a violation.
        assert!(
            rest.iter()
                .all(|l| l.starts_with("warning /narrative line ")),
            "{stdout}"
        );
    }
    // The collision report's "merged externally by bob" is shown as not checked.
    let out = vouch(&[
        "validate-report",
        path_str(&accept("collision-stop.json")),
        "--format",
        "json",
    ]);
    let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json verdict");
    assert_eq!(verdict["valid"], true);
    assert_eq!(verdict["warnings"][0]["line"], 1, "{verdict}");
    assert!(
        verdict["warnings"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("someone else")),
        "{verdict}"
    );
}

#[test]
fn invalid_report_exits_one_and_lists_every_violation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("report.json");
    std::fs::write(&file, invalid_report()).expect("write");
    let out = vouch(&["validate-report", path_str(&file)]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("REVIEWED_HEAD_UNPROVEN [rule 4] /validation/worktreeHead: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("MERGE_UNPROVEN [rule 5] /merge/targetAncestryProof: "),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("report is invalid: 2 violations\n"),
        "{stdout}"
    );

    let out = vouch(&["validate-report", path_str(&file), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let verdict: Value = serde_json::from_slice(&out.stdout).expect("json verdict");
    assert_eq!(verdict["valid"], false);
    assert_eq!(verdict["exitCode"], 1);
    let pairs: Vec<(String, String)> = verdict["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| {
            (
                v["code"].as_str().unwrap().to_owned(),
                v["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "REVIEWED_HEAD_UNPROVEN".to_owned(),
                "/validation/worktreeHead".to_owned()
            ),
            (
                "MERGE_UNPROVEN".to_owned(),
                "/merge/targetAncestryProof".to_owned()
            ),
        ]
    );
}

#[test]
fn standard_input_is_read_for_dash() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["validate-report", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(invalid_report().as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    let verdict: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(verdict["violations"].as_array().map(Vec::len), Some(2));
}

#[test]
fn unreadable_input_exits_three() {
    let dir = tempfile::tempdir().expect("tempdir");
    let two_blocks = dir.path().join("two.md");
    std::fs::write(
        &two_blocks,
        "Prose.\n\n```json\n{}\n```\n\n```json\n{}\n```\n",
    )
    .expect("write");
    let bad_transcript = dir.path().join("t.jsonl");
    std::fs::write(
        &bad_transcript,
        "{\"seq\":1,\"kind\":\"command\",\"command\":\"git status\"}\nnot json\n",
    )
    .expect("write");
    let missing = dir.path().join("missing.json");
    let good = accept("merged-pr.json");
    let cases: [(Vec<&str>, &str); 3] = [
        (vec![path_str(&missing)], "cannot read"),
        (vec![path_str(&two_blocks)], "2 fenced ```json blocks"),
        (
            vec![path_str(&good), "--transcript", path_str(&bad_transcript)],
            "transcript line 2",
        ),
    ];
    for (args, needle) in cases {
        let mut full = vec!["validate-report"];
        full.extend(args.iter().copied());
        let out = vouch(&full);
        assert_eq!(out.status.code(), Some(3), "{full:?}");
        assert!(
            text(&out.stdout).contains(needle),
            "{full:?}: {}",
            text(&out.stdout)
        );
        full.extend(["--format", "json"]);
        let verdict: Value = serde_json::from_slice(&vouch(&full).stdout).expect("json");
        assert_eq!(verdict["exitCode"], 3);
        assert!(verdict["error"].as_str().expect("error").contains(needle));
    }
}

fn run_script(script: &Path, args: &[&str], cwd: &Path) -> Output {
    Command::new("sh")
        .arg(script)
        .args(args)
        .current_dir(cwd)
        .env("VOUCH_BIN", env!("CARGO_BIN_EXE_vouch"))
        .env_remove("GITHUB_ACTIONS")
        .env_remove("VOUCH_FINAL_REPORT")
        .env_remove("VOUCH_TRANSCRIPT")
        .stdin(Stdio::null())
        .output()
        .expect("run script")
}

#[test]
fn stop_hook_script_blocks_until_the_report_is_valid() {
    let script = root().join("scripts/validate-final-report");
    let dir = tempfile::tempdir().expect("tempdir");

    // No report yet: the session may not stop.
    let out = run_script(&script, &[], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("final report not found: final-report.json"));

    // An invalid report at the default path: blocked, with every violation on stderr.
    std::fs::write(dir.path().join("final-report.json"), invalid_report()).expect("write");
    let out = run_script(&script, &[], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("is invalid. Fix every violation below"),
        "{stderr}"
    );
    assert!(
        stderr.contains("REVIEWED_HEAD_UNPROVEN [rule 4]"),
        "{stderr}"
    );
    assert!(stderr.contains("MERGE_UNPROVEN [rule 5]"), "{stderr}");

    // The fixed report with its transcript: the session may stop.
    let report = accept("merged-pr.md");
    let transcript = accept("merged-pr.transcript.jsonl");
    let out = run_script(
        &script,
        &[path_str(&report), path_str(&transcript)],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("is valid"));

    // A transcript that shows an unrecorded command blocks a report that is otherwise valid.
    let extra = dir.path().join("t.jsonl");
    let mut log = std::fs::read_to_string(&transcript).expect("transcript");
    log.push_str("{\"seq\":99,\"kind\":\"command\",\"command\":\"git push origin HEAD\",\"cwd\":\"/src/widgets\"}\n");
    std::fs::write(&extra, log).expect("write");
    let out = run_script(&script, &[path_str(&report), path_str(&extra)], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("COMMAND_LEDGER_INCOMPLETE"), "{stderr}");
    assert!(stderr.contains("MUTATION_LEDGER_DISAGREES"), "{stderr}");
}

#[test]
fn ci_gate_script_fails_on_any_invalid_report() {
    let script = root().join("examples/ci-gate/check-final-reports.sh");
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "merged-pr.json",
        "merged-pr.transcript.jsonl",
        "collision-stop.json",
        "collision-stop.transcript.jsonl",
    ] {
        std::fs::copy(accept(name), dir.path().join(name)).expect("copy");
    }
    let out = run_script(&script, &[path_str(dir.path())], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("2 report(s) checked, 0 invalid"));

    std::fs::write(dir.path().join("broken.json"), invalid_report()).expect("write");
    let out = run_script(&script, &[path_str(dir.path())], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("INVALID ") && stdout.contains("broken.json (exit 1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    REVIEWED_HEAD_UNPROVEN [rule 4]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 report(s) checked, 1 invalid"),
        "{stdout}"
    );

    let annotated = Command::new("sh")
        .arg(&script)
        .arg(dir.path())
        .env("VOUCH_BIN", env!("CARGO_BIN_EXE_vouch"))
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("run");
    let stdout = text(&annotated.stdout);
    assert!(
        stdout.contains("::error file=") && stdout.contains("broken.json::MERGE_UNPROVEN [rule 5]"),
        "{stdout}"
    );

    let out = run_script(&script, &[path_str(&dir.path().join("nope"))], dir.path());
    assert_eq!(out.status.code(), Some(1));
}
