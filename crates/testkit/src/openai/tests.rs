//! Tests of the scripted server: matchers (pure) and serving/recording (real HTTP).

use std::time::Duration;

use serde_json::{Value, json};

use super::{Match, Reply, Rule, Script, ScriptedServer, ServedBy};

fn body(system: &str, user: &str, tools: bool) -> Value {
    let mut body = json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": user}]},
        ],
    });
    if tools {
        body["tools"] = json!([{"type": "function", "function": {"name": "read_file"}}]);
    }
    body
}

#[test]
fn matchers_table() {
    let plain = body("generic-investigator #1", "review a.rs", false);
    let with_tools = body("verifier #1", "check candidate", true);
    let mut with_format = plain.clone();
    with_format["response_format"] = json!({"type": "json_schema"});
    let cases: Vec<(Match, &Value, bool)> = vec![
        (Match::any(), &plain, true),
        (
            Match::system_contains("generic-investigator #1"),
            &plain,
            true,
        ),
        (
            Match::system_contains("generic-investigator #2"),
            &plain,
            false,
        ),
        (Match::user_contains("review a.rs"), &plain, true),
        (Match::user_contains("generic"), &plain, false),
        (Match::any_message_contains("generic"), &plain, true),
        (Match::last_message_contains("a.rs"), &plain, true),
        (Match::last_message_role("user"), &plain, true),
        (Match::last_message_role("tool"), &plain, false),
        (Match::has_tools(true), &with_tools, true),
        (Match::has_tools(true), &plain, false),
        (Match::has_tools(false), &plain, true),
        (Match::has_response_format(true), &with_format, true),
        (Match::has_response_format(true), &plain, false),
        (Match::message_count(2), &plain, true),
        (Match::model("m"), &plain, true),
        (
            Match::system_contains("verifier").and(Match::has_tools(true)),
            &with_tools,
            true,
        ),
        (
            Match::system_contains("verifier").and(Match::has_tools(false)),
            &with_tools,
            false,
        ),
        (
            Match::system_contains("nope").or(Match::has_tools(true)),
            &with_tools,
            true,
        ),
        (Match::not(Match::has_tools(true)), &plain, true),
        (Match::all([]), &plain, true),
        (Match::any_of([]), &plain, false),
        (
            Match::custom("two messages", |b| {
                b["messages"].as_array().unwrap().len() == 2
            }),
            &plain,
            true,
        ),
    ];
    for (matcher, body, expected) in cases {
        assert_eq!(matcher.matches(body), expected, "{matcher:?}");
    }
}

async fn post(server: &ScriptedServer, body: &Value) -> (u16, Option<String>, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .header("authorization", "Bearer test-key")
        .json(body)
        .send()
        .await
        .expect("request reaches the scripted server");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, retry_after, json)
}

#[tokio::test]
async fn first_matching_rule_with_replies_serves_and_is_recorded() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(
                Rule::when(Match::system_contains("investigator"))
                    .named("inv")
                    .reply(Reply::content("first")),
            )
            .rule(
                Rule::when(Match::any())
                    .named("fallback")
                    .always(Reply::content("again")),
            ),
    )
    .await;
    let investigator = body("investigator #1", "go", false);
    let (status, _, reply) = post(&server, &investigator).await;
    assert_eq!(status, 200);
    assert_eq!(reply["choices"][0]["message"]["content"], "first");
    // The first rule is used up, so the catch-all serves the same request shape.
    let (_, _, reply) = post(&server, &investigator).await;
    assert_eq!(reply["choices"][0]["message"]["content"], "again");

    let requests = server.requests();
    assert_eq!(server.request_count(), 2);
    assert_eq!(requests[0].rule_label(), Some("inv"));
    assert_eq!(
        requests[1].served_by,
        ServedBy::Rule {
            index: 1,
            label: Some("fallback".into())
        }
    );
    assert_eq!(requests[0].header("Authorization"), Some("Bearer test-key"));
    assert_eq!(requests[0].system().as_deref(), Some("investigator #1"));
    assert_eq!(requests[0].contents_of("user"), vec!["go".to_owned()]);
    assert!(requests[0].arrived_at <= requests[1].arrived_at);
    assert!(server.unmatched().is_empty());
    assert!(server.unused_replies().is_empty());
}

#[tokio::test]
async fn unmatched_request_gets_500_and_is_recorded() {
    let server = ScriptedServer::start(
        Script::new().on(Match::system_contains("verifier"), [Reply::content("x")]),
    )
    .await;
    let (status, _, reply) = post(&server, &body("investigator", "go", false)).await;
    assert_eq!(status, 500);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("no scripted reply for request"),
        "{message}"
    );
    let unmatched = server.unmatched();
    assert_eq!(unmatched.len(), 1);
    assert_eq!(unmatched[0].served_by, ServedBy::Unmatched);
    assert_eq!(unmatched[0].status, 500);
    assert_eq!(server.unused_replies(), vec![(0, None, 1)]);
}

#[tokio::test]
async fn completion_bodies_look_like_openai() {
    let server = ScriptedServer::start(
        Script::new().on(
            Match::any(),
            [
                Reply::tool_call("read_file", r#"{"path":"a.rs"}"#)
                    .and_tool_call("grep", r#"{"pattern":"x"#)
                    .with_usage(120, 7),
                Reply::content_with_finish("partial", "length").without_usage(),
            ],
        ),
    )
    .await;
    let (_, _, first) = post(&server, &body("s", "u", true)).await;
    assert_eq!(first["object"], "chat.completion");
    assert_eq!(first["model"], "m");
    assert!(first["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(first["created"].as_u64().is_some());
    let choice = &first["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert!(choice["message"]["content"].is_null());
    let calls = choice["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "read_file");
    assert_eq!(calls[0]["function"]["arguments"], r#"{"path":"a.rs"}"#);
    // Arguments are sent verbatim, even when they are not valid JSON.
    assert_eq!(calls[1]["function"]["arguments"], r#"{"pattern":"x"#);
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    assert_eq!(
        first["usage"],
        json!({"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127})
    );

    let (_, _, second) = post(&server, &body("s", "u", false)).await;
    assert_eq!(second["choices"][0]["finish_reason"], "length");
    assert_eq!(second["choices"][0]["message"]["content"], "partial");
    assert!(second.get("usage").is_none());
}

#[tokio::test]
async fn status_replies_carry_headers_and_raw_bodies() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::status(429).header("Retry-After", "1"),
            Reply::raw(
                400,
                r#"{"error":{"message":"response_format not supported"}}"#,
            ),
            Reply::echo_request(401),
        ],
    ))
    .await;
    let request = body("s", "u", false);
    let (status, retry_after, reply) = post(&server, &request).await;
    assert_eq!((status, retry_after.as_deref()), (429, Some("1")));
    assert_eq!(reply["error"]["message"], "scripted status 429");
    let (status, _, reply) = post(&server, &request).await;
    assert_eq!(status, 400);
    assert_eq!(reply["error"]["message"], "response_format not supported");
    let (status, _, reply) = post(&server, &request).await;
    assert_eq!(status, 401);
    assert_eq!(reply["headers"]["authorization"], "Bearer test-key");
    assert_eq!(reply["body"], request);
}

#[tokio::test]
async fn delayed_reply_is_recorded_at_arrival() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [Reply::content("slow").delay(Duration::from_millis(200))],
    ))
    .await;
    let before = std::time::Instant::now();
    let (_, _, reply) = post(&server, &body("s", "u", false)).await;
    let after = std::time::Instant::now();
    assert_eq!(reply["choices"][0]["message"]["content"], "slow");
    let arrived = server.requests()[0].arrived_at;
    // Arrival is stamped before the scripted delay, so the reply came at least the
    // delay after it.
    assert!(arrived >= before);
    assert!(after.duration_since(arrived) >= Duration::from_millis(200));
}

#[tokio::test]
async fn models_route_and_unknown_routes() {
    let server = ScriptedServer::start(Script::new()).await;
    let client = reqwest::Client::new();
    let models: Value = client
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], super::SCRIPTED_MODEL);
    let status = client
        .get(format!("{}/embeddings", server.base_url()))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status.as_u16(), 404);
    let invalid = client
        .post(format!("{}/chat/completions", server.base_url()))
        .body("{not json")
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(invalid.as_u16(), 400);
    let served: Vec<ServedBy> = server.requests().into_iter().map(|r| r.served_by).collect();
    assert_eq!(
        served,
        vec![
            ServedBy::ModelList,
            ServedBy::UnknownRoute,
            ServedBy::InvalidBody
        ]
    );
    assert_eq!(server.unmatched().len(), 2);
}

#[tokio::test]
async fn computed_reply_answers_from_the_request_and_records_its_status() {
    let server = ScriptedServer::start(
        Script::new().rule(
            Rule::when(Match::any())
                .named("computed")
                .always(Reply::computed(|request| {
                    let user = request["messages"][1]["content"][0]["text"]
                        .as_str()
                        .unwrap_or("");
                    if user == "refuse" {
                        Reply::status(429)
                    } else {
                        Reply::content(format!("echo: {user}"))
                    }
                })),
        ),
    )
    .await;
    let (status, _, reply) = post(&server, &body("s", "first", false)).await;
    assert_eq!(status, 200);
    assert_eq!(reply["choices"][0]["message"]["content"], "echo: first");
    let (_, _, reply) = post(&server, &body("s", "second", false)).await;
    assert_eq!(reply["choices"][0]["message"]["content"], "echo: second");
    let (status, _, _) = post(&server, &body("s", "refuse", false)).await;
    assert_eq!(status, 429);
    let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![200, 200, 429]);
    assert_eq!(server.served_by("computed").len(), 3);
}

#[tokio::test]
async fn held_replies_meet_and_record_who_ran_alongside() {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains("first"))
                .named("first")
                .reply(Reply::content("1").hold_until_in_flight(2)),
        )
        .rule(
            Rule::when(Match::user_contains("second"))
                .named("second")
                .reply(Reply::content("2").hold_until_in_flight(2)),
        )
        .rule(
            Rule::when(Match::user_contains("later"))
                .named("later")
                .reply(Reply::content("3")),
        );
    let server = ScriptedServer::start(script).await;
    let (first, second) = (body("s", "first", false), body("s", "second", false));
    let (a, b) = tokio::join!(post(&server, &first), post(&server, &second));
    assert_eq!((a.0, b.0), (200, 200));
    // Sent after both were answered: nothing was in flight.
    post(&server, &body("s", "later", false)).await;
    let requests = server.requests();
    let by_seq: Vec<_> = requests
        .iter()
        .map(|r| r.in_flight_at_arrival.clone())
        .collect();
    let first_two: Vec<Option<String>> = by_seq[..2].iter().flatten().cloned().collect();
    assert_eq!(
        first_two.len(),
        1,
        "the second arrival saw the first in flight"
    );
    assert!(by_seq[2].is_empty(), "{by_seq:?}");
}
