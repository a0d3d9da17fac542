//! Issue 9, review-level promises end to end: files reviewed means seen (a 61-file
//! change where 58 files were never shown to or read by any stage), candidate intake
//! (a sloppy or out-of-file candidate is not verified and costs no other finding), and
//! model selection (each request names the model the rule chooses; the report names
//! each stage's model).

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    GENERIC, Output, ScriptedReview, ScriptedVerifier, VERIFIER, candidate, citation, decisions,
    finding, read_lines, receipt, stage, workspace,
};

/// `tests/data/e2e/<name>` as an absolute path.
fn manifest(name: &str) -> String {
    workspace()
        .join("tests/data/e2e")
        .join(name)
        .display()
        .to_string()
}

async fn review(
    repo: &TestRepo,
    base: &str,
    head: &str,
    server: &ScriptedServer,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> Output {
    ScriptedReview::new(repo, base, head, server)
        .manifest("tests/data/e2e/minimal.toml")
        .args(extra)
        .envs(envs)
        .run()
        .await
}

fn stderr_is_diagnostics_only(out: &Output) {
    for line in out.stderr.lines() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|_| panic!("stderr line is not a diagnostic: {line}"));
        assert!(
            v.get("reason").is_some() && v.get("jobId").is_some(),
            "{line}"
        );
        assert!(!line.contains("src/"), "a path leaked to stderr: {line}");
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// 61 changed files `src/f00.rs` … `src/f60.rs`, each gaining one line.
fn wide_change() -> (TestRepo, String, String, Vec<String>) {
    let repo = TestRepo::new();
    let paths: Vec<String> = (0..61).map(|i| format!("src/f{i:02}.rs")).collect();
    for p in &paths {
        repo.write(p, "pub fn f() {}\n");
    }
    let base = repo.commit("base");
    for p in &paths {
        repo.write(p, "pub fn f() {}\npub fn g() {}\n");
    }
    let head = repo.commit("touch every file");
    (repo, base, head, paths)
}

/// The investigator reads the first three files and then claims it reviewed all 61.
fn reads_three_claims_all(paths: &[String]) -> Vec<Reply> {
    let mut replies: Vec<Reply> = paths[..3]
        .iter()
        .map(|p| Reply::tool_call("read_file", json!({ "path": p }).to_string()))
        .collect();
    let all: Vec<&str> = paths.iter().map(String::as_str).collect();
    replies.push(receipt(json!([]), &all));
    replies
}

#[tokio::test(flavor = "multi_thread")]
async fn a_61_file_change_with_58_unseen_files_claims_only_the_3_it_saw() {
    let (repo, base, head, paths) = wide_change();
    // Nothing is given inline: a file is seen only when the model reads it.
    let envs = [("VOUCH_INLINE_BYTES", "0")];
    let script = || {
        Script::new().rule(stage(
            GENERIC,
            "investigator",
            reads_three_claims_all(&paths),
        ))
    };
    let server = ScriptedServer::start(script()).await;
    let out = review(&repo, &base, &head, &server, &[], &envs).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    stderr_is_diagnostics_only(&out);
    let report = out.json();
    let seen: Vec<String> = paths[..3].to_vec();
    let unseen: Vec<String> = paths[3..].to_vec();
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["opinion"]["clean"], false);
    // Every count and list of reviewed files counts only the 3 seen files.
    let summary = report["summary"].as_str().unwrap();
    assert!(summary.contains(" 3 reviewed file(s)"), "{summary}");
    assert!(!summary.contains("61 reviewed"), "{summary}");
    assert_eq!(strings(&report["filesReviewed"]), seen);
    assert_eq!(
        strings(&report["finalReport"]["diffReview"]["filesReviewed"]),
        seen
    );
    // Every one of the 58 others is listed by name with its reason, in JSON.
    let not_reviewed = report["filesNotReviewed"].as_array().unwrap();
    let listed: Vec<String> = not_reviewed
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, unseen);
    assert!(
        not_reviewed.iter().all(|f| f["reason"] == "not-fully-seen"),
        "{not_reviewed:?}"
    );
    // The stage's gap names all 58, not "10 and 48 more".
    let gap = report["limitations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "source-lookup-gap")
        .unwrap_or_else(|| panic!("{report:#}"));
    let detail = gap["detail"].as_str().unwrap();
    assert!(!detail.contains("more"), "{detail}");
    assert!(
        unseen.iter().all(|p| detail.contains(p.as_str())),
        "{detail}"
    );

    // Markdown: the count, "and 48 more" only beside a collapsible list of all 58.
    let server = ScriptedServer::start(script()).await;
    let (repo_path, minimal, base_url) = (
        repo.path().display().to_string(),
        manifest("minimal.toml"),
        server.base_url(),
    );
    let args = [
        "review",
        "--repo",
        &repo_path,
        "--base",
        &base,
        "--head",
        &head,
        "--base-url",
        &base_url,
        "--model",
        "scripted",
        "--manifest",
        &minimal,
    ];
    let md = vouch_workspace_tests::run_vouch(&args, &envs).await;
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(md.stdout.contains("in 3 reviewed file(s)"), "{}", md.stdout);
    assert!(
        md.stdout.contains("Reviewed 3 of 61 changed file(s)"),
        "{}",
        md.stdout
    );
    assert!(md.stdout.contains("- and 48 more"), "{}", md.stdout);
    let folded = md
        .stdout
        .split("<details>")
        .nth(1)
        .and_then(|rest| rest.split("</details>").next())
        .unwrap_or_else(|| panic!("no collapsible list:\n{}", md.stdout));
    for p in &unseen {
        assert!(folded.contains(&format!("`{p}` (not-fully-seen)")), "{p}");
    }
    for p in &seen {
        assert!(!folded.contains(&format!("`{p}`")), "{p} is reviewed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_incomplete_review_lists_no_file_as_reviewed_that_no_stage_accepted() {
    let (repo, base, head, paths) = wide_change();
    let script = Script::new().rule(
        Rule::when(Match::any_message_contains(GENERIC))
            .always(Reply::status(503).header("Retry-After", "0")),
    );
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["filesReviewed"], json!([]));
    assert_eq!(
        report["finalReport"]["diffReview"]["filesReviewed"],
        json!([])
    );
    let not_reviewed = report["filesNotReviewed"].as_array().unwrap();
    assert_eq!(not_reviewed.len(), paths.len());
    assert!(not_reviewed.iter().all(|f| f["reason"] == "stage-failed"));
}

const LIB_BASE: &str = "/// Parses a port number.\npub fn parse_port(s: &str) -> Option<u16> {\n    s.trim().parse().ok()\n}\n\n/// Clamps a percentage.\npub fn clamp_pct(v: i32) -> i32 {\n    v.clamp(0, 100)\n}\n";
const LIB_HEAD: &str = "/// Parses a port number.\npub fn parse_port(s: &str) -> Option<u16> {\n    let n: u32 = s.trim().parse().ok()?;\n    Some(n as u16)\n}\n\n/// Clamps a percentage.\npub fn clamp_pct(v: i32) -> i32 {\n    v.clamp(0, 101)\n}\n";

/// The investigator reads `src/limits.rs`, then proposes `candidates`.
fn investigates_limits(candidates: Value) -> Rule {
    stage(
        GENERIC,
        "investigator",
        [
            Reply::tool_call("read_file", r#"{"path": "src/limits.rs"}"#),
            receipt(candidates, &["src/limits.rs"]),
        ],
    )
}

/// A repository whose head changes `src/limits.rs` (11 lines at head).
fn limits_repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/limits.rs", LIB_BASE);
    let base = repo.commit("base");
    repo.write("src/limits.rs", LIB_HEAD);
    let head = repo.commit("widen port parsing");
    (repo, base, head)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_that_does_not_resolve_is_not_verified_and_the_good_one_is_published() {
    // (the sloppy candidate's path, lines, the reason code recorded)
    let cases: &[(&str, u32, u32, &str)] = &[
        ("./src/limits.rs", 3, 4, "path-not-canonical"),
        ("src\\limits.rs", 3, 4, "path-not-canonical"),
        ("/src/limits.rs", 3, 4, "path-not-canonical"),
        ("SRC/Limits.rs", 3, 4, "no-such-file"),
        ("src/limits.rs", 400, 410, "past-end-of-file"),
        ("src/limits.rs", 4, 3, "invalid-line-range"),
    ];
    for &(path, start, end, code) in cases {
        let (repo, base, head) = limits_repo();
        let candidates = json!([
            candidate(path, start, end, "ports above 65535 wrap silently"),
            candidate("src/limits.rs", 10, 10, "clamp allows 101"),
        ]);
        // The verifier decides only the good candidate: the sloppy one never reaches it.
        let good = "generic-investigator #1/1";
        let verifier =
            ScriptedVerifier::new().confirms(good, "src/limits.rs", 10, 10, "clamp allows 101");
        let script = Script::new()
            .rule(investigates_limits(candidates))
            .rule(verifier.rule());
        let server = ScriptedServer::start(script).await;
        let out = review(&repo, &base, &head, &server, &[], &[]).await;
        let case = format!("{path}:{start}-{end}");
        assert_eq!(out.code, 1, "{case}: {}\n{}", out.stdout, out.stderr);
        stderr_is_diagnostics_only(&out);
        let report = out.json();
        // The review is limited, not incomplete, and the good finding is published.
        assert_eq!(report["opinion"]["outcome"], "findings", "{case}");
        assert_eq!(report["opinion"]["coverage"], "limited", "{case}");
        let findings = report["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{case}: {report:#}");
        assert_eq!(findings[0]["startLine"], 10, "{case}");
        // The sloppy candidate never reached the verifier.
        let verifier = server.served_by("verifier");
        assert_eq!(verifier.len(), 1, "{case}");
        let sent = verifier[0].body.to_string();
        assert!(!sent.contains("generic-investigator #1/0"), "{case}");
        assert!(sent.contains(good), "{case}");
        // It is recorded with its reason code and limits coverage.
        let limitation = report["limitations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["kind"] == "unverifiable-candidate")
            .unwrap_or_else(|| panic!("{case}: {report:#}"));
        assert!(
            limitation["detail"].as_str().unwrap().contains(code),
            "{case}: {limitation}"
        );
        assert!(
            report["observations"].as_array().unwrap().iter().any(|o| o
                .as_str()
                .unwrap()
                .contains(&format!("generic-investigator #1/0 ({path}"))
                && o.as_str().unwrap().contains(code)),
            "{case}: {report:#}"
        );
        assert!(
            out.stderr.contains("\"reason\":\"candidate-not-resolved\""),
            "{case}: {}",
            out.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pinned_specialist_keeps_its_model_and_the_flag_or_variable_sets_the_default() {
    // (--model flag, VOUCH_MODEL, the default the verifier must be sent)
    let cases: &[(Option<&str>, Option<&str>, &str)] = &[
        (Some("flag-model"), None, "flag-model"),
        (Some("flag-model"), Some("env-model"), "flag-model"),
        (None, Some("env-model"), "env-model"),
    ];
    for &(flag, variable, default) in cases {
        let (repo, base, head) = limits_repo();
        let candidates = json!([candidate("src/limits.rs", 10, 10, "clamp allows 101")]);
        let verifier = ScriptedVerifier::new().dismisses(
            "generic-investigator #1/0",
            json!([citation("src/limits.rs", 10, 10)]),
        );
        let script = Script::new()
            .rule(investigates_limits(candidates))
            .rule(verifier.rule());
        let server = ScriptedServer::start(script).await;
        let own_model = manifest("own-model.toml");
        let repo_path = repo.path().display().to_string();
        let base_url = server.base_url();
        let mut args = vec![
            "review",
            "--repo",
            &repo_path,
            "--base",
            &base,
            "--head",
            &head,
            "--format",
            "json",
            "--base-url",
            &base_url,
            "--manifest",
            &own_model,
        ];
        if let Some(f) = flag {
            args.extend(["--model", f]);
        }
        let envs: Vec<(&str, &str)> = variable.map(|v| ("VOUCH_MODEL", v)).into_iter().collect();
        let out = vouch_workspace_tests::run_vouch(&args, &envs).await;
        let case = format!("flag {flag:?}, VOUCH_MODEL {variable:?}");
        assert_eq!(out.code, 0, "{case}: {}\n{}", out.stdout, out.stderr);
        // Each request names the model the rule chooses.
        let models = |rule: &str| -> Vec<String> {
            server
                .served_by(rule)
                .iter()
                .map(|r| r.body["model"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(models("investigator"), ["investigator-model"; 2], "{case}");
        assert_eq!(models("verifier"), [default], "{case}");
        // The report names the model each stage used.
        let report = out.json();
        let stage_models: Vec<(String, String)> = report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["label"].as_str().unwrap().to_string(),
                    s["model"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            stage_models,
            [
                (
                    "generic-investigator #1".to_string(),
                    "investigator-model".to_string()
                ),
                ("verifier".to_string(), default.to_string()),
            ],
            "{case}"
        );
    }
}

/// A verifier that confirms the first of six candidates and dismisses the other five.
fn decides_the_first_six() -> ScriptedVerifier {
    let mut verifier =
        ScriptedVerifier::new().confirms("generic-investigator #1/0", "src/limits.rs", 1, 1, "x");
    for i in 1..6 {
        verifier = verifier.dismisses(
            &format!("generic-investigator #1/{i}"),
            json!([citation("src/limits.rs", i + 1, i + 1)]),
        );
    }
    verifier
}

/// The verifier was asked about the first six candidates, never about lines 7 and 8.
fn assert_the_verifier_decided_only_the_first_six(server: &ScriptedServer) {
    let sent: String = server
        .served_by("verifier")
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(sent.contains("generic-investigator #1/5"), "{sent}");
    assert!(!sent.contains("concern on line 7") && !sent.contains("concern on line 8"));
}

/// The details of the report's `unverifiable-candidate` limitations.
fn unverifiable(report: &Value) -> Vec<&str> {
    report["limitations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "unverifiable-candidate")
        .map(|l| l["detail"].as_str().unwrap())
        .collect()
}

/// A reply that raises more candidates than a reply may carry (six) is not refused for
/// it: the first six are verified, each one past the bound is named with its claim and
/// limits coverage, and the review ends with its findings instead of incomplete.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_with_more_candidates_than_its_bound_is_verified_up_to_it_and_names_the_rest() {
    let (repo, base, head) = limits_repo();
    // The last two share a place with different claims: two candidates, both named.
    let candidates: Vec<Value> = (1..=8)
        .map(|n| {
            let line = n.min(7);
            candidate("src/limits.rs", line, line, &format!("concern on line {n}"))
        })
        .collect();
    let verifier = decides_the_first_six();
    let script = Script::new()
        .rule(investigates_limits(Value::Array(candidates)))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "findings", "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    // Not refused for it: no repair, and the investigator answered once.
    assert!(server.unmatched().is_empty());
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.system().unwrap_or_default().contains("You repair")),
        "no repair"
    );
    // The verifier decides the first six, never the two past the bound.
    assert_the_verifier_decided_only_the_first_six(&server);
    // Each of the two is named, with its claim, and limits coverage.
    let limited = unverifiable(&report);
    assert_eq!(limited.len(), 2, "{report:#}");
    assert!(limited[0].contains("src/limits.rs:7-7 at head") && limited[0].contains("bound of 6"));
    assert!(
        limited[1].contains("src/limits.rs:7-7 at head (concern on line 8)"),
        "{limited:?}"
    );
    let observations = report["observations"].to_string();
    assert!(
        observations.contains("raised 8 candidates") && observations.contains("concern on line 8"),
        "{observations}"
    );
}

/// A broken reply that raises more candidates than a repair may carry (six) is not
/// failed for it: the repair is asked for the first six, those are verified, and each
/// one it could not hold is named and limits coverage.
#[tokio::test(flavor = "multi_thread")]
async fn a_broken_reply_with_more_candidates_than_a_repair_carries_is_repaired_up_to_it() {
    let (repo, base, head) = limits_repo();
    let raised = |n: u32| candidate("src/limits.rs", n, n, &format!("concern on line {n}"));
    let mut candidates: Vec<Value> = (1..=8).map(raised).collect();
    // One value outside the contract sends the reply to repair.
    candidates[2]["severity"] = json!("huge");
    let repaired: Vec<Value> = (1..=6).map(raised).collect();
    let verifier = decides_the_first_six();
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains(
                "You repair a reviewer's final answer",
            ))
            .named("repair")
            .always(receipt(Value::Array(repaired), &["src/limits.rs"])),
        )
        .rule(investigates_limits(Value::Array(candidates)))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "findings", "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    // The repair was asked for the first six, under a contract that holds six.
    let repair = server.served_by("repair");
    assert_eq!(repair.len(), 1);
    let asked = repair[0].body.to_string();
    assert!(
        asked.contains("raises 8 candidates and the contract holds 6"),
        "{asked}"
    );
    assert_eq!(
        repair[0].body["response_format"]["json_schema"]["schema"]["properties"]["candidates"]["maxItems"],
        6
    );
    // The verifier decides the six the repair kept, never the two it could not hold.
    assert_the_verifier_decided_only_the_first_six(&server);
    let limited = unverifiable(&report);
    assert_eq!(limited.len(), 2, "{report:#}");
    for (detail, line) in limited.iter().zip([7, 8]) {
        assert!(
            detail.contains(&format!("src/limits.rs:{line}-{line}"))
                && detail.contains("a repair carries at most 6 candidates"),
            "{detail}"
        );
    }
}

/// A candidate on a binary file (an image the change updates) has no lines a finding
/// could cite: it is set aside as `binary-file`, not as a file that does not exist.
#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_on_a_binary_file_is_set_aside_as_binary() {
    let repo = TestRepo::new();
    let png = |seed: u8| {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        b.push(seed);
        b
    };
    repo.write("src/limits.rs", LIB_BASE)
        .write("assets/logo.png", png(1));
    let base = repo.commit("base");
    repo.write("src/limits.rs", LIB_HEAD)
        .write("assets/logo.png", png(2));
    let head = repo.commit("new logo");
    let lane = Reply::computed(|body| {
        let list = vouch_workspace_tests::expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        let candidates = json!([
            candidate("assets/logo.png", 1, 1, "the logo lost its transparency"),
            candidate("src/limits.rs", 10, 10, "clamp allows 101"),
        ]);
        Reply::content(vouch_workspace_tests::candidates_reply(
            candidates, true, &paths,
        ))
    });
    let verifier = ScriptedVerifier::new().confirms(
        "generic-investigator #1/1",
        "src/limits.rs",
        10,
        10,
        "clamp allows 101",
    );
    let script = Script::new()
        .rule(Rule::when(Match::user_contains("Instance: generic-investigator")).always(lane))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &["--tools", "off"], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let limitation = report["limitations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "unverifiable-candidate")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        limitation["detail"]
            .as_str()
            .unwrap()
            .contains("assets/logo.png:1-1 at head) was not verified (binary-file)"),
        "{limitation}"
    );
}

/// A candidate on a changed file the repository excludes from review is never verified:
/// the excluded file's source is not sent to the verifier, and no finding rests on a
/// file the report lists as not reviewed.
#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_on_an_excluded_file_is_never_sent_to_the_verifier() {
    let (repo, base, head) = excluded_secret_repo();
    let candidates = json!([
        candidate("gen/secret.py", 1, 1, "a hard-coded token"),
        candidate("src/limits.rs", 10, 10, "clamp allows 101"),
    ]);
    let verifier = ScriptedVerifier::new().confirms(
        "generic-investigator #1/1",
        "src/limits.rs",
        10,
        10,
        "clamp allows 101",
    );
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [receipt(candidates, &["src/limits.rs"])],
        ))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &["--tools", "off"], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let findings: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(findings, ["src/limits.rs"], "{report:#}");
    for request in server.served_by("verifier") {
        assert!(
            !request.raw_body.contains("new-secret-value")
                && !request.raw_body.contains("gen/secret.py"),
            "the excluded file reached the verifier"
        );
    }
    let details = report["limitations"].to_string();
    assert!(
        details.contains("gen/secret.py:1-1 at head) was not verified (excluded-file)"),
        "{details}"
    );
}

/// A verifier that reads an excluded changed file by itself is refused, sees none of it,
/// and cannot cite it: no finding rests on a file the report lists as not reviewed.
#[tokio::test(flavor = "multi_thread")]
async fn a_verifier_can_neither_read_nor_cite_an_excluded_file() {
    let (repo, base, head) = excluded_secret_repo();
    let candidates = json!([candidate("src/limits.rs", 10, 10, "clamp allows 101")]);
    let cites_the_secret = json!([{"candidateId": "generic-investigator #1/0", "decision": "verified",
        "evidence": "the token shows it", "citations": [citation("src/limits.rs", 10, 10),
        citation("gen/secret.py", 1, 1)], "finding": finding("src/limits.rs", 10, 10, "clamp allows 101")}]);
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [receipt(candidates, &["src/limits.rs"])],
        ))
        .rule(stage(
            VERIFIER,
            "verifier",
            [
                read_lines("gen/secret.py", 1, 1),
                decisions(cites_the_secret),
            ],
        ));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    let report = out.json();
    assert_ne!(report["opinion"]["outcome"], "findings", "{report:#}");
    assert!(report["findings"].as_array().unwrap().is_empty());
    for request in server.served_by("verifier") {
        assert!(!request.raw_body.contains("new-secret-value"), "shown");
    }
    let answered = server.served_by("verifier")[1]
        .contents_of("tool")
        .join("\n");
    assert!(
        answered.contains("`gen/secret.py` is a changed file this review excludes"),
        "{answered}"
    );
}

/// A change to `src/limits.rs` and to `gen/secret.py`, which the repository excludes.
fn excluded_secret_repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write(".vouch/review.toml", "[files]\nexclude = [\"gen/**\"]\n")
        .write("src/limits.rs", LIB_BASE)
        .write("gen/secret.py", "TOKEN = 'old-secret-value'\n");
    let base = repo.commit("base");
    repo.write("src/limits.rs", LIB_HEAD)
        .write("gen/secret.py", "TOKEN = 'new-secret-value'\n");
    let head = repo.commit("regenerate");
    (repo, base, head)
}

/// With the report written to a folder, the summary on stdout says why the review is not
/// clean in the limitations' own words (here the candidate that did not resolve), not
/// only that coverage is limited.
#[tokio::test(flavor = "multi_thread")]
async fn the_summary_on_stdout_names_what_limited_the_coverage() {
    let (repo, base, head) = limits_repo();
    let candidates = json!([
        candidate("src/gone.rs", 1, 1, "a file that does not exist"),
        candidate("src/limits.rs", 10, 10, "clamp allows 101"),
    ]);
    let verifier = ScriptedVerifier::new().confirms(
        "generic-investigator #1/1",
        "src/limits.rs",
        10,
        10,
        "clamp allows 101",
    );
    let script = Script::new()
        .rule(investigates_limits(candidates))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().display().to_string();
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        &["--format", "json", "--out-dir", &out_dir],
        &[],
    )
    .await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let reasons: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  - "))
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("src/gone.rs:1-1 at head) was not verified (no-such-file)")),
        "{}",
        out.stdout
    );
    assert!(!reasons.contains(&"coverage is limited"), "{}", out.stdout);
}
