//! MCP and agent tool calls by their names' verbs and their arguments.

use super::table::{ALWAYS, Cond, Does, NOTHING, Row, lookup, row};
use super::*;
use serde_json::Value;

pub(super) const READ_VERBS: &[&str] = &[
    "get", "list", "search", "read", "view", "show", "find", "query", "describe", "check",
    "status", "diff", "download", "whoami", "compare",
];
pub(super) const WRITE_VERBS: &[&str] = &[
    "create", "update", "delete", "add", "edit", "close", "reopen", "set", "remove", "write",
    "post", "comment", "label", "assign", "lock", "unlock", "dismiss", "submit", "request", "push",
    "fork", "transfer", "rerun", "cancel", "trigger", "dispatch", "upload", "approve", "merge",
    "activate", "switch",
];
pub(super) const LOCAL_EDIT_TOOLS: &[&str] = &[
    "write",
    "edit",
    "multiedit",
    "notebookedit",
    "apply_patch",
    "str_replace_based_edit_tool",
    "str_replace_editor",
    "create_file",
    "write_file",
    "edit_file",
    "delete_file",
    "move_file",
    "create_directory",
];

/// Split a tool name into lower-case words (`mcp__gitea__createPullReview` →
/// `create`, `pull`, `review`), and say whether it names a forge server.
pub(super) fn tool_words(name: &str) -> (Vec<String>, bool, String) {
    let base = name.rsplit("__").next().unwrap_or(name);
    let base = base.rsplit(['.', '/']).next().unwrap_or(base);
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in base.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c.to_ascii_lowercase());
    }
    let words = spaced
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let lower = name.to_lowercase();
    let forge = FORGES.iter().any(|f| lower.contains(f));
    (words, forge, spaced)
}

/// Names that mark a tool as a forge's.
pub(super) const FORGES: &[&str] = &[
    "gitea",
    "github",
    "gitlab",
    "forgejo",
    "codeberg",
    "bitbucket",
];

/// The MCP server part of `mcp__server__tool`, lower-case.
pub(super) fn tool_server(name: &str) -> Option<String> {
    let mut parts = name.split("__");
    (parts.next() == Some("mcp"))
        .then(|| parts.next().map(str::to_lowercase))
        .flatten()
}

/// The file path argument of a file tool (`file_path`, `path`, ...).
pub(crate) fn tool_path(arguments: &Value) -> Option<&str> {
    [
        "file_path",
        "filePath",
        "path",
        "filename",
        "file",
        "notebook_path",
        "target",
    ]
    .iter()
    .find_map(|k| arguments.get(*k).and_then(Value::as_str))
}

/// The repository directory argument of a local git tool.
pub(crate) fn tool_repo_dir(arguments: &Value) -> Option<&str> {
    [
        "repo_path",
        "repoPath",
        "repository_path",
        "cwd",
        "directory",
        "working_dir",
        "workdir",
        "path",
    ]
    .iter()
    .find_map(|k| arguments.get(*k).and_then(Value::as_str))
}

/// Whether a tool's name has a read verb (`get_pull_request`, `pull_request_read`).
pub(crate) fn is_read_tool(name: &str) -> bool {
    let (words, _, _) = tool_words(name);
    words.iter().any(|w| READ_VERBS.contains(&w.as_str()))
}

/// Whether a tool is a local git tool (`mcp__git__git_merge`, `git_checkout`).
pub(crate) fn is_local_git_tool(name: &str) -> bool {
    let (words, forge, _) = tool_words(name);
    !forge
        && (tool_server(name).as_deref() == Some("git")
            || words.first().is_some_and(|w| w == "git"))
}

/// What a local git tool does, by the first row of [`GIT_TOOL_VERBS`] that fits its
/// git verb and the words after it; its `abort` flag and a `hard` mode or flag count
/// as the words `abort` and `hard`.
pub(super) fn classify_git_tool(words: &[String], arguments: &Value) -> Option<Effect> {
    let flag = |k: &str| arguments.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mode = arguments
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let mut verbs: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| *w != "git")
        .collect();
    if flag("abort") {
        verbs.push("abort");
    }
    if flag("hard") || mode == "hard" {
        verbs.push("hard");
    }
    lookup(GIT_TOOL_VERBS, &verbs)?.into_iter().next()
}

/// Local git tools (`git_merge`, `git_checkout`): the git verb of the tool's name,
/// a condition on its other words, the effect.
pub(crate) const GIT_TOOL_VERBS: &[Row] = &[
    row(
        &[&["merge"]],
        &[Cond::Word(&["abort"])],
        Does::Fixed(&[Effect::MERGE_RESTORE]),
    ),
    row(&[&["merge", "pull"]], ALWAYS, Does::Fixed(&[Effect::Merge])),
    row(
        &[&["reset"]],
        &[Cond::Word(&["hard"])],
        Does::Fixed(&[Effect::MERGE_RESTORE]),
    ),
    row(
        &[&[
            "checkout", "switch", "reset", "add", "rm", "restore", "stash", "clean", "rebase",
            "cherry", "revert", "apply", "unstage",
        ]],
        ALWAYS,
        Does::Fixed(&[Effect::WORKTREE_CHANGE]),
    ),
    row(
        &[&[
            "commit", "fetch", "tag", "branch", "create", "delete", "update",
        ]],
        ALWAYS,
        Does::Fixed(&[Effect::REF_UPDATE]),
    ),
    row(
        &[&["worktree"]],
        &[Cond::Word(&["add", "remove", "prune"])],
        Does::Fixed(&[Effect::WORKTREE_ADD_REMOVE]),
    ),
    row(&[&["push"]], ALWAYS, Does::Fixed(&[Effect::PUSH])),
];

/// What an MCP/agent tool call does. `None` for reads and unknown tools.
///
/// Local git tools are classified by their git verb ([`GIT_TOOL_VERBS`]); local file
/// tools by their name (a read of configuration material is an inspection, a write an
/// edit of the path they name); every other tool by the words of its name
/// ([`TOOL_VERBS`]).
pub(crate) fn classify_tool(name: &str, arguments: &Value) -> Option<Effect> {
    let (words, forge, base) = tool_words(name);
    if is_local_git_tool(name) {
        return classify_git_tool(&words, arguments);
    }
    let path_class = tool_path(arguments).and_then(config_path_class);
    if !forge && READ_TOOLS.contains(&base.as_str()) {
        return path_class.map(Effect::ConfigRead);
    }
    if !forge && LOCAL_EDIT_TOOLS.contains(&base.as_str()) {
        let command = arguments.get("command").and_then(Value::as_str);
        return if command == Some("view") {
            path_class.map(Effect::ConfigRead)
        } else {
            Some(Effect::Edit(
                tool_path(arguments)
                    .map(str::to_owned)
                    .into_iter()
                    .collect(),
            ))
        };
    }
    let mut words = noun_words(&words);
    if approving_event(arguments) {
        words.push(APPROVING_EVENT.to_owned());
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    lookup(TOOL_VERBS, &words)?.into_iter().next()
}

/// Local tools that read a file: a read of configuration material is an inspection.
const READ_TOOLS: &[&str] = &[
    "read",
    "read_file",
    "read_text_file",
    "view",
    "cat",
    "open",
    "get_file_contents",
    "read_multiple_files",
];

/// Words naming an identity a tool may switch to.
const PROFILE_NOUNS: &[&str] = &[
    "profile",
    "login",
    "account",
    "credential",
    "credentials",
    "identity",
    "context",
];

/// Words that, with a [`PROFILE_NOUNS`] word, switch to that identity.
const PROFILE_VERBS: &[&str] = &[
    "activate", "switch", "use", "set", "select", "login", "default", "add",
];

/// Words that make a `merge` a query of merge state, not a merge.
const MERGE_STATE: &[&str] = &["base", "status", "check", "mergeable", "can"];

/// The word an approving review `event` or `state` argument (`APPROVE`, `APPROVED`)
/// adds to a tool's words; no name word can spell it.
const APPROVING_EVENT: &str = "event=approve";

/// Other tools (forge servers' and any other MCP server's), by the words of their
/// name after [`noun_words`], the first row that fits deciding.
pub(crate) const TOOL_VERBS: &[Row] = &[
    // A name starting with a read verb reads (`get_profile`, `list_pull_reviews`).
    row(&[READ_VERBS], ALWAYS, NOTHING),
    // An identity and switching to it (`gitea_activate_profile`, `switch_account`).
    row(
        &[],
        &[Cond::All(&[
            Cond::Word(PROFILE_NOUNS),
            Cond::Word(PROFILE_VERBS),
        ])],
        Does::Fixed(&[Effect::ProfileActivation]),
    ),
    // A read verb and no write verb (`pull_request_read`).
    row(
        &[],
        &[Cond::All(&[
            Cond::Word(READ_VERBS),
            Cond::Not(&Cond::Word(WRITE_VERBS)),
        ])],
        NOTHING,
    ),
    // The verb merge, not a query of merge state (`merge_pull_request`).
    row(
        &[],
        &[Cond::All(&[
            Cond::Word(&["merge"]),
            Cond::Not(&Cond::Word(MERGE_STATE)),
        ])],
        Does::Fixed(&[Effect::FORGE_MERGE]),
    ),
    row(
        &[],
        &[Cond::Word(&["approve"])],
        Does::Fixed(&[Effect::APPROVAL]),
    ),
    // A written review: approving when its event or state says so.
    row(
        &[],
        &[Cond::All(&[
            Cond::Word(&["review", "reviews"]),
            Cond::Word(WRITE_VERBS),
            Cond::Word(&[APPROVING_EVENT]),
        ])],
        Does::Fixed(&[Effect::APPROVAL]),
    ),
    row(
        &[],
        &[Cond::All(&[
            Cond::Word(&["review", "reviews"]),
            Cond::Word(WRITE_VERBS),
        ])],
        Does::Fixed(&[Effect::REVIEW]),
    ),
    row(
        &[],
        &[Cond::Word(WRITE_VERBS)],
        Does::Fixed(&[Effect::FORGE_WRITE]),
    ),
];

/// A tool's words with "pull request" and "merge request" joined into one noun word
/// (`pull-request`), so that neither `pull`, `merge` nor `request` is a verb there.
fn noun_words(words: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words {
        let joins = matches!(w.as_str(), "request" | "requests")
            && out
                .last()
                .is_some_and(|p| matches!(p.as_str(), "pull" | "merge"));
        match out.last_mut() {
            Some(prev) if joins => *prev = format!("{prev}-{w}"),
            _ => out.push(w.clone()),
        }
    }
    out
}

/// Whether a review tool's `event` (or `state`) argument approves.
fn approving_event(arguments: &Value) -> bool {
    arguments
        .get("event")
        .or_else(|| arguments.get("state"))
        .and_then(Value::as_str)
        .is_some_and(|e| e.eq_ignore_ascii_case("APPROVE") || e.eq_ignore_ascii_case("APPROVED"))
}
