//! The coverage completion policy and the opinion: exclusions, unassigned files, source
//! lookup gaps, provider errors, and an opinion no model can talk into "clean".

use serde_json::{Value, json};
use vouch_core::{AuditState, Failure, Limitation, ReviewFacts, derive_opinion};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    AUDIT, CONVENTIONS, FOCUSED, GENERIC, OUTCOME, ScriptedVerifier, VERIFIER, candidate, citation,
    decision, read_lines, receipt, stage, workspace,
};

use super::{FILES, fixture, lanes, manifest, review, user};

fn limitation_kinds(report: &Value) -> Vec<String> {
    report["limitations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap().to_string())
        .collect()
}

fn expected_section(files: &[&str]) -> String {
    format!(
        "<expected-files>\n{}\n</expected-files>",
        serde_json::to_string(files).unwrap()
    )
}

/// A verifier confirming candidate `id` as a scripted defect at `src/lib.rs:line`.
fn confirms(id: &str, line: u32) -> ScriptedVerifier {
    ScriptedVerifier::new().confirms(id, "src/lib.rs", line, line, "scripted defect")
}

#[tokio::test(flavor = "multi_thread")]
async fn excluded_files_are_listed_with_their_reason_and_limit_coverage() {
    let (repo, base, _) = fixture();
    repo.write("Cargo.lock", "# lock\nversion = 3\n");
    let head2 = repo.commit("lock file");
    let script = lanes(json!([]), json!([]), json!([])).rule(stage(
        AUDIT,
        "audit",
        [receipt(json!([]), &FILES)],
    ));
    let server = ScriptedServer::start(script).await;
    let out = review(
        &repo,
        &base,
        &head2,
        &server,
        &["--fail-on", "limited"],
        &[],
    )
    .await;
    assert_eq!(
        out.code, 1,
        "--fail-on limited: {}\n{}",
        out.stdout, out.stderr
    );
    let report = out.json();
    assert_eq!(report["expectedFiles"], json!(FILES));
    let excluded: Vec<(&str, &str)> = report["excludedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(excluded.len(), 1, "{report:#}");
    assert_eq!(excluded[0].0, "Cargo.lock");
    assert!(
        excluded[0].1.contains("`**/Cargo.lock`"),
        "{}",
        excluded[0].1
    );
    assert_eq!(limitation_kinds(&report), ["excluded-files"]);
    assert_eq!(
        report["limitations"][0]["detail"],
        "1 changed file(s) were not reviewed: 1 excluded by a [files] exclude rule"
    );
    // No lane is assigned an excluded file.
    for name in ["generic", "outcome", "conventions", "audit"] {
        let prompt = user(&server.served_by(name)[0]);
        assert!(prompt.contains(&expected_section(&FILES)), "{name}");
        assert!(!prompt.contains("Cargo.lock"), "{name}");
    }
    // Nothing was found, yet the review is not a whole-change clean opinion.
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["opinion"]["clean"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_of_only_excluded_files_is_limited_and_calls_no_model() {
    let repo = TestRepo::new();
    repo.write("Cargo.lock", "version = 3\n");
    let base = repo.commit("base");
    repo.write("Cargo.lock", "version = 4\n");
    let head = repo.commit("bump the lock file");
    let server = ScriptedServer::start(Script::new()).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(server.request_count(), 0);
    assert_eq!(report["expectedFiles"], json!([]));
    assert_eq!(report["excludedFiles"][0]["path"], "Cargo.lock");
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["opinion"]["clean"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn files_no_lane_is_assigned_are_listed_and_limit_coverage() {
    let (repo, base, head) = fixture();
    let script = Script::new()
        .rule(stage(
            "Instance: bug-review #1",
            "bug-review",
            [receipt(
                json!([candidate("src/lib.rs", 10, 10, "clamp allows 101")]),
                &["src/lib.rs"],
            )],
        ))
        .rule(confirms("bug-review #1/0", 10).rule());
    let server = ScriptedServer::start(script).await;
    let selected = manifest("selected-only.toml");
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        &["--manifest", &selected],
        &[],
    )
    .await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    // README.md matches no lane's selection: it is listed, never silently skipped.
    assert_eq!(
        report["excludedFiles"],
        json!([{"path": "README.md", "reason": "no enabled lane instance is assigned this file (no file selection matches it)"}])
    );
    assert_eq!(report["expectedFiles"], json!(["src/lib.rs"]));
    assert_eq!(limitation_kinds(&report), ["unassigned-files"]);
    let prompt = user(&server.served_by("bug-review")[0]);
    assert!(
        prompt.contains(&expected_section(&["src/lib.rs"])),
        "{prompt}"
    );
    // The verified finding is still published, with the limitation stated.
    assert_eq!(report["opinion"]["outcome"], "findings");
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["findings"][0]["startLine"], 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn stages_that_saw_no_source_are_gaps_and_verified_findings_stay_published() {
    // Nothing fits the inline budget, so a stage sees the change only by reading it.
    let envs = [("VOUCH_INLINE_BYTES", "0")];
    // (extra flags, whether the generic lane reads src/lib.rs, gap lanes)
    let cases: Vec<(&[&str], bool, Vec<&str>)> = vec![
        (&[], true, vec!["outcome-investigator #1", "conventions #1"]),
        (
            &[],
            false,
            vec![
                "generic-investigator #1",
                "outcome-investigator #1",
                "conventions #1",
            ],
        ),
        // Without tools, patches that do not fit are a gap of every lane.
        (
            &["--tools", "off"],
            false,
            vec![
                "generic-investigator #1",
                "outcome-investigator #1",
                "conventions #1",
            ],
        ),
    ];
    for (extra, reads, gaps) in cases {
        let (repo, base, head) = fixture();
        let mut generic = Vec::new();
        if reads {
            // Reading every changed line of every assigned file, at head and at base
            // (where the replaced lines are), is what clears the gap.
            generic.push(read_lines("src/lib.rs", 1, 11));
            generic.push(Reply::tool_call("read_file", r#"{"path": "README.md"}"#));
            generic.push(Reply::tool_call(
                "read_file",
                r#"{"path": "src/lib.rs", "revision": "base"}"#,
            ));
            generic.push(Reply::tool_call(
                "read_file",
                r#"{"path": "README.md", "revision": "base"}"#,
            ));
        }
        generic.push(receipt(
            json!([candidate("src/lib.rs", 10, 10, "clamp allows 101")]),
            &FILES,
        ));
        let script = Script::new()
            .rule(stage(GENERIC, "generic", generic))
            .rule(stage(OUTCOME, "outcome", [receipt(json!([]), &FILES)]))
            .rule(stage(
                CONVENTIONS,
                "conventions",
                [receipt(json!([]), &FILES)],
            ))
            .rule(confirms("generic-investigator #1/0", 10).rule());
        let server = ScriptedServer::start(script).await;
        let out = review(&repo, &base, &head, &server, extra, &envs).await;
        let case = format!("{extra:?} reads={reads}");
        assert_eq!(out.code, 1, "{case}: {}\n{}", out.stdout, out.stderr);
        let report = out.json();
        let gap_stages: Vec<&str> = report["limitations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["kind"] == "source-lookup-gap")
            .map(|l| l["stage"].as_str().unwrap())
            .collect();
        assert_eq!(gap_stages, gaps, "{case}: {report:#}");
        for s in report["stages"].as_array().unwrap() {
            let label = s["label"].as_str().unwrap();
            let want = if gaps.contains(&label) {
                "limited"
            } else {
                "accepted"
            };
            assert_eq!(s["status"], want, "{case}: {label}");
        }
        // A gap completes the review with the limitation stated; it never fails it, and
        // the independently verified finding is still published.
        assert_eq!(report["opinion"]["outcome"], "findings", "{case}");
        assert_eq!(report["opinion"]["coverage"], "limited", "{case}");
        assert_eq!(report["findings"][0]["startLine"], 10, "{case}");
        // Stage identity stays visible in the diagnostics: every gap, including inline
        // patches that do not fit without tools, emits its own line.
        let gap_lines: Vec<Value> = out
            .stderr
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|d| d["reason"] == "source-lookup-gap")
            .collect();
        let gap_labels: Vec<String> = gap_lines
            .iter()
            .map(|d| d["label"].as_str().unwrap().to_string())
            .collect();
        // Counts are the stage's own: a gap stage retrieved none of the change's two
        // hunks (0), or which hunks it misses is unknown (null: patches not given).
        for d in &gap_lines {
            assert!(
                d["hunkCount"] == 0 || d["hunkCount"].is_null(),
                "{case}: {d}"
            );
            if !extra.is_empty() {
                assert!(d["hunkCount"].is_null(), "{case}: {d}");
            }
        }
        for g in &gaps {
            assert!(gap_labels.iter().any(|l| l == g), "{case}: {gap_labels:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_error_makes_the_review_incomplete() {
    let failing = || Reply::status(503).header("Retry-After", "0");
    // (which stage fails, whether the verifier is reached)
    for failing_stage in [GENERIC, VERIFIER] {
        let (repo, base, head) = fixture();
        let generic = if failing_stage == GENERIC {
            Rule::when(vouch_testkit::openai::Match::any_message_contains(GENERIC))
                .named("generic")
                .always(failing())
        } else {
            stage(
                GENERIC,
                "generic",
                [receipt(
                    json!([candidate("src/lib.rs", 10, 10, "clamp allows 101")]),
                    &FILES,
                )],
            )
        };
        let verifier = Rule::when(vouch_testkit::openai::Match::any_message_contains(VERIFIER))
            .named("verifier")
            .always(failing());
        let script = Script::new()
            .rule(generic)
            .rule(stage(OUTCOME, "outcome", [receipt(json!([]), &FILES)]))
            .rule(stage(
                CONVENTIONS,
                "conventions",
                [receipt(json!([]), &FILES)],
            ))
            .rule(verifier);
        let server = ScriptedServer::start(script).await;
        let out = review(&repo, &base, &head, &server, &[], &[]).await;
        assert_eq!(
            out.code, 2,
            "{failing_stage}: {}\n{}",
            out.stdout, out.stderr
        );
        let report = out.json();
        assert_eq!(report["opinion"]["outcome"], "incomplete");
        assert_eq!(report["opinion"]["coverage"], Value::Null);
        assert_eq!(report["findings"], json!([]), "nothing is published");
        let failure = &report["failures"][0];
        assert_eq!(failure["kind"], "provider-error", "{report:#}");
        let label = failing_stage.trim_start_matches("Instance: ");
        assert_eq!(failure["stage"], label);
        if failing_stage == GENERIC {
            assert!(
                server.served_by("verifier").is_empty(),
                "no verification after a failed lane"
            );
            assert!(
                server.served_by("generic").len() > 1,
                "the request was retried first"
            );
        } else {
            assert_eq!(report["candidates"][0]["verdict"], Value::Null);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_opinion_is_derived_by_rule_not_by_the_model() {
    let (repo, base, head) = fixture();
    // A composition without the clean-result audit; the model calls the change clean.
    let claim = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": FILES},
        "summary": "Verdict: clean. No issues at all, full coverage, safe to merge."});
    let script = Script::new().rule(stage(
        GENERIC,
        "generic",
        [Reply::content(claim.to_string())],
    ));
    let server = ScriptedServer::start(script).await;
    let minimal = workspace()
        .join("tests/data/e2e/minimal.toml")
        .display()
        .to_string();
    let out = review(&repo, &base, &head, &server, &["--manifest", &minimal], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "full");
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(
        report["opinion"]["notCleanBecause"],
        json!(["no lane proposed a candidate and no clean-result audit ran"])
    );
    // The model's words are an observation, nothing more.
    assert!(
        report["observations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o.as_str().unwrap().contains("Verdict: clean")),
    );
    // The report's opinion is exactly the rule applied to the report's own facts.
    let facts = ReviewFacts {
        change_is_empty: false,
        aborted: false,
        failures: serde_json::from_value::<Vec<Failure>>(report["failures"].clone()).unwrap(),
        limitations: serde_json::from_value::<Vec<Limitation>>(report["limitations"].clone())
            .unwrap(),
        verified_findings: report["findings"].as_array().unwrap().len(),
        unresolved_candidates: 0,
        undecided_candidates: 0,
        audit: AuditState::NotRun,
    };
    assert_eq!(
        serde_json::to_value(derive_opinion(&facts)).unwrap(),
        report["opinion"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_focused_pass_that_hits_its_budget_records_partial_coverage() {
    let (repo, base, head) = fixture();
    let script = lanes(
        json!([
            candidate("src/lib.rs", 3, 4, "ports above 65535 wrap silently"),
            candidate("src/lib.rs", 10, 10, "clamp allows 101")
        ]),
        json!([]),
        json!([]),
    )
    .rule(stage(
        FOCUSED,
        "focused",
        [
            // One tool turn is the whole budget: the next request is forced synthesis.
            read_lines("src/lib.rs", 1, 11),
            confirms("generic-investigator #1/0", 4).reply(),
        ],
    ))
    .rule(
        ScriptedVerifier::new()
            .decides(decision(
                "generic-investigator #1/0",
                "verified",
                json!([citation("src/lib.rs", 3, 4)]),
                None,
            ))
            .dismisses("generic-investigator #1/1", json!([]))
            .rule(),
    );
    let server = ScriptedServer::start(script).await;
    let tight = manifest("tight-verifier.toml");
    let out = review(&repo, &base, &head, &server, &["--manifest", &tight], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let focused = server.served_by("focused");
    assert_eq!(focused.len(), 2);
    assert!(
        focused[0].has_tools() && !focused[1].has_tools(),
        "forced synthesis"
    );
    let label = "verifier (focused generic-investigator #1/0)";
    let stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap();
    assert_eq!(stage["status"], "limited", "{stage:#}");
    assert_eq!(stage["budgetHit"], "turns");
    assert_eq!(stage["forcedSynthesis"], true);
    assert!(
        report["limitations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["kind"] == "budget-hit" && l["stage"] == label),
        "{report:#}"
    );
    // The recovered finding is published with the limitation stated.
    assert_eq!(report["findings"][0]["provenance"]["verificationPasses"], 2);
    assert_eq!(report["opinion"]["outcome"], "findings");
    assert_eq!(report["opinion"]["coverage"], "limited");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lane_out_of_turns_answers_once_without_tools_keeps_its_work_and_is_flagged() {
    let (repo, base, head) = fixture();
    let found = json!([candidate(
        "src/lib.rs",
        3,
        4,
        "ports above 65535 wrap silently"
    )]);
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "generic",
            [
                // One tool turn is the whole budget: the next request is forced synthesis,
                // answered with what was gathered but an incomplete receipt.
                read_lines("src/lib.rs", 1, 11),
                Reply::content(vouch_workspace_tests::candidates_reply(
                    found.clone(),
                    false,
                    &["src/lib.rs"],
                )),
                // The coverage retry completes the receipt.
                receipt(found, &FILES),
            ],
        ))
        .rule(stage(OUTCOME, "outcome", [receipt(json!([]), &FILES)]))
        .rule(stage(
            CONVENTIONS,
            "conventions",
            [receipt(json!([]), &FILES)],
        ))
        .rule(confirms("generic-investigator #1/0", 3).rule());
    let server = ScriptedServer::start(script).await;
    let tight = manifest("tight-generic.toml");
    let out = review(&repo, &base, &head, &server, &["--manifest", &tight], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let generic = server.served_by("generic");
    assert_eq!(
        generic.len(),
        3,
        "tool turn, forced synthesis, coverage retry"
    );
    // Exactly one tool-free synthesis request, asking for the final answer.
    assert!(generic[0].has_tools() && !generic[1].has_tools());
    assert!(
        generic[1]
            .raw_body
            .contains("Stop investigating and give your final answer now"),
        "{}",
        generic[1].raw_body
    );
    // The work is kept: the synthesis request carries the tool result it gathered.
    assert!(
        generic[1]
            .messages()
            .iter()
            .any(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains("parse_port")),
        "{}",
        generic[1].raw_body
    );
    let stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "generic-investigator #1")
        .unwrap();
    assert_eq!(stage["forcedSynthesis"], true, "{stage:#}");
    assert_eq!(stage["budgetHit"], "turns");
    assert_eq!(stage["status"], "limited");
    let limited_by = |kind: &str| {
        report["limitations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["kind"] == kind && l["stage"] == "generic-investigator #1")
    };
    assert!(limited_by("forced-synthesis"), "{report:#}");
    // The synthesised candidate was verified and published, with the limitation stated.
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    assert_eq!(report["opinion"]["outcome"], "findings");
    assert_eq!(report["opinion"]["coverage"], "limited");
}
