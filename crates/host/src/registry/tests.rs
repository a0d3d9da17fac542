//! Built-ins through the registry: two specialists exported in this one test binary
//! (no symbol clash), handed over as `&'static PluginTable` like the binary does.

use serde_json::Value;
use vouch_abi::{Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};

use super::{Origin, PluginError, Registry};

mod first {
    use super::*;

    /// Works; panics in `render_prompt` when the label is `panic`.
    #[derive(Default)]
    pub(super) struct First;

    impl vouch_abi::Specialist for First {
        fn describe(&self) -> Descriptor {
            descriptor("builtin-first", "1.0.0")
        }
        fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
            assert_ne!(request.label, "panic", "asked to panic");
            Ok(RenderedPrompt {
                system: "first".into(),
                user: request.label.clone(),
            })
        }
        fn contract(&self, request: &ContractRequest) -> Value {
            candidate_contract(request)
        }
        fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
            parse_candidate_reply(reply)
        }
    }

    vouch_abi::export_specialist!(builtin_first, First);
}

mod second {
    use super::*;

    /// Same shape, another id.
    #[derive(Default)]
    pub(super) struct Second;

    impl vouch_abi::Specialist for Second {
        fn describe(&self) -> Descriptor {
            descriptor("builtin-second", "2.0.0")
        }
        fn render_prompt(&self, _: &PromptRequest) -> Result<RenderedPrompt, String> {
            Err("second renders nothing".into())
        }
        fn contract(&self, request: &ContractRequest) -> Value {
            candidate_contract(request)
        }
        fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
            parse_candidate_reply(reply)
        }
    }

    vouch_abi::export_specialist!(builtin_second, Second);
}

fn descriptor(id: &str, version: &str) -> Descriptor {
    Descriptor {
        id: id.into(),
        version: version.into(),
        role: Role::Investigator,
        payload_version: PAYLOAD_VERSION,
        description: String::new(),
    }
}

#[test]
fn builtins_register_and_run_through_the_table() {
    let mut registry = Registry::new();
    registry.add_builtin(first::plugin_table()).unwrap();
    registry.add_builtin(second::plugin_table()).unwrap();

    let first = registry.get("builtin-first", "1.0.0").unwrap();
    assert_eq!(first.origin(), &Origin::BuiltIn);
    let mut request = vouch_specialist_kit::sample::prompt_request();
    assert_eq!(first.render_prompt(&request).unwrap().user, "sample #1");

    request.label = "panic".into();
    match first.render_prompt(&request) {
        Err(PluginError::Panicked { message, .. }) => {
            assert!(message.contains("asked to panic"), "{message}")
        }
        other => panic!("expected a caught panic, got {other:?}"),
    }
    request.label = "after".into();
    assert_eq!(first.render_prompt(&request).unwrap().user, "after");

    let second = registry.get("builtin-second", "2.0.0").unwrap();
    match second.render_prompt(&request) {
        Err(PluginError::Method { message, .. }) => assert_eq!(message, "second renders nothing"),
        other => panic!("expected a method error, got {other:?}"),
    }
}

#[test]
fn a_builtin_pinned_at_another_version_names_both_versions() {
    let mut registry = Registry::new();
    registry.add_builtin(first::plugin_table()).unwrap();
    let err = registry.get("builtin-first", "1.1.0").unwrap_err();
    assert!(
        matches!(&err, PluginError::WrongVersion { expected, found, .. } if expected == "1.1.0" && found == "1.0.0"),
        "{err:?}"
    );
    assert!(err.to_string().contains("1.1.0") && err.to_string().contains("1.0.0"));
}

#[test]
fn the_same_builtin_twice_is_a_duplicate() {
    let mut registry = Registry::new();
    registry.add_builtin(first::plugin_table()).unwrap();
    assert!(matches!(
        registry.add_builtin(first::plugin_table()),
        Err(PluginError::Duplicate { .. })
    ));
}
