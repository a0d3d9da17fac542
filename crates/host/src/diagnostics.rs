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
    /// The endpoint check could not connect (DNS, refused, unreachable).
    EndpointUnreachable,
    /// The endpoint check's TLS handshake failed.
    EndpointTls,
    /// The endpoint check got no answer in time.
    EndpointTimeout,
    /// Nothing OpenAI-compatible answers under the base URL.
    EndpointPath,
    /// The endpoint refused the credentials (HTTP 401/403).
    EndpointAuth,
    /// The endpoint does not serve the configured model.
    EndpointModel,
    /// Azure OpenAI has no deployment by the base URL's name.
    EndpointDeployment,
    /// The endpoint rate-limited the check (HTTP 429).
    EndpointRateLimited,
    /// The endpoint failed during the check (HTTP 5xx or unexpected).
    EndpointServerError,
    /// A panic was caught (in a built-in plugin or in vouch); its message is withheld
    /// from stderr because it may quote source or paths.
    Panic,
}

impl ReasonCode {
    /// The reason of an endpoint check's problem (the same kebab-case code
    /// [`vouch_llm::EndpointProblem::code`] names).
    pub(crate) fn from_endpoint_problem(problem: &vouch_llm::EndpointProblem) -> Self {
        use vouch_llm::EndpointProblem as P;
        match problem {
            P::Unreachable { .. } => ReasonCode::EndpointUnreachable,
            P::Tls { .. } => ReasonCode::EndpointTls,
            P::Timeout { .. } => ReasonCode::EndpointTimeout,
            P::WrongPath { .. } => ReasonCode::EndpointPath,
            P::Refused { .. } => ReasonCode::EndpointAuth,
            P::UnknownModel { .. } => ReasonCode::EndpointModel,
            P::UnknownDeployment { .. } => ReasonCode::EndpointDeployment,
            P::RateLimited { .. } => ReasonCode::EndpointRateLimited,
            P::ServerError { .. } => ReasonCode::EndpointServerError,
        }
    }
}

impl ReasonCode {
    /// Rule (`--quiet`: errors and the final summary only): a line is kept when its
    /// reason says something went wrong or was limited (a failure, a gap, a budget hit,
    /// an endpoint problem, a cancellation, a panic) or is the final `review-finished`;
    /// progress of a healthy run (started, completed, a retry or repair under way, a
    /// fallback that changed nothing about the result) is dropped.
    pub(crate) fn kept_when_quiet(self) -> bool {
        use ReasonCode as R;
        match self {
            R::ReviewStarted
            | R::StageCompleted
            | R::RepairAttempted
            | R::CoverageRetry
            | R::StructuredOutputFallback
            | R::ToolsFallback
            | R::FocusedVerification => false,
            R::RepairQuoteMissing
            | R::InvalidOutput
            | R::TruncatedOutput
            | R::CoverageMismatch
            | R::ProviderError
            | R::SourceLookupGap
            | R::BudgetHit
            | R::InvalidDecision
            | R::CandidateNotResolved
            | R::PluginError
            | R::Cancelled
            | R::ReviewFinished
            | R::EndpointUnreachable
            | R::EndpointTls
            | R::EndpointTimeout
            | R::EndpointPath
            | R::EndpointAuth
            | R::EndpointModel
            | R::EndpointDeployment
            | R::EndpointRateLimited
            | R::EndpointServerError
            | R::Panic => true,
        }
    }
}

/// Passes on only the lines [`ReasonCode::kept_when_quiet`] keeps (`--quiet`).
pub struct Quiet(pub std::sync::Arc<dyn DiagnosticSink>);

impl DiagnosticSink for Quiet {
    fn emit(&self, diagnostic: &Diagnostic) {
        if diagnostic.reason.kept_when_quiet() {
            self.0.emit(diagnostic);
        }
    }

    fn flush(&self) {
        self.0.flush();
    }
}

/// One diagnostic line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// The run's job id.
    pub job_id: String,
    /// Stage instance label (e.g. `bug-review #2`), or `null` for review-level lines.
    pub label: Option<String>,
    /// Stage kind: `endpoint` (the check before a review), `snapshot`, `lane`, `repair`, `retry`, `verification`, `audit`, `report`.
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

    /// A phase during which a progress display may own the terminal has ended: a sink
    /// that holds its lines meanwhile writes them now. Default: nothing is held.
    fn flush(&self) {}
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

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_llm::EndpointProblem as P;

    #[test]
    fn quiet_keeps_problems_and_the_final_line() {
        use ReasonCode as R;
        // (reason, kept under --quiet)
        let cases = [
            (R::ReviewStarted, false),
            (R::StageCompleted, false),
            (R::RepairAttempted, false),
            (R::CoverageRetry, false),
            (R::StructuredOutputFallback, false),
            (R::ToolsFallback, false),
            (R::FocusedVerification, false),
            (R::InvalidOutput, true),
            (R::TruncatedOutput, true),
            (R::CoverageMismatch, true),
            (R::ProviderError, true),
            (R::BudgetHit, true),
            (R::Cancelled, true),
            (R::EndpointAuth, true),
            (R::Panic, true),
            (R::ReviewFinished, true),
        ];
        for (reason, kept) in cases {
            assert_eq!(reason.kept_when_quiet(), kept, "{reason:?}");
        }
        let collector = std::sync::Arc::new(Collector::default());
        let quiet = Quiet(collector.clone());
        for reason in [R::ReviewStarted, R::ProviderError, R::ReviewFinished] {
            quiet.emit(&Diagnostic {
                job_id: "j".into(),
                label: None,
                stage: "lane",
                source_count: None,
                hunk_count: None,
                reason,
            });
        }
        let kept: Vec<_> = collector.lines().iter().map(|d| d.reason).collect();
        assert_eq!(kept, [R::ProviderError, R::ReviewFinished]);
    }

    #[test]
    fn endpoint_reasons_spell_the_problem_codes() {
        let problems = [
            P::Unreachable {
                url: String::new(),
                detail: String::new(),
            },
            P::Tls {
                url: String::new(),
                detail: String::new(),
            },
            P::Timeout { url: String::new() },
            P::WrongPath {
                url: String::new(),
                suggestion: None,
            },
            P::Refused {
                status: 401,
                key_sent: true,
                detail: String::new(),
            },
            P::UnknownModel {
                model: String::new(),
                available: vec![],
            },
            P::RateLimited {
                retry_after: None,
                detail: String::new(),
            },
            P::UnknownDeployment {
                deployment: None,
                url: String::new(),
            },
            P::ServerError {
                status: 500,
                url: String::new(),
                detail: String::new(),
            },
        ];
        for problem in problems {
            let reason = ReasonCode::from_endpoint_problem(&problem);
            assert_eq!(serde_json::to_value(reason).unwrap(), problem.code());
        }
    }
}
