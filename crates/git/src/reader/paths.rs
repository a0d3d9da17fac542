//! Validation of the paths models pass to the repository tools.
//!
//! Rule (design, "Repository tools"): paths are repository-relative and `/`-separated;
//! absolute paths, `..` and anything outside the tree are refused with an error the model
//! sees. Refusal happens before any lookup, so no path is ever resolved outside the tree.

use super::ReadError;

/// Checks a tool path and returns its canonical form: components joined by `/`, with
/// empty and `.` components dropped (`./src//a.rs` → `src/a.rs`), so source windows are
/// recorded under the same path the snapshot uses. The root is `""`.
///
/// Refused: a leading `/` (absolute), a `..` component, a NUL byte, and, when
/// `allow_root` is false, a path that names the root (empty, `.`). A backslash is an
/// ordinary character of a name, as in git (`back\slash.txt` is a file of its own); a
/// model that separates with it finds nothing, and the not-found error says to use `/`.
pub fn normalize(path: &str, allow_root: bool) -> Result<String, ReadError> {
    let refuse = |reason: String| Err(ReadError::Refused { reason });
    if path.contains('\0') {
        return refuse("the path contains a NUL byte".into());
    }
    if path.starts_with('/') {
        return refuse(format!(
            "`{path}` is absolute; paths are relative to the repository root, e.g. `src/main.rs`"
        ));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return refuse(format!(
                    "`{path}` contains `..`; only paths inside the repository can be read"
                ));
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() && !allow_root {
        return refuse(if path.is_empty() {
            "the path is empty; name a file, e.g. `src/main.rs`".into()
        } else {
            format!("`{path}` names the repository root, not a file; use list_dir for directories")
        });
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_paths_are_relative_and_stay_inside_the_tree() {
        let cases: &[(&str, bool, Option<&str>)] = &[
            ("src/a.rs", false, Some("src/a.rs")),
            ("./src//a.rs", false, Some("src/a.rs")),
            ("src/dir/", true, Some("src/dir")),
            ("with space/ünï.rs", false, Some("with space/ünï.rs")),
            ("..foo/bar..", false, Some("..foo/bar..")),
            ("", true, Some("")),
            (".", true, Some("")),
            ("", false, None),
            (".", false, None),
            ("/etc/passwd", false, None),
            ("/", true, None),
            ("../secret", false, None),
            ("src/../../x", false, None),
            ("src/..", true, None),
            ("src\\a.rs", false, Some("src\\a.rs")),
            ("back\\slash.txt", false, Some("back\\slash.txt")),
            ("src/a\0.rs", false, None),
        ];
        for &(input, allow_root, expected) in cases {
            let got = normalize(input, allow_root).ok();
            assert_eq!(
                got.as_deref(),
                expected,
                "{input:?} (allow_root {allow_root})"
            );
        }
        let err = normalize("../x", false).unwrap_err().to_string();
        assert!(err.starts_with("refused: `../x` contains `..`"), "{err}");
    }
}
