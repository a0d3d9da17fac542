//! The benchmark harness end to end on a tiny change (N = 10): a real generated
//! repository, the built `vouch` binary, real HTTP to the scripted perfect model. It
//! checks that every column of the table is measured, and that a cost run fills every
//! figure; it asserts no timing.

use std::path::Path;
use std::time::Duration;

use vouch_bench::{
    Answers, COLUMNS, Config, CostConfig, DEFAULT_MANIFEST, Reader, Usage, bench_manifest,
    cost_table, markdown_table, run, run_cost,
};
use vouch_testkit::synth::SynthSpec;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tiny_run_fills_every_column() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let vouch = vouch_testkit::cargo::build_packages(&workspace, &["vouch-cli"]).join("vouch");
    let work = tempfile::tempdir().unwrap();
    let composition = tempfile::tempdir().unwrap();
    let config = Config {
        manifest: bench_manifest(DEFAULT_MANIFEST, composition.path()).unwrap(),
        sizes: vec![10],
        latency_sizes: vec![10],
        latency: Duration::from_millis(20),
        vouch,
        work_dir: work.path().to_path_buf(),
        concurrency: 4,
        tools: true,
        reader: Reader::Diff,
        answers: Answers::Exact,
        usage: Usage::Scripted,
        repeats: 1,
        review_limit: Duration::from_secs(600),
        keep: false,
        measurer: Some(env!("CARGO_BIN_EXE_vouch-bench").into()),
    };
    let rows = run(&config, |_| {}).await.expect("the benchmark runs");
    assert_eq!(rows.len(), 1);
    let review = rows[0].review.as_ref().expect("the instant review ran");
    assert!(review.requests > 0, "the review asked the model");
    assert!(rows[0].latency.is_some(), "the latency review ran");

    let table = markdown_table(&rows);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "header, rule, one row:\n{table}");
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    assert_eq!(cells(lines[0]), COLUMNS.map(str::to_owned).to_vec());
    let row = cells(lines[2]);
    assert_eq!(row.len(), COLUMNS.len(), "{table}");
    for (column, cell) in COLUMNS.iter().zip(&row) {
        assert!(
            !cell.is_empty() && cell != "-",
            "column `{column}` not measured:\n{table}"
        );
    }
    // The generated repository is deleted after measuring.
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);

    // The other modes: tools off, and tools on with the `read_file` reader.
    for (tools, reader) in [(false, Reader::Diff), (true, Reader::ReadFile)] {
        let config = Config {
            tools,
            reader,
            latency_sizes: vec![],
            ..config.clone()
        };
        let rows = run(&config, |_| {}).await.expect("the benchmark runs");
        let review = rows[0].review.as_ref().expect("the instant review ran");
        assert!(
            review.requests > 0,
            "{tools} {reader:?}: the review asked the model"
        );
        assert!(
            review.files_reviewed.is_some() && review.coverage != "-",
            "{tools} {reader:?}: the review wrote its report: {review:?}"
        );
    }

    // First answers that leave a file out or are cut off: the host's coverage retry and
    // repair bring every review to full coverage, with tools and without.
    for answers in [Answers::OmitOne, Answers::CutOff] {
        for tools in [true, false] {
            let config = Config {
                tools,
                answers,
                latency_sizes: vec![],
                ..config.clone()
            };
            let rows = run(&config, |_| {}).await.expect("the benchmark runs");
            let review = rows[0].review.as_ref().expect("the instant review ran");
            assert_eq!(
                review.coverage, "full",
                "{answers:?}, tools {tools}: {review:?}"
            );
        }
    }
}

/// `vouch-bench cost` end to end on a small generated change at the default window: the
/// report's stages give executions per lane, and the model's estimated usage gives
/// prompt tokens; the one-prompt reviewer's row comes last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cost_run_fills_every_figure() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let vouch = vouch_testkit::cargo::build_packages(&workspace, &["vouch-cli"]).join("vouch");
    let (_repo_dir, repo) = vouch_testkit::synth::generate_temp(&SynthSpec::new(10));
    let work = tempfile::tempdir().unwrap();
    let config = CostConfig {
        repo: repo.path.clone(),
        base: repo.base.clone(),
        head: repo.head.clone(),
        windows: vec![32_768],
        tools: vec![true],
        reader: Reader::Diff,
        manifest: DEFAULT_MANIFEST.to_owned(),
        vouch,
        work_dir: work.path().to_path_buf(),
        concurrency: 4,
        review_limit: Duration::from_secs(600),
        measurer: Some(env!("CARGO_BIN_EXE_vouch-bench").into()),
        reports: None,
    };
    let (change, rows) = run_cost(&config, |_| {}).await.expect("the cost run runs");
    assert!(change.files >= 10 && change.lines > 0, "{change:?}");
    assert_eq!(rows.len(), 2, "one review and the one-prompt row");
    let vouch = &rows[0];
    assert_eq!(vouch.window, Some(32_768));
    assert!(vouch.requests > 0 && vouch.prompt_tokens > 0, "{vouch:?}");
    assert!(vouch.cached_tokens <= vouch.prompt_tokens);
    assert!(
        !vouch.executions.is_empty(),
        "executions per lane: {vouch:?}"
    );
    assert_eq!(vouch.largest.1, Some(24_000));
    assert_eq!(rows[1].requests, 1);
    assert!(rows[1].prompt_tokens > 0);
    let table = cost_table(&change, &rows);
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| ")).count(),
        3,
        "{table}"
    );
}
