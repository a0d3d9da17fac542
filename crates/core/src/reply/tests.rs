use super::*;

#[test]
fn a_cut_reply_is_re_asked_once_then_fails() {
    use TruncationStep::*;
    // (cut, cuts before, budget left, step)
    let cases = [
        (false, 0, true, Parse),
        (false, 1, false, Parse),
        (true, 0, true, ReAsk),
        (true, 0, false, Fail),
        (true, 1, true, Fail),
        (true, 2, true, Fail),
    ];
    for (cut, before, left, want) in cases {
        assert_eq!(
            truncation_step(cut, before, left),
            want,
            "cut {cut}, before {before}, budget left {left}"
        );
    }
}

/// The candidates a repair's contract holds in these tests.
const BOUND: usize = 6;

fn loc(path: &str, start: u64, end: u64) -> CandidateLocation {
    CandidateLocation {
        path: path.into(),
        start_line: start,
        end_line: end,
    }
}

const ONE_FULL: &str = r#"Here you go: {"candidates": [{"path": "src/a.rs", "startLine": 3, "endLine": 4, "claim": "overflow", "severity": "high"}], "coverage": {"complete": true, "reviewedFiles": ["src/a.rs"]}} trailing"#;
const ONE_FULL_ONE_CUT: &str = r#"{"candidates": [{"path": "src/a.rs", "startLine": 3, "endLine": 4, "claim": "overflow"}, {"path": "src/b.rs", "startLine": 9, "endLine": 9, "claim": "the clamp al"#;

#[test]
fn a_repair_neither_adds_nor_drops_a_full_candidate() {
    use RepairViolation::*;
    let cases: Vec<(&str, Vec<CandidateLocation>, Result<(), RepairViolation>)> = vec![
        // The complete candidate kept: fine.
        (ONE_FULL, vec![loc("src/a.rs", 3, 4)], Ok(())),
        // Dropped: a violation naming it.
        (
            ONE_FULL,
            vec![],
            Err(CandidateDropped(loc("src/a.rs", 3, 4))),
        ),
        // Moved lines of a complete candidate: the original is dropped.
        (
            ONE_FULL,
            vec![loc("src/a.rs", 5, 6)],
            Err(CandidateDropped(loc("src/a.rs", 3, 4))),
        ),
        // An extra candidate at a path the prior never names.
        (
            ONE_FULL,
            vec![loc("src/a.rs", 3, 4), loc("src/z.rs", 1, 1)],
            Err(CandidateAdded(loc("src/z.rs", 1, 1))),
        ),
        // A cut candidate may be kept (its path and line are in the prior text)...
        (
            ONE_FULL_ONE_CUT,
            vec![loc("src/a.rs", 3, 4), loc("src/b.rs", 9, 9)],
            Ok(()),
        ),
        // ...or dropped: it was never contained in full.
        (ONE_FULL_ONE_CUT, vec![loc("src/a.rs", 3, 4)], Ok(())),
        // ...but the complete one may not go.
        (
            ONE_FULL_ONE_CUT,
            vec![loc("src/b.rs", 9, 9)],
            Err(CandidateDropped(loc("src/a.rs", 3, 4))),
        ),
        // Prose that states a defect: the repair may turn it into a candidate.
        (
            "Bug in src/lib.rs at line 12: the port wraps.",
            vec![loc("src/lib.rs", 12, 12)],
            Ok(()),
        ),
        // A line number that only occurs inside a longer number does not count.
        (
            "Bug in src/lib.rs at line 120.",
            vec![loc("src/lib.rs", 12, 12)],
            Err(CandidateAdded(loc("src/lib.rs", 12, 12))),
        ),
        // Prose with no defect: nothing may be added.
        (
            "No defects found.",
            vec![loc("src/lib.rs", 1, 1)],
            Err(CandidateAdded(loc("src/lib.rs", 1, 1))),
        ),
        ("No defects found.", vec![], Ok(())),
    ];
    for (prior, repaired, want) in cases {
        assert_eq!(
            check_candidate_repair(prior, &repaired, (&[], &[]), BOUND),
            want.map(|()| PastRepairBound::default()),
            "prior {prior:?}, repaired {repaired:?}"
        );
    }
}

/// A coverage retry's answer replaces the first one, but never drops a candidate: the
/// first answer's candidates at places the retry does not hold are carried.
#[test]
fn a_retry_carries_the_first_answers_candidates_it_left_out() {
    type Case = (Vec<CandidateLocation>, Vec<CandidateLocation>, Vec<usize>);
    let a = loc("a.rs", 1, 2);
    let b = loc("a.rs", 5, 5);
    let c = loc("b.rs", 1, 2);
    // (first, retry, carried indices of first)
    let cases: Vec<Case> = vec![
        (vec![], vec![], vec![]),
        (vec![a.clone()], vec![], vec![0]),
        (vec![a.clone()], vec![a.clone()], vec![]),
        (
            vec![a.clone(), b.clone()],
            vec![b.clone(), c.clone()],
            vec![0],
        ),
        // Other lines are another place: both kept, the verifier decides each.
        (vec![a.clone()], vec![loc("a.rs", 1, 3)], vec![0]),
        // A place the first answer named twice is carried once.
        (vec![c.clone(), c.clone()], vec![], vec![0]),
    ];
    for (first, retry, want) in cases {
        assert_eq!(
            carried_candidates(&first, &retry),
            want,
            "{first:?} / {retry:?}"
        );
    }
}

/// A defect a prose reply states at a place in a changed file cannot be repaired away:
/// the place must come back as a candidate or a dismissed concern that holds its line.
#[test]
fn a_repair_keeps_every_place_a_prose_reply_names() {
    use RepairViolation::*;
    type Case = (
        &'static str,
        Vec<CandidateLocation>,
        Vec<CandidateLocation>,
        Result<(), RepairViolation>,
    );
    let expected: Vec<String> = ["src/calc.py", "README.md"].map(String::from).to_vec();
    let markdown = "1. **src/calc.py:24-25** (high, correctness) - Claim: clamp returns lo \
        when x > hi.\nI reviewed every changed file.";
    let dropped = Err(LocationDropped {
        path: "src/calc.py".into(),
        line: 24,
    });
    // (prior, repaired candidates, dismissed concerns, result)
    let cases: Vec<Case> = vec![
        (markdown, vec![], vec![], dropped.clone()),
        (markdown, vec![loc("src/calc.py", 24, 25)], vec![], Ok(())),
        (markdown, vec![], vec![loc("src/calc.py", 20, 30)], Ok(())),
        (markdown, vec![loc("src/calc.py", 25, 26)], vec![], dropped),
        // Another path, a longer path, no line, or a place inside JSON: not a prose place.
        (
            "See lib/src/calc.py:24 and src/calc.pyc:3.",
            vec![],
            vec![],
            Ok(()),
        ),
        ("src/calc.py looks fine.", vec![], vec![], Ok(())),
        ("Checked docs/x.md:3.", vec![], vec![], Ok(())),
        (
            r#"{"coverage": {"complete": true, "reviewedFiles": []}, "summary": "src/calc.py:9"}"#,
            vec![],
            vec![],
            Ok(()),
        ),
        (
            "README.md:2 states the old default.",
            vec![],
            vec![],
            Err(LocationDropped {
                path: "README.md".into(),
                line: 2,
            }),
        ),
    ];
    for (prior, repaired, dismissed, want) in cases {
        assert_eq!(
            check_candidate_repair(prior, &repaired, (&expected, &dismissed), BOUND),
            want.map(|()| PastRepairBound::default()),
            "{prior}"
        );
    }
    assert_eq!(
        prose_locations(markdown, &expected),
        [("src/calc.py".to_string(), 24)]
    );
    // A path that begins as it ends is found where its mention overlaps an earlier
    // occurrence of it (found by the property below).
    let spaced = vec!["ba b".to_string()];
    assert_eq!(
        prose_locations("ba ba b:1 is off by one", &spaced),
        [("ba b".to_string(), 1)]
    );
}

/// A candidate the prior reply wrote in another notation than JSON cannot be repaired
/// away either: the repair must return at least as many candidates as it wrote claims.
#[test]
fn a_repair_keeps_candidates_written_in_any_notation() {
    let yaml = "candidates:\n  - path: calc.py\n    startLine: 1\n    claim: divide no longer rejects 0\ncoverage:\n  complete: true\n";
    let pydict =
        "{'candidates': [{'path': 'calc.py', 'startLine': 1, 'endLine': 3, 'claim': 'x'}]}";
    let json = r#"{"candidates": [{"path": "calc.py", "startLine": 1, "claim": "whole", "#;
    for prior in [yaml, pydict, json] {
        assert_eq!(claim_keys(prior), 1, "{prior}");
        assert_eq!(
            check_candidate_repair(prior, &[], (&[], &[]), BOUND),
            Err(RepairViolation::CandidatesMissing {
                claims: 1,
                repaired: 0
            }),
            "{prior}"
        );
        assert!(
            check_candidate_repair(prior, &[loc("calc.py", 1, 3)], (&[], &[]), BOUND).is_ok(),
            "{prior}"
        );
    }
    // A claim cut off before its closing quote is no whole candidate; words that merely
    // contain "claim" are no claim.
    assert_eq!(claim_keys(r#"{"claim": "cut off he"#), 0);
    assert_eq!(
        claim_keys("I claim nothing; disclaimer: none; claims: 0"),
        0
    );
}

#[test]
fn complete_prior_candidates_are_whole_objects_only() {
    assert_eq!(
        complete_prior_candidates(ONE_FULL_ONE_CUT),
        [loc("src/a.rs", 3, 4)]
    );
    assert_eq!(complete_prior_candidates(ONE_FULL), [loc("src/a.rs", 3, 4)]);
    assert!(complete_prior_candidates("{ not json } {\"path\": 1}").is_empty());
}

/// Verdicts of a repaired reply, by candidate id.
type Verdicts = Vec<(String, Verdict)>;

#[test]
fn a_repair_never_changes_a_stated_verdict() {
    use Verdict::*;
    let cut_verified = r#"{"decisions": [{"candidateId": "lane #1/0", "decision": "verified", "evidence": "the wrap is at line 4 and the cal"#;
    let two = r#"{"decisions": [{"candidateId": "a/0", "decision": "rejected"}, {"decision": "verified", "candidateId": "a/1"}"#;
    let cases: Vec<(&str, Verdicts, bool)> = vec![
        (cut_verified, vec![("lane #1/0".into(), Verified)], true),
        (cut_verified, vec![("lane #1/0".into(), Rejected)], false),
        (cut_verified, vec![("lane #1/0".into(), Unresolved)], false),
        (cut_verified, vec![], false),
        // A verdict given only in words is not read: whatever the repair decides from
        // prose, YAML or another key is refused, in every direction.
        (
            "I rejected the only candidate.",
            vec![("lane #1/0".into(), Rejected)],
            false,
        ),
        (
            "This candidate cannot be verified from the source; rejected.",
            vec![("lane #1/0".into(), Verified)],
            false,
        ),
        (
            "This candidate cannot be verified from the source; rejected.",
            vec![("lane #1/0".into(), Rejected)],
            false,
        ),
        (
            r#"{"candidateId": "x", "decision": "maybe"}"#,
            vec![("x".into(), Rejected)],
            false,
        ),
        (
            "Decision for lane #1/0: verified. The finding stands.",
            vec![("lane #1/0".into(), Verified)],
            false,
        ),
        (
            "decisions:\n  - candidateId: lane #1/0\n    decision: verified\n",
            vec![("lane #1/0".into(), Verified)],
            false,
        ),
        (
            r#"{"decisions": [{"candidateId": "lane #1/0", "verdict": "rejected"}]}"#,
            vec![("lane #1/0".into(), Verified)],
            false,
        ),
        (
            r#"{"decisions": [{"candidateId": "lane #1/0", "decision": "verified"}]} A rejected one would read {"candidateId": "lane #1/0", "decision": "rejected"}."#,
            vec![("lane #1/0".into(), Rejected)],
            false,
        ),
        // Stated as JSON, each candidate keeps its own verdict.
        (
            r#"[{"candidateId": "a/0", "decision": "rejected"}, {"candidateId": "a/1", "decision": "verified"}]"#,
            vec![("a/0".into(), Rejected), ("a/1".into(), Verified)],
            true,
        ),
        (
            r#"[{"candidateId": "a/0", "decision": "rejected"}, {"candidateId": "a/1", "decision": "verified"}]"#,
            vec![("a/0".into(), Rejected), ("a/1".into(), Rejected)],
            false,
        ),
        // A draft and a final answer that disagree state no verdict.
        (
            r#"draft {"candidateId": "x", "decision": "rejected"} final {"candidateId": "x", "decision": "verified"}"#,
            vec![("x".into(), Verified)],
            false,
        ),
        // Key order carries no meaning: a decision before its id is stated too.
        (
            two,
            vec![("a/0".into(), Rejected), ("a/1".into(), Verified)],
            true,
        ),
        (two, vec![("a/0".into(), Rejected)], false),
        (
            two,
            vec![("a/0".into(), Rejected), ("a/1".into(), Rejected)],
            false,
        ),
        (
            two,
            vec![("a/0".into(), Verified), ("a/1".into(), Verified)],
            false,
        ),
        // A decision inside a nested object is not its parent's.
        (
            r#"{"candidateId": "n/0", "finding": {"decision": "verified"}, "decision": "rejected"}"#,
            vec![("n/0".into(), Rejected)],
            true,
        ),
        // An id cut off before its decision is not paired with the next object's.
        (
            r#"{"decisions": [{"candidateId": "c/0", "evidence": "x"}, {"decision": "rejected", "candidateId": "c/1"}, {"candidateId": "c/0""#,
            vec![("c/1".into(), Rejected)],
            true,
        ),
        // ... and a verdict for it that the prior reply never states is the repair's own.
        (
            r#"{"decisions": [{"candidateId": "c/0", "evidence": "x"}, {"decision": "rejected", "candidateId": "c/1"}, {"candidateId": "c/0""#,
            vec![("c/1".into(), Rejected), ("c/0".into(), Verified)],
            false,
        ),
    ];
    for (prior, repaired, ok) in cases {
        let got = check_decision_repair(prior, &repaired);
        assert_eq!(
            got.is_ok(),
            ok,
            "prior {prior:?}, repaired {repaired:?}: {got:?}"
        );
    }
    let err = check_decision_repair(cut_verified, &[("lane #1/0".into(), Rejected)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the repair changed the decision for `lane #1/0` from verified to rejected"
    );
}

#[test]
fn a_prior_json_receipt_decides_a_repaired_full_coverage_claim() {
    let expected: Vec<String> = ["a.rs", "b.rs"].map(String::from).to_vec();
    let receipt = |complete: bool, files: &[&str]| {
        serde_json::json!({"coverage": {"complete": complete, "reviewedFiles": files}}).to_string()
    };
    let stated = "I reviewed all changed files: a.rs, b.rs.";
    // (prior reply, result)
    let cases: Vec<(String, Result<(), ReceiptProblem>)> = vec![
        // The reply's own receipt is the statement.
        (receipt(true, &["a.rs", "b.rs"]), Ok(())),
        (
            format!(
                "Summary first. {} and candidates: [oops",
                receipt(true, &["b.rs", "a.rs", "a.rs"])
            ),
            Ok(()),
        ),
        // Incomplete, short, or padded receipts stay so, whatever the prose says.
        (
            format!("{} {stated}", receipt(false, &["a.rs", "b.rs"])),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        (
            format!("{} {stated}", receipt(true, &["a.rs"])),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        (
            receipt(true, &["a.rs", "b.rs", "c.rs"]),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        (
            receipt(true, &["./a.rs", "b.rs"]),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        // Two receipts that disagree state nothing complete.
        (
            format!(
                "{} {}",
                receipt(true, &["a.rs", "b.rs"]),
                receipt(false, &[])
            ),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        // A repeated key: the incomplete copy is not overruled by the complete one.
        (
            r#"{"coverage": {"complete": false, "reviewedFiles": ["a.rs"]}, "coverage": {"complete": true, "reviewedFiles": ["a.rs", "b.rs"]}}"#.to_string(),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        (
            r#"{"coverage": {"complete": true, "complete": true, "reviewedFiles": ["a.rs", "b.rs"]}}"#.to_string(),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        // No JSON receipt: prose is never enough, however it is worded.
        (stated.to_string(), Err(ReceiptProblem::NoPriorReceipt)),
        (
            "I reviewed every changed file without reading b.rs.".to_string(),
            Err(ReceiptProblem::NoPriorReceipt),
        ),
        // A receipt the reply wrote malformed is no receipt: in other keys, of other
        // types (named as malformed), or cut before its end.
        (
            r#"{"Coverage": {"Complete": true, "reviewedFiles": ["a.rs", "b.rs"]}}"#.to_string(),
            Err(ReceiptProblem::NoPriorReceipt),
        ),
        (
            r#"{"coverage": {"complete": "true", "reviewedFiles": ["a.rs", "b.rs"]}}"#.to_string(),
            Err(ReceiptProblem::PriorReceiptMalformed),
        ),
        (
            r#"{"coverage": {"complete": true, "reviewedFiles": "a.rs, b.rs"}}"#.to_string(),
            Err(ReceiptProblem::PriorReceiptMalformed),
        ),
        // A malformed copy beside an exact one states nothing complete.
        (
            format!(
                "{} {}",
                receipt(true, &["a.rs", "b.rs"]),
                r#"{"coverage": {"complete": "yes", "reviewedFiles": []}}"#
            ),
            Err(ReceiptProblem::PriorReceiptNotExact),
        ),
        (
            r#"{"coverage": {"complete": true, "reviewedFiles": ["a.rs", "b.rs"]"#.to_string(),
            Err(ReceiptProblem::NoPriorReceipt),
        ),
    ];
    for (prior, want) in cases {
        assert_eq!(repaired_full_coverage(&prior, &expected), want, "{prior}");
    }
}

mod properties {
    use proptest::prelude::*;

    use super::super::*;
    use super::{BOUND, loc};

    fn expected() -> Vec<String> {
        ["README.md", "src/lib.rs"].map(String::from).to_vec()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// No repair path turns a prior reply whose own JSON receipt is incomplete or
        /// lists other files than the expected ones into full coverage, whatever the
        /// repair quotes and whatever prose surrounds the receipt.
        #[test]
        fn an_incomplete_or_mismatched_prior_receipt_never_becomes_complete(
            complete: bool,
            files in proptest::collection::vec(proptest::sample::select(vec!["README.md", "src/lib.rs", "src/x.rs", "./README.md", "src/lib.rs "]), 0..5),
            before in "\\PC{0,60}",
            after in "\\PC{0,60}",
        ) {
            let receipt = CoverageReceipt { complete, reviewed_files: files.iter().map(|f| f.to_string()).collect() };
            prop_assume!(!compare_coverage(&expected(), &receipt).complete);
            let json = serde_json::json!({"candidates": [], "coverage": {"complete": complete, "reviewedFiles": files}});
            let prior = format!("{before}\n{json}\n{after}");
            let stated = "I reviewed all changed files: README.md, src/lib.rs.";
            let prior = format!("{prior} {stated}");
            prop_assert!(repaired_full_coverage(&prior, &expected()).is_err());
        }

        /// Without any JSON object, no prose ever stands for full coverage.
        #[test]
        fn prose_never_stands_for_full_coverage(prior in "[^{]{0,200}") {
            prop_assert_eq!(repaired_full_coverage(&prior, &expected()), Err(ReceiptProblem::NoPriorReceipt));
        }

        /// An exact receipt in an object that repeats a key, at the top or inside the
        /// receipt, never stands, even when every copy is exact.
        #[test]
        fn a_receipt_in_an_object_repeating_a_key_never_stands(
            key in proptest::sample::select(vec!["summary", "coverage", "complete", "reviewedFiles"]),
            before in "[^{}]{0,40}",
        ) {
            let files = r#"["README.md", "src/lib.rs"]"#;
            let (inner, outer) = match key {
                "complete" => (r#", "complete": true"#.to_string(), String::new()),
                "reviewedFiles" => (format!(r#", "reviewedFiles": {files}"#), String::new()),
                "coverage" => (String::new(), format!(r#", "coverage": {{"complete": true, "reviewedFiles": {files}}}"#)),
                _ => (String::new(), r#", "summary": "again""#.to_string()),
            };
            let prior = format!(
                r#"{before}{{"summary": "", "coverage": {{"complete": true, "reviewedFiles": {files}{inner}}}{outer}}}"#
            );
            prop_assert_eq!(repaired_full_coverage(&prior, &expected()), Err(ReceiptProblem::PriorReceiptNotExact), "{}", prior);
            let once = format!(r#"{before}{{"summary": "", "coverage": {{"complete": true, "reviewedFiles": {files}}}}}"#);
            prop_assert_eq!(repaired_full_coverage(&once, &expected()), Ok(()), "{}", once);
        }

        /// Whatever a repair keeps of a JSON prior reply with any number of candidates,
        /// an accepted repair never loses one in silence: each complete prior candidate
        /// is kept or named past the bound, and the kept and the named cover every claim.
        #[test]
        fn an_accepted_repair_keeps_or_names_every_prior_candidate(
            lines in proptest::collection::vec(1u64..40, 0..12),
            typed in proptest::collection::vec(any::<bool>(), 12),
            keep in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let objects: Vec<String> = lines.iter().zip(&typed).map(|(l, t)| {
                let start = if *t { l.to_string() } else { format!("\"{l}\"") };
                format!(r#"{{"path": "a.py", "startLine": {start}, "endLine": {l}, "claim": "c{l}"}}"#)
            }).collect();
            let prior = format!(r#"{{"candidates": [{}]}}"#, objects.join(", "));
            let repaired: Vec<CandidateLocation> = lines.iter().zip(&keep)
                .filter(|(_, k)| **k).map(|(l, _)| loc("a.py", *l, *l)).take(BOUND).collect();
            if let Ok(past) = check_candidate_repair(&prior, &repaired, (&[], &[]), BOUND) {
                for c in complete_prior_candidates(&prior) {
                    prop_assert!(repaired.contains(&c) || past.candidates.contains(&c), "{:?} lost", c);
                }
                prop_assert!(repaired.len() + past.count >= claim_keys(&prior), "{}", prior);
                prop_assert!(past.count == 0 || repaired.len() == BOUND);
            }
        }

        /// Hostile text never panics the rules, and keeping exactly the candidates the
        /// prior reply holds in full is always an acceptable repair.
        #[test]
        fn keeping_the_complete_candidates_is_always_acceptable(prior in "\\PC{0,300}") {
            let complete = complete_prior_candidates(&prior);
            prop_assert!(check_candidate_repair(&prior, &complete, (&[], &[]), BOUND).is_ok());
            let stated = prior_verdicts(&prior);
            prop_assert!(check_decision_repair(&prior, &stated).is_ok());
        }

        /// However a reply names `verified` for a candidate (prose, YAML, another key,
        /// any wrapping), a repair can never turn it into another verdict.
        #[test]
        fn a_verified_named_in_any_form_is_never_repaired_away(
            before in "[a-z ,:\\-\n]{0,40}",
            between in "[a-z ,:=\\-\n]{0,20}",
            after in "[a-z .,:\n]{0,40}",
            spelled in proptest::sample::select(vec!["verified", "Verified", "VERIFIED", "\"verified\"", "'verified'"]),
            repaired in proptest::sample::select(vec![Verdict::Rejected, Verdict::Unresolved]),
        ) {
            prop_assume!(!format!("{before}{between}{after}").contains("rejected"));
            prop_assume!(!format!("{before}{between}{after}").contains("unresolved"));
            let prior = format!("{before} lane #1/0{between} {spelled}{after}");
            let result = check_decision_repair(&prior, &[("lane #1/0".into(), repaired)]);
            prop_assert!(result.is_err(), "{}", prior);
        }

        /// A verdict the prior reply gives only in words is never the repair's to
        /// decide: whatever the words, every repaired verdict for a candidate is refused.
        #[test]
        fn no_repaired_verdict_stands_on_words_alone(
            prior in "[a-zA-Z #/0-9 ,.:;=\n-]{0,200}",
            repaired in proptest::sample::select(vec![Verdict::Verified, Verdict::Rejected, Verdict::Unresolved]),
        ) {
            let result = check_decision_repair(&prior, &[("lane #1/0".into(), repaired)]);
            prop_assert!(result.is_err(), "{}", prior);
        }

        /// A verdict stated in a cut verifier reply can never be repaired into another,
        /// whatever the order of its keys.
        #[test]
        fn a_stated_verdict_never_flips(
            id in "[a-z #/0-9-]{1,30}",
            cut in 0usize..60,
            decision_first: bool,
            prior_verdict in proptest::sample::select(vec![Verdict::Verified, Verdict::Rejected, Verdict::Unresolved]),
            repaired in proptest::sample::select(vec![Verdict::Verified, Verdict::Rejected, Verdict::Unresolved]),
        ) {
            let (id_key, decision) = (
                format!(r#""candidateId": "{id}""#),
                format!(r#""decision": "{}""#, prior_verdict.as_str()),
            );
            let (first, second) = if decision_first { (decision, id_key) } else { (id_key, decision) };
            let full = format!(
                r#"{{"decisions": [{{{first}, "finding": {{"claim": "x"}}, {second}, "evidence": "because the guard at line 4 is gone"}}]}}"#
            );
            let at = full.find("\"evidence\"").unwrap() + cut;
            let prior = &full[..at.min(full.len())];
            let result = check_decision_repair(prior, &[(id.clone(), repaired)]);
            prop_assert_eq!(result.is_ok(), repaired == prior_verdict, "{}", prior);
        }
    }
}

/// Hostile inputs for the two rules that keep a first answer's candidates and a prose
/// reply's places: duplicates, places that differ by one line, paths that hold spaces,
/// dots and each other.
mod kept_places {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::super::*;

    fn location() -> impl Strategy<Value = CandidateLocation> {
        (
            proptest::sample::select(vec!["a.rs", "b.rs", "a.rs ", "./a.rs"]),
            1u64..4,
            0u64..2,
        )
            .prop_map(|(path, start, len)| CandidateLocation {
                path: path.into(),
                start_line: start,
                end_line: start + len,
            })
    }

    /// What comes before a mention: any text, or a start of the path itself (so the
    /// path overlaps its own mention when it begins as it ends, as `a a` does).
    #[derive(Debug, Clone)]
    enum Before {
        Text(String),
        PathStart(usize),
    }

    fn mention() -> impl Strategy<Value = (Before, usize, u64, bool, String)> {
        let before = prop_oneof![
            "[a-z .:,()`*\n0-9/-]{0,12}".prop_map(Before::Text),
            (1usize..5).prop_map(Before::PathStart),
        ];
        (
            before,
            0usize..4,
            1u64..1_000_000,
            any::<bool>(),
            proptest::sample::select(vec![" ", ".", ",", ")", "\n", "** ", ": x"]),
        )
            .prop_map(|(before, path, line, range, after)| {
                (before, path, line, range, after.to_string())
            })
    }

    /// The text a mention's `before` stands for, given its path.
    fn before_text(before: &Before, path: &str) -> String {
        match before {
            Before::Text(text) => text.clone(),
            Before::PathStart(n) => path.chars().take(*n).collect(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// No candidate of the first answer is lost: each of its places is in the retry's
        /// answer or carried; nothing carried is a place the retry holds, and no place is
        /// carried twice; indices are of `first`, in order.
        #[test]
        fn a_retry_loses_no_candidate_and_carries_none_twice(
            first in proptest::collection::vec(location(), 0..8),
            retry in proptest::collection::vec(location(), 0..8),
        ) {
            let carried = carried_candidates(&first, &retry);
            prop_assert!(carried.windows(2).all(|w| w[0] < w[1]), "{:?}", carried);
            prop_assert!(carried.iter().all(|&i| i < first.len()));
            let places: Vec<&CandidateLocation> = carried.iter().map(|&i| &first[i]).collect();
            let distinct: BTreeSet<&CandidateLocation> = places.iter().copied().collect();
            prop_assert_eq!(distinct.len(), places.len(), "carried twice: {:?}", places);
            prop_assert!(places.iter().all(|p| !retry.contains(p)), "{:?}", places);
            for c in &first {
                prop_assert!(retry.contains(c) || places.contains(&c), "lost {:?}", c);
            }
        }

        /// Every `path:line` (or `path:line-line`) a prose reply writes of an expected
        /// file, after a character that cannot be part of a path, is found with its first
        /// line; nothing outside the expected files is returned.
        #[test]
        fn every_place_prose_names_in_an_expected_file_is_found(
            paths in proptest::collection::vec("[ab][ab .]{0,4}", 4),
            mentions in proptest::collection::vec(mention(), 0..6),
            tail in "[a-z .:,\n0-9]{0,12}",
        ) {
            let expected: Vec<String> = paths.iter().map(|p| p.trim_end().to_string()).collect();
            let mut prose = String::new();
            let mut named = Vec::new();
            for (before, path, line, range, after) in &mentions {
                let path = &expected[*path];
                let end = if *range { format!("-{}", line + 3) } else { String::new() };
                let before = before_text(before, path);
                prose.push_str(&format!("{before} {path}:{line}{end}{after}"));
                named.push((path.clone(), *line));
            }
            prose.push_str(&tail);
            let found = prose_locations(&prose, &expected);
            prop_assert!(found.iter().all(|(p, _)| expected.contains(p)), "{:?}", found);
            for place in &named {
                let want = named.iter().filter(|n| *n == place).count();
                let got = found.iter().filter(|f| *f == place).count();
                prop_assert!(got >= want, "{:?} in {:?}: {:?}", place, prose, found);
            }
        }
    }
}

#[test]
fn a_repair_held_at_its_bound_names_what_it_could_not_hold() {
    let json = |lines: &[u64], quoted: bool| {
        let objects: Vec<String> = lines
            .iter()
            .map(|l| {
                let start = if quoted {
                    format!("\"{l}\"")
                } else {
                    l.to_string()
                };
                format!(r#"{{"path": "a.py", "startLine": {start}, "endLine": {l}, "claim": "c"}}"#)
            })
            .collect();
        format!(r#"{{"candidates": [{}]}}"#, objects.join(", "))
    };
    let at = |lines: &[u64]| -> Vec<CandidateLocation> {
        lines.iter().map(|l| loc("a.py", *l, *l)).collect()
    };
    let eight = json(&[1, 2, 3, 4, 5, 6, 7, 8], false);
    let eight_cut = json(&[1, 2, 3, 4, 5, 6, 7, 8], true);
    let six = json(&[1, 2, 3, 4, 5, 6], false);
    let prose = "a.py:1 a.py:2 a.py:3 a.py:4 a.py:5 a.py:6 a.py:7 a.py:8 are wrong";
    let yaml: String = (1..=8)
        .map(|l| format!("- path: a.py\n  startLine: {l}\n  claim: c{l}\n"))
        .collect();
    let expected = vec!["a.py".to_string()];
    let past = |count, candidates: &[u64], places: &[u64]| {
        Ok(PastRepairBound {
            count,
            candidates: at(candidates),
            places: places.iter().map(|l| ("a.py".to_string(), *l)).collect(),
        })
    };
    // (prior, repaired, result)
    let cases = [
        // Eight complete candidates, six kept: the other two are named.
        (&eight, at(&[1, 2, 3, 4, 5, 6]), past(2, &[7, 8], &[])),
        (&eight, at(&[8, 2, 3, 4, 5, 6]), past(2, &[1, 7], &[])),
        // Fewer than the bound kept: a dropped candidate is still a violation.
        (
            &eight,
            at(&[1, 2, 3, 4, 5]),
            Err(RepairViolation::CandidateDropped(loc("a.py", 6, 6))),
        ),
        // Eight candidates with their lines written as strings: still written in full,
        // so the two past the bound are named by place.
        (&eight_cut, at(&[1, 2, 3, 4, 5, 6]), past(2, &[7, 8], &[])),
        // Eight claims in YAML, no JSON object: six kept, two counted, not placed.
        (&yaml, at(&[1, 2, 3, 4, 5, 6]), past(2, &[], &[])),
        // A prior that fits the bound gets no allowance.
        (
            &six,
            at(&[1, 2, 3, 4, 5, 5]),
            Err(RepairViolation::CandidateDropped(loc("a.py", 6, 6))),
        ),
        // At the bound a repair still may not add one.
        (
            &eight,
            at(&[1, 2, 3, 4, 5, 9]),
            Err(RepairViolation::CandidateAdded(loc("a.py", 9, 9))),
        ),
    ];
    for (prior, repaired, want) in cases {
        assert_eq!(
            check_candidate_repair(prior, &repaired, (&[], &[]), BOUND),
            want,
            "{prior} kept {repaired:?}"
        );
    }
    // A prose reply naming eight places: six kept, two named by place.
    assert_eq!(
        check_candidate_repair(prose, &at(&[1, 2, 3, 4, 5, 6]), (&expected, &[]), BOUND),
        past(2, &[], &[7, 8])
    );
}

/// [`repair_demands`] is what [`check_candidate_repair`] demands: the complete candidates
/// (one per place, as written), the places a prose reply names, and the claims written.
#[test]
fn repair_demands_are_what_the_repair_check_demands() {
    let expected = vec!["a.py".to_string(), "b.py".to_string()];
    let c = |line: u64| {
        format!(
            r#"{{"path":"a.py","startLine":{line},"endLine":{line},"claim":"c{line}","evidence":"e"}}"#
        )
    };
    let json = format!(
        r#"{{"candidates":[{},{},{}],"note":"x"}}"#,
        c(2),
        c(5),
        c(2)
    );
    let got = repair_demands(&json, &expected);
    let lines: Vec<u64> = got
        .candidates
        .iter()
        .map(|v| v["startLine"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 5], "one per place, as written");
    assert_eq!(got.candidates[0]["claim"], "c2");
    assert!(got.places.is_empty(), "a JSON reply names no prose places");
    assert_eq!(got.claims, 3);
    // Each demand, when not met, is what the check refuses.
    let kept = |lines: &[u64]| -> Vec<CandidateLocation> {
        lines
            .iter()
            .map(|&l| CandidateLocation {
                path: "a.py".into(),
                start_line: l,
                end_line: l,
            })
            .collect()
    };
    assert!(check_candidate_repair(&json, &kept(&[2, 5, 2]), (&expected, &[]), BOUND).is_ok());
    assert!(check_candidate_repair(&json, &kept(&[2, 2, 2]), (&expected, &[]), BOUND).is_err());

    let prose = "Notes: b.py:7 returns the wrong index; a.py:3-4 too.";
    let got = repair_demands(prose, &expected);
    assert!(got.candidates.is_empty());
    assert_eq!(
        got.places,
        [("a.py".to_string(), 3), ("b.py".to_string(), 7)]
    );
    assert_eq!(got.claims, 0);
    assert!(repair_demands("nothing here", &expected).is_empty());
}
