//! `vouch-bench cost`: whole reviews of one given change (a real repository and range)
//! by the built `vouch` at each context window asked, with and without tools, against
//! the perfect model reporting estimated usage; and the one-prompt reviewer's request
//! for the same change, measured without being sent. The rules are in [`crate::cost`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use vouch_testkit::openai::{RecordedRequest, ServedBy};

use crate::cost::{
    cached_per_request, executions_per_lane, numstat_totals, one_prompt_request, parts,
    provider_text, tokens,
};
use crate::model::{Reader, Usage};
use crate::run::{BenchError, Config, git, is_probe, review};

/// What to measure.
#[derive(Debug, Clone)]
pub struct CostConfig {
    /// The repository.
    pub repo: PathBuf,
    /// The base revision of the change.
    pub base: String,
    /// The head revision of the change.
    pub head: String,
    /// Context windows to review at (`[model] context_tokens` of the composition).
    pub windows: Vec<u32>,
    /// For each window: with tools (the composition's `auto`), without, or both.
    pub tools: Vec<bool>,
    /// How the perfect model reads what it was not given inline (with tools on).
    pub reader: Reader,
    /// The composition (TOML text) reviewed with, its window set per run.
    pub manifest: String,
    /// The built `vouch` binary.
    pub vouch: PathBuf,
    /// Folder for the compositions written per window.
    pub work_dir: PathBuf,
    /// Stage instances at once.
    pub concurrency: usize,
    /// A review still running after this is stopped and reported as timed out.
    pub review_limit: Duration,
    /// The benchmark binary reviews are started through ([`Config::measurer`]).
    pub measurer: Option<PathBuf>,
    /// A folder to keep each review's JSON report in
    /// (`{repo}-{window}-tools-{on|off}.report.json`), when given.
    pub reports: Option<PathBuf>,
}

/// The change's size as `git diff -M --numstat base head` counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// Changed files.
    pub files: usize,
    /// Added plus deleted lines.
    pub lines: u64,
}

/// One reviewer's cost for the change.
#[derive(Debug, Clone)]
pub struct CostRow {
    /// `vouch`, or the one-prompt reviewer.
    pub reviewer: String,
    /// The context window of the review (from its report), for vouch.
    pub window: Option<u32>,
    /// Whether tools were offered, for vouch.
    pub tools: Option<bool>,
    /// Chat-completion requests (the endpoint check's probe not counted).
    pub requests: usize,
    /// Prompt tokens of those requests, as the model reported them ([`crate::cost`]).
    pub prompt_tokens: u64,
    /// Of those, the tokens a prefix cache would serve ([`cached_per_request`]).
    pub cached_tokens: u64,
    /// Prompt tokens by part of the requests ([`parts`]).
    pub parts: BTreeMap<String, u64>,
    /// Executions per lane (empty for the one-prompt reviewer).
    pub executions: BTreeMap<String, usize>,
    /// The largest request in vouch's own estimate (three bytes of the whole JSON body
    /// per token), and the bound vouch sizes requests to at the window.
    pub largest: (u64, Option<u32>),
    /// Coverage and opinion of the report, or why there is none.
    pub outcome: String,
}

/// Measures the change and every review of `config`; `progress` gets one line per step.
pub async fn run_cost(
    config: &CostConfig,
    mut progress: impl FnMut(&str),
) -> Result<(Change, Vec<CostRow>), BenchError> {
    let range = [config.base.as_str(), config.head.as_str()];
    let numstat = git(
        &config.repo,
        &[&["diff", "-M", "--numstat"][..], &range].concat(),
    )?;
    let (files, lines) = numstat_totals(&numstat);
    let change = Change { files, lines };
    let mut rows = Vec::new();
    for &window in &config.windows {
        for &tools in &config.tools {
            let on = if tools { "on" } else { "off" };
            progress(&format!("window {window}, tools {on}: review"));
            rows.push(vouch_row(config, window, tools).await?);
        }
    }
    let diff = git(&config.repo, &[&["diff", "-M", "-U3"][..], &range].concat())?;
    rows.push(one_prompt_row(&diff));
    Ok((change, rows))
}

/// One review by vouch at `window`, with or without tools.
async fn vouch_row(config: &CostConfig, window: u32, tools: bool) -> Result<CostRow, BenchError> {
    let (manifest, max_output) = window_manifest(&config.manifest, &config.work_dir, window)?;
    let run_config = Config {
        sizes: vec![],
        latency_sizes: vec![],
        latency: Duration::ZERO,
        vouch: config.vouch.clone(),
        manifest,
        work_dir: config.work_dir.clone(),
        concurrency: config.concurrency,
        tools,
        reader: config.reader,
        answers: crate::model::Answers::Exact,
        usage: Usage::Estimated,
        repeats: 1,
        review_limit: config.review_limit,
        keep: false,
        measurer: config.measurer.clone(),
    };
    let (run, chat) = review(
        &run_config,
        &config.repo,
        &config.base,
        &config.head,
        Duration::ZERO,
    )
    .await?;
    let requests: Vec<&RecordedRequest> = chat
        .iter()
        .filter(|r| r.served_by != ServedBy::Probe && !is_probe(r))
        .collect();
    let bodies: Vec<&Value> = requests.iter().map(|r| &r.body).collect();
    let report = run.report.as_ref();
    if let (Some(dir), Some(report)) = (&config.reports, report) {
        keep_report(dir, &config.repo, (window, tools), report)?;
    }
    let window = report
        .and_then(|r| r.pointer("/contextWindow/tokens"))
        .and_then(Value::as_u64)
        .map_or(window, |w| w as u32);
    let largest = requests.iter().map(|r| r.raw_body.len()).max().unwrap_or(0);
    Ok(CostRow {
        reviewer: "vouch".into(),
        window: Some(window),
        tools: Some(tools),
        requests: requests.len(),
        ..measure_requests(&bodies)
    }
    .with_review(
        report,
        (
            vouch_core::shard::estimate_tokens(largest),
            Some(vouch_host::manifest::request_tokens_for(window, max_output)),
        ),
        format!("{} · {}", run.coverage, run.opinion),
    ))
}

impl CostRow {
    fn with_review(
        mut self,
        report: Option<&Value>,
        largest: (u64, Option<u32>),
        outcome: String,
    ) -> CostRow {
        self.executions = report.map(executions_per_lane).unwrap_or_default();
        self.largest = largest;
        self.outcome = outcome;
        self
    }
}

/// Prompt tokens, cached tokens and parts of `bodies` (in the order the model got them).
fn measure_requests(bodies: &[&Value]) -> CostRow {
    let texts: Vec<String> = bodies.iter().map(|b| provider_text(b)).collect();
    let mut parts_total: BTreeMap<String, u64> = BTreeMap::new();
    for body in bodies {
        for (part, n) in parts(body) {
            *parts_total.entry(part).or_default() += n;
        }
    }
    CostRow {
        reviewer: String::new(),
        window: None,
        tools: None,
        requests: bodies.len(),
        prompt_tokens: texts.iter().map(|t| tokens(t.len())).sum(),
        cached_tokens: cached_per_request(&texts).iter().sum(),
        parts: parts_total,
        executions: BTreeMap::new(),
        largest: (0, None),
        outcome: String::new(),
    }
}

/// The one-prompt reviewer's one request for the change whose unified diff is `diff`.
fn one_prompt_row(diff: &str) -> CostRow {
    let request = one_prompt_request(diff);
    let row = measure_requests(&[&request]);
    CostRow {
        reviewer: "one prompt (estimated, not run)".into(),
        executions: BTreeMap::from([("the one prompt".to_owned(), 1)]),
        largest: (row.prompt_tokens, None),
        outcome: "-".into(),
        ..row
    }
}

/// Writes `report` into `dir`, named by the repository's folder, `window` and tools.
fn keep_report(
    dir: &Path,
    repo: &Path,
    (window, tools): (u32, bool),
    report: &Value,
) -> Result<(), BenchError> {
    let name = repo
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let on = if tools { "on" } else { "off" };
    let path = dir.join(format!("{name}-{window}-tools-{on}.report.json"));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, report.to_string()))
        .map_err(|source| BenchError::Io {
            what: format!("writing {}", path.display()),
            source,
        })
}

/// Writes `manifest` with `[model] context_tokens = window` into `dir`; its path and
/// the composition's `max_output_tokens` (when it sets none, the one vouch derives from
/// the window: 8,192 at 32k and above, 2,048 at 8k).
fn window_manifest(manifest: &str, dir: &Path, window: u32) -> Result<(PathBuf, u32), BenchError> {
    let mut table: toml::Table = manifest
        .parse()
        .map_err(|e: toml::de::Error| BenchError::Manifest(e.to_string()))?;
    let model = table
        .entry("model")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(model) = model {
        model.insert("context_tokens".into(), toml::Value::Integer(window.into()));
    }
    let max_output = table
        .get("budget")
        .and_then(|b| b.get("max_output_tokens"))
        .and_then(toml::Value::as_integer)
        .map_or_else(
            || vouch_host::manifest::output_tokens_for(window),
            |n| n as u32,
        );
    let path = dir.join(format!("cost-composition-{window}.toml"));
    let text = toml::to_string(&table).map_err(|e| BenchError::Manifest(e.to_string()))?;
    std::fs::write(&path, text).map_err(|source| BenchError::Io {
        what: format!("writing {}", path.display()),
        source,
    })?;
    Ok((path, max_output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_set_in_the_model_table_and_the_reply_cap_read() {
        let dir = tempfile::tempdir().unwrap();
        let (path, max_output) =
            window_manifest(crate::DEFAULT_MANIFEST, dir.path(), 131_072).unwrap();
        let written: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
        assert_eq!(
            written["model"]["context_tokens"].as_integer(),
            Some(131_072)
        );
        assert_eq!(max_output, 8_192);
        let (_, default_cap) =
            window_manifest("[composition]\nname = \"x\"\n", dir.path(), 32_768).unwrap();
        assert_eq!(default_cap, 8_192);
        let (_, small) = window_manifest(crate::DEFAULT_MANIFEST, dir.path(), 8_192).unwrap();
        assert_eq!(small, 2_048, "the reply cap follows the window");
    }
}
