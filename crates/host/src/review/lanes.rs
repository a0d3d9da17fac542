//! Phases 3 and 4 of a review: the candidate lanes (concurrently) and the clean-result
//! audit, each stage checked for what it saw of its files.

use std::sync::Arc;

use vouch_abi::DismissedForVerification;
use vouch_core::{
    AuditRun, AuditState, Candidate, Failure, FailureKind, Limitation, LimitationKind, StageRecord,
    StageStatus, audit_state, files_not_fully_seen, zero_source_gap,
};

use super::ReviewPlan;
use super::bounded::{NotRun, run_until_failure};
use super::env::{ReviewEnv, ToolsDropped, ToolsMode};
use super::partition::{Lane, plan_for};
use super::shard;
use super::stage::{StagePlan, StageRun, run_candidate_stage};
use crate::diagnostics::ReasonCode;
use crate::progress::ProgressEvent;

/// What the candidate stages (lanes and audit) recorded.
#[derive(Default)]
pub(super) struct Collected {
    /// Every record; a run candidate stage's carries its lane and assigned files (for
    /// "files reviewed").
    pub(crate) stages: Vec<StageRecord>,
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) failures: Vec<Failure>,
    pub(crate) limitations: Vec<Limitation>,
    pub(crate) messages: Vec<String>,
    pub(crate) observations: Vec<String>,
    pub(crate) cancelled: bool,
    /// Concerns the candidate stages dismissed (for the verifier, never the audit).
    pub(crate) dismissed: Vec<DismissedForVerification>,
    /// Patch sizes measured for sharding, shared by every lane and the audit.
    pub(crate) patch_sizes: shard::PatchSizes,
    /// Files a lane left out at `max_shards` (each also named in a limitation).
    pub(crate) left_out: Vec<String>,
}

impl Collected {
    fn absorb(&mut self, mut run: StageRun, lane: String, assigned: Vec<String>) {
        if !run.record.summary.is_empty() {
            self.observations
                .push(format!("{}: {}", run.record.label, run.record.summary));
        }
        run.record.lane = Some(lane);
        run.record.assigned_paths = assigned;
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
    pub(crate) fn may_continue(&self, env: &ReviewEnv) -> bool {
        self.failures.is_empty() && !self.cancelled && !env.services.cancel.is_cancelled()
    }
}

/// The source windows of a stage's ledger beyond the policy evidence every stage is
/// given (which says nothing about what it saw of the change).
pub(crate) fn windows_beyond_policy(env: &ReviewEnv, source_windows: usize) -> usize {
    let given = env
        .inputs
        .policy
        .iter()
        .filter(|(_, w)| w.is_some())
        .count();
    source_windows.saturating_sub(given)
}

/// Rule (coverage completion policy, [`zero_source_gap`], [`files_not_fully_seen`]): a
/// stage whose changed files were not all seen line by line records a source lookup gap;
/// one that completed having read or been given no source beyond the policy evidence,
/// while one of its files has text to read, records a source lookup gap (coverage
/// `limited`, stage identity in the diagnostic).
fn check_source_seen(env: &ReviewEnv, run: &mut StageRun, plan: &StagePlan) {
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
    let held = held_files(env, plan);
    let files = || held.iter();
    let beyond_policy = windows_beyond_policy(env, run.record.source_windows);
    let detail = if zero_source_gap(files(), beyond_policy) {
        format!("{label} completed without reading or being given any source of its assigned files")
    } else {
        let unseen = files_not_fully_seen(files(), &run.record.source_ledger());
        if unseen.is_empty() {
            return;
        }
        format!(
            "{label} neither was shown nor read every changed line of {} file(s): {}",
            unseen.len(),
            unseen.join(", ")
        )
    };
    env.diagnose_record("lane", &run.record, ReasonCode::SourceLookupGap);
    run.limitations.push(Limitation {
        kind: LimitationKind::SourceLookupGap,
        stage: Some(label),
        detail,
    });
    run.record.status = StageStatus::Limited;
}

/// The changed files a stage plan holds, as it holds them: a file split across shards
/// with only this shard's hunks and hunk windows (what this shard must have seen). A
/// split file of which this shard holds only byte windows of long lines is left to the
/// lane's union ([`vouch_core::files_reviewed`]): with no hunk held it would read as a
/// metadata-only file, which it is not.
fn held_files(env: &ReviewEnv, plan: &StagePlan) -> Vec<vouch_core::ChangedFile> {
    plan.assigned
        .iter()
        .filter_map(|p| env.inputs.snapshot.file(p))
        .filter_map(|f| {
            let mut held = f.clone();
            if let Some((_, pieces)) = plan.split.iter().find(|(p, _)| *p == f.path) {
                held.hunks = pieces
                    .iter()
                    .filter_map(|piece| f.hunks.get(piece.hunk).and_then(|h| piece.held(h)))
                    .collect();
                if held.hunks.is_empty() {
                    return None;
                }
            }
            Some(held)
        })
        .collect()
}

/// Runs one candidate stage instance, checks what it saw and names its model.
async fn run_stage(env: &ReviewEnv, plan: &StagePlan) -> StageRun {
    let mut run = run_candidate_stage(env, plan).await;
    check_source_seen(env, &mut run, plan);
    run.record.model = Some(env.model_name(plan.model.as_deref()).to_string());
    run
}

/// One lane as the orchestrator runs it: its record (skipped), or its shard plans.
enum Slot {
    Record(Box<StageRecord>),
    Shards(usize),
}

/// Rule (issue 10, "Sharding"): a lane instance runs as the shards
/// [`shard::shard_lane`] plans. Files left out by `max_shards` are a stated budget
/// limitation naming each file; a lane whose stable prompt leaves no room under its
/// request bound does not run (failed, a `budget-too-small` failure naming why and what
/// can fix it): no request is ever sent over the bound, and a review with a lane that
/// could not run is incomplete, never a completed review of fewer files.
fn shard_plans(
    env: &ReviewEnv,
    plan: StagePlan,
    out: &mut Collected,
) -> Result<Vec<StagePlan>, Box<StageRecord>> {
    let lane = plan.lane.clone();
    let sharded = shard::shard_lane(env, plan.clone(), &mut out.patch_sizes);
    if let Some(problem) = sharded.problem {
        out.failures.push(Failure {
            kind: FailureKind::BudgetTooSmall,
            stage: Some(lane),
            message: problem.clone(),
            detail: None,
        });
        let record = StageRecord {
            status: StageStatus::Failed,
            problem: Some(problem),
            ..super::stage::stage_record(&plan.label, &plan.handle, plan.assigned.len())
        };
        env.diagnose_record("lane", &record, ReasonCode::BudgetHit);
        return Err(Box::new(record));
    }
    if !sharded.left_out.is_empty() {
        out.left_out.extend(sharded.left_out.iter().cloned());
        out.limitations.push(Limitation {
            kind: LimitationKind::BudgetHit,
            stage: Some(lane.clone()),
            detail: format!(
                "{lane} reached its max_shards ({}): {} file(s) were left out of it: {}",
                plan.shards.max_shards,
                sharded.left_out.len(),
                sharded.left_out.join(", ")
            ),
        });
    }
    Ok(sharded.plans)
}

/// The record of a stage [`run_until_failure`] did not run (announced as not started, or
/// a failure when its task ended abnormally); its files are not reviewed (`stage-failed`).
fn not_run(env: &ReviewEnv, plan: &StagePlan, why: &NotRun) -> StageRun {
    let base = super::stage::stage_record(&plan.label, &plan.handle, plan.assigned.len());
    let (record, failure) = why.record(base);
    if let NotRun::AfterFailure(_) = why {
        env.progress(ProgressEvent::StageNotStarted {
            label: plan.label.clone(),
            reason: why.reason(),
        });
    }
    let mut run = StageRun::new(record);
    run.failure = failure;
    run
}

/// Runs `plans` with at most `concurrency` at once, started in `order` (indices into
/// `plans`, each once), none after one has failed ([`run_until_failure`]); returns each
/// run with its plan, in the order of `plans`.
async fn run_plans(
    env: &Arc<ReviewEnv>,
    concurrency: usize,
    plans: Vec<StagePlan>,
    order: &[usize],
) -> Vec<(StageRun, StagePlan)> {
    debug_assert_eq!(order.len(), plans.len());
    let mut plans: Vec<Option<StagePlan>> = plans.into_iter().map(Some).collect();
    let jobs: Vec<(usize, StagePlan)> = order
        .iter()
        .filter_map(|&i| Some((i, plans.get_mut(i)?.take()?)))
        .collect();
    let start = |(_, plan): (usize, StagePlan)| {
        let env = env.clone();
        async move { run_stage(&env, &plan).await }
    };
    let failed = |run: &StageRun| run.failure.as_ref().map(|_| run.record.label.clone());
    let mut runs: Vec<(usize, StageRun, StagePlan)> =
        run_until_failure(concurrency, jobs, start, failed)
            .await
            .into_iter()
            .map(|((i, plan), outcome)| {
                let run = outcome.unwrap_or_else(|why| not_run(env, &plan, &why));
                (i, run, plan)
            })
            .collect();
    runs.sort_by_key(|(i, _, _)| *i);
    runs.into_iter().map(|(_, run, plan)| (run, plan)).collect()
}

/// The lanes of a review as they will run: each skipped lane's record, or its shards.
pub(super) struct LanePlan {
    slots: Vec<Slot>,
    plans: Vec<StagePlan>,
}

impl LanePlan {
    /// Stage instances in the plan: skipped lanes and every shard to run.
    pub(super) fn instances(&self) -> usize {
        self.slots
            .iter()
            .map(|s| match s {
                Slot::Record(_) => 1,
                Slot::Shards(n) => *n,
            })
            .sum()
    }
}

/// Splits every lane to run into its shards ([`shard_plans`]), after
/// [`drop_tools_without_room`].
pub(super) fn shard_lanes(env: &ReviewEnv, lanes: Vec<Lane>, out: &mut Collected) -> LanePlan {
    drop_tools_without_room(env, &lanes);
    let mut slots = Vec::new();
    let mut plans = Vec::new();
    for lane in lanes {
        match lane {
            Lane::Skipped(record) => slots.push(Slot::Record(record)),
            Lane::Run(stage_plan) => match shard_plans(env, *stage_plan, out) {
                Ok(shards) => {
                    slots.push(Slot::Shards(shards.len()));
                    plans.extend(shards);
                }
                Err(record) => slots.push(Slot::Record(record)),
            },
        }
    }
    LanePlan { slots, plans }
}

/// Rule (`tools = "auto"` at a small window): when the tool definitions cost some lane
/// a whole shard (with them its request bound leaves less than `max_shard_tokens` for the
/// change) and every such lane has room for the change without them, the review is
/// planned and run without tools (the source given inline, as with `--tools off`)
/// instead of running those lanes in slivers or failing them; the report observes it.
/// With `--tools on` a lane without room fails `budget-too-small`, as asked.
fn drop_tools_without_room(env: &ReviewEnv, lanes: &[Lane]) {
    if env.inputs.tools != ToolsMode::Auto || !env.tools_enabled() {
        return;
    }
    let cramped: Vec<&StagePlan> = lanes
        .iter()
        .filter_map(|lane| match lane {
            Lane::Run(plan)
                if shard::content_room(env, plan, true)
                    .is_some_and(|room| room < u64::from(plan.shards.max_shard_tokens)) =>
            {
                Some(&**plan)
            }
            _ => None,
        })
        .collect();
    let roomy = |plan: &&StagePlan| {
        shard::content_room(env, plan, false).is_none_or(|room| room >= shard::MIN_SHARD_TOKENS)
    };
    if !cramped.is_empty() && cramped.iter().all(roomy) {
        env.drop_tools(ToolsDropped::NoRoom);
        env.diagnose(None, "lane", None, ReasonCode::ToolsFallback);
    }
}

/// Runs the lanes' shards with at most `concurrency` executions at once, round-robin across
/// lanes ([`vouch_core::running_order`]); none when a lane could not be planned (a
/// failure is already in `out`), each then recorded as not started. Each shard does
/// its own optional coverage retry before it counts as completed; siblings are never
/// rerun. Records are kept in manifest order, shards in order within their lane.
pub(super) async fn run_lanes(
    env: &Arc<ReviewEnv>,
    concurrency: usize,
    lanes: LanePlan,
    out: &mut Collected,
) {
    let per_lane: Vec<usize> = lanes
        .slots
        .iter()
        .filter_map(|slot| match slot {
            Slot::Shards(n) => Some(*n),
            Slot::Record(_) => None,
        })
        .collect();
    let order = vouch_core::running_order(&per_lane);
    let mut runs = match out.failures.first() {
        // A lane that could not run has already made the review incomplete: fail fast,
        // no request is spent on the others.
        Some(failed) => {
            let why = NotRun::AfterFailure(failed.stage.clone().unwrap_or_default());
            let not_started = |plan: StagePlan| (not_run(env, &plan, &why), plan);
            lanes.plans.into_iter().map(not_started).collect()
        }
        None => run_plans(env, concurrency, lanes.plans, &order).await,
    }
    .into_iter();
    for slot in lanes.slots {
        match slot {
            Slot::Record(record) => out.stages.push(*record),
            Slot::Shards(n) => {
                for (run, plan) in runs.by_ref().take(n) {
                    out.absorb(run, plan.lane, plan.assigned);
                }
            }
        }
    }
}

/// Rule (design, "Clean-result audit"): the audit runs only when no lane proposed a
/// candidate and nothing failed or was cancelled; it is assigned the whole canonical
/// list. Returns the audit's state (before verification of its candidates).
pub(super) async fn run_audit(
    env: &Arc<ReviewEnv>,
    plan: &ReviewPlan,
    concurrency: usize,
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
    let audit_plan = plan_for(env, spec, expected.to_vec());
    let shards = match shard_plans(env, audit_plan, out) {
        Ok(shards) => shards,
        Err(record) => {
            out.stages.push(*record);
            return audit_state(0, AuditRun::NotStarted, 0);
        }
    };
    let mut ran = AuditRun::Accepted;
    let order: Vec<usize> = (0..shards.len()).collect();
    for (run, plan) in run_plans(env, concurrency, shards, &order).await {
        if run.failure.is_some() || run.cancelled {
            ran = AuditRun::Failed;
        }
        out.absorb(run, plan.lane, plan.assigned);
    }
    audit_state(0, ran, 0)
}
