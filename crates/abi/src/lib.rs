//! vouch-abi: the plugin boundary of vouch.
//!
//! A specialist plugin is a library that exports one C-ABI function returning a
//! `#[repr(C)]` function table. Only JSON crosses the boundary: the payload types live
//! in [`payload`] and the one trait a plugin implements in [`specialist`]; the C-ABI
//! table is in [`table`] and [`export_specialist!`] (in [`export`]) turns a
//! [`Specialist`] into a plugin. This crate is the boundary only, small on purpose and
//! changing rarely; the standard output contracts, shared prompt blocks, the sample
//! request and the prompt-snapshot test kit are in `vouch-specialist-kit`.

pub mod export;
pub mod payload;
pub mod specialist;
pub mod table;

pub use payload::*;
pub use specialist::Specialist;
pub use table::{
    ABI_MAJOR, ABI_MINOR, Buffer, CallError, CallResult, PluginTable, TABLE_SIZE, TableHeader,
    export_symbol,
};
