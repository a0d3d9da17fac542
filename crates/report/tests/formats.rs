//! Every output format of a review report, checked against its official schema:
//! SARIF 2.1.0 (OASIS, as the `serde-sarif` package ships it) and reviewdog's rdjson (the
//! schema vouch writes from reviewdog's proto); the JSON report against its own
//! schema and self-check; Markdown as a reviewed snapshot.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use vouch_core::{
    Area, AuditState, Candidate, CandidateRecord, ChangeCounts, CommitRef, CoverageComparison,
    Failure, FailureKind, FileLines, Finding, Limitation, LimitationKind, Opinion, Outcome,
    Provenance, ReviewFacts, Revision, Role, Severity, SourceWindow, StageRecord, StageStatus,
    TokenUsage, Verdict, derive_opinion,
};
use vouch_final_report::{LocalRangeReview, ReviewOutcome, local_range_review_report};
use vouch_report::{
    COMMENT_MAX_CHARS, FailureClass, Format, MarkdownOptions, REPORT_SCHEMA_VERSION, ReviewReport,
    RunFailure, StructuredOutputs, ToolInfo, check_report, comment_marker, read_report, render,
    render_failure, render_markdown_with, render_rdjson, render_sarif,
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

fn stage(label: &str, role: Role) -> StageRecord {
    StageRecord {
        label: label.into(),
        specialist: label.split(' ').next().unwrap().into(),
        version: "1.0.0".into(),
        role,
        status: StageStatus::Accepted,
        assigned_files: 2,
        coverage: (role != Role::Verifier).then(|| CoverageComparison {
            complete: true,
            ..Default::default()
        }),
        retried: false,
        first_coverage: None,
        repaired: false,
        receipt_downgraded: false,
        reply_issues: vec![],
        candidates: 1,
        budget_hit: None,
        forced_synthesis: false,
        prefetch: None,
        source_windows: 1,
        lane: (role != Role::Verifier).then(|| label.into()),
        assigned_paths: if role == Role::Verifier {
            vec![]
        } else {
            vec!["ratelimit/bucket.py".into(), "tests/test_bucket.py".into()]
        },
        ledger: vec![
            FileLines {
                revision: Revision::Head,
                path: "ratelimit/bucket.py".into(),
                lines: vec![(80, 100)],
            },
            FileLines {
                revision: Revision::Base,
                path: "ratelimit/bucket.py".into(),
                lines: vec![(80, 100)],
            },
            FileLines {
                revision: Revision::Head,
                path: "tests/test_bucket.py".into(),
                lines: vec![(1, 40)],
            },
        ],
        line_spans: Vec::new(),
        metadata_shown: vec![],
        model: Some("scripted".into()),
        answered_by: vec!["scripted-2026-12-01".into()],
        usage: TokenUsage {
            requests: 2,
            prompt_tokens: 3000,
            completion_tokens: 400,
            ..TokenUsage::default()
        },
        summary: String::new(),
        problem: None,
    }
}

/// The change: two files under review, the lock file excluded.
fn changed_files() -> Vec<vouch_core::ChangedFile> {
    let file = |path: &str, status, (start, lines)| vouch_core::ChangedFile {
        path: path.into(),
        previous_path: None,
        similarity: None,
        status,
        kind: vouch_core::EntryKind::File,
        old_mode: Some(0o100644),
        new_mode: Some(0o100644),
        binary: false,
        hunks: vec![vouch_core::Hunk {
            old_start: if status == vouch_core::FileStatus::Added {
                0
            } else {
                start
            },
            old_lines: if status == vouch_core::FileStatus::Added {
                0
            } else {
                lines
            },
            new_start: start,
            new_lines: lines,
            header: String::new(),
        }],
        additions: lines,
        deletions: 0,
        long_lines: vec![],
    };
    vec![
        file("Cargo.lock", vouch_core::FileStatus::Modified, (10, 4)),
        file(
            "ratelimit/bucket.py",
            vouch_core::FileStatus::Modified,
            (85, 12),
        ),
        file(
            "tests/test_bucket.py",
            vouch_core::FileStatus::Added,
            (1, 30),
        ),
    ]
}

/// The investigator's record: accepted and seen in full when the review completed,
/// failed (no accepted receipt) when it did not.
fn investigator(completed: bool) -> StageRecord {
    let mut record = stage("generic-investigator #1", Role::Investigator);
    if !completed {
        record.status = StageStatus::Failed;
        record.coverage = Some(CoverageComparison::default());
    }
    record
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
        area: Area::Correctness,
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
                detail: None,
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
        area: Area::Correctness,
        claim: "acquire() can return True after its timeout".into(),
        evidence: "line 90 checks the deadline before the sleep on line 94".into(),
        citations: vec![window("ratelimit/bucket.py", 88, 96)],
        provenance: Provenance {
            proposed_by: vec!["generic-investigator #1".into()],
            candidate_ids: vec!["generic-investigator #1/0".into()],
            verified_by: "verifier".into(),
            verification_passes: 1,
        },
        also_verified: vec![],
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
    let mut report = ReviewReport {
        schema_version: REPORT_SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "vouch".into(),
            version: "0.1.0".into(),
        },
        repository: "/src/ratelimit".into(),
        remote_url: Some("https://github.com/acme/ratelimit.git".into()),
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
        counts: ChangeCounts::of(&changed_files()),
        changed_files: changed_files(),
        expected_files: files,
        excluded_files: vec![vouch_core::ExcludedFile {
            path: "Cargo.lock".into(),
            reason: "matches exclusion `**/Cargo.lock`".into(),
        }],
        files_reviewed: reviewed,
        files_not_reviewed: not_reviewed,
        stages: vec![
            investigator(with_finding),
            stage("verifier", Role::Verifier),
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
            ..TokenUsage::default()
        },
        context_window: None,
        structured_outputs: StructuredOutputs {
            requested: true,
            fell_back: false,
        },
        opinion,
        final_report: serde_json::to_value(final_report).unwrap(),
    };
    // What a report says in words is derived from its records, as `vouch review` does.
    report.summary = vouch_report::summary_line(&report);
    report.final_report =
        vouch_report::embedded_final_report(&report, "vouch review --repo /src/ratelimit").unwrap();
    report
}

#[test]
fn sarif_output_satisfies_the_sarif_2_1_0_schema() {
    let schema = sarif_schema();
    for with_finding in [true, false] {
        let sarif = render_sarif(&report(with_finding));
        assert_valid(&schema, &sarif, "SARIF");
        // The typed model of the serde-sarif crate reads it too.
        let _: serde_sarif::sarif::Sarif =
            serde_json::from_value(sarif.clone()).expect("typed SARIF");
        let run = &sarif["runs"][0];
        assert_eq!(run["invocations"][0]["executionSuccessful"], with_finding);
        if with_finding {
            // The finding, then the limited-coverage warning (the fixture excludes a
            // file): a partial review never reads as complete in code scanning.
            let results = run["results"].as_array().unwrap();
            assert_eq!(results.len(), 2, "{run:#}");
            let notice = &results[1];
            assert_eq!(notice["ruleId"], "vouch/limited-coverage");
            assert_eq!(notice["level"], "warning");
            let index = notice["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(
                run["tool"]["driver"]["rules"][index]["id"],
                "vouch/limited-coverage"
            );
        } else {
            // Absent, not empty: an incomplete review never reads as "no alerts".
            assert!(run.get("results").is_none(), "{run:#}");
        }
    }
    let sarif = render_sarif(&report(true));
    let run = &sarif["runs"][0];
    let result = &run["results"][0];
    assert_eq!(result["level"], "error");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        88
    );
    assert_eq!(
        result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "ratelimit/bucket.py"
    );
    assert_eq!(
        run["automationDetails"]["id"],
        format!("vouch/default/{HEAD}")
    );
    let rule = &run["tool"]["driver"]["rules"][result["ruleIndex"].as_u64().unwrap() as usize];
    assert_eq!(rule["id"], "correctness");
    assert!(
        rule["fullDescription"]["text"].as_str().unwrap().len() > 20,
        "{rule:#}"
    );
    assert!(
        rule["help"]["text"].as_str().unwrap().contains("verifier"),
        "{rule:#}"
    );
    assert_eq!(
        run["versionControlProvenance"][0],
        serde_json::json!({"repositoryUri": "https://github.com/acme/ratelimit.git", "revisionId": HEAD, "mappedTo": {"uriBaseId": "SRCROOT"}})
    );
}

#[test]
fn sarif_fingerprints_are_stable_across_reruns_and_unrelated_edits() {
    let fp = |r: &ReviewReport| {
        render_sarif(r)["runs"][0]["results"][0]["partialFingerprints"]
            [vouch_report::FINGERPRINT_KEY]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = fp(&report(true));
    assert_eq!(first, fp(&report(true)), "a re-run");
    let mut moved = report(true);
    moved.findings[0].start_line += 7;
    moved.findings[0].end_line += 7;
    moved.findings[0].citations[0].start_line += 7;
    assert_eq!(first, fp(&moved), "lines above moved");
    let mut other = report(true);
    other.findings[0].claim = "release() leaks a token".into();
    assert_ne!(first, fp(&other), "another finding");
}

#[test]
fn a_finding_on_removed_lines_is_never_placed_on_a_head_line() {
    let mut r = report(true);
    r.findings[0].revision = Revision::Base;
    r.findings[0].citations[0].revision = Revision::Base;
    let sarif = render_sarif(&r);
    assert_valid(&sarif_schema(), &sarif, "SARIF");
    let result = &sarif["runs"][0]["results"][0];
    let location = &result["locations"][0]["physicalLocation"];
    assert!(location.get("region").is_none(), "file-level: {result:#}");
    assert_eq!(location["artifactLocation"]["uri"], "ratelimit/bucket.py");
    let base = &result["relatedLocations"][0];
    assert_eq!(base["physicalLocation"]["region"]["startLine"], 88);
    assert_eq!(base["properties"]["revision"], "base");
    assert!(
        base["message"]["text"]
            .as_str()
            .unwrap()
            .contains("merge base"),
        "{base:#}"
    );
    let rdjson = render_rdjson(&r);
    assert_valid(&rdjson_schema(), &rdjson, "rdjson");
    let d = &rdjson["diagnostics"][0];
    assert!(d["location"].get("range").is_none(), "{d:#}");
    assert_eq!(
        d["related_locations"][0]["location"]["range"]["start"]["line"],
        88
    );
    let cq = vouch_report::render_codequality(&r);
    assert_eq!(cq[0]["location"]["lines"]["begin"], 1);
    assert!(
        cq[0]["description"]
            .as_str()
            .unwrap()
            .contains("removed lines 88-96")
    );
}

#[test]
fn rdjson_output_satisfies_reviewdogs_schema() {
    let schema = rdjson_schema();
    for with_finding in [true, false] {
        let rdjson = render_rdjson(&report(with_finding));
        assert_valid(&schema, &rdjson, "rdjson");
        for line in render(&report(with_finding), Format::Rdjsonl).lines() {
            let diagnostic: Value = serde_json::from_str(line).expect("one JSON per line");
            let wrapped = serde_json::json!({"diagnostics": [diagnostic]});
            assert_valid(&schema, &wrapped, "rdjsonl line");
        }
    }
    let rdjson = render_rdjson(&report(true));
    let d = &rdjson["diagnostics"][0];
    assert_eq!(d["location"]["range"]["start"]["line"], 88);
    assert_eq!(d["severity"], "ERROR");
    assert_eq!(
        d["related_locations"][0]["location"],
        serde_json::json!({"path": "ratelimit/bucket.py", "range": {"start": {"line": 88}, "end": {"line": 96}}})
    );
    // Limited coverage is stated as a warning beside the finding.
    assert_eq!(rdjson["diagnostics"][1]["severity"], "WARNING");
    assert_eq!(
        rdjson["diagnostics"][1]["code"]["value"],
        "vouch/limited-coverage"
    );
    // An incomplete review is one file-level ERROR saying so, never an empty document.
    let incomplete = render_rdjson(&report(false));
    let d = &incomplete["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{incomplete:#}");
    assert_eq!(d[0]["severity"], "ERROR");
    assert_eq!(
        d[0]["location"],
        serde_json::json!({"path": "ratelimit/bucket.py"})
    );
    assert!(
        d[0]["message"].as_str().unwrap().contains("incomplete"),
        "{d:#?}"
    );
}

#[test]
fn codequality_output_satisfies_gitlabs_format() {
    let schema: Value =
        serde_json::from_str(include_str!("../schema/codequality.schema.json")).unwrap();
    for with_finding in [true, false] {
        let cq: Value =
            serde_json::from_str(&render(&report(with_finding), Format::Codequality)).unwrap();
        assert_valid(&schema, &cq, "Code Quality");
        // With the finding, the limited-coverage issue comes too; without, the one
        // issue saying the review did not complete.
        let expected = if with_finding { 2 } else { 1 };
        assert_eq!(cq.as_array().unwrap().len(), expected, "{cq:#}");
    }
    let limited = vouch_report::render_codequality(&report(true));
    assert_eq!(limited[1]["check_name"], "vouch/limited-coverage");
    assert_eq!(limited[1]["severity"], "minor");
    assert!(
        limited[1]["description"]
            .as_str()
            .unwrap()
            .contains("1 changed file(s) were excluded from review"),
        "{limited:#}"
    );
    let cq = vouch_report::render_codequality(&report(true));
    assert_eq!(cq[0]["severity"], "major");
    assert_eq!(
        cq[0]["location"],
        serde_json::json!({"path": "ratelimit/bucket.py", "lines": {"begin": 88, "end": 96}})
    );
    assert_eq!(cq[0]["check_name"], "vouch/correctness");
    let incomplete = vouch_report::render_codequality(&report(false));
    assert_eq!(incomplete[0]["check_name"], "vouch/review-not-completed");
}

#[test]
fn every_formats_failure_document_is_valid_in_that_format() {
    let failure = RunFailure::new(
        FailureClass::Usage,
        "no model endpoint is configured: set OPENAI_BASE_URL",
    );
    let sarif: Value = serde_json::from_str(&render_failure(&failure, Format::Sarif)).unwrap();
    assert_valid(&sarif_schema(), &sarif, "failure SARIF");
    assert!(sarif["runs"][0].get("results").is_none());
    let rdjson: Value = serde_json::from_str(&render_failure(&failure, Format::Rdjson)).unwrap();
    assert_valid(&rdjson_schema(), &rdjson, "failure rdjson");
    let cq: Value = serde_json::from_str(&render_failure(&failure, Format::Codequality)).unwrap();
    assert_valid(
        &serde_json::from_str(include_str!("../schema/codequality.schema.json")).unwrap(),
        &cq,
        "failure Code Quality",
    );
    let json: Value = serde_json::from_str(&render_failure(&failure, Format::Json)).unwrap();
    assert_eq!(json["exitCode"], 3);
    for format in Format::ALL {
        let text = render_failure(&failure, format);
        assert!(text.contains("OPENAI_BASE_URL"), "{format}: {text}");
    }
    insta::assert_snapshot!(
        "markdown-failure",
        render_failure(&failure, Format::Markdown)
    );
}

#[test]
fn json_report_passes_its_own_check_and_schema() {
    for with_finding in [true, false] {
        let mut r = report(with_finding);
        check_report(&mut r).expect("self-check");
        let value: Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_valid(&vouch_report::report_schema(), &value, "report JSON");
    }
}

/// The JSON report is the report serialised directly: the same text as through a
/// `serde_json::Value` (fields in declaration order), a stage's ledger one entry per path
/// and revision with its lines as ranges; a ledger of windows (`startLine`/`endLine`) is
/// not a report's.
#[test]
fn the_json_report_is_written_directly_with_the_compact_ledger() {
    let r = report(true);
    let text = render(&r, Format::Json);
    let through_value = serde_json::to_string_pretty(&serde_json::to_value(&r).unwrap()).unwrap();
    assert_eq!(text, through_value + "\n");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value["stages"][0]["ledger"],
        serde_json::json!([
            {"revision": "head", "path": "ratelimit/bucket.py", "lines": [[80, 100]]},
            {"revision": "base", "path": "ratelimit/bucket.py", "lines": [[80, 100]]},
            {"revision": "head", "path": "tests/test_bucket.py", "lines": [[1, 40]]}
        ])
    );
    let mut windows = value.clone();
    windows["stages"][0]["ledger"] = serde_json::json!([
        {"revision": "head", "path": "ratelimit/bucket.py", "startLine": 80, "endLine": 100}
    ]);
    let err = read_report(windows)
        .expect_err("a window-shaped ledger")
        .to_string();
    assert!(err.contains("/stages/0/ledger/0"), "{err}");
}

/// A saved report reads back as written; one whose `area` or `role` is not one of the
/// vocabulary's spellings is refused with an error naming the value and the field.
#[test]
fn a_saved_report_reads_back_and_an_unknown_area_or_role_is_named() {
    let r = report(true);
    let value: Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
    assert_eq!(read_report(value.clone()).expect("reads back"), r);
    let cases = [
        ("/findings/0/area", "style"),
        ("/findings/0/area", "Correctness"),
        ("/candidates/0/candidate/area", "failure_paths"),
        ("/stages/0/role", "judge"),
        ("/stages/1/role", "Verifier"),
    ];
    for (pointer, bad) in cases {
        let mut broken = value.clone();
        *broken
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer} exists")) = Value::from(bad);
        let err = read_report(broken).expect_err(pointer).to_string();
        assert!(
            err.contains(&format!("\"{bad}\"")) && err.contains(pointer),
            "{pointer} = {bad}: {err}"
        );
    }
}

#[test]
fn a_report_that_publishes_findings_of_an_incomplete_review_fails_its_check() {
    let mut r = report(false);
    r.findings = report(true).findings;
    assert!(check_report(&mut r).is_err());
}

/// A report edited by hand cannot publish what its own records do not support: each
/// edit below fails the check `vouch render` and `vouch publish` run on a saved report,
/// naming what is wrong; the unedited report passes.
#[test]
fn a_report_must_keep_its_own_evidence() {
    type Edit = fn(&mut ReviewReport);
    fn clean(r: &mut ReviewReport) {
        r.opinion = derive_opinion(&ReviewFacts {
            change_is_empty: false,
            aborted: false,
            failures: vec![],
            limitations: vec![],
            verified_findings: 0,
            unresolved_candidates: 0,
            undecided_candidates: 0,
            audit: AuditState::Passed,
        });
        r.limitations.clear();
        r.excluded_files.clear();
        r.files_not_reviewed.clear();
        r.findings.clear();
        r.candidates.clear();
        r.changed_files.retain(|f| f.path != "Cargo.lock");
        r.counts = ChangeCounts::of(&r.changed_files);
        r.stages
            .push(stage("clean-result-audit #1", Role::CleanResultAudit));
        r.summary = vouch_report::summary_line(r);
        r.final_report =
            vouch_report::embedded_final_report(r, "vouch review --repo /src/ratelimit").unwrap();
    }
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "a summary that claims a clean review",
            |r| {
                r.summary =
                    "Clean: no verified finding in 2 reviewed file(s), full coverage.".into()
            },
            "the summary does not say what the records do",
        ),
        (
            "an embedded final report that claims full coverage",
            |r| r.final_report["diffReview"]["coverage"] = "full".into(),
            "the embedded final report is not the one the records give",
        ),
        (
            "an embedded final report with no command line",
            |r| r.final_report["handoff"]["replayCommands"] = serde_json::json!([]),
            "names no command line",
        ),
        (
            "a reviewed file its stage's ledger never showed",
            |r| {
                r.stages[0]
                    .ledger
                    .retain(|l| l.path != "tests/test_bucket.py")
            },
            "tests/test_bucket.py is listed as reviewed, but no lane's accepted receipts",
        ),
        (
            "a reviewed file whose only receipt was not accepted",
            |r| r.stages[0].coverage = Some(CoverageComparison::default()),
            "ratelimit/bucket.py is listed as reviewed, but no lane's accepted receipts",
        ),
        (
            "a reviewed file no stage was assigned",
            |r| {
                r.stages[0]
                    .assigned_paths
                    .retain(|p| p != "ratelimit/bucket.py")
            },
            "ratelimit/bucket.py is listed as reviewed, but no lane's accepted receipts",
        ),
        (
            "a file's hunks emptied",
            |r| r.changed_files[1].hunks.clear(),
            "the change's counts (hunks, added or removed lines) are not those of its changed files",
        ),
        (
            "a verifier's record given a lane",
            |r| r.stages[1].lane = Some("verifier".into()),
            "verifier is a verifier's record but names a lane",
        ),
        (
            "a changed file's record removed",
            |r| {
                r.changed_files.pop();
            },
            "2 changed file(s) recorded, but the change has 3",
        ),
        (
            "a reviewed file left off the list its records show was reviewed",
            |r| {
                let gone = r.files_reviewed.remove(0);
                r.files_not_reviewed.push(vouch_core::NotReviewedFile {
                    path: gone,
                    reason: vouch_core::NotReviewedReason::NotFullySeen,
                    detail: "edited".into(),
                });
            },
            "was reviewed by the stages' records but is not listed as reviewed",
        ),
        (
            "uncited",
            |r| r.findings[0].citations.clear(),
            "cites no source",
        ),
        (
            "cited outside the verifier's ledger",
            |r| r.findings[0].citations[0].end_line = 900,
            "which no verifier stage read",
        ),
        (
            "cited in a file no verifier read",
            |r| r.findings[0].citations[0].path = "notes.txt".into(),
            "which no verifier stage read",
        ),
        (
            "cited only in a lane's ledger",
            |r| r.stages.retain(|s| s.role != Role::Verifier),
            "which no verifier stage read",
        ),
        (
            "without a verified candidate",
            |r| r.candidates[0].verdict = Some(Verdict::Rejected),
            "no verified candidate record holds",
        ),
        (
            "naming no candidate",
            |r| r.findings[0].provenance.candidate_ids.clear(),
            "names no candidate",
        ),
        (
            "clean with a finding",
            |r| {
                r.limitations.clear();
                r.excluded_files.clear();
                r.files_not_reviewed.clear();
                r.opinion.clean = true;
            },
            "a clean opinion with 1 finding(s)",
        ),
        (
            "clean without the audit's record",
            |r| {
                clean(r);
                r.stages.retain(|s| s.role != Role::CleanResultAudit);
            },
            "no clean-result audit record is accepted",
        ),
        (
            "clean with an undecided candidate",
            |r| {
                clean(r);
                r.candidates = report(false).candidates;
            },
            "1 candidate(s) unresolved or undecided",
        ),
        (
            "reviewed and not reviewed",
            |r| r.files_reviewed.push("Cargo.lock".into()),
            "listed both as reviewed and as not reviewed",
        ),
        (
            "findings dropped",
            |r| r.findings.clear(),
            "publishes findings, with none",
        ),
        (
            "a verified candidate left out",
            |r| {
                let mut other = r.candidates[0].clone();
                other.candidate.id = "generic-investigator #1/1".into();
                r.candidates.push(other);
            },
            "is in no published finding",
        ),
        (
            "a finding repeated",
            |r| r.findings.push(r.findings[0].clone()),
            "repeats an earlier one",
        ),
        (
            "a finding moved to another file",
            |r| r.findings[0].path = "tests/test_bucket.py".into(),
            "is not at its candidate",
        ),
        (
            "a finding more severe than its candidate",
            |r| r.findings[0].severity = Severity::Critical,
            "more severe (critical)",
        ),
        (
            "a finding with an empty claim",
            |r| r.findings[0].claim = " ".into(),
            "has an empty claim",
        ),
        (
            "a finding on lines no verifier read",
            |r| {
                r.findings[0].start_line = 200;
                r.findings[0].end_line = 205;
            },
            "lies on lines no verifier stage read",
        ),
        (
            "a finding far from its candidate",
            |r| {
                r.findings[0].start_line = 1;
                r.findings[0].end_line = 2;
            },
            "lies more than 10 lines from its candidates' lines 88-96",
        ),
        (
            "a finding in another area than its candidate",
            |r| r.findings[0].area = Area::Security,
            "is not in its candidates' area",
        ),
        (
            "a finding whose verifier is a lane",
            |r| r.findings[0].provenance.verified_by = "generic-investigator #1".into(),
            "which is no verifier stage of the report",
        ),
        (
            "a file left out of both lists",
            |r| {
                r.files_reviewed.pop();
            },
            "2 file(s) listed as reviewed or not reviewed, but the change has 3",
        ),
        (
            "a clean report listing no file",
            |r| {
                clean(r);
                r.files_reviewed.clear();
            },
            "0 file(s) listed",
        ),
        (
            "reviewed outside the canonical list",
            |r| r.files_reviewed.push("src/other.rs".into()),
            "not in the canonical list",
        ),
    ];
    let mut base = report(true);
    check_report(&mut base).expect("the unedited report keeps its evidence");
    let mut audited = report(true);
    clean(&mut audited);
    check_report(&mut audited).expect("a clean report resting on an accepted audit");
    for (name, edit, want) in cases {
        let mut r = report(true);
        edit(&mut r);
        let err = check_report(&mut r).expect_err(name).to_string();
        assert!(err.contains(want), "{name}: {err}");
    }
}

/// A saved report's text is read strictly: a byte-order mark, a key repeated within an
/// object (a parser would keep its last value silently), another schema version or no
/// JSON at all is refused, naming what is wrong; the report as written reads back.
#[test]
fn a_saved_report_text_is_read_strictly() {
    let text = render(&report(true), Format::Json);
    assert_eq!(vouch_report::read_report_text(&text).unwrap(), report(true));
    let repeated = text.replacen(
        "\"outcome\": \"findings\",",
        "\"outcome\": \"incomplete\", \"outcome\": \"findings\",",
        1,
    );
    assert_ne!(repeated, text);
    let cases = [
        (format!("\u{feff}{text}"), "byte-order mark"),
        (repeated, "the key `outcome` appears twice in one object"),
        (
            text.replace(REPORT_SCHEMA_VERSION, "vouch.review-report/0"),
            "schemaVersion is `vouch.review-report/0`",
        ),
        // A report of the vouch before changedFiles: refused by its version, with what
        // to do, never read and judged by evidence it cannot carry.
        (
            text.replace(REPORT_SCHEMA_VERSION, "vouch.review-report/1"),
            "a report of another vouch version, or no vouch review report; write it again",
        ),
        ("not json".to_string(), "it is not JSON"),
    ];
    for (input, want) in cases {
        let err = vouch_report::read_report_text(&input)
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
}

/// A stage that did not run says why in the Markdown stage table.
#[test]
fn a_skipped_stage_says_why_in_markdown() {
    let mut r = report(false);
    let mut skipped = stage("generic-investigator #1 [shard 2/2]", Role::Investigator);
    skipped.status = StageStatus::Skipped;
    skipped.coverage = None;
    skipped.problem =
        Some("not started: bug-review #2 failed, so the review cannot complete".into());
    r.stages.push(skipped);
    let md = render(&r, Format::Markdown);
    assert!(
        md.contains(
            r"| skipped (not started: bug-review \#2 failed, so the review cannot complete) |"
        ),
        "{md}"
    );
}

#[test]
fn markdown_says_which_token_counts_vouch_estimated() {
    let mut r = report(false);
    let md = render(&r, Format::Markdown);
    assert!(
        md.contains("Model usage: 4 request(s), 6000 prompt and 800 completion token(s).\n"),
        "{md}"
    );
    r.usage.unreported_replies = 2;
    r.usage.estimated_tokens = 5000;
    let md = render(&r, Format::Markdown);
    assert!(
        md.contains(
            "6000 prompt and 800 completion token(s) as the endpoint reported them; 2 repl(ies) \
             reported no token counts, estimated by vouch at 5000 token(s) (counted against \
             token budgets).\n"
        ),
        "{md}"
    );
}

#[test]
fn every_verified_claim_and_each_proposed_wording_is_shown() {
    let mut r = report(true);
    r.findings[0].claim = "acquire() returns True late".into();
    r.findings[0].also_verified.push(vouch_core::AlsoVerified {
        claim: "the sleep ignores <b>the</b> deadline".into(),
        severity: Severity::Low,
        start_line: 94,
        end_line: 94,
    });
    let md = render(&r, Format::Markdown);
    assert!(
        md.contains(
            r"Also verified here: \[low\] lines 94-94: the sleep ignores \<b\>the\</b\> deadline"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "Proposed by generic-investigator \\#1 as: acquire() can return True after its timeout"
        ),
        "{md}"
    );
    let sarif = render(&r, Format::Sarif);
    assert!(
        sarif.contains(
            "acquire() returns True late Also verified here (low, lines 94-94): the sleep ignores"
        ),
        "{sarif}"
    );
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

/// A web address in text a model wrote is never a live link where the report is posted
/// (GitHub's and GitLab's autolinking reads `scheme://` and a leading `www.`): their `:`
/// and `.` are escaped, so it renders as the same text. Other colons and dots stay.
#[test]
fn web_addresses_in_untrusted_text_stay_text() {
    for (raw, escaped) in [
        (
            "see https://evil.example/phish now",
            r"see https\://evil.example/phish now",
        ),
        ("HTTP://X.Y and ftp://a.b", r"HTTP\://X.Y and ftp\://a.b"),
        ("or www.evil.example/x", r"or www\.evil.example/x"),
        ("WWW.x.com", r"WWW\.x.com"),
        ("awww.example stays", "awww.example stays"),
        ("ratio 3:2, a.b, note: www", "ratio 3:2, a.b, note: www"),
        ("héwww.x ùwww.y", r"héwww.x ùwww.y"),
        (
            "mailto:a@evil.example or b@evil.example",
            "mailto:a\\@\u{200B}evil.example or b\\@\u{200B}evil.example",
        ),
    ] {
        assert_eq!(vouch_report::escape_inline(raw), escaped, "{raw}");
    }
    let mut r = report(true);
    r.findings[0].claim = "see [docs](https://evil.example/phish) or www.evil.example".into();
    let md = render(&r, Format::Markdown);
    assert!(
        md.contains(r"\[docs\](https\://evil.example/phish) or www\.evil.example"),
        "{md}"
    );
}

/// Block openers at the start of untrusted text are escaped, and so are a forge's own
/// references anywhere in it: where the report is posted, text a model wrote neither
/// mentions anyone (`@admin`) nor links an issue (`#12`); rendered, it reads the same.
#[test]
fn block_openers_at_the_start_of_untrusted_text_are_escaped() {
    let mut r = report(true);
    for (claim, rendered) in [
        ("# heading", r"Claim: \# heading"),
        ("1. item", r"Claim: 1\. item"),
        ("- item", r"Claim: \- item"),
        (
            "issue #12 stays readable",
            r"Claim: issue \#12 stays readable",
        ),
        (
            "ping @admin and @org/team",
            "Claim: ping \\@\u{200B}admin and \\@\u{200B}org/team",
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
    // Without a remote, SARIF names no repository: never the runner's local path.
    r.remote_url = None;
    let sarif = render_sarif(&r);
    assert!(sarif["runs"][0].get("versionControlProvenance").is_none());
    assert!(!sarif.to_string().contains("/src/ratelimit"), "{sarif:#}");
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

fn many(r: &mut ReviewReport, findings: usize, candidates: usize, claim_len: usize) {
    let base = r.findings[0].clone();
    r.findings = (0..findings)
        .map(|i| {
            let mut f = base.clone();
            f.claim = format!("finding {i}: {}", "x".repeat(claim_len));
            f
        })
        .collect();
    let c = r.candidates[0].clone();
    r.candidates = (0..candidates)
        .map(|i| {
            let mut c = c.clone();
            c.candidate.id = format!("lane/{i}");
            c
        })
        .collect();
}

#[test]
fn a_comment_has_the_marker_and_is_cut_to_the_cap_at_whole_items_with_a_note() {
    let mut r = report(true);
    many(&mut r, 200, 400, 900);
    let options = MarkdownOptions {
        full_report: Some("https://ci.example/run/7/artifacts/vouch-report.json".into()),
        ..MarkdownOptions::comment()
    };
    let md = render_markdown_with(&r, &options);
    assert!(
        md.chars().count() <= COMMENT_MAX_CHARS,
        "{}",
        md.chars().count()
    );
    assert_eq!(md.lines().next(), Some(comment_marker("summary").as_str()));
    assert_eq!(comment_marker("summary"), "<!-- vouch:summary -->");
    assert!(
        md.contains("# vouch review: Verified findings"),
        "the heading stays"
    );
    let shown = md.matches("\n### ").count();
    assert!(shown > 10 && shown < 200, "{shown} findings shown");
    // Every shown finding is whole: its provenance line follows it.
    assert_eq!(md.matches("Proposed by ").count(), shown);
    let note = md
        .lines()
        .rev()
        .find(|l| l.contains("was cut"))
        .expect("a cut note");
    assert!(
        note.contains(&format!("{} of 200 findings", 200 - shown))
            && note.contains("of 400 candidates")
            && note.contains("https://ci.example/run/7/artifacts/vouch-report.json"),
        "{note}"
    );
    // Uncapped, nothing is cut.
    let full = render_markdown_with(&r, &MarkdownOptions::default());
    assert_eq!(full.matches("\n### ").count(), 200);
    assert!(!full.contains("was cut"));
}

#[test]
fn long_lists_are_collapsible_and_quoted_code_renders_as_code() {
    let mut r = report(true);
    many(&mut r, 1, 15, 10);
    r.limitations[0].detail = "a `x` quoted and a dangling ` one".into();
    let md = render(&r, Format::Markdown);
    assert!(
        md.contains("<details><summary>15 candidates</summary>\n\n- `lane/0`"),
        "{md}"
    );
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
    assert!(md.contains(r"a `x` quoted and a dangling \` one"), "{md}");
    // Short lists stay plain.
    assert!(!md.contains("coverage limitations</summary>"), "{md}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever the report holds, a capped document fits its cap, starts with the
    /// marker, and the marker key cannot close the hidden comment early.
    #[test]
    fn capped_markdown_always_fits(
        claim in proptest::string::string_regex("(.|\n){0,3000}").unwrap(),
        key in ".{0,40}",
        findings in 0usize..60,
        candidates in 0usize..120,
        cap in 1_500usize..60_000,
    ) {
        let mut r = report(true);
        many(&mut r, findings.max(1), candidates, 0);
        for f in &mut r.findings {
            f.claim = claim.clone();
            f.evidence = claim.clone();
        }
        r.messages = vec![claim.clone()];
        let options = MarkdownOptions { marker: Some(key.clone()), max_chars: Some(cap), full_report: Some(claim.clone()) };
        let md = render_markdown_with(&r, &options);
        proptest::prop_assert!(md.chars().count() <= cap, "{} > {cap}", md.chars().count());
        let marker = comment_marker(&key);
        proptest::prop_assert!(md.starts_with(&marker));
        proptest::prop_assert_eq!(marker.matches("-->").count(), 1);
        proptest::prop_assert!(marker.ends_with(" -->"));
    }
}

/// An extra check `.ci/run` runs only where a folder of official schema copies exists
/// (`VOUCH_OFFICIAL_SCHEMAS`, holding `sarif-schema-2.1.0.json` and
/// `rdjson/DiagnosticResult.json`): the documents also satisfy those copies. Ignored by
/// default, since a fresh clone has no such folder; it fails when run without it.
#[test]
#[ignore = "needs VOUCH_OFFICIAL_SCHEMAS; run by .ci/run when the folder exists"]
fn documents_satisfy_the_official_schema_copies() {
    let dir = std::env::var("VOUCH_OFFICIAL_SCHEMAS")
        .expect("VOUCH_OFFICIAL_SCHEMAS names the folder of official schema copies");
    let load = |relative: &str| -> Value {
        let path = Path::new(&dir).join(relative);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        serde_json::from_str(&text).expect("schema JSON")
    };
    let sarif = load("sarif-schema-2.1.0.json");
    let rdjson = load("rdjson/DiagnosticResult.json");
    let failure = RunFailure::new(FailureClass::Internal, "boom");
    for with_finding in [true, false] {
        let r = report(with_finding);
        assert_valid(&sarif, &render_sarif(&r), "SARIF");
        assert_valid(&rdjson, &render_rdjson(&r), "rdjson");
    }
    assert_valid(
        &sarif,
        &vouch_report::render_sarif_failure(&failure),
        "failure SARIF",
    );
    assert_valid(
        &rdjson,
        &vouch_report::render_rdjson_failure(&failure),
        "failure rdjson",
    );
}

/// A review with full coverage carries no notice in any issue-listing format; one with
/// limited coverage carries one in each, so none of them reads as "no issues".
#[test]
fn only_limited_or_unfinished_reviews_carry_a_notice_in_every_issue_format() {
    let mut full = report(true);
    full.opinion.coverage = Some(vouch_core::CoverageLevel::Full);
    let limited = report(true);
    let notices = |r: &ReviewReport| {
        let sarif = render_sarif(r);
        let sarif = sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["ruleId"] == "vouch/limited-coverage")
            .count();
        let cq = vouch_report::render_codequality(r);
        let cq = cq
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["check_name"] == "vouch/limited-coverage")
            .count();
        let rd = render_rdjson(r);
        let rd = rd["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["code"]["value"] == "vouch/limited-coverage")
            .count();
        (sarif, cq, rd)
    };
    assert_eq!(notices(&full), (0, 0, 0));
    assert_eq!(notices(&limited), (1, 1, 1));
    // Full coverage, no verified finding, yet not clean (no audit ran): a notice of its
    // own in each format, naming why; a clean review carries none.
    let not_clean_notices = |r: &ReviewReport| {
        let check = "vouch/not-a-clean-opinion";
        let sarif = render_sarif(r);
        let sarif: Vec<String> = sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["ruleId"] == check)
            .map(|x| x["message"]["text"].as_str().unwrap().to_string())
            .collect();
        let cq = vouch_report::render_codequality(r);
        let cq = cq
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["check_name"] == check)
            .count();
        let rd = render_rdjson(r);
        let rd = rd["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["code"]["value"] == check)
            .count();
        (sarif, cq, rd)
    };
    let mut unaudited = report(false);
    unaudited.findings.clear();
    unaudited.opinion.outcome = vouch_core::Outcome::NoFindings;
    unaudited.opinion.coverage = Some(vouch_core::CoverageLevel::Full);
    unaudited.opinion.clean = false;
    unaudited.opinion.not_clean_because = vec!["no clean-result audit ran".into()];
    let (sarif, cq, rd) = not_clean_notices(&unaudited);
    assert_eq!((sarif.len(), cq, rd), (1, 1, 1));
    assert!(sarif[0].contains("no clean-result audit ran"), "{sarif:?}");
    let mut clean = unaudited.clone();
    clean.opinion.clean = true;
    clean.opinion.not_clean_because.clear();
    assert_eq!(not_clean_notices(&clean), (vec![], 0, 0));
    // A range that changes nothing reviewed nothing: never an empty document either.
    let mut nothing = unaudited.clone();
    nothing.opinion.outcome = vouch_core::Outcome::NothingToReview;
    nothing.opinion.coverage = None;
    nothing.opinion.not_clean_because = vec!["the range changes nothing".into()];
    let (sarif, cq, rd) = not_clean_notices(&nothing);
    assert_eq!((sarif.len(), cq, rd), (1, 1, 1));
    assert!(sarif[0].contains("the range changes nothing"), "{sarif:?}");
    assert_eq!(
        notices(&unaudited),
        (0, 0, 0),
        "not a limited-coverage notice"
    );
    // On the first file not reviewed, unless it is deleted at head (no line to show it
    // on): then the first changed file that is there.
    let placed = |r: &ReviewReport| {
        let cq = vouch_report::render_codequality(r);
        cq.as_array()
            .unwrap()
            .iter()
            .find(|x| x["check_name"] == "vouch/limited-coverage")
            .map(|x| x["location"]["path"].clone())
            .unwrap()
    };
    assert_eq!(placed(&limited), "Cargo.lock");
    let mut deleted = report(true);
    deleted.changed_files[0].status = vouch_core::FileStatus::Deleted;
    assert_eq!(deleted.changed_files[0].path, "Cargo.lock");
    assert_eq!(placed(&deleted), "ratelimit/bucket.py");
    // Nor on a binary file while a text file can take it.
    let mut binary = report(true);
    binary.changed_files[0].binary = true;
    assert_eq!(placed(&binary), "ratelimit/bucket.py");
    binary.files_not_reviewed.clear();
    binary.expected_files.insert(0, "Cargo.lock".into());
    assert_eq!(placed(&binary), "ratelimit/bucket.py");
}

/// A review that completed without a verified finding but with limited coverage (one
/// changed file excluded): its opinion and summary derived from its records.
fn limited_report() -> ReviewReport {
    let mut r = report(true);
    r.findings.clear();
    r.candidates[0].verdict = Some(Verdict::Rejected);
    let facts = ReviewFacts {
        change_is_empty: false,
        aborted: false,
        failures: vec![],
        limitations: r.limitations.clone(),
        verified_findings: 0,
        unresolved_candidates: 0,
        undecided_candidates: 0,
        audit: AuditState::NotNeeded,
    };
    r.opinion = derive_opinion(&facts);
    r.summary = vouch_report::summary_line(&r);
    r.final_report =
        vouch_report::embedded_final_report(&r, "vouch review --repo /src/ratelimit").unwrap();
    r
}

/// A review with two verified findings, one on changed lines and one on removed
/// lines, whose model-written text tries raw HTML, a mention and an issue link.
fn findings_report() -> ReviewReport {
    let mut r = report(true);
    r.findings[0].claim =
        "acquire() can return True after its timeout <img src=x onerror=alert(1)>".into();
    r.findings[0].evidence =
        "line 90 checks the deadline before the sleep on line 94; cc @admin, see #123".into();
    let mut removed = r.findings[0].clone();
    removed.revision = Revision::Base;
    removed.citations[0].revision = Revision::Base;
    removed.start_line = 40;
    removed.end_line = 44;
    removed.citations[0].start_line = 40;
    removed.citations[0].end_line = 44;
    removed.severity = Severity::Medium;
    removed.claim = "the removed refill() call leaves the bucket empty for good".into();
    removed.evidence = "<details><summary>raw</summary>model text</details>".into();
    removed.provenance.candidate_ids = vec!["generic-investigator #1/1".into()];
    r.findings.push(removed);
    let mut candidate = r.candidates[0].clone();
    candidate.candidate.id = "generic-investigator #1/1".into();
    candidate.candidate.claim = r.findings[1].claim.clone();
    candidate.candidate.revision = Revision::Base;
    candidate.candidate.start_line = 40;
    candidate.candidate.end_line = 44;
    candidate.candidate.severity = Severity::Medium;
    r.candidates.push(candidate);
    // The verifier read the removed lines it cites.
    r.stages[1].ledger.push(FileLines {
        revision: Revision::Base,
        path: "ratelimit/bucket.py".into(),
        lines: vec![(40, 44)],
    });
    // More than five citations fold into `<details>` in the comment.
    r.findings[0].citations = (0..6)
        .map(|i| window("ratelimit/bucket.py", 88 + i, 94 + i))
        .collect();
    r.summary = vouch_report::summary_line(&r);
    r.final_report =
        vouch_report::embedded_final_report(&r, "vouch review --repo /src/ratelimit").unwrap();
    r
}

/// Writes the documents that real consumers read (SARIF for code scanning, the
/// pull-request comment's Markdown) into `$VOUCH_CONSUMER_DOCS`, after checking each
/// report's own consistency; `scripts/check-consumers` then runs the real tools on them.
#[test]
#[ignore = "run by scripts/check-consumers, which sets VOUCH_CONSUMER_DOCS"]
fn write_documents_for_real_consumers() {
    let dir = std::path::PathBuf::from(
        std::env::var("VOUCH_CONSUMER_DOCS").expect("VOUCH_CONSUMER_DOCS names the folder"),
    );
    std::fs::create_dir_all(&dir).unwrap();
    let reviews = [
        ("findings", findings_report()),
        ("limited", limited_report()),
        ("incomplete", report(false)),
    ];
    for (name, mut review) in reviews {
        check_report(&mut review).unwrap_or_else(|e| panic!("{name}: {e}"));
        let sarif = render_sarif(&review);
        assert_valid(&sarif_schema(), &sarif, name);
        let text = serde_json::to_string_pretty(&sarif).unwrap();
        std::fs::write(dir.join(format!("{name}.sarif")), text).unwrap();
        let comment = render_markdown_with(&review, &MarkdownOptions::comment());
        std::fs::write(dir.join(format!("{name}.comment.md")), comment).unwrap();
    }
    assert_eq!(limited_report().opinion.outcome, Outcome::NoFindings);
    let failure = RunFailure::new(
        FailureClass::Usage,
        "no model endpoint is configured: set OPENAI_BASE_URL",
    );
    let failure_sarif = render_failure(&failure, Format::Sarif);
    std::fs::write(dir.join("failure.sarif"), failure_sarif).unwrap();
}
