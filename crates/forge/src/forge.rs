//! Which forge, which pull request, and the token to talk to it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A forge vouch can publish to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Forge {
    /// GitHub (REST v3, `Authorization: Bearer`).
    Github,
    /// GitLab (REST v4, `PRIVATE-TOKEN`).
    Gitlab,
    /// Gitea or Forgejo (REST v1, `Authorization: token`).
    Gitea,
}

impl Forge {
    /// Every forge, in the order the help lists them.
    pub const ALL: [Forge; 3] = [Forge::Github, Forge::Gitlab, Forge::Gitea];

    /// The command-line and JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Forge::Github => "github",
            Forge::Gitlab => "gitlab",
            Forge::Gitea => "gitea",
        }
    }

    /// The forge's name for people.
    pub fn display_name(self) -> &'static str {
        match self {
            Forge::Github => "GitHub",
            Forge::Gitlab => "GitLab",
            Forge::Gitea => "Gitea",
        }
    }

    /// The environment variable the token is read from unless `--token-env` names another.
    pub fn default_token_env(self) -> &'static str {
        match self {
            Forge::Github => "GITHUB_TOKEN",
            Forge::Gitlab => "GITLAB_TOKEN",
            Forge::Gitea => "GITEA_TOKEN",
        }
    }

    /// The public API root used when no `--api-url` is given (Gitea has none: every
    /// instance is self-hosted).
    pub fn default_api_url(self) -> Option<&'static str> {
        match self {
            Forge::Github => Some("https://api.github.com"),
            Forge::Gitlab => Some("https://gitlab.com/api/v4"),
            Forge::Gitea => None,
        }
    }

    /// What the forge calls a pull request.
    pub fn pr_noun(self) -> &'static str {
        match self {
            Forge::Gitlab => "merge request",
            Forge::Github | Forge::Gitea => "pull request",
        }
    }
}

impl fmt::Display for Forge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Forge {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Forge::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown forge `{s}`: use github, gitlab or gitea"))
    }
}

/// The pull request to publish to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The forge.
    pub forge: Forge,
    /// The API root, e.g. `https://api.github.com`, `https://gitlab.example/api/v4`,
    /// `https://gitea.example/api/v1` (no trailing slash).
    pub api_url: String,
    /// `OWNER/NAME` (GitLab: the project's full path, groups included).
    pub repo_slug: String,
    /// The pull-request number (GitLab: the merge request's IID).
    pub number: u64,
}

impl Target {
    /// Checks the slug (`OWNER/NAME`, no empty part, no whitespace) and trims the API
    /// URL's trailing slash.
    ///
    /// # Errors
    /// A message naming the bad value and what a good one looks like.
    pub fn new(
        forge: Forge,
        api_url: &str,
        repo_slug: &str,
        number: u64,
    ) -> Result<Target, String> {
        let parts: Vec<&str> = repo_slug.split('/').collect();
        let nested_ok = forge == Forge::Gitlab || parts.len() == 2;
        if parts.len() < 2
            || !nested_ok
            || parts
                .iter()
                .any(|p| p.is_empty() || p.contains(char::is_whitespace))
        {
            return Err(format!(
                "--repo-slug `{repo_slug}` is not OWNER/NAME{}",
                if forge == Forge::Gitlab {
                    " (or GROUP/SUBGROUP/NAME)"
                } else {
                    ""
                }
            ));
        }
        let api = api_url.trim_end_matches('/');
        if !(api.starts_with("https://") || api.starts_with("http://")) {
            return Err(format!(
                "--api-url `{api_url}` is not an http(s) URL (e.g. {})",
                forge
                    .default_api_url()
                    .unwrap_or("https://gitea.example.com/api/v1")
            ));
        }
        if number == 0 {
            return Err("--pr must be a pull-request number of at least 1".into());
        }
        Ok(Target {
            forge,
            api_url: api.to_string(),
            repo_slug: repo_slug.to_string(),
            number,
        })
    }

    /// `OWNER/NAME#N` (GitLab: `OWNER/NAME!N`), for messages.
    pub fn display(&self) -> String {
        let sign = if self.forge == Forge::Gitlab {
            '!'
        } else {
            '#'
        };
        format!("{}{sign}{}", self.repo_slug, self.number)
    }
}

/// An API token. Its Debug never shows it; it leaves this crate only in an auth header.
#[derive(Clone)]
pub struct Token {
    value: String,
    /// The environment variable it came from (named in error messages).
    pub source: String,
}

impl Token {
    /// A token read from the environment variable `source`.
    pub fn new(value: impl Into<String>, source: impl Into<String>) -> Token {
        Token {
            value: value.into(),
            source: source.into(),
        }
    }

    pub(crate) fn expose(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(from {}, redacted)", self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forge_names_round_trip() {
        for f in Forge::ALL {
            assert_eq!(f.as_str().parse::<Forge>(), Ok(f));
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
        }
        assert!(
            "bitbucket"
                .parse::<Forge>()
                .unwrap_err()
                .contains("github, gitlab or gitea")
        );
    }

    #[test]
    fn target_checks_slug_url_and_number() {
        let cases: &[(Forge, &str, &str, u64, bool)] = &[
            (Forge::Github, "https://api.github.com/", "o/r", 1, true),
            (Forge::Github, "https://api.github.com", "o/r/x", 1, false),
            (
                Forge::Gitlab,
                "https://gitlab.com/api/v4",
                "g/sub/r",
                1,
                true,
            ),
            (Forge::Github, "https://api.github.com", "o/", 1, false),
            (Forge::Github, "https://api.github.com", "or", 1, false),
            (Forge::Gitea, "gitea.example", "o/r", 1, false),
            (Forge::Gitea, "http://gitea.example/api/v1", "o/r", 0, false),
            (
                Forge::Gitea,
                "http://gitea.example/api/v1",
                "o /r",
                3,
                false,
            ),
        ];
        for (forge, api, slug, n, ok) in cases {
            assert_eq!(
                Target::new(*forge, api, slug, *n).is_ok(),
                *ok,
                "{forge} {api} {slug} {n}"
            );
        }
        let t = Target::new(Forge::Github, "https://api.github.com/", "o/r", 7).unwrap();
        assert_eq!(t.api_url, "https://api.github.com");
        assert_eq!(t.display(), "o/r#7");
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = Token::new("ghp_secret", "GITHUB_TOKEN");
        let shown = format!("{t:?}");
        assert!(!shown.contains("ghp_secret"), "{shown}");
        assert!(shown.contains("GITHUB_TOKEN"));
    }
}
