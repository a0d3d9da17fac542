//! git subcommands and what they do.

use super::*;

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

/// What a git command (its arguments after `git`) does, by subcommand and flags.
pub(super) fn classify_git(args: &[&str]) -> Vec<Kind> {
    let (sub, rest) = git_subcommand(args);
    let has = |flag: &str| rest.contains(&flag);
    let positional = rest.iter().filter(|a| !a.starts_with('-')).count();
    match sub {
        "merge" if has("--abort") || has("--quit") => vec![Kind::MergeRestore],
        "merge" => vec![Kind::LocalMerge],
        "pull" => vec![Kind::LocalMerge, Kind::RefUpdate],
        "rebase" | "cherry-pick" | "revert" if has("--abort") || has("--quit") => {
            vec![Kind::MergeRestore]
        }
        "rebase" | "cherry-pick" | "revert" | "am" => vec![Kind::WorktreeChange, Kind::RefUpdate],
        "reset" if has("--hard") || has("--merge") || has("--keep") => vec![Kind::MergeRestore],
        "reset" | "checkout" | "switch" | "restore" | "add" | "rm" | "mv" | "clean"
        | "sparse-checkout" => {
            let mut k = vec![Kind::WorktreeChange];
            if matches!(sub, "checkout" | "switch")
                && (has("-b") || has("-B") || has("-c") || has("-C"))
            {
                k.push(Kind::RefUpdate);
            }
            k
        }
        "stash" if matches!(rest.first(), Some(&"list") | Some(&"show")) => vec![],
        "stash" => vec![Kind::WorktreeChange],
        "apply" if has("--check") || has("--stat") => vec![],
        "apply" => vec![Kind::FileEdit],
        "worktree" => match rest.first() {
            Some(&"add") | Some(&"remove") | Some(&"move") | Some(&"prune") => {
                vec![Kind::WorktreeAddRemove]
            }
            _ => vec![],
        },
        "commit" | "fetch" | "update-ref" | "replace" => vec![Kind::RefUpdate],
        "push" => vec![Kind::Push],
        "branch" => branch_kinds(rest, positional),
        "tag" if positional == 0 || has("-l") || has("--list") => vec![],
        "tag" => vec![Kind::RefUpdate],
        "symbolic-ref" if positional >= 2 => vec![Kind::RefUpdate],
        "config" => config_kinds(rest, positional),
        _ => vec![],
    }
}

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

/// `git branch`: a listing (no name, or a read flag) does nothing; otherwise a ref update.
fn branch_kinds(rest: &[&str], positional: usize) -> Vec<Kind> {
    if positional == 0
        || rest
            .iter()
            .any(|a| BRANCH_READ_FLAGS.contains(a) || a.starts_with("--format"))
    {
        vec![]
    } else {
        vec![Kind::RefUpdate]
    }
}

/// `git config` flags that only read configuration.
const CONFIG_READ_FLAGS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--list",
    "-l",
    "--show-origin",
];

/// `git config`: a read (a read flag, or a key without a value) inspects configuration;
/// setting a value activates a profile.
fn config_kinds(rest: &[&str], positional: usize) -> Vec<Kind> {
    if rest.iter().any(|a| CONFIG_READ_FLAGS.contains(a)) || positional <= 1 {
        vec![Kind::ConfigInspection]
    } else {
        vec![Kind::ProfileActivation]
    }
}
