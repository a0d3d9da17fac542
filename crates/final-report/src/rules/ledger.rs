//! Rules about the command ledger: validation after a local merge (11), merge
//! simulations (12), the whole session (16).

use super::{Ctx, SessionCommand, entry_records};
use crate::classify::{self, Effect};
use crate::model::{CommandLocation, CommandPhase, MutationCategory, ValidationStatus};
use crate::narrative::ClaimKind;
use crate::session::{Place, Route, Session};
use crate::transcript::TranscriptEntry;
use crate::violation::{Violation, ViolationCode};

fn has(c: &SessionCommand, effect: Effect) -> bool {
    c.effects.contains(&effect)
}

fn location(c: &SessionCommand) -> Option<CommandLocation> {
    c.entry.as_ref().and_then(|e| e.location)
}

fn phase(c: &SessionCommand) -> Option<CommandPhase> {
    c.entry.as_ref().and_then(|e| e.phase)
}

/// Rule 11. "Official validation marked passed is rejected when the ledger shows a
/// local merge (e.g. `git merge`, `git pull` into the review worktree) before it,
/// unless that run is recorded as a diagnostic merge simulation — and then it is not
/// official PR-head validation."
///
/// Order is the transcript's `seq` order when there is a transcript, else ledger order.
/// The official run starts at the first command listed in `validation.commands` or in
/// phase `official-pr-head-validation`. A merge before it (outside the main checkout)
/// is accepted only when it is phase `merge-simulation` and an abort/reset follows it
/// before the official run.
pub(super) fn validation_not_after_local_merge(ctx: &Ctx) -> Vec<Violation> {
    if ctx.get::<ValidationStatus>("/validation/status") != Some(ValidationStatus::Passed)
        || !ctx.flag("/validation/official")
    {
        return Vec::new();
    }
    if let Some(model) = &ctx.model {
        return contaminated_validation(ctx, model);
    }
    let validation: Vec<String> = ctx
        .get::<Vec<String>>("/validation/commands")
        .unwrap_or_default()
        .iter()
        .map(|c| classify::normalize(c))
        .collect();
    let Some(start) = ctx.session.iter().position(|c| {
        validation.contains(&c.text) || phase(c) == Some(CommandPhase::OfficialPrHeadValidation)
    }) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, c) in ctx.session[..start].iter().enumerate() {
        if !has(c, Effect::Merge) || location(c) == Some(CommandLocation::MainCheckout) {
            continue;
        }
        let simulated = phase(c) == Some(CommandPhase::MergeSimulation);
        let restored = ctx.session[i + 1..start]
            .iter()
            .any(|r| has(r, Effect::MERGE_RESTORE));
        if !(simulated && restored) {
            out.push(Violation::new(
                ViolationCode::ValidationAfterLocalMerge,
                "/validation/official",
                format!(
                    "official validation is marked passed but local merge `{}` ({}) ran before it{}; record that run as a diagnostic merge simulation (official: false) or restore the PR head before the official run",
                    c.text,
                    c.origin(),
                    if simulated { " without an abort/reset in between" } else { "" }
                ),
            ));
        }
    }
    out
}

/// Rule 11 with a transcript: the official validation is contaminated when any
/// mutation of the directory it ran in (merge, pull, rebase, cherry-pick, commit,
/// stash pop, file write, through any route) since the candidate head was checked out
/// there is still in effect when it runs (not undone by an abort or reset).
fn contaminated_validation(ctx: &Ctx, model: &Session) -> Vec<Violation> {
    let official = ctx.official_seqs();
    let Some(run) = model
        .tests
        .iter()
        .find(|r| official.contains(&r.seq) && !r.pending.is_empty())
    else {
        return Vec::new();
    };
    let what: Vec<String> = run
        .pending
        .iter()
        .map(|p| format!("{} (seq {})", p.what, p.seq))
        .collect();
    vec![Violation::new(
        ViolationCode::ValidationAfterLocalMerge,
        "/validation/official",
        format!(
            "official validation `{}` (transcript seq {}) is marked passed but ran in {} after {} changed it since the candidate head was checked out; record that run as a diagnostic (official: false) or restore the PR head (abort/reset) before the official run",
            run.command,
            run.seq,
            run.dir.as_deref().unwrap_or("its directory"),
            what.join(", ")
        ),
    )]
}

/// Rule 12. "A local merge simulation must appear under Worktree/index mutations with
/// clean-before and clean-after proof (abort/reset recorded)."
///
/// A local merge outside the main checkout (or in phase `merge-simulation`) needs a
/// `worktreeIndexMutations` entry naming the command with `cleanBefore` and
/// `cleanAfter`, and an abort/reset command after it in the session.
pub(super) fn merge_simulation_recorded(ctx: &Ctx) -> Vec<Violation> {
    let code = ViolationCode::MergeSimulationUnrecorded;
    let entries = ctx.category(MutationCategory::WorktreeIndexMutations);
    let mut out = Vec::new();
    for (i, c) in ctx.session.iter().enumerate() {
        let simulation = has(c, Effect::Merge)
            && (location(c) != Some(CommandLocation::MainCheckout)
                || phase(c) == Some(CommandPhase::MergeSimulation));
        if !simulation {
            continue;
        }
        let recorded: Vec<_> = entries
            .iter()
            .filter(|e| entry_records(e, &c.text))
            .collect();
        if recorded.is_empty() {
            out.push(Violation::new(
                code,
                "/mutations/worktreeIndexMutations",
                format!("local merge simulation `{}` ({}) is not recorded under Worktree/index mutations", c.text, c.origin()),
            ));
            continue;
        }
        let proven = recorded.iter().any(|e| {
            e.clean_before
                .as_deref()
                .is_some_and(|s| !s.trim().is_empty())
                && e.clean_after
                    .as_deref()
                    .is_some_and(|s| !s.trim().is_empty())
        });
        if !proven {
            out.push(Violation::new(
                code,
                "/mutations/worktreeIndexMutations",
                format!(
                    "local merge simulation `{}` lacks clean-before and clean-after proof",
                    c.text
                ),
            ));
        }
        if !ctx.session[i + 1..]
            .iter()
            .any(|r| has(r, Effect::MERGE_RESTORE))
        {
            out.push(Violation::new(
                code,
                c.pointer(),
                format!(
                    "no abort/reset is recorded after local merge simulation `{}` ({})",
                    c.text,
                    c.origin()
                ),
            ));
        }
    }
    out
}

/// Rule 16. "Whole session: with a transcript, reject a report whose command ledger
/// omits commands from the session; reject \"all validation ran in an isolated
/// worktree\" when any test command ran in the main checkout; local config/profile
/// inspection (e.g. config or auth files of the forge client) must be classified and
/// justified; profile activation must be classified as a runtime/session mutation with
/// capability/policy proof; a \"strict compliance\" statement is rejected when any
/// pre-review command is unclassified."
pub(super) fn whole_session_ledger(ctx: &Ctx) -> Vec<Violation> {
    let mut out = omitted_commands(ctx);
    out.extend(entries_without_a_line(ctx));
    let isolation = ctx.narrative.claim(ClaimKind::IsolatedWorktreeOnly);
    if ctx.flag("/validation/isolatedWorktreeOnly") || isolation.is_some() {
        out.extend(isolation_violations(ctx));
    }
    out.extend(tool_classification(ctx));
    out.extend(ctx.session.iter().flat_map(command_classification));
    let strict = ctx.narrative.claim(ClaimKind::StrictCompliance);
    if ctx.flag("/strictCompliance") || strict.is_some() {
        let strict = strict_compliance(ctx, &out);
        out.extend(strict);
    }
    out
}

/// Rule 16 with a transcript: every transcript command is in the command ledger.
fn omitted_commands(ctx: &Ctx) -> Vec<Violation> {
    if ctx.transcript.is_none() {
        return Vec::new();
    }
    ctx.session
        .iter()
        .filter(|c| c.ledger_index.is_none())
        .map(|c| {
            Violation::new(
                ViolationCode::CommandLedgerIncomplete,
                "/commands",
                format!("the command ledger omits `{}` ({})", c.text, c.origin()),
            )
        })
        .collect()
}

/// Whether a ledger entry's `field` is missing or blank.
fn blank(field: &Option<String>) -> bool {
    field.as_deref().is_none_or(|t| t.trim().is_empty())
}

/// Rule 16: a config read is `local-config-inspection` with a justification, a profile
/// activation `runtime-session-mutation` with capability proof. A phase the schema
/// rejected was reported by rule 1 and is not judged again.
fn command_classification(c: &SessionCommand) -> Vec<Violation> {
    let Some(entry) = c.entry.as_ref() else {
        return Vec::new();
    };
    let Some(entry_phase) = entry.phase else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if c.effects.iter().any(|e| matches!(e, Effect::ConfigRead(_)))
        && (entry_phase != CommandPhase::LocalConfigInspection || blank(&entry.justification))
    {
        out.push(Violation::new(
            ViolationCode::ConfigInspectionUnjustified,
            c.pointer(),
            format!("`{}` inspects local config/profile/auth files; classify it as `local-config-inspection` with a justification", c.text),
        ));
    }
    if has(c, Effect::ProfileActivation)
        && (entry_phase != CommandPhase::RuntimeSessionMutation || blank(&entry.capability_proof))
    {
        out.push(Violation::new(
            ViolationCode::ProfileActivationUnclassified,
            c.pointer(),
            format!("`{}` activates a profile; classify it as `runtime-session-mutation` with capability/policy proof", c.text),
        ));
    }
    out
}

/// Rule 16: a strict-compliance claim fails on any other rule 16 problem (`found`),
/// any rule 18 problem, a ledger location the transcript contradicts, and any
/// unclassified command before the review starts.
fn strict_compliance(ctx: &Ctx, found: &[Violation]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut breaches: Vec<String> = found.iter().map(|v| v.message.clone()).collect();
    breaches.extend(
        super::mutations::ledgers_agree(ctx)
            .into_iter()
            .map(|v| v.message),
    );
    breaches.extend(location_contradictions(ctx));
    if !breaches.is_empty() {
        out.push(Violation::new(
            ViolationCode::StrictComplianceUnproven,
            "/strictCompliance",
            format!(
                "strict compliance is claimed but the session shows otherwise: {}",
                breaches.join("; ")
            ),
        ));
    }
    let review = |c: &SessionCommand| {
        matches!(
            phase(c),
            Some(
                CommandPhase::Review
                    | CommandPhase::OfficialPrHeadValidation
                    | CommandPhase::MergeSimulation
                    | CommandPhase::Merge
            )
        )
    };
    let starts = ctx
        .session
        .iter()
        .position(review)
        .unwrap_or(ctx.session.len());
    for c in &ctx.session[..starts] {
        if c.entry.is_none() || phase(c) == Some(CommandPhase::Unclassified) {
            out.push(Violation::new(
                ViolationCode::StrictComplianceUnproven,
                c.pointer(),
                format!(
                    "strict compliance is claimed but pre-review command `{}` ({}) is unclassified",
                    c.text,
                    c.origin()
                ),
            ));
        }
    }
    out
}

/// Rule 16 with a transcript: each command-ledger entry matches one transcript line: a
/// command with the same normalised text, or (tool notation) the tool call at its `seq`
/// or of the tool it names. An entry that matches none records something the session
/// did not do.
fn entries_without_a_line(ctx: &Ctx) -> Vec<Violation> {
    let Some(transcript) = ctx.transcript else {
        return Vec::new();
    };
    let used: Vec<usize> = ctx.session.iter().filter_map(|c| c.ledger_index).collect();
    let is_tool_line = |entry: &super::LedgerCommand| {
        transcript.iter().any(|t| match t {
            TranscriptEntry::Tool { seq, name, .. } => {
                entry.seq == Some(*seq)
                    || (entry.seq.is_none() && entry.command.trim().starts_with(name.as_str()))
            }
            _ => false,
        })
    };
    ctx.ledger()
        .into_iter()
        .filter(|(i, entry)| !used.contains(i) && !is_tool_line(entry))
        .map(|(i, entry)| {
            let cited = entry.seq.map(|s| format!(" (seq {s})")).unwrap_or_default();
            Violation::new(
                ViolationCode::CommandNotInTranscript,
                format!("/commands/{i}"),
                format!("the command ledger records `{}`{cited} but no transcript line is that command; each ledger entry matches one line of the session", classify::normalize(&entry.command)),
            )
        })
        .collect()
}

/// Test runs in the main checkout: by the directory the transcript shows when it can
/// tell, else by the ledger's location.
fn isolation_violations(ctx: &Ctx) -> Vec<Violation> {
    let mut out = Vec::new();
    let pointer_for = |seq: u64| {
        ctx.session
            .iter()
            .find(|c| c.seq == Some(seq))
            .map(SessionCommand::pointer)
            .unwrap_or_else(|| "/commands".to_owned())
    };
    let mut judged: Vec<u64> = Vec::new();
    if let Some(model) = &ctx.model {
        for run in &model.tests {
            let Some(dir) = &run.dir else { continue };
            match model.place(dir) {
                Place::Main => {
                    out.push(Violation::new(
                        ViolationCode::MainCheckoutValidation,
                        pointer_for(run.seq),
                        format!("the report says all validation ran in an isolated worktree but the transcript shows `{}` ran in the main checkout {dir} (seq {})", run.command, run.seq),
                    ));
                    judged.push(run.seq);
                }
                Place::Isolated => judged.push(run.seq),
                Place::Unknown => {}
            }
        }
    }
    for c in ctx
        .session
        .iter()
        .filter(|c| c.effects.iter().any(Effect::is_test_run))
    {
        if c.seq.is_some_and(|s| judged.contains(&s)) {
            continue;
        }
        if location(c) == Some(CommandLocation::MainCheckout) {
            out.push(Violation::new(
                ViolationCode::MainCheckoutValidation,
                c.pointer(),
                format!("the report says all validation ran in an isolated worktree but `{}` ran in the main checkout", c.text),
            ));
        }
    }
    out
}

/// Commands whose ledger location the transcript contradicts.
fn location_contradictions(ctx: &Ctx) -> Vec<String> {
    let Some(model) = &ctx.model else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in &ctx.session {
        let (Some(seq), Some(entry)) = (c.seq, &c.entry) else {
            continue;
        };
        let Some(dir) = model.command_dirs.get(&seq) else {
            continue;
        };
        let place_of = |d: &str| match model.place(d) {
            Place::Main => Some(CommandLocation::MainCheckout),
            Place::Isolated => Some(CommandLocation::ReviewWorktree),
            Place::Unknown => None,
        };
        // Either where the command started or where its `cd` took it may be meant.
        let places: Vec<CommandLocation> = [Some(dir), model.command_end_dirs.get(&seq)]
            .into_iter()
            .flatten()
            .filter_map(|d| place_of(d))
            .collect();
        let Some(said) = entry.location else {
            continue;
        };
        if !places.is_empty() && !places.contains(&said) && said != CommandLocation::Other {
            out.push(format!(
                "`{}` ({}) is recorded in the {} but ran in {dir}",
                c.text,
                c.origin(),
                if said == CommandLocation::MainCheckout {
                    "main checkout"
                } else {
                    "review worktree"
                }
            ));
        }
    }
    out
}

/// Profile activations and configuration reads made through tool calls: each needs a
/// command-ledger entry (same `seq`, or a command naming the tool) classified
/// `runtime-session-mutation` with `capabilityProof`, or `local-config-inspection` with
/// `justification`.
fn tool_classification(ctx: &Ctx) -> Vec<Violation> {
    let Some(model) = &ctx.model else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in model
        .actions
        .iter()
        .filter(|a| a.route == Route::Tool && a.effect == Effect::ProfileActivation)
    {
        let entry = ctx.ledger_entry_for(a.seq, a.tool.as_deref());
        // A phase the schema rejected was reported by rule 1 and is not judged again.
        let ok = entry.as_ref().is_some_and(|(_, e)| {
            e.phase.is_none()
                || e.phase == Some(CommandPhase::RuntimeSessionMutation)
                    && e.capability_proof
                        .as_deref()
                        .is_some_and(|p| !p.trim().is_empty())
        });
        if !ok {
            out.push(Violation::new(
                ViolationCode::ProfileActivationUnclassified,
                entry.map(|(i, _)| format!("/commands/{i}")).unwrap_or_else(|| "/commands".to_owned()),
                format!("tool call `{}` (transcript seq {}) activates a profile; record it in the command ledger (seq {}) as `runtime-session-mutation` with capability/policy proof", a.text, a.seq, a.seq),
            ));
        }
    }
    for r in model.config_reads.iter().filter(|r| r.tool) {
        let entry = ctx.ledger_entry_for(r.seq, Some(&r.text));
        // A phase the schema rejected was reported by rule 1 and is not judged again.
        let ok = entry.as_ref().is_some_and(|(_, e)| {
            e.phase.is_none()
                || e.phase == Some(CommandPhase::LocalConfigInspection)
                    && e.justification
                        .as_deref()
                        .is_some_and(|j| !j.trim().is_empty())
        });
        if !ok {
            out.push(Violation::new(
                ViolationCode::ConfigInspectionUnjustified,
                entry.map(|(i, _)| format!("/commands/{i}")).unwrap_or_else(|| "/commands".to_owned()),
                format!("tool call `{}` (transcript seq {}) reads {}; record it in the command ledger (seq {}) as `local-config-inspection` with a justification", r.text, r.seq, r.class, r.seq),
            ));
        }
    }
    out
}
