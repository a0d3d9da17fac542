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
    /// `/` is ignored; see [`BaseUrl::parse`] for the forms users give.
    pub base_url: String,
    /// The key, sent as [`auth`](Self::auth) says; `None` sends no key (local servers).
    pub api_key: Option<String>,
    /// How the key is sent: `Authorization: Bearer <key>` or `api-key: <key>` (Azure).
    pub auth: AuthScheme,
    /// Extra headers sent with every request (e.g. OpenRouter's `HTTP-Referer` and
    /// `X-Title`). Names and values must be valid HTTP header text.
    pub extra_headers: Vec<(String, String)>,
    /// Query parameters sent with every request (e.g. Azure's `api-version`).
    pub query: Vec<(String, String)>,
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
            auth: AuthScheme::Bearer,
            extra_headers: Vec::new(),
            query: Vec::new(),
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
            .field("auth", &self.auth)
            .field(
                "extra_headers",
                &self
                    .extra_headers
                    .iter()
                    .map(|(n, _)| n)
                    .collect::<Vec<_>>(),
            )
            .field("query", &self.query)
            .field("model", &self.model)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("max_retry_wait", &self.max_retry_wait)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("structured_outputs", &self.structured_outputs)
            .finish()
    }
}

/// How the API key travels. Spelled `bearer` / `api-key` in manifests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
pub enum AuthScheme {
    /// `Authorization: Bearer <key>` (OpenAI and every compatible server).
    #[default]
    Bearer,
    /// `api-key: <key>` (Azure OpenAI).
    ApiKeyHeader,
}

impl AuthScheme {
    /// The manifest spelling: `bearer` or `api-key`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthScheme::Bearer => "bearer",
            AuthScheme::ApiKeyHeader => "api-key",
        }
    }

    /// The header the key is sent in.
    pub fn header_name(self) -> &'static str {
        match self {
            AuthScheme::Bearer => "authorization",
            AuthScheme::ApiKeyHeader => "api-key",
        }
    }
}

impl TryFrom<String> for AuthScheme {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl std::str::FromStr for AuthScheme {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bearer" => Ok(AuthScheme::Bearer),
            "api-key" => Ok(AuthScheme::ApiKeyHeader),
            other => Err(format!(
                "unknown auth scheme {other:?}: use \"bearer\" (Authorization: Bearer) or \"api-key\" (Azure's api-key header)"
            )),
        }
    }
}

/// A base URL as users give it, reduced to the root `/chat/completions` is appended to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl {
    /// The root, without a trailing `/` and without `/chat/completions`.
    pub root: String,
    /// The given URL ended in `/chat/completions`, which was removed.
    pub stripped_endpoint: bool,
    /// Query parameters that were part of the given URL (e.g. `?api-version=...`).
    pub query: Vec<(String, String)>,
}

impl BaseUrl {
    /// Rule: a base URL is accepted with or without a trailing `/`, with a full
    /// `…/chat/completions` endpoint URL (the suffix is removed, so requests never go
    /// to `…/chat/completions/chat/completions`), and with a query string (kept as query
    /// parameters of every request). Whether the root needs `/v1` is the endpoint
    /// check's question, not this one's: some servers (Azure deployments) have none.
    pub fn parse(given: &str) -> BaseUrl {
        let (path, query) = match given.split_once('?') {
            Some((p, q)) => (p, parse_query(q)),
            None => (given, Vec::new()),
        };
        let mut root = path.trim_end_matches('/');
        let mut stripped_endpoint = false;
        for suffix in ["/chat/completions", "/completions", "/models"] {
            if let Some(rest) = root.strip_suffix(suffix) {
                root = rest.trim_end_matches('/');
                stripped_endpoint = true;
                break;
            }
        }
        BaseUrl {
            root: root.to_owned(),
            stripped_endpoint,
            query,
        }
    }

    /// Whether the root's last path segment is a version like `v1` or `v1beta`.
    pub fn has_version_segment(&self) -> bool {
        let last = self.root.rsplit('/').next().unwrap_or_default();
        last.len() >= 2
            && last.starts_with('v')
            && last[1..].starts_with(|c: char| c.is_ascii_digit())
    }
}

fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => (pair.to_owned(), String::new()),
        })
        .collect()
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

    #[test]
    fn debug_shows_extra_header_names_only() {
        let mut config = EndpointConfig::new("http://127.0.0.1:1/v1", "m");
        config.extra_headers = vec![("X-Secret".into(), "VALUE-MARKER".into())];
        let text = format!("{config:?}");
        assert!(
            text.contains("X-Secret") && !text.contains("VALUE-MARKER"),
            "{text}"
        );
    }

    #[test]
    fn base_urls_as_users_give_them() {
        /// (given, root, stripped, query, has /vN)
        type Case<'a> = (&'a str, &'a str, bool, &'a [(&'a str, &'a str)], bool);
        let cases: &[Case] = &[
            (
                "https://api.openai.com/v1",
                "https://api.openai.com/v1",
                false,
                &[],
                true,
            ),
            (
                "https://api.openai.com/v1/",
                "https://api.openai.com/v1",
                false,
                &[],
                true,
            ),
            (
                "http://h:8000/v1/chat/completions",
                "http://h:8000/v1",
                true,
                &[],
                true,
            ),
            (
                "http://h:8000/v1/chat/completions/",
                "http://h:8000/v1",
                true,
                &[],
                true,
            ),
            (
                "http://h:8000/v1/models",
                "http://h:8000/v1",
                true,
                &[],
                true,
            ),
            ("http://h:8080", "http://h:8080", false, &[], false),
            ("http://h:8080/", "http://h:8080", false, &[], false),
            (
                "http://h/api/v1beta",
                "http://h/api/v1beta",
                false,
                &[],
                true,
            ),
            ("http://h/vault", "http://h/vault", false, &[], false),
            (
                "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
                "https://r.openai.azure.com/openai/deployments/d",
                true,
                &[("api-version", "2024-10-21")],
                false,
            ),
        ];
        for (given, root, stripped, query, versioned) in cases {
            let url = BaseUrl::parse(given);
            assert_eq!(url.root, *root, "{given}");
            assert_eq!(url.stripped_endpoint, *stripped, "{given}");
            let query: Vec<(String, String)> = query
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(url.query, query, "{given}");
            assert_eq!(url.has_version_segment(), *versioned, "{given}");
        }
    }

    #[test]
    fn auth_schemes_round_trip() {
        for scheme in [AuthScheme::Bearer, AuthScheme::ApiKeyHeader] {
            assert_eq!(scheme.as_str().parse::<AuthScheme>(), Ok(scheme));
        }
        assert!(
            "basic"
                .parse::<AuthScheme>()
                .unwrap_err()
                .contains("api-key")
        );
    }
}
