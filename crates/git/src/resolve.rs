//! Opening the repository and resolving base, head and their merge base to commits.

use std::path::Path;

use git2::{ErrorCode, Oid, Repository};
use vouch_core::snapshot::CommitRef;

use crate::GitError;

/// Opens the repository containing `path` (searching parent directories, as `git` does).
/// Bare repositories work too: vouch reads only objects, never the working tree.
///
/// Objects are read as `git` reads them: without hashing each one again to compare with
/// its id (libgit2's strict hash verification, on by default, hashes every blob read;
/// `git` leaves that to `git fsck`). Zlib's checksum still guards each object.
pub(crate) fn open(path: &Path) -> Result<Repository, GitError> {
    static READ_AS_GIT_DOES: std::sync::Once = std::sync::Once::new();
    READ_AS_GIT_DOES.call_once(|| git2::opts::strict_hash_verification(false));
    Repository::discover(path).map_err(|source| GitError::NotARepository {
        path: path.to_path_buf(),
        source,
    })
}

/// Resolves any revision syntax (branch, tag, SHA, `HEAD~3`, `origin/main`) to a commit.
pub(crate) fn commit(repo: &Repository, spec: &str) -> Result<CommitRef, GitError> {
    let object = repo.revparse_single(spec).map_err(|e| match e.code() {
        ErrorCode::NotFound | ErrorCode::InvalidSpec | ErrorCode::Ambiguous => {
            GitError::UnknownRevision {
                spec: spec.to_string(),
                shallow: repo.is_shallow(),
            }
        }
        _ => GitError::Git {
            doing: "resolving a revision",
            source: e,
        },
    })?;
    let kind = object
        .kind()
        .map(|k| k.to_string())
        .unwrap_or_else(|| "object".into());
    let commit = object.peel_to_commit().map_err(|_| GitError::NotACommit {
        spec: spec.to_string(),
        kind,
    })?;
    Ok(CommitRef {
        spec: spec.to_string(),
        sha: commit.id().to_string(),
    })
}

/// The default base when the user gives none: the target of `refs/remotes/origin/HEAD`,
/// else the first existing of `main`, `master`, `origin/main`, `origin/master`.
pub(crate) fn default_base(repo: &Repository, path: &Path) -> Result<CommitRef, GitError> {
    if let Ok(origin_head) = repo.find_reference("refs/remotes/origin/HEAD")
        && let Ok(Some(target)) = origin_head.symbolic_target()
        && let Ok(found) = commit(repo, target)
    {
        let short = target.strip_prefix("refs/remotes/").unwrap_or(target);
        return Ok(CommitRef {
            spec: short.to_string(),
            sha: found.sha,
        });
    }
    for (full, short) in [
        ("refs/heads/main", "main"),
        ("refs/heads/master", "master"),
        ("refs/remotes/origin/main", "origin/main"),
        ("refs/remotes/origin/master", "origin/master"),
    ] {
        if repo.find_reference(full).is_ok() {
            let found = commit(repo, full)?;
            return Ok(CommitRef {
                spec: short.to_string(),
                sha: found.sha,
            });
        }
    }
    Err(GitError::NoDefaultBase {
        path: path.to_path_buf(),
    })
}

/// The merge base of two resolved commits: the old side of the reviewed diff.
pub(crate) fn merge_base(
    repo: &Repository,
    base: &CommitRef,
    head: &CommitRef,
) -> Result<Oid, GitError> {
    let b = oid(&base.sha)?;
    let h = oid(&head.sha)?;
    repo.merge_base(b, h).map_err(|e| match e.code() {
        ErrorCode::NotFound => GitError::NoMergeBase {
            base: base.spec.clone(),
            head: head.spec.clone(),
            shallow: repo.is_shallow(),
        },
        _ => GitError::Git {
            doing: "computing the merge base",
            source: e,
        },
    })
}

/// Parses a 40-hex object id that vouch itself produced.
pub(crate) fn oid(sha: &str) -> Result<Oid, GitError> {
    Oid::from_str(sha).map_err(GitError::git("parsing an object id"))
}

/// The tree id of a commit.
pub(crate) fn tree_of(repo: &Repository, commit: Oid) -> Result<Oid, GitError> {
    repo.find_commit(commit)
        .map(|c| c.tree_id())
        .map_err(GitError::git("reading a commit"))
}
