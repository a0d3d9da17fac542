//! What every stage execution of one review shares.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use vouch_abi::{ChangeSummary, FileSummary, HunkSummary, Intent, PolicyDocument};
use vouch_core::{
    ChangeSnapshot, ChangedFile, EntryKind, FileStatus, SourceLedger, SourceWindow, StageRecord,
    hunks_seen,
};
use vouch_git::SourceReader;
use vouch_llm::ModelClient;

use crate::diagnostics::{Diagnostic, DiagnosticSink, ReasonCode};
use crate::progress::{Presenter, ProgressEvent, notify};
use crate::tools::RepoTools;

/// Whether models get the repository tools or inline context only: the manifest's one
/// type (`auto` offers tools until the endpoint rejects them, then gives context
/// inline for the rest of the run and says so in the report).
pub use crate::manifest::ToolsMode;

/// Bytes of source given inline to a verification pass when `VOUCH_INLINE_BYTES` is not
/// set (the default shard budget, 4,000 tokens, at three bytes per token).
pub(crate) const DEFAULT_INLINE_BYTES: usize = 12_000;

/// The shared environment of one review run: what it reads, what it calls, and what it
/// learns as it goes.
pub(crate) struct ReviewEnv {
    /// Read-only: the change, its context and how source is shown.
    pub(crate) inputs: ReviewInputs,
    /// The repository, the model endpoints, progress, diagnostics and cancellation.
    pub(crate) services: StageServices,
    /// What the run learns as its stages execute.
    pub(crate) memo: RunMemo,
}

/// What a review reads and never changes.
#[derive(Clone)]
pub(crate) struct ReviewInputs {
    /// The change.
    pub(crate) snapshot: Arc<ChangeSnapshot>,
    /// Detected intent (only some roles receive it).
    pub(crate) intent: Option<Intent>,
    /// Policy evidence from the base tree, with the windows it consists of.
    pub(crate) policy: Vec<(PolicyDocument, Option<SourceWindow>)>,
    /// Tools or inline context.
    pub(crate) tools: ToolsMode,
    /// Most bytes of source given inline per stage execution (`VOUCH_INLINE_BYTES`).
    /// `None`: a shard is given everything its budget holds
    /// (`max_shard_tokens` at three bytes per token), and a verification pass
    /// [`DEFAULT_INLINE_BYTES`].
    pub(crate) inline_bytes: Option<usize>,
    /// The model's context window the budgets were sized for.
    pub(crate) window: vouch_core::ContextWindow,
}

/// What a review's stages call.
#[derive(Clone)]
pub(crate) struct StageServices {
    /// Read-only git access to head and base.
    pub(crate) reader: Arc<SourceReader>,
    /// The model endpoint, for stages whose specialist sets no model of its own.
    pub(crate) client: Arc<ModelClient>,
    /// Clients for specialists that name their own model (same endpoint), by model name.
    pub(crate) model_clients: BTreeMap<String, Arc<ModelClient>>,
    /// Progress presenter (failures ignored).
    pub(crate) presenter: Arc<dyn Presenter>,
    /// Structured diagnostics.
    pub(crate) diagnostics: Arc<dyn DiagnosticSink>,
    /// The run's job id.
    pub(crate) job_id: String,
    /// Cancels everything.
    pub(crate) cancel: CancellationToken,
}

/// Why a review in [`ToolsMode::Auto`] stopped offering tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolsDropped {
    /// The endpoint rejected a request with tools.
    Rejected,
    /// The tool definitions left a lane no room for the change under its request bound
    /// (a small context window), and without them every such lane has room.
    NoRoom,
}

impl ToolsDropped {
    /// The report's observation of it.
    pub(crate) fn observation(self) -> &'static str {
        match self {
            ToolsDropped::Rejected => {
                "the endpoint rejected tools; vouch gave the remaining stages their context inline (tools: auto)"
            }
            ToolsDropped::NoRoom => {
                "at this context window the tool definitions left a lane no room for the change; vouch reviewed without tools and gave every stage its context inline (tools: auto)"
            }
        }
    }
}

/// What a run learns as its stages execute (each starts empty).
#[derive(Default)]
pub(crate) struct RunMemo {
    /// Set when, in [`ToolsMode::Auto`], the review stopped offering tools (the first
    /// reason stands).
    pub(crate) tools_dropped: std::sync::OnceLock<ToolsDropped>,
    /// The prefetch gathered so far, by file set.
    pub(crate) prefetch: super::gathered::PrefetchMemo,
    /// The output caps fitted so far, by request shape.
    pub(crate) fitted_caps: super::contract::FittedCaps,
    /// The paths of the changed files the review excludes (at head and base), set once
    /// the change is partitioned ([`ReviewEnv::tools`]).
    pub(crate) excluded: std::sync::OnceLock<Vec<String>>,
}

impl ReviewEnv {
    /// The repository tools of one stage execution: an empty ledger, and the changed
    /// files the review excludes refused ([`RepoTools::excluding`]).
    pub(crate) fn tools(&self) -> RepoTools {
        RepoTools::new(self.services.reader.clone())
            .excluding(self.memo.excluded.get().cloned().unwrap_or_default())
    }

    /// Emits one diagnostic line with a source count and no hunk count for stage lines
    /// (unknown: use [`ReviewEnv::diagnose_ledger`] when the stage's ledger is at hand);
    /// review-level lines (`label` `None`) carry the change's hunk total, which the
    /// snapshot retrieved.
    pub(crate) fn diagnose(
        &self,
        label: Option<&str>,
        stage: &'static str,
        source_count: Option<u64>,
        reason: ReasonCode,
    ) {
        let hunk_count = match label {
            None => Some(u64::from(self.inputs.snapshot.counts().hunks)),
            Some(_) => None,
        };
        self.diagnose_counts(label, stage, source_count, hunk_count, reason);
    }

    /// Rule (design, "Structured diagnostics"; issue 9, item 9): a stage's diagnostic
    /// carries `sourceCount` = the source windows (and parts of long lines) it retrieved
    /// or was given, as recorded, and `hunkCount` = the hunks of the patches it retrieved
    /// ([`hunks_seen`]), both from its own ledger.
    pub(crate) fn diagnose_ledger(
        &self,
        label: Option<&str>,
        stage: &'static str,
        ledger: &SourceLedger,
        reason: ReasonCode,
    ) {
        self.diagnose_seen(label, stage, ledger, ledger.recorded(), reason);
    }

    /// [`ReviewEnv::diagnose_ledger`] of a finished stage from its record: the ledger
    /// rebuilt from the record's compact form, the count as recorded (`source_windows`).
    pub(crate) fn diagnose_record(
        &self,
        stage: &'static str,
        record: &StageRecord,
        reason: ReasonCode,
    ) {
        let ledger = record.source_ledger();
        self.diagnose_seen(
            Some(&record.label),
            stage,
            &ledger,
            record.source_windows,
            reason,
        );
    }

    /// One diagnostic line whose `hunkCount` is the hunks `ledger` saw, looked up among
    /// the files it names only.
    fn diagnose_seen(
        &self,
        label: Option<&str>,
        stage: &'static str,
        ledger: &SourceLedger,
        source_count: usize,
        reason: ReasonCode,
    ) {
        let named = self
            .inputs
            .snapshot
            .files_named(ledger.windows.iter().map(|w| w.path.as_str()));
        let hunks = hunks_seen(named, ledger);
        self.diagnose_counts(
            label,
            stage,
            Some(source_count as u64),
            Some(hunks as u64),
            reason,
        );
    }

    /// Emits one diagnostic line with explicit counts (`None`: unknown, written `null`).
    pub(crate) fn diagnose_counts(
        &self,
        label: Option<&str>,
        stage: &'static str,
        source_count: Option<u64>,
        hunk_count: Option<u64>,
        reason: ReasonCode,
    ) {
        self.services.diagnostics.emit(&Diagnostic {
            job_id: self.services.job_id.clone(),
            label: label.map(str::to_string),
            stage,
            source_count,
            hunk_count,
            reason,
        });
    }

    /// A copy of this environment (same snapshot, reader, client, sinks and cancellation
    /// token) whose policy evidence ends with `document`: how the repository's review
    /// instructions reach every model-backed stage.
    pub(crate) fn with_policy_document(
        &self,
        document: (PolicyDocument, Option<SourceWindow>),
    ) -> ReviewEnv {
        let mut inputs = self.inputs.clone();
        inputs.policy.push(document);
        let memo = RunMemo::default();
        if let Some(why) = self.tools_dropped() {
            memo.tools_dropped.get_or_init(|| why);
        }
        ReviewEnv {
            inputs,
            services: self.services.clone(),
            memo,
        }
    }

    /// The client for a stage whose specialist names `model` (the default client when it
    /// names none, or no client was built for it).
    pub(crate) fn client_for(&self, model: Option<&str>) -> &ModelClient {
        model
            .and_then(|m| self.services.model_clients.get(m))
            .unwrap_or(&self.services.client)
    }

    /// The model a stage's requests name: the client chosen for its resolved model
    /// (see [`ReviewEnv::client_for`]).
    pub(crate) fn model_name(&self, model: Option<&str>) -> &str {
        &self.client_for(model).config().model
    }

    /// True when stages are offered the repository tools now.
    pub(crate) fn tools_enabled(&self) -> bool {
        match self.inputs.tools {
            ToolsMode::On => true,
            ToolsMode::Off => false,
            ToolsMode::Auto => self.tools_dropped().is_none(),
        }
    }

    /// Why, in auto mode, this run stopped offering tools, if it did.
    pub(crate) fn tools_dropped(&self) -> Option<ToolsDropped> {
        self.memo.tools_dropped.get().copied()
    }

    /// Stops offering tools for the rest of the run (auto mode); a reason already
    /// recorded stands.
    pub(crate) fn drop_tools(&self, why: ToolsDropped) {
        self.memo.tools_dropped.get_or_init(|| why);
    }

    /// True when any client fell back from structured outputs.
    pub(crate) fn structured_outputs_fell_back(&self) -> bool {
        self.services.client.structured_outputs_fell_back()
            || self
                .services
                .model_clients
                .values()
                .any(|c| c.structured_outputs_fell_back())
    }

    /// Sends one progress event (a presenter failure is ignored).
    pub(crate) fn progress(&self, event: ProgressEvent) {
        notify(self.services.presenter.as_ref(), event);
    }

    /// The change summary restricted to `paths` (which must be current paths).
    pub(crate) fn change_summary(&self, paths: &[String]) -> ChangeSummary {
        ChangeSummary {
            base_sha: self.inputs.snapshot.merge_base.clone(),
            head_sha: self.inputs.snapshot.head.sha.clone(),
            files: {
                // Looked up per path (the snapshot is sorted by path), in snapshot order.
                let mut files: Vec<&ChangedFile> = paths
                    .iter()
                    .filter_map(|p| self.inputs.snapshot.file(p))
                    .collect();
                files.sort_by(|a, b| a.path.cmp(&b.path));
                files.dedup_by(|a, b| a.path == b.path);
                files.into_iter().map(file_summary).collect()
            },
        }
    }
}

fn file_summary(f: &ChangedFile) -> FileSummary {
    FileSummary {
        path: f.path.clone(),
        previous_path: f.previous_path.clone(),
        status: status_name(f.status).to_string(),
        kind: kind_name(f.kind).to_string(),
        binary: f.binary,
        additions: f.additions,
        deletions: f.deletions,
        hunks: f
            .hunks
            .iter()
            .map(|h| HunkSummary {
                old_start: h.old_start,
                old_lines: h.old_lines,
                new_start: h.new_start,
                new_lines: h.new_lines,
            })
            .collect(),
    }
}

fn status_name(s: FileStatus) -> &'static str {
    match s {
        FileStatus::Added => "added",
        FileStatus::Modified => "modified",
        FileStatus::Deleted => "deleted",
        FileStatus::Renamed => "renamed",
        FileStatus::Copied => "copied",
        FileStatus::ModeOnly => "mode-only",
        FileStatus::TypeChanged => "type-changed",
    }
}

fn kind_name(k: EntryKind) -> &'static str {
    match k {
        EntryKind::File => "file",
        EntryKind::Executable => "executable",
        EntryKind::Symlink => "symlink",
        EntryKind::Submodule => "submodule",
    }
}

/// Runs synchronous git- or CPU-heavy work (patches, shard sizing, the graph prefetch) off
/// the async runtime's worker threads: on a multi-threaded runtime the worker first hands
/// its other tasks to the rest ([`tokio::task::block_in_place`]), so model replies, timers
/// and cancellation keep being served while it runs; on a current-thread runtime (where
/// that is not possible) the work simply runs. The work itself checks cancellation
/// between its steps.
pub(crate) fn off_the_runtime<R>(work: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod blocking_tests {
    use super::off_the_runtime;

    /// On a multi-threaded runtime with one worker, a task that runs blocking work still
    /// lets a task queued behind it on that worker run: the worker's tasks moved on.
    #[test]
    fn blocking_work_leaves_the_runtime_serving_other_tasks() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let got = runtime.block_on(async {
            tokio::spawn(async {
                let (tx, rx) = std::sync::mpsc::channel::<()>();
                // Queued on this very worker, behind the task that now blocks it.
                tokio::spawn(async move { tx.send(()).unwrap() });
                // A deadlock guard, not a measure: without the hand-over the other task
                // never runs and this ends in error.
                off_the_runtime(|| rx.recv_timeout(std::time::Duration::from_secs(20)))
            })
            .await
            .unwrap()
        });
        assert!(
            got.is_ok(),
            "the other task never ran while the work blocked"
        );
    }

    #[test]
    fn on_a_current_thread_runtime_the_work_just_runs() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(runtime.block_on(async { off_the_runtime(|| 7) }), 7);
        assert_eq!(off_the_runtime(|| 8), 8, "outside any runtime");
    }
}
