//! Budgets from the model's window (issue 28 item 6): the window the endpoint states
//! sizes the requests and shards of every stage, an explicit `[model] context_tokens`
//! wins over it, the report says which window it used and where it came from, cached
//! prompt tokens are counted, and the shards of a lane share one stable prefix.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{
    Dialect, Match, RecordedRequest, Reply, Rule, Script, ScriptedServer, ServedBy,
};
use vouch_workspace_tests::{ScriptedReview, candidates_reply, expected_list};

const GENERIC: &str = "generic-investigator #1";

/// A model that reviews instantly and perfectly, saying that `cached` of its 1,000
/// prompt tokens came from its prompt cache.
fn perfect(cached: u64) -> Reply {
    Reply::computed(move |body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        Reply::content(candidates_reply(json!([]), true, &paths))
            .with_usage(1_000, 10)
            .with_cached_tokens(cached)
    })
}

fn lines(word: &str, n: usize) -> String {
    (1..=n)
        .map(|i| format!("{word} line {i:04} of a file that is long enough to matter here\n"))
        .collect()
}

/// A change of 40 text files of 40 lines, each with 19 lines rewritten (760 changed
/// lines, as the issue's real-code fixture).
fn forty_files() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    let path = |f: usize| format!("src/mod{:02}/file{f:02}.txt", f / 10);
    for f in 0..40 {
        repo.write(&path(f), lines("old", 40));
    }
    let base = repo.commit("base");
    for f in 0..40 {
        let mut text = lines("old", 40);
        for i in 11..=29 {
            text = text.replace(&format!("old line {i:04}"), &format!("NEW line {i:04}"));
        }
        repo.write(&path(f), text);
    }
    let head = repo.commit("rewrite lines everywhere");
    (repo, base, head)
}

fn lane_labels(report: &Value, lane: &str) -> Vec<String> {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["label"].as_str())
        .filter(|l| l.starts_with(lane))
        .map(str::to_string)
        .collect()
}

/// The instance label a request names (`Instance: …` line of its first user turn).
fn label(request: &RecordedRequest) -> Option<String> {
    let user = request.contents_of("user").into_iter().next()?;
    let line = user.lines().find(|l| l.starts_with("Instance: "))?;
    Some(line["Instance: ".len()..].to_string())
}

/// At a 128k window stated by a vLLM server, each lane takes the 40-file change in one
/// execution; at the default window (a server that states none) the same change runs
/// as shards, as before. The report names the window and its source.
#[tokio::test(flavor = "multi_thread")]
async fn a_128k_window_the_endpoint_states_runs_each_lane_in_one_execution() {
    let (repo, base, head) = forty_files();
    let script = || Script::new().rule(Rule::when(Match::any()).always(perfect(0)));
    let vllm = ScriptedServer::start_as(
        Dialect::Vllm { key: None },
        &["scripted"],
        script().context_window(131_072),
    )
    .await;
    let report = ScriptedReview::new(&repo, &base, &head, &vllm)
        .run()
        .await
        .json();
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(
        report["contextWindow"],
        json!({"tokens": 131_072, "source": "endpoint"})
    );
    assert_eq!(lane_labels(&report, GENERIC), [GENERIC], "one execution");
    let sharded = lane_labels(&report, "");
    assert!(
        !sharded.iter().any(|l| l.contains("[shard ")),
        "no lane runs as shards: {sharded:?}"
    );
    let largest = vllm.chat_requests().iter().map(|r| r.raw_body.len()).max();
    assert!(
        largest.unwrap() > 3 * 24_000,
        "a request larger than the 32k bound was sent: {largest:?}"
    );

    let generic = ScriptedServer::start(script()).await;
    let report = ScriptedReview::new(&repo, &base, &head, &generic)
        .run()
        .await
        .json();
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(
        report["contextWindow"],
        json!({"tokens": 32_768, "source": "default"})
    );
    let shards = lane_labels(&report, GENERIC);
    assert!(shards.len() > 1, "sharded at 32k: {shards:?}");
    let largest = generic
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.len())
        .max();
    assert!(largest.unwrap() <= 3 * 24_000, "{largest:?}");
}

/// `[model] context_tokens` wins over the window the endpoint states (here a smaller
/// one, so the lane runs as shards again), and the report says it came from the
/// manifest.
#[tokio::test(flavor = "multi_thread")]
async fn the_manifest_window_wins_over_the_endpoint() {
    let (repo, base, head) = forty_files();
    let script = Script::new()
        .rule(Rule::when(Match::any()).always(perfect(0)))
        .context_window(131_072);
    let vllm = vllm(script).await;
    let report = ScriptedReview::new(&repo, &base, &head, &vllm)
        .manifest("tests/data/e2e/window-32k.toml")
        .run()
        .await
        .json();
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert_eq!(
        report["contextWindow"],
        json!({"tokens": 32_768, "source": "manifest"})
    );
    assert!(lane_labels(&report, GENERIC).len() > 1, "{report:#}");
}

/// Every reply's `usage.prompt_tokens_details.cached_tokens` is summed into the stages'
/// and the report's usage.
#[tokio::test(flavor = "multi_thread")]
async fn cached_prompt_tokens_are_reported() {
    let (repo, base, head) = forty_files();
    let server =
        ScriptedServer::start(Script::new().rule(Rule::when(Match::any()).always(perfect(600))))
            .await;
    let report = ScriptedReview::new(&repo, &base, &head, &server)
        .run()
        .await
        .json();
    let served = server
        .chat_requests()
        .iter()
        .filter(|r| matches!(r.served_by, ServedBy::Rule { .. }))
        .count() as u64;
    assert!(served > 1);
    let stages: u64 = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["usage"]["cachedPromptTokens"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(report["usage"]["cachedPromptTokens"], json!(stages));
    assert_eq!(stages, 600 * served, "{report:#}");
}

/// The shards of one lane send one stable prefix: the same tools and output contract,
/// and the same leading messages up to the first one that carries shard-specific text,
/// so a provider's prompt cache serves it to every shard after the first. The shards
/// here hold different numbers of files, so the contract is the same only because each
/// shard asks with its lane's receipt bound.
#[tokio::test(flavor = "multi_thread")]
async fn the_shards_of_a_lane_share_a_stable_prefix() {
    let (repo, base, head) = forty_files();
    let server =
        ScriptedServer::start(Script::new().rule(Rule::when(Match::any()).always(perfect(0))))
            .await;
    ScriptedReview::new(&repo, &base, &head, &server)
        .args(&["--concurrency", "1"])
        .run()
        .await;
    let shards: Vec<RecordedRequest> = server
        .chat_requests()
        .into_iter()
        .filter(|r| label(r).is_some_and(|l| l.starts_with(&format!("{GENERIC} [shard "))))
        .collect();
    assert!(shards.len() >= 2, "the lane ran as shards");
    let (a, b) = (&shards[0].body, &shards[shards.len() - 1].body);
    for field in ["tools", "response_format", "model", "max_tokens"] {
        assert_eq!(a.get(field), b.get(field), "{field}");
    }
    let (ma, mb) = (
        a["messages"].as_array().unwrap(),
        b["messages"].as_array().unwrap(),
    );
    let first_different = ma.iter().zip(mb).position(|(x, y)| x != y).unwrap();
    assert!(first_different >= 1, "the system prompt is the same");
    assert_eq!(ma[0]["role"], "system");
    // The first message that differs starts with the same text up to what names
    // the shard: its common prefix with the other shard's holds no shard-specific text.
    let (ta, tb) = (
        ma[first_different]["content"].as_str().unwrap(),
        mb[first_different]["content"].as_str().unwrap(),
    );
    let common = ta
        .char_indices()
        .zip(tb.chars())
        .find(|((_, x), y)| x != y)
        .map_or(ta.len(), |((i, _), _)| i);
    let stable = &ta[..common];
    assert!(!stable.contains("<expected-files>"), "{stable}");
    assert!(!stable.contains("<patch path="), "{stable}");
    // What the prefix holds: the tools section, the output contract, the policy
    // evidence and the task; the shard's own text starts at its instance line.
    assert!(stable.starts_with("## Repository tools"), "{stable}");
    for part in [
        "## Output contract",
        "## Repository policy evidence",
        "## Task",
    ] {
        assert!(stable.contains(part), "{part} in the prefix:\n{stable}");
    }
    let last = stable.lines().last().unwrap_or_default();
    assert!(last.starts_with("Instance: "), "{last}");
    // The answer reminder ends every message.
    assert!(ta.ends_with(vouch_host::policy::ANSWER_REMINDER), "{ta}");
}

async fn config_show(args: &[&str], config: &str) -> String {
    let mut full = vec!["config", "show"];
    full.extend_from_slice(args);
    let out = vouch_workspace_tests::run_vouch(&full, &[("VOUCH_CONFIG", config)]).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    out.stdout
}

fn line<'a>(shown: &'a str, key: &str) -> &'a str {
    shown
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} line in:\n{shown}"))
}

/// `vouch config show` prints the window and where it came from: the default (with how
/// to ask the endpoint), the endpoint's with `--ask-endpoint`, the manifest's, the
/// profile's; and marks the budget keys derived from it.
#[tokio::test(flavor = "multi_thread")]
async fn config_show_names_the_window_and_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("none.toml");
    std::fs::write(&none, "").unwrap();
    let none = none.display().to_string();
    let vllm = ScriptedServer::start_as(
        Dialect::Vllm { key: None },
        &["served"],
        Script::new().context_window(131_072),
    )
    .await;
    let endpoint = ["--base-url", &vllm.base_url(), "--model", "served"].map(str::to_owned);
    let endpoint: Vec<&str> = endpoint.iter().map(String::as_str).collect();

    let out = config_show(&endpoint, &none).await;
    assert!(
        line(&out, "context_tokens").starts_with("context_tokens = 32768  # default;"),
        "{out}"
    );
    assert_eq!(
        line(&out, "max_request_tokens"),
        "max_request_tokens = 24000  # default"
    );
    assert!(
        vllm.requests().is_empty(),
        "nothing asked without --ask-endpoint"
    );

    let asked: Vec<&str> = endpoint.iter().copied().chain(["--ask-endpoint"]).collect();
    let out = config_show(&asked, &none).await;
    assert_eq!(
        line(&out, "context_tokens"),
        "context_tokens = 131072  # stated by the endpoint"
    );
    assert_eq!(
        line(&out, "max_request_tokens"),
        "max_request_tokens = 122000  # derived from context_tokens"
    );
    assert_eq!(
        line(&out, "max_shard_tokens"),
        "max_shard_tokens = 53000  # derived from context_tokens"
    );
    assert_eq!(
        line(&out, "max_output_tokens"),
        "max_output_tokens = 8192  # derived from context_tokens"
    );

    let manifest = vouch_workspace_tests::workspace()
        .join("tests/data/e2e/window-32k.toml")
        .display()
        .to_string();
    let with_manifest: Vec<&str> = asked
        .iter()
        .copied()
        .chain(["--manifest", &manifest])
        .collect();
    let out = config_show(&with_manifest, &none).await;
    assert_eq!(
        line(&out, "context_tokens"),
        "context_tokens = 32768  # manifest"
    );

    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        "profile = \"big\"\n[profiles.big]\ncontext_tokens = 65536\n",
    )
    .unwrap();
    let out = config_show(&with_manifest, &profile.display().to_string()).await;
    assert_eq!(
        line(&out, "context_tokens"),
        "context_tokens = 65536  # user config"
    );
    assert_eq!(
        line(&out, "max_shard_tokens"),
        "max_shard_tokens = 20000  # derived from context_tokens"
    );
}

/// A change of one 600-line file with every tenth line rewritten (60 hunks).
fn sixty_hunks() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/big.txt", lines("old", 600));
    let base = repo.commit("base");
    let mut text = lines("old", 600);
    for i in (5..=600).step_by(10) {
        text = text.replace(&format!("old line {i:04}"), &format!("NEW line {i:04}"));
    }
    repo.write("src/big.txt", text);
    let head = repo.commit("rewrite every tenth line");
    (repo, base, head)
}

/// A model that, before answering perfectly, reads its first expected file in 60-line
/// windows with `read_file`, one window a turn, eight times while it has tools: its
/// tool results fill its requests up to their bound.
fn reader() -> Reply {
    Reply::computed(|body| {
        let list = expected_list(body);
        let reads = body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        let tools = body["tools"].as_array().is_some_and(|t| !t.is_empty())
            && body["tool_choice"] != "none";
        match list.first() {
            Some(path) if tools && reads < 8 => {
                let start = 60 * reads + 1;
                Reply::tool_call(
                    "read_file",
                    json!({"path": path, "start_line": start, "end_line": start + 59}).to_string(),
                )
            }
            _ => {
                let paths: Vec<&str> = list.iter().map(String::as_str).collect();
                Reply::content(candidates_reply(json!([]), true, &paths))
            }
        }
    })
}

/// What a request asks of the window, in tokens: its body at the host's estimate of
/// three bytes per token (which errs large), plus the reply it asks for.
fn asked_tokens(request: &RecordedRequest) -> u64 {
    let reply = request.body["max_tokens"].as_u64().unwrap_or(0);
    (request.raw_body.len() as u64).div_ceil(3) + reply
}

/// The largest [`asked_tokens`] of `server`'s chat requests, with the request's
/// `max_tokens`.
fn largest_ask(server: &ScriptedServer) -> (u64, Value) {
    let requests = server.chat_requests();
    assert!(!requests.is_empty(), "the review sent requests");
    let largest = requests.iter().max_by_key(|r| asked_tokens(r)).unwrap();
    (asked_tokens(largest), largest.body["max_tokens"].clone())
}

/// A vLLM-style scripted server (it states the window `script` sets in `/v1/models`).
async fn vllm(script: Script) -> ScriptedServer {
    ScriptedServer::start_as(Dialect::Vllm { key: None }, &["scripted"], script).await
}

/// Reviews `base..head` of `repo` with the one-lane composition and `--tools off`
/// against a vLLM-style server answering by `script`.
async fn without_tools(
    repo: &TestRepo,
    (base, head): (&str, &str),
    script: Script,
) -> (ScriptedServer, vouch_workspace_tests::Output) {
    let server = vllm(script).await;
    let out = ScriptedReview::new(repo, base, head, &server)
        .manifest("tests/data/e2e/no-budget.toml")
        .args(&["--tools", "off"])
        .run()
        .await;
    (server, out)
}

/// Asserts that each of `requests` is at most `bytes` long.
fn assert_each_within(requests: &[RecordedRequest], bytes: usize, what: &str) {
    for request in requests {
        let len = request.raw_body.len();
        assert!(
            len <= bytes,
            "a {what} request of {len} bytes (bound {bytes})"
        );
    }
}

/// Asserts that no chat request of `server`, with the reply it asks for, passes a
/// `window`-token window.
fn assert_within_window(server: &ScriptedServer, window: u64) {
    let (asked, max_tokens) = largest_ask(server);
    assert!(
        asked <= window,
        "{asked} tokens asked of a {window}-token window (max_tokens {max_tokens})"
    );
}

/// With a 16k-token window — stated by a vLLM server, or set by `[model] context_tokens`
/// — a model whose tool reads fill every request to its bound still has each request's
/// size plus the `max_tokens` it asks for within the window (vLLM refuses a request that
/// is not), and the review completes. The replies follow the window (4,096 tokens).
#[tokio::test(flavor = "multi_thread")]
async fn at_a_16k_window_no_request_and_its_reply_exceed_the_window() {
    let (repo, base, head) = sixty_hunks();
    for manifest in [None, Some("tests/data/e2e/window-16k.toml")] {
        let script = Script::new()
            .rule(Rule::when(Match::any()).always(reader()))
            .context_window(16_384);
        let vllm = vllm(script).await;
        let mut review = ScriptedReview::new(&repo, &base, &head, &vllm).args(&["--tools", "on"]);
        if let Some(manifest) = manifest {
            review = review.manifest(manifest);
        }
        let out = review.run().await;
        let report = out.json();
        assert_eq!(out.code, 0, "{manifest:?}: {report:#}");
        assert_eq!(report["opinion"]["outcome"], "no-findings", "{report:#}");
        assert_eq!(report["contextWindow"]["tokens"], 16_384);
        let (asked, max_tokens) = largest_ask(&vllm);
        assert!(
            asked <= 16_384,
            "{manifest:?}: a request asks {asked} tokens (max_tokens {max_tokens}) of a \
             16,384-token window"
        );
        assert_eq!(max_tokens, 4_096, "{manifest:?}");
        assert!(
            asked > 16_384 - 2_000,
            "{manifest:?}: the reads filled a request to near its bound ({asked})"
        );
    }
}

/// At an 8k-token window the endpoint states, the default composition's stable prompt
/// with tools (about 6,500 tokens) leaves no room for the change under the 6,000-token
/// request bound: no lane can run, so the review is incomplete (exit 2), each lane a
/// `budget-too-small` failure naming fixes that can work, and no request is sent. With
/// tools off the same review runs and completes within the window, and with `--tools
/// auto` vouch reviews without tools itself and says so.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_lanes_that_cannot_run_make_the_review_incomplete() {
    let (repo, base, head) = forty_files();
    let start = || {
        let script = Script::new()
            .rule(Rule::when(Match::any()).always(perfect(0)))
            .context_window(8_192);
        ScriptedServer::start_as(Dialect::Vllm { key: None }, &["scripted"], script)
    };
    let vllm = start().await;
    let out = ScriptedReview::new(&repo, &base, &head, &vllm)
        .args(&["--tools", "on"])
        .run()
        .await;
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete", "{report:#}");
    assert_eq!(out.code, 2, "{report:#}");
    assert!(vllm.chat_requests().is_empty(), "no request was sent");
    let failures = report["failures"].as_array().unwrap();
    assert!(!failures.is_empty(), "{report:#}");
    for failure in failures {
        assert_eq!(failure["kind"], "budget-too-small", "{failure:#}");
        let message = failure["message"].as_str().unwrap();
        for fix in [
            "max_output_tokens",
            "--tools off",
            "manifests/local-model.toml",
            "larger context window",
        ] {
            assert!(message.contains(fix), "{fix} in {message}");
        }
        assert!(!message.contains("raise max_request_tokens"), "{message}");
    }
    assert_eq!(report["filesReviewed"], json!([]), "{report:#}");
    assert!(
        out.stderr.contains(r#""reason":"budget-hit""#),
        "a diagnostic line names the budget: {}",
        out.stderr
    );

    let vllm = start().await;
    let out = ScriptedReview::new(&repo, &base, &head, &vllm)
        .args(&["--tools", "off"])
        .run()
        .await;
    let report = out.json();
    assert_eq!(out.code, 0, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    let (asked, max_tokens) = largest_ask(&vllm);
    assert_eq!(max_tokens, 2_048);
    assert!(
        asked <= 8_192,
        "a request asks {asked} of an 8,192-token window"
    );

    let vllm = start().await;
    let out = ScriptedReview::new(&repo, &base, &head, &vllm)
        .args(&["--tools", "auto"])
        .run()
        .await;
    let report = out.json();
    assert_eq!(out.code, 0, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    assert!(
        vllm.chat_requests().iter().all(|r| !r.has_tools()),
        "no request offers tools"
    );
    let observations = report["observations"].to_string();
    assert!(
        observations.contains("vouch reviewed without tools"),
        "{observations}"
    );
    assert_within_window(&vllm, 8_192);
}

/// A window the endpoint states below 8,192 tokens (the smallest `context_tokens` may
/// set) is refused before the review, naming it: no request and reply would fit.
#[tokio::test(flavor = "multi_thread")]
async fn a_window_the_endpoint_states_below_8k_is_refused_before_the_review() {
    let (repo, base, head) = forty_files();
    let script = Script::new()
        .rule(Rule::when(Match::any()).always(perfect(0)))
        .context_window(4_096);
    let vllm = vllm(script).await;
    let out = ScriptedReview::new(&repo, &base, &head, &vllm).run().await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("context window of 4096 tokens"), "{said}");
    assert!(
        vllm.chat_requests().is_empty(),
        "no review request was sent"
    );
}

/// Every lane's shard proposes one candidate on its first file; the verifier's rule is
/// named `verifier` and decides nothing.
fn proposing_script() -> Script {
    let proposing = Reply::computed(|body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        let found = paths
            .first()
            .map(|p| {
                json!([vouch_workspace_tests::candidate(
                    p,
                    2,
                    2,
                    "the rewrite drops a line"
                )])
            })
            .unwrap_or_else(|| json!([]));
        Reply::content(candidates_reply(found, true, &paths))
    });
    Script::new()
        .rule(
            Rule::when(Match::user_contains("Instance: verifier"))
                .named("verifier")
                .always(Reply::content(json!({"decisions": []}).to_string())),
        )
        .rule(Rule::when(Match::any()).always(proposing))
}

/// At an 8k-token window with `--tools auto`, a review whose lanes propose candidates
/// runs without tools and verifies them: no request with its reply passes the window.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_with_tools_auto_candidates_are_verified_within_the_window() {
    let (repo, base, head) = forty_files();
    let script = proposing_script().context_window(8_192);
    let vllm = vllm(script).await;
    let out = ScriptedReview::new(&repo, &base, &head, &vllm)
        .manifest("tests/data/e2e/no-budget.toml")
        .args(&["--tools", "auto"])
        .run()
        .await;
    let report = out.json();
    assert!(!vllm.served_by("verifier").is_empty(), "{report:#}");
    assert_within_window(&vllm, 8_192);
    assert!(
        !report["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "budget-too-small"),
        "{report:#}"
    );
}

/// At a 12k-token window every lane's shard proposes a candidate, so the verifier has
/// many to decide: its batches hold no more decisions than the window leaves beside its
/// 9,000-token request bound, so no request asks for more reply tokens than that, and
/// none with its reply passes the window (batches of twelve asked for over 5,000).
#[tokio::test(flavor = "multi_thread")]
async fn at_a_12k_window_verification_batches_fit_the_reply_budget() {
    let (repo, base, head) = forty_files();
    let script = proposing_script().context_window(12_288);
    let (vllm, out) = without_tools(&repo, (&base, &head), script).await;
    let verifier = vllm.served_by("verifier");
    assert!(!verifier.is_empty(), "{}", out.stderr);
    // What the window leaves beside the request bound derived for it (12,288 less a
    // 3,072-token reply, in thousands).
    let room = 12_288 - 9_000;
    for request in vllm.chat_requests() {
        assert!(
            request.body["max_tokens"].as_u64().unwrap() <= room,
            "max_tokens {} over the {room} tokens the window leaves",
            request.body["max_tokens"]
        );
    }
    let (asked, max_tokens) = largest_ask(&vllm);
    assert!(
        asked <= 12_288,
        "{asked} tokens asked (max_tokens {max_tokens})"
    );
}

/// Twelve small text files, three short lines rewritten in each (about 50 tokens of
/// patch apiece).
fn twelve_small_files() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    let path = |f: usize| format!("docs/note{f:02}.txt");
    let text = |word: &str| -> String {
        (1..=12)
            .map(|i| match i {
                5..=7 => format!("{word} {i}\n"),
                _ => format!("same {i}\n"),
            })
            .collect()
    };
    for f in 0..12 {
        repo.write(&path(f), text("old"));
    }
    let base = repo.commit("base");
    for f in 0..12 {
        repo.write(&path(f), text("new"));
    }
    let head = repo.commit("touch twelve notes");
    (repo, base, head)
}

/// Issue 28 (budgets from the window) at an 8k window without tools: every lane takes
/// whole shards of change, so twelve small files run in at most three shards per lane
/// (two here), none split across shards. Before, each shard kept room for its coverage
/// retry to give the source a second time and for the previous answer at its whole
/// bound, which left a lane a few hundred tokens of change per shard: twelve shards
/// here, one file each.
/// A model whose first answer in every shard leaves out one file takes every retry
/// path: each retry points to the missing file's patch given once above it, and no
/// request with its reply passes the window; the review ends full.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_without_tools_lanes_take_whole_shards_and_retries_fit() {
    let (repo, base, head) = twelve_small_files();
    let model = Reply::computed(|body| {
        let list = expected_list(body);
        let retry = body.to_string().contains("## Coverage retry");
        let keep = if retry || list.len() < 2 {
            list.len()
        } else {
            list.len() - 1
        };
        let paths: Vec<&str> = list[..keep].iter().map(String::as_str).collect();
        Reply::content(candidates_reply(json!([]), true, &paths))
    });
    let script = Script::new()
        .rule(Rule::when(Match::any()).always(model))
        .context_window(8_192);
    let vllm = vllm(script).await;
    let out = ScriptedReview::new(&repo, &base, &head, &vllm)
        .args(&["--tools", "off"])
        .run()
        .await;
    let report = out.json();
    assert_eq!(out.code, 0, "{report:#}");
    assert_eq!(report["opinion"]["coverage"], "full", "{report:#}");
    let stages = report["stages"].as_array().unwrap();
    let mut lanes: std::collections::BTreeMap<&str, Vec<&Value>> = Default::default();
    for stage in stages.iter().filter(|s| s["role"] != "verifier") {
        lanes
            .entry(stage["lane"].as_str().unwrap())
            .or_default()
            .push(stage);
    }
    assert!(lanes.len() >= 3, "{lanes:?}");
    for (lane, shards) in &lanes {
        assert!(shards.len() <= 3, "{lane}: {} shards", shards.len());
        let mut seen: Vec<&str> = shards
            .iter()
            .flat_map(|s| s["assignedPaths"].as_array().unwrap())
            .map(|p| p.as_str().unwrap())
            .collect();
        let all = seen.len();
        seen.dedup();
        assert_eq!(all, seen.len(), "{lane}: a file split across shards");
        assert_eq!(seen.len(), 12, "{lane}");
    }
    let requests = vllm.chat_requests();
    // Without tools, no request tells the model to call one.
    for request in &requests {
        let user = request.contents_of("user").join("\n");
        for tool in ["read_file", "grep", "graph tools", "start_byte"] {
            assert!(!user.contains(tool), "{tool:?} without tools: {user}");
        }
    }
    let retries: Vec<_> = requests
        .iter()
        .filter(|r| {
            r.contents_of("user")
                .join("\n")
                .contains("## Coverage retry")
        })
        .collect();
    assert!(!retries.is_empty(), "the first answers took the retry path");
    for retry in retries {
        let user = retry.contents_of("user").join("\n");
        let section = &user[user.find("## Coverage retry").unwrap()..];
        assert!(
            section.contains("(their patches are in the source given above; inspect them)"),
            "{section}"
        );
        assert!(!section.contains("<patch"), "{section}");
    }
    assert_within_window(&vllm, 8_192);
}

/// One module of sixty 80-byte lines with every third line rewritten: a verifier request
/// near its bound at an 8k window (the patch and the candidate's context fill it).
fn one_dense_module() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    let text = |changed: bool| -> String {
        (0..60)
            .map(|j| {
                if changed && j % 3 == 0 {
                    format!("def func_{j}(x):  return x - {j} if x else None  # changed line {j} of this module\n")
                } else {
                    format!("def func_{j}(x):  return x + {j}  # original line number {j} of this module\n")
                }
            })
            .collect()
    };
    repo.write("mod.py", text(false));
    let base = repo.commit("base");
    repo.write("mod.py", text(true));
    let head = repo.commit("change every third function");
    (repo, base, head)
}

/// At an 8k window the verifier's reply is bounded by what the window leaves beside its
/// request bound, even when one decision's contract could be longer (about 2,850 tokens
/// against the 2,192 an 8k window leaves beside a 6,000-token request): a vLLM server
/// refuses a request whose prompt and `max_tokens` together pass the window, so before,
/// every verification batch of this review was over the window.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_no_verifier_request_and_its_reply_pass_the_window() {
    let (repo, base, head) = one_dense_module();
    let script = proposing_script().context_window(8_192);
    let (vllm, out) = without_tools(&repo, (&base, &head), script).await;
    let report = out.json();
    let verifier = vllm.served_by("verifier");
    assert!(!verifier.is_empty(), "{report:#}");
    for request in &verifier {
        let asked = asked_tokens(request);
        assert!(
            asked <= 8_192,
            "a verifier request asks {asked} tokens (max_tokens {})",
            request.body["max_tokens"]
        );
    }
    assert_within_window(&vllm, 8_192);
}

/// At an 8k window a repair request stays within the stage's request bound: a first
/// reply that fails its contract (an unknown `area`) and carries a run of 13,000 spaces
/// (a small model's whitespace loop, cheap in tokens and large in bytes) is shown to the
/// repair cut, with a note, and no request with its reply passes the window. Before, the
/// repair copied the whole reply: about 18,700 bytes against an 18,000-byte bound.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_a_repair_request_shows_a_long_reply_cut_within_the_bound() {
    let (repo, base, head) = twelve_small_files();
    let looping = Reply::computed(|body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        let mut found = vouch_workspace_tests::candidate(paths[0], 5, 5, "the note changed");
        found["area"] = json!("style-and-taste");
        found["evidence"] = json!(format!("it changed{}", " ".repeat(13_000)));
        Reply::content(candidates_reply(json!([found]), true, &paths))
    });
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains(
                "You repair a reviewer's final answer",
            ))
            .named("repair")
            .always(Reply::content(candidates_reply(json!([]), false, &[]))),
        )
        .rule(
            Rule::when(Match::user_contains("Instance: verifier"))
                .always(Reply::content(json!({"decisions": []}).to_string())),
        )
        .rule(Rule::when(Match::any()).always(looping))
        .context_window(8_192);
    let (vllm, out) = without_tools(&repo, (&base, &head), script).await;
    let repairs = vllm.served_by("repair");
    assert!(!repairs.is_empty(), "{}", out.stdout);
    assert_each_within(&repairs, 6_000 * 3, "repair");
    for repair in &repairs {
        let user = repair.contents_of("user").join("\n");
        assert!(user.contains("(The prior reply is cut here"), "{user}");
    }
    assert_within_window(&vllm, 8_192);
}

/// At an 8k window a verification request stays within the verifier's request bound when
/// its candidate sits on a file of long lines: the lines around the candidate, the patch
/// and the prefetch share half the bound. Before, a candidate on a 3-line file with a
/// 5,000-byte line brought the line three times (around the candidate, and at base and
/// head in the patch): a 21,900-byte request against an 18,000-byte bound.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_a_verification_request_of_long_lines_stays_within_its_bound() {
    let repo = TestRepo::new();
    repo.write("mid.txt", format!("short\n{}\nend\n", "M".repeat(5_000)));
    let base = repo.commit("base");
    repo.write("mid.txt", format!("short\n{}\nend\n", "N".repeat(5_000)));
    let head = repo.commit("rewrite the long line");
    let script = proposing_script().context_window(8_192);
    let (vllm, out) = without_tools(&repo, (&base, &head), script).await;
    let verifier = vllm.served_by("verifier");
    assert!(!verifier.is_empty(), "{}", out.stdout);
    assert_each_within(&verifier, 6_000 * 3, "verification");
    assert_within_window(&vllm, 8_192);
}

/// A file of 400 lines of about 630 bytes, with lines 10, 12, 200 and 350 rewritten.
fn long_lined_module() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    let text = |changed: bool| -> String {
        (1..=400)
            .map(|i| {
                let body = if changed && [10, 12, 200, 350].contains(&i) {
                    "ZYXWVUTSRQ".repeat(60)
                } else {
                    "abcdefghij".repeat(60)
                };
                format!("v{i} = \"{body}\"  # line {i}\n")
            })
            .collect()
    };
    repo.write("long.py", text(false));
    let base = repo.commit("base");
    repo.write("long.py", text(true));
    let head = repo.commit("rewrite four long lines");
    (repo, base, head)
}

/// Each lane proposes a candidate on every changed line of `long.py`; the verifier
/// verifies each candidate whose line it was shown (a `<source>` window holding
/// `N: v<line> =`), citing that line, and leaves the others unresolved.
fn long_lined_script(window: Option<u32>) -> Script {
    let lanes = Reply::computed(|body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        let found: Vec<Value> = [10, 12, 200, 350]
            .iter()
            .map(|&l| vouch_workspace_tests::candidate("long.py", l, l, "the value was replaced"))
            .collect();
        Reply::content(candidates_reply(json!(found), true, &paths))
    });
    let verifier = Reply::computed(|body| {
        let user = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let shown = |line: u32| {
            user.split("<source for=")
                .skip(1)
                .any(|block| block.contains(&format!("\n{line}: v{line} = ")))
        };
        let decisions: Vec<Value> = user
            .split("<candidate id=\"")
            .skip(1)
            .map(|block| {
                let id = &block[..block.find('"').unwrap()];
                let line: u32 = block
                    .split("long.py:")
                    .nth(1)
                    .and_then(|r| r.split('-').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap();
                if shown(line) {
                    vouch_workspace_tests::decision(
                        id,
                        "verified",
                        json!([vouch_workspace_tests::citation("long.py", line, line)]),
                        Some(vouch_workspace_tests::finding(
                            "long.py",
                            line,
                            line,
                            "the value was replaced",
                        )),
                    )
                } else {
                    vouch_workspace_tests::decision(id, "unresolved", json!([]), None)
                }
            })
            .collect();
        Reply::content(json!({ "decisions": decisions }).to_string())
    });
    let script = Script::new()
        .rule(
            Rule::when(Match::user_contains("Instance: verifier"))
                .named("verifier")
                .always(verifier),
        )
        .rule(Rule::when(Match::any()).always(lanes));
    match window {
        Some(tokens) => script.context_window(tokens),
        None => script,
    }
}

/// Issue 28, verification source within its bound: a batch is planned with each
/// candidate's window at its real size, and a window larger than the room left is
/// narrowed, not dropped. At the default window a batch once held twelve candidates but
/// windows for three of them (their size was planned at 100 bytes a line); at 8k a
/// candidate on a line of about 630 bytes got no source at all (its ±12-line window was
/// over the room). Now every candidate is shown its line, at both windows, so an honest
/// verifier verifies them all and none is left unresolved for want of source.
#[tokio::test(flavor = "multi_thread")]
async fn every_candidate_on_long_lines_is_shown_its_line_to_verify() {
    let (repo, base, head) = long_lined_module();
    for (window, tools) in [(None, "off"), (Some(8_192), "off")] {
        let script = long_lined_script(window);
        let vllm = vllm(script).await;
        let out = ScriptedReview::new(&repo, &base, &head, &vllm)
            .manifest("tests/data/e2e/no-budget.toml")
            .args(&["--tools", tools])
            .run()
            .await;
        let report = out.json();
        assert!(!vllm.served_by("verifier").is_empty(), "{report:#}");
        let unresolved = report["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] == "unresolved")
            .count();
        assert_eq!(unresolved, 0, "window {window:?}: {report:#}");
        assert_eq!(report["opinion"]["outcome"], "findings", "{report:#}");
        assert!(
            report["failures"].as_array().unwrap().is_empty(),
            "window {window:?}: {report:#}"
        );
        let (asked, _) = largest_ask(&vllm);
        if let Some(tokens) = window {
            assert!(asked <= u64::from(tokens), "{asked} tokens asked");
        }
    }
}

/// At an 8k window a repair shown only part of a long reply is told what the whole of it
/// holds, and is judged on that: a first reply whose summary is a run of 20,000 spaces,
/// followed by three complete candidates and a key the contract does not know, goes to
/// repair cut before its candidates; the repair request lists them ("each as written"),
/// a repair that keeps them stands, and they reach the verifier. Before, the repair was
/// asked to rewrite what it was shown and then failed for dropping the candidates it
/// was not shown, which made the review incomplete.
#[tokio::test(flavor = "multi_thread")]
async fn at_an_8k_window_a_repair_is_told_what_the_part_not_shown_holds() {
    let (repo, base, head) = twelve_small_files();
    let looping = Reply::computed(|body| {
        let list = expected_list(body);
        let found: Vec<Value> = [5, 6, 7]
            .iter()
            .map(|&l| vouch_workspace_tests::candidate(&list[0], l, l, "the note changed"))
            .collect();
        let reply = json!({
            "summary": " ".repeat(20_000),
            "candidates": found,
            "coverage": {"complete": true, "reviewedFiles": list},
            "note": "an unknown key sends this reply to repair",
        });
        Reply::content(reply.to_string())
    });
    let repair = Reply::computed(|body| {
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let kept: Vec<Value> = user
            .split("each as written (the same path and lines):\n")
            .nth(1)
            .map(|rest| {
                rest.lines()
                    .map_while(|l| serde_json::from_str::<Value>(l).ok())
                    .collect()
            })
            .unwrap_or_default();
        let list: Vec<String> = kept
            .first()
            .and_then(|c| c["path"].as_str())
            .map(|p| vec![p.to_string()])
            .unwrap_or_default();
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        Reply::content(candidates_reply(json!(kept), false, &paths))
    });
    let unresolved = Reply::computed(|body| {
        let user = body.to_string();
        let decisions: Vec<Value> = user
            .split("<candidate id=\\\"")
            .skip(1)
            .map(|b| {
                let id = &b[..b.find("\\\"").unwrap()];
                vouch_workspace_tests::decision(id, "unresolved", json!([]), None)
            })
            .collect();
        Reply::content(json!({ "decisions": decisions }).to_string())
    });
    let script = Script::new()
        .rule(
            Rule::when(Match::system_contains(
                "You repair a reviewer's final answer",
            ))
            .named("repair")
            .always(repair),
        )
        .rule(
            Rule::when(Match::user_contains("Instance: verifier"))
                .named("verifier")
                .always(unresolved),
        )
        .rule(
            Rule::when(Match::user_contains("## Coverage retry")).always(Reply::computed(|body| {
                let list = expected_list(body);
                let paths: Vec<&str> = list.iter().map(String::as_str).collect();
                Reply::content(candidates_reply(json!([]), true, &paths))
            })),
        )
        .rule(Rule::when(Match::any()).always(looping))
        .context_window(8_192);
    let (vllm, out) = without_tools(&repo, (&base, &head), script).await;
    let report = out.json();
    let repairs = vllm.served_by("repair");
    assert!(!repairs.is_empty(), "{report:#}");
    for r in &repairs {
        let user = r.contents_of("user").join("\n");
        assert!(user.contains("(The prior reply is cut here"), "{user}");
        assert!(user.contains("each as written"), "{user}");
        // Its contract can hold the three candidates it is held to keep (the contract
        // fitted to an 8k reply holds one).
        let schema = &r.response_format().expect("structured outputs")["json_schema"]["schema"];
        let cap = schema["properties"]["candidates"]["maxItems"].as_u64();
        assert!(cap.is_none_or(|n| n >= 3), "{schema:#}");
        assert!(r.raw_body.len() <= 6_000 * 3, "{} bytes", r.raw_body.len());
    }
    let failures = report["failures"].to_string();
    assert!(!failures.contains("the repair dropped"), "{failures}");
    assert!(
        report["failures"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
    assert!(
        !vllm.served_by("verifier").is_empty(),
        "the kept candidates reach the verifier: {report:#}"
    );
}

/// A change of only a binary file (a logo updated) is reviewed from its metadata, so it
/// calls a model: vouch checks the endpoint and learns the window it states first, and
/// no request passes that window. Before, such a change skipped the check, was sized for
/// the default 32k window and asked 8,192 tokens of reply from an 8k model.
#[tokio::test(flavor = "multi_thread")]
async fn a_change_of_only_a_binary_file_learns_the_window_before_its_requests() {
    let repo = TestRepo::new();
    repo.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x01");
    let base = repo.commit("logo");
    repo.write(
        "assets/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x02\0\x03",
    );
    let head = repo.commit("new logo");
    let model = Reply::computed(|body| {
        let list = expected_list(body);
        let paths: Vec<&str> = list.iter().map(String::as_str).collect();
        Reply::content(candidates_reply(json!([]), true, &paths))
    });
    let script = Script::new()
        .rule(Rule::when(Match::any()).always(model))
        .context_window(8_192);
    let (vllm, out) = without_tools(&repo, (&base, &head), script).await;
    let report = out.json();
    assert_eq!(report["contextWindow"]["tokens"], 8_192, "{report:#}");
    assert_eq!(report["contextWindow"]["source"], "endpoint", "{report:#}");
    assert!(
        vllm.requests().iter().any(|r| r.path.ends_with("/models")),
        "the endpoint was checked"
    );
    assert_within_window(&vllm, 8_192);
}
