//! Phase 1 and 2 of a review: partition the changed files (binary and excluded files
//! leave the canonical list) and assign the rest to the lane instances.

use vouch_abi::Role;
use vouch_core::{
    ChangeSnapshot, ExcludedFile, Limitation, LimitationKind, NotReviewedFile, NotReviewedReason,
    expected_files, files_without_lane,
};

use super::env::ReviewEnv;
use super::stage::StagePlan;
use super::{ExclusionRule, InstanceSpec, ReviewPlan, UNASSIGNED_REASON};
use crate::manifest::BinaryPolicy;
use vouch_core::{StageRecord, StageStatus};
use vouch_git::BinarySides;

/// The changed files, split before any stage runs.
#[derive(Default)]
pub(super) struct Partition {
    /// The canonical list every lane instance is assigned from.
    pub(crate) expected: Vec<String>,
    /// Files set aside before review (binary, excluded, unassigned), with typed reasons.
    pub(crate) set_aside: Vec<NotReviewedFile>,
    /// Limitations the partition itself causes (excluded or unassigned files).
    pub(crate) limitations: Vec<Limitation>,
    /// Observations for the report (binary files reviewed from their metadata).
    pub(crate) observations: Vec<String>,
}

impl Partition {
    /// The paths of the changed files an exclusion rule set aside, at head and (for a
    /// rename or copy) at base.
    pub(super) fn excluded_paths(&self, snapshot: &ChangeSnapshot) -> Vec<String> {
        let mut paths = Vec::new();
        for f in self
            .set_aside
            .iter()
            .filter(|f| f.reason == NotReviewedReason::Excluded)
        {
            paths.push(f.path.clone());
            if let Some(old) = snapshot.file(&f.path).and_then(|c| c.previous_path.clone()) {
                paths.push(old);
            }
        }
        paths
    }

    /// The set-aside files as the report's `excludedFiles` (path and reason in words).
    pub(super) fn excluded_files(&self) -> Vec<ExcludedFile> {
        self.set_aside
            .iter()
            .map(|f| ExcludedFile {
                path: f.path.clone(),
                reason: f.detail.clone(),
            })
            .collect()
    }
}

/// Rule (design, "no file is silently skipped"; "metadata-only in-scope patches can
/// finish without text reads"): files an exclusion rule matches leave the canonical
/// list, each listed with its reason; coverage is then `limited`. A binary file is a
/// metadata-only patch under [`BinaryPolicy::Metadata`] (it stays in the list, and an
/// observation says its content is not read) unless `sides` says a side of it is text
/// ([`vouch_git::SourceReader::binary_sides`]); then, and under
/// [`BinaryPolicy::Limit`], it leaves the list as `binary`. So a source file made binary
/// by one NUL byte is not reviewed, and never counts as reviewed.
pub(super) fn partition_files(
    snapshot: &ChangeSnapshot,
    exclusion: &ExclusionRule,
    binary: BinaryPolicy,
    sides: &dyn Fn(&str) -> BinarySides,
) -> Partition {
    let mut part = Partition::default();
    let mut reviewable = Vec::new();
    let mut tally = SetAside::default();
    for f in &snapshot.files {
        let aside = |reason, detail: String| NotReviewedFile {
            path: f.path.clone(),
            reason,
            detail,
        };
        if f.binary && binary == BinaryPolicy::Limit {
            let detail = "binary file: no text to review".to_string();
            part.set_aside
                .push(aside(NotReviewedReason::Binary, detail));
            tally.binary_by_policy += 1;
        } else if let Some((kind, detail)) = (f.binary && (exclusion)(&f.path).is_none())
            .then(|| {
                let kind = sides(&f.path);
                unreviewable_binary(kind).map(|d| (kind, d))
            })
            .flatten()
        {
            part.set_aside
                .push(aside(NotReviewedReason::Binary, detail.to_string()));
            match kind {
                BinarySides::Unrecognised => tally.binary_unrecognised += 1,
                _ => tally.binary_with_text += 1,
            }
        } else if let Some(reason) = exclusion(&f.path) {
            part.set_aside
                .push(aside(NotReviewedReason::Excluded, reason));
            tally.excluded += 1;
        } else {
            reviewable.push(f);
        }
    }
    let metadata_only: Vec<&str> = reviewable
        .iter()
        .filter(|f| f.binary)
        .map(|f| f.path.as_str())
        .collect();
    if !metadata_only.is_empty() {
        part.observations.push(format!(
            "{} binary file(s) are reviewed from their metadata only (status, sizes, blob \
             ids, detected type); their content was not read: {}",
            metadata_only.len(),
            metadata_only.join(", ")
        ));
    }
    if !part.set_aside.is_empty() {
        part.limitations.push(Limitation {
            kind: LimitationKind::ExcludedFiles,
            stage: None,
            detail: tally.detail(),
        });
    }
    part.limitations
        .extend(vouch_core::rename_limitation(snapshot));
    part.expected = expected_files(reviewable);
    part
}

/// Why a binary file cannot be reviewed from its metadata ([`BinarySides`]), if it can't.
fn unreviewable_binary(sides: BinarySides) -> Option<&'static str> {
    match sides {
        BinarySides::Binary => None,
        BinarySides::Unrecognised => Some(
            "binary of no format its content shows, or not the format its name says (a \
             script behind another format's header, or after bytes of no known format): what \
             it holds cannot be said from its metadata, so it cannot be reviewed from it",
        ),
        BinarySides::Text => Some(
            "binary to git, but a side of it is text (a source file with a NUL byte, a text \
             file turned binary, or code behind a format's magic bytes) that was never shown: \
             it cannot be reviewed from its metadata",
        ),
    }
}

/// How many files were set aside, by why.
#[derive(Default)]
struct SetAside {
    /// Matched by an exclusion rule.
    excluded: usize,
    /// Binary, under `binary = "limit"`.
    binary_by_policy: usize,
    /// Binary to git with a side that is text ([`unreviewable_binary`]).
    binary_with_text: usize,
    /// Binary of no format its content and name agree on ([`unreviewable_binary`]).
    binary_unrecognised: usize,
}

impl SetAside {
    /// What the limitation of the files set aside says: how many, and each why.
    fn detail(&self) -> String {
        let parts: Vec<String> = [
            (self.excluded, "excluded by a [files] exclude rule"),
            (
                self.binary_by_policy,
                "binary, set aside by binary = \"limit\"",
            ),
            (
                self.binary_with_text,
                "binary to git but with text never shown, which cannot be reviewed from \
                 metadata",
            ),
            (
                self.binary_unrecognised,
                "binary of a format not recognised from its content and name, which cannot \
                 be reviewed from metadata",
            ),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| format!("{n} {why}"))
        .collect();
        format!(
            "{} changed file(s) were not reviewed: {}",
            self.excluded
                + self.binary_by_policy
                + self.binary_with_text
                + self.binary_unrecognised,
            parts.join("; ")
        )
    }
}

/// One candidate lane instance of this review: skipped (with its record) or to run.
pub(super) enum Lane {
    Skipped(Box<StageRecord>),
    Run(Box<StagePlan>),
}

pub(super) fn plan_for(env: &ReviewEnv, spec: &InstanceSpec, assigned: Vec<String>) -> StagePlan {
    StagePlan {
        label: spec.label.clone(),
        lane: spec.label.clone(),
        handle: spec.handle.clone(),
        assigned,
        budget: spec.budget,
        prefetch_tokens: spec.prefetch_tokens,
        model: spec.model.clone(),
        shards: spec.shards,
        split: vec![],
        inline_bytes: env.inputs.inline_bytes.unwrap_or(usize::MAX),
        retry_answer_bytes: usize::MAX,
        receipt_bound: None,
    }
}

fn skipped(spec: &InstanceSpec, assigned: usize, why: &str) -> StageRecord {
    StageRecord {
        status: StageStatus::Skipped,
        problem: Some(why.to_string()),
        ..super::stage::stage_record(&spec.label, &spec.handle, assigned)
    }
}

/// Assigns the canonical list to the lanes: investigators receive every file, other
/// roles the files their selection matches; the outcome investigator is skipped without
/// detected intent, and an instance with no file is skipped. Files no running lane
/// receives leave the canonical list as `unassigned` (listed, coverage `limited`).
pub(super) fn assign_lanes(env: &ReviewEnv, plan: &ReviewPlan, part: &mut Partition) -> Vec<Lane> {
    let lanes: Vec<Lane> = plan
        .lanes
        .iter()
        .map(|spec| assign(env, spec, &part.expected))
        .collect();
    let assignments: Vec<Vec<String>> = lanes
        .iter()
        .filter_map(|l| match l {
            Lane::Run(p) => Some(p.assigned.clone()),
            Lane::Skipped(_) => None,
        })
        .collect();
    let unassigned = files_without_lane(&part.expected, &assignments);
    if !unassigned.is_empty() {
        part.limitations.push(Limitation {
            kind: LimitationKind::UnassignedFiles,
            stage: None,
            detail: format!(
                "{} changed file(s) were not reviewed: {UNASSIGNED_REASON}",
                unassigned.len()
            ),
        });
        part.set_aside
            .extend(unassigned.iter().map(|path| NotReviewedFile {
                path: path.clone(),
                reason: NotReviewedReason::Unassigned,
                detail: UNASSIGNED_REASON.into(),
            }));
        part.expected.retain(|p| !unassigned.contains(p));
    }
    lanes
}

fn assign(env: &ReviewEnv, spec: &InstanceSpec, expected: &[String]) -> Lane {
    let role = spec.handle.descriptor().role;
    let assigned: Vec<String> = match role {
        Role::Investigator => expected.to_vec(),
        _ => expected
            .iter()
            .filter(|p| spec.selection.matches(p))
            .cloned()
            .collect(),
    };
    if role == Role::OutcomeInvestigator && env.inputs.intent.is_none() {
        let why = "no pull-request intent was detected";
        Lane::Skipped(Box::new(skipped(spec, assigned.len(), why)))
    } else if assigned.is_empty() {
        let why = "no changed file matches its selection";
        Lane::Skipped(Box::new(skipped(spec, 0, why)))
    } else {
        Lane::Run(Box::new(plan_for(env, spec, assigned)))
    }
}
