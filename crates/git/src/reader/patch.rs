//! `diff`: the unified patch of one changed file, from the snapshot's own diff.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use git2::{DiffLineType, Patch};
use vouch_core::snapshot::{ChangedFile, FileStatus};
use vouch_core::source::{Revision, SourceWindow};

use super::{MAX_BYTES, MAX_LINES, ReadError, SourceReader, paths, span};
use crate::GitError;
use crate::range_diff::{SideSource, file_patch, side_content, trim_eol};

/// The result of one `diff` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The changed file as the snapshot describes it (status, paths, modes, hunks).
    pub file: ChangedFile,
    /// The windows whose lines the patch shows, for the source ledger: per hunk, the head
    /// lines shown (context and additions, under `file.path`) and the base lines shown
    /// (context and deletions, under `previous_path` for renames and copies). Only lines
    /// actually shown count, so a truncated patch yields shorter windows.
    pub windows: Vec<SourceWindow>,
    /// For each patch line shown cut (longer than a quarter of [`MAX_BYTES`]), the bytes
    /// of that line shown: recorded instead of a window, so a long line never counts as
    /// seen whole.
    pub spans: Vec<vouch_core::LineSpan>,
    /// True when the patch was cut at [`MAX_LINES`] lines or [`MAX_BYTES`] bytes.
    pub truncated: bool,
    /// The text for the model: a git-style header with real UTF-8 paths (never quoted),
    /// the hunks, and a note when truncated. A line ending with `\r\n` is shown with
    /// [`vouch_core::CR_MARK`] after its text.
    pub text: String,
}

/// Running state while rendering hunks, so windows reflect exactly what was shown.
struct Shown {
    lines: u32,
    truncated: bool,
}

/// Most bytes of rendered patch text the cache keeps; past it the oldest entries are
/// dropped (a dropped patch is recomputed from its two blobs when asked again, never
/// from the whole change).
pub const MAX_CACHED_PATCH_BYTES: usize = 64 * 1024 * 1024;

/// Rendered patches by current path, filled lazily, bounded in bytes (oldest out first).
#[derive(Debug, Default)]
pub(crate) struct PatchCache {
    map: HashMap<String, Arc<FileDiff>>,
    order: VecDeque<String>,
    bytes: usize,
    computed: u64,
}

impl PatchCache {
    fn get(&self, path: &str) -> Option<Arc<FileDiff>> {
        self.map.get(path).cloned()
    }

    /// Drops the patch held under `path`, if any (its file was paired anew).
    pub(super) fn forget(&mut self, path: &str) {
        if let Some(gone) = self.map.remove(path) {
            self.bytes -= gone.text.len();
            self.order.retain(|p| p != path);
        }
    }

    fn insert(&mut self, path: String, diff: Arc<FileDiff>) {
        self.computed += 1;
        self.keep(path, diff);
    }

    /// Holds `diff` (computed elsewhere) under `path`, within the bound.
    fn keep(&mut self, path: String, diff: Arc<FileDiff>) {
        self.bytes += diff.text.len();
        self.order.push_back(path.clone());
        self.map.insert(path, diff);
        while self.bytes > MAX_CACHED_PATCH_BYTES && self.order.len() > 1 {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.map.remove(&old) {
                self.bytes -= gone.text.len();
            }
        }
    }
}

/// Patches a snapshot rendered while loading them ([`crate::snapshot_range_with_patches`]),
/// for a reader of the same snapshot ([`SourceReader::with_patches`]).
#[derive(Debug, Default)]
pub struct KeptPatches(pub(crate) Vec<FileDiff>);

/// What the `diff` tool shows of `file`, rendered from `patch` (the patch the snapshot
/// loaded for it), or `None` for a binary file, whose patch also names its sides'
/// metadata and is rendered by the reader.
pub(crate) fn kept(file: &ChangedFile, patch: &Patch<'_>) -> Result<Option<FileDiff>, git2::Error> {
    match file.binary {
        true => Ok(None),
        false => render(file.clone(), Some(patch)).map(Some),
    }
}

impl SourceReader {
    /// The patch of the changed file whose current path is `path` (for deletions, the
    /// deleted path), exactly as the snapshot paired it: renames and copies are the
    /// snapshot's own (detected once, when the snapshot was taken), and the hunks are
    /// those of the snapshot's diff settings. Computed from that file's two blobs the
    /// first time it is asked for and shared afterwards (the `diff` tool, inline patches
    /// and every lane read the same `Arc`); no call re-walks the change.
    ///
    /// Binary files, mode-only changes and pure renames have a header and no hunks.
    ///
    /// # Errors
    /// [`ReadError::Refused`] for an invalid path, [`ReadError::NotChanged`] when the path
    /// did not change, [`ReadError::Git`].
    pub fn diff(&self, path: &str) -> Result<Arc<FileDiff>, ReadError> {
        let path = paths::normalize(path, false)?;
        let Some(file) = self.changed.get(&path) else {
            return Err(ReadError::NotChanged { path });
        };
        if let Some(hit) = self.patch_cache().get(&path) {
            return Ok(hit);
        }
        let rendered = {
            let repo = self.repo();
            let (old, new) = (
                self.side(&repo, file, Side::Old)?,
                self.side(&repo, file, Side::New)?,
            );
            let old_path = file.previous_path.as_deref().unwrap_or(&file.path);
            // A binary file (by content, as the snapshot said) is shown as its metadata,
            // never diffed.
            let mut diff = match file.binary {
                true => render(file.clone(), None)?,
                false => {
                    let patch = file_patch(&old, Path::new(old_path), &new, Path::new(&file.path))
                        .map_err(git_error)?;
                    render(file.clone(), Some(&patch))?
                }
            };
            if file.binary {
                diff.text.push_str(&binary_metadata(&old, &new));
            }
            Arc::new(diff)
        };
        self.patch_cache().insert(path, rendered.clone());
        Ok(rendered)
    }

    /// Rule (what a metadata-only review stands on): what the sides of the changed binary
    /// file `path` are ([`BinarySides`], each side by [`binary_side`]). Only when every
    /// side is binary content of a format its name says can the file be reviewed from its
    /// metadata: a side that is text (a source file with a NUL
    /// byte, a text file the change turns binary, code behind a format's magic bytes) is
    /// content no one was shown. An absent or empty side holds nothing to review.
    ///
    /// # Errors
    /// [`ReadError::NotChanged`] for a path the change does not touch, or when git fails.
    pub fn binary_sides(&self, path: &str) -> Result<BinarySides, ReadError> {
        let path = paths::normalize(path, false)?;
        let Some(file) = self.changed.get(&path) else {
            return Err(ReadError::NotChanged { path });
        };
        let repo = self.repo();
        let mut sides = BinarySides::Binary;
        for side in [Side::Old, Side::New] {
            let named = match side {
                Side::Old => file.previous_path.as_deref().unwrap_or(&file.path),
                Side::New => file.path.as_str(),
            };
            match binary_side(self.side(&repo, file, side)?.bytes(), named) {
                BinarySides::Text => return Ok(BinarySides::Text),
                BinarySides::Unrecognised => sides = BinarySides::Unrecognised,
                BinarySides::Binary => {}
            }
        }
        Ok(sides)
    }

    /// This reader, holding the patches its snapshot kept
    /// ([`crate::snapshot_range_with_patches`]) as if it had computed them: shown the
    /// same, within the same bound, and not counted in [`SourceReader::patches_computed`].
    #[must_use]
    pub fn with_patches(self, kept: KeptPatches) -> SourceReader {
        {
            let mut cache = self.patch_cache();
            for diff in kept.0 {
                cache.keep(diff.file.path.clone(), Arc::new(diff));
            }
        }
        self
    }

    /// How many patches this reader has computed (cache misses). A change's patches are
    /// each computed once while the cache holds them; tests use this to prove it.
    pub fn patches_computed(&self) -> u64 {
        self.patch_cache().computed
    }

    pub(super) fn patch_cache(&self) -> std::sync::MutexGuard<'_, PatchCache> {
        self.patches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What one side of a changed file shows: its blob, or content that is no blob
    /// (nothing when the side is absent).
    pub(super) fn side<'r>(
        &self,
        repo: &'r git2::Repository,
        file: &ChangedFile,
        side: Side,
    ) -> Result<SideSource<'r>, ReadError> {
        let (tree, path, mode) = match side {
            Side::Old if file.status == FileStatus::Added => return Ok(SideSource::Bytes(vec![])),
            Side::New if file.status == FileStatus::Deleted => {
                return Ok(SideSource::Bytes(vec![]));
            }
            Side::Old => (
                self.base_tree,
                file.previous_path.as_deref().unwrap_or(&file.path),
                file.old_mode,
            ),
            Side::New => (self.head_tree, file.path.as_str(), file.new_mode),
        };
        let tree = repo.find_tree(tree)?;
        let entry = tree.get_path(Path::new(path))?;
        let mode = super::file::file_mode(mode.map_or(entry.filemode(), |m| m as i32));
        match mode {
            git2::FileMode::Commit | git2::FileMode::Unreadable | git2::FileMode::Tree => {
                side_content(repo, mode, entry.id())
                    .map(SideSource::Bytes)
                    .map_err(git_error)
            }
            _ => Ok(SideSource::Blob(repo.find_blob(entry.id())?)),
        }
    }
}

/// Maps a patch-building error into the tool's error type.
fn git_error(e: GitError) -> ReadError {
    match e {
        GitError::Git { source, .. } => ReadError::Git { source },
        other => ReadError::Refused {
            reason: other.to_string(),
        },
    }
}

/// Which side of a changed file.
#[derive(Clone, Copy)]
pub(super) enum Side {
    Old,
    New,
}

/// Rule (binary files as metadata-only patches): a binary change is shown as what can
/// be said of it without its content — each side's size, blob id and detected type
/// (from its leading bytes) — one line per side, `absent` for a side that does not exist.
fn binary_metadata(old: &SideSource<'_>, new: &SideSource<'_>) -> String {
    let side = |name: &str, s: &SideSource<'_>| match s {
        SideSource::Blob(blob) => format!(
            "binary {name}: {} bytes, blob {}, type {}\n",
            blob.size(),
            blob.id(),
            detected_type(blob.content())
        ),
        SideSource::Bytes(b) if b.is_empty() => format!("binary {name}: absent\n"),
        SideSource::Bytes(b) => format!(
            "binary {name}: {} bytes, type {}\n",
            b.len(),
            detected_type(b)
        ),
    };
    format!("{}{}", side("base", old), side("head", new))
}

/// What the sides of a changed binary file are ([`SourceReader::binary_sides`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinarySides {
    /// Every side with content is binary content (an image, an archive, compiled or
    /// compressed data): it can be reviewed from its metadata.
    Binary,
    /// A side is mostly text: a source file with a NUL byte, a text file turned binary,
    /// or code behind a format's magic bytes.
    Text,
    /// A side is of no format its content shows, or not the format its name says (a
    /// `.php` that starts like a PNG): what it holds cannot be said from its metadata.
    Unrecognised,
}

/// Bytes [`mostly_text`] looks at.
const TEXT_CHECK_BYTES: usize = 64 * 1024;

/// Rule (a NUL byte or a format header does not make text binary): content is mostly
/// text when at least nine in ten of its first [`TEXT_CHECK_BYTES`] bytes are printable
/// ASCII or whitespace. Images, archives, fonts and compiled code are far below that;
/// a source file with a NUL byte, or code behind a format's magic bytes (`GIF89a/*\0*/`
/// and then a script), far above it. Empty content is not text to review.
fn mostly_text(content: &[u8]) -> bool {
    let head = &content[..content.len().min(TEXT_CHECK_BYTES)];
    if head.is_empty() {
        return false;
    }
    let printable = head.iter().filter(|&&b| printable(b)).count();
    printable * 10 >= head.len() * 9
}

/// Printable ASCII or whitespace.
fn printable(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r')
}

/// Rule (what a side of a binary file is): text to review when it is [`mostly_text`] or
/// UTF-16/UTF-32 text ([`utf16_text`], as Windows tools write scripts); binary content
/// that can be reviewed from its metadata only when its content shows a format
/// [`detected_type`] knows (an image, archive, font, document, compiled code) and its
/// name (`named`, the path on that side) carries that format's extension; anything else
/// is [`BinarySides::Unrecognised`]: a format no one can name from its bytes, or a
/// `.php` that starts like a PNG, may be code after any prefix. An empty side holds
/// nothing.
fn binary_side(content: &[u8], named: &str) -> BinarySides {
    if content.is_empty() {
        return BinarySides::Binary;
    }
    if mostly_text(content) || utf16_text(content) {
        return BinarySides::Text;
    }
    match infer::get(content) {
        Some(kind) if extension_agrees(named, kind.extension()) => BinarySides::Binary,
        _ => BinarySides::Unrecognised,
    }
}

/// Extensions that name the same format as the one `infer` gives.
const SAME_FORMAT: [(&str, &str); 6] = [
    ("jpg", "jpeg"),
    ("tif", "tiff"),
    ("gz", "tgz"),
    ("mid", "midi"),
    ("htm", "html"),
    ("ico", "cur"),
];

/// Whether `path`'s extension names the format `infer` detected (by its extension
/// `detected`), case-insensitively, aliases included ([`SAME_FORMAT`]).
fn extension_agrees(path: &str, detected: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((_, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let ext = ext.to_ascii_lowercase();
    ext == detected
        || SAME_FORMAT
            .iter()
            .any(|&(a, b)| (ext == a && detected == b) || (ext == b && detected == a))
}

/// Whether the content is UTF-16 text: it starts with a byte-order mark, or nine in ten
/// of its leading byte pairs are a printable ASCII byte and a NUL (either order).
fn utf16_text(content: &[u8]) -> bool {
    // UTF-16 and UTF-32 byte-order marks (UTF-32LE's starts like UTF-16LE's).
    if content.starts_with(&[0xff, 0xfe])
        || content.starts_with(&[0xfe, 0xff])
        || content.starts_with(&[0, 0, 0xfe, 0xff])
    {
        return true;
    }
    let head = &content[..content.len().min(TEXT_CHECK_BYTES) & !1];
    if head.len() < 8 {
        return false;
    }
    let pairs = head.len() / 2;
    let ascii = |lo: u8, hi: u8| hi == 0 && printable(lo);
    let le = head.chunks(2).filter(|p| ascii(p[0], p[1])).count();
    let be = head.chunks(2).filter(|p| ascii(p[1], p[0])).count();
    le.max(be) * 10 >= pairs * 9
}

/// The MIME type the leading bytes of `content` announce, or `application/octet-stream`.
pub(crate) fn detected_type(content: &[u8]) -> &'static str {
    infer::get(content).map_or("application/octet-stream", |t| t.mime_type())
}

/// Renders the header and as many hunk lines as the bounds allow.
pub(crate) fn render(
    file: ChangedFile,
    patch: Option<&Patch<'_>>,
) -> Result<FileDiff, git2::Error> {
    let old_path = file
        .previous_path
        .clone()
        .unwrap_or_else(|| file.path.clone());
    let mut text = header(&file, &old_path);
    let mut windows = Vec::new();
    let mut spans = Vec::new();
    let mut shown = Shown {
        lines: 0,
        truncated: false,
    };
    if let (Some(patch), false) = (patch, file.binary) {
        for h in 0..patch.num_hunks() {
            if shown.truncated {
                break;
            }
            let (hunk, count) = patch.hunk(h)?;
            let header = crate::range_diff::header_text(hunk.header());
            if !push(&mut text, &mut shown, &format!("{header}\n")) {
                break;
            }
            let (mut new_seen, mut old_seen) = (Vec::new(), Vec::new());
            for l in 0..count {
                let line = patch.line_in_hunk(h, l)?;
                let Some((rendered, shown_len, len)) = patch_line(&line) else {
                    continue;
                };
                if !push(&mut text, &mut shown, &rendered) {
                    break;
                }
                for (n, revision, path, seen) in [
                    (line.new_lineno(), Revision::Head, &file.path, &mut new_seen),
                    (line.old_lineno(), Revision::Base, &old_path, &mut old_seen),
                ] {
                    let Some(n) = n else { continue };
                    if shown_len < len {
                        spans.push(span(revision, path, n, (0, shown_len), false));
                    } else {
                        extend(seen, n);
                    }
                }
            }
            for (start, end) in new_seen {
                windows.push(window(Revision::Head, &file.path, start, end));
            }
            for (start, end) in old_seen {
                windows.push(window(Revision::Base, &old_path, start, end));
            }
        }
    }
    if shown.truncated {
        let _ = writeln!(
            text,
            "[truncated: diff returns at most {MAX_LINES} lines and {MAX_BYTES} bytes per call; read the rest with read_file (revision head for added lines, base for removed ones) using the hunk line numbers]"
        );
    }
    Ok(FileDiff {
        file,
        windows,
        spans,
        truncated: shown.truncated,
        text,
    })
}

/// One hunk line as a patch shows it, with how many of its bytes are shown and its
/// length (more when it is shown cut); `None` for a line a patch does not show.
fn patch_line(line: &git2::DiffLine<'_>) -> Option<(String, usize, usize)> {
    let (raw, crlf) = trim_eol(line.content());
    // Cut where the shown text reaches the bound: exactly the long lines
    // ([`vouch_core::is_long_line`]) are cut.
    let shown_len = vouch_core::shown_prefix_len(raw, MAX_LINE_SHOWN);
    let body = vouch_core::shown_text(&raw[..shown_len]);
    // A line shown cut does not show its end; one shown whole shows its CR.
    let end = if shown_len < raw.len() {
        CUT_NOTE
    } else {
        vouch_core::ending_mark(crlf)
    };
    let rendered = match line.origin_value() {
        DiffLineType::Context => format!(" {body}{end}\n"),
        DiffLineType::Addition => format!("+{body}{end}\n"),
        DiffLineType::Deletion => format!("-{body}{end}\n"),
        DiffLineType::ContextEOFNL | DiffLineType::AddEOFNL | DiffLineType::DeleteEOFNL => {
            super::file::NO_FINAL_NEWLINE.to_string()
        }
        _ => return None,
    };
    Some((rendered, shown_len, raw.len()))
}

/// Appends one line unless a bound is reached; false (and `truncated`) when it was not.
fn push(text: &mut String, shown: &mut Shown, line: &str) -> bool {
    if shown.lines >= MAX_LINES || text.len() + line.len() > MAX_BYTES - 512 {
        shown.truncated = true;
        return false;
    }
    text.push_str(line);
    shown.lines += 1;
    true
}

/// Most bytes of one patch line shown; a line shown longer (a long line of the snapshot,
/// [`vouch_core::is_long_line`]) is shown cut, with [`CUT_NOTE`].
const MAX_LINE_SHOWN: usize = vouch_core::LONG_LINE_BYTES as usize - 1;

/// What follows a patch line shown cut.
const CUT_NOTE: &str = " [line cut here: read the rest with read_file start_line and start_byte]";

/// Adds line `n` to the runs of consecutive lines shown whole.
fn extend(runs: &mut Vec<(u32, u32)>, n: u32) {
    match runs.last_mut() {
        Some(last) if (last.0..=last.1 + 1).contains(&n) => last.1 = last.1.max(n),
        _ => runs.push((n, n)),
    }
}

fn window(revision: Revision, path: &str, start_line: u32, end_line: u32) -> SourceWindow {
    SourceWindow {
        revision,
        path: path.to_string(),
        start_line,
        end_line,
    }
}

/// A git-style extended header with unquoted UTF-8 paths.
fn header(file: &ChangedFile, old_path: &str) -> String {
    let mut h = format!("diff --git a/{old_path} b/{}\n", file.path);
    let mode = |m: Option<u32>| m.map(|m| format!("{m:o}")).unwrap_or_default();
    match file.status {
        FileStatus::Added => {
            let _ = writeln!(h, "new file mode {}", mode(file.new_mode));
        }
        FileStatus::Deleted => {
            let _ = writeln!(h, "deleted file mode {}", mode(file.old_mode));
        }
        FileStatus::Renamed | FileStatus::Copied => {
            let verb = if file.status == FileStatus::Renamed {
                "rename"
            } else {
                "copy"
            };
            if let Some(s) = file.similarity {
                let _ = writeln!(h, "similarity index {s}%");
            }
            let _ = writeln!(h, "{verb} from {old_path}\n{verb} to {}", file.path);
        }
        _ => {}
    }
    if file.old_mode.is_some() && file.new_mode.is_some() && file.old_mode != file.new_mode {
        let _ = writeln!(
            h,
            "old mode {}\nnew mode {}",
            mode(file.old_mode),
            mode(file.new_mode)
        );
    }
    if file.binary {
        h.push_str("Binary files differ; content not shown\n");
    } else if !file.hunks.is_empty() {
        let old = if file.status == FileStatus::Added {
            "/dev/null".to_string()
        } else {
            format!("a/{old_path}")
        };
        let new = if file.status == FileStatus::Deleted {
            "/dev/null".to_string()
        } else {
            format!("b/{}", file.path)
        };
        let _ = writeln!(h, "--- {old}\n+++ {new}");
    } else if file.status != FileStatus::ModeOnly {
        h.push_str("(no lines changed)\n");
    }
    h
}
