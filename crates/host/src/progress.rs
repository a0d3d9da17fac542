//! Progress events and presenters. A presenter failure can never change a review's result.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use serde::Serialize;

/// A milestone or live status of a running review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "camelCase",
    tag = "event",
    rename_all_fields = "camelCase"
)]
pub enum ProgressEvent {
    /// The review starts: counts only.
    #[serde(rename = "review-started")]
    ReviewStarted {
        /// Changed files.
        files: usize,
        /// Stage instances planned.
        instances: usize,
    },
    /// A stage instance starts.
    #[serde(rename = "stage-started")]
    StageStarted {
        /// Instance label.
        label: String,
    },
    /// A stage instance finished.
    #[serde(rename = "stage-finished")]
    StageFinished {
        /// Instance label.
        label: String,
        /// Candidates it proposed.
        candidates: usize,
        /// True when it ended without a usable result.
        failed: bool,
    },
    /// A planned stage instance was not started: a stage before it failed, so the
    /// review cannot complete and no further model request is spent on it.
    #[serde(rename = "stage-not-started")]
    StageNotStarted {
        /// Instance label.
        label: String,
        /// Why, in words (names the stage that failed).
        reason: String,
    },
    /// A running stage's agent loop moved on: its counts so far (of the current model
    /// exchange: a repair or a coverage retry starts again from zero).
    #[serde(rename = "stage-activity")]
    StageActivity {
        /// Instance label.
        label: String,
        /// Model replies received.
        turns: u32,
        /// Tool calls answered.
        tool_calls: u32,
    },
    /// A stage's model request failed and is sent again after a wait.
    #[serde(rename = "model-retry")]
    ModelRetry {
        /// Instance label.
        label: String,
        /// The failed attempt's number (1 for the first).
        attempt: u32,
        /// Why it failed: an HTTP status, the request timeout, or a failed connection.
        cause: vouch_llm::RetryCause,
        /// The wait before the next attempt, in milliseconds.
        wait_ms: u64,
    },
    /// Rule (coverage contract, "Progress"): before a retry the host emits a
    /// `reviewer-coverage-retry` event with the label, missing-file count,
    /// unexpected-file count and whether the reviewer said `complete: false`.
    #[serde(rename = "reviewer-coverage-retry")]
    ReviewerCoverageRetry {
        /// Instance label.
        label: String,
        /// Number of missing files.
        missing: usize,
        /// Number of unexpected files.
        unexpected: usize,
        /// The reviewer itself said `complete: false`.
        reported_incomplete: bool,
    },
    /// Verification starts.
    #[serde(rename = "verification-started")]
    VerificationStarted {
        /// The verifier's label (its id): the label of its activity events.
        label: String,
        /// Candidates to decide.
        candidates: usize,
    },
    /// The review finished.
    #[serde(rename = "review-finished")]
    ReviewFinished {
        /// The outcome, kebab-case.
        outcome: String,
    },
}

/// Receives progress events. Implementations may fail or even panic: the host ignores
/// both (see [`notify`]).
pub trait Presenter: Send + Sync {
    /// Shows one event.
    ///
    /// # Errors
    /// Any message; the host ignores it.
    fn show(&self, event: &ProgressEvent) -> Result<(), String>;
}

/// A presenter that shows nothing.
pub struct Silent;

impl Presenter for Silent {
    fn show(&self, _: &ProgressEvent) -> Result<(), String> {
        Ok(())
    }
}

/// A presenter that records every event (for tests and for the report's timeline).
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<ProgressEvent>>,
}

impl Recorder {
    /// The events so far.
    pub fn events(&self) -> Vec<ProgressEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl Presenter for Recorder {
    fn show(&self, event: &ProgressEvent) -> Result<(), String> {
        self.events
            .lock()
            .map_err(|_| "poisoned".to_string())?
            .push(event.clone());
        Ok(())
    }
}

/// Sends an event to a presenter, swallowing its errors and panics: a failing presenter
/// cannot change the review's result.
pub fn notify(presenter: &dyn Presenter, event: ProgressEvent) {
    let _ = catch_unwind(AssertUnwindSafe(|| presenter.show(&event)));
}
