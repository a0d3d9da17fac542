//! The request size bound: tool answers never take a request past
//! `max_request_bytes`, and an answer not shown is never reported as shown.

use std::sync::Mutex;

use proptest::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use vouch_llm::{
    AgentOutcome, AgentRequest, Budget, BudgetKind, ToolBox, ToolSpec, json_text_len,
    oversized_answer, run_agent,
};
use vouch_testkit::openai::{Match, Reply, Script, ScriptedServer};

use super::client;

/// `read_file` answers `{"bytes": n}` with `n` bytes of text. An honest toolbox
/// refuses an answer longer than the room it is given, as the host's tools do; a
/// careless one returns it anyway.
struct SizedTools {
    honest: bool,
    shown: Mutex<Vec<usize>>,
}

impl SizedTools {
    fn new(honest: bool) -> Self {
        SizedTools {
            honest,
            shown: Mutex::new(Vec::new()),
        }
    }

    fn shown(&self) -> Vec<usize> {
        self.shown.lock().unwrap().clone()
    }
}

impl ToolBox for SizedTools {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "read_file".into(),
            description: "Read n bytes.".into(),
            parameters: json!({"type": "object", "properties": {"bytes": {"type": "integer"}}}),
        }]
    }

    fn call(&self, _name: &str, arguments: &Value, max_bytes: usize) -> Result<String, String> {
        let n = arguments["bytes"].as_u64().unwrap_or(0) as usize;
        let text = "x".repeat(n);
        if self.honest && json_text_len(&text) > max_bytes {
            return Err(oversized_answer(json_text_len(&text), max_bytes));
        }
        self.shown.lock().unwrap().push(n);
        Ok(text)
    }
}

/// Runs a model that reads `reads` (one read per reply) and then answers, under a
/// request bound of `bound` bytes; returns the outcome and every request's body size.
async fn run(tools: &SizedTools, reads: &[usize], bound: u64) -> (AgentOutcome, Vec<usize>) {
    let replies = reads
        .iter()
        .map(|n| Reply::tool_call("read_file", json!({"bytes": n}).to_string()));
    let server = ScriptedServer::start(
        Script::new()
            .on(
                Match::has_tools(true),
                replies.chain([Reply::content("final")]),
            )
            .on(Match::has_tools(false), [Reply::content("final")]),
    )
    .await;
    let budget = Budget {
        max_request_bytes: Some(bound),
        ..Budget::default()
    };
    let request = AgentRequest::new("investigator #1", "review a.rs", CancellationToken::new())
        .with_tools(tools)
        .with_budget(budget);
    let outcome = run_agent(&client(&server, |_| {}), request).await.unwrap();
    let sizes = server
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.len())
        .collect();
    (outcome, sizes)
}

#[tokio::test]
async fn an_answer_past_the_bound_is_not_shown_and_smaller_reads_go_on() {
    let tools = SizedTools::new(true);
    let (outcome, sizes) = run(&tools, &[3_000, 3_000, 100], 6_000).await;

    assert!(sizes.iter().all(|&s| s <= 6_000), "{sizes:?}");
    assert_eq!(tools.shown(), vec![3_000, 100]);
    let answers: Vec<&str> = outcome
        .messages
        .iter()
        .filter_map(|m| match m {
            vouch_llm::ChatMessage::Tool { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(answers[0].len(), 3_000);
    assert!(
        answers[1].starts_with("error: not shown: this answer takes 3002 bytes"),
        "{}",
        answers[1]
    );
    assert_eq!(answers[2].len(), 100);
    assert_eq!(outcome.final_text, "final");
    assert_eq!(outcome.budget_hit, None);
}

#[tokio::test]
async fn a_careless_toolbox_cannot_take_a_request_past_the_bound() {
    let tools = SizedTools::new(false);
    let (outcome, sizes) = run(&tools, &[5_000], 4_000).await;

    assert!(sizes.iter().all(|&s| s <= 4_000), "{sizes:?}");
    assert_eq!(outcome.tool_errors, 1);
}

#[tokio::test]
async fn no_room_left_ends_the_tool_phase() {
    let tools = SizedTools::new(true);
    let (outcome, sizes) = run(&tools, &[3_000, 10], 4_500).await;

    assert!(sizes.iter().all(|&s| s <= 4_500), "{sizes:?}");
    assert_eq!(tools.shown(), vec![3_000]);
    assert_eq!(outcome.budget_hit, Some(BudgetKind::RequestSize));
    assert!(outcome.forced_synthesis);
    assert_eq!(outcome.final_text, "final");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the model asks for and whatever the bound, no request after the first
    /// exceeds it, and an honest toolbox shows exactly the answers the model received.
    #[test]
    fn no_request_exceeds_the_bound(
        reads in prop::collection::vec(0usize..9_000, 1..6),
        bound in 3_000u64..20_000,
        honest in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let tools = SizedTools::new(honest);
        let (outcome, sizes) = runtime.block_on(run(&tools, &reads, bound));
        for s in &sizes {
            prop_assert!(*s as u64 <= bound, "{} > {} ({:?})", s, bound, sizes);
        }
        if honest {
            let received: Vec<usize> = outcome
                .messages
                .iter()
                .filter_map(|m| match m {
                    vouch_llm::ChatMessage::Tool { content, .. }
                        if !content.starts_with("error:") => Some(content.len()),
                    _ => None,
                })
                .collect();
            prop_assert_eq!(received, tools.shown());
        }
    }
}
