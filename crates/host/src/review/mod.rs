//! The orchestrator of one review: snapshot → context → lanes (concurrently) →
//! clean-result audit → verification → merge → opinion.
//!
//! Every rule applied here comes from `vouch_core`; this module only sequences stage
//! executions, bounds their concurrency, and collects what they record.

mod bounded;
mod change;
mod concerns;
mod context;
mod contract;
mod entry;
mod env;
mod exec;
mod facts;
mod gathered;
mod inline;
mod intake;
mod lanes;
mod models;
mod partition;
mod plan;
mod prefetch;
mod reply;
mod report;
mod request;
mod shard;
mod stage;
mod stage_plan;
mod verify;

use std::sync::Arc;

use vouch_core::{
    AuditState, CandidateRecord, ChangeSnapshot, ExcludedFile, Failure, Finding, Limitation,
    NotReviewedFile, Opinion, StageRecord, TokenUsage,
};
use vouch_llm::Budget;

pub use context::PullRequestText;
pub use entry::run;
pub use env::ToolsMode;
pub use request::{ReviewError, ReviewOutcome, ReviewRequest, ReviewServices};

pub(crate) use context::{collect_policy, detect_intent, instructions_document};
pub(crate) use env::ReviewEnv;
pub(crate) use lanes::windows_beyond_policy;
pub(crate) use plan::{build_plan, resize};
pub(crate) use stage::ShardLimits;

use crate::diagnostics::ReasonCode;
use crate::manifest::FileSelection;
use crate::progress::ProgressEvent;
use crate::registry::SpecialistHandle;

/// One specialist of the composition as the orchestrator runs it (one entry per
/// instance; labels are final, e.g. `bug-review #2`).
#[derive(Clone)]
pub(crate) struct InstanceSpec {
    /// Stable instance label.
    pub(crate) label: String,
    /// The checked specialist.
    pub(crate) handle: SpecialistHandle,
    /// Its file selection (the generic investigator always gets every file).
    pub(crate) selection: FileSelection,
    /// Agent budget.
    pub(crate) budget: Budget,
    /// Estimated tokens of context prefetched from the repository graph (0: none).
    pub(crate) prefetch_tokens: u32,
    /// The model its requests name: the specialist's own `model` from the manifest until
    /// the command line resolves it with the model rule
    /// (`ResolvedEndpoint::model_for`); `None` means the endpoint's default model.
    pub(crate) model: Option<String>,
    /// Shard limits (`max_shard_tokens`, `max_shards`, `max_request_tokens`).
    pub(crate) shards: ShardLimits,
}

/// The reason a changed path is excluded from review, if it is.
pub(crate) type ExclusionRule = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What to run.
pub(crate) struct ReviewPlan {
    /// Composition name, for the report.
    pub(crate) composition: String,
    /// Candidate lanes (investigators, conventions, pinned specialists, reviewers).
    pub(crate) lanes: Vec<InstanceSpec>,
    /// The clean-result audit, if the composition has one.
    pub(crate) audit: Option<InstanceSpec>,
    /// The verifier.
    pub(crate) verifier: InstanceSpec,
    /// Most stage instances running at once (≥ 1).
    pub(crate) concurrency: usize,
    /// The reason a changed path is excluded, if it is (composition and repository
    /// exclusions; binary files are excluded by the orchestrator itself).
    pub(crate) exclusion: ExclusionRule,
    /// How binary files are reviewed (`[files].binary`).
    pub(crate) binary: crate::manifest::BinaryPolicy,
    /// The reviewed repository's review instructions (`instructions` of its
    /// `.vouch/review.toml`, read from the base tree): untrusted text every model-backed
    /// stage receives as a labelled policy document.
    pub(crate) instructions: Option<String>,
}

impl ReviewPlan {
    /// Every instance of the plan: lanes, the audit, the verifier.
    pub(crate) fn instances_mut(&mut self) -> impl Iterator<Item = &mut InstanceSpec> {
        self.lanes
            .iter_mut()
            .chain(self.audit.iter_mut())
            .chain(std::iter::once(&mut self.verifier))
    }
}

/// The reason stated for a changed file no lane instance was assigned.
pub(crate) const UNASSIGNED_REASON: &str =
    "no enabled lane instance is assigned this file (no file selection matches it)";

/// Everything a review run recorded, in manifest order where order matters.
pub(crate) struct ReviewRun {
    /// The change.
    pub(crate) snapshot: Arc<ChangeSnapshot>,
    /// The canonical list of expected (reviewable) files.
    pub(crate) expected_files: Vec<String>,
    /// Excluded changed files with reasons (binary, excluded, unassigned).
    pub(crate) excluded_files: Vec<ExcludedFile>,
    /// Files reviewed: listed in an accepted coverage receipt **and** seen in full by
    /// that stage ([`vouch_core::files_reviewed`]), sorted.
    pub(crate) files_reviewed: Vec<String>,
    /// Every other changed file, with its reason, sorted by path.
    pub(crate) files_not_reviewed: Vec<NotReviewedFile>,
    /// Per stage instance, lanes first, then audit, then verification passes.
    pub(crate) stages: Vec<StageRecord>,
    /// Every candidate with its decision.
    pub(crate) candidates: Vec<CandidateRecord>,
    /// Verified findings after merge (published only when the opinion says so).
    pub(crate) findings: Vec<Finding>,
    /// Coverage limitations.
    pub(crate) limitations: Vec<Limitation>,
    /// Failures.
    pub(crate) failures: Vec<Failure>,
    /// Messages for the user (coverage mismatch after retry, …).
    pub(crate) messages: Vec<String>,
    /// Observations (stage summaries, downgraded receipts, fallbacks).
    pub(crate) observations: Vec<String>,
    /// Total token usage.
    pub(crate) usage: TokenUsage,
    /// The derived opinion.
    pub(crate) opinion: Opinion,
    /// True when the endpoint rejected structured outputs and vouch fell back.
    pub(crate) structured_outputs_fell_back: bool,
}

/// Runs one review. An empty range makes no model call. Cancellation (`env.cancel`)
/// ends the run as `aborted` with no retry started.
///
/// Phases: partition the changed files (binary and excluded files leave the canonical
/// list, listed with their reason, coverage `limited`) → assign them to the lanes (files
/// no running lane receives are listed the same way) → split each lane into shards that
/// fit its request bound → run the shards concurrently → the
/// clean-result audit (only when no lane proposed a candidate and nothing failed) →
/// candidate intake and verification of every candidate in one pass → facts: merge,
/// files reviewed, and the opinion from [`vouch_core::derive_opinion`].
pub(crate) async fn run_review(env: Arc<ReviewEnv>, plan: &ReviewPlan) -> ReviewRun {
    let env = match &plan.instructions {
        Some(text) => {
            Arc::new(env.with_policy_document(instructions_document(&env.services.reader, text)))
        }
        None => env,
    };
    let sides = |path: &str| {
        env.services
            .reader
            .binary_sides(path)
            .unwrap_or(vouch_git::BinarySides::Text)
    };
    let mut part =
        partition::partition_files(&env.inputs.snapshot, &plan.exclusion, plan.binary, &sides);
    let _ = env
        .memo
        .excluded
        .set(part.excluded_paths(&env.inputs.snapshot));
    let lanes = partition::assign_lanes(&env, plan, &mut part);
    let mut out = lanes::Collected::default();
    let mut audit = AuditState::NotRun;
    let mut verification = facts::not_verified(&[]);
    if !env.inputs.snapshot.is_empty() && !part.expected.is_empty() {
        env.diagnose(None, "snapshot", None, ReasonCode::ReviewStarted);
        let lanes = env::off_the_runtime(|| lanes::shard_lanes(&env, lanes, &mut out));
        env.progress(ProgressEvent::ReviewStarted {
            files: env.inputs.snapshot.files.len(),
            instances: lanes.instances(),
        });
        lanes::run_lanes(&env, plan.concurrency, lanes, &mut out).await;
        audit = lanes::run_audit(&env, plan, plan.concurrency, &part.expected, &mut out).await;
        verification = facts::run_verification(&env, plan, &part, &mut out, &mut audit).await;
    }
    let run = facts::finish(&env, part, out, audit, verification);
    // The review's parses are not needed for its report (the cache is process-wide, so
    // its executions could share them).
    vouch_graph::ParseCache::shared().clear();
    run
}
