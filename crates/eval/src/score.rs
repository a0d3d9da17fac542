//! Pure scoring: grouping duplicate findings, location matching, counts and metrics per
//! profile and severity, aggregation over cases and repeated runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::case::GoldenComment;
use crate::category::{Category, Profile, Severity};

/// A published finding, as scoring sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalFinding {
    /// Repository-relative path.
    pub path: String,
    /// First line (head).
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Severity.
    pub severity: Severity,
    /// Category (from the finding's review area).
    pub category: Category,
    /// The verified claim.
    pub claim: String,
}

/// Lines between two findings' ranges that still make them one issue.
pub const GROUP_LINE_GAP: u32 = 3;
/// Lines a finding's range may miss a golden comment's line by and still match it.
pub const LOCATION_TOLERANCE: u32 = 3;

/// Findings that express the same issue, as indices into the case's findings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingGroup {
    /// Member indices, ascending.
    pub members: Vec<usize>,
    /// The member that speaks for the group (the most severe, then the first).
    pub representative: usize,
}

fn normalized(claim: &str) -> String {
    claim
        .split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn same_issue(a: &EvalFinding, b: &EvalFinding) -> bool {
    let near = a.path == b.path
        && a.start_line <= b.end_line.saturating_add(GROUP_LINE_GAP)
        && b.start_line <= a.end_line.saturating_add(GROUP_LINE_GAP);
    near || normalized(&a.claim) == normalized(&b.claim)
}

/// Rule: two findings express the same issue when they name the same path with line
/// ranges that overlap or lie within [`GROUP_LINE_GAP`] lines of each other, or when
/// their claims are equal up to case and whitespace. Grouping does not chain: every two
/// members of a group are the same issue by that rule, so findings 2 lines apart in a
/// row (lines 31, 33, 35, 37) make two groups, never one spanning 7 lines. Findings are
/// placed in (path, lines, index) order, each into the first group whose every member
/// it matches, else into a new group. Groups are ordered by their first member; the
/// representative is the most severe member (the first among equals).
pub fn group_findings(findings: &[EvalFinding]) -> Vec<FindingGroup> {
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|&i| {
        let f = &findings[i];
        (&f.path, f.start_line, f.end_line, i)
    });
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        let joins = |members: &&mut Vec<usize>| {
            members
                .iter()
                .all(|&m| same_issue(&findings[m], &findings[i]))
        };
        match groups.iter_mut().find(joins) {
            Some(members) => members.push(i),
            None => groups.push(vec![i]),
        }
    }
    for members in &mut groups {
        members.sort_unstable();
    }
    groups.sort_by_key(|members| members[0]);
    groups
        .into_iter()
        .map(|members| FindingGroup {
            representative: representative(findings, &members),
            members,
        })
        .collect()
}

fn representative(findings: &[EvalFinding], members: &[usize]) -> usize {
    *members
        .iter()
        .min_by_key(|&&i| (findings[i].severity, i))
        .expect("a group has a member")
}

/// Rule (location matching): a finding matches a golden comment that names a path when
/// it is on that path and, if the comment names a line, its range comes within
/// [`LOCATION_TOLERANCE`] lines of it. A comment without a path matches nothing.
pub fn location_matches(finding: &EvalFinding, golden: &GoldenComment) -> bool {
    let Some(path) = &golden.path else {
        return false;
    };
    if *path != finding.path {
        return false;
    }
    match golden.line {
        None => true,
        Some(line) => {
            line.saturating_add(LOCATION_TOLERANCE) >= finding.start_line
                && line <= finding.end_line.saturating_add(LOCATION_TOLERANCE)
        }
    }
}

/// Rule: a (finding, golden comment) pair is worth a judge's question unless the
/// comment names a path and the finding is on another one.
pub fn plausible_pair(finding: &EvalFinding, golden: &GoldenComment) -> bool {
    golden.path.as_ref().is_none_or(|p| *p == finding.path)
}

/// True positives, false positives, false negatives; duplicates are finding groups that
/// matched only golden comments another group had already matched (neither TP nor FP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Golden comments matched by a finding.
    pub tp: u32,
    /// Finding groups that matched no golden comment.
    pub fp: u32,
    /// Golden comments no finding matched.
    #[serde(rename = "fn")]
    pub fn_: u32,
}

impl Counts {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: Counts) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
    }

    /// `tp / (tp + fp)`; `None` when nothing was reported.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    /// `tp / (tp + fn)`; `None` when there was nothing to find.
    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// F-beta from the counts: `(1+β²)·tp / ((1+β²)·tp + β²·fn + fp)`; `None` when all
    /// counts are zero. β > 1 weighs recall more, β < 1 precision.
    pub fn f_beta(&self, beta: f64) -> Option<f64> {
        let b2 = beta * beta;
        let tp = f64::from(self.tp);
        let denominator = (1.0 + b2) * tp + b2 * f64::from(self.fn_) + f64::from(self.fp);
        (denominator > 0.0).then(|| (1.0 + b2) * tp / denominator)
    }

    /// The metrics of these counts.
    pub fn metrics(&self, beta: f64) -> Metrics {
        Metrics {
            counts: *self,
            precision: self.precision(),
            recall: self.recall(),
            f1: self.f_beta(1.0),
            f_beta: self.f_beta(beta),
        }
    }
}

fn ratio(num: u32, den: u32) -> Option<f64> {
    (den > 0).then(|| f64::from(num) / f64::from(den))
}

/// Counts with precision, recall, F1 and F-beta (`null` where undefined).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// The counts.
    #[serde(flatten)]
    pub counts: Counts,
    /// Precision.
    pub precision: Option<f64>,
    /// Recall.
    pub recall: Option<f64>,
    /// F1.
    pub f1: Option<f64>,
    /// F-beta with the run's beta.
    pub f_beta: Option<f64>,
}

/// The counts of one case under every profile and, for the `all` profile, per severity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseCounts {
    /// Per profile.
    pub profiles: BTreeMap<Profile, Counts>,
    /// Per severity (golden severity for TP/FN, finding severity for FP).
    pub severities: BTreeMap<Severity, Counts>,
    /// Finding groups that only repeated an already matched golden comment.
    pub duplicates: u32,
}

/// Rule: a golden comment is a true positive when some finding group matches it, else a
/// false negative; a group that matches no golden comment is a false positive; a group
/// whose matched comments were all matched by an earlier group is a duplicate, neither.
/// A profile counts the golden comments of its categories and the false-positive groups
/// of its categories (a group's category is its representative's); severities are
/// counted under `all`. `matches[g][c]` says whether group `g` matches comment `c`.
pub fn count_case(
    findings: &[EvalFinding],
    groups: &[FindingGroup],
    golden: &[GoldenComment],
    matches: &[Vec<bool>],
) -> CaseCounts {
    let matched_golden: Vec<bool> = (0..golden.len())
        .map(|c| (0..groups.len()).any(|g| matches[g][c]))
        .collect();
    let mut claimed = vec![false; golden.len()];
    let mut duplicates = 0;
    let mut false_groups = Vec::new();
    for (g, _) in groups.iter().enumerate() {
        let hits: Vec<usize> = (0..golden.len()).filter(|&c| matches[g][c]).collect();
        if hits.is_empty() {
            false_groups.push(g);
        } else if hits.iter().all(|&c| claimed[c]) {
            duplicates += 1;
        }
        for c in hits {
            claimed[c] = true;
        }
    }
    let mut out = CaseCounts {
        duplicates,
        ..CaseCounts::default()
    };
    for profile in Profile::ALL {
        let mut counts = Counts::default();
        for (c, comment) in golden.iter().enumerate() {
            if profile.includes(comment.category()) {
                if matched_golden[c] {
                    counts.tp += 1;
                } else {
                    counts.fn_ += 1;
                }
            }
        }
        counts.fp = false_groups
            .iter()
            .filter(|&&g| profile.includes(findings[groups[g].representative].category))
            .count() as u32;
        out.profiles.insert(profile, counts);
    }
    for severity in Severity::ALL {
        let mut counts = Counts::default();
        for (c, comment) in golden.iter().enumerate() {
            if comment.severity == severity {
                if matched_golden[c] {
                    counts.tp += 1;
                } else {
                    counts.fn_ += 1;
                }
            }
        }
        counts.fp = false_groups
            .iter()
            .filter(|&&g| findings[groups[g].representative].severity == severity)
            .count() as u32;
        out.severities.insert(severity, counts);
    }
    out
}

/// Sums case counts (the micro average over scored cases).
pub fn sum_counts<'a>(cases: impl IntoIterator<Item = &'a CaseCounts>) -> CaseCounts {
    let mut total = CaseCounts::default();
    for case in cases {
        for (p, c) in &case.profiles {
            total.profiles.entry(*p).or_default().add(*c);
        }
        for (s, c) in &case.severities {
            total.severities.entry(*s).or_default().add(*c);
        }
        total.duplicates += case.duplicates;
    }
    total
}

/// Mean and spread of one figure over repeated runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spread {
    /// Runs where the figure was defined.
    pub runs: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one run).
    pub std_dev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// Rule: the spread of a figure over runs ignores runs where it is undefined; `None`
/// when it is undefined in every run. The standard deviation is the sample one (n − 1).
pub fn spread(values: &[Option<f64>]) -> Option<Spread> {
    let defined: Vec<f64> = values.iter().flatten().copied().collect();
    if defined.is_empty() {
        return None;
    }
    let n = defined.len() as f64;
    let mean = defined.iter().sum::<f64>() / n;
    let var = if defined.len() > 1 {
        defined.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Some(Spread {
        runs: defined.len(),
        mean,
        std_dev: var.sqrt(),
        min: defined.iter().copied().fold(f64::INFINITY, f64::min),
        max: defined.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, start: u32, end: u32, category: Category, claim: &str) -> EvalFinding {
        EvalFinding {
            path: path.into(),
            start_line: start,
            end_line: end,
            severity: Severity::High,
            category,
            claim: claim.into(),
        }
    }

    fn g(category: Option<Category>, severity: Severity) -> GoldenComment {
        GoldenComment {
            comment: "c".into(),
            severity,
            category,
            path: None,
            line: None,
        }
    }

    #[test]
    fn grouping_table() {
        let table: Vec<(Vec<EvalFinding>, Vec<Vec<usize>>)> = vec![
            (vec![], vec![]),
            // Overlapping ranges on one path are one issue.
            (
                vec![
                    f("a", 1, 5, Category::Bug, "x"),
                    f("a", 4, 9, Category::Style, "y"),
                ],
                vec![vec![0, 1]],
            ),
            // Within the gap.
            (
                vec![
                    f("a", 1, 2, Category::Bug, "x"),
                    f("a", 5, 6, Category::Bug, "y"),
                ],
                vec![vec![0, 1]],
            ),
            // Beyond the gap.
            (
                vec![
                    f("a", 1, 2, Category::Bug, "x"),
                    f("a", 6, 7, Category::Bug, "y"),
                ],
                vec![vec![0], vec![1]],
            ),
            // Other path, same claim up to case and spaces.
            (
                vec![
                    f("a", 1, 2, Category::Bug, "Leaks  the handle"),
                    f("b", 90, 91, Category::Bug, "leaks the handle"),
                ],
                vec![vec![0, 1]],
            ),
            // No chaining: 0 and 1 are not the same issue, so 2 joins only one of them.
            (
                vec![
                    f("a", 1, 2, Category::Bug, "x"),
                    f("b", 1, 2, Category::Bug, "y"),
                    f("a", 4, 5, Category::Bug, "y"),
                ],
                vec![vec![0, 2], vec![1]],
            ),
            // Distinct claims 2 lines apart in a row: no group spans past the gap.
            (
                vec![
                    f("a", 31, 31, Category::Bug, "overflow"),
                    f("a", 33, 33, Category::Bug, "bogus 33"),
                    f("a", 35, 35, Category::Bug, "bogus 35"),
                    f("a", 37, 37, Category::Bug, "bogus 37"),
                ],
                vec![vec![0, 1], vec![2, 3]],
            ),
            // The same, reported out of order: groups follow the lines, not the order.
            (
                vec![
                    f("a", 37, 37, Category::Bug, "bogus 37"),
                    f("a", 31, 31, Category::Bug, "overflow"),
                    f("a", 35, 35, Category::Bug, "bogus 35"),
                    f("a", 33, 33, Category::Bug, "bogus 33"),
                ],
                vec![vec![0, 2], vec![1, 3]],
            ),
        ];
        for (findings, expected) in table {
            let groups: Vec<Vec<usize>> = group_findings(&findings)
                .into_iter()
                .map(|g| g.members)
                .collect();
            assert_eq!(groups, expected, "{findings:?}");
        }
    }

    #[test]
    fn representative_is_the_most_severe() {
        let mut low = f("a", 1, 2, Category::Style, "x");
        low.severity = Severity::Low;
        let high = f("a", 2, 3, Category::Bug, "y");
        let groups = group_findings(&[low, high]);
        assert_eq!(groups[0].representative, 1);
    }

    #[test]
    fn location_table() {
        let at = |path: Option<&str>, line: Option<u32>| GoldenComment {
            path: path.map(str::to_owned),
            line,
            ..g(None, Severity::High)
        };
        let finding = f("src/a.rs", 10, 12, Category::Bug, "x");
        for (golden, expected) in [
            (at(None, None), false),
            (at(Some("src/b.rs"), Some(11)), false),
            (at(Some("src/a.rs"), None), true),
            (at(Some("src/a.rs"), Some(11)), true),
            (at(Some("src/a.rs"), Some(7)), true),
            (at(Some("src/a.rs"), Some(6)), false),
            (at(Some("src/a.rs"), Some(15)), true),
            (at(Some("src/a.rs"), Some(16)), false),
        ] {
            assert_eq!(location_matches(&finding, &golden), expected, "{golden:?}");
        }
        assert!(plausible_pair(&finding, &at(None, None)));
        assert!(!plausible_pair(&finding, &at(Some("src/b.rs"), None)));
    }

    #[test]
    fn metrics_by_hand() {
        // tp 2, fp 1, fn 2: P = 2/3, R = 1/2, F1 = 4/7, F0.5 = 1.25*2/(1.25*2 + 0.25*2 + 1) = 2.5/4.
        let c = Counts {
            tp: 2,
            fp: 1,
            fn_: 2,
        };
        assert_eq!(c.precision(), Some(2.0 / 3.0));
        assert_eq!(c.recall(), Some(0.5));
        assert!((c.f_beta(1.0).unwrap() - 4.0 / 7.0).abs() < 1e-12);
        assert!((c.f_beta(0.5).unwrap() - 2.5 / 4.0).abs() < 1e-12);
        let none = Counts::default();
        assert_eq!(
            (none.precision(), none.recall(), none.f_beta(1.0)),
            (None, None, None)
        );
        let missed = Counts {
            tp: 0,
            fp: 0,
            fn_: 3,
        };
        assert_eq!(
            (missed.precision(), missed.recall(), missed.f_beta(2.0)),
            (None, Some(0.0), Some(0.0))
        );
    }

    #[test]
    fn counting_table() {
        let findings = vec![
            f("a", 1, 1, Category::Bug, "x"),
            f("b", 1, 1, Category::Style, "y"),
            f("c", 1, 1, Category::Bug, "z"),
            f("d", 1, 1, Category::Perf, "w"),
        ];
        let groups = group_findings(&findings);
        assert_eq!(groups.len(), 4);
        let golden = vec![
            g(None, Severity::High), // bug by default, matched by group 0 and 2
            g(Some(Category::Perf), Severity::Medium), // unmatched
            g(Some(Category::Style), Severity::Low), // matched by group 1
        ];
        let matches = vec![
            vec![true, false, false],
            vec![false, false, true],
            vec![true, false, false],
            vec![false, false, false],
        ];
        let counts = count_case(&findings, &groups, &golden, &matches);
        assert_eq!(counts.duplicates, 1);
        assert_eq!(
            counts.profiles[&Profile::Strict],
            Counts {
                tp: 1,
                fp: 0,
                fn_: 0
            }
        );
        assert_eq!(
            counts.profiles[&Profile::Core],
            Counts {
                tp: 1,
                fp: 1,
                fn_: 1
            }
        );
        assert_eq!(
            counts.profiles[&Profile::All],
            Counts {
                tp: 2,
                fp: 1,
                fn_: 1
            }
        );
        assert_eq!(
            counts.severities[&Severity::High],
            Counts {
                tp: 1,
                fp: 1,
                fn_: 0
            }
        );
        assert_eq!(
            counts.severities[&Severity::Medium],
            Counts {
                tp: 0,
                fp: 0,
                fn_: 1
            }
        );
        assert_eq!(
            counts.severities[&Severity::Low],
            Counts {
                tp: 1,
                fp: 0,
                fn_: 0
            }
        );
        // A clean change: every group is a false positive.
        let clean = count_case(&findings, &groups, &[], &vec![vec![]; 4]);
        assert_eq!(
            clean.profiles[&Profile::All],
            Counts {
                tp: 0,
                fp: 4,
                fn_: 0
            }
        );
        assert_eq!(
            clean.profiles[&Profile::Strict],
            Counts {
                tp: 0,
                fp: 2,
                fn_: 0
            }
        );
        let total = sum_counts([&counts, &clean]);
        assert_eq!(
            total.profiles[&Profile::All],
            Counts {
                tp: 2,
                fp: 5,
                fn_: 1
            }
        );
        assert_eq!(total.duplicates, 1);
    }

    #[test]
    fn spread_table() {
        assert_eq!(spread(&[None, None]), None);
        let one = spread(&[Some(0.5), None]).unwrap();
        assert_eq!((one.runs, one.mean, one.std_dev), (1, 0.5, 0.0));
        let two = spread(&[Some(0.4), Some(0.8)]).unwrap();
        assert!((two.mean - 0.6).abs() < 1e-12);
        assert!((two.std_dev - (0.08f64).sqrt()).abs() < 1e-12);
        assert_eq!((two.min, two.max), (0.4, 0.8));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn finding() -> impl Strategy<Value = EvalFinding> {
            (
                0usize..3,
                1u32..60,
                0u32..8,
                0usize..4,
                0usize..10,
                0usize..3,
            )
                .prop_map(|(path, start, len, severity, category, claim)| {
                    EvalFinding {
                        path: ["a", "b", "c/d"][path].into(),
                        start_line: start,
                        end_line: start + len,
                        severity: Severity::ALL[severity],
                        category: Category::ALL[category],
                        claim: ["x", "Y  z", "y z"][claim].into(),
                    }
                })
        }

        fn golden() -> impl Strategy<Value = GoldenComment> {
            (0usize..4, proptest::option::of(0usize..10)).prop_map(|(severity, category)| {
                GoldenComment {
                    comment: "c".into(),
                    severity: Severity::ALL[severity],
                    category: category.map(|c| Category::ALL[c]),
                    path: None,
                    line: None,
                }
            })
        }

        proptest! {
            /// For every input: groups partition the findings; every two members of a group
            /// are the same issue (no chaining); every golden comment in a
            /// profile is exactly one of TP or FN; no group is both a false positive and
            /// a duplicate; every defined metric lies in [0, 1].
            #[test]
            fn counts_account_for_every_comment_and_group(
                findings in proptest::collection::vec(finding(), 0..12),
                golden in proptest::collection::vec(golden(), 0..6),
                seed in proptest::collection::vec(any::<bool>(), 72),
                beta in 0.1f64..4.0,
            ) {
                let groups = group_findings(&findings);
                let mut members: Vec<usize> = groups.iter().flat_map(|g| g.members.clone()).collect();
                members.sort();
                prop_assert_eq!(members, (0..findings.len()).collect::<Vec<_>>());
                for group in &groups {
                    for &a in &group.members {
                        for &b in &group.members {
                            prop_assert!(same_issue(&findings[a], &findings[b]), "{:?}", group);
                        }
                    }
                }
                let matches: Vec<Vec<bool>> = (0..groups.len())
                    .map(|g| (0..golden.len()).map(|c| seed[(g * 6 + c) % seed.len()]).collect())
                    .collect();
                let counts = count_case(&findings, &groups, &golden, &matches);
                for profile in Profile::ALL {
                    let c = counts.profiles[&profile];
                    let in_profile = golden.iter().filter(|g| profile.includes(g.category())).count() as u32;
                    prop_assert_eq!(c.tp + c.fn_, in_profile);
                    prop_assert!(c.fp as usize + counts.duplicates as usize <= groups.len());
                    for value in [c.precision(), c.recall(), c.f_beta(beta)].into_iter().flatten() {
                        prop_assert!((0.0..=1.0).contains(&value), "{value}");
                    }
                }
                let all = counts.profiles[&Profile::All];
                let by_severity = sum_counts([&counts]).severities.values().fold(Counts::default(), |mut a, c| { a.add(*c); a });
                prop_assert_eq!(by_severity, all);
            }
        }
    }
}
