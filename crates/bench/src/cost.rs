//! The rules of the cost benchmark (`vouch-bench cost`, BENCHMARKS.md "Cost on real
//! code"): what a provider bills as prompt tokens, which of them its prefix cache would
//! serve, how many lines a change has, how many executions each lane ran, and the
//! one-prompt reviewer's request for the same change.
//!
//! There is no tokenizer here: tokens are estimated at [`BYTES_PER_TOKEN`] bytes of the
//! text a provider tokenizes ([`provider_text`]), the usual figure for English and code
//! with OpenAI's tokenizers. vouch's own budgets estimate more cautiously (three bytes of
//! JSON-escaped text per token, `vouch_core::estimate_tokens`), which the request bound
//! is checked with.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// Bytes of provider text per estimated token.
pub const BYTES_PER_TOKEN: usize = 4;

/// The shortest common prefix, in tokens, a provider's cache serves (OpenAI: 1,024).
pub const CACHE_MIN_TOKENS: u64 = 1_024;

/// The granularity, in tokens, of a cache hit past the minimum (OpenAI: 128).
pub const CACHE_STEP_TOKENS: u64 = 128;

/// Estimated tokens of `bytes` bytes of provider text (a partial token counts).
pub fn tokens(bytes: usize) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN) as u64
}

/// The text of a chat-completion request body in the order a provider sees it for
/// caching: the tool definitions, the structured-output schema, then each message's
/// role, content (parts joined) and tool calls. JSON is compact; message text is not
/// escaped (the tokenizer sees the characters, not their JSON escapes).
pub fn provider_text(request: &Value) -> String {
    let mut text = String::new();
    for key in ["tools", "response_format"] {
        if let Some(value) = request.get(key) {
            text.push_str(&value.to_string());
            text.push('\n');
        }
    }
    let messages = request.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flatten() {
        text.push_str(message.get("role").and_then(Value::as_str).unwrap_or(""));
        text.push('\n');
        match message.get("content") {
            Some(Value::String(content)) => text.push_str(content),
            Some(Value::Array(parts)) => {
                for part in parts.iter().filter_map(|p| p.get("text")) {
                    text.push_str(part.as_str().unwrap_or(""));
                }
            }
            _ => {}
        }
        if let Some(calls) = message.get("tool_calls") {
            text.push_str(&calls.to_string());
        }
        text.push('\n');
    }
    text
}

/// Length in bytes of the longest common prefix of `a` and `b`.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Rule (OpenAI's prompt caching): of a prompt whose longest prefix shared with an
/// earlier prompt is `shared` tokens, the cache serves none when `shared` is under
/// [`CACHE_MIN_TOKENS`], else `shared` rounded down to a multiple of
/// [`CACHE_STEP_TOKENS`].
pub fn cached_tokens(shared: u64) -> u64 {
    if shared < CACHE_MIN_TOKENS {
        0
    } else {
        shared / CACHE_STEP_TOKENS * CACHE_STEP_TOKENS
    }
}

/// The tokens a prefix cache would serve of each of `texts` (provider texts in the order
/// the provider received them): [`cached_tokens`] of the longest prefix (whole tokens
/// only) it shares with any earlier one. An upper bound: every earlier prompt counts as
/// cached by the time the next arrives, on the same cache.
pub fn cached_per_request(texts: &[String]) -> Vec<u64> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let shared = texts[..i]
                .iter()
                .map(|earlier| common_prefix(earlier.as_bytes(), text.as_bytes()))
                .max()
                .unwrap_or(0);
            cached_tokens((shared / BYTES_PER_TOKEN) as u64)
        })
        .collect()
}

/// Changed files and changed lines (added plus deleted) of `git diff --numstat` output;
/// a binary file (`-` counts) is a changed file of no lines.
pub fn numstat_totals(numstat: &str) -> (usize, u64) {
    let mut files = 0;
    let mut lines = 0;
    for row in numstat.lines().filter(|l| !l.trim().is_empty()) {
        files += 1;
        lines += row
            .split('\t')
            .take(2)
            .filter_map(|count| count.parse::<u64>().ok())
            .sum::<u64>();
    }
    (files, lines)
}

/// Executions each lane ran, from a JSON report's `stages`: the stage records that name
/// a lane (a lane's shards share it; the verifier names none) and were not skipped.
pub fn executions_per_lane(report: &Value) -> BTreeMap<String, usize> {
    let mut lanes = BTreeMap::new();
    let stages = report.get("stages").and_then(Value::as_array);
    for stage in stages.into_iter().flatten() {
        let lane = stage.get("lane").and_then(Value::as_str);
        let skipped = stage.get("status").and_then(Value::as_str) == Some("skipped");
        if let (Some(lane), false) = (lane, skipped) {
            *lanes.entry(lane.to_owned()).or_default() += 1;
        }
    }
    lanes
}

/// Estimated tokens of each part of a request as [`provider_text`] lays it out: the tool
/// definitions and schema, the system message, each `## ` section of the user messages
/// (named by its heading up to ` (`, `:` or 48 characters; text before the first heading
/// is `user: (no heading)`), the tool results and the model's own earlier turns. Each
/// part rounds up on its own.
pub fn parts(request: &Value) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for key in ["tools", "response_format"] {
        if let Some(value) = request.get(key) {
            out.push((
                "tools + schema".to_owned(),
                tokens(value.to_string().len() + 1),
            ));
        }
    }
    let messages = request.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flatten() {
        let one = provider_text(&json!({"messages": [message]}));
        match message.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" => out.push(("system".to_owned(), tokens(one.len()))),
            "user" => {
                let mut user = sections(&one["user\n".len()..]);
                if let Some(first) = user.first_mut() {
                    first.1 += "user\n".len();
                }
                out.extend(
                    user.into_iter()
                        .map(|(name, bytes)| (format!("user: {name}"), tokens(bytes))),
                );
            }
            "tool" => out.push(("tool results".to_owned(), tokens(one.len()))),
            _ => out.push(("assistant turns".to_owned(), tokens(one.len()))),
        }
    }
    out
}

/// The `## ` sections of `text` in order: each one's name and bytes (its heading line
/// included).
pub fn sections(text: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(heading) = line.strip_prefix("## ") {
            let end = heading
                .find([':', '\n'])
                .into_iter()
                .chain(heading.find(" ("))
                .min()
                .unwrap_or(heading.len());
            let name: String = heading[..end].trim().chars().take(48).collect();
            out.push((format!("## {name}"), 0));
        } else if out.is_empty() {
            out.push(("(no heading)".to_owned(), 0));
        }
        if let Some(last) = out.last_mut() {
            last.1 += line.len();
        }
    }
    out
}

/// The instructions of the one-prompt reviewer this benchmark stands in: a typical
/// single-request pull-request reviewer's (task, what to look for, answer format). It is
/// not any product's prompt.
pub const ONE_PROMPT_INSTRUCTIONS: &str = "You are an expert code reviewer. You are given \
the unified diff of a pull request: lines starting with '+' were added, lines starting \
with '-' were removed, other lines are unchanged context. Review the new code only.\n\n\
Look for: bugs and logic errors; unhandled edge cases and error paths; security problems \
(injection, unsafe deserialization, secrets, missing validation); concurrency and \
resource leaks; performance regressions; breaking changes to public interfaces; missing \
or wrong tests for the changed behaviour. Do not comment on style, naming or formatting \
unless it hides a defect. Do not repeat the diff. Do not speculate about code you cannot \
see; if a finding depends on code outside the diff, say what you would need to check.\n\n\
Answer in YAML with these keys:\nreview:\n  estimated_effort_to_review: an integer from 1 \
to 5\n  relevant_tests: whether the change adds or updates tests (yes/no)\n  \
key_issues_to_review: a list of at most 5 issues, each with relevant_file, start_line, \
end_line, issue_header (a few words) and issue_content (one or two sentences explaining \
the problem and its consequence)\n  security_concerns: 'No' or a short description\n\n\
Report only issues you are confident about, most severe first. If you find none, return \
an empty list.";

/// The one request a one-prompt reviewer sends for a change whose unified diff (three
/// lines of context) is `diff`: its instructions as the system message, the diff as the
/// user message. Never sent anywhere: its size is what the benchmark reports.
pub fn one_prompt_request(diff: &str) -> Value {
    json!({
        "model": "one-prompt-reviewer",
        "messages": [
            {"role": "system", "content": ONE_PROMPT_INSTRUCTIONS},
            {"role": "user", "content": format!("## Pull request diff\n\n{diff}")},
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_serves_from_1024_tokens_in_steps_of_128() {
        for (shared, cached) in [
            (0, 0),
            (1_023, 0),
            (1_024, 1_024),
            (1_151, 1_024),
            (1_152, 1_152),
            (5_000, 4_992),
        ] {
            assert_eq!(cached_tokens(shared), cached, "shared {shared}");
        }
    }

    #[test]
    fn each_request_is_cached_up_to_its_longest_prefix_with_an_earlier_one() {
        let stable = "s".repeat(4 * 2_000);
        let texts = vec![
            format!("{stable}one"),
            format!("{}x", "s".repeat(4 * 1_100)),
            format!("{stable}two"),
            "short".to_owned(),
            format!("{stable}one and more"),
        ];
        assert_eq!(
            cached_per_request(&texts),
            // The first has nothing earlier; the second shares 1,100 tokens (1,024);
            // the third 2,000 (1,920); the fourth under 1,024; the fifth all of the
            // first (2,000 tokens and 3 bytes: 2,000 whole tokens).
            vec![0, 1_024, 1_920, 0, 1_920]
        );
    }

    #[test]
    fn provider_text_puts_tools_and_schema_before_the_messages_unescaped() {
        let request = json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "Say \"hi\"\n"},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]},
                {"role": "tool", "tool_call_id": "1", "content": "r"},
            ],
            "tools": [{"type": "function"}],
            "response_format": {"type": "json_object"},
        });
        assert_eq!(
            provider_text(&request),
            "[{\"type\":\"function\"}]\n{\"type\":\"json_object\"}\n\
             system\nSay \"hi\"\n\nuser\nab\nassistant\n[{\"id\":\"1\"}]\ntool\nr\n"
        );
        assert_eq!(tokens(0), 0);
        assert_eq!(tokens(1), 1);
        assert_eq!(tokens(8), 2);
        assert_eq!(tokens(9), 3);
    }

    #[test]
    fn sections_are_named_by_their_headings() {
        let text = "intro\n## Change (3 files)\n@@ x\n## Task: review\ndo\n## Task\nagain";
        assert_eq!(
            sections(text),
            vec![
                ("(no heading)".to_owned(), 6),
                ("## Change".to_owned(), 25),
                ("## Task".to_owned(), 19),
                ("## Task".to_owned(), 13),
            ]
        );
        assert!(sections("").is_empty());
    }

    #[test]
    fn parts_split_a_request_by_what_it_carries() {
        let request = json!({
            "tools": [],
            "messages": [
                {"role": "system", "content": "abcd"},
                {"role": "user", "content": "## Change\nfirst"},
                {"role": "assistant", "content": null, "tool_calls": []},
                {"role": "tool", "content": "result"},
                {"role": "user", "content": "retry"},
            ],
        });
        let names: Vec<String> = parts(&request).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            names,
            vec![
                "tools + schema",
                "system",
                "user: ## Change",
                "assistant turns",
                "tool results",
                "user: (no heading)",
            ]
        );
        let total: u64 = parts(&request).iter().map(|(_, n)| n).sum();
        assert!(total >= tokens(provider_text(&request).len()));
    }

    #[test]
    fn numstat_counts_files_and_added_plus_deleted_lines() {
        for (numstat, expected) in [
            ("", (0, 0)),
            ("3\t1\ta.py\n", (1, 4)),
            ("3\t1\ta.py\n0\t7\tb.py\n-\t-\timg.png\n", (3, 11)),
            ("10\t0\t{old => new}/c.py\n\n", (1, 10)),
        ] {
            assert_eq!(numstat_totals(numstat), expected, "{numstat:?}");
        }
    }

    #[test]
    fn executions_are_counted_per_lane_without_skipped_stages_or_the_verifier() {
        let stage = |lane: Option<&str>, status: &str| match lane {
            Some(lane) => json!({"label": "x", "lane": lane, "status": status}),
            None => json!({"label": "verifier", "status": status}),
        };
        let report = json!({"stages": [
            stage(Some("generic-investigator #1"), "accepted"),
            stage(Some("generic-investigator #1"), "limited"),
            stage(Some("conventions #1"), "accepted"),
            stage(Some("clean-result-audit"), "skipped"),
            stage(None, "accepted"),
        ]});
        let got: Vec<(String, usize)> = executions_per_lane(&report).into_iter().collect();
        assert_eq!(
            got,
            vec![
                ("conventions #1".to_owned(), 1),
                ("generic-investigator #1".to_owned(), 2),
            ]
        );
        assert!(executions_per_lane(&json!({})).is_empty());
    }

    #[test]
    fn the_one_prompt_request_is_the_instructions_and_the_diff() {
        let request = one_prompt_request("@@ -1 +1 @@\n-a\n+b\n");
        let text = provider_text(&request);
        assert!(text.starts_with(&format!("system\n{ONE_PROMPT_INSTRUCTIONS}\n")));
        assert!(text.ends_with("## Pull request diff\n\n@@ -1 +1 @@\n-a\n+b\n\n"));
    }
}
