//! Gitea REST v1: an issue comment for the summary, one pull-request review carrying the
//! new inline comments, and the review-comment resolve endpoints.

use reqwest::Method;
use serde_json::{Value, json};

use super::{Api, Executed, PrState, existing_inline, existing_summary, id_of, str_of, written_by};
use crate::Forge;
use crate::diff::DiffLines;
use crate::error::ForgeError;
use crate::plan::{Existing, InlineAction, Plan};

pub(super) async fn load(api: &Api) -> Result<PrState, ForgeError> {
    let t = &api.target;
    let pr_path = format!("repos/{}/pulls/{}", t.repo_slug, t.number);
    let what = format!("reading {}", api.noun());
    let pr = api.get_json(&pr_path, &what).await?;
    let head_sha = pr
        .pointer("/head/sha")
        .and_then(Value::as_str)
        .ok_or_else(|| api.invalid(&what, "no head.sha"))?
        .to_string();
    let diff_text = api
        .http
        .send(
            Method::GET,
            &api.url(&format!("{pr_path}.diff")),
            None,
            "reading the pull request's diff",
        )
        .await?
        .text;
    let diff = DiffLines::from_unified(&diff_text);
    let comments = api
        .get_json(
            &format!("repos/{}/issues/{}/comments", t.repo_slug, t.number),
            "reading the comments",
        )
        .await?;
    let writer = api.writer().await?;
    let mut existing = Existing {
        summaries: comments
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| existing_summary(c, &writer, Forge::Gitea))
            .collect(),
        inline: Vec::new(),
    };
    let reviews = api
        .get_all(&format!("{pr_path}/reviews"), "reading the reviews")
        .await?;
    for review_id in reviews.iter().filter_map(|r| id_of(r, "id")) {
        let list = api
            .get_json(
                &format!("{pr_path}/reviews/{review_id}/comments"),
                "reading a review's comments",
            )
            .await?;
        existing
            .inline
            .extend(list.as_array().into_iter().flatten().filter_map(|c| {
                if !written_by(c, &writer, Forge::Gitea) {
                    return None;
                }
                let resolved = c.get("resolver").is_some_and(|r| !r.is_null());
                existing_inline(id_of(c, "id"), str_of(c, "body"), resolved)
            }));
    }
    let merge_base = pr
        .get("merge_base")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let listed_all = pr
        .get("changed_files")
        .and_then(Value::as_u64)
        .is_none_or(|n| diff.paths().count() as u64 >= n);
    Ok(PrState {
        head_sha,
        diff,
        existing,
        gitlab_refs: None,
        merge_base,
        listed_all,
    })
}

pub(super) async fn execute(
    api: &Api,
    plan: &Plan,
    reviewed_head: &str,
) -> Result<Executed, ForgeError> {
    let t = &api.target;
    let pr_path = format!("repos/{}/pulls/{}", t.repo_slug, t.number);
    let mut warnings = Vec::new();
    let comments: Vec<Value> = plan
        .inline
        .iter()
        .filter_map(|a| match a {
            InlineAction::Create(d) => Some(
                json!({"path": d.path, "body": d.body, "new_position": d.line, "old_position": 0}),
            ),
            _ => None,
        })
        .collect();
    if !comments.is_empty() {
        let body = json!({
            "event": "COMMENT",
            "body": format!("vouch: {} verified finding(s) on changed lines; the summary comment has the whole review.", comments.len()),
            "commit_id": reviewed_head,
            "comments": comments,
        });
        api.send_json(
            Method::POST,
            &format!("{pr_path}/reviews"),
            &body,
            "posting the inline comments as a review",
        )
        .await?;
    }
    for action in &plan.inline {
        let (id, verb) = match action {
            InlineAction::Resolve { id, .. } => (id, "resolve"),
            InlineAction::Reopen { id, .. } => (id, "unresolve"),
            InlineAction::Create(_) | InlineAction::Keep { .. } => continue,
        };
        let what = format!("marking review comment {id} with {verb}");
        match api.send_json(Method::POST, &format!("{pr_path}/comments/{id}/{verb}"), &json!({}), &what).await {
            Ok(_) => {}
            // Gitea gained these endpoints late (go-gitea/gitea#36441): older servers 404.
            Err(ForgeError::NotFound { .. }) => warnings.push(format!(
                "this Gitea has no API to {verb} review comment {id} (it arrived with go-gitea/gitea#36441); {verb} it by hand"
            )),
            Err(e) => return Err(e),
        }
    }
    let summary_id = super::apply_issue_comment_summary(api, t, &plan.summary).await?;
    Ok(Executed {
        summary_id,
        warnings,
    })
}
