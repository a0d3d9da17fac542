//! The user configuration as a review uses it: the profile, the composition with the
//! user's plugin pins and budget ceilings applied, and the endpoint's precedence.

use std::path::Path;

use vouch_core::{ContextWindow, WindowSource};

use crate::manifest::{
    BudgetCap, Composition, ConfigLocation, EndpointFlags, MIN_CONTEXT_TOKENS, ModelSection,
    ResolvedEndpoint, UserConfig, apply_ceilings, apply_pins, attribute, locate, overlay,
    resolve_endpoint,
};

/// A user configuration that cannot be used (its file, a key, a profile, the manifest
/// it names, a pin): the message names what is wrong and what to change.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

/// The composition in force and what the user configuration changed in it.
pub struct UserComposition {
    /// The composition, pins and ceilings applied.
    pub composition: Composition,
    /// Every budget key a ceiling lowered.
    pub caps: Vec<BudgetCap>,
    /// The ids whose library the user configuration pins.
    pub pinned: Vec<String>,
}

/// Rule: a window the endpoint states below [`MIN_CONTEXT_TOKENS`] (the smallest a
/// manifest or profile may set) is refused before any review work: no request and reply
/// vouch can ask for would fit it.
fn too_small(window: ContextWindow) -> Result<(), SettingsError> {
    if window.source != WindowSource::Endpoint || window.tokens >= MIN_CONTEXT_TOKENS {
        return Ok(());
    }
    Err(SettingsError(format!(
        "the endpoint states a context window of {} tokens, smaller than any window vouch can review in (at least {MIN_CONTEXT_TOKENS}: the stable prompt alone takes about 4,000 tokens)\n  help: serve the model with a larger context (vLLM's --max-model-len, llama.cpp's -c), or use a model with a larger window",
        window.tokens
    )))
}

/// The user configuration of this run.
pub struct UserSettings {
    /// Where the file is (or would be).
    pub location: Option<ConfigLocation>,
    /// Its contents (empty when there is no file).
    pub config: UserConfig,
    /// The chosen profile's name and settings.
    pub profile: Option<(String, ModelSection)>,
    /// The ids of the built-in specialists.
    pub builtins: Vec<String>,
}

impl UserSettings {
    /// Reads the user configuration and picks the profile (`--profile` first).
    /// `builtins` are the ids of the specialists built into the binary, which the
    /// configuration may not pin a library for.
    ///
    /// # Errors
    /// A [`SettingsError`] naming the file and key.
    pub fn load(
        requested_profile: Option<&str>,
        builtins: Vec<String>,
    ) -> Result<UserSettings, SettingsError> {
        let location = locate(&|name| std::env::var(name).ok());
        let config = match &location {
            Some(l) => UserConfig::load(l).map_err(|e| SettingsError(e.to_string()))?,
            None => UserConfig::default(),
        };
        let profile = config
            .profile(requested_profile, location.as_ref())
            .map_err(|e| SettingsError(e.to_string()))?
            .map(|(name, p)| (name.to_owned(), p.clone()));
        Ok(UserSettings {
            location,
            config,
            profile,
            builtins,
        })
    }

    /// No user configuration: the flags, the environment and the manifest decide.
    pub fn none(builtins: Vec<String>) -> UserSettings {
        UserSettings {
            location: None,
            config: UserConfig::default(),
            profile: None,
            builtins,
        }
    }

    /// The composition: `--manifest`, else the user's default composition, else the
    /// built-in default; with the user's plugin pins and budget ceilings applied, and
    /// its budgets sized for the window the configuration sets (if any).
    pub fn composition(&self, manifest: Option<&Path>) -> Result<Composition, SettingsError> {
        Ok(self.composition_applied(manifest)?.composition)
    }

    /// [`Self::composition`], with what the user configuration changed in it.
    pub fn composition_applied(
        &self,
        manifest: Option<&Path>,
    ) -> Result<UserComposition, SettingsError> {
        self.composition_for(manifest, None)
    }

    /// [`Self::composition_applied`] with its budgets sized for the window the
    /// configuration sets (the profile's `context_tokens`, else the manifest's), else for
    /// `stated` (the window the endpoint states), else for none (vouch's defaults):
    /// [`vouch_core::choose_window`].
    pub fn composition_for(
        &self,
        manifest: Option<&Path>,
        stated: Option<u32>,
    ) -> Result<UserComposition, SettingsError> {
        let load = |window| match manifest.or(self.config.composition.as_deref()) {
            Some(path) => {
                Composition::load_for(path, window).map_err(|e| SettingsError(e.to_string()))
            }
            None => Ok(Composition::builtin_default_for(window)),
        };
        let mut composition = load(self.profile_window())?;
        let configured =
            (composition.window.source != WindowSource::Default).then_some(composition.window);
        let window = vouch_core::choose_window(configured, stated);
        too_small(window)?;
        if window != composition.window {
            composition = load(Some(window))?;
        }
        if let Some(id) = self
            .config
            .plugins
            .keys()
            .find(|id| self.builtins.contains(id))
        {
            return Err(SettingsError(format!(
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
    ) -> Result<ResolvedEndpoint, SettingsError> {
        let profile = self.profile.as_ref().map(|(_, p)| p);
        let merged = overlay(profile, manifest);
        let mut endpoint = resolve_endpoint(flags, &|name| std::env::var(name).ok(), &merged)
            .map_err(|e| SettingsError(e.to_string()))?;
        attribute(&mut endpoint, profile);
        Ok(endpoint)
    }
}
