//! Errors of loading, checking and calling specialist plugins.

use std::path::PathBuf;

use super::Origin;

/// Why a plugin could not be loaded, looked up or called. Every loading error names the
/// library file (or "built-in") and, for a mismatch, what was expected and found.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The library file could not be read to compute its sha256.
    #[error("cannot read plugin library {}: {source}", path.display())]
    Read {
        /// The library file.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },

    /// The file's sha256 differs from the pin; the library was not loaded.
    #[error(
        "plugin library {} has sha256 {found}, but the manifest pins {expected}; it was not loaded",
        path.display()
    )]
    Sha256Mismatch {
        /// The library file.
        path: PathBuf,
        /// The pinned sha256 (lowercase hex).
        expected: String,
        /// The file's sha256 (lowercase hex).
        found: String,
    },

    /// `dlopen` failed.
    #[error("cannot load plugin library {}: {source}", path.display())]
    Open {
        /// The library file.
        path: PathBuf,
        /// The loader's error.
        source: libloading::Error,
    },

    /// The library does not export the symbol derived from the pinned id.
    #[error(
        "plugin library {} does not export `{symbol}` (the symbol of plugin id `{id}`): {source}",
        path.display()
    )]
    MissingSymbol {
        /// The library file.
        path: PathBuf,
        /// The pinned id.
        id: String,
        /// The symbol looked up ([`vouch_abi::export_symbol`]).
        symbol: String,
        /// The loader's error.
        source: libloading::Error,
    },

    /// The export function returned a null table.
    #[error("{origin}: the plugin table is null")]
    NullTable {
        /// Where the table came from.
        origin: Box<Origin>,
    },

    /// The ABI major version differs.
    #[error("{origin}: plugin ABI major version is {found}, this host requires {expected}")]
    AbiMajor {
        /// Where the table came from.
        origin: Box<Origin>,
        /// The host's major.
        expected: u32,
        /// The plugin's major.
        found: u32,
    },

    /// The ABI minor version is older than the host requires.
    #[error(
        "{origin}: plugin ABI minor version is {found}, this host requires at least {required}"
    )]
    AbiMinor {
        /// Where the table came from.
        origin: Box<Origin>,
        /// The lowest minor the host accepts.
        required: u32,
        /// The plugin's minor.
        found: u32,
    },

    /// The table is smaller than the table this host reads.
    #[error("{origin}: plugin table is {found} bytes, this host needs at least {expected} bytes")]
    ShortTable {
        /// Where the table came from.
        origin: Box<Origin>,
        /// `size_of::<PluginTable>()` in the host.
        expected: u32,
        /// The plugin's `table_size`.
        found: u32,
    },

    /// `describe` failed or returned something that is not a descriptor.
    #[error("{origin}: describe failed: {message}")]
    Describe {
        /// Where the table came from.
        origin: Box<Origin>,
        /// What went wrong.
        message: String,
    },

    /// `describe` reports another id than the pin.
    #[error(
        "{origin}: plugin describes itself as id `{found}`, but the manifest pins `{expected}`"
    )]
    IdMismatch {
        /// Where the table came from.
        origin: Box<Origin>,
        /// The pinned id.
        expected: String,
        /// The described id.
        found: String,
    },

    /// `describe` reports another version than the pin.
    #[error("{origin}: plugin `{id}` is version {found}, but the manifest pins version {expected}")]
    VersionMismatch {
        /// Where the table came from.
        origin: Box<Origin>,
        /// The plugin id.
        id: String,
        /// The pinned version.
        expected: String,
        /// The described version.
        found: String,
    },

    /// The plugin speaks a payload version this host does not.
    #[error("{origin}: plugin payload version is {found}, this host supports {min} to {max}")]
    PayloadVersion {
        /// Where the table came from.
        origin: Box<Origin>,
        /// Lowest supported payload version.
        min: u32,
        /// Highest supported payload version.
        max: u32,
        /// The plugin's payload version.
        found: u32,
    },

    /// A registered specialist has the pinned id but none has the pinned version.
    #[error(
        "specialist `{id}` version {expected} is not available; registered version(s): {found}"
    )]
    WrongVersion {
        /// The id.
        id: String,
        /// The pinned version.
        expected: String,
        /// The registered versions, comma-separated.
        found: String,
    },

    /// No specialist with this id is registered.
    #[error("no specialist `{id}` is registered (built-in or loaded)")]
    NotRegistered {
        /// The id asked for.
        id: String,
    },

    /// A specialist with the same id and version is already registered from elsewhere.
    #[error("specialist `{id}` version {version} from {new} is already registered from {existing}")]
    Duplicate {
        /// The id.
        id: String,
        /// The version.
        version: String,
        /// Where the registered one came from.
        existing: Box<Origin>,
        /// Where the rejected one came from.
        new: Box<Origin>,
    },

    /// The plugin panicked; the panic was caught inside the plugin and the host lives on.
    #[error("specialist {specialist}: `{method}` panicked: {message}")]
    Panicked {
        /// `id version (origin)`.
        specialist: String,
        /// The method called.
        method: String,
        /// The panic message.
        message: String,
    },

    /// The specialist returned an error, e.g. a reply that does not fit its contract.
    /// For `parse`, `message` is what the isolated repair call is shown.
    #[error("specialist {specialist}: `{method}` failed: {message}")]
    Method {
        /// `id version (origin)`.
        specialist: String,
        /// The method called.
        method: String,
        /// The specialist's message.
        message: String,
    },

    /// The plugin broke the protocol: it refused the host's input as malformed, returned
    /// an unknown status, or output that is not the method's JSON.
    #[error("specialist {specialist}: `{method}` broke the plugin protocol: {message}")]
    Protocol {
        /// `id version (origin)`.
        specialist: String,
        /// The method called.
        method: String,
        /// What was wrong.
        message: String,
    },
}
