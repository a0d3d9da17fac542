//! The coverage completion policy (issue 4): events that complete a review with a stated
//! coverage limitation instead of failing it — files no lane received, and stages that
//! saw no source at all.

use crate::snapshot::ChangedFile;
use crate::source::{Revision, SourceLedger, SourceWindow};

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

/// Rule (design, "no clean verdict without full coverage"; issue 10, "reads that tell
/// the truth"): a stage has seen a text file's change only when its ledger covers every
/// changed line on both sides — each hunk's head lines (under the current path) and,
/// when the file removes lines, its base lines (under the previous path for renames and
/// copies), since text a change deletes is shown only at base. A long line
/// ([`crate::snapshot::LongLineChange`]) that was shown only in part counts as seen when
/// the parts shown cover every byte range of it that changed. A truncated patch, a file
/// over the inline budget that was never read, a huge hunk read only in part or only at
/// head, or a long line whose edits were never shown leaves lines unseen. Returns the
/// assigned files with unseen changed lines, in the given order. A metadata-only file
/// (binary, a mode change, a pure rename or copy: no hunk) is seen when its
/// metadata-only patch was shown ([`SourceLedger::shows_metadata`]), inline or through
/// the `diff` tool; a receipt that lists it without that proves nothing was seen.
pub fn files_not_fully_seen<'a>(
    assigned: impl IntoIterator<Item = &'a ChangedFile>,
    ledger: &SourceLedger,
) -> Vec<String> {
    assigned
        .into_iter()
        .filter(|f| match f.is_metadata_only() {
            true => !ledger.shows_metadata(&f.path),
            false => !f.hunks.iter().all(|h| hunk_seen(f, h, ledger)),
        })
        .map(|f| f.path.clone())
        .collect()
}

/// Whether the changed lines of one hunk are covered (see [`files_not_fully_seen`]): its
/// head lines, and its base lines when the file removes lines ([`removes_lines`]).
fn hunk_seen(f: &ChangedFile, h: &crate::snapshot::Hunk, ledger: &SourceLedger) -> bool {
    (h.new_lines == 0 || side_seen(f, h, Revision::Head, ledger))
        && (!removes_lines(f, h) || side_seen(f, h, Revision::Base, ledger))
}

/// Whether a hunk's base side can hold removed text: it has lines and the file removes
/// some. A hunk's lines include git's three lines of context, so the base side of a file
/// that only adds lines holds nothing the head side does not.
fn removes_lines(f: &ChangedFile, h: &crate::snapshot::Hunk) -> bool {
    h.old_lines > 0 && f.deletions > 0
}

/// Whether one side of a hunk is covered: each line shown whole (by a window, or by
/// spans covering every byte of it), or a named line by spans showing its changed ranges.
fn side_seen(
    f: &ChangedFile,
    h: &crate::snapshot::Hunk,
    revision: Revision,
    ledger: &SourceLedger,
) -> bool {
    let (path, start, lines) = match revision {
        Revision::Head => (f.path.as_str(), h.new_start, h.new_lines),
        Revision::Base => (
            f.previous_path.as_deref().unwrap_or(&f.path),
            h.old_start,
            h.old_lines,
        ),
    };
    let window = |s: u32, e: u32| SourceWindow {
        revision,
        path: path.to_string(),
        start_line: s,
        end_line: e,
    };
    if lines == 0 || ledger.check(&window(start, start + lines - 1)).is_ok() {
        return true;
    }
    if f.long_lines.is_empty() && !ledger.spans.iter().any(|s| s.reaches_end) {
        return false;
    }
    (start..start + lines).all(|n| {
        if ledger.shows_line(revision, path, n) {
            return true;
        }
        let Some(long) = f
            .long_lines
            .iter()
            .find(|l| l.revision == revision && l.line == n)
        else {
            return false;
        };
        long.changed
            .iter()
            .all(|&range| ledger.shows_bytes(revision, path, n, range))
    })
}

/// Rule (design, "Structured diagnostics"; issue 9, item 9): a stage's `hunkCount` is the
/// number of hunks of the change whose patch it retrieved or was given: hunks of `files`
/// whose changed lines its ledger covers entirely, by the same rule as
/// [`files_not_fully_seen`] (head lines, base lines when the file removes lines, and a
/// long line's changed bytes).
pub fn hunks_seen<'a>(
    files: impl IntoIterator<Item = &'a ChangedFile>,
    ledger: &SourceLedger,
) -> usize {
    // Only files the ledger names can have a hunk seen: the rest are skipped without a
    // check, so the count costs the ledger's size, not the change's times the ledger's.
    let named: std::collections::HashSet<&str> = ledger
        .windows
        .iter()
        .map(|w| w.path.as_str())
        .chain(ledger.spans.iter().map(|s| s.path.as_str()))
        .collect();
    files
        .into_iter()
        .filter(|f| {
            named.contains(f.path.as_str())
                || f.previous_path
                    .as_deref()
                    .is_some_and(|p| named.contains(p))
        })
        .map(|f| f.hunks.iter().filter(|h| hunk_seen(f, h, ledger)).count())
        .sum()
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
            long_lines: vec![],
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

    #[test]
    fn a_file_is_seen_only_when_every_changed_line_was_read_or_given() {
        use crate::source::{Revision::*, SourceWindow};
        let hunk = |os, ol, ns, nl| Hunk {
            old_start: os,
            old_lines: ol,
            new_start: ns,
            new_lines: nl,
            header: String::new(),
        };
        let file = |path: &str, prev: Option<&str>, hunks: Vec<Hunk>| ChangedFile {
            hunks,
            additions: 1,
            deletions: 1,
            ..crate::snapshot::changed_file(path, prev)
        };
        let w = |rev, path: &str, s, e| SourceWindow {
            revision: rev,
            path: path.into(),
            start_line: s,
            end_line: e,
        };
        let ledger = |windows: Vec<SourceWindow>| {
            let mut l = SourceLedger::default();
            for x in windows {
                l.record(x);
            }
            l
        };
        let a = file("a.rs", None, vec![hunk(10, 2, 10, 3), hunk(50, 1, 51, 0)]);
        let renamed = file(
            "new.rs",
            Some("old.rs"),
            vec![hunk(1, 1, 1, 1), hunk(9, 2, 8, 0)],
        );
        let cases = vec![
            (
                ledger(vec![
                    w(Head, "a.rs", 8, 14),
                    w(Base, "a.rs", 8, 12),
                    w(Base, "a.rs", 50, 50),
                ]),
                vec![],
            ),
            // The second hunk's removed line was never shown.
            (
                ledger(vec![w(Head, "a.rs", 8, 14), w(Base, "a.rs", 8, 12)]),
                vec!["a.rs"],
            ),
            // The first hunk's replaced base lines were never shown.
            (
                ledger(vec![w(Head, "a.rs", 8, 14), w(Base, "a.rs", 50, 50)]),
                vec!["a.rs"],
            ),
            // Only part of the first hunk's head lines.
            (
                ledger(vec![
                    w(Head, "a.rs", 10, 11),
                    w(Base, "a.rs", 8, 12),
                    w(Base, "a.rs", 50, 50),
                ]),
                vec!["a.rs"],
            ),
            (ledger(vec![]), vec!["a.rs"]),
        ];
        for (l, want) in cases {
            assert_eq!(files_not_fully_seen([&a], &l), want);
        }
        // Renames: base lines are under the previous path.
        let seen = ledger(vec![
            w(Head, "new.rs", 1, 1),
            w(Base, "old.rs", 1, 1),
            w(Base, "old.rs", 9, 10),
        ]);
        // The replaced line at base never shown: its removed text is unseen.
        let head_only = ledger(vec![w(Head, "new.rs", 1, 1), w(Base, "old.rs", 9, 10)]);
        assert_eq!(files_not_fully_seen([&renamed], &head_only), vec!["new.rs"]);
        assert!(files_not_fully_seen([&renamed], &seen).is_empty());
        let wrong = ledger(vec![w(Head, "new.rs", 1, 1), w(Base, "new.rs", 9, 10)]);
        assert_eq!(files_not_fully_seen([&renamed], &wrong), vec!["new.rs"]);
    }

    /// A text file `path` of one line, changed in its one hunk.
    fn one_line_file(path: &str) -> ChangedFile {
        let mut f = file(false, EntryKind::File, 0);
        f.path = path.into();
        (f.additions, f.deletions) = (1, 1);
        f.hunks = vec![Hunk {
            old_start: 1,
            old_lines: 1,
            new_start: 1,
            new_lines: 1,
            header: String::new(),
        }];
        f
    }

    /// A 2 MB one-line file edited in three places: seen only when each edited byte
    /// range was shown, never because the line's beginning was.
    #[test]
    fn a_long_line_is_seen_only_when_its_changed_bytes_were_shown() {
        use crate::snapshot::LongLineChange;
        use crate::source::{LineSpan, Revision::*};
        let mut f = one_line_file("bundle.min.js");
        let edits = vec![
            (200_000, 200_008),
            (1_000_000, 1_000_008),
            (1_800_000, 1_800_008),
        ];
        f.long_lines = vec![LongLineChange {
            revision: Head,
            line: 1,
            len: 2_000_000,
            changed: edits.clone(),
        }];
        let span = |rev, line, s, e| LineSpan {
            revision: rev,
            path: "bundle.min.js".into(),
            line,
            start_byte: s,
            end_byte: e,
            reaches_end: false,
        };
        let around = |(s, e): (u32, u32)| span(Head, 1, s - 100, e + 100);
        let cases: Vec<(&str, Vec<LineSpan>, bool)> = vec![
            ("nothing shown", vec![], false),
            (
                "only the first 32 KiB",
                vec![span(Head, 1, 0, 32_768)],
                false,
            ),
            (
                "two of three edits",
                edits[..2].iter().map(|&r| around(r)).collect(),
                false,
            ),
            (
                "every edit",
                edits.iter().map(|&r| around(r)).collect(),
                true,
            ),
            (
                "an edit shown in two adjacent parts",
                vec![
                    around(edits[0]),
                    around(edits[1]),
                    span(Head, 1, 1_799_000, 1_800_004),
                    span(Head, 1, 1_800_004, 1_801_000),
                ],
                true,
            ),
            (
                "one byte of an edit missing",
                vec![
                    around(edits[0]),
                    around(edits[1]),
                    span(Head, 1, 1_799_000, 1_800_007),
                ],
                false,
            ),
            (
                "the edits at base, not head",
                edits.iter().map(|&(s, e)| span(Base, 1, s, e)).collect(),
                false,
            ),
            (
                "the edits on another line",
                edits.iter().map(|&(s, e)| span(Head, 2, s, e)).collect(),
                false,
            ),
        ];
        // The replaced base line is shown whole in every case: only the head side varies.
        let base_line = SourceWindow {
            revision: Base,
            path: "bundle.min.js".into(),
            start_line: 1,
            end_line: 1,
        };
        for (name, spans, seen) in cases {
            let mut l = SourceLedger::default();
            l.record(base_line.clone());
            spans.into_iter().for_each(|s| l.record_span(s));
            assert_eq!(files_not_fully_seen([&f], &l).is_empty(), seen, "{name}");
            // The diagnostics' hunk count follows the same rule.
            assert_eq!(hunks_seen([&f], &l), usize::from(seen), "{name}: hunkCount");
        }
        // A window over the whole line shows it whole.
        let mut whole = SourceLedger::default();
        whole.record(base_line);
        whole.record(SourceWindow {
            revision: Head,
            path: "bundle.min.js".into(),
            start_line: 1,
            end_line: 1,
        });
        assert!(files_not_fully_seen([&f], &whole).is_empty());
    }

    /// Text deleted from inside a long line (`checkAuth(user);` removed from a one-line
    /// file): the head line keeps only the bytes around the deletion point, so the file
    /// is seen only when the base line's removed bytes were shown too.
    #[test]
    fn text_removed_from_a_long_line_is_seen_only_at_base() {
        use crate::snapshot::LongLineChange;
        use crate::source::{LineSpan, Revision::*};
        let mut f = one_line_file("app.js");
        f.long_lines = vec![
            LongLineChange {
                revision: Head,
                line: 1,
                len: 300_000,
                changed: vec![(158_887, 158_889)],
            },
            LongLineChange {
                revision: Base,
                line: 1,
                len: 300_036,
                changed: vec![(158_888, 158_924)],
            },
        ];
        let span = |rev, s, e| LineSpan {
            revision: rev,
            path: "app.js".into(),
            line: 1,
            start_byte: s,
            end_byte: e,
            reaches_end: false,
        };
        let head = span(Head, 158_600, 159_200);
        let base = span(Base, 158_600, 159_200);
        let cases: Vec<(&str, Vec<LineSpan>, bool)> = vec![
            (
                "head only: the removed text was never shown",
                vec![head.clone()],
                false,
            ),
            (
                "base only: the head edit was never shown",
                vec![base.clone()],
                false,
            ),
            ("both sides", vec![head.clone(), base], true),
            (
                "base missing one removed byte",
                vec![head, span(Base, 158_600, 158_923)],
                false,
            ),
        ];
        for (name, spans, seen) in cases {
            let mut l = SourceLedger::default();
            spans.into_iter().for_each(|s| l.record_span(s));
            assert_eq!(files_not_fully_seen([&f], &l).is_empty(), seen, "{name}");
            // The diagnostics' hunk count follows the same rule.
            assert_eq!(hunks_seen([&f], &l), usize::from(seen), "{name}: hunkCount");
        }
    }

    proptest::proptest! {
        /// For any spans and any range: the range counts as shown exactly when every
        /// byte of it lies in some recorded span of that line.
        #[test]
        fn shown_bytes_are_exactly_the_union_of_spans(
            spans in proptest::collection::vec((0u32..200, 0u32..60), 0..8),
            start in 0u32..220,
            len in 1u32..60,
        ) {
            use crate::source::{LineSpan, Revision::Head};
            let mut l = SourceLedger::default();
            for &(s, n) in &spans {
                l.record_span(LineSpan { revision: Head, path: "a".into(), line: 3, start_byte: s, end_byte: s + n, reaches_end: false });
            }
            let end = start + len;
            let truth = (start..end).all(|b| spans.iter().any(|&(s, n)| s <= b && b < s + n));
            proptest::prop_assert_eq!(l.shows_bytes(Head, "a", 3, (start, end)), truth);
        }
    }

    #[test]
    fn hunk_count_is_the_hunks_whose_changed_lines_the_ledger_covers() {
        use crate::source::Revision::*;
        let hunk = |os, ol, ns, nl| Hunk {
            old_start: os,
            old_lines: ol,
            new_start: ns,
            new_lines: nl,
            header: String::new(),
        };
        let mut a = file(false, EntryKind::File, 0);
        a.path = "a.rs".into();
        a.hunks = vec![hunk(1, 1, 1, 2), hunk(20, 2, 21, 0), hunk(40, 1, 40, 3)];
        a.deletions = 3;
        let w = |rev, s, e| SourceWindow {
            revision: rev,
            path: "a.rs".into(),
            start_line: s,
            end_line: e,
        };
        let cases: Vec<(Vec<SourceWindow>, usize)> = vec![
            (vec![], 0),
            (vec![w(Head, 1, 2), w(Base, 1, 1)], 1),
            (vec![w(Head, 1, 2)], 0),
            (vec![w(Head, 1, 1), w(Base, 1, 1)], 0),
            (vec![w(Head, 1, 50), w(Base, 1, 50)], 3),
            (vec![w(Head, 1, 50), w(Base, 20, 21)], 1),
            (vec![w(Head, 1, 50)], 0),
            (vec![w(Base, 1, 50)], 1),
        ];
        for (windows, want) in cases {
            let mut l = SourceLedger::default();
            for x in windows.clone() {
                l.record(x);
            }
            assert_eq!(hunks_seen([&a], &l), want, "{windows:?}");
        }
    }
}
