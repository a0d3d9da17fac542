//! The terminal presenter: one spinner line of live status on an interactive stderr.

use indicatif::{ProgressBar, ProgressStyle};
use vouch_host::progress::{Presenter, ProgressEvent};

/// Shows milestones as a spinner message; a coverage retry is shown as live status with
/// counts only (never the file list).
pub struct TerminalPresenter {
    bar: ProgressBar,
}

impl TerminalPresenter {
    /// A spinner on stderr.
    pub fn new() -> Self {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        TerminalPresenter { bar }
    }
}

impl Presenter for TerminalPresenter {
    fn show(&self, event: &ProgressEvent) -> Result<(), String> {
        let msg = match event {
            ProgressEvent::ReviewStarted { files, instances } => {
                format!("reviewing {files} file(s) with {instances} stage instance(s)")
            }
            ProgressEvent::StageStarted { label } => format!("{label}: investigating"),
            ProgressEvent::StageFinished {
                label,
                candidates,
                failed,
            } => {
                if *failed {
                    format!("{label}: failed")
                } else {
                    format!("{label}: {candidates} candidate(s)")
                }
            }
            ProgressEvent::ReviewerCoverageRetry {
                label,
                missing,
                unexpected,
                reported_incomplete,
            } => format!(
                "{label}: coverage retry ({missing} missing, {unexpected} unexpected{})",
                if *reported_incomplete {
                    ", reported incomplete"
                } else {
                    ""
                }
            ),
            ProgressEvent::VerificationStarted { candidates } => {
                format!("verifying {candidates} candidate(s)")
            }
            ProgressEvent::ReviewFinished { outcome } => {
                self.bar.finish_and_clear();
                format!("review finished: {outcome}")
            }
        };
        self.bar.set_message(msg);
        Ok(())
    }
}
