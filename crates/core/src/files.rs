//! The canonical list of expected files.

use crate::snapshot::ChangedFile;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::changed_file as file;

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
