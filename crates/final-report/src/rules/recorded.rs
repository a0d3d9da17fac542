//! Claims judged against what the transcript recorded as the result of the calls they
//! rest on (rules 5 and 6 with a transcript). A recorded result wins over the report:
//! a claimed merge needs a forge merge call that did not fail, and a proof that cites
//! transcript lines needs lines that exist and whose recorded results support it.

use super::Ctx;
use crate::classify::{self, Effect};
use crate::evidence::{IssueState, Outcome, cited_ranges, issue_state, outcome};
use crate::session::{Session, TestRun};
use crate::transcript::TranscriptEntry;
use crate::violation::{Violation, ViolationCode};

/// The seqs of the transcript's forge merges (tool calls or commands), in order, from
/// the session's commands and tool calls as [`Ctx`] classified them (empty without a
/// transcript).
pub(super) fn merge_calls(ctx: &Ctx) -> Vec<u64> {
    if ctx.transcript.is_none() {
        return Vec::new();
    }
    let commands = ctx
        .session
        .iter()
        .filter(|c| c.effects.contains(&Effect::FORGE_MERGE))
        .filter_map(|c| c.seq);
    let tools = ctx
        .tools
        .iter()
        .filter(|t| t.effect == Effect::FORGE_MERGE)
        .map(|t| t.seq);
    let mut seqs: Vec<u64> = commands.chain(tools).collect();
    seqs.sort_unstable();
    seqs
}

/// Rule 5 with a transcript: `merge.result: merged` needs a forge merge in the
/// transcript, and at least one whose recorded result (when recorded) did not fail.
pub(super) fn merge_call_succeeded(ctx: &Ctx) -> Option<Violation> {
    let model = ctx.model.as_ref()?;
    let code = ViolationCode::MergeUnproven;
    let calls = merge_calls(ctx);
    if calls.is_empty() {
        return Some(Violation::new(
            code,
            "/merge/result",
            "merge.result is `merged` but the transcript records no forge merge (merge tool call or command)",
        ));
    }
    let failures: Vec<String> = calls
        .iter()
        .filter_map(|seq| match outcome(model.result(*seq)?) {
            Outcome::Failed(why) => Some(format!("seq {seq}: {why}")),
            _ => None,
        })
        .collect();
    (failures.len() == calls.len()).then(|| {
        Violation::new(
            code,
            "/merge/result",
            format!(
                "merge.result is `merged` but the transcript records that the merge failed ({})",
                failures.join("; ")
            ),
        )
    })
}

/// A proof text's transcript evidence: every line it cites (`seq N`, `seq N-M`) exists,
/// and no cited line, nor a transcript command the text names verbatim, recorded a
/// failure.
pub(super) fn cited_lines_support(
    ctx: &Ctx,
    pointer: &str,
    what: &str,
    text: &str,
) -> Vec<Violation> {
    let Some(transcript) = ctx.transcript else {
        return Vec::new();
    };
    let code = ViolationCode::MergeUnproven;
    let mut out = Vec::new();
    let mut cited: Vec<u64> = Vec::new();
    for range in cited_ranges(text) {
        for end in [*range.start(), *range.end()] {
            if ctx.cited(end).is_none() {
                out.push(Violation::new(
                    code,
                    pointer,
                    format!("{what} cites transcript seq {end}, which is not in the transcript"),
                ));
            }
        }
        cited.extend(
            transcript
                .iter()
                .map(TranscriptEntry::seq)
                .filter(|s| range.contains(s)),
        );
    }
    let named = classify::normalize(text);
    cited.extend(transcript.iter().filter_map(|e| match e {
        TranscriptEntry::Command { seq, command, .. }
            if named.contains(&classify::normalize(command)) =>
        {
            Some(*seq)
        }
        _ => None,
    }));
    cited.sort_unstable();
    cited.dedup();
    for seq in cited {
        if let Some(Outcome::Failed(why)) = ctx.cited(seq).and_then(|c| c.result).map(outcome) {
            out.push(Violation::new(
                code,
                pointer,
                format!("{what} rests on transcript seq {seq}, whose recorded result says it failed: {why}"),
            ));
        }
    }
    out
}

/// Rule 6 with a transcript: what the live read of a closed issue at `seq` recorded
/// must not contradict the closure (a failed read, or an open state).
pub(super) fn issue_read_contradicts(ctx: &Ctx, reference: &str, seq: u64) -> Option<String> {
    let result = ctx.cited(seq)?.result?;
    if let Outcome::Failed(why) = outcome(result) {
        return Some(format!(
            "issue {reference}: the live read at seq {seq} failed ({why}), so it does not show the issue closed"
        ));
    }
    (issue_state(result) == Some(IssueState::Open)).then(|| {
        format!(
            "issue {reference} is marked closed but the live read at seq {seq} returned it open"
        )
    })
}

/// Rule 7 with a transcript: a pass claim rests on the official validation commands'
/// own transcript lines. Each command `validation.commands` lists is a transcript
/// command, and at least one official command is in the transcript. A full-suite claim
/// (`full_suite`) also needs an official test run with a recorded result and no test
/// filter, and no later unfiltered run in the same directory that failed.
pub(super) fn official_lines(ctx: &Ctx, source: &str, full_suite: bool) -> Vec<Violation> {
    let Some(model) = ctx.model.as_ref() else {
        return Vec::new();
    };
    let code = ViolationCode::FullSuiteClaimUnproven;
    let mut out = Vec::new();
    let listed: Vec<String> = ctx.get("/validation/commands").unwrap_or_default();
    for (i, command) in listed.iter().enumerate() {
        let text = classify::normalize(command);
        if !ctx.session.iter().any(|c| c.text == text) {
            out.push(Violation::new(
                code,
                format!("/validation/commands/{i}"),
                format!(
                    "{source} but official validation command `{text}` is not in the transcript"
                ),
            ));
        }
    }
    let official = ctx.official_seqs();
    if official.is_empty() {
        if out.is_empty() {
            out.push(Violation::new(
                code,
                "/validation/commands",
                format!("{source} but no official validation command appears in the transcript"),
            ));
        }
        return out;
    }
    if full_suite {
        out.extend(full_suite_runs(model, &official, source));
    }
    out
}

/// The full-suite part of [`official_lines`]: the official test runs themselves.
fn full_suite_runs(model: &Session, official: &[u64], source: &str) -> Vec<Violation> {
    let code = ViolationCode::FullSuiteClaimUnproven;
    let pointer = "/validation/fullSuitePassed";
    let runs: Vec<&TestRun> = model
        .tests
        .iter()
        .filter(|r| official.contains(&r.seq))
        .collect();
    let Some(first) = runs.first() else {
        return vec![Violation::new(
            code,
            pointer,
            format!("{source} but no official validation command in the transcript is a test run"),
        )];
    };
    let mut out = Vec::new();
    if !runs.iter().any(|r| r.recorded) {
        out.push(Violation::new(
            code,
            pointer,
            format!("{source} but the transcript records no result for official test run `{}` (seq {}); record its exit code and output", first.command, first.seq),
        ));
    }
    for run in &runs {
        if let Some(filter) = &run.filter {
            out.push(Violation::new(
                code,
                pointer,
                format!(
                    "{source} but official test run `{}` (seq {}) ran a filtered subset: {filter}",
                    run.command, run.seq
                ),
            ));
        }
        if let Some(later) = later_failing_full_run(model, run) {
            out.push(Violation::new(
                code,
                pointer,
                format!("{source} but a later full run `{}` (seq {}) in the same directory failed after official test run `{}` (seq {})", later.command, later.seq, run.command, run.seq),
            ));
        }
    }
    out
}

/// An unfiltered test run after `run`, in its directory, that recorded a failure.
fn later_failing_full_run<'a>(model: &'a Session, run: &TestRun) -> Option<&'a TestRun> {
    model.tests.iter().find(|t| {
        let same_dir = t.dir.is_none() || run.dir.is_none() || t.dir == run.dir;
        let failed = t.exit_code.is_some_and(|c| c != 0) || t.counts.is_some_and(|c| c.failed > 0);
        t.seq > run.seq && t.filter.is_none() && same_dir && failed
    })
}
