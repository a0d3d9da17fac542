//! Table tests of the typed claims: sentence → (kind, subject, qualifiers), the grammar
//! table's ids and sentences, and properties of the subject and hedge decisions.

use proptest::prelude::*;

use super::claim::{ClaimKind, Qualifier, Subject};
use super::phrases::PATTERNS;
use super::{Narrative, Reviewed};
use ClaimKind::*;
use Qualifier::*;
use Subject::*;

type Reading = (ClaimKind, Subject, Vec<Qualifier>);

/// The claims a sentence is expected to give.
type Expected = &'static [(ClaimKind, Subject, &'static [Qualifier])];

fn readings(text: &str, reviewed: Option<u64>) -> Vec<Reading> {
    let reviewed = Reviewed {
        pull_request: reviewed,
    };
    Narrative::parse_about(text, reviewed)
        .claims()
        .map(|c| (c.kind, c.subject, c.qualifiers.clone()))
        .collect()
}

/// Sentences and the claims each gives, about reviewed pull request #42.
const SENTENCE_CLAIMS: &[(&str, Expected)] = &[
    ("I merged it into main.", &[(Merged, ThisChange, &[])]),
    ("Merged PR #42 into main.", &[(Merged, ThisChange, &[])]),
    // The row `merged:landed-on-main`.
    ("I landed it on main.", &[(Merged, ThisChange, &[])]),
    (
        "The fix has landed in master.",
        &[(Merged, ThisChange, &[])],
    ),
    (
        "It has not landed on main.",
        &[(Merged, ThisChange, &[Negated])],
    ),
    (
        "PR #4 was not merged.",
        &[(Merged, OtherChange(Some(4)), &[Negated])],
    ),
    (
        "In PR #12, the fix was merged.",
        &[(Merged, OtherChange(Some(12)), &[])],
    ),
    (
        "I merged another PR first.",
        &[(Merged, OtherChange(None), &[])],
    ),
    (
        "Another reviewer approved it.",
        &[(Approved, SomeoneElse, &[])],
    ),
    (
        "It was approved by @alice.",
        &[(Approved, SomeoneElse, &[])],
    ),
    ("It was approved by me.", &[(Approved, ThisChange, &[])]),
    ("It was merged earlier.", &[(Merged, ThisChange, &[Past])]),
    (
        "PR #12 was merged last week.",
        &[(Merged, OtherChange(Some(12)), &[Past])],
    ),
    (
        "I test-merged main into a scratch branch and aborted it.",
        &[(Merged, ThisChange, &[Simulated])],
    ),
    ("- **Merged:** no", &[(Merged, ThisChange, &[Negated])]),
    ("It would be merged.", &[(Merged, ThisChange, &[Hedged])]),
    (
        "It will not be merged.",
        &[(Merged, ThisChange, &[Negated, Hedged])],
    ),
    (
        "It is ready to be merged.",
        &[
            (Merged, ThisChange, &[Hedged]),
            (ReadyState, ThisChange, &[]),
        ],
    ),
    (
        "PR #12 is safe to merge.",
        &[(ReadyState, OtherChange(Some(12)), &[])],
    ),
    // Only merges, approvals and ready states read a subject: a pass claim naming
    // another pull request is still this session's claim.
    (
        "All tests passed on PR #12.",
        &[(FullSuitePassed, ThisChange, &[])],
    ),
    (
        "Issue #3 was closed yesterday.",
        &[(IssueClosed, ThisChange, &[])],
    ),
    // Only a merge is simulated.
    ("The dry run was approved.", &[(Approved, ThisChange, &[])]),
    // Someone else approving is not read for a ready state.
    (
        "Someone said it is safe to merge.",
        &[(ReadyState, ThisChange, &[])],
    ),
];

#[test]
fn each_sentence_gives_typed_claims_with_subject_and_qualifiers() {
    for (text, expected) in SENTENCE_CLAIMS {
        let expected: Vec<Reading> = expected
            .iter()
            .map(|(k, s, q)| (*k, *s, q.to_vec()))
            .collect();
        assert_eq!(readings(text, Some(42)), expected, "{text}");
    }
}

#[test]
fn a_named_pull_request_without_a_reviewed_one_is_an_unknown_subject_judged_as_this_one() {
    assert_eq!(
        readings("PR #12 was merged.", None),
        [(Merged, Unknown(12), vec![])]
    );
    assert_eq!(
        readings("PR #12 was merged.", Some(12)),
        [(Merged, ThisChange, vec![])]
    );
    let n = Narrative::parse("PR #12 was merged.");
    assert!(n.claim(Merged).is_some(), "an unknown subject fails closed");
    assert!(n.sentences()[0].unchecked().is_none());
}

#[test]
fn set_aside_claims_are_values_the_rules_never_see_and_warnings_name_every_reason() {
    let reviewed = Reviewed {
        pull_request: Some(42),
    };
    let n = Narrative::parse_about("PR #12 was merged last week.", reviewed);
    assert!(n.claim(Merged).is_none());
    let claim = n.claims().next().expect("a merge claim");
    assert_eq!(claim.row, "merged:merged");
    assert_eq!(
        n.sentences()[0].unchecked().as_deref(),
        Some(
            "not read as a claim about this change: it names pull request #12, not the \
             reviewed one; it describes an earlier, historical merge"
        )
    );
    // A denied claim is neither judged nor warned about.
    let n = Narrative::parse_about("PR #12 was not merged.", reviewed);
    assert!(n.claim(Merged).is_none());
    assert!(n.sentences()[0].unchecked().is_none());
}

#[test]
fn every_grammar_row_has_a_unique_id_a_rule_sentence_and_claims_its_kind() {
    let rules: Vec<&str> = crate::rules::rule_table()
        .iter()
        .map(|r| r.sentence)
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for row in PATTERNS {
        assert!(ids.insert(row.id), "duplicate id {}", row.id);
        assert!(
            rules.contains(&row.sentence),
            "{}: {}",
            row.id,
            row.sentence
        );
        let text: Vec<&str> = row
            .words
            .iter()
            .map(|w| w.split('|').next().unwrap_or(w))
            .collect();
        let text = text.join(" ");
        assert!(
            Narrative::parse(&text).claim(row.kind).is_some(),
            "{}: `{text}` does not claim {:?}",
            row.id,
            row.kind
        );
    }
}

/// Sentences making merge, approval and ready claims about this change.
const ACTS: &[&str] = &[
    "I merged it into main.",
    "We approved the change.",
    "The PR was merged.",
    "I pushed the fix to main.",
    "I fast-forwarded main to the head.",
    "It is safe to merge.",
    "This change is good to go.",
    "I approved and merged it.",
];

/// Hedge words that are no phrase's word.
const HEDGE_WORDS: &[&str] = &["would", "should", "could", "might", "may", "will"];

proptest! {
    #[test]
    fn naming_another_pull_request_first_makes_every_act_about_it(
        act in 0..ACTS.len(),
        n in 1u64..100_000,
    ) {
        prop_assume!(n != 42);
        let text = format!("In PR #{n}, {}", ACTS[act].to_lowercase());
        let claims = readings(&text, Some(42));
        prop_assert!(!claims.is_empty(), "{}", text);
        for (kind, subject, _) in claims {
            prop_assert!(kind.reads().change, "{}", text);
            prop_assert_eq!(subject, OtherChange(Some(n)), "{}", text);
        }
    }

    #[test]
    fn a_hedge_before_the_act_hedges_every_claim(
        act in 0..ACTS.len(),
        hedge in 0..HEDGE_WORDS.len(),
    ) {
        let base = readings(ACTS[act], Some(42));
        prop_assert!(base.iter().any(|(_, _, q)| q.is_empty()), "{}", ACTS[act]);
        let (first, rest) = ACTS[act].split_once(' ').expect("two words");
        let text = format!("{first} {} {rest}", HEDGE_WORDS[hedge]);
        let hedged = Narrative::parse_about(&text, Reviewed { pull_request: Some(42) });
        prop_assert!(hedged.claims().all(|c| c.qualifiers.contains(&Hedged)), "{}", text);
        prop_assert!(hedged.claims().all(|c| !c.asserted()), "{}", text);
    }
}
