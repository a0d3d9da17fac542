//! vouch-abi: the plugin boundary of vouch.
//!
//! A specialist plugin is a library that exports one C-ABI function returning a
//! `#[repr(C)]` function table (see the `table` module). Only JSON crosses the boundary: the
//! payload types live in [`payload`], the standard bounded output contracts in
//! [`contract`]. This crate is small on purpose and changes rarely.

pub mod contract;
pub mod payload;

pub use payload::*;
