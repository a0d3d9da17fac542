//! `vouch mcp`: serve the final-report validator over MCP stdio as the tool
//! `validate_review_final_report`.
//!
//! The tool takes the same inputs as `vouch validate-report` (a report as text or JSON
//! object, or a path; an optional transcript as JSON-lines text, an array of entries,
//! or a path) and returns the same verdict as `--format json`, as structured content.
//! Unreadable input is a tool error (`isError: true`) with exit code 3 in the verdict.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::Value;
use vouch_final_report::{
    EXIT_UNREADABLE, TranscriptEntry, Verdict, parse_report, parse_transcript,
    transcript_from_values,
};

use crate::validate::read_source;

/// Arguments of `validate_review_final_report`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ValidateRequest {
    /// The report: its text (canonical JSON, or Markdown whose single fenced ```json
    /// block is the handoff and whose prose is the narrative), or the report JSON
    /// object itself. Give this or `reportPath`.
    #[serde(default)]
    pub(crate) report: Option<Value>,
    /// Path of a report file to read instead of `report`.
    #[serde(default)]
    pub(crate) report_path: Option<String>,
    /// The session transcript: JSON-lines text, or an array of entries
    /// (`{"seq", "kind": "command"|"tool"|"event", ...}`). Optional.
    #[serde(default)]
    pub(crate) transcript: Option<Value>,
    /// Path of a JSON-lines transcript file to read instead of `transcript`.
    #[serde(default)]
    pub(crate) transcript_path: Option<String>,
}

fn report_value(req: &ValidateRequest) -> Result<Value, String> {
    match (&req.report, &req.report_path) {
        (Some(Value::String(text)), None) => parse_report(text).map_err(|e| format!("report: {e}")),
        (Some(value @ Value::Object(_)), None) => Ok(value.clone()),
        (Some(_), None) => Err("`report` must be the report text or a JSON object".to_owned()),
        (None, Some(path)) => parse_report(&read_source(path)?).map_err(|e| format!("report: {e}")),
        _ => Err("give exactly one of `report` and `reportPath`".to_owned()),
    }
}

fn transcript_entries(req: &ValidateRequest) -> Result<Option<Vec<TranscriptEntry>>, String> {
    let parsed = match (&req.transcript, &req.transcript_path) {
        (None, None) | (Some(Value::Null), None) => return Ok(None),
        (Some(Value::String(text)), None) => parse_transcript(text),
        (Some(Value::Array(items)), None) => transcript_from_values(items.clone()),
        (Some(_), None) => {
            return Err("`transcript` must be JSON-lines text or an array of entries".to_owned());
        }
        (None, Some(path)) => parse_transcript(&read_source(path)?),
        _ => return Err("give at most one of `transcript` and `transcriptPath`".to_owned()),
    };
    parsed.map(Some).map_err(|e| e.to_string())
}

/// The verdict for one tool call (reads files when paths are given).
pub(crate) fn verdict_for(req: &ValidateRequest) -> Verdict {
    let report = match report_value(req) {
        Ok(v) => v,
        Err(e) => return Verdict::unreadable(e),
    };
    match transcript_entries(req) {
        Ok(transcript) => vouch_final_report::verdict(&report, transcript.as_deref()),
        Err(e) => Verdict::unreadable(e),
    }
}

/// The MCP server: one read-only tool.
#[derive(Debug, Clone)]
pub(crate) struct FinalReportServer {
    tool_router: ToolRouter<Self>,
}

impl Default for FinalReportServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl FinalReportServer {
    /// A server with the validator tool.
    pub(crate) fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Validate a review final report (schema vouch.review-final-report.v1) and return
    /// every violation at once, each with a stable code, rule number, JSON pointer and a
    /// message naming the missing proof. Valid reports have `valid: true` and
    /// `exitCode: 0`; invalid ones `exitCode: 1`; unreadable input is a tool error with
    /// `exitCode: 3`. It checks the report only; it does not run any workflow.
    #[tool(
        name = "validate_review_final_report",
        output_schema = rmcp::handler::server::common::schema_for_type::<Verdict>(),
        annotations(title = "Validate a review final report", read_only_hint = true, open_world_hint = false)
    )]
    async fn validate_review_final_report(
        &self,
        Parameters(req): Parameters<ValidateRequest>,
    ) -> Result<CallToolResult, ErrorData> {
        let verdict = verdict_for(&req);
        let structured = serde_json::to_value(&verdict).map_err(|e| {
            ErrorData::internal_error(format!("verdict does not serialize: {e}"), None)
        })?;
        let mut result = if verdict.exit_code == EXIT_UNREADABLE {
            CallToolResult::structured_error(structured)
        } else {
            CallToolResult::structured(structured)
        };
        result
            .content
            .push(ContentBlock::text(verdict.render_text()));
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FinalReportServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("vouch", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Call validate_review_final_report with the session's final report (and its \
                 transcript, if any) before finishing; fix every violation it returns.",
            )
    }
}

/// Serves the validator on stdin/stdout until the client disconnects. A line that is
/// not JSON gets JSON-RPC's parse error (`-32700`, `id: null`) instead of silence, so a
/// client never waits for an answer that cannot come, and one that repeats a key within
/// an object an invalid-request error (`-32600`); every other line goes to the MCP
/// service as it came.
pub(crate) async fn serve() -> anyhow::Result<()> {
    let (lines_tx, lines_rx) = tokio::sync::mpsc::channel::<String>(64);
    let (service_in, filter_out) = tokio::io::duplex(64 * 1024);
    let (service_out, merge_in) = tokio::io::duplex(64 * 1024);
    let writer = tokio::spawn(write_lines(lines_rx));
    let merger = tokio::spawn(forward_lines(merge_in, lines_tx.clone()));
    let filter = tokio::spawn(filter_input(tokio::io::stdin(), filter_out, lines_tx));
    let service = FinalReportServer::new()
        .serve((service_in, service_out))
        .await?;
    service.waiting().await?;
    filter.abort();
    // The service's last lines reach stdout before vouch exits.
    merger.await??;
    writer.await??;
    Ok(())
}

/// JSON-RPC's parse error for a line that is not JSON (the request's id is unknown).
fn parse_error(error: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {error}")}
    })
    .to_string()
}

/// JSON-RPC's invalid-request error for a message that repeats a key within one object
/// (a report whose `"status"` says both `failed` and `passed` would be read as the
/// last): the same refusal as `vouch validate-report` gives such a file.
fn ambiguous_request(message: &Value, problem: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": message.get("id").cloned().unwrap_or(Value::Null),
        "error": {"code": -32600, "message": format!("Invalid Request: it is ambiguous: {problem}")}
    })
    .to_string()
}

/// Passes each JSON line of `input` to the service; answers any other (non-blank) line
/// with [`parse_error`] (a line that is not UTF-8 too), and a line that repeats a key
/// with [`ambiguous_request`].
async fn filter_input(
    input: impl tokio::io::AsyncRead + Unpin,
    mut service: tokio::io::DuplexStream,
    out: tokio::sync::mpsc::Sender<String>,
) -> std::io::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut input = tokio::io::BufReader::new(input);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes).await? == 0 {
            break;
        }
        let Some(answer) = (match std::str::from_utf8(&bytes) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => refusal(line.trim_end_matches(['\n', '\r'])),
            Err(e) => Some(parse_error(&format!("the line is not UTF-8 ({e})"))),
        }) else {
            service.write_all(&bytes).await?;
            if !bytes.ends_with(b"\n") {
                service.write_all(b"\n").await?;
            }
            continue;
        };
        if out.send(answer).await.is_err() {
            break;
        }
    }
    service.shutdown().await
}

/// The answer that keeps `line` from the service, if it needs one.
fn refusal(line: &str) -> Option<String> {
    match serde_json::from_str::<Value>(line) {
        Ok(message) => {
            vouch_json::duplicate_key(line).map(|problem| ambiguous_request(&message, &problem))
        }
        Err(e) => Some(parse_error(&e.to_string())),
    }
}

/// Sends each line the service writes to the stdout writer.
async fn forward_lines(
    service: tokio::io::DuplexStream,
    out: tokio::sync::mpsc::Sender<String>,
) -> std::io::Result<()> {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(service).lines();
    while let Some(line) = lines.next_line().await? {
        if out.send(line).await.is_err() {
            break;
        }
    }
    Ok(())
}

/// The one writer of stdout: whole lines, flushed one by one.
async fn write_lines(mut lines: tokio::sync::mpsc::Receiver<String>) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.recv().await {
        stdout.write_all(line.as_bytes()).await?;
        stdout.write_all(b"\n").await?;
        stdout.flush().await?;
    }
    Ok(())
}
