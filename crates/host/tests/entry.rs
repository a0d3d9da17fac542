//! The review's one entry point, `vouch_host::review::run`, driven as a caller other
//! than the binary would drive it: a request (range, manifest, endpoint flags) and
//! services (built-in tables, presenter, sink, token), a real git repository and real
//! HTTP to a scripted OpenAI-compatible server. The binary's own tests reach the same
//! function through `vouch review`.

mod support;

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use vouch_core::{CoverageLevel, Outcome};
use vouch_host::diagnostics::{Collector, ReasonCode};
use vouch_host::progress::{ProgressEvent, Recorder};
use vouch_host::review::{PullRequestText, ReviewError, ReviewRequest, ReviewServices, run};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};

/// The changed files of [`change`], sorted.
const EXPECTED: [&str; 2] = ["README.md", "src/lib.rs"];

fn change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n")
        .write("README.md", "# Answer\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")
        .write("README.md", "# Answer\n\nIt is 42.\n");
    let head = repo.commit("answer 42");
    (repo, base, head)
}

/// Every reviewer answers an exact, complete receipt and no candidate.
fn clean_script() -> Script {
    let receipt = json!({
        "candidates": [],
        "coverage": {"complete": true, "reviewedFiles": EXPECTED},
        "summary": "scripted"
    });
    Script::new().rule(Rule::when(Match::any()).always(Reply::content(receipt.to_string())))
}

fn request(repo: &TestRepo, base: &str, head: &str, server: &ScriptedServer) -> ReviewRequest {
    ReviewRequest {
        concurrency: Some(2),
        pull_request: PullRequestText {
            title: Some("Answer 42".into()),
            body: None,
        },
        repo_config: true,
        inline_bytes: None,
        ..support::request(
            repo.path(),
            base,
            head,
            support::manifest("manifests/panel.toml"),
            server,
        )
    }
}

struct Observed {
    presenter: Arc<Recorder>,
    diagnostics: Arc<Collector>,
}

fn services(cancel: CancellationToken) -> (ReviewServices, Observed) {
    let presenter = Arc::new(Recorder::default());
    let diagnostics = Arc::new(Collector::default());
    let services = support::services(
        support::panel_builtins(),
        presenter.clone(),
        diagnostics.clone(),
        cancel,
    );
    (
        services,
        Observed {
            presenter,
            diagnostics,
        },
    )
}

/// A change reviewed through the entry point: the endpoint is checked first, every lane
/// runs, every changed file is reviewed, and the report is self-checked (no findings,
/// full coverage) with the composition and the range it was made from.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_is_reviewed_to_a_checked_report() {
    let (repo, base, head) = change();
    let server = ScriptedServer::start(clean_script()).await;
    let (services, observed) = services(CancellationToken::new());
    let outcome = run(request(&repo, &base, &head, &server), services)
        .await
        .expect("the review ran");
    let report = outcome.report;
    assert_eq!(report.composition, "panel");
    assert_eq!(report.head.sha, head);
    assert_eq!(report.files_reviewed, EXPECTED);
    assert!(report.files_not_reviewed.is_empty());
    assert_eq!(report.opinion.outcome, Outcome::NoFindings);
    assert_eq!(report.opinion.coverage, Some(CoverageLevel::Full));
    // The panel composition has no clean-result audit, so a review without candidates
    // is never called clean.
    assert!(!report.opinion.clean);
    assert!(
        report.opinion.not_clean_because[0].contains("no clean-result audit ran"),
        "{:?}",
        report.opinion
    );
    assert_eq!(report.stages.len(), 5, "every panel instance ran once");
    // The endpoint check's request came before the first chat request.
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    let first_chat = paths.iter().position(|p| p.ends_with("/chat/completions"));
    let first_models = paths.iter().position(|p| p.ends_with("/models"));
    assert!(
        first_models.is_some() && first_models < first_chat,
        "the endpoint is checked before any stage: {paths:?}"
    );
    assert_eq!(
        report.usage.requests,
        paths.len() as u64,
        "every request sent is counted, the endpoint check's too"
    );
    let events = observed.presenter.events();
    assert!(matches!(
        events.first(),
        Some(ProgressEvent::ReviewStarted { .. })
    ));
    assert!(
        observed
            .diagnostics
            .lines()
            .iter()
            .any(|d| d.reason == ReasonCode::ReviewStarted)
    );
}

/// An unknown revision is the user's to fix: a usage error that names it, and no
/// request is sent.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_revision_is_a_usage_error_before_any_request() {
    let (repo, base, _) = change();
    let server = ScriptedServer::start(clean_script()).await;
    let (services, _) = services(CancellationToken::new());
    let Err(error) = run(request(&repo, &base, "no-such-branch", &server), services).await else {
        panic!("an unknown head was reviewed");
    };
    let ReviewError::Usage(message) = error else {
        panic!("not a usage error: {error}");
    };
    assert!(message.contains("no-such-branch"), "{message}");
    assert!(server.requests().is_empty());
}

/// A manifest that cannot be read is a usage error naming the file.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_manifest_is_a_usage_error_naming_it() {
    let (repo, base, head) = change();
    let server = ScriptedServer::start(clean_script()).await;
    let mut request = request(&repo, &base, &head, &server);
    request.manifest = Some(repo.path().join("absent.toml"));
    let (services, _) = services(CancellationToken::new());
    let Err(ReviewError::Usage(message)) = run(request, services).await else {
        panic!("a missing manifest was not a usage error");
    };
    assert!(message.contains("absent.toml"), "{message}");
    assert!(server.requests().is_empty());
}

/// A review cancelled before it starts still makes its report: aborted, nothing
/// reviewed, never clean, and no model request.
#[tokio::test(flavor = "multi_thread")]
async fn a_review_cancelled_before_it_starts_reports_aborted() {
    let (repo, base, head) = change();
    let server = ScriptedServer::start(clean_script()).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (services, _) = services(cancel);
    let report = run(request(&repo, &base, &head, &server), services)
        .await
        .expect("a cancelled review still reports")
        .report;
    assert_eq!(report.opinion.outcome, Outcome::Aborted);
    assert!(report.files_reviewed.is_empty());
    assert!(server.chat_requests().is_empty());
}
