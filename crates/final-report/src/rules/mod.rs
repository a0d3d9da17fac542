//! The rules. Each rule is one pure function from the validation context to the
//! violations it finds; its docstring quotes the rule sentence it enforces.

mod claims;
mod counts;
mod handoff;
mod inventory;
mod ledger;
mod mutations;
mod read;
mod recorded;
mod reviewed;
mod stale_state;
mod staleness;
mod structure;
mod table;

pub use table::{Evidence, RuleInfo, rule_table};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::classify::{self, Effect};
use crate::model::{Disposition, MutationCategory, MutationEntry};
use crate::narrative::Narrative;
use crate::session::Session;
use crate::transcript::{EventName, TranscriptEntry};
use crate::violation::Violation;
use read::{Excluded, LedgerCommand};

/// A rule: the context in, every violation it finds out.
type Rule = fn(&Ctx) -> Vec<Violation>;

/// Run every rule and return all violations, de-duplicated, in rule order.
pub(crate) fn run_all(report: &Value, transcript: Option<&[TranscriptEntry]>) -> Vec<Violation> {
    run_with_warnings(report, transcript).0
}

/// Every violation, and a warning for each narrative sentence that asserts state but
/// is not checked against the handoff.
pub(crate) fn run_with_warnings(
    report: &Value,
    transcript: Option<&[TranscriptEntry]>,
) -> (Vec<Violation>, Vec<crate::violation::Warning>) {
    let ctx = Ctx::new(report, transcript);
    let warnings = ctx
        .narrative
        .sentences()
        .iter()
        .filter_map(|s| {
            s.unchecked().map(|message| crate::violation::Warning {
                pointer: "/narrative".to_owned(),
                line: s.line + 1,
                sentence: s.text.clone(),
                message,
            })
        })
        .collect();
    (violations(&ctx), warnings)
}

fn violations(ctx: &Ctx) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    for rule in table::RULE_TABLE.iter().flat_map(|row| row.checks) {
        for v in rule(ctx) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// One command of the session, in session order.
#[derive(Debug, Clone)]
pub(crate) struct SessionCommand {
    /// Whitespace-normalised command line.
    pub text: String,
    /// Transcript seq, when the order comes from a transcript.
    pub seq: Option<u64>,
    /// Index of the matching command-ledger entry, if any.
    pub ledger_index: Option<usize>,
    /// The matching command-ledger entry, if any.
    pub entry: Option<LedgerCommand>,
    /// What the command does.
    pub effects: Vec<Effect>,
}

impl SessionCommand {
    /// Where the command is cited in messages: ledger pointer or transcript seq.
    pub(crate) fn origin(&self) -> String {
        match (self.ledger_index, self.seq) {
            (Some(i), Some(seq)) => format!("/commands/{i}, transcript seq {seq}"),
            (Some(i), None) => format!("/commands/{i}"),
            (None, Some(seq)) => format!("transcript seq {seq}"),
            (None, None) => "the session".to_owned(),
        }
    }

    /// The JSON pointer a violation about this command should carry.
    pub(crate) fn pointer(&self) -> String {
        match self.ledger_index {
            Some(i) => format!("/commands/{i}"),
            None => "/commands".to_owned(),
        }
    }
}

/// One transcript tool call that mutates something.
#[derive(Debug, Clone)]
pub(crate) struct ToolMutation {
    pub seq: u64,
    pub name: String,
    pub effect: Effect,
}

/// A transcript line a proof cites, with the result recorded for its call.
pub(crate) struct Cited<'a> {
    /// The command or tool call (or the cited line itself when it is neither).
    pub call: &'a TranscriptEntry,
    /// What came back, when recorded.
    pub result: Option<&'a Value>,
}

/// Everything the rules read, computed once.
pub(crate) struct Ctx<'a> {
    pub report: &'a Value,
    pub transcript: Option<&'a [TranscriptEntry]>,
    pub narrative: Narrative,
    /// The session's commands in order (transcript order when there is one).
    pub session: Vec<SessionCommand>,
    /// Mutating tool calls of the transcript.
    pub tools: Vec<ToolMutation>,
    /// Schema violations (rules 1 and 3).
    pub schema: Vec<Violation>,
    /// The values those violations reject, excluded from every later rule.
    pub excluded: Excluded,
    /// What the transcript shows the session did (only with a transcript).
    pub model: Option<Session>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(report: &'a Value, transcript: Option<&'a [TranscriptEntry]>) -> Self {
        let narrative = Narrative::parse_about(
            report
                .get("narrative")
                .and_then(Value::as_str)
                .unwrap_or(""),
            crate::narrative::Reviewed {
                pull_request: report
                    .pointer("/target/pullRequest/number")
                    .and_then(Value::as_u64),
            },
        );
        let schema = structure::schema_violations(report);
        let excluded = Excluded::from_schema(&schema);
        let ledger = read::command_ledger(report, &excluded);
        let session = session_commands(&ledger, transcript);
        let tools = transcript
            .unwrap_or_default()
            .iter()
            .filter_map(|e| match e {
                TranscriptEntry::Tool {
                    seq,
                    name,
                    arguments,
                    ..
                } => classify::classify_tool(name, arguments).map(|effect| ToolMutation {
                    seq: *seq,
                    name: name.clone(),
                    effect,
                }),
                _ => None,
            })
            .collect();
        let model = transcript.map(|t| {
            let mut model = Session::build(t);
            // A directory the report itself calls the main checkout is one.
            for c in &session {
                if let (Some(seq), Some(entry)) = (c.seq, &c.entry)
                    && entry.location == Some(crate::model::CommandLocation::MainCheckout)
                    && let Some(dir) = model.command_dirs.get(&seq).cloned()
                {
                    model.add_main_dir(&dir);
                }
            }
            model
        });
        Self {
            report,
            transcript,
            narrative,
            session,
            tools,
            schema,
            excluded,
            model,
        }
    }

    /// Transcript seqs of the official validation commands: those listed in
    /// `validation.commands` or classified `official-pr-head-validation`.
    pub(crate) fn official_seqs(&self) -> Vec<u64> {
        let listed: Vec<String> = self
            .get::<Vec<String>>("/validation/commands")
            .unwrap_or_default()
            .iter()
            .map(|c| classify::normalize(c))
            .collect();
        self.session
            .iter()
            .filter(|c| {
                listed.contains(&c.text)
                    || c.entry.as_ref().and_then(|e| e.phase)
                        == Some(crate::model::CommandPhase::OfficialPrHeadValidation)
            })
            .filter_map(|c| c.seq)
            .collect()
    }

    /// The readable command-ledger entries with their indices.
    pub(crate) fn ledger(&self) -> Vec<(usize, LedgerCommand)> {
        read::command_ledger(self.report, &self.excluded)
    }

    /// The command-ledger entry recording the transcript action at `seq`: same `seq`,
    /// or (for tool calls) a command naming the tool.
    pub(crate) fn ledger_entry_for(
        &self,
        seq: u64,
        tool: Option<&str>,
    ) -> Option<(usize, LedgerCommand)> {
        let entries = self.ledger();
        entries
            .iter()
            .find(|(_, e)| e.seq == Some(seq))
            .or_else(|| {
                tool.and_then(|t| {
                    entries
                        .iter()
                        .find(|(_, e)| e.seq.is_none() && e.command.trim().starts_with(t))
                })
            })
            .cloned()
    }

    /// The transcript line at `seq` as a proof cites it: the call, and the result
    /// recorded for it. A cited `result` line stands for its call.
    pub(crate) fn cited(&self, seq: u64) -> Option<Cited<'_>> {
        let transcript = self.transcript?;
        let entry = transcript.iter().find(|e| e.seq() == seq)?;
        if let TranscriptEntry::Result { of, result, .. } = entry {
            let call = transcript.iter().find(|e| e.seq() == *of).unwrap_or(entry);
            return Some(Cited {
                call,
                result: Some(result),
            });
        }
        let result = self.model.as_ref().and_then(|m| m.result(seq));
        Some(Cited {
            call: entry,
            result,
        })
    }

    /// The value at `pointer` read as `T`, or `None` when absent or malformed.
    pub(crate) fn get<T: DeserializeOwned>(&self, pointer: &str) -> Option<T> {
        self.report
            .pointer(pointer)
            .and_then(|v| T::deserialize(v).ok())
    }

    /// The non-blank string at `pointer`.
    pub(crate) fn text(&self, pointer: &str) -> Option<&'a str> {
        self.report
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }

    /// The boolean at `pointer`; `false` when absent or not a boolean.
    pub(crate) fn flag(&self, pointer: &str) -> bool {
        self.report
            .pointer(pointer)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Whether the value at `pointer` is an explicit `{"notApplicable": ...}`.
    pub(crate) fn not_applicable(&self, pointer: &str) -> bool {
        self.report
            .pointer(pointer)
            .is_some_and(|v| v.get("notApplicable").is_some())
    }

    pub(crate) fn disposition(&self) -> Option<Disposition> {
        self.get("/handoff/disposition")
    }

    /// The entries of one mutation category, each with the fields the schema
    /// accepted (see [`read`]).
    pub(crate) fn category(&self, category: MutationCategory) -> Vec<MutationEntry> {
        self.indexed_category(category)
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    }

    /// [`Ctx::category`] with each entry's index in the report's list (an entry the
    /// schema rejected as a whole is left out, so indices may skip).
    pub(crate) fn indexed_category(
        &self,
        category: MutationCategory,
    ) -> Vec<(usize, MutationEntry)> {
        let base = format!("/mutations/{}", category.key());
        let Some(items) = self.report.pointer(&base).and_then(Value::as_array) else {
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                read::mutation_entry(v, &format!("{base}/{i}"), &self.excluded).map(|e| (i, e))
            })
            .collect()
    }

    /// The transcript events of the given name, in order.
    pub(crate) fn events(
        &self,
        name: &EventName,
    ) -> Vec<(u64, &'a serde_json::Map<String, Value>)> {
        self.transcript
            .unwrap_or_default()
            .iter()
            .filter_map(|e| match e {
                TranscriptEntry::Event {
                    seq,
                    name: n,
                    details,
                } if n == name => Some((*seq, details)),
                _ => None,
            })
            .collect()
    }
}

/// The session's commands: transcript commands in seq order matched to ledger entries
/// (same normalised text, each ledger entry used once), or the ledger itself.
fn session_commands(
    ledger: &[(usize, LedgerCommand)],
    transcript: Option<&[TranscriptEntry]>,
) -> Vec<SessionCommand> {
    let from_ledger = |i: usize, e: &LedgerCommand| SessionCommand {
        text: classify::normalize(&e.command),
        seq: e.seq,
        ledger_index: Some(i),
        entry: Some(e.clone()),
        effects: classify::classify_command(&e.command),
    };
    let Some(transcript) = transcript else {
        return ledger.iter().map(|(i, e)| from_ledger(*i, e)).collect();
    };
    let mut used = vec![false; ledger.len()];
    let mut out = Vec::new();
    for entry in transcript {
        let TranscriptEntry::Command { seq, command, .. } = entry else {
            continue;
        };
        let text = classify::normalize(command);
        let candidates = || {
            ledger
                .iter()
                .enumerate()
                .filter(|(k, (_, e))| !used[*k] && classify::normalize(&e.command) == text)
        };
        let found = candidates()
            .find(|(_, (_, e))| e.seq == Some(*seq))
            .or_else(|| candidates().find(|(_, (_, e))| e.seq.is_none()))
            .or_else(|| candidates().next())
            .map(|(k, _)| k);
        let (ledger_index, matched) = match found {
            Some(k) => {
                used[k] = true;
                (Some(ledger[k].0), Some(ledger[k].1.clone()))
            }
            None => (None, None),
        };
        out.push(SessionCommand {
            effects: classify::classify_command(command),
            text,
            seq: Some(*seq),
            ledger_index,
            entry: matched,
        });
    }
    out
}

/// Whether a mutation entry records `command` (same normalised command, or named in
/// its clean-before/after proof).
pub(crate) fn entry_records(entry: &MutationEntry, command: &str) -> bool {
    let norm = |s: &Option<String>| s.as_deref().map(classify::normalize);
    norm(&entry.command).as_deref() == Some(command)
        || [&entry.clean_before, &entry.clean_after]
            .into_iter()
            .any(|proof| norm(proof).is_some_and(|p| p.contains(command)))
}
