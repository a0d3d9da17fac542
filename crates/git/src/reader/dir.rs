//! `list_dir`: the entries of one directory of the head or base tree.

use std::fmt::Write as _;

use git2::ObjectType;
use serde::Serialize;
use vouch_core::source::Revision;

use super::{MAX_BYTES, MAX_DIR_ENTRIES, ReadError, SourceReader, lookup, paths, rev_name};

/// What a directory entry is (tree entry modes 040000, 100644, 100755, 120000, 160000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirEntryKind {
    /// A subdirectory.
    Directory,
    /// A regular file.
    File,
    /// An executable file.
    Executable,
    /// A symbolic link (read it to get the link text).
    Symlink,
    /// A submodule (gitlink).
    Submodule,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    /// The entry's name (one path component). A name that is not UTF-8 is shown with
    /// U+FFFD and cannot be read.
    pub name: String,
    /// What it is.
    pub kind: DirEntryKind,
}

/// The result of one `list_dir` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirListing {
    /// The canonical directory path (`""` for the root).
    pub path: String,
    /// Entries in git's tree order, at most [`MAX_DIR_ENTRIES`].
    pub entries: Vec<DirEntry>,
    /// Entries in the directory, including any not returned.
    pub total_entries: usize,
    /// True when entries were left out.
    pub truncated: bool,
    /// The text for the model: one entry per line, directories with a trailing `/`,
    /// other kinds in parentheses, then a truncation note when needed.
    pub text: String,
}

impl SourceReader {
    /// Lists the directory `path` (`""` or `"."` for the root) at `revision`.
    ///
    /// # Errors
    /// [`ReadError::Refused`] for an invalid path, [`ReadError::NotFound`],
    /// [`ReadError::WrongKind`] when `path` is not a directory.
    pub fn list_dir(&self, path: &str, revision: Revision) -> Result<DirListing, ReadError> {
        let path = paths::normalize(path, true)?;
        let repo = self.repo();
        let root = repo.find_tree(self.tree_id(revision))?;
        let tree = if path.is_empty() {
            root
        } else {
            let entry = lookup(&root, revision, &path)?;
            if entry.kind() != Some(ObjectType::Tree) {
                return Err(ReadError::WrongKind {
                    revision,
                    path,
                    actual: "not a directory",
                    hint: "use read_file to read it",
                });
            }
            repo.find_tree(entry.id())?
        };
        let shown = if path.is_empty() {
            "/ (the repository root)"
        } else {
            &path
        };
        let mut text = format!("{shown} at {}:\n", rev_name(revision));
        let mut entries = Vec::new();
        let total_entries = tree.len();
        for entry in tree.iter() {
            let kind = match (entry.kind(), entry.filemode()) {
                (Some(ObjectType::Tree), _) => DirEntryKind::Directory,
                (Some(ObjectType::Commit), _) => DirEntryKind::Submodule,
                (_, 0o120000) => DirEntryKind::Symlink,
                (_, 0o100755) => DirEntryKind::Executable,
                _ => DirEntryKind::File,
            };
            let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
            let line = match kind {
                DirEntryKind::Directory => format!("{name}/\n"),
                DirEntryKind::File => format!("{name}\n"),
                DirEntryKind::Executable => format!("{name} (executable)\n"),
                DirEntryKind::Symlink => format!("{name} (symlink)\n"),
                DirEntryKind::Submodule => format!("{name} (submodule)\n"),
            };
            if entries.len() >= MAX_DIR_ENTRIES || text.len() + line.len() > MAX_BYTES - 256 {
                break;
            }
            text.push_str(&line);
            entries.push(DirEntry { name, kind });
        }
        let truncated = entries.len() < total_entries;
        if truncated {
            let _ = writeln!(
                text,
                "[truncated: showing {} of {total_entries} entries; list_dir returns at most {MAX_DIR_ENTRIES} entries and {MAX_BYTES} bytes per call; use grep with a path_glob to find specific files]",
                entries.len()
            );
        }
        Ok(DirListing {
            path,
            entries,
            total_entries,
            truncated,
            text,
        })
    }
}
