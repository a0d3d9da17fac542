//! Hostile input: any bytes in any supported language, deep nesting, and any symbol text
//! never panic, and what is indexed stays inside the file.

use std::sync::Arc;

use proptest::prelude::*;
use vouch_core::source::Revision;
use vouch_git::SourceReader;
use vouch_graph::{FileIndex, GraphError, Language, ParseCache, RepoGraph};
use vouch_testkit::git::TestRepo;

const LANGUAGES: [Language; 9] = [
    Language::Rust,
    Language::Python,
    Language::JavaScript,
    Language::TypeScript,
    Language::Tsx,
    Language::Go,
    Language::Java,
    Language::C,
    Language::Cpp,
];

/// Every definition and use lies inside the file, and a signature inside its definition.
fn assert_inside(index: &FileIndex) {
    let lines = index.lines.len().max(1) as u32;
    for d in &index.definitions {
        assert!(
            1 <= d.start_line
                && d.start_line <= d.signature_end_line
                && d.signature_end_line <= d.end_line
                && d.end_line <= lines,
            "{d:?} in {lines} lines"
        );
    }
    for o in &index.occurrences {
        assert!(1 <= o.line && o.line <= lines, "{o:?} in {lines} lines");
        assert!(o.enclosing.is_none_or(|e| e < index.definitions.len()));
    }
}

fn source_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..400),
        "(fn|def|class|func|int|struct|impl|\\{|\\}|\\(|\\)|:|;|,|=|\\n| |[a-z_]{1,6}|@|\\*|::|->|\"|'){0,120}"
            .prop_map(String::into_bytes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_bytes_in_any_language_index_inside_the_file(source in source_text(), lang in 0usize..9) {
        let index = FileIndex::parse(LANGUAGES[lang], &source);
        assert_inside(&index);
    }
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    for language in LANGUAGES {
        for unit in ["(", "{", "[", "f(", "{{", "a."] {
            let source = unit.repeat(10_000);
            let index = FileIndex::parse(language, source.as_bytes());
            assert_inside(&index);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_symbol_text_is_answered_or_refused(symbol in "\\PC{0,40}|[a-z_:.]{0,12}") {
        SMALL.with(|(_, g)| {
            for result in [
                g.references(&symbol, Revision::Head),
                g.definition(&symbol, Some(&symbol), Revision::Base),
            ] {
                match result {
                    Ok(r) => prop_assert!(r.text.len() <= vouch_graph::graph::MAX_BYTES),
                    Err(GraphError::InvalidSymbol { reason }) => prop_assert!(!reason.is_empty()),
                    Err(other) => prop_assert!(false, "{symbol:?}: {other}"),
                }
            }
            Ok(())
        })?;
    }
}

thread_local! {
    /// One small repository for all cases of a run (proptest runs them on one thread).
    static SMALL: (TestRepo, RepoGraph) = small_graph();
}

fn small_graph() -> (TestRepo, RepoGraph) {
    let repo = TestRepo::new();
    repo.write("a.py", "def a(x, *, y=1):\n    return b(x)\n");
    repo.write("b.rs", "fn b(x: u8) -> u8 { a(x) }\n");
    repo.write("c.txt", "a b c\n");
    let sha = repo.commit("small");
    let snapshot = vouch_git::snapshot(repo.path(), Some(&sha), &sha).expect("snapshot");
    let reader = Arc::new(SourceReader::open(repo.path(), &snapshot).expect("reader"));
    let graph = RepoGraph::with_cache(reader, Arc::new(ParseCache::new(1 << 20)));
    (repo, graph)
}
