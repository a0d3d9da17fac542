//! Reading a report from text: canonical JSON, or Markdown whose single fenced JSON
//! block is the handoff and whose prose is the narrative. Also the reverse rendering.

use serde_json::{Map, Value};

/// A report text that could not be read as a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportParseError {
    /// The text is empty.
    #[error("the report is empty")]
    Empty,
    /// The JSON (whole text or fenced block) does not parse.
    #[error("the report JSON does not parse: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON repeats a key within one object (which one would count is ambiguous).
    #[error("the report JSON repeats a key: {0}")]
    DuplicateKey(#[from] crate::strict_json::DuplicateKey),
    /// The JSON is not an object.
    #[error("the report JSON is not an object")]
    NotAnObject,
    /// Markdown without a fenced ```json block.
    #[error("the Markdown report has no fenced ```json block")]
    NoJsonBlock,
    /// Markdown with more than one fenced ```json block.
    #[error("the Markdown report has {0} fenced ```json blocks; exactly one is the handoff")]
    MultipleJsonBlocks(usize),
    /// A fenced block that is never closed.
    #[error("the Markdown report has an unclosed code fence starting on line {0}")]
    UnclosedFence(usize),
}

/// Parse a report text into its JSON value.
///
/// Text whose first non-blank character is `{` is canonical JSON; other valid JSON
/// (an array, a string, `null`) is [`ReportParseError::NotAnObject`]. Anything else is
/// Markdown: exactly one fenced code block whose info string is `json` holds the report
/// object, and the prose around it (trimmed, the block removed) becomes `narrative`,
/// replacing any `narrative` key inside the block. Other fenced blocks stay in the prose.
pub fn parse_report(text: &str) -> Result<Value, ReportParseError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.is_empty() {
        return Err(ReportParseError::Empty);
    }
    if trimmed.starts_with('{') {
        let value: Value = serde_json::from_str(trimmed)?;
        crate::strict_json::check_unique_keys(trimmed)?;
        return if value.is_object() {
            Ok(value)
        } else {
            Err(ReportParseError::NotAnObject)
        };
    }
    // Valid JSON that is not an object (`[]`, `"text"`, `null`, a number) is not a
    // report, and not Markdown either: say so rather than "no json block".
    if serde_json::from_str::<Value>(trimmed).is_ok() {
        return Err(ReportParseError::NotAnObject);
    }
    let (block, prose) = split_markdown(trimmed)?;
    let Value::Object(map) = serde_json::from_str::<Value>(&block)? else {
        return Err(ReportParseError::NotAnObject);
    };
    crate::strict_json::check_unique_keys(&block)?;
    Ok(Value::Object(with_narrative(map, prose)))
}

/// Place `narrative` after `schemaVersion` (or first), replacing an existing one when the
/// prose is not empty.
fn with_narrative(map: Map<String, Value>, prose: String) -> Map<String, Value> {
    if prose.is_empty() {
        return map;
    }
    let mut out = Map::new();
    let has_version = map.contains_key("schemaVersion");
    if !has_version {
        out.insert("narrative".to_owned(), Value::String(prose.clone()));
    }
    for (key, value) in map {
        if key == "narrative" {
            continue;
        }
        let is_version = key == "schemaVersion";
        out.insert(key, value);
        if is_version {
            out.insert("narrative".to_owned(), Value::String(prose.clone()));
        }
    }
    out
}

/// Split Markdown into (the single json block's content, the remaining prose).
fn split_markdown(text: &str) -> Result<(String, String), ReportParseError> {
    let mut prose: Vec<&str> = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let Some((fence, info)) = opening_fence(line) else {
            prose.push(line);
            continue;
        };
        let is_json = info
            .split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("json"));
        let mut body: Vec<&str> = Vec::new();
        let mut closed = false;
        for (_, inner) in lines.by_ref() {
            if is_closing_fence(inner, &fence) {
                closed = true;
                break;
            }
            body.push(inner);
        }
        if !closed {
            return Err(ReportParseError::UnclosedFence(index + 1));
        }
        if is_json {
            blocks.push(body.join("\n"));
            // Keep one blank line where the block was so paragraphs stay separated.
            prose.push("");
        } else {
            prose.push(line);
            prose.extend(body);
            prose.push(fence_close_line(&fence));
        }
    }
    match blocks.len() {
        0 => Err(ReportParseError::NoJsonBlock),
        1 => Ok((blocks.remove(0), collapse_blank_lines(&prose))),
        n => Err(ReportParseError::MultipleJsonBlocks(n)),
    }
}

/// A CommonMark opening fence: up to three spaces, then at least three backticks or
/// tildes. Returns (the fence string, the info string).
fn opening_fence(line: &str) -> Option<(String, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = rest.chars().take_while(|c| *c == ch).count();
    if count < 3 {
        return None;
    }
    let info = rest[count..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((ch.to_string().repeat(count), info))
}

fn is_closing_fence(line: &str, fence: &str) -> bool {
    let trimmed = line.trim();
    let ch = fence.chars().next().unwrap_or('`');
    trimmed.len() >= fence.len() && trimmed.chars().all(|c| c == ch)
}

fn fence_close_line(fence: &str) -> &'static str {
    // Closing fences are re-emitted in canonical three-character form.
    if fence.starts_with('~') { "~~~" } else { "```" }
}

fn collapse_blank_lines(lines: &[&str]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in lines {
        if line.trim().is_empty() && out.last().is_none_or(|l| l.trim().is_empty()) {
            continue;
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// Render a report value as Markdown: the narrative as prose, then one fenced ```json
/// block holding every other field. [`parse_report`] reads it back to an equal value
/// (given a narrative without leading/trailing blank lines).
pub fn render_markdown(report: &Value) -> String {
    let mut block = report.clone();
    let narrative = block
        .as_object_mut()
        .and_then(|map| map.shift_remove("narrative"))
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let json = serde_json::to_string_pretty(&block).unwrap_or_else(|_| "{}".to_owned());
    format!("{}\n\n```json\n{json}\n```\n", narrative.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_text_is_read_as_is() {
        let v = parse_report("  {\"narrative\":\"x\"}\n").unwrap();
        assert_eq!(v, json!({"narrative": "x"}));
    }

    #[test]
    fn markdown_prose_becomes_the_narrative() {
        let text = "# Review\n\nAll good.\n\n```json\n{\"schemaVersion\":\"v\",\"narrative\":\"old\",\"a\":1}\n```\n\nTail.\n";
        let v = parse_report(text).unwrap();
        assert_eq!(v["narrative"], "# Review\n\nAll good.\n\nTail.");
        assert_eq!(v["a"], 1);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["schemaVersion", "narrative", "a"]);
    }

    #[test]
    fn other_fenced_blocks_stay_in_the_prose() {
        let text = "Ran:\n\n```sh\ncargo test\n```\n\n~~~json\n{}\n~~~\n";
        let v = parse_report(text).unwrap();
        assert_eq!(v["narrative"], "Ran:\n\n```sh\ncargo test\n```");
    }

    #[test]
    fn unreadable_markdown_is_an_error() {
        type Check = fn(&ReportParseError) -> bool;
        let cases: [(&str, Check); 9] = [
            ("", |e| matches!(e, ReportParseError::Empty)),
            ("prose only", |e| matches!(e, ReportParseError::NoJsonBlock)),
            ("a\n```json\n{}\n```\n```json\n{}\n```", |e| {
                matches!(e, ReportParseError::MultipleJsonBlocks(2))
            }),
            ("a\n```json\n{}\n", |e| {
                matches!(e, ReportParseError::UnclosedFence(2))
            }),
            ("a\n```json\n[1]\n```", |e| {
                matches!(e, ReportParseError::NotAnObject)
            }),
            ("{\"a\":", |e| matches!(e, ReportParseError::Json(_))),
            ("[]", |e| matches!(e, ReportParseError::NotAnObject)),
            ("\"str\"", |e| matches!(e, ReportParseError::NotAnObject)),
            ("null", |e| matches!(e, ReportParseError::NotAnObject)),
        ];
        for (text, check) in cases {
            let err = parse_report(text).unwrap_err();
            assert!(check(&err), "{text:?} gave {err:?}");
        }
    }

    #[test]
    fn markdown_rendering_round_trips() {
        let report =
            json!({"schemaVersion": "v1", "narrative": "Line one.\n\n- item", "x": {"y": [1, 2]}});
        let md = render_markdown(&report);
        assert!(md.starts_with("Line one.\n\n- item\n\n```json\n"));
        assert_eq!(parse_report(&md).unwrap(), report);
    }
}
