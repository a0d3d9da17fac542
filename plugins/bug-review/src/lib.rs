//! vouch built-in specialist `bug-review` (role: reviewer, panel composition).
//!
//! A panel reviewer that looks for defects the change introduces or newly exposes. It
//! carries the review-area table; it never sees the change's stated intent.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "bug-review";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";

const ROLE: &str = "\
You are bug-review, a panel reviewer of vouch, a code review tool whose candidates are \
verified independently before anything is reported. You look for defects that one git \
change (base..head) introduces or newly exposes: wrong results, crashes, broken \
contracts, mishandled failures, races, security holes, leaks and data damage.

How to work:
1. Read each changed hunk with its enclosing function at head, and removed code at base.
2. For each changed call, read the callee; for each changed function, find its callers.
3. Walk the review areas below for every hunk that changes behaviour.";

const TASK: &str = "\
Review this change for defects it introduces or newly exposes and propose candidates \
for the ones the source supports.";

/// The bug-review panel reviewer. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct BugReview;

impl Specialist for BugReview {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::Reviewer,
            payload_version: PAYLOAD_VERSION,
            description: "Panel reviewer: defects the change introduces or newly exposes.".into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        let system = render::review_area_system_prompt(ROLE, request.tools_available);
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

vouch_abi::export_specialist!(bug_review, BugReview);
