//! `vouch eval`: review each case of a golden-comment benchmark with a normal review,
//! score the published findings with a separate judge model (and by location), and
//! write the results as JSON, Markdown and CSV. Reference: docs/eval.md.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Parser};
use tokio_util::sync::CancellationToken;
use vouch_core::Outcome;
use vouch_eval::case::{EvalCase, load_benchmark, load_cases};
use vouch_eval::category::Category;
use vouch_eval::judge::judge_case;
use vouch_eval::results::{
    CaseResult, CaseStatus, Cost, EvalResults, RESULTS_SCHEMA_VERSION, RunConfig, RunResult, csv,
    markdown, overall, summarize,
};
use vouch_eval::score::{EvalFinding, count_case, group_findings, location_matches};
use vouch_host::manifest::{Composition, EndpointFlags, resolve_endpoint};
use vouch_llm::exchange::{DEFAULT_CACHE_MAX_BYTES, ExchangeCache};
use vouch_llm::{EndpointConfig, ExchangeStats, Exchanges, ModelClient};
use vouch_report::ReviewReport;

use crate::UsageError;
use crate::review::{ReviewArgs, ToolsArg, review_report};

/// Arguments of `vouch eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// Cases file: a JSON array of cases, or JSONL when it ends in `.jsonl`.
    #[arg(
        long,
        required_unless_present = "benchmark",
        conflicts_with = "benchmark"
    )]
    pub(crate) cases: Option<PathBuf>,
    /// Golden-comment file(s) of the public benchmark (a list of {pr_title, url, comments}).
    #[arg(long, num_args = 1.., requires = "checkouts")]
    pub(crate) benchmark: Vec<PathBuf>,
    /// With --benchmark: JSON object mapping each pull request URL to {repo, base, head}.
    #[arg(long)]
    pub(crate) checkouts: Option<PathBuf>,
    /// Composition manifest of the reviews (default: the built-in composition).
    #[arg(long)]
    pub(crate) manifest: Option<PathBuf>,
    /// The reviewer's OpenAI-compatible base URL (else OPENAI_BASE_URL, else the manifest).
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// The reviewer's model (else VOUCH_MODEL, else the manifest).
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Variable holding the reviewer's API key (default OPENAI_API_KEY).
    #[arg(long)]
    pub(crate) api_key_env: Option<String>,
    /// Whether the reviewer gets repository tools.
    #[arg(long, value_enum)]
    pub(crate) tools: Option<ToolsArg>,
    /// Stage instances running at once within one review, 1 to 64.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) concurrency: Option<u16>,
    /// Per-request timeout in seconds (reviewer and judge).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) timeout: Option<u64>,
    /// The judge's base URL (default: the reviewer's).
    #[arg(long)]
    pub(crate) judge_base_url: Option<String>,
    /// The judge's model; required when a case has golden comments.
    #[arg(long)]
    pub(crate) judge_model: Option<String>,
    /// Variable holding the judge's API key (default: the reviewer's variable).
    #[arg(long)]
    pub(crate) judge_api_key_env: Option<String>,
    /// Let the reviewer's own model judge its findings (scores are then biased).
    #[arg(long)]
    pub(crate) allow_self_judge: bool,
    /// F-beta's beta (> 0): above 1 weighs recall more, below 1 precision.
    #[arg(long, default_value_t = 1.0, value_parser = positive_beta)]
    pub(crate) beta: f64,
    /// Run the whole eval N times and report mean and spread.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) repeat: u32,
    /// Folder for results.json, summary.md and results.csv (created if missing).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Response cache folder (default: $XDG_CACHE_HOME/vouch/exchanges or
    /// ~/.cache/vouch/exchanges).
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub(crate) cache: Option<PathBuf>,
    /// Send every request; use no response cache.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// Size bound of the response cache in MiB.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CACHE_MAX_BYTES >> 20)]
    pub(crate) cache_max_mib: u64,
}

fn positive_beta(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(b) if b.is_finite() && b > 0.0 => Ok(b),
        _ => Err(format!("{text:?} is not a positive number")),
    }
}

/// Everything one run needs besides the cases.
struct Setup {
    judge: Option<ModelClient>,
    reviewer_model: String,
    cache_dir: Option<PathBuf>,
}

/// Runs `vouch eval`; returns the exit code: 0 every case scored, 2 some case was not
/// (results still written, the case named), 130 interrupted (nothing written).
pub(crate) async fn run(args: EvalArgs) -> Result<i32> {
    let cases = load_input(&args)?;
    for case in &cases {
        if !case.repo.exists() {
            return Err(UsageError(format!(
                "case {:?}: the repository {} does not exist; check its path or prepare the checkout (docs/eval.md)",
                case.id,
                case.repo.display()
            ))
            .into());
        }
    }
    let setup = setup(&args, &cases)?;
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| UsageError(format!("--out {}: {e}", out.display())))?;
    }
    let cancel = interrupt_token()?;
    let mut runs = Vec::new();
    for run in 1..=args.repeat {
        let exchanges = open_cache(&setup, &args, run)?;
        let judge = setup.judge.clone().map(|j| j.through(exchanges.as_ref()));
        let mut results = Vec::new();
        for case in &cases {
            let result = run_case(&args, case, judge.as_ref(), exchanges.as_ref(), &cancel).await;
            if cancel.is_cancelled() || result.outcome.as_deref() == Some("aborted") {
                // Ctrl-C or SIGTERM: nothing partial is written as results.
                let said = format!(
                    "vouch eval: interrupted at case {:?}; nothing was written. Completed model calls are cached: run the same command again to resume.\n",
                    case.id
                );
                crate::stdout::write("the message", &said)?;
                return Ok(130);
            }
            results.push(result);
        }
        runs.push(RunResult {
            run,
            overall: overall(&results, args.beta),
            cases: results,
        });
    }
    let results = EvalResults {
        schema_version: RESULTS_SCHEMA_VERSION.into(),
        config: RunConfig {
            reviewer_model: setup.reviewer_model.clone(),
            judge_model: setup.judge.as_ref().map(|j| j.config().model.clone()),
            manifest: args
                .manifest
                .as_ref()
                .map_or_else(|| "builtin:default".to_owned(), |m| m.display().to_string()),
            beta: args.beta,
            repeat: args.repeat,
            cache: setup.cache_dir.as_ref().map(|d| d.display().to_string()),
            vouch_version: env!("CARGO_PKG_VERSION").into(),
        },
        summary: summarize(&runs),
        runs,
    };
    write_results(&args, &results)?;
    let all_scored = results.runs.iter().all(|r| r.overall.not_scored.is_empty());
    Ok(if all_scored { 0 } else { 2 })
}

/// A token cancelled by Ctrl-C or SIGTERM for the whole eval (each review also ends
/// itself as `aborted` on the same signal), so an interrupt between reviews, while the
/// judge is asked, stops the eval too.
fn interrupt_token() -> Result<CancellationToken> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut terminate =
        signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        token.cancel();
    });
    Ok(cancel)
}

fn load_input(args: &EvalArgs) -> Result<Vec<EvalCase>> {
    let cases = match (&args.cases, &args.checkouts) {
        (Some(path), _) => load_cases(path),
        (None, Some(mapping)) => load_benchmark(&args.benchmark, mapping),
        (None, None) => {
            return Err(UsageError(
                "give --cases FILE, or --benchmark FILE... with --checkouts MAP".into(),
            )
            .into());
        }
    };
    cases.map_err(|e| UsageError(e.to_string()).into())
}

fn setup(args: &EvalArgs, cases: &[EvalCase]) -> Result<Setup> {
    let composition = match &args.manifest {
        Some(path) => Composition::load(path).map_err(|e| UsageError(e.to_string()))?,
        None => Composition::builtin_default(),
    };
    let env = |name: &str| std::env::var(name).ok();
    let flags = EndpointFlags {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
    };
    let reviewer = resolve_endpoint(&flags, &env, &composition.model)
        .map_err(|e| UsageError(format!("the reviewer's endpoint: {e}")))?;
    let needs_judge = cases.iter().any(|c| !c.golden.is_empty());
    let judge = match (&args.judge_model, needs_judge) {
        (None, true) => {
            return Err(UsageError(
                "cases with golden comments need a judge: give --judge-model (and --judge-base-url when it is served elsewhere)".into(),
            )
            .into());
        }
        (None, false) => None,
        (Some(model), _) => {
            let reviewers = std::iter::once(reviewer.model.as_str())
                .chain(
                    composition
                        .specialists
                        .iter()
                        .filter_map(|s| s.model.as_deref()),
                )
                .chain(composition.verifier.model.as_deref());
            let own = reviewers.into_iter().find(|r| same_model(model, r));
            if let (Some(own), false) = (own, args.allow_self_judge) {
                return Err(UsageError(format!(
                    "the judge model {model:?} is the reviewer's model ({own:?}): a model judging its own findings biases the scores; choose another --judge-model or pass --allow-self-judge"
                ))
                .into());
            }
            let base_url = args
                .judge_base_url
                .clone()
                .unwrap_or_else(|| reviewer.base_url.clone());
            let mut config = EndpointConfig::new(base_url, model.clone());
            let key_env = args
                .judge_api_key_env
                .clone()
                .unwrap_or_else(|| reviewer.api_key_env.clone());
            if let Some(key) = env(&key_env).filter(|k| !k.is_empty()) {
                config = config.with_api_key(key);
            }
            config.request_timeout = reviewer.request_timeout;
            config.max_retries = reviewer.max_retries;
            if let Some(t) = args.timeout {
                config.request_timeout = std::time::Duration::from_secs(t);
            }
            Some(
                ModelClient::new(config)
                    .map_err(|e| UsageError(format!("cannot configure the judge client: {e}")))?,
            )
        }
    };
    let cache_dir = if args.no_cache {
        None
    } else {
        args.cache.clone().or_else(default_cache_dir)
    };
    Ok(Setup {
        judge,
        reviewer_model: reviewer.model,
        cache_dir,
    })
}

/// Rule: the judge is the reviewer when the model names are equal ignoring case and
/// surrounding space.
fn same_model(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("vouch").join("exchanges"))
}

/// The response cache of one run: run 1 shares entries with `vouch review --cache`;
/// later runs have their own namespace, so each asks the models anew (and is cached).
fn open_cache(setup: &Setup, args: &EvalArgs, run: u32) -> Result<Option<Arc<Exchanges>>> {
    let Some(dir) = &setup.cache_dir else {
        return Ok(None);
    };
    let cache = ExchangeCache::open(dir, args.cache_max_mib.saturating_mul(1 << 20))
        .map_err(|e| UsageError(format!("the response cache: {e}")))?;
    let cache = if run == 1 {
        cache
    } else {
        cache.with_namespace(format!("eval-run-{run}"))
    };
    Ok(Some(Arc::new(Exchanges::Cache(cache))))
}

/// The review arguments of one case, parsed like a `vouch review` command line so every
/// default stays the review's.
fn review_args(args: &EvalArgs, case: &EvalCase) -> Result<ReviewArgs> {
    #[derive(Parser)]
    struct ReviewLine {
        #[command(flatten)]
        args: ReviewArgs,
    }
    let mut line: Vec<String> = vec!["vouch-review".into(), "--repo".into()];
    line.push(case.repo.display().to_string());
    for (flag, value) in [
        ("--base", Some(case.base.clone())),
        ("--head", Some(case.head.clone())),
        ("--fail-on", Some("never".into())),
        (
            "--manifest",
            args.manifest.as_ref().map(|m| m.display().to_string()),
        ),
        ("--base-url", args.base_url.clone()),
        ("--model", args.model.clone()),
        ("--api-key-env", args.api_key_env.clone()),
        ("--tools", args.tools.map(|t| tools_name(t).to_owned())),
        ("--concurrency", args.concurrency.map(|c| c.to_string())),
        ("--timeout", args.timeout.map(|t| t.to_string())),
        ("--pr-title", case.pr_title.clone()),
        ("--pr-body", case.pr_body.clone()),
    ] {
        if let Some(value) = value {
            line.push(flag.into());
            line.push(value);
        }
    }
    let parsed = ReviewLine::try_parse_from(line)
        .map_err(|e| UsageError(format!("case {:?}: {e}", case.id)))?;
    Ok(parsed.args)
}

fn tools_name(tools: ToolsArg) -> &'static str {
    match tools {
        ToolsArg::Auto => "auto",
        ToolsArg::On => "on",
        ToolsArg::Off => "off",
    }
}

fn stats(exchanges: Option<&Arc<Exchanges>>) -> ExchangeStats {
    exchanges.map(|e| e.stats()).unwrap_or_default()
}

/// Reviews and scores one case. A review that does not complete, or a judge that
/// fails, leaves the case unscored with its reason.
async fn run_case(
    args: &EvalArgs,
    case: &EvalCase,
    judge: Option<&ModelClient>,
    exchanges: Option<&Arc<Exchanges>>,
    cancel: &CancellationToken,
) -> CaseResult {
    let before = stats(exchanges);
    let mut result = CaseResult {
        id: case.id.clone(),
        status: CaseStatus::Failed,
        outcome: None,
        message: None,
        clean_change: case.is_clean_change(),
        golden: case.golden.len() as u32,
        findings: 0,
        groups: 0,
        changed_lines: 0,
        counts: None,
        location: None,
        cost: Cost::default(),
    };
    let judge_sent = || judge.map_or(0, |j| u64::from(j.requests_sent()));
    let judge_before = judge_sent();
    let report = match review_args(args, case) {
        Ok(review) => review_report(&review, exchanges.cloned()).await,
        Err(e) => Err(e),
    };
    let reviewed = stats(exchanges);
    let mut review_sent = 0;
    match report {
        Ok(report) => {
            score_case(case, &report, judge, cancel, &mut result).await;
            // The report counts the requests its review sent; answers from the cache
            // were used just the same.
            review_sent = report.usage.requests;
            result.cost.review_calls = review_sent + (reviewed.hits - before.hits);
        }
        Err(e) => result.message = Some(format!("{e:#}")),
    }
    // What went over HTTP, with or without a cache: the review's requests (its endpoint
    // check included) and the judge's.
    result.cost.cache_hits = stats(exchanges).hits - before.hits;
    result.cost.sent = review_sent + (judge_sent() - judge_before);
    result
}

fn eval_findings(report: &ReviewReport) -> Vec<EvalFinding> {
    report
        .findings
        .iter()
        .map(|f| EvalFinding {
            path: f.path.clone(),
            start_line: f.start_line,
            end_line: f.end_line,
            severity: f.severity,
            category: Category::of_area(f.area),
            claim: f.claim.clone(),
        })
        .collect()
}

async fn score_case(
    case: &EvalCase,
    report: &ReviewReport,
    judge: Option<&ModelClient>,
    cancel: &CancellationToken,
    result: &mut CaseResult,
) {
    let counts = &report.counts;
    result.changed_lines = u64::from(counts.additions) + u64::from(counts.deletions);
    result.cost.review_tokens = report.usage.counted_tokens();
    result.cost.review_calls = report.usage.requests;
    let outcome = report.opinion.outcome;
    result.outcome = Some(outcome.as_str().to_owned());
    if matches!(outcome, Outcome::Incomplete | Outcome::Aborted) {
        result.status = CaseStatus::Incomplete;
        result.message = Some(report.summary.clone());
        return;
    }
    let findings = eval_findings(report);
    let groups = group_findings(&findings);
    result.findings = findings.len() as u32;
    result.groups = groups.len() as u32;
    let matches = match (judge, case.golden.is_empty()) {
        (_, true) => vec![Vec::new(); groups.len()],
        (None, false) => {
            result.message = Some("no judge configured".into());
            return;
        }
        (Some(judge), false) => {
            match judge_case(judge, &findings, &groups, &case.golden, cancel).await {
                Ok(outcome) => {
                    result.cost.judge_questions = u64::from(outcome.questions);
                    result.cost.judge_tokens = outcome.usage.counted_tokens();
                    outcome.matches
                }
                Err(e) => {
                    result.message = Some(e.to_string());
                    return;
                }
            }
        }
    };
    result.counts = Some(count_case(&findings, &groups, &case.golden, &matches));
    let located = !case.golden.is_empty() && case.golden.iter().all(|g| g.path.is_some());
    if located {
        let by_location: Vec<Vec<bool>> = groups
            .iter()
            .map(|g| {
                case.golden
                    .iter()
                    .map(|c| g.members.iter().any(|&m| location_matches(&findings[m], c)))
                    .collect()
            })
            .collect();
        let counts = count_case(&findings, &groups, &case.golden, &by_location);
        result.location = counts
            .profiles
            .get(&vouch_eval::category::Profile::All)
            .copied();
    }
    result.status = CaseStatus::Scored;
}

fn write_results(args: &EvalArgs, results: &EvalResults) -> Result<()> {
    let table = markdown(results);
    // The three files are published together (see `staged`), after the table is shown.
    let mut staged = crate::staged::Staged::default();
    if let Some(out) = &args.out {
        let json = serde_json::to_string_pretty(results).context("serialising the results")?;
        for (name, text) in [
            ("results.json", json + "\n"),
            ("summary.md", table.clone()),
            ("results.csv", csv(results)),
        ] {
            staged.stage("the results", &out.join(name), |o| {
                o.write_all(text.as_bytes())
            })?;
        }
    }
    let mut said = table;
    if let Some(out) = &args.out {
        said.push_str(&format!("Results written to {}\n", out.display()));
    }
    crate::stdout::write("the results", &said)?;
    staged.publish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judge_is_the_reviewer_when_names_match_ignoring_case() {
        for (a, b, same) in [
            ("gpt-x", "gpt-x", true),
            (" GPT-X ", "gpt-x", true),
            ("gpt-x", "gpt-y", false),
        ] {
            assert_eq!(same_model(a, b), same, "{a} {b}");
        }
    }
}
