//! One HTTP exchange with a forge: auth headers, bounded retries (rate limits honour
//! `Retry-After` and reset headers; server errors are retried only for requests that are
//! safe to repeat), and errors that name what to fix.

use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::error::{ForgeError, permission_hint};
use crate::forge::{Forge, Token};

/// Retries after the first attempt.
const MAX_RETRIES: u32 = 3;
/// The longest vouch waits for a rate limit to reset before giving up.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// An authenticated HTTP client for one forge.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    forge: Forge,
    token: Token,
}

/// A successful answer.
pub(crate) struct Answer {
    pub(crate) text: String,
}

impl Answer {
    pub(crate) fn json(&self, forge: Forge, what: &str) -> Result<Value, ForgeError> {
        serde_json::from_str(&self.text).map_err(|e| ForgeError::InvalidResponse {
            forge,
            what: what.to_string(),
            detail: format!("not JSON ({e})"),
        })
    }
}

impl Http {
    pub(crate) fn new(forge: Forge, token: Token) -> Http {
        let client = reqwest::Client::builder()
            .user_agent(concat!("vouch/", env!("CARGO_PKG_VERSION")))
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        Http {
            client,
            forge,
            token,
        }
    }

    fn authorise(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let token = self.token.expose();
        match self.forge {
            Forge::Github => request
                .bearer_auth(token)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28"),
            Forge::Gitlab => request.header("PRIVATE-TOKEN", token),
            Forge::Gitea => request.header("Authorization", format!("token {token}")),
        }
    }

    /// Sends `method url` with an optional JSON body; `what` says what vouch is doing
    /// (for messages). GET, PUT and PATCH are retried on server errors; every method is
    /// retried on a rate limit (the forge did not process the request). Each attempt's
    /// outcome goes through [`next_step`].
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<Answer, ForgeError> {
        let idempotent = method != Method::POST;
        let mut attempt = 0;
        loop {
            let outcome = self.attempt(method.clone(), url, body).await;
            let step = next_step(&outcome, idempotent, attempt, now_epoch());
            match (step, outcome) {
                (Step::Done, Outcome::Answered { text, .. }) => return Ok(Answer { text }),
                (Step::Retry(wait), outcome) => {
                    attempt += 1;
                    if let Outcome::Answered { status, .. } = outcome {
                        tracing::debug!(
                            status = status.as_u16(),
                            wait_ms = wait.as_millis() as u64,
                            "forge request retried"
                        );
                    }
                    tokio::time::sleep(wait).await;
                }
                (Step::WaitTooLong(wait), _) => {
                    return Err(ForgeError::RateLimited {
                        forge: self.forge,
                        what: what.to_string(),
                        detail: format!(
                            "the limit resets in {} s, longer than vouch waits ({} s)",
                            wait.as_secs(),
                            MAX_WAIT.as_secs()
                        ),
                    });
                }
                (_, Outcome::Unsent(e)) => {
                    return Err(ForgeError::Transport {
                        forge: self.forge,
                        what: what.to_string(),
                        url: path_of(url),
                        detail: e.without_url().to_string(),
                    });
                }
                (
                    _,
                    Outcome::Answered {
                        status,
                        headers,
                        text,
                    },
                ) => {
                    let limited = rate_limited(status, &headers);
                    return Err(self.error(status, limited, &headers, &text, url, what, attempt));
                }
            }
        }
    }

    /// One request and its whole answer, or the transport error that kept it from one.
    async fn attempt(&self, method: Method, url: &str, body: Option<&Value>) -> Outcome {
        let mut request = self.authorise(self.client.request(method, url));
        if let Some(b) = body {
            request = request.json(b);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status();
                let headers = response.headers().clone();
                let text = response.text().await.unwrap_or_default();
                Outcome::Answered {
                    status,
                    headers,
                    text,
                }
            }
            Err(e) => Outcome::Unsent(e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn error(
        &self,
        status: StatusCode,
        limited: bool,
        headers: &HeaderMap,
        text: &str,
        url: &str,
        what: &str,
        attempts: u32,
    ) -> ForgeError {
        let forge = self.forge;
        let what = what.to_string();
        let detail = message_of(text);
        if limited {
            let reset = rate_limit_wait(headers, now_epoch())
                .map(|w| format!(" (resets in {} s)", w.as_secs()))
                .unwrap_or_default();
            return ForgeError::RateLimited {
                forge,
                what,
                detail: format!(
                    "HTTP {} after {} attempt(s){reset}: {detail}",
                    status.as_u16(),
                    attempts + 1
                ),
            };
        }
        match status.as_u16() {
            401 => ForgeError::Unauthorized {
                forge,
                var: self.token.source.clone(),
                what,
            },
            403 => ForgeError::Forbidden {
                forge,
                var: self.token.source.clone(),
                what,
                detail,
                hint: permission_hint(forge),
            },
            404 => ForgeError::NotFound {
                forge,
                what,
                url: path_of(url),
            },
            s @ (400 | 409 | 422) => ForgeError::Rejected {
                forge,
                what,
                status: s,
                detail,
            },
            s => ForgeError::Status {
                forge,
                what,
                status: s,
                detail,
            },
        }
    }
}

/// What one attempt came to.
enum Outcome {
    /// No answer: the connection failed or timed out, or the request could not be sent.
    Unsent(reqwest::Error),
    /// The forge answered, successfully or not.
    Answered {
        status: StatusCode,
        headers: HeaderMap,
        text: String,
    },
}

/// What `send` does after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A successful answer: return it.
    Done,
    /// Wait this long, then try again.
    Retry(Duration),
    /// A rate limit that resets later than vouch waits ([`MAX_WAIT`]).
    WaitTooLong(Duration),
    /// Give up with the error this outcome is.
    Fail,
}

/// The retry rule: a success is done; while fewer than [`MAX_RETRIES`] retries were
/// made, a connection failure or timeout of a request safe to repeat is retried after
/// the back-off, a rate limit (any method) after the wait it asks for (a wait longer
/// than [`MAX_WAIT`], or one it does not state in seconds, ends the retries), and a
/// server error of a request safe to repeat after the back-off; everything else fails.
fn next_step(outcome: &Outcome, idempotent: bool, attempt: u32, now: u64) -> Step {
    let retries_left = attempt < MAX_RETRIES;
    match outcome {
        Outcome::Unsent(e) if idempotent && retries_left && (e.is_connect() || e.is_timeout()) => {
            Step::Retry(backoff(attempt + 1))
        }
        Outcome::Unsent(_) => Step::Fail,
        Outcome::Answered { status, .. } if status.is_success() => Step::Done,
        Outcome::Answered {
            status, headers, ..
        } => answered_step(*status, headers, idempotent, attempt, now),
    }
}

/// [`next_step`] for an unsuccessful answer.
fn answered_step(
    status: StatusCode,
    headers: &HeaderMap,
    idempotent: bool,
    attempt: u32,
    now: u64,
) -> Step {
    let limited = rate_limited(status, headers);
    if attempt >= MAX_RETRIES || !(limited || (idempotent && status.is_server_error())) {
        return Step::Fail;
    }
    let wait = if limited {
        rate_limit_wait(headers, now)
    } else {
        Some(backoff(attempt + 1))
    };
    match wait {
        Some(wait) if wait <= MAX_WAIT => Step::Retry(wait),
        Some(wait) => Step::WaitTooLong(wait),
        None => Step::Fail,
    }
}

/// A 429, or a 403 that says it is a rate limit (GitHub's secondary limits and
/// exhausted quotas: `Retry-After`, or `x-ratelimit-remaining: 0`).
fn rate_limited(status: StatusCode, headers: &HeaderMap) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::FORBIDDEN
            && (headers.contains_key("retry-after")
                || header(headers, "x-ratelimit-remaining").as_deref() == Some("0")))
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
}

/// How long a rate limit asks to wait: `Retry-After` (seconds or an HTTP date), else the
/// reset time (`x-ratelimit-reset` or `ratelimit-reset`, epoch seconds), else one second.
pub(crate) fn rate_limit_wait(headers: &HeaderMap, now: u64) -> Option<Duration> {
    if let Some(v) = header(headers, "retry-after") {
        if let Ok(secs) = v.parse::<u64>() {
            return Some(Duration::from_secs(secs));
        }
        return None;
    }
    for name in ["x-ratelimit-reset", "ratelimit-reset"] {
        if let Some(reset) = header(headers, name).and_then(|v| v.parse::<u64>().ok()) {
            return Some(Duration::from_secs(reset.saturating_sub(now)));
        }
    }
    Some(Duration::from_secs(1))
}

fn now_epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250 * 2u64.pow(attempt.min(4)))
}

/// The URL without its query (never carries a token anyway: tokens go in headers).
fn path_of(url: &str) -> String {
    url.split('?').next().unwrap_or(url).to_string()
}

/// The forge's error message: `message` (GitHub, GitLab, Gitea), `error`, GitHub's
/// `errors[].message`, bounded to 300 characters.
fn message_of(text: &str) -> String {
    let msg = match serde_json::from_str::<Value>(text) {
        Ok(v) => {
            let mut parts = Vec::new();
            for key in ["message", "error"] {
                match v.get(key) {
                    Some(Value::String(s)) => parts.push(s.clone()),
                    Some(other @ (Value::Object(_) | Value::Array(_))) => {
                        parts.push(other.to_string())
                    }
                    _ => {}
                }
            }
            if let Some(errors) = v.get("errors").and_then(Value::as_array) {
                for e in errors {
                    match e {
                        Value::String(s) => parts.push(s.clone()),
                        other => parts.push(
                            other
                                .get("message")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                                .unwrap_or_else(|| other.to_string()),
                        ),
                    }
                }
            }
            parts.join("; ")
        }
        Err(_) => text.trim().to_string(),
    };
    let msg: String = msg.chars().filter(|c| !c.is_control()).take(300).collect();
    if msg.is_empty() {
        "no message".into()
    } else {
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn rate_limit_wait_table() {
        let cases: Vec<(HeaderMap, Option<u64>)> = vec![
            (headers(&[("retry-after", "7")]), Some(7)),
            (
                headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
                None,
            ),
            (headers(&[("x-ratelimit-reset", "1030")]), Some(30)),
            (headers(&[("ratelimit-reset", "1005")]), Some(5)),
            (headers(&[("x-ratelimit-reset", "900")]), Some(0)),
            (headers(&[]), Some(1)),
        ];
        for (h, want) in cases {
            assert_eq!(
                rate_limit_wait(&h, 1000).map(|d| d.as_secs()),
                want,
                "{h:?}"
            );
        }
    }

    #[test]
    fn when_an_answer_is_retried() {
        let answered = |status: u16, pairs: &[(&'static str, &str)]| Outcome::Answered {
            status: StatusCode::from_u16(status).unwrap(),
            headers: headers(pairs),
            text: String::new(),
        };
        let secs = |s: u64| Duration::from_secs(s);
        // (outcome, idempotent, retries made, step)
        let cases = [
            (answered(200, &[]), false, 0, Step::Done),
            (answered(201, &[]), true, MAX_RETRIES, Step::Done),
            (answered(502, &[]), true, 0, Step::Retry(backoff(1))),
            (answered(502, &[]), true, 2, Step::Retry(backoff(3))),
            (answered(502, &[]), true, MAX_RETRIES, Step::Fail),
            (answered(502, &[]), false, 0, Step::Fail),
            (
                answered(429, &[("retry-after", "2")]),
                false,
                0,
                Step::Retry(secs(2)),
            ),
            (
                answered(429, &[("retry-after", "2")]),
                true,
                MAX_RETRIES,
                Step::Fail,
            ),
            (
                answered(429, &[("retry-after", "61")]),
                true,
                0,
                Step::WaitTooLong(secs(61)),
            ),
            (
                answered(429, &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
                true,
                0,
                Step::Fail,
            ),
            (
                answered(
                    403,
                    &[
                        ("x-ratelimit-remaining", "0"),
                        ("x-ratelimit-reset", "1010"),
                    ],
                ),
                false,
                1,
                Step::Retry(secs(10)),
            ),
            (answered(403, &[]), true, 0, Step::Fail),
            (answered(404, &[]), true, 0, Step::Fail),
            (answered(422, &[]), false, 0, Step::Fail),
        ];
        for (outcome, idempotent, attempt, want) in cases {
            let Outcome::Answered { status, .. } = &outcome else {
                unreachable!()
            };
            let status = *status;
            assert_eq!(
                next_step(&outcome, idempotent, attempt, 1000),
                want,
                "{status} idempotent={idempotent} attempt={attempt}"
            );
        }
    }

    #[test]
    fn which_statuses_are_rate_limits() {
        assert!(rate_limited(StatusCode::TOO_MANY_REQUESTS, &headers(&[])));
        assert!(rate_limited(
            StatusCode::FORBIDDEN,
            &headers(&[("x-ratelimit-remaining", "0")])
        ));
        assert!(rate_limited(
            StatusCode::FORBIDDEN,
            &headers(&[("retry-after", "3")])
        ));
        assert!(!rate_limited(
            StatusCode::FORBIDDEN,
            &headers(&[("x-ratelimit-remaining", "12")])
        ));
        assert!(!rate_limited(StatusCode::UNAUTHORIZED, &headers(&[])));
    }

    #[test]
    fn forge_messages_are_extracted_and_bounded() {
        assert_eq!(
            message_of(
                r#"{"message":"Validation Failed","errors":[{"message":"line must be part of the diff"}]}"#
            ),
            "Validation Failed; line must be part of the diff"
        );
        assert_eq!(
            message_of(r#"{"message":{"base":["x"]}}"#),
            r#"{"base":["x"]}"#
        );
        assert_eq!(message_of(""), "no message");
        assert_eq!(message_of(&"x".repeat(1000)).len(), 300);
    }
}
