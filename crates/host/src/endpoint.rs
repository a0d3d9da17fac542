//! The model endpoint as a review uses it: the client configuration built from
//! the resolved endpoint, the check before any stage starts, and the paragraphs that
//! say what to fix when the endpoint refuses.

use std::sync::Arc;

use vouch_llm::{AuthScheme, BaseUrl, EndpointCheck, EndpointConfig, EndpointProblem, ModelClient};

use crate::diagnostics::{Diagnostic, DiagnosticSink, ReasonCode};
use crate::manifest::{ENV_BASE_URL, ENV_MODEL, ResolvedEndpoint, SettingSource};
use crate::review::ReviewError;

/// Most model names listed in an unknown-model message.
const LISTED_MODELS: usize = 20;

/// The client configuration for `endpoint`, and a note for the report when the base
/// URL was given as a full `…/chat/completions` URL (its root is used).
pub fn client_config(endpoint: &ResolvedEndpoint) -> (EndpointConfig, Option<String>) {
    let base = BaseUrl::parse(&endpoint.base_url);
    let note = base.stripped_endpoint.then(|| {
        format!(
            "the base URL named an endpoint path; vouch sends requests under its root {}",
            base.root
        )
    });
    let mut config = EndpointConfig::new(endpoint.base_url.clone(), endpoint.model.clone());
    if let Some(key) = &endpoint.api_key {
        config = config.with_api_key(key.expose());
    }
    config.auth = endpoint.auth;
    config.query = endpoint.query.clone();
    config.extra_headers = endpoint.headers.clone();
    config.request_timeout = endpoint.request_timeout;
    config.max_retries = endpoint.max_retries;
    config.structured_outputs = endpoint.structured_outputs;
    (config, note)
}

/// A model the review sends requests for, and where it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedModel {
    /// The model name its requests carry.
    pub name: String,
    /// The manifest entries whose own `model` pins it (e.g. `[verifier] of the manifest
    /// PATH`); empty when it is the run's default model (`--model`, `VOUCH_MODEL`, …).
    pub pinned_by: Vec<String>,
}

impl PlannedModel {
    /// Where the model was chosen, as the user would change it.
    fn source(&self, endpoint: &ResolvedEndpoint) -> String {
        if self.pinned_by.is_empty() {
            format!(
                "set by {}",
                setting(endpoint.model_source, "--model", ENV_MODEL, "model")
            )
        } else {
            format!(
                "pinned by `model = \"{}\"` in {}; --model and {ENV_MODEL} do not override a pin",
                self.name,
                self.pinned_by.join(" and ")
            )
        }
    }

    /// How to choose another model.
    fn how_to_choose(&self) -> String {
        if self.pinned_by.is_empty() {
            format!("Choose one with --model or {ENV_MODEL}.")
        } else {
            "Set that `model` to one it offers, or remove it so the stage uses the run's \
             default model."
                .to_owned()
        }
    }
}

/// Checks the endpoint before any stage starts, once for each distinct model of the plan
/// (`models`, in plan order; `client_for` gives the client of each): the first check
/// looks at the endpoint and its model list, and a later model is checked again only
/// when that list does not name it (an endpoint that lists no models is asked once per
/// model, as for the default model). A problem is a configuration error: one diagnostic
/// line (`stage: "endpoint"`, its code) on the sink and a [`ReviewError::Usage`] whose text says
/// what to fix. A passed check may return messages for the report (a server that
/// ignores the model name), and the context window the endpoint states (the first
/// checked model's that states one).
pub(crate) async fn check(
    models: &[PlannedModel],
    client_for: impl Fn(&str) -> Arc<ModelClient>,
    endpoint: &ResolvedEndpoint,
    diagnostics: &Arc<dyn DiagnosticSink>,
    job_id: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(Vec<String>, Option<u32>), ReviewError> {
    let mut listed: Vec<String> = Vec::new();
    let mut messages = Vec::new();
    let mut window = None;
    for model in models {
        if cancel.is_cancelled() {
            break;
        }
        if listed.contains(&model.name) {
            continue;
        }
        let problem = match client_for(&model.name).check_endpoint(cancel).await {
            Ok(passed) => {
                messages.extend(any_name_message(&passed, endpoint, model));
                window = window.or(passed.context_tokens);
                if listed.is_empty() {
                    listed = passed.models;
                }
                continue;
            }
            Err(problem) => problem,
        };
        diagnostics.emit(&Diagnostic {
            job_id: job_id.to_owned(),
            label: None,
            stage: "endpoint",
            source_count: None,
            hunk_count: None,
            reason: ReasonCode::from_endpoint_problem(&problem),
        });
        return Err(ReviewError::Usage(explain(&problem, endpoint, model)));
    }
    Ok((messages, window))
}

/// The message of an endpoint that answered a model name it does not list (llama.cpp's
/// server answers every name with the model it loaded): the report would otherwise name
/// a model that never answered.
fn any_name_message(
    check: &EndpointCheck,
    endpoint: &ResolvedEndpoint,
    model: &PlannedModel,
) -> Option<String> {
    if !check.unlisted_model_answered {
        return None;
    }
    let mut listed: Vec<&str> = check.models.iter().map(String::as_str).collect();
    listed.truncate(LISTED_MODELS);
    let first = listed.first().copied().unwrap_or_default();
    let rename = if model.pinned_by.is_empty() {
        format!("set --model or {ENV_MODEL} to {first}")
    } else {
        format!("set that `model` to {first}")
    };
    Some(format!(
        "The endpoint does not list the model \"{name}\" ({from}) but answered a request \
         for it, so the model that answered may not be \"{name}\": llama.cpp's server answers \
         every name with the model it loaded (this one: it lists {list}), and a proxy may route an \
         unlisted name elsewhere. The report names \"{name}\". To have it name the model that \
         answered, {rename}, one the endpoint lists.",
        name = model.name,
        from = model.source(endpoint),
        list = listed.join(", "),
    ))
}

/// Whether the base URL names an Azure OpenAI deployment and no `api-version` is sent.
fn azure_without_version(endpoint: &ResolvedEndpoint) -> bool {
    vouch_llm::azure_deployment(&endpoint.base_url).is_some()
        && !endpoint.query.iter().any(|(k, _)| k == "api-version")
        && !endpoint.base_url.contains("api-version=")
}

/// Where a setting came from, as the user would change it.
fn setting(source: SettingSource, flag: &str, env: &str, key: &str) -> String {
    match source {
        SettingSource::Flag => flag.to_owned(),
        SettingSource::Environment => env.to_owned(),
        SettingSource::Manifest => format!("[model].{key} in the manifest"),
        SettingSource::UserConfig => format!("{key} of the user configuration's profile"),
        SettingSource::Default => "vouch's default".to_owned(),
    }
}

fn base_url_setting(endpoint: &ResolvedEndpoint) -> String {
    setting(
        endpoint.base_url_source,
        "--base-url",
        ENV_BASE_URL,
        "base_url",
    )
}

fn key_header(auth: AuthScheme) -> &'static str {
    match auth {
        AuthScheme::Bearer => "as `Authorization: Bearer`",
        AuthScheme::ApiKeyHeader => "in the `api-key` header",
    }
}

/// The paragraph for `problem`, found checking `model`: what failed, which setting it
/// came from, what to do. Never the key itself.
pub(crate) fn explain(
    problem: &EndpointProblem,
    endpoint: &ResolvedEndpoint,
    model: &PlannedModel,
) -> String {
    let base = base_url_setting(endpoint);
    match problem {
        EndpointProblem::Unreachable { url, detail } => format!(
            "cannot reach the model endpoint at {url} ({detail}). Is the server running and \
             listening on that host and port? The base URL comes from {base}; for a local \
             server start it first (for example `ollama serve`, `vllm serve MODEL`, or \
             `llama-server -m FILE --port 8080`)."
        ),
        EndpointProblem::Tls { url, detail } => format!(
            "the TLS handshake with {url} failed ({detail}). If the server speaks plain HTTP \
             (most local servers do), use an http:// base URL in {base}; otherwise check the \
             server's certificate."
        ),
        EndpointProblem::Timeout { url } => format!(
            "the model endpoint at {url} did not answer in time. Check that the base URL \
             ({base}) points at the server and that it is not overloaded."
        ),
        EndpointProblem::WrongPath { url, suggestion } => {
            wrong_path(url, suggestion.as_deref(), endpoint, &base)
        }
        EndpointProblem::Refused {
            status,
            key_sent,
            detail,
        } => refused(*status, *key_sent, detail, endpoint),
        EndpointProblem::UnknownModel {
            model: name,
            available,
        } => unknown_model(name, available, endpoint, model, &base),
        EndpointProblem::RateLimited {
            retry_after,
            detail,
        } => format!(
            "the model endpoint is refusing requests for now: rate limited or out of quota \
             (HTTP 429: {detail}).{wait} Try again later, lower --concurrency, or check the \
             account's quota and billing.",
            wait = retry_after
                .map(|w| format!(" It asks to wait {} s.", w.as_secs()))
                .unwrap_or_default(),
        ),
        EndpointProblem::UnknownDeployment { deployment, url } => {
            unknown_deployment(deployment.as_deref(), url, &base)
        }
        EndpointProblem::ServerError {
            status,
            url,
            detail,
        } => server_error(*status, url, detail, &model.name),
    }
}

/// The paragraph for a base URL where nothing OpenAI-compatible answers: an Azure
/// deployment URL without its api-version, a server that answers under `suggestion`, or
/// a path to correct.
fn wrong_path(
    url: &str,
    suggestion: Option<&str>,
    endpoint: &ResolvedEndpoint,
    base: &str,
) -> String {
    match suggestion {
        None if azure_without_version(endpoint) => format!(
            "nothing answers at {url}: the base URL ({base}) is an Azure OpenAI deployment URL, \
             and Azure OpenAI answers 404 to every request without an api-version. Set \
             api_version under [model] (in the manifest, or in your profile), for example \
             api_version = \"2024-10-21\", with auth = \"api-key\" (see the README's Azure \
             OpenAI recipe)."
        ),
        Some(root) => format!(
            "nothing OpenAI-compatible answers at {url}, but the server answers under \
             {root}: set the base URL ({base}) to {root}."
        ),
        None => format!(
            "nothing OpenAI-compatible answers at {url}. Set the base URL ({base}) to the \
             server's OpenAI-compatible root, the part before /chat/completions: for example \
             https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama), \
             http://127.0.0.1:8000/v1 (vLLM), or an Azure OpenAI deployment URL with \
             api_version and auth = \"api-key\" under [model] (see the README's recipes)."
        ),
    }
}

/// The paragraph for an endpoint that refused the request for want of a valid key:
/// the key sent was refused, or none was sent.
fn refused(status: u16, key_sent: bool, detail: &str, endpoint: &ResolvedEndpoint) -> String {
    let var = &endpoint.api_key_env;
    if !key_sent {
        return format!(
            "the model endpoint requires an API key (HTTP {status}: {detail}), and none was sent: \
             the environment variable {var} is unset or empty. Export the key in {var}, or name \
             the variable that holds it with --api-key-env.",
        );
    }
    format!(
        "the model endpoint refused the API key (HTTP {status}: {detail}). The key was read \
         from the environment variable {var} and sent {how}. Check that {var} holds a valid \
         key for this endpoint, or name the variable that does with --api-key-env{azure}.",
        how = key_header(endpoint.auth),
        azure = if endpoint.auth == AuthScheme::Bearer {
            " (Azure OpenAI expects its key in the `api-key` header: set auth = \"api-key\" under [model])"
        } else {
            ""
        },
    )
}

/// The paragraph for a model the endpoint does not serve: on Azure OpenAI the deployment
/// in the base URL chooses it; elsewhere the models the server lists are offered.
fn unknown_model(
    name: &str,
    available: &[String],
    endpoint: &ResolvedEndpoint,
    model: &PlannedModel,
    base: &str,
) -> String {
    if endpoint.auth == AuthScheme::ApiKeyHeader {
        return format!(
            "the model endpoint has no deployment or model \"{name}\" at {url}. For \
             Azure OpenAI the deployment name in the base URL ({base}) selects the model: \
             check it against the deployments of your resource.",
            url = endpoint.base_url,
        );
    }
    let offer = if available.is_empty() {
        "It lists no models; use the name the server was started with.".to_owned()
    } else {
        let mut shown: Vec<&str> = available.iter().map(String::as_str).collect();
        shown.sort_unstable();
        shown.dedup();
        let more = shown.len().saturating_sub(LISTED_MODELS);
        shown.truncate(LISTED_MODELS);
        let more = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        format!("It offers: {}{more}.", shown.join(", "))
    };
    format!(
        "the model endpoint does not serve the model \"{name}\" ({from}). {offer} {choose}",
        from = model.source(endpoint),
        choose = model.how_to_choose(),
    )
}

/// The paragraph for an Azure OpenAI resource without the deployment the base URL names.
fn unknown_deployment(deployment: Option<&str>, url: &str, base: &str) -> String {
    let name = deployment
        .map(|d| format!(" named \"{d}\""))
        .unwrap_or_default();
    format!(
        "Azure OpenAI has no deployment{name} on this resource: {url} answered HTTP 404 \
         DeploymentNotFound. The deployment is the path segment after \
         /openai/deployments/ in the base URL (from {base}); --model does not choose it. \
         Put the name of one of your resource's deployments there (Azure AI Foundry → \
         Deployments, or `az cognitiveservices account deployment list -g GROUP -n \
         RESOURCE`). A deployment created in the last few minutes may not answer yet: \
         wait and run vouch again."
    )
}

/// The paragraph for an HTTP 5xx (or another unexpected status) at the check: the server
/// took the request and failed, which no setting of vouch's fixes.
fn server_error(status: u16, url: &str, detail: &str, model: &str) -> String {
    let what = match status {
        503 => format!(
            "the model server at {url} is not ready: it answered HTTP 503 ({detail}) to vouch's \
             one-token test request. A local server answers 503 while it is still loading the \
             model (llama.cpp's server says \"Loading model\"), a hosted one when it is \
             overloaded. Wait until the server is ready (llama.cpp: GET /health answers 200) and \
             run vouch again."
        ),
        502 | 504 => format!(
            "a gateway in front of the model server answered HTTP {status} ({detail}) at {url}: \
             the proxy or load balancer got no answer from the server behind it. Check that the \
             model server behind it is running, then run vouch again."
        ),
        500..=599 => format!(
            "the model server at {url} failed with HTTP {status} ({detail}) on vouch's one-token \
             test request for the model \"{model}\". This is an error inside the server, not a \
             refusal of your key or model name: read the server's log (a model that failed to \
             load or ran out of memory answers this way), fix it, then run vouch again."
        ),
        _ => format!(
            "the model endpoint at {url} answered HTTP {status} ({detail}), which is not an \
             OpenAI-compatible answer. Check that the base URL points at the server's \
             OpenAI-compatible root (https, not http, for a hosted provider) and run vouch again."
        ),
    };
    format!("{what} No review stage was started, so nothing else was sent.")
}

/// The message of a review during which the endpoint refused the key: the remaining
/// stages sent nothing.
pub(crate) fn refused_during_review(status: u16, endpoint: &ResolvedEndpoint) -> String {
    format!(
        "The model endpoint refused the API key (HTTP {status}) during the review, so the \
         remaining stages sent no request. The key was read from the environment variable {var} \
         and sent {how}; check that it holds a valid key for this endpoint.",
        var = endpoint.api_key_env,
        how = key_header(endpoint.auth),
    )
}
