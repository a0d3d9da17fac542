//! What the user configuration does to a composition: its `[budget]` ceilings cap every
//! stage's limits, and its `[plugins.ID]` pins give dynamic plugins their library.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::budget::{Budget, BudgetOverride};
use super::composition::{Composition, PluginSource};

/// One `[plugins.ID]` table of the user configuration: a dynamic plugin's library and
/// its pin, used by every composition entry with that id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginPin {
    /// The shared library (a relative path resolves against the configuration file's
    /// folder).
    pub library: PathBuf,
    /// Its SHA-256, 64 hex digits (checked before the library is loaded).
    pub sha256: String,
}

/// A budget key the user's ceiling lowered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetCap {
    /// `[budget]` (the composition's default), a specialist entry's label, or the
    /// verifier's id.
    pub stage: String,
    /// The budget key, e.g. `max_turns`.
    pub key: &'static str,
    /// What the composition asked for.
    pub asked: u32,
    /// What it runs with.
    pub ceiling: u32,
}

/// Rule: each key of `ceiling` lowers that limit of `budget` to the ceiling (never
/// raises it); a ceiling on `max_total_tokens` also caps `max_output_tokens`, since one
/// reply cannot exceed the whole, and one on `max_request_tokens` caps
/// `max_shard_tokens` at half of it (a shard leaves room for the rest of its request).
/// Returns the capped budget and each lowered key with the value asked for.
pub fn cap_budget(
    budget: Budget,
    ceiling: &BudgetOverride,
) -> (Budget, Vec<(&'static str, u32, u32)>) {
    let mut capped = budget.capped_by(ceiling);
    if capped.max_output_tokens > capped.max_total_tokens {
        capped.max_output_tokens = capped.max_total_tokens;
    }
    if capped.max_shard_tokens.saturating_mul(2) > capped.max_request_tokens {
        capped.max_shard_tokens = (capped.max_request_tokens / 2)
            .max(1)
            .min(capped.max_shard_tokens);
    }
    let b = budget;
    let c = capped;
    let pairs = [
        ("max_turns", b.max_turns, c.max_turns),
        ("max_tool_calls", b.max_tool_calls, c.max_tool_calls),
        (
            "max_output_tokens",
            b.max_output_tokens,
            c.max_output_tokens,
        ),
        ("max_total_tokens", b.max_total_tokens, c.max_total_tokens),
        ("max_shard_tokens", b.max_shard_tokens, c.max_shard_tokens),
        ("max_shards", b.max_shards, c.max_shards),
        (
            "max_request_tokens",
            b.max_request_tokens,
            c.max_request_tokens,
        ),
    ];
    let lowered = pairs
        .into_iter()
        .filter(|(_, asked, now)| now < asked)
        .collect();
    (capped, lowered)
}

/// Applies the user's budget ceilings to every budget of `composition` (its `[budget]`,
/// each specialist entry, the verifier) and returns every key lowered.
pub fn apply_ceilings(composition: &mut Composition, ceiling: &BudgetOverride) -> Vec<BudgetCap> {
    let mut caps = Vec::new();
    let mut cap = |stage: &str, budget: &mut Budget| {
        let (capped, lowered) = cap_budget(*budget, ceiling);
        *budget = capped;
        caps.extend(lowered.into_iter().map(|(key, asked, ceiling)| BudgetCap {
            stage: stage.to_owned(),
            key,
            asked,
            ceiling,
        }));
    };
    cap("[budget]", &mut composition.budget);
    for entry in &mut composition.specialists {
        cap(&entry.label, &mut entry.budget);
    }
    cap(&composition.verifier.id, &mut composition.verifier.budget);
    caps
}

/// Rule: an entry (specialist or verifier) whose id the user configuration pins loads
/// that library with that pin — it wins over the manifest's own `library`/`sha256`
/// (user config > `--manifest`). Returns the ids it applied to.
pub fn apply_pins(
    composition: &mut Composition,
    pins: &BTreeMap<String, PluginPin>,
) -> Vec<String> {
    let mut used = Vec::new();
    let mut pin = |id: &str, source: &mut PluginSource| {
        if let Some(p) = pins.get(id) {
            *source = PluginSource::Dynamic {
                library: p.library.clone(),
                sha256: p.sha256.clone(),
            };
            if !used.iter().any(|u| u == id) {
                used.push(id.to_owned());
            }
        }
    };
    for entry in &mut composition.specialists {
        pin(&entry.id, &mut entry.source);
    }
    pin(&composition.verifier.id, &mut composition.verifier.source);
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_lower_never_raise() {
        let b = Budget {
            max_turns: 12,
            max_tool_calls: 24,
            max_output_tokens: 8192,
            max_total_tokens: 60_000,
            ..Budget::default()
        };
        // (ceiling, expected budget, lowered keys)
        let cases: [(BudgetOverride, Budget, &[&str]); 4] = [
            (BudgetOverride::default(), b, &[]),
            (
                BudgetOverride {
                    max_turns: Some(30),
                    ..Default::default()
                },
                b,
                &[],
            ),
            (
                BudgetOverride {
                    max_turns: Some(4),
                    max_tool_calls: Some(6),
                    ..Default::default()
                },
                Budget {
                    max_turns: 4,
                    max_tool_calls: 6,
                    ..b
                },
                &["max_turns", "max_tool_calls"],
            ),
            (
                BudgetOverride {
                    max_total_tokens: Some(4000),
                    ..Default::default()
                },
                Budget {
                    max_output_tokens: 4000,
                    max_total_tokens: 4000,
                    ..b
                },
                &["max_output_tokens", "max_total_tokens"],
            ),
        ];
        for (ceiling, expected, keys) in cases {
            let (got, lowered) = cap_budget(b, &ceiling);
            assert_eq!(got, expected, "{ceiling:?}");
            let got_keys: Vec<&str> = lowered.iter().map(|(k, _, _)| *k).collect();
            assert_eq!(got_keys, keys, "{ceiling:?}");
        }
    }

    proptest::proptest! {
        /// For every budget and ceiling: no limit is raised, each ceiling holds, a reply
        /// never exceeds the whole, and exactly the changed keys are reported.
        #[test]
        fn a_ceiling_only_lowers(
            turns in 1u32..100, tools in 1u32..100, output in 1u32..100_000,
            total_extra in 0u32..100_000,
            ceiling in proptest::option::of(1u32..100),
            tool_ceiling in proptest::option::of(1u32..100),
            output_ceiling in proptest::option::of(1u32..100_000),
            total_ceiling in proptest::option::of(1u32..200_000),
            request_ceiling in proptest::option::of(2u32..50_000),
        ) {
            let budget = Budget {
                max_turns: turns,
                max_tool_calls: tools,
                max_output_tokens: output,
                max_total_tokens: output + total_extra,
                ..Budget::default()
            };
            let cap = BudgetOverride {
                max_turns: ceiling,
                max_tool_calls: tool_ceiling,
                max_output_tokens: output_ceiling,
                max_total_tokens: total_ceiling,
                max_request_tokens: request_ceiling,
                ..BudgetOverride::default()
            };
            let (got, lowered) = cap_budget(budget, &cap);
            let (b, g, c) = (budget, got, cap);
            let keys = [
                (b.max_turns, g.max_turns, c.max_turns),
                (b.max_tool_calls, g.max_tool_calls, c.max_tool_calls),
                (b.max_output_tokens, g.max_output_tokens, c.max_output_tokens),
                (b.max_total_tokens, g.max_total_tokens, c.max_total_tokens),
                (b.max_shard_tokens, g.max_shard_tokens, c.max_shard_tokens),
                (b.max_shards, g.max_shards, c.max_shards),
                (b.max_request_tokens, g.max_request_tokens, c.max_request_tokens),
            ];
            for (asked, now, ceiling) in keys {
                proptest::prop_assert!(now <= asked);
                proptest::prop_assert!(now >= 1);
                if let Some(c) = ceiling {
                    proptest::prop_assert!(now <= c);
                }
            }
            proptest::prop_assert!(got.max_output_tokens <= got.max_total_tokens);
            proptest::prop_assert!(got.max_shard_tokens * 2 <= got.max_request_tokens);
            let changed = keys.iter().filter(|(asked, now, _)| now < asked).count();
            proptest::prop_assert_eq!(lowered.len(), changed);
        }
    }

    #[test]
    fn ceilings_and_pins_reach_every_entry() {
        let mut c = Composition::builtin_panel();
        let caps = apply_ceilings(
            &mut c,
            &BudgetOverride {
                max_turns: Some(3),
                ..Default::default()
            },
        );
        assert!(c.specialists.iter().all(|s| s.budget.max_turns == 3));
        assert_eq!(c.verifier.budget.max_turns, 3);
        assert_eq!(c.budget.max_turns, 3);
        assert_eq!(caps.len(), c.specialists.len() + 2, "{caps:?}");
        let pins: BTreeMap<String, PluginPin> = [(
            "bug-review".to_owned(),
            PluginPin {
                library: "/p/libbug.so".into(),
                sha256: "a".repeat(64),
            },
        )]
        .into();
        assert_eq!(apply_pins(&mut c, &pins), ["bug-review"]);
        for s in &c.specialists {
            assert_eq!(
                matches!(s.source, PluginSource::Dynamic { .. }),
                s.id == "bug-review",
                "{}",
                s.id
            );
        }
    }
}
