//! Which range is reviewed: merge-base semantics, the default base, revision syntax.

use vouch_git::snapshot;
use vouch_testkit::git::TestRepo;

use crate::paths;

/// `main`: a → fork; `feature` (from fork): f1, f2; then `main` moves on: m1 touches a file
/// the feature never touched and edits `shared.txt` differently.
fn forked() -> (TestRepo, String, String, String) {
    let repo = TestRepo::new();
    repo.write("shared.txt", "line 1\nline 2\nline 3\n");
    repo.commit("a");
    repo.write("README.md", "# project\n");
    let fork = repo.commit("fork point");
    repo.branch("feature").checkout("feature");
    repo.write("feature.txt", "feature work\n");
    repo.commit("f1: add feature.txt");
    repo.write("shared.txt", "line 1\nline 2 (feature)\nline 3\n");
    let head = repo.commit("f2: edit shared.txt\n\nWhy: the feature needs it.\n");
    repo.checkout("main");
    repo.write("main-only.txt", "landed on main after the fork\n");
    repo.write("shared.txt", "line 1 (main)\nline 2\nline 3\n");
    let main_tip = repo.commit("m1: main moves on");
    repo.checkout("feature");
    (repo, fork, head, main_tip)
}

#[test]
fn the_change_is_merge_base_to_head_not_base_to_head() {
    let (repo, fork, head, main_tip) = forked();
    let snap = snapshot(repo.path(), Some("main"), "feature").unwrap();
    assert_eq!(snap.base.sha, main_tip);
    assert_eq!(snap.base.spec, "main");
    assert_eq!(snap.merge_base, fork);
    assert_eq!(snap.head.sha, head);
    // main-only.txt changed only on the base branch: a pull request would not show it.
    assert_eq!(paths(&snap), ["feature.txt", "shared.txt"]);
    let shared = &snap.files[1];
    assert_eq!((shared.additions, shared.deletions), (1, 1));
    assert_eq!(shared.hunks[0].old_start, 1);
    let messages: Vec<_> = snap.commits.iter().map(|c| c.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "f2: edit shared.txt\n\nWhy: the feature needs it.\n",
            "f1: add feature.txt\n"
        ],
        "newest first, full messages"
    );
}

#[test]
fn the_default_base_is_main() {
    let (repo, fork, head, _) = forked();
    let snap = snapshot(repo.path(), None, "HEAD").unwrap();
    assert_eq!(snap.base.spec, "main");
    assert_eq!(snap.merge_base, fork);
    assert_eq!(snap.head.sha, head);
    assert_eq!(snap.head.spec, "HEAD");
}

#[test]
fn the_default_base_falls_back_to_master() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let first = repo.commit("a");
    repo.git(&["branch", "-m", "main", "master"]);
    repo.branch("topic").checkout("topic");
    repo.write("b.txt", "b\n");
    repo.commit("b");
    let snap = snapshot(repo.path(), None, "topic").unwrap();
    assert_eq!(
        (snap.base.spec.as_str(), snap.merge_base.as_str()),
        ("master", first.as_str())
    );
    assert_eq!(paths(&snap), ["b.txt"]);
}

#[test]
fn the_default_base_prefers_origin_head() {
    let (origin, fork, _, _) = forked();
    // origin's HEAD is `develop` (at main's tip); the clone's origin/HEAD points at it, and
    // the clone has no local `main`, so only origin/HEAD can explain the choice.
    origin
        .checkout("main")
        .branch("develop")
        .checkout("develop");
    let clone = origin.clone_with(&[]);
    clone.git(&["checkout", "-q", "-b", "topic", "origin/feature"]);
    assert_eq!(
        clone.git(&["symbolic-ref", "refs/remotes/origin/HEAD"]),
        "refs/remotes/origin/develop"
    );
    let snap = snapshot(clone.path(), None, "topic").unwrap();
    assert_eq!(snap.base.spec, "origin/develop");
    assert_eq!(snap.merge_base, fork);
    assert_eq!(paths(&snap), ["feature.txt", "shared.txt"]);
}

#[test]
fn any_revision_syntax_resolves() {
    let (repo, fork, head, _) = forked();
    repo.git(&["tag", "v1", &fork]);
    let short = &head[..10];
    for (base, head_spec) in [
        ("v1", short),
        (fork.as_str(), "HEAD"),
        ("HEAD~2", "feature"),
    ] {
        let snap = snapshot(repo.path(), Some(base), head_spec).unwrap();
        assert_eq!(snap.merge_base, fork, "{base}..{head_spec}");
        assert_eq!(snap.head.sha, head, "{base}..{head_spec}");
        assert_eq!(snap.base.spec, base);
        assert_eq!(snap.head.spec, head_spec);
    }
}

#[test]
fn an_empty_range_is_ok_with_no_files_and_no_commits() {
    let (repo, _, head, _) = forked();
    for (base, head_spec) in [("feature", "feature"), ("feature", "HEAD~1")] {
        let snap = snapshot(repo.path(), Some(base), head_spec).unwrap();
        assert!(
            snap.is_empty() && snap.files.is_empty(),
            "{base}..{head_spec}"
        );
        assert!(snap.commits.is_empty(), "{base}..{head_spec}");
        assert_eq!(snap.merge_base, snap.head.sha);
    }
    // A commit that changes nothing is in the range but changes no file.
    repo.commit("empty commit");
    let snap = snapshot(repo.path(), Some(&head), "HEAD").unwrap();
    assert!(snap.is_empty());
    assert_eq!(snap.commits.len(), 1);
}

#[test]
fn a_subdirectory_of_the_checkout_finds_the_repository() {
    let (repo, fork, _, _) = forked();
    std::fs::create_dir_all(repo.path().join("nested/deeper")).unwrap();
    let snap = snapshot(&repo.path().join("nested/deeper"), Some("main"), "feature").unwrap();
    assert_eq!(snap.merge_base, fork);
}

/// Text deleted from inside a long line is named at base, where it is: the head line
/// keeps only the bytes around the deletion point.
#[test]
fn text_deleted_from_a_long_line_is_a_change_of_the_base_line() {
    use vouch_core::Revision;
    let repo = TestRepo::new();
    let body: String = (0..20_000).map(|i| format!("var v{i}={i};")).collect();
    let middle = body.len() / 2;
    let removed = "checkAuth(user);requireAdmin(user);";
    let before = format!("{}{removed}{}\n", &body[..middle], &body[middle..]);
    repo.write("app.js", &before);
    let base = repo.commit("base");
    repo.write("app.js", format!("{body}\n"));
    let head = repo.commit("tidy");
    let snap = snapshot(repo.path(), Some(&base), &head).unwrap();
    let file = snap.file("app.js").expect("app.js changed");
    let at = |revision| {
        file.long_lines
            .iter()
            .find(|l| l.revision == revision && l.line == 1)
            .unwrap_or_else(|| panic!("{revision:?} line 1 in {:?}", file.long_lines))
    };
    let start = middle as u32;
    assert_eq!(
        at(Revision::Base).changed,
        vec![(start, start + removed.len() as u32)]
    );
    assert_eq!(at(Revision::Base).len as usize, before.len() - 1);
    // At head, the bytes on each side of the deletion point.
    let head_ranges = &at(Revision::Head).changed;
    assert!(
        head_ranges
            .iter()
            .all(|&(s, e)| s <= start && start <= e && e - s <= 2),
        "{head_ranges:?}"
    );
}

/// A line just under the long-line size replaced by a long one is named on both sides:
/// the text it loses is shown by its changed bytes at base, even though the base line
/// alone is not long.
#[test]
fn a_short_line_replaced_by_a_long_one_is_named_at_base_too() {
    use vouch_core::Revision;
    let repo = TestRepo::new();
    let removed = "REMOVED_SECURITY_CHECK();";
    let short: String = (0..4_000).map(|i| format!("v{i};")).collect();
    let short = &short[..vouch_core::LONG_LINE_BYTES as usize - 500 - removed.len()];
    let before = format!("{removed}{short}\n");
    assert!(before.len() - 1 < vouch_core::LONG_LINE_BYTES as usize);
    repo.write("app.js", &before);
    let base = repo.commit("base");
    let long: String = (0..4_000).map(|i| format!("w{i};")).collect();
    repo.write("app.js", format!("{short}{long}\n"));
    let head = repo.commit("grow");
    let snap = snapshot(repo.path(), Some(&base), &head).unwrap();
    let file = snap.file("app.js").expect("app.js changed");
    let at_base = file
        .long_lines
        .iter()
        .find(|l| l.revision == Revision::Base && l.line == 1)
        .unwrap_or_else(|| panic!("base line 1 in {:?}", file.long_lines));
    assert_eq!(at_base.len as usize, before.len() - 1);
    assert!(
        at_base
            .changed
            .iter()
            .any(|&(s, e)| s == 0 && e as usize >= removed.len()),
        "the removed text is a changed range at base: {:?}",
        at_base.changed
    );
    assert!(
        file.long_lines
            .iter()
            .any(|l| l.revision == Revision::Head && l.line == 1),
        "{:?}",
        file.long_lines
    );
}

/// The long lines the snapshot names when `app.js` changes from `before` to `after`.
fn long_lines_of(before: &str, after: &str) -> Vec<vouch_core::LongLineChange> {
    let repo = TestRepo::new();
    repo.write("app.js", before);
    let base = repo.commit("base");
    repo.write("app.js", after);
    let head = repo.commit("change");
    let snap = snapshot(repo.path(), Some(&base), &head).unwrap();
    snap.file("app.js")
        .expect("app.js changed")
        .long_lines
        .clone()
}

/// An unchanged long line in a hunk's context is named on both sides with no changed
/// range: nothing in it needs to be shown for the hunk to be seen.
#[test]
fn a_long_context_line_is_named_with_no_changed_range() {
    use vouch_core::Revision;
    let long: String = (0..3_000).map(|i| format!("v{i};")).collect();
    let long_lines = long_lines_of(
        &format!("var x=1;\n{long}\n"),
        &format!("var x=2;\n{long}\n"),
    );
    let named: Vec<(Revision, u32, bool)> = long_lines
        .iter()
        .map(|l| (l.revision, l.line, l.changed.is_empty()))
        .collect();
    assert_eq!(
        named,
        vec![(Revision::Head, 2, true), (Revision::Base, 2, true)],
        "{long_lines:?}"
    );
}

/// A long line whose only change is its ending (CRLF to LF) is named by its end on both
/// sides, so some bytes of it are shown where the change is.
#[test]
fn a_long_line_whose_ending_changed_is_named_by_its_end() {
    use vouch_core::Revision;
    let long: String = (0..3_000).map(|i| format!("v{i};")).collect();
    let long_lines = long_lines_of(&format!("{long}\r\n"), &format!("{long}\n"));
    let len = long.len() as u32;
    let named: Vec<(Revision, Vec<(u32, u32)>)> = long_lines
        .iter()
        .map(|l| (l.revision, l.changed.clone()))
        .collect();
    assert_eq!(
        named,
        vec![
            (Revision::Head, vec![(len - 1, len)]),
            (Revision::Base, vec![(len - 1, len)])
        ]
    );
}
