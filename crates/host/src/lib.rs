//! vouch-host: everything between the command line and the pure rules of `vouch_core`.
//!
//! - [`manifest`]: TOML compositions and specialist entries, repository overrides,
//!   endpoint precedence.
//! - [`registry`]: built-in and pinned dynamic plugins behind one C-ABI table.
//! - [`review`]: one review from request to report ([`review::run`]): the change, the
//!   plan, the endpoint check, the orchestrator (lanes, audit, verification, merge,
//!   opinion) and the self-checked report.
//! - [`settings`] and [`endpoint`]: the user configuration, and the model endpoint's
//!   client settings, check and the messages that say what to fix.
//! - [`tools`]: the read-only repository tools and the per-execution source ledger.
//! - [`policy`]: every policy text the host renders (expected files, repair, retry).
//! - [`diagnostics`] and [`progress`]: structured stderr lines and progress events.

#![deny(unreachable_pub)]

pub mod diagnostics;
pub mod endpoint;
pub mod manifest;
pub mod policy;
pub mod progress;
pub mod registry;
pub mod review;
pub mod settings;
pub mod tools;
