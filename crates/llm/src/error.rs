//! Errors of model access.

use std::time::Duration;

/// Why a chat completion (or an agent run) failed.
///
/// No variant's text ever contains the endpoint's API key: bodies and transport
/// messages are scrubbed before they are stored (see [`crate::client`]). Body excerpts
/// are bounded to [`BODY_EXCERPT_CHARS`] characters.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The caller's cancellation token fired; the in-flight request was dropped.
    #[error("model request cancelled")]
    Cancelled,
    /// One HTTP attempt took longer than the configured per-request timeout.
    #[error("model request timed out after {}s", timeout.as_secs_f64())]
    Timeout {
        /// The per-request timeout that elapsed.
        timeout: Duration,
    },
    /// The endpoint answered with a non-success HTTP status. The message says what the
    /// body says in one line ([`crate::summarize_error_body`]: a provider's
    /// `error.message` and `code`, an HTML page's title and first line of text); the
    /// body itself stays here, bounded, for the failure's detail.
    #[error(
        "model endpoint answered HTTP {status}: {}",
        crate::summarize_error_body(body)
    )]
    Http {
        /// HTTP status code.
        status: u16,
        /// Start of the response body (at most [`BODY_EXCERPT_CHARS`] characters), API
        /// key redacted.
        body: String,
    },
    /// Every allowed attempt failed with a retryable error.
    #[error("model request failed after {attempts} attempts; last error: {last}")]
    RetriesExhausted {
        /// Attempts made (first attempt plus retries).
        attempts: u32,
        /// The error of the last attempt.
        last: Box<LlmError>,
    },
    /// The endpoint could not be reached or the connection broke.
    #[error("could not reach the model endpoint: {message}")]
    Transport {
        /// Transport error chain, API key redacted.
        message: String,
    },
    /// The reply was not a chat completion this client can read.
    #[error("could not read the model endpoint's reply: {message}")]
    Decode {
        /// What was wrong, with a body excerpt, API key redacted.
        message: String,
    },
    /// A replay met a request its recording does not hold; nothing was sent.
    #[error("{message}")]
    Replay {
        /// The request and its difference from the closest recorded one.
        message: String,
    },
    /// The endpoint configuration is unusable (e.g. the key is not a valid header value).
    #[error("invalid model endpoint configuration: {message}")]
    Config {
        /// What is wrong (never the key itself).
        message: String,
    },
}

/// Maximum characters of a response body kept in an error.
pub const BODY_EXCERPT_CHARS: usize = 600;

impl LlmError {
    /// A stable, allowlisted reason code for structured diagnostics (never paths,
    /// prompts or provider text): `cancelled`, `timeout`, `http-4xx`, `http-429`,
    /// `http-5xx`, `retries-exhausted`, `transport`, `decode`, `config`, `replay`.
    pub fn reason_code(&self) -> &'static str {
        match self {
            LlmError::Cancelled => "cancelled",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Http { status: 429, .. } => "http-429",
            LlmError::Http { status, .. } if *status >= 500 => "http-5xx",
            LlmError::Http { .. } => "http-4xx",
            LlmError::RetriesExhausted { .. } => "retries-exhausted",
            LlmError::Transport { .. } => "transport",
            LlmError::Decode { .. } => "decode",
            LlmError::Config { .. } => "config",
            LlmError::Replay { .. } => "replay",
        }
    }

    /// HTTP requests the failed completion sent: every attempt when retries ran out, one
    /// for an error of a single attempt, none when nothing was sent (cancelled before,
    /// configuration, a replay that had no recording).
    pub fn requests_sent(&self) -> u32 {
        match self {
            LlmError::Cancelled | LlmError::Config { .. } | LlmError::Replay { .. } => 0,
            LlmError::RetriesExhausted { attempts, .. } => *attempts,
            LlmError::Timeout { .. }
            | LlmError::Http { .. }
            | LlmError::Transport { .. }
            | LlmError::Decode { .. } => 1,
        }
    }

    /// The (bounded, redacted) body of the HTTP answer behind this error, for a
    /// failure's detail: its message only summarises it.
    pub fn response_body(&self) -> Option<&str> {
        match self {
            LlmError::Http { body, .. } => Some(body),
            LlmError::RetriesExhausted { last, .. } => last.response_body(),
            _ => None,
        }
    }

    /// Whether the caller's cancellation caused this error.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, LlmError::Cancelled)
    }
}

/// Replaces every occurrence of `secret` in `text` by `[redacted]`, then keeps at most
/// [`BODY_EXCERPT_CHARS`] characters (redaction first, so a cut can never leave a
/// fragment of the key).
pub(crate) fn scrub(text: &str, secret: Option<&str>) -> String {
    let redacted = match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    };
    match redacted.char_indices().nth(BODY_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &redacted[..cut]),
        None => redacted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_redacts_before_truncating() {
        let key = "k".repeat(20);
        let text = format!("{}{key}", "x".repeat(BODY_EXCERPT_CHARS - 5));
        let out = scrub(&text, Some(&key));
        assert!(!out.contains("kkkkk"), "{out}");
        assert!(out.ends_with('…'));
    }

    #[test]
    fn scrub_keeps_short_text_and_handles_no_key() {
        assert_eq!(scrub("hello", None), "hello");
        assert_eq!(scrub("Bearer abc", Some("abc")), "Bearer [redacted]");
        assert_eq!(scrub("abc", Some("")), "abc");
    }

    #[test]
    fn reason_codes() {
        let http = |status| LlmError::Http {
            status,
            body: String::new(),
        };
        assert_eq!(http(429).reason_code(), "http-429");
        assert_eq!(http(503).reason_code(), "http-5xx");
        assert_eq!(http(400).reason_code(), "http-4xx");
        assert_eq!(LlmError::Cancelled.reason_code(), "cancelled");
    }
}
