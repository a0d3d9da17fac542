//! Builders for what the scripted OpenAI-compatible server answers vouch's stages: a
//! rule per stage instance, a lane's receipt and the verifier's decisions.

use serde_json::{Value, json};
use vouch_testkit::openai::{Match, Reply, Rule};

use crate::{candidates_reply, citation, decision, finding};

/// The `Instance:` line of the generic investigator's prompt (rules key on it).
pub const GENERIC: &str = "Instance: generic-investigator #1";
/// The `Instance:` line of the outcome investigator's prompt.
pub const OUTCOME: &str = "Instance: outcome-investigator #1";
/// The `Instance:` line of the conventions lane's prompt.
pub const CONVENTIONS: &str = "Instance: conventions #1";
/// The `Instance:` line of the clean-result audit's prompt.
pub const AUDIT: &str = "Instance: clean-result-audit #1";
/// The `Instance:` line of the verifier's prompt (batched passes included).
pub const VERIFIER: &str = "Instance: verifier";
/// The start of the `Instance:` line of a focused verification pass.
pub const FOCUSED: &str = "Instance: verifier (focused";

/// The expected list of a request (the `<expected-files>` array of its first user turn).
pub fn expected_list(body: &Value) -> Vec<String> {
    let user = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let Some(at) = user.find("<expected-files>\n") else {
        return vec![];
    };
    let rest = &user[at + "<expected-files>\n".len()..];
    let end = rest.find("\n</expected-files>").unwrap_or(0);
    serde_json::from_str(&rest[..end]).unwrap_or_default()
}

/// A model that reviews instantly and perfectly: no candidates, the receipt exactly the
/// request's expected list.
pub fn perfect() -> Reply {
    Reply::content_from(|body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        candidates_reply(json!([]), true, &paths)
    })
}

/// A rule for the stage instance whose prompt says `instance`, named `name`, answering
/// `replies` in order.
pub fn stage(instance: &str, name: &str, replies: impl IntoIterator<Item = Reply>) -> Rule {
    Rule::when(Match::any_message_contains(instance))
        .named(name)
        .replies(replies)
}

/// A lane's answer: `candidates` and a complete receipt over `files`.
pub fn receipt(candidates: Value, files: &[&str]) -> Reply {
    Reply::content(candidates_reply(candidates, true, files))
}

/// A `read_file` tool call of `path`, lines `start` to `end`.
pub fn read_lines(path: &str, start: u32, end: u32) -> Reply {
    Reply::tool_call(
        "read_file",
        format!(r#"{{"path": "{path}", "start_line": {start}, "end_line": {end}}}"#),
    )
}

/// The verifier's answer with `decisions` as written (any shape, malformed ones too).
pub fn decisions(decisions: Value) -> Reply {
    Reply::content(json!({ "decisions": decisions }).to_string())
}

/// The verifier's answer, built one decision at a time: it confirms a candidate with a
/// finding at the lines it cites, or dismisses one.
#[derive(Clone, Debug, Default)]
pub struct ScriptedVerifier {
    decisions: Vec<Value>,
}

impl ScriptedVerifier {
    /// A verifier that has decided nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Verifies candidate `id`, citing head `path:start-end` and finding `claim` there.
    pub fn confirms(self, id: &str, path: &str, start: u32, end: u32, claim: &str) -> Self {
        self.decides(decision(
            id,
            "verified",
            json!([citation(path, start, end)]),
            Some(finding(path, start, end, claim)),
        ))
    }

    /// Rejects candidate `id`, citing `citations`.
    pub fn dismisses(self, id: &str, citations: Value) -> Self {
        self.decides(decision(id, "rejected", citations, None))
    }

    /// Adds `decision` as written (other citations or findings, other verdicts).
    pub fn decides(mut self, decision: Value) -> Self {
        self.decisions.push(decision);
        self
    }

    /// The answer carrying every decision, in the order added.
    pub fn reply(&self) -> Reply {
        decisions(Value::Array(self.decisions.clone()))
    }

    /// A rule named `verifier` for the verifier's prompt, answering once.
    pub fn rule(&self) -> Rule {
        stage(VERIFIER, "verifier", [self.reply()])
    }
}
