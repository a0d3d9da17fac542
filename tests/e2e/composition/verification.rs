//! Verification under the default composition: retention, rejection, the focused pass,
//! accounting, citations and the convention boundary.

use serde_json::{Value, json};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    AUDIT, CONVENTIONS, FOCUSED, GENERIC, OUTCOME, ScriptedVerifier, VERIFIER, candidate, citation,
    decision, decisions, finding, read_lines, receipt, stage,
};

use super::{FILES, base_citation, candidate_in, fixture, lanes, review, user};

const A: &str = "generic-investigator #1/0";
const B: &str = "generic-investigator #1/1";

fn two_candidates() -> Value {
    json!([
        candidate("src/lib.rs", 3, 4, "ports above 65535 wrap silently"),
        candidate("src/lib.rs", 10, 10, "clamp allows 101")
    ])
}

/// A verified decision for `id` whose finding is omitted.
fn omitted(id: &str) -> Value {
    decision(id, "verified", json!([citation("src/lib.rs", 3, 4)]), None)
}

fn verdicts(report: &Value) -> Vec<(String, Value, u64)> {
    report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["candidate"]["id"].as_str().unwrap().to_string(),
                c["verdict"].clone(),
                c["verificationPasses"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn failure_messages(report: &Value) -> Vec<String> {
    report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn verified_findings_are_retained_and_rejected_candidates_are_not() {
    let (repo, base, head) = fixture();
    let verifier = ScriptedVerifier::new()
        // Narrowed: lower severity, one line, the supported wording.
        .decides(decision(
            A,
            "verified",
            json!([citation("src/lib.rs", 3, 4)]),
            Some(
                json!({"path": "src/lib.rs", "startLine": 4, "endLine": 4, "severity": "medium",
                        "claim": "ports above 65535 are truncated by `as u16`"}),
            ),
        ))
        .dismisses(B, json!([citation("src/lib.rs", 10, 10)]));
    let script = lanes(two_candidates(), json!([]), json!([])).rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    let f = &findings[0];
    assert_eq!(
        (
            f["startLine"].as_u64(),
            f["severity"].as_str(),
            f["claim"].as_str()
        ),
        (
            Some(4),
            Some("medium"),
            Some("ports above 65535 are truncated by `as u16`")
        ),
        "the verifier's narrowing is what is reported"
    );
    assert_eq!(f["citations"], json!([citation("src/lib.rs", 3, 4)]));
    assert_eq!(
        verdicts(&report),
        [
            (A.to_string(), json!("verified"), 1),
            (B.to_string(), json!("rejected"), 1)
        ]
    );
    assert_eq!(report["candidates"][1]["evidence"], "scripted rejected");
    assert_eq!(report["opinion"]["coverage"], "full");
}

/// Two lanes verify different claims on overlapping lines of one area: the findings
/// merge into one, and the less severe claim is kept beside the other, never dropped.
#[tokio::test(flavor = "multi_thread")]
async fn a_merge_of_overlapping_findings_keeps_every_verified_claim() {
    const WRAP: &str = "ports above 65535 wrap silently";
    const CAST: &str = "`n as u16` truncates instead of failing";
    let (repo, base, head) = fixture();
    let verifier = ScriptedVerifier::new()
        .confirms(A, "src/lib.rs", 3, 4, WRAP)
        .decides(decision(
            "outcome-investigator #1/0",
            "verified",
            json!([citation("src/lib.rs", 4, 4)]),
            Some(json!({"path": "src/lib.rs", "startLine": 4, "endLine": 4, "severity": "low", "claim": CAST})),
        ));
    let script = lanes(
        json!([candidate("src/lib.rs", 3, 4, WRAP)]),
        json!([candidate("src/lib.rs", 4, 4, CAST)]),
        json!([]),
    )
    .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(findings[0]["claim"], WRAP);
    assert_eq!(
        findings[0]["alsoVerified"],
        json!([{"claim": CAST, "severity": "low", "startLine": 4, "endLine": 4}]),
        "{report:#}"
    );
    assert_eq!(
        findings[0]["provenance"]["proposedBy"],
        json!(["generic-investigator #1", "outcome-investigator #1"])
    );
}

/// Two lanes propose the same defect (same place, area and claim) and the verifier
/// verifies one copy and rejects the other: neither verdict stands, both are unresolved
/// and nothing is published.
#[tokio::test(flavor = "multi_thread")]
async fn identical_candidates_decided_both_ways_are_unresolved() {
    const WRAP: &str = "ports above 65535 wrap silently";
    const OTHER: &str = "outcome-investigator #1/0";
    let (repo, base, head) = fixture();
    let verifier = ScriptedVerifier::new()
        .confirms(A, "src/lib.rs", 3, 4, WRAP)
        .dismisses(OTHER, json!([citation("src/lib.rs", 3, 4)]));
    let script = lanes(
        json!([candidate("src/lib.rs", 3, 4, WRAP)]),
        json!([candidate("src/lib.rs", 3, 4, WRAP)]),
        json!([]),
    )
    .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    let report = out.json();
    assert_eq!(report["findings"], json!([]), "{report:#}");
    assert_eq!(
        verdicts(&report),
        [
            (A.to_string(), json!("unresolved"), 1),
            (OTHER.to_string(), json!("unresolved"), 1)
        ]
    );
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn rejected_candidates_leave_a_clean_opinion() {
    let (repo, base, head) = fixture();
    let verifier = ScriptedVerifier::new()
        .dismisses(A, json!([citation("src/lib.rs", 3, 4)]))
        .dismisses(B, json!([citation("src/lib.rs", 10, 10)]));
    let script = lanes(two_candidates(), json!([]), json!([])).rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["findings"], json!([]));
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "full");
    assert_eq!(report["opinion"]["clean"], true, "{report:#}");
}

/// A rejection must cite the source that disproves its candidate: one that cites nothing
/// (a verifier that waves a candidate away) leaves it unresolved, so the review is never
/// clean on it.
#[tokio::test(flavor = "multi_thread")]
async fn a_rejection_that_cites_nothing_leaves_its_candidate_unresolved() {
    let (repo, base, head) = fixture();
    let verifier = ScriptedVerifier::new()
        .dismisses(A, json!([citation("src/lib.rs", 3, 4)]))
        .decides(json!({"candidateId": B, "decision": "rejected", "evidence": "", "citations": [], "finding": null}));
    let script = lanes(two_candidates(), json!([]), json!([])).rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        verdicts(&report),
        [
            (A.to_string(), json!("rejected"), 1),
            (B.to_string(), json!("unresolved"), 1)
        ]
    );
    assert_eq!(report["opinion"]["outcome"], "no-findings");
    assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert!(
        report
            .to_string()
            .contains("rejected this candidate without citing any source"),
        "{report:#}"
    );
}

/// The batch pass verifies a candidate without its finding and the focused pass rejects
/// it: the verifier contradicted itself, so the candidate is unresolved and the opinion
/// is not clean.
#[tokio::test(flavor = "multi_thread")]
async fn a_focused_pass_that_rejects_a_verified_candidate_leaves_it_unresolved() {
    let (repo, base, head) = fixture();
    let focused = ScriptedVerifier::new().dismisses(A, json!([citation("src/lib.rs", 3, 4)]));
    let verifier = ScriptedVerifier::new()
        .decides(omitted(A))
        .dismisses(B, json!([citation("src/lib.rs", 10, 10)]));
    let script = lanes(two_candidates(), json!([]), json!([]))
        .rule(stage(FOCUSED, "focused", [focused.reply()]))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        verdicts(&report),
        [
            (A.to_string(), json!("unresolved"), 2),
            (B.to_string(), json!("rejected"), 1)
        ]
    );
    assert_eq!(report["opinion"]["clean"], false, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "limited", "{report:#}");
    assert!(
        report["limitations"].to_string().contains(
            "the batch pass verified it without its finding and the focused pass rejected it"
        ),
        "{}",
        report["limitations"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_focused_pass_recovers_an_omitted_finding_with_two_verification_passes() {
    let (repo, base, head) = fixture();
    let focused =
        ScriptedVerifier::new().confirms(A, "src/lib.rs", 3, 4, "ports above 65535 wrap silently");
    let verifier = ScriptedVerifier::new()
        .decides(omitted(A))
        .dismisses(B, json!([citation("src/lib.rs", 10, 10)]));
    let script = lanes(two_candidates(), json!([]), json!([]))
        .rule(stage(FOCUSED, "focused", [focused.reply()]))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();

    // The focused pass re-checked that candidate alone, with the same role prompt and
    // tools and a 4,000-token output budget.
    let batch = &server.served_by("verifier")[0];
    let focused = server.served_by("focused");
    assert_eq!(focused.len(), 1);
    let focused = &focused[0];
    assert!(
        user(focused).contains(&format!(
            "Candidate ids to decide, one decision each: [\"{A}\"]"
        )),
        "{}",
        user(focused)
    );
    assert!(!user(focused).contains(B));
    assert_eq!(focused.body["max_tokens"], 4000);
    assert_ne!(batch.body["max_tokens"], 4000);
    assert_eq!(focused.system(), batch.system());
    assert_eq!(focused.tool_names(), batch.tool_names());
    assert!(focused.has_tools());

    let f = &report["findings"][0];
    assert_eq!(f["provenance"]["verificationPasses"], 2, "{report:#}");
    assert_eq!(f["provenance"]["verifiedBy"], "verifier");
    assert_eq!(
        verdicts(&report),
        [
            (A.to_string(), json!("verified"), 2),
            (B.to_string(), json!("rejected"), 1)
        ]
    );
    let labels: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"verifier (focused generic-investigator #1/0)"),
        "{labels:?}"
    );
    assert_eq!(report["opinion"]["coverage"], "full");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finding_omitted_twice_is_unresolved_and_other_findings_are_kept() {
    let (repo, base, head) = fixture();
    let verifier = ScriptedVerifier::new().decides(omitted(A)).confirms(
        B,
        "src/lib.rs",
        10,
        10,
        "clamp allows 101",
    );
    let script = lanes(two_candidates(), json!([]), json!([]))
        .rule(stage(FOCUSED, "focused", [decisions(json!([omitted(A)]))]))
        .rule(verifier.rule());
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(
        server.served_by("focused").len(),
        1,
        "one focused pass, not two"
    );
    assert_eq!(
        verdicts(&report),
        [
            (A.to_string(), json!("unresolved"), 2),
            (B.to_string(), json!("verified"), 1)
        ]
    );
    assert_eq!(
        report["candidates"][0]["problem"],
        "verified twice without the finding itself"
    );
    // The other verified finding is still published …
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["startLine"], 10);
    assert_eq!(report["opinion"]["outcome"], "findings");
    // … but the unresolved candidate limits coverage and forbids a clean opinion.
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["opinion"]["clean"], false);
    assert!(
        report["limitations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["kind"] == "unresolved-candidate"),
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn no_decision_at_all_makes_the_review_incomplete() {
    let (repo, base, head) = fixture();
    let script = lanes(two_candidates(), json!([]), json!([])).rule(stage(
        VERIFIER,
        "verifier",
        [decisions(json!([]))],
    ));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        failure_messages(&report),
        [
            format!("no decision for candidate `{A}`"),
            format!("no decision for candidate `{B}`")
        ]
    );
    assert!(
        verdicts(&report).iter().all(|(_, v, _)| v.is_null()),
        "never silently dropped: each candidate is listed without a verdict"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_candidate_needs_exactly_one_well_formed_decision() {
    let rejected = |id: &str| {
        decision(
            id,
            "rejected",
            json!([citation("src/lib.rs", 10, 10)]),
            None,
        )
    };
    let cases: Vec<(&str, Value, String)> = vec![
        (
            "duplicate",
            json!([rejected(A), rejected(A), rejected(B)]),
            format!("more than one decision for candidate `{A}`"),
        ),
        (
            "unknown id",
            json!([rejected(A), rejected(B), rejected("invented #1/0")]),
            "decision for unknown candidate id `invented #1/0`".into(),
        ),
        (
            "replacement defect",
            json!([
                decision(
                    A,
                    "verified",
                    json!([citation("src/lib.rs", 10, 10)]),
                    Some(finding("src/util.rs", 3, 3, "a different defect elsewhere"))
                ),
                rejected(B)
            ]),
            format!(
                "candidate `{A}`: verified finding is unrelated to the candidate (path `src/util.rs` is not the candidate's `src/lib.rs`)"
            ),
        ),
        (
            // Starts within ten lines of the candidate's 3-4 but runs past them: the
            // gate refuses it, as the report's own check would (it once passed the gate
            // and then failed the report's self-check).
            "finding runs past the slack",
            json!([
                decision(
                    A,
                    "verified",
                    json!([citation("src/lib.rs", 3, 4)]),
                    Some(finding("src/lib.rs", 3, 15, "wraps silently"))
                ),
                rejected(B)
            ]),
            format!(
                "candidate `{A}`: verified finding is unrelated to the candidate (lines 3-15 are far from the candidate's 3-4)"
            ),
        ),
    ];
    for (name, reply, message) in cases {
        let (repo, base, head) = fixture();
        let script = lanes(two_candidates(), json!([]), json!([])).rule(stage(
            VERIFIER,
            "verifier",
            [decisions(reply)],
        ));
        let server = ScriptedServer::start(script).await;
        let out = review(&repo, &base, &head, &server, &[], &[]).await;
        assert_eq!(out.code, 2, "{name}: {}", out.stdout);
        let report = out.json();
        assert_eq!(report["opinion"]["outcome"], "incomplete", "{name}");
        assert_eq!(report["findings"], json!([]), "{name}");
        assert_eq!(failure_messages(&report), [message], "{name}");
        assert_eq!(report["failures"][0]["kind"], "invalid-decision", "{name}");
        assert!(server.served_by("focused").is_empty());
    }
}

/// Issue #9 item 2: a decision outside the verifier contract (an unknown severity) gets
/// the same policy as in every stage: a contract violation that goes to the one repair,
/// and a failure (`invalid-output`, naming the value) when the repair does not fix it —
/// never a default.
#[tokio::test(flavor = "multi_thread")]
async fn a_decision_outside_the_contract_goes_to_repair_then_fails() {
    let (repo, base, head) = fixture();
    let catastrophic = decisions(json!([
        decision(
            A,
            "verified",
            json!([citation("src/lib.rs", 3, 4)]),
            Some(
                json!({"path": "src/lib.rs", "startLine": 3, "endLine": 4, "severity": "catastrophic", "claim": "x"})
            )
        ),
        decision(B, "rejected", json!([]), None)
    ]));
    let script = lanes(two_candidates(), json!([]), json!([]))
        .rule(
            Rule::when(Match::system_contains("You repair"))
                .named("repair")
                .reply(catastrophic.clone()),
        )
        .rule(stage(VERIFIER, "verifier", [catastrophic]));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    assert_eq!(report["findings"], json!([]));
    assert_eq!(report["failures"][0]["kind"], "invalid-output");
    let message = &failure_messages(&report)[0];
    assert!(
        message.contains("decisions[0]: unknown severity `catastrophic`"),
        "{message}"
    );
    assert_eq!(server.served_by("repair").len(), 1, "one repair");
}

/// Issue #9 item 2: a candidate whose area is not one of the review areas is a contract
/// violation in every candidate stage (a lane and the clean-result audit): it goes to the
/// one repair, and when the repair keeps it the stage fails (`invalid-output`, naming the
/// field and value). It never reaches verification or the report. (The verifier's reply
/// carries no area: a finding's area is its candidate's, already typed.)
#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_in_an_unknown_area_goes_to_repair_then_fails_in_every_candidate_stage() {
    let (repo, base, head) = fixture();
    let styled = || {
        receipt(
            json!([candidate_in("style", "src/lib.rs", 3, 4, "x")]),
            &FILES,
        )
    };
    let empty = || receipt(json!([]), &FILES);
    for (stage_label, instance) in [
        ("generic-investigator #1", GENERIC),
        ("clean-result-audit #1", AUDIT),
    ] {
        let lane = |label: &str, name: &str| {
            let reply = if label == instance { styled() } else { empty() };
            stage(label, name, [reply])
        };
        let script = Script::new()
            .rule(
                Rule::when(Match::system_contains("You repair"))
                    .named("repair")
                    .reply(styled()),
            )
            .rule(lane(GENERIC, "generic"))
            .rule(lane(OUTCOME, "outcome"))
            .rule(lane(CONVENTIONS, "conventions"))
            .rule(lane(AUDIT, "audit"))
            .rule(stage(VERIFIER, "verifier", [decisions(json!([]))]));
        let server = ScriptedServer::start(script).await;
        let out = review(&repo, &base, &head, &server, &[], &[]).await;
        assert_eq!(out.code, 2, "{stage_label}: {}", out.stdout);
        let report = out.json();
        assert_eq!(report["opinion"]["outcome"], "incomplete", "{stage_label}");
        assert_eq!(report["findings"], json!([]), "{stage_label}");
        assert_eq!(report["candidates"], json!([]), "{stage_label}");
        let failure = &report["failures"][0];
        assert_eq!(failure["stage"], stage_label, "{report}");
        assert_eq!(failure["kind"], "invalid-output", "{stage_label}");
        let message = failure["message"].as_str().unwrap();
        assert!(
            message.contains("candidates[0].area `style`"),
            "{stage_label}: {message}"
        );
        assert_eq!(
            server.served_by("repair").len(),
            1,
            "{stage_label}: one repair"
        );
        assert!(server.served_by("verifier").is_empty(), "{stage_label}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn citations_resolve_only_to_what_the_verifier_itself_read_or_was_given() {
    let util_lines = || json!([citation("src/util.rs", 2, 4), citation("src/lib.rs", 3, 4)]);
    let verdict = |citations: Value| {
        decisions(json!([
            decision(
                A,
                "verified",
                citations,
                Some(finding(
                    "src/lib.rs",
                    3,
                    4,
                    "ports above 65535 wrap silently"
                ))
            ),
            decision(B, "rejected", json!([]), None),
        ]))
    };
    // (verifier replies, generic lane reads src/util.rs too, expected outcome)
    let read_util = read_lines("src/util.rs", 1, 12);
    let cases: Vec<(&str, Vec<Reply>, &str)> = vec![
        // The verifier read the lines itself: accepted.
        (
            "read by the verifier",
            vec![read_util.clone(), verdict(util_lines())],
            "findings",
        ),
        // Only the generic lane read them: not in the verifier's ledger.
        (
            "read by a lane only",
            vec![verdict(util_lines())],
            "incomplete",
        ),
        // Removed or base lines nobody read.
        (
            "base lines never read",
            vec![verdict(json!([base_citation("src/util.rs", 2, 4)]))],
            "incomplete",
        ),
    ];
    for (name, verifier, want) in cases {
        let (repo, base, head) = fixture();
        let script = vouch_testkit::openai::Script::new()
            .rule(stage(
                GENERIC,
                "generic",
                [read_util.clone(), receipt(two_candidates(), &FILES)],
            ))
            .rule(stage(OUTCOME, "outcome", [receipt(json!([]), &FILES)]))
            .rule(stage(
                CONVENTIONS,
                "conventions",
                [receipt(json!([]), &FILES)],
            ))
            .rule(stage(VERIFIER, "verifier", verifier));
        let server = ScriptedServer::start(script).await;
        let out = review(&repo, &base, &head, &server, &[], &[]).await;
        let report = out.json();
        assert_eq!(report["opinion"]["outcome"], want, "{name}: {report:#}");
        if want == "incomplete" {
            assert_eq!(out.code, 2, "{name}");
            assert_eq!(report["findings"], json!([]), "{name}");
            let message = &failure_messages(&report)[0];
            assert!(
                message.contains("src/util.rs:2-4") && message.contains("outside the source read"),
                "{name}: {message}"
            );
        } else {
            assert_eq!(report["findings"][0]["citations"], util_lines(), "{name}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn convention_candidates_are_verified_only_with_a_policy_or_three_examples() {
    let (repo, base, head) = fixture();
    let conventions = json!([
        candidate_in(
            "conventions",
            "src/lib.rs",
            9,
            9,
            "prints to stdout; AGENTS.md rule 1 requires the log macros"
        ),
        candidate_in(
            "conventions",
            "src/lib.rs",
            10,
            10,
            "logs unlike the three helpers in src/util.rs"
        ),
        candidate_in(
            "conventions",
            "src/lib.rs",
            3,
            3,
            "differs from two helpers"
        ),
    ]);
    // Any lane's candidate in the conventions area meets the same boundary.
    let generic = json!([candidate_in(
        "conventions",
        "src/util.rs",
        3,
        3,
        "an unchanged helper breaks the rule"
    )]);
    let script = lanes(generic, json!([]), conventions).rule(stage(
        VERIFIER,
        "verifier",
        [
            read_lines("src/util.rs", 1, 12),
            decisions(json!([
                // The written policy (given inline from the base tree) and the hunk.
                decision(
                    "conventions #1/0",
                    "verified",
                    json!([
                        base_citation("AGENTS.md", 3, 3),
                        citation("src/lib.rs", 9, 9)
                    ]),
                    Some(finding(
                        "src/lib.rs",
                        9,
                        9,
                        "prints to stdout against the written logging rule"
                    ))
                ),
                // Three distinct examples outside the change, and the hunk.
                decision(
                    "conventions #1/1",
                    "verified",
                    json!([
                        citation("src/util.rs", 3, 3),
                        citation("src/util.rs", 7, 7),
                        citation("src/util.rs", 11, 11),
                        citation("src/lib.rs", 10, 10)
                    ]),
                    Some(finding(
                        "src/lib.rs",
                        10,
                        10,
                        "breaks the logging pattern of three helpers"
                    ))
                ),
                // Only two examples: no convention.
                decision(
                    "conventions #1/2",
                    "verified",
                    json!([
                        citation("src/util.rs", 3, 3),
                        citation("src/util.rs", 7, 7),
                        citation("src/lib.rs", 3, 3)
                    ]),
                    Some(finding("src/lib.rs", 3, 3, "differs from two helpers"))
                ),
                // A written policy, but the finding is not in a changed hunk.
                decision(
                    "generic-investigator #1/0",
                    "verified",
                    json!([
                        base_citation("AGENTS.md", 3, 3),
                        citation("src/util.rs", 3, 3)
                    ]),
                    Some(finding(
                        "src/util.rs",
                        3,
                        3,
                        "an unchanged helper breaks the rule"
                    ))
                ),
            ])),
        ],
    ));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let published: Vec<u64> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["startLine"].as_u64().unwrap())
        .collect();
    assert_eq!(published, [9, 10], "{report:#}");
    let by_id = |id: &str| {
        report["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["candidate"]["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id("conventions #1/0")["verdict"], "verified");
    assert_eq!(by_id("conventions #1/1")["verdict"], "verified");
    let two = by_id("conventions #1/2");
    assert_eq!(two["verdict"], "unresolved");
    assert!(
        two["problem"].as_str().unwrap().contains("(2 cited)"),
        "{two:#}"
    );
    let outside = by_id("generic-investigator #1/0");
    assert_eq!(outside["verdict"], "unresolved");
    assert!(
        outside["problem"]
            .as_str()
            .unwrap()
            .contains("does not lie in a changed hunk"),
        "{outside:#}"
    );
    assert_eq!(report["opinion"]["coverage"], "limited");
    assert_eq!(report["opinion"]["clean"], false);
}
