//! The repository tools a model may call, over one snapshot's git objects, with a source
//! ledger per stage execution.
//!
//! Every successful read records the exact window returned (revision, path, line window)
//! in this execution's [`SourceLedger`]; citations are later checked against it. Tool
//! failures are returned to the model as tool errors and counted, so a stage that could
//! not retrieve source is reported as a source lookup gap.
//!
//! The graph tools (`definition`, `references`, `outline`) answer from
//! [`vouch_graph::RepoGraph`]: syntax trees of the files that name the symbol, parsed on
//! demand and cached by blob for the run. Everything they show is recorded like a read.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use vouch_core::{LineSpan, Revision, SourceLedger, SourceWindow};
use vouch_git::{ReadError, SourceReader};
use vouch_graph::{GraphError, GraphResult, RepoGraph};
use vouch_llm::{ToolBox, ToolSpec};

/// The read-only tools for one stage execution: `read_file`, `grep`, `list_dir`, `diff`,
/// and the graph tools `definition`, `references`, `outline`.
pub struct RepoTools {
    reader: Arc<SourceReader>,
    graph: RepoGraph,
    ledger: Mutex<SourceLedger>,
    lookup_failures: AtomicU32,
    /// Paths of the changed files the review excludes (at head and base).
    excluded: Vec<String>,
}

impl RepoTools {
    /// Tools over `reader` with an empty ledger; the graph tools share the process-wide
    /// parse cache ([`vouch_graph::ParseCache::shared`]), so a file parsed for one
    /// execution is not parsed again in the run.
    pub fn new(reader: Arc<SourceReader>) -> Self {
        RepoTools {
            graph: RepoGraph::new(reader.clone()),
            reader,
            ledger: Mutex::new(SourceLedger::default()),
            lookup_failures: AtomicU32::new(0),
            excluded: Vec::new(),
        }
    }

    /// Rule (an excluded changed file is not reviewed, so not read): `read_file`,
    /// `diff` and `outline` refuse `paths` (the changed files the review excludes, at
    /// head and base), `grep` and the graph lookups leave them out, and nothing of them is
    /// ever recorded as read, so no citation can rest on a file the report lists as not
    /// reviewed.
    pub fn excluding(mut self, paths: Vec<String>) -> Self {
        self.graph = RepoGraph::new(self.reader.clone()).excluding(paths.clone());
        self.excluded = paths;
        self
    }

    /// The refusal of a read of an excluded changed file, if `path` is one.
    fn refuse_excluded(&self, path: &str) -> Result<(), String> {
        match self.is_excluded(path) {
            true => Err(format!(
                "`{path}` is a changed file this review excludes from review; it is not \
                 shown, and no finding may cite it"
            )),
            false => Ok(()),
        }
    }

    /// Records source the host gave inline (or any window read outside a tool call);
    /// never a window of an excluded changed file ([`RepoTools::excluding`]).
    pub fn record(&self, window: SourceWindow) {
        self.record_all([window]);
    }

    /// Whether `path` is a changed file the review excludes.
    fn is_excluded(&self, path: &str) -> bool {
        self.excluded.iter().any(|p| p == path)
    }

    /// Records that the metadata-only patch of `path` was shown (inline or by `diff`).
    pub fn record_metadata(&self, path: &str) {
        self.ledger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record_metadata(path);
    }

    /// Records part of a long line the host gave inline (shown cut).
    pub fn record_span(&self, span: LineSpan) {
        self.record_spans([span]);
    }

    /// The ledger so far.
    pub fn ledger(&self) -> SourceLedger {
        self.ledger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many tool calls failed because the host could not retrieve source (git
    /// failures), as opposed to bad arguments from the model.
    pub fn lookup_failures(&self) -> u32 {
        self.lookup_failures.load(Ordering::Relaxed)
    }

    fn record_all(&self, windows: impl IntoIterator<Item = SourceWindow>) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        for w in windows.into_iter().filter(|w| !self.is_excluded(&w.path)) {
            ledger.record(w);
        }
    }

    /// Records the parts of long lines a tool showed cut (never as whole lines).
    fn record_spans(&self, spans: impl IntoIterator<Item = LineSpan>) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        for s in spans.into_iter().filter(|s| !self.is_excluded(&s.path)) {
            ledger.record_span(s);
        }
    }

    fn fail(&self, error: ReadError) -> String {
        if matches!(error, ReadError::Git { .. }) {
            self.lookup_failures.fetch_add(1, Ordering::Relaxed);
        }
        error.to_string()
    }

    /// What a tool shows: `text` to the model, its windows and long-line spans to the
    /// ledger, but only when the text fits the `max_bytes` the request has left for it
    /// (nothing is recorded for an answer not shown).
    fn show(
        &self,
        text: String,
        windows: impl IntoIterator<Item = SourceWindow>,
        spans: impl IntoIterator<Item = LineSpan>,
        max_bytes: usize,
    ) -> Result<String, String> {
        let bytes = vouch_llm::json_text_len(&text);
        if bytes > max_bytes {
            return Err(vouch_llm::oversized_answer(bytes, max_bytes));
        }
        self.record_all(windows);
        self.record_spans(spans);
        Ok(text)
    }

    /// A graph tool's result: shown as [`RepoTools::show`] does.
    fn graph_result(
        &self,
        result: Result<GraphResult, GraphError>,
        max_bytes: usize,
    ) -> Result<String, String> {
        match result {
            Ok(found) => self.show(found.text, found.windows, [], max_bytes),
            Err(e) => {
                if e.is_lookup_failure() {
                    self.lookup_failures.fetch_add(1, Ordering::Relaxed);
                }
                Err(e.to_string())
            }
        }
    }

    /// The `read_file` tool: a line window, or a byte window of one long line.
    fn read_file(
        &self,
        args: &Value,
        revision: Revision,
        max_bytes: usize,
    ) -> Result<String, String> {
        let path = str_arg(args, "path")?;
        self.refuse_excluded(path)?;
        let start_line = line_arg(args, "start_line")?;
        let read = match byte_arg(args)? {
            Some(start_byte) => {
                let line = start_line
                    .ok_or("start_byte needs start_line: the line whose bytes to read")?;
                // A window that fits what the request has left (its text may double when
                // escaped), so a late read shows less rather than nothing.
                let window = (max_bytes / 2).min(vouch_git::reader::MAX_LINE_WINDOW_BYTES);
                self.reader
                    .read_line_window(revision, path, line, start_byte, window)
            }
            None => self
                .reader
                .read_file(revision, path, start_line, line_arg(args, "end_line")?),
        }
        .map_err(|e| self.fail(e))?;
        self.show(read.text, read.window, read.spans, max_bytes)
    }

    /// The `diff` tool: the file's patch, and for a metadata-only file (binary, a mode
    /// change, a pure rename) the record that its metadata was shown.
    fn diff(&self, path: &str, max_bytes: usize) -> Result<String, String> {
        self.refuse_excluded(path)?;
        let diff = self.reader.diff(path).map_err(|e| self.fail(e))?;
        self.show_diff(&diff, max_bytes)
    }

    /// Shows a patch already read: its text, windows and spans, and for a metadata-only
    /// file the record that its metadata was shown.
    fn show_diff(&self, diff: &vouch_git::FileDiff, max_bytes: usize) -> Result<String, String> {
        let shown = self.show(
            diff.text.clone(),
            diff.windows.iter().cloned(),
            diff.spans.iter().cloned(),
            max_bytes,
        )?;
        if diff.file.is_metadata_only() {
            self.record_metadata(&diff.file.path);
        }
        Ok(shown)
    }

    fn dispatch(&self, name: &str, args: &Value, max_bytes: usize) -> Result<String, String> {
        let revision = revision_arg(args)?;
        match name {
            "read_file" => self.read_file(args, revision, max_bytes),
            "grep" => {
                let pattern = str_arg(args, "pattern")?;
                let glob = args
                    .get("path_glob")
                    .and_then(Value::as_str)
                    .filter(|g| !g.is_empty());
                let found = self
                    .reader
                    .grep_except(pattern, glob, revision, &self.excluded)
                    .map_err(|e| self.fail(e))?;
                self.show(found.text, found.windows, found.spans, max_bytes)
            }
            "list_dir" => {
                let path = args.get("path").and_then(Value::as_str).unwrap_or("");
                let listing = self
                    .reader
                    .list_dir(path, revision)
                    .map_err(|e| self.fail(e))?;
                self.show(listing.text, [], [], max_bytes)
            }
            "diff" => self.diff(str_arg(args, "path")?, max_bytes),
            "definition" => {
                let symbol = str_arg(args, "symbol")?;
                let hint = args
                    .get("path_hint")
                    .and_then(Value::as_str)
                    .filter(|h| !h.is_empty());
                self.graph_result(self.graph.definition(symbol, hint, revision), max_bytes)
            }
            "references" => {
                let symbol = str_arg(args, "symbol")?;
                self.graph_result(self.graph.references(symbol, revision), max_bytes)
            }
            "outline" => {
                let path = str_arg(args, "path")?;
                self.graph_result(self.graph.outline(path, revision), max_bytes)
            }
            other => Err(format!(
                "unknown tool `{other}`; the tools are read_file, grep, list_dir, diff, definition, references and outline"
            )),
        }
    }
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string argument `{key}`"))
}

fn line_arg(args: &Value, key: &str) -> Result<Option<u32>, String> {
    u32_arg(args, key, "a positive line number")
}

fn byte_arg(args: &Value) -> Result<Option<u32>, String> {
    u32_arg(args, "start_byte", "a byte offset (0 or more)")
}

/// An optional non-negative integer argument (a JSON number or a numeric string, as
/// small models send them); anything else is a tool error naming what `key` must be.
fn u32_arg(args: &Value, key: &str, must_be: &str) -> Result<Option<u32>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("argument `{key}` must be {must_be}")),
    }
}

fn revision_arg(args: &Value) -> Result<Revision, String> {
    match args.get("revision").and_then(Value::as_str) {
        None | Some("") | Some("head") => Ok(Revision::Head),
        Some("base") => Ok(Revision::Base),
        Some(other) => Err(format!(
            "revision must be \"head\" or \"base\", not {other:?}"
        )),
    }
}

impl RepoTools {
    /// Whether every window and span was already shown in this execution, and there is
    /// at least one (an answer that shows no source is never a repeat).
    fn shown_already(&self, windows: &[SourceWindow], spans: &[LineSpan]) -> bool {
        let ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        !(windows.is_empty() && spans.is_empty())
            && windows.iter().all(|w| ledger.check(w).is_ok())
            && spans.iter().all(|s| {
                ledger.shows_bytes(s.revision, &s.path, s.line, (s.start_byte, s.end_byte))
            })
    }

    /// Rule (a repeat is not a new read): a `diff` whose windows, spans and metadata this
    /// execution already showed, or a `read_file` of an explicit line window it already
    /// showed, is answered without counting against `max_tool_calls` ([`ToolBox::repeat`]);
    /// models often ask for the patch they were given inline. Anything else is `None`.
    fn repeated(&self, name: &str, args: &Value, max_bytes: usize) -> Option<String> {
        match name {
            "diff" => {
                let path = str_arg(args, "path").ok()?;
                self.refuse_excluded(path).ok()?;
                let diff = self.reader.diff(path).ok()?;
                let metadata_only = diff.file.is_metadata_only();
                let metadata_shown = !metadata_only
                    || self
                        .ledger
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .shows_metadata(&diff.file.path);
                let source_shown = (metadata_only && diff.windows.is_empty())
                    || self.shown_already(&diff.windows, &diff.spans);
                (metadata_shown && source_shown)
                    .then(|| self.show_diff(&diff, max_bytes).ok())
                    .flatten()
            }
            "read_file" if byte_arg(args).ok()?.is_none() => {
                let window = SourceWindow {
                    revision: revision_arg(args).ok()?,
                    path: str_arg(args, "path").ok()?.to_string(),
                    start_line: line_arg(args, "start_line").ok()??,
                    end_line: line_arg(args, "end_line").ok()??,
                };
                self.shown_already(std::slice::from_ref(&window), &[])
                    .then(|| self.read_file(args, window.revision, max_bytes).ok())
                    .flatten()
            }
            _ => None,
        }
    }
}

impl ToolBox for RepoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        let revision = json!({"type": "string", "enum": ["head", "base"], "description": "head (default) or base (the merge base)"});
        let mut specs = source_tool_specs(&revision);
        specs.extend(graph_tool_specs(&revision));
        specs
    }

    fn call(&self, name: &str, arguments: &Value, max_bytes: usize) -> Result<String, String> {
        self.dispatch(name, arguments, max_bytes)
    }

    fn repeat(&self, name: &str, arguments: &Value, max_bytes: usize) -> Option<String> {
        self.repeated(name, arguments, max_bytes)
    }
}

/// The source tools: `read_file`, `grep`, `list_dir` and `diff`.
fn source_tool_specs(revision: &Value) -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read_file".into(),
            description: format!(
                "Read numbered lines of a file at head or base. At most {} lines or {} bytes per call; page with start_line/end_line.",
                vouch_git::reader::MAX_LINES,
                vouch_git::reader::MAX_BYTES
            ),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "repository-relative path"},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
                "start_byte": {"type": "integer", "minimum": 0, "description": format!("for a line too long to show whole: read at most {} bytes of start_line from this byte offset", vouch_git::reader::MAX_LINE_WINDOW_BYTES)},
                "revision": revision.clone()
            }, "required": ["path"]}),
        },
        ToolSpec {
            name: "grep".into(),
            description: format!(
                "Search text files for a regular expression (per line). At most {} matches.",
                vouch_git::reader::MAX_GREP_MATCHES
            ),
            parameters: json!({"type": "object", "properties": {
                "pattern": {"type": "string"},
                "path_glob": {"type": "string", "description": "optional glob such as src/**/*.rs"},
                "revision": revision.clone()
            }, "required": ["pattern"]}),
        },
        ToolSpec {
            name: "list_dir".into(),
            description: "List a directory (\"\" for the repository root).".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "revision": revision.clone()
            }, "required": ["path"]}),
        },
        ToolSpec {
            name: "diff".into(),
            description: "Show the unified patch of one changed file of this change.".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "current path of a changed file"}
            }, "required": ["path"]}),
        },
    ]
}

/// The repository graph's tools: `definition`, `references` and `outline`.
fn graph_tool_specs(revision: &Value) -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "definition".into(),
            description: format!(
                "Find where a symbol (function, method, type, constant) is defined, from syntax trees of Rust, Python, JavaScript/TypeScript, Go, Java and C/C++ files; other languages are searched as text and marked so. Shows each definition whole with its parameters (keyword names included): at most {} definitions of at most {} lines, {} bytes per call.",
                vouch_graph::graph::MAX_DEFINITIONS,
                vouch_graph::graph::MAX_DEFINITION_LINES,
                vouch_graph::graph::MAX_BYTES
            ),
            parameters: json!({"type": "object", "properties": {
                "symbol": {"type": "string", "description": "a name such as parse_config, optionally qualified: Config::load or Mailer.deliver"},
                "path_hint": {"type": "string", "description": "optional part of a path; definitions in matching files come first"},
                "revision": revision.clone()
            }, "required": ["symbol"]}),
        },
        ToolSpec {
            name: "references".into(),
            description: format!(
                "Find every use of a symbol across the repository, calls marked, then its callers (the functions that call it) with their signatures. Same languages as definition; others by text search, marked so. At most {} uses, {} callers, {} bytes per call.",
                vouch_graph::graph::MAX_REFERENCES,
                vouch_graph::graph::MAX_CALLERS,
                vouch_graph::graph::MAX_BYTES
            ),
            parameters: json!({"type": "object", "properties": {
                "symbol": {"type": "string", "description": "a name such as parse_config, optionally qualified"},
                "revision": revision.clone()
            }, "required": ["symbol"]}),
        },
        ToolSpec {
            name: "outline".into(),
            description: format!(
                "List a file's top-level items (and the members of its classes, impls, traits and modules) with line ranges, parameters and signature lines. A file in a language without a grammar gets a text-search outline, marked so. At most {} items per call.",
                vouch_graph::graph::MAX_OUTLINE_ITEMS
            ),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "repository-relative path of a file"},
                "revision": revision.clone()
            }, "required": ["path"]}),
        },
    ]
}
