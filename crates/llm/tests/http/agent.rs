//! The agent loop: tool calls, malformed calls, budgets and forced synthesis.

use serde_json::json;
use tokio_util::sync::CancellationToken;
use vouch_llm::{AgentEvent, AgentRequest, Budget, BudgetKind, FinishReason, Usage, run_agent};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};

use super::{RepoTools, client};

fn request<'a>(tools: &'a RepoTools) -> AgentRequest<'a> {
    AgentRequest::new("investigator #1", "review a.rs", CancellationToken::new()).with_tools(tools)
}

#[tokio::test]
async fn tool_call_loop_feeds_results_back_and_sums_usage() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::tool_call("read_file", r#"{"path":"a.rs"}"#).with_usage(100, 10),
            Reply::content(r#"{"findings": []}"#).with_usage(150, 20),
        ],
    ))
    .await;
    let tools = RepoTools::default();
    let outcome = run_agent(&client(&server, |_| {}), request(&tools))
        .await
        .unwrap();

    assert_eq!(outcome.final_text, r#"{"findings": []}"#);
    assert_eq!(outcome.finish_reason, FinishReason::Stop);
    assert_eq!(
        (outcome.turns, outcome.tool_calls, outcome.tool_errors),
        (2, 1, 0)
    );
    assert_eq!(outcome.budget_hit, None);
    assert!(!outcome.forced_synthesis);
    assert_eq!(outcome.usage.prompt_tokens, 250);
    assert_eq!(outcome.usage.completion_tokens, 30);
    assert_eq!(outcome.usage.requests, 2);
    assert_eq!(
        tools.calls(),
        vec![("read_file".into(), json!({"path": "a.rs"}))]
    );
    // system, user, assistant(tool call), tool, assistant(final)
    assert_eq!(outcome.messages.len(), 5);

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tool_names(), vec!["read_file", "grep"]);
    assert_eq!(
        requests[0].body["max_tokens"],
        Budget::default().max_output_tokens_per_request
    );
    let second = requests[1].messages();
    let call_id = second[2]["tool_calls"][0]["id"].clone();
    assert_eq!(second[2]["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(second[3]["role"], "tool");
    assert_eq!(second[3]["tool_call_id"], call_id);
    assert_eq!(second[3]["content"], "contents of a.rs");
    assert!(server.unmatched().is_empty());
}

#[tokio::test]
async fn malformed_arguments_become_a_tool_error_the_model_sees() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::tool_call("read_file", r#"{"path": "a.r"#).finish_reason("length"),
            Reply::content("done"),
        ],
    ))
    .await;
    let tools = RepoTools::default();
    let outcome = run_agent(&client(&server, |_| {}), request(&tools))
        .await
        .unwrap();

    assert!(tools.calls().is_empty(), "the truncated call must not run");
    assert_eq!((outcome.tool_calls, outcome.tool_errors), (1, 1));
    let second = &server.chat_requests()[1];
    let tool_message = second.last_message().unwrap();
    assert_eq!(tool_message["role"], "tool");
    let text = tool_message["content"].as_str().unwrap();
    assert!(text.starts_with("error: "), "{text}");
    assert!(text.contains("not valid JSON"), "{text}");
}

#[tokio::test]
async fn unknown_tool_and_tool_failure_are_tool_errors() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::tool_call("delete_repo", "{}").and_tool_call("read_file", r#"{"path":"../x"}"#),
            Reply::content("done"),
        ],
    ))
    .await;
    let tools = RepoTools::default();
    let outcome = run_agent(&client(&server, |_| {}), request(&tools))
        .await
        .unwrap();

    assert_eq!(outcome.final_text, "done");
    assert_eq!((outcome.tool_calls, outcome.tool_errors), (2, 2));
    let contents = server.chat_requests()[1].contents_of("tool");
    assert_eq!(
        contents,
        vec![
            "error: unknown tool `delete_repo`; available tools: grep, read_file".to_owned(),
            "error: path is outside the repository".to_owned(),
        ]
    );
}

#[tokio::test]
async fn turn_budget_forces_a_tool_free_synthesis_turn() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(
                Rule::when(Match::has_tools(true))
                    .named("tool turn")
                    .always(Reply::tool_call("grep", r#"{"path":"src"}"#)),
            )
            .rule(
                Rule::when(Match::has_tools(false).and(Match::last_message_contains("SYNTHESIZE")))
                    .named("synthesis")
                    .reply(Reply::content("final answer")),
            ),
    )
    .await;
    let tools = RepoTools::default();
    let budget = Budget {
        max_turns: 2,
        ..Budget::default()
    };
    let outcome = run_agent(
        &client(&server, |_| {}),
        request(&tools)
            .with_budget(budget)
            .with_forced_synthesis_prompt("SYNTHESIZE now"),
    )
    .await
    .unwrap();

    assert_eq!(outcome.final_text, "final answer");
    assert!(outcome.forced_synthesis);
    assert_eq!(outcome.budget_hit, Some(BudgetKind::Turns));
    assert_eq!(outcome.turns, 3);
    assert_eq!(server.served_by("tool turn").len(), 2);
    let last = server.chat_requests().pop().unwrap();
    assert!(!last.has_tools());
    assert_eq!(last.last_message().unwrap()["role"], "user");
    assert_eq!(last.rule_label(), Some("synthesis"));
    assert!(server.unmatched().is_empty());
}

#[tokio::test]
async fn tool_call_budget_refuses_extra_calls_then_synthesizes() {
    let server = ScriptedServer::start(
        Script::new()
            .on(
                Match::has_tools(true),
                [Reply::tool_call("read_file", r#"{"path":"a"}"#)
                    .and_tool_call("read_file", r#"{"path":"b"}"#)],
            )
            .on(Match::has_tools(false), [Reply::content("final")]),
    )
    .await;
    let tools = RepoTools::default();
    let budget = Budget {
        max_tool_calls: 1,
        ..Budget::default()
    };
    let outcome = run_agent(
        &client(&server, |_| {}),
        request(&tools).with_budget(budget),
    )
    .await
    .unwrap();

    assert_eq!(outcome.budget_hit, Some(BudgetKind::ToolCalls));
    assert_eq!(tools.calls().len(), 1);
    let contents = server.chat_requests()[1].contents_of("tool");
    assert_eq!(contents[0], "contents of a");
    assert!(
        contents[1].contains("tool-call budget of 1 calls is spent"),
        "{}",
        contents[1]
    );
}

/// A model that uses exactly its tool-call budget and then answers by itself hit no
/// budget: it is offered tools again, no call was refused, and no synthesis is forced.
#[tokio::test]
async fn a_tool_call_budget_used_exactly_is_not_hit() {
    let calls = Reply::tool_call("read_file", r#"{"path":"a"}"#)
        .and_tool_call("read_file", r#"{"path":"b"}"#);
    let (server, tools, outcome) = one_tool_turn_then_final(calls, 2).await;

    assert_eq!(outcome.budget_hit, None);
    assert!(!outcome.forced_synthesis);
    assert_eq!(outcome.final_text, "final");
    assert_eq!(tools.calls().len(), 2);
    assert!(server.chat_requests().iter().all(|r| r.has_tools()));
}

/// A run whose model makes `calls` in one turn, then answers `final` (or `forced`, when
/// the loop forces the answer), under a budget of `max_tool_calls`.
async fn one_tool_turn_then_final(
    calls: Reply,
    max_tool_calls: u32,
) -> (ScriptedServer, RepoTools, vouch_llm::AgentOutcome) {
    let server = ScriptedServer::start(
        Script::new()
            .on(Match::has_tools(true), [calls, Reply::content("final")])
            .on(Match::has_tools(false), [Reply::content("forced")]),
    )
    .await;
    let tools = RepoTools::default();
    let budget = Budget {
        max_tool_calls,
        ..Budget::default()
    };
    let outcome = run_agent(
        &client(&server, |_| {}),
        request(&tools).with_budget(budget),
    )
    .await
    .unwrap();
    (server, tools, outcome)
}

/// A call that only repeats what the run already showed is answered and not counted,
/// also past the budget: only the one new read counts, and nothing is refused.
#[tokio::test]
async fn a_call_that_repeats_what_was_shown_is_not_counted() {
    let calls = Reply::tool_call("read_file", r#"{"path":"shown/a"}"#)
        .and_tool_call("read_file", r#"{"path":"b"}"#)
        .and_tool_call("read_file", r#"{"path":"shown/c"}"#);
    let (server, _tools, outcome) = one_tool_turn_then_final(calls, 1).await;

    assert_eq!(outcome.budget_hit, None);
    assert_eq!(outcome.final_text, "final");
    let contents = server.chat_requests()[1].contents_of("tool");
    assert_eq!(
        contents,
        ["again: shown/a", "contents of b", "again: shown/c"]
    );
}

#[tokio::test]
async fn token_budget_forces_synthesis() {
    let server = ScriptedServer::start(
        Script::new()
            .on(
                Match::has_tools(true),
                [Reply::tool_call("read_file", r#"{"path":"a"}"#).with_usage(59_000, 1_000)],
            )
            .on(
                Match::has_tools(false),
                [Reply::content("final").with_usage(1, 1)],
            ),
    )
    .await;
    let tools = RepoTools::default();
    let outcome = run_agent(&client(&server, |_| {}), request(&tools))
        .await
        .unwrap();
    assert_eq!(outcome.budget_hit, Some(BudgetKind::TotalTokens));
    assert!(outcome.forced_synthesis);
    assert_eq!(outcome.usage.total_tokens(), 60_002);
}

#[tokio::test]
async fn a_token_budget_holds_against_an_endpoint_that_reports_no_usage() {
    let server = ScriptedServer::start(
        Script::new()
            .on(
                Match::has_tools(true),
                [Reply::tool_call("read_file", r#"{"path":"a"}"#).without_usage()],
            )
            .on(
                Match::has_tools(false),
                [Reply::content("final").without_usage()],
            ),
    )
    .await;
    let tools = RepoTools::default();
    // The first request alone (system, user and tool definitions) is over 100 tokens at
    // three bytes per token.
    let budget = Budget {
        max_total_tokens: 100,
        ..Budget::default()
    };
    let outcome = run_agent(
        &client(&server, |_| {}),
        request(&tools).with_budget(budget),
    )
    .await
    .unwrap();
    assert_eq!(outcome.budget_hit, Some(BudgetKind::TotalTokens));
    assert!(outcome.forced_synthesis);
    assert_eq!(outcome.usage.total_tokens(), 0);
    assert_eq!(outcome.usage.unreported_replies, 2);
    let sent: usize = server
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.len())
        .sum();
    assert!(
        outcome.usage.estimated_tokens >= (sent / 3) as u64,
        "{} estimated for {sent} bytes sent",
        outcome.usage.estimated_tokens
    );
}

#[tokio::test]
async fn length_finish_is_surfaced_as_truncated() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [Reply::content_with_finish(
            r#"{"findings": [{"path": "a"#,
            "length",
        )],
    ))
    .await;
    let outcome = run_agent(
        &client(&server, |_| {}),
        AgentRequest::new("s", "u", CancellationToken::new()),
    )
    .await
    .unwrap();
    assert!(outcome.is_truncated());
    assert_eq!(outcome.finish_reason, FinishReason::Length);
    assert_eq!(outcome.final_text, r#"{"findings": [{"path": "a"#);
}

#[tokio::test]
async fn the_observer_sees_each_turn_tool_call_and_retry_as_they_happen() {
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::status(503).header("Retry-After", "0"),
            Reply::tool_call("read_file", r#"{"path":"a.rs"}"#),
            Reply::content(r#"{"findings": []}"#),
        ],
    ))
    .await;
    let tools = RepoTools::default();
    let seen = std::sync::Mutex::new(Vec::new());
    let observer = |event: AgentEvent| seen.lock().unwrap().push(event);
    let outcome = run_agent(
        &client(&server, |_| {}),
        request(&tools).with_observer(&observer),
    )
    .await
    .unwrap();
    assert_eq!((outcome.turns, outcome.tool_calls), (2, 1));
    let progress = |turns, tool_calls| AgentEvent::Progress { turns, tool_calls };
    // What each reply cost: the first took two requests (the 503, then the reply).
    let replied = |requests| AgentEvent::Replied {
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            requests,
            ..Usage::default()
        },
        model: Some("test-model".into()),
    };
    assert_eq!(
        *seen.lock().unwrap(),
        [
            AgentEvent::Retrying {
                attempt: 1,
                cause: vouch_llm::RetryCause::Status { status: 503 },
                wait: std::time::Duration::ZERO,
            },
            replied(2),
            progress(1, 0),
            progress(1, 1),
            replied(1),
            progress(2, 1),
        ]
    );
}
