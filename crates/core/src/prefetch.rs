//! Deterministic prefetch: what the host gives a stage from the repository graph before
//! its first model turn, and the rule that keeps it within the stage's token budget.

use serde::{Deserialize, Serialize};

/// What a prefetched item is, in value order: the most valuable kind first.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PrefetchKind {
    /// The whole enclosing definition (function, method, type) of a changed hunk at head.
    EnclosingHead,
    /// The definition of the callee of a changed call: signature, parameters (keyword
    /// names included) and doc comment.
    Callee,
    /// The whole enclosing definition of a changed hunk at base (when it changed).
    EnclosingBase,
    /// The signatures of the direct callers of a changed function.
    Callers,
}

impl PrefetchKind {
    /// The report spelling (`enclosing-head`).
    pub fn as_str(self) -> &'static str {
        match self {
            PrefetchKind::EnclosingHead => "enclosing-head",
            PrefetchKind::Callee => "callee",
            PrefetchKind::EnclosingBase => "enclosing-base",
            PrefetchKind::Callers => "callers",
        }
    }
}

/// A stage's prefetch, as the report states it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrefetchRecord {
    /// The stage's prefetch budget, in estimated tokens (`crate::shard::estimate_tokens`).
    pub budget_tokens: u64,
    /// Estimated tokens of what was given.
    pub given_tokens: u64,
    /// Items given.
    pub given: usize,
    /// Items left out because they did not fit the budget, each named with its estimated
    /// size (e.g. "callee function `helper` at head src/util.rs:10-12 (~90 tokens)").
    pub left_out: Vec<String>,
}

/// Rule (prefetch budget): items are considered in value order (the caller sorts them by
/// [`PrefetchKind`], then by path and line); an item is given when its cost fits in what
/// is left of the budget, otherwise it is left out (and named), and a later, smaller item
/// may still be given. Returns, per item, whether it is given.
pub fn select_within_budget(costs: &[u64], budget: u64) -> Vec<bool> {
    let mut left = budget;
    costs
        .iter()
        .map(|&cost| {
            let fits = cost <= left;
            if fits {
                left -= cost;
            }
            fits
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn items_are_given_in_order_while_they_fit_and_smaller_ones_may_follow() {
        // (costs, budget, given)
        let cases: &[(&[u64], u64, &[bool])] = &[
            (&[], 10, &[]),
            (&[5, 5], 10, &[true, true]),
            (&[5, 6], 10, &[true, false]),
            (&[11, 3], 10, &[false, true]),
            (&[4, 8, 6], 10, &[true, false, true]),
            (&[1], 0, &[false]),
            (&[0], 0, &[true]),
        ];
        for (costs, budget, want) in cases {
            assert_eq!(
                select_within_budget(costs, *budget),
                want.to_vec(),
                "{costs:?} within {budget}"
            );
        }
    }

    #[test]
    fn value_order_puts_head_definitions_first_and_callers_last() {
        let mut kinds = [
            PrefetchKind::Callers,
            PrefetchKind::EnclosingBase,
            PrefetchKind::Callee,
            PrefetchKind::EnclosingHead,
        ];
        kinds.sort();
        assert_eq!(
            kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            ["enclosing-head", "callee", "enclosing-base", "callers"]
        );
    }

    proptest! {
        #[test]
        fn what_is_given_never_exceeds_the_budget(
            costs in proptest::collection::vec(0u64..5_000, 0..40),
            budget in 0u64..20_000,
        ) {
            let given = select_within_budget(&costs, budget);
            prop_assert_eq!(given.len(), costs.len());
            let total: u64 = costs.iter().zip(&given).filter(|(_, g)| **g).map(|(c, _)| c).sum();
            prop_assert!(total <= budget);
            // Nothing left out would still have fit after everything given.
            for (c, g) in costs.iter().zip(&given) {
                if !*g {
                    prop_assert!(*c > budget - total);
                }
            }
        }
    }
}
