//! A repository with one of every kind of entry, shared by the `SourceReader` tests.

use vouch_core::snapshot::ChangeSnapshot;
use vouch_git::{SourceReader, snapshot};
use vouch_testkit::git::TestRepo;

/// The commit id the `vendor/sub` gitlink points to.
pub const SUB: &str = "3333333333333333333333333333333333333333";

/// `n` lines `{prefix} {i}` (1-based).
pub fn numbered(prefix: &str, n: usize) -> String {
    (1..=n).map(|i| format!("{prefix} {i}\n")).collect()
}

/// The source of `src/lib.rs` at base (20 lines).
pub fn lib_base() -> String {
    let mut s = String::from("//! A small library.\n\n");
    for i in 1..=6 {
        s.push_str(&format!("pub fn f{i}() -> u32 {{\n    {i}\n}}\n"));
    }
    s
}

/// Base: text, large, wide, CRLF, empty, binary, symlinks, a submodule and docs.
/// Head (`feature`): edits `src/lib.rs` (line 4 changes, two lines added at the end),
/// renames `docs/guide.md` → `docs/manual.md` with an edit, deletes `old.txt`, adds
/// `src/new.rs`, makes `run.sh` executable, rewrites 600 lines of `big.txt`.
pub fn sources() -> (TestRepo, ChangeSnapshot, SourceReader) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", lib_base())
        .write("big.txt", numbered("line", 1000))
        .write("wide.txt", format!("{}\n", "x".repeat(50_000)))
        .write(
            "long-lines.txt",
            (1..=200)
                .map(|i| format!("{i:>4} {}\n", "y".repeat(300)))
                .collect::<String>(),
        )
        .write("crlf.txt", "alpha\r\nbeta\r\n")
        .write("empty.txt", "")
        .write("bin.dat", b"\0\x01\x02binary\0")
        .write("old.txt", "to be deleted\nsecond line\n")
        .write("run.sh", "#!/bin/sh\n")
        .write("docs/guide.md", numbered("guide", 10))
        .write("dir with space/ünï.txt", "unicode name\n")
        .symlink("link", "src/lib.rs")
        .symlink("escape", "../../../../etc/passwd")
        .submodule("vendor/sub", SUB);
    repo.commit("base");
    repo.branch("feature").checkout("feature");
    let lib_head = lib_base().replace("    1\n", "    100\n") + "pub fn f7() -> u32 {\n    7\n}\n";
    let big_head: String = (1..=1000)
        .map(|i| {
            if (201..=800).contains(&i) {
                format!("changed {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    repo.write("src/lib.rs", lib_head)
        .write("src/new.rs", "pub fn added() {}\n")
        .rename("docs/guide.md", "docs/manual.md")
        .write(
            "docs/manual.md",
            numbered("guide", 10).replace("guide 9\n", "manual 9\n"),
        )
        .delete("old.txt")
        .set_executable("run.sh", true)
        .write("big.txt", big_head)
        .write("dir with space/ünï.txt", "unicode name, edited\n");
    repo.commit("feature");
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    let reader = SourceReader::open(repo.path(), &snap).unwrap();
    (repo, snap, reader)
}
