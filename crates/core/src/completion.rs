//! The coverage completion policy (issue 4): events that complete a review with a stated
//! coverage limitation instead of failing it — files no lane received, and stages that
//! saw no source at all.

use crate::snapshot::ChangedFile;

/// Rule (issue 4, "Coverage completion policy"; design, "no file is silently skipped"):
/// a reviewable changed file that no candidate lane instance was assigned is reported,
/// never skipped. Returns the files of `expected` (the canonical list after exclusions)
/// that appear in none of `assignments` (one list per lane instance that runs), in
/// `expected`'s order. A non-empty result makes coverage `limited`.
pub fn files_without_lane(expected: &[String], assignments: &[Vec<String>]) -> Vec<String> {
    expected
        .iter()
        .filter(|path| !assignments.iter().any(|a| a.contains(path)))
        .cloned()
        .collect()
}

/// Rule (issue 4, "Coverage completion policy"): a stage that read or was given zero
/// source windows is a source lookup gap — unless every file assigned to it is
/// metadata-only ([`ChangedFile::is_metadata_only`]: mode change, pure rename or copy,
/// binary, submodule), which can finish without text reads. A gap makes coverage
/// `limited`; it never fails the review and is never proof of a defect.
pub fn zero_source_gap<'a>(
    assigned: impl IntoIterator<Item = &'a ChangedFile>,
    source_windows: usize,
) -> bool {
    source_windows == 0 && assigned.into_iter().any(|f| !f.is_metadata_only())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{EntryKind, FileStatus, Hunk};

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn files_no_lane_received_are_reported_in_list_order() {
        let expected = strings(&["a.rs", "b.md", "c.toml", "d.rs"]);
        let cases: Vec<(Vec<Vec<String>>, Vec<&str>)> = vec![
            (vec![expected.clone()], vec![]),
            (vec![], vec!["a.rs", "b.md", "c.toml", "d.rs"]),
            (
                vec![strings(&["a.rs", "d.rs"]), strings(&["b.md"])],
                vec!["c.toml"],
            ),
            (
                vec![strings(&["d.rs"]), strings(&[])],
                vec!["a.rs", "b.md", "c.toml"],
            ),
            // Exact paths only: no normalisation.
            (
                vec![strings(&["./a.rs", "b.md", "c.toml", "d.rs"])],
                vec!["a.rs"],
            ),
        ];
        for (assignments, want) in cases {
            assert_eq!(
                files_without_lane(&expected, &assignments),
                strings(&want),
                "{assignments:?}"
            );
        }
    }

    fn file(binary: bool, kind: EntryKind, hunks: usize) -> ChangedFile {
        ChangedFile {
            path: "f".into(),
            previous_path: None,
            similarity: None,
            status: FileStatus::Modified,
            kind,
            old_mode: None,
            new_mode: None,
            binary,
            hunks: (0..hunks)
                .map(|i| Hunk {
                    old_start: 1 + i as u32,
                    old_lines: 1,
                    new_start: 1 + i as u32,
                    new_lines: 1,
                    header: String::new(),
                })
                .collect(),
            additions: 0,
            deletions: 0,
        }
    }

    #[test]
    fn a_stage_that_saw_no_source_has_a_gap_unless_its_files_are_metadata_only() {
        let text = file(false, EntryKind::File, 2);
        let mode_only = file(false, EntryKind::Executable, 0);
        let binary = file(true, EntryKind::File, 0);
        let submodule = file(false, EntryKind::Submodule, 1);
        let cases: Vec<(Vec<&ChangedFile>, usize, bool)> = vec![
            (vec![&text], 0, true),
            (vec![&text], 1, false),
            (vec![&mode_only, &binary, &submodule], 0, false),
            (vec![&mode_only, &text], 0, true),
            (vec![], 0, false),
        ];
        for (assigned, windows, gap) in cases {
            assert_eq!(zero_source_gap(assigned.iter().copied(), windows), gap);
        }
    }
}
