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

use crate::classify::{self, Kind, SimpleCommand};
use crate::model::TestCounts;
use crate::test_scope::{self, Scope};
use crate::transcript::TranscriptEntry;

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
    pub kind: Kind,
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
    pub class: &'static str,
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
        kind: Kind,
        text: &str,
        tool: Option<&str>,
    ) {
        self.actions.push(Action {
            seq,
            dir,
            route,
            kind,
            text: text.to_owned(),
            tool: tool.map(str::to_owned),
        });
    }

    /// One command entry; returns the working directory after it.
    fn command(
        &mut self,
        seq: u64,
        line: &str,
        cwd: Option<String>,
        stack: &mut Vec<Option<String>>,
    ) -> Option<String> {
        let text = classify::normalize(line);
        if let Some(start) = &cwd {
            self.command_dirs.insert(seq, start.clone());
        }
        let mut here = cwd;
        let mut moved = false;
        let exit_code = self
            .results
            .get(&seq)
            .and_then(|r| r.get("exitCode"))
            .and_then(Value::as_i64);
        for simple in classify::split_shell(line) {
            let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
            match words.first().copied() {
                Some("cd") => {
                    here = resolve(here.as_deref(), words.get(1).copied().unwrap_or("~"));
                    moved = true;
                    continue;
                }
                Some("pushd") => {
                    stack.push(here.clone());
                    here = resolve(here.as_deref(), words.get(1).copied().unwrap_or("~"));
                    moved = true;
                    continue;
                }
                Some("popd") => {
                    here = stack.pop().flatten();
                    continue;
                }
                _ => {}
            }
            let git_c = git_c_dir(&words).map(|d| resolve(here.as_deref(), d));
            let (dir, route) = match git_c {
                Some(d) => (d, Route::GitC),
                None if moved => (here.clone(), Route::CdAnd),
                None => (here.clone(), Route::Shell),
            };
            self.simple(seq, &text, &simple, dir, route, exit_code);
        }
        if let Some(end) = &here {
            self.command_end_dirs.insert(seq, end.clone());
        }
        here
    }

    fn simple(
        &mut self,
        seq: u64,
        text: &str,
        simple: &SimpleCommand,
        dir: Option<String>,
        route: Route,
        exit_code: Option<i64>,
    ) {
        let kinds = classify::classify_simple(simple);
        let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
        let program = words
            .first()
            .map(|w| w.rsplit('/').next().unwrap_or(w))
            .unwrap_or("");
        if program == "git" {
            self.git_effects(seq, &words[1..], dir.as_deref(), exit_code);
        }
        self.exported.extend(test_scope::exported(&words));
        let output = self.results.get(&seq).and_then(result_text);
        if let Some(d) = &dir
            && test_scope::shows_workspace(&words, output.as_deref())
        {
            self.workspace_dirs.push(d.clone());
        }
        // `gh pr checkout N` / `tea pr checkout N` check out the PR head.
        if matches!(program, "gh" | "tea" | "glab")
            && matches!(words.get(1).copied(), Some("pr" | "pulls" | "mr"))
            && words.get(2) == Some(&"checkout")
            && let Some(d) = dir.as_deref()
        {
            let st = self.state(d);
            st.head = words.get(3).map(|n| format!("{program} pr checkout {n}"));
            st.pending.clear();
        }
        for target in &simple.writes_to {
            if let Some(d) = resolve(dir.as_deref(), target).and_then(|p| parent(&p)) {
                self.state(&d).pending.push(Pending {
                    seq,
                    what: format!("`{text}` wrote {target}"),
                    committed: false,
                });
            }
        }
        for kind in &kinds {
            match kind {
                Kind::TestRun => {
                    // A runner pointed at another directory tests that directory.
                    let dir = match classify::runner_dir(&words) {
                        Some(target) => resolve(dir.as_deref(), &target),
                        None => dir.clone(),
                    };
                    let (head, pending) = dir
                        .as_deref()
                        .map(|d| {
                            let st = self.state(d);
                            (st.head.clone(), st.pending.clone())
                        })
                        .unwrap_or_default();
                    let (filter, package) = match test_scope::test_scope(&words, &self.exported) {
                        Some(Scope::Filtered(f)) => (Some(f.describe()), None),
                        Some(Scope::Package(p)) => (None, Some(p)),
                        _ => (None, None),
                    };
                    let filter = filter.or_else(|| output.as_deref().and_then(output_filter));
                    self.tests.push(TestRun {
                        recorded: self.results.contains_key(&seq),
                        filter,
                        seq,
                        command: text.to_owned(),
                        dir,
                        head,
                        pending,
                        counts: output.as_deref().and_then(parse_counts),
                        exit_code,
                        package,
                    });
                }
                Kind::ConfigInspection => {
                    let class = words
                        .iter()
                        .find_map(|a| classify::config_path_class(a))
                        .unwrap_or("configuration/profile query");
                    self.config_reads.push(ConfigRead {
                        seq,
                        text: text.to_owned(),
                        class,
                        tool: false,
                    });
                }
                Kind::FileEdit if program != "git" && simple.writes_to.is_empty() => {
                    // Edits by program (sed -i, cp, touch, ...) change their directory,
                    // and any known directory a path they write lies in.
                    let mut touched: Vec<String> = dir.iter().cloned().collect();
                    for path in edited_paths(program, &words[1..]) {
                        if let Some(known) = resolve(dir.as_deref(), path)
                            .and_then(|p| self.known_dir(&p))
                            .filter(|k| !touched.iter().any(|t| self.key_for(t) == *k))
                        {
                            touched.push(known);
                        }
                    }
                    for d in touched {
                        self.state(&d).pending.push(Pending {
                            seq,
                            what: format!("`{text}` edited files"),
                            committed: false,
                        });
                    }
                }
                _ => {}
            }
            if !kind.categories().is_empty() || *kind == Kind::ProfileActivation {
                self.push_action(seq, dir.clone(), route, *kind, text, None);
            }
        }
    }

    /// HEAD and pending-mutation effects of one git command in `dir`.
    fn git_effects(&mut self, seq: u64, args: &[&str], dir: Option<&str>, exit_code: Option<i64>) {
        let (sub, rest) = classify::git_subcommand(args);
        let positional: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .collect();
        let has = |f: &str| rest.contains(&f);
        let Some(dir) = dir else {
            return;
        };
        let what = format!("`git {}`", args.join(" "));
        let pend = |s: &mut Self, committed: bool| {
            s.state(dir).pending.push(Pending {
                seq,
                what: what.clone(),
                committed,
            })
        };
        match sub {
            "worktree" => match positional.first().copied() {
                Some("add") => {
                    let values = values_skipping_flags(&rest[1..], &["-b", "-B", "--reason"]);
                    if let Some(path) = values.first().and_then(|p| resolve(Some(dir), p)) {
                        let head = values.get(1).map(|h| (*h).to_owned());
                        self.dirs.insert(
                            path,
                            DirState {
                                head,
                                pending: Vec::new(),
                                isolated: true,
                            },
                        );
                        if !self.main_dirs.iter().any(|d| d == dir)
                            && self.place(dir) != Place::Isolated
                        {
                            self.main_dirs.push(dir.to_owned());
                        }
                    }
                }
                // A removed worktree stays known: commands that ran there still did.
                Some("remove") => {}
                _ => {}
            },
            "clone" => {
                let values =
                    values_skipping_flags(rest, &["-b", "--branch", "--depth", "-o", "--origin"]);
                let target = values.get(1).map(|t| (*t).to_owned()).or_else(|| {
                    values.first().map(|u| {
                        u.trim_end_matches('/')
                            .rsplit('/')
                            .next()
                            .unwrap_or(u)
                            .trim_end_matches(".git")
                            .to_owned()
                    })
                });
                if let Some(path) = target.and_then(|t| resolve(Some(dir), &t)) {
                    self.dirs.insert(
                        path,
                        DirState {
                            head: None,
                            pending: Vec::new(),
                            isolated: true,
                        },
                    );
                }
            }
            "checkout" | "switch" => {
                if let Some(dash) = rest.iter().position(|a| *a == "--") {
                    if dash + 1 < rest.len() {
                        pend(self, false);
                    }
                    return;
                }
                let target = values_skipping_flags(rest, &["-b", "-B", "-c", "-C", "--orphan"]);
                if let Some(t) = target.first() {
                    let st = self.state(dir);
                    st.head = Some((*t).to_owned());
                    st.pending.clear();
                }
            }
            "reset" if has("--hard") || has("--merge") || has("--keep") => {
                let st = self.state(dir);
                match positional.first().copied() {
                    None | Some("HEAD") => st.pending.retain(|p| p.committed),
                    Some(t) if t.starts_with("HEAD") || t.starts_with("ORIG_HEAD") => {
                        st.pending.clear()
                    }
                    Some(t) => {
                        st.head = Some(t.to_owned());
                        st.pending.clear();
                    }
                }
            }
            "merge" | "rebase" | "cherry-pick" | "revert" | "am"
                if has("--abort") || has("--quit") =>
            {
                self.state(dir).pending.retain(|p| p.committed);
            }
            "merge" | "pull" => {
                let committed =
                    !(has("--no-commit") || has("--squash")) && exit_code.is_none_or(|c| c == 0);
                pend(self, committed);
            }
            "rebase" | "cherry-pick" | "revert" | "am" | "commit" => pend(self, true),
            "stash" => match positional.first().copied() {
                Some("pop" | "apply") => pend(self, false),
                Some("list" | "show") => {}
                _ => self.state(dir).pending.retain(|p| p.committed),
            },
            "restore" | "rm" | "mv" | "clean" | "apply" | "add" => pend(self, false),
            "rev-parse" if positional.first() == Some(&"HEAD") => {
                if let Some(sha) = self
                    .results
                    .get(&seq)
                    .and_then(result_text)
                    .map(|o| o.trim().to_owned())
                    .filter(|o| is_sha(o))
                {
                    self.state(dir).head = Some(sha);
                }
            }
            _ => {}
        }
    }

    /// One tool call.
    fn tool(&mut self, seq: u64, name: &str, arguments: &Value, cwd: Option<&str>) {
        let Some(kind) = classify::classify_tool(name, arguments) else {
            return;
        };
        let local_git = classify::is_local_git_tool(name);
        let dir = if local_git {
            classify::tool_repo_dir(arguments).and_then(|d| resolve(cwd, d))
        } else {
            classify::tool_path(arguments).and_then(|p| resolve(cwd, p))
        };
        match kind {
            Kind::ConfigInspection => {
                let class = classify::tool_path(arguments)
                    .and_then(classify::config_path_class)
                    .unwrap_or("configuration");
                self.config_reads.push(ConfigRead {
                    seq,
                    text: name.to_owned(),
                    class,
                    tool: true,
                });
                return;
            }
            Kind::FileEdit => {
                if let Some(d) = dir.as_deref().and_then(parent) {
                    self.state(&d).pending.push(Pending {
                        seq,
                        what: format!("tool `{name}` wrote {}", dir.as_deref().unwrap_or("")),
                        committed: false,
                    });
                }
            }
            _ if local_git => {
                if let Some(d) = dir.as_deref() {
                    self.git_tool_effects(seq, name, kind, arguments, d);
                }
            }
            _ => {}
        }
        self.push_action(seq, dir, Route::Tool, kind, name, Some(name));
    }

    fn git_tool_effects(&mut self, seq: u64, name: &str, kind: Kind, arguments: &Value, dir: &str) {
        let target = [
            "branch_name",
            "branch",
            "target",
            "revision",
            "ref",
            "commit",
            "sha",
        ]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(Value::as_str))
        .map(str::to_owned);
        let checkout =
            name.to_lowercase().contains("checkout") || name.to_lowercase().contains("switch");
        let st = self.state(dir);
        match kind {
            Kind::MergeRestore => {
                if let Some(t) = target {
                    st.head = Some(t);
                    st.pending.clear();
                } else {
                    st.pending.retain(|p| p.committed);
                }
            }
            Kind::WorktreeChange if checkout && target.is_some() => {
                st.head = target;
                st.pending.clear();
            }
            Kind::LocalMerge | Kind::WorktreeChange | Kind::RefUpdate
                if !name.contains("fetch") =>
            {
                st.pending.push(Pending {
                    seq,
                    what: format!("tool `{name}`"),
                    committed: kind != Kind::WorktreeChange,
                });
            }
            _ => {}
        }
    }

    /// The recorded result of the call at `seq`.
    pub(crate) fn result(&self, seq: u64) -> Option<&Value> {
        self.results.get(&seq)
    }
}

/// The paths an editing program writes, as written: the destination of `cp`,
/// `install`, `ln` and `rsync` (their last argument), every other argument of the rest
/// (`sed -i`, `perl -pi`, `touch`, `rm`, `mv`, `tee`, `truncate`, `chmod`). Options
/// are skipped; a sed/perl script names no known directory and falls away.
fn edited_paths<'a>(program: &str, args: &[&'a str]) -> Vec<&'a str> {
    let operands: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    match program {
        "cp" | "install" | "ln" | "rsync" => operands.last().copied().into_iter().collect(),
        _ => operands,
    }
}

/// `git -C DIR` (the last one wins, relative ones chain; here the first suffices).
fn git_c_dir<'a>(words: &[&'a str]) -> Option<&'a str> {
    let program = words.first()?;
    if program.rsplit('/').next() != Some("git") {
        return None;
    }
    words.windows(2).find(|w| w[0] == "-C").map(|w| w[1])
}

/// Positional values, skipping flags and the values of the listed flags.
fn values_skipping_flags<'a>(args: &[&'a str], with_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if with_value.contains(a) {
            skip = true;
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        out.push(*a);
    }
    out
}

/// Whether a string is a (full or abbreviated, at least 7) hex commit id.
pub(crate) fn is_sha(s: &str) -> bool {
    s.len() >= 7 && s.len() <= 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// Whether a recorded HEAD names the candidate commit: equal, or an abbreviation.
/// `None` when the HEAD is a ref name the model cannot resolve.
pub(crate) fn head_matches(head: &str, candidate: &str) -> Option<bool> {
    if !is_sha(head) {
        return None;
    }
    let (h, c) = (head.to_lowercase(), candidate.to_lowercase());
    Some(c.starts_with(&h) || h.starts_with(&c))
}

/// Lexically normalise a path (`.`/`..`, repeated and trailing slashes).
pub(crate) fn normalize_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `path` resolved against `base` (absolute and `~` paths stand alone).
pub(crate) fn resolve(base: Option<&str>, path: &str) -> Option<String> {
    let path = path.trim_matches(|c| c == '"' || c == '\'');
    if path.starts_with('/') || path.starts_with('~') || path.starts_with('$') {
        return Some(normalize_path(path));
    }
    base.map(|b| normalize_path(&format!("{b}/{path}")))
}

fn parent(path: &str) -> Option<String> {
    path.rsplit_once('/').map(|(p, _)| {
        if p.is_empty() {
            "/".to_owned()
        } else {
            p.to_owned()
        }
    })
}

/// The text of a recorded result: `output`/`stdout` (plus `stderr`), or a string.
pub(crate) fn result_text(result: &Value) -> Option<String> {
    if let Some(s) = result.as_str() {
        return Some(s.to_owned());
    }
    let parts: Vec<&str> = ["output", "stdout", "stderr", "text"]
        .iter()
        .filter_map(|k| result.get(*k).and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// The subset a runner's output says it ran: cargo's "N filtered out" or pytest's
/// "N deselected" with N > 0.
pub(crate) fn output_filter(output: &str) -> Option<String> {
    let lower = output.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    tokens.windows(3).find_map(|w| {
        let n = w[0].parse::<u64>().ok().filter(|n| *n > 0)?;
        let said = match (w[1], w[2]) {
            ("filtered", "out") => "filtered out",
            ("deselected", _) => "deselected",
            _ => return None,
        };
        Some(format!("its output says {n} {said}"))
    })
}

/// Test counts from a runner's closing lines, summed over every such line: cargo test
/// (`test result: ok. N passed; M failed; K ignored`), pytest and the plain form
/// (`N passed, M failed, K skipped`), go test (`ok`/`FAIL` lines count nothing). The
/// summary lines of test files or suites and snapshots (jest's `Test Suites: 10
/// passed`, vitest's `Test Files  12 passed`, `Snapshots: 1 passed`) count no tests.
pub(crate) fn parse_counts(output: &str) -> Option<TestCounts> {
    let mut total = TestCounts {
        passed: 0,
        failed: 0,
        skipped: 0,
        ignored: 0,
    };
    let mut found = false;
    for line in output.lines() {
        let lower = line.to_lowercase();
        if !(lower.contains("passed") || lower.contains("failed")) {
            continue;
        }
        let label = lower.trim_start();
        if ["test suites", "test files", "snapshots"]
            .iter()
            .any(|l| label.starts_with(l))
        {
            continue;
        }
        let tokens: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let mut line_found = false;
        for pair in tokens.windows(2) {
            let Ok(n) = pair[0].parse::<u64>() else {
                continue;
            };
            let slot = match pair[1] {
                "passed" => &mut total.passed,
                "failed" | "errors" | "error" => &mut total.failed,
                "skipped" | "deselected" => &mut total.skipped,
                "ignored" | "xfailed" => &mut total.ignored,
                _ => continue,
            };
            *slot += n;
            line_found = true;
        }
        found |= line_found;
    }
    found.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::parse_transcript;

    fn session(lines: &str) -> Session {
        Session::build(&parse_transcript(lines).unwrap())
    }

    #[test]
    fn paths_resolve_and_normalise() {
        assert_eq!(resolve(Some("/src/w"), "../w-pr"), Some("/src/w-pr".into()));
        assert_eq!(resolve(None, "rel"), None);
        assert_eq!(normalize_path("/a/./b//c/"), "/a/b/c");
    }

    #[test]
    fn directories_follow_cwd_cd_and_git_c() {
        let s = session(
            r#"{"seq":1,"kind":"command","command":"git worktree add ../wt c0ffee1","cwd":"/src/r"}
{"seq":2,"kind":"command","command":"cd ../wt && git merge --no-commit origin/main","cwd":"/src/r"}
{"seq":3,"kind":"command","command":"git -C /src/wt merge --abort","cwd":"/src/r"}
{"seq":4,"kind":"command","command":"echo x > notes.txt","cwd":"/src/wt"}
{"seq":5,"kind":"command","command":"pytest -q","cwd":"/src/wt","result":{"exitCode":0,"output":"3 passed, 1 skipped in 0.1s"}}
{"seq":6,"kind":"command","command":"pytest -q","cwd":"/src/r"}"#,
        );
        assert_eq!(s.place("/src/wt"), Place::Isolated);
        assert_eq!(s.place("/src/r"), Place::Main);
        let routes: Vec<(u64, Route, Kind)> =
            s.actions.iter().map(|a| (a.seq, a.route, a.kind)).collect();
        assert!(routes.contains(&(2, Route::CdAnd, Kind::LocalMerge)));
        assert!(routes.contains(&(3, Route::GitC, Kind::MergeRestore)));
        let run = &s.tests[0];
        assert_eq!(run.dir.as_deref(), Some("/src/wt"));
        assert_eq!(run.head.as_deref(), Some("c0ffee1"));
        assert_eq!(run.pending.len(), 1, "{:?}", run.pending);
        assert_eq!(run.pending[0].seq, 4);
        assert_eq!(
            run.counts,
            Some(TestCounts {
                passed: 3,
                failed: 0,
                skipped: 1,
                ignored: 0
            })
        );
        assert_eq!(s.tests[1].dir.as_deref(), Some("/src/r"));
    }

    #[test]
    fn tools_act_on_their_directories_and_checkouts_reset_pending_changes() {
        let s = session(
            r#"{"seq":1,"kind":"command","command":"git pull origin main","cwd":"/src/r"}
{"seq":2,"kind":"command","command":"gh pr checkout 42","cwd":"/src/r"}
{"seq":3,"kind":"command","command":"cargo test","cwd":"/src/r"}
{"seq":4,"kind":"tool","name":"mcp__git__git_merge","arguments":{"repo_path":"/src/r","branch":"main"}}
{"seq":5,"kind":"tool","name":"Write","arguments":{"file_path":"/tmp/notes.md"}}
{"seq":6,"kind":"command","command":"pushd /src/r && cargo test && popd","cwd":"/tmp"}
{"seq":7,"kind":"tool","name":"gitea_activate_profile","arguments":{}}"#,
        );
        assert!(s.tests[0].pending.is_empty(), "{:?}", s.tests[0].pending);
        assert_eq!(s.tests[0].head.as_deref(), Some("gh pr checkout 42"));
        assert_eq!(s.tests[1].dir.as_deref(), Some("/src/r"));
        let pending: Vec<u64> = s.tests[1].pending.iter().map(|p| p.seq).collect();
        assert_eq!(pending, [4]);
        let tools: Vec<(u64, Kind, Option<&str>)> = s
            .actions
            .iter()
            .filter(|a| a.route == Route::Tool)
            .map(|a| (a.seq, a.kind, a.dir.as_deref()))
            .collect();
        assert_eq!(
            tools,
            [
                (4, Kind::LocalMerge, Some("/src/r")),
                (5, Kind::FileEdit, Some("/tmp/notes.md")),
                (7, Kind::ProfileActivation, None)
            ]
        );
    }

    #[test]
    fn outputs_that_ran_a_subset_say_so() {
        let table = [
            (
                "test result: ok. 212 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out",
                false,
            ),
            (
                "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 9000 filtered out",
                true,
            ),
            ("====== 5 passed, 12 deselected in 0.3s ======", true),
            ("5 passed in 0.1s", false),
        ];
        for (output, filtered) in table {
            assert_eq!(output_filter(output).is_some(), filtered, "{output}");
        }
    }

    #[test]
    fn cargo_closing_lines_are_summed() {
        let out = "test result: ok. 10 passed; 0 failed; 2 ignored; 0 measured\ntest result: ok. 5 passed; 1 failed; 0 ignored";
        assert_eq!(
            parse_counts(out),
            Some(TestCounts {
                passed: 15,
                failed: 1,
                skipped: 0,
                ignored: 2
            })
        );
        assert_eq!(parse_counts("nothing here"), None);
        let counts = |passed, skipped| TestCounts {
            passed,
            failed: 0,
            skipped,
            ignored: 0,
        };
        let jest = "> jest\n\nTest Suites: 10 passed, 10 total\nTests:       2 skipped, 212 passed, 214 total\nSnapshots:   3 passed, 3 total\nTime:        2.1 s";
        assert_eq!(parse_counts(jest), Some(counts(212, 2)));
        let vitest =
            " Test Files  12 passed (12)\n      Tests  212 passed (212)\n   Duration  1.2s";
        assert_eq!(parse_counts(vitest), Some(counts(212, 0)));
    }
}
