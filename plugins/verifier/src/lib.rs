//! vouch built-in specialist `verifier` (role: verifier).
//!
//! Receives every candidate of every lane and returns exactly one decision per
//! candidate id: `verified`, `rejected` or `unresolved`, with the decisive evidence and
//! citations `{revision, path, startLine, endLine}` to source it read in this execution.
//! Its prompt carries the reporting boundary of issue 4 and the separate boundary for
//! convention candidates. It returns no coverage receipt. Its prompt text is in `prompt/`.

use vouch_abi::Role;
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const CONVENTION_BOUNDARY: &str = include_str!("../prompt/convention-boundary.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The verifier. Stateless; one value serves every instance.
    Verifier as verifier,
    Settings {
        id: "verifier",
        version: "1.0.0",
        role: Role::Verifier,
        description: "Decides every candidate (verified, rejected or unresolved) with \
                      citations to source it read.",
        needs: Needs::Candidates,
        role_text: ROLE,
        system: SystemPrompt::Reporting(CONVENTION_BOUNDARY),
        blocks: Blocks::CANDIDATES,
        task: Task::Always(TASK),
        reply: Reply::Decisions,
    }
}

#[cfg(test)]
mod tests;
