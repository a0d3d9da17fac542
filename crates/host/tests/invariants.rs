//! Invariant fuzzing: whole reviews driven in-process through the entry point
//! `vouch_host::review::run`, with real HTTP to a scripted OpenAI-compatible server whose replies are
//! generated adversarially — truncations, receipts with dropped, extra, `./` or
//! case-changed paths, candidates at bad paths and lines, missing, duplicate and unknown
//! decisions, citations outside what the verifier read, provider errors, garbage, and
//! cancellation (before the review starts, or while a reply is in flight).
//!
//! For every generated run: no clean opinion unless every changed file is reviewed
//! (accepted receipt and seen); nothing published when incomplete or aborted; every
//! published citation inside a verifier ledger; the exit code follows the opinion;
//! every changed file is either reviewed or listed with a reason (a review cancelled
//! before its change was prepared knows no file and says none was reviewed); diagnostics carry only
//! known labels (no path); a review cancelled before it starts is aborted, and only a
//! cancellation aborts one.
//!
//! The seed is fixed; `VOUCH_FUZZ_CASES` sets the case count (default 200), `VOUCH_FUZZ_TRACE` prints each run's opinion.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use vouch_core::{FailOn, Outcome, exit_code};
use vouch_host::diagnostics::Collector;
use vouch_host::progress::Silent;
use vouch_report::ReviewReport;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};

const FILES: [&str; 3] = ["README.md", "src/a.rs", "src/b.rs"];
const INVESTIGATOR: &str = "Instance: generic-investigator #1";
const VERIFIER: &str = "Instance: verifier";

fn change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("README.md", "# demo\n")
        .write("src/a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n")
        .write("src/b.rs", "fn x() -> u8 {\n    1\n}\n");
    let base = repo.commit("base");
    repo.write("README.md", "# demo\n\nMore.\n")
        .write("src/a.rs", "fn a() {}\nfn b2() {}\nfn c() {}\nfn d() {}\n")
        .write("src/b.rs", "fn x() -> u8 {\n    2\n}\n");
    let head = repo.commit("change");
    (repo, base, head)
}

/// A path as a sloppy model might write it.
fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => proptest::sample::select(FILES.to_vec()).prop_map(str::to_string),
        1 => proptest::sample::select(FILES.to_vec()).prop_map(|p| format!("./{p}")),
        1 => proptest::sample::select(FILES.to_vec()).prop_map(|p| p.to_uppercase()),
        1 => proptest::sample::select(FILES.to_vec()).prop_map(|p| format!("/{p}")),
        1 => Just("src/missing.rs".to_string()),
    ]
}

fn lines() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        10 => (1u32..4, 0u32..1).prop_map(|(s, n)| (s, s + n)),
        1 => (0u32..3, 0u32..3),
        1 => (40u32..400, 0u32..5).prop_map(|(s, n)| (s, s + n)),
    ]
}

fn candidate() -> impl Strategy<Value = Value> {
    (
        path(),
        lines(),
        prop_oneof![6 => Just("high"), 2 => Just("low"), 1 => Just("urgent")],
    )
        .prop_map(|(path, (s, e), severity)| {
            json!({"path": path, "startLine": s, "endLine": e, "revision": "head",
                   "severity": severity, "area": "correctness", "claim": "c", "evidence": "e"})
        })
}

/// A receipt: exact, dropped, extra, `./` or case-changed paths, complete or not.
fn receipt() -> impl Strategy<Value = Value> {
    let variant = prop_oneof![
        6 => Just("exact"),
        1 => Just("drop"),
        1 => Just("extra"),
        1 => Just("dot"),
        1 => Just("case"),
    ];
    (variant, proptest::bool::weighted(0.85)).prop_map(|(variant, complete)| {
        let mut files: Vec<String> = FILES.iter().map(|s| s.to_string()).collect();
        match variant {
            "drop" => {
                files.pop();
            }
            "extra" => files.push("src/extra.rs".into()),
            "dot" => files[1] = format!("./{}", files[1]),
            "case" => files[0] = files[0].to_lowercase(),
            _ => {}
        }
        json!({"complete": complete, "reviewedFiles": files})
    })
}

/// A final answer: mostly the generated body, sometimes cut at the output limit, a
/// provider error or prose without JSON.
fn final_reply(body: BoxedStrategy<String>) -> impl Strategy<Value = Reply> {
    prop_oneof![
        12 => body.clone().prop_map(Reply::content),
        1 => (body, 0.0f64..1.0).prop_map(|(text, at)| {
            let cut = text.char_indices().nth((text.chars().count() as f64 * at) as usize);
            let cut = cut.map_or(text.len(), |(i, _)| i);
            Reply::content_with_finish(&text[..cut], "length")
        }),
        1 => Just(Reply::status(500)),
        1 => Just(Reply::content("I looked at everything and it is fine.")),
    ]
}

/// Tool reads a model makes before answering (whole files, sometimes a sloppy path).
fn reads() -> impl Strategy<Value = Vec<Reply>> {
    proptest::collection::vec(
        path().prop_map(|p| Reply::tool_call("read_file", json!({"path": p}).to_string())),
        0..4,
    )
}

/// Reads, then a final answer; then a second final answer (for a retry or a repair).
fn execution(body: BoxedStrategy<String>) -> impl Strategy<Value = Vec<Reply>> {
    (reads(), final_reply(body.clone()), final_reply(body)).prop_map(|(mut r, a, b)| {
        r.push(a);
        r.push(b);
        r
    })
}

/// A candidate reply proposing `candidates`.
fn candidate_reply(candidates: Vec<Value>) -> BoxedStrategy<String> {
    receipt()
        .prop_map(move |coverage| {
            json!({"candidates": candidates, "coverage": coverage, "summary": "s"}).to_string()
        })
        .boxed()
}

/// A decision for candidate `index`: mostly at the candidate's own location (so it can
/// be verified), sometimes for an unknown id, with an unknown verdict, or citing lines
/// elsewhere.
fn decision(index: usize, candidate: &Value) -> impl Strategy<Value = Value> + use<> {
    let at = (
        candidate["path"].as_str().unwrap_or_default().to_string(),
        candidate["startLine"].as_u64().unwrap_or(1) as u32,
        candidate["endLine"].as_u64().unwrap_or(1) as u32,
    );
    let id = prop_oneof![
        12 => Just(format!("generic-investigator #1/{index}")),
        1 => Just("nobody/9".to_string()),
    ];
    let verdict = prop_oneof![
        4 => Just("verified"),
        4 => Just("rejected"),
        1 => Just("unresolved"),
        1 => Just("maybe"),
    ];
    let cited = prop_oneof![
        4 => Just(at),
        1 => (path(), lines()).prop_map(|(p, (s, e))| (p, s, e)),
    ];
    (id, verdict, cited, proptest::bool::weighted(0.8)).prop_map(
        |(id, verdict, (path, s, e), with_finding)| {
            let citation = json!({"revision": "head", "path": path, "startLine": s, "endLine": e});
            let finding = (with_finding && verdict == "verified").then(|| {
                json!({"path": path, "startLine": s, "endLine": e, "severity": "low", "claim": "c"})
            });
            json!({"candidateId": id, "decision": verdict, "evidence": "e",
                   "citations": [citation], "finding": finding})
        },
    )
}

/// Decisions for `candidates` (sometimes one dropped or duplicated).
fn decisions_reply(candidates: &[Value]) -> BoxedStrategy<String> {
    let all: Vec<_> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| decision(i, c).boxed())
        .collect();
    (all, 0usize..8)
        .prop_map(|(mut d, twist)| {
            match twist {
                0 if !d.is_empty() => {
                    d.pop();
                }
                1 if !d.is_empty() => d.push(d[0].clone()),
                _ => {}
            }
            json!({"decisions": d}).to_string()
        })
        .boxed()
}

#[derive(Debug, Clone)]
struct RunScript {
    investigator: Vec<Reply>,
    verifier: Vec<Reply>,
    others: Vec<Reply>,
    /// Cancel the review (Ctrl-C) once the model has received this many requests:
    /// `Some(0)` before the review starts, `Some(k)` while the k-th reply is in flight.
    cancel_after: Option<usize>,
}

fn cancellation() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![8 => Just(None), 1 => Just(Some(0)), 2 => (1usize..5).prop_map(Some)]
}

fn run_script() -> impl Strategy<Value = RunScript> {
    proptest::collection::vec(candidate(), 0..3).prop_flat_map(|candidates| {
        (
            execution(candidate_reply(candidates.clone())),
            execution(decisions_reply(&candidates)),
            proptest::collection::vec(final_reply(candidate_reply(candidates)), 0..2),
            cancellation(),
        )
            .prop_map(|(investigator, verifier, others, cancel_after)| RunScript {
                investigator,
                verifier,
                others,
                cancel_after,
            })
    })
}

/// The minimal composition (one investigator, the verifier) with no HTTP retries, so a
/// scripted 500 fails its request at once.
fn manifest() -> &'static Path {
    static MANIFEST: std::sync::OnceLock<tempfile::TempPath> = std::sync::OnceLock::new();
    MANIFEST.get_or_init(|| {
        let minimal = support::manifest("tests/data/e2e/minimal.toml");
        let text = std::fs::read_to_string(minimal).expect("minimal composition");
        let text = text.replace("max_retries = 2", "max_retries = 0");
        assert!(
            text.contains("max_retries = 0"),
            "the minimal composition sets max_retries"
        );
        let file = tempfile::NamedTempFile::new().expect("temporary manifest");
        std::fs::write(file.path(), text).expect("writing the manifest");
        file.into_temp_path()
    })
}

async fn review(
    repo: &Path,
    base: &str,
    head: &str,
    script: &RunScript,
) -> (ReviewReport, Vec<String>, bool) {
    let server = Arc::new(
        ScriptedServer::start(
            Script::new()
                .rule(
                    Rule::when(Match::any_message_contains(INVESTIGATOR))
                        .replies(script.investigator.clone()),
                )
                .rule(
                    Rule::when(Match::any_message_contains(VERIFIER))
                        .replies(script.verifier.clone()),
                )
                .rule(Rule::when(Match::any()).replies(script.others.clone())),
        )
        .await,
    );
    let diagnostics = Arc::new(Collector::default());
    let cancel = CancellationToken::new();
    if script.cancel_after == Some(0) {
        cancel.cancel();
    }
    let services = support::services(
        vec![
            vouch_plugin_investigator::plugin_table(),
            vouch_plugin_verifier::plugin_table(),
        ],
        Arc::new(Silent),
        diagnostics.clone(),
        cancel.clone(),
    );
    let request = support::request(repo, base, head, manifest().to_path_buf(), &server);
    let watcher = script.cancel_after.map(|after| {
        let server = server.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            while server.request_count() < after {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            cancel.cancel();
        })
    });
    let run = vouch_host::review::run(request, services)
        .await
        .expect("the review ran")
        .report;
    if let Some(watcher) = watcher {
        watcher.abort();
    }
    let labels = diagnostics
        .lines()
        .into_iter()
        .filter_map(|d| d.label)
        .collect();
    (run, labels, cancel.is_cancelled())
}

fn check(
    run: &ReviewReport,
    labels: &[String],
    script: &RunScript,
    cancelled: bool,
) -> Result<(), TestCaseError> {
    let o = &run.opinion;
    // A review cancelled before it starts is aborted; only a cancellation aborts one.
    if script.cancel_after == Some(0) {
        prop_assert_eq!(o.outcome, Outcome::Aborted);
    }
    if o.outcome == Outcome::Aborted {
        prop_assert!(cancelled, "aborted without a cancellation");
        prop_assert!(!o.clean);
    }
    if std::env::var_os("VOUCH_FUZZ_TRACE").is_some() {
        eprintln!(
            "FUZZ {:?} {:?} clean={} findings={}",
            o.outcome,
            o.coverage,
            o.clean,
            run.findings.len()
        );
    }
    // Every changed file is either reviewed or listed with a reason, once.
    let reviewed: BTreeSet<&str> = run.files_reviewed.iter().map(String::as_str).collect();
    let listed: BTreeSet<&str> = run
        .files_not_reviewed
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    prop_assert!(reviewed.is_disjoint(&listed));
    let all: BTreeSet<&str> = reviewed.union(&listed).copied().collect();
    if run.changed_files.is_empty() {
        // Cancelled before its change was prepared: no file is known, none is listed,
        // and the review says no file was reviewed.
        prop_assert_eq!(o.outcome, Outcome::Aborted);
        prop_assert!(all.is_empty());
        prop_assert!(
            run.messages
                .iter()
                .any(|m| m.contains("no file was reviewed"))
        );
    } else {
        prop_assert_eq!(all, FILES.iter().copied().collect::<BTreeSet<_>>());
    }
    // No clean opinion unless every changed file was reviewed.
    if o.clean {
        prop_assert!(
            run.files_not_reviewed.is_empty(),
            "clean with unreviewed files"
        );
        prop_assert!(run.limitations.is_empty() && run.failures.is_empty());
    }
    // Nothing published unless the opinion publishes findings.
    if matches!(o.outcome, Outcome::Incomplete | Outcome::Aborted) {
        prop_assert!(run.findings.is_empty());
    }
    prop_assert_eq!(o.publish_findings, o.outcome == Outcome::Findings);
    prop_assert_eq!(!run.findings.is_empty(), o.outcome == Outcome::Findings);
    // Every published citation lies inside a verifier pass's ledger.
    for f in &run.findings {
        for c in &f.citations {
            let inside = run
                .stages
                .iter()
                .filter(|s| s.role == vouch_core::Role::Verifier)
                .any(|s| s.source_ledger().check(c).is_ok());
            prop_assert!(inside, "citation {:?} outside every verifier ledger", c);
        }
    }
    // The exit code follows the opinion.
    let code = exit_code(o, FailOn::Finding);
    let want = match o.outcome {
        Outcome::Findings => 1,
        Outcome::Incomplete => 2,
        Outcome::Aborted => 130,
        Outcome::NoFindings | Outcome::NothingToReview => 0,
    };
    prop_assert_eq!(code, want);
    // Diagnostics name only stage labels, never a path.
    for label in labels {
        prop_assert!(
            label.starts_with("generic-investigator #1") || label.starts_with("verifier"),
            "diagnostic label {}",
            label
        );
    }
    Ok(())
}

#[test]
fn no_generated_model_behaviour_breaks_the_promise() {
    let cases = std::env::var("VOUCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[9; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (repo, base, head) = change();
    let result = runner.run(&run_script(), |script| {
        let (run, labels, cancelled) = runtime.block_on(review(repo.path(), &base, &head, &script));
        check(&run, &labels, &script, cancelled)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
