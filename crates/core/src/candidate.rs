//! Candidate findings: what lanes propose before verification.

use serde::{Deserialize, Serialize};

use crate::boundary::Area;
use crate::source::Revision;

/// Severity of a candidate or finding, most severe first (`Ord`: `Critical < Low`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Data loss, security breach, or outage on a common path.
    Critical,
    /// Wrong behaviour on a realistic path.
    High,
    /// Wrong behaviour on a narrower path.
    Medium,
    /// Minor but real defect.
    Low,
}

impl Severity {
    /// Every severity, most severe first.
    pub const ALL: [Severity; 4] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
    ];

    /// The contract spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }
}

impl std::str::FromStr for Severity {
    type Err = UnknownValue;

    /// Parses the lower-case contract spelling (`critical`, `high`, `medium`, `low`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Severity::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| UnknownValue::new("severity", text))
    }
}

/// A value of a closed set (severity, revision, verdict, area, role) that is not one of
/// its members: one error type, defined beside [`Area`] and [`crate::Role`] at the
/// plugin boundary.
pub use vouch_abi::UnknownValue;

/// A candidate finding with its host-assigned id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Host-assigned id: see [`candidate_id`]. Never chosen by a model.
    pub id: String,
    /// Label of the stage instance that proposed it (e.g. `bug-review #2`).
    pub proposed_by: String,
    /// Repository-relative path.
    pub path: String,
    /// Side the line numbers refer to.
    pub revision: Revision,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Proposed severity.
    pub severity: Severity,
    /// Review area.
    #[schemars(with = "crate::boundary::AreaSchema")]
    pub area: Area,
    /// One-sentence claim.
    pub claim: String,
    /// The proposer's reasoning.
    pub evidence: String,
}

/// Rule (JSON conventions): candidate ids are assigned by the host as lane label plus
/// index, never by the model: `"<label>/<index>"`, index 0-based in reply order.
pub fn candidate_id(label: &str, index: usize) -> String {
    format!("{label}/{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_severities() {
        assert_eq!(candidate_id("bug-review #2", 0), "bug-review #2/0");
        for s in [
            Severity::Critical,
            Severity::High,
            Severity::Medium,
            Severity::Low,
        ] {
            assert_eq!(s.as_str().parse::<Severity>(), Ok(s));
        }
        assert_eq!(
            "HIGH".parse::<Severity>(),
            Err(UnknownValue::new("severity", "HIGH"))
        );
        assert!(Severity::Critical < Severity::Low);
    }
}
