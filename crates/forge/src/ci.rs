//! The pull request a CI job runs for, read from the CI environment: GitHub Actions'
//! event payload (`GITHUB_EVENT_PATH`), GitLab CI's `CI_MERGE_REQUEST_*` variables and
//! Gitea Actions' event payload (GitHub-compatible, detected by `GITEA_ACTIONS`).

use std::path::Path;

use serde_json::Value;

use crate::forge::{Forge, Target};

/// The pull request and the change it proposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestEnv {
    /// Where to publish.
    pub target: Target,
    /// The base commit (GitLab: the merge request's diff base).
    pub base_sha: String,
    /// The head commit.
    pub head_sha: String,
    /// Title.
    pub title: Option<String>,
    /// Description.
    pub body: Option<String>,
}

/// Why the environment names no pull request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CiError {
    /// Not GitHub Actions, GitLab CI or Gitea Actions.
    #[error(
        "--pr-from-env found no CI environment (GITHUB_ACTIONS, GITLAB_CI or GITEA_ACTIONS); outside CI give --base/--head (and --forge, --repo-slug, --pr to publish)"
    )]
    NotCi,
    /// A CI job, but not for a pull request.
    #[error("{0}")]
    NotAPullRequest(String),
    /// A variable the forge always sets is missing.
    #[error("--pr-from-env: {var} is not set; {hint}")]
    Missing {
        /// The variable.
        var: &'static str,
        /// What to do.
        hint: &'static str,
    },
    /// The event payload cannot be read.
    #[error("--pr-from-env: cannot read the event payload {path}: {detail}")]
    Event {
        /// Its path.
        path: String,
        /// What went wrong.
        detail: String,
    },
    /// A value is malformed.
    #[error("--pr-from-env: {0}")]
    Invalid(String),
}

/// Rule (CI environment): Gitea Actions (`GITEA_ACTIONS=true`) and GitHub Actions
/// (`GITHUB_ACTIONS=true`) describe the pull request in the event payload at
/// `GITHUB_EVENT_PATH` (`pull_request.number/title/body/base.sha/head.sha`); GitLab CI
/// (`GITLAB_CI=true`) in `CI_MERGE_REQUEST_IID`, `CI_MERGE_REQUEST_DIFF_BASE_SHA`,
/// `CI_MERGE_REQUEST_SOURCE_BRANCH_SHA` (else `CI_COMMIT_SHA`), `CI_MERGE_REQUEST_TITLE`
/// and `CI_MERGE_REQUEST_DESCRIPTION`. A job that is not for a pull request is an error
/// saying which trigger to use.
pub fn pull_request_from_env(
    var: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<PullRequestEnv, CiError> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    let is_true = |name: &str| set(name).is_some_and(|v| v == "true");
    if is_true("GITEA_ACTIONS") {
        actions(Forge::Gitea, &set, read)
    } else if is_true("GITHUB_ACTIONS") {
        actions(Forge::Github, &set, read)
    } else if is_true("GITLAB_CI") {
        gitlab(&set)
    } else {
        Err(CiError::NotCi)
    }
}

fn actions(
    forge: Forge,
    set: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<PullRequestEnv, CiError> {
    let path = set("GITHUB_EVENT_PATH").ok_or(CiError::Missing {
        var: "GITHUB_EVENT_PATH",
        hint: "run vouch inside the workflow job's steps",
    })?;
    let text = read(Path::new(&path)).map_err(|e| CiError::Event {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    let event: Value = serde_json::from_str(&text).map_err(|e| CiError::Event {
        path: path.clone(),
        detail: format!("not JSON ({e})"),
    })?;
    let Some(pr) = event.get("pull_request").filter(|v| v.is_object()) else {
        let name = set("GITHUB_EVENT_NAME").unwrap_or_else(|| "unknown".into());
        return Err(CiError::NotAPullRequest(format!(
            "--pr-from-env: the workflow ran for the `{name}` event, not a pull request; trigger it with `on: pull_request` (or `pull_request_target`)"
        )));
    };
    let sha = |side: &str| {
        pr.pointer(&format!("/{side}/sha"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| {
                CiError::Invalid(format!("the event payload has no pull_request.{side}.sha"))
            })
    };
    let number = pr
        .get("number")
        .or_else(|| event.get("number"))
        .and_then(Value::as_u64)
        .ok_or_else(|| CiError::Invalid("the event payload has no pull_request.number".into()))?;
    let slug = event
        .pointer("/repository/full_name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| set("GITHUB_REPOSITORY"))
        .ok_or(CiError::Missing {
            var: "GITHUB_REPOSITORY",
            hint: "run vouch inside the workflow job's steps",
        })?;
    let api = match (forge, set("GITHUB_API_URL")) {
        (_, Some(api)) => api,
        (Forge::Github, None) => "https://api.github.com".to_string(),
        (_, None) => set("GITHUB_SERVER_URL")
            .map(|s| format!("{}/api/v1", s.trim_end_matches('/')))
            .ok_or(CiError::Missing {
                var: "GITHUB_SERVER_URL",
                hint: "Gitea Actions sets it; give --api-url otherwise",
            })?,
    };
    let text_of = |key: &str| {
        pr.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(PullRequestEnv {
        target: Target::new(forge, &api, &slug, number).map_err(CiError::Invalid)?,
        base_sha: sha("base")?,
        head_sha: sha("head")?,
        title: text_of("title"),
        body: text_of("body"),
    })
}

fn gitlab(set: &dyn Fn(&str) -> Option<String>) -> Result<PullRequestEnv, CiError> {
    let Some(iid) = set("CI_MERGE_REQUEST_IID") else {
        let source = set("CI_PIPELINE_SOURCE").unwrap_or_else(|| "unknown".into());
        return Err(CiError::NotAPullRequest(format!(
            "--pr-from-env: this is a `{source}` pipeline, not a merge-request pipeline; run the job with `rules: - if: $CI_PIPELINE_SOURCE == \"merge_request_event\"`"
        )));
    };
    let number = iid
        .parse::<u64>()
        .map_err(|_| CiError::Invalid(format!("CI_MERGE_REQUEST_IID `{iid}` is not a number")))?;
    let base_sha = set("CI_MERGE_REQUEST_DIFF_BASE_SHA").ok_or(CiError::Missing {
        var: "CI_MERGE_REQUEST_DIFF_BASE_SHA",
        hint: "use a merge-request pipeline (GitLab 13.4 or later)",
    })?;
    let head_sha = set("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")
        .or_else(|| set("CI_COMMIT_SHA"))
        .ok_or(CiError::Missing {
            var: "CI_COMMIT_SHA",
            hint: "run vouch inside the CI job",
        })?;
    let slug = set("CI_MERGE_REQUEST_PROJECT_PATH")
        .or_else(|| set("CI_PROJECT_PATH"))
        .ok_or(CiError::Missing {
            var: "CI_PROJECT_PATH",
            hint: "run vouch inside the CI job",
        })?;
    let api = set("CI_API_V4_URL").ok_or(CiError::Missing {
        var: "CI_API_V4_URL",
        hint: "run vouch inside the CI job",
    })?;
    Ok(PullRequestEnv {
        target: Target::new(Forge::Gitlab, &api, &slug, number).map_err(CiError::Invalid)?,
        base_sha,
        head_sha,
        title: set("CI_MERGE_REQUEST_TITLE"),
        body: set("CI_MERGE_REQUEST_DESCRIPTION"),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    const PR_EVENT: &str = r#"{"action":"opened","number":7,"pull_request":{"number":7,"title":"Widen ports","body":"Fixes parsing.","base":{"sha":"b1"},"head":{"sha":"h1"}},"repository":{"full_name":"acme/widgets"}}"#;

    fn run(vars: &[(&str, &str)], event: &str) -> Result<PullRequestEnv, CiError> {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let event = event.to_string();
        pull_request_from_env(&|k| map.get(k).cloned(), &move |p| {
            if p == Path::new("/ev.json") {
                Ok(event.clone())
            } else {
                Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file",
                ))
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn ok(
        forge: Forge,
        api: &str,
        slug: &str,
        n: u64,
        base: &str,
        head: &str,
        title: Option<&str>,
        body: Option<&str>,
    ) -> Result<PullRequestEnv, CiError> {
        Ok(PullRequestEnv {
            target: Target::new(forge, api, slug, n).unwrap(),
            base_sha: base.into(),
            head_sha: head.into(),
            title: title.map(str::to_string),
            body: body.map(str::to_string),
        })
    }

    #[test]
    fn environments_table() {
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, Vec<(&str, &str)>, &str, Result<PullRequestEnv, CiError>)> = vec![
            ("github pull_request", vec![("GITHUB_ACTIONS", "true"), ("GITHUB_EVENT_PATH", "/ev.json")], PR_EVENT,
                ok(Forge::Github, "https://api.github.com", "acme/widgets", 7, "b1", "h1", Some("Widen ports"), Some("Fixes parsing."))),
            ("github enterprise api url", vec![("GITHUB_ACTIONS", "true"), ("GITHUB_EVENT_PATH", "/ev.json"), ("GITHUB_API_URL", "https://ghe.example/api/v3")], PR_EVENT,
                ok(Forge::Github, "https://ghe.example/api/v3", "acme/widgets", 7, "b1", "h1", Some("Widen ports"), Some("Fixes parsing."))),
            ("gitea wins over its GitHub-compatible variables", vec![("GITEA_ACTIONS", "true"), ("GITHUB_ACTIONS", "true"), ("GITHUB_EVENT_PATH", "/ev.json"), ("GITHUB_SERVER_URL", "https://gitea.example/")], PR_EVENT,
                ok(Forge::Gitea, "https://gitea.example/api/v1", "acme/widgets", 7, "b1", "h1", Some("Widen ports"), Some("Fixes parsing."))),
            ("github push event", vec![("GITHUB_ACTIONS", "true"), ("GITHUB_EVENT_PATH", "/ev.json"), ("GITHUB_EVENT_NAME", "push")], r#"{"ref":"refs/heads/main"}"#,
                Err(CiError::NotAPullRequest("--pr-from-env: the workflow ran for the `push` event, not a pull request; trigger it with `on: pull_request` (or `pull_request_target`)".into()))),
            ("github without event path", vec![("GITHUB_ACTIONS", "true")], PR_EVENT,
                Err(CiError::Missing { var: "GITHUB_EVENT_PATH", hint: "run vouch inside the workflow job's steps" })),
            ("github event file missing", vec![("GITHUB_ACTIONS", "true"), ("GITHUB_EVENT_PATH", "/nope.json")], PR_EVENT,
                Err(CiError::Event { path: "/nope.json".into(), detail: "no such file".into() })),
            ("gitlab merge request", vec![("GITLAB_CI", "true"), ("CI_MERGE_REQUEST_IID", "12"), ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "mb"), ("CI_COMMIT_SHA", "c1"), ("CI_PROJECT_PATH", "grp/sub/app"), ("CI_API_V4_URL", "https://gitlab.example/api/v4"), ("CI_MERGE_REQUEST_TITLE", "T"), ("CI_MERGE_REQUEST_DESCRIPTION", "")], "",
                ok(Forge::Gitlab, "https://gitlab.example/api/v4", "grp/sub/app", 12, "mb", "c1", Some("T"), None)),
            ("gitlab merged-results pipeline uses the source branch sha", vec![("GITLAB_CI", "true"), ("CI_MERGE_REQUEST_IID", "12"), ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "mb"), ("CI_COMMIT_SHA", "merge"), ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "src"), ("CI_MERGE_REQUEST_PROJECT_PATH", "grp/app"), ("CI_PROJECT_PATH", "fork/app"), ("CI_API_V4_URL", "https://gitlab.example/api/v4")], "",
                ok(Forge::Gitlab, "https://gitlab.example/api/v4", "grp/app", 12, "mb", "src", None, None)),
            ("gitlab branch pipeline", vec![("GITLAB_CI", "true"), ("CI_PIPELINE_SOURCE", "push")], "",
                Err(CiError::NotAPullRequest("--pr-from-env: this is a `push` pipeline, not a merge-request pipeline; run the job with `rules: - if: $CI_PIPELINE_SOURCE == \"merge_request_event\"`".into()))),
            ("gitlab bad iid", vec![("GITLAB_CI", "true"), ("CI_MERGE_REQUEST_IID", "x1")], "",
                Err(CiError::Invalid("CI_MERGE_REQUEST_IID `x1` is not a number".into()))),
            ("no ci", vec![("CI", "true")], "", Err(CiError::NotCi)),
        ];
        for (name, vars, event, expected) in cases {
            assert_eq!(run(&vars, event), expected, "{name}");
        }
    }

    #[test]
    fn hostile_payloads_are_errors_not_panics() {
        let vars = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_PATH", "/ev.json"),
        ];
        for event in [
            "",
            "[]",
            "null",
            r#"{"pull_request":{}}"#,
            r#"{"pull_request":{"number":-1,"base":{"sha":"b"},"head":{"sha":"h"}},"repository":{"full_name":"a/b"}}"#,
            r#"{"pull_request":{"number":1,"base":{"sha":"b"},"head":{"sha":"h"}},"repository":{"full_name":"a b/c"}}"#,
        ] {
            assert!(run(&vars, event).is_err(), "{event}");
        }
    }
}
