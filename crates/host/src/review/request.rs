//! What a caller gives a review ([`ReviewRequest`] and [`ReviewServices`]) and what it
//! gets back ([`ReviewOutcome`], or a [`ReviewError`] when no report can be made).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use vouch_abi::PluginTable;
use vouch_llm::Exchanges;
use vouch_report::ReviewReport;

use super::{PullRequestText, ToolsMode};
use crate::diagnostics::DiagnosticSink;
use crate::manifest::EndpointFlags;
use crate::progress::Presenter;
use crate::settings::{SettingsError, UserSettings};

/// One review as the user asked for it: the range, the composition and endpoint
/// settings, the pull request's text, and the overrides given on the command line.
pub struct ReviewRequest {
    /// The git repository (any folder inside it).
    pub repo: PathBuf,
    /// Base revision; `None`: the merge base with the default branch.
    pub base: Option<String>,
    /// Head revision.
    pub head: String,
    /// The user configuration (profile, pins, ceilings) of this run.
    pub settings: UserSettings,
    /// The composition manifest; `None`: the user's default, else the built-in one.
    pub manifest: Option<PathBuf>,
    /// The endpoint as the command line names it (base URL, model, key variable).
    pub endpoint: EndpointFlags,
    /// Tools on or off over the manifest's setting; `None` keeps the manifest's.
    pub tools: Option<ToolsMode>,
    /// Stage instances at once, over the manifest's.
    pub concurrency: Option<usize>,
    /// Per-request timeout, over the endpoint's.
    pub timeout: Option<Duration>,
    /// The pull request's title and body (the outcome investigator's intent).
    pub pull_request: PullRequestText,
    /// Whether the reviewed repository's `.vouch/review.toml` applies.
    pub repo_config: bool,
    /// Most bytes of source given inline per stage execution (`None`: each shard's
    /// budget).
    pub inline_bytes: Option<usize>,
    /// The response cache, recording or replay every model request goes through.
    pub exchanges: Option<Arc<Exchanges>>,
    /// The command line, as the embedded final report names it.
    pub command_line: String,
}

impl ReviewRequest {
    /// A request for `base..head` of `repo` under `settings`, with nothing else set:
    /// the default manifest, the endpoint from the environment and the settings, the
    /// manifest's tools and concurrency, no pull-request text, the repository's own
    /// configuration applied, no exchange layer.
    pub fn new(
        repo: PathBuf,
        base: Option<String>,
        head: String,
        settings: UserSettings,
    ) -> ReviewRequest {
        ReviewRequest {
            repo,
            base,
            head,
            settings,
            manifest: None,
            endpoint: EndpointFlags::default(),
            tools: None,
            concurrency: None,
            timeout: None,
            pull_request: PullRequestText::default(),
            repo_config: true,
            inline_bytes: None,
            exchanges: None,
            command_line: "vouch review".into(),
        }
    }
}

/// What a review reports to and is stopped by, and the specialists built into the
/// caller.
pub struct ReviewServices {
    /// The built-in specialists' tables (the same C-ABI path as dynamic plugins).
    pub builtins: Vec<&'static PluginTable>,
    /// Progress events (the review starts showing at its first stage).
    pub presenter: Arc<dyn Presenter>,
    /// Structured diagnostics; flushed as each phase that a display may own ends.
    pub diagnostics: Arc<dyn DiagnosticSink>,
    /// Cancels the review: it ends `aborted`, its report made all the same.
    pub cancel: CancellationToken,
    /// Called once the review's working set (patches, parses, prefetch) is dropped and
    /// before its report is built (the binary returns free heap pages to the system).
    pub working_set_dropped: fn(),
}

/// A finished review.
pub struct ReviewOutcome {
    /// Its report, self-checked against the report schema.
    pub report: ReviewReport,
}

/// Why a review made no report.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// Something the user gave cannot be used (range, manifest, configuration,
    /// endpoint); the message says what to change.
    #[error("{0}")]
    Usage(String),
    /// vouch failed itself (a bug in vouch); nothing was written.
    #[error("{0}")]
    Internal(String),
}

impl From<SettingsError> for ReviewError {
    fn from(e: SettingsError) -> ReviewError {
        ReviewError::Usage(e.0)
    }
}

impl ReviewError {
    /// A usage error from any displayable cause.
    pub(crate) fn usage(e: impl std::fmt::Display) -> ReviewError {
        ReviewError::Usage(e.to_string())
    }
}
