//! vouch built-in specialist `clean-result-audit` (role: clean-result-audit).
//!
//! Runs only when no lane proposed a candidate for a non-empty change: an independent
//! second look that reconstructs before/after behaviour (reading base and head) and
//! works through concrete boundary inputs. Its candidates are verified like any other;
//! it never reports directly. Its prompt text is in `prompt/`.

use vouch_abi::Role;
use vouch_specialist_kit::builtin::{Needs, Reply, Settings, SystemPrompt, Task};
use vouch_specialist_kit::render::Blocks;

const ROLE: &str = include_str!("../prompt/role.txt");
const TASK: &str = include_str!("../prompt/task.txt");

vouch_specialist_kit::builtin_specialist! {
    /// The clean-result audit. Stateless; one value serves every instance.
    CleanResultAudit as clean_result_audit,
    Settings {
        id: "clean-result-audit",
        version: "1.0.0",
        role: Role::CleanResultAudit,
        description: "Second look at a change no lane flagged: before/after behaviour on \
                      concrete boundary inputs.",
        needs: Needs::Nothing,
        role_text: ROLE,
        system: SystemPrompt::ReviewAreas,
        blocks: Blocks::NONE,
        task: Task::Always(TASK),
        reply: Reply::Candidates,
    }
}
