//! Forge CLIs (`gh`, `tea`, `glab`), their API calls, GraphQL, and plain HTTP
//! clients against forge APIs, by what they change.

use super::table::{ALWAYS, Cond, Does, Row, row};
use super::*;

/// `gh` commands: group, verb, condition, effects.
pub(crate) const GH: &[Row] = &[
    row(
        &[&["pr"], &["merge"]],
        ALWAYS,
        Does::Fixed(&[Effect::FORGE_MERGE]),
    ),
    row(
        &[&["pr"], &["review"]],
        &[Cond::Word(&["--approve", "-a"])],
        Does::Fixed(&[Effect::APPROVAL]),
    ),
    row(
        &[&["pr"], &["review"]],
        ALWAYS,
        Does::Fixed(&[Effect::REVIEW]),
    ),
    row(
        &[
            &["pr"],
            &[
                "comment", "edit", "close", "reopen", "ready", "create", "lock", "unlock",
            ],
        ],
        ALWAYS,
        WRITE,
    ),
    row(
        &[
            &["issue"],
            &[
                "close", "comment", "edit", "create", "reopen", "delete", "lock", "transfer",
            ],
        ],
        ALWAYS,
        WRITE,
    ),
    row(&[&["label"], &["create", "edit", "delete"]], ALWAYS, WRITE),
    row(
        &[&["release"], &["create", "edit", "delete", "upload"]],
        ALWAYS,
        WRITE,
    ),
    row(&[&["run"], &["rerun", "cancel"]], ALWAYS, WRITE),
    row(&[&["workflow"], &["run"]], ALWAYS, WRITE),
    row(&[&["auth"], &["status", "token"]], ALWAYS, CONFIG_READ),
    row(&[&["config"], &["get", "list"]], ALWAYS, CONFIG_READ),
    row(
        &[
            &["auth"],
            &["login", "switch", "setup-git", "refresh", "logout"],
        ],
        ALWAYS,
        PROFILE,
    ),
    row(&[&["config"], &["set"]], ALWAYS, PROFILE),
    row(&[&["api"]], ALWAYS, Does::By(classify_api_call)),
];

/// `tea` pull-request commands' group names.
const TEA_PR: &[&str] = &["pr", "pulls", "pull"];

/// `tea` commands: group, verb, condition, effects.
pub(crate) const TEA: &[Row] = &[
    row(
        &[TEA_PR, &["merge"]],
        ALWAYS,
        Does::Fixed(&[Effect::FORGE_MERGE]),
    ),
    row(
        &[TEA_PR, &["approve", "lgtm"]],
        ALWAYS,
        Does::Fixed(&[Effect::APPROVAL]),
    ),
    row(
        &[TEA_PR, &["reject", "review"]],
        ALWAYS,
        Does::Fixed(&[Effect::REVIEW]),
    ),
    row(
        &[TEA_PR, &["close", "reopen", "create", "edit"]],
        ALWAYS,
        WRITE,
    ),
    row(
        &[&["issue", "issues"], &["close", "reopen", "create", "edit"]],
        ALWAYS,
        WRITE,
    ),
    row(&[&["comment", "c"]], ALWAYS, WRITE),
    row(
        &[&["login", "logins"], &["list", "ls", ""]],
        ALWAYS,
        CONFIG_READ,
    ),
    row(&[&["whoami"]], ALWAYS, CONFIG_READ),
    row(
        &[
            &["login", "logins"],
            &["add", "default", "use", "delete", "edit"],
        ],
        ALWAYS,
        PROFILE,
    ),
];

/// `glab` commands: group, verb, condition, effects.
pub(crate) const GLAB: &[Row] = &[
    row(
        &[&["mr"], &["merge"]],
        ALWAYS,
        Does::Fixed(&[Effect::FORGE_MERGE]),
    ),
    row(
        &[&["mr"], &["approve"]],
        ALWAYS,
        Does::Fixed(&[Effect::APPROVAL]),
    ),
    row(&[&["api"]], ALWAYS, Does::By(classify_api_call)),
    row(
        &[
            &["mr", "issue"],
            &["note", "close", "reopen", "update", "create"],
        ],
        ALWAYS,
        WRITE,
    ),
    row(&[&["auth"], &["status"]], ALWAYS, CONFIG_READ),
    row(&[&["auth"], &["login"]], ALWAYS, PROFILE),
];

const WRITE: Does = Does::Fixed(&[Effect::FORGE_WRITE]);
const CONFIG_READ: Does = Does::Fixed(&[Effect::CONFIG_QUERY]);
const PROFILE: Does = Does::Fixed(&[Effect::ProfileActivation]);

/// The HTTP method an HTTP client's arguments name, upper-case, in every spelling of
/// curl, wget, httpie/xh and `gh api`: `-X PUT`, `-XPUT`, `--request PUT`,
/// `--request=PUT`, `--method PUT`, `--method=PUT`.
pub(super) fn http_method(args: &[&str]) -> Option<String> {
    const FLAGS: [&str; 3] = ["-X", "--request", "--method"];
    args.iter().enumerate().find_map(|(i, a)| {
        if FLAGS.contains(a) {
            return args.get(i + 1).map(|m| m.to_uppercase());
        }
        let joined = a
            .strip_prefix("--request=")
            .or_else(|| a.strip_prefix("--method="))
            .or_else(|| a.strip_prefix("-X").filter(|m| !m.starts_with('-')));
        joined.filter(|m| !m.is_empty()).map(str::to_uppercase)
    })
}

/// An HTTP call: writes are classified by path (`/merge`, `/reviews`).
pub(super) fn classify_http(args: &[&str]) -> Vec<Effect> {
    let method = http_method(args);
    let has_body = args.iter().any(|a| {
        matches!(
            *a,
            "-d" | "--data" | "--data-raw" | "--json" | "-F" | "--form"
        )
    });
    let writes = match method.as_deref() {
        Some("GET") | Some("HEAD") | Some("OPTIONS") => false,
        Some(_) => true,
        None => {
            has_body
                || args
                    .iter()
                    .any(|a| matches!(*a, "POST" | "PUT" | "PATCH" | "DELETE"))
        }
    };
    if !writes {
        return vec![];
    }
    vec![write_by_path(args)]
}

/// The operation a GraphQL call sends in its `query` field: `query { … }` (or a bare
/// `{ … }`) reads; `mutation { … }` writes (a merge, a review, or another write, by the
/// mutation's name). `None` when no query text is given inline.
pub(super) fn graphql_operation(args: &[&str]) -> Option<Vec<Effect>> {
    let text = args.iter().find_map(|a| a.strip_prefix("query="))?.trim();
    if text.starts_with('{') || text.starts_with("query") {
        return Some(vec![]);
    }
    let body = text.strip_prefix("mutation")?.to_lowercase();
    Some(vec![
        if body.contains("mergepullrequest") || body.contains("mergemergerequest") {
            Effect::FORGE_MERGE
        } else if body.contains("pullrequestreview") {
            Effect::review(body.contains("approve"))
        } else {
            Effect::FORGE_WRITE
        },
    ])
}

/// `gh api`/`glab api`: a write when a method other than GET is given or fields are
/// sent, except a GraphQL query, which reads ([`graphql_operation`]).
pub(super) fn classify_api_call(args: &[&str]) -> Vec<Effect> {
    let endpoint = args
        .iter()
        .find(|a| !a.starts_with('-') && !a.contains('='));
    if endpoint == Some(&"graphql")
        && let Some(effects) = graphql_operation(args)
    {
        return effects;
    }
    let method = http_method(args);
    let has_fields = args
        .iter()
        .any(|a| matches!(*a, "-f" | "-F" | "--field" | "--raw-field" | "--input"));
    let writes = match method.as_deref() {
        Some("GET") => false,
        Some(_) => true,
        None => has_fields,
    };
    if writes {
        vec![write_by_path(args)]
    } else {
        vec![]
    }
}

pub(super) fn write_by_path(args: &[&str]) -> Effect {
    let joined = args.join(" ");
    let approve = joined.to_uppercase().contains("APPROVE");
    if args
        .iter()
        .any(|a| a.trim_end_matches('/').ends_with("/merge"))
    {
        Effect::FORGE_MERGE
    } else if args
        .iter()
        .any(|a| a.contains("/reviews") || a.ends_with("/approve"))
    {
        Effect::review(approve)
    } else {
        Effect::FORGE_WRITE
    }
}

/// Branches a push to which lands a change: `main`, `master`, `trunk`.
const TRUNKS: &[&str] = &["main", "master", "trunk"];

/// `git push REMOTE …:main` (or `git push REMOTE main`): landing a change on a trunk
/// branch without the forge's merge.
fn pushes_to_a_trunk(simple: &SimpleCommand) -> bool {
    let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
    if words.first() != Some(&"git") {
        return false;
    }
    let (sub, args) = git_subcommand(&words[1..]);
    let refspecs = args.iter().filter(|a| !a.starts_with('-')).skip(1);
    sub == "push"
        && refspecs.into_iter().any(|spec| {
            let dest = spec
                .rsplit(':')
                .next()
                .unwrap_or(spec)
                .trim_start_matches('+');
            TRUNKS.contains(&dest.trim_start_matches("refs/heads/"))
        })
}

/// Whether a replay command would approve or merge directly (shell commands, HTTP
/// calls, or tool-call notation such as `merge_pull_request(owner=..)`).
pub(crate) fn is_direct_approve_or_merge(command: &str) -> bool {
    if classify_command(command)
        .iter()
        .any(Effect::approves_or_merges)
        || split_shell(command).iter().any(pushes_to_a_trunk)
    {
        return true;
    }
    let head = command
        .trim()
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or("");
    let looks_like_tool = head.contains('_')
        && head
            .chars()
            .all(|c| c.is_alphanumeric() || "_-.".contains(c));
    if looks_like_tool {
        let args: Value = command
            .find('(')
            .map(|i| Value::String(command[i..].to_owned()))
            .unwrap_or(Value::Null);
        let approve_in_args = args
            .as_str()
            .is_some_and(|a| a.to_uppercase().contains("APPROVE"));
        return match classify_tool(head, &Value::Null) {
            Some(Effect::ForgeMutation {
                kind: ForgeMutationKind::Merge | ForgeMutationKind::Approval,
            }) => true,
            Some(Effect::ForgeMutation {
                kind: ForgeMutationKind::Review,
            }) => approve_in_args,
            _ => false,
        };
    }
    false
}
