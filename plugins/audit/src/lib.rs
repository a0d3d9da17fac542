//! vouch built-in specialist `clean-result-audit` (role: clean-result-audit).
//!
//! Runs only when no lane proposed a candidate for a non-empty change: an independent
//! second look that reconstructs before/after behaviour (reading base and head) and
//! works through concrete boundary inputs. Its candidates are verified like any other;
//! it never reports directly.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "clean-result-audit";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";

const ROLE: &str = "\
You are the clean-result audit of vouch, a code review tool whose candidates are \
verified independently before anything is reported. The other reviewers proposed \
nothing for this git change (base..head); you take an independent second look before \
it is called clean. Assume neither that they were right nor that they missed \
something.

How to work:
1. For each changed hunk, reconstruct the behaviour before (read base) and after \
(read head): which inputs reach it, what it returns, writes or raises.
2. Choose concrete boundary inputs and trace them through both versions: empty, zero, \
one, the maximum, missing or null, duplicated, malformed, non-ASCII, repeated or \
concurrent calls, and mixed permitted and forbidden items.
3. Where behaviour differs, decide from the code and tests whether the difference is \
intended or a defect.
4. Walk the review areas below.
Your candidates are verified like any other.";

const TASK: &str = "\
Audit this change: compare its before and after behaviour on concrete boundary \
inputs and propose candidates only where the comparison shows a defect.";

/// The clean-result audit. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct CleanResultAudit;

impl Specialist for CleanResultAudit {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::CleanResultAudit,
            payload_version: PAYLOAD_VERSION,
            description: "Second look at a change no lane flagged: before/after behaviour on \
                          concrete boundary inputs."
                .into(),
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

vouch_abi::export_specialist!(clean_result_audit, CleanResultAudit);
