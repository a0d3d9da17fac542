//! Finding the one contract-valid JSON object in a model's reply text.
//!
//! Rule (issue "Reviewer coverage contract", rule 3): parse first; otherwise extract
//! from prose, ```` ```json ```` fences, or one of several objects, choosing by
//! contract validity. Two valid objects that differ make the reply invalid (never
//! "first wins"); identical duplicates count once. Truncated JSON is never completed:
//! an object whose braces do not balance is not a candidate.

use serde_json::Value;

/// Why no single valid JSON object could be taken from a reply. The `Display` text is
/// written for the repair prompt's "parser error".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    /// No complete JSON object anywhere in the text.
    #[error("the reply contains no complete JSON object")]
    NoJson,
    /// Objects were found but none passed the caller's check.
    #[error(
        "the reply contains {candidates} JSON object(s) but none satisfies the output contract: {}",
        reasons.join("; ")
    )]
    NoValid {
        /// Distinct objects found.
        candidates: usize,
        /// The check's messages for (up to three of) the rejected objects.
        reasons: Vec<String>,
    },
    /// An object repeats a key: which value the model meant is unknown (a parser would
    /// silently keep the last), so the reply is not read.
    #[error("the reply's JSON is ambiguous: {0}; each key may appear once in an object")]
    DuplicateKey(String),
    /// No object passed the check, and the reply's own JSON object (one that holds every
    /// object found, or the first one when none parses) is not valid JSON: its syntax
    /// error is the problem to fix, not what an object found inside it lacks.
    #[error(
        "the reply's JSON object does not parse: {0}; write one JSON object, with double-quoted keys and strings, no comments and no trailing commas"
    )]
    Syntax(String),
    /// Several different objects passed the check.
    #[error(
        "the reply contains {count} different JSON objects that each satisfy the output \
         contract; exactly one is required"
    )]
    Ambiguous {
        /// Distinct valid objects found.
        count: usize,
    },
}

/// The reasoning blocks a model served without a reasoning parser writes before its
/// answer, as opening and closing marker (matched without regard to ASCII case):
/// DeepSeek-R1, QwQ and Qwen3 (`<think>`), others' `<thinking>` and `<reasoning>`,
/// Mistral's Magistral (`[THINK]`), and gpt-oss's harmony channels (analysis, then the
/// final channel).
const REASONING_MARKERS: [(&str, &str); 5] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("[think]", "[/think]"),
    ("<|channel|>analysis", "<|channel|>final<|message|>"),
];

/// Rule (a reasoning block is not the answer): the part of a reply after a leading
/// reasoning block ([`REASONING_MARKERS`]); the whole reply when none leads it. Reasoning
/// may mention its own closing marker, so the block ends at the **last** closing marker
/// that whole JSON or a fence follows. A reply that starts with the opening marker ends
/// its block there, else at its first closing marker (an answer in prose). A reply
/// holding only the closing marker (the chat template opened the block) ends it there,
/// else, when no JSON comes before its first closing marker, at that one. A draft object
/// inside the block is the model thinking, not a second answer, and a verdict or receipt
/// there is never read as one. A block that never closes leaves the reply whole, and so
/// does a closing marker inside the answer's JSON (a claim that quotes `</think>`).
pub fn answer_text(text: &str) -> &str {
    let lead = text.trim_start();
    // ASCII lower-casing keeps every byte offset.
    let lower = lead.to_ascii_lowercase();
    for (open, close) in REASONING_MARKERS {
        let from = if lower.starts_with(open) {
            open.len()
        } else {
            0
        };
        let ends: Vec<usize> = lower[from..]
            .match_indices(close)
            .map(|(at, _)| from + at + close.len())
            .collect();
        let Some(&first) = ends.first() else {
            continue;
        };
        // The last closing marker that whole JSON follows, or (a block that opened the
        // reply, or reasoning that mentions its marker) that stands outside any JSON
        // object with an object after it: an answer introduced by prose ("Final: {…}").
        let prose_answer = from > 0 || ends.len() > 1;
        if let Some(&end) = ends.iter().rev().find(|&&end| {
            starts_json(&lead[end..])
                || (prose_answer
                    && lead[end..].contains('{')
                    && brace_depth(&lead[..end - close.len()]) == 0)
        }) {
            return &lead[end..];
        }
        if from > 0 || !starts_json_anywhere(&lead[from..first - close.len()]) {
            return &lead[first..];
        }
    }
    text
}

/// Whether `text` starts (after whitespace) with a fence, or with a whole JSON object or
/// array (not merely a brace: the rest of a JSON string that quotes a closing marker
/// does not start with one).
fn starts_json(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("```")
        || (t.starts_with(['{', '['])
            && serde_json::Deserializer::from_str(t)
                .into_iter::<Value>()
                .next()
                .is_some_and(|v| v.is_ok()))
}

/// Markers with which chat templates write a tool call into a reply's text (Hermes and
/// Qwen, Mistral, Llama 3), when the server does not parse them into `tool_calls`.
const TOOL_CALL_MARKERS: [&str; 3] = ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>"];

/// Whether a reply's text holds a tool call written as text: a template's tool-call
/// marker, or a JSON object of exactly `name` and `arguments` (or `parameters`). A
/// server without the model's tool-call parser returns such calls as content, where
/// they are neither run nor an answer.
pub fn tool_call_as_text(text: &str) -> bool {
    if TOOL_CALL_MARKERS.iter().any(|m| text.contains(m)) {
        return true;
    }
    candidates(text).iter().any(|v| {
        v.as_object().is_some_and(|o| {
            o.len() == 2
                && o.get("name").is_some_and(Value::is_string)
                && (o.contains_key("arguments") || o.contains_key("parameters"))
        })
    })
}

/// How many JSON objects and arrays are open at the end of `text` (braces and brackets
/// inside double-quoted strings not counted): a closing marker inside an answer's JSON
/// (a claim that quotes it) is never where reasoning ends.
fn brace_depth(text: &str) -> i64 {
    let (mut depth, mut in_string, mut escaped) = (0i64, false, false);
    for c in text.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') | (false, _, '"') => in_string = !in_string,
            (false, _, '{' | '[') => depth += 1,
            (false, _, '}' | ']') => depth = (depth - 1).max(0),
            _ => {}
        }
    }
    depth
}

/// Whether `text` holds the start of any JSON or a fence.
fn starts_json_anywhere(text: &str) -> bool {
    text.contains(['{', '[']) || text.contains("```")
}

/// Most rejection reasons kept in [`ExtractError::NoValid`].
const MAX_REASONS: usize = 3;

/// Returns the single JSON value in `text` that `validate` accepts.
///
/// Order: the whole (trimmed) text as JSON; then objects inside ```` ``` ```` fences
/// (any info string, e.g. `json`); then balanced-brace objects anywhere in the prose
/// (string literals and escapes respected). Candidates equal as JSON values count once.
///
/// # Errors
/// [`ExtractError::NoJson`], [`ExtractError::NoValid`] or [`ExtractError::Ambiguous`].
pub fn extract_json<F>(text: &str, validate: F) -> Result<Value, ExtractError>
where
    F: Fn(&Value) -> Result<(), String>,
{
    let whole = serde_json::from_str::<Value>(text.trim()).ok();
    let found = sourced_candidates(text);
    // Any object of the reply with a repeated key makes the reply ambiguous.
    let sources = whole
        .iter()
        .map(|_| text.trim())
        .chain(found.iter().map(|(_, s)| *s));
    if let Some(problem) = sources.filter_map(vouch_json::duplicate_key).next() {
        return Err(ExtractError::DuplicateKey(problem));
    }
    if let Some(whole) = whole.filter(|value| validate(value).is_ok()) {
        return Ok(whole);
    }
    let syntax = broken_outer_object(text, &found);
    let found: Vec<Value> = found.into_iter().map(|(value, _)| value).collect();
    if found.is_empty() {
        return Err(syntax.map_or(ExtractError::NoJson, ExtractError::Syntax));
    }
    let mut valid = Vec::new();
    let mut reasons = Vec::new();
    for candidate in &found {
        match validate(candidate) {
            Ok(()) => valid.push(candidate),
            Err(reason) if reasons.len() < MAX_REASONS => reasons.push(reason),
            Err(_) => {}
        }
    }
    match valid.as_slice() {
        [] => Err(syntax.map_or(
            ExtractError::NoValid {
                candidates: found.len(),
                reasons,
            },
            ExtractError::Syntax,
        )),
        [one] => Ok((*one).clone()),
        several => Err(ExtractError::Ambiguous {
            count: several.len(),
        }),
    }
}

/// [`extract_json`] with a yes/no check; rejected objects are reported as "rejected
/// by the contract check".
///
/// # Errors
/// As [`extract_json`].
pub fn extract_json_if<F>(text: &str, is_valid: F) -> Result<Value, ExtractError>
where
    F: Fn(&Value) -> bool,
{
    extract_json(text, |value| {
        if is_valid(value) {
            Ok(())
        } else {
            Err("rejected by the contract check".to_owned())
        }
    })
}

/// Distinct JSON objects found in `text`: fenced blocks first, then balanced-brace
/// objects in the prose, each in order of appearance.
pub fn candidates(text: &str) -> Vec<Value> {
    sourced_candidates(text)
        .into_iter()
        .map(|(value, _)| value)
        .collect()
}

/// [`candidates`], each with the text it was read from.
fn sourced_candidates<'t>(text: &'t str) -> Vec<(Value, &'t str)> {
    let mut found: Vec<(Value, &'t str)> = Vec::new();
    let mut push = |(value, source): (Value, &'t str)| {
        if value.is_object() && !found.iter().any(|(known, _)| *known == value) {
            found.push((value, source));
        }
    };
    for block in fenced_blocks(text) {
        match serde_json::from_str::<Value>(block.trim()) {
            Ok(value) => push((value, block.trim())),
            Err(_) => balanced_objects(block).into_iter().for_each(&mut push),
        }
    }
    balanced_objects(text).into_iter().for_each(push);
    found
}

/// Contents of ```` ``` ```` fenced blocks (the opening fence's info string, e.g.
/// `json`, is skipped up to the end of its line). An unclosed fence yields nothing.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_ticks = &rest[open + 3..];
        let Some(line_end) = after_ticks.find('\n') else {
            break;
        };
        let body = &after_ticks[line_end + 1..];
        let Some(close) = body.find("```") else {
            break;
        };
        blocks.push(&body[..close]);
        rest = &body[close + 3..];
    }
    blocks
}

/// Objects whose braces balance and which parse as JSON. A `{` whose group does not
/// close, or does not parse, is skipped and the scan resumes right after it, so a
/// complete object following a stray brace in prose is still found.
fn balanced_objects(text: &str) -> Vec<(Value, &str)> {
    let bytes = text.as_bytes();
    let mut objects = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        if bytes[start] != b'{' {
            start += 1;
            continue;
        }
        let parsed = matching_close(bytes, start)
            .and_then(|end| Some((end, serde_json::from_str::<Value>(&text[start..=end]).ok()?)));
        match parsed {
            Some((end, value)) if value.is_object() => {
                objects.push((value, &text[start..=end]));
                start = end + 1;
            }
            _ => start += 1,
        }
    }
    objects
}

/// The syntax error of the reply's own JSON object, when it has one: the outermost brace
/// group that closes but does not parse and holds every object `found` in it (with no
/// object found, the first such group that opens as an object does: with a quoted key or
/// a comment, so braces of code or prose are not taken for it). Its place is a line and
/// column of the reply.
fn broken_outer_object(text: &str, found: &[(Value, &str)]) -> Option<String> {
    let offset = |s: &str| s.as_ptr() as usize - text.as_ptr() as usize;
    let spans: Vec<(usize, usize)> = found
        .iter()
        .map(|(_, s)| (offset(s), offset(s) + s.len()))
        .collect();
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(at) = bytes[start..].iter().position(|&b| b == b'{') {
        let open = start + at;
        let close = matching_close(bytes, open)?;
        let group = &text[open..=close];
        let opens_as_object = matches!(
            group[1..].trim_start().as_bytes().first(),
            Some(b'"' | b'\'' | b'/')
        );
        match serde_json::from_str::<Value>(group) {
            Err(e)
                if (!spans.is_empty() || opens_as_object)
                    && spans
                        .iter()
                        .all(|&(from, to)| open <= from && to <= close + 1) =>
            {
                return Some(syntax_message(text, open, &e));
            }
            _ => start = close + 1,
        }
    }
    None
}

/// A parser error of the group at byte `open` of `text`, placed in the whole reply.
fn syntax_message(text: &str, open: usize, e: &serde_json::Error) -> String {
    let before = &text[..open];
    let line = before.matches('\n').count() + e.line();
    let column = if e.line() == 1 {
        before.len() - before.rfind('\n').map_or(0, |n| n + 1) + e.column()
    } else {
        e.column()
    };
    let what = e.to_string();
    let what = what
        .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
        .unwrap_or(&what);
    format!("{what} at line {line} column {column} of the reply")
}

/// Index of the `}` closing the `{` at `start`, skipping braces inside JSON string
/// literals (with `\` escapes). `None` when the text ends first: truncated objects are
/// never closed. Works on bytes: `{`, `}`, `"` and `\` never occur inside multi-byte
/// UTF-8 sequences.
fn matching_close(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &byte) in bytes[start..].iter().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + offset);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;
