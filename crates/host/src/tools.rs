//! The repository tools a model may call, over one snapshot's git objects, with a source
//! ledger per stage execution.
//!
//! Every successful read records the exact window returned (revision, path, line window)
//! in this execution's [`SourceLedger`]; citations are later checked against it. Tool
//! failures are returned to the model as tool errors and counted, so a stage that could
//! not retrieve source is reported as a source lookup gap.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use vouch_core::{Revision, SourceLedger, SourceWindow};
use vouch_git::{ReadError, SourceReader};
use vouch_llm::{ToolBox, ToolSpec};

/// The read-only tools for one stage execution: `read_file`, `grep`, `list_dir`, `diff`.
pub struct RepoTools {
    reader: Arc<SourceReader>,
    ledger: Mutex<SourceLedger>,
    lookup_failures: AtomicU32,
}

impl RepoTools {
    /// Tools over `reader` with an empty ledger.
    pub fn new(reader: Arc<SourceReader>) -> Self {
        RepoTools {
            reader,
            ledger: Mutex::new(SourceLedger::default()),
            lookup_failures: AtomicU32::new(0),
        }
    }

    /// Records source the host gave inline (or any window read outside a tool call).
    pub fn record(&self, window: SourceWindow) {
        self.ledger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(window);
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
        for w in windows {
            ledger.record(w);
        }
    }

    fn fail(&self, error: ReadError) -> String {
        if matches!(error, ReadError::Git { .. }) {
            self.lookup_failures.fetch_add(1, Ordering::Relaxed);
        }
        error.to_string()
    }

    fn dispatch(&self, name: &str, args: &Value) -> Result<String, String> {
        let revision = revision_arg(args)?;
        match name {
            "read_file" => {
                let path = str_arg(args, "path")?;
                let read = self
                    .reader
                    .read_file(
                        revision,
                        path,
                        line_arg(args, "start_line")?,
                        line_arg(args, "end_line")?,
                    )
                    .map_err(|e| self.fail(e))?;
                self.record_all(read.window);
                Ok(read.text)
            }
            "grep" => {
                let pattern = str_arg(args, "pattern")?;
                let glob = args
                    .get("path_glob")
                    .and_then(Value::as_str)
                    .filter(|g| !g.is_empty());
                let found = self
                    .reader
                    .grep(pattern, glob, revision)
                    .map_err(|e| self.fail(e))?;
                self.record_all(found.windows);
                Ok(found.text)
            }
            "list_dir" => {
                let path = args.get("path").and_then(Value::as_str).unwrap_or("");
                let listing = self
                    .reader
                    .list_dir(path, revision)
                    .map_err(|e| self.fail(e))?;
                Ok(listing.text)
            }
            "diff" => {
                let path = str_arg(args, "path")?;
                let diff = self.reader.diff(path).map_err(|e| self.fail(e))?;
                self.record_all(diff.windows);
                Ok(diff.text)
            }
            other => Err(format!(
                "unknown tool `{other}`; the tools are read_file, grep, list_dir and diff"
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
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("argument `{key}` must be a positive line number")),
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

impl ToolBox for RepoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        let revision = json!({"type": "string", "enum": ["head", "base"], "description": "head (default) or base (the merge base)"});
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
                    "revision": revision
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
                    "revision": revision
                }, "required": ["pattern"]}),
            },
            ToolSpec {
                name: "list_dir".into(),
                description: "List a directory (\"\" for the repository root).".into(),
                parameters: json!({"type": "object", "properties": {
                    "path": {"type": "string"},
                    "revision": revision
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

    fn call(&self, name: &str, arguments: &Value) -> Result<String, String> {
        self.dispatch(name, arguments)
    }
}
