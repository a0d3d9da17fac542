//! The files of one run, published together: each is written to a temporary file beside
//! its destination (`.NAME.vouch-tmp`), and only when every one was written are they all
//! renamed into place. When one cannot be written, every temporary is removed and
//! nothing is renamed, so no document of a failed run is left looking like a result (a
//! clean JSON report beside a SARIF file that could not be written, from a run exiting 2).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

/// Files written to their temporaries, not yet in place. Dropped without
/// [`Staged::publish`], it removes them.
#[derive(Debug, Default)]
pub(crate) struct Staged {
    files: Vec<StagedFile>,
}

#[derive(Debug)]
struct StagedFile {
    /// What the file holds (`the sarif report`), for messages.
    what: String,
    tmp: PathBuf,
    path: PathBuf,
}

/// What every error says after naming the file: nothing of the run was published.
const NOTHING_PUBLISHED: &str = "no file of this run was written (its files are published \
     together or not at all)";

impl Staged {
    /// Writes `what` for `path` through `write` to its temporary file.
    ///
    /// # Errors
    /// When the temporary file cannot be created or written, naming `what` and `path`;
    /// the caller drops `self`, which removes what was staged before.
    pub(crate) fn stage(
        &mut self,
        what: &str,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let tmp = path.with_file_name(format!(
            ".{}.vouch-tmp",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
        let written = std::fs::File::create(&tmp).and_then(|file| {
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)?;
            out.flush()
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(anyhow!(
                "cannot write {what} to {}: {e}; check that its folder exists and can be \
                 written; {NOTHING_PUBLISHED}",
                path.display()
            ));
        }
        self.files.push(StagedFile {
            what: what.to_owned(),
            tmp,
            path: path.to_path_buf(),
        });
        Ok(())
    }

    /// Renames every staged file into place.
    ///
    /// # Errors
    /// When a rename fails: the files already renamed are removed again (their
    /// destinations were cleared before the run) and the other temporaries too.
    pub(crate) fn publish(mut self) -> Result<()> {
        let files = std::mem::take(&mut self.files);
        for (done, file) in files.iter().enumerate() {
            if let Err(e) = std::fs::rename(&file.tmp, &file.path) {
                for placed in &files[..done] {
                    let _ = std::fs::remove_file(&placed.path);
                }
                for staged in &files[done..] {
                    let _ = std::fs::remove_file(&staged.tmp);
                }
                return Err(anyhow!(
                    "cannot move {} into place at {}: {e}; {NOTHING_PUBLISHED}",
                    file.what,
                    file.path.display()
                ));
            }
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for file in &self.files {
            let _ = std::fs::remove_file(&file.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn nothing_is_in_place_until_every_file_was_written_and_a_failure_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.sarif"));
        let mut staged = Staged::default();
        staged.stage("a", &a, |o| o.write_all(b"A")).unwrap();
        staged.stage("b", &b, |o| o.write_all(b"B")).unwrap();
        assert!(!a.exists() && !b.exists(), "{:?}", names(dir.path()));
        staged.publish().unwrap();
        assert_eq!(names(dir.path()), ["a.json", "b.sarif"]);

        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let gone = dir.path().join("gone/b.sarif");
        let mut staged = Staged::default();
        staged
            .stage("the json report", &a, |o| o.write_all(b"A"))
            .unwrap();
        let error = staged
            .stage("the sarif report", &gone, |o| o.write_all(b"B"))
            .unwrap_err()
            .to_string();
        drop(staged);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        assert!(
            error.starts_with(&format!(
                "cannot write the sarif report to {}: No such file or directory",
                gone.display()
            )) && error.ends_with(NOTHING_PUBLISHED),
            "{error}"
        );
    }

    #[test]
    fn a_rename_that_fails_takes_back_the_files_already_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.sarif");
        let mut staged = Staged::default();
        staged.stage("a", &a, |o| o.write_all(b"A")).unwrap();
        staged.stage("b", &b, |o| o.write_all(b"B")).unwrap();
        // A folder where the second file goes: its rename fails.
        std::fs::create_dir(&b).unwrap();
        std::fs::write(b.join("x"), b"").unwrap();
        let error = staged.publish().unwrap_err().to_string();
        assert!(error.starts_with("cannot move b into place"), "{error}");
        assert_eq!(names(dir.path()), ["b.sarif"]);
    }
}
