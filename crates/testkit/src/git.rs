//! Builders for real git repositories in temporary directories.
//!
//! [`TestRepo`] drives the `git` command line (which must be on `PATH`) in a fresh
//! repository whose default branch is `main`. Every command runs with a fixed identity,
//! fixed commit dates (one minute apart, starting 2024-01-01T00:00:00Z), no system or
//! global configuration, no hooks, no signing and `core.autocrlf=false`, so the same
//! sequence of calls always yields the same commit SHAs and bytes are stored exactly as
//! written.
//!
//! ```no_run
//! use vouch_testkit::git::TestRepo;
//! let repo = TestRepo::new();
//! repo.write("src/lib.rs", "pub fn f() {}\n");
//! let base = repo.commit("initial");
//! repo.branch("feature").checkout("feature");
//! repo.write("src/lib.rs", "pub fn f() -> u8 { 1 }\n").rename("src/lib.rs", "src/main.rs");
//! let head = repo.commit("change f");
//! # let _ = (base, head);
//! ```
//!
//! [`fixture_repo`] clones the committed fixture bundle (real code, a fixed real range).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// Unix time of the first commit's author and committer date.
const EPOCH: u64 = 1_704_067_200;

/// Runs `git` in `dir` with the isolated, deterministic environment described in the
/// module docs, `date` as author and committer date (Unix seconds). Returns stdout
/// without its trailing newline. Panics with git's stderr when the command fails.
pub fn git_at(dir: &Path, date: u64, args: &[&str]) -> String {
    let stamp = format!("{date} +0000");
    let output = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.symlinks=true",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("GIT_CEILING_DIRECTORIES")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "Vouch Test")
        .env("GIT_AUTHOR_EMAIL", "test@vouch.invalid")
        .env("GIT_COMMITTER_NAME", "Vouch Test")
        .env("GIT_COMMITTER_EMAIL", "test@vouch.invalid")
        .env("GIT_AUTHOR_DATE", &stamp)
        .env("GIT_COMMITTER_DATE", &stamp)
        .output()
        .unwrap_or_else(|e| panic!("cannot run git (is it installed?): {e}"));
    assert!(
        output.status.success(),
        "git {args:?} failed in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .trim_end_matches('\n')
        .to_string()
}

/// A real git repository with a working tree in a temporary directory, deleted on drop.
///
/// Every file operation updates the working tree *and* stages the change, so
/// [`TestRepo::commit`] commits exactly what the calls since the last commit did.
/// Paths are `/`-separated and relative to the repository root.
pub struct TestRepo {
    dir: TempDir,
    commits: Cell<u64>,
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

impl TestRepo {
    /// `git init` on branch `main` in a new temporary directory.
    pub fn new() -> TestRepo {
        let dir = TempDir::new().expect("create a temporary directory");
        git_at(dir.path(), EPOCH, &["init", "-q", "-b", "main"]);
        TestRepo {
            dir,
            commits: Cell::new(0),
        }
    }

    /// The repository's root directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs any git command in the repository (see [`git_at`]); returns trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        git_at(self.path(), self.date(), args)
    }

    /// The commit date the next commit gets: one minute after the previous one.
    fn date(&self) -> u64 {
        EPOCH + 60 * self.commits.get()
    }

    fn abs(&self, path: &str) -> PathBuf {
        let abs = self.path().join(path);
        if let Some(parent) = abs.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        abs
    }

    /// Writes `content` (exact bytes; CRLF stays CRLF) to `path` and stages it.
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) -> &TestRepo {
        std::fs::write(self.abs(path), content).expect("write file");
        self.git(&["add", "--", path]);
        self
    }

    /// Deletes `path` (`git rm`).
    pub fn delete(&self, path: &str) -> &TestRepo {
        self.git(&["rm", "-q", "--", path]);
        self
    }

    /// Moves `from` to `to` (`git mv`), creating parent directories.
    pub fn rename(&self, from: &str, to: &str) -> &TestRepo {
        self.abs(to);
        self.git(&["mv", "--", from, to]);
        self
    }

    /// Sets or clears the executable bit of a tracked file (mode 100755 / 100644), in the
    /// working tree and the index.
    pub fn set_executable(&self, path: &str, executable: bool) -> &TestRepo {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(self.abs(path), std::fs::Permissions::from_mode(mode))
                .expect("chmod");
        }
        let flag = if executable {
            "--chmod=+x"
        } else {
            "--chmod=-x"
        };
        self.git(&["update-index", flag, "--", path]);
        self
    }

    /// Creates a symbolic link at `path` whose link text is `target` (mode 120000) and
    /// stages it. The target need not exist.
    pub fn symlink(&self, path: &str, target: &str) -> &TestRepo {
        let abs = self.abs(path);
        let _ = std::fs::remove_file(&abs);
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, &abs).expect("create symlink");
        #[cfg(not(unix))]
        compile_error!("vouch-testkit's symlink builder needs a Unix file system");
        self.git(&["add", "--", path]);
        self
    }

    /// Stages a submodule entry (a gitlink, mode 160000) at `path` pointing at `commit`
    /// (40 hex digits; the commit need not exist anywhere). An empty directory stands in
    /// for the unpopulated submodule in the working tree.
    pub fn submodule(&self, path: &str, commit: &str) -> &TestRepo {
        std::fs::create_dir_all(self.path().join(path)).expect("create submodule directory");
        let info = format!("160000,{commit},{path}");
        self.git(&["update-index", "--add", "--cacheinfo", &info]);
        self
    }

    /// Commits what is staged (empty commits allowed) and returns the new commit's SHA.
    pub fn commit(&self, message: &str) -> String {
        self.git(&[
            "commit",
            "-q",
            "--allow-empty",
            "--no-verify",
            "-m",
            message,
        ]);
        self.commits.set(self.commits.get() + 1);
        self.rev("HEAD")
    }

    /// Creates branch `name` at the current commit without switching to it.
    pub fn branch(&self, name: &str) -> &TestRepo {
        self.git(&["branch", name]);
        self
    }

    /// Switches to branch (or commit) `name`, updating the working tree.
    pub fn checkout(&self, name: &str) -> &TestRepo {
        self.git(&["checkout", "-q", name]);
        self
    }

    /// Creates a lightweight tag `name` at the current commit.
    pub fn tag(&self, name: &str) -> &TestRepo {
        self.git(&["tag", name]);
        self
    }

    /// The full SHA a revision resolves to (`git rev-parse --verify`).
    pub fn rev(&self, spec: &str) -> String {
        self.git(&["rev-parse", "--verify", "-q", &format!("{spec}^{{commit}}")])
    }

    /// Clones this repository over `file://` into a new temporary directory, with extra
    /// `git clone` arguments (e.g. `["--depth", "1"]` for a shallow clone).
    pub fn clone_with(&self, args: &[&str]) -> TestRepo {
        let dir = TempDir::new().expect("create a temporary directory");
        let url = format!("file://{}", self.path().display());
        let dest = dir.path().to_str().expect("UTF-8 temp path").to_string();
        let mut all = vec!["clone", "-q"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--", &url, &dest]);
        git_at(self.path(), self.date(), &all);
        TestRepo {
            dir,
            commits: Cell::new(self.commits.get()),
        }
    }
}

/// The committed fixture bundle (see `tests/data/fixture-repo/README.md`).
pub const FIXTURE_BUNDLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/fixture-repo/fixture.bundle"
);
/// Tip of the fixture's `main` branch: the base of the reviewed range (it moved on after
/// the feature branch forked).
pub const FIXTURE_BASE: &str = "e1fe9ff8c34c42d2407e5cd35b2ec03459165a68";
/// The merge base of [`FIXTURE_BASE`] and [`FIXTURE_HEAD`]: the diff's old side.
pub const FIXTURE_MERGE_BASE: &str = "56430a38ee0320a1cbf07dcb24330fb7a1700761";
/// Tip of the fixture's `feature` branch: the head of the reviewed range.
pub const FIXTURE_HEAD: &str = "8e6ab1050995a03328d71cd8cf2eb5215ad2e65f";

/// Clones the committed fixture bundle (a small Python rate-limiting library with a
/// realistic feature branch) into a temporary directory. Returns the directory, the base
/// SHA ([`FIXTURE_BASE`]) and the head SHA ([`FIXTURE_HEAD`]). The clone has `main`
/// checked out and `origin/main`, `origin/feature` as remote branches.
pub fn fixture_repo() -> (TempDir, String, String) {
    let dir = TempDir::new().expect("create a temporary directory");
    // Cloning into the (empty) temporary directory itself makes it the repository root.
    let dest = dir.path().to_str().expect("UTF-8 temp path").to_string();
    git_at(dir.path(), EPOCH, &["clone", "-q", FIXTURE_BUNDLE, &dest]);
    for (branch, sha) in [
        ("origin/main", FIXTURE_BASE),
        ("origin/feature", FIXTURE_HEAD),
    ] {
        let got = git_at(dir.path(), EPOCH, &["rev-parse", branch]);
        assert_eq!(
            got, sha,
            "the fixture bundle's {branch} moved; update the constants in vouch-testkit's git.rs from tests/data/fixture-repo/README.md"
        );
    }
    (dir, FIXTURE_BASE.to_string(), FIXTURE_HEAD.to_string())
}
