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
        match event {
            // Milestones: one concise line each, kept above the live status.
            ProgressEvent::ReviewStarted { files, instances } => {
                self.bar.println(format!(
                    "vouch: reviewing {files} file(s) with {instances} stage instance(s)"
                ));
            }
            ProgressEvent::StageFinished {
                label,
                candidates,
                failed,
            } => {
                let outcome = if *failed {
                    "failed".to_string()
                } else {
                    format!("{candidates} candidate(s)")
                };
                self.bar.println(format!("  {label}: {outcome}"));
            }
            ProgressEvent::ReviewFinished { outcome } => {
                self.bar.finish_and_clear();
                eprintln!("vouch: review finished: {outcome}");
            }
            // Live status: replaced by the next event; a retry shows counts, never paths.
            ProgressEvent::StageStarted { label } => {
                self.bar.set_message(format!("{label}: investigating"))
            }
            ProgressEvent::ReviewerCoverageRetry {
                label,
                missing,
                unexpected,
                reported_incomplete,
            } => {
                self.bar.set_message(format!(
                    "{label}: coverage retry ({missing} missing, {unexpected} unexpected{})",
                    if *reported_incomplete {
                        ", reported incomplete"
                    } else {
                        ""
                    }
                ));
            }
            ProgressEvent::VerificationStarted { candidates } => {
                self.bar
                    .set_message(format!("verifying {candidates} candidate(s)"));
            }
        }
        Ok(())
    }
}

/// Diagnostics held while the progress display owns the terminal, written as JSON lines
/// to stderr once it is gone (so no line lands between its frames).
#[derive(Default)]
pub struct HeldDiagnostics {
    lines: std::sync::Mutex<Vec<vouch_host::diagnostics::Diagnostic>>,
}

impl HeldDiagnostics {
    /// Writes every held line to stderr, in order, and forgets them.
    pub fn flush(&self) {
        let lines = match self.lines.lock() {
            Ok(mut lines) => std::mem::take(&mut *lines),
            Err(_) => return,
        };
        let sink = vouch_host::diagnostics::JsonLines::new(std::io::stderr());
        for line in &lines {
            vouch_host::diagnostics::DiagnosticSink::emit(&sink, line);
        }
    }
}

impl vouch_host::diagnostics::DiagnosticSink for HeldDiagnostics {
    fn emit(&self, diagnostic: &vouch_host::diagnostics::Diagnostic) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(diagnostic.clone());
        }
    }
}
