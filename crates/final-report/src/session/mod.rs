//! The session model: what the transcript shows the session did, built from the
//! transcript alone (the only evidence the reporting agent cannot edit afterwards).
//!
//! Per working directory (following `cwd`, `cd DIR && ...`, `pushd`/`popd`, `git -C DIR`,
//! `git worktree add/remove`, `git clone`, and the directory arguments of local git and
//! file tools) the model keeps the HEAD it last saw set or read, and every mutation since
//! that HEAD was checked out that has not been undone. It records every action that
//! mutates something (shell command or tool call, with its route), every read of
//! configuration/credential/profile material (by path class), and every test run with
//! its directory, the HEAD and pending mutations of that directory when it ran, and the
//! counts its recorded output reports.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::classify::{self, ConfigClass, Effect, Refs, Scope, SimpleCommand, TreeChange};
use crate::model::TestCounts;
use crate::test_scope;
use crate::transcript::TranscriptEntry;

mod commands;
mod git;
#[cfg(test)]
mod tests;
mod text;

pub(crate) use text::*;

/// How an action reached its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// A shell command in the entry's working directory.
    Shell,
    /// A shell command after `cd DIR &&` / `pushd DIR` in the same line.
    CdAnd,
    /// `git -C DIR ...`.
    GitC,
    /// An MCP or agent tool call.
    Tool,
}

impl Route {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Route::Shell => "shell command",
            Route::CdAnd => "shell command after cd",
            Route::GitC => "git -C command",
            Route::Tool => "tool call",
        }
    }
}

/// One thing the session did that the rules care about.
#[derive(Debug, Clone)]
pub(crate) struct Action {
    pub seq: u64,
    /// The directory it acted on, when known.
    pub dir: Option<String>,
    pub route: Route,
    pub effect: Effect,
    /// The whole command line (normalised) or the tool name.
    pub text: String,
    /// The tool name for tool calls.
    pub tool: Option<String>,
}

/// Whether an uncommitted change or a moved HEAD contaminates a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    pub seq: u64,
    pub what: String,
    /// True when the change moved HEAD (a commit, a completed merge, a rebase).
    pub committed: bool,
}

/// A working directory as the model sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct DirState {
    /// The HEAD last checked out or read (a SHA or a ref name).
    pub head: Option<String>,
    /// Mutations since that HEAD was checked out, not undone.
    pub pending: Vec<Pending>,
    /// Created in the session by `git worktree add` or `git clone` (isolated).
    pub isolated: bool,
}

/// One test run.
#[derive(Debug, Clone)]
pub(crate) struct TestRun {
    pub seq: u64,
    pub command: String,
    pub dir: Option<String>,
    /// The directory's HEAD when it ran.
    pub head: Option<String>,
    /// Mutations of the directory pending when it ran.
    pub pending: Vec<Pending>,
    /// Counts read from the recorded output.
    pub counts: Option<TestCounts>,
    pub exit_code: Option<i64>,
    /// Whether a result was recorded for it.
    pub recorded: bool,
    /// How it selected a subset of the tests (a name filter in the command, or
    /// "N filtered out"/"N deselected" in its output), if it did.
    pub filter: Option<String>,
    /// The one package it ran (`cargo test -p X`): a subset when the directory is a
    /// workspace ([`Session::build`] decides at the end).
    pub package: Option<String>,
}

/// A read of configuration, credential or profile material.
#[derive(Debug, Clone)]
pub(crate) struct ConfigRead {
    pub seq: u64,
    pub text: String,
    pub class: ConfigClass,
    pub tool: bool,
}

/// Where a directory is, as the model can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A worktree or clone the session created.
    Isolated,
    /// The repository the session created worktrees from, or that the report itself
    /// calls the main checkout.
    Main,
    Unknown,
}

/// The session model.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    pub actions: Vec<Action>,
    pub tests: Vec<TestRun>,
    pub config_reads: Vec<ConfigRead>,
    pub dirs: BTreeMap<String, DirState>,
    /// Directories worktrees were added from.
    pub main_dirs: Vec<String>,
    /// Recorded results by the seq of their call.
    pub results: BTreeMap<u64, Value>,
    /// The directory each command entry started in, by seq.
    pub command_dirs: BTreeMap<u64, String>,
    /// The directory each command entry ended in (after `cd`/`pushd`), by seq.
    pub command_end_dirs: BTreeMap<u64, String>,
    /// Variables the session exported (`export A=1`), in order.
    pub exported: Vec<(String, String)>,
    /// Directories the session showed to be cargo workspaces.
    pub workspace_dirs: Vec<String>,
}

impl Session {
    /// Build the model from a transcript.
    pub(crate) fn build(transcript: &[TranscriptEntry]) -> Self {
        let mut s = Session::default();
        for entry in transcript {
            match entry {
                TranscriptEntry::Command {
                    seq,
                    result: Some(r),
                    ..
                }
                | TranscriptEntry::Tool {
                    seq,
                    result: Some(r),
                    ..
                } => {
                    s.results.insert(*seq, r.clone());
                }
                TranscriptEntry::Result { of, result, .. } => {
                    s.results.entry(*of).or_insert_with(|| result.clone());
                }
                _ => {}
            }
        }
        let mut cwd: Option<String> = None;
        let mut stack: Vec<Option<String>> = Vec::new();
        for entry in transcript {
            match entry {
                TranscriptEntry::Command {
                    seq,
                    command,
                    cwd: c,
                    ..
                } => {
                    if let Some(c) = c {
                        cwd = Some(normalize_path(c));
                    }
                    cwd = s.command(*seq, command, cwd.clone(), &mut stack);
                }
                TranscriptEntry::Tool {
                    seq,
                    name,
                    arguments,
                    ..
                } => s.tool(*seq, name, arguments, cwd.as_deref()),
                _ => {}
            }
        }
        s.package_runs_in_workspaces();
        s
    }

    /// A package run (`cargo test -p X`) in a directory the session showed to be a
    /// workspace (or where it ran another package) selected a subset.
    fn package_runs_in_workspaces(&mut self) {
        let runs = self.tests.clone();
        for run in self.tests.iter_mut().filter(|r| r.filter.is_none()) {
            let (Some(package), Some(dir)) = (&run.package, &run.dir) else {
                continue;
            };
            let other_package = runs
                .iter()
                .any(|r| r.dir == run.dir && r.package.as_ref().is_some_and(|p| p != package));
            if other_package || self.workspace_dirs.contains(dir) {
                run.filter = Some(format!(
                    "`-p {package}` runs one package of the workspace {dir}"
                ));
            }
        }
    }

    /// Where a directory is.
    pub(crate) fn place(&self, dir: &str) -> Place {
        let within = |root: &str| dir == root || dir.starts_with(&format!("{root}/"));
        if self.dirs.iter().any(|(d, st)| st.isolated && within(d)) {
            Place::Isolated
        } else if self.main_dirs.iter().any(|d| within(d)) {
            Place::Main
        } else {
            Place::Unknown
        }
    }

    /// Mark a directory as the main checkout (the report says so for a command there).
    pub(crate) fn add_main_dir(&mut self, dir: &str) {
        if self.place(dir) == Place::Unknown {
            self.main_dirs.push(dir.to_owned());
        }
    }

    /// The state key of a directory: the innermost known directory containing it.
    fn key_for(&self, dir: &str) -> String {
        self.dirs
            .keys()
            .filter(|d| dir == d.as_str() || dir.starts_with(&format!("{d}/")))
            .max_by_key(|d| d.len())
            .cloned()
            .unwrap_or_else(|| dir.to_owned())
    }

    /// The innermost directory the model already tracks that contains `path`.
    fn known_dir(&self, path: &str) -> Option<String> {
        self.dirs
            .keys()
            .filter(|d| path == d.as_str() || path.starts_with(&format!("{d}/")))
            .max_by_key(|d| d.len())
            .cloned()
    }

    fn state(&mut self, dir: &str) -> &mut DirState {
        let key = self.key_for(dir);
        self.dirs.entry(key).or_default()
    }

    fn push_action(
        &mut self,
        seq: u64,
        dir: Option<String>,
        route: Route,
        effect: Effect,
        text: &str,
        tool: Option<&str>,
    ) {
        self.actions.push(Action {
            seq,
            dir,
            route,
            effect,
            text: text.to_owned(),
            tool: tool.map(str::to_owned),
        });
    }

    /// The recorded result of the call at `seq`.
    pub(crate) fn result(&self, seq: u64) -> Option<&Value> {
        self.results.get(&seq)
    }
}
