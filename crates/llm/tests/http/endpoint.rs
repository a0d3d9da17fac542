//! Endpoints as users have them: each provider's paths and auth (imitated by the
//! scripted server's dialects), base URLs in the forms users paste, and the endpoint
//! check that says what is wrong before a review starts.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use vouch_llm::{AuthScheme, EndpointConfig, EndpointProblem, LlmError, ModelClient};
use vouch_testkit::openai::{Dialect, Match, Reply, Script, ScriptedServer};

use super::ask;

const KEY: &str = "sk-endpoint-test-key";

fn config(base_url: &str, model: &str) -> EndpointConfig {
    let mut config = EndpointConfig::new(base_url, model);
    config.max_retries = 2;
    config.retry_base_delay = Duration::from_millis(10);
    config.request_timeout = Duration::from_secs(20);
    config
}

fn answering() -> Script {
    Script::new()
        .rule(vouch_testkit::openai::Rule::when(Match::any()).always(Reply::content("pong")))
}

async fn check(config: EndpointConfig) -> Result<vouch_llm::EndpointCheck, EndpointProblem> {
    ModelClient::new(config)
        .unwrap()
        .check_endpoint(&CancellationToken::new())
        .await
}

async fn works(config: EndpointConfig) -> ModelClient {
    let client = ModelClient::new(config).unwrap();
    let cancel = CancellationToken::new();
    client
        .check_endpoint(&cancel)
        .await
        .expect("the endpoint check passes");
    let reply = client
        .complete(ask("hi"), &cancel)
        .await
        .expect("a completion");
    assert_eq!(reply.content.as_deref(), Some("pong"));
    client
}

#[tokio::test]
async fn openai_recipe_bearer_key_under_v1() {
    let server = ScriptedServer::start_as(
        Dialect::OpenAi { key: KEY.into() },
        &["gpt-4.1", "gpt-4.1-mini"],
        answering(),
    )
    .await;
    works(config(&server.base_url(), "gpt-4.1").with_api_key(KEY)).await;
    let chat = &server.chat_requests()[0];
    assert_eq!(chat.path, "/v1/chat/completions");
    assert_eq!(
        chat.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // The model was listed: one GET and no probe before the real request.
    assert_eq!(server.request_count(), 2);

    let wrong_key = check(config(&server.base_url(), "gpt-4.1").with_api_key("sk-wrong")).await;
    assert!(
        matches!(wrong_key, Err(EndpointProblem::Refused { status: 401, key_sent: true, ref detail }) if detail.contains("Incorrect API key")),
        "{wrong_key:?}"
    );
    let no_key = check(config(&server.base_url(), "gpt-4.1")).await;
    assert!(
        matches!(
            no_key,
            Err(EndpointProblem::Refused {
                key_sent: false,
                ..
            })
        ),
        "{no_key:?}"
    );
    let unknown = check(config(&server.base_url(), "gpt-5x").with_api_key(KEY)).await;
    assert_eq!(
        unknown,
        Err(EndpointProblem::UnknownModel {
            model: "gpt-5x".into(),
            available: vec!["gpt-4.1".into(), "gpt-4.1-mini".into()],
        })
    );
}

#[tokio::test]
async fn azure_recipe_deployment_url_api_key_header_and_api_version() {
    let dialect = Dialect::Azure {
        key: KEY.into(),
        deployment: "review-gpt".into(),
        api_version: "2024-10-21".into(),
    };
    let server = ScriptedServer::start_as(dialect, &[], answering()).await;
    let mut azure = config(&server.base_url(), "gpt-4.1").with_api_key(KEY);
    azure.auth = AuthScheme::ApiKeyHeader;
    azure.query = vec![("api-version".into(), "2024-10-21".into())];
    works(azure.clone()).await;
    let chat = server.chat_requests().pop().unwrap();
    assert_eq!(chat.path, "/openai/deployments/review-gpt/chat/completions");
    assert_eq!(chat.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(chat.header("api-key"), Some(KEY));
    assert_eq!(chat.header("authorization"), None);

    // The key sent as a bearer token is refused like Azure refuses it.
    let mut bearer = azure.clone();
    bearer.auth = AuthScheme::Bearer;
    let refused = check(bearer).await;
    assert!(
        matches!(refused, Err(EndpointProblem::Refused { status: 401, .. })),
        "{refused:?}"
    );

    // A full endpoint URL with the api-version in it works the same way.
    let mut pasted = config(
        &format!(
            "{}/chat/completions?api-version=2024-10-21",
            server.base_url()
        ),
        "gpt-4.1",
    )
    .with_api_key(KEY);
    pasted.auth = AuthScheme::ApiKeyHeader;
    works(pasted).await;

    // Another deployment is Azure's DeploymentNotFound: reported with the deployment
    // name the base URL carries.
    let mut other = azure;
    other.base_url = format!("{}/openai/deployments/nope", server.root_url());
    let missing = check(other).await;
    assert!(
        matches!(missing, Err(EndpointProblem::UnknownDeployment { ref deployment, .. }) if deployment.as_deref() == Some("nope")),
        "{missing:?}"
    );
}

#[tokio::test]
async fn ollama_recipe_port_11434_v1_with_or_without_the_tag() {
    let server = ScriptedServer::start_as(
        Dialect::Ollama,
        &["llama3.2:latest", "qwen2.5-coder:7b"],
        answering(),
    )
    .await;
    works(config(&server.base_url(), "llama3.2")).await;
    works(config(&server.base_url(), "qwen2.5-coder:7b")).await;
    assert!(
        server
            .chat_requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
    let unknown = check(config(&server.base_url(), "llama9")).await;
    assert!(
        matches!(unknown, Err(EndpointProblem::UnknownModel { ref available, .. }) if available.len() == 2),
        "{unknown:?}"
    );
}

#[tokio::test]
async fn vllm_recipe_with_its_api_key() {
    let server = ScriptedServer::start_as(
        Dialect::Vllm {
            key: Some(KEY.into()),
        },
        &["Qwen/Qwen2.5-Coder-32B-Instruct"],
        answering(),
    )
    .await;
    works(config(&server.base_url(), "Qwen/Qwen2.5-Coder-32B-Instruct").with_api_key(KEY)).await;
    let unknown = check(config(&server.base_url(), "qwen").with_api_key(KEY)).await;
    assert!(
        matches!(unknown, Err(EndpointProblem::UnknownModel { .. })),
        "{unknown:?}"
    );
    let refused = check(config(&server.base_url(), "qwen")).await;
    assert!(
        matches!(
            refused,
            Err(EndpointProblem::Refused {
                key_sent: false,
                ..
            })
        ),
        "{refused:?}"
    );
}

#[tokio::test]
async fn llama_cpp_recipe_any_model_name_and_the_root_without_v1() {
    let server = ScriptedServer::start_as(Dialect::LlamaCpp, &["smollm2.gguf"], answering()).await;
    // llama.cpp serves whatever it loaded, whatever the name: the probe confirms it.
    let client = works(config(&server.base_url(), "local")).await;
    let probe = client
        .check_endpoint(&CancellationToken::new())
        .await
        .unwrap();
    assert!(probe.probed_chat);
    // It also answers without /v1.
    works(config(&server.root_url(), "local")).await;
}

#[tokio::test]
async fn openrouter_recipe_api_v1_and_attribution_headers() {
    let server = ScriptedServer::start_as(
        Dialect::OpenRouter { key: KEY.into() },
        &["anthropic/claude-sonnet-4", "openai/gpt-4.1"],
        answering(),
    )
    .await;
    let mut openrouter = config(&server.base_url(), "openai/gpt-4.1").with_api_key(KEY);
    openrouter.extra_headers = vec![
        ("HTTP-Referer".into(), "https://example.com/my-repo".into()),
        ("X-Title".into(), "vouch".into()),
    ];
    works(openrouter).await;
    let chat = server.chat_requests().pop().unwrap();
    assert_eq!(chat.path, "/api/v1/chat/completions");
    assert_eq!(
        chat.header("http-referer"),
        Some("https://example.com/my-repo")
    );
    assert_eq!(chat.header("x-title"), Some("vouch"));
    let unknown = check(config(&server.base_url(), "gpt-4.1").with_api_key(KEY)).await;
    assert!(
        matches!(unknown, Err(EndpointProblem::UnknownModel { .. })),
        "{unknown:?}"
    );
}

#[tokio::test]
async fn a_full_chat_completions_url_is_accepted() {
    let server = ScriptedServer::start(answering()).await;
    works(config(
        &format!("{}/chat/completions", server.base_url()),
        "scripted",
    ))
    .await;
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.path.contains("completions/chat"))
    );
    assert!(server.unmatched().is_empty(), "{:?}", server.unmatched());
}

#[tokio::test]
async fn a_root_without_v1_is_explained_with_the_root_that_answers() {
    let server = ScriptedServer::start_as(
        Dialect::OpenAi { key: KEY.into() },
        &["gpt-4.1"],
        answering(),
    )
    .await;
    let problem = check(config(&server.root_url(), "gpt-4.1").with_api_key(KEY)).await;
    assert_eq!(
        problem,
        Err(EndpointProblem::WrongPath {
            url: format!("{}/chat/completions", server.root_url()),
            suggestion: Some(server.base_url()),
        })
    );
}

#[tokio::test]
async fn unreachable_host_and_tls_failures_are_told_apart() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let refused = check(config(&format!("http://127.0.0.1:{port}/v1"), "m")).await;
    assert!(
        matches!(refused, Err(EndpointProblem::Unreachable { .. })),
        "{refused:?}"
    );
    // https:// to a plain-HTTP server: the handshake fails.
    let server = ScriptedServer::start(answering()).await;
    let tls = check(config(&format!("https://{}/v1", server.addr()), "scripted")).await;
    assert!(matches!(tls, Err(EndpointProblem::Tls { .. })), "{tls:?}");
}

#[tokio::test]
async fn rate_limits_and_server_errors_at_the_check() {
    let limited = ScriptedServer::start(
        answering().models_reply(Reply::status(429).header("Retry-After", "7")),
    )
    .await;
    let problem = check(config(&limited.base_url(), "scripted")).await;
    assert!(
        matches!(problem, Err(EndpointProblem::RateLimited { retry_after: Some(w), .. }) if w == Duration::from_secs(7)),
        "{problem:?}"
    );
    let failing = ScriptedServer::start(
        vouch_testkit::openai::Script::new()
            .models_reply(Reply::status(503))
            .rule(vouch_testkit::openai::Rule::when(Match::any()).always(Reply::status(503))),
    )
    .await;
    let problem = check(config(&failing.base_url(), "scripted")).await;
    assert!(
        matches!(
            problem,
            Err(EndpointProblem::ServerError { status: 503, .. })
        ),
        "{problem:?}"
    );
}

#[tokio::test]
async fn a_refusal_stops_every_client_of_the_endpoint() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(vouch_testkit::openai::Rule::when(Match::any()).always(Reply::status(401))),
    )
    .await;
    let client =
        ModelClient::new(config(&server.base_url(), "scripted").with_api_key(KEY)).unwrap();
    let other = client.for_model("m").unwrap();
    let cancel = CancellationToken::new();
    let first = client.complete(ask("hi"), &cancel).await.unwrap_err();
    assert!(
        matches!(first, LlmError::Http { status: 401, .. }),
        "{first:?}"
    );
    assert_eq!(client.refused_key(), Some(401));
    let second = other.complete(ask("hi"), &cancel).await.unwrap_err();
    assert!(
        matches!(second, LlmError::Http { status: 401, .. }),
        "{second:?}"
    );
    assert_eq!(server.request_count(), 1, "nothing is sent after a refusal");
    assert_eq!(other.requests_sent(), 1);
}

#[tokio::test]
async fn requests_sent_counts_failed_and_retried_requests() {
    let server = ScriptedServer::start(
        Script::new()
            .rule(vouch_testkit::openai::Rule::when(Match::any()).always(Reply::status(500))),
    )
    .await;
    let client = ModelClient::new(config(&server.base_url(), "scripted")).unwrap();
    let error = client
        .complete(ask("hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::RetriesExhausted { attempts: 3, .. }),
        "{error:?}"
    );
    assert_eq!(client.requests_sent(), 3);
    assert_eq!(server.request_count(), 3);
}

/// The window each provider states, learned by the endpoint check: vLLM's
/// `max_model_len` and OpenRouter's `context_length` from the model list, llama.cpp's
/// `n_ctx` from `/props` at the server's root (with or without `/v1` in the base URL).
#[tokio::test]
async fn the_check_learns_the_window_where_the_endpoint_states_it() {
    let vllm = ScriptedServer::start_as(
        Dialect::Vllm { key: None },
        &["qwen-coder"],
        answering().context_window(131_072),
    )
    .await;
    let learned = check(config(&vllm.base_url(), "qwen-coder")).await.unwrap();
    assert_eq!(learned.context_tokens, Some(131_072));

    let openrouter = ScriptedServer::start_as(
        Dialect::OpenRouter { key: KEY.into() },
        &["openai/gpt-4.1", "other/model"],
        answering().context_window(1_047_576),
    )
    .await;
    let learned = check(config(&openrouter.base_url(), "openai/gpt-4.1").with_api_key(KEY))
        .await
        .unwrap();
    assert_eq!(learned.context_tokens, Some(1_047_576));

    let llama = ScriptedServer::start_as(
        Dialect::LlamaCpp,
        &["smollm2.gguf"],
        answering().context_window(65_536),
    )
    .await;
    for base in [llama.base_url(), llama.root_url()] {
        let learned = check(config(&base, "local")).await.unwrap();
        assert_eq!(learned.context_tokens, Some(65_536), "{base}");
    }
    let props: Vec<_> = llama
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/props"))
        .map(|r| r.path)
        .collect();
    assert_eq!(props, ["/props", "/props"]);
}

/// An endpoint that states no window (the generic server, a llama.cpp server whose
/// `/props` has no `n_ctx`) leaves it unknown: the training length in llama.cpp's model
/// list is not taken for it, and no other route is tried.
#[tokio::test]
async fn no_window_is_guessed() {
    let generic = ScriptedServer::start(answering().context_window(131_072)).await;
    let learned = check(config(&generic.base_url(), "m")).await.unwrap();
    assert_eq!(learned.context_tokens, None);
    assert!(generic.unmatched().is_empty(), "{:?}", generic.unmatched());

    let llama = ScriptedServer::start_as(Dialect::LlamaCpp, &["smollm2.gguf"], answering()).await;
    let learned = check(config(&llama.base_url(), "smollm2.gguf"))
        .await
        .unwrap();
    assert_eq!(learned.context_tokens, None);
    assert_eq!(llama.request_count(), 2, "the list and /props");
}

/// `usage.prompt_tokens_details.cached_tokens` is read into the reply's usage and
/// summed like the other counts; a reply without it counts 0.
#[tokio::test]
async fn cached_prompt_tokens_are_counted() {
    let server = ScriptedServer::start(
        Script::new().on(
            Match::any(),
            [
                Reply::content("one")
                    .with_usage(3000, 10)
                    .with_cached_tokens(2048),
                Reply::content("two").with_usage(3100, 10),
            ],
        ),
    )
    .await;
    let client = ModelClient::new(config(&server.base_url(), "m")).unwrap();
    let cancel = CancellationToken::new();
    let mut total = vouch_llm::Usage::default();
    for _ in 0..2 {
        total.add(client.complete(ask("hi"), &cancel).await.unwrap().usage);
    }
    assert_eq!(
        (total.prompt_tokens, total.cached_prompt_tokens),
        (6100, 2048)
    );
    let first = &server.chat_requests()[0];
    assert_eq!(first.path, "/v1/chat/completions");
}
