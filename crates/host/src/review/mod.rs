//! The orchestrator of one review: snapshot → context → lanes (concurrently) →
//! clean-result audit → verification → merge → opinion.
//!
//! Every rule applied here comes from `vouch_core`; this module only sequences stage
//! executions, bounds their concurrency, and collects what they record.

mod context;
mod env;
mod exec;
mod inline;
mod plan;
mod reply;
mod stage;
mod verify;

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use vouch_abi::Role;
use vouch_core::{
    AuditRun, Candidate, CandidateRecord, ChangeSnapshot, ExcludedFile, Failure, Finding,
    Limitation, LimitationKind, Opinion, ReviewFacts, StageRecord, StageStatus, TokenUsage,
    audit_state, derive_opinion, expected_files, files_not_fully_seen, files_without_lane,
    merge_findings, zero_source_gap,
};
use vouch_llm::Budget;

pub use context::{
    INSTRUCTIONS_LABEL, PullRequestText, collect_policy, detect_intent, instructions_document,
    instructions_lines, policy_paths,
};
pub use env::{ReviewEnv, ToolsMode};
pub use plan::{PlanError, agent_budget, build_plan};
pub use stage::{StagePlan, StageRun, run_candidate_stage};
pub use verify::{FOCUSED_OUTPUT_TOKENS, VerificationRun, verify};

use crate::diagnostics::ReasonCode;
use crate::manifest::FileSelection;
use crate::progress::ProgressEvent;
use crate::registry::SpecialistHandle;

/// One specialist of the composition as the orchestrator runs it (one entry per
/// instance; labels are final, e.g. `bug-review #2`).
#[derive(Clone)]
pub struct InstanceSpec {
    /// Stable instance label.
    pub label: String,
    /// The checked specialist.
    pub handle: SpecialistHandle,
    /// Its file selection (the generic investigator always gets every file).
    pub selection: FileSelection,
    /// Agent budget.
    pub budget: Budget,
    /// The specialist's own model name, if it sets one (see `ReviewEnv::model_clients`).
    pub model: Option<String>,
}

/// The reason a changed path is excluded from review, if it is.
pub type ExclusionRule = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What to run.
pub struct ReviewPlan {
    /// Composition name, for the report.
    pub composition: String,
    /// Candidate lanes (investigators, conventions, pinned specialists, reviewers).
    pub lanes: Vec<InstanceSpec>,
    /// The clean-result audit, if the composition has one.
    pub audit: Option<InstanceSpec>,
    /// The verifier.
    pub verifier: InstanceSpec,
    /// Most stage instances running at once (≥ 1).
    pub concurrency: usize,
    /// The reason a changed path is excluded, if it is (composition and repository
    /// exclusions; binary files are excluded by the orchestrator itself).
    pub exclusion: ExclusionRule,
    /// The reviewed repository's review instructions (`instructions` of its
    /// `.vouch/review.toml`, read from the base tree): untrusted text every model-backed
    /// stage receives as a labelled policy document.
    pub instructions: Option<String>,
}

/// The reason stated for a changed file no lane instance was assigned.
pub const UNASSIGNED_REASON: &str =
    "no enabled lane instance is assigned this file (no file selection matches it)";

/// Everything a review run recorded, in manifest order where order matters.
pub struct ReviewRun {
    /// The change.
    pub snapshot: Arc<ChangeSnapshot>,
    /// The canonical list of expected (reviewable) files.
    pub expected_files: Vec<String>,
    /// Excluded changed files with reasons.
    pub excluded_files: Vec<ExcludedFile>,
    /// Per stage instance, lanes first, then audit, then verification passes.
    pub stages: Vec<StageRecord>,
    /// Every candidate with its decision.
    pub candidates: Vec<CandidateRecord>,
    /// Verified findings after merge (published only when the opinion says so).
    pub findings: Vec<Finding>,
    /// Coverage limitations.
    pub limitations: Vec<Limitation>,
    /// Failures.
    pub failures: Vec<Failure>,
    /// Messages for the user (coverage mismatch after retry, …).
    pub messages: Vec<String>,
    /// Observations (stage summaries, downgraded receipts, fallbacks).
    pub observations: Vec<String>,
    /// Total token usage.
    pub usage: TokenUsage,
    /// The derived opinion.
    pub opinion: Opinion,
    /// True when the endpoint rejected structured outputs and vouch fell back.
    pub structured_outputs_fell_back: bool,
}

fn plan_for(spec: &InstanceSpec, assigned: Vec<String>) -> StagePlan {
    StagePlan {
        label: spec.label.clone(),
        handle: spec.handle.clone(),
        assigned,
        budget: spec.budget,
        model: spec.model.clone(),
    }
}

fn skipped(spec: &InstanceSpec, assigned: usize, why: &str) -> StageRecord {
    StageRecord {
        status: StageStatus::Skipped,
        problem: Some(why.to_string()),
        ..stage::stage_record(&spec.label, &spec.handle, assigned)
    }
}

#[derive(Default)]
struct Collected {
    stages: Vec<StageRecord>,
    candidates: Vec<Candidate>,
    failures: Vec<Failure>,
    limitations: Vec<Limitation>,
    messages: Vec<String>,
    observations: Vec<String>,
    cancelled: bool,
}

impl Collected {
    fn absorb(&mut self, run: StageRun) {
        if !run.record.summary.is_empty() {
            self.observations
                .push(format!("{}: {}", run.record.label, run.record.summary));
        }
        self.stages.push(run.record);
        self.candidates.extend(run.candidates);
        self.failures.extend(run.failure);
        self.limitations.extend(run.limitations);
        self.observations.extend(run.observations);
        self.messages.extend(run.message);
        self.cancelled |= run.cancelled;
    }
}

/// One candidate lane instance of this review: skipped (with its record) or to run.
enum Lane {
    Skipped(Box<StageRecord>),
    Run(StagePlan),
}

/// Assigns the canonical list to the lanes: investigators receive every file, other
/// roles the files their selection matches; the outcome investigator is skipped without
/// detected intent, and an instance with no file is skipped.
fn assign_lanes(env: &ReviewEnv, plan: &ReviewPlan, expected: &[String]) -> Vec<Lane> {
    plan.lanes
        .iter()
        .map(|spec| {
            let role = spec.handle.descriptor().role;
            let assigned: Vec<String> = match role {
                Role::Investigator => expected.to_vec(),
                _ => expected
                    .iter()
                    .filter(|p| spec.selection.matches(p))
                    .cloned()
                    .collect(),
            };
            if role == Role::OutcomeInvestigator && env.intent.is_none() {
                Lane::Skipped(Box::new(skipped(
                    spec,
                    assigned.len(),
                    "no pull-request intent was detected",
                )))
            } else if assigned.is_empty() {
                Lane::Skipped(Box::new(skipped(
                    spec,
                    0,
                    "no changed file matches its selection",
                )))
            } else {
                Lane::Run(plan_for(spec, assigned))
            }
        })
        .collect()
}

/// The source windows of a stage's ledger beyond the policy evidence every stage is
/// given (which says nothing about what it saw of the change).
pub(crate) fn windows_beyond_policy(env: &ReviewEnv, source_windows: usize) -> usize {
    let given = env.policy.iter().filter(|(_, w)| w.is_some()).count();
    source_windows.saturating_sub(given)
}

/// Rule (coverage completion policy, [`zero_source_gap`], [`files_not_fully_seen`]): a stage
/// whose changed files were not all seen line by line records a source lookup gap; one that completed having
/// read or been given no source beyond the policy evidence, while one of its files has
/// text to read, records a source lookup gap (coverage `limited`, stage identity in the
/// diagnostic).
fn check_source_seen(env: &ReviewEnv, run: &mut StageRun, assigned: &[String]) {
    if !matches!(
        run.record.status,
        StageStatus::Accepted | StageStatus::Limited
    ) || run
        .limitations
        .iter()
        .any(|l| l.kind == LimitationKind::SourceLookupGap)
    {
        return;
    }
    let files = assigned.iter().filter_map(|p| env.snapshot.file(p));
    if zero_source_gap(files, windows_beyond_policy(env, run.record.source_windows)) {
        let label = run.record.label.clone();
        env.diagnose(Some(&label), "lane", Some(0), ReasonCode::SourceLookupGap);
        run.limitations.push(Limitation {
            kind: LimitationKind::SourceLookupGap,
            stage: Some(label.clone()),
            detail: format!(
                "{label} completed without reading or being given any source of its assigned files"
            ),
        });
        run.record.status = StageStatus::Limited;
        return;
    }
    let ledger = vouch_core::SourceLedger {
        windows: run.record.ledger.clone(),
    };
    let files = assigned.iter().filter_map(|p| env.snapshot.file(p));
    let unseen = files_not_fully_seen(files, &ledger);
    if !unseen.is_empty() {
        let label = run.record.label.clone();
        env.diagnose(
            Some(&label),
            "lane",
            Some(run.record.source_windows as u64),
            ReasonCode::SourceLookupGap,
        );
        run.limitations.push(Limitation {
            kind: LimitationKind::SourceLookupGap,
            stage: Some(label.clone()),
            detail: format!(
                "{label} neither was shown nor read every changed line of {} file(s): {}",
                unseen.len(),
                bounded_list(&unseen, 10)
            ),
        });
        run.record.status = StageStatus::Limited;
    }
}

/// `a, b, c` for at most `max` items, then `and N more`.
fn bounded_list(items: &[String], max: usize) -> String {
    let mut text = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        text.push_str(&format!(" and {} more", items.len() - max));
    }
    text
}

/// Runs the lanes with at most `concurrency` instances at once. Each instance does its
/// own optional coverage retry before it counts as completed; siblings are never rerun.
/// Records are kept in manifest order.
async fn run_lanes(
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
                    let mut run = run_candidate_stage(&env, &stage_plan).await;
                    check_source_seen(&env, &mut run, &stage_plan.assigned);
                    (index, run)
                });
            }
        }
    }
    let mut runs: Vec<(usize, StageRun)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(r) => runs.push(r),
            Err(e) => out.failures.push(Failure {
                kind: vouch_core::FailureKind::PluginError,
                stage: None,
                message: format!("a stage task ended abnormally: {e}"),
            }),
        }
    }
    runs.sort_by_key(|(i, _)| *i);
    let mut runs = runs.into_iter().peekable();
    for (index, slot) in slots.into_iter().enumerate() {
        match slot {
            Some(record) => out.stages.push(record),
            None => {
                if let Some((_, run)) = runs.next_if(|(i, _)| *i == index) {
                    out.absorb(run);
                }
            }
        }
    }
}

/// Runs one review. An empty range makes no model call. Cancellation (`env.cancel`)
/// ends the run as `aborted` with no retry started.
///
/// Sequence: the repository's review instructions join the policy evidence; binary and
/// excluded files leave the canonical list (listed with their reason, coverage
/// `limited`); files no running lane is assigned are listed the same way; the lanes run
/// concurrently; the clean-result audit runs only when no lane proposed a candidate and
/// nothing failed; every candidate is verified in one pass; verified findings merge; the
/// opinion is derived from the facts by [`derive_opinion`].
pub async fn run_review(env: Arc<ReviewEnv>, plan: &ReviewPlan) -> ReviewRun {
    let env = match &plan.instructions {
        Some(text) => Arc::new(env.with_policy_document(instructions_document(&env.reader, text))),
        None => env,
    };
    let snapshot = env.snapshot.clone();
    let mut excluded_files = Vec::new();
    let mut reviewable = Vec::new();
    for f in &snapshot.files {
        if f.binary {
            excluded_files.push(ExcludedFile {
                path: f.path.clone(),
                reason: "binary file: no text to review".into(),
            });
        } else if let Some(reason) = (plan.exclusion)(&f.path) {
            excluded_files.push(ExcludedFile {
                path: f.path.clone(),
                reason,
            });
        } else {
            reviewable.push(f);
        }
    }
    let mut out = Collected::default();
    if !excluded_files.is_empty() {
        out.limitations.push(Limitation {
            kind: LimitationKind::ExcludedFiles,
            stage: None,
            detail: format!(
                "{} changed file(s) were excluded from review",
                excluded_files.len()
            ),
        });
    }
    let reviewable = expected_files(reviewable);
    let lanes = assign_lanes(&env, plan, &reviewable);
    let assignments: Vec<Vec<String>> = lanes
        .iter()
        .filter_map(|l| match l {
            Lane::Run(p) => Some(p.assigned.clone()),
            Lane::Skipped(_) => None,
        })
        .collect();
    let unassigned = files_without_lane(&reviewable, &assignments);
    if !unassigned.is_empty() {
        out.limitations.push(Limitation {
            kind: LimitationKind::UnassignedFiles,
            stage: None,
            detail: format!(
                "{} changed file(s) were not reviewed: {UNASSIGNED_REASON}",
                unassigned.len()
            ),
        });
        excluded_files.extend(unassigned.iter().map(|path| ExcludedFile {
            path: path.clone(),
            reason: UNASSIGNED_REASON.into(),
        }));
    }
    let expected: Vec<String> = reviewable
        .into_iter()
        .filter(|p| !unassigned.contains(p))
        .collect();
    let mut audit_run = AuditRun::NotStarted;
    let mut lane_candidates = 0;
    let mut verification = VerificationRun {
        records: vec![],
        candidates: vec![],
        findings: vec![],
        failures: vec![],
        limitations: vec![],
        cancelled: false,
    };
    if !snapshot.is_empty() && !expected.is_empty() {
        env.diagnose(None, "snapshot", None, ReasonCode::ReviewStarted);
        env.progress(ProgressEvent::ReviewStarted {
            files: snapshot.files.len(),
            instances: plan.lanes.len(),
        });
        run_lanes(&env, plan.concurrency, lanes, &mut out).await;
        lane_candidates = out.candidates.len();
        if lane_candidates > 0 {
            if plan.audit.is_some() {
                out.observations.push(format!(
                    "the clean-result audit did not run: the lanes proposed {lane_candidates} candidate(s)"
                ));
            }
        } else if out.failures.is_empty()
            && !out.cancelled
            && !env.cancel.is_cancelled()
            && let Some(spec) = &plan.audit
        {
            let audit_plan = plan_for(spec, expected.clone());
            let mut run = run_candidate_stage(&env, &audit_plan).await;
            check_source_seen(&env, &mut run, &audit_plan.assigned);
            audit_run = if run.failure.is_none() && !run.cancelled {
                AuditRun::Accepted
            } else {
                AuditRun::Failed
            };
            out.absorb(run);
        }
        if out.failures.is_empty() && !out.cancelled && !env.cancel.is_cancelled() {
            let verifier = plan_for(&plan.verifier, expected.clone());
            verification = verify(&env, &verifier, &out.candidates).await;
        } else {
            verification.candidates = out
                .candidates
                .iter()
                .map(|c| CandidateRecord {
                    candidate: c.clone(),
                    verdict: None,
                    evidence: String::new(),
                    verification_passes: 0,
                    problem: Some("not verified: the review did not complete".into()),
                })
                .collect();
        }
    }
    let aborted = out.cancelled || verification.cancelled || env.cancel.is_cancelled();
    if aborted {
        env.diagnose(None, "report", None, ReasonCode::Cancelled);
    }
    out.stages.extend(verification.records);
    out.failures.extend(verification.failures);
    out.limitations.extend(verification.limitations);
    let audit = audit_state(lane_candidates, audit_run, verification.findings.len());
    let findings = merge_findings(verification.findings);
    let unresolved = verification
        .candidates
        .iter()
        .filter(|c| c.verdict == Some(vouch_core::Verdict::Unresolved))
        .count();
    let facts = ReviewFacts {
        change_is_empty: snapshot.is_empty(),
        aborted,
        failures: out.failures.clone(),
        limitations: out.limitations.clone(),
        verified_findings: findings.len(),
        unresolved_candidates: unresolved,
        undecided_candidates: verification
            .candidates
            .iter()
            .filter(|c| c.verdict.is_none())
            .count(),
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
    if env.tools_rejected() {
        out.observations.push(
            "the endpoint rejected tools; vouch gave the remaining stages their context inline (tools: auto)".into(),
        );
    }
    let fell_back = env.structured_outputs_fell_back();
    if fell_back {
        env.diagnose(None, "report", None, ReasonCode::StructuredOutputFallback);
        out.observations.push(
            "the endpoint rejected response_format json_schema; vouch fell back to prompt-only output contracts with extraction and repair"
                .into(),
        );
    }
    ReviewRun {
        snapshot,
        expected_files: expected,
        excluded_files,
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
