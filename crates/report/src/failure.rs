//! The document of a run that ended before it had a review report: a usage or
//! configuration error (exit 3) or an internal error (exit 2). Every format has one, so a
//! document on stdout or in `--out` is always valid in its format and says what went wrong.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::ToolInfo;

/// The `schemaVersion` of failure documents.
pub const FAILURE_SCHEMA_VERSION: &str = "vouch.review-failure/1";

/// What kind of error ended the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    /// Usage, configuration or unreadable input (exit 3).
    Usage,
    /// vouch itself failed (exit 2).
    Internal,
}

impl FailureClass {
    /// The exit code of a run that ends with this class of error.
    pub fn exit_code(self) -> i32 {
        match self {
            FailureClass::Usage => 3,
            FailureClass::Internal => 2,
        }
    }

    /// The name the JSON document uses.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Usage => "usage",
            FailureClass::Internal => "internal",
        }
    }
}

/// A run that produced no review report: nothing was reviewed and nothing is published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunFailure {
    /// [`FAILURE_SCHEMA_VERSION`].
    pub schema_version: String,
    /// Who wrote it.
    pub tool: ToolInfo,
    /// The kind of error.
    pub class: FailureClass,
    /// The process's exit code.
    pub exit_code: i32,
    /// The error, as vouch states it to the user.
    pub message: String,
}

impl RunFailure {
    /// A failure document of this vouch version.
    pub fn new(class: FailureClass, message: impl Into<String>) -> Self {
        RunFailure {
            schema_version: FAILURE_SCHEMA_VERSION.into(),
            tool: ToolInfo {
                name: "vouch".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            class,
            exit_code: class.exit_code(),
            message: message.into(),
        }
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        format!(
            "The review did not run ({} error, exit {}); nothing is published.",
            self.class.as_str(),
            self.exit_code
        )
    }
}
