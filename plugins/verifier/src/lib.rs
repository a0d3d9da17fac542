//! vouch built-in specialist `verifier` (role: verifier).
//!
//! Receives every candidate of every lane and returns exactly one decision per
//! candidate id: `verified`, `rejected` or `unresolved`, with the decisive evidence and
//! citations `{revision, path, startLine, endLine}` to source it read in this execution.
//! Its prompt carries the reporting boundary of issue 4 and the separate boundary for
//! convention candidates. It returns no coverage receipt.

use serde_json::Value;
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role, Specialist,
};
use vouch_specialist_kit::contract::{ContractRequest, parse_verifier_reply, verifier_contract};
use vouch_specialist_kit::render::{self, Blocks};

/// Plugin id (also the base of the export symbol).
pub const ID: &str = "verifier";
/// Plugin version, pinned by manifests.
pub const VERSION: &str = "1.0.0";

const ROLE: &str = "\
You are the verifier of vouch, a code review tool that reports only findings proven \
from repository source. Other reviewers proposed the candidates in the task for one \
git change (base..head). For each candidate id, return exactly one decision:
- verified: source you read proves the defect within the reporting boundary. Give the \
finding at the candidate's path; you may narrow its severity, line range or wording to \
what the evidence supports, but never replace it with a different defect.
- rejected: source you read disproves the claim or puts it outside the boundary.
- unresolved: you could not read enough source to decide; say what is missing.
The evidence states the decisive fact. Citations {revision, path, startLine, endLine} \
point only to lines you read in this execution or were given inline; use revision \
\"base\" for removed code.

How to work:
1. Take each candidate on its own. Read the cited lines and the code around them \
yourself; the proposer's claim and evidence are not proof.
2. Look for what would prevent the defect (validation in callers, types, guards, \
tests) before verifying.";

const CONVENTION_BOUNDARY: &str = "\
Convention candidates (area conventions) are judged by their own boundary instead: \
verify only when the cited written policy exists (in the policy evidence or a file you \
read at base), or you confirm at least three consistent repository examples and cite \
them, and a changed hunk violates it.";

const TASK: &str = "\
Decide every candidate above: exactly one decision per candidate id, with evidence and \
citations to source you read.";

/// The verifier. Stateless; one value serves every instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct Verifier;

impl Specialist for Verifier {
    fn describe(&self) -> Descriptor {
        Descriptor {
            id: ID.into(),
            version: VERSION.into(),
            role: Role::Verifier,
            payload_version: PAYLOAD_VERSION,
            description: "Decides every candidate (verified, rejected or unresolved) with \
                          citations to source it read."
                .into(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        if request.candidates.is_empty() {
            return Err(format!("{ID} needs at least one candidate to decide"));
        }
        let system = render::system_prompt(&[
            ROLE,
            render::tools_note(request.tools_available),
            render::REPORTING_BOUNDARY,
            CONVENTION_BOUNDARY,
        ]);
        let blocks = Blocks {
            intent: false,
            candidates: true,
        };
        let user = render::user_prompt(request, blocks, TASK);
        Ok(RenderedPrompt { system, user })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        verifier_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        parse_verifier_reply(reply)
    }
}

vouch_abi::export_specialist!(verifier, Verifier);

#[cfg(test)]
mod tests {
    use super::*;
    use vouch_specialist_kit::sample;

    #[test]
    fn prompt_lists_every_candidate_id() {
        let request = sample::prompt_request();
        let prompt = Verifier.render_prompt(&request).unwrap();
        assert!(request.candidates.len() >= 2);
        for c in &request.candidates {
            assert!(
                prompt
                    .user
                    .contains(&format!("<candidate id=\"{}\">", c.id)),
                "{} has no block",
                c.id
            );
            assert!(prompt.user.contains(&format!("\"{}\"", c.id)));
        }
    }

    #[test]
    fn prompt_carries_no_intent_and_refuses_an_empty_batch() {
        let request = sample::prompt_request();
        let prompt = Verifier.render_prompt(&request).unwrap();
        assert!(!prompt.user.contains(&request.intent.clone().unwrap().title));
        let err = Verifier
            .render_prompt(&PromptRequest {
                candidates: vec![],
                ..request
            })
            .unwrap_err();
        assert!(err.contains("candidate"), "{err}");
    }
}
