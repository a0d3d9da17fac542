//! Golden comments' paths: normalised the way vouch's repository tools normalise a path
//! (`./src//a.rs` → `src/a.rs`), and required to name a file of the case's change, so a
//! path written differently from the findings' never silently matches nothing.

use std::path::{Path, PathBuf};

use vouch_git::{GitError, ReadError, SourceReader};

/// The change of one eval case, which its golden paths must be files of.
#[derive(Debug, Clone, Copy)]
pub struct CaseChange<'a> {
    /// The case id (for messages).
    pub case: &'a str,
    /// The case's repository.
    pub repo: &'a Path,
    /// Its base revision.
    pub base: &'a str,
    /// Its head revision.
    pub head: &'a str,
}

/// Why a case's golden paths cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum GoldenPathError {
    /// The case's change could not be read to check its golden paths.
    #[error(
        "case {case:?}: cannot read its change {base}..{head} in {} to check its golden paths: {source}",
        repo.display()
    )]
    Change {
        /// The case id.
        case: String,
        /// The case's repository.
        repo: PathBuf,
        /// The case's base revision.
        base: String,
        /// The case's head revision.
        head: String,
        /// What git said.
        #[source]
        source: Box<GitError>,
    },
    /// The path is not a repository-relative path (absolute, `..`, a backslash, empty).
    #[error("case {case:?}: golden path {path:?} is not a repository path: {reason}")]
    NotARepositoryPath {
        /// The case id.
        case: String,
        /// The path as written.
        path: String,
        /// Why.
        reason: String,
    },
    /// The path names no file the case's change touches.
    #[error(
        "case {case:?}: golden path {path:?} is not a file of the case's change (merge-base(base, head)..head); name a changed file by its head path, or leave the path out"
    )]
    NotInChange {
        /// The case id.
        case: String,
        /// The path as written.
        path: String,
    },
}

/// Rule: a golden path is used in the canonical form the change's lookup returned for
/// it; a lookup that refused the path makes it not a repository path, one that found no
/// changed file under it (or failed to read it) makes it not a file of the change.
fn verdict(
    case: &str,
    written: &str,
    looked_up: Result<String, ReadError>,
) -> Result<String, GoldenPathError> {
    match looked_up {
        Ok(canonical) => Ok(canonical),
        Err(ReadError::Refused { reason }) => Err(GoldenPathError::NotARepositoryPath {
            case: case.to_owned(),
            path: written.to_owned(),
            reason,
        }),
        Err(_) => Err(GoldenPathError::NotInChange {
            case: case.to_owned(),
            path: written.to_owned(),
        }),
    }
}

/// Rewrites every golden path in `paths` to its canonical form (the path vouch's
/// findings use), reading the case's change (`merge-base(base, head)..head`) once. A
/// case without golden paths reads nothing.
///
/// # Errors
/// [`GoldenPathError`] naming the case and the path as written, for the first path that
/// is not a repository path or not a file of the change, or when the change cannot be read.
pub fn resolve_golden_paths<'p>(
    change: CaseChange<'_>,
    paths: impl IntoIterator<Item = &'p mut Option<String>>,
) -> Result<(), GoldenPathError> {
    let written: Vec<&mut String> = paths.into_iter().flatten().collect();
    if written.is_empty() {
        return Ok(());
    }
    let reader = open_change(change)?;
    for path in written {
        let looked_up = reader.diff(path).map(|d| d.file.path.clone());
        *path = verdict(change.case, path, looked_up)?;
    }
    Ok(())
}

fn open_change(change: CaseChange<'_>) -> Result<SourceReader, GoldenPathError> {
    let change_error = |source: GitError| GoldenPathError::Change {
        case: change.case.to_owned(),
        repo: change.repo.to_path_buf(),
        base: change.base.to_owned(),
        head: change.head.to_owned(),
        source: Box::new(source),
    };
    let snapshot =
        vouch_git::snapshot(change.repo, Some(change.base), change.head).map_err(change_error)?;
    SourceReader::open(change.repo, &snapshot).map_err(change_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{EvalCase, GoldenComment};
    use crate::category::Severity;
    use vouch_testkit::git::TestRepo;

    #[test]
    fn verdict_table() {
        let refused = || ReadError::Refused {
            reason: "`../a.rs` contains `..`".into(),
        };
        let not_changed = || ReadError::NotChanged {
            path: "src/b.rs".into(),
        };
        for (written, looked_up, expected) in [
            ("./src/a.rs", Ok("src/a.rs".to_owned()), Ok("src/a.rs")),
            ("src/a.rs", Ok("src/a.rs".to_owned()), Ok("src/a.rs")),
            ("../a.rs", Err(refused()), Err("is not a repository path")),
            (
                "src/b.rs",
                Err(not_changed()),
                Err("is not a file of the case's change"),
            ),
        ] {
            let got = verdict("c1", written, looked_up).map_err(|e| e.to_string());
            match (got, expected) {
                (Ok(path), Ok(want)) => assert_eq!(path, want),
                (Err(message), Err(want)) => {
                    assert!(message.contains(want), "{message}");
                    assert!(message.contains(&format!("case \"c1\": golden path {written:?}")));
                }
                (got, want) => panic!("{written}: {got:?} vs {want:?}"),
            }
        }
    }

    fn case(repo: &TestRepo, base: &str, head: &str, paths: &[Option<&str>]) -> EvalCase {
        EvalCase {
            id: "c1".into(),
            repo: repo.path().to_path_buf(),
            base: base.into(),
            head: head.into(),
            pr_title: None,
            pr_body: None,
            golden: paths
                .iter()
                .map(|p| GoldenComment {
                    comment: "x".into(),
                    severity: Severity::High,
                    category: None,
                    path: p.map(str::to_owned),
                    line: Some(1),
                })
                .collect(),
        }
    }

    #[test]
    fn golden_paths_are_canonical_paths_of_changed_files() {
        let repo = TestRepo::new();
        repo.write("src/a.rs", "a\n").write("src/b.rs", "b\n");
        let base = repo.commit("start");
        repo.write("src/a.rs", "a2\n");
        let head = repo.commit("change a");
        let mut ok = case(&repo, &base, &head, &[Some("./src//a.rs"), None]);
        ok.resolve_golden_paths().unwrap();
        assert_eq!(ok.golden[0].path.as_deref(), Some("src/a.rs"));
        assert_eq!(ok.golden[1].path, None);
        for (path, needle) in [
            ("src/b.rs", "is not a file of the case's change"),
            ("src/none.rs", "is not a file of the case's change"),
            ("/src/a.rs", "is not a repository path"),
            ("../src/a.rs", "is not a repository path"),
        ] {
            let err = case(&repo, &base, &head, &[Some(path)])
                .resolve_golden_paths()
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle) && err.contains(path), "{path}: {err}");
        }
        let mut missing = case(&repo, &base, "no-such-rev", &[Some("src/a.rs")]);
        let err = missing.resolve_golden_paths().unwrap_err();
        assert!(matches!(err, GoldenPathError::Change { .. }), "{err}");
        // No golden path: the change is not read (the revision need not exist).
        case(&repo, &base, "no-such-rev", &[None])
            .resolve_golden_paths()
            .unwrap();
    }
}
