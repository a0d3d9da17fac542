//! The C-ABI function table a plugin exports, and the buffers that cross it.
//!
//! Rust has no stable ABI, so only `#[repr(C)]` structs, integers, raw pointers and
//! `extern "C"` function pointers cross the boundary; every payload is UTF-8 JSON
//! ([`crate::payload`]).
//!
//! # Ownership
//!
//! Memory is freed only by the library that allocated it. A [`Buffer`] returned by a
//! plugin (`describe`, `call`) belongs to the plugin: the host copies the bytes out and
//! hands the buffer back to the *same* table's [`PluginTable::free`]. Input bytes the
//! host passes to `call` belong to the host and are only borrowed for the duration of
//! the call; a plugin must not keep pointers to them.
//!
//! # Panics
//!
//! Every exported function catches unwinding panics ([`std::panic::catch_unwind`]) and
//! reports them as [`status::PANICKED`]; a plugin panic never crosses the boundary.
//! This needs `panic = "unwind"` (Rust's default): plugins must not set
//! `panic = "abort"`, which would turn any panic into a host crash. The export macro
//! refuses to compile under `panic = "abort"`.
//!
//! # Versioning
//!
//! The table grows append-only: a new field is added at the end, [`ABI_MINOR`] is
//! bumped, and [`PluginTable::table_size`] tells the host how much of the table the
//! plugin filled in. Removing or reordering a field, or changing a signature, bumps
//! [`ABI_MAJOR`]. The first three `u32` fields ([`TableHeader`]) never move, so a host
//! can always read them before trusting the rest.

use serde::{Deserialize, Serialize};

/// The ABI major version: a host loads only plugins with exactly this major.
pub const ABI_MAJOR: u32 = 1;

/// The ABI minor version this crate builds tables with. A host requires a plugin's
/// minor to be at least the minor whose fields it uses.
pub const ABI_MINOR: u32 = 0;

/// Method names accepted by [`PluginTable::call`].
pub mod method {
    /// Input [`crate::PromptRequest`], output [`crate::RenderedPrompt`].
    pub const RENDER_PROMPT: &str = "render_prompt";
    /// Input [`crate::ContractRequest`], output a JSON Schema object.
    pub const CONTRACT: &str = "contract";
    /// Input the reply object the host extracted, output [`crate::ParsedReply`].
    pub const PARSE: &str = "parse";
}

/// Status codes of a [`CallResult`]. Any other value is a protocol error (a host
/// never assumes a closed set, so this is a plain `u32`, not a Rust enum).
pub mod status {
    /// Success: the output is the method's JSON result.
    pub const OK: u32 = 0;
    /// The specialist returned an error (e.g. a reply that does not fit the contract):
    /// the output is a [`crate::table::CallError`].
    pub const ERROR: u32 = 1;
    /// Unknown method, or input that is not the method's JSON payload: the output is a
    /// [`crate::table::CallError`].
    pub const BAD_REQUEST: u32 = 2;
    /// The specialist panicked; the panic was caught inside the plugin. The output is a
    /// [`crate::table::CallError`] carrying the panic message.
    pub const PANICKED: u32 = 3;
}

/// The JSON body of every non-OK [`CallResult`]: `{"message": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallError {
    /// Human-readable message, e.g. the parser's explanation or the panic message.
    pub message: String,
}

/// Bytes allocated by a plugin and owned by it until given back to the plugin's
/// [`PluginTable::free`]. `ptr` may be null only when `len` is 0.
#[repr(C)]
#[derive(Debug)]
pub struct Buffer {
    /// Start of the bytes.
    pub ptr: *mut u8,
    /// Number of bytes.
    pub len: usize,
}

impl Buffer {
    /// A buffer that owns nothing.
    pub const fn empty() -> Self {
        Buffer {
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }

    /// Moves `bytes` into a buffer; release it with [`Buffer::release`] in the same
    /// library (that is what [`PluginTable::free`] does).
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        let boxed: Box<[u8]> = bytes.into_boxed_slice();
        let len = boxed.len();
        let ptr = Box::into_raw(boxed).cast::<u8>();
        Buffer { ptr, len }
    }

    /// Frees a buffer made by [`Buffer::from_vec`].
    ///
    /// # Safety
    /// `self` must come from [`Buffer::from_vec`] *in this same library* (same
    /// allocator) and must not have been released before.
    pub unsafe fn release(self) {
        if self.ptr.is_null() {
            return;
        }
        let slice = std::ptr::slice_from_raw_parts_mut(self.ptr, self.len);
        // SAFETY: by the contract above, `slice` is exactly the `Box<[u8]>` leaked by
        // `from_vec` in this library.
        drop(unsafe { Box::from_raw(slice) });
    }

    /// Copies the bytes out (the buffer stays owned by its producer).
    ///
    /// # Safety
    /// `ptr` must point to `len` readable bytes (or be null with `len` 0).
    pub unsafe fn to_vec(&self) -> Vec<u8> {
        if self.ptr.is_null() || self.len == 0 {
            return Vec::new();
        }
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
    }
}

/// What `describe` and `call` return: a [`status`] code and a plugin-owned JSON buffer.
#[repr(C)]
#[derive(Debug)]
pub struct CallResult {
    /// One of [`status`].
    pub status: u32,
    /// The JSON output (status OK) or a [`CallError`] (any other status). Owned by the
    /// plugin: give it back with [`PluginTable::free`].
    pub output: Buffer,
}

/// The fields every table version starts with; a host reads these before anything else.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHeader {
    /// [`ABI_MAJOR`] of the plugin.
    pub abi_major: u32,
    /// [`ABI_MINOR`] of the plugin.
    pub abi_minor: u32,
    /// `size_of::<PluginTable>()` in bytes, as the plugin built it.
    pub table_size: u32,
}

/// The function table a plugin exports (ABI 1.0).
///
/// Exported as `extern "C" fn vouch_plugin_<id>() -> *const PluginTable` (see
/// [`crate::export_symbol`]); the pointed-to table is static and lives as long as the
/// library, which the host never unloads. Use [`crate::export_specialist!`] instead of
/// building one by hand.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PluginTable {
    /// [`ABI_MAJOR`] the plugin was built with.
    pub abi_major: u32,
    /// [`ABI_MINOR`] the plugin was built with.
    pub abi_minor: u32,
    /// `size_of::<PluginTable>()` as the plugin built it (bytes). Fields beyond what a
    /// plugin's size covers must not be read.
    pub table_size: u32,
    /// Returns the plugin's [`crate::Descriptor`] as JSON (status OK), or a
    /// [`CallError`]. The output buffer is owned by the plugin: release it with `free`.
    pub describe: extern "C" fn() -> CallResult,
    /// Runs `method` (UTF-8, `method_len` bytes; one of [`method`]) on `input` (JSON,
    /// `input_len` bytes). Both inputs are owned by the caller and only borrowed for
    /// the call. The output buffer is owned by the plugin: release it with `free`.
    ///
    /// Safe to call from several threads at once.
    pub call: unsafe extern "C" fn(
        method: *const u8,
        method_len: usize,
        input: *const u8,
        input_len: usize,
    ) -> CallResult,
    /// Frees a buffer that this same table's `describe` or `call` returned. Each buffer
    /// is freed exactly once; never pass a buffer from another library.
    pub free: unsafe extern "C" fn(buffer: Buffer),
}

// The header is a prefix of the table in every version.
const _: () = {
    assert!(std::mem::offset_of!(PluginTable, abi_major) == 0);
    assert!(std::mem::offset_of!(PluginTable, abi_minor) == 4);
    assert!(std::mem::offset_of!(PluginTable, table_size) == 8);
    assert!(std::mem::size_of::<TableHeader>() == 12);
};

/// `size_of::<PluginTable>()` as written into [`PluginTable::table_size`].
pub const TABLE_SIZE: u32 = std::mem::size_of::<PluginTable>() as u32;

/// The exported symbol name of the plugin with id `id`: `vouch_plugin_` followed by the
/// id with every `-` replaced by `_` (e.g. `generic-investigator` →
/// `vouch_plugin_generic_investigator`). A per-plugin symbol lets several built-ins be
/// linked into one binary without clashing.
pub fn export_symbol(id: &str) -> String {
    format!("vouch_plugin_{}", id.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_symbol_replaces_dashes() {
        assert_eq!(
            export_symbol("generic-investigator"),
            "vouch_plugin_generic_investigator"
        );
        assert_eq!(export_symbol("verifier"), "vouch_plugin_verifier");
    }

    #[test]
    fn buffers_round_trip_and_empty_is_null() {
        let b = Buffer::from_vec(b"{}".to_vec());
        // SAFETY: made just above in this library.
        assert_eq!(unsafe { b.to_vec() }, b"{}");
        unsafe { b.release() };
        let e = Buffer::empty();
        assert!(e.ptr.is_null());
        assert!(unsafe { e.to_vec() }.is_empty());
        unsafe { e.release() };
    }
}
