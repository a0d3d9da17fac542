//! `response_format: json_schema`: only on tool-free turns, and the fallback when an
//! endpoint rejects it.

use serde_json::json;
use tokio_util::sync::CancellationToken;
use vouch_llm::{AgentRequest, Budget, LlmError, ResponseSchema, run_agent};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};

use super::{RepoTools, ask, client};

fn schema() -> ResponseSchema {
    ResponseSchema {
        name: "review_result".into(),
        schema: json!({
            "type": "object",
            "properties": {"findings": {"type": "array", "maxItems": 5}},
            "required": ["findings"],
            "additionalProperties": false,
        }),
    }
}

#[tokio::test]
async fn schema_is_sent_on_tool_free_runs() {
    let server = ScriptedServer::start(
        Script::new().on(Match::any(), [Reply::content(r#"{"findings": []}"#)]),
    )
    .await;
    let outcome = run_agent(
        &client(&server, |_| {}),
        AgentRequest::new("s", "u", CancellationToken::new()).with_response_schema(schema()),
    )
    .await
    .unwrap();
    assert!(outcome.structured);
    let request = &server.chat_requests()[0];
    assert!(!request.has_tools());
    assert_eq!(
        request.response_format(),
        Some(&json!({
            "type": "json_schema",
            "json_schema": {"name": "review_result", "strict": true, "schema": schema().schema},
        }))
    );
}

#[tokio::test]
async fn schema_is_never_sent_with_tools_but_is_on_forced_synthesis() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(
                Rule::when(Match::has_tools(true))
                    .always(Reply::tool_call("grep", r#"{"path":"."}"#)),
            )
            .on(
                Match::has_tools(false),
                [Reply::content(r#"{"findings": []}"#)],
            ),
    )
    .await;
    let tools = RepoTools::default();
    let outcome = run_agent(
        &client(&server, |_| {}),
        AgentRequest::new("s", "u", CancellationToken::new())
            .with_tools(&tools)
            .with_response_schema(schema())
            .with_budget(Budget {
                max_turns: 2,
                ..Budget::default()
            }),
    )
    .await
    .unwrap();
    assert!(outcome.forced_synthesis && outcome.structured);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    for tool_turn in &requests[..2] {
        assert!(tool_turn.has_tools());
        assert_eq!(tool_turn.response_format(), None);
    }
    assert!(!requests[2].has_tools());
    assert!(requests[2].response_format().is_some());
}

#[tokio::test]
async fn rejected_schema_falls_back_once_and_is_remembered() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(
                Rule::when(Match::has_response_format(true)).named("with schema").reply(Reply::raw(
                    400,
                    r#"{"error":{"message":"'response_format' of type 'json_schema' is not supported","type":"invalid_request_error"}}"#,
                )),
            )
            .rule(
                Rule::when(Match::has_response_format(false))
                    .named("plain")
                    .always(Reply::content(r#"{"findings": []}"#)),
            ),
    )
    .await;
    let client = client(&server, |_| {});
    let with_schema = || vouch_llm::ChatRequest {
        response_schema: Some(schema()),
        ..ask("review")
    };
    assert!(!client.structured_outputs_fell_back());

    let first = client
        .complete(with_schema(), &CancellationToken::new())
        .await
        .unwrap();
    assert!(!first.structured);
    assert_eq!(first.usage.requests, 2);
    assert!(client.structured_outputs_fell_back());

    let second = client
        .complete(with_schema(), &CancellationToken::new())
        .await
        .unwrap();
    assert!(!second.structured);
    assert_eq!(second.usage.requests, 1);

    let labels: Vec<_> = server
        .chat_requests()
        .iter()
        .map(|r| r.rule_label().unwrap().to_owned())
        .collect();
    assert_eq!(labels, vec!["with schema", "plain", "plain"]);
    // Clones share what was learned about the endpoint.
    assert!(client.clone().structured_outputs_fell_back());
}

#[tokio::test]
async fn unrelated_400_is_an_error_not_a_fallback() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [Reply::raw(
            400,
            r#"{"error":{"message":"context length exceeded"}}"#,
        )],
    ))
    .await;
    let client = client(&server, |_| {});
    let error = client
        .complete(
            vouch_llm::ChatRequest {
                response_schema: Some(schema()),
                ..ask("review")
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    match error {
        LlmError::Http { status: 400, body } => assert!(body.contains("context length"), "{body}"),
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    assert!(!client.structured_outputs_fell_back());
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn structured_outputs_can_be_disabled_per_endpoint() {
    let server =
        ScriptedServer::start(Script::new().on(Match::any(), [Reply::content("{}")])).await;
    let reply = client(&server, |c| c.structured_outputs = false)
        .complete(
            vouch_llm::ChatRequest {
                response_schema: Some(schema()),
                ..ask("review")
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(!reply.structured);
    assert_eq!(server.chat_requests()[0].response_format(), None);
}
