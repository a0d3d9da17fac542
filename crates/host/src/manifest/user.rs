//! The user's own configuration: `$VOUCH_CONFIG`, else
//! `$XDG_CONFIG_HOME/vouch/config.toml`, else `~/.config/vouch/config.toml`.
//!
//! It holds endpoint profiles (each a `[model]` table, chosen with `--profile NAME` or
//! its `profile` key), a default composition (used when no `--manifest` is given),
//! budget ceilings (`[budget]`) and pinned dynamic plugins (`[plugins.ID]`), which
//! `user_apply` applies to the composition. Precedence of an endpoint setting: flags > environment > user profile > `[model]` of
//! the manifest > built-in default; the `--manifest` flag itself beats the user's
//! default composition.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::budget::BudgetOverride;
use super::endpoint::{
    CREDENTIAL_HEADERS, MIN_CONTEXT_TOKENS, ModelSection, ResolvedEndpoint, SettingSource,
    is_env_name, is_header_name, is_http_url,
};
use super::user_apply::PluginPin;

/// Environment variable naming the user configuration file.
pub const ENV_CONFIG: &str = "VOUCH_CONFIG";

/// The user configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// The profile used when `--profile` is not given.
    pub profile: Option<String>,
    /// The composition manifest used when `--manifest` is not given (a relative path
    /// resolves against the configuration file's folder).
    pub composition: Option<PathBuf>,
    /// Endpoint profiles by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, ModelSection>,
    /// Budget ceilings: every stage's limits are capped at these (never raised).
    #[serde(default)]
    pub budget: BudgetOverride,
    /// Pinned dynamic plugins by id, used by every composition entry with that id.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginPin>,
}

/// Where the user configuration file is, and which rule found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLocation {
    /// The file (it may not exist).
    pub path: PathBuf,
    /// `VOUCH_CONFIG`, `XDG_CONFIG_HOME` or `HOME`.
    pub from: &'static str,
}

/// A problem with the user configuration: the message names the file and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}\n  help: {help}")]
pub struct UserConfigError {
    /// The configuration file.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: String,
}

/// Rule: `VOUCH_CONFIG` (when set and non-empty) names the file; else
/// `$XDG_CONFIG_HOME/vouch/config.toml` (when set and absolute); else
/// `$HOME/.config/vouch/config.toml`; with none of them, there is no user file.
pub fn locate(env: &dyn Fn(&str) -> Option<String>) -> Option<ConfigLocation> {
    let env = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(path) = env(ENV_CONFIG) {
        return Some(ConfigLocation {
            path: PathBuf::from(path),
            from: ENV_CONFIG,
        });
    }
    if let Some(xdg) = env("XDG_CONFIG_HOME").filter(|p| Path::new(p).is_absolute()) {
        return Some(ConfigLocation {
            path: Path::new(&xdg).join("vouch/config.toml"),
            from: "XDG_CONFIG_HOME",
        });
    }
    env("HOME").map(|home| ConfigLocation {
        path: Path::new(&home).join(".config/vouch/config.toml"),
        from: "HOME",
    })
}

impl UserConfig {
    /// Reads and checks the file at `location`; a missing file is an empty
    /// configuration unless `VOUCH_CONFIG` named it (then it is an error).
    ///
    /// # Errors
    /// Unreadable file, TOML error, unknown key or bad value.
    pub fn load(location: &ConfigLocation) -> Result<UserConfig, UserConfigError> {
        let shown = location.path.display().to_string();
        let fail = |message: String, help: &str| UserConfigError {
            path: shown.clone(),
            message,
            help: help.to_owned(),
        };
        let text = match std::fs::read_to_string(&location.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && location.from != ENV_CONFIG => {
                return Ok(UserConfig::default());
            }
            Err(e) => {
                return Err(fail(
                    format!("cannot read the user configuration: {e}"),
                    "create the file, or unset VOUCH_CONFIG",
                ));
            }
        };
        let mut config: UserConfig = toml::from_str(&text).map_err(|e| {
            fail(
                e.message().to_owned(),
                "see the keys of the user configuration in docs/manifests.md",
            )
        })?;
        for (name, profile) in &config.profiles {
            check_profile(profile)
                .map_err(|(key, help)| fail(format!("profiles.{name}.{key} is not valid"), help))?;
        }
        check_ceilings(&config.budget)
            .map_err(|(key, help)| fail(format!("budget.{key} is 0"), help))?;
        for (id, pin) in &mut config.plugins {
            check_pin(id, pin)
                .map_err(|(key, help)| fail(format!("plugins.{id}{key} is not valid"), help))?;
            pin.sha256 = pin.sha256.to_ascii_lowercase();
            if let Some(folder) = location.path.parent() {
                pin.library = folder.join(&pin.library);
            }
        }
        if let (Some(path), Some(folder)) = (&config.composition, location.path.parent()) {
            config.composition = Some(folder.join(path));
        }
        Ok(config)
    }

    /// The profile to use: `requested` (from `--profile`), else the file's `profile`;
    /// `None` when neither names one.
    ///
    /// # Errors
    /// A named profile the file does not define (the message lists those it does).
    pub fn profile(
        &self,
        requested: Option<&str>,
        location: Option<&ConfigLocation>,
    ) -> Result<Option<(&str, &ModelSection)>, UserConfigError> {
        let Some(name) = requested.or(self.profile.as_deref()) else {
            return Ok(None);
        };
        match self.profiles.get_key_value(name) {
            Some((name, profile)) => Ok(Some((name.as_str(), profile))),
            None => Err(UserConfigError {
                path: location
                    .map(|l| l.path.display().to_string())
                    .unwrap_or_else(|| "no user configuration file".to_owned()),
                message: format!("there is no profile named {name:?}"),
                help: if self.profiles.is_empty() {
                    "define it as [profiles.NAME] in the user configuration".to_owned()
                } else {
                    format!(
                        "the profiles defined are: {}",
                        self.profiles.keys().cloned().collect::<Vec<_>>().join(", ")
                    )
                },
            }),
        }
    }
}

fn check_ceilings(b: &BudgetOverride) -> Result<(), (&'static str, &'static str)> {
    let keys = [
        ("max_turns", b.max_turns),
        ("max_tool_calls", b.max_tool_calls),
        ("max_output_tokens", b.max_output_tokens),
        ("max_total_tokens", b.max_total_tokens),
        ("max_shard_tokens", b.max_shard_tokens),
        ("max_shards", b.max_shards),
        ("max_request_tokens", b.max_request_tokens),
    ];
    match keys.into_iter().find(|(_, v)| *v == Some(0)) {
        Some((key, _)) => Err((
            key,
            "a ceiling of 0 would stop every stage; use a positive number or remove the key",
        )),
        None => Ok(()),
    }
}

fn check_pin(id: &str, pin: &PluginPin) -> Result<(), (&'static str, &'static str)> {
    let kebab = id.split('-').all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    if !kebab {
        return Err((
            "",
            "name the table after the plugin's id, in lowercase kebab-case: [plugins.my-review]",
        ));
    }
    if pin.library.as_os_str().is_empty() {
        return Err((
            ".library",
            "give the path of the plugin's shared library; `vouch specialist pin LIBRARY` prints it",
        ));
    }
    if pin.sha256.len() != 64 || !pin.sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err((
            ".sha256",
            "use the 64 hex digits `vouch specialist pin LIBRARY` (or `sha256sum LIBRARY`) prints",
        ));
    }
    Ok(())
}

fn check_profile(p: &ModelSection) -> Result<(), (&'static str, &'static str)> {
    if p.base_url.as_deref().is_some_and(|u| !is_http_url(u)) {
        return Err(("base_url", "use an http:// or https:// URL"));
    }
    if p.api_key_env.as_deref().is_some_and(|n| !is_env_name(n)) {
        return Err((
            "api_key_env",
            "give the NAME of the variable holding the key, never the key itself",
        ));
    }
    if p.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(("model", "name a model or remove the key"));
    }
    if p.request_timeout_secs == Some(0) {
        return Err(("request_timeout_secs", "use a positive number of seconds"));
    }
    if p.context_tokens.is_some_and(|t| t < MIN_CONTEXT_TOKENS) {
        return Err((
            "context_tokens",
            "use the model's context window in tokens, at least 8192 (e.g. 131072)",
        ));
    }
    let credential = |name: &str| CREDENTIAL_HEADERS.contains(&name.to_ascii_lowercase().as_str());
    if p.headers
        .keys()
        .any(|n| !is_header_name(n) || credential(n))
    {
        return Err((
            "headers",
            "use plain header names; keys travel only through api_key_env",
        ));
    }
    Ok(())
}

/// Rule: every `[model]` key the user profile sets wins over the manifest's (flags and
/// the environment are applied later, by `resolve_endpoint`, and win over both).
pub fn overlay(profile: Option<&ModelSection>, manifest: &ModelSection) -> ModelSection {
    let Some(p) = profile else {
        return manifest.clone();
    };
    let m = manifest;
    ModelSection {
        base_url: p.base_url.clone().or_else(|| m.base_url.clone()),
        model: p.model.clone().or_else(|| m.model.clone()),
        api_key_env: p.api_key_env.clone().or_else(|| m.api_key_env.clone()),
        request_timeout_secs: p.request_timeout_secs.or(m.request_timeout_secs),
        max_retries: p.max_retries.or(m.max_retries),
        structured_outputs: p.structured_outputs.or(m.structured_outputs),
        auth: p.auth.or(m.auth),
        api_version: p.api_version.clone().or_else(|| m.api_version.clone()),
        context_tokens: p.context_tokens.or(m.context_tokens),
        headers: if p.headers.is_empty() {
            m.headers.clone()
        } else {
            p.headers.clone()
        },
    }
}

/// Marks the base URL and model the profile supplied as coming from the user
/// configuration (`resolve_endpoint` saw them as manifest values).
pub fn attribute(endpoint: &mut ResolvedEndpoint, profile: Option<&ModelSection>) {
    let Some(p) = profile else { return };
    if endpoint.base_url_source == SettingSource::Manifest && p.base_url.is_some() {
        endpoint.base_url_source = SettingSource::UserConfig;
    }
    if endpoint.model_source == SettingSource::Manifest && p.model.is_some() {
        endpoint.model_source = SettingSource::UserConfig;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn location_rule() {
        // (environment, expected path, found through)
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<(&'a str, &'a str)>);
        let cases: [Case; 6] = [
            (
                &[
                    ("VOUCH_CONFIG", "/c.toml"),
                    ("XDG_CONFIG_HOME", "/x"),
                    ("HOME", "/h"),
                ],
                Some(("/c.toml", "VOUCH_CONFIG")),
            ),
            (
                &[
                    ("VOUCH_CONFIG", ""),
                    ("XDG_CONFIG_HOME", "/x"),
                    ("HOME", "/h"),
                ],
                Some(("/x/vouch/config.toml", "XDG_CONFIG_HOME")),
            ),
            (
                &[("XDG_CONFIG_HOME", "relative"), ("HOME", "/h")],
                Some(("/h/.config/vouch/config.toml", "HOME")),
            ),
            (
                &[("HOME", "/h")],
                Some(("/h/.config/vouch/config.toml", "HOME")),
            ),
            (
                &[("XDG_CONFIG_HOME", "/x")],
                Some(("/x/vouch/config.toml", "XDG_CONFIG_HOME")),
            ),
            (&[], None),
        ];
        for (env, expected) in cases {
            let got = locate(&env_of(env));
            let got = got.as_ref().map(|l| (l.path.to_str().unwrap(), l.from));
            assert_eq!(got, expected, "{env:?}");
        }
    }

    #[test]
    fn the_profile_wins_over_the_manifest_key_by_key() {
        let manifest = ModelSection {
            base_url: Some("http://manifest/v1".into()),
            model: Some("manifest-model".into()),
            max_retries: Some(1),
            headers: [("X-Title".to_owned(), "manifest".to_owned())].into(),
            ..ModelSection::default()
        };
        let profile = ModelSection {
            model: Some("profile-model".into()),
            api_key_env: Some("PROFILE_KEY".into()),
            ..ModelSection::default()
        };
        let merged = overlay(Some(&profile), &manifest);
        assert_eq!(merged.base_url.as_deref(), Some("http://manifest/v1"));
        assert_eq!(merged.model.as_deref(), Some("profile-model"));
        assert_eq!(merged.api_key_env.as_deref(), Some("PROFILE_KEY"));
        assert_eq!(merged.max_retries, Some(1));
        assert_eq!(merged.headers, manifest.headers);
        assert_eq!(overlay(None, &manifest), manifest);
    }

    fn load_text(text: &str) -> Result<UserConfig, UserConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        UserConfig::load(&ConfigLocation {
            path,
            from: ENV_CONFIG,
        })
    }

    #[test]
    fn bad_files_name_the_key_and_never_echo_a_key() {
        let pasted = load_text("[profiles.work]\napi_key_env = \"sk-live-SECRET\"\n").unwrap_err();
        assert!(
            pasted.to_string().contains("profiles.work.api_key_env"),
            "{pasted}"
        );
        assert!(!pasted.to_string().contains("SECRET"), "{pasted}");
        let header = load_text("[profiles.work.headers]\nAuthorization = \"Bearer sk-SECRET\"\n")
            .unwrap_err();
        assert!(
            header.to_string().contains("profiles.work.headers"),
            "{header}"
        );
        assert!(!header.to_string().contains("SECRET"), "{header}");
        let unknown = load_text("profle = \"x\"\n").unwrap_err();
        assert!(unknown.to_string().contains("profle"), "{unknown}");
        let missing = UserConfig::load(&ConfigLocation {
            path: "/nonexistent/vouch.toml".into(),
            from: ENV_CONFIG,
        });
        assert!(missing.is_err(), "a file named by VOUCH_CONFIG must exist");
        let absent = UserConfig::load(&ConfigLocation {
            path: "/nonexistent/vouch.toml".into(),
            from: "HOME",
        });
        assert_eq!(absent, Ok(UserConfig::default()));
    }

    #[test]
    fn ceilings_and_pins_are_checked_and_resolved() {
        let sha = "AB".repeat(32);
        let good = load_text(&format!(
            "[budget]\nmax_turns = 6\n[plugins.my-review]\nlibrary = \"lib/libmy_review.so\"\nsha256 = \"{sha}\"\n"
        ))
        .unwrap();
        assert_eq!(good.budget.max_turns, Some(6));
        let pin = &good.plugins["my-review"];
        assert!(pin.library.is_absolute() && pin.library.ends_with("lib/libmy_review.so"));
        assert_eq!(pin.sha256, "ab".repeat(32));
        // (file, the key its error names)
        let cases = [
            ("[budget]\nmax_tool_calls = 0\n", "budget.max_tool_calls"),
            ("[budget]\nmax_turn = 3\n", "max_turn"),
            (
                "[plugins.my-review]\nlibrary = \"x.so\"\nsha256 = \"abc\"\n",
                "plugins.my-review.sha256",
            ),
            (
                "[plugins.my-review]\nlibrary = \"\"\nsha256 = \"ab\"\n",
                "plugins.my-review.library",
            ),
            (
                &format!("[plugins.My_Review]\nlibrary = \"x.so\"\nsha256 = \"{sha}\"\n"),
                "plugins.My_Review",
            ),
            ("[plugins.my-review]\nlibrary = \"x.so\"\n", "sha256"),
        ];
        for (text, key) in cases {
            let error = load_text(text).unwrap_err();
            assert!(error.to_string().contains(key), "{key}: {error}");
        }
    }

    #[test]
    fn profiles_are_chosen_by_flag_then_file() {
        let config = load_text("profile = \"a\"\ncomposition = \"panel.toml\"\n[profiles.a]\nmodel = \"ma\"\n[profiles.b]\nmodel = \"mb\"\n").unwrap();
        assert_eq!(config.profile(None, None).unwrap().unwrap().0, "a");
        assert_eq!(config.profile(Some("b"), None).unwrap().unwrap().0, "b");
        let error = config.profile(Some("c"), None).unwrap_err();
        assert!(error.help.contains("a, b"), "{error}");
        assert!(config.composition.unwrap().ends_with("panel.toml"));
        assert_eq!(UserConfig::default().profile(None, None), Ok(None));
    }
}
