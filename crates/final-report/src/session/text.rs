//! Paths, SHAs and recorded outputs as the session model reads them.

use super::*;

/// Whether a string is a (full or abbreviated, at least 7) hex commit id.
pub(crate) fn is_sha(s: &str) -> bool {
    s.len() >= 7 && s.len() <= 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// Whether a recorded HEAD names the candidate commit: equal, or an abbreviation.
/// `None` when the HEAD is a ref name the model cannot resolve.
pub(crate) fn head_matches(head: &str, candidate: &str) -> Option<bool> {
    if !is_sha(head) {
        return None;
    }
    let (h, c) = (head.to_lowercase(), candidate.to_lowercase());
    Some(c.starts_with(&h) || h.starts_with(&c))
}

/// Lexically normalise a path (`.`/`..`, repeated and trailing slashes).
pub(crate) fn normalize_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `path` resolved against `base` (absolute and `~` paths stand alone).
pub(crate) fn resolve(base: Option<&str>, path: &str) -> Option<String> {
    let path = path.trim_matches(|c| c == '"' || c == '\'');
    if path.starts_with('/') || path.starts_with('~') || path.starts_with('$') {
        return Some(normalize_path(path));
    }
    base.map(|b| normalize_path(&format!("{b}/{path}")))
}

pub(super) fn parent(path: &str) -> Option<String> {
    path.rsplit_once('/').map(|(p, _)| {
        if p.is_empty() {
            "/".to_owned()
        } else {
            p.to_owned()
        }
    })
}

/// The text of a recorded result: `output`/`stdout` (plus `stderr`), or a string.
pub(crate) fn result_text(result: &Value) -> Option<String> {
    if let Some(s) = result.as_str() {
        return Some(s.to_owned());
    }
    let parts: Vec<&str> = ["output", "stdout", "stderr", "text"]
        .iter()
        .filter_map(|k| result.get(*k).and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// The subset a runner's output says it ran: cargo's "N filtered out" or pytest's
/// "N deselected" with N > 0.
pub(crate) fn output_filter(output: &str) -> Option<String> {
    let lower = output.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    tokens.windows(3).find_map(|w| {
        let n = w[0].parse::<u64>().ok().filter(|n| *n > 0)?;
        let said = match (w[1], w[2]) {
            ("filtered", "out") => "filtered out",
            ("deselected", _) => "deselected",
            _ => return None,
        };
        Some(format!("its output says {n} {said}"))
    })
}

/// Test counts from a runner's closing lines, summed over every such line: cargo test
/// (`test result: ok. N passed; M failed; K ignored`), pytest and the plain form
/// (`N passed, M failed, K skipped`), go test (`ok`/`FAIL` lines count nothing). The
/// summary lines of test files or suites and snapshots (jest's `Test Suites: 10
/// passed`, vitest's `Test Files  12 passed`, `Snapshots: 1 passed`) count no tests.
pub(crate) fn parse_counts(output: &str) -> Option<TestCounts> {
    let mut total = TestCounts {
        passed: 0,
        failed: 0,
        skipped: 0,
        ignored: 0,
    };
    let mut found = false;
    for line in output.lines() {
        let lower = line.to_lowercase();
        if !(lower.contains("passed") || lower.contains("failed")) {
            continue;
        }
        let label = lower.trim_start();
        if ["test suites", "test files", "snapshots"]
            .iter()
            .any(|l| label.starts_with(l))
        {
            continue;
        }
        let tokens: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let mut line_found = false;
        for pair in tokens.windows(2) {
            let Ok(n) = pair[0].parse::<u64>() else {
                continue;
            };
            let slot = match pair[1] {
                "passed" => &mut total.passed,
                "failed" | "errors" | "error" => &mut total.failed,
                "skipped" | "deselected" => &mut total.skipped,
                "ignored" | "xfailed" => &mut total.ignored,
                _ => continue,
            };
            *slot += n;
            line_found = true;
        }
        found |= line_found;
    }
    found.then_some(total)
}
