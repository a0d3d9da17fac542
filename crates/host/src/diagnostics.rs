//! Structured diagnostics: JSON lines for stderr.
//!
//! Rule (design, "Policies the host enforces"): diagnostics carry the job id, the
//! reviewer label, the stage, numeric source and hunk counts (`null` when unknown) and a
//! reason code from a closed allowlist — never paths, source, prompts or raw
//! tool/provider errors. In non-interactive runs stderr carries only these lines.

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;

/// The closed allowlist of reason codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonCode {
    /// A review started.
    ReviewStarted,
    /// A stage instance completed with an accepted result.
    StageCompleted,
    /// A reply was not valid and went to isolated repair.
    RepairAttempted,
    /// A repaired receipt claimed full coverage without a verbatim quote; downgraded.
    RepairQuoteMissing,
    /// A reply stayed invalid after repair.
    InvalidOutput,
    /// A reply was cut off (`finish_reason: length`).
    TruncatedOutput,
    /// A coverage receipt mismatched; one targeted retry follows.
    CoverageRetry,
    /// A coverage receipt still mismatched after its retry.
    CoverageMismatch,
    /// The model endpoint failed.
    ProviderError,
    /// The host could not retrieve source for a stage.
    SourceLookupGap,
    /// A stage hit a budget.
    BudgetHit,
    /// The endpoint rejected structured outputs; fell back to prompt-only contracts.
    StructuredOutputFallback,
    /// In auto mode the endpoint rejected tools; fell back to inline context.
    ToolsFallback,
    /// A verification decision or citation failed validation.
    InvalidDecision,
    /// A candidate's location did not resolve (candidate intake); it was not verified.
    CandidateNotResolved,
    /// A verified decision omitted its finding; focused pass.
    FocusedVerification,
    /// A plugin call failed.
    PluginError,
    /// The review was cancelled.
    Cancelled,
    /// The review finished.
    ReviewFinished,
    /// A panic was caught (in a built-in plugin or in vouch); its message is withheld
    /// from stderr because it may quote source or paths.
    Panic,
}

/// One diagnostic line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// The run's job id.
    pub job_id: String,
    /// Stage instance label (e.g. `bug-review #2`), or `null` for review-level lines.
    pub label: Option<String>,
    /// Stage kind: `snapshot`, `lane`, `repair`, `retry`, `verification`, `audit`, `report`.
    pub stage: &'static str,
    /// Source windows read or given so far (`null` when unknown).
    pub source_count: Option<u64>,
    /// Hunks of the retrieved patches (`null` when unknown).
    pub hunk_count: Option<u64>,
    /// Allowlisted reason.
    pub reason: ReasonCode,
}

/// Where diagnostics go.
pub trait DiagnosticSink: Send + Sync {
    /// Emits one line.
    fn emit(&self, diagnostic: &Diagnostic);
}

/// Writes JSON lines to a writer (stderr in the binary).
pub struct JsonLines<W: Write + Send> {
    out: Mutex<W>,
}

impl<W: Write + Send> JsonLines<W> {
    /// Wraps a writer.
    pub fn new(out: W) -> Self {
        JsonLines {
            out: Mutex::new(out),
        }
    }
}

impl<W: Write + Send> DiagnosticSink for JsonLines<W> {
    fn emit(&self, diagnostic: &Diagnostic) {
        if let (Ok(line), Ok(mut out)) = (serde_json::to_string(diagnostic), self.out.lock()) {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// Keeps diagnostics in memory (tests, and the report's counts).
#[derive(Default)]
pub struct Collector {
    lines: Mutex<Vec<Diagnostic>>,
}

impl Collector {
    /// Everything emitted so far.
    pub fn lines(&self) -> Vec<Diagnostic> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl DiagnosticSink for Collector {
    fn emit(&self, diagnostic: &Diagnostic) {
        if let Ok(mut l) = self.lines.lock() {
            l.push(diagnostic.clone());
        }
    }
}
