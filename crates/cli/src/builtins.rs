//! The built-in specialists linked into the binary, handed to the host's registry as
//! tables (the same C-ABI table path as dynamic plugins).

use vouch_abi::PluginTable;

/// Every built-in specialist's table.
pub(crate) fn tables() -> Vec<&'static PluginTable> {
    vec![
        vouch_plugin_investigator::plugin_table(),
        vouch_plugin_outcome_investigator::plugin_table(),
        vouch_plugin_conventions::plugin_table(),
        vouch_plugin_audit::plugin_table(),
        vouch_plugin_verifier::plugin_table(),
        vouch_plugin_instructions_review::plugin_table(),
        vouch_plugin_bug_review::plugin_table(),
        vouch_plugin_objective_review::plugin_table(),
    ]
}

/// The ids of the built-in specialists.
pub(crate) fn ids() -> Vec<String> {
    let mut registry = vouch_host::registry::Registry::new();
    tables()
        .into_iter()
        .filter_map(|t| registry.add_builtin(t).ok())
        .map(|h| h.descriptor().id.clone())
        .collect()
}
