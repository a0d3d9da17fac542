//! `grep`: a regex search over the text files of the head or base tree.

use std::fmt::Write as _;

use git2::{ObjectType, Oid, Repository};
use globset::{Glob, GlobMatcher};
use regex::bytes::{Regex, RegexBuilder};
use vouch_core::source::{Revision, SourceWindow};

use super::file::lines_with_endings;
use super::{
    MAX_BYTES, MAX_GREP_FILE_BYTES, MAX_GREP_LINE_BYTES, MAX_GREP_MATCHES, ReadError, SourceReader,
    rev_name, span,
};

/// Most bytes a compiled regex may use (a bound on pathological patterns).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepMatch {
    /// Repository-relative path.
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    /// The line's text (no line ending), cut at [`MAX_GREP_LINE_BYTES`].
    pub text: String,
}

/// The result of one `grep` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepResult {
    /// The matches, in tree order (paths in git's order, lines ascending).
    pub matches: Vec<GrepMatch>,
    /// One 1-line window per match shown whole, for the source ledger.
    pub windows: Vec<SourceWindow>,
    /// For a match shown cut (a line over [`MAX_GREP_LINE_BYTES`]), the bytes shown.
    pub spans: Vec<vouch_core::LineSpan>,
    /// Text files searched.
    pub files_searched: u32,
    /// Text files skipped for exceeding [`MAX_GREP_FILE_BYTES`].
    pub files_skipped: u32,
    /// True when the search stopped at the match or byte bound.
    pub truncated: bool,
    /// The text for the model: one `path:line:text` per match, then notes (no matches,
    /// skipped files, the bound that stopped the search).
    pub text: String,
}

/// What a search accumulates while walking the tree.
struct Search<'a> {
    regex: &'a Regex,
    glob: Option<&'a GlobMatcher>,
    /// Paths never searched.
    excluded: &'a [String],
    revision: Revision,
    result: GrepResult,
    bytes: usize,
}

impl SourceReader {
    /// Searches text blobs at `revision` for lines matching `pattern` (Rust `regex`
    /// syntax, applied to each line), optionally only in paths matching `path_glob`
    /// (`globset` syntax; `*` also crosses `/`, so `*.rs` matches at any depth).
    ///
    /// Binary blobs, symlinks and submodules are not searched; blobs over
    /// [`MAX_GREP_FILE_BYTES`] are skipped and counted. Stops after
    /// [`MAX_GREP_MATCHES`] matches or [`MAX_BYTES`] of output. Memory holds one blob at a
    /// time.
    ///
    /// # Errors
    /// [`ReadError::InvalidPattern`] for a bad regex or glob; [`ReadError::Git`].
    pub fn grep(
        &self,
        pattern: &str,
        path_glob: Option<&str>,
        revision: Revision,
    ) -> Result<GrepResult, ReadError> {
        self.grep_except(pattern, path_glob, revision, &[])
    }

    /// [`SourceReader::grep`], never searching the files at `excluded` paths (the changed
    /// files a review excludes).
    ///
    /// # Errors
    /// As [`SourceReader::grep`].
    pub fn grep_except(
        &self,
        pattern: &str,
        path_glob: Option<&str>,
        revision: Revision,
        excluded: &[String],
    ) -> Result<GrepResult, ReadError> {
        let regex = RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| ReadError::InvalidPattern {
                what: "regex",
                message: e.to_string(),
            })?;
        let glob = match path_glob {
            Some(g) if !g.is_empty() => Some(
                Glob::new(g)
                    .map_err(|e| ReadError::InvalidPattern {
                        what: "path glob",
                        message: e.to_string(),
                    })?
                    .compile_matcher(),
            ),
            _ => None,
        };
        let mut search = Search {
            regex: &regex,
            glob: glob.as_ref(),
            excluded,
            revision,
            result: GrepResult {
                matches: Vec::new(),
                windows: Vec::new(),
                spans: Vec::new(),
                files_searched: 0,
                files_skipped: 0,
                truncated: false,
                text: String::new(),
            },
            bytes: 0,
        };
        let repo = self.repo();
        search.walk(&repo, self.tree_id(revision), "")?;
        let mut result = search.result;
        let mut notes = String::new();
        if result.matches.is_empty() {
            let _ = writeln!(
                notes,
                "no matches for /{pattern}/{} in {} text files at {}",
                path_glob
                    .map(|g| format!(" in paths matching `{g}`"))
                    .unwrap_or_default(),
                result.files_searched,
                rev_name(revision)
            );
        }
        if result.files_skipped > 0 {
            let _ = writeln!(
                notes,
                "[{} files larger than {MAX_GREP_FILE_BYTES} bytes were not searched; use read_file on them]",
                result.files_skipped
            );
        }
        if result.truncated {
            let _ = writeln!(
                notes,
                "[truncated: grep returns at most {MAX_GREP_MATCHES} matches and {MAX_BYTES} bytes per call; narrow the pattern or path_glob to see the rest]"
            );
        }
        result.text.push_str(&notes);
        Ok(result)
    }
}

impl Search<'_> {
    /// Walks one tree depth-first in git's entry order. Entries whose names are not UTF-8
    /// cannot be named in a tool call and are not searched.
    fn walk(&mut self, repo: &Repository, tree: Oid, prefix: &str) -> Result<(), ReadError> {
        let tree = repo.find_tree(tree)?;
        for entry in tree.iter() {
            if self.result.truncated {
                return Ok(());
            }
            let Ok(name) = std::str::from_utf8(entry.name_bytes()) else {
                continue;
            };
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            match entry.kind() {
                Some(ObjectType::Tree) => self.walk(repo, entry.id(), &path)?,
                Some(ObjectType::Blob) if entry.filemode() != 0o120000 => {
                    if self.glob.is_some_and(|g| !g.is_match(&path))
                        || self.excluded.contains(&path)
                    {
                        continue;
                    }
                    self.search_blob(repo, entry.id(), &path)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Searches one blob, unless it is binary or too large.
    fn search_blob(&mut self, repo: &Repository, id: Oid, path: &str) -> Result<(), ReadError> {
        let (size, _) = repo.odb()?.read_header(id)?;
        if size > MAX_GREP_FILE_BYTES {
            self.result.files_skipped += 1;
            return Ok(());
        }
        let blob = repo.find_blob(id)?;
        if crate::range_diff::is_binary(blob.content()) {
            return Ok(());
        }
        self.result.files_searched += 1;
        for (i, (line, crlf)) in lines_with_endings(blob.content()).enumerate() {
            if !self.regex.is_match(line) {
                continue;
            }
            let n = i as u32 + 1;
            let shown_len = vouch_core::shown_prefix_len(line, MAX_GREP_LINE_BYTES);
            let shown = vouch_core::shown_text(&line[..shown_len]).into_owned();
            let whole = shown_len == line.len();
            let mark = match whole {
                true => vouch_core::ending_mark(crlf).to_string(),
                false => format!(
                    " …[line cut: {shown_len} of {} bytes shown; read_file with start_byte \
                     for the rest]",
                    line.len()
                ),
            };
            let entry = format!("{path}:{n}:{shown}{mark}\n");
            if self.result.matches.len() >= MAX_GREP_MATCHES
                || self.bytes + entry.len() > MAX_BYTES - 512
            {
                self.result.truncated = true;
                return Ok(());
            }
            self.bytes += entry.len();
            self.result.text.push_str(&entry);
            if !whole {
                let part = span(self.revision, path, n, (0, shown_len), false);
                self.result.spans.push(part);
            } else {
                self.result.windows.push(SourceWindow {
                    revision: self.revision,
                    path: path.to_string(),
                    start_line: n,
                    end_line: n,
                });
            }
            self.result.matches.push(GrepMatch {
                path: path.to_string(),
                line: n,
                text: shown,
            });
        }
        Ok(())
    }
}
