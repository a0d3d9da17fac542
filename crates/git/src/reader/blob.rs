//! Whole blobs and the file list of a tree, for the repository graph (`vouch-graph`),
//! which parses files itself. Same rules as every other reader call: git objects only,
//! validated paths, symlinks and submodules never followed.

use git2::{ObjectType, Oid, Repository};
use vouch_core::source::Revision;

use super::{ReadError, SourceReader, lookup, paths};

/// One regular file of a tree (symlinks and submodules are not files here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Repository-relative path (UTF-8; entries whose names are not UTF-8 are left out).
    pub path: String,
    /// The blob id (hex): equal ids mean equal content, at either revision.
    pub blob_id: String,
}

/// The content of one blob, or why it is not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobContent {
    /// The bytes of a text blob.
    Text(Vec<u8>),
    /// Binary by git's heuristic (a NUL byte in its first 8000 bytes).
    Binary,
    /// Larger than the bound the caller set; the size in bytes.
    TooLarge(usize),
}

impl SourceReader {
    /// Every regular file of the tree at `revision`, in git's order (depth first, entries
    /// sorted by name). Reads tree objects only, never a blob.
    ///
    /// # Errors
    /// [`ReadError::Git`].
    pub fn files(&self, revision: Revision) -> Result<Vec<TreeFile>, ReadError> {
        let repo = self.repo();
        let mut out = Vec::new();
        walk(&repo, self.tree_id(revision), "", &mut out)?;
        Ok(out)
    }

    /// The regular file `path` at `revision` as a [`TreeFile`].
    ///
    /// # Errors
    /// [`ReadError::Refused`] for an invalid path, [`ReadError::NotFound`],
    /// [`ReadError::WrongKind`] for a directory, symlink or submodule, [`ReadError::Git`].
    pub fn file(&self, revision: Revision, path: &str) -> Result<TreeFile, ReadError> {
        let path = paths::normalize(path, false)?;
        let repo = self.repo();
        let tree = repo.find_tree(self.tree_id(revision))?;
        let entry = lookup(&tree, revision, &path)?;
        if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
            return Err(ReadError::WrongKind {
                revision,
                path,
                actual: "not a regular file (a directory, symbolic link or submodule)",
                hint: "links are never followed; use list_dir to see what it is",
            });
        }
        Ok(TreeFile {
            path,
            blob_id: entry.id().to_string(),
        })
    }

    /// The content of the blob `blob_id` (from [`TreeFile`]), unless it is binary or
    /// larger than `max_bytes`.
    ///
    /// # Errors
    /// [`ReadError::Git`] for an id that is not a blob of this repository.
    pub fn blob(&self, blob_id: &str, max_bytes: usize) -> Result<BlobContent, ReadError> {
        let repo = self.repo();
        let id = Oid::from_str(blob_id)?;
        let (size, kind) = repo.odb()?.read_header(id)?;
        if kind != ObjectType::Blob {
            return Err(ReadError::Git {
                source: git2::Error::from_str("the object is not a blob"),
            });
        }
        if size > max_bytes {
            return Ok(BlobContent::TooLarge(size));
        }
        Ok(self.with_blob(&repo, id, |content, binary| {
            if binary {
                BlobContent::Binary
            } else {
                BlobContent::Text(content.to_vec())
            }
        })?)
    }
}

/// Collects the regular files under `tree` (links and submodules are skipped).
fn walk(
    repo: &Repository,
    tree: Oid,
    prefix: &str,
    out: &mut Vec<TreeFile>,
) -> Result<(), ReadError> {
    let tree = repo.find_tree(tree)?;
    for entry in tree.iter() {
        let Ok(name) = std::str::from_utf8(entry.name_bytes()) else {
            continue;
        };
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        match entry.kind() {
            Some(ObjectType::Tree) => walk(repo, entry.id(), &path, out)?,
            Some(ObjectType::Blob) if entry.filemode() != 0o120000 => out.push(TreeFile {
                path,
                blob_id: entry.id().to_string(),
            }),
            _ => {}
        }
    }
    Ok(())
}
