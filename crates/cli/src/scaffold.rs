//! `vouch specialist new NAME`: writes a custom specialist plugin crate that builds and
//! loads out of the box.
//!
//! The crate is a standalone cargo workspace (cdylib + rlib) depending on copies of the
//! `vouch-abi` (the plugin boundary) and `vouch-specialist-kit` (standard contracts and
//! prompt blocks) sources this binary was built from, written into the crate's `vendor/`
//! (so it builds for a user who installed vouch, with no source tree and no registry
//! release of those crates). Its one specialist is a panel reviewer with the standard
//! candidate contract, exported with `vouch_abi::export_specialist!`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// A crate this binary was built from, embedded at compile time and written into the
/// new crate's `vendor/` folder.
struct VendoredCrate {
    /// Folder inside the new crate.
    dir: &'static str,
    /// Its standalone `Cargo.toml` (the originals inherit from vouch's workspace).
    manifest: fn() -> String,
    /// `(path inside the folder, text)`.
    sources: &'static [(&'static str, &'static str)],
}

const VENDORED: [VendoredCrate; 2] = [
    VendoredCrate {
        dir: "vendor/vouch-abi",
        manifest: abi_cargo_toml,
        sources: &[
            ("src/lib.rs", include_str!("../../abi/src/lib.rs")),
            ("src/export.rs", include_str!("../../abi/src/export.rs")),
            ("src/payload.rs", include_str!("../../abi/src/payload.rs")),
            (
                "src/specialist.rs",
                include_str!("../../abi/src/specialist.rs"),
            ),
            ("src/table.rs", include_str!("../../abi/src/table.rs")),
        ],
    },
    VendoredCrate {
        dir: "vendor/vouch-specialist-kit",
        manifest: kit_cargo_toml,
        sources: &[
            (
                "src/lib.rs",
                include_str!("../../specialist-kit/src/lib.rs"),
            ),
            (
                "src/builtin.rs",
                include_str!("../../specialist-kit/src/builtin.rs"),
            ),
            (
                "src/contract.rs",
                include_str!("../../specialist-kit/src/contract.rs"),
            ),
            (
                "src/render.rs",
                include_str!("../../specialist-kit/src/render.rs"),
            ),
            (
                "src/sample.rs",
                include_str!("../../specialist-kit/src/sample.rs"),
            ),
            (
                "src/testing.rs",
                include_str!("../../specialist-kit/src/testing.rs"),
            ),
        ],
    },
];

/// The header of a vendored crate's manifest.
fn vendored_package(name: &str) -> String {
    format!(
        r#"# The {name} source of vouch {version}, written by `vouch specialist new`.
# vouch checks the ABI version of a plugin when it loads it; after upgrading vouch,
# run `vouch specialist new` again and copy the vendor folder over.
[package]
name = "{name}"
version = "{version}"
edition = "2024"
license = "MIT OR Apache-2.0"
publish = false
"#,
        version = env!("CARGO_PKG_VERSION")
    )
}

/// A standalone manifest for the ABI copy.
fn abi_cargo_toml() -> String {
    vendored_package("vouch-abi")
        + r#"
[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
thiserror = "2"
"#
}

/// A standalone manifest for the specialist-kit copy (next to the ABI copy).
fn kit_cargo_toml() -> String {
    vendored_package("vouch-specialist-kit")
        + r#"
[dependencies]
vouch-abi = { path = "../vouch-abi" }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
"#
}

/// Rust keywords and standard crate names that cannot be a crate or macro identifier.
const RESERVED: [&str; 56] = [
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "gen",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "try",
    "test",
    "std",
    "core",
    "alloc",
    "proc_macro",
];

/// Checks a plugin id: lowercase kebab-case (`[a-z][a-z0-9]*` words joined by single
/// `-`), at most 64 characters, and not a Rust keyword or standard crate name once `-`
/// becomes `_` (the id names the crate and the export symbol).
/// Ids of vouch's built-in specialists: a custom plugin with one of them would clash
/// with the built-in in the registry.
const BUILT_IN_IDS: [&str; 8] = [
    "generic-investigator",
    "outcome-investigator",
    "conventions",
    "clean-result-audit",
    "verifier",
    "instructions-review",
    "bug-review",
    "objective-review",
];

fn check_name(name: &str) -> anyhow::Result<()> {
    let well_formed = !name.is_empty()
        && name.len() <= 64
        && name.split('-').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    if !well_formed {
        bail!(
            "`{name}` is not a valid specialist id: use lowercase kebab-case such as `sql-review` \
             (letters, digits and single dashes, starting with a letter, at most 64 characters)"
        );
    }
    if RESERVED.contains(&name.replace('-', "_").as_str()) {
        bail!("`{name}` is reserved in Rust; choose another specialist id");
    }
    if BUILT_IN_IDS.contains(&name) {
        bail!("`{name}` is the id of a built-in specialist; choose another specialist id");
    }
    Ok(())
}

/// `sql-review` → `SqlReview`.
fn type_name(name: &str) -> String {
    name.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A TOML basic string (TOML 1.0 §String) holding `text`.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn cargo_toml(name: &str) -> String {
    let abi = toml_string(VENDORED[0].dir);
    let kit = toml_string(VENDORED[1].dir);
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

# cdylib: the library vouch loads with its sha256 pin. rlib: lets a binary link it.
[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
# Copies of the plugin boundary and the specialist kit of the vouch that created this
# crate (see their Cargo.toml).
vouch-abi = {{ path = {abi} }}
vouch-specialist-kit = {{ path = {kit} }}
serde_json = "1"

# Never set `panic = "abort"` in a profile: vouch turns a plugin panic into an error
# result by catching the unwind, which abort would make a crash of the host.

# A standalone workspace; remove this table to make the crate a member of yours.
[workspace]
"#
    )
}

/// The generated crate's `src/lib.rs`: `scaffold_template/lib.rs.txt` with the
/// plugin's id, export symbol and type name filled in.
fn lib_rs(name: &str) -> String {
    include_str!("scaffold_template/lib.rs.txt")
        .replace("@NAME@", name)
        .replace("@SYMBOL_ID@", &name.replace('-', "_"))
        .replace("@TYPE@", &type_name(name))
}

/// Writes a new specialist plugin crate named `name` into `dir/name` and returns that
/// directory: `Cargo.toml` (cdylib + rlib, `vouch-abi` and `vouch-specialist-kit` from
/// `vendor/`, a standalone `[workspace]`), the copies of both crates, `src/lib.rs` (a reviewer with the candidate contract, exported with
/// `export_specialist!`) and `.gitignore`. The crate builds with `cargo build` and loads
/// through a manifest pin of its library's sha256.
///
/// # Errors
/// An invalid id (see the message), an existing `dir/name`, or a file that cannot be
/// written (naming the path).
pub(crate) fn scaffold(name: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    check_name(name)?;
    let root = dir.join(name);
    if root.exists() {
        bail!(
            "{} already exists; choose another name or directory",
            root.display()
        );
    }
    let mut files = vec![
        ("Cargo.toml".to_owned(), cargo_toml(name)),
        ("src/lib.rs".to_owned(), lib_rs(name)),
        (".gitignore".to_owned(), "/target\n".to_string()),
    ];
    for vendored in &VENDORED {
        files.push((
            format!("{}/Cargo.toml", vendored.dir),
            (vendored.manifest)(),
        ));
        for (relative, text) in vendored.sources {
            files.push((format!("{}/{relative}", vendored.dir), (*text).to_owned()));
        }
    }
    for (relative, text) in files {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_kebab_case_and_not_reserved() {
        for ok in ["sql-review", "a", "x2", "api-v2-check"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "Sql",
            "sql_review",
            "-a",
            "a-",
            "a--b",
            "2fa",
            "a b",
            "type",
            "self",
            "test",
            "verifier",
            "generic-investigator",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn type_names_are_pascal_case() {
        assert_eq!(type_name("sql-review"), "SqlReview");
        assert_eq!(type_name("x2"), "X2");
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string(r#"C:\a "b""#), r#""C:\\a \"b\"""#);
        assert_eq!(toml_string("a\tb"), r#""a\u0009b""#);
    }
}
