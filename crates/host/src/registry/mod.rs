//! The specialist registry: built-in tables (linked rlibs handed over by the binary) and
//! dynamic plugins loaded with libloading from user-supplied pins.
//!
//! The host knows plugins only through `vouch-abi`'s [`PluginTable`]: built-ins and
//! dynamic plugins pass the same checks and are called through the same code
//! ([`SpecialistHandle`]). Libraries are never unloaded.

mod dynamic;
mod error;
mod handle;
mod origin;

pub use dynamic::{DynamicPin, inspect_dynamic, load_dynamic, sha256_file};
pub use error::PluginError;
pub use handle::{MIN_PAYLOAD_VERSION, REQUIRED_ABI_MINOR, SpecialistHandle};
pub use origin::Origin;

use vouch_abi::PluginTable;

/// Every specialist the host may run, by id and version.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    specialists: Vec<SpecialistHandle>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a built-in (linked) plugin's table, e.g.
    /// `vouch_plugin_verifier::plugin_table()`, after the same header and `describe`
    /// checks as a dynamic plugin.
    ///
    /// # Errors
    /// A header, `describe` or payload-version mismatch, or [`PluginError::Duplicate`].
    pub fn add_builtin(
        &mut self,
        table: &'static PluginTable,
    ) -> Result<SpecialistHandle, PluginError> {
        // SAFETY: a `&'static PluginTable` is a full, valid table for the process.
        let handle = unsafe { SpecialistHandle::from_table(table, Origin::BuiltIn) }?;
        self.insert(handle)
    }

    /// Loads a pinned dynamic plugin ([`load_dynamic`]) and registers it. Loading the
    /// same pin twice returns the registered handle.
    ///
    /// # Errors
    /// Every [`load_dynamic`] error, or [`PluginError::Duplicate`] when the same id and
    /// version is registered from elsewhere (e.g. a built-in).
    pub fn load(&mut self, pin: &DynamicPin) -> Result<SpecialistHandle, PluginError> {
        if let Some(existing) = self.find(&pin.id, &pin.version)
            && let Origin::Dynamic { path, sha256 } = existing.origin()
            && *path == pin.library
            && sha256.eq_ignore_ascii_case(pin.sha256.trim())
        {
            return Ok(existing.clone());
        }
        let handle = load_dynamic(pin)?;
        self.insert(handle)
    }

    /// The specialist with exactly this id and version.
    ///
    /// # Errors
    /// [`PluginError::WrongVersion`] naming the pinned and registered versions when the
    /// id is registered with other versions; [`PluginError::NotRegistered`] otherwise.
    pub fn get(&self, id: &str, version: &str) -> Result<SpecialistHandle, PluginError> {
        if let Some(found) = self.find(id, version) {
            return Ok(found.clone());
        }
        let versions: Vec<&str> = self
            .specialists
            .iter()
            .filter(|h| h.descriptor().id == id)
            .map(|h| h.descriptor().version.as_str())
            .collect();
        if versions.is_empty() {
            Err(PluginError::NotRegistered { id: id.to_string() })
        } else {
            Err(PluginError::WrongVersion {
                id: id.to_string(),
                expected: version.to_string(),
                found: versions.join(", "),
            })
        }
    }

    /// Every registered specialist, in registration order.
    pub fn specialists(&self) -> &[SpecialistHandle] {
        &self.specialists
    }

    fn find(&self, id: &str, version: &str) -> Option<&SpecialistHandle> {
        self.specialists.iter().find(|h| {
            let d = h.descriptor();
            d.id == id && d.version == version
        })
    }

    fn insert(&mut self, handle: SpecialistHandle) -> Result<SpecialistHandle, PluginError> {
        let d = handle.descriptor();
        if let Some(existing) = self.find(&d.id, &d.version) {
            return Err(PluginError::Duplicate {
                id: d.id.clone(),
                version: d.version.clone(),
                existing: Box::new(existing.origin().clone()),
                new: Box::new(handle.origin().clone()),
            });
        }
        self.specialists.push(handle.clone());
        Ok(handle)
    }
}

#[cfg(test)]
mod tests;
