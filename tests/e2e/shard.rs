//! Sharding (issue #10 items 2 and 3): a lane whose files do not fit one execution runs
//! as shards, each a normal stage execution with its own slice of the canonical list,
//! receipt and retry; the lane's coverage is the union; requests stay under their bound.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, RecordedRequest, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{Output, ScriptedReview, candidates_reply, expected_list, perfect};

const RETRY: &str = "## Coverage retry";
/// The sharded test compositions, relative to the workspace.
const SHARDED: &str = "tests/data/e2e/sharded.toml";
const SHARDED_MAX2: &str = "tests/data/e2e/sharded-max2.toml";
const GENERIC: &str = "generic-investigator #1";

/// A model whose receipt leaves out the last expected path (claiming completeness).
fn forgets_one() -> Reply {
    Reply::content_from(|body| {
        let mut list = expected_list(body);
        list.pop();
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        candidates_reply(json!([]), true, &paths)
    })
}

/// A model that proposes one candidate per expected file (line 10), with a complete
/// receipt.
fn proposes_one_per_file() -> Reply {
    Reply::content_from(|body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        let candidates: Vec<Value> = paths
            .iter()
            .map(|p| vouch_workspace_tests::candidate(p, 10, 10, "scripted claim"))
            .collect();
        candidates_reply(json!(candidates), true, &paths)
    })
}

/// The instance label a request names (`Instance: …` line of its first user turn).
fn label(request: &RecordedRequest) -> Option<String> {
    let user = request.contents_of("user").into_iter().next()?;
    let line = user.lines().find(|l| l.starts_with("Instance: "))?;
    Some(line["Instance: ".len()..].to_string())
}

fn is_retry(request: &RecordedRequest) -> bool {
    request
        .contents_of("user")
        .first()
        .is_some_and(|u| u.contains(RETRY))
}

/// `n` lines `word i` of about 60 characters.
fn lines(word: &str, n: usize) -> String {
    (1..=n)
        .map(|i| format!("{word} line {i:04} of a file that is long enough to matter here\n"))
        .collect()
}

/// A change of `dirs` × `per_dir` text files, each with ten lines rewritten.
fn change(dirs: usize, per_dir: usize) -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    let path = |d: usize, f: usize| format!("src/mod{d:02}/file{f:02}.txt");
    for d in 0..dirs {
        for f in 0..per_dir {
            repo.write(&path(d, f), lines("old", 30));
        }
    }
    let base = repo.commit("base");
    for d in 0..dirs {
        for f in 0..per_dir {
            let mut text = lines("old", 30);
            text = text.replacen("old line 0010", "NEW line 0010", 1);
            for i in 11..=19 {
                text = text.replace(&format!("old line {i:04}"), &format!("NEW line {i:04}"));
            }
            repo.write(&path(d, f), text);
        }
    }
    let head = repo.commit("rewrite ten lines everywhere");
    (repo, base, head)
}

async fn review(
    repo: &TestRepo,
    base: &str,
    head: &str,
    server: &ScriptedServer,
    manifest: Option<&str>,
) -> Output {
    let review = ScriptedReview::new(repo, base, head, server);
    match manifest {
        Some(manifest) => review.manifest(manifest).run().await,
        None => review.run().await,
    }
}

/// Reviews with the sharded composition, one execution at a time.
async fn one_at_a_time(repo: &TestRepo, base: &str, head: &str, server: &ScriptedServer) -> Output {
    ScriptedReview::new(repo, base, head, server)
        .manifest(SHARDED)
        .args(&["--concurrency", "1"])
        .run()
        .await
}

fn shard_labels(report: &Value, lane: &str) -> Vec<String> {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["label"].as_str())
        .filter(|l| l.starts_with(&format!("{lane} [shard ")))
        .map(str::to_string)
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// Issue #10 item 2: a change larger than one shard where one shard's receipt misses a
/// file: only that shard retries (recorded requests), every other shard is asked once,
/// and the lane's coverage is the union: full coverage, every file reviewed; no request
/// body exceeds the manifest's `max_request_tokens`.
#[tokio::test(flavor = "multi_thread")]
async fn only_the_shard_whose_receipt_missed_a_file_retries() {
    let (repo, base, head) = change(3, 4);
    let second = format!("Instance: {GENERIC} [shard 2/");
    let script = Script::new()
        .rule(
            Rule::when(
                Match::user_contains(second.clone()).and(Match::not(Match::user_contains(RETRY))),
            )
            .named("forgets")
            .always(forgets_one()),
        )
        .rule(Rule::when(Match::any()).named("perfect").always(perfect()));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, Some(SHARDED)).await;
    let report = out.json();
    let shards = shard_labels(&report, GENERIC);
    assert!(
        shards.len() >= 3,
        "the change needs several shards: {shards:?}"
    );
    let requests = server.chat_requests();
    let retried: Vec<String> = requests
        .iter()
        .filter(|r| is_retry(r))
        .filter_map(label)
        .collect();
    assert_eq!(retried.len(), 1, "{retried:?}");
    assert!(retried[0].starts_with(&second[10..]), "{retried:?}");
    for shard in &shards {
        let asked = requests
            .iter()
            .filter(|r| label(r).as_deref() == Some(shard.as_str()))
            .count();
        let want = if retried.contains(shard) { 2 } else { 1 };
        assert_eq!(asked, want, "{shard}");
    }
    let stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == retried[0].as_str())
        .unwrap();
    assert_eq!(stage["retried"], true);
    // Every shard's expected list is the canonical list restricted to it: together they
    // are the canonical list, each path once.
    let mut union: Vec<String> = requests
        .iter()
        .filter(|r| !is_retry(r) && label(r).is_some_and(|l| l.starts_with(GENERIC)))
        .flat_map(|r| expected_list(&r.body))
        .collect();
    union.sort();
    assert_eq!(union, strings(&report["expectedFiles"]));
    assert_eq!(report["opinion"]["outcome"], "no-findings", "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(strings(&report["filesReviewed"]).len(), 12);
    // The configured bound (16,000 estimated tokens, three bytes each) holds for every
    // request, the coverage retry (the largest) included.
    let largest = requests.iter().map(|r| r.raw_body.len()).max().unwrap();
    assert!(largest <= 3 * 16_000, "largest request {largest} bytes");
}

/// Fail fast: once a shard has failed (its receipt missed a file again after its coverage
/// retry) the review cannot complete, so no further shard starts and no further request
/// is spent. With one execution at a time, only the failed shard was ever asked; every
/// later shard is recorded as not started, naming it, its files are not reviewed
/// (`stage-failed`), and the review is incomplete.
#[tokio::test(flavor = "multi_thread")]
async fn no_shard_starts_after_one_has_failed() {
    let (repo, base, head) = change(3, 4);
    let first = format!("{GENERIC} [shard 1/");
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains(format!("Instance: {first}")))
                .named("forgets")
                .always(forgets_one()),
        )
        .rule(Rule::when(Match::any()).named("perfect").always(perfect()));
    let server = ScriptedServer::start(script).await;
    let out = one_at_a_time(&repo, &base, &head, &server).await;
    let report = out.json();
    let shards = shard_labels(&report, GENERIC);
    assert!(shards.len() >= 3, "{shards:?}");
    let asked: BTreeSet<String> = server.chat_requests().iter().filter_map(label).collect();
    assert_eq!(asked, BTreeSet::from([shards[0].clone()]), "{report:#}");
    let stages = report["stages"].as_array().unwrap();
    let record = |l: &str| stages.iter().find(|s| s["label"] == l).unwrap();
    assert_eq!(record(&shards[0])["status"], "failed");
    for later in &shards[1..] {
        let r = record(later);
        assert_eq!(r["status"], "skipped", "{r:#}");
        let problem = r["problem"].as_str().unwrap();
        assert!(
            problem.contains(&format!("not started: {} failed", shards[0])),
            "{problem}"
        );
    }
    assert_eq!(report["opinion"]["outcome"], "incomplete", "{report:#}");
    assert!(strings(&report["filesReviewed"]).is_empty());
    let not_reviewed: Vec<&str> = report["filesNotReviewed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["reason"] == "stage-failed")
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(not_reviewed.len(), 12, "{not_reviewed:?}");
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// Issue #10 item 2: `max_shards` reached names every file left out as a limitation,
/// never silently; those files are not reviewed and coverage is limited.
#[tokio::test(flavor = "multi_thread")]
async fn reaching_max_shards_names_the_files_left_out() {
    let (repo, base, head) = change(3, 4);
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, Some(SHARDED_MAX2)).await;
    let report = out.json();
    let shards = shard_labels(&report, GENERIC);
    assert_eq!(shards.len(), 2, "{shards:?}");
    let limitation = report["limitations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["stage"] == GENERIC
                && l["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("reached its max_shards (2)"))
        })
        .unwrap_or_else(|| panic!("{report:#}"));
    let detail = limitation["detail"].as_str().unwrap();
    let sharded: BTreeSet<String> = server
        .chat_requests()
        .iter()
        .filter(|r| label(r).is_some_and(|l| l.starts_with(GENERIC)))
        .flat_map(|r| expected_list(&r.body))
        .collect();
    let expected = strings(&report["expectedFiles"]);
    let left_out: Vec<&String> = expected.iter().filter(|p| !sharded.contains(*p)).collect();
    assert!(!left_out.is_empty());
    for path in &left_out {
        assert!(
            detail.contains(path.as_str()),
            "{path} not named in {detail}"
        );
    }
    assert!(
        detail.contains(&format!("{} file(s) were left out", left_out.len())),
        "{detail}"
    );
    assert_eq!(report["opinion"]["coverage"], "limited");
    let not_reviewed: Vec<(&str, &str)> = report["filesNotReviewed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| Some((f["path"].as_str()?, f["reason"].as_str()?)))
        .collect();
    for path in &left_out {
        assert!(
            not_reviewed.contains(&(path.as_str(), "over-budget")),
            "{path} listed as over-budget: {not_reviewed:?}"
        );
    }
}

/// Issue #10: shard labels are stable: two runs of the same change label the same
/// shards the same way, `label [shard k/n]`, and give each the same files.
#[tokio::test(flavor = "multi_thread")]
async fn shard_labels_and_slices_are_stable_across_runs() {
    let (repo, base, head) = change(3, 4);
    let mut runs = Vec::new();
    for _ in 0..2 {
        let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
        let server = ScriptedServer::start(script).await;
        let report = review(&repo, &base, &head, &server, Some(SHARDED))
            .await
            .json();
        let mut slices: Vec<(String, Vec<String>)> = server
            .chat_requests()
            .iter()
            .filter_map(|r| Some((label(r)?, expected_list(&r.body))))
            .collect();
        slices.sort();
        runs.push((shard_labels(&report, GENERIC), slices));
    }
    let (labels, _) = &runs[0];
    let n = labels.len();
    assert!(n > 1, "{labels:?}");
    let want: Vec<String> = (1..=n)
        .map(|k| format!("{GENERIC} [shard {k}/{n}]"))
        .collect();
    assert_eq!(labels, &want);
    assert_eq!(runs[0], runs[1]);
}

/// Issue #10 items 2 and 3: a file too large for any shard is split by hunks across
/// executions; each shard is given its hunks' lines, together they show every changed
/// line, so the file is seen and the review can be clean with full coverage.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_split_by_hunks_across_shards_is_seen() {
    let repo = TestRepo::new();
    repo.write("big.txt", lines("old", 600));
    let base = repo.commit("base");
    let mut text = lines("old", 600);
    for region in 0..12 {
        let line = 20 + region * 48;
        for i in line..line + 3 {
            text = text.replace(&format!("old line {i:04}"), &format!("NEW line {i:04}"));
        }
    }
    repo.write("big.txt", text);
    let head = repo.commit("twelve small edits in one file");
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let server = ScriptedServer::start(script).await;
    let report = review(&repo, &base, &head, &server, Some(SHARDED))
        .await
        .json();
    let given: Vec<String> = server
        .chat_requests()
        .iter()
        .filter(|r| label(r).is_some_and(|l| l.starts_with(GENERIC)))
        .filter(|r| r.contents_of("user")[0].contains("<hunk path=\"big.txt\""))
        .filter_map(label)
        .collect();
    assert!(given.len() >= 2, "big.txt is given in parts: {given:?}");
    for request in server.chat_requests() {
        if label(&request).is_some_and(|l| l.starts_with(GENERIC)) {
            assert_eq!(expected_list(&request.body), ["big.txt"]);
        }
    }
    assert_eq!(strings(&report["filesReviewed"]), ["big.txt"], "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["opinion"]["outcome"], "no-findings");
}

/// Issue #10: a change of about a hundred files with an instant, perfect model ends with
/// full coverage under the default composition, every file reviewed, and no request
/// body larger than the default request bound (24,000 estimated tokens at three bytes
/// per token) although the change's patches together exceed it.
#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_file_change_reaches_full_coverage_within_the_request_bound() {
    let (repo, base, head) = change(10, 10);
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let server = ScriptedServer::start(script).await;
    let report = review(&repo, &base, &head, &server, None).await.json();
    assert_eq!(report["opinion"]["outcome"], "no-findings", "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(strings(&report["filesReviewed"]).len(), 100);
    let bound = 3 * 24_000;
    let requests = server.chat_requests();
    let patches: usize = requests
        .iter()
        .map(|r| r.raw_body.matches("<patch path=").count())
        .sum();
    assert!(patches >= 100, "every patch is given: {patches}");
    let largest = requests.iter().map(|r| r.raw_body.len()).max().unwrap();
    assert!(
        largest <= bound,
        "largest request {largest} bytes > {bound}"
    );
    assert!(
        !shard_labels(&report, GENERIC).is_empty(),
        "the lane was sharded"
    );
}

/// The ids a verification request asks to decide.
fn ids_to_decide(body: &Value) -> Vec<String> {
    let user = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let marker = "Candidate ids to decide, one decision each: ";
    user.lines()
        .find_map(|l| l.strip_prefix(marker))
        .and_then(|ids| serde_json::from_str(ids).ok())
        .unwrap_or_default()
}

/// Issue #10 item 2: when candidates are many, verification runs in batches (at most
/// twelve candidates each), each labelled `verifier [batch k/n]` and asked only for
/// its own candidates; together they decide every candidate once.
#[tokio::test(flavor = "multi_thread")]
async fn many_candidates_are_verified_in_batches() {
    let (repo, base, head) = change(4, 4);
    // One candidate per file: 16 candidates, more than one verification pass decides.
    let proposes_one = proposes_one_per_file();
    let rejects_all = Reply::content_from(|body| {
        let decisions: Vec<Value> = ids_to_decide(body)
            .iter()
            .map(|id| vouch_workspace_tests::decision(id, "unresolved", json!([]), None))
            .collect();
        json!({ "decisions": decisions }).to_string()
    });
    let script = Script::new()
        .rule(Rule::when(Match::user_contains("Instance: verifier")).always(rejects_all))
        .rule(
            Rule::when(Match::user_contains(format!("Instance: {GENERIC}"))).always(proposes_one),
        );
    let server = ScriptedServer::start(script).await;
    let report = review(&repo, &base, &head, &server, Some(SHARDED))
        .await
        .json();
    let candidates = report["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 16, "{report:#}");
    for c in candidates {
        assert_eq!(c["verdict"], "unresolved", "{c:#}");
    }
    let batches = shard_labels(&report, "verifier");
    assert!(
        batches.is_empty(),
        "verification is not sharded, it is batched"
    );
    let labels: Vec<String> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["label"].as_str())
        .filter(|l| l.starts_with("verifier [batch "))
        .map(str::to_string)
        .collect();
    let n = labels.len();
    assert!(n >= 2, "{labels:?}");
    let want: Vec<String> = (1..=n)
        .map(|k| format!("verifier [batch {k}/{n}]"))
        .collect();
    assert_eq!(labels, want);
    let mut asked: Vec<String> = server
        .chat_requests()
        .iter()
        .filter(|r| label(r).is_some_and(|l| l.starts_with("verifier")))
        .flat_map(|r| ids_to_decide(&r.body))
        .collect();
    asked.sort();
    let mut ids: Vec<String> = candidates
        .iter()
        .map(|c| {
            c["candidate"]["id"]
                .as_str()
                .unwrap_or_else(|| c["id"].as_str().unwrap())
                .to_string()
        })
        .collect();
    ids.sort();
    assert_eq!(asked, ids, "each candidate asked once, in one batch");
    assert!(
        report["failures"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
}

/// Fail fast holds for verification batches too: the first batch answers with no JSON
/// (its repair too), so it fails; with one execution at a time no later batch is asked.
/// Its candidates and every later batch's stay undecided, the later ones naming the
/// failed batch, and the review is incomplete.
#[tokio::test(flavor = "multi_thread")]
async fn no_verification_batch_starts_after_one_has_failed() {
    let (repo, base, head) = change(4, 4);
    let proposes_one = proposes_one_per_file();
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains("Instance: verifier"))
                .always(Reply::content("I cannot decide these.")),
        )
        .rule(
            Rule::when(Match::user_contains(format!("Instance: {GENERIC}"))).always(proposes_one),
        );
    let server = ScriptedServer::start(script).await;
    let out = one_at_a_time(&repo, &base, &head, &server).await;
    let report = out.json();
    let stages = report["stages"].as_array().unwrap();
    let batches: Vec<&Value> = stages
        .iter()
        .filter(|s| s["label"].as_str().unwrap().starts_with("verifier [batch "))
        .collect();
    assert!(batches.len() >= 2, "{report:#}");
    let first = batches[0]["label"].as_str().unwrap();
    assert_eq!(batches[0]["status"], "failed", "{report:#}");
    let verifier_asked: BTreeSet<String> = server
        .chat_requests()
        .iter()
        .filter_map(label)
        .filter(|l| l.starts_with("verifier"))
        .collect();
    assert_eq!(verifier_asked, BTreeSet::from([first.to_string()]));
    for later in &batches[1..] {
        assert_eq!(later["status"], "skipped", "{later:#}");
    }
    let candidates = report["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 16, "{report:#}");
    let named = format!("not started: {first} failed");
    let after: Vec<&Value> = candidates
        .iter()
        .filter(|c| c["problem"].as_str().is_some_and(|p| p.contains(&named)))
        .collect();
    assert!(!after.is_empty() && after.len() < 16, "{report:#}");
    for c in &after {
        assert_eq!(
            c["verificationPasses"], 0,
            "a batch not started gave no pass: {c:#}"
        );
    }
    for c in candidates {
        assert!(c["verdict"].is_null(), "{c:#}");
    }
    assert_eq!(report["opinion"]["outcome"], "incomplete", "{report:#}");
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// Issue #10: a lane whose whole assignment's receipt would not fit one reply still runs
/// (in shards whose receipts do): what a receipt costs per file is counted per shard,
/// never in the stable part of every request. A 1,000-file change once sent no request
/// because of it.
#[tokio::test(flavor = "multi_thread")]
async fn a_lane_whose_receipt_outgrows_one_reply_runs_in_shards() {
    let (repo, base, head) = change(6, 10);
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let server = ScriptedServer::start(script).await;
    let manifest = Some("tests/data/e2e/sharded-small-output.toml");
    let report = review(&repo, &base, &head, &server, manifest).await.json();
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(strings(&report["filesReviewed"]).len(), 60, "{report:#}");
    assert!(
        shard_labels(&report, GENERIC).len() > 1,
        "the lane was sharded: {report:#}"
    );
    let largest = server
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.len())
        .max();
    assert!(largest.unwrap() <= 3 * 8_000, "largest request {largest:?}");
}

/// A Python module whose one function (about 60 lines) has line 30 changed: the
/// prefetch's enclosing definition of that hunk is the whole function.
fn python_module(word: &str) -> String {
    let mut text = String::from("def compute(values, *, scale=2):\n");
    for i in 1..=60 {
        text.push_str(&format!(
            "    step_{i:02} = sum(values) * scale + {i}  # {word} step of the computation\n"
        ));
    }
    text.push_str("    return step_60\n");
    text
}

/// Issue #10, "Prompt economy" and #14's prefetch: the prefetch counts in the request
/// bound. With a tight `max_request_tokens` and the default 6,000-token prefetch, every
/// request (first ask and coverage retry alike) stays within the bound: the shard's
/// change content comes first and the prefetch gets what is left.
#[tokio::test(flavor = "multi_thread")]
async fn the_prefetch_counts_in_the_request_bound() {
    let repo = TestRepo::new();
    let path = |d: usize, f: usize| format!("pkg{d}/mod{f:02}.py");
    for d in 0..3 {
        for f in 0..8 {
            repo.write(&path(d, f), python_module("old"));
        }
    }
    let base = repo.commit("base");
    for d in 0..3 {
        for f in 0..8 {
            let text = python_module("old").replacen("+ 30  # old", "+ 31  # new", 1);
            repo.write(&path(d, f), text);
        }
    }
    let head = repo.commit("one line in every function");
    let script = Script::new().rule(Rule::when(Match::any()).always(forgets_one()));
    let server = ScriptedServer::start(script).await;
    let manifest = Some("tests/data/e2e/sharded-tight-prefetch.toml");
    let report = review(&repo, &base, &head, &server, manifest).await.json();
    let requests = server.chat_requests();
    assert!(
        requests.iter().any(|r| r
            .raw_body
            .contains("Context prefetched from the repository graph")),
        "the prefetch ran: {report:#}"
    );
    assert!(requests.iter().any(is_retry), "coverage retries ran");
    // The stable part takes about 11,000 of the 14,000 tokens and the shard's change up to
    // 2,000: the prefetch of every shard was lowered from its 6,000 to what is left.
    let stages = report["stages"].as_array().unwrap();
    let budgets: Vec<u64> = stages
        .iter()
        .filter_map(|s| s["prefetch"]["budgetTokens"].as_u64())
        .collect();
    assert!(!budgets.is_empty(), "shards prefetched: {report:#}");
    assert!(
        budgets.iter().all(|&b| b > 0 && b < 6_000),
        "prefetch budgets {budgets:?}"
    );
    let bound = 3 * 14_000;
    for r in &requests {
        assert!(
            r.raw_body.len() <= bound,
            "a request of {} bytes > {bound} ({:?})",
            r.raw_body.len(),
            label(r)
        );
    }
}

/// Issue 28 item 1: without tools, a hunk larger than a shard (a 400-line added file,
/// a 300-line deleted one) is cut into line windows across consecutive shards, each
/// shown as numbered lines with its place in the hunk; together they show every changed
/// line, so both files are reviewed and the review ends clean with full coverage.
#[tokio::test(flavor = "multi_thread")]
async fn without_tools_a_hunk_larger_than_a_shard_is_given_in_line_windows() {
    let repo = TestRepo::new();
    repo.write("old.txt", lines("gone", 300))
        .write("keep.txt", "k\n");
    let base = repo.commit("base");
    repo.write("big.txt", lines("new", 400)).delete("old.txt");
    let head = repo.commit("add a large file, delete another");
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let server = ScriptedServer::start(script).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        Some("tests/data/e2e/sharded-no-tools.toml"),
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(
        strings(&report["filesReviewed"]),
        ["big.txt", "old.txt"],
        "{report:#}"
    );
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["opinion"]["clean"], true);
    // Each file arrived in windows of its one hunk, over several shards.
    for (path, side, last) in [("big.txt", "head", 400), ("old.txt", "base", 300)] {
        let windows: Vec<String> = server
            .chat_requests()
            .iter()
            .filter(|r| label(r).is_some_and(|l| l.starts_with(GENERIC)))
            .flat_map(|r| {
                let user = r.contents_of("user")[0].clone();
                let tag = format!("<hunk path=\"{path}\" ");
                user.lines()
                    .filter(|l| l.starts_with(&tag))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(windows.len() >= 2, "{path} in windows: {windows:?}");
        for w in &windows {
            assert!(w.contains(&format!("revision=\"{side}\"")), "{w}");
            assert!(w.contains(&format!(" of 1-{last}\"")), "{w}");
        }
    }
    // Every request given a window of a split file says the file is split, and that
    // its part is what this execution reviews (an honest model shown 40 of 400 lines
    // would otherwise say it did not review the file).
    for r in server.chat_requests() {
        let user = r.contents_of("user")[0].clone();
        let holds = ["big.txt", "old.txt"]
            .iter()
            .filter(|p| user.contains(&format!("<hunk path=\"{p}\" ")))
            .collect::<Vec<_>>();
        if holds.is_empty() {
            continue;
        }
        let note = user
            .split("## Files split across executions\n")
            .nth(1)
            .unwrap_or_else(|| panic!("no split-files section in:\n{user}"));
        let note = note.lines().next().unwrap_or_default();
        for p in holds {
            assert!(note.contains(&format!("\"{p}\"")), "{p} in {note}");
        }
        assert!(note.contains("other executions review the rest"), "{note}");
    }
}

/// Issue 28 item 1, with tools: a hunk of long lines in a file too large for one read
/// (over 32 KB) is cut into pieces from its real line lengths, so each piece planned for
/// a shard is given inline whole. A model that reads nothing itself is still shown
/// every changed line, and the review ends clean with full coverage.
#[tokio::test(flavor = "multi_thread")]
async fn with_tools_a_hunk_of_long_lines_in_a_large_file_is_given_whole_in_pieces() {
    let line = |word: &str, i: usize| format!("{word} {i:04} {}\n", "x".repeat(140));
    let file = |word: &str| -> String {
        (1..=300)
            .map(|i| {
                line(
                    if (100..140).contains(&i) {
                        word
                    } else {
                        "same"
                    },
                    i,
                )
            })
            .collect()
    };
    let repo = TestRepo::new();
    repo.write("lock.txt", file("old"));
    let base = repo.commit("base");
    repo.write("lock.txt", file("new"));
    let head = repo.commit("rewrite forty long lines");
    assert!(file("new").len() > 32 * 1024, "larger than one read");
    let script = Script::new().rule(Rule::when(Match::any()).always(perfect()));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, Some(SHARDED)).await;
    let report = out.json();
    assert_eq!(
        strings(&report["filesReviewed"]),
        ["lock.txt"],
        "{report:#}"
    );
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(report["opinion"]["clean"], true, "{report:#}");
    for request in server.chat_requests() {
        let user = request.contents_of("user")[0].clone();
        assert!(
            !user.contains("are not given inline"),
            "a planned piece did not fit its shard:\n{user}"
        );
    }
}

/// Issue 28, without tools: a shard's content takes what the request bound leaves after
/// the stable part and the retry's view of the previous answer (here `max_shard_tokens`
/// is larger than that). A coverage retry repeats the first request, which holds the
/// missing files' source, and points to it there rather than giving it again. With a
/// model whose first receipt in every shard lists only one file, every shard retries;
/// each retry names its missing files as given above, holds their patches once, and no
/// request (a retry included) is over the bound; the review ends with full coverage.
#[tokio::test(flavor = "multi_thread")]
async fn without_tools_a_retry_points_to_the_source_given_once_and_stays_within_the_bound() {
    // Sixty files of thirty rewritten lines each (about 4 KB of patch apiece): the
    // shards are bound by their content, not by their receipts.
    let repo = TestRepo::new();
    let path = |f: usize| format!("src/file{f:02}.txt");
    for f in 0..60 {
        repo.write(&path(f), lines("old", 30));
    }
    let base = repo.commit("base");
    for f in 0..60 {
        repo.write(&path(f), lines("new", 30));
    }
    let head = repo.commit("rewrite sixty files");
    let model = Reply::computed(|body| {
        let list = expected_list(body);
        let retry = body.to_string().contains("## Coverage retry");
        let keep = if retry { list.len() } else { 1 };
        let paths: Vec<&str> = list[..keep].iter().map(String::as_str).collect();
        Reply::content(candidates_reply(json!([]), true, &paths))
    });
    let script = Script::new().rule(Rule::when(Match::any()).always(model));
    let server = ScriptedServer::start(script).await;
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        Some("tests/data/e2e/wide-shard-no-tools.toml"),
    )
    .await;
    let report = out.json();
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(strings(&report["filesReviewed"]).len(), 60);
    let requests = server.chat_requests();
    let retries = requests.iter().filter(|r| is_retry(r)).count();
    let shards = shard_labels(&report, GENERIC).len();
    assert!(shards >= 2, "the lane was sharded: {shards}");
    assert!(
        retries >= shards,
        "every shard retried: {retries} of {shards}"
    );
    for retry in requests.iter().filter(|r| is_retry(r)) {
        let user = retry.contents_of("user").join("\n");
        let section = &user[user.find("## Coverage retry").expect("a retry section")..];
        assert!(
            section.contains(
                "Missing files (their patches are in the source given above; inspect them): ["
            ),
            "{section}"
        );
        assert!(
            !section.contains("<patch"),
            "no patch given again: {section}"
        );
        let missing: Vec<String> = serde_json::from_str(
            section
                .split("given above; inspect them): ")
                .nth(1)
                .and_then(|r| r.lines().next())
                .expect("the missing list"),
        )
        .expect("a JSON list");
        for path in &missing {
            let block = format!("<patch path={path:?}>");
            assert_eq!(user.matches(&block).count(), 1, "{path} given once: {user}");
        }
    }
    let bound = 3 * 16_000;
    let largest = requests.iter().map(|r| r.raw_body.len()).max().unwrap();
    assert!(
        largest <= bound,
        "largest request {largest} bytes > {bound}"
    );
}
