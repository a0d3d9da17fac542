//! From manifest text to a validated [`Composition`]: serde with unknown keys denied,
//! then the rules serde cannot express, each reported at its key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use vouch_abi::Role;
use vouch_core::{ContextWindow, WindowSource};

use super::budget::{Budget, BudgetOverride, check_effective};
use super::composition::{
    Composition, GENERIC_INVESTIGATOR_ID, MAX_CONCURRENCY, PluginSource, SpecialistEntry,
    ToolsMode, VerifierEntry,
};
use super::endpoint::{
    CREDENTIAL_HEADERS, MIN_CONTEXT_TOKENS, ModelSection, is_env_name, is_header_name, is_http_url,
};
use super::error::{ErrorKind, ManifestError, Reporter};
use super::locate::KeyPath;
use super::select::{ExclusionSource, FileExclusions, FileSelection, RawSelect, Selection};

const DEFAULT_TOML: &str = include_str!("../../../../manifests/default.toml");
const PANEL_TOML: &str = include_str!("../../../../manifests/panel.toml");

const UNKNOWN_KEY_HELP: &str =
    "remove the key or fix its spelling; docs/manifests.md lists every key of every section";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDocument {
    composition: Option<RawHeader>,
    model: Option<ModelSection>,
    budget: Option<BudgetOverride>,
    files: Option<RawFiles>,
    #[serde(default)]
    specialist: Vec<RawSpecialist>,
    verifier: Option<RawVerifier>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    name: Option<String>,
    description: Option<String>,
    concurrency: Option<u32>,
    tools: Option<ToolsMode>,
}

/// A `[files]` table (shared with the repository file's schema).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFiles {
    pub(crate) exclude: Option<Vec<String>>,
    pub(crate) binary: Option<super::composition::BinaryPolicy>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpecialist {
    id: Option<String>,
    version: Option<String>,
    role: Option<Role>,
    instances: Option<u32>,
    label: Option<String>,
    enabled: Option<bool>,
    library: Option<String>,
    sha256: Option<String>,
    model: Option<String>,
    select: Option<RawSelect>,
    budget: Option<BudgetOverride>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerifier {
    id: Option<String>,
    version: Option<String>,
    library: Option<String>,
    sha256: Option<String>,
    model: Option<String>,
    budget: Option<BudgetOverride>,
}

/// The composition's `[budget]` as its entries inherit it: the budget, the keys the
/// table set, and the window the unset ones are sized for.
struct Defaults {
    budget: Budget,
    set: BudgetOverride,
    window: ContextWindow,
}

/// Rule: a budget is sized for the window ([`Budget::sized`], for the keys none of its
/// tables set) unless the window is the default one, where the budgets stay vouch's
/// fixed defaults (sized for 32k tokens).
fn sized(budget: Budget, window: ContextWindow, set: &BudgetOverride) -> Budget {
    match window.source {
        WindowSource::Default => budget,
        _ => budget.sized(window.tokens, set),
    }
}

/// See [`Composition::from_toml_str`]; `window` (when given) is the context window the
/// budgets are sized for, else the manifest's own `[model] context_tokens`, else the
/// default.
pub(crate) fn composition(
    text: &str,
    origin: &Path,
    window: Option<ContextWindow>,
) -> Result<Composition, ManifestError> {
    let reporter = Reporter::new(origin.to_owned(), text)?;
    let raw: RawDocument =
        toml::from_str(text).map_err(|e| reporter.serde(&e, UNKNOWN_KEY_HELP))?;
    let root = KeyPath::root();
    let header = raw.composition.unwrap_or(RawHeader {
        name: None,
        description: None,
        concurrency: None,
        tools: None,
    });
    let header_path = root.key("composition");
    let name = composition_name(header.name, origin, &reporter, &header_path)?;
    let concurrency = check_concurrency(header.concurrency, &reporter, &header_path)?;
    let model = raw.model.unwrap_or_default();
    check_model(&model, &reporter, &root.key("model"))?;
    let budget = raw.budget.unwrap_or_default();
    let defaults = defaults(&model, budget, window, &reporter, &root.key("budget"))?;
    let files = raw.files.unwrap_or_default();
    let exclusions = FileExclusions::default().extended(
        &files.exclude.unwrap_or_default(),
        &ExclusionSource::Composition(origin.to_owned()),
        &reporter,
        &root.key("files").key("exclude"),
    )?;
    let specialists = specialists(raw.specialist, &defaults, &reporter, origin)?;
    let verifier = composition_verifier(raw.verifier, &defaults, &reporter, origin)?;
    Ok(Composition {
        origin: origin.to_owned(),
        name,
        description: header.description,
        concurrency: concurrency as usize,
        tools: header.tools.unwrap_or_default(),
        model,
        budget: defaults.budget,
        budget_set: defaults.set,
        window: defaults.window,
        exclusions,
        binary: files.binary.unwrap_or_default(),
        specialists,
        verifier,
        instructions: None,
    })
}

/// `[composition] name`, else the manifest file's stem; an empty name is an error.
fn composition_name(
    name: Option<String>,
    origin: &Path,
    reporter: &Reporter<'_>,
    header_path: &KeyPath,
) -> Result<String, ManifestError> {
    match name {
        Some(name) if name.trim().is_empty() => Err(reporter.at(
            ErrorKind::BadValue,
            &header_path.key("name"),
            false,
            "the composition name is empty",
            "give the composition a short name, e.g. \"default\"",
        )),
        Some(name) => Ok(name),
        None => Ok(origin
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "composition".to_owned())),
    }
}

/// `[composition] concurrency` (default 4): from 1 to [`MAX_CONCURRENCY`].
fn check_concurrency(
    concurrency: Option<u32>,
    reporter: &Reporter<'_>,
    header_path: &KeyPath,
) -> Result<u32, ManifestError> {
    let concurrency = concurrency.unwrap_or(4);
    if concurrency == 0 {
        return Err(reporter.at(
            ErrorKind::ZeroConcurrency,
            &header_path.key("concurrency"),
            false,
            "`concurrency = 0` would never start a stage instance",
            format!("use a number from 1 to {MAX_CONCURRENCY} (1 runs instances one at a time)"),
        ));
    }
    if concurrency > MAX_CONCURRENCY {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &header_path.key("concurrency"),
            false,
            format!("`concurrency = {concurrency}` is above the limit of {MAX_CONCURRENCY}"),
            format!("use a number from 1 to {MAX_CONCURRENCY}"),
        ));
    }
    Ok(concurrency)
}

/// The composition's budget defaults: `[budget]` over the defaults, sized for the window
/// (`window`, else `[model] context_tokens`, else the default) and checked.
fn defaults(
    model: &ModelSection,
    set: BudgetOverride,
    window: Option<ContextWindow>,
    reporter: &Reporter<'_>,
    budget_path: &KeyPath,
) -> Result<Defaults, ManifestError> {
    set.check(reporter, budget_path)?;
    let window = window
        .or(model.context_tokens.map(|tokens| ContextWindow {
            tokens,
            source: WindowSource::Manifest,
        }))
        .unwrap_or_default();
    let budget = sized(Budget::default().with(&set), window, &set);
    check_effective(budget, window, reporter, budget_path)?;
    Ok(Defaults {
        budget,
        set,
        window,
    })
}

/// The `[[specialist]]` entries: each valid, labels unique, at least one enabled.
fn specialists(
    raw: Vec<RawSpecialist>,
    defaults: &Defaults,
    reporter: &Reporter<'_>,
    origin: &Path,
) -> Result<Vec<SpecialistEntry>, ManifestError> {
    let root = KeyPath::root();
    let mut specialists = Vec::with_capacity(raw.len());
    let mut labels: HashMap<String, usize> = HashMap::new();
    for (i, entry) in raw.into_iter().enumerate() {
        let path = root.key("specialist").index(i);
        let has_label = entry.label.is_some();
        let entry = specialist(entry, defaults, reporter, &path, origin)?;
        if let Some(first) = labels.insert(entry.label.clone(), i) {
            let at = path.key(if has_label { "label" } else { "id" });
            return Err(duplicate_label(reporter, &at, &entry.label, first));
        }
        specialists.push(entry);
    }
    if !specialists.iter().any(|s| s.enabled) {
        return Err(reporter.at(
            ErrorKind::NoEnabledSpecialist,
            &root.key("specialist"),
            true,
            "no [[specialist]] entry is enabled, so nothing would review the change",
            "add a [[specialist]] entry (e.g. id = \"generic-investigator\") or set `enabled = true` on one",
        ));
    }
    Ok(specialists)
}

/// The error of a `[[specialist]]` entry at `at` whose instance label `label` entry
/// `first` already uses.
fn duplicate_label(
    reporter: &Reporter<'_>,
    at: &KeyPath,
    label: &str,
    first: usize,
) -> ManifestError {
    let first_line = reporter
        .locator
        .as_ref()
        .and_then(|l| l.find(&KeyPath::root().key("specialist").index(first), true))
        .map(|p| format!(" (line {})", p.line))
        .unwrap_or_default();
    reporter.at(
        ErrorKind::DuplicateLabel,
        at,
        false,
        format!("instance label `{label}` is already used by specialist[{first}]{first_line}"),
        "give one of the entries a distinct `label` (instances are labelled `<label> #1`, `<label> #2`, …), or raise `instances` on one entry instead",
    )
}

/// The `[verifier]` section, which every composition needs.
fn composition_verifier(
    raw: Option<RawVerifier>,
    defaults: &Defaults,
    reporter: &Reporter<'_>,
    origin: &Path,
) -> Result<VerifierEntry, ManifestError> {
    let path = KeyPath::root().key("verifier");
    let Some(raw) = raw else {
        return Err(reporter.at(
            ErrorKind::MissingVerifier,
            &path,
            true,
            "the composition has no [verifier] section; findings are only reported after verification",
            "add:\n      [verifier]\n      id = \"verifier\"\n      version = \"1.0.0\"",
        ));
    };
    verifier(raw, defaults, reporter, &path, origin)
}

fn check_model(
    model: &ModelSection,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    check_endpoint_keys(model, reporter, path)?;
    check_headers(model, reporter, path)?;
    check_limits(model, reporter, path)
}

/// `base_url`, `model` and `api_key_env` of `[model]`.
fn check_endpoint_keys(
    model: &ModelSection,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    if let Some(url) = &model.base_url
        && !is_http_url(url)
    {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("base_url"),
            false,
            "`base_url` is not an http:// or https:// URL",
            "set it to the server's OpenAI-compatible root, e.g. \"http://127.0.0.1:8080/v1\"",
        ));
    }
    if model.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("model"),
            false,
            "`model` is empty",
            "name the model the server serves, or remove the key and use --model / VOUCH_MODEL",
        ));
    }
    if let Some(name) = &model.api_key_env
        && !is_env_name(name)
    {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("api_key_env"),
            false,
            "`api_key_env` is not an environment variable name",
            "give the NAME of the variable holding the key (e.g. \"OPENAI_API_KEY\"), never the key itself",
        ));
    }
    Ok(())
}

/// `[model.headers]`: valid names and one-line values, never a credential.
fn check_headers(
    model: &ModelSection,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    for (name, value) in &model.headers {
        let at = path.key("headers").key(name);
        if !is_header_name(name) || value.chars().any(char::is_control) {
            return Err(reporter.at(
                ErrorKind::BadValue,
                &at,
                false,
                "not a valid HTTP header name or value",
                "use a header name of letters, digits and dashes (e.g. \"X-Title\") and a one-line value",
            ));
        }
        if CREDENTIAL_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(reporter.at(
                ErrorKind::BadValue,
                &at,
                false,
                "a credential header cannot be set in a manifest",
                "put the key in an environment variable, name it with `api_key_env`, and choose how it is sent with `auth = \"bearer\"` or `auth = \"api-key\"`",
            ));
        }
    }
    Ok(())
}

/// `api_version`, `request_timeout_secs` and `context_tokens` of `[model]`.
fn check_limits(
    model: &ModelSection,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<(), ManifestError> {
    if model
        .api_version
        .as_deref()
        .is_some_and(|v| v.trim().is_empty() || v.contains(['&', '?', '#', ' ']))
    {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("api_version"),
            false,
            "`api_version` is not an API version",
            "give the version alone, e.g. \"2024-10-21\"",
        ));
    }
    if model.request_timeout_secs == Some(0) {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("request_timeout_secs"),
            false,
            "`request_timeout_secs = 0` would time out every request",
            "use a positive number of seconds (default 120)",
        ));
    }
    if let Some(tokens) = model.context_tokens.filter(|t| *t < MIN_CONTEXT_TOKENS) {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("context_tokens"),
            false,
            format!("`context_tokens = {tokens}` is smaller than any window vouch can review in"),
            format!("give the model's context window in tokens, at least {MIN_CONTEXT_TOKENS} (e.g. 131072 for a 128k model)"),
        ));
    }
    Ok(())
}

fn specialist(
    raw: RawSpecialist,
    defaults: &Defaults,
    reporter: &Reporter<'_>,
    path: &KeyPath,
    origin: &Path,
) -> Result<SpecialistEntry, ManifestError> {
    let id = plugin_id(raw.id, reporter, path)?;
    let version = plugin_version(raw.version, reporter, path)?;
    let Some(role) = raw.role else {
        return Err(missing(
            reporter,
            &path.key("role"),
            "the plugin's role, e.g. role = \"investigator\" or role = \"reviewer\"",
        ));
    };
    if role == Role::Verifier {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &path.key("role"),
            false,
            "a [[specialist]] entry cannot have role \"verifier\"",
            "declare the verifier in the [verifier] section instead",
        ));
    }
    let instances = raw.instances.unwrap_or(1);
    if instances == 0 {
        return Err(reporter.at(
            ErrorKind::ZeroInstances,
            &path.key("instances"),
            false,
            format!("specialist `{id}` has `instances = 0`"),
            "use at least 1, or set `enabled = false` to keep the entry without running it",
        ));
    }
    let label = match raw.label {
        Some(label) => {
            check_label(&label, reporter, &path.key("label"))?;
            label
        }
        None => id.clone(),
    };
    let source = plugin_source(raw.library, raw.sha256, reporter, path, origin)?;
    let selection = match raw.select {
        Some(_) if id == GENERIC_INVESTIGATOR_ID => {
            return Err(selection_not_allowed(reporter, &path.key("select")));
        }
        Some(select) => FileSelection::Selected(Box::new(Selection::build(
            &select,
            reporter,
            &path.key("select"),
        )?)),
        None => FileSelection::All,
    };
    let budget = entry_budget(raw.budget, defaults, reporter, &path.key("budget"))?;
    let model = non_empty_model(raw.model, reporter, &path.key("model"))?;
    Ok(SpecialistEntry {
        id,
        version,
        role,
        instances,
        label,
        enabled: raw.enabled.unwrap_or(true),
        source,
        selection,
        budget,
        model,
    })
}

fn verifier(
    raw: RawVerifier,
    defaults: &Defaults,
    reporter: &Reporter<'_>,
    path: &KeyPath,
    origin: &Path,
) -> Result<VerifierEntry, ManifestError> {
    Ok(VerifierEntry {
        id: plugin_id(raw.id, reporter, path)?,
        version: plugin_version(raw.version, reporter, path)?,
        source: plugin_source(raw.library, raw.sha256, reporter, path, origin)?,
        budget: entry_budget(raw.budget, defaults, reporter, &path.key("budget"))?,
        model: non_empty_model(raw.model, reporter, &path.key("model"))?,
    })
}

/// The error for a `select` table on the generic investigator (also used for the
/// repository file).
pub(crate) fn selection_not_allowed(reporter: &Reporter<'_>, at: &KeyPath) -> ManifestError {
    reporter.at(
        ErrorKind::SelectionNotAllowed,
        at,
        true,
        "the generic investigator always receives every changed file, so it takes no `select`",
        "remove the `select` table, or add a separate specialist entry with the selection",
    )
}

fn missing(reporter: &Reporter<'_>, at: &KeyPath, what: &str) -> ManifestError {
    reporter.at(
        ErrorKind::MissingKey,
        at,
        true,
        format!("required key `{at}` is missing"),
        format!("add {what}"),
    )
}

fn plugin_id(
    id: Option<String>,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<String, ManifestError> {
    let at = path.key("id");
    let Some(id) = id else {
        return Err(missing(
            reporter,
            &at,
            "the plugin id, e.g. id = \"generic-investigator\"",
        ));
    };
    let kebab = !id.is_empty()
        && id.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if !kebab {
        return Err(reporter.at(
            ErrorKind::BadValue,
            &at,
            false,
            format!("plugin id `{id}` is not lowercase kebab-case"),
            "use the id the plugin's `describe` reports, e.g. \"bug-review\"",
        ));
    }
    Ok(id)
}

fn plugin_version(
    version: Option<String>,
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<String, ManifestError> {
    let at = path.key("version");
    match version {
        None => Err(missing(
            reporter,
            &at,
            "the pinned plugin version, e.g. version = \"1.0.0\"",
        )),
        Some(v) if v.is_empty() || v.chars().any(char::is_whitespace) => Err(reporter.at(
            ErrorKind::BadValue,
            &at,
            false,
            "the plugin version is empty or contains whitespace",
            "use the exact version the plugin's `describe` reports, e.g. \"1.0.0\"",
        )),
        Some(v) => Ok(v),
    }
}

fn plugin_source(
    library: Option<String>,
    sha256: Option<String>,
    reporter: &Reporter<'_>,
    path: &KeyPath,
    origin: &Path,
) -> Result<PluginSource, ManifestError> {
    match (library, sha256) {
        (None, None) => Ok(PluginSource::BuiltIn),
        (Some(_), None) => Err(reporter.at(
            ErrorKind::LibraryWithoutSha256,
            &path.key("library"),
            true,
            "`library` is set without a `sha256` pin; vouch checks the pin before loading the library",
            "add sha256 = \"<64 hex digits>\" (compute it with `sha256sum <library>`) for the exact file you deploy",
        )),
        (None, Some(_)) => Err(reporter.at(
            ErrorKind::Sha256WithoutLibrary,
            &path.key("sha256"),
            true,
            "`sha256` is set without a `library` to pin; built-in specialists are identified by id and version",
            "add the `library` path of the dynamic plugin, or remove `sha256` for a built-in",
        )),
        (Some(library), Some(sha256)) => {
            if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(reporter.at(
                    ErrorKind::BadSha256,
                    &path.key("sha256"),
                    false,
                    format!(
                        "`sha256` must be 64 hexadecimal digits, found {} characters",
                        sha256.chars().count()
                    ),
                    "copy the first field printed by `sha256sum <library>`",
                ));
            }
            if library.is_empty() {
                return Err(reporter.at(
                    ErrorKind::BadValue,
                    &path.key("library"),
                    false,
                    "`library` is empty",
                    "give the path of the plugin's shared library (absolute, or relative to the manifest's folder)",
                ));
            }
            Ok(PluginSource::Dynamic {
                library: resolve_library(origin, &library),
                sha256: sha256.to_ascii_lowercase(),
            })
        }
    }
}

/// A relative library path resolves against the folder of the manifest it was written
/// in, and the result is absolute.
fn resolve_library(origin: &Path, library: &str) -> PathBuf {
    let library = Path::new(library);
    if library.is_absolute() {
        return library.to_owned();
    }
    let folder = origin.parent().unwrap_or(Path::new(""));
    let joined = folder.join(library);
    std::path::absolute(&joined).unwrap_or(joined)
}

fn check_label(label: &str, reporter: &Reporter<'_>, at: &KeyPath) -> Result<(), ManifestError> {
    let ok = !label.trim().is_empty()
        && label.trim() == label
        && label.chars().count() <= 64
        && !label.contains('#')
        && !label.chars().any(char::is_control);
    if ok {
        return Ok(());
    }
    Err(reporter.at(
        ErrorKind::BadValue,
        at,
        false,
        format!("label {label:?} cannot name instances"),
        "use 1 to 64 characters without `#`, control characters or surrounding spaces (vouch appends ` #1`, ` #2`, …)",
    ))
}

fn entry_budget(
    over: Option<BudgetOverride>,
    defaults: &Defaults,
    reporter: &Reporter<'_>,
    at: &KeyPath,
) -> Result<Budget, ManifestError> {
    let over = over.unwrap_or_default();
    over.check(reporter, at)?;
    let set = over.or(&defaults.set);
    let budget = sized(defaults.budget.with(&over), defaults.window, &set);
    check_effective(budget, defaults.window, reporter, at)?;
    Ok(budget)
}

fn non_empty_model(
    model: Option<String>,
    reporter: &Reporter<'_>,
    at: &KeyPath,
) -> Result<Option<String>, ManifestError> {
    if model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(reporter.at(
            ErrorKind::BadValue,
            at,
            false,
            "`model` is empty",
            "name a model, or remove the key to use the composition's model",
        ));
    }
    Ok(model)
}

impl Composition {
    /// Parses and validates a manifest. `origin` is the file it came from: it appears in
    /// every error, and a relative `library` resolves against its folder.
    ///
    /// Errors: [`ManifestError::Invalid`] with the file, line, column, key, problem and
    /// fix for TOML syntax errors, unknown keys, wrong types or values, and every rule in
    /// docs/manifests.md.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Composition, ManifestError> {
        composition(text, origin, None)
    }

    /// [`Composition::from_toml_str`] with its budgets sized for `window` (which wins
    /// over the manifest's own `[model] context_tokens`).
    pub fn from_toml_str_for(
        text: &str,
        origin: &Path,
        window: ContextWindow,
    ) -> Result<Composition, ManifestError> {
        composition(text, origin, Some(window))
    }

    /// Reads and validates the manifest at `path`.
    pub fn load(path: &Path) -> Result<Composition, ManifestError> {
        Self::load_for(path, None)
    }

    /// [`Composition::load`] with its budgets sized for `window` when given.
    pub fn load_for(
        path: &Path,
        window: Option<ContextWindow>,
    ) -> Result<Composition, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_owned(),
            source,
        })?;
        composition(&text, path, window)
    }

    /// The default composition (`manifests/default.toml`, compiled in).
    pub fn builtin_default() -> Composition {
        Self::builtin_default_for(None)
    }

    /// [`Composition::builtin_default`] with its budgets sized for `window` when given.
    pub fn builtin_default_for(window: Option<ContextWindow>) -> Composition {
        composition(
            DEFAULT_TOML,
            Path::new("builtin:manifests/default.toml"),
            window,
        )
        .expect("manifests/default.toml is valid for every window (tested)")
    }

    /// The five-reviewer panel composition (`manifests/panel.toml`, compiled in).
    pub fn builtin_panel() -> Composition {
        Self::from_toml_str(PANEL_TOML, Path::new("builtin:manifests/panel.toml"))
            .expect("manifests/panel.toml is valid (tested)")
    }
}
