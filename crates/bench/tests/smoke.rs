//! The benchmark harness end to end on a tiny change (N = 10): a real generated
//! repository, the built `vouch` binary, real HTTP to the scripted perfect model. It
//! checks that every column of the table is measured; it asserts no timing.

use std::path::Path;
use std::time::Duration;

use vouch_bench::{
    COLUMNS, Config, DEFAULT_MANIFEST, Reader, Usage, bench_manifest, markdown_table, run,
};

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
}
