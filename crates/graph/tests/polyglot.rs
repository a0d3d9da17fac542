//! The graph on a committed multi-language fixture (`tests/data/polyglot`), committed into
//! a real git repository: base is the fixture, head changes `send` in Python.

use std::path::Path;
use std::sync::Arc;

use vouch_core::source::{Revision, SourceWindow};
use vouch_git::SourceReader;
use vouch_graph::{HitKind, Language, ParseCache, RepoGraph, SymbolKind, Via};
use vouch_testkit::git::TestRepo;

/// The fixture repository and a graph over `base..head` with its own cache.
fn fixture() -> (TestRepo, RepoGraph) {
    let repo = TestRepo::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/polyglot");
    copy_tree(&repo, &root, "");
    let base = repo.commit("polyglot fixture");
    let util = std::fs::read_to_string(root.join("py/app/util.py")).expect("fixture");
    repo.write(
        "py/app/util.py",
        util.replace("timeout=None):", "timeout=None, priority=0):"),
    );
    let head = repo.commit("send takes a priority");
    let graph = graph(&repo, &base, &head);
    (repo, graph)
}

fn graph(repo: &TestRepo, base: &str, head: &str) -> RepoGraph {
    let snapshot = vouch_git::snapshot(repo.path(), Some(base), head).expect("snapshot");
    let reader = Arc::new(SourceReader::open(repo.path(), &snapshot).expect("reader"));
    RepoGraph::with_cache(reader, Arc::new(ParseCache::new(1 << 24)))
}

fn copy_tree(repo: &TestRepo, dir: &Path, prefix: &str) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 name");
        let rel = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        if path.is_dir() {
            copy_tree(repo, &path, &rel);
        } else {
            repo.write(&rel, std::fs::read(&path).expect("fixture file"));
        }
    }
}

/// A window of `path` at head.
fn head(path: &str, start_line: u32, end_line: u32) -> SourceWindow {
    SourceWindow {
        revision: Revision::Head,
        path: path.into(),
        start_line,
        end_line,
    }
}

#[test]
fn definitions_are_found_in_every_language_with_their_lines_and_parameters() {
    let (_repo, g) = fixture();
    type Case<'a> = (&'a str, &'a str, u32, u32, Language, &'a [&'a str]);
    let cases: &[Case] = &[
        (
            "greet",
            "rust/src/lib.rs",
            4,
            7,
            Language::Rust,
            &["name: &str", "loud: bool"],
        ),
        (
            "Greeter::hello",
            "rust/src/lib.rs",
            18,
            20,
            Language::Rust,
            &["&self", "name: &str"],
        ),
        (
            "deliver",
            "py/app/util.py",
            15,
            17,
            Language::Python,
            &["to", "body", "*", "urgent=False"],
        ),
        (
            "fetchUser",
            "web/api.ts",
            6,
            9,
            Language::TypeScript,
            &["id: number", "opts?: { cache: boolean }"],
        ),
        (
            "toUrl",
            "web/api.ts",
            11,
            11,
            Language::TypeScript,
            &["path: string"],
        ),
        (
            "UserCard",
            "web/view.tsx",
            3,
            6,
            Language::Tsx,
            &["props: { id: number }"],
        ),
        (
            "formatName",
            "web/legacy.js",
            1,
            3,
            Language::JavaScript,
            &["first", "last = \"\""],
        ),
        (
            "Serve",
            "svc/server.go",
            9,
            11,
            Language::Go,
            &["addr string", "handler http.Handler"],
        ),
        (
            "deposit",
            "jvm/Account.java",
            10,
            12,
            Language::Java,
            &["long amount", "boolean notify"],
        ),
        (
            "buf_push",
            "native/buf.c",
            4,
            9,
            Language::C,
            &["struct buf *b", "const char *data", "size_t len"],
        ),
        (
            "Cache::put",
            "native/cache.cpp",
            10,
            10,
            Language::Cpp,
            &["const std::string &key", "int ttl"],
        ),
    ];
    for &(symbol, path, start, end, language, params) in cases {
        let found = g.definition(symbol, None, Revision::Head).expect(symbol);
        let hit = &found.hits[0];
        assert_eq!(
            (hit.path.as_str(), hit.start_line, hit.end_line, hit.via),
            (path, start, end, Via::Grammar(language)),
            "{symbol}:\n{}",
            found.text
        );
        assert!(matches!(hit.kind, HitKind::Definition(_)), "{symbol}");
        assert_eq!(hit.parameters, params, "{symbol}");
        assert_eq!(found.windows[0], head(path, start, end), "{symbol}");
        assert!(!found.text_fallback, "{symbol}: {}", found.text);
        for n in start..=end {
            assert!(
                found.text.contains(&format!("\n{n}: ")),
                "{symbol} line {n}:\n{}",
                found.text
            );
        }
    }
}

#[test]
fn a_declaration_and_its_definition_are_both_listed_and_the_path_hint_orders_them() {
    let (_repo, g) = fixture();
    let plain = g
        .definition("buf_push", None, Revision::Head)
        .expect("buf_push");
    let paths: Vec<_> = plain
        .hits
        .iter()
        .map(|h| (h.path.as_str(), h.start_line))
        .collect();
    assert_eq!(
        paths,
        [("native/buf.c", 4), ("native/buf.h", 8)],
        "{}",
        plain.text
    );
    let hinted = g
        .definition("buf_push", Some("buf.h"), Revision::Head)
        .expect("buf_push");
    let paths: Vec<_> = hinted
        .hits
        .iter()
        .map(|h| (h.path.as_str(), h.start_line))
        .collect();
    assert_eq!(
        paths,
        [("native/buf.h", 8), ("native/buf.c", 4)],
        "{}",
        hinted.text
    );
    let qualified = g
        .definition("Cache::put", None, Revision::Head)
        .expect("put");
    let lines: Vec<_> = qualified.hits.iter().map(|h| h.start_line).collect();
    assert_eq!(
        lines,
        [10, 13],
        "both members of Cache:\n{}",
        qualified.text
    );
}

#[test]
fn keyword_parameters_are_named_as_each_revision_has_them() {
    let (_repo, g) = fixture();
    let at_head = g.definition("send", None, Revision::Head).expect("head");
    let at_base = g.definition("send", None, Revision::Base).expect("base");
    assert_eq!(
        at_head.hits[0].parameters,
        ["message", "*", "retries=3", "timeout=None", "priority=0"]
    );
    assert_eq!(
        at_base.hits[0].parameters,
        ["message", "*", "retries=3", "timeout=None"]
    );
    assert!(
        at_head
            .text
            .contains("parameters: message | * | retries=3 | timeout=None | priority=0"),
        "{}",
        at_head.text
    );
    assert!(
        at_base
            .text
            .starts_with("definitions of `send` at base (the merge base)"),
        "{}",
        at_base.text
    );
    assert_eq!(at_base.windows[0].revision, Revision::Base);
}

#[test]
fn references_cross_files_mark_calls_and_name_the_callers() {
    let (_repo, g) = fixture();
    let send = g.references("send", Revision::Head).expect("send");
    let uses: Vec<_> = send
        .hits
        .iter()
        .map(|h| (h.path.as_str(), h.start_line, h.kind, h.name.as_deref()))
        .collect();
    assert_eq!(
        uses,
        [
            ("py/app/main.py", 1, HitKind::Reference, None),
            ("py/app/main.py", 5, HitKind::Call, Some("run")),
            ("py/app/util.py", 17, HitKind::Call, Some("deliver")),
            ("py/app/main.py", 4, HitKind::Caller, Some("run")),
            ("py/app/util.py", 15, HitKind::Caller, Some("deliver")),
        ],
        "{}",
        send.text
    );
    assert!(
        send.text
            .contains("py/app/main.py:5: call in `run`: send(\"started\", timeout=5)"),
        "{}",
        send.text
    );
    assert!(send.text.contains("callers of `send`"), "{}", send.text);
    // The caller is shown with its signature (decorator included), and exactly that is recorded.
    assert!(
        send.windows.contains(&head("py/app/util.py", 15, 16)),
        "{:?}",
        send.windows
    );
    assert!(
        send.windows.contains(&head("py/app/main.py", 5, 5)),
        "{:?}",
        send.windows
    );

    type Case<'a> = (&'a str, &'a [(&'a str, u32, HitKind)]);
    let cases: &[Case] = &[
        (
            "fetchUser",
            &[
                ("web/view.tsx", 1, HitKind::Reference),
                ("web/view.tsx", 4, HitKind::Call),
                ("web/view.tsx", 3, HitKind::Caller),
            ],
        ),
        (
            "buf_push",
            &[
                ("native/cache.cpp", 15, HitKind::Call),
                ("native/cache.cpp", 13, HitKind::Caller),
            ],
        ),
        (
            "deposit",
            &[
                ("jvm/Bank.java", 6, HitKind::Call),
                ("jvm/Bank.java", 4, HitKind::Caller),
            ],
        ),
        (
            "Serve",
            &[
                ("svc/server.go", 14, HitKind::Call),
                ("svc/server.go", 13, HitKind::Caller),
            ],
        ),
        (
            "greet",
            &[
                ("rust/src/lib.rs", 19, HitKind::Call),
                ("rust/src/main.rs", 1, HitKind::Reference),
                ("rust/src/main.rs", 6, HitKind::Call),
                ("rust/src/lib.rs", 18, HitKind::Caller),
                ("rust/src/main.rs", 3, HitKind::Caller),
            ],
        ),
    ];
    for &(symbol, expected) in cases {
        let found = g.references(symbol, Revision::Head).expect(symbol);
        let got: Vec<_> = found
            .hits
            .iter()
            .map(|h| (h.path.as_str(), h.start_line, h.kind))
            .collect();
        assert_eq!(got, expected, "{symbol}:\n{}", found.text);
    }
}

#[test]
fn an_outline_lists_top_level_items_and_members_with_ranges_and_signatures() {
    let (_repo, g) = fixture();
    let outline = g
        .outline("py/app/util.py", Revision::Head)
        .expect("outline");
    let items: Vec<_> = outline
        .hits
        .iter()
        .map(|h| {
            (
                h.name.as_deref().unwrap_or(""),
                h.kind,
                h.start_line,
                h.end_line,
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            ("send", HitKind::Definition(SymbolKind::Function), 4, 8),
            ("Mailer", HitKind::Definition(SymbolKind::Class), 11, 17),
            (
                "__init__",
                HitKind::Definition(SymbolKind::Function),
                12,
                13
            ),
            ("deliver", HitKind::Definition(SymbolKind::Function), 15, 17),
        ],
        "{}",
        outline.text
    );
    // Only the signature lines are shown, so only they are recorded.
    assert_eq!(
        outline.windows,
        [
            head("py/app/util.py", 4, 4),
            head("py/app/util.py", 11, 11),
            head("py/app/util.py", 12, 12),
            head("py/app/util.py", 15, 16),
        ]
    );
    assert!(outline.text.contains("function `send` lines 4-8; parameters: message | * | retries=3 | timeout=None | priority=0\n4: def send("), "{}", outline.text);
    assert!(
        !outline.text.contains("\n5: "),
        "the body is not shown:\n{}",
        outline.text
    );

    let rust = g
        .outline("rust/src/lib.rs", Revision::Head)
        .expect("outline");
    let items: Vec<_> = rust
        .hits
        .iter()
        .map(|h| (h.name.clone().unwrap_or_default(), h.start_line, h.end_line))
        .collect();
    assert_eq!(
        items,
        [
            ("greet".into(), 4, 7),
            ("Greeter".into(), 9, 11),
            ("Greeter".into(), 13, 21),
            ("new".into(), 14, 16),
            ("hello".into(), 18, 20)
        ],
        "{}",
        rust.text
    );
}

#[test]
fn a_language_without_a_grammar_falls_back_to_text_search_and_says_so() {
    let (_repo, g) = fixture();
    let refs = g
        .references("notify_team", Revision::Head)
        .expect("references");
    assert!(refs.text_fallback);
    assert!(
        refs.text
            .contains("text search (these files' languages have no grammar here"),
        "{}",
        refs.text
    );
    let lines: Vec<_> = refs
        .hits
        .iter()
        .map(|h| (h.path.as_str(), h.start_line, h.via))
        .collect();
    assert_eq!(
        lines,
        [
            ("scripts/deploy.rb", 3, Via::TextSearch),
            ("scripts/deploy.rb", 6, Via::TextSearch)
        ]
    );
    assert_eq!(
        refs.windows,
        [
            head("scripts/deploy.rb", 3, 3),
            head("scripts/deploy.rb", 6, 6)
        ]
    );

    let outline = g
        .outline("scripts/deploy.rb", Revision::Head)
        .expect("outline");
    assert!(outline.text_fallback);
    assert!(
        outline
            .text
            .contains("no grammar for this file's language, so this is a text-search outline"),
        "{}",
        outline.text
    );
    let lines: Vec<_> = outline.hits.iter().map(|h| h.start_line).collect();
    assert_eq!(lines, [2, 6], "{}", outline.text);

    let parsed = g.definition("greet", None, Revision::Head).expect("greet");
    assert!(!parsed.text_fallback, "{}", parsed.text);
}

#[test]
fn the_graph_parses_only_files_that_name_the_symbol_and_keeps_them() {
    let (_repo, g) = fixture();
    assert_eq!(g.files_parsed(), 0, "nothing is parsed up front");
    g.definition("Serve", None, Revision::Head).expect("Serve");
    assert_eq!(g.files_parsed(), 1, "only svc/server.go names Serve");
    g.references("Serve", Revision::Head).expect("Serve");
    g.outline("svc/server.go", Revision::Head).expect("outline");
    assert_eq!(g.files_parsed(), 1, "the parsed file is kept");
    // util.py differs between base and head; main.py does not, so it is parsed once.
    g.references("send", Revision::Head).expect("send");
    assert_eq!(g.files_parsed(), 3);
    g.references("send", Revision::Base).expect("send");
    assert_eq!(
        g.files_parsed(),
        4,
        "only the changed util.py is parsed again for base"
    );
}

#[test]
fn results_come_in_the_same_order_every_time() {
    let (repo, g) = fixture();
    let first = g.references("send", Revision::Head).expect("send");
    let again = graph(&repo, "main~1", "main")
        .references("send", Revision::Head)
        .expect("send");
    assert_eq!(first, again);
}

#[test]
fn the_working_tree_is_never_read() {
    let (repo, g) = fixture();
    repo.write(
        "py/app/extra.py",
        "def send(only_in_the_working_tree):\n    pass\n",
    );
    repo.write("svc/server.go", "package svc\n");
    let send = g.definition("send", None, Revision::Head).expect("send");
    assert_eq!(send.hits.len(), 1, "{}", send.text);
    let serve = g.definition("Serve", None, Revision::Head).expect("Serve");
    assert_eq!(serve.hits[0].start_line, 9, "{}", serve.text);
}

#[test]
fn paths_outside_the_tree_and_links_are_refused() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "def a():\n    pass\n");
    repo.symlink("src/link.py", "/etc/passwd");
    repo.symlink("src/inside.py", "a.py");
    let base = repo.commit("links");
    let g = graph(&repo, &base, &base);
    for path in [
        "../etc/passwd",
        "/etc/passwd",
        "src/link.py",
        "src/inside.py",
        "src",
        "",
    ] {
        let err = g.outline(path, Revision::Head).expect_err(path).to_string();
        assert!(
            err.starts_with("refused") || err.contains("not a regular file"),
            "{path}: {err}"
        );
    }
    let refs = g.references("passwd", Revision::Head).expect("references");
    assert!(
        refs.hits.is_empty(),
        "link text is not searched: {}",
        refs.text
    );
}

#[test]
fn symbols_that_are_not_names_are_refused_with_what_to_do() {
    let (_repo, g) = fixture();
    for symbol in ["", "  ", "send(", ".*", "a b", "::", "x;rm"] {
        let err = g
            .references(symbol, Revision::Head)
            .expect_err(symbol)
            .to_string();
        assert!(err.starts_with("refused: "), "{symbol:?}: {err}");
    }
    let err = g
        .definition("a b", None, Revision::Head)
        .expect_err("space")
        .to_string();
    assert!(err.contains("use grep for patterns"), "{err}");
}

#[test]
fn results_are_bounded_and_say_so() {
    let repo = TestRepo::new();
    let mut many = String::new();
    for i in 0..260 {
        many.push_str(&format!("def f{i}(x):\n    return tick(x)\n\n"));
    }
    repo.write("big.py", &many);
    let base = repo.commit("many functions");
    let g = graph(&repo, &base, &base);
    let outline = g.outline("big.py", Revision::Head).expect("outline");
    assert_eq!(outline.hits.len(), vouch_graph::graph::MAX_OUTLINE_ITEMS);
    assert!(outline.truncated);
    assert!(outline.text.contains("[truncated: outline lists at most 200 items; 60 more not shown; use read_file from line 601]"), "{}", outline.text.lines().last().unwrap_or(""));
    let refs = g.references("tick", Revision::Head).expect("references");
    assert!(refs.truncated);
    assert!(
        refs.text
            .contains("[truncated: references lists at most 100 uses; 160 more not shown]"),
        "{}",
        refs.text
    );
    assert!(
        refs.text
            .contains("[truncated: at most 40 callers shown; 220 more not shown]"),
        "{}",
        refs.text
    );
    for result in [&outline, &refs] {
        assert!(
            result.text.len() <= vouch_graph::graph::MAX_BYTES,
            "{}",
            result.text.len()
        );
        assert_eq!(result.windows.len(), result.hits.len());
    }
}

/// A line that ends with `\r\n` is shown with the CRLF mark in every graph answer (a use
/// line, a definition), and an LF line without it: a change of line ending alone reads
/// as a change in what the graph shows too.
#[test]
fn lines_ending_with_crlf_carry_the_mark_in_graph_answers() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "def greet(name):\r\n    return name\r\n\r\ngreet(\"x\")\r\n",
    );
    let base = repo.commit("crlf");
    repo.write(
        "a.py",
        "def greet(name):\n    return name\n\ngreet(\"x\")\n",
    );
    let head = repo.commit("lf");
    let g = graph(&repo, &base, &head);
    let cr = vouch_core::CR_MARK;
    for (revision, mark) in [(Revision::Base, cr), (Revision::Head, "")] {
        let uses = g.references("greet", revision).expect("references");
        let want = format!("a.py:4: call at top level: greet(\"x\"){mark}\n");
        assert!(uses.text.contains(&want), "{}", uses.text);
        let def = g.definition("greet", None, revision).expect("definition");
        let want = format!("1: def greet(name):{mark}\n2:     return name{mark}\n");
        assert!(def.text.contains(&want), "{}", def.text);
    }
}

/// A line longer than a graph answer shows is cut with a note saying so, and is never
/// recorded as read: not in a definition, an outline, a reference, nor a text match of
/// a file without a grammar. The lines around it that were shown whole are.
#[test]
fn a_line_shown_cut_says_so_and_is_not_recorded_as_read() {
    let repo = TestRepo::new();
    let params: Vec<String> = (0..40).map(|i| format!("p{i}=None")).collect();
    let long_def = format!("def big({}):", params.join(", "));
    let args: Vec<String> = (0..40).map(|i| format!("p{i}={i}")).collect();
    let long_call = format!("    return big({})  # TAIL", args.join(", "));
    repo.write(
        "a.py",
        format!("{long_def}\n    return 1\n\n\ndef user():\n{long_call}\n"),
    );
    repo.write("notes.txt", format!("big {}\n", "x".repeat(400)));
    let base = repo.commit("long lines");
    repo.write("b.py", "x = 1\n");
    let changed = repo.commit("unrelated");
    let g = graph(&repo, &base, &changed);
    let cut = "…[line cut: 300 of";

    let def = g
        .definition("big", None, Revision::Head)
        .expect("definition");
    assert!(def.text.contains(cut), "{}", def.text);
    assert_eq!(def.windows, [head("a.py", 2, 2)], "{}", def.text);

    let outline = g.outline("a.py", Revision::Head).expect("outline");
    assert!(outline.text.contains(cut), "{}", outline.text);
    assert!(
        !outline
            .windows
            .iter()
            .any(|w| w.start_line <= 1 && 1 <= w.end_line),
        "{:?}",
        outline.windows
    );

    let uses = g.references("big", Revision::Head).expect("references");
    assert!(
        uses.text.contains(cut) && !uses.text.contains("TAIL"),
        "{}",
        uses.text
    );
    assert!(
        !uses
            .windows
            .iter()
            .any(|w| w.start_line <= 6 && 6 <= w.end_line),
        "{:?}",
        uses.windows
    );
    // The caller's signature, shown whole, is read.
    assert!(
        uses.windows.contains(&head("a.py", 5, 5)),
        "{:?}",
        uses.windows
    );

    let text = g
        .definition("big", None, Revision::Head)
        .expect("text search");
    assert!(
        !text.windows.iter().any(|w| w.path == "notes.txt"),
        "{:?}",
        text.windows
    );
}

/// A parameter longer than a definition lists is cut with a mark, and one whose bytes are
/// not UTF-8 is listed escaped, never dropped.
#[test]
fn parameters_are_cut_with_a_mark_and_never_dropped() {
    let repo = TestRepo::new();
    let mut source = format!(
        "def long(s=\"{}\", last=0):\n    return s\n",
        "q".repeat(300)
    )
    .into_bytes();
    source.extend_from_slice(b"def latin(s=\"\xe9t\xe9\", last=0):\n    return s\n");
    repo.write("p.py", source);
    let base = repo.commit("parameters");
    repo.write("other.txt", "x\n");
    let changed = repo.commit("unrelated");
    let g = graph(&repo, &base, &changed);
    let params = |name: &str| -> Vec<String> {
        let found = g
            .definition(name, None, Revision::Head)
            .expect("definition");
        found.hits[0].parameters.clone()
    };
    let long = params("long");
    assert_eq!(long.len(), 2, "{long:?}");
    assert!(
        long[0].ends_with("…[cut]") && long[0].starts_with("s=\"qqq"),
        "{long:?}"
    );
    assert_eq!(long[1], "last=0");
    assert_eq!(params("latin"), ["s=\"\\xE9t\\xE9\"", "last=0"]);
}
