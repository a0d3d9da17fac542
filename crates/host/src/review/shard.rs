//! Sharding a lane instance: the host estimates what each assigned file costs a prompt
//! (its patch, its summary line, its list entries) and what the stable part of the
//! stage's requests costs, [`vouch_core::plan_shards`] decides the grouping, and each
//! shard becomes a normal [`StagePlan`] with its own slice of the canonical list.

use std::collections::HashMap;

use vouch_core::{
    ChangedFile, CoverageComparison, FileCost, FilePart, LONG_LINE_BYTES, LongLineChange, Revision,
    ShardBudget, ShardPlan, estimate_tokens, plan_shards,
};
use vouch_llm::{ToolBox, json_text_len, json_value_len};
use vouch_specialist_kit::contract::token_bound;

use super::contract::fitted_contract;
use super::env::ReviewEnv;
use super::stage::{HunkPiece, StagePlan, prompt_request};
use crate::policy::{
    ANSWER_REMINDER, FORCED_SYNTHESIS, PreviousAnswer, RetrySource, coverage_retry_message,
    expected_files_section, output_contract_section, split_files_section, tools_section,
    truncation_notice,
};
use crate::tools::RepoTools;

/// Room for change-specific content under `max_request_tokens` below which a lane does
/// not run (its requests would be all overhead).
pub(crate) const MIN_SHARD_TOKENS: u64 = 256;

/// The JSON-escaped size of each sized file's whole patch (`None`: the `diff` tool cuts
/// it, so it is never given whole), computed once per review and shared by its lanes.
pub(super) type PatchSizes = std::collections::BTreeMap<String, Option<usize>>;

/// A lane instance as shards.
pub(super) struct LaneShards {
    /// The shard plans, in order (one plan, the lane's own label, when it fits).
    pub(crate) plans: Vec<StagePlan>,
    /// Files left out because the lane reached `max_shards`, in canonical order.
    pub(crate) left_out: Vec<String>,
    /// Why the lane cannot run within its request bound, if it cannot.
    pub(crate) problem: Option<String>,
}

/// What a stage's largest request carries besides its shard's change-specific content,
/// in estimated tokens.
#[derive(Debug, Clone, Copy)]
struct Stable {
    /// System and role prompt, policy evidence, tools section and tool definitions (when
    /// offered), the output contract (in the message and as `response_format`) and the
    /// fixed text of the expected-files and coverage-retry sections.
    fixed: u64,
    /// The previous answer a coverage retry shows back, at its contract's bound (at most
    /// the output cap): what [`vouch_core::shard_room`] may cut.
    answer: u64,
}

impl Stable {
    /// The least a request carries besides its content: the answer at its least room.
    fn least(self) -> u64 {
        self.fixed + self.answer.min(vouch_core::MIN_RETRY_ANSWER_TOKENS)
    }
}

/// The stable part of `plan`'s requests (see [`Stable`]), with the tool definitions
/// only when the stage is offered `tools`.
fn stable_tokens(env: &ReviewEnv, plan: &StagePlan, tools: bool) -> Result<Stable, String> {
    let empty = StagePlan {
        assigned: vec![],
        ..plan.clone()
    };
    let handle = &plan.handle;
    let prompt = handle
        .render_prompt(&prompt_request(env, &empty))
        .map_err(|e| e.to_string())?;
    // The contract without the shard's paths: what a receipt adds per file is in
    // [`fixed_tokens`], so the stable part does not grow with the lane's assignment.
    let schema = fitted_contract(&env.memo.fitted_caps, &empty)
        .map_err(|e| e.to_string())?
        .schema;
    let mut bytes = json_text_len(&prompt.system)
        + json_text_len(&prompt.user)
        + json_text_len(&tools_section(0, 0, 0))
        + json_text_len(&expected_files_section(&[]))
        + json_text_len(&output_contract_section(&schema))
        + json_value_len(&schema)
        + json_text_len(&truncation_notice(
            plan.budget.max_output_tokens_per_request,
        ))
        + json_text_len(FORCED_SYNTHESIS)
        + json_text_len(ANSWER_REMINDER)
        + json_text_len(&split_files_section(&[]))
        + json_text_len(&coverage_retry_message(
            &[],
            // The longest reason a retry can give, with the note of an answer shown cut
            // (the answer itself is [`Stable::answer`]).
            PreviousAnswer::Downgraded {
                reply: "-",
                problem: vouch_core::ReceiptProblem::NoPriorReceipt,
            },
            &CoverageComparison {
                complete: false,
                reported_incomplete: true,
                missing_files: vec![],
                unexpected_files: vec![],
            },
            &RetrySource::Tools,
            0,
        ))
        + 1_024;
    if tools {
        bytes += json_value_len(&RepoTools::new(env.services.reader.clone()).specs());
    }
    // The previous answer without its receipt paths, at its contract's bound in
    // characters (`token_bound` counts one per character; the fitted contract keeps it
    // within the output budget), is shown pretty-printed inside a JSON string: count its
    // characters twice.
    let answer = token_bound(&schema).min(u64::from(plan.budget.max_output_tokens_per_request));
    let answer = usize::try_from(2 * answer).unwrap_or(usize::MAX);
    Ok(Stable {
        fixed: estimate_tokens(bytes),
        answer: estimate_tokens(answer),
    })
}

/// What `file` adds to any shard holding it besides its patch: its change-summary line
/// and its entries in the expected list, the retry's missing and expected lists, the
/// previous receipt and the split-files list.
fn fixed_tokens(file: &ChangedFile) -> u64 {
    let path = json_text_len(&file.path) + 1;
    let summary = 2 * file.path.len()
        + file.previous_path.as_ref().map_or(0, |p| p.len())
        + 80
        + 24 * file
            .hunks
            .len()
            .min(vouch_specialist_kit::render::MAX_HUNKS_SHOWN);
    estimate_tokens(summary + 5 * path)
}

/// Bytes a piece's block adds besides its lines (tags, header, the line-range note).
const PIECE_OVERHEAD_BYTES: usize = 200;

/// Rule (issue 28, "every changed line reachable without tools"): `file`'s hunks as the
/// pieces a shard can be given inline, with their estimated tokens. A hunk whose
/// numbered lines (head lines, and the base lines it replaces) fit `window_tokens` is
/// one piece; a larger one is cut into windows of consecutive lines of each side, each
/// within `window_tokens` (a single line larger than that is a window of its own), so
/// every changed line is shown in some shard. Lines are costed from their lengths at
/// both sides; a line the text does not have (an unreadable side) counts as 80 bytes.
fn file_pieces(env: &ReviewEnv, file: &ChangedFile, window_tokens: u64) -> Vec<(HunkPiece, u64)> {
    // Every line is costed from its real length, in a file of any size: a piece planned
    // to fit a shard is given inline whole, with tools or without (a long line by the
    // bytes that changed: see `side_pieces`).
    let lengths = |revision, path: &str| -> Vec<vouch_git::LineLength> {
        env.services
            .reader
            .line_lengths(revision, path)
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let head = lengths(Revision::Head, &file.path);
    let base = lengths(
        Revision::Base,
        file.previous_path.as_deref().unwrap_or(&file.path),
    );
    // A line as a numbered line of a read, and whether it is long; a line the text does
    // not have (an unreadable side) counts as 80 bytes.
    let line_size = |lines: &[vouch_git::LineLength], n: u32| -> LineSize {
        lines
            .get((n.max(1) - 1) as usize)
            .map_or(LineSize::UNREADABLE, |&length| LineSize {
                cost: line_cost(length.shown as usize),
                length,
            })
    };
    let window_bytes = usize::try_from(window_tokens * vouch_core::BYTES_PER_TOKEN)
        .unwrap_or(usize::MAX)
        .saturating_sub(PIECE_OVERHEAD_BYTES)
        .max(1);
    let mut out = Vec::new();
    for (index, hunk) in file.hunks.iter().enumerate() {
        let whole = HunkPiece::whole(index, hunk);
        let sizes: Vec<Vec<LineSize>> = whole
            .sides
            .iter()
            .map(|&(revision, first, last)| {
                let lines = if revision == Revision::Head {
                    &head
                } else {
                    &base
                };
                (first..=last).map(|n| line_size(lines, n)).collect()
            })
            .collect();
        let total: usize = sizes.iter().flatten().map(|s| s.cost).sum();
        if total <= window_bytes {
            out.push((whole, estimate_tokens(total + PIECE_OVERHEAD_BYTES)));
            continue;
        }
        for (&(revision, first, _), sizes) in whole.sides.iter().zip(&sizes) {
            // A long line is given by the bytes that changed, with tools as without: a
            // model reading it in `read_file` byte windows from its start would need
            // hundreds of calls for a minified bundle.
            let long: Vec<&LongLineChange> = file
                .long_lines
                .iter()
                .filter(|l| l.revision == revision)
                .collect();
            out.extend(side_pieces(
                index,
                (revision, first),
                sizes,
                (&long, file.path.len()),
                window_bytes,
            ));
        }
    }
    out
}

/// A line's size for the planner: what it costs as a numbered line of a read, and its
/// length in bytes and shown.
#[derive(Debug, Clone, Copy)]
struct LineSize {
    cost: usize,
    length: vouch_git::LineLength,
}

impl LineSize {
    /// A line the text does not have (an unreadable side): 80 bytes.
    const UNREADABLE: LineSize = LineSize {
        cost: 80,
        length: vouch_git::LineLength {
            bytes: 80,
            shown: 80,
        },
    };

    /// Whether the line is long: shown in [`LONG_LINE_BYTES`] or more, the snapshot's
    /// measure ([`vouch_core::is_long_line`]).
    fn long(&self) -> bool {
        self.length.shown >= LONG_LINE_BYTES
    }
}

/// What a line of `shown` bytes costs as a numbered line of a read: its number and bar,
/// its escaped newline and a CRLF mark ([`vouch_core::CR_MARK`], 3 bytes) within the
/// 12, and an eighth more for JSON escapes.
fn line_cost(shown: usize) -> usize {
    shown + shown / 8 + 12
}

/// One side of a hunk as pieces, in order: its runs of ordinary lines in line windows
/// ([`windows`]); each line the snapshot names (`long`: [`vouch_core::is_named_line`])
/// that is long or that no window of `cap` holds whole as byte windows of the bytes that
/// changed ([`byte_windows`]); and each shorter line no window of `cap` holds (a budget
/// far below the derived ones) as byte windows of all its bytes. Both sides of a
/// rewritten named line are named (text removed from inside it is shown only at base); a
/// line shown in [`LONG_LINE_BYTES`] or more that `long` does not name is left out: no
/// read shows it whole.
fn side_pieces(
    hunk: usize,
    (revision, first): (Revision, u32),
    sizes: &[LineSize],
    (long, path_len): (&[&LongLineChange], usize),
    cap: usize,
) -> Vec<(HunkPiece, u64)> {
    let mut out = Vec::new();
    let mut run = 0usize;
    for i in 0..=sizes.len() {
        let line = first + u32::try_from(i).unwrap_or(u32::MAX);
        // A line that a window holds whole is an ordinary line of the run.
        let every_byte;
        let long_line = match long.iter().find(|l| l.line == line) {
            _ if i == sizes.len() || !(sizes[i].long() || sizes[i].cost > cap) => None,
            Some(named) => Some(*named),
            None if sizes[i].long() => None,
            None => {
                every_byte = whole_line(revision, line, sizes[i].length);
                Some(&every_byte)
            }
        };
        let unread = i < sizes.len() && long_line.is_none() && sizes[i].long();
        if i == sizes.len() || long_line.is_some() || unread {
            let start = first + u32::try_from(run).unwrap_or(u32::MAX);
            let costs: Vec<usize> = sizes[run..i].iter().map(|s| s.cost).collect();
            out.extend(windows(hunk, revision, start, &costs, cap));
            run = i + 1;
        }
        if let Some(l) = long_line {
            let length = sizes[i].length;
            out.extend(byte_windows(hunk, revision, (l, length), cap, path_len));
        }
    }
    out
}

/// A line no window holds, as if all its bytes changed: its byte windows show it whole.
fn whole_line(revision: Revision, line: u32, length: vouch_git::LineLength) -> LongLineChange {
    LongLineChange {
        revision,
        line,
        len: length.bytes,
        changed: vec![(0, length.bytes)],
    }
}

/// Bytes of context given around each changed range of a long line.
const LONG_LINE_CONTEXT_BYTES: u32 = 256;

/// Bytes a byte window's block adds besides its bytes and twice its path (named by the
/// `<line …>` tag and by the read's header): the rest of both, the read's cut note and
/// the closing tag.
const BYTE_WINDOW_OVERHEAD_BYTES: usize = 320;

/// Rule (issue 28, "the same holds for a file of one huge line"): the changed byte
/// ranges of a long line, each with [`LONG_LINE_CONTEXT_BYTES`] around it, cut into byte
/// windows that fit `cap` bytes with their block's overhead and room for JSON escapes
/// (an eighth, as for lines), and at most what one read shows, so every changed byte is
/// given in some shard; each costed as its block will be. A line shown longer than its
/// bytes (bytes that are not UTF-8, each shown as a 4-byte escape) gets windows of fewer
/// bytes, in proportion.
fn byte_windows(
    hunk: usize,
    revision: Revision,
    (long, length): (&LongLineChange, vouch_git::LineLength),
    cap: usize,
    path_len: usize,
) -> Vec<(HunkPiece, u64)> {
    let overhead = BYTE_WINDOW_OVERHEAD_BYTES + 2 * path_len;
    let fits =
        (cap.saturating_sub(overhead) * 8 / 9).clamp(64, vouch_git::reader::MAX_LINE_WINDOW_BYTES);
    // Bytes of the line per window: what fits shown, times the line's bytes per byte
    // shown (at most one).
    let (bytes, shown) = (length.bytes.max(1) as usize, length.shown.max(1) as usize);
    let shown = shown.max(bytes);
    let width = u32::try_from((fits * bytes / shown).max(16)).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    for &(start, end) in &long.changed {
        let start = start.saturating_sub(LONG_LINE_CONTEXT_BYTES);
        let end = end
            .saturating_add(LONG_LINE_CONTEXT_BYTES)
            .min(long.len)
            .max(start + 1);
        let mut from = start;
        while from < end {
            let to = from.saturating_add(width).min(end);
            let window_shown = (to - from) as usize * shown / bytes;
            out.push((
                HunkPiece {
                    hunk,
                    sides: vec![(revision, long.line, long.line)],
                    window: true,
                    bytes: Some((from, to)),
                },
                estimate_tokens(window_shown + window_shown / 8 + overhead),
            ));
            from = to;
        }
    }
    out
}

/// Consecutive lines from `first` (their byte costs `sizes`) cut greedily into windows
/// of at most `cap` bytes each (a line larger than `cap` alone), with their tokens.
fn windows(
    hunk: usize,
    revision: Revision,
    first: u32,
    sizes: &[usize],
    cap: usize,
) -> Vec<(HunkPiece, u64)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut used = 0usize;
    let piece = |from: usize, to: usize, used: usize| {
        let line = |i: usize| first + u32::try_from(i).unwrap_or(u32::MAX);
        (
            HunkPiece {
                hunk,
                sides: vec![(revision, line(from), line(to - 1))],
                window: true,
                bytes: None,
            },
            estimate_tokens(used + PIECE_OVERHEAD_BYTES),
        )
    };
    for (i, &size) in sizes.iter().enumerate() {
        if i > start && used + size > cap {
            out.push(piece(start, i, used));
            start = i;
            used = 0;
        }
        used += size;
    }
    if start < sizes.len() {
        out.push(piece(start, sizes.len(), used));
    }
    out
}

/// The cost of `path` for the shard planner, and its pieces ([`file_pieces`]) when it
/// does not fit `cap` whole; its patch is computed (and its size kept, not its text). A
/// patch the `diff` tool cuts at its own bound cannot be given whole.
fn file_cost(
    env: &ReviewEnv,
    path: &str,
    cap: u64,
    sizes: &mut PatchSizes,
) -> (FileCost, Vec<HunkPiece>) {
    let Some(file) = env.inputs.snapshot.file(path) else {
        let cost = FileCost {
            path: path.to_string(),
            fixed: estimate_tokens(4 * json_text_len(path)),
            whole: 0,
            pieces: vec![],
        };
        return (cost, vec![]);
    };
    let patch =
        sizes
            .entry(path.to_string())
            .or_insert_with(|| match env.services.reader.diff(path) {
                // A patch shows a long line cut at its start (recorded as a span): such a
                // file is given in pieces, its long lines as byte windows of what changed.
                Ok(d) if !d.truncated && d.spans.is_empty() => Some(json_text_len(&d.text)),
                _ => None,
            });
    let whole = match *patch {
        Some(bytes) => estimate_tokens(bytes + 40),
        // Never given whole: split by hunks (or, without hunks, named as not given).
        _ => u64::MAX / 4,
    };
    let fixed = fixed_tokens(file);
    let (pieces, costs) = if fixed + whole > cap {
        file_pieces(env, file, cap.saturating_sub(fixed).max(1))
            .into_iter()
            .unzip()
    } else {
        (vec![], vec![])
    };
    let cost = FileCost {
        path: path.to_string(),
        fixed,
        whole,
        pieces: costs,
    };
    (cost, pieces)
}

/// A shard's budget, its prefetch tokens and the bytes a coverage retry shows of the
/// previous answer.
struct ShardSizes {
    budget: ShardBudget,
    prefetch_tokens: u32,
    retry_answer_bytes: usize,
}

/// Rule (issue 10, "Sharding" and "Prompt economy"): a shard's budget within the room
/// `max_request_tokens` leaves after the fixed stable part of the stage's largest request
/// (estimated at [`vouch_core::BYTES_PER_TOKEN`] bytes per token): its change content,
/// the retry's view of the previous answer and the prefetch by
/// [`vouch_core::shard_room`], and its receipt within half the output cap, leaving the
/// other half for candidates and the summary.
fn shard_budget(env: &ReviewEnv, plan: &StagePlan) -> Result<ShardSizes, String> {
    let limits = plan.shards;
    let stable = stable_tokens(env, plan, env.tools_enabled())?;
    let bound = u64::from(limits.max_request_tokens);
    let free = bound.saturating_sub(stable.least());
    if free < MIN_SHARD_TOKENS {
        return Err(no_room(plan, stable.least(), free));
    }
    let room = bound.saturating_sub(stable.fixed);
    let parts = vouch_core::shard_room(
        room,
        u64::from(limits.max_shard_tokens),
        stable.answer,
        u64::from(plan.prefetch_tokens),
    );
    let budget = ShardBudget {
        max_tokens: parts.content.max(1),
        max_receipt_tokens: u64::from(plan.budget.max_output_tokens_per_request) / 2,
        max_shards: limits.max_shards.max(1) as usize,
    };
    Ok(ShardSizes {
        budget,
        prefetch_tokens: u32::try_from(parts.prefetch).unwrap_or(u32::MAX),
        retry_answer_bytes: usize::try_from(parts.retry_answer * vouch_core::BYTES_PER_TOKEN)
            .unwrap_or(usize::MAX),
    })
}

/// The tokens `plan`'s request bound leaves for its change after the stable part, with
/// the tool definitions when `tools` (and the previous answer at its least room: see
/// [`shard_budget`]); `None` when the stage's prompt cannot be rendered (its own run
/// reports why).
pub(super) fn content_room(env: &ReviewEnv, plan: &StagePlan, tools: bool) -> Option<u64> {
    let stable = stable_tokens(env, plan, tools).ok()?;
    Some(u64::from(plan.shards.max_request_tokens).saturating_sub(stable.least()))
}

/// Why a lane cannot run (see [`shard_budget`]), with the fixes that can work: whatever
/// the window, `max_request_tokens` plus `max_output_tokens` must fit it, so raising the
/// request bound is no fix at a window's limit. A smaller reply shrinks the stable part
/// (a retry shows the previous answer at its bound) and leaves a derived request bound
/// more room; tools off drops the tool definitions; `manifests/local-model.toml` does
/// both; a larger window raises every bound.
fn no_room(plan: &StagePlan, stable: u64, room: u64) -> String {
    format!(
        "{} did not run: the stable part of its requests (about {stable} tokens: prompts, \
         policy evidence, tool definitions, the output contract and a retry's previous \
         answer) leaves {room} tokens for the change under max_request_tokens ({}), so \
         the review cannot complete. Fixes that can work: a smaller max_output_tokens \
         (now {}), `--tools off`, the composition manifests/local-model.toml, or a model \
         with a larger context window",
        plan.lane, plan.shards.max_request_tokens, plan.budget.max_output_tokens_per_request
    )
}

/// The stage plans of `plan`'s shards: one per shard, its expected list the canonical
/// list restricted to the shard, labelled `label [shard k/n]` when there is more than
/// one (the label alone otherwise).
fn plans(
    plan: &StagePlan,
    shards: &ShardPlan,
    pieces: &HashMap<String, Vec<HunkPiece>>,
    sizes: &ShardSizes,
) -> Vec<StagePlan> {
    let budget = &sizes.budget;
    let inline_bytes = plan.inline_bytes.min(
        usize::try_from(budget.max_tokens * vouch_core::BYTES_PER_TOKEN).unwrap_or(usize::MAX),
    );
    let n = shards.shards.len();
    // The lane's own lists stay out of the template: cloning them per shard would cost
    // the lane's files times its shards.
    let template = StagePlan {
        assigned: Vec::new(),
        split: Vec::new(),
        ..plan.clone()
    };
    let lists: Vec<Vec<String>> = shards.shards.iter().map(|s| s.paths()).collect();
    let receipt_bound = vouch_core::lane_receipt_bound(&lists, budget.max_receipt_tokens);
    shards
        .shards
        .iter()
        .zip(lists)
        .enumerate()
        .map(|(k, (shard, assigned))| StagePlan {
            label: if n > 1 {
                format!("{} [shard {}/{n}]", plan.lane, k + 1)
            } else {
                plan.lane.clone()
            },
            assigned,
            split: shard
                .entries
                .iter()
                .filter_map(|e| match &e.part {
                    FilePart::Whole => None,
                    FilePart::Pieces(r) => Some((
                        e.path.clone(),
                        pieces
                            .get(&e.path)
                            .and_then(|p| p.get(r.clone()))
                            .unwrap_or_default()
                            .to_vec(),
                    )),
                })
                .collect(),
            inline_bytes,
            prefetch_tokens: sizes.prefetch_tokens,
            retry_answer_bytes: sizes.retry_answer_bytes,
            receipt_bound,
            ..template.clone()
        })
        .collect()
}

/// Splits a lane instance into shards (see [`shard_budget`] and
/// [`vouch_core::plan_shards`]).
pub(super) fn shard_lane(env: &ReviewEnv, plan: StagePlan, sizes: &mut PatchSizes) -> LaneShards {
    let sizes_of_shards = match shard_budget(env, &plan) {
        Ok(b) => b,
        Err(problem) => {
            return LaneShards {
                plans: vec![],
                left_out: vec![],
                problem: Some(problem),
            };
        }
    };
    let mut costs: Vec<FileCost> = Vec::with_capacity(plan.assigned.len());
    let mut pieces: HashMap<String, Vec<HunkPiece>> = HashMap::new();
    for path in &plan.assigned {
        // Sizing computes each patch: a cancelled review stops here, and the lane runs
        // as one plan that the cancellation then ends before it starts.
        if env.services.cancel.is_cancelled() {
            return LaneShards {
                plans: vec![plan],
                left_out: vec![],
                problem: None,
            };
        }
        let (cost, split) = file_cost(env, path, sizes_of_shards.budget.max_tokens, sizes);
        if !split.is_empty() {
            pieces.insert(path.clone(), split);
        }
        costs.push(cost);
    }
    let shards = plan_shards(&costs, sizes_of_shards.budget);
    LaneShards {
        plans: plans(&plan, &shards, &pieces, &sizes_of_shards),
        left_out: shards.left_out,
        problem: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(piece: &(HunkPiece, u64)) -> (u32, u32) {
        let (_, first, last) = piece.0.sides[0];
        (first, last)
    }

    /// Windows are consecutive, cover every line once, and stay within the cap (a line
    /// over it alone).
    #[test]
    fn a_side_is_cut_into_consecutive_windows_within_the_cap() {
        // (line sizes, cap, windows as first..=last line)
        type Case<'a> = (&'a [usize], usize, &'a [(u32, u32)]);
        let cases: &[Case] = &[
            (&[10, 10, 10], 30, &[(5, 7)]),
            (&[10, 10, 10], 20, &[(5, 6), (7, 7)]),
            (&[10, 50, 10], 20, &[(5, 5), (6, 6), (7, 7)]),
            (&[5; 10], 12, &[(5, 6), (7, 8), (9, 10), (11, 12), (13, 14)]),
            (&[], 12, &[]),
        ];
        for (sizes, cap, want) in cases {
            let got = windows(3, Revision::Head, 5, sizes, *cap);
            let got: Vec<(u32, u32)> = got.iter().map(lines).collect();
            assert_eq!(&got, want, "{sizes:?} within {cap}");
        }
        let pieces = windows(3, Revision::Base, 1, &[10, 10], 10);
        assert!(pieces.iter().all(|(p, _)| p.window && p.hunk == 3));
        assert!(pieces.iter().all(|(p, _)| p.sides[0].0 == Revision::Base));
    }

    /// A line of `shown` bytes, of which `dense` are shown as `\xNN` escapes.
    fn line_size(shown: u32, dense: bool) -> LineSize {
        let bytes = if dense { shown.div_ceil(4) } else { shown };
        let length = vouch_git::LineLength { bytes, shown };
        LineSize {
            cost: line_cost(shown as usize),
            length,
        }
    }

    proptest::proptest! {
        /// Rule (every changed line reachable): for any line lengths (around the named-
        /// and long-line sizes, and lines of bytes shown as escapes) and any cap, a line
        /// the snapshot names that is long or that no window of the cap holds has every
        /// changed byte in some byte window and is in no line window; a shorter line no
        /// window holds has every byte in some byte window; every other line is in
        /// exactly one line window.
        #[test]
        fn every_line_of_a_side_is_in_some_piece(
            lines in proptest::collection::vec(
                (
                    proptest::prop_oneof![1u32..200, 300u32..1024, 900u32..7000, 7000u32..9500, 9500u32..40_000],
                    proptest::bool::ANY,
                ),
                1..12,
            ),
            edits in proptest::collection::vec((0u32..40_000, 1u32..600), 1..4),
            cap in 600usize..20_000,
        ) {
            let first = 10;
            let sizes: Vec<LineSize> = lines.iter().map(|&(s, d)| line_size(s, d)).collect();
            let named: Vec<LongLineChange> = sizes
                .iter()
                .enumerate()
                // Named as the snapshot names them: shown in the named-line size or more.
                .filter(|(_, s)| s.length.shown >= vouch_core::NAMED_LINE_BYTES)
                .map(|(i, s)| {
                    let len = s.length.bytes;
                    let mut changed: Vec<(u32, u32)> = edits
                        .iter()
                        .map(|&(at, n)| (at % len, (at % len + n).min(len)))
                        .collect();
                    changed.sort_unstable();
                    changed.dedup();
                    LongLineChange { revision: Revision::Head, line: first + i as u32, len, changed }
                })
                .collect();
            let long: Vec<&LongLineChange> = named.iter().collect();
            let pieces = side_pieces(0, (Revision::Head, first), &sizes, (&long, 8), cap);
            // A byte window, costed by what it shows, fits the cap.
            for (piece, tokens) in &pieces {
                if piece.bytes.is_some() {
                    proptest::prop_assert!(*tokens <= estimate_tokens(cap) + 1, "{:?}: {}", piece, tokens);
                }
            }
            for (i, size) in sizes.iter().enumerate() {
                let n = first + i as u32;
                let windows = pieces
                    .iter()
                    .filter(|(p, _)| p.bytes.is_none() && p.sides[0].1 <= n && n <= p.sides[0].2)
                    .count();
                let is_named = size.length.shown >= vouch_core::NAMED_LINE_BYTES;
                if !(size.long() || size.cost > cap) {
                    proptest::prop_assert_eq!(windows, 1, "line {} ({:?})", n, size.length);
                    continue;
                }
                proptest::prop_assert_eq!(windows, 0, "line {} by bytes in a line window", n);
                let change = match named.iter().find(|l| l.line == n) {
                    Some(change) => change.clone(),
                    // Shorter than the named-line size: every byte, as if all changed.
                    None => LongLineChange { revision: Revision::Head, line: n, len: size.length.bytes, changed: vec![(0, size.length.bytes)] },
                };
                proptest::prop_assert!(is_named || !size.long());
                for &(start, end) in &change.changed {
                    for b in start..end {
                        let shown = pieces.iter().any(|(p, _)| {
                            p.sides[0].1 == n && p.bytes.is_some_and(|(s, e)| s <= b && b < e)
                        });
                        proptest::prop_assert!(shown, "byte {} of line {}", b, n);
                    }
                }
            }
        }
    }
}
