//! vouch-llm over real HTTP: every test talks to vouch-testkit's scripted
//! OpenAI-compatible server on 127.0.0.1 through async-openai.

mod agent;
mod endpoint;
mod errors;
mod request_size;
mod retry;
mod structured;

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use vouch_llm::{ChatMessage, ChatRequest, EndpointConfig, ModelClient, ToolBox, ToolSpec};
use vouch_testkit::openai::ScriptedServer;

/// A client for `server` with fast backoff (10 ms base) and 2 retries, adjusted by
/// `tweak`.
pub fn client(server: &ScriptedServer, tweak: impl FnOnce(&mut EndpointConfig)) -> ModelClient {
    let mut config = EndpointConfig::new(server.base_url(), "test-model");
    config.max_retries = 2;
    config.retry_base_delay = Duration::from_millis(10);
    config.max_retry_wait = Duration::from_secs(5);
    config.request_timeout = Duration::from_secs(30);
    tweak(&mut config);
    ModelClient::new(config).expect("client builds")
}

/// A one-message user request.
pub fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user(text)],
        ..ChatRequest::default()
    }
}

/// A toolbox with `read_file` and `grep` that records its calls. `read_file` refuses
/// paths starting with `../` with a tool error; a `read_file` of a path starting with
/// `shown/` repeats what the run already showed ([`ToolBox::repeat`]), answered as
/// `again: PATH` and not recorded as a call.
#[derive(Default)]
pub struct RepoTools {
    pub calls: Mutex<Vec<(String, Value)>>,
}

impl RepoTools {
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl ToolBox for RepoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        let path_schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        });
        vec![
            ToolSpec {
                name: "read_file".into(),
                description: "Read a file of the head revision.".into(),
                parameters: path_schema.clone(),
            },
            ToolSpec {
                name: "grep".into(),
                description: "Search the head revision.".into(),
                parameters: path_schema,
            },
        ]
    }

    fn call(&self, name: &str, arguments: &Value, _max_bytes: usize) -> Result<String, String> {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_owned(), arguments.clone()));
        let path = arguments["path"].as_str().unwrap_or_default();
        if path.starts_with("../") {
            return Err("path is outside the repository".into());
        }
        Ok(format!("contents of {path}"))
    }

    fn repeat(&self, name: &str, arguments: &Value, _max_bytes: usize) -> Option<String> {
        let path = arguments["path"].as_str().unwrap_or_default();
        (name == "read_file" && path.starts_with("shown/")).then(|| format!("again: {path}"))
    }
}
