//! The real-model tier: `vouch review` against a real (tiny, offline) model on a fixed
//! real change, asserting invariants only — never model content.
//!
//! Run by `scripts/real-model-tier`, which starts the local model and sets
//! `OPENAI_BASE_URL` and `VOUCH_MODEL`; ignored in a plain `cargo test` because it needs
//! that server.

use std::time::Instant;

use serde_json::Value;
use vouch_core::{
    CoverageLevel, FailOn, FileLines, Opinion, Outcome, SourceLedger, SourceWindow, exit_code,
};
use vouch_testkit::git::fixture_repo;
use vouch_workspace_tests::{run_vouch, workspace};

/// The fixture's last commit: `TokenBucket.acquire()` with a timeout (4 files, real code).
const BASE: &str = "16cc1c894eddb79c8dd6ce18ab8e54477f4eba29";
const HEAD: &str = "8e6ab1050995a03328d71cd8cf2eb5215ad2e65f";

fn endpoint() -> (String, String) {
    let url =
        std::env::var("OPENAI_BASE_URL").expect("OPENAI_BASE_URL: run scripts/real-model-tier");
    let model = std::env::var("VOUCH_MODEL").expect("VOUCH_MODEL: run scripts/real-model-tier");
    (url, model)
}

fn check_invariants(name: &str, code: i32, report: &Value, stderr: &str, expected_paths: &[&str]) {
    // The report satisfies vouch's own schema.
    let schema = vouch_report::report_schema();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: report violates its schema: {errors:?}"
    );
    // The exit code matches the opinion.
    let opinion: Opinion = serde_json::from_value(report["opinion"].clone()).expect("opinion");
    assert_eq!(
        code,
        exit_code(&opinion, FailOn::Finding),
        "{name}: exit code vs opinion {opinion:?}"
    );
    // No clean opinion unless every receipt was accepted and every candidate decided.
    if opinion.clean {
        assert_eq!(opinion.outcome, Outcome::NoFindings);
        assert_eq!(opinion.coverage, Some(CoverageLevel::Full));
        for stage in report["stages"].as_array().unwrap() {
            if let Some(coverage) = stage.get("coverage").filter(|c| !c.is_null()) {
                assert_eq!(
                    coverage["complete"], true,
                    "{name}: clean with an unaccepted receipt: {stage}"
                );
            }
        }
        for c in report["candidates"].as_array().unwrap() {
            assert!(
                c["verdict"].is_string(),
                "{name}: clean with an undecided candidate: {c}"
            );
        }
    }
    // Nothing is published unless the opinion publishes it.
    if !opinion.publish_findings {
        assert_eq!(
            report["findings"].as_array().map(Vec::len),
            Some(0),
            "{name}: findings in a non-publishing report"
        );
    }
    // Every published citation lies inside the lines the verifier read or was given (a
    // stage's ledger is per path and revision, the lines as merged ranges).
    let mut ledger = SourceLedger::default();
    for stage in report["stages"].as_array().unwrap() {
        if stage["role"] == "verifier" {
            let lines: Vec<FileLines> = serde_json::from_value(stage["ledger"].clone())
                .unwrap_or_else(|e| panic!("{name}: a verifier's ledger does not parse: {e}"));
            ledger.extend(&SourceLedger::from_compact(&lines, &[], &[]));
        }
    }
    for f in report["findings"].as_array().unwrap() {
        for c in f["citations"].as_array().unwrap() {
            let citation: SourceWindow = serde_json::from_value(c.clone()).unwrap();
            assert!(
                ledger.check(&citation).is_ok(),
                "{name}: citation outside the verifier's ledger: {c}"
            );
        }
    }
    // Stderr carries only allowlisted diagnostics: no paths, no source.
    for line in stderr.lines() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|_| panic!("{name}: stderr line is not JSON: {line}"));
        assert!(v.get("reason").is_some(), "{name}: {line}");
        for p in expected_paths {
            assert!(!line.contains(p), "{name}: path on stderr: {line}");
        }
        assert!(
            !line.contains("def ") && !line.contains("import "),
            "{name}: source on stderr: {line}"
        );
    }
}

/// Rules of the stage sequence that hold whatever the model answers: every lane of the
/// composition has a stage record (run, failed, or skipped saying why); a stage "not
/// started" after a failure comes with that failure; the clean-result audit runs only
/// when every lane completed and none proposed a candidate; the verifier runs only when
/// nothing failed before it. Whether the audit or the verifier runs at all is the model's
/// doing (a tiny model often fails a lane first), so it is not asserted.
fn check_stages(name: &str, report: &Value, lanes: &[&str]) {
    let stages = report["stages"].as_array().unwrap();
    let failed = !report["failures"].as_array().unwrap().is_empty();
    let role = |s: &Value| s["role"].as_str().unwrap_or_default().to_string();
    let is_lane = |s: &&Value| !matches!(role(s).as_str(), "clean-result-audit" | "verifier");
    for lane in lanes {
        assert!(
            // A record skipped before its lane was sharded carries only its label.
            stages
                .iter()
                .filter(is_lane)
                .any(|s| s["lane"] == *lane || s["label"] == *lane),
            "{name}: lane {lane} has no stage record"
        );
    }
    for s in stages {
        if s["status"] == "skipped" {
            let why = s["problem"].as_str().unwrap_or_default();
            assert!(!why.is_empty(), "{name}: skipped without why: {s}");
            assert!(
                failed || !why.starts_with("not started:"),
                "{name}: not started after a failure the report lacks: {s}"
            );
        }
    }
    let lane_records: Vec<&Value> = stages.iter().filter(is_lane).collect();
    let lane_failed = lane_records.iter().any(|s| s["status"] == "failed");
    let lane_candidates: u64 = lane_records
        .iter()
        .map(|s| s["candidates"].as_u64().unwrap_or(0))
        .sum();
    for s in stages.iter().filter(|s| role(s) == "clean-result-audit") {
        assert!(
            !lane_failed && lane_candidates == 0,
            "{name}: the audit ran after a failed lane or lane candidates: {s}"
        );
    }
    let before_verifier_failed = stages
        .iter()
        .any(|s| role(s) != "verifier" && s["status"] == "failed");
    for s in stages.iter().filter(|s| role(s) == "verifier") {
        assert!(
            !before_verifier_failed,
            "{name}: the verifier ran after a failed stage: {s}"
        );
    }
}

async fn review(name: &str, manifest: &str, lanes: &[&str]) {
    let (dir, _, _) = fixture_repo();
    let (url, model) = endpoint();
    let repo = dir.path().display().to_string();
    let manifest = workspace().join(manifest).display().to_string();
    let started = Instant::now();
    let out = run_vouch(
        &[
            "review",
            "--repo",
            &repo,
            "--base",
            BASE,
            "--head",
            HEAD,
            "--manifest",
            &manifest,
            "--format",
            "json",
            "--base-url",
            &url,
            "--model",
            &model,
        ],
        &[("VOUCH_INLINE_BYTES", "6000")],
    )
    .await;
    let wall = started.elapsed();
    let report = out.json();
    let requests = report["usage"]["requests"].as_u64().unwrap_or(0);
    println!(
        "real-model tier {name}: {:.0} s wall, {requests} model request(s), outcome {} coverage {}, exit {}",
        wall.as_secs_f64(),
        report["opinion"]["outcome"],
        report["opinion"]["coverage"],
        out.code
    );
    check_stages(name, &report, lanes);
    check_invariants(
        name,
        out.code,
        &report,
        &out.stderr,
        &[
            "ratelimit/",
            "README.md",
            "tests/test_bucket.py",
            "examples/demo.py",
        ],
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the local model; run by scripts/real-model-tier"]
async fn default_composition_on_a_real_model() {
    review(
        "default",
        "tests/data/real-model/default.toml",
        &[
            "generic-investigator #1",
            "outcome-investigator #1",
            "conventions #1",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the local model; run by scripts/real-model-tier"]
async fn panel_composition_on_a_real_model() {
    review(
        "panel",
        "tests/data/real-model/panel.toml",
        &[
            "instructions-review #1",
            "instructions-review #2",
            "bug-review #1",
            "bug-review #2",
            "objective-review #1",
        ],
    )
    .await;
}
