//! Prompt and contract snapshots of `vouch_plugin_conventions` for the fixed sample request
//! ([`vouch_abi::sample`]), stored in the workspace-level `snapshots/` directory.

use serde_json::json;
use vouch_abi::{PAYLOAD_VERSION, ParsedReply, PromptRequest, Role, Specialist, sample};
use vouch_plugin_conventions::{Conventions, ID, VERSION};

/// Runs the body with snapshots stored in `<workspace>/snapshots`, named without a
/// module prefix (each name starts with the plugin id instead).
macro_rules! in_snapshots {
    ($body:block) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/../../snapshots"),
            prepend_module_to_snapshot => false,
        }, $body)
    };
}

fn request(tools_available: bool) -> PromptRequest {
    PromptRequest {
        label: format!("{ID} #1"),
        tools_available,
        ..sample::prompt_request()
    }
}

#[test]
fn prompt_matches_snapshot() {
    let prompt = Conventions.render_prompt(&request(true)).expect("renders");
    assert!(prompt.system.contains("read_file"));
    in_snapshots!({
        insta::assert_snapshot!(format!("{ID}-system"), prompt.system);
        insta::assert_snapshot!(format!("{ID}-user"), prompt.user);
    });
}

#[test]
fn contract_matches_snapshot() {
    let contract = Conventions.contract(&sample::contract_request());
    in_snapshots!({
        insta::assert_json_snapshot!(format!("{ID}-contract"), contract);
    });
}

#[test]
fn system_prompt_fits_a_small_model() {
    for tools in [true, false] {
        let prompt = Conventions.render_prompt(&request(tools)).expect("renders");
        let words = prompt.system.split_whitespace().count();
        assert!(words <= 600, "{ID} system prompt has {words} words");
    }
}

#[test]
fn describes_itself_and_parses_a_contract_reply() {
    let descriptor = Conventions.describe();
    assert_eq!(descriptor.id, ID);
    assert_eq!(descriptor.version, "1.0.0");
    assert_eq!(VERSION, "1.0.0");
    assert_eq!(descriptor.role, Role::Conventions);
    assert_eq!(descriptor.payload_version, PAYLOAD_VERSION);
    let reply = json!({"candidates": [], "coverage": {"complete": true,
        "reviewedFiles": sample::contract_request().expected_files}, "summary": "nothing found"});
    assert!(matches!(
        Conventions.parse(&reply),
        Ok(ParsedReply::Candidates(_))
    ));
    assert!(Conventions.parse(&json!({"unexpected": true})).is_err());
}
