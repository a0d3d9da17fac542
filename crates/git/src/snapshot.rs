//! Building the [`ChangeSnapshot`] of a `merge-base(base, head)..head` range.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use git2::{Oid, Repository, Sort};
use vouch_core::snapshot::{ChangeSnapshot, CommitRef, RangeCommit};

use crate::range_diff::{changed_file, tree_diff};
use crate::{GitError, resolve};

/// Snapshots the change a pull request from `base` into `head` would show: the diff of
/// `merge-base(base, head)..head`, so commits that landed on `base` after the fork never
/// appear.
///
/// - `repo_path`: any path inside the repository (parents are searched, as `git` does).
/// - `base`: any revision syntax (branch, tag, SHA, `HEAD~3`); `None` = the default
///   branch: the target of `refs/remotes/origin/HEAD`, else `main`, `master`,
///   `origin/main`, `origin/master`, the first that exists.
/// - `head`: any revision syntax.
///
/// The files are sorted by current path (byte order), with statuses as `git diff -M -C`
/// reports them (see [`crate::range_diff::tree_diff`] for the exact settings). Paths are
/// the raw bytes of the tree entries, decoded as UTF-8. `commits` lists
/// `merge_base..head`, newest first, with full messages. An empty range is `Ok` with no
/// files and no commits.
///
/// # Errors
/// [`GitError::NotARepository`], [`GitError::UnknownRevision`] (naming the revision),
/// [`GitError::NotACommit`], [`GitError::NoDefaultBase`], [`GitError::NoMergeBase`] (both
/// with a `git fetch --unshallow` hint in shallow clones), [`GitError::NonUtf8Path`] and
/// [`GitError::Git`] for corrupt or unreadable objects.
pub fn snapshot(
    repo_path: &Path,
    base: Option<&str>,
    head: &str,
) -> Result<ChangeSnapshot, GitError> {
    let range = resolve_range(repo_path, base, head)?;
    snapshot_range(repo_path, range, &AtomicBool::new(false))
}

/// The resolved ends of a range, before any diff: cheap (a few object lookups).
/// `snapshot_range` of it is the heavy part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRange {
    /// The base as given and resolved.
    pub base: CommitRef,
    /// The head as given and resolved.
    pub head: CommitRef,
    /// The merge base's full id.
    pub merge_base: String,
}

impl ResolvedRange {
    /// A snapshot of this range with no file and no commit: what a review cancelled
    /// while its change was being prepared reports (its outcome says `aborted`).
    pub fn unprepared(&self) -> ChangeSnapshot {
        ChangeSnapshot {
            base: self.base.clone(),
            head: self.head.clone(),
            merge_base: self.merge_base.clone(),
            files: vec![],
            commits: vec![],
            rename_limit: None,
        }
    }
}

/// Resolves `base` and `head` (see [`snapshot()`] for the syntax and the default base)
/// and their merge base.
///
/// # Errors
/// As [`snapshot()`].
pub fn resolve_range(
    repo_path: &Path,
    base: Option<&str>,
    head: &str,
) -> Result<ResolvedRange, GitError> {
    let repo = resolve::open(repo_path)?;
    let head = resolve::commit(&repo, head)?;
    let base = match base {
        Some(spec) => resolve::commit(&repo, spec)?,
        None => resolve::default_base(&repo, repo_path)?,
    };
    let merge_base = resolve::merge_base(&repo, &base, &head)?.to_string();
    Ok(ResolvedRange {
        base,
        head,
        merge_base,
    })
}

/// The heavy part of [`snapshot()`]: the tree diff, rename detection (once) and every
/// file's hunks, in bounded steps (one changed file each) that check `cancel`; a set
/// flag ends the work at the next step with [`GitError::Cancelled`]. Meant for a
/// blocking thread.
///
/// # Errors
/// [`GitError::Cancelled`], [`GitError::NonUtf8Path`], [`GitError::Git`].
pub fn snapshot_range(
    repo_path: &Path,
    range: ResolvedRange,
    cancel: &AtomicBool,
) -> Result<ChangeSnapshot, GitError> {
    let check = || match cancel.load(Ordering::Relaxed) {
        true => Err(GitError::Cancelled),
        false => Ok(()),
    };
    let repo = resolve::open(repo_path)?;
    let merge_base = resolve::oid(&range.merge_base)?;
    let head_oid = resolve::oid(&range.head.sha)?;
    let old_tree = tree_of(&repo, merge_base)?;
    let new_tree = tree_of(&repo, head_oid)?;
    check()?;
    let (diff, rename_limit) = tree_diff(&repo, old_tree, new_tree)?;
    let mut files = Vec::with_capacity(diff.deltas().len());
    for idx in 0..diff.deltas().len() {
        check()?;
        if let Some(file) = changed_file(&repo, &diff, idx)? {
            files.push(file);
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    check()?;
    let commits = range_commits(&repo, merge_base, head_oid)?;
    Ok(ChangeSnapshot {
        rename_limit,
        files,
        commits,
        ..range.unprepared()
    })
}

/// The tree id of a commit.
pub(crate) fn tree_of(repo: &Repository, commit: Oid) -> Result<Oid, GitError> {
    repo.find_commit(commit)
        .map(|c| c.tree_id())
        .map_err(GitError::git("reading a commit"))
}

/// Commits reachable from `head` but not from `merge_base`, newest first (children
/// before parents; ties broken by commit time, as `git log --topo-order`).
fn range_commits(
    repo: &Repository,
    merge_base: Oid,
    head: Oid,
) -> Result<Vec<RangeCommit>, GitError> {
    const DOING: &str = "listing the range's commits";
    let mut walk = repo.revwalk().map_err(GitError::git(DOING))?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(GitError::git(DOING))?;
    walk.push(head).map_err(GitError::git(DOING))?;
    walk.hide(merge_base).map_err(GitError::git(DOING))?;
    let mut commits = Vec::new();
    for oid in walk {
        let oid = oid.map_err(GitError::git(DOING))?;
        let commit = repo
            .find_commit(oid)
            .map_err(GitError::git("reading a commit"))?;
        commits.push(RangeCommit {
            sha: oid.to_string(),
            message: String::from_utf8_lossy(commit.message_bytes()).into_owned(),
        });
    }
    Ok(commits)
}
