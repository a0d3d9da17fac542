//! The validated composition: which specialists run, how many instances, on which
//! files, under which budgets, verified by which verifier.

use std::path::PathBuf;

use serde::Deserialize;
use vouch_abi::Role;

use super::budget::{Budget, BudgetOverride};
use super::endpoint::ModelSection;
use super::select::{FileExclusions, FileSelection};

/// The id of the built-in generic investigator, which always receives every file.
pub const GENERIC_INVESTIGATOR_ID: &str = "generic-investigator";

/// Most stage instances a composition may run at once.
pub const MAX_CONCURRENCY: u32 = 64;

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

/// How a changed binary file is reviewed (`[files].binary`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinaryPolicy {
    /// A binary change is a metadata-only patch: shown inline as its status, sizes,
    /// blob ids and detected type, and counted reviewed when an accepted receipt lists
    /// it (with an observation that its content was not read).
    #[default]
    Metadata,
    /// A binary file leaves the canonical list as `binary`: coverage is `limited`.
    Limit,
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

/// How the host obtains a specialist's function table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// Compiled into the binary; identified by id and version only.
    BuiltIn,
    /// A dynamic library loaded with its pin checked before `dlopen`.
    Dynamic {
        /// Absolute path (a relative `library` resolves against the manifest's folder).
        library: PathBuf,
        /// Expected SHA-256 of the library file, 64 lowercase hex digits.
        sha256: String,
    },
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
    /// The model's context window the budgets were sized for, and where it came from
    /// (`[budget]` keys no table sets follow it: [`Budget::sized`]).
    pub window: vouch_core::ContextWindow,
    /// Files no instance receives.
    pub exclusions: FileExclusions,
    /// How binary files are reviewed (`[files].binary`).
    pub binary: BinaryPolicy,
    /// Candidate-producing specialists, in manifest order.
    pub specialists: Vec<SpecialistEntry>,
    /// The verifier.
    pub verifier: VerifierEntry,
    /// Extra reviewer instructions from the repository's `.vouch/review.toml`
    /// (untrusted text from the reviewed repository's base tree).
    pub instructions: Option<String>,
}
