//! vouch-host: everything between the command line and the pure rules of `vouch_core`.
//!
//! - [`manifest`]: TOML compositions and specialist entries, repository overrides,
//!   endpoint precedence.
//! - [`registry`]: built-in and pinned dynamic plugins behind one C-ABI table.
//! - [`review`]: the orchestrator (lanes, audit, verification, merge, opinion).
//! - [`tools`]: the read-only repository tools and the per-execution source ledger.
//! - [`policy`]: every policy text the host renders (expected files, repair, retry).
//! - [`diagnostics`] and [`progress`]: structured stderr lines and progress events.

pub mod diagnostics;
pub mod manifest;
pub mod policy;
pub mod progress;
pub mod registry;
pub mod review;
pub mod tools;
