//! GitHub REST v3: issue comments for the summary, pull-request review comments inline.
//! A review thread cannot be resolved through REST, so a gone finding's comment is
//! marked by editing its body.

use reqwest::Method;
use serde_json::{Value, json};

use super::{Api, Executed, PrState, existing_inline, existing_summary, id_of, str_of, written_by};
use crate::Forge;
use crate::compose::RESOLVED_MARKER;
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
    let mut diff = DiffLines::default();
    let files = api
        .get_all(&format!("{pr_path}/files"), "reading the changed files")
        .await?;
    for f in &files {
        let path = str_of(f, "filename");
        let old = f
            .get("previous_filename")
            .and_then(Value::as_str)
            .unwrap_or(path);
        diff.add_patch(path, old, str_of(f, "patch"));
    }
    let issue_comments = format!("repos/{}/issues/{}/comments", t.repo_slug, t.number);
    let comments = api.get_all(&issue_comments, "reading the comments").await?;
    let review_comments = api
        .get_all(
            &format!("{pr_path}/comments"),
            "reading the review comments",
        )
        .await?;
    let writer = api.writer().await?;
    let existing = Existing {
        summaries: comments
            .iter()
            .filter_map(|c| existing_summary(c, &writer, Forge::Github))
            .collect(),
        inline: review_comments
            .iter()
            .filter(|c| written_by(c, &writer, Forge::Github))
            .filter_map(|c| {
                let body = str_of(c, "body");
                existing_inline(id_of(c, "id"), body, body.contains(RESOLVED_MARKER))
            })
            .collect(),
    };
    let merge_base = merge_base(api, &pr, &head_sha).await;
    let listed_all = pr
        .get("changed_files")
        .and_then(Value::as_u64)
        .is_none_or(|n| files.len() as u64 >= n);
    Ok(PrState {
        head_sha,
        diff,
        existing,
        gitlab_refs: None,
        merge_base,
        listed_all,
    })
}

/// The pull request's merge base: GitHub's compare of its base and head
/// (`merge_base_commit`); `None` when GitHub does not say.
async fn merge_base(api: &Api, pr: &Value, head: &str) -> Option<String> {
    let base = pr.pointer("/base/sha").and_then(Value::as_str)?;
    let path = format!("repos/{}/compare/{base}...{head}", api.target.repo_slug);
    let compared = api
        .get_json(&path, "comparing the pull request's base and head")
        .await
        .ok()?;
    compared
        .pointer("/merge_base_commit/sha")
        .and_then(Value::as_str)
        .map(str::to_string)
}

pub(super) async fn execute(
    api: &Api,
    plan: &Plan,
    reviewed_head: &str,
) -> Result<Executed, ForgeError> {
    let t = &api.target;
    for action in &plan.inline {
        match action {
            InlineAction::Create(d) => {
                let mut body = json!({"body": d.body, "commit_id": reviewed_head, "path": d.path, "line": d.line, "side": "RIGHT"});
                if d.start_line < d.line {
                    body["start_line"] = json!(d.start_line);
                    body["start_side"] = json!("RIGHT");
                }
                let what = format!("posting an inline comment on {} line {}", d.path, d.line);
                api.send_json(
                    Method::POST,
                    &format!("repos/{}/pulls/{}/comments", t.repo_slug, t.number),
                    &body,
                    &what,
                )
                .await?;
            }
            InlineAction::Resolve { id, body } | InlineAction::Reopen { id, body } => {
                let what = format!("editing review comment {id}");
                api.send_json(
                    Method::PATCH,
                    &format!("repos/{}/pulls/comments/{id}", t.repo_slug),
                    &json!({"body": body}),
                    &what,
                )
                .await?;
            }
            InlineAction::Keep { .. } => {}
        }
    }
    let summary_id = super::apply_issue_comment_summary(api, t, &plan.summary).await?;
    Ok(Executed {
        summary_id,
        warnings: Vec::new(),
    })
}
