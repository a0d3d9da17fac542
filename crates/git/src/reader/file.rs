//! `read_file`: a numbered line window of one file at head or base.

use std::fmt::Write as _;

use git2::ObjectType;
use vouch_core::snapshot::EntryKind;
use vouch_core::source::{Revision, SourceWindow};

use super::{MAX_BYTES, MAX_LINES, ReadError, SourceReader, cut, lookup, paths, rev_name};
use crate::range_diff::entry_kind;

/// The result of one `read_file` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// The exact lines returned (1-based, inclusive), with the canonical path: what the
    /// host records in the source ledger. `None` only for an empty file.
    pub window: Option<SourceWindow>,
    /// Lines in the whole file (git's count: a last line without `\n` counts).
    pub total_lines: u32,
    /// What the entry is. Symlinks return their link text (never followed), submodules
    /// their commit id, each as line 1.
    pub kind: EntryKind,
    /// True when the output stopped before the requested end (line or byte bound).
    pub truncated: bool,
    /// The text for the model: a header line (`path at head, lines a-b of n`), one
    /// `{n}: {line}` per line, and a note when truncated that states the bounds and the
    /// `start_line` to continue from.
    pub text: String,
}

impl SourceReader {
    /// Reads lines `start_line..=end_line` (1-based, inclusive) of `path` at `revision`.
    ///
    /// Defaults: `start_line` 1, `end_line` `start_line + MAX_LINES - 1`. An `end_line`
    /// past the end of the file is clamped. At most [`MAX_LINES`] lines and [`MAX_BYTES`]
    /// bytes are returned; a single line longer than the byte bound is shown cut. Reading
    /// a window loads one blob, never the rest of the tree.
    ///
    /// # Errors
    /// [`ReadError::Refused`] for an invalid path, [`ReadError::NotFound`],
    /// [`ReadError::WrongKind`] for a directory, [`ReadError::Binary`],
    /// [`ReadError::InvalidRange`] for line 0, `end_line < start_line` or a start past the
    /// end of the file.
    pub fn read_file(
        &self,
        revision: Revision,
        path: &str,
        start_line: Option<u32>,
        end_line: Option<u32>,
    ) -> Result<FileRead, ReadError> {
        let path = paths::normalize(path, false)?;
        let repo = self.repo();
        let tree = repo.find_tree(self.tree_id(revision))?;
        let entry = lookup(&tree, revision, &path)?;
        let mode = file_mode(entry.filemode());
        match entry.kind() {
            Some(ObjectType::Tree) => Err(ReadError::WrongKind {
                revision,
                path,
                actual: "a directory",
                hint: "use list_dir to see its entries",
            }),
            Some(ObjectType::Commit) => Ok(single_line(
                revision,
                &path,
                EntryKind::Submodule,
                &entry.id().to_string(),
                "submodule: this is the commit id the gitlink points to; its files are not part of this repository",
            )),
            _ => {
                let blob = repo.find_blob(entry.id())?;
                let kind = entry_kind(mode);
                if mode == git2::FileMode::Link {
                    let target = String::from_utf8_lossy(blob.content());
                    return Ok(single_line(
                        revision,
                        &path,
                        EntryKind::Symlink,
                        &target,
                        "symbolic link: this is the link text; links are never followed",
                    ));
                }
                if blob.is_binary() {
                    return Err(ReadError::Binary {
                        revision,
                        path,
                        size: blob.size(),
                    });
                }
                window(revision, &path, kind, blob.content(), start_line, end_line)
            }
        }
    }
}

/// The mode of a tree entry as git2's enum (entry modes are always one of the known ones).
pub(crate) fn file_mode(raw: i32) -> git2::FileMode {
    match raw {
        0o100755 => git2::FileMode::BlobExecutable,
        0o120000 => git2::FileMode::Link,
        0o160000 => git2::FileMode::Commit,
        0o040000 => git2::FileMode::Tree,
        _ => git2::FileMode::Blob,
    }
}

/// A symlink's text or a submodule's commit id as line 1.
fn single_line(
    revision: Revision,
    path: &str,
    kind: EntryKind,
    line: &str,
    note: &str,
) -> FileRead {
    let shown = cut(line, MAX_BYTES / 2);
    FileRead {
        window: Some(SourceWindow {
            revision,
            path: path.to_string(),
            start_line: 1,
            end_line: 1,
        }),
        total_lines: 1,
        kind,
        truncated: shown.len() < line.len(),
        text: format!(
            "{path} at {}, line 1 of 1 ({note})\n1: {shown}\n",
            rev_name(revision)
        ),
    }
}

/// The lines of `content`, split at `\n`, each without its `\n` and a `\r` before it.
pub(crate) fn lines(content: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    let empty = content.is_empty();
    body.split(|&b| b == b'\n')
        .filter(move |_| !empty)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// Git's line count: newlines, plus one for a last line without `\n`.
pub(crate) fn line_count(content: &[u8]) -> u32 {
    let newlines = content.iter().filter(|&&b| b == b'\n').count();
    let partial = usize::from(!content.is_empty() && !content.ends_with(b"\n"));
    (newlines + partial) as u32
}

/// Renders the bounded window of a text blob.
fn window(
    revision: Revision,
    path: &str,
    kind: EntryKind,
    content: &[u8],
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> Result<FileRead, ReadError> {
    let total = line_count(content);
    let start = start_line.unwrap_or(1);
    let range_error = |message: String| Err(ReadError::InvalidRange { message });
    if start == 0 || end_line == Some(0) {
        return range_error(
            "line numbers are 1-based; start_line and end_line must be at least 1".into(),
        );
    }
    if let Some(end) = end_line
        && end < start
    {
        return range_error(format!("end_line {end} is before start_line {start}"));
    }
    if total == 0 {
        return Ok(FileRead {
            window: None,
            total_lines: 0,
            kind,
            truncated: false,
            text: format!("{path} at {} is empty (0 lines)\n", rev_name(revision)),
        });
    }
    if start > total {
        return range_error(format!(
            "start_line {start} is past the end of `{path}` at {}, which has {total} lines",
            rev_name(revision)
        ));
    }
    let wanted_end = end_line.unwrap_or(u32::MAX).min(total);
    let line_bound_end = start.saturating_add(MAX_LINES - 1);

    let mut body = String::new();
    let mut last = start - 1;
    let mut cut_line = false;
    // Leave room for the header and the truncation note, which name the path.
    let budget = MAX_BYTES.saturating_sub(320 + 2 * path.len()).max(1024);
    for (i, raw) in lines(content).enumerate().skip(start as usize - 1) {
        let n = i as u32 + 1;
        if n > wanted_end || n > line_bound_end {
            break;
        }
        let text = String::from_utf8_lossy(raw);
        let entry = format!("{n}: {text}\n");
        if body.len() + entry.len() > budget {
            if last < start {
                // A single line longer than the bound: show its beginning.
                let _ = writeln!(body, "{n}: {}", cut(&text, budget - 32));
                last = n;
                cut_line = true;
            }
            break;
        }
        body.push_str(&entry);
        last = n;
    }
    let truncated = last < wanted_end || cut_line;
    let mut text = format!(
        "{path} at {}, lines {start}-{last} of {total}\n",
        rev_name(revision)
    );
    text.push_str(&body);
    if truncated {
        let _ = write!(
            text,
            "[truncated: read_file returns at most {MAX_LINES} lines and {MAX_BYTES} bytes per call"
        );
        if cut_line {
            let _ = write!(text, "; line {last} is longer than that and was cut");
        }
        if last < wanted_end {
            let _ = write!(
                text,
                "; call read_file with start_line={} to continue",
                last + 1
            );
        }
        text.push_str("]\n");
    }
    Ok(FileRead {
        window: Some(SourceWindow {
            revision,
            path: path.to_string(),
            start_line: start,
            end_line: last,
        }),
        total_lines: total,
        kind,
        truncated,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_follow_git_numbering_and_hide_carriage_returns() {
        type Case<'a> = (&'a [u8], u32, &'a [&'a [u8]]);
        let cases: &[Case] = &[
            (b"", 0, &[]),
            (b"a", 1, &[b"a"]),
            (b"a\n", 1, &[b"a"]),
            (b"a\nb", 2, &[b"a", b"b"]),
            (b"a\r\nb\r\n", 2, &[b"a", b"b"]),
            (b"\n\n", 2, &[b"", b""]),
        ];
        for &(content, count, expected) in cases {
            assert_eq!(line_count(content), count, "{content:?}");
            assert_eq!(lines(content).collect::<Vec<_>>(), expected, "{content:?}");
        }
    }
}
