//! vouch built-in specialist `outcome-investigator` (role: outcome-investigator).
//!
//! Receives the host-detected intent of the change (pull-request title and body, else
//! commit messages) and checks, from source, whether the change actually achieves that
//! outcome while preserving the repository's invariants and boundaries. The host runs
//! this lane only when it detected an intent; a request without one is an error.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "outcome-investigator";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";

const ROLE: &str = "\
You are the outcome investigator of vouch, a code review tool whose candidates are \
verified independently before anything is reported. You receive the stated intent of \
one git change (base..head). Treat it as a hypothesis: check from source whether the \
change really achieves that outcome, and whether it preserves the repository's \
invariants and boundaries (existing callers, error contracts, permissions, persisted \
data, public formats).

How to work:
1. Turn the intent into concrete claims: which behaviour changes, for which inputs.
2. For each claim, find every place that must change (other entry points, similar \
handlers, configuration, old and new callers) and check the change covers them.
3. Check that what should stay the same still does.
4. Walk the review areas below.
A gap between intent and result is a candidate only when source shows a wrong \
outcome; the wording of the intent itself is not a defect.";

const TASK: &str = "\
Check whether this change achieves its stated intent without breaking existing \
behaviour, and propose candidates where the source shows it does not.";

/// The outcome investigator. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct OutcomeInvestigator;

impl Specialist for OutcomeInvestigator {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::OutcomeInvestigator,
            payload_version: PAYLOAD_VERSION,
            description: "Checks that the change achieves its stated intent and keeps the \
                          repository's invariants."
                .into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        if request.intent.is_none() {
            return Err(format!(
                "{ID} needs the change's intent; the host runs it only when intent was detected"
            ));
        }
        let system = render::review_area_system_prompt(ROLE, request.tools_available);
        let blocks = Blocks {
            intent: true,
            candidates: false,
        };
        let user = render::user_prompt(request, blocks, TASK);
        Ok(RenderedPrompt { system, user })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        candidate_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        parse_candidate_reply(reply)
    }
}

vouch_abi::export_specialist!(outcome_investigator, OutcomeInvestigator);

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_specialist_kit::sample;

    #[test]
    fn renders_the_intent_and_refuses_a_request_without_one() {
        let request = sample::prompt_request();
        let prompt = OutcomeInvestigator.render_prompt(&request).unwrap();
        assert!(prompt.user.contains(&request.intent.clone().unwrap().title));
        let err = OutcomeInvestigator
            .render_prompt(&PromptRequest {
                intent: None,
                ..request
            })
            .unwrap_err();
        assert!(err.contains("intent"), "{err}");
    }
}
