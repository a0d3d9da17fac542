//! Reading the ledgers after the schema check.
//!
//! A value the schema rejects is reported once, by rule 1 (`INVALID_FIELD`,
//! `UNKNOWN_FIELD`, `CONFUSABLE_CHARACTER`), and then excluded here, explicitly and
//! field by field: the entry keeps every field the schema accepted, so a later rule
//! never reads a misfit field as a missing entry (a mutation entry whose `location`
//! is a path still records its `command`). An entry whose identifying field (`command`)
//! is itself rejected is dropped, and only then.

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::model::{CommandLocation, CommandPhase, MutationEntry};
use crate::violation::{Violation, ViolationCode};

/// The pointers of the values the schema rejected.
#[derive(Debug, Default)]
pub(crate) struct Excluded {
    pointers: BTreeSet<String>,
}

impl Excluded {
    /// The values rule 1 reports as malformed, unknown or confusable.
    pub(crate) fn from_schema(violations: &[Violation]) -> Self {
        let excluding = |code: ViolationCode| {
            matches!(
                code,
                ViolationCode::InvalidField
                    | ViolationCode::UnknownField
                    | ViolationCode::ConfusableCharacter
            )
        };
        Self {
            pointers: violations
                .iter()
                .filter(|v| excluding(v.code))
                .map(|v| v.pointer.clone())
                .collect(),
        }
    }

    /// Whether the value at `pointer`, or a value containing it, was rejected.
    pub(crate) fn covers(&self, pointer: &str) -> bool {
        self.pointers
            .iter()
            .any(|p| pointer == p || pointer.starts_with(&format!("{p}/")))
    }
}

/// One command-ledger entry as the rules read it: a field the schema rejected is
/// `None` (and was reported by rule 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LedgerCommand {
    pub command: String,
    pub location: Option<CommandLocation>,
    pub phase: Option<CommandPhase>,
    pub justification: Option<String>,
    pub capability_proof: Option<String>,
    pub seq: Option<u64>,
}

/// The field `key` of the object at `pointer`, unless the schema rejected it.
fn field<T: DeserializeOwned>(
    object: &Map<String, Value>,
    pointer: &str,
    key: &str,
    excluded: &Excluded,
) -> Option<T> {
    if excluded.covers(&format!("{pointer}/{key}")) {
        return None;
    }
    object
        .get(key)
        .filter(|v| !v.is_null())
        .and_then(|v| T::deserialize(v).ok())
}

/// The command-ledger entry at `pointer`, or `None` when the schema rejected the
/// entry or its `command`.
pub(crate) fn command_entry(
    value: &Value,
    pointer: &str,
    excluded: &Excluded,
) -> Option<LedgerCommand> {
    if excluded.covers(pointer) {
        return None;
    }
    let object = value.as_object()?;
    Some(LedgerCommand {
        command: field(object, pointer, "command", excluded)?,
        location: field(object, pointer, "location", excluded),
        phase: field(object, pointer, "phase", excluded),
        justification: field(object, pointer, "justification", excluded),
        capability_proof: field(object, pointer, "capabilityProof", excluded),
        seq: field(object, pointer, "seq", excluded),
    })
}

/// The mutation entry at `pointer` with the fields the schema accepted; `None` when
/// the schema rejected the entry itself. (`action` is prose no rule reads.)
pub(crate) fn mutation_entry(
    value: &Value,
    pointer: &str,
    excluded: &Excluded,
) -> Option<MutationEntry> {
    if excluded.covers(pointer) {
        return None;
    }
    let object = value.as_object()?;
    Some(MutationEntry {
        action: field(object, pointer, "action", excluded).unwrap_or_default(),
        command: field(object, pointer, "command", excluded),
        tool: field(object, pointer, "tool", excluded),
        location: field(object, pointer, "location", excluded),
        clean_before: field(object, pointer, "cleanBefore", excluded),
        clean_after: field(object, pointer, "cleanAfter", excluded),
    })
}

/// The readable command-ledger entries of `report` with their indices.
pub(crate) fn command_ledger(report: &Value, excluded: &Excluded) -> Vec<(usize, LedgerCommand)> {
    report
        .get("commands")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    command_entry(v, &format!("/commands/{i}"), excluded).map(|e| (i, e))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn excluded(pointers: &[&str]) -> Excluded {
        Excluded {
            pointers: pointers.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    #[test]
    fn a_rejected_field_is_excluded_and_the_entry_kept() {
        let entry = json!({"action": "a", "command": "git worktree add x", "location": "/src"});
        let read = mutation_entry(&entry, "/m/0", &excluded(&["/m/0/location"])).expect("kept");
        assert_eq!(read.command.as_deref(), Some("git worktree add x"));
        assert_eq!(read.location, None);
    }

    #[test]
    fn a_rejected_entry_or_command_drops_the_entry() {
        let entry = json!({"command": "ls", "location": "other", "phase": "review"});
        assert!(command_entry(&entry, "/commands/0", &excluded(&["/commands/0"])).is_none());
        assert!(
            command_entry(&entry, "/commands/0", &excluded(&["/commands/0/command"])).is_none()
        );
        let kept =
            command_entry(&entry, "/commands/0", &excluded(&["/commands/0/phase"])).expect("kept");
        assert_eq!(kept.phase, None);
        assert_eq!(kept.location, Some(CommandLocation::Other));
    }

    #[test]
    fn covers_matches_whole_tokens_only() {
        let ex = excluded(&["/commands/1"]);
        assert!(ex.covers("/commands/1"));
        assert!(ex.covers("/commands/1/location"));
        assert!(!ex.covers("/commands/10"));
    }
}
