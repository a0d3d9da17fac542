//! `SourceReader::read_file`: windows, bounds, kinds, revisions and path refusals.

use std::sync::Arc;

use vouch_core::snapshot::EntryKind;
use vouch_core::source::{Revision, SourceWindow};
use vouch_git::reader::{MAX_BYTES, MAX_LINES};
use vouch_git::{ReadError, SourceReader};

use crate::support::{SUB, sources};

fn window(revision: Revision, path: &str, start_line: u32, end_line: u32) -> Option<SourceWindow> {
    Some(SourceWindow {
        revision,
        path: path.into(),
        start_line,
        end_line,
    })
}

#[test]
fn the_reader_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SourceReader>();
}

#[test]
fn a_window_returns_exactly_the_lines_asked_for() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "src/lib.rs", Some(3), Some(5))
        .unwrap();
    assert_eq!(read.window, window(Revision::Head, "src/lib.rs", 3, 5));
    assert_eq!(read.total_lines, 23);
    assert_eq!(read.kind, EntryKind::File);
    assert!(!read.truncated);
    assert_eq!(
        read.text,
        "src/lib.rs at head, lines 3-5 of 23\n3: pub fn f1() -> u32 {\n4:     100\n5: }\n"
    );
}

#[test]
fn defaults_read_from_the_top_and_clamp_at_the_end() {
    let (_repo, _, reader) = sources();
    let whole = reader
        .read_file(Revision::Head, "src/lib.rs", None, None)
        .unwrap();
    assert_eq!(whole.window, window(Revision::Head, "src/lib.rs", 1, 23));
    assert!(!whole.truncated);
    let clamped = reader
        .read_file(Revision::Head, "src/lib.rs", Some(20), Some(999))
        .unwrap();
    assert_eq!(clamped.window, window(Revision::Head, "src/lib.rs", 20, 23));
    assert!(!clamped.truncated);
    assert!(clamped.text.ends_with("23: }\n"), "{}", clamped.text);
}

#[test]
fn base_and_head_are_different_trees() {
    let (_repo, _, reader) = sources();
    let base = reader
        .read_file(Revision::Base, "src/lib.rs", Some(4), Some(4))
        .unwrap();
    let head = reader
        .read_file(Revision::Head, "src/lib.rs", Some(4), Some(4))
        .unwrap();
    assert!(
        base.text.contains("at base (the merge base)"),
        "{}",
        base.text
    );
    assert!(base.text.ends_with("4:     1\n"), "{}", base.text);
    assert!(head.text.ends_with("4:     100\n"), "{}", head.text);
    assert_eq!(base.window, window(Revision::Base, "src/lib.rs", 4, 4));
    assert_eq!(base.total_lines, 20);

    // Deleted at head: readable at base only. Added at head: not at base.
    assert!(
        reader
            .read_file(Revision::Base, "old.txt", None, None)
            .is_ok()
    );
    let gone = reader
        .read_file(Revision::Head, "old.txt", None, None)
        .unwrap_err();
    assert!(
        matches!(
            gone,
            ReadError::NotFound {
                revision: Revision::Head,
                ..
            }
        ),
        "{gone:?}"
    );
    assert_eq!(
        gone.to_string(),
        "`old.txt` does not exist at head; use list_dir to see what exists"
    );
    let new = reader
        .read_file(Revision::Base, "src/new.rs", None, None)
        .unwrap_err();
    assert!(
        matches!(
            new,
            ReadError::NotFound {
                revision: Revision::Base,
                ..
            }
        ),
        "{new:?}"
    );
    // A rename is two paths: the old one at base, the new one at head.
    assert!(
        reader
            .read_file(Revision::Base, "docs/guide.md", None, None)
            .is_ok()
    );
    assert!(
        reader
            .read_file(Revision::Head, "docs/manual.md", None, None)
            .is_ok()
    );
}

#[test]
fn the_line_bound_is_stated_with_where_to_continue() {
    let (_repo, _, reader) = sources();
    let first = reader
        .read_file(Revision::Head, "big.txt", None, None)
        .unwrap();
    assert_eq!(
        first.window,
        window(Revision::Head, "big.txt", 1, MAX_LINES)
    );
    assert!(first.truncated);
    assert_eq!(first.total_lines, 1000);
    assert!(
        first.text.ends_with(
            "[truncated: read_file returns at most 400 lines and 32768 bytes per call; call read_file with start_line=401 to continue]\n"
        ),
        "{}",
        &first.text[first.text.len() - 200..]
    );
    let asked_too_much = reader
        .read_file(Revision::Head, "big.txt", Some(401), Some(1000))
        .unwrap();
    assert_eq!(
        asked_too_much.window,
        window(Revision::Head, "big.txt", 401, 800)
    );
    assert!(asked_too_much.truncated);
    let last = reader
        .read_file(Revision::Head, "big.txt", Some(801), None)
        .unwrap();
    assert_eq!(last.window, window(Revision::Head, "big.txt", 801, 1000));
    assert!(!last.truncated && !last.text.contains("[truncated"));
    assert!(last.text.ends_with("1000: line 1000\n"));
}

#[test]
fn the_byte_bound_cuts_at_a_whole_line() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "long-lines.txt", None, None)
        .unwrap();
    assert!(read.truncated);
    assert!(read.text.len() <= MAX_BYTES, "{} bytes", read.text.len());
    let w = read.window.clone().unwrap();
    assert!(w.end_line > 50 && w.end_line < 200, "{w:?}");
    // The last numbered line is complete and is the window's end.
    let last_line = read.text.lines().rev().nth(1).unwrap();
    assert!(
        last_line.starts_with(&format!("{}: ", w.end_line)),
        "{last_line}"
    );
    assert!(last_line.ends_with(&"y".repeat(300)), "{last_line}");
    assert!(
        read.text
            .contains(&format!("start_line={}", w.end_line + 1))
    );
}

/// A line longer than one read is never recorded as read whole: the read records the
/// bytes it showed, and a byte window reads the rest, part by part.
#[test]
fn a_line_longer_than_the_bound_is_cut_and_says_so() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "wide.txt", None, None)
        .unwrap();
    assert_eq!(read.window, None, "the cut line is not a whole-line window");
    assert_eq!(read.spans.len(), 1);
    let first = &read.spans[0];
    assert_eq!((first.line, first.start_byte), (1, 0));
    assert!(
        first.end_byte > 30_000 && first.end_byte < 32 * 1024,
        "{first:?}"
    );
    assert!(
        read.text
            .contains(&format!("{}\n[truncated", "x".repeat(100)))
    );
    // Byte windows page through the 50,000-byte line and record exactly what they show.
    let mut at = first.end_byte;
    let mut covered = first.end_byte;
    while at < 50_000 {
        let part = reader
            .read_line_bytes(Revision::Head, "wide.txt", 1, at)
            .unwrap();
        let span = &part.spans[0];
        assert_eq!((span.line, span.start_byte), (1, at));
        assert_eq!(part.window, None);
        assert!(
            part.text
                .contains(&format!("line 1 bytes {at}-{}", span.end_byte))
        );
        covered += span.end_byte - span.start_byte;
        at = span.end_byte;
    }
    assert_eq!(covered, 50_000);
    let past = reader.read_line_bytes(Revision::Head, "wide.txt", 1, 50_000);
    assert!(
        matches!(past, Err(ReadError::InvalidRange { .. })),
        "{past:?}"
    );
    // A short line read by bytes from 0 is read whole.
    let whole = reader
        .read_line_bytes(Revision::Head, "src/lib.rs", 1, 0)
        .unwrap();
    assert_eq!(whole.window, window(Revision::Head, "src/lib.rs", 1, 1));
    assert!(whole.spans.is_empty());
    assert!(read.truncated);
    assert!(read.text.len() <= MAX_BYTES);
    assert!(
        read.text.contains("line 1 is longer than that and was cut"),
        "{}",
        &read.text[read.text.len() - 200..]
    );
}

#[test]
fn symlinks_are_link_text_and_never_followed() {
    let (_repo, _, reader) = sources();
    for (path, target) in [("link", "src/lib.rs"), ("escape", "../../../../etc/passwd")] {
        let read = reader.read_file(Revision::Head, path, None, None).unwrap();
        assert_eq!(read.kind, EntryKind::Symlink);
        assert_eq!(read.window, window(Revision::Head, path, 1, 1));
        assert!(
            read.text.ends_with(&format!("\n1: {target}\n")),
            "{}",
            read.text
        );
        assert!(read.text.contains("links are never followed"));
        assert!(
            !read.text.contains("root:"),
            "followed the link: {}",
            read.text
        );
    }
    // A path through a symlink is not resolved.
    let err = reader
        .read_file(Revision::Head, "link/x", None, None)
        .unwrap_err();
    assert!(matches!(err, ReadError::NotFound { .. }), "{err:?}");
}

#[test]
fn a_submodule_reads_as_its_commit_id() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "vendor/sub", None, None)
        .unwrap();
    assert_eq!(read.kind, EntryKind::Submodule);
    assert_eq!(read.window, window(Revision::Head, "vendor/sub", 1, 1));
    assert!(
        read.text.contains(&format!("\n1: {SUB}\n")),
        "{}",
        read.text
    );
}

#[test]
fn binary_blobs_and_directories_are_refused_with_a_note() {
    let (_repo, _, reader) = sources();
    let err = reader
        .read_file(Revision::Head, "bin.dat", None, None)
        .unwrap_err();
    assert!(matches!(err, ReadError::Binary { size: 10, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "`bin.dat` at head is a binary file (10 bytes); its content is not shown"
    );
    let err = reader
        .read_file(Revision::Head, "src", None, None)
        .unwrap_err();
    assert!(matches!(err, ReadError::WrongKind { .. }), "{err:?}");
    assert!(
        err.to_string().contains("is a directory; use list_dir"),
        "{err}"
    );
}

#[test]
fn crlf_lines_are_shown_with_a_mark_after_their_text() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "crlf.txt", None, None)
        .unwrap();
    assert_eq!(read.total_lines, 2);
    assert!(!read.text.contains('\r'));
    assert!(
        read.text.ends_with("1: alpha\u{240D}\n2: beta\u{240D}\n"),
        "{}",
        read.text
    );
}

#[test]
fn an_empty_file_has_no_window() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "empty.txt", None, None)
        .unwrap();
    assert_eq!(
        (read.window, read.total_lines, read.truncated),
        (None, 0, false)
    );
    assert!(read.text.contains("is empty"));
}

#[test]
fn invalid_windows_are_explained() {
    let (_repo, _, reader) = sources();
    let cases = [
        (Some(0), None, "1-based"),
        (Some(5), Some(4), "end_line 4 is before start_line 5"),
        (
            Some(24),
            None,
            "start_line 24 is past the end of `src/lib.rs` at head, which has 23 lines",
        ),
    ];
    for (start, end, expected) in cases {
        let err = reader
            .read_file(Revision::Head, "src/lib.rs", start, end)
            .unwrap_err();
        assert!(matches!(err, ReadError::InvalidRange { .. }), "{err:?}");
        assert!(err.to_string().contains(expected), "{err}");
    }
}

#[test]
fn paths_outside_the_tree_are_refused_before_any_lookup() {
    let (_repo, _, reader) = sources();
    for bad in [
        "../outside.txt",
        "src/../../x",
        "/etc/passwd",
        "src/lib\0.rs",
        "",
        ".",
    ] {
        let err = reader
            .read_file(Revision::Head, bad, None, None)
            .unwrap_err();
        assert!(matches!(err, ReadError::Refused { .. }), "{bad:?}: {err:?}");
        assert!(err.to_string().starts_with("refused: "), "{err}");
        let err = reader.diff(bad).unwrap_err();
        assert!(
            matches!(err, ReadError::Refused { .. }),
            "diff {bad:?}: {err:?}"
        );
    }
    for bad in ["..", "../", "/", "a/../.."] {
        let err = reader.list_dir(bad, Revision::Head).unwrap_err();
        assert!(
            matches!(err, ReadError::Refused { .. }),
            "list_dir {bad:?}: {err:?}"
        );
    }
}

#[test]
fn equivalent_spellings_record_the_canonical_path() {
    let (_repo, _, reader) = sources();
    let read = reader
        .read_file(Revision::Head, "./src//lib.rs", Some(1), Some(1))
        .unwrap();
    assert_eq!(read.window, window(Revision::Head, "src/lib.rs", 1, 1));
    let read = reader
        .read_file(Revision::Head, "dir with space/ünï.txt", None, None)
        .unwrap();
    assert_eq!(
        read.window,
        window(Revision::Head, "dir with space/ünï.txt", 1, 1)
    );
}

#[test]
fn reads_come_from_git_objects_not_the_working_tree() {
    let (repo, _, reader) = sources();
    std::fs::write(repo.path().join("src/lib.rs"), "uncommitted\n").unwrap();
    std::fs::remove_file(repo.path().join("big.txt")).unwrap();
    let read = reader
        .read_file(Revision::Head, "src/lib.rs", Some(1), Some(1))
        .unwrap();
    assert!(
        read.text.ends_with("1: //! A small library.\n"),
        "{}",
        read.text
    );
    assert!(
        reader
            .read_file(Revision::Head, "big.txt", Some(1), Some(1))
            .is_ok()
    );
}

#[test]
fn one_reader_serves_many_threads() {
    let (_repo, _, reader) = sources();
    let reader = Arc::new(reader);
    let handles: Vec<_> = (1..=8u32)
        .map(|i| {
            let reader = Arc::clone(&reader);
            std::thread::spawn(move || {
                let read = reader
                    .read_file(Revision::Head, "big.txt", Some(i), Some(i))
                    .unwrap();
                read.window.unwrap().start_line
            })
        })
        .collect();
    let starts: Vec<u32> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(starts, (1..=8).collect::<Vec<_>>());
}

#[test]
fn read_text_returns_whole_small_files_for_the_host() {
    let (_repo, _, reader) = sources();
    assert_eq!(
        reader
            .read_text(Revision::Base, "old.txt")
            .unwrap()
            .as_deref(),
        Some("to be deleted\nsecond line\n")
    );
    assert_eq!(reader.read_text(Revision::Head, "old.txt").unwrap(), None);
    assert_eq!(
        reader
            .read_text(Revision::Base, ".vouch/review.toml")
            .unwrap(),
        None
    );
    let err = reader.read_text(Revision::Head, "link").unwrap_err();
    assert!(matches!(err, ReadError::WrongKind { .. }), "{err:?}");
    let err = reader.read_text(Revision::Head, "bin.dat").unwrap_err();
    assert!(matches!(err, ReadError::Binary { .. }), "{err:?}");
    let err = reader.read_text(Revision::Head, "wide.txt").unwrap_err();
    assert!(
        matches!(err, ReadError::Binary { size: 50_001, .. }),
        "over MAX_BYTES: {err:?}"
    );
    let err = reader.read_text(Revision::Head, "../x").unwrap_err();
    assert!(matches!(err, ReadError::Refused { .. }), "{err:?}");
}

/// A large changed file is inflated once per side, however often a review reads it:
/// windows of either side, a byte window of a line, its raw text and its blob all read
/// the kept content. Small files are never kept.
#[test]
fn a_large_file_is_inflated_once_per_side() {
    use vouch_git::reader::LARGE_BLOB_BYTES;
    let repo = vouch_testkit::git::TestRepo::new();
    let lines = LARGE_BLOB_BYTES / 5;
    let base = crate::support::numbered("line", lines);
    repo.write("big.txt", &base).write("small.txt", "a\n");
    repo.commit("base");
    let head = base.replace("line 7\n", "line seven\n") + "one more\n";
    repo.write("big.txt", &head).write("small.txt", "b\n");
    repo.commit("head");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = SourceReader::open(repo.path(), &snap).unwrap();

    reader.diff("small.txt").unwrap();
    reader
        .read_file(Revision::Head, "small.txt", None, None)
        .unwrap();
    assert_eq!(reader.large_blobs_loaded(), 0, "small blobs are not kept");

    let diff = reader.diff("big.txt").unwrap();
    assert!(diff.text.contains("+line seven"), "{}", diff.text);
    for start in [1, 5, 200] {
        let read = reader
            .read_file(Revision::Head, "big.txt", Some(start), Some(start + 3))
            .unwrap();
        assert_eq!(
            read.window,
            window(Revision::Head, "big.txt", start, start + 3)
        );
    }
    let base_read = reader
        .read_file(Revision::Base, "big.txt", Some(7), Some(7))
        .unwrap();
    assert!(base_read.text.contains("7: line 7"), "{}", base_read.text);
    let line = reader
        .read_line_bytes(Revision::Head, "big.txt", 7, 2)
        .unwrap();
    assert!(line.text.contains("ne seven"), "{}", line.text);
    assert!(matches!(
        reader.read_text(Revision::Head, "big.txt"),
        Err(ReadError::Binary { .. })
    ));
    let id = reader
        .files(Revision::Head)
        .unwrap()
        .into_iter()
        .find(|f| f.path == "big.txt")
        .unwrap()
        .blob_id;
    match reader.blob(&id, usize::MAX).unwrap() {
        vouch_git::reader::BlobContent::Text(text) => assert_eq!(text, head.as_bytes()),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        reader.large_blobs_loaded(),
        2,
        "every later read used the kept content"
    );
}
