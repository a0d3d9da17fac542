//! Coverage receipts and their exact comparison with the canonical list.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// A candidate-producing stage's statement of which assigned files it inspected
/// (`coverage` in every reviewer's JSON reply).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoverageReceipt {
    /// True when the stage says it inspected every assigned file.
    pub complete: bool,
    /// The paths the stage says it inspected, as it wrote them.
    #[serde(default)]
    pub reviewed_files: Vec<String>,
}

/// The result of comparing a receipt with the assigned list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoverageComparison {
    /// True when the receipt says `complete: true` and neither group below has entries.
    pub complete: bool,
    /// True when the receipt itself said `complete: false`.
    pub reported_incomplete: bool,
    /// Assigned paths absent from the receipt, sorted.
    pub missing_files: Vec<String>,
    /// Receipt paths that are not assigned, sorted.
    pub unexpected_files: Vec<String>,
}

/// Rule (coverage contract, "Comparison"): the comparison is exact and case-sensitive after
/// duplicate removal; `missingFiles` = expected − receipt and `unexpectedFiles` = receipt −
/// expected, with no normalisation of `./`, absolute forms or separators.
pub fn compare_coverage(expected: &[String], receipt: &CoverageReceipt) -> CoverageComparison {
    let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    let reviewed: BTreeSet<&str> = receipt.reviewed_files.iter().map(String::as_str).collect();
    let missing_files: Vec<String> = expected
        .difference(&reviewed)
        .map(|s| s.to_string())
        .collect();
    let unexpected_files: Vec<String> = reviewed
        .difference(&expected)
        .map(|s| s.to_string())
        .collect();
    CoverageComparison {
        complete: receipt.complete && missing_files.is_empty() && unexpected_files.is_empty(),
        reported_incomplete: !receipt.complete,
        missing_files,
        unexpected_files,
    }
}

/// Rule (coverage contract, "Failure"): a second mismatch fails the instance with exactly
/// `<label> coverage mismatch after retry.` followed by `Missing files: a, b` and
/// `Unexpected files: c` lines, empty groups omitted; `complete: false` with no path
/// mismatch is reported explicitly as incomplete coverage, and says what the reply said:
/// `complete: false`, or, for a repaired `complete: true` the host recorded as false
/// (`downgraded`), that claim and why it was not taken.
pub fn mismatch_after_retry_message(
    label: &str,
    comparison: &CoverageComparison,
    downgraded: Option<ReceiptProblem>,
) -> String {
    let mut lines = vec![format!("{label} coverage mismatch after retry.")];
    if !comparison.missing_files.is_empty() {
        lines.push(format!(
            "Missing files: {}",
            comparison.missing_files.join(", ")
        ));
    }
    if !comparison.unexpected_files.is_empty() {
        lines.push(format!(
            "Unexpected files: {}",
            comparison.unexpected_files.join(", ")
        ));
    }
    if let Some(hint) = normalisation_hint(comparison) {
        lines.push(hint);
    }
    if lines.len() == 1 {
        lines.push(match downgraded {
            None => "Incomplete coverage: the reviewer returned complete: false.".to_string(),
            Some(problem) => format!(
                "Incomplete coverage: the repaired reply said complete: true, but {problem}; recorded as complete: false."
            ),
        });
    }
    lines.join("\n")
}

/// Rule (paths that look the same): a missing and an unexpected path that are the same
/// text in another Unicode normalisation (macOS writes `é` as `e` and a combining accent;
/// a model echoing the list may write it precomposed) read the same in a message, so the
/// message says so, with every non-ASCII character escaped. The comparison itself stays
/// exact: a path is copied byte for byte from the list.
pub fn normalisation_hint(comparison: &CoverageComparison) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    let nfc = |p: &str| p.nfc().collect::<String>();
    let pairs: Vec<String> = comparison
        .unexpected_files
        .iter()
        .filter_map(|u| {
            let listed = comparison.missing_files.iter().find(|m| nfc(m) == nfc(u))?;
            Some(format!(
                "`{}` for the listed `{}`",
                escape_non_ascii(u),
                escape_non_ascii(listed)
            ))
        })
        .collect();
    (!pairs.is_empty()).then(|| {
        format!(
            "Same name in another Unicode normalisation (copy each path byte for byte from the list): {}",
            pairs.join(", ")
        )
    })
}

/// A path with every non-ASCII character escaped (`\u{301}`), so two spellings that
/// render alike read apart.
fn escape_non_ascii(path: &str) -> String {
    path.chars()
        .map(|c| match c.is_ascii() {
            true => c.to_string(),
            false => c.escape_unicode().to_string(),
        })
        .collect()
}

/// Why a repaired `complete: true` does not stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptProblem {
    /// The prior reply holds no JSON receipt: what it says of its coverage is prose,
    /// which the host cannot check, so only a receipt can say it.
    #[error(
        "the prior reply held no JSON coverage receipt saying complete: true with exactly the expected files (a prose claim of coverage is not checked)"
    )]
    NoPriorReceipt,
    /// The prior reply's own JSON receipt was incomplete, did not list exactly the
    /// expected files, or was ambiguous (an object of it repeats a key).
    #[error(
        "the prior reply's own coverage receipt was incomplete, did not list exactly the expected files, or repeated a key"
    )]
    PriorReceiptNotExact,
    /// The prior reply's JSON held a `coverage` object that is no receipt: `complete`
    /// not a boolean or `reviewedFiles` not a list of paths, so it states nothing the host
    /// can check.
    #[error(
        "the prior reply's coverage receipt was malformed (complete must be true or false, reviewedFiles a list of paths), so it stated nothing the host can check"
    )]
    PriorReceiptMalformed,
}

impl CoverageComparison {
    /// What made a receipt not exact, in one line for the report: `complete: false`, and
    /// how many expected files were missing or unexpected (the first few named).
    pub fn mismatch_summary(&self) -> String {
        fn named(what: &str, paths: &[String]) -> Option<String> {
            const SHOWN: usize = 3;
            let (first, rest) = paths.split_at(paths.len().min(SHOWN));
            (!paths.is_empty()).then(|| {
                let more = if rest.is_empty() {
                    String::new()
                } else {
                    format!(" and {} more", rest.len())
                };
                format!("{} {what} ({}{more})", paths.len(), first.join(", "))
            })
        }
        let parts: Vec<String> = [
            self.reported_incomplete
                .then(|| "the receipt said complete: false".to_string()),
            named("expected file(s) missing", &self.missing_files),
            named("unexpected file(s)", &self.unexpected_files),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "the receipt matched".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// Why a receipt goes to the coverage retry, in one line for the report: its
    /// [`mismatch_summary`](Self::mismatch_summary), or, for a repaired `complete: true`
    /// the host recorded as `complete: false` (`downgraded`), why it did, then any
    /// missing or unexpected files.
    pub fn retry_reason(&self, downgraded: Option<ReceiptProblem>) -> String {
        let Some(problem) = downgraded else {
            return self.mismatch_summary();
        };
        let why = format!(
            "the repaired receipt said complete: true, but {problem}; recorded as complete: false"
        );
        let files = CoverageComparison {
            reported_incomplete: false,
            ..self.clone()
        };
        if files.missing_files.is_empty() && files.unexpected_files.is_empty() {
            why
        } else {
            format!("{why}; {}", files.mismatch_summary())
        }
    }
}

/// One thing a coverage retry tells the model was wrong with its previous answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryProblem {
    /// A repair rewrote the answer with `complete: true`, and the host recorded it as
    /// `complete: false` for this reason: the answer itself stated no exact receipt.
    ClaimNotTaken(ReceiptProblem),
    /// The answer itself said `complete: false`.
    SaidIncomplete,
    /// Expected files the receipt left out, sorted.
    Missing(Vec<String>),
    /// Receipt paths that are not expected files, sorted.
    Unexpected(Vec<String>),
    /// A missing and an unexpected path that differ only in Unicode normalisation, said
    /// with their non-ASCII characters escaped ([`normalisation_hint`]).
    Normalisation(String),
}

impl CoverageComparison {
    /// Rule (coverage retry): the retry states exactly what was wrong, in this order: a
    /// repaired `complete: true` the host did not take (`downgraded`, never said as "the
    /// answer said complete: false", which it did not), else a `complete: false` the
    /// answer gave; then the missing files and the unexpected files, each only when there
    /// are some (no empty list under a heading that says files were missed).
    pub fn retry_problems(&self, downgraded: Option<ReceiptProblem>) -> Vec<RetryProblem> {
        let claim = match downgraded {
            Some(problem) => Some(RetryProblem::ClaimNotTaken(problem)),
            None => self
                .reported_incomplete
                .then_some(RetryProblem::SaidIncomplete),
        };
        let missing = (!self.missing_files.is_empty())
            .then(|| RetryProblem::Missing(self.missing_files.clone()));
        let unexpected = (!self.unexpected_files.is_empty())
            .then(|| RetryProblem::Unexpected(self.unexpected_files.clone()));
        let normalisation = normalisation_hint(self).map(RetryProblem::Normalisation);
        [claim, missing, unexpected, normalisation]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Rule (forced synthesis): a final answer the host forced when a turn, tool-call or
/// token budget ran out is judged by the normal receipt rules; when its receipt is not
/// exact (`complete: false`, missing or unexpected files), the stage states a
/// `forced-synthesis` coverage limitation, whatever a later retry answers. An answer
/// that was not forced never gives one.
pub fn forced_synthesis_limits(forced: bool, comparison: &CoverageComparison) -> bool {
    forced && !comparison.complete
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_summary_names_what_was_wrong() {
        let paths = |n: usize| (0..n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        for (comparison, want) in [
            (
                CoverageComparison {
                    reported_incomplete: true,
                    ..CoverageComparison::default()
                },
                "the receipt said complete: false",
            ),
            (
                CoverageComparison {
                    missing_files: paths(5),
                    unexpected_files: paths(1),
                    ..CoverageComparison::default()
                },
                "5 expected file(s) missing (f0, f1, f2 and 2 more); 1 unexpected file(s) (f0)",
            ),
            (
                CoverageComparison {
                    complete: true,
                    ..CoverageComparison::default()
                },
                "the receipt matched",
            ),
        ] {
            assert_eq!(comparison.mismatch_summary(), want);
            assert_eq!(comparison.retry_reason(None), want);
        }
    }

    #[test]
    fn a_downgraded_receipt_says_what_the_reply_said_and_why_it_was_not_taken() {
        let downgraded = CoverageComparison {
            reported_incomplete: true,
            ..CoverageComparison::default()
        };
        let short = CoverageComparison {
            missing_files: vec!["b.rs".into()],
            ..downgraded.clone()
        };
        let problem = ReceiptProblem::NoPriorReceipt;
        let why = format!(
            "the repaired receipt said complete: true, but {problem}; recorded as complete: false"
        );
        for (comparison, want) in [
            (&downgraded, why.clone()),
            (&short, format!("{why}; 1 expected file(s) missing (b.rs)")),
        ] {
            assert_eq!(comparison.retry_reason(Some(problem)), want);
            assert!(!want.contains("the receipt said complete: false"));
        }
    }

    #[test]
    fn a_retry_states_exactly_what_was_wrong() {
        use RetryProblem::*;
        let said_false = CoverageComparison {
            reported_incomplete: true,
            ..CoverageComparison::default()
        };
        let short = CoverageComparison {
            missing_files: strings(&["b.rs"]),
            ..CoverageComparison::default()
        };
        let extra = CoverageComparison {
            unexpected_files: strings(&["./a.rs"]),
            ..short.clone()
        };
        let said_false_short = CoverageComparison {
            reported_incomplete: true,
            ..short.clone()
        };
        let no_receipt = Some(ReceiptProblem::NoPriorReceipt);
        let not_exact = Some(ReceiptProblem::PriorReceiptNotExact);
        let cases = [
            (&said_false, None, vec![SaidIncomplete]),
            (&short, None, vec![Missing(strings(&["b.rs"]))]),
            (
                &extra,
                None,
                vec![
                    Missing(strings(&["b.rs"])),
                    Unexpected(strings(&["./a.rs"])),
                ],
            ),
            (
                &said_false_short,
                None,
                vec![SaidIncomplete, Missing(strings(&["b.rs"]))],
            ),
            // A downgraded claim is recorded as complete: false, and never said to be one.
            (
                &said_false,
                no_receipt,
                vec![ClaimNotTaken(ReceiptProblem::NoPriorReceipt)],
            ),
            (
                &said_false_short,
                not_exact,
                vec![
                    ClaimNotTaken(ReceiptProblem::PriorReceiptNotExact),
                    Missing(strings(&["b.rs"])),
                ],
            ),
            (&CoverageComparison::default(), None, vec![]),
        ];
        for (comparison, downgraded, want) in cases {
            assert_eq!(
                comparison.retry_problems(downgraded),
                want,
                "{comparison:?} {downgraded:?}"
            );
        }
    }

    #[test]
    fn forced_synthesis_limits_only_a_forced_incomplete_receipt() {
        let exact = CoverageComparison {
            complete: true,
            ..CoverageComparison::default()
        };
        let said_incomplete = CoverageComparison {
            reported_incomplete: true,
            ..CoverageComparison::default()
        };
        let missing = CoverageComparison {
            missing_files: strings(&["a"]),
            ..CoverageComparison::default()
        };
        // (forced, comparison, limits)
        let cases = [
            (true, &exact, false),
            (true, &said_incomplete, true),
            (true, &missing, true),
            (false, &said_incomplete, false),
            (false, &missing, false),
            (false, &exact, false),
        ];
        for (forced, comparison, want) in cases {
            assert_eq!(
                forced_synthesis_limits(forced, comparison),
                want,
                "{forced} {comparison:?}"
            );
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn comparison_is_exact_and_case_sensitive() {
        // (expected, receipt complete, receipt files, complete, missing, unexpected)
        type Case<'a> = (
            &'a [&'a str],
            bool,
            &'a [&'a str],
            bool,
            &'a [&'a str],
            &'a [&'a str],
        );
        let cases: &[Case] = &[
            (&["a", "b"], true, &["b", "a"], true, &[], &[]),
            (&["a", "b"], true, &["a", "a", "b"], true, &[], &[]),
            (&["a", "b"], true, &["a"], false, &["b"], &[]),
            (&["a"], true, &["a", "./a"], false, &[], &["./a"]),
            (&["a"], true, &["/repo/a"], false, &["a"], &["/repo/a"]),
            (&["A.md"], true, &["a.md"], false, &["A.md"], &["a.md"]),
            (&["d/x"], true, &["d\\x"], false, &["d/x"], &["d\\x"]),
            (&["a"], false, &["a"], false, &[], &[]),
            (&[], true, &[], true, &[], &[]),
        ];
        for (expected, complete, files, want_complete, missing, unexpected) in cases {
            let receipt = CoverageReceipt {
                complete: *complete,
                reviewed_files: strings(files),
            };
            let got = compare_coverage(&strings(expected), &receipt);
            assert_eq!(got.complete, *want_complete, "{expected:?} vs {files:?}");
            assert_eq!(
                got.missing_files,
                strings(missing),
                "{expected:?} vs {files:?}"
            );
            assert_eq!(
                got.unexpected_files,
                strings(unexpected),
                "{expected:?} vs {files:?}"
            );
            assert_eq!(got.reported_incomplete, !complete);
        }
    }

    /// A missing and an unexpected path that are one name in two Unicode normalisations
    /// are said to be so, escaped, in the failure and in the retry; others are not.
    #[test]
    fn paths_that_differ_only_in_normalisation_are_said_to() {
        let nfd = "src/cafe\u{301}.py";
        let nfc = "src/caf\u{e9}.py";
        let c = CoverageComparison {
            complete: false,
            reported_incomplete: false,
            missing_files: strings(&[nfd, "a.rs"]),
            unexpected_files: strings(&[nfc, "b.rs"]),
        };
        let hint = "Same name in another Unicode normalisation (copy each path byte for byte from the list): `src/caf\\u{e9}.py` for the listed `src/cafe\\u{301}.py`";
        assert_eq!(normalisation_hint(&c).as_deref(), Some(hint));
        assert!(mismatch_after_retry_message("x", &c, None).ends_with(hint));
        assert_eq!(
            c.retry_problems(None).last(),
            Some(&RetryProblem::Normalisation(hint.to_string()))
        );
        let plain = CoverageComparison {
            missing_files: strings(&["a.rs"]),
            unexpected_files: strings(&["A.rs"]),
            ..c
        };
        assert_eq!(normalisation_hint(&plain), None);
    }

    #[test]
    fn mismatch_message_matches_contract_text() {
        let c = CoverageComparison {
            complete: false,
            reported_incomplete: false,
            missing_files: strings(&["CHANGELOG.md", "docs/verification/example.md"]),
            unexpected_files: strings(&["./AGENTS.md"]),
        };
        assert_eq!(
            mismatch_after_retry_message("bug-review #2", &c, None),
            "bug-review #2 coverage mismatch after retry.\n\
             Missing files: CHANGELOG.md, docs/verification/example.md\n\
             Unexpected files: ./AGENTS.md"
        );
        let only_missing = CoverageComparison {
            unexpected_files: vec![],
            ..c.clone()
        };
        assert_eq!(
            mismatch_after_retry_message("x #1", &only_missing, None),
            "x #1 coverage mismatch after retry.\nMissing files: CHANGELOG.md, docs/verification/example.md"
        );
        let incomplete = CoverageComparison {
            complete: false,
            reported_incomplete: true,
            missing_files: vec![],
            unexpected_files: vec![],
        };
        assert_eq!(
            mismatch_after_retry_message("x #1", &incomplete, None),
            "x #1 coverage mismatch after retry.\nIncomplete coverage: the reviewer returned complete: false."
        );
        // A repaired claim the host did not take is never called a `complete: false`.
        assert_eq!(
            mismatch_after_retry_message("x #1", &incomplete, Some(ReceiptProblem::NoPriorReceipt)),
            "x #1 coverage mismatch after retry.\nIncomplete coverage: the repaired reply said complete: true, but the prior reply held no JSON coverage receipt saying complete: true with exactly the expected files (a prose claim of coverage is not checked); recorded as complete: false."
        );
    }
}
