//! Dismissed concerns: what a candidate stage checked and cleared, with its evidence.
//! The report keeps each one as an observation and the verifier receives them beside the
//! candidates (a candidate that contradicts recorded evidence must address it); the
//! clean-result audit never receives them, so it stays independent.

use vouch_abi::{DismissedConcern, DismissedForVerification};

/// The concerns `label` dismissed, as the verifier receives them.
pub(crate) fn for_verifier(
    label: &str,
    concerns: &[DismissedConcern],
) -> Vec<DismissedForVerification> {
    concerns
        .iter()
        .map(|c| DismissedForVerification {
            dismissed_by: label.to_string(),
            concern: c.clone(),
        })
        .collect()
}

/// The report observation of one dismissed concern.
pub(super) fn observation(d: &DismissedForVerification) -> String {
    let c = &d.concern;
    format!(
        "{} dismissed a concern at {}:{}-{}: {} Cleared by: {}",
        d.dismissed_by,
        c.path,
        c.start_line,
        c.end_line,
        c.concern.trim(),
        c.evidence.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observation_names_the_stage_the_location_the_concern_and_its_evidence() {
        let concern = DismissedConcern {
            path: "src/lib.rs".into(),
            start_line: 3,
            end_line: 4,
            concern: "the cast might truncate.".into(),
            evidence: "bounds checked at src/lib.rs:2".into(),
        };
        let given = for_verifier("generic-investigator #1", &[concern]);
        assert_eq!(given.len(), 1);
        assert_eq!(
            observation(&given[0]),
            "generic-investigator #1 dismissed a concern at src/lib.rs:3-4: the cast might \
             truncate. Cleared by: bounds checked at src/lib.rs:2"
        );
    }
}
