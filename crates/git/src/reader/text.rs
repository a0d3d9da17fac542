//! `read_text`: the raw text of a small file, for configuration the host itself reads
//! (never shown to a model as a tool result).

use git2::ObjectType;
use vouch_core::source::Revision;

use super::{MAX_BYTES, ReadError, SourceReader, lookup, paths};

/// One line's length: its bytes (what the long-line bound and byte spans count) and the
/// bytes a read shows for it ([`vouch_core::shown_len`]: more when it holds bytes that are
/// not UTF-8), what sizing a prompt counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineLength {
    /// Bytes in the file.
    pub bytes: u32,
    /// Bytes shown.
    pub shown: u32,
}

impl SourceReader {
    /// The whole text of the regular file `path` at `revision`, or `None` when nothing
    /// exists there. For host-read configuration such as `.vouch/review.toml` (read from
    /// base so a change cannot rewrite its own rules).
    ///
    /// # Errors
    /// [`ReadError::Refused`] for an invalid path, [`ReadError::WrongKind`] when it is
    /// not a regular file, [`ReadError::Binary`] for binary or non-UTF-8 content or a file
    /// over [`MAX_BYTES`] bytes, [`ReadError::Git`].
    pub fn read_text(&self, revision: Revision, path: &str) -> Result<Option<String>, ReadError> {
        let Some((path, id)) = self.regular_file(revision, path)? else {
            return Ok(None);
        };
        self.with_blob(&self.repo(), id, |content, binary| {
            // Size and binary first: a large file is refused without validating it.
            let text = (content.len() <= MAX_BYTES && !binary)
                .then(|| std::str::from_utf8(content).ok())
                .flatten();
            match text {
                Some(text) => Ok(Some(text.to_string())),
                None => Err(ReadError::Binary {
                    revision,
                    path,
                    size: content.len(),
                }),
            }
        })?
    }

    /// The length of each line of the regular file `path` at `revision` (without its line
    /// ending), in bytes and as a read shows it, for a file of any size; `None` when nothing exists there. How the
    /// host sizes what it gives inline without copying the text.
    ///
    /// # Errors
    /// As [`SourceReader::read_text`], but a file of any size is read (through the
    /// large-blob cache); a binary one is [`ReadError::Binary`].
    pub fn line_lengths(
        &self,
        revision: Revision,
        path: &str,
    ) -> Result<Option<Vec<LineLength>>, ReadError> {
        let Some((path, id)) = self.regular_file(revision, path)? else {
            return Ok(None);
        };
        self.with_blob(&self.repo(), id, |content, binary| {
            if binary {
                return Err(ReadError::Binary {
                    revision,
                    path: path.clone(),
                    size: content.len(),
                });
            }
            Ok(Some(
                super::file::lines(content)
                    .map(|l| LineLength {
                        bytes: u32::try_from(l.len()).unwrap_or(u32::MAX),
                        shown: u32::try_from(vouch_core::shown_len(l)).unwrap_or(u32::MAX),
                    })
                    .collect(),
            ))
        })?
    }

    /// The normalised path and blob id of the regular file `path` at `revision`, or
    /// `None` when nothing exists there.
    ///
    /// # Errors
    /// [`ReadError::Refused`] for an invalid path, [`ReadError::WrongKind`] when it is
    /// not a regular file, [`ReadError::Git`].
    fn regular_file(
        &self,
        revision: Revision,
        path: &str,
    ) -> Result<Option<(String, git2::Oid)>, ReadError> {
        let path = paths::normalize(path, false)?;
        let repo = self.repo();
        let tree = repo.find_tree(self.tree_id(revision))?;
        let entry = match lookup(&tree, revision, &path) {
            Ok(e) => e,
            Err(ReadError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
            return Err(ReadError::WrongKind {
                revision,
                path,
                actual: "not a regular file",
                hint: "use list_dir",
            });
        }
        Ok(Some((path, entry.id())))
    }
}
