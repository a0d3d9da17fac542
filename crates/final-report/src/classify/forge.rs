//! Forge CLIs (`gh`, `tea`, `glab`), their API calls, GraphQL, and plain HTTP
//! clients against forge APIs, by what they change.

use super::*;

pub(super) fn classify_gh(args: &[&str]) -> Vec<Kind> {
    let group = args.first().copied().unwrap_or("");
    let verb = args.get(1).copied().unwrap_or("");
    match (group, verb) {
        ("pr", "merge") => vec![Kind::ForgeMerge],
        ("pr", "review") => vec![Kind::ForgeReview {
            approve: args.iter().any(|a| *a == "--approve" || *a == "-a"),
        }],
        (
            "pr",
            "comment" | "edit" | "close" | "reopen" | "ready" | "create" | "lock" | "unlock",
        )
        | (
            "issue",
            "close" | "comment" | "edit" | "create" | "reopen" | "delete" | "lock" | "transfer",
        )
        | ("label", "create" | "edit" | "delete")
        | ("release", "create" | "edit" | "delete" | "upload")
        | ("run", "rerun" | "cancel")
        | ("workflow", "run") => vec![Kind::ForgeWrite],
        ("auth", "status" | "token") | ("config", "get" | "list") => vec![Kind::ConfigInspection],
        ("auth", "login" | "switch" | "setup-git" | "refresh" | "logout") | ("config", "set") => {
            vec![Kind::ProfileActivation]
        }
        ("api", _) => classify_api_call(&args[1..]),
        _ => vec![],
    }
}

pub(super) fn classify_tea(args: &[&str]) -> Vec<Kind> {
    let group = args.first().copied().unwrap_or("");
    let verb = args.get(1).copied().unwrap_or("");
    match (group, verb) {
        ("pr" | "pulls" | "pull", "merge") => vec![Kind::ForgeMerge],
        ("pr" | "pulls" | "pull", "approve" | "lgtm") => vec![Kind::ForgeReview { approve: true }],
        ("pr" | "pulls" | "pull", "reject" | "review") => {
            vec![Kind::ForgeReview { approve: false }]
        }
        ("pr" | "pulls" | "pull", "close" | "reopen" | "create" | "edit")
        | ("issue" | "issues", "close" | "reopen" | "create" | "edit")
        | ("comment" | "c", _) => vec![Kind::ForgeWrite],
        ("login" | "logins", "list" | "ls" | "") | ("whoami", _) => vec![Kind::ConfigInspection],
        ("login" | "logins", "add" | "default" | "use" | "delete" | "edit") => {
            vec![Kind::ProfileActivation]
        }
        _ => vec![],
    }
}

pub(super) fn classify_glab(args: &[&str]) -> Vec<Kind> {
    match (
        args.first().copied().unwrap_or(""),
        args.get(1).copied().unwrap_or(""),
    ) {
        ("mr", "merge") => vec![Kind::ForgeMerge],
        ("mr", "approve") => vec![Kind::ForgeReview { approve: true }],
        ("api", _) => classify_api_call(&args[1..]),
        ("mr" | "issue", "note" | "close" | "reopen" | "update" | "create") => {
            vec![Kind::ForgeWrite]
        }
        ("auth", "status") => vec![Kind::ConfigInspection],
        ("auth", "login") => vec![Kind::ProfileActivation],
        _ => vec![],
    }
}

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
pub(super) fn classify_http(args: &[&str]) -> Vec<Kind> {
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
pub(super) fn graphql_operation(args: &[&str]) -> Option<Vec<Kind>> {
    let text = args.iter().find_map(|a| a.strip_prefix("query="))?.trim();
    if text.starts_with('{') || text.starts_with("query") {
        return Some(vec![]);
    }
    let body = text.strip_prefix("mutation")?.to_lowercase();
    Some(vec![
        if body.contains("mergepullrequest") || body.contains("mergemergerequest") {
            Kind::ForgeMerge
        } else if body.contains("pullrequestreview") {
            Kind::ForgeReview {
                approve: body.contains("approve"),
            }
        } else {
            Kind::ForgeWrite
        },
    ])
}

/// `gh api`/`glab api`: a write when a method other than GET is given or fields are
/// sent, except a GraphQL query, which reads ([`graphql_operation`]).
pub(super) fn classify_api_call(args: &[&str]) -> Vec<Kind> {
    let endpoint = args
        .iter()
        .find(|a| !a.starts_with('-') && !a.contains('='));
    if endpoint == Some(&"graphql")
        && let Some(kinds) = graphql_operation(args)
    {
        return kinds;
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

pub(super) fn write_by_path(args: &[&str]) -> Kind {
    let joined = args.join(" ");
    let approve = joined.to_uppercase().contains("APPROVE");
    if args
        .iter()
        .any(|a| a.trim_end_matches('/').ends_with("/merge"))
    {
        Kind::ForgeMerge
    } else if args
        .iter()
        .any(|a| a.contains("/reviews") || a.ends_with("/approve"))
    {
        Kind::ForgeReview { approve }
    } else {
        Kind::ForgeWrite
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
    let kinds = classify_command(command);
    if kinds.iter().any(|k| {
        matches!(
            k,
            Kind::ForgeMerge | Kind::LocalMerge | Kind::ForgeReview { approve: true }
        )
    }) || split_shell(command).iter().any(pushes_to_a_trunk)
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
            Some(Kind::ForgeMerge) | Some(Kind::ForgeReview { approve: true }) => true,
            Some(Kind::ForgeReview { approve: false }) => approve_in_args,
            _ => false,
        };
    }
    false
}
