//! `SourceReader::grep` and `SourceReader::list_dir`.

use vouch_core::source::{Revision, SourceWindow};
use vouch_git::reader::{MAX_BYTES, MAX_DIR_ENTRIES, MAX_GREP_MATCHES};
use vouch_git::{DirEntryKind, ReadError, SourceReader, snapshot};
use vouch_testkit::git::TestRepo;

use crate::support::sources;

#[test]
fn grep_with_a_glob_returns_path_line_text_and_one_line_windows() {
    let (_repo, _, reader) = sources();
    let found = reader
        .grep(r"fn f[17]\(", Some("*.rs"), Revision::Head)
        .unwrap();
    let got: Vec<(&str, u32, &str)> = found
        .matches
        .iter()
        .map(|m| (m.path.as_str(), m.line, m.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("src/lib.rs", 3, "pub fn f1() -> u32 {"),
            ("src/lib.rs", 21, "pub fn f7() -> u32 {")
        ]
    );
    assert_eq!(
        found.text,
        "src/lib.rs:3:pub fn f1() -> u32 {\nsrc/lib.rs:21:pub fn f7() -> u32 {\n"
    );
    let windows: Vec<SourceWindow> = found
        .matches
        .iter()
        .map(|m| SourceWindow {
            revision: Revision::Head,
            path: m.path.clone(),
            start_line: m.line,
            end_line: m.line,
        })
        .collect();
    assert_eq!(found.windows, windows);
    assert!(!found.truncated);
}

#[test]
fn grep_reads_the_revision_it_is_asked_for() {
    let (_repo, _, reader) = sources();
    let base = reader.grep(r"^manual 9$", None, Revision::Base).unwrap();
    assert!(base.matches.is_empty());
    assert!(
        base.text.starts_with("no matches for /^manual 9$/ in "),
        "{}",
        base.text
    );
    assert!(
        base.text.contains("at base (the merge base)"),
        "{}",
        base.text
    );
    let head = reader.grep(r"^manual 9$", None, Revision::Head).unwrap();
    assert_eq!(head.text, "docs/manual.md:9:manual 9\n");
    assert_eq!(head.windows[0].revision, Revision::Head);
}

#[test]
fn grep_skips_binaries_symlinks_and_submodules_and_respects_the_glob() {
    let (_repo, _, reader) = sources();
    // `binary` is in bin.dat, `src/lib.rs` is link's text, the submodule id is not content.
    for pattern in ["binary", "^src/lib.rs$", "3333333333"] {
        let found = reader.grep(pattern, None, Revision::Head).unwrap();
        assert!(found.matches.is_empty(), "{pattern}: {:?}", found.matches);
    }
    let only_docs = reader
        .grep("guide", Some("docs/**"), Revision::Head)
        .unwrap();
    assert!(only_docs.matches.iter().all(|m| m.path == "docs/manual.md"));
    assert_eq!(only_docs.matches.len(), 9);
    let nothing = reader
        .grep("guide", Some("src/*.rs"), Revision::Head)
        .unwrap();
    assert!(nothing.matches.is_empty());
    assert!(
        nothing.text.contains("in paths matching `src/*.rs`"),
        "{}",
        nothing.text
    );
}

#[test]
fn grep_stops_at_its_bound_and_says_so() {
    let (_repo, _, reader) = sources();
    let found = reader
        .grep("^line", Some("big.txt"), Revision::Head)
        .unwrap();
    assert_eq!(found.matches.len(), MAX_GREP_MATCHES);
    assert_eq!(found.windows.len(), MAX_GREP_MATCHES);
    assert!(found.truncated);
    assert!(found.text.len() <= MAX_BYTES);
    assert!(
        found.text.ends_with(
            "[truncated: grep returns at most 200 matches and 32768 bytes per call; narrow the pattern or path_glob to see the rest]\n"
        ),
        "{}",
        &found.text[found.text.len() - 200..]
    );
    let wide = reader.grep("y{300}", None, Revision::Head).unwrap();
    assert!(
        wide.truncated,
        "200 lines of 300+ bytes exceed the byte bound"
    );
    assert!(wide.text.len() <= MAX_BYTES);
    assert!(wide.matches.len() < 200 && wide.matches.len() > 50);
}

#[test]
fn bad_patterns_are_tool_errors() {
    let (_repo, _, reader) = sources();
    let err = reader.grep("fn (", None, Revision::Head).unwrap_err();
    assert!(
        matches!(err, ReadError::InvalidPattern { what: "regex", .. }),
        "{err:?}"
    );
    let err = reader
        .grep("fn", Some("src/[a"), Revision::Head)
        .unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::InvalidPattern {
                what: "path glob",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("invalid path glob: "), "{err}");
}

#[test]
fn list_dir_shows_names_and_kinds() {
    let (_repo, _, reader) = sources();
    for root in ["", ".", "./"] {
        let listing = reader.list_dir(root, Revision::Head).unwrap();
        assert_eq!(listing.path, "");
        let kinds: Vec<(&str, DirEntryKind)> = listing
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("big.txt", DirEntryKind::File),
                ("bin.dat", DirEntryKind::File),
                ("crlf.txt", DirEntryKind::File),
                ("dir with space", DirEntryKind::Directory),
                ("docs", DirEntryKind::Directory),
                ("empty.txt", DirEntryKind::File),
                ("escape", DirEntryKind::Symlink),
                ("link", DirEntryKind::Symlink),
                ("long-lines.txt", DirEntryKind::File),
                ("run.sh", DirEntryKind::Executable),
                ("src", DirEntryKind::Directory),
                ("vendor", DirEntryKind::Directory),
                ("wide.txt", DirEntryKind::File),
            ]
        );
        assert!(!listing.truncated);
        assert!(
            listing.text.contains("\nrun.sh (executable)\n"),
            "{}",
            listing.text
        );
        assert!(listing.text.contains("\nsrc/\n"), "{}", listing.text);
    }
    let vendor = reader.list_dir("vendor/", Revision::Head).unwrap();
    assert_eq!(vendor.path, "vendor");
    assert_eq!(vendor.text, "vendor at head:\nsub (submodule)\n");
    let base_docs = reader.list_dir("docs", Revision::Base).unwrap();
    assert_eq!(base_docs.entries[0].name, "guide.md");
    let head_docs = reader.list_dir("docs", Revision::Head).unwrap();
    assert_eq!(head_docs.entries[0].name, "manual.md");
}

#[test]
fn list_dir_refuses_files_and_missing_paths() {
    let (_repo, _, reader) = sources();
    let err = reader.list_dir("src/lib.rs", Revision::Head).unwrap_err();
    assert!(matches!(err, ReadError::WrongKind { .. }), "{err:?}");
    assert!(err.to_string().contains("use read_file"), "{err}");
    let err = reader.list_dir("nope", Revision::Head).unwrap_err();
    assert!(matches!(err, ReadError::NotFound { .. }), "{err:?}");
    let err = reader.list_dir("link", Revision::Head).unwrap_err();
    assert!(
        matches!(err, ReadError::WrongKind { .. }),
        "a symlink is not followed: {err:?}"
    );
}

#[test]
fn list_dir_is_bounded() {
    let repo = TestRepo::new();
    let many = repo.path().join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..MAX_DIR_ENTRIES + 5 {
        std::fs::write(many.join(format!("f{i:04}")), "").unwrap();
    }
    repo.git(&["add", "-A"]);
    repo.commit("many files");
    let snap = snapshot(repo.path(), Some("HEAD"), "HEAD").unwrap();
    let reader = SourceReader::open(repo.path(), &snap).unwrap();
    let listing = reader.list_dir("many", Revision::Head).unwrap();
    assert_eq!(listing.entries.len(), MAX_DIR_ENTRIES);
    assert_eq!(listing.total_entries, MAX_DIR_ENTRIES + 5);
    assert!(listing.truncated);
    assert!(listing.text.len() <= MAX_BYTES);
    assert!(
        listing
            .text
            .contains("[truncated: showing 1000 of 1005 entries"),
        "{}",
        &listing.text[listing.text.len() - 300..]
    );
}

/// A matching line longer than grep shows is cut with a note saying so, and only the
/// bytes shown are recorded (a span, never the whole line as a window).
#[test]
fn grep_says_when_it_cut_a_line_and_records_only_what_it_showed() {
    let repo = TestRepo::new();
    let long = format!("LONG = '{}'", "a".repeat(5_000));
    repo.write("long.py", format!("{long}\nshort = 1\n"));
    let base = repo.commit("long");
    repo.write("other.txt", "x\n");
    let head = repo.commit("other");
    let snap = snapshot(repo.path(), Some(&base), &head).unwrap();
    let reader = SourceReader::open(repo.path(), &snap).unwrap();
    let found = reader.grep("^LONG", None, Revision::Head).unwrap();
    assert!(
        found.text.contains(" …[line cut: ")
            && found
                .text
                .contains(&format!("of {} bytes shown", long.len())),
        "{}",
        found.text
    );
    assert!(found.windows.is_empty(), "{:?}", found.windows);
    assert_eq!(found.spans.len(), 1);
    assert!(!found.spans[0].reaches_end);
}
