//! The validated composition: which specialists run, how many instances, on which
//! files, under which budgets, verified by which verifier.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use vouch_abi::Role;

use super::budget::{Budget, BudgetOverride};
use super::endpoint::ModelSection;
use super::error::ManifestError;
use super::plan::{InstancePlan, PluginSource};
use super::select::{FileExclusions, FileSelection};

/// The id of the built-in generic investigator, which always receives every file.
pub const GENERIC_INVESTIGATOR_ID: &str = "generic-investigator";

/// Most stage instances a composition may run at once.
pub const MAX_CONCURRENCY: u32 = 64;

const DEFAULT_TOML: &str = include_str!("../../../../manifests/default.toml");
const PANEL_TOML: &str = include_str!("../../../../manifests/panel.toml");

/// Whether the model gets repository tools (issue "endpoints without tools").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsMode {
    /// Offer tools; fall back to inline context if the endpoint cannot use them.
    #[default]
    Auto,
    /// Always offer tools.
    On,
    /// Never offer tools: patches and context are given inline within budget.
    Off,
}

/// One `[[specialist]]` entry, validated.
#[derive(Debug, Clone)]
pub struct SpecialistEntry {
    /// Plugin id (lowercase kebab-case).
    pub id: String,
    /// Pinned plugin version.
    pub version: String,
    /// Declared role (must match the plugin's own).
    pub role: Role,
    /// Number of instances, at least 1.
    pub instances: u32,
    /// Label prefix of its instances (defaults to the id).
    pub label: String,
    /// Disabled entries expand to no instances (a repository file may enable built-ins).
    pub enabled: bool,
    /// Built-in or dynamic with pin.
    pub source: PluginSource,
    /// Files its instances receive.
    pub selection: FileSelection,
    /// Effective budget of each instance.
    pub budget: Budget,
    /// The entry's own model name, if set.
    pub model: Option<String>,
}

/// The `[verifier]` section, validated.
#[derive(Debug, Clone)]
pub struct VerifierEntry {
    /// Plugin id.
    pub id: String,
    /// Pinned plugin version.
    pub version: String,
    /// Built-in or dynamic with pin.
    pub source: PluginSource,
    /// Effective budget of the verification pass.
    pub budget: Budget,
    /// Its own model name, if set.
    pub model: Option<String>,
}

/// A validated composition manifest (docs/manifests.md documents every key).
#[derive(Debug, Clone)]
pub struct Composition {
    /// The manifest file it was read from (`builtin:manifests/<name>.toml` for built-ins).
    pub origin: PathBuf,
    /// `[composition].name` (defaults to the file stem).
    pub name: String,
    /// `[composition].description`.
    pub description: Option<String>,
    /// Stage instances run at once, 1..=[`MAX_CONCURRENCY`].
    pub concurrency: usize,
    /// Repository-tool capability.
    pub tools: ToolsMode,
    /// Manifest-level endpoint settings (lowest precedence; see
    /// [`super::resolve_endpoint`]).
    pub model: ModelSection,
    /// Default budget of every stage instance.
    pub budget: Budget,
    /// The keys the manifest's `[budget]` table set (every other key of `budget` is
    /// vouch's built-in default).
    pub budget_set: BudgetOverride,
    /// Files no instance receives.
    pub exclusions: FileExclusions,
    /// Candidate-producing specialists, in manifest order.
    pub specialists: Vec<SpecialistEntry>,
    /// The verifier.
    pub verifier: VerifierEntry,
    /// Extra reviewer instructions from the repository's `.vouch/review.toml`
    /// (untrusted text from the reviewed repository's base tree).
    pub instructions: Option<String>,
}

impl Composition {
    /// Parses and validates a manifest. `origin` is the file it came from: it appears in
    /// every error, and a relative `library` resolves against its folder.
    ///
    /// Errors: [`ManifestError::Invalid`] with the file, line, column, key, problem and
    /// fix for TOML syntax errors, unknown keys, wrong types or values, and every rule in
    /// docs/manifests.md.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Composition, ManifestError> {
        super::validate::composition(text, origin)
    }

    /// Reads and validates the manifest at `path`.
    pub fn load(path: &Path) -> Result<Composition, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml_str(&text, path)
    }

    /// The default composition (`manifests/default.toml`, compiled in).
    pub fn builtin_default() -> Composition {
        Self::from_toml_str(DEFAULT_TOML, Path::new("builtin:manifests/default.toml"))
            .expect("manifests/default.toml is valid (tested)")
    }

    /// The five-reviewer panel composition (`manifests/panel.toml`, compiled in).
    pub fn builtin_panel() -> Composition {
        Self::from_toml_str(PANEL_TOML, Path::new("builtin:manifests/panel.toml"))
            .expect("manifests/panel.toml is valid (tested)")
    }

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
