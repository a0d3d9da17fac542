//! The REST clients: load a pull request's state (head, diff, vouch's earlier comments)
//! and execute a [`Plan`]. They decide nothing: every choice is in [`crate::plan`].

mod gitea;
mod github;
mod gitlab;

use reqwest::Method;
use serde_json::Value;

use crate::compose::{is_summary, marker_key};
use crate::diff::DiffLines;
use crate::error::ForgeError;
use crate::forge::{Forge, Target, Token};
use crate::http::Http;
use crate::plan::{Existing, ExistingInline, ExistingSummary, Plan};

/// Pages vouch reads of one list before it stops (100 items a page on GitHub and GitLab,
/// 50 on Gitea).
const MAX_PAGES: u32 = 50;

/// What a pull request carries now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrState {
    /// The pull request's current head commit.
    pub head_sha: String,
    /// Commentable lines of its diff, as the forge serves it.
    pub diff: DiffLines,
    /// vouch's comments on it.
    pub existing: Existing,
    /// GitLab's diff refs (base, start, head), needed to position a discussion.
    pub(crate) gitlab_refs: Option<gitlab::DiffRefs>,
    /// Its merge base, when the forge says.
    pub merge_base: Option<String>,
    /// False when the forge listed fewer files than the pull request changes.
    pub listed_all: bool,
}

/// What executing a plan did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Executed {
    /// The summary comment's id.
    pub summary_id: String,
    /// Things vouch could not do that need no failure (e.g. a Gitea without a resolve
    /// API), for the user.
    pub warnings: Vec<String>,
}

/// A client for one pull request on one forge.
#[derive(Debug, Clone)]
pub struct Api {
    http: Http,
    target: Target,
}

impl Api {
    /// A client for `target`, authenticating with `token`.
    pub fn new(target: Target, token: Token) -> Api {
        Api {
            http: Http::new(target.forge, token),
            target,
        }
    }

    /// Loads the head, the diff and vouch's earlier comments.
    ///
    /// # Errors
    /// A [`ForgeError`] naming what to fix.
    pub async fn load(&self) -> Result<PrState, ForgeError> {
        match self.target.forge {
            Forge::Github => github::load(self).await,
            Forge::Gitlab => gitlab::load(self).await,
            Forge::Gitea => gitea::load(self).await,
        }
    }

    /// Executes `plan`: inline actions first, the summary last.
    ///
    /// # Errors
    /// The first request that failed, as a [`ForgeError`]. Re-running is safe: nothing
    /// is posted twice.
    pub async fn execute(
        &self,
        plan: &Plan,
        state: &PrState,
        reviewed_head: &str,
    ) -> Result<Executed, ForgeError> {
        match self.target.forge {
            Forge::Github => github::execute(self, plan, reviewed_head).await,
            Forge::Gitlab => gitlab::execute(self, plan, state).await,
            Forge::Gitea => gitea::execute(self, plan, reviewed_head).await,
        }
    }

    fn url(&self, rest: &str) -> String {
        format!("{}/{}", self.target.api_url, rest)
    }

    async fn get_json(&self, rest: &str, what: &str) -> Result<Value, ForgeError> {
        self.http
            .send(Method::GET, &self.url(rest), None, what)
            .await?
            .json(self.target.forge, what)
    }

    async fn send_json(
        &self,
        method: Method,
        rest: &str,
        body: &Value,
        what: &str,
    ) -> Result<Value, ForgeError> {
        let answer = self
            .http
            .send(method, &self.url(rest), Some(body), what)
            .await?;
        if answer.text.trim().is_empty() {
            return Ok(Value::Null);
        }
        answer.json(self.target.forge, what)
    }

    /// Every item of a paginated list: full pages ([`page_size`]) until a short page,
    /// [`MAX_PAGES`] at most.
    async fn get_all(&self, rest: &str, what: &str) -> Result<Vec<Value>, ForgeError> {
        let (size_param, size) = page_size(self.target.forge);
        let mut items = Vec::new();
        let sep = if rest.contains('?') { '&' } else { '?' };
        for page in 1..=MAX_PAGES {
            let value = self
                .get_json(&format!("{rest}{sep}{size_param}={size}&page={page}"), what)
                .await?;
            let Value::Array(list) = value else {
                return Err(self.invalid(what, "expected a JSON array"));
            };
            let short = list.len() < size;
            items.extend(list);
            if short {
                break;
            }
        }
        Ok(items)
    }

    fn invalid(&self, what: &str, detail: &str) -> ForgeError {
        ForgeError::InvalidResponse {
            forge: self.target.forge,
            what: what.to_string(),
            detail: detail.to_string(),
        }
    }

    fn noun(&self) -> String {
        format!("{} {}", self.target.forge.pr_noun(), self.target.display())
    }
}

/// How a forge pages a list: the query parameter of the page size and the size vouch
/// asks for (the most each forge serves).
fn page_size(forge: Forge) -> (&'static str, usize) {
    match forge {
        Forge::Github | Forge::Gitlab => ("per_page", 100),
        Forge::Gitea => ("limit", 50),
    }
}

/// Who a pull request's comments must be written by to be vouch's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Writer {
    /// The token's user, as the forge's `GET /user` names it.
    User(String),
    /// GitHub did not say who the token is (GitHub Actions' `GITHUB_TOKEN` and app
    /// tokens may not read `/user`): only a bot account's comment.
    GithubBot,
}

impl Api {
    /// Who the token is (`GET /user`: `login` on GitHub and Gitea, `username` on
    /// GitLab). On GitHub a token that may not read it gets [`Writer::GithubBot`]; on
    /// GitLab and Gitea the publish stops, naming what to grant, rather than trust every
    /// author's comment.
    ///
    /// # Errors
    /// The forge's error for `/user` (GitLab, Gitea; on GitHub other than 403 and 404),
    /// or an answer that names no user.
    async fn writer(&self) -> Result<Writer, ForgeError> {
        let forge = self.target.forge;
        let (key, what) = match forge {
            Forge::Github => ("login", "reading the token's user"),
            Forge::Gitlab => (
                "username",
                "reading the token's user (vouch tells its own comments from others' by it)",
            ),
            Forge::Gitea => (
                "login",
                "reading the token's user (vouch tells its own comments from others' by it; \
                 a Gitea token needs the read:user scope)",
            ),
        };
        match self.get_json("user", what).await {
            Ok(user) => match user.get(key).and_then(Value::as_str) {
                Some(name) if !name.is_empty() => Ok(Writer::User(name.to_string())),
                _ if forge == Forge::Github => Ok(Writer::GithubBot),
                _ => Err(self.invalid(what, &format!("no `{key}` in the answer"))),
            },
            Err(ForgeError::Forbidden { .. } | ForgeError::NotFound { .. })
                if forge == Forge::Github =>
            {
                Ok(Writer::GithubBot)
            }
            Err(e) => Err(e),
        }
    }
}

/// Rule (the summary is vouch's own): a comment is vouch's summary when it starts with
/// the summary marker, has an id, and was written by the token's user ([`Writer`]), so a
/// comment another user wrote with the marker is never edited or trusted.
fn existing_summary(comment: &Value, writer: &Writer, forge: Forge) -> Option<ExistingSummary> {
    let body = str_of(comment, "body");
    let id = id_of(comment, "id")?;
    (written_by(comment, writer, forge) && is_summary(body)).then(|| ExistingSummary {
        id,
        body: body.to_string(),
    })
}

/// Whether the token's user ([`Writer`]) wrote `comment` (a note or comment as the forge
/// serves it): its author's name is the token's user's; when GitHub did not say who the
/// token is, a bot account.
fn written_by(comment: &Value, writer: &Writer, forge: Forge) -> bool {
    let author = match forge {
        Forge::Gitlab => comment.pointer("/author/username"),
        Forge::Github | Forge::Gitea => comment.pointer("/user/login"),
    }
    .and_then(Value::as_str);
    match writer {
        Writer::User(name) => author == Some(name.as_str()),
        Writer::GithubBot => comment.pointer("/user/type").and_then(Value::as_str) == Some("Bot"),
    }
}

/// An inline comment (or discussion, by `id`) that is vouch's: its body carries a
/// finding's marker (its caller keeps only comments the token's user wrote,
/// [`written_by`]).
fn existing_inline(id: Option<String>, body: &str, resolved: bool) -> Option<ExistingInline> {
    Some(ExistingInline {
        key: marker_key(body)?,
        id: id?,
        body: body.to_string(),
        resolved,
    })
}

/// A JSON field as a string (numbers are written out: ids are numbers on most forges).
fn id_of(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Carries out the summary action on forges whose pull-request comments are issue
/// comments with the same REST shape (GitHub and Gitea); returns the summary's id.
async fn apply_issue_comment_summary(
    api: &Api,
    t: &Target,
    summary: &crate::plan::SummaryAction,
) -> Result<String, ForgeError> {
    use crate::plan::SummaryAction;
    use serde_json::json;
    Ok(match summary {
        SummaryAction::Create { body } => {
            let v = api
                .send_json(
                    Method::POST,
                    &format!("repos/{}/issues/{}/comments", t.repo_slug, t.number),
                    &json!({"body": body}),
                    "posting the summary comment",
                )
                .await?;
            id_of(&v, "id").unwrap_or_default()
        }
        SummaryAction::Update { id, body } => {
            api.send_json(
                Method::PATCH,
                &format!("repos/{}/issues/comments/{id}", t.repo_slug),
                &json!({"body": body}),
                "updating the summary comment",
            )
            .await?;
            id.clone()
        }
        SummaryAction::Unchanged { id } => id.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::compose::SUMMARY_MARKER;

    #[test]
    fn a_summary_is_the_token_users_or_on_github_a_bots_when_unknown() {
        let body = format!("{SUMMARY_MARKER}\nx");
        let github = |login: &str, kind: &str| json!({"id": 1, "body": body, "user": {"login": login, "type": kind}});
        let gitlab = |name: &str| json!({"id": 1, "body": body, "author": {"username": name}});
        let me = Writer::User("vouch-bot".into());
        // (comment, writer, forge, is vouch's summary)
        let cases = [
            (github("vouch-bot", "User"), &me, Forge::Github, true),
            (github("mallory", "User"), &me, Forge::Github, false),
            (
                github("github-actions[bot]", "Bot"),
                &Writer::GithubBot,
                Forge::Github,
                true,
            ),
            (
                github("mallory", "User"),
                &Writer::GithubBot,
                Forge::Github,
                false,
            ),
            (gitlab("vouch-bot"), &me, Forge::Gitlab, true),
            (gitlab("mallory"), &me, Forge::Gitlab, false),
            (github("mallory", "User"), &me, Forge::Gitea, false),
            (github("vouch-bot", "User"), &me, Forge::Gitea, true),
            (
                json!({"id": 1, "body": format!("> {SUMMARY_MARKER}"), "user": {"login": "vouch-bot"}}),
                &me,
                Forge::Github,
                false,
            ),
        ];
        for (comment, writer, forge, summary) in &cases {
            assert_eq!(
                existing_summary(comment, writer, *forge).is_some(),
                *summary,
                "{comment} {writer:?} {forge:?}"
            );
        }
    }
}
