//! The endpoint check: one cheap look at the endpoint before a review starts, so a
//! wrong host, path, key or model is a configuration error that says what to fix
//! instead of a failure repeated by every stage.
//!
//! Sequence: `GET {root}/models`; when it lists the configured model, the check passes
//! with that one request. Otherwise (no list, another list, a server that answers any
//! model name) one minimal chat completion (`max_tokens: 1`) decides. A 404 on both
//! with a root that has no version segment probes `{root}/v1/models` to suggest `/v1`.
//! Every request is single-attempt (no retries) and counted in
//! [`ModelClient::requests_sent`].
//!
//! The check also learns the model's context window where the endpoint states it
//! ([`EndpointCheck::context_tokens`]): the listed entry of the configured model gives
//! vLLM's `max_model_len` or OpenRouter's `context_length`; a list whose entries are
//! llama.cpp's (`owned_by: "llamacpp"`) is followed by one `GET {server}/props`, whose
//! `default_generation_settings.n_ctx` (or top-level `n_ctx`) is the window of one
//! request slot. Nothing else is guessed (llama.cpp's `n_ctx_train` is the model's
//! training length, not what the server was started with).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::client::ModelClient;
use crate::config::BaseUrl;
use crate::error::scrub;

/// Longest wait for one request of the check.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// What the endpoint check found wrong. Each variant is a configuration problem the
/// user fixes; [`EndpointProblem::code`] is its stable diagnostic code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointProblem {
    /// No connection could be made (DNS, refused, unreachable).
    Unreachable {
        /// The URL that was tried.
        url: String,
        /// The transport error chain (API key redacted).
        detail: String,
    },
    /// The TLS handshake failed (certificate, protocol, plain HTTP on an HTTPS port).
    Tls {
        /// The URL that was tried.
        url: String,
        /// The transport error chain (API key redacted).
        detail: String,
    },
    /// The endpoint did not answer within the check's time limit.
    Timeout {
        /// The URL that was tried.
        url: String,
    },
    /// Nothing OpenAI-compatible answers under this root (HTTP 404/405, or a page that
    /// is not a chat completion).
    WrongPath {
        /// The chat-completions URL that was tried.
        url: String,
        /// A root that does answer (`…/v1`), when the probe found one.
        suggestion: Option<String>,
    },
    /// The endpoint refused the request's credentials (HTTP 401 or 403).
    Refused {
        /// 401 or 403.
        status: u16,
        /// Whether a key was sent at all.
        key_sent: bool,
        /// The provider's message (API key redacted, bounded).
        detail: String,
    },
    /// The endpoint does not serve the configured model.
    UnknownModel {
        /// The configured model name.
        model: String,
        /// The models the endpoint lists (empty when it lists none).
        available: Vec<String>,
    },
    /// HTTP 429: rate limited or out of quota.
    RateLimited {
        /// The wait the server asked for, if any.
        retry_after: Option<Duration>,
        /// The provider's message (API key redacted, bounded).
        detail: String,
    },
    /// Azure OpenAI has no deployment by the name in the base URL (HTTP 404
    /// `DeploymentNotFound`).
    UnknownDeployment {
        /// The deployment name the base URL carries (`…/openai/deployments/NAME`).
        deployment: Option<String>,
        /// The chat-completions URL that was tried.
        url: String,
    },
    /// The endpoint failed (HTTP 5xx) or answered with another unexpected status.
    ServerError {
        /// HTTP status.
        status: u16,
        /// The URL whose request failed.
        url: String,
        /// The provider's message (API key redacted, bounded).
        detail: String,
    },
}

impl EndpointProblem {
    /// The stable diagnostic code: `endpoint-unreachable`, `endpoint-tls`,
    /// `endpoint-timeout`, `endpoint-path`, `endpoint-auth`, `endpoint-model`,
    /// `endpoint-deployment`, `endpoint-rate-limited`, `endpoint-server-error`.
    pub fn code(&self) -> &'static str {
        match self {
            EndpointProblem::Unreachable { .. } => "endpoint-unreachable",
            EndpointProblem::Tls { .. } => "endpoint-tls",
            EndpointProblem::Timeout { .. } => "endpoint-timeout",
            EndpointProblem::WrongPath { .. } => "endpoint-path",
            EndpointProblem::Refused { .. } => "endpoint-auth",
            EndpointProblem::UnknownModel { .. } => "endpoint-model",
            EndpointProblem::UnknownDeployment { .. } => "endpoint-deployment",
            EndpointProblem::RateLimited { .. } => "endpoint-rate-limited",
            EndpointProblem::ServerError { .. } => "endpoint-server-error",
        }
    }
}

/// What a passed check learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointCheck {
    /// The models the endpoint lists (empty when it lists none).
    pub models: Vec<String>,
    /// Whether the model was confirmed by a chat completion (it was not listed).
    pub probed_chat: bool,
    /// Rule: the endpoint lists models, the configured one is not among them, and a
    /// chat completion naming it was answered anyway — the server ignores the model
    /// name (llama.cpp's server serves the model it loaded), so the configured name is
    /// not the model that answers.
    pub unlisted_model_answered: bool,
    /// The context window the endpoint states, in tokens (see the module
    /// documentation), when it states one.
    pub context_tokens: Option<u32>,
}

/// One answered request of the check.
struct Answer {
    status: StatusCode,
    retry_after: Option<Duration>,
    body: String,
}

impl ModelClient {
    /// Checks the endpoint before a review (see the module documentation).
    ///
    /// A cancelled check returns `Ok` with nothing learned; the review then sees the
    /// cancellation itself.
    ///
    /// # Errors
    /// The [`EndpointProblem`] found.
    pub async fn check_endpoint(
        &self,
        cancel: &CancellationToken,
    ) -> Result<EndpointCheck, EndpointProblem> {
        let model = self.config().model.clone();
        let listed = self.send(Method::GET, "/models", None, cancel).await;
        let (models, listed) = match listed {
            Ok(Some(answer)) => {
                refusal_or_limit(&answer, self.config().api_key.as_deref())?;
                (model_ids(&answer), answer)
            }
            Ok(None) => return Ok(nothing_learned()),
            Err(problem) => return Err(problem),
        };
        let context_tokens = self.context_tokens(&listed, &model, cancel).await;
        let checked = self.check_model(model, models, cancel).await?;
        Ok(EndpointCheck {
            context_tokens,
            ..checked
        })
    }

    /// The window the endpoint states (see the module documentation).
    async fn context_tokens(
        &self,
        listed: &Answer,
        model: &str,
        cancel: &CancellationToken,
    ) -> Option<u32> {
        let entries = model_entries(listed);
        if let Some(tokens) = entries
            .iter()
            .filter(|e| e.get("id").and_then(Value::as_str) == Some(model))
            .find_map(listed_window)
        {
            return Some(tokens);
        }
        let llama_cpp = entries
            .iter()
            .any(|e| e.get("owned_by").and_then(Value::as_str) == Some("llamacpp"));
        if !llama_cpp {
            return None;
        }
        let url = self.inner.auth.url_with_query("/props");
        let url = props_url(&url);
        let answer = self.send_to(Method::GET, &url, None, cancel).await.ok()??;
        let props: Value = serde_json::from_str(&answer.body).ok()?;
        ["/default_generation_settings/n_ctx", "/n_ctx"]
            .iter()
            .find_map(|at| props.pointer(at).and_then(window_tokens))
    }

    /// The model part of the check, once the list is read: a listed model passes, any
    /// other is asked for with one minimal chat completion.
    async fn check_model(
        &self,
        model: String,
        models: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<EndpointCheck, EndpointProblem> {
        if models.contains(&model) {
            return Ok(EndpointCheck {
                models,
                probed_chat: false,
                unlisted_model_answered: false,
                context_tokens: None,
            });
        }
        let body = json!({
            "model": model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "stream": false,
        });
        let Some(answer) = self
            .send(Method::POST, "/chat/completions", Some(&body), cancel)
            .await?
        else {
            return Ok(nothing_learned());
        };
        refusal_or_limit(&answer, self.config().api_key.as_deref())?;
        self.judge_chat(answer, model, models, cancel).await
    }

    async fn judge_chat(
        &self,
        answer: Answer,
        model: String,
        models: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<EndpointCheck, EndpointProblem> {
        let status = answer.status;
        if status.is_success() {
            let is_completion = serde_json::from_str::<Value>(&answer.body)
                .is_ok_and(|v| v.get("choices").is_some());
            if is_completion {
                return Ok(EndpointCheck {
                    unlisted_model_answered: !models.is_empty(),
                    models,
                    probed_chat: true,
                    context_tokens: None,
                });
            }
            return Err(self.wrong_path(cancel).await);
        }
        if status.as_u16() == 404 && names_missing_deployment(&answer.body) {
            return Err(EndpointProblem::UnknownDeployment {
                deployment: azure_deployment(self.inner.auth.root()),
                url: self.chat_url(),
            });
        }
        if matches!(status.as_u16(), 400 | 404 | 422) && names_missing_model(&answer.body) {
            return Err(EndpointProblem::UnknownModel {
                model,
                available: models,
            });
        }
        match status.as_u16() {
            404 | 405 => Err(self.wrong_path(cancel).await),
            // The endpoint and key work; a refused detail of the probe itself (say, a
            // model that wants `max_completion_tokens`) is the review's business.
            400..=499 => Ok(EndpointCheck {
                models,
                probed_chat: true,
                unlisted_model_answered: false,
                context_tokens: None,
            }),
            _ => Err(EndpointProblem::ServerError {
                status: status.as_u16(),
                url: self.chat_url(),
                detail: self.excerpt(&answer.body),
            }),
        }
    }

    fn chat_url(&self) -> String {
        without_credentials(&self.inner.auth.url_with_query("/chat/completions"))
    }

    async fn wrong_path(&self, cancel: &CancellationToken) -> EndpointProblem {
        let url = self.chat_url();
        let base = BaseUrl::parse(self.inner.auth.root());
        let mut suggestion = None;
        if !base.has_version_segment() {
            let candidate = format!("{}/v1", base.root);
            let probe = self
                .send_to(Method::GET, &format!("{candidate}/models"), None, cancel)
                .await;
            if matches!(probe, Ok(Some(ref a)) if a.status.is_success() || matches!(a.status.as_u16(), 401 | 403))
            {
                suggestion = Some(without_credentials(&candidate));
            }
        }
        EndpointProblem::WrongPath { url, suggestion }
    }

    fn excerpt(&self, body: &str) -> String {
        scrub(&provider_message(body), self.config().api_key.as_deref())
    }

    /// One request to `{root}{path}`; `Ok(None)` when cancelled.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        cancel: &CancellationToken,
    ) -> Result<Option<Answer>, EndpointProblem> {
        let url = self.inner.auth.url_with_query(path);
        let answer = self.send_to(method, &url, body, cancel).await?;
        if let Some(a) = &answer {
            self.inner.endpoint.note_status(a.status.as_u16());
        }
        Ok(answer)
    }

    async fn send_to(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        cancel: &CancellationToken,
    ) -> Result<Option<Answer>, EndpointProblem> {
        let mut request = self
            .inner
            .http
            .request(method, url)
            .headers(self.inner.auth.header_map())
            .timeout(CHECK_TIMEOUT.min(self.config().request_timeout));
        if let Some(body) = body {
            request = request.json(body);
        }
        self.inner
            .endpoint
            .sent
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(None),
            sent = async {
                let response = request.send().await?;
                let status = response.status();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let body = response.text().await?;
                Ok::<_, reqwest::Error>(Answer { status, retry_after, body })
            } => sent,
        };
        sent.map(Some).map_err(|e| self.transport_problem(url, &e))
    }

    fn transport_problem(&self, url: &str, error: &reqwest::Error) -> EndpointProblem {
        let url = without_credentials(url);
        let detail = scrub(&chain(error), self.config().api_key.as_deref())
            .replace(url_of(error).as_str(), &url);
        if error.is_timeout() {
            return EndpointProblem::Timeout { url };
        }
        if is_tls(&detail) {
            return EndpointProblem::Tls { url, detail };
        }
        EndpointProblem::Unreachable { url, detail }
    }
}

/// `url` without `user:password@`: a URL in a message must not carry credentials.
pub fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

fn url_of(error: &reqwest::Error) -> String {
    error
        .url()
        .map(ToString::to_string)
        .unwrap_or_else(|| "\u{0}".to_owned())
}

fn nothing_learned() -> EndpointCheck {
    EndpointCheck {
        models: Vec::new(),
        probed_chat: false,
        unlisted_model_answered: false,
        context_tokens: None,
    }
}

/// The Azure OpenAI deployment a root names: the segment after `/openai/deployments/`.
pub fn azure_deployment(root: &str) -> Option<String> {
    let (_, rest) = root.split_once("/openai/deployments/")?;
    let name = rest.split(['/', '?']).next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// Whether an error body is Azure OpenAI's `DeploymentNotFound`.
fn names_missing_deployment(body: &str) -> bool {
    body.to_ascii_lowercase().contains("deploymentnotfound")
}

/// A 401/403 or 429 answer of any request of the check ends it.
fn refusal_or_limit(answer: &Answer, key: Option<&str>) -> Result<(), EndpointProblem> {
    match answer.status.as_u16() {
        status @ (401 | 403) => Err(EndpointProblem::Refused {
            status,
            key_sent: key.is_some(),
            detail: scrub(&provider_message(&answer.body), key),
        }),
        429 => Err(EndpointProblem::RateLimited {
            retry_after: answer.retry_after,
            detail: scrub(&provider_message(&answer.body), key),
        }),
        _ => Ok(()),
    }
}

/// The entries of an OpenAI-shaped model list (`data[]`), or of Ollama's native shape
/// (`models[]`). Anything else has none.
fn model_entries(answer: &Answer) -> Vec<Value> {
    if !answer.status.is_success() {
        return Vec::new();
    }
    let Ok(mut value) = serde_json::from_str::<Value>(&answer.body) else {
        return Vec::new();
    };
    let entries = match value.get("data") {
        Some(_) => value["data"].take(),
        None => value.get_mut("models").map(Value::take).unwrap_or_default(),
    };
    match entries {
        Value::Array(entries) => entries,
        _ => Vec::new(),
    }
}

/// The ids of a model list (`data[].id`, or Ollama's `models[].name`).
fn model_ids(answer: &Answer) -> Vec<String> {
    model_entries(answer)
        .iter()
        .filter_map(|m| m.get("id").or_else(|| m.get("name")))
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Rule: the window a model list's entry states: vLLM's `max_model_len`, else
/// OpenRouter's `context_length` (top-level, else its `top_provider`'s).
fn listed_window(entry: &Value) -> Option<u32> {
    [
        "/max_model_len",
        "/context_length",
        "/top_provider/context_length",
    ]
    .iter()
    .find_map(|at| entry.pointer(at).and_then(window_tokens))
}

/// A stated window: a positive whole number of tokens (larger ones saturate).
fn window_tokens(value: &Value) -> Option<u32> {
    let tokens = value.as_u64().filter(|t| *t > 0)?;
    Some(u32::try_from(tokens).unwrap_or(u32::MAX))
}

/// llama.cpp's `/props` beside a request URL: at the server's root, so a trailing
/// version segment (`/v1`) of the base URL is left out; the query is kept.
fn props_url(props_under_root: &str) -> String {
    let (path, query) = match props_under_root.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (props_under_root, None),
    };
    let base = BaseUrl::parse(path.strip_suffix("/props").unwrap_or(path));
    let root = if base.has_version_segment() {
        base.root
            .rsplit_once('/')
            .map_or(base.root.as_str(), |(r, _)| r)
    } else {
        base.root.as_str()
    };
    match query {
        Some(q) => format!("{root}/props?{q}"),
        None => format!("{root}/props"),
    }
}

/// Whether an error body says the requested model does not exist (OpenAI, vLLM,
/// Ollama, OpenRouter and Azure phrase it differently; all name the model).
fn names_missing_model(body: &str) -> bool {
    let text = body.to_ascii_lowercase();
    text.contains("deploymentnotfound")
        || text.contains("model")
            && [
                "not found",
                "does not exist",
                "not exist",
                "unknown",
                "no such",
                "invalid model",
                "not a valid model",
            ]
            .iter()
            .any(|needle| text.contains(needle))
}

/// The provider's `error.message` when the body has one, else what the body says in one
/// line ([`crate::summarize_error_body`]: an HTML page by its title and first line).
fn provider_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error").and_then(|e| {
                e.get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| e.as_str().map(str::to_owned))
            })
        })
        .unwrap_or_else(|| crate::summarize_error_body(body))
}

fn is_tls(detail: &str) -> bool {
    let text = detail.to_ascii_lowercase();
    [
        "certificate",
        "tls",
        "ssl",
        "handshake",
        "invalidcontenttype",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_messages_of_known_providers() {
        for (body, expected) in [
            (
                r#"{"error":{"message":"The model `gpt-5x` does not exist or you do not have access to it."}}"#,
                true,
            ),
            (
                r#"{"error":{"message":"model \"llama9\" not found, try pulling it first"}}"#,
                true,
            ),
            (
                r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}"#,
                true,
            ),
            (r#"{"error":{"message":"x is not a valid model ID"}}"#, true),
            (r#"{"error":{"message":"max_tokens is too large"}}"#, false),
            ("Not Found", false),
        ] {
            assert_eq!(names_missing_model(body), expected, "{body}");
        }
    }

    #[test]
    fn windows_the_model_list_states() {
        for (entry, expected) in [
            (json!({"id": "m", "max_model_len": 131_072}), Some(131_072)),
            (json!({"id": "m", "context_length": 200_000}), Some(200_000)),
            (
                json!({"id": "m", "top_provider": {"context_length": 65_536}}),
                Some(65_536),
            ),
            (json!({"id": "m", "max_model_len": 0}), None),
            (json!({"id": "m", "max_model_len": "big"}), None),
            (json!({"id": "m", "meta": {"n_ctx_train": 131_072}}), None),
            (
                json!({"id": "m", "max_model_len": 1u64 << 40}),
                Some(u32::MAX),
            ),
        ] {
            assert_eq!(listed_window(&entry), expected, "{entry}");
        }
    }

    #[test]
    fn props_live_at_the_server_root() {
        for (url, expected) in [
            ("http://h:8080/v1/props", "http://h:8080/props"),
            ("http://h:8080/props", "http://h:8080/props"),
            (
                "http://h:8080/llm/v1/props?k=v",
                "http://h:8080/llm/props?k=v",
            ),
        ] {
            assert_eq!(props_url(url), expected, "{url}");
        }
    }

    #[test]
    fn urls_in_messages_carry_no_credentials() {
        for (given, shown) in [
            ("https://user:pw@h.example/v1", "https://h.example/v1"),
            (
                "http://tok@127.0.0.1:8080/v1/models?x=a@b",
                "http://127.0.0.1:8080/v1/models?x=a@b",
            ),
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
            ("no scheme", "no scheme"),
        ] {
            assert_eq!(without_credentials(given), shown);
        }
    }

    #[test]
    fn azure_deployment_names() {
        for (root, expected) in [
            (
                "https://r.openai.azure.com/openai/deployments/review-gpt",
                Some("review-gpt"),
            ),
            (
                "https://r.openai.azure.com/openai/deployments/review-gpt/chat/completions?api-version=1",
                Some("review-gpt"),
            ),
            ("https://r.openai.azure.com/openai/deployments/", None),
            ("https://api.openai.com/v1", None),
        ] {
            assert_eq!(azure_deployment(root).as_deref(), expected, "{root}");
        }
    }

    #[test]
    fn provider_messages() {
        assert_eq!(
            provider_message(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(provider_message(r#"{"error":"bad key"}"#), "bad key");
        assert_eq!(provider_message(" plain \n"), "plain");
    }

    #[test]
    fn codes_are_distinct() {
        let problems = [
            EndpointProblem::Unreachable {
                url: String::new(),
                detail: String::new(),
            },
            EndpointProblem::Tls {
                url: String::new(),
                detail: String::new(),
            },
            EndpointProblem::Timeout { url: String::new() },
            EndpointProblem::WrongPath {
                url: String::new(),
                suggestion: None,
            },
            EndpointProblem::Refused {
                status: 401,
                key_sent: true,
                detail: String::new(),
            },
            EndpointProblem::UnknownModel {
                model: String::new(),
                available: vec![],
            },
            EndpointProblem::RateLimited {
                retry_after: None,
                detail: String::new(),
            },
            EndpointProblem::UnknownDeployment {
                deployment: None,
                url: String::new(),
            },
            EndpointProblem::ServerError {
                status: 500,
                url: String::new(),
                detail: String::new(),
            },
        ];
        let codes: std::collections::BTreeSet<_> = problems.iter().map(|p| p.code()).collect();
        assert_eq!(codes.len(), problems.len());
    }
}
