//! Structured lookups for the host's deterministic prefetch: a file's parsed index, the
//! definitions of a name, and the functions that call a name. The same lazy parsing,
//! cache and read-only access as the model tools; the host renders and bounds the text.

use std::collections::BTreeMap;
use std::sync::Arc;

use vouch_core::source::Revision;
use vouch_git::BlobContent;

use crate::graph::{GraphError, MAX_FILE_BYTES, MAX_PARSES_PER_CALL, RepoGraph};
use crate::index::{FileIndex, Role};
use crate::lang::Language;
use crate::symbol::SymbolKind;
use crate::text::contains_word;

/// A definition in a parsed file: `index.definitions[definition]` of `path`.
#[derive(Debug, Clone)]
pub struct Site {
    /// Repository-relative path.
    pub path: String,
    /// The file's parsed index.
    pub index: Arc<FileIndex>,
    /// Index of the definition in [`FileIndex::definitions`].
    pub definition: usize,
}

impl Site {
    /// The definition.
    pub fn def(&self) -> &crate::index::Definition {
        &self.index.definitions[self.definition]
    }
}

/// What one [`RepoGraph::lookup`] found, per name, in tree order then line order.
#[derive(Debug, Default)]
pub struct Lookup {
    /// Definitions of each asked definition name.
    pub definitions: BTreeMap<String, Vec<Site>>,
    /// Functions calling each asked caller name (each function once).
    pub callers: BTreeMap<String, Vec<Site>>,
    /// True when the parse bound ([`MAX_PARSES_PER_CALL`]) stopped the walk early.
    pub parse_bound_hit: bool,
}

impl RepoGraph {
    /// The definitions of every name in `definitions` and the functions that call every
    /// name in `callers`, at `revision`, in one walk of the tree: only files with a
    /// grammar that name one of them as a whole word are parsed (at most
    /// [`MAX_PARSES_PER_CALL`] new parses). Names that are not identifiers find nothing.
    ///
    /// # Errors
    /// [`GraphError::Read`] when git fails.
    pub fn lookup(
        &self,
        definitions: &[String],
        callers: &[String],
        revision: Revision,
    ) -> Result<Lookup, GraphError> {
        let defs: Vec<&str> = definitions
            .iter()
            .map(String::as_str)
            .filter(|n| identifier(n))
            .collect();
        let calls: Vec<&str> = callers
            .iter()
            .map(String::as_str)
            .filter(|n| identifier(n))
            .collect();
        let mut out = Lookup::default();
        if defs.is_empty() && calls.is_empty() {
            return Ok(out);
        }
        let wanted: Vec<&str> = defs.iter().chain(&calls).copied().collect();
        let mut parses = 0usize;
        let words = self.words(revision)?;
        for i in words.candidates(&wanted) {
            let file = &words.files[i as usize];
            if self.is_excluded(&file.path) {
                continue;
            }
            let Some(language) = Language::from_path(&file.path) else {
                continue;
            };
            let index = match self.cached(&file.blob_id, language) {
                Some(index) => index,
                None => {
                    let content = match self.reader.blob(&file.blob_id, MAX_FILE_BYTES)? {
                        BlobContent::Text(bytes) => bytes,
                        BlobContent::Binary | BlobContent::TooLarge(_) => continue,
                    };
                    if !wanted.iter().any(|n| contains_word(&content, n)) {
                        continue;
                    }
                    if parses >= MAX_PARSES_PER_CALL {
                        out.parse_bound_hit = true;
                        continue;
                    }
                    parses += 1;
                    self.index(file, language, &content)
                }
            };
            collect(&mut out, &file.path, &index, &defs, &calls);
        }
        Ok(out)
    }

    /// The parsed index of `path` at `revision`; `None` when its language has no grammar
    /// here, or it is binary or larger than the graph parses.
    ///
    /// # Errors
    /// [`GraphError::Read`] for a refused or missing path, or when git fails.
    pub fn file_index(
        &self,
        path: &str,
        revision: Revision,
    ) -> Result<Option<Arc<FileIndex>>, GraphError> {
        let Some(language) = Language::from_path(path) else {
            return Ok(None);
        };
        let file = self.reader.file(revision, path)?;
        match self.reader.blob(&file.blob_id, MAX_FILE_BYTES)? {
            BlobContent::Text(bytes) => Ok(Some(self.index(&file, language, &bytes))),
            BlobContent::Binary | BlobContent::TooLarge(_) => Ok(None),
        }
    }
}

/// Adds `index`'s definitions of `defs` and its functions calling `calls` to `out`.
fn collect(out: &mut Lookup, path: &str, index: &Arc<FileIndex>, defs: &[&str], calls: &[&str]) {
    for (i, d) in index.definitions.iter().enumerate() {
        if defs.contains(&d.name.as_str()) {
            out.definitions
                .entry(d.name.clone())
                .or_default()
                .push(Site {
                    path: path.to_string(),
                    index: index.clone(),
                    definition: i,
                });
        }
    }
    for o in &index.occurrences {
        let Some(e) = o.enclosing else { continue };
        if o.role != Role::Call
            || index.definitions[e].kind != SymbolKind::Function
            || !calls.contains(&&*o.name)
        {
            continue;
        }
        let sites = out.callers.entry(o.name.to_string()).or_default();
        if !sites.iter().any(|s| s.path == path && s.definition == e) {
            sites.push(Site {
                path: path.to_string(),
                index: index.clone(),
                definition: e,
            });
        }
    }
}

/// A single identifier (what occurrences and definitions are named).
fn identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}
