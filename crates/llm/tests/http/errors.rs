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
    // The echoed header is still visible, redacted: the test would see a leak.
    assert!(
        unauthorized.to_string().contains("Bearer [redacted]"),
        "{unauthorized}"
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
    let server = ScriptedServer::start(
        Script::new().on(Match::any(), [Reply::raw(200, "<html>proxy</html>")]),
    )
    .await;
    let error = client(&server, |_| {})
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Decode { .. }), "{error:?}");
    assert!(error.to_string().contains("proxy"), "{error}");
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
