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
    type Err = vouch_abi::UnknownValue;

    /// Parses the contract spelling (`head`, `base`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Revision::Head, Revision::Base]
            .into_iter()
            .find(|r| r.as_str() == text)
            .ok_or_else(|| vouch_abi::UnknownValue::new("revision", text))
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
        "citation {path}:{start_line}-{end_line} at {} lies outside the source read in this execution",
        revision.as_str()
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
    /// Whether the span ends where the line ends (its last byte was shown): with spans
    /// covering every byte before it, the whole line was shown in pieces.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reaches_end: bool,
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
    /// Files whose metadata-only patch was shown (a binary file's sizes, blob ids and
    /// type; a mode change; a pure rename or copy): what such a file has to show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metadata: Vec<String>,
}

/// The lines of one file at one revision that a source ledger holds: the union of its
/// windows as sorted, disjoint, non-adjacent 1-based inclusive ranges
/// (`{"revision": "head", "path": "src/a.rs", "lines": [[6, 12], [16, 22]]}`). A stage
/// record's ledger is a list of these, one per path and revision; a citation lies inside
/// it when every cited line is in one of the ranges of its path and revision.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileLines {
    /// Side of the change.
    pub revision: Revision,
    /// Repository-relative path.
    pub path: String,
    /// Inclusive `[first, last]` line ranges, sorted, neither overlapping nor adjacent.
    pub lines: Vec<(u32, u32)>,
}

/// Rule (compact ledger): the union of inclusive line ranges as sorted ranges where
/// overlapping or adjacent ranges are merged (6-12 and 13-20 become 6-20). A reversed
/// range (`end < start`) holds no line and is dropped.
pub fn merge_line_ranges(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.retain(|(start, end)| start <= end);
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

impl SourceLedger {
    /// Rule (compact ledger): one entry per path and revision that the ledger's windows
    /// name, holding the union of their lines ([`merge_line_ranges`]); entries ordered by
    /// path, then base before head; a path whose windows hold no line (reversed) has
    /// none. Spans are not part of it (a record keeps them as they are). Every citation [`SourceLedger::check`] accepts or refuses, the ledger
    /// rebuilt by [`SourceLedger::from_compact`] accepts or refuses alike.
    pub fn compact(&self) -> Vec<FileLines> {
        let mut by_file: std::collections::BTreeMap<(&str, bool), Vec<(u32, u32)>> =
            std::collections::BTreeMap::new();
        for w in &self.windows {
            let key = (w.path.as_str(), w.revision == Revision::Head);
            by_file
                .entry(key)
                .or_default()
                .push((w.start_line, w.end_line));
        }
        by_file
            .into_iter()
            .filter_map(|((path, head), ranges)| {
                let lines = merge_line_ranges(ranges);
                (!lines.is_empty()).then(|| FileLines {
                    revision: if head { Revision::Head } else { Revision::Base },
                    path: path.to_string(),
                    lines,
                })
            })
            .collect()
    }

    /// The ledger a compact form and its line spans stand for: one window per range, in
    /// the compact form's order. The one way a ledger is rebuilt from a stage record.
    pub fn from_compact(
        files: &[FileLines],
        spans: &[LineSpan],
        metadata: &[String],
    ) -> SourceLedger {
        let windows = files
            .iter()
            .flat_map(|f| {
                f.lines.iter().map(|&(start_line, end_line)| SourceWindow {
                    revision: f.revision,
                    path: f.path.clone(),
                    start_line,
                    end_line,
                })
            })
            .collect();
        SourceLedger {
            windows,
            spans: spans.to_vec(),
            metadata: metadata.to_vec(),
        }
    }

    /// How many windows and line spans were recorded.
    pub fn recorded(&self) -> usize {
        self.windows.len() + self.spans.len()
    }

    /// Records a window that was read or given.
    pub fn record(&mut self, window: SourceWindow) {
        if !self.windows.contains(&window) {
            self.windows.push(window);
        }
    }

    /// Records that the metadata-only patch of `path` was shown.
    pub fn record_metadata(&mut self, path: &str) {
        if !self.metadata.iter().any(|p| p == path) {
            self.metadata.push(path.to_owned());
        }
    }

    /// Whether the metadata-only patch of `path` was shown.
    pub fn shows_metadata(&self, path: &str) -> bool {
        self.metadata.iter().any(|p| p == path)
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
        for p in &other.metadata {
            self.record_metadata(p);
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

    /// Rule (issue 28, "every changed line reachable"): a line counts as shown whole when
    /// a window covers it, or when spans cover every byte of it: from its first byte, with
    /// no gap, through a span that reaches the line's end.
    pub fn shows_line(&self, revision: Revision, path: &str, line: u32) -> bool {
        self.spans_cover_line(revision, path, line)
            || self
                .check(&SourceWindow {
                    revision,
                    path: path.to_string(),
                    start_line: line,
                    end_line: line,
                })
                .is_ok()
    }

    /// Whether spans cover every byte of `line`: from its first byte, with no gap, through
    /// a span that reaches the line's end.
    fn spans_cover_line(&self, revision: Revision, path: &str, line: u32) -> bool {
        let mut spans: Vec<&LineSpan> = self
            .spans
            .iter()
            .filter(|s| s.revision == revision && s.line == line && s.path == path)
            .collect();
        if !spans.iter().any(|s| s.reaches_end) {
            return false;
        }
        spans.sort_by_key(|s| s.start_byte);
        let mut next = 0;
        for s in &spans {
            if s.start_byte > next {
                return false;
            }
            if s.reaches_end {
                return true;
            }
            next = next.max(s.end_byte);
        }
        false
    }

    /// Rule (verification): every emitted citation must resolve to source the verifier
    /// itself read or was given in this execution. A citation is accepted when every one of
    /// its lines was shown whole: it lies in the union of the recorded windows of the same
    /// revision and path, or (a line too long for one read) its spans cover all its bytes.
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
        let ranges: Vec<(u32, u32)> = self
            .windows
            .iter()
            .filter(|w| w.revision == citation.revision && w.path == citation.path)
            .map(|w| (w.start_line, w.end_line))
            .collect();
        let merged = merge_line_ranges(ranges);
        let mut ranges = merged.iter().peekable();
        // The first line not yet shown whole (u64: a window may end at u32::MAX).
        let mut next = u64::from(citation.start_line);
        while next <= u64::from(citation.end_line) {
            while ranges.next_if(|(_, end)| u64::from(*end) < next).is_some() {}
            match ranges.peek() {
                Some(&&(start, end)) if u64::from(start) <= next => next = u64::from(end) + 1,
                _ if self.spans_cover_line(citation.revision, &citation.path, next as u32) => {
                    next += 1;
                }
                _ => {
                    return Err(CitationError::Unread {
                        revision: citation.revision,
                        path: citation.path.clone(),
                        start_line: citation.start_line,
                        end_line: citation.end_line,
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    /// A span of a line as a table writes it: `(start, end, reaches_end)`.
    type Piece = (u32, u32, bool);

    /// Spans of line 3 of `a.js` at head.
    fn pieces(spans: &[Piece]) -> SourceLedger {
        let mut ledger = SourceLedger::default();
        for &(start_byte, end_byte, reaches_end) in spans {
            ledger.record_span(LineSpan {
                revision: Revision::Head,
                path: "a.js".into(),
                line: 3,
                start_byte,
                end_byte,
                reaches_end,
            });
        }
        ledger
    }

    #[test]
    fn a_line_is_shown_whole_by_a_window_or_by_spans_covering_every_byte() {
        // (spans of line 3, shown whole)
        let cases: &[(&[Piece], bool)] = &[
            (&[], false),
            (&[(0, 900, true)], true),
            (&[(0, 400, false), (400, 900, true)], true),
            (&[(400, 900, true), (0, 400, false)], true),
            (&[(0, 500, false), (300, 900, true)], true),
            (&[(0, 400, false), (401, 900, true)], false), // byte 400 never shown
            (&[(1, 400, false), (400, 900, true)], false), // byte 0 never shown
            (&[(0, 400, false), (400, 800, false)], false), // the end never reached
            (&[(400, 900, true)], false),
            (&[(0, 900, false)], false), // a cut line: its end not shown
        ];
        for (spans, whole) in cases {
            let mut ledger = pieces(spans);
            assert_eq!(
                ledger.shows_line(Revision::Head, "a.js", 3),
                *whole,
                "{spans:?}"
            );
            // A citation of the line stands exactly when it was shown whole, also beside
            // windows of the lines around it.
            assert_eq!(
                ledger.check(&w(Revision::Head, "a.js", 3, 3)).is_ok(),
                *whole,
                "{spans:?} cited"
            );
            assert!(
                !ledger.shows_line(Revision::Base, "a.js", 3),
                "{spans:?} at base"
            );
            assert!(
                !ledger.shows_line(Revision::Head, "b.js", 3),
                "{spans:?} of b.js"
            );
            assert!(
                !ledger.shows_line(Revision::Head, "a.js", 4),
                "{spans:?} line 4"
            );
            ledger.record(w(Revision::Head, "a.js", 1, 2));
            ledger.record(w(Revision::Head, "a.js", 4, 9));
            assert_eq!(
                ledger.check(&w(Revision::Head, "a.js", 1, 9)).is_ok(),
                *whole,
                "{spans:?} cited with lines around it"
            );
        }
        let mut window = pieces(&[]);
        window.record(w(Revision::Head, "a.js", 2, 5));
        assert!(window.shows_line(Revision::Head, "a.js", 3));
    }

    /// Inclusive line ranges, as a table writes them.
    type Ranges = &'static [(u32, u32)];

    #[test]
    fn line_ranges_merge_when_they_overlap_or_touch() {
        let cases: [(Ranges, Ranges); 10] = [
            (&[], &[]),
            (&[(6, 12)], &[(6, 12)]),
            (&[(6, 12), (13, 20)], &[(6, 20)]), // adjacent
            (&[(6, 12), (14, 20)], &[(6, 12), (14, 20)]), // one line apart
            (&[(6, 12), (8, 10)], &[(6, 12)]),  // contained
            (&[(6, 12), (10, 20)], &[(6, 20)]), // overlapping
            (&[(16, 22), (6, 12)], &[(6, 12), (16, 22)]), // recorded out of order
            (&[(6, 12), (6, 12), (6, 12)], &[(6, 12)]), // duplicates
            (&[(12, 6), (1, 1)], &[(1, 1)]),    // reversed: no line
            (&[(1, u32::MAX), (u32::MAX, u32::MAX)], &[(1, u32::MAX)]),
        ];
        for (input, merged) in cases {
            assert_eq!(merge_line_ranges(input.to_vec()), merged, "{input:?}");
        }
    }

    #[test]
    fn a_ledger_compacts_to_one_entry_per_path_and_revision() {
        use Revision::*;
        let mut ledger = SourceLedger::default();
        for window in [
            w(Head, "src/b.rs", 16, 22),
            w(Head, "src/a.rs", 6, 12),
            w(Base, "src/b.rs", 1, 3),
            w(Head, "src/b.rs", 6, 12),
            w(Head, "src/a.rs", 13, 20),
        ] {
            ledger.record(window);
        }
        let lines = |revision, path: &str, lines: &[(u32, u32)]| FileLines {
            revision,
            path: path.into(),
            lines: lines.to_vec(),
        };
        let compact = ledger.compact();
        assert_eq!(
            compact,
            [
                lines(Head, "src/a.rs", &[(6, 20)]),
                lines(Base, "src/b.rs", &[(1, 3)]),
                lines(Head, "src/b.rs", &[(6, 12), (16, 22)]),
            ]
        );
        assert_eq!(
            serde_json::to_value(&compact[2]).unwrap(),
            serde_json::json!({"revision": "head", "path": "src/b.rs", "lines": [[6, 12], [16, 22]]})
        );
        let span = LineSpan {
            revision: Head,
            path: "min.js".into(),
            line: 1,
            start_byte: 0,
            end_byte: 10,
            reaches_end: false,
        };
        let rebuilt = SourceLedger::from_compact(&compact, std::slice::from_ref(&span), &[]);
        assert_eq!(rebuilt.spans, [span]);
        assert_eq!(rebuilt.compact(), compact, "compacting is idempotent");
    }

    /// A hostile ledger: few paths so windows collide, both revisions, overlapping,
    /// adjacent, duplicate, reversed and zero-line windows, lines up to `u32::MAX`.
    fn hostile_window() -> impl Strategy<Value = SourceWindow> {
        let line = prop_oneof![
            8 => 0u32..40,
            1 => Just(u32::MAX - 1),
            1 => Just(u32::MAX),
        ];
        let path = prop_oneof![
            4 => (0u8..4).prop_map(|i| format!("src/{i}.rs")),
            1 => "[a-z/.]{0,6}",
        ];
        let revision = prop_oneof![Just(Revision::Head), Just(Revision::Base)];
        (revision, path, line.clone(), line).prop_map(|(revision, path, start, end)| SourceWindow {
            revision,
            path,
            start_line: start,
            end_line: end,
        })
    }

    proptest! {
        /// Rule: spans show a line whole exactly when every byte of it, up to its length,
        /// lies in some span and a span ends where the line ends (the spans of a line of
        /// `len` bytes, some of which the reader marked as reaching its end).
        #[test]
        fn spans_show_a_line_whole_only_when_they_cover_every_byte(
            len in 1u32..60,
            cuts in prop::collection::vec((0u32..70, 0u32..70), 0..8),
        ) {
            let spans: Vec<Piece> = cuts
                .iter()
                .map(|&(a, b)| (a.min(b).min(len), a.max(b).min(len)))
                .map(|(s, e)| (s, e, e == len))
                .collect();
            let covered = (0..len).all(|b| spans.iter().any(|&(s, e, _)| s <= b && b < e));
            prop_assert_eq!(pieces(&spans).shows_line(Revision::Head, "a.js", 3), covered, "{:?}", spans);
        }
    }

    proptest! {
        /// Rule (compact ledger): for every citation, the ledger rebuilt from the compact
        /// form gives the same answer as the ledger that was recorded; the compact form
        /// names each path and revision once, its ranges sorted and neither overlapping
        /// nor adjacent.
        #[test]
        fn compacting_keeps_every_citation_answer(
            windows in prop::collection::vec(hostile_window(), 0..60),
            citations in prop::collection::vec(hostile_window(), 0..60),
        ) {
            let mut ledger = SourceLedger::default();
            for window in &windows {
                ledger.record(window.clone());
            }
            let compact = ledger.compact();
            let rebuilt = SourceLedger::from_compact(&compact, &[], &[]);
            // Each recorded window, and lines around each, is itself a citation too.
            let around = windows.iter().flat_map(|w| {
                let near = |n: u32| [n.saturating_sub(1), n, n.saturating_add(1)];
                near(w.start_line).into_iter().flat_map(move |s| {
                    near(w.end_line).into_iter().map(move |e| SourceWindow {
                        start_line: s,
                        end_line: e,
                        ..w.clone()
                    })
                })
            });
            for citation in citations.iter().cloned().chain(around) {
                prop_assert_eq!(
                    ledger.check(&citation),
                    rebuilt.check(&citation),
                    "{:?}",
                    citation
                );
            }
            let keys: Vec<(&str, bool)> = compact
                .iter()
                .map(|f| (f.path.as_str(), f.revision == Revision::Head))
                .collect();
            prop_assert!(keys.windows(2).all(|k| k[0] < k[1]), "ordered and unique: {:?}", keys);
            for f in &compact {
                prop_assert!(!f.lines.is_empty());
                prop_assert!(f.lines.iter().all(|(s, e)| s <= e));
                prop_assert!(
                    f.lines.windows(2).all(|r| r[0].1.saturating_add(1) < r[1].0),
                    "{:?}",
                    f.lines
                );
            }
        }
    }
}
