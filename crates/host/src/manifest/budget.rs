//! Stage budgets: the limits every agent loop runs under, whether or not the user set
//! any (design, "Model access notes": every agent loop has default budgets).

use serde::Deserialize;

use super::error::{ErrorKind, ManifestError, Reporter};
use super::locate::KeyPath;

/// The limits of one stage instance. All counts are per instance execution (a coverage
/// retry is a new execution with the same budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Model turns (requests) in the agent loop, including the final answer.
    pub max_turns: u32,
    /// Repository tool calls across all turns.
    pub max_tool_calls: u32,
    /// `max_tokens` of one model reply, in tokens.
    pub max_output_tokens: u32,
    /// Prompt plus completion tokens across all turns, in tokens.
    pub max_total_tokens: u32,
    /// Change-specific input of one shard (inline patches, file lines, expected-list
    /// entries), in estimated tokens: a lane whose files need more runs as shards.
    pub max_shard_tokens: u32,
    /// Most shards one lane instance runs as; files past them are left out and named.
    pub max_shards: u32,
    /// Largest request the host assembles for one stage execution (first ask, coverage
    /// retry, re-ask, repair), in estimated tokens; shards are sized so none exceeds it.
    pub max_request_tokens: u32,
    /// Estimated tokens of context the host prefetches from the repository graph before
    /// the first turn (0: none).
    pub prefetch_tokens: u32,
}

/// Default [`Budget::max_shard_tokens`]: 4,000 estimated tokens, the default inline
/// patch budget (`VOUCH_INLINE_BYTES` 12,000 bytes at three bytes per token).
pub const DEFAULT_MAX_SHARD_TOKENS: u32 = 4_000;
/// Default [`Budget::max_shards`].
pub const DEFAULT_MAX_SHARDS: u32 = 2048;
/// Default [`Budget::max_request_tokens`]: a 32k-token context less the default
/// 8,192-token answer.
pub const DEFAULT_MAX_REQUEST_TOKENS: u32 = 24_000;

impl Default for Budget {
    /// 12 turns, 24 tool calls, 8,192 output tokens per reply, 60,000 tokens in total;
    /// shards of 4,000 tokens, at most 2,048 per lane, requests of at most 24,000 tokens;
    /// 6,000 tokens of prefetched context.
    fn default() -> Self {
        Self {
            max_turns: 12,
            max_tool_calls: 24,
            max_output_tokens: 8192,
            max_total_tokens: 60_000,
            max_shard_tokens: DEFAULT_MAX_SHARD_TOKENS,
            max_shards: DEFAULT_MAX_SHARDS,
            max_request_tokens: DEFAULT_MAX_REQUEST_TOKENS,
            prefetch_tokens: 6_000,
        }
    }
}

impl Budget {
    /// This budget with every key `over` sets replaced.
    pub fn with(self, over: &BudgetOverride) -> Budget {
        Budget {
            max_turns: over.max_turns.unwrap_or(self.max_turns),
            max_tool_calls: over.max_tool_calls.unwrap_or(self.max_tool_calls),
            max_output_tokens: over.max_output_tokens.unwrap_or(self.max_output_tokens),
            max_total_tokens: over.max_total_tokens.unwrap_or(self.max_total_tokens),
            max_shard_tokens: over.max_shard_tokens.unwrap_or(self.max_shard_tokens),
            max_shards: over.max_shards.unwrap_or(self.max_shards),
            max_request_tokens: over.max_request_tokens.unwrap_or(self.max_request_tokens),
            prefetch_tokens: over.prefetch_tokens.unwrap_or(self.prefetch_tokens),
        }
    }

    /// This budget lowered to every key `cap` sets (never raised): how the repository
    /// file's budgets apply to the user's.
    pub fn capped_by(self, cap: &BudgetOverride) -> Budget {
        let min = |mine: u32, theirs: Option<u32>| theirs.map_or(mine, |t| t.min(mine));
        Budget {
            max_turns: min(self.max_turns, cap.max_turns),
            max_tool_calls: min(self.max_tool_calls, cap.max_tool_calls),
            max_output_tokens: min(self.max_output_tokens, cap.max_output_tokens),
            max_total_tokens: min(self.max_total_tokens, cap.max_total_tokens),
            max_shard_tokens: min(self.max_shard_tokens, cap.max_shard_tokens),
            max_shards: min(self.max_shards, cap.max_shards),
            max_request_tokens: min(self.max_request_tokens, cap.max_request_tokens),
            prefetch_tokens: min(self.prefetch_tokens, cap.prefetch_tokens),
        }
    }
}

/// A `[budget]` / `[specialist.budget]` table: every key optional, unset keys inherit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetOverride {
    /// See [`Budget::max_turns`].
    pub max_turns: Option<u32>,
    /// See [`Budget::max_tool_calls`].
    pub max_tool_calls: Option<u32>,
    /// See [`Budget::max_output_tokens`].
    pub max_output_tokens: Option<u32>,
    /// See [`Budget::max_total_tokens`].
    pub max_total_tokens: Option<u32>,
    /// See [`Budget::max_shard_tokens`].
    pub max_shard_tokens: Option<u32>,
    /// See [`Budget::max_shards`].
    pub max_shards: Option<u32>,
    /// See [`Budget::max_request_tokens`].
    pub max_request_tokens: Option<u32>,
    /// See [`Budget::prefetch_tokens`] (0 is allowed: no prefetch).
    pub prefetch_tokens: Option<u32>,
}

impl BudgetOverride {
    /// Rejects zero values (a stage with no turns cannot run) at `path`;
    /// `prefetch_tokens` may be 0 (no prefetch).
    pub(crate) fn check(
        &self,
        reporter: &Reporter<'_>,
        path: &KeyPath,
    ) -> Result<(), ManifestError> {
        let keys = [
            ("max_turns", self.max_turns),
            ("max_tool_calls", self.max_tool_calls),
            ("max_output_tokens", self.max_output_tokens),
            ("max_total_tokens", self.max_total_tokens),
            ("max_shard_tokens", self.max_shard_tokens),
            ("max_shards", self.max_shards),
            ("max_request_tokens", self.max_request_tokens),
        ];
        for (key, value) in keys {
            if value == Some(0) {
                return Err(reporter.at(
                    ErrorKind::BadBudget,
                    &path.key(key),
                    false,
                    format!("`{key}` is 0, so the stage could never run"),
                    "use a positive number, or remove the key to inherit the default",
                ));
            }
        }
        Ok(())
    }
}

/// Rejects an effective budget whose reply limit exceeds its total limit, or whose
/// prefetch and reply limits together do, pointing at `path` (the table that made it so).
pub(crate) fn check_effective(
    budget: Budget,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    if budget.max_output_tokens > budget.max_total_tokens {
        return Err(reporter.at(
            ErrorKind::BadBudget,
            path,
            true,
            format!(
                "max_output_tokens ({}) is larger than max_total_tokens ({})",
                budget.max_output_tokens, budget.max_total_tokens
            ),
            "lower max_output_tokens or raise max_total_tokens",
        ));
    }
    if budget.max_shard_tokens.saturating_mul(2) > budget.max_request_tokens {
        return Err(reporter.at(
            ErrorKind::BadBudget,
            path,
            true,
            format!(
                "max_shard_tokens ({}) is more than half of max_request_tokens ({}), leaving too little room for the stable prompt, tool reads and a coverage retry",
                budget.max_shard_tokens, budget.max_request_tokens
            ),
            "lower max_shard_tokens or raise max_request_tokens (for a 32k-token context: 4000 and 24000; for 128k: 32000 and 112000)",
        ));
    }
    // The prefetched context is part of the first request's prompt, which the total
    // counts, with room left for the reply.
    if u64::from(budget.prefetch_tokens) + u64::from(budget.max_output_tokens)
        > u64::from(budget.max_total_tokens)
    {
        return Err(reporter.at(
            ErrorKind::BadBudget,
            path,
            true,
            format!(
                "prefetch_tokens ({}) plus max_output_tokens ({}) is larger than max_total_tokens ({}): the first request could not fit",
                budget.prefetch_tokens, budget.max_output_tokens, budget.max_total_tokens
            ),
            "lower prefetch_tokens (0 turns the prefetch off) or raise max_total_tokens",
        ));
    }
    Ok(())
}
