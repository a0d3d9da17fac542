//! GitLab REST v4: a merge-request note for the summary, diff discussions inline,
//! resolved through the discussions API.

use reqwest::Method;
use serde_json::{Value, json};

use super::{Api, Executed, PrState, existing_inline, existing_summary, id_of, str_of, written_by};
use crate::Forge;
use crate::diff::DiffLines;
use crate::error::ForgeError;
use crate::plan::{Existing, InlineAction, Plan, SummaryAction};

/// The SHAs a diff discussion's position names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffRefs {
    base_sha: String,
    start_sha: String,
    head_sha: String,
}

/// The project path as one URL path segment (`group/name` → `group%2Fname`).
fn project(slug: &str) -> String {
    slug.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn mr_path(api: &Api) -> String {
    format!(
        "projects/{}/merge_requests/{}",
        project(&api.target.repo_slug),
        api.target.number
    )
}

pub(super) async fn load(api: &Api) -> Result<PrState, ForgeError> {
    let mr = mr_path(api);
    let what = format!("reading {}", api.noun());
    let v = api.get_json(&mr, &what).await?;
    let refs = |k: &str| {
        v.pointer(&format!("/diff_refs/{k}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (Some(base_sha), Some(start_sha), Some(head_sha)) =
        (refs("base_sha"), refs("start_sha"), refs("head_sha"))
    else {
        return Err(api.invalid(&what, "no diff_refs (base_sha, start_sha, head_sha)"));
    };
    let mut diff = DiffLines::default();
    let diffs = api
        .get_all(&format!("{mr}/diffs"), "reading the merge request's diffs")
        .await?;
    for d in &diffs {
        let path = str_of(d, "new_path");
        let old = d.get("old_path").and_then(Value::as_str).unwrap_or(path);
        diff.add_patch(path, old, str_of(d, "diff"));
    }
    let notes = api
        .get_all(
            &format!("{mr}/notes?sort=asc&order_by=created_at"),
            "reading the notes",
        )
        .await?;
    let discussions = api
        .get_all(&format!("{mr}/discussions"), "reading the discussions")
        .await?;
    let writer = api.writer().await?;
    let existing = Existing {
        summaries: notes
            .iter()
            .filter(|n| !n.get("system").and_then(Value::as_bool).unwrap_or(false))
            .filter_map(|n| existing_summary(n, &writer, Forge::Gitlab))
            .collect(),
        inline: discussions
            .iter()
            .filter_map(|d| {
                let first = d
                    .pointer("/notes/0")
                    .filter(|n| written_by(n, &writer, Forge::Gitlab))?;
                let resolved = first
                    .get("resolved")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                existing_inline(id_of(d, "id"), str_of(first, "body"), resolved)
            })
            .collect(),
    };
    // `changes_count` is a string, "1000+" when GitLab stopped counting.
    let listed_all = match v.get("changes_count").and_then(Value::as_str) {
        Some(count) if count.ends_with('+') => false,
        Some(count) => count.parse::<usize>().ok().is_none_or(|n| diffs.len() >= n),
        None => true,
    };
    let merge_base = Some(base_sha.clone());
    let gitlab_refs = Some(DiffRefs {
        base_sha,
        start_sha,
        head_sha: head_sha.clone(),
    });
    Ok(PrState {
        head_sha,
        diff,
        existing,
        gitlab_refs,
        merge_base,
        listed_all,
    })
}

pub(super) async fn execute(
    api: &Api,
    plan: &Plan,
    state: &PrState,
) -> Result<Executed, ForgeError> {
    let mr = mr_path(api);
    for action in &plan.inline {
        match action {
            InlineAction::Create(d) => {
                let refs = state
                    .gitlab_refs
                    .as_ref()
                    .ok_or_else(|| api.invalid("positioning a discussion", "no diff_refs"))?;
                let mut position = json!({
                    "position_type": "text",
                    "base_sha": refs.base_sha, "start_sha": refs.start_sha, "head_sha": refs.head_sha,
                    "old_path": d.old_path, "new_path": d.path, "new_line": d.line,
                });
                if let Some(old) = d.old_line {
                    position["old_line"] = json!(old);
                }
                let what = format!("starting a discussion on {} line {}", d.path, d.line);
                api.send_json(
                    Method::POST,
                    &format!("{mr}/discussions"),
                    &json!({"body": d.body, "position": position}),
                    &what,
                )
                .await?;
            }
            InlineAction::Resolve { id, .. } => {
                api.send_json(
                    Method::PUT,
                    &format!("{mr}/discussions/{id}"),
                    &json!({"resolved": true}),
                    &format!("resolving discussion {id}"),
                )
                .await?;
            }
            InlineAction::Reopen { id, .. } => {
                api.send_json(
                    Method::PUT,
                    &format!("{mr}/discussions/{id}"),
                    &json!({"resolved": false}),
                    &format!("reopening discussion {id}"),
                )
                .await?;
            }
            InlineAction::Keep { .. } => {}
        }
    }
    let summary_id = match &plan.summary {
        SummaryAction::Create { body } => {
            let v = api
                .send_json(
                    Method::POST,
                    &format!("{mr}/notes"),
                    &json!({"body": body}),
                    "posting the summary note",
                )
                .await?;
            id_of(&v, "id").unwrap_or_default()
        }
        SummaryAction::Update { id, body } => {
            api.send_json(
                Method::PUT,
                &format!("{mr}/notes/{id}"),
                &json!({"body": body}),
                "updating the summary note",
            )
            .await?;
            id.clone()
        }
        SummaryAction::Unchanged { id } => id.clone(),
    };
    Ok(Executed {
        summary_id,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn project_path_is_one_segment() {
        assert_eq!(super::project("group/sub/my.repo"), "group%2Fsub%2Fmy.repo");
        assert_eq!(super::project("a b?#/c"), "a%20b%3F%23%2Fc");
    }
}
