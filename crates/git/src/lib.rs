//! vouch-git: the git edge of vouch.
//!
//! - [`snapshot()`] resolves a `base`/`head` pair and builds the
//!   [`ChangeSnapshot`](vouch_core::snapshot::ChangeSnapshot) of `merge-base(base, head)..head`,
//!   the change a pull request shows, with libgit2 (git2, vendored, no network).
//! - [`SourceReader`] gives the repository tools a model may call (`read_file`, `grep`,
//!   `list_dir`, `diff`) read-only access to the objects of the head and base (merge base)
//!   trees, with path validation and bounded output.
//!
//! Nothing in this crate reads or writes the working tree, fetches, or runs hooks.

mod error;
mod range_diff;
pub mod reader;
mod remote;
mod resolve;
mod snapshot;

pub use error::GitError;
pub use range_diff::{CONTEXT_LINES, SIMILARITY_THRESHOLD};
pub use reader::{
    BinarySides, BlobContent, DirEntry, DirEntryKind, DirListing, FileDiff, FileRead, GrepMatch,
    GrepResult, KeptPatches, LineLength, MAX_BYTES, ReadError, SourceReader, TreeFile,
};
pub use remote::remote_url;
pub use snapshot::{
    ResolvedRange, resolve_range, snapshot, snapshot_range, snapshot_range_with_patches,
};
