//! The repository graph over one snapshot's head and base trees, and the three queries the
//! model tools run: `definition`, `references` (with callers) and `outline`.

use std::sync::Arc;

use vouch_core::source::{Revision, SourceWindow};
use vouch_git::{BlobContent, ReadError, SourceReader, TreeFile};

use crate::cache::ParseCache;
use crate::index::{Definition, FileIndex, Occurrence, Role};
use crate::lang::Language;
use crate::symbol::SymbolKind;
use crate::text;
use crate::words::WordIndex;

/// Most bytes of text one query returns, notes included (the bound of every tool).
pub const MAX_BYTES: usize = vouch_git::reader::MAX_BYTES;
pub use crate::text::MAX_FILE_BYTES;
/// Most definitions one `definition` call shows.
pub const MAX_DEFINITIONS: usize = 20;
/// Most lines of one definition shown by `definition`.
pub const MAX_DEFINITION_LINES: u32 = 80;
/// Most uses one `references` call lists.
pub const MAX_REFERENCES: usize = 100;
/// Most callers one `references` call lists.
pub const MAX_CALLERS: usize = 40;
/// Most items one `outline` call lists.
pub const MAX_OUTLINE_ITEMS: usize = 200;
/// Most signature lines shown per item.
pub const MAX_SIGNATURE_LINES: u32 = 6;
/// Most text-search lines (files without a grammar) one call shows.
pub const MAX_TEXT_MATCHES: usize = 30;
/// Most files one call parses that were not parsed before (the rest is named).
pub const MAX_PARSES_PER_CALL: usize = 400;
/// A shown line longer than this many bytes is cut (its window still names the line).
pub const MAX_LINE_BYTES: usize = 300;

/// Why a graph query returned nothing. The message is written for the model.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// Reading the tree failed or the path was refused.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The symbol is not a name.
    #[error("refused: {reason}")]
    InvalidSymbol {
        /// What is wrong, in a sentence the model can act on.
        reason: String,
    },
}

impl GraphError {
    /// True when git failed (a source lookup failure), not the model's arguments.
    pub fn is_lookup_failure(&self) -> bool {
        matches!(self, GraphError::Read(ReadError::Git { .. }))
    }
}

/// How a result line was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// From the syntax tree of a file in this language.
    Grammar(Language),
    /// Text search: the file's language has no grammar here.
    TextSearch,
}

/// What one result line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitKind {
    /// A definition of this kind.
    Definition(SymbolKind),
    /// The symbol is called here.
    Call,
    /// The symbol is used here (not called).
    Reference,
    /// A function that calls the symbol.
    Caller,
    /// A line naming the symbol, found by text search.
    TextMatch,
}

/// One result, structured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Repository-relative path.
    pub path: String,
    /// What it is.
    pub kind: HitKind,
    /// The defined name, or for a use the name of the definition it sits in.
    pub name: Option<String>,
    /// First line of the item (1-based).
    pub start_line: u32,
    /// Last line of the item.
    pub end_line: u32,
    /// Parameters as written, for definitions.
    pub parameters: Vec<String>,
    /// How it was found.
    pub via: Via,
}

/// The result of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphResult {
    /// The results shown, in the order shown.
    pub hits: Vec<Hit>,
    /// The exact windows whose lines the text shows (for the source ledger).
    pub windows: Vec<SourceWindow>,
    /// True when a bound left something out (the text says which).
    pub truncated: bool,
    /// True when some of the result came from text search (files without a grammar).
    pub text_fallback: bool,
    /// The text for the model.
    pub text: String,
}

/// The repository graph of one snapshot: queries parse files lazily (only files that name
/// the symbol, or the file asked for) and keep parsed files in a [`ParseCache`].
///
/// Reads git objects through [`SourceReader`] only: never the working tree, never a
/// symbolic link's target, never a write.
#[derive(Debug)]
pub struct RepoGraph {
    pub(crate) reader: Arc<SourceReader>,
    cache: Arc<ParseCache>,
    parsed: std::sync::atomic::AtomicU32,
    /// Paths no answer shows ([`RepoGraph::excluding`]).
    excluded: Vec<String>,
}

/// Files that name a symbol: parsed ones and text-only ones.
#[derive(Default)]
pub(crate) struct Scan {
    pub(crate) parsed: Vec<(String, Arc<FileIndex>)>,
    /// Lines of files without a grammar naming the symbol: path, line, the text shown,
    /// and whether it is the whole line ([`whole_lines`]).
    text: Vec<(String, u32, String, bool)>,
    text_truncated: bool,
    too_large: u32,
    parse_bound_hit: bool,
}

impl RepoGraph {
    /// The graph over `reader`'s trees with the process-wide [`ParseCache::shared`].
    pub fn new(reader: Arc<SourceReader>) -> RepoGraph {
        RepoGraph::with_cache(reader, ParseCache::shared())
    }

    /// The graph over `reader`'s trees with its own cache.
    pub fn with_cache(reader: Arc<SourceReader>, cache: Arc<ParseCache>) -> RepoGraph {
        RepoGraph {
            reader,
            cache,
            parsed: 0.into(),
            excluded: Vec::new(),
        }
    }

    /// This graph, never showing `paths` (the changed files a review excludes): no
    /// lookup visits them and an outline of one is refused.
    #[must_use]
    pub fn excluding(mut self, paths: Vec<String>) -> RepoGraph {
        self.excluded = paths;
        self
    }

    /// Whether answers leave `path` out ([`RepoGraph::excluding`]).
    pub(crate) fn is_excluded(&self, path: &str) -> bool {
        self.excluded.iter().any(|p| p == path)
    }

    /// How many files this graph has parsed (cache hits are not parses).
    pub fn files_parsed(&self) -> u32 {
        self.parsed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The cached index of a blob, if it was parsed before.
    pub(crate) fn cached(&self, blob_id: &str, language: Language) -> Option<Arc<FileIndex>> {
        self.cache.get(blob_id, language)
    }

    /// Which files of the tree at `revision` name which words, read once per tree and
    /// shared through the cache.
    pub(crate) fn words(&self, revision: Revision) -> Result<Arc<WordIndex>, GraphError> {
        let slot = self.cache.word_slot(&self.reader.tree_hex(revision));
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = slot.as_ref() {
            return Ok(index.clone());
        }
        let files = self.reader.files(revision)?;
        let index = Arc::new(WordIndex::build(&self.reader, files)?);
        *slot = Some(index.clone());
        Ok(index)
    }

    /// The parsed index of a blob, from the cache or parsed now.
    pub(crate) fn index(
        &self,
        file: &TreeFile,
        language: Language,
        content: &[u8],
    ) -> Arc<FileIndex> {
        let (index, parsed) = self.cache.get_or_parse(&file.blob_id, language, || {
            FileIndex::parse(language, content)
        });
        if parsed {
            self.parsed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        index
    }

    /// Every file at `revision` that names `name` as a whole word: files with a grammar
    /// parsed (at most [`MAX_PARSES_PER_CALL`] new parses), others searched as text.
    pub(crate) fn scan(&self, name: &str, revision: Revision) -> Result<Scan, GraphError> {
        let words = self.words(revision)?;
        let mut scan = Scan {
            too_large: words.too_large,
            ..Scan::default()
        };
        let mut parses = 0usize;
        for i in words.candidates(&[name]) {
            let file = &words.files[i as usize];
            if self.is_excluded(&file.path) {
                continue;
            }
            let language = Language::from_path(&file.path);
            if let Some(lang) = language
                && let Some(index) = self.cache.get(&file.blob_id, lang)
            {
                if names(&index, name) {
                    scan.parsed.push((file.path.clone(), index));
                }
                continue;
            }
            let content = match self.reader.blob(&file.blob_id, MAX_FILE_BYTES)? {
                BlobContent::Text(bytes) => bytes,
                BlobContent::Binary | BlobContent::TooLarge(_) => continue,
            };
            if !text::contains_word(&content, name) {
                continue;
            }
            match language {
                Some(_) if parses >= MAX_PARSES_PER_CALL => scan.parse_bound_hit = true,
                Some(lang) => {
                    parses += 1;
                    let index = self.index(file, lang, &content);
                    if names(&index, name) {
                        scan.parsed.push((file.path.clone(), index));
                    }
                }
                None => text_matches(&mut scan, &file.path, &content, name),
            }
        }
        Ok(scan)
    }

    /// `definition`: where `symbol` is defined at `revision`, each definition shown whole
    /// (up to [`MAX_DEFINITION_LINES`] lines) with its parameters. Definitions in files
    /// whose path contains `path_hint` come first; then tree order.
    ///
    /// # Errors
    /// [`GraphError::InvalidSymbol`]; [`GraphError::Read`] when git fails.
    pub fn definition(
        &self,
        symbol: &str,
        path_hint: Option<&str>,
        revision: Revision,
    ) -> Result<GraphResult, GraphError> {
        let symbol = Symbol::parse(symbol)?;
        let scan = self.scan(&symbol.name, revision)?;
        let mut found: Vec<(bool, usize, &str, &FileIndex, &Definition)> = Vec::new();
        for (order, (path, index)) in scan.parsed.iter().enumerate() {
            let hinted = path_hint.is_some_and(|h| !h.is_empty() && path.contains(h));
            for def in index.definitions.iter().filter(|d| d.name == symbol.name) {
                found.push((hinted, order, path, index, def));
            }
        }
        if let Some(q) = &symbol.qualifier
            && found.iter().any(|f| f.4.container.as_deref() == Some(q))
        {
            found.retain(|f| f.4.container.as_deref() == Some(q));
        }
        found.sort_by_key(|f| (!f.0, f.1, f.4.start_line));
        let mut out = Out::new(format!(
            "definitions of `{}` at {}: {} found in files with a grammar\n",
            symbol.raw,
            rev_name(revision),
            found.len()
        ));
        for (i, (_, _, path, index, def)) in found.iter().enumerate() {
            if i >= MAX_DEFINITIONS {
                out.note(format!(
                    "[truncated: definition shows at most {MAX_DEFINITIONS} definitions; {} more not shown; pass path_hint to choose]",
                    found.len() - MAX_DEFINITIONS
                ));
                break;
            }
            let end = def.end_line.min(def.start_line + MAX_DEFINITION_LINES - 1);
            let mut block = format!(
                "\n{path} lines {}-{} ({} {}{}){}\n",
                def.start_line,
                def.end_line,
                index.language.as_str(),
                def.kind.as_str(),
                def.container
                    .as_ref()
                    .map(|c| format!(" in `{c}`"))
                    .unwrap_or_default(),
                params_note(def),
            );
            numbered(&mut block, index, def.start_line, end);
            if end < def.end_line {
                block.push_str(&format!(
                    "[cut at {MAX_DEFINITION_LINES} lines; read_file {path} from line {} for the rest]\n",
                    end + 1
                ));
            }
            let hit = def_hit(path, index.language, def);
            if !out.push(
                block,
                whole_lines(index, revision, path, (def.start_line, end)),
                hit,
            ) {
                break;
            }
        }
        self.finish(out, &scan, &symbol, revision)
    }

    /// `references`: every use of `symbol` at `revision` (calls marked), then the
    /// functions that call it (callers) with their signatures.
    ///
    /// # Errors
    /// [`GraphError::InvalidSymbol`]; [`GraphError::Read`] when git fails.
    pub fn references(&self, symbol: &str, revision: Revision) -> Result<GraphResult, GraphError> {
        let symbol = Symbol::parse(symbol)?;
        let scan = self.scan(&symbol.name, revision)?;
        let uses: Vec<_> = scan
            .parsed
            .iter()
            .flat_map(|(path, index)| {
                index
                    .occurrences
                    .iter()
                    .filter(|o| *o.name == *symbol.name)
                    .map(move |o| (path, index, o))
            })
            .collect();
        let mut out = Out::new(format!(
            "references to `{}` at {}: {} uses in files with a grammar\n",
            symbol.raw,
            rev_name(revision),
            uses.len()
        ));
        let mut callers: Vec<Caller<'_>> = Vec::new();
        for (i, (path, index, o)) in uses.iter().enumerate() {
            if o.role == Role::Call
                && let Some(e) = o.enclosing
                && index.definitions[e].kind == SymbolKind::Function
                && !callers.iter().any(|c| c.0 == *path && c.2 == e)
            {
                callers.push((path, index, e));
            }
            if i >= MAX_REFERENCES {
                continue;
            }
            let (block, hit, whole) = use_entry(path, index, o);
            let windows = match whole {
                true => vec![window(revision, path, o.line, o.line)],
                false => vec![],
            };
            if !out.push(block, windows, hit) {
                break;
            }
        }
        if uses.len() > MAX_REFERENCES {
            out.note(format!(
                "[truncated: references lists at most {MAX_REFERENCES} uses; {} more not shown]",
                uses.len() - MAX_REFERENCES
            ));
        }
        push_callers(&mut out, &callers, &symbol.raw, revision);
        self.finish(out, &scan, &symbol, revision)
    }

    /// `outline`: the top-level items of `path` at `revision` (and the direct members of
    /// classes, impls, traits and modules) with line ranges, parameters and signature
    /// lines. A file without a grammar gets a text-search outline, stated as such.
    ///
    /// # Errors
    /// [`GraphError::Read`] for a refused or missing path, or when git fails.
    pub fn outline(&self, path: &str, revision: Revision) -> Result<GraphResult, GraphError> {
        let file = self.reader.file(revision, path)?;
        let path = file.path.as_str();
        if self.is_excluded(path) {
            return Ok(plain(format!(
                "{path} is a changed file this review excludes from review; it is not shown\n"
            )));
        }
        let content = match self.reader.blob(&file.blob_id, MAX_FILE_BYTES)? {
            BlobContent::Text(bytes) => bytes,
            BlobContent::Binary => {
                return Ok(plain(format!(
                    "{path} at {} is a binary file; it has no outline\n",
                    rev_name(revision)
                )));
            }
            BlobContent::TooLarge(size) => {
                return Ok(plain(format!(
                    "{path} at {} has {size} bytes, more than the {MAX_FILE_BYTES} bytes the graph parses; use read_file or grep on it\n",
                    rev_name(revision)
                )));
            }
        };
        let Some(language) = Language::from_path(path) else {
            return Ok(text_outline(path, revision, &content));
        };
        let index = self.index(&file, language, &content);
        let items: Vec<&Definition> = index.definitions.iter().filter(|d| d.in_outline).collect();
        let mut out = Out::new(format!(
            "outline of {path} at {} ({}, from its syntax tree): {} items, {} lines\n",
            rev_name(revision),
            language.as_str(),
            items.len(),
            index.lines.len()
        ));
        if index.has_errors {
            out.line(
                "[the parser met syntax errors in this file; the outline may be incomplete]\n"
                    .into(),
            );
        }
        for (i, def) in items.iter().enumerate() {
            if i >= MAX_OUTLINE_ITEMS {
                out.note(format!(
                    "[truncated: outline lists at most {MAX_OUTLINE_ITEMS} items; {} more not shown; use read_file from line {}]",
                    items.len() - MAX_OUTLINE_ITEMS,
                    def.start_line
                ));
                break;
            }
            let indent = if def.depth > 0 { "  " } else { "" };
            let sig_end = signature_end(def);
            let mut block = format!(
                "{indent}{} `{}` lines {}-{}{}\n",
                def.kind.as_str(),
                def.name,
                def.start_line,
                def.end_line,
                params_note(def)
            );
            numbered(&mut block, &index, def.start_line, sig_end);
            let hit = def_hit(path, language, def);
            if !out.push(
                block,
                whole_lines(&index, revision, path, (def.start_line, sig_end)),
                hit,
            ) {
                break;
            }
        }
        Ok(out.done())
    }

    /// Appends the text-search part and the notes every symbol query ends with.
    fn finish(
        &self,
        mut out: Out,
        scan: &Scan,
        symbol: &Symbol,
        revision: Revision,
    ) -> Result<GraphResult, GraphError> {
        if !scan.text.is_empty() {
            out.text_fallback = true;
            out.line(format!(
                "\ntext search (these files' languages have no grammar here, so these are lines naming `{}`, not parsed definitions or uses):\n",
                symbol.name
            ));
            for (path, line, shown, whole) in &scan.text {
                let hit = Hit {
                    path: path.clone(),
                    kind: HitKind::TextMatch,
                    name: None,
                    start_line: *line,
                    end_line: *line,
                    parameters: Vec::new(),
                    via: Via::TextSearch,
                };
                let windows = match whole {
                    true => vec![window(revision, path, *line, *line)],
                    false => vec![],
                };
                if !out.push(format!("{path}:{line}: {shown}\n"), windows, hit) {
                    break;
                }
            }
            if scan.text_truncated {
                out.note(format!(
                    "[truncated: text search shows at most {MAX_TEXT_MATCHES} lines; use grep for more]"
                ));
            }
        }
        if scan.too_large > 0 {
            out.note(format!(
                "[{} files larger than {MAX_FILE_BYTES} bytes were not searched; use grep or read_file on them]",
                scan.too_large
            ));
        }
        if scan.parse_bound_hit {
            out.note(format!(
                "[stopped parsing after {MAX_PARSES_PER_CALL} new files in this call; some files naming `{}` were not examined; call again (parsed files are kept) or use grep]",
                symbol.name
            ));
        }
        Ok(out.done())
    }
}

/// Whether a parsed file defines or uses `name`.
fn names(index: &FileIndex, name: &str) -> bool {
    index.definitions.iter().any(|d| d.name == name)
        || index.occurrences.iter().any(|o| *o.name == *name)
}

/// Lines of a file without a grammar that name `name`, into the scan (bounded).
fn text_matches(scan: &mut Scan, path: &str, content: &[u8], name: &str) {
    for (i, line) in text::lines(content).iter().enumerate() {
        if !text::contains_word(line.as_bytes(), name) {
            continue;
        }
        if scan.text.len() >= MAX_TEXT_MATCHES {
            scan.text_truncated = true;
            return;
        }
        let line = line.trim_start();
        let shown = text::cut(line, MAX_LINE_BYTES);
        let whole = shown.len() == line.len();
        let shown = match whole {
            true => shown.to_string(),
            false => format!("{shown}{}", cut_note(shown.len(), line.len())),
        };
        scan.text
            .push((path.to_string(), i as u32 + 1, shown, whole));
    }
}

/// A symbol as the model names it: `name`, or `Qualifier::name` / `Qualifier.name`.
struct Symbol {
    raw: String,
    name: String,
    qualifier: Option<String>,
}

impl Symbol {
    fn parse(raw: &str) -> Result<Symbol, GraphError> {
        let refuse = |reason: String| Err(GraphError::InvalidSymbol { reason });
        let raw = raw.trim();
        if raw.is_empty() {
            return refuse("the symbol is empty; name a function, type or variable, e.g. `parse_config` or `Config::load`".into());
        }
        if raw.len() > 200 {
            return refuse("the symbol is longer than 200 bytes; name one identifier".into());
        }
        let parts: Vec<&str> = raw
            .split("::")
            .flat_map(|p| p.split('.'))
            .flat_map(|p| p.split("->"))
            .collect();
        let valid = |p: &&str| {
            !p.is_empty()
                && p.trim_start_matches('~')
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        };
        if !parts.iter().all(valid) {
            return refuse(format!(
                "`{raw}` is not a symbol name; pass an identifier such as `parse_config`, optionally qualified as `Type::name` or `module.name` (use grep for patterns)"
            ));
        }
        let name = parts[parts.len() - 1].to_string();
        let qualifier = (parts.len() > 1).then(|| parts[parts.len() - 2].to_string());
        Ok(Symbol {
            raw: raw.to_string(),
            name,
            qualifier,
        })
    }
}

/// The bounded text and windows of a result being built.
struct Out {
    text: String,
    windows: Vec<SourceWindow>,
    hits: Vec<Hit>,
    truncated: bool,
    text_fallback: bool,
}

impl Out {
    fn new(header: String) -> Out {
        Out {
            text: header,
            windows: Vec::new(),
            hits: Vec::new(),
            truncated: false,
            text_fallback: false,
        }
    }

    /// Adds a block whose lines are `window`, unless it would pass the byte bound (then
    /// says so and returns false).
    fn push(&mut self, block: String, windows: Vec<SourceWindow>, hit: Hit) -> bool {
        if self.text.len() + block.len() > MAX_BYTES - 1024 {
            if !self.truncated {
                self.note(format!(
                    "[truncated: graph tools return at most {MAX_BYTES} bytes per call; narrow the query]"
                ));
            }
            return false;
        }
        self.text.push_str(&block);
        self.windows.extend(windows);
        self.hits.push(hit);
        true
    }

    fn line(&mut self, line: String) {
        self.text.push_str(&line);
    }

    fn note(&mut self, note: String) {
        self.truncated = true;
        self.text.push_str(&note);
        self.text.push('\n');
    }

    fn done(self) -> GraphResult {
        GraphResult {
            hits: self.hits,
            windows: self.windows,
            truncated: self.truncated,
            text_fallback: self.text_fallback,
            text: self.text,
        }
    }
}

/// A result with text only (nothing shown from the file).
fn plain(text: String) -> GraphResult {
    GraphResult {
        hits: Vec::new(),
        windows: Vec::new(),
        truncated: false,
        text_fallback: false,
        text,
    }
}

/// The outline of a file without a grammar: lines that look like definitions.
fn text_outline(path: &str, revision: Revision, content: &[u8]) -> GraphResult {
    let pattern = definition_line_pattern();
    let mut out = Out::new(format!(
        "outline of {path} at {}: no grammar for this file's language, so this is a text-search outline: lines that look like definitions (matching /{}/), not a parsed outline\n",
        rev_name(revision),
        pattern.as_str()
    ));
    out.text_fallback = true;
    for (i, line) in text::lines(content).iter().enumerate() {
        if !pattern.is_match(line) {
            continue;
        }
        if out.hits.len() >= MAX_OUTLINE_ITEMS {
            out.note(format!(
                "[truncated: outline lists at most {MAX_OUTLINE_ITEMS} items; use read_file from line {}]",
                i + 1
            ));
            break;
        }
        let n = i as u32 + 1;
        let hit = Hit {
            path: path.to_string(),
            kind: HitKind::TextMatch,
            name: None,
            start_line: n,
            end_line: n,
            parameters: Vec::new(),
            via: Via::TextSearch,
        };
        let shown = text::cut(line, MAX_LINE_BYTES);
        let (note, windows) = match shown.len() == line.len() {
            true => (String::new(), vec![window(revision, path, n, n)]),
            false => (cut_note(shown.len(), line.len()), vec![]),
        };
        let block = format!("{n}: {shown}{note}\n");
        if !out.push(block, windows, hit) {
            break;
        }
    }
    out.done()
}

/// Lines that start a definition in many languages without a grammar here.
fn definition_line_pattern() -> &'static regex::Regex {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PATTERN.get_or_init(|| {
        regex::Regex::new(
            r"^\s*(?:(?:pub|public|private|protected|export|static|async|abstract|final|local|override)\s+)*(?:def|defp|fn|fun|func|function|sub|proc|class|module|struct|enum|interface|trait|object|type|impl|macro)\b",
        )
        .expect("the definition-line pattern is valid")
    })
}

fn def_hit(path: &str, language: Language, def: &Definition) -> Hit {
    Hit {
        path: path.to_string(),
        kind: HitKind::Definition(def.kind),
        name: Some(def.name.clone()),
        start_line: def.start_line,
        end_line: def.end_line,
        parameters: def.parameters.clone(),
        via: Via::Grammar(language),
    }
}

/// A function calling the symbol: its file, the file's index and the definition's index.
type Caller<'a> = (&'a String, &'a FileIndex, usize);

/// One use of a symbol in `references`: `path:line: call|use in|at …: the line`.
fn use_entry(path: &str, index: &FileIndex, o: &Occurrence) -> (String, Hit, bool) {
    let enclosing = o.enclosing.map(|e| &index.definitions[e]);
    let role = if o.role == Role::Call { "call" } else { "use" };
    let place = enclosing
        .map(|d| format!("in `{}`", d.name))
        .unwrap_or_else(|| "at top level".into());
    let line = index
        .lines
        .get(o.line as usize - 1)
        .map_or("", |l| l.trim_start());
    let (shown, mark) = cut_line(index, o.line, line);
    let whole = shown.len() == line.len();
    let block = format!("{path}:{}: {role} {place}: {shown}{mark}\n", o.line);
    let hit = Hit {
        path: path.to_string(),
        kind: if o.role == Role::Call {
            HitKind::Call
        } else {
            HitKind::Reference
        },
        name: enclosing.map(|d| d.name.clone()),
        start_line: o.line,
        end_line: o.line,
        parameters: Vec::new(),
        via: Via::Grammar(index.language),
    };
    (block, hit, whole)
}

/// The callers section of `references`: each calling function's signature, at most
/// [`MAX_CALLERS`], until the output is full.
fn push_callers(out: &mut Out, callers: &[Caller<'_>], symbol: &str, revision: Revision) {
    if !callers.is_empty() {
        out.line(format!(
            "\ncallers of `{symbol}` (functions that call it):\n"
        ));
    }
    for (i, (path, index, e)) in callers.iter().enumerate() {
        if i >= MAX_CALLERS {
            out.note(format!(
                "[truncated: at most {MAX_CALLERS} callers shown; {} more not shown]",
                callers.len() - MAX_CALLERS
            ));
            break;
        }
        let def = &index.definitions[*e];
        let sig_end = signature_end(def);
        let mut block = format!(
            "{path} lines {}-{}: `{}`{}\n",
            def.start_line,
            def.end_line,
            def.name,
            def.container
                .as_ref()
                .map(|c| format!(" in `{c}`"))
                .unwrap_or_default()
        );
        numbered(&mut block, index, def.start_line, sig_end);
        let mut hit = def_hit(path, index.language, def);
        hit.kind = HitKind::Caller;
        if !out.push(
            block,
            whole_lines(index, revision, path, (def.start_line, sig_end)),
            hit,
        ) {
            break;
        }
    }
}

/// The last signature line shown for a definition (bounded).
fn signature_end(def: &Definition) -> u32 {
    def.signature_end_line
        .min(def.start_line + MAX_SIGNATURE_LINES - 1)
}

fn params_note(def: &Definition) -> String {
    if def.parameters.is_empty() {
        String::new()
    } else {
        format!("; parameters: {}", def.parameters.join(" | "))
    }
}

/// Line `n`'s text `line` (or its tail) cut at [`MAX_LINE_BYTES`], and what follows it: the
/// line's CRLF mark when shown to its end, else a note that says the line was cut (and,
/// [`whole_lines`], it is not recorded as read).
fn cut_line<'l>(index: &FileIndex, n: u32, line: &'l str) -> (&'l str, String) {
    let shown = text::cut(line, MAX_LINE_BYTES);
    if shown.len() == line.len() {
        (shown, index.ending_mark(n).to_string())
    } else {
        (shown, cut_note(shown.len(), line.len()))
    }
}

/// What a tool says after a line it cut at [`MAX_LINE_BYTES`].
fn cut_note(shown: usize, whole: usize) -> String {
    format!(" …[line cut: {shown} of {whole} bytes shown, not counted as read; read_file it]")
}

/// Rule (a line shown cut is not read): the windows of lines `start..=end` of a parsed
/// file that a block shows whole. A line over [`MAX_LINE_BYTES`] is shown cut, so it splits
/// the window and is never recorded as read: a citation of it needs a `read_file`.
fn whole_lines(
    index: &FileIndex,
    revision: Revision,
    path: &str,
    (start, end): (u32, u32),
) -> Vec<SourceWindow> {
    let mut out = Vec::new();
    let mut open: Option<u32> = None;
    for n in start..=end {
        let whole = index
            .lines
            .get(n as usize - 1)
            .is_some_and(|l| l.len() <= MAX_LINE_BYTES);
        match (whole, open) {
            (true, None) => open = Some(n),
            (false, Some(first)) => {
                out.push(window(revision, path, first, n - 1));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(first) = open {
        out.push(window(revision, path, first, end));
    }
    out
}

/// Appends lines `start..=end` of a parsed file, numbered, each cut at [`MAX_LINE_BYTES`].
fn numbered(block: &mut String, index: &FileIndex, start: u32, end: u32) {
    for n in start..=end {
        let Some(line) = index.lines.get(n as usize - 1) else {
            break;
        };
        let (shown, mark) = cut_line(index, n, line);
        block.push_str(&format!("{n}: {shown}{mark}\n"));
    }
}

fn window(revision: Revision, path: &str, start_line: u32, end_line: u32) -> SourceWindow {
    SourceWindow {
        revision,
        path: path.to_string(),
        start_line,
        end_line,
    }
}

/// How a revision is named in tool output (as the other repository tools name it).
fn rev_name(revision: Revision) -> &'static str {
    match revision {
        Revision::Head => "head",
        Revision::Base => "base (the merge base)",
    }
}
