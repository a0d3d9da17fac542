//! A renamed or copied file reviewed as an addition of its head content
//! ([`vouch_core::reviewed_as_added`]): its pairing is undone after the snapshot, once
//! the exclusion rules that call for it are known.

use std::path::Path;

use vouch_core::snapshot::{ChangedFile, FileStatus};

use super::patch::Side;
use super::{ReadError, SourceReader};
use crate::GitError;
use crate::range_diff::{SideSource, binary_content, file_patch, patch_content};

const DOING: &str = "reading a moved file's head content";

impl SourceReader {
    /// Pairs each changed file of `paths` that the snapshot pairs as a rename or copy
    /// with nothing: an added file, every head line of it a changed line, with the hunks,
    /// counts and long lines the snapshot gives an added file; this reader's `diff` then
    /// shows it as an addition. Returns those files as added, in the order of `paths`
    /// (other paths are left as they are). `stop` is asked before each file; on an error
    /// the reader is unchanged.
    ///
    /// # Errors
    /// [`GitError::Cancelled`] when `stop` says so; [`GitError::Git`] when a head blob
    /// cannot be read.
    pub fn add_moved(
        &mut self,
        paths: &[&str],
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<ChangedFile>, GitError> {
        let mut added = Vec::new();
        for path in paths {
            if stop() {
                return Err(GitError::Cancelled);
            }
            let Some(file) = self.changed.get(*path) else {
                continue;
            };
            if !matches!(file.status, FileStatus::Renamed | FileStatus::Copied) {
                continue;
            }
            added.push(self.as_added(file)?);
        }
        for file in &added {
            self.patch_cache().forget(&file.path);
            self.changed.insert(file.path.clone(), file.clone());
        }
        Ok(added)
    }

    /// `file` as an addition of its head content.
    fn as_added(&self, file: &ChangedFile) -> Result<ChangedFile, GitError> {
        let repo = self.repo();
        let new = self.side(&repo, file, Side::New).map_err(git_error)?;
        let old = SideSource::Bytes(Vec::new());
        let path = Path::new(&file.path);
        let (binary, hunks, additions, deletions, long_lines) = match file.binary {
            true => binary_content(),
            false => patch_content(Some(&file_patch(&old, path, &new, path)?))?,
        };
        Ok(ChangedFile {
            path: file.path.clone(),
            previous_path: None,
            similarity: None,
            status: FileStatus::Added,
            kind: file.kind,
            old_mode: None,
            new_mode: file.new_mode,
            binary,
            hunks,
            additions,
            deletions,
            long_lines,
        })
    }
}

fn git_error(e: ReadError) -> GitError {
    let source = match e {
        ReadError::Git { source } => source,
        other => git2::Error::from_str(&other.to_string()),
    };
    GitError::Git {
        doing: DOING,
        source,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use vouch_core::snapshot::{ChangeSnapshot, FileStatus};
    use vouch_testkit::git::TestRepo;

    use crate::SourceReader;

    fn moved(copy: bool) -> (TestRepo, ChangeSnapshot) {
        let repo = TestRepo::new();
        let text: String = (1..=12)
            .map(|i| format!("line {i} of the library\n"))
            .collect();
        repo.write("vendor/lib.js", &text);
        let base = repo.commit("base");
        if copy {
            // A copy source modified in the change is one git looks at (`-C`).
            repo.write("src/lib.js", &text)
                .write("vendor/lib.js", format!("{text}one more\n"));
        } else {
            repo.rename("vendor/lib.js", "src/lib.js");
        }
        let head = repo.commit("move");
        let snapshot = crate::snapshot(repo.path(), Some(&base), &head).unwrap();
        (repo, snapshot)
    }

    #[test]
    fn a_moved_file_becomes_an_addition_of_every_head_line() {
        for (copy, status) in [(false, FileStatus::Renamed), (true, FileStatus::Copied)] {
            let (repo, snapshot) = moved(copy);
            let file = snapshot.file("src/lib.js").unwrap();
            assert_eq!(file.status, status, "{file:?}");
            assert!(file.hunks.is_empty() || copy, "{file:?}");
            let mut reader = SourceReader::open(Path::new(repo.path()), &snapshot).unwrap();
            let added = reader
                .add_moved(&["src/lib.js", "no/such.js"], &|| false)
                .unwrap();
            assert_eq!(added.len(), 1);
            let file = &added[0];
            assert_eq!(
                (file.status, file.previous_path.as_deref()),
                (FileStatus::Added, None)
            );
            assert_eq!((file.additions, file.deletions), (12, 0));
            let hunk = (file.hunks[0].new_start, file.hunks[0].new_lines);
            assert_eq!((file.hunks.len(), hunk), (1, (1, 12)));
            let diff = reader.diff("src/lib.js").unwrap();
            assert!(
                diff.text.contains("+line 7 of the library"),
                "{}",
                diff.text
            );
            assert_eq!(diff.file, *file);
        }
    }

    #[test]
    fn a_stop_asked_before_a_file_cancels() {
        let (repo, snapshot) = moved(false);
        let mut reader = SourceReader::open(Path::new(repo.path()), &snapshot).unwrap();
        let got = reader.add_moved(&["src/lib.js"], &|| true);
        assert!(matches!(got, Err(crate::GitError::Cancelled)));
        assert_eq!(
            reader.diff("src/lib.js").unwrap().file.status,
            FileStatus::Renamed
        );
    }
}
