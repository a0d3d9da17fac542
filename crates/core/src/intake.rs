//! Candidate intake: the host's check of a lane candidate's location before verification.

use serde::{Deserialize, Serialize};

use crate::candidate::Candidate;

/// Why a candidate's location does not resolve. Each has a stable reason code
/// ([`IntakeProblem::as_str`]) for the report and diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IntakeProblem {
    /// The path is not a canonical repository path: empty, absolute, with a `./` or `..`
    /// segment, a backslash, an empty segment or a trailing `/`.
    PathNotCanonical,
    /// No file has exactly this path at the candidate's revision (wrong case, a folder,
    /// a path that does not exist there).
    NoSuchFile,
    /// A line number of 0, or `endLine < startLine`.
    InvalidLineRange,
    /// The line range ends past the last line of the file at that revision.
    PastEndOfFile,
    /// The file is binary at that revision: it has no lines a finding could cite.
    BinaryFile,
    /// The file is a changed file the composition excludes from review: no stage
    /// receives it, so none may raise a finding on it, and its source is never sent to
    /// the verifier.
    ExcludedFile,
}

/// What the host's lookup of exactly a candidate's path at its revision found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathLookup {
    /// A text file of this many lines.
    Text(u32),
    /// A binary file.
    Binary,
    /// No file has exactly that path there.
    Missing,
    /// A changed file the composition excludes from review.
    Excluded,
}

impl IntakeProblem {
    /// The stable reason code.
    pub fn as_str(self) -> &'static str {
        match self {
            IntakeProblem::PathNotCanonical => "path-not-canonical",
            IntakeProblem::NoSuchFile => "no-such-file",
            IntakeProblem::InvalidLineRange => "invalid-line-range",
            IntakeProblem::PastEndOfFile => "past-end-of-file",
            IntakeProblem::BinaryFile => "binary-file",
            IntakeProblem::ExcludedFile => "excluded-file",
        }
    }

    /// What the problem means, in words, for the report.
    pub fn explain(self) -> &'static str {
        match self {
            IntakeProblem::PathNotCanonical => {
                "its path is not a canonical repository-relative path (no `./`, `..`, `\\`, leading or doubled `/`)"
            }
            IntakeProblem::NoSuchFile => {
                "no file has exactly this path at the candidate's revision (paths are compared exactly, case included)"
            }
            IntakeProblem::InvalidLineRange => {
                "its line range is malformed (a line 0, or end before start)"
            }
            IntakeProblem::PastEndOfFile => {
                "its line range ends past the end of the file at that revision"
            }
            IntakeProblem::BinaryFile => {
                "the file is binary at that revision: it has no lines a finding could cite"
            }
            IntakeProblem::ExcludedFile => {
                "the composition excludes this changed file from review, so no finding may rest on it and its source is not sent to the verifier"
            }
        }
    }
}

impl std::fmt::Display for IntakeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// True when `path` is written the one way a repository path is: relative, `/`-separated,
/// with no empty, `.` or `..` segment and no backslash. Only such a path may be looked
/// up for [`candidate_intake`] (a lookup could normalise any other).
pub fn is_canonical_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// Rule (issue 9, "Candidate intake"): before verification the host checks every lane
/// candidate's location: its path resolves **exactly** (no normalisation of `./`,
/// separators, absolute forms or case) to a file at the candidate's revision, and its line
/// range lies inside that file. `lookup` is the host's lookup of exactly that path at
/// that revision ([`PathLookup`]). A candidate that does not resolve is never sent to the
/// verifier; the host records it with the returned problem and coverage is `limited`.
pub fn candidate_intake(candidate: &Candidate, lookup: PathLookup) -> Result<(), IntakeProblem> {
    if !is_canonical_path(&candidate.path) {
        return Err(IntakeProblem::PathNotCanonical);
    }
    let lines = match lookup {
        PathLookup::Text(lines) => lines,
        PathLookup::Binary => return Err(IntakeProblem::BinaryFile),
        PathLookup::Missing => return Err(IntakeProblem::NoSuchFile),
        PathLookup::Excluded => return Err(IntakeProblem::ExcludedFile),
    };
    if candidate.start_line == 0 || candidate.end_line < candidate.start_line {
        return Err(IntakeProblem::InvalidLineRange);
    }
    if candidate.end_line > lines {
        return Err(IntakeProblem::PastEndOfFile);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::Severity;
    use crate::source::Revision;

    fn candidate(path: &str, start: u32, end: u32) -> Candidate {
        Candidate {
            id: "lane #1/0".into(),
            proposed_by: "lane #1".into(),
            path: path.into(),
            revision: Revision::Head,
            start_line: start,
            end_line: end,
            severity: Severity::High,
            area: crate::Area::Correctness,
            claim: "c".into(),
            evidence: "e".into(),
        }
    }

    #[test]
    fn a_candidate_resolves_only_at_an_exact_path_inside_its_file() {
        use IntakeProblem::*;
        use PathLookup::*;
        // (path, start, end, the host's line count for exactly that path, expected)
        type Case<'a> = (&'a str, u32, u32, PathLookup, Result<(), IntakeProblem>);
        let cases: &[Case] = &[
            ("src/limits.rs", 3, 4, Text(10), Ok(())),
            ("src/limits.rs", 1, 10, Text(10), Ok(())),
            ("src/limits.rs", 10, 10, Text(10), Ok(())),
            ("a b/ü.rs", 1, 1, Text(1), Ok(())),
            ("./src/limits.rs", 3, 4, Text(10), Err(PathNotCanonical)),
            ("src/./limits.rs", 3, 4, Text(10), Err(PathNotCanonical)),
            ("src\\limits.rs", 3, 4, Text(10), Err(PathNotCanonical)),
            ("/src/limits.rs", 3, 4, Text(10), Err(PathNotCanonical)),
            ("src//limits.rs", 3, 4, Text(10), Err(PathNotCanonical)),
            ("src/limits.rs/", 3, 4, Text(10), Err(PathNotCanonical)),
            ("../src/limits.rs", 3, 4, Text(10), Err(PathNotCanonical)),
            ("", 3, 4, Text(10), Err(PathNotCanonical)),
            // Wrong case or a missing file: the lookup of that exact path found nothing.
            ("SRC/Limits.rs", 3, 4, Missing, Err(NoSuchFile)),
            ("src/gone.rs", 1, 1, Missing, Err(NoSuchFile)),
            ("src/limits.rs", 0, 4, Text(10), Err(InvalidLineRange)),
            ("src/limits.rs", 5, 4, Text(10), Err(InvalidLineRange)),
            ("src/limits.rs", 9, 11, Text(10), Err(PastEndOfFile)),
            ("src/limits.rs", 400, 410, Text(10), Err(PastEndOfFile)),
            ("empty.txt", 1, 1, Text(0), Err(PastEndOfFile)),
            ("assets/logo.png", 1, 1, Binary, Err(BinaryFile)),
            ("gen/x.py", 20, 20, Excluded, Err(ExcludedFile)),
        ];
        for &(path, start, end, lines, expected) in cases {
            assert_eq!(
                candidate_intake(&candidate(path, start, end), lines),
                expected,
                "{path}:{start}-{end} with {lines:?}"
            );
        }
    }

    #[test]
    fn reason_codes_are_stable_and_distinct() {
        let all = [
            IntakeProblem::PathNotCanonical,
            IntakeProblem::NoSuchFile,
            IntakeProblem::InvalidLineRange,
            IntakeProblem::PastEndOfFile,
            IntakeProblem::BinaryFile,
            IntakeProblem::ExcludedFile,
        ];
        for p in all {
            let json = serde_json::to_value(p).unwrap();
            assert_eq!(json, p.as_str());
        }
        let mut codes: Vec<_> = all.iter().map(|p| p.as_str()).collect();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }
}
