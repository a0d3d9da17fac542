//! vouch-core: the domain types and pure rules of a vouch review.
//!
//! Snapshot → canonical file list → coverage receipts → candidates → decisions →
//! findings → opinion. No IO, no async: every rule here is a pure function with the
//! rule's sentence in its docstring and a table-driven test beside it.

pub mod coverage;
pub mod files;
pub mod snapshot;
pub mod source;

pub use coverage::{
    CoverageComparison, CoverageReceipt, compare_coverage, mismatch_after_retry_message,
};
pub use files::expected_files;
pub use snapshot::{
    ChangeCounts, ChangeSnapshot, ChangedFile, CommitRef, EntryKind, FileStatus, Hunk, RangeCommit,
};
pub use source::{Citation, CitationError, Revision, SourceLedger, SourceWindow};
