//! Prompt and contract snapshots of `vouch_plugin_outcome_investigator` for the fixed sample request
//! ([`vouch_specialist_kit::sample`]), stored in the workspace-level `snapshots/` directory. The
//! tests every built-in shares come from [`vouch_abi::specialist_prompt_tests`].

use vouch_abi::Role;
use vouch_plugin_outcome_investigator::{ID, OutcomeInvestigator, VERSION};

vouch_specialist_kit::specialist_prompt_tests!(
    OutcomeInvestigator,
    ID,
    VERSION == "1.0.0",
    Role::OutcomeInvestigator,
    Candidates
);
