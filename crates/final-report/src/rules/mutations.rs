//! Rule 18: every mutation is in the mutation ledger under a fitting category.

use super::{Ctx, SessionCommand, ToolMutation, entry_records};
use crate::classify;
use crate::model::{MergeResult, MutationCategory};
use crate::violation::{Violation, ViolationCode};

/// "X is empty" / "neither X nor Y records it" for a message.
fn unrecorded(cats: &[MutationCategory], all_empty: bool) -> String {
    let labels: Vec<&str> = cats.iter().map(|c| c.label()).collect();
    match (labels.as_slice(), all_empty) {
        ([one], true) => format!("{one} is empty"),
        ([one], false) => format!("{one} does not record it"),
        ([a, b], true) => format!("{a} and {b} are empty"),
        ([a, b], false) => format!("neither {a} nor {b} records it"),
        (_, true) => format!("{} are all empty", labels.join(", ")),
        (_, false) => format!("none of {} records it", labels.join(", ")),
    }
}

/// Rule 18. "Ledgers agree: a report that says a mutation category is empty while its
/// command ledger or the transcript shows a command of that kind (creating or editing
/// files, `git worktree add/remove`, `git merge`, `git pull`, `git commit`, `git
/// push`, ref updates, review/merge tool calls) is rejected; a `git pull`/`git merge`
/// in the main checkout is a mutation too and must be classified as one."
///
/// Every mutating command (ledger or transcript) and mutating tool call must be
/// recorded in a category that fits it; a read-only diagnostic must not mutate; a
/// `merged` result needs a merge mutation.
pub(super) fn ledgers_agree(ctx: &Ctx) -> Vec<Violation> {
    let mut out: Vec<Violation> = ctx
        .session
        .iter()
        .flat_map(|c| unrecorded_command(ctx, c))
        .collect();
    out.extend(ctx.tools.iter().filter_map(|t| unrecorded_tool(ctx, t)));
    out.extend(mutating_diagnostics(ctx));
    if ctx.get::<MergeResult>("/merge/result") == Some(MergeResult::Merged)
        && ctx.category(MutationCategory::MergeMutations).is_empty()
    {
        out.push(Violation::new(
            ViolationCode::MutationLedgerDisagrees,
            "/mutations/mergeMutations",
            "merge.result is `merged` but Merge mutations is empty",
        ));
    }
    out
}

/// Rule 18: each mutating kind of a session command is recorded in a fitting category.
fn unrecorded_command(ctx: &Ctx, c: &SessionCommand) -> Vec<Violation> {
    let mut out = Vec::new();
    for effect in &c.effects {
        let cats = effect.categories();
        if cats.is_empty() {
            continue;
        }
        let recorded = cats
            .iter()
            .any(|cat| ctx.category(*cat).iter().any(|e| entry_records(e, &c.text)));
        if !recorded {
            let all_empty = cats.iter().all(|cat| ctx.category(*cat).is_empty());
            out.push(Violation::new(
                ViolationCode::MutationLedgerDisagrees,
                format!("/mutations/{}", cats[0].key()),
                format!(
                    "`{}` ({}) is {} but {}",
                    c.text,
                    c.origin(),
                    effect.describe(),
                    unrecorded(cats, all_empty)
                ),
            ));
        }
    }
    out
}

/// Rule 18: a mutating tool call is recorded (by `tool`) in a fitting category.
fn unrecorded_tool(ctx: &Ctx, t: &ToolMutation) -> Option<Violation> {
    let cats = t.effect.categories();
    let recorded = cats.iter().any(|cat| {
        ctx.category(*cat)
            .iter()
            .any(|e| e.tool.as_deref().is_some_and(|name| name == t.name))
    });
    if cats.is_empty() || recorded {
        return None;
    }
    let place = ctx
        .model
        .as_ref()
        .and_then(|m| m.actions.iter().find(|a| a.seq == t.seq))
        .map(|a| match &a.dir {
            Some(dir) => format!(", a {} on {dir}", a.route.describe()),
            None => format!(", a {}", a.route.describe()),
        })
        .unwrap_or_default();
    Some(Violation::new(
        ViolationCode::MutationLedgerDisagrees,
        format!("/mutations/{}", cats[0].key()),
        format!(
            "tool call `{}` (transcript seq {}{place}) is {} but {}",
            t.name,
            t.seq,
            t.effect.describe(),
            unrecorded(cats, false)
        ),
    ))
}

/// Rule 18: a read-only diagnostic does not mutate.
fn mutating_diagnostics(ctx: &Ctx) -> Vec<Violation> {
    let diagnostics = ctx.indexed_category(MutationCategory::ReadOnlyDiagnostics);
    let mut out = Vec::new();
    for (i, entry) in &diagnostics {
        let Some(command) = entry.command.as_deref() else {
            continue;
        };
        if let Some(effect) = classify::classify_command(command)
            .into_iter()
            .find(|k| !k.categories().is_empty())
        {
            out.push(Violation::new(
                ViolationCode::MutationLedgerDisagrees,
                format!("/mutations/readOnlyDiagnostics/{i}"),
                format!(
                    "`{command}` is {} but is listed as a read-only diagnostic",
                    effect.describe()
                ),
            ));
        }
    }
    out
}
