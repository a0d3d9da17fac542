//! The terminal presenter: one live line per running stage (label, phase, elapsed) under
//! a header with the done/total count; milestones and retries printed above them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use vouch_host::progress::{Presenter, ProgressEvent};

/// Live lines of a review on an interactive stderr; a coverage retry is shown with counts
/// only (never the file list).
pub struct TerminalPresenter {
    multi: MultiProgress,
    header: ProgressBar,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: BTreeMap<String, ProgressBar>,
    done: usize,
    total: usize,
}

fn stage_style() -> ProgressStyle {
    ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl TerminalPresenter {
    /// A header line and one line per running stage, on stderr.
    pub fn new() -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let header = multi.add(ProgressBar::new_spinner());
        header.set_style(
            ProgressStyle::with_template("{msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        header.enable_steady_tick(std::time::Duration::from_millis(250));
        TerminalPresenter {
            multi,
            header,
            state: Mutex::new(State::default()),
        }
    }

    fn count(&self, state: &mut State) {
        // The plan's count leaves out the audit and the verifier: grow it as they start.
        state.total = state.total.max(state.done + state.running.len());
        self.header.set_message(format!(
            "vouch: {}/{} stage(s) done, {} running",
            state.done,
            state.total,
            state.running.len()
        ));
    }

    fn start(&self, state: &mut State, label: &str, phase: &str) {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(stage_style());
        bar.set_prefix(label.to_owned());
        bar.set_message(phase.to_owned());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        if let Some(old) = state.running.insert(label.to_owned(), bar) {
            old.finish_and_clear();
        }
        self.count(state);
    }
}

impl Presenter for TerminalPresenter {
    fn show(&self, event: &ProgressEvent) -> Result<(), String> {
        let mut state = self.state.lock().map_err(|_| "poisoned".to_string())?;
        match event {
            ProgressEvent::ReviewStarted { files, instances } => {
                state.total = *instances;
                let _ = self.multi.println(format!(
                    "vouch: reviewing {files} file(s) with {instances} stage instance(s)"
                ));
                self.count(&mut state);
            }
            ProgressEvent::StageStarted { label } => self.start(&mut state, label, "investigating"),
            ProgressEvent::StageFinished {
                label,
                candidates,
                failed,
            } => {
                if let Some(bar) = state.running.remove(label) {
                    bar.finish_and_clear();
                }
                state.done += 1;
                let outcome = if *failed {
                    "failed".to_string()
                } else {
                    format!("{candidates} candidate(s)")
                };
                let _ = self.multi.println(format!("  {label}: {outcome}"));
                self.count(&mut state);
            }
            ProgressEvent::ReviewerCoverageRetry {
                label,
                missing,
                unexpected,
                reported_incomplete,
            } => {
                let retry = format!(
                    "coverage retry ({missing} missing, {unexpected} unexpected{})",
                    if *reported_incomplete {
                        ", reported incomplete"
                    } else {
                        ""
                    }
                );
                let _ = self.multi.println(format!("  {label}: {retry}"));
                if let Some(bar) = state.running.get(label) {
                    bar.set_message(retry);
                }
            }
            ProgressEvent::VerificationStarted { candidates } => {
                let phase = format!("verifying {candidates} candidate(s)");
                self.start(&mut state, "verifier", &phase);
            }
            ProgressEvent::ReviewFinished { outcome } => {
                // Stages still shown (the verifier reports no finish) ended with the review.
                for (_, bar) in std::mem::take(&mut state.running) {
                    bar.finish_and_clear();
                    state.done += 1;
                }
                state.total = state.total.max(state.done);
                self.header.finish_and_clear();
                let _ = self.multi.clear();
                eprintln!(
                    "vouch: review finished: {outcome} ({}/{} stage(s) done)",
                    state.done, state.total
                );
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
