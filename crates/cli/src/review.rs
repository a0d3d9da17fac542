//! `vouch review`: snapshot, plan, run, report.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use tokio_util::sync::CancellationToken;
use vouch_core::{ChangeSnapshot, FailOn, exit_code};
use vouch_git::SourceReader;
use vouch_host::diagnostics::{DiagnosticSink, JsonLines};
use vouch_host::manifest::{Composition, REPO_OVERRIDE_PATH, RepoOverrides, ResolvedEndpoint};
use vouch_host::progress::{Presenter, Silent};
use vouch_host::registry::Registry;
use vouch_host::review::{
    PullRequestText, ReviewEnv, ReviewPlan, ReviewRun, ToolsMode, build_plan, collect_policy,
    detect_intent, run_review,
};
use vouch_llm::{EndpointConfig, Exchanges, ModelClient};
use vouch_report::{
    REPORT_SCHEMA_VERSION, ReviewReport, StructuredOutputs, ToolInfo, check_report,
};

use crate::endpoint::PlannedModel;
use crate::exchange::{self, ExchangeArgs};
use crate::output::{OutputArgs, Outputs};
use crate::presenter::TerminalPresenter;
use crate::{UsageError, builtins};

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
    /// Where the report goes, in which formats.
    #[command(flatten)]
    pub output: OutputArgs,
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
    /// Response cache, recording and replay.
    #[command(flatten)]
    pub exchange: ExchangeArgs,
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

/// Assembles and self-checks the report of a run (taken, so its records are moved into
/// the report rather than held twice).
pub fn build_report(
    repo: &Path,
    composition: &str,
    run: ReviewRun,
    requested: bool,
    notes: Vec<String>,
    context_window: Option<vouch_core::ContextWindow>,
) -> Result<ReviewReport> {
    let snapshot: &ChangeSnapshot = &run.snapshot;
    let mut observations = notes;
    observations.extend(run.observations);
    let mut report = ReviewReport {
        schema_version: REPORT_SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "vouch".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        repository: repo.display().to_string(),
        remote_url: vouch_git::remote_url(repo).and_then(|url| vouch_report::repository_uri(&url)),
        base: snapshot.base.clone(),
        head: snapshot.head.clone(),
        merge_base: snapshot.merge_base.clone(),
        composition: composition.to_string(),
        opinion: run.opinion,
        summary: String::new(),
        counts: snapshot.counts(),
        changed_files: snapshot.files.clone(),
        expected_files: run.expected_files,
        excluded_files: run.excluded_files,
        files_reviewed: run.files_reviewed,
        files_not_reviewed: run.files_not_reviewed,
        stages: run.stages,
        candidates: run.candidates,
        findings: run.findings,
        limitations: run.limitations,
        failures: run.failures,
        messages: run.messages,
        observations,
        usage: run.usage,
        context_window,
        structured_outputs: StructuredOutputs {
            requested,
            fell_back: run.structured_outputs_fell_back,
        },
        final_report: serde_json::Value::Null,
    };
    // The summary and the embedded final report say what the records do, derived as a
    // saved report's check derives them again.
    report.summary = vouch_report::summary_line(&report);
    report.final_report = vouch_report::embedded_final_report(&report, &command_line())
        .context("vouch's own final report failed its self-check (a bug in vouch)")?;
    check_report(&mut report).context(
        "vouch's review report failed its self-check (a bug in vouch); nothing was written",
    )?;
    Ok(report)
}

/// `--tools on|off` overrides the manifest; `--tools auto` (or none) keeps its setting.
fn tools_mode(args: &ReviewArgs, composition: &Composition) -> ToolsMode {
    match args.tools {
        Some(ToolsArg::On) => ToolsMode::On,
        Some(ToolsArg::Off) => ToolsMode::Off,
        Some(ToolsArg::Auto) | None => composition.tools,
    }
}

/// Runs `vouch review`; returns the exit code. Every requested document is this run's:
/// the report, or (after any error, before or during the review) the format's failure
/// document. Publishing (`--publish`) follows once the documents are written.
pub async fn run(mut args: ReviewArgs) -> Result<i32> {
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
            outputs.write_report(&report)?;
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
    let report = review_report(args, exchanges.clone()).await?;
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
pub async fn review_report(
    args: &ReviewArgs,
    exchanges: Option<Arc<Exchanges>>,
) -> Result<ReviewReport> {
    let user = crate::config::UserSettings::load(args.profile.as_deref())?;
    let mut composition = user.composition(args.manifest.as_ref())?;
    composition.concurrency = args
        .concurrency
        .map_or(composition.concurrency, usize::from);
    // Register for SIGINT and SIGTERM before the change is prepared, so Ctrl-C or a
    // plain `kill` at any moment ends the review as `aborted`, with its report written.
    let cancel = CancellationToken::new();
    let ctrl_c = cancel_on_signals(&cancel)?;
    let change = open_change(args, &cancel).await?;
    let mut notes = Vec::new();
    if !args.no_repo_config {
        notes.extend(apply_repo_config(&mut composition, &change.reader)?);
    }
    let mut plan = review_plan(&composition)?;
    let model = model_client(args, &user, &composition, &change.snapshot, &exchanges)?;
    notes.extend(model.note.clone());
    let (model_clients, planned_models) = stage_models(
        &mut plan,
        &composition,
        model.endpoint.as_ref(),
        &model.client,
    )?;
    let intent = detect_intent(&pr_text(args)?, &change.snapshot);
    let sinks = Sinks::new();
    let job_id = job_id();
    let endpoint_messages = EndpointCheck {
        args,
        user: &user,
        change: &change,
        model: &model,
        model_clients: &model_clients,
        planned_models: &planned_models,
        diagnostics: &sinks.diagnostics,
        job_id: &job_id,
        cancel: &cancel,
        replaying: matches!(exchanges.as_deref(), Some(Exchanges::Replay(_))),
    }
    .run(&mut composition, &mut plan)
    .await;
    sinks.held.flush();
    let endpoint_messages = endpoint_messages?;
    let env = Arc::new(ReviewEnv {
        snapshot: change.snapshot.clone(),
        reader: change.reader.clone(),
        client: model.client.clone(),
        model_clients,
        intent,
        policy: collect_policy(&change.reader, &change.snapshot),
        tools: tools_mode(args, &composition),
        tools_rejected: Default::default(),
        inline_bytes: composition_inline_bytes(),
        presenter: presenter(sinks.interactive),
        diagnostics: sinks.diagnostics.clone(),
        job_id,
        cancel: cancel.clone(),
        prefetch: Default::default(),
        fitted_caps: Default::default(),
    });
    let mut run = run_review(env, &plan).await;
    crate::heap::release_free();
    ctrl_c.abort();
    sinks.held.flush();
    closing_messages(args, &change, &model, endpoint_messages, &mut run);
    // The window the budgets were sized for, when a model was to be called.
    let window = model.endpoint.as_ref().map(|_| composition.window);
    build_report(
        &args.repo,
        &plan.composition,
        run,
        model.requested,
        notes,
        window,
    )
}

/// The change under review: its snapshot, whether it was prepared in full (`false`
/// when the review was cancelled first), and the reader of its trees.
struct Change {
    snapshot: Arc<ChangeSnapshot>,
    prepared: bool,
    reader: Arc<SourceReader>,
}

/// Resolves the range `args` name and prepares its snapshot and reader.
async fn open_change(args: &ReviewArgs, cancel: &CancellationToken) -> Result<Change> {
    let range = vouch_git::resolve_range(&args.repo, args.base.as_deref(), &args.head)
        .map_err(|e| UsageError(e.to_string()))?;
    let (snapshot, prepared) = prepare_change(&args.repo, range, cancel).await?;
    let snapshot = Arc::new(snapshot);
    let reader =
        SourceReader::open(&args.repo, &snapshot).map_err(|e| UsageError(e.to_string()))?;
    Ok(Change {
        snapshot,
        prepared,
        reader: Arc::new(reader),
    })
}

/// The review's plan from `composition`, over the built-in specialists.
fn review_plan(composition: &Composition) -> Result<ReviewPlan> {
    let mut registry = Registry::new();
    for table in builtins::tables() {
        registry
            .add_builtin(table)
            .context("registering a built-in specialist (a bug in vouch)")?;
    }
    Ok(build_plan(composition, &mut registry).map_err(|e| UsageError(e.to_string()))?)
}

/// The run's endpoint (none for an empty range: no model is called), its client, whether
/// structured outputs were requested, and a note on the base URL when it was adjusted.
struct RunModel {
    endpoint: Option<ResolvedEndpoint>,
    client: Arc<ModelClient>,
    requested: bool,
    note: Option<String>,
}

/// The endpoint the flags, the user configuration and the manifest name, and its client
/// (through the exchange layer when one is open).
fn model_client(
    args: &ReviewArgs,
    user: &crate::config::UserSettings,
    composition: &Composition,
    snapshot: &ChangeSnapshot,
    exchanges: &Option<Arc<Exchanges>>,
) -> Result<RunModel> {
    let given = vouch_host::manifest::EndpointFlags {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
    };
    let flags = exchange::endpoint_flags(given, exchanges.as_deref());
    let endpoint = if snapshot.is_empty() {
        None
    } else {
        Some(user.endpoint(&flags, &composition.model)?)
    };
    let (mut config, note) = match &endpoint {
        Some(e) => crate::endpoint::client_config(e),
        None => (EndpointConfig::new("http://127.0.0.1:9/v1", "none"), None),
    };
    if let Some(t) = args.timeout {
        config.request_timeout = std::time::Duration::from_secs(t);
    }
    let requested = config.structured_outputs;
    let client = ModelClient::new(config)
        .map_err(|e| UsageError(format!("cannot configure the model client: {e}")))?;
    Ok(RunModel {
        endpoint,
        client: Arc::new(exchange::attach(client, exchanges.as_ref())),
        requested,
        note,
    })
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

/// The endpoint check before the review: every planned model is asked once, and the
/// composition is sized again for the window the endpoint states.
struct EndpointCheck<'a> {
    args: &'a ReviewArgs,
    user: &'a crate::config::UserSettings,
    change: &'a Change,
    model: &'a RunModel,
    model_clients: &'a StageClients,
    planned_models: &'a [PlannedModel],
    diagnostics: &'a Arc<dyn DiagnosticSink>,
    job_id: &'a str,
    cancel: &'a CancellationToken,
    /// A replay sends nothing, so there is no endpoint to check.
    replaying: bool,
}

impl EndpointCheck<'_> {
    /// Checks the endpoint when a model will be called; returns the check's messages for
    /// the report, after resizing `composition` and `plan` when the endpoint stated a
    /// window that changes them.
    async fn run(
        self,
        composition: &mut Composition,
        plan: &mut ReviewPlan,
    ) -> Result<Vec<String>> {
        let Some(endpoint) = self
            .model
            .endpoint
            .as_ref()
            .filter(|_| !self.replaying && calls_a_model(&self.change.snapshot, plan))
        else {
            return Ok(Vec::new());
        };
        let client_for = |model: &str| {
            self.model_clients
                .get(model)
                .cloned()
                .unwrap_or_else(|| self.model.client.clone())
        };
        let (messages, stated) = crate::endpoint::check(
            self.planned_models,
            client_for,
            endpoint,
            self.diagnostics,
            self.job_id,
            self.cancel,
        )
        .await?;
        let reader = &self.change.reader;
        if let Some(resized) = resized_for(self.args, self.user, composition, reader, stated)? {
            vouch_host::review::resize(plan, &resized);
            *composition = resized;
        }
        Ok(messages)
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

/// The messages a run ends with besides its own: a cancellation before the change was
/// prepared, an empty range on the default branch, the endpoint check's messages and a
/// key the endpoint refused during the review.
fn closing_messages(
    args: &ReviewArgs,
    change: &Change,
    model: &RunModel,
    endpoint_messages: Vec<String>,
    run: &mut ReviewRun,
) {
    let snapshot = &change.snapshot;
    if !change.prepared {
        run.messages.push(
            "The review was cancelled while the change was being prepared: no file was \
             reviewed."
                .into(),
        );
    }
    // Every request sent counts, failed and retried ones and the endpoint check too.
    run.usage.requests = u64::from(model.client.requests_sent());
    if args.base.is_none() && snapshot.merge_base == snapshot.head.sha {
        run.messages.push(format!(
            "With no --base, the base is the default branch ({}), and its merge base with \
             {} is {} itself: you are on the default branch (or behind it), so the range is \
             empty. Pick the base to review against with --base, for example --base HEAD~1 \
             for the last commit.",
            snapshot.base.spec, args.head, args.head
        ));
    }
    run.messages.extend(endpoint_messages);
    if let (Some(status), Some(e)) = (model.client.refused_key(), &model.endpoint) {
        run.messages
            .push(crate::endpoint::refused_during_review(status, e));
    }
}

/// The composition sized again for the window the endpoint stated (`stated`), with the
/// run's concurrency and the repository file applied as before, when that changes its
/// window (the configuration sets none, and the endpoint stated one); else `None`.
fn resized_for(
    args: &ReviewArgs,
    user: &crate::config::UserSettings,
    composition: &Composition,
    reader: &SourceReader,
    stated: Option<u32>,
) -> Result<Option<Composition>> {
    let Some(stated) = stated else {
        return Ok(None);
    };
    let mut resized = user
        .composition_for(args.manifest.as_ref(), Some(stated))?
        .composition;
    if resized.window == composition.window {
        return Ok(None);
    }
    resized.concurrency = composition.concurrency;
    if !args.no_repo_config {
        apply_repo_config(&mut resized, reader)?;
    }
    Ok(Some(resized))
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

/// Prepares the change (the snapshot: tree diff, rename detection, hunks) on a blocking
/// thread, in steps that observe cancellation. Returns the snapshot and `true`; when
/// `cancel` fires first, the range without files and `false` at once (the blocking work
/// stops at its next step), so the review ends `aborted` without waiting for it.
async fn prepare_change(
    repo: &std::path::Path,
    range: vouch_git::ResolvedRange,
    cancel: &CancellationToken,
) -> Result<(ChangeSnapshot, bool)> {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let unprepared = range.unprepared();
    let task = {
        let (repo, stop) = (repo.to_path_buf(), stop.clone());
        tokio::task::spawn_blocking(move || vouch_git::snapshot_range(&repo, range, &stop))
    };
    tokio::select! {
        joined = task => match joined.context("preparing the change (a bug in vouch)")? {
            Ok(snapshot) => Ok((snapshot, true)),
            Err(vouch_git::GitError::Cancelled) => Ok((unprepared, false)),
            Err(e) => Err(UsageError(e.to_string()).into()),
        },
        _ = cancel.cancelled() => {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok((unprepared, false))
        }
    }
}

/// Whether the review will call a model: some changed text file is not excluded.
fn calls_a_model(snapshot: &ChangeSnapshot, plan: &vouch_host::review::ReviewPlan) -> bool {
    snapshot
        .files
        .iter()
        .any(|f| !f.binary && (plan.exclusion)(&f.path).is_none())
}

/// The clients of the models other than the run's default, by model name.
type StageClients = BTreeMap<String, Arc<ModelClient>>;

/// Applies the model rule ([`ResolvedEndpoint::model_for`]: a specialist's own model
/// wins, every other instance gets the run's default) to every instance of `plan`, and
/// builds one client (same endpoint) per model other than the default. Also returns each
/// distinct model the plan uses, in plan order, with the manifest entries that pin it:
/// the endpoint check checks every one of them.
fn stage_models(
    plan: &mut ReviewPlan,
    composition: &Composition,
    endpoint: Option<&ResolvedEndpoint>,
    client: &ModelClient,
) -> Result<(StageClients, Vec<PlannedModel>)> {
    let mut clients = BTreeMap::new();
    let mut planned: Vec<PlannedModel> = Vec::new();
    let Some(endpoint) = endpoint else {
        return Ok((clients, planned));
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
        if !planned.iter().any(|p| p.name == model) {
            planned.push(PlannedModel {
                name: model.clone(),
                pinned_by: Vec::new(),
            });
        }
        spec.model = Some(model);
    }
    // A model is pinned when an entry names it and it is not the default (the default
    // model is named by the setting that chose it).
    let manifest = composition.origin.display();
    let pins = composition
        .specialists
        .iter()
        .filter(|entry| entry.enabled)
        .filter_map(|entry| {
            let at = format!("[[specialist]] \"{}\" of the manifest {manifest}", entry.id);
            entry.model.as_ref().map(|m| (m, at))
        })
        .chain(
            composition
                .verifier
                .model
                .as_ref()
                .map(|m| (m, format!("[verifier] of the manifest {manifest}"))),
        );
    for (model, at) in pins {
        if *model == endpoint.model {
            continue;
        }
        if let Some(p) = planned.iter_mut().find(|p| p.name == *model)
            && !p.pinned_by.contains(&at)
        {
            p.pinned_by.push(at);
        }
    }
    Ok((clients, planned))
}

/// Bytes of source given inline per stage execution, when `VOUCH_INLINE_BYTES` sets it
/// (unset: each shard's budget; see docs/manifests.md, "Shards and the request bound").
fn composition_inline_bytes() -> Option<usize> {
    std::env::var("VOUCH_INLINE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
}

fn job_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("vouch-{:x}-{:x}", std::process::id(), nanos)
}
