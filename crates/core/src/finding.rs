//! Verified findings, their provenance, and the merge of overlapping findings.

use serde::{Deserialize, Serialize};

use crate::boundary::Area;
use crate::candidate::Severity;
use crate::source::{Citation, Revision};

/// Who proposed and who verified a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// Every stage instance label that proposed it (sorted, unique).
    pub proposed_by: Vec<String>,
    /// The host-assigned candidate ids merged into it.
    pub candidate_ids: Vec<String>,
    /// The verifier instance label.
    pub verified_by: String,
    /// 1 for the batch pass; 2 when a focused single-candidate pass recovered it.
    pub verification_passes: u8,
}

/// A finding that verification proved from source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Repository-relative path.
    pub path: String,
    /// Side the lines refer to.
    pub revision: Revision,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Severity (as verified).
    pub severity: Severity,
    /// Review area (the candidate's).
    #[schemars(with = "crate::boundary::AreaSchema")]
    pub area: Area,
    /// The verified claim.
    pub claim: String,
    /// The verifier's decisive evidence.
    pub evidence: String,
    /// Source windows the claim rests on, each inside the verifier's ledger.
    pub citations: Vec<Citation>,
    /// Who proposed and verified it.
    pub provenance: Provenance,
    /// The other verified claims merged into this finding (overlapping findings of the
    /// same area with another claim), so no verified claim is lost by a merge; empty,
    /// and left out of the report, when nothing else was merged in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_verified: Vec<AlsoVerified>,
}

/// A verified claim merged into a finding whose own claim is another one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlsoVerified {
    /// The claim, as verified.
    pub claim: String,
    /// Its severity (as verified).
    pub severity: Severity,
    /// Its first line.
    pub start_line: u32,
    /// Its last line.
    pub end_line: u32,
}

impl Finding {
    fn overlaps(&self, other: &Finding) -> bool {
        self.path == other.path
            && self.revision == other.revision
            && self.area == other.area
            && self.start_line <= other.end_line
            && other.start_line <= self.end_line
    }

    /// This finding's own claim, as merged into another.
    fn as_also(&self) -> AlsoVerified {
        AlsoVerified {
            claim: self.claim.clone(),
            severity: self.severity,
            start_line: self.start_line,
            end_line: self.end_line,
        }
    }

    /// The finding's claim followed by every other verified claim merged into it: the
    /// text a SARIF result, an rdjson diagnostic or a Code Quality issue carries.
    pub fn message(&self) -> String {
        let mut text = self.claim.clone();
        for a in &self.also_verified {
            text.push_str(&format!(
                " Also verified here ({}, lines {}-{}): {}",
                a.severity.as_str(),
                a.start_line,
                a.end_line,
                a.claim
            ));
        }
        text
    }

    fn absorb(&mut self, mut other: Finding) {
        let mut also = std::mem::take(&mut other.also_verified);
        if other.severity < self.severity {
            also.push(self.as_also());
            self.severity = other.severity;
            self.claim = std::mem::take(&mut other.claim);
            self.evidence = std::mem::take(&mut other.evidence);
        } else {
            also.push(other.as_also());
        }
        for a in also {
            if a.claim != self.claim && !self.also_verified.iter().any(|k| k.claim == a.claim) {
                self.also_verified.push(a);
            }
        }
        self.start_line = self.start_line.min(other.start_line);
        self.end_line = self.end_line.max(other.end_line);
        for c in other.citations {
            if !self.citations.contains(&c) {
                self.citations.push(c);
            }
        }
        let p = &mut self.provenance;
        p.proposed_by.extend(other.provenance.proposed_by);
        p.proposed_by.sort();
        p.proposed_by.dedup();
        p.candidate_ids.extend(other.provenance.candidate_ids);
        p.candidate_ids.sort();
        p.candidate_ids.dedup();
        p.verification_passes = p
            .verification_passes
            .max(other.provenance.verification_passes);
    }
}

/// Rule (JSON conventions, "Merge"): two verified findings overlap when they share path and
/// revision, their line ranges intersect and their review area is the same; overlap is
/// merged after verification, keeping every proposer in provenance. The merged finding
/// spans both ranges, keeps the more severe claim, and the union of citations; every
/// other verified claim it absorbs is kept in `also_verified` (a merge never drops a
/// verified claim).
/// Output is sorted by path, then start line.
pub fn merge_findings(findings: Vec<Finding>) -> Vec<Finding> {
    let mut merged: Vec<Finding> = Vec::new();
    for f in findings {
        match merged.iter_mut().find(|m| m.overlaps(&f)) {
            Some(m) => m.absorb(f),
            None => merged.push(f),
        }
    }
    // A merge can widen a range into a third finding: repeat until stable.
    let mut changed = true;
    while changed {
        changed = false;
        'outer: for i in 0..merged.len() {
            for j in i + 1..merged.len() {
                if merged[i].overlaps(&merged[j]) {
                    let other = merged.remove(j);
                    merged[i].absorb(other);
                    changed = true;
                    break 'outer;
                }
            }
        }
    }
    merged.sort_by(|a, b| {
        (&a.path, a.start_line, a.severity).cmp(&(&b.path, b.start_line, b.severity))
    });
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, s: u32, e: u32, area: Area, by: &str, sev: Severity) -> Finding {
        Finding {
            path: path.into(),
            revision: Revision::Head,
            start_line: s,
            end_line: e,
            severity: sev,
            area,
            claim: format!("{by} claim"),
            evidence: String::new(),
            citations: vec![],
            provenance: Provenance {
                proposed_by: vec![by.into()],
                candidate_ids: vec![format!("{by}/0")],
                verified_by: "verifier #1".into(),
                verification_passes: 1,
            },
            also_verified: vec![],
        }
    }

    #[test]
    fn overlapping_findings_merge_keeping_every_proposer() {
        use Severity::*;
        // (inputs, expected count, expected proposers of the first output)
        let cases: Vec<(Vec<Finding>, usize, Vec<&str>)> = vec![
            (
                vec![
                    f("a", 1, 5, Area::Correctness, "x #1", High),
                    f("a", 5, 9, Area::Correctness, "y #1", Low),
                ],
                1,
                vec!["x #1", "y #1"],
            ),
            (
                vec![
                    f("a", 1, 5, Area::Correctness, "x #1", High),
                    f("a", 6, 9, Area::Correctness, "y #1", Low),
                ],
                2,
                vec!["x #1"],
            ),
            (
                vec![
                    f("a", 1, 5, Area::Correctness, "x #1", High),
                    f("a", 1, 5, Area::Security, "y #1", Low),
                ],
                2,
                vec!["x #1"],
            ),
            (
                vec![
                    f("a", 1, 5, Area::Correctness, "x #1", High),
                    f("b", 1, 5, Area::Correctness, "y #1", Low),
                ],
                2,
                vec!["x #1"],
            ),
            // a bridge: 1-5 and 10-12 merge through 4-11
            (
                vec![
                    f("a", 1, 5, Area::Correctness, "x #1", Low),
                    f("a", 10, 12, Area::Correctness, "y #1", Low),
                    f("a", 4, 11, Area::Correctness, "z #1", Critical),
                ],
                1,
                vec!["x #1", "y #1", "z #1"],
            ),
        ];
        for (input, count, proposers) in cases {
            let out = merge_findings(input);
            assert_eq!(out.len(), count);
            assert_eq!(out[0].provenance.proposed_by, proposers);
        }
        let out = merge_findings(vec![
            f("a", 1, 5, Area::Correctness, "x #1", Low),
            f("a", 3, 9, Area::Correctness, "y #1", High),
        ]);
        assert_eq!(
            (out[0].start_line, out[0].end_line, out[0].severity),
            (1, 9, High)
        );
        assert_eq!(out[0].claim, "y #1 claim");
        assert_eq!(
            out[0].also_verified,
            [AlsoVerified {
                claim: "x #1 claim".into(),
                severity: Low,
                start_line: 1,
                end_line: 5
            }]
        );
        assert_eq!(
            out[0].message(),
            "y #1 claim Also verified here (low, lines 1-5): x #1 claim"
        );
        // The same claim twice is one claim.
        let twice = merge_findings(vec![
            f("a", 1, 5, Area::Correctness, "x #1", Low),
            f("a", 2, 6, Area::Correctness, "x #1", Low),
        ]);
        assert!(twice[0].also_verified.is_empty());
    }

    fn finding() -> impl proptest::strategy::Strategy<Value = Finding> {
        use proptest::prelude::*;
        (
            prop::sample::select(vec!["a", "b"]),
            1u32..20,
            0u32..6,
            prop::sample::select(vec![Area::Correctness, Area::Security]),
            prop::sample::select(vec!["x #1", "y #1", "z #2"]),
            prop::sample::select(vec![Severity::Critical, Severity::High, Severity::Low]),
        )
            .prop_map(|(path, s, len, area, by, sev)| f(path, s, s + len, area, by, sev))
    }

    proptest::proptest! {
        /// A merge never loses a verified claim or a proposer, and what it returns no
        /// longer overlaps.
        #[test]
        fn merging_keeps_every_claim_and_proposer(input in proptest::collection::vec(finding(), 0..12)) {
            use std::collections::BTreeSet;
            let claims = |fs: &[Finding]| -> BTreeSet<(String, String, Area, String)> {
                fs.iter()
                    .flat_map(|f| {
                        std::iter::once(f.claim.clone())
                            .chain(f.also_verified.iter().map(|a| a.claim.clone()))
                            .map(move |c| (f.path.clone(), format!("{:?}", f.revision), f.area, c))
                    })
                    .collect()
            };
            let out = merge_findings(input.clone());
            proptest::prop_assert_eq!(claims(&out), claims(&input));
            let proposers: BTreeSet<String> = input.iter().flat_map(|f| f.provenance.proposed_by.clone()).collect();
            let kept: BTreeSet<String> = out.iter().flat_map(|f| f.provenance.proposed_by.clone()).collect();
            proptest::prop_assert_eq!(kept, proposers);
            for (i, a) in out.iter().enumerate() {
                for b in &out[i + 1..] {
                    proptest::prop_assert!(!a.overlaps(b));
                }
            }
        }
    }
}
