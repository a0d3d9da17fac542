//! The one tree-to-tree diff vouch reviews, shared by the snapshot and the `diff` tool so
//! both see exactly the same changed files, renames and hunks.

use std::path::Path;

use git2::{
    Binding, Delta, Diff, DiffDelta, DiffFile, DiffFindOptions, DiffLineType, DiffOptions,
    FileMode, Oid, Patch, Repository,
};
use vouch_core::snapshot::{ChangedFile, EntryKind, FileStatus, Hunk, RenameLimitHit};
use vouch_core::snapshot::{LongLineChange, NAMED_LINE_BYTES, is_named_line};
use vouch_core::source::Revision;

use crate::GitError;

/// Lines of context around each hunk (git's default, `-U3`).
pub const CONTEXT_LINES: u32 = 3;

/// Minimum similarity, in percent, for a rename or copy (git's default, `-M50% -C50%`).
pub const SIMILARITY_THRESHOLD: u16 = 50;

/// Most rename (or copy) sources each added file is compared with. Below it, every
/// rename is paired as `git diff -M` pairs it; above it (more deleted files than this),
/// libgit2 stops looking and some renames show as a deletion plus an addition, which
/// the snapshot states ([`RenameLimitHit`]).
pub const RENAME_LIMIT: u32 = 10_000;

/// Most source × target comparisons copy detection may cost. Copy sources are the
/// modified files too (`git diff -C`), so on a large change copy detection alone would
/// be quadratic in the change; past this budget only renames are detected (a copy then
/// shows as an added file, every line of it reviewed: nothing is hidden).
pub const COPY_PAIR_BUDGET: u64 = 1_000_000;

/// Diffs the merge base's tree against head's tree, with type changes reported as such
/// (not as a deletion plus an addition) and submodules included; renames and copies are
/// paired afterwards by [`find_renames`]. Settings are explicit, so the user's git
/// configuration does not change what is reviewed. Runs once per review: the snapshot's
/// pairing is what every later patch uses.
pub(crate) fn tree_diff(
    repo: &Repository,
    old_tree: Oid,
    new_tree: Oid,
) -> Result<Diff<'_>, GitError> {
    let old = repo
        .find_tree(old_tree)
        .map_err(GitError::git("reading the merge base's tree"))?;
    let new = repo
        .find_tree(new_tree)
        .map_err(GitError::git("reading head's tree"))?;
    let mut opts = diff_options();
    opts.include_typechange(true)
        .ignore_submodules(false)
        .ignore_filemode(false);
    repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
        .map_err(GitError::git("diffing the merge base against head"))
}

/// Pairs the renames and copies of a [`tree_diff`] as `git diff -M -C` does: copy sources
/// are files modified in the same change (not `--find-copies-harder`, which would compare
/// against every file of the tree). Copies are looked for only within
/// [`COPY_PAIR_BUDGET`]; renames always, up to [`RENAME_LIMIT`] sources per added file
/// (the returned hit says when that cut). Files modified in place stay as they are.
pub(crate) fn find_renames(diff: &mut Diff<'_>) -> Result<Option<RenameLimitHit>, GitError> {
    let (mut deleted, mut modified, mut added) = (0u64, 0u64, 0u64);
    for delta in diff.deltas() {
        match delta.status() {
            Delta::Deleted => deleted += 1,
            Delta::Modified | Delta::Typechange => modified += 1,
            Delta::Added => added += 1,
            _ => {}
        }
    }
    let copies = (deleted + modified) * added <= COPY_PAIR_BUDGET;
    let sources = if copies { deleted + modified } else { deleted };
    let mut find = DiffFindOptions::new();
    find.renames(true)
        .copies(copies)
        .rename_threshold(SIMILARITY_THRESHOLD)
        .copy_threshold(SIMILARITY_THRESHOLD)
        .rename_limit(RENAME_LIMIT as usize);
    diff.find_similar(Some(&mut find))
        .map_err(GitError::git("detecting renames and copies"))?;
    Ok(
        (added > 0 && sources > u64::from(RENAME_LIMIT)).then(|| RenameLimitHit {
            limit: RENAME_LIMIT,
            sources: sources.min(u64::from(u32::MAX)) as u32,
            targets: added.min(u64::from(u32::MAX)) as u32,
        }),
    )
}

/// Hunk settings shared by the tree diff and type-change patches.
///
/// Every diff is forced to text: whether a file is binary is [`is_binary`]'s to say, from
/// its content, never git's attributes. libgit2 would read those from the working tree
/// (where a pull request's own `.gitattributes` is checked out) and from the user's
/// configuration, so `*.py -diff` there would hide the change's source behind "Binary
/// files differ". Callers never diff a side that is binary by content.
fn diff_options() -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.context_lines(CONTEXT_LINES)
        .interhunk_lines(0)
        .indent_heuristic(true)
        .force_text(true);
    opts
}

/// One side of a changed file, as [`file_patch`] diffs it.
pub(crate) enum SideSource<'r> {
    /// A blob of the repository (a file's bytes, a symlink's link text).
    Blob(git2::Blob<'r>),
    /// Content that is no blob: nothing (an absent side), or a submodule's line.
    Bytes(Vec<u8>),
}

impl SideSource<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            SideSource::Blob(blob) => blob.content(),
            SideSource::Bytes(bytes) => bytes,
        }
    }
}

/// The patch between two sides with the tree diff's hunk settings: what [`changed_file`]
/// computes for the same pair, without a tree diff. Blobs are diffed by id, so their
/// content is neither copied nor hashed again.
pub(crate) fn file_patch<'a>(
    old: &'a SideSource<'a>,
    old_path: &Path,
    new: &'a SideSource<'a>,
    new_path: &Path,
) -> Result<Patch<'a>, GitError> {
    let opts = &mut diff_options();
    let (old_path, new_path) = (Some(old_path), Some(new_path));
    match (old, new) {
        (SideSource::Blob(o), SideSource::Blob(n)) => {
            Patch::from_blobs(o, old_path, n, new_path, Some(opts))
        }
        (SideSource::Blob(o), n) => {
            Patch::from_blob_and_buffer(o, old_path, n.bytes(), new_path, Some(opts))
        }
        (o, n) => Patch::from_buffers(o.bytes(), old_path, n.bytes(), new_path, Some(opts)),
    }
    .map_err(GitError::git("diffing a changed file"))
}

fn side_of(repo: &Repository, file: &DiffFile<'_>) -> Result<Vec<u8>, GitError> {
    side_content(repo, file.mode(), file.id())
}

/// Bytes git looks at to tell a binary file from text.
const BINARY_CHECK_BYTES: usize = 8000;

/// Rule (one binary rule): content is binary when its first 8,000 bytes hold a NUL byte,
/// the rule git's diff uses and so the one that decides whether the snapshot shows a file
/// as text. Every reader asks this, never libgit2's `Blob::is_binary` (which also calls
/// text with control characters binary, so a file the diff shows as text could not be
/// read: a log with `\x01` separators).
pub(crate) fn is_binary(content: &[u8]) -> bool {
    memchr::memchr(0, &content[..content.len().min(BINARY_CHECK_BYTES)]).is_some()
}

/// The content one side of a change shows: a blob's bytes, a symlink's link text, for a
/// submodule `Subproject commit <sha>` as git prints it, nothing for an absent side.
pub(crate) fn side_content(
    repo: &Repository,
    mode: FileMode,
    id: Oid,
) -> Result<Vec<u8>, GitError> {
    match mode {
        FileMode::Commit => Ok(format!("Subproject commit {id}\n").into_bytes()),
        FileMode::Unreadable | FileMode::Tree => Ok(Vec::new()),
        _ => repo
            .find_blob(id)
            .map(|b| b.content().to_vec())
            .map_err(GitError::git("reading a blob")),
    }
}

/// A delta's path as UTF-8 from git's raw bytes (never quoted or escaped).
pub(crate) fn utf8_path(bytes: Option<&[u8]>) -> Result<Option<String>, GitError> {
    match bytes {
        None => Ok(None),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => Ok(Some(s.to_string())),
            Err(_) => Err(GitError::NonUtf8Path {
                lossy: String::from_utf8_lossy(b).into_owned(),
            }),
        },
    }
}

/// The current path of a delta (the new path; the old path for deletions) and, for
/// renames and copies, the previous path.
pub(crate) fn delta_paths(delta: &DiffDelta<'_>) -> Result<(String, Option<String>), GitError> {
    let old = utf8_path(delta.old_file().path_bytes())?;
    let new = utf8_path(delta.new_file().path_bytes())?;
    let current = match delta.status() {
        Delta::Deleted => old.clone(),
        _ => new.clone().or_else(|| old.clone()),
    }
    .unwrap_or_default();
    let previous = match delta.status() {
        Delta::Renamed | Delta::Copied => old,
        _ => None,
    };
    Ok((current, previous))
}

/// The kind of a tree entry from its mode. Absent sides (`Unreadable`, mode 0) and trees
/// do not occur for the side asked about; they map to `File`.
pub(crate) fn entry_kind(mode: FileMode) -> EntryKind {
    match mode {
        FileMode::BlobExecutable => EntryKind::Executable,
        FileMode::Link => EntryKind::Symlink,
        FileMode::Commit => EntryKind::Submodule,
        _ => EntryKind::File,
    }
}

/// The mode as an octal number, `None` when that side is absent.
fn mode_number(mode: FileMode) -> Option<u32> {
    match mode {
        FileMode::Unreadable => None,
        m => Some(u32::from(m)),
    }
}

/// What a delta says of its changed file before the patch is loaded.
#[derive(Clone)]
pub(crate) struct DeltaFacts {
    path: String,
    previous_path: Option<String>,
    similarity: Option<u8>,
    status: FileStatus,
    kind: EntryKind,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
}

/// What a file's patch says of it: whether it is binary, its hunks, its added and
/// removed line counts and its long changed lines.
pub(crate) type PatchContent = (bool, Vec<Hunk>, u32, u32, Vec<LongLineChange>);

impl DeltaFacts {
    /// The facts of `delta`; `None` for statuses that a tree-to-tree diff does not
    /// produce (unmodified, ignored, untracked, ...).
    fn of(delta: &DiffDelta<'_>) -> Result<Option<DeltaFacts>, GitError> {
        let same_content = delta.old_file().id() == delta.new_file().id();
        let status = match delta.status() {
            Delta::Added => FileStatus::Added,
            Delta::Deleted => FileStatus::Deleted,
            Delta::Modified if same_content => FileStatus::ModeOnly,
            Delta::Modified => FileStatus::Modified,
            Delta::Renamed => FileStatus::Renamed,
            Delta::Copied => FileStatus::Copied,
            Delta::Typechange => FileStatus::TypeChanged,
            _ => return Ok(None),
        };
        let (path, previous_path) = delta_paths(delta)?;
        let similarity = match status {
            FileStatus::Renamed | FileStatus::Copied => Some(similarity(delta)),
            _ => None,
        };
        let kind = match status {
            FileStatus::Deleted => entry_kind(delta.old_file().mode()),
            _ => entry_kind(delta.new_file().mode()),
        };
        Ok(Some(DeltaFacts {
            path,
            previous_path,
            similarity,
            status,
            kind,
            old_mode: mode_number(delta.old_file().mode()),
            new_mode: mode_number(delta.new_file().mode()),
        }))
    }

    fn into_file(self, content: PatchContent) -> ChangedFile {
        let (binary, hunks, additions, deletions, long_lines) = content;
        ChangedFile {
            path: self.path,
            previous_path: self.previous_path,
            similarity: self.similarity,
            status: self.status,
            kind: self.kind,
            old_mode: self.old_mode,
            new_mode: self.new_mode,
            binary,
            hunks,
            additions,
            deletions,
            long_lines,
        }
    }
}

/// What a binary file's patch says of it: no hunks, no changed lines.
pub(crate) fn binary_content() -> PatchContent {
    (true, Vec::new(), 0, 0, Vec::new())
}

/// Reads a loaded patch of two text sides (`None`: libgit2 has none).
pub(crate) fn patch_content(patch: Option<&Patch<'_>>) -> Result<PatchContent, GitError> {
    let Some(patch) = patch else {
        return Ok((false, Vec::new(), 0, 0, Vec::new()));
    };
    let mut hunks = Vec::with_capacity(patch.num_hunks());
    for h in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(h).map_err(GitError::git("reading a hunk"))?;
        hunks.push(Hunk {
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
            header: header_text(hunk.header()),
        });
    }
    let (_, adds, dels) = patch
        .line_stats()
        .map_err(GitError::git("counting changed lines"))?;
    let long_lines = long_lines(patch).map_err(GitError::git("reading a hunk"))?;
    Ok((false, hunks, adds as u32, dels as u32, long_lines))
}

/// Converts the `idx`-th delta of `diff` into a [`ChangedFile`]; `None` for statuses that
/// a tree-to-tree diff does not produce (unmodified, ignored, untracked, ...).
///
/// Its patch runs from the old entry's content to the new one's ([`side_content`]: a
/// blob's bytes, a symlink's link text, for a submodule `Subproject commit <sha>` as git
/// prints it). So a type change (file ↔ symlink ↔ submodule), which libgit2 gives no
/// content and `git diff` shows as a deletion plus an addition, is one patch whose old
/// lines are numbered at base and new ones at head like any other change.
pub(crate) fn changed_file(
    repo: &Repository,
    diff: &Diff<'_>,
    idx: usize,
) -> Result<Option<ChangedFile>, GitError> {
    let Some(delta) = diff.get_delta(idx) else {
        return Ok(None);
    };
    let Some(facts) = DeltaFacts::of(&delta)? else {
        return Ok(None);
    };
    // Each side is read once: content decides binary ([`is_binary`]), and only text
    // sides are diffed, from what was read.
    let old = side_of(repo, &delta.old_file())?;
    let new = side_of(repo, &delta.new_file())?;
    let content = if is_binary(&old) || is_binary(&new) {
        binary_content()
    } else {
        let old_path = delta.old_file().path().map(Path::to_path_buf);
        let new_path = delta.new_file().path().map(Path::to_path_buf);
        let patch = Patch::from_buffers(
            &old,
            old_path.as_deref(),
            &new,
            new_path.as_deref(),
            Some(&mut diff_options()),
        )
        .map_err(GitError::git("loading a file's patch"))?;
        patch_content(Some(&patch))?
    };
    Ok(Some(facts.into_file(content)))
}

/// A file modified in place whose two sides are blobs of regular files: rename and copy
/// detection never re-pairs it, so its patch can be loaded from its two blobs before
/// (and while) the rest of the change is paired.
pub(crate) struct BlobPair {
    facts: DeltaFacts,
    old: Oid,
    new: Oid,
}

impl BlobPair {
    /// The pair of the `idx`-th delta of `diff`, when it is such a file.
    pub(crate) fn of(diff: &Diff<'_>, idx: usize) -> Result<Option<BlobPair>, GitError> {
        let Some(delta) = diff.get_delta(idx) else {
            return Ok(None);
        };
        let regular = |m: FileMode| matches!(m, FileMode::Blob | FileMode::BlobExecutable);
        let (old, new) = (delta.old_file(), delta.new_file());
        if delta.status() != Delta::Modified
            || old.id() == new.id()
            || !regular(old.mode())
            || !regular(new.mode())
        {
            return Ok(None);
        }
        Ok(DeltaFacts::of(&delta)?.map(|facts| BlobPair {
            facts,
            old: old.id(),
            new: new.id(),
        }))
    }

    /// Whether the `idx`-th delta of `diff` is this same file, unchanged by pairing.
    pub(crate) fn is_delta(&self, diff: &Diff<'_>, idx: usize) -> bool {
        diff.get_delta(idx).is_some_and(|d| {
            d.status() == Delta::Modified
                && d.old_file().id() == self.old
                && d.new_file().id() == self.new
                && d.new_file().path_bytes() == Some(self.facts.path.as_bytes())
        })
    }

    /// The current path.
    pub(crate) fn path(&self) -> &str {
        &self.facts.path
    }

    /// The [`ChangedFile`]: the same patch [`changed_file`] loads for it from the tree
    /// diff, here from the two blobs by [`file_patch`], as the `diff` tool loads it; and
    /// what `then` makes of the file and that patch while it is loaded.
    /// A binary file (by content) is not diffed, and `then` is not asked.
    pub(crate) fn changed_file<T>(
        &self,
        repo: &Repository,
        then: impl FnOnce(&ChangedFile, &Patch<'_>) -> Result<T, git2::Error>,
    ) -> Result<(ChangedFile, Option<T>), GitError> {
        let doing = "loading a file's patch";
        let old = SideSource::Blob(repo.find_blob(self.old).map_err(GitError::git(doing))?);
        let new = SideSource::Blob(repo.find_blob(self.new).map_err(GitError::git(doing))?);
        if is_binary(old.bytes()) || is_binary(new.bytes()) {
            return Ok((self.facts.clone().into_file(binary_content()), None));
        }
        let path = Path::new(&self.facts.path);
        let patch = file_patch(&old, path, &new, path)?;
        let content = patch_content(Some(&patch))?;
        let file = self.facts.clone().into_file(content);
        let made = then(&file, &patch).map_err(GitError::git(doing))?;
        Ok((file, Some(made)))
    }
}

/// The changed lines of `patch` shown in [`NAMED_LINE_BYTES`] or more (here "long"),
/// each with the byte ranges that changed. Within a run of removals followed by additions, the k-th addition
/// replaces the k-th removal: a long added line gets the [`changed_ranges`] of it against
/// its partner (whole when it has none), and a long removed line gets, at base, the
/// ranges of it that its partner does not keep (whole when it has none) — so text
/// deleted from inside a long line is a change of the base line that must be shown. A
/// long context line is named with no changed range ([`context`]).
fn long_lines(patch: &Patch<'_>) -> Result<Vec<LongLineChange>, git2::Error> {
    let mut out = Vec::new();
    // A file too small to hold a named line (a quarter of the bound: a byte is shown in
    // four at most) has none: skip the per-line walk.
    let delta = patch.delta();
    let largest = delta.old_file().size().max(delta.new_file().size());
    if largest > 0 && largest * 4 < u64::from(NAMED_LINE_BYTES) {
        return Ok(out);
    }
    for h in 0..patch.num_hunks() {
        let (_, count) = patch.hunk(h)?;
        let mut run = Run::default();
        for l in 0..count {
            let line = patch.line_in_hunk(h, l)?;
            let (body, _) = trim_eol(line.content());
            match line.origin_value() {
                DiffLineType::Deletion => {
                    if run.paired > 0 {
                        run.flush(&mut out);
                    }
                    run.removed.push((line.old_lineno().unwrap_or(0), body));
                }
                DiffLineType::Addition => {
                    run.added(line.new_lineno().unwrap_or(0), body, &mut out);
                }
                DiffLineType::Context => {
                    run.flush(&mut out);
                    context(&line, body, &mut out);
                }
                _ => {}
            }
        }
        run.flush(&mut out);
    }
    Ok(out)
}

/// A long context line of a hunk: named on both sides with no changed range, so the seen
/// rule asks nothing of it (no read shows it whole, and nothing in it changed).
fn context(line: &git2::DiffLine<'_>, body: &[u8], out: &mut Vec<LongLineChange>) {
    if !is_named_line(body) {
        return;
    }
    for (revision, n) in [
        (Revision::Head, line.new_lineno()),
        (Revision::Base, line.old_lineno()),
    ] {
        if let Some(n) = n {
            out.push(LongLineChange {
                revision,
                line: n,
                len: body.len() as u32,
                changed: vec![],
            });
        }
    }
}

/// One run of removed lines and the additions that replace them, in order.
#[derive(Default)]
struct Run<'p> {
    /// The run's removed lines: base line number and text (borrowed from the patch).
    removed: Vec<(u32, &'p [u8])>,
    /// How many of them an addition has replaced so far.
    paired: usize,
}

impl<'p> Run<'p> {
    /// An added line `body` at head line `n`: paired with the next removed line, when
    /// there is one, and recorded on both sides when either side is long.
    fn added(&mut self, n: u32, body: &'p [u8], out: &mut Vec<LongLineChange>) {
        match self.removed.get(self.paired) {
            // A rewritten line with either side long is named on both sides: the
            // shorter side may still be too long to show whole in a shard, and the text
            // it loses or gains is shown by its changed bytes.
            Some((old_n, old)) if is_named_line(body) || is_named_line(old) => {
                out.push(LongLineChange {
                    revision: Revision::Head,
                    line: n,
                    len: body.len() as u32,
                    changed: changed_or_end(old, body),
                });
                out.push(LongLineChange {
                    revision: Revision::Base,
                    line: *old_n,
                    len: old.len() as u32,
                    changed: changed_or_end(body, old),
                });
            }
            Some(_) => {}
            None if is_named_line(body) => out.push(whole(Revision::Head, n, body.len())),
            None => {}
        }
        self.paired += 1;
    }

    /// Ends the run: each long removed line no addition replaced changed whole.
    fn flush(&mut self, out: &mut Vec<LongLineChange>) {
        for (n, body) in self.removed.iter().skip(self.paired) {
            if is_named_line(body) {
                out.push(whole(Revision::Base, *n, body.len()));
            }
        }
        self.removed.clear();
        self.paired = 0;
    }
}

fn whole(revision: Revision, line: u32, len: usize) -> LongLineChange {
    LongLineChange {
        revision,
        line,
        len: len as u32,
        changed: vec![(0, len as u32)],
    }
}

/// A patch line's text without its ending, and whether the ending was `\r\n`
/// ([`vouch_core::split_cr`]).
pub(crate) fn trim_eol(content: &[u8]) -> (&[u8], bool) {
    vouch_core::split_cr(content.strip_suffix(b"\n").unwrap_or(content))
}

/// Bytes compared at a time when both sides of a long line have the same length; also
/// how close two changed ranges must be to be named as one.
const CHANGE_BLOCK: usize = 64;

/// Most ranges named per long line; a line edited in more places is named by the whole
/// middle between its common prefix and suffix.
const MAX_RANGES: usize = 64;

/// How long the byte diff of one long line may run before its middle is named whole (a
/// few edits in a 300 KB line take about 2 ms in a release build, 70 ms in a debug one;
/// a line rewritten throughout runs into the deadline and is named whole, as it would be
/// for its many ranges).
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(250);

/// The byte ranges of `new` that differ from `old`, conservatively: the bytes between
/// the common prefix and the common suffix, narrowed — when both lines have the same
/// length, to the [`CHANGE_BLOCK`]-byte blocks of that middle that differ in place;
/// otherwise to what a byte diff of the two middles inserts or replaces (ranges closer
/// than [`CHANGE_BLOCK`] joined; the whole middle when the diff runs past
/// [`DIFF_DEADLINE`] or finds more than [`MAX_RANGES`] ranges). A pure removal inside
/// the line is the byte on each side of the removal point.
pub(crate) fn changed_ranges(old: &[u8], new: &[u8]) -> Vec<(u32, u32)> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let (start, end) = (prefix, new.len() - suffix);
    if start >= end {
        if old.len() == new.len() {
            return vec![];
        }
        return vec![removal_point(start, new.len())];
    }
    if old.len() != new.len() {
        let middle = (&old[prefix..old.len() - suffix], &new[start..end]);
        return diffed_ranges(middle, start, new.len())
            .unwrap_or_else(|| vec![(start as u32, end as u32)]);
    }
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut at = start;
    while at < end {
        let stop = (at + CHANGE_BLOCK).min(end);
        if old[at..stop] != new[at..stop] {
            join(&mut ranges, (at, stop), 0);
        }
        at = stop;
    }
    ranges
}

/// The [`changed_ranges`] of `new` against `old`; for a line whose text is the same and
/// only its ending changed (CRLF to LF, a final newline added or dropped), its last byte,
/// so the line's end is shown where the change is.
fn changed_or_end(old: &[u8], new: &[u8]) -> Vec<(u32, u32)> {
    if old == new {
        return vec![removal_point(new.len(), new.len())];
    }
    changed_ranges(old, new)
}

/// The byte on each side of a removal at `at` of a line of `len` bytes.
fn removal_point(at: usize, len: usize) -> (u32, u32) {
    (at.saturating_sub(1) as u32, (at + 1).min(len) as u32)
}

/// Adds `range` to `ranges` (sorted), joining it to the last one when it starts within
/// `gap` bytes of its end.
fn join(ranges: &mut Vec<(u32, u32)>, (start, end): (usize, usize), gap: usize) {
    match ranges.last_mut() {
        Some(last) if start <= last.1 as usize + gap => last.1 = last.1.max(end as u32),
        _ => ranges.push((start as u32, end as u32)),
    }
}

/// The ranges of the new middle (at `offset` in a line of `len` bytes) that a byte diff
/// of the two middles inserts or replaces, a removal as its [`removal_point`]; `None`
/// when the diff ran past [`DIFF_DEADLINE`] or found more than [`MAX_RANGES`] ranges.
fn diffed_ranges((old, new): (&[u8], &[u8]), offset: usize, len: usize) -> Option<Vec<(u32, u32)>> {
    let deadline = std::time::Instant::now() + DIFF_DEADLINE;
    let ops =
        similar::capture_diff_slices_deadline(similar::Algorithm::Myers, old, new, Some(deadline));
    if std::time::Instant::now() >= deadline {
        return None;
    }
    let mut ranges = Vec::new();
    for op in ops {
        let (_, _, added) = op.as_tag_tuple();
        let range = match op.tag() {
            similar::DiffTag::Equal => continue,
            similar::DiffTag::Delete => {
                let (s, e) = removal_point(offset + added.start, len);
                (s as usize, e as usize)
            }
            _ => (offset + added.start, offset + added.end),
        };
        join(&mut ranges, range, CHANGE_BLOCK);
        if ranges.len() > MAX_RANGES {
            return None;
        }
    }
    Some(ranges)
}

/// A hunk header as text, without its line ending. The header's function context comes
/// from file content and may be in any encoding; invalid bytes are shown as
/// [`vouch_core::shown_text`] shows them.
pub(crate) fn header_text(bytes: &[u8]) -> String {
    vouch_core::shown_text(bytes)
        .trim_end_matches(['\n', '\r'])
        .to_string()
}

/// The rename/copy similarity libgit2 computed, in percent (0-100).
fn similarity(delta: &DiffDelta<'_>) -> u8 {
    // SAFETY: `delta.raw()` points at a `git_diff_delta` owned by the diff that `delta`
    // borrows, so it is valid for this read; `similarity` is a plain `uint16_t` field that
    // git2 0.21 does not expose.
    let raw = unsafe { (*delta.raw()).similarity };
    raw.min(100) as u8
}

#[cfg(test)]
mod tests {
    use super::changed_ranges;

    #[test]
    fn changed_ranges_name_the_bytes_that_differ() {
        let base: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut three = base.clone();
        for at in [100, 500, 900] {
            three[at] = b'#';
        }
        let mut longer = base.clone();
        longer.splice(300..300, *b"INSERTED");
        let mut shorter = base.clone();
        shorter.drain(400..410);
        // Ten bytes removed at 100, six inserted at 800 (at 790 of the new line).
        let mut far_apart = base.clone();
        far_apart.splice(800..800, *b"ADDED!");
        far_apart.drain(100..110);
        type Case<'a> = (&'a str, &'a [u8], Vec<(u32, u32)>);
        let cases: Vec<Case> = vec![
            ("identical", &base, vec![]),
            (
                "three in-place edits",
                &three,
                vec![(100, 164), (484, 548), (868, 901)],
            ),
            ("an insertion", &longer, vec![(300, 308)]),
            ("a removal", &shorter, vec![(399, 401)]),
            (
                "an insertion and a removal far apart",
                &far_apart,
                vec![(99, 101), (790, 796)],
            ),
        ];
        for (name, new, want) in cases {
            let got = changed_ranges(&base, new);
            assert_eq!(got, want, "{name}");
            for &(s, e) in &got {
                assert!(s < e && e as usize <= new.len(), "{name}");
            }
        }
    }

    proptest::proptest! {
        /// For any two lines: the ranges are sorted, disjoint, non-empty and within the new
        /// line, and there is one whenever the lines differ.
        #[test]
        fn changed_ranges_are_ordered_bounded_and_never_miss_a_change(
            old in proptest::collection::vec(proptest::sample::select(b"abc".to_vec()), 0..300),
            edits in proptest::collection::vec((0usize..300, 0usize..12, proptest::collection::vec(proptest::sample::select(b"abcX".to_vec()), 0..12)), 0..4),
        ) {
            let mut new = old.clone();
            for (at, removed, inserted) in edits {
                let at = at.min(new.len());
                let removed = removed.min(new.len() - at);
                new.splice(at..at + removed, inserted);
            }
            let ranges = changed_ranges(&old, &new);
            proptest::prop_assert_eq!(ranges.is_empty(), old == new, "{:?}", ranges);
            for w in ranges.windows(2) {
                proptest::prop_assert!(w[0].1 < w[1].0, "{:?}", ranges);
            }
            for &(s, e) in &ranges {
                proptest::prop_assert!(s < e && e as usize <= new.len().max(1), "{:?}", ranges);
            }
        }
    }
}
