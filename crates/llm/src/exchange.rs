//! Model exchanges kept on disk: a content-addressed response cache, a recording of one
//! run's exchanges in order, and an offline replay of such a recording.
//!
//! [`Exchanges`] sits at the one place where [`crate::ModelClient`] sends an HTTP
//! attempt, so every request goes through it:
//! - [`Exchanges::Cache`]: the key is SHA-256 over the endpoint's base URL, the model
//!   and the full request body; the value is the response body. Only successful
//!   responses are stored. Files are written through a temporary file and a rename, so
//!   two processes sharing one folder never see half an entry; the folder is bounded in
//!   size, the least recently used entries are evicted first.
//! - [`Exchanges::Record`]: every exchange (request body and response, successes and
//!   HTTP failures) is written as `NNNN.json` in the order the responses arrived, and
//!   `recording.json` says whether the recorded run ended normally ([`state`]); a
//!   recording cut short is refused by [`Replayer::load`] as incomplete.
//! - [`Exchanges::Replay`]: requests are answered from a recording, matched by the whole
//!   request body (each recorded exchange once); nothing is sent. The first request that
//!   has no recorded match is kept with a readable diff against the closest unused
//!   recorded request ([`Replayer::first_mismatch`]).
//!
//! No API key is ever written: keys are not part of requests, error bodies are scrubbed,
//! and a response that contains the key is not stored at all (a key of at least
//! [`MIN_SECRET_CHARS`] characters; a shorter one is ordinary text, see
//! [`holds_secret`]).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub mod state;

pub use state::{RECORDING_STATE_FILE, RecordingEnd};

/// Schema tag of one cache entry file.
const CACHE_ENTRY_VERSION: &str = "vouch.exchange-cache/1";
/// Schema tag of one recorded exchange file.
const RECORD_VERSION: &str = "vouch.exchange-record/1";

/// Why an exchange folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The folder could not be created, read or written.
    #[error("{path}: {message}")]
    Io {
        /// The folder or file concerned.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A recording folder is not usable as given.
    #[error("{path}: {message}")]
    Recording {
        /// The recording folder or file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
}

fn io_error(path: &Path, error: impl std::fmt::Display) -> ExchangeError {
    ExchangeError::Io {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// What a recorded or cached request was answered with.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A successful (2xx) JSON body.
    Body(Value),
    /// A non-success HTTP status with its (scrubbed) body.
    Status {
        /// HTTP status code.
        status: u16,
        /// Response body excerpt.
        body: String,
    },
}

impl Answer {
    fn to_json(&self) -> Value {
        match self {
            Answer::Body(body) => json!({"status": 200, "body": body}),
            Answer::Status { status, body } => json!({"status": status, "error": body}),
        }
    }

    fn from_json(value: &Value) -> Option<Answer> {
        let status = u16::try_from(value.get("status")?.as_u64()?).ok()?;
        if status == 200 {
            return Some(Answer::Body(value.get("body")?.clone()));
        }
        Some(Answer::Status {
            status,
            body: value.get("error")?.as_str()?.to_owned(),
        })
    }
}

/// What the exchange layer says before a request is sent.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// Answer with this; send nothing.
    Hit(Answer),
    /// Send the request.
    Miss,
    /// Replay met a request it has no recording of: fail without sending.
    Refused(String),
}

/// Counts of one exchange layer, for cost reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExchangeStats {
    /// Requests answered from the cache or the recording.
    pub hits: u64,
    /// Requests that had to be sent.
    pub misses: u64,
}

/// The exchange layer a [`crate::ModelClient`] consults before each HTTP attempt.
#[derive(Debug)]
pub enum Exchanges {
    /// Content-addressed response cache.
    Cache(ExchangeCache),
    /// Record every exchange in order.
    Record(Recorder),
    /// Answer only from a recording.
    Replay(Replayer),
}

impl Exchanges {
    pub(crate) fn lookup(&self, endpoint: &str, body: &Value) -> Lookup {
        match self {
            Exchanges::Cache(cache) => cache.lookup(endpoint, body),
            Exchanges::Record(recorder) => {
                recorder.misses.fetch_add(1, Ordering::Relaxed);
                Lookup::Miss
            }
            Exchanges::Replay(replayer) => replayer.lookup(body),
        }
    }

    /// Stores what the endpoint answered; `secret` is the API key (never stored).
    pub(crate) fn store(
        &self,
        endpoint: &str,
        body: &Value,
        answer: &Answer,
        secret: Option<&str>,
    ) {
        let answer_text = answer.to_json().to_string();
        if holds_secret(&answer_text, secret) || holds_secret(&body.to_string(), secret) {
            tracing::warn!("a model exchange contains the API key; it is not stored");
            return;
        }
        match self {
            Exchanges::Cache(cache) => {
                if let Answer::Body(value) = answer {
                    cache.store(endpoint, body, value);
                }
            }
            Exchanges::Record(recorder) => recorder.store(body, answer),
            Exchanges::Replay(_) => {}
        }
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> ExchangeStats {
        match self {
            Exchanges::Cache(cache) => ExchangeStats {
                hits: cache.hits.load(Ordering::Relaxed),
                misses: cache.misses.load(Ordering::Relaxed),
            },
            Exchanges::Record(recorder) => ExchangeStats {
                hits: 0,
                misses: recorder.misses.load(Ordering::Relaxed),
            },
            Exchanges::Replay(replayer) => ExchangeStats {
                hits: replayer.hits.load(Ordering::Relaxed),
                misses: 0,
            },
        }
    }
}

/// Default size bound of a cache folder: 1 GiB.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 1 << 30;

/// A content-addressed on-disk cache of model responses.
#[derive(Debug)]
pub struct ExchangeCache {
    dir: PathBuf,
    namespace: String,
    max_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl ExchangeCache {
    /// Opens (creating it if needed) the cache folder `dir`, bounded to `max_bytes` of
    /// entries.
    ///
    /// # Errors
    /// [`ExchangeError::Io`] when the folder cannot be created or written.
    pub fn open(dir: impl Into<PathBuf>, max_bytes: u64) -> Result<ExchangeCache, ExchangeError> {
        let dir = dir.into();
        fs::create_dir_all(&dir)
            .map_err(|e| io_error(&dir, format!("cannot create the cache folder: {e}")))?;
        let probe = tempfile::NamedTempFile::new_in(&dir)
            .map_err(|e| io_error(&dir, format!("cannot write in the cache folder: {e}")))?;
        drop(probe);
        Ok(ExchangeCache {
            dir,
            namespace: String::new(),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// The same cache with its keys in `namespace`: entries of different namespaces
    /// never answer each other (repeated eval runs each ask the model anew, and each
    /// run is still cached). The empty namespace is the default.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> ExchangeCache {
        self.namespace = namespace.into();
        self
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The content address of a request: hex SHA-256 over the namespace, the endpoint
    /// (trailing `/` ignored), the model and the canonical request body.
    pub fn key(&self, endpoint: &str, body: &Value) -> String {
        let model = body.get("model").and_then(Value::as_str).unwrap_or("");
        let mut hasher = Sha256::new();
        let namespace = self.namespace.as_str();
        for part in [namespace, endpoint.trim_end_matches('/'), model] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(canonical(body).as_bytes());
        hex(&hasher.finalize())
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    fn lookup(&self, endpoint: &str, body: &Value) -> Lookup {
        let key = self.key(endpoint, body);
        let path = self.entry_path(&key);
        let entry = fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .filter(|v| v.get("version").and_then(Value::as_str) == Some(CACHE_ENTRY_VERSION))
            .filter(|v| v.get("key").and_then(Value::as_str) == Some(key.as_str()))
            .and_then(|v| v.get("response").cloned());
        match entry {
            Some(response) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                // Recently used entries are evicted last.
                if let Ok(file) = fs::File::options().append(true).open(&path) {
                    let _ = file.set_modified(SystemTime::now());
                }
                Lookup::Hit(Answer::Body(response))
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                Lookup::Miss
            }
        }
    }

    fn store(&self, endpoint: &str, body: &Value, response: &Value) {
        let key = self.key(endpoint, body);
        let path = self.entry_path(&key);
        let entry = json!({
            "version": CACHE_ENTRY_VERSION,
            "key": key,
            "model": body.get("model").cloned().unwrap_or(Value::Null),
            "response": response,
        });
        if let Err(e) = write_atomically(&path, entry.to_string().as_bytes()) {
            tracing::warn!(error = %e, "could not store a model response in the cache");
            return;
        }
        self.evict();
    }

    /// Removes the least recently used entries until the folder holds at most
    /// `max_bytes` of entries. Races with another process are harmless: a vanished
    /// file is skipped.
    fn evict(&self) {
        let mut entries = cache_entries(&self.dir);
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.max_bytes {
            return;
        }
        entries.sort_by_key(|e| e.2);
        for (path, size, _) in entries {
            if total <= self.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }
}

/// Every entry file of a cache folder: path, size, last use.
fn cache_entries(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut out = Vec::new();
    let Ok(shards) = fs::read_dir(dir) else {
        return out;
    };
    for shard in shards.flatten() {
        let Ok(files) = fs::read_dir(shard.path()) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            if let Ok(meta) = file.metadata() {
                let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                out.push((path, meta.len(), used));
            }
        }
    }
    out
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ExchangeError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io_error(dir, e))?;
    tmp.write_all(bytes).map_err(|e| io_error(path, e))?;
    tmp.persist(path).map_err(|e| io_error(path, e.error))?;
    Ok(())
}

/// The request body as compact JSON with object keys sorted, so key order never
/// changes a content address.
fn canonical(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sort(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes every exchange of a run to a folder, in the order the answers arrived.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    next: Mutex<u32>,
    misses: AtomicU64,
}

impl Recorder {
    /// Starts a recording in `dir`, which must not exist or be empty.
    ///
    /// # Errors
    /// [`ExchangeError::Recording`] when `dir` holds files; [`ExchangeError::Io`] when it
    /// cannot be created.
    pub fn create(dir: impl Into<PathBuf>) -> Result<Recorder, ExchangeError> {
        let dir = dir.into();
        if dir.exists() {
            let mut listing = fs::read_dir(&dir).map_err(|e| io_error(&dir, e))?;
            if listing.next().is_some() {
                return Err(ExchangeError::Recording {
                    path: dir,
                    message: "the recording folder is not empty; remove it or choose another"
                        .into(),
                });
            }
        }
        fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        state::begin(&dir)?;
        Ok(Recorder {
            dir,
            next: Mutex::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// Says how the recorded run ended: only [`RecordingEnd::Complete`] makes the
    /// recording replayable. Until this is called it reads as never finished.
    ///
    /// # Errors
    /// [`ExchangeError::Io`] when the state file cannot be written (the recording then
    /// still reads as never finished).
    pub fn finish(&self, end: RecordingEnd) -> Result<(), ExchangeError> {
        state::end(&self.dir, end)
    }

    fn store(&self, request: &Value, answer: &Answer) {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        *next += 1;
        let seq = *next;
        let record = json!({
            "version": RECORD_VERSION,
            "seq": seq,
            "request": request,
            "response": answer.to_json(),
        });
        let text = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
        let path = self.dir.join(format!("{seq:04}.json"));
        if let Err(e) = write_atomically(&path, text.as_bytes()) {
            tracing::warn!(error = %e, "could not record a model exchange");
        }
    }
}

/// One recorded exchange.
#[derive(Clone, Debug)]
struct Recorded {
    file: String,
    request: Value,
    answer: Answer,
}

/// Answers requests from a recording, offline.
#[derive(Debug)]
pub struct Replayer {
    dir: PathBuf,
    recorded: Vec<Recorded>,
    used: Mutex<Vec<bool>>,
    mismatch: Mutex<Option<String>>,
    hits: AtomicU64,
}

impl Replayer {
    /// Loads the recording in `dir` (`NNNN.json` files written by [`Recorder`]).
    ///
    /// # Errors
    /// [`ExchangeError::Recording`] when the folder is missing, holds no exchange, a
    /// file is not a recorded exchange, or the recorded run did not end normally
    /// ([`state`]: the recording is incomplete).
    pub fn load(dir: impl Into<PathBuf>) -> Result<Replayer, ExchangeError> {
        let dir = dir.into();
        let listing = fs::read_dir(&dir).map_err(|e| ExchangeError::Recording {
            path: dir.clone(),
            message: format!("cannot read the recording folder ({e}); record one with --record"),
        })?;
        let mut files: Vec<PathBuf> = listing
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
            .filter(|p| p.file_name().and_then(|n| n.to_str()) != Some(RECORDING_STATE_FILE))
            .collect();
        files.sort();
        state::check_whole(&dir, files.len())?;
        let mut recorded = Vec::new();
        for path in files {
            let bad = |message: String| ExchangeError::Recording {
                path: path.clone(),
                message,
            };
            let text = fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
            let value: Value =
                serde_json::from_str(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
            if value.get("version").and_then(Value::as_str) != Some(RECORD_VERSION) {
                return Err(bad(format!(
                    "not a recorded exchange (expected version {RECORD_VERSION})"
                )));
            }
            let answer = value
                .get("response")
                .and_then(Answer::from_json)
                .ok_or_else(|| bad("the response is missing or malformed".into()))?;
            let request = value
                .get("request")
                .cloned()
                .ok_or_else(|| bad("the request is missing".into()))?;
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            recorded.push(Recorded {
                file,
                request,
                answer,
            });
        }
        if recorded.is_empty() {
            return Err(ExchangeError::Recording {
                path: dir,
                message: "the recording holds no exchange; record one with --record".into(),
            });
        }
        let used = Mutex::new(vec![false; recorded.len()]);
        Ok(Replayer {
            dir,
            recorded,
            used,
            mismatch: Mutex::new(None),
            hits: AtomicU64::new(0),
        })
    }

    /// The model of the first recorded request (to replay without naming it).
    pub fn model(&self) -> Option<String> {
        self.recorded
            .first()
            .and_then(|r| r.request.get("model"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Recorded exchanges not (yet) replayed.
    pub fn unused(&self) -> usize {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.iter().filter(|u| !**u).count()
    }

    /// The first request that had no recorded match: which it was and how it differs
    /// from the closest unused recorded request.
    pub fn first_mismatch(&self) -> Option<String> {
        self.mismatch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn lookup(&self, body: &Value) -> Lookup {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let found = self
            .recorded
            .iter()
            .enumerate()
            .find(|(i, r)| !used[*i] && r.request == *body);
        if let Some((i, r)) = found {
            used[i] = true;
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Lookup::Hit(r.answer.clone());
        }
        let unused: Vec<&Recorded> = self
            .recorded
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(_, r)| r)
            .collect();
        drop(used);
        let message = mismatch_message(&self.dir, body, &unused, self.recorded.len());
        let mut first = self.mismatch.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(message.clone());
        }
        Lookup::Refused(message)
    }
}

/// Names an unrecorded request and shows its difference from the closest unused
/// recorded request as a unified diff of pretty-printed JSON.
fn mismatch_message(dir: &Path, body: &Value, unused: &[&Recorded], total: usize) -> String {
    let sent = diffable(body);
    let summary = request_summary(body);
    let Some((closest, recorded_text)) =
        unused
            .iter()
            .map(|r| (r, diffable(&r.request)))
            .max_by(|a, b| {
                let ra = similar::TextDiff::from_lines(&a.1, &sent).ratio();
                let rb = similar::TextDiff::from_lines(&b.1, &sent).ratio();
                ra.total_cmp(&rb)
            })
    else {
        return format!(
            "the replay of {} met a request that was not recorded ({summary}): all {total} recorded exchanges were already used",
            dir.display()
        );
    };
    let diff = similar::TextDiff::from_lines(&recorded_text, &sent)
        .unified_diff()
        .context_radius(2)
        .header(&format!("recorded {}", closest.file), "sent")
        .to_string();
    format!(
        "the replay of {} met a request that was not recorded ({summary}); closest recorded request is {} and differs:\n{diff}",
        dir.display(),
        closest.file
    )
}

/// A request as text whose lines follow its structure: each message's content on its
/// own lines under a `### message N (role)` header, then the other fields as pretty JSON,
/// so a diff points at the changed line of a prompt rather than at one long JSON string.
fn diffable(body: &Value) -> String {
    let mut out = String::new();
    let messages = body.get("messages").and_then(Value::as_array);
    for (i, message) in messages.into_iter().flatten().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
        out.push_str(&format!("### message {} ({role})\n", i + 1));
        match message.get("content") {
            Some(Value::String(text)) => out.push_str(text),
            Some(Value::Null) | None => {}
            Some(other) => out.push_str(&serde_json::to_string_pretty(other).unwrap_or_default()),
        }
        out.push('\n');
        let mut rest = message.clone();
        if let Some(map) = rest.as_object_mut() {
            map.remove("role");
            map.remove("content");
            if !map.is_empty() {
                out.push_str(&serde_json::to_string_pretty(&rest).unwrap_or_default());
                out.push('\n');
            }
        }
    }
    let mut rest = body.clone();
    if let Some(map) = rest.as_object_mut() {
        map.remove("messages");
    }
    out.push_str("### other fields\n");
    out.push_str(&serde_json::to_string_pretty(&rest).unwrap_or_default());
    out.push('\n');
    out
}

/// `model M, N messages, last role R`: enough to recognise a request.
fn request_summary(body: &Value) -> String {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("?");
    let messages = body.get("messages").and_then(Value::as_array);
    let count = messages.map_or(0, Vec::len);
    let last = messages
        .and_then(|m| m.last())
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    format!("model {model}, {count} messages, last from {last}")
}

/// Shortest API key looked for in an exchange before it is stored. Real keys are far
/// longer (OpenAI's and Azure's are over 30 characters); a shorter one (`x`, `test`, a
/// local server's placeholder) occurs in ordinary text, so looking for it would keep
/// every answer out of the cache, and writing it protects nothing.
pub const MIN_SECRET_CHARS: usize = 8;

/// Rule (no API key is ever written): `text` holds the key when the key has at least
/// [`MIN_SECRET_CHARS`] characters and occurs in it.
fn holds_secret(text: &str, secret: Option<&str>) -> bool {
    secret.is_some_and(|s| s.chars().count() >= MIN_SECRET_CHARS && text.contains(s))
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_a_key_long_enough_to_be_one_is_looked_for() {
        let key = "sk-0123456789abcdef";
        for (text, secret, holds) in [
            ("an answer naming sk-0123456789abcdef", Some(key), true),
            ("an answer without it", Some(key), false),
            ("x marks every answer", Some("x"), false),
            ("a test answer", Some("test"), false),
            ("seven77 characters", Some("seven77"), false),
            ("eight888 characters", Some("eight888"), true),
            ("no key at all", None, false),
            ("an empty key", Some(""), false),
        ] {
            assert_eq!(holds_secret(text, secret), holds, "{text:?} / {secret:?}");
        }
    }
    use super::*;

    fn body(text: &str) -> Value {
        json!({"model": "m", "messages": [{"role": "user", "content": text}], "stream": false})
    }

    fn reply(text: &str) -> Value {
        json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
    }

    #[test]
    fn key_depends_on_endpoint_model_and_body_not_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ExchangeCache::open(dir.path(), 1).unwrap();
        let key = |endpoint: &str, body: &Value| cache.key(endpoint, body);
        let a = json!({"model": "m", "messages": [], "stream": false});
        let b = json!({"stream": false, "messages": [], "model": "m"});
        assert_eq!(key("http://h/v1", &a), key("http://h/v1/", &b));
        assert_ne!(key("http://h/v1", &a), key("http://g/v1", &a));
        let c = json!({"model": "n", "messages": [], "stream": false});
        assert_ne!(key("http://h/v1", &a), key("http://h/v1", &c));
        assert_ne!(
            key("http://h/v1", &body("x")),
            key("http://h/v1", &body("y"))
        );
        let other = ExchangeCache::open(dir.path(), 1)
            .unwrap()
            .with_namespace("run-2");
        assert_ne!(key("http://h/v1", &a), other.key("http://h/v1", &a));
    }

    #[test]
    fn cache_stores_and_answers_and_never_keeps_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            Exchanges::Cache(ExchangeCache::open(dir.path(), DEFAULT_CACHE_MAX_BYTES).unwrap());
        assert!(matches!(cache.lookup("e", &body("a")), Lookup::Miss));
        cache.store(
            "e",
            &body("a"),
            &Answer::Body(reply("A")),
            Some("sk-SECRET"),
        );
        match cache.lookup("e", &body("a")) {
            Lookup::Hit(Answer::Body(v)) => assert_eq!(v, reply("A")),
            other => panic!("{other:?}"),
        }
        // A response echoing the key is not stored.
        cache.store(
            "e",
            &body("b"),
            &Answer::Body(reply("your key sk-SECRET")),
            Some("sk-SECRET"),
        );
        assert!(matches!(cache.lookup("e", &body("b")), Lookup::Miss));
        // HTTP failures are not cached.
        cache.store(
            "e",
            &body("c"),
            &Answer::Status {
                status: 500,
                body: "x".into(),
            },
            None,
        );
        assert!(matches!(cache.lookup("e", &body("c")), Lookup::Miss));
        assert_eq!(cache.stats(), ExchangeStats { hits: 1, misses: 3 });
        for (path, _, _) in cache_entries(dir.path()) {
            assert!(!fs::read_to_string(path).unwrap().contains("sk-SECRET"));
        }
    }

    #[test]
    fn corrupt_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ExchangeCache::open(dir.path(), DEFAULT_CACHE_MAX_BYTES).unwrap();
        cache.store("e", &body("a"), &reply("A"));
        let key = cache.key("e", &body("a"));
        fs::write(cache.entry_path(&key), b"{half").unwrap();
        assert!(matches!(cache.lookup("e", &body("a")), Lookup::Miss));
    }

    #[test]
    fn eviction_keeps_the_folder_within_its_bound_and_drops_least_recent_first() {
        let dir = tempfile::tempdir().unwrap();
        let one = {
            let probe = ExchangeCache::open(dir.path().join("probe"), u64::MAX).unwrap();
            probe.store("e", &body("0"), &reply("0"));
            cache_entries(probe.dir()).iter().map(|e| e.1).sum::<u64>()
        };
        let cache = ExchangeCache::open(dir.path().join("c"), one * 3).unwrap();
        for i in 0..3 {
            cache.store("e", &body(&i.to_string()), &reply(&i.to_string()));
            // Distinct use times, oldest first.
            let path = cache.entry_path(&cache.key("e", &body(&i.to_string())));
            let when = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i);
            fs::File::options()
                .append(true)
                .open(path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        // Using entry 0 makes entry 1 the least recently used.
        assert!(matches!(cache.lookup("e", &body("0")), Lookup::Hit(_)));
        cache.store("e", &body("3"), &reply("3"));
        let total: u64 = cache_entries(cache.dir()).iter().map(|e| e.1).sum();
        assert!(total <= one * 3, "{total} > {}", one * 3);
        assert!(matches!(cache.lookup("e", &body("1")), Lookup::Miss));
        assert!(matches!(cache.lookup("e", &body("0")), Lookup::Hit(_)));
        assert!(matches!(cache.lookup("e", &body("3")), Lookup::Hit(_)));
    }

    #[test]
    fn record_then_replay_answers_each_exchange_once_and_names_the_unrecorded() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec");
        let recorder = Exchanges::Record(Recorder::create(&rec).unwrap());
        recorder.store("e", &body("a"), &Answer::Body(reply("A")), None);
        recorder.store(
            "e",
            &body("b"),
            &Answer::Status {
                status: 400,
                body: "no json_schema".into(),
            },
            None,
        );
        assert!(matches!(
            Recorder::create(&rec),
            Err(ExchangeError::Recording { .. })
        ));
        let Exchanges::Record(recording) = &recorder else {
            unreachable!()
        };
        recording.finish(RecordingEnd::Complete).unwrap();
        let replay = Replayer::load(&rec).unwrap();
        assert_eq!(replay.model().as_deref(), Some("m"));
        let replay = Exchanges::Replay(replay);
        assert!(matches!(
            replay.lookup("other", &body("b")),
            Lookup::Hit(Answer::Status { status: 400, .. })
        ));
        assert!(matches!(
            replay.lookup("other", &body("a")),
            Lookup::Hit(Answer::Body(_))
        ));
        let Lookup::Refused(message) = replay.lookup("other", &body("a")) else {
            panic!("a second identical request must not be answered twice")
        };
        assert!(message.contains("already used"), "{message}");
    }

    #[test]
    fn replay_mismatch_shows_a_diff_against_the_closest_recording() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Recorder::create(dir.path()).unwrap();
        recorder.store(&body("review the parser"), &Answer::Body(reply("A")));
        recorder.store(
            &json!({"model": "m", "messages": [], "tools": [1, 2, 3]}),
            &Answer::Body(reply("B")),
        );
        recorder.finish(RecordingEnd::Complete).unwrap();
        let replay = Replayer::load(dir.path()).unwrap();
        let Lookup::Refused(message) = replay.lookup(&body("review the lexer")) else {
            panic!("unrecorded request answered")
        };
        assert!(message.contains("0001.json"), "{message}");
        assert!(message.contains("\n-review the parser\n"), "{message}");
        assert!(message.contains("\n+review the lexer\n"), "{message}");
        assert_eq!(replay.first_mismatch(), Some(message));
    }

    #[test]
    fn replay_refuses_empty_or_foreign_folders() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Replayer::load(dir.path()),
            Err(ExchangeError::Recording { .. })
        ));
        fs::write(dir.path().join("0001.json"), "{\"version\": \"other\"}").unwrap();
        let err = Replayer::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a recorded exchange"), "{err}");
        assert!(matches!(
            Replayer::load(dir.path().join("missing")),
            Err(ExchangeError::Recording { .. })
        ));
    }
}
