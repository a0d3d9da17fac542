//! vouch built-in specialist `instructions-review` (role: reviewer, panel composition).
//!
//! A panel reviewer that checks the change against the repository's written
//! instructions: AGENTS.md, CLAUDE.md, CONTRIBUTING.md and scoped instruction files,
//! all read from the base tree so a change cannot rewrite its own rules. Its candidates
//! all have area `conventions`, so the verifier judges them by the convention boundary
//! (the quoted written instruction exists and a changed hunk violates it): the contract
//! allows no other area and the parser rejects one.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{Area, ContractRequest};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "instructions-review";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";
/// The only review area this reviewer reports in.
pub const AREA: Area = Area::Conventions;

const ROLE: &str = "\
You are instructions-review, a panel reviewer of vouch, a code review tool whose \
candidates are verified independently before anything is reported. You check one git \
change (base..head) against the repository's written instructions: AGENTS.md, \
CLAUDE.md, CONTRIBUTING.md and scoped instruction files (the same kinds of file in \
subdirectories, and documents they point to). The host gives the root documents from \
the base tree as policy evidence.

How to work:
1. Read the policy evidence. Find scoped instruction files that apply to the changed \
paths (a file in a directory applies to everything below it) and read them at base: \
the change must not rewrite its own rules. A nearer scoped file overrides a root one.
2. Collect the instructions that apply to each changed file: required steps \
(changelog entries, tests, documentation, generated files), forbidden patterns, \
naming, layout, error handling.
3. Check each changed hunk, and the change as a whole, against them.";

const BOUNDARY: &str = "\
Propose a candidate only when the change violates an instruction that is written \
down: quote it with its path in the evidence and use area \"conventions\". Stay \
silent on guidance the instructions do not state and on pre-existing violations the \
change does not touch.";

const TASK: &str = "\
Check this change against the repository's written instructions and propose \
candidates for the violations you can quote.";

/// The instructions-review panel reviewer. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct InstructionsReview;

impl Specialist for InstructionsReview {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::Reviewer,
            payload_version: PAYLOAD_VERSION,
            description: "Panel reviewer: the change against the repository's written \
                          instructions."
                .into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        let system = render::bounded_system_prompt(ROLE, request.tools_available, BOUNDARY);
        let user = render::user_prompt(request, Blocks::default(), TASK);
        Ok(RenderedPrompt { system, user })
    }

    /// The standard candidate contract with `area` restricted to `conventions`.
    fn contract(&self, request: &ContractRequest) -> Value {
        render::single_area_contract(request, AREA)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        render::parse_single_area_reply(
            reply,
            AREA,
            "instruction violations use the conventions area",
        )
    }
}

vouch_abi::export_specialist!(instructions_review, InstructionsReview);

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_specialist_kit::testing;

    #[test]
    fn only_the_conventions_area_is_accepted() {
        testing::assert_reports_only_in_area(
            &InstructionsReview,
            Area::Conventions,
            Area::Security,
        );
    }
}
