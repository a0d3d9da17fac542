//! The plan of one stage instance or shard: its specialist, assigned files, budgets and
//! the hunk pieces it is given inline.

use vouch_core::{Hunk, Revision};
use vouch_llm::Budget;

use crate::registry::SpecialistHandle;

/// One planned stage instance (or one shard of it).
#[derive(Clone)]
pub(crate) struct StagePlan {
    /// Stable label (e.g. `bug-review #2`, or `bug-review #2 [shard 3/7]` for a shard).
    pub(crate) label: String,
    /// The label of its lane instance (equal to `label` unless it is a shard).
    pub(crate) lane: String,
    /// The specialist.
    pub(crate) handle: SpecialistHandle,
    /// Its assigned canonical files (sorted, unique, current paths).
    pub(crate) assigned: Vec<String>,
    /// Agent budget.
    pub(crate) budget: Budget,
    /// Estimated tokens of context prefetched from the repository graph (0: none).
    pub(crate) prefetch_tokens: u32,
    /// The specialist's own model, if it names one.
    pub(crate) model: Option<String>,
    /// Shard limits of its lane.
    pub(crate) shards: ShardLimits,
    /// Files this shard holds only in part: the pieces of their hunks it is given (a
    /// file too large for one shard, split by hunks and, within a hunk too large for a
    /// shard, by line windows). Every other assigned file is given whole.
    pub(crate) split: Vec<(String, Vec<HunkPiece>)>,
    /// Most bytes of source given inline to this execution: its shard's budget, lowered
    /// by `VOUCH_INLINE_BYTES` when that is set.
    pub(crate) inline_bytes: usize,
    /// Most bytes (JSON-escaped) a coverage retry shows of the previous answer: what its
    /// shard left for it ([`vouch_core::shard_room`]); a longer answer is shown cut.
    pub(crate) retry_answer_bytes: usize,
    /// The receipt bound its contract is asked with when it is one of several shards of a
    /// lane ([`vouch_core::lane_receipt_bound`]); `None`: its own list's.
    pub(crate) receipt_bound: Option<vouch_abi::ReceiptBound>,
}

/// The shard limits of a lane instance (manifest `[budget]` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShardLimits {
    /// `max_shard_tokens`.
    pub(crate) max_shard_tokens: u32,
    /// `max_shards`.
    pub(crate) max_shards: u32,
    /// `max_request_tokens`.
    pub(crate) max_request_tokens: u32,
}

impl Default for ShardLimits {
    fn default() -> Self {
        let b = crate::manifest::Budget::default();
        ShardLimits {
            max_shard_tokens: b.max_shard_tokens,
            max_shards: b.max_shards,
            max_request_tokens: b.max_request_tokens,
        }
    }
}

/// One piece of a changed file's hunk that a shard is given inline, as numbered lines:
/// the whole hunk (its head lines and the base lines it replaces), or — for a hunk too
/// large for one shard — a window of consecutive lines of one of its sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HunkPiece {
    /// Index of the hunk in the file's hunks.
    pub(crate) hunk: usize,
    /// The sides and lines given: `(revision, first, last)`, head first.
    pub(crate) sides: Vec<(Revision, u32, u32)>,
    /// True when it is a window of a larger hunk (the block says which lines of it).
    pub(crate) window: bool,
    /// For a window of one long line (`sides` names that one line): the bytes
    /// `[start, end)` of it given, a part of the bytes that changed.
    pub(crate) bytes: Option<(u32, u32)>,
}

impl HunkPiece {
    /// The whole of hunk `index`: its head lines and the base lines it replaces.
    pub(super) fn whole(index: usize, hunk: &Hunk) -> HunkPiece {
        let side = |revision, start: u32, count: u32| {
            (count > 0).then(|| (revision, start, start + count - 1))
        };
        HunkPiece {
            hunk: index,
            sides: [
                side(Revision::Head, hunk.new_start, hunk.new_lines),
                side(Revision::Base, hunk.old_start, hunk.old_lines),
            ]
            .into_iter()
            .flatten()
            .collect(),
            window: false,
            bytes: None,
        }
    }

    /// The part of `hunk` this piece must have shown for its lines to count as seen: the
    /// hunk itself when whole, else a hunk of just this window's lines on its side.
    /// `None` for a byte window of a long line: one shard shows only part of the line's
    /// changed bytes, and the lane's shards are judged together
    /// ([`vouch_core::files_reviewed`]).
    pub(super) fn held(&self, hunk: &Hunk) -> Option<Hunk> {
        if self.bytes.is_some() {
            return None;
        }
        Some(match (self.window, self.sides.first()) {
            (true, Some(&(revision, first, last))) => {
                let (start, count) = (first, last + 1 - first);
                let (new_start, new_lines, old_start, old_lines) = match revision {
                    Revision::Head => (start, count, hunk.old_start, 0),
                    Revision::Base => (hunk.new_start, 0, start, count),
                };
                Hunk {
                    new_start,
                    new_lines,
                    old_start,
                    old_lines,
                    ..hunk.clone()
                }
            }
            _ => hunk.clone(),
        })
    }
}
