//! A fixed, real commit range: the committed fixture repository (a small real Python
//! library, `tests/data/fixture-repo`) reviewed by SHA with the default composition, so
//! a real, non-toy diff runs through every lane.

use serde_json::{Value, json};
use vouch_testkit::git::fixture_repo;
use vouch_testkit::openai::{Reply, Script, ScriptedServer};
use vouch_workspace_tests::{
    CONVENTIONS, GENERIC, OUTCOME, ScriptedVerifier, candidate, read_lines, receipt, run_vouch,
    stage,
};

const BASE: &str = "e1fe9ff8c34c42d2407e5cd35b2ec03459165a68";
const MERGE_BASE: &str = "56430a38ee0320a1cbf07dcb24330fb7a1700761";
const HEAD: &str = "8e6ab1050995a03328d71cd8cf2eb5215ad2e65f";

const EXPECTED: [&str; 7] = [
    "README.md",
    "examples/demo.py",
    "ratelimit/__init__.py",
    "ratelimit/bucket.py",
    "ratelimit/clocks.py",
    "ratelimit/window.py",
    "tests/test_bucket.py",
];

fn empty_lane() -> Reply {
    receipt(json!([]), &EXPECTED)
}

#[tokio::test(flavor = "multi_thread")]
async fn default_composition_reviews_a_real_range_by_sha() {
    let (dir, base, head) = fixture_repo();
    assert_eq!((base.as_str(), head.as_str()), (BASE, HEAD));
    let claim = "acquire() can return True after its timeout has passed";
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "investigator",
            [
                read_lines("ratelimit/bucket.py", 80, 100),
                receipt(
                    json!([candidate("ratelimit/bucket.py", 88, 96, claim)]),
                    &EXPECTED,
                ),
            ],
        ))
        .rule(stage(OUTCOME, "outcome", [empty_lane()]))
        .rule(stage(CONVENTIONS, "conventions", [empty_lane()]))
        .rule(
            ScriptedVerifier::new()
                .confirms(
                    "generic-investigator #1/0",
                    "ratelimit/bucket.py",
                    88,
                    96,
                    claim,
                )
                .rule(),
        );
    let server = ScriptedServer::start(script).await;
    let repo = dir.path().display().to_string();
    let url = server.base_url();
    let out = run_vouch(
        &[
            "review",
            "--repo",
            &repo,
            "--base",
            BASE,
            "--head",
            HEAD,
            "--format",
            "json",
            "--base-url",
            &url,
            "--model",
            "scripted",
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report: Value = out.json();
    // Snapshot structure: the pull-request view of the range, by SHA.
    assert_eq!(report["base"]["sha"], BASE);
    assert_eq!(report["mergeBase"], MERGE_BASE);
    assert_eq!(report["head"]["sha"], HEAD);
    assert_eq!(report["expectedFiles"], json!(EXPECTED));
    assert_eq!(report["counts"]["files"], 7);
    assert!(report["counts"]["hunks"].as_u64().unwrap() >= 7);
    // Every lane of the default composition ran, except the audit (candidates exist).
    let stages: Vec<(&str, &str)> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["label"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stages,
        [
            ("generic-investigator #1", "accepted"),
            ("outcome-investigator #1", "accepted"),
            ("conventions #1", "accepted"),
            ("verifier", "accepted"),
        ]
    );
    // Intent came from the range's commit messages, and reached only the outcome lane.
    let outcome_request = &server.served_by("outcome")[0];
    assert!(
        outcome_request
            .contents_of("user")
            .join("\n")
            .contains("Add TokenBucket.acquire() with a timeout")
    );
    for r in server.served_by("investigator") {
        assert!(
            !serde_json::to_string(&r.body)
                .unwrap()
                .contains("Add TokenBucket.acquire() with a timeout")
        );
    }
    // The one verified finding, with its citation and provenance.
    assert_eq!(report["opinion"]["outcome"], "findings");
    assert_eq!(report["opinion"]["coverage"], "full");
    let f = &report["findings"][0];
    assert_eq!(f["path"], "ratelimit/bucket.py");
    assert_eq!(f["citations"][0]["path"], "ratelimit/bucket.py");
    assert_eq!(
        f["provenance"]["proposedBy"],
        json!(["generic-investigator #1"])
    );
    // The embedded final report passed vouch's own validator (it was written at all),
    // and says the review was read-only.
    assert_eq!(report["finalReport"]["target"]["candidateHeadSha"], HEAD);
    assert!(server.unmatched().is_empty());
}
