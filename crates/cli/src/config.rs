//! `vouch config show`: the effective endpoint and composition with where each value
//! came from (keys redacted).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use vouch_host::manifest::{
    ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, EndpointFlags, ResolvedEndpoint, SettingSource,
};
use vouch_host::settings::{UserComposition, UserSettings};

use vouch_core::{ContextWindow, WindowSource};

use crate::stdout::Text;

/// `vouch config`.
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print the effective configuration and where each value came from (keys redacted).
    Show(ShowArgs),
}

/// Arguments of `vouch config show` (the endpoint flags of `vouch review`).
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Endpoint profile of the user configuration.
    #[arg(long)]
    pub(crate) profile: Option<String>,
    /// Composition manifest.
    #[arg(long)]
    pub(crate) manifest: Option<PathBuf>,
    /// Base URL flag, as for `vouch review`.
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Model flag, as for `vouch review`.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// API key variable flag, as for `vouch review`.
    #[arg(long)]
    pub(crate) api_key_env: Option<String>,
    /// Ask the endpoint for the model's context window, as a review does (its model
    /// list, and llama.cpp's /props), and show the budgets sized for it.
    #[arg(long)]
    pub(crate) ask_endpoint: bool,
}

fn source_of(source: SettingSource, flag: &str, env: &str) -> String {
    match source {
        SettingSource::Flag => flag.to_owned(),
        SettingSource::Environment => env.to_owned(),
        other => other.as_str().to_owned(),
    }
}

/// `vouch config show`.
pub(crate) async fn show(args: &ShowArgs) -> Result<i32> {
    let user = UserSettings::load(args.profile.as_deref(), crate::builtins::ids())?;
    let first = user
        .composition_applied(args.manifest.as_deref())?
        .composition;
    let flags = EndpointFlags {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
    };
    let endpoint = user.endpoint(&flags, &first.model);
    let asked = match (&endpoint, args.ask_endpoint) {
        (Ok(e), true) => Some(stated_window(e).await),
        _ => None,
    };
    let stated = asked
        .as_ref()
        .and_then(|a| a.as_ref().ok().copied().flatten());
    let applied = user.composition_for(args.manifest.as_deref(), stated)?;
    let composition = &applied.composition;
    let mut out = Text::default();
    out.line(format_args!("# vouch's effective configuration"));
    out.line(format_args!(
        "# precedence: flags > environment > user config > --manifest > repository file > built-in default"
    ));
    match &user.location {
        Some(l) if l.path.exists() => out.line(format_args!(
            "user_config = {:?}  # found through {}",
            l.path.display().to_string(),
            l.from
        )),
        Some(l) => out.line(format_args!(
            "user_config = none  # {} (through {}) does not exist",
            l.path.display(),
            l.from
        )),
        None => out.line(format_args!(
            "user_config = none  # neither VOUCH_CONFIG, XDG_CONFIG_HOME nor HOME is set"
        )),
    }
    match &user.profile {
        Some((name, _)) => out.line(format_args!(
            "profile = {name:?}  # from {}",
            if args.profile.is_some() {
                "--profile"
            } else {
                "user config"
            }
        )),
        None => out.line(format_args!("profile = none")),
    }
    let composition_from = if args.manifest.is_some() {
        "--manifest"
    } else if user.config.composition.is_some() {
        "user config"
    } else {
        "default"
    };
    out.line(format_args!(
        "composition = {:?}  # {} ({composition_from})",
        composition.name,
        composition.origin.display()
    ));
    match &endpoint {
        Ok(e) => print_endpoint(e, &mut out),
        Err(e) => out.line(format_args!("# endpoint: not configured: {e}")),
    }
    print_window(composition.window, asked.as_ref(), &mut out);
    print_budget(&applied, &mut out);
    print_plugins(&user, &applied, &mut out);
    out.print("the configuration")?;
    Ok(0)
}

/// The window the endpoint states (`Ok(None)`: it states none), or the code of the
/// problem its check found.
async fn stated_window(endpoint: &ResolvedEndpoint) -> Result<Option<u32>, &'static str> {
    let (config, _) = vouch_host::endpoint::client_config(endpoint);
    let client = vouch_llm::ModelClient::new(config).map_err(|_| "client-config")?;
    let cancel = tokio_util::sync::CancellationToken::new();
    match client.check_endpoint(&cancel).await {
        Ok(checked) => Ok(checked.context_tokens),
        Err(problem) => Err(problem.code()),
    }
}

/// `context_tokens`: the window the budgets are sized for and where it came from.
fn print_window(
    window: ContextWindow,
    asked: Option<&Result<Option<u32>, &'static str>>,
    out: &mut Text,
) {
    let why = match (window.source, asked) {
        (WindowSource::Endpoint, _) => "stated by the endpoint".to_owned(),
        (WindowSource::Manifest, _) => "manifest".to_owned(),
        (WindowSource::UserConfig, _) => "user config".to_owned(),
        (WindowSource::Default, None) => "default; a review takes the window the endpoint states \
             (vLLM max_model_len, llama.cpp n_ctx, OpenRouter context_length): see it with \
             --ask-endpoint"
            .to_owned(),
        (WindowSource::Default, Some(Ok(_))) => "default; the endpoint states none".to_owned(),
        (WindowSource::Default, Some(Err(code))) => {
            format!("default; the endpoint check failed ({code})")
        }
    };
    out.line(format_args!("context_tokens = {}  # {why}", window.tokens));
}

/// `[budget]`: each key of the composition's default budget with where it came from,
/// then every other stage budget a ceiling lowered.
fn print_budget(applied: &UserComposition, out: &mut Text) {
    let c = &applied.composition;
    out.line(format_args!(
        "[budget]  # every stage's limits; the reviewed repository's {} may lower them further",
        vouch_host::manifest::REPO_OVERRIDE_PATH
    ));
    let (b, set) = (&c.budget, &c.budget_set);
    let keys = [
        ("max_turns", b.max_turns, set.max_turns.is_some()),
        (
            "max_tool_calls",
            b.max_tool_calls,
            set.max_tool_calls.is_some(),
        ),
        (
            "max_output_tokens",
            b.max_output_tokens,
            set.max_output_tokens.is_some(),
        ),
        (
            "max_total_tokens",
            b.max_total_tokens,
            set.max_total_tokens.is_some(),
        ),
        (
            "max_shard_tokens",
            b.max_shard_tokens,
            set.max_shard_tokens.is_some(),
        ),
        ("max_shards", b.max_shards, set.max_shards.is_some()),
        (
            "max_request_tokens",
            b.max_request_tokens,
            set.max_request_tokens.is_some(),
        ),
    ];
    for (key, value, from_manifest) in keys {
        let builtin = c.origin.to_string_lossy().starts_with("builtin:");
        let sized = matches!(
            key,
            "max_output_tokens" | "max_request_tokens" | "max_shard_tokens" | "max_total_tokens"
        ) && c.window.source != WindowSource::Default;
        let asked_from = match (from_manifest, builtin, sized) {
            (true, true, _) => "built-in composition",
            (true, false, _) => "manifest",
            (false, _, true) => "derived from context_tokens",
            (false, _, false) => "default",
        };
        match applied
            .caps
            .iter()
            .find(|cap| cap.stage == "[budget]" && cap.key == key)
        {
            Some(cap) => out.line(format_args!(
                "{key} = {value}  # capped by the user config's [budget] (the composition asks {} from its {asked_from})",
                cap.asked
            )),
            None => out.line(format_args!("{key} = {value}  # {asked_from}")),
        }
    }
    for cap in applied.caps.iter().filter(|cap| cap.stage != "[budget]") {
        out.line(format_args!(
            "# {}: {} capped from {} to {} by the user config's [budget]",
            cap.stage, cap.key, cap.asked, cap.ceiling
        ));
    }
}

/// `[plugins.ID]` of the user configuration, and which entries of the composition use each.
fn print_plugins(user: &UserSettings, applied: &UserComposition, out: &mut Text) {
    for (id, pin) in &user.config.plugins {
        let used = if applied.pinned.contains(id) {
            "used by this composition; it wins over the manifest's own library"
        } else {
            "not used by this composition"
        };
        out.line(format_args!("[plugins.{id}]  # user config, {used}"));
        out.line(format_args!(
            "library = {:?}",
            pin.library.display().to_string()
        ));
        out.line(format_args!("sha256 = {:?}", pin.sha256));
    }
}

fn print_endpoint(e: &ResolvedEndpoint, out: &mut Text) {
    out.line(format_args!("[model]"));
    out.line(format_args!(
        "base_url = {:?}  # {}",
        vouch_llm::without_credentials(&e.base_url),
        source_of(e.base_url_source, "--base-url", ENV_BASE_URL)
    ));
    out.line(format_args!(
        "model = {:?}  # {}",
        e.model,
        source_of(e.model_source, "--model", ENV_MODEL)
    ));
    let key = if e.api_key.is_some() {
        "set, [redacted]"
    } else {
        "unset"
    };
    out.line(format_args!(
        "api_key_env = {:?}  # the key: {key}",
        e.api_key_env
    ));
    if e.api_key_env != ENV_API_KEY {
        out.line(format_args!(
            "# (the default variable would be {ENV_API_KEY})"
        ));
    }
    out.line(format_args!("auth = {:?}", e.auth.as_str()));
    for (k, v) in &e.query {
        out.line(format_args!("# query parameter {k} = {v:?}"));
    }
    for (name, _) in &e.headers {
        out.line(format_args!("# extra header {name}: [value not shown]"));
    }
    out.line(format_args!(
        "request_timeout_secs = {}",
        e.request_timeout.as_secs()
    ));
    out.line(format_args!("max_retries = {}", e.max_retries));
    out.line(format_args!(
        "structured_outputs = {}",
        e.structured_outputs
    ));
}
