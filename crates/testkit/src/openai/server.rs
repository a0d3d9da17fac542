//! The axum app that serves a [`Script`] on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::dialect::{DEFAULT_MODELS, Dialect, Gate, Route};
use super::record::{RecordedRequest, ServedBy};
use super::reply::{HOLD_LIMIT, Reply};
use super::script::Script;

/// Body text of the HTTP 500 sent for a chat request no rule could serve.
const UNMATCHED_MESSAGE: &str = "no scripted reply for request";

/// A running scripted server. It stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

struct Shared {
    state: Mutex<ServerState>,
    dialect: Dialect,
    models: Vec<String>,
}

struct ServerState {
    script: Script,
    requests: Vec<RecordedRequest>,
    /// Chat requests being answered now.
    in_flight: Vec<Flight>,
}

/// A chat request being answered.
struct Flight {
    seq: usize,
    label: Option<String>,
    /// Other requests it has been in flight with: those in flight when it arrived and
    /// those that arrived since.
    company: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ServerState> {
        // A panicking test thread must not hide the recorded requests from others.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl ScriptedServer {
    /// Binds 127.0.0.1 on a free port and serves `script` until dropped.
    ///
    /// # Panics
    /// When no local port can be bound (a broken test environment).
    pub async fn start(script: Script) -> ScriptedServer {
        Self::start_as(Dialect::Generic, DEFAULT_MODELS, script).await
    }

    /// Like [`ScriptedServer::start`], imitating `dialect`'s paths, authentication and
    /// errors, with `models` as the models it serves (and lists).
    ///
    /// # Panics
    /// When no local port can be bound (a broken test environment).
    pub async fn start_as(dialect: Dialect, models: &[&str], script: Script) -> ScriptedServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0 for the scripted OpenAI server");
        let addr = listener
            .local_addr()
            .expect("local address of the listener");
        let shared = Arc::new(Shared {
            state: Mutex::new(ServerState {
                script,
                requests: Vec::new(),
                in_flight: Vec::new(),
            }),
            dialect,
            models: models.iter().map(|m| (*m).to_owned()).collect(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            // Serving ends only when the task is aborted on drop.
            let _ = axum::serve(listener, app).await;
        });
        ScriptedServer { addr, shared, task }
    }

    /// The base URL to configure clients with: `http://127.0.0.1:PORT/v1` (for the
    /// dialects with another root, theirs: see [`Dialect::base_url`]).
    pub fn base_url(&self) -> String {
        self.shared.dialect.base_url(&self.root_url())
    }

    /// `http://127.0.0.1:PORT`, with no path.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far (all routes), in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests (all routes) were received so far.
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Chat-completion requests (`POST …/chat/completions`), in arrival order.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .collect()
    }

    /// Requests no rule could serve, plus malformed bodies and unknown routes.
    pub fn unmatched(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| {
                matches!(
                    r.served_by,
                    ServedBy::Unmatched | ServedBy::InvalidBody | ServedBy::UnknownRoute
                )
            })
            .collect()
    }

    /// Requests served by the rule labelled `label`.
    pub fn served_by(&self, label: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.rule_label() == Some(label))
            .collect()
    }

    /// Rules that still hold queued replies: `(index, label, queued count)`.
    /// Replies registered with [`super::Rule::always`] are not counted.
    pub fn unused_replies(&self) -> Vec<(usize, Option<String>, usize)> {
        self.shared
            .lock()
            .script
            .rules
            .iter()
            .enumerate()
            .filter(|(_, rule)| !rule.replies.is_empty())
            .map(|(i, rule)| (i, rule.label.clone(), rule.replies.len()))
            .collect()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived_at = Instant::now();
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (k.as_str().to_owned(), value)
        })
        .collect();
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let path = uri.path().to_owned();

    let query = uri.query().map(str::to_owned);
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let model = parsed
        .as_ref()
        .and_then(|b| b.get("model"))
        .and_then(Value::as_str);
    let gate = shared
        .dialect
        .gate(&path, query.as_deref(), &header, model, &shared.models);
    let (seq, reply) = {
        let mut state = shared.lock();
        let (served_by, reply) = serve(
            &mut state,
            &shared.models,
            &shared.dialect,
            gate,
            &method,
            &path,
            parsed.as_ref(),
        );
        let seq = state.requests.len();
        let in_flight_at_arrival = take_off(&mut state, seq, &served_by);
        state.requests.push(RecordedRequest {
            in_flight_at_arrival,
            seq,
            method: method.to_string(),
            path: path.clone(),
            query,
            headers: headers.clone(),
            body: parsed.clone().unwrap_or(Value::Null),
            raw_body,
            arrived_at,
            served_by,
            status: reply.status,
        });
        (seq, reply)
    };

    // Leaves the in-flight list when answered or when the client went away.
    let _in_flight = InFlight {
        shared: &shared,
        seq,
    };
    if let Some(requests) = reply.hold_until_in_flight {
        hold(&shared, seq, requests).await;
    }
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    let request = parsed.unwrap_or(Value::Null);
    render(&reply, reply.render_body(seq, &request, &headers))
}

/// What answers a request and how: the dialect's refusal, a script rule (or the endpoint
/// check's probe, or the unmatched reply) for a chat request, the model list, or 404.
fn serve(
    state: &mut ServerState,
    models: &[String],
    dialect: &Dialect,
    gate: Gate,
    method: &Method,
    path: &str,
    parsed: Option<&Value>,
) -> (ServedBy, Reply) {
    match (gate, method, parsed) {
        (Gate::Refuse(reply), _, _) => (ServedBy::Refused, reply),
        (Gate::Pass(Route::Chat), &Method::POST, Some(request)) => {
            match state.script.serve(request) {
                Some((index, label, reply)) => {
                    (ServedBy::Rule { index, label }, reply.resolve(request))
                }
                None if is_probe(request) => (ServedBy::Probe, Reply::content("pong")),
                None => (ServedBy::Unmatched, unmatched_reply(request)),
            }
        }
        (Gate::Pass(Route::Chat), &Method::POST, None) => (
            ServedBy::InvalidBody,
            error_reply(400, "request body is not JSON"),
        ),
        (Gate::Pass(Route::Models), &Method::GET, _) => (
            ServedBy::ModelList,
            state
                .script
                .models_reply
                .clone()
                .unwrap_or_else(|| dialect.models_reply(models, state.script.context_window)),
        ),
        (Gate::Pass(Route::Props), &Method::GET, _) => (
            ServedBy::Props,
            Dialect::props_reply(state.script.context_window),
        ),
        _ => (
            ServedBy::UnknownRoute,
            error_reply(404, &format!("unknown route {method} {path}")),
        ),
    }
}

/// The labels in flight when request `seq` arrived; a request a rule serves joins them
/// (each one in flight gains its company).
fn take_off(state: &mut ServerState, seq: usize, served_by: &ServedBy) -> Vec<Option<String>> {
    let in_flight_at_arrival = state.in_flight.iter().map(|f| f.label.clone()).collect();
    if let ServedBy::Rule { label, .. } = served_by {
        for f in &mut state.in_flight {
            f.company += 1;
        }
        let company = state.in_flight.len();
        state.in_flight.push(Flight {
            seq,
            label: label.clone(),
            company,
        });
    }
    in_flight_at_arrival
}

/// A chat request's place in the in-flight list, released when dropped.
struct InFlight<'a> {
    shared: &'a Shared,
    seq: usize,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.shared.lock().in_flight.retain(|f| f.seq != self.seq);
    }
}

/// Waits until request `seq` has been in flight together with at least `requests - 1`
/// others (a barrier: each one counts who it met, so none waits for one that already
/// left), or [`HOLD_LIMIT`].
async fn hold(shared: &Shared, seq: usize, requests: usize) {
    let started = Instant::now();
    let met = || {
        let state = shared.lock();
        state
            .in_flight
            .iter()
            .find(|f| f.seq == seq)
            .is_none_or(|f| f.company + 1 >= requests)
    };
    while !met() && started.elapsed() < HOLD_LIMIT {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// An endpoint check's minimal request (`max_tokens: 1`), which a real server answers
/// whatever the script says; rules still come first.
fn is_probe(request: &Value) -> bool {
    request.get("max_tokens").and_then(Value::as_u64) == Some(1)
}

fn unmatched_reply(request: &Value) -> Reply {
    let summary = json!({
        "messages": request.get("messages").map(|m| m.as_array().map_or(0, Vec::len)),
        "hasTools": request.get("tools").is_some(),
    });
    error_reply(500, &format!("{UNMATCHED_MESSAGE} ({summary})"))
}

fn error_reply(status: u16, message: &str) -> Reply {
    let body = json!({"error": {"message": message, "type": "scripted_server", "code": null}});
    Reply::raw(status, body.to_string())
}

fn render(reply: &Reply, body: String) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (name, value) in &reply.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            headers.insert(name, value);
        }
    }
    response
}
