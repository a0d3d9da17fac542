//! Every file status, entry kind and path shape the snapshot reports.

use vouch_core::snapshot::{EntryKind, FileStatus};
use vouch_git::snapshot;
use vouch_testkit::git::TestRepo;

use crate::{file, paths};

const SUB_A: &str = "1111111111111111111111111111111111111111";
const SUB_B: &str = "2222222222222222222222222222222222222222";

/// Ten numbered lines, so small edits stay well above the rename threshold.
fn numbered(prefix: &str) -> String {
    (1..=10).map(|i| format!("{prefix} line {i}\n")).collect()
}

/// A repository whose `feature` branch makes one change of every kind against `main`.
fn status_matrix() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("modified.txt", "one\ntwo\nthree\nfour\nfive\n")
        .write("deleted.txt", "gone soon\n")
        .write("renamed-from.txt", numbered("moved"))
        .write("copy-source.txt", numbered("copied"))
        .write("script.sh", "#!/bin/sh\necho hi\n")
        .write("logo.bin", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x01")
        .symlink("link", "target-a")
        .write("becomes-link.txt", "plain file\n")
        .submodule("vendor/lib", SUB_A)
        .write("vendor/was-file", "a plain file\n")
        .write("crlf.txt", "alpha\r\nbeta\r\ngamma\r\n")
        .write("no-eol.txt", "first\nlast without newline");
    let base = repo.commit("base: one file of every kind");

    repo.branch("feature").checkout("feature");
    repo.write("modified.txt", "one\ntwo\nTHREE\nfour\nfive\nsix\n")
        .delete("deleted.txt")
        .rename("renamed-from.txt", "dir/renamed-to.txt")
        .write(
            "dir/renamed-to.txt",
            numbered("moved").replace("moved line 5", "moved line five"),
        )
        .write("copy-dest.txt", numbered("copied"))
        .write(
            "copy-source.txt",
            numbered("copied").replace("copied line 10", "copied line ten"),
        )
        .set_executable("script.sh", true)
        .write("logo.bin", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x02")
        .delete("link")
        .symlink("link", "target-b")
        .delete("becomes-link.txt")
        .symlink("becomes-link.txt", "modified.txt")
        .submodule("vendor/lib", SUB_B)
        .submodule("vendor/new", SUB_A)
        .delete("vendor/was-file")
        .submodule("vendor/was-file", SUB_B)
        .symlink("new-link", "dir/renamed-to.txt")
        .write("dir with space/ünïcödé 文件.txt", "unicode\n")
        .write("crlf.txt", "alpha\r\nBETA\r\ngamma\r\n")
        .write("no-eol.txt", "first\nlast still without newline")
        .write("added.txt", "brand new\n");
    let head = repo.commit("feature: change everything\n\nA body line.\n");
    (repo, base, head)
}

#[test]
fn status_matrix_snapshot() {
    let (repo, _, _) = status_matrix();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    insta::assert_json_snapshot!(snap);
}

#[test]
fn every_status_is_reported_with_its_kind() {
    let (repo, base, head) = status_matrix();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    assert_eq!(snap.base.sha, base);
    assert_eq!(snap.head.sha, head);
    assert_eq!(snap.merge_base, base);
    let cases: &[(&str, FileStatus, EntryKind)] = &[
        ("added.txt", FileStatus::Added, EntryKind::File),
        (
            "becomes-link.txt",
            FileStatus::TypeChanged,
            EntryKind::Symlink,
        ),
        ("copy-dest.txt", FileStatus::Copied, EntryKind::File),
        ("copy-source.txt", FileStatus::Modified, EntryKind::File),
        ("crlf.txt", FileStatus::Modified, EntryKind::File),
        ("deleted.txt", FileStatus::Deleted, EntryKind::File),
        (
            "dir with space/ünïcödé 文件.txt",
            FileStatus::Added,
            EntryKind::File,
        ),
        ("dir/renamed-to.txt", FileStatus::Renamed, EntryKind::File),
        ("link", FileStatus::Modified, EntryKind::Symlink),
        ("logo.bin", FileStatus::Modified, EntryKind::File),
        ("modified.txt", FileStatus::Modified, EntryKind::File),
        ("new-link", FileStatus::Added, EntryKind::Symlink),
        ("no-eol.txt", FileStatus::Modified, EntryKind::File),
        ("script.sh", FileStatus::ModeOnly, EntryKind::Executable),
        ("vendor/lib", FileStatus::Modified, EntryKind::Submodule),
        ("vendor/new", FileStatus::Added, EntryKind::Submodule),
        (
            "vendor/was-file",
            FileStatus::TypeChanged,
            EntryKind::Submodule,
        ),
    ];
    let expected: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(paths(&snap), expected, "sorted current paths, nothing else");
    for &(path, status, kind) in cases {
        let f = file(&snap, path);
        assert_eq!((f.status, f.kind), (status, kind), "{path}");
    }

    let renamed = file(&snap, "dir/renamed-to.txt");
    assert_eq!(renamed.previous_path.as_deref(), Some("renamed-from.txt"));
    assert!(matches!(renamed.similarity, Some(s) if (80..100).contains(&s)));
    assert_eq!((renamed.additions, renamed.deletions), (1, 1));

    let copied = file(&snap, "copy-dest.txt");
    assert_eq!(copied.previous_path.as_deref(), Some("copy-source.txt"));
    assert_eq!(copied.similarity, Some(100));
    assert!(copied.hunks.is_empty());

    let mode_only = file(&snap, "script.sh");
    assert_eq!(
        (mode_only.old_mode, mode_only.new_mode),
        (Some(0o100644), Some(0o100755))
    );
    assert!(mode_only.hunks.is_empty() && mode_only.is_metadata_only());

    let binary = file(&snap, "logo.bin");
    assert!(binary.binary && binary.hunks.is_empty());
    assert_eq!((binary.additions, binary.deletions), (0, 0));

    let added = file(&snap, "added.txt");
    assert_eq!((added.old_mode, added.new_mode), (None, Some(0o100644)));
    let deleted = file(&snap, "deleted.txt");
    assert_eq!((deleted.old_mode, deleted.new_mode), (Some(0o100644), None));
    assert_eq!(deleted.deletions, 1);

    let modified = file(&snap, "modified.txt");
    assert_eq!((modified.additions, modified.deletions), (2, 1));
    assert_eq!(modified.hunks.len(), 1);
    let h = &modified.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (1, 5, 1, 6)
    );
    assert_eq!(h.header, "@@ -1,5 +1,6 @@");

    // A type change is one patch from the old entry's content to the new one's.
    let to_link = file(&snap, "becomes-link.txt");
    assert_eq!(
        (to_link.old_mode, to_link.new_mode),
        (Some(0o100644), Some(0o120000))
    );
    assert_eq!(
        (to_link.additions, to_link.deletions, to_link.hunks.len()),
        (1, 1, 1)
    );
    let to_sub = file(&snap, "vendor/was-file");
    assert_eq!(
        (to_sub.additions, to_sub.deletions, to_sub.hunks.len()),
        (1, 1, 1)
    );

    let sub = file(&snap, "vendor/lib");
    assert_eq!(
        (sub.old_mode, sub.new_mode),
        (Some(0o160000), Some(0o160000))
    );
    assert!(sub.is_metadata_only());

    assert_eq!(snap.commits.len(), 1);
    assert_eq!(snap.commits[0].sha, head);
    assert_eq!(
        snap.commits[0].message,
        "feature: change everything\n\nA body line.\n"
    );
}

#[test]
fn paths_are_raw_utf8_with_spaces_and_no_carriage_returns() {
    let (repo, _, _) = status_matrix();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    let unicode = file(&snap, "dir with space/ünïcödé 文件.txt");
    assert_eq!(unicode.additions, 1);
    for f in &snap.files {
        for p in std::iter::once(&f.path).chain(f.previous_path.as_ref()) {
            assert!(
                !p.contains(['\r', '\n', '"', '\\']),
                "quoted or mangled path {p:?}"
            );
        }
    }
    let json = serde_json::to_string(&snap).unwrap();
    assert!(json.contains("dir with space/ünïcödé 文件.txt"), "{json}");
    assert!(!json.contains("\\303"), "octal-quoted path in {json}");
}

#[test]
fn crlf_content_counts_lines_like_git() {
    let (repo, _, _) = status_matrix();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    let crlf = file(&snap, "crlf.txt");
    assert_eq!((crlf.additions, crlf.deletions), (1, 1));
    let h = &crlf.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (1, 3, 1, 3)
    );
    assert!(!h.header.contains('\r'));
}

#[test]
fn a_missing_newline_at_end_of_file_is_one_changed_line() {
    let (repo, _, _) = status_matrix();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    let f = file(&snap, "no-eol.txt");
    assert_eq!((f.additions, f.deletions), (1, 1));
    let h = &f.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (1, 2, 1, 2)
    );
}

#[test]
fn adding_a_final_newline_changes_the_last_line() {
    let repo = TestRepo::new();
    repo.write("a.txt", "x\ny");
    repo.commit("no newline");
    repo.write("a.txt", "x\ny\n");
    repo.commit("newline");
    let snap = snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    let f = file(&snap, "a.txt");
    assert_eq!(
        (f.status, f.additions, f.deletions),
        (FileStatus::Modified, 1, 1)
    );
}

#[test]
fn a_non_utf8_path_is_a_clear_error() {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    repo.write("ok.txt", "ok\n");
    repo.commit("base");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(repo.path().join(name), "latin-1 name\n").unwrap();
    repo.git(&["add", "-A"]);
    repo.commit("latin-1 file name");
    let err = snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap_err();
    assert!(
        matches!(err, vouch_git::GitError::NonUtf8Path { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("caf\u{fffd}.txt"), "{err}");
}

#[test]
fn a_rename_without_edits_has_full_similarity_and_no_hunks() {
    let repo = TestRepo::new();
    repo.write("src/old name.rs", numbered("fn"));
    repo.commit("base");
    repo.rename("src/old name.rs", "src/new name.rs");
    repo.commit("rename");
    let snap = snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    assert_eq!(paths(&snap), ["src/new name.rs"]);
    let f = &snap.files[0];
    assert_eq!(f.status, FileStatus::Renamed);
    assert_eq!(f.previous_path.as_deref(), Some("src/old name.rs"));
    assert_eq!(f.similarity, Some(100));
    assert!(f.hunks.is_empty() && f.is_metadata_only());
}

#[test]
fn statuses_agree_with_git_diff_name_status() {
    let (repo, base, head) = status_matrix();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    // `git diff -M -C --name-status -z`: STATUS NUL path NUL (renames/copies: two paths).
    let raw = repo.git(&["diff", "-M", "-C", "--name-status", "-z", &base, &head]);
    let mut fields = raw.split('\0').filter(|f| !f.is_empty());
    let mut from_git = Vec::new();
    while let Some(status) = fields.next() {
        let letter = &status[..1];
        let score = status[1..].parse::<u8>().ok();
        let path = if matches!(letter, "R" | "C") {
            fields.next();
            fields.next().unwrap()
        } else {
            fields.next().unwrap()
        };
        from_git.push((path.to_string(), letter.to_string(), score));
    }
    from_git.sort();
    // Two known differences. Similarity scores come from libgit2's own metric (git says 88
    // where libgit2 says 90 for the same edit), so only their presence is compared. And git
    // pairs gitlinks by commit id: the new `vendor/new`, pointing at `vendor/lib`'s old
    // commit, is a "copy" to git; vouch reports it as the added submodule it is.
    for entry in &mut from_git {
        if entry.0 == "vendor/new" {
            assert_eq!((entry.1.as_str(), entry.2), ("C", Some(100)));
            *entry = (entry.0.clone(), "A".to_string(), None);
        }
        entry.2 = entry.2.map(|_| 0);
    }
    let ours: Vec<_> = snap
        .files
        .iter()
        .map(|f| {
            let letter = match f.status {
                FileStatus::Added => "A",
                FileStatus::Deleted => "D",
                FileStatus::Modified | FileStatus::ModeOnly => "M",
                FileStatus::Renamed => "R",
                FileStatus::Copied => "C",
                FileStatus::TypeChanged => "T",
            };
            (f.path.clone(), letter.to_string(), f.similarity.map(|_| 0))
        })
        .collect();
    assert_eq!(ours, from_git);
}

#[test]
fn a_copy_of_an_unmodified_file_is_an_addition() {
    // As `git diff -C` (not `--find-copies-harder`): only files modified in the same change
    // are copy sources, so the diff never compares against the whole tree.
    let repo = TestRepo::new();
    repo.write("source.txt", numbered("kept"));
    repo.commit("base");
    repo.write("copy.txt", numbered("kept"));
    repo.commit("copy");
    let snap = snapshot(repo.path(), Some("HEAD~1"), "HEAD").unwrap();
    assert_eq!(paths(&snap), ["copy.txt"]);
    assert_eq!(snap.files[0].status, FileStatus::Added);
    assert_eq!(snap.files[0].previous_path, None);
}

/// Attributes never decide what is text: a `.gitattributes` (in the working tree, or one
/// the change adds) that marks source `-diff` or `binary` would otherwise hide the
/// change's own text behind "Binary files differ". The snapshot, the snapshot with kept
/// patches and the `diff` tool all show such a file's hunks; content with a NUL byte is
/// binary whatever the attributes say.
#[test]
fn attributes_never_turn_text_into_binary() {
    let repo = TestRepo::new();
    repo.write("auth.py", "def allowed(user):\n    return user.is_admin\n")
        .write("tool.py", "def run():\n    return 1\n")
        .write("data.txt", b"text\0with a NUL\n");
    let base = repo.commit("base");
    repo.write(".gitattributes", "*.py -diff\n*.txt diff\nauth.py binary\n")
        .write(
            "auth.py",
            "def allowed(user):\n    return True  # backdoor\n",
        )
        .write("tool.py", "def run():\n    return 2\n")
        .write("data.txt", b"text\0with a NUL, changed\n");
    let head = repo.commit("hide the change");
    let range = vouch_git::resolve_range(repo.path(), Some(&base), &head).unwrap();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let plain = snapshot(repo.path(), Some(&base), &head).unwrap();
    let (kept, _) = vouch_git::snapshot_range_with_patches(repo.path(), range, &cancel).unwrap();
    for snap in [&plain, &kept] {
        for path in ["auth.py", "tool.py"] {
            let f = file(snap, path);
            assert!(!f.binary, "{path} is text: {f:?}");
            assert_eq!((f.additions, f.deletions), (1, 1), "{path}");
            assert_eq!(f.hunks.len(), 1, "{path}");
        }
        assert!(file(snap, "data.txt").binary, "a NUL byte is binary");
    }
    let reader = vouch_git::SourceReader::open(repo.path(), &plain).unwrap();
    let diff = reader.diff("auth.py").unwrap();
    assert!(
        diff.text.contains("+    return True  # backdoor"),
        "{}",
        diff.text
    );
}
