//! Golden comments' paths: normalised the way vouch's repository tools normalise a path
//! (`./src//a.rs` → `src/a.rs`), and required to name a file of the case's change, so a
//! path written differently from the findings' never silently matches nothing.

use std::path::PathBuf;

use vouch_git::{GitError, ReadError, SourceReader};

use crate::case::EvalCase;

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

/// Rewrites every golden path of `case` to its canonical form (the path vouch's findings
/// use), reading the case's change (`merge-base(base, head)..head`) once. Cases without
/// golden paths read nothing.
///
/// # Errors
/// [`GoldenPathError`] naming the case and the path as written, for the first path that
/// is not a repository path or not a file of the change, or when the change cannot be read.
pub fn resolve_golden_paths(case: &mut EvalCase) -> Result<(), GoldenPathError> {
    if case.golden.iter().all(|g| g.path.is_none()) {
        return Ok(());
    }
    let reader = open_change(case)?;
    for golden in &mut case.golden {
        if let Some(written) = &golden.path {
            let looked_up = reader.diff(written).map(|d| d.file.path.clone());
            golden.path = Some(verdict(&case.id, written, looked_up)?);
        }
    }
    Ok(())
}

fn open_change(case: &EvalCase) -> Result<SourceReader, GoldenPathError> {
    let change_error = |source: GitError| GoldenPathError::Change {
        case: case.id.clone(),
        repo: case.repo.clone(),
        base: case.base.clone(),
        head: case.head.clone(),
        source: Box::new(source),
    };
    let snapshot =
        vouch_git::snapshot(&case.repo, Some(&case.base), &case.head).map_err(change_error)?;
    SourceReader::open(&case.repo, &snapshot).map_err(change_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::GoldenComment;
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
        resolve_golden_paths(&mut ok).unwrap();
        assert_eq!(ok.golden[0].path.as_deref(), Some("src/a.rs"));
        assert_eq!(ok.golden[1].path, None);
        for (path, needle) in [
            ("src/b.rs", "is not a file of the case's change"),
            ("src/none.rs", "is not a file of the case's change"),
            ("/src/a.rs", "is not a repository path"),
            ("../src/a.rs", "is not a repository path"),
        ] {
            let err = resolve_golden_paths(&mut case(&repo, &base, &head, &[Some(path)]))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle) && err.contains(path), "{path}: {err}");
        }
        let mut missing = case(&repo, &base, "no-such-rev", &[Some("src/a.rs")]);
        let err = resolve_golden_paths(&mut missing).unwrap_err();
        assert!(matches!(err, GoldenPathError::Change { .. }), "{err}");
        // No golden path: the change is not read (the revision need not exist).
        resolve_golden_paths(&mut case(&repo, &base, "no-such-rev", &[None])).unwrap();
    }
}
