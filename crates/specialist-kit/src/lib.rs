//! vouch-specialist-kit: what vouch's specialist plugins share above the plugin boundary.
//!
//! The boundary itself (the C-ABI table, the export macro, the JSON payloads and the
//! [`Specialist`](vouch_abi::Specialist) trait) is `vouch-abi`. This crate holds what a
//! specialist builds with on top of it: a specialist as a table of settings and the macro
//! that declares and exports one ([`builtin`]), the standard bounded output contracts and
//! their parsers ([`contract`]), the shared prompt blocks ([`render`]), a fixed sample request
//! for snapshots ([`sample`]) and the prompt-snapshot test kit ([`testing`]). The host
//! uses [`contract`]'s bounds and areas to enforce what a reply may contain.

pub mod builtin;
pub mod contract;
pub mod render;
pub mod sample;
pub mod testing;

/// The plugin boundary, re-exported for the test-kit macros (`$crate::abi::…`).
#[doc(hidden)]
pub use vouch_abi as abi;
