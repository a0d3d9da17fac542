//! The model's context window: how many tokens one request and its reply may hold
//! together, and where vouch learned it. Budgets are derived from it (the host's
//! manifest budget rule); the report states it.

use serde::{Deserialize, Serialize};

/// The window assumed when neither the endpoint nor the configuration says one: 32k
/// tokens, the size vouch's default budgets were chosen for.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 32_768;

/// Where the context window came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WindowSource {
    /// The endpoint said it (vLLM's `max_model_len`, llama.cpp's `n_ctx`, OpenRouter's
    /// `context_length`).
    Endpoint,
    /// `[model] context_tokens` of the composition manifest.
    Manifest,
    /// `context_tokens` of the user configuration's profile.
    UserConfig,
    /// Nobody said: [`DEFAULT_CONTEXT_TOKENS`].
    Default,
}

impl WindowSource {
    /// Its name as the report writes it (`endpoint`, `manifest`, `user-config`, `default`).
    pub fn as_str(self) -> &'static str {
        match self {
            WindowSource::Endpoint => "endpoint",
            WindowSource::Manifest => "manifest",
            WindowSource::UserConfig => "user-config",
            WindowSource::Default => "default",
        }
    }
}

/// The model's context window in tokens, and its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextWindow {
    /// Tokens of prompt and reply together.
    pub tokens: u32,
    /// Where vouch learned it.
    pub source: WindowSource,
}

impl Default for ContextWindow {
    /// [`DEFAULT_CONTEXT_TOKENS`] from [`WindowSource::Default`].
    fn default() -> Self {
        ContextWindow {
            tokens: DEFAULT_CONTEXT_TOKENS,
            source: WindowSource::Default,
        }
    }
}

/// Rule: the window a review uses. A window set in the configuration (`explicit`: the
/// profile's or the manifest's `context_tokens`) wins over one the endpoint states
/// (`discovered`); with neither, [`DEFAULT_CONTEXT_TOKENS`].
pub fn choose_window(explicit: Option<ContextWindow>, discovered: Option<u32>) -> ContextWindow {
    explicit
        .or(discovered.map(|tokens| ContextWindow {
            tokens,
            source: WindowSource::Endpoint,
        }))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explicit_window_wins_then_the_endpoint_then_the_default() {
        let manifest = ContextWindow {
            tokens: 65_536,
            source: WindowSource::Manifest,
        };
        let endpoint = ContextWindow {
            tokens: 131_072,
            source: WindowSource::Endpoint,
        };
        for (explicit, discovered, chosen) in [
            (Some(manifest), Some(131_072), manifest),
            (Some(manifest), None, manifest),
            (None, Some(131_072), endpoint),
            (None, None, ContextWindow::default()),
        ] {
            assert_eq!(choose_window(explicit, discovered), chosen);
        }
        assert_eq!(ContextWindow::default().tokens, 32_768);
        assert_eq!(ContextWindow::default().source.as_str(), "default");
    }
}
