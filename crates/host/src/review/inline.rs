//! Source the host gives inline: patches of assigned files and, for the verifier, the
//! lines around each candidate. Everything given is recorded in the execution's ledger.

use vouch_core::{Candidate, Revision, SourceWindow};

use super::env::ReviewEnv;
use super::stage::{HunkPiece, StagePlan};
use crate::tools::RepoTools;

/// Lines of context given around a candidate for the verifier.
pub(crate) const CANDIDATE_CONTEXT_LINES: u32 = 12;

/// Inline blocks and what did not fit.
#[derive(Default)]
pub(crate) struct InlineSource {
    /// Text blocks, in order.
    pub(crate) blocks: Vec<String>,
    /// Paths whose patch did not fit the inline budget, or could not be retrieved.
    pub(crate) omitted: Vec<String>,
    /// Paths whose patch could not be retrieved (a source lookup gap).
    pub(crate) failed: Vec<String>,
}

impl InlineSource {
    /// Names `path` as not given whole (once).
    fn omit(&mut self, path: &str) {
        if !self.omitted.iter().any(|p| p == path) {
            self.omitted.push(path.to_string());
        }
    }

    /// Names `path` as a source lookup gap: a read of it failed.
    fn fail(&mut self, path: &str) {
        self.failed.push(path.to_string());
        self.omit(path);
    }
}

/// The patches of `paths`, in order, until `max_bytes` are used up. Each shown patch's
/// windows are recorded in `tools`' ledger as given source.
pub(super) fn patches(
    env: &ReviewEnv,
    tools: &RepoTools,
    paths: &[String],
    max_bytes: usize,
) -> InlineSource {
    let mut out = InlineSource {
        blocks: vec![],
        omitted: vec![],
        failed: vec![],
    };
    let mut used = 0usize;
    patches_into(env, tools, paths, max_bytes, &mut used, &mut out);
    out
}

/// What a stage plan (or shard) is given inline: the whole patches of its files, then
/// the hunks of each file it holds only in part, as numbered lines ([`hunk_lines`]),
/// all within the plan's inline budget.
pub(crate) fn shard_source(env: &ReviewEnv, tools: &RepoTools, plan: &StagePlan) -> InlineSource {
    let whole: Vec<String> = plan
        .assigned
        .iter()
        .filter(|p| !plan.split.iter().any(|(s, _)| s == *p))
        .cloned()
        .collect();
    let mut out = InlineSource {
        blocks: vec![],
        omitted: vec![],
        failed: vec![],
    };
    let mut used = 0usize;
    patches_into(env, tools, &whole, plan.inline_bytes, &mut used, &mut out);
    for (path, pieces) in &plan.split {
        hunk_lines(
            env,
            tools,
            path,
            pieces,
            plan.inline_bytes,
            &mut used,
            &mut out,
        );
    }
    out
}

fn patches_into(
    env: &ReviewEnv,
    tools: &RepoTools,
    paths: &[String],
    max_bytes: usize,
    used: &mut usize,
    out: &mut InlineSource,
) {
    for path in paths {
        match env.services.reader.diff(path) {
            Ok(diff) => {
                if *used + diff.text.len() > max_bytes {
                    out.omitted.push(path.clone());
                    continue;
                }
                *used += diff.text.len();
                for w in &diff.windows {
                    tools.record(w.clone());
                }
                for s in &diff.spans {
                    tools.record_span(s.clone());
                }
                if diff.file.is_metadata_only() {
                    tools.record_metadata(path);
                }
                out.blocks.push(format!(
                    "<patch path={:?}>\n{}\n</patch>",
                    path,
                    source_text(&diff.text)
                ));
            }
            Err(_) => {
                out.omitted.push(path.clone());
                out.failed.push(path.clone());
            }
        }
    }
}

/// Rule (issue 10, "a file too large for any shard is split by hunks"; issue 28, "every
/// changed line reachable without tools"): the `pieces` of `path` given as numbered lines
/// — a whole hunk's head lines and the base lines it replaces, or a window of one side of
/// a hunk too large for one shard, labelled with its place in the hunk — read in pages
/// and recorded in the ledger exactly as shown, until `max_bytes` are used; lines that do
/// not fit are named in the block, so the model can read them with tools and the "seen"
/// rule counts only what was shown.
fn hunk_lines(
    env: &ReviewEnv,
    tools: &RepoTools,
    path: &str,
    pieces: &[HunkPiece],
    max_bytes: usize,
    used: &mut usize,
    out: &mut InlineSource,
) {
    let Some(file) = env.inputs.snapshot.file(path) else {
        out.omitted.push(path.to_string());
        return;
    };
    let base_path = file.previous_path.as_deref().unwrap_or(path);
    let read_path = |revision| {
        if revision == Revision::Head {
            path
        } else {
            base_path
        }
    };
    for piece in pieces {
        let Some(hunk) = file.hunks.get(piece.hunk) else {
            continue;
        };
        if let (Some(bytes), Some(&(revision, line, _))) = (piece.bytes, piece.sides.first()) {
            let at = (revision, read_path(revision), line);
            match line_bytes(env, tools, at, bytes, max_bytes, used) {
                Some((block, complete)) => {
                    out.blocks.push(block);
                    if !complete {
                        out.omit(path);
                    }
                }
                None => out.fail(path),
            }
            continue;
        }
        for &(revision, start, end) in &piece.sides {
            let side = HunkSide {
                path,
                read_path: read_path(revision),
                hunk,
                window: piece.window,
                lines: (revision, start, end),
            };
            side_block(env, tools, &side, max_bytes, used, out);
        }
    }
}

/// One side of a hunk piece: the changed file's `path`, the path it is read at on that
/// side (a renamed file's previous path at base), and its `lines`.
struct HunkSide<'a> {
    path: &'a str,
    read_path: &'a str,
    hunk: &'a vouch_core::Hunk,
    window: bool,
    lines: (Revision, u32, u32),
}

/// Gives one side of a hunk piece as a `<hunk>` block of numbered lines, read until
/// `max_bytes` are used; lines that do not fit are named in the block and the file is
/// named as not given whole.
fn side_block(
    env: &ReviewEnv,
    tools: &RepoTools,
    side: &HunkSide<'_>,
    max_bytes: usize,
    used: &mut usize,
    out: &mut InlineSource,
) {
    let (revision, start, end) = side.lines;
    let mut block = format!(
        "<hunk path={:?} header={:?} revision=\"{}\"{}>\n",
        side.path,
        side.hunk.header,
        revision.as_str(),
        window_note(side.hunk, side.window, revision, start, end)
    );
    let at = (revision, side.read_path, start, end);
    let before = *used;
    let lines_room = max_bytes.saturating_sub(BLOCK_TRAILER_BYTES);
    match read_lines_into(env, tools, at, lines_room, used, &mut block) {
        None => out.fail(side.path),
        Some(next) if next <= end => {
            block.push_str(&format!(
                "[lines {next}-{end} at {} are not given inline: over the inline budget; read them with read_file]\n",
                revision.as_str()
            ));
            out.omit(side.path);
        }
        Some(_) => {}
    }
    block.push_str("</hunk>");
    // The whole block counts: its header, the lines read, the note and its end.
    *used = before + block.len();
    out.blocks.push(block);
}

/// Bytes kept for what closes a block after its lines: the note naming the lines or
/// bytes not given inline, and the closing tag.
const BLOCK_TRAILER_BYTES: usize = 160;

/// Bytes `[from, to)` of long line `line` of `at` given inline as one block, read in
/// windows that fit what `max_bytes` leaves and recorded as the spans shown, with whether
/// all of them were given; `None` when a read failed. Bytes that do not fit are named in
/// the block.
fn line_bytes(
    env: &ReviewEnv,
    tools: &RepoTools,
    (revision, at, line): (Revision, &str, u32),
    (from, to): (u32, u32),
    max_bytes: usize,
    used: &mut usize,
) -> Option<(String, bool)> {
    // The tag names the line; each read in it names the bytes it shows exactly (a read
    // starts and ends on a character boundary, so it can begin a byte or three before
    // `from` and end a byte or three after `to`).
    let mut block = format!(
        "<line path={at:?} revision=\"{}\" line=\"{line}\">\n",
        revision.as_str()
    );
    // The header is not in `used` yet; what `append_read` adds to the block is.
    let header = block.len();
    let before = *used;
    let mut next = from;
    while next < to {
        let room = max_bytes.saturating_sub(*used + header + BLOCK_TRAILER_BYTES);
        if room < 4 {
            break;
        }
        // A read shows bytes `next..to` (each end moved to a character boundary, so it
        // may show up to 3 bytes past `to`), or as many of them as `room` holds shown.
        let read = env
            .services
            .reader
            .read_line_range(revision, at, line, (next, to), room)
            .ok()?;
        let shown = read.spans.iter().map(|s| s.end_byte).max().or_else(|| {
            // The whole line fitted: it is recorded as a window.
            read.window.as_ref().map(|_| to)
        });
        let Some(end) = shown.filter(|&e| e > next) else {
            break;
        };
        append_read(tools, read, &mut block, used);
        next = end;
    }
    if next < to {
        let how = if env.tools_enabled() {
            "; read them with read_file start_byte"
        } else {
            ""
        };
        block.push_str(&format!(
            "[bytes {next}-{to} of line {line} are not given inline: over the inline budget{how}]\n"
        ));
    }
    block.push_str("</line>");
    *used = before + block.len();
    Some((block, next >= to))
}

/// A patch or read as a block's body: without its final line ending, and nothing more —
/// whitespace a change adds at the end of its last line is part of what it shows.
fn source_text(text: &str) -> &str {
    text.trim_end_matches('\n')
}

/// Appends what `read` shows to `block` and records its window or spans in the ledger,
/// exactly as shown.
fn append_read(tools: &RepoTools, read: vouch_git::FileRead, block: &mut String, used: &mut usize) {
    block.push_str(source_text(&read.text));
    block.push('\n');
    *used += read.text.len();
    if let Some(window) = read.window {
        tools.record(window);
    }
    for span in read.spans {
        tools.record_span(span);
    }
}

/// The attribute naming a window's place in its hunk (` lines="41-80 of 1-400"`), empty
/// for a whole hunk.
fn window_note(
    hunk: &vouch_core::Hunk,
    window: bool,
    revision: Revision,
    start: u32,
    end: u32,
) -> String {
    if !window {
        return String::new();
    }
    let (first, count) = match revision {
        Revision::Head => (hunk.new_start, hunk.new_lines),
        Revision::Base => (hunk.old_start, hunk.old_lines),
    };
    format!(
        " lines=\"{start}-{end} of {first}-{}\"",
        first + count.saturating_sub(1)
    )
}

/// Reads lines `start..=end` of `at` at `revision` in pages into `block`, recording each
/// window or span shown, while `max_bytes` allows. Returns the first line not shown
/// (`end + 1` when all were), or `None` when a read failed.
fn read_lines_into(
    env: &ReviewEnv,
    tools: &RepoTools,
    (revision, at, start, end): (Revision, &str, u32, u32),
    max_bytes: usize,
    used: &mut usize,
    block: &mut String,
) -> Option<u32> {
    // The block's header is not in `used` yet; what `append_read` adds to it is.
    let header = block.len();
    let reader = &env.services.reader;
    let mut next = start;
    while next <= end {
        let room = max_bytes.saturating_sub(*used + header);
        let Some(read) = read_fitting(reader, (revision, at, next, end), room).ok()? else {
            break;
        };
        let Some(last) = last_shown(&read).filter(|&l| l >= next) else {
            break;
        };
        append_read(tools, read, block, used);
        next = last + 1;
    }
    Some(next)
}

/// The last line `read` shows, whole (window) or in part (spans, recorded as such: a
/// long line shown in part never counts as read whole).
fn last_shown(read: &vouch_git::FileRead) -> Option<u32> {
    read.window
        .as_ref()
        .map(|w| w.end_line)
        .into_iter()
        .chain(read.spans.iter().map(|s| s.line))
        .max()
}

/// A read of lines `start..=end` of `at` (one page at most) whose text fits `room`
/// bytes: the whole page when it fits, else the first lines of it that do, read again so
/// the ledger records exactly what is shown; `None` when not even one line fits.
fn read_fitting(
    reader: &vouch_git::SourceReader,
    (revision, at, start, end): (Revision, &str, u32, u32),
    room: usize,
) -> Result<Option<vouch_git::FileRead>, vouch_git::ReadError> {
    let read = reader.read_file(revision, at, Some(start), Some(end))?;
    if read.text.len() <= room {
        return Ok(Some(read));
    }
    // The page's text is a header line, one line per source line, and a note: the
    // lines that fit once the header is paid, fewer while the text still does not fit.
    let mut fit = lines_fitting(&read.text, room).saturating_sub(1);
    while fit > 0 {
        let read = reader.read_file(revision, at, Some(start), Some(start + fit - 1))?;
        if read.text.len() <= room {
            return Ok(Some(read));
        }
        fit -= (fit / 8).max(1);
    }
    Ok(None)
}

/// How many of `text`'s first lines fit `room` bytes, with their line ends.
fn lines_fitting(text: &str, room: usize) -> u32 {
    let mut used = 0usize;
    let mut count = 0u32;
    for line in text.split_inclusive('\n') {
        used += line.len();
        if used > room {
            break;
        }
        count += 1;
    }
    count
}

/// Bytes a candidate's window block takes besides its numbered lines (tags, id, header).
const WINDOW_FRAME_BYTES: usize = 160;

/// A candidate's window: its lines and its block's estimated bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CandidateWindow {
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) bytes: usize,
}

/// Rule (verification source within its room): the lines given around a candidate at its
/// revision: ± [`CANDIDATE_CONTEXT_LINES`], narrowed one line at each end at a time while
/// its block (estimated from the lines' real lengths) is over `max_bytes`, down to the
/// candidate's own lines, and then to as many of them from its first as fit (a verifier
/// may cite only what it is shown); `None` when not even its first line fits, or the
/// file cannot be read.
pub(crate) fn candidate_window(
    env: &ReviewEnv,
    c: &Candidate,
    max_bytes: usize,
) -> Option<CandidateWindow> {
    let lengths = env
        .services
        .reader
        .line_lengths(c.revision, &c.path)
        .ok()
        .flatten()?;
    let last = u32::try_from(lengths.len()).ok().filter(|&n| n > 0)?;
    let (lo, hi) = (c.start_line.clamp(1, last), c.end_line.clamp(1, last));
    let frame = WINDOW_FRAME_BYTES + c.id.len() + c.path.len();
    // Line `n` as a numbered line of the read: its number, `: `, its text, its ending.
    let line = |n: u32| lengths[(n - 1) as usize].shown as usize + n.to_string().len() + 4;
    let bytes = |s: u32, e: u32| -> usize { frame + (s..=e).map(line).sum::<usize>() };
    let around = (0..=CANDIDATE_CONTEXT_LINES).rev().find_map(|context| {
        let (start, end) = (lo.saturating_sub(context).max(1), (hi + context).min(last));
        let bytes = bytes(start, end);
        (bytes <= max_bytes).then_some(CandidateWindow {
            start_line: start,
            end_line: end,
            bytes,
        })
    });
    around.or_else(|| {
        // The candidate's own lines from its first, while they fit.
        let mut fit: Option<CandidateWindow> = None;
        let mut used = frame;
        for n in lo..=hi {
            used += line(n);
            if used > max_bytes {
                break;
            }
            fit = Some(CandidateWindow {
                start_line: lo,
                end_line: n,
                bytes: used,
            });
        }
        fit
    })
}

/// The lines around each candidate ([`candidate_window`]), recorded in `tools`' ledger,
/// while their blocks fit `max_bytes` (`used` counts them; a window is narrowed to the
/// room left, and a read is at most one `read_file` call's bytes). Candidates whose file
/// cannot be read are skipped (the verifier can still read with tools, or decide
/// `unresolved`); the windows that do not fit are named in what is returned beside the
/// blocks ("the lines around path:a-b").
pub(crate) fn candidate_windows(
    env: &ReviewEnv,
    tools: &RepoTools,
    candidates: &[Candidate],
    max_bytes: usize,
    used: &mut usize,
) -> (Vec<String>, Vec<String>) {
    let mut blocks = Vec::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut seen: Vec<SourceWindow> = Vec::new();
    for c in candidates {
        let room = max_bytes.saturating_sub(*used).min(vouch_git::MAX_BYTES);
        let block = candidate_window(env, c, room).and_then(|w| {
            let read = env
                .services
                .reader
                .read_file(c.revision, &c.path, Some(w.start_line), Some(w.end_line))
                .ok()?;
            let window = read.window?;
            let block = format!(
                "<source for={:?}>\n{}\n</source>",
                c.id,
                source_text(&read.text)
            );
            Some((window, block))
        });
        let Some((window, block)) = block.filter(|(_, b)| b.len() <= room) else {
            let named = format!(
                "the lines around {}:{}-{}",
                c.path, c.start_line, c.end_line
            );
            if !left_out.contains(&named) {
                left_out.push(named);
            }
            continue;
        };
        if seen.contains(&window) {
            continue;
        }
        *used += block.len();
        seen.push(window.clone());
        tools.record(window);
        blocks.push(block);
    }
    (blocks, left_out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;
    use vouch_core::FileStatus;
    use vouch_git::SourceReader;
    use vouch_llm::{EndpointConfig, ModelClient, ToolBox};
    use vouch_testkit::git::TestRepo;

    use super::*;
    use crate::diagnostics::Collector;
    use crate::progress::Silent;
    use crate::review::env::{ReviewInputs, StageServices, ToolsMode};

    fn env(repo: &TestRepo, base: &str, head: &str) -> ReviewEnv {
        let snapshot = Arc::new(vouch_git::snapshot(repo.path(), Some(base), head).unwrap());
        let reader = Arc::new(SourceReader::open(repo.path(), &snapshot).unwrap());
        let config = EndpointConfig::new("http://127.0.0.1:9/v1", "unused");
        ReviewEnv {
            inputs: ReviewInputs {
                snapshot,
                intent: None,
                policy: vec![],
                tools: ToolsMode::On,
                inline_bytes: None,
                window: vouch_core::ContextWindow::default(),
            },
            services: StageServices {
                reader,
                client: Arc::new(ModelClient::new(config).unwrap()),
                model_clients: Default::default(),
                presenter: Arc::new(Silent),
                diagnostics: Arc::new(Collector::default()),
                job_id: "test".into(),
                cancel: CancellationToken::new(),
            },
            memo: Default::default(),
        }
    }

    /// The `diff` tool and the inline patch section show a renamed file's patch as the
    /// snapshot paired it, from one computation shared by both.
    #[test]
    fn the_diff_tool_and_inline_sections_share_the_snapshot_patch_of_a_rename() {
        let repo = TestRepo::new();
        let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        repo.write("docs/guide.md", &body).write("keep.txt", "k\n");
        let base = repo.commit("base");
        repo.write("docs/guide.md", body.replace("line 7\n", "line seven\n"))
            .rename("docs/guide.md", "docs/manual.md");
        let head = repo.commit("rename");
        let env = env(&repo, &base, &head);
        let file = env.inputs.snapshot.file("docs/manual.md").unwrap().clone();
        assert_eq!(file.status, FileStatus::Renamed);

        let tools = RepoTools::new(env.services.reader.clone());
        let inline = patches(&env, &tools, &["docs/manual.md".to_string()], 12_000);
        let from_tool = tools
            .call("diff", &json!({"path": "docs/manual.md"}), usize::MAX)
            .unwrap();
        assert_eq!(
            env.services.reader.patches_computed(),
            1,
            "one computation for both"
        );
        assert_eq!(
            inline.blocks,
            [format!(
                "<patch path=\"docs/manual.md\">\n{}\n</patch>",
                from_tool.trim_end_matches('\n')
            )]
        );
        assert!(from_tool.contains("rename from docs/guide.md\nrename to docs/manual.md\n"));
        let headers: Vec<&str> = from_tool.lines().filter(|l| l.starts_with("@@")).collect();
        let snapshot_headers: Vec<&str> = file.hunks.iter().map(|h| h.header.as_str()).collect();
        assert_eq!(headers, snapshot_headers);
        assert!(from_tool.contains("-line 7\n+line seven\n"), "{from_tool}");
    }

    /// Whitespace a change adds at the end of the last line of a patch or a hunk block is
    /// shown: a block drops only its final line ending.
    #[test]
    fn trailing_whitespace_at_the_end_of_a_block_is_shown() {
        let repo = TestRepo::new();
        repo.write("a.c", "int a;\nint b = 1; \n");
        let base = repo.commit("base");
        repo.write("a.c", "int a;\nint b = 1;\t\n");
        let head = repo.commit("a tab for a space");
        let env = env(&repo, &base, &head);
        let tools = RepoTools::new(env.services.reader.clone());
        let inline = patches(&env, &tools, &["a.c".to_string()], 12_000);
        assert!(
            inline.blocks[0].ends_with("-int b = 1; \n+int b = 1;\t\n</patch>"),
            "{:?}",
            inline.blocks
        );
        let hunk = env.inputs.snapshot.file("a.c").unwrap().hunks[0].clone();
        let (mut used, mut out) = (0, InlineSource::default());
        let piece = HunkPiece::whole(0, &hunk);
        hunk_lines(&env, &tools, "a.c", &[piece], 12_000, &mut used, &mut out);
        let blocks = out.blocks.join("\n");
        assert!(blocks.contains("2: int b = 1;\t\n</hunk>"), "{blocks}");
        assert!(blocks.contains("2: int b = 1; \n</hunk>"), "{blocks}");
    }

    /// [`candidate_window`]: ±12 lines when they fit, narrowed towards the candidate's
    /// lines, then to its first lines, and nothing when not even its first line fits.
    #[test]
    fn a_candidate_window_narrows_to_its_room() {
        let repo = TestRepo::new();
        let text = |w: &str| -> String {
            (1..=60)
                .map(|i| format!("{w} {i:03} {}\n", "x".repeat(290)))
                .collect()
        };
        repo.write("m.txt", text("old"));
        let base = repo.commit("base");
        repo.write("m.txt", text("new"));
        let head = repo.commit("rewrite");
        let env = env(&repo, &base, &head);
        let candidate = |start: u32, end: u32| Candidate {
            id: "lane/0".into(),
            proposed_by: "lane".into(),
            path: "m.txt".into(),
            revision: Revision::Head,
            start_line: start,
            end_line: end,
            severity: vouch_core::Severity::High,
            area: vouch_core::Area::Correctness,
            claim: "c".into(),
            evidence: "e".into(),
        };
        // (candidate lines, room) -> window lines
        type Case = ((u32, u32), usize, Option<(u32, u32)>);
        let cases: [Case; 5] = [
            ((30, 30), 100_000, Some((18, 42))),
            ((30, 30), 3_000, Some((26, 34))),
            ((20, 50), 100_000, Some((8, 60))),
            ((20, 50), 3_000, Some((20, 28))),
            ((30, 30), 200, None),
        ];
        for ((start, end), room, want) in cases {
            let got = candidate_window(&env, &candidate(start, end), room);
            assert_eq!(
                got.map(|w| (w.start_line, w.end_line)),
                want,
                "{start}-{end} in {room}"
            );
            if let Some(w) = got {
                assert!(w.bytes <= room, "{w:?}");
            }
        }
    }

    /// A change of `n` added lines of about 20 bytes each to a file of one line.
    fn long_hunk(n: u32) -> (TestRepo, String, String) {
        let repo = TestRepo::new();
        repo.write("data.txt", "start\n");
        let base = repo.commit("base");
        let body: String = (1..=n).map(|i| format!("added line {i:>8}\n")).collect();
        repo.write("data.txt", format!("start\n{body}"));
        let head = repo.commit("grow");
        (repo, base, head)
    }

    /// The head lines of `data.txt` the ledger records as whole lines, as ranges.
    fn head_lines_recorded(tools: &RepoTools) -> Vec<(u32, u32)> {
        tools
            .ledger()
            .windows
            .iter()
            .filter(|w| w.revision == Revision::Head && w.path == "data.txt")
            .map(|w| (w.start_line, w.end_line))
            .collect()
    }

    /// The one hunk of [`long_hunk`] (600 lines) given inline within `budget` bytes:
    /// the source, the head lines the ledger records, the bytes used, and the hunk.
    fn given_inline(budget: usize) -> (InlineSource, Vec<(u32, u32)>, usize, vouch_core::Hunk) {
        let (repo, base, head) = long_hunk(600);
        let env = env(&repo, &base, &head);
        let tools = RepoTools::new(env.services.reader.clone());
        let hunk = env.inputs.snapshot.file("data.txt").unwrap().hunks[0].clone();
        let piece = HunkPiece::whole(0, &hunk);
        let (mut used, mut out) = (0, InlineSource::default());
        hunk_lines(
            &env,
            &tools,
            "data.txt",
            &[piece],
            budget,
            &mut used,
            &mut out,
        );
        (out, head_lines_recorded(&tools), used, hunk)
    }

    /// Rule (every changed line reachable): a hunk read in more than one page is given
    /// whole when it fits the inline budget; the block's bytes count once against it.
    #[test]
    fn a_hunk_that_fits_the_budget_is_given_whole_across_pages() {
        let (out, recorded, used, hunk) = given_inline(24_000);
        assert!(out.omitted.is_empty(), "{:?}", out.omitted);
        assert_eq!(recorded.first().map(|r| r.0), Some(hunk.new_start));
        assert_eq!(
            recorded.last().map(|r| r.1),
            Some(hunk.new_start + hunk.new_lines - 1),
            "{recorded:?}"
        );
        assert!(used <= 24_000, "{used}");
    }

    /// A page larger than the room left gives the lines of it that fit, recorded exactly,
    /// and names the rest as not given inline.
    #[test]
    fn a_page_larger_than_the_room_left_gives_the_lines_that_fit() {
        let (out, recorded, _, hunk) = given_inline(3_000);
        assert_eq!(out.omitted, ["data.txt"]);
        let [(first, last)] = recorded[..] else {
            panic!("one window: {recorded:?}");
        };
        assert_eq!(first, hunk.new_start);
        assert!(last > first + 50 && last < first + 150, "{recorded:?}");
        let block = &out.blocks[0];
        assert!(block.len() <= 3_000, "{}", block.len());
        assert!(
            block.contains(&format!("[lines {}-", last + 1)),
            "the rest is named: {block}"
        );
        let numbered = block
            .lines()
            .filter(|l| {
                l.split_once(": ")
                    .is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok())
            })
            .count();
        assert_eq!(numbered as u32, last - first + 1, "{block}");
    }
}
