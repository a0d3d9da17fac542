//! Which changed files a review may call reviewed, and why every other one is not.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::completion::files_not_fully_seen;
use crate::snapshot::ChangedFile;
use crate::source::SourceLedger;

/// Why a changed file is not counted as reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NotReviewedReason {
    /// An exclusion rule of the composition or the repository matched it.
    Excluded,
    /// A binary file: no text to review.
    Binary,
    /// No running lane instance was assigned it.
    Unassigned,
    /// A stage's receipt listed it, but no such stage was shown or read every changed line.
    NotFullySeen,
    /// No stage's coverage receipt for it was accepted: the stage failed, was cancelled,
    /// or never ran.
    StageFailed,
    /// Its lane reached `max_shards` before it: no stage was given it.
    OverBudget,
}

impl NotReviewedReason {
    /// The stable reason code (as the JSON report spells it).
    pub fn as_str(self) -> &'static str {
        match self {
            NotReviewedReason::Excluded => "excluded",
            NotReviewedReason::Binary => "binary",
            NotReviewedReason::Unassigned => "unassigned",
            NotReviewedReason::NotFullySeen => "not-fully-seen",
            NotReviewedReason::StageFailed => "stage-failed",
            NotReviewedReason::OverBudget => "over-budget",
        }
    }
}

/// A changed file that was not reviewed, with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotReviewedFile {
    /// Current path.
    pub path: String,
    /// Why, as a stable code.
    pub reason: NotReviewedReason,
    /// Why, in words (e.g. the exclusion rule that matched).
    pub detail: String,
}

/// What one candidate-producing stage instance contributes to "files reviewed".
#[derive(Debug, Clone, Copy)]
pub struct StageCoverage<'a> {
    /// The lane it belongs to (its unsharded label): the shards of one lane share it.
    pub lane: &'a str,
    /// The files assigned to it (its canonical list).
    pub assigned: &'a [String],
    /// True when its coverage receipt was accepted (exact, complete) and the stage's
    /// result was accepted (status accepted or limited).
    pub receipt_accepted: bool,
    /// Every source window it read or was given.
    pub ledger: &'a SourceLedger,
}

/// The reviewed files and the reasons for every other changed file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesReviewed {
    /// Files reviewed, sorted.
    pub reviewed: Vec<String>,
    /// Every other changed file with its reason, sorted by path.
    pub not_reviewed: Vec<NotReviewedFile>,
}

const NOT_FULLY_SEEN: &str =
    "its coverage receipt was accepted, but no stage was shown or read every changed line of it";
const STAGE_FAILED: &str = "no stage's coverage receipt for it was accepted (the stage failed, was cancelled, or did not run)";
const OVER_BUDGET: &str =
    "its lane reached max_shards before this file, so no stage was given it (raise max_shards)";

/// Rule (issue 9, "Files reviewed means seen"; issue 10, "lane coverage is the union"):
/// a changed file counts as reviewed only when, in some lane, every stage (shard)
/// assigned it listed it in an accepted coverage receipt **and** together those stages
/// saw every changed line of it by the host's rule ([`files_not_fully_seen`] over the
/// union of their ledgers; a file split by hunks across shards is seen part by part).
/// An unsharded lane is one stage, so this is the stage's own receipt and ledger. Every
/// other changed file is listed by name with its reason: the reason it was set aside
/// before review (`set_aside`: excluded, binary, unassigned), else `not-fully-seen` when
/// such a lane's receipts accepted it, else `over-budget` when a lane left it out at
/// `max_shards` (`left_out`), else `stage-failed`. Files are the snapshot's current
/// paths; both lists are sorted by path. Stages are looked up by path, so the cost is
/// the change plus the assignments, not their product.
pub fn files_reviewed(
    files: &[ChangedFile],
    set_aside: &[NotReviewedFile],
    left_out: &[String],
    stages: &[StageCoverage<'_>],
) -> FilesReviewed {
    let aside: HashMap<&str, &NotReviewedFile> =
        set_aside.iter().map(|a| (a.path.as_str(), a)).collect();
    let left_out: HashSet<&str> = left_out.iter().map(String::as_str).collect();
    let mut by_path: HashMap<&str, Vec<&StageCoverage>> = HashMap::new();
    for stage in stages {
        for path in stage.assigned {
            let holders = by_path.entry(path.as_str()).or_default();
            // A path listed twice in one assignment still names its stage once.
            if !holders.last().is_some_and(|h| std::ptr::eq(*h, stage)) {
                holders.push(stage);
            }
        }
    }
    let mut out = FilesReviewed::default();
    for file in files {
        if let Some(aside) = aside.get(file.path.as_str()) {
            out.not_reviewed.push((*aside).clone());
            continue;
        }
        let holders: &[&StageCoverage] = by_path.get(file.path.as_str()).map_or(&[], Vec::as_slice);
        let mut lanes: Vec<&str> = holders.iter().map(|s| s.lane).collect();
        lanes.sort_unstable();
        lanes.dedup();
        let mut accepted = false;
        let mut seen = false;
        for lane in lanes {
            let shards: Vec<&&StageCoverage> = holders.iter().filter(|s| s.lane == lane).collect();
            if !shards.iter().all(|s| s.receipt_accepted) {
                continue;
            }
            accepted = true;
            let union = SourceLedger {
                windows: shards
                    .iter()
                    .flat_map(|s| s.ledger.windows.iter().cloned())
                    .collect(),
                spans: shards
                    .iter()
                    .flat_map(|s| s.ledger.spans.iter().cloned())
                    .collect(),
                metadata: shards
                    .iter()
                    .flat_map(|s| s.ledger.metadata.iter().cloned())
                    .collect(),
            };
            seen |= files_not_fully_seen([file], &union).is_empty();
        }
        let (reason, detail) = match (seen, accepted) {
            (true, _) => {
                out.reviewed.push(file.path.clone());
                continue;
            }
            (false, true) => (NotReviewedReason::NotFullySeen, NOT_FULLY_SEEN),
            (false, false) if left_out.contains(file.path.as_str()) => {
                (NotReviewedReason::OverBudget, OVER_BUDGET)
            }
            (false, false) => (NotReviewedReason::StageFailed, STAGE_FAILED),
        };
        out.not_reviewed.push(NotReviewedFile {
            path: file.path.clone(),
            reason,
            detail: detail.to_string(),
        });
    }
    out.reviewed.sort();
    out.reviewed.dedup();
    out.not_reviewed.sort_by(|a, b| a.path.cmp(&b.path));
    out.not_reviewed.dedup_by(|a, b| a.path == b.path);
    out
}

/// Rule ([`files_reviewed`], from the records alone): the candidate stages are the
/// records with a lane, each with its assigned paths, whether its receipt was accepted
/// ([`StageRecord::receipt_accepted`]) and its ledger as recorded. The host derives a
/// report's files reviewed this way, and a saved report is checked against the same
/// derivation, so its lists can claim no file its own records do not show was seen.
pub fn files_reviewed_from_records(
    files: &[ChangedFile],
    set_aside: &[NotReviewedFile],
    left_out: &[String],
    records: &[crate::StageRecord],
) -> FilesReviewed {
    let candidates: Vec<(&str, &crate::StageRecord, SourceLedger)> = records
        .iter()
        .filter_map(|r| Some((r.lane.as_deref()?, r, r.source_ledger())))
        .collect();
    let stages: Vec<StageCoverage> = candidates
        .iter()
        .map(|(lane, record, ledger)| StageCoverage {
            lane,
            assigned: &record.assigned_paths,
            receipt_accepted: record.receipt_accepted(),
            ledger,
        })
        .collect();
    files_reviewed(files, set_aside, left_out, &stages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{EntryKind, FileStatus, Hunk};
    use crate::source::{Revision, SourceWindow};

    fn file(path: &str, hunks: &[(u32, u32)]) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            previous_path: None,
            similarity: None,
            status: FileStatus::Modified,
            kind: EntryKind::File,
            old_mode: None,
            new_mode: None,
            binary: false,
            hunks: hunks
                .iter()
                .map(|&(start, lines)| Hunk {
                    old_start: start,
                    old_lines: lines,
                    new_start: start,
                    new_lines: lines,
                    header: String::new(),
                })
                .collect(),
            additions: 1,
            deletions: 1,
            long_lines: vec![],
        }
    }

    /// A ledger showing each window at head and at base, as a patch shows a hunk.
    fn ledger(windows: &[(&str, u32, u32)]) -> SourceLedger {
        let mut l = SourceLedger::default();
        for &(path, s, e) in windows {
            for revision in [Revision::Head, Revision::Base] {
                l.record(SourceWindow {
                    revision,
                    path: path.into(),
                    start_line: s,
                    end_line: e,
                });
            }
        }
        l
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Each not-reviewed file with its reason, in order.
    fn reasons(got: &FilesReviewed) -> Vec<(&str, NotReviewedReason)> {
        got.not_reviewed
            .iter()
            .map(|n| (n.path.as_str(), n.reason))
            .collect()
    }

    fn aside(path: &str, reason: NotReviewedReason) -> NotReviewedFile {
        NotReviewedFile {
            path: path.into(),
            reason,
            detail: "set aside".into(),
        }
    }

    #[test]
    fn a_file_is_reviewed_only_when_an_accepted_receipt_lists_it_and_its_stage_saw_it() {
        use NotReviewedReason::*;
        let files = vec![
            file("a.rs", &[(3, 2)]),
            file("b.rs", &[(10, 1)]),
            file("c.rs", &[(1, 1)]),
            file("mode-only.sh", &[]),
        ];
        let all = strings(&["a.rs", "b.rs", "c.rs", "mode-only.sh"]);
        let ab = strings(&["a.rs", "b.rs"]);
        // A stage shown the mode change's metadata-only patch, beside its windows.
        let with_mode = |mut l: SourceLedger| {
            l.record_metadata("mode-only.sh");
            l
        };
        let full = with_mode(ledger(&[("a.rs", 1, 9), ("b.rs", 10, 10), ("c.rs", 1, 1)]));
        let part = with_mode(ledger(&[("a.rs", 3, 3), ("b.rs", 10, 10)]));
        let none = ledger(&[]);
        let ac = strings(&["a.rs", "c.rs"]);
        let a_first = ledger(&[("a.rs", 3, 3), ("b.rs", 10, 10)]);
        let a_second = ledger(&[("a.rs", 4, 4), ("c.rs", 1, 1)]);
        let stage = |lane, assigned, receipt_accepted, ledger| StageCoverage {
            lane,
            assigned,
            receipt_accepted,
            ledger,
        };
        type Case<'a> = (
            &'a str,
            Vec<StageCoverage<'a>>,
            Vec<NotReviewedFile>,
            Vec<&'a str>,
            Vec<(&'a str, NotReviewedReason)>,
        );
        let cases: Vec<Case> = vec![
            (
                "one accepted stage saw everything",
                vec![stage("l1", &all, true, &full)],
                vec![],
                vec!["a.rs", "b.rs", "c.rs", "mode-only.sh"],
                vec![],
            ),
            (
                "accepted receipt, but a.rs seen only in part and c.rs not at all",
                vec![stage("l1", &all, true, &part)],
                vec![],
                vec!["b.rs", "mode-only.sh"],
                vec![("a.rs", NotFullySeen), ("c.rs", NotFullySeen)],
            ),
            (
                "the stage that saw everything failed its receipt",
                vec![stage("l1", &all, false, &full)],
                vec![],
                vec![],
                vec![
                    ("a.rs", StageFailed),
                    ("b.rs", StageFailed),
                    ("c.rs", StageFailed),
                    ("mode-only.sh", StageFailed),
                ],
            ),
            (
                "seen by a failed stage, listed by an accepted one that saw nothing (not even \
                 the mode change's metadata)",
                vec![
                    stage("l1", &all, false, &full),
                    stage("l2", &all, true, &none),
                ],
                vec![],
                vec![],
                vec![
                    ("a.rs", NotFullySeen),
                    ("b.rs", NotFullySeen),
                    ("c.rs", NotFullySeen),
                    ("mode-only.sh", NotFullySeen),
                ],
            ),
            (
                "two stages: one saw a.rs and b.rs, c.rs was set aside",
                vec![
                    stage("l1", &ab, true, &full),
                    stage("l2", &all, true, &none),
                ],
                vec![aside("c.rs", Excluded)],
                vec!["a.rs", "b.rs"],
                vec![("c.rs", Excluded), ("mode-only.sh", NotFullySeen)],
            ),
            (
                "shards of one lane: a.rs split across two, each saw its part",
                vec![
                    stage("l1", &ab, true, &a_first),
                    stage("l1", &ac, true, &a_second),
                ],
                vec![],
                vec!["a.rs", "b.rs", "c.rs"],
                vec![("mode-only.sh", StageFailed)],
            ),
            (
                "shards of one lane: the shard holding a.rs's second part failed",
                vec![
                    stage("l1", &ab, true, &a_first),
                    stage("l1", &ac, false, &a_second),
                ],
                vec![],
                vec!["b.rs"],
                vec![
                    ("a.rs", StageFailed),
                    ("c.rs", StageFailed),
                    ("mode-only.sh", StageFailed),
                ],
            ),
            (
                "parts seen by two different lanes do not add up",
                vec![
                    stage("l1", &ab, true, &a_first),
                    stage("l2", &ac, true, &a_second),
                ],
                vec![],
                vec!["b.rs", "c.rs"],
                vec![("a.rs", NotFullySeen), ("mode-only.sh", StageFailed)],
            ),
            (
                "no stage ran (an aborted or empty run)",
                vec![],
                vec![aside("b.rs", Binary), aside("c.rs", Unassigned)],
                vec![],
                vec![
                    ("a.rs", StageFailed),
                    ("b.rs", Binary),
                    ("c.rs", Unassigned),
                    ("mode-only.sh", StageFailed),
                ],
            ),
        ];
        for (name, stages, set_aside, reviewed, not_reviewed) in cases {
            let got = files_reviewed(&files, &set_aside, &[], &stages);
            assert_eq!(got.reviewed, strings(&reviewed), "{name}");
            assert_eq!(reasons(&got), not_reviewed, "{name}");
            // Every changed file is either reviewed or listed with a reason, once.
            assert_eq!(
                got.reviewed.len() + got.not_reviewed.len(),
                files.len(),
                "{name}"
            );
        }
    }

    /// A file its lane left out at `max_shards` is `over-budget`, unless another lane
    /// reviewed it or accepted it; a file no stage was given for another reason stays
    /// `stage-failed`.
    #[test]
    fn a_file_left_out_at_max_shards_is_over_budget() {
        use NotReviewedReason::*;
        let files = vec![file("a.rs", &[(1, 1)]), file("b.rs", &[(1, 1)])];
        let a = strings(&["a.rs"]);
        let seen = ledger(&[("a.rs", 1, 1), ("b.rs", 1, 1)]);
        let stages = [StageCoverage {
            lane: "l1",
            assigned: &a,
            receipt_accepted: true,
            ledger: &seen,
        }];
        type Case<'a> = (&'a [&'a str], Vec<(&'a str, NotReviewedReason)>);
        let cases: [Case; 3] = [
            (&["b.rs"], vec![("b.rs", OverBudget)]),
            (&[], vec![("b.rs", StageFailed)]),
            (&["a.rs", "b.rs"], vec![("b.rs", OverBudget)]),
        ];
        for (left_out, expected) in cases {
            let got = files_reviewed(&files, &[], &strings(left_out), &stages);
            assert_eq!(got.reviewed, strings(&["a.rs"]), "{left_out:?}");
            assert_eq!(reasons(&got), expected, "{left_out:?}");
        }
    }

    #[test]
    fn receipt_paths_are_exact() {
        let files = vec![file("src/a.rs", &[(1, 1)])];
        let seen = ledger(&[("src/a.rs", 1, 1)]);
        let sloppy = strings(&["./src/a.rs"]);
        let stages = [StageCoverage {
            lane: "x",
            assigned: &sloppy,
            receipt_accepted: true,
            ledger: &seen,
        }];
        let got = files_reviewed(&files, &[], &[], &stages);
        assert!(got.reviewed.is_empty());
        assert_eq!(got.not_reviewed[0].reason, NotReviewedReason::StageFailed);
    }

    #[test]
    fn reason_codes_match_their_json() {
        use NotReviewedReason::*;
        for r in [
            Excluded,
            Binary,
            Unassigned,
            NotFullySeen,
            StageFailed,
            OverBudget,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
    }

    /// A candidate-stage record of `lane` assigned `paths`, with its receipt `complete`
    /// or not and its ledger of `windows`.
    fn record(
        lane: Option<&str>,
        paths: &[&str],
        complete: bool,
        windows: &[(&str, u32, u32)],
    ) -> crate::StageRecord {
        crate::StageRecord {
            lane: lane.map(str::to_string),
            assigned_paths: strings(paths),
            coverage: Some(crate::CoverageComparison {
                complete,
                reported_incomplete: false,
                missing_files: vec![],
                unexpected_files: vec![],
            }),
            ledger: ledger(windows).compact(),
            ..crate::StageRecord::new(
                "s",
                ("generic-investigator", "1.0.0", crate::Role::Investigator),
                paths.len(),
            )
        }
    }

    #[test]
    fn the_records_alone_say_which_files_were_reviewed() {
        let files = [file("a.rs", &[(3, 2)]), file("b.rs", &[(7, 1)])];
        let table: Vec<(Vec<crate::StageRecord>, Vec<&str>)> = vec![
            // Accepted and seen: reviewed.
            (
                vec![record(
                    Some("lane"),
                    &["a.rs", "b.rs"],
                    true,
                    &[("a.rs", 1, 9), ("b.rs", 7, 7)],
                )],
                vec!["a.rs", "b.rs"],
            ),
            // b.rs never shown.
            (
                vec![record(
                    Some("lane"),
                    &["a.rs", "b.rs"],
                    true,
                    &[("a.rs", 3, 4)],
                )],
                vec!["a.rs"],
            ),
            // The receipt was not accepted.
            (
                vec![record(Some("lane"), &["a.rs"], false, &[("a.rs", 1, 9)])],
                vec![],
            ),
            // A record without a lane (the verifier's) reviews nothing.
            (
                vec![record(None, &["a.rs"], true, &[("a.rs", 1, 9)])],
                vec![],
            ),
            // Two shards of one lane: each file seen by the shard that holds it.
            (
                vec![
                    record(Some("lane"), &["a.rs"], true, &[("a.rs", 3, 4)]),
                    record(Some("lane"), &["b.rs"], true, &[("b.rs", 7, 7)]),
                ],
                vec!["a.rs", "b.rs"],
            ),
            // Nor does one failed shard's lane review the file it holds.
            (
                vec![
                    record(Some("lane"), &["a.rs"], true, &[("a.rs", 3, 4)]),
                    record(Some("lane"), &["a.rs", "b.rs"], false, &[("b.rs", 7, 7)]),
                ],
                vec![],
            ),
        ];
        for (records, reviewed) in table {
            let got = files_reviewed_from_records(&files, &[], &[], &records);
            assert_eq!(got.reviewed, strings(&reviewed), "{records:#?}");
        }
    }
}
