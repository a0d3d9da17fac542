//! Synthetic repositories for scale tests and benchmarks: one `git fast-import` run
//! writes a base commit and a head commit whose change has a known mix of statuses.
//!
//! The mix of the `files` changed paths is 70% modified, 10% added, 8% deleted, 8%
//! renamed (with a one-line edit), 2% binary (modified) and 2% mode-only (rounded down;
//! the remainder goes to modified). Optional extras, each one more modified file:
//! a 2 MB minified one-line file changed in three places, and a 50,000-line file
//! edited in three places. Everything is deterministic from the seed: the same spec
//! always yields the same commit SHAs.
//!
//! ```no_run
//! use vouch_testkit::synth::{SynthSpec, generate_temp};
//! let (_dir, repo) = generate_temp(&SynthSpec::new(100));
//! assert_eq!(repo.expected.total(), 100);
//! # let _ = (repo.base, repo.head);
//! ```

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

use crate::git::git_at;

/// Unix time of the base commit (the head commit is one minute later).
const EPOCH: u64 = 1_704_067_200;

/// Path of the minified one-line file (see [`SynthSpec::minified`]).
pub const MINIFIED_PATH: &str = "web/vendor/bundle.min.js";

/// Path of the 50,000-line file (see [`SynthSpec::long_file`]).
pub const LONG_FILE_PATH: &str = "data/long_table.txt";

/// Size of the minified one-line file in bytes (about 2 MB).
pub const MINIFIED_BYTES: usize = 2 * 1024 * 1024;

/// Lines of the long file.
pub const LONG_FILE_LINES: usize = 50_000;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthSpec {
    /// Changed paths of the mix (not counting the optional extras).
    pub files: usize,
    /// Seed of every random choice (contents, which lines change).
    pub seed: u64,
    /// Files present in both commits and never changed (context for tools).
    pub unchanged: usize,
    /// Adds [`MINIFIED_PATH`]: one line of about [`MINIFIED_BYTES`], no final newline,
    /// changed at three byte offsets (10%, 50% and 90% of the line).
    pub minified: bool,
    /// Adds [`LONG_FILE_PATH`]: [`LONG_FILE_LINES`] lines, three of them replaced
    /// (lines 5,000, 25,000 and 45,000).
    pub long_file: bool,
}

impl SynthSpec {
    /// `files` changed paths, seed 1, no unchanged files, no extras.
    pub fn new(files: usize) -> SynthSpec {
        SynthSpec {
            files,
            seed: 1,
            unchanged: 0,
            minified: false,
            long_file: false,
        }
    }
}

/// What a generated change is expected to show (`git diff -M --name-status` terms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpectedCounts {
    /// Text files modified in place (including the optional extras).
    pub modified: usize,
    /// New files.
    pub added: usize,
    /// Deleted files.
    pub deleted: usize,
    /// Renamed files (each with a one-line edit).
    pub renamed: usize,
    /// Binary files modified in place (status `M`, no line counts).
    pub binary: usize,
    /// Files whose mode alone changed (100644 → 100755; status `M`, 0 lines).
    pub mode_only: usize,
}

impl ExpectedCounts {
    /// Every changed path.
    pub fn total(&self) -> usize {
        self.modified + self.added + self.deleted + self.renamed + self.binary + self.mode_only
    }

    /// The mix for `files` paths: floors of each share, the remainder modified.
    pub fn mix(files: usize) -> ExpectedCounts {
        let share = |pct: usize| files * pct / 100;
        let mut c = ExpectedCounts {
            modified: 0,
            added: share(10),
            deleted: share(8),
            renamed: share(8),
            binary: share(2),
            mode_only: share(2),
        };
        c.modified = files - c.total();
        c
    }
}

/// What happened to one generated path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthStatus {
    /// Text modified in place.
    Modified,
    /// New at head.
    Added,
    /// Gone at head.
    Deleted,
    /// Moved (with a one-line edit).
    Renamed,
    /// Binary content modified in place.
    Binary,
    /// Only the mode changed.
    ModeOnly,
}

/// One generated changed path with the line counts `git diff --numstat` reports
/// (`None` for binary files, which git counts as `-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthChange {
    /// Current path (at head; the deleted path for deletions).
    pub path: String,
    /// Path at base, for renames.
    pub previous_path: Option<String>,
    /// What happened to it.
    pub status: SynthStatus,
    /// Added lines, `None` for binary.
    pub additions: Option<u32>,
    /// Deleted lines, `None` for binary.
    pub deletions: Option<u32>,
}

/// A generated repository: base is branch `main`, head is branch `feature` (checked out
/// as `HEAD`, working tree left empty: vouch reads objects only).
#[derive(Debug, Clone)]
pub struct SynthRepo {
    /// The repository root.
    pub path: PathBuf,
    /// SHA of the base commit (`main`).
    pub base: String,
    /// SHA of the head commit (`feature`).
    pub head: String,
    /// Counts by kind.
    pub expected: ExpectedCounts,
    /// Every changed path, sorted by current path.
    pub changes: Vec<SynthChange>,
}

/// Generates into a new temporary directory, deleted when the returned `TempDir` drops.
pub fn generate_temp(spec: &SynthSpec) -> (TempDir, SynthRepo) {
    let dir = TempDir::new().expect("create a temporary directory");
    let repo = generate(dir.path(), spec);
    (dir, repo)
}

/// Generates into `dir` (created if missing; must not already hold a repository).
/// Panics with git's message when `git` is missing or fails.
pub fn generate(dir: &Path, spec: &SynthSpec) -> SynthRepo {
    std::fs::create_dir_all(dir).expect("create the repository directory");
    git_at(dir, EPOCH, &["init", "-q", "-b", "main"]);
    let plan = Plan::new(spec);
    let stream = plan.stream();
    fast_import(dir, &stream);
    git_at(dir, EPOCH, &["symbolic-ref", "HEAD", "refs/heads/feature"]);
    let base = git_at(dir, EPOCH, &["rev-parse", "refs/heads/main"]);
    let head = git_at(dir, EPOCH, &["rev-parse", "refs/heads/feature"]);
    let mut changes = plan.changes;
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    SynthRepo {
        path: dir.to_path_buf(),
        base,
        head,
        expected: plan.expected,
        changes,
    }
}

/// Pipes `stream` into `git fast-import` in `dir`.
fn fast_import(dir: &Path, stream: &[u8]) {
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(["fast-import", "--quiet", "--done"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run git fast-import (is git installed?): {e}"));
    child
        .stdin
        .take()
        .expect("fast-import stdin")
        .write_all(stream)
        .expect("write the fast-import stream");
    let out = child.wait_with_output().expect("wait for git fast-import");
    assert!(
        out.status.success(),
        "git fast-import failed in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// SplitMix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One tree entry of a commit.
struct Entry {
    path: String,
    mode: &'static str,
    content: Vec<u8>,
}

/// Both commits' entries (head as a list of operations on base) and the expectations.
struct Plan {
    base: Vec<Entry>,
    /// `Some(entry)` writes, `None` deletes the path.
    head: Vec<(String, Option<Entry>)>,
    changes: Vec<SynthChange>,
    expected: ExpectedCounts,
}

/// Files per generated directory, so related files share a directory.
const FILES_PER_DIR: usize = 25;

impl Plan {
    fn new(spec: &SynthSpec) -> Plan {
        let mut rng = Rng(spec.seed ^ 0x005E_ED0F_7E57);
        let mut plan = Plan {
            base: Vec::new(),
            head: Vec::new(),
            changes: Vec::new(),
            expected: ExpectedCounts::mix(spec.files),
        };
        let mix = plan.expected;
        let kinds = [
            (SynthStatus::Modified, mix.modified),
            (SynthStatus::Added, mix.added),
            (SynthStatus::Deleted, mix.deleted),
            (SynthStatus::Renamed, mix.renamed),
            (SynthStatus::Binary, mix.binary),
            (SynthStatus::ModeOnly, mix.mode_only),
        ];
        let mut n = 0;
        for (status, count) in kinds {
            for _ in 0..count {
                plan.add_change(&mut rng, n, status);
                n += 1;
            }
        }
        for u in 0..spec.unchanged {
            let path = format!("lib/u{:03}/keep_{u}.rs", u / FILES_PER_DIR);
            let lines = 30 + rng.below(30);
            let content = text_file(&mut rng, &path, lines);
            plan.base.push(Entry::new(path, content));
        }
        if spec.minified {
            plan.add_minified(&mut rng);
        }
        if spec.long_file {
            plan.add_long_file(&mut rng);
        }
        plan
    }

    fn add_change(&mut self, rng: &mut Rng, n: usize, status: SynthStatus) {
        let path = format!("src/m{:03}/f{n:05}.rs", n / FILES_PER_DIR);
        let lines = 30 + rng.below(40);
        let content = text_file(rng, &path, lines);
        let (mut previous_path, mut additions, mut deletions) = (None, Some(0), Some(0));
        let mut current = path.clone();
        match status {
            SynthStatus::Modified => {
                let (edited, changed) = edit_lines(rng, &content, 3);
                self.base.push(Entry::new(path.clone(), content));
                self.head
                    .push((path.clone(), Some(Entry::new(path, edited))));
                (additions, deletions) = (Some(changed), Some(changed));
            }
            SynthStatus::Added => {
                self.head
                    .push((path.clone(), Some(Entry::new(path, content))));
                additions = Some(lines as u32);
            }
            SynthStatus::Deleted => {
                self.base.push(Entry::new(path.clone(), content));
                self.head.push((path, None));
                deletions = Some(lines as u32);
            }
            SynthStatus::Renamed => {
                let to = format!("src/m{:03}/moved/r{n:05}.rs", n / FILES_PER_DIR);
                let (edited, changed) = edit_lines(rng, &content, 1);
                self.base.push(Entry::new(path.clone(), content));
                self.head.push((path.clone(), None));
                self.head
                    .push((to.clone(), Some(Entry::new(to.clone(), edited))));
                (additions, deletions) = (Some(changed), Some(changed));
                previous_path = Some(path);
                current = to;
            }
            SynthStatus::Binary => {
                let bin_path = path.replace(".rs", ".png");
                let old = binary_blob(rng, 512);
                let mut new = old.clone();
                // Image bytes change; the signature and header stay.
                for _ in 0..8 {
                    let at = 16 + rng.below(new.len() - 16);
                    new[at] = new[at].wrapping_add(1);
                }
                self.base.push(Entry::new(bin_path.clone(), old));
                self.head
                    .push((bin_path.clone(), Some(Entry::new(bin_path.clone(), new))));
                (additions, deletions) = (None, None);
                current = bin_path;
            }
            SynthStatus::ModeOnly => {
                let sh = path.replace(".rs", ".sh");
                self.base.push(Entry::new(sh.clone(), content.clone()));
                let mut exec = Entry::new(sh.clone(), content);
                exec.mode = "100755";
                self.head.push((sh.clone(), Some(exec)));
                current = sh;
            }
        }
        self.changes.push(SynthChange {
            path: current,
            previous_path,
            status,
            additions,
            deletions,
        });
    }

    fn add_minified(&mut self, rng: &mut Rng) {
        let mut line = Vec::with_capacity(MINIFIED_BYTES + 64);
        let mut i = 0u64;
        while line.len() < MINIFIED_BYTES {
            let _ = write!(line, "var a{i}={};", rng.next() % 1_000_000);
            i += 1;
        }
        let mut edited = line.clone();
        for pct in [10, 50, 90] {
            let at = edited.len() * pct / 100;
            // Replace 8 bytes with a marker that cannot occur in the generated tokens.
            edited[at..at + 8].copy_from_slice(b"EDITED!!");
        }
        self.push_modified(MINIFIED_PATH, line, edited, 1);
    }

    fn add_long_file(&mut self, rng: &mut Rng) {
        let mut lines: Vec<String> = (0..LONG_FILE_LINES)
            .map(|i| format!("row {i:05} value {}", rng.next() % 1_000_000_007))
            .collect();
        let base = join_lines(&lines);
        for at in [5_000, 25_000, 45_000] {
            lines[at - 1] = format!("row {:05} value EDITED {}", at - 1, rng.next());
        }
        self.push_modified(LONG_FILE_PATH, base, join_lines(&lines), 3);
    }

    fn push_modified(&mut self, path: &str, old: Vec<u8>, new: Vec<u8>, changed: u32) {
        self.base.push(Entry::new(path.to_string(), old));
        self.head
            .push((path.to_string(), Some(Entry::new(path.to_string(), new))));
        self.changes.push(SynthChange {
            path: path.to_string(),
            previous_path: None,
            status: SynthStatus::Modified,
            additions: Some(changed),
            deletions: Some(changed),
        });
        self.expected.modified += 1;
    }

    /// The fast-import stream: base on `main`, head on `feature` (parent: base).
    fn stream(&self) -> Vec<u8> {
        let mut s = Vec::new();
        commit_header(&mut s, "refs/heads/main", 1, EPOCH, "synthetic base", None);
        for e in &self.base {
            e.write_to(&mut s);
        }
        commit_header(
            &mut s,
            "refs/heads/feature",
            2,
            EPOCH + 60,
            "synthetic change",
            Some(1),
        );
        for (path, entry) in &self.head {
            match entry {
                Some(e) => e.write_to(&mut s),
                None => {
                    let _ = writeln!(s, "D {path}");
                }
            }
        }
        s.extend_from_slice(b"\ndone\n");
        s
    }
}

impl Entry {
    fn new(path: String, content: Vec<u8>) -> Entry {
        Entry {
            path,
            mode: "100644",
            content,
        }
    }

    fn write_to(&self, s: &mut Vec<u8>) {
        let _ = writeln!(s, "M {} inline {}", self.mode, self.path);
        let _ = writeln!(s, "data {}", self.content.len());
        s.extend_from_slice(&self.content);
        s.push(b'\n');
    }
}

fn commit_header(
    s: &mut Vec<u8>,
    refname: &str,
    mark: u32,
    date: u64,
    message: &str,
    parent: Option<u32>,
) {
    let _ = writeln!(s, "commit {refname}\nmark :{mark}");
    let _ = writeln!(s, "author Vouch Test <test@vouch.invalid> {date} +0000");
    let _ = writeln!(s, "committer Vouch Test <test@vouch.invalid> {date} +0000");
    let _ = writeln!(s, "data {}\n{message}", message.len());
    if let Some(p) = parent {
        let _ = writeln!(s, "from :{p}");
    }
}

/// A text file of `lines` distinct lines; the path is part of every line, so no two
/// files are similar enough to pair as renames or copies by accident.
fn text_file(rng: &mut Rng, path: &str, lines: usize) -> Vec<u8> {
    let stem: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let lines: Vec<String> = (0..lines)
        .map(|i| format!("pub fn {stem}_{i}() -> u64 {{ {} }}", rng.next()))
        .collect();
    join_lines(&lines)
}

/// Replaces `count` distinct lines (never the same one twice); returns the new text and
/// how many lines changed.
fn edit_lines(rng: &mut Rng, content: &[u8], count: usize) -> (Vec<u8>, u32) {
    let text = String::from_utf8(content.to_vec()).expect("generated text is UTF-8");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let count = count.min(lines.len());
    // Evenly spread, offset by a random start, so picks are distinct.
    let stride = lines.len() / count;
    let start = rng.below(stride);
    for k in 0..count {
        let at = start + k * stride;
        lines[at] = format!("{} // edited {}", lines[at], rng.next());
    }
    (join_lines(&lines), count as u32)
}

fn join_lines(lines: &[String]) -> Vec<u8> {
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

/// Bytes with NULs, so git treats the file as binary.
/// A PNG of `len` bytes: its signature and header chunk, then image bytes (the common
/// binary file of a repository, reviewable from its metadata).
fn binary_blob(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out: Vec<u8> = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    out.extend((out.len()..len).map(|_| rng.next() as u8));
    out[len / 2] = 0;
    out
}
