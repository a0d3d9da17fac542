//! What the session's recorded reads say about the selected pull request and the
//! target branch: each read of the pull request with the state and head it returned,
//! and each read of the target branch's tip. The stale-state rules compare the
//! report's `concurrency` and `target` fields with these observations.

use serde_json::Value;

use crate::classify;
use crate::evidence::payloads;
use crate::session::is_sha;
use crate::transcript::TranscriptEntry;

/// A pull request's state as a recorded read returned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrState {
    Open,
    Closed,
    Merged,
}

impl PrState {
    /// A state word as forges and reports spell it (`open`, `OPEN`, `opened`,
    /// `reopened`, `closed`, `merged`); `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text.trim().to_lowercase().as_str() {
            "open" | "opened" | "reopened" => Some(Self::Open),
            "closed" => Some(Self::Closed),
            "merged" => Some(Self::Merged),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
            Self::Merged => "merged",
        }
    }
}

/// One recorded read of the selected pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrObservation {
    pub seq: u64,
    pub state: Option<PrState>,
    pub head: Option<String>,
}

/// One recorded read of the target branch's tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BranchObservation {
    pub seq: u64,
    pub sha: String,
}

const NUMBER_KEYS: &[&str] = &["number", "index", "iid", "pull_number", "pr_number", "id"];

/// The number a payload or argument object names.
fn number_of(object: &Value) -> Option<u64> {
    NUMBER_KEYS.iter().find_map(|k| {
        let v = object.get(*k)?;
        v.as_u64().or_else(|| {
            v.as_str()
                .and_then(|s| s.trim_start_matches('#').parse().ok())
        })
    })
}

/// The state and head of the pull request in one payload: `merged: true` or a
/// `merged_at`/`mergedAt` time means merged, else its `state`; the head is
/// `head.sha`, `head_sha` or `headRefOid`.
fn pr_in(payload: &Value) -> Option<(Option<PrState>, Option<String>)> {
    let merged = payload.get("merged").and_then(Value::as_bool) == Some(true)
        || ["merged_at", "mergedAt"]
            .iter()
            .any(|k| payload.get(*k).is_some_and(|v| v.is_string()));
    let state = if merged {
        Some(PrState::Merged)
    } else {
        payload
            .get("state")
            .and_then(Value::as_str)
            .and_then(PrState::parse)
    };
    let head = payload
        .pointer("/head/sha")
        .or_else(|| payload.get("head_sha"))
        .or_else(|| payload.get("headRefOid"))
        .and_then(Value::as_str)
        .filter(|s| is_sha(s))
        .map(str::to_owned);
    (state.is_some() || head.is_some()).then_some((state, head))
}

/// Whether a call reads a pull request: a read tool whose name says pull request (or
/// merge request), or a read-only forge command naming one (`gh pr view`, `glab mr
/// view`, `tea pr`, an HTTP GET of `…/pulls/N`).
fn reads_pull_request(entry: &TranscriptEntry) -> Option<Option<u64>> {
    match entry {
        TranscriptEntry::Tool {
            name, arguments, ..
        } => {
            let lower = name.to_lowercase();
            let about_pr = ["pull", "_pr", "merge_request", "mergerequest"]
                .iter()
                .any(|w| lower.contains(w));
            (about_pr
                && classify::is_read_tool(name)
                && classify::classify_tool(name, arguments).is_none())
            .then(|| number_of(arguments))
        }
        TranscriptEntry::Command { command, .. } => {
            let read_only = classify::classify_command(command)
                .iter()
                .all(|k| k.categories().is_empty());
            let text = classify::normalize(command);
            let about_pr = [
                "gh pr view",
                "glab mr view",
                "tea pr",
                "/pulls/",
                "/merge_requests/",
            ]
            .iter()
            .any(|w| text.contains(w));
            (read_only && about_pr).then_some(None)
        }
        _ => None,
    }
}

/// Every recorded read of pull request `number`, in seq order, with what it returned.
/// A payload that names another number is not about this pull request.
pub(crate) fn pull_request_reads(
    transcript: &[TranscriptEntry],
    result_of: impl Fn(u64) -> Option<Value>,
    number: u64,
) -> Vec<PrObservation> {
    let mut out = Vec::new();
    for entry in transcript {
        let Some(named) = reads_pull_request(entry) else {
            continue;
        };
        if named.is_some_and(|n| n != number) {
            continue;
        }
        let Some(result) = result_of(entry.seq()) else {
            continue;
        };
        let found = payloads(&result).iter().find_map(|p| match number_of(p) {
            Some(n) if n != number => None,
            None if named.is_none() => None,
            _ => pr_in(p),
        });
        if let Some((state, head)) = found {
            out.push(PrObservation {
                seq: entry.seq(),
                state,
                head,
            });
        }
    }
    out
}

/// Whether `words` read the tip of branch `name`: `git rev-parse origin/NAME` (or
/// `refs/remotes/*/NAME`, `refs/heads/NAME`) or `git ls-remote REMOTE NAME`.
fn reads_branch_tip(command: &str, name: &str) -> bool {
    classify::split_shell(command).iter().any(|simple| {
        let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
        if words.first() != Some(&"git") {
            return false;
        }
        let (sub, args) = classify::git_subcommand(&words[1..]);
        let names_branch = |a: &&str| {
            let a = a.trim_start_matches("refs/").trim_start_matches("remotes/");
            a == name
                || a == format!("heads/{name}")
                || a.rsplit_once('/').is_some_and(|(_, b)| b == name)
        };
        matches!(sub, "rev-parse" | "ls-remote") && args.iter().any(names_branch)
    })
}

/// Every recorded read of the target branch's tip, in seq order: a command above with
/// a SHA as the first word of its output, or a read tool about branches whose
/// arguments name the branch and whose result carries `commit.id`/`commit.sha`/`sha`.
pub(crate) fn branch_reads(
    transcript: &[TranscriptEntry],
    result_of: impl Fn(u64) -> Option<Value>,
    name: &str,
) -> Vec<BranchObservation> {
    let mut out = Vec::new();
    for entry in transcript {
        let Some(result) = result_of(entry.seq()) else {
            continue;
        };
        let sha = match entry {
            TranscriptEntry::Command { command, .. } if reads_branch_tip(command, name) => {
                crate::session::result_text(&result)
                    .and_then(|t| t.split_whitespace().next().map(str::to_owned))
            }
            TranscriptEntry::Tool {
                name: tool,
                arguments,
                ..
            } if classify::is_read_tool(tool)
                && tool.to_lowercase().contains("branch")
                && ["branch", "name", "ref"]
                    .iter()
                    .any(|k| arguments.get(*k).and_then(Value::as_str) == Some(name)) =>
            {
                payloads(&result).iter().find_map(|p| {
                    ["/commit/id", "/commit/sha", "/sha"]
                        .iter()
                        .find_map(|k| p.pointer(k).and_then(Value::as_str))
                        .map(str::to_owned)
                })
            }
            _ => None,
        };
        if let Some(sha) = sha.filter(|s| is_sha(s)) {
            out.push(BranchObservation {
                seq: entry.seq(),
                sha,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transcript::entry_from_value;

    fn entries(lines: &[Value]) -> Vec<TranscriptEntry> {
        lines
            .iter()
            .map(|l| entry_from_value(l.clone()).expect("entry"))
            .collect()
    }

    fn results(t: &[TranscriptEntry]) -> impl Fn(u64) -> Option<Value> + '_ {
        move |seq| {
            t.iter().find_map(|e| match e {
                TranscriptEntry::Tool { seq: s, result, .. }
                | TranscriptEntry::Command { seq: s, result, .. }
                    if *s == seq =>
                {
                    result.clone()
                }
                _ => None,
            })
        }
    }

    #[test]
    fn pull_request_reads_follow_envelopes_and_skip_other_numbers() {
        let t = entries(&[
            json!({"seq": 1, "kind": "tool", "name": "mcp__gitea__get_pull_request", "arguments": {"index": 43}, "result": {"structuredContent": {"number": 43, "state": "open", "head": {"sha": "decade0ddba11caffe00112233445566778899aa"}}}}),
            json!({"seq": 2, "kind": "tool", "name": "mcp__gitea__get_pull_request", "arguments": {"index": 44}, "result": {"number": 44, "state": "closed"}}),
            json!({"seq": 3, "kind": "command", "command": "gh pr view 43 --json state,headRefOid", "result": {"exitCode": 0, "output": "{\"number\": 43, \"state\": \"MERGED\"}"}}),
        ]);
        let reads = pull_request_reads(&t, results(&t), 43);
        let states: Vec<(u64, Option<PrState>)> = reads.iter().map(|r| (r.seq, r.state)).collect();
        assert_eq!(
            states,
            [(1, Some(PrState::Open)), (3, Some(PrState::Merged))]
        );
        assert_eq!(
            reads[0].head.as_deref(),
            Some("decade0ddba11caffe00112233445566778899aa")
        );
    }

    #[test]
    fn branch_reads_take_rev_parse_ls_remote_and_branch_tools() {
        let t = entries(&[
            json!({"seq": 1, "kind": "command", "command": "git rev-parse origin/main", "result": {"exitCode": 0, "output": "9a1f0c3e5b7d2468ace013579bdf2468ace01357\n"}}),
            json!({"seq": 2, "kind": "command", "command": "git ls-remote origin refs/heads/main", "result": {"exitCode": 0, "output": "beefcafe00112233445566778899aabbccddeeff\trefs/heads/main\n"}}),
            json!({"seq": 3, "kind": "command", "command": "git rev-parse origin/dev", "result": {"exitCode": 0, "output": "0123456789abcdef0123456789abcdef01234567\n"}}),
            json!({"seq": 4, "kind": "tool", "name": "mcp__gitea__get_branch", "arguments": {"branch": "main"}, "result": {"commit": {"id": "beefcafe00112233445566778899aabbccddeeff"}}}),
        ]);
        let seqs: Vec<u64> = branch_reads(&t, results(&t), "main")
            .iter()
            .map(|r| r.seq)
            .collect();
        assert_eq!(seqs, [1, 2, 4]);
    }
}
