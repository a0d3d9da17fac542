//! Errors of building a snapshot. Each message names what is wrong and what to do.

use std::path::PathBuf;

/// Why a [`crate::snapshot`] could not be built.
///
/// Every variant's message is meant for a user at a terminal: it names the offending
/// path or revision and, where there is one, the command that fixes it.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The snapshot was cancelled (Ctrl-C or SIGTERM) before it was complete.
    #[error("the change was not prepared: the review was cancelled")]
    Cancelled,

    /// The path is not inside a git repository (or the repository cannot be opened).
    #[error("{} is not a git repository (or cannot be opened: {source}); pass --repo with the path of a git checkout", path.display())]
    NotARepository {
        /// The path that was given.
        path: PathBuf,
        /// libgit2's reason.
        #[source]
        source: git2::Error,
    },

    /// A revision did not resolve to an object.
    #[error(
        "unknown revision `{spec}`: no branch, tag or commit of that name{}",
        shallow_hint(*shallow, "the revision may lie outside the fetched history")
    )]
    UnknownRevision {
        /// The revision as given.
        spec: String,
        /// True when the repository is a shallow clone.
        shallow: bool,
    },

    /// A revision resolved to something that is not a commit (a tree or a blob).
    #[error("revision `{spec}` names a {kind}, not a commit; pass a branch, tag or commit")]
    NotACommit {
        /// The revision as given.
        spec: String,
        /// The kind of object it names (`tree`, `blob`, ...).
        kind: String,
    },

    /// No base was given and no default branch could be found.
    #[error(
        "no default branch to compare against in {}: none of refs/remotes/origin/HEAD, main, master, origin/main, origin/master exists; pass --base REV",
        path.display()
    )]
    NoDefaultBase {
        /// The repository's path.
        path: PathBuf,
    },

    /// Base and head share no history, so there is no merge base to diff from.
    #[error(
        "`{base}` and `{head}` have no common ancestor (no merge base){}",
        shallow_hint(*shallow, "the merge base may lie outside the fetched history")
    )]
    NoMergeBase {
        /// The base revision as given.
        base: String,
        /// The head revision as given.
        head: String,
        /// True when the repository is a shallow clone.
        shallow: bool,
    },

    /// A changed path is not valid UTF-8; vouch reports paths verbatim and cannot.
    #[error(
        "changed path `{lossy}` is not valid UTF-8 (shown with U+FFFD for the invalid bytes); rename it to UTF-8 to review this change"
    )]
    NonUtf8Path {
        /// The path with invalid bytes replaced by U+FFFD.
        lossy: String,
    },

    /// Any other libgit2 failure (a corrupt object, an IO error), with what vouch was doing.
    #[error("git failed while {doing}: {source}")]
    Git {
        /// What vouch was doing, e.g. `diffing the merge base against head`.
        doing: &'static str,
        /// libgit2's reason.
        #[source]
        source: git2::Error,
    },
}

impl GitError {
    /// Wraps a libgit2 error with what vouch was doing.
    pub(crate) fn git(doing: &'static str) -> impl FnOnce(git2::Error) -> GitError {
        move |source| GitError::Git { doing, source }
    }
}

/// The extra sentence for errors in shallow clones.
fn shallow_hint(shallow: bool, why: &str) -> String {
    if shallow {
        format!(
            "; this repository is a shallow clone and {why}: run `git fetch --unshallow` (or `git fetch --depth N` with a larger N, and `git fetch origin BRANCH` for a branch that was never fetched) and try again"
        )
    } else {
        String::new()
    }
}
