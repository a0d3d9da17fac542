//! The model endpoint: where requests go, which model, which key, and the precedence
//! that decides it (design, "Configuration and trust": flags > environment > manifest).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use vouch_llm::AuthScheme;

/// Environment variable holding the OpenAI-compatible base URL.
pub const ENV_BASE_URL: &str = "OPENAI_BASE_URL";
/// Environment variable holding the API key, unless `api_key_env` names another.
pub const ENV_API_KEY: &str = "OPENAI_API_KEY";
/// Environment variable holding the model name.
pub const ENV_MODEL: &str = "VOUCH_MODEL";
/// Per-request timeout when none is configured, in seconds.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 120;
/// Retries of one request on 429/5xx when none are configured.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Smallest `context_tokens` a manifest or profile may set: vouch's stable prompt alone
/// takes about 4,000 tokens, and a request needs room for a shard and the reply too.
pub const MIN_CONTEXT_TOKENS: u32 = 8_192;

/// The `[model]` table of a composition manifest. Every key is optional; flags and the
/// environment take precedence (see [`resolve_endpoint`]). A repository's
/// `.vouch/review.toml` may never set any of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// OpenAI-compatible base URL, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    /// Model name sent in every request.
    pub model: Option<String>,
    /// The NAME of the environment variable holding the API key (never the key).
    pub api_key_env: Option<String>,
    /// Per-request timeout in seconds (default 120).
    pub request_timeout_secs: Option<u64>,
    /// Retries of one request on 429/5xx, honouring `Retry-After` (default 3).
    pub max_retries: Option<u32>,
    /// Whether final answers are requested with `response_format: json_schema`
    /// (default true).
    pub structured_outputs: Option<bool>,
    /// How the key is sent: `bearer` (default) or `api-key` (Azure OpenAI).
    pub auth: Option<AuthScheme>,
    /// Azure OpenAI's `api-version` query parameter, sent with every request.
    pub api_version: Option<String>,
    /// The model's context window in tokens, when the endpoint does not state it or
    /// states it wrongly: it wins over what the endpoint says, and budgets not set
    /// explicitly are derived from it ([`super::Budget::sized`]).
    pub context_tokens: Option<u32>,
    /// Extra headers sent with every request (e.g. OpenRouter's `HTTP-Referer`,
    /// `X-Title`). Never a credential: keys travel only through `api_key_env`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// Endpoint settings given as command-line flags (highest precedence).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointFlags {
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--api-key-env`: the name of the variable holding the key.
    pub api_key_env: Option<String>,
}

/// Where a resolved setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingSource {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Environment,
    /// The composition manifest.
    Manifest,
    /// A profile of the user configuration (`--profile`, or its `profile` key).
    UserConfig,
    /// vouch's built-in default.
    Default,
}

impl SettingSource {
    /// How `vouch config show` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingSource::Flag => "flag",
            SettingSource::Environment => "environment",
            SettingSource::Manifest => "manifest",
            SettingSource::UserConfig => "user config",
            SettingSource::Default => "default",
        }
    }
}

/// An API key. Its `Debug` output is redacted and it has no `Display`, so it cannot leak
/// through logs, errors or reports by formatting.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// The endpoint every model request of one review uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedEndpoint {
    /// OpenAI-compatible base URL (`http://` or `https://`).
    pub base_url: String,
    /// Where `base_url` came from.
    pub base_url_source: SettingSource,
    /// Default model name.
    pub model: String,
    /// Where `model` came from.
    pub model_source: SettingSource,
    /// The key, when the variable named by `api_key_env` is set and non-empty.
    pub api_key: Option<ApiKey>,
    /// The name of the variable the key was read from.
    pub api_key_env: String,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// Retries of one request on 429/5xx.
    pub max_retries: u32,
    /// Whether final answers are requested with `response_format: json_schema`.
    pub structured_outputs: bool,
    /// How the key is sent.
    pub auth: AuthScheme,
    /// Query parameters of every request (`api-version`).
    pub query: Vec<(String, String)>,
    /// Extra headers of every request.
    pub headers: Vec<(String, String)>,
}

impl ResolvedEndpoint {
    /// Rule (model selection, `docs/manifests.md`): a stage instance's requests name its
    /// specialist's own `model` when its manifest entry sets one (`own`); every other
    /// instance uses the run's default model, `--model` > `VOUCH_MODEL` > `[model].model`.
    /// A specialist pinned to a model keeps it whatever the default is; the flag and the
    /// variable change the default, never a pin.
    pub fn model_for<'a>(&'a self, own: Option<&'a str>) -> &'a str {
        own.unwrap_or(&self.model)
    }
}

/// Why no endpoint could be resolved. Messages name what to set and never contain a
/// setting's value (a URL may embed credentials).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// No base URL and/or no model anywhere.
    #[error("{}", not_configured_message(*.base_url_missing, *.model_missing))]
    NotConfigured {
        /// No base URL in flags, environment or manifest.
        base_url_missing: bool,
        /// No model in flags, environment or manifest.
        model_missing: bool,
    },
    /// The base URL is not an `http://` or `https://` URL.
    #[error(
        "the base URL from {setting} is not an http:// or https:// URL\n  help: set it to the server's OpenAI-compatible root, e.g. http://127.0.0.1:8080/v1"
    )]
    BadBaseUrl {
        /// The flag, variable or manifest key it came from.
        setting: String,
    },
    /// `api_key_env` is not a valid environment variable name.
    #[error(
        "the API key variable name from {setting} is not an environment variable name\n  help: give the NAME of the variable holding the key (e.g. OPENAI_API_KEY), never the key itself"
    )]
    BadApiKeyEnv {
        /// The flag or manifest key it came from.
        setting: String,
    },
}

fn not_configured_message(base_url_missing: bool, model_missing: bool) -> String {
    let mut message = String::from("no model endpoint is configured");
    if base_url_missing {
        message.push_str(&format!(
            "\n  set the endpoint with --base-url or {ENV_BASE_URL} (e.g. http://127.0.0.1:8080/v1)"
        ));
    }
    if model_missing {
        message.push_str(&format!("\n  set the model with --model or {ENV_MODEL}"));
    }
    message.push_str(&format!(
        "\n  (or base_url / model under [model] in the manifest given to --manifest); if the server needs a key, put it in {ENV_API_KEY}"
    ));
    message
}

/// Resolves the endpoint: each setting from `flags`, else the environment (read through
/// `env`, where empty values count as unset), else `manifest`, else the default. Pure:
/// the caller passes `|name| std::env::var(name).ok()` in production.
///
/// Errors: [`EndpointError::NotConfigured`] when the base URL or model is set nowhere;
/// [`EndpointError::BadBaseUrl`] / [`EndpointError::BadApiKeyEnv`] for malformed values
/// from flags or the environment (manifest values are validated when it is parsed).
pub fn resolve_endpoint(
    flags: &EndpointFlags,
    env: &dyn Fn(&str) -> Option<String>,
    manifest: &ModelSection,
) -> Result<ResolvedEndpoint, EndpointError> {
    let env = |name: &str| env(name).filter(|v| !v.is_empty());
    let base_url = pick(&flags.base_url, env(ENV_BASE_URL), &manifest.base_url);
    let model = pick(&flags.model, env(ENV_MODEL), &manifest.model);
    let (Some((base_url, base_url_source)), Some((model, model_source))) =
        (base_url.clone(), model.clone())
    else {
        return Err(EndpointError::NotConfigured {
            base_url_missing: base_url.is_none(),
            model_missing: model.is_none(),
        });
    };
    if !is_http_url(&base_url) {
        let setting = match base_url_source {
            SettingSource::Flag => "--base-url",
            SettingSource::Environment => ENV_BASE_URL,
            _ => "[model].base_url",
        };
        return Err(EndpointError::BadBaseUrl {
            setting: setting.to_owned(),
        });
    }
    let (api_key_env, key_setting) = match (&flags.api_key_env, &manifest.api_key_env) {
        (Some(name), _) => (name.clone(), "--api-key-env"),
        (None, Some(name)) => (name.clone(), "[model].api_key_env"),
        (None, None) => (ENV_API_KEY.to_owned(), ENV_API_KEY),
    };
    if !is_env_name(&api_key_env) {
        return Err(EndpointError::BadApiKeyEnv {
            setting: key_setting.to_owned(),
        });
    }
    Ok(ResolvedEndpoint {
        base_url,
        base_url_source,
        model,
        model_source,
        api_key: env(&api_key_env).map(ApiKey),
        api_key_env,
        request_timeout: Duration::from_secs(
            manifest
                .request_timeout_secs
                .unwrap_or(DEFAULT_REQUEST_TIMEOUT_SECS),
        ),
        max_retries: manifest.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
        structured_outputs: manifest.structured_outputs.unwrap_or(true),
        auth: manifest.auth.unwrap_or_default(),
        query: manifest
            .api_version
            .iter()
            .map(|v| ("api-version".to_owned(), v.clone()))
            .collect(),
        headers: manifest
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    })
}

fn pick(
    flag: &Option<String>,
    env: Option<String>,
    manifest: &Option<String>,
) -> Option<(String, SettingSource)> {
    let flag = flag.clone().filter(|v| !v.is_empty());
    flag.map(|v| (v, SettingSource::Flag))
        .or(env.map(|v| (v, SettingSource::Environment)))
        .or(manifest.clone().map(|v| (v, SettingSource::Manifest)))
}

/// Whether `value` looks like an `http://` or `https://` URL with a host.
pub(crate) fn is_http_url(value: &str) -> bool {
    let rest = value
        .strip_prefix("http://")
        .or_else(|| value.strip_prefix("https://"));
    rest.is_some_and(|r| {
        !r.is_empty() && !r.starts_with('/') && !r.chars().any(char::is_whitespace)
    })
}

/// Headers that carry credentials: never set in a manifest, only through `api_key_env`.
pub(crate) const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "api-key",
    "proxy-authorization",
    "cookie",
    "x-api-key",
];

/// Whether `name` is an HTTP header name (RFC 9110 token characters).
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether `name` is a portable environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128
}
