//! vouch built-in specialist `generic-investigator` (role: investigator).
//!
//! Reviews every changed file from the code alone: it follows the affected code, its
//! callers, the contracts it relies on and its tests with the repository tools, and
//! proposes candidates with a coverage receipt. It never sees the change's stated
//! intent: even when a request carries one, this plugin does not render it, so the lane
//! stays independent of what the author claims the change does.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "generic-investigator";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";

const ROLE: &str = "\
You are the generic investigator of vouch, a code review tool whose candidates are \
verified independently before anything is reported. You review one git change \
(base..head) from its code alone.

How to work:
1. Read the diff of every assigned file; read removed or renamed code at base.
2. Follow the affected code outward: callers and callees, the contracts the change \
relies on or alters, configuration, and the tests that exercise it.
3. For each hunk that changes behaviour, walk the review areas below.";

const TASK: &str = "\
Investigate this change as described in your instructions and propose candidates for \
the defects it introduces or newly exposes.";

/// The generic investigator. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct GenericInvestigator;

impl Specialist for GenericInvestigator {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::Investigator,
            payload_version: PAYLOAD_VERSION,
            description: "Reviews every changed file from its code, callers, contracts and \
                          tests; never sees the stated intent."
                .into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        let system = render::review_area_system_prompt(ROLE, request.tools_available);
        // Intent is deliberately never rendered for this role (issue 4).
        let user = render::user_prompt(request, Blocks::default(), TASK);
        Ok(RenderedPrompt { system, user })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        candidate_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        parse_candidate_reply(reply)
    }
}

vouch_abi::export_specialist!(generic_investigator, GenericInvestigator);

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_specialist_kit::sample;

    #[test]
    fn prompt_never_carries_the_stated_intent() {
        let request = sample::prompt_request();
        let intent = request.intent.clone().expect("sample has intent");
        for tools in [true, false] {
            let prompt = GenericInvestigator
                .render_prompt(&PromptRequest {
                    tools_available: tools,
                    ..request.clone()
                })
                .unwrap();
            let text = format!("{}\n{}", prompt.system, prompt.user);
            assert!(!text.contains(&intent.title), "intent title leaked");
            for sentence in intent.body.split(". ") {
                assert!(!text.contains(sentence.trim()), "intent body leaked");
            }
            let lower = text.to_lowercase();
            for word in ["pull request", "pull-request", "description", "intent"] {
                assert!(!lower.contains(word), "prompt mentions {word:?}");
            }
        }
    }
}
