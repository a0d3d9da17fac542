//! Measures the graph on a real repository: outlines of every file with a grammar under a
//! folder (cold cache), then `references` of a few symbols (cold and warm).
//!
//! `cargo run -p vouch-graph --example graph_stats -- REPO REV PREFIX SYMBOL...`

use std::sync::Arc;
use std::time::Instant;

use vouch_core::source::Revision;
use vouch_git::SourceReader;
use vouch_graph::{Language, ParseCache, RepoGraph};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [repo, rev, prefix, symbols @ ..] = args.as_slice() else {
        eprintln!("usage: graph_stats REPO REV PREFIX SYMBOL...");
        std::process::exit(2);
    };
    let path = std::path::Path::new(repo);
    let snapshot = vouch_git::snapshot(path, Some(rev), rev).expect("snapshot");
    let reader = Arc::new(SourceReader::open(path, &snapshot).expect("reader"));

    let cold = Arc::new(ParseCache::new(vouch_graph::DEFAULT_CACHE_BYTES));
    let graph = RepoGraph::with_cache(reader.clone(), cold.clone());
    let files: Vec<_> = reader
        .files(Revision::Head)
        .expect("files")
        .into_iter()
        .filter(|f| f.path.starts_with(prefix.as_str()) && Language::from_path(&f.path).is_some())
        .collect();
    let start = Instant::now();
    let mut items = 0;
    for file in &files {
        items += graph
            .outline(&file.path, Revision::Head)
            .expect("outline")
            .hits
            .len();
    }
    println!(
        "outline of {} files under {prefix}: {items} items, {} files parsed, {:?}",
        files.len(),
        graph.files_parsed(),
        start.elapsed()
    );
    for symbol in symbols {
        let fresh = RepoGraph::with_cache(reader.clone(), Arc::new(ParseCache::new(1 << 28)));
        let start = Instant::now();
        let found = fresh
            .references(symbol, Revision::Head)
            .expect("references");
        let cold_time = start.elapsed();
        let start = Instant::now();
        fresh
            .references(symbol, Revision::Head)
            .expect("references");
        println!(
            "references {symbol}: {} results, {} files parsed, cold {cold_time:?}, warm {:?}",
            found.hits.len(),
            fresh.files_parsed(),
            start.elapsed()
        );
    }
}
