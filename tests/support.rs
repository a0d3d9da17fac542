//! Shared helpers for vouch's workspace-level end-to-end tests: the built `vouch`
//! binary, running it against a scripted OpenAI-compatible server, and scripted replies
//! in the shapes vouch's stages expect.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::ScriptedServer;

#[path = "support/script.rs"]
mod script;

pub use script::{
    AUDIT, CONVENTIONS, FOCUSED, GENERIC, OUTCOME, ScriptedVerifier, VERIFIER, decisions,
    expected_list, perfect, read_lines, receipt, stage,
};

/// The `vouch` binary of this test's profile (built on first use).
pub fn vouch_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        vouch_testkit::cargo::build_packages(&manifest, &["vouch-cli"]).join("vouch")
    })
}

/// The workspace root.
pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A finished `vouch` process.
#[derive(Debug)]
pub struct Output {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// Stdout parsed as JSON (panics with the output when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs `vouch` with `args` in a clean, non-interactive environment (no inherited
/// OPENAI_* or VOUCH_* variables, no user configuration, `CI=true`) plus `envs`.
pub async fn run_vouch(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let out = vouch_command(args, envs)
        .output()
        .await
        .expect("running vouch");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The command [`run_vouch`] runs, to be given another stdout (a file, a pipe whose
/// reader is gone) before it is run.
pub fn vouch_command(args: &[&str], envs: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(vouch_bin());
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") || key.starts_with("VOUCH_") {
            command.env_remove(key);
        }
    }
    command.env("CI", "true");
    // No user configuration of the machine running the tests (a test sets VOUCH_CONFIG).
    command.env("XDG_CONFIG_HOME", "/nonexistent-vouch-test-config");
    for (k, v) in envs {
        command.env(k, v);
    }
    command
}

/// Runs `vouch review --repo REPO --base BASE --head HEAD --format json --base-url URL
/// --model MODEL` followed by `extra`, with `envs` (see [`run_vouch`]).
pub async fn review_json(
    repo: &Path,
    base: &str,
    head: &str,
    base_url: &str,
    model: &str,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> Output {
    let repo = repo.display().to_string();
    let mut args = vec![
        "review",
        "--repo",
        &repo,
        "--base",
        base,
        "--head",
        head,
        "--format",
        "json",
        "--base-url",
        base_url,
        "--model",
        model,
    ];
    args.extend_from_slice(extra);
    run_vouch(&args, envs).await
}

/// `vouch review --format json` of `base..head` of a repository against a scripted
/// server (model `scripted` unless set), built argument by argument.
pub struct ScriptedReview<'a> {
    repo: &'a TestRepo,
    base: &'a str,
    head: &'a str,
    base_url: String,
    model: &'a str,
    args: Vec<String>,
    envs: Vec<(&'a str, &'a str)>,
}

impl<'a> ScriptedReview<'a> {
    /// The review of `base..head` of `repo` against `server`.
    pub fn new(repo: &'a TestRepo, base: &'a str, head: &'a str, server: &ScriptedServer) -> Self {
        ScriptedReview {
            repo,
            base,
            head,
            base_url: server.base_url(),
            model: "scripted",
            args: Vec::new(),
            envs: Vec::new(),
        }
    }

    /// `--manifest` with the workspace file at `relative` (e.g. `tests/data/e2e/minimal.toml`).
    pub fn manifest(self, relative: &str) -> Self {
        let path = workspace().join(relative).display().to_string();
        self.args(&["--manifest", &path])
    }

    /// The run's default model (`--model`).
    pub fn model(mut self, model: &'a str) -> Self {
        self.model = model;
        self
    }

    /// More arguments, after the ones already given.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// More environment variables (see [`run_vouch`]).
    pub fn envs(mut self, envs: &[(&'a str, &'a str)]) -> Self {
        self.envs.extend_from_slice(envs);
        self
    }

    /// Runs the review.
    pub async fn run(&self) -> Output {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        review_json(
            self.repo.path(),
            self.base,
            self.head,
            &self.base_url,
            self.model,
            &args,
            &self.envs,
        )
        .await
    }
}

/// A candidate reply as a candidate-producing stage writes it.
pub fn candidates_reply(candidates: Value, complete: bool, reviewed: &[&str]) -> String {
    json!({"candidates": candidates, "coverage": {"complete": complete, "reviewedFiles": reviewed}, "summary": "scripted"}).to_string()
}

/// One candidate in reply form.
pub fn candidate(path: &str, start: u32, end: u32, claim: &str) -> Value {
    json!({"path": path, "startLine": start, "endLine": end, "revision": "head", "severity": "high",
           "area": "correctness", "claim": claim, "evidence": "scripted evidence"})
}

/// A verifier decision in reply form.
pub fn decision(id: &str, verdict: &str, citations: Value, finding: Option<Value>) -> Value {
    json!({"candidateId": id, "decision": verdict, "evidence": format!("scripted {verdict}"), "citations": citations,
           "finding": finding.unwrap_or(Value::Null)})
}

/// A citation in reply form.
pub fn citation(path: &str, start: u32, end: u32) -> Value {
    json!({"revision": "head", "path": path, "startLine": start, "endLine": end})
}

/// A verified finding in reply form.
pub fn finding(path: &str, start: u32, end: u32, claim: &str) -> Value {
    json!({"path": path, "startLine": start, "endLine": end, "severity": "high", "claim": claim})
}

/// A repository whose head (commit `change`) changes `a.txt` from `a` to `b` over its
/// base (commit `base`): the smallest reviewable change.
pub fn one_file_change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit("base");
    repo.write("a.txt", "b\n");
    let head = repo.commit("change");
    (repo, base, head)
}
