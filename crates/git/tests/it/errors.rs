//! Errors name what is wrong and what to do.

use vouch_git::{GitError, snapshot};
use vouch_testkit::git::TestRepo;

/// `main`: three commits; `feature` forks from the second and adds two.
fn two_branches() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "1\n");
    repo.commit("one");
    repo.write("a.txt", "2\n");
    repo.commit("two");
    repo.branch("feature");
    repo.write("a.txt", "3\n");
    repo.commit("three");
    repo.checkout("feature");
    repo.write("b.txt", "b\n");
    repo.commit("feature one");
    repo.write("b.txt", "bb\n");
    repo.commit("feature two");
    repo.checkout("main");
    repo
}

#[test]
fn an_unknown_revision_is_named() {
    let repo = two_branches();
    for (base, head, bad) in [
        (Some("no-such-branch"), "main", "no-such-branch"),
        (Some("main"), "feature~9", "feature~9"),
        (
            Some("main"),
            "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef",
            "deadbeef",
        ),
    ] {
        let err = snapshot(repo.path(), base, head).unwrap_err();
        assert!(
            matches!(err, GitError::UnknownRevision { shallow: false, .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.starts_with("unknown revision `"), "{msg}");
        assert!(msg.contains(bad), "{msg}");
        assert!(!msg.contains("shallow"), "{msg}");
    }
}

#[test]
fn a_revision_that_is_not_a_commit_is_refused() {
    let repo = two_branches();
    let err = snapshot(repo.path(), Some("main"), "HEAD:a.txt").unwrap_err();
    assert!(matches!(err, GitError::NotACommit { .. }), "{err:?}");
    assert!(
        err.to_string().contains("`HEAD:a.txt` names a blob"),
        "{err}"
    );
}

#[test]
fn not_a_repository_names_the_path() {
    let dir = tempfile::TempDir::new().unwrap();
    let err = snapshot(dir.path(), None, "HEAD").unwrap_err();
    assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
    assert!(msg.contains("is not a git repository"), "{msg}");
}

#[test]
fn no_default_branch_asks_for_base() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("a");
    repo.git(&["branch", "-m", "main", "trunk"]);
    let err = snapshot(repo.path(), None, "HEAD").unwrap_err();
    assert!(matches!(err, GitError::NoDefaultBase { .. }), "{err:?}");
    assert!(err.to_string().contains("pass --base"), "{err}");
}

#[test]
fn unrelated_histories_have_no_merge_base() {
    let repo = two_branches();
    repo.git(&["checkout", "-q", "--orphan", "island"]);
    repo.write("island.txt", "alone\n");
    repo.commit("unrelated root");
    let err = snapshot(repo.path(), Some("main"), "island").unwrap_err();
    assert!(
        matches!(err, GitError::NoMergeBase { shallow: false, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("`main` and `island` have no common ancestor"),
        "{msg}"
    );
}

#[test]
fn a_shallow_clone_without_the_base_says_how_to_fetch() {
    let origin = two_branches();
    let fork = origin.rev("feature~2");
    origin.checkout("feature");
    // Depth 1, single branch: only feature's tip is here; main and the fork point are not.
    let clone = origin.clone_with(&["--depth", "1"]);
    for base in ["origin/main", fork.as_str(), "HEAD~2"] {
        let err = snapshot(clone.path(), Some(base), "HEAD").unwrap_err();
        assert!(
            matches!(err, GitError::UnknownRevision { shallow: true, .. }),
            "{base}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(base), "{msg}");
        assert!(msg.contains("shallow clone"), "{msg}");
        assert!(msg.contains("git fetch --unshallow"), "{msg}");
    }
}

#[test]
fn a_shallow_clone_without_the_merge_base_says_how_to_fetch() {
    let origin = two_branches();
    // Both tips are fetched, one commit deep each: the fork point between them is missing.
    let clone = origin.clone_with(&["--depth", "1", "--no-single-branch"]);
    let err = snapshot(clone.path(), Some("origin/main"), "origin/feature").unwrap_err();
    assert!(
        matches!(err, GitError::NoMergeBase { shallow: true, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("shallow clone"), "{msg}");
    assert!(msg.contains("--depth"), "{msg}");
}

#[test]
fn a_deep_enough_shallow_clone_works() {
    let origin = two_branches();
    let clone = origin.clone_with(&["--depth", "5", "--no-single-branch"]);
    let snap = snapshot(clone.path(), Some("origin/main"), "origin/feature").unwrap();
    assert_eq!(snap.merge_base, origin.rev("feature~2"));
    assert_eq!(crate::paths(&snap), ["b.txt"]);
}

#[test]
fn shallow_error_messages_read_well() {
    let unknown = GitError::UnknownRevision {
        spec: "origin/main".into(),
        shallow: true,
    };
    assert_eq!(
        unknown.to_string(),
        "unknown revision `origin/main`: no branch, tag or commit of that name; this repository is a shallow clone and the revision may lie outside the fetched history: run `git fetch --unshallow` (or `git fetch --depth N` with a larger N, and `git fetch origin BRANCH` for a branch that was never fetched) and try again"
    );
}
