//! Output contracts fitted to a stage's output budget, with the caps that fitted kept for
//! the review's later requests of the same shape.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use vouch_abi::ReceiptBound;
use vouch_specialist_kit::contract::{
    ContractRequest, MAX_CANDIDATES, MAX_DISMISSED_CONCERNS, token_bound,
};

use super::stage_plan::StagePlan;
use crate::registry::{PluginError, SpecialistHandle};

/// An output contract: what the host asked a plugin for and the schema it answered.
#[derive(Debug, Clone)]
pub(crate) struct Contract {
    /// The request (expected files, candidate ids, caps).
    pub(crate) request: ContractRequest,
    /// The plugin's bounded JSON Schema for it.
    pub(crate) schema: Value,
}

impl Contract {
    /// Asks `handle` for the contract of `request`.
    ///
    /// # Errors
    /// The plugin's error.
    pub(super) fn of(
        handle: &SpecialistHandle,
        request: ContractRequest,
    ) -> Result<Contract, PluginError> {
        let schema = handle.contract(&request)?;
        Ok(Contract { request, schema })
    }

    /// The repair variant of this contract (a plugin may shape it differently), asked for
    /// only when a reply needs repair. Rule (a repair can meet what it is held to): its
    /// candidate cap is raised to `owed`, the candidates the repair check demands of it
    /// ([`vouch_core::repair_demands`]), up to [`MAX_CANDIDATES`]; a cap fitted to a small
    /// output budget (one candidate at 8k) would otherwise refuse a repair that keeps a
    /// prior reply's three candidates.
    ///
    /// # Errors
    /// The plugin's error.
    pub(super) fn repair(
        &self,
        handle: &SpecialistHandle,
        owed: u64,
    ) -> Result<Value, PluginError> {
        let max_candidates = self
            .request
            .max_candidates
            .map(|cap| cap.max(owed.min(MAX_CANDIDATES)));
        handle.contract(&ContractRequest {
            repair: true,
            max_candidates,
            ..self.request.clone()
        })
    }
}

/// What decides a candidate contract's bound besides its caps: the specialist, the output
/// budget, how many files a receipt may list and the longest of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Shape {
    specialist: String,
    budget: u32,
    receipt: ReceiptBound,
}

impl Shape {
    fn of(plan: &StagePlan) -> Shape {
        let own = ReceiptBound::of(&plan.assigned);
        Shape {
            specialist: plan.handle.label(),
            budget: plan.budget.max_output_tokens_per_request,
            receipt: plan.receipt_bound.map_or(own, |lane| lane.max(own)),
        }
    }
}

/// The caps fitted so far in a review, by request shape (start with `Default::default()`).
#[derive(Debug, Default)]
pub(crate) struct FittedCaps(Mutex<HashMap<Shape, (u64, u64)>>);

impl FittedCaps {
    fn get(&self, shape: &Shape) -> Option<(u64, u64)> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(shape)
            .copied()
    }

    fn insert(&self, shape: Shape, caps: (u64, u64)) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(shape, caps);
    }
}

/// Rule (structured outputs): a final answer's `max_tokens` covers its contract's bound.
/// The host therefore lowers the contract's caps until the bound ([`token_bound`]) fits
/// the stage's output-token budget, in the order of [`vouch_core::fit_caps`]; when no
/// pair of caps fits, the contract is requested with one candidate, no dismissed concern,
/// and `max_tokens` at its bound.
///
/// Fitting asks the plugin for a contract per probe, so the caps a request shape got
/// ([`Shape`]) are tried first for the next request of that shape, and kept when the
/// contract they give fits; otherwise the caps are fitted again. For the standard
/// contracts (`vouch_specialist_kit::contract`) the shape decides the bound, so the caps
/// are those a fresh fit gives; a contract that depends on more still gets caps that fit.
///
/// # Errors
/// The plugin's error.
pub(super) fn fitted_contract(
    fitted: &FittedCaps,
    plan: &StagePlan,
) -> Result<Contract, PluginError> {
    let budget = u64::from(plan.budget.max_output_tokens_per_request);
    let probe = |caps: (u64, u64)| -> Result<Option<Contract>, PluginError> {
        let contract = Contract::of(&plan.handle, request(plan, caps))?;
        Ok((token_bound(&contract.schema) <= budget).then_some(contract))
    };
    let shape = Shape::of(plan);
    if let Some(caps) = fitted.get(&shape)
        && let Some(contract) = probe(caps)?
    {
        return Ok(contract);
    }
    // The contracts that fitted, by caps: the one chosen is not asked for twice.
    let mut fitting: Vec<((u64, u64), Contract)> = Vec::new();
    let caps = vouch_core::fit_caps(MAX_CANDIDATES, MAX_DISMISSED_CONCERNS, |c, d| {
        let contract = probe((c, d))?;
        let fits = contract.is_some();
        fitting.extend(contract.map(|contract| ((c, d), contract)));
        Ok(fits)
    })?
    .unwrap_or((1, 0));
    fitted.insert(shape, caps);
    match fitting.into_iter().find(|(probed, _)| *probed == caps) {
        Some((_, contract)) => Ok(contract),
        None => Contract::of(&plan.handle, request(plan, caps)),
    }
}

fn request(plan: &StagePlan, (candidates, dismissed): (u64, u64)) -> ContractRequest {
    ContractRequest {
        expected_files: plan.assigned.clone(),
        candidate_ids: vec![],
        repair: false,
        max_candidates: Some(candidates),
        max_dismissed: Some(dismissed),
        receipt_bound: plan.receipt_bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Registry, SpecialistHandle};
    use crate::review::stage_plan::ShardLimits;
    use proptest::prelude::*;
    use std::sync::LazyLock;
    use vouch_llm::Budget;

    static HANDLE: LazyLock<SpecialistHandle> = LazyLock::new(|| {
        Registry::new()
            .add_builtin(vouch_plugin_investigator::plugin_table())
            .unwrap()
    });

    fn plan(paths: Vec<String>, output_tokens: u32) -> StagePlan {
        StagePlan {
            label: "generic-investigator #1".into(),
            lane: "generic-investigator #1".into(),
            handle: HANDLE.clone(),
            assigned: paths,
            budget: Budget {
                max_output_tokens_per_request: output_tokens,
                ..Budget::default()
            },
            prefetch_tokens: 0,
            model: None,
            shards: ShardLimits::default(),
            split: vec![],
            inline_bytes: 0,
            retry_answer_bytes: usize::MAX,
            receipt_bound: None,
        }
    }

    fn caps(contract: &Contract) -> (Option<u64>, Option<u64>) {
        (
            contract.request.max_candidates,
            contract.request.max_dismissed,
        )
    }

    /// `n` distinct paths, the longest `longest` characters long.
    fn paths(seed: &str, n: usize, longest: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                let name = format!("{seed}{i}");
                if i == 0 {
                    format!("{name:x<longest$}")
                } else {
                    name.chars().take(longest).collect()
                }
            })
            .collect()
    }

    #[test]
    fn caps_kept_for_a_shape_are_tried_again_and_refitted_when_they_do_not_fit() {
        let fitted = FittedCaps::default();
        let first = fitted_contract(&fitted, &plan(paths("a", 3, 20), 2_500)).unwrap();
        let (Some(c), Some(d)) = caps(&first) else {
            panic!("caps are set: {:?}", first.request)
        };
        assert!(c < MAX_CANDIDATES, "2,500 tokens lower the cap: {c}");
        assert!(token_bound(&first.schema) <= 2_500);
        assert_eq!(
            fitted.get(&Shape::of(&plan(paths("b", 3, 20), 2_500))),
            Some((c, d)),
            "another request of the same shape finds the caps"
        );
        // Caps kept for a shape that no longer fit are fitted again.
        let shape = Shape::of(&plan(paths("c", 3, 20), 2_500));
        fitted.insert(shape.clone(), (MAX_CANDIDATES, MAX_DISMISSED_CONCERNS));
        let again = fitted_contract(&fitted, &plan(paths("c", 3, 20), 2_500)).unwrap();
        assert_eq!(caps(&again), (Some(c), Some(d)));
        assert_eq!(fitted.get(&shape), Some((c, d)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// For the standard contracts, the caps a review kept from an earlier request (of
        /// the same shape or another) are those a fresh fit gives, and always fit.
        #[test]
        fn kept_caps_equal_a_fresh_fit(
            first in (0usize..40, 1usize..120),
            // The second request: the same shape, or another count, or another longest
            // path (one at a time, so a key that ignores either is found out).
            other in prop_oneof![
                Just((None, None)),
                (0usize..40).prop_map(|n| (Some(n), None)),
                (1usize..120).prop_map(|l| (None, Some(l))),
            ],
            budget in 600u32..12_000,
        ) {
            let (n, longest) = (other.0.unwrap_or(first.0), other.1.unwrap_or(first.1));
            let fitted = FittedCaps::default();
            fitted_contract(&fitted, &plan(paths("first/", first.0, first.1), budget)).unwrap();
            let second = plan(paths("second/", n, longest), budget);
            let kept = fitted_contract(&fitted, &second).unwrap();
            let fresh = fitted_contract(&FittedCaps::default(), &second).unwrap();
            prop_assert_eq!(caps(&kept), caps(&fresh));
            prop_assert_eq!(&kept.schema, &fresh.schema);
            if fitted.get(&Shape::of(&second)) != Some((1, 0)) {
                prop_assert!(token_bound(&kept.schema) <= u64::from(budget));
            }
        }
    }
}
