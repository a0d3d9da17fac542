//! The convention boundary: when a verified convention finding is supported by source.
//!
//! Issue 4, "Verification": convention candidates are verified against their own
//! boundary — the cited written policy, or at least three consistent repository examples
//! (cited), exists, and a changed hunk violates it. The verifier's contract asks for
//! exactly that; this rule is how the host checks the citations of a `verified`
//! decision actually carry it, instead of trusting the verifier's word.

use serde::{Deserialize, Serialize};

use crate::snapshot::ChangedFile;
use crate::source::{Citation, Revision, SourceWindow};

/// Distinct cited examples a convention inferred from practice needs.
pub const MIN_CONVENTION_EXAMPLES: usize = 3;

/// What supports a verified convention finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "support")]
pub enum ConventionSupport {
    /// A cited written policy at base.
    WrittenPolicy {
        /// The policy citation.
        citation: Citation,
    },
    /// At least [`MIN_CONVENTION_EXAMPLES`] distinct cited examples outside the change.
    Examples {
        /// How many distinct examples were cited.
        count: usize,
    },
}

/// Why a verified convention finding is not supported.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case", tag = "gap")]
pub enum ConventionGap {
    /// The finding does not lie in a changed hunk, so the change does not violate it.
    #[error(
        "the convention finding at {path}:{start_line}-{end_line} does not lie in a changed hunk"
    )]
    NotInChange {
        /// Finding path.
        path: String,
        /// Finding first line.
        start_line: u32,
        /// Finding last line.
        end_line: u32,
    },
    /// Neither a written policy nor enough examples are cited.
    #[error(
        "the convention is supported by neither a cited written policy (a policy document at base) nor at least {MIN_CONVENTION_EXAMPLES} distinct cited repository examples outside the change ({examples} cited)"
    )]
    Unsupported {
        /// Distinct examples outside the change that were cited.
        examples: usize,
    },
}

/// The lines of `file` a hunk touches on `revision`'s side, as inclusive ranges.
fn hunk_ranges(file: &ChangedFile, revision: Revision) -> Vec<(u32, u32)> {
    file.hunks
        .iter()
        .filter_map(|h| {
            let (start, lines) = match revision {
                Revision::Head => (h.new_start, h.new_lines),
                Revision::Base => (h.old_start, h.old_lines),
            };
            (lines > 0).then(|| (start, start + lines - 1))
        })
        .collect()
}

/// The changed file a window at `revision` refers to: by current path at head, by the
/// previous path (renames, copies) or the path at base.
fn changed_file<'a>(files: &'a [ChangedFile], w: &SourceWindow) -> Option<&'a ChangedFile> {
    files.iter().find(|f| match w.revision {
        Revision::Head => f.path == w.path,
        Revision::Base => f.previous_path.as_deref().unwrap_or(&f.path) == w.path,
    })
}

/// True when `w` lies (partly) in what the change touched: a hunk on its side, or any
/// line of a changed file without text hunks (a rename, copy or mode change is itself
/// the change).
fn in_change(files: &[ChangedFile], w: &SourceWindow) -> bool {
    let Some(file) = changed_file(files, w) else {
        return false;
    };
    if file.hunks.is_empty() {
        return true;
    }
    hunk_ranges(file, w.revision)
        .iter()
        .any(|&(s, e)| s <= w.end_line && w.start_line <= e)
}

fn overlaps(a: &SourceWindow, b: &SourceWindow) -> bool {
    a.revision == b.revision
        && a.path == b.path
        && a.start_line <= b.end_line
        && b.start_line <= a.end_line
}

/// Rule (issue 4, "Verification"): a verified convention finding (area
/// `conventions`) is supported only when
/// 1. the finding (`location`: its path and lines at the candidate's revision) lies in a
///    changed hunk of `files` — a changed hunk violates the convention; and
/// 2. its `citations` include a written policy — a citation at **base** of a path in
///    `policy_paths` (the policy documents the host recognises, read from the base tree so
///    a change cannot rewrite its own rules) — or at least [`MIN_CONVENTION_EXAMPLES`]
///    distinct examples: citations outside the change (no hunk of a changed file), pairwise
///    non-overlapping (overlapping windows count once).
///
/// A written policy wins when both are cited. Citations are checked against the ledger
/// separately ([`crate::SourceLedger::check`]); this rule only reads their positions.
pub fn convention_support(
    location: &SourceWindow,
    citations: &[Citation],
    files: &[ChangedFile],
    policy_paths: &[String],
) -> Result<ConventionSupport, ConventionGap> {
    if !in_change(files, location) {
        return Err(ConventionGap::NotInChange {
            path: location.path.clone(),
            start_line: location.start_line,
            end_line: location.end_line,
        });
    }
    if let Some(policy) = citations
        .iter()
        .find(|c| c.revision == Revision::Base && policy_paths.iter().any(|p| p == &c.path))
    {
        return Ok(ConventionSupport::WrittenPolicy {
            citation: policy.clone(),
        });
    }
    let mut examples: Vec<&SourceWindow> = citations
        .iter()
        .filter(|c| !in_change(files, c) && !overlaps(c, location))
        .collect();
    // Greedy by end line gives the largest set of pairwise non-overlapping windows.
    examples
        .sort_by(|a, b| (a.revision, &a.path, a.end_line).cmp(&(b.revision, &b.path, b.end_line)));
    let mut distinct: Vec<&SourceWindow> = Vec::new();
    for e in examples {
        if !distinct.iter().any(|d| overlaps(d, e)) {
            distinct.push(e);
        }
    }
    if distinct.len() >= MIN_CONVENTION_EXAMPLES {
        Ok(ConventionSupport::Examples {
            count: distinct.len(),
        })
    } else {
        Err(ConventionGap::Unsupported {
            examples: distinct.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Hunk;

    fn w(revision: Revision, path: &str, s: u32, e: u32) -> SourceWindow {
        SourceWindow {
            revision,
            path: path.into(),
            start_line: s,
            end_line: e,
        }
    }

    fn changed(path: &str, previous: Option<&str>, hunks: &[(u32, u32, u32, u32)]) -> ChangedFile {
        ChangedFile {
            hunks: hunks
                .iter()
                .map(|&(old_start, old_lines, new_start, new_lines)| Hunk {
                    old_start,
                    old_lines,
                    new_start,
                    new_lines,
                    header: String::new(),
                })
                .collect(),
            ..crate::snapshot::changed_file(path, previous)
        }
    }

    #[test]
    fn a_convention_needs_a_base_policy_or_three_examples_and_a_changed_hunk() {
        use Revision::*;
        let files = vec![
            // src/api.rs: base 10-12 became head 10-14.
            changed("src/api.rs", None, &[(10, 3, 10, 5)]),
            // AGENTS.md itself changed at head lines 1-2.
            changed("AGENTS.md", None, &[(1, 1, 1, 2)]),
            changed("src/new_name.rs", Some("src/old_name.rs"), &[]),
        ];
        let policy = vec!["AGENTS.md".to_string(), "CONTRIBUTING.md".to_string()];
        let at = w(Head, "src/api.rs", 12, 12);
        let ex1 = w(Head, "src/a.rs", 5, 5);
        let ex2 = w(Head, "src/b.rs", 7, 9);
        let ex3 = w(Head, "src/c.rs", 1, 1);
        let ok_examples = |n| Ok(ConventionSupport::Examples { count: n });
        let gap = |n| Err(ConventionGap::Unsupported { examples: n });
        type Case = (
            SourceWindow,
            Vec<SourceWindow>,
            Result<ConventionSupport, ConventionGap>,
        );
        let cases: Vec<Case> = vec![
            // A written policy at base.
            (
                at.clone(),
                vec![w(Base, "AGENTS.md", 3, 4), at.clone()],
                Ok(ConventionSupport::WrittenPolicy {
                    citation: w(Base, "AGENTS.md", 3, 4),
                }),
            ),
            // The same file at head is the change's own text, not the base policy.
            (
                at.clone(),
                vec![w(Head, "AGENTS.md", 1, 2), at.clone()],
                gap(0),
            ),
            // A base file that is no recognised policy document is an example, not a policy.
            (at.clone(), vec![w(Base, "docs/notes.md", 1, 3)], gap(1)),
            // Three distinct examples outside the change.
            (
                at.clone(),
                vec![ex1.clone(), ex2.clone(), ex3.clone(), at.clone()],
                ok_examples(3),
            ),
            // Only two.
            (
                at.clone(),
                vec![ex1.clone(), ex2.clone(), at.clone()],
                gap(2),
            ),
            // Overlapping windows are one example.
            (
                at.clone(),
                vec![ex1.clone(), ex2.clone(), w(Head, "src/b.rs", 9, 12)],
                gap(2),
            ),
            // Adjacent, non-overlapping windows of one file are distinct.
            (
                at.clone(),
                vec![
                    w(Head, "src/a.rs", 1, 2),
                    w(Head, "src/a.rs", 3, 4),
                    w(Head, "src/a.rs", 5, 6),
                ],
                ok_examples(3),
            ),
            // Examples inside the change (the hunk itself, the changed file at base) do
            // not count; lines of the changed file outside its hunks do.
            (
                at.clone(),
                vec![
                    w(Head, "src/api.rs", 10, 11),
                    w(Base, "src/api.rs", 11, 11),
                    w(Head, "src/api.rs", 30, 31),
                    ex1.clone(),
                ],
                gap(2),
            ),
            // A finding outside every changed hunk is not a violation by this change.
            (
                w(Head, "src/api.rs", 40, 41),
                vec![w(Base, "AGENTS.md", 3, 4)],
                Err(ConventionGap::NotInChange {
                    path: "src/api.rs".into(),
                    start_line: 40,
                    end_line: 41,
                }),
            ),
            // A finding in an unchanged file is not in the change either.
            (
                w(Head, "src/a.rs", 5, 5),
                vec![w(Base, "AGENTS.md", 3, 4)],
                Err(ConventionGap::NotInChange {
                    path: "src/a.rs".into(),
                    start_line: 5,
                    end_line: 5,
                }),
            ),
            // A rename without hunks is itself the change (e.g. a naming convention), at
            // head by its new path; its base path is inside the change too.
            (
                w(Head, "src/new_name.rs", 1, 1),
                vec![
                    w(Base, "src/old_name.rs", 1, 1),
                    ex1.clone(),
                    ex2.clone(),
                    ex3.clone(),
                ],
                ok_examples(3),
            ),
            // A removed line cited at base lies in the hunk's base side.
            (
                w(Base, "src/api.rs", 10, 10),
                vec![w(Base, "CONTRIBUTING.md", 8, 8)],
                Ok(ConventionSupport::WrittenPolicy {
                    citation: w(Base, "CONTRIBUTING.md", 8, 8),
                }),
            ),
        ];
        for (location, citations, want) in cases {
            assert_eq!(
                convention_support(&location, &citations, &files, &policy),
                want,
                "{location:?} {citations:?}"
            );
        }
    }
}
