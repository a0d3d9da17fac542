//! `vouch specialist pin LIBRARY`: the manifest entry that pins a built plugin library
//! (id, version and role read from the library itself, its sha256, its absolute path).

use std::path::Path;

use vouch_host::registry::{inspect_dynamic, sha256_file};

use crate::UsageError;

/// The plugin id a library file name implies: `libmy_review.so` → `my-review` (cargo
/// turns the crate's dashes into underscores and adds the platform's prefix/suffix).
pub(crate) fn id_from_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let name = name
        .strip_prefix(std::env::consts::DLL_PREFIX)
        .unwrap_or(name);
    let stem = name.strip_suffix(std::env::consts::DLL_SUFFIX)?;
    (!stem.is_empty()).then(|| stem.replace('_', "-"))
}

/// The `[[specialist]]` entry (TOML) for the library at `path`.
///
/// # Errors
/// A [`UsageError`] when the file cannot be read or is not a vouch plugin with that id.
pub(crate) fn entry(path: &Path, id: Option<&str>) -> Result<String, UsageError> {
    let id = match id {
        Some(id) => id.to_owned(),
        None => id_from_file_name(path).ok_or_else(|| {
            UsageError(format!(
                "{} is not named like a plugin library ({}NAME{}); give the plugin id with --id",
                path.display(),
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            ))
        })?,
    };
    let library = path
        .canonicalize()
        .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
    let sha256 = sha256_file(&library).map_err(|e| UsageError(e.to_string()))?;
    let handle = inspect_dynamic(&library, &id).map_err(|e| {
        UsageError(format!(
            "{e}\n  help: build the plugin with `cargo build` and pin the library it produced; give its id with --id when the file name differs"
        ))
    })?;
    let d = handle.descriptor();
    let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
    Ok(format!(
        "# {description}\n[[specialist]]\nid = {id}\nversion = {version}\nrole = {role}\nlibrary = {library}\nsha256 = {sha256}\n",
        description = d.description.lines().next().unwrap_or_default(),
        id = quote(&d.id),
        version = quote(&d.version),
        role = quote(d.role.as_str()),
        library = quote(&library.to_string_lossy()),
        sha256 = quote(&sha256),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_library_file_names() {
        let lib = |stem: &str| {
            format!(
                "target/release/{}{stem}{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            )
        };
        assert_eq!(
            id_from_file_name(Path::new(&lib("my_review"))).as_deref(),
            Some("my-review")
        );
        assert_eq!(
            id_from_file_name(Path::new(&lib("probe"))).as_deref(),
            Some("probe")
        );
        assert_eq!(id_from_file_name(Path::new("notes.txt")), None);
        assert_eq!(id_from_file_name(Path::new(&lib(""))), None);
    }
}
