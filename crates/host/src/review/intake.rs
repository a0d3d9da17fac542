//! Phase 5 of a review: candidate intake, the host's check of every candidate's location
//! before verification ([`candidate_intake`]).

use vouch_core::{
    Candidate, Limitation, LimitationKind, PathLookup, candidate_intake, is_canonical_path,
};
use vouch_git::{ReadError, SourceReader};

use super::env::ReviewEnv;
use crate::diagnostics::ReasonCode;

/// What a file at exactly `candidate.path` (a canonical path) at its revision is: text of
/// so many lines, binary, or missing (no file has that exact path there).
fn lookup(reader: &SourceReader, candidate: &Candidate) -> PathLookup {
    match reader.read_file(candidate.revision, &candidate.path, Some(1), Some(1)) {
        Ok(read)
            if read
                .window
                .as_ref()
                .is_none_or(|w| w.path == candidate.path) =>
        {
            PathLookup::Text(read.total_lines)
        }
        Err(ReadError::Binary { ref path, .. }) if *path == candidate.path => PathLookup::Binary,
        _ => PathLookup::Missing,
    }
}

/// Rule ([`candidate_intake`]): candidates whose location resolves go on to
/// verification; a candidate on a changed file the composition excluded (`excluded`: its
/// paths at head and base) never does, so the excluded file's source never reaches the
/// verifier; every other one is recorded as an observation with its reason code and
/// an `unverifiable-candidate` limitation (coverage `limited`, never clean), and costs
/// no other candidate anything. Returns the candidates to verify, in order.
pub(super) fn intake(
    env: &ReviewEnv,
    candidates: Vec<Candidate>,
    excluded: &[String],
    (limitations, observations): (&mut Vec<Limitation>, &mut Vec<String>),
) -> Vec<Candidate> {
    let mut accepted = Vec::with_capacity(candidates.len());
    for c in candidates {
        let found = if !is_canonical_path(&c.path) {
            PathLookup::Missing
        } else if excluded.contains(&c.path) {
            PathLookup::Excluded
        } else {
            lookup(&env.services.reader, &c)
        };
        match candidate_intake(&c, found) {
            Ok(()) => accepted.push(c),
            Err(problem) => {
                env.diagnose(
                    Some(&c.proposed_by),
                    "verification",
                    None,
                    ReasonCode::CandidateNotResolved,
                );
                let at = format!(
                    "{} ({}:{}-{} at {})",
                    c.id,
                    c.path,
                    c.start_line,
                    c.end_line,
                    c.revision.as_str()
                );
                observations.push(format!(
                    "candidate {at} was not verified: {problem}: {}",
                    problem.explain()
                ));
                limitations.push(Limitation {
                    kind: LimitationKind::UnverifiableCandidate,
                    stage: Some(c.proposed_by.clone()),
                    detail: format!("candidate {at} was not verified ({problem})"),
                });
            }
        }
    }
    accepted
}
