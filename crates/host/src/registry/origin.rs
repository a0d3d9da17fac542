//! Where a specialist's table came from.

use std::fmt;
use std::path::PathBuf;

/// Where a specialist's table came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Linked into the binary (an rlib) and handed to the registry.
    BuiltIn,
    /// Loaded with `dlopen` from a pinned library file.
    Dynamic {
        /// The library file as given in the pin.
        path: PathBuf,
        /// The file's sha256 (lowercase hex), checked before loading.
        sha256: String,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in plugin"),
            Origin::Dynamic { path, .. } => write!(f, "plugin library {}", path.display()),
        }
    }
}
