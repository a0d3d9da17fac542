//! A test plugin that panics: id `test-panicking`, version `0.1.0`. `render_prompt`
//! panics when the label is `panic` and works otherwise; `parse` always panics with a
//! formatted message. The table must turn each panic into an error result.

use serde_json::Value;
use vouch_abi::{Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract};

/// The panicking specialist.
#[derive(Default)]
pub struct Panicking;

impl vouch_abi::Specialist for Panicking {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: "test-panicking".into(),
            version: "0.1.0".into(),
            role: Role::Investigator,
            payload_version: PAYLOAD_VERSION,
            description: "Panics on request (test plugin).".into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        if request.label == "panic" {
            panic!("render_prompt was asked to panic");
        }
        Ok(RenderedPrompt {
            system: "calm".into(),
            user: request.label.clone(),
        })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        candidate_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        panic!("parse cannot handle {reply}");
    }
}

vouch_abi::export_specialist!(test_panicking, Panicking);
