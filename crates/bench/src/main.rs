//! `vouch-bench`: the scale benchmark table of `BENCHMARKS.md`.
//!
//! `cargo run --release -p vouch-bench` builds `vouch` in the same profile, then measures
//! N = 100, 1,000 and 5,000 and prints the Markdown table.
//!
//! `vouch-bench cost --repo DIR --base REV --head REV` measures what reviews of one given
//! change cost (BENCHMARKS.md "Cost on real code"; fixtures: `scripts/cost-fixture`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use vouch_bench::{
    Answers, Config, CostConfig, DEFAULT_MANIFEST, Reader, Usage, bench_manifest, cost_table,
    markdown_table, run, run_cost,
};

/// Measures vouch on generated repositories against a scripted model and prints the
/// table of BENCHMARKS.md.
#[derive(Debug, Parser)]
#[command(name = "vouch-bench")]
struct Args {
    /// Sizes N (changed files), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "100,1000,5000")]
    sizes: Vec<usize>,
    /// Sizes also reviewed with the fixed-latency model.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    latency_sizes: Vec<usize>,
    /// The fixed-latency model's delay per reply, in milliseconds.
    #[arg(long, default_value_t = 200)]
    latency_ms: u64,
    /// Stage instances at once (vouch review --concurrency, and the critical path's).
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Whether the review offers tools (`vouch review --tools on|off`).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    tools: OnOff,
    /// How the perfect model reads a file it was not given inline, with tools on: one
    /// `diff` call, or `read_file` in 200-line windows at head and base.
    #[arg(long, value_enum, default_value_t = ReaderArg::Diff)]
    reader: ReaderArg,
    /// How the model writes each stage execution's first answer: exact, a receipt that
    /// leaves out one expected file (the host retries), or cut off in the middle (the
    /// host repairs); later answers are exact.
    #[arg(long, value_enum, default_value_t = AnswersArg::Exact)]
    answers: AnswersArg,
    /// Snapshot and git diff runs per size (the fastest counts).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// A review still running after this many seconds is stopped and reported as such.
    #[arg(long, default_value_t = 900)]
    review_limit_secs: u64,
    /// The vouch binary (default: built by cargo next to this one).
    #[arg(long)]
    vouch: Option<PathBuf>,
    /// Keep each generated repository and the reviews' JSON reports beside it.
    #[arg(long)]
    keep: bool,
    /// Folder for generated repositories (default: target/tmp/vouch-bench).
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

/// `--tools`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum OnOff {
    On,
    Off,
}

/// `--reader`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ReaderArg {
    Diff,
    ReadFile,
}

/// `--answers`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum AnswersArg {
    Exact,
    OmitOne,
    CutOff,
}

impl From<AnswersArg> for Answers {
    fn from(answers: AnswersArg) -> Answers {
        match answers {
            AnswersArg::Exact => Answers::Exact,
            AnswersArg::OmitOne => Answers::OmitOne,
            AnswersArg::CutOff => Answers::CutOff,
        }
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some(vouch_bench::child::MEASURE_ARG) {
        vouch_bench::child::measuring_process(&argv[2..]).await?;
        return Ok(());
    }
    if argv.get(1).map(String::as_str) == Some("cost") {
        return cost(CostArgs::parse_from(&argv[1..])).await;
    }
    let args = Args::parse();
    let (profile_dir, vouch) = vouch_binary(args.vouch)?;
    let work_dir = args
        .work_dir
        .unwrap_or_else(|| profile_dir.join("../tmp/vouch-bench"));
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("creating {}", work_dir.display()))?;
    let manifest = bench_manifest(DEFAULT_MANIFEST, &work_dir)?;
    let config = Config {
        manifest,
        sizes: args.sizes,
        latency_sizes: args.latency_sizes,
        latency: Duration::from_millis(args.latency_ms),
        vouch,
        work_dir,
        concurrency: args.concurrency.max(1),
        tools: matches!(args.tools, OnOff::On),
        reader: args.reader.into(),
        answers: args.answers.into(),
        usage: Usage::Scripted,
        repeats: args.repeats,
        review_limit: Duration::from_secs(args.review_limit_secs),
        keep: args.keep,
        measurer: Some(std::env::current_exe()?),
    };
    let rows = run(&config, |step| eprintln!("vouch-bench: {step}")).await?;
    let reader = if config.tools {
        config.reader.name()
    } else {
        "none (tools off)"
    };
    println!(
        "Tools {}, reader {reader}, first answers {}:\n\n{}",
        if config.tools { "on" } else { "off" },
        config.answers.name(),
        markdown_table(&rows)
    );
    Ok(())
}

impl From<ReaderArg> for Reader {
    fn from(reader: ReaderArg) -> Reader {
        match reader {
            ReaderArg::Diff => Reader::Diff,
            ReaderArg::ReadFile => Reader::ReadFile,
        }
    }
}

/// This binary's profile folder, and `vouch`: `given`, else built next to this binary.
fn vouch_binary(given: Option<PathBuf>) -> Result<(PathBuf, PathBuf)> {
    let profile_dir = std::env::current_exe()?
        .parent()
        .context("the benchmark's own folder")?
        .to_path_buf();
    let vouch = match given {
        Some(path) => path,
        None => build_vouch(&profile_dir)?,
    };
    Ok((profile_dir, vouch))
}

/// Measures what reviews of one given change cost and prints the table of
/// BENCHMARKS.md "Cost on real code".
#[derive(Debug, Parser)]
#[command(name = "vouch-bench cost")]
struct CostArgs {
    /// The repository.
    #[arg(long)]
    repo: PathBuf,
    /// The base revision of the change.
    #[arg(long)]
    base: String,
    /// The head revision of the change.
    #[arg(long)]
    head: String,
    /// Context windows (`[model] context_tokens`), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "32768,131072")]
    window: Vec<u32>,
    /// Tools on, off, or both (comma-separated), at each window.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "on,off")]
    tools: Vec<OnOff>,
    /// How the perfect model reads a file it was not given inline, with tools on.
    #[arg(long, value_enum, default_value_t = ReaderArg::Diff)]
    reader: ReaderArg,
    /// Stage instances at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// A review still running after this many seconds is stopped and reported as such.
    #[arg(long, default_value_t = 900)]
    review_limit_secs: u64,
    /// The vouch binary (default: built by cargo next to this one).
    #[arg(long)]
    vouch: Option<PathBuf>,
    /// Keep each review's JSON report in this folder.
    #[arg(long)]
    reports: Option<PathBuf>,
}

async fn cost(args: CostArgs) -> Result<()> {
    let (_, vouch) = vouch_binary(args.vouch)?;
    let work_dir = tempfile::tempdir().context("a folder for the compositions")?;
    let config = CostConfig {
        repo: args.repo.canonicalize().context("the repository")?,
        base: args.base,
        head: args.head,
        windows: args.window,
        tools: args.tools.iter().map(|t| matches!(t, OnOff::On)).collect(),
        reader: args.reader.into(),
        manifest: DEFAULT_MANIFEST.to_owned(),
        vouch,
        work_dir: work_dir.path().to_path_buf(),
        concurrency: args.concurrency.max(1),
        review_limit: Duration::from_secs(args.review_limit_secs),
        measurer: Some(std::env::current_exe()?),
        reports: args.reports,
    };
    let (change, rows) = run_cost(&config, |step| eprintln!("vouch-bench cost: {step}")).await?;
    println!(
        "{}, {}..{}, reader {}:\n\n{}",
        config.repo.display(),
        config.base,
        config.head,
        config.reader.name(),
        cost_table(&change, &rows)
    );
    Ok(())
}

/// Builds `vouch` with cargo (when run by `cargo run`) in this binary's profile and
/// returns its path.
fn build_vouch(profile_dir: &Path) -> Result<PathBuf> {
    let vouch = profile_dir.join("vouch");
    if let Ok(cargo) = std::env::var("CARGO") {
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev",
            Some(other) => other,
            None => bail!("unexpected folder {}", profile_dir.display()),
        };
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--profile", profile, "-p", "vouch-cli"])
            .status()
            .context("running cargo build -p vouch-cli")?;
        if !status.success() {
            bail!("cargo build -p vouch-cli failed");
        }
    }
    if !vouch.exists() {
        bail!(
            "{} does not exist: build it with `cargo build --release -p vouch-cli` or pass --vouch",
            vouch.display()
        );
    }
    Ok(vouch)
}
