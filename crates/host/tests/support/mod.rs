//! What the host's review tests share: a request against the scripted server, and the
//! services of a test run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use vouch_abi::PluginTable;
use vouch_host::diagnostics::DiagnosticSink;
use vouch_host::manifest::EndpointFlags;
use vouch_host::progress::Presenter;
use vouch_host::review::{ReviewRequest, ReviewServices, ToolsMode};
use vouch_host::settings::UserSettings;
use vouch_testkit::openai::ScriptedServer;

/// A manifest of this repository (e.g. `manifests/panel.toml`).
pub fn manifest(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// A review of `base..head` in `repo` with the composition `manifest`, against
/// `server` (model `scripted`), tools on, no user configuration and no repository
/// configuration, and 12,000 bytes of source inline per execution.
pub fn request(
    repo: &Path,
    base: &str,
    head: &str,
    manifest: PathBuf,
    server: &ScriptedServer,
) -> ReviewRequest {
    ReviewRequest {
        manifest: Some(manifest),
        endpoint: EndpointFlags {
            base_url: Some(server.base_url()),
            model: Some("scripted".into()),
            api_key_env: None,
        },
        tools: Some(ToolsMode::On),
        repo_config: false,
        inline_bytes: Some(12_000),
        command_line: "vouch review (test)".into(),
        ..ReviewRequest::new(
            repo.to_path_buf(),
            Some(base.to_owned()),
            head.to_owned(),
            UserSettings::none(Vec::new()),
        )
    }
}

/// The built-in tables of the panel composition (`manifests/panel.toml`).
#[allow(dead_code, reason = "the fuzzing runs another composition")]
pub fn panel_builtins() -> Vec<&'static PluginTable> {
    vec![
        vouch_plugin_instructions_review::plugin_table(),
        vouch_plugin_bug_review::plugin_table(),
        vouch_plugin_objective_review::plugin_table(),
        vouch_plugin_verifier::plugin_table(),
    ]
}

/// The services of a test review: these built-in tables, presenter, sink and token.
pub fn services(
    builtins: Vec<&'static PluginTable>,
    presenter: Arc<dyn Presenter>,
    diagnostics: Arc<dyn DiagnosticSink>,
    cancel: CancellationToken,
) -> ReviewServices {
    ReviewServices {
        builtins,
        presenter,
        diagnostics,
        cancel,
        working_set_dropped: || {},
    }
}
