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
            check_candidate_repair(prior, &repaired),
            want,
            "prior {prior:?}, repaired {repaired:?}"
        );
    }
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
            check_candidate_repair(prior, &[]),
            Err(RepairViolation::CandidatesMissing {
                claims: 1,
                repaired: 0
            }),
            "{prior}"
        );
        assert!(
            check_candidate_repair(prior, &[loc("calc.py", 1, 3)]).is_ok(),
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
        // Prose states no verdict the rule can read: the repair decides.
        (
            "I rejected the only candidate.",
            vec![("lane #1/0".into(), Rejected)],
            true,
        ),
        // A verdict the prior reply never names is the repair deciding it.
        (
            r#"{"candidateId": "x", "decision": "maybe"}"#,
            vec![("x".into(), Rejected)],
            false,
        ),
        // However the prior reply was written, a verified it names is never undone, and
        // a verdict it never names for a candidate is never given.
        (
            "Decision for lane #1/0: verified. The finding stands.",
            vec![("lane #1/0".into(), Rejected)],
            false,
        ),
        (
            "Decision for lane #1/0: verified. The finding stands.",
            vec![("lane #1/0".into(), Verified)],
            true,
        ),
        (
            "decisions:\n  - candidateId: lane #1/0\n    decision: verified\n",
            vec![("lane #1/0".into(), Unresolved)],
            false,
        ),
        (
            r#"{"decisions": [{"candidateId": "lane #1/0", "verdict": "verified"}]}"#,
            vec![("lane #1/0".into(), Rejected)],
            false,
        ),
        (
            r#"{"decisions": [{"candidateId": "lane #1/0", "decision": "verified"}]} A rejected one would read {"candidateId": "lane #1/0", "decision": "rejected"}."#,
            vec![("lane #1/0".into(), Rejected)],
            false,
        ),
        // Each candidate's words are its own: another's `verified` does not hold it.
        (
            "a/0 is rejected: the guard exists. a/1 is verified: line 4 overflows.",
            vec![("a/0".into(), Rejected), ("a/1".into(), Verified)],
            true,
        ),
        (
            "a/0 is rejected: the guard exists. a/1 is verified: line 4 overflows.",
            vec![("a/0".into(), Rejected), ("a/1".into(), Rejected)],
            false,
        ),
        // A draft and a final answer that disagree state no verdict.
        (
            r#"draft {"candidateId": "x", "decision": "rejected"} final {"candidateId": "x", "decision": "verified"}"#,
            vec![("x".into(), Verified)],
            true,
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
fn a_repaired_full_coverage_quote_must_state_every_file_was_reviewed() {
    use QuoteProblem::*;
    let expected: Vec<String> = ["README.md", "src/lib.rs"].map(String::from).to_vec();
    let prior = "Analysis. I reviewed all changed files. I reviewed all 2 expected files. \
        Reviewed: README.md, src/lib.rs. I read README.md and src/lib.rs. \
        Reviewed README.md. Not all files were reviewed. I think I reviewed all files. \
        I reviewed all files except README.md. I reviewed all the important files. \
        All files should be reviewed. I didn't review all files. I reviewed every file. \
        Every changed file was inspected. I have only reviewed src/lib.rs and README.md. \
        \"coverage\": {\"complete\": true, \"reviewedFiles\": [\"README.md\", \"src/lib.rs\"]} \
        I reviewed src/lib.rs.bak and README.md. I reviewed all files, probably. \
        I will review all files. I reviewed all of the 2 changed files. \
        All files: README.md, src/lib.rs. I reviewed each file. I reviewed all files but one. \
        I reviewed src/lib.rs, README.md. Every one of the 11 expected changed files was\nreviewed. \
        I never reviewed README.md and src/lib.rs. I could not review README.md and src/lib.rs. \
        Nobody reviewed all changed files yet. I reviewed every changed file except README.md. \
        {\"summary\": \"Perhaps I reviewed every one of the files\"} \
        I examined all changed files and found no defects. \
        I have reviewed all 2\nfiles in the expected list, and apart from what the tests do \
        not cover I see no defect. I inspected every changed file, except src/lib.rs. \
        Failed to inspect all changed files. I wish I had checked all changed files. \
        It is false that I analysed all changed files. Did I audit all changed files? No. \
        TODO: covered all changed files";
    // (quote, verdict)
    let cases: &[(Option<&str>, Result<(), QuoteProblem>)] = &[
        (Some("I reviewed all changed files."), Ok(())),
        (Some("  I reviewed all 2 expected files.  "), Ok(())),
        (Some("Reviewed: README.md, src/lib.rs."), Ok(())),
        (Some("I read README.md and src/lib.rs."), Ok(())),
        (Some("I reviewed every file."), Ok(())),
        (Some("Every changed file was inspected."), Ok(())),
        (Some("I reviewed all of the 2 changed files."), Ok(())),
        (Some("I reviewed each file."), Ok(())),
        // A real model's statement, across a line break.
        (
            Some("Every one of the 11 expected changed files was\nreviewed"),
            Ok(()),
        ),
        (Some("I reviewed src/lib.rs, README.md."), Ok(())),
        (
            Some("\"reviewedFiles\": [\"README.md\", \"src/lib.rs\"]"),
            Ok(()),
        ),
        // Trivial spans of the prior reply.
        (Some("."), Err(NoStatement)),
        (Some("README.md"), Err(NoStatement)),
        (Some("src/lib.rs"), Err(NoStatement)),
        (Some("Analysis."), Err(NoStatement)),
        // A partial list.
        (Some("Reviewed README.md."), Err(NoStatement)),
        // A path inside a longer path does not list it.
        (
            Some("I reviewed src/lib.rs.bak and README.md."),
            Err(NoStatement),
        ),
        // A list without saying it was reviewed.
        (Some("All files: README.md, src/lib.rs."), Err(NoStatement)),
        // A narrowing adjective.
        (
            Some("I reviewed all the important files."),
            Err(NoStatement),
        ),
        // Negations and limitations.
        (Some("Not all files were reviewed."), Err(Qualified)),
        (Some("I didn't review all files."), Err(Qualified)),
        (
            Some("I reviewed all files except README.md."),
            Err(Qualified),
        ),
        (Some("I reviewed all files but one."), Err(Qualified)),
        (
            Some("I have only reviewed src/lib.rs and README.md."),
            Err(Qualified),
        ),
        // Hedges and intentions.
        (Some("I think I reviewed all files."), Err(Qualified)),
        (Some("All files should be reviewed."), Err(Qualified)),
        (Some("I reviewed all files, probably."), Err(Qualified)),
        (Some("I will review all files."), Err(Qualified)),
        // Cut out of a sentence that negates, hedges or narrows it.
        (Some("reviewed README.md and src/lib.rs"), Err(Qualified)),
        (Some("review README.md and src/lib.rs"), Err(Qualified)),
        (Some("reviewed all changed files"), Err(Qualified)),
        (Some("I reviewed every changed file"), Err(Qualified)),
        (Some("reviewed every one of the files"), Err(Qualified)),
        // What follows in its sentence without narrowing it does not void it.
        (Some("I examined all changed files"), Ok(())),
        // A later clause that qualifies something else does not void it (a recorded
        // model reply); one that starts with an exception does.
        (
            Some("I have reviewed all 2\nfiles in the expected list"),
            Ok(()),
        ),
        (Some("I inspected every changed file"), Err(Qualified)),
        // A failure, a wish, a denial, a question, a to-do.
        (Some("inspect all changed files"), Err(Qualified)),
        (Some("checked all changed files"), Err(Qualified)),
        (Some("analysed all changed files"), Err(Qualified)),
        (Some("audit all changed files"), Err(Qualified)),
        (Some("Did I audit all changed files?"), Err(Qualified)),
        (Some("covered all changed files"), Err(Qualified)),
        // Not a verbatim span (case, wording, invented).
        (Some("i reviewed all changed files."), Err(NotInPrior)),
        (Some("I reviewed all the files."), Err(NotInPrior)),
        (
            Some("I reviewed all changed files and tests."),
            Err(NotInPrior),
        ),
        // Missing.
        (Some("   "), Err(Missing)),
        (None, Err(Missing)),
    ];
    assert!(cases.len() >= 20);
    for (quote, want) in cases {
        assert_eq!(
            full_coverage_quote(prior, *quote, &expected),
            *want,
            "quote {quote:?}"
        );
    }
}

#[test]
fn the_receipt_of_a_cut_reply_is_no_statement_for_another_list() {
    // A quoted receipt lists paths; it counts only when it lists every expected path.
    let prior = r#"{"coverage": {"complete": true, "reviewedFiles": ["a.rs"]}, "candidates": [{"path": "a.rs", "cl"#;
    let expected: Vec<String> = ["a.rs", "b.rs"].map(String::from).to_vec();
    assert_eq!(
        full_coverage_quote(prior, Some(r#""reviewedFiles": ["a.rs"]"#), &expected),
        Err(QuoteProblem::NoStatement)
    );
}

#[test]
fn a_prior_json_receipt_decides_a_repaired_full_coverage_claim() {
    let expected: Vec<String> = ["a.rs", "b.rs"].map(String::from).to_vec();
    let receipt = |complete: bool, files: &[&str]| {
        serde_json::json!({"coverage": {"complete": complete, "reviewedFiles": files}}).to_string()
    };
    let stated = "I reviewed all changed files: a.rs, b.rs.";
    // (prior reply, repair's quote, result)
    let cases: Vec<(String, Option<&str>, Result<(), QuoteProblem>)> = vec![
        // The reply's own receipt is the statement: no quote needed.
        (receipt(true, &["a.rs", "b.rs"]), None, Ok(())),
        (
            format!(
                "Summary first. {} and candidates: [oops",
                receipt(true, &["b.rs", "a.rs", "a.rs"])
            ),
            None,
            Ok(()),
        ),
        // Incomplete, short, or padded receipts stay so, whatever the quote.
        (
            format!("{} {stated}", receipt(false, &["a.rs", "b.rs"])),
            Some(stated),
            Err(QuoteProblem::PriorReceiptNotExact),
        ),
        (
            format!("{} {stated}", receipt(true, &["a.rs"])),
            Some(stated),
            Err(QuoteProblem::PriorReceiptNotExact),
        ),
        (
            receipt(true, &["a.rs", "b.rs", "c.rs"]),
            None,
            Err(QuoteProblem::PriorReceiptNotExact),
        ),
        (
            receipt(true, &["./a.rs", "b.rs"]),
            None,
            Err(QuoteProblem::PriorReceiptNotExact),
        ),
        // Two receipts that disagree state nothing complete.
        (
            format!(
                "{} {}",
                receipt(true, &["a.rs", "b.rs"]),
                receipt(false, &[])
            ),
            None,
            Err(QuoteProblem::PriorReceiptNotExact),
        ),
        // No JSON receipt: a prose claim needs its quote.
        (stated.to_string(), None, Err(QuoteProblem::Missing)),
        (stated.to_string(), Some(stated), Ok(())),
        // A receipt cut before its end is no receipt.
        (
            r#"{"coverage": {"complete": true, "reviewedFiles": ["a.rs", "b.rs"]"#.to_string(),
            None,
            Err(QuoteProblem::Missing),
        ),
    ];
    for (prior, quote, want) in cases {
        assert_eq!(
            repaired_full_coverage(&prior, quote, &expected),
            want,
            "{prior}"
        );
    }
}

mod properties {
    use proptest::prelude::*;

    use super::super::*;

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
            quote in proptest::option::of("\\PC{0,60}"),
        ) {
            let receipt = CoverageReceipt { complete, reviewed_files: files.iter().map(|f| f.to_string()).collect() };
            prop_assume!(!compare_coverage(&expected(), &receipt).complete);
            let json = serde_json::json!({"candidates": [], "coverage": {"complete": complete, "reviewedFiles": files}});
            let prior = format!("{before}\n{json}\n{after}");
            let stated = "I reviewed all changed files: README.md, src/lib.rs.";
            let prior = format!("{prior} {stated}");
            for q in [quote.as_deref(), Some(stated), None] {
                prop_assert!(repaired_full_coverage(&prior, q, &expected()).is_err());
            }
        }

        /// Without any JSON receipt, nothing stands without a quote.
        #[test]
        fn an_absent_receipt_never_stands_without_a_quote(prior in "[^{]{0,200}") {
            prop_assert_eq!(repaired_full_coverage(&prior, None, &expected()), Err(QuoteProblem::Missing));
        }

        /// A quote that is not a span of the prior reply never stands.
        #[test]
        fn a_quote_outside_the_prior_never_stands(prior in "\\PC{0,120}", quote in "\\PC{1,60}") {
            prop_assume!(!prior.contains(quote.trim()));
            prop_assert!(full_coverage_quote(&prior, Some(&quote), &expected()).is_err());
        }

        /// Whatever surrounds it, a quote with a negation or hedge never stands.
        #[test]
        fn a_qualified_quote_never_stands(
            prefix in "[a-zA-Z0-9 ,.;:/]{0,40}",
            word in proptest::sample::select(NEGATIONS.iter().chain(HEDGES).copied().collect::<Vec<_>>()),
            suffix in "[a-zA-Z0-9 ,.;:/]{0,40}",
        ) {
            let quote = format!("{prefix} {word} I reviewed all changed files: README.md, src/lib.rs {suffix}");
            let prior = format!("Notes. {quote} End.");
            prop_assert!(full_coverage_quote(&prior, Some(&quote), &expected()).is_err());
        }

        /// A quote cut out of a sentence that negates or hedges it before, or narrows it
        /// after, never stands, whatever else the sentence holds.
        #[test]
        fn a_quote_cut_out_of_a_qualifying_sentence_never_stands(
            before in "[a-zA-Z0-9 ,:/]{0,40}",
            word in proptest::sample::select(NEGATIONS.iter().chain(HEDGES).copied().collect::<Vec<_>>()),
            narrowing in proptest::sample::select(NARROWING_AFTER.to_vec()),
            word_first: bool,
            after in "[a-zA-Z0-9 ,:/]{0,40}",
        ) {
            let quote = "reviewed all changed files: README.md, src/lib.rs";
            let prior = if word_first {
                format!("Notes. {before} {word} {quote} {after}. End.")
            } else {
                format!("Notes. {before} {quote} {narrowing} {after}. End.")
            };
            prop_assert_eq!(
                full_coverage_quote(&prior, Some(quote), &expected()),
                Err(QuoteProblem::Qualified),
                "{}", prior
            );
        }

        /// Any span of any reply as a quote is judged without a panic (multi-byte text,
        /// sentence edges at either end).
        #[test]
        fn any_span_is_judged_without_a_panic(prior in "\\PC{0,200}", a in 0usize..200, n in 0usize..80) {
            let chars: Vec<(usize, char)> = prior.char_indices().collect();
            let from = chars.get(a).map_or(prior.len(), |c| c.0);
            let to = chars.get(a + n).map_or(prior.len(), |c| c.0);
            let _ = full_coverage_quote(&prior, Some(&prior[from..to]), &expected());
        }

        /// Hostile text never panics the rules, and keeping exactly the candidates the
        /// prior reply holds in full is always an acceptable repair.
        #[test]
        fn keeping_the_complete_candidates_is_always_acceptable(prior in "\\PC{0,300}") {
            let complete = complete_prior_candidates(&prior);
            prop_assert!(check_candidate_repair(&prior, &complete).is_ok());
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
