//! `vouch review`: snapshot, plan, run, report.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use tokio_util::sync::CancellationToken;
use vouch_core::{FailOn, exit_code};
use vouch_host::diagnostics::{DiagnosticSink, JsonLines};
use vouch_host::manifest::EndpointFlags;
use vouch_host::progress::{Presenter, Silent};
use vouch_host::review::{PullRequestText, ReviewRequest, ReviewServices, ToolsMode};
use vouch_host::settings::UserSettings;
use vouch_llm::Exchanges;
use vouch_report::ReviewReport;

use crate::exchange::{self, ExchangeArgs};
use crate::output::{OutputArgs, Outputs};
use crate::presenter::TerminalPresenter;
use crate::{UsageError, builtins};

/// `--fail-on` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailOnArg {
    /// Exit 1 when verified findings are published.
    Finding,
    /// Exit 1 for findings and for limited coverage.
    Limited,
    /// Exit 0 for every completed review.
    Never,
}

/// `--tools` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ToolsArg {
    /// Tools unless the manifest says otherwise.
    Auto,
    /// Offer the repository tools.
    On,
    /// No tools: patches and context inline.
    Off,
}

/// Arguments of `vouch review`.
#[derive(Debug, Args)]
pub(crate) struct ReviewArgs {
    /// The git repository to review (any folder inside it).
    #[arg(long, default_value = ".")]
    pub(crate) repo: PathBuf,
    /// Base revision; the reviewed change is merge-base(base, head)..head. Default: the
    /// merge base with the default branch (origin/HEAD, main, master).
    #[arg(long)]
    pub(crate) base: Option<String>,
    /// Head revision (branch, tag, SHA, HEAD~3, ...).
    #[arg(long, default_value = "HEAD")]
    pub(crate) head: String,
    /// Composition manifest (TOML). Default: the built-in default composition.
    #[arg(long)]
    pub(crate) manifest: Option<PathBuf>,
    /// Where the report goes, in which formats.
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    /// When to exit 1: on verified findings, also on limited coverage, or never.
    #[arg(long, value_enum, default_value_t = FailOnArg::Finding)]
    pub(crate) fail_on: FailOnArg,
    /// OpenAI-compatible base URL (else OPENAI_BASE_URL, else the manifest).
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Model name (else VOUCH_MODEL, else the manifest).
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Name of the environment variable holding the API key (default OPENAI_API_KEY).
    #[arg(long)]
    pub(crate) api_key_env: Option<String>,
    /// Whether models get repository tools.
    #[arg(long, value_enum)]
    pub(crate) tools: Option<ToolsArg>,
    /// Stage instances running at once, 1 to 64 (overrides the manifest).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) concurrency: Option<u16>,
    /// Per-request timeout in seconds, at least 1 (overrides the manifest).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) timeout: Option<u64>,
    /// Pull-request title (intent for the outcome investigator).
    #[arg(long)]
    pub(crate) pr_title: Option<String>,
    /// Pull-request body.
    #[arg(long, conflicts_with = "pr_body_file")]
    pub(crate) pr_body: Option<String>,
    /// File holding the pull-request body.
    #[arg(long)]
    pub(crate) pr_body_file: Option<PathBuf>,
    /// Ignore the reviewed repository's .vouch/review.toml.
    #[arg(long)]
    pub(crate) no_repo_config: bool,
    /// Endpoint profile of the user configuration (VOUCH_CONFIG, else
    /// $XDG_CONFIG_HOME/vouch/config.toml); default: its `profile` key.
    #[arg(long)]
    pub(crate) profile: Option<String>,
    /// Response cache, recording and replay.
    #[command(flatten)]
    pub(crate) exchange: ExchangeArgs,
    /// Reading the change from CI and publishing to the pull request.
    #[command(flatten)]
    pub(crate) ci: crate::publish::ReviewPublishArgs,
}

fn pr_text(args: &ReviewArgs) -> Result<PullRequestText> {
    let body = match &args.pr_body_file {
        Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
            UsageError(format!(
                "cannot read --pr-body-file {}: {e}",
                path.display()
            ))
        })?),
        None => args.pr_body.clone(),
    };
    Ok(PullRequestText {
        title: args.pr_title.clone(),
        body,
    })
}

/// The command as the report's replay commands and command ledger record it, every
/// URL's credentials redacted ([`without_credentials`]).
fn command_line() -> String {
    let mut parts = vec!["vouch".to_string()];
    parts.extend(std::env::args().skip(1).map(|a| {
        let a = without_credentials(&a);
        if a.contains(' ') { format!("{a:?}") } else { a }
    }));
    parts.join(" ")
}

/// Rule (no key in a report): `arg` with the user information of each URL in it
/// (`https://user:password@host/…` → `https://[redacted]@host/…`) replaced, so a
/// `--base-url` that carries credentials never reaches a report or its replay command.
fn without_credentials(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail.find(['/', '?', '#']).unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match authority.rfind('@') {
            Some(user_end) => {
                out.push_str("[redacted]");
                out.push_str(&authority[user_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    out
}

/// `--tools on|off` overrides the manifest; `--tools auto` (or none) keeps its setting.
fn tools_override(args: &ReviewArgs) -> Option<ToolsMode> {
    match args.tools {
        Some(ToolsArg::On) => Some(ToolsMode::On),
        Some(ToolsArg::Off) => Some(ToolsMode::Off),
        Some(ToolsArg::Auto) | None => None,
    }
}

/// Runs `vouch review`; returns the exit code. Every requested document is this run's:
/// the report, or (after any error, before or during the review) the format's failure
/// document. Publishing (`--publish`) follows once the documents are written.
pub(crate) async fn run(mut args: ReviewArgs) -> Result<i32> {
    let outputs = match Outputs::prepare_or_fail(&args.output)? {
        Ok(outputs) => outputs,
        Err(code) => return Ok(code),
    };
    let reviewed = async {
        let publish_to = publish_target(&mut args)?;
        let (report, code) = review(&args).await?;
        Ok::<_, anyhow::Error>((report, code, publish_to))
    }
    .await;
    match reviewed {
        Ok((report, code, publish_to)) => {
            if let Some(failed) = outputs.write_report_or_failure(&report)? {
                // A document could not be written: stdout holds the failure document,
                // and nothing is published to the pull request.
                return Ok(failed);
            }
            if let Some((target, token)) = publish_to {
                // With a document on stdout, nothing else may follow it there.
                let announce = !outputs.has_stdout();
                crate::publish::publish_report(&report, &target, token, announce).await?;
            }
            Ok(code)
        }
        Err(error) => outputs.write_failure(&error),
    }
}

/// `--pr-from-env` fills base, head, title and body from the CI environment; with
/// `--publish`, the pull request and the token are resolved before any model call.
fn publish_target(
    args: &mut ReviewArgs,
) -> Result<Option<(vouch_forge::Target, vouch_forge::Token)>> {
    let pr_env = if args.ci.pr_from_env {
        let env = crate::publish::pr_from_env()?;
        args.base = Some(env.base_sha.clone());
        args.head = env.head_sha.clone();
        args.pr_title = args.pr_title.take().or(env.title.clone());
        if args.pr_body_file.is_none() {
            args.pr_body = args.pr_body.take().or(env.body.clone());
        }
        Some(env)
    } else {
        None
    };
    if args.ci.publish {
        Ok(Some(crate::publish::resolve(
            &args.ci.target,
            pr_env.as_ref(),
        )?))
    } else {
        Ok(None)
    }
}

/// Reviews the change (through the exchange layer the flags name); returns the checked
/// report and the exit code its opinion gives.
async fn review(args: &ReviewArgs) -> Result<(ReviewReport, i32)> {
    let exchanges = exchange::open(&args.exchange)?;
    let report = review_report(args, exchanges.clone()).await;
    exchange::end_recording(exchanges.as_deref(), &report);
    let report = report?;
    exchange::check_replay(exchanges.as_deref())?;
    let fail_on = match args.fail_on {
        FailOnArg::Finding => FailOn::Finding,
        FailOnArg::Limited => FailOn::Limited,
        FailOnArg::Never => FailOn::Never,
    };
    let code = exit_code(&report.opinion, fail_on);
    Ok((report, code))
}

/// Runs one review as `args` describe it and returns its self-checked report (nothing
/// is printed or written). Every model request goes through `exchanges` when given.
pub(crate) async fn review_report(
    args: &ReviewArgs,
    exchanges: Option<Arc<Exchanges>>,
) -> Result<ReviewReport> {
    let settings = UserSettings::load(args.profile.as_deref(), builtins::ids())?;
    let request = ReviewRequest {
        repo: args.repo.clone(),
        base: args.base.clone(),
        head: args.head.clone(),
        settings,
        manifest: args.manifest.clone(),
        endpoint: EndpointFlags {
            base_url: args.base_url.clone(),
            model: args.model.clone(),
            api_key_env: args.api_key_env.clone(),
        },
        tools: tools_override(args),
        concurrency: args.concurrency.map(usize::from),
        timeout: args.timeout.map(std::time::Duration::from_secs),
        pull_request: pr_text(args)?,
        repo_config: !args.no_repo_config,
        inline_bytes: composition_inline_bytes(),
        exchanges,
        command_line: command_line(),
    };
    // Register for SIGINT and SIGTERM before the change is prepared, so Ctrl-C or a
    // plain `kill` at any moment ends the review as `aborted`, with its report written.
    let cancel = CancellationToken::new();
    let ctrl_c = cancel_on_signals(&cancel)?;
    let sinks = Sinks::new();
    let services = ReviewServices {
        builtins: builtins::tables(),
        presenter: presenter(sinks.interactive),
        diagnostics: sinks.diagnostics.clone(),
        cancel,
        working_set_dropped: crate::heap::release_free,
    };
    let outcome = vouch_host::review::run(request, services).await;
    ctrl_c.abort();
    sinks.held.flush();
    Ok(outcome?.report)
}

/// Where a review's progress and diagnostics go.
struct Sinks {
    /// Whether the review shows its progress on a terminal.
    interactive: bool,
    /// On a terminal the progress display owns stderr: diagnostics wait here for its end.
    held: Arc<crate::presenter::HeldDiagnostics>,
    /// Held on a terminal, else JSON lines on stderr; with `--quiet`, only the lines
    /// that report a problem.
    diagnostics: Arc<dyn DiagnosticSink>,
}

impl Sinks {
    fn new() -> Sinks {
        let interactive = interactive();
        let held = Arc::new(crate::presenter::HeldDiagnostics::default());
        let diagnostics: Arc<dyn DiagnosticSink> = if interactive {
            held.clone()
        } else {
            Arc::new(JsonLines::new(std::io::stderr()))
        };
        let diagnostics: Arc<dyn DiagnosticSink> = if crate::ui::get().quiet {
            Arc::new(vouch_host::diagnostics::Quiet(diagnostics))
        } else {
            diagnostics
        };
        Sinks {
            interactive,
            held,
            diagnostics,
        }
    }
}

/// Whether the review shows its progress on a terminal (not in CI, not `--quiet`).
fn interactive() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none() && !crate::ui::get().quiet
}

/// The progress display: on a terminal when `interactive`, else none.
fn presenter(interactive: bool) -> Arc<dyn Presenter> {
    if interactive {
        Arc::new(TerminalPresenter::new())
    } else {
        Arc::new(Silent)
    }
}

/// Cancels `cancel` on the first SIGINT or SIGTERM (the task ends then).
fn cancel_on_signals(cancel: &CancellationToken) -> Result<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut terminate =
        signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let cancel = cancel.clone();
    Ok(tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        cancel.cancel();
    }))
}

/// Bytes of source given inline per stage execution, when `VOUCH_INLINE_BYTES` sets it
/// (unset: each shard's budget; see docs/manifests.md, "Shards and the request bound").
fn composition_inline_bytes() -> Option<usize> {
    std::env::var("VOUCH_INLINE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::without_credentials;

    #[test]
    fn a_urls_credentials_never_reach_the_recorded_command() {
        for (arg, recorded) in [
            (
                "http://alice:s3cretpw@host:8080/v1",
                "http://[redacted]@host:8080/v1",
            ),
            (
                "--base-url=https://tok@host/v1",
                "--base-url=https://[redacted]@host/v1",
            ),
            ("https://a:b@c@host", "https://[redacted]@host"),
            ("https://host/v1?x=a@b", "https://host/v1?x=a@b"),
            ("https://host/v1", "https://host/v1"),
            ("user@example.com", "user@example.com"),
            ("HEAD~1", "HEAD~1"),
            (
                "a=http://u:p@one/ b=http://u:p@two",
                "a=http://[redacted]@one/ b=http://[redacted]@two",
            ),
        ] {
            assert_eq!(without_credentials(arg), recorded, "{arg}");
        }
    }
}
