//! vouch built-in specialist `bug-review` (role: reviewer, panel composition).
//!
//! A panel reviewer that looks for defects the change introduces or newly exposes. It
//! carries the review-area table; it never sees the change's stated intent. Its prompt
//! text is in `prompt/`.

use vouch_abi::Role;
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The bug-review panel reviewer. Stateless; one value serves every instance.
    BugReview as bug_review,
    Settings {
        id: "bug-review",
        version: "1.0.0",
        role: Role::Reviewer,
        description: "Panel reviewer: defects the change introduces or newly exposes.",
        needs: Needs::Nothing,
        role_text: ROLE,
        system: SystemPrompt::ReviewAreas,
        blocks: Blocks::NONE,
        task: Task::Always(TASK),
        reply: Reply::Candidates,
    }
}
