//! The user configuration as the commands use it, and `vouch config show`: the
//! effective endpoint and composition with where each value came from (keys redacted).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use vouch_host::manifest::{
    BudgetCap, Composition, ConfigLocation, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, EndpointFlags,
    ModelSection, ResolvedEndpoint, SettingSource, UserConfig, apply_ceilings, apply_pins,
    attribute, locate, overlay, resolve_endpoint,
};

use vouch_core::{ContextWindow, WindowSource};

use crate::UsageError;

/// `vouch config`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration and where each value came from (keys redacted).
    Show(ShowArgs),
}

/// Arguments of `vouch config show` (the endpoint flags of `vouch review`).
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Endpoint profile of the user configuration.
    #[arg(long)]
    pub profile: Option<String>,
    /// Composition manifest.
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// Base URL flag, as for `vouch review`.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model flag, as for `vouch review`.
    #[arg(long)]
    pub model: Option<String>,
    /// API key variable flag, as for `vouch review`.
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Ask the endpoint for the model's context window, as a review does (its model
    /// list, and llama.cpp's /props), and show the budgets sized for it.
    #[arg(long)]
    pub ask_endpoint: bool,
}

/// The composition in force and what the user configuration changed in it.
pub struct UserComposition {
    /// The composition, pins and ceilings applied.
    pub composition: Composition,
    /// Every budget key a ceiling lowered.
    pub caps: Vec<BudgetCap>,
    /// The ids whose library the user configuration pins.
    pub pinned: Vec<String>,
}

/// The user configuration of this run.
pub struct UserSettings {
    /// Where the file is (or would be).
    pub location: Option<ConfigLocation>,
    /// Its contents (empty when there is no file).
    pub config: UserConfig,
    /// The chosen profile's name and settings.
    pub profile: Option<(String, ModelSection)>,
}

impl UserSettings {
    /// Reads the user configuration and picks the profile (`--profile` first).
    ///
    /// # Errors
    /// A [`UsageError`] naming the file and key.
    pub fn load(requested_profile: Option<&str>) -> Result<UserSettings, UsageError> {
        let location = locate(&|name| std::env::var(name).ok());
        let config = match &location {
            Some(l) => UserConfig::load(l).map_err(|e| UsageError(e.to_string()))?,
            None => UserConfig::default(),
        };
        let profile = config
            .profile(requested_profile, location.as_ref())
            .map_err(|e| UsageError(e.to_string()))?
            .map(|(name, p)| (name.to_owned(), p.clone()));
        Ok(UserSettings {
            location,
            config,
            profile,
        })
    }

    /// The composition: `--manifest`, else the user's default composition, else the
    /// built-in default; with the user's plugin pins and budget ceilings applied, and
    /// its budgets sized for the window the configuration sets (if any).
    pub fn composition(&self, manifest: Option<&PathBuf>) -> Result<Composition, UsageError> {
        Ok(self.composition_applied(manifest)?.composition)
    }

    /// [`Self::composition`], with what the user configuration changed in it.
    pub fn composition_applied(
        &self,
        manifest: Option<&PathBuf>,
    ) -> Result<UserComposition, UsageError> {
        self.composition_for(manifest, None)
    }

    /// [`Self::composition_applied`] with its budgets sized for the window the
    /// configuration sets (the profile's `context_tokens`, else the manifest's), else for
    /// `stated` (the window the endpoint states), else for none (vouch's defaults):
    /// [`vouch_core::choose_window`].
    pub fn composition_for(
        &self,
        manifest: Option<&PathBuf>,
        stated: Option<u32>,
    ) -> Result<UserComposition, UsageError> {
        let load = |window| match manifest.or(self.config.composition.as_ref()) {
            Some(path) => {
                Composition::load_for(path, window).map_err(|e| UsageError(e.to_string()))
            }
            None => Ok(Composition::builtin_default_for(window)),
        };
        let mut composition = load(self.profile_window())?;
        let configured =
            (composition.window.source != WindowSource::Default).then_some(composition.window);
        let window = vouch_core::choose_window(configured, stated);
        if window != composition.window {
            composition = load(Some(window))?;
        }
        let builtin = crate::builtins::ids();
        if let Some(id) = self.config.plugins.keys().find(|id| builtin.contains(id)) {
            return Err(UsageError(format!(
                "{}: plugins.{id} pins a library for `{id}`, which is a built-in specialist\n  help: give your plugin its own id (its `describe` reports it) and name that id in the composition",
                self.file_name()
            )));
        }
        let pinned = apply_pins(&mut composition, &self.config.plugins);
        let caps = apply_ceilings(&mut composition, &self.config.budget);
        Ok(UserComposition {
            composition,
            caps,
            pinned,
        })
    }

    /// The window the chosen profile sets.
    fn profile_window(&self) -> Option<ContextWindow> {
        let (_, profile) = self.profile.as_ref()?;
        profile.context_tokens.map(|tokens| ContextWindow {
            tokens,
            source: WindowSource::UserConfig,
        })
    }

    fn file_name(&self) -> String {
        self.location
            .as_ref()
            .map(|l| l.path.display().to_string())
            .unwrap_or_else(|| "the user configuration".to_owned())
    }

    /// The endpoint: flags > environment > this profile > the manifest's `[model]`.
    pub fn endpoint(
        &self,
        flags: &EndpointFlags,
        manifest: &ModelSection,
    ) -> Result<ResolvedEndpoint, UsageError> {
        let profile = self.profile.as_ref().map(|(_, p)| p);
        let merged = overlay(profile, manifest);
        let mut endpoint = resolve_endpoint(flags, &|name| std::env::var(name).ok(), &merged)
            .map_err(|e| UsageError(e.to_string()))?;
        attribute(&mut endpoint, profile);
        Ok(endpoint)
    }
}

fn source_of(source: SettingSource, flag: &str, env: &str) -> String {
    match source {
        SettingSource::Flag => flag.to_owned(),
        SettingSource::Environment => env.to_owned(),
        other => other.as_str().to_owned(),
    }
}

/// `vouch config show`.
pub async fn show(args: &ShowArgs) -> Result<i32> {
    let user = UserSettings::load(args.profile.as_deref())?;
    let first = user
        .composition_applied(args.manifest.as_ref())?
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
    let applied = user.composition_for(args.manifest.as_ref(), stated)?;
    let composition = &applied.composition;
    println!("# vouch's effective configuration");
    println!(
        "# precedence: flags > environment > user config > --manifest > repository file > built-in default"
    );
    match &user.location {
        Some(l) if l.path.exists() => {
            println!(
                "user_config = {:?}  # found through {}",
                l.path.display().to_string(),
                l.from
            )
        }
        Some(l) => println!(
            "user_config = none  # {} (through {}) does not exist",
            l.path.display(),
            l.from
        ),
        None => {
            println!("user_config = none  # neither VOUCH_CONFIG, XDG_CONFIG_HOME nor HOME is set")
        }
    }
    match &user.profile {
        Some((name, _)) => println!(
            "profile = {name:?}  # from {}",
            if args.profile.is_some() {
                "--profile"
            } else {
                "user config"
            }
        ),
        None => println!("profile = none"),
    }
    let composition_from = if args.manifest.is_some() {
        "--manifest"
    } else if user.config.composition.is_some() {
        "user config"
    } else {
        "default"
    };
    println!(
        "composition = {:?}  # {} ({composition_from})",
        composition.name,
        composition.origin.display()
    );
    match &endpoint {
        Ok(e) => print_endpoint(e),
        Err(e) => println!("# endpoint: not configured: {e}"),
    }
    print_window(composition.window, asked.as_ref());
    print_budget(&applied);
    print_plugins(&user, &applied);
    Ok(0)
}

/// The window the endpoint states (`Ok(None)`: it states none), or the code of the
/// problem its check found.
async fn stated_window(endpoint: &ResolvedEndpoint) -> Result<Option<u32>, &'static str> {
    let (config, _) = crate::endpoint::client_config(endpoint);
    let client = vouch_llm::ModelClient::new(config).map_err(|_| "client-config")?;
    let cancel = tokio_util::sync::CancellationToken::new();
    match client.check_endpoint(&cancel).await {
        Ok(checked) => Ok(checked.context_tokens),
        Err(problem) => Err(problem.code()),
    }
}

/// `context_tokens`: the window the budgets are sized for and where it came from.
fn print_window(window: ContextWindow, asked: Option<&Result<Option<u32>, &'static str>>) {
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
    println!("context_tokens = {}  # {why}", window.tokens);
}

/// `[budget]`: each key of the composition's default budget with where it came from,
/// then every other stage budget a ceiling lowered.
fn print_budget(applied: &UserComposition) {
    let c = &applied.composition;
    println!(
        "[budget]  # every stage's limits; the reviewed repository's {} may lower them further",
        vouch_host::manifest::REPO_OVERRIDE_PATH
    );
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
            "max_request_tokens" | "max_shard_tokens" | "max_total_tokens"
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
            Some(cap) => println!(
                "{key} = {value}  # capped by the user config's [budget] (the composition asks {} from its {asked_from})",
                cap.asked
            ),
            None => println!("{key} = {value}  # {asked_from}"),
        }
    }
    for cap in applied.caps.iter().filter(|cap| cap.stage != "[budget]") {
        println!(
            "# {}: {} capped from {} to {} by the user config's [budget]",
            cap.stage, cap.key, cap.asked, cap.ceiling
        );
    }
}

/// `[plugins.ID]` of the user configuration, and which entries of the composition use each.
fn print_plugins(user: &UserSettings, applied: &UserComposition) {
    for (id, pin) in &user.config.plugins {
        let used = if applied.pinned.contains(id) {
            "used by this composition; it wins over the manifest's own library"
        } else {
            "not used by this composition"
        };
        println!("[plugins.{id}]  # user config, {used}");
        println!("library = {:?}", pin.library.display().to_string());
        println!("sha256 = {:?}", pin.sha256);
    }
}

fn print_endpoint(e: &ResolvedEndpoint) {
    println!("[model]");
    println!(
        "base_url = {:?}  # {}",
        vouch_llm::without_credentials(&e.base_url),
        source_of(e.base_url_source, "--base-url", ENV_BASE_URL)
    );
    println!(
        "model = {:?}  # {}",
        e.model,
        source_of(e.model_source, "--model", ENV_MODEL)
    );
    let key = if e.api_key.is_some() {
        "set, [redacted]"
    } else {
        "unset"
    };
    println!("api_key_env = {:?}  # the key: {key}", e.api_key_env);
    if e.api_key_env != ENV_API_KEY {
        println!("# (the default variable would be {ENV_API_KEY})");
    }
    println!("auth = {:?}", e.auth.as_str());
    for (k, v) in &e.query {
        println!("# query parameter {k} = {v:?}");
    }
    for (name, _) in &e.headers {
        println!("# extra header {name}: [value not shown]");
    }
    println!("request_timeout_secs = {}", e.request_timeout.as_secs());
    println!("max_retries = {}", e.max_retries);
    println!("structured_outputs = {}", e.structured_outputs);
}
