//! Eval cases: the documented cases file (JSON or JSONL) and the adapter for the public
//! golden-comment benchmark files plus a checkout mapping. Reference: docs/eval.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::category::{Category, Severity};
use crate::golden_path::{CaseChange, GoldenPathError, resolve_golden_paths};

/// Why eval input cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct InputError {
    /// The file concerned.
    pub path: PathBuf,
    /// What is wrong (with a line or case when known) and what to do.
    pub message: String,
}

fn input_error(path: &Path, message: impl Into<String>) -> InputError {
    InputError {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// One human-curated review comment the reviewer should find.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoldenComment {
    /// The issue, in the curator's words.
    pub comment: String,
    /// How severe the curator judged it.
    #[serde(deserialize_with = "severity_text")]
    pub severity: Severity,
    /// Its category; absent means `bug` (the public benchmark's comments are bug
    /// reports unless labelled otherwise).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "category_text"
    )]
    pub category: Option<Category>,
    /// Repository-relative path, when the curator gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based line in the head revision, when the curator gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

impl GoldenComment {
    /// The category scoring uses (absent → bug).
    pub fn category(&self) -> Category {
        self.category.unwrap_or(Category::Bug)
    }
}

fn severity_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Severity, D::Error> {
    let text = String::deserialize(d)?;
    crate::category::golden_severity(&text).map_err(serde::de::Error::custom)
}

fn category_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Category>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    text.map(|t| t.parse().map_err(serde::de::Error::custom))
        .transpose()
}

/// One change to review and score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvalCase {
    /// A name for the case, unique in the file.
    pub id: String,
    /// The local git repository (relative paths are relative to the cases file).
    pub repo: PathBuf,
    /// Base revision; the reviewed change is merge-base(base, head)..head.
    pub base: String,
    /// Head revision.
    pub head: String,
    /// The pull request's title, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_title: Option<String>,
    /// The pull request's body, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_body: Option<String>,
    /// The golden comments; an empty list makes the case a clean change (every
    /// published finding is a false positive).
    pub golden: Vec<GoldenComment>,
}

impl EvalCase {
    /// Whether this is a clean-change case.
    pub fn is_clean_change(&self) -> bool {
        self.golden.is_empty()
    }

    /// Rewrites every golden path to its canonical form ([`resolve_golden_paths`]),
    /// reading the case's change once; a case without golden paths reads nothing.
    ///
    /// # Errors
    /// [`GoldenPathError`] for the first path that is not a repository path or not a
    /// file of the change, or when the change cannot be read.
    pub fn resolve_golden_paths(&mut self) -> Result<(), GoldenPathError> {
        let change = CaseChange {
            case: &self.id,
            repo: &self.repo,
            base: &self.base,
            head: &self.head,
        };
        resolve_golden_paths(change, self.golden.iter_mut().map(|g| &mut g.path))
    }
}

/// Reads a cases file: a JSON array of cases, or JSONL (one case per line; blank lines
/// and lines starting with `#` are skipped) when the name ends in `.jsonl`. Golden paths
/// are rewritten to vouch's canonical form ([`EvalCase::resolve_golden_paths`]).
///
/// # Errors
/// [`InputError`] naming the line (JSONL) or the case, for unreadable files, unknown
/// fields, bad severities or categories, empty or duplicate ids, and golden paths that
/// are not repository paths or not files of their case's change.
pub fn load_cases(path: &Path) -> Result<Vec<EvalCase>, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| input_error(path, format!("cannot read the cases file: {e}")))?;
    let mut cases: Vec<EvalCase> = if path.extension().is_some_and(|e| e == "jsonl") {
        let mut cases = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let case = serde_json::from_str(line)
                .map_err(|e| input_error(path, format!("line {}: {e}", n + 1)))?;
            cases.push(case);
        }
        cases
    } else {
        serde_json::from_str(&text).map_err(|e| {
            input_error(
                path,
                format!("{e} (expected a JSON array of cases; see docs/eval.md)"),
            )
        })?
    };
    let base_dir = path.parent().unwrap_or(Path::new("."));
    for case in &mut cases {
        if case.repo.is_relative() {
            case.repo = base_dir.join(&case.repo);
        }
    }
    check_cases(path, &cases)?;
    for case in &mut cases {
        case.resolve_golden_paths()
            .map_err(|e| input_error(path, e.to_string()))?;
    }
    Ok(cases)
}

fn check_cases(path: &Path, cases: &[EvalCase]) -> Result<(), InputError> {
    if cases.is_empty() {
        return Err(input_error(path, "holds no case"));
    }
    let mut seen = BTreeSet::new();
    for case in cases {
        if case.id.trim().is_empty() {
            return Err(input_error(path, "a case has an empty id"));
        }
        if !seen.insert(case.id.as_str()) {
            return Err(input_error(
                path,
                format!("case id {:?} appears twice", case.id),
            ));
        }
        if let Some(g) = case.golden.iter().find(|g| g.comment.trim().is_empty()) {
            return Err(input_error(
                path,
                format!(
                    "case {:?}: a golden comment is empty ({:?})",
                    case.id,
                    g.severity.as_str()
                ),
            ));
        }
    }
    Ok(())
}

/// One pull request of the public golden-comment benchmark.
#[derive(Clone, Debug, Deserialize)]
pub struct BenchmarkPr {
    /// The pull request's title.
    pub pr_title: String,
    /// The pull request's URL: the key into the checkout mapping.
    pub url: String,
    /// Its golden comments.
    pub comments: Vec<BenchmarkComment>,
}

/// One golden comment of the public benchmark.
#[derive(Clone, Debug, Deserialize)]
pub struct BenchmarkComment {
    /// The issue text.
    pub comment: String,
    /// Severity (`Critical`, `High`, `Medium`, `Low`).
    #[serde(deserialize_with = "severity_text")]
    pub severity: Severity,
    /// Category, when given.
    #[serde(default, deserialize_with = "category_text")]
    pub category: Option<Category>,
}

/// Where one benchmark pull request is checked out locally.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Checkout {
    /// The local clone (relative paths are relative to the mapping file).
    pub repo: PathBuf,
    /// Base revision (the pull request's base commit).
    pub base: String,
    /// Head revision (the pull request's head commit).
    pub head: String,
    /// The pull request's body, when known.
    #[serde(default)]
    pub pr_body: Option<String>,
}

/// Builds cases from the public benchmark's golden-comment files and a mapping file
/// (a JSON object from each pull request `url` to its [`Checkout`]).
///
/// # Errors
/// [`InputError`] for unreadable files, and when a pull request has no checkout in the
/// mapping (all such URLs are named).
pub fn load_benchmark(
    golden_files: &[PathBuf],
    mapping: &Path,
) -> Result<Vec<EvalCase>, InputError> {
    let text = std::fs::read_to_string(mapping)
        .map_err(|e| input_error(mapping, format!("cannot read the checkout mapping: {e}")))?;
    let checkouts: BTreeMap<String, Checkout> = serde_json::from_str(&text).map_err(|e| {
        input_error(
            mapping,
            format!("{e} (expected a JSON object from pull request URL to {{repo, base, head}})"),
        )
    })?;
    let map_dir = mapping.parent().unwrap_or(Path::new("."));
    let mut cases = Vec::new();
    let mut missing = Vec::new();
    for file in golden_files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| input_error(file, format!("cannot read the golden-comment file: {e}")))?;
        let prs: Vec<BenchmarkPr> = serde_json::from_str(&text).map_err(|e| {
            input_error(
                file,
                format!("{e} (expected a list of {{pr_title, url, comments}})"),
            )
        })?;
        for pr in prs {
            let Some(checkout) = checkouts.get(&pr.url) else {
                missing.push(pr.url);
                continue;
            };
            cases.push(case_of(pr, checkout, map_dir));
        }
    }
    if !missing.is_empty() {
        return Err(input_error(
            mapping,
            format!(
                "{} pull request(s) have no checkout: {}; add each URL with its repo, base and head (see docs/eval.md)",
                missing.len(),
                missing.join(", ")
            ),
        ));
    }
    let first = golden_files
        .first()
        .map(PathBuf::as_path)
        .unwrap_or(mapping);
    check_cases(first, &cases)?;
    Ok(cases)
}

fn case_of(pr: BenchmarkPr, checkout: &Checkout, map_dir: &Path) -> EvalCase {
    let repo = if checkout.repo.is_relative() {
        map_dir.join(&checkout.repo)
    } else {
        checkout.repo.clone()
    };
    EvalCase {
        id: pr.url,
        repo,
        base: checkout.base.clone(),
        head: checkout.head.clone(),
        pr_title: Some(pr.pr_title),
        pr_body: checkout.pr_body.clone(),
        golden: pr
            .comments
            .into_iter()
            .map(|c| GoldenComment {
                comment: c.comment,
                severity: c.severity,
                category: c.category,
                path: None,
                line: None,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn jsonl_cases_resolve_repos_and_name_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let ok = write(
            dir.path(),
            "c.jsonl",
            "# comment\n{\"id\": \"a\", \"repo\": \"r\", \"base\": \"b\", \"head\": \"h\", \"golden\": [{\"comment\": \"x\", \"severity\": \"High\", \"line\": 3}]}\n\n",
        );
        let cases = load_cases(&ok).unwrap();
        assert_eq!(cases[0].repo, dir.path().join("r"));
        assert_eq!(cases[0].golden[0].category(), Category::Bug);
        let bad = write(
            dir.path(),
            "d.jsonl",
            "{\"id\": \"a\", \"repo\": \"r\", \"base\": \"b\", \"head\": \"h\", \"golden\": [{\"comment\": \"x\", \"severity\": \"urgent\"}]}\n",
        );
        let err = load_cases(&bad).unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("urgent"), "{err}");
    }

    #[test]
    fn golden_paths_are_made_canonical_or_refused_when_loaded() {
        let repo = vouch_testkit::git::TestRepo::new();
        repo.write("src/a.rs", "a\n");
        let base = repo.commit("start");
        repo.write("src/a.rs", "a2\n");
        let head = repo.commit("change a");
        let dir = tempfile::tempdir().unwrap();
        let cases = |path: &str| {
            serde_json::json!([{"id": "p", "repo": repo.path(), "base": base, "head": head,
                "golden": [{"comment": "x", "severity": "high", "path": path, "line": 1}]}])
            .to_string()
        };
        let file = write(dir.path(), "c.json", &cases("./src/a.rs"));
        assert_eq!(
            load_cases(&file).unwrap()[0].golden[0].path.as_deref(),
            Some("src/a.rs")
        );
        let file = write(dir.path(), "c.json", &cases("src/other.rs"));
        let err = load_cases(&file).unwrap_err().to_string();
        assert!(
            err.contains("c.json: case \"p\": golden path \"src/other.rs\" is not a file"),
            "{err}"
        );
    }

    #[test]
    fn cases_file_errors_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let case =
            "{\"id\": \"a\", \"repo\": \"r\", \"base\": \"b\", \"head\": \"h\", \"golden\": []}";
        for (text, needle) in [
            (format!("[{case}, {case}]"), "appears twice"),
            ("[]".to_owned(), "holds no case"),
            ("[{\"id\": \"a\", \"repo\": \"r\", \"base\": \"b\", \"head\": \"h\"}]".to_owned(), "missing field `golden`"),
            ("[{\"id\": \"a\", \"repo\": \"r\", \"base\": \"b\", \"head\": \"h\", \"golden\": [], \"extra\": 1}]".to_owned(), "unknown field `extra`"),
            ("[{\"id\": \"a\", \"repo\": \"r\", \"base\": \"b\", \"head\": \"h\", \"golden\": [{\"comment\": \"x\", \"severity\": \"low\", \"category\": \"bugs\"}]}]".to_owned(), "unknown category"),
        ] {
            let path = write(dir.path(), "c.json", &text);
            let err = load_cases(&path).unwrap_err().to_string();
            assert!(err.contains(needle), "{needle}: {err}");
        }
    }

    #[test]
    fn benchmark_files_map_urls_to_checkouts_and_name_the_missing() {
        let dir = tempfile::tempdir().unwrap();
        let golden = write(
            dir.path(),
            "g.json",
            r#"[
            {"pr_title": "Fix cache", "url": "https://example.invalid/p/1", "comments": [{"comment": "leaks", "severity": "High", "category": "perf"}]},
            {"pr_title": "Add api", "url": "https://example.invalid/p/2", "comments": [{"comment": "breaks callers", "severity": "Medium"}]}
        ]"#,
        );
        let mapping = write(
            dir.path(),
            "m.json",
            r#"{"https://example.invalid/p/1": {"repo": "checkouts/one", "base": "b1", "head": "h1"}}"#,
        );
        let err = load_benchmark(std::slice::from_ref(&golden), &mapping)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("1 pull request(s) have no checkout: https://example.invalid/p/2"),
            "{err}"
        );
        let mapping = write(
            dir.path(),
            "m.json",
            r#"{"https://example.invalid/p/1": {"repo": "checkouts/one", "base": "b1", "head": "h1"},
            "https://example.invalid/p/2": {"repo": "/abs", "base": "b2", "head": "h2", "prBody": "why"}}"#,
        );
        let cases = load_benchmark(&[golden], &mapping).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].id, "https://example.invalid/p/1");
        assert_eq!(cases[0].repo, dir.path().join("checkouts/one"));
        assert_eq!(cases[0].pr_title.as_deref(), Some("Fix cache"));
        assert_eq!(cases[0].golden[0].category, Some(Category::Perf));
        assert_eq!(cases[1].golden[0].severity, Severity::Medium);
        assert_eq!(cases[1].pr_body.as_deref(), Some("why"));
    }
}
