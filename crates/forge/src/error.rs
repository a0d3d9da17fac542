//! Why publishing failed, in words that name what to fix. Never carries a token.

use crate::forge::Forge;

/// A publishing error.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// No token in the environment.
    #[error("no {forge} token: set {var} (or name another variable with --token-env) to a token that may comment on {noun}s", forge = .forge.display_name(), noun = .forge.pr_noun())]
    MissingToken {
        /// The forge.
        forge: Forge,
        /// The variable that was empty or unset.
        var: String,
    },
    /// HTTP 401.
    #[error("{forge} rejected the token in {var} (HTTP 401 while {what}): it is wrong, expired or revoked; set {var} to a valid token", forge = .forge.display_name())]
    Unauthorized {
        /// The forge.
        forge: Forge,
        /// Token variable.
        var: String,
        /// What vouch was doing.
        what: String,
    },
    /// HTTP 403 (not a rate limit).
    #[error("{forge} refused {what} (HTTP 403: {detail}): the token in {var} lacks permission; {hint}", forge = .forge.display_name())]
    Forbidden {
        /// The forge.
        forge: Forge,
        /// Token variable.
        var: String,
        /// What vouch was doing.
        what: String,
        /// The forge's message.
        detail: String,
        /// Which permission to grant.
        hint: &'static str,
    },
    /// HTTP 404.
    #[error("{forge} found nothing while {what} (HTTP 404 at {url}): check --repo-slug, --pr and --api-url; a token that cannot see a private repository also gets 404", forge = .forge.display_name())]
    NotFound {
        /// The forge.
        forge: Forge,
        /// What vouch was doing.
        what: String,
        /// The URL path (no query, no token).
        url: String,
    },
    /// HTTP 422 (or 400): the forge refused the content.
    #[error("{forge} rejected {what} (HTTP {status}: {detail})", forge = .forge.display_name())]
    Rejected {
        /// The forge.
        forge: Forge,
        /// What vouch was doing.
        what: String,
        /// Status code.
        status: u16,
        /// The forge's message.
        detail: String,
    },
    /// Rate limited and the wait is too long, or retries ran out.
    #[error("{forge} rate limit while {what}: {detail}; re-run the job after the limit resets", forge = .forge.display_name())]
    RateLimited {
        /// The forge.
        forge: Forge,
        /// What vouch was doing.
        what: String,
        /// When it resets, in words.
        detail: String,
    },
    /// Another HTTP status (5xx after retries).
    #[error("{forge} answered HTTP {status} while {what}: {detail}", forge = .forge.display_name())]
    Status {
        /// The forge.
        forge: Forge,
        /// What vouch was doing.
        what: String,
        /// Status code.
        status: u16,
        /// The forge's message.
        detail: String,
    },
    /// The request did not reach the forge.
    #[error("cannot reach {forge} at {url} while {what}: {detail}; check --api-url and the network", forge = .forge.display_name())]
    Transport {
        /// The forge.
        forge: Forge,
        /// What vouch was doing.
        what: String,
        /// The URL path.
        url: String,
        /// The transport error.
        detail: String,
    },
    /// An answer vouch cannot read.
    #[error("{forge} sent an answer vouch cannot read while {what}: {detail}; is --api-url the API root (GitHub: https://api.github.com, GitLab: …/api/v4, Gitea: …/api/v1)?", forge = .forge.display_name())]
    InvalidResponse {
        /// The forge.
        forge: Forge,
        /// What vouch was doing.
        what: String,
        /// What was wrong.
        detail: String,
    },
}

impl ForgeError {
    /// True for errors the user fixes in configuration (token, permissions, slug, URL).
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            ForgeError::MissingToken { .. }
                | ForgeError::Unauthorized { .. }
                | ForgeError::Forbidden { .. }
                | ForgeError::NotFound { .. }
                | ForgeError::InvalidResponse { .. }
        )
    }
}

/// What permission a forge's token needs to publish.
pub(crate) fn permission_hint(forge: Forge) -> &'static str {
    match forge {
        Forge::Github => {
            "give the workflow `permissions: pull-requests: write` (and `issues: write`), or use a token with the `repo` scope"
        }
        Forge::Gitlab => {
            "use a project or personal access token with the `api` scope and at least the Reporter role"
        }
        Forge::Gitea => "use a token with the `write:issue` and `write:repository` scopes",
    }
}
