//! The reviewed repository's `.vouch/review.toml`: untrusted input (it arrives with the
//! change under review; the caller reads it from the **base** tree). Design,
//! "Configuration and trust": it may enable or disable built-in specialists, set file
//! globs, exclusions, instructions and budgets up to the user's limits — never an
//! endpoint, an API key variable, or a dynamic plugin path.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::budget::BudgetOverride;
use super::composition::PluginSource;
use super::composition::{Composition, GENERIC_INVESTIGATOR_ID};
use super::error::{ErrorKind, ManifestError, Reporter};
use super::locate::{KeyPath, Segment};
use super::select::{
    ExclusionSource, FileExclusions, FileSelection, REPO_OVERRIDE_PATH, RawSelect, Selection,
};
use super::validate::selection_not_allowed;

/// Longest `instructions` string accepted, in bytes.
pub const MAX_INSTRUCTIONS_BYTES: usize = 8 * 1024;

/// Keys the repository file may never set, at any depth, with the reason given.
const FORBIDDEN: &[(&str, &str)] = &[
    ("model", ENDPOINT_REASON),
    ("base_url", ENDPOINT_REASON),
    ("endpoint", ENDPOINT_REASON),
    ("api_key", ENDPOINT_REASON),
    ("api_key_env", ENDPOINT_REASON),
    ("library", PLUGIN_REASON),
    ("sha256", PLUGIN_REASON),
    (
        "verifier",
        "the verifier is chosen only by your own composition",
    ),
];
const ENDPOINT_REASON: &str =
    "endpoints, models and API keys come only from your flags, environment or --manifest";
const PLUGIN_REASON: &str = "dynamic plugins are loaded only from your flags, environment or --manifest, never from a file inside the reviewed repository";

const ALLOWED: &str = "it may set only `instructions`, [files] exclude, [budget] and [specialist.<id>] enabled / select / budget";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepo {
    instructions: Option<String>,
    files: Option<RawRepoFiles>,
    budget: Option<BudgetOverride>,
    #[serde(default)]
    specialist: BTreeMap<String, RawRepoSpecialist>,
}

/// The repository file's `[files]`: only `exclude` (how binary files count is the
/// composition's or the user's decision, never the reviewed repository's).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepoFiles {
    exclude: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepoSpecialist {
    enabled: Option<bool>,
    select: Option<RawSelect>,
    budget: Option<BudgetOverride>,
}

/// One `[specialist.<id>]` table of the repository file.
#[derive(Debug, Clone)]
pub struct SpecialistOverride {
    /// The specialist id it applies to (every composition entry with that id).
    pub id: String,
    /// Enable or disable the entry (built-in specialists only).
    pub enabled: Option<bool>,
    /// Replacement file selection.
    pub selection: Option<Box<Selection>>,
    /// Budget caps for the entry (never raise it).
    pub budget: BudgetOverride,
}

/// A parsed, validated `.vouch/review.toml`.
#[derive(Debug, Clone)]
pub struct RepoOverrides {
    text: String,
    /// Extra reviewer instructions (at most [`MAX_INSTRUCTIONS_BYTES`]).
    pub instructions: Option<String>,
    /// Exclusion globs added to the composition's.
    pub exclude: Vec<String>,
    /// Caps on every stage instance's budget.
    pub budget: BudgetOverride,
    /// Per-specialist settings, in the order the file lists them.
    pub specialists: Vec<SpecialistOverride>,
}

impl RepoOverrides {
    /// What the file changes in the composition, in words, in the file's order: the
    /// specialists it disables, enables or re-selects, the budgets it caps, the files it
    /// excludes and whether it adds instructions. A review states these, so a reviewer
    /// set the repository narrowed is never narrowed in silence.
    pub fn changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for over in &self.specialists {
            match over.enabled {
                Some(false) => out.push(format!("disabled `{}`", over.id)),
                Some(true) => out.push(format!("enabled `{}`", over.id)),
                None => {}
            }
            if over.selection.is_some() {
                out.push(format!("replaced the file selection of `{}`", over.id));
            }
            if over.budget != BudgetOverride::default() {
                out.push(format!("capped the budget of `{}`", over.id));
            }
        }
        if !self.exclude.is_empty() {
            out.push(format!("excluded {}", self.exclude.join(", ")));
        }
        if self.budget != BudgetOverride::default() {
            out.push("capped every stage's budget".into());
        }
        if self.instructions.is_some() {
            out.push("added reviewer instructions".into());
        }
        out
    }

    /// Parses the repository file. Errors name the file, line, column and key:
    /// [`ErrorKind::ForbiddenInRepository`] for an endpoint, model, API key variable,
    /// dynamic plugin path/pin or verifier; [`ErrorKind::UnknownKey`] for any other key
    /// outside the restricted schema; plus the composition's rules for globs, languages
    /// and budgets.
    pub fn from_toml_str(text: &str) -> Result<RepoOverrides, ManifestError> {
        let reporter = Reporter::new(PathBuf::from(REPO_OVERRIDE_PATH), text)?;
        forbid_keys(&reporter)?;
        let raw: RawRepo = toml::from_str(text).map_err(|e| {
            let mut error = reporter.serde(&e, "remove it from .vouch/review.toml");
            if let ManifestError::Invalid(d) = &mut error
                && d.kind == ErrorKind::UnknownKey
            {
                let key = d.location.key.clone().unwrap_or_default();
                d.problem = format!(
                    "the repository file {REPO_OVERRIDE_PATH} may not set `{key}`; {ALLOWED}"
                );
            }
            error
        })?;
        let root = KeyPath::root();
        if let Some(text) = &raw.instructions
            && text.len() > MAX_INSTRUCTIONS_BYTES
        {
            return Err(reporter.at(
                ErrorKind::BadValue,
                &root.key("instructions"),
                false,
                format!(
                    "`instructions` is {} bytes, above the limit of {MAX_INSTRUCTIONS_BYTES}",
                    text.len()
                ),
                "shorten the instructions, or point to a policy file such as AGENTS.md",
            ));
        }
        let budget = raw.budget.unwrap_or_default();
        budget.check(&reporter, &root.key("budget"))?;
        let exclude = raw.files.and_then(|f| f.exclude).unwrap_or_default();
        // Validate the globs where they are written (the result is rebuilt on apply).
        FileExclusions::default().extended(
            &exclude,
            &ExclusionSource::Repository,
            &reporter,
            &root.key("files").key("exclude"),
        )?;
        let mut specialists = Vec::new();
        for (id, entry) in raw.specialist {
            let path = root.key("specialist").key(&id);
            let selection = match entry.select {
                Some(_) if id == GENERIC_INVESTIGATOR_ID => {
                    return Err(selection_not_allowed(&reporter, &path.key("select")));
                }
                Some(select) => Some(Box::new(Selection::build(
                    &select,
                    &reporter,
                    &path.key("select"),
                )?)),
                None => None,
            };
            let budget = entry.budget.unwrap_or_default();
            budget.check(&reporter, &path.key("budget"))?;
            specialists.push(SpecialistOverride {
                id,
                enabled: entry.enabled,
                selection,
                budget,
            });
        }
        // Report and apply in the order the file lists them, not by id.
        if let Some(locator) = &reporter.locator {
            specialists.sort_by_key(|s| {
                locator
                    .find(&root.key("specialist").key(&s.id), true)
                    .map(|p| (p.line, p.column))
            });
        }
        Ok(RepoOverrides {
            text: text.to_owned(),
            instructions: raw.instructions,
            exclude,
            budget,
            specialists,
        })
    }
}

impl Composition {
    /// Applies the repository file on top of this composition, all or nothing:
    /// `instructions` are set; exclusions are added; budgets are capped (the lower of
    /// the user's value and the repository's, never raised) for every instance and the
    /// verifier; `[specialist.<id>]` enables or disables every entry with that id (built-in
    /// entries only), replaces its selection and caps its budget.
    ///
    /// Errors: [`ErrorKind::UnknownSpecialist`] for an id the composition does not list,
    /// [`ErrorKind::ForbiddenInRepository`] for enabling or disabling a dynamic plugin,
    /// [`ErrorKind::NoEnabledSpecialist`] when nothing would be left to review.
    pub fn apply_repo_overrides(&mut self, repo: &RepoOverrides) -> Result<(), ManifestError> {
        let reporter = Reporter::new(PathBuf::from(REPO_OVERRIDE_PATH), &repo.text)?;
        let root = KeyPath::root();
        let mut next = self.clone();
        if repo.instructions.is_some() {
            next.instructions = repo.instructions.clone();
        }
        next.exclusions = next.exclusions.extended(
            &repo.exclude,
            &ExclusionSource::Repository,
            &reporter,
            &root.key("files").key("exclude"),
        )?;
        next.budget = next.budget.capped_by(&repo.budget);
        next.verifier.budget = next.verifier.budget.capped_by(&repo.budget);
        for entry in &mut next.specialists {
            entry.budget = entry.budget.capped_by(&repo.budget);
        }
        for over in &repo.specialists {
            let path = root.key("specialist").key(&over.id);
            let mut matched = false;
            for entry in next.specialists.iter_mut().filter(|e| e.id == over.id) {
                matched = true;
                if let Some(enabled) = over.enabled {
                    if matches!(entry.source, PluginSource::Dynamic { .. }) {
                        return Err(reporter.at(
                            ErrorKind::ForbiddenInRepository,
                            &path.key("enabled"),
                            true,
                            format!(
                                "the repository file may not enable or disable `{}`, a dynamically loaded plugin",
                                over.id
                            ),
                            "remove `enabled`; only built-in specialists can be switched by the repository",
                        ));
                    }
                    entry.enabled = enabled;
                }
                if let Some(selection) = &over.selection {
                    entry.selection = FileSelection::Selected(selection.clone());
                }
                entry.budget = entry.budget.capped_by(&over.budget);
            }
            if !matched {
                let ids: Vec<&str> = self.specialists.iter().map(|e| e.id.as_str()).collect();
                return Err(reporter.at(
                    ErrorKind::UnknownSpecialist,
                    &path,
                    true,
                    format!("the composition has no specialist `{}`", over.id),
                    format!(
                        "the repository file can only configure specialists the composition lists: {}",
                        ids.join(", ")
                    ),
                ));
            }
        }
        if !next.specialists.iter().any(|e| e.enabled) {
            return Err(reporter.at(
                ErrorKind::NoEnabledSpecialist,
                &root.key("specialist"),
                true,
                "the repository file disables every specialist, so nothing would review the change",
                "keep at least one specialist enabled",
            ));
        }
        *self = next;
        Ok(())
    }
}

/// Rejects forbidden keys before the schema check, so the error says why.
fn forbid_keys(reporter: &Reporter<'_>) -> Result<(), ManifestError> {
    let Some(locator) = &reporter.locator else {
        return Ok(());
    };
    let mut first: Option<(usize, &KeyPath, &str, &str)> = None;
    for (path, offset) in locator.keys() {
        let segments = path.segments();
        // Direct children of `[specialist]` are specialist ids, not settings.
        if segments.len() == 2 && segments[0] == Segment::Key("specialist".to_owned()) {
            continue;
        }
        let Some(Segment::Key(name)) = segments.last() else {
            continue;
        };
        let Some((key, reason)) = FORBIDDEN.iter().find(|(k, _)| k == name) else {
            continue;
        };
        if first.is_none_or(|(o, ..)| offset < o) {
            first = Some((offset, path, key, reason));
        }
    }
    match first {
        None => Ok(()),
        Some((_, path, key, reason)) => Err(reporter.at(
            ErrorKind::ForbiddenInRepository,
            path,
            true,
            format!("the repository file {REPO_OVERRIDE_PATH} may not set `{key}`: {reason}"),
            format!("remove `{path}` from {REPO_OVERRIDE_PATH}"),
        )),
    }
}
