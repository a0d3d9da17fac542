//! Stage budgets: the limits every agent loop runs under, whether or not the user set
//! any (design, "Model access notes": every agent loop has default budgets).

use serde::Deserialize;
use vouch_core::{ContextWindow, WindowSource};

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
pub(super) const DEFAULT_MAX_SHARD_TOKENS: u32 = 4_000;
/// Default [`Budget::max_shards`].
pub(super) const DEFAULT_MAX_SHARDS: u32 = 2048;
/// Default [`Budget::max_request_tokens`]: a 32k-token context less the default
/// 8,192-token answer.
pub(super) const DEFAULT_MAX_REQUEST_TOKENS: u32 = 24_000;
/// Default [`Budget::max_total_tokens`].
pub(super) const DEFAULT_MAX_TOTAL_TOKENS: u32 = 60_000;
/// Tokens of a request a shard's size leaves aside before it takes half of the rest:
/// room for the stable prompt (system prompt, tool schemas, output contract), tool
/// reads and a coverage retry.
pub(super) const SHARD_RESERVE_TOKENS: u32 = 16_000;
/// The largest window budgets grow with: a larger window (OpenRouter states a million
/// tokens for some models) sizes them as this one, since a request of hundreds of
/// thousands of tokens is read worse, not cheaper, and every turn sends it again.
pub(super) const MAX_SIZING_WINDOW: u32 = 131_072;

/// Rounds down to whole thousands (budgets read as round numbers).
fn thousands(tokens: u32) -> u32 {
    tokens / 1_000 * 1_000
}

/// Default [`Budget::max_output_tokens`]: 8,192 tokens, a quarter of the default window.
pub(super) const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_192;

/// Rule (reply from the window): a reply may take a quarter of the window (capped at
/// [`MAX_SIZING_WINDOW`]), at most [`DEFAULT_MAX_OUTPUT_TOKENS`] and at least 1. At the
/// default 32k window and above: 8,192, today's default; at 16k: 4,096; at 8k: 2,048.
pub fn output_tokens_for(window: u32) -> u32 {
    (window.min(MAX_SIZING_WINDOW) / 4).clamp(1, DEFAULT_MAX_OUTPUT_TOKENS)
}

/// Rule (request bound from the window): a request may fill the window, capped at
/// [`MAX_SIZING_WINDOW`], less the stage's whole `max_output_tokens` (every request asks
/// for that many reply tokens, so the two together must fit), rounded down to
/// thousands, and at least 2,000. At the default 32k window and 8,192-token replies:
/// 24,000, today's default. A reply so large that the floor applies leaves a request
/// and reply over the window, which [`check_effective`] refuses.
pub fn request_tokens_for(window: u32, max_output_tokens: u32) -> u32 {
    let window = window.min(MAX_SIZING_WINDOW);
    thousands(window.saturating_sub(max_output_tokens)).max(2_000)
}

/// Rule (shard size from the request bound): half of what a request has left after
/// [`SHARD_RESERVE_TOKENS`], at least a sixth of the request (small windows), rounded
/// down to thousands and at least 1,000 — never more than half the request. At 24,000:
/// 4,000, today's default; at 122,000 (a 128k window): 53,000.
pub fn shard_tokens_for(max_request_tokens: u32) -> u32 {
    let rest = max_request_tokens.saturating_sub(SHARD_RESERVE_TOKENS) / 2;
    thousands(rest.max(max_request_tokens / 6))
        .max(1_000)
        .min(max_request_tokens / 2)
}

/// Rule (total from the request bound): two and a half requests across a stage's turns,
/// rounded down to thousands, and never less than [`DEFAULT_MAX_TOTAL_TOKENS`]: a shard
/// that fills half a large request still leaves a tool turn and the answer. At 24,000:
/// 60,000, today's default.
pub fn total_tokens_for(max_request_tokens: u32) -> u32 {
    thousands(max_request_tokens.saturating_mul(5) / 2).max(DEFAULT_MAX_TOTAL_TOKENS)
}

impl Default for Budget {
    /// 12 turns, 24 tool calls, 8,192 output tokens per reply, 60,000 tokens in total;
    /// shards of 4,000 tokens, at most 2,048 per lane, requests of at most 24,000 tokens;
    /// 6,000 tokens of prefetched context.
    fn default() -> Self {
        Self {
            max_turns: 12,
            max_tool_calls: 24,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            max_total_tokens: DEFAULT_MAX_TOTAL_TOKENS,
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

    /// Rule (budgets from the model's window): each of `max_output_tokens`,
    /// `max_request_tokens`, `max_shard_tokens` and `max_total_tokens` that `set` (the
    /// keys a manifest table set for this stage) leaves unset is derived from `window`
    /// tokens by [`output_tokens_for`], [`request_tokens_for`], [`shard_tokens_for`] and
    /// [`total_tokens_for`], in that order (the request bound follows the reply the stage
    /// ends up with, the shard and the total the request bound);
    /// a set key keeps its value, except that a shard is lowered to half its request.
    /// User and repository ceilings apply afterwards and only lower.
    pub fn sized(self, window: u32, set: &BudgetOverride) -> Budget {
        let mut b = self;
        if set.max_output_tokens.is_none() {
            b.max_output_tokens = output_tokens_for(window);
        }
        if set.max_request_tokens.is_none() {
            b.max_request_tokens = request_tokens_for(window, b.max_output_tokens);
        }
        if set.max_shard_tokens.is_none() {
            b.max_shard_tokens = shard_tokens_for(b.max_request_tokens);
        }
        if set.max_total_tokens.is_none() {
            b.max_total_tokens = total_tokens_for(b.max_request_tokens);
        }
        b.max_shard_tokens = b.max_shard_tokens.min((b.max_request_tokens / 2).max(1));
        b
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
    /// Every key either table sets (`self`'s value first): which keys of a stage were
    /// set by its own table or by the composition's `[budget]`.
    pub fn or(&self, other: &BudgetOverride) -> BudgetOverride {
        BudgetOverride {
            max_turns: self.max_turns.or(other.max_turns),
            max_tool_calls: self.max_tool_calls.or(other.max_tool_calls),
            max_output_tokens: self.max_output_tokens.or(other.max_output_tokens),
            max_total_tokens: self.max_total_tokens.or(other.max_total_tokens),
            max_shard_tokens: self.max_shard_tokens.or(other.max_shard_tokens),
            max_shards: self.max_shards.or(other.max_shards),
            max_request_tokens: self.max_request_tokens.or(other.max_request_tokens),
            prefetch_tokens: self.prefetch_tokens.or(other.prefetch_tokens),
        }
    }

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
/// prefetch and reply limits together do, or whose request bound and reply limit
/// together exceed a known `window` ([`check_window`]), pointing at `path` (the table
/// that made it so).
pub(crate) fn check_effective(
    budget: Budget,
    window: ContextWindow,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    check_window(budget, window, reporter, path)?;
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
            "lower max_shard_tokens or raise max_request_tokens, or remove both so they follow the model's window ([model] context_tokens, or what the endpoint states; 4000 and 24000 at 32k tokens, 53000 and 122000 at 128k)",
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

/// Rule (a request and its reply fit the window): every request a stage sends is at most
/// `max_request_tokens` and asks for `max_output_tokens` more, so when the window is
/// known (set in the configuration or stated by the endpoint) the two together must fit
/// it; an endpoint would refuse (vLLM answers HTTP 400) a request that does not. Budgets
/// derived from the window always fit; only keys a table sets can break it. The default
/// window is nobody's statement, so it is not held against set keys.
fn check_window(
    budget: Budget,
    window: ContextWindow,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    let asked = u64::from(budget.max_request_tokens) + u64::from(budget.max_output_tokens);
    if window.source == WindowSource::Default || asked <= u64::from(window.tokens) {
        return Ok(());
    }
    let output = output_tokens_for(window.tokens);
    Err(reporter.at(
        ErrorKind::BadBudget,
        path,
        true,
        format!(
            "max_request_tokens ({}) plus max_output_tokens ({}) is {asked} tokens, more than the model's context window of {} tokens ({}): every request could be refused",
            budget.max_request_tokens,
            budget.max_output_tokens,
            window.tokens,
            window_origin(window.source),
        ),
        format!(
            "lower max_output_tokens or max_request_tokens until together they fit {} tokens, or remove both so they follow the window ({output} and {} at {} tokens)",
            window.tokens,
            request_tokens_for(window.tokens, output),
            window.tokens,
        ),
    ))
}

/// Where a window came from, in words for an error.
fn window_origin(source: WindowSource) -> &'static str {
    match source {
        WindowSource::Endpoint => "stated by the endpoint",
        WindowSource::Manifest => "[model] context_tokens of the manifest",
        WindowSource::UserConfig => "context_tokens of the user configuration's profile",
        WindowSource::Default => "the default",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivation at the windows users have: the default 32k gives today's
    /// defaults; 128k gives shards large enough for a lane to take a 40-file change in
    /// one execution; larger windows size as 128k; small ones take smaller replies, so
    /// that at every window a request at its bound and the reply it asks for fit.
    #[test]
    fn budgets_derived_from_the_window() {
        // (window, max_output_tokens a table sets) -> (reply, request, shard, total)
        for ((window, set), expected) in [
            ((32_768, None), (8_192, 24_000, 4_000, 60_000)),
            ((131_072, None), (8_192, 122_000, 53_000, 305_000)),
            ((65_536, None), (8_192, 57_000, 20_000, 142_000)),
            ((1_047_576, None), (8_192, 122_000, 53_000, 305_000)),
            ((32_768, Some(2_048)), (2_048, 30_000, 7_000, 75_000)),
            ((24_576, None), (6_144, 18_000, 3_000, 60_000)),
            ((16_384, None), (4_096, 12_000, 2_000, 60_000)),
            ((16_384, Some(1_024)), (1_024, 15_000, 2_000, 60_000)),
            ((8_192, None), (2_048, 6_000, 1_000, 60_000)),
            ((8_192, Some(1_024)), (1_024, 7_000, 1_000, 60_000)),
        ] {
            let over = BudgetOverride {
                max_output_tokens: set,
                ..BudgetOverride::default()
            };
            let b = Budget::default().with(&over).sized(window, &over);
            let got = (
                b.max_output_tokens,
                b.max_request_tokens,
                b.max_shard_tokens,
                b.max_total_tokens,
            );
            assert_eq!(got, expected, "window {window}, replies set to {set:?}");
            assert!(got.2 * 2 <= got.1, "a shard leaves half its request");
            assert!(
                got.0 + got.1 <= window,
                "window {window}: a request of {} asking {} more does not fit",
                got.1,
                got.0
            );
        }
    }

    /// A known window refuses set keys whose request and reply do not fit it, naming
    /// both keys, the window and where it came from; the default window refuses none,
    /// and a derived budget always passes.
    #[test]
    fn a_request_and_its_reply_over_a_known_window_are_refused() {
        let text = "[budget]\nmax_output_tokens = 8192\nmax_request_tokens = 12000\n";
        let reporter = Reporter::new("team.toml".into(), text).unwrap();
        let path = KeyPath::root().key("budget");
        let set = BudgetOverride {
            max_output_tokens: Some(8_192),
            max_request_tokens: Some(12_000),
            ..BudgetOverride::default()
        };
        let window = |tokens, source| ContextWindow { tokens, source };
        let check = |w: ContextWindow| {
            let b = Budget::default().with(&set).sized(w.tokens, &set);
            check_effective(b, w, &reporter, &path)
        };
        let err = check(window(16_384, WindowSource::Endpoint))
            .unwrap_err()
            .to_string();
        for part in [
            "max_request_tokens (12000) plus max_output_tokens (8192)",
            "context window of 16384 tokens (stated by the endpoint)",
            "(4096 and 12000 at 16384 tokens)",
        ] {
            assert!(err.contains(part), "{part} in {err}");
        }
        let err = check(window(16_384, WindowSource::Manifest)).unwrap_err();
        assert!(err.to_string().contains("[model] context_tokens"), "{err}");
        check(window(20_480, WindowSource::Manifest)).expect("20,192 tokens fit 20,480");
        check(ContextWindow::default()).expect("the default window is nobody's statement");
        for tokens in [8_192, 12_000, 16_384, 32_768, 200_000] {
            let none = BudgetOverride::default();
            let b = Budget::default().sized(tokens, &none);
            check_effective(b, window(tokens, WindowSource::Endpoint), &reporter, &path)
                .expect("derived budgets fit their window");
        }
    }

    #[test]
    fn set_keys_keep_their_values_and_the_rest_follow_the_window() {
        let default = Budget::default();
        let sized = default.sized(131_072, &BudgetOverride::default());
        assert_eq!(
            (
                sized.max_request_tokens,
                sized.max_shard_tokens,
                sized.max_total_tokens
            ),
            (122_000, 53_000, 305_000)
        );
        assert_eq!(sized.max_turns, default.max_turns);
        let request_set = BudgetOverride {
            max_request_tokens: Some(40_000),
            ..BudgetOverride::default()
        };
        let b = default.with(&request_set).sized(131_072, &request_set);
        assert_eq!(
            (b.max_request_tokens, b.max_shard_tokens, b.max_total_tokens),
            (40_000, 12_000, 100_000)
        );
        // A set shard keeps its value unless it would take more than half the request.
        let shard_set = BudgetOverride {
            max_shard_tokens: Some(8_000),
            ..BudgetOverride::default()
        };
        let b = default.with(&shard_set).sized(131_072, &shard_set);
        assert_eq!((b.max_request_tokens, b.max_shard_tokens), (122_000, 8_000));
        let b = default.with(&shard_set).sized(8_192, &shard_set);
        assert_eq!((b.max_request_tokens, b.max_shard_tokens), (6_000, 3_000));
    }
}
