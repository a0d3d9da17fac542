//! Jujutsu (`jj`), a version-control tool run beside git on the same repository: its
//! subcommands by what they do, one table row per case.

use super::effect::Effect;
use super::table::{ALWAYS, Cond, Does, NOTHING, Row, lookup, row};

/// jj's global options that take a value in the next word (`-R PATH`, `--at-op ID`).
const VALUED_OPTIONS: &[&str] = &[
    "-R",
    "--repository",
    "--at-op",
    "--at-operation",
    "--color",
    "--config",
    "--config-toml",
    "--config-file",
];

/// What a jj command (its arguments after `jj`) does: its global options skipped, by
/// the first row of [`JJ`] that fits.
pub(crate) fn classify_jj(args: &[&str]) -> Vec<Effect> {
    let mut i = 0;
    while let Some(option) = args.get(i).filter(|a| a.starts_with('-')) {
        i += if VALUED_OPTIONS.contains(option) {
            2
        } else {
            1
        };
    }
    lookup(JJ, args.get(i..).unwrap_or(&[])).unwrap_or_default()
}

/// jj subcommands: the first row whose words fit and one of whose conditions holds
/// decides; a subcommand no row names (`log`, `status`, `diff`, `show`, `bookmark
/// list`, ...) only reads.
pub(crate) const JJ: &[Row] = &[
    row(
        &[&["git"], &["push"]],
        &[Cond::Word(&["--dry-run"])],
        NOTHING,
    ),
    row(&[&["git"], &["push"]], ALWAYS, Does::Fixed(&[Effect::PUSH])),
    row(
        &[&["git"], &["fetch", "import", "export"]],
        ALWAYS,
        Does::Fixed(&[Effect::REF_UPDATE]),
    ),
    row(
        &[&[
            "new",
            "commit",
            "ci",
            "describe",
            "desc",
            "squash",
            "rebase",
            "abandon",
            "edit",
            "split",
            "restore",
            "duplicate",
            "absorb",
            "next",
            "prev",
            "undo",
        ]],
        ALWAYS,
        Does::Fixed(&[Effect::WORKTREE_CHANGE, Effect::REF_UPDATE]),
    ),
    row(
        &[
            &["bookmark", "branch"],
            &[
                "set", "create", "move", "delete", "rename", "forget", "track", "untrack",
            ],
        ],
        ALWAYS,
        Does::Fixed(&[Effect::REF_UPDATE]),
    ),
];
