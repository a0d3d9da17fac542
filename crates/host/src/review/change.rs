//! The change under review: its range resolved, its snapshot prepared (cancellable),
//! its trees opened, and the reviewed repository's own configuration read from base.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;
use vouch_core::ChangeSnapshot;
use vouch_git::{KeptPatches, SourceReader};

use super::request::ReviewError;
use crate::manifest::{Composition, REPO_OVERRIDE_PATH, RepoOverrides};

/// The change under review: its snapshot, whether it was prepared in full (`false`
/// when the review was cancelled first), and the reader of its trees.
pub(crate) struct Change {
    pub(crate) snapshot: Arc<ChangeSnapshot>,
    pub(crate) prepared: bool,
    pub(crate) reader: Arc<SourceReader>,
}

impl Change {
    /// The change with each file moved out of an excluded path into the reviewed scope
    /// reviewed as an added file ([`vouch_core::reviewed_as_added`]: its content enters
    /// review for the first time), and the observation naming those files. Runs off the
    /// runtime; a cancellation leaves the change unprepared, as during its snapshot.
    pub(crate) fn with_entering_files(
        self,
        excluded: impl Fn(&str) -> bool,
        cancel: &CancellationToken,
    ) -> Result<(Change, Option<String>), ReviewError> {
        let moved: Vec<(&str, &str)> = (self.snapshot.files.iter())
            .filter(|f| vouch_core::reviewed_as_added(f, &excluded))
            .filter_map(|f| Some((f.path.as_str(), f.previous_path.as_deref()?)))
            .collect();
        if moved.is_empty() {
            return Ok((self, None));
        }
        let note = entering_note(&moved);
        let paths: Vec<String> = moved.iter().map(|(path, _)| path.to_string()).collect();
        let Change {
            snapshot,
            prepared,
            reader,
        } = self;
        let mut reader = Arc::try_unwrap(reader).map_err(|_| {
            ReviewError::Internal("the change's reader is shared before its review".into())
        })?;
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let stop = || cancel.is_cancelled();
        let added = super::env::off_the_runtime(|| reader.add_moved(&paths, &stop));
        let change = Change {
            snapshot,
            prepared,
            reader: Arc::new(reader),
        };
        match added {
            Ok(added) => Ok((change.replaced(added), Some(note))),
            Err(vouch_git::GitError::Cancelled) => Ok((change.unprepared(), None)),
            Err(e) => Err(ReviewError::usage(e)),
        }
    }

    /// This change with `added` in place of the files of the same paths.
    fn replaced(self, added: Vec<vouch_core::ChangedFile>) -> Change {
        let mut snapshot = Arc::unwrap_or_clone(self.snapshot);
        for file in added {
            if let Some(slot) = snapshot.files.iter_mut().find(|f| f.path == file.path) {
                *slot = file;
            }
        }
        Change {
            snapshot: Arc::new(snapshot),
            ..self
        }
    }

    /// This change's range with no file: what a review cancelled while preparing it shows.
    fn unprepared(self) -> Change {
        let snapshot = ChangeSnapshot {
            files: vec![],
            commits: vec![],
            rename_limit: None,
            ..Arc::unwrap_or_clone(self.snapshot)
        };
        Change {
            snapshot: Arc::new(snapshot),
            prepared: false,
            reader: self.reader,
        }
    }
}

/// The observation naming the files moved out of an excluded path (current and previous
/// path) that are reviewed as added.
fn entering_note(moved: &[(&str, &str)]) -> String {
    let named: Vec<String> = moved
        .iter()
        .map(|(path, previous)| format!("{path} (from {previous})"))
        .collect();
    format!(
        "{} file(s) moved or copied out of a path a [files] exclude rule matches are reviewed as added files, every line of them, since their content enters review for the first time: {}",
        moved.len(),
        named.join(", ")
    )
}

/// Resolves `base..head` in `repo` and prepares its snapshot and reader.
pub(crate) async fn open_change(
    repo: &Path,
    base: Option<&str>,
    head: &str,
    cancel: &CancellationToken,
) -> Result<Change, ReviewError> {
    let range = vouch_git::resolve_range(repo, base, head).map_err(ReviewError::usage)?;
    let (snapshot, kept, prepared) = prepare_change(repo, range, cancel).await?;
    let snapshot = Arc::new(snapshot);
    let reader = SourceReader::open(repo, &snapshot)
        .map_err(ReviewError::usage)?
        .with_patches(kept);
    Ok(Change {
        snapshot,
        prepared,
        reader: Arc::new(reader),
    })
}

/// Prepares the change (the snapshot: tree diff, rename detection, hunks, and the patches
/// it loaded, kept for the reader) on a blocking thread, in steps that observe
/// cancellation. Returns the snapshot, its patches and `true`; when `cancel` fires first,
/// the range without files and `false` at once (the blocking work stops at its next
/// step), so the review ends `aborted` without waiting for it.
async fn prepare_change(
    repo: &Path,
    range: vouch_git::ResolvedRange,
    cancel: &CancellationToken,
) -> Result<(ChangeSnapshot, KeptPatches, bool), ReviewError> {
    let stop = Arc::new(AtomicBool::new(false));
    let unprepared = range.unprepared();
    let task = {
        let (repo, stop) = (repo.to_path_buf(), stop.clone());
        tokio::task::spawn_blocking(move || {
            vouch_git::snapshot_range_with_patches(&repo, range, &stop)
        })
    };
    let cancelled = |unprepared| Ok((unprepared, KeptPatches::default(), false));
    tokio::select! {
        joined = task => match joined {
            Ok(Ok((snapshot, kept))) => Ok((snapshot, kept, true)),
            Ok(Err(vouch_git::GitError::Cancelled)) => cancelled(unprepared),
            Ok(Err(e)) => Err(ReviewError::usage(e)),
            Err(e) => Err(ReviewError::Internal(format!(
                "preparing the change (a bug in vouch): {e}"
            ))),
        },
        _ = cancel.cancelled() => {
            stop.store(true, Ordering::Relaxed);
            cancelled(unprepared)
        }
    }
}

/// A problem of the base tree's `.vouch/review.toml`, with where it was read and what a
/// user can do: a fix in the reviewed change does not apply to its own review.
fn from_base(e: impl std::fmt::Display) -> ReviewError {
    ReviewError::Usage(format!(
        "{e}\nvouch read {REPO_OVERRIDE_PATH} from the base revision, so a fix made in this change applies only once it is merged: fix the file on the base branch, or review without it (--no-repo-config)"
    ))
}

/// Applies the reviewed repository's `.vouch/review.toml` from the **base** tree;
/// returns the observation that says so when there is one.
pub(crate) fn apply_repo_config(
    composition: &mut Composition,
    reader: &SourceReader,
) -> Result<Option<String>, ReviewError> {
    let Some(text) = reader
        .read_text(vouch_core::Revision::Base, REPO_OVERRIDE_PATH)
        .map_err(|e| {
            ReviewError::Usage(format!(
                "cannot read {REPO_OVERRIDE_PATH} from the base tree: {e}"
            ))
        })?
    else {
        return Ok(None);
    };
    let overrides = RepoOverrides::from_toml_str(&text).map_err(from_base)?;
    composition
        .apply_repo_overrides(&overrides)
        .map_err(from_base)?;
    let changes = overrides.changes();
    let what = if changes.is_empty() {
        String::new()
    } else {
        format!(": {}", changes.join("; "))
    };
    Ok(Some(format!(
        "applied the repository's {REPO_OVERRIDE_PATH} (read from the base tree){what}"
    )))
}
