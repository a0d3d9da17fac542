//! Instance plans: one per stage instance a review runs, expanded from the composition.

use vouch_abi::Role;

use super::budget::Budget;
use super::composition::{Composition, PluginSource};
use super::select::{Exclusion, FileSelection};

/// One stage instance to run, e.g. `bug-review #2`.
#[derive(Debug, Clone)]
pub struct InstancePlan {
    /// Stable instance label: `<specialist label> #<n>` for candidate lanes (n from 1),
    /// the verifier's id for the verifier.
    pub label: String,
    /// The specialist entry's label (defaults to its id), e.g. `bug-review`.
    pub specialist_label: String,
    /// 1-based instance number within the entry.
    pub instance: u32,
    /// Pinned plugin id; the plugin's `describe` must report it.
    pub id: String,
    /// Pinned plugin version; the plugin's `describe` must report it.
    pub version: String,
    /// Declared role; the plugin's own role must match it.
    pub role: Role,
    /// Built-in or dynamic (with pin).
    pub source: PluginSource,
    /// Which reviewable files the instance receives.
    pub selection: FileSelection,
    /// Effective budget (composition `[budget]`, the entry's override, repository caps).
    pub budget: Budget,
    /// The entry's own model name, if it set one (it wins over the run's default model:
    /// [`super::ResolvedEndpoint::model_for`]).
    pub model: Option<String>,
}

/// The files of `expected_files` (the canonical list, after exclusions) that `plan`
/// receives, in the list's order. The generic investigator and entries without a
/// `select` table receive every file.
pub fn selected_files(plan: &InstancePlan, expected_files: &[String]) -> Vec<String> {
    expected_files
        .iter()
        .filter(|path| plan.selection.matches(path))
        .cloned()
        .collect()
}

/// Why `path` is excluded from review, if a `[files].exclude` glob of the composition
/// (or of the repository's `.vouch/review.toml`) matches it. The first matching rule
/// wins; its `Display` is the reason the report states.
pub fn excluded(composition: &Composition, path: &str) -> Option<Exclusion> {
    composition.exclusions.first_match(path).cloned()
}

/// Splits the canonical list into files to review and excluded files with their
/// reasons, both in the list's order.
pub fn partition_excluded(
    composition: &Composition,
    expected_files: &[String],
) -> (Vec<String>, Vec<(String, Exclusion)>) {
    let mut reviewable = Vec::new();
    let mut excluded_files = Vec::new();
    for path in expected_files {
        match excluded(composition, path) {
            Some(reason) => excluded_files.push((path.clone(), reason)),
            None => reviewable.push(path.clone()),
        }
    }
    (reviewable, excluded_files)
}

/// Reviewable files that no enabled instance's selection receives, in the list's
/// order. A non-empty result means part of the change would go unreviewed: the caller
/// must report it (the review cannot have full coverage), never skip it silently.
pub fn unassigned_files(composition: &Composition, reviewable_files: &[String]) -> Vec<String> {
    let plans = composition.instances();
    reviewable_files
        .iter()
        .filter(|path| !plans.iter().any(|plan| plan.selection.matches(path)))
        .cloned()
        .collect()
}

impl Composition {
    /// Every candidate-producing stage instance, in manifest order: each enabled entry
    /// expands to `instances` plans labelled `<label> #1`, `<label> #2`, …
    pub fn instances(&self) -> Vec<InstancePlan> {
        self.specialists
            .iter()
            .filter(|entry| entry.enabled)
            .flat_map(|entry| {
                (1..=entry.instances).map(move |n| InstancePlan {
                    label: format!("{} #{n}", entry.label),
                    specialist_label: entry.label.clone(),
                    instance: n,
                    id: entry.id.clone(),
                    version: entry.version.clone(),
                    role: entry.role,
                    source: entry.source.clone(),
                    selection: entry.selection.clone(),
                    budget: entry.budget,
                    model: entry.model.clone(),
                })
            })
            .collect()
    }

    /// The verification stage as a plan, labelled with the verifier's id; it receives
    /// every candidate, so its selection is [`FileSelection::All`].
    pub fn verifier_plan(&self) -> InstancePlan {
        let v = &self.verifier;
        InstancePlan {
            label: v.id.clone(),
            specialist_label: v.id.clone(),
            instance: 1,
            id: v.id.clone(),
            version: v.version.clone(),
            role: Role::Verifier,
            source: v.source.clone(),
            selection: FileSelection::All,
            budget: v.budget,
            model: v.model.clone(),
        }
    }
}
