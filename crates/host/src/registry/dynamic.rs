//! Loading a pinned plugin library with libloading.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use vouch_abi::{PluginTable, export_symbol};

use super::{Origin, PluginError, SpecialistHandle};

/// A user-supplied pin of a dynamic plugin: the exact artifact a team deploys. A sha256
/// differs per platform and build, so pins are per artifact. Only the user (flags,
/// environment, user config, `--manifest`) may supply one — never the reviewed
/// repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicPin {
    /// The plugin id (lowercase kebab-case); names the export symbol
    /// ([`vouch_abi::export_symbol`]) and must equal `describe().id`.
    pub id: String,
    /// Must equal `describe().version`.
    pub version: String,
    /// The library file (`.so`, `.dylib`, `.dll`).
    pub library: PathBuf,
    /// The file's sha256 as hex (64 characters; compared case-insensitively).
    pub sha256: String,
}

/// The sha256 of a file's bytes, as 64 lowercase hex characters.
///
/// # Errors
/// [`PluginError::Read`] naming the file.
pub fn sha256_file(path: &Path) -> Result<String, PluginError> {
    let read_error = |source| PluginError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut chunk).map_err(read_error)?;
        if n == 0 {
            break;
        }
        hasher.update(&chunk[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Loads and checks a pinned library, in this order: the file's sha256 against the pin
/// (before `dlopen`, which runs the library's initialisers), `dlopen`, the symbol
/// derived from the pinned id, the table header (ABI major, minor, size), `describe`
/// (payload version), then the described id and version against the pin. The library
/// is never unloaded, also when a later check fails (its initialisers already ran).
///
/// # Errors
/// The first failing check as a [`PluginError`] naming the file.
pub fn load_dynamic(pin: &DynamicPin) -> Result<SpecialistHandle, PluginError> {
    let path = &pin.library;
    let found = sha256_file(path)?;
    let expected = pin.sha256.trim().to_ascii_lowercase();
    if found != expected {
        return Err(PluginError::Sha256Mismatch {
            path: path.clone(),
            expected,
            found,
        });
    }
    let handle = open_checked(path, &pin.id, found)?;
    check_pin(&handle, &pin.id, &pin.version, handle.origin())?;
    Ok(handle)
}

/// Loads the library at `path` to read what it is (`vouch specialist pin`): the same
/// checks as [`load_dynamic`] except the pin's, which it is about to produce. Loading
/// runs the library's initialisers, so only the user's own command may call this, for a
/// file the user names.
///
/// # Errors
/// The first failing check as a [`PluginError`] naming the file.
pub fn inspect_dynamic(path: &Path, id: &str) -> Result<SpecialistHandle, PluginError> {
    let found = sha256_file(path)?;
    open_checked(path, id, found)
}

/// `dlopen`, the export symbol of `id`, the table header and `describe`.
fn open_checked(path: &Path, id: &str, found: String) -> Result<SpecialistHandle, PluginError> {
    let path = &path.to_path_buf();
    let pin = DynamicPin {
        id: id.to_owned(),
        version: String::new(),
        library: path.clone(),
        sha256: found.clone(),
    };
    // SAFETY: loading runs the library's initialisers; the user pinned this exact file
    // by its sha256, which is the trust decision. (The file could still be replaced
    // between hashing and loading by someone who can write to it.)
    let library = unsafe { libloading::Library::new(path.as_os_str()) }.map_err(|source| {
        PluginError::Open {
            path: path.clone(),
            source,
        }
    })?;
    // Never unload: tables, buffers and code of the library must outlive every handle.
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    let symbol = export_symbol(&pin.id);
    // SAFETY: the symbol is declared by the ABI as `extern "C" fn() -> *const PluginTable`.
    let export = unsafe { library.get::<extern "C" fn() -> *const PluginTable>(symbol.as_str()) }
        .map_err(|source| PluginError::MissingSymbol {
        path: path.clone(),
        id: pin.id.clone(),
        symbol: symbol.clone(),
        source,
    })?;
    let origin = Origin::Dynamic {
        path: path.clone(),
        sha256: found,
    };
    let table = export();
    // SAFETY: the table is static data of a library that is never unloaded; its header
    // is checked before any other field is read.
    let handle = unsafe { SpecialistHandle::from_table(table, origin) }?;
    Ok(handle)
}

/// The described id and version must equal the pin.
fn check_pin(
    handle: &SpecialistHandle,
    id: &str,
    version: &str,
    origin: &Origin,
) -> Result<(), PluginError> {
    let d = handle.descriptor();
    if d.id != id {
        return Err(PluginError::IdMismatch {
            origin: Box::new(origin.clone()),
            expected: id.to_string(),
            found: d.id.clone(),
        });
    }
    if d.version != version {
        return Err(PluginError::VersionMismatch {
            origin: Box::new(origin.clone()),
            id: id.to_string(),
            expected: version.to_string(),
            found: d.version.clone(),
        });
    }
    Ok(())
}
