//! vouch-abi: the plugin boundary of vouch.
//!
//! A specialist plugin is a library that exports one C-ABI function returning a
//! `#[repr(C)]` function table. Only JSON crosses the boundary: the payload types live
//! in [`payload`], the standard bounded output contracts in [`contract`], and the one
//! trait a plugin implements in [`specialist`]; the C-ABI table is in [`table`] and
//! [`export_specialist!`] (in [`export`]) turns a [`Specialist`] into a plugin. This
//! crate is small on purpose and changes rarely.

pub mod contract;
pub mod export;
pub mod payload;
pub mod render;
pub mod sample;
pub mod specialist;
pub mod table;
pub mod testing;

pub use payload::*;
pub use specialist::Specialist;
pub use table::{
    ABI_MAJOR, ABI_MINOR, Buffer, CallError, CallResult, PluginTable, TABLE_SIZE, TableHeader,
    export_symbol,
};
