//! vouch built-in specialist `instructions-review` (role: reviewer, panel composition).
//!
//! A panel reviewer that checks the change against the repository's written
//! instructions: AGENTS.md, CLAUDE.md, CONTRIBUTING.md and scoped instruction files,
//! all read from the base tree so a change cannot rewrite its own rules. Its candidates
//! all have area `conventions`, so the verifier judges them by the convention boundary
//! (the quoted written instruction exists and a changed hunk violates it): the contract
//! allows no other area and the parser rejects one. Its prompt text is in `prompt/`.

use vouch_abi::{Area, Role};
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const BOUNDARY: &str = include_str!("../prompt/boundary.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The instructions-review panel reviewer. Stateless; one value serves every instance.
    InstructionsReview as instructions_review,
    Settings {
        id: "instructions-review",
        version: "1.0.0",
        role: Role::Reviewer,
        description: "Panel reviewer: the change against the repository's written instructions.",
        needs: Needs::Nothing,
        role_text: ROLE,
        system: SystemPrompt::Bounded(BOUNDARY),
        blocks: Blocks::NONE,
        task: Task::Always(TASK),
        reply: Reply::OneArea(Area::Conventions, "instruction violations use the conventions area"),
    }
}

#[cfg(test)]
mod tests;
