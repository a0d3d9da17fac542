//! A test reviewer for end-to-end reviews: id `test-lane`, version `0.1.0`, role
//! `reviewer`. Loaded as a built `.so` pinned by sha256, it runs as a lane on the files
//! its manifest entry selects. Its prompt names its instance and its assigned files;
//! contract and parser are the standard candidate ones.

use serde_json::Value;
use vouch_abi::{Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};

/// The test reviewer.
#[derive(Default)]
pub struct Lane;

impl vouch_abi::Specialist for Lane {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: "test-lane".into(),
            version: "0.1.0".into(),
            role: Role::Reviewer,
            payload_version: PAYLOAD_VERSION,
            description: "Reviews its selected files (test plugin).".into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        let files: Vec<&str> = request
            .change
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        Ok(RenderedPrompt {
            system: "You review the selected files of a change for defects.".into(),
            user: format!(
                "Instance: {}\nSelected files: {}\n## Task\nReview them.",
                request.label,
                files.join(", ")
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

vouch_abi::export_specialist!(test_lane, Lane);
