//! vouch built-in specialist `generic-investigator` (role: investigator).
//!
//! Reviews every changed file from the code alone: it follows the affected code, its
//! callers, the contracts it relies on and its tests with the repository tools, and
//! proposes candidates with a coverage receipt. It never sees the change's stated
//! intent: even when a request carries one, this plugin does not render it, so the lane
//! stays independent of what the author claims the change does. Its prompt text is in
//! `prompt/`.

use vouch_abi::Role;
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The generic investigator. Stateless; one value serves every instance.
    GenericInvestigator as generic_investigator,
    Settings {
        id: "generic-investigator",
        version: "1.0.0",
        role: Role::Investigator,
        description: "Reviews every changed file from its code, callers, contracts and \
                      tests; never sees the stated intent.",
        needs: Needs::Nothing,
        role_text: ROLE,
        system: SystemPrompt::ReviewAreas,
        // Intent is deliberately never rendered for this role (issue 4).
        blocks: Blocks::NONE,
        task: Task::Always(TASK),
        reply: Reply::Candidates,
    }
}

#[cfg(test)]
mod tests;
