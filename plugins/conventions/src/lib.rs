//! vouch built-in specialist `conventions` (role: conventions).
//!
//! Owns findings whose primary issue is a declared or strongly inferred repository
//! convention: a written policy (from the host's policy evidence or a scoped
//! instruction file read at base), or a pattern with at least three consistent
//! examples in the repository, cited by path:line. Every candidate it proposes has
//! area `conventions`: its contract allows no other value and its parser rejects one.
//! Its prompt text is in `prompt/`.

use vouch_abi::{Area, Role};
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const BOUNDARY: &str = include_str!("../prompt/boundary.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The conventions specialist. Stateless; one value serves every instance.
    Conventions as conventions,
    Settings {
        id: "conventions",
        version: "1.0.0",
        role: Role::Conventions,
        description: "Finds violations of written repository policy or of patterns \
                      with at least three cited examples.",
        needs: Needs::Nothing,
        role_text: ROLE,
        system: SystemPrompt::Bounded(BOUNDARY),
        blocks: Blocks::NONE,
        task: Task::Always(TASK),
        reply: Reply::OneArea(Area::Conventions, "this specialist reports only convention findings"),
    }
}

#[cfg(test)]
mod tests;
