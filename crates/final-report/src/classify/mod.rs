//! Classifying session commands and tool calls by what they do to the world.
//!
//! Commands are split like a POSIX shell would split them (quotes, `&&`, `||`, `;`,
//! `|`, redirections) and each simple command is classified by its program and
//! subcommand. The lists are deliberately small and documented in
//! docs/final-report.md; a command the lists do not know is treated as read-only.

use serde_json::Value;

mod forge;
mod git;
mod runners;
mod shell;
mod simple;
#[cfg(test)]
mod tests;
mod tools;

pub(crate) use forge::*;
pub(crate) use git::*;
pub(crate) use runners::*;
pub(crate) use shell::*;
pub(crate) use simple::*;
pub(crate) use tools::*;

use crate::model::MutationCategory;

/// What a command or tool call does, as far as the rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Runs tests.
    TestRun,
    /// A local `git merge` / `git pull` (including into the main checkout).
    LocalMerge,
    /// Restores a tree after a merge: `git merge --abort`, `git reset --hard|--merge`.
    MergeRestore,
    /// Creates, edits or deletes files.
    FileEdit,
    /// `git worktree add|remove|move|prune`.
    WorktreeAddRemove,
    /// Other worktree or index changes (checkout, switch, stash, add, rebase, ...).
    WorktreeChange,
    /// Ref updates (fetch, commit, branch, tag, update-ref).
    RefUpdate,
    /// `git push`.
    Push,
    /// Reading local configuration or forge-client profiles/auth.
    ConfigInspection,
    /// Activating or changing a forge profile or credentials for the session.
    ProfileActivation,
    /// Creating, submitting or dismissing a forge review (`approve` when it approves).
    ForgeReview { approve: bool },
    /// Merging on the forge.
    ForgeMerge,
    /// Any other forge write (comments, labels, closing, API writes).
    ForgeWrite,
}

impl Kind {
    /// Mutation categories that may record this kind; empty for non-mutations.
    pub(crate) fn categories(self) -> &'static [MutationCategory] {
        use MutationCategory::*;
        match self {
            Kind::FileEdit => &[FileEditsByReviewer, CleanupMutations],
            Kind::WorktreeAddRemove | Kind::WorktreeChange | Kind::MergeRestore => {
                &[WorktreeIndexMutations, CleanupMutations]
            }
            Kind::LocalMerge => &[WorktreeIndexMutations, GitRefMutations],
            Kind::RefUpdate => &[GitRefMutations],
            Kind::Push => &[GitRefMutations, ExternalStateMutations, McpForgeMutations],
            Kind::ForgeReview { .. } => &[ReviewMutations],
            Kind::ForgeMerge => &[MergeMutations],
            Kind::ForgeWrite => &[McpForgeMutations, ExternalStateMutations, CleanupMutations],
            Kind::TestRun | Kind::ConfigInspection | Kind::ProfileActivation => &[],
        }
    }

    /// A short description for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::TestRun => "a test run",
            Kind::LocalMerge => "a local merge",
            Kind::MergeRestore => "a merge abort/reset",
            Kind::FileEdit => "a file edit",
            Kind::WorktreeAddRemove => "a worktree add/remove",
            Kind::WorktreeChange => "a worktree/index change",
            Kind::RefUpdate => "a git ref update",
            Kind::Push => "a git push",
            Kind::ConfigInspection => "a local config/profile inspection",
            Kind::ProfileActivation => "a profile activation",
            Kind::ForgeReview { .. } => "a review mutation",
            Kind::ForgeMerge => "a merge",
            Kind::ForgeWrite => "a forge mutation",
        }
    }
}

/// Collapse runs of whitespace to one space and trim: how commands are compared.
pub(crate) fn normalize(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Everything a command line does, over all its simple commands.
pub(crate) fn classify_command(line: &str) -> Vec<Kind> {
    classify_nested(line, 0)
}

/// Most levels of command substitution looked into (hostile nesting cannot exhaust the
/// stack).
const MAX_SUBSTITUTION_DEPTH: usize = 8;

fn classify_nested(line: &str, depth: usize) -> Vec<Kind> {
    let mut kinds = Vec::new();
    // What a command substitution (`` `…` ``, `$(…)`) runs is a command too.
    let inner = match depth < MAX_SUBSTITUTION_DEPTH {
        true => substitutions(line),
        false => vec![],
    };
    for inner in inner {
        for kind in classify_nested(inner, depth + 1) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    for simple in split_shell(line) {
        for kind in classify_simple(&simple) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    kinds
}

/// The command lines inside `` `…` `` and `$(…)` of `line` (outermost; an unclosed one
/// runs to the end).
fn substitutions(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(['`', '$']) {
        let after = &rest[at + 1..];
        if rest[at..].starts_with('`') {
            let end = after.find('`').unwrap_or(after.len());
            out.push(&after[..end]);
            rest = after.get(end + 1..).unwrap_or("");
        } else if let Some(inner) = after.strip_prefix('(') {
            let mut depth = 1usize;
            let end = inner
                .char_indices()
                .find(|&(_, c)| {
                    depth = match c {
                        '(' => depth + 1,
                        ')' => depth - 1,
                        _ => depth,
                    };
                    depth == 0
                })
                .map_or(inner.len(), |(i, _)| i);
            out.push(&inner[..end]);
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            rest = after;
        }
    }
    out
}
