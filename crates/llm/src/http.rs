//! The HTTP layer under async-openai: endpoint config and the tower service vouch
//! installs in place of async-openai's default (which retries on its own and hides
//! the status and headers of failed responses).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use async_openai::config::Config;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde::de::IgnoredAny;

use crate::error::LlmError;
use crate::retry::{parse_retry_after, parse_retry_after_ms};

/// async-openai [`Config`] for one endpoint: base URL and optional bearer key. Unlike
/// `OpenAIConfig` it reads no environment variables (the host owns precedence) and
/// sends no `Authorization` header without a key.
#[derive(Clone)]
pub(crate) struct EndpointAuth {
    api_base: String,
    api_key: SecretString,
    authorization: Option<HeaderValue>,
}

impl EndpointAuth {
    /// Validates that the key can be sent as a header value; the error never
    /// contains the key.
    pub(crate) fn new(base_url: &str, api_key: Option<&str>) -> Result<Self, LlmError> {
        let authorization = match api_key {
            None => None,
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    LlmError::Config {
                        message: "the API key contains characters not allowed in an HTTP header"
                            .to_owned(),
                    }
                })?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        Ok(EndpointAuth {
            api_base: base_url.trim_end_matches('/').to_owned(),
            api_key: SecretString::from(api_key.unwrap_or_default().to_owned()),
            authorization,
        })
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
        let mut headers = HeaderMap::new();
        if let Some(value) = &self.authorization {
            headers.insert(AUTHORIZATION, value.clone());
        }
        headers
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.api_base, path)
    }

    fn query(&self) -> Vec<(&str, &str)> {
        Vec::new()
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
}

impl CapturingService {
    pub(crate) fn new(http: reqwest::Client, secret: Option<&str>) -> Self {
        CapturingService {
            http,
            secret: secret.map(|s| Arc::new(SecretString::from(s.to_owned()))),
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
        Box::pin(async move {
            let request = factory.build().await?;
            let response = client
                .execute(request)
                .await
                .map_err(OpenAIError::Reqwest)?;
            let status = response.status();
            let headers = response.headers().clone();
            let bytes = response.bytes().await.map_err(OpenAIError::Reqwest)?;
            let redacted = || {
                let text = String::from_utf8_lossy(&bytes);
                match secret.as_deref().map(|s| s.expose_secret()) {
                    Some(key) if !key.is_empty() => text.replace(key, "[redacted]"),
                    _ => text.into_owned(),
                }
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
