//! `vouch-bench`: the scale benchmark table of `BENCHMARKS.md`.
//!
//! `cargo run --release -p vouch-bench` builds `vouch` in the same profile, then measures
//! N = 100, 1,000 and 5,000 and prints the Markdown table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use vouch_bench::{Config, DEFAULT_MANIFEST, Reader, bench_manifest, markdown_table, run};

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

#[tokio::main]
async fn main() -> Result<()> {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some(vouch_bench::child::MEASURE_ARG) {
        vouch_bench::child::measuring_process(&argv[2..]).await?;
        return Ok(());
    }
    let args = Args::parse();
    let profile_dir = std::env::current_exe()?
        .parent()
        .context("the benchmark's own folder")?
        .to_path_buf();
    let vouch = match args.vouch {
        Some(path) => path,
        None => build_vouch(&profile_dir)?,
    };
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
        reader: match args.reader {
            ReaderArg::Diff => Reader::Diff,
            ReaderArg::ReadFile => Reader::ReadFile,
        },
        usage: vouch_bench::Usage::Scripted,
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
        "Tools {}, reader {reader}:\n\n{}",
        if config.tools { "on" } else { "off" },
        markdown_table(&rows)
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
