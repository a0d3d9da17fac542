//! The walking review: snapshot, plugins, model loop, verification, report.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    GENERIC, ScriptedReview, ScriptedVerifier, VERIFIER, candidate, candidates_reply, citation,
    decision, finding, read_lines, receipt, run_vouch, stage,
};

const LIB_BASE: &str = "/// Parses a port number.\npub fn parse_port(s: &str) -> Option<u16> {\n    s.trim().parse().ok()\n}\n\n/// Clamps a percentage.\npub fn clamp_pct(v: i32) -> i32 {\n    v.clamp(0, 100)\n}\n";
const LIB_HEAD: &str = "/// Parses a port number.\npub fn parse_port(s: &str) -> Option<u16> {\n    let n: u32 = s.trim().parse().ok()?;\n    Some(n as u16)\n}\n\n/// Clamps a percentage.\npub fn clamp_pct(v: i32) -> i32 {\n    v.clamp(0, 101)\n}\n";

/// The changed files of [`repo`].
const FILES: [&str; 2] = ["README.md", "src/lib.rs"];

/// A repository whose head changes `src/lib.rs` (two defects) and `README.md`.
fn repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", LIB_BASE)
        .write("README.md", "# ports\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", LIB_HEAD)
        .write("README.md", "# ports\n\nParses ports.\n");
    let head = repo.commit("widen port parsing");
    (repo, base, head)
}

/// Reviews `base..head` of `repo` against `server` with the manifest at `manifest`
/// (relative to the workspace) and the run's default model `model`, JSON on stdout.
async fn review_with(
    repo: &TestRepo,
    base: &str,
    head: &str,
    server: &ScriptedServer,
    manifest: &str,
    model: &str,
    extra: &[&str],
) -> vouch_workspace_tests::Output {
    ScriptedReview::new(repo, base, head, server)
        .manifest(manifest)
        .model(model)
        .args(extra)
        .run()
        .await
}

/// [`review_with`] the minimal composition.
async fn review(
    repo: &TestRepo,
    base: &str,
    head: &str,
    server: &ScriptedServer,
    extra: &[&str],
) -> vouch_workspace_tests::Output {
    let minimal = "tests/data/e2e/minimal.toml";
    review_with(repo, base, head, server, minimal, "scripted", extra).await
}

/// An investigator reply with no candidate and a complete, exact receipt of the change.
fn no_candidates() -> Reply {
    receipt(json!([]), &FILES)
}

/// The investigator reads `src/lib.rs`, then proposes `candidates`.
fn investigates(candidates: Value) -> Rule {
    stage(
        GENERIC,
        "investigator",
        [read_lines("src/lib.rs", 1, 10), receipt(candidates, &FILES)],
    )
}

fn two_candidates() -> Value {
    json!([
        candidate("src/lib.rs", 3, 4, "ports above 65535 wrap silently"),
        candidate("src/lib.rs", 9, 9, "clamp allows 101")
    ])
}

fn stderr_is_diagnostics_only(stderr: &str) {
    for line in stderr.lines() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|_| panic!("stderr line is not a diagnostic: {line}"));
        assert!(
            v.get("reason").is_some() && v.get("jobId").is_some(),
            "{line}"
        );
        assert!(
            !line.contains("src/lib.rs") && !line.contains("README"),
            "a path leaked to stderr: {line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verified_finding_has_citation_and_provenance() {
    let (repo, base, head) = repo();
    let verifier = ScriptedVerifier::new()
        .confirms(
            "generic-investigator #1/0",
            "src/lib.rs",
            3,
            4,
            "ports above 65535 wrap silently",
        )
        .dismisses(
            "generic-investigator #1/1",
            json!([citation("src/lib.rs", 9, 9)]),
        );
    let script = Script::new()
        .rule(investigates(two_candidates()))
        .rule(stage(
            VERIFIER,
            "verifier",
            [read_lines("src/lib.rs", 1, 10), verifier.reply()],
        ));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[]).await;
    assert_eq!(
        out.code, 1,
        "findings exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "findings");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    let f = &findings[0];
    assert_eq!(f["path"], "src/lib.rs");
    assert_eq!(
        f["citations"],
        json!([{"revision": "head", "path": "src/lib.rs", "startLine": 3, "endLine": 4}])
    );
    assert_eq!(
        f["provenance"]["proposedBy"],
        json!(["generic-investigator #1"])
    );
    assert_eq!(f["provenance"]["verifiedBy"], "verifier");
    assert_eq!(f["provenance"]["verificationPasses"], 1);
    let verdicts: Vec<&str> = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["verified", "rejected"]);
    let stage = &report["stages"][0];
    assert_eq!(stage["label"], "generic-investigator #1");
    assert_eq!(stage["coverage"]["complete"], true);
    assert_eq!(stage["retried"], false);
    // The investigator really read the file: its second request carries the tool result.
    let investigator: Vec<_> = server.served_by("investigator");
    assert_eq!(investigator.len(), 2);
    let tool_results = investigator[1].contents_of("tool");
    assert!(
        tool_results.iter().any(|t| t.contains("parse_port")),
        "{tool_results:?}"
    );
    assert!(server.unmatched().is_empty());
    stderr_is_diagnostics_only(&out.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn citation_outside_what_the_verifier_read_makes_the_review_incomplete() {
    let (repo, base, head) = repo();
    let verifier = ScriptedVerifier::new()
        .decides(decision(
            "generic-investigator #1/0",
            "verified",
            json!([citation("src/lib.rs", 90, 95)]),
            Some(finding("src/lib.rs", 3, 4, "wraps")),
        ))
        .dismisses("generic-investigator #1/1", json!([]));
    let script = Script::new()
        .rule(investigates(two_candidates()))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[]).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["findings"], json!([]));
    let failure = report["failures"][0]["message"].as_str().unwrap();
    assert!(failure.contains("outside the source read"), "{failure}");
}

#[tokio::test(flavor = "multi_thread")]
async fn candidate_without_a_decision_makes_the_review_incomplete() {
    let (repo, base, head) = repo();
    let verifier =
        ScriptedVerifier::new().confirms("generic-investigator #1/0", "src/lib.rs", 3, 4, "wraps");
    let script = Script::new()
        .rule(investigates(two_candidates()))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[]).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(
        report["findings"],
        json!([]),
        "nothing is published when incomplete"
    );
    assert!(
        report["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no decision for candidate `generic-investigator #1/1`")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_call_outside_the_tree_is_refused_as_a_tool_error() {
    let (repo, base, head) = repo();
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [
                Reply::tool_call("read_file", r#"{"path": "../../etc/passwd"}"#),
                no_candidates(),
            ],
        ))
        .rule(
            Rule::when(Match::any_message_contains("Instance: clean-result-audit"))
                .replies([no_candidates()]),
        );
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[]).await;
    let second = &server.served_by("investigator")[1];
    let tool = second.contents_of("tool").join("\n");
    assert!(tool.contains("refused"), "the model sees a refusal: {tool}");
    assert!(!tool.contains("root:"), "nothing outside the tree is read");
    assert_eq!(
        out.json()["opinion"]["outcome"],
        "no-findings",
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_with_retry_after_is_honoured() {
    let (repo, base, head) = repo();
    let script = Script::new().rule(stage(
        GENERIC,
        "investigator",
        [
            Reply::status(429).header("Retry-After", "1"),
            no_candidates(),
        ],
    ));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[]).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let requests = server.served_by("investigator");
    assert_eq!(requests.len(), 2);
    let waited = requests[1]
        .arrived_at
        .duration_since(requests[0].arrived_at);
    assert!(
        waited >= std::time::Duration::from_millis(950),
        "Retry-After: 1 was not honoured: {waited:?}"
    );
    assert_eq!(out.json()["opinion"]["outcome"], "no-findings");
}

#[tokio::test(flavor = "multi_thread")]
async fn truncated_reply_is_never_parsed_as_complete() {
    let (repo, base, head) = repo();
    // The cut reply contains a valid object; vouch must not accept it, must not repair
    // it, and after its one re-ask is cut again the review is incomplete.
    let cut = candidates_reply(json!([]), true, &FILES);
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains("You repair"))
                .named("repair")
                .replies([Reply::content("not json")]),
        )
        .rule(
            Rule::when(Match::any_message_contains(GENERIC))
                .named("investigator")
                .always(Reply::content_with_finish(cut, "length")),
        );
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[]).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["failures"][0]["kind"], "truncated-output");
    assert!(server.served_by("repair").is_empty(), "never repaired");
    assert_eq!(server.served_by("investigator").len(), 2, "one re-ask");
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_range_makes_no_request() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let head = repo.commit("only");
    let server = ScriptedServer::start(Script::new()).await;
    let out = review(&repo, &head, &head, &server, &[]).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "nothing-to-review");
    assert_eq!(report["opinion"]["clean"], false);
    assert_eq!(server.request_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_revision_is_a_usage_error_naming_it() {
    let (repo, base, _) = repo();
    let server = ScriptedServer::start(Script::new()).await;
    let out = review(&repo, &base, "no-such-branch", &server, &[]).await;
    assert_eq!(out.code, 3);
    assert!(out.stdout.contains("no-such-branch"), "{}", out.stdout);
    assert_eq!(server.request_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_endpoint_names_what_to_set() {
    let (repo, base, head) = repo();
    let repo_path = repo.path().display().to_string();
    let out = run_vouch(
        &[
            "review", "--repo", &repo_path, "--base", &base, "--head", &head,
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("OPENAI_BASE_URL") && out.stdout.contains("VOUCH_MODEL"),
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_specialist_that_names_its_own_model_is_sent_that_model() {
    let (repo, base, head) = repo();
    let script = Script::new().rule(
        Rule::when(Match::any_message_contains(GENERIC).and(Match::model("investigator-model")))
            .named("investigator")
            .replies([no_candidates()]),
    );
    let server = ScriptedServer::start(script).await;
    let out = review_with(
        &repo,
        &base,
        &head,
        &server,
        "tests/data/e2e/own-model.toml",
        "default-model",
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(server.served_by("investigator").len(), 1);
    assert!(
        server.unmatched().is_empty(),
        "every request named the investigator's own model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_tools_answers_are_structured_and_max_tokens_covers_the_contract() {
    let (repo, base, head) = repo();
    let script = Script::new().rule(stage(GENERIC, "investigator", [no_candidates()]));
    let server = ScriptedServer::start(script).await;
    let out = review_with(
        &repo,
        &base,
        &head,
        &server,
        "tests/data/e2e/tools-off-small-budget.toml",
        "m",
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let request = &server.served_by("investigator")[0];
    assert!(!request.has_tools(), "tools off: no tools offered");
    let format = request
        .response_format()
        .expect("a structured final answer");
    assert_eq!(format["type"], "json_schema");
    let schema = &format["json_schema"]["schema"];
    // The candidate cap was lowered so the contract fits the 2,500-token budget …
    let cap = schema["properties"]["candidates"]["maxItems"]
        .as_u64()
        .unwrap();
    assert!(
        (1..vouch_specialist_kit::contract::MAX_CANDIDATES).contains(&cap),
        "cap {cap}"
    );
    // … and max_tokens covers the contract's bound.
    let max_tokens = request.body["max_tokens"].as_u64().unwrap();
    assert!(
        max_tokens >= vouch_specialist_kit::contract::token_bound(schema),
        "{max_tokens}"
    );
    // The patches were given inline instead.
    assert!(
        request
            .contents_of("user")
            .join("\n")
            .contains("parse_port")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_tools_fall_back_to_inline_context_when_the_endpoint_rejects_them() {
    let (repo, base, head) = repo();
    let script = Script::new()
        .rule(
            Rule::when(Match::any_message_contains(GENERIC).and(Match::has_tools(true)))
                .named("with-tools")
                .replies([Reply::raw(400, r#"{"error":{"message":"this model does not support tools","type":"invalid_request_error"}}"#)]),
        )
        .rule(
            Rule::when(Match::any_message_contains(GENERIC).and(Match::has_tools(false)))
                .named("without-tools")
                .replies([no_candidates()]),
        );
    let server = ScriptedServer::start(script).await;
    let out = review_with(
        &repo,
        &base,
        &head,
        &server,
        "tests/data/e2e/tools-auto.toml",
        "m",
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(server.served_by("with-tools").len(), 1);
    let retried = &server.served_by("without-tools")[0];
    assert!(
        retried.response_format().is_some(),
        "the tool-free answer is structured"
    );
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert!(
        report["observations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o.as_str().unwrap().contains("rejected tools"))
    );
    assert!(out.stderr.contains("tools-fallback"));
}

/// A 2,000-line added file under a small budget without tools: its patch is cut at the
/// `diff` bound, so the host gives its one hunk in line windows across shards (issue
/// 28); together they show every line and the file is reviewed. Capped at one shard,
/// it cannot be given whole: it is named `over-budget` and coverage is limited, never
/// full.
#[tokio::test(flavor = "multi_thread")]
async fn a_patch_cut_at_its_bound_is_given_in_windows_and_never_full_coverage_when_capped() {
    let repo = TestRepo::new();
    repo.write("README.md", "# big\n");
    let base = repo.commit("base");
    let big: String = (1..=2_000).map(|i| format!("line {i}\n")).collect();
    repo.write("data/big.txt", big);
    let head = repo.commit("add a big file");
    for (manifest, shards_cap) in [
        ("tests/data/e2e/tools-off-small-budget.toml", false),
        ("tests/data/e2e/tools-off-one-shard.toml", true),
    ] {
        let script = Script::new().rule(
            Rule::when(Match::user_contains(GENERIC))
                .named("investigator")
                .always(Reply::content(candidates_reply(
                    json!([]),
                    true,
                    &["data/big.txt"],
                ))),
        );
        let server = ScriptedServer::start(script).await;
        let out = review_with(&repo, &base, &head, &server, manifest, "m", &[]).await;
        assert_eq!(out.code, 0, "{manifest}: {}", out.stdout);
        let report = out.json();
        assert_eq!(report["opinion"]["outcome"], "no-findings");
        let shards = server.served_by("investigator").len();
        if shards_cap {
            // The file's windows need more shards than allowed: none of it is given.
            assert_eq!(shards, 0, "{manifest}");
            assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
            assert_eq!(report["filesNotReviewed"][0]["path"], "data/big.txt");
            assert_eq!(report["filesNotReviewed"][0]["reason"], "over-budget");
        } else {
            assert!(
                shards >= 2,
                "{manifest}: the hunk arrived in windows ({shards})"
            );
            assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
            assert_eq!(report["filesReviewed"], json!(["data/big.txt"]));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_exit_3_and_mcp_keeps_stdout_for_the_protocol() {
    for args in [
        vec!["review", "--bogus"],
        vec!["review", "--format", "xml"],
        vec!["review", "--concurrency", "0"],
        vec!["review", "--timeout", "0"],
        vec!["no-such-command"],
    ] {
        let out = run_vouch(&args, &[]).await;
        assert_eq!(out.code, 3, "{args:?}: {}{}", out.stdout, out.stderr);
    }
    assert_eq!(run_vouch(&["--help"], &[]).await.code, 0);
    // A client that hangs up before `initialize`: nothing on the protocol channel.
    let out = run_vouch(&["mcp"], &[]).await;
    assert_eq!(out.code, 3);
    assert_eq!(out.stdout, "", "stdout is the MCP channel");
    assert!(out.stderr.contains("initialize"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_out_path_fails_before_any_model_call() {
    let (repo, base, head) = repo();
    let server = ScriptedServer::start(Script::new()).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        &["--out", "/nonexistent-folder/report.json"],
    )
    .await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("/nonexistent-folder"), "{}", out.stdout);
    assert_eq!(server.request_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reversed_range_says_nothing_to_review_and_why() {
    let (repo, base, head) = repo();
    let server = ScriptedServer::start(Script::new()).await;
    let out = review(&repo, &head, &base, &server, &[]).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "nothing-to-review");
    assert!(
        report["summary"].as_str().unwrap().contains("swapped"),
        "{}",
        report["summary"]
    );
    assert_eq!(server.request_count(), 0);
}
