//! [`ModelClient`]: one chat completion through async-openai with vouch's own retry,
//! timeout, cancellation and structured-output fallback policy.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use async_openai::Client;
use async_openai::error::OpenAIError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::chat::{ChatReply, ChatRequest, parse_reply, request_body};
use crate::config::EndpointConfig;
use crate::error::{LlmError, RetryCause, scrub};
use crate::error_body::summarize_error_body;
use crate::exchange::{Answer, Exchanges, Lookup};
use crate::http::{CapturingService, EndpointAuth, EndpointState, NotJson, StatusFailure};
use crate::retry::{is_retryable_status, wait_before_retry};

/// A client for one OpenAI-compatible endpoint. Cheap to clone; clones share the
/// endpoint's learned state (whether it rejected structured outputs).
#[derive(Clone)]
pub struct ModelClient {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) config: EndpointConfig,
    client: Client<EndpointAuth>,
    /// The endpoint's URL and headers, for requests outside async-openai (the check).
    pub(crate) auth: EndpointAuth,
    /// The HTTP client every request of this endpoint goes through.
    pub(crate) http: reqwest::Client,
    /// Shared with every client of the same endpoint ([`ModelClient::for_model`]).
    pub(crate) endpoint: Arc<EndpointState>,
    structured_fell_back: AtomicBool,
    call_ids: AtomicU64,
    exchanges: Option<Arc<Exchanges>>,
}

impl fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelClient")
            .field("config", &self.inner.config)
            .field("structured_fell_back", &self.structured_outputs_fell_back())
            .finish()
    }
}

/// What [`ModelClient::complete_observed`] does after a failed attempt.
enum AfterFailure {
    /// The endpoint rejected `response_format`: send again without it (not counted).
    WithoutSchema,
    /// Retry after this error (with the server's Retry-After, when it sent one).
    Retry(LlmError, Option<std::time::Duration>),
    /// Give up with this error.
    Fail(LlmError),
}

/// One failed HTTP attempt, before it becomes an [`LlmError`].
enum AttemptError {
    Status(StatusFailure),
    Final(LlmError),
    Retryable(LlmError),
}

impl ModelClient {
    /// Builds a client for `config`. Sends nothing.
    ///
    /// # Errors
    /// [`LlmError::Config`] when the API key is not a valid header value or the HTTP
    /// client cannot be built.
    pub fn new(config: EndpointConfig) -> Result<ModelClient, LlmError> {
        Self::with_state(config, Arc::default())
    }

    /// A client for `model` on the same endpoint, sharing its request count and its
    /// memory of a refused key (so one 401 stops every client of the endpoint).
    ///
    /// # Errors
    /// As [`ModelClient::new`].
    pub fn for_model(&self, model: &str) -> Result<ModelClient, LlmError> {
        let config = EndpointConfig {
            model: model.to_owned(),
            ..self.inner.config.clone()
        };
        let client = Self::with_state(config, self.inner.endpoint.clone())?;
        Ok(match self.exchanges() {
            Some(exchanges) => client.with_exchanges(exchanges.clone()),
            None => client,
        })
    }

    fn with_state(
        config: EndpointConfig,
        endpoint: Arc<EndpointState>,
    ) -> Result<ModelClient, LlmError> {
        let auth = EndpointAuth::new(&config)?;
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| LlmError::Config {
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        let service = CapturingService::new(
            http.clone(),
            config.api_key.as_deref(),
            endpoint.sent.clone(),
        );
        // Installing our own service replaces async-openai's default executor, and with
        // it the library's built-in retry layer: all retries happen in `complete`.
        let client = Client::build(http.clone(), auth.clone()).with_http_service(service);
        Ok(ModelClient {
            inner: Arc::new(Inner {
                config,
                client,
                auth,
                http,
                endpoint,
                structured_fell_back: AtomicBool::new(false),
                call_ids: AtomicU64::new(0),
                exchanges: None,
            }),
        })
    }

    /// HTTP requests sent to this endpoint so far by every client sharing it (see
    /// [`ModelClient::for_model`]), failed and retried ones and the endpoint check
    /// included.
    pub fn requests_sent(&self) -> u32 {
        self.inner.endpoint.sent.load(Ordering::Relaxed)
    }

    /// The HTTP status (401 or 403) with which the endpoint refused the key during
    /// this run, if it did. After a refusal no further request is sent.
    pub fn refused_key(&self) -> Option<u16> {
        self.inner.endpoint.refused()
    }

    /// The same client going through `exchanges` when there is an exchange layer
    /// ([`ModelClient::with_exchanges`]), unchanged otherwise.
    pub fn through(self, exchanges: Option<&Arc<Exchanges>>) -> ModelClient {
        match exchanges {
            Some(exchanges) => self.with_exchanges(exchanges.clone()),
            None => self,
        }
    }

    /// The same client with every HTTP attempt going through `exchanges` (a response
    /// cache, a recording or a replay).
    pub fn with_exchanges(self, exchanges: Arc<Exchanges>) -> ModelClient {
        let inner = &self.inner;
        ModelClient {
            inner: Arc::new(Inner {
                config: inner.config.clone(),
                client: inner.client.clone(),
                auth: inner.auth.clone(),
                http: inner.http.clone(),
                endpoint: inner.endpoint.clone(),
                structured_fell_back: AtomicBool::new(self.structured_outputs_fell_back()),
                call_ids: AtomicU64::new(inner.call_ids.load(Ordering::Relaxed)),
                exchanges: Some(exchanges),
            }),
        }
    }

    /// The exchange layer, if any.
    pub fn exchanges(&self) -> Option<&Arc<Exchanges>> {
        self.inner.exchanges.as_ref()
    }

    /// The endpoint configuration this client was built with.
    pub fn config(&self) -> &EndpointConfig {
        &self.inner.config
    }

    /// Whether this endpoint rejected `response_format: json_schema` during this run
    /// (so structured outputs are no longer sent). Reports should say so.
    pub fn structured_outputs_fell_back(&self) -> bool {
        self.inner.structured_fell_back.load(Ordering::Relaxed)
    }

    fn sends_schema(&self, request: &ChatRequest) -> bool {
        request.response_schema.is_some()
            && request.tools.is_empty()
            && self.inner.config.structured_outputs
            && !self.structured_outputs_fell_back()
    }

    /// Sends one chat completion and returns the parsed reply.
    ///
    /// Policy:
    /// - Each HTTP attempt is limited by `request_timeout`; an attempt that exceeds it
    ///   is dropped and retried like a dropped connection (as the OpenAI SDKs do), its
    ///   error [`LlmError::Timeout`].
    /// - HTTP 429, HTTP 5xx, connection failures and timed-out attempts are retried up
    ///   to `max_retries` times, waiting `Retry-After` (capped by `max_retry_wait`) or
    ///   exponential backoff from `retry_base_delay`; when all attempts fail the result
    ///   is [`LlmError::RetriesExhausted`] with the last attempt's error
    ///   ([`LlmError::is_timeout`] when it timed out). Other statuses end the call with
    ///   [`LlmError::Http`].
    /// - A `response_schema` is sent as `response_format: json_schema` only when the
    ///   request has no tools. If the endpoint answers HTTP 400/422 with a body that
    ///   mentions `response_format`, `json_schema` or `grammar`, the same request is
    ///   sent once more without it and the client remembers, for all later calls,
    ///   that this endpoint lacks structured outputs. (Matching the body text is the
    ///   only signal compatible servers give for this rejection.)
    /// - When `cancel` fires, the in-flight request is dropped and the result is
    ///   [`LlmError::Cancelled`], also during a wait between attempts.
    ///
    /// A reply with `finish_reason: length` is returned as is: the caller must not
    /// treat it as complete.
    ///
    /// # Errors
    /// As listed above, plus [`LlmError::Decode`] for a success body that is not a
    /// chat completion. No error text contains the API key.
    pub async fn complete(
        &self,
        request: ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<ChatReply, LlmError> {
        self.complete_observed(request, cancel, &|_, _, _| {}).await
    }

    /// [`Self::complete`], telling `on_retry` of each failed attempt that will be sent
    /// again: its number, why it failed ([`RetryCause`]) and the wait.
    ///
    /// # Errors
    /// As [`Self::complete`].
    pub async fn complete_observed(
        &self,
        request: ChatRequest,
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(u32, RetryCause, std::time::Duration) + Send + Sync),
    ) -> Result<ChatReply, LlmError> {
        let config = &self.inner.config;
        if let Some(status) = self.refused_key() {
            return Err(LlmError::Http {
                status,
                body: "the endpoint refused the API key on an earlier request; no further request was sent".to_owned(),
            });
        }
        let mut send_schema = self.sends_schema(&request);
        let mut requests = 0u32;
        let mut attempts = 0u32;
        loop {
            send_schema = send_schema && !self.structured_outputs_fell_back();
            let body = request_body(&config.model, &request, send_schema);
            requests += 1;
            attempts += 1;
            let failure = match self.attempt(&body, cancel).await {
                Ok(value) => {
                    let mut reply = parse_reply(&value, &self.inner.call_ids)
                        .map_err(|message| self.decode_error(&message, &value))?;
                    reply.usage.requests = requests;
                    reply.estimate_unreported(crate::size::json_value_len(&body));
                    reply.structured = send_schema;
                    return Ok(reply);
                }
                Err(failure) => failure,
            };
            let (error, retry_after) = match self.after_failure(failure, send_schema) {
                AfterFailure::WithoutSchema => {
                    // The rejected attempt does not count against the retry budget.
                    attempts -= 1;
                    continue;
                }
                AfterFailure::Retry(error, retry_after) => (error, retry_after),
                AfterFailure::Fail(error) => return Err(error),
            };
            if attempts > config.max_retries {
                return Err(LlmError::RetriesExhausted {
                    attempts,
                    last: Box::new(error),
                });
            }
            self.pause_before_retry(attempts, &error, retry_after, cancel, on_retry)
                .await?;
        }
    }

    /// What a failed attempt leads to: a `response_format` the endpoint rejected is
    /// dropped for the rest of the review; a retryable status or transport error is
    /// retried; anything else is final.
    fn after_failure(&self, failure: AttemptError, send_schema: bool) -> AfterFailure {
        match failure {
            AttemptError::Status(status) if send_schema && rejects_schema(&status) => {
                tracing::warn!(
                    status = status.status,
                    "endpoint rejected response_format json_schema; \
                     continuing without structured outputs"
                );
                self.inner
                    .structured_fell_back
                    .store(true, Ordering::Relaxed);
                AfterFailure::WithoutSchema
            }
            AttemptError::Status(status) => {
                self.inner.endpoint.note_status(status.status);
                let error = LlmError::Http {
                    status: status.status,
                    body: scrub(&status.body, None),
                };
                if is_retryable_status(status.status) {
                    AfterFailure::Retry(error, status.retry_after)
                } else {
                    AfterFailure::Fail(error)
                }
            }
            AttemptError::Retryable(error) => AfterFailure::Retry(error, None),
            AttemptError::Final(error) => AfterFailure::Fail(error),
        }
    }

    /// Waits before retry number `attempts` (the server's `retry_after` when it sent one,
    /// else backoff), after telling `on_retry`; a cancellation ends the wait with
    /// [`LlmError::Cancelled`].
    async fn pause_before_retry(
        &self,
        attempts: u32,
        error: &LlmError,
        retry_after: Option<std::time::Duration>,
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(u32, RetryCause, std::time::Duration) + Send + Sync),
    ) -> Result<(), LlmError> {
        let config = &self.inner.config;
        let wait = wait_before_retry(
            attempts,
            retry_after,
            config.retry_base_delay,
            config.max_retry_wait,
        );
        tracing::info!(
            reason = error.reason_code(),
            attempt = attempts,
            wait_ms = wait.as_millis() as u64,
            "model request failed; retrying"
        );
        on_retry(attempts, error.retry_cause(), wait);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(LlmError::Cancelled),
            _ = tokio::time::sleep(wait) => Ok(()),
        }
    }

    /// One attempt: answered by the exchange layer when it can, else sent; what the
    /// endpoint answers is handed to the layer. The one point every request passes.
    async fn attempt(
        &self,
        body: &Value,
        cancel: &CancellationToken,
    ) -> Result<Value, AttemptError> {
        let Some(exchanges) = &self.inner.exchanges else {
            return self.send_attempt(body, cancel).await;
        };
        let endpoint = self.inner.config.base_url.as_str();
        match exchanges.lookup(endpoint, body) {
            Lookup::Hit(Answer::Body(value)) => return Ok(value),
            Lookup::Hit(Answer::Status { status, body }) => {
                return Err(AttemptError::Status(StatusFailure {
                    status,
                    retry_after: None,
                    body,
                }));
            }
            Lookup::Refused(message) => {
                return Err(AttemptError::Final(LlmError::Replay { message }));
            }
            Lookup::Miss => {}
        }
        let outcome = self.send_attempt(body, cancel).await;
        let answer = match &outcome {
            Ok(value) => Some(Answer::Body(value.clone())),
            Err(AttemptError::Status(failure)) => Some(Answer::Status {
                status: failure.status,
                body: scrub(&failure.body, self.secret()),
            }),
            Err(_) => None,
        };
        if let Some(answer) = answer {
            exchanges.store(endpoint, body, &answer, self.secret());
        }
        outcome
    }

    /// One HTTP attempt under the per-request timeout and the cancellation token.
    async fn send_attempt(
        &self,
        body: &Value,
        cancel: &CancellationToken,
    ) -> Result<Value, AttemptError> {
        let timeout = self.inner.config.request_timeout;
        let chat = self.inner.client.chat();
        let call = chat.create_byot::<&Value, Value>(body);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(AttemptError::Final(LlmError::Cancelled)),
            outcome = tokio::time::timeout(timeout, call) => match outcome {
                Err(_) => Err(AttemptError::Retryable(LlmError::Timeout { timeout })),
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => Err(self.classify(error)),
            },
        }
    }

    fn secret(&self) -> Option<&str> {
        self.inner.config.api_key.as_deref()
    }

    fn decode_error(&self, message: &str, body: &Value) -> LlmError {
        LlmError::Decode {
            message: scrub(&format!("{message}; body: {body}"), self.secret()),
        }
    }

    fn classify(&self, error: OpenAIError) -> AttemptError {
        match error {
            OpenAIError::Boxed(boxed) => match boxed.downcast::<StatusFailure>() {
                Ok(status) => AttemptError::Status(*status),
                Err(other) => match other.downcast::<NotJson>() {
                    // A proxy's or portal's HTML page is said by its title and first
                    // line, never quoted whole.
                    Ok(not_json) => AttemptError::Final(LlmError::Decode {
                        message: scrub(
                            &format!("{not_json}: {}", summarize_error_body(&not_json.body)),
                            None,
                        ),
                    }),
                    Err(other) => AttemptError::Retryable(LlmError::Transport {
                        message: scrub(&error_chain(other.as_ref()), self.secret()),
                    }),
                },
            },
            OpenAIError::Reqwest(error) if error.is_builder() => {
                AttemptError::Final(LlmError::Config {
                    message: scrub(&error_chain(&error), self.secret()),
                })
            }
            OpenAIError::Reqwest(error) => AttemptError::Retryable(LlmError::Transport {
                message: scrub(&error_chain(&error), self.secret()),
            }),
            OpenAIError::JSONDeserialize(error, content) => AttemptError::Final(LlmError::Decode {
                message: scrub(
                    &format!("the reply is not JSON ({error}); body: {content}"),
                    self.secret(),
                ),
            }),
            OpenAIError::ApiError(api) => AttemptError::Status(StatusFailure {
                status: api.status_code.as_u16(),
                retry_after: None,
                body: scrub(&api.api_error.to_string(), self.secret()),
            }),
            other => AttemptError::Final(LlmError::Transport {
                message: scrub(&other.to_string(), self.secret()),
            }),
        }
    }
}

/// Whether a failed response is an endpoint refusing `response_format: json_schema`.
fn rejects_schema(failure: &StatusFailure) -> bool {
    if !matches!(failure.status, 400 | 422) {
        return false;
    }
    let body = failure.body.to_ascii_lowercase();
    ["response_format", "json_schema", "grammar"]
        .iter()
        .any(|needle| body.contains(needle))
}

/// `error: source: source...`, so "connection refused" is not lost behind
/// "error sending request".
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
