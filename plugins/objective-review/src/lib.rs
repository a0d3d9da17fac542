//! vouch built-in specialist `objective-review` (role: reviewer, panel composition).
//!
//! A panel reviewer that checks whether the change achieves its stated objective (the
//! host-detected intent: pull-request title and body, else commit messages). Without an
//! intent it says so in the task and asks for coverage only, so it never invents an
//! objective. Its prompt text is in `prompt/`.

use vouch_abi::Role;
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::{Blocks, DEFECT_BOUNDARY};

const ROLE: &str = include_str!("../prompt/role.txt");
const TASK: &str = include_str!("../prompt/task.txt");
const TASK_WITHOUT_OBJECTIVE: &str = include_str!("../prompt/task-without-objective.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The objective-review panel reviewer. Stateless; one value serves every instance.
    ObjectiveReview as objective_review,
    Settings {
        id: "objective-review",
        version: "1.0.0",
        role: Role::Reviewer,
        description: "Panel reviewer: whether the change achieves its stated objective.",
        needs: Needs::Nothing,
        role_text: ROLE,
        system: SystemPrompt::Bounded(DEFECT_BOUNDARY),
        blocks: Blocks::INTENT,
        task: Task::ByIntent { with: TASK, without: TASK_WITHOUT_OBJECTIVE },
        reply: Reply::Candidates,
    }
}

#[cfg(test)]
mod tests;
