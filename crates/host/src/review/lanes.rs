//! Phases 3 and 4 of a review: the candidate lanes (concurrently) and the clean-result
//! audit, each stage checked for what it saw of its files.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use vouch_abi::DismissedForVerification;
use vouch_core::{
    AuditRun, AuditState, Candidate, Failure, FailureKind, Limitation, LimitationKind,
    SourceLedger, StageRecord, StageStatus, audit_state, files_not_fully_seen, zero_source_gap,
};

use super::env::ReviewEnv;
use super::partition::{Lane, plan_for};
use super::stage::{StagePlan, StageRun, run_candidate_stage};
use super::{ReviewPlan, StageFiles};
use crate::diagnostics::ReasonCode;

/// What the candidate stages (lanes and audit) recorded.
#[derive(Default)]
pub(super) struct Collected {
    pub stages: Vec<StageRecord>,
    /// Each run candidate stage's label and assigned files (for "files reviewed").
    pub assignments: Vec<StageFiles>,
    pub candidates: Vec<Candidate>,
    pub failures: Vec<Failure>,
    pub limitations: Vec<Limitation>,
    pub messages: Vec<String>,
    pub observations: Vec<String>,
    pub cancelled: bool,
    /// Concerns the candidate stages dismissed (for the verifier, never the audit).
    pub dismissed: Vec<DismissedForVerification>,
}

impl Collected {
    fn absorb(&mut self, run: StageRun, assigned: Vec<String>) {
        if !run.record.summary.is_empty() {
            self.observations
                .push(format!("{}: {}", run.record.label, run.record.summary));
        }
        self.assignments.push(StageFiles {
            label: run.record.label.clone(),
            assigned,
        });
        self.stages.push(run.record);
        self.candidates.extend(run.candidates);
        self.failures.extend(run.failure);
        self.limitations.extend(run.limitations);
        self.observations.extend(run.observations);
        self.messages.extend(run.message);
        self.cancelled |= run.cancelled;
        self.dismissed.extend(run.dismissed);
    }

    /// True when the review may go on: nothing failed and nothing was cancelled.
    pub fn may_continue(&self, env: &ReviewEnv) -> bool {
        self.failures.is_empty() && !self.cancelled && !env.cancel.is_cancelled()
    }
}

/// The source windows of a stage's ledger beyond the policy evidence every stage is
/// given (which says nothing about what it saw of the change).
pub(crate) fn windows_beyond_policy(env: &ReviewEnv, source_windows: usize) -> usize {
    let given = env.policy.iter().filter(|(_, w)| w.is_some()).count();
    source_windows.saturating_sub(given)
}

/// Rule (coverage completion policy, [`zero_source_gap`], [`files_not_fully_seen`]): a
/// stage whose changed files were not all seen line by line records a source lookup gap;
/// one that completed having read or been given no source beyond the policy evidence,
/// while one of its files has text to read, records a source lookup gap (coverage
/// `limited`, stage identity in the diagnostic).
fn check_source_seen(env: &ReviewEnv, run: &mut StageRun, assigned: &[String]) {
    let done = matches!(
        run.record.status,
        StageStatus::Accepted | StageStatus::Limited
    );
    let has_gap = run
        .limitations
        .iter()
        .any(|l| l.kind == LimitationKind::SourceLookupGap);
    if !done || has_gap {
        return;
    }
    let label = run.record.label.clone();
    let ledger = SourceLedger {
        windows: run.record.ledger.clone(),
        spans: run.record.line_spans.clone(),
    };
    let files = || assigned.iter().filter_map(|p| env.snapshot.file(p));
    let beyond_policy = windows_beyond_policy(env, run.record.source_windows);
    let detail = if zero_source_gap(files(), beyond_policy) {
        format!("{label} completed without reading or being given any source of its assigned files")
    } else {
        let unseen = files_not_fully_seen(files(), &ledger);
        if unseen.is_empty() {
            return;
        }
        format!(
            "{label} neither was shown nor read every changed line of {} file(s): {}",
            unseen.len(),
            unseen.join(", ")
        )
    };
    env.diagnose_ledger(Some(&label), "lane", &ledger, ReasonCode::SourceLookupGap);
    run.limitations.push(Limitation {
        kind: LimitationKind::SourceLookupGap,
        stage: Some(label),
        detail,
    });
    run.record.status = StageStatus::Limited;
}

/// Runs one candidate stage instance, checks what it saw and names its model.
async fn run_stage(env: &ReviewEnv, plan: &StagePlan) -> StageRun {
    let mut run = run_candidate_stage(env, plan).await;
    check_source_seen(env, &mut run, &plan.assigned);
    run.record.model = Some(env.model_name(plan.model.as_deref()).to_string());
    run
}

/// Runs the lanes with at most `concurrency` instances at once. Each instance does its
/// own optional coverage retry before it counts as completed; siblings are never rerun.
/// Records are kept in manifest order.
pub(super) async fn run_lanes(
    env: &Arc<ReviewEnv>,
    concurrency: usize,
    lanes: Vec<Lane>,
    out: &mut Collected,
) {
    let semaphore = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut set = JoinSet::new();
    let mut slots: Vec<Option<StageRecord>> = Vec::new();
    for (index, lane) in lanes.into_iter().enumerate() {
        match lane {
            Lane::Skipped(record) => slots.push(Some(*record)),
            Lane::Run(stage_plan) => {
                slots.push(None);
                let env = env.clone();
                let semaphore = semaphore.clone();
                set.spawn(async move {
                    let _permit = semaphore.acquire_owned().await;
                    let run = run_stage(&env, &stage_plan).await;
                    (index, run, stage_plan.assigned)
                });
            }
        }
    }
    let mut runs = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(r) => runs.push(r),
            Err(e) => out.failures.push(Failure {
                kind: FailureKind::PluginError,
                stage: None,
                message: format!("a stage task ended abnormally: {e}"),
            }),
        }
    }
    runs.sort_by_key(|(i, _, _)| *i);
    let mut runs = runs.into_iter().peekable();
    for (index, slot) in slots.into_iter().enumerate() {
        match slot {
            Some(record) => out.stages.push(record),
            None => {
                if let Some((_, run, assigned)) = runs.next_if(|(i, _, _)| *i == index) {
                    out.absorb(run, assigned);
                }
            }
        }
    }
}

/// Rule (design, "Clean-result audit"): the audit runs only when no lane proposed a
/// candidate and nothing failed or was cancelled; it is assigned the whole canonical
/// list. Returns the audit's state (before verification of its candidates).
pub(super) async fn run_audit(
    env: &ReviewEnv,
    plan: &ReviewPlan,
    expected: &[String],
    out: &mut Collected,
) -> AuditState {
    let lane_candidates = out.candidates.len();
    if lane_candidates > 0 {
        if plan.audit.is_some() {
            out.observations.push(format!(
                "the clean-result audit did not run: the lanes proposed {lane_candidates} candidate(s)"
            ));
        }
        return audit_state(lane_candidates, AuditRun::NotStarted, 0);
    }
    let Some(spec) = plan.audit.as_ref().filter(|_| out.may_continue(env)) else {
        return audit_state(0, AuditRun::NotStarted, 0);
    };
    let audit_plan = plan_for(spec, expected.to_vec());
    let run = run_stage(env, &audit_plan).await;
    let ran = if run.failure.is_none() && !run.cancelled {
        AuditRun::Accepted
    } else {
        AuditRun::Failed
    };
    out.absorb(run, audit_plan.assigned);
    audit_state(0, ran, 0)
}
