//! A local forge on 127.0.0.1 speaking the subset of the GitHub (REST v3), GitLab (REST
//! v4) and Gitea (REST v1) APIs that `vouch publish` uses, written from their public API
//! documentation: one pull request with its diff, its comments, inline review comments
//! (GitLab: diff discussions; Gitea: reviews) and their resolution.
//!
//! The server checks each forge's auth scheme (GitHub `Authorization: Bearer`, GitLab
//! `PRIVATE-TOKEN`, Gitea `Authorization: token`) and answers 401 like the forge; it
//! refuses an inline comment on a line outside the diff with the forge's 422/400; it
//! records every request (method, path, query, headers, JSON body) so tests can assert
//! the exact requests; and [`ForgeServer::fail`] queues scripted failures (401, 403, 404,
//! 422, 429 with `Retry-After`, …) for requests matching a method and path.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// Which forge the server imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForgeKind {
    /// GitHub: API root `http://127.0.0.1:PORT`.
    Github,
    /// GitLab: API root `http://127.0.0.1:PORT/api/v4`.
    Gitlab,
    /// Gitea: API root `http://127.0.0.1:PORT/api/v1`.
    Gitea,
}

impl ForgeKind {
    fn prefix(self) -> &'static str {
        match self {
            ForgeKind::Github => "",
            ForgeKind::Gitlab => "/api/v4",
            ForgeKind::Gitea => "/api/v1",
        }
    }
}

/// The pull request the server hosts.
#[derive(Debug, Clone)]
pub struct PullRequest {
    /// `OWNER/NAME`.
    pub slug: String,
    /// Number (GitLab: IID).
    pub number: u64,
    /// Base commit (GitLab also uses it as the diff's start).
    pub base_sha: String,
    /// Head commit.
    pub head_sha: String,
    /// The pull request's diff, as `git diff base head` prints it.
    pub diff: String,
}

/// One recorded request.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgeRequest {
    /// HTTP method.
    pub method: String,
    /// Path as sent (percent-encoding kept).
    pub path: String,
    /// Query string (empty when none).
    pub query: String,
    /// Headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// JSON body (`Null` when none).
    pub body: Value,
    /// Status answered.
    pub status: u16,
}

impl ForgeRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `METHOD path[?query]`.
    pub fn line(&self) -> String {
        if self.query.is_empty() {
            format!("{} {}", self.method, self.path)
        } else {
            format!("{} {}?{}", self.method, self.path, self.query)
        }
    }
}

/// A comment in the server's state: a summary-style comment (GitHub/Gitea issue comment,
/// GitLab note) or an inline one (GitHub review comment, GitLab discussion, Gitea review
/// comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredComment {
    /// Comment id (GitLab inline: the discussion's first note id).
    pub id: u64,
    /// GitLab discussion id (inline only).
    pub discussion: Option<String>,
    /// Body.
    pub body: String,
    /// Inline: path.
    pub path: Option<String>,
    /// Inline: the head line.
    pub line: Option<u32>,
    /// Inline: resolved (GitLab, Gitea).
    pub resolved: bool,
}

struct Failure {
    method: String,
    path_suffix: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    times: usize,
}

struct Inner {
    kind: ForgeKind,
    token: String,
    pr: PullRequest,
    files: Vec<FileDiff>,
    comments: Vec<StoredComment>,
    inline: Vec<StoredComment>,
    reviews: Vec<(u64, Vec<u64>)>,
    next_id: u64,
    failures: Vec<Failure>,
    requests: Vec<ForgeRequest>,
}

/// A running local forge. It stops when dropped.
pub struct ForgeServer {
    addr: SocketAddr,
    kind: ForgeKind,
    shared: Arc<Mutex<Inner>>,
    task: JoinHandle<()>,
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ForgeServer {
    /// Binds 127.0.0.1 on a free port and serves `pr` as `kind`, accepting `token`.
    ///
    /// # Panics
    /// When no local port can be bound.
    pub async fn start(kind: ForgeKind, token: &str, pr: PullRequest) -> ForgeServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0 for the forge server");
        let addr = listener.local_addr().expect("local address");
        let files = split_diff(&pr.diff);
        let shared = Arc::new(Mutex::new(Inner {
            kind,
            token: token.to_string(),
            pr,
            files,
            comments: Vec::new(),
            inline: Vec::new(),
            reviews: Vec::new(),
            next_id: 1000,
            failures: Vec::new(),
            requests: Vec::new(),
        }));
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ForgeServer {
            addr,
            kind,
            shared,
            task,
        }
    }

    /// The API root to give `--api-url`.
    pub fn api_url(&self) -> String {
        format!("http://{}{}", self.addr, self.kind.prefix())
    }

    /// The server root (`http://127.0.0.1:PORT`).
    pub fn server_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ForgeRequest> {
        lock(&self.shared).requests.clone()
    }

    /// Requests that change something (not GET), as `METHOD path`.
    pub fn mutations(&self) -> Vec<ForgeRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET")
            .collect()
    }

    /// Forgets the recorded requests (state is kept), e.g. between two publishes.
    pub fn clear_requests(&self) {
        lock(&self.shared).requests.clear();
    }

    /// Summary-style comments (issue comments, GitLab notes that are not diff notes).
    pub fn comments(&self) -> Vec<StoredComment> {
        lock(&self.shared).comments.clone()
    }

    /// Inline comments.
    pub fn inline_comments(&self) -> Vec<StoredComment> {
        lock(&self.shared).inline.clone()
    }

    /// Adds a comment someone else wrote.
    pub fn add_comment(&self, body: &str) -> u64 {
        let mut s = lock(&self.shared);
        let id = s.id();
        s.comments.push(StoredComment {
            id,
            discussion: None,
            body: body.into(),
            path: None,
            line: None,
            resolved: false,
        });
        id
    }

    /// Moves the pull request's head (a new push).
    pub fn set_head(&self, sha: &str) {
        lock(&self.shared).pr.head_sha = sha.to_string();
    }

    /// Answers the next `times` requests `method …path_suffix` with `status`, `headers`
    /// and `body` instead of serving them.
    pub fn fail(
        &self,
        method: &str,
        path_suffix: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: &str,
        times: usize,
    ) {
        lock(&self.shared).failures.push(Failure {
            method: method.into(),
            path_suffix: path_suffix.into(),
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.into(),
            times,
        });
    }
}

impl Drop for ForgeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Inner {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn authorised(&self, headers: &HeaderMap) -> bool {
        let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or("");
        match self.kind {
            ForgeKind::Github => get("authorization") == format!("Bearer {}", self.token),
            ForgeKind::Gitlab => get("private-token") == self.token,
            ForgeKind::Gitea => get("authorization") == format!("token {}", self.token),
        }
    }

    fn commentable(&self, path: &str, line: u64) -> bool {
        self.files
            .iter()
            .any(|f| f.path == path && f.lines.contains(&(line as u32)))
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

fn reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

async fn handle(
    State(shared): State<Arc<Mutex<Inner>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = uri.path().to_string();
    let query = uri.query().unwrap_or("").to_string();
    let mut s = lock(&shared);
    let failure = s
        .failures
        .iter_mut()
        .find(|f| f.times > 0 && f.method == method.as_str() && path.ends_with(&f.path_suffix));
    let out = if let Some(f) = failure {
        f.times -= 1;
        Reply {
            status: f.status,
            headers: f.headers.clone(),
            body: f.body.clone(),
        }
    } else if !s.authorised(&headers) {
        reply(
            401,
            match s.kind {
                ForgeKind::Github => {
                    json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
                }
                ForgeKind::Gitlab => json!({"message": "401 Unauthorized"}),
                ForgeKind::Gitea => {
                    json!({"message": "token is required", "url": "https://gitea.example/api/swagger"})
                }
            },
        )
    } else {
        let prefix = s.kind.prefix();
        match path.strip_prefix(prefix) {
            Some(rest) => {
                let segs: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
                route(&mut s, method.as_str(), &segs, &query, &parsed)
            }
            None => reply(404, json!({"message": "Not Found"})),
        }
    };
    s.requests.push(ForgeRequest {
        method: method.to_string(),
        path,
        query: query.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: parsed,
        status: out.status,
    });
    drop(s);
    let mut response = Response::new(Body::from(out.body));
    *response.status_mut() =
        StatusCode::from_u16(out.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (k, v) in out.headers {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) {
            response.headers_mut().insert(k, v);
        }
    }
    response
}

fn not_found() -> Reply {
    reply(404, json!({"message": "Not Found"}))
}

fn route(s: &mut Inner, method: &str, segs: &[&str], query: &str, body: &Value) -> Reply {
    match s.kind {
        ForgeKind::Github => github(s, method, segs, query, body),
        ForgeKind::Gitlab => gitlab(s, method, segs, query, body),
        ForgeKind::Gitea => gitea(s, method, segs, query, body),
    }
}

fn params(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One page of `items` (`per_page`/`limit` and `page`, 1-based).
fn page(items: Vec<Value>, query: &str, size_key: &str, default: usize) -> Reply {
    let p = params(query);
    let size = p
        .get(size_key)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .max(1);
    let n: usize = p
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let slice: Vec<Value> = items.into_iter().skip((n - 1) * size).take(size).collect();
    reply(200, Value::Array(slice))
}

fn body_text(body: &Value) -> Option<String> {
    body.get("body").and_then(Value::as_str).map(str::to_string)
}

fn same_repo(s: &Inner, owner: &str, name: &str) -> bool {
    s.pr.slug == format!("{owner}/{name}")
}

fn github(s: &mut Inner, method: &str, segs: &[&str], query: &str, body: &Value) -> Reply {
    let n = s.pr.number.to_string();
    match (method, segs) {
        (_, ["repos", o, r, ..]) if !same_repo(s, o, r) => not_found(),
        ("GET", ["repos", _, _, "pulls", num]) if *num == n => reply(
            200,
            json!({"number": s.pr.number, "state": "open", "head": {"sha": s.pr.head_sha}, "base": {"sha": s.pr.base_sha}}),
        ),
        ("GET", ["repos", _, _, "pulls", num, "files"]) if *num == n => {
            let files = s
                .files
                .iter()
                .map(|f| {
                    let mut v = json!({"filename": f.path, "status": f.status, "patch": f.patch});
                    if f.old_path != f.path {
                        v["previous_filename"] = json!(f.old_path);
                    }
                    v
                })
                .collect();
            page(files, query, "per_page", 30)
        }
        ("GET", ["repos", _, _, "issues", num, "comments"]) if *num == n => {
            let list = s
                .comments
                .iter()
                .map(|c| json!({"id": c.id, "body": c.body, "user": {"login": "vouch-bot"}}))
                .collect();
            page(list, query, "per_page", 30)
        }
        ("POST", ["repos", _, _, "issues", num, "comments"]) if *num == n => {
            match body_text(body) {
                Some(text) => {
                    let id = s.id();
                    s.comments.push(StoredComment {
                        id,
                        discussion: None,
                        body: text.clone(),
                        path: None,
                        line: None,
                        resolved: false,
                    });
                    reply(201, json!({"id": id, "body": text}))
                }
                None => reply(
                    422,
                    json!({"message": "Invalid request.\n\n\"body\" wasn't supplied."}),
                ),
            }
        }
        ("PATCH", ["repos", _, _, "issues", "comments", id]) => edit(&mut s.comments, id, body),
        ("GET", ["repos", _, _, "pulls", num, "comments"]) if *num == n => {
            let list = s.inline.iter().map(|c| json!({"id": c.id, "body": c.body, "path": c.path, "line": c.line, "side": "RIGHT"})).collect();
            page(list, query, "per_page", 30)
        }
        ("POST", ["repos", _, _, "pulls", num, "comments"]) if *num == n => {
            let path = body
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let line = body.get("line").and_then(Value::as_u64).unwrap_or(0);
            let start = body
                .get("start_line")
                .and_then(Value::as_u64)
                .unwrap_or(line);
            let ok = body.get("commit_id").and_then(Value::as_str).is_some()
                && (start..=line).all(|l| s.commentable(&path, l));
            match (ok, body_text(body)) {
                (true, Some(text)) => {
                    let id = s.id();
                    s.inline.push(StoredComment {
                        id,
                        discussion: None,
                        body: text.clone(),
                        path: Some(path.clone()),
                        line: Some(line as u32),
                        resolved: false,
                    });
                    reply(
                        201,
                        json!({"id": id, "body": text, "path": path, "line": line}),
                    )
                }
                _ => reply(
                    422,
                    json!({"message": "Validation Failed", "errors": ["pull_request_review_thread.line must be part of the diff"], "status": "422"}),
                ),
            }
        }
        ("PATCH", ["repos", _, _, "pulls", "comments", id]) => edit(&mut s.inline, id, body),
        _ => not_found(),
    }
}

fn edit(list: &mut [StoredComment], id: &str, body: &Value) -> Reply {
    match (
        list.iter_mut().find(|c| c.id.to_string() == id),
        body_text(body),
    ) {
        (Some(c), Some(text)) => {
            c.body = text;
            reply(200, json!({"id": c.id, "body": c.body}))
        }
        (None, _) => not_found(),
        (_, None) => reply(422, json!({"message": "body is required"})),
    }
}

fn gitlab(s: &mut Inner, method: &str, segs: &[&str], query: &str, body: &Value) -> Reply {
    let project = s.pr.slug.replace('/', "%2F");
    let iid = s.pr.number.to_string();
    let ["projects", p, "merge_requests", i, rest @ ..] = segs else {
        return not_found();
    };
    if *p != project || *i != iid {
        return reply(404, json!({"message": "404 Project Not Found"}));
    }
    match (method, rest) {
        ("GET", []) => reply(
            200,
            json!({"iid": s.pr.number, "sha": s.pr.head_sha, "state": "opened",
            "diff_refs": {"base_sha": s.pr.base_sha, "head_sha": s.pr.head_sha, "start_sha": s.pr.base_sha}}),
        ),
        ("GET", ["diffs"]) => {
            let list = s.files.iter().map(|f| json!({"old_path": f.old_path, "new_path": f.path, "diff": f.patch,
                "new_file": f.status == "added", "deleted_file": f.status == "removed", "renamed_file": f.status == "renamed"})).collect();
            page(list, query, "per_page", 20)
        }
        ("GET", ["notes"]) => {
            let mut list: Vec<Value> = s
                .comments
                .iter()
                .map(|c| json!({"id": c.id, "body": c.body, "system": false, "type": null}))
                .collect();
            list.extend(
                s.inline.iter().map(
                    |c| json!({"id": c.id, "body": c.body, "system": false, "type": "DiffNote"}),
                ),
            );
            page(list, query, "per_page", 20)
        }
        ("POST", ["notes"]) => match body_text(body) {
            Some(text) => {
                let id = s.id();
                s.comments.push(StoredComment {
                    id,
                    discussion: None,
                    body: text.clone(),
                    path: None,
                    line: None,
                    resolved: false,
                });
                reply(201, json!({"id": id, "body": text, "system": false}))
            }
            None => reply(400, json!({"message": "400 Bad request - body is missing"})),
        },
        ("PUT", ["notes", id]) => edit(&mut s.comments, id, body),
        ("GET", ["discussions"]) => {
            let list = s.inline.iter().map(|c| json!({"id": c.discussion, "individual_note": false, "notes": [{
                "id": c.id, "type": "DiffNote", "body": c.body, "resolvable": true, "resolved": c.resolved,
                "position": {"new_path": c.path, "new_line": c.line}}]})).collect();
            page(list, query, "per_page", 20)
        }
        ("POST", ["discussions"]) => {
            let pos = body.get("position").cloned().unwrap_or(Value::Null);
            let path = pos
                .get("new_path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let line = pos.get("new_line").and_then(Value::as_u64).unwrap_or(0);
            let shas_ok = pos.get("head_sha").and_then(Value::as_str)
                == Some(s.pr.head_sha.as_str())
                && pos.get("base_sha").and_then(Value::as_str) == Some(s.pr.base_sha.as_str())
                && pos.get("start_sha").and_then(Value::as_str) == Some(s.pr.base_sha.as_str())
                && pos.get("position_type").and_then(Value::as_str) == Some("text");
            // Unchanged lines need their old line too.
            let context = s
                .files
                .iter()
                .find(|f| f.path == path)
                .and_then(|f| f.context.get(&(line as u32)).copied());
            let old_ok = match context {
                Some(old) => pos.get("old_line").and_then(Value::as_u64) == Some(u64::from(old)),
                None => pos.get("old_line").is_none(),
            };
            match (
                shas_ok && old_ok && s.commentable(&path, line),
                body_text(body),
            ) {
                (true, Some(text)) => {
                    let id = s.id();
                    let discussion = format!("{id:040x}");
                    s.inline.push(StoredComment {
                        id,
                        discussion: Some(discussion.clone()),
                        body: text.clone(),
                        path: Some(path),
                        line: Some(line as u32),
                        resolved: false,
                    });
                    reply(
                        201,
                        json!({"id": discussion, "notes": [{"id": id, "body": text}]}),
                    )
                }
                _ => reply(
                    400,
                    json!({"message": "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}"}),
                ),
            }
        }
        ("PUT", ["discussions", d]) => {
            let Some(resolved) = body.get("resolved").and_then(Value::as_bool) else {
                return reply(400, json!({"error": "resolved is missing"}));
            };
            match s
                .inline
                .iter_mut()
                .find(|c| c.discussion.as_deref() == Some(*d))
            {
                Some(c) => {
                    c.resolved = resolved;
                    reply(
                        200,
                        json!({"id": d, "notes": [{"id": c.id, "resolved": resolved}]}),
                    )
                }
                None => reply(404, json!({"message": "404 Not found"})),
            }
        }
        _ => not_found(),
    }
}

fn gitea(s: &mut Inner, method: &str, segs: &[&str], query: &str, body: &Value) -> Reply {
    let n = s.pr.number.to_string();
    let diff_name = format!("{n}.diff");
    match (method, segs) {
        (_, ["repos", o, r, ..]) if !same_repo(s, o, r) => not_found(),
        ("GET", ["repos", _, _, "pulls", name]) if *name == diff_name => Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: s.pr.diff.clone(),
        },
        ("GET", ["repos", _, _, "pulls", num]) if *num == n => reply(
            200,
            json!({"number": s.pr.number, "state": "open", "head": {"sha": s.pr.head_sha}, "base": {"sha": s.pr.base_sha}}),
        ),
        ("GET", ["repos", _, _, "issues", num, "comments"]) if *num == n => reply(
            200,
            Value::Array(
                s.comments
                    .iter()
                    .map(|c| json!({"id": c.id, "body": c.body, "user": {"login": "vouch-bot"}}))
                    .collect(),
            ),
        ),
        ("POST", ["repos", _, _, "issues", num, "comments"]) if *num == n => {
            match body_text(body) {
                Some(text) => {
                    let id = s.id();
                    s.comments.push(StoredComment {
                        id,
                        discussion: None,
                        body: text.clone(),
                        path: None,
                        line: None,
                        resolved: false,
                    });
                    reply(201, json!({"id": id, "body": text}))
                }
                None => reply(422, json!({"message": "body is required"})),
            }
        }
        ("PATCH", ["repos", _, _, "issues", "comments", id]) => edit(&mut s.comments, id, body),
        ("GET", ["repos", _, _, "pulls", num, "reviews"]) if *num == n => {
            let list = s
                .reviews
                .iter()
                .map(|(id, _)| json!({"id": id, "state": "COMMENT", "commit_id": s.pr.head_sha}))
                .collect();
            page(list, query, "limit", 50)
        }
        ("GET", ["repos", _, _, "pulls", num, "reviews", rid, "comments"]) if *num == n => {
            let Some((_, ids)) = s.reviews.iter().find(|(id, _)| id.to_string() == *rid) else {
                return not_found();
            };
            let list = s
                .inline
                .iter()
                .filter(|c| ids.contains(&c.id))
                .map(|c| {
                    json!({"id": c.id, "body": c.body, "path": c.path, "position": c.line,
                "resolver": if c.resolved { json!({"login": "vouch-bot"}) } else { Value::Null }})
                })
                .collect();
            reply(200, Value::Array(list))
        }
        ("POST", ["repos", _, _, "pulls", num, "reviews"]) if *num == n => {
            let comments = body
                .get("comments")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let valid = body.get("commit_id").and_then(Value::as_str).is_some()
                && comments.iter().all(|c| {
                    let path = c.get("path").and_then(Value::as_str).unwrap_or("");
                    let line = c.get("new_position").and_then(Value::as_u64).unwrap_or(0);
                    s.commentable(path, line) && body_text(c).is_some()
                });
            if !valid {
                return reply(
                    422,
                    json!({"message": "a review comment is not on a line of the diff"}),
                );
            }
            let review = s.id();
            let mut ids = Vec::new();
            for c in comments {
                let id = s.id();
                ids.push(id);
                s.inline.push(StoredComment {
                    id,
                    discussion: None,
                    body: body_text(&c).unwrap_or_default(),
                    path: c.get("path").and_then(Value::as_str).map(str::to_string),
                    line: c
                        .get("new_position")
                        .and_then(Value::as_u64)
                        .map(|l| l as u32),
                    resolved: false,
                });
            }
            s.reviews.push((review, ids));
            reply(200, json!({"id": review, "state": "COMMENT"}))
        }
        (
            "POST",
            [
                "repos",
                _,
                _,
                "pulls",
                num,
                "comments",
                id,
                verb @ ("resolve" | "unresolve"),
            ],
        ) if *num == n => match s.inline.iter_mut().find(|c| c.id.to_string() == *id) {
            Some(c) => {
                c.resolved = *verb == "resolve";
                reply(
                    200,
                    json!({"id": c.id, "resolver": if c.resolved { json!({"login": "vouch-bot"}) } else { Value::Null }}),
                )
            }
            None => not_found(),
        },
        _ => not_found(),
    }
}

/// One file of a unified diff.
struct FileDiff {
    path: String,
    old_path: String,
    status: &'static str,
    /// The hunks (from the first `@@`).
    patch: String,
    /// Head lines a comment may sit on (added and context).
    lines: BTreeSet<u32>,
    /// Context head line → base line.
    context: BTreeMap<u32, u32>,
}

fn split_diff(diff: &str) -> Vec<FileDiff> {
    let mut files = Vec::new();
    for section in diff.split("diff --git ").skip(1) {
        let mut old = None;
        let mut new = None;
        let mut status = "modified";
        let mut patch = String::new();
        let mut in_hunks = false;
        for line in section.lines() {
            if in_hunks || line.starts_with("@@") {
                in_hunks = true;
                patch.push_str(line);
                patch.push('\n');
            } else if let Some(p) = line.strip_prefix("--- ") {
                old = (p != "/dev/null").then(|| p.trim_start_matches("a/").to_string());
            } else if let Some(p) = line.strip_prefix("+++ ") {
                new = (p != "/dev/null").then(|| p.trim_start_matches("b/").to_string());
            } else if line.starts_with("new file") {
                status = "added";
            } else if line.starts_with("deleted file") {
                status = "removed";
            } else if line.starts_with("rename from") {
                status = "renamed";
            }
        }
        let Some(path) = new.clone().or_else(|| old.clone()) else {
            continue;
        };
        let (lines, context) = commentable(&patch);
        files.push(FileDiff {
            old_path: old.unwrap_or_else(|| path.clone()),
            path,
            status,
            patch,
            lines,
            context,
        });
    }
    files
}

fn commentable(patch: &str) -> (BTreeSet<u32>, BTreeMap<u32, u32>) {
    let mut lines = BTreeSet::new();
    let mut context = BTreeMap::new();
    let (mut old, mut new) = (0u32, 0u32);
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("@@ -") {
            let mut parts = rest.split([' ', ',', '+']).filter(|p| !p.is_empty());
            old = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let mut rest_parts = rest.split(" +").nth(1).unwrap_or("").split([',', ' ']);
            new = rest_parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let _ = parts.next();
        } else if line.starts_with('+') {
            lines.insert(new);
            new += 1;
        } else if line.starts_with('-') {
            old += 1;
        } else if line.starts_with(' ') {
            lines.insert(new);
            context.insert(new, old);
            new += 1;
            old += 1;
        }
    }
    (lines, context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_split_finds_files_and_commentable_lines() {
        let diff = "diff --git a/a.rs b/a.rs\nindex 1..2 100644\n--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\ndiff --git a/n.rs b/n.rs\nnew file mode 100644\n--- /dev/null\n+++ b/n.rs\n@@ -0,0 +1 @@\n+n\n";
        let files = split_diff(diff);
        assert_eq!(files.len(), 2);
        assert_eq!(
            files[0].lines.iter().copied().collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(files[0].context.get(&3), Some(&3));
        assert_eq!((files[1].path.as_str(), files[1].status), ("n.rs", "added"));
        assert!(files[1].patch.starts_with("@@ -0,0 +1 @@"));
    }
}
