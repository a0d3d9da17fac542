//! vouch built-in specialist `outcome-investigator` (role: outcome-investigator).
//!
//! Receives the host-detected intent of the change (pull-request title and body, else
//! commit messages) and checks, from source, whether the change actually achieves that
//! outcome while preserving the repository's invariants and boundaries. The host runs
//! this lane only when it detected an intent; a request without one is an error. Its
//! prompt text is in `prompt/`.

use vouch_abi::Role;
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The outcome investigator. Stateless; one value serves every instance.
    OutcomeInvestigator as outcome_investigator,
    Settings {
        id: "outcome-investigator",
        version: "1.0.0",
        role: Role::OutcomeInvestigator,
        description: "Checks that the change achieves its stated intent and keeps the \
                      repository's invariants.",
        needs: Needs::Intent,
        role_text: ROLE,
        system: SystemPrompt::ReviewAreas,
        blocks: Blocks::INTENT,
        task: Task::Always(TASK),
        reply: Reply::Candidates,
    }
}

#[cfg(test)]
mod tests;
