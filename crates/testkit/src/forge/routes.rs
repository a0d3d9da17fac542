//! What the local forge answers: for each forge a table of routes (a method, a path
//! pattern, a handler), and the handlers, each one endpoint of the forge's REST API.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{ForgeKind, Inner, StoredComment, TOKEN_USER};

/// One answer: status, extra headers, body text.
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: String,
}

pub(super) fn reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

/// `GET /user`: the token's user, as each forge names it.
fn token_user(kind: ForgeKind) -> Reply {
    match kind {
        ForgeKind::Gitlab => reply(200, json!({"id": 1, "username": TOKEN_USER})),
        ForgeKind::Github | ForgeKind::Gitea => {
            reply(200, json!({"id": 1, "login": TOKEN_USER, "type": "User"}))
        }
    }
}

fn not_found() -> Reply {
    reply(404, json!({"message": "Not Found"}))
}

/// A request as a handler sees it: the segments its route captured (`{}`), the query
/// and the JSON body (`Null` when none).
struct Call<'a> {
    args: Vec<&'a str>,
    query: &'a str,
    body: &'a Value,
}

/// One endpoint: a method, the path's pattern after the forge's API prefix, and its
/// handler. The pattern's `/`-separated segments are literal text, `*` (any one
/// segment), `{}` (any one segment, passed to the handler) or text with `{pr}` standing
/// for the pull request's number; `""` is the prefix itself.
struct Route(&'static str, &'static str, Handler);

type Handler = fn(&mut Inner, &Call<'_>) -> Reply;

const GITHUB: &[Route] = &[
    Route("GET", "repos/*/*/pulls/{pr}", pull_request),
    Route("GET", "repos/*/*/pulls/{pr}/files", github_files),
    Route("GET", "repos/*/*/compare/{}", github_compare),
    Route("GET", "repos/*/*/issues/{pr}/comments", github_comments),
    Route(
        "POST",
        "repos/*/*/issues/{pr}/comments",
        github_post_comment,
    ),
    Route("PATCH", "repos/*/*/issues/comments/{}", edit_comment),
    Route(
        "GET",
        "repos/*/*/pulls/{pr}/comments",
        github_review_comments,
    ),
    Route(
        "POST",
        "repos/*/*/pulls/{pr}/comments",
        github_post_review_comment,
    ),
    Route("PATCH", "repos/*/*/pulls/comments/{}", edit_inline),
];

/// GitLab's routes below `projects/{project}/merge_requests/{iid}` ([`gitlab_scope`]).
const GITLAB: &[Route] = &[
    Route("GET", "", merge_request),
    Route("GET", "diffs", gitlab_diffs),
    Route("GET", "notes", gitlab_notes),
    Route("POST", "notes", gitlab_post_note),
    Route("PUT", "notes/{}", edit_comment),
    Route("GET", "discussions", gitlab_discussions),
    Route("POST", "discussions", gitlab_post_discussion),
    Route("PUT", "discussions/{}", gitlab_resolve_discussion),
];

const GITEA: &[Route] = &[
    Route("GET", "repos/*/*/pulls/{pr}.diff", gitea_diff),
    Route("GET", "repos/*/*/pulls/{pr}", pull_request),
    Route("GET", "repos/*/*/issues/{pr}/comments", gitea_comments),
    Route("POST", "repos/*/*/issues/{pr}/comments", gitea_post_comment),
    Route("PATCH", "repos/*/*/issues/comments/{}", edit_comment),
    Route("GET", "repos/*/*/pulls/{pr}/reviews", gitea_reviews),
    Route(
        "GET",
        "repos/*/*/pulls/{pr}/reviews/{}/comments",
        gitea_review_comments,
    ),
    Route("POST", "repos/*/*/pulls/{pr}/reviews", gitea_post_review),
    Route(
        "POST",
        "repos/*/*/pulls/{pr}/comments/{}/resolve",
        gitea_resolve,
    ),
    Route(
        "POST",
        "repos/*/*/pulls/{pr}/comments/{}/unresolve",
        gitea_unresolve,
    ),
];

/// The answer to `method segs` (the path after the API prefix): the first route of the
/// forge's table that fits, after the forge's scope check; 404 when none fits.
pub(super) fn route(
    s: &mut Inner,
    method: &str,
    segs: &[&str],
    query: &str,
    body: &Value,
) -> Reply {
    if method == "GET" && segs == ["user"] {
        return token_user(s.kind);
    }
    let (table, segs) = match s.kind {
        ForgeKind::Github => (GITHUB, segs),
        ForgeKind::Gitea => (GITEA, segs),
        ForgeKind::Gitlab => match gitlab_scope(s, segs) {
            Ok(rest) => (GITLAB, rest),
            Err(refusal) => return refusal,
        },
    };
    if let ["repos", owner, name, ..] = segs
        && s.pr.slug != format!("{owner}/{name}")
    {
        return not_found();
    }
    let pr = s.pr.number.to_string();
    let found = table
        .iter()
        .filter(|Route(m, ..)| *m == method)
        .find_map(|Route(_, pattern, handler)| Some((matches(pattern, segs, &pr)?, handler)));
    match found {
        Some((args, handler)) => handler(s, &Call { args, query, body }),
        None => not_found(),
    }
}

/// The segments `pattern` captures from `segs`, or `None` when they do not fit.
fn matches<'a>(pattern: &str, segs: &[&'a str], pr: &str) -> Option<Vec<&'a str>> {
    let pattern: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    if pattern.len() != segs.len() {
        return None;
    }
    let mut args = Vec::new();
    for (p, seg) in pattern.iter().zip(segs) {
        match *p {
            "*" => {}
            "{}" => args.push(*seg),
            literal if literal.replace("{pr}", pr) == *seg => {}
            _ => return None,
        }
    }
    Some(args)
}

/// GitLab's path below the hosted merge request, or the refusal: 404 for a path of
/// another shape, GitLab's "Project Not Found" for another project or merge request.
fn gitlab_scope<'a, 'b>(s: &Inner, segs: &'b [&'a str]) -> Result<&'b [&'a str], Reply> {
    let ["projects", p, "merge_requests", i, rest @ ..] = segs else {
        return Err(not_found());
    };
    if *p != s.pr.slug.replace('/', "%2F") || *i != s.pr.number.to_string() {
        return Err(reply(404, json!({"message": "404 Project Not Found"})));
    }
    Ok(rest)
}

fn params(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One page of `items` (`per_page`/`limit` and `page`, 1-based).
fn page(items: Vec<Value>, query: &str, size_key: &str, default: usize) -> Reply {
    let p = params(query);
    let size = p
        .get(size_key)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .max(1);
    let n: usize = p
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let slice: Vec<Value> = items.into_iter().skip((n - 1) * size).take(size).collect();
    reply(200, Value::Array(slice))
}

fn body_text(body: &Value) -> Option<String> {
    body.get("body").and_then(Value::as_str).map(str::to_string)
}

/// Stores a summary-style comment with `text`; returns its id.
fn store_comment(s: &mut Inner, text: &str) -> u64 {
    let id = s.id();
    s.comments.push(StoredComment {
        id,
        discussion: None,
        body: text.to_string(),
        path: None,
        line: None,
        resolved: false,
        author: TOKEN_USER.into(),
    });
    id
}

fn edit(list: &mut [StoredComment], id: &str, body: &Value) -> Reply {
    match (
        list.iter_mut().find(|c| c.id.to_string() == id),
        body_text(body),
    ) {
        (Some(c), Some(text)) => {
            c.body = text;
            reply(200, json!({"id": c.id, "body": c.body}))
        }
        (None, _) => not_found(),
        (_, None) => reply(422, json!({"message": "body is required"})),
    }
}

fn edit_comment(s: &mut Inner, call: &Call<'_>) -> Reply {
    edit(&mut s.comments, call.args[0], call.body)
}

fn edit_inline(s: &mut Inner, call: &Call<'_>) -> Reply {
    edit(&mut s.inline, call.args[0], call.body)
}

/// GitHub's and Gitea's pull request.
fn pull_request(s: &mut Inner, _: &Call<'_>) -> Reply {
    reply(
        200,
        json!({"number": s.pr.number, "state": "open", "head": {"sha": s.pr.head_sha}, "base": {"sha": s.pr.base_sha}, "merge_base": s.pr.base_sha, "changed_files": s.pr.changed_files}),
    )
}

/// GitHub's and Gitea's issue comments.
fn issue_comments(s: &Inner) -> Vec<Value> {
    s.comments
        .iter()
        .map(|c| json!({"id": c.id, "body": c.body, "user": {"login": c.author, "type": "User"}}))
        .collect()
}

/// An issue comment from `call`'s body, or `missing` (422) without one.
fn post_issue_comment(s: &mut Inner, call: &Call<'_>, missing: Value) -> Reply {
    match body_text(call.body) {
        Some(text) => {
            let id = store_comment(s, &text);
            reply(201, json!({"id": id, "body": text}))
        }
        None => reply(422, missing),
    }
}

fn github_files(s: &mut Inner, call: &Call<'_>) -> Reply {
    let files = s
        .files
        .iter()
        .map(|f| {
            let mut v = json!({"filename": f.path, "status": f.status, "patch": f.patch});
            if f.old_path != f.path {
                v["previous_filename"] = json!(f.old_path);
            }
            v
        })
        .collect();
    page(files, call.query, "per_page", 30)
}

/// GitHub's compare of `BASE...HEAD`: the merge base is the pull request's base commit.
fn github_compare(s: &mut Inner, _: &Call<'_>) -> Reply {
    reply(200, json!({"merge_base_commit": {"sha": s.pr.base_sha}}))
}

fn github_comments(s: &mut Inner, call: &Call<'_>) -> Reply {
    page(issue_comments(s), call.query, "per_page", 30)
}

fn github_post_comment(s: &mut Inner, call: &Call<'_>) -> Reply {
    let missing = json!({"message": "Invalid request.\n\n\"body\" wasn't supplied."});
    post_issue_comment(s, call, missing)
}

fn github_review_comments(s: &mut Inner, call: &Call<'_>) -> Reply {
    let list = s.inline.iter().map(|c| json!({"id": c.id, "body": c.body, "path": c.path, "line": c.line, "side": "RIGHT", "user": {"login": c.author, "type": "User"}})).collect();
    page(list, call.query, "per_page", 30)
}

fn github_post_review_comment(s: &mut Inner, call: &Call<'_>) -> Reply {
    let body = call.body;
    let path = body
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let line = body.get("line").and_then(Value::as_u64).unwrap_or(0);
    let start = body
        .get("start_line")
        .and_then(Value::as_u64)
        .unwrap_or(line);
    let ok = body.get("commit_id").and_then(Value::as_str).is_some()
        && (start..=line).all(|l| s.commentable(&path, l));
    match (ok, body_text(body)) {
        (true, Some(text)) => {
            let id = s.id();
            s.inline.push(StoredComment {
                id,
                discussion: None,
                body: text.clone(),
                path: Some(path.clone()),
                line: Some(line as u32),
                resolved: false,
                author: TOKEN_USER.into(),
            });
            reply(
                201,
                json!({"id": id, "body": text, "path": path, "line": line}),
            )
        }
        _ => reply(
            422,
            json!({"message": "Validation Failed", "errors": ["pull_request_review_thread.line must be part of the diff"], "status": "422"}),
        ),
    }
}

fn merge_request(s: &mut Inner, _: &Call<'_>) -> Reply {
    reply(
        200,
        json!({"iid": s.pr.number, "sha": s.pr.head_sha, "state": "opened",
        "diff_refs": {"base_sha": s.pr.base_sha, "head_sha": s.pr.head_sha, "start_sha": s.pr.base_sha}}),
    )
}

fn gitlab_diffs(s: &mut Inner, call: &Call<'_>) -> Reply {
    let list = s.files.iter().map(|f| json!({"old_path": f.old_path, "new_path": f.path, "diff": f.patch,
        "new_file": f.status == "added", "deleted_file": f.status == "removed", "renamed_file": f.status == "renamed"})).collect();
    page(list, call.query, "per_page", 20)
}

fn gitlab_notes(s: &mut Inner, call: &Call<'_>) -> Reply {
    let mut list: Vec<Value> = s
        .comments
        .iter()
        .map(|c| json!({"id": c.id, "body": c.body, "system": false, "type": null, "author": {"username": c.author}}))
        .collect();
    list.extend(
        s.inline
            .iter()
            .map(|c| json!({"id": c.id, "body": c.body, "system": false, "type": "DiffNote"})),
    );
    page(list, call.query, "per_page", 20)
}

fn gitlab_post_note(s: &mut Inner, call: &Call<'_>) -> Reply {
    match body_text(call.body) {
        Some(text) => {
            let id = store_comment(s, &text);
            reply(201, json!({"id": id, "body": text, "system": false}))
        }
        None => reply(400, json!({"message": "400 Bad request - body is missing"})),
    }
}

fn gitlab_discussions(s: &mut Inner, call: &Call<'_>) -> Reply {
    let list = s
        .inline
        .iter()
        .map(|c| {
            json!({"id": c.discussion, "individual_note": false, "notes": [{
        "id": c.id, "type": "DiffNote", "body": c.body, "resolvable": true, "resolved": c.resolved,
        "author": {"username": c.author},
        "position": {"new_path": c.path, "new_line": c.line}}]})
        })
        .collect();
    page(list, call.query, "per_page", 20)
}

/// Whether a discussion's `position` fits the merge request: its SHAs, its type, a
/// commentable head line, and the old line exactly when the line is unchanged context.
fn gitlab_position_fits(s: &Inner, pos: &Value, path: &str, line: u64) -> bool {
    let sha = |key: &str| pos.get(key).and_then(Value::as_str);
    let shas_ok = sha("head_sha") == Some(s.pr.head_sha.as_str())
        && sha("base_sha") == Some(s.pr.base_sha.as_str())
        && sha("start_sha") == Some(s.pr.base_sha.as_str())
        && sha("position_type") == Some("text");
    // Unchanged lines need their old line too.
    let context = s
        .files
        .iter()
        .find(|f| f.path == path)
        .and_then(|f| f.context.get(&(line as u32)).copied());
    let old_ok = match context {
        Some(old) => pos.get("old_line").and_then(Value::as_u64) == Some(u64::from(old)),
        None => pos.get("old_line").is_none(),
    };
    shas_ok && old_ok && s.commentable(path, line)
}

fn gitlab_post_discussion(s: &mut Inner, call: &Call<'_>) -> Reply {
    let pos = call.body.get("position").cloned().unwrap_or(Value::Null);
    let path = pos
        .get("new_path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let line = pos.get("new_line").and_then(Value::as_u64).unwrap_or(0);
    match (
        gitlab_position_fits(s, &pos, &path, line),
        body_text(call.body),
    ) {
        (true, Some(text)) => {
            let id = s.id();
            let discussion = format!("{id:040x}");
            s.inline.push(StoredComment {
                id,
                discussion: Some(discussion.clone()),
                body: text.clone(),
                path: Some(path),
                line: Some(line as u32),
                resolved: false,
                author: TOKEN_USER.into(),
            });
            reply(
                201,
                json!({"id": discussion, "notes": [{"id": id, "body": text}]}),
            )
        }
        _ => reply(
            400,
            json!({"message": "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}"}),
        ),
    }
}

fn gitlab_resolve_discussion(s: &mut Inner, call: &Call<'_>) -> Reply {
    let d = call.args[0];
    let Some(resolved) = call.body.get("resolved").and_then(Value::as_bool) else {
        return reply(400, json!({"error": "resolved is missing"}));
    };
    match s
        .inline
        .iter_mut()
        .find(|c| c.discussion.as_deref() == Some(d))
    {
        Some(c) => {
            c.resolved = resolved;
            reply(
                200,
                json!({"id": d, "notes": [{"id": c.id, "resolved": resolved}]}),
            )
        }
        None => reply(404, json!({"message": "404 Not found"})),
    }
}

fn gitea_diff(s: &mut Inner, _: &Call<'_>) -> Reply {
    Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: s.pr.diff.clone(),
    }
}

fn gitea_comments(s: &mut Inner, _: &Call<'_>) -> Reply {
    reply(200, Value::Array(issue_comments(s)))
}

fn gitea_post_comment(s: &mut Inner, call: &Call<'_>) -> Reply {
    post_issue_comment(s, call, json!({"message": "body is required"}))
}

fn gitea_reviews(s: &mut Inner, call: &Call<'_>) -> Reply {
    let list = s
        .reviews
        .iter()
        .map(|(id, _)| json!({"id": id, "state": "COMMENT", "commit_id": s.pr.head_sha}))
        .collect();
    page(list, call.query, "limit", 50)
}

/// Gitea's resolver of a comment: a user when resolved, else `null`.
fn gitea_resolver(resolved: bool) -> Value {
    if resolved {
        json!({"login": "vouch-bot"})
    } else {
        Value::Null
    }
}

fn gitea_review_comments(s: &mut Inner, call: &Call<'_>) -> Reply {
    let rid = call.args[0];
    let Some((_, ids)) = s.reviews.iter().find(|(id, _)| id.to_string() == rid) else {
        return not_found();
    };
    let list = s
        .inline
        .iter()
        .filter(|c| ids.contains(&c.id))
        .map(|c| {
            json!({"id": c.id, "body": c.body, "path": c.path, "position": c.line,
                "resolver": gitea_resolver(c.resolved), "user": {"login": c.author}})
        })
        .collect();
    reply(200, Value::Array(list))
}

fn gitea_post_review(s: &mut Inner, call: &Call<'_>) -> Reply {
    let body = call.body;
    let comments = body
        .get("comments")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let valid = body.get("commit_id").and_then(Value::as_str).is_some()
        && comments.iter().all(|c| {
            let path = c.get("path").and_then(Value::as_str).unwrap_or("");
            let line = c.get("new_position").and_then(Value::as_u64).unwrap_or(0);
            s.commentable(path, line) && body_text(c).is_some()
        });
    if !valid {
        return reply(
            422,
            json!({"message": "a review comment is not on a line of the diff"}),
        );
    }
    let review = s.id();
    let mut ids = Vec::new();
    for c in comments {
        let id = s.id();
        ids.push(id);
        s.inline.push(StoredComment {
            id,
            discussion: None,
            body: body_text(&c).unwrap_or_default(),
            path: c.get("path").and_then(Value::as_str).map(str::to_string),
            line: c
                .get("new_position")
                .and_then(Value::as_u64)
                .map(|l| l as u32),
            resolved: false,
            author: TOKEN_USER.into(),
        });
    }
    s.reviews.push((review, ids));
    reply(200, json!({"id": review, "state": "COMMENT"}))
}

fn gitea_set_resolved(s: &mut Inner, id: &str, resolved: bool) -> Reply {
    match s.inline.iter_mut().find(|c| c.id.to_string() == id) {
        Some(c) => {
            c.resolved = resolved;
            reply(
                200,
                json!({"id": c.id, "resolver": gitea_resolver(c.resolved)}),
            )
        }
        None => not_found(),
    }
}

fn gitea_resolve(s: &mut Inner, call: &Call<'_>) -> Reply {
    gitea_set_resolved(s, call.args[0], true)
}

fn gitea_unresolve(s: &mut Inner, call: &Call<'_>) -> Reply {
    gitea_set_resolved(s, call.args[0], false)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_pattern_fits_by_literal_any_captured_and_pr_segments() {
        // (pattern, path, the captured segments joined by `,` when it fits)
        let cases = [
            ("repos/*/*/pulls/{pr}", "repos/o/r/pulls/7", Some("")),
            ("repos/*/*/pulls/{pr}", "repos/o/r/pulls/8", None),
            (
                "repos/*/*/pulls/{pr}.diff",
                "repos/o/r/pulls/7.diff",
                Some(""),
            ),
            ("repos/*/*/pulls/{pr}", "repos/o/r/pulls/7.diff", None),
            ("repos/*/*/pulls/{pr}", "repos/o/r/pulls/7/files", None),
            (
                "repos/*/*/pulls/{pr}/reviews/{}/comments",
                "repos/o/r/pulls/7/reviews/9/comments",
                Some("9"),
            ),
            ("notes/{}", "notes/1001", Some("1001")),
            ("notes/{}", "notes", None),
            ("", "", Some("")),
        ];
        for (pattern, path, want) in cases {
            let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            let got = matches(pattern, &segs, "7").map(|args| args.join(","));
            assert_eq!(got.as_deref(), want, "{pattern:?} {path:?}");
        }
    }
}
