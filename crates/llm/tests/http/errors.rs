//! Error texts never carry the API key; requests carry it only in `Authorization`.

use tokio_util::sync::CancellationToken;
use vouch_llm::{EndpointConfig, LlmError, ModelClient};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};

use super::{ask, client};

const MARKER: &str = "sk-vouch-test-MARKER-4f1c9a";

fn assert_no_marker(error: &LlmError) {
    let display = error.to_string();
    let debug = format!("{error:?}");
    assert!(!display.contains(MARKER), "key in Display: {display}");
    assert!(!debug.contains(MARKER), "key in Debug: {debug}");
    assert!(
        !display.contains("MARKER"),
        "key fragment in Display: {display}"
    );
}

#[tokio::test]
async fn api_key_never_appears_in_errors() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(Rule::when(Match::user_contains("unauthorized")).always(Reply::echo_request(401)))
            .rule(Rule::when(Match::user_contains("server")).always(Reply::echo_request(500)))
            .rule(Rule::when(Match::user_contains("decode")).always(Reply::echo_request(200))),
    )
    .await;
    let client = client(&server, |c| c.api_key = Some(MARKER.to_owned()));
    let cancel = CancellationToken::new();

    let server_error = client.complete(ask("server"), &cancel).await.unwrap_err();
    assert!(
        matches!(server_error, LlmError::RetriesExhausted { .. }),
        "{server_error:?}"
    );
    assert_no_marker(&server_error);

    let decode = client.complete(ask("decode"), &cancel).await.unwrap_err();
    assert!(matches!(decode, LlmError::Decode { .. }), "{decode:?}");
    assert_no_marker(&decode);

    // Last: after a refusal the client sends nothing more (see `refusal_stops_every_client`).
    let unauthorized = client
        .complete(ask("unauthorized"), &cancel)
        .await
        .unwrap_err();
    assert!(
        matches!(unauthorized, LlmError::Http { status: 401, .. }),
        "{unauthorized:?}"
    );
    assert_no_marker(&unauthorized);
    // The echoed header is still in the kept body, redacted: the test would see a leak.
    // The message says only what the provider's error says.
    assert!(
        unauthorized
            .response_body()
            .is_some_and(|body| body.contains("Bearer [redacted]")),
        "{unauthorized:?}"
    );
    assert_eq!(
        unauthorized.to_string(),
        "model endpoint answered HTTP 401: echo"
    );

    // The key was really sent, so the assertions above could have failed.
    let sent = server.chat_requests()[0]
        .header("authorization")
        .unwrap()
        .to_owned();
    assert_eq!(sent, format!("Bearer {MARKER}"));
    assert!(!format!("{client:?}").contains(MARKER));
    assert!(!format!("{:?}", client.config()).contains(MARKER));
}

#[tokio::test]
async fn no_key_sends_no_authorization_header() {
    let server =
        ScriptedServer::start(Script::new().on(Match::any(), [Reply::content("ok")])).await;
    client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(server.chat_requests()[0].header("authorization"), None);
    assert_eq!(server.chat_requests()[0].body["model"], "test-model");
}

#[tokio::test]
async fn non_json_success_body_is_a_decode_error() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [Reply::raw(
            200,
            "<html><head><title>Sign in</title></head><body><p>proxy</p></body></html>",
        )],
    ))
    .await;
    let error = client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Decode { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "could not read the model endpoint's reply: the reply body is not JSON: \
         an HTML page: \"Sign in\" — proxy"
    );
}

#[test]
fn key_that_is_not_a_header_value_is_a_config_error_without_the_key() {
    let config = EndpointConfig::new("http://127.0.0.1:1/v1", "m").with_api_key("sk-MARKER\nbad");
    let error = ModelClient::new(config).unwrap_err();
    assert!(matches!(error, LlmError::Config { .. }));
    assert!(!error.to_string().contains("MARKER"));
}

#[tokio::test]
async fn unusable_base_url_is_a_config_error_not_retried() {
    let error = ModelClient::new(EndpointConfig::new("not a url", "m"))
        .unwrap()
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Config { .. }), "{error:?}");
}

/// A gateway's HTML error page is said by its status, title and first line of text, a
/// provider's JSON error by its message and code; the raw body is kept, bounded, for
/// the failure's detail, and never quoted in the message.
#[tokio::test]
async fn error_bodies_are_summarised_and_kept_bounded() {
    let padding = "<!-- filler -->".repeat(100);
    let nginx = format!(
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>{padding}"
    );
    let provider = r#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let server = ScriptedServer::start(
        Script::new()
            .rule(Rule::when(Match::user_contains("gateway")).always(Reply::raw(404, nginx)))
            .rule(Rule::when(Match::user_contains("quota")).always(Reply::raw(403, provider))),
    )
    .await;
    let client = client(&server, |_| {});
    let cancel = CancellationToken::new();

    let gateway = client.complete(ask("gateway"), &cancel).await.unwrap_err();
    assert_eq!(
        gateway.to_string(),
        "model endpoint answered HTTP 404: an HTML page: \"502 Bad Gateway\" — nginx"
    );
    let body = gateway.response_body().expect("the body is kept");
    assert!(body.starts_with("<html>"), "{body}");
    assert_eq!(
        body.chars().count(),
        vouch_llm::BODY_EXCERPT_CHARS + 1,
        "bounded, with its ellipsis"
    );

    let quota = client.complete(ask("quota"), &cancel).await.unwrap_err();
    assert_eq!(
        quota.to_string(),
        "model endpoint answered HTTP 403: You exceeded your current quota. (code: insufficient_quota)"
    );
    assert_eq!(quota.response_body(), Some(provider));
}

/// A local server's placeholder key (`x`) is redacted where it stands as the key
/// (`Bearer x` in an echoed header), never inside the provider's words: the error still
/// says "maximum context length".
#[tokio::test]
async fn a_short_placeholder_key_leaves_the_providers_words_whole() {
    let provider = r#"{"error":{"message":"This model's maximum context length is 4096 tokens.","code":"context_length_exceeded"}}"#;
    let server = ScriptedServer::start(
        Script::new()
            .rule(Rule::when(Match::user_contains("long")).always(Reply::raw(400, provider)))
            .rule(Rule::when(Match::user_contains("echo")).always(Reply::echo_request(401))),
    )
    .await;
    let client = client(&server, |c| c.api_key = Some("x".to_owned()));
    let cancel = CancellationToken::new();
    let long = client.complete(ask("long"), &cancel).await.unwrap_err();
    assert_eq!(
        long.to_string(),
        "model endpoint answered HTTP 400: This model's maximum context length is 4096 tokens. (code: context_length_exceeded)"
    );
    assert_eq!(long.response_body(), Some(provider));
    let echoed = client.complete(ask("echo"), &cancel).await.unwrap_err();
    let body = echoed.response_body().expect("the body is kept");
    assert!(body.contains("Bearer [redacted]"), "{body}");
    assert!(!body.contains("Bearer x"), "{body}");
}
