//! Prompt and contract snapshots of `vouch_plugin_verifier` for the fixed sample request
//! ([`vouch_specialist_kit::sample`]), stored in the workspace-level `snapshots/` directory. The
//! tests every built-in shares come from [`vouch_abi::specialist_prompt_tests`].

use vouch_abi::Role;
use vouch_plugin_verifier::{ID, VERSION, Verifier};

vouch_specialist_kit::specialist_prompt_tests!(
    Verifier,
    ID,
    VERSION == "1.0.0",
    Role::Verifier,
    Decisions
);
