//! The canonical list of expected files, and which changed files enter it whole.

use crate::snapshot::{ChangedFile, FileStatus};

/// Rule (coverage contract, "Canonical list"): at the start of the reviewer stage the host
/// derives the de-duplicated, sorted list of current paths from the snapshot; for renames
/// only the current `path` counts, `previous_path` is diff context and never a second entry.
/// This list is the single source for prompting, repair, verification, retry diagnostics
/// and progress.
///
/// Sorting is by byte order of the UTF-8 path (Rust `str` ordering), so it is stable
/// across platforms and locales.
pub fn expected_files<'a>(files: impl IntoIterator<Item = &'a ChangedFile>) -> Vec<String> {
    let mut paths: Vec<String> = files.into_iter().map(|f| f.path.clone()).collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Rule (exclusions and renames): a file renamed or copied from a path an exclusion rule
/// matches (`excluded`) to a path no rule matches is reviewed as an added file. Its
/// content enters the reviewed scope for the first time: a diff against its excluded
/// source would show only what the move changed (nothing, for a pure rename) and no lane
/// would ever be shown the rest, so every head line of it is a changed line that must be
/// shown and seen before its coverage counts. Every other file keeps its pairing: a move
/// within the reviewed scope was reviewed at its source, and a move into an excluded
/// path is excluded by its current path.
pub fn reviewed_as_added(file: &ChangedFile, excluded: impl Fn(&str) -> bool) -> bool {
    let moved = matches!(file.status, FileStatus::Renamed | FileStatus::Copied);
    moved && file.previous_path.as_deref().is_some_and(&excluded) && !excluded(&file.path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::changed_file as file;

    #[test]
    fn a_file_moved_out_of_an_excluded_path_is_reviewed_as_added() {
        let vendor = |p: &str| p.starts_with("vendor/");
        let with = |status, path: &str, previous: Option<&str>| ChangedFile {
            status,
            ..file(path, previous)
        };
        use FileStatus::*;
        let cases = [
            (with(Renamed, "src/lib.js", Some("vendor/lib.js")), true),
            (with(Copied, "src/lib.js", Some("vendor/lib.js")), true),
            // Moves within the reviewed scope, or into or within an excluded path.
            (with(Renamed, "src/lib.js", Some("lib/lib.js")), false),
            (with(Copied, "src/lib.js", Some("lib/lib.js")), false),
            (with(Renamed, "vendor/lib.js", Some("src/lib.js")), false),
            (with(Renamed, "vendor/b.js", Some("vendor/a.js")), false),
            // No pairing: nothing to undo.
            (with(Added, "src/lib.js", None), false),
            (with(Modified, "src/lib.js", None), false),
            (with(Deleted, "vendor/lib.js", None), false),
            // A status that names no source, whatever a previous path says.
            (with(Modified, "src/lib.js", Some("vendor/lib.js")), false),
            (with(Renamed, "src/lib.js", None), false),
        ];
        for (f, expected) in cases {
            assert_eq!(reviewed_as_added(&f, vendor), expected, "{f:?}");
        }
    }

    #[test]
    fn canonical_list_is_sorted_deduplicated_current_paths() {
        type Case<'a> = (&'a [(&'a str, Option<&'a str>)], &'a [&'a str]);
        let cases: &[Case] = &[
            (&[], &[]),
            (&[("b.rs", None), ("a.rs", None)], &["a.rs", "b.rs"]),
            (&[("a.rs", None), ("a.rs", None)], &["a.rs"]),
            (&[("new/name.rs", Some("old/name.rs"))], &["new/name.rs"]),
            (
                &[
                    ("z.md", None),
                    ("dir/x y.rs", Some("x.rs")),
                    ("Z.md", None),
                    ("z.md", None),
                ],
                &["Z.md", "dir/x y.rs", "z.md"],
            ),
        ];
        for (input, expected) in cases {
            let files: Vec<ChangedFile> = input.iter().map(|(p, q)| file(p, *q)).collect();
            assert_eq!(expected_files(&files), expected.to_vec(), "input {input:?}");
        }
    }
}
