//! One benchmark run: for each size, generate, measure the snapshot, review with the
//! instant model and (for the sizes asked) with the fixed-latency model, then delete the
//! repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use vouch_testkit::openai::{RecordedRequest, ScriptedServer, ServedBy};
use vouch_testkit::synth::SynthSpec;

use crate::child::{ChildError, measure, measure_via};
use crate::cost::numstat_totals;
use crate::critical::{Phase, Step, critical_path};
use crate::model::{Answers, Reader, Usage, perfect_script};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Sizes N (changed files of the generated change).
    pub sizes: Vec<usize>,
    /// Sizes also reviewed with the fixed-latency model.
    pub latency_sizes: Vec<usize>,
    /// The fixed-latency model's delay per reply.
    pub latency: Duration,
    /// The built `vouch` binary.
    pub vouch: PathBuf,
    /// The composition every review runs (see [`bench_manifest`]).
    pub manifest: PathBuf,
    /// Folder for generated repositories (each deleted after its size is measured).
    pub work_dir: PathBuf,
    /// Stage instances at once (`vouch review --concurrency`, and the critical path's).
    pub concurrency: usize,
    /// Whether the review offers the model tools: on is the composition's `auto`, which
    /// the scripted server accepts; off is `vouch review --tools off`.
    pub tools: bool,
    /// How the perfect model reads what it was not given inline (with tools on).
    pub reader: Reader,
    /// How the model writes each execution's first answer.
    pub answers: Answers,
    /// The usage the perfect model reports.
    pub usage: Usage,
    /// Snapshot and `git diff` runs per size (the fastest counts).
    pub repeats: usize,
    /// A review still running after this is stopped and reported as timed out.
    pub review_limit: Duration,
    /// Keep each generated repository and its reviews' reports (`synth-N.report.json`,
    /// `synth-N.latency.report.json`) for inspection instead of deleting them.
    pub keep: bool,
    /// The benchmark binary, which reviews are started through so their peak RSS is their
    /// own ([`crate::child::measure_via`]). `None`: started from this process, whose
    /// high-water mark their peak RSS then includes.
    pub measurer: Option<PathBuf>,
}

/// One size's measurements.
#[derive(Debug, Clone)]
pub struct Row {
    /// N, as asked of the generator.
    pub n: usize,
    /// Changed files in vouch's snapshot.
    pub files: usize,
    /// Added plus removed lines, as `git diff -M --numstat` counts them.
    pub changed_lines: u64,
    /// Fastest snapshot (in process, `vouch_git::snapshot`), seconds.
    pub snapshot_secs: f64,
    /// Least CPU (user + system, every thread) of those snapshots, seconds.
    pub snapshot_cpu_secs: f64,
    /// Fastest `git diff -M --numstat` of the same range, seconds.
    pub git_diff_secs: f64,
    /// The review with the instant model (`None` when it could not run).
    pub review: Option<ReviewRun>,
    /// The review with the fixed-latency model, for the latency sizes.
    pub latency: Option<LatencyRun>,
}

/// A whole review with the instant, perfect model.
#[derive(Debug, Clone)]
pub struct ReviewRun {
    /// Wall time of the `vouch` process, seconds.
    pub wall_secs: f64,
    /// User plus system CPU of the `vouch` process, seconds.
    pub cpu_secs: f64,
    /// Peak RSS of the `vouch` process, bytes.
    pub max_rss: u64,
    /// Chat-completion requests (the endpoint check's probe not counted).
    pub requests: usize,
    /// Bytes of every request body, summed.
    pub prompt_bytes: u64,
    /// Bytes of the largest request body.
    pub largest_request: u64,
    /// `filesReviewed` of the report.
    pub files_reviewed: Option<usize>,
    /// `filesNotReviewed` of the report counted by reason, e.g. `binary 2`.
    pub not_reviewed: String,
    /// The report's coverage (`full`, `limited`, …), or why there is none.
    pub coverage: String,
    /// The report's opinion (`no-findings (clean)`, `incomplete`, …) or `timeout`.
    pub opinion: String,
    /// The JSON report, when the review wrote one.
    pub report: Option<Value>,
}

/// A whole review with the fixed-latency model.
#[derive(Debug, Clone)]
pub struct LatencyRun {
    /// Wall time of the `vouch` process, seconds.
    pub wall_secs: f64,
    /// The critical path of its recorded requests × the latency, seconds.
    pub critical_secs: f64,
}

/// Errors of a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A child process could not run.
    #[error(transparent)]
    Child(#[from] ChildError),
    /// vouch's snapshot failed.
    #[error("vouch's snapshot of the generated change failed: {0}")]
    Snapshot(String),
    /// A file of the run could not be handled.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// `git` failed.
    #[error("git {0}")]
    Git(String),
    /// The default composition could not be turned into the benchmark's.
    #[error("the benchmark composition: {0}")]
    Manifest(String),
}

/// Runs the benchmark; `progress` gets one line per step.
pub async fn run(config: &Config, mut progress: impl FnMut(&str)) -> Result<Vec<Row>, BenchError> {
    let mut rows = Vec::new();
    for &n in &config.sizes {
        let dir = config.work_dir.join(format!("synth-{n}"));
        if dir.exists() {
            remove(&dir)?;
        }
        progress(&format!("N={n}: generating"));
        let spec = SynthSpec {
            minified: true,
            long_file: true,
            ..SynthSpec::new(n)
        };
        let change = vouch_testkit::synth::generate(&dir, &spec);
        let (base, head) = (change.base.clone(), change.head.clone());
        let row = measure_size(config, n, &dir, &base, &head, &mut progress).await;
        if config.keep {
            progress(&format!("N={n}: kept in {}", dir.display()));
        } else {
            remove(&dir)?;
        }
        rows.push(row?);
    }
    Ok(rows)
}

async fn measure_size(
    config: &Config,
    n: usize,
    repo: &Path,
    base: &str,
    head: &str,
    progress: &mut impl FnMut(&str),
) -> Result<Row, BenchError> {
    progress(&format!("N={n}: snapshot vs git diff"));
    let (snapshot_secs, snapshot_cpu_secs, files) =
        time_snapshot(repo, base, head, config.repeats)?;
    let (git_diff_secs, changed_lines) = time_git_diff(repo, base, head, config.repeats).await?;
    progress(&format!("N={n}: review, instant model"));
    let (instant, _) = review(config, repo, base, head, Duration::ZERO).await?;
    let latency = if config.latency_sizes.contains(&n) {
        progress(&format!("N={n}: review, {:?} per reply", config.latency));
        let (run, chat) = review(config, repo, base, head, config.latency).await?;
        let critical = critical_latencies(&chat, config.concurrency) as f64;
        Some(LatencyRun {
            wall_secs: run.wall_secs,
            critical_secs: critical * config.latency.as_secs_f64(),
        })
    } else {
        None
    };
    Ok(Row {
        n,
        files,
        changed_lines,
        snapshot_secs,
        snapshot_cpu_secs,
        git_diff_secs,
        review: Some(instant),
        latency,
    })
}

/// The fastest of `repeats` in-process snapshots, the least CPU one of them took, and
/// the snapshot's file count.
fn time_snapshot(
    repo: &Path,
    base: &str,
    head: &str,
    repeats: usize,
) -> Result<(f64, f64, usize), BenchError> {
    let (mut best, mut least_cpu) = (f64::MAX, f64::MAX);
    let mut files = 0;
    for _ in 0..repeats.max(1) {
        let (started, cpu) = (Instant::now(), process_cpu_secs());
        let snapshot = vouch_git::snapshot(repo, Some(base), head)
            .map_err(|e| BenchError::Snapshot(e.to_string()))?;
        best = best.min(started.elapsed().as_secs_f64());
        least_cpu = least_cpu.min(process_cpu_secs() - cpu);
        files = snapshot.files.len();
    }
    Ok((best, least_cpu, files))
}

/// User plus system CPU of this process so far (every thread), seconds.
fn process_cpu_secs() -> f64 {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer is valid for writes for the duration of the call;
    // RUSAGE_SELF cannot fail.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The fastest of `repeats` runs of `git diff -M --numstat merge-base head`, and the
/// changed lines it counts.
async fn time_git_diff(
    repo: &Path,
    base: &str,
    head: &str,
    repeats: usize,
) -> Result<(f64, u64), BenchError> {
    let merge_base = git(repo, &["merge-base", base, head])?;
    let merge_base = merge_base.trim();
    let args = ["diff", "-M", "--numstat", merge_base, head];
    let mut best = f64::MAX;
    for _ in 0..repeats.max(1) {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(repo)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let usage = measure(command, Duration::from_secs(3600)).await?;
        best = best.min(usage.wall.as_secs_f64());
    }
    let (_, lines) = numstat_totals(&git(repo, &args)?);
    Ok((best, lines))
}

pub(crate) fn git(repo: &Path, args: &[&str]) -> Result<String, BenchError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|source| BenchError::Io {
            what: "running git".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(BenchError::Git(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One whole review by the `vouch` binary against the perfect model answering after
/// `latency`; its measurements (the endpoint check's probe not counted among its
/// requests) and every chat request the model received, the probe included.
pub(crate) async fn review(
    config: &Config,
    repo: &Path,
    base: &str,
    head: &str,
    latency: Duration,
) -> Result<(ReviewRun, Vec<RecordedRequest>), BenchError> {
    let server = ScriptedServer::start(perfect_script(
        latency,
        config.reader,
        config.answers,
        config.usage,
    ))
    .await;
    let report = repo.with_extension(match latency.is_zero() {
        true => "report.json",
        false => "latency.report.json",
    });
    let command = vouch_command(config, repo, base, head, &server.base_url(), &report);
    let usage = match config.measurer.clone() {
        Some(measurer) => {
            let limit = config.review_limit;
            tokio::task::spawn_blocking(move || measure_via(&measurer, &command, limit))
                .await
                .expect("the measuring task does not panic")?
        }
        None => measure(command, config.review_limit).await?,
    };
    let chat = server.chat_requests();
    let requests: Vec<&RecordedRequest> = chat
        .iter()
        .filter(|r| r.served_by != ServedBy::Probe && !is_probe(r))
        .collect();
    let text = std::fs::read_to_string(&report).ok();
    if !config.keep {
        let _ = std::fs::remove_file(&report);
    }
    let json: Option<Value> = text.and_then(|t| serde_json::from_str(&t).ok());
    let outcome = match (&json, usage.timed_out) {
        (_, true) => Outcome::missing(format!(
            "timeout ({:.0} s)",
            config.review_limit.as_secs_f64()
        )),
        (Some(report), false) => describe(report),
        (None, false) => Outcome::missing(format!("no report (exit {:?})", usage.code)),
    };
    let run = ReviewRun {
        wall_secs: usage.wall.as_secs_f64(),
        cpu_secs: usage.cpu.as_secs_f64(),
        max_rss: usage.max_rss,
        requests: requests.len(),
        prompt_bytes: requests.iter().map(|r| r.raw_body.len() as u64).sum(),
        largest_request: requests
            .iter()
            .map(|r| r.raw_body.len() as u64)
            .max()
            .unwrap_or(0),
        files_reviewed: outcome.files_reviewed,
        not_reviewed: outcome.not_reviewed,
        coverage: outcome.coverage,
        opinion: outcome.opinion,
        report: json,
    };
    Ok((run, chat))
}

fn vouch_command(
    config: &Config,
    repo: &Path,
    base: &str,
    head: &str,
    base_url: &str,
    report: &Path,
) -> Command {
    let mut command = Command::new(&config.vouch);
    command
        .arg("review")
        .arg("--repo")
        .arg(repo)
        .arg("--manifest")
        .arg(&config.manifest)
        .args(["--base", base, "--head", head, "--format", "json", "--out"])
        .arg(report)
        .args([
            "--base-url",
            base_url,
            "--model",
            "scripted-model",
            "--no-cache",
        ])
        .args(["--concurrency", &config.concurrency.to_string()])
        .args(if config.tools {
            &[][..]
        } else {
            &["--tools", "off"][..]
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") || key.starts_with("VOUCH_") {
            command.env_remove(key);
        }
    }
    command
        .env("CI", "true")
        .env("OPENAI_API_KEY", "bench-key")
        .env("XDG_CONFIG_HOME", "/nonexistent-vouch-bench-config");
    command
}

/// What a review's report says about its outcome.
struct Outcome {
    coverage: String,
    opinion: String,
    files_reviewed: Option<usize>,
    not_reviewed: String,
}

impl Outcome {
    /// No report: `why` stands for the opinion.
    fn missing(why: String) -> Outcome {
        Outcome {
            coverage: "-".into(),
            opinion: why,
            files_reviewed: None,
            not_reviewed: "-".into(),
        }
    }
}

/// Coverage, opinion (with `clean` when it is), files reviewed and the reasons of the
/// files not reviewed, of a JSON report.
fn describe(report: &Value) -> Outcome {
    let opinion = &report["opinion"];
    let mut outcome = opinion["outcome"].as_str().unwrap_or("-").to_owned();
    if opinion["clean"].as_bool() == Some(true) {
        outcome.push_str(" (clean)");
    }
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for file in report["filesNotReviewed"].as_array().into_iter().flatten() {
        *reasons
            .entry(file["reason"].as_str().unwrap_or("?"))
            .or_default() += 1;
    }
    let not_reviewed = if reasons.is_empty() {
        "none".to_owned()
    } else {
        let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        parts.join(", ")
    };
    Outcome {
        coverage: opinion["coverage"].as_str().unwrap_or("-").to_owned(),
        opinion: outcome,
        files_reviewed: report["filesReviewed"].as_array().map(Vec::len),
        not_reviewed,
    }
}

/// Writes the composition the benchmark reviews with into `dir` and returns its path:
/// the default composition (`default_manifest`, the text of `manifests/default.toml`)
/// with the exclusion of minified files removed, so the generated 2 MB minified file
/// is reviewed like any other file rather than excluded (which alone would limit
/// coverage at every size).
pub fn bench_manifest(default_manifest: &str, dir: &Path) -> Result<PathBuf, BenchError> {
    let mut manifest: toml::Table = default_manifest
        .parse()
        .map_err(|e: toml::de::Error| BenchError::Manifest(e.to_string()))?;
    if let Some(toml::Value::Array(exclude)) =
        manifest.get_mut("files").and_then(|f| f.get_mut("exclude"))
    {
        exclude.retain(|glob| glob.as_str().is_none_or(|g| !g.ends_with("*.min.js")));
    }
    let path = dir.join("bench-composition.toml");
    let text = toml::to_string(&manifest).map_err(|e| BenchError::Manifest(e.to_string()))?;
    std::fs::write(&path, text).map_err(|source| BenchError::Io {
        what: format!("writing {}", path.display()),
        source,
    })?;
    Ok(path)
}

pub(crate) fn is_probe(request: &RecordedRequest) -> bool {
    request.body.get("max_tokens").and_then(Value::as_u64) == Some(1)
}

/// The critical path, in request latencies, of a review whose model received `chat`.
/// The endpoint check waits for its reply like any stage request, so it is on the path
/// although it is not counted among the review's requests.
pub fn critical_latencies(chat: &[RecordedRequest], concurrency: usize) -> u64 {
    critical_path(&steps(chat), concurrency)
}

/// Each request's stage instance (`Instance: LABEL` of its first user message) and phase.
pub fn steps(requests: &[RecordedRequest]) -> Vec<Step> {
    requests
        .iter()
        .map(|r| {
            let label = r.contents_of("user").into_iter().find_map(|text| {
                let at = text.find("Instance: ")?;
                let rest = &text[at + "Instance: ".len()..];
                Some(rest.lines().next().unwrap_or("").trim().to_owned())
            });
            let phase = Phase::of(label.as_deref(), is_probe(r));
            Step { label, phase }
        })
        .collect()
}

fn remove(dir: &Path) -> Result<(), BenchError> {
    std::fs::remove_dir_all(dir).map_err(|source| BenchError::Io {
        what: format!("removing {}", dir.display()),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_composition_is_the_default_without_the_minified_exclusion() {
        let dir = tempfile::tempdir().unwrap();
        let path = bench_manifest(crate::DEFAULT_MANIFEST, dir.path()).unwrap();
        let written: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
        let default: toml::Table = crate::DEFAULT_MANIFEST.parse().unwrap();
        let exclude = |t: &toml::Table| -> Vec<String> {
            t["files"]["exclude"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_str().unwrap().to_owned())
                .collect()
        };
        let mut expected = exclude(&default);
        assert!(expected.iter().any(|g| g == "**/*.min.js"));
        expected.retain(|g| g != "**/*.min.js");
        assert_eq!(exclude(&written), expected);
        assert_eq!(written["specialist"], default["specialist"]);
        assert_eq!(written["budget"], default["budget"]);
    }

    fn recorded(body: Value) -> RecordedRequest {
        RecordedRequest {
            seq: 0,
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            query: None,
            headers: vec![],
            raw_body: body.to_string(),
            body,
            arrived_at: Instant::now(),
            served_by: ServedBy::Rule {
                index: 0,
                label: None,
            },
            status: 200,
            in_flight_at_arrival: vec![],
        }
    }

    #[test]
    fn the_endpoint_check_is_on_the_critical_path() {
        let user = |text: &str| {
            recorded(serde_json::json!({"messages": [{"role": "user", "content": text}]}))
        };
        // As the perfect script records it: the probe served by its one rule.
        let chat = vec![
            recorded(serde_json::json!({"max_tokens": 1, "messages": []})),
            user("Instance: generic-investigator #1\n"),
            user("Instance: conventions #1\n"),
            user("Instance: clean-result-audit\n"),
        ];
        assert_eq!(critical_latencies(&chat, 4), 3);
        assert_eq!(critical_latencies(&chat[1..], 4), 2);
    }

    #[test]
    fn steps_name_each_request_by_its_stage_instance() {
        let user = |text: &str| {
            recorded(serde_json::json!({"messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": text},
            ]}))
        };
        let probe = recorded(serde_json::json!({"max_tokens": 1, "messages": []}));
        let requests = vec![
            probe,
            user("Review.\nInstance: generic-investigator #1 [shard 2/3]\nMore"),
            user("Instance: clean-result-audit\n"),
            user("Instance: verifier\n"),
            user("no instance named"),
        ];
        let got: Vec<(Option<String>, Phase)> = steps(&requests)
            .into_iter()
            .map(|s| (s.label, s.phase))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, Phase::Probe),
                (
                    Some("generic-investigator #1 [shard 2/3]".into()),
                    Phase::Lanes
                ),
                (Some("clean-result-audit".into()), Phase::Audit),
                (Some("verifier".into()), Phase::Verify),
                (None, Phase::Unattributed),
            ]
        );
    }
}
