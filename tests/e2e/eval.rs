//! `vouch eval` end to end: real reviews of real git ranges through a scripted reviewer
//! server, a scripted judge server, scores computed by hand, the response cache shared,
//! resumed and re-used.

use std::path::Path;

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{citation, decision, run_vouch, vouch_bin, workspace};

const INVESTIGATOR: &str = "Instance: generic-investigator #1";
const VERIFIER: &str = "Instance: verifier";

/// `n` numbered lines, with `changes` replacing some of them.
fn lines(n: u32, changes: &[(u32, &str)]) -> String {
    (1..=n)
        .map(|i| {
            changes.iter().find(|(at, _)| *at == i).map_or_else(
                || format!("let v{i} = {i};\n"),
                |(_, text)| format!("{text}\n"),
            )
        })
        .collect()
}

/// One repository, three changes: `a..b` changes src/a.rs, `b..c` src/b.rs, `c..d`
/// src/c.rs.
fn repo() -> (TestRepo, [String; 4]) {
    let repo = TestRepo::new();
    repo.write("src/a.rs", lines(30, &[]))
        .write("src/b.rs", lines(10, &[]))
        .write("src/c.rs", lines(10, &[]));
    let a = repo.commit("start");
    repo.write(
        "src/a.rs",
        lines(
            30,
            &[
                (3, "let count: u8 = n + 1;"),
                (5, "let next = count + 1;"),
                (20, "return None;"),
                (28, "let copy = data.to_vec();"),
            ],
        ),
    );
    let b = repo.commit("count items");
    repo.write(
        "src/b.rs",
        lines(
            10,
            &[(
                5,
                "let q = format!(\"select * from t where id = {input}\");",
            )],
        ),
    );
    let c = repo.commit("look items up");
    repo.write("src/c.rs", lines(10, &[(4, "let x = 1;")]));
    let d = repo.commit("tidy");
    (repo, [a, b, c, d])
}

fn cand(path: &str, line: u32, severity: &str, area: &str, claim: &str) -> Value {
    json!({"path": path, "startLine": line, "endLine": line, "revision": "head", "severity": severity,
           "area": area, "claim": claim, "evidence": "scripted evidence"})
}

fn verified(i: usize, path: &str, line: u32, severity: &str, claim: &str) -> Value {
    decision(
        &format!("generic-investigator #1/{i}"),
        "verified",
        json!([citation(path, line, line)]),
        Some(
            json!({"path": path, "startLine": line, "endLine": line, "severity": severity, "claim": claim}),
        ),
    )
}

const A_FINDINGS: [(u32, &str, &str, &str); 4] = [
    (3, "high", "correctness", "the counter overflows at 255"),
    (
        5,
        "high",
        "correctness",
        "the counter can wrap past its maximum",
    ),
    (20, "medium", "correctness", "returns the wrong default"),
    (28, "low", "resources", "copies the buffer on every call"),
];

/// Reviewer: case A proposes four candidates (two of one issue), case B one, case C's
/// investigator gets HTTP 400 (the review is incomplete).
fn reviewer_script() -> Script {
    reviewer_rules()
        .into_iter()
        .fold(Script::new(), Script::rule)
}

/// The rules of [`reviewer_script`].
fn reviewer_rules() -> Vec<Rule> {
    let a_candidates: Vec<Value> = A_FINDINGS
        .iter()
        .map(|(l, s, area, c)| cand("src/a.rs", *l, s, area, c))
        .collect();
    let a_decisions: Vec<Value> = A_FINDINGS
        .iter()
        .enumerate()
        .map(|(i, (l, s, _, c))| verified(i, "src/a.rs", *l, s, c))
        .collect();
    let receipt = |path: &str, candidates: Vec<Value>| {
        json!({"candidates": candidates, "coverage": {"complete": true, "reviewedFiles": [path]}, "summary": "scripted"}).to_string()
    };
    let stage = |who: &str, path: &str| {
        Match::all([
            Match::any_message_contains(who),
            Match::any_message_contains(path),
        ])
    };
    vec![
        Rule::when(stage(INVESTIGATOR, "src/a.rs"))
            .named("a-investigator")
            .always(Reply::content(receipt("src/a.rs", a_candidates))),
        Rule::when(stage(VERIFIER, "src/a.rs"))
            .named("a-verifier")
            .always(Reply::content(json!({"decisions": a_decisions}).to_string())),
        Rule::when(stage(INVESTIGATOR, "src/b.rs"))
            .named("b-investigator")
            .always(Reply::content(receipt(
                "src/b.rs",
                vec![cand("src/b.rs", 5, "critical", "security", "the query is built from user input")],
            ))),
        Rule::when(stage(VERIFIER, "src/b.rs")).named("b-verifier").always(Reply::content(
            json!({"decisions": [verified(0, "src/b.rs", 5, "critical", "the query is built from user input")]})
                .to_string(),
        )),
        Rule::when(stage(INVESTIGATOR, "src/c.rs"))
            .named("c-investigator")
            .always(Reply::status(400)),
    ]
}

/// Judge: "same issue" only for the two pairs that are; "no" otherwise.
fn judge_script() -> Script {
    let yes = json!({"same_issue": true, "reason": "same defect"}).to_string();
    let no = json!({"same_issue": false, "reason": "different"}).to_string();
    let pair = |golden: &str, claim: &str| {
        Match::all([Match::user_contains(golden), Match::user_contains(claim)])
    };
    Script::new()
        .rule(
            Rule::when(pair("passes 255", "the counter overflows at 255"))
                .named("yes-a")
                .always(Reply::content(yes.clone())),
        )
        .rule(
            Rule::when(pair("SQL injection", "built from user input"))
                .named("yes-b")
                .always(Reply::content(yes)),
        )
        .rule(
            Rule::when(Match::any())
                .named("no")
                .always(Reply::content(no)),
        )
}

fn cases(repo: &Path, revs: &[String; 4], with_c: bool) -> Value {
    let mut cases = vec![
        json!({"id": "a", "repo": repo, "base": revs[0], "head": revs[1], "prTitle": "Count items",
        "golden": [
            {"comment": "The counter overflows when it passes 255", "severity": "high", "category": "bug"},
            {"comment": "No test covers the overflow", "severity": "low", "category": "test_gap"}
        ]}),
        json!({"id": "b", "repo": repo, "base": revs[1], "head": revs[2],
               "golden": [{"comment": "The lookup concatenates user input into SQL (SQL injection)", "severity": "Critical", "category": "security", "path": "src/b.rs", "line": 5}]}),
    ];
    if with_c {
        cases.push(json!({"id": "c", "repo": repo, "base": revs[2], "head": revs[3],
                          "golden": [{"comment": "x is unused", "severity": "low", "category": "style"}]}));
    }
    Value::Array(cases)
}

/// The two-case change (without c) written as `cases.json` in a fresh folder; the
/// repository lives as long as the first value.
fn written_cases() -> (TestRepo, tempfile::TempDir, String) {
    let (repo, revs) = repo();
    let dir = tempfile::tempdir().unwrap();
    let cases = write_cases(dir.path(), "cases.json", &cases(repo.path(), &revs, false));
    (repo, dir, cases)
}

/// The scripted reviewer and judge.
async fn servers() -> (ScriptedServer, ScriptedServer) {
    (
        ScriptedServer::start(reviewer_script()).await,
        ScriptedServer::start(judge_script()).await,
    )
}

fn write_cases(dir: &Path, name: &str, cases: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(cases).unwrap()).unwrap();
    path.display().to_string()
}

fn manifest() -> String {
    workspace()
        .join("tests/data/e2e/minimal.toml")
        .display()
        .to_string()
}

/// `vouch eval` with the reviewer and judge servers, `extra` flags appended.
async fn eval(
    cases: &str,
    reviewer: &ScriptedServer,
    judge: &ScriptedServer,
    out: &Path,
    extra: &[&str],
) -> vouch_workspace_tests::Output {
    eval_env(cases, reviewer, judge, out, extra, &[]).await
}

/// [`eval`] with `envs` set for the process.
async fn eval_env(
    cases: &str,
    reviewer: &ScriptedServer,
    judge: &ScriptedServer,
    out: &Path,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> vouch_workspace_tests::Output {
    let manifest = manifest();
    let reviewer_url = reviewer.base_url();
    let judge_url = judge.base_url();
    let out = out.display().to_string();
    let mut args = vec![
        "eval",
        "--cases",
        cases,
        "--manifest",
        &manifest,
        "--base-url",
        &reviewer_url,
        "--model",
        "scripted",
        "--judge-base-url",
        &judge_url,
        "--judge-model",
        "judge",
        "--beta",
        "2",
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    run_vouch(&args, envs).await
}

fn results(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

fn close(value: &Value, expected: f64) {
    let got = value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"));
    assert!((got - expected).abs() < 1e-9, "{got} != {expected}");
}

#[tokio::test(flavor = "multi_thread")]
async fn three_case_eval_scores_match_the_hand_computation() {
    let (repo, revs) = repo();
    let dir = tempfile::tempdir().unwrap();
    let cases = write_cases(dir.path(), "cases.json", &cases(repo.path(), &revs, true));
    let reviewer = ScriptedServer::start(reviewer_script()).await;
    let judge = ScriptedServer::start(judge_script()).await;
    let cache = dir.path().join("cache").display().to_string();
    let out = dir.path().join("out");
    let run = eval(&cases, &reviewer, &judge, &out, &["--cache", &cache]).await;
    assert_eq!(
        run.code, 2,
        "case c is not scored\n{}\n{}",
        run.stdout, run.stderr
    );
    let r = results(&out);
    // The table a person reads (shown with --nocapture).
    println!("{}", run.stdout);
    assert_eq!(r["schemaVersion"], "vouch.eval-results/1");
    let case = |id: &str| {
        r["runs"][0]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    // Case a: four findings, the two about the overflow grouped: 3 groups. Golden: the
    // overflow (matched) and the missing test (missed); the other two groups are false.
    let a = case("a");
    assert_eq!(
        (
            a["status"].as_str(),
            a["findings"].as_u64(),
            a["groups"].as_u64()
        ),
        (Some("scored"), Some(4), Some(3)),
        "{a:#}"
    );
    assert_eq!(
        a["counts"]["profiles"]["all"],
        json!({"tp": 1, "fp": 2, "fn": 1})
    );
    assert_eq!(a["cost"]["judgeQuestions"], 6, "3 groups x 2 comments");
    // Two chat requests plus the endpoint check's model list: every request sent counts.
    assert_eq!(a["cost"]["reviewCalls"], 3);
    // Case b: one finding, matched by the judge and by location.
    let b = case("b");
    assert_eq!(
        b["counts"]["profiles"]["all"],
        json!({"tp": 1, "fp": 0, "fn": 0})
    );
    assert_eq!(b["location"], json!({"tp": 1, "fp": 0, "fn": 0}));
    assert_eq!(b["cost"]["judgeQuestions"], 1);
    // Case c: the review is incomplete: not scored, not zero findings.
    let c = case("c");
    assert_eq!(
        (c["status"].as_str(), c["outcome"].as_str()),
        (Some("incomplete"), Some("incomplete"))
    );
    assert_eq!(c["counts"], Value::Null);
    let overall = &r["runs"][0]["overall"];
    assert_eq!(overall["notScored"], json!(["c"]));
    assert_eq!(
        overall["grouped"], 1,
        "the second overflow finding joined the first"
    );
    assert_eq!(
        (overall["cases"].as_u64(), overall["scored"].as_u64()),
        (Some(3), Some(2))
    );
    // By hand, profile all: TP 2 (a's overflow, b's injection), FP 2, FN 1.
    // P = 2/4, R = 2/3, F1 = 2PR/(P+R) = 4/7, F2 = 5·2 / (5·2 + 4·1 + 2) = 10/16.
    let all = &overall["profiles"]["all"];
    assert_eq!(
        (all["tp"].as_u64(), all["fp"].as_u64(), all["fn"].as_u64()),
        (Some(2), Some(2), Some(1))
    );
    close(&all["precision"], 0.5);
    close(&all["recall"], 2.0 / 3.0);
    close(&all["f1"], 4.0 / 7.0);
    close(&all["fBeta"], 10.0 / 16.0);
    // Strict: the test gap and the resources finding are out: TP 2, FP 1, FN 0.
    let strict = &overall["profiles"]["strict"];
    assert_eq!(
        (
            strict["tp"].as_u64(),
            strict["fp"].as_u64(),
            strict["fn"].as_u64()
        ),
        (Some(2), Some(1), Some(0))
    );
    close(&strict["precision"], 2.0 / 3.0);
    close(&strict["recall"], 1.0);
    // Core adds the test gap (missed) and the resources finding (false).
    assert_eq!(overall["profiles"]["core"]["tp"], 2);
    assert_eq!(overall["profiles"]["core"]["fp"], 2);
    assert_eq!(overall["profiles"]["core"]["fn"], 1);
    // Severities: high overflow found; low test gap missed and low finding false.
    assert_eq!(
        overall["severities"]["high"],
        json!({"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0, "fBeta": 1.0})
    );
    assert_eq!(overall["severities"]["low"]["fp"], 1);
    assert_eq!(overall["severities"]["low"]["fn"], 1);
    assert_eq!(overall["locationCases"], 1);
    // The judge was asked about each plausible pair once; case c never reached it.
    assert_eq!(judge.chat_requests().len(), 7);
    assert_eq!(judge.served_by("yes-a").len(), 1);
    // Markdown on stdout and in summary.md; CSV beside them.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert_eq!(
        run.stdout
            .trim_end()
            .trim_end_matches(&format!("Results written to {}", out.display()))
            .trim_end(),
        md.trim_end()
    );
    assert!(
        md.contains("| a | scored | 2 | 4 | 3 | 1 | 2 | 1 | 0.333 | 0.500 | 0.400 | 0.455 |"),
        "{md}"
    );
    assert!(
        md.contains("| all | 2 | 2 | 1 | 0.500 | 0.667 | 0.571 | 0.625 |"),
        "{md}"
    );
    assert!(
        md.contains("Not scored (incomplete or failed, left out of every figure): c."),
        "{md}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        csv.contains("1,(overall),scored,all,,,,2,2,1,0.500000,0.666667,0.571429,0.625000"),
        "{csv}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn self_judging_is_refused_unless_allowed() {
    let (_repo, _dir, cases) = written_cases();
    let reviewer = ScriptedServer::start(reviewer_script()).await;
    let manifest = manifest();
    let url = reviewer.base_url();
    let out = run_vouch(
        &[
            "eval",
            "--cases",
            &cases,
            "--manifest",
            &manifest,
            "--base-url",
            &url,
            "--model",
            "scripted",
            "--judge-model",
            "Scripted",
            "--no-cache",
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("is the reviewer's model") && out.stdout.contains("--allow-self-judge"),
        "{}",
        out.stdout
    );
    assert!(
        reviewer.chat_requests().is_empty(),
        "nothing may be sent before the refusal"
    );
    // A specialist's own model counts as the reviewer too.
    let own = workspace()
        .join("tests/data/e2e/own-model.toml")
        .display()
        .to_string();
    let out = run_vouch(
        &[
            "eval",
            "--cases",
            &cases,
            "--manifest",
            &own,
            "--base-url",
            &url,
            "--model",
            "scripted",
            "--judge-model",
            "investigator-model",
            "--no-cache",
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("(\"investigator-model\")"),
        "{}",
        out.stdout
    );
    assert!(reviewer.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn second_run_is_answered_from_the_cache() {
    let (_repo, dir, cases) = written_cases();
    let (reviewer, judge) = servers().await;
    let cache = dir.path().join("cache").display().to_string();
    let first = eval(
        &cases,
        &reviewer,
        &judge,
        &dir.path().join("one"),
        &["--cache", &cache],
    )
    .await;
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let (sent_reviewer, sent_judge) = (reviewer.chat_requests().len(), judge.chat_requests().len());
    assert_eq!((sent_reviewer, sent_judge), (4, 7));
    let http_before = reviewer.request_count() + judge.request_count();
    let second = eval(
        &cases,
        &reviewer,
        &judge,
        &dir.path().join("two"),
        &["--cache", &cache],
    )
    .await;
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(
        reviewer.chat_requests().len(),
        sent_reviewer,
        "the reviewer was asked again"
    );
    assert_eq!(
        judge.chat_requests().len(),
        sent_judge,
        "the judge was asked again"
    );
    let (one, two) = (
        results(&dir.path().join("one")),
        results(&dir.path().join("two")),
    );
    assert_eq!(
        one["runs"][0]["overall"]["profiles"],
        two["runs"][0]["overall"]["profiles"]
    );
    // Only the reviews' endpoint checks went over HTTP; every answer was cached.
    let http = reviewer.request_count() + judge.request_count() - http_before;
    assert_eq!(two["runs"][0]["overall"]["cost"]["sent"], http);
    assert_eq!(two["runs"][0]["overall"]["cost"]["cacheHits"], 11);
    // --no-cache sends everything again.
    let third = eval(
        &cases,
        &reviewer,
        &judge,
        &dir.path().join("three"),
        &["--no-cache"],
    )
    .await;
    assert_eq!(third.code, 0, "{}", third.stdout);
    assert_eq!(reviewer.chat_requests().len(), 2 * sent_reviewer);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_share_one_cache() {
    let (_repo, dir, cases) = written_cases();
    let (reviewer, judge) = servers().await;
    let cache = dir.path().join("cache").display().to_string();
    let (out_one, out_two) = (dir.path().join("one"), dir.path().join("two"));
    let flags = ["--cache", cache.as_str()];
    let (one, two) = tokio::join!(
        eval(&cases, &reviewer, &judge, &out_one, &flags),
        eval(&cases, &reviewer, &judge, &out_two, &flags),
    );
    assert_eq!(
        (one.code, two.code),
        (0, 0),
        "{}\n{}\n{}\n{}",
        one.stdout,
        one.stderr,
        two.stdout,
        two.stderr
    );
    let (a, b) = (
        results(&dir.path().join("one")),
        results(&dir.path().join("two")),
    );
    assert_eq!(
        a["runs"][0]["overall"]["profiles"],
        b["runs"][0]["overall"]["profiles"]
    );
    // Every entry is whole JSON (written through a temporary file and a rename), and a
    // third run needs no request at all.
    for shard in std::fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .flatten()
    {
        for entry in std::fs::read_dir(shard.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(
                serde_json::from_str::<Value>(&text).is_ok(),
                "{}",
                entry.path().display()
            );
        }
    }
    let sent = (reviewer.chat_requests().len(), judge.chat_requests().len());
    let three = eval(
        &cases,
        &reviewer,
        &judge,
        &dir.path().join("three"),
        &["--cache", &cache],
    )
    .await;
    assert_eq!(three.code, 0);
    assert_eq!(
        (reviewer.chat_requests().len(), judge.chat_requests().len()),
        sent
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_eval_resumes_from_its_cached_calls() {
    let (_repo, dir, cases) = written_cases();
    // Case b's first investigator request never answers in time: the process is killed
    // while it waits. Later requests get the normal replies.
    let stalled = Rule::when(Match::all([
        Match::any_message_contains(INVESTIGATOR),
        Match::any_message_contains("src/b.rs"),
    ]))
    .named("b-stalled")
    .reply(Reply::content("late").delay(std::time::Duration::from_secs(600)));
    let script = std::iter::once(stalled)
        .chain(reviewer_rules())
        .fold(Script::new(), Script::rule);
    let reviewer = ScriptedServer::start(script).await;
    let judge = ScriptedServer::start(judge_script()).await;
    let cache = dir.path().join("cache").display().to_string();
    let manifest = manifest();
    let (reviewer_url, judge_url) = (reviewer.base_url(), judge.base_url());
    let mut child = spawn_eval(
        [&cases, &manifest, &reviewer_url, &judge_url, &cache],
        &[],
        std::process::Stdio::null(),
    );
    // Wait (bounded by the test harness, not by a clock) until case b is under way.
    while reviewer.served_by("b-stalled").is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("eval ended before case b: {status}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child.kill().await.unwrap();
    let judged = judge.chat_requests().len();
    assert_eq!(judged, 6, "case a was judged before the interruption");
    assert_eq!(reviewer.served_by("a-investigator").len(), 1);
    // Resume: case a costs nothing, case b is done now.
    let out = dir.path().join("out");
    let resumed = eval(&cases, &reviewer, &judge, &out, &["--cache", &cache]).await;
    assert_eq!(resumed.code, 0, "{}\n{}", resumed.stdout, resumed.stderr);
    assert_eq!(
        reviewer.served_by("a-investigator").len(),
        1,
        "case a was reviewed again"
    );
    assert_eq!(
        reviewer.served_by("a-verifier").len(),
        1,
        "case a was verified again"
    );
    assert_eq!(reviewer.served_by("b-investigator").len(), 1);
    assert_eq!(
        judge.chat_requests().len(),
        judged + 1,
        "only case b's question is new"
    );
    let r = results(&out);
    assert_eq!(r["runs"][0]["overall"]["profiles"]["all"]["tp"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn clean_changes_count_every_finding_as_false_and_need_no_judge() {
    let (repo, revs) = repo();
    let dir = tempfile::tempdir().unwrap();
    let clean = json!([{"id": "clean-b", "repo": repo.path(), "base": revs[1], "head": revs[2], "golden": []}]);
    let cases = write_cases(dir.path(), "cases.json", &clean);
    let reviewer = ScriptedServer::start(reviewer_script()).await;
    let manifest = manifest();
    let url = reviewer.base_url();
    let out_dir = dir.path().join("out");
    let out = out_dir.display().to_string();
    let run = run_vouch(
        &[
            "eval",
            "--cases",
            &cases,
            "--manifest",
            &manifest,
            "--base-url",
            &url,
            "--model",
            "scripted",
            "--no-cache",
            "--out",
            &out,
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let r = results(&out_dir);
    let overall = &r["runs"][0]["overall"];
    assert_eq!(overall["profiles"]["all"]["fp"], 1);
    assert_eq!(overall["profiles"]["all"]["tp"], 0);
    // src/b.rs: one line replaced = 1 added + 1 removed.
    assert_eq!(
        overall["clean"],
        json!({"changes": 1, "findings": 1, "changedLines": 2, "perChange": 1.0, "perChangedLine": 0.5})
    );
    assert_eq!(r["config"]["judgeModel"], Value::Null);
    assert!(
        run.stdout
            .contains("Clean changes: 1 finding(s) on 1 change(s)"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn repeated_runs_report_mean_and_spread() {
    let (_repo, dir, cases) = written_cases();
    let (reviewer, judge) = servers().await;
    let cache = dir.path().join("cache").display().to_string();
    let out = dir.path().join("out");
    let run = eval(
        &cases,
        &reviewer,
        &judge,
        &out,
        &["--cache", &cache, "--repeat", "2"],
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Each run asks anew (its own cache namespace).
    assert_eq!(reviewer.chat_requests().len(), 8);
    let r = results(&out);
    assert_eq!(r["runs"].as_array().unwrap().len(), 2);
    let p = &r["summary"]["all"]["precision"];
    assert_eq!(p["runs"], 2);
    close(&p["mean"], 0.5);
    close(&p["stdDev"], 0.0);
    assert!(
        run.stdout.contains("## Over 2 runs (mean ± sd)"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_the_eval_without_writing_results() {
    let (_repo, dir, cases) = written_cases();
    let stalled = Rule::when(Match::all([
        Match::any_message_contains(INVESTIGATOR),
        Match::any_message_contains("src/b.rs"),
    ]))
    .named("b-stalled")
    .always(Reply::content("late").delay(std::time::Duration::from_secs(600)));
    let script = std::iter::once(stalled)
        .chain(reviewer_rules())
        .fold(Script::new(), Script::rule);
    let reviewer = ScriptedServer::start(script).await;
    let judge = ScriptedServer::start(judge_script()).await;
    let (manifest, reviewer_url, judge_url) = (manifest(), reviewer.base_url(), judge.base_url());
    let out = dir.path().join("out");
    let (cache, out_arg) = (
        dir.path().join("cache").display().to_string(),
        out.display().to_string(),
    );
    let child = spawn_eval(
        [&cases, &manifest, &reviewer_url, &judge_url, &cache],
        &["--out", &out_arg],
        std::process::Stdio::piped(),
    );
    while reviewer.served_by("b-stalled").is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    assert!(
        stdout.contains("nothing was written") && stdout.contains("resume"),
        "{stdout}"
    );
    assert!(
        !out.join("results.json").exists(),
        "partial results were written"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn public_benchmark_files_run_through_the_checkout_mapping() {
    let (repo, revs) = repo();
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden.json");
    std::fs::write(
        &golden,
        json!([{"pr_title": "Look items up", "url": "https://example.invalid/o/r/pull/7",
                "comments": [{"comment": "The lookup concatenates user input into SQL (SQL injection)", "severity": "Critical"}]}])
        .to_string(),
    )
    .unwrap();
    let mapping = dir.path().join("checkouts.json");
    std::fs::write(
        &mapping,
        json!({"https://example.invalid/o/r/pull/7": {"repo": repo.path(), "base": revs[1], "head": revs[2]}}).to_string(),
    )
    .unwrap();
    let reviewer = ScriptedServer::start(reviewer_script()).await;
    let judge = ScriptedServer::start(judge_script()).await;
    let (manifest, reviewer_url, judge_url) = (manifest(), reviewer.base_url(), judge.base_url());
    let out = dir.path().join("out");
    let (golden, mapping, out_arg) = (
        golden.display().to_string(),
        mapping.display().to_string(),
        out.display().to_string(),
    );
    let run = run_vouch(
        &[
            "eval",
            "--benchmark",
            &golden,
            "--checkouts",
            &mapping,
            "--manifest",
            &manifest,
            "--base-url",
            &reviewer_url,
            "--model",
            "scripted",
            "--judge-base-url",
            &judge_url,
            "--judge-model",
            "judge",
            "--no-cache",
            "--out",
            &out_arg,
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let r = results(&out);
    let case = &r["runs"][0]["cases"][0];
    assert_eq!(case["id"], "https://example.invalid/o/r/pull/7");
    assert_eq!(
        case["counts"]["profiles"]["strict"],
        json!({"tp": 1, "fp": 0, "fn": 0})
    );
    // No category in the benchmark: the comment counts as a bug, so strict holds it.
    assert_eq!(r["runs"][0]["overall"]["profiles"]["strict"]["tp"], 1);
}

/// Starts `vouch eval` on `[cases, manifest, reviewer URL, judge URL, cache]` (model
/// `scripted`, judge model `judge`) plus `extra` arguments, in CI mode, stderr discarded.
fn spawn_eval(
    [cases, manifest, reviewer_url, judge_url, cache]: [&str; 5],
    extra: &[&str],
    stdout: std::process::Stdio,
) -> tokio::process::Child {
    tokio::process::Command::new(vouch_bin())
        .args([
            "eval",
            "--cases",
            cases,
            "--manifest",
            manifest,
            "--base-url",
            reviewer_url,
            "--model",
            "scripted",
            "--judge-base-url",
            judge_url,
            "--judge-model",
            "judge",
            "--cache",
            cache,
        ])
        .args(extra)
        .env("CI", "true")
        .stdout(stdout)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// One change to src/a.rs, lines 31, 33, 35 and 37; the reviewer verifies one true
/// finding (line 31) and three distinct ones 2 lines apart; the judge says "same issue"
/// only when both texts speak of an overflow.
async fn spaced_findings() -> (TestRepo, [String; 2], ScriptedServer, ScriptedServer) {
    let repo = TestRepo::new();
    repo.write("src/a.rs", lines(40, &[]));
    let base = repo.commit("start");
    let changed: Vec<(u32, &str)> = [31, 33, 35, 37]
        .map(|l| (l, "let w = v1 * 1_000_000;"))
        .to_vec();
    repo.write("src/a.rs", lines(40, &changed));
    let head = repo.commit("scale");
    let findings = [
        (31, "the product overflows u32"),
        (33, "the name w is unclear"),
        (35, "the constant is duplicated"),
        (37, "the line lacks a comment"),
    ];
    let candidates: Vec<Value> = findings
        .iter()
        .map(|(l, c)| cand("src/a.rs", *l, "high", "correctness", c))
        .collect();
    let decisions: Vec<Value> = findings
        .iter()
        .enumerate()
        .map(|(i, (l, c))| verified(i, "src/a.rs", *l, "high", c))
        .collect();
    let receipt = json!({"candidates": candidates, "coverage": {"complete": true, "reviewedFiles": ["src/a.rs"]}, "summary": "scripted"});
    let reviewer = Script::new()
        .rule(
            Rule::when(Match::any_message_contains(INVESTIGATOR))
                .always(Reply::content(receipt.to_string())),
        )
        .rule(
            Rule::when(Match::any_message_contains(VERIFIER))
                .always(Reply::content(json!({"decisions": decisions}).to_string())),
        );
    let yes = json!({"same_issue": true, "reason": "same defect"}).to_string();
    let no = json!({"same_issue": false, "reason": "different"}).to_string();
    let judge = Script::new()
        .rule(
            Rule::when(Match::all([
                Match::user_contains("overflows u32"),
                Match::user_contains("product overflows"),
            ]))
            .named("yes")
            .always(Reply::content(yes)),
        )
        .rule(Rule::when(Match::any()).always(Reply::content(no)));
    (
        repo,
        [base, head],
        ScriptedServer::start(reviewer).await,
        ScriptedServer::start(judge).await,
    )
}

fn spaced_case(repo: &TestRepo, revs: &[String; 2], path: &str) -> Value {
    json!([{"id": "spaced", "repo": repo.path(), "base": revs[0], "head": revs[1],
            "golden": [{"comment": "f30 overflows u32", "severity": "high", "path": path, "line": 31}]}])
}

/// The results of the one spaced case (its golden comment at `path`), run without a
/// cache into `dir/out`; the run must succeed.
async fn eval_spaced(
    dir: &tempfile::TempDir,
    repo: &TestRepo,
    revs: &[String; 2],
    [reviewer, judge]: [&ScriptedServer; 2],
    path: &str,
) -> Value {
    let cases = write_cases(dir.path(), "cases.json", &spaced_case(repo, revs, path));
    let out = dir.path().join("out");
    let run = eval(&cases, reviewer, judge, &out, &["--no-cache"]).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    results(&out)["runs"][0]["cases"][0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn distinct_findings_two_lines_apart_do_not_chain_into_one_group() {
    let (repo, revs, reviewer, judge) = spaced_findings().await;
    let dir = tempfile::tempdir().unwrap();
    let case = &eval_spaced(&dir, &repo, &revs, [&reviewer, &judge], "src/a.rs").await;
    // Lines 31+33 lie within the 3-line window of each other, and 35+37; 31 and 35 do
    // not, so the four findings are two groups, not one chain spanning 7 lines.
    assert_eq!(
        (case["findings"].as_u64(), case["groups"].as_u64()),
        (Some(4), Some(2)),
        "{case:#}"
    );
    assert_eq!(
        case["counts"]["profiles"]["all"],
        json!({"tp": 1, "fp": 1, "fn": 0})
    );
    assert_eq!(case["location"], json!({"tp": 1, "fp": 1, "fn": 0}));
}

#[tokio::test(flavor = "multi_thread")]
async fn golden_paths_are_normalised_or_refused_naming_the_case() {
    let (repo, revs, reviewer, judge) = spaced_findings().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let case = &eval_spaced(&dir, &repo, &revs, [&reviewer, &judge], "./src/a.rs").await;
    // `./src/a.rs` is src/a.rs: the judge is asked about both groups and matches one.
    assert_eq!(case["cost"]["judgeQuestions"], 2, "{case:#}");
    assert_eq!(judge.served_by("yes").len(), 1);
    assert_eq!(
        case["counts"]["profiles"]["all"],
        json!({"tp": 1, "fp": 1, "fn": 0})
    );
    assert_eq!(case["location"], json!({"tp": 1, "fp": 1, "fn": 0}));
    let sent = reviewer.chat_requests().len();
    for (path, reason) in [
        ("src/other.rs", "is not a file of the case's change"),
        ("../a.rs", "is not a repository path"),
    ] {
        let cases = write_cases(dir.path(), "bad.json", &spaced_case(&repo, &revs, path));
        let run = eval(&cases, &reviewer, &judge, &out, &["--no-cache"]).await;
        assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
        let named = format!("case \"spaced\": golden path {path:?} {reason}");
        assert!(run.stdout.contains(&named), "{named}\n{}", run.stdout);
        assert_eq!(reviewer.chat_requests().len(), sent, "nothing is reviewed");
    }
}

// What a run costs, as `sent`, `cacheHits` and `reviewCalls` say it, with and without
// the response cache.

#[tokio::test(flavor = "multi_thread")]
async fn no_cache_reports_every_request_as_sent() {
    let (_repo, dir, cases) = written_cases();
    let (reviewer, judge) = servers().await;
    let out = dir.path().join("out");
    let run = eval(&cases, &reviewer, &judge, &out, &["--no-cache"]).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let cost = &results(&out)["runs"][0]["overall"]["cost"];
    // Every request that went over HTTP: the reviews' (their endpoint checks included)
    // and the judge's.
    let sent = reviewer.request_count() + judge.request_count();
    assert_eq!(cost["cacheHits"], 0, "{cost}");
    assert_eq!(cost["sent"], sent, "{cost}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_short_api_key_does_not_disable_the_cache() {
    let (_repo, dir, cases) = written_cases();
    let (reviewer, judge) = servers().await;
    let cache = dir.path().join("cache").display().to_string();
    let key = [("OPENAI_API_KEY", "x")];
    for run in ["one", "two"] {
        let out = dir.path().join(run);
        let done = eval_env(&cases, &reviewer, &judge, &out, &["--cache", &cache], &key).await;
        assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    }
    assert_eq!(
        (reviewer.chat_requests().len(), judge.chat_requests().len()),
        (4, 7),
        "the second run was not answered from the cache"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn review_calls_count_cached_answers_too() {
    let (_repo, dir, cases) = written_cases();
    let (reviewer, judge) = servers().await;
    let cache = dir.path().join("cache").display().to_string();
    let mut calls = Vec::new();
    for run in ["one", "two"] {
        let out = dir.path().join(run);
        let done = eval(&cases, &reviewer, &judge, &out, &["--cache", &cache]).await;
        assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
        calls.push(results(&out)["runs"][0]["overall"]["cost"]["reviewCalls"].clone());
    }
    assert_eq!(reviewer.chat_requests().len(), 4, "run two was cached");
    assert_eq!(
        calls[0], calls[1],
        "reviewCalls of the first and the cached run"
    );
}
