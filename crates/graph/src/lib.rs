//! vouch-graph: a repository graph over the git objects of a change's head and base trees.
//!
//! [`RepoGraph`] answers the model tools `definition`, `references` (with callers) and
//! `outline` from tree-sitter syntax trees of Rust, Python, JavaScript, TypeScript (and
//! TSX), Go, Java, C and C++ files ([`Language`]). Files of any other language are
//! searched as text, and every result says so.
//!
//! - **Lazy:** a query parses only the files that name its symbol as a whole word (or the
//!   one file it outlines); nothing parses the whole tree up front.
//! - **Cached:** parsed files are kept in a [`ParseCache`] keyed by blob id and language,
//!   bounded in memory; the process-wide cache serves the whole run. Which files name
//!   which words is read once per tree (keyed by tree id, in the same cache), so a lookup
//!   reads only the files that can answer it.
//! - **Bounded and stable:** every result has stated bounds ([`graph::MAX_BYTES`],
//!   [`graph::MAX_DEFINITIONS`], …) and lists files in tree order, lines ascending.
//! - **Read-only, inside the tree:** everything is read through
//!   [`vouch_git::SourceReader`] from git objects — never the working tree, never a
//!   symbolic link's target, never a write.
//!
//! Every result carries the exact windows its text shows, for the source ledger of the
//! execution that received it.

mod cache;
pub mod graph;
mod index;
mod lang;
mod sites;
mod symbol;
mod text;
mod words;

pub use cache::{DEFAULT_CACHE_BYTES, ParseCache};
pub use graph::{GraphError, GraphResult, Hit, HitKind, RepoGraph, Via};
pub use index::{Definition, FileIndex, Occurrence, Role};
pub use lang::Language;
pub use sites::{Lookup, Site};
pub use symbol::SymbolKind;
