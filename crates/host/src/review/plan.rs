//! From a validated composition and the registry to a [`ReviewPlan`].

use vouch_abi::Role;

use super::{InstanceSpec, ReviewPlan};
use crate::manifest::{Budget, Composition, InstancePlan, PluginSource};
use crate::registry::{DynamicPin, PluginError, Registry};

/// Why a composition cannot run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlanError {
    /// A specialist could not be found, loaded or checked.
    #[error("specialist `{label}`: {source}")]
    Plugin {
        /// The instance label.
        label: String,
        /// What went wrong (names the file and the mismatch for dynamic plugins).
        #[source]
        source: PluginError,
    },
    /// The plugin's own role differs from the manifest's.
    #[error(
        "specialist `{label}`: the manifest says role `{declared}` but the plugin `{id}` says `{actual}`; fix the manifest's `role`"
    )]
    RoleMismatch {
        /// The instance label.
        label: String,
        /// Plugin id.
        id: String,
        /// Role in the manifest.
        declared: Role,
        /// Role the plugin describes.
        actual: Role,
    },
    /// A candidate lane whose role is the verifier's, or a verifier entry of another role.
    #[error(
        "specialist `{label}` has role `{role}`, which cannot be used there; the verifier goes in [verifier], candidate producers in [[specialist]]"
    )]
    MisplacedRole {
        /// The instance label.
        label: String,
        /// Its role.
        role: Role,
    },
}

/// Converts the manifest's budget into the agent loop's.
pub(crate) fn agent_budget(b: &Budget) -> vouch_llm::Budget {
    vouch_llm::Budget {
        max_turns: b.max_turns,
        max_tool_calls: b.max_tool_calls,
        max_output_tokens_per_request: b.max_output_tokens,
        max_total_tokens: u64::from(b.max_total_tokens),
        max_request_bytes: Some(u64::from(b.max_request_tokens) * vouch_core::BYTES_PER_TOKEN),
    }
}

fn spec(registry: &mut Registry, plan: &InstancePlan) -> Result<InstanceSpec, PlanError> {
    let plugin = |source| PlanError::Plugin {
        label: plan.label.clone(),
        source,
    };
    let handle = match &plan.source {
        PluginSource::BuiltIn => registry.get(&plan.id, &plan.version).map_err(plugin)?,
        PluginSource::Dynamic { library, sha256 } => registry
            .load(&DynamicPin {
                id: plan.id.clone(),
                version: plan.version.clone(),
                library: library.clone(),
                sha256: sha256.clone(),
            })
            .map_err(plugin)?,
    };
    let actual = handle.descriptor().role;
    if actual != plan.role {
        return Err(PlanError::RoleMismatch {
            label: plan.label.clone(),
            id: plan.id.clone(),
            declared: plan.role,
            actual,
        });
    }
    Ok(InstanceSpec {
        label: plan.label.clone(),
        handle,
        selection: plan.selection.clone(),
        budget: agent_budget(&plan.budget),
        prefetch_tokens: plan.budget.prefetch_tokens,
        model: plan.model.clone(),
        shards: shard_limits(&plan.budget),
    })
}

fn shard_limits(b: &Budget) -> super::ShardLimits {
    super::ShardLimits {
        max_shard_tokens: b.max_shard_tokens,
        max_shards: b.max_shards,
        max_request_tokens: b.max_request_tokens,
    }
}

/// Gives every instance of `plan` the budget its namesake (same label) has in
/// `composition` — the plan's composition sized again for the window the endpoint
/// stated: agent budget, prefetch and shard limits. Specialists, selections and models
/// stay as they are.
pub(crate) fn resize(plan: &mut ReviewPlan, composition: &Composition) {
    let budgets: std::collections::BTreeMap<String, Budget> = composition
        .instances()
        .into_iter()
        .chain([composition.verifier_plan()])
        .map(|p| (p.label, p.budget))
        .collect();
    for spec in plan.instances_mut() {
        if let Some(b) = budgets.get(&spec.label) {
            spec.budget = agent_budget(b);
            spec.prefetch_tokens = b.prefetch_tokens;
            spec.shards = shard_limits(b);
        }
    }
}

/// Builds the plan: every enabled instance resolved to a checked specialist (built-in by
/// id and version, dynamic by its pin, checked before loading), roles checked against the
/// plugins' own, the clean-result audit separated from the lanes, the composition's
/// exclusions as the exclusion rule, and the repository's review instructions (untrusted
/// text from its `.vouch/review.toml`, if any) for every model-backed stage.
///
/// # Errors
/// [`PlanError`] naming the instance and what to fix.
pub(crate) fn build_plan(
    composition: &Composition,
    registry: &mut Registry,
) -> Result<ReviewPlan, PlanError> {
    let mut lanes = Vec::new();
    let mut audit = None;
    for instance in composition.instances() {
        let s = spec(registry, &instance)?;
        match instance.role {
            Role::CleanResultAudit if audit.is_none() => audit = Some(s),
            Role::Verifier | Role::CleanResultAudit => {
                return Err(PlanError::MisplacedRole {
                    label: instance.label.clone(),
                    role: instance.role,
                });
            }
            _ => lanes.push(s),
        }
    }
    let verifier = spec(registry, &composition.verifier_plan())?;
    let exclusions = composition.exclusions.clone();
    Ok(ReviewPlan {
        composition: composition.name.clone(),
        lanes,
        audit,
        verifier,
        concurrency: composition.concurrency.max(1),
        exclusion: Box::new(move |path| exclusions.first_match(path).map(|e| e.to_string())),
        binary: composition.binary,
        instructions: composition.instructions.clone(),
    })
}
