//! The reviewed change: a `merge-base(base, head)..head` range as a pull request shows it.

use serde::{Deserialize, Serialize};

/// One resolved commit of the reviewed range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitRef {
    /// The revision as the user wrote it (`main`, `HEAD~3`, a SHA).
    pub spec: String,
    /// The full 40-hex object id it resolved to.
    pub sha: String,
}

/// What happened to one changed path between base and head (`git diff --name-status` terms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileStatus {
    /// New at head.
    Added,
    /// Content changed.
    Modified,
    /// Gone at head.
    Deleted,
    /// Moved from `previous_path` (possibly with edits).
    Renamed,
    /// Copied from `previous_path` (possibly with edits).
    Copied,
    /// Only the file mode changed (e.g. the executable bit).
    ModeOnly,
    /// The entry changed type (file ↔ symlink ↔ submodule).
    TypeChanged,
}

/// What kind of tree entry a path is (at head, or at base for deletions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A regular file (mode 100644).
    File,
    /// An executable file (mode 100755).
    Executable,
    /// A symbolic link (mode 120000); its content is the link text.
    Symlink,
    /// A submodule (gitlink, mode 160000); its content is a commit id.
    Submodule,
}

/// One hunk of a unified diff. Line numbers are 1-based, as in `@@ -a,b +c,d @@`.
/// A side with zero lines (pure addition or deletion) keeps git's convention of the
/// line *before* the hunk (0 at the file start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// First line at base.
    pub old_start: u32,
    /// Number of base lines the hunk spans.
    pub old_lines: u32,
    /// First line at head.
    pub new_start: u32,
    /// Number of head lines the hunk spans.
    pub new_lines: u32,
    /// The `@@ ... @@ context` header line as git wrote it, without a trailing newline.
    pub header: String,
}

/// One changed path of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangedFile {
    /// The current path (at head; for a deletion, the path that was deleted). UTF-8,
    /// repository-relative, `/`-separated, never quoted or escaped.
    pub path: String,
    /// For renames and copies, the source path at base. Diff context only: it is never an
    /// entry of the canonical file list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_path: Option<String>,
    /// Rename/copy similarity in percent (0–100), when git computed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
    /// What happened to the path.
    pub status: FileStatus,
    /// Entry kind at head (at base for deletions).
    pub kind: EntryKind,
    /// Octal file mode at base (e.g. `0o100644`), `None` when absent at base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_mode: Option<u32>,
    /// Octal file mode at head, `None` when absent at head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_mode: Option<u32>,
    /// True when git considers either side binary; binary files have no hunks.
    pub binary: bool,
    /// Text hunks, in file order.
    pub hunks: Vec<Hunk>,
    /// Added lines over all hunks.
    pub additions: u32,
    /// Deleted lines over all hunks.
    pub deletions: u32,
    /// Changed lines a shard may not hold whole ([`NAMED_LINE_BYTES`]; every long line,
    /// [`LONG_LINE_BYTES`], among them), with the byte ranges that changed in each: such
    /// a line is "seen" when shown whole or when those ranges were shown (see
    /// [`crate::files_not_fully_seen`]). Empty for ordinary files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub long_lines: Vec<LongLineChange>,
}

/// A changed line shown in this many bytes or more is a long line ([`is_long_line`]): a
/// patch shows it cut and a shard may not hold it whole, so the snapshot records which of
/// its bytes changed and a shard is given those bytes. Lines shown shorter a patch shows
/// whole.
pub const LONG_LINE_BYTES: u32 = 8 * 1024;

/// Rule (issue 28, long lines): a line is long when its shown text
/// ([`crate::shown_text`]: a byte that is not UTF-8 takes four) has [`LONG_LINE_BYTES`]
/// or more, so a line of Latin-1 text of a quarter of that is long too. One measure for
/// the snapshot naming long lines, the patch cutting them and the shard planner.
pub fn is_long_line(line: &[u8]) -> bool {
    // No line of fewer than a quarter of the bound can be shown that long.
    line.len() * 4 >= LONG_LINE_BYTES as usize && crate::shown_len(line) >= LONG_LINE_BYTES as usize
}

/// A changed line shown in this many bytes or more is named by the snapshot with the
/// bytes that changed in it ([`is_named_line`]), so a shard that cannot hold it whole is
/// given those bytes instead: the smallest shard a 16k-token window leaves without tools
/// holds about 2 KiB of lines. Lines shorter than [`LONG_LINE_BYTES`] are still shown
/// whole wherever they fit.
pub const NAMED_LINE_BYTES: u32 = 1024;

/// Rule (issue 28, lines longer than a shard): a changed line is named with its changed
/// byte ranges when its shown text has [`NAMED_LINE_BYTES`] or more. Naming never makes
/// the seen rule stricter: a named line is seen whole or by its changed ranges.
pub fn is_named_line(line: &[u8]) -> bool {
    line.len() * 4 >= NAMED_LINE_BYTES as usize
        && crate::shown_len(line) >= NAMED_LINE_BYTES as usize
}

/// One changed line named by the snapshot ([`is_named_line`]) and the byte ranges of it
/// that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LongLineChange {
    /// Head for an added or rewritten line (under the current path), base for a removed
    /// one (under the previous path for renames and copies).
    pub revision: crate::source::Revision,
    /// The line number at that revision.
    pub line: u32,
    /// The line's length in bytes (without its line ending).
    pub len: u32,
    /// Byte ranges `[start, end)` of the line that differ from the other side, sorted and
    /// disjoint; a range may be empty-width only for a pure deletion point (then it is
    /// widened to one byte on each side).
    pub changed: Vec<(u32, u32)>,
}

impl ChangedFile {
    /// True when the change carries no text to read: a mode-only change, a pure rename or
    /// copy (no hunks), a binary file, or a submodule pointer. Such files can be covered
    /// without a text read.
    pub fn is_metadata_only(&self) -> bool {
        self.binary || self.kind == EntryKind::Submodule || self.hunks.is_empty()
    }
}

/// Totals over the snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeCounts {
    /// Number of changed paths.
    pub files: u32,
    /// Number of hunks.
    pub hunks: u32,
    /// Added lines.
    pub additions: u32,
    /// Deleted lines.
    pub deletions: u32,
}

impl ChangeCounts {
    /// The totals of `files`: how many, their hunks, added and removed lines.
    pub fn of(files: &[ChangedFile]) -> ChangeCounts {
        let mut c = ChangeCounts {
            files: files.len() as u32,
            ..ChangeCounts::default()
        };
        for f in files {
            c.hunks += f.hunks.len() as u32;
            c.additions += f.additions;
            c.deletions += f.deletions;
        }
        c
    }
}

/// A commit of the reviewed range, for intent detection (newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RangeCommit {
    /// Full object id.
    pub sha: String,
    /// The full commit message.
    pub message: String,
}

/// The change under review: what a pull request from `base` to `head` shows,
/// i.e. the diff `merge-base(base, head)..head`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSnapshot {
    /// The base revision as given and resolved.
    pub base: CommitRef,
    /// The head revision as given and resolved.
    pub head: CommitRef,
    /// The merge base of base and head: the diff's old side.
    pub merge_base: String,
    /// Changed paths, sorted by `path`.
    pub files: Vec<ChangedFile>,
    /// Commits in `merge_base..head`, newest first.
    pub commits: Vec<RangeCommit>,
    /// Set when rename detection stopped at its limit, so some renames may show as a
    /// deletion plus an addition (see [`crate::rename_limitation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_limit: Option<RenameLimitHit>,
}

/// Rename detection compared each added file with at most `limit` of the `sources`
/// candidate sources (deleted files, and modified files when copies are detected), so
/// renames among more sources than that may be left unpaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameLimitHit {
    /// Sources compared per added file.
    pub limit: u32,
    /// Candidate sources in the change.
    pub sources: u32,
    /// Added files (rename targets) in the change.
    pub targets: u32,
}

/// Rule (issue 10, "reads that tell the truth"): when rename detection stopped at its
/// limit, the report says so — renames may then show as a deletion plus an addition,
/// which changes what the review shows (never what it reads: both sides are reviewed).
/// `None` when every rename could be paired.
pub fn rename_limitation(snapshot: &ChangeSnapshot) -> Option<crate::Limitation> {
    let hit = snapshot.rename_limit?;
    Some(crate::Limitation {
        kind: crate::LimitationKind::RenameLimit,
        stage: None,
        detail: format!(
            "rename detection compared each of {} added file(s) with at most {} of {} possible \
             sources; some renames may be shown as a deleted plus an added file",
            hit.targets, hit.limit, hit.sources
        ),
    })
}

impl ChangeSnapshot {
    /// True when the range changes nothing: the review says "nothing to review".
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Totals over all files.
    pub fn counts(&self) -> ChangeCounts {
        ChangeCounts::of(&self.files)
    }

    /// The changed files `paths` name, by current path or, for a renamed or copied file,
    /// by previous path; each once, in the snapshot's order. Costs the names times
    /// log(files), plus one pass over the renamed and copied files.
    pub fn files_named<'a>(&self, paths: impl IntoIterator<Item = &'a str>) -> Vec<&ChangedFile> {
        let names: std::collections::BTreeSet<&str> = paths.into_iter().collect();
        let mut found: Vec<usize> = names
            .iter()
            .filter_map(|p| self.files.binary_search_by(|f| f.path.as_str().cmp(p)).ok())
            .collect();
        found.extend(self.files.iter().enumerate().filter_map(|(i, f)| {
            f.previous_path
                .as_deref()
                .filter(|p| names.contains(p))
                .map(|_| i)
        }));
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(|i| &self.files[i]).collect()
    }

    /// The file with this current path, if it changed.
    pub fn file(&self, path: &str) -> Option<&ChangedFile> {
        // `files` is sorted by path (byte order), so a lookup costs log(files), not files.
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }
}

/// A changed text file with no hunk for tests: modified, or renamed from `previous`.
#[cfg(test)]
pub(crate) fn changed_file(path: &str, previous: Option<&str>) -> ChangedFile {
    ChangedFile {
        path: path.into(),
        previous_path: previous.map(Into::into),
        similarity: None,
        status: if previous.is_some() {
            FileStatus::Renamed
        } else {
            FileStatus::Modified
        },
        kind: EntryKind::File,
        old_mode: None,
        new_mode: None,
        binary: false,
        hunks: vec![],
        additions: 0,
        deletions: 0,
        long_lines: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(rename_limit: Option<RenameLimitHit>) -> ChangeSnapshot {
        let commit = |spec: &str| CommitRef {
            spec: spec.into(),
            sha: "0".repeat(40),
        };
        ChangeSnapshot {
            base: commit("main"),
            head: commit("HEAD"),
            merge_base: "0".repeat(40),
            files: vec![],
            commits: vec![],
            rename_limit,
        }
    }

    #[test]
    fn a_rename_limit_hit_is_stated_and_an_unlimited_detection_is_not() {
        let hit = RenameLimitHit {
            limit: 10_000,
            sources: 12_000,
            targets: 900,
        };
        let cases = [
            (None, None),
            (
                Some(hit),
                Some("each of 900 added file(s) with at most 10000 of 12000"),
            ),
        ];
        for (limit, expected) in cases {
            let got = rename_limitation(&snapshot(limit));
            assert_eq!(
                got.as_ref().map(|l| l.kind),
                expected.map(|_| crate::LimitationKind::RenameLimit)
            );
            if let (Some(l), Some(text)) = (got, expected) {
                assert!(l.detail.contains(text), "{}", l.detail);
                assert_eq!(l.stage, None);
            }
        }
    }

    #[test]
    fn files_are_found_by_current_and_by_previous_path() {
        let mut s = snapshot(None);
        s.files = vec![
            changed_file("a/x.rs", None),
            changed_file("b/new.rs", Some("b/old.rs")),
            changed_file("c.rs", None),
        ];
        assert_eq!(s.file("c.rs").map(|f| f.path.as_str()), Some("c.rs"));
        assert_eq!(
            s.file("b/old.rs"),
            None,
            "a previous path is not a current path"
        );
        assert_eq!(s.file("zzz"), None);
        // (names, current paths found)
        let cases: [(&[&str], &[&str]); 5] = [
            (&[], &[]),
            (&["c.rs", "a/x.rs", "c.rs"], &["a/x.rs", "c.rs"]),
            (&["b/old.rs"], &["b/new.rs"]),
            (&["b/old.rs", "b/new.rs", "unchanged.rs"], &["b/new.rs"]),
            (&["nothing"], &[]),
        ];
        for (names, want) in cases {
            let got: Vec<&str> = s
                .files_named(names.iter().copied())
                .iter()
                .map(|f| f.path.as_str())
                .collect();
            assert_eq!(got, want, "{names:?}");
        }
    }

    #[test]
    fn a_line_is_long_by_what_it_shows() {
        let bound = LONG_LINE_BYTES as usize;
        // (line, long)
        let cases: Vec<(Vec<u8>, bool)> = vec![
            (vec![b'a'; bound - 1], false),
            (vec![b'a'; bound], true),
            ("\u{e9}".repeat(bound / 2).into_bytes(), true),
            ("\u{e9}".repeat(bound / 2 - 1).into_bytes(), false),
            // A byte that is not UTF-8 is shown as `\xNN`: a quarter of the bound.
            (vec![0xE9; bound / 4], true),
            (vec![0xE9; bound / 4 - 1], false),
            ([vec![0xE9; 100], vec![b'a'; bound - 400]].concat(), true),
            ([vec![0xE9; 100], vec![b'a'; bound - 401]].concat(), false),
        ];
        for (line, long) in cases {
            assert_eq!(is_long_line(&line), long, "{} bytes", line.len());
        }
    }
}
