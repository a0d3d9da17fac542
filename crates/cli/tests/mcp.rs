//! `vouch mcp`: a real MCP client exchange (initialize, tools/list, tools/call) with
//! the spawned binary over stdio.

use std::path::PathBuf;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

const TOOL: &str = "validate_review_final_report";

fn accept(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/final-report/accept")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(accept(name)).expect("fixture")
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().expect("object").clone()
}

#[tokio::test]
async fn mcp_client_lists_and_calls_the_validator_tool() {
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_vouch")).configure(|cmd| {
            cmd.arg("mcp");
        }),
    )
    .expect("spawn vouch mcp");
    let client = ().serve(transport).await.expect("initialize");

    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("vouch")
    );
    assert!(info.capabilities.tools.is_some());

    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name, TOOL);
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .expect("input properties");
    for key in ["report", "reportPath", "transcript", "transcriptPath"] {
        assert!(properties.contains_key(key), "input schema lacks {key}");
    }
    let output = tool.output_schema.as_ref().expect("output schema");
    assert!(
        output
            .get("properties")
            .and_then(|p| p.get("violations"))
            .is_some()
    );
    assert_eq!(
        tool.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );

    // A valid Markdown report with its transcript given as an array of entries.
    let transcript: Vec<Value> = read("merged-pr.transcript.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("entry"))
        .collect();
    let result = client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args(json!({
            "report": read("merged-pr.md"),
            "transcript": transcript,
        }))))
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(false));
    let verdict = result.structured_content.expect("structured verdict");
    assert_eq!(
        verdict,
        json!({"valid": true, "exitCode": 0, "violations": []})
    );

    // An invalid report object with a JSON-lines transcript: every violation, same as the CLI.
    let mut report: Value = serde_json::from_str(&read("collision-stop.json")).expect("json");
    report["concurrency"]["readyStateReusable"] = json!(true);
    report["handoff"]["replayCommands"] = json!(["tea pulls merge 43"]);
    let result = client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args(json!({
            "report": report,
            "transcript": read("collision-stop.transcript.jsonl"),
        }))))
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(false));
    let verdict = result.structured_content.expect("structured verdict");
    assert_eq!(verdict["valid"], false);
    assert_eq!(verdict["exitCode"], 1);
    let codes: Vec<&str> = verdict["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["code"].as_str().expect("code"))
        .collect();
    assert_eq!(
        codes,
        [
            "BLOCKED_HANDOFF_REPLAYS_MUTATION",
            "REUSABLE_STATE_AFTER_EXTERNAL_MUTATION"
        ]
    );
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        text.contains("BLOCKED_HANDOFF_REPLAYS_MUTATION [rule 8] /handoff/replayCommands/0"),
        "{text}"
    );

    // Paths instead of inline values.
    let result = client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args(json!({
            "reportPath": accept("collision-stop.json"),
            "transcriptPath": accept("collision-stop.transcript.jsonl"),
        }))))
        .await
        .expect("tools/call");
    assert_eq!(result.structured_content.expect("verdict")["valid"], true);

    // Unreadable input is a tool error with exit code 3.
    let result = client
        .call_tool(
            CallToolRequestParams::new(TOOL)
                .with_arguments(args(json!({"report": "no fenced block here"}))),
        )
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(true));
    let verdict = result.structured_content.expect("verdict");
    assert_eq!(verdict["exitCode"], 3);
    assert!(
        verdict["error"]
            .as_str()
            .expect("error")
            .contains("no fenced ```json block")
    );

    client.cancel().await.expect("shutdown");
}

/// The verdict the library gives for a report file and its transcript, as JSON.
fn library_verdict(report: &Value, transcript: Option<&str>) -> Value {
    let entries = transcript.map(|t| vouch_final_report::parse_transcript(t).expect("transcript"));
    serde_json::to_value(vouch_final_report::verdict(report, entries.as_deref())).expect("verdict")
}

#[tokio::test]
async fn mcp_verdicts_equal_the_library_verdicts() {
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_vouch")).configure(|cmd| {
            cmd.arg("mcp");
        }),
    )
    .expect("spawn vouch mcp");
    let client = ().serve(transport).await.expect("initialize");

    let mut inputs: Vec<(Value, Option<String>)> = Vec::new();
    for name in [
        "approved-after-simulation",
        "changes-requested",
        "collision-stop",
        "merged-pr",
    ] {
        let report: Value = serde_json::from_str(&read(&format!("{name}.json"))).expect("json");
        inputs.push((report, Some(read(&format!("{name}.transcript.jsonl")))));
    }
    // An unmentioned profile activation through an MCP tool, with strict compliance.
    let mut transcript = read("merged-pr.transcript.jsonl");
    transcript.insert_str(
        0,
        "{\"seq\": 0, \"kind\": \"tool\", \"name\": \"gitea_activate_profile\", \"arguments\": {}}\n",
    );
    let merged: Value = serde_json::from_str(&read("merged-pr.json")).expect("json");
    inputs.push((merged.clone(), Some(transcript)));
    // An unknown key with a Cyrillic look-alike.
    let mut hostile = merged.clone();
    hostile["strictCоmpliance"] = json!(true);
    inputs.push((hostile, None));

    let mut invalid = 0;
    for (report, transcript) in inputs {
        let expected = library_verdict(&report, transcript.as_deref());
        let mut arguments = json!({"report": report});
        if let Some(t) = &transcript {
            arguments["transcript"] = json!(t);
        }
        let result = client
            .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args(arguments)))
            .await
            .expect("tools/call");
        let verdict = result.structured_content.expect("structured verdict");
        assert_eq!(verdict, expected);
        if verdict["valid"] == false {
            invalid += 1;
        }
    }
    assert_eq!(
        invalid, 2,
        "the two hostile inputs are rejected, the four fixtures accepted"
    );
    client.cancel().await.expect("shutdown");
}

/// A line that is not JSON is answered with JSON-RPC's parse error (`-32700`, `id:
/// null`) instead of silence, one that repeats a key with an invalid-request error, and
/// the server goes on serving the next request.
#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_vouch"))
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn vouch mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("an answer within 30 s")
            .expect("read stdout")
            .expect("a line");
        serde_json::from_str(&line).expect("the answer is JSON")
    };
    stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \n")
        .await
        .unwrap();
    let error = next().await;
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32700, "{error}");
    // A report passed as an object whose key repeats would be read as its last value:
    // refused as the validator refuses such a file.
    let ambiguous = r#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "validate_review_final_report", "arguments": {"report": {"status": "failed", "status": "passed"}}}}"#;
    stdin
        .write_all(format!("{ambiguous}\n").as_bytes())
        .await
        .unwrap();
    let error = next().await;
    assert_eq!(error["id"], 7, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the key `status` appears twice"),
        "{error}"
    );
    // Bytes that are not UTF-8 are a parse error too, never the end of the server.
    stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"\xff\"}\n")
        .await
        .unwrap();
    let error = next().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}
        }
    });
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let answer = next().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["serverInfo"]["name"], "vouch", "{answer}");
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .expect("vouch mcp ends when its input does")
        .expect("wait");
    assert!(status.success(), "{status}");
}
