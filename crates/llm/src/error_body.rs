//! What an endpoint's error body says, in one line a person can read: a provider's
//! JSON error reduced to its `error.message` and `code`, a gateway's or proxy's HTML
//! page to its `<title>` and first line of text, anything else as it came. The raw
//! body stays in [`crate::LlmError::Http`]'s `body` (bounded), never in its message.

use serde_json::Value;

/// The most characters of a summary; longer ones end in `…`.
pub const SUMMARY_CHARS: usize = 300;

/// One line saying what the error body says (see the module doc). An empty body is
/// said to be empty.
pub fn summarize_error_body(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    let summary = if let Ok(value) = serde_json::from_str::<Value>(body) {
        json_summary(&value)
    } else if looks_like_html(body) {
        html_summary(body)
    } else {
        body.to_owned()
    };
    bounded(&summary)
}

/// `message (code: CODE)` of `{"error": {...}}`; the string of `{"error": "..."}`;
/// a top-level `message` or `detail` as some gateways send; else the JSON itself.
fn json_summary(value: &Value) -> String {
    let error = value.get("error").unwrap_or(value);
    if let Some(text) = error.as_str() {
        return one_line(text);
    }
    let message = ["message", "detail"]
        .iter()
        .find_map(|key| error.get(key).and_then(Value::as_str));
    let code = error
        .get("code")
        .filter(|code| !code.is_null())
        .map(|code| {
            code.as_str()
                .map_or_else(|| code.to_string(), str::to_owned)
        });
    match (message, code) {
        (Some(message), Some(code)) => format!("{} (code: {code})", one_line(message)),
        (Some(message), None) => one_line(message),
        (None, _) => value.to_string(),
    }
}

fn looks_like_html(body: &str) -> bool {
    let head: String = body
        .chars()
        .take(512)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html")
        || head.starts_with("<html")
        || head.contains("<html")
        || head.contains("<head")
        || head.contains("<body")
        || head.contains("<title")
}

/// `an HTML page: "TITLE" — FIRST LINE`, the first line being the first line of text
/// outside `<head>`, `<script>` and `<style>` that is not the title again.
fn html_summary(body: &str) -> String {
    let title = element_text(body, "title").map(|t| one_line(&t));
    let mut text = body.to_owned();
    for element in ["head", "script", "style"] {
        text = without_element(&text, element);
    }
    let first = strip_tags(&text)
        .lines()
        .map(one_line)
        .find(|line| !line.is_empty() && Some(line) != title.as_ref());
    match (title.filter(|t| !t.is_empty()), first) {
        (Some(title), Some(first)) => format!("an HTML page: \"{title}\" — {first}"),
        (Some(title), None) => format!("an HTML page: \"{title}\""),
        (None, Some(first)) => format!("an HTML page: {first}"),
        (None, None) => "an HTML page without text".to_owned(),
    }
}

/// The decoded text inside the first `<name …>…</name>`, case-insensitively.
fn element_text(html: &str, name: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find(&format!("<{name}"))?;
    let start = open + lower[open..].find('>')? + 1;
    let end = lower[start..]
        .find(&format!("</{name}"))
        .map_or(html.len(), |e| start + e);
    Some(decode_entities(&strip_tags(&html[start..end])))
}

/// `html` without any `<name …>…</name>` element (an unclosed one runs to the end).
fn without_element(html: &str, name: &str) -> String {
    let (open, close) = (format!("<{name}"), format!("</{name}"));
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    loop {
        let lower = rest.to_ascii_lowercase();
        let Some(start) = lower.find(&open).filter(|&s| {
            // `<header>` is not `<head>`.
            matches!(
                lower.as_bytes().get(s + open.len()),
                Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
            )
        }) else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..start]);
        let Some(end) = lower[start..].find(&close) else {
            return out;
        };
        let after = start + end;
        rest = &rest[after
            + lower[after..]
                .find('>')
                .map_or(lower.len() - after, |g| g + 1)..];
    }
}

/// Text with every tag removed; block-level tags become line breaks.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut chars = html.chars();
    while let Some(c) = chars.next() {
        if c != '<' {
            out.push(c);
            continue;
        }
        let tag: String = chars.by_ref().take_while(|&c| c != '>').collect();
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "br" | "p"
                | "div"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "hr"
                | "center"
                | "li"
                | "tr"
                | "title"
                | "pre"
        ) {
            out.push('\n');
        }
    }
    decode_entities(&out)
}

fn decode_entities(text: &str) -> String {
    [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&#x27;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text.to_owned(), |acc, (entity, plain)| {
        acc.replace(entity, plain)
    })
}

/// Whitespace (newlines included) collapsed to single spaces, control characters dropped.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .map(|word| word.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn bounded(text: &str) -> String {
    match text.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A refusal because the request did not fit the model's context window, with the window
/// when the endpoint states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOverflow {
    /// The window in tokens, as the endpoint stated it.
    pub window: Option<u32>,
}

/// How providers say a request was longer than the context window: vLLM and OpenAI
/// ("maximum context length is N tokens", code `context_length_exceeded`) and llama.cpp's
/// server (`exceed_context_size_error`, "exceeds the available context size", `n_ctx`).
const OVERFLOW_MARKS: [&str; 4] = [
    "maximum context length",
    "context_length_exceeded",
    "exceed_context_size",
    "exceeds the available context size",
];

/// Rule (provider refusals): whether `body` is a refusal for a request longer than the
/// context window, and the window it states ("maximum context length is N", or
/// llama.cpp's `n_ctx`).
pub fn context_overflow(body: &str) -> Option<ContextOverflow> {
    let lower = body.to_ascii_lowercase();
    if !OVERFLOW_MARKS.iter().any(|m| lower.contains(m)) {
        return None;
    }
    let number_after = |mark: &str| -> Option<u32> {
        let rest = &lower[lower.find(mark)? + mark.len()..];
        let digits: String = rest
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        // Only a number close after the mark, not one further on in the text.
        let gap = rest.find(digits.as_str())?;
        (gap <= 8).then(|| digits.parse().ok()).flatten()
    };
    let window = number_after("maximum context length is").or_else(|| number_after("\"n_ctx\":"));
    Some(ContextOverflow { window })
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_refusal_for_a_request_over_the_window_is_told_apart_with_its_window() {
        // (body, overflow, window)
        let cases: &[(&str, bool, Option<u32>)] = &[
            (
                r#"{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 10493 tokens (2301 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","code":400}"#,
                true,
                Some(8192),
            ),
            (
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
                true,
                Some(128_000),
            ),
            (
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
                true,
                Some(8192),
            ),
            (
                r#"{"error":{"message":"context_length_exceeded"}}"#,
                true,
                None,
            ),
            (r#"{"error":{"message":"invalid model name"}}"#, false, None),
            ("Bad Request", false, None),
        ];
        for &(body, overflow, window) in cases {
            let got = context_overflow(body);
            assert_eq!(got.is_some(), overflow, "{body}");
            assert_eq!(got.and_then(|o| o.window), window, "{body}");
        }
    }
    use super::*;

    const NGINX: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";

    #[test]
    fn error_bodies_in_one_line() {
        let cloudflare = "<!DOCTYPE html>\n<html lang=\"en-US\"><head><meta charset=\"UTF-8\"><title>api.example.com | 504: Gateway time-out</title><style>body{margin:0}</style><script>var a = '<b>x</b>';</script></head><body><header>Cloudflare</header><div><h1>Gateway time-out</h1><p>The web server reported a gateway time-out error &amp; more.</p></div></body></html>";
        for (body, summary) in [
            (NGINX, "an HTML page: \"502 Bad Gateway\" — nginx/1.25.3"),
            (
                cloudflare,
                "an HTML page: \"api.example.com | 504: Gateway time-out\" — Cloudflare",
            ),
            (
                "<html><body><p>Service Unavailable</p></body></html>",
                "an HTML page: Service Unavailable",
            ),
            (
                "<html><head><title>Oops</title></head></html>",
                "an HTML page: \"Oops\"",
            ),
            ("<html><body></body></html>", "an HTML page without text"),
            (
                r#"{"error":{"message":"Incorrect API key provided: sk-...","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
                "Incorrect API key provided: sk-... (code: invalid_api_key)",
            ),
            (
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens.\nPlease reduce.","code":null}}"#,
                "This model's maximum context length is 8192 tokens. Please reduce.",
            ),
            (
                r#"{"error":{"code":429,"message":"Resource exhausted"}}"#,
                "Resource exhausted (code: 429)",
            ),
            (r#"{"error":"model not found"}"#, "model not found"),
            (r#"{"detail":"Not Found"}"#, "Not Found"),
            (
                r#"{"statusCode":401,"message":"Access denied"}"#,
                "Access denied",
            ),
            (
                r#"{"error":{"type":"server_error"}}"#,
                r#"{"error":{"type":"server_error"}}"#,
            ),
            ("upstream connect error", "upstream connect error"),
            ("  \n ", "(empty body)"),
        ] {
            assert_eq!(summarize_error_body(body), summary, "{body}");
        }
    }

    #[test]
    fn a_long_summary_is_bounded_and_never_multiline() {
        let page = format!("<html><body><p>{}</p></body></html>", "word ".repeat(200));
        let summary = summarize_error_body(&page);
        assert!(summary.ends_with('…'), "{summary}");
        assert_eq!(summary.chars().count(), SUMMARY_CHARS + 1);
        let json = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x\\n".repeat(400));
        assert!(!summarize_error_body(&json).contains('\n'));
    }

    #[test]
    fn header_is_not_head_and_an_unclosed_head_runs_to_the_end() {
        assert_eq!(
            without_element("<header>a</header>b", "head"),
            "<header>a</header>b"
        );
        assert_eq!(without_element("x<head><title>t", "head"), "x");
        assert_eq!(without_element("a<HEAD>b</HEAD>c", "head"), "ac");
    }
}
