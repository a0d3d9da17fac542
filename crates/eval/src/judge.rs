//! Judge matching: one structured question to a separate model per plausible (finding,
//! golden comment) pair — "do these describe the same underlying issue?".

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use vouch_llm::{ChatMessage, ChatRequest, LlmError, ModelClient, ResponseSchema, Usage};

use crate::case::GoldenComment;
use crate::score::{EvalFinding, FindingGroup, plausible_pair};

/// The judge's instructions. Changing them changes every judge request (and so every
/// cached answer).
pub const JUDGE_SYSTEM: &str = "You compare a code review finding produced by a tool with a reference review comment written by a human reviewer of the same change. Decide whether both describe the same underlying issue: the same defect or risk in the same code, even if worded differently or one is more detailed. A finding about a different problem in the same file is not the same issue. Answer only with the JSON object {\"same_issue\": true or false, \"reason\": \"one sentence\"}.";

/// Why the judge could not answer.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The judge's endpoint failed.
    #[error("the judge endpoint failed: {0}")]
    Endpoint(#[from] LlmError),
    /// The judge answered something that is not the expected JSON object.
    #[error("the judge's answer is not {{\"same_issue\": bool, \"reason\": string}}: {excerpt}")]
    Answer {
        /// Start of what it answered.
        excerpt: String,
    },
}

/// The judge's decisions for one case and what they cost.
#[derive(Debug, Default)]
pub struct JudgeOutcome {
    /// `matches[group][comment]`.
    pub matches: Vec<Vec<bool>>,
    /// Questions asked.
    pub questions: u32,
    /// Tokens and requests of the judge's calls.
    pub usage: Usage,
}

fn schema() -> ResponseSchema {
    ResponseSchema {
        name: "same_issue".into(),
        schema: json!({
            "type": "object",
            "properties": {"same_issue": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["same_issue", "reason"],
            "additionalProperties": false
        }),
    }
}

/// The question for one pair.
pub fn question(finding: &EvalFinding, golden: &GoldenComment) -> ChatRequest {
    let location = match (&golden.path, golden.line) {
        (Some(path), Some(line)) => format!(" (at {path}:{line})"),
        (Some(path), None) => format!(" (in {path})"),
        _ => String::new(),
    };
    let user = format!(
        "Reference comment{location}:\n{}\n\nTool finding at {}:{}-{}:\n{}\n\nDo they describe the same underlying issue?",
        golden.comment, finding.path, finding.start_line, finding.end_line, finding.claim
    );
    ChatRequest {
        messages: vec![ChatMessage::system(JUDGE_SYSTEM), ChatMessage::user(user)],
        tools: Vec::new(),
        max_tokens: Some(400),
        temperature: Some(0.0),
        response_schema: Some(schema()),
    }
}

fn is_answer(value: &Value) -> bool {
    value.get("same_issue").is_some_and(Value::is_boolean)
}

/// Reads the judge's yes/no from its reply text.
///
/// # Errors
/// [`JudgeError::Answer`] when the text holds no single `{"same_issue": bool}` object.
pub fn read_answer(text: &str) -> Result<bool, JudgeError> {
    let answer = vouch_llm::extract::answer_text(text);
    vouch_llm::extract::extract_json_if(answer, is_answer)
        .ok()
        .and_then(|v| v.get("same_issue").and_then(Value::as_bool))
        .ok_or_else(|| JudgeError::Answer {
            excerpt: text.chars().take(200).collect(),
        })
}

/// Asks `judge` about every plausible (group representative, golden comment) pair of a
/// case, one request each, in order. Implausible pairs are no match without a question.
///
/// # Errors
/// The first [`JudgeError`]; the case is then not scored.
pub async fn judge_case(
    judge: &ModelClient,
    findings: &[EvalFinding],
    groups: &[FindingGroup],
    golden: &[GoldenComment],
    cancel: &CancellationToken,
) -> Result<JudgeOutcome, JudgeError> {
    let mut outcome = JudgeOutcome {
        matches: vec![vec![false; golden.len()]; groups.len()],
        ..JudgeOutcome::default()
    };
    for (g, group) in groups.iter().enumerate() {
        let finding = &findings[group.representative];
        for (c, comment) in golden.iter().enumerate() {
            if !plausible_pair(finding, comment) {
                continue;
            }
            let reply = judge.complete(question(finding, comment), cancel).await?;
            outcome.questions += 1;
            outcome.usage.add(reply.usage);
            outcome.matches[g][c] = read_answer(reply.content.as_deref().unwrap_or(""))?;
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_from_json_or_prose() {
        assert!(read_answer(r#"{"same_issue": true, "reason": "same"}"#).unwrap());
        assert!(
            !read_answer("Sure: ```json\n{\"same_issue\": false, \"reason\": \"no\"}\n```")
                .unwrap()
        );
        assert!(matches!(read_answer("yes"), Err(JudgeError::Answer { .. })));
        assert!(matches!(
            read_answer(r#"{"same_issue": "yes"}"#),
            Err(JudgeError::Answer { .. })
        ));
    }
}
