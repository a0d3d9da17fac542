//! Composition manifests (TOML): which specialists review a change, how many instances
//! of each, on which files, under which budgets and endpoint, verified by which
//! verifier — plus the restricted, untrusted `.vouch/review.toml` a reviewed repository
//! may carry, and the flags > environment > manifest endpoint precedence.
//!
//! docs/manifests.md is the reference of every key. Shipped compositions:
//! `manifests/default.toml` ([`Composition::builtin_default`]) and
//! `manifests/panel.toml` ([`Composition::builtin_panel`]).

mod budget;
mod composition;
mod endpoint;
mod error;
mod locate;
mod plan;
mod repo;
mod select;
mod user;
mod user_apply;
mod validate;

pub use budget::{
    Budget, BudgetOverride, output_tokens_for, request_tokens_for, shard_tokens_for,
    total_tokens_for,
};
pub use composition::{
    BinaryPolicy, Composition, GENERIC_INVESTIGATOR_ID, MAX_CONCURRENCY, PluginSource,
    SpecialistEntry, ToolsMode, VerifierEntry,
};
pub use endpoint::{
    ApiKey, DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_SECS, ENV_API_KEY, ENV_BASE_URL,
    ENV_MODEL, EndpointError, EndpointFlags, MIN_CONTEXT_TOKENS, ModelSection, ResolvedEndpoint,
    SettingSource, resolve_endpoint,
};
pub use error::{Diagnostic, ErrorKind, Location, ManifestError};
pub use locate::Position;
pub use plan::{InstancePlan, excluded, partition_excluded, selected_files, unassigned_files};
pub use repo::{MAX_INSTRUCTIONS_BYTES, RepoOverrides, SpecialistOverride};
pub use select::{
    Exclusion, ExclusionSource, FileExclusions, FileSelection, LANGUAGES, REPO_OVERRIDE_PATH,
    Selection,
};
pub use user::{
    ConfigLocation, ENV_CONFIG, UserConfig, UserConfigError, attribute, locate, overlay,
};
pub use user_apply::{BudgetCap, PluginPin, apply_ceilings, apply_pins, cap_budget};
