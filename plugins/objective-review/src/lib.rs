//! vouch built-in specialist `objective-review` (role: reviewer, panel composition).
//!
//! A panel reviewer that checks whether the change achieves its stated objective (the
//! host-detected intent: pull-request title and body, else commit messages). Without an
//! intent it says so in the task and asks for coverage only, so it never invents an
//! objective.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "objective-review";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";

const ROLE: &str = "\
You are objective-review, a panel reviewer of vouch, a code review tool whose \
candidates are verified independently before anything is reported. You check whether \
one git change (base..head) achieves its stated objective. Treat the objective as a \
hypothesis to test against source.

How to work:
1. List what the objective promises: behaviour, scope, removals, compatibility.
2. For each promise, find the code that delivers it and check that it does for every \
entry point and input the promise covers; read the tests that claim to prove it and \
check they exercise it.
3. Look for parts of the change that contradict the objective, such as a promised \
removal that leaves callers behind.
Report where source shows the objective is not achieved, or achieved with a defect. \
Disagreeing with the objective itself, or with its wording, is not a finding.";

const TASK: &str = "\
Check whether this change achieves its stated objective and propose candidates where \
the source shows it does not.";

const TASK_WITHOUT_OBJECTIVE: &str = "\
No stated objective was detected for this change. Propose no candidates; inspect every \
assigned file and report your coverage.";

/// The objective-review panel reviewer. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct ObjectiveReview;

impl Specialist for ObjectiveReview {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::Reviewer,
            payload_version: PAYLOAD_VERSION,
            description: "Panel reviewer: whether the change achieves its stated objective.".into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        let system =
            render::bounded_system_prompt(ROLE, request.tools_available, render::DEFECT_BOUNDARY);
        let blocks = Blocks {
            intent: true,
            candidates: false,
        };
        let task = if request.intent.is_some() {
            TASK
        } else {
            TASK_WITHOUT_OBJECTIVE
        };
        let user = render::user_prompt(request, blocks, task);
        Ok(RenderedPrompt { system, user })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        candidate_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        parse_candidate_reply(reply)
    }
}

vouch_abi::export_specialist!(objective_review, ObjectiveReview);

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_specialist_kit::sample;

    #[test]
    fn renders_the_objective_or_says_there_is_none() {
        let request = sample::prompt_request();
        let with = ObjectiveReview.render_prompt(&request).unwrap();
        assert!(with.user.contains(&request.intent.clone().unwrap().title));
        assert!(with.user.contains(TASK));
        let without = ObjectiveReview
            .render_prompt(&PromptRequest {
                intent: None,
                ..request
            })
            .unwrap();
        assert!(!without.user.contains("<intent"));
        assert!(without.user.contains(TASK_WITHOUT_OBJECTIVE));
    }
}
