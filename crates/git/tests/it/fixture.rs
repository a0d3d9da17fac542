//! The committed fixture repository: a fixed, real commit range (see
//! `tests/data/fixture-repo/README.md`).

use vouch_core::snapshot::FileStatus;
use vouch_core::source::Revision;
use vouch_git::{SourceReader, snapshot};
use vouch_testkit::git::{FIXTURE_MERGE_BASE, fixture_repo};

#[test]
fn the_fixture_range_is_a_realistic_pull_request() {
    let (dir, base, head) = fixture_repo();
    let snap = snapshot(dir.path(), Some(&base), &head).unwrap();
    assert_eq!(snap.merge_base, FIXTURE_MERGE_BASE);
    let files: Vec<(&str, FileStatus)> = snap
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(
        files,
        [
            ("README.md", FileStatus::Modified),
            ("examples/demo.py", FileStatus::Deleted),
            ("ratelimit/__init__.py", FileStatus::Modified),
            ("ratelimit/bucket.py", FileStatus::Modified),
            ("ratelimit/clocks.py", FileStatus::Renamed),
            ("ratelimit/window.py", FileStatus::Modified),
            ("tests/test_bucket.py", FileStatus::Modified),
        ],
        "CHANGELOG.md and pyproject.toml changed only on main after the fork"
    );
    let renamed = snap.file("ratelimit/clocks.py").unwrap();
    assert_eq!(renamed.previous_path.as_deref(), Some("ratelimit/clock.py"));
    let counts = snap.counts();
    assert_eq!(
        (counts.files, counts.additions, counts.deletions),
        (7, 67, 21),
        "git diff --stat agrees"
    );
    let subjects: Vec<&str> = snap
        .commits
        .iter()
        .map(|c| c.message.lines().next().unwrap())
        .collect();
    assert_eq!(
        subjects,
        [
            "Add TokenBucket.acquire() with a timeout",
            "Rename ratelimit.clock to ratelimit.clocks; clocks can sleep"
        ]
    );
    // main's version bump in __init__.py is not part of the change; the import edit is.
    let reader = SourceReader::open(dir.path(), &snap).unwrap();
    let init = reader.diff("ratelimit/__init__.py").unwrap();
    assert!(init.text.contains("+from .clocks import"), "{}", init.text);
    assert!(!init.text.contains("0.3.1"), "{}", init.text);

    // The documented defect is where the README says it is.
    let acquire = reader
        .read_file(Revision::Head, "ratelimit/bucket.py", Some(88), Some(96))
        .unwrap();
    assert!(
        acquire
            .text
            .contains("94:             if deadline is not None and self._clock.now() >= deadline:"),
        "{}",
        acquire.text
    );
    assert!(
        acquire
            .text
            .contains("96:             self._clock.sleep(wait)"),
        "{}",
        acquire.text
    );
}

#[test]
fn the_fixture_default_base_is_origin_main() {
    let (dir, base, head) = fixture_repo();
    let snap = snapshot(dir.path(), None, &head).unwrap();
    assert_eq!(snap.base.spec, "origin/main");
    assert_eq!(snap.base.sha, base);
    assert_eq!(snap.files.len(), 7);
}
