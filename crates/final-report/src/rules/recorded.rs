//! Claims judged against what the transcript recorded as the result of the calls they
//! rest on (rules 5 and 6 with a transcript). A recorded result wins over the report:
//! a claimed merge needs a forge merge call that did not fail, and a proof that cites
//! transcript lines needs lines that exist and whose recorded results support it.

use super::Ctx;
use crate::classify::{self, Kind};
use crate::evidence::{IssueState, Outcome, cited_ranges, issue_state, outcome};
use crate::transcript::TranscriptEntry;
use crate::violation::{Violation, ViolationCode};

/// The seqs of the transcript's forge merges (tool calls or commands), in order.
pub(super) fn merge_calls(transcript: &[TranscriptEntry]) -> Vec<u64> {
    transcript
        .iter()
        .filter_map(|e| match e {
            TranscriptEntry::Tool {
                seq,
                name,
                arguments,
                ..
            } => {
                (classify::classify_tool(name, arguments) == Some(Kind::ForgeMerge)).then_some(*seq)
            }
            TranscriptEntry::Command { seq, command, .. } => classify::classify_command(command)
                .contains(&Kind::ForgeMerge)
                .then_some(*seq),
            _ => None,
        })
        .collect()
}

/// Rule 5 with a transcript: `merge.result: merged` needs a forge merge in the
/// transcript, and at least one whose recorded result (when recorded) did not fail.
pub(super) fn merge_call_succeeded(ctx: &Ctx) -> Option<Violation> {
    let transcript = ctx.transcript?;
    let model = ctx.model.as_ref()?;
    let code = ViolationCode::MergeUnproven;
    let calls = merge_calls(transcript);
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
