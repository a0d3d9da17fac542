//! Source windows, citations and the source ledger.

use serde::{Deserialize, Serialize};

/// Which side of the change a read or citation refers to.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Revision {
    /// The head commit (the change's new side). The default for every tool.
    Head,
    /// The merge base (the change's old side), so removed code can be cited.
    Base,
}

impl Revision {
    /// The contract spelling (`head`, `base`).
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::Head => "head",
            Revision::Base => "base",
        }
    }
}

impl std::str::FromStr for Revision {
    type Err = crate::candidate::UnknownValue;

    /// Parses the contract spelling (`head`, `base`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Revision::Head, Revision::Base]
            .into_iter()
            .find(|r| r.as_str() == text)
            .ok_or_else(|| crate::candidate::UnknownValue::new("revision", text))
    }
}

/// A contiguous, 1-based, inclusive line window of one file at one revision.
/// This is both what the host records for every read and the shape of a citation
/// (`{revision, path, startLine, endLine}` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceWindow {
    /// Side of the change.
    pub revision: Revision,
    /// Repository-relative path.
    pub path: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive; `>= start_line`.
    pub end_line: u32,
}

/// A citation is a source window a finding rests on.
pub type Citation = SourceWindow;

/// Why a citation is not acceptable.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case", tag = "reason")]
pub enum CitationError {
    /// Empty path, a line number of 0, or `endLine < startLine`.
    #[error("malformed citation {path}:{start_line}-{end_line}")]
    Malformed {
        /// Cited path.
        path: String,
        /// Cited first line.
        start_line: u32,
        /// Cited last line.
        end_line: u32,
    },
    /// The lines were not read (or given) in this execution.
    #[error(
        "citation {path}:{start_line}-{end_line} ({revision:?}) lies outside the source read in this execution"
    )]
    Unread {
        /// Cited side.
        revision: Revision,
        /// Cited path.
        path: String,
        /// Cited first line.
        start_line: u32,
        /// Cited last line.
        end_line: u32,
    },
}

/// Part of one line that was shown: bytes `[start_byte, end_byte)` of `line`. What a
/// read of a line too long to show whole records instead of a window.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineSpan {
    /// Side of the change.
    pub revision: Revision,
    /// Repository-relative path.
    pub path: String,
    /// The line, 1-based.
    pub line: u32,
    /// First byte shown, 0-based.
    pub start_byte: u32,
    /// One past the last byte shown.
    pub end_byte: u32,
}

/// Every source window one stage execution read or was given, in order, and the parts
/// of long lines shown when a line could not be shown whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceLedger {
    /// The windows (whole lines), in the order they were recorded.
    pub windows: Vec<SourceWindow>,
    /// Parts of lines shown cut, in the order they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<LineSpan>,
}

impl SourceLedger {
    /// Records a window that was read or given.
    pub fn record(&mut self, window: SourceWindow) {
        if !self.windows.contains(&window) {
            self.windows.push(window);
        }
    }

    /// Records the part of a line that was shown (a line too long to show whole).
    pub fn record_span(&mut self, span: LineSpan) {
        if span.end_byte > span.start_byte && !self.spans.contains(&span) {
            self.spans.push(span);
        }
    }

    /// Appends every window and span of another ledger.
    pub fn extend(&mut self, other: &SourceLedger) {
        for w in &other.windows {
            self.record(w.clone());
        }
        for s in &other.spans {
            self.record_span(s.clone());
        }
    }

    /// Rule (issue 10, "reads that tell the truth"): bytes `[start, end)` of a line count
    /// as shown only when recorded spans of that line cover every one of them (a window
    /// covering the line shows it whole).
    pub fn shows_bytes(
        &self,
        revision: Revision,
        path: &str,
        line: u32,
        (start, end): (u32, u32),
    ) -> bool {
        let whole = SourceWindow {
            revision,
            path: path.to_string(),
            start_line: line,
            end_line: line,
        };
        if self.check(&whole).is_ok() {
            return true;
        }
        let mut ranges: Vec<(u32, u32)> = self
            .spans
            .iter()
            .filter(|s| s.revision == revision && s.line == line && s.path == path)
            .map(|s| (s.start_byte, s.end_byte))
            .collect();
        ranges.sort();
        let mut next = start;
        for (s, e) in ranges {
            if next >= end || s > next {
                break;
            }
            next = next.max(e);
        }
        next >= end
    }

    /// Rule (verification): every emitted citation must resolve to source the verifier
    /// itself read or was given in this execution. A citation is accepted when every one of
    /// its lines lies in the union of the recorded windows of the same revision and path.
    pub fn check(&self, citation: &Citation) -> Result<(), CitationError> {
        if citation.path.is_empty()
            || citation.start_line == 0
            || citation.end_line < citation.start_line
        {
            return Err(CitationError::Malformed {
                path: citation.path.clone(),
                start_line: citation.start_line,
                end_line: citation.end_line,
            });
        }
        let mut ranges: Vec<(u32, u32)> = self
            .windows
            .iter()
            .filter(|w| w.revision == citation.revision && w.path == citation.path)
            .map(|w| (w.start_line, w.end_line))
            .collect();
        ranges.sort();
        let mut next = citation.start_line; // first line not yet covered
        for (start, end) in ranges {
            if start > next {
                break;
            }
            if end >= next {
                next = end.saturating_add(1);
            }
            if next > citation.end_line {
                return Ok(());
            }
        }
        Err(CitationError::Unread {
            revision: citation.revision,
            path: citation.path.clone(),
            start_line: citation.start_line,
            end_line: citation.end_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(rev: Revision, path: &str, s: u32, e: u32) -> SourceWindow {
        SourceWindow {
            revision: rev,
            path: path.into(),
            start_line: s,
            end_line: e,
        }
    }

    #[test]
    fn citations_must_lie_inside_what_was_read() {
        use Revision::*;
        let mut ledger = SourceLedger::default();
        ledger.record(w(Head, "src/a.rs", 10, 20));
        ledger.record(w(Head, "src/a.rs", 21, 30));
        ledger.record(w(Base, "src/a.rs", 1, 5));
        ledger.record(w(Head, "src/a.rs", 40, 50));
        let cases = [
            (w(Head, "src/a.rs", 12, 18), true),
            (w(Head, "src/a.rs", 10, 30), true), // spans two adjacent windows
            (w(Head, "src/a.rs", 25, 45), false), // gap 31..39
            (w(Head, "src/a.rs", 1, 5), false),  // read only at base
            (w(Base, "src/a.rs", 2, 3), true),
            (w(Head, "src/b.rs", 12, 18), false),
            (w(Head, "./src/a.rs", 12, 18), false),
            (w(Head, "src/a.rs", 0, 3), false),
            (w(Head, "src/a.rs", 20, 19), false),
            (w(Head, "", 1, 1), false),
        ];
        for (citation, ok) in cases {
            assert_eq!(ledger.check(&citation).is_ok(), ok, "{citation:?}");
        }
        assert!(matches!(
            ledger.check(&w(Head, "src/a.rs", 0, 3)),
            Err(CitationError::Malformed { .. })
        ));
    }
}
