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
    /// One HTTP attempt took longer than the configured per-request timeout (it is
    /// retried like a dropped connection; this is the error of the last attempt).
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

    /// Why this failed attempt is retried: its status, its timeout, or else a failed
    /// connection (the only other failure the client retries).
    pub fn retry_cause(&self) -> RetryCause {
        match self {
            LlmError::Http { status, .. } => RetryCause::Status { status: *status },
            LlmError::Timeout { timeout } => RetryCause::Timeout {
                ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            },
            LlmError::RetriesExhausted { last, .. } => last.retry_cause(),
            _ => RetryCause::Connection,
        }
    }

    /// Whether the request failed because it exceeded the per-request timeout: on its
    /// only attempt, or on the last one when retries ran out.
    pub fn is_timeout(&self) -> bool {
        match self {
            LlmError::Timeout { .. } => true,
            LlmError::RetriesExhausted { last, .. } => last.is_timeout(),
            _ => false,
        }
    }
}

/// Why a failed model request is sent again (what a progress line and a progress event
/// say), from [`LlmError::retry_cause`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RetryCause {
    /// The endpoint answered with this HTTP status (429 or 5xx).
    Status {
        /// The status.
        status: u16,
    },
    /// No answer within the per-request timeout (`--timeout`, `request_timeout_secs`).
    Timeout {
        /// The timeout that elapsed, in milliseconds.
        ms: u64,
    },
    /// The connection failed or was dropped before an answer.
    Connection,
}

impl std::fmt::Display for RetryCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetryCause::Status { status } => write!(f, "HTTP {status}"),
            RetryCause::Timeout { ms } => {
                write!(f, "no answer within {}s", *ms as f64 / 1000.0)
            }
            RetryCause::Connection => f.write_str("the connection failed"),
        }
    }
}

/// Redacts `secret` ([`redact`]), then keeps at most [`BODY_EXCERPT_CHARS`] characters
/// (redaction first, so a cut can never leave a fragment of the key).
pub(crate) fn scrub(text: &str, secret: Option<&str>) -> String {
    let redacted = redact(text, secret);
    match redacted.char_indices().nth(BODY_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &redacted[..cut]),
        None => redacted,
    }
}

/// A secret of at least this many characters is redacted wherever it occurs; a shorter
/// one only where it stands as a whole token (see [`redact`]).
pub const MIN_SECRET_CHARS: usize = 8;

/// What stands in a text for the key.
const REDACTED: &str = "[redacted]";

/// Rule (key redaction): a secret of [`MIN_SECRET_CHARS`] characters or more is replaced
/// by `[redacted]` wherever it occurs, also inside other text (it is the key however it
/// is surrounded). A shorter one — the placeholder a local server is given, `x` or
/// `none`, no real provider key — is replaced only where it stands as a whole token
/// (neither neighbour a letter, digit, `-` or `_`), as a server echoing its
/// `Authorization` header shows it (`Bearer x`): searched for inside words, it turned
/// `maximum` into `ma[redacted]imum` and made every provider message unreadable. No
/// secret, or an empty one, leaves the text as it is.
pub(crate) fn redact(text: &str, secret: Option<&str>) -> String {
    let Some(secret) = secret.filter(|s| !s.is_empty()) else {
        return text.to_owned();
    };
    if secret.chars().count() < MIN_SECRET_CHARS {
        return redact_tokens(text, secret);
    }
    let redacted = text.replace(secret, REDACTED);
    if redacted.contains(secret) {
        // Only a key that itself holds `[redacted]` can be formed again by the
        // replacement; such a text is not shown at all.
        return format!("{REDACTED} (the text held the API key)");
    }
    redacted
}

/// `text` with each whole-token occurrence of `secret` replaced by `[redacted]`.
fn redact_tokens(text: &str, secret: &str) -> String {
    let in_token = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (at, _) in text.match_indices(secret) {
        let end = at + secret.len();
        if at < rest
            || in_token(text[..at].chars().next_back())
            || in_token(text[end..].chars().next())
        {
            continue;
        }
        out.push_str(&text[rest..at]);
        out.push_str(REDACTED);
        rest = end;
    }
    out.push_str(&text[rest..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a retried failure is called on a progress line and in a progress event: its
    /// status, its timeout, or a failed connection; never "the request failed".
    #[test]
    fn a_retried_failure_names_its_cause() {
        let http = |status| LlmError::Http {
            status,
            body: String::new(),
        };
        let timeout = LlmError::Timeout {
            timeout: Duration::from_secs(120),
        };
        let cases = [
            (http(503), "HTTP 503", r#"{"kind":"status","status":503}"#),
            (
                timeout,
                "no answer within 120s",
                r#"{"kind":"timeout","ms":120000}"#,
            ),
            (
                LlmError::Transport {
                    message: "reset".into(),
                },
                "the connection failed",
                r#"{"kind":"connection"}"#,
            ),
        ];
        for (error, shown, wire) in cases {
            let cause = error.retry_cause();
            assert_eq!(cause.to_string(), shown);
            assert_eq!(serde_json::to_string(&cause).unwrap(), wire);
        }
        let last = LlmError::RetriesExhausted {
            attempts: 3,
            last: Box::new(http(429)),
        };
        assert_eq!(last.retry_cause(), RetryCause::Status { status: 429 });
    }

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
    fn a_key_is_redacted_where_it_is_the_key() {
        let long = "sk-test-4f1c9a";
        let cases = [
            // A short placeholder key: only whole tokens, never inside a word.
            (
                "maximum context length exceeded",
                Some("x"),
                "maximum context length exceeded",
            ),
            ("Bearer x", Some("x"), "Bearer [redacted]"),
            ("key=x, x.", Some("x"), "key=[redacted], [redacted]."),
            ("x-y x_y yx", Some("x"), "x-y x_y yx"),
            ("none of none", Some("none"), "[redacted] of [redacted]"),
            ("nonexistent", Some("none"), "nonexistent"),
            ("sk-1234 sk-12345", Some("sk-1234"), "[redacted] sk-12345"),
            // A key of the minimum length or more: everywhere, inside words too.
            ("Bearer sk-test-4f1c9a", Some(long), "Bearer [redacted]"),
            ("xsk-test-4f1c9ay", Some(long), "x[redacted]y"),
            (
                "12345678 and a12345678",
                Some("12345678"),
                "[redacted] and a[redacted]",
            ),
            ("aaaaaaaaaa", Some("aaaaaaaa"), "[redacted]aa"),
            // A key holding the replacement is not formed again by it.
            (
                "a[redacted][redacted]",
                Some("[redacted]"),
                "[redacted] (the text held the API key)",
            ),
            // No key, or an empty one.
            ("Bearer x", None, "Bearer x"),
            ("Bearer x", Some(""), "Bearer x"),
        ];
        for (text, secret, want) in cases {
            assert_eq!(redact(text, secret), want, "{text:?} {secret:?}");
        }
    }

    proptest::proptest! {
        /// A secret of the minimum length or more never survives, however it is
        /// surrounded; a text that does not hold the secret comes back unchanged.
        #[test]
        fn a_long_secret_never_survives_and_other_text_is_kept(
            secret in "[a-zA-Z0-9_\\-\\[\\] .]{8,24}",
            parts in proptest::collection::vec("[a-zA-Z0-9_\\-\\[\\] .]{0,12}", 0..6),
        ) {
            let text = parts.join(&secret);
            let out = redact(&text, Some(&secret));
            proptest::prop_assert!(!out.contains(&secret), "{text:?} -> {out:?}");
            if !text.contains(&secret) {
                proptest::prop_assert_eq!(&out, &text);
            }
        }

        /// With any secret, short ones included, a text that does not hold it is kept.
        #[test]
        fn a_text_without_the_secret_is_unchanged(
            secret in "[a-z0-9 -]{1,12}",
            text in "[a-z0-9 .-]{0,60}",
        ) {
            proptest::prop_assume!(!text.contains(&secret));
            proptest::prop_assert_eq!(redact(&text, Some(&secret)), text);
        }
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
