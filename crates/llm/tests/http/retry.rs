//! Retry policy, timeout and cancellation over real HTTP.

use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;
use vouch_llm::LlmError;
use vouch_testkit::openai::{Match, Reply, Script, ScriptedServer};

use super::{ask, client};

/// Gap between the arrivals of chat requests `a` and `b`.
fn gap(server: &ScriptedServer, a: usize, b: usize) -> Duration {
    let requests = server.chat_requests();
    requests[b]
        .arrived_at
        .duration_since(requests[a].arrived_at)
}

#[tokio::test]
async fn retry_after_seconds_is_honoured() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::status(429).header("Retry-After", "1"),
            Reply::content("ok"),
        ],
    ))
    .await;
    // Backoff without Retry-After would be 10 ms, so a ~1 s gap proves the header
    // was read.
    let reply = client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(reply.usage.requests, 2);
    let waited = gap(&server, 0, 1);
    assert!(
        waited >= Duration::from_millis(950),
        "waited only {waited:?}"
    );
}

#[tokio::test]
async fn retry_after_http_date_is_honoured() {
    let at = SystemTime::now() + Duration::from_secs(2);
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::status(503).header("Retry-After", httpdate::fmt_http_date(at)),
            Reply::content("ok"),
        ],
    ))
    .await;
    client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap();
    // The date has whole-second precision, so the wait is between 1 and 2 seconds.
    let waited = gap(&server, 0, 1);
    assert!(
        waited >= Duration::from_millis(900),
        "waited only {waited:?}"
    );
}

#[tokio::test]
async fn retry_after_is_capped_by_max_retry_wait() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::status(429).header("Retry-After", "3600"),
            Reply::content("ok"),
        ],
    ))
    .await;
    let reply = client(&server, |c| c.max_retry_wait = Duration::from_millis(300))
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    let waited = gap(&server, 0, 1);
    assert!(
        waited >= Duration::from_millis(250),
        "waited only {waited:?}"
    );
    assert!(waited < Duration::from_secs(60), "cap ignored: {waited:?}");
}

#[tokio::test]
async fn server_error_then_success() {
    let server = ScriptedServer::start(
        Script::new().on(Match::any(), [Reply::status(500), Reply::content("ok")]),
    )
    .await;
    let reply = client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(reply.usage.requests, 2);
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(vouch_testkit::openai::Rule::when(Match::any()).always(Reply::status(503))),
    )
    .await;
    let error = client(&server, |c| c.max_retries = 2)
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert!(
                matches!(**last, LlmError::Http { status: 503, .. }),
                "{last:?}"
            );
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(server.chat_requests().len(), 3);
    assert_eq!(error.reason_code(), "retries-exhausted");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = ScriptedServer::start(
        Script::new().on(Match::any(), [Reply::status(404), Reply::content("never")]),
    )
    .await;
    let error = client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Http { status: 404, .. }),
        "{error:?}"
    );
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // A port that was just free: nothing listens there any more.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = vouch_llm::EndpointConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    config.max_retries = 1;
    config.retry_base_delay = Duration::from_millis(10);
    let error = vouch_llm::ModelClient::new(config)
        .unwrap()
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    match error {
        LlmError::RetriesExhausted { attempts: 2, last } => {
            assert!(matches!(*last, LlmError::Transport { .. }), "{last:?}")
        }
        other => panic!("expected RetriesExhausted after 2 attempts, got {other:?}"),
    }
}

/// An attempt that exceeds the per-request timeout is dropped and sent again, like a
/// dropped connection: one slow reply does not fail the call.
#[tokio::test]
async fn a_timed_out_attempt_is_retried_and_the_next_answer_taken() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::content("late").delay(Duration::from_secs(30)),
            Reply::content("ok"),
        ],
    ))
    .await;
    let retried = std::sync::Mutex::new(Vec::new());
    let reply = client(&server, |c| c.request_timeout = Duration::from_millis(300))
        .complete_observed(
            ask("hi"),
            &CancellationToken::new(),
            &|attempt, cause, _| {
                retried.lock().unwrap().push((attempt, cause));
            },
        )
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(reply.usage.requests, 2);
    assert_eq!(server.chat_requests().len(), 2);
    // The progress line says the attempt timed out, not that "the request failed".
    let cause = vouch_llm::RetryCause::Timeout { ms: 300 };
    assert_eq!(*retried.lock().unwrap(), [(1, cause)]);
    assert_eq!(cause.to_string(), "no answer within 0.3s");
}

/// Timed-out attempts count against `max_retries` like any retried failure; the error
/// then says the last attempt timed out.
#[tokio::test]
async fn timeouts_are_retried_within_max_retries_then_reported() {
    let server = ScriptedServer::start(
        Script::new().rule(
            vouch_testkit::openai::Rule::when(Match::any())
                .always(Reply::content("late").delay(Duration::from_secs(30))),
        ),
    )
    .await;
    let error = client(&server, |c| {
        c.request_timeout = Duration::from_millis(200);
        c.max_retries = 2;
    })
    .complete(ask("hi"), &CancellationToken::new())
    .await
    .unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts: 3, last } => {
            assert!(matches!(**last, LlmError::Timeout { .. }), "{last:?}")
        }
        other => panic!("expected RetriesExhausted after 3 attempts, got {other:?}"),
    }
    assert!(error.is_timeout());
    assert_eq!(
        error.to_string(),
        "model request failed after 3 attempts; last error: model request timed out after 0.2s"
    );
    assert_eq!(error.requests_sent(), 3);
    assert_eq!(server.chat_requests().len(), 3);
}

#[tokio::test]
async fn cancellation_drops_the_request_promptly() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [Reply::content("late").delay(Duration::from_secs(60))],
    ))
    .await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = client(&server, |_| {})
        .complete(ask("hi"), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Cancelled), "{error:?}");
    // The reply would take 60 s; returning long before proves the request was dropped.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn cancellation_interrupts_a_retry_wait() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::status(429).header("Retry-After", "60"),
            Reply::content("never"),
        ],
    ))
    .await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = client(&server, |c| c.max_retry_wait = Duration::from_secs(120))
        .complete(ask("hi"), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Cancelled), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn already_cancelled_sends_nothing() {
    let server = ScriptedServer::start(Script::new().on(Match::any(), [Reply::content("x")])).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = client(&server, |_| {})
        .complete(ask("hi"), &cancel)
        .await
        .unwrap_err();
    assert!(error.is_cancelled());
    assert_eq!(server.request_count(), 0);
}
