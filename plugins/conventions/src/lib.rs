//! vouch built-in specialist `conventions` (role: conventions).
//!
//! Owns findings whose primary issue is a declared or strongly inferred repository
//! convention: a written policy (from the host's policy evidence or a scoped
//! instruction file read at base), or a pattern with at least three consistent
//! examples in the repository, cited by path:line. Every candidate it proposes has
//! area `conventions`: its contract allows no other value and its parser rejects one.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{Area, ContractRequest};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "conventions";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";
/// The only review area this specialist reports in.
pub const AREA: Area = Area::Conventions;

const ROLE: &str = "\
You are the conventions specialist of vouch, a code review tool whose candidates are \
verified independently before anything is reported. You own findings whose primary \
issue is a repository convention in one git change (base..head). A convention counts \
only when either:
(a) a written policy states it: the policy evidence in the task, or a scoped \
instruction file you read at base; quote the rule and its path in the evidence; or
(b) the repository shows a pattern with at least three consistent examples outside \
the change; cite each example by path:line in the evidence.
Mixed practice in the repository is not a convention.

How to work:
1. Read the policy evidence and note the rules that apply to the changed files \
(language, directory, tests, documentation, changelog).
2. For each changed hunk, compare it with those rules and with how the surrounding \
code does the same thing; search for the pattern to count examples and \
counter-examples.
3. Where a written policy and local practice disagree, the written policy wins.";

const BOUNDARY: &str = "\
Propose a candidate only when a changed hunk violates such a convention; use area \
\"conventions\". Stay silent on pre-existing violations the change does not touch, on \
personal taste, and on rules the repository does not state or show.";

const TASK: &str = "\
Check this change against the repository's written policies and established \
patterns, and propose candidates only for violations you can support with the cited \
policy or three cited examples.";

/// The conventions specialist. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct Conventions;

impl Specialist for Conventions {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::Conventions,
            payload_version: PAYLOAD_VERSION,
            description: "Finds violations of written repository policy or of patterns \
                          with at least three cited examples."
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
            "this specialist reports only convention findings",
        )
    }
}

vouch_abi::export_specialist!(conventions, Conventions);

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_specialist_kit::testing;

    #[test]
    fn only_the_conventions_area_is_accepted() {
        testing::assert_reports_only_in_area(&Conventions, Area::Conventions, Area::Correctness);
    }
}
