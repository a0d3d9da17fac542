//! Prompt and contract snapshots of `vouch_plugin_investigator` for the fixed sample request
//! ([`vouch_specialist_kit::sample`]), stored in the workspace-level `snapshots/` directory. The
//! tests every built-in shares come from [`vouch_abi::specialist_prompt_tests`].

use vouch_abi::Role;
use vouch_plugin_investigator::{GenericInvestigator, ID, VERSION};
use vouch_specialist_kit::testing;

vouch_specialist_kit::specialist_prompt_tests!(
    GenericInvestigator,
    ID,
    VERSION == "1.0.0",
    Role::Investigator,
    Candidates
);

#[test]
fn prompt_without_tools_matches_snapshot() {
    let prompt = testing::render(&GenericInvestigator, ID, false);
    assert!(!prompt.system.contains("read_file"));
    vouch_specialist_kit::assert_prompt_snapshots!(
        prompt,
        format!("{ID}-system-tools-off"),
        format!("{ID}-user-tools-off")
    );
}
