//! Read-only access to the head and base trees of a snapshot: the repository tools a model
//! may call (`read_file`, `grep`, `list_dir`, `diff`).
//!
//! Every call reads git objects (never the working tree), validates its path first
//! ([`paths`]), and bounds its output in lines and bytes; the bound is stated in the
//! output whenever it cut something, so the model knows how to page. Every error is a
//! [`ReadError`] whose message is written for the model to read.
//!
//! Text is split into lines at `\n`, and line numbers are the same as git's; a `\r` before
//! the `\n` (CRLF files) is shown as [`vouch_core::CR_MARK`] after the line's text, and
//! bytes that are not UTF-8 as `\xNN` ([`vouch_core::shown_text`]).

mod added;
mod blob;
mod dir;
mod file;
mod grep;
mod large;
pub(crate) mod patch;
pub(crate) mod paths;
mod text;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use git2::{ErrorCode, Oid, Repository, Tree, TreeEntry};
use vouch_core::snapshot::{ChangeSnapshot, ChangedFile};
use vouch_core::source::Revision;

use crate::GitError;
use crate::resolve::{self, tree_of};

pub use blob::{BlobContent, TreeFile};
pub use dir::{DirEntry, DirEntryKind, DirListing};
pub use file::{FileRead, MAX_LINE_WINDOW_BYTES};
pub use grep::{GrepMatch, GrepResult};
pub use large::{LARGE_BLOB_BYTES, MAX_KEPT_LARGE_BLOB_BYTES};
pub use patch::{BinarySides, FileDiff, KeptPatches, MAX_CACHED_PATCH_BYTES};
pub use text::LineLength;

/// Most lines one `read_file` or `diff` call returns.
pub const MAX_LINES: u32 = 400;
/// Most bytes of text (UTF-8) one call of any tool returns, notes included.
pub const MAX_BYTES: usize = 32 * 1024;
/// Most matches one `grep` call returns.
pub const MAX_GREP_MATCHES: usize = 200;
/// A matched line longer than this many bytes is shown cut (its window still names the line).
pub const MAX_GREP_LINE_BYTES: usize = 300;
/// `grep` skips blobs larger than this many bytes (and says how many it skipped).
pub const MAX_GREP_FILE_BYTES: usize = 2 * 1024 * 1024;
/// Most entries one `list_dir` call returns.
pub const MAX_DIR_ENTRIES: usize = 1000;

/// Why a tool call returned nothing. The message is shown to the model as a tool error.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The arguments are not acceptable (a path that is absolute, contains `..`, a
    /// NUL, or is empty where a file is needed).
    #[error("refused: {reason}")]
    Refused {
        /// Why, in a sentence the model can act on.
        reason: String,
    },
    /// Nothing exists at that path in that revision's tree.
    #[error(
        "`{path}` does not exist at {}; {}use list_dir to see what exists",
        rev_name(*revision),
        separator_hint(path)
    )]
    NotFound {
        /// Which tree was searched.
        revision: Revision,
        /// The repository-relative path.
        path: String,
    },
    /// `read_file` on a directory, or `list_dir` on a file.
    #[error("`{path}` at {} is {actual}; {hint}", rev_name(*revision))]
    WrongKind {
        /// Which tree was searched.
        revision: Revision,
        /// The repository-relative path.
        path: String,
        /// What it is (`a directory`, `a file`).
        actual: &'static str,
        /// Which tool to use instead.
        hint: &'static str,
    },
    /// The blob is binary (git's heuristic: a NUL byte in its first 8000 bytes).
    #[error("`{path}` at {} is a binary file ({size} bytes); its content is not shown", rev_name(*revision))]
    Binary {
        /// Which tree was read.
        revision: Revision,
        /// The repository-relative path.
        path: String,
        /// Blob size in bytes.
        size: usize,
    },
    /// The requested line window is not valid for this file.
    #[error("{message}")]
    InvalidRange {
        /// What is wrong and the file's line count.
        message: String,
    },
    /// The regex or glob does not parse.
    #[error("invalid {what}: {message}")]
    InvalidPattern {
        /// `regex` or `path glob`.
        what: &'static str,
        /// The parser's message.
        message: String,
    },
    /// `diff` on a path that did not change in the reviewed range.
    #[error(
        "`{path}` is not a changed file of this change; diff works on changed paths (their current path)"
    )]
    NotChanged {
        /// The repository-relative path.
        path: String,
    },
    /// libgit2 failed (corrupt or missing objects).
    #[error(
        "git failed while reading the repository: {}",
        crate::error::plain(source)
    )]
    Git {
        /// libgit2's reason.
        #[from]
        source: git2::Error,
    },
}

/// How a revision is named in tool output.
pub(crate) fn rev_name(revision: Revision) -> &'static str {
    match revision {
        Revision::Head => "head",
        Revision::Base => "base (the merge base)",
    }
}

/// Read-only access to the objects of one snapshot's head and base (= merge base) trees.
///
/// `Send + Sync`: the repository handle sits behind a mutex, so concurrent lanes may share
/// one reader; calls are serialised. Nothing here reads the working tree.
pub struct SourceReader {
    repo: Mutex<Repository>,
    head_tree: Oid,
    base_tree: Oid,
    /// The snapshot's changed files by current path: the one pairing (renames, copies)
    /// every patch is computed from.
    changed: HashMap<String, ChangedFile>,
    patches: Mutex<patch::PatchCache>,
    large: Mutex<large::LargeBlobs>,
}

impl std::fmt::Debug for SourceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceReader")
            .field("head_tree", &self.head_tree)
            .field("base_tree", &self.base_tree)
            .finish_non_exhaustive()
    }
}

impl SourceReader {
    /// Opens the repository at `repo_path` for reading the trees of `snapshot.head.sha`
    /// (head) and `snapshot.merge_base` (base).
    ///
    /// # Errors
    /// [`GitError::NotARepository`], or [`GitError::Git`] when those commits are missing.
    pub fn open(repo_path: &Path, snapshot: &ChangeSnapshot) -> Result<SourceReader, GitError> {
        let repo = resolve::open(repo_path)?;
        let head_tree = tree_of(&repo, resolve::oid(&snapshot.head.sha)?)?;
        let base_tree = tree_of(&repo, resolve::oid(&snapshot.merge_base)?)?;
        let changed = snapshot
            .files
            .iter()
            .map(|f| (f.path.clone(), f.clone()))
            .collect();
        Ok(SourceReader {
            repo: Mutex::new(repo),
            head_tree,
            base_tree,
            changed,
            patches: Mutex::new(patch::PatchCache::default()),
            large: Mutex::new(large::LargeBlobs::default()),
        })
    }

    /// The repository, locked. A panic in another call cannot leave the handle in a bad
    /// state (every call is read-only), so a poisoned lock is simply taken over.
    fn repo(&self) -> MutexGuard<'_, Repository> {
        self.repo.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tree id of a revision, in hex: equal ids mean equal trees, in any repository
    /// (what caches keyed by content use).
    pub fn tree_hex(&self, revision: Revision) -> String {
        self.tree_id(revision).to_string()
    }

    /// The tree id of a revision.
    fn tree_id(&self, revision: Revision) -> Oid {
        match revision {
            Revision::Head => self.head_tree,
            Revision::Base => self.base_tree,
        }
    }
}

/// What a not-found error adds for a path that may use `\` as a separator.
fn separator_hint(path: &str) -> &'static str {
    if path.contains('\\') {
        "paths are separated by `/` (a backslash is part of a name); "
    } else {
        ""
    }
}

/// Looks up a validated, non-empty path in a tree; `NotFound` when it is absent (including
/// when a parent component is a file or a symlink: links are never followed).
fn lookup(
    tree: &Tree<'_>,
    revision: Revision,
    path: &str,
) -> Result<TreeEntry<'static>, ReadError> {
    tree.get_path(Path::new(path)).map_err(|e| match e.code() {
        ErrorCode::NotFound => ReadError::NotFound {
            revision,
            path: path.to_string(),
        },
        _ => ReadError::Git { source: e },
    })
}

/// The span recording bytes `[start, end)` of a line shown cut (`reaches_end`: `end` is
/// where the line ends).
pub(crate) fn span(
    revision: Revision,
    path: &str,
    line: u32,
    (start, end): (usize, usize),
    reaches_end: bool,
) -> vouch_core::LineSpan {
    vouch_core::LineSpan {
        revision,
        path: path.to_string(),
        line,
        start_byte: start as u32,
        end_byte: end as u32,
        reaches_end,
    }
}

/// Cuts `s` to at most `max` bytes at a char boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
