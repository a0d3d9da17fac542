//! Endpoint configuration: where to send chat completions and how patiently.

use std::fmt;
use std::time::Duration;

/// One OpenAI-compatible endpoint and the retry/timeout policy vouch applies to it.
///
/// The API key is never printed: `Debug` shows `api_key: Some("[redacted]")`, and
/// every error text produced by the client has the key replaced by `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// Base URL up to and including the API version, e.g. `https://api.openai.com/v1`
    /// or `http://127.0.0.1:8080/v1`; `/chat/completions` is appended. A trailing
    /// `/` is ignored.
    pub base_url: String,
    /// Bearer token sent as `Authorization: Bearer <key>`; `None` sends no
    /// `Authorization` header (local servers).
    pub api_key: Option<String>,
    /// Model name sent in every request's `model` field.
    pub model: String,
    /// Limit on one HTTP attempt (connect, send, wait, read the body). A timed-out
    /// attempt is not retried: it ends the call with `LlmError::Timeout`.
    pub request_timeout: Duration,
    /// Extra attempts after the first for retryable failures (HTTP 429, HTTP 5xx,
    /// connection errors). `0` means a single attempt.
    pub max_retries: u32,
    /// Upper bound on any single wait between attempts, including waits asked for
    /// by `Retry-After`.
    pub max_retry_wait: Duration,
    /// First backoff wait when the server gives no `Retry-After`; doubles on each
    /// further retry (capped by `max_retry_wait`).
    pub retry_base_delay: Duration,
    /// Whether to send `response_format: json_schema` on tool-free requests that
    /// carry a schema. When the endpoint rejects it, the client falls back for the
    /// rest of the run regardless of this flag.
    pub structured_outputs: bool,
}

impl EndpointConfig {
    /// Default per-attempt timeout: 300 s (small local models on 2 cores are slow).
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
    /// Default retry count after the first attempt.
    pub const DEFAULT_MAX_RETRIES: u32 = 3;
    /// Default cap on one wait between attempts.
    pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
    /// Default first backoff wait without `Retry-After`.
    pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);

    /// A configuration for `base_url` and `model` with no API key and the default
    /// timeout, retry and structured-output settings.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EndpointConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            max_retries: Self::DEFAULT_MAX_RETRIES,
            max_retry_wait: Self::DEFAULT_MAX_RETRY_WAIT,
            retry_base_delay: Self::DEFAULT_RETRY_BASE_DELAY,
            structured_outputs: true,
        }
    }

    /// The same configuration with `api_key` set.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }
}

impl fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("max_retry_wait", &self.max_retry_wait)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("structured_outputs", &self.structured_outputs)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_the_api_key() {
        let config = EndpointConfig::new("http://127.0.0.1:1/v1", "m").with_api_key("sk-MARKER");
        let text = format!("{config:?}");
        assert!(!text.contains("sk-MARKER"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}
