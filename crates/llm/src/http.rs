//! The HTTP layer under async-openai: endpoint config and the tower service vouch
//! installs in place of async-openai's default (which retries on its own and hides
//! the status and headers of failed responses).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use async_openai::config::Config;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde::de::IgnoredAny;

use crate::config::{AuthScheme, BaseUrl, EndpointConfig};
use crate::error::LlmError;
use crate::retry::{parse_retry_after, parse_retry_after_ms};

/// async-openai [`Config`] for one endpoint: base URL, the key in the header its
/// [`AuthScheme`] names, extra headers and query parameters. Unlike `OpenAIConfig` it
/// reads no environment variables (the host owns precedence) and sends no key header
/// without a key.
#[derive(Clone)]
pub(crate) struct EndpointAuth {
    api_base: String,
    api_key: SecretString,
    headers: HeaderMap,
    query: Vec<(String, String)>,
}

impl EndpointAuth {
    /// Validates that the key and the extra headers can be sent as header text; the
    /// error never contains the key or a header's value.
    pub(crate) fn new(config: &EndpointConfig) -> Result<Self, LlmError> {
        let base = BaseUrl::parse(&config.base_url);
        let mut headers = HeaderMap::new();
        for (name, value) in &config.extra_headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| LlmError::Config {
                message: format!("the extra header name {name:?} is not a valid HTTP header name"),
            })?;
            let mut value = HeaderValue::from_str(value).map_err(|_| LlmError::Config {
                message: format!(
                    "the value of the extra header {name} contains characters not allowed in an HTTP header"
                ),
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        if let Some(key) = config.api_key.as_deref() {
            let text = match config.auth {
                AuthScheme::Bearer => format!("Bearer {key}"),
                AuthScheme::ApiKeyHeader => key.to_owned(),
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| LlmError::Config {
                message: "the API key contains characters not allowed in an HTTP header".to_owned(),
            })?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static(config.auth.header_name()), value);
        }
        let mut query = base.query;
        query.extend(config.query.iter().cloned());
        Ok(EndpointAuth {
            api_base: base.root,
            api_key: SecretString::from(config.api_key.clone().unwrap_or_default()),
            headers,
            query,
        })
    }

    /// The full URL of `path` (e.g. `/models`) with the query parameters.
    pub(crate) fn url_with_query(&self, path: &str) -> String {
        let mut url = format!("{}{}", self.api_base, path);
        for (i, (k, v)) in self.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(k);
            url.push('=');
            url.push_str(v);
        }
        url
    }

    /// The root requests are sent under (no trailing `/`, no `/chat/completions`).
    pub(crate) fn root(&self) -> &str {
        &self.api_base
    }

    /// Key and extra headers, as sent with every request.
    pub(crate) fn header_map(&self) -> HeaderMap {
        self.headers.clone()
    }
}

impl fmt::Debug for EndpointAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointAuth")
            .field("api_base", &self.api_base)
            .finish_non_exhaustive()
    }
}

impl Config for EndpointAuth {
    fn headers(&self) -> HeaderMap {
        self.headers.clone()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.api_base, path)
    }

    fn query(&self) -> Vec<(&str, &str)> {
        self.query
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    fn api_base(&self) -> &str {
        &self.api_base
    }

    fn api_key(&self) -> &SecretString {
        &self.api_key
    }
}

/// A non-success HTTP response, captured before async-openai could discard its
/// headers. `body` is the whole body with the API key already redacted.
#[derive(Debug)]
pub(crate) struct StatusFailure {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) body: String,
}

impl fmt::Display for StatusFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)
    }
}

impl std::error::Error for StatusFailure {}

/// A success response whose body is not JSON. `body` has the API key redacted.
#[derive(Debug)]
pub(crate) struct NotJson {
    pub(crate) body: String,
}

impl fmt::Display for NotJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the reply body is not JSON")
    }
}

impl std::error::Error for NotJson {}

/// The tower service async-openai sends every request through: executes it with
/// reqwest once (no retries), turns non-success responses into [`StatusFailure`] and
/// success responses whose body is not JSON into [`NotJson`].
#[derive(Clone)]
pub(crate) struct CapturingService {
    http: reqwest::Client,
    secret: Option<Arc<SecretString>>,
    sent: Arc<AtomicU32>,
}

impl CapturingService {
    /// `sent` counts every request handed to the network, whatever its outcome.
    pub(crate) fn new(http: reqwest::Client, secret: Option<&str>, sent: Arc<AtomicU32>) -> Self {
        CapturingService {
            http,
            secret: secret.map(|s| Arc::new(SecretString::from(s.to_owned()))),
            sent,
        }
    }
}

type ResponseFuture =
    Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send + 'static>>;

impl tower::Service<HttpRequestFactory> for CapturingService {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let client = self.http.clone();
        let secret = self.secret.clone();
        let sent = self.sent.clone();
        Box::pin(async move {
            let request = factory.build().await?;
            sent.fetch_add(1, Ordering::Relaxed);
            let response = client
                .execute(request)
                .await
                .map_err(OpenAIError::Reqwest)?;
            let status = response.status();
            let headers = response.headers().clone();
            let bytes = response.bytes().await.map_err(OpenAIError::Reqwest)?;
            let redacted = || {
                let key = secret.as_deref().map(|s| s.expose_secret());
                crate::error::redact(&String::from_utf8_lossy(&bytes), key)
            };
            if !status.is_success() {
                return Err(OpenAIError::Boxed(Box::new(StatusFailure {
                    status: status.as_u16(),
                    retry_after: retry_after(&headers),
                    body: redacted(),
                })));
            }
            // Checked here because async-openai logs a body it cannot parse, verbatim,
            // at error level; provider text must not reach vouch's stderr.
            if serde_json::from_slice::<IgnoredAny>(&bytes).is_err() {
                return Err(OpenAIError::Boxed(Box::new(NotJson { body: redacted() })));
            }
            let mut rebuilt = http::Response::new(bytes);
            *rebuilt.status_mut() = status;
            *rebuilt.headers_mut() = headers;
            Ok(reqwest::Response::from(rebuilt))
        })
    }
}

/// The server's requested wait: `retry-after-ms` when present and valid, else
/// `Retry-After` (seconds or HTTP-date).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("retry-after-ms")
        .and_then(parse_retry_after_ms)
        .or_else(|| header("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now())))
}

/// What every client of one endpoint shares during a run: the count of requests sent
/// and whether the endpoint refused the key.
#[derive(Debug, Default)]
pub(crate) struct EndpointState {
    /// Requests handed to the network, failed ones included.
    pub(crate) sent: Arc<AtomicU32>,
    /// The status (401 or 403) of the first refused request; 0 while none was refused.
    refused: AtomicU16,
}

impl EndpointState {
    /// Remembers an authentication refusal (HTTP 401 or 403); other statuses are ignored.
    pub(crate) fn note_status(&self, status: u16) {
        if matches!(status, 401 | 403) {
            let _ = self
                .refused
                .compare_exchange(0, status, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// The status of the first refused request, if the endpoint refused the key.
    pub(crate) fn refused(&self) -> Option<u16> {
        match self.refused.load(Ordering::Relaxed) {
            0 => None,
            status => Some(status),
        }
    }
}
