//! `vouch review`: snapshot, plan, run, report.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use tokio_util::sync::CancellationToken;
use vouch_core::{ChangeSnapshot, CoverageLevel, FailOn, Outcome, exit_code};
use vouch_final_report::{LocalRangeReview, ReviewOutcome, checked_local_range_review_report};
use vouch_git::SourceReader;
use vouch_host::diagnostics::{DiagnosticSink, JsonLines};
use vouch_host::manifest::{
    Composition, EndpointFlags, REPO_OVERRIDE_PATH, RepoOverrides, ResolvedEndpoint,
    ToolsMode as ManifestTools,
};
use vouch_host::progress::{Presenter, Silent};
use vouch_host::registry::Registry;
use vouch_host::review::{
    PullRequestText, ReviewEnv, ReviewPlan, ReviewRun, ToolsMode, build_plan, collect_policy,
    detect_intent, run_review,
};
use vouch_llm::{EndpointConfig, ModelClient};
use vouch_report::{
    Format, REPORT_SCHEMA_VERSION, ReviewReport, StructuredOutputs, ToolInfo, check_report, render,
};

use crate::presenter::TerminalPresenter;
use crate::{UsageError, builtins};

/// Output format flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The canonical JSON report.
    Json,
    /// Markdown for people.
    Markdown,
    /// SARIF 2.1.0.
    Sarif,
    /// reviewdog rdjson.
    Rdjson,
}

/// `--fail-on` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// Exit 1 when verified findings are published.
    Finding,
    /// Exit 1 for findings and for limited coverage.
    Limited,
    /// Exit 0 for every completed review.
    Never,
}

/// `--tools` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolsArg {
    /// Tools unless the manifest says otherwise.
    Auto,
    /// Offer the repository tools.
    On,
    /// No tools: patches and context inline.
    Off,
}

/// Arguments of `vouch review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The git repository to review (any folder inside it).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Base revision; the reviewed change is merge-base(base, head)..head. Default: the
    /// merge base with the default branch (origin/HEAD, main, master).
    #[arg(long)]
    pub base: Option<String>,
    /// Head revision (branch, tag, SHA, HEAD~3, ...).
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// Composition manifest (TOML). Default: the built-in default composition.
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Markdown)]
    pub format: FormatArg,
    /// Write the report to this file instead of stdout (stdout then gets a summary).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// When to exit 1: on verified findings, also on limited coverage, or never.
    #[arg(long, value_enum, default_value_t = FailOnArg::Finding)]
    pub fail_on: FailOnArg,
    /// OpenAI-compatible base URL (else OPENAI_BASE_URL, else the manifest).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name (else VOUCH_MODEL, else the manifest).
    #[arg(long)]
    pub model: Option<String>,
    /// Name of the environment variable holding the API key (default OPENAI_API_KEY).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Whether models get repository tools.
    #[arg(long, value_enum)]
    pub tools: Option<ToolsArg>,
    /// Stage instances running at once, 1 to 64 (overrides the manifest).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: Option<u16>,
    /// Per-request timeout in seconds, at least 1 (overrides the manifest).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// Pull-request title (intent for the outcome investigator).
    #[arg(long)]
    pub pr_title: Option<String>,
    /// Pull-request body.
    #[arg(long, conflicts_with = "pr_body_file")]
    pub pr_body: Option<String>,
    /// File holding the pull-request body.
    #[arg(long)]
    pub pr_body_file: Option<PathBuf>,
    /// Ignore the reviewed repository's .vouch/review.toml.
    #[arg(long)]
    pub no_repo_config: bool,
    /// Endpoint profile of the user configuration (VOUCH_CONFIG, else
    /// $XDG_CONFIG_HOME/vouch/config.toml); default: its `profile` key.
    #[arg(long)]
    pub profile: Option<String>,
    /// Reading the change from CI and publishing to the pull request.
    #[command(flatten)]
    pub ci: crate::publish::ReviewPublishArgs,
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

/// Applies the reviewed repository's `.vouch/review.toml` from the **base** tree.
fn apply_repo_config(
    composition: &mut Composition,
    reader: &SourceReader,
) -> Result<Option<String>> {
    let Some(text) = reader
        .read_text(vouch_core::Revision::Base, REPO_OVERRIDE_PATH)
        .map_err(|e| {
            UsageError(format!(
                "cannot read {REPO_OVERRIDE_PATH} from the base tree: {e}"
            ))
        })?
    else {
        return Ok(None);
    };
    let overrides = RepoOverrides::from_toml_str(&text).map_err(|e| UsageError(e.to_string()))?;
    composition
        .apply_repo_overrides(&overrides)
        .map_err(|e| UsageError(e.to_string()))?;
    Ok(Some(format!(
        "applied the repository's {REPO_OVERRIDE_PATH} (read from the base tree)"
    )))
}

fn command_line() -> String {
    let mut parts = vec!["vouch".to_string()];
    parts.extend(
        std::env::args()
            .skip(1)
            .map(|a| if a.contains(' ') { format!("{a:?}") } else { a }),
    );
    parts.join(" ")
}

fn outcome_for_final_report(run: &ReviewRun) -> ReviewOutcome {
    let cov = match run.opinion.coverage {
        Some(CoverageLevel::Full) => Some("full"),
        Some(CoverageLevel::Limited) => Some("limited"),
        None => None,
    };
    let outcome = serde_json::to_value(run.opinion.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    ReviewOutcome::parse(&outcome, cov).unwrap_or(ReviewOutcome::Incomplete)
}

/// The one-line summary. Counts of reviewed files count only the files reviewed (in an
/// accepted receipt and seen in full), never the changed or expected files.
fn summary(run: &ReviewRun) -> String {
    let files = run.files_reviewed.len();
    let unreviewed = match run.files_not_reviewed.len() {
        0 => String::new(),
        n => format!(" ({n} other changed file(s) not reviewed, listed in the report)"),
    };
    match run.opinion.outcome {
        Outcome::NothingToReview if run.snapshot.merge_base == run.snapshot.head.sha
            && run.snapshot.base.sha != run.snapshot.head.sha =>
        {
            "Nothing to review: head is an ancestor of base, so the change merge-base(base, head)..head is empty (were base and head swapped?). No model was called.".into()
        }
        Outcome::NothingToReview => {
            "Nothing to review: the range changes no file. No model was called.".into()
        }
        Outcome::Aborted => {
            "The review was cancelled before it finished; nothing is published.".into()
        }
        Outcome::Incomplete => format!(
            "The review could not finish ({} failure(s)); no finding is published.",
            run.failures.len()
        ),
        Outcome::Findings => format!(
            "{} verified finding(s) in {files} reviewed file(s){unreviewed}.",
            run.findings.len()
        ),
        Outcome::NoFindings if run.opinion.clean => {
            format!("Clean: no verified finding in {files} reviewed file(s), full coverage.")
        }
        Outcome::NoFindings => format!(
            "No verified finding in {files} reviewed file(s){unreviewed}; not a clean opinion (see below)."
        ),
    }
}

/// Assembles and self-checks the report of a run.
pub fn build_report(
    repo: &Path,
    composition: &str,
    run: &ReviewRun,
    fell_back: bool,
    requested: bool,
    notes: Vec<String>,
) -> Result<ReviewReport> {
    let snapshot: &ChangeSnapshot = &run.snapshot;
    let summary = summary(run);
    let final_report = checked_local_range_review_report(&LocalRangeReview {
        repository: repo.display().to_string(),
        base_sha: snapshot.merge_base.clone(),
        head_sha: snapshot.head.sha.clone(),
        files_reviewed: run.files_reviewed.clone(),
        outcome: outcome_for_final_report(run),
        narrative: format!("vouch read-only review of a local range. {summary}"),
        command_line: command_line(),
    })
    .context("vouch's own final report failed its self-check (a bug in vouch)")?;
    let mut observations = notes;
    observations.extend(run.observations.iter().cloned());
    let report = ReviewReport {
        schema_version: REPORT_SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "vouch".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        repository: repo.display().to_string(),
        base: snapshot.base.clone(),
        head: snapshot.head.clone(),
        merge_base: snapshot.merge_base.clone(),
        composition: composition.to_string(),
        opinion: run.opinion.clone(),
        summary,
        counts: snapshot.counts(),
        expected_files: run.expected_files.clone(),
        excluded_files: run.excluded_files.clone(),
        files_reviewed: run.files_reviewed.clone(),
        files_not_reviewed: run.files_not_reviewed.clone(),
        stages: run.stages.clone(),
        candidates: run.candidates.clone(),
        findings: run.findings.clone(),
        limitations: run.limitations.clone(),
        failures: run.failures.clone(),
        messages: run.messages.clone(),
        observations,
        usage: run.usage,
        structured_outputs: StructuredOutputs {
            requested,
            fell_back,
        },
        final_report: serde_json::to_value(final_report).context("serialising the final report")?,
    };
    check_report(&report).context(
        "vouch's review report failed its self-check (a bug in vouch); nothing was written",
    )?;
    Ok(report)
}

fn tools_mode(args: &ReviewArgs, composition: &Composition) -> ToolsMode {
    match (args.tools, composition.tools) {
        (Some(ToolsArg::On), _) => ToolsMode::On,
        (Some(ToolsArg::Off), _) => ToolsMode::Off,
        (Some(ToolsArg::Auto) | None, ManifestTools::Auto) => ToolsMode::Auto,
        (Some(ToolsArg::Auto) | None, ManifestTools::On) => ToolsMode::On,
        (Some(ToolsArg::Auto) | None, ManifestTools::Off) => ToolsMode::Off,
    }
}

/// Runs `vouch review`; returns the exit code.
pub async fn run(mut args: ReviewArgs) -> Result<i32> {
    // The pull request and the token are checked before any model call.
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
    let publish_to = if args.ci.publish {
        Some(crate::publish::resolve(&args.ci.target, pr_env.as_ref())?)
    } else {
        None
    };
    let repo = args.repo.clone();
    let user = crate::config::UserSettings::load(args.profile.as_deref())?;
    let mut composition = user.composition(args.manifest.as_ref())?;
    if let Some(n) = args.concurrency {
        composition.concurrency = usize::from(n);
    }
    if let Some(out) = &args.out {
        check_out_path(out)?;
    }
    let snapshot = vouch_git::snapshot(&repo, args.base.as_deref(), &args.head)
        .map_err(|e| UsageError(e.to_string()))?;
    let snapshot = Arc::new(snapshot);
    let reader =
        Arc::new(SourceReader::open(&repo, &snapshot).map_err(|e| UsageError(e.to_string()))?);
    let mut notes = Vec::new();
    if !args.no_repo_config {
        notes.extend(apply_repo_config(&mut composition, &reader)?);
    }
    let mut registry = Registry::new();
    for table in builtins::tables() {
        registry
            .add_builtin(table)
            .context("registering a built-in specialist (a bug in vouch)")?;
    }
    let mut plan =
        build_plan(&composition, &mut registry).map_err(|e| UsageError(e.to_string()))?;
    let flags = EndpointFlags {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
    };
    // An empty range needs no endpoint: no model is called.
    let endpoint = if snapshot.is_empty() {
        None
    } else {
        Some(user.endpoint(&flags, &composition.model)?)
    };
    let (mut config, url_note) = match &endpoint {
        Some(e) => crate::endpoint::client_config(e),
        None => (EndpointConfig::new("http://127.0.0.1:9/v1", "none"), None),
    };
    notes.extend(url_note);
    if let Some(t) = args.timeout {
        config.request_timeout = std::time::Duration::from_secs(t);
    }
    let requested = config.structured_outputs;
    let client = Arc::new(
        ModelClient::new(config)
            .map_err(|e| UsageError(format!("cannot configure the model client: {e}")))?,
    );
    let model_clients = stage_models(&mut plan, endpoint.as_ref(), &client)?;
    let intent = detect_intent(&pr_text(&args)?, &snapshot);
    let policy = collect_policy(&reader, &snapshot);
    let cancel = CancellationToken::new();
    let interactive = std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none()
        && !crate::ui::get().quiet;
    // On a terminal the progress display owns stderr: diagnostics wait for its end.
    let held = Arc::new(crate::presenter::HeldDiagnostics::default());
    let diagnostics: Arc<dyn DiagnosticSink> = if interactive {
        held.clone()
    } else {
        Arc::new(JsonLines::new(std::io::stderr()))
    };
    let job_id = job_id();
    if let Some(endpoint) = endpoint
        .as_ref()
        .filter(|_| calls_a_model(&snapshot, &plan))
    {
        let checked =
            crate::endpoint::check(&client, endpoint, &diagnostics, &job_id, &cancel).await;
        held.flush();
        checked?;
    }
    let presenter: Arc<dyn Presenter> = if interactive {
        Arc::new(TerminalPresenter::new())
    } else {
        Arc::new(Silent)
    };
    let env = Arc::new(ReviewEnv {
        snapshot: snapshot.clone(),
        reader,
        client: client.clone(),
        model_clients,
        intent,
        policy,
        tools: tools_mode(&args, &composition),
        tools_rejected: Default::default(),
        inline_bytes: composition_inline_bytes(),
        presenter,
        diagnostics,
        job_id,
        cancel: cancel.clone(),
    });
    // Register for SIGINT and SIGTERM before any request is sent, so Ctrl-C or a
    // plain `kill` always ends the review as `aborted`, with its report written.
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut terminate =
        signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let ctrl_c = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            cancel.cancel();
        })
    };
    let mut run = run_review(env, &plan).await;
    ctrl_c.abort();
    held.flush();
    // Every request sent counts, failed and retried ones and the endpoint check too.
    run.usage.requests = u64::from(client.requests_sent());
    if args.base.is_none() && snapshot.merge_base == snapshot.head.sha {
        run.messages.push(format!(
            "With no --base, the base is the default branch ({}), and its merge base with \
             {} is {} itself: you are on the default branch (or behind it), so the range is \
             empty. Pick the base to review against with --base, for example --base HEAD~1 \
             for the last commit.",
            snapshot.base.spec, args.head, args.head
        ));
    }
    if let (Some(status), Some(e)) = (client.refused_key(), &endpoint) {
        run.messages
            .push(crate::endpoint::refused_during_review(status, e));
    }
    let report = build_report(
        &repo,
        &plan.composition,
        &run,
        run.structured_outputs_fell_back,
        requested,
        notes,
    )?;
    let format = match args.format {
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Sarif => Format::Sarif,
        FormatArg::Rdjson => Format::Rdjson,
    };
    let text = render(&report, format);
    match &args.out {
        Some(path) => {
            write_atomically(path, &text)?;
            println!("{}", report.summary);
            for m in &report.messages {
                println!("{m}");
            }
            println!("Report written to {}", path.display());
        }
        // Every format carries the messages: Markdown and JSON in full, SARIF as tool
        // execution notifications, rdjson not at all (so use --out with it).
        None => print!("{text}"),
    }
    if let Some((target, token)) = publish_to {
        // With the report on stdout, nothing else may follow it there.
        crate::publish::publish_report(&report, &target, token, args.out.is_some()).await?;
    }
    let fail_on = match args.fail_on {
        FailOnArg::Finding => FailOn::Finding,
        FailOnArg::Limited => FailOn::Limited,
        FailOnArg::Never => FailOn::Never,
    };
    Ok(exit_code(&report.opinion, fail_on))
}

/// Whether the review will call a model: some changed text file is not excluded.
fn calls_a_model(snapshot: &ChangeSnapshot, plan: &vouch_host::review::ReviewPlan) -> bool {
    snapshot
        .files
        .iter()
        .any(|f| !f.binary && (plan.exclusion)(&f.path).is_none())
}

/// Applies the model rule ([`ResolvedEndpoint::model_for`]: a specialist's own model
/// wins, every other instance gets the run's default) to every instance of `plan`, and
/// builds one client (same endpoint) per model other than the default.
fn stage_models(
    plan: &mut ReviewPlan,
    endpoint: Option<&ResolvedEndpoint>,
    client: &ModelClient,
) -> Result<BTreeMap<String, Arc<ModelClient>>> {
    let mut clients = BTreeMap::new();
    let Some(endpoint) = endpoint else {
        return Ok(clients);
    };
    for spec in plan.instances_mut() {
        let model = endpoint.model_for(spec.model.as_deref()).to_string();
        if model != client.config().model && !clients.contains_key(&model) {
            // Same endpoint: the request count and a refused key are shared.
            let own = client.for_model(&model).map_err(|e| {
                UsageError(format!(
                    "cannot configure the model client for {model}: {e}"
                ))
            })?;
            clients.insert(model.clone(), Arc::new(own));
        }
        spec.model = Some(model);
    }
    Ok(clients)
}

/// Checks before any model call that `--out` can be written: its folder exists and it
/// is not a folder itself. A stale report there is removed, so a review that then fails
/// cannot leave an older result looking current.
fn check_out_path(out: &Path) -> Result<()> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(UsageError(format!(
            "--out {}: the folder {} does not exist; create it or choose another path",
            out.display(),
            parent.display()
        ))
        .into());
    }
    if out.is_dir() {
        return Err(UsageError(format!(
            "--out {} is a folder; give a file path",
            out.display()
        ))
        .into());
    }
    let probe = parent.join(format!(".vouch-out-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| {
        UsageError(format!(
            "--out {}: cannot write in {}: {e}",
            out.display(),
            parent.display()
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    if out.exists() {
        std::fs::remove_file(out).map_err(|e| {
            UsageError(format!(
                "--out {}: cannot replace the existing file: {e}",
                out.display()
            ))
        })?;
    }
    Ok(())
}

/// Writes the report through a temporary file and a rename, so readers never see half.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_file_name(format!(
        ".{}.vouch-tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, text)
        .with_context(|| format!("writing the report to {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("moving the report to {}", path.display()))?;
    Ok(())
}

/// Bytes of patches given inline per stage execution.
fn composition_inline_bytes() -> usize {
    std::env::var("VOUCH_INLINE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12_000)
}

fn job_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("vouch-{:x}-{:x}", std::process::id(), nanos)
}
