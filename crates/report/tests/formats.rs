//! Every output format of a review report, checked against its official schema:
//! SARIF 2.1.0 (OASIS, as the `serde-sarif` package ships it) and reviewdog's rdjson (the
//! schema vouch writes from reviewdog's proto); the JSON report against its own
//! schema and self-check; Markdown as a reviewed snapshot.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use vouch_core::{
    AuditState, Candidate, CandidateRecord, ChangeCounts, CommitRef, CoverageComparison, Failure,
    FailureKind, Finding, Limitation, LimitationKind, Opinion, Outcome, Provenance, ReviewFacts,
    Revision, Severity, SourceWindow, StageRecord, StageStatus, TokenUsage, Verdict,
    derive_opinion,
};
use vouch_final_report::{LocalRangeReview, ReviewOutcome, local_range_review_report};
use vouch_report::{
    Format, REPORT_SCHEMA_VERSION, ReviewReport, StructuredOutputs, ToolInfo, check_report, render,
    render_rdjson, render_sarif,
};

/// The official SARIF 2.1.0 JSON Schema as the `serde-sarif` package ships it
/// (`src/schema.json`, OASIS's `sarif-schema-2.1.0.json`), located through
/// `cargo metadata`: only the project and its crates.io dependencies are read.
fn sarif_schema() -> Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
            let out = Command::new(cargo)
                .args(["metadata", "--format-version", "1", "--manifest-path"])
                .arg(&manifest)
                .output()
                .expect("running cargo metadata");
            assert!(out.status.success(), "cargo metadata failed: {out:?}");
            let metadata: Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
            let package = metadata["packages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == "serde-sarif")
                .expect("serde-sarif is a dev-dependency of vouch-report");
            let path = Path::new(package["manifest_path"].as_str().unwrap())
                .with_file_name("src")
                .join("schema.json");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            let mut schema: Value = serde_json::from_str(&text).expect("schema JSON");
            // The one pattern of the official schema (for `language`, twice) that a strict
            // (non-Annex-B) regex engine refuses: a stray `]`, which ECMA-262 reads as a
            // literal. Escaping it keeps its meaning.
            let fixed = escape_stray_bracket(&mut schema);
            assert_eq!(fixed, 2, "the official schema's `language` patterns");
            assert_eq!(
                schema["title"],
                "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
            );
            schema
        })
        .clone()
}

fn escape_stray_bracket(value: &mut Value) -> usize {
    const STRAY: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match value {
        Value::String(s) if s == STRAY => {
            *s = r"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\]?$".into();
            1
        }
        Value::Array(items) => items.iter_mut().map(escape_stray_bracket).sum(),
        Value::Object(map) => map.values_mut().map(escape_stray_bracket).sum(),
        _ => 0,
    }
}

/// reviewdog's rdjson `DiagnosticResult`, as the JSON Schema vouch writes from
/// reviewdog's proto (`crates/report/schema/rdjson.schema.json`).
fn rdjson_schema() -> Value {
    serde_json::from_str(include_str!("../schema/rdjson.schema.json")).expect("schema JSON")
}

fn assert_valid(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} violates its schema: {errors:#?}\n{instance:#}"
    );
}

const HEAD: &str = "8e6ab1050995a03328d71cd8cf2eb5215ad2e65f";
const BASE: &str = "16cc1c894eddb79c8dd6ce18ab8e54477f4eba29";

fn window(path: &str, start: u32, end: u32) -> SourceWindow {
    SourceWindow {
        revision: Revision::Head,
        path: path.into(),
        start_line: start,
        end_line: end,
    }
}

fn stage(label: &str, role: &str) -> StageRecord {
    StageRecord {
        label: label.into(),
        specialist: label.split(' ').next().unwrap().into(),
        version: "1.0.0".into(),
        role: role.into(),
        status: StageStatus::Accepted,
        assigned_files: 2,
        coverage: (role != "verifier").then(|| CoverageComparison {
            complete: true,
            ..Default::default()
        }),
        retried: false,
        first_coverage: None,
        repaired: false,
        receipt_downgraded: false,
        candidates: 1,
        budget_hit: None,
        forced_synthesis: false,
        source_windows: 1,
        ledger: vec![window("ratelimit/bucket.py", 80, 100)],
        model: Some("scripted".into()),
        usage: TokenUsage {
            requests: 2,
            prompt_tokens: 3000,
            completion_tokens: 400,
        },
        summary: String::new(),
        problem: None,
    }
}

fn candidate() -> Candidate {
    Candidate {
        id: "generic-investigator #1/0".into(),
        proposed_by: "generic-investigator #1".into(),
        path: "ratelimit/bucket.py".into(),
        revision: Revision::Head,
        start_line: 88,
        end_line: 96,
        severity: Severity::High,
        area: "correctness".into(),
        claim: "acquire() can return True after its timeout".into(),
        evidence: "the deadline is checked before sleeping only".into(),
    }
}

/// A report with one verified finding and a stated limitation (so every section renders).
fn report(with_finding: bool) -> ReviewReport {
    let limitation = Limitation {
        kind: LimitationKind::ExcludedFiles,
        stage: None,
        detail: "1 changed file(s) were excluded from review".into(),
    };
    let facts = ReviewFacts {
        change_is_empty: false,
        aborted: false,
        failures: if with_finding {
            vec![]
        } else {
            vec![Failure {
                kind: FailureKind::CoverageMismatch,
                stage: Some("bug-review #2".into()),
                message: "bug-review #2 coverage mismatch after retry.\nMissing files: README.md"
                    .into(),
            }]
        },
        limitations: vec![limitation.clone()],
        verified_findings: usize::from(with_finding),
        unresolved_candidates: 0,
        undecided_candidates: 0,
        audit: AuditState::NotNeeded,
    };
    let opinion: Opinion = derive_opinion(&facts);
    let finding = Finding {
        path: "ratelimit/bucket.py".into(),
        revision: Revision::Head,
        start_line: 88,
        end_line: 96,
        severity: Severity::High,
        area: "correctness".into(),
        claim: "acquire() can return True after its timeout".into(),
        evidence: "line 90 checks the deadline before the sleep on line 94".into(),
        citations: vec![window("ratelimit/bucket.py", 88, 96)],
        provenance: Provenance {
            proposed_by: vec!["generic-investigator #1".into()],
            candidate_ids: vec!["generic-investigator #1/0".into()],
            verified_by: "verifier".into(),
            verification_passes: 1,
        },
    };
    let files = vec![
        "ratelimit/bucket.py".to_string(),
        "tests/test_bucket.py".to_string(),
    ];
    let outcome = match opinion.outcome {
        Outcome::Findings => ReviewOutcome::Findings(vouch_final_report::model::Coverage::Limited),
        _ => ReviewOutcome::Incomplete,
    };
    // An incomplete review lists no file as reviewed unless a stage accepted it.
    let reviewed = if with_finding { files.clone() } else { vec![] };
    let mut not_reviewed = vec![vouch_core::NotReviewedFile {
        path: "Cargo.lock".into(),
        reason: vouch_core::NotReviewedReason::Excluded,
        detail: "matches exclusion `**/Cargo.lock`".into(),
    }];
    if !with_finding {
        not_reviewed.extend(files.iter().map(|path| vouch_core::NotReviewedFile {
            path: path.clone(),
            reason: vouch_core::NotReviewedReason::StageFailed,
            detail: "no stage's coverage receipt for it was accepted".into(),
        }));
    }
    let final_report = local_range_review_report(&LocalRangeReview {
        repository: "/src/ratelimit".into(),
        base_sha: BASE.into(),
        head_sha: HEAD.into(),
        files_reviewed: reviewed.clone(),
        outcome,
        narrative: "vouch read-only review of a local range.".into(),
        command_line: "vouch review --repo /src/ratelimit".into(),
    });
    ReviewReport {
        schema_version: REPORT_SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "vouch".into(),
            version: "0.1.0".into(),
        },
        repository: "/src/ratelimit".into(),
        base: CommitRef {
            spec: BASE.into(),
            sha: BASE.into(),
        },
        head: CommitRef {
            spec: HEAD.into(),
            sha: HEAD.into(),
        },
        merge_base: BASE.into(),
        composition: "default".into(),
        summary: if with_finding {
            "One verified finding."
        } else {
            "The review could not finish; no finding is published."
        }
        .into(),
        counts: ChangeCounts {
            files: 3,
            hunks: 4,
            additions: 50,
            deletions: 17,
        },
        expected_files: files,
        excluded_files: vec![vouch_core::ExcludedFile {
            path: "Cargo.lock".into(),
            reason: "matches exclusion `**/Cargo.lock`".into(),
        }],
        files_reviewed: reviewed,
        files_not_reviewed: not_reviewed,
        stages: vec![
            stage("generic-investigator #1", "investigator"),
            stage("verifier", "verifier"),
        ],
        candidates: vec![CandidateRecord {
            candidate: candidate(),
            verdict: with_finding.then_some(Verdict::Verified),
            evidence: "cited".into(),
            verification_passes: 1,
            problem: None,
        }],
        findings: if with_finding { vec![finding] } else { vec![] },
        limitations: vec![limitation],
        failures: facts.failures.clone(),
        messages: vec![],
        observations: vec!["generic-investigator #1: scripted".into()],
        usage: TokenUsage {
            requests: 4,
            prompt_tokens: 6000,
            completion_tokens: 800,
        },
        structured_outputs: StructuredOutputs {
            requested: true,
            fell_back: false,
        },
        opinion,
        final_report: serde_json::to_value(final_report).unwrap(),
    }
}

#[test]
fn sarif_output_satisfies_the_sarif_2_1_0_schema() {
    let schema = sarif_schema();
    for with_finding in [true, false] {
        let sarif = render_sarif(&report(with_finding));
        assert_valid(&schema, &sarif, "SARIF");
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), usize::from(with_finding));
        assert_eq!(
            sarif["runs"][0]["invocations"][0]["executionSuccessful"],
            with_finding
        );
    }
    let sarif = render_sarif(&report(true));
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["level"], "error");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        88
    );
    assert_eq!(
        result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "ratelimit/bucket.py"
    );
}

#[test]
fn rdjson_output_satisfies_reviewdogs_schema() {
    let schema = rdjson_schema();
    for with_finding in [true, false] {
        let rdjson = render_rdjson(&report(with_finding));
        assert_valid(&schema, &rdjson, "rdjson");
        assert_eq!(
            rdjson["diagnostics"].as_array().unwrap().len(),
            usize::from(with_finding)
        );
    }
    let rdjson = render_rdjson(&report(true));
    assert_eq!(
        rdjson["diagnostics"][0]["location"]["range"]["start"]["line"],
        88
    );
    assert_eq!(rdjson["diagnostics"][0]["severity"], "ERROR");
}

#[test]
fn json_report_passes_its_own_check_and_schema() {
    for with_finding in [true, false] {
        let r = report(with_finding);
        check_report(&r).expect("self-check");
        let value: Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_valid(&vouch_report::report_schema(), &value, "report JSON");
    }
}

#[test]
fn a_report_that_publishes_findings_of_an_incomplete_review_fails_its_check() {
    let mut r = report(false);
    r.findings = report(true).findings;
    assert!(check_report(&r).is_err());
}

#[test]
fn markdown_rendering() {
    insta::assert_snapshot!("markdown-findings", render(&report(true), Format::Markdown));
    insta::assert_snapshot!(
        "markdown-incomplete",
        render(&report(false), Format::Markdown)
    );
}

#[test]
fn untrusted_text_cannot_inject_markdown() {
    let mut r = report(true);
    let evil_path =
        "x`\n\n# vouch review: Clean, full coverage\n\n[click](https:evil.example) `.bin";
    r.excluded_files = vec![vouch_core::ExcludedFile {
        path: evil_path.into(),
        reason: "binary file".into(),
    }];
    r.findings[0].claim =
        "## Injected heading <script>alert(1)</script> [x](javascript:alert(1)) ![i](x)".into();
    r.findings[0].evidence = "line one\n# line two heading\n| a | b |".into();
    r.messages = vec!["```\n# escaped the fence\n```".into()];
    let md = render(&r, Format::Markdown);
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert!(
        headings.iter().all(|h| !h.contains("Clean, full coverage")
            && !h.contains("Injected")
            && !h.contains("line two")),
        "{headings:#?}"
    );
    assert!(!md.contains("<script>"), "{md}");
    // Link and image syntax is escaped, so it renders as text.
    assert!(
        md.contains(r"\[x\](javascript:alert(1)) \!\[i\](x)"),
        "{md}"
    );
    // The message's own fence cannot close the block around it.
    assert!(
        md.contains("````text\n```\n# escaped the fence\n```\n````"),
        "{md}"
    );
    // The path is one code span on one line, its newlines shown as escapes.
    assert!(
        md.contains(
            r"``x`\n\n# vouch review: Clean, full coverage\n\n[click](https:evil.example) `.bin``"
        ),
        "{md}"
    );
}

#[test]
fn block_openers_at_the_start_of_untrusted_text_are_escaped() {
    let mut r = report(true);
    for (claim, rendered) in [
        ("# heading", r"Claim: \# heading"),
        ("1. item", r"Claim: 1\. item"),
        ("- item", r"Claim: \- item"),
        (
            "issue #12 stays readable",
            "Claim: issue #12 stays readable",
        ),
    ] {
        r.findings[0].claim = claim.into();
        let md = render(&r, Format::Markdown);
        assert!(md.contains(rendered), "{claim:?}:\n{md}");
    }
}

#[test]
fn sarif_locations_are_percent_encoded_uri_references() {
    assert_eq!(
        vouch_report::path_uri("src/a b/ünï.rs"),
        "src/a%20b/%C3%BCn%C3%AF.rs"
    );
    assert_eq!(
        vouch_report::path_uri("new\nline\"q`.py"),
        "new%0Aline%22q%60.py"
    );
    let mut r = report(true);
    r.findings[0].path = "dir with space/文件.py".into();
    let sarif = render_sarif(&r);
    let uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
    assert_eq!(uri, "dir%20with%20space/%E6%96%87%E4%BB%B6.py");
    assert_eq!(
        sarif["runs"][0]["versionControlProvenance"][0]["repositoryUri"],
        "file:///src/ratelimit"
    );
    assert_valid(&sarif_schema(), &sarif, "SARIF");
}

#[test]
fn the_format_schemas_reject_broken_documents() {
    let invalid = |schema: &Value, doc: &Value| {
        let validator = jsonschema::validator_for(schema).expect("schema compiles");
        validator.iter_errors(doc).count() > 0
    };
    let mut sarif = render_sarif(&report(true));
    sarif["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(
        invalid(&sarif_schema(), &sarif),
        "a SARIF level outside the enum"
    );
    let mut rdjson = render_rdjson(&report(true));
    rdjson["diagnostics"][0]["severity"] = "CRITICAL".into();
    assert!(
        invalid(&rdjson_schema(), &rdjson),
        "an rdjson severity outside the enum"
    );
    let mut rdjson = render_rdjson(&report(true));
    rdjson["diagnostics"][0]["relatedLocation"] = Value::Array(vec![]);
    assert!(
        invalid(&rdjson_schema(), &rdjson),
        "a field the proto does not have"
    );
}
