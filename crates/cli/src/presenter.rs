//! The terminal presenter: one live line per running stage (label, phase, turns and tool
//! calls, elapsed) under a header with the done/total count; finished stages, model
//! retries and coverage retries are printed above them as they happen.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use vouch_host::progress::{Presenter, ProgressEvent};

/// Live lines of a review on an interactive stderr; a coverage retry is shown with counts
/// only (never the file list).
pub(crate) struct TerminalPresenter {
    multi: MultiProgress,
    /// The header line, drawn from the first event on (nothing shows before the review
    /// starts, so the endpoint check's messages are not drawn over).
    header: std::sync::OnceLock<ProgressBar>,
    state: Mutex<State>,
}

/// One running stage's line and what it shows.
struct Running {
    bar: ProgressBar,
    phase: String,
    turns: u32,
    tool_calls: u32,
    started: Instant,
}

impl Running {
    fn counts(&self) -> String {
        format!("{} turn(s), {} tool call(s)", self.turns, self.tool_calls)
    }

    fn redraw(&self) {
        self.bar
            .set_message(format!("{} · {}", self.phase, self.counts()));
    }
}

#[derive(Default)]
struct State {
    running: BTreeMap<String, Running>,
    done: usize,
    total: usize,
}

fn stage_style() -> ProgressStyle {
    ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl TerminalPresenter {
    /// A header line and one line per running stage, on stderr.
    pub(crate) fn new() -> Self {
        TerminalPresenter {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            header: std::sync::OnceLock::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// The header line, added to the display on first use.
    fn header(&self) -> &ProgressBar {
        self.header.get_or_init(|| {
            let header = self.multi.add(ProgressBar::new_spinner());
            header.set_style(
                ProgressStyle::with_template("{msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            header.enable_steady_tick(std::time::Duration::from_millis(250));
            header
        })
    }

    fn count(&self, state: &mut State) {
        // The plan's count leaves out the verifier: grow it as it starts.
        state.total = state.total.max(state.done + state.running.len());
        self.header().set_message(format!(
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
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        let running = Running {
            bar,
            phase: phase.to_owned(),
            turns: 0,
            tool_calls: 0,
            started: Instant::now(),
        };
        running.redraw();
        if let Some(old) = state.running.insert(label.to_owned(), running) {
            old.bar.finish_and_clear();
        }
        self.count(state);
    }

    fn finish(&self, state: &mut State, label: &str, outcome: &str) {
        let line = match state.running.remove(label) {
            Some(r) => {
                r.bar.finish_and_clear();
                format!(
                    "  {label}: {outcome} · {} in {:.1}s",
                    r.counts(),
                    r.started.elapsed().as_secs_f64()
                )
            }
            None => format!("  {label}: {outcome}"),
        };
        state.done += 1;
        let _ = self.multi.println(line);
        self.count(state);
    }

    fn retry(&self, state: &mut State, label: &str, line: String, phase: String) {
        let _ = self.multi.println(format!("  {label}: {line}"));
        if let Some(r) = state.running.get_mut(label) {
            r.phase = phase;
            r.redraw();
        }
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
            ProgressEvent::StageStarted { label } => self.start(&mut state, label, "reviewing"),
            ProgressEvent::StageActivity {
                label,
                turns,
                tool_calls,
            } => {
                if let Some(r) = state.running.get_mut(label) {
                    r.turns = *turns;
                    r.tool_calls = *tool_calls;
                    r.redraw();
                }
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
                self.finish(&mut state, label, &outcome);
            }
            ProgressEvent::StageNotStarted { label, reason } => {
                self.finish(&mut state, label, &format!("not started: {reason}"));
            }
            ProgressEvent::ModelRetry {
                label,
                attempt,
                cause,
                wait_ms,
            } => {
                let why = cause.to_string();
                let line = format!(
                    "model request {attempt} failed ({why}); retrying in {:.1}s",
                    *wait_ms as f64 / 1000.0
                );
                self.retry(&mut state, label, line, format!("retrying after {why}"));
            }
            ProgressEvent::ReviewerCoverageRetry {
                label,
                missing,
                unexpected,
                reported_incomplete,
            } => {
                let retry = coverage_retry(*missing, *unexpected, *reported_incomplete);
                self.retry(&mut state, label, retry.clone(), retry);
            }
            ProgressEvent::VerificationStarted { label, candidates } => {
                let phase = format!("verifying {candidates} candidate(s)");
                self.start(&mut state, label, &phase);
            }
            ProgressEvent::ReviewFinished { outcome } => self.review_finished(&mut state, outcome),
        }
        Ok(())
    }
}

impl TerminalPresenter {
    /// The end of the review: stages still shown (the verifier reports no finish) ended
    /// with it; the live lines give way to one closing line.
    fn review_finished(&self, state: &mut State, outcome: &str) {
        let labels: Vec<String> = state.running.keys().cloned().collect();
        for label in labels {
            self.finish(state, &label, "done");
        }
        state.total = state.total.max(state.done);
        if let Some(header) = self.header.get() {
            header.finish_and_clear();
        }
        let _ = self.multi.clear();
        eprintln!(
            "vouch: review finished: {outcome} ({}/{} stage(s) done)",
            state.done, state.total
        );
    }
}

/// The line and phase of a reviewer's coverage retry.
fn coverage_retry(missing: usize, unexpected: usize, reported_incomplete: bool) -> String {
    format!(
        "coverage retry ({missing} missing, {unexpected} unexpected{})",
        if reported_incomplete {
            ", reported incomplete"
        } else {
            ""
        }
    )
}

/// Diagnostics held while the progress display owns the terminal, written as JSON lines
/// to stderr once it is gone (so no line lands between its frames).
#[derive(Default)]
pub(crate) struct HeldDiagnostics {
    lines: std::sync::Mutex<Vec<vouch_host::diagnostics::Diagnostic>>,
}

impl HeldDiagnostics {
    /// Writes every held line to stderr, in order, and forgets them.
    pub(crate) fn flush(&self) {
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

    fn flush(&self) {
        HeldDiagnostics::flush(self);
    }
}
