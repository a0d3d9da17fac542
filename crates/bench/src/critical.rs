//! The critical path of a review: how long it must take with a model that answers each
//! request after a fixed latency, from the recorded requests' stage structure.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The phases of a review, in the order they run; each waits for the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// The endpoint check before any stage.
    Probe,
    /// Candidate lanes (investigators, conventions, panel members and their shards).
    Lanes,
    /// The clean-result audit.
    Audit,
    /// Verification and its focused passes.
    Verify,
    /// A request naming no stage instance (an isolated repair): counted as one more
    /// sequential request, since its chain is unknown.
    Unattributed,
}

impl Phase {
    /// The phase of a stage instance labelled `label` (`None`: no label in the request).
    pub fn of(label: Option<&str>, probe: bool) -> Phase {
        match label {
            _ if probe => Phase::Probe,
            None => Phase::Unattributed,
            Some(l) if l.starts_with("clean-result-audit") => Phase::Audit,
            Some(l) if l.starts_with("verifier") => Phase::Verify,
            Some(_) => Phase::Lanes,
        }
    }
}

/// One recorded request: its stage instance label and phase, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The stage instance (`Instance: …` of the request), if any.
    pub label: Option<String>,
    /// Its phase.
    pub phase: Phase,
}

/// Rule: requests of one stage instance form a chain that runs strictly in sequence
/// (agent turns, retry); phases run one after the other; within a phase the chains run
/// at most `concurrency` at a time, started in the order their first request arrived,
/// each on the first free slot. The critical path, in request latencies, is the sum of
/// the phases' makespans; unattributed requests each add one.
pub fn critical_path(steps: &[Step], concurrency: usize) -> u64 {
    let mut phases: Vec<Phase> = steps.iter().map(|s| s.phase).collect();
    phases.sort();
    phases.dedup();
    phases
        .into_iter()
        .map(|phase| {
            let in_phase: Vec<&Step> = steps.iter().filter(|s| s.phase == phase).collect();
            if phase == Phase::Unattributed {
                return in_phase.len() as u64;
            }
            makespan(&chain_lengths(&in_phase), concurrency.max(1))
        })
        .sum()
}

/// Chain lengths per label, in order of each label's first request.
fn chain_lengths(steps: &[&Step]) -> Vec<u64> {
    let mut chains: Vec<(Option<&str>, u64)> = Vec::new();
    for step in steps {
        let label = step.label.as_deref();
        match chains.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => chains.push((label, 1)),
        }
    }
    chains.into_iter().map(|(_, n)| n).collect()
}

/// Finish time of the last chain when each starts on the first free of `slots`.
fn makespan(chains: &[u64], slots: usize) -> u64 {
    let mut free: BinaryHeap<Reverse<u64>> = (0..slots).map(|_| Reverse(0)).collect();
    let mut end = 0;
    for &len in chains {
        let Reverse(start) = free.pop().expect("at least one slot");
        end = end.max(start + len);
        free.push(Reverse(start + len));
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(spec: &[(&str, Phase)]) -> Vec<Step> {
        spec.iter()
            .map(|(label, phase)| Step {
                label: (!label.is_empty()).then(|| (*label).to_owned()),
                phase: *phase,
            })
            .collect()
    }

    #[test]
    fn critical_path_table() {
        use Phase::*;
        let cases: Vec<(&str, Vec<Step>, usize, u64)> = vec![
            ("nothing", vec![], 4, 0),
            (
                "probe then one lane of one turn",
                steps(&[("", Probe), ("a", Lanes)]),
                4,
                2,
            ),
            (
                "two lanes in parallel: the longer chain counts",
                steps(&[("a", Lanes), ("b", Lanes), ("a", Lanes), ("a", Lanes)]),
                4,
                3,
            ),
            (
                "phases add up",
                steps(&[
                    ("a", Lanes),
                    ("b", Lanes),
                    ("audit", Audit),
                    ("audit", Audit),
                    ("v", Verify),
                ]),
                4,
                4,
            ),
            (
                "one slot: chains run one after the other",
                steps(&[("a", Lanes), ("b", Lanes), ("b", Lanes)]),
                1,
                3,
            ),
            (
                "two slots, three chains of 2: the third waits",
                steps(&[
                    ("a", Lanes),
                    ("b", Lanes),
                    ("c", Lanes),
                    ("a", Lanes),
                    ("b", Lanes),
                    ("c", Lanes),
                ]),
                2,
                4,
            ),
            (
                "an unattributed request adds one",
                steps(&[("a", Lanes), ("", Unattributed)]),
                4,
                2,
            ),
        ];
        for (name, steps, concurrency, expected) in cases {
            assert_eq!(critical_path(&steps, concurrency), expected, "{name}");
        }
    }

    #[test]
    fn phase_of_labels() {
        assert_eq!(Phase::of(Some("clean-result-audit"), false), Phase::Audit);
        assert_eq!(Phase::of(Some("verifier"), false), Phase::Verify);
        assert_eq!(
            Phase::of(Some("verifier focused pass"), false),
            Phase::Verify
        );
        assert_eq!(
            Phase::of(Some("generic-investigator #1 [shard 3/7]"), false),
            Phase::Lanes
        );
        assert_eq!(Phase::of(None, true), Phase::Probe);
        assert_eq!(Phase::of(None, false), Phase::Unattributed);
    }
}
