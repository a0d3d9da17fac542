//! The graph tools as a model reaches them: through the agent loop over real HTTP (the
//! scripted OpenAI-compatible server), on a real git repository. What they show lands in
//! the source ledger of the execution that received it, and only there.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use vouch_core::{Revision, SourceWindow};
use vouch_git::SourceReader;
use vouch_host::tools::RepoTools;
use vouch_llm::{AgentRequest, EndpointConfig, ModelClient, ToolBox, run_agent};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Script, ScriptedServer};

/// A repository whose head adds a keyword parameter to `send`, with a caller in another
/// Python file and a Ruby script (no grammar) naming `send`.
fn reader() -> (TestRepo, Arc<SourceReader>) {
    let repo = TestRepo::new();
    repo.write(
        "app/util.py",
        "def send(message, *, retries=3):\n    return message\n",
    );
    repo.write(
        "app/main.py",
        "from app.util import send\n\n\ndef run():\n    return send(\"hi\", retries=1)\n",
    );
    repo.write("ops/deploy.rb", "def send_all\n  send\nend\n");
    let base = repo.commit("base");
    repo.write(
        "app/util.py",
        "def send(message, *, retries=3, urgent=False):\n    return message\n",
    );
    let head = repo.commit("send is urgent");
    let snapshot = vouch_git::snapshot(repo.path(), Some(&base), &head).expect("snapshot");
    let reader = Arc::new(SourceReader::open(repo.path(), &snapshot).expect("reader"));
    (repo, reader)
}

fn window(revision: Revision, path: &str, start_line: u32, end_line: u32) -> SourceWindow {
    SourceWindow {
        revision,
        path: path.into(),
        start_line,
        end_line,
    }
}

#[test]
fn the_graph_tools_are_offered_with_json_schemas_beside_the_file_tools() {
    let (_repo, reader) = reader();
    let tools = RepoTools::new(reader);
    let specs = tools.specs();
    let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "grep",
            "list_dir",
            "diff",
            "definition",
            "references",
            "outline"
        ]
    );
    let required = |name: &str| {
        specs
            .iter()
            .find(|s| s.name == name)
            .expect(name)
            .parameters["required"]
            .clone()
    };
    assert_eq!(required("definition"), json!(["symbol"]));
    assert_eq!(required("references"), json!(["symbol"]));
    assert_eq!(required("outline"), json!(["path"]));
    let definition = specs.iter().find(|s| s.name == "definition").expect("spec");
    assert!(definition.parameters["properties"]["path_hint"].is_object());
    assert!(
        definition.description.contains("at most 20 definitions"),
        "{}",
        definition.description
    );
}

#[test]
fn every_window_a_graph_tool_shows_is_recorded_in_that_execution_only() {
    let (_repo, reader) = reader();
    let tools = RepoTools::new(reader.clone());
    let other = RepoTools::new(reader);

    let text = tools
        .call(
            "definition",
            &json!({"symbol": "send", "revision": "base"}),
            usize::MAX,
        )
        .expect("definition");
    assert!(
        text.contains("parameters: message | * | retries=3\n"),
        "{text}"
    );
    let text = tools
        .call("references", &json!({"symbol": "send"}), usize::MAX)
        .expect("references");
    assert!(text.contains("app/main.py:5: call in `run`"), "{text}");
    assert!(
        text.contains("text search (these files' languages have no grammar here"),
        "{text}"
    );
    let text = tools
        .call("outline", &json!({"path": "app/util.py"}), usize::MAX)
        .expect("outline");
    assert!(
        text.contains("parameters: message | * | retries=3 | urgent=False"),
        "{text}"
    );

    assert_eq!(
        tools.ledger().windows,
        [
            window(Revision::Base, "app/util.py", 1, 2),
            window(Revision::Base, "ops/deploy.rb", 2, 2),
            window(Revision::Head, "app/main.py", 1, 1),
            window(Revision::Head, "app/main.py", 5, 5),
            window(Revision::Head, "app/main.py", 4, 4),
            window(Revision::Head, "ops/deploy.rb", 2, 2),
            window(Revision::Head, "app/util.py", 1, 1),
        ]
    );
    assert!(
        other.ledger().windows.is_empty(),
        "another execution's ledger stays empty"
    );
}

#[test]
fn an_answer_with_no_room_in_the_request_is_neither_shown_nor_recorded() {
    let (_repo, reader) = reader();
    let tools = RepoTools::new(reader);
    let calls = [
        ("read_file", json!({"path": "app/util.py"})),
        ("grep", json!({"pattern": "send"})),
        ("diff", json!({"path": "app/util.py"})),
        ("definition", json!({"symbol": "send"})),
        ("references", json!({"symbol": "send"})),
        ("outline", json!({"path": "app/util.py"})),
    ];
    for (name, args) in &calls {
        let err = tools.call(name, args, 20).expect_err(name);
        assert!(
            err.starts_with("not shown: this answer takes"),
            "{name}: {err}"
        );
    }
    assert!(tools.ledger().windows.is_empty());
    assert_eq!(tools.lookup_failures(), 0);

    for (name, args) in &calls {
        let text = tools.call(name, args, usize::MAX).expect(name);
        let room = vouch_llm::json_text_len(&text);
        assert_eq!(
            tools.call(name, args, room).as_ref(),
            Ok(&text),
            "{name} fits exactly"
        );
    }
    assert!(!tools.ledger().windows.is_empty());
}

#[test]
fn bad_graph_arguments_are_tool_errors_not_lookup_failures() {
    let (_repo, reader) = reader();
    let tools = RepoTools::new(reader);
    for (name, args) in [
        ("definition", json!({})),
        ("references", json!({"symbol": "a b"})),
        ("outline", json!({"path": "../etc/passwd"})),
        ("outline", json!({"path": "app/missing.py"})),
        ("definition", json!({"symbol": "send", "revision": "tip"})),
    ] {
        let err = tools.call(name, &args, usize::MAX).expect_err(name);
        assert!(!err.is_empty(), "{name}");
    }
    assert_eq!(tools.lookup_failures(), 0);
    assert!(tools.ledger().windows.is_empty());
}

#[tokio::test]
async fn a_model_calling_references_gets_the_result_and_the_ledger_records_it() {
    let (_repo, reader) = reader();
    let server = ScriptedServer::start(Script::new().on(
        Match::any(),
        [
            Reply::tool_call("references", r#"{"symbol":"send"}"#),
            Reply::tool_call("outline", r#"{"path":"app/util.py","revision":"base"}"#),
            Reply::content(r#"{"done": true}"#),
        ],
    ))
    .await;
    let mut config = EndpointConfig::new(server.base_url(), "scripted");
    config.max_retries = 0;
    let client = ModelClient::new(config).expect("client");
    let tools = RepoTools::new(reader);
    let request = AgentRequest::new("investigator #1", "follow send", CancellationToken::new())
        .with_tools(&tools);
    let outcome = run_agent(&client, request).await.expect("agent");
    assert_eq!((outcome.tool_calls, outcome.tool_errors), (2, 0));

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    let offered = requests[0].tool_names();
    for name in ["definition", "references", "outline"] {
        assert!(offered.iter().any(|n| n == name), "{offered:?}");
    }
    let tool_results: Vec<String> = requests[2]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(tool_results.len(), 2);
    assert!(
        tool_results[0].contains("callers of `send`"),
        "{}",
        tool_results[0]
    );
    assert!(
        tool_results[1].starts_with("outline of app/util.py at base"),
        "{}",
        tool_results[1]
    );
    let ledger = tools.ledger();
    assert_eq!(
        ledger.windows,
        [
            window(Revision::Head, "app/main.py", 1, 1),
            window(Revision::Head, "app/main.py", 5, 5),
            window(Revision::Head, "app/main.py", 4, 4),
            window(Revision::Head, "ops/deploy.rb", 2, 2),
            window(Revision::Base, "app/util.py", 1, 1),
        ]
    );
    // A citation of what the tools showed is accepted; of a line they did not show, not.
    assert!(
        ledger
            .check(&window(Revision::Head, "app/main.py", 4, 5))
            .is_ok()
    );
    assert!(
        ledger
            .check(&window(Revision::Base, "app/util.py", 1, 1))
            .is_ok()
    );
    assert!(
        ledger
            .check(&window(Revision::Base, "app/util.py", 2, 2))
            .is_err()
    );
    assert!(
        ledger
            .check(&window(Revision::Head, "app/main.py", 2, 2))
            .is_err()
    );
}

/// A call repeats what the execution showed only when every window it would show was
/// shown, and it records nothing new: `diff` of a patch read before, `read_file` of
/// lines read before; never a call that would show more, nor one that shows no source.
#[test]
fn a_call_repeats_only_what_the_execution_already_showed() {
    let (_repo, reader) = reader();
    let tools = RepoTools::new(reader);
    let read =
        |start: u32, end: u32| json!({"path": "app/util.py", "start_line": start, "end_line": end});
    // Nothing shown yet: no call is a repeat.
    assert_eq!(tools.repeat("read_file", &read(1, 2), 10_000), None);
    assert_eq!(
        tools.repeat("diff", &json!({"path": "app/util.py"}), 10_000),
        None
    );
    tools.call("read_file", &read(1, 1), 10_000).expect("read");
    let before = tools.ledger();
    // (tool, arguments, repeats)
    let cases = [
        ("read_file", read(1, 1), true),
        ("read_file", read(1, 2), false),
        (
            "read_file",
            json!({"path": "app/util.py", "start_line": 1}),
            false,
        ),
        (
            "read_file",
            json!({"path": "app/util.py", "start_line": 1, "end_line": 1, "revision": "base"}),
            false,
        ),
        ("diff", json!({"path": "app/util.py"}), false),
        ("list_dir", json!({"path": "app"}), false),
    ];
    for (tool, args, repeats) in &cases {
        let answer = tools.repeat(tool, args, 10_000);
        assert_eq!(answer.is_some(), *repeats, "{tool} {args}");
    }
    assert_eq!(tools.ledger(), before, "a repeat records nothing new");
    // Once the patch was shown, asking for it again is a repeat.
    let patch = tools
        .call("diff", &json!({"path": "app/util.py"}), 10_000)
        .expect("diff");
    assert_eq!(
        tools.repeat("diff", &json!({"path": "app/util.py"}), 10_000),
        Some(patch)
    );
}

/// A changed file the review excludes is not read: `read_file` and `diff` refuse it,
/// and nothing another tool or the host shows of it is recorded as read.
#[test]
fn an_excluded_changed_file_is_refused_and_never_recorded_as_read() {
    let (_repo, reader) = reader();
    let tools = RepoTools::new(reader).excluding(vec!["app/util.py".into()]);
    for (tool, args) in [
        ("read_file", json!({"path": "app/util.py"})),
        ("diff", json!({"path": "app/util.py"})),
    ] {
        let refused = tools.call(tool, &args, 10_000).unwrap_err();
        assert!(
            refused.contains("`app/util.py` is a changed file this review excludes"),
            "{tool}: {refused}"
        );
    }
    // The lookups and grep leave it out; an outline of it is refused.
    let uses = tools
        .call("references", &json!({"symbol": "send"}), 30_000)
        .expect("references");
    assert!(
        uses.contains("app/main.py") && !uses.contains("app/util.py"),
        "{uses}"
    );
    for (tool, args) in [
        ("definition", json!({"symbol": "send"})),
        ("grep", json!({"pattern": "def send"})),
        ("grep", json!({"pattern": "def send", "revision": "base"})),
        ("outline", json!({"path": "app/util.py"})),
    ] {
        let shown = tools.call(tool, &args, 30_000).unwrap_or_else(|e| e);
        assert!(!shown.contains("retries=3"), "{tool} {args}: {shown}");
    }
    tools.record(window(Revision::Head, "app/util.py", 1, 2));
    let ledger = tools.ledger();
    assert!(
        ledger
            .check(&window(Revision::Head, "app/util.py", 1, 1))
            .is_err()
            && ledger
                .check(&window(Revision::Base, "app/util.py", 1, 1))
                .is_err(),
        "{ledger:?}"
    );
    assert!(
        ledger
            .check(&window(Revision::Head, "app/main.py", 5, 5))
            .is_ok()
    );
}
