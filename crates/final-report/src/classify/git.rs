//! git subcommands and what they do: one table row per subcommand case.

use super::effect::Effect;
use super::table::{ALWAYS, Cond, Does, NOTHING, Row, lookup, row};

/// Skip git's global options (`-C <path>`, `-c k=v`, `--git-dir=...`, ...).
pub(crate) fn git_subcommand<'a>(args: &'a [&'a str]) -> (&'a str, &'a [&'a str]) {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return (a, &args[i + 1..]);
        }
    }
    ("", &[])
}

/// What a git command (its arguments after `git`) does, by the first row of [`GIT`]
/// that fits its subcommand and arguments.
pub(crate) fn classify_git(args: &[&str]) -> Vec<Effect> {
    let (sub, rest) = git_subcommand(args);
    let words: Vec<&str> = std::iter::once(sub).chain(rest.iter().copied()).collect();
    lookup(GIT, &words).unwrap_or_default()
}

/// Flags that give up an operation in progress.
const ABORT: Cond = Cond::Word(&["--abort", "--quit"]);

/// `git branch` flags that only list or show branches.
const BRANCH_READ_FLAGS: &[&str] = &[
    "--list",
    "-l",
    "-a",
    "-r",
    "--all",
    "--remotes",
    "--show-current",
    "--contains",
    "-v",
    "-vv",
    "--merged",
    "--no-merged",
    "--points-at",
];

/// `git config` flags that only read configuration.
const CONFIG_READ_FLAGS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--list",
    "-l",
    "--show-origin",
];

/// git subcommands: the first row whose subcommand fits and one of whose conditions
/// holds decides; a subcommand no row names (status, log, diff, show, ...) only reads.
pub(crate) const GIT: &[Row] = &[
    row(
        &[&["merge"]],
        &[ABORT],
        Does::Fixed(&[Effect::MERGE_RESTORE]),
    ),
    row(&[&["merge"]], ALWAYS, Does::Fixed(&[Effect::Merge])),
    row(
        &[&["pull"]],
        ALWAYS,
        Does::Fixed(&[Effect::Merge, Effect::REF_UPDATE]),
    ),
    row(
        &[&["rebase", "cherry-pick", "revert"]],
        &[ABORT],
        Does::Fixed(&[Effect::MERGE_RESTORE]),
    ),
    row(
        &[&["rebase", "cherry-pick", "revert", "am"]],
        ALWAYS,
        Does::Fixed(&[Effect::WORKTREE_CHANGE, Effect::REF_UPDATE]),
    ),
    row(
        &[&["reset"]],
        &[Cond::Word(&["--hard", "--merge", "--keep"])],
        Does::Fixed(&[Effect::MERGE_RESTORE]),
    ),
    row(
        &[&["checkout", "switch"]],
        &[Cond::Word(&["-b", "-B", "-c", "-C"])],
        Does::Fixed(&[Effect::WORKTREE_CHANGE, Effect::REF_UPDATE]),
    ),
    row(
        &[&[
            "reset",
            "checkout",
            "switch",
            "restore",
            "add",
            "rm",
            "mv",
            "clean",
            "sparse-checkout",
        ]],
        ALWAYS,
        Does::Fixed(&[Effect::WORKTREE_CHANGE]),
    ),
    row(&[&["stash"]], &[Cond::First(&["list", "show"])], NOTHING),
    row(
        &[&["stash"]],
        ALWAYS,
        Does::Fixed(&[Effect::WORKTREE_CHANGE]),
    ),
    row(
        &[&["apply"]],
        &[Cond::Word(&["--check", "--stat"])],
        NOTHING,
    ),
    row(&[&["apply"]], ALWAYS, Does::Edits),
    row(
        &[&["worktree"]],
        &[Cond::First(&["add", "remove", "move", "prune"])],
        Does::Fixed(&[Effect::WORKTREE_ADD_REMOVE]),
    ),
    row(
        &[&["commit", "fetch", "update-ref", "replace"]],
        ALWAYS,
        Does::Fixed(&[Effect::REF_UPDATE]),
    ),
    row(&[&["push"]], ALWAYS, Does::Fixed(&[Effect::PUSH])),
    row(
        &[&["branch"]],
        &[
            Cond::PositionalsAtMost(0),
            Cond::Word(BRANCH_READ_FLAGS),
            Cond::WordPrefix("--format"),
        ],
        NOTHING,
    ),
    row(&[&["branch"]], ALWAYS, Does::Fixed(&[Effect::REF_UPDATE])),
    row(
        &[&["tag"]],
        &[Cond::PositionalsAtMost(0), Cond::Word(&["-l", "--list"])],
        NOTHING,
    ),
    row(&[&["tag"]], ALWAYS, Does::Fixed(&[Effect::REF_UPDATE])),
    row(
        &[&["symbolic-ref"]],
        &[Cond::PositionalsAtLeast(2)],
        Does::Fixed(&[Effect::REF_UPDATE]),
    ),
    row(
        &[&["config"]],
        &[Cond::Word(CONFIG_READ_FLAGS), Cond::PositionalsAtMost(1)],
        Does::Fixed(&[Effect::CONFIG_QUERY]),
    ),
    row(
        &[&["config"]],
        ALWAYS,
        Does::Fixed(&[Effect::ProfileActivation]),
    ),
];
