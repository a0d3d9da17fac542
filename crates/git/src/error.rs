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
    #[error("{} is not a git repository (or cannot be opened: {}); pass --repo with the path of a git checkout", path.display(), plain(source))]
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
        revision_hint(spec, *shallow)
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
        if *shallow {
            shallow_hint(true, "the merge base may lie outside the fetched history")
        } else {
            "; vouch reviews what head adds since its merge base with base, so pass a --base that shares history with --head (the branch it was created from)".to_string()
        }
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
    #[error("git failed while {doing}: {}", plain(source))]
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

/// libgit2's reason in plain words: its message without the `; class=Repository (6);
/// code=NotFound (-3)` codes its `Display` appends (they stay in `Debug` and the source
/// chain).
pub(crate) fn plain(error: &git2::Error) -> &str {
    error.message().trim_end_matches('.')
}

/// The extra sentence of an unknown revision: a range given as one revision, a `HEAD`
/// that names no commit yet, or a revision outside a shallow clone's history.
fn revision_hint(spec: &str, shallow: bool) -> String {
    if let Some((base, head)) = spec.split_once("...").or_else(|| spec.split_once("..")) {
        return format!(
            "; `{spec}` is a range, and --base and --head each take one revision: pass --base {base} --head {head}"
        );
    }
    if spec == "HEAD" && !shallow {
        return "; the repository has no commit yet".to_string();
    }
    shallow_hint(shallow, "the revision may lie outside the fetched history")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// libgit2's error codes never reach the message a user reads.
    #[test]
    fn libgit2_reasons_are_said_in_plain_words() {
        let missing = std::env::temp_dir().join("vouch-no-such-repository-here");
        let Err(source) = git2::Repository::open(&missing) else {
            panic!("{} holds no repository", missing.display());
        };
        assert!(source.to_string().contains("class="), "{source}");
        let reason = plain(&source).to_string();
        for error in [
            GitError::NotARepository {
                path: missing.clone(),
                source: git2::Error::from_str(source.message()),
            },
            GitError::Git {
                doing: "reading the change",
                source,
            },
        ] {
            let text = error.to_string();
            assert!(
                !text.contains("class=") && !text.contains("code="),
                "{text}"
            );
            assert!(!reason.is_empty() && text.contains(&reason), "{text}");
        }
    }

    /// An unknown revision says what to do when it is a range, a `HEAD` with no commit,
    /// or outside a shallow clone; unrelated histories say what base to pass.
    #[test]
    fn an_unknown_revision_says_what_to_pass_instead() {
        let unknown = |spec: &str, shallow: bool| {
            GitError::UnknownRevision {
                spec: spec.into(),
                shallow,
            }
            .to_string()
        };
        // (spec, shallow, what the message says)
        let cases = [
            ("main..feature", false, "pass --base main --head feature"),
            ("v1...v2", false, "pass --base v1 --head v2"),
            ("HEAD", false, "the repository has no commit yet"),
            ("HEAD", true, "git fetch --unshallow"),
            ("nosuch", true, "git fetch --unshallow"),
        ];
        for (spec, shallow, want) in cases {
            let text = unknown(spec, shallow);
            assert!(text.contains(want), "{spec}: {text}");
        }
        assert!(unknown("nosuch", false).ends_with("no branch, tag or commit of that name"));
        let unrelated = GitError::NoMergeBase {
            base: "a".into(),
            head: "b".into(),
            shallow: false,
        }
        .to_string();
        assert!(
            unrelated.contains("pass a --base that shares history"),
            "{unrelated}"
        );
    }
}
