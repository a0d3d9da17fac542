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

mod routes;

use routes::{Reply, reply, route};

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

    /// The forge's 401 body.
    fn unauthorised(self) -> Value {
        match self {
            ForgeKind::Github => {
                json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
            }
            ForgeKind::Gitlab => json!({"message": "401 Unauthorized"}),
            ForgeKind::Gitea => {
                json!({"message": "token is required", "url": "https://gitea.example/api/swagger"})
            }
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
    /// How many files the forge says the pull request changes, when it says more than
    /// the diff lists (GitHub's `changed_files`, GitLab's `changes_count`, Gitea's
    /// `changed_files`); `None`: as many as the diff lists.
    pub changed_files: Option<u64>,
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
    /// Who wrote it: [`TOKEN_USER`] for what the token posts.
    pub author: String,
}

/// The user the forge's token belongs to (`GET /user`), who writes what vouch posts.
pub const TOKEN_USER: &str = "vouch-bot";

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
        self.add_comment_by(TOKEN_USER, body)
    }

    /// Adds a pull-request comment written by `author` (another user than the token's).
    pub fn add_comment_by(&self, author: &str, body: &str) -> u64 {
        let mut s = lock(&self.shared);
        let id = s.id();
        s.comments.push(StoredComment {
            id,
            discussion: None,
            body: body.into(),
            path: None,
            line: None,
            resolved: false,
            author: author.into(),
        });
        id
    }

    /// Adds an inline comment on head line `line` of `path` written by `author` (on
    /// Gitea, in a review of its own; on GitLab, a discussion of its own).
    pub fn add_inline_by(&self, author: &str, path: &str, line: u32, body: &str) -> u64 {
        let mut s = lock(&self.shared);
        let id = s.id();
        s.inline.push(StoredComment {
            id,
            discussion: Some(format!("{id:040x}")),
            body: body.into(),
            path: Some(path.into()),
            line: Some(line),
            resolved: false,
            author: author.into(),
        });
        let review = s.id();
        s.reviews.push((review, vec![id]));
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

/// The answer to one request: a queued failure first, then the auth check, then the
/// forge's routes.
fn answer(
    s: &mut Inner,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &Value,
) -> Reply {
    let failure = s
        .failures
        .iter_mut()
        .find(|f| f.times > 0 && f.method == method.as_str() && path.ends_with(&f.path_suffix));
    if let Some(f) = failure {
        f.times -= 1;
        return Reply {
            status: f.status,
            headers: f.headers.clone(),
            body: f.body.clone(),
        };
    }
    if !s.authorised(headers) {
        return reply(401, s.kind.unauthorised());
    }
    match path.strip_prefix(s.kind.prefix()) {
        Some(rest) => {
            let segs: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
            route(s, method.as_str(), &segs, query, body)
        }
        None => reply(404, json!({"message": "Not Found"})),
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
    let out = answer(&mut s, &method, &path, &query, &headers, &parsed);
    s.requests.push(ForgeRequest {
        method: method.to_string(),
        path,
        query,
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
    response_of(out)
}

/// The HTTP response of `out`: JSON content type unless its headers say otherwise.
fn response_of(out: Reply) -> Response {
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
