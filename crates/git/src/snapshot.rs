//! Building the [`ChangeSnapshot`] of a `merge-base(base, head)..head` range.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use git2::{Oid, Repository, Sort};
use vouch_core::snapshot::{ChangeSnapshot, ChangedFile, CommitRef, RangeCommit, RenameLimitHit};

use crate::range_diff::{BlobPair, changed_file, find_renames, tree_diff};
use crate::reader::{FileDiff, KeptPatches};
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
    snapshot_keeping(repo_path, range, cancel, false).map(|(snapshot, _)| snapshot)
}

/// [`snapshot_range`], also keeping what the `diff` tool shows of each text file modified
/// in place, rendered from the patch the snapshot loaded anyway: a reader given them
/// ([`crate::SourceReader::with_patches`]) never diffs those files a second time.
///
/// # Errors
/// As [`snapshot_range`].
pub fn snapshot_range_with_patches(
    repo_path: &Path,
    range: ResolvedRange,
    cancel: &AtomicBool,
) -> Result<(ChangeSnapshot, KeptPatches), GitError> {
    snapshot_keeping(repo_path, range, cancel, true)
}

fn snapshot_keeping(
    repo_path: &Path,
    range: ResolvedRange,
    cancel: &AtomicBool,
    keep: bool,
) -> Result<(ChangeSnapshot, KeptPatches), GitError> {
    let check = || match cancel.load(Ordering::Relaxed) {
        true => Err(GitError::Cancelled),
        false => Ok(()),
    };
    let repo = resolve::open(repo_path)?;
    let merge_base = resolve::oid(&range.merge_base)?;
    let head_oid = resolve::oid(&range.head.sha)?;
    let old_tree = resolve::tree_of(&repo, merge_base)?;
    let new_tree = resolve::tree_of(&repo, head_oid)?;
    check()?;
    let (mut loaded, rename_limit) = changed_files(&repo, (old_tree, new_tree), cancel, keep)?;
    loaded.files.sort_by(|a, b| a.path.cmp(&b.path));
    check()?;
    let commits = range_commits(&repo, merge_base, head_oid)?;
    let snapshot = ChangeSnapshot {
        rename_limit,
        files: loaded.files,
        commits,
        ..range.unprepared()
    };
    Ok((snapshot, KeptPatches(loaded.kept)))
}

/// The changed files loaded so far, and the patches kept of them.
#[derive(Debug, Default)]
struct Loaded {
    files: Vec<ChangedFile>,
    kept: Vec<FileDiff>,
}

impl Loaded {
    fn extend(&mut self, other: Loaded) {
        self.files.extend(other.files);
        self.kept.extend(other.kept);
    }
}

/// Files modified in place below which their patches are loaded on the calling thread
/// alone (a thread and a repository handle cost more than they save).
const PARALLEL_MIN_FILES: usize = 32;

/// Most threads that load modified files' patches besides the calling one.
const MAX_HELPERS: usize = 3;

/// Every changed file of the two trees, in no particular order, with the rename limit
/// hit if any. Rename and copy detection (one pass over the whole change) runs on the
/// calling thread while helper threads, each with its own repository handle, load the
/// patches of files modified in place, which pairing never changes; then every thread
/// takes what is left. A modified file's patch is loaded from its two blobs with the
/// tree diff's hunk settings, the same patch the `diff` tool shows.
fn changed_files(
    repo: &Repository,
    (old_tree, new_tree): (Oid, Oid),
    cancel: &AtomicBool,
    keep: bool,
) -> Result<(Loaded, Option<RenameLimitHit>), GitError> {
    let mut diff = tree_diff(repo, old_tree, new_tree)?;
    let mut pairs = Vec::new();
    for idx in 0..diff.deltas().len() {
        if let Some(pair) = BlobPair::of(&diff, idx)? {
            pairs.push(pair);
        }
    }
    let queue = BlobQueue {
        pairs: &pairs,
        next: AtomicUsize::new(0),
        keep,
    };
    let helpers = if pairs.len() < PARALLEL_MIN_FILES {
        0
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get().saturating_sub(1))
            .clamp(1, MAX_HELPERS)
    };
    let git_dir = repo.path().to_path_buf();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers)
            .map(|_| {
                let (queue, git_dir) = (&queue, &git_dir);
                scope.spawn(move || {
                    let own = Repository::open(git_dir)
                        .map_err(GitError::git("opening the repository again"))?;
                    queue.drain(&own, cancel)
                })
            })
            .collect();
        let paired = pair_and_load(repo, &mut diff, &queue, cancel);
        let (files, rename_limit) = match paired {
            Ok(paired) => paired,
            Err(e) => {
                queue.stop();
                return Err(e);
            }
        };
        let mut loaded = Loaded {
            files,
            kept: Vec::new(),
        };
        loaded.extend(queue.drain(repo, cancel)?);
        for handle in handles {
            let helped = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            loaded.extend(helped?);
        }
        Ok((loaded, rename_limit))
    })
}

/// Pairs renames and copies, then loads every file the queue does not hold.
fn pair_and_load(
    repo: &Repository,
    diff: &mut git2::Diff<'_>,
    queue: &BlobQueue<'_>,
    cancel: &AtomicBool,
) -> Result<(Vec<ChangedFile>, Option<RenameLimitHit>), GitError> {
    let rename_limit = find_renames(diff)?;
    let queued: std::collections::HashMap<&str, &BlobPair> =
        queue.pairs.iter().map(|p| (p.path(), p)).collect();
    let mut files = Vec::with_capacity(diff.deltas().len().saturating_sub(queued.len()));
    for idx in 0..diff.deltas().len() {
        if cancel.load(Ordering::Relaxed) {
            return Err(GitError::Cancelled);
        }
        let held = diff
            .get_delta(idx)
            .and_then(|d| std::str::from_utf8(d.new_file().path_bytes()?).ok())
            .and_then(|p| queued.get(p))
            .is_some_and(|pair| pair.is_delta(diff, idx));
        if held {
            continue;
        }
        if let Some(file) = changed_file(repo, diff, idx)? {
            files.push(file);
        }
    }
    Ok((files, rename_limit))
}

/// Modified files whose patches any thread may load, each taken once (with `keep`, each
/// text file's rendered patch kept too).
struct BlobQueue<'a> {
    pairs: &'a [BlobPair],
    next: AtomicUsize,
    keep: bool,
}

impl BlobQueue<'_> {
    /// Loads files from the queue until it is empty.
    fn drain(&self, repo: &Repository, cancel: &AtomicBool) -> Result<Loaded, GitError> {
        let mut out = Loaded::default();
        loop {
            let Some(pair) = self.pairs.get(self.next.fetch_add(1, Ordering::Relaxed)) else {
                return Ok(out);
            };
            if cancel.load(Ordering::Relaxed) {
                self.stop();
                return Err(GitError::Cancelled);
            }
            let keep = |file: &ChangedFile, patch: &git2::Patch<'_>| match self.keep {
                true => crate::reader::patch::kept(file, patch),
                false => Ok(None),
            };
            match pair.changed_file(repo, keep) {
                Ok((file, kept)) => {
                    out.files.push(file);
                    out.kept.extend(kept.flatten());
                }
                Err(e) => {
                    self.stop();
                    return Err(e);
                }
            }
        }
    }

    /// No thread takes another file.
    fn stop(&self) {
        self.next.store(self.pairs.len(), Ordering::Relaxed);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_testkit::synth::{SynthSpec, generate_temp};

    /// Every file loaded from the tree diff on one thread, as before helpers existed.
    fn one_thread(
        repo: &Repository,
        old_tree: Oid,
        new_tree: Oid,
    ) -> (Vec<ChangedFile>, Option<RenameLimitHit>) {
        let mut diff = tree_diff(repo, old_tree, new_tree).expect("tree diff");
        let hit = find_renames(&mut diff).expect("pairing");
        let files = (0..diff.deltas().len())
            .filter_map(|idx| changed_file(repo, &diff, idx).expect("changed file"))
            .collect();
        (files, hit)
    }

    fn trees(repo: &Repository, base: &str, head: &str) -> (Oid, Oid) {
        let tree =
            |sha: &str| resolve::tree_of(repo, Oid::from_str(sha).expect("sha")).expect("tree");
        (tree(base), tree(head))
    }

    #[test]
    fn helper_threads_load_the_same_files_as_the_tree_diff() {
        for (files, seed) in [(120, 1), (300, 7), (64, 42)] {
            let spec = SynthSpec {
                seed,
                unchanged: 10,
                minified: seed == 1,
                long_file: seed == 7,
                ..SynthSpec::new(files)
            };
            let (_dir, synth) = generate_temp(&spec);
            let repo = resolve::open(&synth.path).expect("open");
            let (old, new) = trees(&repo, &synth.base, &synth.head);
            let diff = tree_diff(&repo, old, new).expect("tree diff");
            let queued = (0..diff.deltas().len())
                .filter(|&idx| BlobPair::of(&diff, idx).expect("pair").is_some())
                .count();
            assert!(
                queued >= PARALLEL_MIN_FILES,
                "seed {seed}: {queued} modified files do not reach the helpers"
            );
            let (mut expected, expected_hit) = one_thread(&repo, old, new);
            let (loaded, hit) = changed_files(&repo, (old, new), &AtomicBool::new(false), true)
                .expect("changed files");
            let mut got = loaded.files;
            expected.sort_by(|a, b| a.path.cmp(&b.path));
            got.sort_by(|a, b| a.path.cmp(&b.path));
            assert_eq!(got.len(), synth.changes.len(), "seed {seed}");
            assert_eq!(got, expected, "seed {seed}");
            assert_eq!(hit, expected_hit, "seed {seed}");
            // Every patch kept is what a reader renders afresh from the file's two blobs.
            let snapshot =
                crate::snapshot(&synth.path, Some(&synth.base), &synth.head).expect("snapshot");
            let reader = crate::SourceReader::open(&synth.path, &snapshot).expect("reader");
            assert!(loaded.kept.len() >= PARALLEL_MIN_FILES, "seed {seed}");
            for kept in &loaded.kept {
                let fresh = reader.diff(&kept.file.path).expect("diff");
                assert_eq!(*fresh, *kept, "seed {seed}: {}", kept.file.path);
            }
        }
    }

    #[test]
    fn a_cancelled_flag_stops_the_helpers_and_the_pairing() {
        let (_dir, synth) = generate_temp(&SynthSpec::new(80));
        let repo = resolve::open(&synth.path).expect("open");
        let (old, new) = trees(&repo, &synth.base, &synth.head);
        let got = changed_files(&repo, (old, new), &AtomicBool::new(true), true);
        assert!(matches!(got, Err(GitError::Cancelled)), "{got:?}");
    }
}
