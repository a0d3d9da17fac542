//! `vouch publish` and the publishing flags of `vouch review` (`--publish`,
//! `--pr-from-env`): which pull request, which token, and running the publish.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use vouch_forge::ci::{PullRequestEnv, pull_request_from_env};
use vouch_forge::{Forge, ForgeError, Target, Token};
use vouch_report::{ReportError, ReviewReport};

use crate::UsageError;

/// The pull request to publish to (each flag overrides what `--pr-from-env` read).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct TargetArgs {
    /// Forge to publish to: github, gitlab or gitea.
    #[arg(long, value_parser = parse_forge)]
    pub(crate) forge: Option<Forge>,
    /// Repository as OWNER/NAME (GitLab: the project path, groups included).
    #[arg(long)]
    pub(crate) repo_slug: Option<String>,
    /// Pull-request number (GitLab: the merge request's IID).
    #[arg(long)]
    pub(crate) pr: Option<u64>,
    /// API root (default https://api.github.com, https://gitlab.com/api/v4; Gitea: required,
    /// e.g. https://gitea.example.com/api/v1).
    #[arg(long)]
    pub(crate) api_url: Option<String>,
    /// Environment variable holding the token (default GITHUB_TOKEN, GITLAB_TOKEN or
    /// GITEA_TOKEN).
    #[arg(long)]
    pub(crate) token_env: Option<String>,
}

fn parse_forge(s: &str) -> Result<Forge, String> {
    s.parse()
}

/// Arguments of `vouch publish`.
#[derive(Debug, Args)]
pub(crate) struct PublishArgs {
    /// A JSON report written by `vouch review --format json --out FILE`.
    pub(crate) report: PathBuf,
    /// Read the forge, repository and pull request from the CI environment (GitHub
    /// Actions, GitLab CI, Gitea Actions).
    #[arg(long)]
    pub(crate) pr_from_env: bool,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// The CI-environment and publishing flags of `vouch review`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ReviewPublishArgs {
    /// Review the pull request this CI job runs for: base, head, title and body from
    /// the CI environment (GitHub Actions event payload, GitLab CI merge-request
    /// variables, Gitea Actions event payload).
    #[arg(long, conflicts_with_all = ["base", "head"])]
    pub(crate) pr_from_env: bool,
    /// After the review, publish it to the pull request (see `vouch publish`).
    #[arg(long)]
    pub(crate) publish: bool,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// Reads the pull request from the process's CI environment.
pub(crate) fn pr_from_env() -> Result<PullRequestEnv> {
    pull_request_from_env(&|name| std::env::var(name).ok(), &|path| {
        std::fs::read_to_string(path)
    })
    .map_err(|e| UsageError(e.to_string()).into())
}

/// The target and token: flags first, then what the CI environment said.
pub(crate) fn resolve(args: &TargetArgs, env: Option<&PullRequestEnv>) -> Result<(Target, Token)> {
    let usage = |m: String| anyhow::Error::new(UsageError(m));
    let forge = args.forge.or(env.map(|e| e.target.forge)).ok_or_else(|| {
        usage(
            "give --forge github|gitlab|gitea with --repo-slug and --pr (or --pr-from-env in CI)"
                .into(),
        )
    })?;
    let slug = args
        .repo_slug
        .clone()
        .or(env.map(|e| e.target.repo_slug.clone()))
        .ok_or_else(|| usage("give --repo-slug OWNER/NAME (or --pr-from-env in CI)".into()))?;
    let number = args.pr.or(env.map(|e| e.target.number)).ok_or_else(|| {
        usage(format!(
            "give --pr N, the {} number (or --pr-from-env in CI)",
            forge.pr_noun()
        ))
    })?;
    let env_api = env
        .filter(|e| e.target.forge == forge)
        .map(|e| e.target.api_url.clone());
    let api = args
        .api_url
        .clone()
        .or(env_api)
        .or(forge.default_api_url().map(str::to_string))
        .ok_or_else(|| {
            usage("give --api-url for Gitea, e.g. https://gitea.example.com/api/v1".into())
        })?;
    let target = Target::new(forge, &api, &slug, number).map_err(usage)?;
    let var = args
        .token_env
        .clone()
        .unwrap_or_else(|| forge.default_token_env().to_string());
    let token = match std::env::var(&var) {
        Ok(v) if !v.trim().is_empty() => Token::new(v.trim(), &var),
        _ => return Err(usage(ForgeError::MissingToken { forge, var }.to_string())),
    };
    Ok((target, token))
}

/// Publishes `report`; prints what was done when `announce` (stdout may carry the report
/// document itself, which must stay valid). Configuration errors (token, permission,
/// slug, URL) exit 3, others 2.
pub(crate) async fn publish_report(
    report: &ReviewReport,
    target: &Target,
    token: Token,
    announce: bool,
) -> Result<()> {
    match vouch_forge::publish(report, target, token).await {
        Ok(done) if !announce => {
            tracing::info!("{}", done.line(target));
            Ok(())
        }
        Ok(done) => {
            let mut text = crate::stdout::Text::default();
            text.line(done.line(target));
            for w in &done.warnings {
                text.line(format_args!("warning: {w}"));
            }
            Ok(text.print("what was published")?)
        }
        Err(e) if e.is_configuration() => Err(UsageError(format!("publishing failed: {e}")).into()),
        Err(e) => Err(anyhow::anyhow!("publishing failed: {e}")),
    }
}

/// Runs `vouch publish`; returns the exit code.
pub(crate) async fn run(args: PublishArgs) -> Result<i32> {
    let env = if args.pr_from_env {
        Some(pr_from_env()?)
    } else {
        None
    };
    let (target, token) = resolve(&args.target, env.as_ref())?;
    let report = read_report(&args.report)?;
    publish_report(&report, &target, token, true).await?;
    Ok(0)
}

/// Reads and checks a saved JSON report ([`vouch_report::read_report_text`]).
fn read_report(path: &std::path::Path) -> Result<ReviewReport> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read the report {}: {e}", path.display())))?;
    let report = vouch_report::read_report_text(&text).map_err(|e| match e {
        ReportError::Rule(_) | ReportError::FinalReport(_) => UsageError(format!(
            "{} fails the report check, so it is not published: {e}",
            path.display()
        )),
        _ => UsageError(format!(
            "{} is not a vouch JSON report ({e}); write one with `vouch review --format json --out FILE`",
            path.display()
        )),
    })?;
    Ok(report)
}
