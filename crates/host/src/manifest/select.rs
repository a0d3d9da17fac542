//! File selection (which changed files a specialist instance receives) and exclusions
//! (which changed files no instance receives, listed in the report with a reason).
//!
//! Globs follow the `globset` crate's syntax with `literal_separator` on: `*` and `?`
//! never cross `/`, `**/` matches any number of folders (including none), `{a,b}`
//! alternates. Patterns match repository-relative paths as they appear in the canonical
//! expected-file list (no `./`, no leading `/`).

use std::fmt;
use std::path::PathBuf;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use super::error::{ErrorKind, ManifestError, Reporter};
use super::locate::KeyPath;

/// Where a reviewed repository's own file lives, relative to its root (read from the base
/// tree; [`super::RepoOverrides`]). Its `[files].exclude` entries are an exclusion source.
pub const REPO_OVERRIDE_PATH: &str = ".vouch/review.toml";

/// Language names accepted in `select.languages`, with the file extensions (compared
/// case-insensitively against the text after the last `.` of the file name) each stands
/// for. Documented in docs/manifests.md; files without an extension match no language.
pub const LANGUAGES: &[(&str, &[&str])] = &[
    ("c", &["c", "h"]),
    (
        "cpp",
        &["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "h"],
    ),
    ("csharp", &["cs"]),
    ("css", &["css", "scss", "sass", "less"]),
    ("go", &["go"]),
    ("html", &["html", "htm"]),
    ("java", &["java"]),
    ("javascript", &["js", "mjs", "cjs", "jsx"]),
    ("json", &["json"]),
    ("kotlin", &["kt", "kts"]),
    ("markdown", &["md", "markdown"]),
    ("php", &["php"]),
    ("python", &["py", "pyi"]),
    ("ruby", &["rb"]),
    ("rust", &["rs"]),
    ("scala", &["scala", "sc"]),
    ("shell", &["sh", "bash", "zsh"]),
    ("sql", &["sql"]),
    ("swift", &["swift"]),
    ("toml", &["toml"]),
    ("typescript", &["ts", "tsx", "mts", "cts"]),
    ("yaml", &["yaml", "yml"]),
];

/// A `select` table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSelect {
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    languages: Option<Vec<String>>,
}

/// A validated file selection. A path is selected when it matches an `include` glob or
/// has an extension of a listed language (or both lists are empty), and matches no
/// `exclude` glob of the selection.
#[derive(Debug, Clone)]
pub struct Selection {
    include: Vec<String>,
    exclude: Vec<String>,
    languages: Vec<String>,
    include_set: GlobSet,
    exclude_set: GlobSet,
    extensions: Vec<&'static str>,
}

impl Selection {
    /// The include globs as written.
    pub fn include(&self) -> &[String] {
        &self.include
    }

    /// The selection's own exclude globs as written.
    pub fn exclude(&self) -> &[String] {
        &self.exclude
    }

    /// The language names as written (lowercase).
    pub fn languages(&self) -> &[String] {
        &self.languages
    }

    /// Whether `path` (repository-relative, `/`-separated) is selected.
    pub fn matches(&self, path: &str) -> bool {
        let by_pattern = self.include_set.is_match(path);
        let by_language = extension(path).is_some_and(|ext| {
            self.extensions
                .iter()
                .any(|known| known.eq_ignore_ascii_case(ext))
        });
        let wanted =
            (self.include.is_empty() && self.languages.is_empty()) || by_pattern || by_language;
        wanted && !self.exclude_set.is_match(path)
    }

    /// Validates a `select` table written at `path`.
    pub(crate) fn build(
        raw: &RawSelect,
        reporter: &Reporter<'_>,
        path: &KeyPath,
    ) -> Result<Selection, ManifestError> {
        let include = raw.include.clone().unwrap_or_default();
        let exclude = raw.exclude.clone().unwrap_or_default();
        let languages = raw.languages.clone().unwrap_or_default();
        let include_set = glob_set(&include, reporter, &path.key("include"))?;
        let exclude_set = glob_set(&exclude, reporter, &path.key("exclude"))?;
        let mut extensions = Vec::new();
        for (i, name) in languages.iter().enumerate() {
            let Some((_, exts)) = LANGUAGES.iter().find(|(known, _)| known == name) else {
                let known: Vec<&str> = LANGUAGES.iter().map(|(n, _)| *n).collect();
                return Err(reporter.at(
                    ErrorKind::UnknownLanguage,
                    &path.key("languages").index(i),
                    false,
                    format!("unknown language `{name}`"),
                    format!(
                        "use one of {} or select the files with `include` globs",
                        known.join(", ")
                    ),
                ));
            };
            extensions.extend_from_slice(exts);
        }
        Ok(Selection {
            include,
            exclude,
            languages,
            include_set,
            exclude_set,
            extensions,
        })
    }
}

/// What files a stage instance receives.
#[derive(Debug, Clone)]
pub enum FileSelection {
    /// Every reviewable changed file (the generic investigator always; any specialist
    /// without a `select` table).
    All,
    /// Only the files a [`Selection`] matches.
    Selected(Box<Selection>),
}

impl FileSelection {
    /// Whether `path` is selected.
    pub fn matches(&self, path: &str) -> bool {
        match self {
            FileSelection::All => true,
            FileSelection::Selected(selection) => selection.matches(path),
        }
    }
}

/// Who declared an exclusion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExclusionSource {
    /// `[files].exclude` of the user's composition manifest at this origin.
    Composition(PathBuf),
    /// `[files].exclude` of the reviewed repository's `.vouch/review.toml` (base tree).
    Repository,
}

/// One exclusion rule; its `Display` is the reason the report states for a file it
/// excludes, e.g. "matches exclusion `**/Cargo.lock` in `[files].exclude` of
/// manifests/default.toml".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    /// The glob as written.
    pub pattern: String,
    /// Who declared it.
    pub source: ExclusionSource,
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            ExclusionSource::Composition(origin) => write!(
                f,
                "matches exclusion `{}` in [files].exclude of {}",
                self.pattern,
                origin.display()
            ),
            ExclusionSource::Repository => write!(
                f,
                "matches exclusion `{}` in [files].exclude of the repository's {}",
                self.pattern, REPO_OVERRIDE_PATH
            ),
        }
    }
}

/// The exclusion rules of a composition, user's first, then the repository's.
#[derive(Debug, Clone)]
pub struct FileExclusions {
    rules: Vec<Exclusion>,
    set: GlobSet,
}

impl Default for FileExclusions {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            set: GlobSet::empty(),
        }
    }
}

impl FileExclusions {
    /// Every rule, in declaration order.
    pub fn rules(&self) -> &[Exclusion] {
        &self.rules
    }

    /// The first rule that matches `path`, if any.
    pub fn first_match(&self, path: &str) -> Option<&Exclusion> {
        self.set.matches(path).first().map(|&i| &self.rules[i])
    }

    /// These rules plus `patterns` from `source`, validated at `path`.
    pub(crate) fn extended(
        &self,
        patterns: &[String],
        source: &ExclusionSource,
        reporter: &Reporter<'_>,
        path: &KeyPath,
    ) -> Result<FileExclusions, ManifestError> {
        // Validate the new patterns where they were written before rebuilding the set.
        glob_set(patterns, reporter, path)?;
        let mut rules = self.rules.clone();
        rules.extend(patterns.iter().map(|pattern| Exclusion {
            pattern: pattern.clone(),
            source: source.clone(),
        }));
        let patterns: Vec<String> = rules.iter().map(|r| r.pattern.clone()).collect();
        let set = glob_set(&patterns, reporter, path)?;
        Ok(FileExclusions { rules, set })
    }
}

fn glob_set(
    patterns: &[String],
    reporter: &Reporter<'_>,
    path: &KeyPath,
) -> Result<GlobSet, ManifestError> {
    let mut builder = GlobSetBuilder::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let at = path.index(i);
        if pattern.is_empty() || pattern.starts_with('/') || pattern.starts_with("./") {
            return Err(reporter.at(
                ErrorKind::BadGlob,
                &at,
                false,
                format!("glob `{pattern}` can never match a changed file"),
                "write patterns relative to the repository root without a leading `/` or `./`, e.g. `src/**/*.rs`",
            ));
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                reporter.at(
                    ErrorKind::BadGlob,
                    &at,
                    false,
                    format!("invalid glob `{pattern}`: {}", e.kind()),
                    "fix the pattern (syntax: `*`, `?`, `**/`, `[abc]`, `{a,b}`)",
                )
            })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| {
        reporter.at(
            ErrorKind::BadGlob,
            path,
            false,
            format!("invalid globs: {e}"),
            "fix the patterns",
        )
    })
}

fn extension(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then_some(ext)
}
