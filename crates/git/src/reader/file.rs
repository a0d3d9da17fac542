//! `read_file`: a numbered line window of one file at head or base.

use std::fmt::Write as _;

use git2::ObjectType;
use vouch_core::snapshot::EntryKind;
use vouch_core::source::{Revision, SourceWindow};

use super::{MAX_BYTES, MAX_LINES, ReadError, SourceReader, cut, lookup, paths, rev_name, span};
use crate::range_diff::entry_kind;

/// The result of one `read_file` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// The exact lines returned whole (1-based, inclusive), with the canonical path: what
    /// the host records in the source ledger. `None` for an empty file, or when the only
    /// line returned was shown in part (see `spans`).
    pub window: Option<SourceWindow>,
    /// For a line shown in part (longer than the byte bound, or a byte window of it), the
    /// bytes shown: recorded instead of a window, so a long line never counts as read
    /// whole when only its beginning was shown.
    pub spans: Vec<vouch_core::LineSpan>,
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
            _ => self.with_blob(&repo, entry.id(), |content, binary| {
                if mode == git2::FileMode::Link {
                    let target = vouch_core::shown_text(content);
                    return Ok(single_line(
                        revision,
                        &path,
                        EntryKind::Symlink,
                        &target,
                        "symbolic link: this is the link text; links are never followed",
                    ));
                }
                if binary {
                    return Err(ReadError::Binary {
                        revision,
                        path: path.clone(),
                        size: content.len(),
                    });
                }
                let kind = entry_kind(mode);
                window(revision, &path, kind, content, start_line, end_line)
            })?,
        }
    }
}

/// Most bytes one byte-window read of a long line returns.
pub const MAX_LINE_WINDOW_BYTES: usize = 16 * 1024;

impl SourceReader {
    /// Reads bytes `start_byte..` of line `line` of `path` at `revision`: at most
    /// [`MAX_LINE_WINDOW_BYTES`], cut back to a UTF-8 boundary; how a model reads the
    /// parts of a line too long to show whole (a minified file). The result records
    /// exactly the bytes shown as a span (a window when they are the whole line).
    ///
    /// # Errors
    /// As [`SourceReader::read_file`]; [`ReadError::InvalidRange`] when `start_byte` is
    /// past the end of the line.
    pub fn read_line_bytes(
        &self,
        revision: Revision,
        path: &str,
        line: u32,
        start_byte: u32,
    ) -> Result<FileRead, ReadError> {
        self.read_line_window(revision, path, line, start_byte, MAX_LINE_WINDOW_BYTES)
    }

    /// [`SourceReader::read_line_bytes`] showing at most `max_bytes` (at most
    /// [`MAX_LINE_WINDOW_BYTES`], at least one character): how a `read_file` byte window
    /// shrinks to what a request has left.
    ///
    /// # Errors
    /// As [`SourceReader::read_line_bytes`].
    pub fn read_line_window(
        &self,
        revision: Revision,
        path: &str,
        line: u32,
        start_byte: u32,
        max_bytes: usize,
    ) -> Result<FileRead, ReadError> {
        self.read_line_range(revision, path, line, (start_byte, u32::MAX), max_bytes)
    }

    /// Bytes `start_byte..end_byte` of line `line` (the end moved forward to a character
    /// boundary), showing at most `max_bytes` as [`SourceReader::read_line_window`]: how
    /// the host gives a long line's changed bytes inline in windows that fit a shard,
    /// never showing bytes past the range it planned.
    ///
    /// # Errors
    /// As [`SourceReader::read_line_bytes`].
    pub fn read_line_range(
        &self,
        revision: Revision,
        path: &str,
        line: u32,
        (start_byte, end_byte): (u32, u32),
        max_bytes: usize,
    ) -> Result<FileRead, ReadError> {
        let max_bytes = max_bytes.clamp(4, MAX_LINE_WINDOW_BYTES);
        let path = paths::normalize(path, false)?;
        let repo = self.repo();
        let tree = repo.find_tree(self.tree_id(revision))?;
        let entry = lookup(&tree, revision, &path)?;
        let mode = file_mode(entry.filemode());
        if entry.kind() != Some(ObjectType::Blob) || mode == git2::FileMode::Link {
            // A directory, submodule or symlink: what `read_file` says of that line.
            return self.read_file(revision, &path, Some(line), Some(line));
        }
        self.with_blob(&repo, entry.id(), |content, binary| {
            if binary {
                return Err(ReadError::Binary {
                    revision,
                    path: path.clone(),
                    size: content.len(),
                });
            }
            let total_lines = line_count(content);
            let at = LineAt {
                revision,
                path: &path,
                kind: entry_kind(mode),
                line,
                total_lines,
                unterminated: line == total_lines && !content.ends_with(b"\n"),
            };
            check_range(line, Some(line))?;
            if line > at.total_lines.max(1) {
                return Err(ReadError::InvalidRange {
                    message: format!(
                        "start_line {line} is past the end of `{path}` at {}, which has {} lines",
                        rev_name(revision),
                        at.total_lines
                    ),
                });
            }
            let raw = lines_with_endings(content)
                .nth(line as usize - 1)
                .unwrap_or_default();
            let range = (start_byte as usize, end_byte as usize);
            byte_window(&at, raw, range, max_bytes)
        })?
    }
}

/// The line a byte window is read from.
struct LineAt<'a> {
    revision: Revision,
    path: &'a str,
    kind: EntryKind,
    line: u32,
    total_lines: u32,
    /// The line is the file's last and has no newline after it.
    unterminated: bool,
}

/// Bytes `start..end` of one line (`raw`, without its ending, and whether that ending
/// was `\r\n`): at most `max_bytes` shown, from the character boundary at or before
/// `start` to one at or after `end`, cut back to one within the bound. A window that
/// reaches the line's end shows its ending: [`vouch_core::CR_MARK`], and
/// [`NO_FINAL_NEWLINE`] after the last line of a file without one.
fn byte_window(
    at: &LineAt<'_>,
    (raw, crlf): (&[u8], bool),
    (start, end): (usize, usize),
    max_bytes: usize,
) -> Result<FileRead, ReadError> {
    let LineAt {
        revision,
        path,
        line,
        ..
    } = *at;
    if start >= raw.len().max(1) {
        return Err(ReadError::InvalidRange {
            message: format!(
                "start_byte {start} is past the end of line {line}, which has {} bytes",
                raw.len()
            ),
        });
    }
    // Start on a character boundary (move back to the sequence's first byte).
    // (At most 3 bytes back: a longer run of continuation bytes is not UTF-8.)
    let mut from = start;
    while from > 0 && start - from < 3 && raw[from] & 0xC0 == 0x80 {
        from -= 1;
    }
    // Forward to a character boundary (at most 3 bytes, as above).
    let mut stop = end.max(from + 1).min(raw.len());
    let planned = stop;
    while stop < raw.len() && stop - planned < 3 && raw[stop] & 0xC0 == 0x80 {
        stop += 1;
    }
    // Bounded by what is shown: a byte that is not UTF-8 is shown as a 4-byte escape.
    let to = from + vouch_core::shown_prefix_len(&raw[from..stop], max_bytes);
    let mut text = format!(
        "{path} at {}, line {line} bytes {from}-{to} of {}\n{line}: {}{}\n",
        rev_name(revision),
        raw.len(),
        vouch_core::shown_text(&raw[from..to]),
        vouch_core::ending_mark(crlf && to == raw.len())
    );
    if at.unterminated && to == raw.len() {
        text.push_str(NO_FINAL_NEWLINE);
    }
    // Only a read the byte bound cut short says how to go on: a range read to its end
    // (the host's inline windows of a long line's changed bytes) says nothing of a call.
    if to < stop {
        let _ = writeln!(
            text,
            "[cut: at most {max_bytes} bytes per call; continue with start_line={line} start_byte={to}]"
        );
    }
    let entire = from == 0 && to == raw.len();
    Ok(FileRead {
        window: entire.then(|| SourceWindow {
            revision,
            path: path.to_string(),
            start_line: line,
            end_line: line,
        }),
        spans: if entire {
            vec![]
        } else {
            vec![span(revision, path, line, (from, to), to == raw.len())]
        },
        total_lines: at.total_lines,
        kind: at.kind,
        truncated: to < raw.len(),
        text,
    })
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
    let whole = shown.len() == line.len();
    FileRead {
        window: whole.then(|| SourceWindow {
            revision,
            path: path.to_string(),
            start_line: 1,
            end_line: 1,
        }),
        spans: if whole {
            vec![]
        } else {
            vec![span(revision, path, 1, (0, shown.len()), false)]
        },
        total_lines: 1,
        kind,
        truncated: !whole,
        text: format!(
            "{path} at {}, line 1 of 1 ({note})\n1: {shown}\n",
            rev_name(revision)
        ),
    }
}

/// The lines of `content`, split at `\n`, each without its `\n` and a `\r` before it.
pub(crate) fn lines(content: &[u8]) -> impl Iterator<Item = &[u8]> {
    lines_with_endings(content).map(|(text, _)| text)
}

/// The lines of `content` as [`lines`], each with whether it ended with `\r`
/// ([`vouch_core::split_cr`]: shown as [`vouch_core::CR_MARK`]). Newlines are found with
/// `memchr`: a byte window of line 1 of a 2 MB minified file scans to the line's end for
/// every window.
pub(crate) fn lines_with_endings(content: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    let mut rest = (!content.is_empty()).then_some(body);
    std::iter::from_fn(move || {
        let r = rest?;
        let line = match memchr::memchr(b'\n', r) {
            Some(i) => {
                rest = Some(&r[i + 1..]);
                &r[..i]
            }
            None => {
                rest = None;
                r
            }
        };
        Some(vouch_core::split_cr(line))
    })
}

/// Git's line count: newlines, plus one for a last line without `\n`.
pub(crate) fn line_count(content: &[u8]) -> u32 {
    let newlines = content.iter().filter(|&&b| b == b'\n').count();
    let partial = usize::from(!content.is_empty() && !content.ends_with(b"\n"));
    (newlines + partial) as u32
}

/// What follows the last line of a file that does not end with a newline, as git's
/// patches say it.
pub(crate) const NO_FINAL_NEWLINE: &str = "\\ No newline at end of file\n";

/// Renders the bounded window of a text blob: the range checked, the lines read within
/// the line and byte bounds, then the header and the truncation note.
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
    check_range(start, end_line)?;
    if total == 0 {
        return Ok(FileRead {
            window: None,
            spans: vec![],
            total_lines: 0,
            kind,
            truncated: false,
            text: format!("{path} at {} is empty (0 lines)\n", rev_name(revision)),
        });
    }
    if start > total {
        return Err(ReadError::InvalidRange {
            message: format!(
                "start_line {start} is past the end of `{path}` at {}, which has {total} lines",
                rev_name(revision)
            ),
        });
    }
    let wanted_end = end_line.unwrap_or(u32::MAX).min(total);
    let shown = shown_lines(revision, path, content, start, wanted_end);
    let truncated = shown.last < wanted_end || shown.cut_line;
    let last = shown.last;
    let mut text = format!(
        "{path} at {}, lines {start}-{last} of {total}\n",
        rev_name(revision)
    );
    text.push_str(&shown.body);
    if last == total && !shown.cut_line && !content.ends_with(b"\n") {
        // As a patch says it: otherwise adding or removing the final newline alone would
        // show two sides that read the same.
        text.push_str(NO_FINAL_NEWLINE);
    }
    if truncated {
        text.push_str(&truncation_note(last, wanted_end, shown.cut_line));
    }
    let whole_end = if shown.cut_line { last - 1 } else { last };
    Ok(FileRead {
        window: (whole_end >= start).then(|| SourceWindow {
            revision,
            path: path.to_string(),
            start_line: start,
            end_line: whole_end,
        }),
        spans: shown.spans,
        total_lines: total,
        kind,
        truncated,
        text,
    })
}

/// Line numbers are 1-based, and the range must not end before it starts.
fn check_range(start: u32, end_line: Option<u32>) -> Result<(), ReadError> {
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
    Ok(())
}

/// The numbered lines a window shows.
struct Shown {
    /// `N: text` lines.
    body: String,
    /// The last line shown (`start - 1` when none).
    last: u32,
    /// Whether the last line shown was cut at the byte bound.
    cut_line: bool,
    /// The byte span of a cut line.
    spans: Vec<vouch_core::LineSpan>,
}

/// The lines `start..=wanted_end` of `content` within [`MAX_LINES`] and the byte budget;
/// a single line longer than the budget is shown cut, and only the bytes shown recorded.
fn shown_lines(
    revision: Revision,
    path: &str,
    content: &[u8],
    start: u32,
    wanted_end: u32,
) -> Shown {
    let line_bound_end = start.saturating_add(MAX_LINES - 1);
    let mut shown = Shown {
        body: String::new(),
        last: start - 1,
        cut_line: false,
        spans: Vec::new(),
    };
    // Leave room for the header and the truncation note, which name the path.
    let budget = MAX_BYTES.saturating_sub(320 + 2 * path.len()).max(1024);
    for (i, (raw, crlf)) in lines_with_endings(content)
        .enumerate()
        .skip(start as usize - 1)
    {
        let n = i as u32 + 1;
        if n > wanted_end || n > line_bound_end {
            break;
        }
        let text = vouch_core::shown_text(raw);
        let entry = format!("{n}: {text}{}\n", vouch_core::ending_mark(crlf));
        if shown.body.len() + entry.len() > budget {
            if shown.last < start {
                // A single line longer than the bound: show its beginning, and record
                // only the bytes shown.
                let cut = vouch_core::shown_prefix_len(raw, budget - 32);
                let _ = writeln!(shown.body, "{n}: {}", vouch_core::shown_text(&raw[..cut]));
                shown.spans.push(span(revision, path, n, (0, cut), false));
                shown.last = n;
                shown.cut_line = true;
            }
            break;
        }
        shown.body.push_str(&entry);
        shown.last = n;
    }
    shown
}

/// The note after a truncated window: the bounds, how to read the rest of a cut line,
/// and where to continue.
fn truncation_note(last: u32, wanted_end: u32, cut_line: bool) -> String {
    let mut note = format!(
        "[truncated: read_file returns at most {MAX_LINES} lines and {MAX_BYTES} bytes per call"
    );
    if cut_line {
        let _ = write!(
            note,
            "; line {last} is longer than that and was cut: read the rest with start_line={last} and start_byte"
        );
    }
    if last < wanted_end {
        let _ = write!(
            note,
            "; call read_file with start_line={} to continue",
            last + 1
        );
    }
    note.push_str("]\n");
    note
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
            (b"\n", 1, &[b""]),
            (b"a\r", 1, &[b"a"]),
            (b"\ra\n\rb", 2, &[b"\ra", b"\rb"]),
        ];
        for &(content, count, expected) in cases {
            assert_eq!(line_count(content), count, "{content:?}");
            assert_eq!(lines(content).collect::<Vec<_>>(), expected, "{content:?}");
        }
    }
}
