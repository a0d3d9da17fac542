//! The reviewer coverage contract below the binary: `vouch_host::review::run` driven with
//! the panel composition, a real git repository, real HTTP to a scripted
//! OpenAI-compatible server, and presenters and diagnostic sinks the test can observe.
//!
//! These tests cover what the binary cannot show: progress events (the binary's
//! non-interactive presenter is silent), a failing presenter, cancellation at exact
//! points, and the reviewer's full task as an insta snapshot under `snapshots/`.
//! End-to-end tests of the same contract through `vouch review` are in
//! `tests/e2e/panel.rs`.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use vouch_core::{Outcome, StageStatus};
use vouch_host::diagnostics::{Collector, Diagnostic, DiagnosticSink, ReasonCode};
use vouch_host::progress::{Presenter, ProgressEvent, Recorder};
use vouch_host::review::ReviewRequest;
use vouch_report::ReviewReport;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, RecordedRequest, Reply, Rule, Script, ScriptedServer};

/// The panel's instance labels, in manifest order.
const LABELS: [&str; 5] = [
    "instructions-review #1",
    "instructions-review #2",
    "bug-review #1",
    "bug-review #2",
    "objective-review #1",
];

/// The canonical list of [`change`].
const EXPECTED: [&str; 4] = [
    "AGENTS.md",
    "CHANGELOG.md",
    "docs/verification/example.md",
    "src/lib.rs",
];

/// Heading of the host's coverage-retry section in a retried execution's task.
const RETRY_HEADING: &str = "## Coverage retry";

/// A change of four files (one added), committed in unsorted order.
fn change() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n")
        .write("CHANGELOG.md", "# Changelog\n")
        .write("AGENTS.md", "# Agents\n\nKeep CHANGELOG.md current.\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")
        .write(
            "docs/verification/example.md",
            "# Example\n\nanswer() is 42.\n",
        )
        .write("CHANGELOG.md", "# Changelog\n\n- answer is 42\n")
        .write(
            "AGENTS.md",
            "# Agents\n\nKeep CHANGELOG.md current.\nDocument examples.\n",
        );
    let head = repo.commit("answer 42 and document it");
    (repo, base, head)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A reviewer reply with no candidates and this receipt.
fn receipt(complete: bool, files: &[&str]) -> String {
    json!({"candidates": [], "coverage": {"complete": complete, "reviewedFiles": files}, "summary": "scripted"})
        .to_string()
}

/// The first message of a request's user turn names its instance label on a line of
/// its own (after the stable policy evidence).
fn is_instance(request: &RecordedRequest, label: &str) -> bool {
    request
        .contents_of("user")
        .first()
        .is_some_and(|u| u.contains(&format!("\nInstance: {label}\n")))
}

fn is_retry(request: &RecordedRequest) -> bool {
    request
        .contents_of("user")
        .first()
        .is_some_and(|u| u.contains(RETRY_HEADING))
}

/// `(first executions, retries)` the server received for `label`.
fn executions(server: &ScriptedServer, label: &str) -> (usize, usize) {
    let requests: Vec<_> = server
        .chat_requests()
        .into_iter()
        .filter(|r| is_instance(r, label))
        .collect();
    let retries = requests.iter().filter(|r| is_retry(r)).count();
    (requests.len() - retries, retries)
}

fn first_execution(label: &str) -> Match {
    Match::user_contains(format!("Instance: {label}\n"))
        .and(Match::not(Match::user_contains(RETRY_HEADING)))
}

fn retry_execution(label: &str) -> Match {
    Match::user_contains(format!("Instance: {label}\n")).and(Match::user_contains(RETRY_HEADING))
}

/// A script in which every instance answers an exact receipt at once, except the ones
/// `overrides` script themselves (their rules come first).
fn panel_script(overrides: Vec<Rule>) -> Script {
    let mut script = Script::new();
    for rule in overrides {
        script = script.rule(rule);
    }
    for label in LABELS {
        script = script.rule(
            Rule::when(first_execution(label))
                .named(label)
                .reply(Reply::content(receipt(true, &EXPECTED))),
        );
    }
    script
}

/// Everything a host-level review needs besides the script.
struct Setup {
    presenter: Arc<dyn Presenter>,
    diagnostics: Arc<dyn DiagnosticSink>,
    cancel: CancellationToken,
    /// Instances at once, when not the panel's own.
    concurrency: Option<usize>,
}

impl Setup {
    fn with_presenter(presenter: Arc<dyn Presenter>) -> Setup {
        Setup {
            presenter,
            diagnostics: Arc::new(Collector::default()),
            cancel: CancellationToken::new(),
            concurrency: None,
        }
    }
}

/// Runs the panel composition (`manifests/panel.toml`) on `base..head` against
/// `server` through the review's entry point, with the test's presenter, sink and token.
async fn review(
    repo: &TestRepo,
    base: &str,
    head: &str,
    server: &ScriptedServer,
    setup: Setup,
) -> ReviewReport {
    let request = ReviewRequest {
        concurrency: setup.concurrency,
        ..support::request(
            repo.path(),
            base,
            head,
            support::manifest("manifests/panel.toml"),
            server,
        )
    };
    let services = support::services(
        support::panel_builtins(),
        setup.presenter,
        setup.diagnostics,
        setup.cancel,
    );
    vouch_host::review::run(request, services)
        .await
        .expect("the panel review ran")
        .report
}

fn stage<'a>(run: &'a ReviewReport, label: &str) -> &'a vouch_core::StageRecord {
    run.stages
        .iter()
        .find(|s| s.label == label)
        .unwrap_or_else(|| panic!("no stage record for {label}"))
}

/// A presenter that records each event with the number of coverage-retry requests the
/// server had received when the event was shown.
struct Probe {
    server: Arc<ScriptedServer>,
    seen: Mutex<Vec<(ProgressEvent, usize)>>,
}

impl Probe {
    fn new(server: Arc<ScriptedServer>) -> Arc<Probe> {
        Arc::new(Probe {
            server,
            seen: Mutex::new(Vec::new()),
        })
    }

    fn seen(&self) -> Vec<(ProgressEvent, usize)> {
        self.seen.lock().unwrap().clone()
    }
}

impl Presenter for Probe {
    fn show(&self, event: &ProgressEvent) -> Result<(), String> {
        let retries = self
            .server
            .chat_requests()
            .iter()
            .filter(|r| is_retry(r))
            .count();
        self.seen.lock().unwrap().push((event.clone(), retries));
        Ok(())
    }
}

fn retry_events(events: &[ProgressEvent]) -> Vec<&ProgressEvent> {
    events
        .iter()
        .filter(|e| matches!(e, ProgressEvent::ReviewerCoverageRetry { .. }))
        .collect()
}

/// Rule 2 (reviewer task): the full task a reviewer receives over HTTP has the
/// expected-files section with the canonical list verbatim, before the output contract.
#[tokio::test(flavor = "multi_thread")]
async fn reviewer_task_contains_the_expected_files_section() {
    let (repo, base, head) = change();
    let server = ScriptedServer::start(panel_script(vec![])).await;
    let run = review(
        &repo,
        &base,
        &head,
        &server,
        Setup::with_presenter(Arc::new(Recorder::default())),
    )
    .await;
    assert_eq!(run.opinion.outcome, Outcome::NoFindings);
    let request = server
        .chat_requests()
        .into_iter()
        .find(|r| is_instance(r, "bug-review #2"))
        .expect("bug-review #2 was asked");
    let task = request.contents_of("user").remove(0);
    let section = "Expected changed files (copy these paths exactly into coverage.reviewedFiles):\n<expected-files>\n[\"AGENTS.md\",\"CHANGELOG.md\",\"docs/verification/example.md\",\"src/lib.rs\"]\n</expected-files>\n";
    let at = task.find(section).expect("the exact section");
    let contract = task
        .find("## Output contract")
        .expect("the output contract");
    let answer = task.find("## Answer").expect("the answer reminder");
    assert!(
        contract < at && at < answer,
        "the output contract leads the message (the lane's stable prefix); the section \
         is near its end, before the answer reminder"
    );
    assert!(
        !task.contains(&repo.path().display().to_string()),
        "no snapshot path in the task"
    );
    insta::with_settings!({
        snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/../../snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("panel-reviewer-task", task);
    });
}

/// Rules 5 and 7: a mismatched receipt emits `reviewer-coverage-retry` with the label,
/// the counts and the incomplete flag *before* the retry request, only for that
/// instance, and the instance finishes after its retry. Events carry no paths.
#[tokio::test(flavor = "multi_thread")]
async fn coverage_retry_event_has_counts_and_precedes_the_retry() {
    let (repo, base, head) = change();
    let script = panel_script(vec![
        Rule::when(retry_execution("bug-review #2"))
            .named("retry")
            .reply(Reply::content(receipt(true, &EXPECTED))),
        Rule::when(first_execution("bug-review #2")).reply(Reply::content(receipt(
            true,
            &["AGENTS.md", "./AGENTS.md", "src/lib.rs"],
        ))),
    ]);
    let server = Arc::new(ScriptedServer::start(script).await);
    let probe = Probe::new(server.clone());
    let run = review(
        &repo,
        &base,
        &head,
        &server,
        Setup::with_presenter(probe.clone()),
    )
    .await;
    assert_eq!(
        run.opinion.outcome,
        Outcome::NoFindings,
        "{:?}",
        run.failures
    );
    let seen = probe.seen();
    let events: Vec<ProgressEvent> = seen.iter().map(|(e, _)| e.clone()).collect();
    let retry = ProgressEvent::ReviewerCoverageRetry {
        label: "bug-review #2".into(),
        missing: 2,
        unexpected: 1,
        reported_incomplete: false,
    };
    assert_eq!(retry_events(&events), vec![&retry]);
    // Every started instance reports its agent loop's counts while it runs, under its
    // own label, before it finishes.
    for (i, event) in events.iter().enumerate() {
        let ProgressEvent::StageStarted { label } = event else {
            continue;
        };
        let finished = events[i..]
            .iter()
            .position(|e| matches!(e, ProgressEvent::StageFinished { label: l, .. } if l == label))
            .expect("the instance finishes");
        assert!(
            events[i..i + finished].iter().any(|e| matches!(
                e,
                ProgressEvent::StageActivity { label: l, turns, .. } if l == label && *turns >= 1
            )),
            "{label} reported no activity: {events:?}"
        );
    }
    let (at, (_, retries_then)) = seen
        .iter()
        .enumerate()
        .find(|(_, (e, _))| *e == retry)
        .unwrap();
    assert_eq!(
        *retries_then, 0,
        "the event is shown before the retry is sent"
    );
    let finished = events
        .iter()
        .position(
            |e| matches!(e, ProgressEvent::StageFinished { label, .. } if label == "bug-review #2"),
        )
        .unwrap();
    assert!(
        at < finished,
        "the instance retries before it counts as completed"
    );
    assert!(matches!(
        events.last(),
        Some(ProgressEvent::ReviewFinished { outcome }) if outcome == "no-findings"
    ));
    let text = serde_json::to_string(&events).unwrap();
    assert!(
        text.contains(r#""event":"reviewer-coverage-retry","label":"bug-review #2","missing":2,"unexpected":1,"reportedIncomplete":false"#),
        "{text}"
    );
    for path in EXPECTED {
        assert!(!text.contains(path), "progress never lists files: {text}");
    }
    assert_eq!(server.served_by("retry").len(), 1);
    for label in LABELS {
        let want = if label == "bug-review #2" {
            (1, 1)
        } else {
            (1, 0)
        };
        assert_eq!(executions(&server, label), want, "{label}");
    }
    let record = stage(&run, "bug-review #2");
    assert!(record.retried);
    assert_eq!(
        record.first_coverage.as_ref().unwrap().missing_files,
        strings(&["CHANGELOG.md", "docs/verification/example.md"])
    );
    assert!(record.coverage.as_ref().unwrap().complete);
}

/// Rule 7: `complete: false` with an exact list is a retry with zero counts and the
/// incomplete flag set.
#[tokio::test(flavor = "multi_thread")]
async fn complete_false_retry_event_sets_the_incomplete_flag() {
    let (repo, base, head) = change();
    let script = panel_script(vec![
        Rule::when(retry_execution("objective-review #1"))
            .reply(Reply::content(receipt(true, &EXPECTED))),
        Rule::when(first_execution("objective-review #1"))
            .reply(Reply::content(receipt(false, &EXPECTED))),
    ]);
    let server = ScriptedServer::start(script).await;
    let recorder = Arc::new(Recorder::default());
    let run = review(
        &repo,
        &base,
        &head,
        &server,
        Setup::with_presenter(recorder.clone()),
    )
    .await;
    assert_eq!(run.opinion.outcome, Outcome::NoFindings);
    let events = recorder.events();
    assert_eq!(
        retry_events(&events),
        vec![&ProgressEvent::ReviewerCoverageRetry {
            label: "objective-review #1".into(),
            missing: 0,
            unexpected: 0,
            reported_incomplete: true,
        }]
    );
}

/// A presenter that fails every call, either by returning an error or by panicking.
struct Broken {
    panic: bool,
}

impl Presenter for Broken {
    fn show(&self, event: &ProgressEvent) -> Result<(), String> {
        if self.panic {
            panic!("presenter broke on {event:?}");
        }
        Err("presenter broke".into())
    }
}

/// Rule 7: a failing presenter (error or panic) cannot change the review's result.
#[tokio::test(flavor = "multi_thread")]
async fn failing_presenter_cannot_change_the_result() {
    let (repo, base, head) = change();
    let script = || {
        panel_script(vec![
            Rule::when(retry_execution("bug-review #1")).reply(Reply::content(receipt(
                true,
                &["AGENTS.md", "./AGENTS.md", "src/lib.rs"],
            ))),
            Rule::when(first_execution("bug-review #1")).reply(Reply::content(receipt(
                true,
                &["AGENTS.md", "./AGENTS.md", "src/lib.rs"],
            ))),
        ])
    };
    let mut results = Vec::new();
    let presenters: [Arc<dyn Presenter>; 3] = [
        Arc::new(Recorder::default()),
        Arc::new(Broken { panic: false }),
        Arc::new(Broken { panic: true }),
    ];
    for presenter in presenters {
        let server = ScriptedServer::start(script()).await;
        // Every instance starts at once, so which ones run never depends on when
        // bug-review #1 fails (no stage starts after one has failed).
        let setup = Setup {
            concurrency: Some(8),
            ..Setup::with_presenter(presenter)
        };
        let run = review(&repo, &base, &head, &server, setup).await;
        let stages: Vec<_> = run
            .stages
            .iter()
            .map(|s| (s.label.clone(), s.status, s.coverage.clone(), s.retried))
            .collect();
        results.push((run.opinion.clone(), stages, run.messages.clone()));
    }
    assert_eq!(results[0].0.outcome, Outcome::Incomplete);
    assert_eq!(
        results[0], results[1],
        "an erring presenter changed the result"
    );
    assert_eq!(
        results[0], results[2],
        "a panicking presenter changed the result"
    );
}

/// A sink that keeps every line and cancels the run at the first line with `reason`.
struct CancelOn {
    reason: ReasonCode,
    cancel: CancellationToken,
    lines: Collector,
}

impl DiagnosticSink for CancelOn {
    fn emit(&self, diagnostic: &Diagnostic) {
        self.lines.emit(diagnostic);
        if diagnostic.reason == self.reason {
            self.cancel.cancel();
        }
    }
}

/// Rules 3 and 8: a repaired `complete: true` of a prose reply (no JSON receipt) is
/// downgraded visibly (`repair-quote-missing`); when the run is cancelled at that moment,
/// no retry is started — no event, no request, `retried: false` — and the review is
/// `aborted`.
#[tokio::test(flavor = "multi_thread")]
async fn cancellation_before_the_retry_starts_no_retry() {
    let (repo, base, head) = change();
    let prose = "bug-review #2 notes: the change bumps answer() to 42 [marker-b2].";
    let repaired = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": EXPECTED},
        "summary": "repaired"});
    let script = panel_script(vec![
        Rule::when(retry_execution("bug-review #2"))
            .named("retry")
            .reply(Reply::content(receipt(true, &EXPECTED))),
        Rule::when(
            Match::system_contains("You repair a reviewer's final answer")
                .and(Match::user_contains("[marker-b2]")),
        )
        .named("repair")
        .reply(Reply::content(repaired.to_string())),
        Rule::when(first_execution("bug-review #2")).reply(Reply::content(prose)),
    ]);
    let server = ScriptedServer::start(script).await;
    let cancel = CancellationToken::new();
    let sink = Arc::new(CancelOn {
        reason: ReasonCode::RepairQuoteMissing,
        cancel: cancel.clone(),
        lines: Collector::default(),
    });
    let recorder = Arc::new(Recorder::default());
    let run = review(
        &repo,
        &base,
        &head,
        &server,
        Setup {
            presenter: recorder.clone(),
            diagnostics: sink.clone(),
            cancel,
            concurrency: None,
        },
    )
    .await;
    assert_eq!(run.opinion.outcome, Outcome::Aborted);
    assert_eq!(server.served_by("repair").len(), 1);
    assert!(server.served_by("retry").is_empty(), "no retry request");
    assert!(
        retry_events(&recorder.events()).is_empty(),
        "no retry event"
    );
    let record = stage(&run, "bug-review #2");
    assert_eq!(record.status, StageStatus::Cancelled);
    assert!(!record.retried);
    assert!(record.receipt_downgraded);
    let lines = sink.lines.lines();
    assert!(
        lines
            .iter()
            .any(|d| d.reason == ReasonCode::RepairQuoteMissing
                && d.label.as_deref() == Some("bug-review #2"))
    );
    assert!(!lines.iter().any(|d| d.reason == ReasonCode::CoverageRetry));
}

/// Rule 8: cancelling while reviewers' first answers are in flight drops those requests
/// and starts no retry, although every scripted answer would have mismatched.
#[tokio::test(flavor = "multi_thread")]
async fn cancellation_in_flight_drops_requests_and_starts_no_retry() {
    let (repo, base, head) = change();
    let slow = Reply::content(receipt(true, &["src/lib.rs"])).delay(Duration::from_secs(300));
    let script = Script::new().rule(Rule::when(Match::any()).always(slow));
    let server = Arc::new(ScriptedServer::start(script).await);
    let cancel = CancellationToken::new();
    let recorder = Arc::new(Recorder::default());
    let setup = Setup {
        presenter: recorder.clone(),
        diagnostics: Arc::new(Collector::default()),
        cancel: cancel.clone(),
        concurrency: None,
    };
    let canceller = async {
        // The panel runs four instances at once: wait until their requests are in flight.
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.chat_requests().len() < 4 {
            assert!(Instant::now() < deadline, "the reviewers never asked");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.cancel();
    };
    let (run, ()) = tokio::join!(review(&repo, &base, &head, &server, setup), canceller);
    assert_eq!(run.opinion.outcome, Outcome::Aborted);
    assert!(run.findings.is_empty());
    assert_eq!(
        server.chat_requests().len(),
        4,
        "nothing is sent after cancellation"
    );
    assert!(retry_events(&recorder.events()).is_empty());
    for record in run
        .stages
        .iter()
        .filter(|s| s.status != StageStatus::Skipped)
    {
        assert_eq!(record.status, StageStatus::Cancelled, "{}", record.label);
        assert!(!record.retried, "{}", record.label);
    }
    assert!(
        run.failures.is_empty(),
        "a dropped request is no provider failure: {:?}",
        run.failures
    );
}

/// Rule 1: the canonical list (sorted, unique, current paths) is what every reviewer is
/// assigned and what the run reports, whatever order the files were written in.
#[tokio::test(flavor = "multi_thread")]
async fn canonical_list_is_the_single_source_for_every_instance() {
    let (repo, base, head) = change();
    let server = ScriptedServer::start(panel_script(vec![])).await;
    let run = review(
        &repo,
        &base,
        &head,
        &server,
        Setup::with_presenter(Arc::new(Recorder::default())),
    )
    .await;
    assert_eq!(run.expected_files, strings(&EXPECTED));
    let list = format!(
        "<expected-files>\n{}\n</expected-files>",
        serde_json::to_string(&EXPECTED).unwrap()
    );
    for label in LABELS {
        let request = server
            .chat_requests()
            .into_iter()
            .find(|r| is_instance(r, label))
            .unwrap();
        assert!(request.contents_of("user")[0].contains(&list), "{label}");
        let record = stage(&run, label);
        assert_eq!(record.assigned_files, EXPECTED.len(), "{label}");
        assert!(record.coverage.as_ref().unwrap().complete, "{label}");
    }
}
