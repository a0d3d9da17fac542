//! Phases 5 and 6 of a review: verification of the candidates that pass intake, then the
//! facts (merge, files reviewed, opinion) and the run's record.

use vouch_core::{
    AuditRun, AuditState, Candidate, CandidateRecord, Limitation, LimitationKind,
    NotReviewedReason, ReviewFacts, TokenUsage, Verdict, audit_state, derive_opinion,
    files_reviewed_from_records, merge_findings,
};

use super::env::ReviewEnv;
use super::intake::intake;
use super::lanes::Collected;
use super::partition::{Partition, plan_for};
use super::verify::{VerificationRun, verify};
use super::{ReviewPlan, ReviewRun};
use crate::diagnostics::ReasonCode;
use crate::progress::ProgressEvent;

/// A verification that did not run: every candidate undecided.
pub(super) fn not_verified(candidates: &[Candidate]) -> VerificationRun {
    VerificationRun {
        records: vec![],
        candidates: candidates
            .iter()
            .map(|c| CandidateRecord {
                candidate: c.clone(),
                verdict: None,
                evidence: String::new(),
                verification_passes: 0,
                problem: Some("not verified: the review did not complete".into()),
            })
            .collect(),
        findings: vec![],
        failures: vec![],
        limitations: vec![],
        cancelled: false,
    }
}

/// Verifies, in one pass, every candidate that passes intake — unless something failed
/// or the run was cancelled, when every candidate stays undecided. An audit that passed
/// but whose candidates were verified found defects.
pub(super) async fn run_verification(
    env: &std::sync::Arc<ReviewEnv>,
    plan: &ReviewPlan,
    part: &Partition,
    out: &mut Collected,
    audit: &mut AuditState,
) -> VerificationRun {
    if !out.may_continue(env) {
        return not_verified(&out.candidates);
    }
    let candidates = std::mem::take(&mut out.candidates);
    let excluded = part.excluded_paths(&env.inputs.snapshot);
    let notes = (&mut out.limitations, &mut out.observations);
    let candidates = intake(env, candidates, &excluded, notes);
    let verifier = plan_for(env, &plan.verifier, part.expected.clone());
    let mut run = verify(
        env,
        &verifier,
        &candidates,
        &out.dismissed,
        plan.concurrency,
    )
    .await;
    let model = env.model_name(verifier.model.as_deref()).to_string();
    for record in &mut run.records {
        record.model = Some(model.clone());
    }
    if *audit == AuditState::Passed {
        // Only the audit proposed candidates: what verification kept is its finding.
        *audit = audit_state(0, AuditRun::Accepted, run.findings.len());
    }
    run
}

/// Rule ([`files_reviewed_from_records`]): the candidate stages' accepted, seen files are
/// the files reviewed, derived from their records as a saved report's check derives them; every other changed file is listed with its reason. A file not reviewed
/// always limits coverage (stated once here when no other limitation or failure says so).
fn reviewed_files(
    env: &ReviewEnv,
    part: &Partition,
    out: &mut Collected,
) -> vouch_core::FilesReviewed {
    let files = files_reviewed_from_records(
        &env.inputs.snapshot.files,
        &part.set_aside,
        &out.left_out,
        &out.stages,
    );
    let unseen = files
        .not_reviewed
        .iter()
        .filter(|f| {
            matches!(
                f.reason,
                NotReviewedReason::NotFullySeen
                    | NotReviewedReason::StageFailed
                    | NotReviewedReason::OverBudget
            )
        })
        .count();
    if unseen > 0 && out.limitations.is_empty() && out.failures.is_empty() {
        out.limitations.push(Limitation {
            kind: LimitationKind::UnreviewedFiles,
            stage: None,
            detail: format!("{unseen} changed file(s) were not both listed in an accepted receipt and seen in full"),
        });
    }
    files
}

/// Merges verified findings, derives the opinion from the facts and assembles the run's
/// record (findings only when the opinion publishes them).
pub(super) fn finish(
    env: &ReviewEnv,
    part: Partition,
    mut out: Collected,
    audit: AuditState,
    verification: VerificationRun,
) -> ReviewRun {
    let aborted = out.cancelled || verification.cancelled || env.services.cancel.is_cancelled();
    if aborted {
        env.diagnose(None, "report", None, ReasonCode::Cancelled);
    }
    out.limitations
        .splice(0..0, part.limitations.iter().cloned());
    out.observations
        .splice(0..0, part.observations.iter().cloned());
    out.stages.extend(verification.records);
    out.failures.extend(verification.failures);
    out.limitations.extend(verification.limitations);
    let files = reviewed_files(env, &part, &mut out);
    let findings = merge_findings(verification.findings);
    let count = |verdict| {
        verification
            .candidates
            .iter()
            .filter(|c| c.verdict == verdict)
            .count()
    };
    let facts = ReviewFacts {
        change_is_empty: env.inputs.snapshot.is_empty(),
        aborted,
        failures: out.failures.clone(),
        limitations: out.limitations.clone(),
        verified_findings: findings.len(),
        unresolved_candidates: count(Some(Verdict::Unresolved)),
        undecided_candidates: count(None),
        audit,
    };
    let opinion = derive_opinion(&facts);
    let mut usage = TokenUsage::default();
    for s in &out.stages {
        usage.add(s.usage);
    }
    env.progress(ProgressEvent::ReviewFinished {
        outcome: opinion.outcome.as_str().to_string(),
    });
    env.diagnose(None, "report", None, ReasonCode::ReviewFinished);
    let fell_back = fallback_observations(env, &mut out.observations);
    ReviewRun {
        snapshot: env.inputs.snapshot.clone(),
        expected_files: part.expected.clone(),
        excluded_files: part.excluded_files(),
        files_reviewed: files.reviewed,
        files_not_reviewed: files.not_reviewed,
        stages: out.stages,
        candidates: verification.candidates,
        findings: if opinion.publish_findings {
            findings
        } else {
            vec![]
        },
        limitations: out.limitations,
        failures: out.failures,
        messages: out.messages,
        observations: out.observations,
        usage,
        opinion,
        structured_outputs_fell_back: fell_back,
    }
}

/// States the endpoint fallbacks of this run; returns whether structured outputs fell
/// back.
fn fallback_observations(env: &ReviewEnv, observations: &mut Vec<String>) -> bool {
    if let Some(why) = env.tools_dropped() {
        observations.push(why.observation().into());
    }
    let fell_back = env.structured_outputs_fell_back();
    if fell_back {
        env.diagnose(None, "report", None, ReasonCode::StructuredOutputFallback);
        observations.push(
            "the endpoint rejected response_format json_schema; vouch fell back to prompt-only output contracts with extraction and repair"
                .into(),
        );
    }
    fell_back
}
