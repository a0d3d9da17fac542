//! Manifest errors: every one names the file, the line and column, the offending key,
//! what is wrong and what to do about it.

use std::fmt;
use std::path::PathBuf;

use super::locate::{KeyPath, Locator, Position, position_in};

/// The class of a manifest error, stable for tests and callers (never derived from the
/// message text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The manifest file could not be read.
    Unreadable,
    /// The text is not valid TOML.
    Syntax,
    /// A key the schema does not define (typo, or a key from another section).
    UnknownKey,
    /// A value of the wrong type, out of range, or not one of the allowed words.
    BadValue,
    /// A required key is absent.
    MissingKey,
    /// `sha256` is not 64 hexadecimal digits.
    BadSha256,
    /// `library` is set without the `sha256` pin that must be checked before loading it.
    LibraryWithoutSha256,
    /// `sha256` is set without a `library` it could pin.
    Sha256WithoutLibrary,
    /// Two specialist entries produce the same instance label.
    DuplicateLabel,
    /// `instances = 0`.
    ZeroInstances,
    /// `concurrency = 0`.
    ZeroConcurrency,
    /// The composition has no `[verifier]` section.
    MissingVerifier,
    /// A file glob does not compile.
    BadGlob,
    /// A `languages` entry is not in the language table.
    UnknownLanguage,
    /// A file selection on a specialist that always receives every changed file.
    SelectionNotAllowed,
    /// A budget value of 0, or an output budget above the total budget.
    BadBudget,
    /// No specialist is enabled, so nothing would review the change.
    NoEnabledSpecialist,
    /// The repository's `.vouch/review.toml` sets a key only the user may set.
    ForbiddenInRepository,
    /// The repository's `.vouch/review.toml` names a specialist the composition lacks.
    UnknownSpecialist,
}

impl ErrorKind {
    /// The kebab-case name used in test fixtures (`# expect-kind: unknown-key`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreadable => "unreadable",
            ErrorKind::Syntax => "syntax",
            ErrorKind::UnknownKey => "unknown-key",
            ErrorKind::BadValue => "bad-value",
            ErrorKind::MissingKey => "missing-key",
            ErrorKind::BadSha256 => "bad-sha256",
            ErrorKind::LibraryWithoutSha256 => "library-without-sha256",
            ErrorKind::Sha256WithoutLibrary => "sha256-without-library",
            ErrorKind::DuplicateLabel => "duplicate-label",
            ErrorKind::ZeroInstances => "zero-instances",
            ErrorKind::ZeroConcurrency => "zero-concurrency",
            ErrorKind::MissingVerifier => "missing-verifier",
            ErrorKind::BadGlob => "bad-glob",
            ErrorKind::UnknownLanguage => "unknown-language",
            ErrorKind::SelectionNotAllowed => "selection-not-allowed",
            ErrorKind::BadBudget => "bad-budget",
            ErrorKind::NoEnabledSpecialist => "no-enabled-specialist",
            ErrorKind::ForbiddenInRepository => "forbidden-in-repository",
            ErrorKind::UnknownSpecialist => "unknown-specialist",
        }
    }
}

/// Where an error is: the file, the 1-based position when known, the dotted key path
/// (e.g. `specialist[1].sha256`, array indexes 0-based) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The manifest file as given (or `builtin:manifests/<name>.toml`, or
    /// `.vouch/review.toml` for the repository file).
    pub origin: PathBuf,
    /// Line and column of the offending key or value.
    pub position: Option<Position>,
    /// The offending key's dotted path.
    pub key: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin.display())?;
        if let Some(p) = self.position {
            write!(f, ":{}:{}", p.line, p.column)?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        Ok(())
    }
}

/// One invalid manifest: its class, location, the problem and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The error class.
    pub kind: ErrorKind,
    /// File, line, column and key.
    pub location: Location,
    /// What is wrong, one sentence.
    pub problem: String,
    /// What to do about it, one sentence.
    pub help: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}\n  help: {}",
            self.location, self.problem, self.help
        )
    }
}

/// Any error loading, validating or overriding a composition manifest.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error(
        "cannot read manifest {}: {source}\n  help: check the path given to --manifest",
        path.display()
    )]
    Read {
        /// The path that was opened.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// The manifest (or repository override file) is invalid.
    #[error("{0}")]
    Invalid(Box<Diagnostic>),
}

impl ManifestError {
    /// The error class.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ManifestError::Read { .. } => ErrorKind::Unreadable,
            ManifestError::Invalid(d) => d.kind,
        }
    }

    /// The location, for invalid manifests.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ManifestError::Read { .. } => None,
            ManifestError::Invalid(d) => Some(&d.location),
        }
    }
}

/// Builds located errors for one document.
pub(crate) struct Reporter<'a> {
    pub(crate) origin: PathBuf,
    pub(crate) text: &'a str,
    pub(crate) locator: Option<Locator<'a>>,
}

impl<'a> Reporter<'a> {
    /// Parses the document for locating; a syntax error is returned as a located error.
    pub(crate) fn new(origin: PathBuf, text: &'a str) -> Result<Self, ManifestError> {
        match Locator::new(text) {
            Ok(locator) => Ok(Self {
                origin,
                text,
                locator: Some(locator),
            }),
            Err(e) => {
                let reporter = Self {
                    origin,
                    text,
                    locator: None,
                };
                Err(reporter.syntax(&e))
            }
        }
    }

    fn syntax(&self, e: &toml::de::Error) -> ManifestError {
        let position = e.span().map(|s| position_in(self.text, s.start));
        self.make(
            ErrorKind::Syntax,
            position,
            None,
            format!("invalid TOML: {}", e.message()),
            "fix the TOML syntax at this position (see https://toml.io)".to_owned(),
        )
    }

    /// Converts a serde error from the toml crate: unknown keys point at the key, bad
    /// values at the value.
    pub(crate) fn serde(&self, e: &toml::de::Error, unknown_help: &str) -> ManifestError {
        let offset = e.span().map(|s| s.start);
        let hit = match (&self.locator, offset) {
            (Some(locator), Some(offset)) => locator.hit(offset),
            _ => None,
        };
        let position = offset.map(|o| position_in(self.text, o));
        match hit {
            Some(hit) if hit.on_key => self.make(
                ErrorKind::UnknownKey,
                position,
                Some(hit.path.to_string()),
                e.message().to_owned(),
                unknown_help.to_owned(),
            ),
            hit => self.make(
                ErrorKind::BadValue,
                position,
                hit.map(|h| h.path.to_string()),
                e.message().to_owned(),
                "give this key a value of the documented type (docs/manifests.md)".to_owned(),
            ),
        }
    }

    /// An error at `path` (its value, or its key when `on_key`).
    pub(crate) fn at(
        &self,
        kind: ErrorKind,
        path: &KeyPath,
        on_key: bool,
        problem: impl Into<String>,
        help: impl Into<String>,
    ) -> ManifestError {
        let position = self.locator.as_ref().and_then(|l| l.find(path, on_key));
        self.make(
            kind,
            position,
            Some(path.to_string()),
            problem.into(),
            help.into(),
        )
    }

    fn make(
        &self,
        kind: ErrorKind,
        position: Option<Position>,
        key: Option<String>,
        problem: String,
        help: String,
    ) -> ManifestError {
        ManifestError::Invalid(Box::new(Diagnostic {
            kind,
            location: Location {
                origin: self.origin.clone(),
                position,
                key,
            },
            problem,
            help,
        }))
    }
}
