//! Provider errors that say what to fix, and the README's provider recipes, through the
//! real binary against local servers imitating each provider.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Dialect, Match, Reply, Rule, Script, ScriptedServer, ServedBy};
use vouch_workspace_tests::{
    GENERIC, Output, candidates_reply, expected_list, receipt, review_json, stage, workspace,
};

const KEY: &str = "sk-e2e-endpoint-SECRET-91c2";

fn repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    let head = repo.commit("change one");
    (repo, base, head)
}

fn investigator_clean() -> Script {
    Script::new().rule(stage(
        GENERIC,
        "investigator",
        [receipt(json!([]), &["src/lib.rs"])],
    ))
}

async fn review(
    base_url: &str,
    model: &str,
    manifest: &str,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> Output {
    let (repo, base, head) = repo();
    let manifest = workspace().join(manifest).display().to_string();
    let mut args = vec!["--manifest", manifest.as_str()];
    args.extend_from_slice(extra);
    review_json(repo.path(), &base, &head, base_url, model, &args, envs).await
}

/// The one diagnostic line of a configuration error.
fn diagnostic_reason(out: &Output) -> String {
    let lines: Vec<Value> = out
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not a diagnostic: {l}")))
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert_eq!(lines[0]["stage"], "endpoint");
    lines[0]["reason"].as_str().unwrap().to_owned()
}

fn no_stage_ran(server: &ScriptedServer) {
    assert!(
        server.requests().iter().all(|r| !r.is_matched()),
        "a stage reached the model: {:?}",
        server
            .requests()
            .iter()
            .map(|r| &r.served_by)
            .collect::<Vec<_>>()
    );
}

const MINIMAL: &str = "tests/data/e2e/minimal.toml";

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_model_is_a_configuration_error_listing_the_models() {
    let server = ScriptedServer::start_as(
        Dialect::OpenAi { key: KEY.into() },
        &["gpt-4.1", "gpt-4.1-mini"],
        investigator_clean(),
    )
    .await;
    let out = review(
        &server.base_url(),
        "gpt-5x",
        MINIMAL,
        &[],
        &[("OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    // stdout is the requested format's failure document, the paragraph inside it.
    let failure = out.json();
    let message = failure["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("does not serve the model \"gpt-5x\" (set by --model)"),
        "{}",
        out.stdout
    );
    assert!(
        message.contains("It offers: gpt-4.1, gpt-4.1-mini."),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("VOUCH_MODEL"), "{}", out.stdout);
    assert_eq!(diagnostic_reason(&out), "endpoint-model");
    no_stage_ran(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_key_names_the_variable_never_the_value() {
    let server = ScriptedServer::start_as(
        Dialect::OpenAi { key: KEY.into() },
        &["gpt-4.1"],
        investigator_clean(),
    )
    .await;
    let out = review(
        &server.base_url(),
        "gpt-4.1",
        MINIMAL,
        &["--api-key-env", "TEAM_OPENAI_KEY"],
        &[("TEAM_OPENAI_KEY", "sk-wrong-VALUE-77")],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("refused the API key (HTTP 401"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("environment variable TEAM_OPENAI_KEY"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("VALUE-77") && !out.stderr.contains("VALUE-77"));
    assert_eq!(diagnostic_reason(&out), "endpoint-auth");
    no_stage_ran(&server);

    let unset = review(&server.base_url(), "gpt-4.1", MINIMAL, &[], &[]).await;
    assert_eq!(unset.code, 3);
    assert!(
        unset.stdout.contains("OPENAI_API_KEY is unset or empty"),
        "{}",
        unset.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_base_url_without_v1_is_explained_with_the_one_that_answers() {
    let server = ScriptedServer::start(investigator_clean()).await;
    let out = review(&server.root_url(), "scripted", MINIMAL, &[], &[]).await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "set the base URL (--base-url) to {}.",
            server.base_url()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(diagnostic_reason(&out), "endpoint-path");
    no_stage_ran(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_host_and_a_rate_limit_are_configuration_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = review(
        &format!("http://127.0.0.1:{port}/v1"),
        "m",
        MINIMAL,
        &[],
        &[],
    )
    .await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("cannot reach the model endpoint"),
        "{}",
        out.stdout
    );
    assert_eq!(diagnostic_reason(&out), "endpoint-unreachable");

    let limited = ScriptedServer::start(
        investigator_clean().models_reply(Reply::status(429).header("Retry-After", "30")),
    )
    .await;
    let out = review(&limited.base_url(), "scripted", MINIMAL, &[], &[]).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("rate limited or out of quota"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("wait 30 s"), "{}", out.stdout);
    assert_eq!(diagnostic_reason(&out), "endpoint-rate-limited");
    no_stage_ran(&limited);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_auth_failure_during_the_review_stops_the_remaining_stages() {
    // The model list passes the check; the first chat request is refused.
    let server = ScriptedServer::start(
        Script::new().rule(
            Rule::when(Match::any())
                .named("refuse")
                .always(Reply::status(401)),
        ),
    )
    .await;
    let out = review(
        &server.base_url(),
        "scripted",
        "manifests/default.toml",
        &["--concurrency", "1"],
        &[("OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        server.chat_requests().len(),
        1,
        "one refusal, then nothing more"
    );
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "incomplete");
    let messages = report["messages"].to_string();
    assert!(
        messages.contains("remaining stages sent no request"),
        "{messages}"
    );
    assert!(messages.contains("OPENAI_API_KEY"), "{messages}");
    assert!(!out.stdout.contains(KEY));
    // Usage counts every request sent: the model list and the refused request.
    assert_eq!(report["usage"]["requests"], json!(server.request_count()));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_counts_failed_and_retried_requests() {
    let server = ScriptedServer::start(
        Script::new().rule(Rule::when(Match::any()).always(Reply::status(500))),
    )
    .await;
    let out = review(&server.base_url(), "scripted", MINIMAL, &[], &[]).await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let chat = server.chat_requests().len();
    assert!(chat >= 3, "retries were sent: {chat}");
    assert_eq!(report["usage"]["requests"], json!(server.request_count()));
}

#[tokio::test(flavor = "multi_thread")]
async fn replies_without_token_counts_are_estimated_and_said_so() {
    // An endpoint that answers every request perfectly but never states `usage`.
    let server = ScriptedServer::start(Script::new().rule(Rule::when(Match::any()).always(
        Reply::computed(|body| {
            let list = expected_list(body);
            let paths: Vec<&str> = list.iter().map(String::as_str).collect();
            Reply::content(candidates_reply(json!([]), true, &paths)).without_usage()
        }),
    )))
    .await;
    let out = review(
        &server.base_url(),
        "scripted",
        "manifests/default.toml",
        &[],
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let chat = server.chat_requests();
    let usage = &report["usage"];
    assert_eq!(usage["promptTokens"], 0);
    assert_eq!(usage["unreportedReplies"], json!(chat.len()), "{usage}");
    let sent: usize = chat.iter().map(|r| r.raw_body.len()).sum();
    let estimated = usage["estimatedTokens"].as_u64().unwrap();
    assert!(
        estimated >= (sent / 3) as u64,
        "{estimated} for {sent} bytes"
    );
    for stage in report["stages"].as_array().unwrap() {
        assert_eq!(
            stage["usage"]["unreportedReplies"],
            stage["usage"]["requests"]
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_in_the_base_url_never_reach_the_report() {
    let server = ScriptedServer::start(investigator_clean()).await;
    let url = server
        .base_url()
        .replacen("http://", "http://alice:s3cretpw@", 1);
    let out = review(&url, "scripted", MINIMAL, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains("s3cretpw"), "{}", out.stdout);
    assert!(!out.stderr.contains("s3cretpw"), "{}", out.stderr);
    let replay = out.json()["finalReport"]["handoff"]["replayCommands"].to_string();
    assert!(replay.contains("http://[redacted]@127.0.0.1"), "{replay}");
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_recipe_reviews_through_the_deployment_url() {
    let server = ScriptedServer::start_as(
        Dialect::Azure {
            key: KEY.into(),
            deployment: "review-gpt".into(),
            api_version: "2024-10-21".into(),
        },
        &[],
        investigator_clean(),
    )
    .await;
    let out = review(
        &server.base_url(),
        "gpt-4.1",
        "tests/data/e2e/recipes/azure.toml",
        &[],
        &[("AZURE_OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let served = server.served_by("investigator");
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].header("api-key"), Some(KEY));
    assert_eq!(served[0].query.as_deref(), Some("api-version=2024-10-21"));
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.served_by != ServedBy::Refused)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openrouter_recipe_sends_its_attribution_headers() {
    let server = ScriptedServer::start_as(
        Dialect::OpenRouter { key: KEY.into() },
        &["openai/gpt-4.1"],
        investigator_clean(),
    )
    .await;
    let out = review(
        &server.base_url(),
        "openai/gpt-4.1",
        "tests/data/e2e/recipes/openrouter.toml",
        &[],
        &[("OPENROUTER_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let served = server.served_by("investigator");
    assert_eq!(served[0].header("x-title"), Some("vouch"));
    assert_eq!(
        served[0].header("http-referer"),
        Some("https://example.com/my-repo")
    );
    assert_eq!(
        served[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ollama_vllm_and_llama_cpp_recipes_review() {
    for (dialect, models, model, key) in [
        (Dialect::Ollama, &["llama3.2:latest"][..], "llama3.2", None),
        (
            Dialect::Vllm {
                key: Some(KEY.into()),
            },
            &["Qwen/Qwen2.5-Coder-32B-Instruct"][..],
            "Qwen/Qwen2.5-Coder-32B-Instruct",
            Some(KEY),
        ),
        (Dialect::LlamaCpp, &["smollm2.gguf"][..], "local", None),
    ] {
        let server = ScriptedServer::start_as(dialect.clone(), models, investigator_clean()).await;
        let envs: Vec<(&str, &str)> = key.map(|k| ("OPENAI_API_KEY", k)).into_iter().collect();
        let out = review(
            &server.base_url(),
            model,
            "tests/data/e2e/tools-off-small-budget.toml",
            &[],
            &envs,
        )
        .await;
        assert_eq!(out.code, 0, "{dialect:?}: {}\n{}", out.stdout, out.stderr);
        assert_eq!(server.served_by("investigator").len(), 1, "{dialect:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_error_at_the_check_says_what_failed_and_what_to_do() {
    // llama.cpp's server while it loads its model: 503 "Loading model" on every route.
    let loading =
        ScriptedServer::start_as(Dialect::LlamaCppLoading, &[], investigator_clean()).await;
    let out = review(&loading.base_url(), "local", MINIMAL, &[], &[]).await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    for needed in [
        "is not ready: it answered HTTP 503 (Loading model)",
        "still loading the model",
        "GET /health",
        "run vouch again",
        "No review stage was started",
    ] {
        assert!(
            out.stdout.contains(needed),
            "{needed:?} in:\n{}",
            out.stdout
        );
    }
    assert_eq!(diagnostic_reason(&out), "endpoint-server-error");
    no_stage_ran(&loading);
    // An internal error of the server, and a gateway that gets no answer behind it.
    for (status, needed) in [
        (
            500,
            "not a refusal of your key or model name: read the server's log",
        ),
        (
            502,
            "a gateway in front of the model server answered HTTP 502",
        ),
    ] {
        let failing = ScriptedServer::start(
            investigator_clean()
                .models_reply(Reply::status(status))
                .rule(Rule::when(Match::any()).always(Reply::status(status))),
        )
        .await;
        let out = review(&failing.base_url(), "scripted", MINIMAL, &[], &[]).await;
        assert_eq!(out.code, 3, "{}", out.stdout);
        assert!(
            out.stdout.contains(needed),
            "{needed:?} in:\n{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains(&format!("{}/chat/completions", failing.base_url())),
            "the failing URL is named:\n{}",
            out.stdout
        );
        assert_eq!(diagnostic_reason(&out), "endpoint-server-error");
        // The check's one-token request only: no stage was started.
        assert_eq!(failing.chat_requests().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_azure_deployment_names_the_url_segment_to_fix() {
    let server = ScriptedServer::start_as(
        Dialect::Azure {
            key: KEY.into(),
            deployment: "review-gpt".into(),
            api_version: "2024-10-21".into(),
        },
        &[],
        investigator_clean(),
    )
    .await;
    let url = format!("{}/openai/deployments/gpt-4.1", server.root_url());
    let out = review(
        &url,
        "gpt-4.1",
        "tests/data/e2e/recipes/azure.toml",
        &[],
        &[("AZURE_OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let message = out.json()["message"].as_str().unwrap().to_owned();
    for needed in [
        "Azure OpenAI has no deployment named \"gpt-4.1\"",
        "DeploymentNotFound",
        "path segment after /openai/deployments/ in the base URL (from --base-url)",
        "--model does not choose it",
        "az cognitiveservices account deployment list",
    ] {
        assert!(message.contains(needed), "{needed:?} in:\n{message}");
    }
    assert!(!out.stdout.contains(KEY));
    assert_eq!(diagnostic_reason(&out), "endpoint-deployment");
    no_stage_ran(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_answering_any_model_name_is_reported_with_the_model_it_lists() {
    let server =
        ScriptedServer::start_as(Dialect::LlamaCpp, &["smollm2.gguf"], investigator_clean()).await;
    let out = review(
        &server.base_url(),
        "gpt-4.1",
        "tests/data/e2e/tools-off-small-budget.toml",
        &[],
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let messages = out.json()["messages"].to_string();
    for needed in [
        "does not list the model \\\"gpt-4.1\\\" (set by --model)",
        "it lists smollm2.gguf",
        "set --model or VOUCH_MODEL to smollm2.gguf",
    ] {
        assert!(messages.contains(needed), "{needed:?} in {messages}");
    }
    // Named as the endpoint lists it, the model raises no message.
    let server =
        ScriptedServer::start_as(Dialect::LlamaCpp, &["smollm2.gguf"], investigator_clean()).await;
    let out = review(
        &server.base_url(),
        "smollm2.gguf",
        "tests/data/e2e/tools-off-small-budget.toml",
        &[],
        &[],
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        !out.json()["messages"].to_string().contains("does not list"),
        "{}",
        out.json()["messages"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_azure_deployment_url_without_api_version_says_to_set_it() {
    let server = ScriptedServer::start_as(
        Dialect::Azure {
            key: KEY.into(),
            deployment: "review-gpt".into(),
            api_version: "2024-10-21".into(),
        },
        &[],
        investigator_clean(),
    )
    .await;
    let out = review(
        &server.base_url(),
        "gpt-4.1",
        "tests/data/e2e/recipes/azure-without-api-version.toml",
        &[],
        &[("AZURE_OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let message = out.json()["message"].as_str().unwrap().to_owned();
    for needed in [
        "Azure OpenAI deployment URL",
        "404 to every request without an api-version",
        "Set api_version under [model]",
        "api_version = \"2024-10-21\"",
    ] {
        assert!(message.contains(needed), "{needed:?} in:\n{message}");
    }
    assert_eq!(diagnostic_reason(&out), "endpoint-path");
    no_stage_ran(&server);
}

/// A model pinned in the manifest (on a specialist or on the verifier) is checked like
/// the default model, before any stage: a model the endpoint does not serve is the
/// `endpoint-model` configuration error naming the model, where it was pinned and the
/// models the endpoint offers, in every requested document; a pinned model the endpoint
/// lists costs no request beyond the one model list.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_pinned_in_the_manifest_is_checked_before_any_stage() {
    for (manifest, pinned_in) in [
        (
            "tests/data/e2e/pinned-verifier-model.toml",
            "[verifier] of the manifest",
        ),
        (
            "tests/data/e2e/pinned-specialist-model.toml",
            "[[specialist]] \\\"generic-investigator\\\" of the manifest",
        ),
    ] {
        let server = ScriptedServer::start_as(
            Dialect::OpenAi { key: KEY.into() },
            &["real-model", "other-model"],
            investigator_clean(),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let sarif = dir.path().join("report.sarif");
        std::fs::write(&sarif, "an earlier run's SARIF").unwrap();
        let sarif_arg = format!("sarif={}", sarif.display());
        let out = review(
            &server.base_url(),
            "real-model",
            manifest,
            &["--out", &sarif_arg],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
        assert_eq!(out.code, 3, "{manifest}: {}\n{}", out.stdout, out.stderr);
        let failure = out.json();
        assert_eq!(failure["schemaVersion"], "vouch.review-failure/1");
        let message = failure["message"].to_string();
        for needed in [
            "does not serve the model \\\"nope-model\\\"",
            pinned_in,
            "It offers: other-model, real-model.",
        ] {
            assert!(
                message.contains(needed),
                "{manifest}: {needed:?} in {message}"
            );
        }
        let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap())
            .expect("the SARIF failure document");
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false, "{manifest}");
        assert!(
            invocation.to_string().contains("nope-model"),
            "{manifest}: {invocation}"
        );
        assert_eq!(diagnostic_reason(&out), "endpoint-model", "{manifest}");
        no_stage_ran(&server);
        // The only chat request is the check's one-token probe of the unlisted model.
        let chat = server.chat_requests();
        assert_eq!(chat.len(), 1, "{manifest}");
        assert_eq!(chat[0].body["model"], "nope-model");
        assert_eq!(chat[0].body["max_tokens"], 1);
    }

    // A pinned model the endpoint lists passes with the one model list, no probe.
    let server = ScriptedServer::start_as(
        Dialect::OpenAi { key: KEY.into() },
        &["real-model", "investigator-model"],
        investigator_clean(),
    )
    .await;
    let out = review(
        &server.base_url(),
        "real-model",
        "tests/data/e2e/own-model.toml",
        &[],
        &[("OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let checks: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.served_by == ServedBy::ModelList || r.served_by == ServedBy::Probe)
        .collect();
    assert_eq!(checks.len(), 1, "one model list: {checks:?}");
    assert_eq!(server.served_by("investigator").len(), 1);
    assert_eq!(
        server.served_by("investigator")[0].body["model"],
        "investigator-model"
    );
}

/// An endpoint that states no window (as Ollama does) refuses a request as longer than
/// the model's context window, as vLLM words it: the failure says how to state that
/// window to vouch, with the number the endpoint gave, not only that the endpoint failed.
#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_over_the_context_window_says_how_to_state_the_window() {
    const REFUSAL: &str = r#"{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 10493 tokens (2301 in the messages, 8192 in the completion).","type":"BadRequestError","code":400}"#;
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn f() -> u8 {\n    1\n}\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", "pub fn f() -> u8 {\n    2\n}\n");
    let head = repo.commit("change");
    // (the refusal, what the failure must say)
    const LLAMA_4K: &str = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#;
    let cases = [
        (REFUSAL, "context_tokens = 8192 under [model]"),
        // A window smaller than any vouch reviews in: the model must be served larger.
        (
            LLAMA_4K,
            "serve the model with a context of at least 8192 tokens",
        ),
    ];
    for (refusal, says) in cases {
        let script = Script::new().rule(Rule::when(Match::any()).always(Reply::raw(400, refusal)));
        let server = ScriptedServer::start(script).await;
        let out = vouch_workspace_tests::ScriptedReview::new(&repo, &base, &head, &server)
            .manifest("tests/data/e2e/minimal.toml")
            .run()
            .await;
        assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
        let report = out.json();
        let message = report["failures"][0]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
}
