//! A well-behaved test plugin: id `test-echo`, version `1.2.3`. Its prompt echoes the
//! request so tests can see the JSON made the round trip; contract and parser are the
//! standard candidate ones.

use serde_json::Value;
use vouch_abi::{Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};

/// The echo specialist.
#[derive(Default)]
pub struct Echo;

impl vouch_abi::Specialist for Echo {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: "test-echo".into(),
            version: "1.2.3".into(),
            role: Role::Investigator,
            payload_version: PAYLOAD_VERSION,
            description: "Echoes its request (test plugin).".into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        if request.label.is_empty() {
            return Err("the request has no label".into());
        }
        Ok(RenderedPrompt {
            system: format!("echo system for {}", request.label),
            user: format!(
                "{} files at {}",
                request.change.files.len(),
                request.change.head_sha
            ),
        })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        candidate_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        parse_candidate_reply(reply)
    }
}

vouch_abi::export_specialist!(test_echo, Echo);
