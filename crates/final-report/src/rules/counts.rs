//! Rules about test counts: pass and full-suite claims (7), pre-existing failures
//! (14).

use super::{Ctx, recorded};
use crate::model::{IgnoredTests, TestCounts, ValidationStatus};
use crate::narrative::ClaimKind;
use crate::violation::{Violation, ViolationCode};

/// What recorded counts say against a pass claim: nothing passed, failures, or skipped
/// and ignored tests that `validation.ignored` does not all name.
fn count_problems(ctx: &Ctx, counts: &TestCounts, source: &str) -> Vec<Violation> {
    let code = ViolationCode::FullSuiteClaimUnproven;
    let mut out = Vec::new();
    if counts.passed == 0 {
        out.push(Violation::new(
            code,
            "/validation/counts/passed",
            format!("{source} but no test executed and passed (counts: passed 0, failed {}, skipped {}, ignored {})", counts.failed, counts.skipped, counts.ignored),
        ));
    }
    if counts.failed > 0 {
        out.push(Violation::new(
            code,
            "/validation/counts/failed",
            format!("{source} but {} tests failed", counts.failed),
        ));
    }
    let not_run = counts.skipped + counts.ignored;
    let listed: Vec<IgnoredTests> = ctx.get("/validation/ignored").unwrap_or_default();
    let listed_count: u64 = listed.iter().map(|x| x.count).sum();
    if not_run > 0 && listed_count != not_run {
        out.push(Violation::new(
            code,
            "/validation/ignored",
            format!(
                "{source} but {} skipped and {} ignored tests are not all named: validation.ignored accounts for {listed_count} of {not_run}",
                counts.skipped, counts.ignored
            ),
        ));
    }
    out
}

/// Rule 7. "\"Full suite passed\" rejected when tests were ignored or skipped, unless
/// the report says exactly what was ignored."
///
/// A pass claim is `validation.status: passed`, `validation.fullSuitePassed`, or a pass
/// phrase ("all tests passed", "all checks succeeded", "green", ...) in the narrative
/// or any handoff text. Every pass claim needs counts with at least one executed test,
/// no failures, and `validation.ignored` counts adding up to `skipped + ignored`; a
/// claim in words also needs `status: passed`. With a transcript, the counts and exit
/// codes the official validation commands recorded must agree.
pub(super) fn full_suite_claim_proven(ctx: &Ctx) -> Vec<Violation> {
    let handoff_claim = handoff_pass_claim(ctx);
    let narrative = ctx.narrative.claim(ClaimKind::FullSuitePassed);
    let status = ctx.get::<ValidationStatus>("/validation/status");
    let worded =
        ctx.flag("/validation/fullSuitePassed") || narrative.is_some() || handoff_claim.is_some();
    if !worded && status != Some(ValidationStatus::Passed) {
        return Vec::new();
    }
    let code = ViolationCode::FullSuiteClaimUnproven;
    let source = narrative
        .map(|h| format!("the narrative says \"{}\"", h.sentence))
        .or(handoff_claim)
        .unwrap_or_else(|| {
            if ctx.flag("/validation/fullSuitePassed") {
                "validation.fullSuitePassed is true".to_owned()
            } else {
                "validation.status is `passed`".to_owned()
            }
        });
    let mut out = Vec::new();
    if worded && status != Some(ValidationStatus::Passed) {
        out.push(Violation::new(
            code,
            "/validation/status",
            format!("{source} but validation did not pass"),
        ));
    }
    let Some(counts) = ctx.get::<TestCounts>("/validation/counts") else {
        if worded {
            // Counts that are there but not whole non-negative numbers are rule 1's
            // `INVALID_FIELD`; this rule says they cannot prove the claim.
            let recorded = ctx
                .report
                .pointer("/validation/counts")
                .is_some_and(|v| !v.is_null());
            let why = if recorded {
                "the recorded test counts are not whole non-negative numbers"
            } else {
                "no test counts are recorded"
            };
            out.push(Violation::new(
                code,
                "/validation/counts",
                format!("{source} but {why}"),
            ));
        }
        return out;
    };
    out.extend(count_problems(ctx, &counts, &source));
    out.extend(transcript_counts(ctx, &counts, &source));
    out.extend(recorded::official_lines(ctx, &source, worded));
    out
}

/// The first pass claim in the handoff's text (any string in it), as a message source.
fn handoff_pass_claim(ctx: &Ctx) -> Option<String> {
    let handoff = ctx.report.get("handoff")?;
    let mut found = None;
    walk_strings(handoff, "/handoff", &mut |pointer, text| {
        if found.is_none()
            && let Some(hit) =
                crate::narrative::Narrative::parse(text).claim(ClaimKind::FullSuitePassed)
        {
            found = Some(format!("{pointer} says \"{}\"", hit.sentence));
        }
    });
    found
}

/// Visit every string in a JSON value with its pointer.
pub(super) fn walk_strings(
    value: &serde_json::Value,
    pointer: &str,
    visit: &mut dyn FnMut(&str, &str),
) {
    match value {
        serde_json::Value::String(s) => visit(pointer, s),
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk_strings(v, &format!("{pointer}/{i}"), visit);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                walk_strings(
                    v,
                    &format!("{pointer}/{}", crate::violation::escape_token(k)),
                    visit,
                );
            }
        }
        _ => {}
    }
}

/// With a transcript: the official validation commands' recorded counts (summed) must
/// equal `validation.counts`, and none may have exited non-zero.
fn transcript_counts(ctx: &Ctx, counts: &TestCounts, source: &str) -> Vec<Violation> {
    let Some(model) = &ctx.model else {
        return Vec::new();
    };
    let official = ctx.official_seqs();
    let runs: Vec<_> = model
        .tests
        .iter()
        .filter(|r| official.contains(&r.seq))
        .collect();
    let mut out = Vec::new();
    if let Some(failed) = runs.iter().find(|r| r.exit_code.is_some_and(|c| c != 0)) {
        out.push(Violation::new(
            ViolationCode::FullSuiteClaimUnproven,
            "/validation/status",
            format!(
                "{source} but official validation `{}` exited {} (transcript seq {})",
                failed.command,
                failed.exit_code.unwrap_or_default(),
                failed.seq
            ),
        ));
    }
    let recorded: Vec<TestCounts> = runs.iter().filter_map(|r| r.counts).collect();
    if recorded.is_empty() {
        return out;
    }
    let sum = recorded.iter().fold(
        TestCounts {
            passed: 0,
            failed: 0,
            skipped: 0,
            ignored: 0,
        },
        |a, c| TestCounts {
            passed: a.passed + c.passed,
            failed: a.failed + c.failed,
            skipped: a.skipped + c.skipped,
            ignored: a.ignored + c.ignored,
        },
    );
    if sum != *counts {
        out.push(Violation::new(
            ViolationCode::FullSuiteClaimUnproven,
            "/validation/counts",
            format!(
                "validation.counts (passed {}, failed {}, skipped {}, ignored {}) differ from what the official validation output in the transcript shows (passed {}, failed {}, skipped {}, ignored {})",
                counts.passed, counts.failed, counts.skipped, counts.ignored, sum.passed, sum.failed, sum.skipped, sum.ignored
            ),
        ));
    }
    out
}

/// Rule 14. "\"Failure is pre-existing / same as master\" is rejected when baseline and
/// PR test counts differ without an explanation."
///
/// The claim (`validation.failuresPreExisting` or the narrative) needs baseline counts;
/// counts that differ need `validation.baseline.explanation`.
pub(super) fn baseline_mismatch_explained(ctx: &Ctx) -> Vec<Violation> {
    let narrative = ctx.narrative.claim(ClaimKind::FailurePreExisting);
    if !ctx.flag("/validation/failuresPreExisting") && narrative.is_none() {
        return Vec::new();
    }
    let code = ViolationCode::BaselineMismatchUnexplained;
    let source = narrative
        .map(|h| format!("the narrative says \"{}\"", h.sentence))
        .unwrap_or_else(|| "validation.failuresPreExisting is true".to_owned());
    let Some(baseline) = ctx.get::<TestCounts>("/validation/baseline/counts") else {
        return vec![Violation::new(
            code,
            "/validation/baseline",
            format!("{source} but no baseline counts are recorded"),
        )];
    };
    let Some(counts) = ctx.get::<TestCounts>("/validation/counts") else {
        return vec![Violation::new(
            code,
            "/validation/counts",
            format!("{source} but the PR run has no counts"),
        )];
    };
    if baseline != counts && ctx.text("/validation/baseline/explanation").is_none() {
        return vec![Violation::new(
            code,
            "/validation/baseline/explanation",
            format!(
                "{source} but baseline counts (passed {}, failed {}, skipped {}, ignored {}) differ from the PR run (passed {}, failed {}, skipped {}, ignored {}) and no explanation is given",
                baseline.passed,
                baseline.failed,
                baseline.skipped,
                baseline.ignored,
                counts.passed,
                counts.failed,
                counts.skipped,
                counts.ignored
            ),
        )];
    }
    Vec::new()
}
